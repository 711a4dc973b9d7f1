/*
 * e_strict - an agent in the manner of OProfile's JVMPI agent: it maps what
 * it is told and aborts when an event names a thread, class, method or
 * object it was never told about.  The JVMPI specification ("JVMPI IDs"):
 * "Assuming the defining events are enabled during the profiler
 * initialization, the profiler agent is guaranteed to be notified of an
 * entity's creation through a defining event, before the entity appears in
 * other JVMPI events."  This agent enables every defining event in
 * JVM_OnLoad and holds the layer to that, the JVM_INIT_DONE start-up replay
 * included (events other threads send meanwhile, such as the JIT's
 * COMPILED_METHOD_LOAD, must name classes already announced):
 *  - env_id of every event: a thread between its THREAD_START and its
 *    THREAD_END (main may come before its THREAD_START during start-up:
 *    the JVMPI spec, 6.2; see e_common.h);
 *  - class IDs (OBJECT_ALLOC's class_id when not NULL, CLASS_UNLOAD, the
 *    classes of heap dump records): a CLASS_LOAD, and no CLASS_UNLOAD since.
 *    The start-up replay sends the heap's OBJECT_ALLOCs before the
 *    CLASS_LOADs, as JDK 1.2-5.0 did, so a class named there must have had
 *    its CLASS_LOAD by JVM_INIT_DONE;
 *  - method IDs (METHOD_ENTRY(2), METHOD_EXIT, INSTRUCTION_START,
 *    COMPILED_METHOD_LOAD/UNLOAD, frames of dump traces): listed in the
 *    CLASS_LOAD of a class not unloaded;
 *  - object IDs (METHOD_ENTRY2's receiver, monitor objects,
 *    JNI_GLOBALREF_ALLOC, OBJECT_FREE, THREAD_START's thread_id, heap and
 *    monitor dump contents): an OBJECT_ALLOC and no OBJECT_FREE since, or a
 *    class ID (a class is the object ID of its java.lang.Class object);
 *  - JNI global references (JNI_GLOBALREF_FREE): a JNI_GLOBALREF_ALLOC.
 * Every violation prints "FAIL <what>" and aborts (keepgoing=1 counts them).
 *
 * A system thread (CreateSystemThread at JVM_INIT_DONE) requests dumps=N
 * rounds of a level 2 HEAP_DUMP and a MONITOR_DUMP, the first after
 * dump_ms=MS, then every dump_ms; every record of both is read.
 *
 * Options: out=FILE; methods=entry2 (also METHOD_ENTRY2 and METHOD_EXIT,
 * every receiver an object ID) or methods=entry (METHOD_ENTRY and
 * METHOD_EXIT: the method IDs only); steps=y (also INSTRUCTION_START: one
 * event per bytecode, so for small runs); dumps=N (default 2), dump_ms=MS
 * (default 1000); keepgoing=1; traces=N (in every OBJECT_ALLOC handler,
 * GetCallTrace of the allocating thread to depth N, every frame's method
 * checked, as Sun's HPROF takes an allocation's site); exitdump=y (a level 2
 * HEAP_DUMP from the JVM_SHUT_DOWN handler, where Sun's HPROF writes its
 * heap=dump).
 *
 * A leak finder's rule is held too: an unrequested OBJECT_ALLOC of a
 * NORMAL_OBJECT names its class.  HotSpot 5.0 sent class_id NULL only for
 * java.lang.Class's own Class object, and only when an agent asked for it.
 */
#include "e_common.h"

/* Taken before e_common.h's thread lock, never after it.  Recursive: a
 * failure is named by asking the layer (RequestEvent, GetMethodClass) with
 * the lock held, and the layer may deliver other events on this thread
 * meanwhile (a CLASS_LOAD it owes before an answer). */
static pthread_mutex_t lk;
static e_map objs;     /* live object IDs */
static e_map classes;  /* live class ID -> e_class */
static e_map methods;  /* method ID -> e_class (unloaded ones stay, flagged) */
static e_map early;    /* class IDs the start-up OBJECT_ALLOCs named before their CLASS_LOAD */
static e_map grefs;    /* live JNI global references */
static int init_done;
static JVMPI_RawMonitor dump_lock;
static int dumps_wanted;
static unsigned long dump_gen; /* e_threads_now() when the dump was asked for */
static long dump_ms;
static int trace_depth;
static int exit_dump;
static long n_events, n_heap_dumps, n_monitor_dumps;

