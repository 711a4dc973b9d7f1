/*
 * e_dumpsize - an agent that sizes every record of every dump the way Sun's
 * HPROF did (its get_dump_size): from what CLASS_LOAD said alone, and that
 * gives up at the first record whose length disagrees, naming it.
 *
 * HPROF walked a dump record by record.  A class dump's length came from the
 * class's CLASS_LOAD: six IDs, the reserved word and the instance size, one
 * ID per interface as num_interfaces announced, the constant pool (each
 * entry read as a u2 index, a u1 type and an object ID), then one value per
 * static field of CLASS_LOAD's list, sized by its signature.  An instance
 * dump's byte count must be what the CLASS_LOAD instance lists of its class
 * and of each super give (the supers come from the dump's class dumps).  One
 * record of another length throws every later one out of step: HPROF then
 * met an "unknown class_id" and abandoned the dump.  So does this agent.
 *
 * It also checks what HotSpot 5.0 wrote, on which agents were debugged:
 * no class dump of an array class at levels 1 and 2; frame numbers of
 * JAVA_FRAME and JNI_LOCAL roots counted from the outermost frame (1) to
 * the top (the thread's number of frames), -1 when there is none.
 *
 * Dumps: from a system thread (dumps=N, the first dump_ms=MS after
 * JVM_INIT_DONE, then every dump_ms) and on every DATA_DUMP_REQUEST, one
 * HEAP_DUMP at each level 0, 1 and 2; after the level 2 one, OBJECT_DUMPs
 * of objects met in it: every instance of java.lang.Class (a primitive
 * type's Class object, which 5.0 dumped as an instance), every class whose
 * name starts with focus=PREFIX and one instance or array of each, and up to
 * objdumps=N other objects, one per class.
 *
 * Classes are learnt from CLASS_LOAD only; an unknown class ID is asked for
 * with RequestEvent(CLASS_LOAD), and a failed request is fatal.
 *
 * Options: out=FILE, dumps=N (default 1), dump_ms=MS (default 1500),
 * focus=PREFIX, objdumps=N (default 100), keepgoing=1 (see e_common.h).
 * Output: per focus class seen in a level 2 dump "class dump NAME: ...", per
 * dump a line of counts, and on JVM_SHUT_DOWN "e_dumpsize: finished, N checks
 * passed, M failed".
 */
#include "e_common.h"

#include "dump_reader.h"

static pthread_mutex_t lk; /* recursive: a request's answer comes inside it */
static pthread_mutex_t round_lk = PTHREAD_MUTEX_INITIALIZER; /* one round of dumps at a time */
static e_map classes;      /* class ID -> e_class */
static e_map supers;       /* class ID -> its super's ID (NO_SUPER for none), from class dumps */
static e_map focus_told;   /* focus classes described once already */
static int dumps_wanted;
static long dump_ms;
static long objdumps_wanted;
static char *focus;
static long n_dumps, n_object_dumps, n_object_dumps_gone;

#define NO_SUPER ((void *)(uintptr_t)1)

/* ---- classes, from CLASS_LOAD ------------------------------------------------- */

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
    pthread_mutex_unlock(&lk);
    e_pass();
}

/* The class as CLASS_LOAD described it; an unknown ID is requested, as
 * HPROF did.  Under lk. */
static const e_class *need_class(jobjectID id, const char *what)
{
    e_class *c = e_map_get(&classes, id);
    if (c)
        return c;
    e_req r = {0};
    if (!e_request(&r, JVMPI_EVENT_CLASS_LOAD, id, what))
        return NULL;
    c = e_map_get(&classes, id);
    if (!c)
        E_FAIL("RequestEvent(CLASS_LOAD, %p) for %s: the answer defined nothing", (void *)id, what);
    return c;
}

static int is_focus(const e_class *c)
{
    return focus && *focus && strncmp(c->name, focus, strlen(focus)) == 0;
}

/* ---- one dump ------------------------------------------------------------------ */

