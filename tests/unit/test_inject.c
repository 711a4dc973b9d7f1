/*
 * test_inject.c - the method hooks the rewriter puts into code
 * (rewriter/inject.c, rewriter/stackmap.c), on every compiled Java test
 * program: each rewritten method starts with the entry call, has the exit
 * call before each of its returns and the handler at its end, still walks
 * as instructions, keeps its exception table entries on instructions and
 * ends its StackMapTable with the handler's frame.  Whether the JVM's
 * verifier accepts the result is the integration tests' job (-Xverify:all);
 * here, what the rewriter says it does, and what it refuses.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "bytecode.h"
#include "class_files.h"
#include "classfile.h"
#include "inject.h"
#include "leaf.h"

static const inject_hooks hooks = {
    .hooks_class = "test/Hooks", .enter = "enter", .enter_this = "enterThis", .exit = "exit", .first_id = 100};

static uint16_t u2(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }


/* The hook a call at pc names ("enter", ...), and the method number:
 * ldc_w <first number>; sipush <index>; iadd; invokestatic <hook>. */
#define CALL_LEN 10
#define HANDLER_LEN (CALL_LEN + 1)
#define CALL_INSNS 4
static const char *call_at(const classfile *cf, const uint8_t *code, uint32_t pc, uint32_t *id)
{
    if (code[pc] != 0x13 || code[pc + 3] != 0x11 || code[pc + 6] != 0x60 || code[pc + 7] != 0xb8)
        return NULL;
    const classfile_cp_entry *k = &cf->cp[u2(code + pc + 1)];
    ck_assert_uint_eq(k->tag, CLASSFILE_CONSTANT_Integer);
    ck_assert_uint_eq(k->bytes_hi, hooks.first_id);
    *id = k->bytes_hi + (uint32_t)(int16_t)u2(code + pc + 4);
    const classfile_cp_entry *m = &cf->cp[u2(code + pc + 8)];
    ck_assert_uint_eq(m->tag, CLASSFILE_CONSTANT_Methodref);
    ck_assert_str_eq(classfile_utf8(cf, cf->cp[m->ref1].ref1), "test/Hooks");
    return classfile_utf8(cf, cf->cp[m->ref2].ref1);
}

static void check_method(const classfile *cf, uint16_t index, bool just_return)
{
    const classfile_member *m = &cf->methods[index];
    const classfile_code *c = classfile_code_of(m);
    if (c == NULL)
        return;
    const char *name = classfile_utf8(cf, m->name_index);
    uint32_t want = hooks.first_id + index, id = 0;
    bool with_this = !(m->access_flags & 0x0008) && strcmp(name, "<init>") != 0;
    uint32_t pc = with_this ? 1 : 0;
    if (with_this)
        ck_assert_uint_eq(c->code[0], 0x2a);
    const char *entry = call_at(cf, c->code, pc, &id);
    ck_assert_msg(entry != NULL && strcmp(entry, with_this ? "enterThis" : "enter") == 0, "%s: no entry call", name);
    ck_assert_uint_eq(id, want);
    int n = bytecode_walk(c->code, c->code_length, NULL, 0, NULL, 0);
    ck_assert_msg(n > 0, "%s: the rewritten code does not walk", name);
    uint32_t *starts = malloc(sizeof *starts * (size_t)n);
    bytecode_walk(c->code, c->code_length, starts, (uint32_t)n, NULL, 0);
    /* returns: each right after an exit call */
    int returns = 0;
    for (int i = 0; i < n; i++) {
        if (!bytecode_is_return(c->code[starts[i]]))
            continue;
        returns++;
        ck_assert_msg(i >= CALL_INSNS && strcmp(call_at(cf, c->code, starts[i - CALL_INSNS], &id), "exit") == 0 &&
                          id == want,
                      "%s: a return at %u without the exit call before it", name, starts[i]);
    }
    /* the handler ends the code: exit call, athrow; the last exception entries go there */
    uint32_t handler = starts[n - 1] - CALL_LEN;
    bool ctor_two = strcmp(name, "<init>") == 0 && cf->super_class != 0;
    if (ctor_two)
        handler -= CALL_LEN + 1;
    ck_assert_uint_eq(c->code[c->code_length - 1], 0xbf);
    ck_assert_str_eq(call_at(cf, c->code, handler, &id), "exit");
    int to_handler = 0;
    for (uint16_t k = 0; k < c->exception_count; k++) {
        const classfile_exception *e = &c->exceptions[k];
        ck_assert_uint_lt(e->start_pc, e->end_pc);
        if (e->handler_pc >= handler) {
            ck_assert_uint_eq(e->catch_type, 0);
            to_handler++;
        }
    }
    /* a method that only returns can throw nothing */
    ck_assert_msg(to_handler >= (just_return ? 0 : 1), "%s: nothing goes to the handler", name);
    /* the last StackMapTable frame is the handler's full_frame */
    for (uint16_t k = 0; k < c->attr_count; k++) {
        if (strcmp(classfile_utf8(cf, c->attrs[k].name_index), "StackMapTable") != 0)
            continue;
        const uint8_t *d = c->attrs[k].data;
        uint32_t len = c->attrs[k].length;
        ck_assert_uint_ge(u2(d), 1);
        /* full_frame, delta, locals 0 (or 1: uninitializedThis), stack 1: Object Throwable */
        ck_assert_uint_eq(d[len - 6], ctor_two ? 6 : 0); /* UninitializedThis, or the low byte of 0 locals */
        ck_assert_uint_eq(d[len - 5], 0);
        ck_assert_uint_eq(d[len - 4], 1);
        ck_assert_uint_eq(d[len - 3], 7);
        ck_assert_str_eq(classfile_utf8(cf, cf->cp[u2(d + len - 2)].ref1), "java/lang/Throwable");
    }
    free(starts);
}

