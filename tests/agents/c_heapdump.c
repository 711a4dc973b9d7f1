/*
 * c_heapdump - HEAP_DUMP (levels 0, 1, 2 and NULL) and OBJECT_DUMP, read
 * byte by byte with dump_reader.h and cross-checked against the known object
 * graph of tests/java/C_HeapGraph.java.
 *
 * Options (comma separated): out=FILE (results), alloc=1|0 (enable
 * OBJECT_ALLOC, default 1: then most IDs are known before a dump; with 0
 * every object ID must resolve through RequestEvent), sample=N (IDs
 * re-requested per dump besides the graph, default 300), cap=N (unknown
 * object IDs resolved per dump, default 1000).
 *
 * The program loads this library a second time through System.load (same
 * file, same copy in the process) and calls its JNI natives, so every dump is
 * requested at a known point on a known thread:
 *  - reg(key, o): the object's jobjectID (jobject2jobjectID) under key K_*;
 *  - makeGlobal(o): a JNI global ref, the object's only referent;
 *  - dump(level): RequestEvent(HEAP_DUMP); the handler walks every byte and
 *    checks traces, roots, the graph's values and references, and that every
 *    ID met is known or resolves through RequestEvent;
 *  - dumpObject(key, o): RequestEvent(OBJECT_DUMP) must give the very bytes
 *    of that object's record in the last level 2 heap dump;
 *  - badLevel(level): HEAP_DUMP with an undefined level is refused;
 *  - finish(): the summary line "c_heapdump: finished, N checks passed, M
 *    failed".
 * At load time the reader is first checked on hand-built buffers (a
 * self-test), so a reader bug shows as such and not as a layer bug.
 * Instance dumps the reader cannot check (class without CLASS_LOAD) fail the
 * dump but are skipped by their own byte count, so the rest is still read;
 * finish() names the classes of such puzzling IDs through JNI ("NOTE" lines).
 */
#include "a_common.h"
#include "dump_reader.h"

/* ---- the known graph: keys and values as in C_HeapGraph.java ---- */
enum {
    K_SUB, K_STR, K_OBJARR, K_NODEA, K_NODEB, K_MARKERS, K_MROW0, K_MROW1, K_M1, K_M2,
    K_ZARR, K_BARR, K_CARR, K_SARR, K_IARR, K_JARR, K_FARR, K_DARR, K_GLOBAL, K_LOCAL,
    K_SUBCLASS, K_BASE, K_COUNT
};
static const char *const key_name[K_COUNT] = {
    "sub", "string", "Object[]", "nodeA", "nodeB", "CHgMarker[][]", "CHgMarker[] row0", "CHgMarker[] row1",
    "marker1", "marker2", "boolean[]", "byte[]", "char[]", "short[]", "int[]", "long[]", "float[]", "double[]",
    "global-ref'd marker", "frame-local marker", "CHgSub.class", "base",
};

#define KNULL (-1) /* a null reference */

typedef struct {
    const char *decl; /* declaring class (instance fields) */
    const char *name;
    char sig;         /* 'L' for references */
    uint64_t bits;    /* primitives */
    int key;          /* references: K_* or KNULL */
} fexp;

static const fexp sub_fields[] = {
    {"CHgSub", "z", 'Z', 1, 0},
    {"CHgSub", "b", 'B', 0xA5, 0},
    {"CHgSub", "c", 'C', 'Q', 0},
    {"CHgSub", "s", 'S', 0x5A5A, 0},
    {"CHgSub", "i", 'I', 0x12345678, 0},
    {"CHgSub", "j", 'J', 0x1122334455667788ULL, 0},
    {"CHgSub", "f", 'F', 0x3FC00000, 0},          /* 1.5f */
    {"CHgSub", "d", 'D', 0xC002000000000000ULL, 0}, /* -2.25 */
    {"CHgSub", "refStr", 'L', 0, K_STR},
    {"CHgSub", "refArr", 'L', 0, K_OBJARR},
    {"CHgSub", "refNode", 'L', 0, K_NODEA},
    {"CHgSub", "refMarkers", 'L', 0, K_MARKERS},
    {"CHgBase", "i", 'I', 0x0B0B0B0B, 0}, /* shadowed by CHgSub.i */
    {"CHgBase", "baseShort", 'S', 0xCAFE, 0},
    {"CHgBase", "baseRef", 'L', 0, K_IARR},
    {"CHgBase", "baseNull", 'L', 0, KNULL},
    {"CHgBase", "baseLong", 'J', 0xFEFDFCFBFAF9F8F8ULL, 0}, /* -0x0102030405060708L */
};
static const fexp base_fields[] = {
    {"CHgBase", "i", 'I', 0x0B0B0B0B, 0},
    {"CHgBase", "baseShort", 'S', 0xCAFE, 0},
    {"CHgBase", "baseRef", 'L', 0, KNULL},
    {"CHgBase", "baseNull", 'L', 0, KNULL},
    {"CHgBase", "baseLong", 'J', 0xFEFDFCFBFAF9F8F8ULL, 0},
};
static const fexp nodea_fields[] = {{"CHgNode", "val", 'I', 1001, 0}, {"CHgNode", "next", 'L', 0, K_NODEB}};
static const fexp nodeb_fields[] = {{"CHgNode", "val", 'I', 1002, 0}, {"CHgNode", "next", 'L', 0, K_NODEA}};
static const fexp m1_fields[] = {{"CHgMarker", "id", 'I', 1, 0}};
static const fexp m2_fields[] = {{"CHgMarker", "id", 'I', 2, 0}};
static const fexp global_fields[] = {{"CHgMarker", "id", 'I', 77, 0}};
static const fexp local_fields[] = {{"CHgMarker", "id", 'I', 88, 0}};
static const fexp sub_statics[] = {
    {NULL, "sZ", 'Z', 1, 0},
    {NULL, "sB", 'B', 0x81, 0},
    {NULL, "sC", 'C', 'W', 0},
    {NULL, "sS", 'S', 0x7ABC, 0},
    {NULL, "sI", 'I', 0x76543210, 0},
    {NULL, "sJ", 'J', 0x0123456789ABCDEFULL, 0},
    {NULL, "sF", 'F', 0xBF400000, 0},          /* -0.75f */
    {NULL, "sD", 'D', 0x3FE0000000000000ULL, 0}, /* 0.5 */
    {NULL, "sRef", 'L', 0, K_NODEB},
    {NULL, "sNull", 'L', 0, KNULL},
};
static const fexp main_statics[] = {
    {NULL, "SUB", 'L', 0, K_SUB},       {NULL, "BASE", 'L', 0, K_BASE},  {NULL, "STR", 'L', 0, K_STR},
    {NULL, "OBJS", 'L', 0, K_OBJARR},   {NULL, "NODE_A", 'L', 0, K_NODEA}, {NULL, "MARKERS", 'L', 0, K_MARKERS},
    {NULL, "ZA", 'L', 0, K_ZARR},       {NULL, "BA", 'L', 0, K_BARR},    {NULL, "CA", 'L', 0, K_CARR},
    {NULL, "SA", 'L', 0, K_SARR},       {NULL, "IA", 'L', 0, K_IARR},    {NULL, "JA", 'L', 0, K_JARR},
    {NULL, "FA", 'L', 0, K_FARR},       {NULL, "DA", 'L', 0, K_DARR},    {NULL, "K_BASE", 'I', 21, 0},
};
static const int objarr_elems[] = {K_STR, K_NODEA, KNULL, K_IARR, K_SUB};
static const int markers_elems[] = {K_MROW0, K_MROW1};
static const int mrow0_elems[] = {K_M1, KNULL};
static const int mrow1_elems[] = {K_M2};
static const uint64_t z_vals[] = {1, 0, 1};
static const uint64_t b_vals[] = {0x01, 0xFE, 0x7F, 0x80};
static const uint64_t c_vals[] = {'J', 'V', 'M', 'P', 'I'};
static const uint64_t s_vals[] = {0x0001, 0xFFFF, 0x7FFF, 0x8000};
static const uint64_t i_vals[] = {0x12345678, 0xFFFFFFFF, 0, 42};
static const uint64_t j_vals[] = {0x1122334455667788ULL, 0xFFFFFFFFFFFFFFFEULL};
static const uint64_t f_vals[] = {0x3FC00000, 0x80000000, 0x00000001};
static const uint64_t d_vals[] = {0x400A000000000000ULL, 0x1, 0x8000000000000000ULL};

typedef struct {
    int key;
    const char *cls;  /* class of the object; for arrays the element class (NULL: primitive) */
    int kind;         /* record type at levels 1 and 2 */
    const fexp *vals; /* instance fields, or statics of a class dump */
    int nvals;
    const int *elems;
    const uint64_t *prims;
    int nelems;
    int ty; /* primitive arrays */
} oexp;

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
static const oexp graph[] = {
    {K_SUB, "CHgSub", JVMPI_GC_INSTANCE_DUMP, sub_fields, N(sub_fields), NULL, NULL, 0, 0},
    {K_BASE, "CHgBase", JVMPI_GC_INSTANCE_DUMP, base_fields, N(base_fields), NULL, NULL, 0, 0},
    {K_STR, "java.lang.String", JVMPI_GC_INSTANCE_DUMP, NULL, 0, NULL, NULL, 0, 0},
    {K_NODEA, "CHgNode", JVMPI_GC_INSTANCE_DUMP, nodea_fields, N(nodea_fields), NULL, NULL, 0, 0},
    {K_NODEB, "CHgNode", JVMPI_GC_INSTANCE_DUMP, nodeb_fields, N(nodeb_fields), NULL, NULL, 0, 0},
    {K_M1, "CHgMarker", JVMPI_GC_INSTANCE_DUMP, m1_fields, N(m1_fields), NULL, NULL, 0, 0},
    {K_M2, "CHgMarker", JVMPI_GC_INSTANCE_DUMP, m2_fields, N(m2_fields), NULL, NULL, 0, 0},
    {K_GLOBAL, "CHgMarker", JVMPI_GC_INSTANCE_DUMP, global_fields, N(global_fields), NULL, NULL, 0, 0},
    {K_LOCAL, "CHgMarker", JVMPI_GC_INSTANCE_DUMP, local_fields, N(local_fields), NULL, NULL, 0, 0},
    {K_OBJARR, "java.lang.Object", JVMPI_GC_OBJ_ARRAY_DUMP, NULL, 0, objarr_elems, NULL, N(objarr_elems), 0},
    {K_MARKERS, "[LCHgMarker;", JVMPI_GC_OBJ_ARRAY_DUMP, NULL, 0, markers_elems, NULL, N(markers_elems), 0},
    {K_MROW0, "CHgMarker", JVMPI_GC_OBJ_ARRAY_DUMP, NULL, 0, mrow0_elems, NULL, N(mrow0_elems), 0},
    {K_MROW1, "CHgMarker", JVMPI_GC_OBJ_ARRAY_DUMP, NULL, 0, mrow1_elems, NULL, N(mrow1_elems), 0},
    {K_ZARR, NULL, JVMPI_GC_PRIM_ARRAY_DUMP, NULL, 0, NULL, z_vals, N(z_vals), JVMPI_BOOLEAN},
    {K_BARR, NULL, JVMPI_GC_PRIM_ARRAY_DUMP, NULL, 0, NULL, b_vals, N(b_vals), JVMPI_BYTE},
    {K_CARR, NULL, JVMPI_GC_PRIM_ARRAY_DUMP, NULL, 0, NULL, c_vals, N(c_vals), JVMPI_CHAR},
    {K_SARR, NULL, JVMPI_GC_PRIM_ARRAY_DUMP, NULL, 0, NULL, s_vals, N(s_vals), JVMPI_SHORT},
    {K_IARR, NULL, JVMPI_GC_PRIM_ARRAY_DUMP, NULL, 0, NULL, i_vals, N(i_vals), JVMPI_INT},
    {K_JARR, NULL, JVMPI_GC_PRIM_ARRAY_DUMP, NULL, 0, NULL, j_vals, N(j_vals), JVMPI_LONG},
    {K_FARR, NULL, JVMPI_GC_PRIM_ARRAY_DUMP, NULL, 0, NULL, f_vals, N(f_vals), JVMPI_FLOAT},
    {K_DARR, NULL, JVMPI_GC_PRIM_ARRAY_DUMP, NULL, 0, NULL, d_vals, N(d_vals), JVMPI_DOUBLE},
    {K_SUBCLASS, "CHgSub", JVMPI_GC_CLASS_DUMP, sub_statics, N(sub_statics), NULL, NULL, 0, 0},
};

