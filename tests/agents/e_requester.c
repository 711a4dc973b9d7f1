/*
 * e_requester - an agent that resolves IDs the way HPROF did: it keeps its
 * own tables of objects (OBJECT_ALLOC .. OBJECT_FREE), classes (CLASS_LOAD
 * .. CLASS_UNLOAD) and threads (THREAD_START .. THREAD_END), and whenever it
 * meets an object or class ID it does not know, it asks for its defining
 * event with RequestEvent and uses the answer at once.  A request that fails
 * (not JVMPI_SUCCESS, or no answer on the calling thread before RequestEvent
 * returns) is fatal: the agent cannot go on without the data.
 *
 * "A class is represented by the object ID of the corresponding
 * java.lang.Class object" (the JVMPI specification, "JVMPI IDs").  So when a
 * CLASS_LOAD names a class ID the agent does not know as an object, it asks
 * RequestEvent(OBJECT_ALLOC, class_id): the answer must describe that very
 * object as a plain object (JVMPI_NORMAL_OBJECT) of class java.lang.Class,
 * in arena 1, with a size; java.lang.Class's own Class object names no
 * class (class_id NULL), as HotSpot 5.0 posted it, so that resolving it
 * cannot recur.  An array of references names its element class, never
 * NULL, as on 5.0.
 *
 * Heap dumps (level 2) are requested from a system thread (dumps=N, the
 * first after dump_ms=MS, then every dump_ms) and on every
 * DATA_DUMP_REQUEST (SIGQUIT).  Every record is read; every object or class
 * ID in it that the agent does not know is requested, and every instance or
 * array record must agree with what the object's OBJECT_ALLOC said (class,
 * kind of array).
 *
 * Options: out=FILE, dumps=N (default 1), dump_ms=MS (default 1500),
 * keepgoing=1 (count failures instead of aborting; see e_common.h).
 * Enabled at JVM_OnLoad: OBJECT_ALLOC, OBJECT_FREE, CLASS_LOAD, CLASS_UNLOAD,
 * THREAD_START, THREAD_END, GC_START, GC_FINISH, JVM_INIT_DONE,
 * JVM_SHUT_DOWN, DATA_DUMP_REQUEST.
 * Output: "heap dump N (why): ..." per dump, and on JVM_SHUT_DOWN
 * "e_requester: finished, N checks passed, M failed".
 */
#include "e_common.h"

/* ---- the tables, under one recursive lock: a handler that requests an
 * event handles the answer on its own thread, inside its own call ---- */
static pthread_mutex_t lk;

typedef struct e_obj {
    jobjectID cls;
    jint is_array, size;
    struct e_obj *next_free;
} e_obj;

static e_map objs;    /* object ID -> e_obj */
static e_map classes; /* class ID -> e_class */
static jobjectID class_class; /* java.lang.Class's class ID */
static jobjectID null_class_object; /* the plain object whose OBJECT_ALLOC named no class */
static e_obj *obj_free_list;
static long n_objs_live, n_requests, n_dumps, n_gcs;
static long n_dump_dumps;
static int n_told; /* unknown IDs of the current dump named in the output */
static int dumps_wanted;
static long dump_ms;

/* Objects come from slabs and go back to a free list, so that OBJECT_FREE
 * (thread suspended mode: no malloc) never needs the C heap. */
static e_obj *obj_new(void)
{
    if (!obj_free_list) {
        enum { SLAB = 4096 };
        e_obj *s = malloc(SLAB * sizeof *s);
        if (!s)
            abort();
        for (int i = 0; i < SLAB; i++) {
            s[i].next_free = obj_free_list;
            obj_free_list = &s[i];
        }
    }
    e_obj *o = obj_free_list;
    obj_free_list = o->next_free;
    memset(o, 0, sizeof *o);
    return o;
}

static const char *class_name(jobjectID id)
{
    e_class *c = e_map_get(&classes, id);
    return c ? c->name : "?";
}

static int valid_alloc_type(jint t)
{
    return t == JVMPI_NORMAL_OBJECT || t == JVMPI_CLASS || (t >= JVMPI_BOOLEAN && t <= JVMPI_LONG);
}

