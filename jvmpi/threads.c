#include "threads.h"

#include "tls.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uthash.h>

#include "cpuclock.h"
#include "events.h"
#include "log.h"

typedef struct {
    thread_rec rec;
    UT_hash_handle hh_env;
    UT_hash_handle hh_id;
    unsigned long seq;       /* start order, for the start-up replay */
} thread_entry;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stand_in_done = PTHREAD_COND_INITIALIZER;
static thread_entry *by_env;
static thread_entry *by_id;
static unsigned long next_seq;

/* The threads that ended last, the oldest overwritten first.  An agent
 * sampling its own list of threads races their ends: a call naming one of
 * their JNIEnv * is that race, not a bad argument.  Their Thread objects'
 * IDs are never reused: one seen again is the same thread, past its end. */
static struct {
    JNIEnv *env;
    jobjectID id;
} ended[THREADS_ENDED_KEPT];
static unsigned ended_next;

/* The calling thread's own record ("self"): valid from threads_add to
 * threads_end, and only the thread itself can end it, so no reference is
 * needed to read it.  Kept as the entry's rec, which threads.h reads inline. */
TLS_FAST thread_rec *threads_me;

_Static_assert(offsetof(thread_entry, rec) == 0, "a thread_entry starts with its rec");
static thread_entry *self_entry(void) { return (thread_entry *)threads_me; }
static void set_self(thread_entry *e) { threads_me = e != NULL ? &e->rec : NULL; }

/* While a virtual thread is mounted on this (carrier) thread, self is the
 * virtual thread's record and carrier the carrier's own (NULL if the layer
 * had not looked it up yet). */
static TLS_FAST thread_entry *carrier;
static TLS_FAST bool mounted;
/* The carrier's CPU time when the virtual thread in self was mounted, -1
 * unknown; kept once an agent asked a virtual thread for its CPU time. */
static TLS_FAST jlong mount_cpu = -1;
static _Atomic bool cpu_wanted;

static jlong carrier_cpu_now(void) { return (jlong)cpuclock_thread_ns(); }

/* The mounted virtual thread vt (NULL once it ended) leaves this carrier:
 * its time here is its own. */
static void leave_carrier(thread_entry *vt)
{
    if (mount_cpu >= 0 && vt != NULL) {
        atomic_fetch_add(&vt->rec.cpu_ns, carrier_cpu_now() - mount_cpu);
    }
    mount_cpu = -1;
}

void threads_info_discard(seam_thread_info *i)
{
    if (i->handle != NULL) {
        seam_thread_handle_release(i->handle);
    }
    free(i->name);
    free(i->group_name);
    free(i->parent_name);
}

static void entry_free(thread_entry *e)
{
    threads_info_discard(&e->rec.info);
    free(e);
}

/* e is out of the table: its storage words are found no more. */
static void entry_unlisted(thread_entry *e)
{
    e->rec.ended = true;
    tlswords_drop(e->rec.tls);
    e->rec.tls = NULL;
}

