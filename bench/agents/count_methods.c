/*
 * count_methods - a minimal legacy JVMPI agent for bench/methods.sh: it
 * enables METHOD_ENTRY and METHOD_EXIT and only counts them, so that the
 * benchmark measures the layer's cost of delivering them.  Written against
 * jvmpi.h alone:
 *
 *   java -agentpath:/path/libjvmpi.so=/path/libcount_methods.so:out=counts.txt App
 *
 * Options (comma separated):
 *   out=<path>   where the counts go at JVM_SHUT_DOWN (default: standard error)
 *   none         enable nothing but JVM_SHUT_DOWN: what merely loading the
 *                layer costs (the capabilities it takes up front)
 *
 * Output, one line: count_methods: entries=N exits=X
 */
#include <jvmpi.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved);

static JVMPI_Interface *jvmpi;
static char out_path[1024];
static _Atomic uint64_t entries, exits;

static void notify_event(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_METHOD_ENTRY:
        atomic_fetch_add_explicit(&entries, 1, memory_order_relaxed);
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        atomic_fetch_add_explicit(&exits, 1, memory_order_relaxed);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN: {
        FILE *f = out_path[0] ? fopen(out_path, "w") : stderr;
        if (f == NULL)
            f = stderr;
        fprintf(f, "count_methods: entries=%llu exits=%llu\n", (unsigned long long)atomic_load(&entries),
                (unsigned long long)atomic_load(&exits));
        if (f != stderr)
            fclose(f);
        break;
    }
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    int none = 0;
    for (const char *p = options; p != NULL && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > 4 && strncmp(p, "out=", 4) == 0 && len - 4 < sizeof out_path) {
            memcpy(out_path, p + 4, len - 4);
            out_path[len - 4] = '\0';
        } else if (len == 4 && strncmp(p, "none", 4) == 0) {
            none = 1;
        }
        p = end ? end + 1 : NULL;
    }
    if ((*vm)->GetEnv(vm, (void **)&jvmpi, JVMPI_VERSION_1_2) != JNI_OK)
        return JNI_ERR;
    jvmpi->NotifyEvent = notify_event;
    jint rc = jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    if (!none && rc == JVMPI_SUCCESS)
        rc = jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
    if (!none && rc == JVMPI_SUCCESS)
        rc = jvmpi->EnableEvent(JVMPI_EVENT_METHOD_EXIT, NULL);
    if (rc != JVMPI_SUCCESS) {
        fprintf(stderr, "count_methods: EnableEvent returned %d\n", (int)rc);
        return JNI_ERR;
    }
    return JNI_OK;
}
