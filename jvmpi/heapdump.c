/*
 * heapdump.c - HEAP_DUMP (levels 0, 1, 2) and OBJECT_DUMP in the JVMPI
 * specification's dump format (its bytes: dumpbuf.h).
 *
 * The backend hands over a snapshot of one heap walk (seam.h, "heap dumps");
 * this side knows what the agent was told in CLASS_LOAD, so it is the one
 * that puts field values in CLASS_LOAD order, and it knows the threads by
 * their JNIEnv *, so it takes the call traces and numbers the frames.
 */
#include "heapdump.h"

#include <stdlib.h>
#include <string.h>

#include "classes.h"
#include "defs.h"
#include "dumpbuf.h"
#include "dumpdefs.h"
#include "events.h"
#include "gc.h"
#include "layer.h"
#include "log.h"
#include "threads.h"

#define MAX_TRACE_DEPTH 8192
#define FIRST_TRACE_DEPTH 64
/* A super chain longer than this is a broken snapshot, not a class. */
#define MAX_CHAIN 1024

/* ---- classes of the snapshot, with what CLASS_LOAD said about them -------- */

typedef struct {
    const seam_heap_snapshot *snap;
    class_rec **recs;        /* parallel to snap->classes, acquired on first use */
    bool *looked_up;
    class_rec **extra;       /* acquired records of classes outside the snapshot */
    int n_extra, cap_extra;
    const seam_heap_field **by_slot;  /* scratch: one CLASS_LOAD list's values */
    size_t by_slot_cap;
} class_view;

static int by_id_cmp(const void *key, const void *elem)
{
    uintptr_t k = (uintptr_t)*(const jobjectID *)key;
    uintptr_t e = (uintptr_t)((const seam_heap_class *)elem)->id;
    return k < e ? -1 : k > e;
}

static int class_index(const class_view *cv, jobjectID id)
{
    if (id == NULL || cv->snap->num_classes == 0) {
        return -1;
    }
    const seam_heap_class *c = bsearch(&id, cv->snap->classes, (size_t)cv->snap->num_classes,
                                       sizeof *cv->snap->classes, by_id_cmp);
    return c != NULL ? (int)(c - cv->snap->classes) : -1;
}

static const seam_heap_class *snap_class(const class_view *cv, jobjectID id)
{
    int i = class_index(cv, id);
    return i >= 0 ? &cv->snap->classes[i] : NULL;
}

/* What the agent was told about the class; NULL when the layer has no record.
 * Records are held until the dump is built: a CLASS_UNLOAD delivered
 * meanwhile must not free what is being read. */
static const seam_class_info *class_info(class_view *cv, jobjectID id)
{
    int i = class_index(cv, id);
    if (i >= 0) {
        if (!cv->looked_up[i]) {
            cv->looked_up[i] = true;
            cv->recs[i] = classes_acquire(cv->snap->classes[i].id);
        }
        return cv->recs[i] != NULL ? cv->recs[i]->info : NULL;
    }
    /* Not in the snapshot (the backend lists every class it needs, so rare). */
    for (int k = 0; k < cv->n_extra; k++) {
        if (cv->extra[k]->info->id == id) {
            return cv->extra[k]->info;
        }
    }
    class_rec *c = classes_acquire(id);
    if (c == NULL) {
        return NULL;
    }
    if (cv->n_extra == cv->cap_extra) {
        int cap = cv->cap_extra ? cv->cap_extra * 2 : 8;
        class_rec **grown = realloc(cv->extra, (size_t)cap * sizeof *grown);
        if (grown == NULL) {
            classes_release(c);
            return NULL;
        }
        cv->extra = grown;
        cv->cap_extra = cap;
    }
    cv->extra[cv->n_extra++] = c;
    return c->info;
}

static bool class_view_init(class_view *cv, const seam_heap_snapshot *snap)
{
    memset(cv, 0, sizeof *cv);
    cv->snap = snap;
    size_t n = (size_t)snap->num_classes + 1;
    cv->recs = calloc(n, sizeof *cv->recs);
    cv->looked_up = calloc(n, sizeof *cv->looked_up);
    return cv->recs != NULL && cv->looked_up != NULL;
}

