/*
 * test_instr.c - INSTRUCTION_START branch details (jvmpi/instr.c) and the
 * method events' delivery (jvmpi/methods.c), with hand-assembled bytecodes
 * behind the fake backend.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "events.h"
#include "fake_backend.h"
#include "instr.h"
#include "interface.h"
#include "layer.h"

static char env_tokens[2];
#define ENV_MAIN ((JNIEnv *)(void *)&env_tokens[0])
#define METHOD_A ((jmethodID)(void *)0x1000)
#define METHOD_B ((jmethodID)(void *)0x2000)

static JVMPI_Interface *pi;

#define MAX_RECS 64
static JVMPI_Event recs[MAX_RECS];
static int n_recs;

static void record(JVMPI_Event *ev)
{
    ck_assert_int_lt(n_recs, MAX_RECS);
    recs[n_recs++] = *ev;
}

static void setup(void)
{
    unsetenv("JVMPI_LAYER_OPTIONS");
    layer_reset();
    fake_reset();
    instr_reset();
    ck_assert_int_eq(layer_onload(NULL, NULL), JNI_OK);
    pi = interface_table();
    pi->NotifyEvent = record;
    fake_set_thread_env(ENV_MAIN);
    fake_thread(ENV_MAIN, seam_id_from_tag(0x200000), "main");
    layer_vm_init(ENV_MAIN);
    n_recs = 0;
}

static void teardown(void)
{
    layer_reset();
    instr_reset();
}

static JVMPI_Event outcome(const unsigned char *code, jint len, jint offset, jint next)
{
    JVMPI_Event ev;
    memset(&ev, 0, sizeof ev);
    instr_branch_outcome(code, len, offset, next, &ev);
    return ev;
}

/* ---- branch details ------------------------------------------------------ */

/* 0: iload_0  1: ifle +7 (-> 8)  4: iinc  7: nop  8: ifnull -8 (-> 0)  11: return */
static const unsigned char if_code[] = {0x1a, 0x9e, 0x00, 0x07, 0x84, 0x00, 0x01, 0x00, 0xc6, 0xff, 0xf8, 0xb1};

START_TEST(test_if_taken_and_not)
{
    ck_assert(instr_is_branch(0x9e) && instr_is_branch(0xc6) && instr_is_branch(0xc7));
    ck_assert(instr_is_branch(0x99) && instr_is_branch(0xa6));
    ck_assert(!instr_is_branch(0xa7) && !instr_is_branch(0x1a) && !instr_is_branch(0xb1)); /* goto, iload_0, return */
    ck_assert_int_eq(outcome(if_code, sizeof if_code, 1, 8).u.instruction.u.if_info.is_true, JNI_TRUE);
    ck_assert_int_eq(outcome(if_code, sizeof if_code, 1, 4).u.instruction.u.if_info.is_true, JNI_FALSE);
    ck_assert_int_eq(outcome(if_code, sizeof if_code, 8, 0).u.instruction.u.if_info.is_true, JNI_TRUE);
    ck_assert_int_eq(outcome(if_code, sizeof if_code, 8, 11).u.instruction.u.if_info.is_true, JNI_FALSE);
}
END_TEST

/* tableswitch at offset 1: operands from 4 (default +40, low 5, high 7,
 * targets +20 +24 +20). */
static const unsigned char table_code[] = {
    0x1a, 0xaa, 0, 0,             /* iload_0; tableswitch; 2 bytes padding */
    0, 0, 0, 41,                  /* default: 1 + 40 */
    0, 0, 0, 5, 0, 0, 0, 7,       /* low 5, high 7 */
    0, 0, 0, 20, 0, 0, 0, 24, 0, 0, 0, 20,
};

START_TEST(test_tableswitch)
{
    JVMPI_Event ev = outcome(table_code, sizeof table_code, 1, 1 + 24);
    ck_assert_int_eq(ev.u.instruction.u.tableswitch_info.key, 6);
    ck_assert_int_eq(ev.u.instruction.u.tableswitch_info.low, 5);
    ck_assert_int_eq(ev.u.instruction.u.tableswitch_info.hi, 7);
    /* two cases share a target: the first is reported */
    ck_assert_int_eq(outcome(table_code, sizeof table_code, 1, 1 + 20).u.instruction.u.tableswitch_info.key, 5);
    /* default: a key the switch sends to the default */
    ck_assert_int_eq(outcome(table_code, sizeof table_code, 1, 1 + 41).u.instruction.u.tableswitch_info.key, 8);
}
END_TEST

