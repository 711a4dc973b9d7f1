/*
 * heap.c - allocations, frees and collections: SampledObjectAlloc at
 * interval 0, ObjectFree on object tags, GarbageCollectionStart/Finish, and
 * what RequestEvent(OBJECT_ALLOC) and the start-up replay need to know about
 * an object.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "backend.h"
#include "tls.h"

/* OBJECT_ALLOC on, without SampledObjectAlloc (bk_heap_constructed). */
static _Atomic bool constructed_on;
/* Set while the layer allocates on a thread for its own reasons. */
static TLS_FAST bool alloc_quiet;

bool bk_alloc_quiet(bool quiet)
{
    bool was = alloc_quiet;
    alloc_quiet = quiet;
    return was;
}

static jclass void_class;             /* global ref: a class with no instances */
static jfieldID component_type_field; /* java.lang.Class.componentType */
static jmethodID component_type_native; /* Class.getComponentType, where that field is missing */
static jlong class_class_tag;          /* java.lang.Class's class ID */
static jclass runtime_class;          /* global ref */
static jmethodID get_runtime, total_memory;

bool bk_heap_onload(void)
{
    /* Interval 0 must be in place before threads pick their sample points:
     * a thread keeps the point it had until it reaches it. */
    return !bk.sampled_alloc || JVMTI_OK(JVMTI_CALL(bk.jvmti, SetHeapSamplingInterval, 0));
}

/* The primitive types' Class objects (int.class, ...) are objects with no
 * class ID: tagged as objects now, so that a heap walk, which must not tag
 * Class objects itself (a class not linked yet gets its class ID later),
 * still has them, and jobject2jobjectID finds them. */
static void tag_primitive_classes(JNIEnv *env)
{
    jlong mirror_base = 0, mirror_ref = 0;
    if (bk.klass_sized_mirrors) {
        /* A reference's size: 4 bytes with compressed references, else 8. */
        jclass object = (*env)->FindClass(env, "java/lang/Object");
        jobjectArray none = object != NULL ? (*env)->NewObjectArray(env, 0, object, NULL) : NULL;
        jobjectArray four = object != NULL ? (*env)->NewObjectArray(env, 4, object, NULL) : NULL;
        jlong size_none = 0, size_four = 0;
        if (none != NULL && four != NULL && JVMTI_OK(JVMTI_CALL(bk.jvmti, GetObjectSize, none, &size_none)) &&
            JVMTI_OK(JVMTI_CALL(bk.jvmti, GetObjectSize, four, &size_four))) {
            mirror_ref = (size_four - size_none) / 4;
        }
        (*env)->ExceptionClear(env);
        (*env)->DeleteLocalRef(env, none);
        (*env)->DeleteLocalRef(env, four);
        (*env)->DeleteLocalRef(env, object);
    }
    static const char *const boxes[] = {"java/lang/Boolean", "java/lang/Byte",  "java/lang/Character",
                                        "java/lang/Short",   "java/lang/Integer", "java/lang/Long",
                                        "java/lang/Float",   "java/lang/Double",  "java/lang/Void"};
    for (size_t i = 0; i < sizeof boxes / sizeof boxes[0]; i++) {
        jclass box = (*env)->FindClass(env, boxes[i]);
        jfieldID type = box != NULL ? (*env)->GetStaticFieldID(env, box, "TYPE", "Ljava/lang/Class;") : NULL;
        jobject prim = type != NULL ? (*env)->GetStaticObjectField(env, box, type) : NULL;
        (*env)->ExceptionClear(env);
        if (prim != NULL) {
            if (bk.klass_sized_mirrors && mirror_base == 0) {
                /* A primitive type's Class object is measured as an object. */
                JVMTI_CALL(bk.jvmti, GetObjectSize, prim, &mirror_base);
            }
            bk_object_tag(env, prim);
            (*env)->DeleteLocalRef(env, prim);
        } else {
            LOG_WARN("%s.TYPE not found: that primitive type's Class object has no ID", boxes[i]);
        }
        if (box != NULL) {
            (*env)->DeleteLocalRef(env, box);
        }
    }
    if (bk.klass_sized_mirrors) {
        bk_classinfo_mirrors_measured(mirror_base, mirror_ref);
    }
}