thread_rec *threads_add(seam_thread_info *info, bool internal)
{
    thread_entry *e = calloc(1, sizeof *e);
    if (e == NULL) {
        LOG_ERROR("out of memory recording thread %s", info->name ? info->name : "?");
        return NULL;
    }
    if (info->env == NULL) {
        /* The VM never told us this thread's JNIEnv *: its record's address
         * is a handle that is unique and that every JVMPI function accepts. */
        info->env = (JNIEnv *)(void *)&e->rec;
    }
    e->rec.info = *info;
    e->rec.internal = internal;
    e->rec.refs = 2; /* the table's and the caller's */
    thread_entry *old = NULL;
    {
        pthread_mutex_lock(&table_lock);
        HASH_FIND(hh_env, by_env, &info->env, sizeof info->env, old);
        if (old != NULL && old->rec.info.id == info->id) {
            /* The same thread reported twice (HotSpot posts ThreadStart for
             * the main thread after VMInit, which already named it). */
            old->rec.refs++;
            pthread_mutex_unlock(&table_lock);
            threads_info_discard(info);
            free(e);
            if (seam_current_env() == old->rec.info.env) {
                set_self(old);
            }
            return &old->rec;
        }
        if (old != NULL) {
            /* A JNIEnv reused after a thread we never saw end: retire the old one. */
            HASH_DELETE(hh_env, by_env, old);
            HASH_DELETE(hh_id, by_id, old);
            entry_unlisted(old);
            if (--old->rec.refs > 0) {
                old = NULL;
            }
        }
        e->rec.tls = tlswords_claim(info->env);
        e->seq = next_seq++;
        HASH_ADD(hh_env, by_env, rec.info.env, sizeof e->rec.info.env, e);
        HASH_ADD(hh_id, by_id, rec.info.id, sizeof e->rec.info.id, e);
        pthread_mutex_unlock(&table_lock);
    }
    if (old != NULL) {
        entry_free(old);
    }
    if (seam_current_env() == info->env) {
        set_self(e);
    }
    return &e->rec;
}

void threads_end(JNIEnv *env)
{
    thread_entry *e = NULL;
    bool free_now = false;
    {
        pthread_mutex_lock(&table_lock);
        HASH_FIND(hh_env, by_env, &env, sizeof env, e);
        if (e != NULL) {
            HASH_DELETE(hh_env, by_env, e);
            HASH_DELETE(hh_id, by_id, e);
            entry_unlisted(e);
            free_now = --e->rec.refs == 0;
            ended[ended_next % THREADS_ENDED_KEPT].env = env;
            ended[ended_next++ % THREADS_ENDED_KEPT].id = e->rec.info.id;
        }
        pthread_mutex_unlock(&table_lock);
    }
    if (self_entry() == e) {
        set_self(NULL);
    }
    if (free_now) {
        entry_free(e);
    }
}

void threads_mount(thread_rec *vt)
{
    if (!mounted) {
        carrier = self_entry();
        mounted = true;
    }
    if (self_entry() != (thread_entry *)vt) {
        if (self_entry() != carrier) {
            leave_carrier(self_entry());
        }
        set_self((thread_entry *)vt);
        mount_cpu = atomic_load_explicit(&cpu_wanted, memory_order_relaxed) ? carrier_cpu_now() : -1;
    }
}

void threads_unmount(void)
{
    if (mounted) {
        leave_carrier(self_entry());
        set_self(carrier);
        carrier = NULL;
        mounted = false;
    }
}

jlong threads_current_cpu_time(void)
{
    jlong now = carrier_cpu_now();
    thread_entry *vt = self_entry();
    if (!mounted || vt == NULL || vt == carrier) {
        return now;
    }
    if (mount_cpu < 0) {
        /* The first time since its mount that it is asked: counted from now. */
        atomic_store(&cpu_wanted, true);
        mount_cpu = now;
    }
    return atomic_load(&vt->rec.cpu_ns) + (now - mount_cpu);
}

/* Whether one of the threads that ended last had env, or id (the one not NULL). */
static bool ended_lately(JNIEnv *env, jobjectID id)
{
    bool found = false;
    if (env == NULL && id == NULL) {
        return false;
    }
    /* Only calls that name no live thread get here: a scan is cheap enough. */
    pthread_mutex_lock(&table_lock);
    for (unsigned i = 0; i < THREADS_ENDED_KEPT && !found; i++) {
        found = env != NULL ? ended[i].env == env : ended[i].id == id;
    }
    pthread_mutex_unlock(&table_lock);
    return found;
}

bool threads_recently_ended(JNIEnv *env) { return ended_lately(env, NULL); }
bool threads_id_recently_ended(jobjectID id) { return ended_lately(NULL, id); }

static thread_rec *acquire(thread_entry *e)
{
    if (e == NULL) {
        return NULL;
    }
    e->rec.refs++;
    return &e->rec;
}

