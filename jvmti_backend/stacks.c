/*
 * stacks.c - GetCallTrace: JVM TI frames (method, bytecode index) turned
 * into JVMPI frames (method, source line), callee first.
 *
 * Line tables are cached per method: samplers ask for the same hot methods
 * again and again, and a JVM TI line table is an allocation and a copy.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
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

/* The layer's own frames: a method hook's native, and a renamed native
 * below its wrapper. */
static bool layer_frame(const jvmtiFrameInfo *f)
{
    return hooksclass_is_method(f->method) || (f->location == -1 && nativewrap_is_renamed(f->method));
}

/* ---- the constructors of an object being announced ---------------------------- */

/* While the calling thread announces an object from java.lang.Object's
 * constructor (bk_heap_constructed): that object.  Its OBJECT_ALLOC's
 * traces start, as on HotSpot 5.0, at the method that allocated it, not in
 * the constructors that were running for it. */
static TLS_FAST jobject constructing;
static TLS_FAST JNIEnv *constructing_env;
/* Constructor frames of one object that GetCallTrace fetches beyond the
 * depth asked for, to drop them and still give that depth. */
#define CTOR_FRAMES 16

jobject bk_stacks_constructing(JNIEnv *env, jobject obj)
{
    jobject before = constructing;
    constructing = obj;
    constructing_env = env;
    return before;
}

static bool is_current_thread(JNIEnv *env, jthread thread)
{
    jthread me = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetCurrentThread, &me)) || me == NULL) {
        return false;
    }
    bool same = (*env)->IsSameObject(env, me, thread);
    (*env)->DeleteLocalRef(env, me);
    return same;
}

/* Whether a frame of method runs a constructor of the object's class or of
 * one of its superclasses, at or above the class of the constructor below
 * (*below, which becomes this frame's class).  Constructors chain from the
 * object's class up to java.lang.Object; another constructor frame above
 * that chain is one that allocated the object. */
static bool ctor_of_object(JNIEnv *env, jmethodID method, jclass object_class, jclass *below)
{
    char *name = NULL;
    jclass cls = NULL;
    bool ctor = JVMTI_OK(JVMTI_CALL(bk.jvmti, GetMethodName, method, &name, NULL, NULL)) && name != NULL &&
                strcmp(name, "<init>") == 0;
    bk_deallocate(name);
    if (!ctor || !JVMTI_OK(JVMTI_CALL(bk.jvmti, GetMethodDeclaringClass, method, &cls)) || cls == NULL) {
        return false;
    }
    bool ours = (*env)->IsAssignableFrom(env, object_class, cls) &&
                (*below == NULL || (*env)->IsAssignableFrom(env, cls, *below));
    if (*below != NULL) {
        (*env)->DeleteLocalRef(env, *below);
    }
    *below = cls;
    return ours;
}

/* How many of the frames (the layer's own left out) from the top are
 * constructors running for the object being announced. */
static jint constructor_frames(const jvmtiFrameInfo *buf, jint count)
{
    JNIEnv *env = constructing_env;
    jclass object_class = (*env)->GetObjectClass(env, constructing);
    jclass below = NULL;
    jint n = 0;
    for (jint i = 0; i < count && object_class != NULL; i++) {
        if (layer_frame(&buf[i])) {
            continue;
        }
        if (!ctor_of_object(env, buf[i].method, object_class, &below)) {
            break;
        }
        n++;
    }
    if (below != NULL) {
        (*env)->DeleteLocalRef(env, below);
    }
    if (object_class != NULL) {
        (*env)->DeleteLocalRef(env, object_class);
    }
    return n;
}

/* A thread in a method hook (methodhooks.c) has that native on top: one
 * frame more is asked for, and the layer's frames are left out. */
/* Where the program's frames begin on a stack the calling thread fetched of
 * itself during the layer's own Java call (bk_own_call): below that call's
 * frame.  What runs inside it (a ClassPrepare, and the events it brings) is
 * the layer's doing, as the program allocating an array of a class not yet
 * linked is the program's: its trace is the program's stack. */
static jint below_own_call(const jvmtiFrameInfo *buf, jint count)
{
    for (jint i = 0; i < count; i++) {
        if (buf[i].method == bk_own_call) {
            return i + 1;
        }
    }
    return 0;
}

jint seam_call_trace(void *handle, jint depth, JVMPI_CallFrame *frames)
{
    jvmtiFrameInfo local[STACK_FRAMES + CTOR_FRAMES + 2];
    bool own = constructing != NULL && is_current_thread(constructing_env, (jthread)handle);
    JNIEnv *env = bk_own_call != NULL ? seam_current_env() : NULL;
    bool in_own_call = env != NULL && is_current_thread(env, (jthread)handle);
    jint fetch = depth + 1 + (own ? CTOR_FRAMES : 0) + (in_own_call ? 1 : 0);
    jvmtiFrameInfo *buf = depth < STACK_FRAMES ? local : malloc((size_t)fetch * sizeof *buf);
    jint count = 0, n = 0, drop = 0;
    if (buf == NULL) {
        return 0;
    }
    /* TRY: the thread may have ended since the caller looked it up. */
    if (JVMTI_OK(JVMTI_TRY(bk.jvmti, GetStackTrace, (jthread)handle, 0, fetch, buf, &count))) {
        jint first = in_own_call ? below_own_call(buf, count) : 0;
        if (own) {
            drop = constructor_frames(buf + first, count - first);
        }
        /* A wrapped native's frame is its wrapper's, a method with
         * bytecode: it is given a native frame's line, as HotSpot 5.0 gave
         * every native frame. */
        bool wrapped_native = false;
        for (jint i = first; i < count && n < depth; i++) {
            if (layer_frame(&buf[i])) {
                wrapped_native = buf[i].location == -1 && nativewrap_is_renamed(buf[i].method);
                continue;
            }
            bool native = wrapped_native;
            wrapped_native = false;
            if (drop > 0) {
                drop--;
                continue;
            }
            /* A frame left on an old version by a retransformation: its line
             * from that version, its method the one the agent knows. */
            jmethodID current = bk_methodhooks_current(buf[i].method);
            if (current == NULL) {
                continue;
            }
            frames[n].method_id = current;
            frames[n].lineno = native ? LINE_NATIVE : line_of(buf[i].method, buf[i].location);
            n++;
        }
    }
    count = n;
    if (buf != local) {
        free(buf);
    }
    return count;
}
