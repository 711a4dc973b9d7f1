/*
 * test_gc.c - OBJECT_ALLOC, OBJECT_FREE, the GC windows, GC control and JNI
 * reference events on the JVMPI side (jvmpi/gc.c, jvmpi/layer.c), driven
 * through the fake backend the way jvmti_backend/heap.c drives them.
 *
 * The delivery thread is not running here: the tests call gc_deliver_due()
 * where that thread would, so every window is delivered on a known thread.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "events.h"
#include "fake_backend.h"
#include "stderr_capture.h"
#include "gc.h"
#include "interface.h"
#include "layer.h"

static char env_tokens[8];
#define ENV(i) ((JNIEnv *)(void *)&env_tokens[(i)])
#define ENV_MAIN ENV(0)
#define THREAD_ID(i) seam_id_from_tag(0x200000 + (int64_t)(i) * 8)

static JVMPI_Interface *pi;

typedef struct {
    jint type;
    JNIEnv *env_id;
    pthread_t thread;
    jobjectID id, class_id;
    jint arena, is_array, size;
    jobject ref;
    jlong used_objects, used_space, total_space;
} rec;

#define MAX_RECS 256
static rec recs[MAX_RECS];
static atomic_int n_recs;

/* what a handler does from inside an event */
static bool run_gc_in_gc_start;
static JVMPI_RawMonitor enter_in_gc_start;

/* A handler of this type (0: none) blocks until released, once. */
static atomic_int block_type;
static pthread_mutex_t block_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t block_cond = PTHREAD_COND_INITIALIZER;
static bool blocked, released;

static void block_here(jint type)
{
    int want = type;
    if (!atomic_compare_exchange_strong(&block_type, &want, 0)) {
        return;
    }
    pthread_mutex_lock(&block_lock);
    blocked = true;
    pthread_cond_broadcast(&block_cond);
    while (!released) {
        pthread_cond_wait(&block_cond, &block_lock);
    }
    pthread_mutex_unlock(&block_lock);
}

static void wait_until_blocked(void)
{
    pthread_mutex_lock(&block_lock);
    while (!blocked) {
        pthread_cond_wait(&block_cond, &block_lock);
    }
    pthread_mutex_unlock(&block_lock);
}

static void release_blocked(void)
{
    pthread_mutex_lock(&block_lock);
    released = true;
    pthread_cond_broadcast(&block_cond);
    pthread_mutex_unlock(&block_lock);
}

static void record(JVMPI_Event *ev)
{
    int i = atomic_fetch_add(&n_recs, 1);
    ck_assert_int_lt(i, MAX_RECS);
    rec *r = &recs[i];
    memset(r, 0, sizeof *r);
    r->type = ev->event_type;
    r->env_id = ev->env_id;
    r->thread = pthread_self();
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        r->id = ev->u.obj_alloc.obj_id;
        r->class_id = ev->u.obj_alloc.class_id;
        r->arena = ev->u.obj_alloc.arena_id;
        r->is_array = ev->u.obj_alloc.is_array;
        r->size = ev->u.obj_alloc.size;
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        r->id = ev->u.obj_free.obj_id;
        break;
    case JVMPI_EVENT_GC_START:
        if (run_gc_in_gc_start) {
            run_gc_in_gc_start = false;
            pi->RunGC();
        }
        if (enter_in_gc_start != NULL) {
            JVMPI_RawMonitor m = enter_in_gc_start;
            enter_in_gc_start = NULL;
            pi->RawMonitorEnter(m);
            pi->RawMonitorExit(m);
        }
        break;
    case JVMPI_EVENT_GC_FINISH:
        r->used_objects = ev->u.gc_info.used_objects;
        r->used_space = ev->u.gc_info.used_object_space;
        r->total_space = ev->u.gc_info.total_object_space;
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        r->id = ev->u.class_load.class_id;
        break;
    case JVMPI_EVENT_THREAD_START:
        r->id = ev->u.thread_start.thread_id;
        break;
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
        r->id = ev->u.jni_globalref_alloc.obj_id;
        r->ref = ev->u.jni_globalref_alloc.ref_id;
        break;
    case JVMPI_EVENT_JNI_GLOBALREF_FREE:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE:
        r->ref = ev->u.jni_globalref_free.ref_id;
        break;
    default:
        break;
    }
    block_here(ev->event_type);
}