thread_rec *threads_acquire_by_env(JNIEnv *env)
{
    thread_entry *e = NULL;
    if (env == NULL) {
        return NULL;
    }
    pthread_mutex_lock(&table_lock);
    HASH_FIND(hh_env, by_env, &env, sizeof env, e);
    thread_rec *r = acquire(e);
    pthread_mutex_unlock(&table_lock);
    return r;
}

thread_rec *threads_acquire_by_id(jobjectID id)
{
    thread_entry *e = NULL;
    if (id == NULL) {
        return NULL;
    }
    pthread_mutex_lock(&table_lock);
    HASH_FIND(hh_id, by_id, &id, sizeof id, e);
    thread_rec *r = acquire(e);
    pthread_mutex_unlock(&table_lock);
    return r;
}

JNIEnv *threads_running_env(jobjectID id)
{
    JNIEnv *env = NULL;
    thread_entry *e = NULL;
    if (id == NULL) {
        return NULL;
    }
    pthread_mutex_lock(&table_lock);
    HASH_FIND(hh_id, by_id, &id, sizeof id, e);
    if (e != NULL && !e->rec.ended && !e->rec.ending && !e->rec.internal) {
        env = e->rec.info.env;
    }
    pthread_mutex_unlock(&table_lock);
    return env;
}

void threads_release(thread_rec *t)
{
    if (t == NULL) {
        return;
    }
    bool free_now;
    {
        pthread_mutex_lock(&table_lock);
        free_now = --t->refs == 0;
        pthread_mutex_unlock(&table_lock);
    }
    if (free_now) {
        entry_free((thread_entry *)t);
    }
}

bool threads_claim_announce(thread_rec *t) { return once_claim(&t->announced); }

/* The calling thread's own words need no search; any other thread's are
 * found without the table lock, which a signal handler must not take. */
static tlswords *own_words(JNIEnv *env)
{
    thread_entry *me = self_entry();
    return me != NULL && me->rec.info.env == env ? me->rec.tls : NULL;
}

bool threads_tls_get(JNIEnv *env, int agent, void **value)
{
    tlswords *w = own_words(env);
    if (w != NULL && agent >= 0 && agent < AGENTS_MAX) {
        *value = atomic_load_explicit(&w->word[agent], memory_order_relaxed);
        return true;
    }
    return tlswords_get(env, agent, value);
}

bool threads_tls_set(JNIEnv *env, int agent, void *value)
{
    tlswords *w = own_words(env);
    if (w != NULL && agent >= 0 && agent < AGENTS_MAX) {
        atomic_store_explicit(&w->word[agent], value, memory_order_relaxed);
        return true;
    }
    return tlswords_set(env, agent, value);
}

thread_rec *threads_self_lookup(JNIEnv *env)
{
    thread_entry *me = self_entry();
    if (me != NULL) {
        return &me->rec;
    }
    if (env == NULL) {
        return NULL;
    }
    thread_entry *e = NULL;
    {
        pthread_mutex_lock(&table_lock);
        HASH_FIND(hh_env, by_env, &env, sizeof env, e);
        pthread_mutex_unlock(&table_lock);
    }
    if (e == NULL) {
        jobjectID id = seam_current_thread_id();
        if (id == NULL) {
            return NULL;
        }
        pthread_mutex_lock(&table_lock);
        HASH_FIND(hh_id, by_id, &id, sizeof id, e);
        pthread_mutex_unlock(&table_lock);
    }
    if (e != NULL) {
        set_self(e); /* the record lives until this very thread ends */
    }
    return e != NULL ? &e->rec : NULL;
}

thread_rec *threads_stand_in(void)
{
    thread_entry *best = NULL;
    bool best_told = false;
    pthread_mutex_lock(&table_lock);
    for (thread_entry *e = by_env; e != NULL; e = e->hh_env.next) {
        if (e->rec.internal || e->rec.ended || e->rec.ending) {
            continue;
        }
        /* A stale answer picks another thread, never a wrong one. */
        bool told = once_was_sent(&e->rec.announced, atomic_load(&events_on[JVMPI_EVENT_THREAD_START]));
        if (best == NULL || (told && !best_told) || (told == best_told && e->seq < best->seq)) {
            best = e;
            best_told = told;
        }
    }
    thread_rec *r = acquire(best);
    if (r != NULL) {
        r->standing_in++;
    }
    pthread_mutex_unlock(&table_lock);
    return r;
}

