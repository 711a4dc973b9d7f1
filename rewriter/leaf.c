/*
 * leaf.c - which methods may report their entry and exit in one call.  See
 * leaf.h.
 */
#include "leaf.h"

#include <string.h>

#include "bytecode.h"

enum {
    ACC_STATIC = 0x0008,
    ACC_FINAL = 0x0010,
    ACC_SYNCHRONIZED = 0x0020,
    ACC_INTERFACE = 0x0200,
    OP_ACONST_NULL = 0x01,
    OP_LDC = 0x12,
    OP_LDC_W = 0x13,
    OP_LDC2_W = 0x14,
    OP_ILOAD = 0x15,
    OP_ALOAD_0 = 0x2a,
    OP_ALOAD_3 = 0x2d,
    OP_ISTORE = 0x36,
    OP_ASTORE = 0x3a,
    OP_ISTORE_0 = 0x3b,
    OP_ASTORE_3 = 0x4e,
    OP_POP = 0x57,
    OP_SWAP = 0x5f,
    OP_IADD = 0x60,
    OP_IDIV = 0x6c,
    OP_LDIV = 0x6d,
    OP_IREM = 0x70,
    OP_LREM = 0x71,
    OP_IINC = 0x84,
    OP_DCMPG = 0x98,
    OP_IFEQ = 0x99,
    OP_GOTO = 0xa7,
    OP_GETSTATIC = 0xb2,
    OP_PUTSTATIC = 0xb3,
    OP_GETFIELD = 0xb4,
    OP_PUTFIELD = 0xb5,
    OP_IFNULL = 0xc6,
    OP_IFNONNULL = 0xc7,
    OP_GOTO_W = 0xc8,
};

static bool named(const classfile *cf, uint16_t index, const char *name)
{
    const char *s = classfile_utf8(cf, index);
    return s != NULL && strcmp(s, name) == 0;
}

/* ldc of an int, float, long or double: nothing to resolve. */
static bool number_constant(const classfile *cf, uint32_t index)
{
    if (index == 0 || index >= cf->cp_count)
        return false;
    uint8_t tag = cf->cp[index].tag;
    return tag == CLASSFILE_CONSTANT_Integer || tag == CLASSFILE_CONSTANT_Float || tag == CLASSFILE_CONSTANT_Long ||
           tag == CLASSFILE_CONSTANT_Double;
}

/* A field reference to a field the class declares itself, static or not as
 * the instruction needs it, and not final if written: resolving it loads
 * nothing and cannot fail. */
static bool own_field(const classfile *cf, uint32_t ref, bool is_static, bool put)
{
    if (ref == 0 || ref >= cf->cp_count || cf->cp[ref].tag != CLASSFILE_CONSTANT_Fieldref)
        return false;
    const classfile_cp_entry *fr = &cf->cp[ref];
    if (fr->ref1 != cf->this_class) {
        const char *self = classfile_utf8(cf, cf->cp[cf->this_class].ref1);
        if (fr->ref1 >= cf->cp_count || cf->cp[fr->ref1].tag != CLASSFILE_CONSTANT_Class || self == NULL ||
            !named(cf, cf->cp[fr->ref1].ref1, self))
            return false;
    }
    if (fr->ref2 >= cf->cp_count || cf->cp[fr->ref2].tag != CLASSFILE_CONSTANT_NameAndType)
        return false;
    const char *name = classfile_utf8(cf, cf->cp[fr->ref2].ref1);
    const char *desc = classfile_utf8(cf, cf->cp[fr->ref2].ref2);
    if (name == NULL || desc == NULL)
        return false;
    for (uint16_t i = 0; i < cf->field_count; i++) {
        const classfile_member *f = &cf->fields[i];
        if (named(cf, f->name_index, name) && named(cf, f->descriptor_index, desc))
            return ((f->access_flags & ACC_STATIC) != 0) == is_static && !(put && (f->access_flags & ACC_FINAL));
    }
    return false;
}

/* Pushes a local or a constant, and can neither throw nor resolve. */
static bool plain_push(const classfile *cf, const uint8_t *p)
{
    if (p[0] >= OP_ACONST_NULL && p[0] < OP_LDC)
        return true;
    if (p[0] == OP_LDC)
        return number_constant(cf, p[1]);
    if (p[0] == OP_LDC_W || p[0] == OP_LDC2_W)
        return number_constant(cf, bytecode_u2(p + 1));
    return p[0] >= OP_ILOAD && p[0] <= OP_ALOAD_3;
}

