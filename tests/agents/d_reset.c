/*
 * d_reset - DATA_RESET_REQUEST, whose trigger is SIGUSR1 (see
 * docs/design.md).  Options: out=FILE,want=N.  Enables the event in
 * JVM_OnLoad and counts it; checks at JVM_SHUT_DOWN that exactly N arrived,
 * each on a thread the VM knows (a JNIEnv of a Java thread, as the agent may
 * call JNI in its handler) and not on a thread the agent was told about by
 * THREAD_START (the layer's own delivery thread).
 */
#include "c_common.h"

static int resets, want = -1;
static long bad_env;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void notify(JVMPI_Event *ev)
{
    if (ev->event_type == JVMPI_EVENT_DATA_RESET_REQUEST) {
        JNIEnv *env = c_current_env();
        if (env == NULL)
            C_FAIL_SOME(bad_env, "DATA_RESET_REQUEST on a thread outside the VM");
        pthread_mutex_lock(&lock);
        resets++;
        pthread_mutex_unlock(&lock);
        c_log("DATA_RESET_REQUEST %d", resets);
    } else if (ev->event_type == JVMPI_EVENT_JVM_SHUT_DOWN) {
        c_check(resets == want, "%d DATA_RESET_REQUEST arrived (expected %d)", resets, want);
        c_check(bad_env == 0, "every DATA_RESET_REQUEST came on a Java thread");
        c_summary("d_reset");
    }
}

JNIEXPORT jint JNICALL Java_D_1Reset_resets(JNIEnv *env, jclass cls)
{
    pthread_mutex_lock(&lock);
    int n = resets;
    pthread_mutex_unlock(&lock);
    return n;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (c_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    char *w = c_opt(options, "want");
    want = w ? atoi(w) : -1;
    free(w);
    c_pi->NotifyEvent = notify;
    c_enable(JVMPI_EVENT_DATA_RESET_REQUEST, "DATA_RESET_REQUEST");
    c_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    return JNI_OK;
}
