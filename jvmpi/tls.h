/*
 * tls - the layer's thread-locals.
 *
 * libjvmpi.so is dlopen'ed by the VM, so a plain __thread variable costs a
 * __tls_get_addr call on every access, several times per allocation.  Small
 * variables use the initial-exec model instead, which glibc serves from the
 * static TLS it keeps spare for dlopen'ed libraries; that space is small, so
 * the per-thread caches live on the heap, reached through one such pointer.
 */
#ifndef JVMPI_TLS_H_
#define JVMPI_TLS_H_

#include <stdint.h>

#include "seam.h"

#define TLS_FAST __thread __attribute__((tls_model("initial-exec")))

#define TLS_ANNOUNCED_SLOTS 1024
#define TLS_METHOD_SLOTS 2048
#define TLS_ELEMENT_SLOTS 64
#define TLS_RECENT_OBJECTS 16
#define TLS_CLASS_SLOTS 256

typedef struct tls_caches {
    /* classes whose CLASS_LOAD this thread knows was delivered (jvmpi/defs.c) */
    jobjectID announced[TLS_ANNOUNCED_SLOTS];
    /* methods whose class this thread knows was announced (jvmpi/defs.c) */
    jmethodID methods[TLS_METHOD_SLOTS];
    /* events_generation when those two were last emptied */
    unsigned defs_generation;
    /* element class of an array class, by the array class's tag (jvmti_backend/heap.c) */
    struct {
        int64_t array_tag;
        jobjectID element;
    } element[TLS_ELEMENT_SLOTS];
    /* this thread's last OBJECT_ALLOCs, with the collection count then
     * (jvmti_backend/heap.c): RequestEvent(OBJECT_ALLOC) for one of them,
     * typically from the handler of its own OBJECT_ALLOC, needs no search */
    struct {
        seam_object_info info;
        unsigned long gc_epoch;
    } recent[TLS_RECENT_OBJECTS];
    unsigned recent_next;
    /* class tags by mirror address and pause interval (jvmti_backend/classcache.c) */
    struct {
        uintptr_t mirror;
        unsigned long interval;
        int64_t tag;
    } classes[TLS_CLASS_SLOTS];
    unsigned class_hits; /* since the last hit checked against JVM TI */
} tls_caches;

/* The calling thread's caches, made zeroed on first use and freed when the
 * thread exits; NULL when out of memory. */
tls_caches *tls_caches_get(void);

/* Slot of an ID in a cache of n slots: IDs differ in the bits above the low 3. */
static inline unsigned tls_slot(int64_t id, unsigned n) { return (unsigned)(((uint64_t)id >> 3) % n); }

#endif
