/*
 * a_request - RequestEvent answered synchronously, on the calling thread.
 *
 * Options: out=FILE.  CLASS_LOAD and THREAD_START are NOT enabled; the agent
 * enables JVM_INIT_DONE, THREAD_END and JVM_SHUT_DOWN only.
 *  - At JVM_INIT_DONE: GetThreadObject(env_id) and RequestEvent(THREAD_START)
 *    must describe main; GetMethodClass of String.length() and of
 *    Thread.currentThread() plus RequestEvent(CLASS_LOAD) must describe
 *    java.lang.String / java.lang.Thread, listing that very jmethodID.
 *    RequestEvent of event types JVMPI does not define as requestable must
 *    return JVMPI_NOT_AVAILABLE and deliver nothing.
 *  - At every THREAD_END: RequestEvent(THREAD_START, GetThreadObject(env_id))
 *    must name the ending thread; for "a-req-worker" RequestEvent(CLASS_LOAD)
 *    of the program's class (found through JNI FindClass + GetMethodClass)
 *    must list its method marker()I.
 * Each requested event must reach NotifyEvent on the requesting thread, while
 * RequestEvent is still running, with JVMPI_REQUESTED_EVENT set, and
 * RequestEvent must then return JVMPI_SUCCESS.
 */
#include "a_common.h"

/* What the handler saw for the request in progress on this thread. */
typedef struct {
    int handled;
    jint type;
    char *name, *group, *parent, *source;
    jobjectID id;
    JNIEnv *tenv;
    int nmethods;
    const char *want_name, *want_sig; /* method to look for in a CLASS_LOAD */
    jmethodID want_id;
    int want_found;
} reply;

static _Thread_local int in_request;
static _Thread_local reply got;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int init_checked, worker_checked, n_requests;

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void reset_reply(void)
{
    free(got.name);
    free(got.group);
    free(got.parent);
    free(got.source);
    const char *wn = got.want_name, *ws = got.want_sig;
    memset(&got, 0, sizeof got);
    got.want_name = wn;
    got.want_sig = ws;
}

static void on_requested(JVMPI_Event *ev)
{
    jint base = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    if (!in_request) {
        a_fail("requested event type 0x%x arrived on a thread that is not inside RequestEvent",
               (unsigned)ev->event_type);
        return;
    }
    got.handled++;
    got.type = ev->event_type;
    if (ev->env_id != a_current_env())
        a_fail("requested event 0x%x: env_id %p is not the calling thread's JNIEnv %p",
               (unsigned)ev->event_type, (void *)ev->env_id, (void *)a_current_env());
    if (base == JVMPI_EVENT_THREAD_START) {
        a_check_unused_zero(ev, A_USED_END(thread_start), "requested THREAD_START");
        got.name = dup_or_null(ev->u.thread_start.thread_name);
        got.group = dup_or_null(ev->u.thread_start.group_name);
        got.parent = dup_or_null(ev->u.thread_start.parent_name);
        got.id = ev->u.thread_start.thread_id;
        got.tenv = ev->u.thread_start.thread_env_id;
    } else {
        a_check_unused_zero(ev, A_USED_END(class_load), "requested CLASS_LOAD");
        got.name = dup_or_null(ev->u.class_load.class_name);
        got.source = dup_or_null(ev->u.class_load.source_name);
        got.id = ev->u.class_load.class_id;
        got.nmethods = ev->u.class_load.num_methods;
        for (jint i = 0; i < ev->u.class_load.num_methods && ev->u.class_load.methods; i++) {
            JVMPI_Method *m = &ev->u.class_load.methods[i];
            if (a_streq(m->method_name, got.want_name) && a_streq(m->method_signature, got.want_sig)) {
                got.want_found++;
                got.want_id = m->method_id;
            }
        }
    }
}

/* RequestEvent, with the checks every request shares.  Returns 1 if the
 * event was delivered as JVMPI promises. */
static int request(jint type, void *arg, const char *what)
{
    reset_reply();
    in_request = 1;
    jint rc = a_jvmpi->RequestEvent(type, arg);
    in_request = 0;
    pthread_mutex_lock(&lock);
    n_requests++;
    pthread_mutex_unlock(&lock);
    int ok = 1;
    if (rc != JVMPI_SUCCESS) {
        a_fail("%s: RequestEvent returned %d", what, (int)rc);
        ok = 0;
    }
    if (got.handled != 1) {
        a_fail("%s: NotifyEvent ran %d times on this thread before RequestEvent returned (expected 1)", what,
               got.handled);
        ok = 0;
    } else if (got.type != (type | JVMPI_REQUESTED_EVENT)) {
        a_fail("%s: event_type 0x%x, expected 0x%x", what, (unsigned)got.type,
               (unsigned)(type | JVMPI_REQUESTED_EVENT));
        ok = 0;
    }
    return ok;
}