void bk_heap_vm_init(JNIEnv *env, jthread thread)
{
    alloc_quiet = true; /* it runs a little Java code */
    bk_classcache_vm_init(env, layer_class_cache_allowed());
    alloc_quiet = false;
    jclass class_class = (*env)->FindClass(env, "java/lang/Class");
    if (class_class != NULL) {
        component_type_field = (*env)->GetFieldID(env, class_class, "componentType", "Ljava/lang/Class;");
        if (component_type_field == NULL) {
            /* JDK 8 keeps it in the VM; its getter is a native, so still no
             * Java code runs. */
            (*env)->ExceptionClear(env);
            component_type_native = (*env)->GetMethodID(env, class_class, "getComponentType", "()Ljava/lang/Class;");
        }
        class_class_tag = seam_tag_from_id(bk_class_id(env, class_class));
        (*env)->DeleteLocalRef(env, class_class);
    }
    (*env)->ExceptionClear(env);
    bk_classinfo_vm_init(env);
    if (component_type_field == NULL && component_type_native == NULL) {
        LOG_WARN("java.lang.Class has no componentType field: arrays of references carry no element class");
    }
    jclass v = (*env)->FindClass(env, "java/lang/Void");
    if (v != NULL) {
        void_class = bk_new_global_ref(env, v);
        (*env)->DeleteLocalRef(env, v);
    }
    jclass rt = (*env)->FindClass(env, "java/lang/Runtime");
    if (rt != NULL) {
        runtime_class = bk_new_global_ref(env, rt);
        get_runtime = (*env)->GetStaticMethodID(env, rt, "getRuntime", "()Ljava/lang/Runtime;");
        total_memory = (*env)->GetMethodID(env, rt, "totalMemory", "()J");
        (*env)->DeleteLocalRef(env, rt);
    }
    (*env)->ExceptionClear(env);
    tag_primitive_classes(env);

    /* On JDK 17 the main thread keeps the sample point it had before
     * Agent_OnLoad set interval 0, about 512 KB ahead: its first allocations
     * would be missed.  One large allocation, sampled, moves it past that
     * point; the sample point only moves while the event is on.  JDK 11
     * switches the event for all threads only (ILLEGAL_ARGUMENT) and needs
     * no such move: there a large allocation would rather leave the thread's
     * TLAB unsampled until its next refill. */
    jvmtiError err = !bk.sampled_alloc ? JVMTI_ERROR_NOT_AVAILABLE
                                       : JVMTI_TRY(bk.jvmti, SetEventNotificationMode, JVMTI_ENABLE,
                                                   JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, thread);
    if (err != JVMTI_ERROR_ILLEGAL_ARGUMENT && err != JVMTI_ERROR_NOT_AVAILABLE) {
        bk_checked(err, false, "SetEventNotificationMode", __FILE__, __LINE__);
    }
    if (JVMTI_OK(err)) {
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

bool bk_heap_alloc_switch(bool on)
{
    if (bk.alloc_hooks) {
        atomic_store(&constructed_on, on);
        if (!bk_set_event(bk.jvmti, JVMTI_EVENT_VM_OBJECT_ALLOC, on) || !bk_methodhooks_allocs(on)) {
            return false;
        }
    }
    if (!bk.sampled_alloc) {
        return true;
    }
    if (!bk_set_event(bk.jvmti, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, on)) {
        return false;
    }
    jvmtiPhase phase = JVMTI_PHASE_LIVE;
    JVMTI_CALL(bk.jvmti, GetPhase, &phase);
    if (on && phase == JVMTI_PHASE_LIVE) {
        /* A thread samples only from its next TLAB on: the allocations left
         * in the TLAB it has now would be missed.  A collection retires
         * every TLAB. */
        bk_exitfrees_wait();
        JVMTI_CALL0(bk.jvmti, ForceGarbageCollection);
    }
    return true;
}

/* ---- what an OBJECT_ALLOC says ------------------------------------------ */

jclass bk_array_element_class(JNIEnv *env, jclass array_class)
{
    /* A field read: no Java code runs, so this is safe under class_lock. */
    if (component_type_field != NULL) {
        return (*env)->GetObjectField(env, array_class, component_type_field);
    }
    if (component_type_native == NULL) {
        return NULL;
    }
    jmethodID own = bk_own_call; /* a native's entry and exit are method events */
    bk_own_call = component_type_native;
    jclass element = (*env)->CallObjectMethod(env, array_class, component_type_native);
    bk_own_call = own;
    return element;
}

jobjectID bk_element_class_id(JNIEnv *env, jclass array_class)
{
    jclass element = bk_array_element_class(env, array_class);
    if (element == NULL) {
        return NULL;
    }
    jobjectID id = bk_class_id(env, element);
    if (id == NULL) {
        /* Loaded, not linked: linked now, which gives it its ID. */
        bk_link_element(env, array_class);
        id = bk_class_id(env, element);
    }
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


/* class_id and is_array of an object whose class has class_tag; klass is
 * that class when the caller has it, else NULL (found by tag if needed). */
static void describe_by_tag(JNIEnv *env, jlong class_tag, jclass klass, seam_object_info *out)
{
    out->is_array = ids_array_type(class_tag);
    if (out->is_array == JVMPI_NORMAL_OBJECT) {
        out->class_id = seam_id_from_tag(class_tag);
    } else if (out->is_array == JVMPI_CLASS) {
        out->class_id = cached_element(class_tag);
        if (out->class_id == NULL) {
            jclass array_class = klass != NULL ? klass : bk_object_scan(env, class_tag);
            out->class_id = array_class != NULL ? bk_element_class_id(env, array_class) : NULL;
            cache_element(class_tag, out->class_id);
            if (array_class != klass && array_class != NULL) {
                (*env)->DeleteLocalRef(env, array_class);
            }
        }
    } else {
        out->class_id = NULL; /* primitive arrays: the type says it all */
    }
}

/* klass's tag, giving it one when it has none; 0 when it cannot have one. */
static jlong class_tag_of(JNIEnv *env, jclass klass)
{
    jlong class_tag = 0;
    JVMTI_CALL(bk.jvmti_cls, GetTag, klass, &class_tag);
    return class_tag != 0 ? class_tag : seam_tag_from_id(bk_class_id(env, klass));
}

/* class_id and is_array of an object of the class tagged class_tag (klass).
 * False when the class has no ID. */
static bool describe_tagged_class(JNIEnv *env, jlong class_tag, jclass klass, seam_object_info *out)
{
    if (class_tag == 0) {
        return false;
    }
    describe_by_tag(env, class_tag, klass, out);
    return true;
}

static bool describe_class(JNIEnv *env, jclass klass, seam_object_info *out)
{
    return describe_tagged_class(env, class_tag_of(env, klass), klass, out);
}

/* The tag of an allocated object's class: from the thread's class cache
 * when it has it (no JVM TI call), else from JVM TI, then cached. */
static jlong allocated_class_tag(JNIEnv *env, tls_caches *tc, jclass klass)
{
    bk_classcache_key key;
    jlong class_tag = 0;
    if (!bk_classcache_find(tc, klass, &key, &class_tag)) {
        class_tag = class_tag_of(env, klass);
        if (class_tag != 0) {
            bk_classcache_put(&key, class_tag);
        }
    }
    return class_tag;
}

jlong bk_class_tag(JNIEnv *env, jclass klass) { return allocated_class_tag(env, tls_caches_get(), klass); }

jlong bk_class_class_tag(void) { return class_class_tag; }

jobjectID seam_class_class_id(void) { return class_class_tag != 0 ? seam_id_from_tag(class_class_tag) : NULL; }

static void remember_recent(tls_caches *tc, const seam_object_info *info)
{
    if (tc != NULL) {
        unsigned i = tc->recent_next++ % TLS_RECENT_OBJECTS;
        tc->recent[i].info = *info;
        tc->recent[i].gc_epoch = atomic_load_explicit(&bk.pauses_started, memory_order_acquire);
    }
}

static bool recent_info(jobjectID id, seam_object_info *out)
{
    tls_caches *tc = tls_caches_get();
    unsigned long now = atomic_load_explicit(&bk.pauses_started, memory_order_acquire);
    for (unsigned i = 0; tc != NULL && i < TLS_RECENT_OBJECTS; i++) {
        if (tc->recent[i].info.id == id && tc->recent[i].gc_epoch == now) {
            *out = tc->recent[i].info;
            return true;
        }
    }
    return false;
}

void JNICALL bk_on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jobject object, jclass klass,
                                 jlong size)
{
    /* From the exiting thread's end to VMDeath, an allocating thread stops
     * here (in native, where safepoints pass it): its allocations would
     * start collections whose frees VM death posts, and can deadlock on
     * (exitfrees.c). */
    bk_exitfrees_wait();
    BEGIN_CALLBACK();
    seam_object_info info;
    jlong class_tag;
    tls_caches *tc = tls_caches_get();
    /* A new Class object becomes a class ID when its class is prepared, and
     * its OBJECT_ALLOC comes with its CLASS_LOAD (jvmpi/defs.c). */
    if (!alloc_quiet && (class_tag = allocated_class_tag(env, tc, klass)) != class_class_tag &&
        describe_tagged_class(env, class_tag, klass, &info)) {
        jlong tag = ids_next_object(size, class_tag);
        if (JVMTI_OK(JVMTI_CALL(bk.jvmti, SetTag, object, tag))) {
            info.id = seam_id_from_tag(tag);
            info.size = size;
            remember_recent(tc, &info);
            if (!layer_object_alloc(env, &info)) {
                /* Made before VM init, or while OBJECT_ALLOC went off: the
                 * replay reaches it, or an event that names it announces it
                 * (jvmpi/defs.c). */
                JVMTI_CALL(bk.jvmti, SetTag, object, ids_unannounced(tag));
            }
        } else {
            ids_forget(tag);
        }
    }
    END_CALLBACK();
}

/* A constructed object's VMObjectAlloc (JNI NewObject, reflection) comes
 * after its constructor ran: it has its ID by then. */
void JNICALL bk_on_vm_object_alloc(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jobject object, jclass klass,
                                   jlong size)
{
    jlong tag = 0;
    if (JVMTI_OK(JVMTI_CALL(bk.jvmti, GetTag, object, &tag)) && tag == 0) {
        bk_on_sampled_alloc(jvmti, env, thread, object, klass, size);
    }
}

/* Called from the program's own code (rewritten classes, JNI), which runs
 * on after VM death too: the callback guard keeps JVM TI out of it then. */
void bk_heap_constructed(JNIEnv *env, jobject object)
{
    jlong tag = 0, size = 0;
    if (object == NULL || !atomic_load_explicit(&constructed_on, memory_order_relaxed) || !bk_callback_enter()) {
        return;
    }
    if (JVMTI_OK(JVMTI_CALL(bk.jvmti, GetTag, object, &tag)) && tag == 0 &&
        JVMTI_OK(JVMTI_CALL(bk.jvmti, GetObjectSize, object, &size))) {
        jclass klass = (*env)->GetObjectClass(env, object);
        if (klass != NULL) {
            jobject outer = bk_stacks_constructing(env, object);
            bk_on_sampled_alloc(bk.jvmti, env, NULL, object, klass, size);
            bk_stacks_constructing(env, outer);
            (*env)->DeleteLocalRef(env, klass);
        }
    }
    bk_callback_exit();
}

bool seam_object_info_of(JNIEnv *env, jobjectID id, seam_object_info *out)
{
    if (recent_info(id, out)) {
        return true;
    }
    jobject obj = bk_object_of_tag(env, seam_tag_from_id(id));
    if (obj == NULL) {
        return false;
    }
    bool ok = false;
    jclass klass = (*env)->GetObjectClass(env, obj);
    jlong size = 0;
    memset(out, 0, sizeof *out);
    if (klass != NULL && JVMTI_OK(JVMTI_CALL(bk.jvmti, GetObjectSize, obj, &size)) && describe_class(env, klass, out)) {
        out->id = id;
        out->size = size;
        ok = true;
    }
    if (klass != NULL) {
        (*env)->DeleteLocalRef(env, klass);
    }
    (*env)->DeleteLocalRef(env, obj);
    return ok;
}

/* ---- objects of classes not linked yet ---------------------------------------- */

/* The CDS archive maps objects into the heap for classes that are loaded
 * but not linked (Long and Short caches, ...).  JVM TI can describe no such
 * class, so the start-up replay holds their objects back, under IDs, until
 * the class is prepared: then their OBJECT_ALLOCs follow its CLASS_LOAD.
 * Keyed by object tag; the class is known by its placeholder tag. */
typedef struct pending_obj {
    jlong tag;
    jlong class_tag;
    jlong size;
    UT_hash_handle hh;
} pending_obj;
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static pending_obj *pending;
static _Atomic int pending_count;
/* The held-back objects' tags all lie in this range (tagged during the
 * replay): most frees are told apart without the lock. */
static _Atomic int64_t pending_lo = INT64_MAX, pending_hi = INT64_MIN;

/* Placeholder tags on every loaded class that is not linked yet. */
static void tag_unlinked_classes(JNIEnv *env)
{
    jint n = 0;
    jclass *classes = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetLoadedClasses, &n, &classes))) {
        return;
    }
    for (jint i = 0; i < n; i++) {
        jint status = 0;
        jlong tag = 0;
        if (JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassStatus, classes[i], &status)) &&
            !(status & (JVMTI_CLASS_STATUS_PREPARED | JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE)) &&
            JVMTI_OK(JVMTI_CALL(bk.jvmti, GetTag, classes[i], &tag)) && tag == 0) {
            JVMTI_CALL(bk.jvmti, SetTag, classes[i], ids_next_pending_class());
        }
        (*env)->DeleteLocalRef(env, classes[i]);
    }
    bk_deallocate(classes);
}

