/*
 * pass - one event on its way through the pipeline's last stages, to one
 * agent.
 *
 * The thread stage (whose.c) fills it once per event; then, for each agent
 * that takes the event, the gate (gate.h) lets it through, the announce
 * stage (defs.h, defs.c) sends first what it names that the agent was not
 * told, and the delivery (deliver.h) hands it to the agent's NotifyEvent.
 * Each stage calls the next one and none calls back: what a later stage
 * needs to know of an earlier decision travels here.
 */
#ifndef JVMPI_PASS_H_
#define JVMPI_PASS_H_

#include <stdbool.h>

#include "agents.h"
#include "jvmpi.h"

struct thread_rec;
struct once_flag;

/* What an override or a stand-in replaced, given back by whose_as_end. */
typedef struct whose_as {
    bool pushed; /* whose_as_begin was called: whose_as_end is due */
    bool set;
    JNIEnv *env;
    struct thread_rec *held;
} whose_as;

typedef struct pass {
    JNIEnv *env;                  /* the calling thread's JNIEnv * (NULL outside the VM) */
    JNIEnv *env_id;               /* what the event carries: the thread stage's answer */
    struct thread_rec *me;        /* the calling thread's record when the event is its own */
    /* me's THREAD_START record, NULL for the layer's own thread or none:
     * the announce stage tests it inline (defs_pass) */
    const struct once_flag *me_told;
    JVMPI_Event *ev;
    int agent;                    /* the agent it goes to now */
    void (*notify)(JVMPI_Event *); /* that agent's NotifyEvent */
} pass;

#endif
