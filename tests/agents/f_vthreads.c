/*
 * f_vthreads - virtual threads are JVMPI threads (JDK 21 and later).
 *
 * Options: out=FILE[,expect=threads|carriers][,roots=expect].  Run on F_VThreads, whose
 * virtual threads "fv-0".."fv-N" each allocate an F_VtWork in work(), sleep
 * (leaving their carrier) and allocate another; "fv-parked" stays parked
 * while main allocates an F_Probe.
 *
 * expect=threads (the default), the agent checks, as a 2002 agent would
 * simply rely on:
 *  - every fv-* thread has a THREAD_START, on itself (env_id ==
 *    thread_env_id), in group VirtualThreads (as Thread.getThreadGroup()
 *    says), with a thread_env_id no other live thread has, and a
 *    THREAD_END on itself with the same thread_env_id;
 *  - each F_VtWork's OBJECT_ALLOC names a thread that had its THREAD_START,
 *    one of the fv-* threads, and the thread-local storage set at its
 *    THREAD_START (so the storage is the virtual thread's own, and its
 *    env_id the same on whichever carrier it runs);
 *  - GetCallTrace on that env_id names F_VThreads.work at the top;
 *  - each fv-* thread allocated exactly two F_VtWork (before and after its
 *    sleep) under its own env_id;
 *  - at F_Probe (allocated by main): fv-parked, parked and off its carrier,
 *    is CONDVAR_WAIT for GetThreadStatus, and its call trace names
 *    F_VThreads.parkedBody; fv-blocked is MONITOR_WAIT, and MONITOR_DUMP
 *    has a Java monitor owned by fv-holder with fv-blocked entering it;
 *    fv-blocked's MONITOR_CONTENDED_ENTER into it carries its own env_id; a level 1
 *    HEAP_DUMP has a trace of fv-parked and (roots=expect: where JVM TI
 *    reports the references of an unmounted virtual thread's frames) stack
 *    roots that name it.
 * expect=carriers (the layer's vthreads=carriers): no fv-* thread is
 * reported, and every F_VtWork is allocated on a platform thread the agent
 * was told about.
 */
#include "b_common.h"

#include <arpa/inet.h>
#include <stdint.h>

#define MAX_VT 4096

typedef struct {
    char name[32];
    JNIEnv *env;
    int started, ended, works;
} vt;

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static vt vts[MAX_VT];
static int n_vts;
static int carriers_mode, expect_roots;
static jobjectID work_class, probe_class, f_class;
static jmethodID work_method, parked_method;
static long works_seen, traces_ok, platform_threads;
static JNIEnv *platform_envs[256];

static int is_fv(const char *name) { return name && strncmp(name, "fv-", 3) == 0; }

/* Under lk. */
static vt *by_env(JNIEnv *env)
{
    for (int i = 0; i < n_vts; i++)
        if (vts[i].env == env && vts[i].started && !vts[i].ended)
            return &vts[i];
    return NULL;
}

static int is_platform(JNIEnv *env)
{
    for (long i = 0; i < platform_threads && i < 256; i++)
        if (platform_envs[i] == env)
            return 1;
    return 0;
}

static void on_class_load(JVMPI_Event *ev)
{
    const char *name = ev->u.class_load.class_name;
    if (!name)
        return;
    int work = strcmp(name, "F_VThreads$F_VtWork") == 0, probe = strcmp(name, "F_VThreads$F_Probe") == 0;
    int main_class = strcmp(name, "F_VThreads") == 0;
    pthread_mutex_lock(&lk);
    if (work)
        work_class = ev->u.class_load.class_id;
    if (probe)
        probe_class = ev->u.class_load.class_id;
    if (main_class) {
        f_class = ev->u.class_load.class_id;
        for (jint i = 0; i < ev->u.class_load.num_methods; i++) {
            JVMPI_Method *m = &ev->u.class_load.methods[i];
            if (strcmp(m->method_name, "work") == 0)
                work_method = m->method_id;
            else if (strcmp(m->method_name, "parkedBody") == 0)
                parked_method = m->method_id;
        }
    }
    pthread_mutex_unlock(&lk);
}