START_TEST(test_every_test_class)
{
    path_list l = test_classes();
    int methods = 0;
    for (size_t i = 0; i < l.count; i++) {
        size_t len;
        uint8_t *data = read_file(l.paths[i], &len);
        classfile *cf = parse_ok(data, len, l.paths[i]);
        bool just_return[1024] = {false};
        for (uint16_t m = 0; m < cf->method_count && m < 1024; m++) {
            const classfile_code *c = classfile_code_of(&cf->methods[m]);
            just_return[m] = c != NULL && c->code_length == 1;
        }
        int changed;
        classfile *back = inject_round_trip(cf, &hooks, l.paths[i], &changed);
        for (uint16_t m = 0; m < back->method_count; m++)
            check_method(back, m, m < 1024 && just_return[m]);
        methods += changed;
        classfile_free(back);
        classfile_free(cf);
        free(data);
    }
    ck_assert_int_ge(methods, 200);
    free_list(&l);
}
END_TEST

/* With instruction hooks: before every original instruction, in order, a
 * call of step with the method's number and the instruction's original
 * offset; then the instruction itself (a goto or jsr maybe widened), or the
 * exit call and the return. */
static int unstepped_count;
static void count_unstepped(void *ctx, const char *name, const char *desc, const char *why) { unstepped_count++; }

static void check_steps(const classfile *cf, uint16_t index, const uint8_t *orig, uint32_t orig_len)
{
    const classfile_code *c = classfile_code_of(&cf->methods[index]);
    int n = bytecode_walk(orig, orig_len, NULL, 0, NULL, 0);
    int m = bytecode_walk(c->code, c->code_length, NULL, 0, NULL, 0);
    ck_assert_int_gt(n, 0);
    uint32_t *old = malloc(sizeof *old * (size_t)n), *now = malloc(sizeof *now * (size_t)m);
    bytecode_walk(orig, orig_len, old, (uint32_t)n, NULL, 0);
    bytecode_walk(c->code, c->code_length, now, (uint32_t)m, NULL, 0);
    int k = 0;
    for (int i = 0; i + 4 < m; i++) {
        const uint8_t *p = c->code + now[i];
        if (p[0] != 0x13 || c->code[now[i + 1]] != 0x11 || c->code[now[i + 2]] != 0x60 ||
            c->code[now[i + 3]] != 0x11 || c->code[now[i + 4]] != 0xb8)
            continue;
        const classfile_cp_entry *ref = &cf->cp[u2(c->code + now[i + 4] + 1)];
        ck_assert_str_eq(classfile_utf8(cf, cf->cp[ref->ref2].ref1), "step");
        ck_assert_uint_eq(hooks.first_id + (uint32_t)(int16_t)u2(c->code + now[i + 1] + 1), hooks.first_id + index);
        ck_assert_int_lt(k, n);
        ck_assert_uint_eq(u2(c->code + now[i + 3] + 1), old[k]);
        int next = i + 5;
        uint32_t id;
        if (bytecode_is_return(orig[old[k]])) {
            ck_assert_str_eq(call_at(cf, c->code, now[next], &id), "exit");
            next += CALL_INSNS;
        }
        uint8_t was = orig[old[k]], is = c->code[now[next]];
        ck_assert_msg(is == was || (was == 0xa7 && is == 0xc8) || (was == 0xa8 && is == 0xc9),
                      "method %u: offset %u was opcode %u, now %u", index, old[k], was, is);
        k++;
    }
    ck_assert_int_eq(k, n);
    free(old);
    free(now);
}

