/*
 * hprof_cpu.c - where the CPU time goes.
 *
 * cpu=samples: a system thread wakes every interval= ms and takes the call
 * trace of every thread that is runnable; a trace's count is how often it
 * was seen.  10 ms by default, as JDK 5 to 8 had it, rather than the 1 ms the
 * JVMPI HPROF aimed at: on a current JVM each trace is a JVM TI stack walk
 * with a handshake per thread, and Linux timers below a few ms mostly
 * measure themselves; 100 samples a second per thread ranks the hot spots
 * of a run of a few seconds just as well.  Threads are not
 * suspended around the walk to ask ThreadHasRun (as some JVMPI agents did):
 * on JDK 17 SuspendThread of a thread that is detaching waits for ever, and
 * a suspended thread may hold a lock the walk needs.  Instead a thread seen
 * twice running in the same native frame counts as blocked there (see
 * take_samples).
 *
 * cpu=times and cpu=old: METHOD_ENTRY/METHOD_EXIT, each thread keeping its
 * own stack of entered methods with the thread CPU time at entry in JVMPI's
 * thread-local storage; at exit the method's self time (minus its callees)
 * is charged to the trace made of the top `depth` entries of that stack.
 * cpu=times prints CPU TIME ranked by self time with count = calls; cpu=old
 * prints the flat list of JDK 1.1's `java -prof`: count, callee, caller and
 * time (ms, including callees) per caller/callee pair, with no section
 * around it, as JDK 8's HPROF did (tools read it as a java.prof file).
 */
#include <stdlib.h>
#include <string.h>

#include "hprof.h"

#define MAX_SAMPLED_THREADS 1024

static JVMPI_RawMonitor sampler_lock;
static volatile int sampler_stop, sampler_running, sampler_done;
static long total_samples;
static int methods_on;   /* METHOD_ENTRY/EXIT could be enabled */

/* ---- samples -------------------------------------------------------------- */

typedef struct {
    hprof_thread *thread;
    int n;
    JVMPI_CallFrame *frames;
} sample;

static void take_samples(sample *batch, JVMPI_CallFrame *frames)
{
    hprof_thread *threads[MAX_SAMPLED_THREADS];
    int count = 0, nt;
    hprof_lock_enter();
    if (hprof_shut_down) {
        hprof_lock_exit();
        return;
    }
    hprof_thread **all = hprof_thread_all(&nt);
    for (int i = 0; i < nt && count < MAX_SAMPLED_THREADS; i++) {
        if (all[i]->alive) {
            threads[count++] = all[i];
        }
    }
    hprof_lock_exit();

    int taken = 0;
    int depth = hprof_opt.depth > 0 ? hprof_opt.depth : 1;
    for (int i = 0; i < count; i++) {
        JNIEnv *env = threads[i]->env;
        jint status = hprof_jvmpi->GetThreadStatus(env);
        if (status < 0 || (status & JVMPI_THREAD_SUSPENDED) ||
            (status & ~(JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED)) != JVMPI_THREAD_RUNNABLE) {
            continue;
        }
        JVMPI_CallFrame *f = frames + (size_t)taken * (size_t)depth;
        int n = hprof_trace_take(env, f, depth);
        if (n == 0) {
            continue; /* no Java frames: a VM or agent thread */
        }
        batch[taken].thread = threads[i];
        batch[taken].n = n;
        batch[taken].frames = f;
        taken++;
    }

    hprof_lock_enter();
    for (int i = 0; i < taken && !hprof_shut_down; i++) {
        hprof_thread *th = batch[i].thread;
        hprof_trace *t = hprof_trace_intern(th->serial, batch[i].frames, batch[i].n);
        /* Runnable is not running: JVM TI calls a thread blocked in native
         * code (a socket read, the Reference Handler's wait) runnable.  One
         * found again in the same native frame as at its last sample is
         * taken to be blocked there. */
        int blocked = t->nframes > 0 && t->frames[0]->line == -3 && th->last_sample == t;
        th->last_sample = t;
        if (!blocked) {
            t->samples++;
            total_samples++;
        }
    }
    hprof_lock_exit();
}

