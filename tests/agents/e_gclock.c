/*
 * e_gclock - an agent that locks the way the JVMPI specification tells it
 * to: "To avoid deadlocks, the profiler agent should grab any locks that are
 * needed for handling object free, object move, and arena delete events in
 * the event handler for this event" (GC_START), and release them in
 * GC_FINISH.  Its object table is guarded by one raw monitor: OBJECT_ALLOC
 * enters it; GC_START enters it and keeps it until GC_FINISH, so the
 * OBJECT_FREE handlers in between use the table without taking anything.
 *
 * That is only safe because of what the spec promises about the window
 * between GC_START and GC_FINISH, and the agent checks each promise:
 *  - "The system goes into thread suspended mode after this event"
 *    (GC_START) and "gets back into the multi-threaded mode after" GC_FINISH:
 *    no event may start on any other OS thread while a window is open, and
 *    on the window's own thread only OBJECT_FREE, OBJECT_MOVE or ARENA_DELETE
 *    may come before GC_FINISH;
 *  - events carrying object IDs (OBJECT_ALLOC, CLASS_LOAD, THREAD_START) are
 *    issued with GC disabled, so no GC_START may come while a handler of one
 *    is running on another thread;
 *  - OBJECT_FREE "is always sent between a pair of JVMPI_EVENT_GC_START and
 *    JVMPI_EVENT_GC_FINISH events", and names an object an OBJECT_ALLOC
 *    defined;
 *  - every event comes from a thread a THREAD_START defined (GC_START too:
 *    its env_id may be any thread the agent knows), see e_common.h;
 *  - RunGC "forces a complete garbage collection": called from the agent's
 *    system thread (rungc=N times, every rungc_ms=MS), its window must
 *    arrive before RunGC returns, naming the calling thread (env_id), on
 *    whatever OS thread: JDK 5.0's VM thread sent it for the caller.
 * The window's owner is the OS thread (pthread_self) that ran GC_START.
 *
 * Options: out=FILE, methods=1 (also METHOD_ENTRY and METHOD_EXIT),
 * rungc=N (default 3), rungc_ms=MS (default 700), keepgoing=1.
 */
#include "e_common.h"

static JVMPI_RawMonitor gc_lock; /* guards objs */
static e_map objs;               /* live object IDs */
/* keepgoing=1 only: once the window is known to be broken, waiting on its
 * lock can hang the VM (seen on JDK 17: the window's thread waited inside
 * the VM for a deoptimization that an allocating thread, blocked on the
 * lock, was doing).  The table then has a mutex of its own instead. */
static pthread_mutex_t table_lk = PTHREAD_MUTEX_INITIALIZER;
static long n_allocs, n_frees, n_windows, n_rungc, n_events;

static int window;            /* a window is open (atomic) */
static pthread_t window_thread; /* valid while window is set */
static JNIEnv *window_env;
static long in_gc_off;        /* handlers of events issued with GC disabled now running (atomic) */

static int rungc_wanted;
static long rungc_ms;

/* The RunGC in progress, if any: windows that name its caller. */
typedef struct {
    JNIEnv *caller;
    int starts, finishes;
} rungc_probe;
static rungc_probe *_Atomic probe;

#define LIVE ((void *)(uintptr_t)2)

/* Every event first: nothing may start on another OS thread while a window
 * is open, and on the window's thread only the window's own events (or the
 * answer to a request of the agent's, which this agent never makes there). */
static void window_guard(const JVMPI_Event *ev, jint type)
{
    if (!__atomic_load_n(&window, __ATOMIC_SEQ_CST)) {
        e_pass();
        return;
    }
    pthread_t owner = window_thread;
    JNIEnv *wenv = window_env;
    if (!pthread_equal(owner, pthread_self()))
        E_FAIL("%s (env %p) on another OS thread while the GC window opened by GC_START (env %p) is open: the "
               "JVMPI spec has the system in thread suspended mode from GC_START to GC_FINISH",
               e_event_name(type), (void *)ev->env_id, (void *)wenv);
    else if (type != JVMPI_EVENT_OBJECT_FREE && type != JVMPI_EVENT_OBJECT_MOVE &&
             type != JVMPI_EVENT_ARENA_DELETE && type != JVMPI_EVENT_GC_FINISH &&
             !(ev->event_type & JVMPI_REQUESTED_EVENT))
        E_FAIL("%s inside the GC window, on the window's own thread (env %p)", e_event_name(type),
               (void *)ev->env_id);
    else
        e_pass();
}

