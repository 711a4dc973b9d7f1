#include "defs.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "build.h"
#include "classes.h"
#include "deliver.h"
#include "events.h"
#include "gate.h"
#include "ids.h"
#include "layer.h"
#include "log.h"
#include "threads.h"
#include "tls.h"
#include "whose.h"

/* One lock for every defs_once: claims are rare (once per thread, class and
 * late object) and short, and waits for another sender are rarer still. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sent_cond = PTHREAD_COND_INITIALIZER;
/* Definitions this thread is sending (claimed, not yet sent). */
static TLS_FAST int claims_held;

void defs_wait_for_replay(void)
{
    /* A thread that is sending a definition must not wait: the replay may
     * be waiting for that very definition. */
    if (claims_held == 0) {
        layer_wait_for_replay();
    }
}

bool defs_claim(defs_once *once)
{
    int k = agents_target();
    if (k < 0) {
        LOG_DEBUG("a definition claimed for no agent");
        return false;
    }
    agents_mask bit = AGENTS_BIT(k);
    bool mine = false, waited = false;
    if ((defs_sent_mask(once) & bit) == 0) {
        /* While the start-up replay runs, what it announces is its to send. */
        defs_wait_for_replay();
    }
    pthread_mutex_lock(&lock);
    for (;;) {
        if ((once->sent & bit) != 0) {
            break;
        }
        if (once->sending == 0) {
            once->sending = bit;
            once->sender = pthread_self();
            claims_held++;
            mine = true;
            break;
        }
        if (pthread_equal(once->sender, pthread_self())) {
            break;
        }
        if (!waited) {
            /* The sender's agent handler may be what an open GC window
             * waits for; this thread runs no agent code while it waits. */
            pthread_mutex_unlock(&lock);
            gate_park();
            pthread_mutex_lock(&lock);
            waited = true;
            continue;
        }
        pthread_cond_wait(&sent_cond, &lock);
    }
    pthread_mutex_unlock(&lock);
    if (waited) {
        gate_unpark();
    }
    return mine;
}

void defs_sent(defs_once *once)
{
    claims_held--;
    pthread_mutex_lock(&lock);
    once->sent |= once->sending;
    once->sending = 0;
    pthread_cond_broadcast(&sent_cond);
    pthread_mutex_unlock(&lock);
}

/* Back to not sent: the sender found nothing it could send. */
static void defs_unclaim(defs_once *once)
{
    claims_held--;
    pthread_mutex_lock(&lock);
    once->sending = 0;
    pthread_cond_broadcast(&sent_cond);
    pthread_mutex_unlock(&lock);
}

/* A claimed definition is settled by whether it reached the target agent.
 * One that did not (refused while the JVM_SHUT_DOWN handler runs on another
 * thread, or before the agent set NotifyEvent) is owed still: the next
 * event that names the entity sends it first, a heap dump's included.
 * Marked sent, it would leave the agent a class, thread or object it was
 * never told of. */
static void settle(defs_once *once, agents_mask reached)
{
    if ((reached & agents_target_mask()) != 0) {
        defs_sent(once);
    } else {
        defs_unclaim(once);
    }
}

bool defs_was_sent(const defs_once *once, agents_mask agents) { return (defs_sent_mask(once) & agents) == agents; }

bool defs_sending_self(const defs_once *once)
{
    return atomic_load_explicit(&once->sending, memory_order_acquire) != 0 &&
           pthread_equal(once->sender, pthread_self());
}

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
    bool all = defs_was_sent(&c->announced, atomic_load(&events_on[JVMPI_EVENT_CLASS_LOAD]));
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

/* Objects whose IDs were not made by their allocation (and Class objects)
 * that the agent was told about: only they need a record. */
typedef struct late_obj {
    int64_t tag;
    defs_once once;
    UT_hash_handle hh;
} late_obj;
static late_obj *late;  /* under lock */

/* The agents for which an object's OBJECT_ALLOC is the layer's to send
 * before an event names it: every agent for a late ID, and, with several
 * agents, those that did not have OBJECT_ALLOC on when its allocation made
 * its ID (jvmpi/ids.h). */
static agents_mask record_agents(int64_t tag)
{
    if (ids_is_class(tag) || ids_is_unannounced(tag)) {
        return ~(agents_mask)0;
    }
    return agents_count() < 2 ? 0 : ~ids_told_at_alloc(tag);
}

