/*
 * Object IDs are JVM TI tags.  They come from one counter, so an ID is never
 * reused for the life of the process, whatever is freed.
 *
 * A tag carries what the layer must know about an object when JVM TI gives
 * back nothing but the tag (ObjectFree, heap callbacks):
 *
 *   bit  63      0 (tags stay positive)
 *   bits 62..40  object: size / 8, or SIZE_BIG for objects of 64 MB and up
 *                class:  element type of an array class, 0 for other classes;
 *                        bit 62 set: a class not linked yet (see ids_next_pending_class)
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
 * no per-object table, which would cost a hash insert per allocation.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <uthash.h>

#include "seam.h"
#include "tls.h"

#define SEQ_SHIFT 3
#define CLASS_BIT ((int64_t)1 << 39)
#define UNANNOUNCED_BIT ((int64_t)1 << 38)
#define SEQ_MASK (UNANNOUNCED_BIT - 1)
#define FIELD_SHIFT 40
#define FIELD_MASK (((int64_t)1 << 23) - 1)
#define SIZE_BIG FIELD_MASK

static _Atomic int64_t seq_last;

/* Allocating threads take sequence numbers in blocks, and count live objects
 * in stripes: a shared counter bumped at every allocation by every thread
 * is a cache line bouncing between cores. */
#define SEQ_BLOCK 256
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

static int64_t make_object_tag(jlong *size);

int64_t ids_next_object(jlong size)
{
    int64_t tag = make_object_tag(&size);
    count_live(1, size);
    return tag;
}

int64_t ids_next_unannounced_object(jlong size) { return ids_next_object(size) | UNANNOUNCED_BIT; }

int64_t ids_next_object_uncounted(jlong size) { return make_object_tag(&size) | UNANNOUNCED_BIT; }

int64_t ids_unannounced(int64_t tag) { return ids_is_class(tag) ? tag : tag | UNANNOUNCED_BIT; }

bool ids_is_unannounced(int64_t tag) { return (tag & (CLASS_BIT | UNANNOUNCED_BIT)) == UNANNOUNCED_BIT; }

void ids_count(int64_t tag)
{
    if (tag != 0 && !ids_is_class(tag)) {
        count_live(1, ids_object_size(tag));
    }
}

/* *size is rounded to what the tag records. */
static int64_t make_object_tag(jlong *sizep)
{
    jlong size = *sizep;
    if (size < 0) {
        size = 0;
    }
    int64_t field = (size + 7) / 8;
    int64_t tag = next_seq() << SEQ_SHIFT;
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

int64_t ids_next_pending_class(void) { return ids_next_class(0) | PENDING_BIT; }

bool ids_is_pending_class(int64_t tag) { return (tag & (CLASS_BIT | PENDING_BIT)) == (CLASS_BIT | PENDING_BIT); }

int64_t ids_next_class(jint array_type)
{
    return (next_seq() << SEQ_SHIFT) | CLASS_BIT | (((int64_t)array_type & FIELD_MASK) << FIELD_SHIFT);
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
    return ids_is_class(class_tag) && !ids_is_pending_class(class_tag) ? (jint)((class_tag >> FIELD_SHIFT) & 0xffff)
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
}

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
    /* The sequence is never reset: an ID must not come back, not even in tests. */
}
