/*
 * d_mon_events - a legacy agent checking the Java monitor events of
 * D_MonEvents (tests/java/D_MonEvents.java): MONITOR_CONTENDED_ENTER,
 * _ENTERED and _EXIT, MONITOR_WAIT and _WAITED, Thread.sleep as a wait on
 * NULL.  Options: <output file>.  Events are recorded with the phase the
 * program announced; finish() checks them.
 *
 * CONTENDED_EXIT: JVM TI has no such event and the layer emulates it (see
 * docs): the exit of the thread that held the monitor while another blocked
 * on it is sent just before that other thread's CONTENDED_ENTERED, with
 * env_id naming the thread that left.  So this agent expects, per
 * contended monitor, one EXIT for each thread that left it with another
 * thread blocked on it (the holder, then each entering thread that still
 * had one behind it), each right before the next thread's ENTERED.
 */
#include "b_common.h"

#define MAX_EVENTS 4096
#define ROLES 8

typedef struct {
    jint type;
    JNIEnv *env;
    jobjectID obj;
    jlong timeout;
    int phase;
} ev_rec;

static ev_rec evs[MAX_EVENTS];
static int n_evs;
static int cur_phase;
static JNIEnv *roles[ROLES];
static jobjectID marks[4];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void JNICALL notify_event(JVMPI_Event *ev)
{
    pthread_mutex_lock(&lock);
    if (n_evs < MAX_EVENTS) {
        ev_rec *r = &evs[n_evs++];
        r->type = ev->event_type;
        r->env = ev->env_id;
        r->obj = ev->u.monitor.object;
        r->timeout = (ev->event_type == JVMPI_EVENT_MONITOR_WAIT || ev->event_type == JVMPI_EVENT_MONITOR_WAITED)
                         ? ev->u.monitor_wait.timeout
                         : 0;
        r->phase = cur_phase;
    }
    pthread_mutex_unlock(&lock);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (b_setup(vm, options, "d_mon_events") != JNI_OK)
        return JNI_ERR;
    b_pi->NotifyEvent = notify_event;
    static const jint types[] = {JVMPI_EVENT_MONITOR_CONTENDED_ENTER, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED,
                                 JVMPI_EVENT_MONITOR_CONTENDED_EXIT, JVMPI_EVENT_MONITOR_WAIT,
                                 JVMPI_EVENT_MONITOR_WAITED};
    for (int i = 0; i < 5; i++)
        b_check(b_pi->EnableEvent(types[i], NULL) == JVMPI_SUCCESS, "EnableEvent(%d)", (int)types[i]);
    return JNI_OK;
}

JNIEXPORT void JNICALL Java_D_1MonEvents_register(JNIEnv *env, jclass cls, jint role)
{
    if (role >= 0 && role < ROLES)
        roles[role] = env;
}

JNIEXPORT void JNICALL Java_D_1MonEvents_mark(JNIEnv *env, jclass cls, jobject obj, jint which)
{
    marks[which] = b_pi->jobject2jobjectID(obj);
    b_check(marks[which] != NULL, "lock%d has an object ID", (int)which);
}

static void check_phase1(void);
static void check_phase2(void);
static void check_phase3(void);
static void check_phase4(void);

/* Each phase is checked when the next begins: threads of a phase have
 * ended by then, and a later thread may get the same JNIEnv *. */
JNIEXPORT void JNICALL Java_D_1MonEvents_phase(JNIEnv *env, jclass cls, jint n)
{
    pthread_mutex_lock(&lock);
    switch (cur_phase) {
    case 1: check_phase1(); break;
    case 2: check_phase2(); break;
    case 3: check_phase3(); break;
    case 4: check_phase4(); break;
    }
    cur_phase = n;
    pthread_mutex_unlock(&lock);
}

JNIEXPORT jint JNICALL Java_D_1MonEvents_enters(JNIEnv *env, jclass cls, jint which)
{
    int n = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n_evs; i++)
        if (evs[i].type == JVMPI_EVENT_MONITOR_CONTENDED_ENTER && evs[i].obj == marks[which])
            n++;
    pthread_mutex_unlock(&lock);
    return n;
}

