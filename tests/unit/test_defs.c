/*
 * test_defs.c - the JVMPI specification's defining events (jvmpi/defs.c):
 * no event names a thread, class, method or object before the event that
 * defines it, and a class ID is the ID of its java.lang.Class object.
 *
 * Every test records what the agent saw, in order, and checks that each
 * event came after the definition of everything it names.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "fake_backend.h"
#include "gc.h"
#include "interface.h"
#include "layer.h"
#include "threads.h"

static char env_tokens[4];
#define ENV_MAIN ((JNIEnv *)(void *)&env_tokens[0])
#define ENV_JIT ((JNIEnv *)(void *)&env_tokens[1])

static JVMPI_Interface *pi;

typedef struct {
    jint type;
    JNIEnv *env_id;
    jobjectID id, class_id;
    jint is_array, size;
    jmethodID method;
} rec;

#define MAX_RECS 64
static rec recs[MAX_RECS];
static atomic_int n_recs;

static void record(JVMPI_Event *ev)
{
    int i = atomic_fetch_add(&n_recs, 1);
    ck_assert_int_lt(i, MAX_RECS);
    rec *r = &recs[i];
    memset(r, 0, sizeof *r);
    r->type = ev->event_type;
    r->env_id = ev->env_id;
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        r->id = ev->u.obj_alloc.obj_id;
        r->class_id = ev->u.obj_alloc.class_id;
        r->is_array = ev->u.obj_alloc.is_array;
        r->size = ev->u.obj_alloc.size;
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
    case JVMPI_EVENT_COMPILED_METHOD_LOAD:
        r->method = ev->u.compiled_method_load.method_id;
        break;
    case JVMPI_EVENT_METHOD_ENTRY2:
        r->method = ev->u.method_entry2.method_id;
        r->id = ev->u.method_entry2.obj_id;
        break;
    default:
        break;
    }
}

static int nrec(void) { return atomic_load(&n_recs); }

static jobjectID class_class, string_class;

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
    fake_set_thread_env(ENV_MAIN);
    class_class = seam_id_from_tag(ids_next_class(0));
    string_class = seam_id_from_tag(ids_next_class(0));
    fake.class_class_id = class_class;
}

static void teardown(void) { layer_reset(); }

static void enable(jint type) { ck_assert_int_eq(pi->EnableEvent(type, NULL), JVMPI_SUCCESS); }

static void define(jobjectID id, const char *name, jlong object_size)
{
    seam_class_info *c = fake_class(id, name, 1, 0, 0);
    c->object_size = object_size;
    layer_class_defined(c);
}

/* The VM starts with java.lang.Class and java.lang.String loaded; keep:
 * whether the start-up replay's events stay recorded. */
static void go_live_keeping(bool keep)
{
    fake_thread(ENV_MAIN, seam_id_from_tag(ids_next_object(96, 0)), "main");
    define(class_class, "java.lang.Class", 160);
    define(string_class, "java.lang.String", 520);
    layer_vm_init(ENV_MAIN);
    if (!keep) {
        atomic_store(&n_recs, 0);
    }
}

static void go_live(void) { go_live_keeping(false); }

static int find(jint type, jobjectID id)
{
    for (int i = 0; i < nrec(); i++) {
        if (recs[i].type == type && recs[i].id == id) {
            return i;
        }
    }
    return -1;
}

/* The JVMPI specification: a class is the object ID of its java.lang.Class
 * object, and RequestEvent(OBJECT_ALLOC) answers for any object ID. */
