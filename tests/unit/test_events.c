/*
 * test_events.c - EnableEvent / DisableEvent bookkeeping and delivery
 * (jvmpi/events.c), with the fake backend standing in for the JVM TI
 * event sources.
 *
 * The expected answer for every event number is typed in below from the
 * JVMPI specification and Sun's jvmpi.h of JDK 5.0 rather than taken from
 * events.c, so a wrong row in the layer's table shows here.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "deliver_fixture.h"
#include "events.h"
#include "fake_backend.h"
#include "layer.h"
#include "log.h"
#include "stderr_capture.h"
#include "threads.h"

static void setup(void)
{
    layer_reset();
    fake_reset();
}

/* ------------------------------------------------------------------------ */
/* the expected answers                                                      */
/* ------------------------------------------------------------------------ */

typedef enum { X_UNUSED, X_DUMP, X_CARRIED, X_NEVER_SENT, X_NOT_YET } expect_kind;

static expect_kind expected_kind(jint n)
{
    switch (n) {
    case 33: case 34: /* THREAD_START / END */
    case 35:          /* CLASS_LOAD_HOOK */
    case 42: case 43: /* CLASS_LOAD / UNLOAD */
    case 44:          /* DATA_DUMP_REQUEST */
    case 46: case 47: /* JVM_INIT_DONE / SHUT_DOWN */
    case 51: case 52: case 53: /* RAW_MONITOR_CONTENDED_* */
    case 4: case 5:   /* OBJECT_ALLOC / FREE */
    case 38: case 39: case 40: case 41: /* JNI_(WEAK_)GLOBALREF_ALLOC / FREE */
    case 60: case 61: /* GC_START / FINISH */
    case 54: case 55: case 56: /* MONITOR_CONTENDED_ENTER / ENTERED / EXIT */
    case 57: case 58: /* MONITOR_WAIT / WAITED */
    case 1: case 2: case 3: /* METHOD_ENTRY, METHOD_ENTRY2, METHOD_EXIT */
    case 7: case 8:   /* COMPILED_METHOD_LOAD / UNLOAD */
    case 9:           /* INSTRUCTION_START */
    case 45:          /* DATA_RESET_REQUEST: the layer's own trigger */
        return X_CARRIED;
    case 6:           /* OBJECT_MOVE: IDs never move */
    case 48: case 49: /* ARENA_NEW / DELETE: HotSpot never sent them */
        return X_NEVER_SENT;
    case 37: case 50: case 59: /* HEAP_DUMP, OBJECT_DUMP, MONITOR_DUMP */
        return X_DUMP;
    default:
        break;
    }
    if (n <= 0 || (n >= 10 && n <= 32) || n == 36 || n > 61) {
        return X_UNUSED;
    }
    return X_NOT_YET;
}

static jint expected_rc(jint n)
{
    expect_kind k = expected_kind(n);
    return k == X_CARRIED || k == X_NEVER_SENT ? JVMPI_SUCCESS : JVMPI_NOT_AVAILABLE;
}

