#include "defs.h"

#include <stdint.h>
#include <string.h>

#include "build.h"
#include "classes.h"
#include "deliver.h"
#include "events.h"
#include "gate.h"
#include "ids.h"
#include "lateobjs.h"
#include "layer.h"
#include "ledger.h"
#include "log.h"
#include "objinfo.h"
#include "once.h"
#include "threads.h"
#include "tls.h"
#include "whose.h"

/* ---- which definitions are due ---------------------------------------------- */

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

static agents_mask agents_on(jint event_type) { return atomic_load_explicit(&events_on[event_type], memory_order_relaxed); }

/* IDs are never reused, so a class seen announced stays announced. */
static bool class_cached(tls_caches *tc, jobjectID class_id)
{
    return tc != NULL && tc->announced[tls_slot(seam_tag_from_id(class_id), TLS_ANNOUNCED_SLOTS)] == class_id;
}

/* Remembers a class every agent with CLASS_LOAD on was told of. */
static bool class_cache(tls_caches *tc, const class_rec *c)
{
    bool all = once_was_sent(&c->announced, agents_on(JVMPI_EVENT_CLASS_LOAD));
    if (tc != NULL && all) {
        tc->announced[tls_slot(seam_tag_from_id(c->info->id), TLS_ANNOUNCED_SLOTS)] = c->info->id;
    }
    return all;
}

/* HotSpot never frees nor reuses a jmethodID, so the cache never goes stale. */
static bool method_cached(tls_caches *tc, jmethodID method)
{
    return tc != NULL && tc->methods[tls_slot((int64_t)(uintptr_t)method, TLS_METHOD_SLOTS)] == method;
}

/* Remembers a method whose class every agent with CLASS_LOAD on was told of. */
static void method_cache(tls_caches *tc, jmethodID method, jobjectID class_id)
{
    if (class_id != NULL && class_cached(tc, class_id)) {
        tc->methods[tls_slot((int64_t)(uintptr_t)method, TLS_METHOD_SLOTS)] = method;
    }
}

/* The agents of mask an object's OBJECT_ALLOC is the layer's to send to.
 * java.lang.Class's own Class object is defined by its CLASS_LOAD alone
 * and reaches an agent as an object only when asked for, as on HotSpot
 * 5.0, where it never came unasked (its class was loaded before any agent,
 * its Class object outside the heap the start-up replay walked).  Its
 * OBJECT_ALLOC names no class (objinfo_class_object): an agent that asks
 * for the CLASS_LOAD of every object's class must not meet that NULL
 * unasked. */
static agents_mask object_due(jobjectID id, agents_mask mask)
{
    int64_t tag = seam_tag_from_id(id);
    if (id == NULL || id == seam_class_class_id() || ids_is_pending_class(tag)) {
        return 0;
    }
    mask &= agents_on(JVMPI_EVENT_OBJECT_ALLOC);
    /* The record lookup only once some agent wants it. */
    return mask != 0 ? mask & lateobjs_agents(tag) : 0;
}

/* ---- the announce stage ---------------------------------------------------------- */

/* What one event needs defined first, for one agent: each definition is
 * claimed when it is found due, and listed after what it needs itself, so
 * the list is sent in order.  It is sent (flush) when the search for one
 * thing the event names is done, before the next is looked for: no thread
 * holds a claim while it waits for another thread's. */
enum { CHAIN_MAX = 16 };
typedef struct chain_step {
    JVMPI_Event ev;
    once_flag *once;
    class_rec *c; /* a CLASS_LOAD's record, held until sent */
} chain_step;
typedef struct chain {
    const pass *p; /* the event's: its agent, thread and handler */
    tls_caches *tc;
    int depth, n;
    chain_step steps[CHAIN_MAX];
} chain;

static void names(chain *ch, const JVMPI_Event *ev);