#define LIVE ((void *)(uintptr_t)2)

/* ---- naming what the agent was never told about, for FAIL lines only ----
 * The rule is broken already; the agent asks the layer what the ID is, so
 * that the line says which class or method the layer forgot, and does not
 * learn from the answer (its handler only copies the names). */
typedef struct {
    jmethodID want;
    char name[160];
    char method[160];
    int want_class; /* keep the class of a requested CLASS_LOAD in cls */
    e_class *cls;
} diag_answer;

static int diag_request(jint type, void *arg, diag_answer *a)
{
    e_req r = {0};
    r.user = a;
    return e_request_raw(&r, type, arg) == JVMPI_SUCCESS && r.answers == 1;
}

/* The dispatcher's part: a requested event for a diag_request. */
static int diag_answered(const JVMPI_Event *ev)
{
    e_req *r = e_current_request();
    diag_answer *a = r ? r->user : NULL;
    if (!a)
        return 0;
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    if (type == JVMPI_EVENT_CLASS_LOAD) {
        snprintf(a->name, sizeof a->name, "%s", ev->u.class_load.class_name ? ev->u.class_load.class_name : "?");
        if (a->want_class)
            a->cls = e_class_new(ev);
        for (int i = 0; i < ev->u.class_load.num_methods; i++)
            if (ev->u.class_load.methods[i].method_id == a->want)
                snprintf(a->method, sizeof a->method, "%s%s", ev->u.class_load.methods[i].method_name,
                         ev->u.class_load.methods[i].method_signature);
    } else if (type == JVMPI_EVENT_OBJECT_ALLOC) {
        diag_answer k = {.want = NULL};
        if (ev->u.obj_alloc.class_id)
            diag_request(JVMPI_EVENT_CLASS_LOAD, ev->u.obj_alloc.class_id, &k);
        snprintf(a->name, sizeof a->name, "an object, is_array %d, class %p %s", (int)ev->u.obj_alloc.is_array,
                 (void *)ev->u.obj_alloc.class_id, k.name);
    }
    return 1;
}

/* Requests can be slow: each kind of failure names its first few IDs. */
static int diag_spend(int *budget)
{
    return __atomic_sub_fetch(budget, 1, __ATOMIC_RELAXED) >= 0;
}

/* "class NAME" or "an object ..." or "unknown to RequestEvent too". */
static void diag_id(jobjectID id, int *budget, char *buf, size_t n)
{
    diag_answer a = {.want = NULL};
    if (!diag_spend(budget))
        snprintf(buf, n, "not looked up: enough failures were named");
    else if (diag_request(JVMPI_EVENT_CLASS_LOAD, id, &a))
        snprintf(buf, n, "a class the layer names %s", a.name);
    else if (diag_request(JVMPI_EVENT_OBJECT_ALLOC, id, &a))
        snprintf(buf, n, "the layer describes it as %s", a.name);
    else
        snprintf(buf, n, "RequestEvent knows it neither as a class nor as an object");
}

/* ---- lookups, under lk ---- */

static const char *cname(const e_class *c)
{
    return c ? c->name : "?";
}

/* ID must name a live object or a live class. */
static int known_ref(jobjectID id)
{
    return e_map_get(&objs, id) || e_map_get(&classes, id);
}

/* BUDGET: how many more failures of the caller's kind are looked up. */
static int check_ref_at(jobjectID id, const char *what, int *budget)
{
    if (known_ref(id)) {
        e_pass();
        return 1;
    }
    char d[300];
    diag_id(id, budget, d, sizeof d);
    E_FAIL("%s: object %p, which no OBJECT_ALLOC (nor CLASS_LOAD) defined, or which was freed (%s)", what,
           (void *)id, d);
    return 0;
}