static void class_view_done(class_view *cv)
{
    if (cv->recs != NULL) {
        for (int i = 0; i < cv->snap->num_classes; i++) {
            classes_release(cv->recs[i]);
        }
    }
    for (int k = 0; k < cv->n_extra; k++) {
        classes_release(cv->extra[k]);
    }
    free(cv->extra);
    free(cv->recs);
    free(cv->looked_up);
    free(cv->by_slot);
}

/* Spreads the values that decl's CLASS_LOAD list holds over by_slot[0..n). */
static const seam_heap_field **values_by_slot(class_view *cv, jobjectID decl, jint n, const seam_heap_field *fields,
                                              jint count)
{
    if ((size_t)n > cv->by_slot_cap) {
        const seam_heap_field **grown = realloc(cv->by_slot, (size_t)n * sizeof *grown);
        if (grown == NULL) {
            return NULL;
        }
        cv->by_slot = grown;
        cv->by_slot_cap = (size_t)n;
    }
    if (n > 0) {
        memset(cv->by_slot, 0, (size_t)n * sizeof *cv->by_slot);
    }
    for (jint i = 0; i < count; i++) {
        if (fields[i].decl == decl && fields[i].slot >= 0 && fields[i].slot < n) {
            cv->by_slot[fields[i].slot] = &fields[i];
        }
    }
    return cv->by_slot;
}

/* Writes one CLASS_LOAD field list's values (instances or statics) in its
 * order; level 1 keeps only references. */
static void put_field_list(dumpbuf *w, class_view *cv, jobjectID decl, const JVMPI_Field *list, jint n,
                           const seam_heap_field *fields, jint count, int level)
{
    const seam_heap_field **slots = values_by_slot(cv, decl, n, fields, count);
    if (slots == NULL && n > 0) {
        w->failed = true;
        return;
    }
    for (jint s = 0; s < n; s++) {
        jint type = dumpbuf_type_of_signature(list[s].field_signature);
        if (level >= JVMPI_DUMP_LEVEL_2 || dumpbuf_is_reference(type)) {
            dumpbuf_field(w, type, slots[s]);
        }
    }
}

/* ---- records -------------------------------------------------------------- */

/* The element class of an array class (what OBJECT_ALLOC names for its
 * arrays): the snapshot's, else the class record's. */
static jobjectID element_class(class_view *cv, jobjectID array_class)
{
    const seam_heap_class *hc = snap_class(cv, array_class);
    if (hc != NULL && hc->element != NULL) {
        return hc->element;
    }
    const seam_class_info *info = class_info(cv, array_class);
    return info != NULL ? info->element_id : NULL;
}

static void put_class_dump(dumpbuf *w, class_view *cv, const seam_heap_object *o, int level)
{
    const seam_heap_class *hc = snap_class(cv, o->id);
    const seam_class_info *info = class_info(cv, o->id);
    seam_heap_class none;
    if (hc == NULL) {
        memset(&none, 0, sizeof none);
        none.id = o->id;
        hc = &none;
    }
    dumpbuf_u1(w, JVMPI_GC_CLASS_DUMP);
    dumpbuf_ptr(w, o->id);
    dumpbuf_ptr(w, hc->super);
    dumpbuf_ptr(w, hc->loader);
    dumpbuf_ptr(w, hc->signers);
    dumpbuf_ptr(w, hc->domain);
    dumpbuf_ptr(w, hc->name);
    dumpbuf_ptr(w, NULL); /* reserved */
    dumpbuf_u4(w, (uint32_t)hc->instance_size);
    /* As many as CLASS_LOAD announced: agents size this list by it. */
    jint n_ifaces = info != NULL ? info->num_interfaces : hc->num_interfaces;
    for (jint i = 0; i < n_ifaces; i++) {
        dumpbuf_ptr(w, i < hc->num_interfaces ? hc->interfaces[i] : NULL);
    }
    /* A constant pool count of 0, as HotSpot 5.0 wrote it: agents size this
     * record from CLASS_LOAD alone (Sun's HPROF reads each entry as an
     * index, a type and an object ID), and what JVM TI reports of a pool is
     * only the references resolved so far. */
    dumpbuf_u2(w, 0);
    if (info != NULL) {
        put_field_list(w, cv, o->id, info->statics, info->num_statics, hc->statics, hc->num_statics, level);
    }
}

