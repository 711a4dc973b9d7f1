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
    jint thread_status;                  /* seam_thread_status() */
    jlong cpu_time;                      /* seam_thread_cpu_time() */
    jint trace_frames;                   /* seam_call_trace() fills this many (<= depth) */
    jobjectID method_class;              /* seam_method_class() */
} fake_backend_state;

extern fake_backend_state fake;

void fake_reset(void);

/* A class record the way the backend would build it (all strings malloc'd). */
seam_class_info *fake_class(jobjectID id, const char *name, int methods, int statics, int instances);

/* Registers a thread as the backend would, in the calling thread. */
void fake_thread(JNIEnv *env, jobjectID id, const char *name);

#endif
