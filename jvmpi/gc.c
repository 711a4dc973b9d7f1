#include "gc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch.h"
#include "events.h"
#include "log.h"

/* Frees that came with no collection event (collectors that post none for
 * their concurrent cycles) are not held longer than this. */
#define STRAY_FREES_MS 500

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;

/* All under lock. */
static int64_t *queue;
static size_t queue_len, queue_cap;
static struct timespec oldest_queued;
static long collections_finished, collections_served;
static int disable_depth;
static bool window_busy;
static pthread_t window_owner;

static void (*waker)(void);

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
    if (ids_is_class(tag)) {
        return; /* a class: CLASS_UNLOAD tells of it */
    }
    ids_forget(tag);
    if (!events_enabled(JVMPI_EVENT_OBJECT_FREE)) {
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
                LOG_ERROR("out of memory: an OBJECT_FREE is lost");
                return;
            }
            queue = grown;
            queue_cap = cap;
        }
        queue[queue_len++] = tag;
        if (queue_len == 1) {
            first = true;
            clock_gettime(CLOCK_MONOTONIC, &oldest_queued);
        }
        pthread_mutex_unlock(&lock);
    }
    if (first) {
        wake(); /* so that the delivery thread times stray frees */
    }
}

void gc_collection_started(void) {}

void gc_collection_finished(void)
{
    {
        pthread_mutex_lock(&lock);
        collections_finished++;
        pthread_mutex_unlock(&lock);
    }
    wake();
}

void gc_disable(void)
{
    pthread_mutex_lock(&lock);
    disable_depth++;
    pthread_mutex_unlock(&lock);
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

/* Called with lock held. */
static long wait_ms_locked(void)
{
    if (disable_depth > 0 || window_busy) {
        return -1;
    }
    if (collections_finished != collections_served) {
        return 0;
    }
    if (queue_len > 0) {
        long left = STRAY_FREES_MS - ms_since(&oldest_queued);
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

static void deliver_free(JNIEnv *env, int64_t tag)
{
    JVMPI_Event ev;
    memset(&ev, 0, sizeof ev);
    ev.event_type = JVMPI_EVENT_OBJECT_FREE;
    ev.u.obj_free.obj_id = seam_id_from_tag(tag);
    events_deliver(env, &ev);
}

static void deliver_finish(JNIEnv *env)
{
    JVMPI_Event ev;
    memset(&ev, 0, sizeof ev);
    ev.event_type = JVMPI_EVENT_GC_FINISH;
    ids_live(&ev.u.gc_info.used_objects, &ev.u.gc_info.used_object_space);
    ev.u.gc_info.total_object_space = seam_heap_capacity(env);
    events_deliver(env, &ev);
}

/* One window on the calling thread.  forced: deliver GC_START/GC_FINISH even
 * with nothing queued (RunGC ran a collection). */
static void deliver_window(JNIEnv *env, bool forced)
{
    long target;
    {
        pthread_mutex_lock(&lock);
        while (window_busy) {
            pthread_cond_wait(&idle, &lock);
        }
        if (disable_depth > 0 || (!forced && wait_ms_locked() != 0)) {
            pthread_mutex_unlock(&lock);
            return;
        }
        window_busy = true;
        window_owner = pthread_self();
        target = collections_finished;
        pthread_mutex_unlock(&lock);
    }
    /* Frees JVM TI still holds for the collections so far belong here. */
    seam_flush_object_frees();
    int64_t *frees;
    size_t n;
    {
        pthread_mutex_lock(&lock);
        frees = queue;
        n = queue_len;
        queue = NULL;
        queue_len = queue_cap = 0;
        if (target - collections_served > 0) {
            collections_served = target;
        }
        pthread_mutex_unlock(&lock);
    }
    if (!events_is_shut_down()) {
        if (events_enabled(JVMPI_EVENT_GC_START)) {
            dispatch_plain(env, JVMPI_EVENT_GC_START);
        }
        for (size_t i = 0; i < n; i++) {
            if (events_enabled(JVMPI_EVENT_OBJECT_FREE)) {
                deliver_free(env, frees[i]);
            }
        }
        if (events_enabled(JVMPI_EVENT_GC_FINISH)) {
            deliver_finish(env);
        }
    }
    free(frees);
    {
        pthread_mutex_lock(&lock);
        window_busy = false;
        pthread_cond_broadcast(&idle);
        pthread_mutex_unlock(&lock);
    }
    wake(); /* collections may have finished meanwhile */
}

void gc_deliver_due(JNIEnv *env) { deliver_window(env, false); }

void gc_run(JNIEnv *env)
{
    bool nested;
    {
        pthread_mutex_lock(&lock);
        nested = window_busy && pthread_equal(window_owner, pthread_self());
        pthread_mutex_unlock(&lock);
    }
    seam_force_gc();
    if (nested) {
        /* RunGC from a GC_START/OBJECT_FREE/GC_FINISH handler: this
         * collection's frees follow in the next window. */
        LOG_INFO("RunGC inside a GC event handler: its frees come in the next window");
        return;
    }
    deliver_window(env, true);
}

void gc_reset(void)
{
    pthread_mutex_lock(&lock);
    free(queue);
    queue = NULL;
    queue_len = queue_cap = 0;
    collections_finished = collections_served = 0;
    disable_depth = 0;
    window_busy = false;
    pthread_mutex_unlock(&lock);
}
