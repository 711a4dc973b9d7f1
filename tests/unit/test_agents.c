/*
 * test_agents.c - several JVMPI agents in one VM (jvmpi/agents.h): each has
 * its own interface table, enabled events, requests, thread-local storage
 * word and definitions; CLASS_LOAD_HOOK chains in load order.
 *
 * Agent 0 and agent 1 record what they are sent, each in its own list.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "agents.h"
#include "dispatch.h"
#include "fake_backend.h"
#include "gc.h"
#include "interface.h"
#include "layer.h"
#include "stderr_capture.h"

static char env_tokens[2];
#define ENV_MAIN ((JNIEnv *)(void *)&env_tokens[0])

typedef struct {
    jint type;
    jobjectID id, class_id;
} rec;

#define MAX_RECS 64
typedef struct {
    rec r[MAX_RECS];
    atomic_int n;
} recs;

static recs seen[2];
static JVMPI_Interface *pi[2];

static void record(recs *to, JVMPI_Event *ev)
{
    int i = atomic_fetch_add(&to->n, 1);
    ck_assert_int_lt(i, MAX_RECS);
    rec *r = &to->r[i];
    memset(r, 0, sizeof *r);
    r->type = ev->event_type;
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        r->id = ev->u.obj_alloc.obj_id;
        r->class_id = ev->u.obj_alloc.class_id;
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        r->id = ev->u.obj_free.obj_id;
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        r->id = ev->u.class_load.class_id;
        break;
    case JVMPI_EVENT_THREAD_START:
        r->id = ev->u.thread_start.thread_id;
        break;
    default:
        break;
    }
}

/* The hooks: agent 0 turns byte 'a' into 'b', agent 1 'b' into 'c'. */
static void hook(JVMPI_Event *ev, unsigned char from, unsigned char to)
{
    unsigned char *out = ev->u.class_load_hook.malloc_f((unsigned)ev->u.class_load_hook.class_data_len);
    memcpy(out, ev->u.class_load_hook.class_data, (size_t)ev->u.class_load_hook.class_data_len);
    for (jint i = 0; i < ev->u.class_load_hook.class_data_len; i++) {
        if (out[i] == from) {
            out[i] = to;
        }
    }
    ev->u.class_load_hook.new_class_data = out;
}

static void notify0(JVMPI_Event *ev)
{
    record(&seen[0], ev);
    if (ev->event_type == JVMPI_EVENT_CLASS_LOAD_HOOK) {
        hook(ev, 'a', 'b');
    }
}

static void notify1(JVMPI_Event *ev)
{
    record(&seen[1], ev);
    if (ev->event_type == JVMPI_EVENT_CLASS_LOAD_HOOK) {
        hook(ev, 'b', 'c');
    }
}

static int count(int agent, jint type, jobjectID id)
{
    int n = 0;
    for (int i = 0; i < atomic_load(&seen[agent].n); i++) {
        n += seen[agent].r[i].type == type && (id == NULL || seen[agent].r[i].id == id);
    }
    return n;
}

static int index_of(int agent, jint type, jobjectID id)
{
    for (int i = 0; i < atomic_load(&seen[agent].n); i++) {
        if (seen[agent].r[i].type == type && seen[agent].r[i].id == id) {
            return i;
        }
    }
    return -1;
}

static jobjectID class_class, marker_class;

static void setup(void)
{
    unsetenv("JVMPI_LAYER_OPTIONS");
    layer_reset();
    fake_reset();
    ids_reset();
    ck_assert_int_eq(layer_onload(NULL, NULL), JNI_OK);
    agents_ensure(1);
    pi[0] = interface_for_agent(0);
    pi[1] = interface_for_agent(1);
    pi[0]->NotifyEvent = notify0;
    pi[1]->NotifyEvent = notify1;
    memset(seen, 0, sizeof seen);
    fake_set_thread_env(ENV_MAIN);
    class_class = seam_id_from_tag(ids_next_class(0));
    marker_class = seam_id_from_tag(ids_next_class(0));
    fake.class_class_id = class_class;
    fake.heap_capacity = 64L << 20;
}

static void teardown(void) { layer_reset(); }

static void enable(int agent, jint type) { ck_assert_int_eq(pi[agent]->EnableEvent(type, NULL), JVMPI_SUCCESS); }

static void go_live(void)
{
    fake_thread(ENV_MAIN, seam_id_from_tag(ids_next_object(96, 0)), "main");
    seam_class_info *c = fake_class(class_class, "java.lang.Class", 1, 0, 0);
    layer_class_defined(c);
    c = fake_class(marker_class, "Marker", 1, 0, 0);
    layer_class_defined(c);
    layer_vm_init(ENV_MAIN);
}

