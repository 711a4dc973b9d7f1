/*
 * test_rawmon.c - JVMPI raw monitors (jvmpi/rawmon.c).
 *
 * Threads are identified to rawmon through a fake env source: each test
 * thread sets its own __thread JNIEnv * to a distinct fake pointer, so
 * owners, entering and waiting threads can be checked by "env".
 *
 * Helper threads never call ck_assert (a failure there is not reliably
 * reported); they record what they saw and the main thread asserts.
 * Anything that waits for another thread polls with a deadline, and timing
 * assertions use lower bounds only: test machines are noisy.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>

#include <check.h>

#include "rawmon.h"

/* ------------------------------------------------------------------------ */
/* fake envs, time, polling                                                  */
/* ------------------------------------------------------------------------ */

static char env_tokens[16];
#define FAKE_ENV(i) ((JNIEnv *)(void *)&env_tokens[(i)])

static __thread JNIEnv *tls_env;
static __thread int tls_tid;

static JNIEnv *fake_env(void)
{
    return tls_env;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* Polls pred for up to 5 s. */
static bool eventually(bool (*pred)(void *), void *arg)
{
    int64_t end = now_ns() + INT64_C(5000000000);
    while (!pred(arg)) {
        if (now_ns() > end)
            return false;
        sleep_ms(1);
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* snapshots                                                                 */
/* ------------------------------------------------------------------------ */

#define MAX_LIST 8

typedef struct {
    JVMPI_RawMonitor want;
    bool found;
    char name[64];
    JNIEnv *owner;
    jint entry_count;
    jint n_entering;
    JNIEnv *entering[MAX_LIST];
    jint n_waiting;
    JNIEnv *waiting[MAX_LIST];
} snap_copy;

static void copy_cb(const rawmon_snapshot *snap, void *arg)
{
    snap_copy *c = arg;
    if (snap->id != c->want)
        return;
    c->found = true;
    snprintf(c->name, sizeof c->name, "%s", snap->name);
    c->owner = snap->owner;
    c->entry_count = snap->entry_count;
    c->n_entering = snap->n_entering;
    c->n_waiting = snap->n_waiting;
    for (jint i = 0; i < snap->n_entering && i < MAX_LIST; i++)
        c->entering[i] = snap->entering[i];
    for (jint i = 0; i < snap->n_waiting && i < MAX_LIST; i++)
        c->waiting[i] = snap->waiting[i];
}

static snap_copy snap_of(JVMPI_RawMonitor m)
{
    snap_copy c;
    memset(&c, 0, sizeof c);
    c.want = m;
    rawmon_for_each(copy_cb, &c);
    return c;
}

static void count_cb(const rawmon_snapshot *snap, void *arg)
{
    (void)snap;
    (*(int *)arg)++;
}

static int count_live_by_walk(void)
{
    int n = 0;
    rawmon_for_each(count_cb, &n);
    return n;
}

typedef struct {
    JVMPI_RawMonitor m;
    jint entering, waiting;
} queue_want;

static bool queues_are(void *arg)
{
    queue_want *q = arg;
    snap_copy c = snap_of(q->m);
    return c.found && c.n_entering == q->entering && c.n_waiting == q->waiting;
}

static bool wait_queues(JVMPI_RawMonitor m, jint entering, jint waiting)
{
    queue_want q = { m, entering, waiting };
    return eventually(queues_are, &q);
}

/* ------------------------------------------------------------------------ */
/* stderr capture: every bad call must say so in exactly one line            */
/* ------------------------------------------------------------------------ */

typedef struct {
    int saved;
    FILE *tmp;
    char text[8192];
    int lines;
} capture;

static void capture_begin(capture *c)
{
    fflush(stderr);
    c->tmp = tmpfile();
    ck_assert_ptr_nonnull(c->tmp);
    c->saved = dup(2);
    ck_assert_int_ge(c->saved, 0);
    ck_assert_int_ge(dup2(fileno(c->tmp), 2), 0);
}

static void capture_end(capture *c)
{
    size_t n;

    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    rewind(c->tmp);
    n = fread(c->text, 1, sizeof c->text - 1, c->tmp);
    c->text[n] = '\0';
    fclose(c->tmp);
    c->lines = 0;
    for (size_t i = 0; i < n; i++)
        if (c->text[i] == '\n')
            c->lines++;
    /* echo, so a failing run shows what was said */
    fputs(c->text, stderr);
}

/* Number of lines of the form "JVMPI layer: error: <fn>: ..." */
static int error_lines_for(const capture *c, const char *fn)
{
    char prefix[128];
    int count = 0;
    const char *line = c->text;

    snprintf(prefix, sizeof prefix, "JVMPI layer: error: %s: ", fn);
    while (*line) {
        const char *eol = strchr(line, '\n');
        if (strncmp(line, prefix, strlen(prefix)) == 0)
            count++;
        if (!eol)
            break;
        line = eol + 1;
    }
    return count;
}

/* ------------------------------------------------------------------------ */
/* event recording                                                           */
/* ------------------------------------------------------------------------ */

typedef struct {
    jint type;
    char name[32];
    JVMPI_RawMonitor id;
    int tid;
} event_rec;

static pthread_mutex_t rec_mu = PTHREAD_MUTEX_INITIALIZER;
static event_rec recs[64];
static int n_recs;
static JVMPI_RawMonitor aux_monitor;   /* taken inside handlers */
static atomic_int handler_lock_checks;

static void record_event(jint type, const char *name, JVMPI_RawMonitor id);

static void record_sink(jint type, const char *name, JVMPI_RawMonitor id)
{
    int walked;

    /* Handlers take raw monitors.  rawmon_for_each locks every monitor, and
     * re-entering the reported one from ENTERED needs its lock: either one
     * hangs (and the test times out) if the sink ran under a rawmon lock. */
    walked = count_live_by_walk();
    if (aux_monitor) {
        rawmon_enter(aux_monitor);
        rawmon_exit(aux_monitor);
    }
    if (type == JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED) {
        rawmon_enter(id);
        rawmon_exit(id);
    }
    if (walked > 0)
        atomic_fetch_add(&handler_lock_checks, 1);
    record_event(type, name, id);
}

static void record_event(jint type, const char *name, JVMPI_RawMonitor id)
{
    pthread_mutex_lock(&rec_mu);
    if (n_recs < (int)(sizeof recs / sizeof recs[0])) {
        recs[n_recs].type = type;
        snprintf(recs[n_recs].name, sizeof recs[n_recs].name, "%s", name);
        recs[n_recs].id = id;
        recs[n_recs].tid = tls_tid;
        n_recs++;
    }
    pthread_mutex_unlock(&rec_mu);
}

static int recorded(void)
{
    int n;
    pthread_mutex_lock(&rec_mu);
    n = n_recs;
    pthread_mutex_unlock(&rec_mu);
    return n;
}

static bool has_records(void *arg)
{
    return recorded() >= *(int *)arg;
}

static void setup(void)
{
    rawmon_set_event_sink(NULL);
    rawmon_set_env_source(fake_env);
    tls_env = FAKE_ENV(0);
    tls_tid = 1;
    pthread_mutex_lock(&rec_mu);
    n_recs = 0;
    pthread_mutex_unlock(&rec_mu);
    aux_monitor = NULL;
    atomic_store(&handler_lock_checks, 0);
}

static void teardown(void)
{
    rawmon_set_event_sink(NULL);
}

/* ------------------------------------------------------------------------ */
/* helper threads                                                            */
/* ------------------------------------------------------------------------ */

typedef struct {
    JVMPI_RawMonitor m;
    int tid;
    JNIEnv *env;
    jlong ms;               /* for waiters */
    atomic_int started;
    atomic_int acquired;
    atomic_int release;     /* holders: exit when set */
    atomic_int done;
    int64_t wait_ns;        /* how long rawmon_wait took */
    bool owned_after_wait;  /* snapshot right after wait returned */
    jint count_after_wait;
    pthread_t thread;
} helper;

static void helper_init(helper *h, JVMPI_RawMonitor m, int tid, JNIEnv *env)
{
    memset(h, 0, sizeof *h);
    h->m = m;
    h->tid = tid;
    h->env = env;
}

static void helper_identify(helper *h)
{
    tls_env = h->env;
    tls_tid = h->tid;
    atomic_store(&h->started, 1);
}

/* enter, note it, exit */
static void *enterer(void *arg)
{
    helper *h = arg;
    helper_identify(h);
    rawmon_enter(h->m);
    atomic_store(&h->acquired, 1);
    rawmon_exit(h->m);
    atomic_store(&h->done, 1);
    return NULL;
}

/* enter, hold until told, exit */
static void *holder(void *arg)
{
    helper *h = arg;
    helper_identify(h);
    rawmon_enter(h->m);
    atomic_store(&h->acquired, 1);
    while (!atomic_load(&h->release))
        sleep_ms(1);
    rawmon_exit(h->m);
    atomic_store(&h->done, 1);
    return NULL;
}

/* enter, wait(ms), check ownership, exit */
static void *waiter(void *arg)
{
    helper *h = arg;
    int64_t t0;
    snap_copy c;

    helper_identify(h);
    rawmon_enter(h->m);
    atomic_store(&h->acquired, 1);
    t0 = now_ns();
    rawmon_wait(h->m, h->ms);
    h->wait_ns = now_ns() - t0;
    c = snap_of(h->m);
    h->owned_after_wait = c.found && c.owner == h->env;
    h->count_after_wait = c.entry_count;
    rawmon_exit(h->m);
    atomic_store(&h->done, 1);
    return NULL;
}

static void helper_start(helper *h, void *(*fn)(void *))
{
    ck_assert_int_eq(pthread_create(&h->thread, NULL, fn, h), 0);
}

static void helper_join(helper *h)
{
    ck_assert_int_eq(pthread_join(h->thread, NULL), 0);
}

static bool flag_set(void *arg)
{
    return atomic_load((atomic_int *)arg) != 0;
}

/* ------------------------------------------------------------------------ */
/* tests                                                                     */
/* ------------------------------------------------------------------------ */

START_TEST(test_recursion)
{
    JVMPI_RawMonitor m = rawmon_create("rec");
    snap_copy c;
    helper h;
    capture cap;

    ck_assert_ptr_nonnull(m);
    rawmon_enter(m);
    rawmon_enter(m);
    rawmon_enter(m);
    c = snap_of(m);
    ck_assert(c.found);
    ck_assert_str_eq(c.name, "rec");
    ck_assert_ptr_eq(c.owner, FAKE_ENV(0));
    ck_assert_int_eq(c.entry_count, 3);

    rawmon_exit(m);
    rawmon_exit(m);
    ck_assert_int_eq(snap_of(m).entry_count, 1);

    /* one level left: another thread must still be kept out */
    helper_init(&h, m, 2, FAKE_ENV(1));
    helper_start(&h, enterer);
    ck_assert(wait_queues(m, 1, 0));
    sleep_ms(50);
    ck_assert_int_eq(atomic_load(&h.acquired), 0);

    rawmon_exit(m);
    helper_join(&h);
    ck_assert_int_eq(atomic_load(&h.acquired), 1);
    c = snap_of(m);
    ck_assert_ptr_null(c.owner);
    ck_assert_int_eq(c.entry_count, 0);

    /* one exit too many: an error line, still unowned */
    capture_begin(&cap);
    rawmon_exit(m);
    capture_end(&cap);
    ck_assert_int_eq(cap.lines, 1);
    ck_assert_int_eq(error_lines_for(&cap, "RawMonitorExit"), 1);
    c = snap_of(m);
    ck_assert_ptr_null(c.owner);
    ck_assert_int_eq(c.entry_count, 0);

    /* and it is still usable */
    rawmon_enter(m);
    ck_assert_int_eq(snap_of(m).entry_count, 1);
    rawmon_exit(m);
    rawmon_destroy(m);
}
END_TEST

START_TEST(test_wait_timeout)
{
    JVMPI_RawMonitor m = rawmon_create("timed");
    int64_t t0, elapsed;
    snap_copy c;

    rawmon_enter(m);
    rawmon_enter(m);
    t0 = now_ns();
    rawmon_wait(m, 200);
    elapsed = now_ns() - t0;
    /* lower bound only (1 ms slack for clock granularity) */
    ck_assert_msg(elapsed >= INT64_C(199000000), "wait(200) returned after %lld ns",
                  (long long)elapsed);

    /* the whole recursion count is back */
    c = snap_of(m);
    ck_assert_ptr_eq(c.owner, FAKE_ENV(0));
    ck_assert_int_eq(c.entry_count, 2);
    ck_assert_int_eq(c.n_waiting, 0);
    ck_assert_int_eq(c.n_entering, 0);
    rawmon_exit(m);
    rawmon_exit(m);
    ck_assert_ptr_null(snap_of(m).owner);
    rawmon_destroy(m);
}
END_TEST

START_TEST(test_wait_releases_monitor)
{
    /* while the owner waits (recursion 3), another thread can take it */
    JVMPI_RawMonitor m = rawmon_create("released");
    helper e;

    rawmon_enter(m);
    rawmon_enter(m);
    rawmon_enter(m);
    helper_init(&e, m, 2, FAKE_ENV(1));
    helper_start(&e, enterer);
    ck_assert(wait_queues(m, 1, 0));
    rawmon_wait(m, 100);   /* releases all three levels: e gets in and out */
    helper_join(&e);
    ck_assert_int_eq(atomic_load(&e.acquired), 1);
    ck_assert_int_eq(snap_of(m).entry_count, 3);
    ck_assert_ptr_eq(snap_of(m).owner, FAKE_ENV(0));
    rawmon_exit(m);
    rawmon_exit(m);
    rawmon_exit(m);
    rawmon_destroy(m);
}
END_TEST

#define N_WAITERS 4

START_TEST(test_notify_all_wakes_all)
{
    /* 0 and negative mean forever; one waiter has a long timeout that the
     * notify must cut short */
    static const jlong ms[N_WAITERS] = { 0, -1, 0, 30000 };
    JVMPI_RawMonitor m = rawmon_create("notify");
    helper w[N_WAITERS];
    snap_copy c;

    for (int i = 0; i < N_WAITERS; i++) {
        helper_init(&w[i], m, 2 + i, FAKE_ENV(1 + i));
        w[i].ms = ms[i];
        helper_start(&w[i], waiter);
    }
    ck_assert(wait_queues(m, 0, N_WAITERS));
    sleep_ms(50);
    for (int i = 0; i < N_WAITERS; i++)
        ck_assert_int_eq(atomic_load(&w[i].done), 0);

    rawmon_enter(m);
    rawmon_notify_all(m);
    /* notified waiters now queue to get the monitor back */
    c = snap_of(m);
    ck_assert_int_eq(c.n_waiting, 0);
    ck_assert_int_eq(c.n_entering, N_WAITERS);
    rawmon_exit(m);

    for (int i = 0; i < N_WAITERS; i++) {
        helper_join(&w[i]);
        ck_assert_int_eq(atomic_load(&w[i].done), 1);
        ck_assert_msg(w[i].owned_after_wait, "waiter %d did not own the monitor after wait", i);
        ck_assert_int_eq(w[i].count_after_wait, 1);
    }
    ck_assert_msg(w[3].wait_ns < INT64_C(20000000000), "timed waiter was not woken by notify");

    /* notify with nobody waiting is harmless */
    rawmon_enter(m);
    rawmon_notify_all(m);
    rawmon_exit(m);
    c = snap_of(m);
    ck_assert_ptr_null(c.owner);
    ck_assert_int_eq(c.n_entering + c.n_waiting, 0);
    rawmon_destroy(m);
}
END_TEST

static void run_contention(const char *name, JVMPI_RawMonitor m)
{
    helper b;
    int one = 1;

    rawmon_enter(m);
    helper_init(&b, m, 2, FAKE_ENV(1));
    helper_start(&b, enterer);
    ck_assert(wait_queues(m, 1, 0));
    if (name[0] != '_')
        ck_assert(eventually(has_records, &one)); /* ENTER went out before we exit */
    rawmon_exit(m);
    helper_join(&b);
    ck_assert_int_eq(atomic_load(&b.acquired), 1);
}

START_TEST(test_contention_events)
{
    JVMPI_RawMonitor m;
    int enter_at = -1, entered_at = -1, exit_at = -1;

    /* Agent-private, as real agents named the monitors their handlers take:
     * a contended "aux" would send events of its own from inside the sink,
     * whose handler would contend again, without end (seen under ASan when
     * the owner's EXIT and the waiter's ENTERED were handled at once). */
    aux_monitor = rawmon_create("_aux");
    m = rawmon_create("contended");
    rawmon_set_event_sink(record_sink);

    /* uncontended use is silent */
    rawmon_enter(m);
    rawmon_enter(m);
    rawmon_exit(m);
    rawmon_exit(m);
    ck_assert_int_eq(recorded(), 0);

    run_contention("contended", m);

    pthread_mutex_lock(&rec_mu);
    ck_assert_int_eq(n_recs, 3);
    for (int i = 0; i < n_recs; i++) {
        ck_assert_str_eq(recs[i].name, "contended");
        ck_assert_ptr_eq(recs[i].id, m);
        switch (recs[i].type) {
        case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
            enter_at = i;
            ck_assert_int_eq(recs[i].tid, 2);
            break;
        case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
            entered_at = i;
            ck_assert_int_eq(recs[i].tid, 2);
            break;
        case JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT:
            exit_at = i;
            ck_assert_int_eq(recs[i].tid, 1);
            break;
        default:
            ck_abort_msg("unexpected event type %d", (int)recs[i].type);
        }
    }
    pthread_mutex_unlock(&rec_mu);
    /* ENTER first; EXIT (owner) and ENTERED (waiter) race with each other */
    ck_assert_int_eq(enter_at, 0);
    ck_assert_int_ge(entered_at, 1);
    ck_assert_int_ge(exit_at, 1);
    ck_assert_int_eq(atomic_load(&handler_lock_checks), 3);

    /* the waiter's own exit had nobody queued: no second EXIT */
    ck_assert_ptr_null(snap_of(m).owner);
    rawmon_set_event_sink(NULL);
    rawmon_destroy(m);
    rawmon_destroy(aux_monitor);
}
END_TEST

START_TEST(test_underscore_names_silent)
{
    JVMPI_RawMonitor m = rawmon_create("_quiet");
    JVMPI_RawMonitor loud = rawmon_create("loud");

    rawmon_set_event_sink(record_sink);
    run_contention("_quiet", m);
    ck_assert_int_eq(recorded(), 0);

    /* same sink, same situation, normal name: events do flow (so the check
     * above is not vacuous) */
    run_contention("loud", loud);
    ck_assert_int_eq(recorded(), 3);

    rawmon_set_event_sink(NULL);
    rawmon_destroy(m);
    rawmon_destroy(loud);
}
END_TEST

/* An ENTERED handler owns the monitor alone, so it may destroy it; the name
 * it was handed must stay readable until it returns.  Creating a monitor
 * with a same-length name right after makes a freed name likely to be
 * overwritten, so a plain build sees it too, not just ASan. */
static void destroying_sink(jint type, const char *name, JVMPI_RawMonitor id)
{
    if (type == JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED) {
        JVMPI_RawMonitor other;
        rawmon_destroy(id);
        other = rawmon_create("XXXXXXXXXXXX");
        record_event(type, name, id);
        rawmon_destroy(other);
        return;
    }
    record_sink(type, name, id);
}

START_TEST(test_handler_destroys_monitor)
{
    JVMPI_RawMonitor m = rawmon_create("selfdestruct");
    jint live = rawmon_live_count();
    capture cap;

    rawmon_set_event_sink(destroying_sink);
    capture_begin(&cap);
    run_contention("selfdestruct", m);   /* the helper's final exit hits a dead handle */
    capture_end(&cap);
    rawmon_set_event_sink(NULL);

    ck_assert_int_eq(error_lines_for(&cap, "RawMonitorExit"), 1);
    ck_assert_int_eq(cap.lines, 1);
    ck_assert_int_eq(rawmon_live_count(), live - 1);
    ck_assert(!snap_of(m).found);
    pthread_mutex_lock(&rec_mu);
    ck_assert_int_eq(n_recs, 3);
    for (int i = 0; i < n_recs; i++)
        ck_assert_str_eq(recs[i].name, "selfdestruct");
    pthread_mutex_unlock(&rec_mu);
}
END_TEST

static void all_ops_expect_errors(JVMPI_RawMonitor bad, const char *what)
{
    capture cap;

    capture_begin(&cap);
    rawmon_enter(bad);
    rawmon_exit(bad);
    rawmon_wait(bad, 10);
    rawmon_notify_all(bad);
    rawmon_destroy(bad);
    capture_end(&cap);
    ck_assert_msg(cap.lines == 5, "%s: expected 5 error lines, got %d:\n%s", what, cap.lines, cap.text);
    ck_assert_int_eq(error_lines_for(&cap, "RawMonitorEnter"), 1);
    ck_assert_int_eq(error_lines_for(&cap, "RawMonitorExit"), 1);
    ck_assert_int_eq(error_lines_for(&cap, "RawMonitorWait"), 1);
    ck_assert_int_eq(error_lines_for(&cap, "RawMonitorNotifyAll"), 1);
    ck_assert_int_eq(error_lines_for(&cap, "RawMonitorDestroy"), 1);
}

static bool is_live_id(JVMPI_RawMonitor m)
{
    return snap_of(m).found;
}

START_TEST(test_bad_handles)
{
    JVMPI_RawMonitor m = rawmon_create("good");
    JVMPI_RawMonitor doomed, reborn;
    /* memory that holds a valid handle, to catch an implementation that
     * reads through what it is given */
    struct {
        uint64_t junk[4];
        JVMPI_RawMonitor inner;
        uint64_t more[4];
    } fake, fake_copy;
    JVMPI_RawMonitor garbage[5];
    capture cap;
    snap_copy c;
    jint live;

    rawmon_enter(m);   /* state to keep intact: owned once by us */

    memset(&fake, 0xab, sizeof fake);
    fake.inner = m;
    memcpy(&fake_copy, &fake, sizeof fake);
    garbage[0] = (JVMPI_RawMonitor)(uintptr_t)0x1234;
    garbage[1] = (JVMPI_RawMonitor)(void *)&fake;
    garbage[2] = (JVMPI_RawMonitor)(uintptr_t)UINTPTR_MAX;
    garbage[3] = (JVMPI_RawMonitor)((uintptr_t)m + 1);
    garbage[4] = (JVMPI_RawMonitor)((uintptr_t)m ^ ((uintptr_t)1 << 30));

    live = rawmon_live_count();
    ck_assert_int_eq(live, count_live_by_walk());

    all_ops_expect_errors(NULL, "NULL");
    for (int i = 0; i < 5; i++) {
        char what[32];
        if (is_live_id(garbage[i]))   /* not garbage after all: cannot test it */
            continue;
        snprintf(what, sizeof what, "garbage[%d]", i);
        all_ops_expect_errors(garbage[i], what);
    }
    ck_assert(memcmp(&fake, &fake_copy, sizeof fake) == 0);

    capture_begin(&cap);
    ck_assert_ptr_null(rawmon_create(NULL));
    capture_end(&cap);
    ck_assert_int_eq(cap.lines, 1);
    ck_assert_int_eq(error_lines_for(&cap, "RawMonitorCreate"), 1);

    /* destroyed handle, and one whose slot has been reused since */
    doomed = rawmon_create("doomed");
    ck_assert_int_eq(rawmon_live_count(), live + 1);
    rawmon_destroy(doomed);
    ck_assert_int_eq(rawmon_live_count(), live);
    all_ops_expect_errors(doomed, "destroyed");
    reborn = rawmon_create("reborn");
    ck_assert_ptr_ne(reborn, doomed);
    all_ops_expect_errors(doomed, "destroyed, slot reused");
    c = snap_of(reborn);
    ck_assert(c.found);
    ck_assert_str_eq(c.name, "reborn");
    ck_assert_ptr_null(c.owner);
    ck_assert_int_eq(c.entry_count, 0);

    /* nothing changed for the good monitor */
    c = snap_of(m);
    ck_assert(c.found);
    ck_assert_ptr_eq(c.owner, FAKE_ENV(0));
    ck_assert_int_eq(c.entry_count, 1);
    ck_assert_int_eq(c.n_entering + c.n_waiting, 0);
    ck_assert_int_eq(rawmon_live_count(), live + 1);
    ck_assert_int_eq(count_live_by_walk(), live + 1);

    rawmon_exit(m);
    rawmon_destroy(reborn);
    rawmon_destroy(m);
}
END_TEST

START_TEST(test_non_owner_calls)
{
    JVMPI_RawMonitor m = rawmon_create("theirs");
    helper a;
    capture cap;
    snap_copy c;
    int64_t t0, took;

    helper_init(&a, m, 2, FAKE_ENV(1));
    helper_start(&a, holder);
    ck_assert(eventually(flag_set, &a.acquired));

    capture_begin(&cap);
    rawmon_exit(m);
    rawmon_notify_all(m);
    t0 = now_ns();
    rawmon_wait(m, 3000);
    took = now_ns() - t0;
    rawmon_destroy(m);
    capture_end(&cap);
    ck_assert_int_eq(cap.lines, 4);
    ck_assert_int_eq(error_lines_for(&cap, "RawMonitorExit"), 1);
    ck_assert_int_eq(error_lines_for(&cap, "RawMonitorNotifyAll"), 1);
    ck_assert_int_eq(error_lines_for(&cap, "RawMonitorWait"), 1);
    ck_assert_int_eq(error_lines_for(&cap, "RawMonitorDestroy"), 1);
    ck_assert_msg(took < INT64_C(2000000000), "wait by a non-owner blocked for %lld ns",
                  (long long)took);

    c = snap_of(m);
    ck_assert(c.found);   /* destroy refused: still alive */
    ck_assert_ptr_eq(c.owner, FAKE_ENV(1));
    ck_assert_int_eq(c.entry_count, 1);
    ck_assert_int_eq(c.n_waiting, 0);

    atomic_store(&a.release, 1);
    helper_join(&a);
    ck_assert_ptr_null(snap_of(m).owner);
    rawmon_destroy(m);
}
END_TEST

START_TEST(test_destroy_rules)
{
    JVMPI_RawMonitor m = rawmon_create("busy");
    helper w;
    capture cap;
    jint live;

    /* someone waiting on it: refused */
    helper_init(&w, m, 2, FAKE_ENV(1));
    w.ms = 0;
    helper_start(&w, waiter);
    ck_assert(wait_queues(m, 0, 1));
    live = rawmon_live_count();
    capture_begin(&cap);
    rawmon_destroy(m);
    capture_end(&cap);
    ck_assert_int_eq(cap.lines, 1);
    ck_assert_int_eq(error_lines_for(&cap, "RawMonitorDestroy"), 1);
    ck_assert_int_eq(rawmon_live_count(), live);
    ck_assert(snap_of(m).found);

    /* the waiter still works */
    rawmon_enter(m);
    rawmon_notify_all(m);
    rawmon_exit(m);
    helper_join(&w);
    ck_assert(w.owned_after_wait);

    /* owned by the caller alone (even recursively): allowed, silently */
    rawmon_enter(m);
    rawmon_enter(m);
    capture_begin(&cap);
    rawmon_destroy(m);
    capture_end(&cap);
    ck_assert_int_eq(cap.lines, 0);
    ck_assert_int_eq(rawmon_live_count(), live - 1);
    ck_assert(!snap_of(m).found);

    /* and the handle is dead from then on */
    capture_begin(&cap);
    rawmon_exit(m);
    capture_end(&cap);
    ck_assert_int_eq(error_lines_for(&cap, "RawMonitorExit"), 1);
}
END_TEST

static bool status_is_monitor_wait_1(void *arg)
{
    (void)arg;
    return rawmon_thread_blocked_status(FAKE_ENV(1)) == JVMPI_THREAD_MONITOR_WAIT;
}

static bool status_is_condvar_wait_2(void *arg)
{
    (void)arg;
    return rawmon_thread_blocked_status(FAKE_ENV(2)) == JVMPI_THREAD_CONDVAR_WAIT;
}

START_TEST(test_blocked_status)
{
    JVMPI_RawMonitor m = rawmon_create("status");
    helper b, w;

    ck_assert_int_eq(rawmon_thread_blocked_status(FAKE_ENV(1)), 0);
    ck_assert_int_eq(rawmon_thread_blocked_status(NULL), 0);

    /* blocked entering */
    rawmon_enter(m);
    helper_init(&b, m, 2, FAKE_ENV(1));
    helper_start(&b, enterer);
    ck_assert(eventually(status_is_monitor_wait_1, NULL));
    ck_assert_int_eq(rawmon_thread_blocked_status(FAKE_ENV(0)), 0); /* the owner runs */
    ck_assert_int_eq(rawmon_thread_blocked_status(FAKE_ENV(2)), 0); /* unknown thread */
    ck_assert_int_eq(rawmon_thread_blocked_status(NULL), 0);
    rawmon_exit(m);
    helper_join(&b);
    ck_assert_int_eq(rawmon_thread_blocked_status(FAKE_ENV(1)), 0);

    /* in wait; then, notified while we hold the monitor, blocked re-entering */
    helper_init(&w, m, 3, FAKE_ENV(2));
    w.ms = 0;
    helper_start(&w, waiter);
    ck_assert(eventually(status_is_condvar_wait_2, NULL));
    ck_assert_int_eq(rawmon_thread_blocked_status(FAKE_ENV(1)), 0);
    rawmon_enter(m);
    rawmon_notify_all(m);
    ck_assert_int_eq(rawmon_thread_blocked_status(FAKE_ENV(2)), JVMPI_THREAD_MONITOR_WAIT);
    rawmon_exit(m);
    helper_join(&w);
    ck_assert_int_eq(rawmon_thread_blocked_status(FAKE_ENV(2)), 0);
    rawmon_destroy(m);
}
END_TEST

START_TEST(test_for_each_snapshot)
{
    JVMPI_RawMonitor m = rawmon_create("snap");
    JVMPI_RawMonitor idle = rawmon_create("idle");
    helper w, e;
    snap_copy c;

    /* W waits (on FAKE_ENV(2)), we own it twice (FAKE_ENV(0)), E enters (FAKE_ENV(1)) */
    helper_init(&w, m, 3, FAKE_ENV(2));
    w.ms = 0;
    helper_start(&w, waiter);
    ck_assert(wait_queues(m, 0, 1));
    rawmon_enter(m);
    rawmon_enter(m);
    helper_init(&e, m, 2, FAKE_ENV(1));
    helper_start(&e, enterer);
    ck_assert(wait_queues(m, 1, 1));

    c = snap_of(m);
    ck_assert(c.found);
    ck_assert_str_eq(c.name, "snap");
    ck_assert_ptr_eq(c.owner, FAKE_ENV(0));
    ck_assert_int_eq(c.entry_count, 2);
    ck_assert_int_eq(c.n_entering, 1);
    ck_assert_ptr_eq(c.entering[0], FAKE_ENV(1));
    ck_assert_int_eq(c.n_waiting, 1);
    ck_assert_ptr_eq(c.waiting[0], FAKE_ENV(2));

    c = snap_of(idle);
    ck_assert(c.found);
    ck_assert_str_eq(c.name, "idle");
    ck_assert_ptr_null(c.owner);
    ck_assert_int_eq(c.entry_count, 0);
    ck_assert_int_eq(c.n_entering, 0);
    ck_assert_int_eq(c.n_waiting, 0);
    ck_assert_int_eq(count_live_by_walk(), rawmon_live_count());

    rawmon_notify_all(m);
    rawmon_exit(m);
    rawmon_exit(m);
    helper_join(&w);
    helper_join(&e);
    ck_assert(w.owned_after_wait);
    ck_assert_int_eq(atomic_load(&e.acquired), 1);
    rawmon_destroy(m);
    rawmon_destroy(idle);
    ck_assert(!snap_of(m).found);
}
END_TEST

/* ---- stress: mutual exclusion, and stale handles racing create/destroy ---- */

#define STRESS_THREADS 4
#define STRESS_ITERS 20000

typedef struct {
    JVMPI_RawMonitor m;
    long *counter;
    int index;
} stress_arg;

/* Unprotected read-yield-write of a shared counter: any hole in mutual
 * exclusion (also around the recursion count that wait() restores) loses
 * updates. */
static void *stress_worker(void *p)
{
    stress_arg *a = p;
    tls_env = FAKE_ENV(1 + a->index);
    for (int i = 0; i < STRESS_ITERS; i++) {
        rawmon_enter(a->m);
        rawmon_enter(a->m);
        long v = *a->counter;
        if (i % 512 == 0)
            sched_yield();
        *a->counter = v + 1;
        if (i % 1000 == 0) {
            if (a->index == 0)
                rawmon_wait(a->m, 1);
            else
                rawmon_notify_all(a->m);
        }
        rawmon_exit(a->m);
        rawmon_exit(a->m);
    }
    return NULL;
}

START_TEST(test_mutual_exclusion)
{
    JVMPI_RawMonitor m = rawmon_create("_stress");
    pthread_t t[STRESS_THREADS];
    stress_arg a[STRESS_THREADS];
    long counter = 0;
    snap_copy c;

    for (int i = 0; i < STRESS_THREADS; i++) {
        a[i] = (stress_arg){ m, &counter, i };
        ck_assert_int_eq(pthread_create(&t[i], NULL, stress_worker, &a[i]), 0);
    }
    for (int i = 0; i < STRESS_THREADS; i++)
        pthread_join(t[i], NULL);
    ck_assert_int_eq(counter, (long)STRESS_THREADS * STRESS_ITERS);
    c = snap_of(m);
    ck_assert_ptr_null(c.owner);
    ck_assert_int_eq(c.n_entering + c.n_waiting, 0);
    rawmon_destroy(m);
}
END_TEST

#define CHURN_ITERS 3000

static _Atomic(JVMPI_RawMonitor) churn_current;
static atomic_int churn_done;

static void *churn_creator(void *p)
{
    (void)p;
    tls_env = FAKE_ENV(1);
    for (int i = 0; i < CHURN_ITERS; i++) {
        JVMPI_RawMonitor m = rawmon_create(i % 2 ? "churn" : "_churn");
        atomic_store(&churn_current, m);
        rawmon_enter(m);
        rawmon_exit(m);
        rawmon_destroy(m);   /* refused (and leaked) when the user holds it */
    }
    atomic_store(&churn_done, 1);
    return NULL;
}

static void *churn_user(void *p)
{
    (void)p;
    tls_env = FAKE_ENV(2);
    while (!atomic_load(&churn_done)) {
        JVMPI_RawMonitor m = atomic_load(&churn_current);
        if (m == NULL)
            continue;
        rawmon_enter(m);
        rawmon_notify_all(m);
        rawmon_exit(m);
    }
    return NULL;
}

static void collect_cb(const rawmon_snapshot *snap, void *arg)
{
    JVMPI_RawMonitor *ids = arg;
    /* the table is small here; ids[0] counts */
    uintptr_t n = (uintptr_t)ids[0];
    if (n < 4095)
        ids[1 + n] = snap->id;
    ids[0] = (JVMPI_RawMonitor)(n + 1);
    ck_assert_ptr_null(snap->owner);
    ck_assert_int_eq(snap->n_entering + snap->n_waiting, 0);
}

START_TEST(test_stale_handles_race_create_destroy)
{
    static JVMPI_RawMonitor ids[4096];
    pthread_t c, u;
    int fd_null, saved;
    uintptr_t n;

    /* thousands of expected error lines: keep them out of the log */
    fflush(stderr);
    saved = dup(2);
    fd_null = open("/dev/null", O_WRONLY);
    ck_assert_int_ge(fd_null, 0);
    dup2(fd_null, 2);

    rawmon_set_event_sink(record_sink);
    atomic_store(&churn_current, NULL);
    atomic_store(&churn_done, 0);
    pthread_create(&c, NULL, churn_creator, NULL);
    pthread_create(&u, NULL, churn_user, NULL);
    pthread_join(c, NULL);
    pthread_join(u, NULL);
    rawmon_set_event_sink(NULL);

    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd_null);

    /* what survived (refused destroys) is consistent, unowned and idle */
    ck_assert_int_eq(count_live_by_walk(), rawmon_live_count());
    memset(ids, 0, sizeof ids);
    rawmon_for_each(collect_cb, ids);
    n = (uintptr_t)ids[0];
    ck_assert_uint_lt(n, 4095);
    for (uintptr_t i = 0; i < n; i++)
        rawmon_destroy(ids[1 + i]);
    ck_assert_int_eq(rawmon_live_count(), 0);
    ck_assert_int_eq(count_live_by_walk(), 0);
}
END_TEST

/* ------------------------------------------------------------------------ */

static Suite *rawmon_suite(void)
{
    Suite *s = suite_create("rawmon");
    TCase *tc;

    tc = tcase_create("semantics");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_recursion);
    tcase_add_test(tc, test_wait_timeout);
    tcase_add_test(tc, test_wait_releases_monitor);
    tcase_add_test(tc, test_notify_all_wakes_all);
    tcase_add_test(tc, test_blocked_status);
    tcase_add_test(tc, test_for_each_snapshot);
    suite_add_tcase(s, tc);

    tc = tcase_create("events");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_contention_events);
    tcase_add_test(tc, test_underscore_names_silent);
    tcase_add_test(tc, test_handler_destroys_monitor);
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_bad_handles);
    tcase_add_test(tc, test_non_owner_calls);
    tcase_add_test(tc, test_destroy_rules);
    suite_add_tcase(s, tc);

    tc = tcase_create("stress");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_mutual_exclusion);
    tcase_add_test(tc, test_stale_handles_race_create_destroy);
    suite_add_tcase(s, tc);

    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(rawmon_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
