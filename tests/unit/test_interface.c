/*
 * test_interface.c - the JVMPI_Interface functions an agent calls
 * (jvmpi/interface.c) and the events the layer builds for it
 * (jvmpi/layer.c, jvmpi/dispatch.c), driven through the fake backend.
 *
 * Each test starts from layer_reset() + fake_reset() and the real
 * layer_onload(vm, NULL) path (no agent named), so the table is the one an
 * agent gets.  Phases are driven as the backend drives them: threads are
 * registered with fake_thread() (layer_thread_started), the VM start with
 * layer_vm_init(env).
 *
 * The recording NotifyEvent checks every event it gets: all bytes beyond
 * the union member that event type uses must be zero (agents read other
 * members; HotSpot zeroed its events), checked on a byte copy with the
 * member's known fields cleared, so padding is checked too.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "classes.h"
#include "dispatch.h"
#include "events.h"
#include "fake_backend.h"
#include "gate.h"
#include "interface.h"
#include "layer.h"
#include "stderr_capture.h"
#include "threads.h"

static char env_tokens[32];
#define ENV(i) ((JNIEnv *)(void *)&env_tokens[(i)])
#define ENV_MAIN ENV(0)
#define CLASS_ID(i) seam_id_from_tag(0x100000 + (int64_t)(i) * 8)
#define THREAD_ID(i) seam_id_from_tag(0x200000 + (int64_t)(i) * 8)

static JVMPI_Interface *pi;

/* ------------------------------------------------------------------------ */
/* the recording agent                                                       */
/* ------------------------------------------------------------------------ */

typedef struct {
    jint type;
    JNIEnv *env_id;
    pthread_t thread;
    bool tail_zero;
    char detail[160];   /* what was wrong with the zeroing */
    /* CLASS_LOAD / CLASS_UNLOAD */
    char name[64], source[64];
    jobjectID id;
    jint num_interfaces, num_methods, num_statics, num_instances;
    char m1_name[16], m1_sig[16], s0_name[16], s0_sig[16], f2_name[16], f2_sig[16];
    jint m1_start, m1_end;
    jmethodID m1_id;
    /* THREAD_START / END */
    char group[32], parent[32];
    JNIEnv *thread_env;
    /* what the handler did from inside the event */
    jint inner_rc;
} rec_event;

#define MAX_EVENTS 512
static rec_event evs[MAX_EVENTS];
static atomic_int n_evs;
static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;

/* events recorded so far */
static int nev(void) { return atomic_load(&n_evs); }

/* things a handler does from inside an event */
static bool systhread_at_init_done;
static bool request_in_unload;
static bool tls_at_shutdown;
static void (*at_shutdown)(void); /* run inside the JVM_SHUT_DOWN handler */
typedef enum { HOOK_LEAVE, HOOK_REWRITE, HOOK_IN_PLACE, HOOK_NULL } hook_mode;
static hook_mode hook_how;
static unsigned char *hook_agent_buffer;
static bool hook_saw_preset, hook_saw_malloc_f;
static unsigned char hook_seen[64];
static jint hook_seen_len;

static void JNICALL dummy_thread(void *arg) { (void)arg; }
static void shut_while_answering(void);
static bool shut_in_requested_start; /* the JVM_SHUT_DOWN handler returns while the answer is delivered */

static void copy_str(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src != NULL ? src : "(null)");
}

/* Copies ev bytewise, clears the members this type uses, and says whether
 * anything else is non-zero. */
static bool zero_beyond_member(const JVMPI_Event *ev, char *detail, size_t n)
{
    JVMPI_Event c;
    memcpy(&c, ev, sizeof c);
    c.event_type = 0;
    c.env_id = NULL;
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        c.u.class_load.class_name = NULL;
        c.u.class_load.source_name = NULL;
        c.u.class_load.num_interfaces = 0;
        c.u.class_load.num_methods = 0;
        c.u.class_load.methods = NULL;
        c.u.class_load.num_static_fields = 0;
        c.u.class_load.statics = NULL;
        c.u.class_load.num_instance_fields = 0;
        c.u.class_load.instances = NULL;
        c.u.class_load.class_id = NULL;
        break;
    case JVMPI_EVENT_CLASS_UNLOAD:
        c.u.class_unload.class_id = NULL;
        break;
    case JVMPI_EVENT_CLASS_LOAD_HOOK:
        c.u.class_load_hook.class_data = NULL;
        c.u.class_load_hook.class_data_len = 0;
        c.u.class_load_hook.new_class_data = NULL;
        c.u.class_load_hook.new_class_data_len = 0;
        c.u.class_load_hook.malloc_f = NULL;
        break;
    case JVMPI_EVENT_THREAD_START:
    case JVMPI_EVENT_THREAD_END:
        c.u.thread_start.thread_name = NULL;
        c.u.thread_start.group_name = NULL;
        c.u.thread_start.parent_name = NULL;
        c.u.thread_start.thread_id = NULL;
        c.u.thread_start.thread_env_id = NULL;
        break;
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT:
        c.u.raw_monitor.name = NULL;
        c.u.raw_monitor.id = NULL;
        break;
    default: /* JVM_INIT_DONE, JVM_SHUT_DOWN, DATA_DUMP_REQUEST: no data */
        break;
    }
    const unsigned char *b = (const unsigned char *)&c;
    for (size_t i = 0; i < sizeof c; i++) {
        if (b[i] != 0) {
            snprintf(detail, n, "event %d: byte %zu (union offset %ld) is 0x%02x", (int)ev->event_type, i,
                     (long)i - (long)offsetof(JVMPI_Event, u), b[i]);
            return false;
        }
    }
    return true;
}

static void record_event(JVMPI_Event *ev)
{
    /* the slot is taken first: events a handler causes come after it */
    pthread_mutex_lock(&rec_lock);
    int slot = nev();
    if (slot < MAX_EVENTS) {
        atomic_store(&n_evs, slot + 1);
    }
    pthread_mutex_unlock(&rec_lock);
    rec_event r;
    memset(&r, 0, sizeof r);
    r.type = ev->event_type;
    r.env_id = ev->env_id;
    r.thread = pthread_self();
    r.tail_zero = zero_beyond_member(ev, r.detail, sizeof r.detail);
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD: {
        const __typeof__(ev->u.class_load) *c = &ev->u.class_load;
        copy_str(r.name, sizeof r.name, c->class_name);
        copy_str(r.source, sizeof r.source, c->source_name);
        r.id = c->class_id;
        r.num_interfaces = c->num_interfaces;
        r.num_methods = c->num_methods;
        r.num_statics = c->num_static_fields;
        r.num_instances = c->num_instance_fields;
        if (c->num_methods > 1) {
            copy_str(r.m1_name, sizeof r.m1_name, c->methods[1].method_name);
            copy_str(r.m1_sig, sizeof r.m1_sig, c->methods[1].method_signature);
            r.m1_start = c->methods[1].start_lineno;
            r.m1_end = c->methods[1].end_lineno;
            r.m1_id = c->methods[1].method_id;
        }
        if (c->num_static_fields > 0) {
            copy_str(r.s0_name, sizeof r.s0_name, c->statics[0].field_name);
            copy_str(r.s0_sig, sizeof r.s0_sig, c->statics[0].field_signature);
        }
        if (c->num_instance_fields > 2) {
            copy_str(r.f2_name, sizeof r.f2_name, c->instances[2].field_name);
            copy_str(r.f2_sig, sizeof r.f2_sig, c->instances[2].field_signature);
        }
        break;
    }
    case JVMPI_EVENT_CLASS_UNLOAD:
        r.id = ev->u.class_unload.class_id;
        if (request_in_unload) {
            /* answered from the saved data while the unload is delivered */
            r.inner_rc = pi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, r.id);
        }
        break;
    case JVMPI_EVENT_THREAD_START:
        if (shut_in_requested_start && (ev->event_type & JVMPI_REQUESTED_EVENT) != 0) {
            shut_while_answering();
        }
        /* fall through */
    case JVMPI_EVENT_THREAD_END:
        copy_str(r.name, sizeof r.name, ev->u.thread_start.thread_name);
        copy_str(r.group, sizeof r.group, ev->u.thread_start.group_name);
        copy_str(r.parent, sizeof r.parent, ev->u.thread_start.parent_name);
        r.id = ev->u.thread_start.thread_id;
        r.thread_env = ev->u.thread_start.thread_env_id;
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        if (tls_at_shutdown) {
            r.inner_rc = (jint)(intptr_t)pi->GetThreadLocalStorage(ev->env_id);
        }
        if (at_shutdown != NULL) {
            at_shutdown();
        }
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        if (systhread_at_init_done) {
            r.inner_rc = pi->CreateSystemThread("agent-listener", JVMPI_NORMAL_PRIORITY, dummy_thread);
        }
        break;
    case JVMPI_EVENT_CLASS_LOAD_HOOK: {
        __typeof__(ev->u.class_load_hook) *h = &ev->u.class_load_hook;
        hook_saw_preset = h->new_class_data == h->class_data && h->new_class_data_len == h->class_data_len;
        hook_saw_malloc_f = h->malloc_f != NULL;
        hook_seen_len = h->class_data_len;
        memcpy(hook_seen, h->class_data, (size_t)h->class_data_len < sizeof hook_seen ? (size_t)h->class_data_len
                                                                                         : sizeof hook_seen);
        switch (hook_how) {
        case HOOK_LEAVE:
            break;
        case HOOK_REWRITE:
            hook_agent_buffer = h->malloc_f((unsigned int)h->class_data_len + 4);
            memcpy(hook_agent_buffer, h->class_data, (size_t)h->class_data_len);
            memcpy(hook_agent_buffer + h->class_data_len, "TAIL", 4);
            h->new_class_data = hook_agent_buffer;
            h->new_class_data_len = h->class_data_len + 4;
            break;
        case HOOK_IN_PLACE:
            h->class_data[0] = 'X';
            break;
        case HOOK_NULL:
            h->new_class_data = NULL;
            h->new_class_data_len = 0;
            break;
        }
        break;
    }
    default:
        break;
    }
    if (slot < MAX_EVENTS) {
        pthread_mutex_lock(&rec_lock);
        evs[slot] = r;
        pthread_mutex_unlock(&rec_lock);
    }
}

static void assert_all_zeroed(void)
{
    for (int i = 0; i < nev(); i++) {
        ck_assert_msg(evs[i].tail_zero, "event #%d (type %d) not zeroed beyond its member: %s", i, (int)evs[i].type,
                      evs[i].detail);
    }
}

static void setup(void)
{
    /* the test thread is the VM's main thread */
    pi = fake_layer_loaded(ENV_MAIN);
    ck_assert_ptr_nonnull(pi);
    ck_assert_ptr_eq(pi, layer_interface_for(JVMPI_VERSION_1_2, NULL));
    pi->NotifyEvent = record_event;
    atomic_store(&n_evs, 0);
    memset(evs, 0, sizeof evs);
    systhread_at_init_done = request_in_unload = tls_at_shutdown = false;
    at_shutdown = NULL;
    shut_in_requested_start = false;
    hook_how = HOOK_LEAVE;
    hook_agent_buffer = NULL;
}

static void teardown(void)
{
    layer_reset();
}

