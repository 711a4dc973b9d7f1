/*
 * plain_methods - the baseline for bench/methods.sh: a plain JVM TI agent
 * doing what count_methods does through the layer (count MethodEntry and
 * MethodExit), with nothing else.
 *
 *   java -agentpath:/path/libplain_methods.so=out=counts.txt App
 *
 * Output, one line: plain_methods: entries=N exits=X
 */
#include <jvmti.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved);

static char out_path[1024];
static _Atomic uint64_t entries, exits;

static void JNICALL on_entry(jvmtiEnv *j, JNIEnv *env, jthread t, jmethodID m)
{
    atomic_fetch_add_explicit(&entries, 1, memory_order_relaxed);
}

static void JNICALL on_exit_(jvmtiEnv *j, JNIEnv *env, jthread t, jmethodID m, jboolean ex, jvalue v)
{
    atomic_fetch_add_explicit(&exits, 1, memory_order_relaxed);
}

static void JNICALL on_death(jvmtiEnv *j, JNIEnv *env)
{
    FILE *f = out_path[0] ? fopen(out_path, "w") : stderr;
    if (f == NULL)
        f = stderr;
    fprintf(f, "plain_methods: entries=%llu exits=%llu\n", (unsigned long long)atomic_load(&entries),
            (unsigned long long)atomic_load(&exits));
    if (f != stderr)
        fclose(f);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (options != NULL && strncmp(options, "out=", 4) == 0 && strlen(options + 4) < sizeof out_path)
        strcpy(out_path, options + 4);
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK)
        return JNI_ERR;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_method_entry_events = 1;
    caps.can_generate_method_exit_events = 1;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.MethodEntry = on_entry;
    cb.MethodExit = on_exit_;
    cb.VMDeath = on_death;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE ||
        (*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb) != JVMTI_ERROR_NONE ||
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_METHOD_ENTRY, NULL) != JVMTI_ERROR_NONE ||
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_METHOD_EXIT, NULL) != JVMTI_ERROR_NONE ||
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL) != JVMTI_ERROR_NONE)
        return JNI_ERR;
    return JNI_OK;
}
