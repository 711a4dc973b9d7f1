/*
 * e_overlap - an allocation tracer built for speed, with no lock on its hot
 * path: each OS thread records the IDs it allocates in a table of its own
 * (OBJECT_ALLOC touches only the calling thread's table), and OBJECT_FREE
 * removes an ID from whichever table holds it, also without a lock.
 *
 * That design stands on two promises of the JVMPI specification: OBJECT_ALLOC
 * "is issued with GC disabled", and OBJECT_FREE "is issued in the thread
 * suspended mode" and "always sent between a pair of JVMPI_EVENT_GC_START and
 * JVMPI_EVENT_GC_FINISH events".  So a free never runs while an allocation
 * handler runs, and no table changes under a free.  The agent checks that,
 * with an atomic count of the OBJECT_ALLOC handlers running now:
 *  - OBJECT_FREE and GC_START: that count must be 0;
 *  - OBJECT_ALLOC: no GC window may be open when its handler starts
 *    (each side writes its own flag, then reads the other's, so one of two
 *    overlapping handlers always sees the other);
 *  - OBJECT_FREE comes inside a window, for an ID an OBJECT_ALLOC gave.
 * An overlap is fatal: a tracer built this way would corrupt its tables
 * (with keepgoing=1 it is counted, and the tables are locked after all so
 * that the run can go on).
 *
 * Options: out=FILE, keepgoing=1.
 */
#include "e_common.h"

/* One OS thread's live IDs: an open-addressing set (tombstones on free). */
typedef struct tbl {
    const void **ids;
    size_t cap, used, live;
    struct tbl *next;
} tbl;

static tbl *tables;            /* every thread's table, pushed atomically */
static pthread_key_t tbl_key;
static long in_alloc;          /* OBJECT_ALLOC handlers running now (atomic) */
static int window;             /* inside GC_START .. GC_FINISH (atomic) */
static long n_allocs, n_frees, n_windows;
/* keepgoing=1 only: the tables get a lock, so that the run can go on past
 * overlaps without corrupting them. */
static pthread_mutex_t repair = PTHREAD_MUTEX_INITIALIZER;

static void tables_lock(void)
{
    if (e_keepgoing)
        pthread_mutex_lock(&repair);
}

static void tables_unlock(void)
{
    if (e_keepgoing)
        pthread_mutex_unlock(&repair);
}

static size_t slot_of(const tbl *t, const void *id)
{
    return e_hash(id) & (t->cap - 1);
}

static void tbl_add(tbl *t, const void *id)
{
    if ((t->used + 1) * 2 > t->cap) {
        size_t ncap = t->cap ? t->cap : 4096;
        while (ncap < 4 * (t->live + 1))
            ncap *= 2;
        const void **n = calloc(ncap, sizeof *n);
        if (!n)
            abort();
        tbl old = *t;
        t->ids = n;
        t->cap = ncap;
        t->used = t->live;
        for (size_t i = 0; i < old.cap; i++)
            if (old.ids[i] && old.ids[i] != E_TOMB) {
                size_t j = slot_of(t, old.ids[i]);
                while (t->ids[j])
                    j = (j + 1) & (t->cap - 1);
                t->ids[j] = old.ids[i];
            }
        free(old.ids);
    }
    size_t j = slot_of(t, id);
    while (t->ids[j] && t->ids[j] != E_TOMB)
        j = (j + 1) & (t->cap - 1);
    if (!t->ids[j])
        t->used++;
    t->ids[j] = id;
    t->live++;
}

static int tbl_remove(tbl *t, const void *id)
{
    if (!t->cap)
        return 0;
    for (size_t j = slot_of(t, id);; j = (j + 1) & (t->cap - 1)) {
        if (t->ids[j] == id) {
            t->ids[j] = E_TOMB;
            t->live--;
            return 1;
        }
        if (!t->ids[j])
            return 0;
    }
}

