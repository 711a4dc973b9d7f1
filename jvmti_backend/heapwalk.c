/*
 * heapwalk.c - the heap snapshots behind HEAP_DUMP and OBJECT_DUMP.
 *
 * One FollowReferences walk, which the VM runs in one safepoint: every
 * object, reference, primitive field and array content comes from the same
 * instant, so the dump is consistent in itself.  The callbacks may not call
 * JNI or JVM TI, so they only record what they see (tags, JVM TI field
 * indexes, values) and tag the objects that have no ID yet through tag_ptr;
 * everything that needs the VM (class handles, field tables, superclasses)
 * is looked up after the walk.  Classes do not change under the walk's
 * results: what is read afterwards is what a class is, not what it holds.
 *
 * What the snapshot does not get is the threads' stacks at that same
 * instant: the JVMPI side takes the call traces just before the walk, and
 * a thread that ran in between may have other frames.  Suspending every
 * thread around both would make them agree, but a thread suspended while
 * inside the layer (holding one of its locks, or the agent's, in a
 * callback) would block the dumping thread for good; roots carry the
 * method of their frame so the JVMPI side can tell a trace that moved.
 */
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

/* A class ID: a class tag, but not the placeholder of a class that is not
 * linked yet (heap.c), whose class has no ID and whose objects are left out. */
static inline bool is_class_id(int64_t tag) { return ids_is_class(tag) && !ids_is_pending_class(tag); }

#define ACC_STATIC 0x0008
#define ACC_INTERFACE 0x0200
#define FACT_CHUNK_BITS 16
#define FACT_CHUNK ((size_t)1 << FACT_CHUNK_BITS)
#define ARENA_CHUNK ((size_t)1 << 20)
/* A walk meets objects of classes loaded after the classes were defined;
 * they are defined and the walk made again, this many times at most. */
#define MAX_WALKS 3
/* A class's chain of superclasses is never longer. */
#define MAX_CHAIN 1024
/* Object layout for classes no instance of which is in the heap. */
#define OBJECT_HEADER 12
#define OBJECT_ALIGN 8

/* ---- an arena for the snapshot's arrays ------------------------------------ */

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    max_align_t data[];
} arena_chunk;

typedef struct {
    arena_chunk *head;
} arena;

static void *arena_alloc(arena *a, size_t n)
{
    n = (n + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
    if (n == 0) {
        n = alignof(max_align_t);
    }
    if (a->head == NULL || a->head->used + n > a->head->cap) {
        size_t cap = n > ARENA_CHUNK / 4 ? n : ARENA_CHUNK;
        arena_chunk *c = malloc(sizeof *c + cap);
        if (c == NULL) {
            return NULL;
        }
        c->used = 0;
        c->cap = cap;
        if (cap == n && a->head != NULL) {
            /* A big block of its own: the current chunk keeps its free space. */
            c->next = a->head->next;
            a->head->next = c;
            c->used = n;
            return c->data;
        }
        c->next = a->head;
        a->head = c;
    }
    void *p = (unsigned char *)a->head->data + a->head->used;
    a->head->used += n;
    return p;
}

static void *arena_calloc(arena *a, size_t count, size_t size)
{
    if (count != 0 && size > SIZE_MAX / count) {
        return NULL;
    }
    void *p = arena_alloc(a, count * size);
    if (p != NULL) {
        memset(p, 0, count * size);
    }
    return p;
}

static void arena_free(arena *a)
{
    for (arena_chunk *c = a->head, *next; c != NULL; c = next) {
        next = c->next;
        free(c);
    }
    a->head = NULL;
}

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

static size_t tag_hash(jlong tag, size_t cap)
{
    uint64_t x = (uint64_t)tag;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & (cap - 1);
}

static int32_t tagmap_get(const tagmap *m, jlong tag)
{
    if (m->cap == 0 || tag == 0) {
        return -1;
    }
    for (size_t i = tag_hash(tag, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->slots[i].key == tag) {
            return m->slots[i].val;
        }
        if (m->slots[i].key == 0) {
            return -1;
        }
    }
}

static bool tagmap_grow(tagmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024;
    tagslot *slots = calloc(cap, sizeof *slots);
    if (slots == NULL) {
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].key != 0) {
            size_t j = tag_hash(m->slots[i].key, cap);
            while (slots[j].key != 0) {
                j = (j + 1) & (cap - 1);
            }
            slots[j] = m->slots[i];
        }
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return true;
}

/* The slot of tag, made (value -1) if it is not there; NULL out of memory. */
static tagslot *tagmap_slot(tagmap *m, jlong tag)
{
    if ((m->count + 1) * 2 > m->cap && !tagmap_grow(m)) {
        return NULL;
    }
    size_t i = tag_hash(tag, m->cap);
    while (m->slots[i].key != 0 && m->slots[i].key != tag) {
        i = (i + 1) & (m->cap - 1);
    }
    if (m->slots[i].key == 0) {
        m->slots[i].key = tag;
        m->slots[i].val = -1;
        m->count++;
    }
    return &m->slots[i];
}

static bool tagmap_put(tagmap *m, jlong tag, int32_t val)
{
    tagslot *slot = tagmap_slot(m, tag);
    if (slot == NULL) {
        return false;
    }
    slot->val = val;
    return true;
}

