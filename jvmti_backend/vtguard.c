/*
 * vtguard.c - keeps the heap walk away from virtual threads still being
 * constructed (see vtguard.h for why).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vtguard.h"

/* The classes whose frames may hold a VirtualThread before its constructor
 * has stored the continuation; all: every method counts, else only the
 * constructors. */
static const struct {
    const char *name;
    bool all;
} makers[] = {
    { "java.lang.Thread", false },
    { "java.lang.BaseVirtualThread", false },
    { "java.lang.VirtualThread", false },
    { "java.lang.VirtualThread$VThreadContinuation", true },
    { "java.lang.VirtualThread$VThreadContinuation$1", false },
    { "java.lang.ThreadBuilders", true },
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static jlong vthread_class_tag;
static jmethodID *methods;
static size_t n_methods, cap_methods;

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(const jmethodID *)a, y = (uintptr_t)*(const jmethodID *)b;
    return x < y ? -1 : x > y;
}

void vtguard_note_class(JNIEnv *env, jclass klass, const char *name, jlong tag)
{
    (void)env;
    size_t k = 0;
    while (k < sizeof makers / sizeof makers[0] && strcmp(makers[k].name, name) != 0) {
        k++;
    }
    if (k == sizeof makers / sizeof makers[0]) {
        return;
    }
    jint n = 0;
    jmethodID *ms = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassMethods, klass, &n, &ms))) {
        return;
    }
    pthread_mutex_lock(&lock);
    {
        if (strcmp(name, "java.lang.VirtualThread") == 0) {
            vthread_class_tag = tag;
        }
        for (jint i = 0; i < n; i++) {
            char *mname = NULL;
            if (!makers[k].all) {
                if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetMethodName, ms[i], &mname, NULL, NULL))) {
                    continue;
                }
                bool ctor = strcmp(mname, "<init>") == 0;
                bk_deallocate(mname);
                if (!ctor) {
                    continue;
                }
            }
            if (n_methods == cap_methods) {
                size_t cap = cap_methods ? 2 * cap_methods : 64;
                jmethodID *grown = realloc(methods, cap * sizeof *grown);
                if (grown == NULL) {
                    LOG_ERROR("heap walk: out of memory noting %s", name);
                    break;
                }
                methods = grown;
                cap_methods = cap;
            }
            methods[n_methods++] = ms[i];
        }
        qsort(methods, n_methods, sizeof *methods, by_address);
    }
    pthread_mutex_unlock(&lock);
    bk_deallocate(ms);
}

bool vtguard_prepare(walk *w)
{
    bool ok = true;
    pthread_mutex_lock(&lock);
    {
        w->vthread_class_tag = vthread_class_tag;
        if (n_methods > 0) {
            w->vt_makers = malloc(n_methods * sizeof *methods);
            ok = w->vt_makers != NULL;
            if (ok) {
                memcpy(w->vt_makers, methods, n_methods * sizeof *methods);
                w->n_vt_makers = n_methods;
            }
        }
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

static bool is_maker(const walk *w, jmethodID m)
{
    return m != NULL && bsearch(&m, w->vt_makers, w->n_vt_makers, sizeof m, by_address) != NULL;
}

bool vtguard_decide(walk *w, jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info, jlong tag,
                    bool is_root)
{
    if (tag == 0) {
        return false; /* no ID to remember it by: never visited */
    }
    if (is_root && (kind == JVMTI_HEAP_REFERENCE_STACK_LOCAL || kind == JVMTI_HEAP_REFERENCE_JNI_LOCAL)) {
        jmethodID m = NULL;
        if (info != NULL) {
            m = kind == JVMTI_HEAP_REFERENCE_STACK_LOCAL ? info->stack_local.method : info->jni_local.method;
        }
        /* Further roots of the same thread may still show it under
         * construction: not followed from here in any case. */
        if (is_maker(w, m) && !heapstore_tagmap_put(&w->unbuilt, tag, 0)) {
            w->failed = true;
        }
        return false;
    }
    return heapstore_tagmap_get(&w->unbuilt, tag) < 0;
}
