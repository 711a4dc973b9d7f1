/*
 * g_multi - one of several JVMPI agents in one VM.  Written as an agent of
 * 2002 was, for a VM with no other agent: it trusts every rule of the JVMPI
 * specification and aborts when one breaks (e_common.h).  Two or three
 * copies of it, each with its own options, run together in
 * tests/integration/it_g_multi.sh, and each must see what it sees alone.
 *
 * What it holds the layer to, for itself alone:
 *  - no event it did not enable arrives, and a requested event arrives only
 *    on the thread of its own RequestEvent, while that runs (e_accept): an
 *    event meant for another agent is a failure;
 *  - every env_id names a thread its THREAD_START defined (threads on at
 *    start-up); an OBJECT_ALLOC names a class its CLASS_LOAD defined; an
 *    OBJECT_FREE, or THREAD_START's thread object, names an object its
 *    OBJECT_ALLOC defined (alloc on): including what it enabled late;
 *  - GetThreadLocalStorage answers its own word or NULL, never another
 *    agent's (it stores the address of one of its own statics);
 *  - GC_START and GC_FINISH alternate.
 *
 * Options ('+' between event groups):
 *   out=FILE  on=GROUPS (enabled in JVM_OnLoad)  late=GROUPS (enabled in the
 *   JVM_INIT_DONE handler)  hook=F>T (in a class file that holds HOOKMARKF,
 *   writes HOOKMARKT over it)  dump=1 (asks for a level 0 HEAP_DUMP at
 *   JVM_INIT_DONE).
 * Groups: classload, threads, alloc (OBJECT_ALLOC and OBJECT_FREE), gc
 * (GC_START, GC_FINISH), hook (CLASS_LOAD_HOOK).
 *
 * Lines starting with "d " are what the test compares with the agent's run
 * alone: the program's classes and threads it was told of, how many
 * G_Multi$Marker objects it saw allocated and freed, the events it got.
 */
#include "e_common.h"

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static e_map classes; /* class ID -> e_class */
static e_map objs;    /* object ID -> its class ID (E_TOMB-free: (void *)1 for none) */
static int want_classes, want_threads, want_alloc, alloc_from_start, threads_from_start;
static int hook_from = -1, hook_to = -1, want_dump;
static char *late_groups;
static jobjectID marker_class;
static long markers_allocated, markers_freed;
static int in_gc;
static int got[JVMPI_MAX_EVENT_TYPE_VAL + 1];
static char tls_word; /* its address is this agent's thread-local word */

#define NO_CLASS ((void *)(uintptr_t)8)

static void say_once(const char *kind, const char *name)
{
    e_say("d %s %s", kind, name);
}

static int has_group(const char *list, const char *group)
{
    if (!list)
        return 0;
    size_t n = strlen(group);
    for (const char *p = list; (p = strstr(p, group)) != NULL; p += n)
        if ((p == list || p[-1] == '+') && (p[n] == '\0' || p[n] == '+'))
            return 1;
    return 0;
}

static void enable_groups(const char *list, int from_start)
{
    if (has_group(list, "classload")) {
        want_classes = 1;
        e_enable(JVMPI_EVENT_CLASS_LOAD);
    }
    if (has_group(list, "threads")) {
        want_threads = 1;
        threads_from_start = from_start;
        e_enable(JVMPI_EVENT_THREAD_START);
        e_enable(JVMPI_EVENT_THREAD_END);
    }
    if (has_group(list, "alloc")) {
        want_alloc = 1;
        alloc_from_start = from_start;
        e_enable(JVMPI_EVENT_OBJECT_ALLOC);
        e_enable(JVMPI_EVENT_OBJECT_FREE);
    }
    if (has_group(list, "gc")) {
        e_enable(JVMPI_EVENT_GC_START);
        e_enable(JVMPI_EVENT_GC_FINISH);
    }
    if (has_group(list, "hook"))
        e_enable(JVMPI_EVENT_CLASS_LOAD_HOOK);
}

