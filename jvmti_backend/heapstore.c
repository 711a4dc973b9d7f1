/*
 * heapstore.c - the records of a heap walk: the arena, the tag -> index
 * map, and adding objects, facts and Class objects to look up.
 *
 * Separate from heapwalk.c so that the walk's callbacks read as what they
 * do with a reference, and the data structures as data structures; the
 * snapshot building (heapsnap.c) reads the same records.
 */
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "heapstore.h"

#define ARENA_CHUNK ((size_t)1 << 20)

/* ---- an arena for the snapshot's arrays ------------------------------------ */

void *heapstore_arena_alloc(arena *a, size_t n)
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

void *heapstore_arena_calloc(arena *a, size_t count, size_t size)
{
    if (count != 0 && size > SIZE_MAX / count) {
        return NULL;
    }
    void *p = heapstore_arena_alloc(a, count * size);
    if (p != NULL) {
        memset(p, 0, count * size);
    }
    return p;
}

void heapstore_arena_free(arena *a)
{
    for (arena_chunk *c = a->head, *next; c != NULL; c = next) {
        next = c->next;
        free(c);
    }
    a->head = NULL;
}

/* ---- tag -> index ------------------------------------------------------------ */

static size_t tag_hash(jlong tag, size_t cap)
{
    uint64_t x = (uint64_t)tag;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & (cap - 1);
}

int32_t heapstore_tagmap_get(const tagmap *m, jlong tag)
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
tagslot *heapstore_tagmap_slot(tagmap *m, jlong tag)
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

bool heapstore_tagmap_put(tagmap *m, jlong tag, int32_t val)
{
    tagslot *slot = heapstore_tagmap_slot(m, tag);
    if (slot == NULL) {
        return false;
    }
    slot->val = val;
    return true;
}

void heapstore_tagmap_free(tagmap *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

/* ---- what the walk records ---------------------------------------------------- */

size_t heapstore_type_size(jint type)
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

bool heapstore_grow(void **array, size_t *cap, size_t need, size_t elem)
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

void heapstore_add_fact(walk *w, int32_t owner, int kind, jint type, jint index, seam_heap_bits v)
{
    if ((w->n_facts >> FACT_CHUNK_BITS) == w->n_chunks) {
        fact *chunk = malloc(FACT_CHUNK * sizeof *chunk);
        if (chunk == NULL || !heapstore_grow((void **)&w->chunks, &w->cap_chunks, w->n_chunks + 1, sizeof *w->chunks)) {
            free(chunk);
            w->failed = true;
            return;
        }
        w->chunks[w->n_chunks++] = chunk;
    }
    if (w->n_runs == 0 || w->runs[w->n_runs - 1].owner != owner) {
        if (!heapstore_grow((void **)&w->runs, &w->cap_runs, w->n_runs + 1, sizeof *w->runs)) {
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

seam_heap_bits heapstore_ref_bits(jlong tag)
{
    seam_heap_bits v;
    memset(&v, 0, sizeof v);
    v.id = seam_id_from_tag(tag);
    return v;
}

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

void heapstore_set_kind(walk *w, obj_rec *r)
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
int32_t heapstore_add_rec_at(walk *w, tagslot *slot, jlong tag, jlong class_tag, jlong size, jint length)
{
    obj_rec r;
    memset(&r, 0, sizeof r);
    r.tag = tag;
    r.class_tag = class_tag;
    r.size = size;
    r.length = length;
    heapstore_set_kind(w, &r);
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

int32_t heapstore_add_rec(walk *w, jlong tag, jlong class_tag, jlong size, jint length)
{
    tagslot *slot = heapstore_tagmap_slot(&w->index, tag);
    if (slot == NULL) {
        w->failed = true;
        return -1;
    }
    return heapstore_add_rec_at(w, slot, tag, class_tag, size, length);
}

void heapstore_add_candidate(walk *w, jlong tag)
{
    if (!heapstore_grow((void **)&w->candidates, &w->cap_candidates, w->n_candidates + 1, sizeof *w->candidates)) {
        w->failed = true;
        return;
    }
    w->candidates[w->n_candidates++] = tag;
}

int32_t heapstore_owner_of(walk *w, jlong tag)
{
    if (tag == 0) {
        return -1;
    }
    if (tag != w->last_tag) {
        w->last_tag = tag;
        w->last_owner = w->single ? (tag == w->only_tag ? 0 : -1) : heapstore_tagmap_get(&w->index, tag);
    }
    return w->last_owner;
}

void heapstore_walk_free(walk *w)
{
    free(w->recs);
    heapstore_tagmap_free(&w->index);
    for (size_t c = 0; c < w->n_chunks; c++) {
        free(w->chunks[c]);
    }
    free(w->chunks);
    free(w->runs);
    free(w->roots);
    free(w->candidates);
    free(w->alias_to);
    heapstore_tagmap_free(&w->alias);
    heapstore_tagmap_free(&w->dropped);
    heapstore_tagmap_free(&w->unbuilt);
    free(w->vt_makers);
    w->vt_makers = NULL;
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