static e_class *need_class(jobjectID id, const char *where);
static e_obj *need_object(jobjectID id, const char *where);

/* ---- OBJECT_ALLOC ------------------------------------------------------------- */

static void on_obj_alloc(const JVMPI_Event *ev)
{
    const int requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
    jobjectID id = ev->u.obj_alloc.obj_id, cls = ev->u.obj_alloc.class_id;
    jint type = ev->u.obj_alloc.is_array;
    if (!id) {
        E_FAIL("OBJECT_ALLOC with obj_id NULL");
        return;
    }
    if (!valid_alloc_type(type)) {
        E_FAIL("OBJECT_ALLOC of %p: is_array %d is no JVMPI object type", (void *)id, (int)type);
        return;
    }
    if (type == JVMPI_CLASS && !cls) {
        E_FAIL("OBJECT_ALLOC of %p: an array of references with class_id NULL, not its element class", (void *)id);
        return;
    }
    pthread_mutex_lock(&lk);
    if (type == JVMPI_NORMAL_OBJECT && !cls) {
        /* Only java.lang.Class's own Class object names no class; it comes
         * before java.lang.Class's CLASS_LOAD, which checks it then. */
        jobjectID other = class_class ? class_class : null_class_object;
        if (other && other != id) {
            pthread_mutex_unlock(&lk);
            E_FAIL("OBJECT_ALLOC of %p: a plain object with class_id NULL, but java.lang.Class's Class object is "
                   "%p", (void *)id, (void *)other);
            return;
        }
        null_class_object = id;
    }
    e_obj *o = e_map_get(&objs, id);
    if (o && !requested) {
        pthread_mutex_unlock(&lk);
        E_FAIL("OBJECT_ALLOC of %p: that ID is live already (class %s), no OBJECT_FREE came for it", (void *)id,
               class_name(o->cls));
        return;
    }
    if (!o) {
        o = obj_new();
        e_map_put(&objs, id, o);
        n_objs_live++;
    }
    o->cls = cls;
    o->is_array = type;
    o->size = ev->u.obj_alloc.size;
    /* The class, as HPROF needed it for its allocation sites. */
    if (cls) {
        char where[96];
        snprintf(where, sizeof where, "the class of OBJECT_ALLOC %p", (void *)id);
        need_class(cls, where);
    }
    pthread_mutex_unlock(&lk);
    e_pass();
}

/* The agent's record of object ID; an unknown one is requested.  Under lk. */
static e_obj *need_object(jobjectID id, const char *where)
{
    e_obj *o = e_map_get(&objs, id);
    if (o)
        return o;
    e_req r = {0};
    n_requests++;
    if (!e_request(&r, JVMPI_EVENT_OBJECT_ALLOC, id, where))
        return NULL;
    o = e_map_get(&objs, id);
    if (!o)
        E_FAIL("RequestEvent(OBJECT_ALLOC, %p) for %s: the answer defined nothing", (void *)id, where);
    return o;
}

/* ---- classes -------------------------------------------------------------------- */

/* The agent's record of class ID; an unknown one is requested.  Under lk. */
static e_class *need_class(jobjectID id, const char *where)
{
    e_class *c = e_map_get(&classes, id);
    if (c)
        return c;
    e_req r = {0};
    n_requests++;
    if (!e_request(&r, JVMPI_EVENT_CLASS_LOAD, id, where))
        return NULL;
    c = e_map_get(&classes, id);
    if (!c)
        E_FAIL("RequestEvent(CLASS_LOAD, %p) for %s: the answer defined nothing", (void *)id, where);
    return c;
}

/* The class C as an object: its OBJECT_ALLOC must say "an instance of
 * java.lang.Class".  Asked for once, when the class is first met.  Under lk. */
