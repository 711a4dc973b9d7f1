/*
 * c_alloc - OBJECT_ALLOC for every allocation path, counted exactly.
 * Agent and JNI natives for tests/java/C_Alloc.java.
 *
 * Options: out=FILE, enable=onload|init|late: when OBJECT_ALLOC gets enabled
 * (in JVM_OnLoad, at JVM_INIT_DONE, or from the program's setup() native
 * once main() runs).  CLASS_LOAD, THREAD_START and JVM_INIT_DONE are always
 * enabled in JVM_OnLoad, so the agent knows every class ID by name.
 *
 * The program opens a "window" on one thread (begin()), allocates a known
 * number of objects of each kind, and closes it (end(label, expected, made)).
 * Inside a window the agent files every OBJECT_ALLOC of that thread under a
 * kind (C_Marker, C_Marker[], C_Marker[][], int[][], primitive arrays of
 * length 4711, java.lang.String) and at end() checks:
 *  - the count of every kind equals the program's (exactly);
 *  - every object the program made (made[]) has, by jobject2jobjectID, the
 *    ID of one OBJECT_ALLOC of this window, of a counted kind, and no two
 *    share one (so the events are those very objects, not look-alikes);
 *  - every event arrived in the allocating thread (env_id is the caller's
 *    JNIEnv), and in the worker windows that env is the thread_env_id of
 *    THREAD_START "c-alloc-worker".
 * For every OBJECT_ALLOC (outside windows too): arena_id 1, obj_id not NULL
 * and never seen before, a valid is_array code, class_id NULL exactly for
 * primitive arrays and java.lang.Class's own Class object (as HotSpot 5.0
 * sent them), the element class for arrays of references, size > 0 (and the exact HotSpot size for C_Marker and
 * for primitive arrays of length 4711), and once JVM_INIT_DONE has been
 * delivered (the start-up replay may name classes whose CLASS_LOAD comes
 * later), class_id already defined by a CLASS_LOAD.
 */
#include "c_common.h"

#define MARK_LEN 4711

enum kind {
    K_MARKER, K_MARKER_ARR, K_MARKER_ARR2, K_INT_ARR2,
    K_BOOLEAN, K_BYTE, K_CHAR, K_SHORT, K_INT, K_LONG, K_FLOAT, K_DOUBLE,
    K_STRING, NK, K_OTHER = NK
};
static const char *const kind_names[NK] = {
    "C_Marker", "C_Marker[]", "C_Marker[][]", "int[][]",
    "boolean[4711]", "byte[4711]", "char[4711]", "short[4711]", "int[4711]", "long[4711]", "float[4711]",
    "double[4711]", "java.lang.String",
};
static const jint prim_types[8] = {JVMPI_BOOLEAN, JVMPI_BYTE, JVMPI_CHAR, JVMPI_SHORT,
                                   JVMPI_INT, JVMPI_LONG, JVMPI_FLOAT, JVMPI_DOUBLE};

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static c_classes classes;
static c_map all_ids;
static int init_done;
static long n_alloc, n_alloc_before_init;
static jobjectID null_plain; /* the plain object with class_id NULL: java.lang.Class's Class object */

/* clone_ids=lost (the script sets it on JDK 21 and later): HotSpot there
 * posts the allocation of Object.clone() before the copy, and a tag set in
 * that event can no longer be found from the clone afterwards: GetTag says
 * untagged, while GetObjectsWithTags still finds the entry (checked with a
 * plain JVM TI agent that tags in SampledObjectAlloc: 20 of 20 clones).  The
 * clones are still counted exactly, by class and thread; only "the clone has
 * the ID its OBJECT_ALLOC carried" cannot hold there.  JDK 17 keeps the tag
 * and is checked in full. */
static int clone_tags_lost;
static long lost_clone_ids;

static JNIEnv *worker_env;

/* The JNIEnvs of the threads announced by THREAD_START and not ended since. */
#define C_LIVE_MAX 1024
static JNIEnv *live_envs[C_LIVE_MAX];
static int n_live;
static long unannounced_allocs;

static int live_find(JNIEnv *env)
{
    for (int i = 0; i < n_live; i++)
        if (live_envs[i] == env)
            return i;
    return -1;
}
static int n_windows;
static char enable_mode[16] = "onload";
static int bad_arena, bad_id, dup_id, bad_type, bad_class, undefined_class, bad_size, wrong_thread, null_env;

