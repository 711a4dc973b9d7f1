/*
 * backend.h - shared by the files of the JVM TI backend, and by nothing else.
 */
#ifndef JVMPI_BACKEND_H_
#define JVMPI_BACKEND_H_

#include <jvmti.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "log.h"
#include "presence.h"
#include "seam.h"
#include "tls.h"

typedef struct {
    JavaVM *vm;
    jvmtiEnv *jvmti;      /* events, object tags, everything else */
    jvmtiEnv *jvmti_cls;  /* only class tags and their ObjectFree: class unloads */
    jvmtiEnv *jvmti_find; /* no tags but while finder.c builds its index */
    jint (JNICALL *vm_get_env)(JavaVM *, void **, jint);  /* the VM's own GetEnv */
    jobject internal_thread; /* global ref to the layer's delivery thread */
    /* which costly OnLoad-only capabilities were taken (agent.c) */
    bool caps_methods, caps_steps, caps_receiver, caps_monitors;
    /* What the VM offers beyond JVM TI 1.2 (JDK 8 has none of it):
     * SampledObjectAlloc (JVM TI 11); the early start phase (JVM TI 9).
     * Where the sampler is missing or incomplete (before JDK 17),
     * OBJECT_ALLOC comes from the rewriter's allocation hooks and
     * VMObjectAlloc too (alloc_hooks). */
    bool sampled_alloc, alloc_hooks, early_vmstart;
    /* JDK 8's GetObjectSize gives a Class object the size of its class's VM
     * metadata: the object's own size is worked out instead (classinfo.c)
     * from a primitive type's Class object (mirror_base bytes, measured at
     * VM init, 0 before) and the size of a reference (mirror_ref); both
     * set under classinfo.c's lock. */
    bool klass_sized_mirrors;
    jlong mirror_base, mirror_ref;
    /* JDK 9 on: java.lang.LiveStackFrame reads a constructor's receiver
     * from its frame (methodhooks.c); else local variable access does. */
    bool live_frames;
    /* JVM TI 26 on posts no event once VM death has begun, ObjectFree
     * included (exitfrees.c makes a collection's frees then). */
    bool silent_death;
    /* Before JDK 15 HotSpot lays out each class's fields in a block of its
     * own after its superclass's (fieldmap.c's estimate of sizes). */
    bool block_fields;
    /* GarbageCollectionStart/Finish events so far (heap.c): equal outside a
     * pause.  Objects die and move only in pauses, so what was seen in one
     * pause interval holds until the next one starts (heap.c's recent
     * allocations, classcache.c). */
    _Atomic unsigned long pauses_started, pauses_finished;
} backend_globals;

/* Adds to the main environment those of want's capabilities it lacks; cheap
 * once they are held (for capabilities taken when first needed). */
bool bk_need_capabilities(const jvmtiCapabilities *want);
/* One error line for an event or request whose capabilities were not taken. */
void bk_caps_missing(const char *what);
/* log=info: the capabilities given, or those env holds, by name. */
void bk_caps_log(const char *what, const jvmtiCapabilities *caps);
void bk_caps_log_env(const char *what, jvmtiEnv *env);
bool bk_vthreads_capability_in(const jvmtiCapabilities *caps);

extern backend_globals bk;

/* Every JVM TI call goes through one of these, so a failure always names the
 * call, the error, and where it was made.  JVMTI_CALL logs an error;
 * JVMTI_TRY is for calls whose failure is an expected answer (no source
 * file, a native method) and logs only at debug level. */
