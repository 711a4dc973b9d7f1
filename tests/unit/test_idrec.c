/*
 * test_idrec.c - the class of each live object ID (jvmpi/idrec.c, and its
 * use by jvmpi/ids.c): found without JVM TI, gone once freed, and kept in
 * at most about 16 bytes a live object whatever the pattern of survivors.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "fake_backend.h"
#include "idrec.h"

/* Sequence numbers of fresh blocks, never handed out by ids.c: the tests of
 * idrec alone use numbers far above what ids.c reaches in a test. */
static int64_t next_block = (int64_t)1 << 26;

static int64_t fresh_block(void) { return next_block++; }

static int64_t seq_in(int64_t block, int i) { return block * IDREC_BLOCK + i + 1; }

START_TEST(test_put_get_drop)
{
    int64_t b = fresh_block();
    idrec_put(seq_in(b, 0), 7);
    idrec_put(seq_in(b, 1), 9);
    ck_assert_uint_eq(idrec_get(seq_in(b, 0)), 7);
    ck_assert_uint_eq(idrec_get(seq_in(b, 1)), 9);
    ck_assert_uint_eq(idrec_get(seq_in(b, 2)), IDREC_NONE); /* never recorded */
    idrec_drop(seq_in(b, 0));
    ck_assert_uint_eq(idrec_get(seq_in(b, 0)), IDREC_NONE);
    idrec_drop(seq_in(b, 0)); /* twice: no effect */
    idrec_set(seq_in(b, 1), 11);
    ck_assert_uint_eq(idrec_get(seq_in(b, 1)), 11);
    idrec_set(seq_in(b, 0), 11); /* no record: stays without one */
    ck_assert_uint_eq(idrec_get(seq_in(b, 0)), IDREC_NONE);
    idrec_put(seq_in(b, 3), IDREC_NONE); /* a class the layer could not number */
    ck_assert_uint_eq(idrec_get(seq_in(b, 3)), IDREC_UNKNOWN);
    idrec_drop(seq_in(b, 1));
    idrec_drop(seq_in(b, 3));
}
END_TEST

/* A full block stays an array until most of it is freed; its survivors
 * then move to the sparse table and keep their classes. */
START_TEST(test_survivors_move_to_the_sparse_table)
{
    idrec_stats before, dense, sparse;
    int64_t b = fresh_block();
    idrec_put(seq_in(fresh_block(), 0), 3); /* closes whatever block this thread had */
    idrec_get_stats(&before);
    for (int i = 0; i < IDREC_BLOCK; i++) {
        idrec_put(seq_in(b, i), (uint32_t)(100 + i));
    }
    idrec_put(seq_in(fresh_block(), 0), 3); /* the thread moves on: b is closed */
    idrec_get_stats(&dense);
    ck_assert_uint_eq(dense.dense_blocks, before.dense_blocks + 1);
    for (int i = 0; i < IDREC_BLOCK; i++) {
        if (i % 8 != 0) {
            idrec_drop(seq_in(b, i));
        }
    }
    idrec_get_stats(&sparse);
    ck_assert_uint_eq(sparse.dense_blocks, before.dense_blocks);
    ck_assert_uint_eq(sparse.records, dense.records - IDREC_BLOCK + IDREC_BLOCK / 8);
    for (int i = 0; i < IDREC_BLOCK; i++) {
        ck_assert_uint_eq(idrec_get(seq_in(b, i)), i % 8 == 0 ? (uint32_t)(100 + i) : IDREC_NONE);
    }
    for (int i = 0; i < IDREC_BLOCK; i += 8) {
        idrec_drop(seq_in(b, i));
        ck_assert_uint_eq(idrec_get(seq_in(b, i)), IDREC_NONE);
    }
}
END_TEST

/* The sparse table against a plain array, through growth, shrinking and
 * deletions inside probe runs. */
