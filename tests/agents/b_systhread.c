/*
 * b_systhread - CreateSystemThread (it_b_systhread.sh, with B_ListThreads).
 *
 * - In JVM_OnLoad, before JVM_INIT_DONE, CreateSystemThread must refuse
 *   (JNI_ERR) without crashing, and the function must never run: the spec
 *   allows the call only after JVM_INIT_DONE.
 * - At JVM_INIT_DONE, threads "b-max" (JVMPI_MAXIMUM_PRIORITY), "b-min"
 *   (JVMPI_MINIMUM_PRIORITY) and "b-normal" (JVMPI_NORMAL_PRIORITY) are made.
 *   Each must run its function, and get a THREAD_START whose thread_env_id
 *   is the JNIEnv * the thread sees itself (the spec: CreateSystemThread
 *   causes thread start events).  Each thread also looks at itself through
 *   JNI (Thread.currentThread(): name, priority, daemon) and checks that
 *   GetThreadObject of its JNIEnv * converts back (jobjectID2jobject) to
 *   that same Thread.  The Java side checks names, priorities and daemon
 *   flags in the VM's thread dump.
 * Checks are made at JVM_SHUT_DOWN.  Options: OUTFILE.
 */
#include "b_common.h"

#define AGENT "b_systhread"

enum { T_MAX, T_MIN, T_NORMAL, NT };
static const char *const tnames[NT] = { "b-max", "b-min", "b-normal" };
static const jint prios[NT] = { JVMPI_MAXIMUM_PRIORITY, JVMPI_MINIMUM_PRIORITY, JVMPI_NORMAL_PRIORITY };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static JNIEnv *self_env[NT];     /* what the thread itself sees */
static JNIEnv *start_env[NT];    /* what its THREAD_START said */
static struct {
    char name[64];
    jint priority;
    jboolean daemon;
    int same_object;
} seen[NT];                      /* what the thread saw of its java.lang.Thread */
static int starts[NT];
static int early_ran, early_started;
static volatile int shutting_down;

/* Plain JNI, as any agent may use in its own threads. */
static void look_at_self(JNIEnv *env, int t)
{
    seen[t].priority = -1;
    seen[t].same_object = -1;
    jclass cls = (*env)->FindClass(env, "java/lang/Thread");
    if (!cls) {
        (*env)->ExceptionClear(env);
        return;
    }
    jmethodID current = (*env)->GetStaticMethodID(env, cls, "currentThread", "()Ljava/lang/Thread;");
    jmethodID get_name = (*env)->GetMethodID(env, cls, "getName", "()Ljava/lang/String;");
    jmethodID get_prio = (*env)->GetMethodID(env, cls, "getPriority", "()I");
    jmethodID is_daemon = (*env)->GetMethodID(env, cls, "isDaemon", "()Z");
    jobject self = (current && get_name && get_prio && is_daemon)
                       ? (*env)->CallStaticObjectMethod(env, cls, current) : NULL;
    if (self) {
        jstring name = (*env)->CallObjectMethod(env, self, get_name);
        const char *chars = name ? (*env)->GetStringUTFChars(env, name, NULL) : NULL;
        if (chars) {
            snprintf(seen[t].name, sizeof seen[t].name, "%s", chars);
            (*env)->ReleaseStringUTFChars(env, name, chars);
        }
        seen[t].priority = (*env)->CallIntMethod(env, self, get_prio);
        seen[t].daemon = (*env)->CallBooleanMethod(env, self, is_daemon);
        jobjectID id = b_pi->GetThreadObject(env);
        jobject back = id ? b_pi->jobjectID2jobject(id) : NULL;
        seen[t].same_object = back != NULL && (*env)->IsSameObject(env, back, self);
    }
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionDescribe(env);
        (*env)->ExceptionClear(env);
    }
}

