/*
 * i_xrun - an agent started the old way, by the VM itself through
 * -Xruni_xrun (JVM_OnLoad runs after the OnLoad phase), that enables one
 * family of events and checks that it got them for I_Xrun's code, which
 * runs ITERATIONS times (hot enough for C2) "o = new I_Xrun(i); last = o;
 * o.work(i)", drops `last`, runs System.gc(), makes a thread block on
 * I_Xrun.lock (of class I_Xrun$Lock, the only one) and waits on it:
 *   group=none          CLASS_LOAD only (nothing costly), and no other event
 *   group=methods       METHOD_ENTRY and METHOD_EXIT: one of work each per iteration
 *   group=receiver      METHOD_ENTRY2: each constructor and each call of work
 *                       with its receiver's ID, the constructor's the same
 *                       object as the call that followed on it
 *   group=instructions  INSTRUCTION_START: work's first instruction once per
 *                       iteration, its branch taken when i % 3 != 0
 *   group=monitors      MONITOR_CONTENDED_ENTER/ENTERED (and EXIT, emulated, at
 *                       most one per ENTERED) and MONITOR_WAIT/WAITED, on
 *                       I_Xrun.lock: each event's object, asked for with
 *                       RequestEvent(OBJECT_ALLOC), is of class I_Xrun$Lock
 *   group=alloc         OBJECT_ALLOC of every I_Xrun, OBJECT_FREE of each (in a
 *                       GC_START/GC_FINISH window), GC_START and GC_FINISH paired
 *   group=compiled      COMPILED_METHOD_LOAD of work, with its code
 *   group=jniref        JNI_GLOBALREF_* and JNI_WEAK_GLOBALREF_* of the references
 *                       the agent makes itself at JVM_INIT_DONE
 *   group=dump          at the wait on I_Xrun.lock: RequestEvent(MONITOR_DUMP), which
 *                       must show the lock owned by the waiting thread, and
 *                       RequestEvent(HEAP_DUMP) at level 0, which must list the lock
 *   group=late          METHOD_ENTRY and INSTRUCTION_START enabled at JVM_INIT_DONE
 * Every check of a group's own events is logged as "<group>: ...".
 * Options: group=<one of the above>, out=FILE.
 */
#include "c_common.h"
#include "dump_reader.h"

#define ITERATIONS 100000 /* I_Xrun.ITERATIONS */

static const char *group;
static jmethodID work, ctor;
static jobjectID xrun_class, lock_class;
static long loads, work_entries, work_exits, ctor_entries, work_steps, taken, not_taken, other_events;
static long contended_enter, contended_entered, contended_exit, waits, waiteds, bad_receiver, pairs_unmatched;
static long lock_enter, lock_entered, lock_waits, lock_waiteds;
static long allocs, frees, frees_unknown, frees_outside_gc, gc_starts, gc_finishes, work_compiled, bad_compiled;
static int in_gc;
static c_map xrun_objects; /* ID of each I_Xrun allocated: 1 live, 2 freed */
static jobjectID last_ctor_receiver;
static JVMPI_RawMonitor lock;

/* ---- answers to this thread's own requests, delivered during RequestEvent ---- */
static _Thread_local int answers;
static _Thread_local jobjectID answered_class;

/* Is OBJ I_Xrun.lock?  Its class, as RequestEvent(OBJECT_ALLOC) tells it. */
static int is_lock(jobjectID obj)
{
    if (obj == NULL)
        return 0;
    answers = 0;
    jint rc = c_pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, obj);
    c_pi->RawMonitorEnter(lock);
    int yes = rc == JVMPI_SUCCESS && answers == 1 && lock_class != NULL && answered_class == lock_class;
    c_pi->RawMonitorExit(lock);
    return yes;
}

/* ---- group=jniref: the agent's own references, at JVM_INIT_DONE ---- */
#define MAXREFS 8
static _Thread_local int recording, nrefs;
static _Thread_local struct {
    jint type;
    jobject ref;
    jobjectID obj;
} refs[MAXREFS];

static void jni_ref_event(JVMPI_Event *ev)
{
    if (!recording || nrefs == MAXREFS)
        return; /* other threads', the JDK's natives make references too */
    int alloc = ev->event_type == JVMPI_EVENT_JNI_GLOBALREF_ALLOC || ev->event_type == JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC;
    refs[nrefs].type = ev->event_type;
    refs[nrefs].ref = alloc ? ev->u.jni_globalref_alloc.ref_id : ev->u.jni_globalref_free.ref_id;
    refs[nrefs].obj = alloc ? ev->u.jni_globalref_alloc.obj_id : NULL;
    nrefs++;
}

