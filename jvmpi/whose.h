/*
 * whose - the pipeline's thread stage: which thread an event belongs to,
 * decided once per event before anything of it is announced or delivered.
 *
 * The answer is the env_id the event carries and, when the event is the
 * calling thread's own, that thread's record.  Every rule of thread
 * identity lives here: a thread the layer learns of late (adopted), one
 * still in its Thread constructor (unborn), the VM's hidden threads and
 * the layer's own (a stand-in: a thread the agent knows), the layer's own
 * thread delivering for another (an override, whose_as_begin) and quiet
 * regions.  The calling thread's own THREAD_START, due before its first
 * event reaches an agent, is an announcement: the announce stage sends it
 * (jvmpi/defs.c).
 */
#ifndef JVMPI_WHOSE_H_
#define JVMPI_WHOSE_H_

#include <stdbool.h>

#include "events.h"
#include "layer.h"
#include "pass.h"
#include "threads.h"
#include "tls.h"

/* One event's thread. */
typedef struct whose {
    JNIEnv *env_id;  /* what the event carries */
    thread_rec *me;  /* the calling thread's record when the event is its own, else NULL */
    whose_as as;     /* a stand-in taken for the delivery (whose_done gives it back) */
} whose;

/* Decides the thread of an event of event_type sent from the calling
 * thread (env: its JNIEnv *, NULL outside the VM).  False: no agent gets
 * it (a quiet region, the layer's own thread, the method events of a
 * thread still in its constructor); nothing to give back then.  Else
 * whose_done after the delivery. */
bool whose_decide(JNIEnv *env, jint event_type, whose *out);
static inline void whose_done(const whose *w);

/* Until whose_as_end, the calling thread's events carry env_id, or with
 * env_id NULL that of a thread the agent knows (threads_stand_in): for
 * what the layer's own thread delivers (GC windows, unloads).  Returns
 * the env_id they carry. */
JNIEnv *whose_as_begin(whose_as *saved, JNIEnv *env_id);
void whose_as_end(const whose_as *saved);

/* The env_id the calling thread's events carry now; NULL for a thread the
 * agent does not know. */
JNIEnv *whose_env_id(JNIEnv *env);

/* The JNIEnv * the agents know the calling thread by: its own, or the
 * layer-made handle of a thread the VM started early or a virtual thread
 * (found once through the thread's ID, then cached); env itself for a
 * thread the layer does not know. */
JNIEnv *whose_known_env(JNIEnv *env);

/* Around code the layer runs for its own reasons on a thread (a call into
 * Java for the heap's size): nothing it does reaches the agent. */
void whose_quiet_begin(void);
void whose_quiet_end(void);

/* Read inline by the method events' fast path: a quiet region's depth and
 * whether an override is set on the calling thread. */
extern TLS_FAST int whose_quiet_depth;
extern TLS_FAST bool whose_override;

static inline bool whose_quiet(void) { return whose_quiet_depth > 0; }

/* The calling thread's record when nothing but its own identity applies
 * (no quiet region, no override, the VM initialized, a thread the layer
 * knows and not its own): the usual case, decided without a call. */
static inline __attribute__((always_inline)) thread_rec *whose_usual(JNIEnv *env)
{
    thread_rec *me;
    return whose_quiet_depth == 0 && !whose_override && env != NULL && layer_is_live() &&
                   (me = threads_self(env)) != NULL && !me->internal
               ? me
               : NULL;
}

static inline void whose_done(const whose *w)
{
    if (w->as.pushed) {
        whose_as_end(&w->as);
    }
}

#endif