/* Cached by setup() outside any window: JNI lookups may allocate. */
static jclass marker_cls;
static jmethodID marker_ctor;

typedef struct {
    int active;
    long count[NK + 1];
    c_map ids; /* obj_id -> kind */
    long foreign_env;
} window;
static _Thread_local window win;

/* A String the JDK makes on the program's thread inside a window: linking
 * a native method makes its JNI name, and ClassLoader.findNative runs Java
 * code of the JDK's own, when the JIT has changed which of the JDK's
 * natives the code calls first.  The window's own Strings are made by
 * C_Alloc.strings; such a String's trace tops in the JDK's code, or in the
 * native method itself (line -3).  A trace that cannot be placed counts as
 * the program's, so that the check stays strict. */
static int made_by_the_jdk(JNIEnv *env_id)
{
    JVMPI_CallFrame top;
    JVMPI_CallTrace trace = {env_id, 0, &top};
    c_pi->GetCallTrace(&trace, 1);
    if (trace.num_frames != 1) {
        return 0;
    }
    if (top.lineno == -3) {
        return 1;
    }
    jobjectID cid = c_pi->GetMethodClass(top.method_id);
    pthread_mutex_lock(&lk);
    const char *cname = cid ? c_classes_name(&classes, cid) : NULL;
    int jdk = cname != NULL && !c_streq(cname, "C_Alloc");
    pthread_mutex_unlock(&lk);
    return jdk;
}

static enum kind classify(const char *cname, jint is_array, jint size, jobjectID class_id)
{
    if (is_array == JVMPI_NORMAL_OBJECT) {
        if (c_streq(cname, "C_Marker"))
            return K_MARKER;
        if (c_streq(cname, "java.lang.String"))
            return K_STRING;
        return K_OTHER;
    }
    if (is_array == JVMPI_CLASS) {
        if (c_streq(cname, "C_Marker"))
            return K_MARKER_ARR;
        if (c_streq(cname, "[LC_Marker;"))
            return K_MARKER_ARR2;
        if (c_streq(cname, "[I"))
            return K_INT_ARR2;
        return K_OTHER;
    }
    for (int i = 0; i < 8; i++)
        if (is_array == prim_types[i] && !class_id && size == c_prim_array_size(prim_types[i], MARK_LEN))
            return (enum kind)(K_BOOLEAN + i);
    return K_OTHER;
}

/* The calling thread is not announced, and env_id names one that is. */
static int stood_in(JNIEnv *env_id)
{
    pthread_mutex_lock(&lk);
    int yes = live_find(c_current_env()) < 0 && live_find(env_id) >= 0;
    unannounced_allocs += yes;
    pthread_mutex_unlock(&lk);
    return yes;
}

