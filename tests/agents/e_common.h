/*
 * e_common.h - what the e_*.c agents share.
 *
 * The e_ agents behave like the JVMPI agents of around 2002 (HPROF,
 * OProfile's agent, event tracers): they use jvmpi.h (and jni.h through it),
 * libc and pthreads only, and they trust every rule of the JVMPI
 * specification.  A broken rule is fatal, as it was for them: e_fail prints
 * "FAIL <what>" to the out= file and to stderr, then aborts the process.
 * With the option keepgoing=1 a failure is counted instead (the first few of
 * each kind are printed) and the run goes on, so that one run shows every
 * rule a layer breaks; the closing lines count them by kind.
 *
 * Each agent is a shared library of its own, so everything here is static.
 *
 * What is here: output and options; a pointer map; the enabled events and
 * the check that nothing else arrives; RequestEvent with its answer caught
 * on the calling thread; a thread table keyed by JNIEnv *; a class table
 * filled from CLASS_LOAD; readers for the level 2 heap dump and the monitor
 * dump formats.
 */
#ifndef E_COMMON_H_
#define E_COMMON_H_

#include <jvmpi.h>

#include "agent_util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static JVMPI_Interface *e_pi;
static JavaVM *e_vm;
static const char *e_agent = "e_agent";
static FILE *e_out;
static pthread_mutex_t e_io_lock = PTHREAD_MUTEX_INITIALIZER;
static int e_keepgoing;
static long e_passes, e_failures;
static int e_shut_down; /* JVM_SHUT_DOWN handled: later events are ignored */
static pthread_t e_vm_thread; /* the OS thread that ran JVM_OnLoad */
static int e_trace;           /* trace=1: thread events are written out */

/* ---- output ---------------------------------------------------------------- */

static inline void e_vline(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
    fputs(prefix, f);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    fflush(f);
}

__attribute__((format(printf, 1, 2)))
static inline void e_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&e_io_lock);
    e_vline(e_out ? e_out : stderr, "", fmt, ap);
    pthread_mutex_unlock(&e_io_lock);
    va_end(ap);
}

/* Failures of one kind: one format string (one place in the code) and one
 * first word (the event, for the messages that start with it).  In keepgoing
 * mode a handler that sees a million events must not print a million lines:
 * the first few of each kind are printed, and the closing summary counts
 * them all. */
typedef struct {
    uint64_t key;
    long n;
    char first[300];
} e_kind;

static e_kind e_kinds[256];
static int e_nkinds;

static inline uint64_t e_kind_key(const char *fmt, const char *msg)
{
    uint64_t h = (uint64_t)(uintptr_t)fmt * 0x9e3779b97f4a7c15ULL;
    for (const char *m = msg; *m && *m != ' '; m++)
        h = (h ^ (unsigned char)*m) * 1099511628211ULL;
    return h;
}

__attribute__((format(printf, 1, 2)))
static inline void e_fail(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    uint64_t key = e_kind_key(fmt, msg);
    pthread_mutex_lock(&e_io_lock);
    e_failures++;
    long n = 1;
    int i = 0;
    while (i < e_nkinds && e_kinds[i].key != key)
        i++;
    if (i < e_nkinds) {
        n = ++e_kinds[i].n;
    } else if (e_nkinds < (int)(sizeof e_kinds / sizeof e_kinds[0])) {
        e_kinds[e_nkinds].key = key;
        e_kinds[e_nkinds].n = 1;
        size_t len = strlen(msg);
        if (len >= sizeof e_kinds[0].first)
            len = sizeof e_kinds[0].first - 1;
        memcpy(e_kinds[e_nkinds].first, msg, len);
        e_kinds[e_nkinds].first[len] = '\0';
        e_nkinds++;
    } else {
        n = 1000; /* too many kinds to tell apart: counted, not printed */
    }
    if (n <= 3 || !e_keepgoing) {
        fprintf(stderr, "FAIL %s\n", msg);
        fflush(stderr);
        if (e_out) {
            fprintf(e_out, "FAIL %s\n", msg);
            fflush(e_out);
        }
    }
    pthread_mutex_unlock(&e_io_lock);
    if (!e_keepgoing) {
        /* What a 2002 agent did on a broken promise: stop the VM at once,
         * before the broken data spreads. */
        fflush(NULL);
        abort();
    }
}

#define E_FAIL e_fail

/* A check that held. */
static inline void e_pass(void)
{
    __atomic_add_fetch(&e_passes, 1, __ATOMIC_RELAXED);
}

/* The closing line that tests/integration/lib.sh's expect_summary reads,
 * after the failures by kind (keepgoing mode). */
static inline void e_summary(void)
{
    pthread_mutex_lock(&e_io_lock);
    long failed = e_failures;
    for (int i = 0; i < e_nkinds && e_out; i++)
        fprintf(e_out, "failures: %ld x %s\n", e_kinds[i].n, e_kinds[i].first);
    pthread_mutex_unlock(&e_io_lock);
    e_say("%s: finished, %ld checks passed, %ld failed", e_agent, __atomic_load_n(&e_passes, __ATOMIC_SEQ_CST),
          failed);
}

/* A recursive mutex: the e_ agents' tables, whose handlers request events
 * and handle the answers inside their own call. */
static inline void e_recursive_lock_init(pthread_mutex_t *m)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(m, &a);
    pthread_mutexattr_destroy(&a);
}

/* ---- options: "k1=v1,k2=v2" ------------------------------------------------- */

/* Value of KEY (malloc'ed), or NULL. */
static inline char *e_opt(const char *options, const char *key)
{
    return agent_opt(options, key);
}

static inline long e_opt_long(const char *options, const char *key, long dflt)
{
    char *v = e_opt(options, key);
    long r = v ? strtol(v, NULL, 10) : dflt;
    free(v);
    return r;
}