/* main thread registered, VM started, nothing recorded */
static void go_live(void)
{
    fake_thread(ENV_MAIN, THREAD_ID(0), "main");
    layer_vm_init(ENV_MAIN);
    ck_assert(layer_is_live());
    atomic_store(&n_evs, 0);
}

/* Another Java thread starting or ending: the backend calls the layer in
 * that thread itself, so these run on a short-lived pthread "attached" with
 * env and id.  (Registering it from the test thread would make the layer
 * take the test thread for it.) */
typedef struct {
    JNIEnv *env;
    jobjectID id;
    const char *name;
    void (*what)(void *);
} java_thread_job;

static void *java_thread_main(void *arg)
{
    java_thread_job *j = arg;
    fake_set_thread_env(j->env);
    fake_set_thread_id(j->id);
    j->what(j);
    return NULL;
}

static void run_as(java_thread_job *j)
{
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, java_thread_main, j), 0);
    pthread_join(th, NULL);
}

static void do_start(void *arg)
{
    java_thread_job *j = arg;
    fake_thread(j->env, j->id, j->name);
}

static void do_end(void *arg)
{
    java_thread_job *j = arg;
    layer_thread_ended(j->env);
}

static void do_data_dump(void *arg)
{
    (void)arg;
    layer_data_dump_request();
}

static void do_vm_death(void *arg)
{
    java_thread_job *j = arg;
    layer_vm_death(j->env);
}

static void do_set_tls(void *arg)
{
    java_thread_job *j = arg;
    pi->SetThreadLocalStorage(j->env, (void *)(intptr_t)0x4242);
}

static void start_thread(JNIEnv *env, jobjectID id, const char *name)
{
    java_thread_job j = {env, id, name, do_start};
    run_as(&j);
}

static void end_thread(JNIEnv *env, jobjectID id)
{
    java_thread_job j = {env, id, NULL, do_end};
    run_as(&j);
}

/* ------------------------------------------------------------------------ */
/* RequestEvent                                                              */
/* ------------------------------------------------------------------------ */

static void assert_class_event(const rec_event *e, jobjectID id, const char *name)
{
    ck_assert_str_eq(e->name, name);
    ck_assert_ptr_eq(e->id, id);
    ck_assert_str_eq(e->source, "Fake.java");
    ck_assert_int_eq(e->num_interfaces, 1);
}

START_TEST(test_request_class_load)
{
    go_live();
    layer_class_defined(fake_class(CLASS_ID(1), "com.example.Foo", 2, 1, 3));
    /* CLASS_LOAD is not enabled: a requested event comes anyway */
    jint rc = pi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, CLASS_ID(1));
    ck_assert_int_eq(rc, JVMPI_SUCCESS);
    /* synchronous: already delivered, on this thread */
    ck_assert_int_eq(nev(), 1);
    const rec_event *e = &evs[0];
    ck_assert_int_eq(e->type, JVMPI_EVENT_CLASS_LOAD | JVMPI_REQUESTED_EVENT);
    ck_assert(pthread_equal(e->thread, pthread_self()));
    ck_assert_ptr_eq(e->env_id, ENV_MAIN);
    assert_class_event(e, CLASS_ID(1), "com.example.Foo");
    ck_assert_int_eq(e->num_methods, 2);
    ck_assert_str_eq(e->m1_name, "m1");
    ck_assert_str_eq(e->m1_sig, "()V");
    ck_assert_int_eq(e->m1_start, 10);
    ck_assert_int_eq(e->m1_end, 15);
    ck_assert_ptr_eq(e->m1_id, (jmethodID)(uintptr_t)0x1001);
    ck_assert_int_eq(e->num_statics, 1);
    ck_assert_str_eq(e->s0_name, "s0");
    ck_assert_str_eq(e->s0_sig, "I");
    ck_assert_int_eq(e->num_instances, 3);
    ck_assert_str_eq(e->f2_name, "f2");
    ck_assert_str_eq(e->f2_sig, "J");

    /* again, and with CLASS_LOAD enabled: each request answered once */
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, CLASS_ID(1)), JVMPI_SUCCESS);
    ck_assert_int_eq(nev(), 2);
    ck_assert_int_eq(evs[1].type, JVMPI_EVENT_CLASS_LOAD | JVMPI_REQUESTED_EVENT);

    /* unknown and NULL IDs */
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, CLASS_ID(99)), JVMPI_FAIL);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, NULL), JVMPI_FAIL);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, THREAD_ID(0)), JVMPI_FAIL);
    ck_assert_int_eq(nev(), 2);
    assert_all_zeroed();
}
END_TEST

START_TEST(test_request_thread_start)
{
    go_live();
    start_thread(ENV(3), THREAD_ID(3), "worker");
    ck_assert_int_eq(nev(), 0); /* THREAD_START is off */
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_THREAD_START, THREAD_ID(3)), JVMPI_SUCCESS);
    ck_assert_int_eq(nev(), 1);
    const rec_event *e = &evs[0];
    ck_assert_int_eq(e->type, JVMPI_EVENT_THREAD_START | JVMPI_REQUESTED_EVENT);
    ck_assert(pthread_equal(e->thread, pthread_self()));
    ck_assert_ptr_eq(e->env_id, ENV_MAIN);
    ck_assert_str_eq(e->name, "worker");
    ck_assert_str_eq(e->group, "main");
    ck_assert_str_eq(e->parent, "system");
    ck_assert_ptr_eq(e->id, THREAD_ID(3));
    ck_assert_ptr_eq(e->thread_env, ENV(3));

    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_THREAD_START, THREAD_ID(0)), JVMPI_SUCCESS);
    ck_assert_str_eq(evs[1].name, "main");
    ck_assert_ptr_eq(evs[1].thread_env, ENV_MAIN);

    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_THREAD_START, THREAD_ID(9)), JVMPI_FAIL);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_THREAD_START, NULL), JVMPI_FAIL);
    /* an ended thread is no longer known */
    end_thread(ENV(3), THREAD_ID(3));
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_THREAD_START, THREAD_ID(3)), JVMPI_FAIL);
    ck_assert_int_eq(nev(), 2);
    assert_all_zeroed();
}
END_TEST

START_TEST(test_request_other_types)
{
    go_live();
    layer_class_defined(fake_class(CLASS_ID(1), "A", 0, 0, 0));
    static const jint others[] = {
        JVMPI_EVENT_METHOD_ENTRY, JVMPI_EVENT_CLASS_UNLOAD, JVMPI_EVENT_THREAD_END, JVMPI_EVENT_JVM_INIT_DONE,
        JVMPI_EVENT_DATA_DUMP_REQUEST, JVMPI_EVENT_GC_START, 0, -1, 10, 36, 62, 70, 1000,
        JVMPI_EVENT_CLASS_LOAD_HOOK,
    };
    for (size_t k = 0; k < sizeof others / sizeof others[0]; k++) {
        void *arg = (void *)CLASS_ID(1);
        jint rc = pi->RequestEvent(others[k], arg);
        ck_assert_msg(rc == JVMPI_NOT_AVAILABLE, "RequestEvent(%d) = %d, expected NOT_AVAILABLE", (int)others[k],
                      (int)rc);
    }
    ck_assert_int_eq(nev(), 0);
}
END_TEST

/* A request made while the CLASS_UNLOAD for that class is being delivered is
 * answered from the saved data, with every method ID NULL (HotSpot 5.0);
 * afterwards the class is gone. */
static void *delivery_thread(void *arg)
{
    (void)arg;
    layer_delivery_main(NULL);
    return NULL;
}

static bool wait_events(int n)
{
    for (int i = 0; i < 5000 && nev() < n; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return nev() >= n;
}

START_TEST(test_class_unload_delivery)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_CLASS_UNLOAD, NULL), JVMPI_SUCCESS);
    go_live();
    /* a class the agent was told about, and one it was not */
    layer_class_defined(fake_class(CLASS_ID(1), "Told", 2, 0, 0));
    layer_class_announce(ENV_MAIN, CLASS_ID(1));
    layer_class_defined(fake_class(CLASS_ID(2), "NotTold", 2, 0, 0));
    ck_assert_int_eq(nev(), 1);
    atomic_store(&n_evs, 0);

    request_in_unload = true;
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, delivery_thread, NULL), 0);
    layer_class_freed(CLASS_ID(1));
    layer_class_freed(CLASS_ID(2));
    bool all = wait_events(5);
    layer_stop();
    pthread_join(th, NULL);
    ck_assert_msg(all, "only %d events arrived", nev());
    ck_assert_int_eq(nev(), 5);

    ck_assert_int_eq(evs[0].type, JVMPI_EVENT_CLASS_UNLOAD);
    ck_assert_ptr_eq(evs[0].id, CLASS_ID(1));
    ck_assert_int_eq(evs[0].inner_rc, JVMPI_SUCCESS);
    ck_assert_int_eq(evs[1].type, JVMPI_EVENT_CLASS_LOAD | JVMPI_REQUESTED_EVENT);
    ck_assert_str_eq(evs[1].name, "Told");
    /* HotSpot 5.0's saved data: the methods named, their IDs NULL */
    ck_assert_int_eq(evs[1].num_methods, 2);
    ck_assert_str_eq(evs[1].m1_name, "m1");
    ck_assert_int_eq(evs[1].m1_end, 15);
    ck_assert_ptr_null(evs[1].m1_id);
    /* no event may name a class the agent never heard of: its CLASS_LOAD first */
    ck_assert_int_eq(evs[2].type, JVMPI_EVENT_CLASS_LOAD);
    ck_assert_str_eq(evs[2].name, "NotTold");
    ck_assert_ptr_eq(evs[2].m1_id, (jmethodID)0x1001); /* not a request: the class as it was */
    ck_assert_int_eq(evs[3].type, JVMPI_EVENT_CLASS_UNLOAD);
    ck_assert_ptr_eq(evs[3].id, CLASS_ID(2));
    ck_assert_int_eq(evs[4].type, JVMPI_EVENT_CLASS_LOAD | JVMPI_REQUESTED_EVENT);
    ck_assert_str_eq(evs[4].name, "NotTold");
    ck_assert_ptr_null(evs[4].m1_id);
    /* gone once delivered */
    ck_assert_int_eq(classes_count(), 0);
    assert_all_zeroed();
}
END_TEST

/* JDK 5.0 unloaded classes only in a collection: while the agent (or a heap
 * dump being built) holds GC disabled, a freed class's CLASS_UNLOAD waits,
 * so that a dump taken meanwhile never names a class already unloaded. */
START_TEST(test_class_unload_waits_for_enable_gc)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_CLASS_UNLOAD, NULL), JVMPI_SUCCESS);
    go_live();
    layer_class_defined(fake_class(CLASS_ID(1), "Told", 0, 0, 0));
    layer_class_announce(ENV_MAIN, CLASS_ID(1));
    atomic_store(&n_evs, 0);

    pi->DisableGC();
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, delivery_thread, NULL), 0);
    layer_class_freed(CLASS_ID(1));
    struct timespec a_while = {0, 300 * 1000000L};
    nanosleep(&a_while, NULL);
    ck_assert_msg(nev() == 0, "CLASS_UNLOAD delivered while GC was disabled");
    ck_assert_int_eq(classes_count(), 1);
    pi->EnableGC();
    bool came = wait_events(1);
    layer_stop();
    pthread_join(th, NULL);
    ck_assert_msg(came, "CLASS_UNLOAD never came after EnableGC");
    ck_assert_int_eq(evs[0].type, JVMPI_EVENT_CLASS_UNLOAD);
    ck_assert_ptr_eq(evs[0].id, CLASS_ID(1));
    ck_assert_int_eq(classes_count(), 0);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* start-up                                                                  */