/* ---- checks ---- */
static int n_pass;

__attribute__((format(printf, 2, 3)))
static int check(int cond, const char *fmt, ...)
{
    if (cond) {
        __atomic_add_fetch(&n_pass, 1, __ATOMIC_SEQ_CST);
        return 1;
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    a_fail("%s", msg);
    return 0;
}

/* ---- what the agent knows: objects, classes, threads (under mu) ---- */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
    const void *id, *cls;
    jint size, is_array;
} oslot;
static oslot *otab;
static size_t ocap, oused;

typedef struct {
    const void *id;
    char *name;
    int nif, nst, nin, nm;
    JVMPI_Field *st, *in;
    JVMPI_Method *m;
    const void *super;
    int super_known;
} hclass;
static hclass **ctab;
static size_t ccap, cused;

typedef struct {
    JNIEnv *env;
    const void *tid;
    char *name;
    int alive;
} hthread;
static hthread *threads;
static int nthreads, athreads;

static size_t hash_ptr(const void *p)
{
    return a_hash(p);
}

static oslot *obj_find(const void *id)
{
    if (!ocap)
        return NULL;
    for (size_t i = hash_ptr(id) & (ocap - 1);; i = (i + 1) & (ocap - 1)) {
        if (otab[i].id == id)
            return &otab[i];
        if (!otab[i].id)
            return NULL;
    }
}

static void obj_put(const void *id, const void *cls, jint size, jint is_array)
{
    if (!id)
        return;
    oslot *s = obj_find(id);
    if (!s) {
        if ((oused + 1) * 2 > ocap) {
            size_t nc = ocap ? ocap * 2 : 1 << 16;
            oslot *nt = calloc(nc, sizeof *nt);
            if (!nt)
                return;
            for (size_t i = 0; i < ocap; i++) {
                if (!otab[i].id)
                    continue;
                size_t j = hash_ptr(otab[i].id) & (nc - 1);
                while (nt[j].id)
                    j = (j + 1) & (nc - 1);
                nt[j] = otab[i];
            }
            free(otab);
            otab = nt;
            ocap = nc;
        }
        size_t j = hash_ptr(id) & (ocap - 1);
        while (otab[j].id)
            j = (j + 1) & (ocap - 1);
        s = &otab[j];
        oused++;
    }
    s->id = id;
    s->cls = cls;
    s->size = size;
    s->is_array = is_array;
}

static hclass *class_find(const void *id)
{
    if (!ccap)
        return NULL;
    for (size_t i = hash_ptr(id) & (ccap - 1);; i = (i + 1) & (ccap - 1)) {
        if (!ctab[i])
            return NULL;
        if (ctab[i]->id == id)
            return ctab[i];
    }
}

static char *sdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

static JVMPI_Field *dup_fields(const JVMPI_Field *f, int n)
{
    JVMPI_Field *c = calloc(n > 0 ? (size_t)n : 1, sizeof *c);
    for (int i = 0; f && i < n; i++) {
        c[i].field_name = sdup(f[i].field_name);
        c[i].field_signature = sdup(f[i].field_signature);
    }
    return c;
}

/* First CLASS_LOAD of an ID wins: a class ID names one class forever. */
static void class_put(const JVMPI_Event *ev)
{
    const void *id = ev->u.class_load.class_id;
    if (!id || class_find(id))
        return;
    hclass *k = calloc(1, sizeof *k);
    k->id = id;
    k->name = sdup(ev->u.class_load.class_name);
    k->nif = ev->u.class_load.num_interfaces;
    k->nst = ev->u.class_load.num_static_fields;
    k->st = dup_fields(ev->u.class_load.statics, k->nst);
    k->nin = ev->u.class_load.num_instance_fields;
    k->in = dup_fields(ev->u.class_load.instances, k->nin);
    k->nm = ev->u.class_load.num_methods;
    k->m = calloc(k->nm > 0 ? (size_t)k->nm : 1, sizeof *k->m);
    for (int i = 0; ev->u.class_load.methods && i < k->nm; i++) {
        k->m[i] = ev->u.class_load.methods[i];
        k->m[i].method_name = sdup(ev->u.class_load.methods[i].method_name);
        k->m[i].method_signature = sdup(ev->u.class_load.methods[i].method_signature);
    }
    if ((cused + 1) * 2 > ccap) {
        size_t nc = ccap ? ccap * 2 : 8192;
        hclass **nt = calloc(nc, sizeof *nt);
        for (size_t i = 0; i < ccap; i++) {
            if (!ctab[i])
                continue;
            size_t j = hash_ptr(ctab[i]->id) & (nc - 1);
            while (nt[j])
                j = (j + 1) & (nc - 1);
            nt[j] = ctab[i];
        }
        free(ctab);
        ctab = nt;
        ccap = nc;
    }
    size_t j = hash_ptr(id) & (ccap - 1);
    while (ctab[j])
        j = (j + 1) & (ccap - 1);
    ctab[j] = k;
    cused++;
}

static hclass *class_by_name(const char *name)
{
    pthread_mutex_lock(&mu);
    hclass *found = NULL;
    for (size_t i = 0; i < ccap && !found; i++)
        if (ctab[i] && a_streq(ctab[i]->name, name))
            found = ctab[i];
    pthread_mutex_unlock(&mu);
    return found;
}

static const void *class_id_of(const char *name)
{
    hclass *k = class_by_name(name);
    return k ? k->id : NULL;
}

static const char *class_name_of(const void *id)
{
    pthread_mutex_lock(&mu);
    hclass *k = class_find(id);
    pthread_mutex_unlock(&mu);
    return k ? a_str(k->name) : "(no CLASS_LOAD)";
}

static hthread *thread_by_env(JNIEnv *env)
{
    for (int i = 0; i < nthreads; i++)
        if (threads[i].env == env && threads[i].alive)
            return &threads[i];
    return NULL;
}

/* IDs a check could not place; finish() names their classes through JNI,
 * which is not safe inside the dump handler. */
static const void *puzzles[64];
static char puzzle_why[64][120];
static int npuzzles;

static void puzzle(const void *id, const char *why)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < npuzzles; i++)
        if (puzzles[i] == id) {
            pthread_mutex_unlock(&mu);
            return;
        }
    if (npuzzles < 64) {
        puzzles[npuzzles] = id;
        snprintf(puzzle_why[npuzzles], sizeof puzzle_why[0], "%s", why);
        npuzzles++;
    }
    pthread_mutex_unlock(&mu);
}

/* ---- requests for defining events, answered on this thread ---- */
typedef struct {
    int active, n;
    jint type;
    const void *obj_id, *class_id;
    jint is_array, size;
} reqcap;
static _Thread_local reqcap tl_req;

static jint request_define(jint type, const void *id, reqcap *got)
{
    memset(&tl_req, 0, sizeof tl_req);
    tl_req.active = 1;
    jint rc = a_jvmpi->RequestEvent(type, (void *)id);
    *got = tl_req;
    memset(&tl_req, 0, sizeof tl_req);
    return rc;
}

/* Class known, or RequestEvent(CLASS_LOAD) defines it now.  Returns 1 if
 * known afterwards; *asked tells whether a request was made. */
static int ensure_class(const void *id, int *asked, jint *rc_out)
{
    pthread_mutex_lock(&mu);
    int known = class_find(id) != NULL;
    pthread_mutex_unlock(&mu);
    *asked = 0;
    if (known)
        return 1;
    reqcap got;
    *asked = 1;
    jint rc = request_define(JVMPI_EVENT_CLASS_LOAD, id, &got);
    if (rc_out)
        *rc_out = rc;
    pthread_mutex_lock(&mu);
    known = class_find(id) != NULL;
    pthread_mutex_unlock(&mu);
    return rc == JVMPI_SUCCESS && got.n == 1 && got.class_id == id && known;
}

/* ---- dr_ops over the agent's tables ---- */
/* Class IDs a request already failed to define: asked and reported once. */
static const void *undefined_classes[256];
static int n_undefined;

static int undefined_class(const void *id)
{
    for (int i = 0; i < n_undefined; i++)
        if (undefined_classes[i] == id)
            return 1;
    return 0;
}

static int ops_class_of(void *ctx, const void *id, dr_class *out)
{
    int may_request = ctx != NULL;
    pthread_mutex_lock(&mu);
    hclass *k = class_find(id);
    int given_up = !k && undefined_class(id);
    pthread_mutex_unlock(&mu);
    if (!k && may_request && !given_up) {
        int asked;
        jint rc = 0;
        if (ensure_class(id, &asked, &rc)) {
            pthread_mutex_lock(&mu);
            k = class_find(id);
            pthread_mutex_unlock(&mu);
        } else {
            a_fail("class ID %p met in a dump: RequestEvent(CLASS_LOAD) returned %d without defining it", id,
                   (int)rc);
            puzzle(id, "class ID with no CLASS_LOAD");
            pthread_mutex_lock(&mu);
            if (n_undefined < 256)
                undefined_classes[n_undefined++] = id;
            pthread_mutex_unlock(&mu);
        }
    }
    if (!k)
        return 0;
    out->name = k->name;
    out->num_interfaces = k->nif;
    out->n_statics = k->nst;
    out->statics = k->st;
    out->n_fields = k->nin;
    out->fields = k->in;
    return 1;
}