static inline void e_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* ---- a timer: an agent's system thread that calls f("the timer") n times,
 * the first ms milliseconds after it starts, then every ms.  One per agent.
 * The rounds are owed, not hoped for: when JVM_SHUT_DOWN comes first (a
 * short run on a fast machine), e_timer_stop, first thing in that handler,
 * has the timer make the rounds still owed at once and waits for them, so
 * a test never depends on how fast the machine ran the program.  The VM
 * then does not end half-way through a round either, as HPROF's dump lock
 * kept it from ending half-way through a dump.  The timer waits on a raw
 * monitor, not a mutex: a handler blocked on one does not hold GC back (the
 * JVMPI specification's thread suspended mode), and a round may need a
 * collection. */
typedef struct {
    int n;
    long ms;
    void (*f)(const char *why);
    JVMPI_RawMonitor busy;
    int hurry;    /* under busy: JVM_SHUT_DOWN has come, no more waiting */
    int finished; /* under busy: every round made */
} e_timer_job;

static inline e_timer_job *e_timer_of_agent(void)
{
    static e_timer_job job;
    return &job;
}

static inline long e_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static inline void e_timer_main(void *unused)
{
    (void)unused;
    e_timer_job *job = e_timer_of_agent();
    e_pi->RawMonitorEnter(job->busy);
    for (int i = 0; i < job->n; i++) {
        /* A raw monitor's wait may end early: the deadline decides. */
        for (long due = e_now_ms() + job->ms, left; !job->hurry && (left = due - e_now_ms()) > 0;)
            e_pi->RawMonitorWait(job->busy, left);
        job->f("the timer");
    }
    job->finished = 1;
    e_pi->RawMonitorNotifyAll(job->busy);
    e_pi->RawMonitorExit(job->busy);
}

/* From JVM_INIT_DONE on (CreateSystemThread needs it). */
static inline void e_timer_start(const char *thread_name, int n, long ms, void (*f)(const char *why))
{
    if (n <= 0)
        return;
    JVMPI_RawMonitor busy = e_pi->RawMonitorCreate("e_timer round");
    if (!busy) {
        E_FAIL("RawMonitorCreate(e_timer round) failed");
        return;
    }
    *e_timer_of_agent() = (e_timer_job){n, ms, f, busy, 0, 0};
    if (e_pi->CreateSystemThread((char *)thread_name, JVMPI_NORMAL_PRIORITY, e_timer_main) != JNI_OK) {
        E_FAIL("CreateSystemThread(%s) failed", thread_name);
        e_timer_of_agent()->busy = NULL;
    }
}

/* In the JVM_SHUT_DOWN handler, before its summary: the rounds still owed
 * are made now, and the handler waits for them. */
static inline void e_timer_stop(void)
{
    e_timer_job *job = e_timer_of_agent();
    if (!job->busy)
        return;
    e_pi->RawMonitorEnter(job->busy);
    job->hurry = 1;
    e_pi->RawMonitorNotifyAll(job->busy);
    while (!job->finished)
        e_pi->RawMonitorWait(job->busy, 0);
    e_pi->RawMonitorExit(job->busy);
}

/* ---- a map from non-NULL pointers to pointers; callers lock ------------------
 * Open addressing.  Deleting leaves a tombstone and never allocates, so it may
 * be done in an OBJECT_FREE handler (thread suspended mode: no malloc). */
/* Never a key: on JDK 26 and later a method ID can be 1 (jmethodIDs count from
 * 1), so no small value will do. */
#define E_TOMB ((const void *)UINTPTR_MAX)

typedef struct {
    const void *key;
    void *val;
} e_slot;

typedef struct {
    e_slot *s;
    size_t cap, used, live; /* used counts tombstones too */
} e_map;

static inline size_t e_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ULL;
    x ^= x >> 29;
    return (size_t)x;
}

static inline e_slot *e_map_find(const e_map *m, const void *key)
{
    if (!m->cap || !key || key == E_TOMB)
        return NULL;
    for (size_t i = e_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->s[i].key == key)
            return &m->s[i];
        if (!m->s[i].key)
            return NULL;
    }
}

static inline void *e_map_get(const e_map *m, const void *key)
{
    e_slot *s = e_map_find(m, key);
    return s ? s->val : NULL;
}

static inline void e_map_grow(e_map *m)
{
    size_t ncap = m->cap ? m->cap : 1024;
    while (ncap < 4 * (m->live + 1))
        ncap *= 2;
    e_slot *ns = calloc(ncap, sizeof *ns);
    if (!ns) {
        fputs("FAIL out of memory\n", stderr);
        abort();
    }
    for (size_t i = 0; i < m->cap; i++) {
        const void *k = m->s[i].key;
        if (!k || k == E_TOMB)
            continue;
        size_t j = e_hash(k) & (ncap - 1);
        while (ns[j].key)
            j = (j + 1) & (ncap - 1);
        ns[j] = m->s[i];
    }
    free(m->s);
    m->s = ns;
    m->cap = ncap;
    m->used = m->live;
}

/* Sets KEY's value; returns 1 if KEY was new. */
static inline int e_map_put(e_map *m, const void *key, void *val)
{
    e_slot *s = e_map_find(m, key);
    if (s) {
        s->val = val;
        return 0;
    }
    if ((m->used + 1) * 2 > m->cap)
        e_map_grow(m);
    size_t j = e_hash(key) & (m->cap - 1);
    while (m->s[j].key && m->s[j].key != E_TOMB)
        j = (j + 1) & (m->cap - 1);
    if (!m->s[j].key)
        m->used++;
    m->s[j].key = key;
    m->s[j].val = val;
    m->live++;
    return 1;
}

/* Removes KEY; returns 1 if it was there. */
static inline int e_map_del(e_map *m, const void *key)
{
    e_slot *s = e_map_find(m, key);
    if (!s)
        return 0;
    s->key = E_TOMB;
    s->val = NULL;
    m->live--;
    return 1;
}