/* ------------------------------------------------------------------------ */

static void define_at_vm_init(JNIEnv *env)
{
    (void)env;
    layer_class_defined(fake_class(CLASS_ID(3), "C3", 1, 0, 0));
    layer_class_defined(fake_class(CLASS_ID(4), "C4", 0, 0, 0));
}

START_TEST(test_startup_replay_order)
{
    /* enabled in JVM_OnLoad */
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_THREAD_END, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL), JVMPI_SUCCESS);

    /* the VM starting: classes and threads appear before VMInit */
    layer_class_defined(fake_class(CLASS_ID(1), "C1", 2, 1, 3));
    layer_class_announce(ENV_MAIN, CLASS_ID(1));
    layer_class_defined(fake_class(CLASS_ID(2), "C2", 0, 0, 0));
    layer_class_announce(ENV_MAIN, CLASS_ID(2));
    fake_thread(ENV_MAIN, THREAD_ID(0), "main");
    start_thread(ENV(1), THREAD_ID(1), "Signal Dispatcher");
    seam_thread_info internal = {.env = ENV(2), .id = THREAD_ID(2), .handle = ENV(2), .internal = true};
    internal.name = strdup("JVMPI layer delivery");
    layer_thread_started(&internal);
    seam_thread_info early = {.env = NULL, .id = THREAD_ID(3)};
    early.name = strdup("Reference Handler");
    early.group_name = strdup("system");
    layer_thread_started(&early);
    fake.on_define_loaded = define_at_vm_init;
    ck_assert_int_eq(nev(), 0);

    layer_vm_init(ENV_MAIN);
    ck_assert_int_ge(fake.define_loaded_calls, 1);
    ck_assert_int_eq(fake.delivery_threads, 1);

    static const struct {
        jint type;
        const char *name;
    } want[] = {
        /* the replaying thread is defined before its first event names it */
        {JVMPI_EVENT_THREAD_START, "main"},
        {JVMPI_EVENT_CLASS_LOAD, "C1"},       {JVMPI_EVENT_CLASS_LOAD, "C2"},
        {JVMPI_EVENT_CLASS_LOAD, "C3"},       {JVMPI_EVENT_CLASS_LOAD, "C4"},
        {JVMPI_EVENT_THREAD_START, "Signal Dispatcher"},
        {JVMPI_EVENT_THREAD_START, "Reference Handler"}, {JVMPI_EVENT_JVM_INIT_DONE, NULL},
    };
    int n = nev();
    for (int i = 0; i < n && i < (int)(sizeof want / sizeof want[0]); i++) {
        ck_assert_msg(evs[i].type == want[i].type, "start-up event #%d is type %d, expected %d", i,
                      (int)evs[i].type, (int)want[i].type);
        if (want[i].name != NULL) {
            ck_assert_msg(strcmp(evs[i].name, want[i].name) == 0, "start-up event #%d is %s, expected %s", i,
                          evs[i].name, want[i].name);
        }
        ck_assert_ptr_eq(evs[i].env_id, ENV_MAIN);
    }
    ck_assert_int_eq(n, (int)(sizeof want / sizeof want[0]));
    assert_class_event(&evs[1], CLASS_ID(1), "C1");
    ck_assert_int_eq(evs[1].num_methods, 2);
    ck_assert_ptr_eq(evs[0].thread_env, ENV_MAIN);
    ck_assert_ptr_eq(evs[0].id, THREAD_ID(0));
    /* a thread whose JNIEnv * the layer never learnt still gets a usable handle */
    JNIEnv *early_env = evs[6].thread_env;
    ck_assert_ptr_nonnull(early_env);
    ck_assert_str_eq(evs[6].parent, "(null)");
    ck_assert_ptr_eq(pi->GetThreadObject(early_env), THREAD_ID(3));

    /* after start-up: new classes and threads are announced once, as they come */
    atomic_store(&n_evs, 0);
    layer_class_defined(fake_class(CLASS_ID(5), "C5", 0, 0, 0));
    layer_class_announce(ENV_MAIN, CLASS_ID(5));
    layer_class_announce(ENV_MAIN, CLASS_ID(5));
    layer_class_announce(ENV_MAIN, CLASS_ID(1));
    start_thread(ENV(5), THREAD_ID(5), "late");
    start_thread(ENV(5), THREAD_ID(5), "late"); /* reported twice by the VM */
    end_thread(ENV(5), THREAD_ID(5));
    ck_assert_int_eq(nev(), 3);
    ck_assert_int_eq(evs[0].type, JVMPI_EVENT_CLASS_LOAD);
    ck_assert_str_eq(evs[0].name, "C5");
    ck_assert_int_eq(evs[1].type, JVMPI_EVENT_THREAD_START);
    ck_assert_str_eq(evs[1].name, "late");
    ck_assert_ptr_eq(evs[1].env_id, ENV(5)); /* sent in the new thread */
    /* THREAD_END carries the thread_start fields again */
    ck_assert_int_eq(evs[2].type, JVMPI_EVENT_THREAD_END);
    ck_assert_ptr_eq(evs[2].env_id, ENV(5)); /* sent in the ending thread */
    ck_assert_str_eq(evs[2].name, "late");
    ck_assert_str_eq(evs[2].group, "main");
    ck_assert_ptr_eq(evs[2].id, THREAD_ID(5));
    ck_assert_ptr_eq(evs[2].thread_env, ENV(5));
    assert_all_zeroed();
}
END_TEST

START_TEST(test_startup_only_what_is_enabled)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL), JVMPI_SUCCESS);
    layer_class_defined(fake_class(CLASS_ID(1), "C1", 0, 0, 0));
    fake_thread(ENV_MAIN, THREAD_ID(0), "main");
    layer_vm_init(ENV_MAIN);
    ck_assert_int_eq(nev(), 1);
    ck_assert_int_eq(evs[0].type, JVMPI_EVENT_JVM_INIT_DONE);
    assert_all_zeroed();
}
END_TEST

/* Agents create their threads while handling JVM_INIT_DONE (the spec: "safe
 * ... after the JVM notifies JVM_INIT_DONE"; hprof did exactly this). */
START_TEST(test_create_system_thread_in_init_done_handler)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL), JVMPI_SUCCESS);
    systhread_at_init_done = true;
    fake_thread(ENV_MAIN, THREAD_ID(0), "main");
    layer_vm_init(ENV_MAIN);
    ck_assert_int_eq(nev(), 1);
    ck_assert_msg(evs[0].inner_rc == JNI_OK,
                  "CreateSystemThread called from the JVM_INIT_DONE handler returned %d, expected "
                  "JNI_OK (interface_mark_init_done() runs only after JVM_INIT_DONE was delivered)",
                  (int)evs[0].inner_rc);
    ck_assert_int_eq(fake.system_threads, 1);
}
END_TEST


/* A thread that was already running at VM init is registered without its
 * JNIEnv * (the layer makes a handle for it, seam.h).  When it later sends
 * events or ends, the backend calls in with its real JNIEnv *: the agent
 * must still see it under the handle it was told, and get its THREAD_END. */
START_TEST(test_thread_seen_before_init)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_THREAD_END, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_DATA_DUMP_REQUEST, NULL), JVMPI_SUCCESS);
    fake_thread(ENV_MAIN, THREAD_ID(0), "main");
    seam_thread_info early = {.env = NULL, .id = THREAD_ID(3), .handle = ENV(3)};
    early.name = strdup("Finalizer");
    layer_thread_started(&early);
    layer_vm_init(ENV_MAIN);
    ck_assert_int_eq(nev(), 2);
    ck_assert_str_eq(evs[1].name, "Finalizer");
    JNIEnv *handle = evs[1].thread_env;
    ck_assert_ptr_nonnull(handle);
    ck_assert_ptr_ne(handle, ENV(3));
    atomic_store(&n_evs, 0);

    /* an event sent from that thread names it by the handle */
    java_thread_job dump = {ENV(3), THREAD_ID(3), NULL, do_data_dump};
    run_as(&dump);
    ck_assert_int_eq(nev(), 1);
    ck_assert_int_eq(evs[0].type, JVMPI_EVENT_DATA_DUMP_REQUEST);
    ck_assert_ptr_eq(evs[0].env_id, handle);

    /* it ends (JVM TI ThreadEnd, in the thread, with its real JNIEnv *) */
    end_thread(ENV(3), THREAD_ID(3));
    ck_assert_msg(nev() == 2,
                  "a thread registered at VM init with env NULL ended (layer_thread_ended with its "
                  "real JNIEnv *) but no THREAD_END was sent (%d events)", nev());
    ck_assert_int_eq(evs[1].type, JVMPI_EVENT_THREAD_END);
    ck_assert_ptr_eq(evs[1].id, THREAD_ID(3));
    ck_assert_ptr_eq(evs[1].thread_env, handle);
    ck_assert_ptr_eq(evs[1].env_id, handle);
    ck_assert_msg(pi->GetThreadObject(handle) == NULL,
                  "the ended thread is still in the table under its handle");
}
END_TEST


/* HotSpot 17+ ends the DestroyJavaVM thread before posting VMDeath from it;
 * the layer holds that thread's end back so JVM_SHUT_DOWN comes from a live
 * thread whose thread-local storage the agent still has (layer.c), and
 * then sends no THREAD_END for it: JDK 5.0 sent nothing after JVM_SHUT_DOWN,
 * and an agent that frees its tables there would write into freed memory. */
START_TEST(test_shutdown_from_destroy_thread)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_THREAD_END, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL), JVMPI_SUCCESS);
    go_live();
    tls_at_shutdown = true;
    start_thread(ENV(6), THREAD_ID(6), "DestroyJavaVM");
    java_thread_job set = {ENV(6), THREAD_ID(6), NULL, do_set_tls};
    run_as(&set);
    end_thread(ENV(6), THREAD_ID(6));
    ck_assert_int_eq(nev(), 0);
    java_thread_job death = {ENV(6), THREAD_ID(6), NULL, do_vm_death};
    run_as(&death);
    ck_assert_msg(nev() == 1, "%d events; the last is %d, not JVM_SHUT_DOWN", nev(), evs[nev() - 1].type);
    ck_assert_int_eq(evs[0].type, JVMPI_EVENT_JVM_SHUT_DOWN);
    ck_assert_ptr_eq(evs[0].env_id, ENV(6));
    ck_assert_int_eq(evs[0].inner_rc, 0x4242);
    ck_assert_ptr_null(pi->GetThreadObject(ENV(6)));
    ck_assert_int_eq(layer_phase(), LAYER_DEAD);
    assert_all_zeroed();
}
END_TEST

/* JDK 5.0 disengaged JVMPI once the JVM_SHUT_DOWN handler had returned.
 * While it runs, what the handler itself asks for reaches the agent (HPROF
 * requests its heap dump there), and so do the answers to other threads'
 * requests (an agent may wait there for its own thread to finish a dump);
 * other threads' own events do not, and after it nothing does but the
 * answer to a request already under way. */
static jint other_thread_request_rc, nested_request_rc;

