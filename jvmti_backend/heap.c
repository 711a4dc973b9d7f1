/*
 * heap.c - allocations, frees and collections: SampledObjectAlloc at
 * interval 0, ObjectFree on object tags, GarbageCollectionStart/Finish, and
 * what RequestEvent(OBJECT_ALLOC) and the start-up replay need to know about
 * an object.
 */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "tls.h"

/* Set while the layer allocates on a thread for its own reasons. */
static TLS_FAST bool alloc_quiet;

static jfieldID component_type_field; /* java.lang.Class.componentType */
static jclass runtime_class;          /* global ref */
static jmethodID get_runtime, total_memory;

bool bk_heap_onload(void)
{
    /* Interval 0 must be in place before threads pick their sample points:
     * a thread keeps the point it had until it reaches it. */
    return JVMTI_OK(JVMTI_CALL(bk.jvmti, SetHeapSamplingInterval, 0));
}

void bk_heap_vm_init(JNIEnv *env, jthread thread)
{
    jclass class_class = (*env)->FindClass(env, "java/lang/Class");
    if (class_class != NULL) {
        component_type_field = (*env)->GetFieldID(env, class_class, "componentType", "Ljava/lang/Class;");
        (*env)->DeleteLocalRef(env, class_class);
    }
    (*env)->ExceptionClear(env);
    if (component_type_field == NULL) {
        LOG_WARN("java.lang.Class has no componentType field: arrays of references carry no element class");
    }
    jclass rt = (*env)->FindClass(env, "java/lang/Runtime");
    if (rt != NULL) {
        runtime_class = (*env)->NewGlobalRef(env, rt);
        get_runtime = (*env)->GetStaticMethodID(env, rt, "getRuntime", "()Ljava/lang/Runtime;");
        total_memory = (*env)->GetMethodID(env, rt, "totalMemory", "()J");
        (*env)->DeleteLocalRef(env, rt);
    }
    (*env)->ExceptionClear(env);

    /* On JDK 17 the main thread keeps the sample point it had before
     * Agent_OnLoad set interval 0, about 512 KB ahead: its first allocations
     * would be missed.  One large allocation, sampled, moves it past that
     * point; the sample point only moves while the event is on. */
    if (JVMTI_OK(JVMTI_CALL(bk.jvmti, SetEventNotificationMode, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC,
                            thread))) {
        alloc_quiet = true;
        jbyteArray big = (*env)->NewByteArray(env, 1 << 20);
        alloc_quiet = false;
        if (big != NULL) {
            (*env)->DeleteLocalRef(env, big);
        }
        (*env)->ExceptionClear(env);
        JVMTI_CALL(bk.jvmti, SetEventNotificationMode, JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, thread);
    }
}

/* ---- what an OBJECT_ALLOC says ------------------------------------------ */

jclass bk_array_element_class(JNIEnv *env, jclass array_class)
{
    /* A field read: no Java code runs, so this is safe under class_lock. */
    return component_type_field != NULL ? (*env)->GetObjectField(env, array_class, component_type_field) : NULL;
}

jobjectID bk_element_class_id(JNIEnv *env, jclass array_class)
{
    jclass element = bk_array_element_class(env, array_class);
    if (element == NULL) {
        return NULL;
    }
    jobjectID id = bk_class_id(env, element);
    (*env)->DeleteLocalRef(env, element);
    return id;
}

/* Element classes of arrays of references are cached per thread, keyed by
 * the array class's tag: tags are never reused, so entries never go stale. */
static jobjectID cached_element(jlong array_tag)
{
    tls_caches *tc = tls_caches_get();
    unsigned slot = tls_slot(array_tag, TLS_ELEMENT_SLOTS);
    return tc != NULL && tc->element[slot].array_tag == array_tag ? tc->element[slot].element : NULL;
}

static void cache_element(jlong array_tag, jobjectID element)
{
    tls_caches *tc = tls_caches_get();
    if (tc != NULL && element != NULL) {
        unsigned slot = tls_slot(array_tag, TLS_ELEMENT_SLOTS);
        tc->element[slot].array_tag = array_tag;
        tc->element[slot].element = element;
    }
}

