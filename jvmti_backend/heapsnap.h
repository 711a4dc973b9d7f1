/*
 * heapsnap.h - the snapshot built from a heap walk's records: classes,
 * objects and roots as seam_heap_snapshot has them, once the walk is done
 * and JNI and JVM TI may be called again.
 *
 * Apart from the walk so that what happens inside the safepoint
 * (heapwalk.c) and what is made of it afterwards read separately.
 */
#ifndef JVMPI_HEAPSNAP_H_
#define JVMPI_HEAPSNAP_H_

#include "fieldmap.h"

/* Class objects under object tags: looked up in the class environment, and
 * the records rewritten under the class IDs they resolve to. */
bool heapsnap_resolve_aliases(JNIEnv *env, walk *w);
/* The snapshot's classes, objects and roots, in the walk's arena.  chain:
 * for an OBJECT_DUMP (w->single), its object's class and superclasses
 * (fieldmap_klasses_chain), all the classes its snapshot lists; NULL for a
 * heap dump, which lists any loaded class. */
bool heapsnap_build(JNIEnv *env, walk *w, klasses *chain, seam_heap_snapshot *out);
/* Each JNI_GLOBAL root gets a live global reference to its object. */
void heapsnap_name_global_refs(seam_heap_snapshot *out, bk_global_ref *refs, int n);

#endif
