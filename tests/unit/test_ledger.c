/*
 * test_ledger.c - the ledger (jvmpi/ledger.c): what the layer delivered,
 * counted by event type, by class and by allocation site, written at VM
 * death; driven through the fake backend the way jvmti_backend/ drives the
 * layer, the file then read back line by line.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "events.h"
#include "fake_backend.h"
#include "gc.h"
#include "interface.h"
#include "layer.h"
#include "ledger.h"
#include "log.h"
#include "options.h"
#include "stderr_capture.h"

static char env_tokens[4];
#define ENV_MAIN ((JNIEnv *)(void *)&env_tokens[0])
#define MAIN_THREAD_ID seam_id_from_tag(0x300000)

static JVMPI_Interface *pi;
static char path[256], options[300];
static atomic_int handled;
static bool run_gc_at_shutdown;

static void handler(JVMPI_Event *ev)
{
    atomic_fetch_add(&handled, 1);
    if (ev->event_type == JVMPI_EVENT_JVM_SHUT_DOWN && run_gc_at_shutdown) {
        pi->RunGC(); /* as HPROF does before its last dump */
    }
}

/* The layer started with JVMPI_LAYER_OPTIONS=opts (NULL: none). */
static void start_layer(const char *opts)
{
    if (opts != NULL) {
        setenv("JVMPI_LAYER_OPTIONS", opts, 1);
    } else {
        unsetenv("JVMPI_LAYER_OPTIONS");
    }
    ck_assert_int_eq(layer_onload(NULL, NULL), JNI_OK);
    pi = interface_table();
    pi->NotifyEvent = handler;
}

static void setup(void)
{
    layer_reset();
    fake_reset();
    ids_reset();
    snprintf(path, sizeof path, "/tmp/test_ledger.%ld.tsv", (long)getpid());
    snprintf(options, sizeof options, "ledger=%s", path);
    unlink(path);
    atomic_store(&handled, 0);
    run_gc_at_shutdown = false;
    fake.heap_capacity = 64L << 20;
    fake_set_thread_env(ENV_MAIN);
}

static void teardown(void)
{
    layer_reset();
    ids_reset();
    unsetenv("JVMPI_LAYER_OPTIONS");
    unlink(path);
    char done[300];
    snprintf(done, sizeof done, "%s.done", path);
    unlink(done);
}

static void enable(jint type) { ck_assert_int_eq(pi->EnableEvent(type, NULL), JVMPI_SUCCESS); }

static void go_live(void)
{
    fake_thread(ENV_MAIN, MAIN_THREAD_ID, "main");
    layer_vm_init(ENV_MAIN);
}

static void collection(const int64_t *freed, int n)
{
    layer_gc_finish();
    for (int i = 0; i < n; i++) {
        layer_object_freed(freed[i]);
    }
}

/* The ledger's line that starts with prefix (malloc'd), NULL if none. */
static char *line_of(const char *prefix)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "no ledger at %s", path);
    char buf[512];
    char *found = NULL;
    while (found == NULL && fgets(buf, sizeof buf, f) != NULL) {
        if (strncmp(buf, prefix, strlen(prefix)) == 0) {
            buf[strcspn(buf, "\n")] = '\0';
            found = strdup(buf);
        }
    }
    fclose(f);
    return found;
}

static void expect_line(const char *want)
{
    /* the line is found by its fields up to the first number */
    char prefix[256];
    const char *p = want;
    for (int tabs = 0; *p != '\0' && tabs < 2; p++) {
        tabs += *p == '\t';
    }
    snprintf(prefix, sizeof prefix, "%.*s", (int)(p - want), want);
    char *got = line_of(prefix);
    ck_assert_msg(got != NULL, "no ledger line \"%s\"", prefix);
    ck_assert_msg(strcmp(got, want) == 0, "ledger line \"%s\", expected \"%s\"", got, want);
    free(got);
}

static int lines_starting(const char *prefix)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char buf[512];
    int n = 0;
    while (fgets(buf, sizeof buf, f) != NULL) {
        n += strncmp(buf, prefix, strlen(prefix)) == 0;
    }
    fclose(f);
    return n;
}

/* An object of the class tagged class_tag (0: not recorded), allocated now
 * in the main thread. */
static int64_t allocate(int64_t class_tag, jobjectID event_class, jint is_array, jlong size)
{
    int64_t tag = ids_next_object(size, class_tag);
    seam_object_info o = {seam_id_from_tag(tag), event_class, is_array, size};
    ck_assert(layer_object_alloc(ENV_MAIN, &o));
    return tag;
}

/* ---- counting ------------------------------------------------------------- */