static int check_class_at(jobjectID id, const char *what, int *budget)
{
    if (e_map_get(&classes, id)) {
        e_pass();
        return 1;
    }
    char d[300];
    diag_id(id, budget, d, sizeof d);
    E_FAIL("%s: class %p, which no CLASS_LOAD defined%s (%s)", what, (void *)id,
           e_map_get(&objs, id) ? " (an OBJECT_ALLOC did, as a plain object)" : ", or which was unloaded", d);
    return 0;
}

/* Method IDs this OS thread found defined, valid while no class unloads:
 * method events come by the hundred million, and the lock would be most of
 * their cost. */
enum { MEMO = 1024 };
typedef struct {
    unsigned long unloads;
    jmethodID ids[MEMO];
} method_memo;
static pthread_key_t memo_key;
static unsigned long n_unloads; /* CLASS_UNLOADs so far (atomic) */

static method_memo *my_memo(void)
{
    method_memo *mm = pthread_getspecific(memo_key);
    unsigned long u = __atomic_load_n(&n_unloads, __ATOMIC_ACQUIRE);
    if (!mm && (mm = calloc(1, sizeof *mm)) != NULL)
        pthread_setspecific(memo_key, mm);
    if (mm && mm->unloads != u) {
        memset(mm->ids, 0, sizeof mm->ids);
        mm->unloads = u;
    }
    return mm;
}

static int check_method(jmethodID m, const char *what);

/* check_method without the lock, for the method events. */
static int check_method_fast(jmethodID m, const char *what)
{
    method_memo *mm = my_memo();
    size_t i = e_hash(m) & (MEMO - 1);
    if (mm && m && mm->ids[i] == m) {
        e_pass();
        return 1;
    }
    pthread_mutex_lock(&lk);
    int ok = check_method(m, what);
    pthread_mutex_unlock(&lk);
    if (ok && mm)
        mm->ids[i] = m;
    return ok;
}

static int check_method(jmethodID m, const char *what)
{
    e_class *c = m ? e_map_get(&methods, m) : NULL;
    if (c && !c->unloaded) {
        e_pass();
        return 1;
    }
    if (c) {
        E_FAIL("%s: method %p of class %s, which was unloaded (CLASS_UNLOAD undefines its methods)", what,
               (void *)m, c->name);
        return 0;
    }
    static int budget = 10;
    if (!diag_spend(&budget)) {
        E_FAIL("%s: method %p, which no CLASS_LOAD listed", what, (void *)m);
        return 0;
    }
    /* GetMethodClass wants GC disabled (the JVMPI spec). */
    e_pi->DisableGC();
    jobjectID k = m ? e_pi->GetMethodClass(m) : NULL;
    e_pi->EnableGC();
    diag_answer a = {.want = m};
    int named = k && diag_request(JVMPI_EVENT_CLASS_LOAD, k, &a);
    const e_class *kc = k ? e_map_get(&classes, k) : NULL;
    E_FAIL("%s: method %p, which no CLASS_LOAD listed (GetMethodClass: %p, %s; %s%s%s)", what, (void *)m, (void *)k,
           kc ? "a class the agent had a CLASS_LOAD for" : "a class the agent never had a CLASS_LOAD for",
           named ? a.name : "not known to RequestEvent(CLASS_LOAD) either", a.method[0] ? "." : "",
           a.method[0] ? a.method : "");
    return 0;
}

/* The lookup budgets of the places that check (see diag_id). */
static int b_receiver = 5, b_monitor = 5, b_gref = 5, b_dump_obj = 5, b_dump_ref = 5, b_dump_class = 5;

/* ---- the defining and undefining events ---- */

