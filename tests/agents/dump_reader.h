/*
 * dump_reader.h - an independent reader of JVMPI dump buffers (HEAP_DUMP at
 * levels 0, 1 and 2, and single OBJECT_DUMP records), for test agents.
 *
 * Written from the JVMPI specification's dump format only (u1/u2/u4/u8
 * big-endian, IDs and pointers as native words), not from the layer's
 * writer: the point is that two readings of the format meet.
 *
 * The format is not self-describing: a class dump's length depends on the
 * class's interface count and static field signatures, an instance dump's
 * byte count on the instance fields of the class and of all its supers.
 * Those come from CLASS_LOAD, through the caller's dr_ops.  Supers come from
 * the dump's own class dumps (so instance dumps are checked in a second
 * pass, after every class dump has been seen), else from dr_ops.super_of.
 *
 * Every byte from begin to end must belong to a record; anything the reader
 * cannot account for stops it with a message naming the offset (d->err).
 *
 * Header-only and static, like the agents' other helpers: each agent is its
 * own shared library.
 */
#ifndef DUMP_READER_H_
#define DUMP_READER_H_

#include <jvmpi.h>

#include <arpa/inet.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DR_PTR ((size_t)sizeof(void *))
#define DR_NO_FRAME 0xffffffffu

/* One class as its CLASS_LOAD described it. */
typedef struct {
    const char *name;
    int num_interfaces;
    int n_statics;
    const JVMPI_Field *statics;
    int n_fields;
    const JVMPI_Field *fields; /* this class's own instance fields */
} dr_class;

typedef struct {
    void *ctx;
    /* Fills OUT for CLASS_ID; returns 0 if the class is unknown. */
    int (*class_of)(void *ctx, const void *class_id, dr_class *out);
    /* Super of CLASS_ID learnt elsewhere (an earlier dump); 0 if unknown.
     * May be NULL: then only the dump's own class dumps give supers. */
    int (*super_of)(void *ctx, const void *class_id, const void **super);
} dr_ops;

typedef struct {
    unsigned char kind; /* record type; at level 0 the object type */
    size_t off;         /* offset of the record's first byte */
    size_t len;         /* bytes of the whole record */
    const void *id;     /* root object, class, instance or array */
    const void *id2;    /* root: JNIEnv * or global jobject; class dump: super;
                           instance: class; object array: element class */
    uint32_t num;       /* root: frame #; class dump: instance size;
                           instance: byte count; arrays: element count */
    unsigned char ty;   /* primitive array: element type */
    size_t data;        /* instance values, array elements, class statics */
    int has_data;       /* 0 for primitive arrays at level 1 */
    /* class dumps only */
    const void *loader, *signers, *domain, *name_str, *reserved;
    int n_ifaces;
    size_t ifaces;
    unsigned n_cp;      /* always 0 once read */
} dr_rec;

typedef struct {
    const void *cls, *super;
} dr_super;

typedef struct {
    const unsigned char *b;
    size_t size;
    int level;
    dr_rec *r;
    size_t n, cap;
    dr_super *sup; /* from this dump's class dumps, sorted by cls */
    size_t nsup;
    const dr_rec **index; /* records with an object of their own, by id */
    size_t nindex;
    char err[600];
    /* Lenient: an instance dump whose byte count cannot be checked against
     * CLASS_LOAD (class unknown, or counts disagree) is still framed by its
     * own count; it is counted in n_bad (first message in err) and the walk
     * goes on.  Strict (0): the walk stops there. */
    int lenient;
    size_t n_bad;
} dr_dump;

typedef struct {
    char sig; /* 'Z','B','C','S','I','J','F','D', or 'L' for references */
    uint64_t bits;
    const void *ref;
} dr_val;

/* Roles of the IDs dr_each_id hands out. */
enum {
    DR_SELF = 1, /* the object a record describes */
    DR_CLASS,    /* must be a class */
    DR_REF,      /* any object or class (field, element, root object...) */
    DR_ENV       /* a thread's JNIEnv * */
};

static inline void dr_init(dr_dump *d)
{
    memset(d, 0, sizeof *d);
}

