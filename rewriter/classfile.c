/*
 * classfile.c - see classfile.h.
 *
 * Reading goes through a reader whose first failure is sticky: every later
 * read returns 0 without touching the input, so the parse code can read a
 * whole structure and check once, and no path reads past the end.
 */
#include "classfile.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "wbuf.h"

/* JVMS 4.7.3: code_length must be greater than zero and less than 65536. */
#define CODE_LENGTH_MAX 65535u

/* ------------------------------------------------------------------------ */
/* reading                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
    const uint8_t *p;
    size_t len;
    size_t pos;
    size_t base;  /* offset of p in the whole class, for messages only */
    char *err;
    size_t errlen;
    bool failed;
} reader;

static void fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(reader *r, const char *fmt, ...)
{
    if (r->failed)
        return;  /* the first reason is the useful one */
    r->failed = true;
    if (r->err != NULL && r->errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err, r->errlen, fmt, ap);
        va_end(ap);
    }
}

static size_t left(const reader *r)
{
    return r->len - r->pos;
}

static bool need(reader *r, size_t n, const char *what)
{
    if (r->failed)
        return false;
    if (n > left(r)) {
        fail(r, "truncated at offset %zu: %s needs %zu bytes, %zu left", r->base + r->pos, what, n, left(r));
        return false;
    }
    return true;
}

static uint8_t rd_u1(reader *r, const char *what)
{
    if (!need(r, 1, what))
        return 0;
    return r->p[r->pos++];
}

static uint16_t rd_u2(reader *r, const char *what)
{
    if (!need(r, 2, what))
        return 0;
    uint16_t v = (uint16_t)((r->p[r->pos] << 8) | r->p[r->pos + 1]);
    r->pos += 2;
    return v;
}

static uint32_t rd_u4(reader *r, const char *what)
{
    if (!need(r, 4, what))
        return 0;
    const uint8_t *b = r->p + r->pos;
    uint32_t v = ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
    r->pos += 4;
    return v;
}

/* Refuses a count before allocating for it: the smallest item it could
 * describe must still fit in what is left, so a corrupt count costs nothing. */
static bool count_fits(reader *r, size_t count, size_t min_item, const char *what)
{
    if (r->failed)
        return false;
    if (count * min_item > left(r)) {
        fail(r, "%s count %zu overruns the input at offset %zu (%zu bytes left)", what, count,
             r->base + r->pos, left(r));
        return false;
    }
    return true;
}

static bool cp_is(const classfile *cf, uint16_t index, uint8_t tag)
{
    return index > 0 && index < cf->cp_count && cf->cp[index].tag == tag;
}

static bool check_ref(reader *r, const classfile *cf, uint16_t index, uint8_t tag, const char *what)
{
    if (r->failed)
        return false;
    if (!cp_is(cf, index, tag)) {
        fail(r, "%s refers to constant %u, which is not a %s", what, index,
             tag == CLASSFILE_CONSTANT_Utf8 ? "Utf8" : tag == CLASSFILE_CONSTANT_Class ? "Class" : "NameAndType");
        return false;
    }
    return true;
}

/* check_ref for a reference made by constant `from`, which is named only
 * when the check fails: formatting its name for every constant of every
 * class the VM loads cost more than the check. */
static bool check_pool_ref(reader *r, const classfile *cf, uint32_t from, uint16_t index, uint8_t tag)
{
    if (r->failed || cp_is(cf, index, tag))
        return !r->failed;
    char what[48];
    snprintf(what, sizeof what, "constant %u (tag %u)", from, cf->cp[from].tag);
    return check_ref(r, cf, index, tag, what);
}

/* ------------------------------------------------------------------------ */
/* freeing (also of partly built structures: everything is calloc'd)          */
/* ------------------------------------------------------------------------ */

static void free_attrs(classfile_attr *attrs, uint16_t count);

