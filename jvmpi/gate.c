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
_Atomic bool gate_closed;
/* The closer has seen every other delivery out: the window is open (or
 * about to be), and no delivery may run on another thread until it ends. */
static _Atomic bool window_open;
TLS_FAST gate_thread gate_me;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

static void arrive(void)
{
    if (gate_me.slot == NULL) {
        gate_me.slot = presence_slot_take(&inside);
    }
    presence_enter(gate_me.slot);
}

static void depart(void) { presence_leave(gate_me.slot); }

void gate_wake_closer(void)
{
    pthread_mutex_lock(&lock);
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void wait_until_open(void)
{
    pthread_mutex_lock(&lock);
    while (atomic_load(&gate_closed)) {
        pthread_cond_wait(&changed, &lock);
    }
    pthread_mutex_unlock(&lock);
}

/* Counts the thread in, unless *barred: then it waits for the gate to
 * open first.  Counting before looking, with the closer setting the flag
 * before summing, means one of the two always sees the other. */
static void count_in_unless(_Atomic bool *barred)
{
    for (;;) {
        arrive();
        atomic_thread_fence(memory_order_seq_cst);
        if (gate_me.closer || !atomic_load(barred)) {
            gate_me.counted = true;
            return;
        }
        depart();
        gate_wake_closer(); /* it may be waiting for this count to drop */
        wait_until_open();
    }
}

/* Unless a window is closing or open. */
void gate_count_in(void) { count_in_unless(&gate_closed); }

bool gate_inside(void) { return gate_me.depth > 0; }

void gate_park(void)
{
    if (gate_me.counted) {
        gate_count_out();
    }
}

void gate_park_blocked(void)
{
    if (!gate_me.gc_off) {
        gate_park();
    }
}

/* A delivery going on after a park (its handler got the raw monitor it
 * was blocked on, or its RunGC returned) counts itself in again, and waits
 * only if the window is open already.  While the closer is still waiting
 * for deliveries to leave, this one may hold the agent's lock that they
 * are waiting for: HotSpot 5.0 let such a thread, in native code, run on
 * while a collection was pending, and so does the layer.  The closer then
 * waits for it too, as it marks the window open before it sums again. */
void gate_unpark(void)
{
    if (gate_me.depth > 0 && !gate_me.counted) {
        count_in_unless(&window_open);
    }
}

static long others_inside(bool first)
{
    return presence_count(&inside, first) - (gate_me.counted ? 1 : 0);
}

void gate_close(void)
{
    gate_park(); /* a window waiting for a delivery of this very thread would wait forever */
    {
        pthread_mutex_lock(&lock);
        while (atomic_load(&gate_closed)) {
            pthread_cond_wait(&changed, &lock);
        }
        atomic_store(&gate_closed, true);
        gate_me.closer = true;
        pthread_mutex_unlock(&lock);
    }
    if (gate_me.depth > 0) {
        gate_count_in(); /* the closer itself passes */
    }
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    bool said = false;
    {
        pthread_mutex_lock(&lock);
        for (bool first = true;; first = false) {
            if (others_inside(first) == 0) {
                /* A parked delivery may come back in meanwhile (gate_unpark). */
                atomic_store(&window_open, true);
                atomic_thread_fence(memory_order_seq_cst);
                if (others_inside(false) == 0) {
                    break;
                }
                atomic_store(&window_open, false);
            }
            /* Deliveries leaving wake this thread; the timeout only guards
             * against a wake-up that came between the sum and the wait. */
            struct timespec until = deadline_after_ms(CLOCK_REALTIME, 2);
            pthread_cond_timedwait(&changed, &lock, &until);
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (!said && now.tv_sec - start.tv_sec >= 10) {
                said = true;
                LOG_INFO("a collection's GC_START, OBJECT_FREE and GC_FINISH have waited 10 s for an agent handler on another "
                         "thread to return");
            }
        }
        pthread_mutex_unlock(&lock);
    }
}

void gate_open(void)
{
    pthread_mutex_lock(&lock);
    gate_me.closer = false;
    atomic_store(&window_open, false);
    atomic_store(&gate_closed, false);
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

void gate_reset(void)
{
    presence_reset(&inside);
    atomic_store(&window_open, false);
    atomic_store(&gate_closed, false);
    gate_me.depth = 0;
    gate_me.counted = gate_me.closer = gate_me.gc_off = false;
}
