#include "events.h"

#include <pthread.h>
#include <string.h>

#include "defs.h"
#include "gate.h"
#include "gc.h"
#include "ids.h"
#include "layer.h"
#include "ledger.h"
#include "log.h"
#include "threads.h"
#include "tls.h"
#include "whose.h"

_Atomic agents_mask events_on[JVMPI_MAX_EVENT_TYPE_VAL + 1];

static JVMPI_Interface *ifaces[AGENTS_MAX];

/* JDK 5.0 disengaged JVMPI once JVM_SHUT_DOWN was posted: no event reached
 * an agent after it (one that frees its tables there would write into
 * freed memory).  From the delivery of JVM_SHUT_DOWN on, only the thread
 * that delivers it still gets events, those its handler asks for (HPROF
 * requests its heap dump there), and so do the answers to requests of
 * other threads; once the handler returns, none but the answers to
 * requests already under way. */
enum { OPEN, SHUTTING, SHUT };
static _Atomic int shut_state;
static TLS_FAST bool shutting_here;
static TLS_FAST int requesting_here; /* RequestEvent calls under way on this thread */

static bool is_window_event(jint type)
{
    return type == JVMPI_EVENT_GC_START || type == JVMPI_EVENT_OBJECT_FREE || type == JVMPI_EVENT_GC_FINISH;
}

/* Whether an event of type (-1: any) may not reach an agent from the
 * calling thread.  While the JVM_SHUT_DOWN handler runs, the layer's
 * delivery thread still sends GC windows: a window opens only while the
 * handler is out of the gate, waiting in its own RunGC (HPROF calls it
 * there before it writes its live counts), so the window is the
 * handler's doing. */
static inline bool closed_for(jint type)
{
    int state = atomic_load_explicit(&shut_state, memory_order_acquire);
    if (state == OPEN || requesting_here > 0) {
        return false;
    }
    if (state == SHUT) {
        return true;
    }
    return !shutting_here && !(layer_on_delivery_thread() && (type < 0 || is_window_event(type)));
}

bool events_closed_for(jint type) { return closed_for(type); }

void events_shutting_down_here(void)
{
    shutting_here = true;
    int open = OPEN;
    atomic_compare_exchange_strong(&shut_state, &open, SHUTTING);
}
static _Atomic long dropped_no_handler[AGENTS_MAX];
_Atomic unsigned events_generation;

/* JVM TI sources shared by several JVMPI events are reference counted. */
static pthread_mutex_t source_lock = PTHREAD_MUTEX_INITIALIZER;
static int source_refs[SEAM_SRC_COUNT];

#define NO_SOURCE (-1)
#define MAX_SOURCES 3

typedef struct {
    const char *name;
    events_kind kind;
    int sources[MAX_SOURCES];
} event_desc;

#define D(ev, k, s1, s2) [ev] = {#ev + 12, k, {s1, s2, NO_SOURCE}}
/* Events of a thread: with virtual threads about, the layer must know which
 * one the carrier runs (SEAM_SRC_VTHREADS) to name the right thread. */
