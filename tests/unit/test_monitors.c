/*
 * test_monitors.c - the Java monitor events (jvmpi/monitors.c) through the
 * fake backend: CONTENDED_ENTER/ENTERED as the backend reports them, the
 * CONTENDED_EXIT emulation (who owes an exit, when it is sent, with which
 * env_id), waits releasing without an exit, WAIT/WAITED for waits and
 * sleeps.  Each "thread" runs its callback on a pthread of its own, attached
 * (for the fake) with its JNIEnv *.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "events.h"
#include "fake_backend.h"
#include "interface.h"
#include "layer.h"
#include "threads.h"
#include "monitors.h"

static char env_tokens[32];
#define ENV(i) ((JNIEnv *)(void *)&env_tokens[(i)])
#define THREAD_ID(i) seam_id_from_tag(0x200000 + (int64_t)(i) * 8)
#define OBJ_ID(i) seam_id_from_tag(0x300000 + (int64_t)(i) * 8)

static JVMPI_Interface *pi;

typedef struct {
    jint type;
    JNIEnv *env_id;
    pthread_t thread;
    jobjectID object;
    jlong timeout;
} rec;
static rec evs[64];
static int n_evs;
static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;

static void record(JVMPI_Event *ev)
{
    pthread_mutex_lock(&rec_lock);
    if (n_evs < 64) {
        rec *r = &evs[n_evs++];
        r->type = ev->event_type;
        r->env_id = ev->env_id;
        r->thread = pthread_self();
        r->object = ev->u.monitor_wait.object;
        r->timeout = ev->u.monitor_wait.timeout;
    }
    pthread_mutex_unlock(&rec_lock);
}

typedef enum { ENTER, ENTERED, WAIT, WAITED, SLEEP, SLEPT } action;
typedef struct {
    JNIEnv *env;
    action what;
    jobjectID obj;
    jlong timeout;
} job;

static void *run_job(void *p)
{
    job *j = p;
    fake_set_thread_env(j->env);
    switch (j->what) {
    case ENTER: layer_monitor_contended_enter(j->env, (jobject)j->obj, j->obj); break;
    case ENTERED: layer_monitor_contended_entered(j->env, j->obj); break;
    case WAIT: layer_monitor_wait(j->env, j->obj, j->timeout); break;
    case WAITED: layer_monitor_waited(j->env, j->obj, false); break;
    case SLEEP: layer_monitor_wait(j->env, NULL, j->timeout); break;
    case SLEPT: layer_monitor_waited(j->env, NULL, false); break;
    }
    return NULL;
}

/* Runs one callback as thread i, and waits for it. */
static void as(int i, action what, jobjectID obj)
{
    job j = {ENV(i), what, obj, 0};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, run_job, &j), 0);
    pthread_join(t, NULL);
}

static void setup(void)
{
    unsetenv("JVMPI_LAYER_OPTIONS");
    layer_reset();
    monitors_reset();
    fake_reset();
    ck_assert_int_eq(layer_onload(NULL, NULL), JNI_OK);
    pi = interface_table();
    pi->NotifyEvent = record;
    fake_set_thread_env(ENV(0));
    fake_thread(ENV(0), THREAD_ID(0), "main");
    for (int i = 1; i <= 3; i++) {
        fake_thread(ENV(i), THREAD_ID(i), "worker");
    }
    layer_vm_init(ENV(0));
    n_evs = 0;
}

static void teardown(void)
{
    monitors_reset();
    layer_reset();
}

static void enable_contention(void)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_MONITOR_CONTENDED_ENTER, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_MONITOR_CONTENDED_EXIT, NULL), JVMPI_SUCCESS);
    ck_assert(fake.source_on[SEAM_SRC_MONITOR_CONTENDED]);
    ck_assert(fake.source_on[SEAM_SRC_MONITOR_WAIT]); /* waits release without exits */
}

static void expect(int i, jint type, JNIEnv *env_id, jobjectID obj)
{
    ck_assert_int_gt(n_evs, i);
    ck_assert_msg(evs[i].type == type, "event %d: type %d, expected %d", i, (int)evs[i].type, (int)type);
    ck_assert_msg(evs[i].env_id == env_id, "event %d (type %d): env_id %p, expected %p", i, (int)type,
                  (void *)evs[i].env_id, (void *)env_id);
    ck_assert_ptr_eq(evs[i].object, obj);
}

