#include "dispatch.h"

#include <stdint.h>
#include <string.h>

#include "defs.h"
#include "events.h"
#include "rawmon.h"

/* Events start zeroed (the JVMPI specification leaves no field undefined).
 * Copied from a zeroed constant rather than memset: for the 88 bytes of an
 * event GCC emits rep stos, slow to start, and this is on the path of every
 * method and allocation event. */
static const JVMPI_Event event_zero;

static jint type_of(jint event_type, bool requested)
{
    return requested ? (event_type | JVMPI_REQUESTED_EVENT) : event_type;
}

void dispatch_class_load(JNIEnv *env, const class_rec *c, bool requested)
{
    const seam_class_info *i = c->info;
    JVMPI_Event ev = event_zero;
    ev.event_type = type_of(JVMPI_EVENT_CLASS_LOAD, requested);
    ev.u.class_load.class_name = i->name;
    ev.u.class_load.source_name = i->source_name;
    ev.u.class_load.num_interfaces = i->num_interfaces;
    ev.u.class_load.num_methods = i->num_methods;
    ev.u.class_load.methods = requested ? (JVMPI_Method *)classes_methods(c) : i->methods;
    ev.u.class_load.num_static_fields = i->num_statics;
    ev.u.class_load.statics = i->statics;
    ev.u.class_load.num_instance_fields = i->num_instances;
    ev.u.class_load.instances = i->instances;
    ev.u.class_load.class_id = i->id;
    events_deliver(env, &ev);
}

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

void dispatch_thread(JNIEnv *env, jint event_type, const thread_rec *t, bool requested)
{
    JVMPI_Event ev = event_zero;
    ev.event_type = type_of(event_type, requested);
    ev.u.thread_start.thread_name = t->info.name;
    ev.u.thread_start.group_name = t->info.group_name;
    ev.u.thread_start.parent_name = t->info.parent_name;
    ev.u.thread_start.thread_id = t->info.id;
    ev.u.thread_start.thread_env_id = t->info.env;
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

/* A class is also an object, its java.lang.Class: where OBJECT_ALLOC is on,
 * that object's OBJECT_ALLOC comes first, so that an agent that looks the
 * class ID up as an object in its CLASS_LOAD handler (HPROF did) finds it.
 * Each agent is told in turn, each after what it was not told yet. */
void dispatch_announce_class(JNIEnv *env, class_rec *c)
{
    agents_mask due = events_agents(JVMPI_EVENT_CLASS_LOAD) & ~defs_sent_mask(&c->announced);
    AGENTS_EACH(k, due) {
        int saved = agents_target_begin((int)k);
        if (classes_claim_announce(c)) {
            defs_object(env, c->info->id, NULL);
            dispatch_class_load(env, c, false);
            defs_sent(&c->announced);
        }
        agents_target_end(saved);
    }
}

void dispatch_announce_thread(JNIEnv *env, thread_rec *t)
{
    if (t->internal) {
        return;
    }
    agents_mask due = events_agents(JVMPI_EVENT_THREAD_START) & ~defs_sent_mask(&t->announced);
    AGENTS_EACH(k, due) {
        int saved = agents_target_begin((int)k);
        if (threads_claim_announce(t)) {
            dispatch_thread(env, JVMPI_EVENT_THREAD_START, t, false);
            defs_sent(&t->announced);
        }
        agents_target_end(saved);
    }
}

agents_mask dispatch_object_alloc(JNIEnv *env, const seam_object_info *obj, bool requested)
{
    JVMPI_Event ev = event_zero;
    ev.event_type = type_of(JVMPI_EVENT_OBJECT_ALLOC, requested);
    ev.u.obj_alloc.arena_id = 1; /* HotSpot had one arena and never said so */
    ev.u.obj_alloc.class_id = obj->class_id;
    ev.u.obj_alloc.is_array = obj->is_array;
    ev.u.obj_alloc.size = obj->size > INT32_MAX ? INT32_MAX : (jint)obj->size;
    ev.u.obj_alloc.obj_id = obj->id;
    agents_mask sent = events_deliver(env, &ev);
    defs_object_sent(obj->id, sent);
    return sent;
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