static int64_t blob_tag, ints_tag, strings_tag, string_tag;
#define BLOB seam_id_from_tag(blob_tag)

static void define_classes(void)
{
    blob_tag = ids_next_class(0);
    ints_tag = ids_next_class(JVMPI_INT);
    string_tag = ids_next_class(0);
    strings_tag = ids_next_class(JVMPI_CLASS);
    layer_class_defined(fake_class(BLOB, "pkg.Blob", 3, 0, 1));
    layer_class_defined(fake_class(seam_id_from_tag(ints_tag), "[I", 0, 0, 0));
    layer_class_defined(fake_class(seam_id_from_tag(string_tag), "java.lang.String", 0, 0, 0));
    layer_class_defined(fake_class(seam_id_from_tag(strings_tag), "[[Ljava.lang.String;", 0, 0, 0));
}

/* Objects by class and by site, the replay's apart, frees by class, each
 * event type with whether it was enabled. */
START_TEST(test_counts)
{
    start_layer(options);
    ck_assert(ledger_active());
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    enable(JVMPI_EVENT_OBJECT_FREE);
    enable(JVMPI_EVENT_GC_START);
    enable(JVMPI_EVENT_GC_FINISH);
    enable(JVMPI_EVENT_CLASS_LOAD);
    enable(JVMPI_EVENT_THREAD_START);
    enable(JVMPI_EVENT_METHOD_ENTRY);
    pi->DisableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
    define_classes();
    /* two Blobs in the heap at VM init: the replay's, not the program's */
    for (int i = 0; i < 2; i++) {
        fake.objects[i] = (seam_object_info){seam_id_from_tag(ids_next_object(24, blob_tag)), BLOB, 0, 24};
    }
    fake.object_count = 2;
    go_live();

    /* five Blobs made by pkg.Blob.m1, one whose class the layer has no
     * record of (counted by what its event says) */
    fake.trace_frames = 1;
    fake.trace_top = (jmethodID)(uintptr_t)0x1001;
    fake.method_class = BLOB;
    int64_t blobs[6];
    for (int i = 0; i < 5; i++) {
        blobs[i] = allocate(blob_tag, BLOB, JVMPI_NORMAL_OBJECT, 24);
    }
    blobs[5] = allocate(0, BLOB, JVMPI_NORMAL_OBJECT, 24);
    /* three int[] with no Java frame (one of a class not recorded: named
     * from its event), a String[][] from an unknown method */
    fake.trace_frames = 0;
    for (int i = 0; i < 3; i++) {
        allocate(i < 2 ? ints_tag : 0, NULL, JVMPI_INT, 40);
    }
    fake.trace_frames = 1;
    fake.trace_top = (jmethodID)(uintptr_t)0x7777;
    fake.method_class = NULL;
    allocate(strings_tag, seam_id_from_tag(string_tag), JVMPI_CLASS, 32);
    /* an answer to a request is no allocation */
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, BLOB), JVMPI_FAIL);
    ck_assert_int_eq(pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, seam_id_from_tag(blobs[0])), JVMPI_SUCCESS);
    /* two Blobs die */
    collection(blobs, 2);
    gc_deliver_due(ENV_MAIN);
    layer_vm_death(ENV_MAIN);
    ck_assert(!ledger_active());

    expect_line("jvmpi-ledger\t1");
    char pid[64];
    snprintf(pid, sizeof pid, "pid\t%ld", (long)getpid());
    expect_line(pid);
    /* 8 Blobs: 2 replayed, 6 made (one of them counted through its event), 2 freed */
    expect_line("class\tpkg.Blob\t8\t192\t6\t144\t2\t48");
    expect_line("class\tint[]\t3\t120\t3\t120\t0\t0");
    expect_line("class\tjava.lang.String[][]\t1\t32\t1\t32\t0\t0");
    ck_assert_int_eq(lines_starting("class\t"), 3);
    expect_line("site\tpkg.Blob.m1\t6\t144");
    expect_line("site\t(no Java frame)\t3\t120");
    expect_line("site\t(method not known)\t1\t32");
    ck_assert_int_eq(lines_starting("site\t"), 3);
    expect_line("event\tOBJECT_ALLOC\t1\t12\t1\t0");
    expect_line("event\tOBJECT_FREE\t1\t2\t0\t0");
    expect_line("event\tGC_START\t1\t1\t0\t0");
    expect_line("event\tCLASS_LOAD\t1\t4\t0\t0");
    expect_line("class_loads\t2");
    expect_line("gc_windows\t1\t1\t0");
    expect_line("event\tTHREAD_START\t1\t1\t0\t0");
    expect_line("event\tMETHOD_ENTRY\t1\t0\t0\t0");
    expect_line("event\tMONITOR_WAIT\t0\t0\t0\t0");
    ck_assert_int_eq(lines_starting("event\t"), 37);
    ck_assert_int_eq(lines_starting("end"), 1);
    /* every event the ledger counted reached the agent too */
    ck_assert_int_ge(atomic_load(&handled), 12 + 2 + 2 + 4 + 1 + 1);
}
END_TEST