/* Instance fields: the object's class's CLASS_LOAD instances, then its
 * super's, and so on up to java.lang.Object. */
static void put_instance_dump(dumpbuf *w, class_view *cv, const seam_heap_object *o, int level)
{
    dumpbuf values = {NULL, 0, 0, false};
    jobjectID k = o->class_id;
    for (int depth = 0; k != NULL && depth < MAX_CHAIN; depth++) {
        const seam_class_info *info = class_info(cv, k);
        if (info == NULL) {
            LOG_DEBUG("heap dump: class %p of object %p has no CLASS_LOAD record; its fields are left out",
                      (void *)k, (void *)o->id);
            break;
        }
        put_field_list(&values, cv, k, info->instances, info->num_instances, o->u.fields, o->count, level);
        const seam_heap_class *hc = snap_class(cv, k);
        k = hc != NULL ? hc->super : NULL;
    }
    if (values.failed) {
        w->failed = true;
    }
    dumpbuf_u1(w, JVMPI_GC_INSTANCE_DUMP);
    dumpbuf_ptr(w, o->id);
    dumpbuf_ptr(w, o->class_id);
    dumpbuf_u4(w, (uint32_t)values.len);
    if (values.len > 0) {
        dumpbuf_put(w, values.p, values.len);
    }
    free(values.p);
}

static void put_object_record(dumpbuf *w, class_view *cv, const seam_heap_object *o, int level)
{
    switch (o->kind) {
    case SEAM_HEAP_CLASS:
        put_class_dump(w, cv, o, level);
        break;
    case SEAM_HEAP_INSTANCE:
        put_instance_dump(w, cv, o, level);
        break;
    case SEAM_HEAP_OBJ_ARRAY:
        dumpbuf_u1(w, JVMPI_GC_OBJ_ARRAY_DUMP);
        dumpbuf_ptr(w, o->id);
        dumpbuf_u4(w, (uint32_t)o->count);
        dumpbuf_ptr(w, element_class(cv, o->class_id));
        for (jint i = 0; i < o->count; i++) {
            dumpbuf_ptr(w, o->u.elements != NULL ? o->u.elements[i] : NULL);
        }
        break;
    case SEAM_HEAP_PRIM_ARRAY: {
        dumpbuf_u1(w, JVMPI_GC_PRIM_ARRAY_DUMP);
        dumpbuf_ptr(w, o->id);
        dumpbuf_u4(w, (uint32_t)o->count);
        dumpbuf_u1(w, (unsigned)o->elem_type);
        if (level >= JVMPI_DUMP_LEVEL_2) {
            size_t size = dumpbuf_type_size(o->elem_type);
            const unsigned char *at = o->u.values;
            seam_heap_bits zero;
            memset(&zero, 0, sizeof zero);
            for (jint i = 0; i < o->count; i++) {
                if (at != NULL) {
                    dumpbuf_element(w, o->elem_type, at + (size_t)i * size);
                } else {
                    dumpbuf_value(w, o->elem_type, zero);
                }
            }
        }
        break;
    }
    default:
        LOG_DEBUG("heap dump: object %p of unknown kind %d left out", (void *)o->id, (int)o->kind);
        break;
    }
}

/* Level 0: what each object is, nothing more. */
static jint level0_type(const seam_heap_object *o)
{
    switch (o->kind) {
    case SEAM_HEAP_OBJ_ARRAY: return JVMPI_CLASS;
    case SEAM_HEAP_PRIM_ARRAY: return o->elem_type;
    default: return JVMPI_NORMAL_OBJECT; /* instances, and java.lang.Class objects */
    }
}

