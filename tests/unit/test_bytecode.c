/*
 * test_bytecode.c - the instruction walker (rewriter/bytecode.c).
 *
 * The rewriter will insert code between instructions and relocate branches,
 * so a wrong length anywhere silently shifts every later instruction.  Three
 * angles: each opcode's length checked against an opcode chart written here
 * independently of the implementation's table; malformed code refused from
 * buffers of exactly its length, so AddressSanitizer sees any over-read; and
 * every method javac made of tests/java walked to its end with every branch
 * landing on an instruction start.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "bytecode.h"
#include "class_files.h"
#include "classfile.h"

/* ------------------------------------------------------------------------ */
/* helpers                                                                   */
/* ------------------------------------------------------------------------ */

/* A heap copy of exactly len bytes: a read past the end is an ASan error. */
static uint8_t *exact_copy(const uint8_t *data, size_t len)
{
    uint8_t *copy = malloc(len > 0 ? len : 1);
    ck_assert_ptr_nonnull(copy);
    if (len > 0)
        memcpy(copy, data, len);
    return copy;
}

static int length_of(const uint8_t *code, uint32_t len, uint32_t pc)
{
    uint8_t *copy = exact_copy(code, len);
    char err[256] = "";
    int n = bytecode_length(copy, len, pc, err, sizeof err);
    free(copy);
    return n;
}

static void expect_length_refused(const uint8_t *code, uint32_t len, uint32_t pc, const char *what,
                                  const char *needle)
{
    uint8_t *copy = exact_copy(code, len);
    char err[256];
    memset(err, 0, sizeof err);
    int n = bytecode_length(copy, len, pc, err, sizeof err);
    free(copy);
    ck_assert_msg(n == -1, "%s: accepted with length %d", what, n);
    ck_assert_msg(err[0] != '\0', "%s: refused without a reason", what);
    ck_assert_msg(strchr(err, '\n') == NULL, "%s: reason is not one line: %s", what, err);
    if (needle != NULL)
        ck_assert_msg(strstr(err, needle) != NULL, "%s: reason \"%s\" does not mention \"%s\"", what, err,
                      needle);
}

/* Every proper prefix of the instruction at pc is refused by length, walk
 * and targets alike. */
static void expect_every_cut_refused(const uint8_t *code, uint32_t pc, uint32_t full, const char *what)
{
    for (uint32_t cut = pc; cut < full; cut++) {
        char name[128];
        snprintf(name, sizeof name, "%s cut to %u of %u bytes", what, cut, full);
        expect_length_refused(code, cut, pc, name, NULL);
        uint8_t *copy = exact_copy(code, cut);
        int32_t t[8];
        ck_assert_msg(bytecode_targets(copy, cut, pc, t, 8) == -1, "%s: targets accepted", name);
        /* cut at pc leaves only the instructions before it, a whole code */
        if (cut > pc || cut == 0) {
            char err[256] = "";
            uint32_t starts[64];
            ck_assert_msg(bytecode_walk(copy, cut, starts, 64, err, sizeof err) == -1, "%s: walk accepted", name);
            ck_assert_msg(err[0] != '\0', "%s: walk refused without a reason", name);
        }
        free(copy);
    }
}

static void put32(uint8_t *p, int32_t v)
{
    uint32_t u = (uint32_t)v;
    p[0] = (uint8_t)(u >> 24);
    p[1] = (uint8_t)(u >> 16);
    p[2] = (uint8_t)(u >> 8);
    p[3] = (uint8_t)u;
}

/* ------------------------------------------------------------------------ */
/* (a) lengths and targets of hand-assembled code                            */
/* ------------------------------------------------------------------------ */

/* The opcode chart of JVMS 6.5 by instruction family, kept apart from the
 * implementation's flat table so that a slip in one does not hide in both.
 * Variable-length opcodes (tableswitch, lookupswitch, wide) are tested on
 * their own. */
