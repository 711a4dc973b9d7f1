/*
 * b_rawmon - raw monitors between two agent threads (it_b_rawmon.sh).
 *
 * At JVM_INIT_DONE two threads are made with CreateSystemThread.  Thread 1
 * conducts: it moves through numbered phases and checks, after each one, the
 * RAW_MONITOR_CONTENDED_* events recorded in that phase.  The two threads
 * meet at a pthread barrier (not a raw monitor, which could itself report).
 *   1 contention on "lockA": ENTER and ENTERED on thread 2, EXIT on thread 1
 *   2 the same on "_quiet": silent, as for every name starting with '_'
 *   3 recursion: thread 1 enters "lockA" twice, exits once; thread 2 must
 *     still block until the second exit, which alone sends EXIT
 *   4 RawMonitorWait with a timeout returns after about that time
 *   5 RawMonitorNotifyAll wakes a thread waiting without a timeout
 * Options: OUTFILE.  Creates OUTFILE.done at the end (B_Main --wait-for).
 */
#include "b_common.h"

#define AGENT "b_rawmon"
#define MAX_EVENTS 512

typedef struct {
    int phase;
    jint type;
    JNIEnv *env;
    char name[64];
    JVMPI_RawMonitor id;
} rec_t;

static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static rec_t recs[MAX_EVENTS];
static int nrecs;
static int phase;

static JVMPI_RawMonitor mon_a, mon_q, mon_w;
static JNIEnv *env1, *env2;
static pthread_barrier_t bar;
static volatile int waiter_state;
static long long t2_blocked_ms[8];
static long long t2_waited_ms;

static void record_event(JVMPI_Event *ev)
{
    jint type = ev->event_type;
    pthread_mutex_lock(&rec_lock);
    if (nrecs < MAX_EVENTS) {
        rec_t *r = &recs[nrecs++];
        r->phase = __atomic_load_n(&phase, __ATOMIC_SEQ_CST);
        r->type = type;
        r->env = ev->env_id;
        snprintf(r->name, sizeof r->name, "%s", ev->u.raw_monitor.name ? ev->u.raw_monitor.name : "(null)");
        r->id = ev->u.raw_monitor.id;
    }
    pthread_mutex_unlock(&rec_lock);
}

static const char *type_name(jint t)
{
    switch (t) {
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER: return "CONTENDED_ENTER";
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED: return "CONTENDED_ENTERED";
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT: return "CONTENDED_EXIT";
    default: return "other";
    }
}

static const char *who(JNIEnv *env)
{
    return env == env1 ? "thread1" : env == env2 ? "thread2" : "another thread";
}

/* Counts events of the phase about monitor id, of a type, on a thread. */
static int count(int ph, JVMPI_RawMonitor id, jint type, JNIEnv *env)
{
    int n = 0;
    pthread_mutex_lock(&rec_lock);
    for (int i = 0; i < nrecs; i++)
        if (recs[i].phase == ph && recs[i].id == id && recs[i].type == type && recs[i].env == env)
            n++;
    pthread_mutex_unlock(&rec_lock);
    return n;
}

static int count_all(int ph, JVMPI_RawMonitor id)
{
    int n = 0;
    pthread_mutex_lock(&rec_lock);
    for (int i = 0; i < nrecs; i++)
        if (recs[i].phase == ph && recs[i].id == id)
            n++;
    pthread_mutex_unlock(&rec_lock);
    return n;
}

static void dump_phase(int ph)
{
    pthread_mutex_lock(&rec_lock);
    for (int i = 0; i < nrecs; i++)
        if (recs[i].phase == ph)
            b_log("  phase %d: %s name=%s id=%p on %s (type %d)", ph, type_name(recs[i].type),
                  recs[i].name, (void *)recs[i].id, who(recs[i].env), (int)recs[i].type);
    pthread_mutex_unlock(&rec_lock);
}

