/*
 * hprof_monitor.c - monitor contention (MONITOR TIME) and the state of all
 * monitors and threads at a dump (MONITOR DUMP).
 *
 * Contention time is wall-clock time from CONTENDED_ENTER to CONTENDED_ENTERED
 * on the same thread, charged to (the thread's trace at the ENTER, the
 * monitor's description: its object's class for Java monitors, the name for
 * raw monitors).  The binary format has no record for either section; they
 * are written in ascii only.
 *
 * With monitor=y in ascii, each Object.wait is also told as it happens, in
 * the lines JDK 8's HPROF wrote from the same JVMPI-born events:
 *   WAIT: MONITOR Ljava/lang/Thread;, timeout=0, thread 1
 *   WAITED: MONITOR Ljava/lang/Thread;, time_waited=480, thread 1
 * Thread.sleep, which JVMPI reports as a wait on no object, is left out:
 * JDK 8's never saw one (JVM TI has no such event), and a polling loop
 * would fill the file.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "hprof.h"

typedef struct {
    hprof_trace *trace;
    char *what;
    long count;
    jlong ms_total_us;   /* microseconds, summed */
} contention;

static hprof_bmap contentions;
static contention **all;
static int n_all, cap_all;
static jlong total_us;
static int monitors_on;

static jlong now_us(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (jlong)tv.tv_sec * 1000000 + tv.tv_usec;
}

int hprof_monitor_start(void)
{
    static const jint events[] = {JVMPI_EVENT_MONITOR_CONTENDED_ENTER, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED,
                                  JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER,
                                  JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED};
    int missing = 0;
    hprof_bmap_init(&contentions, 1021);
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
        if (hprof_jvmpi->EnableEvent(events[i], NULL) != JVMPI_SUCCESS) {
            missing = 1;
        }
    }
    if (missing) {
        for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
            hprof_jvmpi->DisableEvent(events[i], NULL);
        }
        fprintf(stderr, "HPROF: monitor=y is not available from this VM (no monitor contention events); "
                        "profiling goes on without it\n");
        hprof_opt.monitor = 0;
        return 0;
    }
    monitors_on = 1;
    if (!hprof_opt.binary) {
        /* Optional: without them only the WAIT lines are missing. */
        hprof_jvmpi->EnableEvent(JVMPI_EVENT_MONITOR_WAIT, NULL);
        hprof_jvmpi->EnableEvent(JVMPI_EVENT_MONITOR_WAITED, NULL);
    }
    return 0;
}

static char *describe_java_monitor(jobjectID obj)
{
    char name[1100], buf[1200];
    jobjectID cls = hprof_heap_object_class(obj);
    if (cls == NULL) {
        cls = hprof_heap_request_object(obj, NULL, NULL);
    }
    hprof_class *c = cls != NULL ? hprof_class_lookup(cls) : NULL;
    if (c == NULL) {
        snprintf(name, sizeof name, "<Unknown class>");
    } else {
        hprof_class_print_name(c->name, name, sizeof name);
    }
    snprintf(buf, sizeof buf, "%s (Java)", name);
    return hprof_strdup(buf);
}

static void contended(JNIEnv *env, int raw, void *what)
{
    JVMPI_CallFrame frames[64];
    int depth = hprof_opt.depth < 64 ? hprof_opt.depth : 64;
    int n = hprof_trace_take(env, frames, depth);
    hprof_lock_enter();
    hprof_thread *t = hprof_thread_find(env);
    if (t != NULL && !hprof_shut_down) {
        char buf[1200];
        free(t->contend_what);
        if (raw) {
            snprintf(buf, sizeof buf, "%s (Raw)", what != NULL ? (const char *)what : "<unnamed>");
            t->contend_what = hprof_strdup(buf);
        } else {
            t->contend_what = describe_java_monitor(what);
        }
        /* The trace is kept by its place in the table: interned now. */
        hprof_trace *tr = hprof_trace_intern(t->serial, frames, n);
        t->contending = tr->serial;
        t->contend_start_ms = now_us();
    }
    hprof_lock_exit();
}