/* ---- threads and their traces -------------------------------------------- */

typedef struct {
    thread_rec **recs;
    int count;
    JVMPI_CallTrace *traces;   /* parallel to recs */
} thread_set;

static jint take_trace(void *handle, JVMPI_CallFrame **out)
{
    for (jint depth = FIRST_TRACE_DEPTH;; depth *= 4) {
        JVMPI_CallFrame *frames = calloc((size_t)depth, sizeof *frames);
        if (frames == NULL) {
            *out = NULL;
            return 0;
        }
        jint n = seam_call_trace(handle, depth, frames);
        if (n < depth || depth >= MAX_TRACE_DEPTH) {
            *out = frames;
            return n;
        }
        free(frames);
    }
}

/* One trace per live thread the agent knows, in thread start order. */
static bool threads_take(thread_set *ts)
{
    memset(ts, 0, sizeof *ts);
    /* HotSpot 5.0 took the dump with every thread stopped: none of them
     * could end before the agent had read it. */
    ts->recs = threads_snapshot_held(&ts->count);
    if (ts->recs == NULL) {
        ts->count = 0;
        return false;
    }
    ts->traces = calloc((size_t)ts->count + 1, sizeof *ts->traces);
    if (ts->traces == NULL) {
        return false;
    }
    for (int i = 0; i < ts->count; i++) {
        ts->traces[i].env_id = ts->recs[i]->info.env;
        ts->traces[i].num_frames = take_trace(ts->recs[i]->info.handle, &ts->traces[i].frames);
    }
    return true;
}

static void threads_done(thread_set *ts)
{
    for (int i = 0; i < ts->count; i++) {
        threads_stand_in_done(ts->recs[i]);
        if (ts->traces != NULL) {
            free(ts->traces[i].frames);
        }
    }
    free(ts->recs);
    free(ts->traces);
    memset(ts, 0, sizeof *ts);
}

/* The JNIEnv * and trace of a thread by its ID: false when the agent knows
 * no such thread (*trace -1 when it has no trace in this dump). */
static bool thread_of(const thread_set *ts, jobjectID id, JNIEnv **env, int *trace)
{
    *trace = -1;
    *env = NULL;
    if (id == NULL) {
        return false;
    }
    for (int i = 0; i < ts->count; i++) {
        if (ts->recs[i]->info.id == id) {
            *env = ts->recs[i]->info.env;
            *trace = ts->traces != NULL ? i : -1;
            return true;
        }
    }
    /* Started after the traces were taken. */
    thread_rec *t = threads_acquire_by_id(id);
    bool known = t != NULL && !t->internal;
    if (known) {
        *env = t->info.env;
    }
    threads_release(t);
    return known;
}

/* Frame number of a root, counted as HotSpot 5.0 counted it: the
 * outermost frame is 1, the top one the thread's number of frames.  The
 * walk's depth counts from the top: it is checked against the trace, and a
 * root whose frame the trace does not show (the thread moved in between, or
 * its trace was cut at MAX_TRACE_DEPTH) gets -1, as a root of no frame. */
static uint32_t frame_number(const thread_set *ts, int trace, const seam_heap_root *r)
{
    if (trace < 0 || r->depth < 0) {
        return (uint32_t)-1;
    }
    const JVMPI_CallTrace *t = &ts->traces[trace];
    if (r->depth < t->num_frames && t->num_frames < MAX_TRACE_DEPTH &&
        t->frames[r->depth].method_id == r->method) {
        return (uint32_t)(t->num_frames - r->depth);
    }
    LOG_DEBUG("heap dump: root %p at depth %d of thread %p: the trace differs there; frame -1", (void *)r->id,
              (int)r->depth, (void *)t->env_id);
    return (uint32_t)-1;
}

