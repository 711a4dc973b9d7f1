/*
 * count_heap - a minimal legacy JVMPI heap agent for bench/heap.sh: it
 * enables OBJECT_ALLOC, OBJECT_FREE, GC_START and GC_FINISH and only counts
 * them, so that what the benchmark measures is the layer's cost of
 * delivering a full heap (every allocation with a fresh ID, every free),
 * not the agent's.  Written against jvmpi.h alone, as for JDK 1.2-5.0:
 *
 *   java -agentpath:/path/libjvmpi.so=/path/libcount_heap.so:out=counts.txt App
 *
 * Options (comma separated):
 *   out=<path>   where the counts go at JVM_SHUT_DOWN (default: standard error)
 *   nofree       enable OBJECT_ALLOC only (no OBJECT_FREE, no GC events), to
 *                tell the cost of the two halves apart
 *
 * Output, one line:
 *   count_heap: allocs=N bytes=B frees=F gcs=G live=L
 * (live = used_objects of the last GC_FINISH).  When an EnableEvent fails the
 * agent prints "count_heap: EnableEvent(<event>) returned <code>" and refuses
 * to start, as many real agents did.
 */
#include <jvmpi.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved);

static JVMPI_Interface *jvmpi;
static char out_path[1024];
static int want_free = 1;

static _Atomic uint64_t allocs;
static _Atomic uint64_t bytes;
static _Atomic uint64_t frees;
static _Atomic uint64_t gcs;
static _Atomic int64_t live;

static void report(void)
{
    FILE *f = out_path[0] ? fopen(out_path, "w") : stderr;
    if (f == NULL) {
        fprintf(stderr, "count_heap: cannot write %s\n", out_path);
        f = stderr;
    }
    fprintf(f, "count_heap: allocs=%llu bytes=%llu frees=%llu gcs=%llu live=%lld\n",
            (unsigned long long)atomic_load(&allocs), (unsigned long long)atomic_load(&bytes),
            (unsigned long long)atomic_load(&frees), (unsigned long long)atomic_load(&gcs),
            (long long)atomic_load(&live));
    if (f != stderr)
        fclose(f);
}

static void notify_event(JVMPI_Event *ev)
{
    /* The REQUESTED bit cannot appear (this agent requests nothing), but a
     * real agent masks it, and so does this one. */
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&bytes, (uint64_t)ev->u.obj_alloc.size, memory_order_relaxed);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
        break;
    case JVMPI_EVENT_GC_START:
        atomic_fetch_add_explicit(&gcs, 1, memory_order_relaxed);
        break;
    case JVMPI_EVENT_GC_FINISH:
        atomic_store_explicit(&live, (int64_t)ev->u.gc_info.used_objects, memory_order_relaxed);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        report();
        break;
    default:
        fprintf(stderr, "count_heap: event %d was not enabled\n", (int)ev->event_type);
    }
}

static int enable(jint event, const char *name)
{
    jint rc = jvmpi->EnableEvent(event, NULL);
    if (rc == JVMPI_SUCCESS)
        return 1;
    fprintf(stderr, "count_heap: EnableEvent(%s) returned %d%s\n", name, (int)rc,
            rc == JVMPI_NOT_AVAILABLE ? " (JVMPI_NOT_AVAILABLE)" : "");
    return 0;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (options != NULL) {
        char buf[2048];
        snprintf(buf, sizeof buf, "%s", options);
        for (char *opt = strtok(buf, ","); opt; opt = strtok(NULL, ",")) {
            if (strncmp(opt, "out=", 4) == 0) {
                snprintf(out_path, sizeof out_path, "%s", opt + 4);
            } else if (strcmp(opt, "nofree") == 0) {
                want_free = 0;
            } else {
                fprintf(stderr, "count_heap: unknown option '%s' (out=<path>, nofree)\n", opt);
                return JNI_ERR;
            }
        }
    }
    if ((*vm)->GetEnv(vm, (void **)&jvmpi, JVMPI_VERSION_1_2) != JNI_OK) {
        fprintf(stderr, "count_heap: no JVMPI 1.2 interface\n");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify_event;
    if (!enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN") ||
        !enable(JVMPI_EVENT_OBJECT_ALLOC, "OBJECT_ALLOC"))
        return JNI_ERR;
    if (want_free &&
        (!enable(JVMPI_EVENT_OBJECT_FREE, "OBJECT_FREE") ||
         !enable(JVMPI_EVENT_GC_START, "GC_START") ||
         !enable(JVMPI_EVENT_GC_FINISH, "GC_FINISH")))
        return JNI_ERR;
    return JNI_OK;
}
