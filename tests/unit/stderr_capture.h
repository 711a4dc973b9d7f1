/*
 * stderr_capture.h - what the layer printed while a test ran: its log
 * lines go to stderr.  Header-only, for the suites that check the layer
 * stays quiet (or says one line) where it should.
 */
#ifndef STDERR_CAPTURE_H_
#define STDERR_CAPTURE_H_

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

typedef struct {
    int saved;
    FILE *tmp;
    char text[16384];
} stderr_capture;

static inline void stderr_capture_begin(stderr_capture *c)
{
    fflush(stderr);
    c->tmp = tmpfile();
    ck_assert_ptr_nonnull(c->tmp);
    c->saved = dup(2);
    ck_assert_int_ge(c->saved, 0);
    ck_assert_int_ge(dup2(fileno(c->tmp), 2), 0);
}

static inline void stderr_capture_end(stderr_capture *c)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    rewind(c->tmp);
    size_t n = fread(c->text, 1, sizeof c->text - 1, c->tmp);
    c->text[n] = '\0';
    fclose(c->tmp);
    /* Echoed, so a failing run shows what was said. */
    fputs(c->text, stderr);
}

/* Lines that start with prefix. */
static inline int stderr_capture_count(const stderr_capture *c, const char *prefix)
{
    int count = 0;
    for (const char *line = c->text; *line != '\0';) {
        if (strncmp(line, prefix, strlen(prefix)) == 0) {
            count++;
        }
        const char *eol = strchr(line, '\n');
        if (eol == NULL) {
            break;
        }
        line = eol + 1;
    }
    return count;
}

/* Lines an agent run at the default log level would show: errors and warnings. */
static inline int stderr_capture_loud(const stderr_capture *c)
{
    return stderr_capture_count(c, "JVMPI layer: error: ") + stderr_capture_count(c, "JVMPI layer: warning: ");
}

#endif
