/*
 * ids.h - what the JVMPI side alone asks of jvmpi/ids.c (the backend's part
 * of it is in seam.h).
 *
 * With several agents, an object whose ID its allocation made was told to
 * the agents that had OBJECT_ALLOC on then, and to no other: an agent that
 * enables OBJECT_ALLOC later must be told of it before an event names it to
 * that agent, and must get no OBJECT_FREE for it otherwise.  Each object's
 * record (jvmpi/idrec.c) keeps, beside its class number, which set of
 * agents that was, as an index into the few sets a run goes through.
 */
#ifndef JVMPI_IDS_H_
#define JVMPI_IDS_H_

#include <stdint.h>

#include "agents.h"

/* The agents that have OBJECT_ALLOC on from now. */
void ids_alloc_agents_changed(agents_mask agents);
/* The agents told of an object by the OBJECT_ALLOC its allocation (or the
 * start-up replay) made its ID for; every agent when that is not known. */
agents_mask ids_told_at_alloc(int64_t tag);

#endif