static inline void dr_free(dr_dump *d)
{
    int lenient = d->lenient;
    free(d->r);
    free(d->sup);
    free(d->index);
    memset(d, 0, sizeof *d);
    d->lenient = lenient;
}

__attribute__((format(printf, 3, 4)))
static inline int dr_error(dr_dump *d, size_t off, const char *fmt, ...)
{
    int n = snprintf(d->err, sizeof d->err, "level %d dump of %zu bytes, offset %zu (0x%zx): ", d->level,
                     d->size, off, off);
    if (n < 0 || (size_t)n >= sizeof d->err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err + n, sizeof d->err - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- raw reads (no bounds checks: callers check with dr_need) ---- */

static inline unsigned dr_u1(const dr_dump *d, size_t off)
{
    return d->b[off];
}

static inline unsigned dr_u2(const dr_dump *d, size_t off)
{
    uint16_t v;
    memcpy(&v, d->b + off, 2);
    return ntohs(v);
}

static inline uint32_t dr_u4(const dr_dump *d, size_t off)
{
    uint32_t v;
    memcpy(&v, d->b + off, 4);
    return ntohl(v);
}

static inline uint64_t dr_u8(const dr_dump *d, size_t off)
{
    return ((uint64_t)dr_u4(d, off) << 32) | dr_u4(d, off + 4);
}

static inline const void *dr_id(const dr_dump *d, size_t off)
{
    const void *p;
    memcpy(&p, d->b + off, sizeof p);
    return p;
}

static inline int dr_need(dr_dump *d, size_t at, size_t n, size_t rec_off, const char *what)
{
    if (at > d->size || d->size - at < n)
        return dr_error(d, at, "%s needs %zu bytes but only %zu remain (record started at offset %zu, type 0x%02x)",
                        what, n, at <= d->size ? d->size - at : 0, rec_off, rec_off < d->size ? d->b[rec_off] : 0);
    return 0;
}

/* Size of a value of field signature SIG; 0 if SIG is not one. */
static inline size_t dr_sig_size(const char *sig)
{
    if (!sig)
        return 0;
    switch (sig[0]) {
    case 'Z': case 'B': return 1;
    case 'C': case 'S': return 2;
    case 'I': case 'F': return 4;
    case 'J': case 'D': return 8;
    case 'L': case '[': return DR_PTR;
    default: return 0;
    }
}

static inline int dr_sig_is_ref(const char *sig)
{
    return sig && (sig[0] == 'L' || sig[0] == '[');
}

/* Size of a value of dump type TY (object references for 0 and 2, as in
 * constant pool entries); 0 if TY is no type code. */
static inline size_t dr_ty_size(unsigned ty)
{
    switch (ty) {
    case JVMPI_NORMAL_OBJECT: case JVMPI_CLASS: return DR_PTR;
    case JVMPI_BOOLEAN: case JVMPI_BYTE: return 1;
    case JVMPI_CHAR: case JVMPI_SHORT: return 2;
    case JVMPI_INT: case JVMPI_FLOAT: return 4;
    case JVMPI_LONG: case JVMPI_DOUBLE: return 8;
    default: return 0;
    }
}

static inline char dr_ty_sig(unsigned ty)
{
    switch (ty) {
    case JVMPI_BOOLEAN: return 'Z';
    case JVMPI_BYTE: return 'B';
    case JVMPI_CHAR: return 'C';
    case JVMPI_SHORT: return 'S';
    case JVMPI_INT: return 'I';
    case JVMPI_FLOAT: return 'F';
    case JVMPI_LONG: return 'J';
    case JVMPI_DOUBLE: return 'D';
    default: return 'L';
    }
}

/* Value at OFF, sized by SIG (a field signature). */
static inline void dr_read(const dr_dump *d, size_t off, const char *sig, dr_val *v)
{
    memset(v, 0, sizeof *v);
    v->sig = dr_sig_is_ref(sig) ? 'L' : sig[0];
    switch (dr_sig_size(sig)) {
    case 1: v->bits = dr_u1(d, off); break;
    case 2: v->bits = dr_u2(d, off); break;
    case 4: v->bits = dr_u4(d, off); break;
    default:
        if (v->sig == 'L')
            v->ref = dr_id(d, off);
        else
            v->bits = dr_u8(d, off);
    }
}

/* Is a field/static of signature SIG present in a dump of LEVEL? */
static inline int dr_present(int level, const char *sig)
{
    return level >= 2 || dr_sig_is_ref(sig);
}

static inline dr_rec *dr_push(dr_dump *d)
{
    if (d->n == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 256;
        dr_rec *nr = realloc(d->r, nc * sizeof *nr);
        if (!nr)
            return NULL;
        d->r = nr;
        d->cap = nc;
    }
    dr_rec *r = &d->r[d->n++];
    memset(r, 0, sizeof *r);
    return r;
}

static inline int dr_super_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const dr_super *)a)->cls, y = (uintptr_t)((const dr_super *)b)->cls;
    return x < y ? -1 : x > y;
}