static void free_code(classfile_code *c)
{
    if (c == NULL)
        return;
    free(c->code);
    free(c->exceptions);
    free_attrs(c->attrs, c->attr_count);
    free(c);
}

static void free_attrs(classfile_attr *attrs, uint16_t count)
{
    if (attrs == NULL)
        return;
    for (uint16_t i = 0; i < count; i++) {
        free(attrs[i].data);
        free_code(attrs[i].code);
    }
    free(attrs);
}

static void free_members(classfile_member *m, uint16_t count)
{
    if (m == NULL)
        return;
    for (uint16_t i = 0; i < count; i++)
        free_attrs(m[i].attrs, m[i].attr_count);
    free(m);
}

void classfile_free(classfile *cf)
{
    if (cf == NULL)
        return;
    if (cf->cp != NULL) {
        for (uint32_t i = 0; i < cf->cp_capacity; i++)
            free(cf->cp[i].utf8);
        free(cf->cp);
    }
    free(cf->interfaces);
    free_members(cf->fields, cf->field_count);
    free_members(cf->methods, cf->method_count);
    free_attrs(cf->attrs, cf->attr_count);
    free(cf);
}

/* ------------------------------------------------------------------------ */
/* parsing                                                                   */
/* ------------------------------------------------------------------------ */

static void parse_attrs(reader *r, const classfile *cf, bool method, const char *where, uint16_t *count_out,
                        classfile_attr **out);

/* The table whose u2 count (named count_name in the file) comes next: zeroed,
 * at least one entry long so that NULL means failure only, and its count in
 * *count_out once it exists.  NULL, after saying why, when the count could
 * not fit in what is left at min_item bytes an entry, or memory ran out. */
static void *read_table(reader *r, const char *count_name, size_t min_item, const char *what, size_t size,
                        uint16_t *count_out)
{
    uint16_t n = rd_u2(r, count_name);
    if (!count_fits(r, n, min_item, what))
        return NULL;
    void *t = calloc(n ? n : 1, size);
    if (t == NULL) {
        fail(r, "out of memory");
        return NULL;
    }
    *count_out = n;
    return t;
}

static classfile_code *parse_code(reader *r, const classfile *cf)
{
    classfile_code *c = calloc(1, sizeof *c);
    if (c == NULL) {
        fail(r, "out of memory");
        return NULL;
    }
    c->max_stack = rd_u2(r, "max_stack");
    c->max_locals = rd_u2(r, "max_locals");
    c->code_length = rd_u4(r, "code_length");
    if (!r->failed && (c->code_length == 0 || c->code_length > CODE_LENGTH_MAX))
        fail(r, "code_length %u at offset %zu is out of range 1..%u", c->code_length, r->base + r->pos - 4,
             CODE_LENGTH_MAX);
    if (need(r, c->code_length, "code")) {
        c->code = malloc(c->code_length);
        if (c->code == NULL) {
            fail(r, "out of memory");
        } else {
            memcpy(c->code, r->p + r->pos, c->code_length);
            r->pos += c->code_length;
        }
    }
    c->exceptions = read_table(r, "exception_table_length", 8, "exception table", sizeof *c->exceptions,
                               &c->exception_count);
    if (c->exceptions != NULL) {
        for (uint16_t i = 0; i < c->exception_count && !r->failed; i++) {
            classfile_exception *e = &c->exceptions[i];
            e->start_pc = rd_u2(r, "start_pc");
            e->end_pc = rd_u2(r, "end_pc");
            e->handler_pc = rd_u2(r, "handler_pc");
            e->catch_type = rd_u2(r, "catch_type");
            if (e->catch_type != 0)
                check_ref(r, cf, e->catch_type, CLASSFILE_CONSTANT_Class, "exception catch_type");
        }
    }
    parse_attrs(r, cf, false, "Code", &c->attr_count, &c->attrs);
    return c;
}

