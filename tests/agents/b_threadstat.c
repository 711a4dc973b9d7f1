/*
 * b_threadstat - GetThreadStatus, ThreadHasRun, Suspend/ResumeThread and
 * Suspend/ResumeThreadList on the threads of B_ThreadStates (it_b_threadstat.sh).
 *
 * The JNIEnv * of each Java thread comes from its THREAD_START.  A sampler
 * made with CreateSystemThread at JVM_INIT_DONE waits for OUTFILE.ready
 * (made by the Java program once every thread is in its state), samples, and
 * creates OUTFILE.done.
 *
 * Expectations, from the JVMPI specification, and from HotSpot 5.0 where the
 * specification leaves room (agents were debugged against it):
 * - GetThreadStatus: Object.wait is CONDVAR_WAIT, blocked on monitor entry is
 *   MONITOR_WAIT, a busy loop is RUNNABLE, and so is Thread.sleep (5.0 showed
 *   only a thread blocked in the VM as waiting).  NULL and a JNIEnv * that is
 *   no thread's are RUNNABLE (5.0; never -1).  The SUSPENDED and
 *   INTERRUPTED bits are masked off for that comparison, and checked apart.
 *   A suspension made through JVMPI keeps the status the thread had ("the
 *   status at the time of suspension is returned") and, as HotSpot 5.0 did,
 *   adds the SUSPENDED bit, which goes again at the resume.  INTERRUPTED
 *   shows on "flagged" alone, whose interrupt flag is set.
 * - ThreadHasRun is asked while the thread is suspended, from the second
 *   suspension on: JNI_TRUE for the spinner and the sleeper alike (5.0
 *   could not tell and said every live thread had run).
 * - Suspend/ResumeThreadList report 0 (no error) per thread; as on 5.0,
 *   SuspendThreadList gives JVMDI's 10 (INVALID_THREAD) for NULL, for a
 *   JNIEnv * that is no thread's and for the caller itself, and 14
 *   (THREAD_SUSPENDED) for a thread suspended already.
 * - SuspendThread of the calling thread returns at once and suspends
 *   nothing (HPROF suspends every thread on its list, itself included).
 * Nothing is written to the output while a thread is suspended: a suspended
 * thread may hold a libc lock.
 * Options: OUTFILE.
 */
#include "b_common.h"

#define AGENT "b_threadstat"
#define ROUNDS 5

enum { SLEEPER, SPINNER, HOLDER, BLOCKED, WAITER, FLAGGED, NTHREADS };
static const char *const names[NTHREADS] = { "sleeper", "spinner", "holder", "blocked", "waiter", "flagged" };
static const jint expected[NTHREADS] = {
    JVMPI_THREAD_RUNNABLE, JVMPI_THREAD_RUNNABLE, JVMPI_THREAD_RUNNABLE,
    JVMPI_THREAD_MONITOR_WAIT, JVMPI_THREAD_CONDVAR_WAIT, JVMPI_THREAD_RUNNABLE,
};
static JNIEnv *envs[NTHREADS];
static pthread_mutex_t envs_lock = PTHREAD_MUTEX_INITIALIZER;

#define STATE_MASK (~(JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED))

static const char *status_name(jint s)
{
    switch (s & STATE_MASK) {
    case JVMPI_THREAD_RUNNABLE: return "RUNNABLE";
    case JVMPI_THREAD_MONITOR_WAIT: return "MONITOR_WAIT";
    case JVMPI_THREAD_CONDVAR_WAIT: return "CONDVAR_WAIT";
    default: return "?";
    }
}

static void check_status(int t, jint s, const char *when)
{
    b_check((s & STATE_MASK) == expected[t], "%s %s: GetThreadStatus 0x%x (%s), expected %s", names[t], when,
            (unsigned)s, status_name(s), status_name(expected[t]));
}

/* SUSPENDED while the sampler holds the thread suspended, INTERRUPTED for
 * the thread whose flag is set, nothing else. */
static void check_bits(int t, jint s, int suspended, const char *when)
{
    jint want = (suspended ? JVMPI_THREAD_SUSPENDED : 0) | (t == FLAGGED ? JVMPI_THREAD_INTERRUPTED : 0);
    b_check(s > 0 && (s & ~STATE_MASK) == want, "%s %s: SUSPENDED %s, INTERRUPTED %s (status 0x%x)", names[t], when,
            suspended ? "set" : "clear", t == FLAGGED ? "set" : "clear", (unsigned)s);
}

