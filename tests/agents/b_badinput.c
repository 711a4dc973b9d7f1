/*
 * b_badinput - bad arguments never crash the layer (it_b_badinput.sh, with B_Workers).
 *
 * JVM_OnLoad and the JVM_INIT_DONE handler hand the layer NULLs, a JNIEnv *
 * that is no thread's, a destroyed raw monitor, event numbers that do not
 * exist, and 1000 class IDs that are none.  What each call returns is
 * logged; where JVMPI (or the layer's documented behaviour) says what to
 * return, it is checked.  Afterwards the
 * layer must still work: raw monitors, GetThreadObject, and THREAD_START
 * events for the program's worker threads.  The JVM must then finish
 * normally with the program's output intact (checked by the script).
 * Options: OUTFILE.
 */
#include <stdint.h>

#include "b_common.h"

#define AGENT "b_badinput"

static int unexpected_requested;
static int worker_starts;
static int thread_start_enabled;

/* Readable memory that is no thread's JNIEnv. */
static void *fake_env_mem[64];
static void *fake_env_mem2[64];
#define FAKE_ENV ((JNIEnv *)fake_env_mem)
#define FAKE_ENV2 ((JNIEnv *)fake_env_mem2)

static void monitors_null(const char *where)
{
    b_pi->RawMonitorEnter(NULL);
    b_pi->RawMonitorExit(NULL);
    b_pi->RawMonitorWait(NULL, 1);
    b_pi->RawMonitorNotifyAll(NULL);
    b_pi->RawMonitorDestroy(NULL);
    b_log("%s: RawMonitorEnter/Exit/Wait/NotifyAll/Destroy(NULL) returned", where);
}

static void event_numbers(const char *where)
{
    static const jint bad[] = { 9999, 0, -1, JVMPI_MAX_EVENT_TYPE_VAL + 1, 10, 36 };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        jint e = b_pi->EnableEvent(bad[i], NULL);
        jint d = b_pi->DisableEvent(bad[i], NULL);
        b_check(e == JVMPI_NOT_AVAILABLE && d == JVMPI_NOT_AVAILABLE,
                "%s: EnableEvent/DisableEvent(%d) return JVMPI_NOT_AVAILABLE (%d, %d)", where, (int)bad[i], (int)e,
                (int)d);
    }
    jint r = b_pi->RequestEvent(9999, NULL);
    b_check(r == JVMPI_NOT_AVAILABLE, "%s: RequestEvent(9999) returns JVMPI_NOT_AVAILABLE (%d)", where, (int)r);
}