static int ops_super_of(void *ctx, const void *id, const void **super)
{
    (void)ctx;
    pthread_mutex_lock(&mu);
    hclass *k = class_find(id);
    int ok = k && k->super_known;
    if (ok)
        *super = k->super;
    pthread_mutex_unlock(&mu);
    return ok;
}

static int may_request_flag = 1;
static const dr_ops live_ops = {&may_request_flag, ops_class_of, ops_super_of};

/* ---- state shared with the natives ---- */
static const void *kid[K_COUNT];
static jobject gref;
static int opt_alloc = 1, opt_sample = 300, opt_cap = 1000;
static int dumps_done[3], object_dumps_done, finished;
static unsigned char *l2_rec[K_COUNT]; /* bytes of each known record in the last level 2 dump */
static size_t l2_len[K_COUNT];
static int l2_from_null; /* l2_rec comes from the NULL-argument dump */

typedef struct {
    int active, n;
    int want_level;
    JNIEnv *env;
    const void *thread_obj;
} dumpcap;
static _Thread_local dumpcap tl_dump;

typedef struct {
    int active, n;
    jint type;
    JNIEnv *env;
    unsigned char *copy;
    size_t len;
    int views_agree;
    char views[200];
} objcap;
static _Thread_local objcap tl_obj;

/* ---- checking one known record ---- */
static const char *val_str(const dr_val *v, char *buf, size_t n)
{
    if (v->sig == 'L')
        snprintf(buf, n, "ref %p", v->ref);
    else
        snprintf(buf, n, "0x%llx", (unsigned long long)v->bits);
    return buf;
}

static void check_value(const char *where, const char *what, const dr_val *v, char sig, uint64_t bits, int key)
{
    char got[64];
    if (sig == 'L') {
        const void *want = key == KNULL ? NULL : kid[key];
        check(v->sig == 'L' && v->ref == want, "%s: %s is %s, expected %s %p", where, what, val_str(v, got, sizeof got),
              key == KNULL ? "null" : key_name[key], want);
    } else {
        check(v->sig == sig && v->bits == bits, "%s: %s (%c) is %s, expected 0x%llx", where, what, sig,
              val_str(v, got, sizeof got), (unsigned long long)bits);
    }
}

/* Whether java.lang.String's CLASS_LOAD lists an instance field coder. */
static int string_has_coder(void)
{
    hclass *k = class_by_name("java.lang.String");
    for (int i = 0; k && i < k->nin; i++)
        if (strcmp(k->in[i].field_name, "coder") == 0)
            return 1;
    return 0;
}

/* String.value is a byte[] from JDK 9 on (with coder Latin-1 here); JDK 8's
 * String has no coder, and its value is a char[]. */
static void check_string(const char *where, const dr_dump *d, const dr_rec *r)
{
    static const char text[] = "hg-string";
    const uint32_t len = sizeof text - 1;
    char why[300];
    dr_val v, coder;
    if (!check(!dr_field(d, &live_ops, r, "java.lang.String", "value", &v, why, sizeof why), "%s: String.value: %s",
               where, why))
        return;
    const dr_rec *arr = dr_find(d, v.ref);
    if (d->n == 1) /* an object dump holds the String alone */
        return;
    int chars = !string_has_coder();
    unsigned ty = chars ? JVMPI_CHAR : JVMPI_BYTE;
    if (!check(arr && arr->kind == JVMPI_GC_PRIM_ARRAY_DUMP && arr->ty == ty && arr->num == len,
               "%s: String.value %p is not dumped as a %s[%u] (record %s, ty %d, count %u)", where, v.ref,
               chars ? "char" : "byte", len, arr ? dr_kind_name(d->level, arr->kind) : "none", arr ? arr->ty : -1,
               arr ? arr->num : 0))
        return;
    if (d->level < 2)
        return;
    if (!chars) {
        if (check(!dr_field(d, &live_ops, r, "java.lang.String", "coder", &coder, why, sizeof why),
                  "%s: String.coder: %s", where, why))
            check(coder.bits == 0, "%s: String.coder %llu, expected 0 (Latin-1)", where, (unsigned long long)coder.bits);
        check(memcmp(d->b + arr->data, text, len) == 0, "%s: String.value bytes are not \"%s\" (Latin-1)", where, text);
        return;
    }
    for (uint32_t i = 0; i < len; i++) {
        dr_val c;
        dr_elem(d, arr, i, &c);
        if (!check(c.bits == (uint64_t)(unsigned char)text[i], "%s: String.value[%u] is %llu, expected '%c'", where, i,
                   (unsigned long long)c.bits, text[i]))
            return;
    }
}

/* Checks object E's record in D (a heap dump of level 1/2 or an object
 * dump). */
static void check_known(const char *where0, const dr_dump *d, const oexp *e)
{
    char where[200], why[300], what[120];
    snprintf(where, sizeof where, "%s: %s %p", where0, key_name[e->key], kid[e->key]);
    if (!kid[e->key]) {
        a_fail("%s: the program never registered it", where);
        return;
    }
    const dr_rec *r = dr_find(d, kid[e->key]);
    if (!check(r != NULL, "%s: not in the dump", where))
        return;
    if (!check(r->kind == e->kind, "%s: dumped as %s, expected %s", where, dr_kind_name(d->level, r->kind),
               dr_kind_name(d->level, (unsigned)e->kind)))
        return;
    const void *cls = e->cls ? class_id_of(e->cls) : NULL;
    if (e->cls && !check(cls != NULL, "%s: no CLASS_LOAD seen for %s", where, e->cls))
        return;
    switch (e->kind) {
    case JVMPI_GC_INSTANCE_DUMP:
        check(r->id2 == cls, "%s: class %p (%s), expected %s %p", where, r->id2, class_name_of(r->id2), e->cls, cls);
        for (int i = 0; i < e->nvals; i++) {
            const fexp *f = &e->vals[i];
            dr_val v;
            snprintf(what, sizeof what, "field %s.%s", f->decl, f->name);
            int rc = dr_field(d, &live_ops, r, f->decl, f->name, &v, why, sizeof why);
            if (f->sig != 'L' && d->level < 2) {
                check(rc != 0, "%s: primitive %s is in a level %d dump", where, what, d->level);
                continue;
            }
            if (check(rc == 0, "%s: %s: %s", where, what, why))
                check_value(where, what, &v, f->sig, f->bits, f->key);
        }
        if (e->key == K_STR)
            check_string(where, d, r);
        break;
    case JVMPI_GC_CLASS_DUMP:
        for (int i = 0; i < e->nvals; i++) {
            const fexp *f = &e->vals[i];
            dr_val v;
            snprintf(what, sizeof what, "static %s", f->name);
            int rc = dr_static(d, &live_ops, r, f->name, &v, why, sizeof why);
            if (f->sig != 'L' && d->level < 2) {
                check(rc != 0, "%s: primitive %s is in a level %d dump", where, what, d->level);
                continue;
            }
            if (check(rc == 0, "%s: %s: %s", where, what, why))
                check_value(where, what, &v, f->sig, f->bits, f->key);
        }
        break;
    case JVMPI_GC_OBJ_ARRAY_DUMP:
        check(r->id2 == cls, "%s: element class %p (%s), expected %s %p", where, r->id2, class_name_of(r->id2), e->cls,
              cls);
        if (!check(r->num == (uint32_t)e->nelems, "%s: %u elements, expected %d", where, r->num, e->nelems))
            break;
        for (int i = 0; i < e->nelems; i++) {
            dr_val v;
            snprintf(what, sizeof what, "element %d", i);
            dr_elem(d, r, (uint32_t)i, &v);
            check_value(where, what, &v, 'L', 0, e->elems[i]);
        }
        break;
    case JVMPI_GC_PRIM_ARRAY_DUMP:
        check(r->ty == e->ty, "%s: element type %u, expected %d", where, r->ty, e->ty);
        if (!check(r->num == (uint32_t)e->nelems, "%s: %u elements, expected %d", where, r->num, e->nelems))
            break;
        if (d->level < 2) {
            check(!r->has_data && r->len == 1 + DR_PTR + 4 + 1,
                  "%s: level %d primitive array record is %zu bytes, expected %zu (no elements)", where, d->level,
                  r->len, (size_t)(1 + DR_PTR + 4 + 1));
            break;
        }
        for (int i = 0; i < e->nelems && r->ty == e->ty; i++) {
            dr_val v;
            snprintf(what, sizeof what, "element %d", i);
            dr_elem(d, r, (uint32_t)i, &v);
            check_value(where, what, &v, dr_ty_sig((unsigned)e->ty), e->prims[i], 0);
        }
        break;
    default:
        break;
    }
}

/* The class dumps of CHgSub, CHgBase, C_HeapGraph and java.lang.Object. */
static void check_class_dumps(const char *where0, const dr_dump *d)
{
    char where[200], why[300];
    const void *sub = class_id_of("CHgSub"), *base = class_id_of("CHgBase"), *obj = class_id_of("java.lang.Object"),
               *iface = class_id_of("CHgIface"), *mainc = class_id_of("C_HeapGraph");
    if (!check(sub && base && obj && iface && mainc, "%s: CLASS_LOAD missing for CHgSub/CHgBase/Object/CHgIface/C_HeapGraph",
               where0))
        return;
    const dr_rec *r = dr_find(d, sub);
    snprintf(where, sizeof where, "%s: class dump of CHgSub %p", where0, sub);
    if (check(r && r->kind == JVMPI_GC_CLASS_DUMP, "%s: missing", where)) {
        check(r->id2 == base, "%s: super %p (%s), expected CHgBase %p", where, r->id2, class_name_of(r->id2), base);
        check(r->loader != NULL, "%s: NULL class loader for an application class", where);
        if (check(r->n_ifaces == 1, "%s: %d interfaces, expected 1", where, r->n_ifaces))
            check(dr_id(d, r->ifaces) == iface, "%s: interface %p (%s), expected CHgIface %p", where,
                  dr_id(d, r->ifaces), class_name_of(dr_id(d, r->ifaces)), iface);
        pthread_mutex_lock(&mu);
        oslot *o = kid[K_SUB] ? obj_find(kid[K_SUB]) : NULL;
        jint size = o ? o->size : 0;
        pthread_mutex_unlock(&mu);
        /* JVMPI's "instance size" is that of one instance; OBJECT_ALLOC
         * reported the same object's size, header included. */
        if (size > 0)
            check(r->num == (uint32_t)size, "%s: instance size %u, but OBJECT_ALLOC said %d for an instance", where,
                  r->num, (int)size);
        else
            check(r->num > 0, "%s: instance size 0", where);
    }
    r = dr_find(d, base);
    snprintf(where, sizeof where, "%s: class dump of CHgBase %p", where0, base);
    if (check(r && r->kind == JVMPI_GC_CLASS_DUMP, "%s: missing", where)) {
        check(r->id2 == obj, "%s: super %p (%s), expected java.lang.Object %p", where, r->id2, class_name_of(r->id2), obj);
        check(r->n_ifaces == 0, "%s: %d interfaces, expected 0", where, r->n_ifaces);
    }
    r = dr_find(d, obj);
    snprintf(where, sizeof where, "%s: class dump of java.lang.Object %p", where0, obj);
    if (check(r && r->kind == JVMPI_GC_CLASS_DUMP, "%s: missing", where)) {
        check(r->id2 == NULL, "%s: super %p, expected NULL", where, r->id2);
        check(r->loader == NULL, "%s: class loader %p, expected NULL (bootstrap)", where, r->loader);
    }
    r = dr_find(d, mainc);
    snprintf(where, sizeof where, "%s: class dump of C_HeapGraph %p", where0, mainc);
    if (check(r && r->kind == JVMPI_GC_CLASS_DUMP, "%s: missing", where)) {
        for (int i = 0; i < N(main_statics); i++) {
            const fexp *f = &main_statics[i];
            dr_val v;
            int rc = dr_static(d, &live_ops, r, f->name, &v, why, sizeof why);
            if (f->sig != 'L' && d->level < 2) {
                check(rc != 0, "%s: primitive static %s is in a level %d dump", where, f->name, d->level);
                continue;
            }
            if (check(rc == 0, "%s: static %s: %s", where, f->name, why))
                check_value(where, f->name, &v, f->sig, f->bits, f->key);
        }
    }
}

