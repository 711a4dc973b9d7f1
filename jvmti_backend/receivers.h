/*
 * receivers.h - the receiver of the constructor whose hook is running, read
 * from its frame (METHOD_ENTRY2 reports it; the constructor cannot pass
 * it).
 */
#ifndef JVMPI_RECEIVERS_H_
#define JVMPI_RECEIVERS_H_

#include "backend.h"

/* Once the hooks class is defined; a first walk here loads what walking
 * loads, so that no hook does.  The walk runs rewritten code of the JDK:
 * the caller keeps method events off for this thread meanwhile.  False
 * (said on the log) when receivers will be given as NULL. */
bool receivers_prepare(JNIEnv *env, jclass hooks_class);
/* The receiver of the constructor at depth 1 (the hook's native frame is
 * 0), a local reference; NULL before receivers_prepare succeeded or when it
 * could not be read.  Never inlined: only constructors pay for it. */
__attribute__((noinline)) jobject receivers_of_ctor(JNIEnv *env);

#endif
