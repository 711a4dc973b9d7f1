#include "interface.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "agents.h"
#include "classes.h"
#include "defs.h"
#include "events.h"
#include "gc.h"
#include "heapdump.h"
#include "lateobjs.h"
#include "layer.h"
#include "loader.h"
#include "log.h"
#include "methods.h"
#include "monitordump.h"
#include "objinfo.h"
#include "rawmon.h"
#include "seam.h"
#include "threads.h"
#include "whose.h"

static _Atomic bool init_done;

/* One line naming the function and what was wrong with the call; an
 * agent that repeats the mistake in a loop gets it counted (log_refused). */
#define BAD_CALL(fn, ...) log_refused(fn, __VA_ARGS__)

static bool require_live(const char *fn)
{
    switch (layer_phase()) {
    case LAYER_LIVE:
        return true;
    case LAYER_ONLOAD:
        if (layer_vm_dying()) {
            /* A signal stopped the VM while it started: JVM_SHUT_DOWN comes
             * without JVM_INIT_DONE, and an agent that collects or dumps
             * there (HPROF calls RunGC) did nothing wrong. */
            LOG_DEBUG("%s: the VM is ending before it finished starting; ignored", fn);
            return false;
        }
        BAD_CALL(fn, "called before the VM finished starting (wait for JVM_INIT_DONE)");
        return false;
    case LAYER_DEAD:
        break;
    }
    LOG_DEBUG("%s: called after VM death; ignored", fn);
    return false;
}

/* Says why env names no live thread.  A thread that has just ended is no
 * mistake of the agent's: a sampler walking its list of threads races
 * their ends, and JDK 5.0 answered such calls without a word. */
static void not_a_thread(const char *fn, JNIEnv *env)
{
    if (env == NULL) {
        BAD_CALL(fn, "NULL JNIEnv *");
    } else if (threads_recently_ended(env)) {
        LOG_DEBUG("%s: JNIEnv %p is a thread that has ended", fn, (void *)env);
    } else {
        BAD_CALL(fn, "JNIEnv %p is not a live thread the layer knows", (void *)env);
    }
}

/* The thread record for a JNIEnv * the agent passed, or NULL (see not_a_thread). */
static thread_rec *thread_arg(const char *fn, JNIEnv *env)
{
    thread_rec *t = threads_acquire_by_env(env);
    if (t == NULL) {
        not_a_thread(fn, env);
    }
    return t;
}

/* The same in the live phase only (outside it, NULL without a word after VM death). */
static thread_rec *live_thread_arg(const char *fn, JNIEnv *env)
{
    return require_live(fn) ? thread_arg(fn, env) : NULL;
}

/* ---- events ------------------------------------------------------------- */

/* After JVM_SHUT_DOWN nothing is sent any more, and the VM's tool
 * interface is gone: event switches and requests are not available. */
static bool after_shut_down(void) { return layer_phase() == LAYER_DEAD || events_is_shut_down(); }

static jint enable_event(int agent, jint event_type, void *arg)
{
    if (after_shut_down()) {
        return JVMPI_NOT_AVAILABLE;
    }
    bool was_on = (events_agents(event_type) & AGENTS_BIT(agent)) != 0;
    jint rc = events_enable(agent, event_type);
    if (rc == JVMPI_SUCCESS &&
        (event_type == JVMPI_EVENT_CLASS_LOAD || event_type == JVMPI_EVENT_CLASS_UNLOAD)) {
        /* Classes loaded before now need IDs (tags) for unloads to be seen. */
        layer_define_loaded_classes(seam_current_env());
    }
    if (rc == JVMPI_SUCCESS && !was_on && event_type == JVMPI_EVENT_COMPILED_METHOD_LOAD) {
        /* Methods compiled before now are reported now, as JVM TI replays
         * them (on this thread, so to this agent only). */
        int saved = agents_target_begin(agent);
        methods_after_enable_compiled();
        agents_target_end(saved);
    }
    return rc;
}

static jint disable_event(int agent, jint event_type, void *arg)
{
    return after_shut_down() ? JVMPI_NOT_AVAILABLE : events_disable(agent, event_type);
}

