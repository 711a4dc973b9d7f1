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
#include <stdint.h>

#include "jvmpi.h"

/* ---- identity ---------------------------------------------------------- */

/* A jobjectID is a JVM TI tag shown as a pointer.  Tags are handed out by
 * ids_next() (jvmpi/ids.c) and never reused. */
static inline jobjectID seam_id_from_tag(int64_t tag) { return (jobjectID)(uintptr_t)tag; }
static inline int64_t seam_tag_from_id(jobjectID id) { return (int64_t)(uintptr_t)id; }

int64_t ids_next(void);

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
} seam_thread_info;

/* ---- JVM TI event sources the JVMPI side switches on and off ----------- */

typedef enum seam_source {
    SEAM_SRC_CLASS_PREPARE,   /* CLASS_LOAD */
    SEAM_SRC_CLASS_FILE_HOOK, /* CLASS_LOAD_HOOK */
    SEAM_SRC_CLASS_FREE,      /* CLASS_UNLOAD */
    SEAM_SRC_DATA_DUMP,       /* DATA_DUMP_REQUEST */
    SEAM_SRC_COUNT
} seam_source;

/* Switch one JVM TI source.  Called with the JVMPI side's reference count
 * going 0->1 (on) or 1->0 (off); returns false when JVM TI refused. */
bool seam_source_set(seam_source source, bool on);

/* ---- services of the backend ------------------------------------------ */

/* A VM system property (malloc'd copy), NULL when unset.  Any phase. */
char *seam_system_property(const char *name);

/* JNIEnv * of the calling thread, NULL when it is not attached to the VM. */
JNIEnv *seam_current_env(void);
/* ID of the calling thread's java.lang.Thread, NULL when it has none. */
jobjectID seam_current_thread_id(void);

/* Every loaded, prepared class (arrays included, primitives left out) that
 * has no ID yet gets one and is passed to layer_class_defined(), without
 * being announced; classes that already have an ID are left alone. */
void seam_define_loaded_classes(JNIEnv *env);

/* ID of the class that declares a method, defining the class if needed;
 * NULL when the method ID is not valid. */
jobjectID seam_method_class(jmethodID method);

/* Fills frames[0..depth) (callee first) of the thread; returns the count, 0 on failure. */
jint seam_call_trace(void *thread_handle, jint depth, JVMPI_CallFrame *frames);

/* JVMPI_THREAD_* status as JVM TI sees it; suspended_by_jvmpi hides the
 * suspension the agent made itself (JVMPI: its status stays as it was). */
jint seam_thread_status(void *thread_handle, bool suspended_by_jvmpi);
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

jobject seam_object_from_id(JNIEnv *env, jobjectID id);
jobjectID seam_id_from_object(JNIEnv *env, jobject object);

/* Exit the process with code, the way Runtime.halt does. */
void seam_halt(jint code);

/* ---- what the backend calls on the JVMPI side -------------------------- */

/* Agent_OnLoad: options is what followed "=" in -agentpath (may be NULL).
 * vm is the JavaVM whose GetEnv already answers JVMPI versions.
 * Returns JNI_OK, or JNI_ERR after printing one line saying why. */
jint layer_onload(JavaVM *vm, const char *options);

/* GetEnv for a JVMPI version: the interface, or NULL for other versions. */
JVMPI_Interface *layer_interface_for(jint version);

void layer_vm_init(JNIEnv *env);
void layer_vm_death(JNIEnv *env);

/* Called in the new thread itself; at VM init also for threads already
 * running (info->env NULL for all but the calling thread). */
void layer_thread_started(seam_thread_info *info);
/* Called in the ending thread. */
void layer_thread_ended(JNIEnv *env);

/* A class got its ID.  Ownership of info passes to the JVMPI side.  Called
 * with a backend lock held: records only, sends nothing. */
void layer_class_defined(seam_class_info *info);
/* Then, with no lock held: sends its CLASS_LOAD if that is due. */
void layer_class_announce(JNIEnv *env, jobjectID id);
/* From ObjectFree: no JNI, no blocking; the JVMPI side queues it. */
void layer_class_freed(jobjectID class_id);

void layer_class_file_hook(JNIEnv *env, const unsigned char *data, jint len,
                           unsigned char **new_data, jint *new_len);
void layer_data_dump_request(void);

/* Body of the delivery thread started by seam_start_delivery_thread. */
void layer_delivery_main(JNIEnv *env);

#endif /* JVMPI_SEAM_H_ */
