/*
 * errbuf.h - the rewriter's one-line reasons: what went wrong goes into the
 * caller's buffer (err may be NULL, when the caller only wants the answer).
 */
#ifndef JVMPI_ERRBUF_H_
#define JVMPI_ERRBUF_H_

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

static inline void errbuf_set(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static inline void errbuf_set(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

#endif
