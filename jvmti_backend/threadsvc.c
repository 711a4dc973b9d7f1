/*
 * threadsvc.c - threads: what THREAD_START says, thread IDs (tags on
 * java.lang.Thread objects), suspension, status, CPU time, and the threads
 * the layer and the agent create.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "monowner.h"

static char *group_name(JNIEnv *env, jthreadGroup group, jthreadGroup *parent)
{
    jvmtiThreadGroupInfo gi;
    memset(&gi, 0, sizeof gi);
    *parent = NULL;
    if (group == NULL || !JVMTI_OK(JVMTI_CALL(bk.jvmti, GetThreadGroupInfo, group, &gi))) {
        return NULL;
    }
    *parent = gi.parent;
    return bk_take_string(gi.name);
}

static jobjectID thread_id(JNIEnv *env, jthread thread)
{
    jlong tag = bk_object_tag(env, thread);
    return tag != 0 ? seam_id_from_tag(tag) : NULL;
}

/* The names of the last thread group asked about: virtual threads, which
 * can start by the million, all share one group. */
static pthread_mutex_t group_lock = PTHREAD_MUTEX_INITIALIZER;
static jweak last_group;
static char *last_group_name, *last_parent_name;

static char *dup_or_null(const char *s) { return s != NULL ? strdup(s) : NULL; }

static bool cached_group_names(JNIEnv *env, jthreadGroup group, seam_thread_info *info)
{
    bool hit = false;
    if (group == NULL) {
        return false;
    }
    pthread_mutex_lock(&group_lock);
    if (last_group != NULL && (*env)->IsSameObject(env, last_group, group)) {
        info->group_name = dup_or_null(last_group_name);
        info->parent_name = dup_or_null(last_parent_name);
        hit = true;
    }
    pthread_mutex_unlock(&group_lock);
    return hit;
}

static void cache_group_names(JNIEnv *env, jthreadGroup group, const seam_thread_info *info)
{
    if (group == NULL) {
        return;
    }
    jweak weak = bk_new_weak_ref(env, group);
    if (weak == NULL) {
        return;
    }
    jweak old;
    char *name = dup_or_null(info->group_name), *parent = dup_or_null(info->parent_name);
    {
        pthread_mutex_lock(&group_lock);
        old = last_group;
        free(last_group_name);
        free(last_parent_name);
        last_group = weak;
        last_group_name = name;
        last_parent_name = parent;
        pthread_mutex_unlock(&group_lock);
    }
    if (old != NULL) {
        bk_delete_weak_ref(env, old);
    }
}

bool bk_thread_info(JNIEnv *env, JNIEnv *thread_env, jthread thread, seam_thread_info *out)
{
    jvmtiThreadInfo ti;
    memset(&ti, 0, sizeof ti);
    memset(out, 0, sizeof *out);
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetThreadInfo, thread, &ti))) {
        return false;
    }
    seam_thread_info info;
    memset(&info, 0, sizeof info);
    info.env = thread_env;
    info.id = thread_id(env, thread);
    info.handle = bk_new_global_ref(env, thread);
    info.name = bk_take_string(ti.name);
    jthreadGroup parent = NULL, grandparent = NULL;
    if (!cached_group_names(env, ti.thread_group, &info)) {
        info.group_name = group_name(env, ti.thread_group, &parent);
        info.parent_name = group_name(env, parent, &grandparent);
        cache_group_names(env, ti.thread_group, &info);
    }
    info.internal = (bk.internal_thread != NULL && (*env)->IsSameObject(env, thread, bk.internal_thread)) ||
                    bk_monowner_is_asker(env, thread);
    if (ti.thread_group) (*env)->DeleteLocalRef(env, ti.thread_group);
    if (ti.context_class_loader) (*env)->DeleteLocalRef(env, ti.context_class_loader);
    if (parent) (*env)->DeleteLocalRef(env, parent);
    if (grandparent) (*env)->DeleteLocalRef(env, grandparent);
    if (info.id == NULL || info.handle == NULL) {
        LOG_ERROR("thread %s could not be given an ID; the agent will not see it", info.name ? info.name : "?");
        free(info.name);
        free(info.group_name);
        free(info.parent_name);
        if (info.handle != NULL) {
            bk_delete_global_ref(env, info.handle);
        }
        return false;
    }
    *out = info;
    return true;
}

/* thread_env is the thread's own JNIEnv *, NULL when called from another
 * thread (which cannot learn it). */
static void thread_started(JNIEnv *env, JNIEnv *thread_env, jthread thread)
{
    seam_thread_info info;
    if (bk_thread_info(env, thread_env, thread, &info)) {
        layer_thread_started(&info);
    }
}

void bk_thread_started(JNIEnv *env, jthread thread) { thread_started(env, env, thread); }

/* Every constructed thread has a group, until it ends; the constructor
 * sets it. */
static bool constructed(JNIEnv *env, jthread thread)
{
    jvmtiThreadInfo ti;
    memset(&ti, 0, sizeof ti);
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetThreadInfo, thread, &ti))) {
        return false;
    }
    bk_deallocate(ti.name);
    if (ti.context_class_loader != NULL) {
        (*env)->DeleteLocalRef(env, ti.context_class_loader);
    }
    if (ti.thread_group == NULL) {
        return false;
    }
    (*env)->DeleteLocalRef(env, ti.thread_group);
    return true;
}

