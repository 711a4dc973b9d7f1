/*
 * idrec.c - class numbers of live object IDs (see idrec.h).
 *
 * A dense block ("chunk") is written by its thread alone while it is that
 * thread's current block, so recording an allocation takes no lock and
 * touches no shared cache line.  Everything else (opening and closing a
 * chunk, drops, lookups, the sparse table) happens under one mutex: drops
 * come from the thread that receives ObjectFree, lookups from agents'
 * requests, neither at allocation rate on many threads.
 *
 * Chunks are found by block number through a two-level table: a block's
 * chunk is two loads away, with no hash to compute or chain to follow, which
 * matters because every ObjectFree looks one up.  Block numbers only grow,
 * and a page of the table is freed once its blocks have no chunk left.  The
 * survivors of sparse blocks need a table of 8-byte entries, which uthash's
 * per-entry handle would multiply by eight, hence the small open-addressing
 * table below.
 */
#include "idrec.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tls.h"

/* A closed chunk with fewer records than this moves them to the sparse
 * table: a chunk costs about 1.1 KB, so one of at least this many records
 * costs at most about 16 bytes a record. */
#define SPARSE_BELOW 72

typedef struct chunk {
    int64_t block;
    _Atomic uint32_t recorded; /* written by the owner only */
    uint32_t freed;            /* under lock */
    bool closed;               /* under lock; set by the owner */
    _Atomic uint32_t cls[IDREC_BLOCK];
} chunk;

/* The chunk index: pages of PAGE_BLOCKS chunk pointers, by block number. */
#define PAGE_BLOCKS 4096
#define MAX_BLOCKS (((int64_t)1 << IDREC_SEQ_BITS) / IDREC_BLOCK)
typedef struct page {
    chunk *of[PAGE_BLOCKS];
    uint32_t used;
} page;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static page *pages[MAX_BLOCKS / PAGE_BLOCKS]; /* under lock */
static size_t n_chunks, n_pages;
/* Set when a record could not be kept (out of memory): a seq without a
 * record may then be live, so lookups answer IDREC_UNKNOWN, not IDREC_NONE. */
static bool lost;

static TLS_FAST chunk *mine;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t key;

/* ---- the sparse table: entry = seq << 24 | class number; 0 is empty ---- */

#define CLS_BITS 24
#define MIN_CAP 1024

static uint64_t *slots;
static size_t cap, count;

static size_t home(int64_t seq) { return (size_t)(((uint64_t)seq * 0x9E3779B97F4A7C15ull) % cap); }

static int64_t key_of(uint64_t e) { return (int64_t)(e >> CLS_BITS); }

static bool resize(size_t new_cap)
{
    uint64_t *old = slots;
    size_t old_cap = cap;
    uint64_t *fresh = calloc(new_cap, sizeof *fresh);
    if (fresh == NULL) {
        return false;
    }
    slots = fresh;
    cap = new_cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i] != 0) {
            size_t j = home(key_of(old[i]));
            while (slots[j] != 0) {
                j = j + 1 == cap ? 0 : j + 1;
            }
            slots[j] = old[i];
        }
    }
    free(old);
    return true;
}

/* Room for n more entries with the load at most 3/4 (grown by half, so a
 * grown table is half full: 8 to 16 bytes an entry). */
static bool reserve(size_t n)
{
    if ((count + n) * 4 <= cap * 3) {
        return true;
    }
    size_t want = cap < MIN_CAP ? MIN_CAP : cap;
    while ((count + n) * 4 > want * 3) {
        want += want / 2;
    }
    return resize(want);
}

/* Slot of seq, or cap when absent. */
static size_t find(int64_t seq)
{
    if (cap == 0) {
        return 0;
    }
    for (size_t i = home(seq);; i = i + 1 == cap ? 0 : i + 1) {
        if (slots[i] == 0) {
            return cap;
        }
        if (key_of(slots[i]) == seq) {
            return i;
        }
    }
}

