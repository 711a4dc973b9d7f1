/*
 * monowner.c - who owns a Java monitor: seam_monitor_owner, which the
 * CONTENDED_EXIT emulation calls from the MonitorContendedEnter callback of
 * the first thread to block on a monitor (jvmpi/monitors.c).
 *
 * JVM TI 16 and later: GetObjectMonitorUsage always stops the threads to
 * answer, and the blocked thread asks itself.
 *
 * Before (JDK 8 and 11 here), HotSpot answers on the calling thread without
 * stopping anyone as long as every thread that could change the monitor is
 * suspended, and it counts the calling thread as suspended.  A thread that
 * asks about the monitor it is entering is often the only one pending on
 * it, the owner having just left.  The VM then walks the monitor's wait set
 * while the waiters leave it, reading stack frames their threads have moved
 * on from (JDK 8: SIGSEGV in GetObjectMonitorUsage), and before JDK 10 the
 * owner it finds may end and be freed between its lookup and the check
 * that it is suspended (JDK 8: a lock taken in freed memory, which corrupts
 * the C heap or hangs the VM at its next safepoint).
 *
 * So there threads of the layer's own, the askers, ask, while the blocked
 * thread waits in its callback.  That thread is pending on the monitor and
 * not suspended, so HotSpot gives up the direct answer (at the owner, or at
 * the first thread pending) and asks again at a safepoint, as JDK 16 does.
 * Up to then it has read only the owner or the pending threads, and these
 * stay: no thread passes its ThreadEnd while an asker asks (HotSpot frees a
 * thread only after its ThreadEnd), and the monitor of a Thread object is
 * not asked about (the one monitor a thread takes after its ThreadEnd is
 * its own Thread object's, to wake the threads joining it).  There are
 * ASKERS of them: JDK 8 answers the questions queued together in one
 * safepoint, and a blocked thread that waits long for its answer finds the
 * owner gone more often (no exit is sent then).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "backend.h"
#include "monowner.h"

static const char asker_name[] = "JVMPI layer monitor owner";

/* One blocked thread's question, on its stack until answered. */
typedef struct question {
    jobject object; /* global ref */
    jobjectID owner;
    bool answered;
    struct question *next;
} question;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static question *first, *last; /* under lock */
static int asking;             /* under lock: askers in GetObjectMonitorUsage */
static int enders;             /* under lock: ThreadEnds waiting for them to finish */

static _Atomic int careful = 0;     /* 0 not known yet, 1 careful, 2 not */
static _Atomic bool running;        /* the askers are started */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static bool start_tried; /* under start_lock */
#define ASKERS 4
static jobject asker_object[ASKERS]; /* their Thread objects, set at VM init (careful VMs) */
static jclass thread_class;         /* java.lang.Thread, set at VM init (careful VMs) */

bool bk_monowner_careful(void)
{
    int c = atomic_load(&careful);
    if (c == 0) {
        jint version = 0;
        c = 1; /* not knowing, take care */
        if (JVMTI_OK(JVMTI_CALL(bk.jvmti, GetVersionNumber, &version))) {
            jint major = (version & JVMTI_VERSION_MASK_MAJOR) >> JVMTI_VERSION_SHIFT_MAJOR;
            c = major >= 16 ? 2 : 1; /* JDK 8 says 1 (JVM TI 1.2), later JDKs their own number */
        }
        atomic_store(&careful, c);
    }
    return c == 1;
}

void bk_monitor_usage_free(JNIEnv *env, jvmtiMonitorUsage *u)
{
    if (u->owner != NULL) {
        (*env)->DeleteLocalRef(env, u->owner);
    }
    for (jint i = 0; i < u->waiter_count; i++) {
        (*env)->DeleteLocalRef(env, u->waiters[i]);
    }
    for (jint i = 0; i < u->notify_waiter_count; i++) {
        (*env)->DeleteLocalRef(env, u->notify_waiters[i]);
    }
    bk_deallocate(u->waiters);
    bk_deallocate(u->notify_waiters);
}

/* The owner's thread ID, asked on this thread. */
static jobjectID usage_owner(JNIEnv *env, jobject object)
{
    jvmtiMonitorUsage u;
    memset(&u, 0, sizeof u);
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetObjectMonitorUsage, object, &u))) {
        return NULL;
    }
    jlong tag = u.owner != NULL ? bk_object_tag(env, u.owner) : 0;
    bk_monitor_usage_free(env, &u);
    return tag != 0 ? seam_id_from_tag(tag) : NULL;
}

static void JNICALL asker_main(jvmtiEnv *jvmti, JNIEnv *env, void *unused)
{
    bk_alloc_quiet(true);
    pthread_mutex_lock(&lock);
    for (;;) {
        /* An ending thread first: it waits only for the questions under way. */
        while (first == NULL || enders > 0) {
            pthread_cond_wait(&changed, &lock);
        }
        question *q = first;
        first = q->next;
        if (first == NULL) {
            last = NULL;
        }
        asking++;
        pthread_mutex_unlock(&lock);
        jobjectID owner = usage_owner(env, q->object);
        pthread_mutex_lock(&lock);
        asking--;
        q->owner = owner;
        q->answered = true;
        pthread_cond_broadcast(&changed);
    }
}

