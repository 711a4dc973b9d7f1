/*
 * natives.c - wrappers that give native methods their hooks.  See natives.h.
 */
#include "natives.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytecode.h"
#include "errbuf.h"
#include "stackmap.h"

/* A wrapper has no code of the original's to map: its one frame is the
 * handler's, which the stack map adds itself. */
static uint32_t no_pc(void *ctx, uint32_t old, int *ok)
{
    (void)ctx;
    (void)old;
    *ok = 0;
    return 0;
}

/* The load and return opcode offsets of a descriptor letter, from iload and
 * ireturn: int-like 0, long 1, float 2, double 3, reference 4. */
static int kind_of(char c)
{
    switch (c) {
    case 'J': return 1;
    case 'F': return 2;
    case 'D': return 3;
    case 'L': case '[': return 4;
    default: return 0;
    }
}

/* Appends the loads of the arguments (after the receiver, if any) to p;
 * returns the bytes written, or -1 past 255 slots.  *ret is the return
 * kind, -1 for void; *slots the local slots of receiver and arguments. */
static int put_loads(const char *desc, uint32_t slot, uint8_t *p, int *ret, uint32_t *slots)
{
    int n = 0;
    const char *d = desc + 1;
    while (*d != ')' && *d != '\0') {
        int k = kind_of(*d);
        while (*d == '[')
            d++;
        if (*d == 'L')
            d = strchr(d, ';');
        if (d == NULL)
            return -1;
        d++;
        if (slot > 255)
            return -1;
        if (slot <= 3) {
            p[n++] = (uint8_t)(OP_ILOAD_0 + 4 * k + slot);
        } else {
            p[n++] = (uint8_t)(OP_ILOAD + k);
            p[n++] = (uint8_t)slot;
        }
        slot += (k == 1 || k == 3) ? 2 : 1;
    }
    if (*d != ')' || slot > 255)
        return -1;
    *ret = d[1] == 'V' ? -1 : kind_of(d[1]);
    *slots = slot;
    return n;
}

/* Natives the JIT replaces by an intrinsic: the VM binds an intrinsic only
 * to a native of its name (and warns of a wrapper that carries the
 * annotation), so wrapping one would cost its intrinsic.  The annotation is
 * found by its type's constant in the annotation attributes' bytes: a
 * false match only leaves a native unwrapped. */
bool natives_is_intrinsic(const classfile *cf, const classfile_member *m)
{
    static const char *const types[] = {"Ljdk/internal/vm/annotation/IntrinsicCandidate;",
                                        "Ljdk/internal/HotSpotIntrinsicCandidate;"};
    for (uint16_t k = 0; k < m->attr_count; k++) {
        const char *an = classfile_utf8(cf, m->attrs[k].name_index);
        if (an == NULL || (strcmp(an, "RuntimeVisibleAnnotations") != 0 && strcmp(an, "RuntimeInvisibleAnnotations") != 0))
            continue;
        for (uint32_t i = 1; i < cf->cp_count; i++) {
            const char *u = cf->cp[i].tag == CLASSFILE_CONSTANT_Utf8 ? cf->cp[i].utf8 : NULL;
            if (u == NULL || (strcmp(u, types[0]) != 0 && strcmp(u, types[1]) != 0))
                continue;
            for (uint32_t b = 0; b + 1 < m->attrs[k].length; b++)
                if (bytecode_u2(m->attrs[k].data + b) == i)
                    return true;
        }
    }
    return false;
}

/* The wrapper's code: entry, the call of the renamed native, exit and
 * return, and the handler. */
