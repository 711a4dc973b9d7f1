/*
 * seam.h - the one header between the JVMPI side (jvmpi/) and the JVM TI
 * backend (jvmti_backend/).
 *
 * The JVMPI side never sees jvmti.h; the backend never builds a JVMPI event.
 * Everything crossing here is plain C data in JVMPI's own vocabulary
 * (jobjectID, JNIEnv *, JVMPI_Method, ...), which is what lets the unit tests
 * put a fake backend (tests/unit/fake_backend.c) behind the same header.
 *
 *   seam_*   implemented by the backend, called by the JVMPI side
 *   layer_*  implemented by the JVMPI side, called by the backend
 */
#ifndef JVMPI_SEAM_H_
#define JVMPI_SEAM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jvmpi.h"

/* ---- identity ---------------------------------------------------------- */

/* A jobjectID is a JVM TI tag shown as a pointer.  Tags are handed out by
 * jvmpi/ids.c and never reused.  A tag also says what it names: a class
 * (and whether that class is an array class, of which element type), or a
 * counted object (and its size, so that GC_FINISH can report live bytes
 * without a table of its own).  Agents see only an opaque, 8-aligned value. */
static inline jobjectID seam_id_from_tag(int64_t tag) { return (jobjectID)(uintptr_t)tag; }
static inline int64_t seam_tag_from_id(jobjectID id) { return (int64_t)(uintptr_t)id; }

/* Tag for a new object of size bytes, of the class tagged class_tag (0 when
 * that class has no tag); counts it as live and records its class. */
int64_t ids_next_object(jlong size, int64_t class_tag);
/* Tag for an object that gets its ID without an OBJECT_ALLOC (a heap walk,
 * jobject2jobjectID, a monitor's, reference's or thread's object); counted
 * as live.  jvmpi/defs.c announces it before the first event that names it. */
int64_t ids_next_unannounced_object(jlong size, int64_t class_tag);
/* Same, not counted until ids_count (held back until its class is linked). */
int64_t ids_next_object_uncounted(jlong size, int64_t class_tag);
/* What the layer knows of an object ID without asking JVM TI. */
typedef enum ids_object_state {
    IDS_OBJECT_LIVE,    /* *class_tag is its class's tag */
    IDS_OBJECT_GONE,    /* freed, never an object's ID, or a class ID */
    IDS_OBJECT_UNKNOWN  /* live, its class not recorded: ask JVM TI */
} ids_object_state;
ids_object_state ids_object_class(int64_t tag, int64_t *class_tag);
/* The object's class got its tag (it was not linked when the object got its ID). */
void ids_set_object_class(int64_t tag, int64_t class_tag);
/* A class's number, kept in its tag and in each of its objects' records. */
uint32_t ids_class_number(int64_t class_tag);
/* Whether an object tag was made by one of the two above. */
bool ids_is_unannounced(int64_t tag);
/* Whether tag has the form of a tag the layer made, and a sequence number
 * handed out already: an ID of an object or class that may be gone, not a
 * made-up value. */
bool ids_was_issued(int64_t tag);
void ids_count(int64_t tag);
/* Tag for a new class; array_type is the JVMPI type of its elements for an
 * array class (JVMPI_CLASS for arrays of references), 0 otherwise. */
int64_t ids_next_class(jint array_type);
bool ids_is_class(int64_t tag);
/* The tag's sequence number: tags made later by one thread have higher ones. */
int64_t ids_sequence(int64_t tag);
/* A placeholder tag for a class that is loaded but not linked (no ID yet). */
int64_t ids_next_pending_class(void);
bool ids_is_pending_class(int64_t tag);
/* JVMPI_NORMAL_OBJECT (0) for plain classes, else the element type. */
jint ids_array_type(int64_t class_tag);
/* Size recorded in an object's tag; 0 for class tags. */
jlong ids_object_size(int64_t tag);
/* An object tag's object is gone: no longer counted, its record dropped.
 * Class tags are ignored. */
void ids_forget(int64_t tag);
/* No longer counted, still recorded (held back until its class is linked). */
void ids_uncount(int64_t tag);
/* An object uncounted by ids_uncount is gone: its record dropped. */
void ids_drop_uncounted(int64_t tag);
void ids_drop_uncounted_many(const int64_t *tags, size_t n);
/* A class's java.lang.Class object (size bytes) got its class ID, or (gone)
 * its class was unloaded: Class objects count as live objects too. */
