/*
 * onedump.h - OBJECT_DUMP's one object read through JNI (see onedump.c).
 */
#ifndef JVMPI_ONEDUMP_H_
#define JVMPI_ONEDUMP_H_

#include "heapstore.h"

/* Records the fields or elements of obj, whose record w->only_tag single
 * mode made, as FollowReferences' callbacks would.  False when it cannot
 * (a Class object, a field it cannot name): the caller walks instead, with
 * w reset. */
bool onedump_read(JNIEnv *env, walk *w, jobject obj);

#endif