bool natives_wrap(classfile *cf, uint16_t index, uint16_t wrapper_index, const char *prefix, const pool_refs *refs,
                  char *err, size_t errlen)
{
    classfile_member *m = &cf->methods[index];
    const char *name = classfile_utf8(cf, m->name_index);
    const char *desc = classfile_utf8(cf, m->descriptor_index);
    const char *self = classfile_utf8(cf, cf->cp[cf->this_class].ref1);
    bool is_static = (m->access_flags & ACC_STATIC) != 0;
    if (name == NULL || desc == NULL || self == NULL) {
        errbuf_set(err, errlen, "a native method without a name");
        return false;
    }
    uint8_t loads[3 * 256];
    int ret = -1;
    uint32_t slots = 0;
    int nloads = put_loads(desc, is_static ? 0 : 1, loads, &ret, &slots);
    if (nloads < 0)
        return true; /* too many arguments for a wrapper: left alone */
    size_t plen = strlen(prefix) + strlen(name) + 1;
    char *renamed = malloc(plen);
    if (renamed == NULL) {
        errbuf_set(err, errlen, "out of memory");
        return false;
    }
    snprintf(renamed, plen, "%s%s", prefix, name);
    uint16_t renamed_name = classfile_cp_add_utf8(cf, renamed);
    uint16_t target = classfile_cp_add_methodref(cf, self, renamed, desc);
    uint16_t code_name = classfile_cp_add_utf8(cf, "Code");
    free(renamed);
    if (!renamed_name || !target || !code_name) {
        errbuf_set(err, errlen, "the constant pool is full");
        return false;
    }
    uint32_t entry_len = CALL_LEN + (is_static ? 0 : 1);
    uint32_t start = entry_len, call = start + (is_static ? 0 : 1) + (uint32_t)nloads;
    uint32_t end = call + 3, handler = end + CALL_LEN + 1;
    uint32_t len = handler + HANDLER_LEN;
    /* The method table and the native's attribute table (the wrapper's to
     * be, one longer for its Code) grow first: nothing after can fail. */
    classfile_member *grown = realloc(cf->methods, sizeof *grown * (cf->method_count + 1u));
    if (grown != NULL)
        cf->methods = grown;
    m = &cf->methods[index];
    classfile_attr *attrs = grown != NULL ? realloc(m->attrs, sizeof *attrs * (m->attr_count + 1u)) : NULL;
    if (attrs != NULL)
        m->attrs = attrs;
    uint8_t *code = malloc(len);
    classfile_code *c = calloc(1, sizeof *c);
    classfile_exception *ex = malloc(sizeof *ex);
    if (code == NULL || c == NULL || ex == NULL || attrs == NULL) {
        free(code);
        free(c);
        free(ex);
        errbuf_set(err, errlen, "out of memory");
        return false;
    }
    uint8_t *p = code;
    if (!is_static)
        *p++ = OP_ALOAD_0;
    p = hookcall_emit(p, refs, wrapper_index, is_static ? refs->enter : refs->enter_this);
    if (!is_static)
        *p++ = OP_ALOAD_0;
    memcpy(p, loads, (size_t)nloads);
    p += nloads;
    *p++ = is_static ? OP_INVOKESTATIC : OP_INVOKESPECIAL;
    hookcall_u2(p, target);
    p = hookcall_emit(p + 2, refs, wrapper_index, refs->exit);
    *p++ = ret < 0 ? BYTECODE_RETURN : (uint8_t)(OP_IRETURN + ret);
    p = hookcall_emit(p, refs, wrapper_index, refs->exit);
    *p = OP_ATHROW;
    *ex = (classfile_exception){(uint16_t)start, (uint16_t)end, (uint16_t)handler, 0};
    /* the arguments; or a long result and the two halves of the number */
    c->max_stack = (uint16_t)(slots + 4);
    c->max_locals = (uint16_t)slots;
    c->code_length = len;
    c->code = code;
    c->exception_count = 1;
    c->exceptions = ex;
    /* the wrapper takes the native's place: its flags, less native, and its
     * attributes (signature, exceptions, annotations), then its code */
    classfile_member *w = &cf->methods[cf->method_count];
    *w = *m;
    w->access_flags = (uint16_t)(m->access_flags & ~(ACC_NATIVE | ACC_SYNCHRONIZED));
    w->attrs[w->attr_count++] = (classfile_attr){code_name, 0, NULL, c};
    cf->method_count++;
    m->name_index = renamed_name;
    m->access_flags = (uint16_t)((m->access_flags & ~(ACC_PUBLIC | ACC_PROTECTED)) | ACC_PRIVATE | ACC_SYNTHETIC);
    m->attr_count = 0;
    m->attrs = NULL;
    if (cf->major_version >= 50) {
        stackmap_map none = {no_pc, no_pc, NULL};
        stackmap_handler h = {handler, 0};
        uint8_t *out;
        uint32_t outlen;
        if (stackmap_rewrite(NULL, 0, &none, &h, 1, refs->throwable, &out, &outlen, err, errlen) != 0)
            return false;
        classfile_attr *more = realloc(c->attrs, sizeof *more);
        if (more == NULL) {
            free(out);
            errbuf_set(err, errlen, "out of memory");
            return false;
        }
        c->attrs = more;
        c->attrs[0] = (classfile_attr){refs->stack_map_name, outlen, out, NULL};
        c->attr_count = 1;
    }
    return true;
}
