/*
 * b_tls - Set/GetThreadLocalStorage and GetCurrentThreadCpuTime (it_b_tls.sh, with B_Workers).
 *
 * - THREAD_START (live, and the start-up replay of threads already running):
 *   a new thread's storage reads NULL; the handler stores a record naming
 *   the thread and reads it back.
 * - THREAD_END: the ending thread's storage is still that record, for every
 *   thread that ends; the handler then clears and frees it.
 * - JVM_SHUT_DOWN: the storage of the thread that delivers it is still set,
 *   and the counts are checked (the script passes workers=N).
 * - Threads that have ended: a sampler made with CreateSystemThread at
 *   JVM_INIT_DONE asks the status, trace, storage and ThreadHasRun of every
 *   thread it was told of, every millisecond, while the workers start and
 *   end, as legacy CPU samplers did.  At JVM_SHUT_DOWN each ended thread
 *   whose JNIEnv * no later thread was given is asked everything that takes
 *   a JNIEnv *: HotSpot 5.0's answers for a thread it no longer had
 *   (GetThreadStatus RUNNABLE, never -1; JVMDI's INVALID_THREAD, 10, in the
 *   list results; no frames, NULL, a no-op).  The layer must print nothing
 *   for any of this (the script checks); one call with a JNIEnv * that was
 *   never a thread's gets the one error line the script expects.
 * - SIGPROF: from JVM_INIT_DONE to JVM_SHUT_DOWN a profiling timer fires
 *   every millisecond of CPU, and its handler reads the storage of every
 *   thread it was told of, ended or not, and sets that of a JNIEnv * that
 *   is no thread's, as sampling agents did
 *   (5.0 made these two functions safe there: no lock, no allocation, no
 *   log line).  The run must neither hang nor crash nor print.
 * - JVM_INIT_DONE: GetCurrentThreadCpuTime grows by about the CPU time a
 *   spin burns (measured with libc's thread clock alongside) and hardly at
 *   all across a sleep.
 * Options: OUTFILE,workers=N.
 */
#include "b_common.h"

#include <signal.h>
#include <sys/time.h>

#define AGENT "b_tls"
#define MAGIC 0x7e57b715u

typedef struct {
    unsigned magic;
    JNIEnv *env;
    char name[128];
} rec_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int n_started, n_ended, n_ended_ok, n_workers_ok, n_fresh_not_null, n_readback_bad, n_end_env_mismatch;

/* Every JNIEnv * THREAD_START gave, and those of the threads that ended,
 * marked when a thread started later with the same one (the VM reuses them). */
#define MAX_ENVS 256
static JNIEnv *seen_envs[MAX_ENVS];
static int n_seen;
static JNIEnv *ended_envs[MAX_ENVS];
static int ended_reused[MAX_ENVS];
static int n_ended_envs;

static int sampler_stop, sampler_done;
static long sigprof_runs, sigprof_bad;
static long sampler_rounds;

static void thread_start(JVMPI_Event *ev)
{
    JNIEnv *env = ev->u.thread_start.thread_env_id;
    const char *name = ev->u.thread_start.thread_name;
    void *prev = b_pi->GetThreadLocalStorage(env);
    rec_t *r = calloc(1, sizeof *r);
    r->magic = MAGIC;
    r->env = env;
    snprintf(r->name, sizeof r->name, "%s", name ? name : "(null)");
    b_pi->SetThreadLocalStorage(env, r);
    void *back = b_pi->GetThreadLocalStorage(env);
    pthread_mutex_lock(&lock);
    b_log("THREAD_START %s env %p%s", r->name, (void *)env, env == ev->env_id ? "" : " (delivered on another thread)");
    n_started++;
    if (n_seen < MAX_ENVS) {
        seen_envs[n_seen] = env;
        __atomic_store_n(&n_seen, n_seen + 1, __ATOMIC_RELEASE); /* the handler reads without the lock */
    }
    for (int i = 0; i < n_ended_envs; i++)
        ended_reused[i] |= ended_envs[i] == env;
    if (prev) {
        n_fresh_not_null++;
        b_fail("THREAD_START %s: storage of a new thread is %p, not NULL", r->name, prev);
    }
    if (back != r) {
        n_readback_bad++;
        b_fail("THREAD_START %s: storage read back as %p right after setting %p", r->name, back, (void *)r);
    }
    pthread_mutex_unlock(&lock);
}