seam_adoption seam_thread_adopt(JNIEnv *env)
{
    jthread me = NULL;
    if (!JVMTI_OK(JVMTI_TRY(bk.jvmti, GetCurrentThread, &me)) || me == NULL) {
        return SEAM_ADOPT_HIDDEN;
    }
    /* GetAllThreads lists the threads the VM shows to tools, and no others. */
    bool shown = false;
    jint n = 0;
    jthread *all = NULL;
    if (JVMTI_OK(JVMTI_CALL(bk.jvmti, GetAllThreads, &n, &all))) {
        for (jint i = 0; i < n; i++) {
            shown = shown || (*env)->IsSameObject(env, all[i], me);
            (*env)->DeleteLocalRef(env, all[i]);
        }
        bk_deallocate(all);
    }
    seam_adoption result = !shown ? SEAM_ADOPT_HIDDEN : constructed(env, me) ? SEAM_ADOPTED : SEAM_ADOPT_UNBORN;
    if (result == SEAM_ADOPTED) {
        LOG_DEBUG("a thread sends events before its ThreadStart: recorded now");
        thread_started(env, env, me);
    }
    (*env)->DeleteLocalRef(env, me);
    return result;
}

/* Threads started in the start phase of a VM that refuses GetThreadInfo
 * before the live phase (JDK 8), kept with their JNIEnv *, which only their
 * own ThreadStart reveals, until VM init. */
typedef struct early_thread {
    JNIEnv *env;
    jobject thread; /* global ref */
    struct early_thread *next;
} early_thread;
static early_thread *early_threads;
static pthread_mutex_t early_lock = PTHREAD_MUTEX_INITIALIZER;

static bool keep_early(JNIEnv *env, jthread thread)
{
    jvmtiPhase phase = JVMTI_PHASE_LIVE;
    JVMTI_CALL(bk.jvmti, GetPhase, &phase);
    if (phase == JVMTI_PHASE_LIVE) {
        return false;
    }
    early_thread *e = malloc(sizeof *e);
    if (e != NULL) {
        e->env = env;
        e->thread = (*env)->NewGlobalRef(env, thread);
        pthread_mutex_lock(&early_lock);
        e->next = early_threads;
        early_threads = e;
        pthread_mutex_unlock(&early_lock);
    }
    return true;
}

void bk_threads_started_unseen(JNIEnv *env)
{
    pthread_mutex_lock(&early_lock);
    early_thread *e = early_threads;
    early_threads = NULL;
    pthread_mutex_unlock(&early_lock);
    while (e != NULL) {
        early_thread *next = e->next;
        if (e->thread != NULL) {
            jint state = 0;
            jlong tag = 0;
            /* One that ended already is never announced. */
            if (JVMTI_OK(JVMTI_CALL(bk.jvmti, GetThreadState, e->thread, &state)) &&
                (state & JVMTI_THREAD_STATE_ALIVE) && JVMTI_OK(JVMTI_CALL(bk.jvmti, GetTag, e->thread, &tag)) &&
                tag == 0) {
                thread_started(env, e->env, e->thread);
            }
            (*env)->DeleteGlobalRef(env, e->thread);
        }
        free(e);
        e = next;
    }
    jint n = 0;
    jthread *threads = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetAllThreads, &n, &threads))) {
        return;
    }
    for (jint i = 0; i < n; i++) {
        jlong tag = 0;
        if (JVMTI_OK(JVMTI_CALL(bk.jvmti, GetTag, threads[i], &tag)) && tag == 0) {
            thread_started(env, NULL, threads[i]);
        }
        (*env)->DeleteLocalRef(env, threads[i]);
    }
    bk_deallocate(threads);
}

void JNICALL bk_on_thread_start(jvmtiEnv *jvmti, JNIEnv *env, jthread thread)
{
    BEGIN_CALLBACK();
    if (!keep_early(env, thread)) {
        bk_thread_started(env, thread);
    }
    END_CALLBACK();
}

void JNICALL bk_on_thread_end(jvmtiEnv *jvmti, JNIEnv *env, jthread thread)
{
    /* Not freed while the layer asks who owns a monitor (monowner.c). */
    bk_monowner_thread_ending();
    BEGIN_CALLBACK();
    layer_thread_ended(env);
    /* Last: VMDeath may follow at once (exitfrees.c). */
    bk_exitfrees_thread_end(env);
    END_CALLBACK();
}

jobjectID seam_current_thread_id(void)
{
    jthread thread = NULL;
    jlong tag = 0;
    JNIEnv *env = seam_current_env();
    if (env == NULL || !JVMTI_OK(JVMTI_CALL(bk.jvmti, GetCurrentThread, &thread)) || thread == NULL) {
        return NULL;
    }
    JVMTI_CALL(bk.jvmti, GetTag, thread, &tag);
    (*env)->DeleteLocalRef(env, thread);
    return tag != 0 ? seam_id_from_tag(tag) : NULL;
}

