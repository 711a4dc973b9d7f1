#include "layer.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agents.h"
#include "build.h"
#include "classes.h"
#include "deadline.h"
#include "defs.h"
#include "dispatch.h"
#include "events.h"
#include "gate.h"
#include "gc.h"
#include "idrec.h"
#include "interface.h"
#include "lateobjs.h"
#include "ledger.h"
#include "loader.h"
#include "log.h"
#include "monitordump.h"
#include "monitors.h"
#include "options.h"
#include "rawmon.h"
#include "reset.h"
#include "threads.h"
#include "tls.h"
#include "whose.h"

_Atomic int layer_phase_now = LAYER_ONLOAD;
static _Atomic bool vm_dying;

bool layer_vm_dying(void) { return atomic_load(&vm_dying); }

/* Class unloads come from ObjectFree, where neither JNI nor the agent may
 * run; the layer's delivery thread sends them. */
typedef struct freed_class {
    jobjectID id;
    struct freed_class *next;
} freed_class;

static pthread_mutex_t freed_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t freed_cond = PTHREAD_COND_INITIALIZER;
static freed_class *freed_head, *freed_tail;
static bool delivery_stop;
static bool delivery_busy; /* the delivery thread holds a batch of unloads */
static bool replay_done;   /* the start-up replay has announced every thread */
static pthread_t replay_thread;
static void wake_delivery(void);


/* ---- loading ------------------------------------------------------------ */

static bool caps_all, xrun_agent, class_cache = true, vthreads_carriers, methods_jvmti;

static bool any_enabled(const jint *events, int n)
{
    for (int i = 0; i < n; i++) {
        if (events_enabled(events[i])) {
            return true;
        }
    }
    return false;
}

seam_caps_wanted layer_capabilities_wanted(void)
{
    static const jint methods[] = {JVMPI_EVENT_METHOD_ENTRY, JVMPI_EVENT_METHOD_ENTRY2, JVMPI_EVENT_METHOD_EXIT};
    /* An -Xrun agent's JVM_OnLoad runs after the OnLoad phase, the only one
     * these capabilities are granted in: with JVM TI's method events, an
     * -Xrun agent on the command line (alone or beside -agentpath ones)
     * gets them all; a run with none takes only what the named agents
     * enabled.  The class rewriter needs none of them, caps=all included. */
    bool all = caps_all || xrun_agent;
    seam_caps_wanted w;
    w.methods = methods_jvmti && (all || any_enabled(methods, (int)(sizeof methods / sizeof methods[0])));
    w.instructions = methods_jvmti && (all || events_enabled(JVMPI_EVENT_INSTRUCTION_START));
    w.entry2 = all || events_enabled(JVMPI_EVENT_METHOD_ENTRY2);
    w.receiver = methods_jvmti && w.entry2;
    /* Held by every run: on JDK 17 and later they only mark compiled code's
     * debug information (for the VM's escape barriers), and MONITOR_DUMP
     * may be asked for at any time. */
    w.monitors = true;
    return w;
}

bool layer_class_cache_allowed(void) { return class_cache; }
bool layer_vthreads_as_carriers(void) { return vthreads_carriers; }
bool layer_methods_by_jvmti(void) { return methods_jvmti; }

/* A raw monitor's owner and waiters are threads as the agent knows them:
 * a layer-made handle for a thread the VM started before the start phase,
 * the virtual thread a carrier runs (MONITOR_DUMP and GetThreadStatus
 * name them so). */
static JNIEnv *raw_monitor_env(void) { return whose_known_env(seam_current_env()); }

/* HotSpot 5.0 ran the GC_START, OBJECT_FREE and GC_FINISH handlers on its VM
 * thread and posted no raw monitor contention for that thread: an agent whose
 * handlers take its own locks there hears nothing of it. */
static void raw_monitor_event(jint event_type, const char *name, JVMPI_RawMonitor id)
{
    if (!gc_window_here()) {
        dispatch_raw_monitor(event_type, name, id);
    }
}