static int ref_is(int i, jint type, jobject ref, jobjectID obj)
{
    return i < nrefs && refs[i].type == type && refs[i].ref == ref && refs[i].obj == obj;
}

static void make_references(void)
{
    JNIEnv *env = c_current_env();
    jclass o = env != NULL ? (*env)->FindClass(env, "java/lang/String") : NULL;
    if (o == NULL) {
        c_fail("jniref: no JNIEnv or no java.lang.String at JVM_INIT_DONE");
        return;
    }
    jobjectID id = c_pi->jobject2jobjectID(o);
    nrefs = 0;
    recording = 1;
    jobject g = (*env)->NewGlobalRef(env, o);
    jweak w = (*env)->NewWeakGlobalRef(env, o);
    (*env)->DeleteWeakGlobalRef(env, w);
    (*env)->DeleteGlobalRef(env, g);
    recording = 0;
    c_check(id != NULL && nrefs == 4 && ref_is(0, JVMPI_EVENT_JNI_GLOBALREF_ALLOC, g, id) &&
                ref_is(1, JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC, w, id) &&
                ref_is(2, JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE, w, NULL) &&
                ref_is(3, JVMPI_EVENT_JNI_GLOBALREF_FREE, g, NULL),
            "jniref: GLOBALREF_ALLOC, WEAK_GLOBALREF_ALLOC, WEAK_GLOBALREF_FREE, GLOBALREF_FREE of the agent's "
            "references to String's class, during its calls (%d events)",
            nrefs);
    (*env)->DeleteLocalRef(env, o);
}

/* ---- group=dump: asked for at the wait on I_Xrun.lock ---- */
static jobjectID dump_lock;
static JNIEnv *dump_owner;
static int monitor_dumps, heap_dumps, lock_owned_in_dump, lock_in_heap_dump;
static long heap_dump_objects;
static const char *monitor_dump_bad, *heap_dump_bad;

static void *read_ptr(const char **p)
{
    void *v;
    memcpy(&v, *p, sizeof v);
    *p += sizeof v;
    return v;
}

static uint32_t read_u4(const char **p)
{
    const unsigned char *b = (const unsigned char *)*p;
    *p += 4;
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Records: [u1 kind] JAVA: object, owner, u4 count, u4 n, n threads, u4 m,
 * m threads; RAW: name, monitor, then as JAVA from the owner on. */
static void monitor_dump(JVMPI_Event *ev)
{
    const char *p = ev->u.monitor_dump.begin, *end = ev->u.monitor_dump.end;
    monitor_dumps++;
    while (p != NULL && p < end) {
        int kind = (unsigned char)*p++;
        jobjectID obj = NULL;
        if (kind == JVMPI_MONITOR_JAVA) {
            obj = read_ptr(&p);
        } else if (kind == JVMPI_MONITOR_RAW) {
            read_ptr(&p);
            read_ptr(&p);
        } else {
            monitor_dump_bad = "a record of no known kind";
            return;
        }
        JNIEnv *owner = read_ptr(&p);
        uint32_t count = read_u4(&p);
        uint32_t n = read_u4(&p);
        p += (size_t)n * sizeof(void *);
        uint32_t m = read_u4(&p);
        p += (size_t)m * sizeof(void *);
        if (p > end) {
            monitor_dump_bad = "a record past the end";
            return;
        }
        /* HotSpot 5.0's entry count: the threads listed, not the recursion */
        if (obj != NULL && obj == dump_lock && owner == dump_owner && count == n + m)
            lock_owned_in_dump++;
    }
}

/* The level-0 HEAP_DUMP, read with the tests' independent dump reader. */
static char heap_dump_err[sizeof(((dr_dump *)0)->err)];

static void heap_dump(JVMPI_Event *ev)
{
    heap_dumps++;
    if (ev->u.heap_dump.dump_level != JVMPI_DUMP_LEVEL_0) {
        heap_dump_bad = "not at level 0";
        return;
    }
    dr_dump d;
    dr_init(&d);
    if (dr_parse_heap(&d, ev->u.heap_dump.begin, ev->u.heap_dump.end, 0, NULL) != 0) {
        snprintf(heap_dump_err, sizeof heap_dump_err, "%s", d.err);
        heap_dump_bad = heap_dump_err;
    } else {
        heap_dump_objects = (long)d.n;
        lock_in_heap_dump = dr_find(&d, dump_lock) != NULL;
    }
    dr_free(&d);
}

static void request_dumps(JNIEnv *waiter, jobjectID obj)
{
    dump_lock = obj;
    dump_owner = waiter;
    jint rm = c_pi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL);
    JVMPI_HeapDumpArg arg = {JVMPI_DUMP_LEVEL_0};
    jint rh = c_pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg);
    c_check(rm == JVMPI_SUCCESS && monitor_dumps == 1 && monitor_dump_bad == NULL && lock_owned_in_dump == 1,
            "dump: MONITOR_DUMP shows I_Xrun.lock owned by the thread waiting on it (rc %d, %d dumps, %s, %d)",
            (int)rm, monitor_dumps, c_str(monitor_dump_bad), lock_owned_in_dump);
    c_check(rh == JVMPI_SUCCESS && heap_dumps == 1 && heap_dump_bad == NULL && lock_in_heap_dump == 1,
            "dump: HEAP_DUMP at level 0 lists I_Xrun.lock once (rc %d, %d dumps, %s, %ld objects, %d)", (int)rh,
            heap_dumps, c_str(heap_dump_bad), heap_dump_objects, lock_in_heap_dump);
}

