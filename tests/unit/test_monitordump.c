/*
 * test_monitordump.c - RequestEvent(MONITOR_DUMP) (jvmpi/monitordump.c)
 * driven through the fake backend: the bytes of the dump buffer against the
 * record layout of the JVMPI specification's dump format, built here
 * independently, the traces and statuses, threads the agent does not know,
 * raw monitors, failures.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "events.h"
#include "fake_backend.h"
#include "interface.h"
#include "layer.h"
#include "rawmon.h"
#include "threads.h"

static char env_tokens[32];
#define ENV(i) ((JNIEnv *)(void *)&env_tokens[(i)])
#define THREAD_ID(i) seam_id_from_tag(0x200000 + (int64_t)(i) * 8)
#define OBJ_ID(i) seam_id_from_tag(0x300000 + (int64_t)(i) * 8)

static JVMPI_Interface *pi;

/* what the handler saw */
static int n_dumps;
static jint dump_type;
static JNIEnv *dump_env;
static unsigned char dump_bytes[4096];
static size_t dump_len;
static bool begin_null;
static jint n_traces;
static JVMPI_CallTrace traces[16];
static JVMPI_CallFrame frames[16][4];
static jint statuses[16];
static bool traces_null, status_null;
static char raw_name_seen[64];
/* THREAD_STARTs seen, and how many came before the first dump */
static int n_starts, starts_before_dump;
static JNIEnv *started[16];

static void record(JVMPI_Event *ev)
{
    if (ev->event_type == JVMPI_EVENT_THREAD_START) {
        ck_assert_int_lt(n_starts, 16);
        started[n_starts++] = ev->u.thread_start.thread_env_id;
        return;
    }
    if ((ev->event_type & ~JVMPI_REQUESTED_EVENT) != JVMPI_EVENT_MONITOR_DUMP) {
        return;
    }
    if (n_dumps == 0) {
        starts_before_dump = n_starts;
    }
    n_dumps++;
    dump_type = ev->event_type;
    dump_env = ev->env_id;
    begin_null = ev->u.monitor_dump.begin == NULL;
    dump_len = (size_t)(ev->u.monitor_dump.end - ev->u.monitor_dump.begin);
    ck_assert_uint_le(dump_len, sizeof dump_bytes);
    if (dump_len > 0) {
        memcpy(dump_bytes, ev->u.monitor_dump.begin, dump_len);
    }
    n_traces = ev->u.monitor_dump.num_traces;
    ck_assert_int_le(n_traces, 16);
    for (jint i = 0; i < n_traces; i++) {
        traces[i] = ev->u.monitor_dump.traces[i];
        ck_assert_int_le(traces[i].num_frames, 4);
        if (traces[i].num_frames > 0) {
            memcpy(frames[i], traces[i].frames, (size_t)traces[i].num_frames * sizeof(JVMPI_CallFrame));
        }
        statuses[i] = ev->u.monitor_dump.threads_status[i];
    }
    traces_null = ev->u.monitor_dump.traces == NULL;
    status_null = ev->u.monitor_dump.threads_status == NULL;
    /* The raw monitor's name must be readable during the event. */
    raw_name_seen[0] = 0;
    for (size_t off = 0; off < dump_len;) {
        unsigned kind = dump_bytes[off];
        if (kind != JVMPI_MONITOR_RAW) {
            break; /* Java records come first; the name check only needs the first raw one */
        }
        char *name;
        memcpy(&name, dump_bytes + off + 1, sizeof name);
        snprintf(raw_name_seen, sizeof raw_name_seen, "%s", name);
        break;
    }
}

/* ---- the expected bytes, built the way the dump format says ------------ */

typedef struct {
    unsigned char b[4096];
    size_t n;
} exp_buf;

static void e_u1(exp_buf *e, unsigned v) { e->b[e->n++] = (unsigned char)v; }
static void e_u4(exp_buf *e, uint32_t v)
{
    uint32_t be = htonl(v);
    memcpy(e->b + e->n, &be, 4);
    e->n += 4;
}
static void e_ptr(exp_buf *e, const void *p)
{
    memcpy(e->b + e->n, &p, sizeof p);
    e->n += sizeof p;
}