/* ---- event names -------------------------------------------------------------- */

static inline const char *e_event_name(jint type)
{
    switch (type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_METHOD_ENTRY: return "METHOD_ENTRY";
    case JVMPI_EVENT_METHOD_ENTRY2: return "METHOD_ENTRY2";
    case JVMPI_EVENT_METHOD_EXIT: return "METHOD_EXIT";
    case JVMPI_EVENT_OBJECT_ALLOC: return "OBJECT_ALLOC";
    case JVMPI_EVENT_OBJECT_FREE: return "OBJECT_FREE";
    case JVMPI_EVENT_OBJECT_MOVE: return "OBJECT_MOVE";
    case JVMPI_EVENT_COMPILED_METHOD_LOAD: return "COMPILED_METHOD_LOAD";
    case JVMPI_EVENT_COMPILED_METHOD_UNLOAD: return "COMPILED_METHOD_UNLOAD";
    case JVMPI_EVENT_INSTRUCTION_START: return "INSTRUCTION_START";
    case JVMPI_EVENT_THREAD_START: return "THREAD_START";
    case JVMPI_EVENT_THREAD_END: return "THREAD_END";
    case JVMPI_EVENT_CLASS_LOAD_HOOK: return "CLASS_LOAD_HOOK";
    case JVMPI_EVENT_HEAP_DUMP: return "HEAP_DUMP";
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC: return "JNI_GLOBALREF_ALLOC";
    case JVMPI_EVENT_JNI_GLOBALREF_FREE: return "JNI_GLOBALREF_FREE";
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC: return "JNI_WEAK_GLOBALREF_ALLOC";
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE: return "JNI_WEAK_GLOBALREF_FREE";
    case JVMPI_EVENT_CLASS_LOAD: return "CLASS_LOAD";
    case JVMPI_EVENT_CLASS_UNLOAD: return "CLASS_UNLOAD";
    case JVMPI_EVENT_DATA_DUMP_REQUEST: return "DATA_DUMP_REQUEST";
    case JVMPI_EVENT_DATA_RESET_REQUEST: return "DATA_RESET_REQUEST";
    case JVMPI_EVENT_JVM_INIT_DONE: return "JVM_INIT_DONE";
    case JVMPI_EVENT_JVM_SHUT_DOWN: return "JVM_SHUT_DOWN";
    case JVMPI_EVENT_ARENA_NEW: return "ARENA_NEW";
    case JVMPI_EVENT_ARENA_DELETE: return "ARENA_DELETE";
    case JVMPI_EVENT_OBJECT_DUMP: return "OBJECT_DUMP";
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER: return "RAW_MONITOR_CONTENDED_ENTER";
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED: return "RAW_MONITOR_CONTENDED_ENTERED";
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT: return "RAW_MONITOR_CONTENDED_EXIT";
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER: return "MONITOR_CONTENDED_ENTER";
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED: return "MONITOR_CONTENDED_ENTERED";
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT: return "MONITOR_CONTENDED_EXIT";
    case JVMPI_EVENT_MONITOR_WAIT: return "MONITOR_WAIT";
    case JVMPI_EVENT_MONITOR_WAITED: return "MONITOR_WAITED";
    case JVMPI_EVENT_MONITOR_DUMP: return "MONITOR_DUMP";
    case JVMPI_EVENT_GC_START: return "GC_START";
    case JVMPI_EVENT_GC_FINISH: return "GC_FINISH";
    default: return "(no such event)";
    }
}

/* ---- start-up, enabled events, requests --------------------------------------- */

static int e_on[JVMPI_MAX_EVENT_TYPE_VAL + 1];
static pthread_key_t e_req_key;  /* the RequestEvent in progress (e_req) */
static pthread_key_t e_memo_key; /* see e_env_known */

/* GetEnv, the out= file, keepgoing=. */
static inline jint e_setup(JavaVM *vm, const char *options, const char *agent)
{
    e_vm = vm;
    e_agent = agent;
    e_out = agent_open_out(options, agent);
    e_keepgoing = (int)e_opt_long(options, "keepgoing", 0);
    e_trace = (int)e_opt_long(options, "trace", 0);
    e_vm_thread = pthread_self();
    if (pthread_key_create(&e_req_key, NULL) != 0 || pthread_key_create(&e_memo_key, free) != 0)
        return JNI_ERR;
    if ((*vm)->GetEnv(vm, (void **)&e_pi, JVMPI_VERSION_1_1) != JNI_OK || !e_pi) {
        fprintf(stderr, "FAIL %s: GetEnv(JVMPI_VERSION_1_1) failed\n", agent);
        return JNI_ERR;
    }
    e_say("%s: loaded, options '%s'", agent, options ? options : "");
    return JNI_OK;
}

static inline void e_enable(jint type)
{
    /* Set first: some events may come inside EnableEvent (a replay). */
    e_on[type] = 1;
    jint rc = e_pi->EnableEvent(type, NULL);
    if (rc != JVMPI_SUCCESS) {
        e_on[type] = 0;
        E_FAIL("EnableEvent(%s) returned %d, not JVMPI_SUCCESS", e_event_name(type), (int)rc);
        return;
    }
    e_pass();
}

/* A RequestEvent in progress on this thread; nested requests (a handler of
 * an answer asking again) stack up through OUTER. */
typedef struct e_req {
    jint type;
    void *arg;
    int answers;
    JVMPI_Event ev; /* the answer (pointers in it die with the event) */
    void *user;     /* the agent's own, for its handler of the answer */
    struct e_req *outer;
} e_req;

/* The request in progress on this thread (the innermost), or NULL. */
static inline e_req *e_current_request(void)
{
    return pthread_getspecific(e_req_key);
}

/* RequestEvent with R pending on this thread while it runs: the dispatcher
 * (e_accept) puts the answer in R.  Returns what RequestEvent returned. */
