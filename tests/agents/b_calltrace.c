/*
 * b_calltrace - GetCallTrace line numbers and methods (it_b_calltrace.sh, with B_CallTrace).
 *
 * - A sampler made with CreateSystemThread waits for OUTFILE.ready, then
 *   samples thread "b-target", which spins in level3 <- level2 <- level1 <-
 *   Target.run, and thread "b-waiter", blocked in Object.wait under
 *   waitLevel2 <- waitLevel1 <- Waiter.run.  Each frame's method is named the
 *   way a legacy agent does it: GetMethodClass, then RequestEvent(CLASS_LOAD)
 *   for that class, whose event lists the methods with their IDs.
 * - In the CLASS_LOAD handler of B_CallTrace$Target, which runs on the main
 *   thread at `new Target()`, the current thread's trace is taken: main at
 *   that line on top; depth 0 gives no frames; an env_id that is no thread's
 *   gives no frames.
 * - Thread "b-brief" has ended before the sampler starts: its trace has no
 *   frames, and the layer prints no line for it (the script checks).
 * Options: OUTFILE,spin=N,l3=N,l2=N,l1=N,wait=N,w2=N,w1=N,newt=N with the
 * LINE_* constants of B_CallTrace.java.
 */
#include "b_common.h"

#define AGENT "b_calltrace"
#define DEPTH 10
#define NATIVE_LINE (-3)

static int line_spin, line_l3, line_l2, line_l1, line_wait, line_w2, line_w1, line_newt;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static JNIEnv *target_env, *waiter_env, *brief_env;
static int brief_env_reused;

/* Methods of B_CallTrace, from its (live) CLASS_LOAD. */
#define MAX_METHODS 64
static struct {
    char name[64];
    jmethodID id;
} main_methods[MAX_METHODS];
static int n_main_methods;

/* What a requested CLASS_LOAD must answer; one per requesting thread. */
typedef struct {
    jobjectID cls;
    jmethodID mid;
    int delivered;
    int found;
    jint event_type;
    char cname[256];
    char mname[128];
} lookup_t;
static _Thread_local lookup_t *cur_lookup;

static int get_int_opt(const char *key)
{
    const char *v = b_opt(key);
    return v ? atoi(v) : -1000;
}

/* Names the method of a frame, as a legacy agent does. */
static int resolve(jmethodID mid, lookup_t *lk)
{
    memset(lk, 0, sizeof *lk);
    lk->mid = mid;
    lk->cls = b_pi->GetMethodClass(mid);
    if (!lk->cls) {
        b_fail("GetMethodClass(%p) gave NULL", (void *)mid);
        return 0;
    }
    cur_lookup = lk;
    jint rc = b_pi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, lk->cls);
    cur_lookup = NULL;
    if (rc != JVMPI_SUCCESS || !lk->delivered) {
        b_fail("RequestEvent(CLASS_LOAD, %p) returned %d, event delivered on this thread before return: %s",
               (void *)lk->cls, (int)rc, lk->delivered ? "yes" : "no");
        return 0;
    }
    if (lk->event_type != (JVMPI_EVENT_CLASS_LOAD | JVMPI_REQUESTED_EVENT))
        b_fail("requested CLASS_LOAD came with event_type 0x%x", (unsigned)lk->event_type);
    if (!lk->found)
        b_fail("method %p is not among the methods of %s, the class GetMethodClass gave", (void *)mid, lk->cname);
    return lk->found;
}

static void dump_trace(const char *what, const JVMPI_CallTrace *t)
{
    b_log("%s: %d frames", what, (int)t->num_frames);
    for (int i = 0; i < t->num_frames && i < DEPTH; i++) {
        lookup_t lk;
        resolve(t->frames[i].method_id, &lk);
        b_log("  #%d %s.%s line %d", i, lk.cname, lk.mname, (int)t->frames[i].lineno);
    }
}