static void sparse_insert(int64_t seq, uint32_t cls)
{
    size_t i = home(seq);
    while (slots[i] != 0) {
        i = i + 1 == cap ? 0 : i + 1;
    }
    slots[i] = ((uint64_t)seq << CLS_BITS) | cls;
    count++;
}

/* Removes slot i, shifting back the entries of its probe run. */
static void sparse_remove_at(size_t i)
{
    slots[i] = 0;
    count--;
    for (size_t j = i + 1 == cap ? 0 : i + 1; slots[j] != 0; j = j + 1 == cap ? 0 : j + 1) {
        size_t k = home(key_of(slots[j]));
        /* The entry at j may fill the hole at i unless its home lies
         * cyclically in (i, j]. */
        bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            slots[i] = slots[j];
            slots[j] = 0;
            i = j;
        }
    }
    if (cap > MIN_CAP && count * 4 < cap) {
        size_t want = count * 2 < MIN_CAP ? MIN_CAP : count * 2;
        resize(want); /* keeps the old table when out of memory */
    }
}

/* ---- the chunk index (under lock) ----------------------------------------------- */

static chunk *index_find(int64_t block)
{
    if (block < 0 || block >= MAX_BLOCKS) {
        return NULL;
    }
    const page *p = pages[block / PAGE_BLOCKS];
    return p != NULL ? p->of[block % PAGE_BLOCKS] : NULL;
}

static bool index_add(chunk *c)
{
    if (c->block < 0 || c->block >= MAX_BLOCKS) {
        return false;
    }
    page **p = &pages[c->block / PAGE_BLOCKS];
    if (*p == NULL) {
        if ((*p = calloc(1, sizeof **p)) == NULL) {
            return false;
        }
        n_pages++;
    }
    (*p)->of[c->block % PAGE_BLOCKS] = c;
    (*p)->used++;
    n_chunks++;
    return true;
}

static void index_remove(const chunk *c)
{
    page **p = &pages[c->block / PAGE_BLOCKS];
    (*p)->of[c->block % PAGE_BLOCKS] = NULL;
    n_chunks--;
    if (--(*p)->used == 0) {
        free(*p);
        *p = NULL;
        n_pages--;
    }
}

/* ---- chunks --------------------------------------------------------------------- */

static uint32_t live_in(const chunk *c) { return atomic_load_explicit(&c->recorded, memory_order_relaxed) - c->freed; }

/* Under lock: frees c, its records moved to the sparse table. */
static void migrate(chunk *c)
{
    uint32_t n = live_in(c);
    if (n > 0 && !reserve(n)) {
        return; /* stays dense */
    }
    for (int i = 0; i < IDREC_BLOCK && n > 0; i++) {
        uint32_t v = atomic_load_explicit(&c->cls[i], memory_order_relaxed);
        if (v != IDREC_NONE) {
            sparse_insert(c->block * IDREC_BLOCK + i + 1, v);
            n--;
        }
    }
    index_remove(c);
    free(c);
}

/* Under lock. */
static void close_chunk(chunk *c)
{
    c->closed = true;
    if (live_in(c) < SPARSE_BELOW) {
        migrate(c);
    }
}

static void thread_gone(void *p)
{
    pthread_mutex_lock(&lock);
    close_chunk(p);
    pthread_mutex_unlock(&lock);
}

static void make_key(void) { pthread_key_create(&key, thread_gone); }

static void open_block(int64_t block)
{
    pthread_once(&key_once, make_key);
    chunk *c = calloc(1, sizeof *c);
    {
        pthread_mutex_lock(&lock);
        if (mine != NULL) {
            close_chunk(mine);
        }
        if (c != NULL) {
            c->block = block;
            if (!index_add(c)) {
                free(c);
                c = NULL;
            }
        }
        if (c == NULL) {
            lost = true;
        }
        pthread_mutex_unlock(&lock);
    }
    mine = c;
    pthread_setspecific(key, c);
}

/* Under lock: seq's slot in its block's array, NULL when the block has
 * none (its records are in the sparse table, or it never had any); *c is
 * the block's chunk. */
