/*
 * agent.c - the layer as a JVM TI agent: Agent_OnLoad, the JavaVM whose
 * GetEnv answers JVMPI versions, the callback guard, and the switches for
 * the JVM TI events the JVMPI side asks for.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "presence.h"
#include "tls.h"

/* ---- the callback guard -------------------------------------------------- */

/* Callbacks under way, each thread counted in a slot of its own without a
 * locked instruction (presence.h): the rewriter's hooks enter the guard
 * twice per Java call. */
static presence active = PRESENCE_INIT;
_Atomic bool bk_vm_dead;
TLS_FAST bk_guard_thread bk_guard_me;

bool bk_callback_enter_first(void)
{
    bk_guard_me.slot = presence_slot_take(&active);
    return bk_callback_enter();
}

static long callbacks_running(bool first) { return presence_count(&active, first); }

/* Lets callbacks of other threads already running finish before the layer
 * goes away; a callback stuck in the agent is not waited for forever. */
static void wait_for_callbacks(void)
{
    long others = callbacks_running(true) - bk_guard_me.own;
    for (int i = 0; i < 5000 && others > 0; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        others = callbacks_running(false) - bk_guard_me.own;
    }
    /* One reading decides and is told: read twice, a callback ending in
     * between gave "0 callbacks still running". */
    if (others > 0) {
        LOG_WARN("%ld callbacks still running at VM death", others);
    }
}

/* JVM TI 26 and later, at VM death, first wait (up to a minute) for the
 * callbacks under way, without letting a safepoint start meanwhile; a
 * callback that needs one then (a stack trace, a collection, even its return
 * to the VM while a collection is pending) holds the exit for that minute.
 * With an allocation event for every object, some thread is nearly always in
 * a callback.  So the exiting thread, at its end right before VMDeath,
 * switches off every event that Java threads post and lets the callbacks
 * under way finish while it stands outside the VM.  Kept: VMDeath, and the
 * collection events and ObjectFree, which exitfrees.c needs to the end and
 * no Java thread but the Service Thread posts (exitfrees.c quiets that one). */
