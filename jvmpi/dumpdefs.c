#include "dumpdefs.h"

#include <string.h>

#include "classes.h"
#include "defs.h"
#include "events.h"
#include "ids.h"

static void define_value(JNIEnv *env, jint type, seam_heap_bits v)
{
    if (type == JVMPI_CLASS || type == JVMPI_NORMAL_OBJECT) {
        defs_object(env, v.id, NULL);
    }
}

static void define_fields(JNIEnv *env, const seam_heap_field *fields, jint n)
{
    for (jint i = 0; i < n; i++) {
        define_value(env, fields[i].type, fields[i].v);
    }
}

/* What an OBJECT_ALLOC says of a dumped object, from the dump itself: an
 * object with a late ID carries its size in its tag (jvmpi/ids.c). */
static bool dumped_object_info(const seam_heap_object *o, seam_object_info *out)
{
    memset(out, 0, sizeof *out);
    out->id = o->id;
    out->size = ids_object_size(seam_tag_from_id(o->id));
    switch (o->kind) {
    case SEAM_HEAP_INSTANCE:
        out->class_id = o->class_id;
        out->is_array = JVMPI_NORMAL_OBJECT;
        return true;
    case SEAM_HEAP_PRIM_ARRAY:
        out->is_array = o->elem_type;
        return true;
    case SEAM_HEAP_OBJ_ARRAY: {
        class_rec *c = classes_acquire(o->class_id);
        out->is_array = JVMPI_CLASS;
        out->class_id = c != NULL ? c->info->element_id : NULL;
        classes_release(c);
        /* An array class defined before its element class could be linked
         * (before VM init): asked afresh, which links it now. */
        return out->class_id != NULL;
    }
    default:
        return false; /* a Class object: its class record says it */
    }
}

void dumpdefs_heap(JNIEnv *env, const seam_heap_snapshot *snap)
{
    for (int i = 0; i < snap->num_classes; i++) {
        const seam_heap_class *c = &snap->classes[i];
        defs_class(env, c->id);
        defs_class(env, c->super);
        defs_class(env, c->element);
        for (jint k = 0; k < c->num_interfaces; k++) {
            defs_class(env, c->interfaces[k]);
        }
    }
    for (int i = 0; i < snap->num_objects; i++) {
        defs_class(env, snap->objects[i].class_id);
    }
    for (int i = 0; i < snap->num_roots; i++) {
        defs_thread(env, snap->roots[i].thread);
    }
    if (events_agents(JVMPI_EVENT_OBJECT_ALLOC) == 0) {
        return;
    }
    for (int i = 0; i < snap->num_objects; i++) {
        const seam_heap_object *o = &snap->objects[i];
        seam_object_info info;
        defs_object(env, o->id, dumped_object_info(o, &info) ? &info : NULL);
    }
    for (int i = 0; i < snap->num_classes; i++) {
        const seam_heap_class *c = &snap->classes[i];
        defs_object(env, c->id, NULL);
        defs_object(env, c->loader, NULL);
        defs_object(env, c->signers, NULL);
        defs_object(env, c->domain, NULL);
        defs_object(env, c->name, NULL);
        define_fields(env, c->statics, c->num_statics);
    }
    for (int i = 0; i < snap->num_objects; i++) {
        const seam_heap_object *o = &snap->objects[i];
        if (o->kind == SEAM_HEAP_INSTANCE) {
            define_fields(env, o->u.fields, o->count);
        } else if (o->kind == SEAM_HEAP_OBJ_ARRAY && o->u.elements != NULL) {
            for (jint k = 0; k < o->count; k++) {
                defs_object(env, o->u.elements[k], NULL);
            }
        }
    }
    for (int i = 0; i < snap->num_roots; i++) {
        defs_object(env, snap->roots[i].id, NULL);
        defs_object(env, snap->roots[i].thread, NULL);
    }
}

void dumpdefs_monitors(JNIEnv *env, const seam_monitor_snapshot *snap)
{
    for (int i = 0; i < snap->num_threads; i++) {
        defs_thread(env, snap->threads[i].id);
        dumpdefs_traces(env, &(JVMPI_CallTrace){NULL, snap->threads[i].num_frames, snap->threads[i].frames}, 1);
    }
    for (int i = 0; i < snap->num_monitors; i++) {
        const seam_monitor_info *m = &snap->monitors[i];
        defs_object(env, m->object, NULL);
        defs_thread(env, m->owner);
        for (jint k = 0; k < m->n_entering; k++) {
            defs_thread(env, m->entering[k]);
        }
        for (jint k = 0; k < m->n_waiting; k++) {
            defs_thread(env, m->waiting[k]);
        }
    }
}

void dumpdefs_traces(JNIEnv *env, const JVMPI_CallTrace *traces, int count)
{
    for (int i = 0; i < count; i++) {
        for (jint k = 0; k < traces[i].num_frames; k++) {
            defs_method(env, traces[i].frames[k].method_id);
        }
    }
}
