/*
 * test_classfile.c - the class-file reader and writer (rewriter/classfile.c).
 *
 * The rewriter will hand the JVM classes this code wrote, so the first
 * guarantee is that an untouched class comes back byte for byte: every class
 * javac made of tests/java (lambdas, inner classes, enums, records) is
 * round-tripped.  The second is that bad input is refused with a reason and
 * never read past its end: each truncation of a real class is parsed from a
 * buffer of exactly that length, so AddressSanitizer sees any over-read.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "class_files.h"
#include "classfile.h"

/* ------------------------------------------------------------------------ */
/* the class files under CLASSFILE_TEST_DIR                                  */
/* ------------------------------------------------------------------------ */

/* The largest test class: the most constant kinds and attributes to cut. */
static uint8_t *largest_class(size_t *len)
{
    path_list l = test_classes();
    const char *best = NULL;
    off_t best_size = -1;
    for (size_t i = 0; i < l.count; i++) {
        struct stat st;
        if (stat(l.paths[i], &st) == 0 && st.st_size > best_size) {
            best_size = st.st_size;
            best = l.paths[i];
        }
    }
    ck_assert_ptr_nonnull(best);
    uint8_t *data = read_file(best, len);
    free_list(&l);
    return data;
}

/* Parses data[0..len) from a copy of exactly len bytes and expects a refusal
 * whose reason is one non-empty line. */
static void expect_refused(const uint8_t *data, size_t len, const char *what, const char *needle)
{
    uint8_t *copy = malloc(len > 0 ? len : 1);
    ck_assert_ptr_nonnull(copy);
    if (len > 0)
        memcpy(copy, data, len);
    char err[256];
    memset(err, 0, sizeof err);
    classfile *cf = classfile_parse(copy, len, err, sizeof err);
    free(copy);
    if (cf != NULL)
        classfile_free(cf);
    ck_assert_msg(cf == NULL, "%s: accepted", what);
    ck_assert_msg(err[0] != '\0', "%s: refused without a reason", what);
    ck_assert_msg(strchr(err, '\n') == NULL, "%s: reason is not one line: %s", what, err);
    if (needle != NULL)
        ck_assert_msg(strstr(err, needle) != NULL, "%s: reason \"%s\" does not mention \"%s\"", what, err, needle);
}

/* ------------------------------------------------------------------------ */
/* a minimal class built by hand: class T extends java/lang/Object            */
/* ------------------------------------------------------------------------ */

static const uint8_t minimal_class[] = {
    0xCA, 0xFE, 0xBA, 0xBE, 0x00, 0x00, 0x00, 0x3D,        /* magic, 0.61 */
    0x00, 0x05,                                            /* cp count 5 */
    0x01, 0x00, 0x01, 'T',                                 /* #1 Utf8 "T" */
    0x07, 0x00, 0x01,                                      /* #2 Class #1 */
    0x01, 0x00, 0x10, 'j', 'a', 'v', 'a', '/', 'l', 'a', 'n', 'g', '/', 'O', 'b', 'j', 'e', 'c', 't',
    0x07, 0x00, 0x03,                                      /* #4 Class #3 */
    0x00, 0x21, 0x00, 0x02, 0x00, 0x04,                    /* public super, this #2, super #4 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,        /* no interfaces, fields, methods, attributes */
};
/* offset of the tag of constant #2 */
#define MINIMAL_TAG2 14

/* ------------------------------------------------------------------------ */
/* (a) round trip                                                            */
/* ------------------------------------------------------------------------ */