static void on_alloc(JVMPI_Event *ev)
{
    jint arena = ev->u.obj_alloc.arena_id, is_array = ev->u.obj_alloc.is_array, size = ev->u.obj_alloc.size;
    jobjectID cid = ev->u.obj_alloc.class_id, oid = ev->u.obj_alloc.obj_id;

    pthread_mutex_lock(&lk);
    int after_init = init_done;
    n_alloc++;
    if (!after_init)
        n_alloc_before_init++;
    const char *cname = cid ? c_classes_name(&classes, cid) : NULL;
    int existed = 0;
    if (oid)
        c_map_put(&all_ids, oid, 0, &existed);
    pthread_mutex_unlock(&lk);

    if (arena != 1)
        C_FAIL_SOME(bad_arena, "OBJECT_ALLOC arena_id %d (expected 1), obj %p", (int)arena, (void *)oid);
    if (!oid)
        C_FAIL_SOME(bad_id, "OBJECT_ALLOC with obj_id NULL (class %p is_array %d)", (void *)cid, (int)is_array);
    if (existed)
        C_FAIL_SOME(dup_id, "OBJECT_ALLOC obj_id %p was already given to an earlier OBJECT_ALLOC", (void *)oid);
    if (!c_valid_array_code(is_array))
        C_FAIL_SOME(bad_type, "OBJECT_ALLOC obj %p is_array %d is no JVMPI type code", (void *)oid, (int)is_array);
    else if (is_array == JVMPI_NORMAL_OBJECT && cid == NULL) {
        /* Only java.lang.Class's own Class object (checked at the end: its
         * CLASS_LOAD comes after it). */
        pthread_mutex_lock(&lk);
        jobjectID other = null_plain;
        if (!other)
            null_plain = oid;
        pthread_mutex_unlock(&lk);
        if (other && other != oid)
            C_FAIL_SOME(bad_class, "OBJECT_ALLOC obj %p is a plain object with class_id NULL, and so was %p: only "
                        "java.lang.Class's own Class object names no class", (void *)oid, (void *)other);
    } else if ((c_elem_size(is_array) > 0) != (cid == NULL))
        C_FAIL_SOME(bad_class,
                    "OBJECT_ALLOC obj %p size %d is_array %d (%s) with class_id %p (NULL exactly for primitive "
                    "arrays)%s",
                    (void *)oid, (int)size, (int)is_array, c_type_name(is_array), (void *)cid,
                    after_init ? "" : " (before JVM_INIT_DONE)");
    if (size <= 0)
        C_FAIL_SOME(bad_size, "OBJECT_ALLOC obj %p size %d", (void *)oid, (int)size);
    if (after_init && cid && !cname)
        C_FAIL_SOME(undefined_class, "OBJECT_ALLOC obj %p names class_id %p before any CLASS_LOAD of it (is_array %d)",
                    (void *)oid, (void *)cid, (int)is_array);
    if (after_init) {
        if (!ev->env_id)
            C_FAIL_SOME(null_env, "OBJECT_ALLOC obj %p with env_id NULL", (void *)oid);
        /* One exception: a thread the VM attaches (DestroyJavaVM) has its own
         * Thread object announced before its THREAD_START, which that
         * OBJECT_ALLOC cannot name yet: it comes under a known thread's.  On
         * JDK 21 and later the attach makes more objects than the Thread
         * (its field holder, ...), on a thread no THREAD_START named yet, or
         * none since its JNIEnv's last THREAD_END: they too come under a
         * known thread's env_id. */
        else if (ev->env_id != c_current_env() && c_pi->GetThreadObject(c_current_env()) != oid &&
                 !stood_in(ev->env_id))
            C_FAIL_SOME(wrong_thread, "OBJECT_ALLOC obj %p: env_id %p, but delivered on thread with JNIEnv %p",
                        (void *)oid, (void *)ev->env_id, (void *)c_current_env());
    }
    if (c_streq(cname, "C_Marker") && is_array == JVMPI_NORMAL_OBJECT && size != 16)
        C_FAIL_SOME(bad_size, "OBJECT_ALLOC of a C_Marker: size %d, expected 16 (12-byte header + int)", (int)size);

    if (!win.active)
        return;
    enum kind k = classify(cname, is_array, size, cid);
    if (k == K_STRING && made_by_the_jdk(ev->env_id))
        k = K_OTHER;
    win.count[k]++;
    if (oid && k != K_OTHER)
        c_map_put(&win.ids, oid, k, NULL);
    if (ev->env_id != c_current_env())
        win.foreign_env++;
}

