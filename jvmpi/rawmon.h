/*
 * rawmon.h - JVMPI raw monitors, implemented by the layer itself.
 *
 * JVM TI has raw monitors of its own, but they cannot tell who owns them,
 * who is queued on them or when one is contended, and JVMPI needs all three
 * (RAW_MONITOR_CONTENDED_* events, MONITOR_DUMP, GetThreadStatus).  So the
 * layer keeps its own monitors with Java-monitor semantics: recursive,
 * wait releases every level and restores it, notify-all.
 *
 * Handles given to agents are not pointers.  A JVMPI_RawMonitor encodes a
 * slot index and the slot's generation, so a NULL, stale (destroyed) or
 * garbage handle is recognised without touching the memory it points to;
 * every such call prints one error line and returns without effect.
 *
 * Pure C + pthreads: nothing here calls JVM TI or JNI.
 */
#ifndef JVMPI_RAWMON_H_
#define JVMPI_RAWMON_H_

#include "jvmpi.h"

/* Receives RAW_MONITOR_CONTENDED_ENTER / ENTERED / EXIT.  Never called for
 * monitors whose name starts with '_', never with a lock of this module
 * held (agent handlers take other raw monitors).  `name` stays valid for
 * the duration of the call only. */
typedef void (*rawmon_event_fn)(jint event_type, const char *name, JVMPI_RawMonitor id);
/* When they are sent:
 *   ENTER    by a thread that finds the monitor owned by another, before it blocks;
 *   ENTERED  by that thread once it owns the monitor (only after an ENTER);
 *   EXIT     by a thread whose exit frees the monitor while others are queued
 *            for it, after the release.  Waiters re-acquiring after notify or
 *            timeout count as queued.
 * A wait releasing the monitor sends no EXIT, and re-acquiring after a wait
 * sends no ENTER/ENTERED: neither is an enter or exit of the monitor. */

/* NULL (the default) = no events. */
void rawmon_set_event_sink(rawmon_event_fn fn);

/* How rawmon learns the JNIEnv * of the calling thread (NULL when the
 * thread is not attached); it is what owners, entering and waiting threads
 * are recorded as.  Called outside this module's locks.  NULL source (the
 * default) = every thread is recorded as NULL. */
void rawmon_set_env_source(JNIEnv *(*current_env)(void));

/* Copies `name`.  NULL name, exhausted memory or a full table: one error
 * line, returns NULL. */
JVMPI_RawMonitor rawmon_create(const char *name);
/* The same, made by agent creator (jvmpi/agents.h): its events and its
 * place in a MONITOR_DUMP are that agent's alone, as each agent alone saw
 * only its own raw monitors. */
JVMPI_RawMonitor rawmon_create_by(int creator, const char *name);
/* The agent that made m; -1 for no raw monitor. */
int rawmon_creator(JVMPI_RawMonitor m);

void rawmon_enter(JVMPI_RawMonitor m);

/* By a thread that does not own the monitor: one error line, no change. */
void rawmon_exit(JVMPI_RawMonitor m);

/* ms <= 0 waits until notified (JVMPI: 0 = forever).  By a non-owner: one
 * error line, returns at once (the HotSpot behaviour the spec documents). */
void rawmon_wait(JVMPI_RawMonitor m, jlong ms);

/* By a non-owner: one error line, nobody is woken. */
void rawmon_notify_all(JVMPI_RawMonitor m);

/* Allowed when nobody else owns, enters or waits on the monitor (owned by
 * the caller alone is fine).  Otherwise one error line and the monitor
 * stays alive: a leak is better than a crash in the other thread. */
void rawmon_destroy(JVMPI_RawMonitor m);

/* For GetThreadStatus: 0 when the thread with this env is not blocked in a
 * raw monitor, JVMPI_THREAD_MONITOR_WAIT while it waits to enter one (also
 * when re-acquiring after a wait), JVMPI_THREAD_CONDVAR_WAIT while it is in
 * rawmon_wait.  NULL env -> 0. */
jint rawmon_thread_blocked_status(JNIEnv *env);

/* One live monitor, as MONITOR_DUMP describes it.  owner is NULL and
 * entry_count 0 when unowned.  `entering` includes threads re-acquiring the
 * monitor after a notify or timeout.  Threads with no env (not attached)
 * appear as NULL entries. */
typedef struct {
    const char *name;
    JVMPI_RawMonitor id;
    int creator;
    JNIEnv *owner;
    jint entry_count;
    jint n_entering;
    JNIEnv **entering;
    jint n_waiting;
    JNIEnv **waiting;
} rawmon_snapshot;

/* Calls fn once per live monitor, with a consistent snapshot of it.  fn runs
 * with no lock of this module held and may use raw monitors; the snapshot
 * (name and arrays included) is valid only during the call. */
void rawmon_for_each(void (*fn)(const rawmon_snapshot *snap, void *arg), void *arg);

/* Number of live monitors (for tests and diagnostics). */
jint rawmon_live_count(void);

#endif /* JVMPI_RAWMON_H_ */