static int nrec(void) { return atomic_load(&n_recs); }

static void setup(void)
{
    unsetenv("JVMPI_LAYER_OPTIONS");
    layer_reset();
    fake_reset();
    ids_reset();
    ck_assert_int_eq(layer_onload(NULL, NULL), JNI_OK);
    pi = interface_table();
    pi->NotifyEvent = record;
    atomic_store(&n_recs, 0);
    run_gc_in_gc_start = false;
    atomic_store(&block_type, 0);
    blocked = released = false;
    fake.heap_capacity = 64L << 20;
    fake_set_thread_env(ENV_MAIN);
}

static void teardown(void)
{
    gc_set_settle_observer(NULL);
    layer_reset();
    ids_reset();
}

static void go_live(void)
{
    fake_thread(ENV_MAIN, THREAD_ID(0), "main");
    layer_vm_init(ENV_MAIN);
    atomic_store(&n_recs, 0);
}

static void enable(jint type) { ck_assert_int_eq(pi->EnableEvent(type, NULL), JVMPI_SUCCESS); }

static void enable_gc_events(void)
{
    enable(JVMPI_EVENT_OBJECT_FREE);
    enable(JVMPI_EVENT_GC_START);
    enable(JVMPI_EVENT_GC_FINISH);
}

/* A collection as JVM TI reports it: its finish inside the pause, then the
 * frees (since JDK 16, after the pause). */
static void collection(const int64_t *freed, int n)
{
    layer_gc_finish();
    for (int i = 0; i < n; i++) {
        layer_object_freed(freed[i]);
    }
}

/* recs[from..]: GC_START, the frees, GC_FINISH, all on one thread */
static void assert_window_at(int from, const int64_t *freed, int n)
{
    ck_assert_int_ge(nrec(), from + n + 2);
    ck_assert_int_eq(recs[from].type, JVMPI_EVENT_GC_START);
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(recs[from + 1 + i].type, JVMPI_EVENT_OBJECT_FREE);
        ck_assert_ptr_eq(recs[from + 1 + i].id, seam_id_from_tag(freed[i]));
    }
    ck_assert_int_eq(recs[from + n + 1].type, JVMPI_EVENT_GC_FINISH);
    for (int i = from; i < from + n + 2; i++) {
        ck_assert(pthread_equal(recs[i].thread, recs[from].thread));
        ck_assert_ptr_eq(recs[i].env_id, recs[from].env_id);
    }
}

/* ... and nothing after it */
static void assert_window(int from, const int64_t *freed, int n)
{
    ck_assert_int_eq(nrec(), from + n + 2);
    assert_window_at(from, freed, n);
}

/* ------------------------------------------------------------------------ */

START_TEST(test_window_after_collection)
{
    enable_gc_events();
    go_live();
    int64_t t[4];
    for (int i = 0; i < 4; i++) {
        t[i] = ids_next_object(24, 0);
    }
    ck_assert_int_eq(gc_window_wait_ms(), -1);
    collection(t, 3);
    ck_assert_int_eq(nrec(), 0); /* nothing inside the collection */
    ck_assert_int_eq(gc_window_wait_ms(), 0);
    gc_deliver_due(ENV_MAIN);
    assert_window(0, t, 3);
    rec *fin = &recs[4];
    ck_assert_int_eq(fin->used_objects, 1);
    ck_assert_int_eq(fin->used_space, 24);
    ck_assert_int_eq(fin->total_space, 64L << 20);
    ck_assert_int_eq(gc_window_wait_ms(), -1);
    gc_deliver_due(ENV_MAIN); /* nothing due: nothing sent */
    ck_assert_int_eq(nrec(), 5);
}
END_TEST

static int64_t late_tag;

static void *free_late(void *arg)
{
    layer_object_freed(late_tag);
    return NULL;
}

/* The poster runs while the window waits for its collection's frees: how
 * late it is scheduled on a loaded machine no longer decides the outcome. */
static void post_while_settling(void)
{
    pthread_t poster;
    ck_assert_int_eq(pthread_create(&poster, NULL, free_late, NULL), 0);
    pthread_join(poster, NULL);
}

/* JVM TI posts a collection's frees after it, on another thread: those that
 * come while the window waits for them join it. */