static void on_class_load(const JVMPI_Event *ev)
{
    jobjectID id = ev->u.class_load.class_id;
    const char *name = ev->u.class_load.class_name ? ev->u.class_load.class_name : "(null)";
    if (!id) {
        E_FAIL("CLASS_LOAD of %s with class_id NULL", name);
        return;
    }
    pthread_mutex_lock(&lk);
    e_class *old = e_map_get(&classes, id);
    if (old) {
        pthread_mutex_unlock(&lk);
        E_FAIL("CLASS_LOAD of %s (%p): that class ID is defined already, as %s, and was not unloaded", name,
               (void *)id, old->name);
        return;
    }
    e_class *c = e_class_new(ev);
    e_map_put(&classes, id, c);
    e_map_del(&early, id);
    for (int i = 0; i < c->n_methods; i++) {
        if (!c->methods[i]) {
            pthread_mutex_unlock(&lk);
            E_FAIL("CLASS_LOAD of %s: method %d has method_id NULL", name, i);
            return;
        }
        e_map_put(&methods, c->methods[i], c);
    }
    pthread_mutex_unlock(&lk);
    e_pass();
}

static void on_class_unload(const JVMPI_Event *ev)
{
    jobjectID id = ev->u.class_unload.class_id;
    pthread_mutex_lock(&lk);
    e_class *c = id ? e_map_get(&classes, id) : NULL;
    if (c) {
        c->unloaded = 1;
        e_map_del(&classes, id);
        __atomic_add_fetch(&n_unloads, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lk);
    if (!c)
        E_FAIL("CLASS_UNLOAD of %p, a class ID no CLASS_LOAD defined (or unloaded already)", (void *)id);
    else
        e_pass();
}

/* The allocation's site, as HPROF takes it: the allocating thread's trace,
 * each frame's method listed by a CLASS_LOAD this agent had. */
static void check_alloc_trace(JNIEnv *env_id)
{
    JVMPI_CallFrame frames[64];
    JVMPI_CallTrace t = {env_id, 0, frames};
    e_pi->GetCallTrace(&t, trace_depth < 64 ? trace_depth : 64);
    for (jint f = 0; f < t.num_frames; f++) {
        char what[120];
        snprintf(what, sizeof what, "frame %d of %d of GetCallTrace in an OBJECT_ALLOC handler%s", (int)f,
                 (int)t.num_frames, __atomic_load_n(&init_done, __ATOMIC_ACQUIRE) ? "" : " before JVM_INIT_DONE");
        if (!check_method_fast(frames[f].method_id, what))
            return;
    }
}

static void on_obj_alloc(const JVMPI_Event *ev)
{
    jobjectID id = ev->u.obj_alloc.obj_id, cls = ev->u.obj_alloc.class_id;
    if (!id) {
        E_FAIL("OBJECT_ALLOC with obj_id NULL");
        return;
    }
    pthread_mutex_lock(&lk);
    int fresh = e_map_put(&objs, id, LIVE);
    int class_ok = !cls || e_map_get(&classes, cls);
    if (!class_ok && !init_done) {
        e_map_put(&early, cls, LIVE);
        class_ok = 1;
    }
    pthread_mutex_unlock(&lk);
    if (!cls && ev->u.obj_alloc.is_array == JVMPI_NORMAL_OBJECT && !(ev->event_type & JVMPI_REQUESTED_EVENT))
        E_FAIL("OBJECT_ALLOC of %p, a NORMAL_OBJECT with class_id NULL, not requested (a leak finder would "
               "request CLASS_LOAD(NULL))",
               (void *)id);
    if (!fresh)
        E_FAIL("OBJECT_ALLOC of %p: that object ID is live already (no OBJECT_FREE came)", (void *)id);
    if (trace_depth > 0 && !(ev->event_type & JVMPI_REQUESTED_EVENT))
        check_alloc_trace(ev->env_id);
    if (!class_ok)
        E_FAIL("OBJECT_ALLOC of %p (is_array %d): class %p, which no CLASS_LOAD defined", (void *)id,
               (int)ev->u.obj_alloc.is_array, (void *)cls);
    e_pass();
}

static void on_obj_free(const JVMPI_Event *ev)
{
    jobjectID id = ev->u.obj_free.obj_id;
    pthread_mutex_lock(&lk);
    int ok = id && e_map_del(&objs, id);
    pthread_mutex_unlock(&lk);
    if (!ok)
        E_FAIL("OBJECT_FREE of %p, an object ID no OBJECT_ALLOC defined (or freed already)", (void *)id);
    else
        e_pass();
}

static void on_thread_start(const JVMPI_Event *ev)
{
    char what[160];
    snprintf(what, sizeof what, "THREAD_START of '%s' (thread_id)",
             ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "(null)");
    pthread_mutex_lock(&lk);
    int ok = ev->u.thread_start.thread_id && e_map_get(&objs, ev->u.thread_start.thread_id);
    pthread_mutex_unlock(&lk);
    if (!ok)
        E_FAIL("%s: thread object %p, which no OBJECT_ALLOC defined", what, (void *)ev->u.thread_start.thread_id);
    e_thread_start(ev);
}

/* ---- events that use IDs ---- */

static void on_method(const JVMPI_Event *ev, jint type)
{
    jmethodID m = type == JVMPI_EVENT_METHOD_ENTRY2         ? ev->u.method_entry2.method_id
                  : type == JVMPI_EVENT_COMPILED_METHOD_LOAD   ? ev->u.compiled_method_load.method_id
                  : type == JVMPI_EVENT_COMPILED_METHOD_UNLOAD ? ev->u.compiled_method_unload.method_id
                  : type == JVMPI_EVENT_INSTRUCTION_START      ? ev->u.instruction.method_id
                                                                : ev->u.method.method_id;
    if (!check_method_fast(m, e_event_name(type)) || type != JVMPI_EVENT_METHOD_ENTRY2 || !ev->u.method_entry2.obj_id)
        return;
    char what[200];
    pthread_mutex_lock(&lk);
    snprintf(what, sizeof what, "METHOD_ENTRY2 of %s method %p (receiver)", cname(e_map_get(&methods, m)), (void *)m);
    check_ref_at(ev->u.method_entry2.obj_id, what, &b_receiver);
    pthread_mutex_unlock(&lk);
}

static void on_monitor(const JVMPI_Event *ev, jint type)
{
    jobjectID o = type == JVMPI_EVENT_MONITOR_WAIT || type == JVMPI_EVENT_MONITOR_WAITED ? ev->u.monitor_wait.object
                                                                                       : ev->u.monitor.object;
    if (!o) {
        /* MONITOR_WAIT/WAITED: NULL is Thread.sleep. */
        if (type == JVMPI_EVENT_MONITOR_WAIT || type == JVMPI_EVENT_MONITOR_WAITED)
            e_pass();
        else
            E_FAIL("%s with object NULL", e_event_name(type));
        return;
    }
    pthread_mutex_lock(&lk);
    check_ref_at(o, e_event_name(type), &b_monitor);
    pthread_mutex_unlock(&lk);
}

static void on_globalref(const JVMPI_Event *ev, jint type)
{
    pthread_mutex_lock(&lk);
    if (type == JVMPI_EVENT_JNI_GLOBALREF_ALLOC) {
        if (!ev->u.jni_globalref_alloc.ref_id)
            E_FAIL("JNI_GLOBALREF_ALLOC with ref_id NULL");
        else if (check_ref_at(ev->u.jni_globalref_alloc.obj_id, "JNI_GLOBALREF_ALLOC", &b_gref))
            e_map_put(&grefs, ev->u.jni_globalref_alloc.ref_id, LIVE);
    } else if (!e_map_del(&grefs, ev->u.jni_globalref_free.ref_id)) {
        E_FAIL("JNI_GLOBALREF_FREE of %p, a reference no JNI_GLOBALREF_ALLOC defined",
               (void *)ev->u.jni_globalref_free.ref_id);
    } else {
        e_pass();
    }
    pthread_mutex_unlock(&lk);
}

/* ---- dumps ---- */

static jobjectID unknown_dumped_class; /* the walk stopped at it */
static e_map stand_ins;               /* keepgoing: classes asked for to read on */

/* A class dump's length depends on its class's CLASS_LOAD.  For a class the
 * agent was never told about the walk must stop (the failure is named after
 * it), except with keepgoing=1: then the class is asked for, only to frame
 * its records, so that the rest of the dump is checked too (the records that
 * name the class still fail). */
static const e_class *dump_class_of(void *ctx, jobjectID id)
{
    const e_class *c = e_map_get(&classes, id);
    if (c || !e_keepgoing) {
        if (!c)
            unknown_dumped_class = id;
        return c;
    }
    if ((c = e_map_get(&stand_ins, id)) != NULL)
        return c;
    diag_answer a = {.want_class = 1};
    e_req r = {0};
    r.user = &a;
    if (e_request_raw(&r, JVMPI_EVENT_CLASS_LOAD, id) != JVMPI_SUCCESS || !a.cls) {
        unknown_dumped_class = id;
        return NULL;
    }
    e_map_put(&stand_ins, id, a.cls);
    return a.cls;
}

static int dump_id(void *ctx, int role, const void *id, int kind, const void *cls, int ty)
{
    const char *where = ctx;
    char what[120];
    switch (role) {
    case E_ID_OBJECT:
        if (e_map_get(&objs, (jobjectID)id)) {
            e_pass();
        } else {
            snprintf(what, sizeof what, "%s, the object of a %s record", where,
                     kind == JVMPI_GC_INSTANCE_DUMP ? "INSTANCE_DUMP"
                     : kind == JVMPI_GC_OBJ_ARRAY_DUMP ? "OBJ_ARRAY_DUMP" : "PRIM_ARRAY_DUMP");
            check_ref_at((jobjectID)id, what, &b_dump_obj);
        }
        break;
    case E_ID_CLASSDUMP:
        snprintf(what, sizeof what, "%s, a CLASS_DUMP record", where);
        check_class_at((jobjectID)id, what, &b_dump_class);
        break;
    case E_ID_CLASS:
        snprintf(what, sizeof what, "%s, a class named by a record", where);
        check_class_at((jobjectID)id, what, &b_dump_class);
        break;
    case E_ID_REF:
        snprintf(what, sizeof what, "%s, a reference", where);
        check_ref_at((jobjectID)id, what, &b_dump_ref);
        break;
    case E_ID_ENV:
        snprintf(what, sizeof what, "a thread named in %s", where);
        e_env_known_since((JNIEnv *)id, dump_gen, what);
        break;
    case E_ID_RAWMON:
        if (id == (const void *)dump_lock)
            e_pass();
        else
            E_FAIL("%s: raw monitor %p, which the agent never created", where, id);
        break;
    default:
        break;
    }
    return 0;
}

/* The threads and frames of a dump's call traces.  Under lk. */
static void check_traces(jint n, const JVMPI_CallTrace *t, const char *where)
{
    char what[120];
    if (n > 0 && !t) {
        E_FAIL("%s: num_traces %d, traces NULL", where, (int)n);
        return;
    }
    for (jint i = 0; i < n; i++) {
        snprintf(what, sizeof what, "the thread of trace %d of %s", (int)i, where);
        e_env_known_since(t[i].env_id, dump_gen, what);
        snprintf(what, sizeof what, "a frame of trace %d of %s", (int)i, where);
        for (jint f = 0; f < t[i].num_frames; f++)
            check_method(t[i].frames[f].method_id, what);
    }
}

static void on_heap_dump(const JVMPI_Event *ev)
{
    char where[64], err[400];
    pthread_mutex_lock(&lk);
    long n = ++n_heap_dumps;
    snprintf(where, sizeof where, "heap dump %ld", n);
    if (ev->u.heap_dump.dump_level != JVMPI_DUMP_LEVEL_2)
        E_FAIL("%s: dump_level %d, but level 2 was asked for", where, ev->u.heap_dump.dump_level);
    const e_dump_ops ops = {where, dump_class_of, dump_id};
    unknown_dumped_class = NULL;
    int rc = e_walk_heap(ev->u.heap_dump.begin, ev->u.heap_dump.end, &ops, err, sizeof err);
    check_traces(ev->u.heap_dump.num_traces, ev->u.heap_dump.traces, where);
    char d[300] = "";
    static int budget = 10;
    if (rc && unknown_dumped_class)
        diag_id(unknown_dumped_class, &budget, d, sizeof d);
    pthread_mutex_unlock(&lk);
    if (rc)
        E_FAIL("%s cannot be read: %s%s%s%s", where, err, d[0] ? " (" : "", d, d[0] ? ")" : "");
    e_say("%s: %ld bytes, %d traces", where, (long)(ev->u.heap_dump.end - ev->u.heap_dump.begin),
          (int)ev->u.heap_dump.num_traces);
}

static void on_monitor_dump(const JVMPI_Event *ev)
{
    char where[64], err[400];
    pthread_mutex_lock(&lk);
    long n = ++n_monitor_dumps;
    snprintf(where, sizeof where, "monitor dump %ld", n);
    const e_dump_ops ops = {where, dump_class_of, dump_id};
    int rc = e_walk_monitors(ev->u.monitor_dump.begin, ev->u.monitor_dump.end, &ops, err, sizeof err);
    check_traces(ev->u.monitor_dump.num_traces, ev->u.monitor_dump.traces, where);
    pthread_mutex_unlock(&lk);
    if (rc)
        E_FAIL("%s cannot be read: %s", where, err);
    e_say("%s: %ld bytes, %d traces", where, (long)(ev->u.monitor_dump.end - ev->u.monitor_dump.begin),
          (int)ev->u.monitor_dump.num_traces);
}

static void dumper(void *unused)
{
    for (int i = 0; i < dumps_wanted; i++) {
        e_sleep_ms(dump_ms);
        if (__atomic_load_n(&e_shut_down, __ATOMIC_ACQUIRE))
            return;
        JVMPI_HeapDumpArg arg = {JVMPI_DUMP_LEVEL_2};
        e_req r = {0};
        /* Held across both, so the monitor dump has an owned raw monitor. */
        e_pi->RawMonitorEnter(dump_lock);
        dump_gen = e_threads_now();
        e_request(&r, JVMPI_EVENT_HEAP_DUMP, &arg, "the dumper thread");
        dump_gen = e_threads_now();
        e_request(&r, JVMPI_EVENT_MONITOR_DUMP, NULL, "the dumper thread");
        e_pi->RawMonitorExit(dump_lock);
        e_say("dump round %d done", i + 1);
    }
}

static void on_init_done(void)
{
    e_threads_init_done();
    pthread_mutex_lock(&lk);
    init_done = 1;
    size_t n = early.live;
    jobjectID first = NULL;
    for (size_t i = 0; i < early.cap && !first; i++)
        if (early.s[i].key && early.s[i].key != E_TOMB)
            first = (jobjectID)early.s[i].key;
    pthread_mutex_unlock(&lk);
    if (n)
        E_FAIL("JVM_INIT_DONE: %zu classes named by start-up OBJECT_ALLOCs never had a CLASS_LOAD (one: %p)", n,
               (void *)first);
    else
        e_pass();
    if (dumps_wanted > 0 && e_pi->CreateSystemThread("e_strict dumper", JVMPI_NORMAL_PRIORITY, dumper) != JNI_OK)
        E_FAIL("CreateSystemThread in JVM_INIT_DONE failed");
}

static void JNICALL notify(JVMPI_Event *ev)
{
    if (!e_accept(ev))
        return;
    if ((ev->event_type & JVMPI_REQUESTED_EVENT) && diag_answered(ev))
        return;
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    __atomic_add_fetch(&n_events, 1, __ATOMIC_RELAXED);
    /* A THREAD_START defines the thread it names, which may be its sender. */
    if (type == JVMPI_EVENT_THREAD_START)
        on_thread_start(ev);
    if (type != JVMPI_EVENT_THREAD_END)
        e_env_known(ev->env_id, e_event_name(type));
    switch (type) {
    case JVMPI_EVENT_THREAD_END:
        e_thread_end(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_CLASS_UNLOAD:
        on_class_unload(ev);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_obj_alloc(ev);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        on_obj_free(ev);
        break;
    case JVMPI_EVENT_METHOD_ENTRY:
    case JVMPI_EVENT_METHOD_ENTRY2:
    case JVMPI_EVENT_METHOD_EXIT:
    case JVMPI_EVENT_COMPILED_METHOD_LOAD:
    case JVMPI_EVENT_COMPILED_METHOD_UNLOAD:
    case JVMPI_EVENT_INSTRUCTION_START:
        on_method(ev, type);
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
    case JVMPI_EVENT_MONITOR_WAIT:
    case JVMPI_EVENT_MONITOR_WAITED:
        on_monitor(ev, type);
        break;
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_GLOBALREF_FREE:
        on_globalref(ev, type);
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        on_heap_dump(ev);
        break;
    case JVMPI_EVENT_MONITOR_DUMP:
        on_monitor_dump(ev);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        on_init_done();
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        if (exit_dump) {
            JVMPI_HeapDumpArg arg = {JVMPI_DUMP_LEVEL_2};
            e_req r = {0};
            dump_gen = e_threads_now();
            e_request(&r, JVMPI_EVENT_HEAP_DUMP, &arg, "the JVM_SHUT_DOWN handler");
        }
        pthread_mutex_lock(&lk);
        e_say("JVM_SHUT_DOWN: %ld events, %zu objects live, %zu classes, %zu methods, %ld heap dumps, %ld monitor "
              "dumps",
              n_events, objs.live, classes.live, methods.live, n_heap_dumps, n_monitor_dumps);
        pthread_mutex_unlock(&lk);
        e_summary();
        __atomic_store_n(&e_shut_down, 1, __ATOMIC_RELEASE);
        break;
    default: /* THREAD_START (above), GC_START, GC_FINISH: the thread only */
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    e_recursive_lock_init(&lk);
    if (e_setup(vm, options, "e_strict") != JNI_OK || pthread_key_create(&memo_key, free) != 0)
        return JNI_ERR;
    dumps_wanted = (int)e_opt_long(options, "dumps", 2);
    dump_ms = e_opt_long(options, "dump_ms", 1000);
    trace_depth = (int)e_opt_long(options, "traces", 0);
    char *xd = e_opt(options, "exitdump");
    exit_dump = xd && strcmp(xd, "y") == 0;
    free(xd);
    e_pi->NotifyEvent = notify;
    dump_lock = e_pi->RawMonitorCreate("e_strict dumps");
    if (!dump_lock)
        E_FAIL("RawMonitorCreate returned NULL");
    static const jint events[] = {
        JVMPI_EVENT_THREAD_START,         JVMPI_EVENT_THREAD_END,
        JVMPI_EVENT_CLASS_LOAD,           JVMPI_EVENT_CLASS_UNLOAD,
        JVMPI_EVENT_OBJECT_ALLOC,         JVMPI_EVENT_OBJECT_FREE,
        JVMPI_EVENT_GC_START,             JVMPI_EVENT_GC_FINISH,
        JVMPI_EVENT_COMPILED_METHOD_LOAD, JVMPI_EVENT_COMPILED_METHOD_UNLOAD,
        JVMPI_EVENT_MONITOR_CONTENDED_ENTER, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED,
        JVMPI_EVENT_MONITOR_CONTENDED_EXIT, JVMPI_EVENT_MONITOR_WAIT,
        JVMPI_EVENT_MONITOR_WAITED,       JVMPI_EVENT_JNI_GLOBALREF_ALLOC,
        JVMPI_EVENT_JNI_GLOBALREF_FREE,   JVMPI_EVENT_JVM_INIT_DONE,
        JVMPI_EVENT_JVM_SHUT_DOWN,
    };
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        e_enable(events[i]);
    char *m = e_opt(options, "methods");
    if (m && strcmp(m, "entry2") == 0)
        e_enable(JVMPI_EVENT_METHOD_ENTRY2);
    else if (m && strcmp(m, "entry") == 0)
        e_enable(JVMPI_EVENT_METHOD_ENTRY);
    else if (m)
        E_FAIL("methods=%s: expected entry2 or entry", m);
    if (m)
        e_enable(JVMPI_EVENT_METHOD_EXIT);
    free(m);
    char *steps = e_opt(options, "steps");
    if (steps && strcmp(steps, "y") == 0)
        e_enable(JVMPI_EVENT_INSTRUCTION_START);
    else if (steps)
        E_FAIL("steps=%s: expected y", steps);
    free(steps);
    return JNI_OK;
}