static const struct {
    uint8_t first, last;
    int length;
    const char *family;
} chart[] = {
    {0x00, 0x0f, 1, "nop, constants"},
    {0x10, 0x10, 2, "bipush"},
    {0x11, 0x11, 3, "sipush"},
    {0x12, 0x12, 2, "ldc"},
    {0x13, 0x14, 3, "ldc_w, ldc2_w"},
    {0x15, 0x19, 2, "iload..aload"},
    {0x1a, 0x2d, 1, "iload_0..aload_3"},
    {0x2e, 0x35, 1, "array loads"},
    {0x36, 0x3a, 2, "istore..astore"},
    {0x3b, 0x4e, 1, "istore_0..astore_3"},
    {0x4f, 0x56, 1, "array stores"},
    {0x57, 0x5f, 1, "stack"},
    {0x60, 0x83, 1, "arithmetic, logic"},
    {0x84, 0x84, 3, "iinc"},
    {0x85, 0x93, 1, "conversions"},
    {0x94, 0x98, 1, "comparisons"},
    {0x99, 0xa6, 3, "if<cond>, if_icmp, if_acmp"},
    {0xa7, 0xa8, 3, "goto, jsr"},
    {0xa9, 0xa9, 2, "ret"},
    {0xac, 0xb1, 1, "returns"},
    {0xb2, 0xb5, 3, "field access"},
    {0xb6, 0xb8, 3, "invokevirtual, invokespecial, invokestatic"},
    {0xb9, 0xb9, 5, "invokeinterface"},
    {0xba, 0xba, 5, "invokedynamic"},
    {0xbb, 0xbb, 3, "new"},
    {0xbc, 0xbc, 2, "newarray"},
    {0xbd, 0xbd, 3, "anewarray"},
    {0xbe, 0xbf, 1, "arraylength, athrow"},
    {0xc0, 0xc1, 3, "checkcast, instanceof"},
    {0xc2, 0xc3, 1, "monitorenter, monitorexit"},
    {0xc5, 0xc5, 4, "multianewarray"},
    {0xc6, 0xc7, 3, "ifnull, ifnonnull"},
    {0xc8, 0xc9, 5, "goto_w, jsr_w"},
};

START_TEST(test_fixed_lengths)
{
    int covered = 0;
    for (size_t f = 0; f < sizeof chart / sizeof chart[0]; f++) {
        for (unsigned op = chart[f].first; op <= chart[f].last; op++) {
            uint8_t code[8] = {0};
            code[0] = (uint8_t)op;
            /* at the start and after a nop: the length does not depend on pc */
            uint8_t shifted[9] = {0x00};
            shifted[1] = (uint8_t)op;
            int len = chart[f].length;
            int got = length_of(code, (uint32_t)len, 0);
            ck_assert_msg(got == len, "%s opcode 0x%02x: length %d, want %d", chart[f].family, op, got, len);
            ck_assert_int_eq(length_of(shifted, (uint32_t)len + 1, 1), len);
            /* trailing bytes belong to the next instruction */
            ck_assert_int_eq(length_of(code, sizeof code, 0), len);
            char name[64];
            snprintf(name, sizeof name, "%s opcode 0x%02x", chart[f].family, op);
            expect_every_cut_refused(code, 0, (uint32_t)len, name);
            covered++;
        }
    }
    /* 0x00..0xc9 less the three variable-length opcodes */
    ck_assert_int_eq(covered, 0xca - 3);
}
END_TEST

START_TEST(test_wide)
{
    static const uint8_t loads_stores[] = {0x15, 0x16, 0x17, 0x18, 0x19, 0x36, 0x37,
                                           0x38, 0x39, 0x3a, 0xa9};
    for (size_t i = 0; i < sizeof loads_stores; i++) {
        uint8_t code[] = {BYTECODE_WIDE, loads_stores[i], 0x01, 0x00};
        ck_assert_int_eq(length_of(code, sizeof code, 0), 4);
        expect_every_cut_refused(code, 0, sizeof code, "wide load/store/ret");
    }
    uint8_t iinc[] = {BYTECODE_WIDE, 0x84, 0x01, 0x00, 0xff, 0xff};
    ck_assert_int_eq(length_of(iinc, sizeof iinc, 0), 6);
    expect_every_cut_refused(iinc, 0, sizeof iinc, "wide iinc");

    /* a walk steps over the widened index as one instruction */
    uint8_t seq[] = {BYTECODE_WIDE, 0x15, 0x01, 0x00, BYTECODE_WIDE, 0x84, 0x01, 0x00, 0x00, 0x01, 0xb1};
    uint32_t starts[8];
    char err[128] = "";
    ck_assert_int_eq(bytecode_walk(seq, sizeof seq, starts, 8, err, sizeof err), 3);
    ck_assert_uint_eq(starts[0], 0);
    ck_assert_uint_eq(starts[1], 4);
    ck_assert_uint_eq(starts[2], 10);

    /* wide widens a local variable index; anything else is refused */
    static const uint8_t not_widenable[] = {0x00, 0x10, 0x1a, 0x2e, 0xa7, 0xb1, 0xb6, BYTECODE_WIDE, 0xca, 0xff};
    for (size_t i = 0; i < sizeof not_widenable; i++) {
        uint8_t code[] = {BYTECODE_WIDE, not_widenable[i], 0, 0, 0, 0};
        expect_length_refused(code, sizeof code, 0, "wide of a non-local instruction", "wide");
    }
}
END_TEST