/* One contention on lockA: ENTER/ENTERED on thread 2, one EXIT on thread 1. */
static void check_lock_a_phase(int ph, const char *what)
{
    /* Events are sent synchronously on the thread concerned; the pause only
     * gives late or duplicate deliveries a chance to be caught. */
    b_sleep_ms(100);
    dump_phase(ph);
    b_check(count(ph, mon_a, JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, env2) == 1,
            "%s: one RAW_MONITOR_CONTENDED_ENTER for lockA on thread 2 (got %d)", what,
            count(ph, mon_a, JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, env2));
    b_check(count(ph, mon_a, JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED, env2) == 1,
            "%s: one RAW_MONITOR_CONTENDED_ENTERED for lockA on thread 2 (got %d)", what,
            count(ph, mon_a, JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED, env2));
    b_check(count(ph, mon_a, JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, env1) == 1,
            "%s: one RAW_MONITOR_CONTENDED_EXIT for lockA on thread 1 (got %d)", what,
            count(ph, mon_a, JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, env1));
    b_check(count_all(ph, mon_a) == 3, "%s: no other event for lockA (got %d in all)", what,
            count_all(ph, mon_a));
    int ok_order = 0;
    pthread_mutex_lock(&rec_lock);
    {
        int enter = -1, entered = -1;
        for (int i = 0; i < nrecs; i++) {
            if (recs[i].phase != ph || recs[i].id != mon_a)
                continue;
            if (recs[i].type == JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER && enter < 0)
                enter = i;
            if (recs[i].type == JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED && entered < 0)
                entered = i;
        }
        ok_order = enter >= 0 && entered > enter;
    }
    pthread_mutex_unlock(&rec_lock);
    b_check(ok_order, "%s: CONTENDED_ENTER came before CONTENDED_ENTERED", what);
}

static void check_names(void)
{
    int bad = 0, quiet = 0;
    pthread_mutex_lock(&rec_lock);
    for (int i = 0; i < nrecs; i++) {
        const rec_t *r = &recs[i];
        if (r->id == mon_q || r->id == mon_w || r->name[0] == '_')
            quiet++;
        if ((r->id == mon_a) != (strcmp(r->name, "lockA") == 0))
            bad++;
        if (r->type != JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER &&
            r->type != JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED &&
            r->type != JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT)
            bad++;
    }
    pthread_mutex_unlock(&rec_lock);
    b_check(quiet == 0, "no event at all for monitors named _quiet/_wmon (got %d)", quiet);
    b_check(bad == 0, "every event has name \"lockA\" exactly when its id is lockA's, and a raw-monitor type (%d bad)", bad);
}

static void set_phase(int p)
{
    __atomic_store_n(&phase, p, __ATOMIC_SEQ_CST);
}

static void thread1(void *arg)
{
    env1 = b_self_env();
    pthread_barrier_wait(&bar); /* both envs known */
    b_check(env1 != NULL && env2 != NULL && env1 != env2,
            "the two system threads have distinct JNIEnv * (%p, %p)", (void *)env1, (void *)env2);

    /* 1: contention on lockA */
    set_phase(1);
    b_pi->RawMonitorEnter(mon_a);
    pthread_barrier_wait(&bar);
    b_sleep_ms(300);
    b_pi->RawMonitorExit(mon_a);
    pthread_barrier_wait(&bar);
    b_check(t2_blocked_ms[1] >= 200, "phase 1: thread 2 blocked on lockA while thread 1 held it (%lld ms)",
            t2_blocked_ms[1]);
    check_lock_a_phase(1, "phase 1 (contention)");

    /* 2: the same on a monitor whose name starts with '_' */
    set_phase(2);
    b_pi->RawMonitorEnter(mon_q);
    pthread_barrier_wait(&bar);
    b_sleep_ms(300);
    b_pi->RawMonitorExit(mon_q);
    pthread_barrier_wait(&bar);
    b_sleep_ms(100);
    b_check(t2_blocked_ms[2] >= 200, "phase 2: thread 2 blocked on _quiet while thread 1 held it (%lld ms)",
            t2_blocked_ms[2]);
    dump_phase(2);
    b_check(count_all(2, mon_q) == 0, "phase 2: contention on _quiet sends no event (got %d)",
            count_all(2, mon_q));

    /* 3: recursion; the inner exit must not release the monitor */
    set_phase(3);
    b_pi->RawMonitorEnter(mon_a);
    b_pi->RawMonitorEnter(mon_a);
    b_pi->RawMonitorExit(mon_a);
    pthread_barrier_wait(&bar);
    b_sleep_ms(300);
    b_pi->RawMonitorExit(mon_a);
    pthread_barrier_wait(&bar);
    b_check(t2_blocked_ms[3] >= 200,
            "phase 3: after enter, enter, exit thread 1 still owns lockA (thread 2 blocked %lld ms)",
            t2_blocked_ms[3]);
    check_lock_a_phase(3, "phase 3 (recursion)");

    /* 4: a timed wait returns by itself */
    set_phase(4);
    b_pi->RawMonitorEnter(mon_w);
    long long t0 = b_now_ms();
    b_pi->RawMonitorWait(mon_w, 200);
    long long waited = b_now_ms() - t0;
    b_pi->RawMonitorExit(mon_w);
    b_check(waited >= 150 && waited < 5000, "phase 4: RawMonitorWait(200 ms) returned after %lld ms", waited);

    /* 5: NotifyAll wakes a thread in an untimed wait */
    set_phase(5);
    pthread_barrier_wait(&bar); /* let thread 2 start waiting */
    int notified = 0;
    for (long long end = b_now_ms() + 10000; !notified && b_now_ms() < end;) {
        b_pi->RawMonitorEnter(mon_w);
        /* Thread 2 set the state before waiting, and waiting gave up the
         * monitor: seeing 1 here means it is in the wait set. */
        if (waiter_state == 1) {
            b_pi->RawMonitorNotifyAll(mon_w);
            notified = 1;
        }
        b_pi->RawMonitorExit(mon_w);
        if (!notified)
            b_sleep_ms(10);
    }
    b_check(notified, "phase 5: thread 2 reached RawMonitorWait");
    pthread_barrier_wait(&bar); /* thread 2 woke up (or gave up) */
    b_check(waiter_state == 2 && t2_waited_ms < 9000,
            "phase 5: RawMonitorNotifyAll woke the waiter (it waited %lld ms of a 10000 ms timeout)",
            t2_waited_ms);

    set_phase(6);
    check_names();
    b_pi->RawMonitorDestroy(mon_a);
    b_pi->RawMonitorDestroy(mon_q);
    b_pi->RawMonitorDestroy(mon_w);
    b_summary(AGENT);
    b_touch(".done");
}

