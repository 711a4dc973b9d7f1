/*
 * dumpbuf.c - the dump format's bytes (dumpbuf.h).
 */
#include "dumpbuf.h"

#include <stdlib.h>
#include <string.h>

/* ---- the output buffer --------------------------------------------------- */

void dumpbuf_put(dumpbuf *w, const void *data, size_t n)
{
    if (w->failed) {
        return;
    }
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->len + n) {
            cap *= 2;
        }
        unsigned char *grown = realloc(w->p, cap);
        if (grown == NULL) {
            w->failed = true;
            return;
        }
        w->p = grown;
        w->cap = cap;
    }
    memcpy(w->p + w->len, data, n);
    w->len += n;
}

void dumpbuf_u1(dumpbuf *w, unsigned v)
{
    unsigned char b = (unsigned char)v;
    dumpbuf_put(w, &b, 1);
}

void dumpbuf_u2(dumpbuf *w, unsigned v)
{
    unsigned char b[2] = {(unsigned char)(v >> 8), (unsigned char)v};
    dumpbuf_put(w, b, 2);
}

void dumpbuf_u4(dumpbuf *w, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
                          (unsigned char)v};
    dumpbuf_put(w, b, 4);
}

void dumpbuf_u8(dumpbuf *w, uint64_t v)
{
    dumpbuf_u4(w, (uint32_t)(v >> 32));
    dumpbuf_u4(w, (uint32_t)v);
}

void dumpbuf_ptr(dumpbuf *w, const void *p) { dumpbuf_put(w, &p, sizeof p); }

/* ---- values ---------------------------------------------------------------- */

jint dumpbuf_type_of_signature(const char *sig)
{
    switch (sig != NULL ? sig[0] : 'L') {
    case 'Z': return JVMPI_BOOLEAN;
    case 'B': return JVMPI_BYTE;
    case 'C': return JVMPI_CHAR;
    case 'S': return JVMPI_SHORT;
    case 'I': return JVMPI_INT;
    case 'J': return JVMPI_LONG;
    case 'F': return JVMPI_FLOAT;
    case 'D': return JVMPI_DOUBLE;
    default: return JVMPI_CLASS;
    }
}

size_t dumpbuf_type_size(jint type)
{
    switch (type) {
    case JVMPI_BOOLEAN:
    case JVMPI_BYTE:
        return 1;
    case JVMPI_CHAR:
    case JVMPI_SHORT:
        return 2;
    case JVMPI_INT:
    case JVMPI_FLOAT:
        return 4;
    case JVMPI_LONG:
    case JVMPI_DOUBLE:
        return 8;
    default:
        return sizeof(void *);
    }
}

bool dumpbuf_is_reference(jint type) { return type == JVMPI_CLASS || type == JVMPI_NORMAL_OBJECT; }

void dumpbuf_value(dumpbuf *w, jint type, seam_heap_bits v)
{
    switch (type) {
    case JVMPI_BOOLEAN: dumpbuf_u1(w, v.z); break;
    case JVMPI_BYTE: dumpbuf_u1(w, (uint8_t)v.b); break;
    case JVMPI_CHAR: dumpbuf_u2(w, v.c); break;
    case JVMPI_SHORT: dumpbuf_u2(w, (uint16_t)v.s); break;
    case JVMPI_INT: dumpbuf_u4(w, (uint32_t)v.i); break;
    case JVMPI_FLOAT: {
        uint32_t bits;
        memcpy(&bits, &v.f, sizeof bits);
        dumpbuf_u4(w, bits);
        break;
    }
    case JVMPI_LONG: dumpbuf_u8(w, (uint64_t)v.j); break;
    case JVMPI_DOUBLE: {
        uint64_t bits;
        memcpy(&bits, &v.d, sizeof bits);
        dumpbuf_u8(w, bits);
        break;
    }
    default: dumpbuf_ptr(w, v.id); break;
    }
}

void dumpbuf_field(dumpbuf *w, jint sig_type, const seam_heap_field *f)
{
    seam_heap_bits v;
    memset(&v, 0, sizeof v);
    if (f != NULL && (f->type == sig_type || (dumpbuf_is_reference(f->type) && dumpbuf_is_reference(sig_type)))) {
        v = f->v;
    }
    dumpbuf_value(w, sig_type, v);
}

void dumpbuf_element(dumpbuf *w, jint type, const unsigned char *at)
{
    seam_heap_bits v;
    memset(&v, 0, sizeof v);
    memcpy(&v, at, dumpbuf_type_size(type));
    dumpbuf_value(w, type, v);
}
