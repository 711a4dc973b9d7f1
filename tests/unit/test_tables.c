/*
 * test_tables.c - the layer's records: object IDs (jvmpi/ids.c), the thread
 * table (jvmpi/threads.c) and the class table (jvmpi/classes.c).
 *
 * Records are reference counted so that a thread can end, or a class be
 * unloaded, while another thread still holds its record.  Those cases read
 * the record after the table dropped it: under -DJVMPI_SANITIZE=ON a
 * use-after-free there is an ASan failure, without it the test still checks
 * the values and when the backend handle is released.
 *
 * Helper threads never call ck_assert (a failure there is not reliably
 * reported); they record what they saw and the main thread asserts.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "classes.h"
#include "fake_backend.h"
#include "layer.h"
#include "threads.h"

/* Distinct fake JNIEnv * values: addresses nobody dereferences. */
static char env_tokens[64];
#define ENV(i) ((JNIEnv *)(void *)&env_tokens[(i)])
#define ID(i) seam_id_from_tag((int64_t)(i) * 8 + 0x10000)
static char handle_tokens[64];
#define HANDLE(i) ((void *)&handle_tokens[(i)])

static void setup(void)
{
    layer_reset();
    fake_reset();
    /* claims are made for one agent at a time */
    agents_target_begin(0);
}

static void teardown(void)
{
    threads_reset();
    classes_reset();
}

static seam_thread_info make_info(JNIEnv *env, jobjectID id, void *handle, const char *name)
{
    seam_thread_info i;
    memset(&i, 0, sizeof i);
    i.env = env;
    i.id = id;
    i.handle = handle;
    i.name = strdup(name);
    i.group_name = strdup("group");
    i.parent_name = strdup("parent");
    return i;
}

/* ------------------------------------------------------------------------ */
/* ids                                                                       */
/* ------------------------------------------------------------------------ */

START_TEST(test_ids_increasing)
{
    int64_t prev = 0;
    for (int i = 0; i < 1000; i++) {
        int64_t id = ids_next_object(24, 0);
        ck_assert_msg(id != 0, "ids_next_* returned 0");
        ck_assert_msg(id > prev, "ids_next_* %lld after %lld", (long long)id, (long long)prev);
        /* ids.c: IDs look like aligned pointers so pointer-hashing agents spread them */
        ck_assert_msg(id % 8 == 0, "id %lld is not 8-aligned", (long long)id);
        ck_assert_ptr_nonnull(seam_id_from_tag(id));
        ck_assert_int_eq(seam_tag_from_id(seam_id_from_tag(id)), id);
        prev = id;
    }
}
END_TEST

/* The tag says what it names: a class (and its array type) or an object
 * (and its size), which is what ObjectFree and heap callbacks give back. */