void bk_quiet_before_death(void)
{
    jvmtiEnv *envs[] = {bk.jvmti, bk.jvmti_cls};
    for (size_t i = 0; i < sizeof envs / sizeof envs[0]; i++) {
        for (int e = JVMTI_MIN_EVENT_TYPE_VAL; envs[i] != NULL && e <= JVMTI_MAX_EVENT_TYPE_VAL; e++) {
            if (e != JVMTI_EVENT_VM_DEATH && e != JVMTI_EVENT_OBJECT_FREE &&
                e != JVMTI_EVENT_GARBAGE_COLLECTION_START && e != JVMTI_EVENT_GARBAGE_COLLECTION_FINISH) {
                /* Events this VM does not have are refused: no matter. */
                JVMTI_TRY(envs[i], SetEventNotificationMode, JVMTI_DISABLE, (jvmtiEvent)e, NULL);
            }
        }
    }
    /* A thread may have passed the VM's check and not yet reached the guard:
     * the count has to stay down a moment.  The rewriter's hooks are no JVM
     * TI callbacks but pass the guard too, so the wait is bounded. */
    int quiet = 0;
    for (int ms = 0; ms < 200 && quiet < 3; ms++) {
        quiet = callbacks_running(ms == 0) > bk_guard_me.own ? 0 : quiet + 1;
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    LOG_DEBUG("exit: events off before VM death, callbacks %s", quiet >= 3 ? "done" : "still under way after 200 ms");
}

/* ---- GetEnv: JVMPI versions answered here, the rest by the VM ------------ */

static struct JNIInvokeInterface_ patched_invoke;

static jint JNICALL hooked_get_env(JavaVM *vm, void **penv, jint version)
{
    if (!layer_is_jvmpi_version(version)) {
        return bk.vm_get_env(vm, penv, version);
    }
    if (penv == NULL) {
        LOG_ERROR("GetEnv(JVMPI version 0x%x): NULL result pointer", (unsigned)version);
        return JNI_ERR;
    }
    /* Each agent is told apart by the library the call comes from. */
    JVMPI_Interface *iface = layer_interface_for(version, __builtin_return_address(0));
    if (iface == NULL) {
        *penv = NULL;
        return JNI_ERR;
    }
    *penv = iface;
    return JNI_OK;
}

/* The VM's JavaVM is a writable global whose first word points at the
 * invoke table; -Xrun libraries get that same JavaVM, later, in the live
 * phase.  Pointing it at a copy with our GetEnv serves both ways of loading. */
static void patch_java_vm(JavaVM *vm)
{
    patched_invoke = **vm;
    bk.vm_get_env = patched_invoke.GetEnv;
    patched_invoke.GetEnv = hooked_get_env;
    *vm = &patched_invoke;
}

JNIEnv *seam_current_env(void)
{
    JNIEnv *env = NULL;
    if (bk.vm == NULL || bk.vm_get_env(bk.vm, (void **)&env, JNI_VERSION_1_2) != JNI_OK) {
        return NULL;
    }
    return env;
}

/* ---- callbacks ------------------------------------------------------------ */

static void apply_pending_sources(void);
/* Set once VM init has replaced the JNI function table.  HotSpot 8 calls
 * an -Xrun agent's JVM_OnLoad in the live phase but before VMInit. */
static _Atomic bool jni_table_tried;

/* Capabilities added once VM init has logged those held are logged apart. */
static _Atomic bool caps_logged;

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *env, jthread thread)
{
    BEGIN_CALLBACK();
    bk_heap_vm_init(env, thread);
    bk_jni_refs_vm_init();
    atomic_store(&jni_table_tried, true);
    apply_pending_sources();
    /* The main thread has had no ThreadStart yet, and the VM's own threads
     * started before the start phase never get one. */
    bk_thread_started(env, thread);
    bk_threads_started_unseen(env);
    bk_monitors_vm_init(env);
    bk_exitfrees_vm_init(env);
    layer_vm_init(env);
    bk_methods_vm_init();
    bk_caps_log_env("held at VM init", bk.jvmti);
    atomic_store(&caps_logged, true);
    END_CALLBACK();
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *env)
{
    bk_exitfrees_vm_death();
    bk_methodhooks_vm_death();
    BEGIN_CALLBACK();
    layer_vm_death(env);
    bk_classcache_vm_death();
    END_CALLBACK();
    atomic_store(&bk_vm_dead, true);
    wait_for_callbacks();
}

static void JNICALL on_class_file_load_hook(jvmtiEnv *jvmti, JNIEnv *env, jclass being_redefined,
                                            jobject loader, const char *name, jobject protection_domain,
                                            jint len, const unsigned char *data, jint *new_len,
                                            unsigned char **new_data)
{
    BEGIN_CALLBACK();
    layer_class_file_hook(env, data, len, new_data, new_len);
    END_CALLBACK();
}

static void JNICALL on_data_dump_request(jvmtiEnv *jvmti)
{
    BEGIN_CALLBACK();
    layer_data_dump_request();
    END_CALLBACK();
}

/* ---- event switches --------------------------------------------------------- */

bool bk_set_event(jvmtiEnv *env, jvmtiEvent event, bool on)
{
    return JVMTI_OK(JVMTI_CALL(env, SetEventNotificationMode, on ? JVMTI_ENABLE : JVMTI_DISABLE, event, NULL));
}

/* -Xrun agents run JVM_OnLoad in the start phase, where JVM TI refuses to
 * switch events: their requests are kept and applied at VM init. */
static bool pending_set[SEAM_SRC_COUNT];
static bool pending_on[SEAM_SRC_COUNT];

static bool source_set_now(seam_source source, bool on);

/* ClassPrepare serves CLASS_LOAD/CLASS_UNLOAD and also the objects the
 * start-up replay held back for classes not linked yet (heap.c). */
static pthread_mutex_t prepare_lock = PTHREAD_MUTEX_INITIALIZER;
static bool layer_wants_prepare, prepare_on;

