/*
 * test_heapdump.c - HEAP_DUMP and OBJECT_DUMP as jvmpi/heapdump.c lays them
 * out, from a snapshot built by hand and handed over by the fake backend.
 *
 * Every record kind is checked byte for byte against the JVMPI
 * specification's dump format: u2/u4/u8 big-endian, IDs and
 * pointers 8 native bytes.  The expected bytes are written out record by
 * record in the tests, not computed by the code under test.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "classes.h"
#include "fake_backend.h"
#include "stderr_capture.h"
#include "gc.h"
#include "interface.h"
#include "layer.h"
#include "threads.h"

static char env_tokens[32];
#define ENV(i) ((JNIEnv *)(void *)&env_tokens[(i)])
#define ENV_MAIN ENV(0)
#define CLASS_ID(i) seam_id_from_tag(0x100000 + (int64_t)(i) * 8)
#define THREAD_ID(i) seam_id_from_tag(0x200000 + (int64_t)(i) * 8)
#define OBJ_ID(i) seam_id_from_tag(0x300000 + (int64_t)(i) * 8)
/* what the fake backend's seam_call_trace puts in frame i */
#define TRACE_METHOD(i) ((jmethodID)(uintptr_t)(0x2000 + (i)))

static JVMPI_Interface *pi;

/* ---- the recording agent --------------------------------------------------- */

#define MAX_DUMP 4096
#define MAX_TRACES 4

static struct {
    int count;
    JVMPI_Event ev;                /* the last event, as delivered */
    unsigned char bytes[MAX_DUMP]; /* its buffer, begin..end */
    size_t len;
    JNIEnv *trace_env[MAX_TRACES];
    jint trace_frames[MAX_TRACES];
    JVMPI_CallFrame frame1[MAX_TRACES];
    int gc_depth;                  /* gc_disabled_depth() inside NotifyEvent */
} got;

/* THREAD_STARTs, by thread, as the agent saw them before the dump */
static JNIEnv *started[8];
static int n_started;

static void JNICALL record_event(JVMPI_Event *ev)
{
    if (ev->event_type == JVMPI_EVENT_THREAD_START) {
        ck_assert_msg(got.count == 0, "THREAD_START after the dump");
        ck_assert_int_lt(n_started, 8);
        started[n_started++] = ev->u.thread_start.thread_env_id;
        return;
    }
    got.count++;
    got.ev = *ev;
    got.gc_depth = gc_disabled_depth();
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    const char *begin = NULL, *end = NULL;
    if (type == JVMPI_EVENT_HEAP_DUMP) {
        begin = ev->u.heap_dump.begin;
        end = ev->u.heap_dump.end;
        for (jint i = 0; i < ev->u.heap_dump.num_traces && i < MAX_TRACES; i++) {
            const JVMPI_CallTrace *t = &ev->u.heap_dump.traces[i];
            got.trace_env[i] = t->env_id;
            got.trace_frames[i] = t->num_frames;
            if (t->num_frames > 1) {
                got.frame1[i] = t->frames[1];
            }
        }
    } else if (type == JVMPI_EVENT_OBJECT_DUMP) {
        begin = ev->u.object_dump.data;
        end = begin + ev->u.object_dump.data_len;
    }
    got.len = 0;
    if (begin != NULL && end >= begin && (size_t)(end - begin) <= MAX_DUMP) {
        got.len = (size_t)(end - begin);
        memcpy(got.bytes, begin, got.len);
    }
}

/* ---- expected bytes -------------------------------------------------------- */

static unsigned char want[MAX_DUMP];
static size_t want_len;

static void w_u1(unsigned v) { want[want_len++] = (unsigned char)v; }
static void w_u2(unsigned v)
{
    w_u1(v >> 8);
    w_u1(v);
}
static void w_u4(uint32_t v)
{
    w_u1(v >> 24);
    w_u1(v >> 16);
    w_u1(v >> 8);
    w_u1(v);
}
static void w_u8(uint64_t v)
{
    w_u4((uint32_t)(v >> 32));
    w_u4((uint32_t)v);
}
static void w_ptr(const void *p)
{
    memcpy(want + want_len, &p, sizeof p);
    want_len += sizeof p;
}

static void assert_bytes(void)
{
    size_t n = got.len < want_len ? got.len : want_len;
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(got.bytes[i] == want[i], "byte %zu: got 0x%02x, expected 0x%02x", i, got.bytes[i], want[i]);
    }
    ck_assert_uint_eq(got.len, want_len);
}

/* ---- classes the agent was told about -------------------------------------- */

static JVMPI_Field *fields(const char *const *name_sig, int n)
{
    JVMPI_Field *f = calloc((size_t)n + 1, sizeof *f);
    for (int i = 0; i < n; i++) {
        f[i].field_name = strdup(name_sig[2 * i]);
        f[i].field_signature = strdup(name_sig[2 * i + 1]);
    }
    return f;
}

static void define_class(jobjectID id, const char *name, jint n_ifaces, const char *const *statics, int n_statics,
                         const char *const *instances, int n_instances, jint array_type, jobjectID element)
{
    seam_class_info *c = fake_class(id, name, 0, 0, 0);
    c->num_interfaces = n_ifaces;
    free(c->statics);
    free(c->instances);
    c->statics = fields(statics, n_statics);
    c->num_statics = n_statics;
    c->instances = fields(instances, n_instances);
    c->num_instances = n_instances;
    c->array_type = array_type;
    c->element_id = element;
    layer_class_defined(c);
}

