/*
 * c_common.h - helpers shared by the c_*.c test agents (heap, GC, JNI
 * references).
 *
 * The agents are "legacy": jvmpi.h (and jni.h through it), libc and pthreads
 * only.  Each agent is its own shared library, so everything here is static.
 * Several of them also hold JNI natives for their Java program, which loads
 * the very same .so with System.load; the statics are then shared between
 * the JVMPI side and the natives, which is the point.
 *
 * Output: one line per fact in the file named by out=..., flushed at once.
 * "FAIL ..." lines are failed checks (also copied to stderr), "ok ..." lines
 * passed ones; the closing line "<agent>: finished, P checks passed, F
 * failed" is what lib.sh's expect_summary reads.
 */
#ifndef C_COMMON_H_
#define C_COMMON_H_

#include <jvmpi.h>

#include "agent_util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static JVMPI_Interface *c_pi;
static JavaVM *c_vm;
static FILE *c_out;
static pthread_mutex_t c_io_lock = PTHREAD_MUTEX_INITIALIZER;
static int c_failures, c_passes;

static inline void c_vline(const char *prefix, const char *fmt, va_list ap)
{
    agent_vline(c_out, &c_io_lock, prefix, fmt, ap);
}

__attribute__((format(printf, 1, 2)))
static inline void c_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    c_vline("", fmt, ap);
    va_end(ap);
}

/* Failures also go to stderr, so that a failing ctest shows them. */
__attribute__((format(printf, 1, 2)))
static inline void c_fail(const char *fmt, ...)
{
    va_list ap;
    __atomic_add_fetch(&c_failures, 1, __ATOMIC_SEQ_CST);
    va_start(ap, fmt);
    agent_vfail(c_out, &c_io_lock, fmt, ap);
    va_end(ap);
}

/* Logs "ok ..." or "FAIL ..." and returns cond. */
__attribute__((format(printf, 2, 3)))
static inline int c_check(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (cond) {
        __atomic_add_fetch(&c_passes, 1, __ATOMIC_SEQ_CST);
        c_vline("ok ", fmt, ap);
    } else {
        va_end(ap);
        char buf[1024];
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        c_fail("%s", buf);
    }
    va_end(ap);
    return cond;
}

/* A failure counted once, however often it happens: handlers that see
 * millions of events must not flood the file.  The first few are shown. */
#define C_FAIL_SOME(counter, ...)                                                 \
    do {                                                                          \
        if (__atomic_add_fetch(&(counter), 1, __ATOMIC_SEQ_CST) <= 5)             \
            c_fail(__VA_ARGS__);                                                  \
    } while (0)

static inline void c_summary(const char *agent)
{
    c_log("%s: finished, %d checks passed, %d failed", agent,
          __atomic_load_n(&c_passes, __ATOMIC_SEQ_CST), __atomic_load_n(&c_failures, __ATOMIC_SEQ_CST));
}

/* Value of KEY in "k1=v1,k2=v2" (malloc'ed), or NULL. */
static inline char *c_opt(const char *options, const char *key)
{
    return agent_opt(options, key);
}

static inline jint c_setup(JavaVM *vm, const char *options)
{
    c_vm = vm;
    c_out = agent_open_out(options, NULL);
    jint rc = (*vm)->GetEnv(vm, (void **)&c_pi, JVMPI_VERSION_1_2);
    if (rc != JNI_OK || !c_pi) {
        c_pi = NULL;
        c_fail("GetEnv(JVMPI_VERSION_1_2) returned %d", (int)rc);
        return JNI_ERR;
    }
    return JNI_OK;
}

static inline void c_enable(jint type, const char *name)
{
    jint rc = c_pi->EnableEvent(type, NULL);
    c_check(rc == JVMPI_SUCCESS, "EnableEvent(%s) returns JVMPI_SUCCESS (got %d)", name, (int)rc);
}

/* The calling thread's JNIEnv, straight from the VM. */
static inline JNIEnv *c_current_env(void)
{
    JNIEnv *env = NULL;
    if (!c_vm || (*c_vm)->GetEnv(c_vm, (void **)&env, JNI_VERSION_1_2) != JNI_OK)
        return NULL;
    return env;
}

/* Natives called before the layer gave the agent its interface (agent not
 * loaded through the layer) must not crash the JVM. */
static inline int c_ready(const char *what)
{
    if (c_pi)
        return 1;
    c_fail("%s: the agent has no JVMPI interface (was it loaded through the layer?)", what);
    return 0;
}

static inline int c_streq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static inline const char *c_str(const char *s)
{
    return s ? s : "(null)";
}

/* ---- a map from IDs (non-NULL pointers) to a small value; callers lock ---- */
typedef struct {
    const void *key;
    intptr_t val;
} c_slot;

typedef struct {
    c_slot *slots;
    size_t cap, used;
} c_map;

static inline size_t c_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static inline c_slot *c_map_find(const c_map *m, const void *key)
{
    if (!m->cap || !key)
        return NULL;
    for (size_t i = c_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->slots[i].key == key)
            return &m->slots[i];
        if (!m->slots[i].key)
            return NULL;
    }
}

/* Inserts KEY (value VAL) unless present; returns its slot, *existed says
 * which.  KEY must not be NULL. */