/* Super of CLS: the dump's class dumps first, then the caller's knowledge. */
static inline int dr_super_of(const dr_dump *d, const dr_ops *ops, const void *cls, const void **super)
{
    dr_super key = {cls, NULL};
    const dr_super *s = d->nsup ? bsearch(&key, d->sup, d->nsup, sizeof *d->sup, dr_super_cmp) : NULL;
    if (s) {
        *super = s->super;
        return 1;
    }
    return ops->super_of && ops->super_of(ops->ctx, cls, super);
}

/* Offset within an instance's values of field FIELD declared by class
 * DECL (NULL: the first field of that name in dump order), and its sig.
 * Also the expected byte count of the whole instance (TOTAL) when FIELD is
 * NULL.  Returns 0, or -1 with a reason in WHY. */
static inline int dr_layout(const dr_dump *d, const dr_ops *ops, const void *cls, const char *decl,
                            const char *field, size_t *at, const char **sig, size_t *total, char *why,
                            size_t whylen)
{
    size_t pos = 0;
    const void *c = cls;
    for (int depth = 0; c; depth++) {
        if (depth > 100) {
            snprintf(why, whylen, "super chain of class %p longer than 100 (a cycle?)", cls);
            return -1;
        }
        dr_class k;
        if (!ops->class_of(ops->ctx, c, &k)) {
            snprintf(why, whylen, "class %p (in the super chain of %p) has no CLASS_LOAD", c, cls);
            return -1;
        }
        int this_decl = !decl || (k.name && strcmp(k.name, decl) == 0);
        for (int i = 0; i < k.n_fields; i++) {
            const char *s = k.fields[i].field_signature;
            size_t sz = dr_sig_size(s);
            if (!sz) {
                snprintf(why, whylen, "field %s of class %s has signature '%s': no size", k.fields[i].field_name,
                         k.name ? k.name : "?", s ? s : "(null)");
                return -1;
            }
            if (!dr_present(d->level, s))
                continue;
            if (field && this_decl && k.fields[i].field_name && strcmp(k.fields[i].field_name, field) == 0) {
                *at = pos;
                *sig = s;
                return 0;
            }
            pos += sz;
        }
        const void *sup;
        if (!dr_super_of(d, ops, c, &sup)) {
            snprintf(why, whylen, "super of class %s (%p) is unknown: no class dump for it", k.name ? k.name : "?",
                     c);
            return -1;
        }
        c = sup;
    }
    if (field) {
        snprintf(why, whylen, "no field %s%s%s in the class chain of %p%s", decl ? decl : "", decl ? "." : "", field,
                 cls, d->level < 2 ? " (primitive fields are absent below level 2)" : "");
        return -1;
    }
    *total = pos;
    return 0;
}

/* ---- record parsing ---- */