#define C_OBJECT CLASS_ID(1)
#define C_BASE CLASS_ID(2)
#define C_NODE CLASS_ID(3)
#define C_NODES CLASS_ID(4)   /* Node[] */
#define C_INTS CLASS_ID(5)    /* int[] */
#define C_IFACE CLASS_ID(6)
#define C_STRING CLASS_ID(7)

static void define_classes(void)
{
    static const char *const base_inst[] = {"b", "I"};
    static const char *const node_stat[] = {"count", "I", "root", "LNode;", "pi", "F"};
    static const char *const node_inst[] = {"next", "LNode;", "flag", "Z", "ch", "C", "big", "J",
                                            "ratio", "D", "label", "Ljava/lang/String;", "s", "S", "by", "B"};
    define_class(C_OBJECT, "java.lang.Object", 0, NULL, 0, NULL, 0, 0, NULL);
    define_class(C_BASE, "Base", 0, NULL, 0, base_inst, 1, 0, NULL);
    define_class(C_NODE, "Node", 2, node_stat, 3, node_inst, 8, 0, NULL);
    /* the element class comes from the snapshot; the record's is the fallback */
    define_class(C_NODES, "[LNode;", 0, NULL, 0, NULL, 0, JVMPI_CLASS, C_BASE);
    define_class(C_INTS, "[I", 0, NULL, 0, NULL, 0, JVMPI_INT, NULL);
}

/* ---- the snapshot -------------------------------------------------------------- */

static seam_heap_field node1_fields[8];
static jobjectID iface_list[1];
static seam_heap_field node_statics[2];
static seam_heap_class snap_classes[5];
static seam_heap_object snap_objects[8];
static seam_heap_root snap_roots[11];
static jobjectID nodes_elements[3];
static const jint ints[2] = {1, -2};
static const jchar chars[2] = {'h', 0x20ac};
static const jdouble doubles[1] = {-2.5};

static seam_heap_bits bits_i(jint i)
{
    seam_heap_bits v;
    memset(&v, 0, sizeof v);
    v.i = i;
    return v;
}

static seam_heap_bits bits_id(jobjectID id)
{
    seam_heap_bits v;
    memset(&v, 0, sizeof v);
    v.id = id;
    return v;
}

static seam_heap_field field(jobjectID decl, jint slot, jint type, seam_heap_bits v)
{
    seam_heap_field f = {decl, slot, type, v};
    return f;
}

