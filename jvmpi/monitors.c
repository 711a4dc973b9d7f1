#include "monitors.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uthash.h>

#include "dispatch.h"
#include "events.h"
#include "gate.h"
#include "layer.h"
#include "log.h"
#include "threads.h"
#include "tls.h"
#include "whose.h"

typedef struct {
    jobjectID object;
    int blocked;        /* threads between their contended enter and entered */
    /* The env_id of the thread that will leave with waiters queued.  Never
     * a thread the agent does not know (whose_env_id NULL): HotSpot lets a
     * thread past its ThreadEnd take its own Thread object's monitor to
     * wake the threads joining it, and no event may name it then. */
    JNIEnv *owes_exit;
    /* The thread that owed the exit is ending and sending it itself: the
     * next CONTENDED_ENTERED must wait for it. */
    bool exit_in_flight;
    UT_hash_handle hh;
} mon_state;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mon_state *table;
/* CONTENDED_EXITs being sent for a thread by another (under lock): a thread
 * that ends waits for them, so that none names it after its THREAD_END. */
static pthread_cond_t exits_sent = PTHREAD_COND_INITIALIZER;
static int exits_in_flight;

/* The threads that passed monitors_thread_ending lately (under lock): a
 * thread that asked for a monitor's owner outside the lock must not make
 * an ending thread owe an exit it would send after its THREAD_END. */
#define RECENT_ENDS 64
static JNIEnv *recent_ends[RECENT_ENDS];
static unsigned long ends_seen; /* how many passed, ever */

/* Called with lock held: whether env_id passed monitors_thread_ending since
 * the count was since (true also when too many did to tell). */
static bool ended_since(JNIEnv *env_id, unsigned long since)
{
    if (ends_seen - since > RECENT_ENDS) {
        return true;
    }
    for (unsigned long i = since; i != ends_seen; i++) {
        if (recent_ends[i % RECENT_ENDS] == env_id) {
            return true;
        }
    }
    return false;
}

/* When the calling thread's current wait or sleep began (for WAITED). */
static TLS_FAST struct timespec wait_began;

static bool exits_wanted(void) { return events_enabled(JVMPI_EVENT_MONITOR_CONTENDED_EXIT); }

/* Called with lock held. */
static mon_state *state_of(jobjectID object, bool create)
{
    mon_state *m = NULL;
    HASH_FIND_PTR(table, &object, m);
    if (m == NULL && create) {
        m = calloc(1, sizeof *m);
        if (m != NULL) {
            m->object = object;
            HASH_ADD_PTR(table, object, m);
        }
    }
    return m;
}

/* Called with lock held. */
static void drop_if_idle(mon_state *m)
{
    if (m != NULL && m->blocked == 0 && m->owes_exit == NULL && !m->exit_in_flight) {
        HASH_DEL(table, m);
        free(m);
    }
}

void layer_monitor_contended_enter(JNIEnv *env, jobject object, jobjectID obj_id)
{
    if (!layer_is_live() || obj_id == NULL) {
        return;
    }
    if (exits_wanted()) {
        JNIEnv *me = whose_env_id(env);
        pthread_mutex_lock(&lock);
        mon_state *m = state_of(obj_id, true);
        bool ask_owner = m != NULL && m->blocked == 0 && m->owes_exit == NULL;
        unsigned long ends_before = ends_seen;
        pthread_mutex_unlock(&lock);
        /* Only the first blocked thread needs the owner: with threads already
         * blocked, the owner is the one already owing an exit (or one that
         * barged in, which the layer cannot see anyway). */
        JNIEnv *owner = NULL;
        if (ask_owner) {
            jobjectID owner_id = seam_monitor_owner(env, object);
            /* A thread whose THREAD_END is due owes no exit: it may hold
             * its own Thread object's monitor past its end. */
            owner = owner_id != NULL ? threads_running_env(owner_id) : NULL;
        }
        pthread_mutex_lock(&lock);
        m = state_of(obj_id, true);
        if (m != NULL) {
            if (m->owes_exit == NULL && owner != NULL && owner != me && !ended_since(owner, ends_before)) {
                m->owes_exit = owner;
            }
            m->blocked++;
        }
        pthread_mutex_unlock(&lock);
    }
    if (events_enabled(JVMPI_EVENT_MONITOR_CONTENDED_ENTER)) {
        dispatch_monitor(env, JVMPI_EVENT_MONITOR_CONTENDED_ENTER, obj_id);
    }
}

void layer_monitor_contended_entered(JNIEnv *env, jobjectID obj_id)
{
    if (!layer_is_live() || obj_id == NULL) {
        return;
    }
    JNIEnv *left = NULL;
    if (exits_wanted()) {
        JNIEnv *me = whose_env_id(env);
        bool parked = false;
        pthread_mutex_lock(&lock);
        mon_state *m = state_of(obj_id, false);
        while (m != NULL && m->exit_in_flight) {
            if (!parked) {
                /* The ending thread's delivery may be what an open GC
                 * window waits for: this one runs no agent code meanwhile. */
                pthread_mutex_unlock(&lock);
                gate_park();
                parked = true;
                pthread_mutex_lock(&lock);
            } else {
                pthread_cond_wait(&exits_sent, &lock);
            }
            m = state_of(obj_id, false);
        }
        if (m != NULL) {
            left = m->owes_exit;
            m->owes_exit = NULL;
            exits_in_flight += left != NULL;
            if (m->blocked > 0) {
                m->blocked--;
            }
            if (m->blocked > 0 && me != NULL) {
                m->owes_exit = me; /* it will leave with those still queued */
            }
            drop_if_idle(m);
        }
        pthread_mutex_unlock(&lock);
        if (parked) {
            gate_unpark();
        }
    }
    if (left != NULL) {
        if (events_enabled(JVMPI_EVENT_MONITOR_CONTENDED_EXIT)) {
            dispatch_monitor_exit_as(left, obj_id);
        }
        pthread_mutex_lock(&lock);
        exits_in_flight--;
        pthread_cond_broadcast(&exits_sent);
        pthread_mutex_unlock(&lock);
    }
    if (events_enabled(JVMPI_EVENT_MONITOR_CONTENDED_ENTERED)) {
        dispatch_monitor(env, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, obj_id);
    }
}