static _Atomic uint32_t *dense_slot(int64_t seq, chunk **c)
{
    *c = index_find((seq - 1) / IDREC_BLOCK);
    return *c != NULL ? &(*c)->cls[(seq - 1) % IDREC_BLOCK] : NULL;
}

/* What a record holds for class number cls. */
static uint32_t storable(uint32_t cls) { return cls == IDREC_NONE || cls > IDREC_MAX_CLASS ? IDREC_UNKNOWN : cls; }

/* ---- the interface ------------------------------------------------------------------ */

void idrec_put(int64_t seq, uint32_t cls)
{
    int64_t block = (seq - 1) / IDREC_BLOCK;
    if (mine == NULL || mine->block != block) {
        open_block(block);
        if (mine == NULL) {
            return;
        }
    }
    atomic_store_explicit(&mine->cls[(seq - 1) % IDREC_BLOCK], storable(cls), memory_order_relaxed);
    atomic_store_explicit(&mine->recorded, atomic_load_explicit(&mine->recorded, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

void idrec_set(int64_t seq, uint32_t cls)
{
    cls = storable(cls);
    pthread_mutex_lock(&lock);
    chunk *c;
    _Atomic uint32_t *v = dense_slot(seq, &c);
    if (v != NULL) {
        if (atomic_load_explicit(v, memory_order_relaxed) != IDREC_NONE) {
            atomic_store_explicit(v, cls, memory_order_relaxed);
        }
    } else {
        size_t i = find(seq);
        if (i < cap) {
            slots[i] = ((uint64_t)seq << CLS_BITS) | cls;
        }
    }
    pthread_mutex_unlock(&lock);
}

/* Under lock. */
static void drop_locked(int64_t seq)
{
    chunk *c;
    _Atomic uint32_t *v = dense_slot(seq, &c);
    if (v != NULL) {
        if (atomic_load_explicit(v, memory_order_relaxed) != IDREC_NONE) {
            atomic_store_explicit(v, IDREC_NONE, memory_order_relaxed);
            c->freed++;
            if (c->closed && live_in(c) < SPARSE_BELOW) {
                migrate(c);
            }
        }
    } else {
        size_t i = find(seq);
        if (i < cap) {
            sparse_remove_at(i);
        }
    }
}

void idrec_drop(int64_t seq)
{
    pthread_mutex_lock(&lock);
    drop_locked(seq);
    pthread_mutex_unlock(&lock);
}

void idrec_drop_many(const int64_t *values, size_t n, int64_t (*seq_of)(int64_t value))
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n; i++) {
        int64_t seq = seq_of(values[i]);
        if (seq > 0) {
            drop_locked(seq);
        }
    }
    pthread_mutex_unlock(&lock);
}

uint32_t idrec_get(int64_t seq)
{
    uint32_t v;
    pthread_mutex_lock(&lock);
    chunk *c;
    _Atomic uint32_t *slot = dense_slot(seq, &c);
    if (slot != NULL) {
        v = atomic_load_explicit(slot, memory_order_relaxed);
    } else {
        size_t i = find(seq);
        v = i < cap ? (uint32_t)(slots[i] & IDREC_MAX_CLASS) : IDREC_NONE;
    }
    if (v == IDREC_NONE && lost) {
        v = IDREC_UNKNOWN;
    }
    pthread_mutex_unlock(&lock);
    return v;
}

void idrec_get_stats(idrec_stats *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
        for (int k = 0; pages[i] != NULL && k < PAGE_BLOCKS; k++) {
            out->records += pages[i]->of[k] != NULL ? live_in(pages[i]->of[k]) : 0;
        }
    }
    out->records += count;
    out->dense_blocks = n_chunks;
    /* malloc's own header (16 bytes) counted with each chunk and page */
    out->bytes = n_chunks * (sizeof(chunk) + 16) + cap * sizeof *slots;
    out->index_bytes = n_pages * (sizeof(page) + 16);
    out->bytes += out->index_bytes;
    pthread_mutex_unlock(&lock);
}