static int expect_frame(const char *what, const JVMPI_CallTrace *t, int i, const char *cls, const char *meth,
                        int line)
{
    if (i >= t->num_frames)
        return b_check(0, "%s: frame %d is %s.%s line %d (trace has only %d frames)", what, i, cls, meth, line,
                       (int)t->num_frames);
    lookup_t lk;
    resolve(t->frames[i].method_id, &lk);
    return b_check(lk.found && strcmp(lk.cname, cls) == 0 && strcmp(lk.mname, meth) == 0 &&
                       t->frames[i].lineno == line,
                   "%s: frame %d is %s.%s line %d (got %s.%s line %d)", what, i, cls, meth, line, lk.cname,
                   lk.mname, (int)t->frames[i].lineno);
}

static void sample_target(void)
{
    JVMPI_CallFrame frames[DEPTH];
    JVMPI_CallTrace t = { target_env, -1, frames };

    b_pi->SuspendThread(target_env);
    b_pi->GetCallTrace(&t, DEPTH);
    b_pi->ResumeThread(target_env);
    dump_trace("b-target, suspended, depth 10", &t);
    b_check(t.env_id == target_env, "GetCallTrace leaves env_id alone");
    /* Target.run is the thread's first frame: the VM calls run() itself. */
    b_check(t.num_frames >= 4 && t.num_frames <= DEPTH, "b-target: 4 to %d frames (%d)", DEPTH, (int)t.num_frames);
    expect_frame("b-target", &t, 0, "B_CallTrace", "level3", line_spin);
    expect_frame("b-target", &t, 1, "B_CallTrace", "level2", line_l3);
    expect_frame("b-target", &t, 2, "B_CallTrace", "level1", line_l2);
    expect_frame("b-target", &t, 3, "B_CallTrace$Target", "run", line_l1);

    /* Depth limits the frames, callee first. */
    JVMPI_CallFrame frames2[DEPTH];
    JVMPI_CallTrace t2 = { target_env, -1, frames2 };
    b_pi->SuspendThread(target_env);
    b_pi->GetCallTrace(&t2, 2);
    b_pi->ResumeThread(target_env);
    b_check(t2.num_frames == 2, "b-target, depth 2: 2 frames (%d)", (int)t2.num_frames);
    expect_frame("b-target, depth 2", &t2, 0, "B_CallTrace", "level3", line_spin);
    expect_frame("b-target, depth 2", &t2, 1, "B_CallTrace", "level2", line_l3);

    /* The loop is compiled after a while; the line must stay the same. */
    int good = 0;
    jint last_line = 0;
    jmethodID level3 = frames[0].method_id;
    for (int i = 0; i < 10; i++) {
        JVMPI_CallTrace t3 = { target_env, -1, frames2 };
        b_pi->SuspendThread(target_env);
        b_pi->GetCallTrace(&t3, DEPTH);
        b_pi->ResumeThread(target_env);
        if (t3.num_frames >= 4 && frames2[0].method_id == level3 && frames2[0].lineno == line_spin)
            good++;
        last_line = t3.num_frames > 0 ? frames2[0].lineno : -1000;
        b_sleep_ms(50);
    }
    b_check(good == 10, "b-target: 10 samples over 0.5 s all in level3 at line %d (%d were; last line %d)",
            line_spin, good, (int)last_line);

    /* Without suspending it first. */
    JVMPI_CallTrace t4 = { target_env, -1, frames2 };
    b_pi->GetCallTrace(&t4, DEPTH);
    b_check(t4.num_frames >= 4, "b-target, not suspended: at least 4 frames (%d)", (int)t4.num_frames);
    expect_frame("b-target, not suspended", &t4, 0, "B_CallTrace", "level3", line_spin);
}