static inline int dr_parse_class(dr_dump *d, const dr_ops *ops, dr_rec *r, size_t *at)
{
    size_t p = *at;
    if (dr_need(d, p, 6 * DR_PTR + DR_PTR + 4, r->off, "class dump header"))
        return -1;
    r->id = dr_id(d, p);
    r->id2 = dr_id(d, p + DR_PTR);
    r->loader = dr_id(d, p + 2 * DR_PTR);
    r->signers = dr_id(d, p + 3 * DR_PTR);
    r->domain = dr_id(d, p + 4 * DR_PTR);
    r->name_str = dr_id(d, p + 5 * DR_PTR);
    r->reserved = dr_id(d, p + 6 * DR_PTR);
    r->num = dr_u4(d, p + 7 * DR_PTR);
    p += 7 * DR_PTR + 4;
    if (!r->id)
        return dr_error(d, r->off, "class dump with a NULL class ID");
    dr_class k;
    if (!ops->class_of(ops->ctx, r->id, &k))
        return dr_error(d, r->off, "class dump of class %p, which no CLASS_LOAD describes: cannot size it", r->id);
    if (k.num_interfaces < 0 || k.n_statics < 0)
        return dr_error(d, r->off, "class %s: negative counts in its CLASS_LOAD", k.name ? k.name : "?");
    r->n_ifaces = k.num_interfaces;
    r->ifaces = p;
    if (dr_need(d, p, (size_t)k.num_interfaces * DR_PTR + 2, r->off, "class dump interfaces + pool count"))
        return -1;
    p += (size_t)k.num_interfaces * DR_PTR;
    /* HotSpot 5.0 wrote no constant pool entries; agents size this record
     * from CLASS_LOAD alone and cannot size an entry of a number. */
    r->n_cp = dr_u2(d, p);
    p += 2;
    if (r->n_cp != 0)
        return dr_error(d, p - 2, "class %s: a constant pool of %u entries, where HotSpot 5.0 wrote none",
                        k.name ? k.name : "?", r->n_cp);
    r->data = p;
    r->has_data = 1;
    for (int i = 0; i < k.n_statics; i++) {
        const char *s = k.statics[i].field_signature;
        size_t sz = dr_sig_size(s);
        if (!sz)
            return dr_error(d, p, "class %s: static %s has signature '%s': no size", k.name ? k.name : "?",
                            k.statics[i].field_name ? k.statics[i].field_name : "?", s ? s : "(null)");
        if (!dr_present(d->level, s))
            continue;
        if (dr_need(d, p, sz, r->off, "static field value"))
            return -1;
        p += sz;
    }
    *at = p;
    return 0;
}

