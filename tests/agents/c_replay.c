/*
 * c_replay - objects older than the agent.  Agent and JNI natives for
 * tests/java/C_Replay.java.
 *
 * Options: out=FILE.  Enables OBJECT_ALLOC, CLASS_LOAD, THREAD_START,
 * JVM_INIT_DONE and JVM_SHUT_DOWN in JVM_OnLoad, and checks the HotSpot 5.0
 * start-up order on the thread that gets JVM_INIT_DONE: OBJECT_ALLOC for
 * the objects already in the heap (thousands) and CLASS_LOAD, then
 * THREAD_START, then JVM_INIT_DONE, never going back to an earlier kind,
 * with what each event names defined before it (the JVMPI specification's
 * defining events): the init thread's own THREAD_START comes first, a
 * class's CLASS_LOAD before the first object that names it, and the
 * object of a class (its java.lang.Class) before its CLASS_LOAD.
 * At JVM_INIT_DONE: every class_id the replayed OBJECT_ALLOCs named had
 * its CLASS_LOAD before; every class announced had its Class object
 * announced as an object (class_id java.lang.Class's ID) but
 * java.lang.Class, whose own Class object comes only when asked for, with
 * class_id NULL, as on HotSpot 5.0 (a leak finder that asks for the
 * CLASS_LOAD of every object's class must never meet that NULL unasked);
 * the Thread object of every replayed
 * THREAD_START was among the replayed objects, main's too
 * (GetThreadObject); obj_ids are unique and not NULL, arena_id is 1.
 *
 * Then the program switches OBJECT_ALLOC off (disableAlloc) and makes
 * objects the agent never hears of; probe() asks RequestEvent(OBJECT_ALLOC,
 * jobject2jobjectID(o)) and checks the answer: synchronous, on the calling
 * thread, JVMPI_REQUESTED_EVENT set, that obj_id, the right class (by its
 * CLASS_LOAD name), is_array and size.  The same for the Thread object of
 * "c-replay-late" (its ID from THREAD_START), for main's (GetThreadObject),
 * and RequestEvent of IDs no live object has (NULL, never handed out, and
 * an object the GC has collected) must fail without an event.
 */
#include "c_common.h"

/* The fewest objects the heap holds at VM init (old=N). */
static long min_old = 5000;

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static c_classes classes;
static c_map all_ids;     /* every obj_id of an OBJECT_ALLOC (not requested) */
static c_map replay_ids;  /* those delivered on the init thread before JVM_INIT_DONE */
static c_map replay_cids; /* class_ids they named */
static c_map thread_ids;  /* thread_ids of THREAD_STARTs before JVM_INIT_DONE */
static int init_done;
static long n_alloc;
static uintptr_t max_id;
static jobjectID late_thread_id;
static jobjectID freed_id;
static int bad_arena, bad_id, dup_id, bad_type, undefined_class, class_object_late;
static jobjectID class_class; /* java.lang.Class's class_id */
static int alloc_off;         /* OBJECT_ALLOC was switched off: classes come without their objects */

/* The start-up sequence as seen by one thread. */
enum { P_NONE, P_ALLOC, P_CLASS, P_THREAD, P_INIT };
static const char *const phase_names[] = {"nothing", "OBJECT_ALLOC", "CLASS_LOAD", "THREAD_START", "JVM_INIT_DONE"};
typedef struct {
    int phase;
    long count[5];
    long back; /* events of an earlier kind after a later one */
    char first_back[160];
} seq;
static _Thread_local seq me;

static void step(int phase, const char *what)
{
    /* Objects and classes interleave: a class comes before its first object. */
    if (phase == P_CLASS && me.phase == P_CLASS) {
        me.count[phase]++;
        return;
    }
    if ((phase == P_ALLOC && me.phase == P_CLASS) || (phase == P_CLASS && me.phase == P_ALLOC)) {
        me.count[phase]++;
        me.phase = P_ALLOC;
        return;
    }
    if (me.phase == P_INIT)
        return; /* this thread's start-up is over (the agent's own JNI calls at JVM_INIT_DONE allocate) */
    if (phase < me.phase && me.back < 20)
        c_log("out of order: %s after %ld %s", what, me.count[me.phase], phase_names[me.phase]);
    if (phase < me.phase) {
        if (!me.back++)
            snprintf(me.first_back, sizeof me.first_back, "%s (%s) after %ld %s", phase_names[phase], what,
                     me.count[me.phase], phase_names[me.phase]);
    } else {
        me.phase = phase;
    }
    me.count[phase]++;
}

