/*
 * hprof_dump.c - HEAP_DUMP: the JVMPI level 2 buffer read and written out as
 * the ascii HEAP DUMP section or the binary HEAP DUMP record.
 *
 * The buffer (JVMPI spec section 4.2) has u1/u2/u4/u8 in network order and
 * IDs as native pointers; a CLASS_DUMP's interfaces and statics and an
 * INSTANCE_DUMP's values can only be stepped over with what CLASS_LOAD said
 * about the class, so the buffer is read twice: once to learn every class
 * (asking the VM for any it did not tell of) and each class's super, once to
 * write.
 *
 * Runs in the HEAP_DUMP handler, on the thread that asked for it, with the
 * agent's lock held and GC disabled by the VM for the whole of it.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "hprof.h"

typedef struct {
    const unsigned char *p;
    const unsigned char *end;
    int bad;
} reader;

static int need(reader *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return 0;
    }
    return 1;
}

static unsigned rd_u1(reader *r)
{
    if (!need(r, 1)) {
        return 0;
    }
    return *r->p++;
}

static unsigned rd_u2(reader *r)
{
    uint16_t v;
    if (!need(r, 2)) {
        return 0;
    }
    memcpy(&v, r->p, 2);
    r->p += 2;
    return ntohs(v);
}

static uint32_t rd_u4(reader *r)
{
    uint32_t v;
    if (!need(r, 4)) {
        return 0;
    }
    memcpy(&v, r->p, 4);
    r->p += 4;
    return ntohl(v);
}

static void *rd_id(reader *r)
{
    void *v;
    if (!need(r, sizeof v)) {
        return NULL;
    }
    memcpy(&v, r->p, sizeof v);
    r->p += sizeof v;
    return v;
}

static const unsigned char *rd_skip(reader *r, size_t n)
{
    const unsigned char *at = r->p;
    if (!need(r, n)) {
        return NULL;
    }
    r->p += n;
    return at;
}

/* JVMPI and the binary format number the basic types alike: 2 for
 * references, 4..11 for the primitives (the newarray codes). */
static int sig_type(const char *sig)
{
    switch (sig[0]) {
    case 'Z': return HPROF_T_BOOLEAN;
    case 'C': return HPROF_T_CHAR;
    case 'F': return HPROF_T_FLOAT;
    case 'D': return HPROF_T_DOUBLE;
    case 'B': return HPROF_T_BYTE;
    case 'S': return HPROF_T_SHORT;
    case 'I': return HPROF_T_INT;
    case 'J': return HPROF_T_LONG;
    default: return HPROF_T_OBJECT;
    }
}

static size_t type_size(int type)
{
    switch (type) {
    case HPROF_T_BOOLEAN:
    case HPROF_T_BYTE:
        return 1;
    case HPROF_T_CHAR:
    case HPROF_T_SHORT:
        return 2;
    case HPROF_T_FLOAT:
    case HPROF_T_INT:
        return 4;
    case HPROF_T_DOUBLE:
    case HPROF_T_LONG:
        return 8;
    default:
        return sizeof(void *);
    }
}

static const char *type_name(int type)
{
    switch (type) {
    case HPROF_T_BOOLEAN: return "boolean";
    case HPROF_T_BYTE: return "byte";
    case HPROF_T_CHAR: return "char";
    case HPROF_T_SHORT: return "short";
    case HPROF_T_INT: return "int";
    case HPROF_T_LONG: return "long";
    case HPROF_T_FLOAT: return "float";
    case HPROF_T_DOUBLE: return "double";
    default: return "object";
    }
}

static int is_ref_type(int ty) { return ty == HPROF_T_OBJECT || ty == 0 || ty == 1; }

static uint64_t idv(const void *p) { return (uint64_t)(uintptr_t)p; }

/* ---- pass 1 ------------------------------------------------------------- */

typedef struct {
    long objects;
    long long bytes;
    hprof_map dumped;      /* classes with a CLASS_DUMP in the buffer */
    int failed;
} scan;

static hprof_class *known_class(jobjectID id)
{
    return id != NULL ? hprof_class_lookup(id) : NULL;
}

static void count_object(scan *s, jobjectID id)
{
    jint size = 0;
    hprof_trace *t;
    if (!hprof_heap_object(id, &size, &t)) {
        hprof_heap_request_object(id, &size, NULL);
    }
    s->objects++;
    s->bytes += size;
}

