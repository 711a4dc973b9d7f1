/*
 * bytecode.c - instruction lengths, branch targets and the instruction walk.
 * See bytecode.h.
 */
#include "bytecode.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

#include "errbuf.h"

/*
 * Length of each opcode with fixed operands.  0: the length depends on the
 * operands (tableswitch, lookupswitch, wide).  -1: never valid in a class
 * file; breakpoint and impdep1/2 are reserved for debuggers and the JVM
 * itself (JVMS 6.2), so meeting one means the input is not a class's code.
 * A table rather than a switch so that a row can be checked against the
 * opcode chart at a glance.
 */
static const int8_t fixed_length[256] = {
    /* 0x00 nop, aconst_null, iconst_*, lconst_*, fconst_*, dconst_* */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0x10 bipush, sipush, ldc, ldc_w, ldc2_w, iload..aload, iload_0.. */
    2, 3, 2, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1,
    /* 0x20 ..aload_3, iaload, laload */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0x30 faload..saload, istore..astore, istore_0.. */
    1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1,
    /* 0x40 ..astore_3, iastore */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0x50 lastore..sastore, pop..swap */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0x60 arithmetic */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0x70 arithmetic, shifts, logic */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0x80 ior..lxor, iinc, conversions */
    1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0x90 conversions, comparisons, ifeq.. */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3,
    /* 0xa0 ..if_acmpne, goto, jsr, ret, tableswitch, lookupswitch, ireturn.. */
    3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 0, 0, 1, 1, 1, 1,
    /* 0xb0 areturn, return, field access, invoke*, new, newarray, anewarray,
     * arraylength, athrow */
    1, 1, 3, 3, 3, 3, 3, 3, 3, 5, 5, 3, 2, 3, 1, 1,
    /* 0xc0 checkcast, instanceof, monitorenter/exit, wide, multianewarray,
     * ifnull, ifnonnull, goto_w, jsr_w; then breakpoint and nothing */
    3, 3, 1, 1, 0, 4, 3, 3, 5, 5, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
};

enum {
    OP_ILOAD = 0x15,
    OP_ALOAD = 0x19,
    OP_ISTORE = 0x36,
    OP_ASTORE = 0x3a,
    OP_IINC = 0x84,
    OP_IFEQ = 0x99,
    OP_JSR = 0xa8,
    OP_RET = 0xa9,
    OP_IFNULL = 0xc6,
    OP_IFNONNULL = 0xc7,
};

static int32_t s16(const uint8_t *p)
{
    uint32_t u = bytecode_u2(p);
    return u <= 0x7fff ? (int32_t)u : (int32_t)u - 0x10000;
}

/* Spelled out so that no out-of-range unsigned-to-signed conversion, which
 * C leaves to the implementation, is involved. */
static int32_t s32(const uint8_t *p)
{
    uint32_t u = bytecode_u4(p);
    return u <= INT32_MAX ? (int32_t)u : (int32_t)(u - 0x80000000u) - INT32_MAX - 1;
}

typedef struct {
    uint32_t operands;  /* offset of the default, after the padding */
    int64_t entries;    /* table entries or match-offset pairs */
    int length;
} switch_shape;

static const char *switch_name(uint8_t op)
{
    return op == BYTECODE_TABLESWITCH ? "tableswitch" : "lookupswitch";
}

/* The counts are checked before they are multiplied out: a hostile count
 * must fail as "runs past the end", never wrap into a plausible length.
 * 64-bit arithmetic makes that safe for any 32-bit count. */
static int switch_layout(const uint8_t *code, uint32_t code_len, uint32_t pc, switch_shape *s, char *err,
                         size_t errlen)
{
    uint8_t op = code[pc];
    /* The operands are aligned to the start of the code, not of the class
     * file, so the padding changes when code before the switch grows: the
     * rewriter has to recompute it after every insertion. */
    uint64_t operands = (uint64_t)pc + 1 + (3 - pc % 4);
    uint64_t header = op == BYTECODE_TABLESWITCH ? 12 : 8;
    if (operands + header > code_len) {
        errbuf_set(err, errlen, "pc %u: %s runs past the end of the code (%u bytes)", pc, switch_name(op),
               code_len);
        return -1;
    }
    const uint8_t *p = code + operands;
    int64_t entries;
    uint64_t entry_size;
    if (op == BYTECODE_TABLESWITCH) {
        int32_t low = s32(p + 4), high = s32(p + 8);
        if (high < low) {
            errbuf_set(err, errlen, "pc %u: tableswitch high %d is below low %d", pc, high, low);
            return -1;
        }
        entries = (int64_t)high - low + 1;
        entry_size = 4;
    } else {
        int32_t npairs = s32(p + 4);
        if (npairs < 0) {
            errbuf_set(err, errlen, "pc %u: lookupswitch has a negative pair count %d", pc, npairs);
            return -1;
        }
        entries = npairs;
        entry_size = 8;
    }
    uint64_t end = operands + header + (uint64_t)entries * entry_size;
    if (end > code_len) {
        errbuf_set(err, errlen, "pc %u: %s with %lld entries runs past the end of the code (%u bytes)", pc,
               switch_name(op), (long long)entries, code_len);
        return -1;
    }
    /* Only reachable with code far beyond the 64 KiB a class allows. */
    if (end - pc > INT_MAX) {
        errbuf_set(err, errlen, "pc %u: %s is too long", pc, switch_name(op));
        return -1;
    }
    s->operands = (uint32_t)operands;
    s->entries = entries;
    s->length = (int)(end - pc);
    return s->length;
}