/* ---- monitor events: which object, asked for outside the agent's lock ---- */
static void monitor_event(JVMPI_Event *ev)
{
    jobjectID obj = ev->u.monitor.object;
    int on_lock = is_lock(obj);
    if (c_streq(group, "dump")) {
        if (ev->event_type == JVMPI_EVENT_MONITOR_WAIT && on_lock && monitor_dumps == 0)
            request_dumps(ev->env_id, obj);
        return;
    }
    c_pi->RawMonitorEnter(lock);
    switch (ev->event_type) {
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
        contended_enter++;
        lock_enter += on_lock;
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
        contended_entered++;
        lock_entered += on_lock;
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
        contended_exit++;
        break;
    case JVMPI_EVENT_MONITOR_WAIT:
        waits++;
        lock_waits += on_lock;
        break;
    case JVMPI_EVENT_MONITOR_WAITED:
        waiteds++;
        lock_waiteds += on_lock;
        break;
    default:
        break;
    }
    c_pi->RawMonitorExit(lock);
}

static void class_load(JVMPI_Event *ev)
{
    if (strcmp(ev->u.class_load.class_name, "I_Xrun$Lock") == 0) {
        lock_class = ev->u.class_load.class_id;
        return;
    }
    if (strcmp(ev->u.class_load.class_name, "I_Xrun") != 0)
        return;
    loads++;
    xrun_class = ev->u.class_load.class_id;
    for (int i = 0; i < ev->u.class_load.num_methods; i++) {
        JVMPI_Method *m = &ev->u.class_load.methods[i];
        if (strcmp(m->method_name, "work") == 0)
            work = m->method_id;
        else if (strcmp(m->method_name, "<init>") == 0)
            ctor = m->method_id;
    }
}