static void do_request_thread_start(void *arg)
{
    (void)arg;
    other_thread_request_rc = pi->RequestEvent(JVMPI_EVENT_THREAD_START, THREAD_ID(1));
}

static void while_shutting_down(void)
{
    start_thread(ENV(2), THREAD_ID(2), "late");      /* no THREAD_START */
    java_thread_job dump = {ENV(1), THREAD_ID(1), NULL, do_data_dump};
    run_as(&dump);                                    /* no DATA_DUMP_REQUEST */
    java_thread_job ask = {ENV(1), THREAD_ID(1), NULL, do_request_thread_start};
    run_as(&ask);                                     /* answered, on that thread */
    ck_assert_int_eq(other_thread_request_rc, JVMPI_SUCCESS);
    /* the handler's own request is answered */
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_THREAD_START, THREAD_ID(1)), JVMPI_SUCCESS);
}

START_TEST(test_no_event_after_shut_down)
{
    static const jint on[] = {JVMPI_EVENT_THREAD_START, JVMPI_EVENT_THREAD_END, JVMPI_EVENT_JVM_SHUT_DOWN,
                              JVMPI_EVENT_DATA_DUMP_REQUEST, JVMPI_EVENT_CLASS_LOAD};
    for (size_t k = 0; k < sizeof on / sizeof on[0]; k++) {
        ck_assert_int_eq(pi->EnableEvent(on[k], NULL), JVMPI_SUCCESS);
    }
    go_live();
    start_thread(ENV(1), THREAD_ID(1), "worker");
    atomic_store(&n_evs, 0);
    at_shutdown = while_shutting_down;
    layer_vm_death(ENV_MAIN);
    /* after it: threads end, classes load, dumps and requests are asked for */
    java_thread_job ask = {ENV(1), THREAD_ID(1), NULL, do_request_thread_start};
    run_as(&ask);
    ck_assert_int_eq(other_thread_request_rc, JVMPI_NOT_AVAILABLE);
    end_thread(ENV(1), THREAD_ID(1));
    end_thread(ENV(2), THREAD_ID(2));
    layer_class_defined(fake_class(CLASS_ID(1), "Late", 1, 0, 0));
    layer_class_announce(ENV_MAIN, CLASS_ID(1));
    layer_data_dump_request();
    ck_assert_msg(nev() == 3, "%d events; the last is %d", nev(), evs[nev() - 1].type);
    ck_assert_int_eq(evs[0].type, JVMPI_EVENT_JVM_SHUT_DOWN);
    ck_assert_int_eq(evs[1].type, JVMPI_EVENT_THREAD_START | JVMPI_REQUESTED_EVENT);
    ck_assert(!pthread_equal(evs[1].thread, pthread_self()));
    ck_assert_int_eq(evs[2].type, JVMPI_EVENT_THREAD_START | JVMPI_REQUESTED_EVENT);
    ck_assert(pthread_equal(evs[2].thread, pthread_self()));
}
END_TEST

/* A class loaded on another thread while the JVM_SHUT_DOWN handler runs
 * gets no CLASS_LOAD then; it is owed still, and comes first when the
 * handler's heap dump names the class: Sun's HPROF abandons a dump at the
 * first CLASS_DUMP of a class it was never told of. */
static void do_announce_late_class(void *arg)
{
    (void)arg;
    layer_class_announce(ENV(1), CLASS_ID(1));
}

static void load_while_shutting_down(void)
{
    layer_class_defined(fake_class(CLASS_ID(1), "Late", 1, 0, 0));
    java_thread_job load = {ENV(1), THREAD_ID(1), NULL, do_announce_late_class};
    run_as(&load);
    ck_assert_msg(nev() == 1, "%d events: another thread's CLASS_LOAD went out during the handler", nev());
    layer_class_announce(ENV_MAIN, CLASS_ID(1)); /* as the handler's dump names it */
}

START_TEST(test_refused_definition_still_owed)
{
    static const jint on[] = {JVMPI_EVENT_THREAD_START, JVMPI_EVENT_JVM_SHUT_DOWN, JVMPI_EVENT_CLASS_LOAD};
    for (size_t k = 0; k < sizeof on / sizeof on[0]; k++) {
        ck_assert_int_eq(pi->EnableEvent(on[k], NULL), JVMPI_SUCCESS);
    }
    go_live();
    start_thread(ENV(1), THREAD_ID(1), "worker");
    atomic_store(&n_evs, 0);
    at_shutdown = load_while_shutting_down;
    layer_vm_death(ENV_MAIN);
    ck_assert_msg(nev() == 2, "%d events: the CLASS_LOAD refused on the other thread never came", nev());
    ck_assert_int_eq(evs[0].type, JVMPI_EVENT_JVM_SHUT_DOWN);
    ck_assert_int_eq(evs[1].type, JVMPI_EVENT_CLASS_LOAD);
    ck_assert_ptr_eq(evs[1].id, CLASS_ID(1));
    ck_assert(pthread_equal(evs[1].thread, pthread_self()));
}
END_TEST

/* A request under way when the JVM_SHUT_DOWN handler returns is answered
 * in full: its RequestEvent says JVMPI_SUCCESS only when the answer came. */
static void shut_while_answering(void)
{
    events_shutdown(); /* as the handler, returning on the main thread meanwhile */
    nested_request_rc = pi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, CLASS_ID(1));
}

START_TEST(test_request_under_way_answered_after_shut_down)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL), JVMPI_SUCCESS);
    go_live();
    start_thread(ENV(1), THREAD_ID(1), "worker");
    layer_class_defined(fake_class(CLASS_ID(1), "Asked", 1, 0, 0));
    atomic_store(&n_evs, 0);
    shut_in_requested_start = true;
    java_thread_job ask = {ENV(1), THREAD_ID(1), NULL, do_request_thread_start};
    run_as(&ask);
    shut_in_requested_start = false;
    ck_assert_int_eq(other_thread_request_rc, JVMPI_SUCCESS);
    ck_assert_int_eq(nested_request_rc, JVMPI_SUCCESS);
    ck_assert_msg(nev() == 2, "%d events", nev());
    ck_assert_int_eq(evs[0].type, JVMPI_EVENT_THREAD_START | JVMPI_REQUESTED_EVENT);
    ck_assert_int_eq(evs[1].type, JVMPI_EVENT_CLASS_LOAD | JVMPI_REQUESTED_EVENT);
    /* a new one is refused */
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, CLASS_ID(1)), JVMPI_NOT_AVAILABLE);
    ck_assert_int_eq(nev(), 2);
}
END_TEST

/* A GC window open on another thread when JVM_SHUT_DOWN comes ends first,
 * GC_FINISH included: an agent that holds a lock from GC_START to
 * GC_FINISH takes it again in its JVM_SHUT_DOWN handler. */
static atomic_int window_stage;

static void *window_thread(void *arg)
{
    (void)arg;
    fake_set_thread_env(ENV(1));
    gate_close();
    dispatch_plain(ENV(1), JVMPI_EVENT_GC_START);
    atomic_store(&window_stage, 1);
    struct timespec pause = {0, 100 * 1000000L};
    nanosleep(&pause, NULL); /* JVM_SHUT_DOWN comes meanwhile */
    dispatch_plain(ENV(1), JVMPI_EVENT_GC_FINISH);
    gate_open();
    return NULL;
}

START_TEST(test_shut_down_waits_for_open_window)
{
    static const jint on[] = {JVMPI_EVENT_GC_START, JVMPI_EVENT_GC_FINISH, JVMPI_EVENT_JVM_SHUT_DOWN};
    for (size_t k = 0; k < sizeof on / sizeof on[0]; k++) {
        ck_assert_int_eq(pi->EnableEvent(on[k], NULL), JVMPI_SUCCESS);
    }
    go_live();
    start_thread(ENV(1), THREAD_ID(1), "worker");
    atomic_store(&n_evs, 0);
    atomic_store(&window_stage, 0);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, window_thread, NULL), 0);
    while (atomic_load(&window_stage) == 0) {
        struct timespec ms = {0, 1000000L};
        nanosleep(&ms, NULL);
    }
    layer_vm_death(ENV_MAIN);
    pthread_join(th, NULL);
    ck_assert_msg(nev() == 3, "%d events", nev());
    ck_assert_int_eq(evs[0].type, JVMPI_EVENT_GC_START);
    ck_assert_int_eq(evs[1].type, JVMPI_EVENT_GC_FINISH);
    ck_assert_int_eq(evs[2].type, JVMPI_EVENT_JVM_SHUT_DOWN);
}
END_TEST

/* After JVM_SHUT_DOWN, an agent thread calling in gets at once an answer
 * that means "nothing" (docs/differences.md): never a hang (JDK 5.0
 * blocked such a thread for ever), never a crash, never a word.  Raw
 * monitors, thread-local storage and CPU time, which need no VM, work on. */
START_TEST(test_calls_after_shut_down)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL), JVMPI_SUCCESS);
    go_live();
    start_thread(ENV(1), THREAD_ID(1), "worker");
    int word;
    pi->SetThreadLocalStorage(ENV_MAIN, &word);
    JVMPI_RawMonitor mon = pi->RawMonitorCreate("agent lock");
    layer_vm_death(ENV_MAIN);
    fake.trace_frames = 3;

    stderr_capture c;
    stderr_capture_begin(&c);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_THREAD_END, NULL), JVMPI_NOT_AVAILABLE);
    ck_assert_int_eq(pi->DisableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL), JVMPI_NOT_AVAILABLE);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_THREAD_START, THREAD_ID(1)), JVMPI_NOT_AVAILABLE);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, NULL), JVMPI_NOT_AVAILABLE);
    ck_assert_int_eq(pi->GetThreadStatus(ENV(1)), JVMPI_THREAD_RUNNABLE);
    ck_assert_int_eq(pi->ThreadHasRun(ENV(1)), JNI_FALSE);
    pi->SuspendThread(ENV(1));
    JNIEnv *list[1] = {ENV(1)};
    jint res[1] = {77};
    pi->SuspendThreadList(1, list, res);
    ck_assert_int_eq(res[0], 10);
    pi->ResumeThreadList(1, list, res);
    ck_assert_int_eq(res[0], 10);
    JVMPI_CallFrame frames[4];
    JVMPI_CallTrace tr = {ENV(1), 42, frames};
    pi->GetCallTrace(&tr, 4);
    ck_assert_int_eq(tr.num_frames, 0);
    ck_assert_int_eq(pi->CreateSystemThread("late", JVMPI_NORMAL_PRIORITY, dummy_thread), JNI_ERR);
    pi->RunGC();
    ck_assert_ptr_eq(pi->GetThreadLocalStorage(ENV_MAIN), &word);
    pi->RawMonitorEnter(mon);
    pi->RawMonitorExit(mon);
    ck_assert_int_ge(pi->GetCurrentThreadCpuTime(), 0);
    stderr_capture_end(&c);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: "), 0);
    ck_assert_int_eq(fake.suspend_calls + fake.resume_calls + fake.gc_calls, 0);
    ck_assert_ptr_null(fake.trace_handle);
    ck_assert_int_eq(fake.system_threads, 0);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* every carried event is zeroed beyond its member                           */
/* ------------------------------------------------------------------------ */

