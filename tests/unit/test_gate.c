/*
 * test_gate.c - what holds a GC window up and what does not (jvmpi/gate.h):
 * a running OBJECT_ALLOC handler does, even blocked on a raw monitor; a
 * DATA_DUMP_REQUEST handler, which carries no object ID, does not, nor
 * does a handler of an event not issued with GC disabled (JVM_SHUT_DOWN,
 * JVM_INIT_DONE) blocked in RawMonitorEnter or RawMonitorWait, which takes
 * its monitor only once the window has ended.
 *
 * Windows are delivered by gc_deliver_due() on a thread of the test's, as
 * in test_gc.c.  A window that hangs is a failure after a few seconds, not
 * a hung suite: the collector is joined with a deadline.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include <check.h>

#include "dispatch.h"
#include "fake_backend.h"
#include "gc.h"
#include "interface.h"
#include "layer.h"

static char env_tokens[4];
#define ENV(i) ((JNIEnv *)(void *)&env_tokens[(i)])
#define ENV_MAIN ENV(0)

static JVMPI_Interface *pi;
static JVMPI_RawMonitor agent_lock, second_lock;

/* What the handler of one event type does (0: nothing). */
enum { HOLD_NOTHING, HOLD_BLOCK, HOLD_ENTER, HOLD_WAIT, HOLD_ENTER_BOTH };
static atomic_int hold_type, hold_how;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool in_handler, let_go;
static atomic_int gc_starts, gc_finishes;
static atomic_int finishes_when_entered; /* GC_FINISHes seen as RawMonitorEnter returned */

static void say_in_handler(void)
{
    pthread_mutex_lock(&mu);
    in_handler = true;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void handler(JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    if (type == JVMPI_EVENT_GC_START) {
        atomic_fetch_add(&gc_starts, 1);
    } else if (type == JVMPI_EVENT_GC_FINISH) {
        atomic_fetch_add(&gc_finishes, 1);
    }
    int want = type;
    if (!atomic_compare_exchange_strong(&hold_type, &want, 0)) {
        return;
    }
    switch (atomic_load(&hold_how)) {
    case HOLD_BLOCK:
        pthread_mutex_lock(&mu);
        in_handler = true;
        pthread_cond_broadcast(&cv);
        while (!let_go) {
            pthread_cond_wait(&cv, &mu);
        }
        pthread_mutex_unlock(&mu);
        break;
    case HOLD_ENTER:
        say_in_handler();
        pi->RawMonitorEnter(agent_lock);
        atomic_store(&finishes_when_entered, atomic_load(&gc_finishes));
        pi->RawMonitorExit(agent_lock);
        break;
    case HOLD_ENTER_BOTH:
        pi->RawMonitorEnter(agent_lock);
        say_in_handler();
        pi->RawMonitorEnter(second_lock);
        pi->RawMonitorExit(second_lock);
        pi->RawMonitorExit(agent_lock);
        break;
    case HOLD_WAIT:
        pi->RawMonitorEnter(agent_lock);
        say_in_handler();
        pi->RawMonitorWait(agent_lock, 0);
        pi->RawMonitorExit(agent_lock);
        break;
    default:
        break;
    }
}

static void setup(void)
{
    unsetenv("JVMPI_LAYER_OPTIONS");
    layer_reset();
    fake_reset();
    ids_reset();
    ck_assert_int_eq(layer_onload(NULL, NULL), JNI_OK);
    pi = interface_table();
    pi->NotifyEvent = handler;
    fake_set_thread_env(ENV_MAIN);
    fake_thread(ENV_MAIN, seam_id_from_tag(0x200000), "main");
    layer_vm_init(ENV_MAIN);
    agent_lock = pi->RawMonitorCreate("agent lock");
    second_lock = pi->RawMonitorCreate("second lock");
    atomic_store(&hold_type, 0);
    atomic_store(&hold_how, HOLD_NOTHING);
    atomic_store(&gc_starts, 0);
    atomic_store(&gc_finishes, 0);
    atomic_store(&finishes_when_entered, -1);
    in_handler = let_go = false;
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_DATA_DUMP_REQUEST, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_GC_START, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_GC_FINISH, NULL), JVMPI_SUCCESS);
}

static void teardown(void)
{
    layer_reset();
    ids_reset();
}

static void wait_in_handler(void)
{
    pthread_mutex_lock(&mu);
    while (!in_handler) {
        pthread_cond_wait(&cv, &mu);
    }
    pthread_mutex_unlock(&mu);
}