static void on_class_load(JVMPI_Event *ev)
{
    pthread_mutex_lock(&lk);
    int added = c_classes_add(&classes, ev->u.class_load.class_id, ev->u.class_load.class_name);
    pthread_mutex_unlock(&lk);
    if (!ev->u.class_load.class_id)
        c_fail("CLASS_LOAD %s with class_id NULL", c_str(ev->u.class_load.class_name));
    (void)added;
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_alloc(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_THREAD_START:
        pthread_mutex_lock(&lk);
        if (c_streq(ev->u.thread_start.thread_name, "c-alloc-worker"))
            worker_env = ev->u.thread_start.thread_env_id;
        if (live_find(ev->u.thread_start.thread_env_id) < 0 && n_live < C_LIVE_MAX)
            live_envs[n_live++] = ev->u.thread_start.thread_env_id;
        pthread_mutex_unlock(&lk);
        break;
    case JVMPI_EVENT_THREAD_END: {
        pthread_mutex_lock(&lk);
        int i = live_find(ev->env_id);
        if (i >= 0)
            live_envs[i] = live_envs[--n_live];
        pthread_mutex_unlock(&lk);
        break;
    }
    case JVMPI_EVENT_JVM_INIT_DONE:
        if (c_streq(enable_mode, "init"))
            c_enable(JVMPI_EVENT_OBJECT_ALLOC, "OBJECT_ALLOC at JVM_INIT_DONE");
        pthread_mutex_lock(&lk);
        init_done = 1;
        long before = n_alloc;
        pthread_mutex_unlock(&lk);
        c_log("JVM_INIT_DONE after %ld OBJECT_ALLOC", before);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN: {
        pthread_mutex_lock(&lk);
        long n = n_alloc, nb = n_alloc_before_init;
        int w = n_windows;
        size_t nc = classes.n;
        const char *null_name = null_plain ? c_classes_name(&classes, null_plain) : NULL;
        pthread_mutex_unlock(&lk);
        c_log("JVM_SHUT_DOWN: %ld OBJECT_ALLOC (%ld before JVM_INIT_DONE), %zu classes, %d windows", n, nb, nc, w);
        if (null_plain)
            c_check(null_name && c_streq(null_name, "java.lang.Class"),
                    "the plain object with class_id NULL (%p) is java.lang.Class's Class object (it is %s)",
                    (void *)null_plain, null_name ? null_name : "no class");
        if (unannounced_allocs)
            c_log("NOTE %ld OBJECT_ALLOC on a thread not announced (yet, or since its JNIEnv's THREAD_END) came "
                  "under a live thread's env_id",
                  unannounced_allocs);
        if (clone_tags_lost)
            c_log("NOTE clone_ids=lost: %ld clones carried no ID from their OBJECT_ALLOC", lost_clone_ids);
        c_check(w == 12, "all 12 windows of the program were checked (got %d)", w);
        c_summary("c_alloc");
        break;
    }
    default:
        c_fail("event type %d was never enabled", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    if (c_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    char *ci = c_opt(options, "clone_ids");
    clone_tags_lost = ci != NULL && c_streq(ci, "lost");
    free(ci);
    char *ch = c_opt(options, "compact_headers");
    c_compact_headers = ch != NULL && c_streq(ch, "1");
    free(ch);
    char *m = c_opt(options, "enable");
    if (m) {
        snprintf(enable_mode, sizeof enable_mode, "%s", m);
        free(m);
    }
    c_pi->NotifyEvent = notify;
    c_enable(JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD");
    c_enable(JVMPI_EVENT_THREAD_START, "THREAD_START");
    c_enable(JVMPI_EVENT_THREAD_END, "THREAD_END");
    c_enable(JVMPI_EVENT_JVM_INIT_DONE, "JVM_INIT_DONE");
    c_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    if (c_streq(enable_mode, "onload"))
        c_enable(JVMPI_EVENT_OBJECT_ALLOC, "OBJECT_ALLOC in JVM_OnLoad");
    c_log("START enable=%s", enable_mode);
    return JNI_OK;
}

/* ---- natives of C_Alloc ---- */

JNIEXPORT void JNICALL Java_C_1Alloc_setup(JNIEnv *env, jclass cls, jclass marker)
{
    (void)cls;
    if (!c_ready("setup"))
        return;
    marker_cls = (*env)->NewGlobalRef(env, marker);
    marker_ctor = (*env)->GetMethodID(env, marker, "<init>", "(I)V");
    c_clear_exception(env, "GetMethodID(C_Marker.<init>(I)V)");
    if (c_streq(enable_mode, "late"))
        c_enable(JVMPI_EVENT_OBJECT_ALLOC, "OBJECT_ALLOC from main()");
}

JNIEXPORT void JNICALL Java_C_1Alloc_begin(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    c_map_clear(&win.ids);
    memset(&win, 0, sizeof win);
    win.active = 1;
}

JNIEXPORT void JNICALL Java_C_1Alloc_end(JNIEnv *env, jclass cls, jstring jlabel, jintArray jexpected,
                                          jobjectArray made)
{
    (void)cls;
    win.active = 0;
    if (!c_ready("end"))
        return;
    const char *label = (*env)->GetStringUTFChars(env, jlabel, NULL);
    jint expected[NK];
    if ((*env)->GetArrayLength(env, jexpected) != NK) {
        c_fail("window %s: expected[] has %d entries, the agent knows %d kinds", label,
               (int)(*env)->GetArrayLength(env, jexpected), NK);
        (*env)->ReleaseStringUTFChars(env, jlabel, label);
        return;
    }
    (*env)->GetIntArrayRegion(env, jexpected, 0, NK, expected);

    char counts[1024];
    size_t off = 0;
    long want_total = 0;
    int ok = 1;
    for (int k = 0; k < NK; k++) {
        if (win.count[k] || expected[k] > 0)
            off += (size_t)snprintf(counts + off, sizeof counts - off, " %s=%ld/%d", kind_names[k], win.count[k],
                                    (int)expected[k]);
        if (expected[k] < 0)
            continue; /* this window does not count that kind */
        want_total += expected[k];
        if (win.count[k] != expected[k]) {
            c_fail("window %s: %ld OBJECT_ALLOC of %s, the program made %d", label, win.count[k], kind_names[k],
                   (int)expected[k]);
            ok = 0;
        }
    }
    c_log("window %s: counted/made%s, other=%ld", label, counts, win.count[K_OTHER]);

    /* The program's objects must be exactly the counted events. */
    jsize n = (*env)->GetArrayLength(env, made);
    c_map seen = {0};
    long missing = 0, twice = 0, uncounted_kind = 0;
    for (jsize i = 0; i < n; i++) {
        jobject o = (*env)->GetObjectArrayElement(env, made, i);
        jobjectID id = o ? c_pi->jobject2jobjectID(o) : NULL;
        c_slot *s = id ? c_map_find(&win.ids, id) : NULL;
        if (!s && clone_tags_lost && c_streq(label, "clone")) {
            lost_clone_ids++; /* see clone_tags_lost: counted above, identity not checkable */
        } else if (!s) {
            if (missing++ < 3)
                c_fail("window %s: made[%d] has ID %p, which no OBJECT_ALLOC of this window carried", label, (int)i,
                       (void *)id);
        } else {
            int existed;
            c_map_put(&seen, id, 1, &existed);
            if (existed)
                twice++;
            if (expected[s->val] < 0)
                uncounted_kind++;
        }
        (*env)->DeleteLocalRef(env, o);
    }
    c_map_clear(&seen);
    if (missing || twice || uncounted_kind || n != want_total) {
        c_fail("window %s: %d objects made, %ld counted; %ld without an OBJECT_ALLOC here, %ld IDs shared, %ld of "
               "an uncounted kind",
               label, (int)n, want_total, missing, twice, uncounted_kind);
        ok = 0;
    }
    if (win.foreign_env) {
        c_fail("window %s: %ld OBJECT_ALLOC had an env_id other than the allocating thread's", label,
               win.foreign_env);
        ok = 0;
    }
    if (strncmp(label, "worker", 6) == 0) {
        pthread_mutex_lock(&lk);
        JNIEnv *we = worker_env;
        pthread_mutex_unlock(&lk);
        if (we != env) {
            c_fail("window %s runs on JNIEnv %p, THREAD_START of c-alloc-worker said thread_env_id %p", label,
                   (void *)env, (void *)we);
            ok = 0;
        }
    }
    c_check(ok, "window %s: %d objects, every one reported once, in its thread", label, (int)n);
    pthread_mutex_lock(&lk);
    n_windows++;
    pthread_mutex_unlock(&lk);
    c_map_clear(&win.ids);
    (*env)->ReleaseStringUTFChars(env, jlabel, label);
}

JNIEXPORT jobject JNICALL Java_C_1Alloc_jniAllocObject(JNIEnv *env, jclass cls)
{
    (void)cls;
    return (*env)->AllocObject(env, marker_cls);
}

JNIEXPORT jobject JNICALL Java_C_1Alloc_jniNewObject(JNIEnv *env, jclass cls, jint v)
{
    (void)cls;
    return (*env)->NewObject(env, marker_cls, marker_ctor, v);
}

JNIEXPORT jobject JNICALL Java_C_1Alloc_jniNewMarkerArray(JNIEnv *env, jclass cls, jint n)
{
    (void)cls;
    return (*env)->NewObjectArray(env, n, marker_cls, NULL);
}

/* type: a JVMPI element type code. */
JNIEXPORT jobject JNICALL Java_C_1Alloc_jniNewPrimArray(JNIEnv *env, jclass cls, jint type, jint n)
{
    (void)cls;
    switch (type) {
    case JVMPI_BOOLEAN:
        return (*env)->NewBooleanArray(env, n);
    case JVMPI_BYTE:
        return (*env)->NewByteArray(env, n);
    case JVMPI_CHAR:
        return (*env)->NewCharArray(env, n);
    case JVMPI_SHORT:
        return (*env)->NewShortArray(env, n);
    case JVMPI_INT:
        return (*env)->NewIntArray(env, n);
    case JVMPI_LONG:
        return (*env)->NewLongArray(env, n);
    case JVMPI_FLOAT:
        return (*env)->NewFloatArray(env, n);
    case JVMPI_DOUBLE:
        return (*env)->NewDoubleArray(env, n);
    default:
        c_fail("jniNewPrimArray: type %d", (int)type);
        return NULL;
    }
}