static bool prepare_apply(void)
{
    bool ok = true;
    pthread_mutex_lock(&prepare_lock);
    bool want = layer_wants_prepare || bk_heap_has_pending();
    if (want != prepare_on) {
        ok = bk_set_event(bk.jvmti, JVMTI_EVENT_CLASS_PREPARE, want);
        if (ok) {
            prepare_on = want;
        }
    }
    pthread_mutex_unlock(&prepare_lock);
    return ok;
}

void bk_class_prepare_wanted(void) { prepare_apply(); }

bool seam_source_set(seam_source source, bool on)
{
    jvmtiPhase phase = JVMTI_PHASE_LIVE;
    JVMTI_CALL(bk.jvmti, GetPhase, &phase);
    /* The JNI function table is replaced at VM init; reporting waits for it.
     * Method events need capabilities taken only once the agent's
     * JVM_OnLoad has returned (take_costly_capabilities). */
    bool method_source = source == SEAM_SRC_METHOD_ENTRY || source == SEAM_SRC_METHOD_EXIT ||
                         source == SEAM_SRC_METHOD_RECEIVER || source == SEAM_SRC_SINGLE_STEP;
    bool onload_later = method_source || source == SEAM_SRC_VTHREADS; /* bk_vthreads_onload first */
    if (phase == JVMTI_PHASE_START || phase == JVMTI_PHASE_PRIMORDIAL ||
        (source == SEAM_SRC_JNI_REFS && !atomic_load(&jni_table_tried)) || (onload_later && phase == JVMTI_PHASE_ONLOAD)) {
        pending_set[source] = true;
        pending_on[source] = on;
        LOG_DEBUG("event source %d switch deferred to VM init", (int)source);
        return true;
    }
    return source_set_now(source, on);
}

static void apply_pending_sources(void)
{
    bk_methodhooks_hold(true);
    for (int s = 0; s < SEAM_SRC_COUNT; s++) {
        if (pending_set[s]) {
            pending_set[s] = false;
            if (!source_set_now((seam_source)s, pending_on[s])) {
                LOG_ERROR("an event the agent enabled during start-up could not be switched on");
            }
        }
    }
    if (!bk_methodhooks_hold(false)) {
        LOG_ERROR("the method events the agent enabled during start-up could not be switched on");
    }
}

static bool source_set_now(seam_source source, bool on)
{
    switch (source) {
    case SEAM_SRC_CLASS_PREPARE:
        layer_wants_prepare = on;
        return prepare_apply();
    case SEAM_SRC_CLASS_FILE_HOOK:
        return bk_set_event(bk.jvmti, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, on);
    case SEAM_SRC_CLASS_FREE:
        return bk_set_event(bk.jvmti_cls, JVMTI_EVENT_OBJECT_FREE, on);
    case SEAM_SRC_DATA_DUMP:
        return bk_set_event(bk.jvmti, JVMTI_EVENT_DATA_DUMP_REQUEST, on);
    case SEAM_SRC_OBJECT_ALLOC:
        return bk_heap_alloc_switch(on);
    case SEAM_SRC_GC:
        bk_heap_gc_switch(on);
        return true;
    case SEAM_SRC_JNI_REFS:
        return bk_jni_refs_switch(on);
    case SEAM_SRC_MONITOR_CONTENDED:
    case SEAM_SRC_MONITOR_WAIT:
        return bk_monitor_source_set(source, on);
    case SEAM_SRC_METHOD_ENTRY:
    case SEAM_SRC_METHOD_RECEIVER:
    case SEAM_SRC_METHOD_EXIT:
    case SEAM_SRC_COMPILED_LOAD:
    case SEAM_SRC_COMPILED_UNLOAD:
    case SEAM_SRC_SINGLE_STEP:
        return bk_methods_source_set(source, on);
    case SEAM_SRC_DATA_RESET:
        return bk_reset_signal_switch(on);
    case SEAM_SRC_VTHREADS:
        return bk_vthreads_source_set(on);
    case SEAM_SRC_COUNT:
        break;
    }
    return false;
}

