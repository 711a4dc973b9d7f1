/*
 * heapstore.h - what a heap walk records, and where it keeps it: the arena
 * the snapshot's arrays live in, the tag -> index map, and the walk's
 * records (objects, facts, roots, Class objects to look up after).
 *
 * Apart from the walk (heapwalk.c) because three modules share these
 * records: the callbacks fill them, the class field maps (fieldmap.c) and
 * the snapshot building (heapsnap.c) read them after the walk.
 */
#ifndef JVMPI_HEAPSTORE_H_
#define JVMPI_HEAPSTORE_H_

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

/* A class ID: a class tag, but not the placeholder of a class that is not
 * linked yet (heap.c), whose class has no ID and whose objects are left out. */
static inline bool is_class_id(int64_t tag) { return ids_is_class(tag) && !ids_is_pending_class(tag); }

#define FACT_CHUNK_BITS 16
#define FACT_CHUNK ((size_t)1 << FACT_CHUNK_BITS)

/* ---- an arena for the snapshot's arrays ------------------------------------ */

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    max_align_t data[];
} arena_chunk;

typedef struct {
    arena_chunk *head;
} arena;

void *heapstore_arena_alloc(arena *a, size_t n);
void *heapstore_arena_calloc(arena *a, size_t count, size_t size);
void heapstore_arena_free(arena *a);

/* ---- tag -> index ------------------------------------------------------------ */

/* Open addressing, key and value side by side: a heap walk looks up a tag
 * for every reference, and a miss in a large table costs a cache miss. */
typedef struct {
    jlong key;       /* 0: empty */
    int32_t val;
} tagslot;

typedef struct {
    tagslot *slots;
    size_t cap, count;
} tagmap;

int32_t heapstore_tagmap_get(const tagmap *m, jlong tag);
/* The slot of tag, made (value -1) if it is not there; NULL out of memory. */
tagslot *heapstore_tagmap_slot(tagmap *m, jlong tag);
bool heapstore_tagmap_put(tagmap *m, jlong tag, int32_t val);
void heapstore_tagmap_free(tagmap *m);

/* ---- what the walk records ---------------------------------------------------- */

typedef struct {
    jlong tag;
    jlong class_tag;
    jlong size;
    jint length;        /* arrays */
    int8_t kind;        /* seam_heap_kind */
    int8_t elem_type;   /* primitive arrays */
    void *values;       /* primitive array contents (in the arena) */
} obj_rec;

/* References and primitive values, as JVM TI numbers them. */
enum { F_FIELD, F_STATIC, F_ELEMENT, F_LOADER, F_SIGNERS, F_DOMAIN, F_INTERFACE };

typedef struct {
    int32_t owner;      /* index of the referrer's obj_rec */
    uint8_t kind;
    uint8_t type;       /* JVMPI_CLASS for references (v.id holds the tag) */
    int32_t index;      /* JVM TI field index, array index */
    seam_heap_bits v;
} fact;

/* A stretch of facts of one owner: the walk reports an object's references
 * and values together, so an object has one run, but nothing relies on it. */
typedef struct {
    int32_t owner;
    uint32_t count;
    size_t first;
} run;

typedef struct {
    jvmtiHeapReferenceKind kind;
    jlong tag;
    jlong thread_tag;
    jint depth;
    jmethodID method;
} root_rec;

typedef struct {
    seam_heap_detail detail;
    bool single;        /* OBJECT_DUMP: the initial object alone */
    jlong only_tag;
    jlong class_class_tag;   /* java.lang.Class's tag: class_tag of every Class object */
    jlong vthread_class_tag; /* java.lang.VirtualThread's, 0 when none (vtguard.h) */
    jmethodID *vt_makers;    /* the methods that construct virtual threads, sorted */
    size_t n_vt_makers;
    tagmap unbuilt;          /* virtual threads possibly under construction */

    obj_rec *recs;
    int32_t n_recs, cap_recs;
    tagmap index;
    jlong last_tag;     /* the last owner looked up: references come in runs */
    int32_t last_owner;

    fact **chunks;
    size_t n_facts, n_chunks, cap_chunks;
    run *runs;
    size_t n_runs, cap_runs;

    root_rec *roots;
    size_t n_roots, cap_roots;

    /* Class objects whose tag in this environment is an object tag (the
     * class has its class ID in the class environment): tags to look up
     * after the walk, and what they turned out to be. */
    jlong *candidates;
    size_t n_candidates, cap_candidates;
    tagmap alias;       /* object tag -> index into alias_to */
    jlong *alias_to;
    tagmap dropped;     /* tags of objects left out of the dump */

    arena mem;          /* primitive array copies, then the snapshot's arrays */
    long orphans;       /* objects whose class has no ID */
    bool wide_refs;     /* references take 8 bytes (no compressed oops) */
    bool failed;
} walk;

#define KIND_NONE (-1)   /* not dumped: its class has no class ID */

static inline fact *fact_at(const walk *w, size_t i) { return &w->chunks[i >> FACT_CHUNK_BITS][i & (FACT_CHUNK - 1)]; }

bool heapstore_grow(void **array, size_t *cap, size_t need, size_t elem);
void heapstore_add_fact(walk *w, int32_t owner, int kind, jint type, jint index, seam_heap_bits v);
seam_heap_bits heapstore_ref_bits(jlong tag);
/* Bytes of one value of a JVMPI primitive type; 0 for other types. */
size_t heapstore_type_size(jint type);
void heapstore_set_kind(walk *w, obj_rec *r);
/* A new record; its index goes into *slot (the index's entry for tag). */
int32_t heapstore_add_rec_at(walk *w, tagslot *slot, jlong tag, jlong class_tag, jlong size, jint length);
int32_t heapstore_add_rec(walk *w, jlong tag, jlong class_tag, jlong size, jint length);
void heapstore_add_candidate(walk *w, jlong tag);
int32_t heapstore_owner_of(walk *w, jlong tag);
/* Frees the walk's own tables; its arena (w->mem) stays. */
void heapstore_walk_free(walk *w);

#endif