static void check_class_object(e_class *c)
{
    if (c->asked || e_map_get(&objs, c->id))
        return;
    c->asked = 1;
    char where[300];
    snprintf(where, sizeof where, "class %s (a class is the object ID of its java.lang.Class object)", c->name);
    e_req r = {0};
    n_requests++;
    if (!e_request(&r, JVMPI_EVENT_OBJECT_ALLOC, c->id, where))
        return;
    const JVMPI_Event *a = &r.ev;
    if (a->u.obj_alloc.is_array != JVMPI_NORMAL_OBJECT)
        E_FAIL("requested OBJECT_ALLOC of class %s (%p): is_array %d, not JVMPI_NORMAL_OBJECT", c->name,
               (void *)c->id, (int)a->u.obj_alloc.is_array);
    if (a->u.obj_alloc.arena_id != 1)
        E_FAIL("requested OBJECT_ALLOC of class %s (%p): arena_id %d, not 1", c->name, (void *)c->id,
               (int)a->u.obj_alloc.arena_id);
    if (a->u.obj_alloc.size <= 0)
        E_FAIL("requested OBJECT_ALLOC of class %s (%p): size %d", c->name, (void *)c->id, (int)a->u.obj_alloc.size);
    jobjectID k = a->u.obj_alloc.class_id;
    if (strcmp(c->name, "java.lang.Class") == 0) {
        if (k)
            E_FAIL("requested OBJECT_ALLOC of java.lang.Class's own Class object (%p): class_id %p, not NULL: an "
                   "agent that resolves it recurs without end", (void *)c->id, (void *)k);
        else
            e_pass();
        return;
    }
    e_class *kc = k ? need_class(k, "the class of a class object") : NULL;
    if (!kc || strcmp(kc->name, "java.lang.Class") != 0)
        E_FAIL("requested OBJECT_ALLOC of class %s (%p): class_id %p (%s), not java.lang.Class's", c->name,
               (void *)c->id, (void *)k, kc ? kc->name : "unknown");
    else if (class_class && k != class_class)
        E_FAIL("requested OBJECT_ALLOC of class %s (%p): class_id %p, but java.lang.Class is %p", c->name,
               (void *)c->id, (void *)k, (void *)class_class);
    else
        e_pass();
}

static void on_class_load(const JVMPI_Event *ev)
{
    jobjectID id = ev->u.class_load.class_id;
    if (!id) {
        E_FAIL("CLASS_LOAD of %s with class_id NULL", ev->u.class_load.class_name ? ev->u.class_load.class_name
                                                                                    : "(null)");
        return;
    }
    if (!ev->u.class_load.class_name) {
        E_FAIL("CLASS_LOAD of %p with class_name NULL", (void *)id);
        return;
    }
    pthread_mutex_lock(&lk);
    /* Known already: defined by an earlier request (an OBJECT_ALLOC of the
     * start-up replay named it first) or by an earlier CLASS_LOAD. */
    e_class *c = e_map_get(&classes, id);
    if (!c) {
        c = e_class_new(ev);
        e_map_put(&classes, id, c);
    }
    if (strcmp(c->name, "java.lang.Class") == 0) {
        class_class = id;
        if (null_class_object && null_class_object != id)
            E_FAIL("CLASS_LOAD of java.lang.Class (%p): the plain object with class_id NULL was %p, not its Class "
                   "object", (void *)id, (void *)null_class_object);
    }
    check_class_object(c);
    pthread_mutex_unlock(&lk);
    e_pass();
}

static void on_class_unload(const JVMPI_Event *ev)
{
    jobjectID id = ev->u.class_unload.class_id;
    pthread_mutex_lock(&lk);
    e_class *c = id ? e_map_get(&classes, id) : NULL;
    if (c)
        e_map_del(&classes, id);
    int payload = c && c->name && strcmp(c->name, "E_Payload") == 0;
    pthread_mutex_unlock(&lk);
    if (!c)
        E_FAIL("CLASS_UNLOAD of %p, a class ID no CLASS_LOAD defined", (void *)id);
    else
        e_pass();
    /* The script checks it came when the program saw its loader collected:
     * an unload the VM has decided on reaches the agent before it exits. */
    if (payload)
        e_say("CLASS_UNLOAD of E_Payload");
}

/* ---- OBJECT_FREE, threads, GC ---------------------------------------------------- */