/* ---- every ID in a dump: known, or defined now through RequestEvent ---- */
typedef struct {
    const char *where;
    int level;
    long known_obj, known_class, resolved_obj, resolved_class, unresolved, over_cap, envs_bad, class_as_obj;
    int bad_reported;
    const void **tried; /* set of unknown IDs already asked about in this dump */
    size_t ntried, captried;
} idctx;

/* Adds ID to the set of IDs asked about; returns 1 if it was there. */
static int tried_before(idctx *c, const void *id)
{
    if ((c->ntried + 1) * 2 > c->captried) {
        size_t nc = c->captried ? c->captried * 2 : 4096;
        const void **nt = calloc(nc, sizeof *nt);
        for (size_t i = 0; i < c->captried; i++) {
            if (!c->tried[i])
                continue;
            size_t j = hash_ptr(c->tried[i]) & (nc - 1);
            while (nt[j])
                j = (j + 1) & (nc - 1);
            nt[j] = c->tried[i];
        }
        free(c->tried);
        c->tried = nt;
        c->captried = nc;
    }
    size_t j = hash_ptr(id) & (c->captried - 1);
    while (c->tried[j]) {
        if (c->tried[j] == id)
            return 1;
        j = (j + 1) & (c->captried - 1);
    }
    c->tried[j] = id;
    c->ntried++;
    return 0;
}

static const char *role_name(int role)
{
    switch (role) {
    case DR_SELF: return "own ID";
    case DR_CLASS: return "class ID";
    case DR_REF: return "reference";
    default: return "JNIEnv";
    }
}

static void id_bad(idctx *c, const dr_rec *r, int role, const void *id, const char *why)
{
    c->unresolved++;
    if (c->bad_reported++ < 10)
        a_fail("%s: %s %p in the %s record at offset %zu: %s", c->where, role_name(role), id,
               dr_kind_name(c->level, r->kind), r->off, why);
}

static int id_cb(void *vc, const dr_dump *d, const dr_rec *r, int role, const void *id)
{
    idctx *c = vc;
    (void)d;
    if (role == DR_ENV) {
        pthread_mutex_lock(&mu);
        int ok = thread_by_env((JNIEnv *)id) != NULL;
        pthread_mutex_unlock(&mu);
        if (!ok) {
            c->envs_bad++;
            if (c->bad_reported++ < 10)
                a_fail("%s: JNIEnv %p in the %s record at offset %zu is no live thread's (THREAD_START)", c->where, id,
                       dr_kind_name(c->level, r->kind), r->off);
        }
        return 0;
    }
    int is_class_pos = role == DR_CLASS || (role == DR_SELF && c->level > 0 && r->kind == JVMPI_GC_CLASS_DUMP);
    pthread_mutex_lock(&mu);
    int kc = class_find(id) != NULL;
    int ko = !kc && obj_find(id) != NULL;
    pthread_mutex_unlock(&mu);
    if (kc) {
        c->known_class++;
        if (role == DR_SELF && !is_class_pos)
            c->class_as_obj++;
        return 0;
    }
    if (is_class_pos) {
        /* The ID may also have come with OBJECT_ALLOC (a Class object's
         * allocation); what counts is that CLASS_LOAD defines it. */
        int asked;
        jint rc = 0;
        pthread_mutex_lock(&mu);
        int given_up = undefined_class(id);
        pthread_mutex_unlock(&mu);
        if (given_up) {
            id_bad(c, r, role, id, "a class no CLASS_LOAD defines (asked before)");
        } else if (ensure_class(id, &asked, &rc)) {
            c->resolved_class++;
        } else {
            char why[160];
            snprintf(why, sizeof why, "RequestEvent(CLASS_LOAD) returned %d and defined nothing%s", (int)rc,
                     ko ? "; the ID came with OBJECT_ALLOC as an object" : "");
            id_bad(c, r, role, id, why);
            snprintf(why, sizeof why, "undefined class ID in a %s record", dr_kind_name(c->level, r->kind));
            puzzle(id, why);
            pthread_mutex_lock(&mu);
            if (n_undefined < 256)
                undefined_classes[n_undefined++] = id;
            pthread_mutex_unlock(&mu);
        }
        return 0;
    }
    if (ko) {
        c->known_obj++;
        return 0;
    }
    if (tried_before(c, id))
        return 0;
    if (c->resolved_obj + c->resolved_class + c->unresolved >= opt_cap) {
        c->over_cap++;
        return 0;
    }
    reqcap got;
    jint rc = request_define(JVMPI_EVENT_OBJECT_ALLOC, id, &got);
    if (rc == JVMPI_SUCCESS && got.n == 1 && got.obj_id == id) {
        c->resolved_obj++;
        return 0;
    }
    /* A reference may name a Class object: CLASS_LOAD defines those. */
    int asked;
    jint rc2 = 0;
    if (ensure_class(id, &asked, &rc2)) {
        c->resolved_class++;
        return 0;
    }
    char why[160];
    snprintf(why, sizeof why, "unknown; RequestEvent(OBJECT_ALLOC) returned %d (%d events), RequestEvent(CLASS_LOAD) %d",
             (int)rc, got.n, (int)rc2);
    id_bad(c, r, role, id, why);
    puzzle(id, "unknown ID no request defined");
    return 0;
}

/* Re-requests OBJECT_ALLOC for ID and compares it with record R. */
static void rerequest(const char *where, const dr_dump *d, const dr_rec *r, const char *label)
{
    reqcap got;
    const void *id = r->id;
    jint rc = request_define(JVMPI_EVENT_OBJECT_ALLOC, id, &got);
    if (!check(rc == JVMPI_SUCCESS && got.n == 1, "%s: RequestEvent(OBJECT_ALLOC, %s %p) returned %d with %d events",
               where, label, id, (int)rc, got.n)) {
        pthread_mutex_lock(&mu);
        oslot *o = obj_find(id);
        oslot copy = o ? *o : (oslot){0};
        pthread_mutex_unlock(&mu);
        char why[120];
        snprintf(why, sizeof why, "re-request failed; %s record; first OBJECT_ALLOC: class %p %s, is_array %d, size %d",
                 dr_kind_name(d->level, r->kind), copy.cls, o ? class_name_of(copy.cls) : "none", (int)copy.is_array,
                 (int)copy.size);
        puzzle(id, why);
        return;
    }
    check(got.type == (JVMPI_EVENT_OBJECT_ALLOC | JVMPI_REQUESTED_EVENT) && got.obj_id == id,
          "%s: requested OBJECT_ALLOC for %s %p came as type 0x%x for %p", where, label, id, (unsigned)got.type,
          got.obj_id);
    jint want_arr;
    const void *want_cls;
    if (d->level == 0) {
        want_arr = r->kind == JVMPI_NORMAL_OBJECT ? JVMPI_NORMAL_OBJECT : r->kind;
        check(got.is_array == want_arr, "%s: %s %p: OBJECT_ALLOC is_array %d, level 0 type %d", where, label, id,
              (int)got.is_array, (int)want_arr);
        return;
    }
    switch (r->kind) {
    case JVMPI_GC_INSTANCE_DUMP: want_arr = JVMPI_NORMAL_OBJECT; want_cls = r->id2; break;
    case JVMPI_GC_OBJ_ARRAY_DUMP: want_arr = JVMPI_CLASS; want_cls = r->id2; break;
    default: want_arr = r->ty; want_cls = NULL; break;
    }
    check(got.is_array == want_arr && got.class_id == want_cls,
          "%s: %s %p: OBJECT_ALLOC says is_array %d class %p (%s), the %s record says %d, %p (%s)", where, label, id,
          (int)got.is_array, got.class_id, class_name_of(got.class_id), dr_kind_name(d->level, r->kind), (int)want_arr,
          want_cls, class_name_of(want_cls));
    pthread_mutex_lock(&mu);
    oslot *o = obj_find(id);
    jint size = o ? o->size : 0;
    pthread_mutex_unlock(&mu);
    check(got.size > 0 && (!size || size == got.size), "%s: %s %p: requested OBJECT_ALLOC size %d, first seen %d",
          where, label, id, (int)got.size, (int)size);
}

static void check_ids(const char *where, dr_dump *d)
{
    idctx c;
    memset(&c, 0, sizeof c);
    c.where = where;
    c.level = d->level;
    dr_each_id(d, &live_ops, id_cb, &c);
    a_rec("%s: IDs: %ld known objects, %ld known classes, %ld objects and %ld classes defined by RequestEvent, %ld failed, %ld unknown beyond cap=%d, %ld level-0 records of Class objects",
          where, c.known_obj, c.known_class, c.resolved_obj, c.resolved_class, c.unresolved, c.over_cap, opt_cap,
          c.class_as_obj);
    check(c.unresolved == 0 && c.envs_bad == 0, "%s: %ld IDs neither known nor defined by RequestEvent, %ld bad JNIEnvs",
          where, c.unresolved, c.envs_bad);
    free(c.tried);

    /* Re-request a spread of object records plus the graph. */
    size_t nobj = 0;
    for (size_t i = 0; i < d->nindex; i++)
        nobj += !(d->level > 0 && d->index[i]->kind == JVMPI_GC_CLASS_DUMP);
    size_t step = nobj > (size_t)opt_sample && opt_sample > 0 ? nobj / (size_t)opt_sample : 1;
    size_t done = 0, k = 0;
    for (size_t i = 0; i < d->nindex && opt_sample > 0; i++) {
        const dr_rec *r = d->index[i];
        if (d->level > 0 && r->kind == JVMPI_GC_CLASS_DUMP)
            continue;
        if (k++ % step)
            continue;
        pthread_mutex_lock(&mu);
        int is_class = class_find(r->id) != NULL;
        pthread_mutex_unlock(&mu);
        if (is_class)
            continue;
        rerequest(where, d, r, "sampled object");
        done++;
    }
    for (int key = 0; key < K_COUNT; key++) {
        if (key == K_SUBCLASS || !kid[key])
            continue;
        const dr_rec *r = dr_find(d, kid[key]);
        if (r)
            rerequest(where, d, r, key_name[key]);
    }
    a_rec("%s: re-requested OBJECT_ALLOC for %zu sampled objects and the graph", where, done);
}

