/*
 * monitordump - RequestEvent(MONITOR_DUMP): every Java monitor in use and
 * every raw monitor of the agent, as the dump records of the JVMPI spec
 * (4.4), with a call trace and a status for every live thread.
 *
 * Record layout, all IDs and pointers native (8 bytes on LP64), counts u4
 * big-endian:
 *   JAVA: u1 JVMPI_MONITOR_JAVA, jobjectID, JNIEnv *owner, u4 entry count,
 *         u4 n, JNIEnv *[n] waiting to enter, u4 m, JNIEnv *[m] waiting to
 *         be notified
 *   RAW:  u1 JVMPI_MONITOR_RAW, char *name, JVMPI_RawMonitor, then as JAVA
 *         from the owner on.
 * Threads are named by the JNIEnv * the agent knows them by; threads the
 * agent was never told about (the layer's own) are left out everywhere.
 *
 * As HotSpot 5.0 wrote it: a Java monitor's entry count is the number of
 * threads it lists (entering plus waiting), whoever owns it; monitors of
 * Class objects are left out; raw monitors are listed only while owned
 * (with their recursion count); num_traces 0 and threads_status NULL,
 * unless monitordump=traces asks for a trace and a status per thread.
 */
#ifndef JVMPI_MONITORDUMP_H_
#define JVMPI_MONITORDUMP_H_

#include "seam.h"

/* Deepest call trace a dump carries per thread. */
#define MONITORDUMP_MAX_FRAMES 256

/* monitordump=traces (true) or jdk5, from the layer's options. */
void monitordump_set_traces(bool traces);

/* Builds the dump and delivers MONITOR_DUMP (with JVMPI_REQUESTED_EVENT) on
 * the calling thread before returning.  JVMPI_SUCCESS or JVMPI_FAIL. */
jint monitordump_request(JNIEnv *env);

#endif
