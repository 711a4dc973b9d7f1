/*
 * deadline - the absolute time ms milliseconds from now on a clock, for the
 * timed waits of pthread_cond_timedwait (whose condition variables use
 * CLOCK_REALTIME unless set otherwise) and of the raw monitors.
 */
#ifndef JVMPI_DEADLINE_H_
#define JVMPI_DEADLINE_H_

#include <time.h>

static inline struct timespec deadline_after_ms(clockid_t clock, long ms)
{
    struct timespec t;
    clock_gettime(clock, &t);
    t.tv_sec += (time_t)(ms / 1000);
    t.tv_nsec += (ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

#endif
