/*
 * e_recurse - an agent that learns about objects the way Sun's HPROF for
 * JVMPI did (its hprof_fetch_object_info): whenever an OBJECT_ALLOC names a
 * class_id that it does not know as an object, it asks for that object's
 * OBJECT_ALLOC with RequestEvent, from inside the handler, and that answer's
 * handler does the same, with no guard against recursion; only once an
 * object's class is resolved does the object enter its table.  A class is
 * the object ID of its java.lang.Class object (the JVMPI specification),
 * so every Class object's OBJECT_ALLOC names java.lang.Class, and
 * java.lang.Class's own must name none (HotSpot 5.0 posted it with class_id
 * NULL): were it to name itself, the request would recur until the stack
 * overflowed, as HPROF's did.  This agent stops at a depth of 64 with a
 * FAIL line instead of a crash.
 *
 * An array of references is named by its element class (is_array
 * JVMPI_CLASS, class_id the element class), and HPROF printed its name
 * through that class with no NULL check; so does this agent, for every
 * allocation and for every OBJ_ARRAY_DUMP of its heap dumps: a NULL
 * class_id there is a FAIL (HPROF crashed).  The first array of each
 * element class whose name starts with "E_Rc", and of any class given by
 * watch=NAME, is written out: "array: NAME[] (is_array 2, size N)".
 *
 * Level 2 heap dumps are asked for on every DATA_DUMP_REQUEST (SIGQUIT).
 *
 * Options: out=FILE, watch=CLASS (a dotted class name), keepgoing=1 (see
 * e_common.h).  Enabled at JVM_OnLoad: OBJECT_ALLOC, OBJECT_FREE,
 * CLASS_LOAD, CLASS_UNLOAD, THREAD_START, THREAD_END, JVM_INIT_DONE,
 * JVM_SHUT_DOWN, DATA_DUMP_REQUEST.
 * Output: "e_recurse: finished, N checks passed, M failed" on JVM_SHUT_DOWN.
 */
#include "e_common.h"

#define MAX_DEPTH 64

/* The tables, under one recursive lock: a handler's request is answered
 * inside the handler, on its own thread. */
static pthread_mutex_t lk;

typedef struct {
    jobjectID cls;
    jint is_array;
} r_obj;

static e_map objs;    /* object ID -> r_obj */
static e_map classes; /* class ID -> e_class */
static e_map shown;   /* element class ID -> (void *)1: its array written out */
static char *watch;
static long n_requests, n_arrays, n_dumps, max_depth_seen;
static __thread int depth; /* nested OBJECT_ALLOC handlers on this thread */

/* The class's name; an unknown class is asked for, as HPROF did. */
static const char *class_name(jobjectID id, const char *where)
{
    e_class *c = e_map_get(&classes, id);
    if (!c) {
        e_req r = {0};
        n_requests++;
        if (!e_request(&r, JVMPI_EVENT_CLASS_LOAD, id, where))
            return NULL;
        c = e_map_get(&classes, id);
        if (!c) {
            E_FAIL("RequestEvent(CLASS_LOAD, %p) for %s: the answer defined nothing", (void *)id, where);
            return NULL;
        }
    }
    return c->name;
}

/* HPROF's hprof_fetch_object_info: the object's OBJECT_ALLOC, asked for
 * when the object is not in the table.  Under lk. */
static void fetch_object(jobjectID id, const char *why)
{
    if (e_map_get(&objs, id))
        return;
    e_req r = {0};
    n_requests++;
    e_request(&r, JVMPI_EVENT_OBJECT_ALLOC, id, why);
}

/* An array of references, as HPROF named it: element class name + "[]". */
static void array_of(jobjectID elem, jobjectID id, jint size, const char *where)
{
    if (!elem) {
        E_FAIL("%s: %p, an array of references, has class_id NULL: its element class cannot be named (HPROF "
               "read the name through it and crashed)", where, (void *)id);
        return;
    }
    const char *name = class_name(elem, where);
    if (!name)
        return;
    n_arrays++;
    if ((strncmp(name, "E_Rc", 4) == 0 || (watch && strcmp(name, watch) == 0)) && !e_map_get(&shown, elem)) {
        e_map_put(&shown, elem, (void *)1);
        e_say("array: %s[] (is_array %d, size %d)", name, JVMPI_CLASS, (int)size);
    }
    e_pass();
}