static inline jint e_request_raw(e_req *r, jint type, void *arg)
{
    void *user = r->user;
    memset(r, 0, sizeof *r);
    r->user = user;
    r->type = type;
    r->arg = arg;
    r->outer = pthread_getspecific(e_req_key);
    pthread_setspecific(e_req_key, r);
    jint rc = e_pi->RequestEvent(type, arg);
    pthread_setspecific(e_req_key, r->outer);
    return rc;
}

/* RequestEvent, with the answer caught on this thread.  The JVMPI spec:
 * "The requested event is sent in the same thread that issued the
 * RequestEvent call, and is sent before the RequestEvent function returns",
 * with JVMPI_REQUESTED_EVENT set.  Returns 1 if exactly one answer came and
 * the call returned JVMPI_SUCCESS; fails otherwise. */
static inline int e_request(e_req *r, jint type, void *arg, const char *why)
{
    jint rc = e_request_raw(r, type, arg);
    if (rc != JVMPI_SUCCESS) {
        E_FAIL("RequestEvent(%s, %p) for %s returned %d, not JVMPI_SUCCESS", e_event_name(type), arg, why, (int)rc);
        return 0;
    }
    if (r->answers != 1) {
        E_FAIL("RequestEvent(%s, %p) for %s returned JVMPI_SUCCESS, but %d answers reached NotifyEvent on the "
               "calling thread before it returned (1 expected)",
               e_event_name(type), arg, why, r->answers);
        return 0;
    }
    e_pass();
    return 1;
}

/* A level 2 HEAP_DUMP, requested for WHY; "heap dump for WHY done" once
 * its answer was handled. */
static inline void e_heap_dump(const char *why)
{
    JVMPI_HeapDumpArg arg = {JVMPI_DUMP_LEVEL_2};
    e_req r = {0};
    if (e_request(&r, JVMPI_EVENT_HEAP_DUMP, &arg, why))
        e_say("heap dump for %s done", why);
}

/* Every event goes through here first.  Returns 0 when the agent must not
 * handle it: after JVM_SHUT_DOWN, or when it is none the agent asked for. */
static inline int e_accept(JVMPI_Event *ev)
{
    if (__atomic_load_n(&e_shut_down, __ATOMIC_ACQUIRE))
        return 0;
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    if (type <= 0 || type > JVMPI_MAX_EVENT_TYPE_VAL) {
        E_FAIL("event type %d (0x%x) is none JVMPI defines", (int)type, (unsigned)ev->event_type);
        return 0;
    }
    if (!(ev->event_type & JVMPI_REQUESTED_EVENT)) {
        if (!e_on[type]) {
            E_FAIL("%s arrived, but the agent never enabled it", e_event_name(type));
            return 0;
        }
        return 1;
    }
    e_req *r = pthread_getspecific(e_req_key);
    if (!r) {
        E_FAIL("%s with JVMPI_REQUESTED_EVENT arrived on a thread that has no RequestEvent in progress",
               e_event_name(type));
        return 0;
    }
    if (r->type != type) {
        E_FAIL("RequestEvent(%s) in progress, but a requested %s arrived on its thread", e_event_name(r->type),
               e_event_name(type));
        return 0;
    }
    if (r->answers++) {
        E_FAIL("RequestEvent(%s, %p): a second answer arrived", e_event_name(type), r->arg);
        return 0;
    }
    r->ev = *ev;
    jobjectID named = NULL;
    if (type == JVMPI_EVENT_OBJECT_ALLOC)
        named = ev->u.obj_alloc.obj_id;
    else if (type == JVMPI_EVENT_CLASS_LOAD)
        named = ev->u.class_load.class_id;
    else if (type == JVMPI_EVENT_THREAD_START)
        named = ev->u.thread_start.thread_id;
    else
        return 1;
    if ((void *)named != r->arg) {
        E_FAIL("RequestEvent(%s, %p) was answered about %p", e_event_name(type), r->arg, (void *)named);
        return 0;
    }
    return 1;
}

/* ---- threads, by JNIEnv * ------------------------------------------------------
 * THREAD_START defines a thread, THREAD_END undefines it.  The JVMPI spec
 * (6.2) allows one exception: "The thread start event for the main thread
 * (first thread the VM creates) may arrive after some other events that
 * refer to its JNIEnv interface pointer."  The VM's first thread is the one
 * that created the VM and ran JVM_OnLoad.  So before JVM_INIT_DONE an unknown
 * env_id of an event delivered on that OS thread is taken for main's, on
 * credit: its THREAD_START must come by JVM_INIT_DONE.  No other unknown
 * env_id is forgiven. */
typedef struct {
    JNIEnv *env;
    jobjectID tid;
    char *name;
    int alive;
    unsigned long ended_gen; /* e_thr_gen after its THREAD_END */
} e_thread;

static pthread_mutex_t e_thr_lock = PTHREAD_MUTEX_INITIALIZER;
static e_map e_threads;
static unsigned long e_thr_gen; /* moves at every THREAD_START and THREAD_END */
static JNIEnv *e_main_credit;
static int e_init_done;

static inline char *e_strdup(const char *s)
{
    return strdup(s ? s : "(null)");
}

/* Records the thread a THREAD_START defines.  Returns 0 if it was alive
 * already (a second definition). */
