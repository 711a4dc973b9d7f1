/*
 * plain_monitors - the baseline for bench/monitors.sh: a plain JVM TI agent
 * doing what the layer does for a legacy agent that counts the Java monitor
 * events: MonitorContendedEnter/Entered and MonitorWait/Waited on, every
 * monitor object tagged (JVMPI names objects by ID), one count per event.
 * Options: out=<file> where the counts are written at VM death.
 */
#include <jvmti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static jvmtiEnv *jvmti;
static char out_path[1024];
static jlong next_tag = 1;
static jrawMonitorID tag_lock;
static volatile long counts[4];

static void tag(jobject obj)
{
    jlong t = 0;
    (*jvmti)->RawMonitorEnter(jvmti, tag_lock);
    (*jvmti)->GetTag(jvmti, obj, &t);
    if (t == 0) {
        (*jvmti)->SetTag(jvmti, obj, next_tag++);
    }
    (*jvmti)->RawMonitorExit(jvmti, tag_lock);
}

static void JNICALL on_enter(jvmtiEnv *j, JNIEnv *env, jthread t, jobject o)
{
    tag(o);
    __atomic_add_fetch(&counts[0], 1, __ATOMIC_RELAXED);
}
static void JNICALL on_entered(jvmtiEnv *j, JNIEnv *env, jthread t, jobject o)
{
    tag(o);
    __atomic_add_fetch(&counts[1], 1, __ATOMIC_RELAXED);
}
static void JNICALL on_wait(jvmtiEnv *j, JNIEnv *env, jthread t, jobject o, jlong ms)
{
    tag(o);
    __atomic_add_fetch(&counts[2], 1, __ATOMIC_RELAXED);
}
static void JNICALL on_waited(jvmtiEnv *j, JNIEnv *env, jthread t, jobject o, jboolean to)
{
    tag(o);
    __atomic_add_fetch(&counts[3], 1, __ATOMIC_RELAXED);
}

static void JNICALL on_death(jvmtiEnv *j, JNIEnv *env)
{
    FILE *f = out_path[0] ? fopen(out_path, "w") : stderr;
    if (f != NULL) {
        fprintf(f, "plain_monitors: enter=%ld entered=%ld wait=%ld waited=%ld\n", counts[0], counts[1], counts[2],
                counts[3]);
        if (f != stderr) {
            fclose(f);
        }
    }
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    const char *o = options ? strstr(options, "out=") : NULL;
    if (o != NULL) {
        snprintf(out_path, sizeof out_path, "%.*s", (int)strcspn(o + 4, ","), o + 4);
    }
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
        return JNI_ERR;
    }
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_tag_objects = 1;
    caps.can_generate_monitor_events = 1;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.MonitorContendedEnter = on_enter;
    cb.MonitorContendedEntered = on_entered;
    cb.MonitorWait = on_wait;
    cb.MonitorWaited = on_waited;
    cb.VMDeath = on_death;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE ||
        (*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb) != JVMTI_ERROR_NONE ||
        (*jvmti)->CreateRawMonitor(jvmti, "plain_monitors tags", &tag_lock) != JVMTI_ERROR_NONE) {
        return JNI_ERR;
    }
    jvmtiEvent evs[] = {JVMTI_EVENT_MONITOR_CONTENDED_ENTER, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED,
                        JVMTI_EVENT_MONITOR_WAIT, JVMTI_EVENT_MONITOR_WAITED, JVMTI_EVENT_VM_DEATH};
    for (int i = 0; i < 5; i++) {
        if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, evs[i], NULL) != JVMTI_ERROR_NONE) {
            return JNI_ERR;
        }
    }
    return JNI_OK;
}