static void put_root(dumpbuf *w, const thread_set *ts, const seam_heap_root *r)
{
    JNIEnv *env = NULL;
    int trace = -1;
    switch (r->kind) {
    case JVMPI_GC_ROOT_JNI_GLOBAL:
        /* A global reference no JNI call of the program's made (the VM's
         * own, the layer's) has no ref to name: HotSpot 5.0 left the VM's
         * own out of the JNI globals.  It is a root all the same. */
        if (r->ref == NULL) {
            break;
        }
        dumpbuf_u1(w, JVMPI_GC_ROOT_JNI_GLOBAL);
        dumpbuf_ptr(w, r->id);
        dumpbuf_ptr(w, r->ref);
        return;
    case JVMPI_GC_ROOT_JNI_LOCAL:
    case JVMPI_GC_ROOT_JAVA_FRAME:
        if (thread_of(ts, r->thread, &env, &trace)) {
            dumpbuf_u1(w, (unsigned)r->kind);
            dumpbuf_ptr(w, r->id);
            dumpbuf_ptr(w, env);
            dumpbuf_u4(w, frame_number(ts, trace, r));
            return;
        }
        break;
    case JVMPI_GC_ROOT_NATIVE_STACK:
    case JVMPI_GC_ROOT_THREAD_BLOCK:
        if (thread_of(ts, r->thread, &env, &trace)) {
            dumpbuf_u1(w, (unsigned)r->kind);
            dumpbuf_ptr(w, r->id);
            dumpbuf_ptr(w, env);
            return;
        }
        break;
    case JVMPI_GC_ROOT_STICKY_CLASS:
    case JVMPI_GC_ROOT_MONITOR_USED:
    case JVMPI_GC_ROOT_UNKNOWN:
        dumpbuf_u1(w, (unsigned)r->kind);
        dumpbuf_ptr(w, r->id);
        return;
    default:
        break;
    }
    /* A root in a thread the agent was never told about (the layer's own),
     * a global reference without a ref, or of a kind without a JVMPI body:
     * still a root. */
    dumpbuf_u1(w, JVMPI_GC_ROOT_UNKNOWN);
    dumpbuf_ptr(w, r->id);
}

/* ---- whole dumps -------------------------------------------------------------- */

/* Depth of a class below java.lang.Object, so supers are dumped first. */
static int class_depth(const class_view *cv, jobjectID id)
{
    int d = 0;
    const seam_heap_class *c = snap_class(cv, id);
    while (c != NULL && c->super != NULL && d < MAX_CHAIN) {
        d++;
        c = snap_class(cv, c->super);
    }
    return d;
}

typedef struct {
    int depth;
    int pos;
} class_order;