static void setup_with(const char *layer_options)
{
    if (layer_options != NULL) {
        setenv("JVMPI_LAYER_OPTIONS", layer_options, 1);
    } else {
        unsetenv("JVMPI_LAYER_OPTIONS");
    }
    layer_reset();
    fake_reset();
    ck_assert_int_eq(layer_onload(NULL, NULL), JNI_OK);
    pi = interface_table();
    pi->NotifyEvent = record;
    n_dumps = 0;
    n_starts = 0;
    starts_before_dump = 0;
    memset(dump_bytes, 0, sizeof dump_bytes);
    fake_set_thread_env(ENV(0));
    /* main last: fake_thread makes the calling thread the one registered */
    fake_thread(ENV(1), THREAD_ID(1), "blocked");
    fake_thread(ENV(2), THREAD_ID(2), "waiting");
    fake_thread(ENV(0), THREAD_ID(0), "main");
    layer_vm_init(ENV(0));
    ck_assert(layer_is_live());
}

/* HotSpot 5.0's dump: no traces. */
static void setup(void) { setup_with(NULL); }
/* The JVMPI specification's: a trace and a status per thread. */
static void setup_traces(void) { setup_with("monitordump=traces"); }

static void teardown(void) { layer_reset(); }

static JVMPI_CallFrame some_frames[3] = {{11, (jmethodID)0x11}, {-3, (jmethodID)0x22}, {33, (jmethodID)0x33}};

/* main owns OBJ 1 three times (the recursion HotSpot 5.0 did not write),
 * thread 1 blocked entering, thread 2 waiting; OBJ 2 unowned, with an
 * unknown thread among its enterers; OBJ 3 a Class object main owns. */
static jobjectID entering1[1], waiting1[1], entering2[2];
static seam_monitor_info known_mons[3];
static seam_monitor_thread known_ths[4];

static void known_situation(void)
{
    entering1[0] = THREAD_ID(1);
    waiting1[0] = THREAD_ID(2);
    entering2[0] = THREAD_ID(7); /* no such thread */
    entering2[1] = THREAD_ID(1);
    seam_monitor_info m[3] = {
        {OBJ_ID(1), THREAD_ID(0), 3, 1, entering1, 1, waiting1, false},
        {OBJ_ID(2), NULL, 0, 2, entering2, 0, NULL, false},
        {OBJ_ID(3), THREAD_ID(0), 1, 0, NULL, 0, NULL, true},
    };
    seam_monitor_thread t[4] = {
        {THREAD_ID(0), JVMPI_THREAD_RUNNABLE, 3, some_frames},
        {THREAD_ID(1), JVMPI_THREAD_MONITOR_WAIT, 1, some_frames + 1},
        {THREAD_ID(9), JVMPI_THREAD_RUNNABLE, 0, NULL}, /* unknown to the agent: left out */
        {THREAD_ID(2), JVMPI_THREAD_CONDVAR_WAIT | JVMPI_THREAD_INTERRUPTED, 0, NULL},
    };
    memcpy(known_mons, m, sizeof m);
    memcpy(known_ths, t, sizeof t);
    fake.monitor_snapshot = (seam_monitor_snapshot){3, known_mons, 4, known_ths, NULL};
}

/* As HotSpot 5.0 wrote them: entry count = threads entering + threads
 * waiting, owned or not; no record for the Class object's monitor. */
START_TEST(test_java_monitor_record)
{
    known_situation();
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(n_dumps, 1);
    ck_assert_int_eq(dump_type, JVMPI_EVENT_MONITOR_DUMP | JVMPI_REQUESTED_EVENT);
    ck_assert_ptr_eq(dump_env, ENV(0));
    ck_assert_int_eq(fake.monitor_snapshot_calls, 1);
    ck_assert_int_eq(fake.monitor_snapshot_frees, 1);

    exp_buf e = {.n = 0};
    e_u1(&e, JVMPI_MONITOR_JAVA);
    e_ptr(&e, OBJ_ID(1));
    e_ptr(&e, ENV(0));
    e_u4(&e, 2);
    e_u4(&e, 1);
    e_ptr(&e, ENV(1));
    e_u4(&e, 1);
    e_ptr(&e, ENV(2));
    e_u1(&e, JVMPI_MONITOR_JAVA);
    e_ptr(&e, OBJ_ID(2));
    e_ptr(&e, NULL);
    e_u4(&e, 1);
    e_u4(&e, 1);
    e_ptr(&e, ENV(1));
    e_u4(&e, 0);
    ck_assert_uint_eq(dump_len, e.n);
    ck_assert_int_eq(memcmp(dump_bytes, e.b, e.n), 0);
}
END_TEST

