/*
 * a_common.h - small helpers shared by the a_*.c test agents.
 *
 * The agents stay "legacy": they see only jvmpi.h (and jni.h through it),
 * libc and pthreads, as an agent built against JDK 5.0 would.  Each agent is
 * its own shared library, so everything here is static.
 *
 * Output convention: one line per fact, flushed at once so that a crash still
 * leaves a trail; lines starting with "FAIL" are failures the agent found
 * itself (tests/integration/lib.sh looks for them).
 */
#ifndef A_COMMON_H_
#define A_COMMON_H_

#include <jvmpi.h>

#include "agent_util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static JVMPI_Interface *a_jvmpi;
static JavaVM *a_vm;
static FILE *a_out;
static pthread_mutex_t a_io_lock = PTHREAD_MUTEX_INITIALIZER;
static int a_failures;

static inline void a_vline(const char *prefix, const char *fmt, va_list ap)
{
    agent_vline(a_out, &a_io_lock, prefix, fmt, ap);
}

__attribute__((format(printf, 1, 2)))
static inline void a_rec(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    a_vline("", fmt, ap);
    va_end(ap);
}

/* Failures go to the record file and to stderr, so that they show up in the
 * ctest log even when the script only prints the file on mismatch. */
__attribute__((format(printf, 1, 2)))
static inline void a_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    __atomic_add_fetch(&a_failures, 1, __ATOMIC_SEQ_CST);
    agent_vfail(a_out, &a_io_lock, fmt, ap);
    va_end(ap);
}

/* Value of KEY in an option string "k1=v1,k2=v2" (malloc'ed), or NULL. */
static inline char *a_opt(const char *options, const char *key)
{
    return agent_opt(options, key);
}

/* The JNIEnv of the calling thread, straight from the VM: lets a handler
 * check that an event arrives on the thread it claims to be about. */
static inline JNIEnv *a_current_env(void)
{
    JNIEnv *env = NULL;
    if (!a_vm || (*a_vm)->GetEnv(a_vm, (void **)&env, JNI_VERSION_1_2) != JNI_OK)
        return NULL;
    return env;
}

/* Legacy agents read whatever union member they like (some read class_load
 * fields in a CLASS_UNLOAD handler), so every byte the event type does not
 * use must be zero: the header padding and the union beyond USED_END. */
static inline void a_check_zero_range(const JVMPI_Event *ev, size_t from, size_t to,
                                      const char *what)
{
    const unsigned char *p = (const unsigned char *)ev;
    for (size_t i = from; i < to; i++) {
        if (p[i]) {
            a_fail("%s: event type %d has non-zero byte 0x%02x at offset %zu (expected zero in [%zu,%zu))",
                   what, ev->event_type, p[i], i, from, to);
            return;
        }
    }
}

static inline void a_check_unused_zero(const JVMPI_Event *ev, size_t used_end, const char *what)
{
    a_check_zero_range(ev, offsetof(JVMPI_Event, event_type) + sizeof(jint),
                       offsetof(JVMPI_Event, env_id), what);
    a_check_zero_range(ev, used_end, sizeof(JVMPI_Event), what);
}

#define A_USED_END(member) (offsetof(JVMPI_Event, u) + sizeof(((JVMPI_Event *)0)->u.member))

/* Opens the record file named by out=..., gets the JVMPI interface. */
static inline jint a_setup(JavaVM *vm, const char *options)
{
    a_vm = vm;
    a_out = agent_open_out(options, NULL);
    jint rc = (*vm)->GetEnv(vm, (void **)&a_jvmpi, JVMPI_VERSION_1_2);
    if (rc != JNI_OK || !a_jvmpi) {
        a_fail("GetEnv(JVMPI_VERSION_1_2) returned %d", (int)rc);
        return JNI_ERR;
    }
    return JNI_OK;
}

static inline void a_expect_enable(jint type, const char *name)
{
    jint rc = a_jvmpi->EnableEvent(type, NULL);
    if (rc != JVMPI_SUCCESS)
        a_fail("EnableEvent(%s) returned %d", name, (int)rc);
}

/* A set of IDs with a name each (open addressing; callers lock). */
typedef struct {
    const void *key;
    char *name;
} a_slot;

typedef struct {
    a_slot *slots;
    size_t cap;
    size_t used;
} a_idmap;

static inline size_t a_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static inline a_slot *a_idmap_find(a_idmap *m, const void *key)
{
    if (!m->cap)
        return NULL;
    for (size_t i = a_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->slots[i].key == key)
            return &m->slots[i];
        if (!m->slots[i].key)
            return NULL;
    }
}

/* Returns the existing slot if KEY is already there (name untouched). */
static inline a_slot *a_idmap_put(a_idmap *m, const void *key, const char *name, int *existed)
{
    a_slot *s = a_idmap_find(m, key);
    if (s) {
        *existed = 1;
        return s;
    }
    *existed = 0;
    if ((m->used + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 1024;
        a_slot *ns = calloc(ncap, sizeof *ns);
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->slots[i].key)
                continue;
            size_t j = a_hash(m->slots[i].key) & (ncap - 1);
            while (ns[j].key)
                j = (j + 1) & (ncap - 1);
            ns[j] = m->slots[i];
        }
        free(m->slots);
        m->slots = ns;
        m->cap = ncap;
    }
    size_t j = a_hash(key) & (m->cap - 1);
    while (m->slots[j].key)
        j = (j + 1) & (m->cap - 1);
    m->slots[j].key = key;
    m->slots[j].name = strdup(name ? name : "(null)");
    m->used++;
    return &m->slots[j];
}

static inline int a_streq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static inline const char *a_str(const char *s)
{
    return s ? s : "(null)";
}

#endif /* A_COMMON_H_ */