static int by_depth(const void *a, const void *b)
{
    const class_order *x = a, *y = b;
    if (x->depth != y->depth) {
        return x->depth < y->depth ? -1 : 1;
    }
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Whether a class is an array class, as its CLASS_LOAD said. */
static bool is_array_class(class_view *cv, jobjectID id)
{
    const seam_class_info *info = class_info(cv, id);
    return info != NULL ? info->array_type != JVMPI_NORMAL_OBJECT : ids_array_type(seam_tag_from_id(id)) != 0;
}

/* Class dumps first, supers before their subclasses, so that a reader meets
 * every class before its instances; then everything else in walk order.
 * Array classes get no class dump, as in HotSpot 5.0: CLASS_LOAD gave them
 * no fields, and their arrays name their element class. */
static void put_objects(dumpbuf *w, class_view *cv, const seam_heap_snapshot *snap, int level)
{
    int n_classes = 0;
    for (int i = 0; i < snap->num_objects; i++) {
        n_classes += snap->objects[i].kind == SEAM_HEAP_CLASS && !is_array_class(cv, snap->objects[i].id);
    }
    class_order *order = calloc((size_t)n_classes + 1, sizeof *order);
    if (order == NULL) {
        w->failed = true;
        return;
    }
    int k = 0;
    for (int i = 0; i < snap->num_objects && k < n_classes; i++) {
        if (snap->objects[i].kind == SEAM_HEAP_CLASS && !is_array_class(cv, snap->objects[i].id)) {
            order[k].depth = class_depth(cv, snap->objects[i].id);
            order[k].pos = i;
            k++;
        }
    }
    qsort(order, (size_t)n_classes, sizeof *order, by_depth);
    for (int i = 0; i < n_classes && !w->failed; i++) {
        put_object_record(w, cv, &snap->objects[order[i].pos], level);
    }
    free(order);
    for (int i = 0; i < snap->num_objects && !w->failed; i++) {
        if (snap->objects[i].kind != SEAM_HEAP_CLASS) {
            put_object_record(w, cv, &snap->objects[i], level);
        }
    }
}

static bool build_heap_dump(dumpbuf *w, const seam_heap_snapshot *snap, const thread_set *ts, int level)
{
    if (level == JVMPI_DUMP_LEVEL_0) {
        for (int i = 0; i < snap->num_objects; i++) {
            dumpbuf_u1(w, (unsigned)level0_type(&snap->objects[i]));
            dumpbuf_ptr(w, snap->objects[i].id);
        }
        return !w->failed;
    }
    class_view cv;
    if (!class_view_init(&cv, snap)) {
        class_view_done(&cv);
        return false;
    }
    for (int i = 0; i < snap->num_roots; i++) {
        put_root(w, ts, &snap->roots[i]);
    }
    put_objects(w, &cv, snap, level);
    class_view_done(&cv);
    return !w->failed;
}

static bool usable(const char *call, JNIEnv **env)
{
    if (layer_phase() != LAYER_LIVE) {
        log_refused(call, "the heap can be dumped only while the VM is live (from JVM_INIT_DONE on)");
        return false;
    }
    *env = seam_current_env();
    if (*env == NULL) {
        log_refused(call, "the calling thread is not attached to the VM");
        return false;
    }
    return true;
}

jint heapdump_request_heap(void *arg)
{
    static const char call[] = "RequestEvent(HEAP_DUMP)";
    int level = JVMPI_DUMP_LEVEL_2;
    if (arg != NULL) {
        level = ((JVMPI_HeapDumpArg *)arg)->heap_dump_level;
        if (level != JVMPI_DUMP_LEVEL_0 && level != JVMPI_DUMP_LEVEL_1 && level != JVMPI_DUMP_LEVEL_2) {
            log_refused(call, "heap_dump_level %d is not JVMPI_DUMP_LEVEL_0, _1 or _2", level);
            return JVMPI_FAIL;
        }
    }
    JNIEnv *env = NULL;
    if (!usable(call, &env)) {
        return JVMPI_FAIL;
    }
    /* JVMPI sent the dump with GC disabled until NotifyEvent returned: no
     * OBJECT_FREE for an object of the dump may come before it, or while
     * the agent is still reading it. */
    gc_disable();
    seam_define_loaded_classes(env);
    /* Traces right before the walk: the frame numbers of the roots index
     * into them, and are checked against them (frame_number).  Level 0 has
     * no roots, but carries a trace for every thread too, as on HotSpot 5.0. */
    thread_set ts;
    memset(&ts, 0, sizeof ts);
    if (!threads_take(&ts)) {
        LOG_ERROR("%s: out of memory taking the threads' traces", call);
        threads_done(&ts);
        gc_enable();
        return JVMPI_FAIL;
    }
    seam_heap_snapshot snap;
    memset(&snap, 0, sizeof snap);
    seam_heap_detail detail = level == JVMPI_DUMP_LEVEL_0   ? SEAM_HEAP_IDS
                              : level == JVMPI_DUMP_LEVEL_1 ? SEAM_HEAP_REFS
                                                            : SEAM_HEAP_VALUES;
    if (!seam_heap_snapshot_take(env, detail, &snap)) {
        LOG_ERROR("%s: no heap snapshot could be taken", call);
        threads_done(&ts);
        gc_enable();
        return JVMPI_FAIL;
    }
    /* The dump names classes the walk gave IDs to and objects it tagged:
     * their CLASS_LOADs and OBJECT_ALLOCs come first. */
    dumpdefs_heap(env, &snap);
    for (int i = 0; i < ts.count; i++) {
        defs_announce_thread(env, ts.recs[i]);
    }
    dumpdefs_traces(env, ts.traces, ts.count);
    dumpbuf w = {NULL, 0, 0, false};
    bool built = build_heap_dump(&w, &snap, &ts, level);
    LOG_DEBUG("%s: level %d, %d roots, %d objects, %d classes, %zu bytes", call, level, snap.num_roots,
              snap.num_objects, snap.num_classes, w.len);
    seam_heap_snapshot_free(&snap);
    jint rc = JVMPI_FAIL;
    if (!built) {
        LOG_ERROR("%s: out of memory building the dump (%zu bytes so far)", call, w.len);
    } else {
        static char empty;
        JVMPI_Event ev;
        memset(&ev, 0, sizeof ev);
        ev.event_type = JVMPI_EVENT_HEAP_DUMP | JVMPI_REQUESTED_EVENT;
        ev.u.heap_dump.dump_level = level;
        ev.u.heap_dump.begin = w.p != NULL ? (char *)w.p : &empty;
        ev.u.heap_dump.end = ev.u.heap_dump.begin + w.len;
        ev.u.heap_dump.num_traces = ts.count;
        ev.u.heap_dump.traces = ts.count == 0 ? NULL : ts.traces;
        events_deliver(env, &ev);
        rc = JVMPI_SUCCESS;
    }
    free(w.p);
    threads_done(&ts);
    gc_enable();
    return rc;
}

jint heapdump_request_object(jobjectID id)
{
    static const char call[] = "RequestEvent(OBJECT_DUMP)";
    if (id == NULL) {
        log_refused(call, "NULL object ID");
        return JVMPI_FAIL;
    }
    JNIEnv *env = NULL;
    if (!usable(call, &env)) {
        return JVMPI_FAIL;
    }
    gc_disable();
    seam_heap_snapshot snap;
    memset(&snap, 0, sizeof snap);
    if (!seam_object_snapshot_take(env, id, &snap)) {
        /* An object that died since: its OBJECT_FREE may still be on its
         * way, so the agent asked in good faith (as for OBJECT_ALLOC). */
        if (ids_was_issued(seam_tag_from_id(id))) {
            LOG_DEBUG("%s: the object of %p is gone", call, (void *)id);
        } else {
            log_refused(call, "%p is not the ID of a live object", (void *)id);
        }
        gc_enable();
        return JVMPI_FAIL;
    }
    dumpdefs_heap(env, &snap);
    dumpbuf w = {NULL, 0, 0, false};
    bool built = false;
    if (snap.num_objects != 1 || snap.objects[0].id != id) {
        LOG_ERROR("%s: the snapshot of %p holds %d objects", call, (void *)id, snap.num_objects);
    } else {
        class_view cv;
        if (class_view_init(&cv, &snap)) {
            put_object_record(&w, &cv, &snap.objects[0], JVMPI_DUMP_LEVEL_2);
            built = !w.failed;
        }
        class_view_done(&cv);
        if (!built) {
            LOG_ERROR("%s: out of memory building the dump of %p", call, (void *)id);
        }
    }
    seam_heap_snapshot_free(&snap);
    if (built) {
        JVMPI_Event ev;
        memset(&ev, 0, sizeof ev);
        ev.event_type = JVMPI_EVENT_OBJECT_DUMP | JVMPI_REQUESTED_EVENT;
        /* Both views of the union: CDC read object_dump.data/data_len, HotSpot
         * 5.0 filled heap_dump.begin/end.  data and begin share their bytes,
         * as do data_len and dump_level. */
        ev.u.object_dump.data_len = (jint)w.len;
        ev.u.object_dump.data = (char *)w.p;
        ev.u.heap_dump.end = (char *)w.p + w.len;
        events_deliver(env, &ev);
    }
    free(w.p);
    gc_enable();
    return built ? JVMPI_SUCCESS : JVMPI_FAIL;
}
