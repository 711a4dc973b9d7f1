/*
 * Object IDs are JVM TI tags.  They come from one counter, so an ID is never
 * reused for the life of the process, whatever is freed.
 *
 * A tag carries what the layer must know about an object when JVM TI gives
 * back nothing but the tag (ObjectFree, heap callbacks):
 *
 *   bit  63      0 (tags stay positive)
 *   bits 62..40  object: size / 8, or SIZE_BIG for objects of 64 MB and up
 *                class:  bits 43..40: element type of an array class, 0 for
 *                        other classes; bits 61..44: the class's number
 *                        (ids_class_number); bit 62 set: a class not linked
 *                        yet (see ids_next_pending_class)
 *   bit  39      1: a class (its Class object is counted by ids_count_class_object)
 *   bit  38      objects: 1 when the ID was given without an OBJECT_ALLOC
 *                (a heap walk, jobject2jobjectID, a monitor's or a thread's
 *                object): jvmpi/defs.c sends one before an event names it
 *   bits 37..3   sequence number (never reused)
 *   bits  2..0   0
 *
 * The sequence sits in the low bits so that an ID looks like an aligned
 * pointer that changes with every object: agents that hash jobjectIDs by
 * dropping the low bits (as they did with heap addresses) still spread them.
 * Keeping the size in the tag is what lets GC_FINISH report live bytes with
 * no per-object table, which would cost a hash insert per allocation.  The
 * class of each object is kept apart, by sequence number (jvmpi/idrec.c):
 * a tag has no room left for it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <uthash.h>

#include "idrec.h"
#include "ids.h"
#include "seam.h"
#include "tls.h"

#define SEQ_SHIFT 3
#define CLASS_BIT ((int64_t)1 << 39)
#define UNANNOUNCED_BIT ((int64_t)1 << 38)
#define SEQ_MASK (UNANNOUNCED_BIT - 1)
#define FIELD_SHIFT 40
#define FIELD_MASK (((int64_t)1 << 23) - 1)
#define SIZE_BIG FIELD_MASK
#define ARRAY_TYPE_MASK 0xf
#define NUMBER_SHIFT (FIELD_SHIFT + 4)
#define NUMBER_MASK (((int64_t)1 << 18) - 1)

/* A record holds a class number (NUMBER_MASK's bits) and, above it, the
 * index of the set of agents told of the object (ids.h). */
#define TOLD_SHIFT 18
#define TOLD_SETS 64
_Static_assert(NUMBER_MASK < ((int64_t)1 << TOLD_SHIFT) &&
                   ((((int64_t)TOLD_SETS - 1) << TOLD_SHIFT) | NUMBER_MASK) <= IDREC_MAX_CLASS,
               "a record has room for a class number and a set of agents");
#define RECORD_NUMBER(v) ((v) & (((uint32_t)1 << TOLD_SHIFT) - 1))

/* Set 0 is "not known" (every agent counts as told); the others are the
 * sets of agents with OBJECT_ALLOC on that the run has gone through. */
static _Atomic agents_mask told_sets[TOLD_SETS]; /* written once each, under told_lock */
static int told_sets_used = 1;
static _Atomic uint32_t told_now; /* the current set's index, shifted */
static pthread_mutex_t told_lock = PTHREAD_MUTEX_INITIALIZER;

void ids_alloc_agents_changed(agents_mask agents)
{
    pthread_mutex_lock(&told_lock);
    int i = 1;
    while (i < told_sets_used && told_sets[i] != agents) {
        i++;
    }
    if (i == told_sets_used) {
        if (told_sets_used < TOLD_SETS) {
            atomic_store_explicit(&told_sets[told_sets_used++], agents, memory_order_release);
        } else {
            i = 0; /* a run that toggled too often: told is not known */
        }
    }
    atomic_store(&told_now, (uint32_t)i << TOLD_SHIFT);
    pthread_mutex_unlock(&told_lock);
}