static int skip_root(reader *r, unsigned kind)
{
    switch (kind) {
    case JVMPI_GC_ROOT_UNKNOWN:
    case JVMPI_GC_ROOT_STICKY_CLASS:
    case JVMPI_GC_ROOT_MONITOR_USED:
        rd_id(r);
        return 1;
    case JVMPI_GC_ROOT_JNI_GLOBAL:
    case JVMPI_GC_ROOT_NATIVE_STACK:
    case JVMPI_GC_ROOT_THREAD_BLOCK:
        rd_id(r);
        rd_id(r);
        return 1;
    case JVMPI_GC_ROOT_JNI_LOCAL:
    case JVMPI_GC_ROOT_JAVA_FRAME:
        rd_id(r);
        rd_id(r);
        rd_u4(r);
        return 1;
    default:
        return 0;
    }
}

/* Steps over a CLASS_DUMP body after its class ID; NULL class: cannot. */
static void skip_class_body(reader *r, hprof_class *c, jobjectID *super)
{
    *super = rd_id(r);
    for (int i = 0; i < 5; i++) {
        rd_id(r); /* loader, signers, domain, name, reserved */
    }
    rd_u4(r);
    for (int i = 0; i < c->num_interfaces; i++) {
        rd_id(r);
    }
    unsigned ncp = rd_u2(r);
    for (unsigned i = 0; i < ncp && !r->bad; i++) {
        rd_u2(r);
        unsigned ty = rd_u1(r);
        rd_skip(r, type_size((int)ty));
    }
    for (int i = 0; i < c->num_statics; i++) {
        rd_skip(r, type_size(sig_type(c->statics[i].sig)));
    }
}

static int scan_dump(const unsigned char *begin, const unsigned char *end, scan *s)
{
    reader r = {begin, end, 0};
    while (r.p < r.end && !r.bad) {
        unsigned kind = rd_u1(&r);
        if (skip_root(&r, kind)) {
            continue;
        }
        switch (kind) {
        case JVMPI_GC_CLASS_DUMP: {
            jobjectID id = rd_id(&r);
            hprof_class *c = known_class(id);
            jobjectID super;
            if (c == NULL) {
                hprof_error("heap dump: class %p is unknown even after a CLASS_LOAD request; dump cut short",
                            (void *)id);
                return -1;
            }
            skip_class_body(&r, c, &super);
            c->super = super;
            hprof_map_put(&s->dumped, idv(id), 1);
            break;
        }
        case JVMPI_GC_INSTANCE_DUMP: {
            jobjectID id = rd_id(&r);
            known_class(rd_id(&r));
            rd_skip(&r, rd_u4(&r));
            count_object(s, id);
            break;
        }
        case JVMPI_GC_OBJ_ARRAY_DUMP: {
            jobjectID id = rd_id(&r);
            uint32_t n = rd_u4(&r);
            known_class(rd_id(&r));
            rd_skip(&r, (size_t)n * sizeof(void *));
            count_object(s, id);
            break;
        }
        case JVMPI_GC_PRIM_ARRAY_DUMP: {
            jobjectID id = rd_id(&r);
            uint32_t n = rd_u4(&r);
            unsigned ty = rd_u1(&r);
            rd_skip(&r, (size_t)n * type_size((int)ty));
            count_object(s, id);
            break;
        }
        default:
            hprof_error("heap dump: unknown record type 0x%02x at offset %ld; dump cut short", kind,
                        (long)(r.p - 1 - begin));
            return -1;
        }
    }
    if (r.bad) {
        hprof_error("heap dump: the buffer ends inside a record; dump cut short");
        return -1;
    }
    return 0;
}

/* The array class whose elements are of class elem: "[Lx;" or "[[I"... */
static hprof_class *array_class_of(hprof_class *elem)
{
    char name[1100];
    if (elem == NULL) {
        return hprof_class_by_name("[Ljava.lang.Object;");
    }
    if (elem->name[0] == '[') {
        snprintf(name, sizeof name, "[%s", elem->name);
    } else {
        snprintf(name, sizeof name, "[L%s;", elem->name);
    }
    hprof_class *c = hprof_class_by_name(name);
    return c != NULL ? c : hprof_class_by_name("[Ljava.lang.Object;");
}

static hprof_trace *trace_of(jobjectID id, jint *size)
{
    hprof_trace *t = NULL;
    *size = 0;
    if (!hprof_heap_object(id, size, &t) || t == NULL) {
        t = hprof_trace_empty();
    }
    return t;
}

/* ---- ascii --------------------------------------------------------------- */