#define T(ev, k, s1, s2) [ev] = {#ev + 12, k, {s1, s2, SEAM_SRC_VTHREADS}}
static const event_desc descs[JVMPI_MAX_EVENT_TYPE_VAL + 1] = {
    /* JVM TI's MethodEntry/Exit: the threads run interpreted while on. */
    T(JVMPI_EVENT_METHOD_ENTRY, EVENTS_CARRIED, SEAM_SRC_METHOD_ENTRY, NO_SOURCE),
    /* The receiver first: the rewriter then retransforms the classes once. */
    T(JVMPI_EVENT_METHOD_ENTRY2, EVENTS_CARRIED, SEAM_SRC_METHOD_RECEIVER, SEAM_SRC_METHOD_ENTRY),
    T(JVMPI_EVENT_METHOD_EXIT, EVENTS_CARRIED, SEAM_SRC_METHOD_EXIT, NO_SOURCE),
    T(JVMPI_EVENT_OBJECT_ALLOC, EVENTS_CARRIED, SEAM_SRC_OBJECT_ALLOC, NO_SOURCE),
    /* Frees are delivered in the windows that GC finishes open. */
    D(JVMPI_EVENT_OBJECT_FREE, EVENTS_CARRIED, SEAM_SRC_GC, NO_SOURCE),
    /* Tags survive moves, so an object never changes its ID. */
    D(JVMPI_EVENT_OBJECT_MOVE, EVENTS_NEVER_SENT, NO_SOURCE, NO_SOURCE),
    D(JVMPI_EVENT_COMPILED_METHOD_LOAD, EVENTS_CARRIED, SEAM_SRC_COMPILED_LOAD, NO_SOURCE),
    D(JVMPI_EVENT_COMPILED_METHOD_UNLOAD, EVENTS_CARRIED, SEAM_SRC_COMPILED_UNLOAD, NO_SOURCE),
    T(JVMPI_EVENT_INSTRUCTION_START, EVENTS_CARRIED, SEAM_SRC_SINGLE_STEP, NO_SOURCE),
    /* Platform thread tracking is always on: it is how JNIEnv * becomes a
     * thread.  Virtual threads are tracked while an event of a thread is on. */
    T(JVMPI_EVENT_THREAD_START, EVENTS_CARRIED, NO_SOURCE, NO_SOURCE),
    T(JVMPI_EVENT_THREAD_END, EVENTS_CARRIED, NO_SOURCE, NO_SOURCE),
    D(JVMPI_EVENT_CLASS_LOAD_HOOK, EVENTS_CARRIED, SEAM_SRC_CLASS_FILE_HOOK, NO_SOURCE),
    D(JVMPI_EVENT_HEAP_DUMP, EVENTS_REQUEST_ONLY, NO_SOURCE, NO_SOURCE),
    T(JVMPI_EVENT_JNI_GLOBALREF_ALLOC, EVENTS_CARRIED, SEAM_SRC_JNI_REFS, NO_SOURCE),
    T(JVMPI_EVENT_JNI_GLOBALREF_FREE, EVENTS_CARRIED, SEAM_SRC_JNI_REFS, NO_SOURCE),
    T(JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC, EVENTS_CARRIED, SEAM_SRC_JNI_REFS, NO_SOURCE),
    T(JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE, EVENTS_CARRIED, SEAM_SRC_JNI_REFS, NO_SOURCE),
    D(JVMPI_EVENT_CLASS_LOAD, EVENTS_CARRIED, SEAM_SRC_CLASS_PREPARE, NO_SOURCE),
    /* Unloads are seen through the class tags, which ClassPrepare sets. */
    D(JVMPI_EVENT_CLASS_UNLOAD, EVENTS_CARRIED, SEAM_SRC_CLASS_PREPARE, SEAM_SRC_CLASS_FREE),
    D(JVMPI_EVENT_DATA_DUMP_REQUEST, EVENTS_CARRIED, SEAM_SRC_DATA_DUMP, NO_SOURCE),
    /* No JVM TI twin: the layer's own trigger, SIGUSR1 (jvmti_backend/resetsig.c). */
    D(JVMPI_EVENT_DATA_RESET_REQUEST, EVENTS_CARRIED, SEAM_SRC_DATA_RESET, NO_SOURCE),
    D(JVMPI_EVENT_JVM_INIT_DONE, EVENTS_CARRIED, NO_SOURCE, NO_SOURCE),
    D(JVMPI_EVENT_JVM_SHUT_DOWN, EVENTS_CARRIED, NO_SOURCE, NO_SOURCE),
    D(JVMPI_EVENT_ARENA_NEW, EVENTS_NEVER_SENT, NO_SOURCE, NO_SOURCE),
    D(JVMPI_EVENT_ARENA_DELETE, EVENTS_NEVER_SENT, NO_SOURCE, NO_SOURCE),
    D(JVMPI_EVENT_OBJECT_DUMP, EVENTS_REQUEST_ONLY, NO_SOURCE, NO_SOURCE),
    T(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, EVENTS_CARRIED, NO_SOURCE, NO_SOURCE),
    T(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED, EVENTS_CARRIED, NO_SOURCE, NO_SOURCE),
    T(JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, EVENTS_CARRIED, NO_SOURCE, NO_SOURCE),
    T(JVMPI_EVENT_MONITOR_CONTENDED_ENTER, EVENTS_CARRIED, SEAM_SRC_MONITOR_CONTENDED, NO_SOURCE),
    T(JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, EVENTS_CARRIED, SEAM_SRC_MONITOR_CONTENDED, NO_SOURCE),
    /* Emulated from the enters (jvmpi/monitors.c); a wait releases a monitor
     * without an exit, so waits are watched too. */
    T(JVMPI_EVENT_MONITOR_CONTENDED_EXIT, EVENTS_CARRIED, SEAM_SRC_MONITOR_CONTENDED, SEAM_SRC_MONITOR_WAIT),
    /* Thread.sleep too: the backend wraps the VM's sleep native. */
    T(JVMPI_EVENT_MONITOR_WAIT, EVENTS_CARRIED, SEAM_SRC_MONITOR_WAIT, NO_SOURCE),
    T(JVMPI_EVENT_MONITOR_WAITED, EVENTS_CARRIED, SEAM_SRC_MONITOR_WAIT, NO_SOURCE),
    D(JVMPI_EVENT_MONITOR_DUMP, EVENTS_REQUEST_ONLY, NO_SOURCE, NO_SOURCE),
    D(JVMPI_EVENT_GC_START, EVENTS_CARRIED, SEAM_SRC_GC, NO_SOURCE),
    D(JVMPI_EVENT_GC_FINISH, EVENTS_CARRIED, SEAM_SRC_GC, NO_SOURCE),
};
#undef D
#undef T

