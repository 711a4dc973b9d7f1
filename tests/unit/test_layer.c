/*
 * test_layer.c - which of the OnLoad-only JVM TI capabilities that slow the
 * VM even unused the layer asks for at start-up (layer_capabilities_wanted),
 * for each combination of JVMPI_LAYER_OPTIONS methods= and caps=, -Xrun
 * agents on the command line, and events an agent enabled in JVM_OnLoad.
 *
 * The -Xrun agents are read from JAVA_TOOL_OPTIONS (and the process's own
 * arguments, which here name none).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "events.h"
#include "fake_backend.h"
#include "interface.h"
#include "layer.h"
#include "stderr_capture.h"

/* Starts the layer as the first -agentpath:libjvmpi.so does, with these
 * layer options and JAVA_TOOL_OPTIONS (NULL: unset); no agent named. */
static void start(const char *layer_options, const char *tool_options)
{
    layer_reset();
    fake_reset();
    if (layer_options != NULL) {
        setenv("JVMPI_LAYER_OPTIONS", layer_options, 1);
    } else {
        unsetenv("JVMPI_LAYER_OPTIONS");
    }
    if (tool_options != NULL) {
        setenv("JAVA_TOOL_OPTIONS", tool_options, 1);
    } else {
        unsetenv("JAVA_TOOL_OPTIONS");
    }
    unsetenv("_JAVA_OPTIONS");
    ck_assert_int_eq(layer_onload(NULL, NULL), JNI_OK);
}

/* An agent's JVM_OnLoad enabling EVENT, still in the OnLoad phase. */
static void enable(jint event)
{
    ck_assert_int_eq(interface_table()->EnableEvent(event, NULL), JVMPI_SUCCESS);
}

static void expect(bool methods, bool instructions, bool receiver)
{
    seam_caps_wanted w = layer_capabilities_wanted();
    ck_assert_msg(w.methods == methods, "methods: %d", w.methods);
    ck_assert_msg(w.instructions == instructions, "instructions: %d", w.instructions);
    ck_assert_msg(w.receiver == receiver, "receiver: %d", w.receiver);
    /* MONITOR_DUMP's two cost nothing to hold and are always taken. */
    ck_assert(w.monitors);
}

static void teardown(void)
{
    layer_reset();
    unsetenv("JVMPI_LAYER_OPTIONS");
    unsetenv("JAVA_TOOL_OPTIONS");
}

/* The class rewriter (the default) needs none of them, whatever was
 * enabled, whoever loaded the agent, and with caps=all. */
START_TEST(test_rewrite_takes_none)
{
    static const char *layer_options[] = {NULL, "caps=all", "methods=rewrite,caps=all"};
    static const char *tool_options[] = {NULL, "-Xrunfoo:a=b", "-agentpath:/x/libjvmpi.so -Xrunfoo"};
    for (size_t i = 0; i < sizeof layer_options / sizeof layer_options[0]; i++) {
        for (size_t j = 0; j < sizeof tool_options / sizeof tool_options[0]; j++) {
            start(layer_options[i], tool_options[j]);
            expect(false, false, false);
            enable(JVMPI_EVENT_METHOD_ENTRY2);
            enable(JVMPI_EVENT_METHOD_EXIT);
            enable(JVMPI_EVENT_INSTRUCTION_START);
            expect(false, false, false);
        }
    }
}
END_TEST

/* Whether METHOD_ENTRY2 was enabled in JVM_OnLoad is told whatever the
 * source: a VM with no stack walker of live frames needs local variable
 * access for constructors' receivers under the rewriter too. */
START_TEST(test_entry2_told_with_rewrite)
{
    start(NULL, NULL);
    enable(JVMPI_EVENT_METHOD_ENTRY);
    ck_assert(!layer_capabilities_wanted().entry2);
    start(NULL, NULL);
    enable(JVMPI_EVENT_METHOD_ENTRY2);
    ck_assert(layer_capabilities_wanted().entry2);
    start("caps=all", NULL);
    ck_assert(layer_capabilities_wanted().entry2);
}
END_TEST

/* caps=all under methods=rewrite says so at log=info, and nothing by default. */
START_TEST(test_rewrite_caps_all_said_at_info)
{
    stderr_capture cap;
    stderr_capture_begin(&cap);
    start("caps=all", NULL);
    stderr_capture_end(&cap);
    ck_assert_msg(cap.text[0] == '\0', "said: %s", cap.text);
    stderr_capture_begin(&cap);
    start("caps=all,log=info", NULL);
    stderr_capture_end(&cap);
    ck_assert_msg(strstr(cap.text, "caps=all takes nothing with methods=rewrite") != NULL, "said: %s", cap.text);
}
END_TEST

/* methods=jvmti, no -Xrun agent: only the families enabled in JVM_OnLoad. */
START_TEST(test_jvmti_what_was_enabled)
{
    start("methods=jvmti", NULL);
    expect(false, false, false);

    start("methods=jvmti", NULL);
    enable(JVMPI_EVENT_METHOD_ENTRY);
    expect(true, false, false);

    start("methods=jvmti", NULL);
    enable(JVMPI_EVENT_METHOD_EXIT);
    expect(true, false, false);

    start("methods=jvmti", NULL);
    enable(JVMPI_EVENT_METHOD_ENTRY2);
    expect(true, false, true);

    start("methods=jvmti", NULL);
    enable(JVMPI_EVENT_INSTRUCTION_START);
    expect(false, true, false);

    start("methods=jvmti", "-Xmx64m"); /* other options are no -Xrun agent */
    enable(JVMPI_EVENT_CLASS_LOAD);
    expect(false, false, false);
}
END_TEST

/* methods=jvmti with caps=all: every one, with nothing enabled. */
START_TEST(test_jvmti_caps_all)
{
    start("methods=jvmti,caps=all", NULL);
    expect(true, true, true);
}
END_TEST

/* methods=jvmti with an -Xrun agent on the command line: its JVM_OnLoad
 * comes after the OnLoad phase, so every one is taken, also when an
 * -agentpath agent was started and enabled less; JDWP's -Xrunjdwp is no
 * JVMPI agent. */
START_TEST(test_jvmti_xrun_agent)
{
    start("methods=jvmti", "-Xrunfoo");
    expect(true, true, true);

    start("methods=jvmti", "-Xss1m -Xrunfoo:x=1,y=2 -Xmx64m");
    enable(JVMPI_EVENT_CLASS_LOAD); /* an -agentpath agent's choice */
    expect(true, true, true);

    start("methods=jvmti", "-Xrunjdwp:transport=dt_socket,server=y");
    expect(false, false, false);

    start("methods=jvmti", "-Xrunjdwp:server=y -Xrunfoo");
    expect(true, true, true);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("layer");
    TCase *tc = tcase_create("capabilities");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, test_rewrite_takes_none);
    tcase_add_test(tc, test_rewrite_caps_all_said_at_info);
    tcase_add_test(tc, test_entry2_told_with_rewrite);
    tcase_add_test(tc, test_jvmti_what_was_enabled);
    tcase_add_test(tc, test_jvmti_caps_all);
    tcase_add_test(tc, test_jvmti_xrun_agent);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
