/*
 * Object IDs are JVM TI tags.  They come from one counter, so an ID is never
 * reused for the life of the process, whatever is freed.  Steps of 8 make an
 * ID look like an aligned pointer: agents that hash jobjectIDs by dropping
 * the low bits (as they did with real heap addresses) still spread them.
 */
#include <stdatomic.h>

#include "seam.h"

#define IDS_STEP 8

static _Atomic int64_t ids_last;

int64_t ids_next(void)
{
    return atomic_fetch_add_explicit(&ids_last, IDS_STEP, memory_order_relaxed) + IDS_STEP;
}