void seam_thread_handle_release(void *handle)
{
    JNIEnv *env = seam_current_env();
    if (env != NULL) {
        bk_delete_global_ref(env, (jobject)handle);
    }
    /* From a thread outside the VM the reference stays: a leak, never a crash. */
}

/* The thread may have ended since the JVMPI side looked it up (an agent
 * sampling under thread churn), or the VM be going down: a failure is the
 * answer, not an error, so these calls are JVMTI_TRY. */
jint seam_thread_status(void *handle)
{
    jint state = 0;
    if (!JVMTI_OK(JVMTI_TRY(bk.jvmti, GetThreadState, (jthread)handle, &state)) ||
        !(state & JVMTI_THREAD_STATE_ALIVE)) {
        return JVMPI_FAIL;
    }
    jint status;
    if (state & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER) {
        status = JVMPI_THREAD_MONITOR_WAIT;
    } else if ((state & JVMTI_THREAD_STATE_WAITING) && !(state & JVMTI_THREAD_STATE_SLEEPING)) {
        status = JVMPI_THREAD_CONDVAR_WAIT; /* Object.wait, park */
    } else {
        /* Thread.sleep too: JDK 5.0 showed a sleeping thread as RUNNABLE. */
        status = JVMPI_THREAD_RUNNABLE;
    }
    if (state & JVMTI_THREAD_STATE_SUSPENDED) {
        status |= JVMPI_THREAD_SUSPENDED;
    }
    if (state & JVMTI_THREAD_STATE_INTERRUPTED) {
        status |= JVMPI_THREAD_INTERRUPTED;
    }
    return status;
}

bool seam_thread_suspend(void *handle) { return JVMTI_OK(JVMTI_TRY(bk.jvmti, SuspendThread, (jthread)handle)); }
bool seam_thread_resume(void *handle) { return JVMTI_OK(JVMTI_TRY(bk.jvmti, ResumeThread, (jthread)handle)); }

jlong seam_thread_cpu_time(void *handle)
{
    jlong ns = -1;
    if (!JVMTI_OK(JVMTI_TRY(bk.jvmti, GetThreadCpuTime, (jthread)handle, &ns))) {
        return -1;
    }
    return ns;
}

/* ---- threads the layer starts ------------------------------------------------ */

typedef struct {
    void (*f)(void *);
    void *arg;
} system_thread_start;

static void JNICALL run_system_thread(jvmtiEnv *jvmti, JNIEnv *env, void *p)
{
    system_thread_start start = *(system_thread_start *)p;
    free(p);
    start.f(start.arg);
}

static jthread new_thread_object(JNIEnv *env, const char *name)
{
    jclass cls = (*env)->FindClass(env, "java/lang/Thread");
    jmethodID ctor = cls != NULL ? (*env)->GetMethodID(env, cls, "<init>", "(Ljava/lang/String;)V") : NULL;
    jstring jname = ctor != NULL ? (*env)->NewStringUTF(env, name) : NULL;
    jthread thread = jname != NULL ? (*env)->NewObject(env, cls, ctor, jname) : NULL;
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionDescribe(env);
        (*env)->ExceptionClear(env);
        thread = NULL;
    }
    if (cls) (*env)->DeleteLocalRef(env, cls);
    if (jname) (*env)->DeleteLocalRef(env, jname);
    return thread;
}

static bool start_thread(JNIEnv *env, jthread thread, jvmtiStartFunction fn, void *arg, jint priority)
{
    bool ok = JVMTI_OK(JVMTI_CALL(bk.jvmti, RunAgentThread, thread, fn, arg, priority));
    (*env)->DeleteLocalRef(env, thread);
    return ok;
}

bool seam_start_system_thread(JNIEnv *env, const char *name, jint priority, void (*f)(void *), void *arg)
{
    jthread thread = new_thread_object(env, name);
    system_thread_start *start = malloc(sizeof *start);
    if (thread == NULL || start == NULL) {
        LOG_ERROR("CreateSystemThread(%s): the thread object could not be made", name);
        free(start);
        return false;
    }
    start->f = f;
    start->arg = arg;
    if (!start_thread(env, thread, run_system_thread, start, priority)) {
        free(start);
        return false;
    }
    return true;
}

static void JNICALL run_delivery(jvmtiEnv *jvmti, JNIEnv *env, void *unused)
{
    /* What this thread allocates (the layer's calls into Java) is the
     * layer's: never given an ID that no OBJECT_ALLOC announced. */
    bk_alloc_quiet(true);
    layer_delivery_main(env);
}

bool seam_start_delivery_thread(JNIEnv *env)
{
    /* The layer's own objects are no allocations of the program's. */
    bk_alloc_quiet(true);
    jthread thread = new_thread_object(env, "JVMPI layer delivery");
    bk_alloc_quiet(false);
    if (thread == NULL) {
        return false;
    }
    bk.internal_thread = bk_new_global_ref(env, thread);
    return start_thread(env, thread, run_delivery, NULL, JVMTI_THREAD_NORM_PRIORITY);
}