static void tagmap_free(tagmap *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

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
enum { F_FIELD, F_STATIC, F_ELEMENT, F_LOADER, F_SIGNERS, F_DOMAIN, F_INTERFACE, F_CONSTANT };

typedef struct {
    int32_t owner;      /* index of the referrer's obj_rec */
    uint8_t kind;
    uint8_t type;       /* JVMPI_CLASS for references (v.id holds the tag) */
    int32_t index;      /* JVM TI field index, array index, constant pool index */
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

static bool grow(void **array, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) {
        return true;
    }
    size_t cap2 = *cap ? *cap * 2 : 256;
    while (cap2 < need) {
        cap2 *= 2;
    }
    void *p = realloc(*array, cap2 * elem);
    if (p == NULL) {
        return false;
    }
    *array = p;
    *cap = cap2;
    return true;
}

static fact *fact_at(const walk *w, size_t i) { return &w->chunks[i >> FACT_CHUNK_BITS][i & (FACT_CHUNK - 1)]; }

static void add_fact(walk *w, int32_t owner, int kind, jint type, jint index, seam_heap_bits v)
{
    if ((w->n_facts >> FACT_CHUNK_BITS) == w->n_chunks) {
        fact *chunk = malloc(FACT_CHUNK * sizeof *chunk);
        if (chunk == NULL || !grow((void **)&w->chunks, &w->cap_chunks, w->n_chunks + 1, sizeof *w->chunks)) {
            free(chunk);
            w->failed = true;
            return;
        }
        w->chunks[w->n_chunks++] = chunk;
    }
    if (w->n_runs == 0 || w->runs[w->n_runs - 1].owner != owner) {
        if (!grow((void **)&w->runs, &w->cap_runs, w->n_runs + 1, sizeof *w->runs)) {
            w->failed = true;
            return;
        }
        w->runs[w->n_runs++] = (run){owner, 0, w->n_facts};
    }
    fact *f = fact_at(w, w->n_facts++);
    f->owner = owner;
    f->kind = (uint8_t)kind;
    f->type = (uint8_t)type;
    f->index = index;
    f->v = v;
    w->runs[w->n_runs - 1].count++;
}

static seam_heap_bits ref_bits(jlong tag)
{
    seam_heap_bits v;
    memset(&v, 0, sizeof v);
    v.id = seam_id_from_tag(tag);
    return v;
}

#define KIND_NONE (-1)   /* not dumped: its class has no class ID */

/* What a record is, from its tag and its class's tag. */
static int8_t rec_kind(const obj_rec *r, jlong class_class_tag)
{
    if (is_class_id(r->tag)) {
        return SEAM_HEAP_CLASS;
    }
    if (r->class_tag == 0 || !is_class_id(r->class_tag)) {
        return KIND_NONE;
    }
    jint type = ids_array_type(r->class_tag);
    if (r->length < 0 || r->class_tag == class_class_tag) {
        return type == JVMPI_NORMAL_OBJECT ? SEAM_HEAP_INSTANCE : KIND_NONE;
    }
    if (type == JVMPI_NORMAL_OBJECT) {
        return KIND_NONE; /* an array whose class is not tagged as an array class */
    }
    return type == JVMPI_CLASS ? SEAM_HEAP_OBJ_ARRAY : SEAM_HEAP_PRIM_ARRAY;
}

static void set_kind(walk *w, obj_rec *r)
{
    r->kind = rec_kind(r, w->class_class_tag);
    r->elem_type = 0;
    if (r->kind == SEAM_HEAP_PRIM_ARRAY) {
        r->elem_type = (int8_t)ids_array_type(r->class_tag);
    } else if (r->kind == SEAM_HEAP_OBJ_ARRAY && r->length >= 2 && r->size >= 16 + 8 * (jlong)r->length) {
        w->wide_refs = true;
    }
}

/* A new record; its index goes into *slot (the index's entry for tag). */
static int32_t add_rec_at(walk *w, tagslot *slot, jlong tag, jlong class_tag, jlong size, jint length)
{
    obj_rec r;
    memset(&r, 0, sizeof r);
    r.tag = tag;
    r.class_tag = class_tag;
    r.size = size;
    r.length = length;
    set_kind(w, &r);
    if (w->n_recs == w->cap_recs) {
        int32_t cap = w->cap_recs ? w->cap_recs * 2 : 4096;
        obj_rec *grown = realloc(w->recs, (size_t)cap * sizeof *grown);
        if (grown == NULL) {
            w->failed = true;
            return -1;
        }
        w->recs = grown;
        w->cap_recs = cap;
    }
    slot->val = w->n_recs;
    w->recs[w->n_recs] = r;
    return w->n_recs++;
}

static int32_t add_rec(walk *w, jlong tag, jlong class_tag, jlong size, jint length)
{
    tagslot *slot = tagmap_slot(&w->index, tag);
    if (slot == NULL) {
        w->failed = true;
        return -1;
    }
    return add_rec_at(w, slot, tag, class_tag, size, length);
}

static void add_candidate(walk *w, jlong tag)
{
    if (!grow((void **)&w->candidates, &w->cap_candidates, w->n_candidates + 1, sizeof *w->candidates)) {
        w->failed = true;
        return;
    }
    w->candidates[w->n_candidates++] = tag;
}

static int32_t owner_of(walk *w, jlong tag)
{
    if (tag == 0) {
        return -1;
    }
    if (tag != w->last_tag) {
        w->last_tag = tag;
        w->last_owner = w->single ? (tag == w->only_tag ? 0 : -1) : tagmap_get(&w->index, tag);
    }
    return w->last_owner;
}

/* The referree's ID, giving it one if it has none; 0 for objects that get
 * none: Class objects without a class ID (the primitive types', classes not
 * yet linked) and objects of classes without a tag. */
static jlong name_object(walk *w, jlong class_tag, jlong size, jlong *tag_ptr, jint length)
{
    jlong tag = *tag_ptr;
    bool class_object = class_tag != 0 && class_tag == w->class_class_tag;
    if (tag == 0) {
        if (class_object) {
            return 0;
        }
        if (class_tag == 0) {
            w->orphans++;
            return 0;
        }
        tag = ids_next_unannounced_object(size);
        *tag_ptr = tag;
    }
    if (ids_is_pending_class(tag)) {
        /* The Class object of a class not linked yet: no ID, left out. */
        if (!tagmap_put(&w->dropped, tag, 0)) {
            w->failed = true;
        }
        return 0;
    }
    if (!is_class_id(tag) && class_tag == 0) {
        w->orphans++;
        if (!tagmap_put(&w->dropped, tag, 0)) {
            w->failed = true;
        }
        return tag; /* its ID, but nothing to dump it with */
    }
    /* A Class object under an object tag, or an object whose class is one:
     * the class environment may know its class ID. */
    bool odd = !is_class_id(tag) && (class_object || !is_class_id(class_tag));
    if (w->single) {
        if (odd && class_object) {
            add_candidate(w, tag);
        }
    } else {
        tagslot *slot = tagmap_slot(&w->index, tag);
        if (slot == NULL) {
            w->failed = true;
        } else if (slot->val < 0 && add_rec_at(w, slot, tag, class_tag, size, length) >= 0 && odd) {
            add_candidate(w, class_object ? tag : class_tag);
        }
    }
    return tag;
}

/* SYSTEM_CLASS roots include what the boot loader's data holds besides
 * classes (module objects, constant pool caches): sticky classes are
 * classes only. */
static jint root_kind(jvmtiHeapReferenceKind kind, jlong tag)
{
    switch (kind) {
    case JVMTI_HEAP_REFERENCE_JNI_GLOBAL: return JVMPI_GC_ROOT_JNI_GLOBAL;
    case JVMTI_HEAP_REFERENCE_JNI_LOCAL: return JVMPI_GC_ROOT_JNI_LOCAL;
    case JVMTI_HEAP_REFERENCE_STACK_LOCAL: return JVMPI_GC_ROOT_JAVA_FRAME;
    case JVMTI_HEAP_REFERENCE_SYSTEM_CLASS: return is_class_id(tag) ? JVMPI_GC_ROOT_STICKY_CLASS : JVMPI_GC_ROOT_UNKNOWN;
    case JVMTI_HEAP_REFERENCE_THREAD: return JVMPI_GC_ROOT_THREAD_BLOCK;
    case JVMTI_HEAP_REFERENCE_MONITOR: return JVMPI_GC_ROOT_MONITOR_USED;
    default: return JVMPI_GC_ROOT_UNKNOWN;
    }
}

static void add_root(walk *w, jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info, jlong tag)
{
    if (!grow((void **)&w->roots, &w->cap_roots, w->n_roots + 1, sizeof *w->roots)) {
        w->failed = true;
        return;
    }
    root_rec *r = &w->roots[w->n_roots++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->tag = tag;
    r->depth = -1;
    if (kind == JVMTI_HEAP_REFERENCE_STACK_LOCAL && info != NULL) {
        r->thread_tag = info->stack_local.thread_tag;
        r->depth = info->stack_local.depth;
        r->method = info->stack_local.method;
    } else if (kind == JVMTI_HEAP_REFERENCE_JNI_LOCAL && info != NULL) {
        r->thread_tag = info->jni_local.thread_tag;
        r->depth = info->jni_local.depth;
        r->method = info->jni_local.method;
    } else if (kind == JVMTI_HEAP_REFERENCE_THREAD) {
        r->thread_tag = tag;
    }
}

/* ---- the callbacks: memory only, no JNI, no JVM TI ------------------------------ */

static jint JNICALL on_reference(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info, jlong class_tag,
                                 jlong referrer_class_tag, jlong size, jlong *tag_ptr, jlong *referrer_tag_ptr,
                                 jint length, void *user_data)
{
    walk *w = user_data;
    if (w->failed) {
        return JVMTI_VISIT_ABORT;
    }
    /* OBJECT_DUMP: the object's references are named, not followed. */
    jint follow = w->single ? 0 : JVMTI_VISIT_OBJECTS;
    jlong tag = name_object(w, class_tag, size, tag_ptr, length);
    if (w->detail == SEAM_HEAP_IDS) {
        return follow;
    }
    if (referrer_tag_ptr == NULL) {
        if (tag != 0) {
            add_root(w, kind, info, tag);
        }
        return follow;
    }
    int32_t owner = owner_of(w, *referrer_tag_ptr);
    if (owner < 0) {
        return follow;
    }
    seam_heap_bits v = ref_bits(tag);
    switch (kind) {
    case JVMTI_HEAP_REFERENCE_FIELD:
        add_fact(w, owner, F_FIELD, JVMPI_CLASS, info->field.index, v);
        break;
    case JVMTI_HEAP_REFERENCE_STATIC_FIELD:
        add_fact(w, owner, F_STATIC, JVMPI_CLASS, info->field.index, v);
        break;
    case JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT:
        add_fact(w, owner, F_ELEMENT, JVMPI_CLASS, info->array.index, v);
        break;
    case JVMTI_HEAP_REFERENCE_CONSTANT_POOL:
        if (tag != 0) {
            add_fact(w, owner, F_CONSTANT, JVMPI_CLASS, info->constant_pool.index, v);
        }
        break;
    case JVMTI_HEAP_REFERENCE_CLASS_LOADER:
        add_fact(w, owner, F_LOADER, JVMPI_CLASS, 0, v);
        break;
    case JVMTI_HEAP_REFERENCE_SIGNERS:
        add_fact(w, owner, F_SIGNERS, JVMPI_CLASS, 0, v);
        break;
    case JVMTI_HEAP_REFERENCE_PROTECTION_DOMAIN:
        add_fact(w, owner, F_DOMAIN, JVMPI_CLASS, 0, v);
        break;
    case JVMTI_HEAP_REFERENCE_INTERFACE:
        add_fact(w, owner, F_INTERFACE, JVMPI_CLASS, 0, v);
        break;
    default:
        /* CLASS: the object's class is in its record; SUPERCLASS: read
         * after the walk, JVM TI leaves out java.lang.Object. */
        break;
    }
    return w->failed ? JVMTI_VISIT_ABORT : follow;
}

static jint jvmpi_type(jvmtiPrimitiveType t)
{
    switch (t) {
    case JVMTI_PRIMITIVE_TYPE_BOOLEAN: return JVMPI_BOOLEAN;
    case JVMTI_PRIMITIVE_TYPE_BYTE: return JVMPI_BYTE;
    case JVMTI_PRIMITIVE_TYPE_CHAR: return JVMPI_CHAR;
    case JVMTI_PRIMITIVE_TYPE_SHORT: return JVMPI_SHORT;
    case JVMTI_PRIMITIVE_TYPE_INT: return JVMPI_INT;
    case JVMTI_PRIMITIVE_TYPE_LONG: return JVMPI_LONG;
    case JVMTI_PRIMITIVE_TYPE_FLOAT: return JVMPI_FLOAT;
    case JVMTI_PRIMITIVE_TYPE_DOUBLE: return JVMPI_DOUBLE;
    default: return 0;
    }
}

static size_t jvmpi_type_size(jint type)
{
    switch (type) {
    case JVMPI_BOOLEAN:
    case JVMPI_BYTE: return 1;
    case JVMPI_CHAR:
    case JVMPI_SHORT: return 2;
    case JVMPI_INT:
    case JVMPI_FLOAT: return 4;
    case JVMPI_LONG:
    case JVMPI_DOUBLE: return 8;
    default: return 0;
    }
}

static jint JNICALL on_primitive_field(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
                                       jlong object_class_tag, jlong *object_tag_ptr, jvalue value,
                                       jvmtiPrimitiveType value_type, void *user_data)
{
    walk *w = user_data;
    int32_t owner = owner_of(w, *object_tag_ptr);
    jint type = jvmpi_type(value_type);
    if (owner < 0 || type == 0) {
        return w->failed ? JVMTI_VISIT_ABORT : 0;
    }
    seam_heap_bits v;
    memset(&v, 0, sizeof v);
    switch (type) {
    case JVMPI_BOOLEAN: v.z = value.z; break;
    case JVMPI_BYTE: v.b = value.b; break;
    case JVMPI_CHAR: v.c = value.c; break;
    case JVMPI_SHORT: v.s = value.s; break;
    case JVMPI_INT: v.i = value.i; break;
    case JVMPI_LONG: v.j = value.j; break;
    case JVMPI_FLOAT: v.f = value.f; break;
    default: v.d = value.d; break;
    }
    add_fact(w, owner, kind == JVMTI_HEAP_REFERENCE_STATIC_FIELD ? F_STATIC : F_FIELD, type, info->field.index, v);
    return w->failed ? JVMTI_VISIT_ABORT : 0;
}

static jint JNICALL on_array_values(jlong class_tag, jlong size, jlong *tag_ptr, jint count,
                                    jvmtiPrimitiveType element_type, const void *elements, void *user_data)
{
    walk *w = user_data;
    int32_t owner = owner_of(w, *tag_ptr);
    jint type = jvmpi_type(element_type);
    if (owner < 0 || type == 0 || count <= 0) {
        return 0;
    }
    size_t bytes = (size_t)count * jvmpi_type_size(type);
    void *copy = arena_alloc(&w->mem, bytes);
    if (copy == NULL) {
        w->failed = true;
        return JVMTI_VISIT_ABORT;
    }
    memcpy(copy, elements, bytes);
    w->recs[owner].values = copy;
    w->recs[owner].length = count;
    return 0;
}

/* ---- after the walk: classes, as the VM describes them ----------------------------- */

typedef struct {
    bool is_static, valid;
    char type;          /* first character of the signature */
    int32_t slot;       /* index in CLASS_LOAD statics / instances */
} own_field;

typedef struct {
    jlong decl;
    int32_t slot;
    bool is_static;
} field_key;

typedef struct {
    jlong tag;
    jclass cls;         /* local reference, NULL when not loaded */
    jlong super_tag;
    jlong element_tag;  /* arrays of references: the element class */
    bool resolved;      /* super_tag, element_tag, is_interface looked up */
    bool is_interface;
    bool needed;
    jint observed_size; /* size of an instance met in the walk, -1 none */
    int32_t n_own;
    own_field *own;     /* NULL until read */
    bool own_read;
    int32_t map_base;   /* JVM TI index of map[0] */
    int32_t map_count;
    field_key *map;
    bool map_built;
} klass;

typedef struct {
    JNIEnv *env;
    walk *w;
    klass *k;
    int32_t n, cap;
    tagmap by_tag;
    jclass *loaded;     /* GetLoadedClasses' local references */
    jint n_loaded;
} klasses;

static klass *klass_of(klasses *ks, jlong tag)
{
    int32_t i = tagmap_get(&ks->by_tag, tag);
    return i >= 0 ? &ks->k[i] : NULL;
}

static klass *klass_add(klasses *ks, jlong tag, jclass cls)
{
    if (ks->n == ks->cap) {
        int32_t cap = ks->cap ? ks->cap * 2 : 1024;
        klass *grown = realloc(ks->k, (size_t)cap * sizeof *grown);
        if (grown == NULL) {
            return NULL;
        }
        ks->k = grown;
        ks->cap = cap;
    }
    if (!tagmap_put(&ks->by_tag, tag, ks->n)) {
        return NULL;
    }
    klass *k = &ks->k[ks->n++];
    memset(k, 0, sizeof *k);
    k->tag = tag;
    k->cls = cls;
    k->observed_size = -1;
    return k;
}

/* A class's ID: its tag in the class environment, which nothing else sets. */
static jlong class_tag_of(jclass cls)
{
    jlong tag = 0;
    if (cls == NULL || !JVMTI_OK(JVMTI_CALL(bk.jvmti_cls, GetTag, cls, &tag)) || !is_class_id(tag)) {
        return 0;
    }
    return tag;
}

static bool klasses_load(klasses *ks)
{
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetLoadedClasses, &ks->n_loaded, &ks->loaded))) {
        ks->n_loaded = 0;
        ks->loaded = NULL;
        return false;
    }
    for (jint i = 0; i < ks->n_loaded; i++) {
        jlong tag = class_tag_of(ks->loaded[i]);
        if (tag != 0 && klass_of(ks, tag) == NULL && klass_add(ks, tag, ks->loaded[i]) == NULL) {
            return false;
        }
    }
    return true;
}