static int64_t late_free;
static void collect_late_free(void) { collection(&late_free, 1); }

/* What the agent's JVM_SHUT_DOWN handler causes (HPROF's last collection)
 * is counted apart: other tools stopped recording before it. */
START_TEST(test_from_shutdown)
{
    start_layer(options);
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    enable(JVMPI_EVENT_OBJECT_FREE);
    enable(JVMPI_EVENT_GC_START);
    enable(JVMPI_EVENT_GC_FINISH);
    enable(JVMPI_EVENT_JVM_SHUT_DOWN);
    define_classes();
    go_live();
    int64_t dead[2] = {allocate(blob_tag, BLOB, 0, 16), allocate(ints_tag, NULL, JVMPI_INT, 64)};
    collection(dead, 1);
    gc_deliver_due(ENV_MAIN);
    run_gc_at_shutdown = true;
    late_free = dead[1]; /* found dead by the agent's RunGC */
    fake.on_force_gc = collect_late_free;
    layer_vm_death(ENV_MAIN);
    expect_line("event\tGC_START\t1\t2\t0\t1");
    expect_line("event\tOBJECT_FREE\t1\t2\t0\t1");
    expect_line("event\tJVM_SHUT_DOWN\t1\t1\t0\t1");
    /* the window of the agent's RunGC at shutdown is not among the windows */
    expect_line("gc_windows\t1\t1\t0");
    expect_line("class\tpkg.Blob\t1\t16\t1\t16\t1\t16");
    expect_line("class\tint[]\t1\t64\t1\t64\t1\t64");
}
END_TEST

/* GC windows: one that served two collections close together, one that
 * served one, and one that carried only frees the VM posted late. */
START_TEST(test_gc_windows)
{
    start_layer(options);
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    enable(JVMPI_EVENT_OBJECT_FREE);
    enable(JVMPI_EVENT_GC_START);
    enable(JVMPI_EVENT_GC_FINISH);
    define_classes();
    go_live();
    int64_t dead[4];
    for (int i = 0; i < 4; i++) {
        dead[i] = allocate(blob_tag, BLOB, 0, 16);
    }
    layer_gc_finish();
    collection(&dead[0], 1);
    gc_deliver_due(ENV_MAIN);
    collection(&dead[1], 1);
    gc_deliver_due(ENV_MAIN);
    /* late frees, with no collection: delivered in a window of their own */
    layer_object_freed(dead[2]);
    layer_object_freed(dead[3]);
    layer_vm_death(ENV_MAIN);
    expect_line("event\tGC_START\t1\t3\t0\t0");
    expect_line("event\tOBJECT_FREE\t1\t4\t0\t0");
    expect_line("gc_windows\t2\t3\t1");
}
END_TEST

/* A class's own object, freed when the class unloads, counts as a
 * java.lang.Class of the size its CLASS_LOAD gave.  java.lang.Class's own
 * is not counted: as on HotSpot 5.0, its OBJECT_ALLOC comes only on
 * request. */
START_TEST(test_class_object_freed)
{
    start_layer(options);
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    enable(JVMPI_EVENT_OBJECT_FREE);
    go_live();
    int64_t class_class = ids_next_class(0);
    seam_class_info *cc = fake_class(seam_id_from_tag(class_class), "java.lang.Class", 0, 0, 0);
    cc->object_size = 160;
    layer_class_defined(cc);
    fake.class_class_id = seam_id_from_tag(class_class);
    layer_class_announce(ENV_MAIN, seam_id_from_tag(class_class));
    int64_t gone = ids_next_class(0);
    seam_class_info *g = fake_class(seam_id_from_tag(gone), "Gone", 0, 0, 0);
    g->object_size = 96;
    layer_class_defined(g);
    layer_class_announce(ENV_MAIN, seam_id_from_tag(gone)); /* its Class object's OBJECT_ALLOC */
    collection(&gone, 1);
    gc_deliver_due(ENV_MAIN);
    layer_vm_death(ENV_MAIN);
    expect_line("class\tjava.lang.Class\t1\t96\t0\t0\t1\t96");
}
END_TEST

/* ---- off, options, errors ------------------------------------------------ */