jvmtiError bk_check(jvmtiError err, bool expected, const char *call, const char *file, int line);
/* Success costs no call: some of these are on the allocation path. */
static inline jvmtiError bk_checked(jvmtiError err, bool expected, const char *call, const char *file, int line)
{
    return err == JVMTI_ERROR_NONE ? err : bk_check(err, expected, call, file, line);
}
#define JVMTI_CALL(env, fn, ...) bk_checked((*(env))->fn((env), __VA_ARGS__), false, #fn, __FILE__, __LINE__)
#define JVMTI_CALL0(env, fn) bk_checked((*(env))->fn((env)), false, #fn, __FILE__, __LINE__)
#define JVMTI_TRY(env, fn, ...) bk_checked((*(env))->fn((env), __VA_ARGS__), true, #fn, __FILE__, __LINE__)
#define JVMTI_OK(err) ((err) == JVMTI_ERROR_NONE)

void bk_deallocate(void *p);
/* Switches a JVM TI event for all threads; false (and an error line) when refused. */
bool bk_set_event(jvmtiEnv *env, jvmtiEvent event, bool on);

/* exitfrees.c: the exiting thread posts the last frees itself and waits for
 * the Service Thread to be quiet, before VM death's own flush (which can
 * deadlock when it meets the Service Thread posting). */
void bk_exitfrees_vm_init(JNIEnv *env);
void bk_exitfrees_count(void); /* every ObjectFree callback */
void bk_exitfrees_thread_end(JNIEnv *env);
/* Called first by every collection and heap pass the layer asks for. */
void bk_exitfrees_wait(void);
void bk_exitfrees_vm_death(void);
/* A collection during VM death where the VM posts no ObjectFree
 * (bk.silent_death): collects, and hands each object it freed to the layer as
 * its ObjectFree would have.  False, having done nothing, elsewhere. */
bool bk_exitfrees_silent_gc(void);
/* On JVM TI 26 and later: the events Java threads post off, and the
 * callbacks under way finished, before VM death (agent.c). */
void bk_quiet_before_death(void);
/* malloc'd copy of a JVM TI string, which is then deallocated. */
char *bk_take_string(char *jvmti_string);

/* The callback guard: no callback runs half-way through VM death.
 * Callbacks under way are counted in a slot per thread without a locked
 * instruction (presence.h): VM death sets the flag, then sums the counts,
 * and a callback counts itself first, then looks.  Inline: the rewriter's
 * hooks pass the guard at every Java call. */
typedef struct {
    presence_slot *slot; /* once the thread has one */
    /* Callbacks the thread is inside: VM death can come from within one
     * (ProfilerExit in a handler halts the VM), and that one never returns. */
    int own;
} bk_guard_thread;
extern TLS_FAST bk_guard_thread bk_guard_me;
extern _Atomic bool bk_vm_dead;
/* An error that a call under way on an agent's thread when the VM died
 * meets as JVM TI stops answering: no error then, as one made a moment
 * later is refused without a word. */
#define LOG_ERROR_UNLESS_VM_DEAD(...) \
    LOG_AT(atomic_load(&bk_vm_dead) ? LOG_LEVEL_DEBUG : LOG_LEVEL_ERROR, __VA_ARGS__)
bool bk_callback_enter_first(void);

static inline bool bk_callback_enter(void)
{
    if (bk_guard_me.slot == NULL) {
        return bk_callback_enter_first();
    }
    if (!presence_enter_open(bk_guard_me.slot, &bk_vm_dead)) {
        return false;
    }
    bk_guard_me.own++;
    return true;
}

static inline void bk_callback_exit(void)
{
    bk_guard_me.own--;
    presence_leave(bk_guard_me.slot);
}
#define BEGIN_CALLBACK() do { if (!bk_callback_enter()) return; } while (0)
#define END_CALLBACK() bk_callback_exit()

/* classinfo.c */
/* ID of a class, giving it one (and a CLASS_LOAD record) when it has none;
 * an array class's innermost element class is linked first if it is not. */
jobjectID bk_class_id(JNIEnv *env, jclass klass);
/* From VM init on: element classes may be linked (see classinfo.c). */
void bk_classinfo_vm_init(JNIEnv *env);
/* methodcheck.c: whether an agent's method ID can be given to JVM TI
 * without crashing the VM; learnt from one method of java.lang.Class at VM
 * init. */