static jint request_class_load(jobjectID id)
{
    class_rec *c = classes_acquire(id);
    if (c == NULL) {
        BAD_CALL("RequestEvent(CLASS_LOAD)", "%p is not a class ID", (void *)id);
        return JVMPI_FAIL;
    }
    defs_class_load(seam_current_env(), c, true);
    classes_release(c);
    return JVMPI_SUCCESS;
}

static jint request_thread_start(jobjectID id)
{
    thread_rec *t = threads_acquire_by_id(id);
    if (t == NULL) {
        if (ids_was_issued(seam_tag_from_id(id))) {
            /* A thread that has just ended: its THREAD_END may not have reached the agent yet. */
            LOG_DEBUG("RequestEvent(THREAD_START): %p is no live thread's ID (any longer)", (void *)id);
        } else {
            BAD_CALL("RequestEvent(THREAD_START)", "%p is not the ID of a live thread", (void *)id);
        }
        return JVMPI_FAIL;
    }
    defs_thread_event(seam_current_env(), JVMPI_EVENT_THREAD_START, t, true);
    threads_release(t);
    return JVMPI_SUCCESS;
}

static jint request_object_alloc(jobjectID id)
{
    JNIEnv *env = seam_current_env();
    seam_object_info info;
    if (env == NULL || !require_live("RequestEvent(OBJECT_ALLOC)")) {
        return JVMPI_FAIL;
    }
    if (id == NULL) {
        BAD_CALL("RequestEvent(OBJECT_ALLOC)", "NULL object ID");
        return JVMPI_FAIL;
    }
    /* A class ID is the ID of its java.lang.Class object (the JVMPI
     * specification), which the class record describes. */
    bool known = objinfo_of(env, id, &info);
    if (!known) {
        if (ids_was_issued(seam_tag_from_id(id))) {
            /* Collected, its OBJECT_FREE still to come in the next GC window:
             * an agent cannot avoid asking, so this is no error. */
            LOG_DEBUG("RequestEvent(OBJECT_ALLOC): %p is no live object's ID (any longer)", (void *)id);
        } else {
            BAD_CALL("RequestEvent(OBJECT_ALLOC)", "%p is not the ID of a live object", (void *)id);
        }
        return JVMPI_FAIL;
    }
    defs_object_alloc(env, &info, true);
    return JVMPI_SUCCESS;
}

static jint request_for_target(jint event_type, void *arg);

/* The answer goes to the asking agent alone. */
static jint request_event(int agent, jint event_type, void *arg)
{
    if (layer_phase() == LAYER_DEAD || !events_request_begin()) {
        return JVMPI_NOT_AVAILABLE;
    }
    int saved = agents_target_begin(agent);
    jint rc = request_for_target(event_type, arg);
    agents_target_end(saved);
    events_request_end();
    return rc;
}

static jint request_for_target(jint event_type, void *arg)
{
    switch (event_type) {
    case JVMPI_EVENT_CLASS_LOAD:
        return request_class_load((jobjectID)arg);
    case JVMPI_EVENT_THREAD_START:
        return request_thread_start((jobjectID)arg);
    case JVMPI_EVENT_OBJECT_ALLOC:
        return request_object_alloc((jobjectID)arg);
    case JVMPI_EVENT_MONITOR_DUMP:
        return require_live("RequestEvent(MONITOR_DUMP)") ? monitordump_request(seam_current_env()) : JVMPI_FAIL;
    case JVMPI_EVENT_HEAP_DUMP:
        return heapdump_request_heap(arg);
    case JVMPI_EVENT_OBJECT_DUMP:
        return heapdump_request_object((jobjectID)arg);
    default:
        LOG_WARN("RequestEvent(%d): only CLASS_LOAD, THREAD_START, OBJECT_ALLOC and the dumps can be requested",
                 (int)event_type);
        return JVMPI_NOT_AVAILABLE;
    }
}

/* ---- stacks and exit ---------------------------------------------------- */

