/*
 * deliver - the pipeline's last stage: the event handed to one agent's
 * NotifyEvent, with the env_id the thread stage decided (or the announce
 * stage set for this agent).  Inline: every method event passes here.
 */
#ifndef JVMPI_DELIVER_H_
#define JVMPI_DELIVER_H_

#include "agents.h"
#include "events.h"
#include "pass.h"

static inline __attribute__((always_inline)) void deliver_now(pass *p)
{
    if (p->ev->event_type == JVMPI_EVENT_JVM_SHUT_DOWN) {
        events_shutting_down_here();
    }
    p->ev->env_id = p->env_id;
    /* What the handler itself causes is no longer meant for this agent alone. */
    agents_target_now = -1;
    p->notify(p->ev);
    agents_target_now = p->agent;
}

#endif
