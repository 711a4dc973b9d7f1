/*
 * cpuclock - the calling thread's CPU time, for GetCurrentThreadCpuTime.
 *
 * HPROF's cpu=times asks for it at every method entry and exit.  The exact
 * answer, clock_gettime(CLOCK_THREAD_CPUTIME_ID), is a system call (0.3 to 2
 * microseconds, more under a hypervisor); most of those calls come within a
 * stretch where the thread never left its CPU, and then the CPU time spent
 * is the wall time spent, which the time-stamp counter gives (where the
 * kernel keeps time with it; else the vDSO's monotonic clock).  Whether the
 * thread left its CPU is read from a perf event of the thread's own task
 * clock: the kernel rewrites the event's mapped page (and bumps its
 * sequence number) whenever it schedules the thread out or in, and at timer
 * ticks.  No change in the sequence since the last
 * exact reading: the exact reading plus the wall time since.  Otherwise, or
 * where perf events are not open to the process (kernel.perf_event_paranoid
 * above 2 for a user without CAP_PERFMON), the system call.
 */
#ifndef JVMPI_CPUCLOCK_H_
#define JVMPI_CPUCLOCK_H_

#include <stdbool.h>
#include <stdint.h>

/* Nanoseconds of CPU time of the calling thread; 0 if it cannot be had. */
int64_t cpuclock_thread_ns(void);

/* Whether this thread's readings may come from the fast path (for tests
 * and the log). */
bool cpuclock_fast(void);

/* Whether the fast path measures with the time-stamp counter (its rate
 * learnt): for tests and the log. */
bool cpuclock_by_tsc(void);

#endif