void ids_count_class_object(jlong size, bool gone);
/* Objects with IDs, and their bytes, not yet freed. */
void ids_live(jlong *objects, jlong *bytes);
void ids_reset(void);

/* ---- data the backend hands over -------------------------------------- */

/* Everything a CLASS_LOAD event carries, owned by the JVMPI side once it is
 * passed to layer_class_defined() (freed with seam_class_info_free()). */
typedef struct seam_class_info {
    jobjectID id;
    char *name;            /* external, dotted: java.lang.String, [Ljava.lang.Object; */
    char *source_name;     /* NULL when the class file has none, and for arrays */
    jint num_interfaces;
    jint num_methods;
    JVMPI_Method *methods;
    jint num_statics;
    JVMPI_Field *statics;
    jint num_instances;
    JVMPI_Field *instances;
    jint array_type;       /* 0, or the element type of an array class (JVMPI_CLASS, JVMPI_INT...) */
    jobjectID element_id;  /* arrays of references: the element class (NULL if it could
                            * not be linked, or the array class was defined before VM init) */
    jlong object_size;     /* bytes of the java.lang.Class object (its OBJECT_ALLOC's size) */
} seam_class_info;

void seam_class_info_free(seam_class_info *info);

/* What THREAD_START and THREAD_END carry, plus the backend's own handle on
 * the thread (a JNI global reference), released by seam_thread_handle_release. */
typedef struct seam_thread_info {
    JNIEnv *env;           /* NULL: a thread that started before the layer could
                            * learn its JNIEnv *; the layer makes a handle for it */
    jobjectID id;
    void *handle;
    char *name;
    char *group_name;
    char *parent_name;
    bool internal;         /* a thread of the layer itself: never reported */
    bool is_virtual;       /* a virtual thread (JDK 21+): env is a layer-made
                            * handle, the same on whichever carrier it runs */
} seam_thread_info;

/* ---- JVM TI event sources the JVMPI side switches on and off ----------- */

typedef enum seam_source {
    SEAM_SRC_CLASS_PREPARE,   /* CLASS_LOAD */
    SEAM_SRC_CLASS_FILE_HOOK, /* CLASS_LOAD_HOOK */
    SEAM_SRC_CLASS_FREE,      /* CLASS_UNLOAD */
    SEAM_SRC_DATA_DUMP,       /* DATA_DUMP_REQUEST */
    SEAM_SRC_OBJECT_ALLOC,    /* OBJECT_ALLOC: SampledObjectAlloc at interval 0 */
    SEAM_SRC_GC,              /* GC_START, GC_FINISH, OBJECT_FREE: GC start/finish */
    SEAM_SRC_JNI_REFS,        /* JNI_(WEAK_)GLOBALREF_*: the JNI function table */
    SEAM_SRC_MONITOR_CONTENDED, /* MONITOR_CONTENDED_*: MonitorContendedEnter/Entered */
    SEAM_SRC_MONITOR_WAIT,    /* MONITOR_WAIT/WAITED (and CONTENDED_EXIT): MonitorWait/Waited */
    SEAM_SRC_METHOD_ENTRY,    /* METHOD_ENTRY, METHOD_ENTRY2: MethodEntry */
    SEAM_SRC_METHOD_RECEIVER, /* METHOD_ENTRY2: MethodEntry also finds the receiver */
    SEAM_SRC_METHOD_EXIT,     /* METHOD_EXIT: MethodExit */
    SEAM_SRC_COMPILED_LOAD,   /* COMPILED_METHOD_LOAD: CompiledMethodLoad */
    SEAM_SRC_COMPILED_UNLOAD, /* COMPILED_METHOD_UNLOAD: CompiledMethodUnload */
    SEAM_SRC_SINGLE_STEP,     /* INSTRUCTION_START: SingleStep */
    SEAM_SRC_DATA_RESET,      /* DATA_RESET_REQUEST: the reset signal (SIGUSR1) */
    SEAM_SRC_VTHREADS,        /* events on threads: VirtualThreadStart/End and mounts */
    SEAM_SRC_COUNT
} seam_source;

/* Switch one JVM TI source.  Called with the JVMPI side's reference count
 * going 0->1 (on) or 1->0 (off); returns false when JVM TI refused. */
