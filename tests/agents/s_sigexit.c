/*
 * s_sigexit.c - an agent shaped like Sun's HPROF where signals meet exit.
 *
 * One raw monitor of its own guards its output: the DATA_DUMP_REQUEST
 * handler (a SIGQUIT) takes it, calls RunGC under it and writes a line;
 * the JVM_SHUT_DOWN handler takes it, calls RunGC under it and writes the
 * closing line.  So a thread-dump request at exit finds the lock owned by
 * a thread waiting for a GC window, or the exiting thread finds it owned
 * by the Signal Dispatcher waiting for one: the shape that hung the JVM.
 * OBJECT_ALLOC only counts (it is issued with GC disabled: waiting there
 * for a lock held across RunGC would hang JDK 5.0 as well).  The script
 * checks the closing line and the exit code.
 *
 * Options: <output file>.
 */
#include "b_common.h"

static JVMPI_RawMonitor lock;
static long allocs, frees, windows, dumps;
static int gc_open, shut_down;

static void on_alloc(void) { __atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED); }

static void on_data_dump(void)
{
    b_pi->RawMonitorEnter(lock);
    if (!shut_down) {
        /* JVMPI sends nothing after JVM_SHUT_DOWN; an agent that closed its
         * file there could not write anyway. */
        b_pi->RunGC();
        dumps++;
        b_log("dump %ld: %ld allocations, %ld frees, %ld GC windows", dumps, allocs, frees, windows);
    }
    b_pi->RawMonitorExit(lock);
}

static void on_shut_down(void)
{
    b_pi->RawMonitorEnter(lock);
    b_pi->RunGC();
    shut_down = 1;
    b_log("s_sigexit: complete, %ld allocations, %ld frees, %ld GC windows, %ld dumps", allocs, frees, windows,
          dumps);
    b_pi->RawMonitorExit(lock);
}

static void JNICALL notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_alloc();
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        frees++; /* inside a window: no other handler runs meanwhile */
        break;
    case JVMPI_EVENT_GC_START:
        if (gc_open) {
            b_fail("GC_START inside a GC window");
        }
        gc_open = 1;
        break;
    case JVMPI_EVENT_GC_FINISH:
        gc_open = 0;
        windows++;
        break;
    case JVMPI_EVENT_DATA_DUMP_REQUEST:
        on_data_dump();
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        on_shut_down();
        break;
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    if (b_setup(vm, options, "s_sigexit") != JNI_OK) {
        return JNI_ERR;
    }
    b_pi->NotifyEvent = notify;
    lock = b_pi->RawMonitorCreate("s_sigexit lock");
    static const jint events[] = {JVMPI_EVENT_OBJECT_ALLOC, JVMPI_EVENT_OBJECT_FREE, JVMPI_EVENT_GC_START,
                                  JVMPI_EVENT_GC_FINISH, JVMPI_EVENT_DATA_DUMP_REQUEST, JVMPI_EVENT_JVM_SHUT_DOWN};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
        if (b_pi->EnableEvent(events[i], NULL) != JVMPI_SUCCESS) {
            b_fail("EnableEvent(%d)", (int)events[i]);
            return JNI_ERR;
        }
    }
    return JNI_OK;
}
