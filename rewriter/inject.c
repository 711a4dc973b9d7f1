/*
 * inject.c - method entry and exit hooks put into a class's code.  See
 * inject.h.
 *
 * Per method: the instructions are found (bytecode_walk), a new layout is
 * planned (what goes before each instruction, how long each becomes: switch
 * padding depends on where a switch lands, and a goto or jsr may have to
 * become its wide form, which moves everything after it, so the plan is
 * repeated until nothing changes), the code is written out, and every table
 * that holds offsets is moved through the plan.
 */
#include "inject.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arrayhooks.h"
#include "bytecode.h"
#include "errbuf.h"
#include "hookcall.h"
#include "leaf.h"
#include "natives.h"
#include "stackmap.h"

/* an instruction's hook: the call's first three, then sipush <its offset>;
 * invokestatic <step> (offsets over 32767 pass as negative shorts) */
#define STEP_LEN 13u


typedef struct {
    const uint8_t *code;
    uint32_t len;
    uint32_t n;         /* instructions */
    uint32_t *old_pc;   /* n + 1 entries, old_pc[n] = len */
    int32_t *index_of;  /* len + 1 entries: instruction starting at an old pc, -1 inside one */
    uint32_t *pre;      /* n + 1: where what is put before instruction i starts; pre[n]: end of the moved code */
    uint32_t *at;       /* n: where instruction i itself now starts */
    uint32_t *size;     /* n: its new length */
    uint8_t *wide;      /* n: a goto or jsr that became goto_w or jsr_w */
    uint32_t entry_len; /* the entry call, before instruction 0 */
    uint32_t exit_len;  /* the exit call, before each return */
    uint32_t step_len;  /* STEP_LEN before every instruction, or 0 */
    /* A constructor's call of its super or this constructor (-1: none, every
     * instruction has an initialized receiver or none).  The code before it
     * has a handler of its own, whose frame holds uninitializedThis; the call
     * itself can have none (see inject.h). */
    int32_t this_init;
    /* A leaf (leaf.h): one call at entry reports both, no exit calls, no handler. */
    bool leaf;
    /* Method hooks (entry, exits, handlers); without them only array allocations are hooked. */
    bool methods;
    bool arrays; /* each array allocation is followed by its hook */
} plan;

/* sipush takes a signed 16-bit operand. */
#define MAX_METHOD_INDEX 32767u

static bool is_branch16(uint8_t op) { return (op >= OP_IFEQ && op <= OP_JSR) || op == OP_IFNULL || op == OP_IFNONNULL; }

static uint32_t pad_after(uint32_t pc) { return (4 - (pc + 1) % 4) % 4; }

