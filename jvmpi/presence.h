/*
 * presence - who is inside a region of code, counted so that entering and
 * leaving cost no locked instruction.
 *
 * The layer keeps two such regions on every event: the delivery gate (no
 * handler may run while a GC window is open, jvmpi/gate.c) and the callback
 * guard (no callback may run half-way through VM death, jvmti_backend).
 * Method events come by the hundred million, and a shared counter meant
 * two locked additions per region per event.  Here each thread counts in a
 * slot of its own with plain stores; the rare side that must know whether
 * anyone is inside (a window opening, VM death) first sets its flag, then
 * makes every other thread pass a full memory barrier at once (Linux's
 * membarrier, expedited), then sums the slots: a thread that entered
 * before the barrier is seen in its slot, one that enters after it sees
 * the flag.  Where the kernel lacks membarrier, entering uses a full fence
 * instead (as costly as the locked addition, and as correct).
 *
 * Slots live in one list per region; a thread's slot goes back to the list
 * when the thread ends, for the next thread to take.
 */
#ifndef JVMPI_PRESENCE_H_
#define JVMPI_PRESENCE_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct presence;

/* One cache line each: a thread writes only its own. */
typedef struct presence_slot {
    _Atomic long n; /* written by its owner thread only, unless shared */
    struct presence_slot *next;
    struct presence *region;
    bool taken;
    bool shared; /* the spare: threads that could get no slot, with locked additions */
} __attribute__((aligned(64))) presence_slot;

typedef struct presence {
    pthread_mutex_t lock;
    presence_slot *slots;
    pthread_key_t key;
    _Atomic int key_state; /* 0 none, 2 made */
    presence_slot spare;
} presence;

#define PRESENCE_INIT {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, {0, NULL, NULL, true, true}}

/* The calling thread's slot in p, to keep (in a thread-local) and pass to
 * presence_enter and presence_leave; out of memory, the shared spare. */
presence_slot *presence_slot_take(presence *p);

/* 1 once membarrier is known to work here (entering needs no fence of its
 * own), 2 when it does not; set by the first presence_slot_take. */
extern _Atomic int presence_mode;
static inline bool presence_cheap(void) { return atomic_load_explicit(&presence_mode, memory_order_relaxed) == 1; }

static inline void presence_enter(presence_slot *s)
{
    if (s->shared) {
        atomic_fetch_add(&s->n, 1);
        return;
    }
    atomic_store_explicit(&s->n, atomic_load_explicit(&s->n, memory_order_relaxed) + 1, memory_order_relaxed);
    if (presence_cheap()) {
        atomic_signal_fence(memory_order_seq_cst);
    } else {
        atomic_thread_fence(memory_order_seq_cst);
    }
}

static inline void presence_leave(presence_slot *s)
{
    if (s->shared) {
        atomic_fetch_sub(&s->n, 1);
        return;
    }
    atomic_store_explicit(&s->n, atomic_load_explicit(&s->n, memory_order_relaxed) - 1, memory_order_release);
}

/* Counts the caller in (s), then looks at closed, the flag the rare side
 * sets before it sums; set, counts the caller out again and returns false.
 * One of the two always sees the other. */
static inline bool presence_enter_open(presence_slot *s, _Atomic bool *closed)
{
    presence_enter(s);
    if (atomic_load(closed)) {
        presence_leave(s);
        return false;
    }
    return true;
}

/* After the caller set the flag that keeps newcomers out: how many are in
 * p's region, the caller's own presence not subtracted.  Makes the barrier
 * only when first is true (later sums of one closing need none). */
long presence_count(presence *p, bool first);

/* Every slot back to 0 (tests; no thread may be inside). */
void presence_reset(presence *p);

#endif