/* Without the option nothing is counted and no file is made. */
START_TEST(test_off)
{
    start_layer("log=warn");
    ck_assert(!ledger_active());
    enable(JVMPI_EVENT_OBJECT_ALLOC);
    define_classes();
    go_live();
    allocate(blob_tag, BLOB, 0, 24);
    ck_assert_int_eq(atomic_load(&handled), 1);
    layer_vm_death(ENV_MAIN);
    ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

START_TEST(test_options)
{
    options_layer o;
    char err[256] = "";
    ck_assert_int_eq(options_parse_layer("ledger=/tmp/a,b.tsv,log=info,ledgerhold=30", &o, err, sizeof err), 0);
    ck_assert_str_eq(o.ledger_file, "/tmp/a,b.tsv");
    ck_assert_int_eq(o.ledger_hold_s, 30);
    ck_assert_int_eq(o.log_level, LOG_LEVEL_INFO);
    options_layer_free(&o);
    ck_assert_ptr_null(o.ledger_file);
    ck_assert_int_eq(options_parse_layer("log=info", &o, err, sizeof err), 0);
    ck_assert_ptr_null(o.ledger_file);
    ck_assert_int_eq(o.ledger_hold_s, 0);
    options_layer_free(&o);

    static const struct {
        const char *text, *must_name;
    } bad[] = {
        {"ledger=", "ledger= needs a path"},
        {"ledger=/tmp/x,ledgerhold=0", "ledgerhold=0"},
        {"ledger=/tmp/x,ledgerhold=soon", "ledgerhold=soon"},
        {"ledger=/tmp/x,ledgerhold=3601", "ledgerhold=3601"},
        {"ledgerhold=5", "needs ledger="},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        ck_assert_msg(options_parse_layer(bad[i].text, &o, err, sizeof err) == -1, "\"%s\" accepted", bad[i].text);
        ck_assert_msg(strstr(err, bad[i].must_name) != NULL, "\"%s\": \"%s\"", bad[i].text, err);
        ck_assert_ptr_null(o.ledger_file);
    }
}
END_TEST

/* A ledger that cannot be written stops the run at start-up, in one line
 * naming the path and why. */
START_TEST(test_cannot_create)
{
    setenv("JVMPI_LAYER_OPTIONS", "ledger=/nonexistent-dir/l.tsv", 1);
    stderr_capture cap;
    stderr_capture_begin(&cap);
    jint rc = layer_onload(NULL, NULL);
    stderr_capture_end(&cap);
    ck_assert_int_eq(rc, JNI_ERR);
    ck_assert_int_eq(stderr_capture_count(&cap, "JVMPI layer: error: "), 1);
    ck_assert_ptr_nonnull(strstr(cap.text, "ledger=/nonexistent-dir/l.tsv: cannot create the file: "));
    ck_assert(!ledger_active());
}
END_TEST

static double seconds_of(void (*f)(JNIEnv *))
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    f(ENV_MAIN);
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

static char done_path[300];

static void *make_done_later(void *arg)
{
    struct timespec t = {0, 300 * 1000000L};
    nanosleep(&t, NULL);
    /* the ledger is complete before the VM waits */
    char *last = line_of("end");
    ck_assert_ptr_nonnull(last);
    free(last);
    FILE *f = fopen(done_path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    return NULL;
}

/* ledgerhold: the VM waits at its death, the ledger written, until
 * <ledger>.done exists, or for the time given. */
START_TEST(test_hold)
{
    char opts[400];
    snprintf(opts, sizeof opts, "%s,ledgerhold=2", options);
    snprintf(done_path, sizeof done_path, "%s.done", path);
    start_layer(opts);
    go_live();
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, make_done_later, NULL), 0);
    double s = seconds_of(layer_vm_death);
    pthread_join(t, NULL);
    ck_assert_msg(s >= 0.25 && s < 1.8, "held %.2f s, expected until the .done file came (0.3 s)", s);
    unlink(done_path);

    layer_reset();
    start_layer(opts);
    go_live();
    s = seconds_of(layer_vm_death);
    ck_assert_msg(s >= 1.9 && s < 4.0, "held %.2f s without a .done file, expected 2", s);
}
END_TEST

static Suite *ledger_suite(void)
{
    Suite *s = suite_create("ledger");
    TCase *tc = tcase_create("ledger");
    tcase_set_timeout(tc, 20);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_counts);
    tcase_add_test(tc, test_from_shutdown);
    tcase_add_test(tc, test_gc_windows);
    tcase_add_test(tc, test_class_object_freed);
    tcase_add_test(tc, test_off);
    tcase_add_test(tc, test_options);
    tcase_add_test(tc, test_cannot_create);
    tcase_add_test(tc, test_hold);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ledger_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
