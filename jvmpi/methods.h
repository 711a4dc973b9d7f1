/*
 * methods - METHOD_ENTRY, METHOD_ENTRY2, METHOD_EXIT and
 * COMPILED_METHOD_LOAD/UNLOAD: the layer_* callbacks the backend calls and
 * the replay of compiled methods when the agent enables their event.
 */
#ifndef JVMPI_METHODS_H_
#define JVMPI_METHODS_H_

/* After EnableEvent(COMPILED_METHOD_LOAD) succeeded: methods compiled
 * before it are reported now, on the calling thread. */
void methods_after_enable_compiled(void);

#endif
