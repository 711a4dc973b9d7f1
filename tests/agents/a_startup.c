/*
 * a_startup - the start-up sequence a JDK 5.0 agent relied on.
 *
 * Options: out=FILE, notify=early|late.  With notify=late the agent sets
 * NotifyEvent only after its EnableEvent calls, as some real agents did.
 *
 * Enables CLASS_LOAD, THREAD_START and JVM_INIT_DONE in JVM_OnLoad, nothing
 * else, and checks:
 *  - every event comes from a thread whose THREAD_START came first (the
 *    JVMPI specification's defining events), so the thread that sends the
 *    start-up replay announces itself first;
 *  - CLASS_LOAD of java.lang.Object, java.lang.String and java.lang.Thread
 *    arrives before the first THREAD_START of any other thread (HotSpot
 *    5.0's replay order: classes, then threads);
 *  - THREAD_START of "main" arrives before JVM_INIT_DONE, on the thread that
 *    then gets JVM_INIT_DONE;
 *  - exactly one JVM_INIT_DONE;
 *  - no event of a type it did not enable (THREAD_END, JVM_SHUT_DOWN, ...);
 *  - bytes of the event beyond the members used by the event type are zero.
 */
#include "a_common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long seq;
static const char *const core_classes[] = {"java.lang.Object", "java.lang.String", "java.lang.Thread"};
static long core_seen[3];
static long first_thread_start;
static long main_start;
static JNIEnv *main_env;
static int init_done;
static long n_class_load, n_thread_start;
#define MAX_THREADS 256
static JNIEnv *told[MAX_THREADS]; /* threads a THREAD_START named */
static int n_told;

/* Under lock. */
static int was_told(JNIEnv *env)
{
    for (int i = 0; i < n_told; i++)
        if (told[i] == env)
            return 1;
    return 0;
}

static void on_class_load(JVMPI_Event *ev, long s)
{
    a_check_unused_zero(ev, A_USED_END(class_load), "CLASS_LOAD");
    const char *name = ev->u.class_load.class_name;
    pthread_mutex_lock(&lock);
    n_class_load++;
    for (int i = 0; i < 3; i++)
        if (a_streq(name, core_classes[i]) && !core_seen[i])
            core_seen[i] = s;
    int known = was_told(ev->env_id);
    pthread_mutex_unlock(&lock);
    if (!name)
        a_fail("CLASS_LOAD with NULL class_name");
    if (!known)
        a_fail("CLASS_LOAD %s (event %ld) came from env %p, which no THREAD_START named", a_str(name), s,
               (void *)ev->env_id);
}

static void on_thread_start(JVMPI_Event *ev, long s)
{
    a_check_unused_zero(ev, A_USED_END(thread_start), "THREAD_START");
    const char *name = ev->u.thread_start.thread_name;
    int first = 0, is_main = a_streq(name, "main");
    long seen[3];
    JNIEnv *started = ev->u.thread_start.thread_env_id;
    pthread_mutex_lock(&lock);
    n_thread_start++;
    if (n_told < MAX_THREADS)
        told[n_told++] = started;
    int own = started == ev->env_id; /* a thread announcing itself before its first event */
    if (!first_thread_start && !own) {
        first_thread_start = s;
        first = 1;
        memcpy(seen, core_seen, sizeof seen);
    }
    if (is_main && !main_start) {
        main_start = s;
        main_env = ev->u.thread_start.thread_env_id;
    }
    int after_init = init_done;
    pthread_mutex_unlock(&lock);

    a_rec("EVENT %ld THREAD_START %s group %s parent %s%s", s, a_str(name),
          a_str(ev->u.thread_start.group_name), a_str(ev->u.thread_start.parent_name),
          after_init ? " (after JVM_INIT_DONE)" : "");
    if (!name)
        a_fail("THREAD_START with NULL thread_name");
    if (!ev->u.thread_start.thread_id || !ev->u.thread_start.thread_env_id)
        a_fail("THREAD_START %s: thread_id %p thread_env_id %p", a_str(name),
               (void *)ev->u.thread_start.thread_id, (void *)ev->u.thread_start.thread_env_id);
    if (first) {
        for (int i = 0; i < 3; i++)
            if (!seen[i])
                a_fail("first THREAD_START (%s, event %ld) came before CLASS_LOAD of %s", a_str(name), s,
                       core_classes[i]);
    }
    if (is_main && after_init)
        a_fail("THREAD_START of main came after JVM_INIT_DONE");
}

static void on_init_done(JVMPI_Event *ev, long s)
{
    a_check_unused_zero(ev, offsetof(JVMPI_Event, u), "JVM_INIT_DONE");
    pthread_mutex_lock(&lock);
    int count = ++init_done;
    long ms = main_start, cl = n_class_load, ts = n_thread_start;
    JNIEnv *menv = main_env;
    long seen[3];
    memcpy(seen, core_seen, sizeof seen);
    pthread_mutex_unlock(&lock);

    a_rec("EVENT %ld JVM_INIT_DONE after %ld CLASS_LOAD and %ld THREAD_START", s, cl, ts);
    if (count != 1)
        a_fail("JVM_INIT_DONE number %d", count);
    if (!ms)
        a_fail("JVM_INIT_DONE came before any THREAD_START of main");
    for (int i = 0; i < 3; i++)
        if (!seen[i])
            a_fail("JVM_INIT_DONE came before CLASS_LOAD of %s", core_classes[i]);
    JNIEnv *cur = a_current_env();
    if (ev->env_id != cur)
        a_fail("JVM_INIT_DONE env_id %p is not the calling thread's JNIEnv %p", (void *)ev->env_id,
               (void *)cur);
    /* VMInit runs on the main thread, so this is main's JNIEnv. */
    if (ms && menv != cur)
        a_fail("THREAD_START of main had thread_env_id %p, but JVM_INIT_DONE runs on JNIEnv %p",
               (void *)menv, (void *)cur);
}

static void notify(JVMPI_Event *ev)
{
    pthread_mutex_lock(&lock);
    long s = ++seq;
    pthread_mutex_unlock(&lock);
    switch (ev->event_type) {
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev, s);
        break;
    case JVMPI_EVENT_THREAD_START:
        on_thread_start(ev, s);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        on_init_done(ev, s);
        break;
    default:
        /* A real agent would abort here; recording is enough for the test. */
        a_fail("event %ld: type %d (0x%x) was never enabled", s, (int)ev->event_type,
               (unsigned)ev->event_type);
    }
}

static void at_exit(void)
{
    pthread_mutex_lock(&lock);
    long n = seq, cl = n_class_load, ts = n_thread_start;
    int done = init_done;
    pthread_mutex_unlock(&lock);
    a_rec("EXIT events=%ld class_load=%ld thread_start=%ld init_done=%d failures=%d", n, cl, ts, done,
          a_failures);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (a_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    char *mode = a_opt(options, "notify");
    int late = a_streq(mode, "late");
    free(mode);
    if (!late)
        a_jvmpi->NotifyEvent = notify;
    a_expect_enable(JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD");
    a_expect_enable(JVMPI_EVENT_THREAD_START, "THREAD_START");
    a_expect_enable(JVMPI_EVENT_JVM_INIT_DONE, "JVM_INIT_DONE");
    if (late)
        a_jvmpi->NotifyEvent = notify;
    atexit(at_exit);
    a_rec("START notify=%s", late ? "late" : "early");
    return JNI_OK;
}