START_TEST(test_ids_tag_layout)
{
    ids_reset();
    jlong objects = -1, bytes = -1;
    ids_live(&objects, &bytes);
    ck_assert_int_eq(objects, 0);
    ck_assert_int_eq(bytes, 0);

    int64_t plain = ids_next_class(0);
    int64_t ints = ids_next_class(JVMPI_INT);
    int64_t refs = ids_next_class(JVMPI_CLASS);
    ck_assert(ids_is_class(plain) && ids_is_class(ints) && ids_is_class(refs));
    ck_assert_int_eq(ids_array_type(plain), JVMPI_NORMAL_OBJECT);
    ck_assert_int_eq(ids_array_type(ints), JVMPI_INT);
    ck_assert_int_eq(ids_array_type(refs), JVMPI_CLASS);
    ck_assert_int_eq(ids_object_size(ints), 0);

    int64_t small = ids_next_object(24, 0);
    int64_t odd = ids_next_object(13, 0); /* rounded up to the 8 bytes HotSpot aligns to */
    int64_t big = ids_next_object((jlong)300 << 20, 0);
    int64_t huge = ids_next_object((jlong)5 << 30, 0);
    ck_assert(!ids_is_class(small) && !ids_is_class(big));
    ck_assert_int_eq(ids_array_type(small), 0);
    ck_assert_int_eq(ids_object_size(small), 24);
    ck_assert_int_eq(ids_object_size(odd), 16);
    ck_assert_int_eq(ids_object_size(big), (jlong)300 << 20);
    ck_assert_int_eq(ids_object_size(huge), (jlong)5 << 30);
    ck_assert(small % 8 == 0 && big % 8 == 0 && plain % 8 == 0);

    ids_live(&objects, &bytes);
    ck_assert_int_eq(objects, 4);
    ck_assert_int_eq(bytes, 24 + 16 + ((jlong)300 << 20) + ((jlong)5 << 30));

    /* Pointer-hashing agents drop the low 3 bits and take a modulus: IDs of
     * same-sized objects must still land in different buckets. */
    int64_t a = ids_next_object(24, 0), b = ids_next_object(24, 0);
    ck_assert_int_ne((a >> 3) % 64, (b >> 3) % 64);
    ck_assert_int_gt(a, 0);
    ck_assert_int_gt(ids_next_object((jlong)60 << 20, 0), 0); /* tags stay positive */
    ids_forget(a);
    ids_forget(b);
    ids_live(&objects, &bytes);
    ck_assert_int_eq(objects, 5);
    ids_forget(big);
    ids_forget(plain); /* classes are never counted, so never uncounted */
    ids_forget(small);
    ids_live(&objects, &bytes);
    ck_assert_int_eq(objects, 3);
    ck_assert_int_eq(bytes, 16 + ((jlong)5 << 30) + ((jlong)60 << 20));
    ck_assert_int_eq(ids_object_size(big), 0); /* the big entry went with it */
    ids_reset();
}
END_TEST

#define ID_THREADS 4
#define IDS_PER_THREAD 10000

typedef struct {
    int64_t ids[IDS_PER_THREAD];
    bool increasing, nonzero;
} id_batch;

static pthread_barrier_t id_barrier;

