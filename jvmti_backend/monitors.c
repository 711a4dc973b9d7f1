/*
 * monitors.c - Java monitors through JVM TI: the contention and wait
 * callbacks, the owner of a monitor, the MONITOR_DUMP snapshot, and the
 * wrapper around the VM's sleep native (JVM TI has no sleep event; JVMPI
 * reported Thread.sleep as a wait on NULL).
 *
 * The sleep native.  JDK 17: Thread.sleep(long ms) is itself native; JDK
 * 21+: Thread.sleep is Java code around a private native (sleep0 on 21,
 * sleepNanos0 on 25) taking nanoseconds.  Thread's static initializer
 * registers it early, before the live phase.  An environment with
 * can_generate_early_vmstart is already in the start phase then, so its
 * NativeMethodBind callback can name the method (GetMethodName answers
 * WRONG_PHASE in the primordial phase) and put the wrapper in front of the
 * VM's function.  That environment is the layer's third, of its own, so the
 * early start phase changes nothing for the others.  Once the wrapper is
 * in, NativeMethodBind goes off.  (Rebinding later, with RegisterNatives
 * from VMInit, works too but makes HotSpot log "Re-registering of platform
 * native method" on stdout; re-running Thread.registerNatives() posts no
 * bind at all, the address being unchanged.)
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "monowner.h"

/* ---- capabilities ------------------------------------------------------------ */

/* Both can be added in the live phase, so they are taken when first needed:
 * an agent that never asks pays nothing for them. */
static bool add_capability(bool events)
{
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    if (events) {
        caps.can_generate_monitor_events = 1;
    } else {
        caps.can_get_monitor_info = 1;
    }
    return bk_need_capabilities(&caps);
}

static bool set_pair(jvmtiEvent a, jvmtiEvent b, bool on)
{
    if (on && !add_capability(true)) {
        return false;
    }
    if (!bk_set_event(bk.jvmti, a, on)) {
        return false;
    }
    if (!bk_set_event(bk.jvmti, b, on)) {
        bk_set_event(bk.jvmti, a, !on);
        return false;
    }
    return true;
}

bool bk_monitor_source_set(seam_source source, bool on)
{
    /* CONTENDED_EXIT needs the owner of a monitor (GetObjectMonitorUsage). */
    if (on && source == SEAM_SRC_MONITOR_CONTENDED) {
        add_capability(false);
    }
    if (source == SEAM_SRC_MONITOR_CONTENDED) {
        return set_pair(JVMTI_EVENT_MONITOR_CONTENDED_ENTER, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, on);
    }
    return set_pair(JVMTI_EVENT_MONITOR_WAIT, JVMTI_EVENT_MONITOR_WAITED, on);
}

/* ---- callbacks ----------------------------------------------------------------- */

static jobjectID id_of(JNIEnv *env, jobject obj)
{
    jlong tag = obj != NULL ? bk_object_tag(env, obj) : 0;
    return tag != 0 ? seam_id_from_tag(tag) : NULL;
}

void JNICALL bk_on_monitor_contended_enter(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jobject object)
{
    BEGIN_CALLBACK();
    layer_monitor_contended_enter(env, object, id_of(env, object));
    END_CALLBACK();
}

void JNICALL bk_on_monitor_contended_entered(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jobject object)
{
    BEGIN_CALLBACK();
    layer_monitor_contended_entered(env, id_of(env, object));
    END_CALLBACK();
}

void JNICALL bk_on_monitor_wait(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jobject object, jlong timeout)
{
    BEGIN_CALLBACK();
    layer_monitor_wait(env, id_of(env, object), timeout);
    END_CALLBACK();
}

void JNICALL bk_on_monitor_waited(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jobject object,
                                  jboolean timed_out)
{
    BEGIN_CALLBACK();
    layer_monitor_waited(env, id_of(env, object), timed_out != JNI_FALSE);
    END_CALLBACK();
}

/* ---- the dump snapshot (the owner alone: monowner.c) -------------------------------- */

