/*
 * test_tlssignal.c - Get/SetThreadLocalStorage from a SIGPROF handler, as
 * sampling agents call them (JDK 5.0 kept the word in the VM's thread: no
 * lock, no allocation, no log line), for the calling thread, for other
 * threads, and for NULL and unknown JNIEnv *s.
 *
 * The handler runs while threads start and end, and, through the
 * pthread_mutex_lock below, right after the thread it interrupts took a
 * lock: a handler that took the same lock would wait for ever.  The lock
 * wrapper also counts the locks taken inside the handler.  Not under
 * AddressSanitizer, whose runtime wraps the pthread functions itself: the
 * timer-driven part runs there too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <check.h>

#include "fake_backend.h"
#include "interface.h"
#include "layer.h"
#include "stderr_capture.h"

static char env_tokens[64];
#define ENV(i) ((JNIEnv *)(void *)&env_tokens[(i)])
#define ENV_MAIN ENV(0)
#define ENV_STAYS ENV(1)
#define ENV_NEVER ENV(63)
#define THREAD_ID(i) seam_id_from_tag(0x200000 + (int64_t)(i) * 8)
#define CHURNED 40

static JVMPI_Interface *pi;
static int word_main, word_stays;

/* ---- the lock wrapper ------------------------------------------------------- */

static __thread volatile sig_atomic_t in_handler, raise_after_lock;
static atomic_int locks_in_handler;

#ifndef __SANITIZE_ADDRESS__
static int (*real_lock)(pthread_mutex_t *);

__attribute__((constructor)) static void find_real_lock(void)
{
    real_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
    if (in_handler) {
        atomic_fetch_add(&locks_in_handler, 1);
    }
    int rc = real_lock(m);
    if (rc == 0 && raise_after_lock && !in_handler) {
        raise(SIGPROF); /* the handler runs with m held */
    }
    return rc;
}
#endif

/* ---- the sampling agent's handler ---------------------------------------------- */

static __thread JNIEnv *my_env;
static atomic_int handler_runs, wrong_answers;

static void on_sigprof(int sig)
{
    (void)sig;
    in_handler = 1;
    atomic_fetch_add(&handler_runs, 1);
    int bad = 0;
    bad += pi->GetThreadLocalStorage(ENV_MAIN) != &word_main;
    bad += pi->GetThreadLocalStorage(ENV_STAYS) != &word_stays;
    bad += pi->GetThreadLocalStorage(ENV_NEVER) != NULL;
    bad += pi->GetThreadLocalStorage(NULL) != NULL;
    pi->SetThreadLocalStorage(ENV_NEVER, &word_main);
    pi->SetThreadLocalStorage(NULL, &word_main);
    /* threads coming and going: any answer but a crash will do */
    for (int i = 2; i < 2 + CHURNED; i++) {
        (void)pi->GetThreadLocalStorage(ENV(i));
    }
    if (my_env != NULL) {
        void *mine = pi->GetThreadLocalStorage(my_env);
        pi->SetThreadLocalStorage(my_env, mine);
        bad += pi->GetThreadLocalStorage(my_env) != mine;
    }
    atomic_fetch_add(&wrong_answers, bad);
    in_handler = 0;
}

/* ---- threads -------------------------------------------------------------------- */

static pthread_mutex_t stay_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stay_cond = PTHREAD_COND_INITIALIZER;
static bool stay_started, stay_release;

static void *stays_main(void *arg)
{
    (void)arg;
    fake_set_thread_env(ENV_STAYS);
    fake_set_thread_id(THREAD_ID(1));
    fake_thread(ENV_STAYS, THREAD_ID(1), "stays");
    pthread_mutex_lock(&stay_lock);
    stay_started = true;
    pthread_cond_broadcast(&stay_cond);
    while (!stay_release) {
        pthread_cond_wait(&stay_cond, &stay_lock);
    }
    pthread_mutex_unlock(&stay_lock);
    layer_thread_ended(ENV_STAYS);
    return NULL;
}

/* A short-lived thread: starts, sets its word, ends, with the handler run
 * after every lock it takes. */