static void klasses_free(klasses *ks)
{
    for (int32_t i = 0; i < ks->n; i++) {
        free(ks->k[i].own);
        free(ks->k[i].map);
    }
    for (jint i = 0; i < ks->n_loaded; i++) {
        (*ks->env)->DeleteLocalRef(ks->env, ks->loaded[i]);
    }
    bk_deallocate(ks->loaded);
    free(ks->k);
    tagmap_free(&ks->by_tag);
}

/* Superclass and kind; pointers into ks->k may move, so callers re-find. */
static void klass_resolve(klasses *ks, jlong tag)
{
    klass *k = klass_of(ks, tag);
    if (k == NULL || k->resolved) {
        return;
    }
    k->resolved = true;
    if (k->cls == NULL) {
        return;
    }
    JNIEnv *env = ks->env;
    jint mods = 0;
    if (JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassModifiers, k->cls, &mods))) {
        k->is_interface = (mods & ACC_INTERFACE) != 0;
    }
    jclass super = (*env)->GetSuperclass(env, k->cls);
    if (super != NULL) {
        k->super_tag = class_tag_of(super);
        (*env)->DeleteLocalRef(env, super);
    }
    if (ids_array_type(tag) == JVMPI_CLASS) {
        jclass element = bk_array_element_class(env, k->cls);
        if (element != NULL) {
            jlong et = seam_tag_from_id(bk_class_id(env, element));
            (*env)->DeleteLocalRef(env, element);
            klass_of(ks, tag)->element_tag = et;
        }
    }
}