static void sampler(void *arg)
{
    int depth = hprof_opt.depth > 0 ? hprof_opt.depth : 1;
    sample *batch = hprof_calloc(MAX_SAMPLED_THREADS, sizeof *batch);
    JVMPI_CallFrame *frames = hprof_calloc((size_t)MAX_SAMPLED_THREADS * (size_t)depth, sizeof *frames);
    hprof_jvmpi->RawMonitorEnter(sampler_lock);
    while (!sampler_stop) {
        hprof_jvmpi->RawMonitorWait(sampler_lock, hprof_opt.interval);
        if (sampler_stop) {
            break;
        }
        hprof_jvmpi->RawMonitorExit(sampler_lock);
        take_samples(batch, frames);
        hprof_jvmpi->RawMonitorEnter(sampler_lock);
    }
    sampler_done = 1;
    hprof_jvmpi->RawMonitorNotifyAll(sampler_lock);
    hprof_jvmpi->RawMonitorExit(sampler_lock);
    free(batch);
    free(frames);
}

/* ---- times ---------------------------------------------------------------- */

typedef struct {
    jmethodID method;
    jlong start_ns;
    jlong callees_ns;
} entered;

/* cpu=times charges a trace at every method exit: each thread remembers the
 * traces it charged last, so that the common case finds its trace without
 * building and hashing the key the shared table needs.  A trace, once made,
 * lives as long as the agent. */
#define CACHED_DEPTH 8
#define TRACE_CACHE_SLOTS 1024
typedef struct {
    hprof_trace *trace;
    int thread_serial, n;
    jmethodID methods[CACHED_DEPTH];
} cached_trace;

typedef struct {
    int n, cap;
    entered *stack;
    cached_trace *cache; /* TRACE_CACHE_SLOTS, made on first use */
} thread_stack;

typedef struct {
    jmethodID callee, caller;
    long count;
    jlong ns;
} pair;

static hprof_bmap pairs;
static pair **all_pairs;
static int n_pairs, cap_pairs;
static jlong total_ns;

static thread_stack *stack_of(JNIEnv *env)
{
    thread_stack *s = hprof_jvmpi->GetThreadLocalStorage(env);
    if (s == NULL) {
        s = hprof_calloc(1, sizeof *s);
        hprof_jvmpi->SetThreadLocalStorage(env, s);
    }
    return s;
}

void hprof_cpu_method_entry(JVMPI_Event *ev)
{
    thread_stack *s = stack_of(ev->env_id);
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 64;
        entered *grown = realloc(s->stack, (size_t)cap * sizeof *grown);
        if (grown == NULL) {
            return;
        }
        s->stack = grown;
        s->cap = cap;
    }
    entered *e = &s->stack[s->n++];
    e->method = ev->u.method.method_id;
    e->callees_ns = 0;
    e->start_ns = hprof_jvmpi->GetCurrentThreadCpuTime();
}

static cached_trace *cache_slot(thread_stack *s, int serial, const JVMPI_CallFrame *frames, int n)
{
    if (n > CACHED_DEPTH) {
        return NULL;
    }
    if (s->cache == NULL && (s->cache = calloc(TRACE_CACHE_SLOTS, sizeof *s->cache)) == NULL) {
        return NULL;
    }
    uint64_t h = (uint64_t)n * 0x9E3779B97F4A7C15ULL ^ (uint64_t)serial;
    for (int i = 0; i < n; i++) {
        h = (h ^ (uint64_t)(uintptr_t)frames[i].method_id) * 0x9E3779B97F4A7C15ULL;
    }
    return &s->cache[(h >> 32) % TRACE_CACHE_SLOTS];
}

