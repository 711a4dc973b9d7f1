/*
 * arrayhooks.c - the call after each array allocation.  See arrayhooks.h.
 */
#include "arrayhooks.h"

#include "errbuf.h"

uint32_t arrayhooks_len(uint8_t op)
{
    return op == OP_NEWARRAY || op == OP_ANEWARRAY ? 4u : op == OP_MULTIANEWARRAY ? 6u : 0u;
}

void arrayhooks_emit(uint8_t *q, const uint8_t *insn, const pool_refs *refs)
{
    *q++ = OP_DUP;
    if (insn[0] == OP_MULTIANEWARRAY) {
        *q++ = OP_BIPUSH;
        *q++ = insn[3];
    }
    q[0] = OP_INVOKESTATIC;
    hookcall_u2(q + 1, insn[0] == OP_MULTIANEWARRAY ? refs->new_multi_array : refs->new_array);
}

/* Added at the first allocation: most methods allocate no array, and every
 * constant added costs a retransformation a scan of the pool. */
bool arrayhooks_refs(classfile *cf, const char *hooks_class, const char *new_array, const char *new_multi_array,
                     const uint8_t *code, const uint32_t *starts, uint32_t n, pool_refs *refs, uint32_t *extra,
                     char *err, size_t errlen)
{
    *extra = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t op = code[starts[i]];
        if (arrayhooks_len(op) == 0)
            continue;
        bool multi = op == OP_MULTIANEWARRAY;
        uint16_t *ref = multi ? &refs->new_multi_array : &refs->new_array;
        if (*ref == 0)
            *ref = multi ? classfile_cp_add_methodref(cf, hooks_class, new_multi_array, "(Ljava/lang/Object;I)V")
                         : classfile_cp_add_methodref(cf, hooks_class, new_array, "(Ljava/lang/Object;)V");
        if (*ref == 0) {
            errbuf_set(err, errlen, "the constant pool is full");
            return false;
        }
        /* the array dup'd, and a dimension count */
        if (*extra < (multi ? 2u : 1u))
            *extra = multi ? 2u : 1u;
    }
    return true;
}