static void wr_u4(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void plan_free(plan *pl)
{
    free(pl->old_pc);
    free(pl->index_of);
    free(pl->pre);
    free(pl->at);
    free(pl->size);
    free(pl->wide);
}

/* The new offset of a branch target (an old offset known to start an
 * instruction): what is put before it comes first. */
static uint32_t target_of(const plan *pl, uint32_t old) { return pl->pre[pl->index_of[old]]; }

/* The hooks a method gets: methods (entry and exit calls, the handlers),
 * with_this and exit_this (the receiver passed at entry, or at the exits of
 * java.lang.Object's constructor), steps, leaf, and arrays. */
typedef struct {
    bool methods, with_this, exit_this, steps, leaf, arrays;
} plan_kind;

static bool plan_init(plan *pl, const uint8_t *code, uint32_t len, plan_kind kind, char *err, size_t errlen)
{
    memset(pl, 0, sizeof *pl);
    pl->this_init = -1;
    pl->leaf = kind.leaf;
    pl->methods = kind.methods;
    pl->arrays = kind.arrays;
    pl->code = code;
    pl->len = len;
    pl->entry_len = kind.methods ? CALL_LEN + (kind.with_this ? 1 : 0) : 0;
    pl->exit_len = kind.leaf || !kind.methods ? 0 : CALL_LEN + (kind.exit_this ? 1 : 0);
    bool steps = kind.steps && kind.methods;
    pl->step_len = steps ? STEP_LEN : 0;
    int n = bytecode_walk(code, len, NULL, 0, err, errlen);
    if (n <= 0)
        return false;
    pl->n = (uint32_t)n;
    pl->old_pc = malloc(sizeof *pl->old_pc * (pl->n + 1));
    pl->index_of = malloc(sizeof *pl->index_of * (len + 1));
    pl->pre = malloc(sizeof *pl->pre * (pl->n + 1));
    pl->at = malloc(sizeof *pl->at * pl->n);
    pl->size = malloc(sizeof *pl->size * pl->n);
    pl->wide = calloc(pl->n, 1);
    if (!pl->old_pc || !pl->index_of || !pl->pre || !pl->at || !pl->size || !pl->wide) {
        errbuf_set(err, errlen, "out of memory");
        return false;
    }
    bytecode_walk(code, len, pl->old_pc, pl->n, NULL, 0);
    pl->old_pc[pl->n] = len;
    for (uint32_t pc = 0; pc <= len; pc++)
        pl->index_of[pc] = -1;
    for (uint32_t i = 0; i <= pl->n; i++)
        pl->index_of[pl->old_pc[i]] = (int32_t)i;
    /* Every branch must land on an instruction: checked once, here. */
    for (uint32_t i = 0; i < pl->n; i++) {
        int32_t t[1];
        int k = bytecode_targets(code, len, pl->old_pc[i], NULL, 0);
        int32_t *all = k > 0 ? malloc(sizeof *all * (size_t)k) : t;
        if (all == NULL) {
            errbuf_set(err, errlen, "out of memory");
            return false;
        }
        if (k > 0)
            bytecode_targets(code, len, pl->old_pc[i], all, k);
        bool bad = k < 0;
        for (int j = 0; j < k && !bad; j++)
            bad = pl->index_of[all[j]] < 0 || (uint32_t)all[j] == len;
        if (all != t)
            free(all);
        if (bad) {
            errbuf_set(err, errlen, "the branch at %u does not land on an instruction", pl->old_pc[i]);
            return false;
        }
    }
    return true;
}

/* The catch-all handler, and the constructor's before-init one; a leaf has none. */
static uint32_t handlers_len(const plan *pl)
{
    return pl->leaf || !pl->methods ? 0 : HANDLER_LEN * (pl->this_init >= 0 ? 2u : 1u);
}

static uint32_t new_size(const plan *pl, uint32_t i, uint32_t pos)
{
    uint32_t old = pl->old_pc[i];
    uint8_t op = pl->code[old];
    uint32_t len = pl->old_pc[i + 1] - old;
    if (op == BYTECODE_TABLESWITCH || op == BYTECODE_LOOKUPSWITCH)
        return 1 + pad_after(pos) + (len - 1 - pad_after(old));
    if (pl->wide[i])
        return 5;
    return len + (pl->arrays ? arrayhooks_len(op) : 0);
}

/* Lays the code out until every branch reaches; false if one cannot. */
static bool plan_layout(plan *pl, char *err, size_t errlen)
{
    for (;;) {
        uint32_t pos = pl->entry_len;
        for (uint32_t i = 0; i < pl->n; i++) {
            pl->pre[i] = pos;
            pos += pl->step_len;
            if (bytecode_is_return(pl->code[pl->old_pc[i]]))
                pos += pl->exit_len;
            pl->at[i] = pos;
            pl->size[i] = new_size(pl, i, pos);
            pos += pl->size[i];
        }
        pl->pre[pl->n] = pos;
        if (pos + handlers_len(pl) > CODE_MAX) {
            errbuf_set(err, errlen, "the code would be %u bytes, over the limit of %u", pos + handlers_len(pl),
                       (unsigned)CODE_MAX);
            return false;
        }
        bool changed = false;
        for (uint32_t i = 0; i < pl->n; i++) {
            const uint8_t *p = pl->code + pl->old_pc[i];
            if (!is_branch16(p[0]) || pl->wide[i])
                continue;
            int32_t old_target = (int32_t)pl->old_pc[i] + (int16_t)bytecode_u2(p + 1);
            int64_t rel = (int64_t)target_of(pl, (uint32_t)old_target) - pl->at[i];
            if (rel >= INT16_MIN && rel <= INT16_MAX)
                continue;
            if (p[0] != OP_GOTO && p[0] != OP_JSR) {
                errbuf_set(err, errlen, "the conditional branch at %u would no longer reach its target",
                           pl->old_pc[i]);
                return false;
            }
            pl->wide[i] = 1;
            changed = true;
        }
        if (!changed)
            return true;
    }
}

static uint8_t *emit_step(uint8_t *p, const pool_refs *refs, uint16_t index, uint32_t offset)
{
    p = hookcall_emit(p, refs, index, refs->step);
    p -= 3; /* the invokestatic moves after the offset */
    p[0] = OP_SIPUSH;
    hookcall_u2(p + 1, offset);
    p[3] = OP_INVOKESTATIC;
    hookcall_u2(p + 4, refs->step);
    return p + 6;
}

static uint32_t rel32(const plan *pl, uint32_t i, uint32_t old_from, int32_t old_rel)
{
    return (uint32_t)((int64_t)target_of(pl, (uint32_t)((int64_t)old_from + old_rel)) - pl->at[i]);
}

/* One instruction at its new place, its offsets moved, an array
 * allocation's hook after it. */
static void emit_insn(const plan *pl, uint32_t i, uint8_t *out, const pool_refs *refs)
{
    uint32_t old = pl->old_pc[i];
    const uint8_t *p = pl->code + old;
    uint8_t *q = out + pl->at[i];
    if (is_branch16(p[0])) {
        uint32_t rel = rel32(pl, i, old, (int16_t)bytecode_u2(p + 1));
        if (pl->wide[i]) {
            q[0] = p[0] == OP_GOTO ? BYTECODE_GOTO_W : BYTECODE_JSR_W;
            wr_u4(q + 1, rel);
        } else {
            q[0] = p[0];
            hookcall_u2(q + 1, rel);
        }
    } else if (p[0] == BYTECODE_GOTO_W || p[0] == BYTECODE_JSR_W) {
        q[0] = p[0];
        wr_u4(q + 1, rel32(pl, i, old, (int32_t)bytecode_u4(p + 1)));
    } else if (p[0] == BYTECODE_TABLESWITCH || p[0] == BYTECODE_LOOKUPSWITCH) {
        const uint8_t *s = p + 1 + pad_after(old);
        uint32_t pad = pad_after(pl->at[i]);
        q[0] = p[0];
        memset(q + 1, 0, pad);
        uint8_t *d = q + 1 + pad;
        wr_u4(d, rel32(pl, i, old, (int32_t)bytecode_u4(s)));
        if (p[0] == BYTECODE_TABLESWITCH) {
            int32_t low = (int32_t)bytecode_u4(s + 4), high = (int32_t)bytecode_u4(s + 8);
            memcpy(d + 4, s + 4, 8);
            for (int64_t k = 0; k <= (int64_t)high - low; k++)
                wr_u4(d + 12 + 4 * k, rel32(pl, i, old, (int32_t)bytecode_u4(s + 12 + 4 * k)));
        } else {
            uint32_t npairs = bytecode_u4(s + 4);
            memcpy(d + 4, s + 4, 4);
            for (uint32_t k = 0; k < npairs; k++) {
                memcpy(d + 8 + 8 * k, s + 8 + 8 * k, 4);
                wr_u4(d + 12 + 8 * k, rel32(pl, i, old, (int32_t)bytecode_u4(s + 12 + 8 * k)));
            }
        }
    } else {
        uint32_t len = pl->old_pc[i + 1] - old;
        memcpy(q, p, len);
        if (pl->size[i] > len)
            arrayhooks_emit(q + len, p, refs);
    }
}

static uint8_t *emit_code(const plan *pl, bool with_this, uint16_t index, const pool_refs *refs, uint32_t *len)
{
    *len = pl->pre[pl->n] + handlers_len(pl);
    uint8_t *out = malloc(*len);
    if (out == NULL)
        return NULL;
    uint8_t *p = out;
    if (with_this && pl->methods)
        *p++ = OP_ALOAD_0;
    if (pl->leaf)
        hookcall_emit(p, refs, index, with_this ? refs->leaf_this : refs->leaf);
    else if (pl->methods)
        hookcall_emit(p, refs, index, with_this ? refs->enter_this : refs->enter);
    for (uint32_t i = 0; i < pl->n; i++) {
        p = out + pl->pre[i];
        if (pl->step_len > 0)
            p = emit_step(p, refs, index, pl->old_pc[i]);
        if (p != out + pl->at[i]) {
            bool exit_this = pl->exit_len > CALL_LEN;
            if (exit_this)
                *p++ = OP_ALOAD_0;
            hookcall_emit(p, refs, index, exit_this ? refs->exit_init : refs->exit);
        }
        emit_insn(pl, i, out, refs);
    }
    for (uint32_t h = 0; h * HANDLER_LEN < handlers_len(pl); h++) {
        p = hookcall_emit(out + pl->pre[pl->n] + h * HANDLER_LEN, refs, index, refs->exit);
        *p = OP_ATHROW;
    }
    return out;
}

/* ---- tables that hold offsets ---------------------------------------------- */

static bool is_insn(const plan *pl, uint32_t old) { return old <= pl->len && pl->index_of[old] >= 0; }

/* A range's start, for line and local variable tables: offset 0 stays 0,
 * so the entry call has the first line and the arguments are in scope. */
static uint32_t start_of(const plan *pl, uint32_t old) { return old == 0 ? 0 : target_of(pl, old); }

/* Whether instruction i is covered by the catch-all. */
static bool in_catch_all(const plan *pl, uint32_t i)
{
    return !pl->leaf && pl->methods && (int32_t)i > pl->this_init && !bytecode_is_return(pl->code[pl->old_pc[i]]);
}

/* Original handlers first (they are more specific), then the catch-all over
 * every original instruction but the returns: the entry call is not covered
 * (a frame whose entry was not reported has no exit), nor are the exit calls
 * and returns (their frame has reported its exit already).  A constructor's
 * code before its super or this call has its own handler. */
static bool move_exceptions(classfile_code *c, const plan *pl, char *err, size_t errlen)
{
    uint32_t pieces = pl->this_init > 0 ? 1 : 0;
    for (uint32_t i = 0; i < pl->n; i++)
        if (in_catch_all(pl, i) && (i == 0 || !in_catch_all(pl, i - 1)))
            pieces++;
    uint32_t total = c->exception_count + pieces;
    if (total > UINT16_MAX) {
        errbuf_set(err, errlen, "%u exception table entries do not fit", total);
        return false;
    }
    classfile_exception *ex = malloc(sizeof *ex * (total ? total : 1));
    if (ex == NULL) {
        errbuf_set(err, errlen, "out of memory");
        return false;
    }
    for (uint16_t k = 0; k < c->exception_count; k++) {
        const classfile_exception *e = &c->exceptions[k];
        if (!is_insn(pl, e->start_pc) || !is_insn(pl, e->end_pc) || !is_insn(pl, e->handler_pc) ||
            e->handler_pc == pl->len) {
            errbuf_set(err, errlen, "exception table entry %u (%u..%u -> %u) is not on instructions", k, e->start_pc,
                       e->end_pc, e->handler_pc);
            free(ex);
            return false;
        }
        ex[k] = (classfile_exception){(uint16_t)target_of(pl, e->start_pc), (uint16_t)target_of(pl, e->end_pc),
                                      (uint16_t)target_of(pl, e->handler_pc), e->catch_type};
    }
    uint32_t k = c->exception_count;
    uint16_t handler = (uint16_t)pl->pre[pl->n];
    for (uint32_t i = 0; i < pl->n; i++) {
        if (!in_catch_all(pl, i))
            continue;
        if (i == 0 || !in_catch_all(pl, i - 1))
            ex[k++] = (classfile_exception){(uint16_t)pl->at[i], 0, handler, 0};
        ex[k - 1].end_pc = (uint16_t)(pl->at[i] + pl->size[i]);
    }
    if (pl->this_init > 0)
        ex[k++] = (classfile_exception){(uint16_t)pl->pre[0], (uint16_t)pl->at[pl->this_init],
                                        (uint16_t)(handler + HANDLER_LEN), 0};
    free(c->exceptions);
    c->exceptions = ex;
    c->exception_count = (uint16_t)total;
    return true;
}

static bool move_lines(classfile_attr *a, const plan *pl, char *err, size_t errlen)
{
    uint32_t n = a->length >= 2 ? bytecode_u2(a->data) : 0;
    if (a->length != 2 + 4 * n) {
        errbuf_set(err, errlen, "LineNumberTable of %u bytes for %u entries", a->length, n);
        return false;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint8_t *e = a->data + 2 + 4 * k;
        uint32_t pc = bytecode_u2(e);
        if (!is_insn(pl, pc) || pc == pl->len) {
            errbuf_set(err, errlen, "LineNumberTable: offset %u is not an instruction", pc);
            return false;
        }
        hookcall_u2(e, start_of(pl, pc));
    }
    return true;
}

/* LocalVariableTable and LocalVariableTypeTable: the same layout. */
static bool move_locals(classfile_attr *a, const char *name, const plan *pl, char *err, size_t errlen)
{
    uint32_t n = a->length >= 2 ? bytecode_u2(a->data) : 0;
    if (a->length != 2 + 10 * n) {
        errbuf_set(err, errlen, "%s of %u bytes for %u entries", name, a->length, n);
        return false;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint8_t *e = a->data + 2 + 10 * k;
        uint32_t start = bytecode_u2(e), end = start + bytecode_u2(e + 2);
        if (!is_insn(pl, start) || !is_insn(pl, end)) {
            errbuf_set(err, errlen, "%s: range %u..%u is not on instructions", name, start, end);
            return false;
        }
        uint32_t new_start = start_of(pl, start), new_end = target_of(pl, end);
        hookcall_u2(e, new_start);
        hookcall_u2(e + 2, new_end - new_start);
    }
    return true;
}

/* CharacterRangeTable, javac's (-Xjcov) for coverage tools: u2 count, then
 * entries of u2 start_pc, u2 end_pc, u4 character_range_start, u4
 * character_range_end, u2 flags, where end_pc is the last byte of the
 * range's last instruction (javac writes the next instruction's offset less
 * one).  A range takes in what is put before its instructions, as the
 * exception table's do.  Checked whole before any entry moves: false leaves
 * the table as it was. */
static bool move_char_ranges(classfile_attr *a, const plan *pl)
{
    uint32_t n = a->length >= 2 ? bytecode_u2(a->data) : 0;
    if (a->length != 2 + 14 * n)
        return false;
    for (uint32_t k = 0; k < n; k++) {
        const uint8_t *e = a->data + 2 + 14 * k;
        uint32_t start = bytecode_u2(e), last = bytecode_u2(e + 2);
        if (!is_insn(pl, start) || start == pl->len || last < start || !is_insn(pl, last + 1))
            return false;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint8_t *e = a->data + 2 + 14 * k;
        uint32_t start = bytecode_u2(e), last = bytecode_u2(e + 2);
        hookcall_u2(e, start_of(pl, start));
        hookcall_u2(e + 2, target_of(pl, last + 1) - 1);
    }
    return true;
}

static uint32_t frame_pc(void *ctx, uint32_t old, int *ok)
{
    const plan *pl = ctx;
    *ok = is_insn(pl, old) && old < pl->len;
    return *ok ? target_of(pl, old) : 0;
}

static uint32_t new_pc(void *ctx, uint32_t old, int *ok)
{
    const plan *pl = ctx;
    *ok = is_insn(pl, old) && old < pl->len && pl->code[old] == OP_NEW;
    return *ok ? pl->at[pl->index_of[old]] : 0;
}

static bool move_stack_map(classfile_attr *a, const plan *pl, const pool_refs *refs, char *err, size_t errlen)
{
    stackmap_map map = {frame_pc, new_pc, (void *)pl};
    stackmap_handler handlers[2] = {{pl->pre[pl->n], 0}, {pl->pre[pl->n] + HANDLER_LEN, 1}};
    uint8_t *out;
    uint32_t outlen;
    int n_handlers = pl->leaf || !pl->methods ? 0 : pl->this_init >= 0 ? 2 : 1;
    if (stackmap_rewrite(a->data, a->length, &map, handlers, n_handlers, refs->throwable, &out,
                         &outlen, err, errlen) != 0)
        return false;
    free(a->data);
    a->data = out;
    a->length = outlen;
    return true;
}

static bool add_stack_map(classfile_code *c, const plan *pl, const pool_refs *refs, char *err, size_t errlen)
{
    if (c->attr_count == UINT16_MAX) {
        errbuf_set(err, errlen, "no room for a StackMapTable attribute");
        return false;
    }
    classfile_attr *attrs = realloc(c->attrs, sizeof *attrs * (c->attr_count + 1u));
    if (attrs == NULL) {
        errbuf_set(err, errlen, "out of memory");
        return false;
    }
    c->attrs = attrs;
    classfile_attr *a = &attrs[c->attr_count++];
    memset(a, 0, sizeof *a);
    a->name_index = refs->stack_map_name;
    return move_stack_map(a, pl, refs, err, errlen);
}

/* Whether a Code attribute whose offsets are not moved here may be left out
 * of the rewritten class.  The JVM specification has a JVM ignore every
 * attribute it does not recognise, and of those it defines for Code up to
 * CLASSFILE_KNOWN_MAJOR the run time reads only the ones moved here (the
 * type annotations of code are for tools, and so is a CharacterRangeTable,
 * which a coverage tool reads from the bytes it was given).  So in a class
 * of a version this code knows, any other is one no JVM reads: dropped, the
 * class means what it meant, and no method goes without its hooks for a
 * tool's attribute.  In a newer class an unknown name may be one a later
 * specification defines and the JVM reads (as StackMapTable came with
 * version 50), holding offsets this code cannot move: kept, it would be
 * wrong; dropped, the class might mean something else.  That class is
 * refused, named. */
static bool droppable(const classfile *cf, const char *name)
{
    return cf->major_version <= CLASSFILE_KNOWN_MAJOR || strcmp(name, "RuntimeVisibleTypeAnnotations") == 0 ||
           strcmp(name, "RuntimeInvisibleTypeAnnotations") == 0 || strcmp(name, "CharacterRangeTable") == 0;
}

static bool move_attrs(const classfile *cf, classfile_code *c, const plan *pl, const pool_refs *refs, char *err,
                       size_t errlen)
{
    bool has_map = false;
    for (uint16_t k = 0; k < c->attr_count;) {
        classfile_attr *a = &c->attrs[k];
        const char *name = classfile_utf8(cf, a->name_index);
        bool ok = true;
        if (name == NULL) {
            errbuf_set(err, errlen, "a Code attribute without a name");
            return false;
        } else if (strcmp(name, "LineNumberTable") == 0) {
            ok = move_lines(a, pl, err, errlen);
        } else if (strcmp(name, "LocalVariableTable") == 0 || strcmp(name, "LocalVariableTypeTable") == 0) {
            ok = move_locals(a, name, pl, err, errlen);
        } else if (strcmp(name, "StackMapTable") == 0) {
            ok = move_stack_map(a, pl, refs, err, errlen);
            has_map = true;
        } else if (strcmp(name, "CharacterRangeTable") != 0 || !move_char_ranges(a, pl)) {
            if (!droppable(cf, name)) {
                errbuf_set(err, errlen, "its Code" ERRBUF_UNKNOWN "Code attribute %s", name);
                return false;
            }
            free(a->data);
            memmove(a, a + 1, sizeof *a * (size_t)(c->attr_count - k - 1));
            c->attr_count--;
            continue;
        }
        if (!ok)
            return false;
        k++;
    }
    /* From version 51 every method needs its frames; the handler has one.
     * A leaf without branches needs none, nor does code that only gained
     * array hooks (no new branch target, no handler). */
    if (!has_map && cf->major_version >= 51 && !pl->leaf && pl->methods)
        return add_stack_map(c, pl, refs, err, errlen);
    return true;
}

/* ---- a method, a class ----------------------------------------------------- */

static bool is_init_call(const classfile *cf, const uint8_t *p)
{
    if (p[0] != OP_INVOKESPECIAL)
        return false;
    uint32_t ref = bytecode_u2(p + 1);
    if (ref == 0 || ref >= cf->cp_count)
        return false;
    uint16_t nat = cf->cp[ref].ref2;
    if (nat == 0 || nat >= cf->cp_count || cf->cp[nat].tag != CLASSFILE_CONSTANT_NameAndType)
        return false;
    const char *name = classfile_utf8(cf, cf->cp[nat].ref1);
    return name != NULL && strcmp(name, "<init>") == 0;
}

/* The constructor's own super or this call: the <init> call that no `new`
 * before it pairs with (arguments may construct objects of their own, each
 * a `new` then its <init>).  There must be exactly one: the handler before
 * it is only right if every path to it is the code before it. */
static bool find_this_init(const classfile *cf, plan *pl, char *err, size_t errlen)
{
    uint32_t pending = 0, found = 0;
    for (uint32_t i = 0; i < pl->n; i++) {
        const uint8_t *p = pl->code + pl->old_pc[i];
        if (p[0] == OP_NEW) {
            pending++;
        } else if (is_init_call(cf, p)) {
            if (pending > 0) {
                pending--;
            } else {
                pl->this_init = (int32_t)i;
                found++;
            }
        }
    }
    if (found != 1) {
        errbuf_set(err, errlen, "a constructor with %u calls of its super or this constructor", found);
        return false;
    }
    return true;
}

/* Whether m gets the one leaf call.  With instruction hooks every
 * instruction has its call: no leaves.  java.lang.Object's constructor, a
 * bare return, is one unless its exits pass the receiver on. */
static bool leaf_here(const classfile *cf, const classfile_member *m, const inject_hooks *hooks)
{
    if (hooks->leaf == NULL || hooks->leaf_this == NULL || hooks->step != NULL)
        return false;
    const char *name = classfile_utf8(cf, m->name_index);
    const classfile_code *c = classfile_code_of(m);
    if (cf->super_class == 0 && hooks->exit_init == NULL && name != NULL && strcmp(name, "<init>") == 0)
        return c != NULL && c->code_length == 1 && c->code[0] == BYTECODE_RETURN && c->exception_count == 0;
    return leaf_method(cf, m);
}

/* A leaf's hooks, added at the first leaf: most classes have none, and
 * every constant added costs a retransformation a scan of the pool. */
static bool leaf_refs_ready(classfile *cf, const inject_hooks *h, bool with_this, pool_refs *refs, char *err,
                            size_t errlen)
{
    uint16_t *ref = with_this ? &refs->leaf_this : &refs->leaf;
    if (*ref == 0)
        *ref = with_this ? classfile_cp_add_methodref(cf, h->hooks_class, h->leaf_this, "(Ljava/lang/Object;I)V")
                         : classfile_cp_add_methodref(cf, h->hooks_class, h->leaf, "(I)V");
    if (*ref == 0) {
        errbuf_set(err, errlen, "the constant pool is full");
        return false;
    }
    return true;
}

/* *too_big: refused only because the code grew too much (steps may be
 * dropped and the method tried again); cf is then untouched.  *untouched:
 * nothing to put in (only array hooks wanted, and no array allocated). */
static bool inject_method(classfile *cf, classfile_member *m, uint16_t index, pool_refs *refs,
                          const inject_hooks *hooks, bool *too_big, bool *untouched, char *err, size_t errlen)
{
    bool methods = hooks->enter != NULL;
    bool arrays = hooks->new_array != NULL && hooks->new_multi_array != NULL;
    bool leaf = methods && leaf_here(cf, m, hooks);
    classfile_code *c = classfile_code_of(m);
    const char *name = classfile_utf8(cf, m->name_index);
    bool init = name != NULL && strcmp(name, "<init>") == 0;
    bool with_this = !(m->access_flags & ACC_STATIC) && !init;
    *too_big = false;
    *untouched = false;
    if (leaf && !leaf_refs_ready(cf, hooks, with_this, refs, err, errlen))
        return false;
    plan pl;
    bool ctor = init && cf->super_class != 0 && methods;
    bool exit_this = init && cf->super_class == 0 && refs->exit_init != 0;
    plan_kind kind = {methods, with_this, exit_this, methods && hooks->step != NULL, leaf, arrays};
    uint32_t array_stack = 0;
    bool ok = plan_init(&pl, c->code, c->code_length, kind, err, errlen) &&
              (!ctor || find_this_init(cf, &pl, err, errlen)) &&
              (!arrays || arrayhooks_refs(cf, hooks->hooks_class, hooks->new_array, hooks->new_multi_array, pl.code,
                                          pl.old_pc, pl.n, refs, &array_stack, err, errlen));
    if (ok && !methods && array_stack == 0) {
        *untouched = true;
        plan_free(&pl);
        return true;
    }
    *too_big = ok && !plan_layout(&pl, err, errlen);
    ok = ok && !*too_big;
    uint32_t len = 0;
    uint8_t *code = ok ? emit_code(&pl, with_this, index, refs, &len) : NULL;
    if (ok && code == NULL)
        errbuf_set(err, errlen, "out of memory");
    ok = code != NULL && move_exceptions(c, &pl, err, errlen) && move_attrs(cf, c, &pl, refs, err, errlen);
    if (ok) {
        free(c->code);
        c->code = code;
        c->code_length = len;
        /* the method hooks: the two halves of the number over what the code
         * had there (a return value, the exception), the receiver and both
         * at entry, and at the exits of a constructor that passes it there;
         * an array hook: what arrayhooks_refs says */
        uint32_t extra = methods ? (exit_this ? 3u : 2u) : 0u;
        uint32_t stack = c->max_stack + (extra > array_stack ? extra : array_stack);
        if (stack < 3u && methods)
            stack = 3u;
        c->max_stack = stack > UINT16_MAX ? UINT16_MAX : (uint16_t)stack;
    } else {
        free(code);
    }
    plan_free(&pl);
    return ok;
}

static bool add_refs(classfile *cf, const inject_hooks *h, pool_refs *refs)
{
    refs->enter = classfile_cp_add_methodref(cf, h->hooks_class, h->enter, "(I)V");
    refs->enter_this = classfile_cp_add_methodref(cf, h->hooks_class, h->enter_this, "(Ljava/lang/Object;I)V");
    refs->exit = classfile_cp_add_methodref(cf, h->hooks_class, h->exit, "(I)V");
    /* java.lang.Object is the one class without a superclass */
    bool exit_init = h->exit_init != NULL && cf->super_class == 0;
    refs->exit_init =
        exit_init ? classfile_cp_add_methodref(cf, h->hooks_class, h->exit_init, "(Ljava/lang/Object;I)V") : 0;
    refs->step = h->step != NULL ? classfile_cp_add_methodref(cf, h->hooks_class, h->step, "(II)V") : 0;
    refs->throwable = classfile_cp_add_class(cf, "java/lang/Throwable");
    refs->stack_map_name = classfile_cp_add_utf8(cf, "StackMapTable");
    refs->first_id = classfile_cp_add_integer(cf, h->first_id);
    return refs->enter && refs->enter_this && refs->exit && (refs->exit_init || !exit_init) &&
           (refs->step || h->step == NULL) && refs->throwable &&
           refs->stack_map_name && refs->first_id;
}

uint16_t inject_native_count(const classfile *cf)
{
    uint16_t n = 0;
    for (uint16_t i = 0; i < cf->method_count; i++)
        n += (cf->methods[i].access_flags & ACC_NATIVE) != 0;
    return n;
}

/* The hooks' constants, added to the pool at the first method that needs them. */
static bool refs_ready(classfile *cf, const inject_hooks *hooks, pool_refs *refs, bool *have, char *err,
                       size_t errlen)
{
    if (!*have && !add_refs(cf, hooks, refs)) {
        errbuf_set(err, errlen, "the constant pool is full");
        return false;
    }
    *have = true;
    return true;
}

int inject_class(classfile *cf, const inject_hooks *hooks, char *err, size_t errlen)
{
    int changed = 0;
    pool_refs refs = {0};
    bool have_refs = false;
    uint32_t methods = (uint32_t)cf->method_count +
                       (hooks->native_prefix != NULL && hooks->enter != NULL ? inject_native_count(cf) : 0);
    if (methods > MAX_METHOD_INDEX + 1u) {
        errbuf_set(err, errlen, "%u methods, more than the hooks can number (%u)", methods, MAX_METHOD_INDEX + 1u);
        return -1;
    }
    bool method_hooks = hooks->enter != NULL;
    for (uint16_t i = 0; i < cf->method_count; i++) {
        classfile_member *m = &cf->methods[i];
        if (classfile_code_of(m) == NULL)
            continue;
        if (method_hooks && !refs_ready(cf, hooks, &refs, &have_refs, err, errlen))
            return -1;
        char why[200] = "";
        const char *name = classfile_utf8(cf, m->name_index);
        const char *desc = classfile_utf8(cf, m->descriptor_index);
        bool too_big = false, untouched = false;
        bool ok = inject_method(cf, m, i, &refs, hooks, &too_big, &untouched, why, sizeof why);
        if (!ok && too_big && method_hooks && hooks->step != NULL) {
            if (hooks->unstepped != NULL)
                hooks->unstepped(hooks->ctx, name ? name : "?", desc ? desc : "", why);
            inject_hooks unstepping = *hooks;
            unstepping.step = NULL;
            ok = inject_method(cf, m, i, &refs, &unstepping, &too_big, &untouched, why, sizeof why);
        }
        if (!ok) {
            errbuf_set(err, errlen, "method %s%s: %s", name ? name : "?", desc ? desc : "", why);
            return -1;
        }
        changed += !untouched;
    }
    if (hooks->native_prefix == NULL || !method_hooks)
        return changed;
    uint16_t count = cf->method_count;
    for (uint16_t i = 0; i < count; i++) {
        if (!(cf->methods[i].access_flags & ACC_NATIVE) || natives_is_intrinsic(cf, &cf->methods[i]))
            continue;
        if (!refs_ready(cf, hooks, &refs, &have_refs, err, errlen))
            return -1;
        char why[200] = "";
        uint16_t before = cf->method_count;
        if (!natives_wrap(cf, i, cf->method_count, hooks->native_prefix, &refs, why, sizeof why)) {
            errbuf_set(err, errlen, "native method %s: %s", classfile_utf8(cf, cf->methods[i].name_index), why);
            return -1;
        }
        changed += cf->method_count - before;
    }
    return changed;
}