static void build_snapshot(void)
{
    seam_heap_bits v;
    /* node 10: values in no particular order; "label" (slot 5) has none: null */
    memset(&v, 0, sizeof v);
    v.j = 0x0102030405060708LL;
    node1_fields[0] = field(C_NODE, 3, JVMPI_LONG, v);
    node1_fields[1] = field(C_BASE, 0, JVMPI_INT, bits_i(7));
    node1_fields[2] = field(C_NODE, 0, JVMPI_CLASS, bits_id(OBJ_ID(11)));
    memset(&v, 0, sizeof v);
    v.z = JNI_TRUE;
    node1_fields[3] = field(C_NODE, 1, JVMPI_BOOLEAN, v);
    memset(&v, 0, sizeof v);
    v.c = 0x4142;
    node1_fields[4] = field(C_NODE, 2, JVMPI_CHAR, v);
    memset(&v, 0, sizeof v);
    v.d = 1.5;
    node1_fields[5] = field(C_NODE, 4, JVMPI_DOUBLE, v);
    memset(&v, 0, sizeof v);
    v.s = -2;
    node1_fields[6] = field(C_NODE, 6, JVMPI_SHORT, v);
    memset(&v, 0, sizeof v);
    v.b = -128;
    node1_fields[7] = field(C_NODE, 7, JVMPI_BYTE, v);

    /* "pi" (slot 2) has no entry: 0.0f */
    node_statics[0] = field(C_NODE, 1, JVMPI_CLASS, bits_id(OBJ_ID(10)));
    node_statics[1] = field(C_NODE, 0, JVMPI_INT, bits_i(42));

    memset(snap_classes, 0, sizeof snap_classes);
    snap_classes[0] = (seam_heap_class){.id = C_OBJECT, .instance_size = 16};
    snap_classes[1] = (seam_heap_class){.id = C_BASE, .super = C_OBJECT, .loader = OBJ_ID(50), .instance_size = 16};
    snap_classes[2] = (seam_heap_class){.id = C_NODE,
                                        .super = C_BASE,
                                        .loader = OBJ_ID(50),
                                        .signers = OBJ_ID(53),
                                        .domain = OBJ_ID(51),
                                        .name = OBJ_ID(52),
                                        .instance_size = 48,
                                        .num_interfaces = 1, /* CLASS_LOAD says 2 */
                                        .interfaces = iface_list,
                                        .num_statics = 2,
                                        .statics = node_statics};
    snap_classes[3] = (seam_heap_class){.id = C_NODES, .super = C_OBJECT, .element = C_NODE};
    snap_classes[4] = (seam_heap_class){.id = C_INTS, .super = C_OBJECT};

    iface_list[0] = C_IFACE;
    nodes_elements[0] = OBJ_ID(10);
    nodes_elements[1] = NULL;
    nodes_elements[2] = OBJ_ID(11);

    memset(snap_objects, 0, sizeof snap_objects);
    /* walk order: classes come out first in the dump, supers first */
    snap_objects[0] = (seam_heap_object){.id = OBJ_ID(10), .class_id = C_NODE, .kind = SEAM_HEAP_INSTANCE,
                                         .count = 8, .u.fields = node1_fields};
    snap_objects[1] = (seam_heap_object){.id = C_NODE, .kind = SEAM_HEAP_CLASS};
    snap_objects[2] = (seam_heap_object){.id = OBJ_ID(20), .class_id = C_NODES, .kind = SEAM_HEAP_OBJ_ARRAY,
                                         .count = 3, .u.elements = nodes_elements};
    snap_objects[3] = (seam_heap_object){.id = C_OBJECT, .kind = SEAM_HEAP_CLASS};
    snap_objects[4] = (seam_heap_object){.id = OBJ_ID(21), .class_id = C_INTS, .kind = SEAM_HEAP_PRIM_ARRAY,
                                         .count = 2, .elem_type = JVMPI_INT, .u.values = ints};
    snap_objects[5] = (seam_heap_object){.id = C_BASE, .kind = SEAM_HEAP_CLASS};
    snap_objects[6] = (seam_heap_object){.id = OBJ_ID(11), .class_id = C_NODE, .kind = SEAM_HEAP_INSTANCE};
    /* an array class: no class dump at levels 1 and 2 */
    snap_objects[7] = (seam_heap_object){.id = C_NODES, .kind = SEAM_HEAP_CLASS};

    memset(snap_roots, 0, sizeof snap_roots);
    snap_roots[0] = (seam_heap_root){.kind = JVMPI_GC_ROOT_JNI_GLOBAL, .id = OBJ_ID(10), .depth = -1,
                                     .ref = (jobject)(uintptr_t)0x5150};
    snap_roots[1] = (seam_heap_root){.kind = JVMPI_GC_ROOT_JNI_LOCAL, .id = OBJ_ID(11), .thread = THREAD_ID(0),
                                     .depth = 1, .method = TRACE_METHOD(1)};
    /* the trace has another method at depth 2: the thread moved */
    snap_roots[2] = (seam_heap_root){.kind = JVMPI_GC_ROOT_JAVA_FRAME, .id = OBJ_ID(20), .thread = THREAD_ID(0),
                                     .depth = 2, .method = TRACE_METHOD(7)};
    snap_roots[3] = (seam_heap_root){.kind = JVMPI_GC_ROOT_JAVA_FRAME, .id = OBJ_ID(21), .thread = THREAD_ID(1),
                                     .depth = 0, .method = TRACE_METHOD(0)};
    snap_roots[4] = (seam_heap_root){.kind = JVMPI_GC_ROOT_STICKY_CLASS, .id = C_OBJECT, .depth = -1};
    snap_roots[5] = (seam_heap_root){.kind = JVMPI_GC_ROOT_THREAD_BLOCK, .id = THREAD_ID(1),
                                     .thread = THREAD_ID(1), .depth = -1};
    snap_roots[6] = (seam_heap_root){.kind = JVMPI_GC_ROOT_MONITOR_USED, .id = OBJ_ID(10), .depth = -1};
    snap_roots[7] = (seam_heap_root){.kind = JVMPI_GC_ROOT_UNKNOWN, .id = OBJ_ID(11), .depth = -1};
    /* a thread the agent does not know (the layer's own): an unknown root */
    snap_roots[8] = (seam_heap_root){.kind = JVMPI_GC_ROOT_JAVA_FRAME, .id = OBJ_ID(10), .thread = THREAD_ID(9),
                                     .depth = 0, .method = TRACE_METHOD(0)};
    snap_roots[9] = (seam_heap_root){.kind = JVMPI_GC_ROOT_JAVA_FRAME, .id = OBJ_ID(11), .thread = THREAD_ID(0),
                                     .depth = -1};
    /* a global reference of the VM's own (no JNI call made it): no JNI
     * global of the program's, still a root */
    snap_roots[10] = (seam_heap_root){.kind = JVMPI_GC_ROOT_JNI_GLOBAL, .id = OBJ_ID(20), .depth = -1};

    fake.heap_snapshot = (seam_heap_snapshot){.num_roots = 11,
                                              .roots = snap_roots,
                                              .num_objects = 8,
                                              .objects = snap_objects,
                                              .num_classes = 5,
                                              .classes = snap_classes};
}

/* ---- expected records ------------------------------------------------------------ */