void bk_methodcheck_learn(jmethodID known);
bool bk_method_id_plausible(jmethodID m);
/* JDK 8 (bk.klass_sized_mirrors): a Class object's size with no statics,
 * and a reference's, measured at VM init; the classes defined before are
 * sized now. */
void bk_classinfo_mirrors_measured(jlong base, jlong ref);
/* Whether obj is a java.lang.Class, safe in any event (see classinfo.c). */
bool bk_is_class_object(JNIEnv *env, jobject obj);
/* Links the innermost element class of array_class if it is loaded but not
 * linked (not initialized); nothing for other classes or before VM init. */
void bk_link_element(JNIEnv *env, jclass array_class);
/* While the layer calls a Java method for itself (JNI from a callback): that
 * method.  Its method events are not reported, and call traces of this
 * thread start below its frame: the program never called it. */
extern TLS_FAST jmethodID bk_own_call;
void JNICALL bk_on_class_prepare(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jclass klass);
void JNICALL bk_on_class_tag_free(jvmtiEnv *jvmti, jlong tag);

/* classcache.c: each thread's recent classes, by mirror address (see there) */
typedef struct bk_classcache_key {
    uintptr_t mirror;       /* 0: the cache cannot be used for this lookup */
    unsigned long interval; /* pauses started when the address was read */
    tls_caches *tc;         /* the caches it was looked up in */
} bk_classcache_key;
/* At VM init: turns the cache on where the VM and collector allow it. */
void bk_classcache_vm_init(JNIEnv *env, bool allowed);
/* What vm_init decided; the unit tests call it themselves. */
void bk_classcache_set_enabled(bool on);
void bk_classcache_vm_death(void);
/* klass: a local reference (the cache reads its slot); tc: the calling
 * thread's caches (tls_caches_get), taken once by the allocation's
 * callback.  True with *class_tag set on a hit; on a miss, *key says where
 * to put the answer. */
bool bk_classcache_find(tls_caches *tc, jclass klass, bk_classcache_key *key, jlong *class_tag);
void bk_classcache_put(const bk_classcache_key *key, jlong class_tag);

/* heap.c */
bool bk_heap_onload(void);
void bk_heap_vm_init(JNIEnv *env, jthread thread);
/* Objects of not-yet-linked classes held back by the start-up replay:
 * released (their OBJECT_ALLOCs sent) when the class gets its ID; a freed
 * one is dropped (true returned). */
void bk_heap_class_linked(JNIEnv *env, jlong placeholder, jobjectID class_id);
bool bk_heap_pending_freed(jlong tag);
/* What an ObjectFree of the main environment does. */
void bk_heap_object_freed(jlong tag);
bool bk_heap_has_pending(void);
/* agent.c: ClassPrepare stays on while the layer or held-back objects need it. */
void bk_class_prepare_wanted(void);
/* Whether collections are passed to the JVMPI side (SEAM_SRC_GC). */
void bk_heap_gc_switch(bool on);
/* Switches SampledObjectAlloc (OBJECT_ALLOC's source). */
bool bk_heap_alloc_switch(bool on);
/* While set, the calling thread's allocations are not reported (the layer's
 * own); returns what was set before. */
bool bk_alloc_quiet(bool quiet);
/* Local ref to an array class's element class; NULL when not an array class. */
jclass bk_array_element_class(JNIEnv *env, jclass array_class);
/* java.lang.Class's class ID (as a tag), known from VM init on. */
jlong bk_class_class_tag(void);
/* ID of an array class's element class, defining it if needed. */
jobjectID bk_element_class_id(JNIEnv *env, jclass array_class);
void JNICALL bk_on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jobject object, jclass klass,
                                 jlong size);