typedef struct {
    e_rd r;
    int level;
    const char *what;      /* "level 2 heap dump 3", "OBJECT_DUMP of 0x..." */
    const JVMPI_CallTrace *traces;
    int num_traces;
    /* the record being sized, and the one before it, for the messages */
    size_t rec_off, prev_off;
    int rec_kind, prev_kind;
    char rec_about[200], prev_about[200];
    long n_records, n_roots, n_framed, n_class_dumps, n_instances, n_class_instances, n_obj_arrays, n_prim_arrays;
    /* OBJECT_DUMP candidates, collected from a level 2 heap dump */
    jobjectID *picks;
    size_t n_picks, cap_picks;
    e_map picked_class; /* class (or array class) -> 1: one object of each */
    long n_other_picks;
} sizer;

static void report(sizer *s, const char *msg)
{
    char prev[300] = "";
    if (s->n_records > 0)
        snprintf(prev, sizeof prev, "; the record before, at offset %zu: %s %s", s->prev_off,
                 dr_kind_name(s->level, s->prev_kind), s->prev_about);
    E_FAIL("%s (%zu bytes): record %ld at offset %zu (%s %s): %s%s", s->what, s->r.n, s->n_records, s->rec_off,
           dr_kind_name(s->level, s->rec_kind), s->rec_about, msg, prev);
}

/* A record that is not as CLASS_LOAD and HotSpot 5.0 have it: fatal.  When
 * its length is wrong (FRAMING) the rest of the dump cannot be framed and
 * -1 stops the sizing; otherwise (keepgoing=1) it goes on. */
__attribute__((format(printf, 3, 4)))
static int flag(sizer *s, int framing, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    report(s, msg);
    return framing ? -1 : 0;
}

#define bad(s, ...) flag((s), 1, __VA_ARGS__)
#define unlike50(s, ...) flag((s), 0, __VA_ARGS__)

static int need(sizer *s, size_t k, const char *part)
{
    if (s->r.n - s->r.p < k)
        return bad(s, "%s needs %zu bytes, only %zu are left", part, k, s->r.n - s->r.p);
    return 0;
}

/* Bytes of the values of field signature letters TYPES at this level. */
static size_t values_size(const sizer *s, const char *types, int count)
{
    size_t n = 0;
    for (int i = 0; i < count; i++)
        if (s->level >= 2 || types[i] == 'L' || types[i] == '[')
            n += e_sig_size(types[i]);
    return n;
}

static int valid_letters(sizer *s, const e_class *c, const char *types, int count, const char *list)
{
    for (int i = 0; i < count; i++)
        if (!e_sig_size(types[i]))
            return bad(s, "%s's CLASS_LOAD lists %s field %d with signature letter '%c'", c->name, list, i,
                       types[i]);
    return 0;
}

static void pick(sizer *s, jobjectID id, const void *cls, int always)
{
    if (!s->picks)
        return;
    if (!always) {
        if (e_map_get(&s->picked_class, cls) || s->n_other_picks >= objdumps_wanted)
            return;
        e_map_put(&s->picked_class, cls, (void *)1);
        s->n_other_picks++;
    }
    if (s->n_picks == s->cap_picks) {
        s->cap_picks = s->cap_picks ? 2 * s->cap_picks : 256;
        s->picks = realloc(s->picks, s->cap_picks * sizeof *s->picks);
        if (!s->picks)
            abort();
    }
    s->picks[s->n_picks++] = id;
}

static int frame_root(sizer *s)
{
    const void *obj = e_rd_ptr(&s->r);
    JNIEnv *env = (JNIEnv *)e_rd_ptr(&s->r);
    int32_t frame = (int32_t)e_rd_u(&s->r, 4);
    snprintf(s->rec_about, sizeof s->rec_about, "of %p, env %p, frame %d", obj, (void *)env, (int)frame);
    if (frame == -1) {
        e_pass();
        return 0;
    }
    for (int t = 0; t < s->num_traces; t++) {
        if (s->traces[t].env_id != env)
            continue;
        if (frame < 1 || frame > s->traces[t].num_frames)
            return unlike50(s, "frame %d, but that thread's trace has %d frames: HotSpot 5.0 numbered them from 1 "
                       "(outermost) to %d (top), or -1 for none", (int)frame, (int)s->traces[t].num_frames,
                       (int)s->traces[t].num_frames);
        s->n_framed++;
        e_pass();
        return 0;
    }
    return unlike50(s, "frame %d of a thread that has no trace in this dump", (int)frame);
}