events_kind events_kind_of(jint event_type)
{
    if (event_type <= 0 || event_type > JVMPI_MAX_EVENT_TYPE_VAL || descs[event_type].name == NULL) {
        return EVENTS_UNUSED;
    }
    return descs[event_type].kind;
}

const char *events_name(jint event_type)
{
    jint base = event_type & ~JVMPI_REQUESTED_EVENT;
    if (events_kind_of(base) == EVENTS_UNUSED) {
        return "(no such event)";
    }
    return descs[base].name;
}

/* Moves each source's count by delta; on a refusal, undoes what was done.
 * Called with source_lock held. */
static bool sources_adjust(const event_desc *d, int delta)
{
    bool ok = true;
    int done = 0;
    for (; done < MAX_SOURCES; done++) {
        int s = d->sources[done];
        if (s == NO_SOURCE) {
            continue;
        }
        int before = source_refs[s];
        source_refs[s] += delta;
        if ((before == 0) != (source_refs[s] == 0) && !seam_source_set((seam_source)s, source_refs[s] > 0)) {
            source_refs[s] = before;
            ok = false;
            break;
        }
    }
    if (!ok) {
        while (done-- > 0) {
            int s = d->sources[done];
            if (s == NO_SOURCE) {
                continue;
            }
            int before = source_refs[s];
            source_refs[s] -= delta;
            if ((before == 0) != (source_refs[s] == 0)) {
                seam_source_set((seam_source)s, source_refs[s] > 0);
            }
        }
    }
    return ok;
}

/* The events whose first enable and last disable made HotSpot 5.0 run a
 * full collection, not shown as GC_START/GC_FINISH. */
static bool heap_event(jint event_type)
{
    switch (event_type) {
    case JVMPI_EVENT_OBJECT_ALLOC:
    case JVMPI_EVENT_OBJECT_FREE:
    case JVMPI_EVENT_OBJECT_MOVE:
    case JVMPI_EVENT_ARENA_NEW:
    case JVMPI_EVENT_ARENA_DELETE:
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_GLOBALREF_FREE:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE:
        return true;
    default:
        return false;
    }
}