START_TEST(test_instruction_hooks)
{
    path_list l = test_classes();
    inject_hooks stepping = hooks;
    stepping.step = "step";
    stepping.unstepped = count_unstepped;
    int methods = 0;
    for (size_t i = 0; i < l.count; i++) {
        size_t len;
        uint8_t *data = read_file(l.paths[i], &len);
        classfile *cf = parse_ok(data, len, l.paths[i]);
        classfile *orig = parse_ok(data, len, l.paths[i]);
        unstepped_count = 0;
        int changed;
        classfile *back = inject_round_trip(cf, &stepping, l.paths[i], &changed);
        ck_assert_int_eq(unstepped_count, 0);
        for (uint16_t m = 0; m < orig->method_count; m++) {
            const classfile_code *c = classfile_code_of(&orig->methods[m]);
            if (c != NULL) {
                check_steps(back, m, c->code, c->code_length);
                methods++;
            }
        }
        classfile_free(back);
        classfile_free(orig);
        classfile_free(cf);
        free(data);
    }
    ck_assert_int_ge(methods, 200);
    free_list(&l);
}
END_TEST

/* With exit_init: the constructor of a class without a superclass (only
 * java.lang.Object has none) passes its receiver at each return, through
 * exit_init; any other class is rewritten as without it, and its pool gets
 * no reference to exit_init. */
static bool pool_names(const classfile *cf, const char *utf8)
{
    for (uint16_t k = 1; k < cf->cp_count; k++)
        if (cf->cp[k].tag == CLASSFILE_CONSTANT_Utf8 && strcmp(cf->cp[k].utf8, utf8) == 0)
            return true;
    return false;
}

START_TEST(test_root_constructor_passes_receiver)
{
    inject_hooks h = hooks;
    h.exit_init = "exitInit";
    path_list l = test_classes();
    int ctors = 0;
    for (size_t i = 0; i < l.count; i++) {
        size_t len;
        uint8_t *data = read_file(l.paths[i], &len);
        for (int root = 0; root <= 1; root++) {
            classfile *cf = parse_ok(data, len, l.paths[i]);
            if (root)
                cf->super_class = 0;
            int changed;
            classfile *back = inject_round_trip(cf, &h, l.paths[i], &changed);
            ck_assert_msg(pool_names(back, "exitInit") == (root && changed > 0), "%s: exitInit in the pool: %d",
                          l.paths[i], pool_names(back, "exitInit"));
            for (uint16_t m = 0; root && m < back->method_count; m++) {
                const classfile_code *c = classfile_code_of(&back->methods[m]);
                if (c == NULL || strcmp(classfile_utf8(back, back->methods[m].name_index), "<init>") != 0)
                    continue;
                ctors++;
                int n = bytecode_walk(c->code, c->code_length, NULL, 0, NULL, 0);
                uint32_t *starts = malloc(sizeof *starts * (size_t)n);
                bytecode_walk(c->code, c->code_length, starts, (uint32_t)n, NULL, 0);
                for (int k = 0; k < n; k++) {
                    if (!bytecode_is_return(c->code[starts[k]]))
                        continue;
                    uint32_t id;
                    ck_assert_int_ge(k, CALL_INSNS + 1);
                    ck_assert_uint_eq(c->code[starts[k - CALL_INSNS - 1]], 0x2a); /* aload_0 */
                    ck_assert_str_eq(call_at(back, c->code, starts[k - CALL_INSNS], &id), "exitInit");
                    ck_assert_uint_eq(id, hooks.first_id + m);
                }
                free(starts);
                ck_assert_uint_ge(c->max_stack, 3);
            }
            classfile_free(back);
            classfile_free(cf);
        }
        free(data);
    }
    ck_assert_int_ge(ctors, 20);
    free_list(&l);
}
END_TEST