static void release_handler(void)
{
    pthread_mutex_lock(&mu);
    let_go = true;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* ---- the threads --------------------------------------------------------- */

static void *allocate(void *arg)
{
    (void)arg;
    seam_object_info info = {seam_id_from_tag(ids_next_object(24, 0)), NULL, JVMPI_INT, 24};
    layer_object_alloc(ENV(1), &info);
    return NULL;
}

static void *data_dump(void *arg)
{
    (void)arg;
    layer_data_dump_request();
    return NULL;
}

static void *shut_down(void *arg)
{
    (void)arg;
    dispatch_plain(ENV(2), JVMPI_EVENT_JVM_SHUT_DOWN);
    return NULL;
}

/* JVM_INIT_DONE stands for any event not issued with GC disabled that is no
 * data request: gated, but its handler blocked on a raw monitor is parked. */
static void *init_done(void *arg)
{
    (void)arg;
    dispatch_plain(ENV(2), JVMPI_EVENT_JVM_INIT_DONE);
    return NULL;
}

static void *collect(void *arg)
{
    (void)arg;
    layer_gc_finish();
    gc_deliver_due(ENV_MAIN);
    return NULL;
}

static pthread_t start(void *(*fn)(void *))
{
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, fn, NULL), 0);
    return t;
}

/* The handler of type on a new thread (running fn), doing how; returns
 * once it is in there. */
static pthread_t start_held(int how, jint type, void *(*fn)(void *))
{
    pthread_mutex_lock(&mu);
    in_handler = false;
    pthread_mutex_unlock(&mu);
    atomic_store(&hold_how, how);
    atomic_store(&hold_type, type);
    pthread_t t = start(fn);
    wait_in_handler();
    return t;
}

/* Whether the window ended within ms; the thread is joined either way, once
 * the test has let the handler go (a hung window is left, the test failed). */
static bool window_done_within(pthread_t collector, long ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    return pthread_timedjoin_np(collector, NULL, &until) == 0;
}

/* ---- the tests ----------------------------------------------------------- */

/* The rule as it was: a running OBJECT_ALLOC handler holds the window up. */
START_TEST(test_id_bearing_handler_holds_the_window)
{
    pthread_t a = start_held(HOLD_BLOCK, JVMPI_EVENT_OBJECT_ALLOC, allocate);
    pthread_t c = start(collect);
    pause_ms(100);
    ck_assert_int_eq(atomic_load(&gc_starts), 0);
    release_handler();
    ck_assert(window_done_within(c, 5000));
    pthread_join(a, NULL);
    ck_assert_int_eq(atomic_load(&gc_finishes), 1);
}
END_TEST

/* DATA_DUMP_REQUEST carries no object ID: its handler, however long it
 * takes, is no reason for a window to wait (HotSpot 5.0 ran it like native
 * code, which a collection never waited for). */
START_TEST(test_data_dump_handler_does_not_hold_the_window)
{
    pthread_t d = start_held(HOLD_BLOCK, JVMPI_EVENT_DATA_DUMP_REQUEST, data_dump);
    bool done = window_done_within(start(collect), 3000);
    release_handler();
    pthread_join(d, NULL);
    ck_assert_msg(done, "a GC window waited for a DATA_DUMP_REQUEST handler");
    ck_assert_int_eq(atomic_load(&gc_finishes), 1);
}
END_TEST

/* The hang at exit: the agent's lock is owned by a thread waiting for a
 * window (RunGC in its DATA_DUMP_REQUEST handler), and the JVM_SHUT_DOWN
 * handler blocks on that lock.  Blocked there, it runs no agent code: the
 * window goes on.  Its events are not delivered: from JVM_SHUT_DOWN on, only
 * what that event's handler causes itself reaches the agent. */
START_TEST(test_handler_blocked_on_a_raw_monitor_does_not_hold_the_window)
{
    pi->RawMonitorEnter(agent_lock);
    pthread_t a = start_held(HOLD_ENTER, JVMPI_EVENT_JVM_SHUT_DOWN, shut_down);
    pause_ms(50); /* into RawMonitorEnter */
    bool done = window_done_within(start(collect), 3000);
    pi->RawMonitorExit(agent_lock);
    pthread_join(a, NULL);
    ck_assert_msg(done, "a GC window waited for a JVM_SHUT_DOWN handler blocked in RawMonitorEnter");
    ck_assert_int_eq(atomic_load(&gc_finishes), 0);
}
END_TEST

/* The same before shut-down: the window is delivered, and the handler gets
 * the lock only after it has ended. */
START_TEST(test_plain_handler_blocked_on_a_raw_monitor_does_not_hold_the_window)
{
    pi->RawMonitorEnter(agent_lock);
    pthread_t a = start_held(HOLD_ENTER, JVMPI_EVENT_JVM_INIT_DONE, init_done);
    pause_ms(50); /* into RawMonitorEnter */
    bool done = window_done_within(start(collect), 3000);
    pi->RawMonitorExit(agent_lock);
    pthread_join(a, NULL);
    ck_assert_msg(done, "a GC window waited for a handler blocked in RawMonitorEnter");
    ck_assert_int_eq(atomic_load(&finishes_when_entered), 1);
}
END_TEST