static void *churned_main(void *arg)
{
    int i = (int)(intptr_t)arg;
    my_env = ENV(i);
    fake_set_thread_env(my_env);
    fake_set_thread_id(THREAD_ID(i));
    raise_after_lock = 1;
    fake_thread(my_env, THREAD_ID(i), "churned");
    pi->SetThreadLocalStorage(my_env, &word_stays);
    raise(SIGPROF);
    layer_thread_ended(my_env);
    raise_after_lock = 0;
    return NULL;
}

static void churn(void)
{
    for (int i = 2; i < 2 + CHURNED; i++) {
        pthread_t th;
        ck_assert_int_eq(pthread_create(&th, NULL, churned_main, (void *)(intptr_t)i), 0);
        pthread_join(th, NULL);
    }
}

static pthread_t stays;

static void setup(void)
{
    pi = fake_layer_loaded(ENV_MAIN);
    ck_assert_ptr_nonnull(pi);
    fake_thread(ENV_MAIN, THREAD_ID(0), "main");
    layer_vm_init(ENV_MAIN);
    my_env = ENV_MAIN;
    ck_assert_int_eq(pthread_create(&stays, NULL, stays_main, NULL), 0);
    pthread_mutex_lock(&stay_lock);
    while (!stay_started) {
        pthread_cond_wait(&stay_cond, &stay_lock);
    }
    pthread_mutex_unlock(&stay_lock);
    pi->SetThreadLocalStorage(ENV_MAIN, &word_main);
    pi->SetThreadLocalStorage(ENV_STAYS, &word_stays);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigprof;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGPROF, &sa, NULL), 0);
}

static void teardown(void)
{
    pthread_mutex_lock(&stay_lock);
    stay_release = true;
    pthread_cond_broadcast(&stay_cond);
    pthread_mutex_unlock(&stay_lock);
    pthread_join(stays, NULL);
    signal(SIGPROF, SIG_IGN);
    layer_reset();
}

/* The handler right after each lock a starting and ending thread takes
 * (the layer's table lock among them): it takes none, says nothing, and
 * answers every thread's word. */
START_TEST(test_tls_in_handler_under_locks)
{
    stderr_capture c;
    stderr_capture_begin(&c);
    raise(SIGPROF);
    churn();
    stderr_capture_end(&c);
    ck_assert_int_ge(atomic_load(&handler_runs), CHURNED + 1);
    ck_assert_int_eq(atomic_load(&wrong_answers), 0);
    ck_assert_int_eq(atomic_load(&locks_in_handler), 0);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: "), 0);
}
END_TEST

/* SIGPROF from the profiling timer, as a CPU sampler sets it, while
 * threads start and end. */
START_TEST(test_tls_in_timer_handler)
{
    struct itimerval every = {{0, 200}, {0, 200}}, off;
    memset(&off, 0, sizeof off);
    stderr_capture c;
    stderr_capture_begin(&c);
    ck_assert_int_eq(setitimer(ITIMER_PROF, &every, NULL), 0);
    for (int round = 0; round < 5 || atomic_load(&handler_runs) < 50; round++) {
        churn();
        ck_assert_int_lt(round, 500);
    }
    ck_assert_int_eq(setitimer(ITIMER_PROF, &off, NULL), 0);
    stderr_capture_end(&c);
    ck_assert_int_eq(atomic_load(&wrong_answers), 0);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: "), 0);
    /* after it all, the words are as set */
    ck_assert_ptr_eq(pi->GetThreadLocalStorage(ENV_MAIN), &word_main);
    ck_assert_ptr_eq(pi->GetThreadLocalStorage(ENV_STAYS), &word_stays);
    ck_assert_ptr_null(pi->GetThreadLocalStorage(ENV(2))); /* ended */
}
END_TEST

static Suite *tlssignal_suite(void)
{
    Suite *s = suite_create("tlssignal");
    TCase *tc = tcase_create("signal");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_tls_in_handler_under_locks);
    tcase_add_test(tc, test_tls_in_timer_handler);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(tlssignal_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