/* Which fake JVM TI sources an enabled event must have switched on. */
static void expected_sources(jint n, int on[SEAM_SRC_COUNT])
{
    memset(on, 0, sizeof(int) * SEAM_SRC_COUNT);
    switch (n) {
    case JVMPI_EVENT_CLASS_LOAD:
        on[SEAM_SRC_CLASS_PREPARE] = 1;
        break;
    case JVMPI_EVENT_CLASS_UNLOAD:
        on[SEAM_SRC_CLASS_PREPARE] = 1;
        on[SEAM_SRC_CLASS_FREE] = 1;
        break;
    case JVMPI_EVENT_CLASS_LOAD_HOOK:
        on[SEAM_SRC_CLASS_FILE_HOOK] = 1;
        break;
    case JVMPI_EVENT_DATA_DUMP_REQUEST:
        on[SEAM_SRC_DATA_DUMP] = 1;
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        on[SEAM_SRC_OBJECT_ALLOC] = 1;
        break;
    case JVMPI_EVENT_OBJECT_FREE:
    case JVMPI_EVENT_GC_START:
    case JVMPI_EVENT_GC_FINISH:
        on[SEAM_SRC_GC] = 1;
        break;
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_GLOBALREF_FREE:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE:
        on[SEAM_SRC_JNI_REFS] = 1;
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
        on[SEAM_SRC_MONITOR_CONTENDED] = 1;
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
        /* emulated from the enters; waits release without an exit */
        on[SEAM_SRC_MONITOR_CONTENDED] = 1;
        on[SEAM_SRC_MONITOR_WAIT] = 1;
        break;
    case JVMPI_EVENT_MONITOR_WAIT:
    case JVMPI_EVENT_MONITOR_WAITED:
        on[SEAM_SRC_MONITOR_WAIT] = 1;
        break;
    case JVMPI_EVENT_METHOD_ENTRY:
        on[SEAM_SRC_METHOD_ENTRY] = 1;
        break;
    case JVMPI_EVENT_METHOD_ENTRY2:
        on[SEAM_SRC_METHOD_ENTRY] = 1;
        on[SEAM_SRC_METHOD_RECEIVER] = 1;
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        on[SEAM_SRC_METHOD_EXIT] = 1;
        break;
    case JVMPI_EVENT_COMPILED_METHOD_LOAD:
        on[SEAM_SRC_COMPILED_LOAD] = 1;
        break;
    case JVMPI_EVENT_COMPILED_METHOD_UNLOAD:
        on[SEAM_SRC_COMPILED_UNLOAD] = 1;
        break;
    case JVMPI_EVENT_INSTRUCTION_START:
        on[SEAM_SRC_SINGLE_STEP] = 1;
        break;
    case JVMPI_EVENT_DATA_RESET_REQUEST:
        on[SEAM_SRC_DATA_RESET] = 1;
        break;
    default:
        break;
    }
    /* Events of a thread need to know which virtual thread a carrier runs. */
    switch (n) {
    case JVMPI_EVENT_THREAD_START:
    case JVMPI_EVENT_THREAD_END:
    case JVMPI_EVENT_OBJECT_ALLOC:
    case JVMPI_EVENT_METHOD_ENTRY:
    case JVMPI_EVENT_METHOD_ENTRY2:
    case JVMPI_EVENT_METHOD_EXIT:
    case JVMPI_EVENT_INSTRUCTION_START:
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_GLOBALREF_FREE:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
    case JVMPI_EVENT_MONITOR_WAIT:
    case JVMPI_EVENT_MONITOR_WAITED:
        on[SEAM_SRC_VTHREADS] = 1;
        break;
    default:
        break;
    }
}

static void assert_sources(const char *when, jint n, const int want[SEAM_SRC_COUNT])
{
    for (int s = 0; s < SEAM_SRC_COUNT; s++) {
        ck_assert_msg(!!fake.source_on[s] == !!want[s], "event %d, %s: source %d is %s, expected %s", (int)n, when,
                      s, fake.source_on[s] ? "on" : "off", want[s] ? "on" : "off");
    }
}

static const int all_off[SEAM_SRC_COUNT];

/* ------------------------------------------------------------------------ */
/* every number from -5 to 70                                                */
/* ------------------------------------------------------------------------ */