static int class_dump(sizer *s, int in_heap_dump)
{
    if (need(s, 7 * E_PTR + 4, "the class dump's header"))
        return -1;
    jobjectID id = (jobjectID)e_rd_ptr(&s->r);
    const void *super = e_rd_ptr(&s->r);
    snprintf(s->rec_about, sizeof s->rec_about, "of %p", (void *)id);
    const e_class *c = id ? need_class(id, "a class dump") : NULL;
    if (!c)
        return bad(s, "no class is known by that ID: HPROF said 'unknown class_id in get_dump_size' here");
    snprintf(s->rec_about, sizeof s->rec_about, "of %s", c->name);
    if (in_heap_dump && c->name[0] == '[')
        unlike50(s, "a class dump of an array class: HotSpot 5.0 wrote none at levels 1 and 2");
    s->r.p += 5 * E_PTR + 4; /* loader, signers, domain, name, reserved; instance size */
    if (c->n_ifaces < 0 || valid_letters(s, c, c->statics, c->n_statics, "static"))
        return -1;
    if (need(s, (size_t)c->n_ifaces * E_PTR + 2, "the interfaces CLASS_LOAD announced and the pool count"))
        return -1;
    s->r.p += (size_t)c->n_ifaces * E_PTR;
    unsigned ncp = e_rd_u(&s->r, 2);
    if (ncp != 0)
        unlike50(s, "a constant pool of %u entries: HotSpot 5.0 wrote none", ncp);
    for (unsigned i = 0; i < ncp; i++) {
        if (need(s, 3 + E_PTR, "a constant pool entry (u2 index, u1 type, object ID)"))
            return -1;
        unsigned index = e_rd_u(&s->r, 2);
        int ty = s->r.b[s->r.p++];
        if (ty != JVMPI_NORMAL_OBJECT && ty != JVMPI_CLASS)
            return bad(s, "constant pool entry %u of %u (index %u) has type %d, whose value is no object ID: HPROF "
                       "reads an ID there and loses step (HotSpot 5.0 wrote no entries)", i, ncp, index, ty);
        s->r.p += E_PTR;
    }
    size_t statics = values_size(s, c->statics, c->n_statics);
    if (need(s, statics, "the static field values CLASS_LOAD lists"))
        return -1;
    s->r.p += statics;
    /* The super, for the instance dumps after it and for object dumps. */
    void *was = e_map_get(&supers, id);
    void *now = super ? (void *)super : NO_SUPER;
    if (was && was != now)
        return bad(s, "names super %p, an earlier class dump named %p", super, was == NO_SUPER ? NULL : was);
    e_map_put(&supers, id, now);
    if (is_focus(c) && s->level == 2 && e_map_put(&focus_told, id, (void *)1))
        e_say("class dump %s: %d interfaces, %u constant pool entries, %d statics (%zu bytes)", c->name,
              c->n_ifaces, ncp, c->n_statics, statics);
    if (is_focus(c))
        pick(s, id, id, 1);
    s->n_class_dumps++;
    return 0;
}