static void on_thread_start(JVMPI_Event *ev)
{
    const char *name = ev->u.thread_start.thread_name;
    JNIEnv *tenv = ev->u.thread_start.thread_env_id;
    if (!is_fv(name)) {
        pthread_mutex_lock(&lk);
        if (platform_threads < 256)
            platform_envs[platform_threads] = tenv;
        platform_threads++;
        pthread_mutex_unlock(&lk);
        return;
    }
    if (carriers_mode) {
        b_fail("THREAD_START of virtual thread %s with vthreads=carriers", name);
        return;
    }
    if (ev->env_id != tenv)
        b_fail("THREAD_START %s: env_id %p is not its thread_env_id %p", name, (void *)ev->env_id, (void *)tenv);
    if (!ev->u.thread_start.thread_id)
        b_fail("THREAD_START %s: no thread_id", name);
    /* Thread.getThreadGroup() of a virtual thread */
    const char *group = ev->u.thread_start.group_name;
    if (!group || strcmp(group, "VirtualThreads") != 0)
        b_fail("THREAD_START %s: group %s, not VirtualThreads", name, group ? group : "(null)");
    pthread_mutex_lock(&lk);
    vt *clash = by_env(tenv);
    int platform = is_platform(tenv);
    vt *v = n_vts < MAX_VT ? &vts[n_vts++] : NULL;
    if (v) {
        snprintf(v->name, sizeof v->name, "%s", name);
        v->env = tenv;
        v->started = 1;
    }
    pthread_mutex_unlock(&lk);
    if (clash)
        b_fail("THREAD_START %s: thread_env_id %p is also live thread %s's", name, (void *)tenv, clash->name);
    if (platform)
        b_fail("THREAD_START %s: thread_env_id %p is a platform thread's (a carrier's?)", name, (void *)tenv);
    if (!v) {
        b_fail("more than %d virtual threads", MAX_VT);
        return;
    }
    b_pi->SetThreadLocalStorage(tenv, v);
    if (b_pi->GetThreadObject(tenv) != ev->u.thread_start.thread_id)
        b_fail("THREAD_START %s: GetThreadObject(thread_env_id) is not its thread_id", name);
}

static void on_thread_end(JVMPI_Event *ev)
{
    JNIEnv *tenv = ev->u.thread_start.thread_env_id;
    pthread_mutex_lock(&lk);
    vt *v = by_env(tenv);
    if (v)
        v->ended = 1;
    pthread_mutex_unlock(&lk);
    if (!v)
        return;
    if (ev->env_id != tenv)
        b_fail("THREAD_END %s: env_id %p is not its thread_env_id %p", v->name, (void *)ev->env_id, (void *)tenv);
    if (!ev->u.thread_start.thread_name || strcmp(ev->u.thread_start.thread_name, v->name) != 0)
        b_fail("THREAD_END of %s names %s", v->name, ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "(null)");
}

/* Whether method m is among the top `within` frames of env's call trace
 * (depth 16); *num_frames: how many frames the trace had. */
static int trace_has(JNIEnv *env, jmethodID m, int within, int *num_frames)
{
    JVMPI_CallFrame frames[16];
    JVMPI_CallTrace t;
    memset(&t, 0, sizeof t);
    t.env_id = env;
    t.frames = frames;
    b_pi->GetCallTrace(&t, 16);
    *num_frames = t.num_frames;
    for (jint i = 0; i < t.num_frames && i < within; i++)
        if (frames[i].method_id == m)
            return 1;
    return 0;
}

/* GetThreadStatus without the SUSPENDED and INTERRUPTED bits. */
static jint base_status(JNIEnv *env)
{
    jint st = b_pi->GetThreadStatus(env);
    return st < 0 ? st : st & ~(JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED);
}

/* The top frame of env's trace is method m. */
static int top_is(JNIEnv *env, jmethodID m, const char *what)
{
    int n;
    if (trace_has(env, m, 3, &n))
        return 1;
    b_fail("%s: GetCallTrace gave %d frames, none of the top three is the expected method", what, n);
    return 0;
}

static JNIEnv *env_of(const char *name)
{
    JNIEnv *env = NULL;
    pthread_mutex_lock(&lk);
    for (int i = 0; i < n_vts; i++)
        if (strcmp(vts[i].name, name) == 0 && !vts[i].ended)
            env = vts[i].env;
    pthread_mutex_unlock(&lk);
    return env;
}

static unsigned rd_u4(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return ntohl(v);
}

/* MONITOR_DUMP: a Java monitor owned by holder with blocked entering it.
 * fv-blocked may also contend for a monitor of the JDK's own: its
 * VirtualThread's interruptLock, which its unmount takes and main's
 * getState() loop takes too (seen on JDK 21): only its entries into the
 * monitor the dump shows count. */
#define MAX_ENTERS 16
static int monitor_seen, blocked_entered, n_blocked_enters;
static jobjectID lock_object, blocked_enters[MAX_ENTERS];
static JNIEnv *want_owner, *want_entering;