static jint set_enabled(int agent, jint event_type, bool on, const char *fn)
{
    /* JVMPI_NOT_AVAILABLE is the whole answer, as on JDK 5.0, so nothing is
     * printed unless asked: agents try numbers other VMs used, and HPROF
     * disables every number at exit.  Such a disable changes nothing, so it
     * is told at debug level only. */
    log_level_t level = on ? LOG_LEVEL_INFO : LOG_LEVEL_DEBUG;
    switch (events_kind_of(event_type)) {
    case EVENTS_UNUSED:
        LOG_AT(level, "%s: %d is not a JVMPI event type", fn, (int)event_type);
        return JVMPI_NOT_AVAILABLE;
    case EVENTS_REQUEST_ONLY:
        LOG_AT(level, "%s(%s): dumps are only sent through RequestEvent", fn, descs[event_type].name);
        return JVMPI_NOT_AVAILABLE;
    case EVENTS_NOT_YET:
        LOG_WARN("%s(%s): this event is not carried by the layer yet", fn, descs[event_type].name);
        return JVMPI_NOT_AVAILABLE;
    case EVENTS_CARRIED:
    case EVENTS_NEVER_SENT:
        break;
    }
    if (agent < 0 || agent >= AGENTS_MAX) {
        return JVMPI_FAIL;
    }
    bool refused = false;
    {
        /* Check and switch together: agents enable from several threads.
         * The JVM TI sources follow the first agent on and the last off. */
        pthread_mutex_lock(&source_lock);
        agents_mask was = atomic_load(&events_on[event_type]);
        agents_mask now = on ? was | AGENTS_BIT(agent) : was & ~AGENTS_BIT(agent);
        if ((was == 0) != (now == 0)) {
            bool heap = heap_event(event_type);
            if (heap) {
                gc_hidden_begin();
            }
            refused = !sources_adjust(&descs[event_type], on ? 1 : -1);
            if (heap) {
                gc_hidden_end();
            }
        }
        if (!refused && now != was) {
            if (now & ~was) {
                atomic_fetch_add(&events_generation, 1);
            }
            atomic_store(&events_on[event_type], now);
            if (event_type == JVMPI_EVENT_OBJECT_ALLOC) {
                ids_alloc_agents_changed(now);
            }
        }
        pthread_mutex_unlock(&source_lock);
    }
    if (refused) {
        LOG_ERROR("%s(%s): the VM refused the JVM TI events it needs", fn, descs[event_type].name);
        return JVMPI_FAIL;
    }
    if (on) {
        ledger_event_enabled(event_type);
    }
    LOG_DEBUG("%s(%s)", fn, descs[event_type].name);
    return JVMPI_SUCCESS;
}

jint events_enable(int agent, jint event_type) { return set_enabled(agent, event_type, true, "EnableEvent"); }
jint events_disable(int agent, jint event_type) { return set_enabled(agent, event_type, false, "DisableEvent"); }

void events_set_interface(int agent, JVMPI_Interface *table)
{
    if (agent >= 0 && agent < AGENTS_MAX) {
        ifaces[agent] = table;
    }
}

/* Agent k's handler for ev, read now (agents may set it late); NULL when
 * nothing may be delivered: after shutdown, or with no handler set. */
static void (*handler_for(int k, const JVMPI_Event *ev))(JVMPI_Event *)
{
    if (closed_for(ev->event_type)) {
        return NULL;
    }
    void (*notify)(JVMPI_Event *) = ifaces[k] != NULL ? ifaces[k]->NotifyEvent : NULL;
    if (notify == NULL && atomic_fetch_add(&dropped_no_handler[k], 1) == 0) {
        LOG_WARN("%s dropped: the agent %s has not set NotifyEvent", events_name(ev->event_type), agents_name(k));
    }
    return notify;
}

/* Who ev goes to: a request's answer and a dump to the agent that asked,
 * anything else to the agents that enabled it. */
static agents_mask targets(const JVMPI_Event *ev)
{
    jint base = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    if ((ev->event_type & JVMPI_REQUESTED_EVENT) != 0 || events_kind_of(base) == EVENTS_REQUEST_ONLY) {
        int t = agents_target();
        return t < 0 ? 0 : AGENTS_BIT(t);
    }
    return events_agents(base);
}

/* To each agent of mask in load order, each given the event as it was
 * built (a handler may write to its copy): the gate stage (gate.h) on to
 * the announce stage (defs.c) on to the delivery (deliver.h). */