int bytecode_length(const uint8_t *code, uint32_t code_len, uint32_t pc, char *err, size_t errlen)
{
    if (pc >= code_len) {
        errbuf_set(err, errlen, "pc %u is at or past the end of the code (%u bytes)", pc, code_len);
        return -1;
    }
    uint8_t op = code[pc];
    uint32_t left = code_len - pc;
    int len = fixed_length[op];
    if (len < 0) {
        errbuf_set(err, errlen, "pc %u" ERRBUF_UNKNOWN "opcode 0x%02x", pc, op);
        return -1;
    }
    if (op == BYTECODE_TABLESWITCH || op == BYTECODE_LOOKUPSWITCH) {
        switch_shape s;
        return switch_layout(code, code_len, pc, &s, err, errlen);
    }
    if (op == BYTECODE_WIDE) {
        if (left < 2) {
            errbuf_set(err, errlen, "pc %u: wide runs past the end of the code (%u bytes)", pc, code_len);
            return -1;
        }
        uint8_t m = code[pc + 1];
        /* Only a local variable index can be widened; anything else after
         * wide would be read with the wrong length by every later tool. */
        if (m == OP_IINC)
            len = 6;
        else if ((m >= OP_ILOAD && m <= OP_ALOAD) || (m >= OP_ISTORE && m <= OP_ASTORE) || m == OP_RET)
            len = 4;
        else {
            errbuf_set(err, errlen, "pc %u: wide cannot modify opcode 0x%02x", pc, m);
            return -1;
        }
    }
    if ((uint32_t)len > left) {
        errbuf_set(err, errlen, "pc %u: opcode 0x%02x needs %d bytes, the code has %u left", pc, op, len, left);
        return -1;
    }
    return len;
}

bool bytecode_is_return(uint8_t op)
{
    return op >= BYTECODE_IRETURN && op <= BYTECODE_RETURN;
}

/* Stores target number n if there is room; false if it leaves the code,
 * since a caller relocating branches could not map such a target at all. */
static bool put_target(uint32_t pc, int32_t offset, uint32_t code_len, int32_t *targets, int max, int n)
{
    int64_t t = (int64_t)pc + offset;
    if (t < 0 || t >= code_len || t > INT32_MAX)
        return false;
    if (n < max)
        targets[n] = (int32_t)t;
    return true;
}

int bytecode_targets(const uint8_t *code, uint32_t code_len, uint32_t pc, int32_t *targets, int max)
{
    if (bytecode_length(code, code_len, pc, NULL, 0) < 0)
        return -1;
    if (targets == NULL || max < 0)
        max = 0;
    uint8_t op = code[pc];
    if ((op >= OP_IFEQ && op <= OP_JSR) || op == OP_IFNULL || op == OP_IFNONNULL)
        return put_target(pc, s16(code + pc + 1), code_len, targets, max, 0) ? 1 : -1;
    if (op == BYTECODE_GOTO_W || op == BYTECODE_JSR_W)
        return put_target(pc, s32(code + pc + 1), code_len, targets, max, 0) ? 1 : -1;
    if (op != BYTECODE_TABLESWITCH && op != BYTECODE_LOOKUPSWITCH)
        return 0;

    switch_shape s;
    switch_layout(code, code_len, pc, &s, NULL, 0);  /* cannot fail: the length check passed */
    const uint8_t *p = code + s.operands;
    if (!put_target(pc, s32(p), code_len, targets, max, 0))
        return -1;
    /* Every entry is checked even when it is not stored, so the answer to
     * "is this instruction well formed" does not depend on max. */
    for (int64_t i = 0; i < s.entries; i++) {
        const uint8_t *e = op == BYTECODE_TABLESWITCH ? p + 12 + 4 * i : p + 8 + 8 * i + 4;
        if (!put_target(pc, s32(e), code_len, targets, max, (int)(i + 1)))
            return -1;
    }
    return (int)(s.entries + 1);  /* fits: each entry takes at least 4 bytes of an int-sized length */
}

int bytecode_walk(const uint8_t *code, uint32_t code_len, uint32_t *starts, uint32_t max, char *err,
                  size_t errlen)
{
    /* JVMS 4.7.3: a Code attribute's code is never empty, and the rewriter
     * needs an instruction to put the entry call before. */
    if (code_len == 0) {
        errbuf_set(err, errlen, "empty code");
        return -1;
    }
    uint32_t pc = 0;
    int count = 0;
    /* bytecode_length refuses any instruction that runs past code_len, so
     * the walk ends exactly at code_len or fails on the last instruction. */
    while (pc < code_len) {
        int len = bytecode_length(code, code_len, pc, err, errlen);
        if (len < 0)
            return -1;
        if (starts != NULL) {
            if ((uint32_t)count >= max) {
                errbuf_set(err, errlen, "more than %u instructions (pc %u)", max, pc);
                return -1;
            }
            starts[count] = pc;
        }
        if (count == INT_MAX) {
            errbuf_set(err, errlen, "too many instructions (pc %u)", pc);
            return -1;
        }
        count++;
        pc += (uint32_t)len;
    }
    return count;
}
