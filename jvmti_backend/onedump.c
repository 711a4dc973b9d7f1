/*
 * onedump.c - OBJECT_DUMP's one object, read through JNI and JVM TI's class
 * functions instead of a heap walk.
 *
 * FollowReferences from the object would report the same references and
 * values, but it is a VM operation, and on JDK 8 and 17 HotSpot ends every
 * one by visiting the whole heap to restore the object headers it marked:
 * an OBJECT_DUMP request then costs time in proportion to the heap, and
 * Sun's HPROF makes one per class from inside its HEAP_DUMP handler.
 * Reading the object itself takes time in proportion to the object (and
 * its class), and records what the walk's callbacks record, as they record
 * it: under JVM TI's field indexes (fieldmap.c), referents by their IDs
 * (given one if they have none, as the walk does), null references left
 * out.
 *
 * An instance: its fields (GetClassFields along the class chain,
 * Get<Type>Field).  An array: its elements.  A Class object: what the JVM
 * TI specification's reference kinds say of a class, which HotSpot reports
 * for a class that is no array class: its loader (GetClassLoader), its
 * protection domain and signers (where java.lang.Class holds them: fields
 * from JDK 25 on, natives before), its direct superinterfaces
 * (GetImplementedInterfaces, in the walk's order) and its own static
 * fields (GetStatic<Type>Field).  Before JDK 25 JNI hands out only a copy
 * of a class's signers: a signed class is still walked, so that its record
 * names the signers the walk would.
 */
#include "onedump.h"

#include <pthread.h>
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