/* What the handler saw for the request in progress on this thread. */
static _Thread_local int in_request;
static _Thread_local struct {
    int n;
    JVMPI_Event ev;
    JNIEnv *thread_env;
} got;

static void on_alloc(JVMPI_Event *ev)
{
    jobjectID oid = ev->u.obj_alloc.obj_id, cid = ev->u.obj_alloc.class_id;
    if (ev->u.obj_alloc.arena_id != 1)
        C_FAIL_SOME(bad_arena, "OBJECT_ALLOC obj %p arena_id %d", (void *)oid, (int)ev->u.obj_alloc.arena_id);
    if (!oid)
        C_FAIL_SOME(bad_id, "OBJECT_ALLOC with obj_id NULL");
    if (!c_valid_array_code(ev->u.obj_alloc.is_array))
        C_FAIL_SOME(bad_type, "OBJECT_ALLOC obj %p is_array %d", (void *)oid, (int)ev->u.obj_alloc.is_array);
    pthread_mutex_lock(&lk);
    n_alloc++;
    int existed = 0, before_init = !init_done;
    if (oid) {
        c_map_put(&all_ids, oid, 0, &existed);
        if ((uintptr_t)oid > max_id)
            max_id = (uintptr_t)oid;
        if (before_init) {
            c_map_put(&replay_ids, oid, 0, NULL);
            if (cid)
                c_map_put(&replay_cids, cid, 0, NULL);
        }
    }
    pthread_mutex_unlock(&lk);
    if (existed)
        C_FAIL_SOME(dup_id, "OBJECT_ALLOC obj_id %p given twice", (void *)oid);
    pthread_mutex_lock(&lk);
    int class_known = !cid || c_classes_name(&classes, cid) != NULL;
    pthread_mutex_unlock(&lk);
    if (!class_known)
        C_FAIL_SOME(undefined_class, "OBJECT_ALLOC obj %p names class_id %p before its CLASS_LOAD", (void *)oid,
                    (void *)cid);
    if (before_init) {
        char what[300];
        pthread_mutex_lock(&lk);
        const char *cn = cid ? c_classes_name(&classes, cid) : NULL;
        snprintf(what, sizeof what, "OBJECT_ALLOC obj %p class %p (%s) is_array %d size %d", (void *)oid, (void *)cid,
                 c_str(cn), (int)ev->u.obj_alloc.is_array, (int)ev->u.obj_alloc.size);
        pthread_mutex_unlock(&lk);
        step(P_ALLOC, what);
    }
}

