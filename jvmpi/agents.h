/*
 * agents - the JVMPI agents in this VM, each with its own JVMPI_Interface.
 *
 * JVMPI allowed one agent per VM; JVM TI allows many, and people migrating
 * run two (a legacy profiler and a tracer, or two tools whose results they
 * compare).  Each agent is known by a small index; its enabled events, its
 * requests, its thread-local storage word and the definitions it was sent
 * are kept apart by that index.  An agent is the library it was compiled
 * into: GetEnv(JVMPI_VERSION_1) called twice from one library gives the one
 * interface, as JDK 5.0 gave its one table.
 */
#ifndef JVMPI_AGENTS_H_
#define JVMPI_AGENTS_H_

#include <stdbool.h>
#include <stdint.h>

#include "tls.h"

#define AGENTS_MAX 8

/* A set of agents: bit k for agent k. */
typedef uint32_t agents_mask;
#define AGENTS_BIT(k) ((agents_mask)1 << (k))

/* Visits each agent of a mask in load order. */
#define AGENTS_EACH(k, mask)                                                                        \
    for (agents_mask k##_left = (mask), k = 0;                                                      \
         k##_left != 0 && ((k = (agents_mask)__builtin_ctz(k##_left)), true); k##_left &= k##_left - 1)

/* The agent whose library holds the code at caller (GetEnv's return
 * address), registered at its first call; -1, after one line saying why,
 * when AGENTS_MAX agents are registered already. */
int agents_for_caller(const void *caller);
/* True once, at agent k's first GetEnv, if the VM started it (-Xrun) rather
 * than the layer's loader: the layer learns of it only then. */
bool agents_started_by_vm_first_call(int k);
/* The loader is about to call JVM_OnLoad of the library loaded as lib (a
 * dlopen handle's base address) for the agent named name; NULL, NULL when
 * it returned.  Names the agent when GetEnv's caller cannot be placed. */
void agents_loading(const char *name, const void *lib_base);

int agents_count(void);
/* Every registered agent. */
agents_mask agents_all(void);
/* The agent's library file, or how it was named, for messages. */
const char *agents_name(int k);

/* While an event (or a definition) is meant for one agent only, this is
 * that agent: a request's answer, what agent k must be told before its own
 * event.  -1: every agent that enabled the event. */
extern TLS_FAST int agents_target_now;
static inline int agents_target(void) { return agents_target_now; }
/* Sets the target; returns the one it replaces, for agents_target_end. */
static inline int agents_target_begin(int k)
{
    int saved = agents_target_now;
    agents_target_now = k;
    return saved;
}
static inline void agents_target_end(int saved) { agents_target_now = saved; }
/* The target as a mask: one agent, or all of them. */
static inline agents_mask agents_target_mask(void)
{
    return agents_target_now < 0 ? ~(agents_mask)0 : AGENTS_BIT(agents_target_now);
}

/* Tests: registers agents 0..k without a library (unit tests have none). */
void agents_ensure(int k);

void agents_reset(void);

#endif
