/*
 * test_check.c - jvmti_backend/check.c, through which every JVM TI call's
 * failure is told: an error line naming the call, the error and where it
 * was made; none for a request cut short by the VM's death.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "backend.h"
#include "log.h"

_Atomic bool bk_vm_dead; /* agent.c's, which this suite does not link */

static jvmtiError JNICALL fake_get_error_name(jvmtiEnv *env, jvmtiError error, char **name)
{
    return JVMTI_ERROR_NOT_AVAILABLE; /* the line then says "unknown error" */
}

static struct jvmtiInterface_1_ fake_functions;
static const struct jvmtiInterface_1_ *fake_env = &fake_functions;
static char log_path[] = "/tmp/test_check_XXXXXX";

static void setup(void)
{
    memset(&fake_functions, 0, sizeof fake_functions);
    fake_functions.GetErrorName = fake_get_error_name;
    bk.jvmti = (jvmtiEnv *)&fake_env;
    atomic_store(&bk_vm_dead, false);
    int fd = mkstemp(log_path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(log_set_file(log_path), 0);
}

static void teardown(void) { unlink(log_path); }

/* What the log holds (the first 4 KB). */
static const char *logged(void)
{
    static char text[4096];
    FILE *f = fopen(log_path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

START_TEST(test_a_failure_is_one_line_naming_the_call_and_place)
{
    ck_assert_int_eq(bk_check(JVMTI_ERROR_INVALID_OBJECT, false, "GetTag", "finder.c", 115), JVMTI_ERROR_INVALID_OBJECT);
    ck_assert_ptr_nonnull(strstr(logged(), "JVM TI GetTag failed: unknown error (20) at finder.c:115\n"));
}
END_TEST

START_TEST(test_wrong_phase_before_vm_death_is_an_error)
{
    bk_check(JVMTI_ERROR_WRONG_PHASE, false, "GetTag", "finder.c", 115);
    ck_assert_ptr_nonnull(strstr(logged(), "GetTag failed"));
}
END_TEST

START_TEST(test_wrong_phase_after_vm_death_is_quiet)
{
    atomic_store(&bk_vm_dead, true);
    ck_assert_int_eq(bk_check(JVMTI_ERROR_WRONG_PHASE, false, "GetTag", "finder.c", 115), JVMTI_ERROR_WRONG_PHASE);
    ck_assert_str_eq(logged(), "");
    /* Any other failure still is one. */
    bk_check(JVMTI_ERROR_INVALID_OBJECT, false, "GetTag", "finder.c", 116);
    ck_assert_ptr_nonnull(strstr(logged(), "finder.c:116"));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("check");
    TCase *tc = tcase_create("errors");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_a_failure_is_one_line_naming_the_call_and_place);
    tcase_add_test(tc, test_wrong_phase_before_vm_death_is_an_error);
    tcase_add_test(tc, test_wrong_phase_after_vm_death_is_quiet);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