static void *id_worker(void *arg)
{
    id_batch *b = arg;
    b->increasing = b->nonzero = true;
    pthread_barrier_wait(&id_barrier);
    for (int i = 0; i < IDS_PER_THREAD; i++) {
        b->ids[i] = ids_next_object(24, 0);
        if (b->ids[i] == 0) {
            b->nonzero = false;
        }
        if (i > 0 && b->ids[i] <= b->ids[i - 1]) {
            b->increasing = false;
        }
    }
    return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

START_TEST(test_ids_threads)
{
    static id_batch batch[ID_THREADS];
    pthread_t t[ID_THREADS];
    pthread_barrier_init(&id_barrier, NULL, ID_THREADS);
    for (int i = 0; i < ID_THREADS; i++) {
        ck_assert_int_eq(pthread_create(&t[i], NULL, id_worker, &batch[i]), 0);
    }
    for (int i = 0; i < ID_THREADS; i++) {
        pthread_join(t[i], NULL);
    }
    pthread_barrier_destroy(&id_barrier);
    int64_t *all = malloc(sizeof(int64_t) * ID_THREADS * IDS_PER_THREAD);
    ck_assert_ptr_nonnull(all);
    for (int i = 0; i < ID_THREADS; i++) {
        ck_assert_msg(batch[i].nonzero, "thread %d got a 0 ID", i);
        ck_assert_msg(batch[i].increasing, "thread %d got IDs out of order", i);
        memcpy(all + i * IDS_PER_THREAD, batch[i].ids, sizeof batch[i].ids);
    }
    qsort(all, ID_THREADS * IDS_PER_THREAD, sizeof *all, cmp_i64);
    for (int i = 1; i < ID_THREADS * IDS_PER_THREAD; i++) {
        ck_assert_msg(all[i] != all[i - 1], "ID %lld handed out twice", (long long)all[i]);
    }
    free(all);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* threads                                                                   */
/* ------------------------------------------------------------------------ */

START_TEST(test_thread_add_acquire_end)
{
    seam_thread_info i = make_info(ENV(1), ID(1), HANDLE(1), "worker-1");
    thread_rec *t = threads_add(&i, false);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_eq(t->info.env, ENV(1));
    ck_assert_ptr_eq(t->info.id, ID(1));
    ck_assert_ptr_eq(t->info.handle, HANDLE(1));
    ck_assert_str_eq(t->info.name, "worker-1");
    ck_assert_str_eq(t->info.group_name, "group");
    ck_assert_str_eq(t->info.parent_name, "parent");
    ck_assert(!t->internal);
    ck_assert(!t->ended);
    threads_release(t);

    thread_rec *a = threads_acquire_by_env(ENV(1));
    thread_rec *b = threads_acquire_by_id(ID(1));
    ck_assert_ptr_eq(a, t);
    ck_assert_ptr_eq(b, t);
    threads_release(a);
    threads_release(b);
    ck_assert_ptr_null(threads_acquire_by_env(ENV(2)));
    ck_assert_ptr_null(threads_acquire_by_id(ID(2)));
    ck_assert_ptr_null(threads_acquire_by_env(NULL));
    ck_assert_ptr_null(threads_acquire_by_id(NULL));
    threads_release(NULL);

    ck_assert_int_eq(fake.handle_releases, 0);
    threads_end(ENV(1));
    ck_assert_int_eq(fake.handle_releases, 1);
    ck_assert_ptr_eq(fake.last_released_handle, HANDLE(1));
    ck_assert_ptr_null(threads_acquire_by_env(ENV(1)));
    ck_assert_ptr_null(threads_acquire_by_id(ID(1)));
    /* ending twice, or an unknown env, is harmless */
    threads_end(ENV(1));
    threads_end(ENV(9));
    ck_assert_int_eq(fake.handle_releases, 1);
}
END_TEST

/* HotSpot reports the main thread at VMInit and again in ThreadStart. */
START_TEST(test_thread_same_twice)
{
    seam_thread_info i1 = make_info(ENV(1), ID(1), HANDLE(1), "main");
    seam_thread_info i2 = make_info(ENV(1), ID(1), HANDLE(2), "main (again)");
    thread_rec *t1 = threads_add(&i1, false);
    thread_rec *t2 = threads_add(&i2, false);
    ck_assert_ptr_eq(t1, t2);
    ck_assert_str_eq(t2->info.name, "main");
    ck_assert_ptr_eq(t2->info.handle, HANDLE(1));
    /* the duplicate's handle is given back at once, the kept one is not */
    ck_assert_int_eq(fake.handle_releases, 1);
    ck_assert_ptr_eq(fake.last_released_handle, HANDLE(2));
    threads_release(t1);
    threads_release(t2);

    int n = -1;
    thread_rec **snap = threads_snapshot(&n);
    ck_assert_int_eq(n, 1);
    ck_assert_ptr_eq(snap[0], t1);
    threads_release(snap[0]);
    free(snap);

    /* one ThreadEnd ends it */
    threads_end(ENV(1));
    ck_assert_ptr_null(threads_acquire_by_env(ENV(1)));
    ck_assert_ptr_null(threads_acquire_by_id(ID(1)));
    ck_assert_int_eq(fake.handle_releases, 2);
    ck_assert_ptr_eq(fake.last_released_handle, HANDLE(1));
}
END_TEST

START_TEST(test_thread_env_reused)
{
    seam_thread_info i1 = make_info(ENV(1), ID(1), HANDLE(1), "old");
    thread_rec *old = threads_add(&i1, false);
    /* keep our reference: the old record must stay readable after replacement */
    seam_thread_info i2 = make_info(ENV(1), ID(2), HANDLE(2), "new");
    thread_rec *nw = threads_add(&i2, false);
    ck_assert_ptr_ne(old, nw);
    ck_assert(old->ended);
    ck_assert_str_eq(old->info.name, "old");
    ck_assert_ptr_null(threads_acquire_by_id(ID(1)));
    thread_rec *a = threads_acquire_by_env(ENV(1));
    ck_assert_ptr_eq(a, nw);
    threads_release(a);
    a = threads_acquire_by_id(ID(2));
    ck_assert_ptr_eq(a, nw);
    threads_release(a);
    ck_assert_int_eq(fake.handle_releases, 0);
    threads_release(old);
    ck_assert_int_eq(fake.handle_releases, 1);
    ck_assert_ptr_eq(fake.last_released_handle, HANDLE(1));
    threads_release(nw);

    int n = -1;
    thread_rec **snap = threads_snapshot(&n);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(snap[0]->info.name, "new");
    threads_release(snap[0]);
    free(snap);
}
END_TEST

/* A sampler's list of threads outlives their ends: the table remembers the
 * JNIEnv * of the last THREADS_ENDED_KEPT threads to end, and a new thread
 * given a reused one is live again. */
START_TEST(test_thread_recently_ended)
{
    static char many[THREADS_ENDED_KEPT];
#define MANY(i) ((JNIEnv *)(void *)&many[(i)])
    ck_assert(!threads_recently_ended(NULL));
    seam_thread_info i1 = make_info(ENV(1), ID(1), HANDLE(1), "brief");
    threads_release(threads_add(&i1, false));
    ck_assert(!threads_recently_ended(ENV(1)));
    threads_end(ENV(1));
    ck_assert(threads_recently_ended(ENV(1)));
    ck_assert(!threads_recently_ended(ENV(2))); /* never a thread */

    /* the VM gives the JNIEnv to a new thread: that one answers */
    seam_thread_info i2 = make_info(ENV(1), ID(2), HANDLE(2), "reuser");
    threads_release(threads_add(&i2, false));
    thread_rec *t = threads_acquire_by_env(ENV(1));
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_eq(t->info.id, ID(2));
    threads_release(t);
    threads_end(ENV(1));
    ck_assert(threads_recently_ended(ENV(1)));

    /* bounded: as many later ends push both of its ends out */
    for (int k = 0; k < THREADS_ENDED_KEPT; k++) {
        seam_thread_info i = make_info(MANY(k), ID(100 + k), NULL, "churn");
        threads_release(threads_add(&i, false));
        threads_end(MANY(k));
    }
    ck_assert(!threads_recently_ended(ENV(1)));
    ck_assert(threads_recently_ended(MANY(0)));
    ck_assert(threads_recently_ended(MANY(THREADS_ENDED_KEPT - 1)));

    /* VM death forgets them */
    threads_reset();
    ck_assert(!threads_recently_ended(MANY(0)));
#undef MANY
}
END_TEST

#define CLAIMERS 8

static pthread_barrier_t claim_barrier;
static atomic_int claims_won;

static void *claimer(void *arg)
{
    thread_rec *t = arg;
    agents_target_begin(0);
    pthread_barrier_wait(&claim_barrier);
    if (threads_claim_announce(t)) {
        atomic_fetch_add(&claims_won, 1);
        /* the losers wait until the winner has sent it */
        once_sent(&t->announced);
    }
    return NULL;
}

START_TEST(test_thread_claim_once)
{
    seam_thread_info i1 = make_info(ENV(1), ID(1), HANDLE(1), "a");
    thread_rec *t = threads_add(&i1, false);
    ck_assert(threads_claim_announce(t));
    ck_assert(!threads_claim_announce(t));
    ck_assert(!threads_claim_announce(t));
    threads_release(t);

    /* racing claimers: exactly one wins */
    for (int round = 0; round < 50; round++) {
        seam_thread_info i = make_info(ENV(2 + round), ID(100 + round), NULL, "racer");
        thread_rec *r = threads_add(&i, false);
        pthread_t th[CLAIMERS];
        atomic_store(&claims_won, 0);
        pthread_barrier_init(&claim_barrier, NULL, CLAIMERS);
        for (int k = 0; k < CLAIMERS; k++) {
            ck_assert_int_eq(pthread_create(&th[k], NULL, claimer, r), 0);
        }
        for (int k = 0; k < CLAIMERS; k++) {
            pthread_join(th[k], NULL);
        }
        pthread_barrier_destroy(&claim_barrier);
        ck_assert_int_eq(atomic_load(&claims_won), 1);
        threads_release(r);
    }
}
END_TEST

/* ---- thread-local storage ---- */

typedef struct {
    JNIEnv *own_env;
    JNIEnv *other_env;
    void *own_value;
    /* results */
    bool add_ok, own_get_ok, other_get_ok, other_set_ok, unknown_get;
    void *own_seen, *other_seen;
} tls_job;

static void *tls_worker(void *arg)
{
    tls_job *j = arg;
    fake_set_thread_env(j->own_env);
    seam_thread_info i = make_info(j->own_env, ID(2), NULL, "tls-worker");
    thread_rec *t = threads_add(&i, false);
    j->add_ok = t != NULL;
    threads_release(t);
    threads_tls_set(j->own_env, 0, j->own_value);
    j->own_get_ok = threads_tls_get(j->own_env, 0, &j->own_seen);
    /* the main thread's word, read and written from here */
    j->other_get_ok = threads_tls_get(j->other_env, 0, &j->other_seen);
    j->other_set_ok = threads_tls_set(j->other_env, 0, (void *)0xfeed);
    void *v = (void *)0x1;
    j->unknown_get = threads_tls_get(ENV(40), 0, &v);
    return NULL;
}

START_TEST(test_thread_tls)
{
    int word_main, word_worker;
    fake_set_thread_env(ENV(1));
    seam_thread_info i = make_info(ENV(1), ID(1), NULL, "main");
    threads_release(threads_add(&i, false));

    void *v = (void *)0x1;
    ck_assert(threads_tls_get(ENV(1), 0, &v));
    ck_assert_ptr_null(v); /* a new thread's word is NULL */
    ck_assert(threads_tls_set(ENV(1), 0, &word_main));
    ck_assert(threads_tls_get(ENV(1), 0, &v));
    ck_assert_ptr_eq(v, &word_main);

    tls_job j = {.own_env = ENV(2), .other_env = ENV(1), .own_value = &word_worker};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, tls_worker, &j), 0);
    pthread_join(th, NULL);
    ck_assert(j.add_ok);
    ck_assert(j.own_get_ok);
    ck_assert_ptr_eq(j.own_seen, &word_worker);
    ck_assert(j.other_get_ok);
    ck_assert_ptr_eq(j.other_seen, &word_main);
    ck_assert(j.other_set_ok);
    ck_assert(!j.unknown_get);

    /* the worker's write to our word is what we read now, through our cache */
    ck_assert(threads_tls_get(ENV(1), 0, &v));
    ck_assert_ptr_eq(v, (void *)0xfeed);
    /* the worker's own word, read from here */
    ck_assert(threads_tls_get(ENV(2), 0, &v));
    ck_assert_ptr_eq(v, &word_worker);

    /* unknown and NULL envs */
    v = (void *)0x1;
    ck_assert(!threads_tls_get(ENV(30), 0, &v));
    ck_assert(!threads_tls_set(ENV(30), 0, &word_main));
    ck_assert(!threads_tls_get(NULL, 0, &v));
    ck_assert(!threads_tls_set(NULL, 0, &word_main));

    /* after the thread ended its env names nothing, even from its own thread */
    threads_end(ENV(1));
    ck_assert(!threads_tls_get(ENV(1), 0, &v));
    ck_assert(!threads_tls_set(ENV(1), 0, &word_main));
}
END_TEST

