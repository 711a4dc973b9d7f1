/*
 * dump_requests - a legacy JVMPI agent for bench/requests.sh, doing what the
 * dump-based memory profilers of the JVMPI era did: take a heap dump (level
 * 0), then learn the class and size of every object in it with one
 * RequestEvent(OBJECT_ALLOC) each, or look at each through
 * RequestEvent(OBJECT_DUMP) or jobjectID2jobject; or what Sun's HPROF did
 * in its HEAP_DUMP handler: RequestEvent(OBJECT_DUMP) of Class objects
 * there and then.  Written against jvmpi.h alone:
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
 *                objdump: RequestEvent(OBJECT_DUMP); jobject: jobjectID2jobject;
 *                classdump: RequestEvent(OBJECT_DUMP) of each class's Class
 *                object instead (array classes left out, as HPROF meets
 *                them in no class dump), its ID from its CLASS_LOAD; none:
 *                no requests after the dump (for indump= alone)
 *   max=<n>      at most n requests, spread evenly over the dump (default: all)
 *   repeat=<n>   the requests made n times over (default 1): a few hundred
 *                classes take too short a time to measure once
 *   indump=<n>   in the HEAP_DUMP handler, RequestEvent(OBJECT_DUMP) of n
 *                Class objects (spread over the classes, taken again from
 *                the first when there are fewer), as Sun's HPROF asked for
 *                the Class objects whose superclass it had not learnt; the
 *                dump's time includes them (default 0)
 *   classes      enable CLASS_LOAD, as what=classdump and indump= do (for
 *                a dump to compare with one that has indump=)
 *   level=<l>    the heap dump's level, 0 (default), 1 or 2; objects are
 *                read from a level 0 dump only (the what= requests of the
 *                other levels are made of Class objects alone)
 *
 * Its system thread waits for the go file, disables GC (as the JVMPI
 * specification asks of an agent requesting events about objects), requests
 * the dump, makes its requests, enables GC and writes, one line:
 *   dump_requests: objects=N requests=Q ok=A failed=F dump_ms=T request_ns=R
 *                  indump=I indump_failed=J indump_ns=S
 * (request_ns: the mean time of one request; indump: the requests made in
 * the HEAP_DUMP handler, J of them failed, S ns each on average).  A
 * request is ok when it returns JVMPI_SUCCESS after delivering, on the same
 * thread, an OBJECT_ALLOC (or OBJECT_DUMP) with the REQUESTED bit for that
 * very object; for jobjectID2jobject, when it returns a reference that
 * jobject2jobjectID turns back into the same ID.
 */
#include <jvmpi.h>

#include <pthread.h>
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
static long repeat = 1;
static long indump_wanted;
static int with_classes;
static int dump_level = JVMPI_DUMP_LEVEL_0;

/* The non-array classes' IDs, from their CLASS_LOADs (any thread). */
static pthread_mutex_t classes_lock = PTHREAD_MUTEX_INITIALIZER;
static jobjectID *class_ids;
static long n_class_ids, cap_class_ids;
static long indump_ok, indump_failed;
static double indump_ms;

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

static void append(jobjectID **a, long *n, long *cap, jobjectID id)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 65536;
        *a = realloc(*a, *cap * sizeof **a);
        if (*a == NULL) {
            fprintf(stderr, "dump_requests: out of memory\n");
            exit(1);
        }
    }
    (*a)[(*n)++] = id;
}

/* A copy of the class IDs so far: CLASS_LOADs may come meanwhile. */
static jobjectID *classes_now(long *n)
{
    pthread_mutex_lock(&classes_lock);
    *n = n_class_ids;
    jobjectID *copy = malloc((n_class_ids + 1) * sizeof *copy);
    if (copy != NULL)
        memcpy(copy, class_ids, n_class_ids * sizeof *copy);
    pthread_mutex_unlock(&classes_lock);
    if (copy == NULL) {
        fprintf(stderr, "dump_requests: out of memory\n");
        exit(1);
    }
    return copy;
}

/* One request, true when it returned JVMPI_SUCCESS after delivering its
 * answer about that very object. */
static int request(jint type, jobjectID id)
{
    expected = id;
    long before = answered;
    return jvmpi->RequestEvent(type, id) == JVMPI_SUCCESS && answered == before + 1;
}

/* In the HEAP_DUMP handler: OBJECT_DUMPs of indump_wanted Class objects,
 * the classes taken again from the first when there are fewer. */
