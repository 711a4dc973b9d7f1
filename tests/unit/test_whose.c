/*
 * test_whose.c - the pipeline's thread stage (jvmpi/whose.c): which thread
 * an event belongs to, against the fake backend.  First whose_decide
 * itself, then the same rules seen through a delivery (events_deliver).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "deliver_fixture.h"
#include "events.h"
#include "fake_backend.h"
#include "ids.h"
#include "layer.h"
#include "threads.h"
#include "whose.h"

static void setup(void)
{
    layer_reset();
    fake_reset();
    events_reset();
    deliver_counts_reset();
}

static jobjectID new_id(void) { return seam_id_from_tag(ids_next_object(16, 0)); }

/* The table caches the calling thread's record: another thread is another
 * identity. */
static void on_new_thread(void *(*body)(void *), void *arg)
{
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, body, arg), 0);
    pthread_join(th, NULL);
}

/* ------------------------------------------------------------------------ */
/* whose_decide                                                              */
/* ------------------------------------------------------------------------ */

/* Before VM init no thread is known: the event carries what it came with. */
START_TEST(test_before_init_carries_its_env)
{
    whose w;
    ck_assert(whose_decide(ENV_B, JVMPI_EVENT_CLASS_LOAD_HOOK, &w));
    ck_assert_ptr_eq(w.env_id, ENV_B);
    ck_assert_ptr_null(w.me);
    ck_assert(!w.as.pushed);
    ck_assert_int_eq(fake.adopt_calls, 0);
    whose_done(&w);
}
END_TEST

/* The calling thread, known: its own record and env_id, nothing held. */
START_TEST(test_known_thread_is_its_own)
{
    fake_thread(ENV_A, new_id(), "a");
    layer_vm_init(ENV_A);
    whose w;
    ck_assert(whose_decide(ENV_A, JVMPI_EVENT_OBJECT_ALLOC, &w));
    ck_assert_ptr_eq(w.env_id, ENV_A);
    ck_assert_ptr_nonnull(w.me);
    ck_assert_ptr_eq(w.me->info.env, ENV_A);
    ck_assert(!w.as.pushed);
    ck_assert_ptr_eq(whose_usual(ENV_A), w.me);
    whose_done(&w);
}
END_TEST

static void *decide_hidden(void *arg)
{
    thread_rec *a = arg;
    whose w;
    ck_assert(whose_decide(ENV_B, JVMPI_EVENT_COMPILED_METHOD_LOAD, &w));
    ck_assert_ptr_eq(w.env_id, ENV_A);
    ck_assert_ptr_null(w.me);
    ck_assert_int_eq(a->standing_in, 1);
    /* what the delivery itself causes on this thread names the same one */
    ck_assert_ptr_eq(whose_env_id(ENV_B), ENV_A);
    whose_done(&w);
    ck_assert_int_eq(a->standing_in, 0);
    ck_assert_ptr_null(whose_env_id(ENV_B));
    /* asked of the backend once: a hidden thread stays hidden */
    ck_assert(whose_decide(ENV_B, JVMPI_EVENT_COMPILED_METHOD_LOAD, &w));
    whose_done(&w);
    ck_assert_int_eq(fake.adopt_calls, 1);
    return NULL;
}

/* A thread the VM hides: its events carry the stand-in's env_id, and the
 * stand-in is held (its THREAD_END waits) until whose_done. */
START_TEST(test_unknown_thread_holds_a_stand_in)
{
    fake_thread(ENV_A, new_id(), "a");
    layer_vm_init(ENV_A);
    thread_rec *a = threads_acquire_by_env(ENV_A);
    ck_assert_ptr_nonnull(a);
    on_new_thread(decide_hidden, a);
    ck_assert_int_eq(a->standing_in, 0);
    threads_release(a);
}
END_TEST

static void *decide_internal(void *arg)
{
    seam_thread_info info;
    memset(&info, 0, sizeof info);
    info.env = ENV_C;
    info.id = new_id();
    info.name = strdup("layer's own");
    info.internal = true;
    threads_release(threads_add(&info, true));
    whose w;
    ck_assert(!whose_decide(ENV_C, JVMPI_EVENT_OBJECT_ALLOC, &w));
    ck_assert_ptr_null(whose_usual(ENV_C));
    ck_assert_ptr_null(whose_env_id(ENV_C));
    (void)arg;
    return NULL;
}

/* The layer's own thread: nothing it does is an event. */
START_TEST(test_internal_thread_dropped)
{
    fake_thread(ENV_A, new_id(), "a");
    layer_vm_init(ENV_A);
    on_new_thread(decide_internal, NULL);
}
END_TEST

/* An override (the delivery thread sending for another) wins over the
 * calling thread's own identity, and is undone in order. */
START_TEST(test_override_wins_and_nests)
{
    fake_thread(ENV_A, new_id(), "a");
    layer_vm_init(ENV_A);
    whose_as outer, inner;
    whose_as_begin(&outer, ENV_B);
    whose w;
    ck_assert(whose_decide(ENV_A, JVMPI_EVENT_GC_START, &w));
    ck_assert_ptr_eq(w.env_id, ENV_B);
    ck_assert_ptr_null(w.me);
    ck_assert_ptr_null(whose_usual(ENV_A));
    whose_done(&w);
    whose_as_begin(&inner, ENV_C);
    ck_assert_ptr_eq(whose_env_id(ENV_A), ENV_C);
    whose_as_end(&inner);
    ck_assert_ptr_eq(whose_env_id(ENV_A), ENV_B);
    whose_as_end(&outer);
    ck_assert_ptr_eq(whose_env_id(ENV_A), ENV_A);
}
END_TEST