static void on_monitor_dump(JVMPI_Event *ev)
{
    const unsigned char *p = (const unsigned char *)ev->u.monitor_dump.begin;
    const unsigned char *end = (const unsigned char *)ev->u.monitor_dump.end;
    const size_t ptr = sizeof(void *);
    while (p < end) {
        int kind = *p++;
        if (kind == JVMPI_MONITOR_RAW)
            p += 2 * ptr;
        else if (kind != JVMPI_MONITOR_JAVA) {
            b_fail("MONITOR_DUMP: record kind %d", kind);
            return;
        }
        jobjectID object = NULL;
        if (kind == JVMPI_MONITOR_JAVA) {
            memcpy(&object, p, ptr);
            p += ptr;
        }
        JNIEnv *owner;
        memcpy(&owner, p, ptr);
        p += ptr + 4; /* owner, entry count */
        unsigned n = rd_u4(p);
        p += 4;
        int entering = 0;
        for (unsigned i = 0; i < n; i++, p += ptr) {
            JNIEnv *e;
            memcpy(&e, p, ptr);
            entering = entering || e == want_entering;
        }
        unsigned m = rd_u4(p);
        p += 4 + (size_t)m * ptr;
        if (kind == JVMPI_MONITOR_JAVA && owner == want_owner && entering) {
            monitor_seen = 1;
            lock_object = object;
        }
        else if (kind == JVMPI_MONITOR_JAVA)
            b_log("MONITOR_DUMP: a Java monitor owned by %p, %u entering (looking for %p owning, %p entering)",
                  (void *)owner, n, (void *)want_owner, (void *)want_entering);
    }
}

/* HEAP_DUMP (level 1): fv-parked has a trace, and a stack root (JAVA_FRAME
 * or JNI_LOCAL) names it, if the VM reports its frames' references. */
static JNIEnv *want_frames_of;
static int dump_trace_seen, dump_roots_seen;

static void on_heap_dump(JVMPI_Event *ev)
{
    for (jint i = 0; i < ev->u.heap_dump.num_traces; i++)
        if (ev->u.heap_dump.traces[i].env_id == want_frames_of && ev->u.heap_dump.traces[i].num_frames > 0)
            dump_trace_seen = 1;
    const unsigned char *p = (const unsigned char *)ev->u.heap_dump.begin;
    const unsigned char *end = (const unsigned char *)ev->u.heap_dump.end;
    const size_t ptr = sizeof(void *);
    /* the roots come first; the object records after them are not read */
    while (p < end) {
        int kind = *p++;
        JNIEnv *env = NULL;
        switch (kind) {
        case JVMPI_GC_ROOT_UNKNOWN:
        case JVMPI_GC_ROOT_STICKY_CLASS:
        case JVMPI_GC_ROOT_MONITOR_USED:
            p += ptr;
            break;
        case JVMPI_GC_ROOT_JNI_GLOBAL:
            p += 2 * ptr;
            break;
        case JVMPI_GC_ROOT_JNI_LOCAL:
        case JVMPI_GC_ROOT_JAVA_FRAME:
            memcpy(&env, p + ptr, ptr);
            p += 2 * ptr + 4;
            dump_roots_seen += env == want_frames_of;
            break;
        case JVMPI_GC_ROOT_NATIVE_STACK:
        case JVMPI_GC_ROOT_THREAD_BLOCK:
            p += 2 * ptr;
            break;
        default:
            return;
        }
    }
}

static void on_probe(void)
{
    if (carriers_mode)
        return;
    JNIEnv *env = env_of("fv-parked");
    pthread_mutex_lock(&lk);
    jmethodID m = parked_method;
    pthread_mutex_unlock(&lk);
    want_owner = env_of("fv-holder");
    want_entering = env_of("fv-blocked");
    if (b_check(want_owner && want_entering, "fv-holder and fv-blocked were reported before main's F_Probe")) {
        b_pi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL);
        b_check(monitor_seen, "MONITOR_DUMP: a Java monitor owned by fv-holder, fv-blocked waiting to enter it");
        jint st = base_status(want_entering);
        b_check(st == JVMPI_THREAD_MONITOR_WAIT, "fv-blocked: GetThreadStatus = MONITOR_WAIT (got %d)", (int)st);
    }
    if (!b_check(env != NULL, "fv-parked was reported before main's F_Probe"))
        return;
    want_frames_of = env;
    JVMPI_HeapDumpArg level = {JVMPI_DUMP_LEVEL_1};
    b_pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &level);
    b_check(dump_trace_seen, "HEAP_DUMP: a call trace of fv-parked");
    if (expect_roots)
        b_check(dump_roots_seen > 0, "HEAP_DUMP: %d stack roots name fv-parked", dump_roots_seen);
    else
        b_log("HEAP_DUMP: %d stack roots of fv-parked", dump_roots_seen);
    jint status = base_status(env);
    b_check(status == JVMPI_THREAD_CONDVAR_WAIT,
            "fv-parked, parked off its carrier: GetThreadStatus = CONDVAR_WAIT (got %d)", (int)status);
    int n;
    int found = trace_has(env, m, 16, &n);
    b_check(found, "fv-parked's call trace (%d frames) names F_VThreads.parkedBody", n);
}

