/*
 * dispatch - builds each JVMPI event from the layer's records and hands it
 * to the agent; the defining events (CLASS_LOAD, THREAD_START,
 * OBJECT_ALLOC) are built by the announce stage itself (defs.h).  Every
 * event is zeroed before it is filled: agents read union members other
 * than the one that was set.
 */
#ifndef JVMPI_DISPATCH_H_
#define JVMPI_DISPATCH_H_

#include <stdbool.h>

#include "classes.h"
#include "threads.h"

void dispatch_class_unload(JNIEnv *env, jobjectID class_id);
/* Events with no data: JVM_INIT_DONE, JVM_SHUT_DOWN, DATA_DUMP_REQUEST. */
void dispatch_plain(JNIEnv *env, jint event_type);
/* To the agents of mask that enabled OBJECT_FREE; returns those it reached. */
agents_mask dispatch_object_free(JNIEnv *env, jobjectID obj_id, agents_mask agents);
void dispatch_gc_finish(JNIEnv *env, jlong used_objects, jlong used_object_space, jlong total_object_space);
void dispatch_jni_ref(JNIEnv *env, jint event_type, jobjectID obj_id, jobject ref);
void dispatch_raw_monitor(jint event_type, const char *name, JVMPI_RawMonitor id);
/* METHOD_ENTRY or METHOD_EXIT: just the method (events_deliver_method). */
void dispatch_method(JNIEnv *env, jint event_type, jmethodID method);
void dispatch_method_entry2(JNIEnv *env, jmethodID method, jobjectID receiver);
void dispatch_compiled_method_unload(JNIEnv *env, jmethodID method);
void dispatch_compiled_method_load(JNIEnv *env, jmethodID method, const void *code_addr, jint code_size,
                                   jint num_lines, const JVMPI_Lineno *lines);
/* MONITOR_CONTENDED_ENTER / ENTERED in the calling thread; EXIT on behalf
 * of the thread the agent knows as env_id. */
void dispatch_monitor(JNIEnv *env, jint event_type, jobjectID object);
void dispatch_monitor_exit_as(JNIEnv *env_id, jobjectID object);
/* MONITOR_WAIT / WAITED; object NULL for Thread.sleep. */
void dispatch_monitor_wait(JNIEnv *env, jint event_type, jobjectID object, jlong timeout);

#endif
