/*
 * rawmon.c - JVMPI raw monitors (see rawmon.h for the contract).
 *
 * Storage.  Monitors live in slots of a table that only grows: chunk k holds
 * CHUNK_BASE << k slots, chunks are never moved or freed, and every slot's
 * mutex and condition variables are initialised once, when its chunk is
 * made, and never destroyed.  A destroyed monitor's slot goes on a free list
 * and is reused; its stamp (odd = live) is bumped on create and on destroy.
 *
 * Handles.  A JVMPI_RawMonitor is TAG | stamp | index, not an address.  The
 * tag puts it in the non-canonical x86-64 range, so it can never equal a real
 * pointer an agent might pass by mistake.  Checking a handle means: tag,
 * index below the published slot count, stamp equal to the slot's -- all
 * without locks -- then the stamp again under the slot's mutex, which is the
 * answer that counts (the slot may have been destroyed, even reused, in
 * between; since slots are permanent, locking a stale one is harmless).
 *
 * Locks.  Each monitor has its own mutex; the uncontended enter/exit path
 * takes nothing else.  table_mu guards creation and the free list,
 * blocked_mu the list of blocked threads for rawmon_thread_blocked_status.
 * Order: table_mu -> slot mu -> blocked_mu.  The event sink, the env source
 * and for_each callbacks run with none of them held.
 *
 * The monitor's name is handed to the event sink after the slot mutex is
 * dropped, so a slot with events in flight is "pinned": a destroy in the
 * meantime kills the handle at once but leaves name and slot to be recycled
 * by the last unpin.
 */
#include "rawmon.h"

#include "deadline.h"
#include "gate.h"
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Static_assert(sizeof(uintptr_t) == 8, "the handle encoding needs 64-bit pointers");

/* ---- handle encoding ------------------------------------------------- */

/* Top byte 0x7a: above any user-space address with 4- or 5-level paging and
 * below kernel space, so no pointer to real memory looks like a handle. */
#define HANDLE_TAG       UINT64_C(0x7a5e)
#define HANDLE_TAG_SHIFT 48
#define STAMP_BITS       24
#define STAMP_SHIFT      24
#define STAMP_MASK       ((UINT64_C(1) << STAMP_BITS) - 1)
#define INDEX_BITS       24
#define INDEX_MASK       ((UINT64_C(1) << INDEX_BITS) - 1)
#define MAX_SLOTS        ((uint32_t)1 << INDEX_BITS)

/* Chunk k covers indices [CHUNK_BASE*(2^k - 1), CHUNK_BASE*(2^(k+1) - 1)):
 * small agents pay for 32 slots, and 20 chunks reach past MAX_SLOTS. */
#define CHUNK_BASE 32u
#define MAX_CHUNKS 20

/* Longer timeouts than this (about 31 years) are treated as forever, which
 * also keeps the deadline arithmetic from overflowing. */
#define FOREVER_MS INT64_C(1000000000000)

/* ---- data ------------------------------------------------------------- */

/* A blocked thread, on its own stack for as long as it is blocked. */
typedef struct node {
    struct node *prev, *next;   /* in the slot's entering or waiting list */
    struct node *gprev, *gnext; /* in blocked_head */
    JNIEnv *env;
    _Atomic jint status;        /* changed under slot mu, read under blocked_mu */
    bool notified;
} node;

typedef struct {
    node *head, *tail;
    jint n;
} node_list;

typedef struct slot {
    pthread_mutex_t mu;
    pthread_cond_t entry_cv;    /* owner released the monitor */
    pthread_cond_t wait_cv;     /* notify-all; CLOCK_MONOTONIC for timed waits */
    _Atomic uint32_t stamp;     /* odd while live; written under mu only */
    uint32_t index;
    /* under mu */
    char *name;
    _Atomic int creator;        /* the agent that made it; set before its handle exists */
    bool silent;
    bool owned;
    pthread_t owner;
    JNIEnv *owner_env;
    jint count;
    node_list entering;         /* includes waiters re-acquiring after notify/timeout */
    node_list waiting;
    int pinned;
    /* under table_mu */
    uint32_t next_free;         /* index + 1, 0 = end of list */
} slot;