static int instance_dump(sizer *s)
{
    if (need(s, 2 * E_PTR + 4, "the instance dump's header"))
        return -1;
    jobjectID id = (jobjectID)e_rd_ptr(&s->r);
    jobjectID cls = (jobjectID)e_rd_ptr(&s->r);
    uint32_t nbytes = e_rd_u(&s->r, 4);
    snprintf(s->rec_about, sizeof s->rec_about, "of %p, class %p", (void *)id, (void *)cls);
    const e_class *c = cls ? need_class(cls, "the class of an instance dump") : NULL;
    if (!c)
        return bad(s, "no class is known by the class ID");
    snprintf(s->rec_about, sizeof s->rec_about, "of %p, class %s", (void *)id, c->name);
    if (c->name[0] == '[')
        return bad(s, "an instance of an array class");
    size_t want = 0;
    const void *k = cls;
    for (int depth = 0; k; depth++) {
        const e_class *kc = need_class((jobjectID)k, "a superclass in an instance dump's chain");
        if (!kc)
            return bad(s, "class %p in its super chain is unknown", k);
        if (valid_letters(s, kc, kc->fields, kc->n_fields, "instance"))
            return -1;
        want += values_size(s, kc->fields, kc->n_fields);
        void *sup = e_map_get(&supers, k);
        if (!sup)
            return bad(s, "the super of %s is unknown: no class dump of it came first", kc->name);
        k = sup == NO_SUPER ? NULL : sup;
        if (depth > 200)
            return bad(s, "a super chain longer than 200");
    }
    if (nbytes != want)
        return bad(s, "%u value bytes, but the CLASS_LOAD instance lists of %s and its supers give %zu", nbytes,
                   c->name, want);
    if (need(s, nbytes, "the instance field values"))
        return -1;
    s->r.p += nbytes;
    s->n_instances++;
    if (strcmp(c->name, "java.lang.Class") == 0) {
        s->n_class_instances++;
        pick(s, id, cls, 1);
    } else {
        pick(s, id, cls, is_focus(c) && !e_map_get(&s->picked_class, cls));
        if (is_focus(c))
            e_map_put(&s->picked_class, cls, (void *)1);
    }
    return 0;
}

static int obj_array_dump(sizer *s)
{
    if (need(s, 2 * E_PTR + 4, "the object array's header"))
        return -1;
    jobjectID id = (jobjectID)e_rd_ptr(&s->r);
    uint32_t n = e_rd_u(&s->r, 4);
    jobjectID elem = (jobjectID)e_rd_ptr(&s->r);
    snprintf(s->rec_about, sizeof s->rec_about, "of %p, %u elements of class %p", (void *)id, n, (void *)elem);
    /* HotSpot 5.0 always named an object array's element class; an agent
     * prints the array's type through it. */
    if (!elem)
        return bad(s, "an object array names no element class");
    const e_class *c = need_class(elem, "the element class of an object array dump");
    if (!c)
        return bad(s, "no class is known by the element class ID");
    snprintf(s->rec_about, sizeof s->rec_about, "of %p, %u elements of class %s", (void *)id, n, c->name);
    if (need(s, (size_t)n * E_PTR, "the elements"))
        return -1;
    s->r.p += (size_t)n * E_PTR;
    s->n_obj_arrays++;
    pick(s, id, elem, is_focus(c));
    return 0;
}

static int prim_array_dump(sizer *s)
{
    if (need(s, E_PTR + 5, "the primitive array's header"))
        return -1;
    jobjectID id = (jobjectID)e_rd_ptr(&s->r);
    uint32_t n = e_rd_u(&s->r, 4);
    int ty = s->r.b[s->r.p++];
    snprintf(s->rec_about, sizeof s->rec_about, "of %p, %u elements of type %d", (void *)id, n, ty);
    size_t sz = ty >= JVMPI_BOOLEAN ? e_type_size(ty) : 0;
    if (!sz)
        return bad(s, "element type %d is no primitive type", ty);
    if (s->level >= 2) {
        if (need(s, (size_t)n * sz, "the elements"))
            return -1;
        s->r.p += (size_t)n * sz;
    }
    s->n_prim_arrays++;
    pick(s, id, (const void *)(uintptr_t)(0x10 + ty), 0);
    return 0;
}