void JNICALL bk_on_object_free(jvmtiEnv *jvmti, jlong tag);
/* Without SampledObjectAlloc (JDK 8): VMObjectAlloc, and an object whose
 * java.lang.Object constructor ran or that JNI made; each reported once,
 * while OBJECT_ALLOC is on. */
void JNICALL bk_on_vm_object_alloc(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jobject object, jclass klass,
                                   jlong size);
void bk_heap_constructed(JNIEnv *env, jobject object);
void JNICALL bk_on_gc_start(jvmtiEnv *jvmti);
void JNICALL bk_on_gc_finish(jvmtiEnv *jvmti);

/* methods.c (METHOD_*, COMPILED_METHOD_*, INSTRUCTION_START) */
/* The OnLoad-only capabilities the wanted method and instruction events need. */
void bk_methods_onload_caps(jvmtiCapabilities *caps, const seam_caps_wanted *w);
bool bk_methods_source_set(seam_source source, bool on);
/* After layer_vm_init: the compiled-method replay asked for before it. */
void bk_methods_vm_init(void);
void JNICALL bk_on_method_entry(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jmethodID method);
void JNICALL bk_on_method_exit(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jmethodID method,
                               jboolean by_exception, jvalue value);
void JNICALL bk_on_single_step(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jmethodID method, jlocation location);
void JNICALL bk_on_compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size, const void *code_addr,
                                        jint map_length, const jvmtiAddrLocationMap *map, const void *compile_info);
void JNICALL bk_on_compiled_method_unload(jvmtiEnv *jvmti, jmethodID method, const void *code_addr);

/* methodhooks.c (METHOD_ENTRY/ENTRY2/EXIT by class rewriting) */
/* SEAM_SRC_METHOD_ENTRY, _EXIT, _RECEIVER when methods=rewrite; in the
 * live phase (the rewriting needs a class defined and natives registered). */
bool bk_methodhooks_set(seam_source source, bool on);
/* While held, bk_methodhooks_set only records each switch; releasing makes
 * the classes agree with all of them at once (one retransformation where an
 * agent switched several method events on during start-up).  Returns false
 * when the release could not. */
bool bk_methodhooks_hold(bool hold);
/* VM death has begun: switches made from now on retransform nothing. */
void bk_methodhooks_vm_death(void);
/* OBJECT_ALLOC where the VM has no SampledObjectAlloc: java.lang.Object's
 * constructor rewritten to report each object it finishes
 * (bk_heap_constructed). */
bool bk_methodhooks_allocs(bool on);
/* While set (obj not NULL), the calling thread announces obj from
 * java.lang.Object's constructor: GetCallTrace of this thread leaves out
 * the constructors running for obj (stacks.c).  Returns the object set
 * before, to be set again after (an agent's handler may allocate). */
jobject bk_stacks_constructing(JNIEnv *env, jobject obj);
/* Whether method is an old version a retransformation left behind (only
 * asked once a class was rewritten); the current version of it, NULL if
 * none has its name and signature. */
bool bk_methodhooks_obsolete(jmethodID method);
jmethodID bk_methodhooks_current(jmethodID method);
/* The code of a method rewritten with instruction hooks as its class file
 * had it (malloc'd, *len set), or NULL for any other method. */
unsigned char *bk_methodhooks_original_code(jmethodID method, jint *len);

/* refusals.c: the line for a class the rewriter refused (why: its reason),
 * said once per thing it does not know (classfile_unknown_in). */
void bk_refusals_class(const char *name, unsigned major, const char *why);

/* resetsig.c (DATA_RESET_REQUEST) */
bool bk_reset_signal_switch(bool on);

/* monitors.c (MONITOR_* events, MONITOR_DUMP, Thread.sleep) */
/* Agent_OnLoad: an environment of its own that catches the binding of the
 * sleep native (Thread.sleep reported as a wait).  Never fails the layer. */