/* ---- small services ------------------------------------------------------------ */

char *seam_system_property(const char *name)
{
    char *value = NULL;
    if (!JVMTI_OK(JVMTI_TRY(bk.jvmti, GetSystemProperty, name, &value))) {
        return NULL;
    }
    return bk_take_string(value);
}

void *seam_vm_alloc(unsigned int size)
{
    unsigned char *p = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, Allocate, (jlong)size, &p))) {
        return NULL;
    }
    return p;
}

void seam_vm_free(void *p) { bk_deallocate(p); }

void seam_force_gc(void)
{
    bk_exitfrees_wait();
    if (!bk_exitfrees_silent_gc()) {
        JVMTI_CALL0(bk.jvmti, ForceGarbageCollection);
    }
}

/* JDK 26 and later wait at VM death, up to a minute, for the JVM TI
 * callbacks in progress: Runtime.halt from inside one (an agent's
 * ProfilerExit in its JVM_INIT_DONE handler) took that minute.  Two seconds
 * on, the process ends without the VM's help, with the same code. */
static void *halt_watchdog(void *code)
{
    struct timespec wait = {2, 0};
    while (nanosleep(&wait, &wait) != 0) {
    }
    fflush(NULL);
    _exit((int)(intptr_t)code);
}

void seam_halt(jint code)
{
    JNIEnv *env = seam_current_env();
    pthread_t watchdog;
    if (pthread_create(&watchdog, NULL, halt_watchdog, (void *)(intptr_t)code) == 0) {
        pthread_detach(watchdog);
    }
    if (env != NULL) {
        jclass runtime = (*env)->FindClass(env, "java/lang/Runtime");
        jmethodID get = runtime ? (*env)->GetStaticMethodID(env, runtime, "getRuntime", "()Ljava/lang/Runtime;") : NULL;
        jmethodID halt = runtime ? (*env)->GetMethodID(env, runtime, "halt", "(I)V") : NULL;
        jobject rt = get ? (*env)->CallStaticObjectMethod(env, runtime, get) : NULL;
        if (rt != NULL && halt != NULL) {
            (*env)->CallVoidMethod(env, rt, halt, code);
        }
        (*env)->ExceptionClear(env);
    }
    /* Not a Java thread, or halt failed: leave without the VM's help. */
    fflush(NULL);
    _exit(code);
}

/* ---- Agent_OnLoad ------------------------------------------------------------------- */

/* Whether SampledObjectAlloc at interval 0 reports every allocation on JVM
 * TI major version major.  On JDK 11, after an allocation too large for a
 * thread's TLAB the VM samples nothing more in that TLAB until the thread
 * takes its next one; JDK 17 samples them all.  JDK 12 to 16 are not
 * checked: they take the hooks beside the sampler, as JDK 11 does. */
static bool sampler_complete(jint major) { return major >= 17; }

void seam_alloc_hooks(bool forced)
{
    if (forced) {
        bk.sampled_alloc = false;
        bk.alloc_hooks = true;
    }
}

