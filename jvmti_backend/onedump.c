/*
 * onedump.c - OBJECT_DUMP's one object, read through JNI instead of a heap
 * walk.
 *
 * FollowReferences from the object would report the same references and
 * values, but it is a VM operation, and on JDK 17 HotSpot ends every one by
 * visiting the whole heap to restore the object headers it marked: an
 * OBJECT_DUMP request then costs time in proportion to the heap.  Reading
 * the object's fields (GetClassFields, Get<Type>Field) and elements takes
 * time in proportion to the object, and records them exactly as the walk's
 * callbacks do: under JVM TI's field indexes (fieldmap.c), referents by
 * their IDs (given one if they have none, as the walk does), null
 * references left out.  Class objects keep the walk: their loader and
 * statics are what JVM TI's reference kinds describe.
 */
#include "onedump.h"

#include <stdlib.h>
#include <string.h>

#include "fieldmap.h"

static jlong ref_tag(JNIEnv *env, jobject ref)
{
    jobjectID id = ref != NULL ? seam_id_from_object(env, ref) : NULL;
    if (ref != NULL) {
        (*env)->DeleteLocalRef(env, ref);
    }
    return seam_tag_from_id(id);
}

static bool read_field(JNIEnv *env, walk *w, int32_t owner, jobject obj, jfieldID f, char type, jint index)
{
    seam_heap_bits v;
    memset(&v, 0, sizeof v);
    jint jvmpi_type = JVMPI_CLASS;
    switch (type) {
    case 'Z': v.z = (*env)->GetBooleanField(env, obj, f); jvmpi_type = JVMPI_BOOLEAN; break;
    case 'B': v.b = (*env)->GetByteField(env, obj, f); jvmpi_type = JVMPI_BYTE; break;
    case 'C': v.c = (*env)->GetCharField(env, obj, f); jvmpi_type = JVMPI_CHAR; break;
    case 'S': v.s = (*env)->GetShortField(env, obj, f); jvmpi_type = JVMPI_SHORT; break;
    case 'I': v.i = (*env)->GetIntField(env, obj, f); jvmpi_type = JVMPI_INT; break;
    case 'J': v.j = (*env)->GetLongField(env, obj, f); jvmpi_type = JVMPI_LONG; break;
    case 'F': v.f = (*env)->GetFloatField(env, obj, f); jvmpi_type = JVMPI_FLOAT; break;
    case 'D': v.d = (*env)->GetDoubleField(env, obj, f); jvmpi_type = JVMPI_DOUBLE; break;
    default: {
        jlong tag = ref_tag(env, (*env)->GetObjectField(env, obj, f));
        if (tag == 0) {
            return true; /* null: JVM TI reports no reference */
        }
        v = heapstore_ref_bits(tag);
        break;
    }
    }
    heapstore_add_fact(w, owner, F_FIELD, jvmpi_type, index, v);
    return !w->failed;
}

static bool read_instance(JNIEnv *env, walk *w, int32_t owner, jobject obj, jlong class_tag)
{
    klasses ks;
    memset(&ks, 0, sizeof ks);
    ks.env = env;
    ks.w = w;
    /* Only the object's class and its superclasses are needed, not every
     * loaded class; their local references go with the caller's frame. */
    bool ok = true;
    for (jclass c = (*env)->GetObjectClass(env, obj); c != NULL && ok; c = (*env)->GetSuperclass(env, c)) {
        jlong tag = 0;
        ok = JVMTI_OK(JVMTI_CALL(bk.jvmti_cls, GetTag, c, &tag)) && is_class_id(tag) &&
             (fieldmap_klass_of(&ks, tag) != NULL || fieldmap_klass_add(&ks, tag, c) != NULL);
    }
    klass *k = ok ? fieldmap_klass_field_map(&ks, class_tag) : NULL;
    ok = k != NULL && k->map != NULL;
    /* k->map lists, from index map_base on, every field of the chain from
     * java.lang.Object down, each class's in GetClassFields order. */
    for (int32_t at = 0; ok && at < k->map_count;) {
        jlong decl = k->map[at].decl;
        klass *c = decl != 0 ? fieldmap_klass_of(&ks, decl) : NULL;
        jint n = 0;
        jfieldID *fields = NULL;
        if (c == NULL || c->cls == NULL || !JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassFields, c->cls, &n, &fields)) ||
            n != c->n_own || at + n > k->map_count) {
            bk_deallocate(fields);
            ok = false; /* a field the map could not name: the walk decides */
            break;
        }
        for (jint i = 0; ok && i < n; i++) {
            if (c->own[i].valid && !c->own[i].is_static) {
                ok = read_field(env, w, owner, obj, fields[i], c->own[i].type, k->map_base + at + i);
            }
        }
        bk_deallocate(fields);
        at += n;
    }
    fieldmap_klasses_free(&ks);
    return ok;
}

static bool read_array(JNIEnv *env, walk *w, int32_t owner, jarray array, jint type, jint length)
{
    if (type == JVMPI_CLASS) {
        for (jint i = 0; i < length && !w->failed; i++) {
            jlong tag = ref_tag(env, (*env)->GetObjectArrayElement(env, (jobjectArray)array, i));
            if (tag != 0) {
                heapstore_add_fact(w, owner, F_ELEMENT, JVMPI_CLASS, i, heapstore_ref_bits(tag));
            }
        }
        return !w->failed;
    }
    if (length <= 0) {
        return true;
    }
    size_t bytes = heapstore_type_size(type);
    if (bytes == 0) {
        return false;
    }
    void *copy = heapstore_arena_alloc(&w->mem, (size_t)length * bytes);
    if (copy == NULL) {
        w->failed = true;
        return false;
    }
    switch (type) {
    case JVMPI_BOOLEAN: (*env)->GetBooleanArrayRegion(env, array, 0, length, copy); break;
    case JVMPI_BYTE: (*env)->GetByteArrayRegion(env, array, 0, length, copy); break;
    case JVMPI_CHAR: (*env)->GetCharArrayRegion(env, array, 0, length, copy); break;
    case JVMPI_SHORT: (*env)->GetShortArrayRegion(env, array, 0, length, copy); break;
    case JVMPI_INT: (*env)->GetIntArrayRegion(env, array, 0, length, copy); break;
    case JVMPI_LONG: (*env)->GetLongArrayRegion(env, array, 0, length, copy); break;
    case JVMPI_FLOAT: (*env)->GetFloatArrayRegion(env, array, 0, length, copy); break;
    default: (*env)->GetDoubleArrayRegion(env, array, 0, length, copy); break;
    }
    w->recs[owner].values = copy;
    w->recs[owner].length = length;
    return true;
}

bool onedump_read(JNIEnv *env, walk *w, jobject obj)
{
    int32_t owner = heapstore_owner_of(w, w->only_tag);
    if (owner < 0 || is_class_id(w->only_tag)) {
        return false;
    }
    obj_rec *r = &w->recs[owner];
    jint type = ids_array_type(r->class_tag);
    if ((*env)->PushLocalFrame(env, 64) != 0) {
        (*env)->ExceptionClear(env);
        return false;
    }
    bool ok = type == JVMPI_NORMAL_OBJECT ? read_instance(env, w, owner, obj, r->class_tag)
                                         : read_array(env, w, owner, (jarray)obj, type, r->length);
    (*env)->PopLocalFrame(env, NULL);
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        ok = false;
    }
    return ok;
}