static void ascii_ref(const char *label, const void *id)
{
    if (id != NULL) {
        hprof_printf("\t%s\t%llx\n", label, (unsigned long long)idv(id));
    }
}

static void ascii_root(reader *r, unsigned kind)
{
    void *id = rd_id(r);
    switch (kind) {
    case JVMPI_GC_ROOT_JNI_GLOBAL: {
        void *ref = rd_id(r);
        hprof_printf("ROOT %llx (kind=<JNI global ref>, id=%llx)\n", (unsigned long long)idv(id),
                     (unsigned long long)idv(ref));
        break;
    }
    case JVMPI_GC_ROOT_JNI_LOCAL:
    case JVMPI_GC_ROOT_JAVA_FRAME: {
        JNIEnv *env = rd_id(r);
        int32_t frame = (int32_t)rd_u4(r);
        hprof_printf("ROOT %llx (kind=<%s>, thread=%d, frame=%d)\n", (unsigned long long)idv(id),
                     kind == JVMPI_GC_ROOT_JNI_LOCAL ? "JNI local ref" : "Java stack", hprof_thread_serial(env),
                     (int)frame);
        break;
    }
    case JVMPI_GC_ROOT_NATIVE_STACK:
    case JVMPI_GC_ROOT_THREAD_BLOCK: {
        JNIEnv *env = rd_id(r);
        hprof_printf("ROOT %llx (kind=<%s>, thread=%d)\n", (unsigned long long)idv(id),
                     kind == JVMPI_GC_ROOT_NATIVE_STACK ? "native stack" : "thread block",
                     hprof_thread_serial(env));
        break;
    }
    case JVMPI_GC_ROOT_STICKY_CLASS:
        hprof_printf("ROOT %llx (kind=<system class>)\n", (unsigned long long)idv(id));
        break;
    case JVMPI_GC_ROOT_MONITOR_USED:
        hprof_printf("ROOT %llx (kind=<busy monitor>)\n", (unsigned long long)idv(id));
        break;
    default:
        hprof_printf("ROOT %llx (kind=<unknown>)\n", (unsigned long long)idv(id));
        break;
    }
}

static void ascii_fields(reader *r, jobjectID cls, uint32_t nbytes)
{
    const unsigned char *stop = r->p + nbytes;
    hprof_class *c = hprof_class_find(cls);
    for (int depth = 0; c != NULL && depth < 256 && r->p < stop; depth++) {
        for (int i = 0; i < c->num_instances && r->p < stop; i++) {
            int ty = sig_type(c->instances[i].sig);
            if (ty == HPROF_T_OBJECT) {
                ascii_ref(c->instances[i].name, rd_id(r));
            } else {
                rd_skip(r, type_size(ty));
            }
        }
        c = hprof_class_find(c->super);
    }
    if (r->p != stop) {
        r->p = stop; /* what CLASS_LOAD said and the dump disagree: go by the dump */
    }
}

