/*
 * c_gc - OBJECT_FREE, GC events and GC control.
 * Agent and JNI natives for tests/java/C_Gc.java and C_GcCtl.java.
 *
 * Options: out=FILE.  Enables in JVM_OnLoad OBJECT_ALLOC, OBJECT_FREE,
 * GC_START, GC_FINISH, CLASS_LOAD, JVM_INIT_DONE, JVM_SHUT_DOWN, and
 * OBJECT_MOVE, ARENA_NEW, ARENA_DELETE (which must enable with
 * JVMPI_SUCCESS and never arrive: tags make moves invisible, HotSpot never
 * had arenas).
 *
 * Every event is checked as it comes:
 *  - OBJECT_ALLOC: obj_id not NULL, never given before (not even to an
 *    object already freed);
 *  - OBJECT_FREE: only inside a window GC_START ... GC_FINISH, on the
 *    window's thread (the OS thread it runs on, and the env_id GC_START
 *    carried), for an ID an OBJECT_ALLOC gave and that is not freed yet;
 *  - GC_START / GC_FINISH: paired, not nested, both on one thread, with
 *    one env_id (a thread's, never NULL: JDK 5.0 sent them from its VM
 *    thread with the env_id of the thread the collection was for), never
 *    while the program holds GC disabled; GC_FINISH's gc_info has
 *    used_objects > 0, used_object_space > 0, total >= used_object_space,
 *    and agrees with the agent's own count (objects allocated and not
 *    freed, and their bytes) within 1% (threads may allocate meanwhile).
 * The natives let the program ask for a RunGC (its window must arrive, with
 * the calling thread's env_id, before RunGC returns) and check the marker (C_Marker)
 * counts at known points: exactly the markers it dropped are freed, those
 * it keeps are not, and total_object_space is close to Runtime.totalMemory().
 */
#include "c_common.h"

#define LIVE 1
#define MARKER 2
#define SIZE_SHIFT 2

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static c_classes classes;
static c_map objs; /* obj_id -> size << 2 | MARKER | LIVE */
static jobjectID marker_id;
static long live_objects, live_bytes;
static long marker_allocs, marker_frees, marker_live;
static long n_alloc, n_free, n_windows;

static int window_open;
static JNIEnv *window_env;
static pthread_t window_thread;
static long window_frees;
static jlong last_used_objects, last_used_space, last_total_space;
static long last_diff_objects, last_diff_bytes, worst_permille;

static int gc_disabled;
static long events_while_disabled;

static int f_null_id, f_dup_id, f_free_unknown, f_free_twice, f_free_outside, f_free_env, f_nested, f_finish,
    f_gc_env, f_gc_info, f_disabled, f_gc_count;

static void on_alloc(JVMPI_Event *ev)
{
    jobjectID oid = ev->u.obj_alloc.obj_id;
    if (!oid) {
        C_FAIL_SOME(f_null_id, "OBJECT_ALLOC with obj_id NULL");
        return;
    }
    pthread_mutex_lock(&lk);
    n_alloc++;
    int marker = marker_id && ev->u.obj_alloc.class_id == marker_id && ev->u.obj_alloc.is_array == JVMPI_NORMAL_OBJECT;
    int existed;
    c_slot *s = c_map_put(&objs, oid, ((intptr_t)ev->u.obj_alloc.size << SIZE_SHIFT) | (marker ? MARKER : 0) | LIVE,
                          &existed);
    intptr_t old = s->val;
    if (!existed) {
        live_objects++;
        live_bytes += ev->u.obj_alloc.size;
        if (marker) {
            marker_allocs++;
            marker_live++;
        }
    }
    pthread_mutex_unlock(&lk);
    if (existed)
        C_FAIL_SOME(f_dup_id, "OBJECT_ALLOC obj_id %p was already given to an earlier OBJECT_ALLOC (%s)", (void *)oid,
                    (old & LIVE) ? "still live" : "freed since: an ID reused");
}

