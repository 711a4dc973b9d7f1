#include "defs.h"

#include <stdint.h>
#include <string.h>

#include "build.h"
#include "classes.h"
#include "deliver.h"
#include "events.h"
#include "ids.h"
#include "lateobjs.h"
#include "layer.h"
#include "log.h"
#include "objinfo.h"
#include "once.h"
#include "threads.h"
#include "tls.h"
#include "whose.h"

/* ---- classes and methods ---------------------------------------------------- */

/* This thread's caches of classes and methods whose CLASS_LOAD every agent
 * that wants one was sent; emptied when an agent enables an event. */
static tls_caches *caches(void)
{
    tls_caches *tc = tls_caches_get();
    unsigned gen = atomic_load_explicit(&events_generation, memory_order_relaxed);
    if (tc != NULL && tc->defs_generation != gen) {
        memset(tc->announced, 0, sizeof tc->announced);
        memset(tc->methods, 0, sizeof tc->methods);
        tc->defs_generation = gen;
    }
    return tc;
}

/* Returns whether every agent with CLASS_LOAD on was told of the class. */
static bool define_class(JNIEnv *env, tls_caches *tc, jobjectID class_id)
{
    /* IDs are never reused, so a class seen announced stays announced. */
    unsigned slot = tls_slot(seam_tag_from_id(class_id), TLS_ANNOUNCED_SLOTS);
    if (tc != NULL && tc->announced[slot] == class_id) {
        return true;
    }
    class_rec *c = classes_acquire(class_id);
    if (c == NULL) {
        return false;
    }
    defs_announce_class(env, c);
    bool all = once_was_sent(&c->announced, atomic_load(&events_on[JVMPI_EVENT_CLASS_LOAD]));
    if (tc != NULL && all) {
        tc->announced[slot] = class_id;
    }
    classes_release(c);
    return all;
}

void defs_class(JNIEnv *env, jobjectID class_id)
{
    if (class_id != NULL && events_agents(JVMPI_EVENT_CLASS_LOAD) != 0) {
        define_class(env, caches(), class_id);
    }
}

void defs_method(JNIEnv *env, jmethodID method)
{
    if (method == NULL || events_agents(JVMPI_EVENT_CLASS_LOAD) == 0) {
        return;
    }
    /* HotSpot never frees nor reuses a jmethodID, so the cache never goes stale. */
    tls_caches *tc = caches();
    unsigned slot = tls_slot((int64_t)(uintptr_t)method, TLS_METHOD_SLOTS);
    if (tc != NULL && tc->methods[slot] == method) {
        return;
    }
    jobjectID class_id = seam_method_class(method);
    if (class_id != NULL && define_class(env, tc, class_id) && tc != NULL) {
        tc->methods[slot] = method;
    }
}

/* ---- objects ------------------------------------------------------------------- */

static void define_caller(JNIEnv *env);

void defs_object(JNIEnv *env, jobjectID id, const seam_object_info *info)
{
    int64_t tag = seam_tag_from_id(id);
    /* java.lang.Class's own Class object is defined by its CLASS_LOAD alone
     * and reaches an agent as an object only when asked for, as on HotSpot
     * 5.0, where it never came unasked (its class was loaded before any
     * agent, its Class object outside the heap the start-up replay walked).
     * Its OBJECT_ALLOC names no class (objinfo_class_object): an agent
     * that asks for the CLASS_LOAD of every object's class must not meet
     * that NULL unasked. */
    if (id != NULL && id == seam_class_class_id()) {
        defs_class(env, id);
        return;
    }
    if (id == NULL || ids_is_pending_class(tag)) {
        return;
    }
    /* The agents to tell: the record lookup only once some agent wants it. */
    agents_mask wanting = events_agents(JVMPI_EVENT_OBJECT_ALLOC);
    if (wanting != 0) {
        wanting &= lateobjs_agents(tag);
    }
    if (wanting == 0) {
        return;
    }
    define_caller(env);
    once_flag *once = lateobjs_once(tag);
    if (once == NULL) {
        return;
    }
    agents_mask due = wanting & ~once_sent_mask(once);
    seam_object_info found;
    bool looked = false, known = false;
    AGENTS_EACH(k, due) {
        int saved = agents_target_begin((int)k);
        if (once_claim(once)) {
            if (!looked) {
                looked = true;
                known = info != NULL;
                if (known) {
                    found = *info;
                } else {
                    known = objinfo_of(env, id, &found);
                }
            }
            if (known) {
                once_settle(once, defs_object_alloc(env, &found, false));
            } else {
                LOG_DEBUG("object %p is named by an event but is gone: no OBJECT_ALLOC for it", (void *)id);
                once_unclaim(once);
            }
        }
        agents_target_end(saved);
    }
}

