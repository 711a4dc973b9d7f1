/*
 * i_xrun - an agent started the old way, by the VM itself through
 * -Xruni_xrun (JVM_OnLoad runs after the OnLoad phase), that enables one
 * family of events in JVM_OnLoad and checks, at JVM_SHUT_DOWN, that it got
 * them for I_Xrun's code:
 *   group=none          CLASS_LOAD only (nothing costly)
 *   group=methods       METHOD_ENTRY and METHOD_EXIT: 1000 calls of I_Xrun.work each
 *   group=receiver      METHOD_ENTRY2: 1000 constructors and 1000 calls of work,
 *                       each with its receiver's ID, the constructor's the same
 *                       object as the call that followed on it
 *   group=instructions  INSTRUCTION_START: work's first instruction 1000 times,
 *                       its branch seen taken and not
 *   group=monitors      MONITOR_CONTENDED_ENTER/ENTERED (and EXIT, emulated, at most
 *                       one per ENTERED) and MONITOR_WAIT/WAITED on I_Xrun.lock
 * Options: group=<one of the above>, out=FILE.
 */
#include "c_common.h"

static const char *group;
static jmethodID work, ctor;
static long loads, work_entries, work_exits, ctor_entries, work_steps, taken, not_taken;
static long contended_enter, contended_entered, contended_exit, waits, waiteds, bad_receiver, pairs_unmatched;
static jobjectID last_ctor_receiver;
static JVMPI_RawMonitor lock;

static void class_load(JVMPI_Event *ev)
{
    if (strcmp(ev->u.class_load.class_name, "I_Xrun") != 0)
        return;
    loads++;
    for (int i = 0; i < ev->u.class_load.num_methods; i++) {
        JVMPI_Method *m = &ev->u.class_load.methods[i];
        if (strcmp(m->method_name, "work") == 0)
            work = m->method_id;
        else if (strcmp(m->method_name, "<init>") == 0)
            ctor = m->method_id;
    }
}

static void notify(JVMPI_Event *ev)
{
    c_pi->RawMonitorEnter(lock);
    switch (ev->event_type) {
    case JVMPI_EVENT_CLASS_LOAD:
        class_load(ev);
        break;
    case JVMPI_EVENT_METHOD_ENTRY:
        work_entries += ev->u.method.method_id == work;
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        work_exits += ev->u.method.method_id == work;
        break;
    case JVMPI_EVENT_METHOD_ENTRY2: {
        jobjectID obj = ev->u.method_entry2.obj_id;
        if (ev->u.method_entry2.method_id == ctor) {
            ctor_entries++;
            if (obj == NULL)
                C_FAIL_SOME(bad_receiver, "ENTRY2 of I_Xrun.<init> without its receiver");
            last_ctor_receiver = obj;
        } else if (ev->u.method_entry2.method_id == work) {
            work_entries++;
            if (obj == NULL || obj != last_ctor_receiver)
                C_FAIL_SOME(pairs_unmatched, "ENTRY2 of work on %p, its constructor's receiver was %p", (void *)obj,
                            (void *)last_ctor_receiver);
        }
        break;
    }
    case JVMPI_EVENT_INSTRUCTION_START:
        if (ev->u.instruction.method_id == work) {
            work_steps += ev->u.instruction.offset == 0;
            /* work: iload_1, iconst_3, irem, ifne <else> at offset 3 */
            if (ev->u.instruction.offset == 3) {
                if (ev->u.instruction.u.if_info.is_true)
                    taken++;
                else
                    not_taken++;
            }
        }
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
        contended_enter++;
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
        contended_entered++;
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
        contended_exit++;
        break;
    case JVMPI_EVENT_MONITOR_WAIT:
        waits++;
        break;
    case JVMPI_EVENT_MONITOR_WAITED:
        waiteds++;
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        c_check(loads == 1, "CLASS_LOAD of I_Xrun once (%ld)", loads);
        if (c_streq(group, "methods")) {
            c_check(work_entries == 1000 && work_exits == 1000, "1000 entries and exits of work (%ld, %ld)",
                    work_entries, work_exits);
        } else if (c_streq(group, "receiver")) {
            c_check(ctor_entries == 1000 && work_entries == 1000, "1000 ENTRY2 of <init> and of work (%ld, %ld)",
                    ctor_entries, work_entries);
            c_check(bad_receiver == 0 && pairs_unmatched == 0, "every receiver given, the constructor's the same");
        } else if (c_streq(group, "instructions")) {
            c_check(work_steps == 1000, "work's first instruction stepped 1000 times (%ld)", work_steps);
            c_check(taken == 666 && not_taken == 334, "work's branch taken 666 times, not taken 334 (%ld, %ld)",
                    taken, not_taken);
        } else if (c_streq(group, "monitors")) {
            /* The EXIT is emulated: none comes if the owner had left before the
             * blocked thread's ENTER asked who owned the monitor (docs/differences.md,
             * "MONITOR_CONTENDED_EXIT is emulated"); I_Xrun holds on a while to
             * make that rare, and an EXIT, when it comes, pairs with an ENTERED. */
            c_check(contended_enter >= 1 && contended_entered >= 1 && contended_exit <= contended_entered,
                    "contention on the lock seen (enter %ld, entered %ld, exit %ld)", contended_enter,
                    contended_entered, contended_exit);
            c_check(waits >= 1 && waiteds >= 1, "the wait seen (%ld, %ld)", waits, waiteds);
        }
        c_summary("i_xrun");
        break;
    default:
        break;
    }
    c_pi->RawMonitorExit(lock);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (c_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    char *g = c_opt(options, "group");
    group = g != NULL ? g : "none";
    lock = c_pi->RawMonitorCreate("i_xrun");
    c_pi->NotifyEvent = notify;
    c_enable(JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD");
    c_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    if (c_streq(group, "methods")) {
        c_enable(JVMPI_EVENT_METHOD_ENTRY, "METHOD_ENTRY");
        c_enable(JVMPI_EVENT_METHOD_EXIT, "METHOD_EXIT");
    } else if (c_streq(group, "receiver")) {
        c_enable(JVMPI_EVENT_METHOD_ENTRY2, "METHOD_ENTRY2");
    } else if (c_streq(group, "instructions")) {
        c_enable(JVMPI_EVENT_INSTRUCTION_START, "INSTRUCTION_START");
    } else if (c_streq(group, "monitors")) {
        c_enable(JVMPI_EVENT_MONITOR_CONTENDED_ENTER, "MONITOR_CONTENDED_ENTER");
        c_enable(JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, "MONITOR_CONTENDED_ENTERED");
        c_enable(JVMPI_EVENT_MONITOR_CONTENDED_EXIT, "MONITOR_CONTENDED_EXIT");
        c_enable(JVMPI_EVENT_MONITOR_WAIT, "MONITOR_WAIT");
        c_enable(JVMPI_EVENT_MONITOR_WAITED, "MONITOR_WAITED");
    } else if (!c_streq(group, "none")) {
        c_fail("unknown group=%s", group);
        return JNI_ERR;
    }
    return JNI_OK;
}