static void on_free(JVMPI_Event *ev)
{
    jobjectID oid = ev->u.obj_free.obj_id;
    pthread_mutex_lock(&lk);
    n_free++;
    int open = window_open, disabled = gc_disabled;
    JNIEnv *wenv = window_env;
    int same_thread = pthread_equal(window_thread, pthread_self());
    if (open)
        window_frees++;
    if (disabled)
        events_while_disabled++;
    c_slot *s = oid ? c_map_find(&objs, oid) : NULL;
    intptr_t v = s ? s->val : 0;
    if (s && (v & LIVE)) {
        s->val = v & ~(intptr_t)LIVE;
        live_objects--;
        live_bytes -= v >> SIZE_SHIFT;
        if (v & MARKER) {
            marker_frees++;
            marker_live--;
        }
    }
    pthread_mutex_unlock(&lk);
    if (!open)
        C_FAIL_SOME(f_free_outside, "OBJECT_FREE %p outside GC_START ... GC_FINISH", (void *)oid);
    else if (ev->env_id != wenv || !same_thread)
        C_FAIL_SOME(f_free_env, "OBJECT_FREE %p: env_id %p%s, but GC_START came with env_id %p", (void *)oid,
                    (void *)ev->env_id, same_thread ? "" : " on another thread than GC_START's", (void *)wenv);
    if (!s)
        C_FAIL_SOME(f_free_unknown, "OBJECT_FREE %p: no OBJECT_ALLOC ever gave that ID", (void *)oid);
    else if (!(v & LIVE))
        C_FAIL_SOME(f_free_twice, "OBJECT_FREE %p: that ID was freed already", (void *)oid);
    if (disabled)
        C_FAIL_SOME(f_disabled, "OBJECT_FREE %p while GC is disabled", (void *)oid);
}

static void on_gc_start(JVMPI_Event *ev)
{
    pthread_mutex_lock(&lk);
    int was_open = window_open, disabled = gc_disabled;
    window_open = 1;
    window_env = ev->env_id;
    window_thread = pthread_self();
    window_frees = 0;
    if (disabled)
        events_while_disabled++;
    pthread_mutex_unlock(&lk);
    if (was_open)
        C_FAIL_SOME(f_nested, "GC_START while the previous window had no GC_FINISH yet");
    if (!ev->env_id)
        C_FAIL_SOME(f_gc_env, "GC_START with env_id NULL");
    if (disabled)
        C_FAIL_SOME(f_disabled, "GC_START while GC is disabled");
}

