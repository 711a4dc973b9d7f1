/*
 * hookcall - what the method rewriting (inject.c), the native wrappers
 * (natives.c) and the array hooks (arrayhooks.c) put into a class: a call
 * of one of the hooks (inject.h), the hooks' constants in the class's pool,
 * and the opcodes and flags they read and write.  Internal to the rewriter;
 * header-only, like wbuf.h.
 */
#ifndef JVMPI_HOOKCALL_H_
#define JVMPI_HOOKCALL_H_

#include <stdint.h>

enum {
    OP_ALOAD_0 = 0x2a,
    OP_LDC_W = 0x13,
    OP_SIPUSH = 0x11,
    OP_IADD = 0x60,
    OP_IFEQ = 0x99,
    OP_GOTO = 0xa7,
    OP_JSR = 0xa8,
    OP_IFNULL = 0xc6,
    OP_IFNONNULL = 0xc7,
    OP_INVOKESPECIAL = 0xb7,
    OP_INVOKESTATIC = 0xb8,
    OP_NEW = 0xbb,
    OP_DUP = 0x59,
    OP_BIPUSH = 0x10,
    OP_NEWARRAY = 0xbc,
    OP_ANEWARRAY = 0xbd,
    OP_MULTIANEWARRAY = 0xc5,
    OP_ATHROW = 0xbf,
    ACC_PUBLIC = 0x0001,
    ACC_PRIVATE = 0x0002,
    ACC_PROTECTED = 0x0004,
    ACC_STATIC = 0x0008,
    ACC_SYNCHRONIZED = 0x0020,
    ACC_NATIVE = 0x0100,
    ACC_SYNTHETIC = 0x1000,
    OP_ILOAD = 0x15,
    OP_ILOAD_0 = 0x1a,
    OP_IRETURN = 0xac,
    CODE_MAX = 65535,
};

/* ldc_w <the class's first method number>; sipush <the method's index>;
 * iadd; invokestatic <hook>.  One constant per class rather than one per
 * method: a retransformation merges the new constant pool into the old one
 * by searching the old for each new entry, so every added constant costs
 * the VM a scan of the pool (HotSpot's ConstantPool::find_matching_entry). */
#define CALL_LEN 10u
/* a handler: the exit call, then athrow */
#define HANDLER_LEN (CALL_LEN + 1u)

/* The constants a class's calls name, added to its pool once. */
typedef struct {
    uint16_t enter, enter_this, exit, exit_init, step, throwable, stack_map_name;
    uint16_t leaf, leaf_this; /* 0 until a leaf needs them */
    uint16_t new_array, new_multi_array; /* 0 until an array allocation needs them */
    uint16_t first_id; /* the Integer of the class's first method number */
} pool_refs;

static inline void hookcall_u2(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline uint8_t *hookcall_emit(uint8_t *p, const pool_refs *refs, uint16_t index, uint16_t hook)
{
    p[0] = OP_LDC_W;
    hookcall_u2(p + 1, refs->first_id);
    p[3] = OP_SIPUSH;
    hookcall_u2(p + 4, index);
    p[6] = OP_IADD;
    p[7] = OP_INVOKESTATIC;
    hookcall_u2(p + 8, hook);
    return p + CALL_LEN;
}

#endif