typedef JNIEnv *(*env_fn)(void);

static _Atomic(rawmon_event_fn) event_sink;
static _Atomic(env_fn) env_source;

static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(slot *) chunks[MAX_CHUNKS];
static _Atomic uint32_t n_slots;   /* slots [0, n_slots) are initialised */
static uint32_t free_head;         /* index + 1, under table_mu */
static _Atomic jint n_live;

static pthread_mutex_t blocked_mu = PTHREAD_MUTEX_INITIALIZER;
static node *blocked_head;

/* ---- helpers ---------------------------------------------------------- */

/* Errors go through the layer's log, so logfile= catches them too; a call
 * refused is counted after its first lines (log_refused), as an agent may
 * repeat it in a loop. */
#define report(...) LOG_ERROR(__VA_ARGS__)
#define refuse(fn, ...) log_refused(fn, __VA_ARGS__)
/* A monitor's name in a line: its first 64 bytes, copied under its lock. */
#define NAME_SHOWN 65

static JNIEnv *current_env(void)
{
    env_fn fn = atomic_load_explicit(&env_source, memory_order_acquire);
    return fn ? fn() : NULL;
}

static JVMPI_RawMonitor encode(uint32_t index, uint32_t stamp)
{
    uint64_t h = (HANDLE_TAG << HANDLE_TAG_SHIFT) | (((uint64_t)stamp & STAMP_MASK) << STAMP_SHIFT) | index;
    return (JVMPI_RawMonitor)(uintptr_t)h;
}

static slot *slot_at(uint32_t index)
{
    uint32_t j = index / CHUNK_BASE + 1;
    unsigned k = 31u - (unsigned)__builtin_clz(j);
    uint32_t first = CHUNK_BASE * ((1u << k) - 1u);
    slot *chunk = atomic_load_explicit(&chunks[k], memory_order_acquire);
    return &chunk[index - first];
}

static bool stamp_matches(const slot *s, uint32_t handle_stamp)
{
    return (atomic_load_explicit(&s->stamp, memory_order_relaxed) & STAMP_MASK) == handle_stamp;
}

static void list_append(node_list *l, node *n)
{
    n->next = NULL;
    n->prev = l->tail;
    if (l->tail)
        l->tail->next = n;
    else
        l->head = n;
    l->tail = n;
    l->n++;
}

static void list_remove(node_list *l, node *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else
        l->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        l->tail = n->prev;
    n->prev = n->next = NULL;
    l->n--;
}

static void blocked_add(node *n)
{
    pthread_mutex_lock(&blocked_mu);
    n->gprev = NULL;
    n->gnext = blocked_head;
    if (blocked_head)
        blocked_head->gprev = n;
    blocked_head = n;
    pthread_mutex_unlock(&blocked_mu);
}

static void blocked_remove(node *n)
{
    pthread_mutex_lock(&blocked_mu);
    if (n->gprev)
        n->gprev->gnext = n->gnext;
    else
        blocked_head = n->gnext;
    if (n->gnext)
        n->gnext->gprev = n->gprev;
    pthread_mutex_unlock(&blocked_mu);
}

int rawmon_creator(JVMPI_RawMonitor m)
{
    uint64_t h = (uint64_t)(uintptr_t)m;
    uint32_t index = (uint32_t)(h & INDEX_MASK);
    if (m == NULL || (h >> HANDLE_TAG_SHIFT) != HANDLE_TAG ||
        index >= atomic_load_explicit(&n_slots, memory_order_acquire)) {
        return -1;
    }
    /* A monitor with an event in flight is pinned: its slot is not reused. */
    return atomic_load_explicit(&slot_at(index)->creator, memory_order_relaxed);
}