static bool create_envs(JavaVM *vm)
{
    if ((*vm)->GetEnv(vm, (void **)&bk.jvmti, JVMTI_VERSION_1_2) != JNI_OK ||
        (*vm)->GetEnv(vm, (void **)&bk.jvmti_cls, JVMTI_VERSION_1_2) != JNI_OK ||
        (*vm)->GetEnv(vm, (void **)&bk.jvmti_find, JVMTI_VERSION_1_2) != JNI_OK) {
        LOG_ERROR("this VM offers no JVM TI 1.2 environment: the layer cannot run");
        return false;
    }
    jvmtiCapabilities caps, offered;
    memset(&caps, 0, sizeof caps);
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetPotentialCapabilities, &offered))) {
        return false;
    }
    caps.can_tag_objects = 1;
    caps.can_get_source_file_name = 1;
    caps.can_get_line_numbers = 1;
    caps.can_generate_all_class_hook_events = 1;
    caps.can_suspend = 1;
    caps.can_get_current_thread_cpu_time = 1;
    caps.can_get_thread_cpu_time = 1;
    caps.can_generate_object_free_events = 1;
    caps.can_generate_garbage_collection_events = 1;
    /* Where sampling at interval 0 is missing (JVM TI before 11) or misses
     * allocations (JDK 11: see sampler_complete), the program's allocations
     * come from the rewriter's allocation hooks, JNI's from the JNI function
     * table and the VM's own from VMObjectAlloc.  That event leaves out
     * much the VM makes itself (the String of each string constant a class
     * resolves, JDK 11's ResolvedMethodName), so where the sampler exists it
     * stays on beside the hooks, which catch what it misses: an object
     * reported by both is reported once, by its tag.  VMObjectAlloc is
     * taken on every JDK, for allocs=hooks (seam_alloc_hooks). */
    jint version = 0;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetVersionNumber, &version))) {
        return false;
    }
    jint major = (version & JVMTI_VERSION_MASK_MAJOR) >> JVMTI_VERSION_SHIFT_MAJOR;
    bk.live_frames = major >= 9;
    bk.silent_death = major >= 26;
    bk.block_fields = major < 15;
    bk.klass_sized_mirrors = major < 9;
    bk.sampled_alloc = offered.can_generate_sampled_object_alloc_events;
    bk.alloc_hooks = !bk.sampled_alloc || !sampler_complete(major);
    bk.early_vmstart = offered.can_generate_early_vmstart;
    caps.can_generate_sampled_object_alloc_events = bk.sampled_alloc;
    caps.can_generate_vm_object_alloc_events = 1;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, AddCapabilities, &caps))) {
        return false;
    }
    memset(&caps, 0, sizeof caps);
    caps.can_tag_objects = 1;
    caps.can_generate_object_free_events = 1;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti_cls, AddCapabilities, &caps))) {
        return false;
    }
    memset(&caps, 0, sizeof caps);
    caps.can_tag_objects = 1;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti_find, AddCapabilities, &caps))) {
        return false;
    }

    bk_callback_slots all;
    memset(&all, 0, sizeof all);
    jvmtiEventCallbacks cb = all.cb;
    cb.VMInit = on_vm_init;
    cb.VMDeath = on_vm_death;
    cb.ThreadStart = bk_on_thread_start;
    cb.ThreadEnd = bk_on_thread_end;
    cb.ClassPrepare = bk_on_class_prepare;
    cb.ClassFileLoadHook = on_class_file_load_hook;
    cb.DataDumpRequest = on_data_dump_request;
    cb.SampledObjectAlloc = bk_on_sampled_alloc;
    cb.VMObjectAlloc = bk_on_vm_object_alloc;
    cb.ObjectFree = bk_on_object_free;
    cb.GarbageCollectionStart = bk_on_gc_start;
    cb.GarbageCollectionFinish = bk_on_gc_finish;
    cb.MonitorContendedEnter = bk_on_monitor_contended_enter;
    cb.MonitorContendedEntered = bk_on_monitor_contended_entered;
    cb.MonitorWait = bk_on_monitor_wait;
    cb.MonitorWaited = bk_on_monitor_waited;
    cb.NativeMethodBind = bk_on_native_bind;
    cb.MethodEntry = bk_on_method_entry;
    cb.MethodExit = bk_on_method_exit;
    cb.SingleStep = bk_on_single_step;
    cb.CompiledMethodLoad = bk_on_compiled_method_load;
    cb.CompiledMethodUnload = bk_on_compiled_method_unload;
    all.cb = cb;
    bk_vthreads_callbacks(&all);
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, SetEventCallbacks, &all.cb, (jint)sizeof all))) {
        return false;
    }
    memset(&cb, 0, sizeof cb);
    cb.ObjectFree = bk_on_class_tag_free;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti_cls, SetEventCallbacks, &cb, (jint)sizeof cb))) {
        return false;
    }
    /* Thread tracking is always on: JVMPI names threads by JNIEnv *, which
     * only a thread's own events reveal.  Threads start rarely.  ObjectFree
     * on object tags is always on too: it keeps the live count GC_FINISH
     * reports, and costs nothing for objects that have no ID.  So are the
     * collection events (one call per collection): they tell which objects
     * may have died (heap.c). */
    return bk_set_event(bk.jvmti, JVMTI_EVENT_VM_INIT, true) && bk_set_event(bk.jvmti, JVMTI_EVENT_VM_DEATH, true) &&
           bk_set_event(bk.jvmti, JVMTI_EVENT_THREAD_START, true) && bk_set_event(bk.jvmti, JVMTI_EVENT_THREAD_END, true) &&
           bk_set_event(bk.jvmti, JVMTI_EVENT_OBJECT_FREE, true) &&
           bk_set_event(bk.jvmti, JVMTI_EVENT_GARBAGE_COLLECTION_START, true) &&
           bk_set_event(bk.jvmti, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, true) && bk_heap_onload() &&
           bk_monitors_onload(vm);
}