/* Called inside the heap walk: memory only. */
static bool pending_add(jlong tag, jlong class_tag, jlong size)
{
    pending_obj *p = malloc(sizeof *p);
    if (p == NULL) {
        return false;
    }
    p->tag = tag;
    p->class_tag = class_tag;
    p->size = size;
    int64_t seq = ids_sequence(tag);
    if (seq < atomic_load(&pending_lo)) {
        atomic_store(&pending_lo, seq); /* one thread: the replay's */
    }
    if (seq > atomic_load(&pending_hi)) {
        atomic_store(&pending_hi, seq);
    }
    pthread_mutex_lock(&pending_lock);
    HASH_ADD(hh, pending, tag, sizeof p->tag, p);
    atomic_fetch_add(&pending_count, 1);
    pthread_mutex_unlock(&pending_lock);
    return true;
}

bool bk_heap_pending_freed(jlong tag)
{
    if (atomic_load_explicit(&pending_count, memory_order_relaxed) == 0) {
        return false;
    }
    int64_t seq = ids_sequence(tag);
    if (seq < atomic_load_explicit(&pending_lo, memory_order_relaxed) ||
        seq > atomic_load_explicit(&pending_hi, memory_order_relaxed)) {
        return false;
    }
    pending_obj *p = NULL;
    pthread_mutex_lock(&pending_lock);
    HASH_FIND(hh, pending, &tag, sizeof tag, p);
    if (p != NULL) {
        HASH_DEL(pending, p);
        atomic_fetch_sub(&pending_count, 1);
    }
    pthread_mutex_unlock(&pending_lock);
    free(p);
    return p != NULL;
}