agents_mask ids_told_at_alloc(int64_t tag)
{
    uint32_t v = idrec_get(ids_sequence(tag));
    uint32_t i = v >> TOLD_SHIFT;
    if (v == IDREC_NONE || i == 0 || i >= TOLD_SETS) {
        return ~(agents_mask)0;
    }
    return atomic_load_explicit(&told_sets[i], memory_order_acquire);
}

_Static_assert((SEQ_MASK >> SEQ_SHIFT) == ((int64_t)1 << IDREC_SEQ_BITS) - 1,
               "idrec.c indexes every sequence number a tag can hold");

static _Atomic int64_t seq_last;

/* Allocating threads take sequence numbers in blocks, and count live objects
 * in stripes: a shared counter bumped at every allocation by every thread
 * is a cache line bouncing between cores. */
#define SEQ_BLOCK IDREC_BLOCK
static TLS_FAST int64_t block_next, block_end;

#define LIVE_STRIPES 64
static struct {
    _Atomic jlong objects, bytes;
    char pad[64 - 2 * sizeof(jlong)];
} live[LIVE_STRIPES];
static _Atomic unsigned next_stripe;
static TLS_FAST int my_stripe = -1;

static int stripe(void)
{
    if (my_stripe < 0) {
        my_stripe = (int)(atomic_fetch_add_explicit(&next_stripe, 1, memory_order_relaxed) % LIVE_STRIPES);
    }
    return my_stripe;
}

static void count_live(jlong objects, jlong bytes)
{
    int s = stripe();
    atomic_fetch_add_explicit(&live[s].objects, objects, memory_order_relaxed);
    atomic_fetch_add_explicit(&live[s].bytes, bytes, memory_order_relaxed);
}

/* Sizes of the few objects too big for the tag's size field. */
typedef struct big_size {
    int64_t tag;
    jlong size;
    UT_hash_handle hh;
} big_size;
static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static big_size *bigs;

static int64_t next_seq(void)
{
    if (block_next == block_end) {
        block_next = atomic_fetch_add_explicit(&seq_last, SEQ_BLOCK, memory_order_relaxed) + 1;
        block_end = block_next + SEQ_BLOCK;
    }
    return block_next++;
}

static int64_t make_object_tag(jlong *size, int64_t class_tag);

int64_t ids_next_object(jlong size, int64_t class_tag)
{
    int64_t tag = make_object_tag(&size, class_tag);
    count_live(1, size);
    return tag;
}

int64_t ids_next_unannounced_object(jlong size, int64_t class_tag)
{
    return ids_next_object(size, class_tag) | UNANNOUNCED_BIT;
}

int64_t ids_next_object_uncounted(jlong size, int64_t class_tag)
{
    return make_object_tag(&size, class_tag) | UNANNOUNCED_BIT;
}

int64_t ids_unannounced(int64_t tag) { return ids_is_class(tag) ? tag : tag | UNANNOUNCED_BIT; }

bool ids_is_unannounced(int64_t tag) { return (tag & (CLASS_BIT | UNANNOUNCED_BIT)) == UNANNOUNCED_BIT; }

void ids_count(int64_t tag)
{
    if (tag != 0 && !ids_is_class(tag)) {
        count_live(1, ids_object_size(tag));
    }
}

/* *size is rounded to what the tag records. */
static int64_t make_object_tag(jlong *sizep, int64_t class_tag)
{
    jlong size = *sizep;
    if (size < 0) {
        size = 0;
    }
    int64_t field = (size + 7) / 8;
    int64_t seq = next_seq();
    idrec_put(seq, ids_class_number(class_tag) | atomic_load_explicit(&told_now, memory_order_relaxed));
    int64_t tag = seq << SEQ_SHIFT;
    if (field >= SIZE_BIG) {
        big_size *b = malloc(sizeof *b);
        tag |= SIZE_BIG << FIELD_SHIFT;
        if (b != NULL) {
            b->tag = tag;
            b->size = size;
            pthread_mutex_lock(&big_lock);
            HASH_ADD(hh, bigs, tag, sizeof b->tag, b);
            pthread_mutex_unlock(&big_lock);
        }
    } else {
        tag |= field << FIELD_SHIFT;
        size = field * 8; /* what ids_forget will take off again */
    }
    *sizep = size;
    return tag;
}