static int cache_holds(const cached_trace *c, int serial, const JVMPI_CallFrame *frames, int n)
{
    if (c->trace == NULL || c->n != n || c->thread_serial != serial) {
        return 0;
    }
    for (int i = 0; i < n; i++) {
        if (c->methods[i] != frames[i].method_id) {
            return 0;
        }
    }
    return 1;
}

/* The trace of frames for this thread: from its cache, or interned (with
 * the lock held) and remembered. */
static hprof_trace *times_trace(thread_stack *s, int serial, const JVMPI_CallFrame *frames, int n)
{
    cached_trace *c = cache_slot(s, serial, frames, n);
    if (c != NULL && cache_holds(c, serial, frames, n)) {
        return c->trace;
    }
    hprof_trace *t = hprof_trace_intern(serial, frames, n);
    if (c != NULL) {
        c->trace = t;
        c->thread_serial = serial;
        c->n = n;
        for (int i = 0; i < n; i++) {
            c->methods[i] = frames[i].method_id;
        }
    }
    return t;
}

static void charge(JNIEnv *env, thread_stack *s, jlong now)
{
    entered *e = &s->stack[s->n - 1];
    jlong elapsed = now - e->start_ns;
    jlong self = elapsed - e->callees_ns;
    if (self < 0) {
        self = 0;
    }
    JVMPI_CallFrame frames[64];
    int depth = hprof_opt.depth < 64 ? hprof_opt.depth : 64;
    int n = 0;
    for (int i = s->n - 1; i >= 0 && n < depth; i--, n++) {
        frames[n].method_id = s->stack[i].method;
        frames[n].lineno = 0; /* not known from entry/exit events */
    }
    jmethodID caller = s->n >= 2 ? s->stack[s->n - 2].method : NULL;
    s->n--;
    if (s->n > 0) {
        s->stack[s->n - 1].callees_ns += elapsed;
    }
    hprof_lock_enter();
    if (!hprof_shut_down) {
        if (hprof_opt.cpu == HPROF_CPU_TIMES) {
            hprof_trace *t = times_trace(s, hprof_thread_serial(env), frames, n);
            t->calls++;
            t->self_ns += self;
            total_ns += self;
        } else {
            pair key;
            memset(&key, 0, sizeof key);
            key.callee = e->method;
            key.caller = caller;
            pair *p = hprof_bmap_get(&pairs, &key, sizeof key);
            if (p == NULL) {
                p = hprof_calloc(1, sizeof *p);
                *p = key;
                hprof_bmap_put(&pairs, &key, sizeof key, p);
                if (n_pairs == cap_pairs) {
                    cap_pairs = cap_pairs ? cap_pairs * 2 : 4096;
                    pair **grown = realloc(all_pairs, (size_t)cap_pairs * sizeof *grown);
                    if (grown == NULL) {
                        hprof_error("out of memory");
                        abort();
                    }
                    all_pairs = grown;
                }
                all_pairs[n_pairs++] = p;
            }
            p->count++;
            p->ns += elapsed;
            total_ns += self;
        }
    }
    hprof_lock_exit();
}

void hprof_cpu_method_exit(JVMPI_Event *ev)
{
    thread_stack *s = hprof_jvmpi->GetThreadLocalStorage(ev->env_id);
    jmethodID m = ev->u.method.method_id;
    if (s == NULL || s->n == 0) {
        return; /* entered before profiling began */
    }
    jlong now = hprof_jvmpi->GetCurrentThreadCpuTime();
    int at = s->n - 1;
    while (at >= 0 && s->stack[at].method != m) {
        at--;
    }
    if (at < 0) {
        return; /* an exit whose entry was never seen */
    }
    /* Exits that never came (frames popped by an exception the VM did not
     * report one by one) are charged now. */
    while (s->n > at + 1) {
        charge(ev->env_id, s, now);
    }
    charge(ev->env_id, s, now);
}