/* The class's own fields in GetClassFields order, numbered the way
 * classinfo.c numbers them for CLASS_LOAD (statics and instances apart). */
static void klass_read_fields(klass *k)
{
    if (k->own_read) {
        return;
    }
    k->own_read = true;
    jint n = 0;
    jfieldID *fields = NULL;
    if (k->cls == NULL || !JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassFields, k->cls, &n, &fields))) {
        return;
    }
    k->own = calloc((size_t)n + 1, sizeof *k->own);
    if (k->own == NULL) {
        bk_deallocate(fields);
        return;
    }
    k->n_own = n;
    int32_t statics = 0, instances = 0;
    for (jint i = 0; i < n; i++) {
        char *name = NULL, *sig = NULL;
        jint mods = 0;
        own_field *f = &k->own[i];
        if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetFieldName, k->cls, fields[i], &name, &sig, NULL)) ||
            !JVMTI_OK(JVMTI_CALL(bk.jvmti, GetFieldModifiers, k->cls, fields[i], &mods))) {
            bk_deallocate(name);
            bk_deallocate(sig);
            continue; /* classinfo.c leaves it out of CLASS_LOAD too */
        }
        f->valid = true;
        f->type = sig != NULL ? sig[0] : 'L';
        f->is_static = (mods & ACC_STATIC) != 0;
        f->slot = f->is_static ? statics++ : instances++;
        bk_deallocate(name);
        bk_deallocate(sig);
    }
    bk_deallocate(fields);
}

/* Adds the interfaces of cls not yet in seen, and theirs, counting fields. */
static void count_interface_fields(JNIEnv *env, jclass cls, jclass **seen, int *n_seen, int *cap_seen,
                                   int32_t *fields)
{
    jint n = 0;
    jclass *ifaces = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetImplementedInterfaces, cls, &n, &ifaces))) {
        return;
    }
    for (jint i = 0; i < n; i++) {
        bool known = false;
        for (int s = 0; s < *n_seen && !known; s++) {
            known = (*env)->IsSameObject(env, (*seen)[s], ifaces[i]);
        }
        if (known) {
            (*env)->DeleteLocalRef(env, ifaces[i]);
            continue;
        }
        if (*n_seen == *cap_seen) {
            int cap = *cap_seen ? *cap_seen * 2 : 16;
            jclass *grown = realloc(*seen, (size_t)cap * sizeof *grown);
            if (grown == NULL) {
                (*env)->DeleteLocalRef(env, ifaces[i]);
                continue;
            }
            *seen = grown;
            *cap_seen = cap;
        }
        (*seen)[(*n_seen)++] = ifaces[i];
        jint nf = 0;
        jfieldID *f = NULL;
        if (JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassFields, ifaces[i], &nf, &f))) {
            *fields += nf;
            bk_deallocate(f);
        }
        count_interface_fields(env, ifaces[i], seen, n_seen, cap_seen, fields);
    }
    bk_deallocate(ifaces);
}

