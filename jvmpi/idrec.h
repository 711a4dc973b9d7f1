/*
 * idrec - the class of every live object ID, found from the ID alone.
 *
 * JVM TI finds an object by its tag only by scanning every tag, so answering
 * RequestEvent(OBJECT_ALLOC) through JVM TI costs time in proportion to the
 * heap.  JDK 5.0 answered it in constant time, and dump-based profilers ask
 * it once per object of a dump.  The layer therefore keeps, for each object
 * ID it hands out, a 32-bit class number (see ids_class_number), written when
 * the ID is made and dropped when its ObjectFree arrives.  The size is in the
 * tag already.
 *
 * Sequence numbers are handed out in blocks of IDREC_BLOCK, one block per
 * thread at a time, so each block gets a dense array of class numbers filled
 * by its thread without a lock.  When few objects of a closed block are left,
 * the survivors move to one open-addressing table of 8-byte entries and the
 * array is freed.  Either way a record costs at most about 16 bytes.
 */
#ifndef JVMPI_IDREC_H_
#define JVMPI_IDREC_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sequence numbers come in blocks of this many, aligned: (seq - 1) / IDREC_BLOCK
 * is the block's number. */
#define IDREC_BLOCK 256
/* Sequence numbers are below 2^IDREC_SEQ_BITS (the tag's field, jvmpi/ids.c). */
#define IDREC_SEQ_BITS 35

/* Class numbers 0 and 1 are reserved: 0 means no record, 1 a record whose
 * class the layer could not number (class not known when the ID was made,
 * or more classes than numbers). */
#define IDREC_NONE 0u
#define IDREC_UNKNOWN 1u
#define IDREC_MAX_CLASS 0xffffffu

/* Records seq (made by the calling thread from its current block) as an
 * object of class number cls. */
void idrec_put(int64_t seq, uint32_t cls);
/* Changes the class number of a recorded seq; no-op when it has no record. */
void idrec_set(int64_t seq, uint32_t cls);
/* Drops seq's record, if any. */
void idrec_drop(int64_t seq);
/* Drops the records of seq_of(values[i]) for each i, under one lock; a
 * seq_of of 0 or less names no record. */
void idrec_drop_many(const int64_t *values, size_t n, int64_t (*seq_of)(int64_t value));
/* seq's class number; IDREC_NONE when it has no record (never made, or freed). */
uint32_t idrec_get(int64_t seq);

typedef struct idrec_stats {
    size_t records;      /* live records */
    size_t dense_blocks; /* blocks kept as arrays */
    size_t bytes;        /* memory held for them, tables included */
    size_t index_bytes;  /* of which the index of dense blocks: a 32 KB page
                            for each 4096 blocks that have one */
} idrec_stats;
void idrec_get_stats(idrec_stats *out);

#endif