void defs_thread(JNIEnv *env, jobjectID thread_id)
{
    if (thread_id == NULL || events_agents(JVMPI_EVENT_THREAD_START) == 0) {
        return;
    }
    thread_rec *t = threads_acquire_by_id(thread_id);
    if (t != NULL) {
        defs_announce_thread(env, t);
        threads_release(t);
    }
}

/* ---- the announce stage ---------------------------------------------------------- */

/* The calling thread's THREAD_START, unless sent.  While the start-up
 * replay runs it is the replay's to send, in HotSpot 5.0's order. */
static void announce_self(JNIEnv *env, thread_rec *me)
{
    once_wait_for_replay();
    defs_announce_thread(env, me);
}

/* me's THREAD_START is on and not sent yet, to the target agent or any. */
static bool self_due(const thread_rec *me)
{
    return me != NULL && !me->internal &&
           (events_agents(JVMPI_EVENT_THREAD_START) & ~once_sent_mask(&me->announced)) != 0;
}

/* Whether the agent the event goes to has event_type on.  The stage reads
 * the switches themselves: it calls only forward. */
static bool pass_wants(const pass *p, jint event_type)
{
    return (atomic_load_explicit(&events_on[event_type], memory_order_relaxed) & AGENTS_BIT(p->agent)) != 0;
}

/* Before a definition is claimed whose event will carry the calling
 * thread's env_id: the thread's own THREAD_START, which may need that
 * definition too, comes first. */
static void define_caller(JNIEnv *env)
{
    if (whose_override || whose_quiet() || !layer_is_live() || !events_enabled(JVMPI_EVENT_THREAD_START)) {
        return;
    }
    thread_rec *me = threads_self(env);
    if (self_due(me) && !once_sending_self(&me->announced)) {
        announce_self(env, me);
    }
}

/* The env_id the event carries to this agent once the calling thread's own
 * THREAD_START, due for it, was sent.  While the thread is sending that
 * very THREAD_START, what it needs first (its Thread object's OBJECT_ALLOC,
 * for a thread the VM attached) cannot name the thread yet: it goes out
 * for a thread the agent knows (as, given back by whose_as_end). */
static JNIEnv *self_first(const pass *p, whose_as *as)
{
    const thread_rec *me = p->me;
    const JVMPI_Event *ev = p->ev;
    if (once_sending_self(&me->announced) &&
        !(ev->event_type == JVMPI_EVENT_THREAD_START && ev->u.thread_start.thread_env_id == me->info.env)) {
        return whose_as_begin(as, NULL);
    }
    announce_self(p->env, p->me);
    return p->env_id;
}

/* An OBJECT_ALLOC on its way to an agent tells it of the object.  Recorded
 * where a later event could otherwise announce the object again: a
 * request's answer, and with several agents (lateobjs_agents says which).
 * With one agent an allocation's own OBJECT_ALLOC needs no record, and a
 * definition records itself (defs_object). */
static void object_told(const pass *p)
{
    if ((p->ev->event_type & JVMPI_REQUESTED_EVENT) != 0 || agents_count() >= 2) {
        lateobjs_sent(p->ev->u.obj_alloc.obj_id, AGENTS_BIT(p->agent));
    }
}