/* class_id and is_array of an object of class klass (class_tag its tag, 0
 * when not known yet).  False when the class cannot have an ID. */
static bool describe_class(JNIEnv *env, jclass klass, jlong class_tag, seam_object_info *out)
{
    if (class_tag == 0) {
        JVMTI_CALL(bk.jvmti_cls, GetTag, klass, &class_tag);
    }
    if (class_tag == 0) {
        class_tag = seam_tag_from_id(bk_class_id(env, klass));
        if (class_tag == 0) {
            return false;
        }
    }
    out->is_array = ids_array_type(class_tag);
    if (out->is_array == JVMPI_NORMAL_OBJECT) {
        out->class_id = seam_id_from_tag(class_tag);
    } else if (out->is_array == JVMPI_CLASS) {
        out->class_id = cached_element(class_tag);
        if (out->class_id == NULL) {
            out->class_id = bk_element_class_id(env, klass);
            cache_element(class_tag, out->class_id);
        }
    } else {
        out->class_id = NULL; /* primitive arrays: the type says it all */
    }
    return true;
}

void JNICALL bk_on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jobject object, jclass klass,
                                 jlong size)
{
    BEGIN_CALLBACK();
    seam_object_info info;
    if (!alloc_quiet && describe_class(env, klass, 0, &info)) {
        jlong tag = ids_next_object(size);
        if (JVMTI_OK(JVMTI_CALL(bk.jvmti, SetTag, object, tag))) {
            info.id = seam_id_from_tag(tag);
            info.size = size;
            layer_object_alloc(env, &info);
        } else {
            ids_forget(tag);
        }
    }
    END_CALLBACK();
}

bool seam_object_info_of(JNIEnv *env, jobjectID id, seam_object_info *out)
{
    jlong tag = seam_tag_from_id(id);
    jint count = 0;
    jobject *objects = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetObjectsWithTags, 1, &tag, &count, &objects, NULL))) {
        return false;
    }
    bool ok = false;
    if (count > 0) {
        jclass klass = (*env)->GetObjectClass(env, objects[0]);
        jlong size = 0;
        memset(out, 0, sizeof *out);
        if (klass != NULL && JVMTI_OK(JVMTI_CALL(bk.jvmti, GetObjectSize, objects[0], &size)) &&
            describe_class(env, klass, 0, out)) {
            out->id = id;
            out->size = size;
            ok = true;
        }
        if (klass != NULL) {
            (*env)->DeleteLocalRef(env, klass);
        }
    }
    for (jint i = 0; i < count; i++) {
        (*env)->DeleteLocalRef(env, objects[i]);
    }
    bk_deallocate(objects);
    return ok;
}

/* ---- the start-up replay --------------------------------------------------- */

typedef struct {
    seam_object_info *list;
    jlong *class_tags;
    int count, cap;
    int unknown_class;
    bool out_of_memory;
} heap_list;

/* Inside the heap walk: no JNI, no JVM TI, only memory. */
static jint JNICALL list_object(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *user_data)
{
    heap_list *h = user_data;
    if (*tag_ptr != 0 && ids_is_class(*tag_ptr)) {
        return 0; /* a java.lang.Class: CLASS_LOAD defines it */
    }
    if (class_tag == 0) {
        h->unknown_class++;
        return 0;
    }
    if (h->count == h->cap) {
        int cap = h->cap ? h->cap * 2 : 4096;
        seam_object_info *l = realloc(h->list, (size_t)cap * sizeof *l);
        jlong *t = l != NULL ? realloc(h->class_tags, (size_t)cap * sizeof *t) : NULL;
        if (l != NULL) {
            h->list = l;
        }
        if (t == NULL) {
            h->out_of_memory = true;
            return JVMTI_VISIT_ABORT;
        }
        h->class_tags = t;
        h->cap = cap;
    }
    if (*tag_ptr == 0) {
        *tag_ptr = ids_next_object(size);
    }
    seam_object_info *o = &h->list[h->count];
    memset(o, 0, sizeof *o);
    o->id = seam_id_from_tag(*tag_ptr);
    o->size = size;
    h->class_tags[h->count++] = class_tag;
    return 0;
}