static void ascii_dump(const unsigned char *begin, const unsigned char *end, const scan *s)
{
    char date[64], name[1024];
    reader rd = {begin, end, 0};
    reader *r = &rd;
    hprof_printf("HEAP DUMP BEGIN (%ld objects, %lld bytes) %s\n", s->objects, s->bytes,
                 hprof_date(date, sizeof date));
    while (r->p < r->end && !r->bad) {
        unsigned kind = rd_u1(r);
        switch (kind) {
        case JVMPI_GC_CLASS_DUMP: {
            jobjectID id = rd_id(r);
            hprof_class *c = hprof_class_find(id);
            hprof_printf("CLS %llx (name=", (unsigned long long)idv(id));
            hprof_class_print_name(c != NULL ? c->name : "<Unknown class>", name, sizeof name);
            hprof_printf("%s, trace=%d)\n", name, hprof_trace_empty()->serial);
            ascii_ref("super", rd_id(r));
            ascii_ref("loader", rd_id(r));
            ascii_ref("signers", rd_id(r));
            ascii_ref("domain", rd_id(r));
            rd_id(r); /* name string */
            rd_id(r); /* reserved */
            rd_u4(r);
            for (int i = 0; c != NULL && i < c->num_interfaces; i++) {
                rd_id(r);
            }
            unsigned ncp = rd_u2(r);
            for (unsigned i = 0; i < ncp && !r->bad; i++) {
                unsigned index = rd_u2(r);
                unsigned ty = rd_u1(r);
                if (is_ref_type((int)ty)) {
                    char label[32];
                    snprintf(label, sizeof label, "constant pool[%u]", index);
                    ascii_ref(label, rd_id(r));
                } else {
                    rd_skip(r, type_size((int)ty));
                }
            }
            for (int i = 0; c != NULL && i < c->num_statics; i++) {
                int ty = sig_type(c->statics[i].sig);
                if (ty == HPROF_T_OBJECT) {
                    char label[600];
                    snprintf(label, sizeof label, "static %s", c->statics[i].name);
                    ascii_ref(label, rd_id(r));
                } else {
                    rd_skip(r, type_size(ty));
                }
            }
            break;
        }
        case JVMPI_GC_INSTANCE_DUMP: {
            jobjectID id = rd_id(r);
            jobjectID cls = rd_id(r);
            uint32_t n = rd_u4(r);
            jint size;
            hprof_trace *t = trace_of(id, &size);
            hprof_class *c = hprof_class_find(cls);
            hprof_class_print_name(c != NULL ? c->name : "<Unknown class>", name, sizeof name);
            hprof_printf("OBJ %llx (sz=%d, trace=%d, class=%s@%llx)\n", (unsigned long long)idv(id), (int)size,
                         t->serial, name, (unsigned long long)idv(cls));
            if (need(r, n)) {
                ascii_fields(r, cls, n);
            }
            break;
        }
        case JVMPI_GC_OBJ_ARRAY_DUMP: {
            jobjectID id = rd_id(r);
            uint32_t n = rd_u4(r);
            jobjectID elem = rd_id(r);
            jint size;
            hprof_trace *t = trace_of(id, &size);
            hprof_class *c = hprof_class_find(elem);
            hprof_class_print_name(c != NULL ? c->name : "java.lang.Object", name, sizeof name);
            hprof_printf("ARR %llx (sz=%d, trace=%d, nelems=%u, elem type=%s@%llx)\n", (unsigned long long)idv(id),
                         (int)size, t->serial, n, name, (unsigned long long)idv(elem));
            for (uint32_t i = 0; i < n && !r->bad; i++) {
                char label[32];
                snprintf(label, sizeof label, "[%u]", i);
                ascii_ref(label, rd_id(r));
            }
            break;
        }
        case JVMPI_GC_PRIM_ARRAY_DUMP: {
            jobjectID id = rd_id(r);
            uint32_t n = rd_u4(r);
            unsigned ty = rd_u1(r);
            jint size;
            hprof_trace *t = trace_of(id, &size);
            rd_skip(r, (size_t)n * type_size((int)ty));
            hprof_printf("ARR %llx (sz=%d, trace=%d, nelems=%u, elem type=%s)\n", (unsigned long long)idv(id),
                         (int)size, t->serial, n, type_name((int)ty));
            break;
        }
        default:
            ascii_root(r, kind);
            break;
        }
    }
    hprof_printf("HEAP DUMP END\n");
}

/* ---- binary -------------------------------------------------------------- */

/* A value of type ty from the buffer: IDs turn from native to network order. */
static void bin_value(reader *r, int ty)
{
    if (is_ref_type(ty)) {
        hprof_id(idv(rd_id(r)));
    } else {
        size_t n = type_size(ty);
        const unsigned char *at = rd_skip(r, n);
        if (at != NULL) {
            hprof_bytes(at, n);
        }
    }
}

static hprof_class *object_class;

/* CLASS DUMP for a class the VM's dump has none of (array classes, as a
 * rule): readers need one for every class an object names. */
static void bin_synthetic_class(hprof_class *c)
{
    hprof_u1(HPROF_GC_CLASS_DUMP);
    hprof_id(idv(c->id));
    hprof_u4((uint32_t)hprof_trace_empty()->serial);
    hprof_id(object_class != NULL && object_class != c ? idv(object_class->id) : 0);
    for (int i = 0; i < 5; i++) {
        hprof_id(0); /* loader, signers, domain, reserved x2 */
    }
    hprof_u4(0);
    hprof_u2(0);
    hprof_u2(0);
    hprof_u2(0);
}