static void JNICALL get_call_trace(JVMPI_CallTrace *trace, jint depth)
{
    if (trace == NULL) {
        BAD_CALL("GetCallTrace", "NULL trace");
        return;
    }
    trace->num_frames = 0;
    if (depth <= 0) {
        BAD_CALL("GetCallTrace", "depth must be at least 1");
        return;
    }
    if (trace->frames == NULL) {
        BAD_CALL("GetCallTrace", "NULL frames buffer");
        return;
    }
    if (!require_live("GetCallTrace")) {
        return;
    }
    thread_rec *t = thread_arg("GetCallTrace", trace->env_id);
    if (t == NULL) {
        return;
    }
    trace->num_frames = seam_call_trace(t->info.handle, depth, trace->frames);
    threads_release(t);
}

static void JNICALL profiler_exit(jint code)
{
    LOG_INFO("ProfilerExit(%d)", (int)code);
    layer_stop();
    seam_halt(code);
}

/* ---- raw monitors ------------------------------------------------------- */

static void JNICALL raw_monitor_enter(JVMPI_RawMonitor m) { rawmon_enter(m); }
static void JNICALL raw_monitor_exit(JVMPI_RawMonitor m) { rawmon_exit(m); }
static void JNICALL raw_monitor_wait(JVMPI_RawMonitor m, jlong ms) { rawmon_wait(m, ms); }
static void JNICALL raw_monitor_notify_all(JVMPI_RawMonitor m) { rawmon_notify_all(m); }
static void JNICALL raw_monitor_destroy(JVMPI_RawMonitor m) { rawmon_destroy(m); }

/* ---- threads ------------------------------------------------------------ */

static jlong JNICALL get_current_thread_cpu_time(void) { return threads_current_cpu_time(); }

/* What SuspendThreadList and ResumeThreadList put in results[i]: JDK 5.0
 * answered with JVMDI's error codes (JVMDI_ERROR_INVALID_THREAD,
 * JVMDI_ERROR_THREAD_SUSPENDED), which agents test for. */
enum { LIST_DONE = 0, LIST_INVALID_THREAD = 10, LIST_ALREADY_SUSPENDED = 14 };

/* Suspension and resumption one at a time: agents suspend from several
 * threads, and `suspended` and `suspended_status` change together. */
static pthread_mutex_t suspend_lock = PTHREAD_MUTEX_INITIALIZER;

/* Whether t is the calling thread (or, for a virtual thread, the carrier
 * it runs on, or the virtual thread the caller carries). */
static bool is_caller(const thread_rec *t)
{
    JNIEnv *env = seam_current_env();
    return env != NULL && (t->info.env == env || t->info.env == whose_known_env(env));
}

/* As JDK 5.0: the caller itself is never suspended (HPROF suspends every
 * thread on its list, itself included, and must go on to resume them), nor
 * a thread suspended already, ending, or that the VM no longer runs; the
 * layer's own thread counts as suspended and is left running, as 5.0's
 * hidden threads were. */
static jint suspend_one(const char *fn, JNIEnv *env)
{
    thread_rec *t = live_thread_arg(fn, env);
    if (t == NULL) {
        return LIST_INVALID_THREAD;
    }
    jint rc = LIST_DONE;
    pthread_mutex_lock(&suspend_lock);
    if (atomic_load(&t->suspended)) {
        rc = LIST_ALREADY_SUSPENDED;
    } else if (t->ended || t->ending || is_caller(t)) {
        rc = LIST_INVALID_THREAD;
    } else if (!t->internal) {
        jint vm = seam_thread_status(t->info.handle);
        /* GetThreadStatus answers the state at the suspension until the resume. */
        jint now = threads_status(t, vm, rawmon_thread_blocked_status(env));
        if (vm < 0 || !seam_thread_suspend(t->info.handle)) {
            rc = LIST_INVALID_THREAD; /* not alive (yet, or any more) */
        } else {
            atomic_store(&t->suspended_status, now & ~(JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED));
            atomic_store(&t->suspended, true);
        }
    }
    pthread_mutex_unlock(&suspend_lock);
    threads_release(t);
    return rc;
}

