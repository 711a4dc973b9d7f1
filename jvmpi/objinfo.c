#include "objinfo.h"

#include <string.h>

#include "classes.h"
#include "ids.h"

/* java.lang.Class's own Class object names no class, as on HotSpot 5.0: an
 * agent that asks for the OBJECT_ALLOC of every class_id it does not know
 * (HPROF) would otherwise ask for this one again from its own handler,
 * without end. */
bool objinfo_class_object(jobjectID class_id, seam_object_info *out)
{
    class_rec *c = classes_acquire(class_id);
    jobjectID class_class = seam_class_class_id();
    if (c == NULL || class_class == NULL) {
        classes_release(c);
        return false;
    }
    memset(out, 0, sizeof *out);
    out->id = class_id;
    out->class_id = class_id == class_class ? NULL : class_class;
    out->is_array = JVMPI_NORMAL_OBJECT;
    out->size = c->info->object_size;
    classes_release(c);
    return true;
}

/* From the records, without JVM TI; else from JVM TI, which finds an
 * object by its ID only by scanning every tag. */
static bool instance_info(JNIEnv *env, jobjectID id, seam_object_info *out)
{
    int64_t tag = seam_tag_from_id(id);
    int64_t class_tag = 0;
    ids_object_state state = ids_object_class(tag, &class_tag);
    if (state == IDS_OBJECT_GONE) {
        return false;
    }
    class_rec *c = state == IDS_OBJECT_LIVE ? classes_acquire(seam_id_from_tag(class_tag)) : NULL;
    if (c != NULL) {
        memset(out, 0, sizeof *out);
        out->id = id;
        out->size = ids_object_size(tag);
        out->is_array = c->info->array_type;
        out->class_id = out->is_array == JVMPI_NORMAL_OBJECT ? c->info->id
                        : out->is_array == JVMPI_CLASS       ? c->info->element_id
                                                             : NULL;
        bool complete = out->is_array != JVMPI_CLASS || out->class_id != NULL;
        classes_release(c);
        if (complete) {
            return true;
        }
    }
    return seam_object_info_of(env, id, out);
}

bool objinfo_of(JNIEnv *env, jobjectID id, seam_object_info *out)
{
    return ids_is_class(seam_tag_from_id(id)) ? objinfo_class_object(id, out) : instance_info(env, id, out);
}