/* The layer's own options, read at the first -agentpath:libjvmpi.so. */
static jint read_layer_options(void)
{
    char err[512];
    options_layer lopts;
    if (options_parse_layer(getenv("JVMPI_LAYER_OPTIONS"), &lopts, err, sizeof err) != 0) {
        LOG_ERROR("%s", err);
        return JNI_ERR;
    }
    log_set_level((log_level_t)lopts.log_level);
    caps_all = lopts.caps_all;
    class_cache = lopts.class_cache;
    vthreads_carriers = lopts.vthreads_carriers;
    methods_jvmti = lopts.methods_jvmti;
    monitordump_set_traces(lopts.monitordump_traces);
    seam_alloc_hooks(lopts.allocs_hooks);
    if (log_set_file(lopts.log_file) != 0) {
        LOG_ERROR("JVMPI_LAYER_OPTIONS: cannot open logfile %s: %s", LOG_SHOWN(lopts.log_file), strerror(errno));
        options_layer_free(&lopts);
        return JNI_ERR;
    }
    if (lopts.ledger_file != NULL && ledger_start(lopts.ledger_file, lopts.ledger_hold_s, err, sizeof err) != 0) {
        LOG_ERROR("%s", err);
        options_layer_free(&lopts);
        return JNI_ERR;
    }
    options_layer_free(&lopts);
    gc_set_waker(wake_delivery);
    reset_set_waker(wake_delivery);
    rawmon_set_event_sink(raw_monitor_event);
    rawmon_set_env_source(raw_monitor_env);
    return JNI_OK;
}

static bool options_read;

jint layer_onload(JavaVM *vm, const char *text)
{
    char err[1024];
    if (!options_read) {
        if (read_layer_options() != JNI_OK) {
            return JNI_ERR;
        }
        options_read = true;
        char *boot = seam_system_property("sun.boot.library.path");
        int bad = loader_check_xrun(boot, err, sizeof err);
        free(boot);
        if (bad != 0) {
            LOG_ERROR("%s", err);
            return JNI_ERR;
        }
        xrun_agent = loader_xrun_agents() > 0;
        if (caps_all && !methods_jvmti) {
            LOG_INFO("caps=all takes nothing with methods=rewrite: the class rewriter needs none of the "
                     "capabilities it is for");
        }
    }
    options_agent agent;
    if (options_parse_agent(text, &agent, err, sizeof err) != 0) {
        LOG_ERROR("bad -agentpath options for libjvmpi.so: %s (expected <agent>[:<agent options>])", err);
        return JNI_ERR;
    }
    jint rc = JNI_OK;
    if (agent.agent != NULL) {
        char *boot = seam_system_property("sun.boot.library.path");
        char *javalib = seam_system_property("java.library.path");
        loader_paths paths = {boot, getenv("LD_LIBRARY_PATH"), javalib, loader_agents_dir()};
        rc = loader_start_agent(vm, agent.agent, agent.agent_options, &paths);
        free(boot);
        free(javalib);
    } else {
        /* No agent named: the unchanged -Xrun command line.  The VM finds the
         * library itself (JDK lib directory, then LD_LIBRARY_PATH) and calls its
         * JVM_OnLoad later, with the JavaVM whose GetEnv we patched. */
        LOG_INFO("no agent named after '=': waiting for -Xrun agents to ask for JVMPI");
    }
    options_agent_free(&agent);
    return rc;
}

/* ---- start-up and shutdown ---------------------------------------------- */

void layer_define_loaded_classes(JNIEnv *env)
{
    if (layer_is_live()) {
        seam_define_loaded_classes(env);
    }
}

/* OBJECT_ALLOC of every object already in the heap, so that an agent that
 * asked for allocations from the start knows every object.  Objects that
 * had IDs before (Class objects, thread objects) may have been announced
 * already, by the events that named them. */
static void replay_objects(JNIEnv *env)
{
    int n = 0;
    seam_object_info *objects = seam_heap_objects(env, &n);
    LOG_DEBUG("start-up replay: %d objects", n);
    for (int i = 0; i < n; i++) {
        int64_t tag = seam_tag_from_id(objects[i].id);
        if (ids_is_class(tag)) {
            defs_object(env, objects[i].id, NULL); /* described as every Class object is (jvmpi/defs.c) */
        } else if (ids_is_unannounced(tag)) {
            defs_object(env, objects[i].id, &objects[i]);
        } else {
            defs_object_alloc(env, &objects[i], false);
        }
    }
    free(objects);
}

/* HotSpot 5.0 order: OBJECT_ALLOC of every object in the heap, CLASS_LOAD of
 * every loaded class, THREAD_START of every live thread, then JVM_INIT_DONE.
 * What an event names is defined before it (jvmpi/defs.c), so the thread
 * sending the replay comes first, and a class may come with the first
 * object that names it.  Other threads (the JIT's) may send events while
 * the replay runs: they too define what they name first. */