static void bin_class(reader *r)
{
    jobjectID id = rd_id(r);
    hprof_class *c = hprof_class_find(id);
    hprof_u1(HPROF_GC_CLASS_DUMP);
    hprof_id(idv(id));
    hprof_u4((uint32_t)hprof_trace_empty()->serial);
    hprof_id(idv(rd_id(r))); /* super */
    hprof_id(idv(rd_id(r))); /* loader */
    hprof_id(idv(rd_id(r))); /* signers */
    hprof_id(idv(rd_id(r))); /* protection domain */
    rd_id(r);                /* name String: no place for it */
    rd_id(r);
    hprof_id(0);
    hprof_id(0);
    hprof_u4(rd_u4(r));
    for (int i = 0; c != NULL && i < c->num_interfaces; i++) {
        rd_id(r);
    }
    unsigned ncp = rd_u2(r);
    hprof_u2(ncp);
    for (unsigned i = 0; i < ncp && !r->bad; i++) {
        hprof_u2(rd_u2(r));
        unsigned ty = rd_u1(r);
        hprof_u1(is_ref_type((int)ty) ? HPROF_T_OBJECT : ty);
        bin_value(r, (int)ty);
    }
    int ns = c != NULL ? c->num_statics : 0;
    hprof_u2((unsigned)ns);
    for (int i = 0; i < ns; i++) {
        int ty = sig_type(c->statics[i].sig);
        hprof_id(hprof_string_id(c->statics[i].name));
        hprof_u1((unsigned)ty);
        bin_value(r, ty);
    }
    int ni = c != NULL ? c->num_instances : 0;
    hprof_u2((unsigned)ni);
    for (int i = 0; i < ni; i++) {
        hprof_id(hprof_string_id(c->instances[i].name));
        hprof_u1((unsigned)sig_type(c->instances[i].sig));
    }
}

static void bin_instance(reader *r)
{
    jobjectID id = rd_id(r);
    jobjectID cls = rd_id(r);
    uint32_t n = rd_u4(r);
    jint size;
    if (!need(r, n)) {
        return;
    }
    hprof_u1(HPROF_GC_INSTANCE_DUMP);
    hprof_id(idv(id));
    hprof_u4((uint32_t)trace_of(id, &size)->serial);
    hprof_id(idv(cls));
    hprof_u4(n);
    const unsigned char *stop = r->p + n;
    hprof_class *c = hprof_class_find(cls);
    for (int depth = 0; c != NULL && depth < 256; depth++) {
        for (int i = 0; i < c->num_instances; i++) {
            int ty = sig_type(c->instances[i].sig);
            if ((size_t)(stop - r->p) < type_size(ty)) {
                goto rest;
            }
            bin_value(r, ty);
        }
        c = hprof_class_find(c->super);
    }
rest:
    /* Bytes CLASS_LOAD does not explain: kept as they are, so the length holds. */
    if (r->p < stop) {
        hprof_bytes(r->p, (size_t)(stop - r->p));
        r->p = stop;
    }
}

static void bin_root(reader *r, unsigned kind)
{
    void *id = rd_id(r);
    switch (kind) {
    case JVMPI_GC_ROOT_JNI_GLOBAL:
        hprof_u1(HPROF_GC_ROOT_JNI_GLOBAL);
        hprof_id(idv(id));
        hprof_id(idv(rd_id(r)));
        return;
    case JVMPI_GC_ROOT_JNI_LOCAL:
    case JVMPI_GC_ROOT_JAVA_FRAME: {
        int serial = hprof_thread_serial(rd_id(r));
        uint32_t frame = rd_u4(r);
        if (serial > 0) {
            hprof_u1(kind == JVMPI_GC_ROOT_JNI_LOCAL ? HPROF_GC_ROOT_JNI_LOCAL : HPROF_GC_ROOT_JAVA_FRAME);
            hprof_id(idv(id));
            hprof_u4((uint32_t)serial);
            hprof_u4(frame);
            return;
        }
        break;
    }
    case JVMPI_GC_ROOT_NATIVE_STACK:
    case JVMPI_GC_ROOT_THREAD_BLOCK: {
        int serial = hprof_thread_serial(rd_id(r));
        if (serial > 0) {
            hprof_u1(kind == JVMPI_GC_ROOT_NATIVE_STACK ? HPROF_GC_ROOT_NATIVE_STACK : HPROF_GC_ROOT_THREAD_BLOCK);
            hprof_id(idv(id));
            hprof_u4((uint32_t)serial);
            return;
        }
        break;
    }
    case JVMPI_GC_ROOT_STICKY_CLASS:
        hprof_u1(HPROF_GC_ROOT_STICKY_CLASS);
        hprof_id(idv(id));
        return;
    case JVMPI_GC_ROOT_MONITOR_USED:
        hprof_u1(HPROF_GC_ROOT_MONITOR_USED);
        hprof_id(idv(id));
        return;
    default:
        break;
    }
    /* A thread the agent was never told of: still a root. */
    hprof_u1(HPROF_GC_ROOT_UNKNOWN);
    hprof_id(idv(id));
}