START_TEST(test_enable_disable_every_number)
{
    jint n = (jint)_i;
    jint want = expected_rc(n);
    int src[SEAM_SRC_COUNT];
    expected_sources(n, src);

    jint rc = events_enable(0, n);
    ck_assert_msg(rc == want, "events_enable(%d) = %d, expected %d", (int)n, (int)rc, (int)want);
    ck_assert_msg(events_enabled(n) == (want == JVMPI_SUCCESS), "events_enabled(%d) after enable is %d", (int)n,
                  events_enabled(n));
    assert_sources("after enable", n, want == JVMPI_SUCCESS ? src : all_off);

    /* twice: same answer, nothing switched again */
    int switches = fake.source_switches;
    rc = events_enable(0, n);
    ck_assert_msg(rc == want, "second events_enable(%d) = %d", (int)n, (int)rc);
    ck_assert_int_eq(fake.source_switches, switches);

    rc = events_disable(0, n);
    ck_assert_msg(rc == want, "events_disable(%d) = %d, expected %d", (int)n, (int)rc, (int)want);
    ck_assert_msg(!events_enabled(n), "events_enabled(%d) after disable", (int)n);
    assert_sources("after disable", n, all_off);

    /* disabling what is off is fine and switches nothing */
    switches = fake.source_switches;
    rc = events_disable(0, n);
    ck_assert_msg(rc == want, "second events_disable(%d) = %d", (int)n, (int)rc);
    ck_assert_int_eq(fake.source_switches, switches);

    /* the REQUESTED bit never makes a number valid */
    ck_assert_int_eq(events_enable(0, n | JVMPI_REQUESTED_EVENT), JVMPI_NOT_AVAILABLE);
    ck_assert(!events_enabled(n | JVMPI_REQUESTED_EVENT));
}
END_TEST

/* What healthy agents do prints nothing at the default log level: HPROF
 * disables every number from 1 to 61 at exit, agents probe numbers other
 * VMs used, and disabling a dump or an event never enabled changes
 * nothing.  The answers stay what they were. */
START_TEST(test_quiet_enable_disable)
{
    log_set_level(LOG_LEVEL_WARN);
    stderr_capture c;
    int wrong = 0;
    stderr_capture_begin(&c);
    for (jint n = -1; n <= JVMPI_MAX_EVENT_TYPE_VAL + 2; n++) {
        wrong += events_disable(0, n) != expected_rc(n);
    }
    wrong += events_enable(0, 20) != JVMPI_NOT_AVAILABLE;
    wrong += events_enable(0, JVMPI_MAX_EVENT_TYPE_VAL + 1) != JVMPI_NOT_AVAILABLE;
    wrong += events_enable(0, JVMPI_EVENT_HEAP_DUMP) != JVMPI_NOT_AVAILABLE;
    wrong += events_enable(0, JVMPI_EVENT_GC_START) != JVMPI_SUCCESS;
    wrong += events_disable(0, JVMPI_EVENT_GC_START) != JVMPI_SUCCESS;
    stderr_capture_end(&c);
    ck_assert_int_eq(wrong, 0);
    ck_assert_int_eq(stderr_capture_loud(&c), 0);

    /* asked for: an enable that cannot be met says so, a disable still not */
    log_set_level(LOG_LEVEL_INFO);
    stderr_capture_begin(&c);
    events_enable(0, 20);
    events_disable(0, 20);
    events_disable(0, JVMPI_EVENT_OBJECT_DUMP);
    stderr_capture_end(&c);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: info: EnableEvent: 20 is not a JVMPI event type"), 1);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: "), 1);
}
END_TEST

START_TEST(test_kind_table)
{
    for (jint n = -5; n <= 70; n++) {
        events_kind k = events_kind_of(n);
        events_kind want;
        switch (expected_kind(n)) {
        case X_UNUSED: want = EVENTS_UNUSED; break;
        case X_DUMP: want = EVENTS_REQUEST_ONLY; break;
        case X_CARRIED: want = EVENTS_CARRIED; break;
        case X_NEVER_SENT: want = EVENTS_NEVER_SENT; break;
        default: want = EVENTS_NOT_YET; break;
        }
        ck_assert_msg(k == want, "events_kind_of(%d) = %d, expected %d", (int)n, (int)k, (int)want);
    }
}
END_TEST

