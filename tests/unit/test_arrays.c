/*
 * test_arrays.c - the allocation hooks the rewriter puts after array
 * allocations (rewriter/inject.c, inject_hooks.new_array and
 * new_multi_array), on every compiled Java test program: alone, each
 * newarray and anewarray is followed by dup and a call of new_array, each
 * multianewarray by dup, bipush <its dimensions> and a call of
 * new_multi_array, and nothing else changes but the offsets that moved with
 * them (branches, exception table, stack map frames: their count stays);
 * a method that allocates no array is left byte for byte.  With the method
 * hooks and the instruction hooks the array hooks come right after their
 * instruction all the same.  Whether the JVM's verifier accepts the result
 * is the integration tests' job (-Xverify:all).
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "bytecode.h"
#include "class_files.h"
#include "classfile.h"
#include "inject.h"

enum { OP_BIPUSH = 0x10, OP_DUP = 0x59, OP_INVOKESTATIC = 0xb8, OP_NEWARRAY = 0xbc, OP_ANEWARRAY = 0xbd,
       OP_MULTIANEWARRAY = 0xc5 };

static const inject_hooks arrays_only = {
    .hooks_class = "test/Hooks", .new_array = "newArray", .new_multi_array = "newMultiArray", .first_id = 100};

static const inject_hooks with_methods = {.hooks_class = "test/Hooks",
                                          .enter = "enter",
                                          .enter_this = "enterThis",
                                          .exit = "exit",
                                          .step = "step",
                                          .new_array = "newArray",
                                          .new_multi_array = "newMultiArray",
                                          .first_id = 100};

static uint16_t u2(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

static bool is_array_op(uint8_t op) { return op == OP_NEWARRAY || op == OP_ANEWARRAY || op == OP_MULTIANEWARRAY; }

/* The hook the invokestatic at p names, checked to be test/Hooks's with
 * the descriptor it must have. */
static const char *hook_named(const classfile *cf, const uint8_t *p)
{
    ck_assert_uint_eq(p[0], OP_INVOKESTATIC);
    const classfile_cp_entry *m = &cf->cp[u2(p + 1)];
    ck_assert_uint_eq(m->tag, CLASSFILE_CONSTANT_Methodref);
    ck_assert_str_eq(classfile_utf8(cf, cf->cp[m->ref1].ref1), "test/Hooks");
    const char *name = classfile_utf8(cf, cf->cp[m->ref2].ref1);
    const char *desc = classfile_utf8(cf, cf->cp[m->ref2].ref2);
    ck_assert_str_eq(desc, strcmp(name, "newMultiArray") == 0 ? "(Ljava/lang/Object;I)V" : "(Ljava/lang/Object;)V");
    return name;
}

/* The length of the hook after the array allocation at code[pc], checked. */
static uint32_t check_hook_after(const classfile *cf, const uint8_t *code, uint32_t len, uint32_t pc)
{
    uint32_t at = pc + (uint32_t)bytecode_length(code, len, pc, NULL, 0);
    ck_assert_uint_eq(code[at], OP_DUP);
    if (code[pc] == OP_MULTIANEWARRAY) {
        ck_assert_uint_eq(code[at + 1], OP_BIPUSH);
        ck_assert_uint_eq(code[at + 2], code[pc + 3]);
        ck_assert_str_eq(hook_named(cf, code + at + 3), "newMultiArray");
        return 6;
    }
    ck_assert_str_eq(hook_named(cf, code + at + 1), "newArray");
    return 4;
}

static uint32_t *walk(const classfile_code *c, int *n)
{
    *n = bytecode_walk(c->code, c->code_length, NULL, 0, NULL, 0);
    ck_assert_int_gt(*n, 0);
    uint32_t *starts = malloc(sizeof *starts * ((size_t)*n + 1));
    bytecode_walk(c->code, c->code_length, starts, (uint32_t)*n, NULL, 0);
    starts[*n] = c->code_length;
    return starts;
}

static uint16_t stack_map_frames(const classfile *cf, const classfile_code *c)
{
    for (uint16_t k = 0; k < c->attr_count; k++)
        if (strcmp(classfile_utf8(cf, c->attrs[k].name_index), "StackMapTable") == 0)
            return u2(c->attrs[k].data);
    return 0;
}

typedef struct {
    int arrays, multis, targets_after; /* hooks seen; branches to right after one */
} counts;

/* Arrays only: the rewritten method r is the original o with the hooks in,
 * and every offset moved with them. */