bool seam_source_set(seam_source source, bool on);

/* ---- services of the backend ------------------------------------------ */

/* allocs=hooks: OBJECT_ALLOC from the layer's allocation hooks even where
 * the VM's sampler sees every allocation.  Called once the layer's options
 * are read, before any agent can enable an event. */
void seam_alloc_hooks(bool forced);

/* A VM system property (malloc'd copy), NULL when unset.  Any phase. */
char *seam_system_property(const char *name);

/* JNIEnv * of the calling thread, NULL when it is not attached to the VM. */
JNIEnv *seam_current_env(void);
/* ID of the calling thread's java.lang.Thread, NULL when it has none. */
jobjectID seam_current_thread_id(void);
/* The calling thread, whose JNIEnv * is env, is a Java thread the layer was
 * never told about: records it (layer_thread_started) if it is one the VM
 * shows to tools, and says whether it did. */
typedef enum {
    SEAM_ADOPTED,
    /* One of the VM's hidden threads (the Service Thread, the JIT's), which
     * never get a ThreadStart. */
    SEAM_ADOPT_HIDDEN,
    /* A thread attaching to the VM whose java.lang.Thread is still in its
     * constructor (JDK 8 runs it before the thread's ThreadStart): it has
     * no name yet, and its own OBJECT_ALLOC is still to come. */
    SEAM_ADOPT_UNBORN,
} seam_adoption;
seam_adoption seam_thread_adopt(JNIEnv *env);

/* java.lang.Class's class ID (the class_id of every Class object's
 * OBJECT_ALLOC but its own, which names none); NULL before VM init. */
jobjectID seam_class_class_id(void);

/* Every loaded, prepared class (arrays included, primitives left out) that
 * has no ID yet gets one and is passed to layer_class_defined(), without
 * being announced; classes that already have an ID are left alone.  An
 * array class's element class is linked first if it is not (not
 * initialized), so that it is among them. */
void seam_define_loaded_classes(JNIEnv *env);

/* ID of the class that declares a method, defining the class if needed;
 * NULL when the method ID is not valid. */
jobjectID seam_method_class(jmethodID method);
/* Whether an agent's method ID can be one the VM made: checked without a
 * fault before it reaches JVM TI, which crashes on some garbage IDs. */
bool seam_method_id_valid(jmethodID method);

/* The thread functions below may name a thread that has just ended (the
 * JVMPI side looked it up a moment before): they then fail without an
 * error line, as they do for a VM that is going down. */

/* Fills frames[0..depth) (callee first) of the thread; returns the count, 0 on failure. */
jint seam_call_trace(void *thread_handle, jint depth, JVMPI_CallFrame *frames);

/* JVMPI_THREAD_* status as JVM TI sees it, every suspension shown (the
 * JVMPI side knows which ones the agent made); JVMPI_FAIL when the thread
 * is not alive. */
jint seam_thread_status(void *thread_handle);
bool seam_thread_suspend(void *thread_handle);
bool seam_thread_resume(void *thread_handle);
/* CPU time of a thread in ns, -1 when unknown. */
jlong seam_thread_cpu_time(void *thread_handle);
void seam_thread_handle_release(void *thread_handle);

/* Starts a daemon java.lang.Thread running f(arg).  priority is 1..10. */
bool seam_start_system_thread(JNIEnv *env, const char *name, jint priority,
                              void (*f)(void *), void *arg);

/* The layer's own delivery thread: runs layer_delivery_main on a daemon
 * thread that no JVMPI event reports. */
bool seam_start_delivery_thread(JNIEnv *env);

/* Memory the VM will free itself (CLASS_LOAD_HOOK's malloc_f). */
void *seam_vm_alloc(unsigned int size);
void seam_vm_free(void *p);

void seam_force_gc(void);

/* ---- heap (OBJECT_ALLOC, OBJECT_FREE, GC) ------------------------------ */

/* Makes JVM TI post, on this thread and before returning, the ObjectFree of
 * every tagged object the collections so far found dead that no other
 * thread is posting already, classes' included (the unloads).  Costs a pass
 * over the heap: for RunGC and VM death only. */
void seam_post_pending_frees(JNIEnv *env);