static tbl *my_table(void)
{
    tbl *t = pthread_getspecific(tbl_key);
    if (t)
        return t;
    t = calloc(1, sizeof *t);
    if (!t)
        abort();
    t->next = __atomic_load_n(&tables, __ATOMIC_ACQUIRE);
    while (!__atomic_compare_exchange_n(&tables, &t->next, t, 0, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
        ;
    pthread_setspecific(tbl_key, t);
    return t;
}

static void on_alloc(const JVMPI_Event *ev)
{
    __atomic_add_fetch(&in_alloc, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&window, __ATOMIC_SEQ_CST))
        E_FAIL("OBJECT_ALLOC of %p (env %p) began inside a GC_START .. GC_FINISH window: OBJECT_ALLOC is issued "
               "with GC disabled",
               (void *)ev->u.obj_alloc.obj_id, (void *)ev->env_id);
    if (!ev->u.obj_alloc.obj_id) {
        E_FAIL("OBJECT_ALLOC with obj_id NULL");
    } else {
        tables_lock();
        tbl_add(my_table(), ev->u.obj_alloc.obj_id);
        tables_unlock();
        __atomic_add_fetch(&n_allocs, 1, __ATOMIC_RELAXED);
    }
    __atomic_sub_fetch(&in_alloc, 1, __ATOMIC_SEQ_CST);
}

static void on_free(const JVMPI_Event *ev)
{
    long busy = __atomic_load_n(&in_alloc, __ATOMIC_SEQ_CST);
    if (busy)
        E_FAIL("OBJECT_FREE of %p (env %p) while %ld OBJECT_ALLOC handlers are running: it is issued in thread "
               "suspended mode, they with GC disabled",
               (void *)ev->u.obj_free.obj_id, (void *)ev->env_id, busy);
    if (!__atomic_load_n(&window, __ATOMIC_SEQ_CST))
        E_FAIL("OBJECT_FREE of %p outside a GC_START .. GC_FINISH window", (void *)ev->u.obj_free.obj_id);
    int found = 0;
    tables_lock();
    for (tbl *t = __atomic_load_n(&tables, __ATOMIC_ACQUIRE); t && !found; t = t->next)
        found = tbl_remove(t, ev->u.obj_free.obj_id);
    tables_unlock();
    n_frees++;
    if (!found)
        E_FAIL("OBJECT_FREE of %p, an ID no OBJECT_ALLOC gave (or freed already)", (void *)ev->u.obj_free.obj_id);
    else
        e_pass();
}

static void JNICALL notify(JVMPI_Event *ev)
{
    if (!e_accept(ev))
        return;
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_alloc(ev);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        on_free(ev);
        break;
    case JVMPI_EVENT_GC_START: {
        if (__atomic_exchange_n(&window, 1, __ATOMIC_SEQ_CST))
            E_FAIL("GC_START (env %p) inside an open GC window", (void *)ev->env_id);
        long busy = __atomic_load_n(&in_alloc, __ATOMIC_SEQ_CST);
        if (busy)
            E_FAIL("GC_START (env %p) while %ld OBJECT_ALLOC handlers are running (issued with GC disabled)",
                   (void *)ev->env_id, busy);
        else
            e_pass();
        break;
    }
    case JVMPI_EVENT_GC_FINISH:
        if (!__atomic_exchange_n(&window, 0, __ATOMIC_SEQ_CST))
            E_FAIL("GC_FINISH (env %p) without a GC_START", (void *)ev->env_id);
        n_windows++;
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN: {
        size_t live = 0, threads = 0;
        tables_lock();
        for (tbl *t = __atomic_load_n(&tables, __ATOMIC_ACQUIRE); t; t = t->next, threads++)
            live += t->live;
        tables_unlock();
        e_say("JVM_SHUT_DOWN: %ld allocs, %ld frees, %ld windows, %zu live in %zu thread tables",
              __atomic_load_n(&n_allocs, __ATOMIC_RELAXED), n_frees, n_windows, live, threads);
        e_summary();
        __atomic_store_n(&e_shut_down, 1, __ATOMIC_RELEASE);
        break;
    }
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (e_setup(vm, options, "e_overlap") != JNI_OK)
        return JNI_ERR;
    if (pthread_key_create(&tbl_key, NULL) != 0)
        return JNI_ERR;
    e_pi->NotifyEvent = notify;
    e_enable(JVMPI_EVENT_OBJECT_ALLOC);
    e_enable(JVMPI_EVENT_OBJECT_FREE);
    e_enable(JVMPI_EVENT_GC_START);
    e_enable(JVMPI_EVENT_GC_FINISH);
    e_enable(JVMPI_EVENT_JVM_SHUT_DOWN);
    return JNI_OK;
}