/* One record at s->r.p, of a level 1 or 2 heap dump or an object dump. */
static int record(sizer *s, int in_heap_dump)
{
    s->rec_kind = s->r.b[s->r.p++];
    s->rec_about[0] = '\0';
    size_t ptrs = 0;
    switch (s->rec_kind) {
    case JVMPI_GC_ROOT_UNKNOWN:
    case JVMPI_GC_ROOT_STICKY_CLASS:
    case JVMPI_GC_ROOT_MONITOR_USED:
        ptrs = 1;
        break;
    case JVMPI_GC_ROOT_JNI_GLOBAL:
    case JVMPI_GC_ROOT_NATIVE_STACK:
    case JVMPI_GC_ROOT_THREAD_BLOCK:
        ptrs = 2;
        break;
    case JVMPI_GC_ROOT_JNI_LOCAL:
    case JVMPI_GC_ROOT_JAVA_FRAME:
        if (!in_heap_dump)
            return bad(s, "a root in an object dump");
        s->n_roots++;
        return need(s, 2 * E_PTR + 4, "the frame root") ? -1 : frame_root(s);
    case JVMPI_GC_CLASS_DUMP:
        return class_dump(s, in_heap_dump);
    case JVMPI_GC_INSTANCE_DUMP:
        return instance_dump(s);
    case JVMPI_GC_OBJ_ARRAY_DUMP:
        return obj_array_dump(s);
    case JVMPI_GC_PRIM_ARRAY_DUMP:
        return prim_array_dump(s);
    default:
        return bad(s, "0x%02x is no record type", s->rec_kind);
    }
    if (!in_heap_dump)
        return bad(s, "a root in an object dump");
    if (need(s, ptrs * E_PTR, "the root"))
        return -1;
    snprintf(s->rec_about, sizeof s->rec_about, "of %p", e_rd_ptr(&s->r));
    s->r.p += (ptrs - 1) * E_PTR;
    s->n_roots++;
    return 0;
}

static int level0_record(sizer *s)
{
    s->rec_kind = s->r.b[s->r.p++];
    s->rec_about[0] = '\0';
    if (s->rec_kind != JVMPI_NORMAL_OBJECT && s->rec_kind != JVMPI_CLASS && !(s->rec_kind >= JVMPI_BOOLEAN &&
                                                                              e_type_size(s->rec_kind)))
        return bad(s, "object type %d is none of JVMPI's", s->rec_kind);
    if (need(s, E_PTR, "the object ID"))
        return -1;
    const void *id = e_rd_ptr(&s->r);
    snprintf(s->rec_about, sizeof s->rec_about, "%p", id);
    if (!id)
        return bad(s, "a NULL object ID");
    s->n_records++;
    return 0;
}

/* Sizes every record from begin to end; 0 when they add up exactly. */
static int size_all(sizer *s, const void *begin, size_t len, int in_heap_dump)
{
    s->r.b = begin;
    s->r.n = len;
    s->r.p = 0;
    while (s->r.p < s->r.n) {
        s->rec_off = s->r.p;
        int rc = s->level == 0 ? level0_record(s) : record(s, in_heap_dump);
        if (rc)
            return rc;
        if (s->level != 0)
            s->n_records++;
        s->prev_off = s->rec_off;
        s->prev_kind = s->rec_kind;
        memcpy(s->prev_about, s->rec_about, sizeof s->prev_about);
        e_pass();
    }
    return 0;
}

/* ---- requesting the dumps -------------------------------------------------------- */

static sizer *current; /* the level 2 heap dump's sizer, while it is requested (under lk) */

static void on_heap_dump(const JVMPI_Event *ev)
{
    pthread_mutex_lock(&lk);
    e_req *req = e_current_request();
    int level = req && req->arg ? ((JVMPI_HeapDumpArg *)req->arg)->heap_dump_level : 2;
    char what[80];
    snprintf(what, sizeof what, "level %d heap dump %ld", level, ++n_dumps);
    sizer local;
    sizer *s = level == 2 && current ? current : &local;
    if (s == &local)
        memset(s, 0, sizeof *s);
    s->level = level;
    s->what = what;
    s->traces = ev->u.heap_dump.traces;
    s->num_traces = ev->u.heap_dump.num_traces;
    size_t len = (size_t)(ev->u.heap_dump.end - ev->u.heap_dump.begin);
    if (ev->u.heap_dump.dump_level != level)
        E_FAIL("%s: dump_level %d", what, ev->u.heap_dump.dump_level);
    if (size_all(s, ev->u.heap_dump.begin, len, 1) == 0) {
        e_say("%s: %zu bytes, %ld records sized from CLASS_LOAD: %ld roots (%ld in a numbered frame), %ld class "
              "dumps, %ld instances (%ld of java.lang.Class), %ld object arrays, %ld primitive arrays",
              what, len, s->n_records, s->n_roots, s->n_framed, s->n_class_dumps, s->n_instances, s->n_class_instances,
              s->n_obj_arrays, s->n_prim_arrays);
        if (level > 0 && s->n_class_instances == 0)
            E_FAIL("%s: no instance dump of class java.lang.Class: the primitive types' Class objects (int.class, "
                   "reachable from Integer.TYPE) were instances in HotSpot 5.0's dumps", what);
    }
    s->what = NULL;
    pthread_mutex_unlock(&lk);
}