static void requests_in_dump(void)
{
    long n = 0;
    jobjectID *ids_now = classes_now(&n);
    long stride = n > indump_wanted ? n / indump_wanted : 1;
    double t0 = now_ms();
    for (long made = 0; n > 0 && made < indump_wanted; made++) {
        if (request(JVMPI_EVENT_OBJECT_DUMP, ids_now[(made * stride) % n]))
            indump_ok++;
        else
            indump_failed++;
    }
    indump_ms = now_ms() - t0;
    free(ids_now);
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
        append(&ids, &n_ids, &cap_ids, id);
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
    JVMPI_HeapDumpArg arg = {dump_level};
    double t0 = now_ms();
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg);
    double t1 = now_ms();
    long ok = 0, failed = 0, requests = 0;
    if (strcmp(what, "classdump") == 0) {
        free(ids);
        ids = classes_now(&n_ids);
    } else if (dump_level != JVMPI_DUMP_LEVEL_0 || strcmp(what, "none") == 0) {
        n_ids = 0;
    }
    long stride = max_requests > 0 && n_ids > max_requests ? n_ids / max_requests : 1;
    JNIEnv *env = NULL;
    (*jvm)->GetEnv(jvm, (void **)&env, JNI_VERSION_1_2);
    for (long k = 0; k < repeat * n_ids; k += stride, requests++) {
        long i = k % n_ids;
        int good;
        if (strcmp(what, "jobject") == 0) {
            jobject o = jvmpi->jobjectID2jobject(ids[i]);
            good = o != NULL && jvmpi->jobject2jobjectID(o) == ids[i];
            if (o != NULL && env != NULL)
                (*env)->DeleteLocalRef(env, o);
        } else {
            jint type = strcmp(what, "alloc") == 0 ? JVMPI_EVENT_OBJECT_ALLOC : JVMPI_EVENT_OBJECT_DUMP;
            good = request(type, ids[i]);
        }
        if (good)
            ok++;
        else
            failed++;
    }
    double t2 = now_ms();
    jvmpi->EnableGC();
    char line[320];
    snprintf(line, sizeof line,
             "dump_requests: objects=%ld requests=%ld ok=%ld failed=%ld dump_ms=%.0f request_ns=%.0f indump=%ld "
             "indump_failed=%ld indump_ns=%.0f%s\n",
             n_ids, requests, ok, failed, t1 - t0, requests ? (t2 - t1) * 1e6 / requests : 0.0,
             indump_ok + indump_failed, indump_failed,
             indump_ok + indump_failed ? indump_ms * 1e6 / (indump_ok + indump_failed) : 0.0,
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
        if (dump_level == JVMPI_DUMP_LEVEL_0)
            read_dump(ev->u.heap_dump.begin, ev->u.heap_dump.end);
        if (indump_wanted > 0)
            requests_in_dump();
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        if (ev->u.class_load.class_name != NULL && ev->u.class_load.class_name[0] != '[') {
            pthread_mutex_lock(&classes_lock);
            append(&class_ids, &n_class_ids, &cap_class_ids, ev->u.class_load.class_id);
            pthread_mutex_unlock(&classes_lock);
        }
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
    else if (strcmp(opt, "classes") == 0)
        with_classes = 1;
    else if (strncmp(opt, "what=", 5) == 0)
        snprintf(what, sizeof what, "%s", opt + 5);
    else if (strncmp(opt, "max=", 4) == 0)
        max_requests = atol(opt + 4);
    else if (strncmp(opt, "repeat=", 7) == 0)
        repeat = atol(opt + 7) > 0 ? atol(opt + 7) : 1;
    else if (strncmp(opt, "indump=", 7) == 0)
        indump_wanted = atol(opt + 7);
    else if (strncmp(opt, "level=", 6) == 0)
        dump_level = atoi(opt + 6) == 2 ? JVMPI_DUMP_LEVEL_2 : atoi(opt + 6) == 1 ? JVMPI_DUMP_LEVEL_1 : JVMPI_DUMP_LEVEL_0;
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
    /* CLASS_LOAD when Class objects are asked for: their IDs. */
    int classes = with_classes || strcmp(what, "classdump") == 0 || indump_wanted > 0;
    jint events[] = {JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_OBJECT_ALLOC,
                     JVMPI_EVENT_OBJECT_FREE};
    for (int i = 0; i < 4; i++) {
        if ((i == 1 && !classes) || (i >= 2 && !with_alloc))
            continue;
        if (jvmpi->EnableEvent(events[i], NULL) != JVMPI_SUCCESS) {
            fprintf(stderr, "dump_requests: EnableEvent(%d) failed\n", (int)events[i]);
            return JNI_ERR;
        }
    }
    return JNI_OK;
}