START_TEST(test_late_frees_join_the_window)
{
    enable_gc_events();
    go_live();
    int64_t t[2] = {ids_next_object(16, 0), ids_next_object(16, 0)};
    late_tag = t[1];
    collection(t, 1);
    gc_set_settle_observer(post_while_settling);
    gc_deliver_due(ENV_MAIN);
    gc_set_settle_observer(NULL);
    assert_window(0, t, 2);
}
END_TEST

/* ---- thread suspended mode: windows and other threads' handlers ---------- */

static void *allocate_on_other_thread(void *arg)
{
    seam_object_info info = {seam_id_from_tag(ids_next_object(24, 0)), NULL, JVMPI_INT, 24};
    layer_object_alloc(ENV(1), &info);
    return NULL;
}

static int64_t window_frees[2];

static void *collect_and_deliver(void *arg)
{
    collection(window_frees, 2);
    gc_deliver_due(ENV_MAIN);
    return NULL;
}

static int index_of(jint type)
{
    for (int i = 0; i < nrec(); i++) {
        if (recs[i].type == type) {
            return i;
        }
    }
    return -1;
}

static void pause_ms(long ms)
{
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

/* JVMPI sends OBJECT_ALLOC with GC disabled: a window waits until a handler
 * running on another thread has returned. */
START_TEST(test_window_waits_for_running_handlers)
{
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    enable_gc_events();
    go_live();
    window_frees[0] = ids_next_object(16, 0);
    window_frees[1] = ids_next_object(16, 0);
    atomic_store(&block_type, JVMPI_EVENT_OBJECT_ALLOC);
    pthread_t allocator, collector;
    ck_assert_int_eq(pthread_create(&allocator, NULL, allocate_on_other_thread, NULL), 0);
    wait_until_blocked();
    ck_assert_int_eq(pthread_create(&collector, NULL, collect_and_deliver, NULL), 0);
    pause_ms(100);
    ck_assert_int_eq(index_of(JVMPI_EVENT_GC_START), -1);
    release_blocked();
    pthread_join(allocator, NULL);
    pthread_join(collector, NULL);
    ck_assert_int_eq(index_of(JVMPI_EVENT_OBJECT_ALLOC), 0);
    assert_window_at(1, window_frees, 2);
}
END_TEST

/* ... and from GC_START to GC_FINISH no handler starts on another thread. */
START_TEST(test_deliveries_wait_for_the_window)
{
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    enable_gc_events();
    go_live();
    window_frees[0] = ids_next_object(16, 0);
    window_frees[1] = ids_next_object(16, 0);
    atomic_store(&block_type, JVMPI_EVENT_GC_START);
    pthread_t allocator, collector;
    ck_assert_int_eq(pthread_create(&collector, NULL, collect_and_deliver, NULL), 0);
    wait_until_blocked();
    ck_assert_int_eq(pthread_create(&allocator, NULL, allocate_on_other_thread, NULL), 0);
    pause_ms(100);
    ck_assert_int_eq(nrec(), 1);
    release_blocked();
    pthread_join(collector, NULL);
    pthread_join(allocator, NULL);
    assert_window_at(0, window_frees, 2);
    ck_assert_int_eq(index_of(JVMPI_EVENT_OBJECT_ALLOC), 4);
}
END_TEST

START_TEST(test_class_tags_are_not_objects)
{
    enable_gc_events();
    go_live();
    int64_t cls = ids_next_class(0);
    int64_t obj = ids_next_object(32, 0);
    int64_t both[2] = {cls, obj};
    collection(both, 2);
    gc_deliver_due(ENV_MAIN);
    assert_window(0, &obj, 1);
    ck_assert_int_eq(recs[2].used_objects, 0);
}
END_TEST

START_TEST(test_free_off_still_counts)
{
    enable(JVMPI_EVENT_GC_START);
    enable(JVMPI_EVENT_GC_FINISH);
    go_live();
    int64_t t[2] = {ids_next_object(16, 0), ids_next_object(40, 0)};
    collection(t, 1);
    gc_deliver_due(ENV_MAIN);
    ck_assert_int_eq(nrec(), 2);
    ck_assert_int_eq(recs[0].type, JVMPI_EVENT_GC_START);
    ck_assert_int_eq(recs[1].type, JVMPI_EVENT_GC_FINISH);
    ck_assert_int_eq(recs[1].used_objects, 1);
    ck_assert_int_eq(recs[1].used_space, 40);
}
END_TEST

START_TEST(test_disabled_gc_holds_windows_back)
{
    enable_gc_events();
    go_live();
    int64_t t[2] = {ids_next_object(16, 0), ids_next_object(16, 0)};
    pi->DisableGC();
    pi->DisableGC();
    collection(t, 2);
    ck_assert_int_eq(gc_window_wait_ms(), -1);
    gc_deliver_due(ENV_MAIN);
    pi->RunGC(); /* refused: GC is disabled */
    ck_assert_int_eq(fake.gc_calls, 0);
    ck_assert_int_eq(nrec(), 0);
    pi->EnableGC();
    ck_assert_int_eq(gc_window_wait_ms(), -1);
    gc_deliver_due(ENV_MAIN);
    ck_assert_int_eq(nrec(), 0);
    pi->EnableGC();
    ck_assert_int_eq(gc_window_wait_ms(), 0);
    gc_deliver_due(ENV_MAIN);
    assert_window(0, t, 2);
    pi->EnableGC(); /* one too many: an error line, nothing else */
    ck_assert_int_eq(interface_gc_disabled_depth(), 0);
}
END_TEST

/* GC disabled for long: the VM collects all the same and the frees wait;
 * past a million of them the user is told once, with how many. */
START_TEST(test_long_disabled_gc_is_told_once)
{
    enable_gc_events();
    go_live();
    pi->DisableGC();
    stderr_capture cap;
    stderr_capture_begin(&cap);
    layer_gc_finish();
    for (int i = 0; i < (1 << 20) + (1 << 16); i++) {
        layer_object_freed(ids_next_object(16, 0));
    }
    stderr_capture_end(&cap);
    const char *line = strstr(cap.text, "GC disabled by the agent for ");
    ck_assert_msg(line != NULL, "nothing said of the frees held back");
    ck_assert_msg(strstr(line + 1, "GC disabled by the agent") == NULL, "said more than once: %s", cap.text);
    ck_assert_msg(strstr(line, "holds back 1048576 OBJECT_FREEs") != NULL, "%s", line);
    ck_assert_int_eq(nrec(), 0);
}
END_TEST

static int64_t gc_frees[3];
static void vm_collects(void) { collection(gc_frees, 3); }

START_TEST(test_run_gc_delivers_before_returning)
{
    enable_gc_events();
    go_live();
    for (int i = 0; i < 3; i++) {
        gc_frees[i] = ids_next_object(16, 0);
    }
    fake.on_force_gc = vm_collects;
    pi->RunGC();
    ck_assert_int_eq(fake.gc_calls, 1);
    assert_window(0, gc_frees, 3);
    ck_assert(pthread_equal(recs[0].thread, pthread_self()));
    ck_assert_ptr_eq(recs[0].env_id, ENV_MAIN);
    ck_assert_int_eq(gc_window_wait_ms(), -1); /* the delivery thread has nothing left */
}
END_TEST

/* A RunGC that starts while the delivery thread settles an earlier
 * collection's window: one window for both, on the caller, with every free,
 * as a JDK 5.0 agent saw one GC_START/GC_FINISH for RunGC. */
static pthread_mutex_t runner_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t runner_cond = PTHREAD_COND_INITIALIZER;
static bool runner_collected;
static pthread_t runner;

static void runner_collects(void)
{
    pthread_mutex_lock(&runner_lock);
    runner_collected = true;
    pthread_cond_broadcast(&runner_cond);
    pthread_mutex_unlock(&runner_lock);
}

static void *run_gc_on_runner(void *arg)
{
    fake_set_thread_env(ENV(1));
    pi->RunGC();
    return NULL;
}

static void run_gc_while_settling(void)
{
    gc_set_settle_observer(NULL);
    fake.on_force_gc = runner_collects;
    ck_assert_int_eq(pthread_create(&runner, NULL, run_gc_on_runner, NULL), 0);
    pthread_mutex_lock(&runner_lock);
    while (!runner_collected) {
        pthread_cond_wait(&runner_cond, &runner_lock);
    }
    pthread_mutex_unlock(&runner_lock);
}

START_TEST(test_run_gc_takes_the_window_being_settled)
{
    enable_gc_events();
    go_live();
    fake_thread(ENV(1), THREAD_ID(1), "runner");
    atomic_store(&n_recs, 0);
    runner_collected = false;
    int64_t t[2] = {ids_next_object(16, 0), ids_next_object(16, 0)};
    collection(t, 2);
    gc_set_settle_observer(run_gc_while_settling);
    gc_deliver_due(ENV_MAIN);
    pthread_join(runner, NULL);
    assert_window(0, t, 2);
    ck_assert(pthread_equal(recs[0].thread, runner));
    ck_assert_ptr_eq(recs[0].env_id, ENV(1));
    ck_assert_int_eq(gc_window_wait_ms(), -1);
}
END_TEST

START_TEST(test_run_gc_with_nothing_freed_still_brackets)
{
    enable_gc_events();
    go_live();
    pi->RunGC();
    ck_assert_int_eq(fake.gc_calls, 1);
    assert_window(0, NULL, 0);
}
END_TEST

/* HotSpot 5.0 ran the collection handlers on its VM thread and posted no
 * raw monitor contention for it: a GC_START handler that waits for the
 * agent's own lock, held by another thread, is told nothing of it.  The
 * other thread's exit is posted, and proves the handler was blocked. */
static JVMPI_RawMonitor held;
static atomic_bool holding;

static void *hold_a_while(void *arg)
{
    (void)arg;
    fake_set_thread_env(ENV(1));
    pi->RawMonitorEnter(held);
    atomic_store(&holding, true);
    struct timespec pause = {0, 200 * 1000000L};
    nanosleep(&pause, NULL); /* the GC_START handler blocks meanwhile */
    pi->RawMonitorExit(held);
    return NULL;
}

START_TEST(test_no_raw_monitor_contention_in_a_window)
{
    enable_gc_events();
    enable(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER);
    enable(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED);
    enable(JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT);
    go_live();
    fake_thread(ENV(1), THREAD_ID(1), "holder");
    atomic_store(&n_recs, 0);
    held = pi->RawMonitorCreate("agent lock");
    atomic_store(&holding, false);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, hold_a_while, NULL), 0);
    while (!atomic_load(&holding)) {
        sched_yield();
    }
    enter_in_gc_start = held;
    int64_t t = ids_next_object(16, 0);
    collection(&t, 1);
    gc_deliver_due(ENV_MAIN);
    pthread_join(th, NULL);
    int exits = 0;
    for (int i = 0; i < nrec(); i++) {
        ck_assert_msg(recs[i].type != JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER &&
                          recs[i].type != JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED,
                      "event %d: raw monitor contention posted for the thread delivering the window", i);
        exits += recs[i].type == JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT;
    }
    ck_assert_msg(exits == 1, "the holder's CONTENDED_EXIT came %d times: the handler was not blocked", exits);
    pi->RawMonitorDestroy(held);
}
END_TEST