START_TEST(test_every_event_zeroed)
{
    static const jint on[] = {
        JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_CLASS_UNLOAD, JVMPI_EVENT_CLASS_LOAD_HOOK, JVMPI_EVENT_THREAD_START,
        JVMPI_EVENT_THREAD_END, JVMPI_EVENT_DATA_DUMP_REQUEST, JVMPI_EVENT_JVM_INIT_DONE,
        JVMPI_EVENT_JVM_SHUT_DOWN, JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER,
        JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED, JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT,
    };
    for (size_t k = 0; k < sizeof on / sizeof on[0]; k++) {
        ck_assert_int_eq(pi->EnableEvent(on[k], NULL), JVMPI_SUCCESS);
    }
    layer_class_defined(fake_class(CLASS_ID(1), "Z", 3, 2, 1));
    fake_thread(ENV_MAIN, THREAD_ID(0), "main");
    layer_vm_init(ENV_MAIN);                       /* CLASS_LOAD, THREAD_START, JVM_INIT_DONE */
    pi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, CLASS_ID(1));
    pi->RequestEvent(JVMPI_EVENT_THREAD_START, THREAD_ID(0));
    start_thread(ENV(1), THREAD_ID(1), "t1");
    end_thread(ENV(1), THREAD_ID(1));                    /* THREAD_START, THREAD_END */
    layer_data_dump_request();                     /* DATA_DUMP_REQUEST */
    unsigned char data[16] = "\xca\xfe\xba\xbe class bytes";
    unsigned char *nd = NULL;
    jint nl = 0;
    layer_class_file_hook(ENV_MAIN, data, sizeof data, &nd, &nl); /* CLASS_LOAD_HOOK */
    static char mon_name[] = "agent lock";
    JVMPI_RawMonitor mon = pi->RawMonitorCreate(mon_name); /* the agent's: its events are the agent's */
    dispatch_raw_monitor(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, mon_name, mon);
    dispatch_raw_monitor(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED, mon_name, mon);
    dispatch_raw_monitor(JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, mon_name, mon);
    int before_unload = nev();
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, delivery_thread, NULL), 0);
    layer_class_freed(CLASS_ID(1));                /* CLASS_UNLOAD */
    bool got = wait_events(before_unload + 1);
    layer_vm_death(ENV_MAIN);                      /* JVM_SHUT_DOWN, then the delivery thread stops */
    pthread_join(th, NULL);
    ck_assert(got);

    /* every type above was seen, and every event was zeroed */
    for (size_t k = 0; k < sizeof on / sizeof on[0]; k++) {
        bool seen = false;
        for (int i = 0; i < nev(); i++) {
            seen = seen || (evs[i].type & ~JVMPI_REQUESTED_EVENT) == on[k];
        }
        ck_assert_msg(seen, "no event of type %d was delivered", (int)on[k]);
    }
    ck_assert_int_eq(evs[nev() - 1].type, JVMPI_EVENT_JVM_SHUT_DOWN);
    assert_all_zeroed();
}
END_TEST

/* ------------------------------------------------------------------------ */
/* bad input never crashes                                                   */
/* ------------------------------------------------------------------------ */

START_TEST(test_call_trace)
{
    JVMPI_CallFrame frames[8];
    JVMPI_CallTrace tr;

    /* before the VM is up: nothing, but no crash */
    fake_thread(ENV_MAIN, THREAD_ID(0), "main");
    fake.trace_frames = 3;
    tr = (JVMPI_CallTrace){ENV_MAIN, 42, frames};
    pi->GetCallTrace(&tr, 8);
    ck_assert_int_eq(tr.num_frames, 0);

    layer_vm_init(ENV_MAIN);
    pi->GetCallTrace(NULL, 8);
    pi->GetCallTrace(NULL, 0);

    tr = (JVMPI_CallTrace){ENV_MAIN, 42, frames};
    pi->GetCallTrace(&tr, 0);
    ck_assert_int_eq(tr.num_frames, 0);
    tr = (JVMPI_CallTrace){ENV_MAIN, 42, frames};
    pi->GetCallTrace(&tr, -5);
    ck_assert_int_eq(tr.num_frames, 0);
    tr = (JVMPI_CallTrace){ENV_MAIN, 42, NULL};
    pi->GetCallTrace(&tr, 8);
    ck_assert_int_eq(tr.num_frames, 0);
    tr = (JVMPI_CallTrace){ENV(9), 42, frames};
    pi->GetCallTrace(&tr, 8);
    ck_assert_int_eq(tr.num_frames, 0);
    tr = (JVMPI_CallTrace){NULL, 42, frames};
    pi->GetCallTrace(&tr, 8);
    ck_assert_int_eq(tr.num_frames, 0);
    ck_assert_ptr_null(fake.trace_handle); /* the backend was never asked */

    /* the good case, for contrast */
    memset(frames, 0x77, sizeof frames);
    tr = (JVMPI_CallTrace){ENV_MAIN, 42, frames};
    pi->GetCallTrace(&tr, 8);
    ck_assert_int_eq(tr.num_frames, 3);
    ck_assert_ptr_eq(fake.trace_handle, ENV_MAIN);
    ck_assert_int_eq(frames[0].lineno, 100);
    ck_assert_ptr_eq(frames[2].method_id, (jmethodID)(uintptr_t)0x2002);
    /* depth smaller than the stack: only depth frames written */
    memset(frames, 0x77, sizeof frames);
    tr = (JVMPI_CallTrace){ENV_MAIN, 42, frames};
    pi->GetCallTrace(&tr, 2);
    ck_assert_int_eq(tr.num_frames, 2);
    ck_assert_int_eq(frames[2].lineno, 0x77777777);

    /* after the end */
    layer_stop();
    tr = (JVMPI_CallTrace){ENV_MAIN, 42, frames};
    pi->GetCallTrace(&tr, 8);
    ck_assert_int_eq(tr.num_frames, 0);
}
END_TEST

/* JDK 5.0 answered RUNNABLE for whatever it could not tell about, never
 * -1 (JVMPI_FAIL), whose bits an agent reads as SUSPENDED, INTERRUPTED
 * and every state at once. */
START_TEST(test_thread_status)
{
    fake_thread(ENV_MAIN, THREAD_ID(0), "main");
    ck_assert_int_eq(pi->GetThreadStatus(ENV_MAIN), JVMPI_THREAD_RUNNABLE); /* before VM init */
    go_live();
    fake.thread_status = JVMPI_THREAD_CONDVAR_WAIT | JVMPI_THREAD_SUSPENDED;
    ck_assert_int_eq(pi->GetThreadStatus(ENV_MAIN), JVMPI_THREAD_CONDVAR_WAIT | JVMPI_THREAD_SUSPENDED);
    ck_assert_int_eq(pi->GetThreadStatus(NULL), JVMPI_THREAD_RUNNABLE);
    ck_assert_int_eq(pi->GetThreadStatus(ENV(9)), JVMPI_THREAD_RUNNABLE);
    /* known, but not started yet or exiting as far as the VM goes */
    fake.thread_status = JVMPI_FAIL;
    ck_assert_int_eq(pi->GetThreadStatus(ENV_MAIN), JVMPI_THREAD_RUNNABLE);
    layer_thread_ended(ENV_MAIN);
    ck_assert_int_eq(pi->GetThreadStatus(ENV_MAIN), JVMPI_THREAD_RUNNABLE);
}
END_TEST

/* HotSpot 5.0: a thread suspended through JVMPI keeps the status it had at
 * the suspension, and the SUSPENDED bit is added; a set interrupt flag
 * shows as INTERRUPTED. */
START_TEST(test_thread_status_suspended)
{
    go_live();
    start_thread(ENV(1), THREAD_ID(1), "sampled");
    start_thread(ENV(2), THREAD_ID(2), "other");
    fake.thread_status = JVMPI_THREAD_CONDVAR_WAIT;
    ck_assert_int_eq(pi->GetThreadStatus(ENV(1)), JVMPI_THREAD_CONDVAR_WAIT);
    pi->SuspendThread(ENV(1));
    /* the VM's view moves on: a thread suspended in native code runs until it returns */
    fake.thread_status = JVMPI_THREAD_RUNNABLE | JVMPI_THREAD_SUSPENDED;
    ck_assert_int_eq(pi->GetThreadStatus(ENV(1)), JVMPI_THREAD_CONDVAR_WAIT | JVMPI_THREAD_SUSPENDED);
    fake.thread_status = JVMPI_THREAD_MONITOR_WAIT;
    ck_assert_int_eq(pi->GetThreadStatus(ENV(1)), JVMPI_THREAD_CONDVAR_WAIT | JVMPI_THREAD_SUSPENDED);
    fake.thread_status = JVMPI_THREAD_RUNNABLE | JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED;
    ck_assert_int_eq(pi->GetThreadStatus(ENV(1)),
                     JVMPI_THREAD_CONDVAR_WAIT | JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED);
    /* another thread is not suspended: the VM's view, bits as they are */
    fake.thread_status = JVMPI_THREAD_RUNNABLE | JVMPI_THREAD_INTERRUPTED;
    ck_assert_int_eq(pi->GetThreadStatus(ENV(2)), JVMPI_THREAD_RUNNABLE | JVMPI_THREAD_INTERRUPTED);
    /* a suspended thread the VM no longer runs: still as at its suspension */
    fake.thread_status = JVMPI_FAIL;
    ck_assert_int_eq(pi->GetThreadStatus(ENV(1)), JVMPI_THREAD_CONDVAR_WAIT | JVMPI_THREAD_SUSPENDED);
    pi->ResumeThread(ENV(1));
    fake.thread_status = JVMPI_THREAD_RUNNABLE;
    ck_assert_int_eq(pi->GetThreadStatus(ENV(1)), JVMPI_THREAD_RUNNABLE);

    /* the list functions: each thread as it was at its suspension */
    JNIEnv *list[2] = {ENV(1), ENV(2)};
    jint results[2] = {77, 77};
    fake.thread_status = JVMPI_THREAD_MONITOR_WAIT;
    pi->SuspendThreadList(2, list, results);
    ck_assert_int_eq(results[0], JVMPI_SUCCESS);
    ck_assert_int_eq(results[1], JVMPI_SUCCESS);
    fake.thread_status = JVMPI_THREAD_RUNNABLE | JVMPI_THREAD_SUSPENDED;
    ck_assert_int_eq(pi->GetThreadStatus(ENV(1)), JVMPI_THREAD_MONITOR_WAIT | JVMPI_THREAD_SUSPENDED);
    ck_assert_int_eq(pi->GetThreadStatus(ENV(2)), JVMPI_THREAD_MONITOR_WAIT | JVMPI_THREAD_SUSPENDED);
    pi->ResumeThreadList(2, list, results);
    fake.thread_status = JVMPI_THREAD_RUNNABLE;
    ck_assert_int_eq(pi->GetThreadStatus(ENV(1)), JVMPI_THREAD_RUNNABLE);
    ck_assert_int_eq(pi->GetThreadStatus(ENV(2)), JVMPI_THREAD_RUNNABLE);
}
END_TEST

/* A thread that has just ended (an agent's sampler racing thread churn)
 * gets the answers JVMPI allows and not one log line; a JNIEnv * that was
 * never a thread still gets one error line per call. */
