/*
 * count_monitors - the legacy agent bench/monitors.sh runs through the
 * layer: counts MONITOR_CONTENDED_ENTER/ENTERED/EXIT and MONITOR_WAIT/WAITED
 * (Thread.sleep included).  Options: out=<file>[,none]; with "none" it
 * enables nothing, which measures what the layer costs by being there.
 */
#include <jvmpi.h>
#include <stdio.h>
#include <string.h>

static JVMPI_Interface *pi;
static char out_path[1024];
static volatile long counts[5];

static void JNICALL notify_event(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER: __atomic_add_fetch(&counts[0], 1, __ATOMIC_RELAXED); break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED: __atomic_add_fetch(&counts[1], 1, __ATOMIC_RELAXED); break;
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT: __atomic_add_fetch(&counts[2], 1, __ATOMIC_RELAXED); break;
    case JVMPI_EVENT_MONITOR_WAIT: __atomic_add_fetch(&counts[3], 1, __ATOMIC_RELAXED); break;
    case JVMPI_EVENT_MONITOR_WAITED: __atomic_add_fetch(&counts[4], 1, __ATOMIC_RELAXED); break;
    case JVMPI_EVENT_JVM_SHUT_DOWN: {
        FILE *f = out_path[0] ? fopen(out_path, "w") : stderr;
        if (f != NULL) {
            fprintf(f, "count_monitors: enter=%ld entered=%ld exit=%ld wait=%ld waited=%ld\n", counts[0], counts[1],
                    counts[2], counts[3], counts[4]);
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
    static const jint evs[] = {JVMPI_EVENT_MONITOR_CONTENDED_ENTER, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED,
                               JVMPI_EVENT_MONITOR_CONTENDED_EXIT, JVMPI_EVENT_MONITOR_WAIT,
                               JVMPI_EVENT_MONITOR_WAITED};
    for (int i = 0; i < 5; i++) {
        if (pi->EnableEvent(evs[i], NULL) != JVMPI_SUCCESS) {
            fprintf(stderr, "count_monitors: EnableEvent(%d) failed\n", (int)evs[i]);
            return JNI_ERR;
        }
    }
    return JNI_OK;
}