static void run_thread(int t)
{
    JNIEnv *env = b_self_env();
    if (env)
        look_at_self(env, t);
    pthread_mutex_lock(&lock);
    self_env[t] = env;
    pthread_mutex_unlock(&lock);
    /* Stay alive until the Java program has listed the threads. */
    while (!shutting_down)
        b_sleep_ms(20);
}

static void f_max(void *arg) { run_thread(T_MAX); }
static void f_min(void *arg) { run_thread(T_MIN); }
static void f_normal(void *arg) { run_thread(T_NORMAL); }

static void f_early(void *arg)
{
    __atomic_store_n(&early_ran, 1, __ATOMIC_SEQ_CST);
}

static void shut_down(void)
{
    b_check(!__atomic_load_n(&early_ran, __ATOMIC_SEQ_CST), "the thread refused in JVM_OnLoad never ran");
    pthread_mutex_lock(&lock);
    b_check(early_started == 0, "no THREAD_START for the thread refused in JVM_OnLoad");
    for (int t = 0; t < NT; t++) {
        b_check(self_env[t] != NULL, "%s ran its function, with a JNIEnv * (%p)", tnames[t], (void *)self_env[t]);
        b_check(starts[t] == 1, "%s: one THREAD_START (%d)", tnames[t], starts[t]);
        b_check(self_env[t] != NULL && start_env[t] == self_env[t],
                "%s: THREAD_START's thread_env_id %p is the thread's own JNIEnv * %p", tnames[t],
                (void *)start_env[t], (void *)self_env[t]);
        b_check(strcmp(seen[t].name, tnames[t]) == 0 && seen[t].priority == prios[t] && seen[t].daemon,
                "%s: its java.lang.Thread says name '%s', priority %d (expected %d), daemon %d", tnames[t],
                seen[t].name, (int)seen[t].priority, (int)prios[t], (int)seen[t].daemon);
        b_check(seen[t].same_object == 1, "%s: jobjectID2jobject(GetThreadObject(env)) is Thread.currentThread()",
                tnames[t]);
    }
    pthread_mutex_unlock(&lock);
    shutting_down = 1;
    b_summary(AGENT);
}

static void notify_event(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_THREAD_START: {
        const char *n = ev->u.thread_start.thread_name;
        if (!n)
            break;
        pthread_mutex_lock(&lock);
        for (int t = 0; t < NT; t++)
            if (strcmp(n, tnames[t]) == 0) {
                starts[t]++;
                start_env[t] = ev->u.thread_start.thread_env_id;
            }
        if (strcmp(n, "b-too-early") == 0)
            early_started++;
        pthread_mutex_unlock(&lock);
        break;
    }
    case JVMPI_EVENT_JVM_INIT_DONE: {
        static void (*const fns[NT])(void *) = { f_max, f_min, f_normal };
        for (int t = 0; t < NT; t++) {
            jint rc = b_pi->CreateSystemThread((char *)tnames[t], prios[t], fns[t]);
            b_check(rc == JNI_OK, "CreateSystemThread(%s, priority %d) at JVM_INIT_DONE returns JNI_OK (%d)",
                    tnames[t], (int)prios[t], (int)rc);
        }
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        shut_down();
        break;
    default:
        b_fail("event %d was not enabled", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved);

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (b_setup(vm, options, AGENT) != JNI_OK)
        return JNI_ERR;
    b_pi->NotifyEvent = notify_event;
    b_check(b_pi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL) == JVMPI_SUCCESS, "EnableEvent(THREAD_START)");
    b_check(b_pi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL) == JVMPI_SUCCESS, "EnableEvent(JVM_INIT_DONE)");
    b_check(b_pi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL) == JVMPI_SUCCESS, "EnableEvent(JVM_SHUT_DOWN)");
    jint rc = b_pi->CreateSystemThread("b-too-early", JVMPI_NORMAL_PRIORITY, f_early);
    b_check(rc == JNI_ERR, "CreateSystemThread in JVM_OnLoad, before JVM_INIT_DONE, returns JNI_ERR (%d)", (int)rc);
    return JNI_OK;
}
