#include "build.h"

#include <stdint.h>

#include "classes.h"
#include "threads.h"

/* Every event starts zeroed: agents read union members other than the one
 * that was set. */
static const JVMPI_Event event_zero;

static jint event_type_of(jint event_type, bool requested)
{
    return requested ? (event_type | JVMPI_REQUESTED_EVENT) : event_type;
}

void build_class_load(JVMPI_Event *ev, const class_rec *c, bool requested)
{
    const seam_class_info *i = c->info;
    *ev = event_zero;
    ev->event_type = event_type_of(JVMPI_EVENT_CLASS_LOAD, requested);
    ev->u.class_load.class_name = i->name;
    ev->u.class_load.source_name = i->source_name;
    ev->u.class_load.num_interfaces = i->num_interfaces;
    ev->u.class_load.num_methods = i->num_methods;
    ev->u.class_load.methods = requested ? (JVMPI_Method *)classes_methods(c) : i->methods;
    ev->u.class_load.num_static_fields = i->num_statics;
    ev->u.class_load.statics = i->statics;
    ev->u.class_load.num_instance_fields = i->num_instances;
    ev->u.class_load.instances = i->instances;
    ev->u.class_load.class_id = i->id;
}

void build_thread_event(JVMPI_Event *ev, jint event_type, const thread_rec *t, bool requested)
{
    *ev = event_zero;
    ev->event_type = event_type_of(event_type, requested);
    ev->u.thread_start.thread_name = t->info.name;
    ev->u.thread_start.group_name = t->info.group_name;
    ev->u.thread_start.parent_name = t->info.parent_name;
    ev->u.thread_start.thread_id = t->info.id;
    ev->u.thread_start.thread_env_id = t->info.env;
}

void build_object_alloc(JVMPI_Event *ev, const seam_object_info *obj, bool requested)
{
    *ev = event_zero;
    ev->event_type = event_type_of(JVMPI_EVENT_OBJECT_ALLOC, requested);
    ev->u.obj_alloc.arena_id = 1; /* HotSpot had one arena and never said so */
    ev->u.obj_alloc.class_id = obj->class_id;
    ev->u.obj_alloc.is_array = obj->is_array;
    ev->u.obj_alloc.size = obj->size > INT32_MAX ? INT32_MAX : (jint)obj->size;
    ev->u.obj_alloc.obj_id = obj->id;
}