static late_obj *late_get(int64_t tag)
{
    late_obj *o = NULL;
    pthread_mutex_lock(&lock);
    HASH_FIND(hh, late, &tag, sizeof tag, o);
    if (o == NULL && (o = calloc(1, sizeof *o)) != NULL) {
        o->tag = tag;
        HASH_ADD(hh, late, tag, sizeof o->tag, o);
    }
    pthread_mutex_unlock(&lock);
    return o;
}

/* Every Class object's OBJECT_ALLOC, wherever it is made, comes from here.
 * java.lang.Class's own names no class, as on HotSpot 5.0: an agent that
 * asks for the OBJECT_ALLOC of every class_id it does not know (HPROF)
 * would otherwise ask for this one again from its own handler, without end. */
bool defs_class_object_info(jobjectID class_id, seam_object_info *out)
{
    class_rec *c = classes_acquire(class_id);
    jobjectID class_class = seam_class_class_id();
    if (c == NULL || class_class == NULL) {
        classes_release(c);
        return false;
    }
    memset(out, 0, sizeof *out);
    out->id = class_id;
    out->class_id = class_id == class_class ? NULL : class_class;
    out->is_array = JVMPI_NORMAL_OBJECT;
    out->size = c->info->object_size;
    classes_release(c);
    return true;
}

/* From the records, without JVM TI; else from JVM TI, which finds an
 * object by its ID only by scanning every tag. */
static bool object_info(JNIEnv *env, jobjectID id, seam_object_info *out)
{
    int64_t tag = seam_tag_from_id(id);
    int64_t class_tag = 0;
    ids_object_state state = ids_object_class(tag, &class_tag);
    if (state == IDS_OBJECT_GONE) {
        return false;
    }
    class_rec *c = state == IDS_OBJECT_LIVE ? classes_acquire(seam_id_from_tag(class_tag)) : NULL;
    if (c != NULL) {
        memset(out, 0, sizeof *out);
        out->id = id;
        out->size = ids_object_size(tag);
        out->is_array = c->info->array_type;
        out->class_id = out->is_array == JVMPI_NORMAL_OBJECT ? c->info->id
                        : out->is_array == JVMPI_CLASS       ? c->info->element_id
                                                             : NULL;
        bool complete = out->is_array != JVMPI_CLASS || out->class_id != NULL;
        classes_release(c);
        if (complete) {
            return true;
        }
    }
    return seam_object_info_of(env, id, out);
}

bool defs_object_info(JNIEnv *env, jobjectID id, seam_object_info *out)
{
    return ids_is_class(seam_tag_from_id(id)) ? defs_class_object_info(id, out) : object_info(env, id, out);
}

void defs_object(JNIEnv *env, jobjectID id, const seam_object_info *info)
{
    int64_t tag = seam_tag_from_id(id);
    /* java.lang.Class's own Class object is defined by its CLASS_LOAD alone
     * and reaches an agent as an object only when asked for, as on HotSpot
     * 5.0, where it never came unasked (its class was loaded before any
     * agent, its Class object outside the heap the start-up replay walked).
     * Its OBJECT_ALLOC names no class (defs_class_object_info): an agent
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
        wanting &= record_agents(tag);
    }
    if (wanting == 0) {
        return;
    }
    define_caller(env);
    late_obj *o = late_get(tag);
    if (o == NULL) {
        return;
    }
    agents_mask due = wanting & ~defs_sent_mask(&o->once);
    seam_object_info found;
    bool looked = false, known = false;
    AGENTS_EACH(k, due) {
        int saved = agents_target_begin((int)k);
        if (defs_claim(&o->once)) {
            if (!looked) {
                looked = true;
                known = info != NULL;
                if (known) {
                    found = *info;
                } else {
                    known = defs_object_info(env, id, &found);
                }
            }
            if (known) {
                settle(&o->once, defs_object_alloc(env, &found, false));
            } else {
                LOG_DEBUG("object %p is named by an event but is gone: no OBJECT_ALLOC for it", (void *)id);
                defs_unclaim(&o->once);
            }
        }
        agents_target_end(saved);
    }
}

void defs_object_sent(jobjectID id, agents_mask mask)
{
    int64_t tag = seam_tag_from_id(id);
    /* Whether an object was announced matters only while OBJECT_ALLOC is on
     * (and for Class objects, whose OBJECT_FREE is due only if announced):
     * a dump-based agent requesting every object with it off must not leave
     * a record behind for each. */
    mask &= record_agents(tag);
    if (!ids_is_class(tag)) {
        mask &= atomic_load(&events_on[JVMPI_EVENT_OBJECT_ALLOC]);
    }
    late_obj *o = mask != 0 ? late_get(tag) : NULL;
    if (o != NULL) {
        pthread_mutex_lock(&lock);
        o->once.sent |= mask;
        pthread_mutex_unlock(&lock);
    }
}