static inline int dr_parse_record(dr_dump *d, const dr_ops *ops, size_t *at)
{
    size_t p = *at;
    dr_rec *r = dr_push(d);
    if (!r)
        return dr_error(d, p, "out of memory");
    r->off = p;
    r->kind = d->b[p++];
    r->num = DR_NO_FRAME;
    switch (r->kind) {
    case JVMPI_GC_ROOT_UNKNOWN:
    case JVMPI_GC_ROOT_STICKY_CLASS:
    case JVMPI_GC_ROOT_MONITOR_USED:
        if (dr_need(d, p, DR_PTR, r->off, "root"))
            return -1;
        r->id = dr_id(d, p);
        p += DR_PTR;
        break;
    case JVMPI_GC_ROOT_JNI_GLOBAL:
    case JVMPI_GC_ROOT_NATIVE_STACK:
    case JVMPI_GC_ROOT_THREAD_BLOCK:
        if (dr_need(d, p, 2 * DR_PTR, r->off, "root"))
            return -1;
        r->id = dr_id(d, p);
        r->id2 = dr_id(d, p + DR_PTR);
        p += 2 * DR_PTR;
        break;
    case JVMPI_GC_ROOT_JNI_LOCAL:
    case JVMPI_GC_ROOT_JAVA_FRAME:
        if (dr_need(d, p, 2 * DR_PTR + 4, r->off, "root"))
            return -1;
        r->id = dr_id(d, p);
        r->id2 = dr_id(d, p + DR_PTR);
        r->num = dr_u4(d, p + 2 * DR_PTR);
        p += 2 * DR_PTR + 4;
        break;
    case JVMPI_GC_CLASS_DUMP:
        if (dr_parse_class(d, ops, r, &p))
            return -1;
        break;
    case JVMPI_GC_INSTANCE_DUMP:
        if (dr_need(d, p, 2 * DR_PTR + 4, r->off, "instance dump header"))
            return -1;
        r->id = dr_id(d, p);
        r->id2 = dr_id(d, p + DR_PTR);
        r->num = dr_u4(d, p + 2 * DR_PTR);
        p += 2 * DR_PTR + 4;
        if (!r->id || !r->id2)
            return dr_error(d, r->off, "instance dump with a NULL %s ID", r->id ? "class" : "object");
        /* The byte count is checked against CLASS_LOAD in the second pass,
         * once every class dump (and so every super) is known. */
        if (dr_need(d, p, r->num, r->off, "instance field values"))
            return -1;
        r->data = p;
        r->has_data = 1;
        p += r->num;
        break;
    case JVMPI_GC_OBJ_ARRAY_DUMP:
        if (dr_need(d, p, 2 * DR_PTR + 4, r->off, "object array header"))
            return -1;
        r->id = dr_id(d, p);
        r->num = dr_u4(d, p + DR_PTR);
        r->id2 = dr_id(d, p + DR_PTR + 4);
        p += 2 * DR_PTR + 4;
        if (!r->id)
            return dr_error(d, r->off, "object array dump with a NULL array ID");
        if (dr_need(d, p, (size_t)r->num * DR_PTR, r->off, "object array elements"))
            return -1;
        r->data = p;
        r->has_data = 1;
        p += (size_t)r->num * DR_PTR;
        break;
    case JVMPI_GC_PRIM_ARRAY_DUMP: {
        if (dr_need(d, p, DR_PTR + 4 + 1, r->off, "primitive array header"))
            return -1;
        r->id = dr_id(d, p);
        r->num = dr_u4(d, p + DR_PTR);
        r->ty = (unsigned char)dr_u1(d, p + DR_PTR + 4);
        p += DR_PTR + 4 + 1;
        if (!r->id)
            return dr_error(d, r->off, "primitive array dump with a NULL array ID");
        size_t sz = r->ty >= JVMPI_BOOLEAN ? dr_ty_size(r->ty) : 0;
        if (!sz)
            return dr_error(d, r->off + 1 + DR_PTR + 4, "primitive array with element type %u, not a primitive type",
                            r->ty);
        r->data = p;
        if (d->level >= 2) {
            if (dr_need(d, p, (size_t)r->num * sz, r->off, "primitive array elements"))
                return -1;
            r->has_data = 1;
            p += (size_t)r->num * sz;
        }
        break;
    }
    default:
        return dr_error(d, r->off, "record type 0x%02x is none the format defines (previous record at offset %zu)",
                        r->kind, d->n >= 2 ? d->r[d->n - 2].off : 0);
    }
    r->len = p - r->off;
    *at = p;
    return 0;
}

static inline int dr_index_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)(*(const dr_rec *const *)a)->id, y = (uintptr_t)(*(const dr_rec *const *)b)->id;
    return x < y ? -1 : x > y;
}

static inline int dr_is_object_record(const dr_dump *d, const dr_rec *r)
{
    return d->level == 0 || (r->kind >= JVMPI_GC_CLASS_DUMP && r->kind <= JVMPI_GC_PRIM_ARRAY_DUMP);
}