void layer_vm_init(JNIEnv *env)
{
    replay_thread = pthread_self();
    atomic_store(&layer_phase_now, LAYER_LIVE);
    bool objects = events_enabled(JVMPI_EVENT_OBJECT_ALLOC);
    if (objects || events_enabled(JVMPI_EVENT_CLASS_LOAD) || events_enabled(JVMPI_EVENT_CLASS_UNLOAD)) {
        seam_define_loaded_classes(env);
    }
    if (objects) {
        replay_objects(env);
    }
    if (events_enabled(JVMPI_EVENT_CLASS_LOAD)) {
        int n = 0;
        class_rec **list = classes_unannounced(atomic_load(&events_on[JVMPI_EVENT_CLASS_LOAD]), &n);
        for (int i = 0; i < n; i++) {
            defs_announce_class(env, list[i]);
            classes_release(list[i]);
        }
        free(list);
    }
    if (events_enabled(JVMPI_EVENT_THREAD_START)) {
        int n = 0;
        thread_rec **list = threads_snapshot(&n);
        for (int i = 0; i < n; i++) {
            defs_announce_thread(env, list[i]);
            threads_release(list[i]);
        }
        free(list);
    }
    {
        pthread_mutex_lock(&freed_lock);
        replay_done = true;
        pthread_cond_broadcast(&freed_cond);
        pthread_mutex_unlock(&freed_lock);
    }
    if (!seam_start_delivery_thread(env)) {
        LOG_WARN("the layer's delivery thread did not start: CLASS_UNLOAD will not be sent");
    }
    /* Agents start their threads from the JVM_INIT_DONE handler (HPROF did). */
    interface_mark_init_done();
    if (events_enabled(JVMPI_EVENT_JVM_INIT_DONE)) {
        dispatch_plain(env, JVMPI_EVENT_JVM_INIT_DONE);
    }
}

/* Frees and unloads the VM has decided on are delivered before
 * JVM_SHUT_DOWN: the collected objects' and classes' dead tags are made to
 * be posted now, then the last window and the unloads follow. */
static void deliver_last_unloads(JNIEnv *env);

void layer_wait_for_replay(void)
{
    if (!layer_is_live() || pthread_equal(replay_thread, pthread_self())) {
        return;
    }
    bool waited = false;
    pthread_mutex_lock(&freed_lock);
    while (!replay_done && layer_is_live()) {
        if (!waited) {
            pthread_mutex_unlock(&freed_lock);
            gate_park();
            waited = true;
            pthread_mutex_lock(&freed_lock);
            continue;
        }
        pthread_cond_wait(&freed_cond, &freed_lock);
    }
    pthread_mutex_unlock(&freed_lock);
    if (waited) {
        gate_unpark();
    }
}

void layer_stop(void)
{
    atomic_store(&layer_phase_now, LAYER_DEAD);
    events_shutdown();
    pthread_mutex_lock(&freed_lock);
    delivery_stop = true;
    replay_done = true;
    pthread_cond_broadcast(&freed_cond);
    pthread_mutex_unlock(&freed_lock);
    /* Here, not at VM death alone: ProfilerExit ends the process without one. */
    log_refusals_summary();
}

/* HotSpot 17+ ends the thread that runs DestroyJavaVM before it posts
 * VMDeath from that same thread; JVMPI sent JVM_SHUT_DOWN from a live
 * thread, whose thread-local storage the agent still had.  That thread's
 * end is held back until JVM_SHUT_DOWN has been delivered, and then told
 * to no agent. */
static const char last_thread_name[] = "DestroyJavaVM";
static JNIEnv *_Atomic held_back_end;

static void end_thread(JNIEnv *env, thread_rec *t)
{
    threads_mark_ending(t);
    monitors_thread_ending(env, t->info.env);
    if (layer_is_live() && !t->internal && events_enabled(JVMPI_EVENT_THREAD_END)) {
        /* No THREAD_END may name a thread the agent was not told about. */
        defs_announce_thread(env, t);
        defs_thread_event(env, JVMPI_EVENT_THREAD_END, t, false);
    }
    threads_release(t);
    threads_end(env);
}