void hprof_cpu_thread_end(JNIEnv *env)
{
    if (!methods_on) {
        return;
    }
    thread_stack *s = hprof_jvmpi->GetThreadLocalStorage(env);
    if (s != NULL) {
        hprof_jvmpi->SetThreadLocalStorage(env, NULL);
        free(s->stack);
        free(s->cache);
        free(s);
    }
}

/* ---- start, stop, output --------------------------------------------------- */

int hprof_cpu_start(void)
{
    if (hprof_opt.cpu == HPROF_CPU_TIMES || hprof_opt.cpu == HPROF_CPU_OLD) {
        hprof_bmap_init(&pairs, 4093);
        jint a = hprof_jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
        jint b = hprof_jvmpi->EnableEvent(JVMPI_EVENT_METHOD_EXIT, NULL);
        if (a != JVMPI_SUCCESS || b != JVMPI_SUCCESS) {
            hprof_jvmpi->DisableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
            hprof_jvmpi->DisableEvent(JVMPI_EVENT_METHOD_EXIT, NULL);
            fprintf(stderr, "HPROF: cpu=%s is not available from this VM (no METHOD_ENTRY/METHOD_EXIT events); "
                            "profiling goes on without it\n",
                    hprof_opt.cpu == HPROF_CPU_TIMES ? "times" : "old");
            hprof_opt.cpu = HPROF_CPU_OFF;
            return 0;
        }
        methods_on = 1;
    }
    if (hprof_opt.cpu == HPROF_CPU_SAMPLES) {
        sampler_lock = hprof_jvmpi->RawMonitorCreate("_hprof_sampler");
    }
    return 0;
}

void hprof_cpu_init_done(void)
{
    if (hprof_opt.cpu != HPROF_CPU_SAMPLES) {
        return;
    }
    if (hprof_jvmpi->CreateSystemThread("HPROF CPU sampler", JVMPI_MAXIMUM_PRIORITY, sampler) != JNI_OK) {
        fprintf(stderr, "HPROF: the CPU sampling thread could not be started; no CPU samples\n");
        return;
    }
    sampler_running = 1;
}

void hprof_cpu_stop(void)
{
    if (methods_on) {
        hprof_jvmpi->DisableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
        hprof_jvmpi->DisableEvent(JVMPI_EVENT_METHOD_EXIT, NULL);
    }
    if (!sampler_running) {
        return;
    }
    hprof_jvmpi->RawMonitorEnter(sampler_lock);
    sampler_stop = 1;
    hprof_jvmpi->RawMonitorNotifyAll(sampler_lock);
    /* Bounded: a sampler stuck in the VM must not hang the exit. */
    for (int i = 0; i < 50 && !sampler_done; i++) {
        hprof_jvmpi->RawMonitorWait(sampler_lock, 20);
    }
    hprof_jvmpi->RawMonitorExit(sampler_lock);
}

static int by_samples(const void *a, const void *b)
{
    const hprof_trace *x = *(hprof_trace *const *)a, *y = *(hprof_trace *const *)b;
    if (x->samples != y->samples) {
        return x->samples > y->samples ? -1 : 1;
    }
    return x->serial - y->serial;
}

static int by_self_time(const void *a, const void *b)
{
    const hprof_trace *x = *(hprof_trace *const *)a, *y = *(hprof_trace *const *)b;
    if (x->self_ns != y->self_ns) {
        return x->self_ns > y->self_ns ? -1 : 1;
    }
    if (x->calls != y->calls) {
        return x->calls > y->calls ? -1 : 1;
    }
    return x->serial - y->serial;
}

static int by_pair_count(const void *a, const void *b)
{
    const pair *x = *(pair *const *)a, *y = *(pair *const *)b;
    if (x->count != y->count) {
        return x->count > y->count ? -1 : 1;
    }
    return x->ns > y->ns ? -1 : x->ns < y->ns;
}