/* Second pass: supers, instance byte counts, the index by object ID. */
static inline int dr_finish(dr_dump *d, const dr_ops *ops)
{
    size_t nclass = 0, nobj = 0;
    for (size_t i = 0; i < d->n; i++) {
        nclass += d->level > 0 && d->r[i].kind == JVMPI_GC_CLASS_DUMP;
        nobj += dr_is_object_record(d, &d->r[i]);
    }
    d->sup = malloc((nclass ? nclass : 1) * sizeof *d->sup);
    d->index = malloc((nobj ? nobj : 1) * sizeof *d->index);
    if (!d->sup || !d->index)
        return dr_error(d, 0, "out of memory");
    for (size_t i = 0; i < d->n; i++) {
        const dr_rec *r = &d->r[i];
        if (d->level > 0 && r->kind == JVMPI_GC_CLASS_DUMP)
            d->sup[d->nsup++] = (dr_super){r->id, r->id2};
        if (dr_is_object_record(d, r))
            d->index[d->nindex++] = r;
    }
    qsort(d->sup, d->nsup, sizeof *d->sup, dr_super_cmp);
    for (size_t i = 1; i < d->nsup; i++)
        if (d->sup[i].cls == d->sup[i - 1].cls && d->sup[i].super != d->sup[i - 1].super)
            return dr_error(d, 0, "two class dumps of class %p name different supers", d->sup[i].cls);
    qsort(d->index, d->nindex, sizeof *d->index, dr_index_cmp);
    for (size_t i = 1; i < d->nindex; i++)
        if (d->index[i]->id == d->index[i - 1]->id)
            return dr_error(d, d->index[i]->off, "object %p is dumped twice (also at offset %zu)", d->index[i]->id,
                            d->index[i - 1]->off);
    if (d->level == 0)
        return 0;
    for (size_t i = 0; i < d->n; i++) {
        const dr_rec *r = &d->r[i];
        if (r->kind != JVMPI_GC_INSTANCE_DUMP)
            continue;
        size_t at, total = 0;
        const char *sig;
        char why[300];
        int bad = 0;
        if (dr_layout(d, ops, r->id2, NULL, NULL, &at, &sig, &total, why, sizeof why)) {
            bad = 1;
            if (!d->lenient || !d->n_bad)
                dr_error(d, r->off, "instance dump of %p: %s", r->id, why);
        } else if (total != r->num) {
            dr_class k;
            ops->class_of(ops->ctx, r->id2, &k);
            bad = 1;
            if (!d->lenient || !d->n_bad)
                dr_error(d, r->off,
                         "instance dump of %p (class %s): %u value bytes, but the CLASS_LOAD fields of the class and its supers imply %zu",
                         r->id, k.name ? k.name : "?", r->num, total);
        }
        if (bad && !d->lenient)
            return -1;
        d->n_bad += bad;
    }
    return 0;
}

/* Walks a HEAP_DUMP buffer of LEVEL from BEGIN to END.  Returns 0, or -1
 * with d->err set. */
static inline int dr_parse_heap(dr_dump *d, const void *begin, const void *end, int level, const dr_ops *ops)
{
    dr_free(d);
    d->level = level;
    if (level < 0 || level > 2)
        return dr_error(d, 0, "no such dump level");
    if (!begin || !end || (const char *)end < (const char *)begin)
        return dr_error(d, 0, "bad bounds begin=%p end=%p", begin, end);
    d->b = begin;
    d->size = (size_t)((const char *)end - (const char *)begin);
    size_t p = 0;
    while (p < d->size) {
        if (level == 0) {
            dr_rec *r = dr_push(d);
            if (!r)
                return dr_error(d, p, "out of memory");
            r->off = p;
            r->kind = d->b[p];
            if (r->kind != JVMPI_NORMAL_OBJECT && !(r->kind >= JVMPI_CLASS && dr_ty_size(r->kind)))
                return dr_error(d, p, "level 0 record with object type %u, no type code", r->kind);
            if (dr_need(d, p + 1, DR_PTR, p, "level 0 object ID"))
                return -1;
            r->id = dr_id(d, p + 1);
            if (!r->id)
                return dr_error(d, p, "level 0 record with a NULL object ID");
            r->len = 1 + DR_PTR;
            p += r->len;
            continue;
        }
        if (dr_parse_record(d, ops, &p))
            return -1;
    }
    return dr_finish(d, ops);
}

/* Reads one OBJECT_DUMP record: exactly DATA_LEN bytes, level 2 values. */
static inline int dr_parse_object(dr_dump *d, const void *data, size_t len, const dr_ops *ops)
{
    dr_free(d);
    d->level = 2;
    d->b = data;
    d->size = len;
    if (!data || !len)
        return dr_error(d, 0, "empty object dump (data=%p, length %zu)", data, len);
    size_t p = 0;
    unsigned kind = d->b[0];
    if (kind < JVMPI_GC_CLASS_DUMP || kind > JVMPI_GC_PRIM_ARRAY_DUMP)
        return dr_error(d, 0, "object dump record type 0x%02x: must be a class, instance or array dump", kind);
    if (dr_parse_record(d, ops, &p))
        return -1;
    if (p != len)
        return dr_error(d, p, "%zu bytes left after the one record of the object dump", len - p);
    return dr_finish(d, ops);
}

/* The record of object ID (not roots), or NULL. */
static inline const dr_rec *dr_find(const dr_dump *d, const void *id)
{
    dr_rec key;
    key.id = id;
    const dr_rec *kp = &key;
    const dr_rec **f = d->nindex ? bsearch(&kp, d->index, d->nindex, sizeof *d->index, dr_index_cmp) : NULL;
    return f ? *f : NULL;
}

