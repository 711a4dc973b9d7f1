/*
 * wbuf.h - the rewriter's growable output buffer, big-endian as class files
 * are.  Running out of memory is remembered (oom) and checked once at the
 * end, so that writers need not test every put.
 */
#ifndef JVMPI_WBUF_H_
#define JVMPI_WBUF_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint8_t *p;
    size_t len;
    size_t cap;
    bool oom;
} wbuf;

static inline void wbuf_put(wbuf *w, const void *src, size_t n)
{
    if (w->oom)
        return;
    if (n > w->cap - w->len) {
        size_t cap = w->cap ? w->cap : 4096;
        while (n > cap - w->len)
            cap *= 2;
        uint8_t *p = realloc(w->p, cap);
        if (p == NULL) {
            w->oom = true;
            return;
        }
        w->p = p;
        w->cap = cap;
    }
    if (n > 0)
        memcpy(w->p + w->len, src, n);
    w->len += n;
}

static inline void wbuf_u1(wbuf *w, unsigned v)
{
    uint8_t b = (uint8_t)v;
    wbuf_put(w, &b, 1);
}

static inline void wbuf_u2(wbuf *w, unsigned v)
{
    uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    wbuf_put(w, b, 2);
}

static inline void wbuf_u4(wbuf *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    wbuf_put(w, b, 4);
}

#endif