/* Heap capacity in bytes (GC_FINISH total_object_space), -1 unknown. */
jlong seam_heap_capacity(JNIEnv *env);

/* What an OBJECT_ALLOC says about an object. */
typedef struct seam_object_info {
    jobjectID id;
    jobjectID class_id;   /* element class for arrays of references; NULL for primitive arrays */
    jint is_array;        /* JVMPI_NORMAL_OBJECT, JVMPI_CLASS or the primitive element type */
    jlong size;
} seam_object_info;

/* RequestEvent(OBJECT_ALLOC, id): false when no live object has that ID. */
bool seam_object_info_of(JNIEnv *env, jobjectID id, seam_object_info *out);

/* Every object in the heap but Class objects (which CLASS_LOAD defines),
 * untagged ones getting IDs; calloc'd array, *count set.  Classes must have
 * their IDs already (seam_define_loaded_classes). */
seam_object_info *seam_heap_objects(JNIEnv *env, int *count);

jobject seam_object_from_id(JNIEnv *env, jobjectID id);
jobjectID seam_id_from_object(JNIEnv *env, jobject object);

/* Exit the process with code, the way Runtime.halt does. */
void seam_halt(jint code);

/* ---- heap dumps (HEAP_DUMP, OBJECT_DUMP): see jvmpi/heapdump.c ---------- */

/* The heap as one JVM TI walk saw it, in JVMPI's terms; jvmpi/heapdump.c
 * lays it out as dump records.  JVM TI numbers fields its own way (all the
 * fields of a class and its supers, statics included, after those of its
 * interfaces); the backend turns that into the key the JVMPI side can order
 * by: the class whose CLASS_LOAD lists the field, and the field's position
 * in that CLASS_LOAD's instances (or statics) array. */

/* A value: a reference (type JVMPI_CLASS, v.id, NULL for null) or a
 * primitive (type JVMPI_BOOLEAN .. JVMPI_LONG, the member of that type). */
typedef union seam_heap_bits {
    jobjectID id;
    jboolean z;
    jbyte b;
    jchar c;
    jshort s;
    jint i;
    jlong j;
    jfloat f;
    jdouble d;
} seam_heap_bits;

typedef struct seam_heap_field {
    jobjectID decl;    /* the class whose CLASS_LOAD lists the field */
    jint slot;         /* index into decl's CLASS_LOAD instances (statics for class statics) */
    jint type;
    seam_heap_bits v;
} seam_heap_field;

typedef struct seam_heap_class {
    jobjectID id;
    jobjectID super;            /* NULL for java.lang.Object and for interfaces */
    jobjectID loader, signers, domain;   /* NULL when none */
    jobjectID name;             /* the VM's cached class-name String, when the dump has it */
    jint instance_size;         /* bytes; 0 for interfaces and array classes */
    jobjectID element;          /* arrays of references: the element class */
    jint num_interfaces;        /* direct interfaces, as CLASS_LOAD counts them */
    jobjectID *interfaces;
    jint num_statics;           /* entries in statics; static fields without one are null/0 */
    seam_heap_field *statics;   /* decl is the class itself */
} seam_heap_class;

typedef enum {
    SEAM_HEAP_INSTANCE,
    SEAM_HEAP_CLASS,       /* a java.lang.Class with a class ID: see classes */
    SEAM_HEAP_OBJ_ARRAY,
    SEAM_HEAP_PRIM_ARRAY
} seam_heap_kind;

typedef struct seam_heap_object {
    jobjectID id;
    jobjectID class_id;    /* its class (arrays: the array class); NULL for SEAM_HEAP_CLASS */
    jint kind;             /* seam_heap_kind */
    jint count;            /* instances: entries in u.fields; arrays: length */
    jint elem_type;        /* primitive arrays: JVMPI_BOOLEAN .. JVMPI_LONG */
    union {
        seam_heap_field *fields;   /* any order; fields without an entry are null/0 */
        jobjectID *elements;       /* count IDs, NULL for null */
        const void *values;        /* count values of elem_type, packed, native byte order */
    } u;
} seam_heap_object;