/* The thread-local word of env: NULL or this agent's own. */
static void check_tls(JNIEnv *env, const char *event)
{
    if (!env || !threads_from_start)
        return;
    void *w = e_pi->GetThreadLocalStorage(env);
    if (w != NULL && w != &tls_word)
        E_FAIL("%s: GetThreadLocalStorage(%p) is %p, a word this agent never stored (its own is %p)", event,
               (void *)env, w, (void *)&tls_word);
    else
        e_pass();
}

static void hook(JVMPI_Event *ev)
{
    char from[16], to[16];
    snprintf(from, sizeof from, "HOOKMARK%d", hook_from);
    snprintf(to, sizeof to, "HOOKMARK%d", hook_to);
    unsigned char *data = ev->u.class_load_hook.class_data;
    jint len = ev->u.class_load_hook.class_data_len;
    size_t n = strlen(from);
    for (jint i = 0; hook_from >= 0 && i + (jint)n <= len; i++) {
        if (memcmp(data + i, from, n) != 0)
            continue;
        e_say("hooksaw %s", from);
        unsigned char *out = ev->u.class_load_hook.malloc_f((unsigned int)len);
        if (!out) {
            E_FAIL("CLASS_LOAD_HOOK: malloc_f(%d) returned NULL", (int)len);
            return;
        }
        memcpy(out, data, (size_t)len);
        memcpy(out + i, to, n);
        ev->u.class_load_hook.new_class_data = out;
        ev->u.class_load_hook.new_class_data_len = len;
        return;
    }
}

static void class_load(const JVMPI_Event *ev)
{
    e_class *c = e_class_new(ev);
    pthread_mutex_lock(&lk);
    if (e_map_get(&classes, c->id))
        E_FAIL("CLASS_LOAD of %s: class ID %p defined twice", c->name, (void *)c->id);
    e_map_put(&classes, c->id, c);
    if (strcmp(c->name, "G_Multi$Marker") == 0)
        marker_class = c->id;
    pthread_mutex_unlock(&lk);
    if (strncmp(c->name, "G_Multi", 7) == 0 && !strstr(c->name, "$$") && !strstr(c->name, "/0x"))
        say_once("class", c->name);
    e_pass();
}

static void object_alloc(const JVMPI_Event *ev)
{
    jobjectID cls = ev->u.obj_alloc.class_id;
    pthread_mutex_lock(&lk);
    int known_class = !cls || !want_classes || e_map_get(&classes, cls) != NULL;
    if (e_map_get(&objs, ev->u.obj_alloc.obj_id) && !(ev->event_type & JVMPI_REQUESTED_EVENT))
        E_FAIL("OBJECT_ALLOC: object %p defined twice", (void *)ev->u.obj_alloc.obj_id);
    e_map_put(&objs, ev->u.obj_alloc.obj_id, cls ? (void *)cls : NO_CLASS);
    if (cls && cls == marker_class && !(ev->event_type & JVMPI_REQUESTED_EVENT))
        markers_allocated++;
    pthread_mutex_unlock(&lk);
    if (!known_class)
        E_FAIL("OBJECT_ALLOC of %p names class %p, which no CLASS_LOAD defined", (void *)ev->u.obj_alloc.obj_id,
               (void *)cls);
    else
        e_pass();
}

static void object_free(const JVMPI_Event *ev)
{
    pthread_mutex_lock(&lk);
    void *cls = e_map_get(&objs, ev->u.obj_free.obj_id);
    if (cls)
        e_map_del(&objs, ev->u.obj_free.obj_id);
    if (cls && cls == (void *)marker_class)
        markers_freed++;
    pthread_mutex_unlock(&lk);
    if (!cls)
        E_FAIL("OBJECT_FREE of %p, an object no OBJECT_ALLOC defined", (void *)ev->u.obj_free.obj_id);
    else
        e_pass();
}

static void thread_start(const JVMPI_Event *ev)
{
    if (!e_thread_start(ev))
        return;
    const char *name = ev->u.thread_start.thread_name ? ev->u.thread_start.thread_name : "";
    if (strncmp(name, "g-", 2) == 0 || strcmp(name, "main") == 0)
        say_once("thread", name);
    if (want_alloc && alloc_from_start) {
        pthread_mutex_lock(&lk);
        int known = e_map_get(&objs, ev->u.thread_start.thread_id) != NULL;
        pthread_mutex_unlock(&lk);
        if (!known)
            E_FAIL("THREAD_START of %s names thread object %p, which no OBJECT_ALLOC defined", name,
                   (void *)ev->u.thread_start.thread_id);
    }
    check_tls(ev->u.thread_start.thread_env_id, "THREAD_START");
    e_pi->SetThreadLocalStorage(ev->u.thread_start.thread_env_id, &tls_word);
}

