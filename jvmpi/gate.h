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
 * stopping any thread: every delivery passes it, and a GC window closes
 * it, waits until no delivery is under way on another thread, and holds
 * new ones back until it reopens.
 *
 * A delivery costs two atomic additions on a counter the thread shares
 * with few others (counters are striped, as the callback guard's are).
 */
#ifndef JVMPI_GATE_H_
#define JVMPI_GATE_H_

#include <stdbool.h>

/* Around one delivery to the agent.  Nested deliveries (requests and
 * definitions sent from within a handler, on the same thread) pass freely;
 * so does every delivery of the thread that closed the gate. */
void gate_enter(void);
void gate_leave(void);

/* Whether the calling thread is inside a delivery (a handler is running). */
bool gate_inside(void);

/* Around any wait in the layer of a thread that may be inside a delivery
 * (RunGC from a handler waiting for its window, a definition another
 * thread is sending): while parked, the thread runs no agent code, so a
 * window need not wait for it.  Unparking waits for an open window to end. */
void gate_park(void);
void gate_unpark(void);

/* Closes the gate for the calling thread (one window at a time) and waits
 * until no other thread is inside a delivery. */
void gate_close(void);
void gate_open(void);

void gate_reset(void);

#endif