/* The contention events on marked object `which`, in order. */
static int select_contention(int which, ev_rec *out, int max)
{
    int n = 0;
    for (int i = 0; i < n_evs && n < max; i++) {
        jint t = evs[i].type;
        if ((t == JVMPI_EVENT_MONITOR_CONTENDED_ENTER || t == JVMPI_EVENT_MONITOR_CONTENDED_ENTERED ||
             t == JVMPI_EVENT_MONITOR_CONTENDED_EXIT) && evs[i].obj == marks[which])
            out[n++] = evs[i];
    }
    return n;
}

static const char *tname(jint t)
{
    switch (t) {
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER: return "ENTER";
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED: return "ENTERED";
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT: return "EXIT";
    case JVMPI_EVENT_MONITOR_WAIT: return "WAIT";
    case JVMPI_EVENT_MONITOR_WAITED: return "WAITED";
    }
    return "?";
}

static void dump_seq(const char *what, const ev_rec *s, int n)
{
    for (int i = 0; i < n; i++) {
        int role = -1;
        for (int r = 0; r < ROLES; r++)
            if (roles[r] == s[i].env)
                role = r;
        b_log("  %s[%d] %s by role %d", what, i, tname(s[i].type), role);
    }
}

static void check_phase1(void)
{
    ev_rec s[16];
    int n = select_contention(1, s, 16);
    dump_seq("lock1", s, n);
    /* ENTER(2), EXIT(1), ENTERED(2) */
    b_check(n == 3, "phase 1: 3 contention events on lock1 (got %d)", n);
    if (n != 3)
        return;
    b_check(s[0].type == JVMPI_EVENT_MONITOR_CONTENDED_ENTER && s[0].env == roles[2],
            "phase 1: CONTENDED_ENTER by the blocked thread");
    b_check(s[1].type == JVMPI_EVENT_MONITOR_CONTENDED_EXIT && s[1].env == roles[1],
            "phase 1: CONTENDED_EXIT names the holder, before the ENTERED");
    b_check(s[2].type == JVMPI_EVENT_MONITOR_CONTENDED_ENTERED && s[2].env == roles[2],
            "phase 1: CONTENDED_ENTERED by the blocked thread");
}

static void check_phase2(void)
{
    ev_rec s[16];
    int n = select_contention(2, s, 16);
    dump_seq("lock2", s, n);
    /* ENTER(4), ENTER(5), EXIT(3), ENTERED(x), EXIT(x), ENTERED(y) */
    b_check(n == 6, "phase 2: 6 contention events on lock2 (got %d)", n);
    if (n != 6)
        return;
    b_check(s[0].type == JVMPI_EVENT_MONITOR_CONTENDED_ENTER && s[0].env == roles[4] &&
                s[1].type == JVMPI_EVENT_MONITOR_CONTENDED_ENTER && s[1].env == roles[5],
            "phase 2: two CONTENDED_ENTERs, in the order the threads blocked");
    b_check(s[2].type == JVMPI_EVENT_MONITOR_CONTENDED_EXIT && s[2].env == roles[3],
            "phase 2: first CONTENDED_EXIT names the holder");
    JNIEnv *x = s[3].env, *y = s[5].env;
    b_check(s[3].type == JVMPI_EVENT_MONITOR_CONTENDED_ENTERED && s[5].type == JVMPI_EVENT_MONITOR_CONTENDED_ENTERED &&
                x != y && (x == roles[4] || x == roles[5]) && (y == roles[4] || y == roles[5]),
            "phase 2: each blocked thread gets one CONTENDED_ENTERED");
    b_check(s[4].type == JVMPI_EVENT_MONITOR_CONTENDED_EXIT && s[4].env == x,
            "phase 2: the first thread in left with the second blocked: its CONTENDED_EXIT comes before the second ENTERED");
}