static void entered(JNIEnv *env)
{
    jlong now = now_us();
    hprof_lock_enter();
    hprof_thread *t = hprof_thread_find(env);
    if (t != NULL && t->contending && t->contend_what != NULL && !hprof_shut_down) {
        int ntr;
        hprof_trace **traces = hprof_trace_all(&ntr);
        hprof_trace *tr = traces[t->contending - 1];
        size_t wlen = strlen(t->contend_what);
        size_t klen = sizeof(int) + wlen;
        char *key = hprof_calloc(1, klen);
        memcpy(key, &tr->serial, sizeof(int));
        memcpy(key + sizeof(int), t->contend_what, wlen);
        contention *c = hprof_bmap_get(&contentions, key, klen);
        if (c == NULL) {
            c = hprof_calloc(1, sizeof *c);
            c->trace = tr;
            c->what = hprof_strdup(t->contend_what);
            hprof_bmap_put(&contentions, key, klen, c);
            if (n_all == cap_all) {
                cap_all = cap_all ? cap_all * 2 : 256;
                contention **grown = realloc(all, (size_t)cap_all * sizeof *grown);
                if (grown == NULL) {
                    hprof_error("out of memory");
                    abort();
                }
                all = grown;
            }
            all[n_all++] = c;
        }
        free(key);
        jlong waited = now - t->contend_start_ms;
        c->count++;
        c->ms_total_us += waited;
        total_us += waited;
        t->contending = 0;
    }
    hprof_lock_exit();
}

/* The object's class as a JVM signature, "Ljava/lang/Thread;", as JDK 8
 * named the monitor in these lines. */
static void monitor_signature(jobjectID obj, char *buf, size_t len)
{
    char name[1100];
    jobjectID cls = hprof_heap_object_class(obj);
    if (cls == NULL) {
        cls = hprof_heap_request_object(obj, NULL, NULL);
    }
    hprof_class *c = cls != NULL ? hprof_class_lookup(cls) : NULL;
    if (c == NULL) {
        snprintf(buf, len, "<Unknown class>");
        return;
    }
    hprof_class_binary_name(c->name, name, sizeof name);
    snprintf(buf, len, name[0] == '[' ? "%s" : "L%s;", name);
}

static void waiting(JVMPI_Event *ev, int done)
{
    char sig[1200], who[32];
    if (ev->u.monitor_wait.object == NULL) {
        return; /* Thread.sleep */
    }
    hprof_lock_enter();
    if (!hprof_shut_down) {
        int serial = hprof_thread_serial(ev->env_id);
        if (serial > 0) {
            snprintf(who, sizeof who, "thread %d", serial);
        } else {
            snprintf(who, sizeof who, "<unknown thread>");
        }
        int ms = (int)ev->u.monitor_wait.timeout;
        monitor_signature(ev->u.monitor_wait.object, sig, sizeof sig);
        if (done) {
            hprof_printf("WAITED: MONITOR %s, time_waited=%d, %s\n", sig, ms, who);
        } else {
            hprof_printf("WAIT: MONITOR %s, timeout=%d, %s\n", sig, ms, who);
        }
    }
    hprof_lock_exit();
}

void hprof_monitor_event(JVMPI_Event *ev)
{
    if (!monitors_on) {
        return;
    }
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
        contended(ev->env_id, 0, ev->u.monitor.object);
        break;
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
        contended(ev->env_id, 1, ev->u.raw_monitor.name);
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
        entered(ev->env_id);
        break;
    case JVMPI_EVENT_MONITOR_WAIT:
    case JVMPI_EVENT_MONITOR_WAITED:
        waiting(ev, (ev->event_type & ~JVMPI_REQUESTED_EVENT) == JVMPI_EVENT_MONITOR_WAITED);
        break;
    default:
        break;
    }
}

static int by_time(const void *a, const void *b)
{
    const contention *x = *(contention *const *)a, *y = *(contention *const *)b;
    if (x->ms_total_us != y->ms_total_us) {
        return x->ms_total_us > y->ms_total_us ? -1 : 1;
    }
    return x->trace->serial - y->trace->serial;
}

void hprof_monitor_write_time(void)
{
    char date[64];
    if (!monitors_on || hprof_opt.binary) {
        return;
    }
    contention **sorted = hprof_calloc((size_t)n_all, sizeof *sorted);
    memcpy(sorted, all, (size_t)n_all * sizeof *sorted);
    qsort(sorted, (size_t)n_all, sizeof *sorted, by_time);
    hprof_printf("MONITOR TIME BEGIN (total = %lld ms) %s\n", (long long)(total_us / 1000),
                 hprof_date(date, sizeof date));
    hprof_printf("rank   self  accum   count trace monitor\n");
    double accum = 0.0;
    for (int i = 0; i < n_all; i++) {
        double self = total_us > 0 ? 100.0 * (double)sorted[i]->ms_total_us / (double)total_us : 0.0;
        if (total_us > 0 && hprof_opt.cutoff > 0.0 && self / 100.0 < hprof_opt.cutoff) {
            continue;
        }
        accum += self;
        hprof_printf("%4d %5.2f%% %5.2f%% %7ld %5d %s\n", i + 1, self, accum, sorted[i]->count,
                     sorted[i]->trace->serial, sorted[i]->what);
    }
    hprof_printf("MONITOR TIME END\n");
    free(sorted);
}