/* ---- traces and roots ---- */
static const void *method_of(const char *cls, const char *name, const char *sig)
{
    hclass *k = class_by_name(cls);
    if (!k)
        return NULL;
    for (int i = 0; i < k->nm; i++)
        if (a_streq(k->m[i].method_name, name) && a_streq(k->m[i].method_signature, sig))
            return k->m[i].method_id;
    return NULL;
}

static void check_traces_roots(const char *where, const dr_dump *d, const JVMPI_Event *ev)
{
    char w[200];
    jint nt = ev->u.heap_dump.num_traces;
    JVMPI_CallTrace *tr = ev->u.heap_dump.traces;
    pthread_mutex_lock(&mu);
    int alive = 0;
    for (int i = 0; i < nthreads; i++)
        alive += threads[i].alive;
    char missing[600] = "";
    for (int i = 0; i < nthreads; i++) {
        if (!threads[i].alive)
            continue;
        int found = 0;
        for (jint t = 0; tr && t < nt; t++)
            found += tr[t].env_id == threads[i].env;
        if (found != 1 && strlen(missing) < sizeof missing - 80) {
            size_t l = strlen(missing);
            snprintf(missing + l, sizeof missing - l, " %s(%d traces)", a_str(threads[i].name), found);
        }
    }
    int unknown_env = 0;
    for (jint t = 0; tr && t < nt; t++)
        unknown_env += thread_by_env(tr[t].env_id) == NULL;
    pthread_mutex_unlock(&mu);
    check(nt == alive, "%s: num_traces %d, but %d threads are alive (THREAD_START/END)", where, (int)nt, alive);
    check(nt == 0 || tr != NULL, "%s: num_traces %d with NULL traces", where, (int)nt);
    check(missing[0] == 0, "%s: threads without exactly one trace:%s", where, missing);
    check(unknown_env == 0, "%s: %d traces have an env_id no live thread has", where, unknown_env);
    int trace_bad = 0;
    for (jint t = 0; tr && t < nt; t++) {
        for (jint u = t + 1; u < nt; u++)
            if (tr[u].env_id == tr[t].env_id)
                trace_bad++;
        if (tr[t].num_frames < 0 || (tr[t].num_frames > 0 && !tr[t].frames))
            trace_bad++;
        for (jint f = 0; tr[t].frames && f < tr[t].num_frames; f++)
            trace_bad += tr[t].frames[f].method_id == NULL;
    }
    check(trace_bad == 0, "%s: %d trace defects (duplicate env_id, bad frame count, NULL method_id)", where, trace_bad);

    /* Every frame number points into its thread's trace, counted from its
     * outermost frame (1). */
    int frame_bad = 0;
    const JVMPI_CallTrace *mine = NULL;
    for (jint t = 0; tr && t < nt; t++)
        if (tr[t].env_id == tl_dump.env)
            mine = &tr[t];
    check(mine != NULL, "%s: no trace for the dumping thread (env %p)", where, (void *)tl_dump.env);
    long counts[256] = {0};
    int global_ok = 0, frame_ok = 0, sticky_obj = 0, sticky_str = 0, block_ok = 0;
    const void *obj_cls = class_id_of("java.lang.Object"), *str_cls = class_id_of("java.lang.String");
    const void *hold = method_of("C_HeapGraph", "holdAndDump", "(I)I");
    check(hold != NULL, "%s: CLASS_LOAD of C_HeapGraph lists no holdAndDump(I)I", where);
    char frame_note[300] = "no JAVA_FRAME root for it";
    /* dump(int) holds a NewLocalRef of its class while the dump runs (its
     * jclass argument itself lives in a frame slot, not a JNI handle). */
    const void *main_cls = class_id_of("C_HeapGraph"), *dump_m = method_of("C_HeapGraph", "dump", "(I)I");
    int local_ok = 0;
    char local_note[300] = "no JNI_LOCAL root for it";
    for (size_t i = 0; i < d->n; i++) {
        const dr_rec *r = &d->r[i];
        counts[r->kind]++;
        if (r->kind == JVMPI_GC_ROOT_JAVA_FRAME || r->kind == JVMPI_GC_ROOT_JNI_LOCAL) {
            const JVMPI_CallTrace *t = NULL;
            for (jint k = 0; tr && k < nt; k++)
                if (tr[k].env_id == (JNIEnv *)r->id2)
                    t = &tr[k];
            /* HotSpot 5.0's numbering: the outermost frame is 1, the top
             * one the number of frames, so frames[num_frames - num]. */
            const void *m = NULL;
            if (t && r->num != DR_NO_FRAME && r->num >= 1 && r->num <= (uint32_t)t->num_frames)
                m = (const void *)t->frames[t->num_frames - (jint)r->num].method_id;
            if (r->num != DR_NO_FRAME && !m) {
                if (frame_bad++ < 5)
                    a_fail("%s: %s root of %p at offset %zu: frame %u, but that thread's trace has %d frames", where,
                           dr_kind_name(d->level, r->kind), r->id, r->off, r->num, t ? (int)t->num_frames : -1);
            }
            if (r->kind == JVMPI_GC_ROOT_JNI_LOCAL && r->id == main_cls && (JNIEnv *)r->id2 == tl_dump.env) {
                snprintf(local_note, sizeof local_note, "root at offset %zu: frame %u, method %p (dump(I)I is %p)",
                         r->off, r->num, m, dump_m);
                if (r->num == DR_NO_FRAME || (m && m == dump_m))
                    local_ok++;
            }
            if (r->kind == JVMPI_GC_ROOT_JAVA_FRAME && r->id == kid[K_LOCAL]) {
                snprintf(frame_note, sizeof frame_note, "root at offset %zu: env %p, frame %u, method %p (holdAndDump is %p)",
                         r->off, r->id2, r->num, m, hold);
                if ((JNIEnv *)r->id2 == tl_dump.env && m && m == hold)
                    frame_ok++;
            }
        } else if (r->kind == JVMPI_GC_ROOT_JNI_GLOBAL) {
            if (r->id == kid[K_GLOBAL] && r->id2 == (const void *)gref)
                global_ok++;
            else if (r->id == kid[K_GLOBAL])
                a_fail("%s: JNI_GLOBAL root of the global-ref'd marker names ref %p, NewGlobalRef gave %p", where,
                       r->id2, (void *)gref);
        } else if (r->kind == JVMPI_GC_ROOT_STICKY_CLASS) {
            sticky_obj += r->id == obj_cls;
            sticky_str += r->id == str_cls;
        } else if (r->kind == JVMPI_GC_ROOT_THREAD_BLOCK) {
            block_ok += r->id == tl_dump.thread_obj && (JNIEnv *)r->id2 == tl_dump.env;
        }
    }
    check(frame_bad == 0, "%s: %d roots with frame numbers outside their thread's trace", where, frame_bad);
    check(global_ok >= 1, "%s: no JNI_GLOBAL root (%p, ref %p) for the global-ref'd marker", where, kid[K_GLOBAL],
          (void *)gref);
    check(frame_ok >= 1, "%s: no JAVA_FRAME root of the frame-local marker %p on this thread at holdAndDump's frame: %s",
          where, kid[K_LOCAL], frame_note);
    check(local_ok >= 1, "%s: no JNI_LOCAL root of class C_HeapGraph %p (NewLocalRef in dump(I)I) on this thread at dump's frame or -1: %s",
          where, main_cls, local_note);
    check(sticky_obj >= 1 && sticky_str >= 1, "%s: STICKY_CLASS roots: java.lang.Object %d, java.lang.String %d", where,
          sticky_obj, sticky_str);
    check(block_ok >= 1, "%s: no THREAD_BLOCK root (thread %p, env %p) for the dumping thread", where,
          tl_dump.thread_obj, (void *)tl_dump.env);
    int has_hold = 0;
    for (jint f = 0; mine && f < mine->num_frames; f++)
        has_hold += mine->frames[f].method_id == hold;
    check(has_hold == 1, "%s: the dumping thread's trace has holdAndDump %d times", where, has_hold);
    snprintf(w, sizeof w,
             "%s: roots: jni-global %ld jni-local %ld java-frame %ld native-stack %ld sticky-class %ld thread-block %ld monitor-used %ld unknown %ld; traces %d",
             where, counts[JVMPI_GC_ROOT_JNI_GLOBAL], counts[JVMPI_GC_ROOT_JNI_LOCAL], counts[JVMPI_GC_ROOT_JAVA_FRAME],
             counts[JVMPI_GC_ROOT_NATIVE_STACK], counts[JVMPI_GC_ROOT_STICKY_CLASS], counts[JVMPI_GC_ROOT_THREAD_BLOCK],
             counts[JVMPI_GC_ROOT_MONITOR_USED], counts[JVMPI_GC_ROOT_UNKNOWN], (int)nt);
    a_rec("%s", w);
}