/* A new object of class Marker, as the backend reports an allocation. */
static int64_t allocate(void)
{
    int64_t tag = ids_next_object(16, seam_tag_from_id(marker_class));
    seam_object_info info = {.id = seam_id_from_tag(tag), .class_id = marker_class, .size = 16};
    ck_assert(layer_object_alloc(ENV_MAIN, &info));
    return tag;
}

/* ------------------------------------------------------------------------ */

START_TEST(test_tables_apart)
{
    ck_assert_ptr_ne(pi[0], pi[1]);
    ck_assert_ptr_ne(pi[0]->EnableEvent, pi[1]->EnableEvent);
    ck_assert_ptr_ne(pi[0]->RequestEvent, pi[1]->RequestEvent);
    ck_assert_ptr_ne(pi[0]->GetThreadLocalStorage, pi[1]->GetThreadLocalStorage);
    /* what is the VM's alone is shared */
    ck_assert_ptr_eq(pi[0]->RunGC, pi[1]->RunGC);
    ck_assert_ptr_ne(pi[0]->RawMonitorCreate, pi[1]->RawMonitorCreate); /* a monitor is its maker's */
    ck_assert_ptr_eq(pi[0]->RawMonitorEnter, pi[1]->RawMonitorEnter);
    ck_assert_int_eq(pi[1]->version, JVMPI_VERSION_1_2);
}
END_TEST

/* Each agent gets what it enabled and nothing else. */
START_TEST(test_events_to_whoever_enabled_them)
{
    enable(0, JVMPI_EVENT_CLASS_LOAD);
    enable(1, JVMPI_EVENT_THREAD_START);
    enable(1, JVMPI_EVENT_JVM_INIT_DONE);
    go_live();
    ck_assert_int_eq(count(0, JVMPI_EVENT_CLASS_LOAD, marker_class), 1);
    ck_assert_int_eq(count(0, JVMPI_EVENT_THREAD_START, NULL), 0);
    ck_assert_int_eq(count(0, JVMPI_EVENT_JVM_INIT_DONE, NULL), 0);
    ck_assert_int_eq(count(1, JVMPI_EVENT_CLASS_LOAD, NULL), 0);
    ck_assert_int_eq(count(1, JVMPI_EVENT_THREAD_START, NULL), 1);
    ck_assert_int_eq(count(1, JVMPI_EVENT_JVM_INIT_DONE, NULL), 1);
    /* one agent turning an event off leaves the other's on */
    enable(1, JVMPI_EVENT_CLASS_LOAD);
    ck_assert_int_eq(pi[0]->DisableEvent(JVMPI_EVENT_CLASS_LOAD, NULL), JVMPI_SUCCESS);
    ck_assert(fake.source_on[SEAM_SRC_CLASS_PREPARE]);
    ck_assert_int_eq(pi[1]->DisableEvent(JVMPI_EVENT_CLASS_LOAD, NULL), JVMPI_SUCCESS);
    ck_assert(!fake.source_on[SEAM_SRC_CLASS_PREPARE]);
}
END_TEST

/* A request's answer goes to the asking agent alone, even for an event
 * the other one enabled. */
START_TEST(test_request_answers_the_asker)
{
    enable(0, JVMPI_EVENT_CLASS_LOAD);
    go_live();
    int before0 = count(0, JVMPI_EVENT_CLASS_LOAD | JVMPI_REQUESTED_EVENT, NULL);
    ck_assert_int_eq(pi[1]->RequestEvent(JVMPI_EVENT_CLASS_LOAD, marker_class), JVMPI_SUCCESS);
    ck_assert_int_eq(count(1, JVMPI_EVENT_CLASS_LOAD | JVMPI_REQUESTED_EVENT, marker_class), 1);
    ck_assert_int_eq(count(0, JVMPI_EVENT_CLASS_LOAD | JVMPI_REQUESTED_EVENT, NULL), before0);
    ck_assert_int_eq(pi[1]->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, marker_class), JVMPI_SUCCESS);
    ck_assert_int_eq(count(1, JVMPI_EVENT_OBJECT_ALLOC | JVMPI_REQUESTED_EVENT, marker_class), 1);
    ck_assert_int_eq(count(0, JVMPI_EVENT_OBJECT_ALLOC | JVMPI_REQUESTED_EVENT, NULL), 0);
}
END_TEST