START_TEST(test_sparse_table_agrees_with_a_reference)
{
    enum { N = 20000 };
    static int64_t seqs[N];
    static uint32_t want[N];
    srand(7);
    for (int i = 0; i < N; i++) {
        seqs[i] = seq_in(fresh_block(), rand() % IDREC_BLOCK); /* one record a block: sparse at once */
        want[i] = (uint32_t)(2 + rand() % 5000);
        idrec_put(seqs[i], want[i]);
    }
    idrec_put(seq_in(fresh_block(), 0), 3);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
            if (rand() % 3 == 0 && want[i] != IDREC_NONE) {
                idrec_drop(seqs[i]);
                want[i] = IDREC_NONE;
            }
        }
        for (int i = 0; i < N; i++) {
            ck_assert_uint_eq(idrec_get(seqs[i]), want[i]);
        }
    }
    for (int i = 0; i < N; i++) {
        idrec_drop(seqs[i]);
    }
}
END_TEST

/* Memory per live record, for three patterns of survivors: all, one in
 * ten, one in a block.  At most 16 bytes, tables and index included. */
static double bytes_per_record(int keep_one_in)
{
    enum { BLOCKS = 4000 };
    idrec_stats base, after;
    idrec_put(seq_in(fresh_block(), 0), 3);
    idrec_get_stats(&base);
    int64_t first = next_block;
    for (int b = 0; b < BLOCKS; b++) {
        int64_t blk = fresh_block();
        for (int i = 0; i < IDREC_BLOCK; i++) {
            idrec_put(seq_in(blk, i), 5);
        }
    }
    int64_t closer = seq_in(fresh_block(), 0);
    idrec_put(closer, 3); /* closes the last block */
    idrec_drop(closer);
    for (int b = 0; b < BLOCKS; b++) {
        for (int i = 0; i < IDREC_BLOCK; i++) {
            if ((b * IDREC_BLOCK + i) % keep_one_in != 0) {
                idrec_drop(seq_in(first + b, i));
            }
        }
    }
    idrec_get_stats(&after);
    size_t records = after.records - base.records;
    ck_assert_uint_eq(records, ((size_t)BLOCKS * IDREC_BLOCK + keep_one_in - 1) / keep_one_in);
    double per = (double)(after.bytes - base.bytes) / (double)records;
    for (int b = 0; b < BLOCKS; b++) {
        for (int i = 0; i < IDREC_BLOCK; i++) {
            idrec_drop(seq_in(first + b, i));
        }
    }
    return per;
}

START_TEST(test_at_most_16_bytes_a_record)
{
    double all = bytes_per_record(1);
    double tenth = bytes_per_record(10);
    double few = bytes_per_record(IDREC_BLOCK);
    ck_assert_msg(all <= 16.0, "all survive: %.1f bytes a record", all);
    ck_assert_msg(tenth <= 16.0, "one in ten survives: %.1f bytes a record", tenth);
    ck_assert_msg(few <= 16.0, "one a block survives: %.1f bytes a record", few);
}
END_TEST

/* Threads record without a lock, each in its own blocks; what they
 * recorded is found from another thread, also after they ended. */
typedef struct {
    int64_t tags[3000];
    int64_t class_tag;
} maker;

static void *make_objects(void *arg)
{
    maker *m = arg;
    for (int i = 0; i < 3000; i++) {
        m->tags[i] = ids_next_object(16 + 8 * (i % 4), m->class_tag);
    }
    return NULL;
}