/* An agent calling RunGC from its GC_START handler must not hang; the frees
 * of that collection come in the next window. */
START_TEST(test_run_gc_from_a_gc_handler)
{
    enable_gc_events();
    go_live();
    for (int i = 0; i < 3; i++) {
        gc_frees[i] = ids_next_object(16, 0);
    }
    run_gc_in_gc_start = true;
    fake.on_force_gc = vm_collects;
    layer_gc_finish();
    gc_deliver_due(ENV_MAIN);
    ck_assert_int_eq(fake.gc_calls, 1);
    assert_window(0, NULL, 0);
    gc_deliver_due(ENV_MAIN);
    assert_window(2, gc_frees, 3);
}
END_TEST

START_TEST(test_stray_frees_wait_a_while)
{
    enable_gc_events();
    go_live();
    layer_object_freed(ids_next_object(16, 0));
    long ms = gc_window_wait_ms();
    ck_assert_msg(ms > 0 && ms <= 500, "stray frees wait %ld ms", ms);
}
END_TEST

/* Frees queued when the VM dies still get their window, before
 * JVM_SHUT_DOWN: those objects were collected, and a JDK 5.0 agent heard of
 * them in the collection itself. */
START_TEST(test_last_window_at_vm_death)
{
    enable_gc_events();
    enable(JVMPI_EVENT_JVM_SHUT_DOWN);
    go_live();
    int64_t t[3] = {ids_next_object(16, 0), ids_next_object(16, 0), ids_next_object(16, 0)};
    layer_object_freed(t[0]); /* stray: its window would wait 500 ms */
    collection(&t[1], 1);
    layer_vm_death(ENV_MAIN);
    assert_window_at(0, t, 2);
    ck_assert_int_eq(recs[3].used_objects, 1);
    ck_assert_int_eq(recs[4].type, JVMPI_EVENT_JVM_SHUT_DOWN);
    ck_assert_int_eq(nrec(), 5);
}
END_TEST