static void sample_single(void)
{
    /* ROUNDS suspensions of sleeper and spinner, 100 ms apart. */
    jint st[ROUNDS][2];
    jboolean ran[ROUNDS][2];
    const int which[2] = { SLEEPER, SPINNER };
    for (int r = 0; r < ROUNDS; r++) {
        for (int k = 0; k < 2; k++)
            b_pi->SuspendThread(envs[which[k]]);
        for (int k = 0; k < 2; k++) {
            st[r][k] = b_pi->GetThreadStatus(envs[which[k]]);
            ran[r][k] = r > 0 ? b_pi->ThreadHasRun(envs[which[k]]) : JNI_FALSE;
        }
        for (int k = 0; k < 2; k++)
            b_pi->ResumeThread(envs[which[k]]);
        b_sleep_ms(100);
    }
    int spinner_ran = 0, sleeper_ran = 0;
    for (int r = 0; r < ROUNDS; r++) {
        b_log("round %d: sleeper status 0x%x hasrun %d, spinner status 0x%x hasrun %d", r, (unsigned)st[r][0],
              (int)ran[r][0], (unsigned)st[r][1], (int)ran[r][1]);
        if (r > 0) {
            spinner_ran += ran[r][1] == JNI_TRUE;
            sleeper_ran += ran[r][0] == JNI_TRUE;
        }
    }
    for (int k = 0; k < 2; k++) {
        check_status(which[k], st[0][k], "while suspended by SuspendThread");
        check_bits(which[k], st[0][k], 1, "while suspended by SuspendThread");
        check_status(which[k], st[ROUNDS - 1][k], "while suspended, last round");
    }
    b_check(spinner_ran == ROUNDS - 1, "ThreadHasRun(spinner) is JNI_TRUE in each of %d later suspensions (%d)",
            ROUNDS - 1, spinner_ran);
    b_check(sleeper_ran == ROUNDS - 1, "ThreadHasRun(sleeper) is JNI_TRUE in each of %d later suspensions (%d)",
            ROUNDS - 1, sleeper_ran);
}

static void sample_list(void)
{
    JNIEnv *list[2] = { envs[SLEEPER], envs[SPINNER] };
    jint sres[ROUNDS][2], rres[ROUNDS][2], st[ROUNDS][2];
    jboolean ran[ROUNDS][2];
    for (int r = 0; r < ROUNDS; r++) {
        sres[r][0] = sres[r][1] = rres[r][0] = rres[r][1] = -99;
        b_pi->SuspendThreadList(2, list, sres[r]);
        for (int k = 0; k < 2; k++) {
            st[r][k] = b_pi->GetThreadStatus(list[k]);
            ran[r][k] = r > 0 ? b_pi->ThreadHasRun(list[k]) : JNI_FALSE;
        }
        b_pi->ResumeThreadList(2, list, rres[r]);
        b_sleep_ms(100);
    }
    int bad_results = 0, spinner_ran = 0, sleeper_ran = 0;
    for (int r = 0; r < ROUNDS; r++) {
        b_log("list round %d: results suspend %d,%d resume %d,%d; sleeper 0x%x hasrun %d, spinner 0x%x hasrun %d",
              r, (int)sres[r][0], (int)sres[r][1], (int)rres[r][0], (int)rres[r][1], (unsigned)st[r][0],
              (int)ran[r][0], (unsigned)st[r][1], (int)ran[r][1]);
        for (int k = 0; k < 2; k++)
            bad_results += (sres[r][k] != 0) + (rres[r][k] != 0);
        if (r > 0) {
            spinner_ran += ran[r][1] == JNI_TRUE;
            sleeper_ran += ran[r][0] == JNI_TRUE;
        }
    }
    b_check(bad_results == 0, "SuspendThreadList/ResumeThreadList report 0 for both threads in every round");
    check_status(SLEEPER, st[0][0], "while suspended by SuspendThreadList");
    check_status(SPINNER, st[0][1], "while suspended by SuspendThreadList");
    check_bits(SLEEPER, st[0][0], 1, "while suspended by SuspendThreadList");
    check_bits(SPINNER, st[0][1], 1, "while suspended by SuspendThreadList");
    b_check(spinner_ran == ROUNDS - 1, "after SuspendThreadList: ThreadHasRun(spinner) JNI_TRUE %d of %d times",
            spinner_ran, ROUNDS - 1);
    b_check(sleeper_ran == ROUNDS - 1, "after SuspendThreadList: ThreadHasRun(sleeper) JNI_TRUE %d of %d times",
            sleeper_ran, ROUNDS - 1);
}

/* What HotSpot 5.0 did with the calling thread, a thread suspended twice,
 * and JNIEnv *s that are no thread's. */
