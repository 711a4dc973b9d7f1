/*
 * d_methods - METHOD_ENTRY, METHOD_ENTRY2 and METHOD_EXIT, with D_Methods.
 *
 * Options: out=FILE.  Everything is enabled in JVM_OnLoad (so the switch
 * made before VM init is exercised too).  Checked at JVM_SHUT_DOWN:
 *  - every known method of D_Methods got exactly as many entries (both
 *    kinds) and exits as the program made calls, also those that left by an
 *    exception (thrower: 2N, directly and through passesThrough);
 *  - each thread's events came with that thread's env_id (staticCallee: N
 *    on main, M on d-worker);
 *  - ENTRY2 carries NULL for static methods and, for the instance method
 *    and the constructor, the ID that jobject2jobjectID gives the receiver
 *    (asked after the constructor ran, so the ID ENTRY2 made is reused);
 *  - ENTRY2 of D_Methods$Point's constructor, run hot on objects that never
 *    leave their loop, names an object every time (the JIT must not have
 *    replaced it by its fields where the receiver is read);
 *  - in the program's native receiverIs, GetCallTrace gives the native
 *    frame line -3;
 *  - after methodEventsOff(), no more method events, and the JIT works
 *    again: a method first run hot afterwards gets a COMPILED_METHOD_LOAD;
 *    hotWhileOn, run as hot while the events were on, got one then with the
 *    layer's class rewriter (option jit=on), and none with JVM TI's method
 *    events (jit=off: HotSpot compiles nothing a thread in interpreter-only
 *    mode asks for).
 */
#include "c_common.h"

enum { M_STATIC, M_INSTANCE, M_THROWER, M_PASSES, M_HOT_ON, M_HOT_OFF, M_INIT, M_COUNT };
static const char *const names[M_COUNT] = {"staticCallee", "instanceCallee", "thrower", "passesThrough",
                                           "hotWhileOn", "hotAfterOff", "<init>"};
static jmethodID ids[M_COUNT];
enum { T_MAIN, T_WORKER, T_OTHER, T_COUNT };
static JNIEnv *main_env, *worker_env;

/* counts[method][thread][0 = ENTRY, 1 = ENTRY2, 2 = EXIT] */
static long counts[M_COUNT][T_COUNT][3];
static long bad_receiver, bad_static_receiver, events_after_off;
static jmethodID point_init;                 /* D_Methods$Point.<init> */
static long point_entries, point_no_receiver; /* its ENTRY2s, and those with obj_id NULL */
static jobjectID receiver_seen_init;   /* ENTRY2 obj_id of D_Methods.<init> */
static jobjectID receiver_id;          /* jobject2jobjectID of the receiver */
static int off;                        /* methodEventsOff() ran */
static int compiled_on, compiled_off;  /* COMPILED_METHOD_LOAD of hotWhileOn (while on) / hotAfterOff */
static int jit_while_on;               /* option jit=on: the JIT compiles while the events are on */

static int which(jmethodID m)
{
    for (int i = 0; i < M_COUNT; i++)
        if (m != NULL && __atomic_load_n(&ids[i], __ATOMIC_ACQUIRE) == m)
            return i;
    return -1;
}

static int thread_of(JNIEnv *env)
{
    if (env == __atomic_load_n(&main_env, __ATOMIC_ACQUIRE))
        return T_MAIN;
    if (env == __atomic_load_n(&worker_env, __ATOMIC_ACQUIRE))
        return T_WORKER;
    return T_OTHER;
}

static void method_event(JVMPI_Event *ev, int kind)
{
    jmethodID m = kind == 1 ? ev->u.method_entry2.method_id : ev->u.method.method_id;
    if (kind == 1 && m != NULL && m == __atomic_load_n(&point_init, __ATOMIC_ACQUIRE) &&
        !__atomic_load_n(&off, __ATOMIC_ACQUIRE)) {
        __atomic_add_fetch(&point_entries, 1, __ATOMIC_SEQ_CST);
        if (ev->u.method_entry2.obj_id == NULL)
            __atomic_add_fetch(&point_no_receiver, 1, __ATOMIC_SEQ_CST);
    }
    int w = which(m);
    if (w < 0)
        return;
    if (__atomic_load_n(&off, __ATOMIC_ACQUIRE)) {
        __atomic_add_fetch(&events_after_off, 1, __ATOMIC_SEQ_CST);
        return;
    }
    __atomic_add_fetch(&counts[w][thread_of(ev->env_id)][kind], 1, __ATOMIC_SEQ_CST);
    if (kind != 1)
        return;
    jobjectID obj = ev->u.method_entry2.obj_id;
    if (w == M_INIT) {
        if (receiver_seen_init == NULL)
            receiver_seen_init = obj;
    } else if (w == M_INSTANCE) {
        if (obj == NULL || obj != receiver_id)
            C_FAIL_SOME(bad_receiver, "ENTRY2 of instanceCallee: obj_id %p, the receiver's ID is %p", (void *)obj,
                        (void *)receiver_id);
    } else if (obj != NULL) {
        C_FAIL_SOME(bad_static_receiver, "ENTRY2 of static %s: obj_id %p, expected NULL", names[w], (void *)obj);
    }
}