bool bk_heap_has_pending(void) { return atomic_load(&pending_count) > 0; }

void bk_heap_class_linked(JNIEnv *env, jlong placeholder, jobjectID class_id)
{
    if (atomic_load(&pending_count) == 0) {
        return;
    }
    seam_object_info *list = NULL;
    int n = 0;
    {
        pthread_mutex_lock(&pending_lock);
        pending_obj *p, *tmp;
        HASH_ITER(hh, pending, p, tmp) {
            if (p->class_tag != placeholder) {
                continue;
            }
            seam_object_info *grown = realloc(list, (size_t)(n + 1) * sizeof *grown);
            if (grown == NULL) {
                break;
            }
            list = grown;
            memset(&list[n], 0, sizeof list[n]);
            list[n].id = seam_id_from_tag(p->tag);
            list[n].class_id = class_id;
            list[n].size = p->size;
            n++;
            HASH_DEL(pending, p);
            atomic_fetch_sub(&pending_count, 1);
            free(p);
        }
        pthread_mutex_unlock(&pending_lock);
    }
    if (n > 0) {
        LOG_DEBUG("%d objects from before VM init follow their class's CLASS_LOAD", n);
    }
    for (int i = 0; i < n; i++) {
        ids_count(seam_tag_from_id(list[i].id));
        ids_set_object_class(seam_tag_from_id(list[i].id), seam_tag_from_id(class_id));
        layer_object_alloc(env, &list[i]);
    }
    free(list);
    if (atomic_load(&pending_count) == 0) {
        bk_class_prepare_wanted();
    }
}