static void sample_odd_cases(void)
{
    static void *not_an_env[64];
    JNIEnv *self = NULL;
    b_check((*b_vm)->GetEnv(b_vm, (void **)&self, JNI_VERSION_1_2) == JNI_OK && self != NULL,
            "the sampler has a JNIEnv *");
    /* It would never return if the layer suspended the caller. */
    long long t0 = b_now_ms();
    b_pi->SuspendThread(self);
    b_check(b_now_ms() - t0 < 2000, "SuspendThread of the calling thread returned at once (%lld ms)",
            b_now_ms() - t0);
    b_pi->SuspendThread(envs[SPINNER]);
    b_pi->SuspendThread(envs[SPINNER]); /* a second time: nothing more */
    JNIEnv *list[4] = { self, NULL, (JNIEnv *)not_an_env, envs[SPINNER] };
    jint res[4] = { -99, -99, -99, -99 };
    b_pi->SuspendThreadList(4, list, res);
    b_pi->ResumeThread(envs[SPINNER]); /* once is enough */
    jint after = b_pi->GetThreadStatus(envs[SPINNER]);
    b_log("SuspendThreadList(self, NULL, not a thread, suspended): %d %d %d %d", (int)res[0], (int)res[1],
          (int)res[2], (int)res[3]);
    b_check(res[0] == 10 && res[1] == 10 && res[2] == 10 && res[3] == 14,
            "SuspendThreadList: 10 for the caller, NULL and no thread, 14 for a suspended one (%d %d %d %d)",
            (int)res[0], (int)res[1], (int)res[2], (int)res[3]);
    b_check(!(after & JVMPI_THREAD_SUSPENDED), "one ResumeThread undoes two SuspendThreads (status 0x%x)",
            (unsigned)after);
    jint rres[2] = { -99, -99 };
    JNIEnv *rlist[2] = { NULL, (JNIEnv *)not_an_env };
    b_pi->ResumeThreadList(2, rlist, rres);
    b_check(rres[0] == 10 && rres[1] == 10, "ResumeThreadList: 10 for NULL and no thread (%d %d)", (int)rres[0],
            (int)rres[1]);
    jint sn = b_pi->GetThreadStatus(NULL), su = b_pi->GetThreadStatus((JNIEnv *)not_an_env);
    b_check(sn == JVMPI_THREAD_RUNNABLE && su == JVMPI_THREAD_RUNNABLE,
            "GetThreadStatus of NULL and of no thread: RUNNABLE (0x%x, 0x%x)", (unsigned)sn, (unsigned)su);
}

static void sampler(void *arg)
{
    if (!b_check(b_wait_file(".ready", 60000), "the Java program became ready")) {
        b_touch(".done");
        return;
    }
    int known = 0;
    pthread_mutex_lock(&envs_lock);
    for (int t = 0; t < NTHREADS; t++) {
        b_log("%s has JNIEnv %p", names[t], (void *)envs[t]);
        known += envs[t] != NULL;
    }
    pthread_mutex_unlock(&envs_lock);
    if (!b_check(known == NTHREADS, "THREAD_START gave the JNIEnv * of all %d threads (%d)", NTHREADS, known)) {
        b_touch(".done");
        return;
    }

    /* Not suspended: twice, 100 ms apart. */
    for (int i = 0; i < 2; i++) {
        for (int t = 0; t < NTHREADS; t++) {
            jint s = b_pi->GetThreadStatus(envs[t]);
            check_status(t, s, i ? "running free (again)" : "running free");
            check_bits(t, s, 0, i ? "running free (again)" : "running free");
        }
        b_sleep_ms(100);
    }

    sample_single();

    /* The blocked, waiting and interrupted threads, suspended one at a time. */
    const int others[4] = { HOLDER, BLOCKED, WAITER, FLAGGED };
    for (int k = 0; k < 4; k++) {
        int t = others[k];
        b_pi->SuspendThread(envs[t]);
        jint s = b_pi->GetThreadStatus(envs[t]);
        b_pi->ResumeThread(envs[t]);
        check_status(t, s, "while suspended by SuspendThread");
        check_bits(t, s, 1, "while suspended by SuspendThread");
        s = b_pi->GetThreadStatus(envs[t]);
        check_status(t, s, "after ResumeThread");
        check_bits(t, s, 0, "after ResumeThread");
    }

    sample_list();
    sample_odd_cases();

    /* Resumed threads keep working: the states are what they were. */
    for (int t = 0; t < NTHREADS; t++) {
        jint s = b_pi->GetThreadStatus(envs[t]);
        check_status(t, s, "after all resumes");
        check_bits(t, s, 0, "after all resumes");
    }

    b_summary(AGENT);
    b_touch(".done");
}

static void notify_event(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_THREAD_START: {
        const char *n = ev->u.thread_start.thread_name;
        pthread_mutex_lock(&envs_lock);
        for (int t = 0; n && t < NTHREADS; t++)
            if (strcmp(n, names[t]) == 0)
                envs[t] = ev->u.thread_start.thread_env_id;
        pthread_mutex_unlock(&envs_lock);
        break;
    }
    case JVMPI_EVENT_JVM_INIT_DONE: {
        jint rc = b_pi->CreateSystemThread("b-sampler", JVMPI_NORMAL_PRIORITY, sampler);
        if (!b_check(rc == JNI_OK, "CreateSystemThread(b-sampler) returns JNI_OK (%d)", (int)rc))
            b_touch(".done");
        break;
    }
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
    b_check(b_pi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL) == JVMPI_SUCCESS, "EnableEvent(THREAD_START)");
    b_check(b_pi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL) == JVMPI_SUCCESS, "EnableEvent(JVM_INIT_DONE)");
    return JNI_OK;
}