/* method: whether a Code attribute here is a method's, and so parsed. */
static void parse_attrs(reader *r, const classfile *cf, bool method, const char *where, uint16_t *count_out,
                        classfile_attr **out)
{
    classfile_attr *a = read_table(r, "attributes_count", 6, where, sizeof *a, count_out);
    if (a == NULL)
        return;
    *out = a;
    for (uint16_t i = 0; i < *count_out && !r->failed; i++) {
        a[i].name_index = rd_u2(r, "attribute_name_index");
        a[i].length = rd_u4(r, "attribute_length");
        if (!check_ref(r, cf, a[i].name_index, CLASSFILE_CONSTANT_Utf8, "attribute name") ||
            !need(r, a[i].length, "attribute"))
            return;
        const char *name = cf->cp[a[i].name_index].utf8;
        if (method && strcmp(name, "Code") == 0) {
            /* A reader of its own bounds the Code to its declared length,
             * so a wrong count inside cannot spill into what follows. */
            reader sub = {.p = r->p + r->pos, .len = a[i].length, .base = r->base + r->pos,
                          .err = r->err, .errlen = r->errlen};
            a[i].code = parse_code(&sub, cf);
            if (!sub.failed && sub.pos != sub.len)
                fail(&sub, "Code attribute at offset %zu declares %u bytes but holds %zu", sub.base - 6,
                     a[i].length, sub.pos);
            if (sub.failed) {
                r->failed = true;  /* sub already wrote the reason */
                return;
            }
        } else {
            a[i].data = malloc(a[i].length ? a[i].length : 1);
            if (a[i].data == NULL) {
                fail(r, "out of memory");
                return;
            }
            memcpy(a[i].data, r->p + r->pos, a[i].length);
        }
        r->pos += a[i].length;
    }
}

static void parse_members(reader *r, const classfile *cf, bool method, uint16_t *count_out,
                          classfile_member **out)
{
    const char *what = method ? "method" : "field";
    classfile_member *m = read_table(r, method ? "methods_count" : "fields_count", 8, what, sizeof *m, count_out);
    if (m == NULL)
        return;
    *out = m;
    for (uint16_t i = 0; i < *count_out && !r->failed; i++) {
        m[i].access_flags = rd_u2(r, "access_flags");
        m[i].name_index = rd_u2(r, "name_index");
        m[i].descriptor_index = rd_u2(r, "descriptor_index");
        check_ref(r, cf, m[i].name_index, CLASSFILE_CONSTANT_Utf8, method ? "method name" : "field name");
        check_ref(r, cf, m[i].descriptor_index, CLASSFILE_CONSTANT_Utf8,
                  method ? "method descriptor" : "field descriptor");
        parse_attrs(r, cf, method, what, &m[i].attr_count, &m[i].attrs);
    }
}