/* The env_id an event carries that goes out while the calling thread is
 * sending its own THREAD_START: what that needs first (its Thread object's
 * OBJECT_ALLOC, for a thread the VM attached) cannot name the thread yet,
 * and goes out for a thread the agent knows (held: given back with
 * threads_stand_in_done). */
static bool before_self(const pass *p, const JVMPI_Event *ev)
{
    const thread_rec *me = p->me;
    return me != NULL && once_sending_self(&me->announced) &&
           !(ev->event_type == JVMPI_EVENT_THREAD_START && ev->u.thread_start.thread_env_id == me->info.env);
}

/* The listed definitions, delivered in order to the event's agent, each as
 * the entry stage would deliver it (its own thread already decided: the
 * event's), each settled by whether it reached the agent. */
static void flush(chain *ch)
{
    const pass *p = ch->p;
    for (int i = 0; i < ch->n; i++) {
        chain_step *s = &ch->steps[i];
        agents_mask reached = 0;
        if (!events_closed_for(s->ev.event_type)) {
            if (ledger_active()) {
                ledger_event(p->env, p->me, &s->ev);
            }
            pass q = *p;
            q.ev = &s->ev;
            thread_rec *stand_in = NULL;
            if (before_self(p, q.ev)) {
                stand_in = threads_stand_in();
                q.env_id = stand_in != NULL ? stand_in->info.env : NULL;
            }
            /* A definition holds GC windows even where the event that
             * needs it (a method event) does not. */
            bool gated = gate_enter_for(q.ev->event_type);
            deliver_now(&q);
            if (gated) {
                gate_leave();
            }
            if (stand_in != NULL) {
                threads_stand_in_done(stand_in);
            }
            reached = AGENTS_BIT(p->agent);
        }
        once_settle_for(s->once, p->agent, reached);
        if (s->c != NULL) {
            class_cache(ch->tc, s->c);
            classes_release(s->c);
        }
    }
    ch->n = 0;
}

/* Lists a claimed definition after what its event names. */
static void add_step(chain *ch, const JVMPI_Event *ev, once_flag *once, class_rec *c)
{
    names(ch, ev);
    if (ch->n == CHAIN_MAX) {
        flush(ch); /* what is listed needs nothing listed later */
    }
    ch->steps[ch->n++] = (chain_step){.ev = *ev, .once = once, .c = c};
}
static void add(chain *ch, const JVMPI_Event *ev, once_flag *once) { add_step(ch, ev, once, NULL); }
static void add_class(chain *ch, const JVMPI_Event *ev, class_rec *c) { add_step(ch, ev, &c->announced, c); }

/* Whether the chain's agent has event_type on. */
static bool chain_wants(const chain *ch, jint event_type) { return (agents_on(event_type) & AGENTS_BIT(ch->p->agent)) != 0; }

static void step_in(chain *ch) { ch->depth++; }
static void step_out(chain *ch)
{
    if (--ch->depth == 0) {
        flush(ch);
    }
}

static void chain_class(chain *ch, jobjectID class_id)
{
    int k = ch->p->agent;
    if (class_id == NULL || !chain_wants(ch, JVMPI_EVENT_CLASS_LOAD) || class_cached(ch->tc, class_id)) {
        return;
    }
    class_rec *c = classes_acquire(class_id);
    if (c == NULL) {
        return;
    }
    step_in(ch);
    if (once_claim_for(&c->announced, k)) {
        JVMPI_Event ev;
        build_class_load(&ev, c, false);
        add_class(ch, &ev, c);
    } else {
        class_cache(ch->tc, c);
        classes_release(c);
    }
    step_out(ch);
}

/* Named only by the events the layer receives, at depth 0: its class's
 * list is sent by the time chain_class returns. */
static void chain_method(chain *ch, jmethodID method)
{
    if (method == NULL || !chain_wants(ch, JVMPI_EVENT_CLASS_LOAD) || method_cached(ch->tc, method)) {
        return;
    }
    jobjectID class_id = seam_method_class(method);
    chain_class(ch, class_id);
    method_cache(ch->tc, method, class_id);
}