static bool read_instance(JNIEnv *env, klasses *ks, int32_t owner, jobject obj, jlong class_tag)
{
    walk *w = ks->w;
    /* Only the object's class and its superclasses are needed, not every
     * loaded class: ks holds them, each with its ID. */
    bool ok = !ks->partial;
    klass *k = ok ? fieldmap_klass_field_map(ks, class_tag) : NULL;
    ok = k != NULL && k->map != NULL;
    /* k->map lists, from index map_base on, every field of the chain from
     * java.lang.Object down, each class's in GetClassFields order. */
    for (int32_t at = 0; ok && at < k->map_count;) {
        jlong decl = k->map[at].decl;
        klass *c = decl != 0 ? fieldmap_klass_of(ks, decl) : NULL;
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

/* ---- a Class object ------------------------------------------------------------- */

/* A referent of a class, named as the walk names it once its Class objects
 * under object tags are resolved: a Class object by its class ID, else by
 * the object tag it may have (the primitive types'), else not at all (the
 * walk tags no Class object); any other object by its ID, given one if it
 * has none. */
static jlong walk_ref_tag(JNIEnv *env, jobject ref)
{
    if (ref == NULL) {
        return 0;
    }
    jlong tag = 0;
    if (JVMTI_OK(JVMTI_CALL(bk.jvmti_cls, GetTag, ref, &tag)) && is_class_id(tag)) {
        (*env)->DeleteLocalRef(env, ref);
        return tag;
    }
    if (!bk_is_class_object(env, ref)) {
        return ref_tag(env, ref);
    }
    tag = 0;
    JVMTI_CALL(bk.jvmti, GetTag, ref, &tag);
    (*env)->DeleteLocalRef(env, ref);
    return ids_is_pending_class(tag) ? 0 : tag;
}

static void add_ref(walk *w, int32_t owner, int kind, jint index, jlong tag)
{
    if (tag != 0) {
        heapstore_add_fact(w, owner, kind, JVMPI_CLASS, index, heapstore_ref_bits(tag));
    }
}

/* Where java.lang.Class keeps a class's protection domain and signers:
 * fields from JDK 25 on, else the natives that return the domain itself
 * and a copy of the signers. */
typedef struct {
    bool looked_up;
    jfieldID domain_field, signers_field;
    jmethodID domain_native, signers_native;
} class_access;

static class_access access;
static pthread_mutex_t access_lock = PTHREAD_MUTEX_INITIALIZER;

static jfieldID field_or_none(JNIEnv *env, jclass cc, const char *name, const char *sig)
{
    jfieldID f = (*env)->GetFieldID(env, cc, name, sig);
    (*env)->ExceptionClear(env);
    return f;
}

static jmethodID method_or_none(JNIEnv *env, jclass cc, const char *name, const char *sig)
{
    jmethodID m = (*env)->GetMethodID(env, cc, name, sig);
    (*env)->ExceptionClear(env);
    return m;
}

/* cls's class is java.lang.Class: no FindClass, which in some events takes
 * its caller for a native library's loader (see classinfo.c). */
static class_access access_of(JNIEnv *env, jclass cls)
{
    pthread_mutex_lock(&access_lock);
    if (!access.looked_up) {
        jclass cc = (*env)->GetObjectClass(env, cls);
        if (cc != NULL) {
            access.domain_field = field_or_none(env, cc, "protectionDomain", "Ljava/security/ProtectionDomain;");
            access.signers_field = field_or_none(env, cc, "signers", "[Ljava/lang/Object;");
            if (access.domain_field == NULL) {
                access.domain_native =
                    method_or_none(env, cc, "getProtectionDomain0", "()Ljava/security/ProtectionDomain;");
            }
            if (access.signers_field == NULL) {
                access.signers_native = method_or_none(env, cc, "getSigners", "()[Ljava/lang/Object;");
            }
            (*env)->DeleteLocalRef(env, cc);
            access.looked_up = true;
        }
    }
    class_access a = access;
    pthread_mutex_unlock(&access_lock);
    return a;
}

/* The layer's own call of a native of java.lang.Class: no method events,
 * and what it allocates (a copy of the signers) is not reported. */
static jobject call_own(JNIEnv *env, jclass cls, jmethodID m)
{
    bool quiet = bk_alloc_quiet(true);
    jmethodID own = bk_own_call;
    bk_own_call = m;
    jobject result = (*env)->CallObjectMethod(env, cls, m);
    bk_own_call = own;
    bk_alloc_quiet(quiet);
    return result;
}

/* Loader, protection domain, signers: false when they cannot be named as
 * the walk names them. */
static bool read_class_refs(JNIEnv *env, walk *w, int32_t owner, jclass cls)
{
    class_access a = access_of(env, cls);
    jobject loader = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassLoader, cls, &loader))) {
        return false;
    }
    add_ref(w, owner, F_LOADER, 0, walk_ref_tag(env, loader));
    jobject domain = a.domain_field != NULL    ? (*env)->GetObjectField(env, cls, a.domain_field)
                     : a.domain_native != NULL ? call_own(env, cls, a.domain_native)
                                               : NULL;
    if ((a.domain_field == NULL && a.domain_native == NULL) || (*env)->ExceptionCheck(env)) {
        return false;
    }
    add_ref(w, owner, F_DOMAIN, 0, walk_ref_tag(env, domain));
    if (a.signers_field != NULL) {
        add_ref(w, owner, F_SIGNERS, 0, walk_ref_tag(env, (*env)->GetObjectField(env, cls, a.signers_field)));
        return !w->failed;
    }
    /* Before JDK 25 JNI gives only a copy of the signers: a signed class is
     * walked, whose record names the array itself. */
    jobject copy = a.signers_native != NULL ? call_own(env, cls, a.signers_native) : NULL;
    return copy == NULL && a.signers_native != NULL && !(*env)->ExceptionCheck(env) && !w->failed;
}

static bool read_static(JNIEnv *env, walk *w, int32_t owner, jclass cls, jfieldID f, char type, jint index)
{
    seam_heap_bits v;
    memset(&v, 0, sizeof v);
    jint jvmpi_type = JVMPI_CLASS;
    switch (type) {
    case 'Z': v.z = (*env)->GetStaticBooleanField(env, cls, f); jvmpi_type = JVMPI_BOOLEAN; break;
    case 'B': v.b = (*env)->GetStaticByteField(env, cls, f); jvmpi_type = JVMPI_BYTE; break;
    case 'C': v.c = (*env)->GetStaticCharField(env, cls, f); jvmpi_type = JVMPI_CHAR; break;
    case 'S': v.s = (*env)->GetStaticShortField(env, cls, f); jvmpi_type = JVMPI_SHORT; break;
    case 'I': v.i = (*env)->GetStaticIntField(env, cls, f); jvmpi_type = JVMPI_INT; break;
    case 'J': v.j = (*env)->GetStaticLongField(env, cls, f); jvmpi_type = JVMPI_LONG; break;
    case 'F': v.f = (*env)->GetStaticFloatField(env, cls, f); jvmpi_type = JVMPI_FLOAT; break;
    case 'D': v.d = (*env)->GetStaticDoubleField(env, cls, f); jvmpi_type = JVMPI_DOUBLE; break;
    default:
        add_ref(w, owner, F_STATIC, index, walk_ref_tag(env, (*env)->GetStaticObjectField(env, cls, f)));
        return !w->failed;
    }
    heapstore_add_fact(w, owner, F_STATIC, jvmpi_type, index, v);
    return !w->failed;
}