static void on_obj_free(const JVMPI_Event *ev)
{
    jobjectID id = ev->u.obj_free.obj_id;
    pthread_mutex_lock(&lk);
    e_obj *o = id ? e_map_get(&objs, id) : NULL;
    if (o) {
        e_map_del(&objs, id);
        o->next_free = obj_free_list;
        obj_free_list = o;
        n_objs_live--;
    }
    pthread_mutex_unlock(&lk);
    if (!o)
        E_FAIL("OBJECT_FREE of %p, an ID no OBJECT_ALLOC defined (or freed already)", (void *)id);
    else
        e_pass();
}

static void on_thread_start(const JVMPI_Event *ev)
{
    e_thread_start(ev);
    jobjectID tid = ev->u.thread_start.thread_id;
    if (!tid) {
        E_FAIL("THREAD_START of '%s': thread_id NULL",
               ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "(null)");
        return;
    }
    pthread_mutex_lock(&lk);
    char where[160];
    snprintf(where, sizeof where, "the thread object of '%s'",
             ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "(null)");
    e_obj *o = need_object(tid, where);
    if (o && o->is_array != JVMPI_NORMAL_OBJECT)
        E_FAIL("THREAD_START: %s, %p, is an array (is_array %d)", where, (void *)tid, (int)o->is_array);
    pthread_mutex_unlock(&lk);
}

/* ---- heap dumps ---------------------------------------------------------------------- */

static const e_class *dump_class_of(void *ctx, jobjectID id)
{
    return need_class(id, (const char *)ctx);
}

/* Every ID of the dump: known, or requested now; records agree with the
 * OBJECT_ALLOC of the object they describe. */
static int dump_id(void *ctx, int role, const void *idp, int kind, const void *cls, int ty)
{
    jobjectID id = (jobjectID)idp;
    const char *where = ctx;
    e_class *c;
    e_obj *o;
    switch (role) {
    case E_ID_OBJECT:
        if (!e_map_get(&objs, id)) {
            o = need_object(id, where);
            if (o && n_told++ < 5)
                e_say("%s: %p, dumped as %s, had no OBJECT_ALLOC; requested: is_array %d, class %s", where,
                      (void *)id, kind == JVMPI_GC_INSTANCE_DUMP ? "an instance" : "an array", (int)o->is_array,
                      class_name(o->cls));
        }
        o = need_object(id, where);
        if (!o)
            return 0;
        if ((kind == JVMPI_GC_INSTANCE_DUMP && (o->is_array != JVMPI_NORMAL_OBJECT || o->cls != cls)) ||
            (kind == JVMPI_GC_OBJ_ARRAY_DUMP && (o->is_array != JVMPI_CLASS || !cls || o->cls != cls)) ||
            (kind == JVMPI_GC_PRIM_ARRAY_DUMP && o->is_array != ty)) {
            jint was_type = o->is_array, was_size = o->size;
            jobjectID was_cls = o->cls;
            /* Which of the two is wrong: what does the layer say now? */
            char now[200] = "";
            e_req r = {0};
            if (e_request_raw(&r, JVMPI_EVENT_OBJECT_ALLOC, id) == JVMPI_SUCCESS && r.answers == 1)
                snprintf(now, sizeof now, "; asked again now: is_array %d, class %s, size %d",
                         (int)r.ev.u.obj_alloc.is_array, class_name(r.ev.u.obj_alloc.class_id),
                         (int)r.ev.u.obj_alloc.size);
            E_FAIL("%s: %s of %p (class or element class %s, element type %d) contradicts its OBJECT_ALLOC: "
                   "is_array %d, class %s (%p), size %d%s",
                   where, kind == JVMPI_GC_INSTANCE_DUMP ? "INSTANCE_DUMP" : kind == JVMPI_GC_OBJ_ARRAY_DUMP ?
                   "OBJ_ARRAY_DUMP" : "PRIM_ARRAY_DUMP", (void *)id, class_name((jobjectID)cls), ty, (int)was_type,
                   class_name(was_cls), (void *)was_cls, (int)was_size, now);
        } else {
            e_pass();
        }
        return 0;
    case E_ID_CLASSDUMP:
    case E_ID_CLASS:
        c = need_class(id, role == E_ID_CLASSDUMP ? where : "a class named by a heap dump record");
        if (c)
            check_class_object(c);
        return 0;
    case E_ID_REF:
        if (e_map_get(&classes, id) || e_map_get(&objs, id)) {
            e_pass();
            return 0;
        }
        /* An instance of java.lang.Class met only as a reference may be a
         * primitive type's (int.class), which is no class; so the class is
         * asked for only where a record needs a class. */
        o = need_object(id, where);
        if (o && n_told++ < 5)
            e_say("%s: %p, met as a reference, had no OBJECT_ALLOC; requested: is_array %d, class %s, size %d", where,
                  (void *)id, (int)o->is_array, class_name(o->cls), (int)o->size);
        return 0;
    default: /* threads: HPROF only used them to name stack traces */
        return 0;
    }
}