static void check_counts(int w, int t, long want, const char *tname)
{
    c_check(counts[w][t][0] == want, "%s on %s: %ld METHOD_ENTRY (expected %ld)", names[w], tname, counts[w][t][0], want);
    c_check(counts[w][t][1] == want, "%s on %s: %ld METHOD_ENTRY2 (expected %ld)", names[w], tname, counts[w][t][1],
            want);
    c_check(counts[w][t][2] == want, "%s on %s: %ld METHOD_EXIT (expected %ld)", names[w], tname, counts[w][t][2], want);
}

static void finish(void)
{
    const long N = 1000, M = 300;
    check_counts(M_STATIC, T_MAIN, N, "main");
    check_counts(M_STATIC, T_WORKER, M, "d-worker");
    check_counts(M_INSTANCE, T_MAIN, N, "main");
    check_counts(M_THROWER, T_MAIN, 2 * N, "main");
    check_counts(M_PASSES, T_MAIN, N, "main");
    check_counts(M_HOT_ON, T_MAIN, 20000, "main");
    check_counts(M_INIT, T_MAIN, 1, "main");
    for (int w = 0; w < M_COUNT; w++) {
        long other = counts[w][T_OTHER][0] + counts[w][T_OTHER][1] + counts[w][T_OTHER][2];
        c_check(other == 0, "%s: %ld events with an env_id of neither calling thread", names[w], other);
    }
    c_check(receiver_id != NULL && receiver_seen_init == receiver_id,
            "ENTRY2 of the constructor named the receiver %p; jobject2jobjectID says %p", (void *)receiver_seen_init,
            (void *)receiver_id);
    c_check(bad_receiver == 0, "ENTRY2 of instanceCallee named the receiver every time (%ld did not)", bad_receiver);
    c_check(bad_static_receiver == 0, "ENTRY2 of static methods had obj_id NULL (%ld did not)", bad_static_receiver);
    c_check(point_entries == 200000, "D_Methods$Point.<init>: %ld METHOD_ENTRY2 (expected 200000)", point_entries);
    c_check(point_no_receiver == 0, "ENTRY2 of D_Methods$Point.<init> named its object every time (%ld had NULL)",
            point_no_receiver);
    c_check(off, "methodEventsOff() ran");
    c_check(events_after_off == 0, "no method event after DisableEvent (got %ld)", events_after_off);
    if (jit_while_on)
        c_check(compiled_on, "hotWhileOn was compiled while the method events were on (jit=on)");
    else
        c_check(!compiled_on, "hotWhileOn was not compiled while the method events were on (jit=off)");
    c_check(compiled_off, "hotAfterOff was compiled after the method events went off (the JIT works again)");
    c_summary("d_methods");
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_METHOD_ENTRY:
        method_event(ev, 0);
        break;
    case JVMPI_EVENT_METHOD_ENTRY2:
        method_event(ev, 1);
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        method_event(ev, 2);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        if (c_streq(ev->u.class_load.class_name, "D_Methods")) {
            for (int i = 0; i < ev->u.class_load.num_methods; i++) {
                JVMPI_Method *m = &ev->u.class_load.methods[i];
                for (int w = 0; w < M_COUNT; w++)
                    if (c_streq(m->method_name, names[w]))
                        __atomic_store_n(&ids[w], m->method_id, __ATOMIC_RELEASE);
            }
        }
        if (c_streq(ev->u.class_load.class_name, "D_Methods$Point")) {
            for (int i = 0; i < ev->u.class_load.num_methods; i++)
                if (c_streq(ev->u.class_load.methods[i].method_name, "<init>"))
                    __atomic_store_n(&point_init, ev->u.class_load.methods[i].method_id, __ATOMIC_RELEASE);
        }
        break;
    case JVMPI_EVENT_THREAD_START:
        if (c_streq(ev->u.thread_start.thread_name, "main"))
            __atomic_store_n(&main_env, ev->u.thread_start.thread_env_id, __ATOMIC_RELEASE);
        if (c_streq(ev->u.thread_start.thread_name, "d-worker"))
            __atomic_store_n(&worker_env, ev->u.thread_start.thread_env_id, __ATOMIC_RELEASE);
        break;
    case JVMPI_EVENT_COMPILED_METHOD_LOAD: {
        int w = which(ev->u.compiled_method_load.method_id);
        if (w == M_HOT_ON && !__atomic_load_n(&off, __ATOMIC_ACQUIRE))
            compiled_on = 1;
        if (w == M_HOT_OFF)
            __atomic_store_n(&compiled_off, 1, __ATOMIC_RELEASE);
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        finish();
        break;
    default:
        break;
    }
}

