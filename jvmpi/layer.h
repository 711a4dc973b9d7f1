/*
 * layer - the life of the layer: loading the agent, start-up replay, VM
 * death, and the backend's callbacks turned into JVMPI events.
 */
#ifndef JVMPI_LAYER_H_
#define JVMPI_LAYER_H_

#include <stdatomic.h>
#include <stdbool.h>

#include "seam.h"

typedef enum {
    LAYER_ONLOAD,    /* before VM init: events are recorded, not sent */
    LAYER_LIVE,      /* from VM init on (start-up replay included) */
    LAYER_DEAD       /* VM death or ProfilerExit: nothing more is sent */
} layer_phase_t;

/* Read inline: every event's thread stage asks whether the VM is live. */
extern _Atomic int layer_phase_now;
static inline layer_phase_t layer_phase(void) { return (layer_phase_t)atomic_load(&layer_phase_now); }
static inline bool layer_is_live(void) { return atomic_load(&layer_phase_now) == LAYER_LIVE; }
/* Whether VM death has begun (its JVM_SHUT_DOWN may be on its way): a VM
 * stopped by a signal while it starts dies without ever being live. */
bool layer_vm_dying(void);

/* Makes sure every loaded class has an ID and a record (CLASS_UNLOAD needs
 * the tags even when CLASS_LOAD is off).  Live phase only. */
void layer_define_loaded_classes(JNIEnv *env);

/* Until the start-up replay has announced the threads, no thread can stand
 * in for one the agent does not know, and none announces itself (the
 * replay does): such events wait for it.  The replaying thread never waits. */
void layer_wait_for_replay(void);

/* The layer's delivery thread (GC windows, unloads, resets) has started
 * and not stopped; whether the caller is that thread. */
bool layer_delivery_running(void);
bool layer_on_delivery_thread(void);

/* Stops all delivery; used by VM death and ProfilerExit. */
void layer_stop(void);

/* Tests: back to the state before Agent_OnLoad. */
void layer_reset(void);

#endif