/* Thread 2 blocked on thread 1's monitor and got it: thread 1's exit comes
 * just before the ENTERED it made possible, and nothing stays tracked. */
static void expect_handover(void)
{
    ck_assert_int_eq(n_evs, 3);
    expect(0, JVMPI_EVENT_MONITOR_CONTENDED_ENTER, ENV(2), OBJ_ID(1));
    expect(1, JVMPI_EVENT_MONITOR_CONTENDED_EXIT, ENV(1), OBJ_ID(1));
    expect(2, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, ENV(2), OBJ_ID(1));
    ck_assert_int_eq(monitors_tracked(), 0);
}

START_TEST(test_one_waiter)
{
    enable_contention();
    fake.monitor_owner = THREAD_ID(1); /* thread 1 holds the monitor */
    as(2, ENTER, OBJ_ID(1));
    ck_assert_int_eq(fake.monitor_owner_calls, 1);
    as(2, ENTERED, OBJ_ID(1));
    expect_handover();
}
END_TEST

START_TEST(test_two_waiters)
{
    enable_contention();
    fake.monitor_owner = THREAD_ID(1);
    as(2, ENTER, OBJ_ID(1));
    as(3, ENTER, OBJ_ID(1));
    ck_assert_int_eq(fake.monitor_owner_calls, 1); /* the second knows the owner already */
    as(3, ENTERED, OBJ_ID(1));
    as(2, ENTERED, OBJ_ID(1));
    ck_assert_int_eq(n_evs, 6);
    expect(2, JVMPI_EVENT_MONITOR_CONTENDED_EXIT, ENV(1), OBJ_ID(1));
    expect(3, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, ENV(3), OBJ_ID(1));
    /* thread 3 left while thread 2 was still queued */
    expect(4, JVMPI_EVENT_MONITOR_CONTENDED_EXIT, ENV(3), OBJ_ID(1));
    expect(5, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, ENV(2), OBJ_ID(1));
    ck_assert_int_eq(monitors_tracked(), 0);
}
END_TEST

/* The holder ends owing an exit and sends it itself, slowly (its handler
 * takes a while); the blocked thread gets the monitor meanwhile: its
 * ENTERED must still come after the holder's EXIT. */
static _Atomic bool exit_begun;
static void record_slow_exit(JVMPI_Event *ev)
{
    if (ev->event_type == JVMPI_EVENT_MONITOR_CONTENDED_EXIT) {
        atomic_store(&exit_begun, true);
        struct timespec a_while = {0, 100 * 1000 * 1000};
        nanosleep(&a_while, NULL);
    }
    record(ev);
}

static void *holder_ends(void *p)
{
    (void)p;
    fake_set_thread_env(ENV(1));
    monitors_thread_ending(ENV(1), ENV(1));
    return NULL;
}

START_TEST(test_exit_of_ending_holder_before_entered)
{
    enable_contention();
    fake.monitor_owner = THREAD_ID(1);
    as(2, ENTER, OBJ_ID(1));
    pi->NotifyEvent = record_slow_exit;
    atomic_store(&exit_begun, false);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, holder_ends, NULL), 0);
    while (!atomic_load(&exit_begun)) {
        struct timespec ms = {0, 1000 * 1000};
        nanosleep(&ms, NULL);
    }
    as(2, ENTERED, OBJ_ID(1));
    pthread_join(t, NULL);
    expect_handover();
}
END_TEST

/* The owner ends between the blocked thread's look at the owner and its
 * note that the owner owes an exit: the ending owner found nothing owed, so
 * no exit may be sent as it later (it would follow its THREAD_END). */
static void owner_ends_meanwhile(void)
{
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, holder_ends, NULL), 0);
    pthread_join(t, NULL);
}

