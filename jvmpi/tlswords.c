#include "tlswords.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* An open-addressed index of the words in use, keyed by env.  Writers
 * (thread starts and ends) take writer_lock and publish a new index when
 * the old one fills up; readers take no lock, they only count themselves
 * in `readers` for as long as they look.  What a writer unlinks (an old
 * index, a dropped thread's words) is freed or reused only at a moment
 * when no reader is counted: a reader counted in after the unlinking
 * cannot find it any more. */
typedef struct index {
    size_t cap;  /* a power of two */
    size_t used; /* slots live or tombstoned; at most 3/4 of cap */
    struct index *next_retired;
    tlswords *_Atomic slot[];
} index_t;

#define TOMBSTONE ((tlswords *)(uintptr_t)1)
#define CHUNK 256
#define MIN_CAP 64

static pthread_mutex_t writer_lock = PTHREAD_MUTEX_INITIALIZER;
static index_t *_Atomic current;
static _Atomic long readers;
static index_t *retired_indexes;
/* Dropped words wait in `retired` until no reader can hold them, then in
 * `spare` for a new thread; `next` links both lists (writer_lock). */
typedef struct spare_words {
    tlswords w;
    struct spare_words *next;
} spare_words;
static spare_words *retired, *spare;

static size_t slot_of(JNIEnv *env, size_t cap)
{
    uint64_t x = (uint64_t)(uintptr_t)env;
    x ^= x >> 29;
    x *= 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 32) & (cap - 1);
}

/* ---- readers ---------------------------------------------------------- */

static tlswords *find(const index_t *ix, JNIEnv *env)
{
    if (ix == NULL || env == NULL) {
        return NULL;
    }
    size_t mask = ix->cap - 1;
    for (size_t i = slot_of(env, ix->cap), n = 0; n < ix->cap; i = (i + 1) & mask, n++) {
        tlswords *w = atomic_load(&ix->slot[i]);
        if (w == NULL) {
            return NULL;
        }
        if (w != TOMBSTONE && atomic_load(&w->env) == env) {
            return w;
        }
    }
    return NULL;
}

/* Reads or writes agent's word of env, as a counted reader. */
static bool access_word(JNIEnv *env, int agent, void **value, bool set)
{
    if (agent < 0 || agent >= AGENTS_MAX) {
        return false;
    }
    atomic_fetch_add(&readers, 1);
    tlswords *w = find(atomic_load(&current), env);
    if (w != NULL) {
        if (set) {
            atomic_store_explicit(&w->word[agent], *value, memory_order_relaxed);
        } else {
            *value = atomic_load_explicit(&w->word[agent], memory_order_relaxed);
        }
    }
    atomic_fetch_sub(&readers, 1);
    return w != NULL;
}

bool tlswords_get(JNIEnv *env, int agent, void **value) { return access_word(env, agent, value, false); }
bool tlswords_set(JNIEnv *env, int agent, void *value) { return access_word(env, agent, &value, true); }

/* ---- writers (writer_lock held) ------------------------------------------- */

/* Frees or reuses what was unlinked, when no reader can hold it. */
static void reclaim(void)
{
    if (atomic_load(&readers) != 0) {
        return;
    }
    while (retired_indexes != NULL) {
        index_t *ix = retired_indexes;
        retired_indexes = ix->next_retired;
        free(ix);
    }
    while (retired != NULL) {
        spare_words *s = retired;
        retired = s->next;
        s->next = spare;
        spare = s;
    }
}

static void insert(index_t *ix, tlswords *w)
{
    size_t mask = ix->cap - 1;
    size_t i = slot_of(atomic_load(&w->env), ix->cap);
    while (atomic_load(&ix->slot[i]) != NULL && atomic_load(&ix->slot[i]) != TOMBSTONE) {
        i = (i + 1) & mask;
    }
    if (atomic_load(&ix->slot[i]) == NULL) {
        ix->used++;
    }
    atomic_store(&ix->slot[i], w);
}

/* An index with room for one more, the live words copied over (tombstones
 * dropped); the old one retired. */
static bool make_room(void)
{
    index_t *old = atomic_load(&current);
    if (old != NULL && (old->used + 1) * 4 <= old->cap * 3) {
        return true;
    }
    size_t live = 0;
    for (size_t i = 0; old != NULL && i < old->cap; i++) {
        tlswords *w = atomic_load(&old->slot[i]);
        live += w != NULL && w != TOMBSTONE;
    }
    size_t cap = MIN_CAP;
    while ((live + 1) * 2 > cap) {
        cap *= 2;
    }
    index_t *ix = calloc(1, sizeof *ix + cap * sizeof ix->slot[0]);
    if (ix == NULL) {
        return false;
    }
    ix->cap = cap;
    for (size_t i = 0; old != NULL && i < old->cap; i++) {
        tlswords *w = atomic_load(&old->slot[i]);
        if (w != NULL && w != TOMBSTONE) {
            insert(ix, w);
        }
    }
    atomic_store(&current, ix);
    if (old != NULL) {
        old->next_retired = retired_indexes;
        retired_indexes = old;
    }
    return true;
}

static spare_words *take_spare(void)
{
    if (spare == NULL) {
        spare_words *chunk = calloc(CHUNK, sizeof *chunk);
        if (chunk == NULL) {
            return NULL;
        }
        /* Never freed: a reader may look at any of them at any time. */
        for (int i = 0; i < CHUNK; i++) {
            chunk[i].next = spare;
            spare = &chunk[i];
        }
    }
    spare_words *s = spare;
    spare = s->next;
    return s;
}

tlswords *tlswords_claim(JNIEnv *env)
{
    tlswords *w = NULL;
    pthread_mutex_lock(&writer_lock);
    reclaim();
    spare_words *s = make_room() ? take_spare() : NULL;
    if (s != NULL) {
        w = &s->w;
        for (int k = 0; k < AGENTS_MAX; k++) {
            atomic_store(&w->word[k], NULL);
        }
        atomic_store(&w->env, env);
        insert(atomic_load(&current), w);
    }
    pthread_mutex_unlock(&writer_lock);
    return w;
}

void tlswords_drop(tlswords *w)
{
    if (w == NULL) {
        return;
    }
    pthread_mutex_lock(&writer_lock);
    index_t *ix = atomic_load(&current);
    if (ix != NULL) {
        size_t mask = ix->cap - 1;
        for (size_t i = slot_of(atomic_load(&w->env), ix->cap), n = 0; n < ix->cap; i = (i + 1) & mask, n++) {
            tlswords *at = atomic_load(&ix->slot[i]);
            if (at == w) {
                atomic_store(&ix->slot[i], TOMBSTONE);
                break;
            }
            if (at == NULL) {
                break;
            }
        }
    }
    atomic_store(&w->env, NULL);
    spare_words *s = (spare_words *)w;
    s->next = retired;
    retired = s;
    reclaim();
    pthread_mutex_unlock(&writer_lock);
}

void tlswords_reset(void)
{
    pthread_mutex_lock(&writer_lock);
    index_t *ix = atomic_exchange(&current, NULL);
    for (size_t i = 0; ix != NULL && i < ix->cap; i++) {
        tlswords *w = atomic_load(&ix->slot[i]);
        if (w != NULL && w != TOMBSTONE) {
            atomic_store(&w->env, NULL);
            spare_words *s = (spare_words *)w;
            s->next = spare;
            spare = s;
        }
    }
    free(ix);
    reclaim();
    pthread_mutex_unlock(&writer_lock);
}
