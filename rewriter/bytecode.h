/*
 * bytecode - walking the instructions of a method's code (JVM specification,
 * chapter 6).  The rewriter must know where each instruction starts before it
 * inserts anything: an insertion inside an instruction, or a branch whose
 * target no longer lands on one, makes the class unverifiable.
 *
 * It knows instruction shapes only, not types or the stack: that is the
 * verifier's job, and the JVM will run it on whatever the rewriter emits.
 *
 * No JVM TI, no global state.  code is only read, never past code_len.
 */
#ifndef JVMPI_BYTECODE_H_
#define JVMPI_BYTECODE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    BYTECODE_IRETURN = 0xac,
    BYTECODE_RETURN = 0xb1,
    BYTECODE_TABLESWITCH = 0xaa,
    BYTECODE_LOOKUPSWITCH = 0xab,
    BYTECODE_WIDE = 0xc4,
    BYTECODE_GOTO_W = 0xc8,
    BYTECODE_JSR_W = 0xc9,
};

/* Operands, big-endian as the class file is. */
static inline uint32_t bytecode_u2(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }
static inline uint32_t bytecode_u4(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * The length in bytes of the instruction at pc, or -1 with a one-line reason
 * in err: an opcode that may not appear in a class file (including breakpoint
 * 0xca and impdep1/2 0xfe/0xff), a wide that modifies something it cannot,
 * a switch with a negative pair count or high < low, and any instruction that
 * runs past code_len (pc >= code_len included).  Switch padding is counted
 * from the start of the code, as the JVM aligns it.  err may be NULL.
 */
int bytecode_length(const uint8_t *code, uint32_t code_len, uint32_t pc, char *err, size_t errlen);

/* ireturn, lreturn, freturn, dreturn, areturn, return: the normal exits. */
bool bytecode_is_return(uint8_t op);

/*
 * The absolute targets of the branch at pc, in instruction order (a switch's
 * default first, then its table; duplicates kept).  Fall-through is not a
 * target; ret is given none since its target is in a local variable.
 * Returns the number of targets, 0 for an instruction that is not a branch,
 * or -1 if the instruction is malformed (as bytecode_length would refuse it)
 * or a target lies outside [0, code_len).  Only the first max targets are
 * stored; a larger return value says how many more there are (like snprintf),
 * so a switch can be sized with max 0 first.  targets may be NULL if max is 0.
 */
int bytecode_targets(const uint8_t *code, uint32_t code_len, uint32_t pc, int32_t *targets, int max);

/*
 * Walks the code from offset 0 and stores where each instruction starts in
 * starts (up to max of them).  Returns the number of instructions, or -1 with
 * a one-line reason: empty code, a malformed instruction, more than max
 * instructions, or a last instruction that does not end exactly at code_len.
 * With starts NULL the code is only checked and counted, and max is ignored.
 */
int bytecode_walk(const uint8_t *code, uint32_t code_len, uint32_t *starts, uint32_t max, char *err,
                  size_t errlen);

#endif