typedef struct seam_heap_root {
    jint kind;             /* JVMPI_GC_ROOT_* */
    jobjectID id;          /* the object (THREAD_BLOCK: the thread object) */
    jobjectID thread;      /* JNI_LOCAL, JAVA_FRAME, THREAD_BLOCK: the thread's ID; NULL if it has none */
    jint depth;            /* JNI_LOCAL, JAVA_FRAME: the frame's depth (0 = top) at the walk, -1 none;
                            * the dump numbers frames from the outermost (jvmpi/heapdump.c) */
    jmethodID method;      /* that frame's method */
    jobject ref;           /* JNI_GLOBAL: the global reference; NULL when not known (made before VM init) */
} seam_heap_root;

typedef struct seam_heap_snapshot {
    int num_roots;
    seam_heap_root *roots;
    int num_objects;
    seam_heap_object *objects;   /* in the order the walk met them */
    int num_classes;
    seam_heap_class *classes;    /* sorted by id: every class in objects, every
                                  * object's class, and all their superclasses */
    void *priv;                  /* the backend's, for seam_heap_snapshot_free */
} seam_heap_snapshot;

/* How much of the heap a snapshot holds. */
typedef enum {
    SEAM_HEAP_IDS,      /* objects (id, kind, class, length) only: no values, no roots, no classes */
    SEAM_HEAP_REFS,     /* all but primitive values: no primitive fields, no array contents */
    SEAM_HEAP_VALUES    /* everything */
} seam_heap_detail;

/* HEAP_DUMP: every object reachable from the GC roots, and the roots, from
 * one walk of the heap.  Objects met without an ID get one.  Classes without
 * one get theirs first (seam_define_loaded_classes).  False when the walk
 * failed (one error line). */
bool seam_heap_snapshot_take(JNIEnv *env, seam_heap_detail detail, seam_heap_snapshot *out);
/* OBJECT_DUMP: that one object (a class ID: its Class object, in classes
 * too), every value, no roots; the objects it refers to are named, getting
 * an ID if they have none, and not looked into.  Costs time in proportion
 * to the object and its class, not to the heap: HotSpot 5.0 answered it
 * from the object alone, and agents ask for it from inside a HEAP_DUMP
 * handler, once per class (Sun's HPROF).  (The backend still walks from
 * the object where it cannot read it otherwise: a signed class before JDK
 * 25, an object whose class chain lacks IDs.)  False when id is no live
 * object's ID (no message: the caller names its call) or the object could
 * not be read (one error line). */
bool seam_object_snapshot_take(JNIEnv *env, jobjectID id, seam_heap_snapshot *out);
void seam_heap_snapshot_free(seam_heap_snapshot *snap);

/* ---- Java monitors (MONITOR_* events, MONITOR_DUMP): see jvmpi/monitors.c,
 * jvmpi/monitordump.c ------------------------------------------------------ */

/* ID of the thread owning object's monitor now; NULL when nobody owns it or
 * the owner has no ID.  May stop the world briefly (GetObjectMonitorUsage). */
jobjectID seam_monitor_owner(JNIEnv *env, jobject object);

/* One Java monitor in use.  Threads are named by their thread IDs. */
typedef struct seam_monitor_info {
    jobjectID object;
    jobjectID owner;        /* NULL when unowned */
    jint entry_count;       /* 0 when unowned */
    jint n_entering;        /* blocked entering, or re-entering after a notify */
    jobjectID *entering;
    jint n_waiting;         /* in Object.wait, not yet notified */
    jobjectID *waiting;
    bool is_class;          /* the object is a java.lang.Class */
} seam_monitor_info;

/* One live thread: its call trace (callee first, as GetCallTrace) and its
 * JVMPI status as GetThreadStatus reports it (raw monitors aside). */
typedef struct seam_monitor_thread {
    jobjectID id;
    jint status;
    jint num_frames;
    JVMPI_CallFrame *frames;
} seam_monitor_thread;

typedef struct seam_monitor_snapshot {
    int num_monitors;
    seam_monitor_info *monitors;   /* each object once */
    int num_threads;
    seam_monitor_thread *threads;
    void *priv;
} seam_monitor_snapshot;

/* Every Java monitor some live thread owns, enters or waits on (as far as
 * JVM TI can find them), and every live thread, read in one pass while
 * the threads run; with max_frames 0 the threads come without traces.  JVM TI lists platform threads only: the virtual threads
 * the layer knows come as vthreads (their handles, n_vthreads of them).
 * False on failure (one error line). */
