/*
 * test_cpuclock.c - the calling thread's CPU time (jvmpi/cpuclock.c), fast
 * path or not: it follows the exact clock through busy work, does not grow
 * while the thread sleeps, never goes back, and a second thread has its own.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "cpuclock.h"

static int64_t exact(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile double sink;

static void busy_ms(int ms)
{
    int64_t until = exact() + (int64_t)ms * 1000000;
    while (exact() < until)
        for (int i = 0; i < 1000; i++)
            sink += i * 0.5;
}

/* Readings taken over `rounds` stretches of work, then busy_ms(then_ms):
 * they never go back, and they add up to what the exact clock saw, within
 * 2 ms or 5 %. */
static void check_follows_exact(int rounds, int then_ms)
{
    int64_t e0 = exact(), c0 = cpuclock_thread_ns();
    int64_t last = c0;
    for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < 20000; i++)
            sink += i;
        int64_t c = cpuclock_thread_ns();
        ck_assert_msg(c >= last, "went back: %lld after %lld", (long long)c, (long long)last);
        last = c;
    }
    if (then_ms > 0)
        busy_ms(then_ms);
    int64_t e1 = exact(), c1 = cpuclock_thread_ns();
    int64_t de = e1 - e0, dc = c1 - c0;
    int64_t slack = de / 20 > 2000000 ? de / 20 : 2000000;
    ck_assert_msg(dc > de - slack && dc < de + slack, "CPU time %lld ns by the clock, %lld ns exact", (long long)dc,
                  (long long)de);
}

START_TEST(test_follows_the_exact_clock)
{
    fprintf(stderr, "cpuclock: fast path %s\n", cpuclock_fast() ? "on" : "off (perf events not open to this process)");
    check_follows_exact(200, 100);
}
END_TEST

static bool kernel_keeps_time_by_tsc(void)
{
    char name[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f != NULL) {
        if (fgets(name, sizeof name, f) == NULL)
            name[0] = '\0';
        fclose(f);
    }
    return strcmp(name, "tsc\n") == 0;
}

/* Where the kernel keeps time with the time-stamp counter, the fast path
 * learns its rate within the first tenth of a second of readings and then
 * measures with it: still within the exact clock's bounds over busy work. */
START_TEST(test_time_stamp_counter)
{
    if (!cpuclock_fast()) {
        fprintf(stderr, "cpuclock: fast path off, the time-stamp counter is not tried\n");
        return;
    }
    for (int i = 0; i < 30 && !cpuclock_by_tsc(); i++) {
        busy_ms(10);
        usleep(1000); /* each return is a new exact reading */
        cpuclock_thread_ns();
    }
#if defined(__x86_64__)
    ck_assert_msg(cpuclock_by_tsc() == kernel_keeps_time_by_tsc(), "by the time-stamp counter: %d, kernel's clock tsc: %d",
                  cpuclock_by_tsc(), kernel_keeps_time_by_tsc());
#endif
    fprintf(stderr, "cpuclock: time-stamp counter %s\n", cpuclock_by_tsc() ? "on" : "off");
    check_follows_exact(2000, 0);
}
END_TEST

START_TEST(test_sleep_is_no_cpu_time)
{
    int64_t c0 = cpuclock_thread_ns();
    for (int i = 0; i < 5; i++) {
        usleep(20000);
        cpuclock_thread_ns();
    }
    int64_t c1 = cpuclock_thread_ns();
    ck_assert_msg(c1 - c0 < 20000000, "100 ms asleep counted %lld ns of CPU", (long long)(c1 - c0));
    ck_assert_int_ge(c1, c0);
}
END_TEST

static void *other(void *arg)
{
    int64_t *out = arg;
    int64_t c0 = cpuclock_thread_ns();
    usleep(50000);
    out[0] = cpuclock_thread_ns() - c0;
    return NULL;
}

START_TEST(test_each_thread_its_own)
{
    int64_t got[1] = {-1};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, other, got), 0);
    busy_ms(60); /* this thread works while the other one sleeps */
    pthread_join(t, NULL);
    ck_assert_msg(got[0] >= 0 && got[0] < 20000000, "the sleeping thread was given %lld ns", (long long)got[0]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cpuclock");
    TCase *tc = tcase_create("clock");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_follows_the_exact_clock);
    tcase_add_test(tc, test_sleep_is_no_cpu_time);
    tcase_add_test(tc, test_each_thread_its_own);
    tcase_add_test(tc, test_time_stamp_counter);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