static agents_mask deliver(agents_mask mask, JNIEnv *env, JNIEnv *env_id, thread_rec *me, JVMPI_Event *ev)
{
    if (env == NULL) {
        env = seam_current_env();
    }
    bool many = (mask & (mask - 1)) != 0;
    JVMPI_Event built;
    if (many) {
        built = *ev;
    }
    pass p = {.env = env, .env_id = env_id, .me = me, .ev = ev};
    p.me_told = me != NULL && !me->internal ? &me->announced : NULL;
    agents_mask done = 0;
    AGENTS_EACH(k, mask) {
        p.notify = handler_for((int)k, ev);
        if (p.notify == NULL) {
            continue;
        }
        if (done != 0) {
            *ev = built;
        } else if (ledger_active()) {
            ledger_event(env, me, ev);
        }
        p.agent = (int)k;
        gate_pass(&p);
        done |= AGENTS_BIT(k);
    }
    return done;
}

agents_mask events_deliver(JNIEnv *env, JVMPI_Event *ev) { return events_deliver_to(~(agents_mask)0, env, ev); }

agents_mask events_deliver_to(agents_mask mask, JNIEnv *env, JVMPI_Event *ev)
{
    mask &= targets(ev);
    if (mask == 0 || closed_for(ev->event_type)) {
        return 0;
    }
    whose w;
    if (!whose_decide(env, ev->event_type, &w)) {
        return 0;
    }
    agents_mask done = deliver(mask, env, w.env_id, w.me, ev);
    whose_done(&w);
    return done;
}

/* Method events come by the hundred million (each call of the program
 * makes two), so their usual case skips what the general path works out
 * for every event before the gate stage: one agent takes the event, the
 * calling thread is known, and no request, stand-in, quiet region, ledger
 * or shutdown is under way.  Anything else goes the general way.  Inline
 * into dispatch_method, with link-time optimization (methods.c). */
inline __attribute__((always_inline)) agents_mask events_deliver_method(JNIEnv *env, JVMPI_Event *ev)
{
    agents_mask mask = events_agents(ev->event_type);
    if (mask == 0) {
        return 0;
    }
    thread_rec *me = NULL;
    bool usual = (mask & (mask - 1)) == 0 && !ledger_active() &&
                 atomic_load_explicit(&shut_state, memory_order_acquire) == OPEN && (me = whose_usual(env)) != NULL;
    int k = usual ? __builtin_ctzll((unsigned long long)mask) : 0;
    void (*notify)(JVMPI_Event *) = usual && ifaces[k] != NULL ? ifaces[k]->NotifyEvent : NULL;
    if (notify == NULL) {
        return events_deliver_to(~(agents_mask)0, env, ev);
    }
    pass p = {.env = env, .env_id = me->info.env, .me = me, .me_told = &me->announced, .ev = ev, .agent = k, .notify = notify};
    gate_pass(&p);
    return mask;
}

void events_deliver_as(JNIEnv *env_id, JVMPI_Event *ev)
{
    agents_mask mask = targets(ev);
    if (mask != 0 && !whose_quiet()) {
        deliver(mask, NULL, env_id, NULL, ev);
    }
}

void events_shutdown(void)
{
    atomic_store_explicit(&shut_state, SHUT, memory_order_release);
    shutting_here = false;
}

bool events_is_shut_down(void) { return closed_for(-1); }

/* JDK 5.0 disengaged JVMPI once the JVM_SHUT_DOWN handler had returned;
 * while it runs, other threads' requests are answered (an agent may wait
 * there for its own thread to finish a dump).  A request admitted is
 * answered in full, even if the handler returns meanwhile: RequestEvent's
 * JVMPI_SUCCESS means the answer was delivered. */
bool events_request_begin(void)
{
    if (requesting_here == 0 && atomic_load_explicit(&shut_state, memory_order_acquire) == SHUT) {
        return false;
    }
    requesting_here++;
    return true;
}

void events_request_end(void) { requesting_here--; }

void events_reset(void)
{
    for (int i = 0; i <= JVMPI_MAX_EVENT_TYPE_VAL; i++) {
        atomic_store(&events_on[i], 0);
    }
    for (int k = 0; k < AGENTS_MAX; k++) {
        ifaces[k] = NULL;
        atomic_store(&dropped_no_handler[k], 0);
    }
    pthread_mutex_lock(&source_lock);
    memset(source_refs, 0, sizeof source_refs);
    pthread_mutex_unlock(&source_lock);
    atomic_store(&shut_state, OPEN);
    shutting_here = false;
}
