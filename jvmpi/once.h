/*
 * once - a defining event is sent once to each agent.
 *
 * Every thread and class record, and every late object (lateobjs.h), keeps
 * a once_flag: to which agents its defining event (THREAD_START, CLASS_LOAD,
 * OBJECT_ALLOC) went.  The sender claims it for the target agent
 * (agents_target), sends it, and settles it; a thread that needs a
 * definition another thread is sending waits until that one was delivered.
 */
#ifndef JVMPI_ONCE_H_
#define JVMPI_ONCE_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "agents.h"

typedef struct once_flag {
    _Atomic agents_mask sent;    /* agents told */
    _Atomic agents_mask sending; /* the agent being told now, by sender */
    pthread_t sender;
} once_flag;

/* For the target agent (which must be set): true when the caller is to
 * send the definition (then once_settle).  False when it was sent, or is
 * being sent by the calling thread itself (a handler naming what its own
 * event defines); when another thread is sending it, waits until it was
 * delivered. */
bool once_claim(once_flag *once);
/* The same for agent k, which the caller names. */
bool once_claim_for(once_flag *once, int k);
/* A claimed definition, settled by the agents its event reached: sent if
 * the target agent was among them, else owed still. */
void once_settle(once_flag *once, agents_mask reached);
void once_settle_for(once_flag *once, int k, agents_mask reached);
/* Sent to the target agent (a claim settled by hand, tests). */
void once_sent(once_flag *once);
/* Claimed, then found impossible to send: owed still. */
void once_unclaim(once_flag *once);
/* Told to the agents of mask by some other way (a request's answer). */
void once_mark_sent(once_flag *once, agents_mask mask);
/* Waits for the start-up replay, unless the calling thread is sending a
 * definition (then the replay may be waiting for it). */
void once_wait_for_replay(void);

static inline agents_mask once_sent_mask(const once_flag *once)
{
    return atomic_load_explicit(&once->sent, memory_order_acquire);
}
/* Whether it was sent to every agent of agents. */
static inline bool once_was_sent(const once_flag *once, agents_mask agents)
{
    return (once_sent_mask(once) & agents) == agents;
}
/* Whether some thread is sending it now. */
static inline bool once_is_sending(const once_flag *once)
{
    return atomic_load_explicit(&once->sending, memory_order_acquire) != 0;
}
/* Whether the calling thread is sending it now. */
bool once_sending_self(const once_flag *once);

#endif