/* Stores and iinc into local 0, which would no longer be `this`. */
static bool writes_local0(const uint8_t *p)
{
    if ((p[0] >= OP_ISTORE && p[0] <= OP_ASTORE) || p[0] == OP_IINC)
        return p[1] == 0;
    return p[0] >= OP_ISTORE_0 && p[0] <= OP_ASTORE_3 && (p[0] - OP_ISTORE_0) % 4 == 0;
}

static bool is_branch(uint8_t op)
{
    return (op >= OP_IFEQ && op <= OP_GOTO) || op == BYTECODE_TABLESWITCH || op == BYTECODE_LOOKUPSWITCH ||
           op == OP_IFNULL || op == OP_IFNONNULL || op == OP_GOTO_W;
}

/* Everything but field access and branches: what may appear as it is. */
static bool harmless(const classfile *cf, const uint8_t *p)
{
    uint8_t op = p[0];
    if (op == 0x00 || plain_push(cf, p) || bytecode_is_return(op))
        return true;
    if ((op >= OP_ISTORE && op <= OP_ASTORE) || (op >= OP_ISTORE_0 && op <= OP_ASTORE_3) || op == OP_IINC)
        return !writes_local0(p);
    if (op >= OP_POP && op <= OP_SWAP)
        return true;
    /* arithmetic, conversions, comparisons; not the integer divisions */
    return op >= OP_IADD && op <= OP_DCMPG && op != OP_IINC && op != OP_IDIV && op != OP_LDIV && op != OP_IREM &&
           op != OP_LREM;
}

/* Every entry of every LineNumberTable names the same line. */
static bool one_line(const classfile *cf, const classfile_code *c)
{
    int line = -1;
    for (uint16_t k = 0; k < c->attr_count; k++) {
        const classfile_attr *a = &c->attrs[k];
        if (!named(cf, a->name_index, "LineNumberTable"))
            continue;
        uint32_t n = a->length >= 2 ? bytecode_u2(a->data) : 0;
        if (a->length != 2 + 4 * n)
            return false;
        for (uint32_t e = 0; e < n; e++) {
            int l = (int)bytecode_u2(a->data + 2 + 4 * e + 2);
            if (line >= 0 && l != line)
                return false;
            line = l;
        }
    }
    return true;
}

bool leaf_method(const classfile *cf, const classfile_member *m)
{
    const classfile_code *c = classfile_code_of(m);
    const char *name = classfile_utf8(cf, m->name_index);
    if (c == NULL || name == NULL || name[0] == '<' || (m->access_flags & ACC_SYNCHRONIZED) ||
        (cf->access_flags & ACC_INTERFACE) || c->exception_count != 0 || c->code_length > LEAF_MAX_CODE ||
        !one_line(cf, c))
        return false;
    uint32_t starts[LEAF_MAX_CODE];
    int n = bytecode_walk(c->code, c->code_length, starts, LEAF_MAX_CODE, NULL, 0);
    if (n <= 0)
        return false;
    bool target[LEAF_MAX_CODE] = {false};
    for (int i = 0; i < n; i++) {
        if (!is_branch(c->code[starts[i]]))
            continue;
        int32_t to[LEAF_MAX_CODE];
        int k = bytecode_targets(c->code, c->code_length, starts[i], to, LEAF_MAX_CODE);
        if (k < 0 || k > (int)LEAF_MAX_CODE)
            return false;
        for (int j = 0; j < k; j++) {
            if ((uint32_t)to[j] <= starts[i])
                return false; /* a loop */
            target[to[j]] = true;
        }
    }
    bool is_static = (m->access_flags & ACC_STATIC) != 0;
    for (int i = 0; i < n; i++) {
        const uint8_t *p = c->code + starts[i];
        if (is_branch(p[0]) || harmless(cf, p))
            continue;
        if (p[0] == OP_GETSTATIC || p[0] == OP_PUTSTATIC) {
            if (!own_field(cf, bytecode_u2(p + 1), true, p[0] == OP_PUTSTATIC))
                return false;
        } else if (p[0] == OP_GETFIELD) {
            /* aload_0 right before, and no branch between: the receiver is this */
            if (is_static || i < 1 || c->code[starts[i - 1]] != OP_ALOAD_0 || target[starts[i]] ||
                !own_field(cf, bytecode_u2(p + 1), false, false))
                return false;
        } else if (p[0] == OP_PUTFIELD) {
            if (is_static || i < 2 || c->code[starts[i - 2]] != OP_ALOAD_0 ||
                !plain_push(cf, c->code + starts[i - 1]) || target[starts[i - 1]] || target[starts[i]] ||
                !own_field(cf, bytecode_u2(p + 1), false, true))
                return false;
        } else {
            return false;
        }
    }
    return true;
}
