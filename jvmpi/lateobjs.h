/*
 * lateobjs - the objects whose OBJECT_ALLOC the layer sends itself.
 *
 * Most objects get their ID at allocation, where their OBJECT_ALLOC goes
 * out (jvmpi/ids.h).  The others (objects that existed before the agent
 * enabled OBJECT_ALLOC, java.lang.Class objects, whose IDs are class IDs,
 * and, with several agents, objects allocated while some agent had the
 * event off) are announced when an event first names them; this registry
 * records, per object, to which agents that was done, so that it is done
 * once and that OBJECT_FREE goes to those that were told.
 */
#ifndef JVMPI_LATEOBJS_H_
#define JVMPI_LATEOBJS_H_

#include <stdint.h>

#include "jvmpi.h"
#include "once.h"

/* The agents for which the object's OBJECT_ALLOC is the layer's to send
 * before an event names it. */
agents_mask lateobjs_agents(int64_t tag);
/* The object's record, made if new; NULL if out of memory. */
once_flag *lateobjs_once(int64_t tag);
/* An OBJECT_ALLOC for the object was delivered to the agents of mask (a
 * request's answer too). */
void lateobjs_sent(jobjectID id, agents_mask mask);
/* Agent k learnt the ID from a function (jobject2jobjectID). */
void lateobjs_known(int agent, jobjectID id);
/* The agents an OBJECT_FREE may name the object to: not those never told
 * about it while their OBJECT_ALLOC was on.  Forgets the object. */
agents_mask lateobjs_free_due(int64_t tag);
void lateobjs_reset(void);

#endif