/* Around the handlers of events the spec issues with GC disabled. */
static void gc_off_enter(jint type)
{
    __atomic_add_fetch(&in_gc_off, 1, __ATOMIC_SEQ_CST);
    /* GC_START sets window before it reads in_gc_off; this reads window after
     * setting in_gc_off: one of the two sees the other. */
    if (__atomic_load_n(&window, __ATOMIC_SEQ_CST) && !pthread_equal(window_thread, pthread_self()))
        E_FAIL("%s, an event issued with GC disabled, began while a GC window is open on another thread",
               e_event_name(type));
}

static void gc_off_leave(void)
{
    __atomic_sub_fetch(&in_gc_off, 1, __ATOMIC_SEQ_CST);
}

static void on_gc_start(const JVMPI_Event *ev)
{
    if (__atomic_load_n(&window, __ATOMIC_SEQ_CST)) {
        E_FAIL("GC_START (env %p) while a window is open already (GC_START of env %p had no GC_FINISH)",
               (void *)ev->env_id, (void *)window_env);
        return;
    }
    window_thread = pthread_self();
    window_env = ev->env_id;
    __atomic_store_n(&window, 1, __ATOMIC_SEQ_CST);
    long busy = __atomic_load_n(&in_gc_off, __ATOMIC_SEQ_CST);
    if (busy)
        E_FAIL("GC_START (env %p) while %ld handlers of events issued with GC disabled (OBJECT_ALLOC, CLASS_LOAD, "
               "THREAD_START) are running on other threads",
               (void *)ev->env_id, busy);
    else
        e_pass();
    /* The lock OBJECT_FREE needs, as the spec advises. */
    e_pi->RawMonitorEnter(gc_lock);
    rungc_probe *p = __atomic_load_n(&probe, __ATOMIC_ACQUIRE);
    if (p && p->caller == ev->env_id)
        p->starts++;
}

static void on_gc_finish(const JVMPI_Event *ev)
{
    if (!__atomic_load_n(&window, __ATOMIC_SEQ_CST)) {
        E_FAIL("GC_FINISH (env %p) without a GC_START", (void *)ev->env_id);
        return;
    }
    if (!pthread_equal(window_thread, pthread_self()))
        return; /* window_guard said so; the lock is not this thread's */
    n_windows++;
    if (ev->u.gc_info.used_objects < 0 || ev->u.gc_info.used_object_space < 0 ||
        ev->u.gc_info.total_object_space < ev->u.gc_info.used_object_space)
        E_FAIL("GC_FINISH: used_objects %lld, used_object_space %lld, total_object_space %lld",
               (long long)ev->u.gc_info.used_objects, (long long)ev->u.gc_info.used_object_space,
               (long long)ev->u.gc_info.total_object_space);
    __atomic_store_n(&window, 0, __ATOMIC_SEQ_CST);
    e_pi->RawMonitorExit(gc_lock);
    rungc_probe *p = __atomic_load_n(&probe, __ATOMIC_ACQUIRE);
    if (p && p->caller == ev->env_id)
        p->finishes++;
    e_pass();
}

static void on_obj_free(const JVMPI_Event *ev)
{
    if (!__atomic_load_n(&window, __ATOMIC_SEQ_CST)) {
        E_FAIL("OBJECT_FREE of %p outside a GC_START .. GC_FINISH window", (void *)ev->u.obj_free.obj_id);
        return;
    }
    if (!pthread_equal(window_thread, pthread_self()))
        return; /* window_guard said so; the table is not this thread's to touch */
    /* gc_lock is held by this thread since GC_START. */
    if (e_keepgoing)
        pthread_mutex_lock(&table_lk);
    n_frees++;
    int known = e_map_del(&objs, ev->u.obj_free.obj_id);
    if (e_keepgoing)
        pthread_mutex_unlock(&table_lk);
    if (!known)
        E_FAIL("OBJECT_FREE of %p, an object ID no OBJECT_ALLOC defined (or freed already)",
               (void *)ev->u.obj_free.obj_id);
    else
        e_pass();
}

static void on_obj_alloc(const JVMPI_Event *ev)
{
    jobjectID id = ev->u.obj_alloc.obj_id;
    if (!id) {
        E_FAIL("OBJECT_ALLOC with obj_id NULL");
        return;
    }
    if (e_keepgoing)
        pthread_mutex_lock(&table_lk);
    else
        e_pi->RawMonitorEnter(gc_lock);
    int fresh = e_map_put(&objs, id, LIVE);
    n_allocs++;
    if (e_keepgoing)
        pthread_mutex_unlock(&table_lk);
    else
        e_pi->RawMonitorExit(gc_lock);
    if (!fresh)
        E_FAIL("OBJECT_ALLOC of %p: that object ID is live already", (void *)id);
}

