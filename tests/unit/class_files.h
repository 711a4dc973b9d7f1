/*
 * class_files.h - the compiled Java test programs (the directory named by
 * CLASSFILE_TEST_DIR, the build's tests/classes) for the rewriter's suites.
 * Header-only, like stderr_capture.h.
 */
#ifndef CLASS_FILES_H_
#define CLASS_FILES_H_

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>

#include "classfile.h"
#include "inject.h"

typedef struct {
    char **paths;
    size_t count;
    size_t cap;
} path_list;

static inline void collect(const char *dir, path_list *out)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        size_t n = strlen(dir) + strlen(de->d_name) + 2;
        char *path = malloc(n);
        ck_assert_ptr_nonnull(path);
        snprintf(path, n, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            collect(path, out);  /* classes in packages sit in subdirectories */
            free(path);
            continue;
        }
        size_t len = strlen(de->d_name);
        if (len <= 6 || strcmp(de->d_name + len - 6, ".class") != 0) {
            free(path);
            continue;
        }
        if (out->count == out->cap) {
            out->cap = out->cap ? out->cap * 2 : 64;
            out->paths = realloc(out->paths, out->cap * sizeof *out->paths);
            ck_assert_ptr_nonnull(out->paths);
        }
        out->paths[out->count++] = path;
    }
    closedir(d);
}

static inline path_list test_classes(void)
{
    const char *dir = getenv("CLASSFILE_TEST_DIR");
    ck_assert_msg(dir != NULL && dir[0] != '\0', "CLASSFILE_TEST_DIR is not set");
    path_list l = {0};
    collect(dir, &l);
    ck_assert_msg(l.count >= 20, "%s holds %zu class files, expected at least 20", dir, l.count);
    return l;
}

static inline void free_list(path_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->paths[i]);
    free(l->paths);
}

static inline uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    ck_assert_int_ge(size, 0);
    rewind(f);
    uint8_t *buf = malloc(size > 0 ? (size_t)size : 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *len = (size_t)size;
    return buf;
}

/* The class in data[0..len), which must parse. */
static inline classfile *parse_ok(const uint8_t *data, size_t len, const char *what)
{
    char err[256] = "";
    classfile *cf = classfile_parse(data, len, err, sizeof err);
    ck_assert_msg(cf != NULL, "%s: refused: %s", what, err);
    return cf;
}

/* cf rewritten with h, written and read back; a refusal fails the test. */
static inline classfile *inject_round_trip(classfile *cf, const inject_hooks *h, const char *path, int *changed)
{
    char err[300] = "";
    *changed = inject_class(cf, h, err, sizeof err);
    ck_assert_msg(*changed >= 0, "%s refused: %s", path, err);
    uint8_t *out;
    size_t outlen;
    ck_assert_msg(classfile_write(cf, &out, &outlen, err, sizeof err) == 0, "%s: %s", path, err);
    classfile *back = parse_ok(out, outlen, path);
    free(out);
    return back;
}

#endif