/* Field FIELD declared by class DECL (dotted name; NULL: nearest) of
 * instance record R. */
static inline int dr_field(const dr_dump *d, const dr_ops *ops, const dr_rec *r, const char *decl,
                           const char *field, dr_val *v, char *why, size_t whylen)
{
    size_t at, total;
    const char *sig;
    if (r->kind != JVMPI_GC_INSTANCE_DUMP) {
        snprintf(why, whylen, "record 0x%02x is no instance dump", r->kind);
        return -1;
    }
    if (dr_layout(d, ops, r->id2, decl, field, &at, &sig, &total, why, whylen))
        return -1;
    dr_read(d, r->data + at, sig, v);
    return 0;
}

/* Static field NAME of class dump record R. */
static inline int dr_static(const dr_dump *d, const dr_ops *ops, const dr_rec *r, const char *name, dr_val *v,
                            char *why, size_t whylen)
{
    dr_class k;
    if (r->kind != JVMPI_GC_CLASS_DUMP || !ops->class_of(ops->ctx, r->id, &k)) {
        snprintf(why, whylen, "record 0x%02x is no class dump of a known class", r->kind);
        return -1;
    }
    size_t p = r->data;
    for (int i = 0; i < k.n_statics; i++) {
        const char *s = k.statics[i].field_signature;
        if (!dr_present(d->level, s))
            continue;
        if (k.statics[i].field_name && strcmp(k.statics[i].field_name, name) == 0) {
            dr_read(d, p, s, v);
            return 0;
        }
        p += dr_sig_size(s);
    }
    snprintf(why, whylen, "class %s has no static %s%s", k.name ? k.name : "?", name,
             d->level < 2 ? " in a level 1 dump" : "");
    return -1;
}

/* Element I of array record R (primitive arrays: level 2 only). */
static inline int dr_elem(const dr_dump *d, const dr_rec *r, uint32_t i, dr_val *v)
{
    if (!r->has_data || i >= r->num || (r->kind != JVMPI_GC_OBJ_ARRAY_DUMP && r->kind != JVMPI_GC_PRIM_ARRAY_DUMP))
        return -1;
    if (r->kind == JVMPI_GC_OBJ_ARRAY_DUMP) {
        dr_read(d, r->data + (size_t)i * DR_PTR, "L", v);
    } else {
        char sig[2] = {dr_ty_sig(r->ty), 0};
        dr_read(d, r->data + (size_t)i * dr_ty_size(r->ty), sig, v);
    }
    return 0;
}

/* Hands every ID of every record to CB with its role (NULLs skipped).
 * Stops and returns CB's value when it is non-zero. */
typedef int (*dr_id_cb)(void *ctx, const dr_dump *d, const dr_rec *r, int role, const void *id);