START_TEST(test_ended_thread_quiet)
{
    go_live();
    start_thread(ENV(1), THREAD_ID(1), "brief");
    end_thread(ENV(1), THREAD_ID(1));
    fake.trace_frames = 3;
    JVMPI_CallFrame frames[4];
    JVMPI_CallTrace tr = {ENV(1), 42, frames};
    JNIEnv *list[1] = {ENV(1)};
    jint sres[1] = {77}, rres[1] = {77};
    int word;

    stderr_capture c;
    stderr_capture_begin(&c);
    jint status = pi->GetThreadStatus(ENV(1));
    pi->GetCallTrace(&tr, 4);
    pi->SetThreadLocalStorage(ENV(1), &word);
    void *tls = pi->GetThreadLocalStorage(ENV(1));
    jboolean ran = pi->ThreadHasRun(ENV(1));
    pi->SuspendThread(ENV(1));
    pi->ResumeThread(ENV(1));
    pi->SuspendThreadList(1, list, sres);
    pi->ResumeThreadList(1, list, rres);
    jobjectID obj = pi->GetThreadObject(ENV(1));
    stderr_capture_end(&c);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: "), 0);
    /* JDK 5.0's answers for a thread it no longer had: RUNNABLE, JVMDI's
     * INVALID_THREAD (10) in the lists */
    ck_assert_int_eq(status, JVMPI_THREAD_RUNNABLE);
    ck_assert_int_eq(tr.num_frames, 0);
    ck_assert_ptr_null(tls);
    ck_assert_int_eq(ran, JNI_FALSE);
    ck_assert_int_eq(sres[0], 10);
    ck_assert_int_eq(rres[0], 10);
    ck_assert_ptr_null(obj);
    ck_assert_ptr_null(fake.trace_handle);
    ck_assert_int_eq(fake.suspend_calls + fake.resume_calls, 0);

    /* never a thread: each call says so, but for the thread-local storage
     * ones, which are made from signal handlers */
    tr = (JVMPI_CallTrace){ENV(9), 42, frames};
    stderr_capture_begin(&c);
    pi->GetThreadStatus(ENV(9));
    pi->GetCallTrace(&tr, 4);
    pi->SetThreadLocalStorage(ENV(9), &word);
    pi->GetThreadLocalStorage(ENV(9));
    pi->ThreadHasRun(ENV(9));
    pi->SuspendThread(ENV(9));
    pi->ResumeThread(ENV(9));
    pi->GetThreadStatus(NULL);
    pi->GetThreadLocalStorage(NULL);
    stderr_capture_end(&c);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: "), 6);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: "), 6);

    /* the VM gives the JNIEnv to a new thread: that one answers */
    start_thread(ENV(1), THREAD_ID(3), "reuser");
    fake.thread_status = JVMPI_THREAD_CONDVAR_WAIT;
    ck_assert_int_eq(pi->GetThreadStatus(ENV(1)), JVMPI_THREAD_CONDVAR_WAIT);
    ck_assert_ptr_eq(pi->GetThreadObject(ENV(1)), THREAD_ID(3));
    tr = (JVMPI_CallTrace){ENV(1), 42, frames};
    pi->GetCallTrace(&tr, 4);
    ck_assert_int_eq(tr.num_frames, 3);
}
END_TEST

START_TEST(test_suspend_resume_bad)
{
    go_live();
    start_thread(ENV(1), THREAD_ID(1), "other");
    pi->SuspendThread(NULL);
    pi->SuspendThread(ENV(9));
    pi->ResumeThread(NULL);
    pi->ResumeThread(ENV(9));
    ck_assert_int_eq(fake.suspend_calls, 0);
    ck_assert_int_eq(fake.resume_calls, 0);

    jint results[3] = {77, 77, 77};
    pi->SuspendThreadList(2, NULL, results);
    pi->ResumeThreadList(2, NULL, results);
    ck_assert_int_eq(results[0], 77);
    JNIEnv *list[3] = {ENV(1), ENV(9), NULL};
    pi->SuspendThreadList(3, list, NULL);
    pi->SuspendThreadList(-1, list, results);
    pi->SuspendThreadList(0, NULL, NULL);
    pi->ResumeThreadList(0, NULL, NULL);
    ck_assert_int_eq(results[0], 77);
    ck_assert_int_eq(fake.suspend_calls, 0);

    /* a list with one known thread: only it is suspended; the others get
     * JVMDI's INVALID_THREAD (10), as on JDK 5.0 */
    pi->SuspendThreadList(3, list, results);
    ck_assert_int_eq(results[0], JVMPI_SUCCESS);
    ck_assert_int_eq(results[1], 10);
    ck_assert_int_eq(results[2], 10);
    ck_assert_int_eq(fake.suspend_calls, 1);
    ck_assert_ptr_eq(fake.suspend_handle, ENV(1));
    results[0] = results[1] = results[2] = 77;
    pi->ResumeThreadList(3, list, results);
    ck_assert_int_eq(results[0], JVMPI_SUCCESS);
    ck_assert_int_eq(results[1], 10);
    ck_assert_int_eq(results[2], 10);
    ck_assert_int_eq(fake.resume_calls, 1);

    pi->SuspendThread(ENV(1));
    pi->ResumeThread(ENV(1));
    ck_assert_int_eq(fake.suspend_calls, 2);
    ck_assert_int_eq(fake.resume_calls, 2);
}
END_TEST

/* A thread the VM starts for itself, as the backend records the layer's own. */
static void do_start_internal(void *arg)
{
    java_thread_job *j = arg;
    seam_thread_info info;
    memset(&info, 0, sizeof info);
    info.env = j->env;
    info.id = j->id;
    info.handle = j->env;
    info.name = strdup(j->name);
    info.internal = true;
    layer_thread_started(&info);
}

/* JDK 5.0's SuspendThread and the list functions: the caller is never
 * suspended (HPROF suspends every thread on its list, itself included, and
 * must go on to resume them), nor a thread twice, nor one the VM does not
 * run; results are JVMDI's codes: 0, INVALID_THREAD (10), THREAD_SUSPENDED
 * (14).  A hidden thread answers 0 and runs on. */
START_TEST(test_suspend_as_jdk5)
{
    go_live();
    start_thread(ENV(1), THREAD_ID(1), "one");
    start_thread(ENV(2), THREAD_ID(2), "two");
    start_thread(ENV(3), THREAD_ID(3), "gone");
    end_thread(ENV(3), THREAD_ID(3));
    java_thread_job hidden = {ENV(5), THREAD_ID(5), "hidden", do_start_internal};
    run_as(&hidden);

    pi->SuspendThread(ENV_MAIN); /* the caller: returns at once */
    ck_assert_int_eq(fake.suspend_calls, 0);
    pi->SuspendThread(ENV(1));
    pi->SuspendThread(ENV(1)); /* again: nothing */
    ck_assert_int_eq(fake.suspend_calls, 1);

    JNIEnv *list[7] = {ENV(1), ENV(2), ENV_MAIN, NULL, ENV(9), ENV(3), ENV(5)};
    jint results[7] = {77, 77, 77, 77, 77, 77, 77};
    pi->SuspendThreadList(7, list, results);
    static const jint want[7] = {14, 0, 10, 10, 10, 10, 0};
    for (int i = 0; i < 7; i++) {
        ck_assert_msg(results[i] == want[i], "SuspendThreadList: results[%d] is %d, not %d", i, (int)results[i],
                      (int)want[i]);
    }
    ck_assert_int_eq(fake.suspend_calls, 2);
    ck_assert_ptr_eq(fake.suspend_handle, ENV(2));

    /* not started yet, or exiting, as the VM sees it */
    start_thread(ENV(4), THREAD_ID(4), "leaving");
    fake.thread_status = JVMPI_FAIL;
    JNIEnv *leaving = ENV(4);
    jint r = 77;
    pi->SuspendThreadList(1, &leaving, &r);
    ck_assert_int_eq(r, 10);
    pi->SuspendThread(ENV(4));
    ck_assert_int_eq(fake.suspend_calls, 2);
    fake.thread_status = JVMPI_THREAD_RUNNABLE;

    /* resumed: whatever JVMPI suspended; 0 for every live thread, 10 else */
    JNIEnv *rlist[5] = {ENV(1), ENV(2), ENV_MAIN, NULL, ENV(9)};
    pi->ResumeThreadList(5, rlist, results);
    static const jint rwant[5] = {0, 0, 0, 10, 10};
    for (int i = 0; i < 5; i++) {
        ck_assert_msg(results[i] == rwant[i], "ResumeThreadList: results[%d] is %d, not %d", i, (int)results[i],
                      (int)rwant[i]);
    }
    ck_assert_int_eq(fake.resume_calls, 2);
    /* and can be suspended again */
    pi->SuspendThreadList(1, list, results);
    ck_assert_int_eq(results[0], 0);
    ck_assert_int_eq(fake.suspend_calls, 3);
    pi->ResumeThread(ENV(1));
    ck_assert_int_eq(fake.resume_calls, 3);
}
END_TEST

/* JDK 5.0 could not tell whether a thread had run since its last
 * suspension: it said yes for every live thread, CPU used or not. */
START_TEST(test_thread_has_run)
{
    go_live();
    start_thread(ENV(1), THREAD_ID(1), "sampled");
    ck_assert_int_eq(pi->ThreadHasRun(ENV(1)), JNI_TRUE);
    fake.cpu_time = 1000;
    pi->SuspendThread(ENV(1));
    ck_assert_int_eq(pi->ThreadHasRun(ENV(1)), JNI_TRUE);
    pi->ResumeThread(ENV(1));
    /* no CPU used between two suspensions: yes all the same */
    pi->SuspendThread(ENV(1));
    ck_assert_int_eq(pi->ThreadHasRun(ENV(1)), JNI_TRUE);
    pi->ResumeThread(ENV(1));
    ck_assert_int_eq(pi->ThreadHasRun(ENV_MAIN), JNI_TRUE);

    ck_assert_int_eq(pi->ThreadHasRun(NULL), JNI_FALSE);
    ck_assert_int_eq(pi->ThreadHasRun(ENV(9)), JNI_FALSE);
    end_thread(ENV(1), THREAD_ID(1));
    ck_assert_int_eq(pi->ThreadHasRun(ENV(1)), JNI_FALSE);
}
END_TEST

/* A virtual thread (JDK 21+): recorded on the carrier that starts it, it
 * gets a handle of its own; while mounted, whatever its carrier sends
 * carries that handle, and its storage and status follow it to another
 * carrier. */
static thread_rec *vt;
static jobject vt_ref(int i) { return (jobject)(uintptr_t)(0x7000 + i); }

static void vt_on_first_carrier(void *arg)
{
    (void)arg;
    seam_thread_info info;
    memset(&info, 0, sizeof info);
    info.id = THREAD_ID(6);
    info.handle = (void *)(uintptr_t)0x6666;
    info.name = strdup("vt");
    info.group_name = strdup("VirtualThreads");
    info.is_virtual = true;
    vt = layer_vthread_started(&info);
    ck_assert_ptr_nonnull(vt);
    layer_jni_ref(ENV(5), false, vt_ref(1), NULL); /* while it runs */
    pi->SetThreadLocalStorage(vt->info.env, (void *)(uintptr_t)0xfeed);
    layer_vthread_unmount();
    layer_jni_ref(ENV(5), false, vt_ref(2), NULL); /* the carrier's own */
}

static jlong vt_cpu_before_park;