START_TEST(test_threads_record_and_others_find)
{
    enum { THREADS = 4 };
    static maker makers[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        makers[i].class_tag = ids_next_class(i == 0 ? JVMPI_CLASS : 0);
        ck_assert_int_eq(pthread_create(&t[i], NULL, make_objects, &makers[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
    }
    for (int i = 0; i < THREADS; i++) {
        for (int j = 0; j < 3000; j++) {
            int64_t class_tag = 0;
            ck_assert_int_eq(ids_object_class(makers[i].tags[j], &class_tag), IDS_OBJECT_LIVE);
            ck_assert_int_eq(class_tag, makers[i].class_tag);
            ck_assert_int_eq(ids_object_size(makers[i].tags[j]), 16 + 8 * (j % 4));
        }
    }
    for (int i = 0; i < THREADS; i++) {
        for (int j = 0; j < 3000; j += 2) {
            ids_forget(makers[i].tags[j]);
        }
    }
    for (int i = 0; i < THREADS; i++) {
        for (int j = 0; j < 3000; j++) {
            int64_t class_tag = 0;
            ck_assert_int_eq(ids_object_class(makers[i].tags[j], &class_tag),
                             j % 2 == 0 ? IDS_OBJECT_GONE : IDS_OBJECT_LIVE);
        }
    }
}
END_TEST

START_TEST(test_object_class_states)
{
    int64_t cls = ids_next_class(JVMPI_INT);
    ck_assert_int_eq(ids_array_type(cls), JVMPI_INT); /* the class number leaves the type alone */
    ck_assert_uint_gt(ids_class_number(cls), IDREC_UNKNOWN);
    int64_t other = ids_next_class(0);
    ck_assert_uint_ne(ids_class_number(other), ids_class_number(cls));

    int64_t class_tag = -1;
    int64_t obj = ids_next_object(32, cls);
    ck_assert_int_eq(ids_object_class(obj, &class_tag), IDS_OBJECT_LIVE);
    ck_assert_int_eq(class_tag, cls);
    /* The unannounced form of the same tag is the same object. */
    int64_t late = ids_next_unannounced_object(24, other);
    ck_assert_int_eq(ids_object_class(late, &class_tag), IDS_OBJECT_LIVE);
    ck_assert_int_eq(class_tag, other);

    /* An object made before its class had a tag: live, class unknown,
     * until the class gets one. */
    int64_t orphan = ids_next_object(16, 0);
    ck_assert_int_eq(ids_object_class(orphan, &class_tag), IDS_OBJECT_UNKNOWN);
    ids_set_object_class(orphan, other);
    ck_assert_int_eq(ids_object_class(orphan, &class_tag), IDS_OBJECT_LIVE);
    ck_assert_int_eq(class_tag, other);

    /* Held back (uncounted), then gone: its record goes with it. */
    int64_t held = ids_next_object_uncounted(16, ids_next_pending_class());
    ck_assert_int_ne(ids_object_class(held, &class_tag), IDS_OBJECT_GONE);
    ids_drop_uncounted(held);
    ck_assert_int_eq(ids_object_class(held, &class_tag), IDS_OBJECT_GONE);

    ids_forget(obj);
    ck_assert_int_eq(ids_object_class(obj, &class_tag), IDS_OBJECT_GONE);
    ck_assert_int_eq(class_tag, 0);
    /* Never handed out, a class ID, 0: gone, at once. */
    ck_assert_int_eq(ids_object_class(obj + ((int64_t)1 << 30), &class_tag), IDS_OBJECT_GONE);
    ck_assert_int_eq(ids_object_class(cls, &class_tag), IDS_OBJECT_GONE);
    ck_assert_int_eq(ids_object_class(0, &class_tag), IDS_OBJECT_GONE);
    ids_forget(late);
    ids_forget(orphan);
}
END_TEST

static Suite *idrec_suite(void)
{
    Suite *s = suite_create("idrec");
    TCase *tc = tcase_create("idrec");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_put_get_drop);
    tcase_add_test(tc, test_survivors_move_to_the_sparse_table);
    tcase_add_test(tc, test_sparse_table_agrees_with_a_reference);
    tcase_add_test(tc, test_at_most_16_bytes_a_record);
    tcase_add_test(tc, test_threads_record_and_others_find);
    tcase_add_test(tc, test_object_class_states);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(idrec_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