bool bk_monitors_onload(JavaVM *vm);
/* At VM init: says so if the sleep native was not wrapped. */
void bk_monitors_vm_init(JNIEnv *env);
bool bk_monitor_source_set(seam_source source, bool on);
void JNICALL bk_on_monitor_contended_enter(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jobject object);
void JNICALL bk_on_monitor_contended_entered(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jobject object);
void JNICALL bk_on_monitor_wait(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jobject object, jlong timeout);
void JNICALL bk_on_monitor_waited(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jobject object,
                                  jboolean timed_out);
void JNICALL bk_on_native_bind(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jmethodID method, void *address,
                               void **new_address);

/* finder.c */
/* A local ref to the object with tag (an object or a class tag); NULL when
 * no live object has it.  Constant time once finder.c's index is built. */
jobject bk_object_of_tag(JNIEnv *env, jlong tag);
/* The same by a scan of every tag (GetObjectsWithTags), without the index. */
jobject bk_object_scan(JNIEnv *env, jlong tag);

/* objects.c */
/* The object's tag, giving it one (sized, counted) when it has none; 0 on failure. */
jlong bk_object_tag(JNIEnv *env, jobject obj);
/* A class's tag (its class ID), giving it one if it has none; 0 when it cannot have one. */
jlong bk_class_tag(JNIEnv *env, jclass klass);

/* jnirefs.c */
/* Puts the reporting JNI function table in place (VM init, live phase). */
bool bk_jni_refs_vm_init(void);
bool bk_jni_refs_switch(bool on);
/* Every live JNI global reference made since VM init, with its object's tag
 * (tagged now if it had none); calloc'd, *count set.  For JNI_GLOBAL roots. */
typedef struct bk_global_ref {
    jlong tag;
    jobject ref;
} bk_global_ref;
bk_global_ref *bk_global_refs(JNIEnv *env, int *count);
/* The layer's own global references, never reported to the agent. */
jobject bk_new_global_ref(JNIEnv *env, jobject obj);
void bk_delete_global_ref(JNIEnv *env, jobject ref);
jweak bk_new_weak_ref(JNIEnv *env, jobject obj);
void bk_delete_weak_ref(JNIEnv *env, jweak ref);

/* threadsvc.c */
/* What THREAD_START says of thread (thread_env: its JNIEnv *, NULL when
 * unknown); the thread tagged, a global ref taken.  False (and an error
 * line) when it cannot be given an ID. */
bool bk_thread_info(JNIEnv *env, JNIEnv *thread_env, jthread thread, seam_thread_info *out);
void JNICALL bk_on_thread_start(jvmtiEnv *jvmti, JNIEnv *env, jthread thread);
void JNICALL bk_on_thread_end(jvmtiEnv *jvmti, JNIEnv *env, jthread thread);
void bk_thread_started(JNIEnv *env, jthread thread);
/* Records the live threads no ThreadStart told the layer about. */
void bk_threads_started_unseen(JNIEnv *env);

/* vthreads.c (virtual threads, JDK 21 and later) */
/* Agent_OnLoad, after the layer read its options: takes
 * can_support_virtual_threads where the VM has it and the layer presents
 * virtual threads as threads; finds the mount extension events. */
void bk_vthreads_onload(void);
/* The callback table as JVM TI 21 lays it out (one slot per event from
 * JVMTI_MIN_EVENT_TYPE_VAL to VirtualThreadEnd, 88), whatever JDK's
 * jvmti.h the layer was built with; older VMs read the part they know. */
typedef void (JNICALL *bk_any_callback)(void);
typedef union bk_callback_slots {
    jvmtiEventCallbacks cb;
    bk_any_callback slot[88 - JVMTI_MIN_EVENT_TYPE_VAL + 1];
} bk_callback_slots;
/* Fills in VirtualThreadStart and VirtualThreadEnd. */
void bk_vthreads_callbacks(bk_callback_slots *all);
bool bk_vthreads_source_set(bool on);

#endif