START_TEST(test_names)
{
    ck_assert_str_eq(events_name(JVMPI_EVENT_CLASS_LOAD), "CLASS_LOAD");
    ck_assert_str_eq(events_name(JVMPI_EVENT_CLASS_LOAD | JVMPI_REQUESTED_EVENT), "CLASS_LOAD");
    ck_assert_str_eq(events_name(JVMPI_EVENT_METHOD_ENTRY), "METHOD_ENTRY");
    ck_assert_str_eq(events_name(JVMPI_EVENT_GC_FINISH), "GC_FINISH");
    ck_assert_str_eq(events_name(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED), "RAW_MONITOR_CONTENDED_ENTERED");
    for (jint n = -5; n <= 70; n++) {
        const char *name = events_name(n);
        ck_assert_ptr_nonnull(name);
        if (expected_kind(n) == X_UNUSED) {
            ck_assert_str_eq(name, "(no such event)");
        }
    }
    ck_assert(!events_enabled(0));
    ck_assert(!events_enabled(-1));
    ck_assert(!events_enabled(62));
    ck_assert(!events_enabled(100000));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* shared sources                                                            */
/* ------------------------------------------------------------------------ */

START_TEST(test_shared_source_refcount)
{
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_SUCCESS);
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_UNLOAD), JVMPI_SUCCESS);
    ck_assert(fake.source_on[SEAM_SRC_CLASS_PREPARE]);
    ck_assert(fake.source_on[SEAM_SRC_CLASS_FREE]);

    /* CLASS_UNLOAD still needs ClassPrepare */
    ck_assert_int_eq(events_disable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_SUCCESS);
    ck_assert(!events_enabled(JVMPI_EVENT_CLASS_LOAD));
    ck_assert(fake.source_on[SEAM_SRC_CLASS_PREPARE]);
    ck_assert(fake.source_on[SEAM_SRC_CLASS_FREE]);

    ck_assert_int_eq(events_disable(0, JVMPI_EVENT_CLASS_UNLOAD), JVMPI_SUCCESS);
    ck_assert(!fake.source_on[SEAM_SRC_CLASS_PREPARE]);
    ck_assert(!fake.source_on[SEAM_SRC_CLASS_FREE]);

    /* the other order */
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_UNLOAD), JVMPI_SUCCESS);
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_SUCCESS);
    ck_assert_int_eq(events_disable(0, JVMPI_EVENT_CLASS_UNLOAD), JVMPI_SUCCESS);
    ck_assert(fake.source_on[SEAM_SRC_CLASS_PREPARE]);
    ck_assert(!fake.source_on[SEAM_SRC_CLASS_FREE]);
    ck_assert_int_eq(events_disable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_SUCCESS);
    ck_assert(!fake.source_on[SEAM_SRC_CLASS_PREPARE]);
}
END_TEST

START_TEST(test_enable_twice_counts_once)
{
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_SUCCESS);
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_SUCCESS);
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_SUCCESS);
    ck_assert_int_eq(fake.source_switches, 1);
    /* one disable undoes any number of enables */
    ck_assert_int_eq(events_disable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_SUCCESS);
    ck_assert(!events_enabled(JVMPI_EVENT_CLASS_LOAD));
    ck_assert(!fake.source_on[SEAM_SRC_CLASS_PREPARE]);
    ck_assert_int_eq(fake.source_switches, 2);

    /* and with a shared source: UNLOAD twice, LOAD once, then each disabled once */
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_UNLOAD), JVMPI_SUCCESS);
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_UNLOAD), JVMPI_SUCCESS);
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_SUCCESS);
    ck_assert_int_eq(events_disable(0, JVMPI_EVENT_CLASS_UNLOAD), JVMPI_SUCCESS);
    ck_assert_int_eq(events_disable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_SUCCESS);
    ck_assert(!fake.source_on[SEAM_SRC_CLASS_PREPARE]);
    ck_assert(!fake.source_on[SEAM_SRC_CLASS_FREE]);
}
END_TEST