/* Leaves (leaf.h): which of H_Shapes' methods are, and how a leaf is
 * rewritten: its one call (the receiver passed, if any) in front of its
 * code, which stays as it was, with no exit call and no handler.  Without
 * leaf hooks, or with instruction hooks, there are no leaves. */
static const struct {
    const char *name;
    bool leaf;
} shapes[] = {
    {"getV", true},   {"setW", true},    {"getSeed", true}, {"max", true},       {"helper", true},
    {"div", false},   {"first", false},  {"otherV", false}, {"loop", false},     {"name", false},
    {"twoLines", false}, {"fact", false}, {"syncStatic", false}, {"<init>", false}, {"<clinit>", false},
};

static uint16_t method_named(const classfile *cf, const char *name)
{
    for (uint16_t m = 0; m < cf->method_count; m++)
        if (strcmp(classfile_utf8(cf, cf->methods[m].name_index), name) == 0)
            return m;
    ck_abort_msg("no method %s", name);
    return 0;
}

static classfile *shapes_class(uint8_t **data, size_t *len)
{
    path_list l = test_classes();
    classfile *cf = NULL;
    for (size_t i = 0; i < l.count && cf == NULL; i++) {
        size_t n = strlen(l.paths[i]);
        if (n >= 15 && strcmp(l.paths[i] + n - 15, "/H_Shapes.class") == 0) {
            *data = read_file(l.paths[i], len);
            cf = parse_ok(*data, *len, l.paths[i]);
        }
    }
    ck_assert_msg(cf != NULL, "no H_Shapes.class among the test classes");
    free_list(&l);
    return cf;
}

START_TEST(test_leaves)
{
    size_t len;
    uint8_t *data;
    classfile *cf = shapes_class(&data, &len);
    classfile *orig = parse_ok(data, len, "H_Shapes");
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        ck_assert_msg(leaf_method(cf, &cf->methods[method_named(cf, shapes[k].name)]) == shapes[k].leaf,
                      "%s: a leaf is %d", shapes[k].name, shapes[k].leaf);
    inject_hooks h = hooks;
    h.leaf = "leaf";
    h.leaf_this = "leafThis";
    int changed;
    classfile *back = inject_round_trip(cf, &h, "H_Shapes", &changed);
    ck_assert_int_gt(changed, 0);
    int leaves = 0;
    for (uint16_t m = 0; m < orig->method_count; m++) {
        const classfile_code *was = classfile_code_of(&orig->methods[m]);
        if (was == NULL)
            continue;
        if (!leaf_method(orig, &orig->methods[m])) {
            check_method(back, m, was->code_length == 1);
            continue;
        }
        leaves++;
        const classfile_code *c = classfile_code_of(&back->methods[m]);
        bool with_this = !(orig->methods[m].access_flags & 0x0008);
        uint32_t at = with_this ? 1 : 0, id;
        if (with_this)
            ck_assert_uint_eq(c->code[0], 0x2a);
        ck_assert_str_eq(call_at(back, c->code, at, &id), with_this ? "leafThis" : "leaf");
        ck_assert_uint_eq(id, hooks.first_id + m);
        ck_assert_uint_eq(c->code_length, at + CALL_LEN + was->code_length);
        ck_assert_msg(memcmp(c->code + at + CALL_LEN, was->code, was->code_length) == 0, "a leaf's code changed");
        ck_assert_uint_eq(c->exception_count, 0);
    }
    ck_assert_int_ge(leaves, 5);
    classfile_free(back);
    classfile_free(cf);
    /* with instruction hooks, or no leaf hooks: no leaf call anywhere */
    for (int stepping = 0; stepping <= 1; stepping++) {
        inject_hooks no = hooks;
        if (stepping) {
            no = h;
            no.step = "step";
        }
        cf = parse_ok(data, len, "H_Shapes");
        back = inject_round_trip(cf, &no, "H_Shapes", &changed);
        ck_assert(!pool_names(back, "leaf") && !pool_names(back, "leafThis"));
        classfile_free(back);
        classfile_free(cf);
    }
    classfile_free(orig);
    free(data);
}
END_TEST

/* java.lang.Object's constructor, a bare return, is a leaf too, unless its
 * exits pass its receiver on (exit_init); no other constructor is. */