bool seam_monitor_snapshot_take(JNIEnv *env, jint max_frames, void *const *vthreads, int n_vthreads,
                                seam_monitor_snapshot *out);
void seam_monitor_snapshot_free(seam_monitor_snapshot *snap);

/* From MonitorContendedEnter / Entered, in the entering thread; object is a
 * local reference valid during the call, obj_id its ID. */
void layer_monitor_contended_enter(JNIEnv *env, jobject object, jobjectID obj_id);
void layer_monitor_contended_entered(JNIEnv *env, jobjectID obj_id);
/* From MonitorWait / Waited (obj_id the object's ID) and around the VM's
 * native sleep (obj_id NULL), in the waiting thread.  timeout_ms as asked
 * (0 = forever); timed_out as JVM TI says (always false for sleeps). */
void layer_monitor_wait(JNIEnv *env, jobjectID obj_id, jlong timeout_ms);
void layer_monitor_waited(JNIEnv *env, jobjectID obj_id, bool timed_out);
/* Whether the sleep wrapper should call the two above at all (cheap). */
bool layer_sleep_events_wanted(void);

/* ---- methods, compiled code, instructions (METHOD_*, COMPILED_METHOD_*,
 * INSTRUCTION_START, DATA_RESET_REQUEST): see jvmpi/methods.c, jvmpi/instr.c,
 * jvmpi/reset.c ------------------------------------------------------------ */

/* COMPILED_METHOD_LOAD for every method compiled now, through
 * layer_compiled_method_load, in the calling thread, before returning.
 * Before the live phase it is done right after VM init instead. */
void seam_compiled_methods_replay(void);

/* The method's bytecodes (malloc'd copy, *len set); NULL for native and
 * abstract methods, or on failure. */
unsigned char *seam_method_bytecodes(jmethodID method, jint *len);

/* In the entering/leaving thread.  receiver is the receiver's ID while
 * SEAM_SRC_METHOD_RECEIVER is on, NULL otherwise and for static methods.
 * Exits are reported also when the method leaves by an exception.  Whatever
 * produces these (JVM TI's MethodEntry/Exit now, injected bytecode later)
 * calls just these two. */
void layer_method_entry(JNIEnv *env, jmethodID method, jobjectID receiver);
void layer_method_exit(JNIEnv *env, jmethodID method);

/* On whatever thread JVM TI posts them (env NULL when it is none).  lines
 * is sorted by offset (code offset from code_addr -> source line) and
 * belongs to the caller. */
void layer_compiled_method_load(JNIEnv *env, jmethodID method, const void *code_addr, jint code_size,
                                jint num_lines, const JVMPI_Lineno *lines);
void layer_compiled_method_unload(JNIEnv *env, jmethodID method);

/* Before the bytecode at offset runs, in the executing thread. */
void layer_single_step(JNIEnv *env, jmethodID method, jint offset);
/* SEAM_SRC_SINGLE_STEP went on or off: a branch waiting for its outcome from
 * before is stale. */
void layer_single_step_switched(bool on);

/* The reset trigger fired: called from a thread outside the VM, so the
 * JVMPI side hands the event to its delivery thread. */
void layer_data_reset_request(void);

/* ---- what the backend calls on the JVMPI side -------------------------- */

/* Agent_OnLoad: options is what followed "=" in -agentpath (may be NULL).
 * vm is the JavaVM whose GetEnv already answers JVMPI versions.
 * Returns JNI_OK, or JNI_ERR after printing one line saying why. */
jint layer_onload(JavaVM *vm, const char *options);

/* Which OnLoad-only JVM TI capabilities to take; asked once the agent's
 * JVM_OnLoad has returned, still in the OnLoad phase (the only phase
 * HotSpot grants them in).  Method entry/exit, single stepping and local
 * variable access slow compiled code even with no event on; the class
 * rewriter needs none of them, so they are taken only with methods=jvmti:
 * for the event families the agent enabled in JVM_OnLoad, or all when that
 * cannot be known (an -Xrun agent loads later) or with caps=all.  The
 * monitor information ones cost nothing to hold and are always taken. */