static void thread_calls(void)
{
    JVMPI_CallFrame frames[8];

    b_pi->GetCallTrace(NULL, 10);
    b_log("GetCallTrace(NULL, 10) returned");

    JVMPI_CallTrace tn = { NULL, 99, frames };
    b_pi->GetCallTrace(&tn, 8);
    b_log("GetCallTrace with env_id NULL returned, num_frames %d", (int)tn.num_frames);

    JVMPI_CallTrace tneg = { b_self_env(), 99, frames };
    b_pi->GetCallTrace(&tneg, -5);
    b_check(tneg.num_frames == 0, "GetCallTrace with depth -5 gives num_frames 0 (%d)", (int)tneg.num_frames);

    JVMPI_CallTrace tf = { FAKE_ENV, 99, frames };
    b_pi->GetCallTrace(&tf, 8);
    b_check(tf.num_frames == 0, "GetCallTrace of an unknown env gives num_frames 0 (%d)", (int)tf.num_frames);

    b_log("GetThreadStatus(NULL) = %d", (int)b_pi->GetThreadStatus(NULL));
    b_log("GetThreadStatus(unknown env) = %d", (int)b_pi->GetThreadStatus(FAKE_ENV));

    /* Not SuspendThread(NULL): that could fairly mean the calling thread. */
    b_pi->SuspendThread(FAKE_ENV);
    b_log("SuspendThread(unknown env) returned");
    b_log("ThreadHasRun(unknown env) = %d", (int)b_pi->ThreadHasRun(FAKE_ENV));
    b_pi->ResumeThread(FAKE_ENV);
    b_log("ResumeThread(unknown env) returned");

    JNIEnv *list[2] = { FAKE_ENV, FAKE_ENV2 };
    jint res[2] = { -99, -99 };
    b_pi->SuspendThreadList(2, list, res);
    b_check(res[0] != 0 && res[1] != 0, "SuspendThreadList of two unknown envs reports errors (%d, %d)", (int)res[0],
            (int)res[1]);
    res[0] = res[1] = -99;
    b_pi->ResumeThreadList(2, list, res);
    b_check(res[0] != 0 && res[1] != 0, "ResumeThreadList of two unknown envs reports errors (%d, %d)", (int)res[0],
            (int)res[1]);
    b_pi->SuspendThreadList(0, NULL, NULL);
    b_pi->ResumeThreadList(0, NULL, NULL);
    b_log("Suspend/ResumeThreadList(0, NULL, NULL) returned");

    b_check(b_pi->GetThreadLocalStorage(FAKE_ENV) == NULL, "GetThreadLocalStorage(unknown env) is NULL");
    b_pi->SetThreadLocalStorage(FAKE_ENV, fake_env_mem2);
    b_log("SetThreadLocalStorage(unknown env) returned; reading back gives %p",
          b_pi->GetThreadLocalStorage(FAKE_ENV));
    b_log("GetThreadLocalStorage(NULL) = %p", b_pi->GetThreadLocalStorage(NULL));

    b_check(b_pi->GetThreadObject(FAKE_ENV) == NULL, "GetThreadObject(unknown env) is NULL");
    b_log("GetThreadObject(NULL) = %p", (void *)b_pi->GetThreadObject(NULL));
}

static void monitor_calls(void)
{
    monitors_null("JVM_INIT_DONE");

    JVMPI_RawMonitor m = b_pi->RawMonitorCreate("b-bad");
    b_check(m != NULL, "RawMonitorCreate(b-bad)");
    b_pi->RawMonitorEnter(m);
    b_pi->RawMonitorExit(m);
    b_pi->RawMonitorDestroy(m);
    b_pi->RawMonitorExit(m);
    b_log("RawMonitorExit of a destroyed monitor returned");

    JVMPI_RawMonitor n = b_pi->RawMonitorCreate("b-unowned");
    b_pi->RawMonitorExit(n);
    b_log("RawMonitorExit of a monitor never entered returned");
    /* The spec's HotSpot note: waiting does not happen without owning it. */
    long long t0 = b_now_ms();
    b_pi->RawMonitorWait(n, 3000);
    long long waited = b_now_ms() - t0;
    b_check(waited < 1000, "RawMonitorWait on a monitor not owned returns at once (%lld ms)", waited);
    b_pi->RawMonitorNotifyAll(n);
    b_log("RawMonitorNotifyAll on a monitor not owned returned");
    b_pi->RawMonitorDestroy(n);
}