/* Checks the handle and returns its slot locked, or reports and returns NULL. */
static slot *lock_monitor(JVMPI_RawMonitor m, const char *fn)
{
    uint64_t h = (uint64_t)(uintptr_t)m;
    uint32_t index, stamp, age;
    slot *s;

    if (m == NULL) {
        refuse(fn, "NULL raw monitor");
        return NULL;
    }
    index = (uint32_t)(h & INDEX_MASK);
    stamp = (uint32_t)((h >> STAMP_SHIFT) & STAMP_MASK);
    if ((h >> HANDLE_TAG_SHIFT) != HANDLE_TAG || (stamp & 1u) == 0
        || index >= atomic_load_explicit(&n_slots, memory_order_acquire)) {
        refuse(fn, "%p is not a raw monitor", (void *)m);
        return NULL;
    }
    s = slot_at(index);
    if (stamp_matches(s, stamp)) {
        pthread_mutex_lock(&s->mu);
        if (stamp_matches(s, stamp))
            return s;
        pthread_mutex_unlock(&s->mu);
    }
    /* Stamps only grow (modulo 2^24), so an older one is a destroyed
     * monitor's; a newer one was never handed out. */
    age = ((atomic_load_explicit(&s->stamp, memory_order_relaxed) & STAMP_MASK) - stamp) & STAMP_MASK;
    if (age > 0 && age < (STAMP_MASK + 1) / 2)
        refuse(fn, "raw monitor %p was destroyed", (void *)m);
    else
        refuse(fn, "%p is not a raw monitor", (void *)m);
    return NULL;
}

static bool owned_by_me(const slot *s)
{
    return s->owned && pthread_equal(s->owner, pthread_self());
}

static void take(slot *s, JNIEnv *env, jint count)
{
    s->owned = true;
    s->owner = pthread_self();
    s->owner_env = env;
    s->count = count;
}

/* Under mu: hands the monitor to one thread queued for it, if any. */
static void release(slot *s)
{
    s->owned = false;
    s->owner_env = NULL;
    s->count = 0;
    if (s->entering.n > 0)
        pthread_cond_signal(&s->entry_cv);
}

/* Under mu: until the monitor is free or this thread's.  A thread blocked
 * here runs no agent code, so it holds no GC window up (gate.h), as a
 * thread blocked on a raw monitor never held a collection up in HotSpot
 * 5.0 unless GC was disabled for its event: the monitor's owner may be
 * waiting for that very window (RunGC in its JVM_SHUT_DOWN handler).  It counts itself back in before it takes the monitor, and
 * without mu, as that waits for an open window to end; the window's own
 * handlers may need the monitor meanwhile.  parked: it was parked before. */
static void await_free(slot *s, bool parked)
{
    for (;;) {
        while (s->owned && !owned_by_me(s)) {
            if (!parked) {
                gate_park_blocked();
                parked = true;
            }
            pthread_cond_wait(&s->entry_cv, &s->mu);
        }
        if (!parked)
            return;
        pthread_mutex_unlock(&s->mu);
        gate_unpark();
        parked = false;
        pthread_mutex_lock(&s->mu);
    }
}

/* Returns a dead, unpinned slot (its name already detached) to the free list. */
static void recycle(slot *s, char *name)
{
    free(name);
    pthread_mutex_lock(&table_mu);
    s->next_free = free_head;
    free_head = s->index + 1;
    pthread_mutex_unlock(&table_mu);
}