static inline int e_thread_start(const JVMPI_Event *ev)
{
    JNIEnv *env = ev->u.thread_start.thread_env_id;
    if (!env) {
        E_FAIL("THREAD_START of '%s' with thread_env_id NULL", ev->u.thread_start.thread_name ?
               ev->u.thread_start.thread_name : "(null)");
        return 0;
    }
    pthread_mutex_lock(&e_thr_lock);
    e_thread *t = e_map_get(&e_threads, env);
    int again = t && t->alive;
    if (!t) {
        t = calloc(1, sizeof *t);
        t->env = env;
        e_map_put(&e_threads, env, t);
    }
    if (!again) {
        free(t->name);
        t->name = e_strdup(ev->u.thread_start.thread_name);
        t->tid = ev->u.thread_start.thread_id;
        t->alive = 1;
    }
    if (env == e_main_credit)
        e_main_credit = NULL;
    __atomic_add_fetch(&e_thr_gen, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&e_thr_lock);
    if (e_trace)
        e_say("trace: THREAD_START '%s' env %p thread_id %p, sent by env %p", t->name, (void *)env,
              (void *)ev->u.thread_start.thread_id, (void *)ev->env_id);
    if (again && !(ev->event_type & JVMPI_REQUESTED_EVENT)) {
        E_FAIL("THREAD_START of '%s' (env %p): that thread had a THREAD_START already and no THREAD_END",
               ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "(null)", (void *)env);
        return 0;
    }
    e_pass();
    return 1;
}

/* The last env_id this OS thread found defined, and the thread table's
 * generation then: method events come by the million, and most name the
 * thread that sent the previous one. */
typedef struct {
    JNIEnv *env;
    unsigned long gen;
} e_env_memo;

/* Is ENV a thread defined now?  EVENT names the event, for the message. */
static inline int e_env_known(JNIEnv *env, const char *event)
{
    e_env_memo *memo = pthread_getspecific(e_memo_key);
    if (env && memo && memo->env == env && memo->gen == __atomic_load_n(&e_thr_gen, __ATOMIC_ACQUIRE)) {
        e_pass();
        return 1;
    }
    pthread_mutex_lock(&e_thr_lock);
    e_thread *t = env ? e_map_get(&e_threads, env) : NULL;
    int ok = t && t->alive, dead = t && !t->alive;
    char name[64] = "";
    if (dead)
        snprintf(name, sizeof name, "%s", t->name ? t->name : "?");
    if (ok) {
        if (!memo && (memo = calloc(1, sizeof *memo)) != NULL)
            pthread_setspecific(e_memo_key, memo);
        if (memo) {
            memo->env = env;
            memo->gen = e_thr_gen;
        }
    } else if (!t && env && !e_init_done && pthread_equal(pthread_self(), e_vm_thread) &&
               (!e_main_credit || e_main_credit == env)) {
        e_main_credit = env;
        ok = 1;
    }
    pthread_mutex_unlock(&e_thr_lock);
    if (ok) {
        e_pass();
        return 1;
    }
    /* The OS thread's name (HotSpot names its threads, cut to 15
     * characters) says which thread the layer forgot to announce. */
    char os_name[32] = "?";
    pthread_getname_np(pthread_self(), os_name, sizeof os_name);
    if (!env)
        E_FAIL("%s with env_id NULL (delivered on OS thread '%s')", event, os_name);
    else if (dead)
        E_FAIL("%s from thread env %p ('%s') after its THREAD_END (delivered on OS thread '%s')", event, (void *)env,
               name, os_name);
    else
        E_FAIL("%s from thread env %p, which no THREAD_START defined (delivered on OS thread '%s')", event,
               (void *)env, os_name);
    return 0;
}

/* THREAD_END: ENV must be alive; afterwards it is not. */
static inline void e_thread_end(const JVMPI_Event *ev)
{
    if (e_trace)
        e_say("trace: THREAD_END '%s' env %p", ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "?",
              (void *)ev->env_id);
    if (!e_env_known(ev->env_id, "THREAD_END"))
        return;
    pthread_mutex_lock(&e_thr_lock);
    e_thread *t = e_map_get(&e_threads, ev->env_id);
    unsigned long gen = __atomic_add_fetch(&e_thr_gen, 1, __ATOMIC_RELEASE);
    if (t) {
        t->alive = 0;
        t->ended_gen = gen;
    }
    pthread_mutex_unlock(&e_thr_lock);
}

/* Where the thread table stands now, for e_env_known_since. */
static inline unsigned long e_threads_now(void)
{
    return __atomic_load_n(&e_thr_gen, __ATOMIC_ACQUIRE);
}

/* For the threads a dump names: a dump is a snapshot taken at some moment
 * while RequestEvent runs, and a thread may end meanwhile and deliver its
 * THREAD_END (on its own thread) before the dump is delivered.  So ENV must
 * be alive, or have been alive when the request began (GEN, from
 * e_threads_now then). */
static inline int e_env_known_since(JNIEnv *env, unsigned long gen, const char *what)
{
    pthread_mutex_lock(&e_thr_lock);
    e_thread *t = env ? e_map_get(&e_threads, env) : NULL;
    int ended_since = t && !t->alive && t->ended_gen > gen;
    pthread_mutex_unlock(&e_thr_lock);
    if (ended_since) {
        e_pass();
        return 1;
    }
    return e_env_known(env, what);
}

/* JVM_INIT_DONE: the start-up credit given to main must be settled. */
static inline void e_threads_init_done(void)
{
    pthread_mutex_lock(&e_thr_lock);
    JNIEnv *pending = e_main_credit;
    e_init_done = 1;
    pthread_mutex_unlock(&e_thr_lock);
    if (pending)
        E_FAIL("JVM_INIT_DONE: thread env %p sent events during start-up but never got a THREAD_START",
               (void *)pending);
    else
        e_pass();
}

/* ---- classes, from CLASS_LOAD ----------------------------------------------------
 * Only what the agents need: the name, the methods' IDs, and the type
 * letter of each field (the first character of its signature), which is all
 * it takes to walk a heap dump's values. */
typedef struct {
    jobjectID id;
    char *name;
    int n_ifaces;
    int n_statics, n_fields, n_methods;
    char *statics, *fields; /* type letters, in CLASS_LOAD order */
    jmethodID *methods;
    int unloaded;
    int asked; /* for the agent's own use */
} e_class;