/* Only what JVMPI suspended is resumed: a thread it did not suspend answers
 * done, as on JDK 5.0, and another tool's suspension stays. */
static jint resume_one(const char *fn, JNIEnv *env)
{
    thread_rec *t = live_thread_arg(fn, env);
    if (t == NULL) {
        return LIST_INVALID_THREAD;
    }
    pthread_mutex_lock(&suspend_lock);
    if (atomic_load(&t->suspended)) {
        atomic_store(&t->suspended, false);
        (void)seam_thread_resume(t->info.handle); /* fails only for a thread that is gone */
    }
    pthread_mutex_unlock(&suspend_lock);
    threads_release(t);
    return LIST_DONE;
}

static void JNICALL suspend_thread(JNIEnv *env) { (void)suspend_one("SuspendThread", env); }
static void JNICALL resume_thread(JNIEnv *env) { (void)resume_one("ResumeThread", env); }

static void thread_list(const char *fn, jint (*op)(const char *, JNIEnv *), jint count, JNIEnv **list, jint *results)
{
    if (count < 0) {
        BAD_CALL(fn, "negative count");
        return;
    }
    if (count > 0 && (list == NULL || results == NULL)) {
        BAD_CALL(fn, "NULL list or results");
        return;
    }
    for (jint i = 0; i < count; i++) {
        results[i] = op(fn, list[i]);
    }
}

static void JNICALL suspend_thread_list(jint count, JNIEnv **list, jint *results)
{
    thread_list("SuspendThreadList", suspend_one, count, list, results);
}

static void JNICALL resume_thread_list(jint count, JNIEnv **list, jint *results)
{
    thread_list("ResumeThreadList", resume_one, count, list, results);
}

/* JDK 5.0 answered RUNNABLE for any thread it could not tell about (a NULL,
 * unknown or ended env), never -1, whose bits would read as every state. */
static jint JNICALL get_thread_status(JNIEnv *env)
{
    thread_rec *t = live_thread_arg("GetThreadStatus", env);
    if (t == NULL) {
        return JVMPI_THREAD_RUNNABLE;
    }
    /* No suspend lock: a SuspendThread may wait long in the VM (a thread
     * that is detaching), and a sampler asking statuses must not wait with it. */
    jint status = threads_status(t, seam_thread_status(t->info.handle), rawmon_thread_blocked_status(env));
    threads_release(t);
    return status;
}

/* JDK 5.0 could not tell whether a thread had run since its last
 * suspension and said it had, for every live thread. */
static jboolean JNICALL thread_has_run(JNIEnv *env)
{
    thread_rec *t = live_thread_arg("ThreadHasRun", env);
    threads_release(t);
    return t != NULL ? JNI_TRUE : JNI_FALSE;
}

static jint JNICALL create_system_thread(char *name, jint priority, void (*f)(void *))
{
    if (!atomic_load(&init_done)) {
        BAD_CALL("CreateSystemThread", "called before JVM_INIT_DONE; threads can be created from then on");
        return JNI_ERR;
    }
    if (layer_phase() != LAYER_LIVE || f == NULL) {
        if (f == NULL) {
            BAD_CALL("CreateSystemThread", "NULL thread function");
        }
        return JNI_ERR;
    }
    if (priority < JVMPI_MINIMUM_PRIORITY || priority > JVMPI_MAXIMUM_PRIORITY) {
        BAD_CALL("CreateSystemThread", "priority %d is outside %d..%d", (int)priority, JVMPI_MINIMUM_PRIORITY,
                 JVMPI_MAXIMUM_PRIORITY);
        return JNI_ERR;
    }
    if (gc_is_disabled()) {
        BAD_CALL("CreateSystemThread", "called with GC disabled (the spec forbids it)");
        return JNI_ERR;
    }
    JNIEnv *env = seam_current_env();
    if (env == NULL) {
        BAD_CALL("CreateSystemThread", "the calling thread is not attached to the VM");
        return JNI_ERR;
    }
    return seam_start_system_thread(env, name != NULL ? name : "JVMPI system thread", priority, f, NULL)
               ? JNI_OK
               : JNI_ERR;
}