/* ---- the HEAP_DUMP handler ---- */
static void on_heap_dump(JVMPI_Event *ev)
{
    if (!tl_dump.active) {
        a_fail("HEAP_DUMP delivered on a thread that did not request it (env %p)", (void *)ev->env_id);
        return;
    }
    tl_dump.n++;
    int level = tl_dump.want_level < 0 ? 2 : tl_dump.want_level;
    char where[64];
    static const char *const level_names[] = {"0", "1", "2"};
    snprintf(where, sizeof where, "HEAP_DUMP level %s", tl_dump.want_level < 0 ? "NULL" : level_names[level]);
    check(ev->event_type == (JVMPI_EVENT_HEAP_DUMP | JVMPI_REQUESTED_EVENT), "%s: event_type 0x%x, expected 0x%x", where,
          (unsigned)ev->event_type, (unsigned)(JVMPI_EVENT_HEAP_DUMP | JVMPI_REQUESTED_EVENT));
    check(ev->env_id == tl_dump.env, "%s: env_id %p, the requesting thread's is %p", where, (void *)ev->env_id,
          (void *)tl_dump.env);
    check(ev->u.heap_dump.dump_level == level, "%s: dump_level %d, expected %d", where, ev->u.heap_dump.dump_level,
          level);
    a_check_unused_zero(ev, A_USED_END(heap_dump), where);

    dr_dump d;
    dr_init(&d);
    d.lenient = 1;
    if (!check(dr_parse_heap(&d, ev->u.heap_dump.begin, ev->u.heap_dump.end, level, &live_ops) == 0, "%s: %s", where,
               d.err)) {
        dr_free(&d);
        return;
    }
    /* Framed by their own counts but not checkable: fail, read on. */
    check(d.n_bad == 0, "%s: %zu instance dumps do not match their class's CLASS_LOAD; the first: %s", where, d.n_bad,
          d.err);
    long kinds[256] = {0};
    for (size_t i = 0; i < d.n; i++)
        kinds[d.r[i].kind]++;
    if (level == 0) {
        a_rec("%s: walked %zu bytes to end: %zu records (objects %ld, object arrays %ld, primitive arrays %zu)", where,
              d.size, d.n, kinds[0], kinds[2], d.n - (size_t)kinds[0] - (size_t)kinds[2]);
        /* HotSpot 5.0 gave level 0 a trace for every thread too. */
        pthread_mutex_lock(&mu);
        int alive = 0;
        for (int i = 0; i < nthreads; i++)
            alive += threads[i].alive;
        pthread_mutex_unlock(&mu);
        check(ev->u.heap_dump.num_traces == alive && (alive == 0 || ev->u.heap_dump.traces != NULL),
              "%s: num_traces %d, one for each of the %d live threads", where, (int)ev->u.heap_dump.num_traces,
              alive);
        for (int i = 0; i < N(graph); i++) {
            const oexp *e = &graph[i];
            if (e->kind == JVMPI_GC_CLASS_DUMP)
                continue;
            const dr_rec *r = kid[e->key] ? dr_find(&d, kid[e->key]) : NULL;
            int want = e->kind == JVMPI_GC_INSTANCE_DUMP ? JVMPI_NORMAL_OBJECT
                       : e->kind == JVMPI_GC_OBJ_ARRAY_DUMP ? JVMPI_CLASS : e->ty;
            if (check(r != NULL, "%s: %s %p is not in the dump", where, key_name[e->key], kid[e->key]))
                check(r->kind == want, "%s: %s has type %d, expected %d", where, key_name[e->key], r->kind, want);
        }
        const dr_rec *g = dr_find(&d, kid[K_GLOBAL]), *l = dr_find(&d, kid[K_LOCAL]);
        check(g && l, "%s: global-ref'd marker %s, frame-local marker %s", where, g ? "dumped" : "missing",
              l ? "dumped" : "missing");
    } else {
        a_rec("%s: walked %zu bytes to end: %zu records (class %ld, instance %ld, object array %ld, primitive array %ld, roots %zu)",
              where, d.size, d.n, kinds[JVMPI_GC_CLASS_DUMP], kinds[JVMPI_GC_INSTANCE_DUMP],
              kinds[JVMPI_GC_OBJ_ARRAY_DUMP], kinds[JVMPI_GC_PRIM_ARRAY_DUMP],
              d.n - (size_t)(kinds[JVMPI_GC_CLASS_DUMP] + kinds[JVMPI_GC_INSTANCE_DUMP] +
                             kinds[JVMPI_GC_OBJ_ARRAY_DUMP] + kinds[JVMPI_GC_PRIM_ARRAY_DUMP]));
        /* Remember the supers: OBJECT_DUMP records carry no class dumps. */
        pthread_mutex_lock(&mu);
        for (size_t i = 0; i < d.nsup; i++) {
            hclass *k = class_find(d.sup[i].cls);
            if (k) {
                k->super = d.sup[i].super;
                k->super_known = 1;
            }
        }
        pthread_mutex_unlock(&mu);
        check_traces_roots(where, &d, ev);
        for (int i = 0; i < N(graph); i++)
            check_known(where, &d, &graph[i]);
        check_class_dumps(where, &d);
        if (level == 2) {
            for (int key = 0; key < K_COUNT; key++) {
                const dr_rec *r = kid[key] ? dr_find(&d, kid[key]) : NULL;
                if (!r)
                    continue;
                /* The frame-local marker is a new object in each dump. */
                if (l2_rec[key] && tl_dump.want_level < 0 && !l2_from_null && key != K_LOCAL)
                    check(l2_len[key] == r->len && memcmp(l2_rec[key], d.b + r->off, r->len) == 0,
                          "%s: the record of %s differs from the explicit level 2 dump's", where, key_name[key]);
                free(l2_rec[key]);
                l2_rec[key] = malloc(r->len);
                memcpy(l2_rec[key], d.b + r->off, r->len);
                l2_len[key] = r->len;
            }
            l2_from_null = tl_dump.want_level < 0;
        }
    }
    check_ids(where, &d);
    dr_free(&d);
    dumps_done[level]++;
}

static void on_object_dump(JVMPI_Event *ev)
{
    if (!tl_obj.active) {
        a_fail("OBJECT_DUMP delivered on a thread that did not request it (env %p)", (void *)ev->env_id);
        return;
    }
    tl_obj.n++;
    a_check_unused_zero(ev, offsetof(JVMPI_Event, u.heap_dump.end) + sizeof(char *), "OBJECT_DUMP");
    tl_obj.type = ev->event_type;
    tl_obj.env = ev->env_id;
    jint len = ev->u.object_dump.data_len;
    const char *data = ev->u.object_dump.data;
    /* HotSpot 5.0 filled begin/end, CDC (phoneME) filled data_len/data. */
    tl_obj.views_agree = data && len > 0 && ev->u.heap_dump.end == data + len;
    snprintf(tl_obj.views, sizeof tl_obj.views, "data %p data_len %d, heap_dump.begin %p end %p", (const void *)data,
             (int)len, (void *)ev->u.heap_dump.begin, (void *)ev->u.heap_dump.end);
    free(tl_obj.copy);
    tl_obj.copy = NULL;
    tl_obj.len = 0;
    if (data && len > 0) {
        tl_obj.copy = malloc((size_t)len);
        memcpy(tl_obj.copy, data, (size_t)len);
        tl_obj.len = (size_t)len;
    }
}

/* ---- events ---- */
static void notify(JVMPI_Event *ev)
{
    jint t = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    int requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
    switch (t) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        pthread_mutex_lock(&mu);
        obj_put(ev->u.obj_alloc.obj_id, ev->u.obj_alloc.class_id, ev->u.obj_alloc.size, ev->u.obj_alloc.is_array);
        pthread_mutex_unlock(&mu);
        if (requested && tl_req.active) {
            tl_req.n++;
            tl_req.type = ev->event_type;
            tl_req.obj_id = ev->u.obj_alloc.obj_id;
            tl_req.class_id = ev->u.obj_alloc.class_id;
            tl_req.is_array = ev->u.obj_alloc.is_array;
            tl_req.size = ev->u.obj_alloc.size;
        }
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        pthread_mutex_lock(&mu);
        class_put(ev);
        pthread_mutex_unlock(&mu);
        if (requested && tl_req.active) {
            tl_req.n++;
            tl_req.type = ev->event_type;
            tl_req.class_id = ev->u.class_load.class_id;
        }
        break;
    case JVMPI_EVENT_THREAD_START:
        if (requested)
            break;
        pthread_mutex_lock(&mu);
        if (nthreads == athreads) {
            athreads = athreads ? athreads * 2 : 64;
            threads = realloc(threads, (size_t)athreads * sizeof *threads);
        }
        threads[nthreads++] = (hthread){ev->u.thread_start.thread_env_id, ev->u.thread_start.thread_id,
                                        sdup(ev->u.thread_start.thread_name), 1};
        pthread_mutex_unlock(&mu);
        break;
    case JVMPI_EVENT_THREAD_END:
        pthread_mutex_lock(&mu);
        for (int i = 0; i < nthreads; i++)
            if (threads[i].alive &&
                (threads[i].env == ev->u.thread_start.thread_env_id || threads[i].env == ev->env_id))
                threads[i].alive = 0;
        pthread_mutex_unlock(&mu);
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        on_heap_dump(ev);
        break;
    case JVMPI_EVENT_OBJECT_DUMP:
        on_object_dump(ev);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        if (!finished)
            a_fail("JVM_SHUT_DOWN before the program called finish(): dumps at levels 0/1/2 done %d/%d/%d", dumps_done[0],
                   dumps_done[1], dumps_done[2]);
        a_rec("SHUT_DOWN");
        break;
    default:
        break;
    }
}

/* ---- JNI natives of C_HeapGraph ---- */
JNIEXPORT void JNICALL Java_C_1HeapGraph_reg(JNIEnv *env, jclass cls, jint key, jobject o)
{
    (void)env;
    (void)cls;
    if (key < 0 || key >= K_COUNT) {
        a_fail("reg: bad key %d", (int)key);
        return;
    }
    jobjectID id = a_jvmpi->jobject2jobjectID(o);
    check(id != NULL, "jobject2jobjectID(%s) returned NULL", key_name[key]);
    kid[key] = id;
    if (key == K_SUBCLASS) {
        const void *c = class_id_of("CHgSub");
        check(c == id, "jobject2jobjectID(CHgSub.class) = %p, CLASS_LOAD class_id of CHgSub = %p", (void *)id, c);
    }
}

JNIEXPORT void JNICALL Java_C_1HeapGraph_makeGlobal(JNIEnv *env, jclass cls, jobject o)
{
    (void)cls;
    gref = (*env)->NewGlobalRef(env, o);
    check(gref != NULL, "NewGlobalRef returned NULL");
    kid[K_GLOBAL] = a_jvmpi->jobject2jobjectID(o);
    check(kid[K_GLOBAL] != NULL, "jobject2jobjectID(global-ref'd marker) returned NULL");
}

JNIEXPORT jint JNICALL Java_C_1HeapGraph_dump(JNIEnv *env, jclass cls, jint level)
{
    JVMPI_HeapDumpArg arg = {level};
    memset(&tl_dump, 0, sizeof tl_dump);
    tl_dump.want_level = level;
    tl_dump.env = env;
    tl_dump.thread_obj = a_jvmpi->GetThreadObject(env);
    check(tl_dump.thread_obj != NULL, "GetThreadObject(this thread) returned NULL");
    jobject local = (*env)->NewLocalRef(env, cls);
    tl_dump.active = 1;
    jint rc = a_jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, level < 0 ? NULL : &arg);
    tl_dump.active = 0;
    (*env)->DeleteLocalRef(env, local);
    const char *lv = level < 0 ? "NULL" : level == 0 ? "0" : level == 1 ? "1" : "2";
    check(rc == JVMPI_SUCCESS, "RequestEvent(HEAP_DUMP, level %s) returned %d, expected JVMPI_SUCCESS", lv, (int)rc);
    check(tl_dump.n == 1, "RequestEvent(HEAP_DUMP, level %s): %d HEAP_DUMP events on this thread before it returned", lv,
          tl_dump.n);
    a_rec("HEAP_DUMP level %s: RequestEvent returned %d, %d events", lv, (int)rc, tl_dump.n);
    return rc;
}

