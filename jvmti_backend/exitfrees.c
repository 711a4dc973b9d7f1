/*
 * exitfrees.c - the last ObjectFree events before VM death, posted so that
 * the JVM cannot deadlock on them.
 *
 * HotSpot (seen on 17 and 25) flushes every environment's pending
 * ObjectFree events on the exiting thread right before it posts VMDeath.
 * When it finds the Service Thread posting others, it waits for it without
 * a safepoint check; the Service Thread, between two of its callbacks,
 * stops for a safepoint that a VM operation asked for (the thread dump of a
 * SIGQUIT, a collection); the VM thread waits for the exiting thread, and
 * nothing moves again.  Switching ObjectFree off first is no way out: the
 * switch makes the same flush, with the same wait.
 *
 * So the exiting thread makes sure, before it gets there, that nothing is
 * left to post and that the Service Thread is not posting: it ends
 * (ThreadEnd) right before it posts VMDeath, in Shutdown.halt0 after
 * System.exit, or as DestroyJavaVM once the shutdown hooks have run
 * (jdk.internal.misc.VM's init level tells).  There it posts the pending
 * frees itself, through a heap iteration (which takes them at a safepoint
 * and waits for nobody), and waits until no free has come for a few
 * milliseconds with no collection finished meanwhile; the layer's own
 * collections and heap passes on other threads, and the program's threads
 * at their next allocation (SampledObjectAlloc), wait from then until
 * VMDeath: no allocation starts a collection in between (on JDK 21 one
 * did, about once in a hundred exits under a SIGQUIT storm).  VM death's
 * own flush then finds nothing to do.
 */
#include <pthread.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "backend.h"

/* jdk.internal.misc.VM's init level once the shutdown hooks have run. */
#define SYSTEM_SHUTDOWN 5

static jclass vm_class; /* global reference */
static jfieldID init_level;

void bk_exitfrees_vm_init(JNIEnv *env)
{
    jclass vm = (*env)->FindClass(env, "jdk/internal/misc/VM");
    jfieldID level = vm != NULL ? (*env)->GetStaticFieldID(env, vm, "initLevel", "I") : NULL;
    if ((*env)->ExceptionCheck(env) || level == NULL) {
        /* JDK 8 has no such field: its exit stays as it is. */
        (*env)->ExceptionClear(env);
        LOG_DEBUG("exit: jdk.internal.misc.VM.initLevel not found; DestroyJavaVM not told from other thread ends");
    } else {
        vm_class = (*env)->NewGlobalRef(env, vm);
        init_level = level;
    }
    if (vm != NULL) {
        (*env)->DeleteLocalRef(env, vm);
    }
}

/* Whether the calling thread, ending, is the one that will post VMDeath. */
static bool exiting_thread(JNIEnv *env)
{
    jvmtiFrameInfo top;
    jint depth = 0;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetStackTrace, NULL, 0, 1, &top, &depth))) {
        return false;
    }
    if (depth == 1) {
        /* After System.exit, Runtime.halt or a terminating signal. */
        char *name = NULL;
        jclass holder = NULL;
        char *holder_sig = NULL;
        bool halt = JVMTI_OK(JVMTI_CALL(bk.jvmti, GetMethodName, top.method, &name, NULL, NULL)) &&
                    strcmp(name, "halt0") == 0 &&
                    JVMTI_OK(JVMTI_CALL(bk.jvmti, GetMethodDeclaringClass, top.method, &holder)) &&
                    JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassSignature, holder, &holder_sig, NULL)) &&
                    strcmp(holder_sig, "Ljava/lang/Shutdown;") == 0;
        bk_deallocate(name);
        bk_deallocate(holder_sig);
        if (holder != NULL) {
            (*env)->DeleteLocalRef(env, holder);
        }
        return halt;
    }
    /* DestroyJavaVM, after the last non-daemon thread and the hooks. */
    if (depth != 0 || vm_class == NULL || (*env)->GetStaticIntField(env, vm_class, init_level) < SYSTEM_SHUTDOWN) {
        return false;
    }
    jvmtiThreadInfo info;
    memset(&info, 0, sizeof info);
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetThreadInfo, NULL, &info))) {
        return false;
    }
    bool destroy = info.name != NULL && strcmp(info.name, "DestroyJavaVM") == 0;
    bk_deallocate(info.name);
    if (info.thread_group != NULL) {
        (*env)->DeleteLocalRef(env, info.thread_group);
    }
    if (info.context_class_loader != NULL) {
        (*env)->DeleteLocalRef(env, info.context_class_loader);
    }
    return destroy;
}

#define QUIET_MS 5
#define QUIET_MAX_MS 200 /* only while collections keep coming */

static atomic_ulong frees_posted;
static atomic_bool done;

/* From the exiting thread's end to VMDeath, the layer's own collections and
 * heap passes on other threads (RunGC in a DATA_DUMP_REQUEST handler, a
 * dump) wait: each would leave frees for VM death to post. */
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static atomic_bool holding;
static pthread_t holder;

