#include "whose.h"

#include "defs.h"
#include "seam.h"

TLS_FAST int whose_quiet_depth;
/* While set, this thread's events carry override_env (a GC window
 * delivered for a thread the agent knows, or an event of a thread it does
 * not know). */
TLS_FAST bool whose_override;
static TLS_FAST JNIEnv *override_env;
/* A Java thread the layer could not learn about (the VM's hidden threads). */
static TLS_FAST bool not_adoptable;
/* This thread's JNIEnv * while its java.lang.Thread was found in its
 * constructor (SEAM_ADOPT_UNBORN): it stays unknown until its ThreadStart,
 * which comes once the constructor has returned. */
static TLS_FAST JNIEnv *unborn_env;

static bool is_method_event(jint type)
{
    type &= ~JVMPI_REQUESTED_EVENT;
    return type == JVMPI_EVENT_METHOD_ENTRY || type == JVMPI_EVENT_METHOD_ENTRY2 || type == JVMPI_EVENT_METHOD_EXIT;
}

JNIEnv *whose_as_begin(whose_as *saved, JNIEnv *env_id)
{
    saved->pushed = true;
    saved->set = whose_override;
    saved->env = override_env;
    saved->held = NULL;
    if (env_id == NULL) {
        saved->held = threads_stand_in();
        env_id = saved->held != NULL ? saved->held->info.env : NULL;
    }
    override_env = env_id;
    whose_override = true;
    return env_id;
}

void whose_as_end(const whose_as *saved)
{
    whose_override = saved->set;
    override_env = saved->env;
    threads_stand_in_done(saved->held);
}

/* A thread the layer does not know yet, learnt now if the VM can say who
 * it is.  JDK 25 runs DestroyJavaVM's shutdown hooks before its
 * ThreadStart.  Not while its Thread is being constructed: its
 * THREAD_START would come before that object's OBJECT_ALLOC, and without
 * a name.  Asked once per thread. */
static thread_rec *adopt(JNIEnv *env)
{
    if (env == NULL || not_adoptable || env == unborn_env) {
        return NULL;
    }
    seam_adoption a = seam_thread_adopt(env);
    thread_rec *me = a == SEAM_ADOPTED ? threads_self(env) : NULL;
    unborn_env = a == SEAM_ADOPT_UNBORN ? env : NULL;
    not_adoptable = me == NULL && a != SEAM_ADOPT_UNBORN;
    return me;
}

bool whose_decide(JNIEnv *env, jint event_type, whose *out)
{
    out->me = NULL;
    out->as.pushed = false;
    if (whose_quiet_depth > 0) {
        return false;
    }
    if (whose_override) {
        out->env_id = override_env;
        return true;
    }
    /* The phase read as the shared state it is, rather than asked of the
     * layer, where the event came from: the stages call only forward. */
    if (atomic_load(&layer_phase_now) != LAYER_LIVE) {
        /* CLASS_LOAD_HOOK before VM init: no thread is known yet, as on JDK 5.0. */
        out->env_id = env;
        return true;
    }
    thread_rec *me = threads_self(env);
    if (me == NULL) {
        me = adopt(env);
    }
    if (me != NULL && me->internal) {
        return false; /* the layer's own thread: what its Java code does is no event */
    }
    if (me == NULL && env != NULL && env == unborn_env && is_method_event(event_type)) {
        /* The constructor's frames, all gone before the thread starts: on a
         * stand-in thread they would unbalance its stack. */
        return false;
    }
    if (me == NULL) {
        /* A stand-in is a thread the agent was told about: while the
         * start-up replay runs, none is yet. */
        if (events_enabled(JVMPI_EVENT_THREAD_START)) {
            once_wait_for_replay();
        }
        out->env_id = whose_as_begin(&out->as, NULL);
        return true;
    }
    out->me = me;
    out->env_id = me->info.env;
    return true;
}

JNIEnv *whose_env_id(JNIEnv *env)
{
    if (whose_override) {
        return override_env;
    }
    thread_rec *me = threads_self(env);
    return me != NULL && !me->internal ? me->info.env : NULL;
}

JNIEnv *whose_known_env(JNIEnv *env)
{
    thread_rec *t = threads_self(env);
    return t != NULL ? t->info.env : env;
}

void whose_quiet_begin(void) { whose_quiet_depth++; }
void whose_quiet_end(void) { whose_quiet_depth--; }