static void on_init_done(JVMPI_Event *ev)
{
    step(P_INIT, "JVM_INIT_DONE");
    c_log("JVM_INIT_DONE: this thread saw %ld OBJECT_ALLOC, %ld CLASS_LOAD, %ld THREAD_START before it",
          me.count[P_ALLOC], me.count[P_CLASS], me.count[P_THREAD]);
    char back[300] = "";
    if (me.back)
        snprintf(back, sizeof back, ": %ld events out of order, the first: %s", me.back, me.first_back);
    c_check(!me.back, "start-up order OBJECT_ALLOC*, CLASS_LOAD*, THREAD_START*, JVM_INIT_DONE on the init thread%s",
            back);
    c_check(me.count[P_ALLOC] >= min_old, "at least %ld OBJECT_ALLOC for objects older than the agent (got %ld)",
            min_old, me.count[P_ALLOC]);
    c_check(me.count[P_CLASS] >= 300, "at least 300 CLASS_LOAD replayed (got %ld)", me.count[P_CLASS]);
    c_check(me.count[P_THREAD] >= 2, "THREAD_START replayed for main and the VM's threads (got %ld)",
            me.count[P_THREAD]);

    pthread_mutex_lock(&lk);
    long undefined = 0, class_objects = 0, class_objects_missing = 0, threads_missing = 0;
    jobjectID undef_ids[10];
    for (size_t i = 0; i < replay_cids.cap; i++) {
        const void *cid = replay_cids.slots[i].key;
        if (cid && !c_classes_name(&classes, (jobjectID)(uintptr_t)cid) && undefined < 10)
            undef_ids[undefined++] = (jobjectID)(uintptr_t)cid;
    }
    for (size_t i = 0; i < classes.ids.cap; i++) {
        const void *cid = classes.ids.slots[i].key;
        if (!cid)
            continue;
        if (cid == class_class) {
            if (c_map_find(&all_ids, cid))
                c_fail("java.lang.Class's own Class object (%p) had an OBJECT_ALLOC nobody asked for", cid);
            continue;
        }
        if (c_map_find(&replay_ids, cid))
            class_objects++;
        else if (class_objects_missing++ < 3)
            c_fail("the Class object of %s (class_id %p) had no OBJECT_ALLOC by JVM_INIT_DONE",
                   classes.names[classes.ids.slots[i].val], cid);
    }
    for (size_t i = 0; i < thread_ids.cap; i++) {
        const void *tid = thread_ids.slots[i].key;
        if (tid && !c_map_find(&replay_ids, tid) && threads_missing++ < 3)
            c_fail("THREAD_START thread_id %p: no replayed OBJECT_ALLOC for that Thread object", tid);
    }
    size_t nreplay = replay_ids.used, nthreads = thread_ids.used, ncids = replay_cids.used;
    jobjectID string_id = c_classes_id(&classes, "java.lang.String");
    pthread_mutex_unlock(&lk);
    /* Names through Java code, so not under lk: it may allocate. */
    for (long i = 0; i < undefined; i++) {
        char name[200];
        c_jni_class_name(ev->env_id, undef_ids[i], name, sizeof name);
        c_fail("replayed OBJECT_ALLOC named class_id %p (%s), which no CLASS_LOAD defined by JVM_INIT_DONE",
               (void *)undef_ids[i], name);
    }
    c_check(!undefined, "the %zu class_ids named by %zu replayed objects are all defined by CLASS_LOAD (%ld%s are not)",
            ncids, nreplay, undefined, undefined >= 10 ? " or more" : "");
    c_check(!class_objects_missing && class_objects >= 300,
            "every class announced by JVM_INIT_DONE had its Class object announced too (%ld did, %ld did not)",
            class_objects, class_objects_missing);
    c_check(!undefined_class, "no OBJECT_ALLOC named a class before its CLASS_LOAD");
    c_check(!class_object_late, "every Class object's OBJECT_ALLOC came before its CLASS_LOAD (but java.lang.Class's)");
    c_check(!threads_missing && nthreads >= 2,
            "the Thread objects of the %zu replayed THREAD_STARTs were replayed objects (%ld missing)", nthreads,
            threads_missing);
    c_check(string_id != NULL, "CLASS_LOAD of java.lang.String was replayed");

    jobjectID main_tid = c_pi->GetThreadObject(ev->env_id);
    pthread_mutex_lock(&lk);
    int main_seen = main_tid && c_map_find(&replay_ids, main_tid) != NULL;
    init_done = 1;
    pthread_mutex_unlock(&lk);
    c_check(main_seen, "GetThreadObject(main) = %p was one of the replayed objects", (void *)main_tid);
}