START_TEST(test_request_object_alloc_of_a_class)
{
    go_live();
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, string_class), JVMPI_SUCCESS);
    ck_assert_int_eq(nrec(), 1);
    ck_assert_int_eq(recs[0].type, JVMPI_EVENT_OBJECT_ALLOC | JVMPI_REQUESTED_EVENT);
    ck_assert_ptr_eq(recs[0].id, string_class);
    ck_assert_ptr_eq(recs[0].class_id, class_class);
    ck_assert_int_eq(recs[0].is_array, JVMPI_NORMAL_OBJECT);
    ck_assert_int_eq(recs[0].size, 520);
    /* java.lang.Class's own object names no class, as on HotSpot 5.0: an
     * agent that requests every unknown class_id's OBJECT_ALLOC would
     * otherwise request this one again from its own handler, without end. */
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, class_class), JVMPI_SUCCESS);
    ck_assert_ptr_eq(recs[1].id, class_class);
    ck_assert_ptr_null(recs[1].class_id);
    ck_assert_int_eq(recs[1].is_array, JVMPI_NORMAL_OBJECT);
    ck_assert_int_eq(recs[1].size, 160);
}
END_TEST

/* The start-up replay lists Class objects as instances of java.lang.Class
 * (as the heap holds them): every one names java.lang.Class, but
 * java.lang.Class's own, which names no class and comes only on request, as
 * on HotSpot 5.0 (a leak finder requests the CLASS_LOAD of every object's
 * class, and must not meet a NULL unasked). */
START_TEST(test_replayed_class_class_names_no_class)
{
    fake.objects[0] = (seam_object_info){class_class, class_class, JVMPI_NORMAL_OBJECT, 160};
    fake.objects[1] = (seam_object_info){string_class, class_class, JVMPI_NORMAL_OBJECT, 520};
    fake.object_count = 2;
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    go_live_keeping(true);
    int own = find(JVMPI_EVENT_OBJECT_ALLOC, class_class), string = find(JVMPI_EVENT_OBJECT_ALLOC, string_class);
    ck_assert_int_eq(own, -1);
    ck_assert_int_ge(string, 0);
    ck_assert_ptr_eq(recs[string].class_id, class_class);
    for (int i = 0; i < nrec(); i++) {
        ck_assert(recs[i].type != JVMPI_EVENT_OBJECT_ALLOC || recs[i].id != recs[i].class_id);
    }
}
END_TEST

/* RequestEvent(OBJECT_ALLOC) for objects is answered from the layer's own
 * records (the object's class by its ID), never by the backend's scan of
 * every tag; a freed ID, or one never handed out, fails at once. */
START_TEST(test_request_object_alloc_without_a_scan)
{
    go_live();
    int64_t ints_tag = ids_next_class(JVMPI_INT), strings_tag = ids_next_class(JVMPI_CLASS);
    seam_class_info *ints = fake_class(seam_id_from_tag(ints_tag), "[I", 0, 0, 0);
    ints->array_type = JVMPI_INT;
    layer_class_defined(ints);
    seam_class_info *strings = fake_class(seam_id_from_tag(strings_tag), "[Ljava.lang.String;", 0, 0, 0);
    strings->array_type = JVMPI_CLASS;
    strings->element_id = string_class;
    layer_class_defined(strings);
    jobjectID s = seam_id_from_tag(ids_next_object(24, seam_tag_from_id(string_class)));
    jobjectID a = seam_id_from_tag(ids_next_unannounced_object(56, ints_tag));
    jobjectID r = seam_id_from_tag(ids_next_object(32, strings_tag));
    fake.object_count = 0;
    fake.object_info_calls = 0;
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, s), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, a), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, r), JVMPI_SUCCESS);
    ck_assert_int_eq(nrec(), 3);
    ck_assert(recs[0].id == s && recs[0].class_id == string_class && recs[0].is_array == JVMPI_NORMAL_OBJECT);
    ck_assert_int_eq(recs[0].size, 24);
    ck_assert(recs[1].id == a && recs[1].class_id == NULL && recs[1].is_array == JVMPI_INT);
    ck_assert_int_eq(recs[1].size, 56);
    ck_assert(recs[2].id == r && recs[2].class_id == string_class && recs[2].is_array == JVMPI_CLASS);
    ck_assert_int_eq(fake.object_info_calls, 0);

    layer_object_freed(seam_tag_from_id(s));
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, s), JVMPI_FAIL);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, (jobjectID)((char *)r + (1 << 20))), JVMPI_FAIL);
    ck_assert_int_eq(fake.object_info_calls, 0);
    ck_assert_int_eq(nrec(), 3);

    /* An object whose class the layer could not record: asked of the backend. */
    jobjectID o = seam_id_from_tag(ids_next_object(16, 0));
    fake.objects[0] = (seam_object_info){o, string_class, JVMPI_NORMAL_OBJECT, 16};
    fake.object_count = 1;
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, o), JVMPI_SUCCESS);
    ck_assert_int_eq(fake.object_info_calls, 1);
}
END_TEST