static void burn_cpu_ms(long ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    do {
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

static void vt_on_second_carrier(void *arg)
{
    (void)arg;
    layer_vthread_mount(vt);
    layer_jni_ref(ENV(7), false, vt_ref(3), NULL);
    ck_assert_ptr_eq(pi->GetThreadLocalStorage(vt->info.env), (void *)(uintptr_t)0xfeed);
    /* its CPU time grows while it runs ... */
    jlong t0 = pi->GetCurrentThreadCpuTime();
    burn_cpu_ms(20);
    vt_cpu_before_park = pi->GetCurrentThreadCpuTime();
    ck_assert_int_ge(vt_cpu_before_park - t0, 15 * 1000000LL);
    layer_vthread_unmount();
    burn_cpu_ms(40); /* ... not while the carrier runs something else */
}

static void vt_ends_on_second_carrier(void *arg)
{
    (void)arg;
    layer_vthread_mount(vt);
    jlong after_park = pi->GetCurrentThreadCpuTime();
    ck_assert_int_ge(after_park, vt_cpu_before_park);
    ck_assert_int_lt(after_park - vt_cpu_before_park, 30 * 1000000LL);
    layer_vthread_ended(vt);
    layer_jni_ref(ENV(7), false, vt_ref(4), NULL);
}

START_TEST(test_virtual_thread)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_THREAD_END, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_JNI_GLOBALREF_FREE, NULL), JVMPI_SUCCESS);
    go_live();
    start_thread(ENV(5), THREAD_ID(5), "carrier-1");
    start_thread(ENV(7), THREAD_ID(7), "carrier-2");
    atomic_store(&n_evs, 0);

    java_thread_job first = {ENV(5), THREAD_ID(5), NULL, vt_on_first_carrier};
    run_as(&first);
    ck_assert_int_eq(nev(), 3);
    JNIEnv *handle = vt->info.env;
    ck_assert_ptr_nonnull(handle);
    ck_assert(handle != ENV(5) && handle != ENV(7));
    ck_assert_int_eq(evs[0].type, JVMPI_EVENT_THREAD_START);
    ck_assert_str_eq(evs[0].name, "vt");
    ck_assert_ptr_eq(evs[0].thread_env, handle);
    ck_assert_ptr_eq(evs[0].env_id, handle);
    ck_assert_int_eq(evs[1].type, JVMPI_EVENT_JNI_GLOBALREF_FREE);
    ck_assert_ptr_eq(evs[1].env_id, handle);
    ck_assert_ptr_eq(evs[2].env_id, ENV(5));
    ck_assert_ptr_null(pi->GetThreadLocalStorage(ENV(5)));
    ck_assert_ptr_eq(pi->GetThreadObject(handle), THREAD_ID(6));

    /* unmounted: not running; then it runs on another carrier */
    fake.thread_status = JVMPI_THREAD_CONDVAR_WAIT;
    ck_assert_int_eq(pi->GetThreadStatus(handle), JVMPI_THREAD_CONDVAR_WAIT);
    pi->SuspendThread(handle);
    ck_assert_ptr_eq(fake.suspend_handle, (void *)(uintptr_t)0x6666);
    ck_assert_int_eq(pi->ThreadHasRun(handle), JNI_TRUE); /* live: JDK 5.0 said so for every live thread */
    pi->ResumeThread(handle);
    java_thread_job second = {ENV(7), THREAD_ID(7), NULL, vt_on_second_carrier};
    run_as(&second);
    pi->SuspendThread(handle);
    ck_assert_int_eq(pi->ThreadHasRun(handle), JNI_TRUE);
    pi->ResumeThread(handle);
    ck_assert_int_eq(nev(), 4);
    ck_assert_ptr_eq(evs[3].env_id, handle);

    java_thread_job last = {ENV(7), THREAD_ID(7), NULL, vt_ends_on_second_carrier};
    run_as(&last);
    ck_assert_int_eq(nev(), 6);
    ck_assert_int_eq(evs[4].type, JVMPI_EVENT_THREAD_END);
    ck_assert_ptr_eq(evs[4].env_id, handle);
    ck_assert_ptr_eq(evs[4].thread_env, handle);
    ck_assert_ptr_eq(evs[5].env_id, ENV(7)); /* the carrier is itself again */
    ck_assert_int_eq(pi->ThreadHasRun(handle), JNI_FALSE); /* ended */
}
END_TEST

START_TEST(test_create_system_thread)
{
    fake_thread(ENV_MAIN, THREAD_ID(0), "main");
    /* in JVM_OnLoad */
    ck_assert_int_eq(pi->CreateSystemThread("early", JVMPI_NORMAL_PRIORITY, dummy_thread), JNI_ERR);
    ck_assert_int_eq(fake.system_threads, 0);

    layer_vm_init(ENV_MAIN);
    ck_assert_int_eq(pi->CreateSystemThread("t", JVMPI_MAXIMUM_PRIORITY, dummy_thread), JNI_OK);
    ck_assert_int_eq(fake.system_threads, 1);
    ck_assert_int_eq(fake.system_thread_priority, JVMPI_MAXIMUM_PRIORITY);
    ck_assert_ptr_nonnull(fake.system_thread_fn);
    ck_assert_int_eq(pi->CreateSystemThread("t", JVMPI_MINIMUM_PRIORITY, dummy_thread), JNI_OK);
    ck_assert_int_eq(pi->CreateSystemThread(NULL, JVMPI_NORMAL_PRIORITY, dummy_thread), JNI_OK);
    ck_assert_int_eq(fake.system_threads, 3);

    static const jint bad_prio[] = {0, -1, 11, 1000};
    for (size_t k = 0; k < sizeof bad_prio / sizeof bad_prio[0]; k++) {
        ck_assert_int_eq(pi->CreateSystemThread("bad", bad_prio[k], dummy_thread), JNI_ERR);
    }
    ck_assert_int_eq(pi->CreateSystemThread("nofn", JVMPI_NORMAL_PRIORITY, NULL), JNI_ERR);
    /* GC disabled: the spec forbids it */
    pi->DisableGC();
    ck_assert_int_eq(pi->CreateSystemThread("gc", JVMPI_NORMAL_PRIORITY, dummy_thread), JNI_ERR);
    pi->EnableGC();
    /* a thread the VM does not know */
    fake_set_thread_env(NULL);
    ck_assert_int_eq(pi->CreateSystemThread("detached", JVMPI_NORMAL_PRIORITY, dummy_thread), JNI_ERR);
    fake_set_thread_env(ENV_MAIN);
    ck_assert_int_eq(fake.system_threads, 3);

    layer_stop();
    ck_assert_int_eq(pi->CreateSystemThread("late", JVMPI_NORMAL_PRIORITY, dummy_thread), JNI_ERR);
    ck_assert_int_eq(fake.system_threads, 3);
}
END_TEST

START_TEST(test_gc_control)
{
    go_live();
    pi->RunGC();
    ck_assert_int_eq(fake.gc_calls, 1);
    pi->DisableGC();
    pi->DisableGC();
    ck_assert_int_eq(interface_gc_disabled_depth(), 2);
    pi->RunGC();
    ck_assert_int_eq(fake.gc_calls, 1);
    pi->EnableGC();
    ck_assert_int_eq(interface_gc_disabled_depth(), 1);
    pi->RunGC();
    ck_assert_int_eq(fake.gc_calls, 1);
    pi->EnableGC();
    ck_assert_int_eq(interface_gc_disabled_depth(), 0);
    pi->RunGC();
    ck_assert_int_eq(fake.gc_calls, 2);
    /* one EnableGC too many does not leave a credit for later */
    pi->EnableGC();
    ck_assert_int_eq(interface_gc_disabled_depth(), 0);
    pi->DisableGC();
    pi->RunGC();
    ck_assert_int_eq(fake.gc_calls, 2);
    pi->EnableGC();
    pi->RunGC();
    ck_assert_int_eq(fake.gc_calls, 3);
}
END_TEST

typedef struct {
    void *own;
    void *seen_main;
} tls_job;

static void *tls_worker(void *arg)
{
    tls_job *j = arg;
    fake_set_thread_env(ENV(7));
    fake_thread(ENV(7), THREAD_ID(7), "tls-worker");
    pi->SetThreadLocalStorage(ENV(7), j->own);
    j->seen_main = pi->GetThreadLocalStorage(ENV_MAIN);
    return NULL;
}

START_TEST(test_thread_local_storage)
{
    go_live();
    start_thread(ENV(1), THREAD_ID(1), "other");
    int a, b, c;
    ck_assert_ptr_null(pi->GetThreadLocalStorage(ENV_MAIN));
    pi->SetThreadLocalStorage(ENV_MAIN, &a);
    pi->SetThreadLocalStorage(ENV(1), &b);
    ck_assert_ptr_eq(pi->GetThreadLocalStorage(ENV_MAIN), &a);
    ck_assert_ptr_eq(pi->GetThreadLocalStorage(ENV(1)), &b);
    pi->SetThreadLocalStorage(ENV_MAIN, NULL);
    ck_assert_ptr_null(pi->GetThreadLocalStorage(ENV_MAIN));
    pi->SetThreadLocalStorage(ENV_MAIN, &a);

    tls_job j = {&c, NULL};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, tls_worker, &j), 0);
    pthread_join(th, NULL);
    ck_assert_ptr_eq(j.seen_main, &a);
    ck_assert_ptr_eq(pi->GetThreadLocalStorage(ENV(7)), &c);

    /* unknown threads: NULL, and a set is ignored */
    pi->SetThreadLocalStorage(ENV(9), &a);
    ck_assert_ptr_null(pi->GetThreadLocalStorage(ENV(9)));
    pi->SetThreadLocalStorage(NULL, &a);
    ck_assert_ptr_null(pi->GetThreadLocalStorage(NULL));
}
END_TEST

START_TEST(test_ids_functions)
{
    go_live();
    ck_assert_ptr_eq(pi->GetThreadObject(ENV_MAIN), THREAD_ID(0));
    ck_assert_ptr_null(pi->GetThreadObject(ENV(9)));
    ck_assert_ptr_null(pi->GetThreadObject(NULL));
    fake.method_class = CLASS_ID(4);
    ck_assert_ptr_eq(pi->GetMethodClass((jmethodID)(uintptr_t)0x1000), CLASS_ID(4));
    ck_assert_ptr_null(pi->GetMethodClass(NULL));
    /* An ID the backend finds no method behind never reaches the backend's
     * lookup (JVM TI crashes on some). */
    fake.bad_method = (jmethodID)(uintptr_t)0x2000;
    ck_assert_ptr_null(pi->GetMethodClass(fake.bad_method));
    ck_assert_ptr_null(pi->jobjectID2jobject(NULL));
    ck_assert_ptr_null(pi->jobject2jobjectID(NULL));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* ProfilerExit                                                              */
/* ------------------------------------------------------------------------ */

START_TEST(test_profiler_exit)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_DATA_DUMP_REQUEST, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_CLASS_LOAD_HOOK, NULL), JVMPI_SUCCESS);
    go_live();
    layer_data_dump_request();
    ck_assert_int_eq(nev(), 1);
    layer_class_defined(fake_class(CLASS_ID(1), "A", 0, 0, 0));

    pi->ProfilerExit(3);
    ck_assert_int_eq(fake.halt_calls, 1);
    ck_assert_int_eq(fake.halt_code, 3);
    ck_assert_int_eq(layer_phase(), LAYER_DEAD);

    /* the fake halt returns; nothing more reaches the agent */
    layer_data_dump_request();
    start_thread(ENV(4), THREAD_ID(4), "after-exit");
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, CLASS_ID(1)), JVMPI_NOT_AVAILABLE);
    unsigned char data[4] = {1, 2, 3, 4};
    unsigned char *nd = (unsigned char *)0x1;
    jint nl = -7;
    layer_class_file_hook(ENV_MAIN, data, 4, &nd, &nl);
    ck_assert_ptr_eq(nd, (unsigned char *)0x1);
    layer_vm_death(ENV_MAIN);
    ck_assert_int_eq(nev(), 1);
    ck_assert_int_eq(fake.halt_calls, 1);
}
END_TEST