/* A class loaded but not linked yet, tagged only so that a heap walk can
 * tell its objects apart; never an ID any event carries. */
#define PENDING_BIT ((int64_t)1 << 62)

static int64_t make_class_tag(jint array_type, int64_t bits);

int64_t ids_next_pending_class(void) { return make_class_tag(0, PENDING_BIT); }

bool ids_is_pending_class(int64_t tag) { return (tag & (CLASS_BIT | PENDING_BIT)) == (CLASS_BIT | PENDING_BIT); }

/* Class numbers, in pages made as classes are numbered and kept for the
 * life of the process: a class tag by its number, without a lock. */
#define NUMBER_PAGE 1024
static _Atomic(int64_t *) number_pages[(NUMBER_MASK + 1) / NUMBER_PAGE];
static _Atomic int64_t numbers_given = IDREC_UNKNOWN; /* the reserved ones */

/* The next class number, with tag recorded as its class; IDREC_UNKNOWN when
 * they are used up (objects of that class are then found through JVM TI). */
static int64_t number_class(int64_t tag)
{
    int64_t n = atomic_fetch_add_explicit(&numbers_given, 1, memory_order_relaxed) + 1;
    if (n > NUMBER_MASK) {
        return IDREC_UNKNOWN;
    }
    _Atomic(int64_t *) *page = &number_pages[n / NUMBER_PAGE];
    int64_t *p = atomic_load_explicit(page, memory_order_acquire);
    if (p == NULL) {
        int64_t *fresh = calloc(NUMBER_PAGE, sizeof *fresh);
        if (fresh == NULL) {
            return IDREC_UNKNOWN;
        }
        if (atomic_compare_exchange_strong_explicit(page, &p, fresh, memory_order_acq_rel, memory_order_acquire)) {
            p = fresh;
        } else {
            free(fresh);
        }
    }
    p[n % NUMBER_PAGE] = tag | (n << NUMBER_SHIFT);
    return n;
}

static int64_t make_class_tag(jint array_type, int64_t bits)
{
    int64_t tag = (next_seq() << SEQ_SHIFT) | CLASS_BIT | bits | (((int64_t)array_type & ARRAY_TYPE_MASK) << FIELD_SHIFT);
    return tag | (number_class(tag) << NUMBER_SHIFT);
}

int64_t ids_next_class(jint array_type) { return make_class_tag(array_type, 0); }

uint32_t ids_class_number(int64_t class_tag)
{
    if (class_tag == 0 || !ids_is_class(class_tag)) {
        return IDREC_UNKNOWN;
    }
    return (uint32_t)((class_tag >> NUMBER_SHIFT) & NUMBER_MASK);
}

/* The class tag numbered n; 0 when none is. */
static int64_t class_numbered(uint32_t n)
{
    if (n <= IDREC_UNKNOWN || n > NUMBER_MASK) {
        return 0;
    }
    int64_t *p = atomic_load_explicit(&number_pages[n / NUMBER_PAGE], memory_order_acquire);
    return p != NULL ? p[n % NUMBER_PAGE] : 0;
}

ids_object_state ids_object_class(int64_t tag, int64_t *class_tag)
{
    *class_tag = 0;
    if (tag == 0 || ids_is_class(tag) || !ids_was_issued(tag)) {
        return IDS_OBJECT_GONE;
    }
    uint32_t n = idrec_get(ids_sequence(tag));
    if (n == IDREC_NONE) {
        return IDS_OBJECT_GONE;
    }
    *class_tag = class_numbered(RECORD_NUMBER(n));
    return *class_tag != 0 ? IDS_OBJECT_LIVE : IDS_OBJECT_UNKNOWN;
}

void ids_set_object_class(int64_t tag, int64_t class_tag)
{
    if (tag != 0 && !ids_is_class(tag)) {
        int64_t seq = ids_sequence(tag);
        uint32_t told = idrec_get(seq) & ~(((uint32_t)1 << TOLD_SHIFT) - 1);
        idrec_set(seq, ids_class_number(class_tag) | told);
    }
}