static void on_obj_alloc(const JVMPI_Event *ev)
{
    jobjectID id = ev->u.obj_alloc.obj_id, cls = ev->u.obj_alloc.class_id;
    jint type = ev->u.obj_alloc.is_array;
    if (!id) {
        E_FAIL("OBJECT_ALLOC with obj_id NULL");
        return;
    }
    pthread_mutex_lock(&lk);
    if (++depth > max_depth_seen)
        max_depth_seen = depth;
    if (depth > MAX_DEPTH) {
        E_FAIL("OBJECT_ALLOC of %p (class_id %p): RequestEvent(OBJECT_ALLOC) for unknown class IDs nested %d deep; "
               "a Class object that names itself (or a cycle) would recur until the stack overflows",
               (void *)id, (void *)cls, depth);
        depth--;
        pthread_mutex_unlock(&lk);
        return;
    }
    if (type == JVMPI_CLASS) {
        array_of(cls, id, ev->u.obj_alloc.size, "OBJECT_ALLOC");
    } else if (type == JVMPI_NORMAL_OBJECT && cls) {
        /* The class's own object first, then the class. */
        fetch_object(cls, "the class of an OBJECT_ALLOC");
        class_name(cls, "the class of an OBJECT_ALLOC");
        e_pass();
    } else if (type == JVMPI_NORMAL_OBJECT) {
        /* Only java.lang.Class's own Class object names no class. */
        const char *name = class_name(id, "an object with class_id NULL (java.lang.Class's own Class object?)");
        if (name && strcmp(name, "java.lang.Class") != 0)
            E_FAIL("OBJECT_ALLOC of %p: a plain object with class_id NULL, and it is not java.lang.Class's Class "
                   "object but %s's", (void *)id, name);
        else if (name)
            e_pass();
    }
    r_obj *o = e_map_get(&objs, id);
    if (!o) {
        o = calloc(1, sizeof *o);
        if (!o)
            abort();
        e_map_put(&objs, id, o);
    }
    o->cls = cls;
    o->is_array = type;
    depth--;
    pthread_mutex_unlock(&lk);
}

static void on_class_load(const JVMPI_Event *ev)
{
    jobjectID id = ev->u.class_load.class_id;
    if (!id || !ev->u.class_load.class_name) {
        E_FAIL("CLASS_LOAD with class_id %p, class_name %s", (void *)id,
               ev->u.class_load.class_name ? ev->u.class_load.class_name : "NULL");
        return;
    }
    pthread_mutex_lock(&lk);
    if (!e_map_get(&classes, id))
        e_map_put(&classes, id, e_class_new(ev));
    /* HPROF looked the class up as an object too. */
    fetch_object(id, "a class's own Class object");
    pthread_mutex_unlock(&lk);
    e_pass();
}

static void on_obj_free(const JVMPI_Event *ev)
{
    pthread_mutex_lock(&lk);
    r_obj *o = e_map_get(&objs, ev->u.obj_free.obj_id);
    if (o) {
        e_map_del(&objs, ev->u.obj_free.obj_id);
        /* thread suspended mode: no free(); a few bytes per object leak */
    }
    pthread_mutex_unlock(&lk);
}

/* ---- heap dumps: every OBJ_ARRAY_DUMP's element class named ---------------- */

static const e_class *dump_class_of(void *ctx, jobjectID id)
{
    return class_name(id, ctx) ? e_map_get(&classes, id) : NULL;
}

static int dump_id(void *ctx, int role, const void *id, int kind, const void *cls, int ty)
{
    if (role == E_ID_OBJECT && kind == JVMPI_GC_OBJ_ARRAY_DUMP)
        array_of((jobjectID)cls, (jobjectID)id, 0, ctx);
    return 0;
}

static void on_heap_dump(const JVMPI_Event *ev)
{
    char where[64], err[400];
    pthread_mutex_lock(&lk);
    snprintf(where, sizeof where, "heap dump %ld", ++n_dumps);
    const e_dump_ops ops = {where, dump_class_of, dump_id};
    int rc = e_walk_heap(ev->u.heap_dump.begin, ev->u.heap_dump.end, &ops, err, sizeof err);
    pthread_mutex_unlock(&lk);
    if (rc)
        E_FAIL("%s cannot be read: %s", where, err);
    else
        e_pass();
}

static void JNICALL notify(JVMPI_Event *ev)
{
    if (!e_accept(ev))
        return;
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_obj_alloc(ev);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        on_obj_free(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_CLASS_UNLOAD:
        break;
    case JVMPI_EVENT_THREAD_START:
        e_thread_start(ev);
        break;
    case JVMPI_EVENT_THREAD_END:
        e_thread_end(ev);
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        on_heap_dump(ev);
        break;
    case JVMPI_EVENT_DATA_DUMP_REQUEST:
        e_heap_dump("DATA_DUMP_REQUEST");
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        e_threads_init_done();
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        pthread_mutex_lock(&lk);
        e_say("JVM_SHUT_DOWN: %zu objects, %zu classes, %ld requests, %ld arrays named, %ld heap dumps, deepest "
              "nesting %ld",
              objs.live, classes.live, n_requests, n_arrays, n_dumps, max_depth_seen);
        pthread_mutex_unlock(&lk);
        e_summary();
        __atomic_store_n(&e_shut_down, 1, __ATOMIC_RELEASE);
        break;
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    e_recursive_lock_init(&lk);
    if (e_setup(vm, options, "e_recurse") != JNI_OK)
        return JNI_ERR;
    watch = e_opt(options, "watch");
    e_pi->NotifyEvent = notify;
    static const jint events[] = {
        JVMPI_EVENT_OBJECT_ALLOC,  JVMPI_EVENT_OBJECT_FREE,    JVMPI_EVENT_CLASS_LOAD,
        JVMPI_EVENT_CLASS_UNLOAD,  JVMPI_EVENT_THREAD_START,   JVMPI_EVENT_THREAD_END,
        JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_JVM_SHUT_DOWN,  JVMPI_EVENT_DATA_DUMP_REQUEST,
    };
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        e_enable(events[i]);
    return JNI_OK;
}