static void want_roots(void)
{
    w_u1(JVMPI_GC_ROOT_JNI_GLOBAL);
    w_ptr(OBJ_ID(10));
    w_ptr((jobject)(uintptr_t)0x5150);
    /* frames counted from the outermost (1) to the top (3 here) */
    w_u1(JVMPI_GC_ROOT_JNI_LOCAL);
    w_ptr(OBJ_ID(11));
    w_ptr(ENV_MAIN);
    w_u4(2);
    w_u1(JVMPI_GC_ROOT_JAVA_FRAME);
    w_ptr(OBJ_ID(20));
    w_ptr(ENV_MAIN);
    w_u4(0xffffffffu);
    w_u1(JVMPI_GC_ROOT_JAVA_FRAME);
    w_ptr(OBJ_ID(21));
    w_ptr(ENV(1));
    w_u4(3);
    w_u1(JVMPI_GC_ROOT_STICKY_CLASS);
    w_ptr(C_OBJECT);
    w_u1(JVMPI_GC_ROOT_THREAD_BLOCK);
    w_ptr(THREAD_ID(1));
    w_ptr(ENV(1));
    w_u1(JVMPI_GC_ROOT_MONITOR_USED);
    w_ptr(OBJ_ID(10));
    w_u1(JVMPI_GC_ROOT_UNKNOWN);
    w_ptr(OBJ_ID(11));
    w_u1(JVMPI_GC_ROOT_UNKNOWN);
    w_ptr(OBJ_ID(10));
    w_u1(JVMPI_GC_ROOT_JAVA_FRAME);
    w_ptr(OBJ_ID(11));
    w_ptr(ENV_MAIN);
    w_u4(0xffffffffu);
    w_u1(JVMPI_GC_ROOT_UNKNOWN);
    w_ptr(OBJ_ID(20));
}

static void want_class_head(jobjectID id, jobjectID super, jobjectID loader, jobjectID signers, jobjectID domain,
                            jobjectID name, uint32_t size)
{
    w_u1(JVMPI_GC_CLASS_DUMP);
    w_ptr(id);
    w_ptr(super);
    w_ptr(loader);
    w_ptr(signers);
    w_ptr(domain);
    w_ptr(name);
    w_ptr(NULL); /* reserved */
    w_u4(size);
}

static void want_class_object(void)
{
    want_class_head(C_OBJECT, NULL, NULL, NULL, NULL, NULL, 16);
    w_u2(0); /* empty constant pool; no interfaces, no statics */
}

static void want_class_base(void)
{
    want_class_head(C_BASE, C_OBJECT, OBJ_ID(50), NULL, NULL, NULL, 16);
    w_u2(0);
}

static void want_class_node(int level)
{
    want_class_head(C_NODE, C_BASE, OBJ_ID(50), OBJ_ID(53), OBJ_ID(51), OBJ_ID(52), 48);
    w_ptr(C_IFACE);
    w_ptr(NULL); /* CLASS_LOAD counts 2 interfaces */
    w_u2(0);     /* no constant pool entries, as in HotSpot 5.0 */
    /* statics in CLASS_LOAD order: count I, root LNode;, pi F */
    if (level == 2) {
        w_u4(42);
    }
    w_ptr(OBJ_ID(10));
    if (level == 2) {
        w_u4(0);
    }
}

static void want_node10(int level)
{
    w_u1(JVMPI_GC_INSTANCE_DUMP);
    w_ptr(OBJ_ID(10));
    w_ptr(C_NODE);
    if (level == 2) {
        /* Node: next, flag, ch, big, ratio, label, s, by; then Base: b */
        w_u4(8 + 1 + 2 + 8 + 8 + 8 + 2 + 1 + 4);
        w_ptr(OBJ_ID(11));
        w_u1(1);
        w_u2(0x4142);
        w_u8(0x0102030405060708ULL);
        w_u8(0x3ff8000000000000ULL); /* 1.5 */
        w_ptr(NULL);
        w_u2(0xfffe);
        w_u1(0x80);
        w_u4(7);
    } else {
        w_u4(16);
        w_ptr(OBJ_ID(11));
        w_ptr(NULL);
    }
}

static void want_node11(int level)
{
    w_u1(JVMPI_GC_INSTANCE_DUMP);
    w_ptr(OBJ_ID(11));
    w_ptr(C_NODE);
    if (level == 2) {
        w_u4(8 + 1 + 2 + 8 + 8 + 8 + 2 + 1 + 4);
        w_ptr(NULL);
        w_u1(0);
        w_u2(0);
        w_u8(0);
        w_u8(0);
        w_ptr(NULL);
        w_u2(0);
        w_u1(0);
        w_u4(0);
    } else {
        w_u4(16);
        w_ptr(NULL);
        w_ptr(NULL);
    }
}

static void want_nodes20(void)
{
    w_u1(JVMPI_GC_OBJ_ARRAY_DUMP);
    w_ptr(OBJ_ID(20));
    w_u4(3);
    w_ptr(C_NODE);
    w_ptr(OBJ_ID(10));
    w_ptr(NULL);
    w_ptr(OBJ_ID(11));
}

static void want_ints21(int level)
{
    w_u1(JVMPI_GC_PRIM_ARRAY_DUMP);
    w_ptr(OBJ_ID(21));
    w_u4(2);
    w_u1(JVMPI_INT);
    if (level == 2) {
        w_u4(1);
        w_u4(0xfffffffeu);
    }
}

static void want_heap_dump(int level)
{
    want_len = 0;
    want_roots();
    want_class_object();
    want_class_base();
    want_class_node(level);
    want_node10(level);
    want_nodes20();
    want_ints21(level);
    want_node11(level);
}

/* ---- fixture ------------------------------------------------------------------- */

typedef struct {
    JNIEnv *env;
    jobjectID id;
    const char *name;
} thread_job;

static void *thread_main(void *arg)
{
    thread_job *j = arg;
    fake_thread(j->env, j->id, j->name);
    return NULL;
}

/* Registers a thread from a thread of its own, as the backend does. */
static void start_thread(JNIEnv *env, jobjectID id, const char *name)
{
    thread_job j = {env, id, name};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, thread_main, &j), 0);
    pthread_join(th, NULL);
}