static void old_method_name(jmethodID id, char *buf, size_t len)
{
    hprof_method *m = id != NULL ? hprof_method_lookup(id) : NULL;
    if (id == NULL) {
        snprintf(buf, len, "<unknown caller>"); /* JDK 8's words for the outermost method */
    } else if (m == NULL || m->cls == NULL) {
        snprintf(buf, len, "<unknown method %p>", (void *)id);
    } else {
        char cls[1024];
        hprof_class_print_name(m->cls->name, cls, sizeof cls);
        snprintf(buf, len, "%s.%s%s", cls, m->name, m->sig);
    }
}

static void write_old(void)
{
    char callee[2048], caller[2048];
    pair **sorted = hprof_calloc((size_t)n_pairs, sizeof *sorted);
    memcpy(sorted, all_pairs, (size_t)n_pairs * sizeof *sorted);
    qsort(sorted, (size_t)n_pairs, sizeof *sorted, by_pair_count);
    hprof_printf("count callee caller time\n");
    for (int i = 0; i < n_pairs; i++) {
        old_method_name(sorted[i]->callee, callee, sizeof callee);
        old_method_name(sorted[i]->caller, caller, sizeof caller);
        hprof_printf("%ld %s %s %lld\n", sorted[i]->count, callee, caller, (long long)(sorted[i]->ns / 1000000));
    }
    free(sorted);
}

void hprof_cpu_write(void)
{
    int n, k = 0;
    char date[64], name[2048];
    if (hprof_opt.cpu == HPROF_CPU_OFF) {
        return;
    }
    if (hprof_opt.cpu == HPROF_CPU_OLD) {
        if (!hprof_opt.binary) {
            write_old();
        }
        return;
    }
    hprof_trace **all = hprof_trace_all(&n);
    hprof_trace **sorted = hprof_calloc((size_t)n, sizeof *sorted);
    int samples = hprof_opt.cpu == HPROF_CPU_SAMPLES;
    double total = samples ? (double)total_samples : (double)total_ns;
    for (int i = 0; i < n; i++) {
        double v = samples ? (double)all[i]->samples : (double)all[i]->self_ns;
        long hits = samples ? all[i]->samples : all[i]->calls;
        if (hits == 0 || (total > 0 && hprof_opt.cutoff > 0.0 && v / total < hprof_opt.cutoff)) {
            continue;
        }
        sorted[k++] = all[i];
    }
    qsort(sorted, (size_t)k, sizeof *sorted, samples ? by_samples : by_self_time);
    if (hprof_opt.binary) {
        /* One record type for both: for cpu=times the count is the calls. */
        hprof_record_begin(HPROF_REC_CPU_SAMPLES);
        hprof_u4(samples ? (uint32_t)total_samples : (uint32_t)(total_ns / 1000000));
        hprof_u4((uint32_t)k);
        for (int i = 0; i < k; i++) {
            hprof_u4((uint32_t)(samples ? sorted[i]->samples : sorted[i]->calls));
            hprof_u4((uint32_t)sorted[i]->serial);
        }
        hprof_record_end();
    } else {
        double accum = 0.0;
        if (samples) {
            hprof_printf("CPU SAMPLES BEGIN (total = %ld) %s\n", total_samples, hprof_date(date, sizeof date));
        } else {
            hprof_printf("CPU TIME (ms) BEGIN (total = %lld) %s\n", (long long)(total_ns / 1000000),
                         hprof_date(date, sizeof date));
        }
        hprof_printf("rank   self  accum   count trace method\n");
        for (int i = 0; i < k; i++) {
            double v = samples ? (double)sorted[i]->samples : (double)sorted[i]->self_ns;
            double self = total > 0 ? 100.0 * v / total : 0.0;
            accum += self;
            hprof_trace_top_name(sorted[i], name, sizeof name);
            hprof_printf("%4d %5.2f%% %5.2f%% %7ld %5d %s\n", i + 1, self, accum,
                         samples ? sorted[i]->samples : sorted[i]->calls, sorted[i]->serial, name);
        }
        hprof_printf(samples ? "CPU SAMPLES END\n" : "CPU TIME (ms) END\n");
    }
    free(sorted);
}
