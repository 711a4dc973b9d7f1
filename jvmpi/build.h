/*
 * build - the defining events (CLASS_LOAD, THREAD_START and THREAD_END,
 * OBJECT_ALLOC) filled in from what the layer recorded.
 *
 * They are made in three places: by the backend's callbacks (an allocation,
 * a class prepared, a thread started), by the announce stage (jvmpi/defs.c)
 * for what an event names that the agent was not told, and by RequestEvent.
 * The builders only fill the event; they call nothing onward, so each of
 * those places sends what it built on its own way.
 */
#ifndef JVMPI_BUILD_H_
#define JVMPI_BUILD_H_

#include <stdbool.h>

#include "jvmpi.h"
#include "seam.h"

struct class_rec;
struct thread_rec;

/* CLASS_LOAD (requested: RequestEvent's answer, its methods from the record). */
void build_class_load(JVMPI_Event *ev, const struct class_rec *c, bool requested);
/* THREAD_START, or THREAD_END, which names the thread the same way. */
void build_thread_event(JVMPI_Event *ev, jint event_type, const struct thread_rec *t, bool requested);
void build_object_alloc(JVMPI_Event *ev, const seam_object_info *obj, bool requested);

#endif