/* ---- a record held by another thread outlives threads_end ---- */

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stage;  /* 1: worker registered; 2: main acquired; 3: worker ended */
} handshake;

static void stage_set(handshake *h, int s)
{
    pthread_mutex_lock(&h->lock);
    h->stage = s;
    pthread_cond_broadcast(&h->cond);
    pthread_mutex_unlock(&h->lock);
}

static void stage_wait(handshake *h, int s)
{
    pthread_mutex_lock(&h->lock);
    while (h->stage < s) {
        pthread_cond_wait(&h->cond, &h->lock);
    }
    pthread_mutex_unlock(&h->lock);
}

static handshake hs = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

static void *ending_worker(void *arg)
{
    (void)arg;
    fake_set_thread_env(ENV(5));
    seam_thread_info i = make_info(ENV(5), ID(5), HANDLE(5), "short-lived");
    threads_release(threads_add(&i, false));
    stage_set(&hs, 1);
    stage_wait(&hs, 2);
    threads_end(ENV(5)); /* ThreadEnd comes in the ending thread itself */
    stage_set(&hs, 3);
    return NULL;
}

START_TEST(test_thread_survives_end_until_released)
{
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, ending_worker, NULL), 0);
    stage_wait(&hs, 1);
    thread_rec *t = threads_acquire_by_env(ENV(5)); /* e.g. a sampler about to suspend it */
    ck_assert_ptr_nonnull(t);
    stage_set(&hs, 2);
    pthread_join(th, NULL);
    ck_assert_int_eq(hs.stage, 3);

    ck_assert_ptr_null(threads_acquire_by_env(ENV(5)));
    ck_assert_ptr_null(threads_acquire_by_id(ID(5)));
    /* still ours to read; the backend handle is not released while we use it */
    ck_assert(t->ended);
    ck_assert_str_eq(t->info.name, "short-lived");
    ck_assert_ptr_eq(t->info.handle, HANDLE(5));
    ck_assert_ptr_eq(t->info.env, ENV(5));
    ck_assert_int_eq(fake.handle_releases, 0);
    threads_release(t);
    ck_assert_int_eq(fake.handle_releases, 1);
    ck_assert_ptr_eq(fake.last_released_handle, HANDLE(5));
}
END_TEST