static void sample_waiter(void)
{
    JVMPI_CallFrame frames[DEPTH];
    JVMPI_CallTrace t = { waiter_env, -1, frames };
    b_pi->SuspendThread(waiter_env);
    b_pi->GetCallTrace(&t, DEPTH);
    b_pi->ResumeThread(waiter_env);
    dump_trace("b-waiter, suspended, depth 10", &t);
    if (!b_check(t.num_frames >= 4, "b-waiter: at least 4 frames (%d)", (int)t.num_frames))
        return;

    /* The innermost frame of a thread in Object.wait is a native method on
     * every JDK: Object.wait(long) itself on JDK 17, Object.wait0(long) under
     * Java wrappers wait(long) and wait() from JDK 21 on.  So frame 0 must be
     * native (-3); the Java wrappers between it and waitLevel2 (none on 17,
     * two on 25) must carry real line numbers. */
    lookup_t lk;
    resolve(frames[0].method_id, &lk);
    b_check(strcmp(lk.cname, "java.lang.Object") == 0 && (strcmp(lk.mname, "wait") == 0 ||
                                                          strcmp(lk.mname, "wait0") == 0),
            "b-waiter: frame 0 is java.lang.Object.wait or .wait0 (got %s.%s)", lk.cname, lk.mname);
    b_check(frames[0].lineno == NATIVE_LINE, "b-waiter: the native frame 0 has line number -3 (got %d)",
            (int)frames[0].lineno);
    int k = 1;
    for (; k < t.num_frames; k++) {
        resolve(frames[k].method_id, &lk);
        if (strcmp(lk.cname, "java.lang.Object") != 0)
            break;
        b_check(frames[k].lineno > 0, "b-waiter: Java frame %d (Object.%s) has a line number (%d)", k, lk.mname,
                (int)frames[k].lineno);
    }
    b_check(k <= 3, "b-waiter: at most 3 frames of java.lang.Object above waitLevel2 (%d)", k);
    expect_frame("b-waiter", &t, k, "B_CallTrace", "waitLevel2", line_wait);
    expect_frame("b-waiter", &t, k + 1, "B_CallTrace", "waitLevel1", line_w2);
    expect_frame("b-waiter", &t, k + 2, "B_CallTrace$Waiter", "run", line_w1);
}

static void sampler(void *arg)
{
    if (!b_check(b_wait_file(".ready", 60000), "the Java program became ready")) {
        b_touch(".done");
        return;
    }
    pthread_mutex_lock(&lock);
    int known = target_env && waiter_env;
    pthread_mutex_unlock(&lock);
    if (b_check(known, "THREAD_START gave the JNIEnv * of b-target and b-waiter")) {
        sample_target();
        sample_waiter();
    }
    pthread_mutex_lock(&lock);
    JNIEnv *brief = brief_env_reused ? NULL : brief_env;
    pthread_mutex_unlock(&lock);
    JVMPI_CallFrame bframes[DEPTH];
    JVMPI_CallTrace tb = { brief, 99, bframes };
    if (brief)
        b_pi->GetCallTrace(&tb, DEPTH);
    else
        b_log("b-brief: %s", brief_env ? "its JNIEnv * went to a later thread, not asked" : "no THREAD_START");
    b_check(!brief || tb.num_frames == 0, "GetCallTrace of b-brief, which has ended, gives num_frames 0 (%d)",
            (int)tb.num_frames);
    /* This agent thread runs no Java code of its own. */
    JVMPI_CallFrame frames[DEPTH];
    JVMPI_CallTrace self = { b_self_env(), -1, frames };
    b_pi->GetCallTrace(&self, DEPTH);
    b_log("the sampler's own trace has %d frames", (int)self.num_frames);
    b_summary(AGENT);
    b_touch(".done");
}

/* In the CLASS_LOAD of B_CallTrace$Target, on the thread that loads it. */
static void current_thread_checks(JNIEnv *env)
{
    JVMPI_CallFrame frames[DEPTH];
    JVMPI_CallTrace t = { env, -1, frames };
    b_pi->GetCallTrace(&t, DEPTH);
    jmethodID main_id = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n_main_methods; i++)
        if (strcmp(main_methods[i].name, "main") == 0)
            main_id = main_methods[i].id;
    pthread_mutex_unlock(&lock);
    b_log("current thread at CLASS_LOAD B_CallTrace$Target: %d frames, frame 0 method %p line %d", (int)t.num_frames,
          t.num_frames > 0 ? (void *)frames[0].method_id : NULL, t.num_frames > 0 ? (int)frames[0].lineno : 0);
    b_check(main_id != NULL, "CLASS_LOAD of B_CallTrace listed main");
    b_check(t.num_frames >= 1 && t.num_frames <= DEPTH && frames[0].method_id == main_id &&
                frames[0].lineno == line_newt,
            "GetCallTrace of the current thread in a CLASS_LOAD handler: B_CallTrace.main line %d on top", line_newt);

    JVMPI_CallTrace t0 = { env, 99, frames };
    b_pi->GetCallTrace(&t0, 0);
    b_check(t0.num_frames == 0, "GetCallTrace with depth 0 gives num_frames 0 (%d)", (int)t0.num_frames);

    /* Readable memory that is no thread's JNIEnv. */
    static void *not_an_env[64];
    JVMPI_CallTrace tu = { (JNIEnv *)not_an_env, 99, frames };
    b_pi->GetCallTrace(&tu, DEPTH);
    b_check(tu.num_frames == 0, "GetCallTrace with an unknown env_id gives num_frames 0 (%d)", (int)tu.num_frames);
}