/* ... and none when nothing is left, or while GC is disabled. */
START_TEST(test_no_last_window_without_frees)
{
    enable_gc_events();
    enable(JVMPI_EVENT_JVM_SHUT_DOWN);
    go_live();
    collection(NULL, 0);
    gc_deliver_due(ENV_MAIN);
    assert_window(0, NULL, 0);
    int64_t t = ids_next_object(16, 0);
    pi->DisableGC();
    collection(&t, 1);
    layer_vm_death(ENV_MAIN);
    ck_assert_int_eq(nrec(), 3);
    ck_assert_int_eq(recs[2].type, JVMPI_EVENT_JVM_SHUT_DOWN);
}
END_TEST

/* ---- OBJECT_ALLOC -------------------------------------------------------- */

#define CLASS_A seam_id_from_tag(ids_next_class(0))

START_TEST(test_alloc_event)
{
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    go_live();
    seam_object_info o = {seam_id_from_tag(ids_next_object(24, 0)), seam_id_from_tag(0x1000), JVMPI_NORMAL_OBJECT, 24};
    layer_object_alloc(ENV_MAIN, &o);
    ck_assert_int_eq(nrec(), 1);
    ck_assert_int_eq(recs[0].type, JVMPI_EVENT_OBJECT_ALLOC);
    ck_assert_int_eq(recs[0].arena, 1);
    ck_assert_ptr_eq(recs[0].id, o.id);
    ck_assert_ptr_eq(recs[0].class_id, o.class_id);
    ck_assert_int_eq(recs[0].size, 24);
    ck_assert_ptr_eq(recs[0].env_id, ENV_MAIN);
    pi->DisableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
    layer_object_alloc(ENV_MAIN, &o);
    ck_assert_int_eq(nrec(), 1);
}
END_TEST

