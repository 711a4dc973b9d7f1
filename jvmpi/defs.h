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
 * share the VM, each told in its own time: jvmpi/agents.h; jvmpi/once.h
 * keeps to whom).  What a dump names is announced by jvmpi/dumpdefs.h
 * through the functions below, which work for the target agent
 * (agents_target) when one is set, else for every agent that enabled the
 * defining event.
 */
#ifndef JVMPI_DEFS_H_
#define JVMPI_DEFS_H_

#include <stdatomic.h>
#include <stdbool.h>

#include "agents.h"
#include "deliver.h"
#include "events.h"
#include "once.h"
#include "pass.h"
#include "seam.h"

/* The pipeline's announce stage, for agent p->agent, inside its gate
 * (gate_pass): the calling thread's own THREAD_START first when it is due
 * for that agent, then whatever the event names that the agent was not
 * told, then the delivery (deliver.h).  Every event passes it but the
 * dumps, whose builders announce what their snapshots name first
 * (jvmpi/dumpdefs.h).  Inline: METHOD_ENTRY and METHOD_EXIT come by the hundred million
 * and, with CLASS_LOAD off, name nothing to announce. */
void defs_pass_announcing(pass *p, bool self_due);
static inline __attribute__((always_inline)) void defs_pass(pass *p)
{
    agents_mask k = AGENTS_BIT(p->agent);
    bool self_due = p->me_told != NULL &&
                    (atomic_load_explicit(&events_on[JVMPI_EVENT_THREAD_START], memory_order_relaxed) & k) != 0 &&
                    (once_sent_mask(p->me_told) & k) == 0;
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