static void parse_cp(reader *r, classfile *cf)
{
    uint16_t count = rd_u2(r, "constant_pool_count");
    if (r->failed)
        return;
    if (count == 0) {
        fail(r, "constant_pool_count is 0");
        return;
    }
    /* 3 bytes is the smallest entry (a tag and one index); a Long's 9 bytes
     * cover its two slots, so 3 per slot holds for every tag. */
    if (!count_fits(r, (size_t)count - 1, 3, "constant pool"))
        return;
    cf->cp = calloc(count, sizeof *cf->cp);
    if (cf->cp == NULL) {
        fail(r, "out of memory");
        return;
    }
    cf->cp_count = count;
    cf->cp_capacity = count;

    for (uint32_t i = 1; i < count && !r->failed; i++) {
        classfile_cp_entry *e = &cf->cp[i];
        e->tag = rd_u1(r, "constant tag");
        switch (e->tag) {
        case CLASSFILE_CONSTANT_Utf8:
            e->utf8_len = rd_u2(r, "Utf8 length");
            if (!need(r, e->utf8_len, "Utf8 bytes"))
                break;
            e->utf8 = malloc((size_t)e->utf8_len + 1);
            if (e->utf8 == NULL) {
                fail(r, "out of memory");
                break;
            }
            memcpy(e->utf8, r->p + r->pos, e->utf8_len);
            e->utf8[e->utf8_len] = '\0';
            r->pos += e->utf8_len;
            break;
        case CLASSFILE_CONSTANT_Integer:
        case CLASSFILE_CONSTANT_Float:
            e->bytes_hi = rd_u4(r, "constant value");
            break;
        case CLASSFILE_CONSTANT_Long:
        case CLASSFILE_CONSTANT_Double:
            if (i + 1 >= count) {
                fail(r, "8-byte constant at index %u takes a slot past the end of the pool", i);
                break;
            }
            e->bytes_hi = rd_u4(r, "constant value");
            e->bytes_lo = rd_u4(r, "constant value");
            i++;  /* JVMS 4.4.5: the next slot is unusable, and left tag 0 */
            break;
        case CLASSFILE_CONSTANT_Class:
        case CLASSFILE_CONSTANT_String:
        case CLASSFILE_CONSTANT_MethodType:
        case CLASSFILE_CONSTANT_Module:
        case CLASSFILE_CONSTANT_Package:
            e->ref1 = rd_u2(r, "constant index");
            break;
        case CLASSFILE_CONSTANT_Fieldref:
        case CLASSFILE_CONSTANT_Methodref:
        case CLASSFILE_CONSTANT_InterfaceMethodref:
        case CLASSFILE_CONSTANT_NameAndType:
        case CLASSFILE_CONSTANT_Dynamic:
        case CLASSFILE_CONSTANT_InvokeDynamic:
            e->ref1 = rd_u2(r, "constant index");
            e->ref2 = rd_u2(r, "constant index");
            break;
        case CLASSFILE_CONSTANT_MethodHandle:
            e->ref_kind = rd_u1(r, "reference_kind");
            e->ref1 = rd_u2(r, "reference_index");
            break;
        default:
            if (!r->failed)
                fail(r, "constant %u at offset %zu" ERRBUF_UNKNOWN "constant pool tag %u", i, r->base + r->pos - 1,
                     e->tag);
            break;
        }
    }
    if (r->failed)
        return;

    /* Checked once the whole pool is in, since entries may refer forward.
     * After this, following any reference in the pool is safe. */
    for (uint32_t i = 1; i < count && !r->failed; i++) {
        const classfile_cp_entry *e = &cf->cp[i];
        switch (e->tag) {
        case CLASSFILE_CONSTANT_Class:
        case CLASSFILE_CONSTANT_String:
        case CLASSFILE_CONSTANT_MethodType:
        case CLASSFILE_CONSTANT_Module:
        case CLASSFILE_CONSTANT_Package:
            check_pool_ref(r, cf, i, e->ref1, CLASSFILE_CONSTANT_Utf8);
            break;
        case CLASSFILE_CONSTANT_Fieldref:
        case CLASSFILE_CONSTANT_Methodref:
        case CLASSFILE_CONSTANT_InterfaceMethodref:
            check_pool_ref(r, cf, i, e->ref1, CLASSFILE_CONSTANT_Class);
            check_pool_ref(r, cf, i, e->ref2, CLASSFILE_CONSTANT_NameAndType);
            break;
        case CLASSFILE_CONSTANT_NameAndType:
            check_pool_ref(r, cf, i, e->ref1, CLASSFILE_CONSTANT_Utf8);
            check_pool_ref(r, cf, i, e->ref2, CLASSFILE_CONSTANT_Utf8);
            break;
        case CLASSFILE_CONSTANT_Dynamic:
        case CLASSFILE_CONSTANT_InvokeDynamic:
            check_pool_ref(r, cf, i, e->ref2, CLASSFILE_CONSTANT_NameAndType);
            break;
        case CLASSFILE_CONSTANT_MethodHandle: {
            uint8_t t = e->ref1 > 0 && e->ref1 < count ? cf->cp[e->ref1].tag : 0;
            bool ok = e->ref_kind >= 1 && e->ref_kind <= 9 &&
                      (e->ref_kind <= 4 ? t == CLASSFILE_CONSTANT_Fieldref
                                        : t == CLASSFILE_CONSTANT_Methodref ||
                                              t == CLASSFILE_CONSTANT_InterfaceMethodref);
            if (!ok)
                fail(r, "constant %u (tag %u): reference_kind %u with reference %u (tag %u)", i, e->tag, e->ref_kind,
                     e->ref1, t);
            break;
        }
        default:
            break;
        }
    }
}