/* JVM TI's field indexes for a class (jvmtiHeapReferenceInfoField): the
 * fields of every interface the class implements, directly or through its
 * supers and superinterfaces, each interface once, come first; then all
 * fields of java.lang.Object, of each class down the chain, and of the
 * class itself, statics included, in GetClassFields order.  For an
 * interface: its superinterfaces' fields, then its own. */
static klass *klass_field_map(klasses *ks, jlong tag)
{
    klass *k = klass_of(ks, tag);
    if (k == NULL || k->map_built) {
        return k;
    }
    k->map_built = true;
    JNIEnv *env = ks->env;
    klass_resolve(ks, tag);
    k = klass_of(ks, tag);
    if (k->cls == NULL) {
        return k;
    }
    jlong chain[MAX_CHAIN];
    int depth = 0;
    if (k->is_interface) {
        chain[depth++] = tag;
    } else {
        for (jlong t = tag; t != 0 && depth < MAX_CHAIN; depth++) {
            chain[depth] = t;
            klass_resolve(ks, t);
            klass *c = klass_of(ks, t);
            t = c != NULL ? c->super_tag : 0;
        }
    }
    if ((*env)->PushLocalFrame(env, 64) != 0) {
        (*env)->ExceptionClear(env);
        return klass_of(ks, tag);
    }
    jclass *seen = NULL;
    int n_seen = 0, cap_seen = 0;
    int32_t base = 0, total = 0;
    for (int d = 0; d < depth; d++) {
        klass *c = klass_of(ks, chain[d]);
        if (c != NULL && c->cls != NULL) {
            count_interface_fields(env, c->cls, &seen, &n_seen, &cap_seen, &base);
            klass_read_fields(c);
            total += c->n_own;
        }
    }
    free(seen);
    (*env)->PopLocalFrame(env, NULL);
    k = klass_of(ks, tag);
    field_key *map = calloc((size_t)total + 1, sizeof *map);
    if (map == NULL) {
        return k;
    }
    int32_t at = 0;
    for (int d = depth - 1; d >= 0; d--) {
        klass *c = klass_of(ks, chain[d]);
        for (int32_t i = 0; c != NULL && i < c->n_own && at < total; i++, at++) {
            map[at].decl = c->own[i].valid ? chain[d] : 0;
            map[at].slot = c->own[i].slot;
            map[at].is_static = c->own[i].is_static;
        }
    }
    k = klass_of(ks, tag);
    k->map = map;
    k->map_base = base;
    k->map_count = at;
    return k;
}

static const field_key *field_of(const klass *k, jint index)
{
    if (k == NULL || k->map == NULL) {
        return NULL;
    }
    int64_t i = (int64_t)index - k->map_base;
    return i >= 0 && i < k->map_count && k->map[i].decl != 0 ? &k->map[i] : NULL;
}

static jint ref_size(const walk *w) { return w->wide_refs ? 8 : 4; }

static jint type_bytes(const walk *w, char sig)
{
    switch (sig) {
    case 'Z':
    case 'B': return 1;
    case 'C':
    case 'S': return 2;
    case 'I':
    case 'F': return 4;
    case 'J':
    case 'D': return 8;
    default: return ref_size(w);
    }
}

/* Bytes of an instance when none is in the heap to measure: header and the
 * instance fields of the class and its supers, packed, rounded up. */
static jint estimate_instance_size(klasses *ks, jlong tag)
{
    jlong bytes = OBJECT_HEADER;
    int d = 0;
    for (jlong t = tag; t != 0 && d < MAX_CHAIN; d++) {
        klass_resolve(ks, t);
        klass *c = klass_of(ks, t);
        if (c == NULL) {
            break;
        }
        klass_read_fields(c);
        for (int32_t i = 0; i < c->n_own; i++) {
            if (c->own[i].valid && !c->own[i].is_static) {
                bytes += type_bytes(ks->w, c->own[i].type);
            }
        }
        t = c->super_tag;
    }
    bytes = (bytes + OBJECT_ALIGN - 1) / OBJECT_ALIGN * OBJECT_ALIGN;
    return (jint)(bytes < 2 * OBJECT_ALIGN ? 2 * OBJECT_ALIGN : bytes);
}

/* ---- the snapshot ------------------------------------------------------------ */

typedef struct {
    walk w;
} snapshot_priv;

static int by_owner(const void *a, const void *b)
{
    const run *x = a, *y = b;
    if (x->owner != y->owner) {
        return x->owner < y->owner ? -1 : 1;
    }
    return x->first < y->first ? -1 : x->first > y->first;
}

static int by_class_id(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const seam_heap_class *)a)->id;
    uintptr_t y = (uintptr_t)((const seam_heap_class *)b)->id;
    return x < y ? -1 : x > y;
}

