/*
 * test_presence - counting who is inside a region without locked
 * instructions (jvmpi/presence.c): once the closing side has set its flag
 * and counted nobody, nobody gets in until it lowers the flag, and nobody
 * it counted is missed; slots of ended threads are taken again.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "presence.h"

static presence region = PRESENCE_INIT;
static _Atomic bool closed_flag, stop;
static _Atomic long in_region, entries, breaches;

static void *worker(void *arg)
{
    (void)arg;
    presence_slot *s = presence_slot_take(&region);
    while (!atomic_load(&stop)) {
        presence_enter(s);
        if (atomic_load(&closed_flag)) {
            presence_leave(s);
            continue;
        }
        atomic_fetch_add(&in_region, 1);
        atomic_fetch_add(&entries, 1);
        atomic_fetch_sub(&in_region, 1);
        presence_leave(s);
    }
    return NULL;
}

START_TEST(test_closed_region_stays_empty)
{
    /* These machines have two cores and run other tests beside this one: a
     * worker preempted inside the region holds a closing until it runs
     * again, so the closing side yields while it waits, and there are no
     * more workers than cores. */
    enum { THREADS = 2, CLOSINGS = 500 };
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, worker, NULL), 0);
    while (atomic_load(&entries) == 0)
        ;
    long before = atomic_load(&entries);
    for (int c = 0; c < CLOSINGS; c++) {
        struct timespec open_a_while = {0, 20000};
        nanosleep(&open_a_while, NULL);
        atomic_store(&closed_flag, true);
        for (bool first = true; presence_count(&region, first) > 0; first = false)
            sched_yield();
        /* Closed and counted empty: no worker may be between its check and its leaving. */
        for (int k = 0; k < 50; k++)
            if (atomic_load(&in_region) != 0)
                atomic_fetch_add(&breaches, 1);
        atomic_store(&closed_flag, false);
    }
    atomic_store(&stop, true);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    ck_assert_int_eq(atomic_load(&breaches), 0);
    ck_assert_int_gt(atomic_load(&entries) - before, CLOSINGS); /* they kept coming in between */
    ck_assert_int_eq(presence_count(&region, true), 0);
}
END_TEST

static void *enter_and_end(void *arg)
{
    presence_slot **out = arg;
    *out = presence_slot_take(&region);
    presence_enter(*out); /* ends inside: its slot must not hold the region */
    return NULL;
}

START_TEST(test_slot_of_ended_thread_is_reused)
{
    presence_slot *first = NULL, *second = NULL;
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, enter_and_end, &first), 0);
    pthread_join(t, NULL);
    ck_assert_int_eq(presence_count(&region, true), 0);
    ck_assert_int_eq(pthread_create(&t, NULL, enter_and_end, &second), 0);
    pthread_join(t, NULL);
    ck_assert_ptr_eq(first, second);
    ck_assert_int_eq(first->shared, false);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("presence");
    TCase *tc = tcase_create("presence");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_closed_region_stays_empty);
    tcase_add_test(tc, test_slot_of_ended_thread_is_reused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
