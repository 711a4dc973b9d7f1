/*
 * test_log.c - a refused call's error line is printed the first few times
 * for each kind (the call and the reason), then counted, and the count
 * comes at VM death (jvmpi/log.c).  An agent built for another word size
 * can make tens of thousands of refused calls; each must still be known,
 * by number, without a line each.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "fake_backend.h"
#include "layer.h"
#include "log.h"
#include "stderr_capture.h"

static char env_tokens[4];
#define ENV_MAIN ((JNIEnv *)(void *)&env_tokens[0])
#define THREAD_ID_MAIN seam_id_from_tag(0x200000)

static JVMPI_Interface *pi;

static void setup(void)
{
    pi = fake_layer_loaded(ENV_MAIN);
    ck_assert_ptr_nonnull(pi);
    fake_thread(ENV_MAIN, THREAD_ID_MAIN, "main");
    layer_vm_init(ENV_MAIN);
    ck_assert(layer_is_live());
}

static void teardown(void) { layer_reset(); }

/* Lines that contain text. */
static int lines_with(const stderr_capture *c, const char *text)
{
    int count = 0;
    for (const char *line = c->text; *line != '\0';) {
        const char *eol = strchr(line, '\n');
        size_t len = eol != NULL ? (size_t)(eol - line) : strlen(line);
        char one[512];
        snprintf(one, sizeof one, "%.*s", (int)len, line);
        if (strstr(one, text) != NULL) {
            count++;
        }
        if (eol == NULL) {
            break;
        }
        line = eol + 1;
    }
    return count;
}

/* IDs no class has: what a 32-bit agent reads out of a 64-bit heap dump. */
static jobjectID bogus_id(int i) { return (jobjectID)(uintptr_t)(0x10000u + (unsigned)i * 8u); }

START_TEST(test_flood_is_counted)
{
    stderr_capture c;
    stderr_capture_begin(&c);
    for (int i = 0; i < 1000; i++) {
        ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, bogus_id(i)), JVMPI_FAIL);
    }
    for (int i = 0; i < 3; i++) {
        ck_assert_ptr_null(pi->GetMethodClass(NULL));
    }
    layer_vm_death(ENV_MAIN);
    stderr_capture_end(&c);

    /* The first 5 as they were, each with its own ID. */
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: RequestEvent(CLASS_LOAD): 0x"), 5);
    ck_assert_int_eq(lines_with(&c, "is not a class ID"), 5 + 2);
    /* One line when the 6th is held back, one with the count at VM death. */
    ck_assert_int_eq(lines_with(&c, "are counted, not printed"), 1);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: RequestEvent(CLASS_LOAD): 995 more calls refused "
                                              "for the same reason: ... is not a class ID"), 1);
    /* Fewer than the limit: each printed, nothing to count. */
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: GetMethodClass: NULL method ID"), 3);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: "), 5 + 2 + 3);
}
END_TEST

/* Several threads refusing at once: not one refusal lost from the count. */
enum { RACERS = 4, EACH = 2500 };

static void *racer(void *arg)
{
    (void)arg;
    for (int i = 0; i < EACH; i++) {
        log_refused("RawMonitorExit", "raw monitor \"%s\" is not owned by this thread", "racy");
    }
    return NULL;
}

START_TEST(test_threads_count_exactly)
{
    stderr_capture c;
    stderr_capture_begin(&c);
    pthread_t th[RACERS];
    for (int i = 0; i < RACERS; i++) {
        ck_assert_int_eq(pthread_create(&th[i], NULL, racer, NULL), 0);
    }
    for (int i = 0; i < RACERS; i++) {
        pthread_join(th[i], NULL);
    }
    log_refusals_summary();
    stderr_capture_end(&c);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: RawMonitorExit: raw monitor \"racy\""), 5);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: RawMonitorExit: further calls refused for the same "
                                              "reason (raw monitor \"...\" is not owned by this thread) are counted, "
                                              "not printed"), 1);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: RawMonitorExit: 9,995 more calls refused for the "
                                              "same reason: raw monitor \"...\" is not owned by this thread\n"), 1);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: "), 7);
}
END_TEST

/* A kind is the call and the reason, by their text: the same reason for
 * another call is another kind, and a call's name built at run time is
 * the same kind as the literal. */
START_TEST(test_kinds)
{
    char built[32];
    snprintf(built, sizeof built, "%s", "GetThreadStatus");
    stderr_capture c;
    stderr_capture_begin(&c);
    for (int i = 0; i < 4; i++) {
        log_refused("GetThreadStatus", "JNIEnv %p is not a live thread the layer knows", (void *)built);
        log_refused(built, "JNIEnv %p is not a live thread the layer knows", (void *)built);
        log_refused("ThreadHasRun", "JNIEnv %p is not a live thread the layer knows", (void *)built);
        log_refused("GetThreadStatus", "NULL JNIEnv *");
    }
    log_refusals_summary();
    stderr_capture_end(&c);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: GetThreadStatus: JNIEnv 0x"), 5);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: GetThreadStatus: further calls"), 1);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: GetThreadStatus: 3 more calls refused for the same "
                                              "reason: JNIEnv ... is not a live thread the layer knows\n"), 1);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: ThreadHasRun: JNIEnv 0x"), 4);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: GetThreadStatus: NULL JNIEnv *"), 4);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: "), 5 + 1 + 1 + 4 + 4);
}
END_TEST

/* After the count has been given nothing would report a refusal that is
 * only counted: from then on each is printed. */
START_TEST(test_printed_after_summary)
{
    for (int i = 0; i < 7; i++) {
        log_refused("EnableGC", "called more often than DisableGC");
    }
    stderr_capture c;
    stderr_capture_begin(&c);
    log_refusals_summary();
    log_refusals_summary(); /* the count is given once */
    log_refused("EnableGC", "called more often than DisableGC");
    log_refused("EnableGC", "called more often than DisableGC");
    stderr_capture_end(&c);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: EnableGC: 2 more calls refused"), 1);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: EnableGC: called more often than DisableGC\n"), 2);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: "), 3);
}
END_TEST

/* Errors that are no refused call are printed every time. */
START_TEST(test_other_errors_not_counted)
{
    stderr_capture c;
    stderr_capture_begin(&c);
    for (int i = 0; i < 8; i++) {
        LOG_ERROR("out of memory recording thread %s", "t");
    }
    log_refusals_summary();
    stderr_capture_end(&c);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: out of memory recording thread t\n"), 8);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: "), 8);
}
END_TEST

/* ProfilerExit ends the process without VM death: the count comes first. */
START_TEST(test_count_at_profiler_exit)
{
    stderr_capture c;
    stderr_capture_begin(&c);
    for (int i = 0; i < 20; i++) {
        pi->RawMonitorEnter(NULL);
    }
    pi->ProfilerExit(3);
    stderr_capture_end(&c);
    ck_assert_int_eq(fake.halt_calls, 1);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: RawMonitorEnter: NULL raw monitor\n"), 5);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: RawMonitorEnter: 15 more calls refused for the "
                                              "same reason: NULL raw monitor\n"), 1);
}
END_TEST

Suite *log_suite(void);
Suite *log_suite(void)
{
    Suite *s = suite_create("log");
    TCase *tc = tcase_create("refusals");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_flood_is_counted);
    tcase_add_test(tc, test_threads_count_exactly);
    tcase_add_test(tc, test_kinds);
    tcase_add_test(tc, test_printed_after_summary);
    tcase_add_test(tc, test_other_errors_not_counted);
    tcase_add_test(tc, test_count_at_profiler_exit);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(log_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