bool ids_is_class(int64_t tag) { return (tag & CLASS_BIT) != 0; }

int64_t ids_sequence(int64_t tag) { return (tag & SEQ_MASK) >> SEQ_SHIFT; }

bool ids_was_issued(int64_t tag)
{
    int64_t seq = ids_sequence(tag);
    return tag > 0 && (tag & ((1 << SEQ_SHIFT) - 1)) == 0 && seq > 0 &&
           seq <= atomic_load_explicit(&seq_last, memory_order_relaxed);
}

jint ids_array_type(int64_t class_tag)
{
    return ids_is_class(class_tag) && !ids_is_pending_class(class_tag)
               ? (jint)((class_tag >> FIELD_SHIFT) & ARRAY_TYPE_MASK)
               : 0;
}

/* When remove is set, the entry of a big object is dropped as it is read. */
static jlong size_of(int64_t tag, bool remove)
{
    if (ids_is_class(tag)) {
        return 0;
    }
    tag &= ~UNANNOUNCED_BIT; /* the big sizes are kept by the tag as made */
    int64_t field = (tag >> FIELD_SHIFT) & FIELD_MASK;
    if (field != SIZE_BIG) {
        return field * 8;
    }
    jlong size = 0;
    {
        pthread_mutex_lock(&big_lock);
        big_size *b = NULL;
        HASH_FIND(hh, bigs, &tag, sizeof tag, b);
        if (b != NULL) {
            size = b->size;
            if (remove) {
                HASH_DEL(bigs, b);
                free(b);
            }
        }
        pthread_mutex_unlock(&big_lock);
    }
    return size;
}

jlong ids_object_size(int64_t tag) { return size_of(tag, false); }

void ids_forget(int64_t tag)
{
    if (tag == 0 || ids_is_class(tag)) {
        return;
    }
    count_live(-1, -size_of(tag, true));
    idrec_drop(ids_sequence(tag));
}

void ids_uncount(int64_t tag)
{
    if (tag != 0 && !ids_is_class(tag)) {
        count_live(-1, -size_of(tag, false));
    }
}

/* The seq of an object tag whose big size (if any) is dropped on the way;
 * 0 for class tags. */
static int64_t seq_dropping_size(int64_t tag)
{
    if (tag == 0 || ids_is_class(tag)) {
        return 0;
    }
    size_of(tag, true);
    return ids_sequence(tag);
}

void ids_drop_uncounted(int64_t tag)
{
    int64_t seq = seq_dropping_size(tag);
    if (seq > 0) {
        idrec_drop(seq);
    }
}

void ids_drop_uncounted_many(const int64_t *tags, size_t n) { idrec_drop_many(tags, n, seq_dropping_size); }

void ids_count_class_object(jlong size, bool gone) { count_live(gone ? -1 : 1, gone ? -size : size); }

void ids_live(jlong *objects, jlong *bytes)
{
    jlong o = 0, b = 0;
    for (int i = 0; i < LIVE_STRIPES; i++) {
        o += atomic_load(&live[i].objects);
        b += atomic_load(&live[i].bytes);
    }
    *objects = o;
    *bytes = b;
}

void ids_reset(void)
{
    for (int i = 0; i < LIVE_STRIPES; i++) {
        atomic_store(&live[i].objects, 0);
        atomic_store(&live[i].bytes, 0);
    }
    pthread_mutex_lock(&big_lock);
    big_size *b, *tmp;
    HASH_ITER(hh, bigs, b, tmp) {
        HASH_DEL(bigs, b);
        free(b);
    }
    pthread_mutex_unlock(&big_lock);
    pthread_mutex_lock(&told_lock);
    told_sets_used = 1;
    atomic_store(&told_now, 0);
    pthread_mutex_unlock(&told_lock);
    /* The sequence is never reset: an ID must not come back, not even in tests. */
}