classfile *classfile_parse(const uint8_t *data, size_t len, char *err, size_t errlen)
{
    reader r = {.p = data, .len = data != NULL ? len : 0, .err = err, .errlen = errlen};
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    classfile *cf = calloc(1, sizeof *cf);
    if (cf == NULL) {
        fail(&r, "out of memory");
        return NULL;
    }

    cf->magic = rd_u4(&r, "magic");
    if (!r.failed && cf->magic != CLASSFILE_MAGIC)
        fail(&r, "bad magic 0x%08X, not a class file", cf->magic);
    cf->minor_version = rd_u2(&r, "minor_version");
    cf->major_version = rd_u2(&r, "major_version");
    /* No upper bound: a later version is refused for what it holds that is
     * not known here (a constant tag, an opcode, a Code attribute), class by
     * class, not for its number. */
    if (!r.failed && cf->major_version < 45)
        fail(&r, "class file version %u.%u is below 45, the first there is", cf->major_version, cf->minor_version);

    parse_cp(&r, cf);

    cf->access_flags = rd_u2(&r, "access_flags");
    cf->this_class = rd_u2(&r, "this_class");
    cf->super_class = rd_u2(&r, "super_class");
    check_ref(&r, cf, cf->this_class, CLASSFILE_CONSTANT_Class, "this_class");
    if (cf->super_class != 0)
        check_ref(&r, cf, cf->super_class, CLASSFILE_CONSTANT_Class, "super_class");

    cf->interfaces =
        read_table(&r, "interfaces_count", 2, "interface", sizeof *cf->interfaces, &cf->interface_count);
    if (cf->interfaces != NULL) {
        for (uint16_t i = 0; i < cf->interface_count && !r.failed; i++) {
            cf->interfaces[i] = rd_u2(&r, "interface");
            check_ref(&r, cf, cf->interfaces[i], CLASSFILE_CONSTANT_Class, "interface");
        }
    }

    parse_members(&r, cf, false, &cf->field_count, &cf->fields);
    parse_members(&r, cf, true, &cf->method_count, &cf->methods);
    parse_attrs(&r, cf, false, "class", &cf->attr_count, &cf->attrs);

    if (!r.failed && r.pos != r.len)
        fail(&r, "%zu bytes after the end of the class at offset %zu", r.len - r.pos, r.pos);
    if (r.failed) {
        classfile_free(cf);
        return NULL;
    }
    return cf;
}

const char *classfile_unknown_in(const char *reason)
{
    const char *p = reason != NULL ? strstr(reason, ERRBUF_UNKNOWN) : NULL;
    return p != NULL ? p + strlen(ERRBUF_UNKNOWN) : NULL;
}

const char *classfile_utf8(const classfile *cf, uint16_t index)
{
    if (cf == NULL || !cp_is(cf, index, CLASSFILE_CONSTANT_Utf8))
        return NULL;
    return cf->cp[index].utf8;
}

