/*
 * test_classcache.c - the class cache of jvmti_backend/classcache.c: an
 * entry is a mirror address with the pause interval it was read in, and no
 * answer may outlive the interval, whatever address comes back later.
 *
 * A "local reference" here is what HotSpot's is: a pointer to a slot that
 * holds the mirror's address.  The fake JVM TI environment answers GetTag
 * (the sampled check) from the same table the test moves mirrors in.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <check.h>

#include "backend.h"

#define CHECK_EVERY 4096 /* as in classcache.c */

_Atomic bool bk_vm_dead; /* agent.c's (check.c reads it), which this suite does not link */

/* What the "VM" knows: which class (by tag) has its mirror at which address. */
#define MAX_MIRRORS 8
static struct {
    uintptr_t address;
    jlong tag;
} vm_mirrors[MAX_MIRRORS];
static int get_tag_calls;

static jvmtiError JNICALL fake_get_tag(jvmtiEnv *env, jobject object, jlong *tag_ptr)
{
    uintptr_t address = *(uintptr_t *)object;
    get_tag_calls++;
    *tag_ptr = 0;
    for (int i = 0; i < MAX_MIRRORS; i++) {
        if (vm_mirrors[i].address == address) {
            *tag_ptr = vm_mirrors[i].tag;
        }
    }
    return JVMTI_ERROR_NONE;
}

static struct jvmtiInterface_1_ fake_functions;
static const struct jvmtiInterface_1_ *fake_env = &fake_functions;

static void setup(void)
{
    memset(&fake_functions, 0, sizeof fake_functions);
    fake_functions.GetTag = fake_get_tag;
    bk.jvmti = bk.jvmti_cls = (jvmtiEnv *)&fake_env;
    memset(vm_mirrors, 0, sizeof vm_mirrors);
    get_tag_calls = 0;
    bk_classcache_set_enabled(true);
}

/* A class whose mirror is at address, with its local reference slot. */
typedef struct {
    uintptr_t slot;
    jlong tag;
} klass;

static jclass ref(klass *k) { return (jclass)(void *)&k->slot; }

static void vm_place(int i, klass *k, uintptr_t address)
{
    k->slot = address;
    vm_mirrors[i].address = address;
    vm_mirrors[i].tag = k->tag;
}

/* What heap.c's GarbageCollectionStart/Finish callbacks do. */
static void pause_start(void) { atomic_fetch_add(&bk.pauses_started, 1); }
static void pause_finish(void) { atomic_fetch_add(&bk.pauses_finished, 1); }

static void pause_(void)
{
    pause_start();
    pause_finish();
}

/* What the allocation path does: find, else ask the VM and put. */
static jlong lookup(klass *k, bool *hit)
{
    bk_classcache_key key;
    jlong tag = 0;
    *hit = bk_classcache_find(tls_caches_get(), ref(k), &key, &tag);
    if (!*hit) {
        fake_get_tag(NULL, (jobject)ref(k), &tag);
        bk_classcache_put(&key, tag);
    }
    return tag;
}

START_TEST(test_hit_within_an_interval)
{
    klass a = {0, 0x8000000008};
    vm_place(0, &a, 0x10000);
    bool hit;
    ck_assert_int_eq(lookup(&a, &hit), a.tag);
    ck_assert(!hit);
    ck_assert_int_eq(lookup(&a, &hit), a.tag);
    ck_assert(hit);
}
END_TEST

START_TEST(test_a_pause_voids_every_entry)
{
    klass a = {0, 0x8000000008};
    vm_place(0, &a, 0x10000);
    bool hit;
    lookup(&a, &hit);
    pause_();
    ck_assert_int_eq(lookup(&a, &hit), a.tag);
    ck_assert_msg(!hit, "an entry made before a pause answered after it");
    ck_assert_int_eq(lookup(&a, &hit), a.tag);
    ck_assert(hit);
}
END_TEST

/* The hazard the intervals exist for: a collection moves class B's mirror
 * to where class A's was. */