/* HotSpot 5.0: num_traces 0, threads_status NULL; no trace is taken. */
START_TEST(test_no_traces_by_default)
{
    known_situation();
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(n_dumps, 1);
    ck_assert_int_eq(n_traces, 0);
    ck_assert(traces_null);
    ck_assert(status_null);
    ck_assert_int_eq(fake.monitor_snapshot_max_frames, 0);
}
END_TEST

/* monitordump=traces: the records as by default, and a trace and a status
 * for every thread the agent knows. */
START_TEST(test_traces_when_asked)
{
    known_situation();
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(n_dumps, 1);
    ck_assert_int_ge(fake.monitor_snapshot_max_frames, 1);
    ck_assert_uint_eq(dump_len, 2 * (1 + 2 * sizeof(void *) + 12) + 3 * sizeof(void *));
    ck_assert_int_eq(n_traces, 3);
    ck_assert(!status_null);
    ck_assert_ptr_eq(traces[0].env_id, ENV(0));
    ck_assert_int_eq(traces[0].num_frames, 3);
    ck_assert_int_eq(frames[0][1].lineno, -3);
    ck_assert_ptr_eq(frames[0][2].method_id, (jmethodID)0x33);
    ck_assert_ptr_eq(traces[1].env_id, ENV(1));
    ck_assert_int_eq(traces[1].num_frames, 1);
    ck_assert_ptr_eq(traces[2].env_id, ENV(2));
    ck_assert_int_eq(traces[2].num_frames, 0);
    ck_assert_int_eq(statuses[0], JVMPI_THREAD_RUNNABLE);
    ck_assert_int_eq(statuses[1], JVMPI_THREAD_MONITOR_WAIT);
    ck_assert_int_eq(statuses[2], JVMPI_THREAD_CONDVAR_WAIT | JVMPI_THREAD_INTERRUPTED);
}
END_TEST

START_TEST(test_raw_monitor_record)
{
    /* No Java monitors; one raw monitor owned twice by the calling thread (its
 * recursion is its entry count), one owned by nobody. */
    fake.monitor_snapshot = (seam_monitor_snapshot){0, NULL, 0, NULL, NULL};
    JVMPI_RawMonitor idle = pi->RawMonitorCreate("idle lock"); /* never owned: HotSpot 5.0 left it out */
    JVMPI_RawMonitor m = pi->RawMonitorCreate("agent lock");
    ck_assert_ptr_nonnull(m);
    pi->RawMonitorEnter(m);
    pi->RawMonitorEnter(m);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(n_dumps, 1);
    ck_assert_str_eq(raw_name_seen, "agent lock");
    size_t ptr = sizeof(void *);
    ck_assert_uint_eq(dump_len, 1 + ptr * 3 + 4 * 3);
    ck_assert_uint_eq(dump_bytes[0], JVMPI_MONITOR_RAW);
    JVMPI_RawMonitor id;
    JNIEnv *owner;
    memcpy(&id, dump_bytes + 1 + ptr, ptr);
    memcpy(&owner, dump_bytes + 1 + 2 * ptr, ptr);
    ck_assert_ptr_eq(id, m);
    ck_assert_ptr_eq(owner, ENV(0));
    uint32_t v[3];
    memcpy(v, dump_bytes + 1 + 3 * ptr, 12);
    ck_assert_uint_eq(ntohl(v[0]), 2);
    ck_assert_uint_eq(ntohl(v[1]), 0);
    ck_assert_uint_eq(ntohl(v[2]), 0);
    pi->RawMonitorExit(m);
    pi->RawMonitorExit(m);
    pi->RawMonitorDestroy(m);
    pi->RawMonitorDestroy(idle);
}
END_TEST