static void check_thread_reply(const char *what, jobjectID tid, JNIEnv *tenv, const char *name, const char *group,
                               const char *parent)
{
    a_rec("%s: THREAD_START name %s group %s parent %s id %p env %p", what, a_str(got.name), a_str(got.group),
          a_str(got.parent), (void *)got.id, (void *)got.tenv);
    if (name && !a_streq(got.name, name))
        a_fail("%s: thread_name %s, expected %s", what, a_str(got.name), name);
    if (group && !a_streq(got.group, group))
        a_fail("%s: group_name %s, expected %s", what, a_str(got.group), group);
    if (parent && !a_streq(got.parent, parent))
        a_fail("%s: parent_name %s, expected %s", what, a_str(got.parent), parent);
    if (got.id != tid)
        a_fail("%s: thread_id %p, asked for %p", what, (void *)got.id, (void *)tid);
    if (tenv && got.tenv != tenv)
        a_fail("%s: thread_env_id %p, expected %p", what, (void *)got.tenv, (void *)tenv);
}

/* GetMethodClass(mid) + RequestEvent(CLASS_LOAD): the class must be CNAME
 * and list the method (name, sig) with that very jmethodID. */
static void check_class_of(jmethodID mid, const char *cname, const char *src, const char *mname,
                           const char *msig)
{
    char what[256];
    snprintf(what, sizeof what, "CLASS_LOAD of %s (via %s%s)", cname, mname, msig);
    if (!mid) {
        a_fail("%s: JNI found no jmethodID", what);
        return;
    }
    jobjectID cid = a_jvmpi->GetMethodClass(mid);
    if (!cid) {
        a_fail("%s: GetMethodClass returned NULL", what);
        return;
    }
    got.want_name = mname;
    got.want_sig = msig;
    if (!request(JVMPI_EVENT_CLASS_LOAD, cid, what))
        return;
    a_rec("%s: class_name %s source %s id %p methods %d, %s%s found %d times", what, a_str(got.name),
          a_str(got.source), (void *)got.id, got.nmethods, mname, msig, got.want_found);
    if (!a_streq(got.name, cname))
        a_fail("%s: class_name %s", what, a_str(got.name));
    if (src && !a_streq(got.source, src))
        a_fail("%s: source_name %s, expected %s", what, a_str(got.source), src);
    if (got.id != cid)
        a_fail("%s: class_id %p, asked for %p", what, (void *)got.id, (void *)cid);
    if (got.want_found != 1)
        a_fail("%s: method %s%s listed %d times", what, mname, msig, got.want_found);
    else if (got.want_id != mid)
        a_fail("%s: method %s%s has method_id %p, JNI gave %p", what, mname, msig, (void *)got.want_id,
               (void *)mid);
    jobjectID again = a_jvmpi->GetMethodClass(mid);
    if (again != cid)
        a_fail("%s: GetMethodClass gave %p, then %p", what, (void *)cid, (void *)again);
}

static void clear_exception(JNIEnv *env, const char *what)
{
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionDescribe(env);
        (*env)->ExceptionClear(env);
        a_fail("%s: JNI exception", what);
    }
}

static void on_init_done(JVMPI_Event *ev)
{
    JNIEnv *env = ev->env_id;
    if (!env) {
        a_fail("JVM_INIT_DONE with NULL env_id");
        return;
    }
    jobjectID tid = a_jvmpi->GetThreadObject(env);
    if (!tid)
        a_fail("GetThreadObject(main's env) returned NULL");
    else if (request(JVMPI_EVENT_THREAD_START, tid, "THREAD_START of main"))
        check_thread_reply("THREAD_START of main", tid, env, "main", "main", "system");

    jclass str = (*env)->FindClass(env, "java/lang/String");
    clear_exception(env, "FindClass(java/lang/String)");
    if (str) {
        jmethodID len = (*env)->GetMethodID(env, str, "length", "()I");
        clear_exception(env, "GetMethodID(length)");
        check_class_of(len, "java.lang.String", "String.java", "length", "()I");
        /* a second request for the same class must give the same answer */
        check_class_of(len, "java.lang.String", "String.java", "length", "()I");
        (*env)->DeleteLocalRef(env, str);
    }
    jclass thr = (*env)->FindClass(env, "java/lang/Thread");
    clear_exception(env, "FindClass(java/lang/Thread)");
    if (thr) {
        jmethodID cur = (*env)->GetStaticMethodID(env, thr, "currentThread", "()Ljava/lang/Thread;");
        clear_exception(env, "GetStaticMethodID(currentThread)");
        check_class_of(cur, "java.lang.Thread", "Thread.java", "currentThread", "()Ljava/lang/Thread;");
        (*env)->DeleteLocalRef(env, thr);
    }

    /* JVMPI defines RequestEvent for CLASS_LOAD, THREAD_START, OBJECT_ALLOC
     * and the three dumps only; every other type gets NOT_AVAILABLE.  The
     * argument is a real ID where an agent might plausibly pass one. */
    static const jint unsupported[] = {
        -1, 0, JVMPI_EVENT_METHOD_ENTRY, JVMPI_EVENT_METHOD_ENTRY2, JVMPI_EVENT_METHOD_EXIT,
        JVMPI_EVENT_OBJECT_FREE, JVMPI_EVENT_OBJECT_MOVE, JVMPI_EVENT_COMPILED_METHOD_LOAD,
        JVMPI_EVENT_COMPILED_METHOD_UNLOAD, JVMPI_EVENT_INSTRUCTION_START, 10, 32, JVMPI_EVENT_THREAD_END,
        JVMPI_EVENT_CLASS_LOAD_HOOK, 36, JVMPI_EVENT_JNI_GLOBALREF_ALLOC, JVMPI_EVENT_CLASS_UNLOAD,
        JVMPI_EVENT_DATA_DUMP_REQUEST, JVMPI_EVENT_DATA_RESET_REQUEST, JVMPI_EVENT_JVM_INIT_DONE,
        JVMPI_EVENT_JVM_SHUT_DOWN, JVMPI_EVENT_ARENA_NEW, JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER,
        JVMPI_EVENT_MONITOR_CONTENDED_ENTER, JVMPI_EVENT_MONITOR_WAIT, JVMPI_EVENT_GC_START,
        JVMPI_EVENT_GC_FINISH, 62, 70, 1000,
    };
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
        jint t = unsupported[i];
        void *arg = t == JVMPI_EVENT_THREAD_END ? (void *)tid : NULL;
        reset_reply();
        in_request = 1;
        jint rc = a_jvmpi->RequestEvent(t, arg);
        in_request = 0;
        if (rc != JVMPI_NOT_AVAILABLE)
            a_fail("RequestEvent(%d) returned %d, expected JVMPI_NOT_AVAILABLE (1)", (int)t, (int)rc);
        if (got.handled)
            a_fail("RequestEvent(%d) delivered an event", (int)t);
    }
    a_rec("INIT_DONE checks finished");
    pthread_mutex_lock(&lock);
    init_checked++;
    pthread_mutex_unlock(&lock);
}