/* At the first question, so that an agent that asks none runs no askers.
 * RunAgentThread runs no Java code on the caller (the Thread objects are
 * made at VM init), so a thread in the middle of a contended enter may. */
static bool start_askers(void)
{
    pthread_mutex_lock(&start_lock);
    if (!atomic_load(&running) && !start_tried && asker_object[0] != NULL) {
        start_tried = true;
        int started = 0;
        for (int i = 0; i < ASKERS && asker_object[i] != NULL; i++) {
            started += JVMTI_OK(JVMTI_CALL(bk.jvmti, RunAgentThread, asker_object[i], asker_main, NULL,
                                           JVMTI_THREAD_NORM_PRIORITY));
        }
        atomic_store(&running, started > 0);
        if (started == 0) {
            LOG_WARN("the thread '%s' did not start: MONITOR_CONTENDED_EXIT will be sent only by threads that "
                     "got a monitor after blocking",
                     asker_name);
        }
    }
    pthread_mutex_unlock(&start_lock);
    return atomic_load(&running);
}

void bk_monowner_vm_init(JNIEnv *env)
{
    if (!bk_monowner_careful()) {
        return;
    }
    /* The layer's own objects are no allocations of the program's. */
    bool was_quiet = bk_alloc_quiet(true);
    jclass cls = (*env)->FindClass(env, "java/lang/Thread");
    jmethodID ctor = cls != NULL ? (*env)->GetMethodID(env, cls, "<init>", "(Ljava/lang/String;)V") : NULL;
    jstring name = ctor != NULL ? (*env)->NewStringUTF(env, asker_name) : NULL;
    jobject threads[ASKERS] = {NULL};
    for (int i = 0; i < ASKERS && name != NULL; i++) {
        threads[i] = (*env)->NewObject(env, cls, ctor, name);
        if ((*env)->ExceptionCheck(env)) {
            (*env)->ExceptionDescribe(env);
            (*env)->ExceptionClear(env);
            threads[i] = NULL;
            break;
        }
    }
    bk_alloc_quiet(was_quiet);
    pthread_mutex_lock(&start_lock);
    thread_class = cls != NULL ? bk_new_global_ref(env, cls) : NULL;
    for (int i = 0, k = 0; i < ASKERS && threads[i] != NULL && thread_class != NULL; i++) {
        asker_object[k] = bk_new_global_ref(env, threads[i]);
        k += asker_object[k] != NULL;
    }
    pthread_mutex_unlock(&start_lock);
    if (asker_object[0] == NULL) {
        LOG_WARN("the thread '%s' could not be made: MONITOR_CONTENDED_EXIT will be sent only by threads that "
                 "got a monitor after blocking",
                 asker_name);
    }
    for (int i = 0; i < ASKERS; i++) {
        if (threads[i] != NULL) {
            (*env)->DeleteLocalRef(env, threads[i]);
        }
    }
    if (name != NULL) {
        (*env)->DeleteLocalRef(env, name);
    }
    if (cls != NULL) {
        (*env)->DeleteLocalRef(env, cls);
    }
}

bool bk_monowner_is_asker(JNIEnv *env, jthread thread)
{
    for (int i = 0; i < ASKERS && asker_object[i] != NULL; i++) {
        if ((*env)->IsSameObject(env, thread, asker_object[i])) {
            return true;
        }
    }
    return false;
}

void bk_monowner_thread_ending(void)
{
    /* A thread that ends before the askers start owns no monitor but its
     * own Thread object's by now: they cannot meet it. */
    if (!atomic_load(&running)) {
        return;
    }
    pthread_mutex_lock(&lock);
    enders++;
    while (asking > 0) {
        pthread_cond_wait(&changed, &lock);
    }
    if (--enders == 0) {
        pthread_cond_broadcast(&changed);
    }
    pthread_mutex_unlock(&lock);
}

jobjectID seam_monitor_owner(JNIEnv *env, jobject object)
{
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_get_monitor_info = 1;
    if (!bk_need_capabilities(&caps)) {
        return NULL;
    }
    if (!bk_monowner_careful()) {
        return usage_owner(env, object);
    }
    if (thread_class == NULL || (*env)->IsInstanceOf(env, object, thread_class) ||
        !(atomic_load(&running) || start_askers())) {
        return NULL;
    }
    question q = {bk_new_global_ref(env, object), NULL, false, NULL};
    if (q.object == NULL) {
        return NULL;
    }
    pthread_mutex_lock(&lock);
    if (last != NULL) {
        last->next = &q;
    } else {
        first = &q;
    }
    last = &q;
    pthread_cond_broadcast(&changed);
    while (!q.answered) {
        pthread_cond_wait(&changed, &lock);
    }
    pthread_mutex_unlock(&lock);
    bk_delete_global_ref(env, q.object);
    return q.owner;
}