/* The jclass with a class tag; NULL if it is gone. */
static jclass class_of_tag(jlong class_tag)
{
    jint n = 0;
    jobject *found = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetObjectsWithTags, 1, &class_tag, &n, &found, NULL)) || n == 0) {
        bk_deallocate(found);
        return NULL;
    }
    jclass klass = found[0];
    bk_deallocate(found);
    return klass;
}

seam_object_info *seam_heap_objects(JNIEnv *env, int *count)
{
    heap_list h;
    memset(&h, 0, sizeof h);
    jvmtiHeapCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.heap_iteration_callback = list_object;
    JVMTI_CALL(bk.jvmti, IterateThroughHeap, 0, NULL, &cb, &h);
    if (h.out_of_memory) {
        LOG_ERROR("out of memory listing the heap: the start-up OBJECT_ALLOCs are incomplete");
    }
    if (h.unknown_class > 0) {
        LOG_WARN("start-up replay: %d objects of classes without an ID left out", h.unknown_class);
    }
    for (int i = 0; i < h.count; i++) {
        seam_object_info *o = &h.list[i];
        jlong ct = h.class_tags[i];
        o->is_array = ids_array_type(ct);
        if (o->is_array == JVMPI_NORMAL_OBJECT) {
            o->class_id = seam_id_from_tag(ct);
        } else if (o->is_array == JVMPI_CLASS) {
            o->class_id = cached_element(ct);
            if (o->class_id == NULL) {
                jclass klass = class_of_tag(ct);
                o->class_id = klass != NULL ? bk_element_class_id(env, klass) : NULL;
                if (o->class_id != NULL) {
                    cache_element(ct, o->class_id);
                } else if (log_level >= LOG_LEVEL_DEBUG) {
                    /* Loaded, not yet linked: it cannot have a CLASS_LOAD yet. */
                    char *sig = NULL;
                    if (klass != NULL) {
                        JVMTI_CALL(bk.jvmti, GetClassSignature, klass, &sig, NULL);
                    }
                    LOG_DEBUG("start-up replay: arrays of %s carry no element class", sig ? sig : "?");
                    bk_deallocate(sig);
                }
                if (klass != NULL) {
                    (*env)->DeleteLocalRef(env, klass);
                }
            }
        }
    }
    free(h.class_tags);
    *count = h.count;
    return h.list;
}

/* ---- frees and collections --------------------------------------------------- */

void JNICALL bk_on_object_free(jvmtiEnv *jvmti, jlong tag)
{
    BEGIN_CALLBACK();
    layer_object_freed(tag);
    END_CALLBACK();
}

void JNICALL bk_on_gc_start(jvmtiEnv *jvmti)
{
    BEGIN_CALLBACK();
    layer_gc_start();
    END_CALLBACK();
}

void JNICALL bk_on_gc_finish(jvmtiEnv *jvmti)
{
    BEGIN_CALLBACK();
    layer_gc_finish();
    END_CALLBACK();
}

void seam_flush_object_frees(void)
{
    /* Since JDK 16, switching ObjectFree (even on again) makes the VM post
     * the frees its tag map still holds, on this thread, before returning;
     * it also waits for another thread that is posting them. */
    JVMTI_CALL(bk.jvmti, SetEventNotificationMode, JVMTI_ENABLE, JVMTI_EVENT_OBJECT_FREE, NULL);
}

jlong seam_heap_capacity(JNIEnv *env)
{
    if (runtime_class == NULL || get_runtime == NULL || total_memory == NULL) {
        return -1;
    }
    jobject rt = (*env)->CallStaticObjectMethod(env, runtime_class, get_runtime);
    jlong total = rt != NULL ? (*env)->CallLongMethod(env, rt, total_memory) : -1;
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        total = -1;
    }
    if (rt != NULL) {
        (*env)->DeleteLocalRef(env, rt);
    }
    return total;
}
