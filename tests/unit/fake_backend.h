/*
 * fake_backend - stands in for jvmti_backend/ behind jvmpi/seam.h, so the
 * JVMPI side is tested without a JVM.  Tests read what the JVMPI side asked
 * for and set what the "VM" answers.
 */
#ifndef FAKE_BACKEND_H_
#define FAKE_BACKEND_H_

#include <stdbool.h>

#include "seam.h"

typedef struct {
    /* what the JVMPI side asked */
    int source_on[SEAM_SRC_COUNT];       /* current state of each source */
    int source_switches;                 /* how many times any source changed */
    int define_loaded_calls;
    int gc_calls;
    int halt_calls;
    jint halt_code;
    int suspend_calls, resume_calls;
    int system_threads;
    /* what the "VM" answers */
    bool refuse_sources;
    JNIEnv *current_env;                 /* seam_current_env() */
    jobjectID current_thread_id;         /* seam_current_thread_id() */
    jint thread_status;                  /* seam_thread_status() */
    jlong cpu_time;                      /* seam_thread_cpu_time() */
    jint trace_frames;                   /* seam_call_trace() fills this many (<= depth) */
    jmethodID trace_top;                 /* when set, the method of the first frame it fills */
    jobjectID method_class;              /* seam_method_class() */
    jmethodID bad_method;                /* seam_method_id_valid() says no */

    /* added for test_options/tables/events/interface */
    bool refuse_source[SEAM_SRC_COUNT];  /* refuse switching just these sources */
    int handle_releases;                 /* seam_thread_handle_release calls */
    void *last_released_handle;
    int vm_allocs, vm_frees;             /* seam_vm_alloc / seam_vm_free calls */
    int delivery_threads;                /* seam_start_delivery_thread calls */
    jint system_thread_priority;         /* arguments of the last seam_start_system_thread */
    void (*system_thread_fn)(void *);
    void *suspend_handle, *resume_handle;/* last handle passed */
    void *trace_handle;                  /* last handle seam_call_trace got */
    jint trace_depth;                    /* last depth seam_call_trace got */
    /* seam_define_loaded_classes runs this (after counting), e.g. to define
     * the classes the "VM" had loaded before VM init. */
    void (*on_define_loaded)(JNIEnv *env);

    /* heap */
    /* seam_force_gc runs this, e.g. to post a collection and its frees
     * through layer_gc_* and layer_object_freed as JVM TI would. */
    void (*on_force_gc)(void);
    int post_pending_calls;              /* seam_post_pending_frees calls */
    jlong heap_capacity;                 /* seam_heap_capacity() */
    /* seam_object_info_of answers from here: the object whose id matches */
    seam_object_info objects[8];
    int object_count;
    int object_info_calls; /* seam_object_info_of: the JVM TI scan */
    /* seam_heap_objects returns a copy of objects[0..object_count) */
    int heap_objects_calls;

    /* heap dumps: seam_heap_snapshot_take (a walk of the whole heap, counted
     * in heap_snapshot_calls) and seam_object_snapshot_take (one object,
     * counted in object_snapshot_calls) hand out heap_snapshot (a copy of
     * the struct; the arrays stay the test's) unless heap_snapshot_fails;
     * seam_heap_snapshot_free only counts. */
    seam_heap_snapshot heap_snapshot;
    bool heap_snapshot_fails;
    int heap_snapshot_calls, heap_snapshot_frees;
    int object_snapshot_calls;
    jobjectID object_snapshot_id;        /* arguments of the last calls */
    seam_heap_detail heap_snapshot_detail;
    int define_loaded_before_snapshot;   /* define_loaded_calls at the last heap walk */

    /* Java monitors: seam_monitor_owner answers monitor_owner and
     * counts; seam_monitor_snapshot_take hands out monitor_snapshot (a copy
     * of the struct; the arrays stay the test's) unless monitor_snapshot_fails. */
    /* Switching OBJECT_ALLOC's source on runs a collection, as the real
     * backend's does (JVM TI's allocation sampling). */
    bool collect_on_alloc_switch;
    jobjectID monitor_owner;
    int monitor_owner_calls;
    void (*monitor_owner_hook)(void); /* called inside seam_monitor_owner */
    seam_monitor_snapshot monitor_snapshot;
    bool monitor_snapshot_fails;
    int monitor_snapshot_calls, monitor_snapshot_frees;
    jint monitor_snapshot_max_frames;    /* argument of the last call */
    int monitor_snapshot_vthreads;

    /* methods, compiled code, instructions: seam_method_bytecodes answers
     * a copy of bytecodes[0..bytecodes_len) (NULL when len is 0)
     * for every method and counts its calls. */
    int compiled_replay_calls;           /* seam_compiled_methods_replay calls */
    const unsigned char *bytecodes;
    jint bytecodes_len;
    int bytecodes_calls;

    /* what events name is defined first (jvmpi/defs.c) */
    jobjectID class_class_id;            /* seam_class_class_id() */
    int adopt_calls;                     /* seam_thread_adopt calls */
    /* seam_thread_adopt records the calling thread under these (through
     * fake_thread) when adopt_name is set, and answers whether it did */
    const char *adopt_name;
    jobjectID adopt_id;
    bool adopt_unborn; /* seam_thread_adopt answers SEAM_ADOPT_UNBORN */
} fake_backend_state;

extern fake_backend_state fake;

/* Also clears the calling thread's fake_set_thread_env / fake_set_thread_id. */
void fake_reset(void);

/* The layer as an agent finds it: reset (fake_reset too), loaded the way
 * -agentpath:libjvmpi.so with no agent named loads it, and the calling
 * thread attached as main_env.  The interface table; NULL if loading failed. */
JVMPI_Interface *fake_layer_loaded(JNIEnv *main_env);

/* seam_current_env() answers env in the calling thread only (NULL: back to
 * fake.current_env), so several test threads can each be "attached". */
void fake_set_thread_env(JNIEnv *env);
/* Same for seam_current_thread_id() (NULL: back to fake.current_thread_id). */
void fake_set_thread_id(jobjectID id);

/* A class record the way the backend would build it (all strings malloc'd). */
seam_class_info *fake_class(jobjectID id, const char *name, int methods, int statics, int instances);

/* Registers a thread as the backend would, in the calling thread (which is
 * seen as attached with env and id during the call). */
void fake_thread(JNIEnv *env, jobjectID id, const char *name);

/* A thread recorded and not announced, as a virtual thread is on its carrier
 * between its record and its THREAD_START: the caller releases it. */
struct thread_rec;
struct thread_rec *fake_unannounced_thread(JNIEnv *env, jobjectID id, const char *name);

#endif