START_TEST(test_thread_local_storage_apart)
{
    go_live();
    static int word0, word1;
    pi[0]->SetThreadLocalStorage(ENV_MAIN, &word0);
    ck_assert_ptr_eq(pi[0]->GetThreadLocalStorage(ENV_MAIN), &word0);
    ck_assert_ptr_null(pi[1]->GetThreadLocalStorage(ENV_MAIN));
    pi[1]->SetThreadLocalStorage(ENV_MAIN, &word1);
    ck_assert_ptr_eq(pi[0]->GetThreadLocalStorage(ENV_MAIN), &word0);
    ck_assert_ptr_eq(pi[1]->GetThreadLocalStorage(ENV_MAIN), &word1);
}
END_TEST

/* An agent that enables CLASS_LOAD after another was told of a class still
 * gets its CLASS_LOAD before an event names it, and the first agent no
 * second one. */
START_TEST(test_late_agent_gets_its_definitions)
{
    enable(0, JVMPI_EVENT_CLASS_LOAD);
    enable(0, JVMPI_EVENT_OBJECT_ALLOC);
    go_live();
    ck_assert_int_eq(count(0, JVMPI_EVENT_CLASS_LOAD, marker_class), 1);
    enable(1, JVMPI_EVENT_CLASS_LOAD);
    enable(1, JVMPI_EVENT_OBJECT_ALLOC);
    int64_t tag = allocate();
    jobjectID id = seam_id_from_tag(tag);
    ck_assert_int_eq(count(0, JVMPI_EVENT_CLASS_LOAD, marker_class), 1);
    ck_assert_int_eq(count(1, JVMPI_EVENT_CLASS_LOAD, marker_class), 1);
    int load = index_of(1, JVMPI_EVENT_CLASS_LOAD, marker_class);
    int alloc = index_of(1, JVMPI_EVENT_OBJECT_ALLOC, id);
    ck_assert_int_ge(load, 0);
    ck_assert_int_gt(alloc, load);
    ck_assert_int_eq(count(0, JVMPI_EVENT_OBJECT_ALLOC, id), 1);
}
END_TEST

/* An object allocated while only agent 0 had OBJECT_ALLOC on was never
 * told to agent 1: its OBJECT_FREE goes to agent 0 alone. */
START_TEST(test_free_only_to_agents_told)
{
    enable(0, JVMPI_EVENT_OBJECT_ALLOC);
    enable(0, JVMPI_EVENT_OBJECT_FREE);
    enable(1, JVMPI_EVENT_OBJECT_FREE);
    go_live();
    int64_t before = allocate();
    enable(1, JVMPI_EVENT_OBJECT_ALLOC);
    int64_t after = allocate();
    ck_assert_int_eq(count(1, JVMPI_EVENT_OBJECT_ALLOC, seam_id_from_tag(before)), 0);
    ck_assert_int_eq(count(1, JVMPI_EVENT_OBJECT_ALLOC, seam_id_from_tag(after)), 1);
    layer_gc_finish();
    layer_object_freed(before);
    layer_object_freed(after);
    gc_deliver_due(ENV_MAIN);
    ck_assert_int_eq(count(0, JVMPI_EVENT_OBJECT_FREE, seam_id_from_tag(before)), 1);
    ck_assert_int_eq(count(0, JVMPI_EVENT_OBJECT_FREE, seam_id_from_tag(after)), 1);
    ck_assert_int_eq(count(1, JVMPI_EVENT_OBJECT_FREE, seam_id_from_tag(before)), 0);
    ck_assert_int_eq(count(1, JVMPI_EVENT_OBJECT_FREE, seam_id_from_tag(after)), 1);
}
END_TEST

/* ... and an event naming it tells agent 1 of it first. */
START_TEST(test_untold_object_announced_when_named)
{
    enable(0, JVMPI_EVENT_OBJECT_ALLOC);
    go_live();
    int64_t tag = allocate();
    jobjectID id = seam_id_from_tag(tag);
    enable(1, JVMPI_EVENT_OBJECT_ALLOC);
    enable(1, JVMPI_EVENT_MONITOR_WAIT);
    layer_monitor_wait(ENV_MAIN, id, 10);
    ck_assert_int_eq(count(1, JVMPI_EVENT_OBJECT_ALLOC, id), 1);
    ck_assert_int_eq(count(0, JVMPI_EVENT_OBJECT_ALLOC, id), 1);
    ck_assert_int_lt(index_of(1, JVMPI_EVENT_OBJECT_ALLOC, id), index_of(1, JVMPI_EVENT_MONITOR_WAIT, NULL));
}
END_TEST