JNIEXPORT jint JNICALL Java_C_1HeapGraph_dumpObject(JNIEnv *env, jclass cls, jint key, jobject o)
{
    (void)cls;
    char where[120];
    snprintf(where, sizeof where, "OBJECT_DUMP of %s", key >= 0 && key < K_COUNT ? key_name[key] : "?");
    if (key < 0 || key >= K_COUNT)
        return -100;
    jobjectID id = a_jvmpi->jobject2jobjectID(o);
    check(id == kid[key], "%s: jobject2jobjectID gives %p now, %p at reg()", where, (void *)id, kid[key]);
    memset(&tl_obj, 0, sizeof tl_obj);
    tl_obj.active = 1;
    /* The spec asks agents to request OBJECT_DUMP with GC disabled. */
    a_jvmpi->DisableGC();
    jint rc = a_jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, id);
    a_jvmpi->EnableGC();
    tl_obj.active = 0;
    object_dumps_done++;
    if (!check(rc == JVMPI_SUCCESS && tl_obj.n == 1, "%s %p: RequestEvent returned %d with %d events", where, (void *)id,
               (int)rc, tl_obj.n)) {
        free(tl_obj.copy);
        return rc;
    }
    check(tl_obj.type == (JVMPI_EVENT_OBJECT_DUMP | JVMPI_REQUESTED_EVENT) && tl_obj.env == env,
          "%s: event_type 0x%x env %p, expected 0x%x on %p", where, (unsigned)tl_obj.type, (void *)tl_obj.env,
          (unsigned)(JVMPI_EVENT_OBJECT_DUMP | JVMPI_REQUESTED_EVENT), (void *)env);
    check(tl_obj.views_agree, "%s: the heap_dump view does not frame the data: %s", where, tl_obj.views);
    dr_dump d;
    dr_init(&d);
    if (check(tl_obj.copy && dr_parse_object(&d, tl_obj.copy, tl_obj.len, &live_ops) == 0, "%s: %s", where,
              tl_obj.copy ? d.err : "no data")) {
        check(d.n == 1 && d.r[0].id == id, "%s: the record describes %p, not %p", where, d.n ? d.r[0].id : NULL,
              (void *)id);
        for (int i = 0; i < N(graph); i++)
            if (graph[i].key == key)
                check_known(where, &d, &graph[i]);
        if (check(l2_rec[key] != NULL, "%s: no level 2 record to compare with", where)) {
            int same = l2_len[key] == tl_obj.len && memcmp(l2_rec[key], tl_obj.copy, tl_obj.len) == 0;
            size_t diff = 0;
            while (!same && diff < tl_obj.len && diff < l2_len[key] && l2_rec[key][diff] == tl_obj.copy[diff])
                diff++;
            check(same, "%s: %zu bytes differ from the level 2 heap dump's %zu-byte record (first difference at offset %zu)",
                  where, tl_obj.len, l2_len[key], diff);
            a_rec("%s: %zu bytes, %s the level 2 heap dump's record", where, tl_obj.len, same ? "same as" : "NOT same as");
        }
    }
    dr_free(&d);
    free(tl_obj.copy);
    tl_obj.copy = NULL;
    return rc;
}

JNIEXPORT jint JNICALL Java_C_1HeapGraph_badLevel(JNIEnv *env, jclass cls, jint level)
{
    (void)cls;
    JVMPI_HeapDumpArg arg = {level};
    memset(&tl_dump, 0, sizeof tl_dump);
    tl_dump.want_level = 2;
    tl_dump.env = env;
    tl_dump.active = 1;
    jint rc = a_jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg);
    tl_dump.active = 0;
    check(rc != JVMPI_SUCCESS, "RequestEvent(HEAP_DUMP, level %d) returned JVMPI_SUCCESS", (int)level);
    check(tl_dump.n == 0, "RequestEvent(HEAP_DUMP, level %d) delivered %d events", (int)level, tl_dump.n);
    a_rec("HEAP_DUMP bad level %d: RequestEvent returned %d, %d events", (int)level, (int)rc, tl_dump.n);
    return rc;
}

/* Names the class of each puzzling ID (NOTE lines, not checks). */
static void explain_puzzles(JNIEnv *env)
{
    jclass cc = (*env)->FindClass(env, "java/lang/Class");
    jmethodID get_name = cc ? (*env)->GetMethodID(env, cc, "getName", "()Ljava/lang/String;") : NULL;
    for (int i = 0; i < npuzzles && get_name; i++) {
        jobject o = a_jvmpi->jobjectID2jobject((jobjectID)puzzles[i]);
        char name[300] = "(jobjectID2jobject gave NULL)";
        int is_class = 0;
        if (o) {
            is_class = (*env)->IsInstanceOf(env, o, cc);
            jclass k = is_class ? (jclass)o : (*env)->GetObjectClass(env, o);
            jstring js = (*env)->CallObjectMethod(env, k, get_name);
            if ((*env)->ExceptionCheck(env))
                (*env)->ExceptionClear(env);
            const char *u = js ? (*env)->GetStringUTFChars(env, js, NULL) : NULL;
            snprintf(name, sizeof name, "%s", u ? u : "?");
            if (u)
                (*env)->ReleaseStringUTFChars(env, js, u);
        }
        const void *cl = class_id_of(name);
        jobject clo = cl ? a_jvmpi->jobjectID2jobject((jobjectID)cl) : NULL;
        int same = clo && o && is_class && (*env)->IsSameObject(env, clo, o);
        /* For objects: is the class ID their OBJECT_ALLOC named that same Class? */
        char alloc_note[160] = "";
        pthread_mutex_lock(&mu);
        oslot *os = is_class ? NULL : obj_find(puzzles[i]);
        const void *acls = os ? os->cls : NULL;
        pthread_mutex_unlock(&mu);
        if (acls && acls != cl) {
            jobject ao = a_jvmpi->jobjectID2jobject((jobjectID)acls);
            snprintf(alloc_note, sizeof alloc_note, "; its OBJECT_ALLOC class ID %p is %s", acls,
                     !ao ? "no object (jobjectID2jobject NULL)"
                     : (clo && (*env)->IsSameObject(env, ao, clo)) ? "the same Class object as the CLASS_LOAD ID's"
                     : (*env)->IsInstanceOf(env, ao, cc) ? "another Class object" : "not a Class");
        }
        a_rec("NOTE %p (%s): %s %s; CLASS_LOAD gave that class the ID %p%s%s", puzzles[i], puzzle_why[i],
              is_class ? "is the class" : "is an instance of", name, cl,
              is_class ? (same ? ", the same Class object" : ", a different Class object or none") : "", alloc_note);
    }
}

JNIEXPORT void JNICALL Java_C_1HeapGraph_finish(JNIEnv *env, jclass cls)
{
    (void)cls;
    explain_puzzles(env);
    check(dumps_done[0] == 1 && dumps_done[1] == 1 && dumps_done[2] == 2,
          "heap dumps read completely: level 0 %d, level 1 %d, level 2 %d (expected 1, 1, 2)", dumps_done[0],
          dumps_done[1], dumps_done[2]);
    finished = 1;
    a_rec("c_heapdump: finished, %d checks passed, %d failed", __atomic_load_n(&n_pass, __ATOMIC_SEQ_CST),
          __atomic_load_n(&a_failures, __ATOMIC_SEQ_CST));
}

/* ---- self-test of the reader on hand-built buffers ---- */
typedef struct {
    unsigned char *b;
    size_t n, cap;
} buf;

static void put(buf *w, const void *p, size_t n)
{
    if (w->n + n > w->cap) {
        w->cap = (w->n + n) * 2 + 64;
        w->b = realloc(w->b, w->cap);
    }
    memcpy(w->b + w->n, p, n);
    w->n += n;
}
static void put1(buf *w, unsigned v)
{
    unsigned char c = (unsigned char)v;
    put(w, &c, 1);
}
static void put2(buf *w, unsigned v)
{
    uint16_t x = htons((uint16_t)v);
    put(w, &x, 2);
}
static void put4(buf *w, uint32_t v)
{
    uint32_t x = htonl(v);
    put(w, &x, 4);
}
static void put8(buf *w, uint64_t v)
{
    put4(w, (uint32_t)(v >> 32));
    put4(w, (uint32_t)v);
}
static void putid(buf *w, uintptr_t v)
{
    const void *p = (const void *)v;
    put(w, &p, sizeof p);
}

/* Fake classes: A (0x1000) extends B (0x2000), implements I (0x3000). */
static const JVMPI_Field st_a_fields[] = {{"i", "I"}, {"r", "Ljava/lang/Object;"}};
static const JVMPI_Field st_a_statics[] = {{"s", "J"}, {"t", "[I"}, {"u", "C"}};
static const JVMPI_Field st_b_fields[] = {{"i", "I"}, {"z", "Z"}};

static int st_class_of(void *ctx, const void *id, dr_class *out)
{
    (void)ctx;
    memset(out, 0, sizeof *out);
    switch ((uintptr_t)id) {
    case 0x1000:
        *out = (dr_class){"A", 1, 3, st_a_statics, 2, st_a_fields};
        return 1;
    case 0x2000:
        *out = (dr_class){"B", 0, 0, NULL, 2, st_b_fields};
        return 1;
    case 0x3000:
        *out = (dr_class){"I", 0, 0, NULL, 0, NULL};
        return 1;
    case 0x4000:
        *out = (dr_class){"[LA;", 0, 0, NULL, 0, NULL};
        return 1;
    default:
        return 0;
    }
}
static const dr_ops st_ops = {NULL, st_class_of, NULL};

/* A level 1 or 2 dump; instance before its class dumps on purpose.  With
 * INST_BYTES_OVERRIDE the instance leaves out B.z and says so in its count:
 * well framed, but short of what CLASS_LOAD implies. */