static int by_constant_index(const void *a, const void *b)
{
    const seam_heap_constant *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* For each record, its first run in the sorted runs (-1: no facts). */
static int32_t *index_runs(walk *w)
{
    int32_t *first = malloc(((size_t)w->n_recs + 1) * sizeof *first);
    if (first == NULL) {
        return NULL;
    }
    for (int32_t i = 0; i < w->n_recs; i++) {
        first[i] = -1;
    }
    qsort(w->runs, w->n_runs, sizeof *w->runs, by_owner);
    for (size_t r = w->n_runs; r-- > 0;) {
        first[w->runs[r].owner] = (int32_t)r;
    }
    return first;
}

/* Calls visit for every fact of a record, in walk order. */
#define FOR_FACTS(w, first_run, rec, f)                                                                      \
    for (size_t r_ = (first_run)[rec] < 0 ? (w)->n_runs : (size_t)(first_run)[rec];                      \
         r_ < (w)->n_runs && (w)->runs[r_].owner == (rec); r_++)                                           \
        for (size_t i_ = 0; i_ < (w)->runs[r_].count; i_++)                                                \
            for (const fact *f = fact_at((w), (w)->runs[r_].first + i_); f != NULL; f = NULL)

static jfieldID class_name_field(JNIEnv *env)
{
    static jfieldID fid;
    static bool tried;
    if (!tried) {
        tried = true;
        jclass cc = (*env)->FindClass(env, "java/lang/Class");
        if (cc != NULL) {
            fid = (*env)->GetFieldID(env, cc, "name", "Ljava/lang/String;");
            (*env)->DeleteLocalRef(env, cc);
        }
        if ((*env)->ExceptionCheck(env)) {
            (*env)->ExceptionClear(env);
            fid = NULL;
        }
    }
    return fid;
}

/* The class-name String the VM caches in the Class object (what JVMPI's
 * class dump names), when it is set and in this dump. */
static jobjectID cached_name(klasses *ks, jclass cls)
{
    JNIEnv *env = ks->env;
    jfieldID fid = class_name_field(env);
    if (fid == NULL || cls == NULL || ks->w->single) {
        return NULL;
    }
    jobject name = (*env)->GetObjectField(env, cls, fid);
    if (name == NULL) {
        return NULL;
    }
    jlong tag = 0;
    JVMTI_CALL(bk.jvmti, GetTag, name, &tag);
    (*env)->DeleteLocalRef(env, name);
    return tag != 0 && tagmap_get(&ks->w->index, tag) >= 0 ? seam_id_from_tag(tag) : NULL;
}

/* The class tag an object tag stands for (alias), or the tag itself. */
static jlong unalias(const walk *w, jlong tag)
{
    int32_t i = tagmap_get(&w->alias, tag);
    return i >= 0 ? w->alias_to[i] : tag;
}

/* A reference as the snapshot writes it.  In a heap dump every object
 * referred to is in the dump, or the reference is null: objects left out
 * (their class has no ID) must not leave IDs that resolve to nothing. */
static jobjectID ref_id(const walk *w, jobjectID id)
{
    jlong tag = seam_tag_from_id(id);
    if (tag == 0) {
        return NULL;
    }
    tag = unalias(w, tag);
    return tagmap_get(&w->dropped, tag) >= 0 ? NULL : seam_id_from_tag(tag);
}

static seam_heap_bits ref_value(const walk *w, jint type, seam_heap_bits v)
{
    if (type == JVMPI_CLASS) {
        v.id = ref_id(w, v.id);
    }
    return v;
}

/* Fills a class entry: what the walk saw of the class object, if it is in
 * the snapshot (rec >= 0), and what the VM says of the class. */
static bool fill_class(klasses *ks, int32_t *first_run, jlong tag, int32_t rec, seam_heap_class *hc)
{
    walk *w = ks->w;
    memset(hc, 0, sizeof *hc);
    hc->id = seam_id_from_tag(tag);
    klass_resolve(ks, tag);
    klass *k = klass_of(ks, tag);
    if (k == NULL) {
        return true;
    }
    hc->super = seam_id_from_tag(k->super_tag);
    hc->element = seam_id_from_tag(k->element_tag);
    bool is_array = ids_array_type(tag) != JVMPI_NORMAL_OBJECT;
    if (k->is_interface || is_array) {
        hc->instance_size = 0;
    } else if (k->observed_size >= 0) {
        hc->instance_size = k->observed_size;
    } else {
        hc->instance_size = estimate_instance_size(ks, tag);
    }
    if (rec < 0 || w->detail == SEAM_HEAP_IDS) {
        return true;
    }
    hc->name = cached_name(ks, klass_of(ks, tag)->cls);
    jint n_ifaces = 0, n_constants = 0, n_statics = 0;
    FOR_FACTS(w, first_run, rec, f) {
        n_ifaces += f->kind == F_INTERFACE;
        n_constants += f->kind == F_CONSTANT;
        n_statics += f->kind == F_STATIC;
    }
    hc->interfaces = arena_calloc(&w->mem, (size_t)n_ifaces + 1, sizeof *hc->interfaces);
    hc->constants = arena_calloc(&w->mem, (size_t)n_constants + 1, sizeof *hc->constants);
    hc->statics = arena_calloc(&w->mem, (size_t)n_statics + 1, sizeof *hc->statics);
    if (hc->interfaces == NULL || hc->constants == NULL || hc->statics == NULL) {
        return false;
    }
    if (n_statics > 0) {
        k = klass_field_map(ks, tag);
    }
    FOR_FACTS(w, first_run, rec, f) {
        switch (f->kind) {
        case F_LOADER: hc->loader = ref_id(w, f->v.id); break;
        case F_SIGNERS: hc->signers = ref_id(w, f->v.id); break;
        case F_DOMAIN: hc->domain = ref_id(w, f->v.id); break;
        case F_INTERFACE: hc->interfaces[hc->num_interfaces++] = ref_id(w, f->v.id); break;
        case F_CONSTANT: {
            jobjectID to = ref_id(w, f->v.id);
            if (to != NULL) {
                seam_heap_constant *c = &hc->constants[hc->num_constants++];
                c->index = f->index;
                c->type = f->type;
                c->v.id = to;
            }
            break;
        }
        case F_STATIC: {
            const field_key *key = field_of(k, f->index);
            if (key == NULL || !key->is_static || key->decl != tag) {
                LOG_DEBUG("heap dump: static field index %d of class %p not found", (int)f->index, (void *)hc->id);
                break;
            }
            seam_heap_field *s = &hc->statics[hc->num_statics++];
            s->decl = hc->id;
            s->slot = key->slot;
            s->type = f->type;
            s->v = ref_value(w, f->type, f->v);
            break;
        }
        default: break;
        }
    }
    qsort(hc->constants, (size_t)hc->num_constants, sizeof *hc->constants, by_constant_index);
    return true;
}

static bool fill_object(klasses *ks, int32_t *first_run, int32_t rec, seam_heap_object *o)
{
    walk *w = ks->w;
    const obj_rec *r = &w->recs[rec];
    memset(o, 0, sizeof *o);
    o->id = seam_id_from_tag(r->tag);
    o->kind = r->kind;
    if (r->kind == SEAM_HEAP_CLASS) {
        return true;
    }
    o->class_id = seam_id_from_tag(r->class_tag);
    switch (r->kind) {
    case SEAM_HEAP_PRIM_ARRAY:
        o->count = r->length;
        o->elem_type = r->elem_type;
        o->u.values = w->detail == SEAM_HEAP_VALUES ? r->values : NULL;
        return true;
    case SEAM_HEAP_OBJ_ARRAY:
        o->count = r->length;
        if (w->detail == SEAM_HEAP_IDS) {
            return true;
        }
        o->u.elements = arena_calloc(&w->mem, (size_t)r->length + 1, sizeof *o->u.elements);
        if (o->u.elements == NULL) {
            return false;
        }
        FOR_FACTS(w, first_run, rec, f) {
            if (f->kind == F_ELEMENT && f->index >= 0 && f->index < r->length) {
                o->u.elements[f->index] = ref_id(w, f->v.id);
            }
        }
        return true;
    default:
        break;
    }
    if (w->detail == SEAM_HEAP_IDS) {
        return true;
    }
    jint n = 0;
    FOR_FACTS(w, first_run, rec, f) { n += f->kind == F_FIELD; }
    if (n == 0) {
        return true;
    }
    o->u.fields = arena_calloc(&w->mem, (size_t)n, sizeof *o->u.fields);
    if (o->u.fields == NULL) {
        return false;
    }
    const klass *k = klass_field_map(ks, r->class_tag);
    FOR_FACTS(w, first_run, rec, f) {
        if (f->kind != F_FIELD) {
            continue;
        }
        const field_key *key = field_of(k, f->index);
        if (key == NULL || key->is_static) {
            LOG_DEBUG("heap dump: field index %d of object %p not found", (int)f->index, (void *)o->id);
            continue;
        }
        seam_heap_field *d = &o->u.fields[o->count++];
        d->decl = seam_id_from_tag(key->decl);
        d->slot = key->slot;
        d->type = f->type;
        d->v = ref_value(w, f->type, f->v);
    }
    return true;
}

/* Marks a class and its superclasses as needed in the snapshot. */
static void need_class(klasses *ks, jlong tag)
{
    for (int d = 0; tag != 0 && d < MAX_CHAIN; d++) {
        klass *k = klass_of(ks, tag);
        if (k == NULL) {
            k = klass_add(ks, tag, NULL); /* no longer loaded: an entry with what is known */
            if (k == NULL) {
                return;
            }
        }
        if (k->needed) {
            return;
        }
        k->needed = true;
        klass_resolve(ks, tag);
        tag = klass_of(ks, tag)->super_tag;
    }
}

static bool build(JNIEnv *env, walk *w, seam_heap_snapshot *out)
{
    klasses ks;
    memset(&ks, 0, sizeof ks);
    ks.env = env;
    ks.w = w;
    bool ok = false;
    int32_t *first_run = index_runs(w);
    if (first_run == NULL || !klasses_load(&ks)) {
        goto done;
    }
    if (w->detail != SEAM_HEAP_IDS) {
        for (int32_t i = 0; i < w->n_recs; i++) {
            const obj_rec *r = &w->recs[i];
            if (r->kind == KIND_NONE) {
                continue;
            }
            need_class(&ks, r->kind == SEAM_HEAP_CLASS ? r->tag : r->class_tag);
            klass *k = r->kind == SEAM_HEAP_INSTANCE ? klass_of(&ks, r->class_tag) : NULL;
            if (k != NULL && k->observed_size < 0 && r->class_tag != w->class_class_tag) {
                k->observed_size = (jint)r->size;
            }
        }
    }
    int n_classes = 0;
    for (int32_t i = 0; i < ks.n; i++) {
        n_classes += ks.k[i].needed;
    }
    out->classes = arena_calloc(&w->mem, (size_t)n_classes + 1, sizeof *out->classes);
    out->objects = arena_calloc(&w->mem, (size_t)w->n_recs + 1, sizeof *out->objects);
    out->roots = arena_calloc(&w->mem, w->n_roots + 1, sizeof *out->roots);
    if (out->classes == NULL || out->objects == NULL || out->roots == NULL) {
        goto done;
    }
    for (int32_t i = 0; i < ks.n; i++) {
        if (ks.k[i].needed) {
            jlong tag = ks.k[i].tag;
            int32_t rec = w->single ? (tag == w->only_tag ? 0 : -1) : tagmap_get(&w->index, tag);
            if (!fill_class(&ks, first_run, tag, rec, &out->classes[out->num_classes++])) {
                goto done;
            }
        }
    }
    qsort(out->classes, (size_t)out->num_classes, sizeof *out->classes, by_class_id);
    for (int32_t i = 0; i < w->n_recs; i++) {
        if (w->recs[i].kind != KIND_NONE && !fill_object(&ks, first_run, i, &out->objects[out->num_objects++])) {
            goto done;
        }
    }
    for (size_t i = 0; i < w->n_roots; i++) {
        const root_rec *r = &w->roots[i];
        jobjectID id = ref_id(w, seam_id_from_tag(r->tag));
        if (id == NULL) {
            continue;
        }
        seam_heap_root *d = &out->roots[out->num_roots++];
        d->kind = root_kind(r->kind, seam_tag_from_id(id));
        d->id = id;
        d->thread = seam_id_from_tag(r->kind == JVMTI_HEAP_REFERENCE_THREAD ? seam_tag_from_id(id) : r->thread_tag);
        d->depth = r->depth;
        d->method = r->method;
        d->ref = NULL;
    }
    ok = true;
done:
    free(first_run);
    klasses_free(&ks);
    return ok;
}

/* ---- after the walk: the references behind JNI_GLOBAL roots ------------------------- */

static int by_ref_tag(const void *a, const void *b)
{
    jlong x = ((const bk_global_ref *)a)->tag, y = ((const bk_global_ref *)b)->tag;
    return x < y ? -1 : x > y;
}

/* Each JNI_GLOBAL root gets a live global reference to its object, each
 * reference used once (an object held by two references is two roots).
 * References made before VM init are not known: those roots keep NULL. */
static void name_global_refs(seam_heap_snapshot *out, bk_global_ref *refs, int n)
{
    if (refs == NULL || n == 0) {
        return;
    }
    qsort(refs, (size_t)n, sizeof *refs, by_ref_tag);
    for (jint i = 0; i < out->num_roots; i++) {
        seam_heap_root *r = &out->roots[i];
        if (r->kind != JVMPI_GC_ROOT_JNI_GLOBAL) {
            continue;
        }
        bk_global_ref key = {seam_tag_from_id(r->id), NULL};
        bk_global_ref *hit = bsearch(&key, refs, (size_t)n, sizeof *refs, by_ref_tag);
        while (hit != NULL && hit > refs && hit[-1].tag == key.tag) {
            hit--;
        }
        for (; hit != NULL && hit < refs + n && hit->tag == key.tag; hit++) {
            if (hit->ref != NULL) {
                r->ref = hit->ref;
                hit->ref = NULL;
                break;
            }
        }
    }
}

/* ---- after the walk: Class objects under object tags -------------------------------- */

/* A class's ID is its tag in the class environment; this environment's tag
 * is the same value unless something gave the Class object an object tag
 * (its allocation reported before the class had its ID, or the class not
 * being linked yet).  Such tags are looked up in the class environment;
 * what resolves is dumped under the class ID, records whose class still has
 * no ID are left out. */
static bool resolve_aliases(JNIEnv *env, walk *w)
{
    if (w->n_candidates == 0) {
        return true;
    }
    jint n = 0;
    jobject *objs = NULL;
    jlong *tags = NULL;
    if (w->n_candidates > INT32_MAX ||
        !JVMTI_OK(JVMTI_CALL(bk.jvmti, GetObjectsWithTags, (jint)w->n_candidates, w->candidates, &n, &objs, &tags))) {
        return false;
    }
    w->alias_to = calloc((size_t)n + 1, sizeof *w->alias_to);
    int32_t n_alias = 0;
    for (jint i = 0; i < n; i++) {
        jlong ct = 0;
        if (w->alias_to != NULL && tagmap_get(&w->alias, tags[i]) < 0 &&
            JVMTI_OK(JVMTI_CALL(bk.jvmti_cls, GetTag, objs[i], &ct)) && is_class_id(ct) &&
            tagmap_put(&w->alias, tags[i], n_alias)) {
            w->alias_to[n_alias++] = ct;
        }
        (*env)->DeleteLocalRef(env, objs[i]);
    }
    bk_deallocate(objs);
    bk_deallocate(tags);
    if (w->alias_to == NULL) {
        return false;
    }
    LOG_DEBUG("heap dump: %zu Class objects under object tags, %d of them with a class ID", w->n_candidates,
              (int)n_alias);
    if (w->single || n_alias == 0) {
        return true;
    }
    jlong class_class = unalias(w, w->class_class_tag);
    for (int32_t i = 0; i < w->n_recs; i++) {
        obj_rec *r = &w->recs[i];
        jlong t = unalias(w, r->tag);
        r->class_tag = unalias(w, r->class_tag);
        if (t != r->tag) {
            r->tag = t;
            if (!tagmap_put(&w->index, t, i)) {
                return false;
            }
        }
    }
    w->class_class_tag = class_class;
    for (int32_t i = 0; i < w->n_recs; i++) {
        set_kind(w, &w->recs[i]);
    }
    return true;
}

static long definable_classes(void)
{
    jint n = 0;
    jclass *classes = NULL;
    long definable = 0;
    JNIEnv *env = seam_current_env();
    if (env == NULL || !JVMTI_OK(JVMTI_CALL(bk.jvmti, GetLoadedClasses, &n, &classes))) {
        return 0;
    }
    for (jint i = 0; i < n; i++) {
        jlong tag = 0;
        jint status = 0;
        if (JVMTI_OK(JVMTI_CALL(bk.jvmti_cls, GetTag, classes[i], &tag)) && tag == 0 &&
            JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassStatus, classes[i], &status)) &&
            !(status & JVMTI_CLASS_STATUS_PRIMITIVE) &&
            (status & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PREPARED))) {
            definable++;
        }
        (*env)->DeleteLocalRef(env, classes[i]);
    }
    bk_deallocate(classes);
    return definable;
}