static void bin_dump(const unsigned char *begin, const unsigned char *end, scan *s)
{
    int n;
    hprof_class **all = hprof_class_all(&n);
    object_class = hprof_class_by_name("java.lang.Object");
    /* Everything the HEAP DUMP record will point at goes out before it. */
    for (int i = 0; i < n; i++) {
        hprof_class *c = all[i];
        if (c->unloaded) {
            continue;
        }
        hprof_class_write_load(c);
        for (int k = 0; k < c->num_statics; k++) {
            hprof_string_id(c->statics[k].name);
        }
        for (int k = 0; k < c->num_instances; k++) {
            hprof_string_id(c->instances[k].name);
        }
    }
    hprof_record_begin(HPROF_REC_HEAP_DUMP);
    for (int i = 0; i < n; i++) {
        if (!all[i]->unloaded && !hprof_map_get(&s->dumped, idv(all[i]->id), NULL)) {
            bin_synthetic_class(all[i]);
        }
    }
    int nt;
    hprof_thread **threads = hprof_thread_all(&nt);
    for (int i = 0; i < nt; i++) {
        jint size;
        hprof_trace *t;
        if (threads[i]->alive && threads[i]->obj != NULL && hprof_heap_object(threads[i]->obj, &size, &t)) {
            hprof_u1(HPROF_GC_ROOT_THREAD_OBJ);
            hprof_id(idv(threads[i]->obj));
            hprof_u4((uint32_t)threads[i]->serial);
            hprof_u4((uint32_t)hprof_trace_empty()->serial);
        }
    }
    reader rd = {begin, end, 0};
    reader *r = &rd;
    while (r->p < r->end && !r->bad) {
        unsigned kind = rd_u1(r);
        switch (kind) {
        case JVMPI_GC_CLASS_DUMP:
            bin_class(r);
            break;
        case JVMPI_GC_INSTANCE_DUMP:
            bin_instance(r);
            break;
        case JVMPI_GC_OBJ_ARRAY_DUMP: {
            jobjectID id = rd_id(r);
            uint32_t count = rd_u4(r);
            hprof_class *ac = array_class_of(hprof_class_find(rd_id(r)));
            jint size;
            if (!need(r, (size_t)count * sizeof(void *))) {
                break;
            }
            hprof_u1(HPROF_GC_OBJ_ARRAY_DUMP);
            hprof_id(idv(id));
            hprof_u4((uint32_t)trace_of(id, &size)->serial);
            hprof_u4(count);
            hprof_id(ac != NULL ? idv(ac->id) : 0);
            for (uint32_t i = 0; i < count; i++) {
                hprof_id(idv(rd_id(r)));
            }
            break;
        }
        case JVMPI_GC_PRIM_ARRAY_DUMP: {
            jobjectID id = rd_id(r);
            uint32_t count = rd_u4(r);
            unsigned ty = rd_u1(r);
            size_t bytes = (size_t)count * type_size((int)ty);
            jint size;
            const unsigned char *at = rd_skip(r, bytes);
            if (at == NULL) {
                break;
            }
            hprof_u1(HPROF_GC_PRIM_ARRAY_DUMP);
            hprof_id(idv(id));
            hprof_u4((uint32_t)trace_of(id, &size)->serial);
            hprof_u4(count);
            hprof_u1(ty);
            hprof_bytes(at, bytes);
            break;
        }
        default:
            bin_root(r, kind);
            break;
        }
    }
    hprof_record_end();
}

void hprof_dump_heap_event(JVMPI_Event *ev)
{
    const unsigned char *begin = (const unsigned char *)ev->u.heap_dump.begin;
    const unsigned char *end = (const unsigned char *)ev->u.heap_dump.end;
    if (ev->u.heap_dump.dump_level != JVMPI_DUMP_LEVEL_2) {
        hprof_error("heap dump: level %d delivered, level 2 was asked for; not written",
                    (int)ev->u.heap_dump.dump_level);
        return;
    }
    if (begin == NULL || end < begin) {
        return;
    }
    scan s;
    memset(&s, 0, sizeof s);
    hprof_map_init(&s.dumped, 4096);
    if (scan_dump(begin, end, &s) == 0) {
        /* Traces of objects asked for in the scan, and any new class's frames. */
        hprof_trace_write_pending();
        if (hprof_opt.binary) {
            bin_dump(begin, end, &s);
        } else {
            ascii_dump(begin, end, &s);
        }
    }
    free(s.dumped.keys);
    free(s.dumped.vals);
}