void layer_monitor_wait(JNIEnv *env, jobjectID obj_id, jlong timeout_ms)
{
    if (!layer_is_live()) {
        return;
    }
    if (obj_id != NULL && exits_wanted()) {
        JNIEnv *me = whose_env_id(env);
        pthread_mutex_lock(&lock);
        mon_state *m = state_of(obj_id, false);
        if (m != NULL && me != NULL && m->owes_exit == me) {
            m->owes_exit = NULL;
            drop_if_idle(m);
        }
        pthread_mutex_unlock(&lock);
    }
    clock_gettime(CLOCK_MONOTONIC, &wait_began);
    if (events_enabled(JVMPI_EVENT_MONITOR_WAIT)) {
        dispatch_monitor_wait(env, JVMPI_EVENT_MONITOR_WAIT, obj_id, timeout_ms < 0 ? 0 : timeout_ms);
    }
}

void layer_monitor_waited(JNIEnv *env, jobjectID obj_id, bool timed_out)
{
    if (!layer_is_live()) {
        return;
    }
    if (obj_id != NULL && exits_wanted()) {
        JNIEnv *me = whose_env_id(env);
        pthread_mutex_lock(&lock);
        mon_state *m = state_of(obj_id, false);
        if (m != NULL && m->blocked > 0 && m->owes_exit == NULL && me != NULL) {
            m->owes_exit = me; /* owns it again, with threads queued */
        }
        pthread_mutex_unlock(&lock);
    }
    if (events_enabled(JVMPI_EVENT_MONITOR_WAITED)) {
        /* The spec: "the number of milliseconds the thread waited". */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        jlong ms = 0;
        if (wait_began.tv_sec != 0 || wait_began.tv_nsec != 0) {
            ms = (jlong)(now.tv_sec - wait_began.tv_sec) * 1000 + (now.tv_nsec - wait_began.tv_nsec) / 1000000;
        }
        dispatch_monitor_wait(env, JVMPI_EVENT_MONITOR_WAITED, obj_id, ms < 0 ? 0 : ms);
    }
    wait_began.tv_sec = 0;
    wait_began.tv_nsec = 0;
}

void monitors_thread_ending(JNIEnv *env, JNIEnv *env_id)
{
    jobjectID owed[16];
    int n;
    bool noted = false;
    do {
        n = 0;
        {
            pthread_mutex_lock(&lock);
            /* Exits another thread is sending for this one come first. */
            while (exits_in_flight > 0) {
                pthread_cond_wait(&exits_sent, &lock);
            }
            if (!noted) {
                recent_ends[ends_seen++ % RECENT_ENDS] = env_id;
                noted = true;
            }
            mon_state *m, *tmp;
            HASH_ITER(hh, table, m, tmp) {
                if (m->owes_exit == env_id && n < (int)(sizeof owed / sizeof owed[0])) {
                    owed[n++] = m->object;
                    m->owes_exit = NULL;
                    m->exit_in_flight = true;
                }
            }
            pthread_mutex_unlock(&lock);
        }
        /* A thread that ends has left every monitor: the exits it owes are
         * its own, sent now, before its THREAD_END. */
        for (int i = 0; i < n && events_enabled(JVMPI_EVENT_MONITOR_CONTENDED_EXIT); i++) {
            dispatch_monitor(env, JVMPI_EVENT_MONITOR_CONTENDED_EXIT, owed[i]);
        }
        if (n > 0) {
            pthread_mutex_lock(&lock);
            for (int i = 0; i < n; i++) {
                mon_state *m = state_of(owed[i], false);
                if (m != NULL) {
                    m->exit_in_flight = false;
                    drop_if_idle(m);
                }
            }
            pthread_cond_broadcast(&exits_sent);
            pthread_mutex_unlock(&lock);
        }
    } while (n == (int)(sizeof owed / sizeof owed[0]));
}

bool layer_sleep_events_wanted(void)
{
    return events_enabled(JVMPI_EVENT_MONITOR_WAIT) || events_enabled(JVMPI_EVENT_MONITOR_WAITED);
}

int monitors_tracked(void)
{
    pthread_mutex_lock(&lock);
    int n = (int)HASH_COUNT(table);
    pthread_mutex_unlock(&lock);
    return n;
}

void monitors_reset(void)
{
    mon_state *m, *tmp;
    pthread_mutex_lock(&lock);
    HASH_ITER(hh, table, m, tmp) {
        HASH_DEL(table, m);
        free(m);
    }
    exits_in_flight = 0;
    ends_seen = 0;
    memset(recent_ends, 0, sizeof recent_ends);
    pthread_mutex_unlock(&lock);
}