/* ---- the start-up replay --------------------------------------------------- */

typedef struct {
    seam_object_info *list;
    jlong *class_tags;
    int count, cap;
    int unknown_class, held_back;
    bool out_of_memory;
    jlong class_class_tag; /* java.lang.Class's own tag */
} heap_list;

/* Inside the heap walk: no JNI, no JVM TI, only memory. */
static jint JNICALL list_object(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *user_data)
{
    heap_list *h = user_data;
    if (*tag_ptr != 0 && ids_is_pending_class(*tag_ptr)) {
        return 0; /* the Class object of a class not linked yet: it comes with its CLASS_LOAD */
    }
    if (class_tag == h->class_class_tag && *tag_ptr == 0) {
        /* A Class object with neither a class ID nor an object ID: a class
         * loaded while the replay began.  ClassPrepare will give it its ID. */
        return 0;
    }
    if (class_tag == 0) {
        h->unknown_class++;
        return 0;
    }
    if (ids_is_pending_class(class_tag)) {
        /* An instance of a class not linked yet: held back, see pending_add. */
        if (*tag_ptr == 0) {
            *tag_ptr = ids_next_object_uncounted(size, class_tag); /* counted once announced */
        } else {
            ids_uncount(*tag_ptr);
            ids_set_object_class(*tag_ptr, class_tag);
        }
        if (!pending_add(*tag_ptr, class_tag, size)) {
            h->out_of_memory = true;
            return JVMTI_VISIT_ABORT;
        }
        h->held_back++;
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
        *tag_ptr = ids_next_object(size, class_tag);
    }
    seam_object_info *o = &h->list[h->count];
    memset(o, 0, sizeof *o);
    o->id = seam_id_from_tag(*tag_ptr);
    o->size = size;
    h->class_tags[h->count++] = class_tag;
    return 0;
}