typedef struct seam_caps_wanted {
    bool methods;      /* METHOD_ENTRY/ENTRY2/EXIT by JVM TI's events (methods=jvmti) */
    bool instructions; /* INSTRUCTION_START: single stepping */
    bool receiver;     /* METHOD_ENTRY2's receiver: local variable access */
    /* METHOD_ENTRY2 with either source: with the rewriter, a VM without a
     * stack walker of live frames (JDK 8) reads constructors' receivers
     * through local variable access too. */
    bool entry2;
    bool monitors;     /* MONITOR_DUMP: always */
} seam_caps_wanted;
seam_caps_wanted layer_capabilities_wanted(void);
/* False with JVMPI_LAYER_OPTIONS=classcache=off: every allocation then asks
 * JVM TI for its class (jvmti_backend/classcache.c says why it need not). */
bool layer_class_cache_allowed(void);
/* True with JVMPI_LAYER_OPTIONS=methods=jvmti: method events from JVM TI's
 * MethodEntry/MethodExit (every thread interpreted) rather than from the
 * class rewriter. */
bool layer_methods_by_jvmti(void);

/* GetEnv for a JVMPI version: the interface of the agent whose library
 * holds caller (GetEnv's return address), or NULL for other versions and
 * when no more agents can be served (said in one line). */
JVMPI_Interface *layer_interface_for(jint version, const void *caller);
bool layer_is_jvmpi_version(jint version);

void layer_vm_init(JNIEnv *env);
void layer_vm_death(JNIEnv *env);

/* Called in the new thread itself; at VM init also for threads already
 * running (info->env NULL for all but the calling thread). */
void layer_thread_started(seam_thread_info *info);
/* Called in the ending thread. */
void layer_thread_ended(JNIEnv *env);

/* Virtual threads (JDK 21+), each called on the carrier with the virtual
 * thread mounted.  Started: info->is_virtual set, info->env NULL (the layer
 * makes the handle); returns the thread's record, which the backend keeps
 * with the virtual thread and passes to the others; NULL when it could not
 * be recorded.  Mount/unmount bracket the stretches in which the carrier
 * runs it: every event sent meanwhile carries the virtual thread's env_id.
 * Ended: its THREAD_END, then the carrier is itself again. */
void *layer_vthread_started(seam_thread_info *info);
void layer_vthread_mount(void *vt);
void layer_vthread_unmount(void);
void layer_vthread_ended(void *vt);
/* vthreads=carriers in JVMPI_LAYER_OPTIONS: virtual threads are not told
 * apart from their carriers (the backend then tracks none). */
bool layer_vthreads_as_carriers(void);

/* A class got its ID.  Ownership of info passes to the JVMPI side.  Called
 * with a backend lock held: records only, sends nothing. */
void layer_class_defined(seam_class_info *info);
/* Then, with no lock held: sends its CLASS_LOAD if that is due. */
void layer_class_announce(JNIEnv *env, jobjectID id);
/* At VM init, before any CLASS_LOAD: the size of a class's Class object,
 * which the backend could not measure when the class got its ID. */
void layer_class_sized(jobjectID id, jlong object_size);
/* From ObjectFree: no JNI, no blocking; the JVMPI side queues it. */
void layer_class_freed(jobjectID class_id);

/* In the allocating thread (SampledObjectAlloc), the object already tagged.
 * False when no agent was sent an OBJECT_ALLOC for it (before VM init, or
 * with the event off, or switched off meanwhile): the backend then marks its
 * tag ids_unannounced. */
bool layer_object_alloc(JNIEnv *env, const seam_object_info *obj);
/* The same tag, marked as given without an OBJECT_ALLOC. */
int64_t ids_unannounced(int64_t tag);
/* From ObjectFree, on whatever thread JVM TI posts it: no JNI, no agent code. */
void layer_object_freed(int64_t tag);
/* Inside GarbageCollectionFinish: only memory and short locks.  (A
 * collection's start tells the JVMPI side nothing: its window opens after.) */
void layer_gc_finish(void);
/* A JNI global or weak global reference was made (obj its object) or deleted
 * (obj NULL) by code other than the layer; in the calling thread. */
void layer_jni_ref(JNIEnv *env, bool weak, jobject ref, jobject obj);

void layer_class_file_hook(JNIEnv *env, const unsigned char *data, jint len,
                           unsigned char **new_data, jint *new_len);
void layer_data_dump_request(void);

/* Body of the delivery thread started by seam_start_delivery_thread. */
void layer_delivery_main(JNIEnv *env);

#endif /* JVMPI_SEAM_H_ */