START_TEST(test_empty_dump)
{
    fake.monitor_snapshot = (seam_monitor_snapshot){0, NULL, 0, NULL, NULL};
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(n_dumps, 1);
    ck_assert_uint_eq(dump_len, 0);
    ck_assert(!begin_null);
    ck_assert_int_eq(n_traces, 0);
}
END_TEST

START_TEST(test_snapshot_failure)
{
    fake.monitor_snapshot_fails = true;
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL), JVMPI_FAIL);
    ck_assert_int_eq(n_dumps, 0);
}
END_TEST

START_TEST(test_not_enableable)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_MONITOR_DUMP, NULL), JVMPI_NOT_AVAILABLE);
    ck_assert_int_eq(pi->DisableEvent(JVMPI_EVENT_MONITOR_DUMP, NULL), JVMPI_NOT_AVAILABLE);
}
END_TEST

/* As GetThreadStatus: the state at the agent's suspension, with the bit. */
START_TEST(test_suspended_by_agent_shows)
{
    seam_monitor_thread ths[1] = {{THREAD_ID(1), JVMPI_THREAD_RUNNABLE | JVMPI_THREAD_SUSPENDED, 0, NULL}};
    fake.monitor_snapshot = (seam_monitor_snapshot){0, NULL, 1, ths, NULL};
    fake.thread_status = JVMPI_THREAD_MONITOR_WAIT;
    pi->SuspendThread(ENV(1));
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(n_traces, 1);
    ck_assert_int_eq(statuses[0], JVMPI_THREAD_MONITOR_WAIT | JVMPI_THREAD_SUSPENDED);
    ck_assert_int_eq(statuses[0], pi->GetThreadStatus(ENV(1)));
}
END_TEST

static int times_started(JNIEnv *env, int among)
{
    int n = 0;
    for (int i = 0; i < among; i++) {
        n += started[i] == env;
    }
    return n;
}

/* A thread is recorded before it announces itself (a virtual thread on its
 * carrier, a platform thread in its ThreadStart callback); a dump taken by
 * another thread in between names it, as owner, waiter and by its trace:
 * its THREAD_START must come first (seen on JDK 25 with virtual threads). */
START_TEST(test_unannounced_thread_announced_first)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL), JVMPI_SUCCESS);
    thread_rec *t = fake_unannounced_thread(ENV(5), THREAD_ID(5), "just started"); /* recorded, not announced */
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(times_started(ENV(5), n_starts), 0);
    jobjectID owner5[] = {THREAD_ID(5)};
    seam_monitor_info mons[1] = {{OBJ_ID(1), THREAD_ID(5), 1, 0, NULL, 1, owner5, false}};
    seam_monitor_thread ths[1] = {{THREAD_ID(5), JVMPI_THREAD_RUNNABLE, 1, some_frames}};
    fake.monitor_snapshot = (seam_monitor_snapshot){1, mons, 1, ths, NULL};
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(n_dumps, 1);
    ck_assert_int_eq(n_traces, 1);
    ck_assert_ptr_eq(traces[0].env_id, ENV(5));
    ck_assert_msg(times_started(ENV(5), starts_before_dump) == 1, "the dump named a thread before its THREAD_START");
    /* told once: a second dump sends no second THREAD_START */
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(times_started(ENV(5), n_starts), 1);
    threads_release(t);
}
END_TEST

static Suite *monitordump_suite(void)
{
    Suite *s = suite_create("monitordump");
    TCase *tc = tcase_create("dump");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_java_monitor_record);
    tcase_add_test(tc, test_no_traces_by_default);
    tcase_add_test(tc, test_raw_monitor_record);
    tcase_add_test(tc, test_empty_dump);
    tcase_add_test(tc, test_snapshot_failure);
    tcase_add_test(tc, test_not_enableable);
    suite_add_tcase(s, tc);
    TCase *tr = tcase_create("traces");
    tcase_add_checked_fixture(tr, setup_traces, teardown);
    tcase_add_test(tr, test_traces_when_asked);
    tcase_add_test(tr, test_suspended_by_agent_shows);
    tcase_add_test(tr, test_unannounced_thread_announced_first);
    tcase_add_test(tr, test_java_monitor_record);
    suite_add_tcase(s, tr);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(monitordump_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