static void on_alloc(JVMPI_Event *ev)
{
    pthread_mutex_lock(&lk);
    int work = work_class && ev->u.obj_alloc.class_id == work_class;
    int probe = probe_class && ev->u.obj_alloc.class_id == probe_class;
    jmethodID m = work_method;
    pthread_mutex_unlock(&lk);
    if (probe)
        on_probe();
    if (!work)
        return;
    JNIEnv *env = ev->env_id;
    if (carriers_mode) {
        pthread_mutex_lock(&lk);
        int known = is_platform(env);
        works_seen++;
        pthread_mutex_unlock(&lk);
        if (!known)
            b_fail("F_VtWork allocated on env %p, no platform thread the agent was told about", (void *)env);
        return;
    }
    pthread_mutex_lock(&lk);
    vt *v = by_env(env);
    if (v)
        v->works++;
    works_seen++;
    pthread_mutex_unlock(&lk);
    if (!v) {
        b_fail("F_VtWork allocated on env %p, which is no virtual thread's that had its THREAD_START", (void *)env);
        return;
    }
    void *tls = b_pi->GetThreadLocalStorage(env);
    if (tls != v)
        b_fail("F_VtWork of %s: its thread-local storage is %p, not what its THREAD_START set (%p)", v->name, tls,
               (void *)v);
    if (top_is(env, m, v->name)) {
        pthread_mutex_lock(&lk);
        traces_ok++;
        pthread_mutex_unlock(&lk);
    }
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_THREAD_START:
        on_thread_start(ev);
        break;
    case JVMPI_EVENT_THREAD_END:
        on_thread_end(ev);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_alloc(ev);
        break;
    case JVMPI_EVENT_MONITOR_DUMP:
        on_monitor_dump(ev);
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        on_heap_dump(ev);
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER: {
        pthread_mutex_lock(&lk);
        vt *v = by_env(ev->env_id);
        if (v && strcmp(v->name, "fv-blocked") == 0 && n_blocked_enters < MAX_ENTERS)
            blocked_enters[n_blocked_enters++] = ev->u.monitor.object;
        pthread_mutex_unlock(&lk);
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN: {
        pthread_mutex_lock(&lk);
        int started = 0, ended = 0, two = 0;
        for (int i = 0; i < n_vts; i++) {
            started += vts[i].started;
            ended += vts[i].ended;
            if (strncmp(vts[i].name, "fv-", 3) == 0 && vts[i].name[3] >= '0' && vts[i].name[3] <= '9')
                two += vts[i].works == 2;
        }
        long works = works_seen, traces = traces_ok;
        for (int i = 0; i < n_blocked_enters; i++)
            blocked_entered += lock_object != NULL && blocked_enters[i] == lock_object;
        pthread_mutex_unlock(&lk);
        if (carriers_mode) {
            b_check(started == 0, "vthreads=carriers: no virtual thread reported");
            b_check(works > 0, "vthreads=carriers: %ld F_VtWork allocations, all on platform threads", works);
        } else {
            b_check(started > 1 && ended == started, "%d virtual threads started, %d ended", started, ended);
            b_check(two == started - 3, "%d of %d fv-N threads allocated both F_VtWork under their own env_id", two,
                    started - 3);
            b_check(works > 0 && traces == works, "%ld of %ld F_VtWork allocations: GetCallTrace names work()",
                    traces, works);
            b_check(blocked_entered == 1, "one MONITOR_CONTENDED_ENTER with fv-blocked's env_id into the monitor fv-holder held (%d of %d)",
                    blocked_entered, n_blocked_enters);
        }
        b_summary("f_vthreads");
        break;
    }
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (b_setup(vm, options, "f_vthreads") != JNI_OK)
        return JNI_ERR;
    const char *expect = b_opt("expect");
    carriers_mode = expect && strcmp(expect, "carriers") == 0;
    const char *roots = b_opt("roots");
    expect_roots = roots && strcmp(roots, "expect") == 0;
    b_pi->NotifyEvent = notify;
    jint events[] = {JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END,
                     JVMPI_EVENT_OBJECT_ALLOC, JVMPI_EVENT_MONITOR_CONTENDED_ENTER, JVMPI_EVENT_JVM_SHUT_DOWN};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        if (b_pi->EnableEvent(events[i], NULL) != JVMPI_SUCCESS) {
            b_fail("EnableEvent(%d) failed", (int)events[i]);
            return JNI_ERR;
        }
    return JNI_OK;
}
