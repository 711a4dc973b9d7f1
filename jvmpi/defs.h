/*
 * defs - no event names a thread, class, method or object before its
 * defining event.
 *
 * The JVMPI specification promises it to an agent that enabled the defining
 * events (THREAD_START, CLASS_LOAD, OBJECT_ALLOC) at start-up, and real
 * agents abort when it breaks.  Through JVM TI the promise cannot come from
 * the order in which things happen (the JIT's thread reports a method while
 * the start-up replay is still announcing classes; a heap walk meets array
 * classes nobody announced; the VM's last thread runs Java code before its
 * ThreadStart), so the layer keeps it at the one place every event passes:
 * right before an event is delivered, whatever it names that the agent was
 * not told about yet is announced first, on the delivering thread.
 *
 * An announcement is sent once to each agent (several JVMPI agents may
 * share the VM, each told in its own time: jvmpi/agents.h).  A thread that
 * needs one another thread is sending waits until that one has been
 * delivered.  The functions below work for the target agent
 * (agents_target) when one is set, else for every agent that enabled the
 * defining event.
 */
#ifndef JVMPI_DEFS_H_
#define JVMPI_DEFS_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "agents.h"
#include "deliver.h"
#include "events.h"
#include "pass.h"
#include "seam.h"

/* To which agents a defining event was sent, kept in each thread and class
 * record.  Changed under defs.c's lock. */
typedef struct defs_once {
    _Atomic agents_mask sent;    /* agents told */
    _Atomic agents_mask sending; /* the agent being told now, by sender */
    pthread_t sender;
} defs_once;

/* For the target agent (which must be set): true when the caller is to
 * send the definition (then defs_sent).  False when it was sent, or is
 * being sent by the calling thread itself (a handler naming what its own
 * event defines); when another thread is sending it, waits until it was
 * delivered. */
bool defs_claim(defs_once *once);
/* Waits for the start-up replay, unless the calling thread is sending a
 * definition (then the replay may be waiting for it). */
void defs_wait_for_replay(void);
void defs_sent(defs_once *once);
/* Whether it was sent to every agent of agents. */
bool defs_was_sent(const defs_once *once, agents_mask agents);
static inline agents_mask defs_sent_mask(const defs_once *once)
{
    return atomic_load_explicit(&once->sent, memory_order_acquire);
}
/* Whether the calling thread is sending it now. */
bool defs_sending_self(const defs_once *once);

/* The pipeline's announce stage, for agent p->agent, inside its gate
 * (gate_pass): the calling thread's own THREAD_START first when it is due
 * for that agent, then whatever the event names that the agent was not
 * told, then the delivery (deliver.h).  Every event passes it but the
 * dumps, whose builders call the functions below for what their snapshots
 * name.  Inline: METHOD_ENTRY and METHOD_EXIT come by the hundred million
 * and, with CLASS_LOAD off, name nothing to announce. */
void defs_pass_announcing(pass *p, bool self_due);
static inline __attribute__((always_inline)) void defs_pass(pass *p)
{
    agents_mask k = AGENTS_BIT(p->agent);
    bool self_due = p->me_told != NULL &&
                    (atomic_load_explicit(&events_on[JVMPI_EVENT_THREAD_START], memory_order_relaxed) & k) != 0 &&
                    (defs_sent_mask(p->me_told) & k) == 0;
    jint type = p->ev->event_type;
    if (self_due || (type != JVMPI_EVENT_METHOD_ENTRY && type != JVMPI_EVENT_METHOD_EXIT) ||
        (atomic_load_explicit(&events_on[JVMPI_EVENT_CLASS_LOAD], memory_order_relaxed) & k) != 0) {
        defs_pass_announcing(p, self_due);
        return;
    }
    /* What is announced here is for this agent alone (agents.h). */
    int saved = agents_target_now;
    agents_target_now = p->agent;
    deliver_now(p);
    agents_target_now = saved;
}

void defs_class(JNIEnv *env, jobjectID class_id);
void defs_method(JNIEnv *env, jmethodID method);
/* Objects: only while OBJECT_ALLOC is on.  Objects that got their IDs at
 * allocation were announced then; the others (ids_is_unannounced, and
 * java.lang.Class objects, whose IDs are class IDs) get their OBJECT_ALLOC
 * here.  info: what the caller knows of the object already, or NULL. */
void defs_object(JNIEnv *env, jobjectID id, const seam_object_info *info);

/* A thread by its ID: its THREAD_START, to every agent that wants one and
 * was not sent it, before an event the layer builds names the thread.  A
 * thread just recorded (a virtual thread on its carrier, a platform thread
 * in its ThreadStart) may not have announced itself yet when another
 * thread's dump sees it. */
void defs_thread(JNIEnv *env, jobjectID thread_id);

/* The dumps: everything a snapshot names, and the methods of call traces. */
void defs_heap_snapshot(JNIEnv *env, const seam_heap_snapshot *snap);
void defs_monitor_snapshot(JNIEnv *env, const seam_monitor_snapshot *snap);
void defs_traces(JNIEnv *env, const JVMPI_CallTrace *traces, int count);

/* An OBJECT_ALLOC for the object was delivered to the agents of mask (a
 * request's answer too). */
void defs_object_sent(jobjectID id, agents_mask mask);
/* Agent k learnt the ID from a function (jobject2jobjectID). */
void defs_object_known(int agent, jobjectID id);
/* The agents an OBJECT_FREE may name the object to: not those never told
 * about it while their OBJECT_ALLOC was on.  Forgets the object. */
agents_mask defs_free_due(int64_t tag);

/* The Class object's OBJECT_ALLOC, from what its class record says. */
bool defs_class_object_info(jobjectID class_id, seam_object_info *out);
/* What the OBJECT_ALLOC of any object or class ID says; false when no live
 * object has the ID.  Constant time, whatever the heap's size, except for
 * the few objects whose class the layer could not record. */
bool defs_object_info(JNIEnv *env, jobjectID id, seam_object_info *out);

void defs_reset(void);

/* The defining events (built by jvmpi/build.c) sent into the pipeline:
 * the start-up replay's, RequestEvent's answers, THREAD_END, and each
 * definition the announce stage sends. */
struct class_rec;
struct thread_rec;
/* CLASS_LOAD (requested: RequestEvent's answer, methods from the record);
 * returns the agents it reached, as the two below do. */
agents_mask defs_class_load(JNIEnv *env, const struct class_rec *c, bool requested);
/* THREAD_START, or THREAD_END, which names the thread the same way. */
agents_mask defs_thread_event(JNIEnv *env, jint event_type, const struct thread_rec *t, bool requested);
/* OBJECT_ALLOC; returns the agents it reached. */
agents_mask defs_object_alloc(JNIEnv *env, const seam_object_info *obj, bool requested);
/* Sends the class's CLASS_LOAD to each agent (or the target agent) that
 * enabled it and was not sent it yet. */
void defs_announce_class(JNIEnv *env, struct class_rec *c);
/* The same for a thread's THREAD_START. */
void defs_announce_thread(JNIEnv *env, struct thread_rec *t);

#endif
