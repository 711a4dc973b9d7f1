#include "gc.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "classes.h"
#include "deadline.h"
#include "defs.h"
#include "dispatch.h"
#include "events.h"
#include "gate.h"
#include "lateobjs.h"
#include "layer.h"
#include "ledger.h"
#include "log.h"
#include "whose.h"

/* Frees that came with no collection event (collectors that post none for
 * their concurrent cycles) are not held longer than this. */
#define STRAY_FREES_MS 500
/* After a collection the layer hid (gc_hidden_begin), its frees wait this
 * long for a collection of the program's to be reported with: alone they
 * would make a window, the GC_START/GC_FINISH HotSpot 5.0 never posted. */
#define HIDDEN_FREES_MS 10000

/* The frees of a collection come after it, in one burst on the VM's Service
 * Thread.  A window waits for that burst: for its first free up to a limit,
 * then until none came for a quiet spell, which must outlast the times the
 * posting thread is descheduled on a busy machine.  RunGC waits longer, as
 * its caller counts on seeing that collection's frees.  Frees that come
 * later are the next window's.  (Asking JVM TI to post them itself, by
 * switching ObjectFree, deadlocks JDK 17 when the Service Thread posts at the
 * same time: it waits for the other poster without a safepoint check, while
 * that one waits for a safepoint.) */
typedef struct {
    long first_free_ms, quiet_ms;
} settle_times;
static const settle_times after_collection = {20, 10};
static const settle_times after_run_gc = {30, 50};
#define SETTLE_MAX_MS 10000 /* only if frees never stop coming */
/* The VM collects while an agent has GC disabled, and the frees wait for
 * EnableGC: past this many, or this long, the user is told once. */
#define HELD_FREES_TOLD (1u << 20)
#define HELD_MS_TOLD (60 * 1000)

static _Atomic unsigned long frees_seen;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;

/* All under lock. */
static int64_t *queue;
static size_t queue_len, queue_cap;
static struct timespec oldest_queued;
static long collections_finished, collections_served;
/* RunGC windows the delivery thread delivers for their callers. */
static unsigned long run_gc_asked, run_gc_served;
/* RunGCs between their collection and their ask: the collection is theirs,
 * one window for both, as JDK 5.0 posted one GC_START/GC_FINISH for it. */
static int run_gc_collecting;
static JNIEnv *run_gc_env_id;
static int disable_depth;
/* Since when GC is disabled, and whether the user was told how much that
 * holds back (once for each time GC is disabled). */
static struct timespec disabled_since;
static bool hold_told;
static int hidden_depth; /* inside gc_hidden_begin/end */
static bool hidden_since_window; /* a hidden collection since the last window */
static bool window_busy;
static bool window_delivering; /* past the last look at disable_depth */
static pthread_t window_owner;

static void (*waker)(void);
/* This thread is delivering a window: it stands for HotSpot 5.0's VM thread. */
static TLS_FAST bool window_here;

bool gc_window_here(void) { return window_here; }

void gc_set_waker(void (*wake)(void)) { waker = wake; }

static void wake(void)
{
    if (waker != NULL) {
        waker();
    }
}