/* An OBJECT_ALLOC handler blocked on a raw monitor does hold it up: JVMPI
 * issues OBJECT_ALLOC with GC disabled (HotSpot 5.0 held collections off
 * with its GC_locker meanwhile). */
START_TEST(test_id_bearing_handler_blocked_on_a_raw_monitor_holds_the_window)
{
    pi->RawMonitorEnter(agent_lock);
    pthread_t a = start_held(HOLD_ENTER, JVMPI_EVENT_OBJECT_ALLOC, allocate);
    pause_ms(50);
    pthread_t c = start(collect);
    pause_ms(100);
    ck_assert_int_eq(atomic_load(&gc_starts), 0);
    pi->RawMonitorExit(agent_lock);
    ck_assert(window_done_within(c, 5000));
    pthread_join(a, NULL);
    ck_assert_int_eq(atomic_load(&finishes_when_entered), 0);
}
END_TEST

/* ... and one that gets the monitor while a window is open takes it only
 * after GC_FINISH: from its return on it runs agent code again. */
START_TEST(test_raw_monitor_taken_after_the_window)
{
    pi->RawMonitorEnter(agent_lock);
    pthread_t a = start_held(HOLD_ENTER, JVMPI_EVENT_JVM_INIT_DONE, init_done);
    pause_ms(50);
    /* A window held open by its own GC_START handler. */
    pthread_t c = start_held(HOLD_BLOCK, JVMPI_EVENT_GC_START, collect);
    pi->RawMonitorExit(agent_lock);
    pause_ms(100);
    ck_assert_int_eq(atomic_load(&finishes_when_entered), -1);
    release_handler();
    ck_assert(window_done_within(c, 5000));
    pthread_join(a, NULL);
    ck_assert_int_eq(atomic_load(&finishes_when_entered), 1);
}
END_TEST

/* The hang seen once at exit: a plain handler holds the agent's lock and
 * blocks on a second one (parked); an OBJECT_ALLOC handler waits for the
 * agent's lock, holding the window up; the collector waits for it.  When
 * the second lock comes free, the plain handler goes on and lets the
 * agent's lock go (HotSpot 5.0 ran such a thread on while a collection
 * was pending), rather than waiting for a window that waits for it. */
START_TEST(test_handler_back_from_a_raw_monitor_goes_on_while_the_window_waits)
{
    pi->RawMonitorEnter(second_lock);
    pthread_t p = start_held(HOLD_ENTER_BOTH, JVMPI_EVENT_JVM_INIT_DONE, init_done);
    pause_ms(50); /* holding the agent's lock, into RawMonitorEnter of the second */
    pthread_t a = start_held(HOLD_ENTER, JVMPI_EVENT_OBJECT_ALLOC, allocate);
    pause_ms(50); /* into RawMonitorEnter of the agent's lock */
    pthread_t c = start(collect);
    pause_ms(100);
    ck_assert_int_eq(atomic_load(&gc_starts), 0);
    pi->RawMonitorExit(second_lock);
    ck_assert_msg(window_done_within(c, 5000), "the window, the OBJECT_ALLOC handler and the plain one wait for each other");
    pthread_join(p, NULL);
    pthread_join(a, NULL);
    ck_assert_int_eq(atomic_load(&finishes_when_entered), 0);
}
END_TEST

/* RawMonitorWait in a handler: waiting, it holds nothing up. */
START_TEST(test_handler_in_raw_monitor_wait_does_not_hold_the_window)
{
    pthread_t a = start_held(HOLD_WAIT, JVMPI_EVENT_JVM_INIT_DONE, init_done);
    pause_ms(50); /* into RawMonitorWait */
    bool done = window_done_within(start(collect), 3000);
    pi->RawMonitorEnter(agent_lock);
    pi->RawMonitorNotifyAll(agent_lock);
    pi->RawMonitorExit(agent_lock);
    pthread_join(a, NULL);
    ck_assert_msg(done, "a GC window waited for a handler in RawMonitorWait");
}
END_TEST

static Suite *gate_suite(void)
{
    Suite *s = suite_create("gate");
    TCase *tc = tcase_create("windows");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_id_bearing_handler_holds_the_window);
    tcase_add_test(tc, test_data_dump_handler_does_not_hold_the_window);
    tcase_add_test(tc, test_handler_blocked_on_a_raw_monitor_does_not_hold_the_window);
    tcase_add_test(tc, test_plain_handler_blocked_on_a_raw_monitor_does_not_hold_the_window);
    tcase_add_test(tc, test_id_bearing_handler_blocked_on_a_raw_monitor_holds_the_window);
    tcase_add_test(tc, test_raw_monitor_taken_after_the_window);
    tcase_add_test(tc, test_handler_in_raw_monitor_wait_does_not_hold_the_window);
    tcase_add_test(tc, test_handler_back_from_a_raw_monitor_goes_on_while_the_window_waits);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(gate_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