/* An array class whose record has no element class (it was defined
 * before its element class could be linked): the OBJECT_ALLOC sent for
 * one of its arrays before a dump is asked of the backend afresh, which
 * links the element class, so it names it (HotSpot 5.0 never sent NULL). */
START_TEST(test_dumped_array_names_its_element_class)
{
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    go_live();
    int64_t markers_tag = ids_next_class(JVMPI_CLASS);
    jobjectID markers = seam_id_from_tag(markers_tag), marker = seam_id_from_tag(ids_next_class(0));
    seam_class_info *info = fake_class(markers, "[LMarker;", 0, 0, 0);
    info->array_type = JVMPI_CLASS;
    layer_class_defined(info);
    define(marker, "Marker", 100);
    jobjectID a = seam_id_from_tag(ids_next_unannounced_object(32, markers_tag));
    fake.objects[0] = (seam_object_info){a, marker, JVMPI_CLASS, 32};
    fake.object_count = 1;
    static seam_heap_object objs[1];
    objs[0] = (seam_heap_object){.id = a, .class_id = markers, .kind = SEAM_HEAP_OBJ_ARRAY};
    fake.heap_snapshot = (seam_heap_snapshot){.num_objects = 1, .objects = objs};
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, NULL), JVMPI_SUCCESS);
    int i = find(JVMPI_EVENT_OBJECT_ALLOC, a);
    ck_assert_int_ge(i, 0);
    ck_assert_int_eq(recs[i].is_array, JVMPI_CLASS);
    ck_assert_ptr_eq(recs[i].class_id, marker);
}
END_TEST

/* With OBJECT_ALLOC and CLASS_LOAD on, a class's Class object is announced
 * right before the class, after java.lang.Class's CLASS_LOAD, which its
 * OBJECT_ALLOC names; java.lang.Class's own object, which names no class,
 * is not announced at all (only requested). */
START_TEST(test_class_object_before_its_class)
{
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    enable(JVMPI_EVENT_CLASS_LOAD);
    go_live_keeping(true);
    ck_assert_int_gt(find(JVMPI_EVENT_CLASS_LOAD, string_class), find(JVMPI_EVENT_OBJECT_ALLOC, string_class));
    jobjectID late_class = seam_id_from_tag(ids_next_class(0));
    define(late_class, "Late", 200);
    layer_class_announce(ENV_MAIN, late_class);
    int class_class_load = find(JVMPI_EVENT_CLASS_LOAD, class_class);
    int class_class_object = find(JVMPI_EVENT_OBJECT_ALLOC, class_class);
    int late_object = find(JVMPI_EVENT_OBJECT_ALLOC, late_class);
    int late_load = find(JVMPI_EVENT_CLASS_LOAD, late_class);
    ck_assert_int_eq(class_class_object, -1);
    ck_assert_int_ge(class_class_load, 0);
    ck_assert_int_gt(late_object, class_class_load);
    ck_assert_int_gt(late_load, late_object);
    ck_assert_ptr_eq(recs[late_object].class_id, class_class);
    ck_assert_int_eq(recs[late_object].size, 200);
    /* announced once: asking again sends nothing */
    int n = nrec();
    layer_class_announce(ENV_MAIN, late_class);
    ck_assert_int_eq(nrec(), n);
}
END_TEST