/* CLASS_LOAD of the class an allocation names comes first, once. */
START_TEST(test_alloc_announces_its_class)
{
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    go_live();
    jobjectID cls = seam_id_from_tag(ids_next_class(0));
    layer_class_defined(fake_class(cls, "Marker", 0, 0, 0));
    enable(JVMPI_EVENT_CLASS_LOAD);
    atomic_store(&n_recs, 0);
    for (int i = 0; i < 3; i++) {
        seam_object_info o = {seam_id_from_tag(ids_next_object(16, 0)), cls, JVMPI_NORMAL_OBJECT, 16};
        layer_object_alloc(ENV_MAIN, &o);
    }
    ck_assert_int_eq(nrec(), 4);
    ck_assert_int_eq(recs[0].type, JVMPI_EVENT_CLASS_LOAD);
    ck_assert_ptr_eq(recs[0].id, cls);
    for (int i = 1; i < 4; i++) {
        ck_assert_int_eq(recs[i].type, JVMPI_EVENT_OBJECT_ALLOC);
    }
}
END_TEST

START_TEST(test_request_object_alloc)
{
    go_live();
    jobjectID obj = seam_id_from_tag(ids_next_object(48, 0));
    fake.objects[0] = (seam_object_info){obj, NULL, JVMPI_INT, 48};
    fake.object_count = 1;
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, obj), JVMPI_SUCCESS);
    ck_assert_int_eq(nrec(), 1);
    ck_assert_int_eq(recs[0].type, JVMPI_EVENT_OBJECT_ALLOC | JVMPI_REQUESTED_EVENT);
    ck_assert_ptr_eq(recs[0].id, obj);
    ck_assert_int_eq(recs[0].is_array, JVMPI_INT);
    ck_assert_int_eq(recs[0].size, 48);
    ck_assert(pthread_equal(recs[0].thread, pthread_self()));
    /* no such object, a class ID, NULL: refused, nothing sent */
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, seam_id_from_tag(ids_next_object(8, 0))), JVMPI_FAIL);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, CLASS_A), JVMPI_FAIL);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL), JVMPI_FAIL);
    ck_assert_int_eq(nrec(), 1);
}
END_TEST