seam_object_info *seam_heap_objects(JNIEnv *env, int *count)
{
    heap_list h;
    memset(&h, 0, sizeof h);
    h.class_class_tag = class_class_tag;
    if (h.class_class_tag == 0) {
        LOG_ERROR("java.lang.Class has no class ID: the start-up replay is skipped");
        *count = 0;
        return NULL;
    }
    tag_unlinked_classes(env);
    /* A heap iteration makes the heap walkable by writing a filler object
     * into the unused end of each thread's allocation buffer; the thread
     * then allocates over it, and a tag set on the filler would pass to
     * whatever object comes to lie at its address.  A collection first
     * retires every buffer (this thread, inside VMInit, allocates none
     * before the iteration). */
    JVMTI_CALL0(bk.jvmti, ForceGarbageCollection);
    jvmtiHeapCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.heap_iteration_callback = list_object;
    JVMTI_CALL(bk.jvmti, IterateThroughHeap, 0, NULL, &cb, &h);
    if (h.out_of_memory) {
        LOG_ERROR("out of memory listing the heap: the start-up OBJECT_ALLOCs are incomplete");
    }
    if (h.unknown_class > 0) {
        LOG_WARN("objects already in the heap at VM init: %d of classes without an ID get no OBJECT_ALLOC",
                 h.unknown_class);
    }
    if (h.held_back > 0) {
        LOG_DEBUG("start-up replay: %d objects wait for their classes to be linked", h.held_back);
        bk_class_prepare_wanted();
    }
    for (int i = 0; i < h.count; i++) {
        seam_object_info *o = &h.list[i];
        describe_by_tag(env, h.class_tags[i], NULL, o);
        if (o->is_array == JVMPI_CLASS && o->class_id == NULL && log_level >= LOG_LEVEL_DEBUG) {
            /* Loaded, not yet linked: it cannot have a CLASS_LOAD yet. */
            jclass klass = bk_object_scan(env, h.class_tags[i]);
            char *sig = NULL;
            if (klass != NULL) {
                JVMTI_CALL(bk.jvmti, GetClassSignature, klass, &sig, NULL);
                (*env)->DeleteLocalRef(env, klass);
            }
            LOG_DEBUG("start-up replay: arrays of %s carry no element class", sig ? sig : "?");
            bk_deallocate(sig);
        }
    }
    free(h.class_tags);
    *count = h.count;
    return h.list;
}