static void class_load(JVMPI_Event *ev)
{
    const char *name = ev->u.class_load.class_name;
    if (ev->event_type & JVMPI_REQUESTED_EVENT) {
        lookup_t *lk = cur_lookup;
        if (!lk) {
            b_fail("requested CLASS_LOAD of %s arrived on a thread that did not ask for it", name ? name : "?");
            return;
        }
        if (ev->u.class_load.class_id != lk->cls)
            b_fail("requested CLASS_LOAD of %p came with class_id %p (%s)", (void *)lk->cls,
                   (void *)ev->u.class_load.class_id, name ? name : "?");
        lk->delivered = 1;
        lk->event_type = ev->event_type;
        snprintf(lk->cname, sizeof lk->cname, "%s", name ? name : "(null)");
        for (int i = 0; i < ev->u.class_load.num_methods; i++) {
            const JVMPI_Method *m = &ev->u.class_load.methods[i];
            if (m->method_id == lk->mid) {
                lk->found = 1;
                snprintf(lk->mname, sizeof lk->mname, "%s", m->method_name ? m->method_name : "(null)");
            }
        }
        return;
    }
    if (!name)
        return;
    if (strcmp(name, "B_CallTrace") == 0) {
        pthread_mutex_lock(&lock);
        for (int i = 0; i < ev->u.class_load.num_methods && n_main_methods < MAX_METHODS; i++) {
            snprintf(main_methods[n_main_methods].name, sizeof main_methods[0].name, "%s",
                     ev->u.class_load.methods[i].method_name);
            main_methods[n_main_methods++].id = ev->u.class_load.methods[i].method_id;
        }
        pthread_mutex_unlock(&lock);
    } else if (strcmp(name, "B_CallTrace$Target") == 0) {
        current_thread_checks(ev->env_id);
    }
}

static void notify_event(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        class_load(ev);
        break;
    case JVMPI_EVENT_THREAD_START: {
        const char *n = ev->u.thread_start.thread_name;
        pthread_mutex_lock(&lock);
        if (n && strcmp(n, "b-target") == 0)
            target_env = ev->u.thread_start.thread_env_id;
        if (n && strcmp(n, "b-waiter") == 0)
            waiter_env = ev->u.thread_start.thread_env_id;
        if (brief_env && ev->u.thread_start.thread_env_id == brief_env)
            brief_env_reused = 1;
        if (n && strcmp(n, "b-brief") == 0)
            brief_env = ev->u.thread_start.thread_env_id;
        pthread_mutex_unlock(&lock);
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
    line_spin = get_int_opt("spin");
    line_l3 = get_int_opt("l3");
    line_l2 = get_int_opt("l2");
    line_l1 = get_int_opt("l1");
    line_wait = get_int_opt("wait");
    line_w2 = get_int_opt("w2");
    line_w1 = get_int_opt("w1");
    line_newt = get_int_opt("newt");
    if (line_spin <= 0 || line_l3 <= 0 || line_l2 <= 0 || line_l1 <= 0 || line_wait <= 0 || line_w2 <= 0 ||
        line_w1 <= 0 || line_newt <= 0) {
        fprintf(stderr, AGENT ": options must give spin,l3,l2,l1,wait,w2,w1,newt\n");
        return JNI_ERR;
    }
    b_pi->NotifyEvent = notify_event;
    b_check(b_pi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL) == JVMPI_SUCCESS, "EnableEvent(CLASS_LOAD)");
    b_check(b_pi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL) == JVMPI_SUCCESS, "EnableEvent(THREAD_START)");
    b_check(b_pi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL) == JVMPI_SUCCESS, "EnableEvent(JVM_INIT_DONE)");
    return JNI_OK;
}
