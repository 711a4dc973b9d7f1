/*
 * b_common.h - small helpers shared by the part-B test agents (tests/agents/b_*.c).
 *
 * Each agent is its own shared library, so everything here is static: every
 * agent gets a private copy.  The agents stay "legacy": nothing here needs
 * more than jvmpi.h, libc and pthreads.
 *
 * Output: every agent writes to the file named by the first option (the text
 * up to the first ','), or to stdout when there is none.  Failed checks are
 * lines starting with "FAIL", which lib.sh's expect_no_agent_failures finds;
 * passed checks are lines starting with "ok", which the scripts count so that
 * an agent that checked nothing cannot pass.
 */
#ifndef B_COMMON_H_
#define B_COMMON_H_

/* strndup, clock_gettime, pthread barriers: also when built without the
 * project's flags. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <jvmpi.h>

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static JavaVM *b_vm;
static JVMPI_Interface *b_pi;
static FILE *b_out;
static char b_out_path[1024];
static char b_opts[1024];
static pthread_mutex_t b_out_lock = PTHREAD_MUTEX_INITIALIZER;
static int b_failures;
static int b_passes;

static inline void b_vlog(const char *prefix, const char *fmt, va_list ap)
{
    pthread_mutex_lock(&b_out_lock);
    FILE *f = b_out ? b_out : stdout;
    fputs(prefix, f);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    fflush(f);
    pthread_mutex_unlock(&b_out_lock);
}

static inline void b_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    b_vlog("", fmt, ap);
    va_end(ap);
}

static inline void b_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    b_vlog("FAIL ", fmt, ap);
    va_end(ap);
    /* Also on stderr, so a failing ctest shows the reason without digging. */
    va_start(ap, fmt);
    fputs("FAIL ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    __atomic_add_fetch(&b_failures, 1, __ATOMIC_SEQ_CST);
}

/* Logs "ok <what>" or "FAIL <what>" and returns cond. */
static inline int b_check(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (cond) {
        b_vlog("ok ", fmt, ap);
        __atomic_add_fetch(&b_passes, 1, __ATOMIC_SEQ_CST);
    } else {
        va_list ap2;
        va_copy(ap2, ap);
        b_vlog("FAIL ", fmt, ap);
        fputs("FAIL ", stderr);
        vfprintf(stderr, fmt, ap2);
        fputc('\n', stderr);
        va_end(ap2);
        __atomic_add_fetch(&b_failures, 1, __ATOMIC_SEQ_CST);
    }
    va_end(ap);
    return cond;
}

/* Value of "key=" in the options after the first ',' (up to the next ','),
 * or NULL.  The copy is never freed: options are read a few times at most. */
static inline const char *b_opt(const char *key)
{
    const char *p = strchr(b_opts, ',');
    size_t n = strlen(key);
    while (p) {
        p++;
        if (strncmp(p, key, n) == 0 && p[n] == '=')
            return strndup(p + n + 1, strcspn(p + n + 1, ","));
        p = strchr(p, ',');
    }
    return NULL;
}

/* GetEnv for JVMPI, opening the output file.  Returns JNI_OK or JNI_ERR. */
static inline jint b_setup(JavaVM *vm, const char *options, const char *agent)
{
    b_vm = vm;
    snprintf(b_opts, sizeof b_opts, "%s", options ? options : "");
    size_t n = strcspn(b_opts, ",");
    if (n > 0 && n < sizeof b_out_path) {
        memcpy(b_out_path, b_opts, n);
        b_out_path[n] = '\0';
        b_out = fopen(b_out_path, "w");
        if (!b_out) {
            fprintf(stderr, "%s: cannot open %s: %s\n", agent, b_out_path, strerror(errno));
            return JNI_ERR;
        }
    }
    if ((*vm)->GetEnv(vm, (void **)&b_pi, JVMPI_VERSION_1_2) != JNI_OK || !b_pi) {
        fprintf(stderr, "%s: GetEnv(JVMPI_VERSION_1_2) failed\n", agent);
        return JNI_ERR;
    }
    return JNI_OK;
}

/* The calling thread's JNIEnv *, which is also its JVMPI thread handle. */
static inline JNIEnv *b_self_env(void)
{
    JNIEnv *env = NULL;
    if ((*b_vm)->GetEnv(b_vm, (void **)&env, JNI_VERSION_1_2) != JNI_OK)
        return NULL;
    return env;
}

static inline void b_sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static inline long long b_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The calling thread's CPU time from libc, to cross-check the layer's. */
static inline long long b_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Creates "<output file><suffix>": how an agent tells the Java side it is done. */
static inline void b_touch(const char *suffix)
{
    char path[1100];
    snprintf(path, sizeof path, "%s%s", b_out_path, suffix);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
    else
        b_fail("cannot create %s", path);
}

/* Waits up to timeout_ms until "<output file><suffix>" exists. */
static inline int b_wait_file(const char *suffix, long timeout_ms)
{
    char path[1100];
    struct stat st;
    snprintf(path, sizeof path, "%s%s", b_out_path, suffix);
    long long end = b_now_ms() + timeout_ms;
    while (stat(path, &st) != 0) {
        if (b_now_ms() > end)
            return 0;
        b_sleep_ms(20);
    }
    return 1;
}

/* The closing line every script looks for. */
static inline void b_summary(const char *agent)
{
    b_log("%s: finished, %d checks passed, %d failed", agent,
          __atomic_load_n(&b_passes, __ATOMIC_SEQ_CST),
          __atomic_load_n(&b_failures, __ATOMIC_SEQ_CST));
}

#endif /* B_COMMON_H_ */