/* Same, with threads_reset (VM death) instead of threads_end. */
START_TEST(test_thread_survives_reset_until_released)
{
    seam_thread_info i = make_info(ENV(1), ID(1), HANDLE(1), "held");
    thread_rec *t = threads_add(&i, false);
    threads_reset();
    ck_assert_ptr_null(threads_acquire_by_env(ENV(1)));
    ck_assert(t->ended);
    ck_assert_str_eq(t->info.name, "held");
    ck_assert_int_eq(fake.handle_releases, 0);
    threads_release(t);
    ck_assert_int_eq(fake.handle_releases, 1);
}
END_TEST

/* ---- threads that started before the layer could learn their JNIEnv * ---- */

START_TEST(test_thread_synthetic_env)
{
    seam_thread_info i1 = make_info(NULL, ID(1), HANDLE(1), "early-1");
    seam_thread_info i2 = make_info(NULL, ID(2), HANDLE(2), "early-2");
    seam_thread_info i3 = make_info(ENV(3), ID(3), HANDLE(3), "real");
    thread_rec *a = threads_add(&i1, false);
    thread_rec *b = threads_add(&i2, false);
    thread_rec *c = threads_add(&i3, false);
    ck_assert_ptr_nonnull(a->info.env);
    ck_assert_ptr_nonnull(b->info.env);
    ck_assert_ptr_ne(a->info.env, b->info.env);
    ck_assert_ptr_ne(a->info.env, ENV(3));
    ck_assert_ptr_ne(b->info.env, ENV(3));

    thread_rec *x = threads_acquire_by_env(a->info.env);
    ck_assert_ptr_eq(x, a);
    threads_release(x);
    x = threads_acquire_by_env(b->info.env);
    ck_assert_ptr_eq(x, b);
    threads_release(x);
    x = threads_acquire_by_id(ID(2));
    ck_assert_ptr_eq(x, b);
    threads_release(x);

    /* the handle works for thread-local storage too */
    int word;
    void *v = NULL;
    ck_assert(threads_tls_set(a->info.env, 0, &word));
    ck_assert(threads_tls_get(a->info.env, 0, &v));
    ck_assert_ptr_eq(v, &word);
    ck_assert(threads_tls_get(b->info.env, 0, &v));
    ck_assert_ptr_null(v);

    JNIEnv *env_a = a->info.env;
    threads_release(a);
    threads_release(b);
    threads_release(c);
    threads_end(env_a);
    ck_assert_ptr_null(threads_acquire_by_id(ID(1)));
    ck_assert_int_eq(fake.handle_releases, 1);
    ck_assert_ptr_eq(fake.last_released_handle, HANDLE(1));
}
END_TEST