/* What the event names, announced first. */
static void before(const pass *p)
{
    JNIEnv *env = p->env;
    const JVMPI_Event *ev = p->ev;
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        if (ev->u.obj_alloc.class_id != NULL && pass_wants(p, JVMPI_EVENT_CLASS_LOAD)) {
            define_class(env, caches(), ev->u.obj_alloc.class_id);
        }
        object_told(p);
        break;
    case JVMPI_EVENT_CLASS_UNLOAD:
        defs_class(env, ev->u.class_unload.class_id);
        break;
    case JVMPI_EVENT_THREAD_START:
        defs_object(env, ev->u.thread_start.thread_id, NULL);
        break;
    case JVMPI_EVENT_METHOD_ENTRY2:
        defs_method(env, ev->u.method_entry2.method_id);
        defs_object(env, ev->u.method_entry2.obj_id, NULL);
        break;
    case JVMPI_EVENT_METHOD_ENTRY:
    case JVMPI_EVENT_METHOD_EXIT:
    case JVMPI_EVENT_COMPILED_METHOD_UNLOAD:
        defs_method(env, ev->u.method.method_id);
        break;
    case JVMPI_EVENT_COMPILED_METHOD_LOAD:
        defs_method(env, ev->u.compiled_method_load.method_id);
        break;
    case JVMPI_EVENT_INSTRUCTION_START:
        defs_method(env, ev->u.instruction.method_id);
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
        defs_object(env, ev->u.monitor.object, NULL);
        break;
    case JVMPI_EVENT_MONITOR_WAIT:
    case JVMPI_EVENT_MONITOR_WAITED:
        defs_object(env, ev->u.monitor_wait.object, NULL);
        break;
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
        defs_object(env, ev->u.jni_globalref_alloc.obj_id, NULL);
        break;
    default:
        break;
    }
}

void defs_pass_announcing(pass *p, bool self_due)
{
    /* What is announced here is for this agent alone (agents.h). */
    int saved = agents_target_now;
    agents_target_now = p->agent;
    JNIEnv *env_id = p->env_id;
    whose_as as = {.pushed = false};
    if (self_due) {
        p->env_id = self_first(p, &as);
    }
    before(p);
    deliver_now(p);
    p->env_id = env_id;
    if (as.pushed) {
        whose_as_end(&as);
    }
    agents_target_now = saved;
}

/* ---- the defining events sent into the pipeline ---- */

agents_mask defs_class_load(JNIEnv *env, const class_rec *c, bool requested)
{
    JVMPI_Event ev;
    build_class_load(&ev, c, requested);
    return events_deliver(env, &ev);
}

agents_mask defs_thread_event(JNIEnv *env, jint event_type, const thread_rec *t, bool requested)
{
    JVMPI_Event ev;
    build_thread_event(&ev, event_type, t, requested);
    return events_deliver(env, &ev);
}

/* A class is also an object, its java.lang.Class: where OBJECT_ALLOC is on,
 * that object's OBJECT_ALLOC comes first, so that an agent that looks the
 * class ID up as an object in its CLASS_LOAD handler (HPROF did) finds it.
 * Each agent is told in turn, each after what it was not told yet. */
void defs_announce_class(JNIEnv *env, class_rec *c)
{
    agents_mask due = events_agents(JVMPI_EVENT_CLASS_LOAD) & ~once_sent_mask(&c->announced);
    AGENTS_EACH(k, due) {
        int saved = agents_target_begin((int)k);
        if (classes_claim_announce(c)) {
            defs_object(env, c->info->id, NULL);
            once_settle(&c->announced, defs_class_load(env, c, false));
        }
        agents_target_end(saved);
    }
}

void defs_announce_thread(JNIEnv *env, thread_rec *t)
{
    if (t->internal) {
        return;
    }
    agents_mask due = events_agents(JVMPI_EVENT_THREAD_START) & ~once_sent_mask(&t->announced);
    AGENTS_EACH(k, due) {
        int saved = agents_target_begin((int)k);
        if (threads_claim_announce(t)) {
            once_settle(&t->announced, defs_thread_event(env, JVMPI_EVENT_THREAD_START, t, false));
        }
        agents_target_end(saved);
    }
}

/* Whoever made an OBJECT_ALLOC (the allocation, the replay, a request, a
 * definition), the announce stage records it as told (object_told). */
agents_mask defs_object_alloc(JNIEnv *env, const seam_object_info *obj, bool requested)
{
    JVMPI_Event ev;
    build_object_alloc(&ev, obj, requested);
    return events_deliver(env, &ev);
}