START_TEST(test_owner_ends_while_asked)
{
    enable_contention();
    fake.monitor_owner = THREAD_ID(1);
    fake.monitor_owner_hook = owner_ends_meanwhile;
    as(2, ENTER, OBJ_ID(1));
    fake.monitor_owner_hook = NULL;
    as(2, ENTERED, OBJ_ID(1));
    ck_assert_int_eq(n_evs, 2);
    expect(0, JVMPI_EVENT_MONITOR_CONTENDED_ENTER, ENV(2), OBJ_ID(1));
    expect(1, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, ENV(2), OBJ_ID(1));
    ck_assert_int_eq(monitors_tracked(), 0);
}
END_TEST

/* HotSpot lets a thread past its ThreadEnd take its own Thread object's
 * monitor (to wake the threads joining it): a thread blocked there finds
 * an owner whose THREAD_END is due, and may send no exit as it. */
START_TEST(test_owner_past_its_end_owes_no_exit)
{
    enable_contention();
    thread_rec *holder = threads_acquire_by_id(THREAD_ID(1));
    ck_assert_ptr_nonnull(holder);
    threads_mark_ending(holder);
    threads_release(holder);
    fake.monitor_owner = THREAD_ID(1);
    as(2, ENTER, OBJ_ID(1));
    as(2, ENTERED, OBJ_ID(1));
    ck_assert_int_eq(fake.monitor_owner_calls, 1);
    ck_assert_int_eq(n_evs, 2);
    expect(0, JVMPI_EVENT_MONITOR_CONTENDED_ENTER, ENV(2), OBJ_ID(1));
    expect(1, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, ENV(2), OBJ_ID(1));
    ck_assert_int_eq(monitors_tracked(), 0);
}
END_TEST

/* A thread the agent does not know (one past its ThreadEnd, waking its
 * joiners under its own Thread object's monitor) gets the monitor with
 * another thread still queued: it owes no exit, and no event names it. */
START_TEST(test_unknown_thread_owes_no_exit)
{
    enable_contention();
    fake.monitor_owner = THREAD_ID(1);
    as(2, ENTER, OBJ_ID(1));
    as(4, ENTER, OBJ_ID(1)); /* ENV(4): no thread the layer knows */
    as(4, ENTERED, OBJ_ID(1));
    as(2, ENTERED, OBJ_ID(1));
    int exits = 0;
    for (int i = 0; i < n_evs; i++) {
        ck_assert_msg(evs[i].env_id != ENV(4), "event %d (type %d) names the unknown thread", i, (int)evs[i].type);
        exits += evs[i].type == JVMPI_EVENT_MONITOR_CONTENDED_EXIT;
    }
    ck_assert_int_eq(exits, 1); /* thread 1's, which it owed */
    ck_assert_int_eq(monitors_tracked(), 0);
}
END_TEST

START_TEST(test_owner_gone_before_asked)
{
    enable_contention();
    fake.monitor_owner = NULL; /* released before the blocked thread asked */
    as(2, ENTER, OBJ_ID(1));
    as(2, ENTERED, OBJ_ID(1));
    ck_assert_int_eq(n_evs, 2);
    expect(0, JVMPI_EVENT_MONITOR_CONTENDED_ENTER, ENV(2), OBJ_ID(1));
    expect(1, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, ENV(2), OBJ_ID(1));
}
END_TEST

START_TEST(test_wait_releases_without_exit)
{
    enable_contention();
    fake.monitor_owner = THREAD_ID(1);
    as(2, ENTER, OBJ_ID(1));
    as(1, WAIT, OBJ_ID(1)); /* owner waits: releases, no exit owed */
    as(2, ENTERED, OBJ_ID(1));
    ck_assert_int_eq(n_evs, 2);
    expect(1, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, ENV(2), OBJ_ID(1));
    ck_assert_int_eq(monitors_tracked(), 0);
}
END_TEST