/* ---- RunGC from a system thread ---- */

static void gc_thread(void *unused)
{
    rungc_probe p;
    for (int i = 0; i < rungc_wanted; i++) {
        e_sleep_ms(rungc_ms);
        if (__atomic_load_n(&e_shut_down, __ATOMIC_ACQUIRE))
            return;
        memset(&p, 0, sizeof p);
        if ((*e_vm)->GetEnv(e_vm, (void **)&p.caller, JNI_VERSION_1_2) != JNI_OK)
            p.caller = NULL;
        __atomic_store_n(&probe, &p, __ATOMIC_RELEASE);
        e_pi->RunGC();
        __atomic_store_n(&probe, NULL, __ATOMIC_RELEASE);
        if (__atomic_load_n(&e_shut_down, __ATOMIC_ACQUIRE))
            return;
        __atomic_add_fetch(&n_rungc, 1, __ATOMIC_RELAXED);
        if (p.starts < 1 || p.finishes != p.starts)
            E_FAIL("RunGC %d returned after %d GC_START and %d GC_FINISH naming its thread: its GC window must "
                   "arrive before RunGC returns", i + 1, p.starts, p.finishes);
        else
            e_pass();
    }
    e_say("RunGC: %d calls done", rungc_wanted);
}

static void JNICALL notify(JVMPI_Event *ev)
{
    if (!e_accept(ev))
        return;
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    __atomic_add_fetch(&n_events, 1, __ATOMIC_RELAXED);
    window_guard(ev, type);
    switch (type) {
    case JVMPI_EVENT_THREAD_START:
        gc_off_enter(type);
        e_thread_start(ev);
        e_env_known(ev->env_id, "THREAD_START");
        gc_off_leave();
        return;
    case JVMPI_EVENT_THREAD_END:
        e_thread_end(ev);
        return;
    default:
        break;
    }
    e_env_known(ev->env_id, e_event_name(type));
    switch (type) {
    case JVMPI_EVENT_GC_START:
        on_gc_start(ev);
        break;
    case JVMPI_EVENT_GC_FINISH:
        on_gc_finish(ev);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        on_obj_free(ev);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        gc_off_enter(type);
        on_obj_alloc(ev);
        gc_off_leave();
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        gc_off_enter(type);
        e_pass();
        gc_off_leave();
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        e_threads_init_done();
        if (rungc_wanted > 0 && e_pi->CreateSystemThread("e_gclock gc", JVMPI_NORMAL_PRIORITY, gc_thread) != JNI_OK)
            E_FAIL("CreateSystemThread in JVM_INIT_DONE failed");
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        if (e_keepgoing)
            pthread_mutex_lock(&table_lk);
        else
            e_pi->RawMonitorEnter(gc_lock);
        e_say("JVM_SHUT_DOWN: %ld events, %ld allocs, %ld frees, %zu live, %ld windows, %ld RunGC", n_events,
              n_allocs, n_frees, objs.live, n_windows, __atomic_load_n(&n_rungc, __ATOMIC_RELAXED));
        if (e_keepgoing)
            pthread_mutex_unlock(&table_lk);
        else
            e_pi->RawMonitorExit(gc_lock);
        e_summary();
        __atomic_store_n(&e_shut_down, 1, __ATOMIC_RELEASE);
        break;
    default: /* METHOD_ENTRY, METHOD_EXIT: the guard and the thread only */
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (e_setup(vm, options, "e_gclock") != JNI_OK)
        return JNI_ERR;
    rungc_wanted = (int)e_opt_long(options, "rungc", 3);
    rungc_ms = e_opt_long(options, "rungc_ms", 700);
    e_pi->NotifyEvent = notify;
    gc_lock = e_pi->RawMonitorCreate("e_gclock objects");
    if (!gc_lock) {
        E_FAIL("RawMonitorCreate returned NULL");
        return JNI_ERR;
    }
    static const jint events[] = {
        JVMPI_EVENT_OBJECT_ALLOC, JVMPI_EVENT_OBJECT_FREE, JVMPI_EVENT_GC_START,      JVMPI_EVENT_GC_FINISH,
        JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END,  JVMPI_EVENT_CLASS_LOAD,    JVMPI_EVENT_JVM_INIT_DONE,
        JVMPI_EVENT_JVM_SHUT_DOWN,
    };
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        e_enable(events[i]);
    if (e_opt_long(options, "methods", 0)) {
        e_enable(JVMPI_EVENT_METHOD_ENTRY);
        e_enable(JVMPI_EVENT_METHOD_EXIT);
    }
    return JNI_OK;
}