START_TEST(test_root_constructor_leaf)
{
    size_t len;
    uint8_t *data;
    classfile *cf = shapes_class(&data, &len);
    uint16_t m = method_named(cf, "<init>");
    classfile_code *c = classfile_code_of(&cf->methods[m]);
    c->code[0] = 0xb1; /* return */
    c->code_length = 1;
    c->exception_count = 0;
    free(c->exceptions);
    c->exceptions = NULL;
    for (uint16_t k = 0; k < c->attr_count; k++)
        free(c->attrs[k].data);
    free(c->attrs);
    c->attrs = NULL;
    c->attr_count = 0;
    cf->super_class = 0;
    uint8_t *out;
    size_t outlen;
    char err[300];
    ck_assert_int_eq(classfile_write(cf, &out, &outlen, err, sizeof err), 0);
    for (int passing = 0; passing <= 1; passing++) {
        inject_hooks h = hooks;
        h.leaf = "leaf";
        h.leaf_this = "leafThis";
        if (passing)
            h.exit_init = "exitInit";
        classfile *root = parse_ok(out, outlen, "root");
        int changed;
        classfile *back = inject_round_trip(root, &h, "root", &changed);
        const classfile_code *rc = classfile_code_of(&back->methods[m]);
        uint32_t id;
        ck_assert_str_eq(call_at(back, rc->code, 0, &id), passing ? "enter" : "leaf");
        ck_assert_uint_eq(rc->code_length, passing ? 2 * CALL_LEN + 2 + HANDLER_LEN : CALL_LEN + 1);
        classfile_free(back);
        classfile_free(root);
    }
    free(out);
    classfile_free(cf);
    free(data);
}
END_TEST

/* Renames every Utf8 constant equal to from (an attribute's name, in the
 * test classes); how many there were. */
static int rename_utf8(classfile *cf, const char *from, const char *to)
{
    int n = 0;
    for (uint16_t k = 1; k < cf->cp_count; k++) {
        if (cf->cp[k].tag == CLASSFILE_CONSTANT_Utf8 && strcmp(cf->cp[k].utf8, from) == 0) {
            free(cf->cp[k].utf8);
            cf->cp[k].utf8 = strdup(to);
            ck_assert_ptr_nonnull(cf->cp[k].utf8);
            cf->cp[k].utf8_len = (uint16_t)strlen(to);
            n++;
        }
    }
    return n;
}

/* A Code attribute the rewriter knows no offsets of, in the first test class
 * with line numbers, its LineNumberTable renamed to `name`, the class file's
 * major version set to `major`: dropped (the class rewritten all the same,
 * its other attributes kept) when `dropped`, else the class refused naming
 * it. */
static void unknown_code_attribute(const char *name, uint16_t major, bool dropped)
{
    path_list l = test_classes();
    bool found = false;
    for (size_t i = 0; i < l.count && !found; i++) {
        size_t len;
        uint8_t *data = read_file(l.paths[i], &len);
        classfile *cf = parse_ok(data, len, l.paths[i]);
        found = rename_utf8(cf, "LineNumberTable", name) > 0;
        cf->major_version = major;
        if (found && !dropped) {
            char err[300] = "", kind[80];
            ck_assert_int_eq(inject_class(cf, &hooks, err, sizeof err), -1);
            snprintf(kind, sizeof kind, "Code attribute %s", name);
            ck_assert_pstr_eq(classfile_unknown_in(err), kind);
            ck_assert_msg(strncmp(err, "method ", 7) == 0, "the reason names no method: %s", err);
        } else if (found) {
            classfile *orig = parse_ok(data, len, l.paths[i]);
            int changed;
            classfile *back = inject_round_trip(cf, &hooks, l.paths[i], &changed);
            ck_assert_int_gt(changed, 0);
            int gone = 0;
            for (uint16_t m = 0; m < back->method_count; m++) {
                const classfile_code *was = classfile_code_of(&orig->methods[m]);
                const classfile_code *c = classfile_code_of(&back->methods[m]);
                if (c == NULL)
                    continue;
                check_method(back, m, was->code_length == 1);
                int lines = 0, others = 0;
                for (uint16_t k = 0; k < was->attr_count; k++) {
                    bool is_lines = strcmp(classfile_utf8(orig, was->attrs[k].name_index), "LineNumberTable") == 0;
                    lines += is_lines;
                    others += !is_lines;
                }
                for (uint16_t k = 0; k < c->attr_count; k++)
                    ck_assert_str_ne(classfile_utf8(back, c->attrs[k].name_index), name);
                /* the rest stay (a StackMapTable may be added) */
                ck_assert_int_ge(c->attr_count, others);
                gone += lines;
            }
            ck_assert_int_gt(gone, 0);
            classfile_free(back);
            classfile_free(orig);
        }
        classfile_free(cf);
        free(data);
    }
    ck_assert(found);
    free_list(&l);
}