static inline e_class *e_class_new(const JVMPI_Event *ev)
{
    e_class *c = calloc(1, sizeof *c);
    if (!c)
        abort();
    const int ns = ev->u.class_load.num_static_fields > 0 ? ev->u.class_load.num_static_fields : 0;
    const int nf = ev->u.class_load.num_instance_fields > 0 ? ev->u.class_load.num_instance_fields : 0;
    const int nm = ev->u.class_load.num_methods > 0 ? ev->u.class_load.num_methods : 0;
    c->id = ev->u.class_load.class_id;
    c->name = e_strdup(ev->u.class_load.class_name);
    c->n_ifaces = ev->u.class_load.num_interfaces;
    c->n_statics = ns;
    c->n_fields = nf;
    c->n_methods = nm;
    c->statics = calloc((size_t)ns + 1, 1);
    c->fields = calloc((size_t)nf + 1, 1);
    c->methods = calloc((size_t)nm + 1, sizeof *c->methods);
    for (int i = 0; i < ns; i++) {
        const char *s = ev->u.class_load.statics[i].field_signature;
        c->statics[i] = s && *s ? s[0] : '?';
    }
    for (int i = 0; i < nf; i++) {
        const char *s = ev->u.class_load.instances[i].field_signature;
        c->fields[i] = s && *s ? s[0] : '?';
    }
    for (int i = 0; i < nm; i++)
        c->methods[i] = ev->u.class_load.methods[i].method_id;
    return c;
}

/* ---- the dump formats ---------------------------------------------------------------
 * Big-endian u1/u2/u4/u8, IDs and pointers native, as the JVMPI spec's
 * chapter 4 and every JVMPI VM had them. */
#define E_PTR ((size_t)sizeof(void *))

static inline size_t e_type_size(int ty)
{
    switch (ty) {
    case JVMPI_BOOLEAN: case JVMPI_BYTE: return 1;
    case JVMPI_CHAR: case JVMPI_SHORT: return 2;
    case JVMPI_INT: case JVMPI_FLOAT: return 4;
    case JVMPI_LONG: case JVMPI_DOUBLE: return 8;
    case JVMPI_NORMAL_OBJECT: case JVMPI_CLASS: return E_PTR;
    default: return 0;
    }
}

/* Size of a field value from its signature letter; 0: not a signature. */
static inline size_t e_sig_size(char c)
{
    switch (c) {
    case 'Z': case 'B': return 1;
    case 'C': case 'S': return 2;
    case 'I': case 'F': return 4;
    case 'J': case 'D': return 8;
    case 'L': case '[': return E_PTR;
    default: return 0;
    }
}

/* What the dump walkers hand to the agent, one ID at a time. */
enum {
    E_ID_OBJECT = 1, /* an instance or array record: the object it describes */
    E_ID_CLASSDUMP,  /* a class dump record: the class it describes */
    E_ID_CLASS,      /* must name a class (super, interface, class of an instance...) */
    E_ID_REF,        /* an object or a class (a field, an element, a root...) */
    E_ID_ENV,        /* a thread's JNIEnv * */
    E_ID_RAWMON      /* a raw monitor */
};

typedef struct {
    void *ctx;
    /* The class as its CLASS_LOAD described it, or NULL (the walk stops:
     * the record cannot be framed).  May request the CLASS_LOAD. */
    const e_class *(*class_of)(void *ctx, jobjectID id);
    /* One ID.  For E_ID_OBJECT: KIND is the record type, CLS the class (of
     * an instance) or element class (object array, may be NULL), TY the
     * element type of a primitive array.  Non-zero stops the walk. */
    int (*id)(void *ctx, int role, const void *id, int kind, const void *cls, int ty);
} e_dump_ops;

typedef struct {
    const unsigned char *b;
    size_t n, p;
    char *err;
    size_t errlen;
} e_rd;

__attribute__((format(printf, 2, 3)))
static inline int e_rd_err(e_rd *r, const char *fmt, ...)
{
    int k = snprintf(r->err, r->errlen, "offset %zu of %zu: ", r->p, r->n);
    if (k < 0 || (size_t)k >= r->errlen)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err + k, r->errlen - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

static inline int e_rd_need(e_rd *r, size_t k, const char *what)
{
    if (r->n - r->p < k)
        return e_rd_err(r, "%s needs %zu bytes, %zu left", what, k, r->n - r->p);
    return 0;
}

static inline uint32_t e_rd_u(e_rd *r, size_t k)
{
    uint32_t v = 0;
    for (size_t i = 0; i < k; i++)
        v = (v << 8) | r->b[r->p + i];
    r->p += k;
    return v;
}

static inline const void *e_rd_ptr(e_rd *r)
{
    const void *v;
    memcpy(&v, r->b + r->p, sizeof v);
    r->p += E_PTR;
    return v;
}

#define E_ID(o, role, x, kind, cls, ty)                                                            \
    do {                                                                                           \
        const void *x_ = (x);                                                                      \
        if (x_ && (o)->id) {                                                                       \
            int rc_ = (o)->id((o)->ctx, (role), x_, (kind), (cls), (ty));                          \
            if (rc_)                                                                               \
                return rc_;                                                                        \
        }                                                                                          \
    } while (0)

/* Values of field type letters TYPES at the reader; references reported. */
static inline int e_rd_values(e_rd *r, const e_dump_ops *o, const char *types, int count, const char *what)
{
    for (int i = 0; i < count; i++) {
        size_t sz = e_sig_size(types[i]);
        if (!sz)
            return e_rd_err(r, "%s: field %d has signature letter '%c'", what, i, types[i]);
        if (e_rd_need(r, sz, what))
            return -1;
        if (types[i] == 'L' || types[i] == '[')
            E_ID(o, E_ID_REF, e_rd_ptr(r), 0, NULL, 0);
        else
            r->p += sz;
    }
    return 0;
}

typedef struct {
    const void *cls, *super;
} e_super;

static inline int e_super_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const e_super *)a)->cls, y = (uintptr_t)((const e_super *)b)->cls;
    return x < y ? -1 : x > y;
}