classfile_code *classfile_code_of(const classfile_member *m)
{
    for (uint16_t k = 0; k < m->attr_count; k++)
        if (m->attrs[k].code != NULL)
            return m->attrs[k].code;
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* writing                                                                   */
/* ------------------------------------------------------------------------ */

static int write_attrs(wbuf *w, const classfile_attr *a, uint16_t n, char *err, size_t errlen);

/* The length is recomputed, not taken from the parse: the rewriter will
 * change the code, and a stale length would make the class unloadable. */
static int write_code(wbuf *w, const classfile_code *c, char *err, size_t errlen)
{
    if (c->code_length == 0 || c->code_length > CODE_LENGTH_MAX) {
        errbuf_set(err, errlen, "code_length %u is out of range 1..%u", c->code_length, CODE_LENGTH_MAX);
        return -1;
    }
    uint64_t len = 2 + 2 + 4 + (uint64_t)c->code_length + 2 + 8 * (uint64_t)c->exception_count + 2;
    for (uint16_t i = 0; i < c->attr_count; i++)
        len += 6 + (uint64_t)c->attrs[i].length;
    if (len > UINT32_MAX) {
        errbuf_set(err, errlen, "Code attribute of %llu bytes does not fit its length field", (unsigned long long)len);
        return -1;
    }
    wbuf_u4(w, (uint32_t)len);
    wbuf_u2(w, c->max_stack);
    wbuf_u2(w, c->max_locals);
    wbuf_u4(w, c->code_length);
    wbuf_put(w, c->code, c->code_length);
    wbuf_u2(w, c->exception_count);
    for (uint16_t i = 0; i < c->exception_count; i++) {
        wbuf_u2(w, c->exceptions[i].start_pc);
        wbuf_u2(w, c->exceptions[i].end_pc);
        wbuf_u2(w, c->exceptions[i].handler_pc);
        wbuf_u2(w, c->exceptions[i].catch_type);
    }
    return write_attrs(w, c->attrs, c->attr_count, err, errlen);
}

static int write_attrs(wbuf *w, const classfile_attr *a, uint16_t n, char *err, size_t errlen)
{
    wbuf_u2(w, n);
    for (uint16_t i = 0; i < n; i++) {
        wbuf_u2(w, a[i].name_index);
        if (a[i].code != NULL) {
            if (write_code(w, a[i].code, err, errlen) != 0)
                return -1;
        } else {
            wbuf_u4(w, a[i].length);
            wbuf_put(w, a[i].data, a[i].length);
        }
    }
    return 0;
}

static void write_members(wbuf *w, const classfile_member *m, uint16_t n, int *rc, char *err, size_t errlen)
{
    wbuf_u2(w, n);
    for (uint16_t i = 0; i < n && *rc == 0; i++) {
        wbuf_u2(w, m[i].access_flags);
        wbuf_u2(w, m[i].name_index);
        wbuf_u2(w, m[i].descriptor_index);
        *rc = write_attrs(w, m[i].attrs, m[i].attr_count, err, errlen);
    }
}

int classfile_write(const classfile *cf, uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
    wbuf w = {0};
    int rc = 0;
    if (err != NULL && errlen > 0)
        err[0] = '\0';

    wbuf_u4(&w, cf->magic);
    wbuf_u2(&w, cf->minor_version);
    wbuf_u2(&w, cf->major_version);
    wbuf_u2(&w, cf->cp_count);
    for (uint32_t i = 1; i < cf->cp_count && rc == 0; i++) {
        const classfile_cp_entry *e = &cf->cp[i];
        wbuf_u1(&w, e->tag);
        switch (e->tag) {
        case CLASSFILE_CONSTANT_Utf8:
            wbuf_u2(&w, e->utf8_len);
            wbuf_put(&w, e->utf8, e->utf8_len);
            break;
        case CLASSFILE_CONSTANT_Integer:
        case CLASSFILE_CONSTANT_Float:
            wbuf_u4(&w, e->bytes_hi);
            break;
        case CLASSFILE_CONSTANT_Long:
        case CLASSFILE_CONSTANT_Double:
            wbuf_u4(&w, e->bytes_hi);
            wbuf_u4(&w, e->bytes_lo);
            i++;
            break;
        case CLASSFILE_CONSTANT_Class:
        case CLASSFILE_CONSTANT_String:
        case CLASSFILE_CONSTANT_MethodType:
        case CLASSFILE_CONSTANT_Module:
        case CLASSFILE_CONSTANT_Package:
            wbuf_u2(&w, e->ref1);
            break;
        case CLASSFILE_CONSTANT_Fieldref:
        case CLASSFILE_CONSTANT_Methodref:
        case CLASSFILE_CONSTANT_InterfaceMethodref:
        case CLASSFILE_CONSTANT_NameAndType:
        case CLASSFILE_CONSTANT_Dynamic:
        case CLASSFILE_CONSTANT_InvokeDynamic:
            wbuf_u2(&w, e->ref1);
            wbuf_u2(&w, e->ref2);
            break;
        case CLASSFILE_CONSTANT_MethodHandle:
            wbuf_u1(&w, e->ref_kind);
            wbuf_u2(&w, e->ref1);
            break;
        default:
            errbuf_set(err, errlen, "constant pool slot %u has tag %u, which cannot be written", i, e->tag);
            rc = -1;
            break;
        }
    }
    if (rc == 0) {
        wbuf_u2(&w, cf->access_flags);
        wbuf_u2(&w, cf->this_class);
        wbuf_u2(&w, cf->super_class);
        wbuf_u2(&w, cf->interface_count);
        for (uint16_t i = 0; i < cf->interface_count; i++)
            wbuf_u2(&w, cf->interfaces[i]);
        write_members(&w, cf->fields, cf->field_count, &rc, err, errlen);
    }
    if (rc == 0)
        write_members(&w, cf->methods, cf->method_count, &rc, err, errlen);
    if (rc == 0)
        rc = write_attrs(&w, cf->attrs, cf->attr_count, err, errlen);
    if (rc == 0 && w.oom) {
        errbuf_set(err, errlen, "out of memory writing the class");
        rc = -1;
    }
    if (rc != 0) {
        free(w.p);
        return -1;
    }
    *out = w.p;
    *outlen = w.len;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* constant pool additions                                                   */
/* ------------------------------------------------------------------------ */

/* Compared by content, not index: a pool may hold the same Utf8 twice, and
 * an entry referring to either copy is equal to what the caller asks for. */
static bool utf8_eq(const classfile *cf, uint16_t index, const char *s, size_t n)
{
    return cp_is(cf, index, CLASSFILE_CONSTANT_Utf8) && cf->cp[index].utf8_len == n &&
           memcmp(cf->cp[index].utf8, s, n) == 0;
}

static bool class_eq(const classfile *cf, uint16_t index, const char *name)
{
    return cp_is(cf, index, CLASSFILE_CONSTANT_Class) && utf8_eq(cf, cf->cp[index].ref1, name, strlen(name));
}

static bool nat_eq(const classfile *cf, uint16_t index, const char *name, const char *descriptor)
{
    return cp_is(cf, index, CLASSFILE_CONSTANT_NameAndType) &&
           utf8_eq(cf, cf->cp[index].ref1, name, strlen(name)) &&
           utf8_eq(cf, cf->cp[index].ref2, descriptor, strlen(descriptor));
}

/* A new one-slot entry, zeroed but for its tag; NULL if the pool is full. */
static classfile_cp_entry *cp_append(classfile *cf, uint8_t tag, uint16_t *index)
{
    /* cp_count is a u2 in the file, so 65535 is as far as it goes. */
    if (cf->cp_count == 0 || cf->cp_count == UINT16_MAX)
        return NULL;
    if (cf->cp_count >= cf->cp_capacity) {
        uint32_t cap = (uint32_t)cf->cp_capacity * 2;
        if (cap < 16)
            cap = 16;
        if (cap > UINT16_MAX)
            cap = UINT16_MAX;
        classfile_cp_entry *cp = realloc(cf->cp, cap * sizeof *cp);
        if (cp == NULL)
            return NULL;
        memset(cp + cf->cp_capacity, 0, (cap - cf->cp_capacity) * sizeof *cp);
        cf->cp = cp;
        cf->cp_capacity = (uint16_t)cap;
    }
    *index = cf->cp_count++;
    classfile_cp_entry *e = &cf->cp[*index];
    memset(e, 0, sizeof *e);
    e->tag = tag;
    return e;
}

uint16_t classfile_cp_add_utf8(classfile *cf, const char *s)
{
    size_t n = strlen(s);
    if (n > UINT16_MAX)
        return 0;
    for (uint32_t i = 1; i < cf->cp_count; i++)
        if (utf8_eq(cf, (uint16_t)i, s, n))
            return (uint16_t)i;
    char *copy = malloc(n + 1);
    if (copy == NULL)
        return 0;
    memcpy(copy, s, n + 1);
    uint16_t index;
    classfile_cp_entry *e = cp_append(cf, CLASSFILE_CONSTANT_Utf8, &index);
    if (e == NULL) {
        free(copy);
        return 0;
    }
    e->utf8 = copy;
    e->utf8_len = (uint16_t)n;
    return index;
}

/* A new entry that refers to others (ref2 0 for the one-reference kinds),
 * or 0 when the pool is full or memory ran out. */
static uint16_t cp_append_refs(classfile *cf, uint8_t tag, uint16_t ref1, uint16_t ref2)
{
    uint16_t index;
    classfile_cp_entry *e = cp_append(cf, tag, &index);
    if (e == NULL)
        return 0;
    e->ref1 = ref1;
    e->ref2 = ref2;
    return index;
}

uint16_t classfile_cp_add_class(classfile *cf, const char *internal_name)
{
    for (uint32_t i = 1; i < cf->cp_count; i++)
        if (class_eq(cf, (uint16_t)i, internal_name))
            return (uint16_t)i;
    uint16_t name = classfile_cp_add_utf8(cf, internal_name);
    return name != 0 ? cp_append_refs(cf, CLASSFILE_CONSTANT_Class, name, 0) : 0;
}

uint16_t classfile_cp_add_name_and_type(classfile *cf, const char *name, const char *descriptor)
{
    for (uint32_t i = 1; i < cf->cp_count; i++)
        if (nat_eq(cf, (uint16_t)i, name, descriptor))
            return (uint16_t)i;
    uint16_t n = classfile_cp_add_utf8(cf, name);
    uint16_t d = n != 0 ? classfile_cp_add_utf8(cf, descriptor) : 0;
    return d != 0 ? cp_append_refs(cf, CLASSFILE_CONSTANT_NameAndType, n, d) : 0;
}

/* Only a Methodref matches: an InterfaceMethodref to the same name is a
 * different constant to the verifier, and invokestatic of a class's method
 * must use the former. */
uint16_t classfile_cp_add_methodref(classfile *cf, const char *class_name, const char *name,
                                    const char *descriptor)
{
    for (uint32_t i = 1; i < cf->cp_count; i++) {
        const classfile_cp_entry *e = &cf->cp[i];
        if (e->tag == CLASSFILE_CONSTANT_Methodref && class_eq(cf, e->ref1, class_name) &&
            nat_eq(cf, e->ref2, name, descriptor))
            return (uint16_t)i;
    }
    uint16_t c = classfile_cp_add_class(cf, class_name);
    uint16_t nt = c != 0 ? classfile_cp_add_name_and_type(cf, name, descriptor) : 0;
    return nt != 0 ? cp_append_refs(cf, CLASSFILE_CONSTANT_Methodref, c, nt) : 0;
}

uint16_t classfile_cp_add_integer(classfile *cf, uint32_t value)
{
    for (uint32_t i = 1; i < cf->cp_count; i++)
        if (cf->cp[i].tag == CLASSFILE_CONSTANT_Integer && cf->cp[i].bytes_hi == value)
            return (uint16_t)i;
    uint16_t index;
    classfile_cp_entry *e = cp_append(cf, CLASSFILE_CONSTANT_Integer, &index);
    if (e == NULL)
        return 0;
    e->bytes_hi = value;
    return index;
}