static void setup(void)
{
    unsetenv("JVMPI_LAYER_OPTIONS");
    layer_reset();
    fake_reset();
    ck_assert_int_eq(layer_onload(NULL, NULL), JNI_OK);
    pi = interface_table();
    pi->NotifyEvent = record_event;
    fake_set_thread_env(ENV_MAIN);
    fake_thread(ENV_MAIN, THREAD_ID(0), "main");
    start_thread(ENV(1), THREAD_ID(1), "worker");
    layer_vm_init(ENV_MAIN);
    ck_assert(layer_is_live());
    fake.trace_frames = 3;
    define_classes();
    build_snapshot();
    memset(&got, 0, sizeof got);
    n_started = 0;
}

static void teardown(void) { layer_reset(); }

static void assert_heap_event(int level)
{
    ck_assert_int_eq(got.count, 1);
    ck_assert_int_eq(got.ev.event_type, JVMPI_EVENT_HEAP_DUMP | JVMPI_REQUESTED_EVENT);
    ck_assert_ptr_eq(got.ev.env_id, ENV_MAIN);
    ck_assert_int_eq(got.ev.u.heap_dump.dump_level, level);
    /* what follows the heap_dump member is zero */
    const unsigned char *raw = (const unsigned char *)&got.ev;
    for (size_t i = offsetof(JVMPI_Event, u) + 40; i < sizeof got.ev; i++) {
        ck_assert_msg(raw[i] == 0, "event byte %zu is not zero", i);
    }
    /* the event went out with GC disabled, enabled again after */
    ck_assert_int_eq(got.gc_depth, 1);
    ck_assert_int_eq(gc_disabled_depth(), 0);
    ck_assert_int_eq(fake.heap_snapshot_calls, 1);
    ck_assert_int_eq(fake.object_snapshot_calls, 0);
    ck_assert_int_eq(fake.heap_snapshot_frees, 1);
    ck_assert_int_ge(fake.define_loaded_before_snapshot, 1);
}

/* ---- HEAP_DUMP ------------------------------------------------------------------ */

START_TEST(test_heap_dump_level2)
{
    JVMPI_HeapDumpArg arg = {JVMPI_DUMP_LEVEL_2};
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg), JVMPI_SUCCESS);
    assert_heap_event(2);
    ck_assert_int_eq(fake.heap_snapshot_detail, SEAM_HEAP_VALUES);
    want_heap_dump(2);
    assert_bytes();
    /* one trace per thread, in start order; frame numbers index into them */
    ck_assert_int_eq(got.ev.u.heap_dump.num_traces, 2);
    ck_assert_ptr_eq(got.trace_env[0], ENV_MAIN);
    ck_assert_ptr_eq(got.trace_env[1], ENV(1));
    ck_assert_int_eq(got.trace_frames[0], 3);
    ck_assert_int_eq(got.trace_frames[1], 3);
    ck_assert_ptr_eq(got.frame1[0].method_id, TRACE_METHOD(1));
    ck_assert_int_eq(got.frame1[0].lineno, 101);
}
END_TEST

/* A thread recorded and not yet announced (a virtual thread on its carrier
 * between its record and its THREAD_START) has a trace in the dump: its
 * THREAD_START comes first, once. */
START_TEST(test_heap_dump_announces_its_threads)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL), JVMPI_SUCCESS);
    thread_rec *t = fake_unannounced_thread(ENV(3), THREAD_ID(3), "just started");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(got.count, 1);
    jint n = got.ev.u.heap_dump.num_traces;
    ck_assert_int_eq(n, 3);
    for (jint i = 0; i < n; i++) {
        int told = 0;
        for (int k = 0; k < n_started; k++) {
            told += started[k] == got.trace_env[i];
        }
        ck_assert_msg(told == 1, "trace %d names thread %p, told of it %d times before the dump", (int)i,
                      (void *)got.trace_env[i], told);
    }
    threads_release(t);
}
END_TEST

/* A thread named by a dump that ends while the agent reads the dump: its
 * THREAD_END waits until the dump's NotifyEvent has returned (HotSpot 5.0
 * took the dump with every thread stopped). */
static _Atomic int ends_seen;
static _Atomic int ends_during_dump;

static void *end_worker(void *arg)
{
    (void)arg;
    fake_set_thread_env(ENV(1));
    layer_thread_ended(ENV(1));
    return NULL;
}

static pthread_t ender;

static void JNICALL dump_while_ending(JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    if (type == JVMPI_EVENT_THREAD_END) {
        ends_seen++;
    } else if (type == JVMPI_EVENT_HEAP_DUMP) {
        ck_assert_int_eq(pthread_create(&ender, NULL, end_worker, NULL), 0);
        struct timespec pause = {0, 200 * 1000 * 1000};
        nanosleep(&pause, NULL);
        ends_during_dump = ends_seen;
    }
}

START_TEST(test_heap_dump_holds_back_thread_ends)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_THREAD_END, NULL), JVMPI_SUCCESS);
    pi->NotifyEvent = dump_while_ending;
    ends_seen = ends_during_dump = 0;
    JVMPI_HeapDumpArg arg = {JVMPI_DUMP_LEVEL_2};
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg), JVMPI_SUCCESS);
    pthread_join(ender, NULL);
    ck_assert_msg(ends_during_dump == 0, "THREAD_END of a dumped thread came while the agent read the dump");
    ck_assert_int_eq(ends_seen, 1);
}
END_TEST

