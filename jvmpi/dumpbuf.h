/*
 * dumpbuf - the bytes of HEAP_DUMP, OBJECT_DUMP and MONITOR_DUMP as the JVMPI
 * specification lays them out: u2/u4/u8 big-endian, IDs and pointers as
 * native 8-byte words, field and element values by their JVMPI type.  What
 * goes in a dump, and in what order, is heapdump.c's and monitordump.c's.
 */
#ifndef JVMPI_DUMPBUF_H_
#define JVMPI_DUMPBUF_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seam.h"

/* A growing buffer; starts as {NULL, 0, 0, false}, p is the caller's to
 * free.  Once a write finds no memory, failed is set and nothing more is
 * written. */
typedef struct {
    unsigned char *p;
    size_t len, cap;
    bool failed;
} dumpbuf;

void dumpbuf_put(dumpbuf *w, const void *data, size_t n);
void dumpbuf_u1(dumpbuf *w, unsigned v);
void dumpbuf_u2(dumpbuf *w, unsigned v);
void dumpbuf_u4(dumpbuf *w, uint32_t v);
void dumpbuf_u8(dumpbuf *w, uint64_t v);
/* IDs, JNIEnv *, jobject: the pointer's own bytes, as agents read them back. */
void dumpbuf_ptr(dumpbuf *w, const void *p);

/* The JVMPI type of a field of that signature (JVMPI_CLASS for references). */
jint dumpbuf_type_of_signature(const char *sig);
/* Bytes of one value of a type in a primitive array. */
size_t dumpbuf_type_size(jint type);
bool dumpbuf_is_reference(jint type);
void dumpbuf_value(dumpbuf *w, jint type, seam_heap_bits v);
/* A field's value as its signature says it is written; a value of another
 * type (a snapshot that disagrees with CLASS_LOAD) is written as null/0. */
void dumpbuf_field(dumpbuf *w, jint sig_type, const seam_heap_field *f);
/* One element of a primitive array: packed values in native order. */
void dumpbuf_element(dumpbuf *w, jint type, const unsigned char *at);

#endif