START_TEST(test_round_trip_all)
{
    path_list l = test_classes();
    size_t with_code = 0;
    for (size_t i = 0; i < l.count; i++) {
        size_t len;
        uint8_t *data = read_file(l.paths[i], &len);
        classfile *cf = parse_ok(data, len, l.paths[i]);
        for (uint16_t m = 0; m < cf->method_count; m++)
            for (uint16_t a = 0; a < cf->methods[m].attr_count; a++)
                if (cf->methods[m].attrs[a].code != NULL)
                    with_code++;
        uint8_t *out = NULL;
        size_t outlen = 0;
        char err[256] = "";
        ck_assert_msg(classfile_write(cf, &out, &outlen, err, sizeof err) == 0, "%s: write: %s", l.paths[i], err);
        ck_assert_msg(outlen == len, "%s: wrote %zu bytes, read %zu", l.paths[i], outlen, len);
        ck_assert_msg(memcmp(out, data, len) == 0, "%s: written bytes differ", l.paths[i]);
        free(out);
        classfile_free(cf);
        free(data);
    }
    /* the Code path was exercised, not everything kept raw */
    ck_assert_uint_gt(with_code, l.count);
    free_list(&l);
}
END_TEST

START_TEST(test_round_trip_minimal)
{
    classfile *cf = parse_ok(minimal_class, sizeof minimal_class, "minimal");
    ck_assert_uint_eq(cf->magic, CLASSFILE_MAGIC);
    ck_assert_uint_eq(cf->major_version, 61);
    ck_assert_uint_eq(cf->cp_count, 5);
    ck_assert_str_eq(classfile_utf8(cf, cf->cp[cf->this_class].ref1), "T");
    ck_assert_str_eq(classfile_utf8(cf, cf->cp[cf->super_class].ref1), "java/lang/Object");
    ck_assert_ptr_null(classfile_utf8(cf, 0));
    ck_assert_ptr_null(classfile_utf8(cf, 2));     /* a Class, not a Utf8 */
    ck_assert_ptr_null(classfile_utf8(cf, 5));     /* past the pool */
    ck_assert_ptr_null(classfile_utf8(cf, 65535));
    uint8_t *out;
    size_t outlen;
    char err[128];
    ck_assert_int_eq(classfile_write(cf, &out, &outlen, err, sizeof err), 0);
    ck_assert_uint_eq(outlen, sizeof minimal_class);
    ck_assert_mem_eq(out, minimal_class, outlen);
    free(out);
    classfile_free(cf);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* (b) constant pool helpers                                                 */
/* ------------------------------------------------------------------------ */

START_TEST(test_cp_add)
{
    size_t len;
    uint8_t *data = largest_class(&len);
    classfile *cf = parse_ok(data, len, "largest class");
    uint16_t before = cf->cp_count;

    uint16_t m1 = classfile_cp_add_methodref(cf, "jvmpi/Hook", "enter", "(Ljava/lang/String;)V");
    ck_assert_uint_ne(m1, 0);
    uint16_t grown = cf->cp_count;
    ck_assert_uint_gt(grown, before);
    uint16_t m2 = classfile_cp_add_methodref(cf, "jvmpi/Hook", "enter", "(Ljava/lang/String;)V");
    ck_assert_uint_eq(m1, m2);
    ck_assert_uint_eq(cf->cp_count, grown);

    /* the parts are reused too, and a different descriptor is a new entry */
    uint16_t cls = classfile_cp_add_class(cf, "jvmpi/Hook");
    ck_assert_uint_eq(cls, cf->cp[m1].ref1);
    uint16_t m3 = classfile_cp_add_methodref(cf, "jvmpi/Hook", "enter", "()V");
    ck_assert_uint_ne(m3, 0);
    ck_assert_uint_ne(m3, m1);
    ck_assert_uint_eq(cf->cp[m3].ref1, cls);
    uint16_t u = classfile_cp_add_utf8(cf, "enter");
    ck_assert_uint_eq(u, cf->cp[cf->cp[m1].ref2].ref1);

    /* entries the class already had are found, not duplicated */
    uint16_t obj = classfile_cp_add_class(cf, "java/lang/Object");
    ck_assert_uint_lt(obj, before);
    uint16_t code = classfile_cp_add_utf8(cf, "Code");
    ck_assert_uint_lt(code, before);

    uint8_t *out;
    size_t outlen;
    char err[256] = "";
    ck_assert_msg(classfile_write(cf, &out, &outlen, err, sizeof err) == 0, "write: %s", err);
    ck_assert_uint_gt(outlen, len);
    classfile *back = parse_ok(out, outlen, "class with added constants");
    ck_assert_uint_eq(back->cp_count, cf->cp_count);
    ck_assert_uint_eq(back->cp[m1].tag, CLASSFILE_CONSTANT_Methodref);
    const classfile_cp_entry *c = &back->cp[back->cp[m1].ref1];
    const classfile_cp_entry *nt = &back->cp[back->cp[m1].ref2];
    ck_assert_uint_eq(c->tag, CLASSFILE_CONSTANT_Class);
    ck_assert_str_eq(classfile_utf8(back, c->ref1), "jvmpi/Hook");
    ck_assert_uint_eq(nt->tag, CLASSFILE_CONSTANT_NameAndType);
    ck_assert_str_eq(classfile_utf8(back, nt->ref1), "enter");
    ck_assert_str_eq(classfile_utf8(back, nt->ref2), "(Ljava/lang/String;)V");
    ck_assert_str_eq(classfile_utf8(back, back->cp[back->cp[m3].ref2].ref2), "()V");
    /* and the reparsed class finds them where they are */
    ck_assert_uint_eq(classfile_cp_add_methodref(back, "jvmpi/Hook", "enter", "()V"), m3);
    ck_assert_uint_eq(back->cp_count, cf->cp_count);

    /* and the grown class is itself a stable round trip */
    uint8_t *again;
    size_t againlen;
    ck_assert_int_eq(classfile_write(back, &again, &againlen, err, sizeof err), 0);
    ck_assert_uint_eq(againlen, outlen);
    ck_assert_mem_eq(again, out, outlen);

    free(again);
    classfile_free(back);
    free(out);
    classfile_free(cf);
    free(data);
}
END_TEST

START_TEST(test_cp_add_until_full)
{
    /* The minimal class with its pool padded by Integer constants to 65533
     * slots, leaving room for exactly two more. */
    enum { COUNT = 65533 };
    size_t prefix = MINIMAL_TAG2 + 3 + 19 + 3;  /* up to the end of constant #4 */
    size_t len = prefix + (size_t)(COUNT - 5) * 5 + (sizeof minimal_class - prefix);
    uint8_t *buf = malloc(len), *p = buf;
    ck_assert_ptr_nonnull(buf);
    memcpy(p, minimal_class, prefix);
    p[8] = COUNT >> 8;
    p[9] = COUNT & 0xFF;
    p += prefix;
    for (uint32_t i = 5; i < COUNT; i++) {
        *p++ = CLASSFILE_CONSTANT_Integer;
        *p++ = 0;
        *p++ = 0;
        *p++ = (uint8_t)(i >> 8);
        *p++ = (uint8_t)i;
    }
    memcpy(p, minimal_class + prefix, sizeof minimal_class - prefix);

    classfile *cf = parse_ok(buf, len, "padded pool");
    ck_assert_uint_eq(cf->cp_count, COUNT);
    ck_assert_uint_eq(classfile_cp_add_utf8(cf, "a"), COUNT);
    ck_assert_uint_eq(classfile_cp_add_utf8(cf, "b"), COUNT + 1);
    ck_assert_uint_eq(cf->cp_count, UINT16_MAX);
    ck_assert_uint_eq(classfile_cp_add_utf8(cf, "c"), 0);
    ck_assert_uint_eq(classfile_cp_add_utf8(cf, "a"), COUNT);   /* existing entries still found */
    ck_assert_uint_eq(classfile_cp_add_class(cf, "T"), 2);
    ck_assert_uint_eq(classfile_cp_add_methodref(cf, "T", "m", "()V"), 0);
    ck_assert_uint_eq(cf->cp_count, UINT16_MAX);

    uint8_t *out;
    size_t outlen;
    char err[128];
    ck_assert_int_eq(classfile_write(cf, &out, &outlen, err, sizeof err), 0);
    ck_assert_uint_eq(outlen, len + 4 + 4);
    classfile *back = parse_ok(out, outlen, "full pool");
    ck_assert_str_eq(classfile_utf8(back, UINT16_MAX - 1), "b");
    classfile_free(back);
    free(out);
    classfile_free(cf);
    free(buf);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* (c) bad input                                                             */
/* ------------------------------------------------------------------------ */

START_TEST(test_truncated_every_length)
{
    size_t len;
    uint8_t *data = largest_class(&len);
    char what[64];
    for (size_t n = 0; n < len; n++) {
        snprintf(what, sizeof what, "first %zu of %zu bytes", n, len);
        expect_refused(data, n, what, NULL);
    }
    expect_refused(NULL, 0, "NULL input", "truncated");
    free(data);
}
END_TEST

START_TEST(test_trailing_bytes)
{
    uint8_t buf[sizeof minimal_class + 1];
    memcpy(buf, minimal_class, sizeof minimal_class);
    buf[sizeof minimal_class] = 0;
    expect_refused(buf, sizeof buf, "one byte too many", "after the end");
}
END_TEST

START_TEST(test_bad_magic)
{
    size_t len;
    uint8_t *data = largest_class(&len);
    data[0] = 0xCB;
    expect_refused(data, len, "magic CBFEBABE", "magic");
    free(data);
}
END_TEST

/* Refused, at its place, and named as what the rewriter does not know: in
 * a class of any version, since its length cannot be known. */
START_TEST(test_unknown_tag)
{
    uint8_t buf[sizeof minimal_class];
    static const uint8_t bad_tags[] = {0, 2, 13, 14, 21, 255};
    static const uint16_t majors[] = {61, 72};
    for (size_t v = 0; v < sizeof majors / sizeof majors[0]; v++) {
        for (size_t i = 0; i < sizeof bad_tags; i++) {
            memcpy(buf, minimal_class, sizeof buf);
            buf[7] = (uint8_t)majors[v];
            buf[MINIMAL_TAG2] = bad_tags[i];
            char what[32], kind[32];
            snprintf(what, sizeof what, "tag %u", bad_tags[i]);
            expect_refused(buf, sizeof buf, what, "constant 2 at offset 14");
            char err[256] = "";
            ck_assert_ptr_null(classfile_parse(buf, sizeof buf, err, sizeof err));
            snprintf(kind, sizeof kind, "constant pool tag %u", bad_tags[i]);
            ck_assert_pstr_eq(classfile_unknown_in(err), kind);
        }
    }
}
END_TEST

/* Any version from 45 on is read, and written back as it came: a later
 * JDK's class is refused for what it holds, not for its number.  Below 45
 * there was never a class file. */
START_TEST(test_any_major)
{
    size_t len;
    uint8_t *data = largest_class(&len);
    static const uint16_t majors[] = {45, CLASSFILE_KNOWN_MAJOR, 70, 71, 72, 0xFFFE, 0xFFFF};
    for (size_t v = 0; v < sizeof majors / sizeof majors[0]; v++) {
        for (uint32_t minor = 0; minor <= 0xFFFF; minor += 0xFFFF) {
            data[4] = (uint8_t)(minor >> 8);
            data[5] = (uint8_t)minor;
            data[6] = (uint8_t)(majors[v] >> 8);
            data[7] = (uint8_t)majors[v];
            char what[32];
            snprintf(what, sizeof what, "version %u.%u", majors[v], minor);
            classfile *cf = parse_ok(data, len, what);
            ck_assert_uint_eq(cf->major_version, majors[v]);
            ck_assert_uint_eq(cf->minor_version, minor);
            uint8_t *out;
            size_t outlen;
            char err[256] = "";
            ck_assert_msg(classfile_write(cf, &out, &outlen, err, sizeof err) == 0, "%s: write: %s", what, err);
            ck_assert_uint_eq(outlen, len);
            ck_assert_mem_eq(out, data, len);
            free(out);
            classfile_free(cf);
        }
    }
    data[4] = data[5] = data[6] = 0;
    data[7] = 44;
    expect_refused(data, len, "major 44", "44");
    char err[256] = "";
    ck_assert_ptr_null(classfile_parse(data, len, err, sizeof err));
    ck_assert_ptr_null(classfile_unknown_in(err)); /* bad input, not something new */
    free(data);
}
END_TEST

START_TEST(test_bad_references)
{
    uint8_t buf[sizeof minimal_class];

    /* Class #2 naming itself rather than a Utf8 */
    memcpy(buf, minimal_class, sizeof buf);
    buf[MINIMAL_TAG2 + 2] = 2;
    expect_refused(buf, sizeof buf, "Class -> Class", "not a Utf8");

    /* Class #2 naming a constant past the pool */
    memcpy(buf, minimal_class, sizeof buf);
    buf[MINIMAL_TAG2 + 1] = 0xFF;
    expect_refused(buf, sizeof buf, "Class -> #0xFF01", "not a Utf8");

    /* this_class pointing at a Utf8 */
    memcpy(buf, minimal_class, sizeof buf);
    buf[sizeof buf - 8 - 3] = 1;
    expect_refused(buf, sizeof buf, "this_class -> Utf8", "this_class");

    /* a constant pool count larger than the input could hold */
    memcpy(buf, minimal_class, sizeof buf);
    buf[8] = 0xFF;
    buf[9] = 0xFF;
    expect_refused(buf, sizeof buf, "cp count 65535", "overruns");

    /* a count of zero */
    memcpy(buf, minimal_class, sizeof buf);
    buf[8] = 0;
    buf[9] = 0;
    expect_refused(buf, sizeof buf, "cp count 0", "constant_pool_count");

    /* a methods count that overruns */
    memcpy(buf, minimal_class, sizeof buf);
    buf[sizeof buf - 4] = 0x01;
    expect_refused(buf, sizeof buf, "methods count 256", "overruns");
}
END_TEST

/* A Long in the last slot would claim a slot the pool does not have. */
START_TEST(test_long_in_last_slot)
{
    static const uint8_t cls[] = {
        0xCA, 0xFE, 0xBA, 0xBE, 0x00, 0x00, 0x00, 0x3D, 0x00, 0x06,
        0x01, 0x00, 0x01, 'T',
        0x07, 0x00, 0x01,
        0x01, 0x00, 0x01, 'O',
        0x07, 0x00, 0x03,
        0x05, 0, 0, 0, 0, 0, 0, 0, 1,                      /* #5 Long: needs #6 too */
        0x00, 0x21, 0x00, 0x02, 0x00, 0x04,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    };
    expect_refused(cls, sizeof cls, "Long at the last index", "past the end of the pool");

    /* with room for its second slot the same class is fine, and writes back */
    uint8_t ok[sizeof cls];
    memcpy(ok, cls, sizeof ok);
    ok[9] = 7;
    classfile *cf = parse_ok(ok, sizeof ok, "Long with its two slots");
    ck_assert_uint_eq(cf->cp[5].tag, CLASSFILE_CONSTANT_Long);
    ck_assert_uint_eq(cf->cp[6].tag, 0);
    ck_assert_uint_eq(classfile_cp_add_utf8(cf, "new"), 7);
    classfile_free(cf);
}
END_TEST

/* ------------------------------------------------------------------------ */

static Suite *classfile_suite(void)
{
    Suite *s = suite_create("classfile");
    TCase *tc;

    tc = tcase_create("round_trip");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_round_trip_all);
    tcase_add_test(tc, test_round_trip_minimal);
    suite_add_tcase(s, tc);

    tc = tcase_create("constant_pool");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_cp_add);
    tcase_add_test(tc, test_cp_add_until_full);
    suite_add_tcase(s, tc);

    tc = tcase_create("bad_input");
    tcase_set_timeout(tc, 120);  /* every truncation, under ASan too */
    tcase_add_test(tc, test_truncated_every_length);
    tcase_add_test(tc, test_trailing_bytes);
    tcase_add_test(tc, test_bad_magic);
    tcase_add_test(tc, test_unknown_tag);
    tcase_add_test(tc, test_any_major);
    tcase_add_test(tc, test_bad_references);
    tcase_add_test(tc, test_long_in_last_slot);
    suite_add_tcase(s, tc);

    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(classfile_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