static inline c_slot *c_map_put(c_map *m, const void *key, intptr_t val, int *existed)
{
    c_slot *s = c_map_find(m, key);
    if (s) {
        if (existed)
            *existed = 1;
        return s;
    }
    if (existed)
        *existed = 0;
    if ((m->used + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 4096;
        c_slot *ns = calloc(ncap, sizeof *ns);
        if (!ns) {
            fprintf(stderr, "FAIL out of memory\n");
            abort();
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->slots[i].key)
                continue;
            size_t j = c_hash(m->slots[i].key) & (ncap - 1);
            while (ns[j].key)
                j = (j + 1) & (ncap - 1);
            ns[j] = m->slots[i];
        }
        free(m->slots);
        m->slots = ns;
        m->cap = ncap;
    }
    size_t j = c_hash(key) & (m->cap - 1);
    while (m->slots[j].key)
        j = (j + 1) & (m->cap - 1);
    m->slots[j].key = key;
    m->slots[j].val = val;
    m->used++;
    return &m->slots[j];
}

static inline void c_map_clear(c_map *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->used = 0;
}

/* ---- class names from CLASS_LOAD (and requested CLASS_LOAD) ---- */
typedef struct {
    c_map ids; /* class_id -> index into names */
    char **names;
    size_t n, cap;
} c_classes;

/* Remembers class_id -> name; returns 1 if the ID was new. */
static inline int c_classes_add(c_classes *c, jobjectID id, const char *name)
{
    int existed;
    c_slot *s = c_map_put(&c->ids, id, (intptr_t)c->n, &existed);
    if (existed)
        return 0;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 1024;
        c->names = realloc(c->names, c->cap * sizeof *c->names);
    }
    c->names[c->n] = strdup(name ? name : "(null)");
    s->val = (intptr_t)c->n;
    c->n++;
    return 1;
}

static inline const char *c_classes_name(const c_classes *c, jobjectID id)
{
    c_slot *s = c_map_find(&c->ids, id);
    return s ? c->names[s->val] : NULL;
}

static inline jobjectID c_classes_id(const c_classes *c, const char *name)
{
    for (size_t i = 0; i < c->ids.cap; i++)
        if (c->ids.slots[i].key && c_streq(c->names[c->ids.slots[i].val], name))
            return (jobjectID)(uintptr_t)c->ids.slots[i].key;
    return NULL;
}

/* ---- expected HotSpot object sizes --------------------------------------
 * The layer reports the VM's own object size.  On the 64-bit HotSpot of JDK
 * 17 and 25 with their default flags (compressed class pointers, no compact
 * headers) an array has a 16-byte header and every object is 8-aligned.
 * With compact object headers (JDK 27's default) the length follows an
 * 8-byte header, and elements of 4 bytes or less start at 12: the script
 * says so (agent option compact_headers=1, lib.sh's compact_headers). */
static int c_compact_headers;

static inline int c_elem_size(jint type)
{
    switch (type) {
    case JVMPI_BOOLEAN:
    case JVMPI_BYTE:
        return 1;
    case JVMPI_CHAR:
    case JVMPI_SHORT:
        return 2;
    case JVMPI_INT:
    case JVMPI_FLOAT:
        return 4;
    case JVMPI_LONG:
    case JVMPI_DOUBLE:
        return 8;
    default:
        return 0;
    }
}

static inline jlong c_prim_array_size(jint type, jint length)
{
    jlong raw = (c_compact_headers && c_elem_size(type) < 8 ? 12 : 16) + (jlong)length * c_elem_size(type);
    return (raw + 7) & ~(jlong)7;
}

static inline const char *c_type_name(jint type)
{
    switch (type) {
    case JVMPI_NORMAL_OBJECT:
        return "object";
    case JVMPI_CLASS:
        return "class";
    case JVMPI_BOOLEAN:
        return "boolean";
    case JVMPI_BYTE:
        return "byte";
    case JVMPI_CHAR:
        return "char";
    case JVMPI_SHORT:
        return "short";
    case JVMPI_INT:
        return "int";
    case JVMPI_LONG:
        return "long";
    case JVMPI_FLOAT:
        return "float";
    case JVMPI_DOUBLE:
        return "double";
    default:
        return "?";
    }
}

static inline int c_valid_array_code(jint t)
{
    return t == JVMPI_NORMAL_OBJECT || t == JVMPI_CLASS || c_elem_size(t) > 0;
}

static inline void c_clear_exception(JNIEnv *env, const char *what)
{
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionDescribe(env);
        (*env)->ExceptionClear(env);
        c_fail("%s: JNI exception", what);
    }
}

/* For failure messages only: the name of the class whose ID is class_id, via
 * jobjectID2jobject and Class.getName() (runs Java code: not inside GC
 * windows).  Writes "?" when it cannot tell. */
static inline void c_jni_class_name(JNIEnv *env, jobjectID class_id, char *buf, size_t len)
{
    snprintf(buf, len, "?");
    if (!env || !class_id || !c_pi)
        return;
    jobject c = c_pi->jobjectID2jobject(class_id);
    if (!c)
        return;
    jclass cc = (*env)->FindClass(env, "java/lang/Class");
    jmethodID gn = cc ? (*env)->GetMethodID(env, cc, "getName", "()Ljava/lang/String;") : NULL;
    jstring s = gn ? (*env)->CallObjectMethod(env, c, gn) : NULL;
    if ((*env)->ExceptionCheck(env))
        (*env)->ExceptionClear(env);
    if (s) {
        const char *u = (*env)->GetStringUTFChars(env, s, NULL);
        snprintf(buf, len, "%s", u);
        (*env)->ReleaseStringUTFChars(env, s, u);
    }
}

#endif /* C_COMMON_H_ */