static void notify(JVMPI_Event *ev)
{
    jint t = ev->event_type;
    if (t & JVMPI_REQUESTED_EVENT) {
        if (!in_request) {
            c_fail("requested event 0x%x outside RequestEvent on this thread", (unsigned)t);
            return;
        }
        got.n++;
        got.ev = *ev;
        got.thread_env = c_current_env();
        return;
    }
    if (in_request && t == JVMPI_EVENT_OBJECT_ALLOC) {
        /* Another allocation on this thread inside RequestEvent would be the
         * layer's own doing: JVMPI never showed those. */
        c_fail("OBJECT_ALLOC (not requested) of obj %p delivered inside RequestEvent", (void *)ev->u.obj_alloc.obj_id);
        return;
    }
    switch (t) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_alloc(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD: {
        jobjectID cid = ev->u.class_load.class_id;
        int is_class_class = c_streq(ev->u.class_load.class_name, "java.lang.Class");
        pthread_mutex_lock(&lk);
        c_classes_add(&classes, cid, ev->u.class_load.class_name);
        if (is_class_class)
            class_class = cid;
        int before = !init_done, object_known = alloc_off || c_map_find(&all_ids, cid) != NULL;
        pthread_mutex_unlock(&lk);
        if (!object_known && !is_class_class)
            C_FAIL_SOME(class_object_late, "CLASS_LOAD %s: its Class object %p had no OBJECT_ALLOC before",
                        c_str(ev->u.class_load.class_name), (void *)cid);
        if (before)
            step(P_CLASS, ev->u.class_load.class_name);
        break;
    }
    case JVMPI_EVENT_THREAD_START:
        pthread_mutex_lock(&lk);
        int before_init = !init_done;
        if (before_init && ev->u.thread_start.thread_id)
            c_map_put(&thread_ids, ev->u.thread_start.thread_id, 0, NULL);
        if (c_streq(ev->u.thread_start.thread_name, "c-replay-late"))
            late_thread_id = ev->u.thread_start.thread_id;
        pthread_mutex_unlock(&lk);
        /* The init thread announces itself before its first event. */
        if (before_init && ev->u.thread_start.thread_env_id != ev->env_id)
            step(P_THREAD, ev->u.thread_start.thread_name);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        on_init_done(ev);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        c_log("JVM_SHUT_DOWN after %ld OBJECT_ALLOC", n_alloc);
        c_summary("c_replay");
        break;
    default:
        c_fail("event type %d was never enabled", (int)t);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    if (c_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    char *old = c_opt(options, "old");
    if (old) {
        min_old = atol(old);
        free(old);
    }
    c_pi->NotifyEvent = notify;
    c_enable(JVMPI_EVENT_OBJECT_ALLOC, "OBJECT_ALLOC");
    c_enable(JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD");
    c_enable(JVMPI_EVENT_THREAD_START, "THREAD_START");
    c_enable(JVMPI_EVENT_JVM_INIT_DONE, "JVM_INIT_DONE");
    c_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    c_log("START");
    return JNI_OK;
}

/* RequestEvent(OBJECT_ALLOC, id) expecting an answer about class CNAME
 * (NULL: class_id NULL), is_array, size (0: not checked). */
static void expect_answer(JNIEnv *env, const char *what, jobjectID id, const char *cname, jint is_array, jint size)
{
    memset(&got, 0, sizeof got);
    in_request = 1;
    jint rc = c_pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, id);
    in_request = 0;
    if (!c_check(rc == JVMPI_SUCCESS && got.n == 1,
                 "%s: RequestEvent(OBJECT_ALLOC, %p) returned %d after %d events on this thread (expected 0 and 1)",
                 what, (void *)id, (int)rc, got.n))
        return;
    JVMPI_Event *e = &got.ev;
    pthread_mutex_lock(&lk);
    const char *n = e->u.obj_alloc.class_id ? c_classes_name(&classes, e->u.obj_alloc.class_id) : NULL;
    char *gname = n ? strdup(n) : NULL;
    pthread_mutex_unlock(&lk);
    c_log("%s: type 0x%x env %p obj %p class %p (%s) is_array %d size %d arena %d", what, (unsigned)e->event_type,
          (void *)e->env_id, (void *)e->u.obj_alloc.obj_id, (void *)e->u.obj_alloc.class_id, c_str(gname),
          (int)e->u.obj_alloc.is_array, (int)e->u.obj_alloc.size, (int)e->u.obj_alloc.arena_id);
    c_check(e->event_type == (JVMPI_EVENT_OBJECT_ALLOC | JVMPI_REQUESTED_EVENT),
            "%s: event_type 0x%x is OBJECT_ALLOC | JVMPI_REQUESTED_EVENT", what, (unsigned)e->event_type);
    c_check(e->env_id == env && got.thread_env == env, "%s: delivered on the calling thread (env_id %p, thread %p, caller %p)",
            what, (void *)e->env_id, (void *)got.thread_env, (void *)env);
    c_check(e->u.obj_alloc.obj_id == id, "%s: obj_id %p is the one asked for (%p)", what,
            (void *)e->u.obj_alloc.obj_id, (void *)id);
    c_check(e->u.obj_alloc.arena_id == 1, "%s: arena_id %d is 1", what, (int)e->u.obj_alloc.arena_id);
    if (cname)
        c_check(c_streq(gname, cname), "%s: class_id %p names %s (expected %s)", what,
                (void *)e->u.obj_alloc.class_id, c_str(gname), cname);
    else
        c_check(e->u.obj_alloc.class_id == NULL, "%s: class_id %p is NULL", what,
                (void *)e->u.obj_alloc.class_id);
    c_check(e->u.obj_alloc.is_array == is_array, "%s: is_array %d (expected %d)", what, (int)e->u.obj_alloc.is_array,
            (int)is_array);
    if (size)
        c_check(e->u.obj_alloc.size == size, "%s: size %d (expected %d)", what, (int)e->u.obj_alloc.size, (int)size);
    else
        c_check(e->u.obj_alloc.size > 0, "%s: size %d > 0", what, (int)e->u.obj_alloc.size);
    free(gname);
}

static void expect_refusal(const char *what, jobjectID id)
{
    memset(&got, 0, sizeof got);
    in_request = 1;
    jint rc = c_pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, id);
    in_request = 0;
    c_check(rc != JVMPI_SUCCESS && got.n == 0,
            "%s: RequestEvent(OBJECT_ALLOC, %p) refused (returned %d, %d events; expected != 0 and none)", what,
            (void *)id, (int)rc, got.n);
}

JNIEXPORT void JNICALL Java_C_1Replay_disableAlloc(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    if (!c_ready("disableAlloc"))
        return;
    pthread_mutex_lock(&lk);
    alloc_off = 1;
    pthread_mutex_unlock(&lk);
    jint rc = c_pi->DisableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
    c_check(rc == JVMPI_SUCCESS, "DisableEvent(OBJECT_ALLOC) returns JVMPI_SUCCESS (got %d)", (int)rc);
}

/* o: an object made while OBJECT_ALLOC was off. */
JNIEXPORT void JNICALL Java_C_1Replay_probe(JNIEnv *env, jclass cls, jstring jwhat, jobject o, jstring jcname,
                                             jint is_array, jint size)
{
    (void)cls;
    if (!c_ready("probe"))
        return;
    const char *what = (*env)->GetStringUTFChars(env, jwhat, NULL);
    const char *cname = jcname ? (*env)->GetStringUTFChars(env, jcname, NULL) : NULL;
    jobjectID id = c_pi->jobject2jobjectID(o);
    pthread_mutex_lock(&lk);
    int known = id && c_map_find(&all_ids, id) != NULL;
    pthread_mutex_unlock(&lk);
    if (c_check(id && !known, "%s: jobject2jobjectID gives %p, an ID no OBJECT_ALLOC carried", what, (void *)id)) {
        expect_answer(env, what, id, cname, is_array, size);
        char again[300];
        snprintf(again, sizeof again, "%s, asked again", what);
        expect_answer(env, again, id, cname, is_array, size);
        c_check(c_pi->jobject2jobjectID(o) == id, "%s: the object keeps its ID", what);
    }
    if (cname)
        (*env)->ReleaseStringUTFChars(env, jcname, cname);
    (*env)->ReleaseStringUTFChars(env, jwhat, what);
}

JNIEXPORT void JNICALL Java_C_1Replay_probeThreads(JNIEnv *env, jclass cls, jobject late)
{
    (void)cls;
    if (!c_ready("probeThreads"))
        return;
    pthread_mutex_lock(&lk);
    jobjectID tid = late_thread_id;
    int known = tid && c_map_find(&all_ids, tid) != NULL;
    pthread_mutex_unlock(&lk);
    c_check(tid && !known, "THREAD_START of c-replay-late gave thread_id %p, which no OBJECT_ALLOC carried",
            (void *)tid);
    c_check(c_pi->jobject2jobjectID(late) == tid, "jobject2jobjectID(c-replay-late) %p is its THREAD_START thread_id",
            (void *)c_pi->jobject2jobjectID(late));
    if (tid)
        expect_answer(env, "Thread c-replay-late", tid, "java.lang.Thread", JVMPI_NORMAL_OBJECT, 0);
    jobjectID main_tid = c_pi->GetThreadObject(env);
    if (c_check(main_tid != NULL, "GetThreadObject(main) %p", (void *)main_tid))
        expect_answer(env, "Thread main (GetThreadObject)", main_tid, "java.lang.Thread", JVMPI_NORMAL_OBJECT, 0);
    pthread_mutex_lock(&lk);
    jobjectID cc = class_class;
    pthread_mutex_unlock(&lk);
    if (c_check(cc != NULL, "CLASS_LOAD of java.lang.Class came"))
        expect_answer(env, "java.lang.Class's own Class object", cc, NULL, JVMPI_NORMAL_OBJECT, 0);
}

/* The program keeps only a weak reference to o, then collects it. */
JNIEXPORT void JNICALL Java_C_1Replay_rememberDoomed(JNIEnv *env, jclass cls, jobject o)
{
    (void)env;
    (void)cls;
    if (!c_ready("rememberDoomed"))
        return;
    freed_id = c_pi->jobject2jobjectID(o);
    c_check(freed_id != NULL, "doomed object has ID %p", (void *)freed_id);
}

JNIEXPORT void JNICALL Java_C_1Replay_probeBogus(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    if (!c_ready("probeBogus"))
        return;
    expect_refusal("NULL ID", NULL);
    pthread_mutex_lock(&lk);
    uintptr_t beyond = (max_id | 0xfff) + 1 + ((uintptr_t)1 << 40);
    pthread_mutex_unlock(&lk);
    expect_refusal("an ID never handed out", (jobjectID)beyond);
    if (freed_id)
        expect_refusal("the ID of a collected object", freed_id);
    c_log("bogus requests done, the JVM is still here");
}