/* Called from SIGPROF handlers: not a word, whatever env is (a NULL or
 * unknown one sets nothing and reads NULL). */
static void set_thread_local_storage(int agent, JNIEnv *env, void *ptr) { (void)threads_tls_set(env, agent, ptr); }

static void *get_thread_local_storage(int agent, JNIEnv *env)
{
    void *value = NULL;
    return threads_tls_get(env, agent, &value) ? value : NULL;
}

/* ---- GC control ---------------------------------------------------------- */

static void JNICALL disable_gc(void) { gc_disable(); }

static void JNICALL enable_gc(void)
{
    if (!gc_enable()) {
        BAD_CALL("EnableGC", "called more often than DisableGC");
    }
}

static void JNICALL run_gc(void)
{
    if (gc_is_disabled()) {
        BAD_CALL("RunGC", "called with GC disabled (the spec forbids it); no collection");
        return;
    }
    JNIEnv *env = seam_current_env();
    if (require_live("RunGC") && env != NULL) {
        gc_run(env);
    }
}

/* ---- IDs ------------------------------------------------------------------- */

static jobjectID JNICALL get_thread_object(JNIEnv *env)
{
    thread_rec *t = thread_arg("GetThreadObject", env);
    if (t == NULL) {
        return NULL;
    }
    jobjectID id = t->info.id;
    threads_release(t);
    return id;
}

static jobjectID JNICALL get_method_class(jmethodID method)
{
    if (method == NULL) {
        BAD_CALL("GetMethodClass", "NULL method ID");
        return NULL;
    }
    if (!require_live("GetMethodClass")) {
        return NULL;
    }
    if (!seam_method_id_valid(method)) {
        BAD_CALL("GetMethodClass", "%p is not a method ID", (void *)method);
        return NULL;
    }
    return seam_method_class(method);
}

static jobject JNICALL object_id_to_jobject(jobjectID id)
{
    if (id == NULL) {
        BAD_CALL("jobjectID2jobject", "NULL object ID");
        return NULL;
    }
    JNIEnv *env = seam_current_env();
    if (env == NULL || !require_live("jobjectID2jobject")) {
        return NULL;
    }
    return seam_object_from_id(env, id);
}

static jobjectID jobject_to_object_id(int agent, jobject obj)
{
    if (obj == NULL) {
        BAD_CALL("jobject2jobjectID", "NULL jobject");
        return NULL;
    }
    JNIEnv *env = seam_current_env();
    if (env == NULL || !require_live("jobject2jobjectID")) {
        return NULL;
    }
    jobjectID id = seam_id_from_object(env, obj);
    lateobjs_known(agent, id);
    return id;
}

/* ---- the tables ------------------------------------------------------------- */

/* JVMPI functions take no interface pointer, so each agent's table has
 * functions of its own for what is kept per agent: they only pass on which
 * agent is calling. */
#define PER_AGENT(k)                                                                                         \
    static jint JNICALL enable_event_##k(jint t, void *a) { return enable_event(k, t, a); }                \
    static jint JNICALL disable_event_##k(jint t, void *a) { return disable_event(k, t, a); }              \
    static jint JNICALL request_event_##k(jint t, void *a) { return request_event(k, t, a); }              \
    static void JNICALL set_tls_##k(JNIEnv *e, void *p) { set_thread_local_storage(k, e, p); }             \
    static void *JNICALL get_tls_##k(JNIEnv *e) { return get_thread_local_storage(k, e); }                 \
    static jobjectID JNICALL to_id_##k(jobject o) { return jobject_to_object_id(k, o); }                  \
    static JVMPI_RawMonitor JNICALL raw_create_##k(char *n) { return rawmon_create_by(k, n); }
PER_AGENT(0)
PER_AGENT(1)
PER_AGENT(2)
PER_AGENT(3)
PER_AGENT(4)
PER_AGENT(5)
PER_AGENT(6)
PER_AGENT(7)
#undef PER_AGENT