void defs_object_known(int agent, jobjectID id)
{
    if (id != NULL && agent >= 0 && agent < AGENTS_MAX) {
        defs_object_sent(id, AGENTS_BIT(agent));
    }
}

agents_mask defs_free_due(int64_t tag)
{
    agents_mask late_for = record_agents(tag);
    if (late_for == 0) {
        return ~(agents_mask)0;
    }
    agents_mask told = ~late_for; /* told by its allocation */
    pthread_mutex_lock(&lock);
    late_obj *o = NULL;
    HASH_FIND(hh, late, &tag, sizeof tag, o);
    if (o != NULL) {
        told |= o->once.sent;
        HASH_DEL(late, o);
        /* Freed while its OBJECT_ALLOC is being sent: its sender still holds
         * it, so it is left to leak (a race no real object survives twice). */
        if (o->once.sending == 0) {
            free(o);
        }
    }
    pthread_mutex_unlock(&lock);
    /* An object an agent may know from a dump or a request while its
     * OBJECT_ALLOC is off: its free is that agent's business. */
    if (!ids_is_class(tag)) {
        told |= ~atomic_load(&events_on[JVMPI_EVENT_OBJECT_ALLOC]);
    }
    return told;
}

/* ---- the dumps --------------------------------------------------------------------- */

static void define_value(JNIEnv *env, jint type, seam_heap_bits v)
{
    if (type == JVMPI_CLASS || type == JVMPI_NORMAL_OBJECT) {
        defs_object(env, v.id, NULL);
    }
}

static void define_fields(JNIEnv *env, const seam_heap_field *fields, jint n)
{
    for (jint i = 0; i < n; i++) {
        define_value(env, fields[i].type, fields[i].v);
    }
}

/* What an OBJECT_ALLOC says of a dumped object, from the dump itself: an
 * object with a late ID carries its size in its tag (jvmpi/ids.c). */
static bool dumped_object_info(const seam_heap_object *o, seam_object_info *out)
{
    memset(out, 0, sizeof *out);
    out->id = o->id;
    out->size = ids_object_size(seam_tag_from_id(o->id));
    switch (o->kind) {
    case SEAM_HEAP_INSTANCE:
        out->class_id = o->class_id;
        out->is_array = JVMPI_NORMAL_OBJECT;
        return true;
    case SEAM_HEAP_PRIM_ARRAY:
        out->is_array = o->elem_type;
        return true;
    case SEAM_HEAP_OBJ_ARRAY: {
        class_rec *c = classes_acquire(o->class_id);
        out->is_array = JVMPI_CLASS;
        out->class_id = c != NULL ? c->info->element_id : NULL;
        classes_release(c);
        /* An array class defined before its element class could be linked
         * (before VM init): asked afresh, which links it now. */
        return out->class_id != NULL;
    }
    default:
        return false; /* a Class object: its class record says it */
    }
}