static void chain_object(chain *ch, jobjectID id)
{
    int k = ch->p->agent;
    if (id != NULL && id == seam_class_class_id()) {
        chain_class(ch, id);
        return;
    }
    if (object_due(id, AGENTS_BIT(k)) == 0) {
        return;
    }
    once_flag *once = lateobjs_once(seam_tag_from_id(id));
    if (once == NULL || (once_sent_mask(once) & AGENTS_BIT(k)) != 0) {
        return;
    }
    step_in(ch);
    if (once_claim_for(once, k)) {
        seam_object_info info;
        if (objinfo_of(ch->p->env, id, &info)) {
            JVMPI_Event ev;
            build_object_alloc(&ev, &info, false);
            add(ch, &ev, once);
        } else {
            LOG_DEBUG("object %p is named by an event but is gone: no OBJECT_ALLOC for it", (void *)id);
            once_unclaim(once);
        }
    }
    step_out(ch);
}

/* Only ever the calling thread, whose record outlives its events. */
static void chain_thread(chain *ch, thread_rec *t)
{
    int k = ch->p->agent;
    if (t->internal || !chain_wants(ch, JVMPI_EVENT_THREAD_START)) {
        return;
    }
    step_in(ch);
    if (once_claim_for(&t->announced, k)) {
        JVMPI_Event ev;
        build_thread_event(&ev, JVMPI_EVENT_THREAD_START, t, false);
        add(ch, &ev, &t->announced);
    }
    step_out(ch);
}

/* An OBJECT_ALLOC on its way to an agent tells it of the object.  Recorded
 * where a later event could otherwise announce the object again: a
 * request's answer, and with several agents (lateobjs_agents says which).
 * With one agent an allocation's own OBJECT_ALLOC needs no record, and a
 * definition is settled where it is sent (flush). */
static void object_told(const pass *p, const JVMPI_Event *ev)
{
    if ((ev->event_type & JVMPI_REQUESTED_EVENT) != 0 || agents_count() >= 2) {
        lateobjs_sent(ev->u.obj_alloc.obj_id, AGENTS_BIT(p->agent));
    }
}

/* The one rule of what each event names, which its agent must have been
 * told of first: for the events the layer receives and for the
 * definitions it sends. */
static void names(chain *ch, const JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        /* A class is also an object, its java.lang.Class: where OBJECT_ALLOC
         * is on, that object's OBJECT_ALLOC comes first, so that an agent
         * that looks the class ID up as an object in its CLASS_LOAD handler
         * (HPROF did) finds it.  Not before RequestEvent's answer, as on
         * HotSpot 5.0. */
        if ((ev->event_type & JVMPI_REQUESTED_EVENT) == 0) {
            chain_object(ch, ev->u.class_load.class_id);
        }
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        chain_class(ch, ev->u.obj_alloc.class_id);
        break;
    case JVMPI_EVENT_CLASS_UNLOAD:
        chain_class(ch, ev->u.class_unload.class_id);
        break;
    case JVMPI_EVENT_THREAD_START:
        chain_object(ch, ev->u.thread_start.thread_id);
        break;
    case JVMPI_EVENT_METHOD_ENTRY2:
        chain_method(ch, ev->u.method_entry2.method_id);
        chain_object(ch, ev->u.method_entry2.obj_id);
        break;
    case JVMPI_EVENT_METHOD_ENTRY:
    case JVMPI_EVENT_METHOD_EXIT:
    case JVMPI_EVENT_COMPILED_METHOD_UNLOAD:
        chain_method(ch, ev->u.method.method_id);
        break;
    case JVMPI_EVENT_COMPILED_METHOD_LOAD:
        chain_method(ch, ev->u.compiled_method_load.method_id);
        break;
    case JVMPI_EVENT_INSTRUCTION_START:
        chain_method(ch, ev->u.instruction.method_id);
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
        chain_object(ch, ev->u.monitor.object);
        break;
    case JVMPI_EVENT_MONITOR_WAIT:
    case JVMPI_EVENT_MONITOR_WAITED:
        chain_object(ch, ev->u.monitor_wait.object);
        break;
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
        chain_object(ch, ev->u.jni_globalref_alloc.obj_id);
        break;
    default:
        break;
    }
}

