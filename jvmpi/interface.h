/*
 * interface - the JVMPI_Interface table handed to the agent, and the
 * functions behind it.
 */
#ifndef JVMPI_INTERFACE_H_
#define JVMPI_INTERFACE_H_

#include <stdbool.h>

#include "jvmpi.h"

/* Agent k's table, whatever version it asked for: the full VERSION_1_2
 * layout, with version set to VERSION_1_2 as HotSpot 5.0 did. */
JVMPI_Interface *interface_for_agent(int k);
/* Agent 0's table, registering agent 0 if need be (unit tests). */
JVMPI_Interface *interface_table(void);

/* CreateSystemThread is allowed from JVM_INIT_DONE on. */
void interface_mark_init_done(void);
/* Whether JVM_INIT_DONE is past: the start-up replay has ended. */
bool interface_init_done(void);

/* How deeply DisableGC is nested now. */
int interface_gc_disabled_depth(void);

void interface_reset(void);

#endif