static void unpin(slot *s)
{
    char *name = NULL;
    bool dead;

    pthread_mutex_lock(&s->mu);
    dead = --s->pinned == 0 && (atomic_load_explicit(&s->stamp, memory_order_relaxed) & 1u) == 0
           && s->name != NULL;
    if (dead) {
        name = s->name;
        s->name = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    if (dead)
        recycle(s, name);
}

/* Under table_mu: makes chunk k (all slots initialised) visible. */
static bool make_chunk(unsigned k)
{
    uint32_t size = CHUNK_BASE << k, first = CHUNK_BASE * ((1u << k) - 1u);
    pthread_condattr_t ca;
    slot *chunk = calloc(size, sizeof *chunk);

    if (chunk == NULL)
        return false;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    for (uint32_t i = 0; i < size; i++) {
        pthread_mutex_init(&chunk[i].mu, NULL);
        pthread_cond_init(&chunk[i].entry_cv, NULL);
        pthread_cond_init(&chunk[i].wait_cv, &ca);
        chunk[i].index = first + i;
    }
    pthread_condattr_destroy(&ca);
    atomic_store_explicit(&chunks[k], chunk, memory_order_release);
    return true;
}

/* ---- API -------------------------------------------------------------- */

void rawmon_set_event_sink(rawmon_event_fn fn)
{
    atomic_store_explicit(&event_sink, fn, memory_order_release);
}

void rawmon_set_env_source(JNIEnv *(*fn)(void))
{
    atomic_store_explicit(&env_source, fn, memory_order_release);
}

JVMPI_RawMonitor rawmon_create(const char *name) { return rawmon_create_by(0, name); }

JVMPI_RawMonitor rawmon_create_by(int creator, const char *name)
{
    char *copy;
    uint32_t index, stamp;
    bool fresh = false;
    slot *s;

    if (name == NULL) {
        refuse("RawMonitorCreate", "NULL name");
        return NULL;
    }
    copy = strdup(name);
    if (copy == NULL) {
        report("RawMonitorCreate: out of memory for \"%.64s\"", name);
        return NULL;
    }

    pthread_mutex_lock(&table_mu);
    if (free_head != 0) {
        index = free_head - 1;
        free_head = slot_at(index)->next_free;
    } else {
        index = atomic_load_explicit(&n_slots, memory_order_relaxed);
        if (index >= MAX_SLOTS) {
            pthread_mutex_unlock(&table_mu);
            refuse("RawMonitorCreate", "too many raw monitors (%u), \"%.64s\" not created", (unsigned)MAX_SLOTS,
                   name);
            free(copy);
            return NULL;
        }
        unsigned k = 31u - (unsigned)__builtin_clz(index / CHUNK_BASE + 1);
        if (atomic_load_explicit(&chunks[k], memory_order_relaxed) == NULL && !make_chunk(k)) {
            pthread_mutex_unlock(&table_mu);
            report("RawMonitorCreate: out of memory for \"%.64s\"", name);
            free(copy);
            return NULL;
        }
        fresh = true;
    }
    s = slot_at(index);
    pthread_mutex_lock(&s->mu);
    s->name = copy;
    atomic_store_explicit(&s->creator, creator, memory_order_relaxed);
    s->silent = copy[0] == '_';
    s->owned = false;
    s->owner_env = NULL;
    s->count = 0;
    s->entering = (node_list){0};
    s->waiting = (node_list){0};
    s->pinned = 0;
    stamp = atomic_load_explicit(&s->stamp, memory_order_relaxed) + 1;
    atomic_store_explicit(&s->stamp, stamp, memory_order_relaxed);
    pthread_mutex_unlock(&s->mu);
    if (fresh)
        atomic_store_explicit(&n_slots, index + 1, memory_order_release);
    pthread_mutex_unlock(&table_mu);

    atomic_fetch_add_explicit(&n_live, 1, memory_order_relaxed);
    return encode(index, stamp);
}

void rawmon_enter(JVMPI_RawMonitor m)
{
    JNIEnv *env = current_env();
    rawmon_event_fn sink = NULL, entered_sink = NULL;
    const char *name;
    node n;
    slot *s = lock_monitor(m, "RawMonitorEnter");

    if (s == NULL)
        return;
    if (!s->owned) {
        take(s, env, 1);
        pthread_mutex_unlock(&s->mu);
        return;
    }
    if (pthread_equal(s->owner, pthread_self())) {
        if (s->count == INT32_MAX) {
            pthread_mutex_unlock(&s->mu);
            refuse("RawMonitorEnter", "raw monitor %p entered too many times", (void *)m);
            return;
        }
        s->count++;
        pthread_mutex_unlock(&s->mu);
        return;
    }

    /* Contended.  Queued before ENTER goes out so that an owner exiting
     * during the handler sees us and sends EXIT. */
    n = (node){ .env = env };
    atomic_init(&n.status, JVMPI_THREAD_MONITOR_WAIT);
    list_append(&s->entering, &n);
    blocked_add(&n);
    name = s->name;
    if (!s->silent) {
        sink = atomic_load_explicit(&event_sink, memory_order_acquire);
        if (sink)
            s->pinned++;
    }
    pthread_mutex_unlock(&s->mu);

    if (sink)
        sink(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, name, m);

    pthread_mutex_lock(&s->mu);
    /* The owner may be this very thread, if the ENTER handler entered the
     * monitor itself: then this is just one more level. */
    await_free(s, false);
    list_remove(&s->entering, &n);
    blocked_remove(&n);
    if (s->owned)
        s->count++;
    else
        take(s, env, 1);
    if (sink)   /* ENTERED only ever pairs with an ENTER */
        entered_sink = atomic_load_explicit(&event_sink, memory_order_acquire);
    pthread_mutex_unlock(&s->mu);

    if (entered_sink)
        entered_sink(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED, name, m);
    if (sink)
        unpin(s);
}

void rawmon_exit(JVMPI_RawMonitor m)
{
    rawmon_event_fn sink = NULL;
    const char *name = NULL;
    slot *s = lock_monitor(m, "RawMonitorExit");

    if (s == NULL)
        return;
    if (!owned_by_me(s)) {
        char shown[NAME_SHOWN];
        snprintf(shown, sizeof shown, "%s", s->name);
        pthread_mutex_unlock(&s->mu);
        refuse("RawMonitorExit", "raw monitor \"%s\" is not owned by this thread", shown);
        return;
    }
    if (--s->count > 0) {
        pthread_mutex_unlock(&s->mu);
        return;
    }
    if (s->entering.n > 0 && !s->silent) {
        sink = atomic_load_explicit(&event_sink, memory_order_acquire);
        if (sink) {
            s->pinned++;
            name = s->name;
        }
    }
    release(s);
    pthread_mutex_unlock(&s->mu);

    if (sink) {
        sink(JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, name, m);
        unpin(s);
    }
}

void rawmon_wait(JVMPI_RawMonitor m, jlong ms)
{
    JNIEnv *env = current_env();
    struct timespec deadline = {0, 0};
    bool timed = ms > 0 && ms < FOREVER_MS;
    jint saved;
    node n;
    slot *s;

    if (timed) {
        deadline = deadline_after_ms(CLOCK_MONOTONIC, (long)ms);
    }

    s = lock_monitor(m, "RawMonitorWait");
    if (s == NULL)
        return;
    if (!owned_by_me(s)) {
        char shown[NAME_SHOWN];
        snprintf(shown, sizeof shown, "%s", s->name);
        pthread_mutex_unlock(&s->mu);
        refuse("RawMonitorWait", "raw monitor \"%s\" is not owned by this thread; not waiting", shown);
        return;
    }

    n = (node){ .env = env };
    atomic_init(&n.status, JVMPI_THREAD_CONDVAR_WAIT);
    list_append(&s->waiting, &n);
    blocked_add(&n);
    saved = s->count;
    release(s);
    gate_park_blocked(); /* see await_free */

    while (!n.notified) {
        int rc = timed ? pthread_cond_timedwait(&s->wait_cv, &s->mu, &deadline)
                       : pthread_cond_wait(&s->wait_cv, &s->mu);
        if (rc == ETIMEDOUT)
            break;
    }
    if (!n.notified) {
        /* Timed out: queue for the monitor like a notified waiter. */
        list_remove(&s->waiting, &n);
        list_append(&s->entering, &n);
        atomic_store_explicit(&n.status, JVMPI_THREAD_MONITOR_WAIT, memory_order_relaxed);
    }
    await_free(s, true);
    list_remove(&s->entering, &n);
    blocked_remove(&n);
    take(s, env, saved);
    pthread_mutex_unlock(&s->mu);
}

void rawmon_notify_all(JVMPI_RawMonitor m)
{
    slot *s = lock_monitor(m, "RawMonitorNotifyAll");
    node *n;

    if (s == NULL)
        return;
    if (!owned_by_me(s)) {
        char shown[NAME_SHOWN];
        snprintf(shown, sizeof shown, "%s", s->name);
        pthread_mutex_unlock(&s->mu);
        refuse("RawMonitorNotifyAll", "raw monitor \"%s\" is not owned by this thread; nobody notified", shown);
        return;
    }
    if (s->waiting.n > 0) {
        while ((n = s->waiting.head) != NULL) {
            list_remove(&s->waiting, n);
            n->notified = true;
            atomic_store_explicit(&n->status, JVMPI_THREAD_MONITOR_WAIT, memory_order_relaxed);
            list_append(&s->entering, n);
        }
        pthread_cond_broadcast(&s->wait_cv);
    }
    pthread_mutex_unlock(&s->mu);
}

void rawmon_destroy(JVMPI_RawMonitor m)
{
    char shown[NAME_SHOWN];
    char *name = NULL;
    bool now;
    slot *s = lock_monitor(m, "RawMonitorDestroy");

    if (s == NULL)
        return;
    if (s->owned && !owned_by_me(s)) {
        snprintf(shown, sizeof shown, "%s", s->name);
        pthread_mutex_unlock(&s->mu);
        refuse("RawMonitorDestroy", "raw monitor \"%s\" is owned by another thread; not destroyed", shown);
        return;
    }
    if (s->entering.n > 0 || s->waiting.n > 0) {
        int entering = (int)s->entering.n, waiting = (int)s->waiting.n;
        snprintf(shown, sizeof shown, "%s", s->name);
        pthread_mutex_unlock(&s->mu);
        refuse("RawMonitorDestroy", "raw monitor \"%s\" has %d thread(s) entering and %d waiting; not destroyed",
               shown, entering, waiting);
        return;
    }
    atomic_store_explicit(&s->stamp, atomic_load_explicit(&s->stamp, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    s->owned = false;
    s->owner_env = NULL;
    s->count = 0;
    now = s->pinned == 0;
    if (now) {
        name = s->name;
        s->name = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    atomic_fetch_sub_explicit(&n_live, 1, memory_order_relaxed);
    if (now)
        recycle(s, name);
}

jint rawmon_thread_blocked_status(JNIEnv *env)
{
    jint status = 0;

    if (env == NULL)
        return 0;
    pthread_mutex_lock(&blocked_mu);
    for (node *n = blocked_head; n != NULL; n = n->gnext) {
        if (n->env == env) {
            status = atomic_load_explicit(&n->status, memory_order_relaxed);
            break;
        }
    }
    pthread_mutex_unlock(&blocked_mu);
    return status;
}

static JNIEnv **copy_envs(const node_list *l)
{
    JNIEnv **out = malloc((size_t)(l->n > 0 ? l->n : 1) * sizeof *out);
    jint i = 0;

    if (out != NULL)
        for (const node *n = l->head; n != NULL; n = n->next)
            out[i++] = n->env;
    return out;
}

void rawmon_for_each(void (*fn)(const rawmon_snapshot *snap, void *arg), void *arg)
{
    uint32_t count = atomic_load_explicit(&n_slots, memory_order_acquire);

    if (fn == NULL)
        return;
    for (uint32_t i = 0; i < count; i++) {
        slot *s = slot_at(i);
        rawmon_snapshot snap;
        char *name;
        uint32_t stamp;

        pthread_mutex_lock(&s->mu);
        stamp = atomic_load_explicit(&s->stamp, memory_order_relaxed);
        if ((stamp & 1u) == 0) {
            pthread_mutex_unlock(&s->mu);
            continue;
        }
        name = strdup(s->name);
        snap.creator = atomic_load_explicit(&s->creator, memory_order_relaxed);
        snap.id = encode(i, stamp);
        snap.owner = s->owned ? s->owner_env : NULL;
        snap.entry_count = s->owned ? s->count : 0;
        snap.n_entering = s->entering.n;
        snap.entering = copy_envs(&s->entering);
        snap.n_waiting = s->waiting.n;
        snap.waiting = copy_envs(&s->waiting);
        pthread_mutex_unlock(&s->mu);

        if (name != NULL && snap.entering != NULL && snap.waiting != NULL) {
            snap.name = name;
            fn(&snap, arg);
        } else {
            report("MonitorDump: out of memory, raw monitor %p left out", (void *)snap.id);
        }
        free(name);
        free(snap.entering);
        free(snap.waiting);
    }
}

jint rawmon_live_count(void)
{
    return atomic_load_explicit(&n_live, memory_order_relaxed);
}