static void thread_end(JVMPI_Event *ev)
{
    JNIEnv *env = ev->env_id;
    const char *name = ev->u.thread_start.thread_name;
    rec_t *r = b_pi->GetThreadLocalStorage(env);
    int ok = r && r->magic == MAGIC && r->env == env && (!name || strcmp(r->name, name) == 0);
    pthread_mutex_lock(&lock);
    b_log("THREAD_END %s env %p", name ? name : "(null)", (void *)env);
    n_ended++;
    if (n_ended_envs < MAX_ENVS) {
        ended_reused[n_ended_envs] = 0;
        ended_envs[n_ended_envs++] = env;
    }
    if (ok) {
        n_ended_ok++;
        if (strncmp(r->name, "b-w", 3) == 0)
            n_workers_ok++;
    } else {
        b_fail("THREAD_END %s (env %p): storage is %p (magic 0x%x, env %p, name %s)", name ? name : "(null)",
               (void *)env, (void *)r, r ? r->magic : 0, r ? (void *)r->env : NULL, r ? r->name : "-");
    }
    if (ev->u.thread_start.thread_env_id && ev->u.thread_start.thread_env_id != env)
        n_end_env_mismatch++;
    pthread_mutex_unlock(&lock);
    b_pi->SetThreadLocalStorage(env, NULL);
    if (b_pi->GetThreadLocalStorage(env) != NULL)
        b_fail("THREAD_END %s: storage not NULL after setting NULL", name ? name : "(null)");
    if (ok) {
        r->magic = 0;
        free(r);
    }
}

static void cpu_time_checks(void)
{
    jlong c0 = b_pi->GetCurrentThreadCpuTime();
    long long l0 = b_thread_cpu_ns();
    long long wall_end = b_now_ms() + 5000;
    volatile unsigned long spin = 0;
    while (b_thread_cpu_ns() - l0 < 200000000LL && b_now_ms() < wall_end)
        spin++;
    jlong c1 = b_pi->GetCurrentThreadCpuTime();
    long long l1 = b_thread_cpu_ns();
    b_sleep_ms(200);
    jlong c2 = b_pi->GetCurrentThreadCpuTime();
    long long lib = l1 - l0;
    b_log("cpu: layer %lld -> %lld -> %lld ns; libc spin %lld ns", (long long)c0, (long long)c1, (long long)c2, lib);
    b_check(c0 >= 0, "GetCurrentThreadCpuTime is not negative (%lld)", (long long)c0);
    b_check(lib >= 150000000LL, "the spin burned at least 150 ms of CPU by libc's clock (%lld ns)", lib);
    /* Same clock underneath, so the two deltas agree closely; the margin
     * covers the few calls made outside the libc pair. */
    b_check(c1 - c0 >= lib - 5000000LL && c1 - c0 <= lib + 20000000LL,
            "GetCurrentThreadCpuTime grew by the spin's CPU time (%lld ns vs %lld ns)", (long long)(c1 - c0), lib);
    b_check(c2 >= c1 && c2 - c1 < 50000000LL, "GetCurrentThreadCpuTime grew little across a 200 ms sleep (%lld ns)",
            (long long)(c2 - c1));
}

/* Reads seen_envs without the lock, as a handler must: entries are only
 * ever added, each written before the count that shows it. */
static void on_sigprof(int sig)
{
    int saved_errno = errno;
    int n = __atomic_load_n(&n_seen, __ATOMIC_ACQUIRE);
    /* Records are freed at THREAD_END: looked at, never into; and set only
     * for no thread, since a write-back would race the thread's own. */
    volatile void *last = NULL;
    for (int i = 0; i < n; i++)
        last = b_pi->GetThreadLocalStorage(seen_envs[i]);
    (void)last;
    static void *not_an_env[8];
    b_pi->SetThreadLocalStorage((JNIEnv *)not_an_env, NULL);
    if (b_pi->GetThreadLocalStorage((JNIEnv *)not_an_env) != NULL || b_pi->GetThreadLocalStorage(NULL) != NULL)
        __atomic_fetch_add(&sigprof_bad, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&sigprof_runs, 1, __ATOMIC_RELAXED);
    errno = saved_errno;
}

static void sigprof_timer(int on)
{
    struct itimerval every = { { 0, on ? 1000 : 0 }, { 0, on ? 1000 : 0 } };
    if (on) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_sigprof;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        b_check(sigaction(SIGPROF, &sa, NULL) == 0, "SIGPROF handler installed");
    }
    setitimer(ITIMER_PROF, &every, NULL);
}

static void sampler(void *arg)
{
    JNIEnv *envs[MAX_ENVS];
    JVMPI_CallFrame frames[8];
    while (!__atomic_load_n(&sampler_stop, __ATOMIC_SEQ_CST)) {
        pthread_mutex_lock(&lock);
        int n = n_seen;
        memcpy(envs, seen_envs, (size_t)n * sizeof *envs);
        pthread_mutex_unlock(&lock);
        for (int i = 0; i < n; i++) {
            JVMPI_CallTrace t = { envs[i], 0, frames };
            (void)b_pi->GetThreadStatus(envs[i]);
            b_pi->GetCallTrace(&t, 8);
            (void)b_pi->GetThreadLocalStorage(envs[i]);
            (void)b_pi->ThreadHasRun(envs[i]);
        }
        sampler_rounds++;
        b_sleep_ms(1);
    }
    __atomic_store_n(&sampler_done, 1, __ATOMIC_SEQ_CST);
}