void layer_vm_death(JNIEnv *env)
{
    LOG_DEBUG("VM death");
    if (layer_phase() == LAYER_DEAD) {
        return;
    }
    atomic_store(&vm_dying, true);
    if (log_level >= LOG_LEVEL_INFO) {
        idrec_stats st;
        idrec_get_stats(&st);
        LOG_INFO("memory kept for the class of each object with an ID, at VM death: %zu objects, %zu bytes "
                 "(%.1f per object), %zu blocks of consecutive IDs", st.records,
                 st.bytes, st.records ? (double)st.bytes / (double)st.records : 0.0, st.dense_blocks);
    }
    if (events_enabled(JVMPI_EVENT_OBJECT_FREE) || events_enabled(JVMPI_EVENT_CLASS_UNLOAD)) {
        seam_post_pending_frees(env);
    }
    gc_deliver_last(env);
    deliver_last_unloads(env);
    if (events_enabled(JVMPI_EVENT_JVM_SHUT_DOWN)) {
        dispatch_plain(env, JVMPI_EVENT_JVM_SHUT_DOWN);
    }
    /* Nothing follows JVM_SHUT_DOWN, as on JDK 5.0: the held-back thread
     * ends without a THREAD_END. */
    events_shutdown();
    JNIEnv *held = atomic_exchange(&held_back_end, NULL);
    thread_rec *t = held != NULL ? threads_acquire_by_env(held) : NULL;
    if (t != NULL) {
        end_thread(held, t);
    }
    ledger_finish();
    layer_stop();
}

/* ---- threads ------------------------------------------------------------- */

void layer_thread_started(seam_thread_info *info)
{
    LOG_DEBUG("thread started: %s env=%p id=%p%s", info->name ? info->name : "?", (void *)info->env,
              (void *)info->id, info->internal ? " (the layer's own)" : "");
    if (threads_id_recently_ended(info->id)) {
        /* A thread past its ThreadEnd still runs a little (HotSpot posts it
         * before the thread leaves the VM's list): it is not a new thread,
         * and its THREAD_END was sent. */
        LOG_DEBUG("thread %s has ended already: not recorded again", info->name ? info->name : "?");
        threads_info_discard(info);
        return;
    }
    thread_rec *t = threads_add(info, info->internal);
    if (t == NULL) {
        return;
    }
    if (layer_is_live() && !events_is_shut_down()) {
        defs_announce_thread(info->env, t);
    }
    threads_release(t);
}

void layer_thread_ended(JNIEnv *env)
{
    LOG_DEBUG("thread ended: env=%p", (void *)env);
    /* A thread the agent knows by a layer-made handle ends under its real
     * JNIEnv *: look it up by the handle. */
    JNIEnv *known = whose_known_env(env);
    thread_rec *t = threads_acquire_by_env(known);
    if (t == NULL) {
        return;
    }
    JNIEnv *none = NULL;
    if (layer_is_live() && t->info.name != NULL && strcmp(t->info.name, last_thread_name) == 0 &&
        atomic_compare_exchange_strong(&held_back_end, &none, known)) {
        threads_release(t);
        return;
    }
    end_thread(known, t);
}

/* ---- virtual threads ------------------------------------------------------ */

void *layer_vthread_started(seam_thread_info *info)
{
    LOG_DEBUG("virtual thread started: %s handle=%p id=%p", info->name ? info->name : "?", (void *)info->env,
              (void *)info->id);
    thread_rec *t = threads_add(info, false);
    if (t == NULL) {
        return NULL;
    }
    /* Its THREAD_START comes from itself, as a platform thread's does. */
    threads_mount(t);
    if (layer_is_live() && !events_is_shut_down()) {
        defs_announce_thread(t->info.env, t);
    }
    return t; /* the caller's reference, given back by layer_vthread_ended */
}

void layer_vthread_mount(void *vt)
{
    if (vt != NULL) {
        threads_mount(vt);
    }
}

void layer_vthread_unmount(void) { threads_unmount(); }

void layer_vthread_ended(void *vt)
{
    thread_rec *t = vt;
    if (t == NULL) {
        return;
    }
    threads_mount(t); /* it ends mounted; its record may predate this carrier's mount */
    end_thread(t->info.env, t);
    threads_unmount();
}

/* ---- classes ------------------------------------------------------------- */

void layer_class_defined(seam_class_info *info)
{
    jlong size = info->object_size;
    if (classes_add(info)) {
        ids_count_class_object(size, false);
    }
}

void layer_class_sized(jobjectID id, jlong object_size)
{
    class_rec *c = classes_acquire(id);
    if (c != NULL) {
        ids_count_class_object(c->info->object_size, true);
        c->info->object_size = object_size;
        ids_count_class_object(object_size, false);
        classes_release(c);
    }
}

