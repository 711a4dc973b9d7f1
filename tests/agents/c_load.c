/*
 * c_load - no deadlock, nothing lost under load.  Agent and JNI natives for
 * tests/java/C_Load.java.
 *
 * Options: out=FILE.  Enables OBJECT_ALLOC, OBJECT_FREE, GC_START,
 * GC_FINISH, JVM_INIT_DONE and JVM_SHUT_DOWN in JVM_OnLoad; not CLASS_LOAD:
 * like the heap profilers of the day it learns classes on demand.
 * Behaves like those profilers:
 *  - holds its raw monitor "c_load heap" from GC_START to GC_FINISH;
 *  - in OBJECT_ALLOC enters that monitor, and for a class_id it does not
 *    know calls RequestEvent(CLASS_LOAD, class_id) and uses the answer at
 *    once; every 1000th allocation it also calls
 *    RequestEvent(OBJECT_ALLOC, obj_id) and checks the answer is that object;
 *  - counts C_Marker allocations (by the class name it learnt) and their
 *    frees.
 * The program runs 8 threads allocating markers under GC pressure; then
 * check(n) compares the agent's count with the program's, and after RunGC
 * every marker must have been freed (the program keeps none).
 */
#include "c_common.h"

static JVMPI_RawMonitor mon;
/* Everything below is guarded by mon (the JVMPI raw monitor), as in the
 * profilers this imitates. */
static c_classes classes;
static c_map markers; /* obj_id -> 1 live, 0 freed */
static jobjectID marker_id;
static long n_alloc, n_alloc_requests, n_class_requests, marker_allocs, marker_frees, n_windows, n_free;
static int in_gc;
static int f_req, f_class, f_dup, f_free, f_nest;

static _Thread_local int req_n;
static _Thread_local JVMPI_Event req_ev;

static void on_requested(JVMPI_Event *ev)
{
    req_n++;
    req_ev = *ev;
    if ((ev->event_type & ~JVMPI_REQUESTED_EVENT) == JVMPI_EVENT_CLASS_LOAD) {
        /* RequestEvent runs this synchronously, within the caller's hold
         * of mon; entering again is what such agents did. */
        c_pi->RawMonitorEnter(mon);
        if (c_classes_add(&classes, ev->u.class_load.class_id, ev->u.class_load.class_name) &&
            c_streq(ev->u.class_load.class_name, "C_Marker"))
            marker_id = ev->u.class_load.class_id;
        c_pi->RawMonitorExit(mon);
    }
}

static void on_alloc(JVMPI_Event *ev)
{
    jobjectID cid = ev->u.obj_alloc.class_id, oid = ev->u.obj_alloc.obj_id;
    c_pi->RawMonitorEnter(mon);
    long n = ++n_alloc;
    if (cid && !c_classes_name(&classes, cid)) {
        n_class_requests++;
        req_n = 0;
        jint rc = c_pi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, cid);
        if (rc != JVMPI_SUCCESS || req_n != 1 || req_ev.u.class_load.class_id != cid || !c_classes_name(&classes, cid))
            C_FAIL_SOME(f_class, "RequestEvent(CLASS_LOAD, %p) from OBJECT_ALLOC: rc %d, %d events, class_id %p", (void *)cid,
                        (int)rc, req_n, (void *)req_ev.u.class_load.class_id);
    }
    if (marker_id && cid == marker_id && ev->u.obj_alloc.is_array == JVMPI_NORMAL_OBJECT) {
        int existed;
        c_map_put(&markers, oid, 1, &existed);
        if (existed)
            C_FAIL_SOME(f_dup, "OBJECT_ALLOC of marker %p: ID seen before", (void *)oid);
        else
            marker_allocs++;
    }
    if (n % 1000 == 0) {
        n_alloc_requests++;
        req_n = 0;
        jint rc = c_pi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, oid);
        if (rc != JVMPI_SUCCESS || req_n != 1 ||
            req_ev.event_type != (JVMPI_EVENT_OBJECT_ALLOC | JVMPI_REQUESTED_EVENT) || req_ev.u.obj_alloc.obj_id != oid ||
            req_ev.u.obj_alloc.class_id != cid || req_ev.u.obj_alloc.is_array != ev->u.obj_alloc.is_array)
            C_FAIL_SOME(f_req,
                        "RequestEvent(OBJECT_ALLOC, %p) from its OBJECT_ALLOC: rc %d, %d events, type 0x%x obj %p "
                        "class %p (expected %p) is_array %d (expected %d)",
                        (void *)oid, (int)rc, req_n, (unsigned)req_ev.event_type, (void *)req_ev.u.obj_alloc.obj_id,
                        (void *)req_ev.u.obj_alloc.class_id, (void *)cid, (int)req_ev.u.obj_alloc.is_array,
                        (int)ev->u.obj_alloc.is_array);
    }
    c_pi->RawMonitorExit(mon);
}