static void shut_down(void)
{
    /* work: iload_1, iconst_3, irem, ifne <else> at offset 3; not taken for
     * the i that are multiples of 3. */
    long multiples = (ITERATIONS + 2) / 3;
    c_check(loads == 1, "CLASS_LOAD of I_Xrun once (%ld)", loads);
    if (c_streq(group, "none")) {
        c_check(other_events == 0, "none: no event but those enabled (%ld others)", other_events);
    } else if (c_streq(group, "methods")) {
        c_check(work_entries == ITERATIONS && work_exits == ITERATIONS,
                "methods: %d entries and exits of work (%ld, %ld)", ITERATIONS, work_entries, work_exits);
    } else if (c_streq(group, "receiver")) {
        c_check(ctor_entries == ITERATIONS && work_entries == ITERATIONS,
                "receiver: %d ENTRY2 of <init> and of work (%ld, %ld)", ITERATIONS, ctor_entries, work_entries);
        c_check(bad_receiver == 0 && pairs_unmatched == 0, "receiver: every receiver given, the constructor's the same");
    } else if (c_streq(group, "instructions") || c_streq(group, "late")) {
        c_check(work_steps == ITERATIONS, "%s: work's first instruction stepped %d times (%ld)", group, ITERATIONS,
                work_steps);
        c_check(taken == ITERATIONS - multiples && not_taken == multiples,
                "%s: work's branch taken %ld times, not taken %ld (%ld, %ld)", group, ITERATIONS - multiples,
                multiples, taken, not_taken);
        if (c_streq(group, "late"))
            c_check(work_entries == ITERATIONS, "late: %d entries of work (%ld)", ITERATIONS, work_entries);
    } else if (c_streq(group, "monitors")) {
        /* The EXIT is emulated: none comes if the owner had left before the
         * blocked thread's ENTER asked who owned the monitor (docs/differences.md,
         * "MONITOR_CONTENDED_EXIT is emulated"); I_Xrun holds on a while to
         * make that rare, and an EXIT, when it comes, pairs with an ENTERED. */
        c_check(lock_enter >= 1 && lock_entered >= 1 && contended_exit <= contended_entered,
                "monitors: contention on I_Xrun.lock seen (enter %ld, entered %ld of %ld, %ld; exit %ld)", lock_enter,
                lock_entered, contended_enter, contended_entered, contended_exit);
        c_check(lock_waits >= 1 && lock_waiteds >= 1,
                "monitors: the wait on I_Xrun.lock seen (%ld, %ld of %ld, %ld with Thread.sleep's)", lock_waits,
                lock_waiteds, waits, waiteds);
    } else if (c_streq(group, "alloc")) {
        c_check(allocs == ITERATIONS, "alloc: OBJECT_ALLOC of %d I_Xrun (%ld)", ITERATIONS, allocs);
        c_check(frees == ITERATIONS && frees_unknown == 0,
                "alloc: OBJECT_FREE of each of them after System.gc() (%ld, %ld of no I_Xrun)", frees,
                frees_unknown);
        c_check(frees_outside_gc == 0 && gc_starts >= 1 && gc_starts == gc_finishes && !in_gc,
                "alloc: GC_START and GC_FINISH paired, every free between them (%ld, %ld, %ld outside)", gc_starts,
                gc_finishes, frees_outside_gc);
    } else if (c_streq(group, "compiled")) {
        c_check(work_compiled >= 1 && bad_compiled == 0, "compiled: COMPILED_METHOD_LOAD of work with its code (%ld)",
                work_compiled);
    }
    c_summary("i_xrun");
}