static jobjectID thread_id(JNIEnv *env, jthread thread) { return id_of(env, thread); }

/* What a thread said of a monitor (GetOwnedMonitorInfo,
 * GetCurrentContendedMonitor): GetObjectMonitorUsage names no virtual
 * thread that is off its carrier (JDK 24 on), so the threads' own reports
 * fill in what it leaves out. */
typedef struct {
    int monitor;
    jobjectID thread;
    bool owns;
    jint status; /* of a contending thread: MONITOR_WAIT entering, CONDVAR_WAIT in wait() */
} said;

typedef struct {
    jobject *objects;   /* local refs, one per monitor, parallel to snap->monitors */
    int cap;
    said *says;
    int n_says, cap_says;
} snap_priv;

static void add_said(snap_priv *p, int monitor, jobjectID thread, bool owns, jint status)
{
    if (monitor < 0 || thread == NULL) {
        return;
    }
    if (p->n_says == p->cap_says) {
        int cap = p->cap_says ? p->cap_says * 2 : 16;
        said *grown = realloc(p->says, (size_t)cap * sizeof *grown);
        if (grown == NULL) {
            return;
        }
        p->says = grown;
        p->cap_says = cap;
    }
    p->says[p->n_says++] = (said){monitor, thread, owns, status};
}

/* The monitor's index in the snapshot, added if new (obj then belongs to
 * the snapshot; else the caller deletes it); -1 on failure. */
static int add_monitor(JNIEnv *env, seam_monitor_snapshot *s, snap_priv *p, jobject obj, bool *kept)
{
    *kept = false;
    jobjectID id = id_of(env, obj);
    if (id == NULL) {
        return -1;
    }
    for (int i = 0; i < s->num_monitors; i++) {
        if (s->monitors[i].object == id) {
            return i;
        }
    }
    if (s->num_monitors == p->cap) {
        int cap = p->cap ? p->cap * 2 : 16;
        seam_monitor_info *m = realloc(s->monitors, (size_t)cap * sizeof *m);
        if (m == NULL) {
            return -1;
        }
        s->monitors = m;
        jobject *o = realloc(p->objects, (size_t)cap * sizeof *o);
        if (o == NULL) {
            return -1;
        }
        p->objects = o;
        p->cap = cap;
    }
    memset(&s->monitors[s->num_monitors], 0, sizeof s->monitors[0]);
    s->monitors[s->num_monitors].object = id;
    p->objects[s->num_monitors] = obj;
    *kept = true;
    return s->num_monitors++;
}

static bool listed(const jobjectID *list, jint n, jobjectID id)
{
    for (jint i = 0; i < n; i++) {
        if (list[i] == id) {
            return true;
        }
    }
    return false;
}

/* What the threads said of monitor i that GetObjectMonitorUsage left out. */
static void fill_from_threads(seam_monitor_info *m, int i, const snap_priv *p)
{
    for (int k = 0; k < p->n_says; k++) {
        const said *w = &p->says[k];
        if (w->monitor != i) {
            continue;
        }
        if (w->owns) {
            if (m->owner == NULL) {
                m->owner = w->thread;
                m->entry_count = 1; /* at least; JVM TI tells no more here */
            }
        } else if (w->thread != m->owner && !listed(m->entering, m->n_entering, w->thread) &&
                   !listed(m->waiting, m->n_waiting, w->thread)) {
            bool in_wait = w->status == JVMPI_THREAD_CONDVAR_WAIT;
            jobjectID **list = in_wait ? &m->waiting : &m->entering;
            jint *n = in_wait ? &m->n_waiting : &m->n_entering;
            jobjectID *grown = realloc(*list, ((size_t)*n + 1) * sizeof **list);
            if (grown != NULL) {
                *list = grown;
                grown[(*n)++] = w->thread;
            }
        }
    }
}

static bool same_thread(JNIEnv *env, jthread a, jthread b) { return (*env)->IsSameObject(env, a, b); }

