/*
 * events - which JVMPI events each agent asked for, what carries each one,
 * and delivery to the agents' NotifyEvent.
 */
#ifndef JVMPI_EVENTS_H_
#define JVMPI_EVENTS_H_

#include <stdatomic.h>
#include <stdbool.h>

#include "agents.h"
#include "seam.h"

typedef enum {
    EVENTS_UNUSED,        /* no such event number */
    EVENTS_REQUEST_ONLY,  /* dumps: RequestEvent only */
    EVENTS_CARRIED,       /* EnableEvent switches it on */
    EVENTS_NEVER_SENT,    /* enables (agents check), but no VM since 5.0 produces it */
    EVENTS_NOT_YET        /* a real event this layer does not carry yet */
} events_kind;

events_kind events_kind_of(jint event_type);
const char *events_name(jint event_type);

/* The agents that enabled each event. */
extern _Atomic agents_mask events_on[JVMPI_MAX_EVENT_TYPE_VAL + 1];

/* Whether any agent enabled the event.  Cheap: one relaxed load.  Unknown
 * numbers are never enabled. */
static inline bool events_enabled(jint event_type)
{
    return event_type > 0 && event_type <= JVMPI_MAX_EVENT_TYPE_VAL &&
           atomic_load_explicit(&events_on[event_type], memory_order_relaxed) != 0;
}

/* The agents that enabled the event, narrowed to the target agent when
 * one is set (agents_target). */
static inline agents_mask events_agents(jint event_type)
{
    if (event_type <= 0 || event_type > JVMPI_MAX_EVENT_TYPE_VAL) {
        return 0;
    }
    return atomic_load_explicit(&events_on[event_type], memory_order_relaxed) & agents_target_mask();
}

/* Moves on whenever an agent switches an event on: what a thread cached as
 * told to every agent that wants it may no longer be. */
extern _Atomic unsigned events_generation;

/* EnableEvent / DisableEvent of agent k. */
jint events_enable(int agent, jint event_type);
jint events_disable(int agent, jint event_type);

/* Where agent k's NotifyEvent is read at each delivery (agents may set it late). */
void events_set_interface(int agent, JVMPI_Interface *iface);

/* Hands ev to each agent that enabled it (to the target agent alone when
 * one is set; a requested event or a dump goes to the target only).  The
 * caller zeroed ev before filling it and set event_type; env_id is set here
 * to the calling thread's JNIEnv * (or the handle the agents know the
 * thread by).  Returns the agents it was delivered to. */
agents_mask events_deliver(JNIEnv *env, JVMPI_Event *ev);
/* The same, to the agents of mask only (that enabled it). */
agents_mask events_deliver_to(agents_mask mask, JNIEnv *env, JVMPI_Event *ev);
/* events_deliver for METHOD_ENTRY, METHOD_ENTRY2 and METHOD_EXIT, made
 * cheap for their usual case. */
agents_mask events_deliver_method(JNIEnv *env, JVMPI_Event *ev);
/* The same, for an event that names another thread than the calling one
 * (MONITOR_CONTENDED_EXIT, emulated): env_id is the JNIEnv * the agent
 * knows that thread by. */
void events_deliver_as(JNIEnv *env_id, JVMPI_Event *ev);

/* Stops all delivery (VM death, ProfilerExit).  From the delivery of
 * JVM_SHUT_DOWN on, only the thread that delivers it gets events, until
 * this is called. */
void events_shutdown(void);
/* Called inside the gate by the delivery of JVM_SHUT_DOWN (jvmpi/deliver.h):
 * a GC window open on another thread has ended (its GC_FINISH delivered,
 * so an agent's lock held from GC_START is free), and from now on other
 * threads' events are sent to no agent. */
void events_shutting_down_here(void);
/* Whether an event of this type may no longer reach an agent from the
 * calling thread (shutdown: above).  The announce stage asks it of each
 * definition it sends, as the entry asks it of each event. */
bool events_closed_for(jint type);
/* Whether no event may reach an agent from the calling thread. */
bool events_is_shut_down(void);
/* Around a RequestEvent: false (and nothing to end) when it comes too late. */
bool events_request_begin(void);
void events_request_end(void);

void events_reset(void);

#endif