static void check_arrays_only(const classfile *cf, const classfile *back, uint16_t index, counts *seen)
{
    const classfile_code *o = classfile_code_of(&cf->methods[index]);
    const classfile_code *r = classfile_code_of(&back->methods[index]);
    if (o == NULL)
        return;
    int on, rn;
    uint32_t *os = walk(o, &on), *rs = walk(r, &rn);
    uint32_t *moved = calloc(o->code_length + 1, sizeof *moved); /* old offset -> new */
    bool any = false, after[65536] = {false};
    int j = 0;
    for (int i = 0; i < on; i++, j++) {
        ck_assert_int_lt(j, rn);
        ck_assert_uint_eq(r->code[rs[j]], o->code[os[i]]);
        moved[os[i]] = rs[j];
        if (is_array_op(o->code[os[i]])) {
            uint32_t hook = check_hook_after(back, r->code, r->code_length, rs[j]);
            after[os[i + 1]] = true;
            any = true;
            seen->arrays++;
            seen->multis += o->code[os[i]] == OP_MULTIANEWARRAY;
            j += hook == 6 ? 3 : 2;
        }
    }
    ck_assert_int_eq(j, rn);
    moved[o->code_length] = r->code_length;
    if (!any) {
        ck_assert_uint_eq(r->code_length, o->code_length);
        ck_assert_mem_eq(r->code, o->code, o->code_length);
        ck_assert_uint_eq(r->max_stack, o->max_stack);
    } else {
        ck_assert_uint_ge(r->max_stack, o->max_stack + 1u);
        ck_assert_uint_le(r->max_stack, o->max_stack + 2u);
    }
    /* branches land where their old targets went: after a hook, not on it */
    for (int i = 0; i < on; i++) {
        int k = bytecode_targets(o->code, o->code_length, os[i], NULL, 0);
        if (k <= 0)
            continue;
        int32_t *ot = malloc(sizeof *ot * (size_t)k), *rt = malloc(sizeof *rt * (size_t)k);
        bytecode_targets(o->code, o->code_length, os[i], ot, k);
        ck_assert_int_eq(bytecode_targets(r->code, r->code_length, moved[os[i]], rt, k), k);
        for (int t = 0; t < k; t++) {
            ck_assert_uint_eq((uint32_t)rt[t], moved[ot[t]]);
            seen->targets_after += after[ot[t]];
        }
        free(ot);
        free(rt);
    }
    ck_assert_uint_eq(r->exception_count, o->exception_count);
    for (uint16_t k = 0; k < o->exception_count; k++) {
        ck_assert_uint_eq(r->exceptions[k].start_pc, moved[o->exceptions[k].start_pc]);
        ck_assert_uint_eq(r->exceptions[k].end_pc, moved[o->exceptions[k].end_pc]);
        ck_assert_uint_eq(r->exceptions[k].handler_pc, moved[o->exceptions[k].handler_pc]);
    }
    ck_assert_uint_eq(stack_map_frames(back, r), stack_map_frames(cf, o));
    free(moved);
    free(os);
    free(rs);
}

START_TEST(test_arrays_alone)
{
    path_list l = test_classes();
    counts seen = {0};
    int untouched = 0;
    for (size_t i = 0; i < l.count; i++) {
        size_t len;
        uint8_t *data = read_file(l.paths[i], &len);
        classfile *cf = parse_ok(data, len, l.paths[i]);
        classfile *orig = parse_ok(data, len, l.paths[i]);
        int changed;
        classfile *back = inject_round_trip(cf, &arrays_only, l.paths[i], &changed);
        counts before = seen;
        for (uint16_t m = 0; m < orig->method_count; m++)
            check_arrays_only(orig, back, m, &seen);
        if (seen.arrays == before.arrays) {
            /* nothing allocated: not a byte of the class changes, its pool included */
            ck_assert_int_eq(changed, 0);
            ck_assert_uint_eq(back->cp_count, orig->cp_count);
            untouched++;
        } else {
            ck_assert_int_gt(changed, 0);
        }
        classfile_free(back);
        classfile_free(orig);
        classfile_free(cf);
        free(data);
    }
    ck_assert_int_ge(seen.arrays, 50);
    ck_assert_int_ge(seen.multis, 2);
    ck_assert_int_ge(seen.targets_after, 1);
    ck_assert_int_ge(untouched, 5);
    free_list(&l);
}
END_TEST

/* With the method and instruction hooks: every array allocation still has
 * its hook right after it, and no branch lands inside one. */
START_TEST(test_arrays_with_method_hooks)
{
    path_list l = test_classes();
    int arrays = 0;
    for (size_t i = 0; i < l.count; i++) {
        size_t len;
        uint8_t *data = read_file(l.paths[i], &len);
        classfile *cf = parse_ok(data, len, l.paths[i]);
        int want = 0;
        for (uint16_t m = 0; m < cf->method_count; m++) {
            const classfile_code *c = classfile_code_of(&cf->methods[m]);
            int n;
            uint32_t *s = c != NULL ? walk(c, &n) : NULL;
            for (int k = 0; s != NULL && k < n; k++)
                want += is_array_op(c->code[s[k]]);
            free(s);
        }
        int changed;
        classfile *back = inject_round_trip(cf, &with_methods, l.paths[i], &changed);
        int got = 0;
        for (uint16_t m = 0; m < back->method_count; m++) {
            const classfile_code *c = classfile_code_of(&back->methods[m]);
            if (c == NULL)
                continue;
            int n;
            uint32_t *s = walk(c, &n);
            bool hook[65536] = {false};
            for (int k = 0; k < n; k++) {
                if (!is_array_op(c->code[s[k]]))
                    continue;
                got++;
                uint32_t hl = check_hook_after(back, c->code, c->code_length, s[k]);
                for (uint32_t b = 0; b < hl; b++)
                    hook[s[k + 1] + b] = true;
            }
            for (int k = 0; k < n; k++) {
                int nt = bytecode_targets(c->code, c->code_length, s[k], NULL, 0);
                int32_t t[64];
                if (nt <= 0 || nt > 64)
                    continue;
                bytecode_targets(c->code, c->code_length, s[k], t, nt);
                for (int x = 0; x < nt; x++)
                    ck_assert_msg(!hook[t[x]], "a branch lands inside an array hook");
            }
            for (uint16_t e = 0; e < c->exception_count; e++)
                ck_assert(!hook[c->exceptions[e].handler_pc] && !hook[c->exceptions[e].start_pc]);
            free(s);
        }
        ck_assert_int_eq(got, want);
        arrays += got;
        classfile_free(back);
        classfile_free(cf);
        free(data);
    }
    ck_assert_int_ge(arrays, 50);
    free_list(&l);
}
END_TEST

static Suite *arrays_suite(void)
{
    Suite *s = suite_create("arrays");
    TCase *tc = tcase_create("arrays");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_arrays_alone);
    tcase_add_test(tc, test_arrays_with_method_hooks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(arrays_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