/* JVM TI's waiters are the threads waiting to own the monitor; up to JDK 22
 * HotSpot put the Object.wait threads in that list too (and notify_waiters
 * were the Object.wait threads in both).  Entering = waiters - notify_waiters
 * is right under both readings. */
static void fill_usage(JNIEnv *env, seam_monitor_info *m, jobject obj)
{
    jvmtiMonitorUsage u;
    memset(&u, 0, sizeof u);
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetObjectMonitorUsage, obj, &u))) {
        return;
    }
    m->owner = u.owner != NULL ? thread_id(env, u.owner) : NULL;
    m->entry_count = u.owner != NULL ? u.entry_count : 0;
    m->entering = calloc((size_t)u.waiter_count + 1, sizeof *m->entering);
    m->waiting = calloc((size_t)u.notify_waiter_count + 1, sizeof *m->waiting);
    if (m->entering != NULL && m->waiting != NULL) {
        for (jint i = 0; i < u.waiter_count; i++) {
            bool notified_wait = false;
            for (jint j = 0; j < u.notify_waiter_count && !notified_wait; j++) {
                notified_wait = same_thread(env, u.waiters[i], u.notify_waiters[j]);
            }
            if (!notified_wait) {
                m->entering[m->n_entering++] = thread_id(env, u.waiters[i]);
            }
        }
        for (jint j = 0; j < u.notify_waiter_count; j++) {
            m->waiting[m->n_waiting++] = thread_id(env, u.notify_waiters[j]);
        }
    }
    bk_monitor_usage_free(env, &u);
}

/* One thread of the snapshot: its ID, status and trace, and the monitors it
 * owns or is entering. */
static void add_thread(JNIEnv *env, seam_monitor_snapshot *out, snap_priv *p, jthread thread, jint max_frames)
{
    seam_monitor_thread *t = &out->threads[out->num_threads];
    t->id = thread_id(env, thread);
    if (t->id == NULL) {
        return;
    }
    t->status = seam_thread_status(thread);
    t->frames = max_frames > 0 ? calloc((size_t)max_frames, sizeof *t->frames) : NULL;
    if (t->frames != NULL) {
        t->num_frames = seam_call_trace(thread, max_frames, t->frames);
    }
    out->num_threads++;

    jint owned = 0;
    jobject *objs = NULL;
    bool kept;
    if (JVMTI_OK(JVMTI_TRY(bk.jvmti, GetOwnedMonitorInfo, thread, &owned, &objs))) {
        for (jint k = 0; k < owned; k++) {
            add_said(p, add_monitor(env, out, p, objs[k], &kept), t->id, true, 0);
            if (!kept) {
                (*env)->DeleteLocalRef(env, objs[k]);
            }
        }
        bk_deallocate(objs);
    }
    jobject contended = NULL;
    if (JVMTI_OK(JVMTI_TRY(bk.jvmti, GetCurrentContendedMonitor, thread, &contended)) && contended != NULL) {
        add_said(p, add_monitor(env, out, p, contended, &kept), t->id, false, t->status & ~JVMPI_THREAD_SUSPENDED &
                 ~JVMPI_THREAD_INTERRUPTED);
        if (!kept) {
            (*env)->DeleteLocalRef(env, contended);
        }
    }
}

