/*
 * vtguard.h - keeps the heap walk away from virtual threads still being
 * constructed.
 *
 * HotSpot's FollowReferences, on visiting a java.lang.VirtualThread, reads
 * its continuation to decide whether to report the stack of an unmounted
 * virtual thread; before the constructor has stored that continuation, the
 * read goes through null and the JVM dies (SIGSEGV in
 * JvmtiEnvBase::is_vthread_alive).  A thread stopped in an allocation
 * callback during `new VirtualThread(...)` is enough, and the layer stops
 * threads there whenever a dump holds a collection window.
 *
 * The walk reports every root before it visits any object, so the walk
 * decides there: a VirtualThread named by a stack or JNI local root is
 * never followed from that root, and it is marked unbuilt when the frame
 * is one of those that make virtual threads (the constructors of the
 * thread and of its continuation, the factory that calls them).  Reached
 * later through a field or an array, a VirtualThread is followed unless it
 * was marked.  Started virtual threads are reachable that way (the JDK's
 * root thread container holds every one by default), so their stacks stay
 * in the dump.
 */
#ifndef JVMPI_VTGUARD_H_
#define JVMPI_VTGUARD_H_

#include "heapstore.h"

/* Called for every class the backend defines: remembers the methods of the
 * classes that construct virtual threads. */
void vtguard_note_class(JNIEnv *env, jclass klass, const char *name, jlong tag);

/* Copies what the callbacks need into the walk, whose callbacks may take no
 * lock; false when out of memory. */
bool vtguard_prepare(walk *w);

/* The decision for a VirtualThread (see above); is_root: named by a root. */
bool vtguard_decide(walk *w, jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info, jlong tag,
                    bool is_root);

/* The follow decision for a reference to an object of class class_tag and
 * ID tag: false to keep the walk from visiting it. */
static inline bool vtguard_may_follow(walk *w, jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
                                      jlong class_tag, jlong tag, bool is_root)
{
    if (w->vthread_class_tag == 0 || class_tag != w->vthread_class_tag) {
        return true;
    }
    return vtguard_decide(w, kind, info, tag, is_root);
}

#endif
