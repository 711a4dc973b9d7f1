/*
 * c_gcswitch - switching the heap events on and off in a live VM shows no
 * collection.  Agent and JNI natives for tests/java/C_GcSwitch.java.
 *
 * Options: out=FILE.  Enables GC_START, GC_FINISH and OBJECT_FREE in
 * JVM_OnLoad.  HotSpot 5.0 ran a full collection when the first of
 * OBJECT_ALLOC, OBJECT_FREE, OBJECT_MOVE, ARENA_NEW/DELETE and the JNI
 * global reference events went on, and when the last went off, and posted
 * no GC_START/GC_FINISH for it: an agent that counts collections, or holds
 * a lock from GC_START to GC_FINISH, never saw one there.
 *
 * switchEvents(): enables OBJECT_ALLOC, OBJECT_MOVE, ARENA_NEW, ARENA_DELETE
 * and the JNI global reference events, disables them all again, waits a
 * second, and checks that no GC_START or GC_FINISH came meanwhile (the
 * program allocates nothing).  runGC(): RunGC must still bring a window,
 * so the agent is shown to see collections at all.
 */
#include "c_common.h"

#include <time.h>

static long n_starts, n_finishes;

static void JNICALL notify(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_GC_START:
        __atomic_add_fetch(&n_starts, 1, __ATOMIC_SEQ_CST);
        break;
    case JVMPI_EVENT_GC_FINISH:
        __atomic_add_fetch(&n_finishes, 1, __ATOMIC_SEQ_CST);
        break;
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    if (c_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    c_pi->NotifyEvent = notify;
    c_enable(JVMPI_EVENT_GC_START, "GC_START");
    c_enable(JVMPI_EVENT_GC_FINISH, "GC_FINISH");
    c_enable(JVMPI_EVENT_OBJECT_FREE, "OBJECT_FREE");
    c_log("START");
    return JNI_OK;
}

static const jint heap_events[] = {
    JVMPI_EVENT_OBJECT_ALLOC,        JVMPI_EVENT_OBJECT_MOVE,         JVMPI_EVENT_ARENA_NEW,
    JVMPI_EVENT_ARENA_DELETE,        JVMPI_EVENT_JNI_GLOBALREF_ALLOC, JVMPI_EVENT_JNI_GLOBALREF_FREE,
    JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC, JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE,
};
#define N_HEAP_EVENTS (int)(sizeof heap_events / sizeof heap_events[0])

JNIEXPORT void JNICALL Java_C_1GcSwitch_switchEvents(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    if (!c_ready("switchEvents"))
        return;
    long starts = __atomic_load_n(&n_starts, __ATOMIC_SEQ_CST);
    long finishes = __atomic_load_n(&n_finishes, __ATOMIC_SEQ_CST);
    int refused = 0;
    for (int i = 0; i < N_HEAP_EVENTS; i++)
        refused += c_pi->EnableEvent(heap_events[i], NULL) != JVMPI_SUCCESS;
    for (int i = 0; i < N_HEAP_EVENTS; i++)
        refused += c_pi->DisableEvent(heap_events[i], NULL) != JVMPI_SUCCESS;
    struct timespec pause = {1, 0}; /* a window would have come within it */
    nanosleep(&pause, NULL);
    starts = __atomic_load_n(&n_starts, __ATOMIC_SEQ_CST) - starts;
    finishes = __atomic_load_n(&n_finishes, __ATOMIC_SEQ_CST) - finishes;
    c_check(refused == 0, "the heap events enable and disable (%d refused)", refused);
    c_check(starts == 0 && finishes == 0,
            "switching the heap events on and off shows no GC_START/GC_FINISH (got %ld, %ld)", starts, finishes);
}

JNIEXPORT void JNICALL Java_C_1GcSwitch_runGC(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    if (!c_ready("runGC"))
        return;
    long starts = __atomic_load_n(&n_starts, __ATOMIC_SEQ_CST);
    c_pi->RunGC();
    starts = __atomic_load_n(&n_starts, __ATOMIC_SEQ_CST) - starts;
    c_check(starts >= 1, "RunGC still brings a GC_START (got %ld)", starts);
    c_summary("c_gcswitch");
}