void defs_heap_snapshot(JNIEnv *env, const seam_heap_snapshot *snap)
{
    for (int i = 0; i < snap->num_classes; i++) {
        const seam_heap_class *c = &snap->classes[i];
        defs_class(env, c->id);
        defs_class(env, c->super);
        defs_class(env, c->element);
        for (jint k = 0; k < c->num_interfaces; k++) {
            defs_class(env, c->interfaces[k]);
        }
    }
    for (int i = 0; i < snap->num_objects; i++) {
        defs_class(env, snap->objects[i].class_id);
    }
    for (int i = 0; i < snap->num_roots; i++) {
        defs_thread(env, snap->roots[i].thread);
    }
    if (events_agents(JVMPI_EVENT_OBJECT_ALLOC) == 0) {
        return;
    }
    for (int i = 0; i < snap->num_objects; i++) {
        const seam_heap_object *o = &snap->objects[i];
        seam_object_info info;
        defs_object(env, o->id, dumped_object_info(o, &info) ? &info : NULL);
    }
    for (int i = 0; i < snap->num_classes; i++) {
        const seam_heap_class *c = &snap->classes[i];
        defs_object(env, c->id, NULL);
        defs_object(env, c->loader, NULL);
        defs_object(env, c->signers, NULL);
        defs_object(env, c->domain, NULL);
        defs_object(env, c->name, NULL);
        define_fields(env, c->statics, c->num_statics);
    }
    for (int i = 0; i < snap->num_objects; i++) {
        const seam_heap_object *o = &snap->objects[i];
        if (o->kind == SEAM_HEAP_INSTANCE) {
            define_fields(env, o->u.fields, o->count);
        } else if (o->kind == SEAM_HEAP_OBJ_ARRAY && o->u.elements != NULL) {
            for (jint k = 0; k < o->count; k++) {
                defs_object(env, o->u.elements[k], NULL);
            }
        }
    }
    for (int i = 0; i < snap->num_roots; i++) {
        defs_object(env, snap->roots[i].id, NULL);
        defs_object(env, snap->roots[i].thread, NULL);
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

void defs_monitor_snapshot(JNIEnv *env, const seam_monitor_snapshot *snap)
{
    for (int i = 0; i < snap->num_threads; i++) {
        defs_thread(env, snap->threads[i].id);
        defs_traces(env, &(JVMPI_CallTrace){NULL, snap->threads[i].num_frames, snap->threads[i].frames}, 1);
    }
    for (int i = 0; i < snap->num_monitors; i++) {
        const seam_monitor_info *m = &snap->monitors[i];
        defs_object(env, m->object, NULL);
        defs_thread(env, m->owner);
        for (jint k = 0; k < m->n_entering; k++) {
            defs_thread(env, m->entering[k]);
        }
        for (jint k = 0; k < m->n_waiting; k++) {
            defs_thread(env, m->waiting[k]);
        }
    }
}

void defs_traces(JNIEnv *env, const JVMPI_CallTrace *traces, int count)
{
    for (int i = 0; i < count; i++) {
        for (jint k = 0; k < traces[i].num_frames; k++) {
            defs_method(env, traces[i].frames[k].method_id);
        }
    }
}

/* ---- the announce stage ---------------------------------------------------------- */

/* The calling thread's THREAD_START, unless sent.  While the start-up
 * replay runs it is the replay's to send, in HotSpot 5.0's order. */
static void announce_self(JNIEnv *env, thread_rec *me)
{
    defs_wait_for_replay();
    defs_announce_thread(env, me);
}

/* me's THREAD_START is on and not sent yet, to the target agent or any. */
static bool self_due(const thread_rec *me)
{
    return me != NULL && !me->internal &&
           (events_agents(JVMPI_EVENT_THREAD_START) & ~defs_sent_mask(&me->announced)) != 0;
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
    if (self_due(me) && !defs_sending_self(&me->announced)) {
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
    if (defs_sending_self(&me->announced) &&
        !(ev->event_type == JVMPI_EVENT_THREAD_START && ev->u.thread_start.thread_env_id == me->info.env)) {
        return whose_as_begin(as, NULL);
    }
    announce_self(p->env, p->me);
    return p->env_id;
}

/* An OBJECT_ALLOC on its way to an agent tells it of the object.  Recorded
 * where a later event could otherwise announce the object again: a
 * request's answer, and with several agents (record_agents says which).
 * With one agent an allocation's own OBJECT_ALLOC needs no record, and a
 * definition records itself (defs_object). */
static void object_told(const pass *p)
{
    if ((p->ev->event_type & JVMPI_REQUESTED_EVENT) != 0 || agents_count() >= 2) {
        defs_object_sent(p->ev->u.obj_alloc.obj_id, AGENTS_BIT(p->agent));
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

void defs_reset(void)
{
    pthread_mutex_lock(&lock);
    late_obj *o, *tmp;
    HASH_ITER(hh, late, o, tmp) {
        HASH_DEL(late, o);
        free(o);
    }
    pthread_mutex_unlock(&lock);
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
    agents_mask due = events_agents(JVMPI_EVENT_CLASS_LOAD) & ~defs_sent_mask(&c->announced);
    AGENTS_EACH(k, due) {
        int saved = agents_target_begin((int)k);
        if (classes_claim_announce(c)) {
            defs_object(env, c->info->id, NULL);
            settle(&c->announced, defs_class_load(env, c, false));
        }
        agents_target_end(saved);
    }
}

void defs_announce_thread(JNIEnv *env, thread_rec *t)
{
    if (t->internal) {
        return;
    }
    agents_mask due = events_agents(JVMPI_EVENT_THREAD_START) & ~defs_sent_mask(&t->announced);
    AGENTS_EACH(k, due) {
        int saved = agents_target_begin((int)k);
        if (threads_claim_announce(t)) {
            settle(&t->announced, defs_thread_event(env, JVMPI_EVENT_THREAD_START, t, false));
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