START_TEST(test_thread_snapshot_order)
{
    /* enough threads that hash order and start order differ */
    enum { N = 100 };
    for (int k = 0; k < N; k++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", k);
        /* NULL env: the table makes 100 distinct handles for us */
        seam_thread_info i = make_info(NULL, ID(N - k), NULL, name);
        threads_release(threads_add(&i, k % 10 == 3));
    }
    int n = -1;
    thread_rec **snap = threads_snapshot(&n);
    ck_assert_int_eq(n, N - N / 10);
    int expect = 0;
    for (int k = 0; k < n; k++, expect++) {
        if (expect % 10 == 3) {
            expect++;
        }
        char name[16];
        snprintf(name, sizeof name, "t%d", expect);
        ck_assert_msg(strcmp(snap[k]->info.name, name) == 0, "snapshot[%d] is %s, expected %s", k,
                      snap[k]->info.name, name);
        ck_assert(!snap[k]->internal);
        threads_release(snap[k]);
    }
    free(snap);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* classes                                                                   */
/* ------------------------------------------------------------------------ */

START_TEST(test_class_add_acquire)
{
    ck_assert_int_eq(classes_count(), 0);
    ck_assert(classes_add(fake_class(ID(1), "java.lang.String", 3, 1, 2)));
    ck_assert(classes_add(fake_class(ID(2), "java.lang.Object", 1, 0, 0)));
    ck_assert_int_eq(classes_count(), 2);
    class_rec *c = classes_acquire(ID(1));
    ck_assert_ptr_nonnull(c);
    ck_assert_str_eq(c->info->name, "java.lang.String");
    ck_assert_int_eq(c->info->num_methods, 3);
    ck_assert_ptr_eq(c->info->id, ID(1));
    classes_release(c);
    ck_assert_ptr_null(classes_acquire(ID(3)));
    ck_assert_ptr_null(classes_acquire(NULL));
    classes_release(NULL);
}
END_TEST

START_TEST(test_class_duplicate)
{
    ck_assert(classes_add(fake_class(ID(1), "First", 0, 0, 0)));
    ck_assert(!classes_add(fake_class(ID(1), "Second", 0, 0, 0)));
    ck_assert_int_eq(classes_count(), 1);
    class_rec *c = classes_acquire(ID(1));
    ck_assert_str_eq(c->info->name, "First");
    classes_release(c);
}
END_TEST

START_TEST(test_class_claim_once)
{
    ck_assert(classes_add(fake_class(ID(1), "A", 0, 0, 0)));
    class_rec *c = classes_acquire(ID(1));
    ck_assert(classes_claim_announce(c));
    ck_assert(!classes_claim_announce(c));
    classes_release(c);
    /* a second acquisition sees the same flag */
    c = classes_acquire(ID(1));
    ck_assert(!classes_claim_announce(c));
    classes_release(c);
}
END_TEST

START_TEST(test_class_unannounced_order)
{
    enum { N = 200 };
    /* IDs descending so that any ordering by ID or by hash shows */
    for (int k = 0; k < N; k++) {
        char name[16];
        snprintf(name, sizeof name, "C%d", k);
        ck_assert(classes_add(fake_class(ID(N - k), name, 0, 0, 0)));
    }
    /* announce every third */
    for (int k = 0; k < N; k += 3) {
        class_rec *c = classes_acquire(ID(N - k));
        ck_assert(classes_claim_announce(c));
        once_sent(&c->announced);
        classes_release(c);
    }
    int n = -1;
    class_rec **list = classes_unannounced(AGENTS_BIT(0), &n);
    ck_assert_int_eq(n, N - (N + 2) / 3);
    int expect = 0;
    for (int k = 0; k < n; k++, expect++) {
        if (expect % 3 == 0) {
            expect++;
        }
        char name[16];
        snprintf(name, sizeof name, "C%d", expect);
        ck_assert_msg(strcmp(list[k]->info->name, name) == 0, "unannounced[%d] is %s, expected %s", k,
                      list[k]->info->name, name);
        ck_assert(!once_was_sent(&list[k]->announced, AGENTS_BIT(0)));
        classes_release(list[k]);
    }
    free(list);

    /* all announced: an empty list */
    list = classes_unannounced(AGENTS_BIT(0), &n);
    for (int k = 0; k < n; k++) {
        ck_assert(classes_claim_announce(list[k]));
        once_sent(&list[k]->announced);
        classes_release(list[k]);
    }
    free(list);
    list = classes_unannounced(AGENTS_BIT(0), &n);
    ck_assert_int_eq(n, 0);
    free(list);
}
END_TEST

START_TEST(test_class_remove)
{
    ck_assert(classes_add(fake_class(ID(1), "Gone", 2, 1, 1)));
    ck_assert(classes_add(fake_class(ID(2), "Stays", 0, 0, 0)));
    classes_remove(ID(1));
    ck_assert_ptr_null(classes_acquire(ID(1)));
    ck_assert_int_eq(classes_count(), 1);
    classes_remove(ID(1)); /* twice: harmless */
    classes_remove(ID(7)); /* unknown: harmless */
    ck_assert_int_eq(classes_count(), 1);

    /* removed while held (a RequestEvent answered during its CLASS_UNLOAD) */
    class_rec *c = classes_acquire(ID(2));
    classes_remove(ID(2));
    ck_assert_int_eq(classes_count(), 0);
    ck_assert_str_eq(c->info->name, "Stays");
    classes_release(c);

    /* the ID may be defined again afterwards (it never is, but nothing breaks) */
    ck_assert(classes_add(fake_class(ID(1), "Again", 0, 0, 0)));
    c = classes_acquire(ID(1));
    ck_assert_str_eq(c->info->name, "Again");
    ck_assert(!once_was_sent(&c->announced, AGENTS_BIT(0)));
    classes_release(c);
}
END_TEST

#define ADDERS 8
static pthread_barrier_t add_barrier;
static atomic_int adds_won;

static void *class_adder(void *arg)
{
    seam_class_info *info = arg;
    pthread_barrier_wait(&add_barrier);
    if (classes_add(info)) {
        atomic_fetch_add(&adds_won, 1);
    }
    return NULL;
}

START_TEST(test_class_add_race)
{
    for (int round = 0; round < 50; round++) {
        pthread_t th[ADDERS];
        seam_class_info *infos[ADDERS];
        for (int k = 0; k < ADDERS; k++) {
            infos[k] = fake_class(ID(1000 + round), "Raced", 1, 1, 1);
        }
        atomic_store(&adds_won, 0);
        pthread_barrier_init(&add_barrier, NULL, ADDERS);
        for (int k = 0; k < ADDERS; k++) {
            ck_assert_int_eq(pthread_create(&th[k], NULL, class_adder, infos[k]), 0);
        }
        for (int k = 0; k < ADDERS; k++) {
            pthread_join(th[k], NULL);
        }
        pthread_barrier_destroy(&add_barrier);
        ck_assert_int_eq(atomic_load(&adds_won), 1);
    }
    ck_assert_int_eq(classes_count(), 50);
}
END_TEST

/* ------------------------------------------------------------------------ */

static Suite *tables_suite(void)
{
    Suite *s = suite_create("tables");
    TCase *tc;

    tc = tcase_create("ids");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_ids_increasing);
    tcase_add_test(tc, test_ids_tag_layout);
    tcase_add_test(tc, test_ids_threads);
    suite_add_tcase(s, tc);

    tc = tcase_create("threads");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_thread_add_acquire_end);
    tcase_add_test(tc, test_thread_same_twice);
    tcase_add_test(tc, test_thread_env_reused);
    tcase_add_test(tc, test_thread_recently_ended);
    tcase_add_test(tc, test_thread_claim_once);
    tcase_add_test(tc, test_thread_tls);
    tcase_add_test(tc, test_thread_survives_end_until_released);
    tcase_add_test(tc, test_thread_survives_reset_until_released);
    tcase_add_test(tc, test_thread_synthetic_env);
    tcase_add_test(tc, test_thread_snapshot_order);
    suite_add_tcase(s, tc);

    tc = tcase_create("classes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_class_add_acquire);
    tcase_add_test(tc, test_class_duplicate);
    tcase_add_test(tc, test_class_claim_once);
    tcase_add_test(tc, test_class_unannounced_order);
    tcase_add_test(tc, test_class_remove);
    tcase_add_test(tc, test_class_add_race);
    suite_add_tcase(s, tc);

    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(tables_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
