#include "dispatch.h"

#include <stdint.h>
#include <string.h>

#include "events.h"
#include "rawmon.h"

/* Events start zeroed (the JVMPI specification leaves no field undefined).
 * Copied from a zeroed constant rather than memset: for the 88 bytes of an
 * event GCC emits rep stos, slow to start, and this is on the path of every
 * method and allocation event. */
static const JVMPI_Event event_zero;

void dispatch_class_unload(JNIEnv *env, jobjectID class_id)
{
    /* The handler may request the class's CLASS_LOAD: HotSpot 5.0 answered
     * from data saved at the unload, its methods (and their IDs) gone. */
    classes_mark_unloading(class_id);
    JVMPI_Event ev = event_zero;
    ev.event_type = JVMPI_EVENT_CLASS_UNLOAD;
    ev.u.class_unload.class_id = class_id;
    events_deliver(env, &ev);
}

void dispatch_plain(JNIEnv *env, jint event_type)
{
    JVMPI_Event ev = event_zero;
    ev.event_type = event_type;
    events_deliver(env, &ev);
}

void dispatch_raw_monitor(jint event_type, const char *name, JVMPI_RawMonitor id)
{
    if (!events_enabled(event_type)) {
        return;
    }
    JVMPI_Event ev = event_zero;
    ev.event_type = event_type;
    ev.u.raw_monitor.name = (char *)name;
    ev.u.raw_monitor.id = id;
    /* To the agent that made the monitor alone. */
    int creator = rawmon_creator(id);
    events_deliver_to(creator >= 0 ? AGENTS_BIT(creator) : 0, seam_current_env(), &ev);
}

agents_mask dispatch_object_free(JNIEnv *env, jobjectID obj_id, agents_mask agents)
{
    JVMPI_Event ev = event_zero;
    ev.event_type = JVMPI_EVENT_OBJECT_FREE;
    ev.u.obj_free.obj_id = obj_id;
    return events_deliver_to(agents, env, &ev);
}

void dispatch_gc_finish(JNIEnv *env, jlong used_objects, jlong used_object_space, jlong total_object_space)
{
    JVMPI_Event ev = event_zero;
    ev.event_type = JVMPI_EVENT_GC_FINISH;
    ev.u.gc_info.used_objects = used_objects;
    ev.u.gc_info.used_object_space = used_object_space;
    ev.u.gc_info.total_object_space = total_object_space;
    events_deliver(env, &ev);
}

void dispatch_jni_ref(JNIEnv *env, jint event_type, jobjectID obj_id, jobject ref)
{
    JVMPI_Event ev = event_zero;
    ev.event_type = event_type;
    if (event_type == JVMPI_EVENT_JNI_GLOBALREF_ALLOC || event_type == JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC) {
        ev.u.jni_globalref_alloc.obj_id = obj_id;
        ev.u.jni_globalref_alloc.ref_id = ref;
    } else {
        ev.u.jni_globalref_free.ref_id = ref;
    }
    events_deliver(env, &ev);
}

void dispatch_monitor(JNIEnv *env, jint event_type, jobjectID object)
{
    JVMPI_Event ev = event_zero;
    ev.event_type = event_type;
    ev.u.monitor.object = object;
    events_deliver(env, &ev);
}

void dispatch_monitor_exit_as(JNIEnv *env_id, jobjectID object)
{
    JVMPI_Event ev = event_zero;
    ev.event_type = JVMPI_EVENT_MONITOR_CONTENDED_EXIT;
    ev.u.monitor.object = object;
    events_deliver_as(env_id, &ev);
}

void dispatch_monitor_wait(JNIEnv *env, jint event_type, jobjectID object, jlong timeout)
{
    JVMPI_Event ev = event_zero;
    ev.event_type = event_type;
    ev.u.monitor_wait.object = object;
    ev.u.monitor_wait.timeout = timeout;
    events_deliver(env, &ev);
}

/* Method events are not zeroed first: they come by the hundred million,
 * and copying the zeroed event cost javac's counting run 7%.  What an
 * agent handling both entry events in one place would read is set: a
 * METHOD_ENTRY's or METHOD_EXIT's obj_id is NULL. */
static inline void method_event(JNIEnv *env, jint event_type, jmethodID method, jobjectID obj)
{
    JVMPI_Event ev;
    ev.event_type = event_type;
    ev.env_id = NULL;
    ev.u.method_entry2.method_id = method;
    ev.u.method_entry2.obj_id = obj;
    events_deliver_method(env, &ev);
}

inline void dispatch_method(JNIEnv *env, jint event_type, jmethodID method)
{
    method_event(env, event_type, method, NULL);
}

inline void dispatch_method_entry2(JNIEnv *env, jmethodID method, jobjectID receiver)
{
    method_event(env, JVMPI_EVENT_METHOD_ENTRY2, method, receiver);
}

void dispatch_compiled_method_unload(JNIEnv *env, jmethodID method)
{
    JVMPI_Event ev = event_zero;
    ev.event_type = JVMPI_EVENT_COMPILED_METHOD_UNLOAD;
    ev.u.compiled_method_unload.method_id = method;
    events_deliver(env, &ev);
}

void dispatch_compiled_method_load(JNIEnv *env, jmethodID method, const void *code_addr, jint code_size,
                                   jint num_lines, const JVMPI_Lineno *lines)
{
    JVMPI_Event ev = event_zero;
    ev.event_type = JVMPI_EVENT_COMPILED_METHOD_LOAD;
    ev.u.compiled_method_load.method_id = method;
    ev.u.compiled_method_load.code_addr = (void *)code_addr;
    ev.u.compiled_method_load.code_size = code_size;
    ev.u.compiled_method_load.lineno_table_size = num_lines;
    ev.u.compiled_method_load.lineno_table = (JVMPI_Lineno *)lines;
    events_deliver(env, &ev);
}