bool seam_monitor_snapshot_take(JNIEnv *env, jint max_frames, void *const *vthreads, int n_vthreads,
                                seam_monitor_snapshot *out)
{
    memset(out, 0, sizeof *out);
    if (!bk.caps_monitors) {
        bk_caps_missing("MONITOR_DUMP");
        return false;
    }
    if (!add_capability(false)) {
        LOG_ERROR("MONITOR_DUMP: the VM refused can_get_monitor_info");
        return false;
    }
    snap_priv *p = calloc(1, sizeof *p);
    jint n = 0;
    jthread *threads = NULL;
    if (p == NULL || (*env)->PushLocalFrame(env, 64) != 0) {
        free(p);
        LOG_ERROR("MONITOR_DUMP: out of memory");
        return false;
    }
    out->priv = p;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetAllThreads, &n, &threads))) {
        (*env)->PopLocalFrame(env, NULL);
        return false;
    }
    out->threads = calloc((size_t)n + (size_t)n_vthreads + 1, sizeof *out->threads);
    if (out->threads == NULL) {
        bk_deallocate(threads);
        (*env)->PopLocalFrame(env, NULL);
        return false;
    }
    for (jint i = 0; i < n; i++) {
        add_thread(env, out, p, threads[i], max_frames);
    }
    for (int i = 0; i < n_vthreads; i++) {
        add_thread(env, out, p, (jthread)vthreads[i], max_frames);
    }
    jclass class_class = (*env)->FindClass(env, "java/lang/Class");
    /* Where GetObjectMonitorUsage may answer without stopping the threads
     * (monowner.c), it can read freed memory: there the threads' own
     * reports (GetOwnedMonitorInfo, GetCurrentContendedMonitor, each read
     * with that thread stopped) say who owns, enters and waits. */
    bool ask_usage = !bk_monowner_careful();
    for (int i = 0; i < out->num_monitors; i++) {
        if (ask_usage) {
            fill_usage(env, &out->monitors[i], p->objects[i]);
        }
        fill_from_threads(&out->monitors[i], i, p);
        out->monitors[i].is_class = class_class != NULL && (*env)->IsInstanceOf(env, p->objects[i], class_class);
    }
    bk_deallocate(threads);
    (*env)->PopLocalFrame(env, NULL);
    return true;
}

void seam_monitor_snapshot_free(seam_monitor_snapshot *snap)
{
    for (int i = 0; i < snap->num_monitors; i++) {
        free(snap->monitors[i].entering);
        free(snap->monitors[i].waiting);
    }
    for (int i = 0; i < snap->num_threads; i++) {
        free(snap->threads[i].frames);
    }
    free(snap->monitors);
    free(snap->threads);
    snap_priv *p = snap->priv;
    if (p != NULL) {
        free(p->objects);
        free(p->says);
        free(p);
    }
    memset(snap, 0, sizeof *snap);
}

/* ---- Thread.sleep ------------------------------------------------------------------- */

typedef void(JNICALL *sleep_fn)(JNIEnv *, jclass, jlong);

static sleep_fn sleep_vm;        /* the VM's own sleep native */
static bool sleep_takes_nanos;

static void JNICALL sleep_wrapper(JNIEnv *env, jclass cls, jlong t)
{
    if (t < 0 || !layer_sleep_events_wanted()) {
        sleep_vm(env, cls, t);
        return;
    }
    jlong ms = sleep_takes_nanos ? t / 1000000 + (t % 1000000 != 0) : t;
    /* Not one callback across the sleep: VM death waits for callbacks. */
    if (bk_callback_enter()) {
        layer_monitor_wait(env, NULL, ms);
        bk_callback_exit();
    }
    sleep_vm(env, cls, t);
    if (bk_callback_enter()) {
        /* An interrupted sleep returns with InterruptedException pending:
         * no JNI call is allowed then, and agent handlers make them. */
        jthrowable pending = (*env)->ExceptionOccurred(env);
        if (pending != NULL) {
            (*env)->ExceptionClear(env);
        }
        layer_monitor_waited(env, NULL, false);
        if (pending != NULL) {
            (*env)->Throw(env, pending);
            (*env)->DeleteLocalRef(env, pending);
        }
        bk_callback_exit();
    }
}

typedef struct {
    const char *name;
    bool nanos;
} sleep_native;

/* JDK 17 (ms), JDK 21 (ns), JDK 25 (ns), all (J)V in java.lang.Thread. */
static const sleep_native sleep_natives[] = {{"sleep", false}, {"sleep0", true}, {"sleepNanos0", true}};

static pthread_mutex_t bind_lock = PTHREAD_MUTEX_INITIALIZER;
static jvmtiEnv *bind_env;

static void stop_bind_events(void)
{
    bk_set_event(bind_env, JVMTI_EVENT_NATIVE_METHOD_BIND, false);
}