static void ask(JNIEnv *env)
{
    e_req r;
    memset(&r, 0, sizeof r);
    long answered = 0;
    if (want_threads && e_request(&r, JVMPI_EVENT_THREAD_START, e_pi->GetThreadObject(env), "the calling thread"))
        answered++;
    if (want_classes) {
        jobjectID some = NULL;
        pthread_mutex_lock(&lk);
        for (size_t i = 0; i < classes.cap && !some; i++)
            if (classes.s[i].key && classes.s[i].key != E_TOMB)
                some = (jobjectID)classes.s[i].key;
        pthread_mutex_unlock(&lk);
        if (some && e_request(&r, JVMPI_EVENT_CLASS_LOAD, some, "a class it was told of"))
            answered++;
    }
    if (want_dump) {
        JVMPI_HeapDumpArg arg = {JVMPI_DUMP_LEVEL_0};
        if (e_request(&r, JVMPI_EVENT_HEAP_DUMP, &arg, "a level 0 heap dump"))
            answered++;
    }
    e_say("d requests-answered %ld", answered);
}

static void JNICALL notify(JVMPI_Event *ev)
{
    if (!e_accept(ev))
        return;
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    if (!(ev->event_type & JVMPI_REQUESTED_EVENT) && !__atomic_exchange_n(&got[type], 1, __ATOMIC_RELAXED))
        say_once("got", e_event_name(type));
    if (threads_from_start && type != JVMPI_EVENT_CLASS_LOAD_HOOK && type != JVMPI_EVENT_THREAD_START &&
        e_env_known(ev->env_id, e_event_name(type)))
        check_tls(ev->env_id, e_event_name(type));
    switch (type) {
    case JVMPI_EVENT_CLASS_LOAD_HOOK:
        hook(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        if (!(ev->event_type & JVMPI_REQUESTED_EVENT))
            class_load(ev);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        object_alloc(ev);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        object_free(ev);
        break;
    case JVMPI_EVENT_THREAD_START:
        if (!(ev->event_type & JVMPI_REQUESTED_EVENT))
            thread_start(ev);
        break;
    case JVMPI_EVENT_THREAD_END:
        if (threads_from_start)
            e_thread_end(ev);
        break;
    case JVMPI_EVENT_GC_START:
    case JVMPI_EVENT_GC_FINISH:
        if (in_gc == (type == JVMPI_EVENT_GC_START))
            E_FAIL("%s while %s a collection", e_event_name(type), in_gc ? "in" : "not in");
        in_gc = type == JVMPI_EVENT_GC_START;
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        if (threads_from_start)
            e_threads_init_done();
        enable_groups(late_groups, 0);
        ask(ev->env_id);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        if (want_alloc) {
            pthread_mutex_lock(&lk);
            e_say("d markers-allocated %ld", markers_allocated);
            e_say("d markers-freed %ld", markers_freed);
            pthread_mutex_unlock(&lk);
        }
        e_summary();
        __atomic_store_n(&e_shut_down, 1, __ATOMIC_RELEASE);
        break;
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (e_setup(vm, options, "g_multi") != JNI_OK)
        return JNI_ERR;
    e_pi->NotifyEvent = notify;
    char *hk = e_opt(options, "hook");
    if (hk && sscanf(hk, "%d>%d", &hook_from, &hook_to) != 2) {
        fprintf(stderr, "g_multi: bad hook=%s (expected F>T)\n", hk);
        return JNI_ERR;
    }
    free(hk);
    want_dump = (int)e_opt_long(options, "dump", 0);
    late_groups = e_opt(options, "late");
    char *on = e_opt(options, "on");
    e_enable(JVMPI_EVENT_JVM_INIT_DONE);
    e_enable(JVMPI_EVENT_JVM_SHUT_DOWN);
    enable_groups(on, 1);
    free(on);
    return JNI_OK;
}
