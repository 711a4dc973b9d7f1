/*
 * errbuf.h - the rewriter's one-line reasons: what went wrong goes into the
 * caller's buffer (err may be NULL, when the caller only wants the answer).
 */
#ifndef JVMPI_ERRBUF_H_
#define JVMPI_ERRBUF_H_

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* A reason for leaving a class alone because it holds something this code
 * does not know (a constant kind, an opcode, a stack map type, a Code
 * attribute of a class file newer than the rewriter: what a later JDK may
 * bring) ends with this marker and that thing, named without where it was
 * met, so that a caller meeting it in many classes can say it once
 * (classfile_unknown_in).  "; " never occurs in a JVM name or descriptor,
 * the only other text before it. */
#define ERRBUF_UNKNOWN "; unknown to the class rewriter: "

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
