/*
 * plain_heap - the baseline for bench/heap.sh: a plain JVM TI agent that
 * does directly what the layer does for a counting OBJECT_ALLOC/OBJECT_FREE
 * agent, with nothing of the layer in between.  It is not part of the layer
 * (the one file of the project outside jvmti_backend/ that includes jvmti.h).
 *
 *   java -agentpath:libplain_heap.so=mode=tag,out=counts.txt App
 *
 * Options (comma separated):
 *   mode=count   SampledObjectAlloc at interval 0, counted; no tags, no frees
 *   mode=tag     the same, plus a fresh tag per object (as a jobjectID is)
 *                and ObjectFree counted (default)
 *   out=<path>   where the counts go at VMDeath (default: standard error)
 *
 * Output, one line:
 *   plain_heap: mode=tag allocs=N bytes=B frees=F
 */
#include <jvmti.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static jvmtiEnv *jvmti;
static int tag_mode = 1;
static char out_path[1024];

/* Relaxed atomics: the counters are read once, at VMDeath, after the
 * allocating threads have stopped posting events that matter here. */
static _Atomic uint64_t allocs;
static _Atomic uint64_t bytes;
static _Atomic uint64_t frees;
/* In tag mode the last tag handed out is also the allocation count, so a
 * tagged allocation costs one atomic increment, as in the layer. */
static _Atomic uint64_t last_tag;

static void JNICALL on_alloc_count(jvmtiEnv *env, JNIEnv *jni, jthread thread,
                                   jobject object, jclass klass, jlong size)
{
    atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&bytes, (uint64_t)size, memory_order_relaxed);
}

static void JNICALL on_alloc_tag(jvmtiEnv *env, JNIEnv *jni, jthread thread,
                                 jobject object, jclass klass, jlong size)
{
    uint64_t tag = atomic_fetch_add_explicit(&last_tag, 1, memory_order_relaxed) + 1;
    (*env)->SetTag(env, object, (jlong)tag);
    atomic_fetch_add_explicit(&bytes, (uint64_t)size, memory_order_relaxed);
}

static void JNICALL on_free(jvmtiEnv *env, jlong tag)
{
    atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
}

static void JNICALL on_vm_init(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    /* On JDK 17 the main thread keeps the sample point it drew before the
     * interval became 0, about 512 KB ahead, and misses everything it
     * allocates until then.  One 1 MB array allocated here, on main, moves it
     * past that point.  JDK 25 needs no help; the array is counted like any
     * other allocation either way. */
    jint version = 0;
    (*env)->GetVersionNumber(env, &version);
    int major = (int)((version & JVMTI_VERSION_MASK_MAJOR) >> JVMTI_VERSION_SHIFT_MAJOR);
    if (major < 25) {
        jbyteArray push = (*jni)->NewByteArray(jni, 1 << 20);
        if (push != NULL)
            (*jni)->DeleteLocalRef(jni, push);
        else
            (*jni)->ExceptionClear(jni);
    }
}

static void JNICALL on_vm_death(jvmtiEnv *env, JNIEnv *jni)
{
    FILE *f = out_path[0] ? fopen(out_path, "w") : stderr;
    if (f == NULL) {
        fprintf(stderr, "plain_heap: cannot write %s\n", out_path);
        f = stderr;
    }
    uint64_t n = tag_mode ? atomic_load(&last_tag) : atomic_load(&allocs);
    fprintf(f, "plain_heap: mode=%s allocs=%llu bytes=%llu frees=%llu\n",
            tag_mode ? "tag" : "count", (unsigned long long)n,
            (unsigned long long)atomic_load(&bytes), (unsigned long long)atomic_load(&frees));
    if (f != stderr)
        fclose(f);
}

static int parse_options(const char *options)
{
    if (options == NULL)
        return 1;
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", options);
    char *save = NULL;
    for (char *opt = strtok_r(buf, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
        if (strcmp(opt, "mode=count") == 0) {
            tag_mode = 0;
        } else if (strcmp(opt, "mode=tag") == 0) {
            tag_mode = 1;
        } else if (strncmp(opt, "out=", 4) == 0) {
            snprintf(out_path, sizeof out_path, "%s", opt + 4);
        } else {
            fprintf(stderr, "plain_heap: unknown option '%s' (mode=count|tag, out=<path>)\n", opt);
            return 0;
        }
    }
    return 1;
}

static int check(jvmtiError err, const char *what)
{
    if (err == JVMTI_ERROR_NONE)
        return 1;
    fprintf(stderr, "plain_heap: %s failed: JVM TI error %d\n", what, (int)err);
    return 0;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (!parse_options(options))
        return JNI_ERR;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_11) != JNI_OK) {
        fprintf(stderr, "plain_heap: no JVM TI 11 (SampledObjectAlloc needs JDK 11 or later)\n");
        return JNI_ERR;
    }

    /* count mode takes only what it uses: can_tag_objects and ObjectFree
     * are part of what the tag configuration measures. */
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_sampled_object_alloc_events = 1;
    if (tag_mode) {
        caps.can_tag_objects = 1;
        caps.can_generate_object_free_events = 1;
    }
    if (!check((*jvmti)->AddCapabilities(jvmti, &caps), "AddCapabilities"))
        return JNI_ERR;

    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.VMInit = on_vm_init;
    cb.VMDeath = on_vm_death;
    cb.SampledObjectAlloc = tag_mode ? on_alloc_tag : on_alloc_count;
    if (tag_mode)
        cb.ObjectFree = on_free;
    if (!check((*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb), "SetEventCallbacks"))
        return JNI_ERR;

    /* Interval 0 only takes effect at each thread's next sample point, so it
     * is set before any Java thread has allocated. */
    if (!check((*jvmti)->SetHeapSamplingInterval(jvmti, 0), "SetHeapSamplingInterval(0)"))
        return JNI_ERR;

    jvmtiEvent events[] = {JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH,
                           JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, JVMTI_EVENT_OBJECT_FREE};
    int n = tag_mode ? 4 : 3;
    for (int i = 0; i < n; i++)
        if (!check((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL),
                   "SetEventNotificationMode"))
            return JNI_ERR;
    return JNI_OK;
}