START_TEST(test_heap_dump_null_arg_is_level2)
{
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, NULL), JVMPI_SUCCESS);
    assert_heap_event(2);
    want_heap_dump(2);
    assert_bytes();
}
END_TEST

START_TEST(test_heap_dump_level1)
{
    JVMPI_HeapDumpArg arg = {JVMPI_DUMP_LEVEL_1};
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg), JVMPI_SUCCESS);
    assert_heap_event(1);
    ck_assert_int_eq(fake.heap_snapshot_detail, SEAM_HEAP_REFS);
    want_heap_dump(1);
    assert_bytes();
    ck_assert_int_eq(got.ev.u.heap_dump.num_traces, 2);
}
END_TEST

START_TEST(test_heap_dump_level0)
{
    JVMPI_HeapDumpArg arg = {JVMPI_DUMP_LEVEL_0};
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg), JVMPI_SUCCESS);
    assert_heap_event(0);
    ck_assert_int_eq(fake.heap_snapshot_detail, SEAM_HEAP_IDS);
    /* a trace for every thread, as at the other levels (HotSpot 5.0) */
    ck_assert_int_eq(got.ev.u.heap_dump.num_traces, 2);
    ck_assert_ptr_nonnull(got.ev.u.heap_dump.traces);
    /* [ty][id] per object, in walk order; class objects are plain objects */
    want_len = 0;
    w_u1(JVMPI_NORMAL_OBJECT);
    w_ptr(OBJ_ID(10));
    w_u1(JVMPI_NORMAL_OBJECT);
    w_ptr(C_NODE);
    w_u1(JVMPI_CLASS);
    w_ptr(OBJ_ID(20));
    w_u1(JVMPI_NORMAL_OBJECT);
    w_ptr(C_OBJECT);
    w_u1(JVMPI_INT);
    w_ptr(OBJ_ID(21));
    w_u1(JVMPI_NORMAL_OBJECT);
    w_ptr(C_BASE);
    w_u1(JVMPI_NORMAL_OBJECT);
    w_ptr(OBJ_ID(11));
    w_u1(JVMPI_NORMAL_OBJECT);
    w_ptr(C_NODES);
    assert_bytes();
}
END_TEST

/* Every primitive element type, big-endian, packed native values in. */
START_TEST(test_heap_dump_primitive_arrays)
{
    static const jboolean zs[2] = {1, 0};
    static const jbyte bs[2] = {-1, 5};
    static const jshort ss[1] = {0x1234};
    static const jlong js[1] = {-2};
    static const jfloat fs[1] = {-0.5f};
    static seam_heap_object objs[7];
    objs[0] = (seam_heap_object){.id = OBJ_ID(1), .kind = SEAM_HEAP_PRIM_ARRAY, .count = 2,
                                 .elem_type = JVMPI_BOOLEAN, .u.values = zs};
    objs[1] = (seam_heap_object){.id = OBJ_ID(2), .kind = SEAM_HEAP_PRIM_ARRAY, .count = 2,
                                 .elem_type = JVMPI_BYTE, .u.values = bs};
    objs[2] = (seam_heap_object){.id = OBJ_ID(3), .kind = SEAM_HEAP_PRIM_ARRAY, .count = 2,
                                 .elem_type = JVMPI_CHAR, .u.values = chars};
    objs[3] = (seam_heap_object){.id = OBJ_ID(4), .kind = SEAM_HEAP_PRIM_ARRAY, .count = 1,
                                 .elem_type = JVMPI_SHORT, .u.values = ss};
    objs[4] = (seam_heap_object){.id = OBJ_ID(5), .kind = SEAM_HEAP_PRIM_ARRAY, .count = 1,
                                 .elem_type = JVMPI_LONG, .u.values = js};
    objs[5] = (seam_heap_object){.id = OBJ_ID(6), .kind = SEAM_HEAP_PRIM_ARRAY, .count = 1,
                                 .elem_type = JVMPI_FLOAT, .u.values = fs};
    objs[6] = (seam_heap_object){.id = OBJ_ID(7), .kind = SEAM_HEAP_PRIM_ARRAY, .count = 1,
                                 .elem_type = JVMPI_DOUBLE, .u.values = doubles};
    fake.heap_snapshot = (seam_heap_snapshot){.num_objects = 7, .objects = objs};
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, NULL), JVMPI_SUCCESS);
    want_len = 0;
    static const struct {
        int id, n, type;
    } heads[7] = {{1, 2, JVMPI_BOOLEAN}, {2, 2, JVMPI_BYTE}, {3, 2, JVMPI_CHAR}, {4, 1, JVMPI_SHORT},
                  {5, 1, JVMPI_LONG},    {6, 1, JVMPI_FLOAT}, {7, 1, JVMPI_DOUBLE}};
    for (int i = 0; i < 7; i++) {
        w_u1(JVMPI_GC_PRIM_ARRAY_DUMP);
        w_ptr(OBJ_ID(heads[i].id));
        w_u4((uint32_t)heads[i].n);
        w_u1((unsigned)heads[i].type);
        switch (i) {
        case 0: w_u1(1); w_u1(0); break;
        case 1: w_u1(0xff); w_u1(5); break;
        case 2: w_u2('h'); w_u2(0x20ac); break;
        case 3: w_u2(0x1234); break;
        case 4: w_u8(0xfffffffffffffffeULL); break;
        case 5: w_u4(0xbf000000u); break;
        default: w_u8(0xc004000000000000ULL); break;
        }
    }
    assert_bytes();
    /* level 1: the same records without contents */
    JVMPI_HeapDumpArg arg = {JVMPI_DUMP_LEVEL_1};
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg), JVMPI_SUCCESS);
    want_len = 0;
    for (int i = 0; i < 7; i++) {
        w_u1(JVMPI_GC_PRIM_ARRAY_DUMP);
        w_ptr(OBJ_ID(heads[i].id));
        w_u4((uint32_t)heads[i].n);
        w_u1((unsigned)heads[i].type);
    }
    assert_bytes();
}
END_TEST