static void on_thread_end(JVMPI_Event *ev)
{
    const char *name = ev->u.thread_start.thread_name;
    JNIEnv *env = ev->env_id;
    if (!env) {
        a_fail("THREAD_END %s with NULL env_id", a_str(name));
        return;
    }
    jobjectID tid = a_jvmpi->GetThreadObject(env);
    if (!tid) {
        a_fail("THREAD_END %s: GetThreadObject(env_id) returned NULL", a_str(name));
        return;
    }
    char what[200];
    snprintf(what, sizeof what, "THREAD_START requested at THREAD_END of %s", a_str(name));
    if (!request(JVMPI_EVENT_THREAD_START, tid, what))
        return;
    /* Only the name is compared: on JDK 17 the thread has already left its
     * group when its end is reported, and JVMPI never said whether a request
     * at that point names the old group (a_threads checks THREAD_END's own
     * group fields). */
    check_thread_reply(what, tid, env, name, NULL, NULL);
    if (!a_streq(got.name, "a-req-worker"))
        return;

    /* No Java frame here, so FindClass uses the system class loader. */
    jclass cls = (*env)->FindClass(env, "A_Request");
    clear_exception(env, "FindClass(A_Request)");
    if (!cls)
        return;
    jmethodID mid = (*env)->GetStaticMethodID(env, cls, "marker", "()I");
    clear_exception(env, "GetStaticMethodID(marker)");
    check_class_of(mid, "A_Request", "A_Request.java", "marker", "()I");
    (*env)->DeleteLocalRef(env, cls);
    pthread_mutex_lock(&lock);
    worker_checked++;
    pthread_mutex_unlock(&lock);
    a_rec("WORKER checks finished");
}

static void notify(JVMPI_Event *ev)
{
    jint t = ev->event_type;
    if (t == (JVMPI_EVENT_CLASS_LOAD | JVMPI_REQUESTED_EVENT) ||
        t == (JVMPI_EVENT_THREAD_START | JVMPI_REQUESTED_EVENT)) {
        on_requested(ev);
        return;
    }
    if (in_request) {
        a_fail("event type 0x%x delivered during RequestEvent", (unsigned)t);
        return;
    }
    switch (t) {
    case JVMPI_EVENT_JVM_INIT_DONE:
        on_init_done(ev);
        break;
    case JVMPI_EVENT_THREAD_END:
        on_thread_end(ev);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN: {
        pthread_mutex_lock(&lock);
        int i = init_checked, w = worker_checked, n = n_requests;
        pthread_mutex_unlock(&lock);
        if (i != 1)
            a_fail("JVM_INIT_DONE checks ran %d times", i);
        if (w != 1)
            a_fail("a-req-worker THREAD_END checks ran %d times", w);
        a_rec("DONE requests=%d failures=%d", n, a_failures);
        break;
    }
    default:
        a_fail("event type 0x%x was never enabled", (unsigned)t);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (a_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    a_jvmpi->NotifyEvent = notify;
    a_expect_enable(JVMPI_EVENT_JVM_INIT_DONE, "JVM_INIT_DONE");
    a_expect_enable(JVMPI_EVENT_THREAD_END, "THREAD_END");
    a_expect_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    a_rec("START");
    return JNI_OK;
}