START_TEST(test_back_from_wait_with_waiters)
{
    enable_contention();
    fake.monitor_owner = THREAD_ID(1);
    as(2, ENTER, OBJ_ID(1));
    as(1, WAIT, OBJ_ID(1));
    as(3, ENTER, OBJ_ID(1)); /* thread 2 still recorded blocked: owner not asked */
    as(2, ENTERED, OBJ_ID(1)); /* no exit (thread 1 waited); thread 2 owes one, 3 is queued */
    as(2, WAIT, OBJ_ID(1));    /* ... until it waits too */
    as(1, WAITED, OBJ_ID(1));  /* thread 1 owns it again with thread 3 queued */
    as(3, ENTERED, OBJ_ID(1));
    int exits = 0;
    for (int i = 0; i < n_evs; i++) {
        if (evs[i].type == JVMPI_EVENT_MONITOR_CONTENDED_EXIT) {
            exits++;
            ck_assert_ptr_eq(evs[i].env_id, ENV(1));
        }
    }
    ck_assert_int_eq(exits, 1);
    ck_assert_int_eq(fake.monitor_owner_calls, 1);
}
END_TEST

START_TEST(test_no_exit_tracking_without_exit_event)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_MONITOR_CONTENDED_ENTER, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, NULL), JVMPI_SUCCESS);
    ck_assert(!fake.source_on[SEAM_SRC_MONITOR_WAIT]);
    fake.monitor_owner = THREAD_ID(1);
    as(2, ENTER, OBJ_ID(1));
    as(2, ENTERED, OBJ_ID(1));
    ck_assert_int_eq(n_evs, 2);
    ck_assert_int_eq(fake.monitor_owner_calls, 0); /* no stop-the-world query when nobody wants exits */
    ck_assert_int_eq(monitors_tracked(), 0);
}
END_TEST

START_TEST(test_wait_and_sleep_events)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_MONITOR_WAIT, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_MONITOR_WAITED, NULL), JVMPI_SUCCESS);
    ck_assert(fake.source_on[SEAM_SRC_MONITOR_WAIT]);
    ck_assert(layer_sleep_events_wanted());
    job j = {ENV(2), WAIT, OBJ_ID(4), 1234};
    pthread_t t;
    pthread_create(&t, NULL, run_job, &j);
    pthread_join(t, NULL);
    as(2, WAITED, OBJ_ID(4));
    job s = {ENV(3), SLEEP, NULL, 50};
    pthread_create(&t, NULL, run_job, &s);
    pthread_join(t, NULL);
    as(3, SLEPT, NULL);
    ck_assert_int_eq(n_evs, 4);
    expect(0, JVMPI_EVENT_MONITOR_WAIT, ENV(2), OBJ_ID(4));
    ck_assert_int_eq(evs[0].timeout, 1234);
    expect(1, JVMPI_EVENT_MONITOR_WAITED, ENV(2), OBJ_ID(4));
    ck_assert_int_ge(evs[1].timeout, 0);
    expect(2, JVMPI_EVENT_MONITOR_WAIT, ENV(3), NULL);
    ck_assert_int_eq(evs[2].timeout, 50);
    expect(3, JVMPI_EVENT_MONITOR_WAITED, ENV(3), NULL);
    ck_assert_int_eq(pi->DisableEvent(JVMPI_EVENT_MONITOR_WAIT, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->DisableEvent(JVMPI_EVENT_MONITOR_WAITED, NULL), JVMPI_SUCCESS);
    ck_assert(!layer_sleep_events_wanted());
    ck_assert(!fake.source_on[SEAM_SRC_MONITOR_WAIT]);
}
END_TEST

static Suite *monitors_suite(void)
{
    Suite *s = suite_create("monitors");
    TCase *tc = tcase_create("events");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_one_waiter);
    tcase_add_test(tc, test_two_waiters);
    tcase_add_test(tc, test_owner_gone_before_asked);
    tcase_add_test(tc, test_owner_past_its_end_owes_no_exit);
    tcase_add_test(tc, test_unknown_thread_owes_no_exit);
    tcase_add_test(tc, test_owner_ends_while_asked);
    tcase_add_test(tc, test_exit_of_ending_holder_before_entered);
    tcase_add_test(tc, test_wait_releases_without_exit);
    tcase_add_test(tc, test_back_from_wait_with_waiters);
    tcase_add_test(tc, test_no_exit_tracking_without_exit_event);
    tcase_add_test(tc, test_wait_and_sleep_events);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(monitors_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
