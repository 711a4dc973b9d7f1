/*
 * onedump.h - OBJECT_DUMP's one object read through JNI and JVM TI's class
 * functions, not a heap walk (see onedump.c).
 */
#ifndef JVMPI_ONEDUMP_H_
#define JVMPI_ONEDUMP_H_

#include "fieldmap.h"

/* Records in ks->w the fields, elements or class references of obj, whose
 * record w->only_tag single mode made, as FollowReferences' callbacks
 * would; ks holds obj's class chain (fieldmap_klasses_chain).  False when
 * it cannot (a field it cannot name, a signed class before JDK 25): the
 * caller walks instead, with the walk reset. */
bool onedump_read(JNIEnv *env, klasses *ks, jobject obj);
/* A local reference to the Class object of the class whose ID is tag; NULL
 * when no loaded class has it.  Costs a scan of the class tags alone. */
jclass onedump_class_of_id(JNIEnv *env, jlong tag);

#endif
