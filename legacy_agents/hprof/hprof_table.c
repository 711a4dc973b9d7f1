/*
 * hprof_table.c - the two hash tables everything else is kept in.
 *
 * hprof_map: 64-bit keys (object, class and method IDs, JNIEnv pointers) to
 * 64-bit values, open addressing with linear probing.  Deleting shifts the
 * following entries back instead of leaving tombstones, so a table that
 * sees millions of allocations and frees does not fill up with dead slots,
 * and deleting never allocates (OBJECT_FREE may not call malloc).
 *
 * hprof_bmap: byte-string keys (traces, sites, strings) to pointers, chained.
 */
#include <stdlib.h>
#include <string.h>

#include "hprof.h"

char *hprof_strdup(const char *s)
{
    if (s == NULL) {
        return NULL;
    }
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d == NULL) {
        hprof_error("out of memory");
        abort();
    }
    memcpy(d, s, n);
    return d;
}

void *hprof_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL) {
        hprof_error("out of memory (%zu x %zu bytes)", n, size);
        abort();
    }
    return p;
}

static size_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return (size_t)k;
}

void hprof_map_init(hprof_map *m, size_t cap)
{
    size_t c = 16;
    while (c < cap) {
        c *= 2;
    }
    m->keys = hprof_calloc(c, sizeof *m->keys);
    m->vals = hprof_calloc(c, sizeof *m->vals);
    m->cap = c;
    m->count = 0;
}

int hprof_map_get(const hprof_map *m, uint64_t key, uint64_t *val)
{
    size_t mask = m->cap - 1;
    for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == key) {
            if (val != NULL) {
                *val = m->vals[i];
            }
            return 1;
        }
        if (m->keys[i] == 0) {
            return 0;
        }
    }
}

static int grow(hprof_map *m)
{
    hprof_map bigger;
    size_t c = m->cap * 2;
    bigger.keys = calloc(c, sizeof *bigger.keys);
    bigger.vals = calloc(c, sizeof *bigger.vals);
    if (bigger.keys == NULL || bigger.vals == NULL) {
        free(bigger.keys);
        free(bigger.vals);
        return -1;
    }
    bigger.cap = c;
    bigger.count = 0;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->keys[i] != 0) {
            hprof_map_put(&bigger, m->keys[i], m->vals[i]);
        }
    }
    free(m->keys);
    free(m->vals);
    *m = bigger;
    return 0;
}

int hprof_map_put(hprof_map *m, uint64_t key, uint64_t val)
{
    if ((m->count + 1) * 4 > m->cap * 3 && grow(m) != 0) {
        return -1;
    }
    size_t mask = m->cap - 1;
    for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == key) {
            m->vals[i] = val;
            return 0;
        }
        if (m->keys[i] == 0) {
            m->keys[i] = key;
            m->vals[i] = val;
            m->count++;
            return 0;
        }
    }
}

int hprof_map_remove(hprof_map *m, uint64_t key, uint64_t *val)
{
    size_t mask = m->cap - 1;
    size_t i = mix(key) & mask;
    for (;; i = (i + 1) & mask) {
        if (m->keys[i] == 0) {
            return 0;
        }
        if (m->keys[i] == key) {
            break;
        }
    }
    if (val != NULL) {
        *val = m->vals[i];
    }
    /* Back-shift: move later entries of the run into the hole when their
     * home slot does not lie (cyclically) between the hole and them. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->keys[j] != 0; j = (j + 1) & mask) {
        size_t home = mix(m->keys[j]) & mask;
        int stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!stays) {
            m->keys[hole] = m->keys[j];
            m->vals[hole] = m->vals[j];
            hole = j;
        }
    }
    m->keys[hole] = 0;
    m->vals[hole] = 0;
    m->count--;
    return 1;
}

void hprof_map_each(const hprof_map *m, void (*f)(uint64_t key, uint64_t val, void *arg), void *arg)
{
    for (size_t i = 0; i < m->cap; i++) {
        if (m->keys[i] != 0) {
            f(m->keys[i], m->vals[i], arg);
        }
    }
}

/* ---- byte-string keys --------------------------------------------------- */

/* Keys are traces (a thread and up to `depth` frames) looked up at every
 * method exit under cpu=times: hashed a word at a time, each word mixed in
 * by a multiply and a shift, the few bytes left one by one. */
static uint32_t hash_bytes(const void *key, size_t len)
{
    const unsigned char *p = key;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    for (; i < len; i++) {
        h = (h ^ p[i]) * 0xc4ceb9fe1a85ec53ull;
    }
    h ^= h >> 29;
    return (uint32_t)(h ^ (h >> 32));
}

void hprof_bmap_init(hprof_bmap *m, size_t nbuckets)
{
    m->buckets = hprof_calloc(nbuckets, sizeof *m->buckets);
    m->nbuckets = nbuckets;
    m->count = 0;
}

void *hprof_bmap_get(const hprof_bmap *m, const void *key, size_t len)
{
    uint32_t h = hash_bytes(key, len);
    for (hprof_bentry *e = m->buckets[h % m->nbuckets]; e != NULL; e = e->next) {
        if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0) {
            return e->val;
        }
    }
    return NULL;
}

static void rehash(hprof_bmap *m)
{
    size_t n = m->nbuckets * 4 + 1;
    hprof_bentry **b = calloc(n, sizeof *b);
    if (b == NULL) {
        return; /* longer chains, still correct */
    }
    for (size_t i = 0; i < m->nbuckets; i++) {
        hprof_bentry *e = m->buckets[i];
        while (e != NULL) {
            hprof_bentry *next = e->next;
            e->next = b[e->hash % n];
            b[e->hash % n] = e;
            e = next;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = n;
}

int hprof_bmap_put(hprof_bmap *m, const void *key, size_t len, void *val)
{
    if (m->count > m->nbuckets * 2) {
        rehash(m);
    }
    hprof_bentry *e = malloc(sizeof *e + len);
    if (e == NULL) {
        return -1;
    }
    e->hash = hash_bytes(key, len);
    e->len = len;
    e->val = val;
    memcpy(e->key, key, len);
    e->next = m->buckets[e->hash % m->nbuckets];
    m->buckets[e->hash % m->nbuckets] = e;
    m->count++;
    return 0;
}