START_TEST(test_heap_dump_empty_heap)
{
    fake.heap_snapshot = (seam_heap_snapshot){0};
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(got.count, 1);
    ck_assert_ptr_nonnull(got.ev.u.heap_dump.begin);
    ck_assert_ptr_eq(got.ev.u.heap_dump.end, got.ev.u.heap_dump.begin);
}
END_TEST

START_TEST(test_heap_dump_bad_requests)
{
    JVMPI_HeapDumpArg bad = {3};
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &bad), JVMPI_FAIL);
    bad.heap_dump_level = -1;
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &bad), JVMPI_FAIL);
    ck_assert_int_eq(fake.heap_snapshot_calls, 0);
    /* no snapshot: no event, and GC is enabled again */
    fake.heap_snapshot_fails = true;
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, NULL), JVMPI_FAIL);
    ck_assert_int_eq(fake.heap_snapshot_calls, 1);
    ck_assert_int_eq(got.count, 0);
    ck_assert_int_eq(gc_disabled_depth(), 0);
    /* HEAP_DUMP and OBJECT_DUMP are RequestEvent only */
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_HEAP_DUMP, NULL), JVMPI_NOT_AVAILABLE);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_OBJECT_DUMP, NULL), JVMPI_NOT_AVAILABLE);
}
END_TEST

START_TEST(test_heap_dump_before_live)
{
    layer_reset();
    fake_reset();
    ck_assert_int_eq(layer_onload(NULL, NULL), JNI_OK);
    pi = interface_table();
    pi->NotifyEvent = record_event;
    fake_set_thread_env(ENV_MAIN);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, NULL), JVMPI_FAIL);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, OBJ_ID(10)), JVMPI_FAIL);
    ck_assert_int_eq(fake.heap_snapshot_calls, 0);
    ck_assert_int_eq(fake.object_snapshot_calls, 0);
    ck_assert_int_eq(got.count, 0);
}
END_TEST

/* ---- OBJECT_DUMP --------------------------------------------------------------------- */

static void object_snapshot(const seam_heap_object *o)
{
    static seam_heap_object one;
    one = *o;
    fake.heap_snapshot.num_roots = 0;
    fake.heap_snapshot.roots = NULL;
    fake.heap_snapshot.num_objects = 1;
    fake.heap_snapshot.objects = &one;
}

static void assert_object_event(jobjectID id)
{
    ck_assert_int_eq(got.count, 1);
    ck_assert_int_eq(got.ev.event_type, JVMPI_EVENT_OBJECT_DUMP | JVMPI_REQUESTED_EVENT);
    ck_assert_ptr_eq(got.ev.env_id, ENV_MAIN);
    /* That object alone, never a walk of the heap: HotSpot 5.0's cost was
     * the object's, whatever the heap's. */
    ck_assert_int_eq(fake.object_snapshot_calls, 1);
    ck_assert_ptr_eq(fake.object_snapshot_id, id);
    ck_assert_int_eq(fake.heap_snapshot_calls, 0);
    ck_assert_int_eq(fake.heap_snapshot_frees, 1);
    /* both views of the union */
    ck_assert_int_eq(got.ev.u.object_dump.data_len, (jint)want_len);
    ck_assert_ptr_eq(got.ev.u.heap_dump.begin, got.ev.u.object_dump.data);
    ck_assert_ptr_eq(got.ev.u.heap_dump.end, got.ev.u.object_dump.data + want_len);
    ck_assert_int_eq(got.ev.u.heap_dump.num_traces, 0);
    ck_assert_ptr_eq(got.ev.u.heap_dump.traces, NULL);
    ck_assert_int_eq(got.gc_depth, 1);
    ck_assert_int_eq(gc_disabled_depth(), 0);
    assert_bytes();
}

START_TEST(test_object_dump_instance)
{
    object_snapshot(&snap_objects[0]);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, OBJ_ID(10)), JVMPI_SUCCESS);
    want_len = 0;
    want_node10(2);
    assert_object_event(OBJ_ID(10));
}
END_TEST

START_TEST(test_object_dump_class)
{
    object_snapshot(&snap_objects[1]);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, C_NODE), JVMPI_SUCCESS);
    want_len = 0;
    want_class_node(2);
    assert_object_event(C_NODE);
}
END_TEST

/* An array class asked for by itself: its class dump, sized by its
 * CLASS_LOAD (no interfaces, no statics). */
START_TEST(test_object_dump_array_class)
{
    object_snapshot(&snap_objects[7]);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, C_NODES), JVMPI_SUCCESS);
    want_len = 0;
    want_class_head(C_NODES, C_OBJECT, NULL, NULL, NULL, NULL, 0);
    w_u2(0);
    assert_object_event(C_NODES);
}
END_TEST