static void contend(JVMPI_RawMonitor m, int ph)
{
    pthread_barrier_wait(&bar); /* thread 1 holds m */
    long long t0 = b_now_ms();
    b_pi->RawMonitorEnter(m);
    t2_blocked_ms[ph] = b_now_ms() - t0;
    b_pi->RawMonitorExit(m);
    pthread_barrier_wait(&bar);
}

static void thread2(void *arg)
{
    env2 = b_self_env();
    pthread_barrier_wait(&bar);
    contend(mon_a, 1);
    contend(mon_q, 2);
    contend(mon_a, 3);

    pthread_barrier_wait(&bar); /* phase 5 */
    b_pi->RawMonitorEnter(mon_w);
    waiter_state = 1;
    long long t0 = b_now_ms();
    b_pi->RawMonitorWait(mon_w, 10000);
    t2_waited_ms = b_now_ms() - t0;
    waiter_state = 2;
    b_pi->RawMonitorExit(mon_w);
    pthread_barrier_wait(&bar);
}

static void init_done(void)
{
    mon_a = b_pi->RawMonitorCreate("lockA");
    mon_q = b_pi->RawMonitorCreate("_quiet");
    mon_w = b_pi->RawMonitorCreate("_wmon");
    b_check(mon_a && mon_q && mon_w && mon_a != mon_q && mon_q != mon_w && mon_a != mon_w,
            "RawMonitorCreate gives three distinct monitors");
    pthread_barrier_init(&bar, NULL, 2);
    jint r1 = b_pi->CreateSystemThread("b-raw-1", JVMPI_NORMAL_PRIORITY, thread1);
    jint r2 = b_pi->CreateSystemThread("b-raw-2", JVMPI_NORMAL_PRIORITY, thread2);
    if (!b_check(r1 == JNI_OK && r2 == JNI_OK, "CreateSystemThread at JVM_INIT_DONE returns JNI_OK (%d, %d)",
                 (int)r1, (int)r2))
        b_touch(".done");
}

static void dispatch(JVMPI_Event *ev)
{
    if (ev->event_type == JVMPI_EVENT_JVM_INIT_DONE)
        init_done();
    else
        record_event(ev);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved);

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (b_setup(vm, options, AGENT) != JNI_OK)
        return JNI_ERR;
    b_pi->NotifyEvent = dispatch;
    static const jint events[] = {
        JVMPI_EVENT_JVM_INIT_DONE,
        JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER,
        JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED,
        JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT,
    };
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        b_check(b_pi->EnableEvent(events[i], NULL) == JVMPI_SUCCESS, "EnableEvent(%d)", (int)events[i]);
    return JNI_OK;
}
