/*
 * dumpdefs - what a dump names, announced before the dump goes out.
 *
 * A dump's builder calls these on its snapshot before its event enters the
 * pipeline, so that every thread, class, method and object the dump's
 * records name was defined to the agent first (jvmpi/defs.h).
 */
#ifndef JVMPI_DUMPDEFS_H_
#define JVMPI_DUMPDEFS_H_

#include "seam.h"

void dumpdefs_heap(JNIEnv *env, const seam_heap_snapshot *snap);
void dumpdefs_monitors(JNIEnv *env, const seam_monitor_snapshot *snap);
/* The methods of call traces. */
void dumpdefs_traces(JNIEnv *env, const JVMPI_CallTrace *traces, int count);

#endif