/* CLASS_LOAD_HOOK: agents in load order, each given what the one before made. */
START_TEST(test_hooks_chain)
{
    enable(0, JVMPI_EVENT_CLASS_LOAD_HOOK);
    enable(1, JVMPI_EVENT_CLASS_LOAD_HOOK);
    const unsigned char data[] = "aaxa";
    unsigned char *out = NULL;
    jint out_len = 0;
    layer_class_file_hook(ENV_MAIN, data, 4, &out, &out_len);
    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(out_len, 4);
    ck_assert_mem_eq(out, "ccxc", 4);
    ck_assert_int_eq(count(0, JVMPI_EVENT_CLASS_LOAD_HOOK, NULL), 1);
    ck_assert_int_eq(count(1, JVMPI_EVENT_CLASS_LOAD_HOOK, NULL), 1);
    seam_vm_free(out);
}
END_TEST

static int raw_events(int agent)
{
    return count(agent, JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, NULL) +
           count(agent, JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, NULL);
}

/* A raw monitor's events go to the agent that made it, as each agent alone
 * saw only its own monitors. */
START_TEST(test_raw_monitor_events_to_their_maker)
{
    enable(0, JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER);
    enable(1, JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER);
    enable(0, JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT);
    enable(1, JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT);
    go_live();
    JVMPI_RawMonitor m0 = pi[0]->RawMonitorCreate("lock of 0");
    JVMPI_RawMonitor m1 = pi[1]->RawMonitorCreate("lock of 1");
    dispatch_raw_monitor(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, "lock of 0", m0);
    ck_assert_int_eq(raw_events(0), 1);
    ck_assert_int_eq(raw_events(1), 0);
    dispatch_raw_monitor(JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, "lock of 1", m1);
    ck_assert_int_eq(raw_events(0), 1);
    ck_assert_int_eq(raw_events(1), 1);
    pi[0]->RawMonitorDestroy(m0);
    pi[1]->RawMonitorDestroy(m1);
}
END_TEST

/* DisableGC and EnableGC nest across agents: GC comes back with the last
 * EnableGC, whoever calls it. */
START_TEST(test_gc_control_nests_across_agents)
{
    go_live();
    pi[0]->DisableGC();
    pi[1]->DisableGC();
    ck_assert(gc_is_disabled());
    pi[0]->EnableGC();
    ck_assert(gc_is_disabled());
    pi[1]->EnableGC();
    ck_assert(!gc_is_disabled());
}
END_TEST

/* A function of a system library, for an address that lies in it (not in
 * a sanitizer's runtime, which stands in for libc's common functions). */
static const void *symbol_in(const char *lib, const char *sym)
{
    void *h = dlopen(lib, RTLD_NOW);
    ck_assert_msg(h != NULL, "dlopen(%s): %s", lib, dlerror());
    void *p = dlsym(h, sym);
    ck_assert_msg(p != NULL, "%s has no %s", lib, sym);
    return p;
}

/* One library is one agent; past AGENTS_MAX, one line and no table. */
START_TEST(test_agents_by_library)
{
    agents_reset();
    int a = agents_for_caller((const void *)&setup); /* this program's code */
    int b = agents_for_caller(symbol_in("libm.so.6", "cos"));
    ck_assert_int_eq(a, 0);
    ck_assert_int_eq(b, 1);
    ck_assert_int_eq(agents_for_caller(symbol_in("libm.so.6", "sin")), 1);
    ck_assert_int_eq(agents_count(), 2);
    agents_ensure(AGENTS_MAX - 1);
    const void *ninth = symbol_in("libz.so.1", "zlibVersion");
    stderr_capture cap;
    stderr_capture_begin(&cap);
    int none = agents_for_caller(ninth);
    stderr_capture_end(&cap);
    ck_assert_int_eq(none, -1);
    ck_assert_msg(strstr(cap.text, "at most 8 JVMPI agents") != NULL, "said: %s", cap.text);
    ck_assert_ptr_null(layer_interface_for(JVMPI_VERSION_1, ninth));
}
END_TEST

static Suite *agents_suite(void)
{
    Suite *s = suite_create("agents");
    TCase *tc = tcase_create("agents");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_tables_apart);
    tcase_add_test(tc, test_events_to_whoever_enabled_them);
    tcase_add_test(tc, test_request_answers_the_asker);
    tcase_add_test(tc, test_thread_local_storage_apart);
    tcase_add_test(tc, test_late_agent_gets_its_definitions);
    tcase_add_test(tc, test_free_only_to_agents_told);
    tcase_add_test(tc, test_untold_object_announced_when_named);
    tcase_add_test(tc, test_hooks_chain);
    tcase_add_test(tc, test_agents_by_library);
    tcase_add_test(tc, test_gc_control_nests_across_agents);
    tcase_add_test(tc, test_raw_monitor_events_to_their_maker);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(agents_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