static void on_gc_finish(JVMPI_Event *ev)
{
    jlong uo = ev->u.gc_info.used_objects, us = ev->u.gc_info.used_object_space,
          ts = ev->u.gc_info.total_object_space;
    pthread_mutex_lock(&lk);
    int was_open = window_open, disabled = gc_disabled;
    JNIEnv *wenv = window_env;
    int same_thread = pthread_equal(window_thread, pthread_self());
    window_open = 0;
    n_windows++;
    if (disabled)
        events_while_disabled++;
    last_used_objects = uo;
    last_used_space = us;
    last_total_space = ts;
    last_diff_objects = (long)uo - live_objects;
    last_diff_bytes = (long)us - live_bytes;
    long lo = live_objects, lb = live_bytes, wf = window_frees;
    long permille = lo ? labs(last_diff_objects) * 1000 / lo : 1000;
    if (permille > worst_permille)
        worst_permille = permille;
    pthread_mutex_unlock(&lk);
    if (!was_open)
        C_FAIL_SOME(f_finish, "GC_FINISH without GC_START");
    else if (ev->env_id != wenv || !same_thread)
        C_FAIL_SOME(f_gc_env, "GC_FINISH env_id %p%s, GC_START had env_id %p", (void *)ev->env_id,
                    same_thread ? "" : " on another thread than GC_START's", (void *)wenv);
    if (disabled)
        C_FAIL_SOME(f_disabled, "GC_FINISH while GC is disabled");
    if (!(uo > 0 && us > 0 && ts >= us))
        C_FAIL_SOME(f_gc_info, "GC_FINISH gc_info used_objects %lld used_object_space %lld total_object_space %lld",
                    (long long)uo, (long long)us, (long long)ts);
    /* The agent has been told about every object since JVM_OnLoad (start-up
     * replay included), so its count and the layer's must agree, up to
     * objects allocated by other threads while this window was delivered. */
    if (labs((long)uo - lo) > lo / 100 + 50 || labs((long)us - lb) > lb / 100 + 5000)
        C_FAIL_SOME(f_gc_count,
                    "GC_FINISH says %lld objects / %lld bytes in use, the agent counts %ld / %ld (allocated, not "
                    "freed); %ld frees in this window",
                    (long long)uo, (long long)us, lo, lb, wf);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_alloc(ev);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        on_free(ev);
        break;
    case JVMPI_EVENT_GC_START:
        on_gc_start(ev);
        break;
    case JVMPI_EVENT_GC_FINISH:
        on_gc_finish(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        pthread_mutex_lock(&lk);
        c_classes_add(&classes, ev->u.class_load.class_id, ev->u.class_load.class_name);
        if (c_streq(ev->u.class_load.class_name, "C_Marker"))
            marker_id = ev->u.class_load.class_id;
        pthread_mutex_unlock(&lk);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        pthread_mutex_lock(&lk);
        long a = n_alloc;
        pthread_mutex_unlock(&lk);
        c_log("JVM_INIT_DONE after %ld OBJECT_ALLOC", a);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        pthread_mutex_lock(&lk);
        c_log("JVM_SHUT_DOWN: %ld OBJECT_ALLOC, %ld OBJECT_FREE, %ld GC windows, worst gc_info/agent object count "
              "difference %ld per mille",
              n_alloc, n_free, n_windows, worst_permille);
        pthread_mutex_unlock(&lk);
        c_summary("c_gc");
        break;
    default:
        /* OBJECT_MOVE, ARENA_NEW, ARENA_DELETE included: they must never come. */
        c_fail("event type %d arrived (never to be sent)", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    if (c_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    c_pi->NotifyEvent = notify;
    c_enable(JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD");
    c_enable(JVMPI_EVENT_OBJECT_ALLOC, "OBJECT_ALLOC");
    c_enable(JVMPI_EVENT_OBJECT_FREE, "OBJECT_FREE");
    c_enable(JVMPI_EVENT_GC_START, "GC_START");
    c_enable(JVMPI_EVENT_GC_FINISH, "GC_FINISH");
    c_enable(JVMPI_EVENT_OBJECT_MOVE, "OBJECT_MOVE");
    c_enable(JVMPI_EVENT_ARENA_NEW, "ARENA_NEW");
    c_enable(JVMPI_EVENT_ARENA_DELETE, "ARENA_DELETE");
    c_enable(JVMPI_EVENT_JVM_INIT_DONE, "JVM_INIT_DONE");
    c_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    c_log("START");
    return JNI_OK;
}

/* ---- natives ---- */

typedef struct {
    long windows, marker_allocs, marker_frees, marker_live;
} snapshot;

static snapshot snap(void)
{
    pthread_mutex_lock(&lk);
    snapshot s = {n_windows, marker_allocs, marker_frees, marker_live};
    pthread_mutex_unlock(&lk);
    return s;
}

static snapshot since_check; /* the marker counts at the last check */
/* Windows delivered before the program last resized the heap (the
 * System.gc() calls made once GC is disabled): their total_object_space
 * cannot be compared with Runtime.totalMemory() read after the resize. */
static long windows_before_resize;

/* Set by the last EnableGC: the window held back while GC was disabled may
 * still be on its way when the next RunGC starts. */
static int held_back_may_follow;

/* RunGC; its window must come on this thread before it returns, and only
 * one: HotSpot 5.0 posted one GC_START/GC_FINISH for RunGC's collection,
 * and nothing else allocates in the program meanwhile (but for a window
 * held back by DisableGC, delivered once GC is enabled again). */
static void run_gc(JNIEnv *env, const char *label)
{
    snapshot before = snap();
    c_pi->RunGC();
    pthread_mutex_lock(&lk);
    long w = n_windows - before.windows;
    long most = held_back_may_follow ? 2 : 1;
    held_back_may_follow = 0;
    JNIEnv *wenv = window_env;
    int open = window_open;
    pthread_mutex_unlock(&lk);
    c_check(w >= 1 && w <= most && !open && wenv == env,
            "%s: RunGC delivered %ld window(s) before returning, the last on env %p (caller %p)%s", label, w,
            (void *)wenv, (void *)env, open ? ", still open" : "");
}

static void check_gc_info(const char *label, jlong total_memory);

/* Marker counts since the last check; gc_info only if a window came since
 * (else there is none yet, or it predates heap resizing the program did). */
static void check_markers(const char *label, int allocated, int freed, int live, jlong total_memory)
{
    snapshot now = snap();
    if (now.windows > since_check.windows && now.windows > windows_before_resize)
        check_gc_info(label, total_memory);
    else
        c_log("%s: no GC window since the last check and the last heap resize", label);
    long a = now.marker_allocs - since_check.marker_allocs, f = now.marker_frees - since_check.marker_frees;
    c_check(a == allocated, "%s: %ld OBJECT_ALLOC of C_Marker since the last check (the program made %d)", label, a,
            allocated);
    c_check(f == freed, "%s: %ld OBJECT_FREE of C_Marker since the last check (the program dropped %d)", label, f,
            freed);
    c_check(now.marker_live == live, "%s: %ld C_Marker allocated and not freed (the program holds %d)", label,
            now.marker_live, live);
    since_check = now;
}

static void check_gc_info(const char *label, jlong total_memory)
{
    pthread_mutex_lock(&lk);
    jlong uo = last_used_objects, us = last_used_space, ts = last_total_space;
    long dobj = last_diff_objects, dbytes = last_diff_bytes, lo = live_objects;
    pthread_mutex_unlock(&lk);
    c_log("%s: last GC_FINISH used_objects %lld used_object_space %lld total_object_space %lld; "
          "Runtime.totalMemory() %lld; gc_info - agent count: %ld objects, %ld bytes (agent: %ld live)",
          label, (long long)uo, (long long)us, (long long)ts, (long long)total_memory, dobj, dbytes, lo);
    c_check(uo > 0 && us > 0 && ts >= us, "%s: gc_info used_objects %lld > 0, used_object_space %lld > 0, <= total %lld",
            label, (long long)uo, (long long)us, (long long)ts);
    c_check(ts >= total_memory - total_memory / 10 && ts <= total_memory + total_memory / 10,
            "%s: total_object_space %lld within 10%% of Runtime.totalMemory() %lld", label, (long long)ts,
            (long long)total_memory);
}

JNIEXPORT void JNICALL Java_C_1Gc_runGC(JNIEnv *env, jclass cls)
{
    (void)cls;
    if (c_ready("runGC"))
        run_gc(env, "runGC");
}

JNIEXPORT void JNICALL Java_C_1Gc_check(JNIEnv *env, jclass cls, jstring jlabel, jint allocated, jint freed,
                                         jint live, jlong total_memory)
{
    (void)cls;
    if (!c_ready("check"))
        return;
    const char *label = (*env)->GetStringUTFChars(env, jlabel, NULL);
    check_markers(label, allocated, freed, live, total_memory);
    (*env)->ReleaseStringUTFChars(env, jlabel, label);
}

JNIEXPORT void JNICALL Java_C_1GcCtl_runGC(JNIEnv *env, jclass cls)
{
    Java_C_1Gc_runGC(env, cls);
}

JNIEXPORT void JNICALL Java_C_1GcCtl_check(JNIEnv *env, jclass cls, jstring jlabel, jint allocated, jint freed,
                                            jint live, jlong total_memory)
{
    Java_C_1Gc_check(env, cls, jlabel, allocated, freed, live, total_memory);
}

/* DisableGC twice, EnableGC once: still disabled. */
JNIEXPORT void JNICALL Java_C_1GcCtl_disableTwiceEnableOnce(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    if (!c_ready("disableTwiceEnableOnce"))
        return;
    c_pi->DisableGC();
    c_pi->DisableGC();
    c_pi->EnableGC();
    pthread_mutex_lock(&lk);
    gc_disabled = 1;
    events_while_disabled = 0;
    windows_before_resize = n_windows; /* the program's System.gc() calls come next */
    pthread_mutex_unlock(&lk);
    c_log("GC disabled (DisableGC, DisableGC, EnableGC)");
}

/* RunGC while disabled: refused, no window. */
JNIEXPORT void JNICALL Java_C_1GcCtl_runGCDisabled(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    if (!c_ready("runGCDisabled"))
        return;
    snapshot before = snap();
    c_pi->RunGC();
    snapshot after = snap();
    c_check(after.windows == before.windows && after.marker_frees == before.marker_frees,
            "RunGC while GC is disabled delivers no window (%ld windows, %ld marker frees)",
            after.windows - before.windows, after.marker_frees - before.marker_frees);
}

/* The last EnableGC; the held-back window may follow at once. */
JNIEXPORT void JNICALL Java_C_1GcCtl_enableGC(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    if (!c_ready("enableGC"))
        return;
    pthread_mutex_lock(&lk);
    long during = events_while_disabled;
    gc_disabled = 0;
    held_back_may_follow = 1;
    pthread_mutex_unlock(&lk);
    c_check(during == 0, "no GC_START, GC_FINISH or OBJECT_FREE while GC was disabled (got %ld)", during);
    c_pi->EnableGC();
    c_log("GC enabled again");
}