/* Wait events of the main thread in a phase, on obj (NULL: sleeps).  Other
 * waits are left out: Thread.join waits on the Thread object. */
static int select_waits(int phase, jobjectID obj, ev_rec *out, int max)
{
    int n = 0;
    for (int i = 0; i < n_evs && n < max; i++)
        if ((evs[i].type == JVMPI_EVENT_MONITOR_WAIT || evs[i].type == JVMPI_EVENT_MONITOR_WAITED) &&
            evs[i].phase == phase && evs[i].env == roles[0] && evs[i].obj == obj)
            out[n++] = evs[i];
    return n;
}

static void check_phase3(void)
{
    ev_rec s[16];
    int n = select_waits(3, marks[3], s, 16);
    b_check(n == 4, "phase 3: main sent 4 wait events on lock3 (got %d)", n);
    if (n != 4)
        return;
    b_check(s[0].type == JVMPI_EVENT_MONITOR_WAIT && s[0].obj == marks[3] && s[0].timeout == 300,
            "phase 3: MONITOR_WAIT on lock3 with timeout 300 (got %lld)", (long long)s[0].timeout);
    b_check(s[1].type == JVMPI_EVENT_MONITOR_WAITED && s[1].obj == marks[3] && s[1].timeout >= 250 &&
                s[1].timeout < 10000,
            "phase 3: MONITOR_WAITED on lock3 after the 300 ms timeout, timeout = time waited (got %lld)",
            (long long)s[1].timeout);
    b_check(s[2].type == JVMPI_EVENT_MONITOR_WAIT && s[2].obj == marks[3] && s[2].timeout == 0,
            "phase 3: MONITOR_WAIT on lock3 for ever: timeout 0 (got %lld)", (long long)s[2].timeout);
    b_check(s[3].type == JVMPI_EVENT_MONITOR_WAITED && s[3].obj == marks[3] && s[3].timeout >= 50,
            "phase 3: MONITOR_WAITED after the notify (waited %lld ms)", (long long)s[3].timeout);
    /* the notifier's Thread.sleep(100) in this phase: a NULL wait of its own */
    int notifier_sleeps = 0;
    for (int i = 0; i < n_evs; i++)
        if (evs[i].phase == 3 && evs[i].env == roles[6] && evs[i].type == JVMPI_EVENT_MONITOR_WAIT &&
            evs[i].obj == NULL && evs[i].timeout == 100)
            notifier_sleeps++;
    b_check(notifier_sleeps == 1, "phase 3: the notifier's Thread.sleep(100) seen in its own thread (%d)",
            notifier_sleeps);
}

static void check_phase4(void)
{
    ev_rec s[16];
    int n = select_waits(4, NULL, s, 16);
    b_check(n == 2, "phase 4: Thread.sleep(120) sent 2 wait events (got %d)", n);
    if (n != 2)
        return;
    b_check(s[0].type == JVMPI_EVENT_MONITOR_WAIT && s[0].obj == NULL && s[0].timeout == 120,
            "phase 4: MONITOR_WAIT with object NULL and timeout 120 (got %lld)", (long long)s[0].timeout);
    b_check(s[1].type == JVMPI_EVENT_MONITOR_WAITED && s[1].obj == NULL && s[1].timeout >= 110 &&
                s[1].timeout < 10000,
            "phase 4: MONITOR_WAITED with object NULL after the sleep (waited %lld ms)", (long long)s[1].timeout);
}

JNIEXPORT void JNICALL Java_D_1MonEvents_finish(JNIEnv *env, jclass cls)
{
    pthread_mutex_lock(&lock);
    b_check(cur_phase == 5, "all four phases ran and were checked");
    /* every event had a thread */
    int no_env = 0;
    for (int i = 0; i < n_evs; i++)
        if (evs[i].env == NULL)
            no_env++;
    b_check(no_env == 0, "every monitor event names a thread (%d do not)", no_env);
    pthread_mutex_unlock(&lock);
    b_summary("d_mon_events");
}
