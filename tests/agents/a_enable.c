/*
 * a_enable - EnableEvent / DisableEvent return codes for every number from
 * -1 to 70, in JVM_OnLoad and again in the live phase (JVM_INIT_DONE).
 *
 * Options: out=FILE.  Writes "RC phase n enable disable" for each number and
 * a FAIL line for every return code that differs from the table below.
 *
 * After the JVM_OnLoad round every event is disabled again except
 * JVM_INIT_DONE and JVM_SHUT_DOWN: until the live round starts, any other
 * event type is a failure (only one thread exists during JVM_OnLoad, so
 * nothing can race with the DisableEvent calls).  The "accepted, never sent"
 * events (class Z below) are enabled for the whole run: any of them arriving
 * is a failure.
 */
#include "a_common.h"

#define LO (-1)
#define HI 70

/* Expected results, from the layer's contract:
 *  S  carried by the layer: JVMPI_SUCCESS.
 *  Z  accepted but never sent: OBJECT_MOVE (IDs are JVM TI tags, which
 *     survive moves) and ARENA_NEW/ARENA_DELETE (HotSpot never had arenas).
 *     Real agents quit when enabling these fails, so: JVMPI_SUCCESS.
 *  N  never available: HEAP_DUMP, MONITOR_DUMP and OBJECT_DUMP are only for
 *     RequestEvent; numbers that name no event (<= 0, 10-32, 36, > 61).
 *     JDK 5.0 answered JVMPI_NOT_AVAILABLE for all of these.
 *  L  an event number JVMPI defines that is in none of the lists above:
 *     JVMPI_NOT_AVAILABLE.  The layer carries every JVMPI event, so no
 *     number falls here today; an event left out of the table would. */
static char expected_class(int n)
{
    switch (n) {
    case JVMPI_EVENT_THREAD_START:
    case JVMPI_EVENT_THREAD_END:
    case JVMPI_EVENT_CLASS_LOAD_HOOK:
    case JVMPI_EVENT_CLASS_LOAD:
    case JVMPI_EVENT_CLASS_UNLOAD:
    case JVMPI_EVENT_DATA_DUMP_REQUEST:
    case JVMPI_EVENT_JVM_INIT_DONE:
    case JVMPI_EVENT_JVM_SHUT_DOWN:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT:
    /* heap, GC and JNI references */
    case JVMPI_EVENT_OBJECT_ALLOC:
    case JVMPI_EVENT_OBJECT_FREE:
    case JVMPI_EVENT_GC_START:
    case JVMPI_EVENT_GC_FINISH:
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_GLOBALREF_FREE:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE:
    /* Java monitors */
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_MONITOR_CONTENDED_EXIT:
    case JVMPI_EVENT_MONITOR_WAIT:
    case JVMPI_EVENT_MONITOR_WAITED:
    /* methods, compiled code, instructions, the reset trigger */
    case JVMPI_EVENT_METHOD_ENTRY:
    case JVMPI_EVENT_METHOD_ENTRY2:
    case JVMPI_EVENT_METHOD_EXIT:
    case JVMPI_EVENT_COMPILED_METHOD_LOAD:
    case JVMPI_EVENT_COMPILED_METHOD_UNLOAD:
    case JVMPI_EVENT_INSTRUCTION_START:
    case JVMPI_EVENT_DATA_RESET_REQUEST:
        return 'S';
    case JVMPI_EVENT_OBJECT_MOVE:
    case JVMPI_EVENT_ARENA_NEW:
    case JVMPI_EVENT_ARENA_DELETE:
        return 'Z';
    case JVMPI_EVENT_HEAP_DUMP:
    case JVMPI_EVENT_MONITOR_DUMP:
    case JVMPI_EVENT_OBJECT_DUMP:
        return 'N';
    }
    if (n <= 0 || (n >= 10 && n <= 32) || n == 36 || n > JVMPI_MAX_EVENT_TYPE_VAL)
        return 'N';
    return 'L';
}

static jint expected_rc(int n)
{
    char c = expected_class(n);
    return c == 'S' || c == 'Z' ? JVMPI_SUCCESS : JVMPI_NOT_AVAILABLE;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* 0: after the JVM_OnLoad round; 1: live round running; 2: live round over */
static int phase;
static int rounds_done;
static long late_events;

static void enable_never_sent(void)
{
    for (int n = LO; n <= HI; n++)
        if (expected_class(n) == 'Z' && a_jvmpi->EnableEvent((jint)n, NULL) != JVMPI_SUCCESS)
            a_fail("re-enabling event %d failed", n);
}

static void round_of(const char *name)
{
    int bad = 0;
    for (int n = LO; n <= HI; n++) {
        jint want = expected_rc(n);
        jint en = a_jvmpi->EnableEvent((jint)n, NULL);
        jint dis = a_jvmpi->DisableEvent((jint)n, NULL);
        a_rec("RC %s %d %d %d", name, n, (int)en, (int)dis);
        if (en != want) {
            a_fail("%s: EnableEvent(%d) returned %d, expected %d (class %c)", name, n, (int)en, (int)want,
                   expected_class(n));
            bad++;
        }
        if (dis != want) {
            a_fail("%s: DisableEvent(%d) returned %d, expected %d (class %c)", name, n, (int)dis, (int)want,
                   expected_class(n));
            bad++;
        }
    }
    pthread_mutex_lock(&lock);
    rounds_done++;
    pthread_mutex_unlock(&lock);
    a_rec("ROUND %s numbers %d..%d mismatches %d", name, LO, HI, bad);
}

static void notify(JVMPI_Event *ev)
{
    jint t = ev->event_type;
    pthread_mutex_lock(&lock);
    int ph = phase;
    pthread_mutex_unlock(&lock);
    if (t >= LO && t <= HI && expected_class(t) == 'Z') {
        a_fail("event type %d was sent; the layer has nothing to send it for", (int)t);
        return;
    }

    if (t == JVMPI_EVENT_JVM_SHUT_DOWN) {
        pthread_mutex_lock(&lock);
        int r = rounds_done;
        long l = late_events;
        pthread_mutex_unlock(&lock);
        if (r != 2)
            a_fail("%d rounds ran, expected 2", r);
        a_rec("DONE rounds=%d stray_after_live_round=%ld failures=%d", r, l, a_failures);
        return;
    }
    if (ph == 0 && t == JVMPI_EVENT_JVM_INIT_DONE) {
        pthread_mutex_lock(&lock);
        phase = 1;
        pthread_mutex_unlock(&lock);
        round_of("live");
        if (a_jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL) != JVMPI_SUCCESS)
            a_fail("re-enabling JVM_SHUT_DOWN failed");
        enable_never_sent();
        pthread_mutex_lock(&lock);
        phase = 2;
        pthread_mutex_unlock(&lock);
        return;
    }
    if (ph == 0) {
        a_fail("event type %d arrived after the JVM_OnLoad round disabled it", (int)t);
    } else if (ph == 2) {
        /* Another thread may have been inside a delivery when the live round
         * disabled the event again; JVMPI never promised that DisableEvent
         * waits for those.  Counted, not failed. */
        pthread_mutex_lock(&lock);
        late_events++;
        pthread_mutex_unlock(&lock);
        a_rec("NOTE event type %d after the live round", (int)t);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (a_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    a_jvmpi->NotifyEvent = notify;
    a_rec("START");
    round_of("onload");
    if (a_jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL) != JVMPI_SUCCESS ||
        a_jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL) != JVMPI_SUCCESS)
        a_fail("re-enabling JVM_INIT_DONE / JVM_SHUT_DOWN failed");
    enable_never_sent();
    return JNI_OK;
}