void layer_class_announce(JNIEnv *env, jobjectID id)
{
    if (!layer_is_live()) {
        return; /* the start-up replay sends it */
    }
    if (!events_enabled(JVMPI_EVENT_CLASS_LOAD)) {
        /* Its Class object is a new object all the same. */
        defs_object(env, id, NULL);
        return;
    }
    class_rec *c = classes_acquire(id);
    if (c != NULL) {
        defs_announce_class(env, c);
        classes_release(c);
    }
}

void layer_class_freed(jobjectID class_id)
{
    freed_class *f = malloc(sizeof *f);
    if (f == NULL) {
        return;
    }
    f->id = class_id;
    f->next = NULL;
    pthread_mutex_lock(&freed_lock);
    if (freed_tail != NULL) {
        freed_tail->next = f;
    } else {
        freed_head = f;
    }
    freed_tail = f;
    pthread_cond_signal(&freed_cond);
    pthread_mutex_unlock(&freed_lock);
}

static void wake_delivery(void)
{
    pthread_mutex_lock(&freed_lock);
    pthread_cond_signal(&freed_cond);
    pthread_mutex_unlock(&freed_lock);
}

/* Classes unload in a collection, and JDK 5.0 collected nothing while GC
 * was disabled: a heap dump built meanwhile names classes whose CLASS_UNLOAD
 * must not overtake it.  With freed_lock held. */
static bool unloads_due(void) { return freed_head != NULL && (delivery_stop || !gc_is_disabled()); }

/* Sleeps until a class unload or a GC window is due, or the layer stops. */
static void wait_for_work(void)
{
    for (;;) {
        if (unloads_due() || delivery_stop || reset_due()) {
            return;
        }
        long ms = gc_window_wait_ms();
        if (ms == 0) {
            return;
        }
        if (ms < 0) {
            pthread_cond_wait(&freed_cond, &freed_lock);
        } else {
            struct timespec until = deadline_after_ms(CLOCK_REALTIME, ms);
            pthread_cond_timedwait(&freed_cond, &freed_lock, &until);
        }
    }
}

static void deliver_unloads(JNIEnv *env, freed_class *batch)
{
    while (batch != NULL) {
        freed_class *f = batch;
        batch = f->next;
        if (layer_is_live() && events_enabled(JVMPI_EVENT_CLASS_UNLOAD)) {
            dispatch_class_unload(env, f->id);
        }
        classes_remove(f->id);
        free(f);
    }
}

static void deliver_last_unloads(JNIEnv *env)
{
    freed_class *batch;
    {
        pthread_mutex_lock(&freed_lock);
        while (delivery_busy) {
            pthread_cond_wait(&freed_cond, &freed_lock);
        }
        batch = freed_head;
        freed_head = freed_tail = NULL;
        pthread_mutex_unlock(&freed_lock);
    }
    deliver_unloads(env, batch);
}

static _Atomic bool delivery_running;
static pthread_t delivery_thread;

bool layer_delivery_running(void) { return atomic_load(&delivery_running); }

bool layer_on_delivery_thread(void)
{
    return atomic_load(&delivery_running) && pthread_equal(delivery_thread, pthread_self());
}

void layer_delivery_main(JNIEnv *env)
{
    delivery_thread = pthread_self();
    atomic_store(&delivery_running, true);
    for (;;) {
        freed_class *batch;
        bool stop;
        {
            pthread_mutex_lock(&freed_lock);
            wait_for_work();
            batch = NULL;
            if (unloads_due()) {
                batch = freed_head;
                freed_head = freed_tail = NULL;
            }
            stop = delivery_stop;
            delivery_busy = !stop || batch != NULL;
            pthread_mutex_unlock(&freed_lock);
        }
        if (stop && batch == NULL) {
            atomic_store(&delivery_running, false);
            return;
        }
        /* This thread is the layer's own: what it delivers carries the
         * env_id of a thread the agent knows, as JDK 5.0's VM thread sent
         * its events for the Java thread it worked for. */
        if (!stop) {
            gc_deliver_due(env);
        }
        whose_as as;
        whose_as_begin(&as, NULL);
        if (!stop) {
            reset_deliver_due(env);
        }
        deliver_unloads(env, batch);
        whose_as_end(&as);
        {
            pthread_mutex_lock(&freed_lock);
            delivery_busy = false;
            pthread_cond_broadcast(&freed_cond);
            pthread_mutex_unlock(&freed_lock);
        }
    }
}

/* ---- objects and GC -------------------------------------------------------- */

