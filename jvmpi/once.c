#include "once.h"

#include "gate.h"
#include "layer.h"
#include "log.h"
#include "tls.h"

/* One lock for every once_flag: claims are rare (once per thread, class and
 * late object) and short, and waits for another sender are rarer still. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sent_cond = PTHREAD_COND_INITIALIZER;
/* Definitions this thread is sending (claimed, not yet settled). */
static TLS_FAST int claims_held;

void once_wait_for_replay(void)
{
    /* A thread that is sending a definition must not wait: the replay may
     * be waiting for that very definition. */
    if (claims_held == 0) {
        layer_wait_for_replay();
    }
}

bool once_claim(once_flag *once) { return once_claim_for(once, agents_target()); }

bool once_claim_for(once_flag *once, int k)
{
    if (k < 0) {
        LOG_DEBUG("a definition claimed for no agent");
        return false;
    }
    agents_mask bit = AGENTS_BIT(k);
    bool mine = false, waited = false;
    if ((once_sent_mask(once) & bit) == 0) {
        /* While the start-up replay runs, what it announces is its to send. */
        once_wait_for_replay();
    }
    pthread_mutex_lock(&lock);
    for (;;) {
        if ((once->sent & bit) != 0) {
            break;
        }
        if (once->sending == 0) {
            once->sending = bit;
            once->sender = pthread_self();
            claims_held++;
            mine = true;
            break;
        }
        if (pthread_equal(once->sender, pthread_self())) {
            break;
        }
        if (!waited) {
            /* The sender's agent handler may be what an open GC window
             * waits for; this thread runs no agent code while it waits. */
            pthread_mutex_unlock(&lock);
            gate_park();
            pthread_mutex_lock(&lock);
            waited = true;
            continue;
        }
        pthread_cond_wait(&sent_cond, &lock);
    }
    pthread_mutex_unlock(&lock);
    if (waited) {
        gate_unpark();
    }
    return mine;
}

void once_sent(once_flag *once)
{
    claims_held--;
    pthread_mutex_lock(&lock);
    once->sent |= once->sending;
    once->sending = 0;
    pthread_cond_broadcast(&sent_cond);
    pthread_mutex_unlock(&lock);
}

void once_unclaim(once_flag *once)
{
    claims_held--;
    pthread_mutex_lock(&lock);
    once->sending = 0;
    pthread_cond_broadcast(&sent_cond);
    pthread_mutex_unlock(&lock);
}

/* One that did not reach its agent (refused while the JVM_SHUT_DOWN handler
 * runs on another thread, or before the agent set NotifyEvent) is owed
 * still: the next event that names the entity sends it first, a heap
 * dump's included.  Marked sent, it would leave the agent a class, thread
 * or object it was never told of. */
void once_settle(once_flag *once, agents_mask reached) { once_settle_for(once, agents_target(), reached); }

void once_settle_for(once_flag *once, int k, agents_mask reached)
{
    if (k >= 0 && (reached & AGENTS_BIT(k)) != 0) {
        once_sent(once);
    } else {
        once_unclaim(once);
    }
}

void once_mark_sent(once_flag *once, agents_mask mask)
{
    pthread_mutex_lock(&lock);
    once->sent |= mask;
    pthread_mutex_unlock(&lock);
}

bool once_sending_self(const once_flag *once)
{
    return once_is_sending(once) && pthread_equal(once->sender, pthread_self());
}
