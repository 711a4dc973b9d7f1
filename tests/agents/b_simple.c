/*
 * b_simple - the smallest useful agent (it_b_loaderr.sh): echoes its options
 * and reports JVM_INIT_DONE and JVM_SHUT_DOWN on stdout.  Used to check that
 * the layer finds an agent given by bare name.
 */
#include <jvmpi.h>
#include <stdio.h>

static JVMPI_Interface *jvmpi;

static void notify_event(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_JVM_INIT_DONE:
        printf("b_simple: JVM_INIT_DONE\n");
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        printf("b_simple: JVM_SHUT_DOWN\n");
        break;
    default:
        printf("FAIL b_simple: event %d was not enabled\n", (int)ev->event_type);
    }
    fflush(stdout);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved);

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if ((*vm)->GetEnv(vm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    jvmpi->NotifyEvent = notify_event;
    if (jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL) != JVMPI_SUCCESS) {
        printf("FAIL b_simple: EnableEvent failed\n");
        return JNI_ERR;
    }
    printf("b_simple: JVM_OnLoad options '%s'\n", options ? options : "(null)");
    fflush(stdout);
    return JNI_OK;
}