/* An object freed by the VM is the agent's until its OBJECT_FREE: its
 * record (the class, for RequestEvent) goes with the window that delivers
 * the free, and a request after that fails at once, without the backend. */
START_TEST(test_freed_object_known_until_its_free_is_delivered)
{
    enable_gc_events();
    go_live();
    int64_t class_tag = ids_next_class(0);
    layer_class_defined(fake_class(seam_id_from_tag(class_tag), "Dies", 0, 0, 0));
    int64_t tag = ids_next_object(40, class_tag);
    jobjectID obj = seam_id_from_tag(tag);
    fake.object_count = 0;
    fake.object_info_calls = 0;
    collection(&tag, 1);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, obj), JVMPI_SUCCESS);
    ck_assert_int_eq(nrec(), 1);
    ck_assert_ptr_eq(recs[0].class_id, seam_id_from_tag(class_tag));
    ck_assert_int_eq(recs[0].size, 40);
    gc_deliver_due(ENV_MAIN);
    assert_window(1, &tag, 1);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, obj), JVMPI_FAIL);
    ck_assert_int_eq(fake.object_info_calls, 0);
    ck_assert_int_eq(nrec(), 4);
}
END_TEST

static jobjectID replay_class;
static void define_replay_class(JNIEnv *env) { layer_class_defined(fake_class(replay_class, "Old", 0, 0, 0)); }

/* HotSpot 5.0's start-up order (objects, classes, threads, init done), with
 * what each event names defined before it: the replaying thread first, the
 * objects' class with the first object. */
START_TEST(test_startup_replay_order)
{
    replay_class = seam_id_from_tag(ids_next_class(0));
    fake.on_define_loaded = define_replay_class;
    for (int i = 0; i < 3; i++) {
        fake.objects[i] = (seam_object_info){seam_id_from_tag(ids_next_object(16, 0)), replay_class, 0, 16};
    }
    fake.object_count = 3;
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    enable(JVMPI_EVENT_CLASS_LOAD);
    enable(JVMPI_EVENT_THREAD_START);
    enable(JVMPI_EVENT_JVM_INIT_DONE);
    fake_thread(ENV_MAIN, THREAD_ID(0), "main");
    layer_vm_init(ENV_MAIN);
    ck_assert_int_eq(fake.heap_objects_calls, 1);
    ck_assert_int_eq(nrec(), 6);
    ck_assert_int_eq(recs[0].type, JVMPI_EVENT_THREAD_START);
    ck_assert_int_eq(recs[1].type, JVMPI_EVENT_CLASS_LOAD);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(recs[2 + i].type, JVMPI_EVENT_OBJECT_ALLOC);
        ck_assert_ptr_eq(recs[2 + i].id, fake.objects[i].id);
    }
    ck_assert_int_eq(recs[5].type, JVMPI_EVENT_JVM_INIT_DONE);
}
END_TEST

START_TEST(test_no_replay_without_object_alloc)
{
    enable(JVMPI_EVENT_CLASS_LOAD);
    fake.object_count = 1;
    fake_thread(ENV_MAIN, THREAD_ID(0), "main");
    layer_vm_init(ENV_MAIN);
    ck_assert_int_eq(fake.heap_objects_calls, 0);
}
END_TEST

/* HotSpot 5.0 ran a full collection when the first of the heap events went
 * on (and the last off) and posted no GC_START/GC_FINISH for it.  The
 * backend collects when OBJECT_ALLOC's source goes on: that collection opens
 * no window.  What it freed is reported in the next real one, between its
 * GC_START and GC_FINISH, as an agent expects every OBJECT_FREE. */