/* ---- frees and collections --------------------------------------------------- */

void bk_heap_object_freed(jlong tag)
{
    if (bk_heap_pending_freed(tag)) {
        /* never announced nor counted, so no OBJECT_FREE either */
        ids_drop_uncounted(tag);
    } else {
        layer_object_freed(tag);
    }
}

void JNICALL bk_on_object_free(jvmtiEnv *jvmti, jlong tag)
{
    BEGIN_CALLBACK();
    bk_exitfrees_count();
    bk_heap_object_freed(tag);
    END_CALLBACK();
}

/* Whether the JVMPI side wants collections (OBJECT_FREE, GC_START, GC_FINISH). */
static _Atomic bool gc_wanted;

void bk_heap_gc_switch(bool on) { atomic_store(&gc_wanted, on); }

void JNICALL bk_on_gc_start(jvmtiEnv *jvmti)
{
    BEGIN_CALLBACK();
    atomic_fetch_add(&bk.pauses_started, 1);
    END_CALLBACK();
}

void JNICALL bk_on_gc_finish(jvmtiEnv *jvmti)
{
    BEGIN_CALLBACK();
    atomic_fetch_add(&bk.pauses_finished, 1);
    if (atomic_load_explicit(&gc_wanted, memory_order_relaxed)) {
        layer_gc_finish();
    }
    END_CALLBACK();
}

static jint JNICALL no_object(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *user_data)
{
    return JVMTI_VISIT_ABORT;
}

void seam_post_pending_frees(JNIEnv *env)
{
    jvmtiEnv *envs[] = {bk.jvmti, bk.jvmti_cls};
    bk_exitfrees_wait();
    /* A heap iteration takes the dead entries out of the tag map at its
     * safepoint and posts them from this thread afterwards; it does not
     * wait for (or block) the Service Thread, which may be posting others
     * meanwhile.  Asking for java.lang.Void's instances (there are none)
     * keeps the pass itself cheap. */
    if (void_class == NULL) {
        return;
    }
    jvmtiHeapCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.heap_iteration_callback = no_object;
    /* Each environment keeps its own tags: the class environment's dead
     * ones are the unloads. */
    for (size_t i = 0; i < sizeof envs / sizeof envs[0]; i++) {
        if (envs[i] != NULL) {
            JVMTI_CALL(envs[i], IterateThroughHeap, 0, void_class, &cb, NULL);
        }
    }
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