/* The class's own static fields, under the JVM TI indexes the walk gives
 * them: the last of its field map (fieldmap.c), in GetClassFields order. */
static bool read_statics(JNIEnv *env, klasses *ks, int32_t owner, jclass cls)
{
    walk *w = ks->w;
    klass *k = !ks->partial ? fieldmap_klass_field_map(ks, w->only_tag) : NULL;
    jint n = 0;
    jfieldID *fields = NULL;
    bool ok = k != NULL && k->map != NULL && k->own != NULL && k->n_own <= k->map_count &&
              JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassFields, cls, &n, &fields)) && n == k->n_own;
    jint base = ok ? k->map_base + k->map_count - k->n_own : 0;
    for (jint i = 0; ok && i < n; i++) {
        if (!k->own[i].valid || !k->own[i].is_static) {
            continue;
        }
        const field_key *key = fieldmap_field_of(k, base + i);
        ok = key != NULL && key->decl == w->only_tag && key->is_static && key->slot == k->own[i].slot &&
             read_static(env, w, owner, cls, fields[i], k->own[i].type, base + i);
    }
    bk_deallocate(fields);
    return ok;
}

static bool read_class(JNIEnv *env, klasses *ks, int32_t owner, jclass cls)
{
    walk *w = ks->w;
    jint status = 0;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassStatus, cls, &status))) {
        return false;
    }
    if (status & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE)) {
        return true; /* HotSpot reports no reference of an array class */
    }
    if (!read_class_refs(env, w, owner, cls)) {
        return false;
    }
    jint n = 0;
    jclass *ifaces = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetImplementedInterfaces, cls, &n, &ifaces))) {
        return false;
    }
    for (jint i = 0; i < n; i++) {
        add_ref(w, owner, F_INTERFACE, 0, walk_ref_tag(env, ifaces[i]));
    }
    bk_deallocate(ifaces);
    return !w->failed && read_statics(env, ks, owner, cls);
}

/* ---- the entry points ------------------------------------------------------------ */

jclass onedump_class_of_id(JNIEnv *env, jlong tag)
{
    jint n = 0;
    jobject *found = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti_cls, GetObjectsWithTags, 1, &tag, &n, &found, NULL))) {
        return NULL;
    }
    jclass cls = n > 0 ? (jclass)found[0] : NULL;
    for (jint i = 1; i < n; i++) {
        (*env)->DeleteLocalRef(env, found[i]);
    }
    bk_deallocate(found);
    return cls;
}

bool onedump_read(JNIEnv *env, klasses *ks, jobject obj)
{
    walk *w = ks->w;
    int32_t owner = heapstore_owner_of(w, w->only_tag);
    if (owner < 0 || (*env)->ExceptionCheck(env)) {
        return false;
    }
    obj_rec *r = &w->recs[owner];
    jint type = is_class_id(w->only_tag) ? JVMPI_NORMAL_OBJECT : ids_array_type(r->class_tag);
    if ((*env)->PushLocalFrame(env, 64) != 0) {
        (*env)->ExceptionClear(env);
        return false;
    }
    bool ok = is_class_id(w->only_tag)     ? read_class(env, ks, owner, (jclass)obj)
              : type == JVMPI_NORMAL_OBJECT ? read_instance(env, ks, owner, obj, r->class_tag)
                                            : read_array(env, w, owner, (jarray)obj, type, r->length);
    (*env)->PopLocalFrame(env, NULL);
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        ok = false;
    }
    return ok;
}