START_TEST(test_no_window_for_switching_heap_events)
{
    enable_gc_events();
    go_live();
    int64_t t = ids_next_object(24, 0);
    fake.collect_on_alloc_switch = true;
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    ck_assert_int_eq(fake.source_on[SEAM_SRC_OBJECT_ALLOC], 1);
    ck_assert_int_eq(gc_window_wait_ms(), -1);
    ck_assert_int_eq(pi->DisableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL), JVMPI_SUCCESS);
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    layer_object_freed(t); /* posted by JVM TI after the hidden collection */
    long ms = gc_window_wait_ms();
    ck_assert_msg(ms > 500, "the hidden collection's frees would open a window of their own in %ld ms", ms);
    gc_deliver_due(ENV_MAIN);
    ck_assert_int_eq(nrec(), 0);
    collection(NULL, 0);
    ck_assert_int_eq(gc_window_wait_ms(), 0);
    gc_deliver_due(ENV_MAIN);
    assert_window(0, &t, 1);
}
END_TEST

/* ---- JNI references --------------------------------------------------------- */

START_TEST(test_jni_ref_events)
{
    enable(JVMPI_EVENT_JNI_GLOBALREF_ALLOC);
    enable(JVMPI_EVENT_JNI_GLOBALREF_FREE);
    enable(JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC);
    go_live();
    /* the fake backend's object IDs are the jobjects themselves */
    jobject obj = (jobject)(uintptr_t)0x5000, ref = (jobject)(uintptr_t)0x6000, weak = (jobject)(uintptr_t)0x7000;
    layer_jni_ref(ENV_MAIN, false, ref, obj);
    layer_jni_ref(ENV_MAIN, true, weak, obj);
    layer_jni_ref(ENV_MAIN, false, ref, NULL);
    layer_jni_ref(ENV_MAIN, true, weak, NULL); /* WEAK_FREE is off */
    ck_assert_int_eq(nrec(), 3);
    ck_assert_int_eq(recs[0].type, JVMPI_EVENT_JNI_GLOBALREF_ALLOC);
    ck_assert_ptr_eq(recs[0].id, (jobjectID)obj);
    ck_assert_ptr_eq(recs[0].ref, ref);
    ck_assert_int_eq(recs[1].type, JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC);
    ck_assert_ptr_eq(recs[1].ref, weak);
    ck_assert_int_eq(recs[2].type, JVMPI_EVENT_JNI_GLOBALREF_FREE);
    ck_assert_ptr_eq(recs[2].ref, ref);
    ck_assert_ptr_null(recs[2].id);
    ck_assert_int_eq(fake.source_on[SEAM_SRC_JNI_REFS], 1);
}
END_TEST

static Suite *gc_suite(void)
{
    Suite *s = suite_create("gc");
    TCase *tc = tcase_create("windows");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_window_after_collection);
    tcase_add_test(tc, test_late_frees_join_the_window);
    tcase_add_test(tc, test_window_waits_for_running_handlers);
    tcase_add_test(tc, test_deliveries_wait_for_the_window);
    tcase_add_test(tc, test_class_tags_are_not_objects);
    tcase_add_test(tc, test_free_off_still_counts);
    tcase_add_test(tc, test_disabled_gc_holds_windows_back);
    tcase_add_test(tc, test_long_disabled_gc_is_told_once);
    tcase_add_test(tc, test_run_gc_delivers_before_returning);
    tcase_add_test(tc, test_run_gc_with_nothing_freed_still_brackets);
    tcase_add_test(tc, test_run_gc_takes_the_window_being_settled);
    tcase_add_test(tc, test_run_gc_from_a_gc_handler);
    tcase_add_test(tc, test_no_raw_monitor_contention_in_a_window);
    tcase_add_test(tc, test_stray_frees_wait_a_while);
    tcase_add_test(tc, test_last_window_at_vm_death);
    tcase_add_test(tc, test_no_last_window_without_frees);
    tcase_add_test(tc, test_no_window_for_switching_heap_events);
    suite_add_tcase(s, tc);
    tc = tcase_create("objects");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_alloc_event);
    tcase_add_test(tc, test_alloc_announces_its_class);
    tcase_add_test(tc, test_request_object_alloc);
    tcase_add_test(tc, test_freed_object_known_until_its_free_is_delivered);
    tcase_add_test(tc, test_startup_replay_order);
    tcase_add_test(tc, test_no_replay_without_object_alloc);
    tcase_add_test(tc, test_jni_ref_events);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(gc_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
