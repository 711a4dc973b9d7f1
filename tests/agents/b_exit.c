/*
 * b_exit - ProfilerExit from an event handler (it_b_exit.sh).
 *
 * Options: OUTFILE,when=initdone   ProfilerExit(42) in the JVM_INIT_DONE handler
 *          OUTFILE,when=thread     ProfilerExit(42) in the THREAD_START handler
 *                                  of a thread named "b-exit-now"
 * The JVM must exit with code 42 at once; ProfilerExit never returns, so a
 * line after the call is a failure.
 */
#include "b_common.h"

#define AGENT "b_exit"

static const char *when = "";

static void do_exit(const char *where)
{
    b_log("calling ProfilerExit(42) from %s", where);
    b_pi->ProfilerExit(42);
    b_fail("ProfilerExit(42) returned to the %s handler", where);
}

static void notify_event(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_JVM_INIT_DONE:
        b_log("JVM_INIT_DONE");
        if (strcmp(when, "initdone") == 0)
            do_exit("JVM_INIT_DONE");
        break;
    case JVMPI_EVENT_THREAD_START:
        if (strcmp(when, "thread") == 0 && ev->u.thread_start.thread_name &&
            strcmp(ev->u.thread_start.thread_name, "b-exit-now") == 0)
            do_exit("THREAD_START");
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        b_log("JVM_SHUT_DOWN");
        break;
    default:
        b_fail("event %d was not enabled", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved);

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (b_setup(vm, options, AGENT) != JNI_OK)
        return JNI_ERR;
    when = b_opt("when");
    if (!when)
        when = "";
    if (strcmp(when, "initdone") != 0 && strcmp(when, "thread") != 0) {
        fprintf(stderr, AGENT ": need when=initdone or when=thread\n");
        return JNI_ERR;
    }
    b_pi->NotifyEvent = notify_event;
    b_check(b_pi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL) == JVMPI_SUCCESS, "EnableEvent(JVM_INIT_DONE)");
    b_check(b_pi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL) == JVMPI_SUCCESS, "EnableEvent(THREAD_START)");
    b_check(b_pi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL) == JVMPI_SUCCESS, "EnableEvent(JVM_SHUT_DOWN)");
    return JNI_OK;
}