JNIEXPORT void JNICALL Java_D_1Methods_receiverIs(JNIEnv *env, jclass cls, jobject o)
{
    if (!c_ready("receiverIs"))
        return;
    receiver_id = c_pi->jobject2jobjectID(o);
    c_log("receiver ID %p", (void *)receiver_id);
    /* A native frame's line is -3 (HotSpot 5.0), the program's own natives
     * too, which the layer wraps while method events are on. */
    JVMPI_CallFrame f[2];
    JVMPI_CallTrace t = {env, 0, f};
    c_pi->GetCallTrace(&t, 2);
    c_check(t.num_frames == 2 && f[0].lineno == -3 && f[1].lineno > 0,
            "GetCallTrace in the program's native receiverIs: %d frames, the native's line %d (expected -3), "
            "its caller's %d",
            (int)t.num_frames, t.num_frames > 0 ? (int)f[0].lineno : 0, t.num_frames > 1 ? (int)f[1].lineno : 0);
}

JNIEXPORT void JNICALL Java_D_1Methods_methodEventsOff(JNIEnv *env, jclass cls)
{
    if (!c_ready("methodEventsOff"))
        return;
    c_check(c_pi->DisableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL) == JVMPI_SUCCESS, "DisableEvent(METHOD_ENTRY)");
    c_check(c_pi->DisableEvent(JVMPI_EVENT_METHOD_ENTRY2, NULL) == JVMPI_SUCCESS, "DisableEvent(METHOD_ENTRY2)");
    c_check(c_pi->DisableEvent(JVMPI_EVENT_METHOD_EXIT, NULL) == JVMPI_SUCCESS, "DisableEvent(METHOD_EXIT)");
    /* The native's own exit is still in flight on this thread: JVM TI posts
     * MethodExit of methodEventsOff after we return unless it is off now,
     * which it is; nothing of D_Methods' tracked methods runs meanwhile. */
    __atomic_store_n(&off, 1, __ATOMIC_RELEASE);
}

JNIEXPORT jboolean JNICALL Java_D_1Methods_compiledSeen(JNIEnv *env, jclass cls, jstring name)
{
    const char *s = (*env)->GetStringUTFChars(env, name, NULL);
    int seen = 0;
    if (c_streq(s, "hotWhileOn"))
        seen = compiled_on;
    else if (c_streq(s, "hotAfterOff"))
        seen = __atomic_load_n(&compiled_off, __ATOMIC_ACQUIRE);
    (*env)->ReleaseStringUTFChars(env, name, s);
    return seen ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (c_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    char *jit = c_opt(options, "jit");
    jit_while_on = jit != NULL && c_streq(jit, "on");
    free(jit);
    c_pi->NotifyEvent = notify;
    c_enable(JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD");
    c_enable(JVMPI_EVENT_THREAD_START, "THREAD_START");
    c_enable(JVMPI_EVENT_METHOD_ENTRY, "METHOD_ENTRY");
    c_enable(JVMPI_EVENT_METHOD_ENTRY2, "METHOD_ENTRY2");
    c_enable(JVMPI_EVENT_METHOD_EXIT, "METHOD_EXIT");
    c_enable(JVMPI_EVENT_COMPILED_METHOD_LOAD, "COMPILED_METHOD_LOAD");
    c_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    return JNI_OK;
}