static void notify(JVMPI_Event *ev)
{
    /* Handled on the calling thread without the agent's lock: answers to its
     * own requests, its own references, and what makes requests. */
    switch (ev->event_type) {
    case JVMPI_EVENT_OBJECT_ALLOC | JVMPI_REQUESTED_EVENT:
        answers++;
        answered_class = ev->u.obj_alloc.class_id;
        return;
    case JVMPI_EVENT_MONITOR_DUMP | JVMPI_REQUESTED_EVENT:
        monitor_dump(ev);
        return;
    case JVMPI_EVENT_HEAP_DUMP | JVMPI_REQUESTED_EVENT:
        heap_dump(ev);
        return;
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_GLOBALREF_FREE:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE:
        jni_ref_event(ev);
        return;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
    case JVMPI_EVENT_MONITOR_WAIT:
    case JVMPI_EVENT_MONITOR_WAITED:
        monitor_event(ev);
        return;
    case JVMPI_EVENT_JVM_INIT_DONE:
        if (c_streq(group, "jniref")) {
            make_references();
        } else if (c_streq(group, "late")) {
            c_enable(JVMPI_EVENT_METHOD_ENTRY, "METHOD_ENTRY");
            c_enable(JVMPI_EVENT_INSTRUCTION_START, "INSTRUCTION_START");
        }
        return;
    default:
        break;
    }
    c_pi->RawMonitorEnter(lock);
    switch (ev->event_type) {
    case JVMPI_EVENT_CLASS_LOAD:
        class_load(ev);
        break;
    case JVMPI_EVENT_METHOD_ENTRY:
        work_entries += ev->u.method.method_id == work;
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        work_exits += ev->u.method.method_id == work;
        break;
    case JVMPI_EVENT_METHOD_ENTRY2: {
        jobjectID obj = ev->u.method_entry2.obj_id;
        if (ev->u.method_entry2.method_id == ctor) {
            ctor_entries++;
            if (obj == NULL)
                C_FAIL_SOME(bad_receiver, "receiver: ENTRY2 of I_Xrun.<init> without its receiver");
            last_ctor_receiver = obj;
        } else if (ev->u.method_entry2.method_id == work) {
            work_entries++;
            if (obj == NULL || obj != last_ctor_receiver)
                C_FAIL_SOME(pairs_unmatched, "receiver: ENTRY2 of work on %p, its constructor's receiver was %p",
                            (void *)obj, (void *)last_ctor_receiver);
        }
        break;
    }
    case JVMPI_EVENT_INSTRUCTION_START:
        if (ev->u.instruction.method_id == work) {
            work_steps += ev->u.instruction.offset == 0;
            if (ev->u.instruction.offset == 3) {
                if (ev->u.instruction.u.if_info.is_true)
                    taken++;
                else
                    not_taken++;
            }
        }
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        if (xrun_class != NULL && ev->u.obj_alloc.class_id == xrun_class) {
            allocs++;
            c_map_put(&xrun_objects, ev->u.obj_alloc.obj_id, 1, NULL)->val = 1;
        }
        break;
    case JVMPI_EVENT_OBJECT_FREE: {
        c_slot *s = c_map_find(&xrun_objects, ev->u.obj_free.obj_id);
        frees_outside_gc += !in_gc;
        if (s != NULL && s->val == 1) {
            frees++;
            s->val = 2;
        } else if (s != NULL) {
            frees_unknown++; /* freed twice */
        }
        break;
    }
    case JVMPI_EVENT_GC_START:
        gc_starts++;
        in_gc = 1;
        break;
    case JVMPI_EVENT_GC_FINISH:
        gc_finishes++;
        in_gc = 0;
        break;
    case JVMPI_EVENT_COMPILED_METHOD_LOAD:
        if (ev->u.compiled_method_load.method_id == work) {
            work_compiled++;
            if (ev->u.compiled_method_load.code_addr == NULL || ev->u.compiled_method_load.code_size <= 0)
                C_FAIL_SOME(bad_compiled, "compiled: COMPILED_METHOD_LOAD of work without its code");
        }
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        shut_down();
        break;
    default:
        other_events++;
        break;
    }
    c_pi->RawMonitorExit(lock);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    static const struct {
        const char *group;
        jint events[6];
        const char *names[6];
    } groups[] = {
        {"none", {0}, {0}},
        {"methods", {JVMPI_EVENT_METHOD_ENTRY, JVMPI_EVENT_METHOD_EXIT}, {"METHOD_ENTRY", "METHOD_EXIT"}},
        {"receiver", {JVMPI_EVENT_METHOD_ENTRY2}, {"METHOD_ENTRY2"}},
        {"instructions", {JVMPI_EVENT_INSTRUCTION_START}, {"INSTRUCTION_START"}},
        {"monitors",
         {JVMPI_EVENT_MONITOR_CONTENDED_ENTER, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED,
          JVMPI_EVENT_MONITOR_CONTENDED_EXIT, JVMPI_EVENT_MONITOR_WAIT, JVMPI_EVENT_MONITOR_WAITED},
         {"MONITOR_CONTENDED_ENTER", "MONITOR_CONTENDED_ENTERED", "MONITOR_CONTENDED_EXIT", "MONITOR_WAIT",
          "MONITOR_WAITED"}},
        {"alloc",
         {JVMPI_EVENT_OBJECT_ALLOC, JVMPI_EVENT_OBJECT_FREE, JVMPI_EVENT_GC_START, JVMPI_EVENT_GC_FINISH},
         {"OBJECT_ALLOC", "OBJECT_FREE", "GC_START", "GC_FINISH"}},
        {"compiled", {JVMPI_EVENT_COMPILED_METHOD_LOAD}, {"COMPILED_METHOD_LOAD"}},
        {"jniref",
         {JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_JNI_GLOBALREF_ALLOC, JVMPI_EVENT_JNI_GLOBALREF_FREE,
          JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC, JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE},
         {"JVM_INIT_DONE", "JNI_GLOBALREF_ALLOC", "JNI_GLOBALREF_FREE", "JNI_WEAK_GLOBALREF_ALLOC",
          "JNI_WEAK_GLOBALREF_FREE"}},
        {"dump", {JVMPI_EVENT_MONITOR_WAIT}, {"MONITOR_WAIT"}},
        {"late", {JVMPI_EVENT_JVM_INIT_DONE}, {"JVM_INIT_DONE"}},
    };
    if (c_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    char *g = c_opt(options, "group");
    group = g != NULL ? g : "none";
    lock = c_pi->RawMonitorCreate("i_xrun");
    c_pi->NotifyEvent = notify;
    c_enable(JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD");
    c_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        if (!c_streq(group, groups[i].group))
            continue;
        for (int j = 0; j < 6 && groups[i].names[j] != NULL; j++)
            c_enable(groups[i].events[j], groups[i].names[j]);
        return JNI_OK;
    }
    c_fail("unknown group=%s", group);
    return JNI_ERR;
}