/* whose_known_env: the env the agents know the caller by, or env itself. */
START_TEST(test_known_env)
{
    ck_assert_ptr_eq(whose_known_env(ENV_B), ENV_B);
    fake_thread(ENV_A, new_id(), "a");
    ck_assert_ptr_eq(whose_known_env(ENV_A), ENV_A);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* the same rules through a delivery                                         */
/* ------------------------------------------------------------------------ */

static void *deliver_from_b(void *arg)
{
    JVMPI_Event ev = plain(JVMPI_EVENT_DATA_DUMP_REQUEST);
    ev.env_id = ENV_B; /* overwritten */
    events_deliver(arg, &ev);
    return NULL;
}

static void deliver_on_new_thread(JNIEnv *env)
{
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, deliver_from_b, env), 0);
    pthread_join(th, NULL);
}

/* Every event carries the env_id of a thread the agent knows: a thread the
 * layer never heard of is recorded when the backend can (a Java thread
 * whose ThreadStart comes late), else its events carry a known thread's. */
START_TEST(test_deliver_names_known_threads)
{
    agent_a_listens();
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_DATA_DUMP_REQUEST), JVMPI_SUCCESS);
    fake_thread(ENV_A, seam_id_from_tag(ids_next_object(16, 0)), "a");
    layer_vm_init(ENV_A);

    /* a thread the VM hides (adopt answers false): A stands in */
    deliver_on_new_thread(ENV_B);
    ck_assert_int_eq(calls_a, 1);
    ck_assert_int_eq(fake.adopt_calls, 1);
    ck_assert_ptr_eq(last.env_id, ENV_A);
    /* no env at all (a thread outside the VM): A stands in, nothing to adopt */
    deliver_on_new_thread(NULL);
    ck_assert_int_eq(calls_a, 2);
    ck_assert_int_eq(fake.adopt_calls, 1);
    ck_assert_ptr_eq(last.env_id, ENV_A);

    /* a Java thread the backend can record: its events are its own */
    fake.adopt_name = "b";
    fake.adopt_id = seam_id_from_tag(ids_next_object(16, 0));
    deliver_on_new_thread(ENV_B);
    ck_assert_int_eq(calls_a, 3);
    ck_assert_int_eq(fake.adopt_calls, 2);
    ck_assert_ptr_eq(last.env_id, ENV_B);
}
END_TEST


static void *deliver_unborn(void *arg)
{
    JVMPI_Event ev = plain(JVMPI_EVENT_DATA_DUMP_REQUEST);
    events_deliver(ENV_B, &ev);
    ck_assert_int_eq(calls_a, 1);
    ck_assert_ptr_eq(last.env_id, ENV_A);
    ev = plain(JVMPI_EVENT_METHOD_ENTRY);
    events_deliver(ENV_B, &ev);
    ck_assert_int_eq(calls_a, 1);
    /* asked once: adopting it later in its constructor would give the
     * METHOD_EXITs of frames whose METHOD_ENTRY was held back */
    ck_assert_int_eq(fake.adopt_calls, 1);
    fake_thread(ENV_B, seam_id_from_tag(ids_next_object(16, 0)), "b"); /* its ThreadStart */
    events_deliver(ENV_B, &ev);
    ck_assert_int_eq(calls_a, 2);
    ck_assert_ptr_eq(last.env_id, ENV_B);
    (void)arg;
    return NULL;
}

/* JDK 8 runs an attaching thread's Thread constructor (DestroyJavaVM's)
 * before its ThreadStart: adopted then, its THREAD_START would name its
 * Thread before that object's OBJECT_ALLOC.  Its events go to a stand-in
 * until its ThreadStart, its method events nowhere. */
START_TEST(test_unborn_thread_not_adopted)
{
    agent_a_listens();
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_DATA_DUMP_REQUEST), JVMPI_SUCCESS);
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_METHOD_ENTRY), JVMPI_SUCCESS);
    fake_thread(ENV_A, seam_id_from_tag(ids_next_object(16, 0)), "a");
    layer_vm_init(ENV_A);
    fake.adopt_unborn = true;
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, deliver_unborn, NULL), 0);
    pthread_join(th, NULL);
}
END_TEST


/* The layer's own Java code is no event of the program's. */
START_TEST(test_quiet_and_internal_threads_send_nothing)
{
    agent_a_listens();
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_DATA_DUMP_REQUEST), JVMPI_SUCCESS);
    fake_thread(ENV_A, seam_id_from_tag(ids_next_object(16, 0)), "a");
    JVMPI_Event ev = plain(JVMPI_EVENT_DATA_DUMP_REQUEST);
    whose_quiet_begin();
    events_deliver(ENV_A, &ev);
    whose_quiet_end();
    ck_assert_int_eq(calls_a, 0);
    events_deliver(ENV_A, &ev);
    ck_assert_int_eq(calls_a, 1);
}
END_TEST


static Suite *whose_suite(void)
{
    Suite *s = suite_create("whose");
    TCase *tc;

    tc = tcase_create("decide");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_before_init_carries_its_env);
    tcase_add_test(tc, test_known_thread_is_its_own);
    tcase_add_test(tc, test_unknown_thread_holds_a_stand_in);
    tcase_add_test(tc, test_internal_thread_dropped);
    tcase_add_test(tc, test_override_wins_and_nests);
    tcase_add_test(tc, test_known_env);
    suite_add_tcase(s, tc);

    tc = tcase_create("deliver");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_deliver_names_known_threads);
    tcase_add_test(tc, test_unborn_thread_not_adopted);
    tcase_add_test(tc, test_quiet_and_internal_threads_send_nothing);
    suite_add_tcase(s, tc);

    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(whose_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