static long ms_since(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

void gc_object_freed(int64_t tag)
{
    if (ids_is_pending_class(tag)) {
        return;
    }
    if (ids_is_class(tag)) {
        /* Its class record outlives it until the CLASS_UNLOAD is delivered. */
        class_rec *c = classes_acquire(seam_id_from_tag(tag));
        if (c != NULL) {
            ids_count_class_object(c->info->object_size, true);
            classes_release(c);
        }
    }
    /* A class's own object is an object too (its CLASS_UNLOAD comes apart):
     * its OBJECT_FREE is due if the agent was told of it (lateobjs_free_due). */
    atomic_fetch_add_explicit(&frees_seen, 1, memory_order_relaxed);
    if (!events_enabled(JVMPI_EVENT_OBJECT_FREE)) {
        lateobjs_free_due(tag); /* forgets what defs.c kept of it (before its record goes) */
        ids_forget(tag);
        return;
    }
    bool first = false;
    {
        pthread_mutex_lock(&lock);
        if (queue_len == queue_cap) {
            size_t cap = queue_cap ? queue_cap * 2 : 1024;
            int64_t *grown = realloc(queue, cap * sizeof *grown);
            if (grown == NULL) {
                pthread_mutex_unlock(&lock);
                ids_forget(tag);
                LOG_ERROR("out of memory: an OBJECT_FREE is lost");
                return;
            }
            queue = grown;
            queue_cap = cap;
        }
        queue[queue_len++] = tag;
        size_t held = 0;
        long held_ms = 0;
        if (disable_depth > 0 && !hold_told && (queue_len & 4095) == 0) {
            held_ms = ms_since(&disabled_since);
            if (queue_len >= HELD_FREES_TOLD || held_ms >= HELD_MS_TOLD) {
                hold_told = true;
                held = queue_len;
            }
        }
        /* Uncounted together with queueing: a window's GC_FINISH counts
         * exactly the objects whose frees it has not delivered.  Its record
         * (idrec.c) is dropped with its window, off the thread that JVM TI
         * posts ObjectFree on (on JDK 17, an allocating thread holding the
         * tag map's lock); until then the agent, which has no OBJECT_FREE
         * for it yet, may still ask about it. */
        ids_uncount(tag);
        if (queue_len == 1) {
            first = true;
            clock_gettime(CLOCK_MONOTONIC, &oldest_queued);
        }
        pthread_mutex_unlock(&lock);
        if (held > 0) {
            /* JDK 5.0 ran no collection at all: its heap filled up instead. */
            LOG_WARN("GC disabled by the agent for %ld s: the VM collects all the same, and the layer holds back "
                     "%zu OBJECT_FREEs, and memory for each, until the agent calls EnableGC",
                     held_ms / 1000, held);
        }
    }
    if (first) {
        wake(); /* so that the delivery thread times stray frees */
    }
}

void gc_collection_finished(void)
{
    {
        pthread_mutex_lock(&lock);
        bool hidden = hidden_depth > 0;
        if (!hidden) {
            collections_finished++;
        } else {
            hidden_since_window = true;
        }
        pthread_mutex_unlock(&lock);
        if (hidden) {
            LOG_DEBUG("a collection the layer caused: no GC_START/GC_FINISH for it");
            return;
        }
    }
    wake();
}

void gc_hidden_begin(void)
{
    pthread_mutex_lock(&lock);
    hidden_depth++;
    pthread_mutex_unlock(&lock);
}

void gc_hidden_end(void)
{
    pthread_mutex_lock(&lock);
    hidden_depth--;
    pthread_mutex_unlock(&lock);
}

void gc_disable(void)
{
    /* A window already being delivered ends first, as a collection in
     * progress did on JDK 5.0; a handler of that window's own thread may
     * disable GC at once. */
    bool parked = false;
    pthread_mutex_lock(&lock);
    while (window_delivering && !pthread_equal(window_owner, pthread_self())) {
        if (!parked) {
            pthread_mutex_unlock(&lock);
            gate_park();
            parked = true;
            pthread_mutex_lock(&lock);
            continue;
        }
        pthread_cond_wait(&idle, &lock);
    }
    if (disable_depth++ == 0) {
        clock_gettime(CLOCK_MONOTONIC, &disabled_since);
        hold_told = false;
    }
    pthread_mutex_unlock(&lock);
    if (parked) {
        gate_unpark();
    }
}

bool gc_enable(void)
{
    bool ok, now_enabled;
    {
        pthread_mutex_lock(&lock);
        ok = disable_depth > 0;
        if (ok) {
            disable_depth--;
        }
        now_enabled = disable_depth == 0;
        pthread_mutex_unlock(&lock);
    }
    if (ok && now_enabled) {
        wake(); /* the held-back window is due */
    }
    return ok;
}

int gc_disabled_depth(void)
{
    pthread_mutex_lock(&lock);
    int depth = disable_depth;
    pthread_mutex_unlock(&lock);
    return depth;
}

bool gc_is_disabled(void) { return gc_disabled_depth() > 0; }

/* Called with lock held.  A RunGC between its call and its window: a
 * window the delivery thread was about to deliver is left to it, so that the
 * caller sees one GC_START/GC_FINISH, as JDK 5.0 posted for its collection. */
static bool run_gc_under_way_locked(void) { return run_gc_collecting > 0 || run_gc_asked != run_gc_served; }

/* Called with lock held. */
static long wait_ms_locked(void)
{
    if (disable_depth > 0 || window_busy) {
        return -1;
    }
    if (run_gc_asked != run_gc_served) {
        return 0;
    }
    if (run_gc_collecting > 0) {
        return -1; /* its ask wakes the delivery thread */
    }
    if (collections_finished != collections_served) {
        return 0;
    }
    if (queue_len > 0) {
        long left = (hidden_since_window ? HIDDEN_FREES_MS : STRAY_FREES_MS) - ms_since(&oldest_queued);
        return left > 0 ? left : 0;
    }
    return -1;
}

long gc_window_wait_ms(void)
{
    pthread_mutex_lock(&lock);
    long ms = wait_ms_locked();
    pthread_mutex_unlock(&lock);
    return ms;
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static void (*settle_observer)(void);

void gc_set_settle_observer(void (*observer)(void)) { settle_observer = observer; }

static void wait_for_frees_to_settle(const settle_times *t)
{
    struct timespec start, last_change, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    last_change = start;
    unsigned long seen = atomic_load(&frees_seen);
    if (settle_observer != NULL) {
        settle_observer();
    }
    bool any = false;
    for (;;) {
        sleep_ms(1);
        clock_gettime(CLOCK_MONOTONIC, &now);
        unsigned long n = atomic_load(&frees_seen);
        if (n != seen) {
            seen = n;
            any = true;
            last_change = now;
        }
        if (ms_since(&start) >= SETTLE_MAX_MS ||
            (any ? ms_since(&last_change) >= t->quiet_ms : ms_since(&start) >= t->first_free_ms)) {
            LOG_DEBUG("GC window: waited %ld ms for frees (%s)", ms_since(&start), any ? "they stopped" : "none came");
            return;
        }
    }
}

typedef enum {
    WINDOW_DUE,    /* the delivery thread's, when wait_ms_locked() says so */
    WINDOW_RUN_GC, /* RunGC's: GC_START/GC_FINISH even with nothing queued */
    WINDOW_LAST    /* at VM death: the frees queued so far, at once */
} window_kind;

/* GC_FINISH's heap size comes from Java code (Runtime.totalMemory), which
 * is the layer's, not the program's: no event may come of it. */
static jlong heap_capacity(JNIEnv *env)
{
    whose_quiet_begin();
    jlong total = seam_heap_capacity(env);
    whose_quiet_end();
    return total;
}

/* One window on the calling thread; as_env: the env_id its events carry
 * (NULL: whatever the calling thread's events carry). */
static void deliver_window(JNIEnv *env, window_kind kind, JNIEnv *as_env)
{
    bool forced = kind == WINDOW_RUN_GC;
    long target, served_before;
    {
        pthread_mutex_lock(&lock);
        while (window_busy) {
            pthread_cond_wait(&idle, &lock);
        }
        bool nothing_left = queue_len == 0 && collections_finished == collections_served;
        if (disable_depth > 0 || (kind == WINDOW_DUE && (wait_ms_locked() != 0 || run_gc_under_way_locked())) ||
            (kind == WINDOW_LAST && nothing_left)) {
            pthread_mutex_unlock(&lock);
            return;
        }
        window_busy = true;
        window_owner = pthread_self();
        target = collections_finished;
        served_before = collections_served;
        pthread_mutex_unlock(&lock);
    }
    if (forced) {
        /* RunGC made JVM TI post what no thread was posting; another thread
         * may still be posting a batch it took before. */
        wait_for_frees_to_settle(&after_run_gc);
    } else if (target != served_before && kind == WINDOW_DUE) {
        wait_for_frees_to_settle(&after_collection);
    }
    int64_t *frees;
    size_t n;
    jlong live_objects, live_bytes;
    jlong capacity = events_enabled(JVMPI_EVENT_GC_FINISH) ? heap_capacity(env) : -1;
    /* Thread suspended mode: no handler runs on another thread from
     * GC_START to GC_FINISH (gate.c).  Once it holds, the frees so far and
     * the live counts are taken together: the agent's own count of
     * OBJECT_ALLOCs minus OBJECT_FREEs stands still meanwhile. */
    gate_close();
    {
        pthread_mutex_lock(&lock);
        if (disable_depth > 0 || (kind == WINDOW_DUE && run_gc_under_way_locked())) {
            /* DisableGC while the frees settled: held back, queue and all;
             * or RunGC came meanwhile: its window takes them. */
            window_busy = false;
            pthread_cond_broadcast(&idle);
            pthread_mutex_unlock(&lock);
            gate_open();
            return;
        }
        window_delivering = true;
        frees = queue;
        n = queue_len;
        ids_live(&live_objects, &live_bytes);
        queue = NULL;
        queue_len = queue_cap = 0;
        hidden_since_window = false;
        if (target - collections_served > 0) {
            collections_served = target;
        }
        pthread_mutex_unlock(&lock);
    }
    /* Who each free is due to is read from the records before they go
     * (an agent not told of an object gets no OBJECT_FREE for it). */
    agents_mask *due = n > 0 ? malloc(n * sizeof *due) : NULL;
    /* The ledger's too: each object's class, before its record goes. */
    ledger_free *notes = n > 0 && ledger_active() ? malloc(n * sizeof *notes) : NULL;
    for (size_t i = 0; i < n; i++) {
        agents_mask d = lateobjs_free_due(frees[i]);
        if (due != NULL) {
            due[i] = d;
        }
        if (notes != NULL) {
            ledger_free_note(frees[i], &notes[i]);
        }
    }
    ids_drop_uncounted_many(frees, n);
    if (!events_is_shut_down()) {
        /* The layer's own thread delivers for the caller of RunGC, or else
         * for a thread the agent knows, chosen once no THREAD_END can pass. */
        whose_as as;
        bool as_set = as_env != NULL || layer_on_delivery_thread();
        if (as_set) {
            whose_as_begin(&as, as_env);
        }
        window_here = true;
        if (events_enabled(JVMPI_EVENT_GC_START)) {
            dispatch_plain(env, JVMPI_EVENT_GC_START);
            ledger_gc_window(target - served_before > 0 ? target - served_before : 0);
        }
        for (size_t i = 0; i < n; i++) {
            agents_mask to = due != NULL ? due[i] : ~(agents_mask)0;
            if ((to & events_agents(JVMPI_EVENT_OBJECT_FREE)) != 0 &&
                dispatch_object_free(env, seam_id_from_tag(frees[i]), to) != 0 && notes != NULL) {
                ledger_object_freed(&notes[i]);
            }
        }
        if (events_enabled(JVMPI_EVENT_GC_FINISH)) {
            dispatch_gc_finish(env, live_objects, live_bytes, capacity);
        }
        window_here = false;
        if (as_set) {
            whose_as_end(&as);
        }
    }
    gate_open();
    free(due);
    free(notes);
    free(frees);
    {
        pthread_mutex_lock(&lock);
        window_busy = false;
        window_delivering = false;
        pthread_cond_broadcast(&idle);
        pthread_mutex_unlock(&lock);
    }
    wake(); /* collections may have finished meanwhile */
}

void gc_deliver_due(JNIEnv *env)
{
    unsigned long asked;
    JNIEnv *as_env;
    {
        pthread_mutex_lock(&lock);
        asked = run_gc_asked;
        as_env = run_gc_env_id;
        pthread_mutex_unlock(&lock);
    }
    if (asked != run_gc_served) {
        deliver_window(env, WINDOW_RUN_GC, as_env);
        pthread_mutex_lock(&lock);
        run_gc_served = asked;
        pthread_cond_broadcast(&idle);
        pthread_mutex_unlock(&lock);
    }
    deliver_window(env, WINDOW_DUE, NULL);
}

void gc_deliver_last(JNIEnv *env) { deliver_window(env, WINDOW_LAST, NULL); }

/* The caller delivered RunGC's window itself. */
static void run_gc_collected(void)
{
    pthread_mutex_lock(&lock);
    run_gc_collecting--;
    pthread_mutex_unlock(&lock);
}

/* RunGC's window, delivered by the layer's thread for the caller, which
 * waits: JDK 5.0's VM thread did the same for the Java thread that asked
 * for the collection.  False when that thread is not there to do it. */
static bool window_by_delivery_thread(JNIEnv *env)
{
    if (!layer_delivery_running() || layer_on_delivery_thread()) {
        return false;
    }
    unsigned long mine;
    {
        pthread_mutex_lock(&lock);
        run_gc_collecting--;
        mine = ++run_gc_asked;
        run_gc_env_id = whose_env_id(env);
        pthread_mutex_unlock(&lock);
    }
    wake();
    gate_park(); /* RunGC from a handler: the window must not wait for it */
    bool served;
    {
        pthread_mutex_lock(&lock);
        while ((long)(run_gc_served - mine) < 0 && layer_delivery_running()) {
            struct timespec until = deadline_after_ms(CLOCK_REALTIME, 50);
            pthread_cond_timedwait(&idle, &lock, &until);
        }
        served = (long)(run_gc_served - mine) >= 0;
        pthread_mutex_unlock(&lock);
    }
    gate_unpark();
    return served;
}

void gc_run(JNIEnv *env)
{
    /* JVM TI may post the frees of this collection a second or more after
     * it: they are made to come now, so that its window has them. */
    bool nested;
    {
        pthread_mutex_lock(&lock);
        nested = window_busy && pthread_equal(window_owner, pthread_self());
        if (!nested) {
            run_gc_collecting++;
        }
        pthread_mutex_unlock(&lock);
    }
    seam_force_gc();
    seam_post_pending_frees(env);
    if (nested) {
        /* RunGC from a GC_START/OBJECT_FREE/GC_FINISH handler: this
         * collection's frees follow in the next window. */
        LOG_INFO("RunGC inside a GC_START, OBJECT_FREE or GC_FINISH handler: its OBJECT_FREEs come with the next "
                 "collection's");
        return;
    }
    if (!window_by_delivery_thread(env)) {
        deliver_window(env, WINDOW_RUN_GC, NULL);
        run_gc_collected();
    }
}

void gc_reset(void)
{
    pthread_mutex_lock(&lock);
    free(queue);
    queue = NULL;
    queue_len = queue_cap = 0;
    collections_finished = collections_served = 0;
    run_gc_asked = run_gc_served = 0;
    run_gc_collecting = 0;
    run_gc_env_id = NULL;
    disable_depth = 0;
    hidden_depth = 0;
    hidden_since_window = false;
    window_busy = false;
    window_delivering = false;
    pthread_mutex_unlock(&lock);
}
