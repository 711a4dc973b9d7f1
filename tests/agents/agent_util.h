/*
 * agent_util.h - what the test agents' helper headers (a_common.h,
 * c_common.h, e_common.h) share: the option lookup, the way a line is
 * written, the out= file.  Legacy like them: jvmpi.h, libc and pthreads
 * only, and static, so each agent library has its own copy.
 */
#ifndef AGENT_UTIL_H_
#define AGENT_UTIL_H_

#include <jvmpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Value of KEY in an option string "k1=v1,k2=v2" (malloc'ed), or NULL. */
static inline char *agent_opt(const char *options, const char *key)
{
    if (!options)
        return NULL;
    size_t klen = strlen(key);
    const char *p = options;
    while (*p) {
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        if ((size_t)(end - p) > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
            size_t vlen = (size_t)(end - p) - klen - 1;
            char *v = malloc(vlen + 1);
            if (!v)
                return NULL;
            memcpy(v, p + klen + 1, vlen);
            v[vlen] = '\0';
            return v;
        }
        p = *end ? end + 1 : end;
    }
    return NULL;
}

/* One line to out (stderr when there is none), flushed at once so that a
 * crash still leaves a trail. */
static inline void agent_vline(FILE *out, pthread_mutex_t *lock, const char *prefix, const char *fmt, va_list ap)
{
    pthread_mutex_lock(lock);
    FILE *f = out ? out : stderr;
    fputs(prefix, f);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    fflush(f);
    pthread_mutex_unlock(lock);
}

/* A failure's line; copied to stderr when the lines go to a file, so that
 * a failing ctest shows it even when the script prints the file only on a
 * mismatch. */
static inline void agent_vfail(FILE *out, pthread_mutex_t *lock, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    agent_vline(out, lock, "FAIL ", fmt, ap);
    if (out)
        agent_vline(NULL, lock, "FAIL ", fmt, copy);
    va_end(copy);
}

/* The file named by out=, or NULL (stderr then); one that cannot be
 * opened is a failure on stderr, after the agent's name when it has one. */
static inline FILE *agent_open_out(const char *options, const char *agent)
{
    char *path = agent_opt(options, "out");
    FILE *f = NULL;
    if (path) {
        f = fopen(path, "w");
        if (!f)
            fprintf(stderr, "FAIL %s%scannot open %s\n", agent ? agent : "", agent ? ": " : "", path);
        free(path);
    }
    return f;
}

#endif