static const struct {
    jint(JNICALL *enable)(jint, void *);
    jint(JNICALL *disable)(jint, void *);
    jint(JNICALL *request)(jint, void *);
    void(JNICALL *set_tls)(JNIEnv *, void *);
    void *(JNICALL *get_tls)(JNIEnv *);
    jobjectID(JNICALL *to_id)(jobject);
    JVMPI_RawMonitor(JNICALL *raw_create)(char *);
} per_agent[] = {
#define ROW(k) {enable_event_##k, disable_event_##k, request_event_##k, set_tls_##k, get_tls_##k, to_id_##k, raw_create_##k}
    ROW(0), ROW(1), ROW(2), ROW(3), ROW(4), ROW(5), ROW(6), ROW(7),
#undef ROW
};
_Static_assert(sizeof per_agent / sizeof per_agent[0] == AGENTS_MAX, "a row of functions for each agent");

static JVMPI_Interface tables[AGENTS_MAX];

static void table_fill(int k)
{
    tables[k] = (JVMPI_Interface){
        .version = JVMPI_VERSION_1_2,
        .NotifyEvent = NULL,
        .EnableEvent = per_agent[k].enable,
        .DisableEvent = per_agent[k].disable,
        .RequestEvent = per_agent[k].request,
        .GetCallTrace = get_call_trace,
        .ProfilerExit = profiler_exit,
        .RawMonitorCreate = per_agent[k].raw_create,
        .RawMonitorEnter = raw_monitor_enter,
        .RawMonitorExit = raw_monitor_exit,
        .RawMonitorWait = raw_monitor_wait,
        .RawMonitorNotifyAll = raw_monitor_notify_all,
        .RawMonitorDestroy = raw_monitor_destroy,
        .GetCurrentThreadCpuTime = get_current_thread_cpu_time,
        .SuspendThread = suspend_thread,
        .ResumeThread = resume_thread,
        .GetThreadStatus = get_thread_status,
        .ThreadHasRun = thread_has_run,
        .CreateSystemThread = create_system_thread,
        .SetThreadLocalStorage = per_agent[k].set_tls,
        .GetThreadLocalStorage = per_agent[k].get_tls,
        .DisableGC = disable_gc,
        .EnableGC = enable_gc,
        .RunGC = run_gc,
        .GetThreadObject = get_thread_object,
        .GetMethodClass = get_method_class,
        .jobjectID2jobject = object_id_to_jobject,
        .jobject2jobjectID = per_agent[k].to_id,
        .SuspendThreadList = suspend_thread_list,
        .ResumeThreadList = resume_thread_list,
    };
    events_set_interface(k, &tables[k]);
}

JVMPI_Interface *interface_for_agent(int k)
{
    if (k < 0 || k >= AGENTS_MAX) {
        return NULL;
    }
    if (tables[k].EnableEvent == NULL) {
        table_fill(k);
    }
    return &tables[k];
}

JVMPI_Interface *interface_table(void)
{
    agents_ensure(0);
    return interface_for_agent(0);
}

bool layer_is_jvmpi_version(jint version)
{
    return version == JVMPI_VERSION_1 || version == JVMPI_VERSION_1_1 || version == JVMPI_VERSION_1_2;
}

JVMPI_Interface *layer_interface_for(jint version, const void *caller)
{
    if (!layer_is_jvmpi_version(version)) {
        return NULL;
    }
    int k = agents_for_caller(caller);
    if (k >= 0 && agents_started_by_vm_first_call(k)) {
        loader_log_xrun_agent(agents_name(k));
    }
    return k < 0 ? NULL : interface_for_agent(k);
}

void interface_mark_init_done(void) { atomic_store(&init_done, true); }
bool interface_init_done(void) { return atomic_load_explicit(&init_done, memory_order_relaxed); }

int interface_gc_disabled_depth(void) { return gc_disabled_depth(); }

void interface_reset(void)
{
    atomic_store(&init_done, false);
    gc_reset();
    for (int k = 0; k < AGENTS_MAX; k++) {
        tables[k].EnableEvent = NULL;
    }
    agents_reset();
}