void defs_pass_announcing(pass *p, bool self_due)
{
    /* What the handlers cause is for this agent alone (agents.h). */
    int saved = agents_target_now;
    agents_target_now = p->agent;
    chain ch; /* its steps are written before they are read: not cleared, on the method events' path */
    ch.p = p;
    ch.tc = caches();
    ch.depth = ch.n = 0;
    JNIEnv *env_id = p->env_id;
    thread_rec *stand_in = NULL;
    if (self_due) {
        if (before_self(p, p->ev)) {
            stand_in = threads_stand_in();
            p->env_id = stand_in != NULL ? stand_in->info.env : NULL;
        } else {
            /* While the start-up replay runs, the thread's THREAD_START is
             * the replay's to send, in HotSpot 5.0's order. */
            once_wait_for_replay();
            chain_thread(&ch, p->me);
        }
    }
    names(&ch, p->ev);
    if ((p->ev->event_type & ~JVMPI_REQUESTED_EVENT) == JVMPI_EVENT_OBJECT_ALLOC) {
        object_told(p, p->ev);
    }
    deliver_now(p);
    p->env_id = env_id;
    if (stand_in != NULL) {
        threads_stand_in_done(stand_in);
    }
    agents_target_now = saved;
}

/* ---- definitions for the builders that are not in an event's pass ----------- */

/* The start-up replay, the dumps and RequestEvent define what they name
 * through these: each definition enters the pipeline at its entry, for one
 * agent at a time (agents_target), and what it names is listed by the
 * announce stage above like any event's. */

static void announce_self(JNIEnv *env, thread_rec *me)
{
    once_wait_for_replay();
    defs_announce_thread(env, me);
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
    if (me != NULL && !me->internal &&
        (events_agents(JVMPI_EVENT_THREAD_START) & ~once_sent_mask(&me->announced)) != 0 &&
        !once_sending_self(&me->announced)) {
        announce_self(env, me);
    }
}

void defs_class(JNIEnv *env, jobjectID class_id)
{
    if (class_id == NULL || events_agents(JVMPI_EVENT_CLASS_LOAD) == 0) {
        return;
    }
    tls_caches *tc = caches();
    if (class_cached(tc, class_id)) {
        return;
    }
    class_rec *c = classes_acquire(class_id);
    if (c != NULL) {
        defs_announce_class(env, c);
        class_cache(tc, c);
        classes_release(c);
    }
}

void defs_method(JNIEnv *env, jmethodID method)
{
    if (method == NULL || events_agents(JVMPI_EVENT_CLASS_LOAD) == 0) {
        return;
    }
    tls_caches *tc = caches();
    if (method_cached(tc, method)) {
        return;
    }
    jobjectID class_id = seam_method_class(method);
    defs_class(env, class_id);
    method_cache(tc, method, class_id);
}

void defs_object(JNIEnv *env, jobjectID id, const seam_object_info *info)
{
    if (id != NULL && id == seam_class_class_id()) {
        defs_class(env, id);
        return;
    }
    agents_mask wanting = object_due(id, agents_target_mask());
    if (wanting == 0) {
        return;
    }
    define_caller(env);
    once_flag *once = lateobjs_once(seam_tag_from_id(id));
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

/* Each agent is told in turn; what the CLASS_LOAD names (its Class object)
 * the announce stage sends first. */
void defs_announce_class(JNIEnv *env, class_rec *c)
{
    agents_mask due = events_agents(JVMPI_EVENT_CLASS_LOAD) & ~once_sent_mask(&c->announced);
    AGENTS_EACH(k, due) {
        int saved = agents_target_begin((int)k);
        if (classes_claim_announce(c)) {
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