/* ---- taking it ------------------------------------------------------------------ */

static void walk_free(walk *w)
{
    free(w->recs);
    tagmap_free(&w->index);
    for (size_t c = 0; c < w->n_chunks; c++) {
        free(w->chunks[c]);
    }
    free(w->chunks);
    free(w->runs);
    free(w->roots);
    free(w->candidates);
    free(w->alias_to);
    tagmap_free(&w->alias);
    tagmap_free(&w->dropped);
    w->candidates = NULL;
    w->alias_to = NULL;
    w->n_candidates = w->cap_candidates = 0;
    w->recs = NULL;
    w->chunks = NULL;
    w->runs = NULL;
    w->roots = NULL;
    w->n_recs = w->cap_recs = 0;
    w->n_facts = w->n_chunks = w->cap_chunks = w->n_runs = w->cap_runs = w->n_roots = w->cap_roots = 0;
}

/* OBJECT_DUMP: the object's record, made before the walk, which names the
 * initial object in no callback but its own references. */
static bool single_record(JNIEnv *env, walk *w, jobject obj)
{
    if (is_class_id(w->only_tag)) {
        return add_rec(w, w->only_tag, w->class_class_tag, 0, -1) == 0;
    }
    jclass cls = (*env)->GetObjectClass(env, obj);
    jlong ctag = cls != NULL ? seam_tag_from_id(bk_class_id(env, cls)) : 0;
    jint length = -1;
    if (ctag != 0 && ids_array_type(ctag) != JVMPI_NORMAL_OBJECT) {
        length = (*env)->GetArrayLength(env, (jarray)obj);
    }
    jlong size = 0;
    JVMTI_CALL(bk.jvmti, GetObjectSize, obj, &size);
    if (cls != NULL) {
        (*env)->DeleteLocalRef(env, cls);
    }
    if (ctag == 0) {
        LOG_ERROR("OBJECT_DUMP: the class of object %p has no ID", (void *)seam_id_from_tag(w->only_tag));
        return false;
    }
    return add_rec(w, w->only_tag, ctag, size, length) == 0;
}