START_TEST(test_profiler_exit_zero)
{
    go_live();
    pi->ProfilerExit(0);
    ck_assert_int_eq(fake.halt_calls, 1);
    ck_assert_int_eq(fake.halt_code, 0);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* GetEnv                                                                    */
/* ------------------------------------------------------------------------ */

START_TEST(test_interface_versions)
{
    /* the table layout legacy binaries index into: 8 + 29 pointers */
    ck_assert_uint_eq(sizeof(JVMPI_Interface), 240);
    JVMPI_Interface *v1 = layer_interface_for(JVMPI_VERSION_1, NULL);
    JVMPI_Interface *v11 = layer_interface_for(JVMPI_VERSION_1_1, NULL);
    JVMPI_Interface *v12 = layer_interface_for(JVMPI_VERSION_1_2, NULL);
    ck_assert_ptr_nonnull(v1);
    ck_assert_ptr_eq(v1, v11);
    ck_assert_ptr_eq(v1, v12);
    ck_assert_ptr_eq(v1, interface_table());
    /* HotSpot 5.0 answered every JVMPI version with its 1.2 table */
    ck_assert_int_eq(v1->version, JVMPI_VERSION_1_2);

    /* every VM-side slot filled (NotifyEvent is the agent's) */
    void *const *slot = (void *const *)((const char *)v1 + 8);
    for (int i = 1; i < 29; i++) {
        ck_assert_msg(slot[i] != NULL, "function slot %d (offset %d) is NULL", i, 8 + 8 * i);
    }

    static const jint others[] = {0, -1, 0x00010002 /* JNI_VERSION_1_2 */, 0x30010000 /* a JVM TI version */,
                                  0x10000000, 0x10000004, 0x20000001};
    for (size_t k = 0; k < sizeof others / sizeof others[0]; k++) {
        ck_assert_msg(layer_interface_for(others[k], NULL) == NULL, "version 0x%x answered", (unsigned)others[k]);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* CLASS_LOAD_HOOK                                                           */
/* ------------------------------------------------------------------------ */

static unsigned char class_bytes[24] = "\xca\xfe\xba\xbe\0\0\0\x34 some class";
static unsigned char *const UNTOUCHED = (unsigned char *)(uintptr_t)0x5151;

START_TEST(test_hook_rewrite)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_CLASS_LOAD_HOOK, NULL), JVMPI_SUCCESS);
    ck_assert(fake.source_on[SEAM_SRC_CLASS_FILE_HOOK]);
    go_live();
    hook_how = HOOK_REWRITE;
    unsigned char *nd = UNTOUCHED;
    jint nl = -7;
    layer_class_file_hook(ENV_MAIN, class_bytes, sizeof class_bytes, &nd, &nl);
    ck_assert_int_eq(nev(), 1);
    ck_assert_int_eq(evs[0].type, JVMPI_EVENT_CLASS_LOAD_HOOK);
    ck_assert_ptr_eq(evs[0].env_id, ENV_MAIN);
    ck_assert(hook_saw_preset);
    ck_assert(hook_saw_malloc_f);
    ck_assert_int_eq(hook_seen_len, sizeof class_bytes);
    ck_assert(memcmp(hook_seen, class_bytes, sizeof class_bytes) == 0);
    ck_assert_ptr_eq(nd, hook_agent_buffer);
    ck_assert_int_eq(nl, sizeof class_bytes + 4);
    ck_assert(memcmp(nd + sizeof class_bytes, "TAIL", 4) == 0);
    /* the layer's own copy went back; the agent's buffer is now the VM's */
    ck_assert_int_eq(fake.vm_allocs, 2);
    ck_assert_int_eq(fake.vm_frees, 1);
    seam_vm_free(nd);
    assert_all_zeroed();
}
END_TEST

START_TEST(test_hook_left_alone)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_CLASS_LOAD_HOOK, NULL), JVMPI_SUCCESS);
    go_live();
    unsigned char before[sizeof class_bytes];
    memcpy(before, class_bytes, sizeof before);
    unsigned char *nd = UNTOUCHED;
    jint nl = -7;
    hook_how = HOOK_LEAVE;
    layer_class_file_hook(ENV_MAIN, class_bytes, sizeof class_bytes, &nd, &nl);
    ck_assert_int_eq(nev(), 1);
    ck_assert_ptr_eq(nd, UNTOUCHED);
    ck_assert_int_eq(nl, -7);
    ck_assert_int_eq(fake.vm_allocs, fake.vm_frees);

    /* an agent that sets new_class_data to NULL: the class stays as it was */
    hook_how = HOOK_NULL;
    layer_class_file_hook(ENV_MAIN, class_bytes, sizeof class_bytes, &nd, &nl);
    ck_assert_int_eq(nev(), 2);
    ck_assert_ptr_eq(nd, UNTOUCHED);
    ck_assert_int_eq(nl, -7);
    ck_assert_int_eq(fake.vm_allocs, fake.vm_frees);
    ck_assert(memcmp(before, class_bytes, sizeof before) == 0);
    assert_all_zeroed();
}
END_TEST

/* Agents of the time edited class_data in place and left new_class_data
 * pointing at it. */
START_TEST(test_hook_in_place)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_CLASS_LOAD_HOOK, NULL), JVMPI_SUCCESS);
    go_live();
    unsigned char before[sizeof class_bytes];
    memcpy(before, class_bytes, sizeof before);
    unsigned char *nd = UNTOUCHED;
    jint nl = -7;
    hook_how = HOOK_IN_PLACE;
    layer_class_file_hook(ENV_MAIN, class_bytes, sizeof class_bytes, &nd, &nl);
    ck_assert_ptr_ne(nd, UNTOUCHED);
    ck_assert_ptr_ne(nd, class_bytes);
    ck_assert_int_eq(nl, sizeof class_bytes);
    ck_assert_int_eq(nd[0], 'X');
    ck_assert(memcmp(nd + 1, class_bytes + 1, sizeof class_bytes - 1) == 0);
    /* the VM's own buffer was not written */
    ck_assert(memcmp(before, class_bytes, sizeof before) == 0);
    ck_assert_int_eq(fake.vm_allocs, 1);
    ck_assert_int_eq(fake.vm_frees, 0);
    seam_vm_free(nd);
}
END_TEST

START_TEST(test_hook_disabled)
{
    go_live();
    unsigned char *nd = UNTOUCHED;
    jint nl = -7;
    layer_class_file_hook(ENV_MAIN, class_bytes, sizeof class_bytes, &nd, &nl);
    ck_assert_int_eq(nev(), 0);
    ck_assert_ptr_eq(nd, UNTOUCHED);
    ck_assert_int_eq(fake.vm_allocs, 0);

    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_CLASS_LOAD_HOOK, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->DisableEvent(JVMPI_EVENT_CLASS_LOAD_HOOK, NULL), JVMPI_SUCCESS);
    ck_assert(!fake.source_on[SEAM_SRC_CLASS_FILE_HOOK]);
    layer_class_file_hook(ENV_MAIN, class_bytes, sizeof class_bytes, &nd, &nl);
    ck_assert_int_eq(nev(), 0);
    ck_assert_ptr_eq(nd, UNTOUCHED);
}
END_TEST

/* ------------------------------------------------------------------------ */

static void run_gc_at_shutdown(void) { pi->RunGC(); }

/* A signal may stop the VM while it starts: JVM_SHUT_DOWN then comes with
 * no JVM_INIT_DONE before it.  HPROF collects there (RunGC), as the JVMPI
 * specification lets it: no error line, no collection. */
START_TEST(test_shut_down_before_init_done_is_quiet)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL), JVMPI_SUCCESS);
    at_shutdown = run_gc_at_shutdown;
    stderr_capture c;
    stderr_capture_begin(&c);
    layer_vm_death(ENV_MAIN);
    stderr_capture_end(&c);
    ck_assert_int_eq(nev(), 1);
    ck_assert_int_eq(evs[0].type, JVMPI_EVENT_JVM_SHUT_DOWN);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: "), 0);
    ck_assert_int_eq(fake.gc_calls, 0);
}
END_TEST

static Suite *interface_suite(void)
{
    Suite *s = suite_create("interface");
    TCase *tc;

    tc = tcase_create("request");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_request_class_load);
    tcase_add_test(tc, test_request_thread_start);
    tcase_add_test(tc, test_request_other_types);
    tcase_add_test(tc, test_class_unload_delivery);
    tcase_add_test(tc, test_class_unload_waits_for_enable_gc);
    suite_add_tcase(s, tc);

    tc = tcase_create("startup");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_startup_replay_order);
    tcase_add_test(tc, test_startup_only_what_is_enabled);
    tcase_add_test(tc, test_create_system_thread_in_init_done_handler);
    tcase_add_test(tc, test_thread_seen_before_init);
    tcase_add_test(tc, test_shutdown_from_destroy_thread);
    tcase_add_test(tc, test_no_event_after_shut_down);
    tcase_add_test(tc, test_request_under_way_answered_after_shut_down);
    tcase_add_test(tc, test_refused_definition_still_owed);
    tcase_add_test(tc, test_calls_after_shut_down);
    tcase_add_test(tc, test_shut_down_waits_for_open_window);
    tcase_add_test(tc, test_every_event_zeroed);
    suite_add_tcase(s, tc);

    tc = tcase_create("functions");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_call_trace);
    tcase_add_test(tc, test_thread_status);
    tcase_add_test(tc, test_thread_status_suspended);
    tcase_add_test(tc, test_ended_thread_quiet);
    tcase_add_test(tc, test_suspend_resume_bad);
    tcase_add_test(tc, test_suspend_as_jdk5);
    tcase_add_test(tc, test_thread_has_run);
    tcase_add_test(tc, test_virtual_thread);
    tcase_add_test(tc, test_create_system_thread);
    tcase_add_test(tc, test_gc_control);
    tcase_add_test(tc, test_thread_local_storage);
    tcase_add_test(tc, test_ids_functions);
    tcase_add_test(tc, test_profiler_exit);
    tcase_add_test(tc, test_profiler_exit_zero);
    tcase_add_test(tc, test_interface_versions);
    suite_add_tcase(s, tc);

    tc = tcase_create("hook");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_hook_rewrite);
    tcase_add_test(tc, test_hook_left_alone);
    tcase_add_test(tc, test_hook_in_place);
    tcase_add_test(tc, test_hook_disabled);
    tcase_add_test(tc, test_shut_down_before_init_done_is_quiet);
    suite_add_tcase(s, tc);

    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(interface_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