/* tableswitch at pc with default and a table low..high of the given
 * offsets; returns the instruction length and fills code. */
static uint32_t assemble_tableswitch(uint8_t *code, uint32_t pc, int32_t dflt, int32_t low, int32_t high,
                                     const int32_t *offsets)
{
    memset(code, 0x00, pc);  /* nops before it */
    code[pc] = BYTECODE_TABLESWITCH;
    uint32_t p = pc + 1;
    while (p % 4 != 0)
        code[p++] = 0;
    put32(code + p, dflt);
    put32(code + p + 4, low);
    put32(code + p + 8, high);
    p += 12;
    for (int64_t i = 0; i <= (int64_t)high - low; i++, p += 4)
        put32(code + p, offsets[i]);
    return p - pc;
}

static uint32_t assemble_lookupswitch(uint8_t *code, uint32_t pc, int32_t dflt, int32_t npairs,
                                      const int32_t *keys, const int32_t *offsets)
{
    memset(code, 0x00, pc);
    code[pc] = BYTECODE_LOOKUPSWITCH;
    uint32_t p = pc + 1;
    while (p % 4 != 0)
        code[p++] = 0;
    put32(code + p, dflt);
    put32(code + p + 4, npairs);
    p += 8;
    for (int32_t i = 0; i < npairs; i++, p += 8) {
        put32(code + p, keys[i]);
        put32(code + p + 4, offsets[i]);
    }
    return p - pc;
}

START_TEST(test_tableswitch_alignments)
{
    for (uint32_t pc = 0; pc < 4; pc++) {
        uint8_t code[64];
        /* three entries; each case is a one-byte return right after the switch */
        uint32_t len = 1 + (3 - pc) + 12 + 3 * 4;
        int32_t after = (int32_t)len;
        int32_t offsets[3] = {after + 1, after + 2, after};
        ck_assert_uint_eq(assemble_tableswitch(code, pc, after + 3, -1, 1, offsets), len);
        for (int i = 0; i < 4; i++)
            code[pc + len + (uint32_t)i] = 0xb1;
        uint32_t total = pc + len + 4;
        ck_assert_int_eq(length_of(code, total, pc), (int)len);

        int32_t t[8];
        ck_assert_int_eq(bytecode_targets(code, total, pc, t, 8), 4);
        ck_assert_int_eq(t[0], (int32_t)(pc + len) + 3);  /* the default first */
        ck_assert_int_eq(t[1], (int32_t)(pc + len) + 1);
        ck_assert_int_eq(t[2], (int32_t)(pc + len) + 2);
        ck_assert_int_eq(t[3], (int32_t)(pc + len));

        uint32_t starts[16];
        char err[128] = "";
        ck_assert_int_eq(bytecode_walk(code, total, starts, 16, err, sizeof err), (int)pc + 5);
        ck_assert_uint_eq(starts[pc], pc);
        ck_assert_uint_eq(starts[pc + 1], pc + len);

        char name[64];
        snprintf(name, sizeof name, "tableswitch at pc %u", pc);
        expect_every_cut_refused(code, pc, pc + len, name);
    }

    /* a single entry (low == high) and extreme bounds are fine */
    uint8_t code[32];
    int32_t one[1] = {0};
    uint32_t len = assemble_tableswitch(code, 0, 0, INT32_MAX, INT32_MAX, one);
    ck_assert_uint_eq(len, 1 + 3 + 12 + 4);
    ck_assert_int_eq(length_of(code, len, 0), (int)len);
    len = assemble_tableswitch(code, 0, 0, INT32_MIN, INT32_MIN, one);
    ck_assert_int_eq(length_of(code, len, 0), (int)len);
}
END_TEST