bool bk_need_capabilities(const jvmtiCapabilities *want)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static jvmtiCapabilities held; /* what this function added so far */
    const unsigned char *w = (const unsigned char *)want;
    unsigned char *h = (unsigned char *)&held;
    jvmtiCapabilities missing;
    unsigned char *m = (unsigned char *)&missing;
    bool ok = true, any = false;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < sizeof held; i++) {
        m[i] = (unsigned char)(w[i] & ~h[i]);
        any = any || m[i] != 0;
    }
    if (any) {
        ok = JVMTI_OK(JVMTI_CALL(bk.jvmti, AddCapabilities, &missing));
        for (size_t i = 0; ok && i < sizeof held; i++) {
            h[i] |= m[i];
        }
    }
    if (any && ok && atomic_load(&caps_logged)) {
        bk_caps_log("added", &missing);
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

void bk_caps_missing(const char *what)
{
    LOG_ERROR("%s: not available: the agent did not enable these events in JVM_OnLoad, so the layer did not "
              "take their JVM TI capabilities (which slow the VM even unused, and exist only at start-up); "
              "run with JVMPI_LAYER_OPTIONS=caps=all",
              what);
}

/* The OnLoad-only capabilities that cost even unused, for the families the
 * agent asked for in JVM_OnLoad (layer_capabilities_wanted). */
static void take_costly_capabilities(void)
{
    seam_caps_wanted w = layer_capabilities_wanted();
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    if (w.monitors) {
        /* MONITOR_DUMP finds monitors through their owners and blocked threads. */
        caps.can_get_owned_monitor_info = 1;
        caps.can_get_current_contended_monitor = 1;
    }
    bk_methods_onload_caps(&caps, &w);
    bool ctor_receivers = w.entry2 && !layer_methods_by_jvmti() && !bk.live_frames;
    if (ctor_receivers) {
        caps.can_access_local_variables = 1;
    }
    if (!bk_need_capabilities(&caps)) {
        return;
    }
    w.receiver = w.receiver || ctor_receivers;
    bk.caps_monitors = w.monitors;
    bk.caps_methods = w.methods;
    bk.caps_steps = w.instructions;
    bk.caps_receiver = w.receiver;
    LOG_DEBUG("capabilities taken for: %s%s%s%s", w.methods ? "method events " : "",
              w.instructions ? "instructions " : "", w.receiver ? "receivers " : "", w.monitors ? "monitors" : "");
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (bk.vm != NULL) {
        /* Another -agentpath:libjvmpi.so: one more JVMPI agent in this VM. */
        jint rc = layer_onload(vm, options);
        if (rc == JNI_OK) {
            take_costly_capabilities();
        }
        return rc;
    }
    bk.vm = vm;
    if (!create_envs(vm)) {
        return JNI_ERR;
    }
    patch_java_vm(vm);
    jint rc = layer_onload(vm, options);
    if (rc == JNI_OK) {
        take_costly_capabilities();
        bk_vthreads_onload();
    }
    return rc;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
    atomic_store(&bk_vm_dead, true);
}
