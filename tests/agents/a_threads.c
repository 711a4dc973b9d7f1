/*
 * a_threads - THREAD_START / THREAD_END of threads the program starts.
 *
 * Options: out=FILE.  A_Threads starts "worker-1".."worker-3" in group
 * "a-workers", whose parent group is "a-parent".  For each, the agent checks:
 *  - THREAD_START carries name, group, parent group name, non-NULL thread_id
 *    and thread_env_id, and arrives on that thread (env_id == thread_env_id ==
 *    the JNIEnv the VM gives the calling thread);
 *  - THREAD_END carries the same fields again (JDK 5.0 did; on JDK 17 the
 *    thread has already left its group when JVM TI reports its end, so the
 *    layer must have kept them) and arrives on that thread too;
 *  - GetThreadObject(thread_env_id) == thread_id at both events;
 *  - every START has exactly one END, and no END comes without a START.
 * Also: main's (replayed) THREAD_START says group "main", parent "system".
 */
#include "a_common.h"

#define NWORKERS 3

typedef struct {
    int started, ended;
    char *name, *group, *parent;
    jobjectID id;
    JNIEnv *env;
} worker;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static worker workers[NWORKERS];
static int main_started;
static long n_start, n_end;

static int worker_index(const char *name)
{
    if (!name || strncmp(name, "worker-", 7) != 0 || name[7] < '1' || name[7] > '0' + NWORKERS ||
        name[8])
        return -1;
    return name[7] - '1';
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Checks common to START and END: the event is about the calling thread. */
static void check_on_own_thread(JVMPI_Event *ev, const char *what)
{
    const char *name = a_str(ev->u.thread_start.thread_name);
    JNIEnv *tenv = ev->u.thread_start.thread_env_id;
    jobjectID tid = ev->u.thread_start.thread_id;
    JNIEnv *cur = a_current_env();
    if (!tid || !tenv)
        a_fail("%s %s: thread_id %p thread_env_id %p", what, name, (void *)tid, (void *)tenv);
    if (ev->env_id != tenv)
        a_fail("%s %s: env_id %p != thread_env_id %p", what, name, (void *)ev->env_id, (void *)tenv);
    if (cur != tenv)
        a_fail("%s %s: delivered on JNIEnv %p, not on the thread itself (%p)", what, name, (void *)cur,
               (void *)tenv);
    if (tenv) {
        jobjectID got = a_jvmpi->GetThreadObject(tenv);
        if (got != tid)
            a_fail("%s %s: GetThreadObject(thread_env_id) = %p, thread_id = %p", what, name, (void *)got,
                   (void *)tid);
    }
}

static void on_start(JVMPI_Event *ev)
{
    a_check_unused_zero(ev, A_USED_END(thread_start), "THREAD_START");
    const char *name = ev->u.thread_start.thread_name;
    const char *group = ev->u.thread_start.group_name;
    const char *parent = ev->u.thread_start.parent_name;
    a_rec("THREAD_START %s group %s parent %s id %p env %p", a_str(name), a_str(group), a_str(parent),
          (void *)ev->u.thread_start.thread_id, (void *)ev->u.thread_start.thread_env_id);
    pthread_mutex_lock(&lock);
    n_start++;
    pthread_mutex_unlock(&lock);

    if (a_streq(name, "main")) {
        if (!a_streq(group, "main") || !a_streq(parent, "system"))
            a_fail("THREAD_START main: group %s parent %s (expected main, system)", a_str(group),
                   a_str(parent));
        pthread_mutex_lock(&lock);
        main_started++;
        pthread_mutex_unlock(&lock);
        return;
    }
    int i = worker_index(name);
    if (i < 0)
        return;
    if (!a_streq(group, "a-workers") || !a_streq(parent, "a-parent"))
        a_fail("THREAD_START %s: group %s parent %s (expected a-workers, a-parent)", name, a_str(group),
               a_str(parent));
    check_on_own_thread(ev, "THREAD_START");

    pthread_mutex_lock(&lock);
    worker *w = &workers[i];
    int again = w->started++;
    if (!again) {
        w->name = dup_or_null(name);
        w->group = dup_or_null(group);
        w->parent = dup_or_null(parent);
        w->id = ev->u.thread_start.thread_id;
        w->env = ev->u.thread_start.thread_env_id;
    }
    pthread_mutex_unlock(&lock);
    if (again)
        a_fail("THREAD_START %s seen %d times", name, again + 1);
}

static void on_end(JVMPI_Event *ev)
{
    a_check_unused_zero(ev, A_USED_END(thread_start), "THREAD_END");
    const char *name = ev->u.thread_start.thread_name;
    a_rec("THREAD_END %s group %s parent %s id %p env %p (event env %p)", a_str(name),
          a_str(ev->u.thread_start.group_name), a_str(ev->u.thread_start.parent_name),
          (void *)ev->u.thread_start.thread_id, (void *)ev->u.thread_start.thread_env_id,
          (void *)ev->env_id);
    pthread_mutex_lock(&lock);
    n_end++;
    /* Find the worker by its JNIEnv too: a layer that loses the name at
     * THREAD_END must still be caught as "wrong fields", not "missing END". */
    int i = worker_index(name);
    if (i < 0)
        for (int k = 0; k < NWORKERS; k++)
            if (workers[k].started && !workers[k].ended && workers[k].env == ev->env_id)
                i = k;
    worker w = {0};
    int again = 0;
    if (i >= 0) {
        again = workers[i].ended++;
        w = workers[i];
    }
    pthread_mutex_unlock(&lock);
    if (i < 0)
        return;

    const char *wname = w.name ? w.name : "worker-?";
    if (!w.started)
        a_fail("THREAD_END %s without THREAD_START", wname);
    if (again)
        a_fail("THREAD_END %s seen %d times", wname, again + 1);
    if (!a_streq(name, w.name) || !a_streq(ev->u.thread_start.group_name, w.group) ||
        !a_streq(ev->u.thread_start.parent_name, w.parent))
        a_fail("THREAD_END %s: name/group/parent %s/%s/%s, THREAD_START said %s/%s/%s", wname, a_str(name),
               a_str(ev->u.thread_start.group_name), a_str(ev->u.thread_start.parent_name),
               a_str(w.name), a_str(w.group), a_str(w.parent));
    if (ev->u.thread_start.thread_id != w.id || ev->u.thread_start.thread_env_id != w.env)
        a_fail("THREAD_END %s: thread_id %p thread_env_id %p, THREAD_START said %p %p", wname,
               (void *)ev->u.thread_start.thread_id, (void *)ev->u.thread_start.thread_env_id, (void *)w.id,
               (void *)w.env);
    check_on_own_thread(ev, "THREAD_END");
}

static void on_shutdown(void)
{
    pthread_mutex_lock(&lock);
    worker w[NWORKERS];
    memcpy(w, workers, sizeof w);
    int ms = main_started;
    long s = n_start, e = n_end;
    pthread_mutex_unlock(&lock);
    if (ms != 1)
        a_fail("THREAD_START of main seen %d times", ms);
    for (int i = 0; i < NWORKERS; i++) {
        if (w[i].started != 1 || w[i].ended != 1)
            a_fail("worker-%d: %d THREAD_START, %d THREAD_END (expected 1 and 1)", i + 1, w[i].started,
                   w[i].ended);
        for (int k = 0; k < i; k++)
            if (w[i].id && w[i].id == w[k].id)
                a_fail("worker-%d and worker-%d share thread_id %p", k + 1, i + 1, (void *)w[i].id);
    }
    a_rec("DONE thread_start=%ld thread_end=%ld failures=%d", s, e, a_failures);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_THREAD_START:
        on_start(ev);
        break;
    case JVMPI_EVENT_THREAD_END:
        on_end(ev);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        on_shutdown();
        break;
    default:
        a_fail("event type %d was never enabled", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (a_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    a_jvmpi->NotifyEvent = notify;
    a_expect_enable(JVMPI_EVENT_THREAD_START, "THREAD_START");
    a_expect_enable(JVMPI_EVENT_THREAD_END, "THREAD_END");
    a_expect_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    a_rec("START");
    return JNI_OK;
}