START_TEST(test_lookupswitch_alignments)
{
    for (uint32_t pc = 0; pc < 4; pc++) {
        uint8_t code[64];
        uint32_t len = 1 + (3 - pc) + 8 + 2 * 8;
        int32_t after = (int32_t)len;
        int32_t keys[2] = {-5, 100};
        int32_t offsets[2] = {after + 1, after};
        /* the default jumps back to the first nop, or to itself at pc 0 */
        ck_assert_uint_eq(assemble_lookupswitch(code, pc, -(int32_t)pc, 2, keys, offsets), len);
        code[pc + len] = 0xb1;
        code[pc + len + 1] = 0xb1;
        uint32_t total = pc + len + 2;
        ck_assert_int_eq(length_of(code, total, pc), (int)len);

        int32_t t[4];
        ck_assert_int_eq(bytecode_targets(code, total, pc, t, 4), 3);
        ck_assert_int_eq(t[0], 0);
        ck_assert_int_eq(t[1], (int32_t)(pc + len) + 1);
        ck_assert_int_eq(t[2], (int32_t)(pc + len));

        char err[128] = "";
        ck_assert_int_eq(bytecode_walk(code, total, NULL, 0, err, sizeof err), (int)pc + 3);

        char name[64];
        snprintf(name, sizeof name, "lookupswitch at pc %u", pc);
        expect_every_cut_refused(code, pc, pc + len, name);
    }

    /* no pairs at all: only the default */
    uint8_t code[16];
    uint32_t len = assemble_lookupswitch(code, 1, -1, 0, NULL, NULL);
    ck_assert_uint_eq(len, 1 + 2 + 8);
    ck_assert_int_eq(length_of(code, 1 + len, 1), (int)len);
    int32_t t[2];
    ck_assert_int_eq(bytecode_targets(code, 1 + len, 1, t, 2), 1);
    ck_assert_int_eq(t[0], 0);
}
END_TEST

START_TEST(test_branch_targets)
{
    /*  0: ifeq +7        -> 7
     *  3: goto -3        -> 0
     *  6: nop
     *  7: goto_w -7      -> 0
     * 12: jsr +5         -> 17
     * 15: ret 1          (no static target)
     * 17: jsr_w -5       -> 12
     * 22: ifnull -22     -> 0
     * 25: if_acmpne +3   -> 28
     * 28: return
     */
    uint8_t code[] = {
        0x99, 0x00, 0x07,                    /*  0 ifeq +7 */
        0xa7, 0xff, 0xfd,                    /*  3 goto -3 */
        0x00,                                /*  6 nop */
        0xc8, 0xff, 0xff, 0xff, 0xf9,        /*  7 goto_w -7 */
        0xa8, 0x00, 0x05,                    /* 12 jsr +5 */
        0xa9, 0x01,                          /* 15 ret 1 */
        0xc9, 0xff, 0xff, 0xff, 0xfb,        /* 17 jsr_w -5 */
        0xc6, 0xff, 0xea,                    /* 22 ifnull -22 */
        0xa6, 0x00, 0x03,                    /* 25 if_acmpne +3 */
        0xb1,                                /* 28 return */
    };
    static const struct {
        uint32_t pc;
        int n;
        int32_t target;
    } want[] = {
        {0, 1, 7}, {3, 1, 0}, {6, 0, 0}, {7, 1, 0}, {12, 1, 17}, {15, 0, 0},
        {17, 1, 12}, {22, 1, 0}, {25, 1, 28}, {28, 0, 0},
    };
    uint32_t starts[16];
    char err[128] = "";
    ck_assert_int_eq(bytecode_walk(code, sizeof code, starts, 16, err, sizeof err), 10);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        ck_assert_uint_eq(starts[i], want[i].pc);
        int32_t t[2] = {-99, -99};
        int n = bytecode_targets(code, sizeof code, want[i].pc, t, 2);
        ck_assert_msg(n == want[i].n, "pc %u: %d targets, want %d", want[i].pc, n, want[i].n);
        if (n == 1)
            ck_assert_msg(t[0] == want[i].target, "pc %u: target %d, want %d", want[i].pc, t[0], want[i].target);
        else
            ck_assert_int_eq(t[0], -99);
    }

    /* every conditional branch has one target; a branch to itself is a target */
    for (unsigned op = 0x99; op <= 0xa8; op++) {
        uint8_t c[] = {(uint8_t)op, 0x00, 0x00};
        int32_t t[1];
        ck_assert_int_eq(bytecode_targets(c, sizeof c, 0, t, 1), 1);
        ck_assert_int_eq(t[0], 0);
    }

    /* returns, and only they */
    for (unsigned op = 0; op < 256; op++)
        ck_assert_msg(bytecode_is_return((uint8_t)op) == (op >= 0xac && op <= 0xb1), "opcode 0x%02x", op);
}
END_TEST

