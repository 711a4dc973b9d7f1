/*
 * capsprobe - a plain JVM TI agent for the tests: which of the capabilities
 * that slow compiled code even unused did anyone in this VM take at start-up?
 *
 * HotSpot grants these only in the OnLoad phase; one that an environment
 * acquired there stays potential for every environment afterwards, and one
 * that none acquired is never potential again.  So a fresh environment made
 * at VM init, asked for its potential capabilities, tells what the other
 * agents (the layer among them) hold.
 *
 *   -agentpath:libcapsprobe.so=<file>
 * writes one line at VM init:
 *   CAPS single_step=N local_variables=N method_entry=N method_exit=N
 *        breakpoints=N frame_pop=N exceptions=N pop_frame=N early_return=N
 *        field_access=N field_modification=N owned_monitor=N contended_monitor=N
 * (on one line), 1 for a capability someone holds, 0 for one no one does.
 * The last two are MONITOR_DUMP's.
 *
 * Breakpoints and field access/modification are "solo": one environment at
 * a time, so one that another holds is not potential for a fresh
 * environment either.  For those the probe looks in its own Agent_OnLoad:
 * still potential then means that no one took them before it.  So load the
 * probe after the agents it watches (-agentpath options are loaded in
 * command-line order, JAVA_TOOL_OPTIONS' first).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jvmti.h>

static JavaVM *vm;
static char *path;
static jvmtiCapabilities at_onload; /* potential in the probe's Agent_OnLoad */

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *env, jthread thread)
{
    jvmtiEnv *fresh = NULL;
    jvmtiCapabilities c;
    memset(&c, 0, sizeof c);
    FILE *f = fopen(path, "w");
    if (f == NULL || (*vm)->GetEnv(vm, (void **)&fresh, JVMTI_VERSION_1_2) != JNI_OK ||
        (*fresh)->GetPotentialCapabilities(fresh, &c) != JVMTI_ERROR_NONE) {
        fprintf(stderr, "capsprobe: cannot probe the capabilities (output %s)\n", path);
        abort();
    }
    fprintf(f,
            "CAPS single_step=%d local_variables=%d method_entry=%d method_exit=%d breakpoints=%d frame_pop=%d "
            "exceptions=%d pop_frame=%d early_return=%d field_access=%d field_modification=%d owned_monitor=%d "
            "contended_monitor=%d\n",
            c.can_generate_single_step_events, c.can_access_local_variables, c.can_generate_method_entry_events,
            c.can_generate_method_exit_events, !at_onload.can_generate_breakpoint_events, c.can_generate_frame_pop_events,
            c.can_generate_exception_events, c.can_pop_frame, c.can_force_early_return,
            !at_onload.can_generate_field_access_events, !at_onload.can_generate_field_modification_events,
            c.can_get_owned_monitor_info,
            c.can_get_current_contended_monitor);
    fclose(f);
    (*fresh)->DisposeEnvironment(fresh);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    jvmtiEnv *jvmti = NULL;
    if (options == NULL || options[0] == '\0' || (*jvm)->GetEnv(jvm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
        fprintf(stderr, "capsprobe: usage -agentpath:libcapsprobe.so=<output file>\n");
        return JNI_ERR;
    }
    vm = jvm;
    path = strdup(options);
    memset(&at_onload, 0, sizeof at_onload);
    if ((*jvmti)->GetPotentialCapabilities(jvmti, &at_onload) != JVMTI_ERROR_NONE) {
        fprintf(stderr, "capsprobe: cannot read the potential capabilities in Agent_OnLoad\n");
        return JNI_ERR;
    }
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.VMInit = on_vm_init;
    if ((*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb) != JVMTI_ERROR_NONE ||
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL) != JVMTI_ERROR_NONE) {
        return JNI_ERR;
    }
    return JNI_OK;
}