/* lookupswitch at offset 3: no padding, operands from 4 (default +30, 2
 * pairs: 10 -> +9, 1000 -> +17). */
static const unsigned char lookup_code[] = {
    0x00, 0x00, 0x1a, 0xab,
    0, 0, 0, 30,
    0, 0, 0, 2,
    0, 0, 0, 10, 0, 0, 0, 9,
    0, 0, 0x03, 0xe8, 0, 0, 0, 17,
};

START_TEST(test_lookupswitch)
{
    JVMPI_Event ev = outcome(lookup_code, sizeof lookup_code, 3, 3 + 17);
    ck_assert_int_eq(ev.u.instruction.u.lookupswitch_info.chosen_pair_index, 1);
    ck_assert_int_eq(ev.u.instruction.u.lookupswitch_info.pairs_total, 2);
    ev = outcome(lookup_code, sizeof lookup_code, 3, 3 + 9);
    ck_assert_int_eq(ev.u.instruction.u.lookupswitch_info.chosen_pair_index, 0);
    ev = outcome(lookup_code, sizeof lookup_code, 3, 3 + 30);
    ck_assert_int_eq(ev.u.instruction.u.lookupswitch_info.chosen_pair_index, 2);
    ck_assert_int_eq(ev.u.instruction.u.lookupswitch_info.pairs_total, 2);
}
END_TEST

START_TEST(test_truncated_code_is_safe)
{
    /* a switch whose operands run past the end: no crash, nothing claimed */
    JVMPI_Event ev = outcome(table_code, 10, 1, 21);
    ck_assert_int_eq(ev.u.instruction.u.tableswitch_info.low, 0);
    ev = outcome(if_code, 2, 1, 8);
    ck_assert_int_eq(ev.u.instruction.u.if_info.is_true, JNI_FALSE);
}
END_TEST

/* ---- steps ------------------------------------------------------------------ */

START_TEST(test_steps_hold_a_branch_until_the_next_step)
{
    fake.bytecodes = if_code;
    fake.bytecodes_len = sizeof if_code;
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_INSTRUCTION_START, NULL), JVMPI_SUCCESS);
    ck_assert(fake.source_on[SEAM_SRC_SINGLE_STEP]);
    layer_single_step(ENV_MAIN, METHOD_A, 0);
    ck_assert_int_eq(n_recs, 1);
    layer_single_step(ENV_MAIN, METHOD_A, 1); /* ifle: held */
    ck_assert_int_eq(n_recs, 1);
    layer_single_step(ENV_MAIN, METHOD_A, 8); /* taken; ifnull held */
    ck_assert_int_eq(n_recs, 2);
    layer_single_step(ENV_MAIN, METHOD_A, 11); /* not taken */
    ck_assert_int_eq(n_recs, 4);
    jint want_off[] = {0, 1, 8, 11};
    jboolean want_true[] = {0, JNI_TRUE, JNI_FALSE, 0};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(recs[i].event_type, JVMPI_EVENT_INSTRUCTION_START);
        ck_assert_ptr_eq(recs[i].env_id, ENV_MAIN);
        ck_assert_ptr_eq(recs[i].u.instruction.method_id, METHOD_A);
        ck_assert_int_eq(recs[i].u.instruction.offset, want_off[i]);
        ck_assert_int_eq(recs[i].u.instruction.u.if_info.is_true, want_true[i]);
    }
    /* bytecodes are fetched once per method */
    ck_assert_int_eq(fake.bytecodes_calls, 1);
}
END_TEST

START_TEST(test_branch_from_before_a_disable_is_dropped)
{
    fake.bytecodes = if_code;
    fake.bytecodes_len = sizeof if_code;
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_INSTRUCTION_START, NULL), JVMPI_SUCCESS);
    layer_single_step(ENV_MAIN, METHOD_A, 1); /* held */
    ck_assert_int_eq(pi->DisableEvent(JVMPI_EVENT_INSTRUCTION_START, NULL), JVMPI_SUCCESS);
    layer_single_step_switched(false); /* what the backend says on the switch */
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_INSTRUCTION_START, NULL), JVMPI_SUCCESS);
    layer_single_step_switched(true);
    layer_single_step(ENV_MAIN, METHOD_B, 0);
    ck_assert_int_eq(n_recs, 1);
    ck_assert_ptr_eq(recs[0].u.instruction.method_id, METHOD_B);
}
END_TEST

