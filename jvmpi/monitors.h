/*
 * monitors - the Java monitor events: MONITOR_CONTENDED_ENTER / ENTERED
 * (JVM TI has them), MONITOR_CONTENDED_EXIT (it has not: emulated here from
 * the enters), MONITOR_WAIT / WAITED for Object.wait and Thread.sleep.
 *
 * The exit emulation.  JVMPI sent CONTENDED_EXIT in the thread whose exit
 * released a monitor while another thread was blocked entering it.  JVM TI
 * tells the layer only about the blocked threads.  What they reveal:
 *   - when a thread starts blocking on a monitor nobody else is recorded as
 *     blocked on, the monitor's owner at that moment (asked once from the
 *     VM) will release it with a waiter queued: it owes an exit;
 *   - a thread that gets a monitor after blocking, while other threads are
 *     still recorded as blocked on it, owes an exit as well;
 *   - a thread that gets a monitor after blocking proves that the thread
 *     owing an exit on it has released it: the exit is sent then, just
 *     before that thread's CONTENDED_ENTERED, from that thread, with env_id
 *     naming the thread that left (the agent's JNIEnv * for it);
 *   - Object.wait releases without an exit (as raw monitors do): an owner
 *     that waits owes nothing; one that comes back from a wait while others
 *     are blocked owes an exit again.
 * Exits by threads that took the monitor without ever blocking (barging in
 * between a release and the woken thread) are not seen.
 */
#ifndef JVMPI_MONITORS_H_
#define JVMPI_MONITORS_H_

#include "seam.h"

/* Monitors with a pending exit or blocked threads (tests, diagnostics). */
/* The thread env_id is ending (called on it, before its THREAD_END): the
 * emulated CONTENDED_EXITs it owes are sent now, and none is sent for it
 * afterwards. */
void monitors_thread_ending(JNIEnv *env, JNIEnv *env_id);

int monitors_tracked(void);
void monitors_reset(void);

#endif
