/*
 * objinfo - what an object's OBJECT_ALLOC says (its class, array kind and
 * size), wherever that event is made: the announce stage, RequestEvent,
 * the dumps.
 */
#ifndef JVMPI_OBJINFO_H_
#define JVMPI_OBJINFO_H_

#include <stdbool.h>

#include "seam.h"

/* A Class object's, from what its class record says.  Every Class object's
 * OBJECT_ALLOC, wherever it is made, comes from here. */
bool objinfo_class_object(jobjectID class_id, seam_object_info *out);
/* Any object's or class ID's; false when no live object has the ID.
 * Constant time, whatever the heap's size, except for the few objects
 * whose class the layer could not record. */
bool objinfo_of(JNIEnv *env, jobjectID id, seam_object_info *out);

#endif