static void on_heap_dump(const JVMPI_Event *ev)
{
    char where[64], err[400];
    pthread_mutex_lock(&lk);
    long n = ++n_dumps;
    snprintf(where, sizeof where, "heap dump %ld", n);
    long before = n_requests;
    n_told = 0;
    if (ev->u.heap_dump.dump_level != JVMPI_DUMP_LEVEL_2)
        E_FAIL("%s: dump_level %d, but level 2 was asked for", where, ev->u.heap_dump.dump_level);
    const e_dump_ops ops = {where, dump_class_of, dump_id};
    int rc = e_walk_heap(ev->u.heap_dump.begin, ev->u.heap_dump.end, &ops, err, sizeof err);
    long asked = n_requests - before;
    pthread_mutex_unlock(&lk);
    if (rc)
        E_FAIL("%s (%ld bytes) cannot be read: %s", where, (long)(ev->u.heap_dump.end - ev->u.heap_dump.begin), err);
    else
        e_pass();
    e_say("%s: %ld bytes, %ld unknown IDs requested", where, (long)(ev->u.heap_dump.end - ev->u.heap_dump.begin),
          asked);
}

/* ---- the dispatcher ------------------------------------------------------------------ */

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
        on_class_unload(ev);
        break;
    case JVMPI_EVENT_THREAD_START:
        on_thread_start(ev);
        break;
    case JVMPI_EVENT_THREAD_END:
        e_thread_end(ev);
        break;
    case JVMPI_EVENT_GC_START:
        __atomic_add_fetch(&n_gcs, 1, __ATOMIC_RELAXED);
        break;
    case JVMPI_EVENT_GC_FINISH:
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        on_heap_dump(ev);
        break;
    case JVMPI_EVENT_DATA_DUMP_REQUEST:
        __atomic_add_fetch(&n_dump_dumps, 1, __ATOMIC_RELAXED);
        e_heap_dump("DATA_DUMP_REQUEST");
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        e_threads_init_done();
        e_timer_start("e_requester dumper", dumps_wanted, dump_ms, e_heap_dump);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        e_timer_stop();
        pthread_mutex_lock(&lk);
        e_say("JVM_SHUT_DOWN: %ld objects live, %zu classes, %ld requests answered, %ld heap dumps, %ld GCs, %ld "
              "DATA_DUMP_REQUESTs",
              n_objs_live, classes.live, n_requests, n_dumps, n_gcs, n_dump_dumps);
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
    if (e_setup(vm, options, "e_requester") != JNI_OK)
        return JNI_ERR;
    dumps_wanted = (int)e_opt_long(options, "dumps", 1);
    dump_ms = e_opt_long(options, "dump_ms", 1500);
    e_pi->NotifyEvent = notify;
    static const jint events[] = {
        JVMPI_EVENT_OBJECT_ALLOC, JVMPI_EVENT_OBJECT_FREE,   JVMPI_EVENT_CLASS_LOAD,    JVMPI_EVENT_CLASS_UNLOAD,
        JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END,    JVMPI_EVENT_GC_START,      JVMPI_EVENT_GC_FINISH,
        JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_JVM_SHUT_DOWN, JVMPI_EVENT_DATA_DUMP_REQUEST,
    };
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        e_enable(events[i]);
    return JNI_OK;
}
