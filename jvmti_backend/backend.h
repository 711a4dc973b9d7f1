/*
 * backend.h - shared by the files of the JVM TI backend, and by nothing else.
 */
#ifndef JVMPI_BACKEND_H_
#define JVMPI_BACKEND_H_

#include <jvmti.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "log.h"
#include "seam.h"

typedef struct {
    JavaVM *vm;
    jvmtiEnv *jvmti;      /* events, object tags, everything else */
    jvmtiEnv *jvmti_cls;  /* only class tags and their ObjectFree: class unloads */
    jint (JNICALL *vm_get_env)(JavaVM *, void **, jint);  /* the VM's own GetEnv */
    jobject internal_thread; /* global ref to the layer's delivery thread */
} backend_globals;

extern backend_globals bk;

/* Every JVM TI call goes through one of these, so a failure always names the
 * call, the error, and where it was made.  JVMTI_CALL logs an error;
 * JVMTI_TRY is for calls whose failure is an expected answer (no source
 * file, a native method) and logs only at debug level. */
jvmtiError bk_check(jvmtiError err, bool expected, const char *call, const char *file, int line);
#define JVMTI_CALL(env, fn, ...) bk_check((*(env))->fn((env), __VA_ARGS__), false, #fn, __FILE__, __LINE__)
#define JVMTI_CALL0(env, fn) bk_check((*(env))->fn((env)), false, #fn, __FILE__, __LINE__)
#define JVMTI_TRY(env, fn, ...) bk_check((*(env))->fn((env), __VA_ARGS__), true, #fn, __FILE__, __LINE__)
#define JVMTI_OK(err) ((err) == JVMTI_ERROR_NONE)

void bk_deallocate(void *p);
/* malloc'd copy of a JVM TI string, which is then deallocated. */
char *bk_take_string(char *jvmti_string);

/* The callback guard: no callback runs half-way through VM death. */
bool bk_callback_enter(void);
void bk_callback_exit(void);
#define BEGIN_CALLBACK() do { if (!bk_callback_enter()) return; } while (0)
#define END_CALLBACK() bk_callback_exit()

/* classinfo.c */
/* ID of a class, giving it one (and a CLASS_LOAD record) when it has none. */
jobjectID bk_class_id(JNIEnv *env, jclass klass);
void JNICALL bk_on_class_prepare(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jclass klass);
void JNICALL bk_on_class_tag_free(jvmtiEnv *jvmti, jlong tag);

/* heap.c */
bool bk_heap_onload(void);
void bk_heap_vm_init(JNIEnv *env, jthread thread);
/* Local ref to an array class's element class; NULL when not an array class. */
jclass bk_array_element_class(JNIEnv *env, jclass array_class);
/* ID of an array class's element class, defining it if needed. */
jobjectID bk_element_class_id(JNIEnv *env, jclass array_class);
void JNICALL bk_on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jobject object, jclass klass,
                                 jlong size);
void JNICALL bk_on_object_free(jvmtiEnv *jvmti, jlong tag);
void JNICALL bk_on_gc_start(jvmtiEnv *jvmti);
void JNICALL bk_on_gc_finish(jvmtiEnv *jvmti);

/* objects.c */
/* The object's tag, giving it one (sized, counted) when it has none; 0 on failure. */
jlong bk_object_tag(JNIEnv *env, jobject obj);

/* jnirefs.c */
bool bk_jni_refs_switch(bool on);
/* The layer's own global references, never reported to the agent. */
jobject bk_new_global_ref(JNIEnv *env, jobject obj);
void bk_delete_global_ref(JNIEnv *env, jobject ref);

/* threadsvc.c */
void JNICALL bk_on_thread_start(jvmtiEnv *jvmti, JNIEnv *env, jthread thread);
void JNICALL bk_on_thread_end(jvmtiEnv *jvmti, JNIEnv *env, jthread thread);
void bk_thread_started(JNIEnv *env, jthread thread);
/* Records the live threads no ThreadStart told the layer about. */
void bk_threads_started_unseen(JNIEnv *env);

#endif