START_TEST(test_an_address_reused_after_a_pause_names_the_new_class)
{
    klass a = {0, 0x8000000008}, b = {0, 0x8000000010};
    vm_place(0, &a, 0x10000);
    vm_place(1, &b, 0x20000);
    bool hit;
    lookup(&a, &hit);
    lookup(&b, &hit);
    pause_();
    vm_place(0, &a, 0x30000);
    vm_place(1, &b, 0x10000);
    ck_assert_int_eq(lookup(&b, &hit), b.tag);
    ck_assert(!hit);
    ck_assert_int_eq(lookup(&a, &hit), a.tag);
    ck_assert(!hit);
    ck_assert_int_eq(lookup(&b, &hit), b.tag);
    ck_assert(hit);
}
END_TEST

/* Inside a pause the collector may be rewriting the slot: no answer, and
 * nothing is put either. */
START_TEST(test_nothing_during_a_pause)
{
    klass a = {0, 0x8000000008};
    vm_place(0, &a, 0x10000);
    bool hit;
    lookup(&a, &hit);
    pause_start();
    bk_classcache_key key;
    jlong tag = 0;
    ck_assert(!bk_classcache_find(tls_caches_get(), ref(&a), &key, &tag));
    ck_assert_int_eq(key.mirror, 0);
    bk_classcache_put(&key, 0x7777); /* ignored */
    pause_finish();
    ck_assert_int_eq(lookup(&a, &hit), a.tag);
    ck_assert(!hit);
}
END_TEST

START_TEST(test_off_answers_nothing)
{
    klass a = {0, 0x8000000008};
    vm_place(0, &a, 0x10000);
    bool hit;
    lookup(&a, &hit);
    bk_classcache_set_enabled(false);
    bk_classcache_key key;
    jlong tag = 0;
    ck_assert(!bk_classcache_find(tls_caches_get(), ref(&a), &key, &tag));
    ck_assert_int_eq(key.mirror, 0);
}
END_TEST

/* One hit in CHECK_EVERY asks JVM TI; when it disagrees, the cache turns
 * itself off rather than go on answering. */
START_TEST(test_sampled_check_turns_a_wrong_cache_off)
{
    klass a = {0, 0x8000000008};
    vm_place(0, &a, 0x10000);
    bool hit;
    lookup(&a, &hit);
    int calls = get_tag_calls;
    for (int i = 1; i < CHECK_EVERY; i++) {
        ck_assert_int_eq(lookup(&a, &hit), a.tag);
        ck_assert(hit);
    }
    ck_assert_int_eq(get_tag_calls, calls); /* hits cost no JVM TI call */
    ck_assert_int_eq(lookup(&a, &hit), a.tag);
    ck_assert(hit);
    ck_assert_int_eq(get_tag_calls, calls + 1); /* the sampled check, which agreed */
    /* Now the VM says otherwise (as if a collection had gone unreported). */
    vm_mirrors[0].tag = 0x8000000018;
    for (int i = 1; i < CHECK_EVERY; i++) {
        lookup(&a, &hit);
    }
    ck_assert_int_eq(lookup(&a, &hit), 0x8000000018);
    ck_assert_msg(!hit, "a hit that JVM TI contradicted was used");
    bk_classcache_key key;
    jlong tag = 0;
    ck_assert(!bk_classcache_find(tls_caches_get(), ref(&a), &key, &tag));
    ck_assert_int_eq(key.mirror, 0);
}
END_TEST

static klass shared_class = {0, 0x8000000008};
static void *other_thread(void *arg)
{
    bool hit;
    lookup(&shared_class, &hit);
    *(bool *)arg = hit;
    return NULL;
}

START_TEST(test_entries_are_per_thread)
{
    vm_place(0, &shared_class, 0x10000);
    bool hit, other_hit = true;
    lookup(&shared_class, &hit);
    pthread_t t;
    pthread_create(&t, NULL, other_thread, &other_hit);
    pthread_join(t, NULL);
    ck_assert(!other_hit);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("classcache");
    TCase *tc = tcase_create("entries");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_hit_within_an_interval);
    tcase_add_test(tc, test_a_pause_voids_every_entry);
    tcase_add_test(tc, test_an_address_reused_after_a_pause_names_the_new_class);
    tcase_add_test(tc, test_nothing_during_a_pause);
    tcase_add_test(tc, test_off_answers_nothing);
    tcase_add_test(tc, test_sampled_check_turns_a_wrong_cache_off);
    tcase_add_test(tc, test_entries_are_per_thread);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