/* ---- method events ------------------------------------------------------------ */

START_TEST(test_method_events)
{
    jobjectID obj = seam_id_from_tag(0x4000);
    layer_method_entry(ENV_MAIN, METHOD_A, obj); /* nothing enabled */
    ck_assert_int_eq(n_recs, 0);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY2, NULL), JVMPI_SUCCESS);
    ck_assert(fake.source_on[SEAM_SRC_METHOD_ENTRY] && fake.source_on[SEAM_SRC_METHOD_RECEIVER]);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_METHOD_EXIT, NULL), JVMPI_SUCCESS);
    layer_method_entry(ENV_MAIN, METHOD_A, obj);
    layer_method_exit(ENV_MAIN, METHOD_A);
    ck_assert_int_eq(n_recs, 3);
    ck_assert_int_eq(recs[0].event_type, JVMPI_EVENT_METHOD_ENTRY2);
    ck_assert_ptr_eq(recs[0].u.method_entry2.method_id, METHOD_A);
    ck_assert_ptr_eq(recs[0].u.method_entry2.obj_id, obj);
    ck_assert_int_eq(recs[1].event_type, JVMPI_EVENT_METHOD_ENTRY);
    ck_assert_ptr_eq(recs[1].u.method.method_id, METHOD_A);
    ck_assert_int_eq(recs[2].event_type, JVMPI_EVENT_METHOD_EXIT);
    ck_assert_ptr_eq(recs[2].env_id, ENV_MAIN);
    /* ENTRY2 off: ENTRY keeps MethodEntry on, the receiver is no longer fetched */
    ck_assert_int_eq(pi->DisableEvent(JVMPI_EVENT_METHOD_ENTRY2, NULL), JVMPI_SUCCESS);
    ck_assert(fake.source_on[SEAM_SRC_METHOD_ENTRY] && !fake.source_on[SEAM_SRC_METHOD_RECEIVER]);
}
END_TEST

START_TEST(test_compiled_load_replays_once_per_enable)
{
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_COMPILED_METHOD_LOAD, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(fake.compiled_replay_calls, 1);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_COMPILED_METHOD_LOAD, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(fake.compiled_replay_calls, 1);
    JVMPI_Lineno lines[2] = {{0, 10}, {16, 11}};
    layer_compiled_method_load(ENV_MAIN, METHOD_B, (void *)0x7000, 64, 2, lines);
    ck_assert_int_eq(n_recs, 1);
    ck_assert_int_eq(recs[0].event_type, JVMPI_EVENT_COMPILED_METHOD_LOAD);
    ck_assert_ptr_eq(recs[0].u.compiled_method_load.method_id, METHOD_B);
    ck_assert_ptr_eq(recs[0].u.compiled_method_load.code_addr, (void *)0x7000);
    ck_assert_int_eq(recs[0].u.compiled_method_load.code_size, 64);
    ck_assert_int_eq(recs[0].u.compiled_method_load.lineno_table_size, 2);
    ck_assert_ptr_eq(recs[0].u.compiled_method_load.lineno_table, lines);
    layer_compiled_method_unload(ENV_MAIN, METHOD_B); /* UNLOAD not enabled */
    ck_assert_int_eq(n_recs, 1);
    ck_assert_int_eq(pi->DisableEvent(JVMPI_EVENT_COMPILED_METHOD_LOAD, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(pi->EnableEvent(JVMPI_EVENT_COMPILED_METHOD_LOAD, NULL), JVMPI_SUCCESS);
    ck_assert_int_eq(fake.compiled_replay_calls, 2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("instr");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_if_taken_and_not);
    tcase_add_test(tc, test_tableswitch);
    tcase_add_test(tc, test_lookupswitch);
    tcase_add_test(tc, test_truncated_code_is_safe);
    tcase_add_test(tc, test_steps_hold_a_branch_until_the_next_step);
    tcase_add_test(tc, test_branch_from_before_a_disable_is_dropped);
    tcase_add_test(tc, test_method_events);
    tcase_add_test(tc, test_compiled_load_replays_once_per_enable);
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