START_TEST(test_refused_source)
{
    fake.refuse_sources = true;
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_FAIL);
    ck_assert(!events_enabled(JVMPI_EVENT_CLASS_LOAD));
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_UNLOAD), JVMPI_FAIL);
    ck_assert(!events_enabled(JVMPI_EVENT_CLASS_UNLOAD));
    assert_sources("refused", JVMPI_EVENT_CLASS_UNLOAD, all_off);
    /* events without a source do not care */
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_JVM_INIT_DONE), JVMPI_SUCCESS);

    /* once the VM agrees, the first enable switches the source on: nothing
     * was left counted by the refused attempts */
    fake.refuse_sources = false;
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_SUCCESS);
    ck_assert(fake.source_on[SEAM_SRC_CLASS_PREPARE]);
    ck_assert_int_eq(events_disable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_SUCCESS);
    ck_assert(!fake.source_on[SEAM_SRC_CLASS_PREPARE]);
}
END_TEST

/* CLASS_UNLOAD needs two sources; when the second is refused the first is
 * switched back off (or left as other events need it). */
START_TEST(test_refused_second_source_rolls_back)
{
    fake.refuse_source[SEAM_SRC_CLASS_FREE] = true;
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_UNLOAD), JVMPI_FAIL);
    ck_assert(!events_enabled(JVMPI_EVENT_CLASS_UNLOAD));
    ck_assert(!fake.source_on[SEAM_SRC_CLASS_PREPARE]);
    ck_assert(!fake.source_on[SEAM_SRC_CLASS_FREE]);

    /* with CLASS_LOAD holding ClassPrepare, a refused UNLOAD leaves it on... */
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_SUCCESS);
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_UNLOAD), JVMPI_FAIL);
    ck_assert(fake.source_on[SEAM_SRC_CLASS_PREPARE]);
    ck_assert(events_enabled(JVMPI_EVENT_CLASS_LOAD));
    /* ...and counted once: disabling CLASS_LOAD switches it off */
    ck_assert_int_eq(events_disable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_SUCCESS);
    ck_assert(!fake.source_on[SEAM_SRC_CLASS_PREPARE]);

    fake.refuse_source[SEAM_SRC_CLASS_FREE] = false;
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_UNLOAD), JVMPI_SUCCESS);
    ck_assert(fake.source_on[SEAM_SRC_CLASS_PREPARE]);
    ck_assert(fake.source_on[SEAM_SRC_CLASS_FREE]);
    ck_assert_int_eq(events_disable(0, JVMPI_EVENT_CLASS_UNLOAD), JVMPI_SUCCESS);
    assert_sources("after all", JVMPI_EVENT_CLASS_UNLOAD, all_off);
}
END_TEST

/* A refused switch-off keeps the event on: what the agent sees matches
 * what the VM does. */
START_TEST(test_refused_disable)
{
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_DATA_DUMP_REQUEST), JVMPI_SUCCESS);
    fake.refuse_sources = true;
    ck_assert_int_eq(events_disable(0, JVMPI_EVENT_DATA_DUMP_REQUEST), JVMPI_FAIL);
    ck_assert(events_enabled(JVMPI_EVENT_DATA_DUMP_REQUEST));
    ck_assert(fake.source_on[SEAM_SRC_DATA_DUMP]);
    fake.refuse_sources = false;
    ck_assert_int_eq(events_disable(0, JVMPI_EVENT_DATA_DUMP_REQUEST), JVMPI_SUCCESS);
    ck_assert(!fake.source_on[SEAM_SRC_DATA_DUMP]);
}
END_TEST

/*
 * Several agent threads enabling the same event at once must count it once,
 * like sequential enables do: one DisableEvent then switches the JVM TI
 * source off.  (An agent enabling from its own threads after start-up, e.g.
 * CLASS_LOAD from a command listener while another thread does the same.)
 */
#define ENABLERS 8
#define ENABLE_ROUNDS 2000
static pthread_barrier_t enable_barrier;