START_TEST(test_object_dump_arrays)
{
    object_snapshot(&snap_objects[2]);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, OBJ_ID(20)), JVMPI_SUCCESS);
    want_len = 0;
    want_nodes20();
    assert_object_event(OBJ_ID(20));

    memset(&got, 0, sizeof got);
    fake.heap_snapshot_frees = 0;
    fake.object_snapshot_calls = 0;
    object_snapshot(&snap_objects[4]);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, OBJ_ID(21)), JVMPI_SUCCESS);
    want_len = 0;
    want_ints21(2);
    assert_object_event(OBJ_ID(21));
}
END_TEST

START_TEST(test_object_dump_unknown)
{
    fake.heap_snapshot_fails = true;
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, OBJ_ID(99)), JVMPI_FAIL);
    ck_assert_ptr_eq(fake.object_snapshot_id, OBJ_ID(99));
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, NULL), JVMPI_FAIL);
    ck_assert_int_eq(fake.object_snapshot_calls, 1);
    ck_assert_int_eq(fake.heap_snapshot_calls, 0);
    ck_assert_int_eq(got.count, 0);
    ck_assert_int_eq(gc_disabled_depth(), 0);
}
END_TEST

/* An ID the layer gave to an object that has died since (its OBJECT_FREE
 * may still be on its way) fails without a line; a made-up one is an error. */
START_TEST(test_object_dump_gone)
{
    fake.heap_snapshot_fails = true;
    jobjectID gone = seam_id_from_tag(ids_next_object(16, seam_tag_from_id(C_NODE)));
    stderr_capture c;
    stderr_capture_begin(&c);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, gone), JVMPI_FAIL);
    stderr_capture_end(&c);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer:"), 0);
    stderr_capture_begin(&c);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, OBJ_ID(99)), JVMPI_FAIL);
    stderr_capture_end(&c);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error:"), 1);
    ck_assert_int_eq(got.count, 0);
}
END_TEST

/* Sun's HPROF asks, inside its HEAP_DUMP handler, for the OBJECT_DUMP of
 * each Class object whose superclass it has not learnt: with the dump's GC
 * disabled and its threads held, each is answered at once, from the object
 * alone, without another walk of the heap. */
static struct {
    int heap_dumps, object_dumps;
    jint rc;
    int walks_inside;      /* heap walks when the nested request returned */
    int gc_depth_inside;   /* gc_disabled_depth() in the OBJECT_DUMP handler */
} nested;

static void JNICALL dump_in_handler(JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    if (type == JVMPI_EVENT_HEAP_DUMP) {
        nested.heap_dumps++;
        object_snapshot(&snap_objects[1]);
        nested.rc = pi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, C_NODE);
        nested.walks_inside = fake.heap_snapshot_calls;
    } else if (type == JVMPI_EVENT_OBJECT_DUMP) {
        nested.object_dumps++;
        nested.gc_depth_inside = gc_disabled_depth();
        record_event(ev);
    }
}

START_TEST(test_object_dump_in_heap_dump_handler)
{
    memset(&nested, 0, sizeof nested);
    pi->NotifyEvent = dump_in_handler;
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(nested.heap_dumps, 1);
    ck_assert_int_eq(nested.object_dumps, 1);
    ck_assert_int_eq(nested.rc, JVMPI_SUCCESS);
    ck_assert_int_eq(nested.walks_inside, 1);
    ck_assert_int_eq(fake.heap_snapshot_calls, 1);
    ck_assert_int_eq(fake.object_snapshot_calls, 1);
    ck_assert_ptr_eq(fake.object_snapshot_id, C_NODE);
    ck_assert_int_eq(fake.heap_snapshot_frees, 2);
    ck_assert_int_eq(nested.gc_depth_inside, 2);
    ck_assert_int_eq(gc_disabled_depth(), 0);
    ck_assert_int_eq(got.ev.event_type, JVMPI_EVENT_OBJECT_DUMP | JVMPI_REQUESTED_EVENT);
    want_len = 0;
    want_class_node(2);
    assert_bytes();
}
END_TEST

static Suite *heapdump_suite(void)
{
    Suite *s = suite_create("heapdump");
    TCase *tc = tcase_create("heap_dump");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_heap_dump_level2);
    tcase_add_test(tc, test_heap_dump_null_arg_is_level2);
    tcase_add_test(tc, test_heap_dump_announces_its_threads);
    tcase_add_test(tc, test_heap_dump_holds_back_thread_ends);
    tcase_add_test(tc, test_heap_dump_level1);
    tcase_add_test(tc, test_heap_dump_level0);
    tcase_add_test(tc, test_heap_dump_primitive_arrays);
    tcase_add_test(tc, test_heap_dump_empty_heap);
    tcase_add_test(tc, test_heap_dump_bad_requests);
    tcase_add_test(tc, test_heap_dump_before_live);
    suite_add_tcase(s, tc);

    tc = tcase_create("object_dump");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_object_dump_instance);
    tcase_add_test(tc, test_object_dump_class);
    tcase_add_test(tc, test_object_dump_arrays);
    tcase_add_test(tc, test_object_dump_array_class);
    tcase_add_test(tc, test_object_dump_unknown);
    tcase_add_test(tc, test_object_dump_gone);
    tcase_add_test(tc, test_object_dump_in_heap_dump_handler);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(heapdump_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
