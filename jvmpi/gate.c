#include "gate.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "deadline.h"
#include "log.h"
#include "tls.h"

/* Deliveries under way, counted in stripes: allocating threads deliver
 * millions of OBJECT_ALLOCs a second, and one shared counter would be a
 * cache line bouncing between all of them. */
#define STRIPES 64
static struct {
    _Atomic long n;
    char pad[64 - sizeof(long)];
} inside[STRIPES];
static _Atomic unsigned next_stripe;
static _Atomic bool closed;

static TLS_FAST int my_stripe = -1;
static TLS_FAST int depth;       /* deliveries this thread is inside */
static TLS_FAST bool counted;    /* its outermost one is in inside[] */
static TLS_FAST bool closer;     /* it holds the gate closed */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

static int stripe(void)
{
    if (my_stripe < 0) {
        my_stripe = (int)(atomic_fetch_add_explicit(&next_stripe, 1, memory_order_relaxed) % STRIPES);
    }
    return my_stripe;
}

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
 * the flag before summing, means one of the two always sees the other. */
static void count_in(void)
{
    int s = stripe();
    for (;;) {
        atomic_fetch_add(&inside[s].n, 1);
        if (closer || !atomic_load(&closed)) {
            counted = true;
            return;
        }
        atomic_fetch_sub(&inside[s].n, 1);
        wake_all(); /* the closer may be waiting for this count to drop */
        wait_until_open();
    }
}

static void count_out(void)
{
    counted = false;
    atomic_fetch_sub(&inside[stripe()].n, 1);
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

static long others_inside(void)
{
    long n = 0;
    for (int i = 0; i < STRIPES; i++) {
        n += atomic_load(&inside[i].n);
    }
    return n - (counted ? 1 : 0);
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
        while (others_inside() > 0) {
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
    for (int i = 0; i < STRIPES; i++) {
        atomic_store(&inside[i].n, 0);
    }
    atomic_store(&closed, false);
    depth = 0;
    counted = closer = false;
}