/* Targets beyond max are counted and checked but not stored. */
START_TEST(test_targets_max)
{
    uint8_t code[64];
    int32_t offsets[5] = {0, 0, 0, 0, 0};
    uint32_t len = assemble_tableswitch(code, 0, 0, 10, 14, offsets);
    ck_assert_int_eq(bytecode_targets(code, len, 0, NULL, 0), 6);
    int32_t t[4] = {-1, -1, -1, -1};
    ck_assert_int_eq(bytecode_targets(code, len, 0, t, 3), 6);
    ck_assert_int_eq(t[2], 0);
    ck_assert_int_eq(t[3], -1);  /* untouched past max */

    /* a bad entry past max still makes the instruction bad */
    offsets[4] = 1000;
    len = assemble_tableswitch(code, 0, 0, 10, 14, offsets);
    ck_assert_int_eq(bytecode_targets(code, len, 0, t, 1), -1);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* (b) refusals                                                              */
/* ------------------------------------------------------------------------ */

START_TEST(test_unknown_opcodes)
{
    for (unsigned op = 0xca; op <= 0xff; op++) {
        uint8_t code[8] = {(uint8_t)op};
        expect_length_refused(code, sizeof code, 0, "reserved or unused opcode", "opcode");
        int32_t t[1];
        ck_assert_int_eq(bytecode_targets(code, sizeof code, 0, t, 1), -1);
        /* found mid-walk, at its own offset */
        uint8_t seq[] = {0x00, 0x00, (uint8_t)op, 0xb1};
        char err[128] = "";
        ck_assert_int_eq(bytecode_walk(seq, sizeof seq, NULL, 0, err, sizeof err), -1);
        ck_assert_msg(strstr(err, "pc 2") != NULL, "reason \"%s\" does not name pc 2", err);
        /* and named, without its place, as what the rewriter does not know */
        char kind[16];
        snprintf(kind, sizeof kind, "opcode 0x%02x", op);
        ck_assert_pstr_eq(classfile_unknown_in(err), kind);
    }
    /* pc at or past the end */
    uint8_t one[] = {0xb1};
    expect_length_refused(one, 1, 1, "pc at the end", NULL);
    expect_length_refused(one, 1, 1000, "pc past the end", NULL);
    expect_length_refused(one, 0, 0, "empty code", NULL);
}
END_TEST

START_TEST(test_bad_switch_counts)
{
    uint8_t code[64] = {0};
    int32_t none[1] = {0};

    /* high below low, including the pair that would wrap to a huge count */
    static const int32_t bad_bounds[][2] = {{1, 0}, {0, -1}, {INT32_MAX, INT32_MIN}, {5, -5}};
    for (size_t i = 0; i < sizeof bad_bounds / sizeof bad_bounds[0]; i++) {
        assemble_tableswitch(code, 0, 0, 0, 0, none);
        put32(code + 8, bad_bounds[i][0]);
        put32(code + 12, bad_bounds[i][1]);
        expect_length_refused(code, sizeof code, 0, "tableswitch high < low", "below");
    }
    /* the full int range: 2^32 entries, which a 32-bit count would wrap to 0 */
    assemble_tableswitch(code, 0, 0, 0, 0, none);
    put32(code + 8, INT32_MIN);
    put32(code + 12, INT32_MAX);
    expect_length_refused(code, sizeof code, 0, "tableswitch over the whole int range", "past the end");
    /* one entry more than the code holds */
    int32_t offs[4] = {0, 0, 0, 0};
    uint32_t len = assemble_tableswitch(code, 0, 0, 0, 3, offs);
    put32(code + 12, 4);
    expect_length_refused(code, len, 0, "tableswitch one entry too many", "past the end");

    /* negative pair counts */
    static const int32_t bad_npairs[] = {-1, -2, INT32_MIN};
    for (size_t i = 0; i < sizeof bad_npairs / sizeof bad_npairs[0]; i++) {
        assemble_lookupswitch(code, 0, 0, 0, NULL, NULL);
        put32(code + 8, bad_npairs[i]);
        expect_length_refused(code, sizeof code, 0, "lookupswitch negative npairs", "negative");
    }
    /* counts that overrun: huge, and one too many */
    assemble_lookupswitch(code, 0, 0, 0, NULL, NULL);
    put32(code + 8, INT32_MAX);
    expect_length_refused(code, sizeof code, 0, "lookupswitch npairs INT32_MAX", "past the end");
    int32_t keys[2] = {1, 2};
    len = assemble_lookupswitch(code, 0, 0, 2, keys, offs);
    put32(code + 8, 3);
    expect_length_refused(code, len, 0, "lookupswitch one pair too many", "past the end");
}
END_TEST

START_TEST(test_bad_targets)
{
    /* branches that leave the code: before 0, at code_len, far past it */
    uint8_t back[] = {0x00, 0xa7, 0xff, 0xfe};               /* goto -2 from 1 */
    int32_t t[4];
    ck_assert_int_eq(bytecode_targets(back, sizeof back, 1, t, 4), -1);
    uint8_t end[] = {0x99, 0x00, 0x03};                      /* ifeq to code_len */
    ck_assert_int_eq(bytecode_targets(end, sizeof end, 0, t, 4), -1);
    uint8_t far[] = {0xc8, 0x7f, 0xff, 0xff, 0xff};          /* goto_w INT32_MAX */
    ck_assert_int_eq(bytecode_targets(far, sizeof far, 0, t, 4), -1);
    uint8_t neg[] = {0xc9, 0x80, 0x00, 0x00, 0x00};          /* jsr_w INT32_MIN */
    ck_assert_int_eq(bytecode_targets(neg, sizeof neg, 0, t, 4), -1);

    /* a switch default outside the code */
    uint8_t code[32];
    int32_t offs[1] = {0};
    uint32_t len = assemble_lookupswitch(code, 0, -1, 1, offs, offs);
    ck_assert_int_eq(bytecode_targets(code, len, 0, t, 4), -1);

    /* walk refuses an empty code and more instructions than max */
    char err[128] = "";
    uint8_t nops[] = {0x00, 0x00, 0x00};
    uint32_t starts[2];
    ck_assert_int_eq(bytecode_walk(nops, 0, starts, 2, err, sizeof err), -1);
    ck_assert_msg(err[0] != '\0', "empty code refused without a reason");
    err[0] = '\0';
    ck_assert_int_eq(bytecode_walk(nops, sizeof nops, starts, 2, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "more than 2") != NULL, "reason: %s", err);
    ck_assert_int_eq(bytecode_walk(nops, sizeof nops, NULL, 0, NULL, 0), 3);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* (c) every method of the compiled test programs                            */
/* ------------------------------------------------------------------------ */

typedef struct {
    size_t methods;
    size_t instructions;
    size_t branches;
    size_t switches;
} walk_stats;

static void walk_method(const classfile_code *c, const char *where, walk_stats *st)
{
    uint32_t n = c->code_length;
    uint8_t *code = exact_copy(c->code, n);
    uint32_t *starts = malloc((n > 0 ? n : 1) * sizeof *starts);
    bool *is_start = calloc(n + 1, sizeof *is_start);
    ck_assert_ptr_nonnull(starts);
    ck_assert_ptr_nonnull(is_start);
    char err[256] = "";
    int count = bytecode_walk(code, n, starts, n, err, sizeof err);
    ck_assert_msg(count > 0, "%s: walk refused: %s", where, err);

    /* the starts are increasing, each instruction ends where the next begins,
     * and the last ends at the end of the code */
    for (int i = 0; i < count; i++) {
        int len = bytecode_length(code, n, starts[i], err, sizeof err);
        ck_assert_msg(len > 0, "%s: pc %u: %s", where, starts[i], err);
        uint32_t next = i + 1 < count ? starts[i + 1] : n;
        ck_assert_msg(starts[i] + (uint32_t)len == next, "%s: pc %u + %d != %u", where, starts[i], len, next);
        is_start[starts[i]] = true;
    }

    for (int i = 0; i < count; i++) {
        uint32_t pc = starts[i];
        int nt = bytecode_targets(code, n, pc, NULL, 0);
        ck_assert_msg(nt >= 0, "%s: pc %u (opcode 0x%02x): bad targets", where, pc, code[pc]);
        if (nt == 0)
            continue;
        int32_t *t = malloc((size_t)nt * sizeof *t);
        ck_assert_ptr_nonnull(t);
        ck_assert_int_eq(bytecode_targets(code, n, pc, t, nt), nt);
        for (int k = 0; k < nt; k++)
            ck_assert_msg(t[k] >= 0 && (uint32_t)t[k] < n && is_start[t[k]],
                          "%s: pc %u (opcode 0x%02x): target %d is not an instruction start", where, pc,
                          code[pc], t[k]);
        free(t);
        st->branches++;
        if (code[pc] == BYTECODE_TABLESWITCH || code[pc] == BYTECODE_LOOKUPSWITCH)
            st->switches++;
    }

    /* the exception table points at instruction boundaries too; end_pc is
     * exclusive and may be the end of the code */
    is_start[n] = true;
    for (uint16_t e = 0; e < c->exception_count; e++) {
        const classfile_exception *x = &c->exceptions[e];
        ck_assert_msg(x->start_pc < n && is_start[x->start_pc], "%s: handler %u start_pc %u", where, e,
                      x->start_pc);
        ck_assert_msg(x->end_pc <= n && is_start[x->end_pc], "%s: handler %u end_pc %u", where, e, x->end_pc);
        ck_assert_msg(x->handler_pc < n && is_start[x->handler_pc], "%s: handler %u handler_pc %u", where, e,
                      x->handler_pc);
    }

    st->methods++;
    st->instructions += (size_t)count;
    free(is_start);
    free(starts);
    free(code);
}

START_TEST(test_walk_all_methods)
{
    path_list l = test_classes();
    walk_stats st = {0};
    size_t classes = 0;
    for (size_t i = 0; i < l.count; i++) {
        size_t len;
        uint8_t *data = read_file(l.paths[i], &len);
        classfile *cf = parse_ok(data, len, l.paths[i]);
        for (uint16_t m = 0; m < cf->method_count; m++) {
            const classfile_member *mb = &cf->methods[m];
            for (uint16_t a = 0; a < mb->attr_count; a++) {
                if (mb->attrs[a].code == NULL)
                    continue;
                char where[512];
                snprintf(where, sizeof where, "%s %s%s", l.paths[i], classfile_utf8(cf, mb->name_index),
                         classfile_utf8(cf, mb->descriptor_index));
                walk_method(mb->attrs[a].code, where, &st);
            }
        }
        classes++;
        classfile_free(cf);
        free(data);
    }
    for (size_t i = 0; i < l.count; i++)
        free(l.paths[i]);
    free(l.paths);
    ck_assert_msg(classes >= 20, "walked %zu classes, expected at least 20", classes);
    ck_assert_msg(st.methods >= 200, "walked %zu methods, expected at least 200", st.methods);
    ck_assert_msg(st.branches > 0, "no branch met in %zu methods", st.methods);
    fprintf(stderr, "test_bytecode: %zu classes, %zu methods, %zu instructions, %zu branches, %zu switches\n",
            classes, st.methods, st.instructions, st.branches, st.switches);
}
END_TEST

/* ------------------------------------------------------------------------ */

static Suite *bytecode_suite(void)
{
    Suite *s = suite_create("bytecode");
    TCase *tc;

    tc = tcase_create("lengths_and_targets");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fixed_lengths);
    tcase_add_test(tc, test_wide);
    tcase_add_test(tc, test_tableswitch_alignments);
    tcase_add_test(tc, test_lookupswitch_alignments);
    tcase_add_test(tc, test_branch_targets);
    tcase_add_test(tc, test_targets_max);
    suite_add_tcase(s, tc);

    tc = tcase_create("bad_input");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_unknown_opcodes);
    tcase_add_test(tc, test_bad_switch_counts);
    tcase_add_test(tc, test_bad_targets);
    suite_add_tcase(s, tc);

    tc = tcase_create("test_classes");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_walk_all_methods);
    suite_add_tcase(s, tc);

    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(bytecode_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