bool layer_object_alloc(JNIEnv *env, const seam_object_info *obj)
{
    if (!layer_is_live()) {
        return false;
    }
    /* OBJECT_ALLOC may go off while this one is on its way: then no agent
     * was told, and the object must not count as announced. */
    JVMPI_Event ev;
    build_object_alloc(&ev, obj, false);
    return events_deliver(env, &ev) != 0;
}

void layer_object_freed(int64_t tag) { gc_object_freed(tag); }
void layer_gc_finish(void) { gc_collection_finished(); }

void layer_jni_ref(JNIEnv *env, bool weak, jobject ref, jobject obj)
{
    jint type = obj != NULL ? (weak ? JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC : JVMPI_EVENT_JNI_GLOBALREF_ALLOC)
                            : (weak ? JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE : JVMPI_EVENT_JNI_GLOBALREF_FREE);
    if (!layer_is_live() || !events_enabled(type)) {
        return;
    }
    jobjectID id = obj != NULL ? seam_id_from_object(env, obj) : NULL;
    dispatch_jni_ref(env, type, id, ref);
}

/* ---- other callbacks ---------------------------------------------------- */

/* One agent's turn at a class file: data is what the VM or the agent before
 * it made (VM memory the layer owns); returns what this agent made of it,
 * data itself when it changed nothing or gave nothing back. */
static unsigned char *hook_one(JNIEnv *env, unsigned char *data, jint *len)
{
    JVMPI_Event ev;
    memset(&ev, 0, sizeof ev);
    ev.event_type = JVMPI_EVENT_CLASS_LOAD_HOOK;
    ev.u.class_load_hook.class_data = data;
    ev.u.class_load_hook.class_data_len = *len;
    ev.u.class_load_hook.new_class_data = data;
    ev.u.class_load_hook.new_class_data_len = *len;
    ev.u.class_load_hook.malloc_f = seam_vm_alloc;
    if (events_deliver(env, &ev) == 0) {
        return data;
    }
    unsigned char *out = ev.u.class_load_hook.new_class_data;
    jint out_len = ev.u.class_load_hook.new_class_data_len;
    if (out == NULL || out_len <= 0) {
        LOG_WARN("CLASS_LOAD_HOOK: the agent %s returned no class data; the class goes on unchanged by it",
                 agents_name(agents_target()));
        return data;
    }
    if (out != data) {
        seam_vm_free(data);
    }
    *len = out_len;
    return out;
}

void layer_class_file_hook(JNIEnv *env, const unsigned char *data, jint len,
                           unsigned char **new_data, jint *new_len)
{
    agents_mask hooks = events_agents(JVMPI_EVENT_CLASS_LOAD_HOOK);
    if (hooks == 0 || events_is_shut_down()) {
        return;
    }
    /* JVMPI agents may edit class_data in place, and the VM used
     * new_class_data unconditionally: give them a copy the VM can own, preset
     * as the answer, and keep it only if it changed. */
    unsigned char *copy = seam_vm_alloc((unsigned int)len);
    if (copy == NULL) {
        LOG_ERROR("CLASS_LOAD_HOOK skipped: no memory for a %d-byte class", (int)len);
        return;
    }
    memcpy(copy, data, (size_t)len);
    /* Agents in load order, each given what the one before made. */
    unsigned char *cur = copy;
    jint cur_len = len;
    AGENTS_EACH(k, hooks) {
        int saved = agents_target_begin((int)k);
        cur = hook_one(env, cur, &cur_len);
        agents_target_end(saved);
    }
    if (cur_len == len && memcmp(cur, data, (size_t)len) == 0) {
        seam_vm_free(cur);
        return;
    }
    *new_data = cur;
    *new_len = cur_len;
}

void layer_data_dump_request(void)
{
    if (layer_is_live() && events_enabled(JVMPI_EVENT_DATA_DUMP_REQUEST)) {
        dispatch_plain(seam_current_env(), JVMPI_EVENT_DATA_DUMP_REQUEST);
    }
}

void layer_reset(void)
{
    options_read = false;
    xrun_agent = false;
    loader_xrun_forget();
    atomic_store(&layer_phase_now, LAYER_ONLOAD);
    atomic_store(&vm_dying, false);
    events_reset();
    classes_reset();
    threads_reset();
    interface_reset();
    monitors_reset();
    ids_reset();
    lateobjs_reset();
    gate_reset();
    ledger_reset();
    log_refusals_reset();
    pthread_mutex_lock(&freed_lock);
    delivery_stop = false;
    replay_done = false;
    pthread_mutex_unlock(&freed_lock);
}
