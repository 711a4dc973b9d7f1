/*
 * c_classes - OBJECT_ALLOC names the right class while collections move
 * class mirrors (the layer's class cache, jvmti_backend/classcache.c).
 * Agent for tests/java/C_Classes.java.
 *
 * Options: out=FILE.  Enables CLASS_LOAD, OBJECT_ALLOC, JVM_INIT_DONE and
 * JVM_SHUT_DOWN in JVM_OnLoad.  Counts, per class C_Classes$Knn, the OBJECT_ALLOCs of its
 * instances (is_array JVMPI_NORMAL_OBJECT) and of its arrays (JVMPI_CLASS,
 * class_id the element class), and checks on the way that
 *  - every class_id was defined by a CLASS_LOAD before the allocation
 *    (after JVM_INIT_DONE: the start-up replay sends the objects already in
 *    the heap before the CLASS_LOADs, as HotSpot 5.0 did);
 *  - all instances of one class have one size, and a larger class (more
 *    fields) has larger instances: an allocation filed under the wrong
 *    class shows as a second size.
 * At JVM_SHUT_DOWN it writes "count C_Classes$Knn objects=N arrays=M" for
 * every such class; the test compares those with the program's "expect"
 * lines.
 */
#include "c_common.h"

#define NK 16

static JVMPI_RawMonitor mon;
/* guarded by mon */
static c_classes classes;
static long objects[NK], arrays[NK], sizes[NK];
static long n_alloc, n_undefined;
static int init_done;
static int f_undefined, f_size;

/* Which Knn a class name is, or -1. */
static int k_of(const char *name)
{
    static const char prefix[] = "C_Classes$K";
    if (name == NULL || strncmp(name, prefix, sizeof prefix - 1) != 0)
        return -1;
    int k = atoi(name + sizeof prefix - 1);
    return k >= 0 && k < NK ? k : -1;
}

static void on_alloc(JVMPI_Event *ev)
{
    jobjectID cid = ev->u.obj_alloc.class_id;
    jint is_array = ev->u.obj_alloc.is_array;
    c_pi->RawMonitorEnter(mon);
    n_alloc++;
    const char *name = cid ? c_classes_name(&classes, cid) : NULL;
    if (cid && !name && init_done) {
        n_undefined++;
        C_FAIL_SOME(f_undefined, "OBJECT_ALLOC obj %p names class_id %p before any CLASS_LOAD of it (is_array %d)",
                    (void *)ev->u.obj_alloc.obj_id, (void *)cid, (int)is_array);
    }
    int k = k_of(name);
    if (k >= 0 && is_array == JVMPI_NORMAL_OBJECT) {
        objects[k]++;
        if (sizes[k] == 0)
            sizes[k] = ev->u.obj_alloc.size;
        else if (sizes[k] != ev->u.obj_alloc.size)
            C_FAIL_SOME(f_size, "an OBJECT_ALLOC of C_Classes$K%02d has size %d, others %ld: another class's object",
                        k, (int)ev->u.obj_alloc.size, sizes[k]);
    } else if (k >= 0 && is_array == JVMPI_CLASS) {
        arrays[k]++;
    }
    c_pi->RawMonitorExit(mon);
}

static void on_shut_down(void)
{
    c_pi->RawMonitorEnter(mon);
    c_log("allocations %ld, of undefined classes %ld", n_alloc, n_undefined);
    for (int k = 0; k < NK; k++)
        c_log("count C_Classes$K%02d objects=%ld arrays=%ld", k, objects[k], arrays[k]);
    for (int k = 1; k < NK; k++)
        if (sizes[k] && sizes[k - 1])
            c_check(sizes[k] > sizes[k - 1], "C_Classes$K%02d objects (%ld bytes) are larger than K%02d's (%ld)", k,
                    sizes[k], k - 1, sizes[k - 1]);
    c_check(n_undefined == 0, "every class_id was defined by a CLASS_LOAD first (%ld were not)", n_undefined);
    c_pi->RawMonitorExit(mon);
    c_summary("c_classes");
}

static void notify_event(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        on_alloc(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        c_pi->RawMonitorEnter(mon);
        c_classes_add(&classes, ev->u.class_load.class_id, ev->u.class_load.class_name);
        c_pi->RawMonitorExit(mon);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        c_pi->RawMonitorEnter(mon);
        init_done = 1;
        c_pi->RawMonitorExit(mon);
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
    if (c_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    mon = c_pi->RawMonitorCreate("c_classes");
    c_pi->NotifyEvent = notify_event;
    c_log("START");
    c_enable(JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD");
    c_enable(JVMPI_EVENT_OBJECT_ALLOC, "OBJECT_ALLOC");
    c_enable(JVMPI_EVENT_JVM_INIT_DONE, "JVM_INIT_DONE");
    c_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    return JNI_OK;
}