/* A method's class is defined before an event names the method, whatever
 * thread sends it: here a thread the agent does not know (the VM's hidden
 * compiler threads), whose event carries a known thread's env_id. */
static void *compile_on_jit_thread(void *arg)
{
    fake_set_thread_env(ENV_JIT);
    static const JVMPI_Lineno lines[1] = {{0, 7}};
    layer_compiled_method_load(ENV_JIT, (jmethodID)arg, (void *)0x1000, 16, 1, lines);
    return NULL;
}

START_TEST(test_method_class_defined_first)
{
    enable(JVMPI_EVENT_CLASS_LOAD);
    enable(JVMPI_EVENT_THREAD_START);
    enable(JVMPI_EVENT_COMPILED_METHOD_LOAD);
    go_live();
    jobjectID jit_class = seam_id_from_tag(ids_next_class(0));
    define(jit_class, "Hot", 100);
    fake.method_class = jit_class;
    jmethodID m = (jmethodID)(uintptr_t)0x4242;
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, compile_on_jit_thread, m), 0);
    pthread_join(th, NULL);
    int load = find(JVMPI_EVENT_CLASS_LOAD, jit_class);
    int compiled = -1;
    for (int i = 0; i < nrec(); i++) {
        if (recs[i].type == JVMPI_EVENT_COMPILED_METHOD_LOAD) {
            compiled = i;
        }
    }
    ck_assert_int_ge(load, 0);
    ck_assert_int_gt(compiled, load);
    ck_assert_ptr_eq(recs[compiled].method, m);
    ck_assert_ptr_eq(recs[compiled].env_id, ENV_MAIN);
    ck_assert_ptr_eq(recs[load].env_id, ENV_MAIN);
}
END_TEST

/* An object whose ID was made without an OBJECT_ALLOC (a monitor's, a heap
 * walk's) gets one before the first event that names it, once; its free is
 * reported only if the agent was told of it. */
START_TEST(test_late_object_announced_once)
{
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    enable(JVMPI_EVENT_OBJECT_FREE);
    enable(JVMPI_EVENT_METHOD_ENTRY2);
    enable(JVMPI_EVENT_GC_START);
    enable(JVMPI_EVENT_GC_FINISH);
    go_live();
    jobjectID late = seam_id_from_tag(ids_next_unannounced_object(40, 0));
    jobjectID never_named = seam_id_from_tag(ids_next_unannounced_object(40, 0));
    fake.objects[0] = (seam_object_info){late, string_class, JVMPI_NORMAL_OBJECT, 40};
    fake.object_count = 1;
    jmethodID m = (jmethodID)(uintptr_t)0x1000;
    layer_method_entry(ENV_MAIN, m, late);
    layer_method_entry(ENV_MAIN, m, late);
    int alloc = find(JVMPI_EVENT_OBJECT_ALLOC, late);
    int entry = find(JVMPI_EVENT_METHOD_ENTRY2, late);
    ck_assert_int_ge(alloc, 0);
    ck_assert_int_gt(entry, alloc);
    int allocs = 0;
    for (int i = 0; i < nrec(); i++) {
        allocs += recs[i].type == JVMPI_EVENT_OBJECT_ALLOC && recs[i].id == late;
    }
    ck_assert_int_eq(allocs, 1);

    layer_gc_finish();
    layer_object_freed(seam_tag_from_id(late));
    layer_object_freed(seam_tag_from_id(never_named));
    gc_deliver_due(ENV_MAIN);
    ck_assert_int_ge(find(JVMPI_EVENT_OBJECT_FREE, late), 0);
    ck_assert_int_eq(find(JVMPI_EVENT_OBJECT_FREE, never_named), -1);
}
END_TEST

static seam_object_info late_thread_objects[2];