/* ---- MONITOR DUMP ------------------------------------------------------------ */

typedef struct {
    const unsigned char *p, *end;
    int bad;
} reader;

static uint32_t rd_u4(reader *r)
{
    unsigned char b[4];
    if (r->bad || r->end - r->p < 4) {
        r->bad = 1;
        return 0;
    }
    memcpy(b, r->p, 4);
    r->p += 4;
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static void *rd_ptr(reader *r)
{
    void *v;
    if (r->bad || (size_t)(r->end - r->p) < sizeof v) {
        r->bad = 1;
        return NULL;
    }
    memcpy(&v, r->p, sizeof v);
    r->p += sizeof v;
    return v;
}

static void status_text(jint st, char *buf, size_t len)
{
    const char *base;
    switch (st & ~(JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED)) {
    case JVMPI_THREAD_RUNNABLE: base = "R"; break;
    case JVMPI_THREAD_MONITOR_WAIT: base = "MW"; break;
    case JVMPI_THREAD_CONDVAR_WAIT: base = "CW"; break;
    default: base = "UNKNOWN"; break;
    }
    snprintf(buf, len, "%s%s%s", base, (st & JVMPI_THREAD_SUSPENDED) ? ",S" : "",
             (st & JVMPI_THREAD_INTERRUPTED) ? ",I" : "");
}

static void thread_list(reader *r, const char *label)
{
    uint32_t n = rd_u4(r);
    hprof_printf("\t%s:", label);
    for (uint32_t i = 0; i < n && !r->bad; i++) {
        hprof_printf("%s thread %d", i ? "," : "", hprof_thread_serial(rd_ptr(r)));
    }
    hprof_printf("\n");
}

void hprof_monitor_dump_event(JVMPI_Event *ev)
{
    if (hprof_opt.binary) {
        return;
    }
    int n = ev->u.monitor_dump.num_traces;
    int *serials = hprof_calloc((size_t)n, sizeof *serials);
    for (int i = 0; i < n; i++) {
        const JVMPI_CallTrace *ct = &ev->u.monitor_dump.traces[i];
        int depth = ct->num_frames < hprof_opt.depth ? ct->num_frames : hprof_opt.depth;
        serials[i] = hprof_trace_intern(hprof_thread_serial(ct->env_id), ct->frames, depth > 0 ? depth : 0)->serial;
    }
    hprof_trace_write_pending();
    hprof_printf("MONITOR DUMP BEGIN\n");
    for (int i = 0; i < n; i++) {
        char st[32];
        status_text(ev->u.monitor_dump.threads_status != NULL ? ev->u.monitor_dump.threads_status[i] : 0, st,
                    sizeof st);
        hprof_printf("    THREAD %d, trace %d, status: %s\n", hprof_thread_serial(ev->u.monitor_dump.traces[i].env_id),
                     serials[i], st);
    }
    free(serials);
    reader r = {(const unsigned char *)ev->u.monitor_dump.begin, (const unsigned char *)ev->u.monitor_dump.end, 0};
    while (r.p != NULL && r.p < r.end && !r.bad) {
        unsigned kind = *r.p++;
        if (kind == JVMPI_MONITOR_JAVA) {
            jobjectID obj = rd_ptr(&r);
            char *what = describe_java_monitor(obj);
            hprof_printf("    MONITOR %s, obj=%llx\n", what, (unsigned long long)(uintptr_t)obj);
            free(what);
        } else if (kind == JVMPI_MONITOR_RAW) {
            const char *name = rd_ptr(&r);
            void *id = rd_ptr(&r);
            hprof_printf("    RAW MONITOR \"%s\"(%llx)\n", name != NULL ? name : "<unnamed>",
                         (unsigned long long)(uintptr_t)id);
        } else {
            hprof_error("monitor dump: unknown record type 0x%02x; the rest is left out", kind);
            break;
        }
        JNIEnv *owner = rd_ptr(&r);
        uint32_t entries = rd_u4(&r);
        if (owner != NULL) {
            hprof_printf("\towner: thread %d, entry count: %u\n", hprof_thread_serial(owner), entries);
        } else {
            hprof_printf("\tunowned\n");
        }
        thread_list(&r, "waiting to enter");
        thread_list(&r, "waiting to be notified");
    }
    if (r.bad) {
        hprof_error("monitor dump: the buffer ends inside a record");
    }
    hprof_printf("MONITOR DUMP END\n");
}