void threads_stand_in_done(thread_rec *t)
{
    if (t == NULL) {
        return;
    }
    pthread_mutex_lock(&table_lock);
    t->standing_in--;
    pthread_cond_broadcast(&stand_in_done);
    pthread_mutex_unlock(&table_lock);
    threads_release(t);
}

void threads_mark_ending(thread_rec *t)
{
    pthread_mutex_lock(&table_lock);
    t->ending = true;
    while (t->standing_in > 0) {
        pthread_cond_wait(&stand_in_done, &table_lock);
    }
    pthread_mutex_unlock(&table_lock);
}

jint threads_status(const thread_rec *t, jint vm_status, jint raw_status)
{
    const jint bits = JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED;
    jint flags = vm_status > 0 ? vm_status & bits : 0;
    jint status;
    if (raw_status != 0) {
        /* In the agent's raw monitor the thread runs native code as far as
         * the VM knows; JVMPI reported it as waiting. */
        status = raw_status;
    } else if (vm_status < 0) {
        /* Not started yet, or exiting: JDK 5.0 said RUNNABLE (never -1). */
        status = JVMPI_THREAD_RUNNABLE;
    } else {
        status = vm_status & ~bits;
    }
    if (atomic_load(&t->suspended)) {
        /* HotSpot 5.0: the state the thread was in when suspended, with the
         * SUSPENDED bit added (the VM's own state moves on meanwhile: a
         * thread suspended in native code keeps running until it returns). */
        jint at_suspension = atomic_load(&t->suspended_status);
        if (at_suspension > 0) {
            status = at_suspension;
        }
        flags |= JVMPI_THREAD_SUSPENDED;
    }
    return status | flags;
}

static int by_seq(const void *a, const void *b)
{
    const thread_entry *x = *(thread_entry *const *)a, *y = *(thread_entry *const *)b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static thread_rec **snapshot(int *count, bool hold_ends)
{
    thread_entry **list = NULL;
    int n = 0;
    {
        pthread_mutex_lock(&table_lock);
        unsigned total = HASH_CNT(hh_env, by_env);
        list = calloc(total + 1, sizeof *list);
        if (list != NULL) {
            for (thread_entry *e = by_env; e != NULL; e = e->hh_env.next) {
                if (!e->rec.internal && !(hold_ends && e->rec.ending)) {
                    e->rec.refs++;
                    if (hold_ends) {
                        e->rec.standing_in++;
                    }
                    list[n++] = e;
                }
            }
        }
        pthread_mutex_unlock(&table_lock);
    }
    if (list != NULL) {
        qsort(list, (size_t)n, sizeof *list, by_seq);
    }
    *count = n;
    return (thread_rec **)list;
}

thread_rec **threads_snapshot(int *count) { return snapshot(count, false); }

thread_rec **threads_snapshot_held(int *count) { return snapshot(count, true); }

void threads_reset(void)
{
    thread_entry *e, *tmp, *dead = NULL;
    {
        pthread_mutex_lock(&table_lock);
        HASH_ITER(hh_env, by_env, e, tmp) {
            HASH_DELETE(hh_env, by_env, e);
            HASH_DELETE(hh_id, by_id, e);
            entry_unlisted(e);
            if (--e->rec.refs == 0) {
                e->hh_env.next = dead;
                dead = e;
            }
        }
        memset(ended, 0, sizeof ended);
        ended_next = 0;
        pthread_mutex_unlock(&table_lock);
    }
    while (dead != NULL) {
        e = dead;
        dead = (thread_entry *)e->hh_env.next;
        entry_free(e);
    }
    tlswords_reset();
    set_self(NULL);
}
