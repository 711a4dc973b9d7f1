/*
 * objects.c - converting between jobject and jobjectID (JVM TI tags).
 */
#include <pthread.h>

#include "backend.h"

/* Tagging an untagged object is check-then-set: two threads converting the
 * same object must agree on one ID. */
static pthread_mutex_t tag_lock = PTHREAD_MUTEX_INITIALIZER;

jobject seam_object_from_id(JNIEnv *env, jobjectID id)
{
    jobject obj = bk_object_of_tag(env, seam_tag_from_id(id));
    if (obj == NULL) {
        LOG_ERROR_UNLESS_VM_DEAD("jobjectID2jobject: no live object has ID %p", (void *)id);
    }
    return obj;
}

jobjectID seam_id_from_object(JNIEnv *env, jobject obj)
{
    jlong tag = 0;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetTag, obj, &tag))) {
        return NULL;
    }
    if (tag != 0 && !ids_is_pending_class(tag)) {
        return seam_id_from_tag(tag);
    }
    if (bk_is_class_object(env, obj)) {
        /* A class's ID is its Class object's.  The primitive types' Class
         * objects are objects with no class ID (they have no CLASS_LOAD);
         * they were tagged as such at VM init (bk_heap_vm_init). */
        jobjectID id = bk_class_id(env, (jclass)obj);
        if (id == NULL) {
            LOG_DEBUG("a Class object of a class not linked yet has no JVMPI ID");
        }
        return id;
    }
    tag = bk_object_tag(env, obj);
    return tag != 0 ? seam_id_from_tag(tag) : NULL;
}

jlong bk_object_tag(JNIEnv *env, jobject obj)
{
    jlong tag = 0;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetTag, obj, &tag)) || tag != 0) {
        return tag;
    }
    /* Its class is looked up before the lock: that may define the class. */
    jclass klass = (*env)->GetObjectClass(env, obj);
    jlong class_tag = klass != NULL ? bk_class_tag(env, klass) : 0;
    if (klass != NULL) {
        (*env)->DeleteLocalRef(env, klass);
    }
    {
        pthread_mutex_lock(&tag_lock);
        JVMTI_CALL(bk.jvmti, GetTag, obj, &tag);
        if (tag == 0) {
            jlong size = 0;
            JVMTI_CALL(bk.jvmti, GetObjectSize, obj, &size);
            tag = ids_next_unannounced_object(size, class_tag);
            if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, SetTag, obj, tag))) {
                ids_forget(tag);
                tag = 0;
            }
        }
        pthread_mutex_unlock(&tag_lock);
    }
    return tag;
}
