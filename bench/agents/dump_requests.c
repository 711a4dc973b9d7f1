/*
 * dump_requests - a legacy JVMPI agent for bench/requests.sh, doing what the
 * dump-based memory profilers of the JVMPI era did: take a heap dump (level
 * 0), then learn the class and size of every object in it with one
 * RequestEvent(OBJECT_ALLOC) each, or look at each through
 * RequestEvent(OBJECT_DUMP) or jobjectID2jobject.  Written against jvmpi.h
 * alone:
 *
 *   java -agentpath:/path/libjvmpi.so=/path/libdump_requests.so:out=R,go=G,done=D LiveHeap N G D
 *
 * Options (comma separated):
 *   out=<path>   where the result line goes (default: standard error)
 *   go=<path>    the program creates this file when its heap is built
 *   done=<path>  the agent creates this file when it is finished
 *   alloc        also enable OBJECT_ALLOC and OBJECT_FREE (every object then
 *                has its ID from its allocation, as with a tracking profiler)
 *   what=<how>   alloc (default): RequestEvent(OBJECT_ALLOC) for each object;
 *                objdump: RequestEvent(OBJECT_DUMP); jobject: jobjectID2jobject
 *   max=<n>      at most n requests, spread evenly over the dump (default: all)
 *
 * Its system thread waits for the go file, disables GC (as the JVMPI
 * specification asks of an agent requesting events about objects), requests
 * the dump, makes its requests, enables GC and writes, one line:
 *   dump_requests: objects=N requests=Q ok=A failed=F dump_ms=T request_ns=R
 * (request_ns: the mean time of one request).  A request is ok when it
 * returns JVMPI_SUCCESS after delivering, on the same thread, an
 * OBJECT_ALLOC (or OBJECT_DUMP) with the REQUESTED bit for that very object;
 * for jobjectID2jobject, when it returns a reference that
 * jobject2jobjectID turns back into the same ID.
 */
#include <jvmpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved);

static JavaVM *jvm;
static JVMPI_Interface *jvmpi;
static char out_path[1024], go_path[1024], done_path[1024];
static int with_alloc;
static char what[16] = "alloc";
static long max_requests = -1;

static jobjectID *ids;
static long n_ids, cap_ids;
static int dump_unreadable;

static jobjectID expected;
static long answered;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Level 0: records of [u1 type][jobjectID]. */
static void read_dump(const char *p, const char *end)
{
    while (p < end) {
        jobjectID id;
        if (end - p < 1 + (long)sizeof id) {
            dump_unreadable = 1;
            return;
        }
        memcpy(&id, p + 1, sizeof id);
        p += 1 + sizeof id;
        if (n_ids == cap_ids) {
            cap_ids = cap_ids ? cap_ids * 2 : 65536;
            ids = realloc(ids, cap_ids * sizeof *ids);
            if (ids == NULL) {
                fprintf(stderr, "dump_requests: out of memory\n");
                exit(1);
            }
        }
        ids[n_ids++] = id;
    }
}

static void write_line(const char *line)
{
    FILE *f = out_path[0] ? fopen(out_path, "w") : stderr;
    if (f == NULL) {
        fprintf(stderr, "dump_requests: cannot write %s\n", out_path);
        f = stderr;
    }
    fputs(line, f);
    if (f != stderr)
        fclose(f);
}