typedef struct {
    e_super *s;
    size_t n, cap;
} e_supers;

/* One record at r->p.  In the first pass (O's id is NULL) only the framing
 * and the supers of class dumps (into SUP); in the second every ID. */
static inline int e_heap_record(e_rd *r, const e_dump_ops *o, e_supers *sup)
{
    const int emit = o->id != NULL;
    const int kind = r->b[r->p++];
    const void *id, *x;
    switch (kind) {
    case JVMPI_GC_ROOT_UNKNOWN:
    case JVMPI_GC_ROOT_MONITOR_USED:
        if (e_rd_need(r, E_PTR, "root"))
            return -1;
        E_ID(o, E_ID_REF, e_rd_ptr(r), 0, NULL, 0);
        return 0;
    case JVMPI_GC_ROOT_STICKY_CLASS:
        if (e_rd_need(r, E_PTR, "sticky class root"))
            return -1;
        E_ID(o, E_ID_CLASS, e_rd_ptr(r), 0, NULL, 0);
        return 0;
    case JVMPI_GC_ROOT_JNI_GLOBAL:
        if (e_rd_need(r, 2 * E_PTR, "JNI global root"))
            return -1;
        E_ID(o, E_ID_REF, e_rd_ptr(r), 0, NULL, 0);
        r->p += E_PTR; /* the global reference */
        return 0;
    case JVMPI_GC_ROOT_JNI_LOCAL:
    case JVMPI_GC_ROOT_JAVA_FRAME:
        if (e_rd_need(r, 2 * E_PTR + 4, "frame root"))
            return -1;
        E_ID(o, E_ID_REF, e_rd_ptr(r), 0, NULL, 0);
        E_ID(o, E_ID_ENV, e_rd_ptr(r), 0, NULL, 0);
        r->p += 4; /* frame number */
        return 0;
    case JVMPI_GC_ROOT_NATIVE_STACK:
    case JVMPI_GC_ROOT_THREAD_BLOCK:
        if (e_rd_need(r, 2 * E_PTR, "thread root"))
            return -1;
        E_ID(o, E_ID_REF, e_rd_ptr(r), 0, NULL, 0);
        E_ID(o, E_ID_ENV, e_rd_ptr(r), 0, NULL, 0);
        return 0;
    case JVMPI_GC_CLASS_DUMP: {
        if (e_rd_need(r, 7 * E_PTR + 4, "class dump header"))
            return -1;
        id = e_rd_ptr(r);
        const void *super = e_rd_ptr(r);
        if (!id)
            return e_rd_err(r, "class dump of a NULL class");
        /* Its length depends on the class's interfaces and statics. */
        const e_class *c = o->class_of(o->ctx, (jobjectID)id);
        if (!c)
            return e_rd_err(r, "class dump of %p, a class with no CLASS_LOAD: its statics cannot be read", id);
        if (!emit) {
            if (sup->n == sup->cap) {
                sup->cap = sup->cap ? 2 * sup->cap : 1024;
                sup->s = realloc(sup->s, sup->cap * sizeof *sup->s);
                if (!sup->s)
                    abort();
            }
            sup->s[sup->n++] = (e_super){id, super};
        }
        E_ID(o, E_ID_CLASSDUMP, id, kind, NULL, 0);
        E_ID(o, E_ID_CLASS, super, 0, NULL, 0);
        for (int i = 0; i < 4; i++) /* loader, signers, protection domain, name */
            E_ID(o, E_ID_REF, e_rd_ptr(r), 0, NULL, 0);
        r->p += E_PTR + 4; /* reserved, instance size */
        if (c->n_ifaces < 0 || e_rd_need(r, (size_t)c->n_ifaces * E_PTR + 2, "class dump interfaces"))
            return -1;
        for (int i = 0; i < c->n_ifaces; i++)
            E_ID(o, E_ID_CLASS, e_rd_ptr(r), 0, NULL, 0);
        unsigned ncp = e_rd_u(r, 2);
        for (unsigned i = 0; i < ncp; i++) {
            if (e_rd_need(r, 3, "constant pool entry"))
                return -1;
            r->p += 2;
            int ty = r->b[r->p++];
            size_t sz = e_type_size(ty);
            if (!sz)
                return e_rd_err(r, "constant pool entry %u of class %s has type %d", i, c->name, ty);
            if (e_rd_need(r, sz, "constant pool value"))
                return -1;
            if (ty == JVMPI_NORMAL_OBJECT || ty == JVMPI_CLASS)
                E_ID(o, E_ID_REF, e_rd_ptr(r), 0, NULL, 0);
            else
                r->p += sz;
        }
        return e_rd_values(r, o, c->statics, c->n_statics, "static field values");
    }
    case JVMPI_GC_INSTANCE_DUMP: {
        if (e_rd_need(r, 2 * E_PTR + 4, "instance dump header"))
            return -1;
        id = e_rd_ptr(r);
        x = e_rd_ptr(r);
        uint32_t nbytes = e_rd_u(r, 4);
        if (e_rd_need(r, nbytes, "instance field values"))
            return -1;
        if (!emit) {
            r->p += nbytes;
            return 0;
        }
        E_ID(o, E_ID_OBJECT, id, kind, x, 0);
        E_ID(o, E_ID_CLASS, x, 0, NULL, 0);
        if (!x)
            return e_rd_err(r, "instance %p with a NULL class", id);
        /* This class's fields, then its super's, and so on; the supers come
         * from this dump's class dumps. */
        e_rd sub = *r;
        sub.n = r->p + nbytes;
        const void *k = x;
        for (int depth = 0; k; depth++) {
            const e_class *c = o->class_of(o->ctx, (jobjectID)k);
            if (!c)
                return e_rd_err(r, "instance %p: class %p in its chain has no CLASS_LOAD", id, k);
            if (e_rd_values(&sub, o, c->fields, c->n_fields, "instance field values"))
                return -1;
            e_super key = {k, NULL};
            const e_super *s = sup->n ? bsearch(&key, sup->s, sup->n, sizeof key, e_super_cmp) : NULL;
            if (!s)
                return e_rd_err(r, "instance %p: class %s (%p) has no class dump in this dump, so its super is "
                                "unknown", id, c->name, k);
            k = s->super;
            if (depth > 200)
                return e_rd_err(r, "instance %p: a super chain longer than 200", id);
        }
        if (sub.p != sub.n)
            return e_rd_err(r, "instance %p: %u value bytes, but its class and supers declare %zu", id, nbytes,
                            sub.p - r->p);
        r->p += nbytes;
        return 0;
    }
    case JVMPI_GC_OBJ_ARRAY_DUMP: {
        if (e_rd_need(r, 2 * E_PTR + 4, "object array header"))
            return -1;
        id = e_rd_ptr(r);
        uint32_t n = e_rd_u(r, 4);
        x = e_rd_ptr(r);
        if (e_rd_need(r, (size_t)n * E_PTR, "object array elements"))
            return -1;
        E_ID(o, E_ID_OBJECT, id, kind, x, JVMPI_CLASS);
        E_ID(o, E_ID_CLASS, x, 0, NULL, 0);
        if (!emit) {
            r->p += (size_t)n * E_PTR;
            return 0;
        }
        for (uint32_t i = 0; i < n; i++)
            E_ID(o, E_ID_REF, e_rd_ptr(r), 0, NULL, 0);
        return 0;
    }
    case JVMPI_GC_PRIM_ARRAY_DUMP: {
        if (e_rd_need(r, E_PTR + 5, "primitive array header"))
            return -1;
        id = e_rd_ptr(r);
        uint32_t n = e_rd_u(r, 4);
        int ty = r->b[r->p++];
        size_t sz = e_type_size(ty);
        if (!sz || ty == JVMPI_NORMAL_OBJECT || ty == JVMPI_CLASS)
            return e_rd_err(r, "primitive array %p with element type %d", id, ty);
        if (e_rd_need(r, (size_t)n * sz, "primitive array elements"))
            return -1;
        E_ID(o, E_ID_OBJECT, id, kind, NULL, ty);
        r->p += (size_t)n * sz;
        return 0;
    }
    default:
        r->p--;
        return e_rd_err(r, "record type 0x%02x is none of the JVMPI heap dump format", kind);
    }
}

