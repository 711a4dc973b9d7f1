/*
 * count_threads - the legacy agent bench/vthreads.sh runs through the
 * layer: counts THREAD_START and THREAD_END.  Options: out=<file>[,none];
 * with "none" it enables nothing, which measures what the layer costs by
 * being there.
 */
#include <jvmpi.h>
#include <stdio.h>
#include <string.h>

static JVMPI_Interface *pi;
static char out_path[1024];
static volatile long starts, ends;

static void JNICALL notify_event(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_THREAD_START: __atomic_add_fetch(&starts, 1, __ATOMIC_RELAXED); break;
    case JVMPI_EVENT_THREAD_END: __atomic_add_fetch(&ends, 1, __ATOMIC_RELAXED); break;
    case JVMPI_EVENT_JVM_SHUT_DOWN: {
        FILE *f = out_path[0] ? fopen(out_path, "w") : stderr;
        if (f != NULL) {
            fprintf(f, "count_threads: starts=%ld ends=%ld\n", starts, ends);
            if (f != stderr)
                fclose(f);
        }
        break;
    }
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    const char *o = options ? strstr(options, "out=") : NULL;
    if (o != NULL)
        snprintf(out_path, sizeof out_path, "%.*s", (int)strcspn(o + 4, ","), o + 4);
    if ((*vm)->GetEnv(vm, (void **)&pi, JVMPI_VERSION_1_2) != JNI_OK)
        return JNI_ERR;
    pi->NotifyEvent = notify_event;
    if (pi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL) != JVMPI_SUCCESS)
        return JNI_ERR;
    if (options != NULL && strstr(options, "none") != NULL)
        return JNI_OK;
    if (pi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL) != JVMPI_SUCCESS ||
        pi->EnableEvent(JVMPI_EVENT_THREAD_END, NULL) != JVMPI_SUCCESS) {
        fprintf(stderr, "count_threads: EnableEvent failed\n");
        return JNI_ERR;
    }
    return JNI_OK;
}
