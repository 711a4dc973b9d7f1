/*
 * a_datadump - DATA_DUMP_REQUEST on SIGQUIT.
 *
 * Options: out=FILE.  Appends "DATA_DUMP_REQUEST <n>" per event (A_Quit
 * polls the file for them) and "DONE count=<n>" at JVM_SHUT_DOWN.  The event
 * has no data: the whole union must be zero.
 */
#include "a_common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int count;

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_DATA_DUMP_REQUEST: {
        a_check_unused_zero(ev, offsetof(JVMPI_Event, u), "DATA_DUMP_REQUEST");
        pthread_mutex_lock(&lock);
        int n = ++count;
        pthread_mutex_unlock(&lock);
        a_rec("DATA_DUMP_REQUEST %d env %p", n, (void *)ev->env_id);
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        pthread_mutex_lock(&lock);
        int n = count;
        pthread_mutex_unlock(&lock);
        a_rec("DONE count=%d failures=%d", n, a_failures);
        break;
    default:
        a_fail("event type %d was never enabled", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (a_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    a_jvmpi->NotifyEvent = notify;
    a_expect_enable(JVMPI_EVENT_DATA_DUMP_REQUEST, "DATA_DUMP_REQUEST");
    a_expect_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    a_rec("START");
    return JNI_OK;
}