void bk_exitfrees_count(void) { atomic_fetch_add_explicit(&frees_posted, 1, memory_order_relaxed); }

void bk_exitfrees_wait(void)
{
    if (!atomic_load(&holding)) {
        return;
    }
    pthread_mutex_lock(&hold_lock);
    while (atomic_load(&holding) && !pthread_equal(holder, pthread_self())) {
        pthread_cond_wait(&hold_cond, &hold_lock);
    }
    pthread_mutex_unlock(&hold_lock);
}

static atomic_bool dying;

void bk_exitfrees_vm_death(void)
{
    atomic_store(&dying, true);
    pthread_mutex_lock(&hold_lock);
    atomic_store(&holding, false);
    pthread_cond_broadcast(&hold_cond);
    pthread_mutex_unlock(&hold_lock);
}

void bk_exitfrees_thread_end(JNIEnv *env)
{
    if (atomic_load(&done) || !exiting_thread(env)) {
        return;
    }
    atomic_store(&done, true);
    if (bk.silent_death) {
        bk_quiet_before_death();
    }
    pthread_mutex_lock(&hold_lock);
    holder = pthread_self();
    atomic_store(&holding, true);
    pthread_mutex_unlock(&hold_lock);
    const struct timespec pause = {0, QUIET_MS * 1000000L};
    for (int waited = 0; waited < QUIET_MAX_MS; waited += QUIET_MS) {
        unsigned long pauses = atomic_load(&bk.pauses_finished);
        seam_post_pending_frees(env);
        unsigned long frees = atomic_load(&frees_posted);
        nanosleep(&pause, NULL);
        /* Quiet: the Service Thread posted nothing, and no collection left
         * dead entries that it or VM death would post.  A last pass takes
         * what the Service Thread may be about to get to. */
        if (atomic_load(&frees_posted) == frees) {
            bool collected = atomic_load(&bk.pauses_finished) != pauses;
            seam_post_pending_frees(env);
            if (!collected) {
                LOG_DEBUG("exit: pending frees posted after %d ms", waited + QUIET_MS);
                return;
            }
        }
    }
    LOG_DEBUG("exit: collections still coming after %d ms", QUIET_MAX_MS);
}

/* ---- collections during VM death, where the VM posts no ObjectFree ------- */

typedef struct {
    jlong *tags;
    size_t n, cap;
    bool short_of_memory;
} tag_list;

static jint JNICALL list_tag(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *user_data)
{
    tag_list *l = user_data;
    if (l->n == l->cap) {
        size_t cap = l->cap != 0 ? l->cap * 2 : 4096;
        jlong *more = realloc(l->tags, cap * sizeof *more);
        if (more == NULL) {
            l->short_of_memory = true;
            return JVMTI_VISIT_ABORT;
        }
        l->tags = more;
        l->cap = cap;
    }
    l->tags[l->n++] = *tag_ptr;
    return 0;
}

static bool list_tags(tag_list *l)
{
    jvmtiHeapCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.heap_iteration_callback = list_tag;
    return JVMTI_OK(JVMTI_CALL(bk.jvmti, IterateThroughHeap, JVMTI_HEAP_FILTER_UNTAGGED, NULL, &cb, l)) &&
           !l->short_of_memory;
}

static int tag_order(const void *a, const void *b)
{
    jlong x = *(const jlong *)a, y = *(const jlong *)b;
    return (x > y) - (x < y);
}

/* JDK 5.0 posted a collection's OBJECT_FREEs in the agent's JVM_SHUT_DOWN
 * handler too, and HPROF's ALLOC SITES at exit count on them (it collects
 * first).  A collection drops dead objects from the tag map without a word
 * once VM death has begun on JVM TI 26 and later: the tagged objects before
 * and after it tell which it freed.  (Garbage from before the collection is
 * in the first pass too: a heap iteration visits unreachable objects.) */
bool bk_exitfrees_silent_gc(void)
{
    if (!bk.silent_death || !atomic_load(&dying)) {
        return false;
    }
    tag_list before = {0}, after = {0};
    bool listed = list_tags(&before);
    JVMTI_CALL0(bk.jvmti, ForceGarbageCollection);
    if (listed && list_tags(&after)) {
        qsort(after.tags, after.n, sizeof *after.tags, tag_order);
        size_t freed = 0;
        for (size_t i = 0; i < before.n; i++) {
            if (bsearch(&before.tags[i], after.tags, after.n, sizeof *after.tags, tag_order) == NULL) {
                bk_heap_object_freed(before.tags[i]);
                freed++;
            }
        }
        LOG_DEBUG("collection at VM death: %zu of %zu tagged objects freed", freed, before.n);
    } else {
        LOG_WARN("out of memory listing the heap at VM death: the last collection's OBJECT_FREEs are not sent");
    }
    free(before.tags);
    free(after.tags);
    return true;
}
