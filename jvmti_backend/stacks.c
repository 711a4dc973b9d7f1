/*
 * stacks.c - GetCallTrace: JVM TI frames (method, bytecode index) turned
 * into JVMPI frames (method, source line), callee first.
 *
 * Line tables are cached per method: samplers ask for the same hot methods
 * again and again, and a JVM TI line table is an allocation and a copy.
 */
#include <pthread.h>
#include <stdlib.h>
#include <uthash.h>

#include "backend.h"
#include "hooksclass.h"
#include "nativewrap.h"

#define LINE_NATIVE (-3)
#define LINE_UNKNOWN (-1)
#define STACK_FRAMES 128

typedef struct {
    jmethodID method;
    jint count;              /* 0: no line information */
    jvmtiLineNumberEntry *entries;  /* sorted by start_location */
    UT_hash_handle hh;
} line_table;

static pthread_mutex_t lines_lock = PTHREAD_MUTEX_INITIALIZER;
static line_table *lines;

static int by_location(const void *a, const void *b)
{
    const jvmtiLineNumberEntry *x = a, *y = b;
    return x->start_location < y->start_location ? -1 : x->start_location > y->start_location;
}

static line_table *load_line_table(jmethodID method)
{
    line_table *t = calloc(1, sizeof *t);
    if (t == NULL) {
        return NULL;
    }
    t->method = method;
    jint n = 0;
    jvmtiLineNumberEntry *entries = NULL;
    if (JVMTI_OK(JVMTI_TRY(bk.jvmti, GetLineNumberTable, method, &n, &entries)) && n > 0) {
        t->entries = malloc((size_t)n * sizeof *entries);
        if (t->entries != NULL) {
            memcpy(t->entries, entries, (size_t)n * sizeof *entries);
            qsort(t->entries, (size_t)n, sizeof *entries, by_location);
            t->count = n;
        }
    }
    bk_deallocate(entries);
    return t;
}

static jint line_of(jmethodID method, jlocation location)
{
    if (location < 0) {
        return LINE_NATIVE;
    }
    line_table *t = NULL;
    {
        pthread_mutex_lock(&lines_lock);
        HASH_FIND_PTR(lines, &method, t);
        pthread_mutex_unlock(&lines_lock);
    }
    if (t == NULL) {
        line_table *fresh = load_line_table(method);
        if (fresh == NULL) {
            return LINE_UNKNOWN;
        }
        {
            pthread_mutex_lock(&lines_lock);
            HASH_FIND_PTR(lines, &method, t);
            if (t == NULL) {
                HASH_ADD_PTR(lines, method, fresh);
                t = fresh;
                fresh = NULL;
            }
            pthread_mutex_unlock(&lines_lock);
        }
        if (fresh != NULL) {
            free(fresh->entries);
            free(fresh);
        }
    }
    /* Tables are never changed once in the cache, so reading needs no lock. */
    jint line = LINE_UNKNOWN;
    for (jint i = 0; i < t->count && t->entries[i].start_location <= location; i++) {
        line = t->entries[i].line_number;
    }
    return line;
}

/* A thread in a method hook (methodhooks.c) has that native on top: one
 * frame more is asked for, and the layer's frames are left out. */
jint seam_call_trace(void *handle, jint depth, JVMPI_CallFrame *frames)
{
    jvmtiFrameInfo local[STACK_FRAMES + 1];
    jvmtiFrameInfo *buf = depth < STACK_FRAMES ? local : malloc((size_t)(depth + 1) * sizeof *buf);
    jint count = 0, n = 0;
    if (buf == NULL) {
        return 0;
    }
    /* TRY: the thread may have ended since the caller looked it up. */
    if (JVMTI_OK(JVMTI_TRY(bk.jvmti, GetStackTrace, (jthread)handle, 0, depth + 1, buf, &count))) {
        for (jint i = 0; i < count && n < depth; i++) {
            if (hooksclass_is_method(buf[i].method) ||
                (buf[i].location == -1 && nativewrap_is_renamed(buf[i].method))) {
                continue; /* the layer's own frames, and a renamed native below its wrapper */
            }
            /* A frame left on an old version by a retransformation: its line
             * from that version, its method the one the agent knows. */
            jmethodID current = bk_methodhooks_current(buf[i].method);
            if (current == NULL) {
                continue;
            }
            frames[n].method_id = current;
            frames[n].lineno = line_of(buf[i].method, buf[i].location);
            n++;
        }
    }
    count = n;
    if (buf != local) {
        free(buf);
    }
    return count;
}