static void st_build(buf *w, int level, uint32_t inst_bytes_override)
{
    w->n = 0;
    put1(w, JVMPI_GC_ROOT_JNI_GLOBAL); putid(w, 0xA1); putid(w, 0xBEEF);
    put1(w, JVMPI_GC_ROOT_JAVA_FRAME); putid(w, 0xA2); putid(w, 0xE1); put4(w, 1);
    put1(w, JVMPI_GC_ROOT_JNI_LOCAL); putid(w, 0xA2); putid(w, 0xE1); put4(w, 0xffffffffu);
    put1(w, JVMPI_GC_ROOT_STICKY_CLASS); putid(w, 0x2000);
    put1(w, JVMPI_GC_ROOT_THREAD_BLOCK); putid(w, 0xA3); putid(w, 0xE1);
    put1(w, JVMPI_GC_ROOT_NATIVE_STACK); putid(w, 0xA3); putid(w, 0xE1);
    put1(w, JVMPI_GC_ROOT_MONITOR_USED); putid(w, 0xA1);
    put1(w, JVMPI_GC_ROOT_UNKNOWN); putid(w, 0xA5);
    /* instance of A: A.i, A.r, then B.i, B.z */
    put1(w, JVMPI_GC_INSTANCE_DUMP); putid(w, 0xA2); putid(w, 0x1000);
    put4(w, inst_bytes_override ? inst_bytes_override : level == 2 ? 4 + 8 + 4 + 1 : 8);
    if (level == 2) put4(w, 7);
    putid(w, 0xA1);
    if (level == 2) {
        put4(w, 0xFFFFFFF7u);
        if (!inst_bytes_override)
            put1(w, 1);
    }
    put1(w, JVMPI_GC_CLASS_DUMP);
    putid(w, 0x1000); putid(w, 0x2000); putid(w, 0xC1); putid(w, 0); putid(w, 0); putid(w, 0xA4); putid(w, 0);
    put4(w, 40);
    putid(w, 0x3000);                         /* interfaces */
    put2(w, 0);                               /* constant pool: no entries */
    if (level == 2) put8(w, 0x1122334455667788ULL);   /* static s */
    putid(w, 0xA6);                                    /* static t */
    if (level == 2) put2(w, 'W');                      /* static u */
    put1(w, JVMPI_GC_CLASS_DUMP);
    putid(w, 0x2000); putid(w, 0); putid(w, 0); putid(w, 0); putid(w, 0); putid(w, 0); putid(w, 0);
    put4(w, 24); put2(w, 0);
    put1(w, JVMPI_GC_CLASS_DUMP);
    putid(w, 0x3000); putid(w, 0); putid(w, 0); putid(w, 0); putid(w, 0); putid(w, 0); putid(w, 0);
    put4(w, 0); put2(w, 0);
    put1(w, JVMPI_GC_OBJ_ARRAY_DUMP); putid(w, 0xA5); put4(w, 2); putid(w, 0x1000); putid(w, 0xA2); putid(w, 0);
    put1(w, JVMPI_GC_PRIM_ARRAY_DUMP); putid(w, 0xA6); put4(w, 3); put1(w, JVMPI_SHORT);
    if (level == 2) { put2(w, 1); put2(w, 0xFFFF); put2(w, 0x8000); }
    put1(w, JVMPI_GC_PRIM_ARRAY_DUMP); putid(w, 0xA7); put4(w, 1); put1(w, JVMPI_DOUBLE);
    if (level == 2) put8(w, 0x400A000000000000ULL);
}

static int st_bad(const char *what, buf *w, int level, const char *want_in_err)
{
    dr_dump d;
    dr_init(&d);
    int rc = dr_parse_heap(&d, w->b, w->b + w->n, level, &st_ops);
    int ok = check(rc != 0 && strstr(d.err, want_in_err) != NULL,
                   "self-test: %s: reader returned %d, message \"%s\", expected a failure mentioning \"%s\"", what, rc,
                   d.err, want_in_err);
    dr_free(&d);
    return ok;
}

static void self_test(void)
{
    buf w = {0};
    dr_dump d;
    dr_val v;
    char why[300];
    int before = a_failures;
    for (int level = 1; level <= 2; level++) {
        st_build(&w, level, 0);
        dr_init(&d);
        if (!check(dr_parse_heap(&d, w.b, w.b + w.n, level, &st_ops) == 0, "self-test level %d: %s", level, d.err))
            continue;
        check(d.n == 15, "self-test level %d: %zu records, expected 15", level, d.n);
        const dr_rec *r = dr_find(&d, (void *)0xA2);
        if (check(r && r->kind == JVMPI_GC_INSTANCE_DUMP && r->id2 == (void *)0x1000, "self-test level %d: instance",
                  level)) {
            check(dr_field(&d, &st_ops, r, "A", "r", &v, why, sizeof why) == 0 && v.ref == (void *)0xA1,
                  "self-test level %d: A.r", level);
            if (level == 2) {
                check(dr_field(&d, &st_ops, r, "A", "i", &v, why, sizeof why) == 0 && v.bits == 7,
                      "self-test: A.i %s", why);
                check(dr_field(&d, &st_ops, r, "B", "i", &v, why, sizeof why) == 0 && v.bits == 0xFFFFFFF7u,
                      "self-test: B.i %s", why);
                check(dr_field(&d, &st_ops, r, "B", "z", &v, why, sizeof why) == 0 && v.bits == 1,
                      "self-test: B.z %s", why);
            } else {
                check(dr_field(&d, &st_ops, r, "A", "i", &v, why, sizeof why) != 0,
                      "self-test: A.i present at level 1");
            }
        }
        r = dr_find(&d, (void *)0x1000);
        if (check(r && r->kind == JVMPI_GC_CLASS_DUMP, "self-test level %d: class dump of A", level)) {
            check(r->id2 == (void *)0x2000 && r->loader == (void *)0xC1 && r->name_str == (void *)0xA4 &&
                      r->num == 40 && r->n_ifaces == 1 && dr_id(&d, r->ifaces) == (void *)0x3000 && r->n_cp == 0,
                  "self-test level %d: class dump header of A", level);
            check(dr_static(&d, &st_ops, r, "t", &v, why, sizeof why) == 0 && v.ref == (void *)0xA6,
                  "self-test level %d: static t %s", level, why);
            if (level == 2) {
                check(dr_static(&d, &st_ops, r, "s", &v, why, sizeof why) == 0 && v.bits == 0x1122334455667788ULL,
                      "self-test: static s %s", why);
                check(dr_static(&d, &st_ops, r, "u", &v, why, sizeof why) == 0 && v.bits == 'W',
                      "self-test: static u %s", why);
            }
        }
        r = dr_find(&d, (void *)0xA6);
        if (check(r && r->kind == JVMPI_GC_PRIM_ARRAY_DUMP && r->num == 3 && r->ty == JVMPI_SHORT,
                  "self-test level %d: short[]", level) && level == 2) {
            check(dr_elem(&d, r, 1, &v) == 0 && v.bits == 0xFFFF && dr_elem(&d, r, 2, &v) == 0 && v.bits == 0x8000,
                  "self-test: short[] elements");
        }
        r = dr_find(&d, (void *)0xA7);
        if (level == 2 && check(r != NULL, "self-test: double[]"))
            check(dr_elem(&d, r, 0, &v) == 0 && v.bits == 0x400A000000000000ULL, "self-test: double[0]");
        r = dr_find(&d, (void *)0xA5);
        check(r && r->kind == JVMPI_GC_OBJ_ARRAY_DUMP && r->num == 2 && r->id2 == (void *)0x1000 &&
                  dr_elem(&d, r, 0, &v) == 0 && v.ref == (void *)0xA2 && dr_elem(&d, r, 1, &v) == 0 && !v.ref,
              "self-test level %d: object array", level);
        check(d.r[1].kind == JVMPI_GC_ROOT_JAVA_FRAME && d.r[1].num == 1 && d.r[1].id2 == (void *)0xE1 &&
                  d.r[2].num == DR_NO_FRAME && d.r[0].id2 == (void *)0xBEEF,
              "self-test level %d: roots", level);
        /* One object dump: the instance record alone, supers from the dump just read. */
        if (level == 2) {
            const dr_rec *ri = dr_find(&d, (void *)0xA2);
            dr_dump o;
            dr_init(&o);
            /* B's super comes from nowhere in a lone record: expect a loud failure. */
            check(dr_parse_object(&o, d.b + ri->off, ri->len, &st_ops) != 0 && strstr(o.err, "super of class") != NULL,
                  "self-test: object dump without supers accepted (%s)", o.err);
            dr_free(&o);
            const dr_rec *ra = dr_find(&d, (void *)0xA6);
            check(dr_parse_object(&o, d.b + ra->off, ra->len, &st_ops) == 0 && o.n == 1, "self-test: object dump of short[]: %s",
                  o.err);
            dr_free(&o);
            check(dr_parse_object(&o, d.b + ra->off, ra->len - 1, &st_ops) != 0, "self-test: short object dump accepted");
            dr_free(&o);
        }
        dr_free(&d);
    }
    /* Failures the reader must report, with the offset. */
    st_build(&w, 2, 0);
    w.n--;
    st_bad("truncated level 2 dump", &w, 2, "remain");
    st_build(&w, 2, 0);
    put1(&w, 0x99);
    st_bad("trailing byte", &w, 2, "record type 0x99");
    st_build(&w, 2, 0);
    put1(&w, JVMPI_GC_ROOT_THREAD_OBJ);
    putid(&w, 0xA3);
    st_bad("record type with no known body", &w, 2, "record type 0x08");
    st_build(&w, 2, 4 + 8 + 4);
    st_bad("instance byte count short of the fields", &w, 2, "imply 17");
    st_build(&w, 1, 0);
    st_bad("level 1 dump read as level 2", &w, 2, "offset");
    st_build(&w, 2, 0);
    st_bad("level 2 dump read as level 1", &w, 1, "offset");
    w.n = 0;
    put1(&w, JVMPI_GC_INSTANCE_DUMP); putid(&w, 0xA9); putid(&w, 0x5000); put4(&w, 0);
    st_bad("instance of an unknown class", &w, 2, "no CLASS_LOAD");
    /* Level 0. */
    w.n = 0;
    put1(&w, JVMPI_NORMAL_OBJECT); putid(&w, 0xA2);
    put1(&w, JVMPI_CLASS); putid(&w, 0xA5);
    put1(&w, JVMPI_SHORT); putid(&w, 0xA6);
    dr_init(&d);
    if (check(dr_parse_heap(&d, w.b, w.b + w.n, 0, &st_ops) == 0, "self-test level 0: %s", d.err))
        check(d.n == 3 && dr_find(&d, (void *)0xA5) && dr_find(&d, (void *)0xA5)->kind == JVMPI_CLASS &&
                  dr_find(&d, (void *)0xA6)->kind == JVMPI_SHORT,
              "self-test level 0 records");
    dr_free(&d);
    put1(&w, 3);
    putid(&w, 0xAA);
    st_bad("level 0 type 3", &w, 0, "object type 3");
    w.n -= 1 + sizeof(void *) + 2;
    st_bad("level 0 truncated ID", &w, 0, "remain");
    free(w.b);
    a_rec("self-test of the dump reader: %s", a_failures == before ? "passed" : "FAILED");
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    if (a_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    char *v;
    if ((v = a_opt(options, "alloc")))
        opt_alloc = atoi(v), free(v);
    if ((v = a_opt(options, "sample")))
        opt_sample = atoi(v), free(v);
    if ((v = a_opt(options, "cap")))
        opt_cap = atoi(v), free(v);
    a_rec("START alloc=%d sample=%d cap=%d", opt_alloc, opt_sample, opt_cap);
    self_test();
    a_jvmpi->NotifyEvent = notify;
    a_expect_enable(JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD");
    a_expect_enable(JVMPI_EVENT_THREAD_START, "THREAD_START");
    a_expect_enable(JVMPI_EVENT_THREAD_END, "THREAD_END");
    a_expect_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    if (opt_alloc)
        a_expect_enable(JVMPI_EVENT_OBJECT_ALLOC, "OBJECT_ALLOC");
    return JNI_OK;
}