static void *enabler(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&enable_barrier);
    events_enable(0, JVMPI_EVENT_CLASS_LOAD);
    return NULL;
}

START_TEST(test_concurrent_enable_counts_once)
{
    int stuck_rounds = 0;
    for (int round = 0; round < ENABLE_ROUNDS; round++) {
        events_reset();
        fake_reset();
        pthread_t th[ENABLERS];
        pthread_barrier_init(&enable_barrier, NULL, ENABLERS);
        for (int k = 0; k < ENABLERS; k++) {
            ck_assert_int_eq(pthread_create(&th[k], NULL, enabler, NULL), 0);
        }
        for (int k = 0; k < ENABLERS; k++) {
            pthread_join(th[k], NULL);
        }
        pthread_barrier_destroy(&enable_barrier);
        ck_assert(events_enabled(JVMPI_EVENT_CLASS_LOAD));
        ck_assert_int_eq(events_disable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_SUCCESS);
        if (fake.source_on[SEAM_SRC_CLASS_PREPARE]) {
            stuck_rounds++;
        }
    }
    ck_assert_msg(stuck_rounds == 0,
                  "in %d of %d rounds, %d threads enabling CLASS_LOAD at once counted it more than "
                  "once: after DisableEvent(CLASS_LOAD) the JVM TI source stayed on",
                  stuck_rounds, ENABLE_ROUNDS, ENABLERS);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* delivery                                                                  */
/* ------------------------------------------------------------------------ */

static void deliver_setup(void)
{
    setup();
    deliver_counts_reset();
}

START_TEST(test_deliver_reads_notify_late)
{
    JVMPI_Interface iface;
    memset(&iface, 0, sizeof iface);
    events_set_interface(0, &iface);
    /* enabled before the agent set NotifyEvent (some agents do that) */
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_DATA_DUMP_REQUEST), JVMPI_SUCCESS);
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_JVM_INIT_DONE), JVMPI_SUCCESS);

    JVMPI_Event ev = plain(JVMPI_EVENT_DATA_DUMP_REQUEST);
    events_deliver(ENV_A, &ev); /* no handler yet: dropped, no crash */
    ck_assert_int_eq(calls_a, 0);

    fake_thread(ENV_A, seam_id_from_tag(ids_next_object(16, 0)), "a"); /* the calling thread */
    iface.NotifyEvent = notify_a;
    ev = plain(JVMPI_EVENT_DATA_DUMP_REQUEST);
    events_deliver(ENV_A, &ev);
    ck_assert_int_eq(calls_a, 1);
    ck_assert_int_eq(last.event_type, JVMPI_EVENT_DATA_DUMP_REQUEST);
    ck_assert_ptr_eq(last.env_id, ENV_A);

    /* replaced handler: the new one gets the next event */
    iface.NotifyEvent = notify_b;
    ev = plain(JVMPI_EVENT_JVM_INIT_DONE);
    events_deliver(ENV_A, &ev);
    ck_assert_int_eq(calls_a, 1);
    ck_assert_int_eq(calls_b, 1);
    ck_assert_ptr_eq(last.env_id, ENV_A);
    ck_assert_int_eq(last.event_type, JVMPI_EVENT_JVM_INIT_DONE);
}
END_TEST

/* HotSpot posts ThreadEnd before the thread leaves its list of threads, so
 * a thread past its THREAD_END can still send an event, and the layer,
 * not knowing it, would record it again (javac's main thread got a second
 * THREAD_START): a thread whose end was delivered is not recorded again. */