static inline int dr_each_id(const dr_dump *d, const dr_ops *ops, dr_id_cb cb, void *ctx)
{
#define DR_CB(role, id)                                                                                            \
    do {                                                                                                           \
        const void *id_ = (id);                                                                                    \
        if (id_) {                                                                                                 \
            int rc_ = cb(ctx, d, r, (role), id_);                                                                  \
            if (rc_)                                                                                               \
                return rc_;                                                                                        \
        }                                                                                                          \
    } while (0)
    for (size_t i = 0; i < d->n; i++) {
        const dr_rec *r = &d->r[i];
        if (d->level == 0) {
            DR_CB(DR_SELF, r->id);
            continue;
        }
        switch (r->kind) {
        case JVMPI_GC_ROOT_STICKY_CLASS:
            DR_CB(DR_CLASS, r->id);
            break;
        case JVMPI_GC_ROOT_UNKNOWN:
        case JVMPI_GC_ROOT_MONITOR_USED:
        case JVMPI_GC_ROOT_JNI_GLOBAL:
            DR_CB(DR_REF, r->id);
            break;
        case JVMPI_GC_ROOT_NATIVE_STACK:
        case JVMPI_GC_ROOT_THREAD_BLOCK:
        case JVMPI_GC_ROOT_JNI_LOCAL:
        case JVMPI_GC_ROOT_JAVA_FRAME:
            DR_CB(DR_REF, r->id);
            DR_CB(DR_ENV, r->id2);
            break;
        case JVMPI_GC_CLASS_DUMP: {
            DR_CB(DR_SELF, r->id);
            DR_CB(DR_CLASS, r->id2);
            DR_CB(DR_REF, r->loader);
            DR_CB(DR_REF, r->signers);
            DR_CB(DR_REF, r->domain);
            DR_CB(DR_REF, r->name_str);
            for (int k = 0; k < r->n_ifaces; k++)
                DR_CB(DR_CLASS, dr_id(d, r->ifaces + (size_t)k * DR_PTR));
            dr_class k;
            if (ops->class_of(ops->ctx, r->id, &k)) {
                size_t p = r->data;
                for (int s = 0; s < k.n_statics; s++) {
                    const char *sig = k.statics[s].field_signature;
                    if (!dr_present(d->level, sig))
                        continue;
                    if (dr_sig_is_ref(sig))
                        DR_CB(DR_REF, dr_id(d, p));
                    p += dr_sig_size(sig);
                }
            }
            break;
        }
        case JVMPI_GC_INSTANCE_DUMP: {
            DR_CB(DR_SELF, r->id);
            DR_CB(DR_CLASS, r->id2);
            size_t p = r->data;
            const void *c = r->id2;
            for (int depth = 0; c && depth < 100; depth++) {
                dr_class k;
                if (!ops->class_of(ops->ctx, c, &k))
                    break;
                for (int f = 0; f < k.n_fields; f++) {
                    const char *sig = k.fields[f].field_signature;
                    if (!dr_present(d->level, sig))
                        continue;
                    if (dr_sig_is_ref(sig))
                        DR_CB(DR_REF, dr_id(d, p));
                    p += dr_sig_size(sig);
                }
                if (!dr_super_of(d, ops, c, &c))
                    break;
            }
            break;
        }
        case JVMPI_GC_OBJ_ARRAY_DUMP:
            DR_CB(DR_SELF, r->id);
            DR_CB(DR_CLASS, r->id2);
            for (uint32_t k = 0; k < r->num; k++)
                DR_CB(DR_REF, dr_id(d, r->data + (size_t)k * DR_PTR));
            break;
        case JVMPI_GC_PRIM_ARRAY_DUMP:
            DR_CB(DR_SELF, r->id);
            break;
        default:
            break;
        }
    }
    return 0;
#undef DR_CB
}

static inline const char *dr_kind_name(int level, unsigned kind)
{
    if (level == 0) {
        switch (kind) {
        case JVMPI_NORMAL_OBJECT: return "object";
        case JVMPI_CLASS: return "object-array";
        default: return "primitive-array";
        }
    }
    switch (kind) {
    case JVMPI_GC_ROOT_UNKNOWN: return "ROOT_UNKNOWN";
    case JVMPI_GC_ROOT_JNI_GLOBAL: return "ROOT_JNI_GLOBAL";
    case JVMPI_GC_ROOT_JNI_LOCAL: return "ROOT_JNI_LOCAL";
    case JVMPI_GC_ROOT_JAVA_FRAME: return "ROOT_JAVA_FRAME";
    case JVMPI_GC_ROOT_NATIVE_STACK: return "ROOT_NATIVE_STACK";
    case JVMPI_GC_ROOT_STICKY_CLASS: return "ROOT_STICKY_CLASS";
    case JVMPI_GC_ROOT_THREAD_BLOCK: return "ROOT_THREAD_BLOCK";
    case JVMPI_GC_ROOT_MONITOR_USED: return "ROOT_MONITOR_USED";
    case JVMPI_GC_CLASS_DUMP: return "CLASS_DUMP";
    case JVMPI_GC_INSTANCE_DUMP: return "INSTANCE_DUMP";
    case JVMPI_GC_OBJ_ARRAY_DUMP: return "OBJ_ARRAY_DUMP";
    case JVMPI_GC_PRIM_ARRAY_DUMP: return "PRIM_ARRAY_DUMP";
    default: return "?";
    }
}

#endif /* DUMP_READER_H_ */