/* In a class of a version the rewriter knows, no JVM reads a Code attribute
 * it does not know (the JVM specification has unrecognised attributes
 * ignored): dropped.  In a newer class one might be what a later JVM reads:
 * refused, named.  The type annotations of code are dropped in any. */
START_TEST(test_unknown_code_attribute)
{
    unknown_code_attribute("XineNumberTable", 61, true);
    unknown_code_attribute("XineNumberTable", CLASSFILE_KNOWN_MAJOR, true);
    unknown_code_attribute("XineNumberTable", CLASSFILE_KNOWN_MAJOR + 1, false);
    unknown_code_attribute("XineNumberTable", 72, false);
    unknown_code_attribute("RuntimeInvisibleTypeAnnotations", 72, true);
    unknown_code_attribute("RuntimeVisibleTypeAnnotations", 0xFFFF, true);
}
END_TEST

/* The attributes outside Code, of a class, of each field and each method
 * other than Code: a, b, c, ... in file order, by name and bytes. */
static void same_attrs(const classfile *x, const classfile_attr *a, uint16_t na, const classfile *y,
                       const classfile_attr *b, uint16_t nb, int *xattrs)
{
    uint16_t i = 0, j = 0;
    for (;;) {
        while (i < na && a[i].code != NULL)
            i++;
        while (j < nb && b[j].code != NULL)
            j++;
        if (i == na || j == nb)
            break;
        ck_assert_str_eq(classfile_utf8(x, a[i].name_index), classfile_utf8(y, b[j].name_index));
        ck_assert_uint_eq(a[i].length, b[j].length);
        ck_assert_mem_eq(a[i].data, b[j].data, a[i].length);
        *xattrs += classfile_utf8(y, b[j].name_index)[0] == 'X';
        i++, j++;
    }
    ck_assert_msg(i == na && j == nb, "attribute counts differ");
}

/* Every test class, made a class of a JDK newer than the rewriter (71, 72,
 * a major of 0xFFFF with the preview minor): rewritten as any other; and the
 * attributes it does not know outside Code (here the class's SourceFile and
 * the Signature of classes, fields and methods, renamed) carried through as
 * they were. */
START_TEST(test_newer_versions)
{
    static const uint16_t majors[] = {71, 72, 0xFFFF};
    path_list l = test_classes();
    for (size_t v = 0; v < sizeof majors / sizeof majors[0]; v++) {
        int methods = 0, class_x = 0, member_x = 0;
        for (size_t i = 0; i < l.count; i++) {
            size_t len;
            uint8_t *data = read_file(l.paths[i], &len);
            classfile *cf = parse_ok(data, len, l.paths[i]);
            cf->major_version = majors[v];
            cf->minor_version = majors[v] == 0xFFFF ? 0xFFFF : 0;
            rename_utf8(cf, "SourceFile", "XourceFile");
            rename_utf8(cf, "Signature", "Xignature");
            bool just_return[1024] = {false};
            for (uint16_t m = 0; m < cf->method_count && m < 1024; m++) {
                const classfile_code *c = classfile_code_of(&cf->methods[m]);
                just_return[m] = c != NULL && c->code_length == 1;
            }
            /* a copy as it was, the same renames made */
            uint8_t *before;
            size_t beforelen;
            char err[256] = "";
            ck_assert_int_eq(classfile_write(cf, &before, &beforelen, err, sizeof err), 0);
            classfile *orig = parse_ok(before, beforelen, l.paths[i]);
            int changed;
            classfile *back = inject_round_trip(cf, &hooks, l.paths[i], &changed);
            ck_assert_uint_eq(back->major_version, majors[v]);
            for (uint16_t m = 0; m < back->method_count; m++)
                check_method(back, m, m < 1024 && just_return[m]);
            same_attrs(orig, orig->attrs, orig->attr_count, back, back->attrs, back->attr_count, &class_x);
            ck_assert_uint_eq(orig->field_count, back->field_count);
            for (uint16_t f = 0; f < back->field_count; f++)
                same_attrs(orig, orig->fields[f].attrs, orig->fields[f].attr_count, back, back->fields[f].attrs,
                           back->fields[f].attr_count, &member_x);
            ck_assert_uint_eq(orig->method_count, back->method_count);
            for (uint16_t m = 0; m < back->method_count; m++)
                same_attrs(orig, orig->methods[m].attrs, orig->methods[m].attr_count, back,
                           back->methods[m].attrs, back->methods[m].attr_count, &member_x);
            methods += changed;
            classfile_free(back);
            classfile_free(orig);
            free(before);
            classfile_free(cf);
            free(data);
        }
        ck_assert_int_ge(methods, 200);
        ck_assert_int_ge(class_x, 20);
        ck_assert_int_ge(member_x, 5);
    }
    free_list(&l);
}
END_TEST