static void notify(JVMPI_Event *ev)
{
    if (ev->event_type & JVMPI_REQUESTED_EVENT) {
        on_requested(ev);
        return;
    }
    switch (ev->event_type) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_alloc(ev);
        break;
    case JVMPI_EVENT_GC_START:
        c_pi->RawMonitorEnter(mon);
        if (in_gc)
            C_FAIL_SOME(f_nest, "GC_START inside a GC window");
        in_gc = 1;
        /* held until GC_FINISH */
        break;
    case JVMPI_EVENT_OBJECT_FREE: {
        /* Delivered inside the window, on the thread that holds mon. */
        c_pi->RawMonitorEnter(mon);
        n_free++;
        if (!in_gc)
            C_FAIL_SOME(f_free, "OBJECT_FREE %p outside a GC window", (void *)ev->u.obj_free.obj_id);
        c_slot *s = c_map_find(&markers, ev->u.obj_free.obj_id);
        if (s && s->val) {
            s->val = 0;
            marker_frees++;
        } else if (s) {
            C_FAIL_SOME(f_free, "OBJECT_FREE of marker %p twice", (void *)ev->u.obj_free.obj_id);
        }
        c_pi->RawMonitorExit(mon);
        break;
    }
    case JVMPI_EVENT_GC_FINISH:
        in_gc = 0;
        n_windows++;
        c_pi->RawMonitorExit(mon);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        c_log("JVM_INIT_DONE after %ld OBJECT_ALLOC", n_alloc);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        c_pi->RawMonitorEnter(mon);
        c_log("JVM_SHUT_DOWN: %ld OBJECT_ALLOC, %ld OBJECT_FREE, %ld GC windows, %ld RequestEvent(OBJECT_ALLOC), %ld "
              "RequestEvent(CLASS_LOAD), %zu classes",
              n_alloc, n_free, n_windows, n_alloc_requests, n_class_requests, classes.n);
        c_pi->RawMonitorExit(mon);
        c_summary("c_load");
        break;
    default:
        c_fail("event type %d was never enabled", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    if (c_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    mon = c_pi->RawMonitorCreate("c_load heap");
    if (!mon) {
        c_fail("RawMonitorCreate returned NULL");
        return JNI_ERR;
    }
    c_pi->NotifyEvent = notify;
    c_enable(JVMPI_EVENT_OBJECT_ALLOC, "OBJECT_ALLOC");
    c_enable(JVMPI_EVENT_OBJECT_FREE, "OBJECT_FREE");
    c_enable(JVMPI_EVENT_GC_START, "GC_START");
    c_enable(JVMPI_EVENT_GC_FINISH, "GC_FINISH");
    c_enable(JVMPI_EVENT_JVM_INIT_DONE, "JVM_INIT_DONE");
    c_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    c_log("START");
    return JNI_OK;
}

/* After the 8 threads: the agent's marker count against the program's,
 * then a RunGC after which every marker must be freed. */
JNIEXPORT void JNICALL Java_C_1Load_check(JNIEnv *env, jclass cls, jlong program_markers)
{
    (void)env;
    (void)cls;
    if (!c_ready("check"))
        return;
    c_pi->RawMonitorEnter(mon);
    long a = marker_allocs, w = n_windows, ra = n_alloc_requests;
    c_pi->RawMonitorExit(mon);
    c_log("program made %lld markers, the agent counted %ld; %ld GC windows so far", (long long)program_markers, a, w);
    c_check(a == program_markers, "OBJECT_ALLOC of C_Marker: %ld, the program made %lld", a, (long long)program_markers);
    c_check(w >= 1, "GCs happened while the threads allocated (%ld windows)", w);
    c_check(ra >= program_markers / 1000, "%ld RequestEvent(OBJECT_ALLOC) from OBJECT_ALLOC handlers", ra);
    c_pi->RunGC();
    c_pi->RawMonitorEnter(mon);
    long f = marker_frees;
    a = marker_allocs;
    c_pi->RawMonitorExit(mon);
    c_check(f == a, "after RunGC every marker was freed: %ld OBJECT_FREE of %ld allocated", f, a);
}