static void worker(void *unused)
{
    (void)unused;
    while (access(go_path, F_OK) != 0)
        usleep(20000);
    jvmpi->DisableGC();
    JVMPI_HeapDumpArg arg = {JVMPI_DUMP_LEVEL_0};
    double t0 = now_ms();
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg);
    double t1 = now_ms();
    long ok = 0, failed = 0, requests = 0;
    long stride = max_requests > 0 && n_ids > max_requests ? n_ids / max_requests : 1;
    JNIEnv *env = NULL;
    (*jvm)->GetEnv(jvm, (void **)&env, JNI_VERSION_1_2);
    for (long i = 0; i < n_ids; i += stride, requests++) {
        expected = ids[i];
        long before = answered;
        int good;
        if (strcmp(what, "jobject") == 0) {
            jobject o = jvmpi->jobjectID2jobject(ids[i]);
            good = o != NULL && jvmpi->jobject2jobjectID(o) == ids[i];
            if (o != NULL && env != NULL)
                (*env)->DeleteLocalRef(env, o);
        } else {
            jint type = strcmp(what, "objdump") == 0 ? JVMPI_EVENT_OBJECT_DUMP : JVMPI_EVENT_OBJECT_ALLOC;
            good = jvmpi->RequestEvent(type, ids[i]) == JVMPI_SUCCESS && answered == before + 1;
        }
        if (good)
            ok++;
        else
            failed++;
    }
    double t2 = now_ms();
    jvmpi->EnableGC();
    char line[256];
    snprintf(line, sizeof line,
             "dump_requests: objects=%ld requests=%ld ok=%ld failed=%ld dump_ms=%.0f request_ns=%.0f%s\n", n_ids,
             requests, ok, failed, t1 - t0, requests ? (t2 - t1) * 1e6 / requests : 0.0,
             rc != JVMPI_SUCCESS ? " (the heap dump failed)" : dump_unreadable ? " (dump unreadable)" : "");
    write_line(line);
    FILE *done = fopen(done_path, "w");
    if (done != NULL)
        fclose(done);
}

static void notify_event(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_HEAP_DUMP:
        read_dump(ev->u.heap_dump.begin, ev->u.heap_dump.end);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        if ((ev->event_type & JVMPI_REQUESTED_EVENT) && ev->u.obj_alloc.obj_id == expected && ev->u.obj_alloc.size > 0)
            answered++;
        break;
    case JVMPI_EVENT_OBJECT_DUMP: {
        /* one record: [u1 record type][object ID]... */
        jobjectID id = NULL;
        if ((ev->event_type & JVMPI_REQUESTED_EVENT) && ev->u.object_dump.data_len > (jint)sizeof id) {
            memcpy(&id, ev->u.object_dump.data + 1, sizeof id);
            if (id == expected)
                answered++;
        }
        break;
    }
    case JVMPI_EVENT_JVM_INIT_DONE:
        if (jvmpi->CreateSystemThread("dump_requests", JVMPI_NORMAL_PRIORITY, worker) != JNI_OK)
            fprintf(stderr, "dump_requests: CreateSystemThread failed\n");
        break;
    default:
        break;
    }
}

static void option(const char *opt)
{
    if (strncmp(opt, "out=", 4) == 0)
        snprintf(out_path, sizeof out_path, "%s", opt + 4);
    else if (strncmp(opt, "go=", 3) == 0)
        snprintf(go_path, sizeof go_path, "%s", opt + 3);
    else if (strncmp(opt, "done=", 5) == 0)
        snprintf(done_path, sizeof done_path, "%s", opt + 5);
    else if (strcmp(opt, "alloc") == 0)
        with_alloc = 1;
    else if (strncmp(opt, "what=", 5) == 0)
        snprintf(what, sizeof what, "%s", opt + 5);
    else if (strncmp(opt, "max=", 4) == 0)
        max_requests = atol(opt + 4);
    else if (opt[0] != '\0')
        fprintf(stderr, "dump_requests: unknown option %s\n", opt);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    jvm = vm;
    if ((*vm)->GetEnv(vm, (void **)&jvmpi, JVMPI_VERSION_1_1) != JNI_OK)
        return JNI_ERR;
    char opts[4096];
    snprintf(opts, sizeof opts, "%s", options ? options : "");
    for (char *save = NULL, *o = strtok_r(opts, ",", &save); o != NULL; o = strtok_r(NULL, ",", &save))
        option(o);
    if (!go_path[0] || !done_path[0]) {
        fprintf(stderr, "dump_requests: go= and done= are required\n");
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify_event;
    jint events[] = {JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_OBJECT_ALLOC, JVMPI_EVENT_OBJECT_FREE};
    int n = with_alloc ? 3 : 1;
    for (int i = 0; i < n; i++) {
        if (jvmpi->EnableEvent(events[i], NULL) != JVMPI_SUCCESS) {
            fprintf(stderr, "dump_requests: EnableEvent(%d) failed\n", (int)events[i]);
            return JNI_ERR;
        }
    }
    return JNI_OK;
}
