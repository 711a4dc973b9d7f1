/*
 * gc - OBJECT_FREE and the GC events, delivered in windows.
 *
 * JVM TI posts GarbageCollectionStart/Finish inside the collection, where no
 * agent code may run, and (since JDK 16) ObjectFree afterwards, in batches,
 * on whatever thread cleans the tag map.  JVMPI agents expect GC_START, the
 * OBJECT_FREEs of that collection, then GC_FINISH, all on one thread, and
 * take a lock in GC_START that they release in GC_FINISH.  So frees are
 * queued as they come, and a window (GC_START, the queued OBJECT_FREEs,
 * GC_FINISH) is delivered after the collection: by the layer's delivery
 * thread for the VM's own collections, by the caller for RunGC.
 */
#ifndef JVMPI_GC_H_
#define JVMPI_GC_H_

#include <stdbool.h>
#include <stdint.h>

#include "seam.h"

/* Tests: observer runs each time a window starts waiting for the frees of
 * its collection, on the window's thread (NULL: none). */
void gc_set_settle_observer(void (*observer)(void));

/* From the backend's callbacks: memory and short locks only. */
void gc_object_freed(int64_t tag);
void gc_collection_finished(void);

/* Around switching the heap events' sources: a collection that finishes
 * meanwhile is the layer's own (JVM TI's allocation sampling starts with
 * one), and HotSpot 5.0 posted no GC_START/GC_FINISH for the collection
 * it ran there.  So it opens no window; the frees JVM TI posts for it are
 * queued for the next collection's window (held longer than stray frees,
 * which would otherwise open one of their own). */
void gc_hidden_begin(void);
/* Whether the calling thread is delivering a window (GC_START to GC_FINISH),
 * as HotSpot 5.0's VM thread did: no raw monitor contention event is posted
 * for it (layer.c). */
bool gc_window_here(void);
void gc_hidden_end(void);

/* DisableGC/EnableGC: while the count is above zero no window is delivered,
 * so no ID is seen freed. */
void gc_disable(void);
/* False when there was no matching disable. */
bool gc_enable(void);
bool gc_is_disabled(void);
int gc_disabled_depth(void);

/* RunGC: a collection, then its window on the calling thread. */
void gc_run(JNIEnv *env);

/* For the delivery thread: how long it may sleep before a window is due
 * (0: now, -1: until woken). */
long gc_window_wait_ms(void);
/* Delivers a window if one is due; called by the delivery thread. */
void gc_deliver_due(JNIEnv *env);
/* At VM death, before JVM_SHUT_DOWN: the frees JVM TI has posted that no
 * window has delivered yet (JDK 5.0 had sent them in the collection
 * itself).  It does not wait for more: JVM TI may still be posting the
 * frees of the last collections, which are then never reported (nor are
 * they to a plain JVM TI agent, whose VM exits meanwhile).  Nothing when
 * there are none, or GC is disabled. */
void gc_deliver_last(JNIEnv *env);

/* Called when the state changes in a way the delivery thread must see. */
void gc_set_waker(void (*wake)(void));

void gc_reset(void);

#endif
