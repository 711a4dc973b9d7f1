#include "lateobjs.h"

#include <pthread.h>
#include <stdlib.h>
#include <uthash.h>

#include "events.h"
#include "ids.h"
#include "seam.h"

typedef struct late_obj {
    int64_t tag;
    once_flag once;
    UT_hash_handle hh;
} late_obj;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static late_obj *late; /* under lock */

/* Every agent for a late ID, and, with several agents, those that did not
 * have OBJECT_ALLOC on when its allocation made its ID (jvmpi/ids.h). */
agents_mask lateobjs_agents(int64_t tag)
{
    if (ids_is_class(tag) || ids_is_unannounced(tag)) {
        return ~(agents_mask)0;
    }
    return agents_count() < 2 ? 0 : ~ids_told_at_alloc(tag);
}

once_flag *lateobjs_once(int64_t tag)
{
    late_obj *o = NULL;
    pthread_mutex_lock(&lock);
    HASH_FIND(hh, late, &tag, sizeof tag, o);
    if (o == NULL && (o = calloc(1, sizeof *o)) != NULL) {
        o->tag = tag;
        HASH_ADD(hh, late, tag, sizeof o->tag, o);
    }
    pthread_mutex_unlock(&lock);
    return o != NULL ? &o->once : NULL;
}

void lateobjs_sent(jobjectID id, agents_mask mask)
{
    int64_t tag = seam_tag_from_id(id);
    /* Whether an object was announced matters only while OBJECT_ALLOC is on
     * (and for Class objects, whose OBJECT_FREE is due only if announced):
     * a dump-based agent requesting every object with it off must not leave
     * a record behind for each. */
    mask &= lateobjs_agents(tag);
    if (!ids_is_class(tag)) {
        mask &= atomic_load(&events_on[JVMPI_EVENT_OBJECT_ALLOC]);
    }
    once_flag *once = mask != 0 ? lateobjs_once(tag) : NULL;
    if (once != NULL) {
        once_mark_sent(once, mask);
    }
}

void lateobjs_known(int agent, jobjectID id)
{
    if (id != NULL && agent >= 0 && agent < AGENTS_MAX) {
        lateobjs_sent(id, AGENTS_BIT(agent));
    }
}

agents_mask lateobjs_free_due(int64_t tag)
{
    agents_mask late_for = lateobjs_agents(tag);
    if (late_for == 0) {
        return ~(agents_mask)0;
    }
    agents_mask told = ~late_for; /* told by its allocation */
    pthread_mutex_lock(&lock);
    late_obj *o = NULL;
    HASH_FIND(hh, late, &tag, sizeof tag, o);
    if (o != NULL) {
        told |= once_sent_mask(&o->once);
        HASH_DEL(late, o);
        /* Freed while its OBJECT_ALLOC is being sent: its sender still holds
         * it, so it is left to leak (a race no real object survives twice). */
        if (!once_is_sending(&o->once)) {
            free(o);
        }
    }
    pthread_mutex_unlock(&lock);
    /* An object an agent may know from a dump or a request while its
     * OBJECT_ALLOC is off: its free is that agent's business. */
    if (!ids_is_class(tag)) {
        told |= ~atomic_load(&events_on[JVMPI_EVENT_OBJECT_ALLOC]);
    }
    return told;
}

void lateobjs_reset(void)
{
    pthread_mutex_lock(&lock);
    late_obj *o, *tmp;
    HASH_ITER(hh, late, o, tmp) {
        HASH_DEL(late, o);
        free(o);
    }
    pthread_mutex_unlock(&lock);
}