/* An opcode a later JDK might define: the class refused, the opcode named. */
START_TEST(test_unknown_opcode_named)
{
    path_list l = test_classes();
    size_t len;
    uint8_t *data = read_file(l.paths[0], &len);
    classfile *cf = parse_ok(data, len, l.paths[0]);
    cf->major_version = 72;
    classfile_code *c = NULL;
    for (uint16_t m = 0; m < cf->method_count && c == NULL; m++)
        c = classfile_code_of(&cf->methods[m]);
    ck_assert_ptr_nonnull(c);
    c->code[0] = 0xcb;
    char err[300] = "";
    ck_assert_int_eq(inject_class(cf, &hooks, err, sizeof err), -1);
    ck_assert_pstr_eq(classfile_unknown_in(err), "opcode 0xcb");
    classfile_free(cf);
    free(data);
    free_list(&l);
}
END_TEST

/* ---- javac -Xjcov's CharacterRangeTable ----------------------------------- */

static classfile *jcov_class(uint8_t **data, size_t *len)
{
    const char *path = getenv("CRT_TEST_CLASS");
    ck_assert_msg(path != NULL && path[0] != '\0', "CRT_TEST_CLASS is not set");
    *data = read_file(path, len);
    return parse_ok(*data, *len, path);
}

static const classfile_attr *crt_of(const classfile *cf, const classfile_code *c)
{
    for (uint16_t k = 0; k < c->attr_count; k++)
        if (strcmp(classfile_utf8(cf, c->attrs[k].name_index), "CharacterRangeTable") == 0)
            return &c->attrs[k];
    return NULL;
}

/* The original offset a step call at pc passes, or -1: ldc_w; sipush;
 * iadd; sipush <offset>; invokestatic. */
static int32_t step_at(const uint8_t *code, uint32_t len, uint32_t pc)
{
    if (pc + 13 > len || code[pc] != 0x13 || code[pc + 3] != 0x11 || code[pc + 6] != 0x60 || code[pc + 7] != 0x11 ||
        code[pc + 10] != 0xb8)
        return -1;
    return u2(code + pc + 8);
}

static bool starts_insn(const uint8_t *code, uint32_t len, uint32_t pc)
{
    int n = bytecode_walk(code, len, NULL, 0, NULL, 0);
    uint32_t *at = malloc(sizeof *at * (size_t)n);
    bytecode_walk(code, len, at, (uint32_t)n, NULL, 0);
    bool yes = false;
    for (int i = 0; i < n && !yes; i++)
        yes = at[i] == pc;
    free(at);
    return yes;
}

/* Each range's start_pc and (inclusive) end_pc move with the code: with
 * instruction hooks, the start is the step call of the range's first
 * instruction (0 stays 0: the entry call belongs to the first range), and
 * the byte after the end is the step call of the instruction after the
 * range, or the handler when the range ended the code; the source
 * positions and flags stay.  Without them, ranges still start and end on
 * instructions. */