/* Everything that takes a JNIEnv *, on each thread that has ended. */
static void ended_thread_checks(void)
{
    JVMPI_CallFrame frames[8];
    int word, checked = 0, bad = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n_ended_envs; i++) {
        if (ended_reused[i])
            continue;
        JNIEnv *env = ended_envs[i];
        jint status = b_pi->GetThreadStatus(env);
        JVMPI_CallTrace t = { env, 99, frames };
        b_pi->GetCallTrace(&t, 8);
        b_pi->SetThreadLocalStorage(env, &word);
        void *tls = b_pi->GetThreadLocalStorage(env);
        jboolean ran = b_pi->ThreadHasRun(env);
        b_pi->SuspendThread(env);
        b_pi->ResumeThread(env);
        jint sres = 99, rres = 99;
        b_pi->SuspendThreadList(1, &env, &sres);
        b_pi->ResumeThreadList(1, &env, &rres);
        jobjectID obj = b_pi->GetThreadObject(env);
        checked++;
        if (status != JVMPI_THREAD_RUNNABLE || t.num_frames != 0 || tls != NULL || ran != JNI_FALSE || sres != 10 ||
            rres != 10 || obj != NULL) {
            bad++;
            b_log("ended env %p: status %d, %d frames, storage %p, has run %d, list results %d/%d, object %p",
                  (void *)env, (int)status, (int)t.num_frames, tls, (int)ran, (int)sres, (int)rres, (void *)obj);
        }
    }
    pthread_mutex_unlock(&lock);
    b_check(checked > 0 && bad == 0,
            "%d threads that ended: GetThreadStatus RUNNABLE, the list results 10, no frames, NULL storage, "
            "ThreadHasRun JNI_FALSE, no thread object (%d answered otherwise)",
            checked, bad);
}

static void shut_down(JVMPI_Event *ev)
{
    sigprof_timer(0);
    b_check(__atomic_load_n(&sigprof_runs, __ATOMIC_RELAXED) > 0 && __atomic_load_n(&sigprof_bad, __ATOMIC_RELAXED) == 0,
            "SIGPROF handler: %ld runs, NULL for no thread every time (%ld wrong)", sigprof_runs, sigprof_bad);
    __atomic_store_n(&sampler_stop, 1, __ATOMIC_SEQ_CST);
    long long until = b_now_ms() + 5000;
    while (!__atomic_load_n(&sampler_done, __ATOMIC_SEQ_CST) && b_now_ms() < until)
        b_sleep_ms(5);
    b_check(__atomic_load_n(&sampler_done, __ATOMIC_SEQ_CST), "the sampler stopped after %ld rounds",
            sampler_rounds);
    ended_thread_checks();
    static void *not_an_env[64];
    b_check(b_pi->GetThreadStatus((JNIEnv *)not_an_env) == JVMPI_THREAD_RUNNABLE,
            "GetThreadStatus of a JNIEnv * that was never a thread's is RUNNABLE");

    const char *w = b_opt("workers");
    int workers = w ? atoi(w) : -1;
    rec_t *r = b_pi->GetThreadLocalStorage(ev->env_id);
    b_check(r && r->magic == MAGIC && r->env == ev->env_id,
            "JVM_SHUT_DOWN: the delivering thread's storage (env %p) is still its record (%s)", (void *)ev->env_id,
            r ? r->name : "NULL");
    pthread_mutex_lock(&lock);
    b_log("threads: %d started, %d ended (%d with their storage intact), %d workers", n_started, n_ended, n_ended_ok,
          n_workers_ok);
    b_check(n_started >= workers + 1, "THREAD_START for at least the %d workers and main (%d)", workers, n_started);
    b_check(n_ended > 0 && n_ended_ok == n_ended, "every THREAD_END found its thread's storage (%d of %d)",
            n_ended_ok, n_ended);
    b_check(n_workers_ok == workers, "all %d worker threads ended with their storage intact (%d)", workers,
            n_workers_ok);
    b_check(n_fresh_not_null == 0 && n_readback_bad == 0, "new threads start with NULL and keep what is set");
    b_check(n_end_env_mismatch == 0, "THREAD_END's thread_env_id is the ending thread's env_id (%d mismatches)",
            n_end_env_mismatch);
    pthread_mutex_unlock(&lock);
    b_summary(AGENT);
}

static void notify_event(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_THREAD_START:
        thread_start(ev);
        break;
    case JVMPI_EVENT_THREAD_END:
        thread_end(ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE: {
        jint rc = b_pi->CreateSystemThread("b-sampler", JVMPI_NORMAL_PRIORITY, sampler);
        if (!b_check(rc == JNI_OK, "CreateSystemThread(b-sampler) returns JNI_OK (%d)", (int)rc))
            sampler_done = 1;
        cpu_time_checks();
        sigprof_timer(1);
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        shut_down(ev);
        break;
    default:
        b_fail("event %d was not enabled", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved);

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (b_setup(vm, options, AGENT) != JNI_OK)
        return JNI_ERR;
    b_pi->NotifyEvent = notify_event;
    static const jint events[] = { JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END, JVMPI_EVENT_JVM_INIT_DONE,
                                   JVMPI_EVENT_JVM_SHUT_DOWN };
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        b_check(b_pi->EnableEvent(events[i], NULL) == JVMPI_SUCCESS, "EnableEvent(%d)", (int)events[i]);
    return JNI_OK;
}