static void on_object_dump(const JVMPI_Event *ev)
{
    pthread_mutex_lock(&lk);
    e_req *req = e_current_request();
    char what[80];
    snprintf(what, sizeof what, "OBJECT_DUMP of %p", req ? req->arg : NULL);
    sizer s;
    memset(&s, 0, sizeof s);
    s.level = 2;
    s.what = what;
    if (ev->u.object_dump.data_len <= 0 || !ev->u.object_dump.data)
        E_FAIL("%s: data %p, data_len %d", what, (void *)ev->u.object_dump.data, (int)ev->u.object_dump.data_len);
    else if (size_all(&s, ev->u.object_dump.data, (size_t)ev->u.object_dump.data_len, 0) == 0 && s.n_records != 1)
        E_FAIL("%s: %ld records, one expected", what, s.n_records);
    n_object_dumps++;
    pthread_mutex_unlock(&lk);
}

static void dump_round(const char *why)
{
    pthread_mutex_lock(&round_lk);
    for (int level = 0; level <= 2; level++) {
        JVMPI_HeapDumpArg arg = {level};
        e_req r = {0};
        sizer s;
        memset(&s, 0, sizeof s);
        if (level == 2) {
            s.picks = malloc(256 * sizeof *s.picks);
            s.cap_picks = 256;
            pthread_mutex_lock(&lk);
            current = &s;
            pthread_mutex_unlock(&lk);
        }
        e_request(&r, JVMPI_EVENT_HEAP_DUMP, &arg, why);
        pthread_mutex_lock(&lk);
        current = NULL;
        pthread_mutex_unlock(&lk);
        /* Objects of the dump, one at a time; one that died since is not
         * there any more: the request fails, and that is no fault. */
        for (size_t i = 0; i < s.n_picks; i++) {
            e_req o = {0};
            jint rc = e_request_raw(&o, JVMPI_EVENT_OBJECT_DUMP, s.picks[i]);
            if (rc != JVMPI_SUCCESS)
                n_object_dumps_gone++;
            else if (o.answers != 1)
                E_FAIL("RequestEvent(OBJECT_DUMP, %p): %d answers", (void *)s.picks[i], o.answers);
        }
        free(s.picks);
        free(s.picked_class.s);
    }
    pthread_mutex_unlock(&round_lk);
    e_say("dumps for %s done", why);
}

static void JNICALL notify(JVMPI_Event *ev)
{
    if (!e_accept(ev))
        return;
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        on_heap_dump(ev);
        break;
    case JVMPI_EVENT_OBJECT_DUMP:
        on_object_dump(ev);
        break;
    case JVMPI_EVENT_DATA_DUMP_REQUEST:
        dump_round("DATA_DUMP_REQUEST");
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        e_timer_start("e_dumpsize dumper", dumps_wanted, dump_ms, dump_round);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        e_timer_stop();
        pthread_mutex_lock(&lk);
        e_say("JVM_SHUT_DOWN: %zu classes, %ld heap dumps, %ld object dumps (%ld more asked for objects gone since)",
              classes.live, n_dumps, n_object_dumps, n_object_dumps_gone);
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
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&lk, &a);
    if (e_setup(vm, options, "e_dumpsize") != JNI_OK)
        return JNI_ERR;
    dumps_wanted = (int)e_opt_long(options, "dumps", 1);
    dump_ms = e_opt_long(options, "dump_ms", 1500);
    objdumps_wanted = e_opt_long(options, "objdumps", 100);
    focus = e_opt(options, "focus");
    e_pi->NotifyEvent = notify;
    static const jint events[] = {JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_JVM_SHUT_DOWN,
                                  JVMPI_EVENT_DATA_DUMP_REQUEST};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        e_enable(events[i]);
    return JNI_OK;
}