static jobject object_of_tag(JNIEnv *env, jlong tag)
{
    jint n = 0;
    jobject *found = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetObjectsWithTags, 1, &tag, &n, &found, NULL))) {
        return NULL;
    }
    jobject obj = n > 0 ? found[0] : NULL;
    for (jint i = 1; i < n; i++) {
        (*env)->DeleteLocalRef(env, found[i]);
    }
    bk_deallocate(found);
    return obj;
}

bool seam_heap_snapshot_take(JNIEnv *env, jobjectID only, seam_heap_detail detail, seam_heap_snapshot *out)
{
    memset(out, 0, sizeof *out);
    snapshot_priv *p = calloc(1, sizeof *p);
    if (p == NULL) {
        LOG_ERROR("heap dump: out of memory");
        return false;
    }
    walk *w = &p->w;
    jobject obj = NULL;
    /* JVM TI names no reference in its JNI_GLOBAL roots; the layer's JNI
     * table keeps the live ones, matched to the roots by tag below. */
    int n_grefs = 0;
    bk_global_ref *grefs = only == NULL ? bk_global_refs(env, &n_grefs) : NULL;
    if (only != NULL) {
        obj = object_of_tag(env, seam_tag_from_id(only));
        if (obj == NULL) {
            free(p);
            return false;
        }
    } else {
        seam_define_loaded_classes(env);
    }
    jvmtiHeapCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.heap_reference_callback = on_reference;
    if (detail == SEAM_HEAP_VALUES) {
        cb.primitive_field_callback = on_primitive_field;
        cb.array_primitive_value_callback = on_array_values;
    }
    bool walked = false;
    for (int attempt = 0; attempt < MAX_WALKS; attempt++) {
        walk_free(w);
        arena_free(&w->mem);
        memset(w, 0, sizeof *w);
        w->detail = detail;
        w->single = only != NULL;
        w->only_tag = seam_tag_from_id(only);
        w->class_class_tag = bk_class_class_tag();
        w->last_owner = -1;
        if (w->single && !single_record(env, w, obj)) {
            break;
        }
        if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, FollowReferences, 0, NULL, obj, &cb, w))) {
            break;
        }
        if (w->failed) {
            LOG_ERROR("heap dump: out of memory during the heap walk");
            break;
        }
        walked = true;
        /* Classes loaded since they were defined: define them, walk again.
         * Classes loaded but not linked (their objects can come from the
         * CDS archive) cannot be defined: no point walking again for them. */
        if (w->orphans == 0 || attempt + 1 == MAX_WALKS || definable_classes() == 0) {
            break;
        }
        LOG_DEBUG("heap dump: %ld objects of classes without an ID; walking again", w->orphans);
        seam_define_loaded_classes(env);
    }
    if (obj != NULL) {
        (*env)->DeleteLocalRef(env, obj);
    }
    bool resolved = walked && resolve_aliases(env, w);
    if (resolved) {
        long left_out = w->orphans;
        for (int32_t i = 0; i < w->n_recs && resolved; i++) {
            if (w->recs[i].kind == KIND_NONE) {
                left_out++;
                resolved = tagmap_put(&w->dropped, w->recs[i].tag, 0);
            }
        }
        if (left_out > 0) {
            LOG_INFO("heap dump: %ld objects left out: their classes have no ID (not linked yet)", left_out);
        }
    }
    if (!resolved || !build(env, w, out)) {
        if (walked) {
            LOG_ERROR("heap dump: out of memory building the snapshot");
        }
        walk_free(w);
        arena_free(&w->mem);
        free(p);
        free(grefs);
        memset(out, 0, sizeof *out);
        return false;
    }
    name_global_refs(out, grefs, n_grefs);
    free(grefs);
    /* What the snapshot points into (the arena) stays; the walk's own
     * tables go now. */
    walk_free(w);
    out->priv = p;
    return true;
}

void seam_heap_snapshot_free(seam_heap_snapshot *snap)
{
    snapshot_priv *p = snap->priv;
    if (p != NULL) {
        walk_free(&p->w);
        arena_free(&p->w.mem);
        free(p);
    }
    memset(snap, 0, sizeof *snap);
}