/* Walks a level 2 HEAP_DUMP from BEGIN to END: every byte must belong to a
 * record.  Two passes, because an instance's values can be read only once
 * the supers of its class are known, and the class dumps that name them may
 * come after it.  Returns 0, -1 with ERR set, or the first non-zero
 * ops->id. */
static inline int e_walk_heap(const void *begin, const void *end, const e_dump_ops *ops, char *err, size_t errlen)
{
    e_rd r = {begin, 0, 0, err, errlen};
    err[0] = '\0';
    if (!begin || !end || (const char *)end < (const char *)begin)
        return e_rd_err(&r, "heap dump with begin %p, end %p", begin, end);
    r.n = (size_t)((const char *)end - (const char *)begin);
    e_supers sup = {NULL, 0, 0};
    const e_dump_ops frame_only = {ops->ctx, ops->class_of, NULL};
    int rc = 0;
    while (r.p < r.n && rc == 0)
        rc = e_heap_record(&r, &frame_only, &sup);
    if (rc == 0) {
        qsort(sup.s, sup.n, sizeof *sup.s, e_super_cmp);
        for (size_t i = 1; i < sup.n && rc == 0; i++)
            if (sup.s[i].cls == sup.s[i - 1].cls)
                rc = e_rd_err(&r, "two class dumps of class %p", sup.s[i].cls);
    }
    r.p = 0;
    while (r.p < r.n && rc == 0)
        rc = e_heap_record(&r, ops, &sup);
    free(sup.s);
    return rc;
}

/* Walks a MONITOR_DUMP buffer. */
static inline int e_walk_monitors(const void *begin, const void *end, const e_dump_ops *o, char *err, size_t errlen)
{
    e_rd r = {begin, 0, 0, err, errlen};
    err[0] = '\0';
    if (!begin || !end || (const char *)end < (const char *)begin)
        return e_rd_err(&r, "monitor dump with begin %p, end %p", begin, end);
    r.n = (size_t)((const char *)end - (const char *)begin);
    while (r.p < r.n) {
        int kind = r.b[r.p++];
        if (kind == JVMPI_MONITOR_JAVA) {
            if (e_rd_need(&r, 2 * E_PTR + 4, "Java monitor header"))
                return -1;
            E_ID(o, E_ID_REF, e_rd_ptr(&r), 0, NULL, 0);
        } else if (kind == JVMPI_MONITOR_RAW) {
            if (e_rd_need(&r, 3 * E_PTR + 4, "raw monitor header"))
                return -1;
            r.p += E_PTR; /* name */
            E_ID(o, E_ID_RAWMON, e_rd_ptr(&r), 0, NULL, 0);
        } else {
            r.p--;
            return e_rd_err(&r, "monitor record type 0x%02x is none of the JVMPI monitor dump format", kind);
        }
        E_ID(o, E_ID_ENV, e_rd_ptr(&r), 0, NULL, 0); /* owner */
        r.p += 4;                                    /* entry count */
        for (int list = 0; list < 2; list++) {       /* entering, waiting */
            if (e_rd_need(&r, 4, "thread count"))
                return -1;
            uint32_t n = e_rd_u(&r, 4);
            if (e_rd_need(&r, (size_t)n * E_PTR, "thread list"))
                return -1;
            for (uint32_t i = 0; i < n; i++)
                E_ID(o, E_ID_ENV, e_rd_ptr(&r), 0, NULL, 0);
        }
    }
    return 0;
}

#undef E_ID

#endif /* E_COMMON_H_ */