START_TEST(test_char_ranges_moved)
{
    size_t len;
    uint8_t *data;
    classfile *orig = jcov_class(&data, &len);
    for (int stepping = 1; stepping >= 0; stepping--) {
        classfile *cf = parse_ok(data, len, "J_Cov");
        inject_hooks h = hooks;
        if (stepping)
            h.step = "step";
        int changed;
        classfile *back = inject_round_trip(cf, &h, "J_Cov", &changed);
        int ranges = 0;
        for (uint16_t m = 0; m < orig->method_count; m++) {
            const classfile_code *was = classfile_code_of(&orig->methods[m]);
            if (was == NULL)
                continue;
            const classfile_code *c = classfile_code_of(&back->methods[m]);
            const classfile_attr *a = crt_of(orig, was), *b = crt_of(back, c);
            ck_assert_msg(a != NULL, "method %u has no CharacterRangeTable: not compiled with -Xjcov?", m);
            ck_assert_msg(b != NULL, "method %u lost its CharacterRangeTable", m);
            ck_assert_uint_eq(a->length, b->length);
            ck_assert_uint_eq(u2(a->data), u2(b->data));
            for (uint32_t k = 0; k < u2(a->data); k++) {
                const uint8_t *e = a->data + 2 + 14 * k, *f = b->data + 2 + 14 * k;
                uint32_t start = u2(e), last = u2(e + 2), now_start = u2(f), now_last = u2(f + 2);
                ck_assert_msg(memcmp(e + 4, f + 4, 10) == 0, "a range's source positions or flags changed");
                ck_assert_uint_le(now_start, now_last);
                ck_assert_uint_lt(now_last, c->code_length);
                if (stepping) {
                    if (start == 0)
                        ck_assert_uint_eq(now_start, 0);
                    else
                        ck_assert_int_eq(step_at(c->code, c->code_length, now_start), (int32_t)start);
                    if (last + 1 < was->code_length) {
                        ck_assert_int_eq(step_at(c->code, c->code_length, now_last + 1), (int32_t)(last + 1));
                    } else {
                        uint32_t id;
                        ck_assert_str_eq(call_at(back, c->code, now_last + 1, &id), "exit");
                        ck_assert_uint_eq(c->code[now_last + 1 + CALL_LEN], 0xbf);
                    }
                } else {
                    ck_assert(starts_insn(c->code, c->code_length, now_start));
                    ck_assert(starts_insn(c->code, c->code_length, now_last + 1));
                }
                ranges++;
            }
        }
        ck_assert_int_ge(ranges, 40);
        classfile_free(back);
        classfile_free(cf);
    }
    classfile_free(orig);
    free(data);
}
END_TEST

/* A CharacterRangeTable whose ranges are not on instructions cannot be
 * moved: it is dropped, and the class rewritten all the same; the other
 * methods keep theirs. */
START_TEST(test_char_ranges_off_instructions_dropped)
{
    size_t len;
    uint8_t *data;
    classfile *cf = jcov_class(&data, &len);
    uint16_t bad = UINT16_MAX;
    for (uint16_t m = 0; m < cf->method_count && bad == UINT16_MAX; m++) {
        const classfile_code *c = classfile_code_of(&cf->methods[m]);
        classfile_attr *a = c != NULL ? (classfile_attr *)crt_of(cf, c) : NULL;
        if (a == NULL || u2(a->data) < 2)
            continue;
        /* the second range now ends past the code */
        a->data[2 + 14 + 2] = 0xff;
        a->data[2 + 14 + 3] = 0xfe;
        bad = m;
    }
    ck_assert_uint_ne(bad, UINT16_MAX);
    int changed;
    classfile *back = inject_round_trip(cf, &hooks, "J_Cov", &changed);
    ck_assert_int_gt(changed, 0);
    int kept = 0;
    for (uint16_t m = 0; m < back->method_count; m++) {
        const classfile_code *c = classfile_code_of(&back->methods[m]);
        if (c == NULL)
            continue;
        if (m == bad)
            ck_assert_ptr_null(crt_of(back, c));
        else
            kept += crt_of(back, c) != NULL;
    }
    ck_assert_int_ge(kept, 3);
    classfile_free(back);
    classfile_free(cf);
    free(data);
}
END_TEST

static Suite *inject_suite(void)
{
    Suite *s = suite_create("inject");
    TCase *tc = tcase_create("inject");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_every_test_class);
    tcase_add_test(tc, test_unknown_code_attribute);
    tcase_add_test(tc, test_newer_versions);
    tcase_add_test(tc, test_unknown_opcode_named);
    tcase_add_test(tc, test_char_ranges_moved);
    tcase_add_test(tc, test_char_ranges_off_instructions_dropped);
    tcase_add_test(tc, test_instruction_hooks);
    tcase_add_test(tc, test_root_constructor_passes_receiver);
    tcase_add_test(tc, test_leaves);
    tcase_add_test(tc, test_root_constructor_leaf);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(inject_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
