/*
 * monowner.h - who owns a Java monitor (seam_monitor_owner), asked in a way
 * no VM crashes answering: see monowner.c.  Shared by the backend's files.
 */
#ifndef JVMPI_MONOWNER_H_
#define JVMPI_MONOWNER_H_

#include <jvmti.h>
#include <stdbool.h>

/* Whether this VM may answer GetObjectMonitorUsage on the calling thread,
 * without stopping the others (JVM TI before 16): the owner is then asked
 * by threads of the layer's own, and MONITOR_DUMP does without the call. */
bool bk_monowner_careful(void);
/* At VM init, on such a VM: makes the asking threads' Thread objects (they
 * start at the first question). */
void bk_monowner_vm_init(JNIEnv *env);
/* Whether thread is one of the asking threads (the layer's own, never reported). */
bool bk_monowner_is_asker(JNIEnv *env, jthread thread);
/* First thing in every ThreadEnd: waits while an asking thread asks. */
void bk_monowner_thread_ending(void);
/* Deletes the local refs a jvmtiMonitorUsage holds and frees its arrays. */
void bk_monitor_usage_free(JNIEnv *env, jvmtiMonitorUsage *u);

#endif
