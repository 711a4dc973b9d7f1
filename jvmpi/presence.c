#include "presence.h"

#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

_Atomic int presence_mode;

static void learn_mode(void)
{
    if (atomic_load(&presence_mode) != 0) {
        return;
    }
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);
    bool ok = cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
              syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0;
    int unknown = 0;
    atomic_compare_exchange_strong(&presence_mode, &unknown, ok ? 1 : 2);
}

/* A thread ends: its slot is the next thread's.  One that ended inside the
 * region (pthread_exit from a handler) must not hold the region for ever. */
static void slot_release(void *arg)
{
    presence_slot *s = arg;
    atomic_store(&s->n, 0);
    pthread_mutex_lock(&s->region->lock);
    s->taken = false;
    pthread_mutex_unlock(&s->region->lock);
}

static bool key_ready(presence *p)
{
    if (atomic_load(&p->key_state) == 2) {
        return true;
    }
    pthread_mutex_lock(&p->lock);
    if (atomic_load(&p->key_state) == 0 && pthread_key_create(&p->key, slot_release) == 0) {
        atomic_store(&p->key_state, 2);
    }
    pthread_mutex_unlock(&p->lock);
    return atomic_load(&p->key_state) == 2;
}

presence_slot *presence_slot_take(presence *p)
{
    learn_mode();
    if (!key_ready(p)) {
        return &p->spare;
    }
    presence_slot *s = NULL;
    {
        pthread_mutex_lock(&p->lock);
        for (presence_slot *q = p->slots; q != NULL && s == NULL; q = q->next) {
            if (!q->taken) {
                s = q;
            }
        }
        if (s == NULL && (s = aligned_alloc(64, sizeof *s)) != NULL) {
            memset(s, 0, sizeof *s);
            s->region = p;
            s->next = p->slots;
            p->slots = s;
        }
        if (s != NULL) {
            s->taken = true;
            atomic_store(&s->n, 0);
        }
        pthread_mutex_unlock(&p->lock);
    }
    if (s == NULL) {
        return &p->spare;
    }
    pthread_setspecific(p->key, s);
    return s;
}

long presence_count(presence *p, bool first)
{
    if (first) {
        if (presence_cheap()) {
            syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0);
        } else {
            atomic_thread_fence(memory_order_seq_cst);
        }
    }
    long n = atomic_load(&p->spare.n);
    pthread_mutex_lock(&p->lock);
    for (presence_slot *q = p->slots; q != NULL; q = q->next) {
        n += atomic_load_explicit(&q->n, memory_order_acquire);
    }
    pthread_mutex_unlock(&p->lock);
    return n;
}

void presence_reset(presence *p)
{
    pthread_mutex_lock(&p->lock);
    for (presence_slot *q = p->slots; q != NULL; q = q->next) {
        atomic_store(&q->n, 0);
    }
    atomic_store(&p->spare.n, 0);
    pthread_mutex_unlock(&p->lock);
}
