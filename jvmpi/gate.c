#include "gate.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "deadline.h"
#include "log.h"
#include "presence.h"
#include "tls.h"

/* Deliveries under way: each thread counts itself in a slot of its own,
 * without a locked instruction (presence.h): threads deliver hundreds of
 * millions of method events and millions of OBJECT_ALLOCs a second. */
static presence inside = PRESENCE_INIT;
static _Atomic bool closed;

static TLS_FAST presence_slot *my_slot;
static TLS_FAST int depth;       /* deliveries this thread is inside */
static TLS_FAST bool counted;    /* its outermost one is in inside[] */
static TLS_FAST bool closer;     /* it holds the gate closed */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

static void arrive(void)
{
    if (my_slot == NULL) {
        my_slot = presence_slot_take(&inside);
    }
    presence_enter(my_slot);
}

static void depart(void) { presence_leave(my_slot); }

static void wake_all(void)
{
    pthread_mutex_lock(&lock);
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void wait_until_open(void)
{
    pthread_mutex_lock(&lock);
    while (atomic_load(&closed)) {
        pthread_cond_wait(&changed, &lock);
    }
    pthread_mutex_unlock(&lock);
}

/* Counts the thread in, unless a window is open: then it waits for the
 * window to end first.  Counting before looking, with the closer setting
 * the flag before summing (and making every thread pass a barrier between
 * the two), means one of the two always sees the other. */
static void count_in(void)
{
    for (;;) {
        arrive();
        if (closer || !atomic_load(&closed)) {
            counted = true;
            return;
        }
        depart();
        wake_all(); /* the closer may be waiting for this count to drop */
        wait_until_open();
    }
}

static void count_out(void)
{
    counted = false;
    depart();
    if (atomic_load(&closed)) {
        wake_all();
    }
}

void gate_enter(void)
{
    if (depth++ == 0) {
        count_in();
    }
}

void gate_leave(void)
{
    if (--depth == 0 && counted) {
        count_out();
    }
}

bool gate_inside(void) { return depth > 0; }

void gate_park(void)
{
    if (counted) {
        count_out();
    }
}

void gate_unpark(void)
{
    if (depth > 0 && !counted) {
        count_in();
    }
}

static long others_inside(bool first)
{
    return presence_count(&inside, first) - (counted ? 1 : 0);
}

void gate_close(void)
{
    gate_park(); /* a window waiting for a delivery of this very thread would wait forever */
    {
        pthread_mutex_lock(&lock);
        while (atomic_load(&closed)) {
            pthread_cond_wait(&changed, &lock);
        }
        atomic_store(&closed, true);
        closer = true;
        pthread_mutex_unlock(&lock);
    }
    if (depth > 0) {
        count_in(); /* the closer itself passes */
    }
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    bool said = false;
    {
        pthread_mutex_lock(&lock);
        for (bool first = true; others_inside(first) > 0; first = false) {
            /* Deliveries leaving wake this thread; the timeout only guards
             * against a wake-up that came between the sum and the wait. */
            struct timespec until = deadline_after_ms(CLOCK_REALTIME, 2);
            pthread_cond_timedwait(&changed, &lock, &until);
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (!said && now.tv_sec - start.tv_sec >= 10) {
                said = true;
                LOG_INFO("a GC window has waited 10 s for an agent handler on another thread to return");
            }
        }
        pthread_mutex_unlock(&lock);
    }
}

void gate_open(void)
{
    pthread_mutex_lock(&lock);
    closer = false;
    atomic_store(&closed, false);
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

void gate_reset(void)
{
    presence_reset(&inside);
    atomic_store(&closed, false);
    depth = 0;
    counted = closer = false;
}