/* Which sleep native method is, -1 for none. */
static int sleep_native_of(JNIEnv *env, jmethodID method)
{
    char *name = NULL, *sig = NULL, *csig = NULL;
    jclass cls = NULL;
    int which = -1;
    if (!JVMTI_OK(JVMTI_TRY(bind_env, GetMethodName, method, &name, &sig, NULL))) {
        return -1;
    }
    if (strcmp(sig, "(J)V") == 0) {
        for (int i = 0; i < (int)(sizeof sleep_natives / sizeof sleep_natives[0]); i++) {
            if (strcmp(name, sleep_natives[i].name) == 0) {
                which = i;
            }
        }
    }
    if (which >= 0 && JVMTI_OK(JVMTI_TRY(bind_env, GetMethodDeclaringClass, method, &cls)) &&
        JVMTI_OK(JVMTI_TRY(bind_env, GetClassSignature, cls, &csig, NULL)) &&
        strcmp(csig, "Ljava/lang/Thread;") != 0) {
        which = -1;
    }
    JVMTI_CALL(bind_env, Deallocate, (unsigned char *)name);
    JVMTI_CALL(bind_env, Deallocate, (unsigned char *)sig);
    if (csig != NULL) {
        JVMTI_CALL(bind_env, Deallocate, (unsigned char *)csig);
    }
    if (cls != NULL && env != NULL) {
        (*env)->DeleteLocalRef(env, cls);
    }
    return which;
}

void JNICALL bk_on_native_bind(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jmethodID method, void *address,
                               void **new_address)
{
    BEGIN_CALLBACK();
    bool found = false;
    if (address != (void *)sleep_wrapper) {
        int which = sleep_native_of(env, method);
        pthread_mutex_lock(&bind_lock);
        if (which >= 0 && sleep_vm == NULL) {
            sleep_vm = (sleep_fn)address;
            sleep_takes_nanos = sleep_natives[which].nanos;
            *new_address = (void *)sleep_wrapper;
            found = true;
        }
        pthread_mutex_unlock(&bind_lock);
    }
    jvmtiPhase phase = JVMTI_PHASE_START;
    JVMTI_CALL(bind_env, GetPhase, &phase);
    /* Events can be switched only in the live phase: else VM init does it. */
    if (found && phase == JVMTI_PHASE_LIVE) {
        stop_bind_events();
    }
    END_CALLBACK();
}

void bk_monitors_vm_init(JNIEnv *env)
{
    bk_monowner_vm_init(env);
    pthread_mutex_lock(&bind_lock);
    bool wrapped = sleep_vm != NULL;
    pthread_mutex_unlock(&bind_lock);
    if (wrapped) {
        stop_bind_events();
    } else if (bind_env != NULL) {
        /* A JDK that binds it lazily is still caught: the event stays on. */
        LOG_WARN("the sleep native of java.lang.Thread is not bound yet: sleeps are reported once it is");
    }
}

bool bk_monitors_onload(JavaVM *vm)
{
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    /* Without the early start phase (JVM TI 1.2) the bind is missed and VM
     * init binds the wrapper itself (bind_late). */
    caps.can_generate_early_vmstart = bk.early_vmstart;
    caps.can_generate_native_method_bind_events = 1;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.NativeMethodBind = bk_on_native_bind;
    if ((*vm)->GetEnv(vm, (void **)&bind_env, JVMTI_VERSION_1_2) != JNI_OK ||
        !JVMTI_OK(JVMTI_CALL(bind_env, AddCapabilities, &caps)) ||
        !JVMTI_OK(JVMTI_CALL(bind_env, SetEventCallbacks, &cb, (jint)sizeof cb)) ||
        !bk_set_event(bind_env, JVMTI_EVENT_NATIVE_METHOD_BIND, true)) {
        LOG_ERROR("no NativeMethodBind: MONITOR_WAIT will not report Thread.sleep");
        bind_env = NULL;
    }
    return true; /* sleeps unreported is no reason to stop the layer */
}