static void id_calls(void)
{
    jint r = b_pi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    b_check(r != JVMPI_SUCCESS, "RequestEvent(CLASS_LOAD, NULL) does not report success (%d)", (int)r);
    r = b_pi->RequestEvent(JVMPI_EVENT_THREAD_START, NULL);
    b_check(r != JVMPI_SUCCESS, "RequestEvent(THREAD_START, NULL) does not report success (%d)", (int)r);
    b_check(__atomic_load_n(&unexpected_requested, __ATOMIC_SEQ_CST) == 0,
            "no event delivered for requests with a NULL ID");

    /* What a profiler built for 32-bit JVMs asks for: IDs read as 4 bytes
     * out of a 64-bit heap dump.  The layer prints a few of these errors
     * and counts the rest (checked by the script). */
    int refused = 0;
    for (int i = 0; i < 1000; i++) {
        jobjectID id = (jobjectID)(uintptr_t)(0x7ead0000u + (unsigned)i * 8u);
        refused += b_pi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, id) == JVMPI_FAIL;
    }
    b_check(refused == 1000, "RequestEvent(CLASS_LOAD) of 1000 IDs no class has fails each time (%d)", refused);

    b_check(b_pi->GetMethodClass(NULL) == NULL, "GetMethodClass(NULL) is NULL");
    /* Method IDs no method has: unmapped memory, a number past any
     * method's (from JDK 26 on, method IDs are numbers counted from 1), and
     * memory that holds no method (the agent's own data).  JVM TI, given
     * the first, crashes JDK 8 to 25. */
    static uintptr_t not_a_method[4] = {0x1234, 0x5678, 0x9abc, 0xdef0};
    jmethodID bad[] = {(jmethodID)(uintptr_t)0x7ead0008u, (jmethodID)(uintptr_t)0x3f000000u,
                       (jmethodID)&not_a_method[0], (jmethodID)&not_a_method[1]};
    int nulls = 0;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        nulls += b_pi->GetMethodClass(bad[i]) == NULL;
    b_check(nulls == 4, "GetMethodClass of 4 IDs no method has gives NULL each time (%d)", nulls);
    b_check(b_pi->jobjectID2jobject(NULL) == NULL, "jobjectID2jobject(NULL) is NULL");
    b_check(b_pi->jobject2jobjectID(NULL) == NULL, "jobject2jobjectID(NULL) is NULL");
}

/* The layer still works after all that. */
static void sanity(void)
{
    JVMPI_RawMonitor m = b_pi->RawMonitorCreate("b-good");
    b_pi->RawMonitorEnter(m);
    b_pi->RawMonitorEnter(m);
    b_pi->RawMonitorExit(m);
    b_pi->RawMonitorExit(m);
    long long t0 = b_now_ms();
    b_pi->RawMonitorEnter(m);
    b_pi->RawMonitorWait(m, 100);
    b_pi->RawMonitorExit(m);
    long long waited = b_now_ms() - t0;
    b_check(waited >= 50 && waited < 5000, "a fresh monitor still waits its 100 ms (%lld ms)", waited);
    b_pi->RawMonitorDestroy(m);
    b_check(b_pi->GetThreadObject(b_self_env()) != NULL, "GetThreadObject of the current thread still works");
    jint rc = b_pi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
    __atomic_store_n(&thread_start_enabled, 1, __ATOMIC_SEQ_CST);
    b_check(rc == JVMPI_SUCCESS, "EnableEvent(THREAD_START) still works (%d)", (int)rc);
}

static void notify_event(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_JVM_INIT_DONE:
        thread_calls();
        monitor_calls();
        id_calls();
        event_numbers("JVM_INIT_DONE");
        sanity();
        b_log("JVM_INIT_DONE: all calls returned");
        break;
    case JVMPI_EVENT_THREAD_START:
        if (!__atomic_load_n(&thread_start_enabled, __ATOMIC_SEQ_CST))
            b_fail("THREAD_START before it was enabled");
        if (ev->u.thread_start.thread_name && strncmp(ev->u.thread_start.thread_name, "b-w", 3) == 0)
            __atomic_add_fetch(&worker_starts, 1, __ATOMIC_SEQ_CST);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        b_check(__atomic_load_n(&worker_starts, __ATOMIC_SEQ_CST) == 2,
                "THREAD_START for the program's 2 worker threads (%d)", worker_starts);
        b_summary(AGENT);
        break;
    default:
        __atomic_add_fetch(&unexpected_requested, 1, __ATOMIC_SEQ_CST);
        b_fail("unexpected event 0x%x", (unsigned)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved);

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (b_setup(vm, options, AGENT) != JNI_OK)
        return JNI_ERR;
    b_pi->NotifyEvent = notify_event;
    b_pi->GetCallTrace(NULL, 10);
    b_log("JVM_OnLoad: GetCallTrace(NULL, 10) returned");
    monitors_null("JVM_OnLoad");
    event_numbers("JVM_OnLoad");
    b_check(b_pi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL) == JVMPI_SUCCESS, "EnableEvent(JVM_INIT_DONE)");
    b_check(b_pi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL) == JVMPI_SUCCESS, "EnableEvent(JVM_SHUT_DOWN)");
    return JNI_OK;
}