/* A thread of its own: the layer knows each thread by the OS thread that
 * sends its events. */
static void *allocate_on_late_thread(void *arg)
{
    for (int i = 0; i < 2; i++) {
        ck_assert(layer_object_alloc(ENV_JIT, &late_thread_objects[i]));
    }
    (void)arg;
    return NULL;
}

/* The announce stage, for the calling thread itself: a thread the agent
 * was not told about gets its THREAD_START right before its own first
 * event, once, and that event carries the thread's own env_id. */
START_TEST(test_own_thread_start_before_its_first_event)
{
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    enable(JVMPI_EVENT_THREAD_START);
    go_live();
    jobjectID thread = seam_id_from_tag(ids_next_object(96, 0));
    threads_release(fake_unannounced_thread(ENV_JIT, thread, "late"));
    for (int i = 0; i < 2; i++) {
        late_thread_objects[i] =
            (seam_object_info){seam_id_from_tag(ids_next_object(24, 0)), string_class, JVMPI_NORMAL_OBJECT, 24};
    }
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, allocate_on_late_thread, NULL), 0);
    pthread_join(th, NULL);
    int start = find(JVMPI_EVENT_THREAD_START, thread);
    ck_assert_int_ge(start, 0);
    for (int i = 0; i < 2; i++) {
        int alloc = find(JVMPI_EVENT_OBJECT_ALLOC, late_thread_objects[i].id);
        ck_assert_int_gt(alloc, start);
        ck_assert_ptr_eq(recs[alloc].env_id, ENV_JIT);
    }
    int starts = 0;
    for (int i = 0; i < nrec(); i++) {
        starts += recs[i].type == JVMPI_EVENT_THREAD_START;
    }
    ck_assert_int_eq(starts, 1);
}
END_TEST

/* An object the agent asked about (RequestEvent(OBJECT_ALLOC)) is one it
 * was told of: an event that names it later sends no OBJECT_ALLOC again. */
START_TEST(test_requested_object_not_announced_again)
{
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    enable(JVMPI_EVENT_METHOD_ENTRY2);
    go_live();
    jobjectID late = seam_id_from_tag(ids_next_unannounced_object(40, 0));
    fake.objects[0] = (seam_object_info){late, string_class, JVMPI_NORMAL_OBJECT, 40};
    fake.object_count = 1;
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, late), JVMPI_SUCCESS);
    layer_method_entry(ENV_MAIN, (jmethodID)(uintptr_t)0x1000, late);
    int allocs = 0;
    for (int i = 0; i < nrec(); i++) {
        allocs += (recs[i].type & ~JVMPI_REQUESTED_EVENT) == JVMPI_EVENT_OBJECT_ALLOC && recs[i].id == late;
    }
    ck_assert_int_eq(allocs, 1);
    ck_assert_int_eq(recs[find(JVMPI_EVENT_OBJECT_ALLOC | JVMPI_REQUESTED_EVENT, late)].type,
                     JVMPI_EVENT_OBJECT_ALLOC | JVMPI_REQUESTED_EVENT);
    ck_assert_int_gt(find(JVMPI_EVENT_METHOD_ENTRY2, late), 0);
}
END_TEST

static Suite *defs_suite(void)
{
    Suite *s = suite_create("defs");
    TCase *tc = tcase_create("defs");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_request_object_alloc_of_a_class);
    tcase_add_test(tc, test_own_thread_start_before_its_first_event);
    tcase_add_test(tc, test_requested_object_not_announced_again);
    tcase_add_test(tc, test_replayed_class_class_names_no_class);
    tcase_add_test(tc, test_dumped_array_names_its_element_class);
    tcase_add_test(tc, test_request_object_alloc_without_a_scan);
    tcase_add_test(tc, test_class_object_before_its_class);
    tcase_add_test(tc, test_method_class_defined_first);
    tcase_add_test(tc, test_late_object_announced_once);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(defs_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
