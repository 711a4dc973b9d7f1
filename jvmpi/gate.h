/*
 * gate - the JVMPI specification's thread suspended mode around GC windows.
 *
 * JDK 5.0 sent GC_START, the OBJECT_FREEs and GC_FINISH while every Java
 * thread stood at the collection's safepoint, and sent every event that
 * carries a jobjectID with GC disabled: no agent handler ran on another
 * thread while a window was open, and no window opened while a handler
 * was running.  Agents count on it (an unlocked table shared by the
 * OBJECT_ALLOC and OBJECT_FREE handlers, a lock taken in GC_START and
 * released in GC_FINISH).  The gate gives the same guarantee without
 * stopping any thread: every delivery passes it (but the data requests,
 * gate_holds_window), and a GC window closes it, waits until no delivery
 * is under way on another thread, and holds new ones back until it
 * reopens.
 *
 * A delivery costs no locked instruction: each thread counts itself in a
 * slot of its own (presence.h).  Entering and leaving are inline, as every
 * method event passes them.
 */
#ifndef JVMPI_GATE_H_
#define JVMPI_GATE_H_

#include <stdatomic.h>
#include <stdbool.h>

#include "defs.h"
#include "jvmpi.h"
#include "pass.h"
#include "presence.h"
#include "tls.h"

/* The calling thread's part of the gate. */
typedef struct {
    presence_slot *slot; /* its slot in the count, once it has one */
    int depth;           /* deliveries it is inside */
    bool counted;        /* its outermost one is in the count */
    bool closer;         /* it holds the gate closed */
    bool gc_off;         /* its outermost delivery is of an event issued with GC disabled */
} gate_thread;
extern TLS_FAST gate_thread gate_me;
extern _Atomic bool gate_closed;
/* The rest of gate_enter: a first delivery of the thread, or a window open. */
void gate_count_in(void);
void gate_wake_closer(void);

/* Around one delivery to the agent.  Nested deliveries (requests and
 * definitions sent from within a handler, on the same thread) pass freely;
 * so does every delivery of the thread that closed the gate.  Counting
 * before looking, with the closer setting the flag before it sums, means
 * one of the two always sees the other (see gate.c). */
static inline void gate_enter(void)
{
    if (gate_me.depth++ != 0) {
        return;
    }
    if (gate_me.slot != NULL && presence_enter_open(gate_me.slot, &gate_closed)) {
        gate_me.counted = true;
        return;
    }
    gate_count_in();
}

static inline void gate_count_out(void)
{
    gate_me.counted = false;
    presence_leave(gate_me.slot);
    if (atomic_load(&gate_closed)) {
        gate_wake_closer(); /* it may be waiting for this count to drop */
    }
}

static inline void gate_leave(void)
{
    if (--gate_me.depth == 0 && gate_me.counted) {
        gate_count_out();
    }
}

/* Whether a handler of this event keeps GC windows out while it runs.
 * The data dump and reset requests do not: they carry no object ID, and
 * HotSpot 5.0 sent them from its Signal Dispatcher, which ran them like
 * native code beside its collections.  Their handlers are long (a whole
 * profile written), and an agent that takes its own lock in one while the
 * lock's owner waits in RunGC relies on it.  What such a handler requests,
 * or causes to be defined, carries IDs and passes the gate as usual.
 * Every other event stays out of windows, as the JVMPI specification's
 * thread suspended mode has it (a thread blocked on a raw monitor does not
 * hold a window up either: rawmon.c). */
static inline bool gate_holds_window(jint event_type)
{
    jint type = event_type & ~JVMPI_REQUESTED_EVENT;
    return type != JVMPI_EVENT_DATA_DUMP_REQUEST && type != JVMPI_EVENT_DATA_RESET_REQUEST;
}

/* Whether JVMPI issues this event with GC disabled: it carries object IDs.
 * A handler of one blocked on a raw monitor still holds windows up, as
 * HotSpot 5.0's GC_locker held collections up; any other handler blocked
 * there does not (gate_park_blocked). */
static inline bool gate_issued_with_gc_off(jint event_type)
{
    switch (event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_METHOD_ENTRY2:
    case JVMPI_EVENT_OBJECT_ALLOC:
    case JVMPI_EVENT_OBJECT_FREE:
    case JVMPI_EVENT_OBJECT_MOVE:
    case JVMPI_EVENT_THREAD_START:
    case JVMPI_EVENT_HEAP_DUMP:
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
    case JVMPI_EVENT_CLASS_LOAD:
    case JVMPI_EVENT_CLASS_UNLOAD:
    case JVMPI_EVENT_OBJECT_DUMP:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
    case JVMPI_EVENT_MONITOR_WAIT:
    case JVMPI_EVENT_MONITOR_WAITED:
    case JVMPI_EVENT_MONITOR_DUMP:
        return true;
    default:
        return false;
    }
}

/* Around a delivery of event_type: gate_enter/gate_leave where it holds
 * windows (gate_holds_window).  Returns whether it entered. */
static inline bool gate_enter_for(jint event_type)
{
    if (!gate_holds_window(event_type)) {
        return false;
    }
    if (gate_me.depth == 0) {
        gate_me.gc_off = gate_issued_with_gc_off(event_type);
    }
    gate_enter();
    return true;
}

/* The gate stage of the pipeline, for one agent: the announce stage and
 * the delivery run inside it, so that no window opens between what is
 * announced first and the event that needed it. */
static inline __attribute__((always_inline)) void gate_pass(pass *p)
{
    bool gated = gate_enter_for(p->ev->event_type);
    defs_pass(p);
    if (gated) {
        gate_leave();
    }
}

/* Whether the calling thread is inside a delivery (a handler is running). */
bool gate_inside(void);

/* Around any wait of a thread that may be inside a delivery (RunGC from
 * a handler waiting for its window, a definition another thread is
 * sending, RawMonitorEnter or RawMonitorWait blocked): while parked, the
 * thread runs no agent code, so a window need not wait for it.  Unparking
 * waits for an open window to end; a window still waiting for handlers to
 * return waits for this one too (gate.c). */
void gate_park(void);
void gate_unpark(void);
/* gate_park for a thread blocked on a raw monitor: not inside a handler of
 * an event issued with GC disabled (gate_issued_with_gc_off). */
void gate_park_blocked(void);

/* Closes the gate for the calling thread (one window at a time) and waits
 * until no other thread is inside a delivery. */
void gate_close(void);
void gate_open(void);

void gate_reset(void);

#endif