START_TEST(test_ended_thread_not_started_again)
{
    agent_a_listens();
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_THREAD_START), JVMPI_SUCCESS);
    jobjectID a_id = seam_id_from_tag(ids_next_object(16, 0));
    fake_thread(ENV_B, seam_id_from_tag(ids_next_object(16, 0)), "b");
    fake_thread(ENV_A, a_id, "a");
    layer_vm_init(ENV_B);
    ck_assert_int_eq(calls_a, 2);
    layer_thread_ended(ENV_A);
    fake_thread(ENV_A, a_id, "a"); /* what adopting it would do */
    ck_assert_int_eq(calls_a, 2);
    ck_assert_ptr_null(threads_acquire_by_id(a_id));
    /* a new thread that got A's JNIEnv * is a thread all the same */
    jobjectID c_id = seam_id_from_tag(ids_next_object(16, 0));
    fake_thread(ENV_A, c_id, "c");
    ck_assert_int_eq(calls_a, 3);
    ck_assert_ptr_eq(last.u.thread_start.thread_id, c_id);
}
END_TEST

START_TEST(test_deliver_after_shutdown)
{
    agent_a_listens();
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_JVM_INIT_DONE), JVMPI_SUCCESS);
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_JVM_SHUT_DOWN), JVMPI_SUCCESS);
    ck_assert(!events_is_shut_down());
    JVMPI_Event ev = plain(JVMPI_EVENT_JVM_INIT_DONE);
    events_deliver(ENV_A, &ev);
    ck_assert_int_eq(calls_a, 1);

    events_shutdown();
    ck_assert(events_is_shut_down());
    for (int i = 0; i < 3; i++) {
        ev = plain(JVMPI_EVENT_JVM_SHUT_DOWN);
        events_deliver(ENV_A, &ev);
    }
    ck_assert_int_eq(calls_a, 1);
    events_shutdown(); /* twice: harmless */
    ck_assert(events_is_shut_down());

    /* tests only: reset brings delivery back (and clears the agent's table) */
    events_reset();
    ck_assert(!events_is_shut_down());
    events_set_interface(0, &iface_a);
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_JVM_INIT_DONE), JVMPI_SUCCESS);
    ev = plain(JVMPI_EVENT_JVM_INIT_DONE);
    events_deliver(ENV_A, &ev);
    ck_assert_int_eq(calls_a, 2);
}
END_TEST

START_TEST(test_reset_clears)
{
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_SUCCESS);
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_THREAD_START), JVMPI_SUCCESS);
    events_reset();
    fake_reset();
    ck_assert(!events_enabled(JVMPI_EVENT_CLASS_LOAD));
    ck_assert(!events_enabled(JVMPI_EVENT_THREAD_START));
    /* the source count starts from zero again */
    ck_assert_int_eq(events_enable(0, JVMPI_EVENT_CLASS_LOAD), JVMPI_SUCCESS);
    ck_assert(fake.source_on[SEAM_SRC_CLASS_PREPARE]);
}
END_TEST

/* ------------------------------------------------------------------------ */

static Suite *events_suite(void)
{
    Suite *s = suite_create("events");
    TCase *tc;

    tc = tcase_create("enable");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, test_enable_disable_every_number, -5, 71);
    tcase_add_test(tc, test_kind_table);
    tcase_add_test(tc, test_quiet_enable_disable);
    tcase_add_test(tc, test_names);
    suite_add_tcase(s, tc);

    tc = tcase_create("sources");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_shared_source_refcount);
    tcase_add_test(tc, test_enable_twice_counts_once);
    tcase_add_test(tc, test_refused_source);
    tcase_add_test(tc, test_refused_second_source_rolls_back);
    tcase_add_test(tc, test_refused_disable);
    tcase_add_test(tc, test_concurrent_enable_counts_once);
    suite_add_tcase(s, tc);

    tc = tcase_create("deliver");
    tcase_add_checked_fixture(tc, deliver_setup, NULL);
    tcase_add_test(tc, test_deliver_reads_notify_late);
    tcase_add_test(tc, test_ended_thread_not_started_again);
    tcase_add_test(tc, test_deliver_after_shutdown);
    tcase_add_test(tc, test_reset_clears);
    suite_add_tcase(s, tc);

    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(events_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
