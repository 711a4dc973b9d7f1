/*
 * plain_vthreads - the baseline of bench/vthreads.sh: a plain JVM TI agent
 * that does for every thread, virtual ones included (VirtualThreadStart/End,
 * JVM TI 21), what the layer must do to send THREAD_START and THREAD_END
 * and to name the thread in later events: learns its name and group, gives
 * its Thread object a tag (its ID), keeps a global reference to it (to ask
 * for its stack or status later) in its thread-local storage, follows its
 * mounts (HotSpot's VirtualThreadMount/Unmount extension events: which
 * virtual thread a carrier runs), and counts starts and ends.
 * Options: out=<file>.
 *
 * Built with whatever JDK's jvmti.h the project uses (17's lacks the
 * virtual-thread names): the capability is the bit after
 * can_generate_sampled_object_alloc_events, the events are numbers 87 and 88.
 */
#include <jvmti.h>
#include <stdio.h>
#include <string.h>

static jvmtiEnv *jvmti;
static char out_path[1024];
static volatile long starts, ends;

static volatile jlong next_tag = 1;
static __thread void *mounted; /* the carrier's current virtual thread */

static void learn(JNIEnv *env, jthread thread)
{
    jvmtiThreadInfo ti;
    memset(&ti, 0, sizeof ti);
    if ((*jvmti)->GetThreadInfo(jvmti, thread, &ti) == JVMTI_ERROR_NONE) {
        (*jvmti)->Deallocate(jvmti, (unsigned char *)ti.name);
        if (ti.thread_group != NULL)
            (*env)->DeleteLocalRef(env, ti.thread_group);
        if (ti.context_class_loader != NULL)
            (*env)->DeleteLocalRef(env, ti.context_class_loader);
    }
    jlong tag = 0;
    if ((*jvmti)->GetTag(jvmti, thread, &tag) == JVMTI_ERROR_NONE && tag == 0)
        (*jvmti)->SetTag(jvmti, thread, __atomic_add_fetch(&next_tag, 1, __ATOMIC_RELAXED));
    jobject ref = (*env)->NewGlobalRef(env, thread);
    (*jvmti)->SetThreadLocalStorage(jvmti, NULL, ref);
    mounted = ref;
}

static void JNICALL on_start(jvmtiEnv *j, JNIEnv *env, jthread thread)
{
    learn(env, thread);
    __atomic_add_fetch(&starts, 1, __ATOMIC_RELAXED);
}

static void JNICALL on_end(jvmtiEnv *j, JNIEnv *env, jthread thread)
{
    void *ref = NULL;
    if ((*jvmti)->GetThreadLocalStorage(jvmti, NULL, &ref) == JVMTI_ERROR_NONE && ref != NULL) {
        (*jvmti)->SetThreadLocalStorage(jvmti, NULL, NULL);
        (*env)->DeleteGlobalRef(env, (jobject)ref);
    }
    mounted = NULL;
    __atomic_add_fetch(&ends, 1, __ATOMIC_RELAXED);
}

static void JNICALL on_mount(jvmtiEnv *j, JNIEnv *env, jthread vthread)
{
    void *ref = NULL;
    (*jvmti)->GetThreadLocalStorage(jvmti, NULL, &ref);
    mounted = ref;
}

static void JNICALL on_unmount(jvmtiEnv *j, JNIEnv *env, jthread vthread) { mounted = NULL; }

static void follow_mounts(void)
{
    jint n = 0;
    jvmtiExtensionEventInfo *ev = NULL;
    if ((*jvmti)->GetExtensionEvents(jvmti, &n, &ev) != JVMTI_ERROR_NONE)
        return;
    for (jint i = 0; i < n; i++) {
        jvmtiExtensionEvent cb = NULL;
        if (strcmp(ev[i].id, "com.sun.hotspot.events.VirtualThreadMount") == 0)
            cb = (jvmtiExtensionEvent)on_mount;
        else if (strcmp(ev[i].id, "com.sun.hotspot.events.VirtualThreadUnmount") == 0)
            cb = (jvmtiExtensionEvent)on_unmount;
        if (cb != NULL) {
            (*jvmti)->SetExtensionEventCallback(jvmti, ev[i].extension_event_index, cb);
            (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, (jvmtiEvent)ev[i].extension_event_index, NULL);
        }
    }
}

static void JNICALL on_death(jvmtiEnv *j, JNIEnv *env)
{
    FILE *f = out_path[0] ? fopen(out_path, "w") : stderr;
    if (f != NULL) {
        fprintf(f, "plain_vthreads: starts=%ld ends=%ld\n", starts, ends);
        if (f != stderr)
            fclose(f);
    }
}

typedef void (JNICALL *any_callback)(void);
typedef union {
    jvmtiEventCallbacks cb;
    any_callback slot[88 - JVMTI_MIN_EVENT_TYPE_VAL + 1];
} callbacks;

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    const char *o = options ? strstr(options, "out=") : NULL;
    if (o != NULL)
        snprintf(out_path, sizeof out_path, "%.*s", (int)strcspn(o + 4, ","), o + 4);
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK)
        return JNI_ERR;
    jvmtiCapabilities caps, probe;
    memset(&caps, 0, sizeof caps);
    caps.can_tag_objects = 1;
    memset(&probe, 0, sizeof probe);
    probe.can_generate_sampled_object_alloc_events = 1;
    const unsigned char *p = (const unsigned char *)&probe;
    for (size_t i = 0, done = 0; i < sizeof probe && !done; i++)
        for (int b = 0; b < 8 && !done; b++)
            if (p[i] & (1u << b)) {
                size_t bit = i * 8 + (size_t)b + 1;
                ((unsigned char *)&caps)[bit / 8] |= (unsigned char)(1u << (bit % 8));
                done = 1;
            }
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
        fprintf(stderr, "plain_vthreads: this VM has no virtual threads\n");
        return JNI_ERR;
    }
    callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.cb.ThreadStart = on_start;
    cb.cb.ThreadEnd = on_end;
    cb.cb.VMDeath = on_death;
    cb.slot[87 - JVMTI_MIN_EVENT_TYPE_VAL] = (any_callback)on_start;
    cb.slot[88 - JVMTI_MIN_EVENT_TYPE_VAL] = (any_callback)on_end;
    if ((*jvmti)->SetEventCallbacks(jvmti, &cb.cb, (jint)sizeof cb) != JVMTI_ERROR_NONE)
        return JNI_ERR;
    follow_mounts();
    jint evs[] = {JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END, JVMTI_EVENT_VM_DEATH, 87, 88};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, (jvmtiEvent)evs[i], NULL) != JVMTI_ERROR_NONE)
            return JNI_ERR;
    return JNI_OK;
}
