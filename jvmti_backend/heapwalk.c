/*
 * heapwalk.c - the heap snapshots behind HEAP_DUMP and OBJECT_DUMP.
 *
 * One FollowReferences walk, which the VM runs in one safepoint: every
 * object, reference, primitive field and array content comes from the same
 * instant, so the dump is consistent in itself.  The callbacks may not call
 * JNI or JVM TI, so they only record what they see (tags, JVM TI field
 * indexes, values) and tag the objects that have no ID yet through tag_ptr;
 * everything that needs the VM (class handles, field tables, superclasses)
 * is looked up after the walk.  Classes do not change under the walk's
 * results: what is read afterwards is what a class is, not what it holds.
 *
 * What the snapshot does not get is the threads' stacks at that same
 * instant: the JVMPI side takes the call traces just before the walk, and
 * a thread that ran in between may have other frames.  Suspending every
 * thread around both would make them agree, but a thread suspended while
 * inside the layer (holding one of its locks, or the agent's, in a
 * callback) would block the dumping thread for good; roots carry the
 * method of their frame so the JVMPI side can tell a trace that moved.
 *
 * OBJECT_DUMP's one object is read into the same records without a walk
 * (onedump.c): a walk from one object still ends, in HotSpot, with a pass
 * over the whole heap.  It is walked only when it cannot be read so.
 *
 * This file holds the walk itself: its callbacks and the entry points that
 * run it.  What it records and where is heapstore.c; classes as the VM
 * describes them after the walk, fieldmap.c; the snapshot made from the
 * records, heapsnap.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "heapsnap.h"
#include "onedump.h"
#include "vtguard.h"

/* A walk meets objects of classes loaded after the classes were defined;
 * they are defined and the walk made again, this many times at most. */
#define MAX_WALKS 3

/* ---- what the walk records ---------------------------------------------------- */

/* The referree's ID, giving it one if it has none; 0 for objects that get
 * none: Class objects without a class ID (the primitive types', classes not
 * yet linked) and objects of classes without a tag. */
static jlong name_object(walk *w, jlong class_tag, jlong size, jlong *tag_ptr, jint length)
{
    jlong tag = *tag_ptr;
    bool class_object = class_tag != 0 && class_tag == w->class_class_tag;
    if (tag == 0) {
        if (class_object) {
            return 0;
        }
        if (class_tag == 0) {
            w->orphans++;
            return 0;
        }
        tag = ids_next_unannounced_object(size, class_tag);
        *tag_ptr = tag;
    }
    if (ids_is_pending_class(tag)) {
        /* The Class object of a class not linked yet: no ID, left out. */
        if (!heapstore_tagmap_put(&w->dropped, tag, 0)) {
            w->failed = true;
        }
        return 0;
    }
    if (!is_class_id(tag) && class_tag == 0) {
        w->orphans++;
        if (!heapstore_tagmap_put(&w->dropped, tag, 0)) {
            w->failed = true;
        }
        return tag; /* its ID, but nothing to dump it with */
    }
    /* A Class object under an object tag, or an object whose class is one:
     * the class environment may know its class ID. */
    bool odd = !is_class_id(tag) && (class_object || !is_class_id(class_tag));
    if (w->single) {
        if (odd && class_object) {
            heapstore_add_candidate(w, tag);
        }
    } else {
        tagslot *slot = heapstore_tagmap_slot(&w->index, tag);
        if (slot == NULL) {
            w->failed = true;
        } else if (slot->val < 0 && heapstore_add_rec_at(w, slot, tag, class_tag, size, length) >= 0 && odd) {
            heapstore_add_candidate(w, class_object ? tag : class_tag);
        }
    }
    return tag;
}

static void add_root(walk *w, jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info, jlong tag)
{
    if (!heapstore_grow((void **)&w->roots, &w->cap_roots, w->n_roots + 1, sizeof *w->roots)) {
        w->failed = true;
        return;
    }
    root_rec *r = &w->roots[w->n_roots++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->tag = tag;
    r->depth = -1;
    if (kind == JVMTI_HEAP_REFERENCE_STACK_LOCAL && info != NULL) {
        r->thread_tag = info->stack_local.thread_tag;
        r->depth = info->stack_local.depth;
        r->method = info->stack_local.method;
    } else if (kind == JVMTI_HEAP_REFERENCE_JNI_LOCAL && info != NULL) {
        r->thread_tag = info->jni_local.thread_tag;
        r->depth = info->jni_local.depth;
        r->method = info->jni_local.method;
    } else if (kind == JVMTI_HEAP_REFERENCE_THREAD) {
        r->thread_tag = tag;
    }
}

/* ---- the callbacks: memory only, no JNI, no JVM TI ------------------------------ */

static jint JNICALL on_reference(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info, jlong class_tag,
                                 jlong referrer_class_tag, jlong size, jlong *tag_ptr, jlong *referrer_tag_ptr,
                                 jint length, void *user_data)
{
    walk *w = user_data;
    if (w->failed) {
        return JVMTI_VISIT_ABORT;
    }
    /* OBJECT_DUMP: the object's references are named, not followed. */
    jint follow = w->single ? 0 : JVMTI_VISIT_OBJECTS;
    jlong tag = name_object(w, class_tag, size, tag_ptr, length);
    if (follow != 0 && !vtguard_may_follow(w, kind, info, class_tag, tag, referrer_tag_ptr == NULL)) {
        follow = 0;
    }
    if (w->detail == SEAM_HEAP_IDS) {
        return follow;
    }
    if (referrer_tag_ptr == NULL) {
        if (tag != 0) {
            add_root(w, kind, info, tag);
        }
        return follow;
    }
    int32_t owner = heapstore_owner_of(w, *referrer_tag_ptr);
    if (owner < 0) {
        return follow;
    }
    seam_heap_bits v = heapstore_ref_bits(tag);
    switch (kind) {
    case JVMTI_HEAP_REFERENCE_FIELD:
        heapstore_add_fact(w, owner, F_FIELD, JVMPI_CLASS, info->field.index, v);
        break;
    case JVMTI_HEAP_REFERENCE_STATIC_FIELD:
        heapstore_add_fact(w, owner, F_STATIC, JVMPI_CLASS, info->field.index, v);
        break;
    case JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT:
        heapstore_add_fact(w, owner, F_ELEMENT, JVMPI_CLASS, info->array.index, v);
        break;
    case JVMTI_HEAP_REFERENCE_CLASS_LOADER:
        heapstore_add_fact(w, owner, F_LOADER, JVMPI_CLASS, 0, v);
        break;
    case JVMTI_HEAP_REFERENCE_SIGNERS:
        heapstore_add_fact(w, owner, F_SIGNERS, JVMPI_CLASS, 0, v);
        break;
    case JVMTI_HEAP_REFERENCE_PROTECTION_DOMAIN:
        heapstore_add_fact(w, owner, F_DOMAIN, JVMPI_CLASS, 0, v);
        break;
    case JVMTI_HEAP_REFERENCE_INTERFACE:
        heapstore_add_fact(w, owner, F_INTERFACE, JVMPI_CLASS, 0, v);
        break;
    default:
        /* CLASS: the object's class is in its record; SUPERCLASS: read
         * after the walk, JVM TI leaves out java.lang.Object; CONSTANT_POOL:
         * class dumps have no pool entries (jvmpi/heapdump.c). */
        break;
    }
    return w->failed ? JVMTI_VISIT_ABORT : follow;
}

static jint jvmpi_type(jvmtiPrimitiveType t)
{
    switch (t) {
    case JVMTI_PRIMITIVE_TYPE_BOOLEAN: return JVMPI_BOOLEAN;
    case JVMTI_PRIMITIVE_TYPE_BYTE: return JVMPI_BYTE;
    case JVMTI_PRIMITIVE_TYPE_CHAR: return JVMPI_CHAR;
    case JVMTI_PRIMITIVE_TYPE_SHORT: return JVMPI_SHORT;
    case JVMTI_PRIMITIVE_TYPE_INT: return JVMPI_INT;
    case JVMTI_PRIMITIVE_TYPE_LONG: return JVMPI_LONG;
    case JVMTI_PRIMITIVE_TYPE_FLOAT: return JVMPI_FLOAT;
    case JVMTI_PRIMITIVE_TYPE_DOUBLE: return JVMPI_DOUBLE;
    default: return 0;
    }
}

static jint JNICALL on_primitive_field(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
                                       jlong object_class_tag, jlong *object_tag_ptr, jvalue value,
                                       jvmtiPrimitiveType value_type, void *user_data)
{
    walk *w = user_data;
    int32_t owner = heapstore_owner_of(w, *object_tag_ptr);
    jint type = jvmpi_type(value_type);
    if (owner < 0 || type == 0) {
        return w->failed ? JVMTI_VISIT_ABORT : 0;
    }
    seam_heap_bits v;
    memset(&v, 0, sizeof v);
    switch (type) {
    case JVMPI_BOOLEAN: v.z = value.z; break;
    case JVMPI_BYTE: v.b = value.b; break;
    case JVMPI_CHAR: v.c = value.c; break;
    case JVMPI_SHORT: v.s = value.s; break;
    case JVMPI_INT: v.i = value.i; break;
    case JVMPI_LONG: v.j = value.j; break;
    case JVMPI_FLOAT: v.f = value.f; break;
    default: v.d = value.d; break;
    }
    heapstore_add_fact(w, owner, kind == JVMTI_HEAP_REFERENCE_STATIC_FIELD ? F_STATIC : F_FIELD, type,
                       info->field.index, v);
    return w->failed ? JVMTI_VISIT_ABORT : 0;
}

static jint JNICALL on_array_values(jlong class_tag, jlong size, jlong *tag_ptr, jint count,
                                    jvmtiPrimitiveType element_type, const void *elements, void *user_data)
{
    walk *w = user_data;
    int32_t owner = heapstore_owner_of(w, *tag_ptr);
    jint type = jvmpi_type(element_type);
    if (owner < 0 || type == 0 || count <= 0) {
        return 0;
    }
    size_t bytes = (size_t)count * heapstore_type_size(type);
    void *copy = heapstore_arena_alloc(&w->mem, bytes);
    if (copy == NULL) {
        w->failed = true;
        return JVMTI_VISIT_ABORT;
    }
    memcpy(copy, elements, bytes);
    w->recs[owner].values = copy;
    w->recs[owner].length = count;
    return 0;
}

/* ---- taking it ------------------------------------------------------------------ */

typedef struct {
    walk w;
} snapshot_priv;

static long definable_classes(void)
{
    jint n = 0;
    jclass *classes = NULL;
    long definable = 0;
    JNIEnv *env = seam_current_env();
    if (env == NULL || !JVMTI_OK(JVMTI_CALL(bk.jvmti, GetLoadedClasses, &n, &classes))) {
        return 0;
    }
    for (jint i = 0; i < n; i++) {
        jlong tag = 0;
        jint status = 0;
        if (JVMTI_OK(JVMTI_CALL(bk.jvmti_cls, GetTag, classes[i], &tag)) && tag == 0 &&
            JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassStatus, classes[i], &status)) &&
            !(status & JVMTI_CLASS_STATUS_PRIMITIVE) &&
            (status & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PREPARED))) {
            definable++;
        }
        (*env)->DeleteLocalRef(env, classes[i]);
    }
    bk_deallocate(classes);
    return definable;
}

/* OBJECT_DUMP: the object's record, made before the walk, which names the
 * initial object in no callback but its own references. */
static bool single_record(JNIEnv *env, walk *w, jobject obj)
{
    if (is_class_id(w->only_tag)) {
        return heapstore_add_rec(w, w->only_tag, w->class_class_tag, 0, -1) == 0;
    }
    jclass cls = (*env)->GetObjectClass(env, obj);
    jlong ctag = cls != NULL ? seam_tag_from_id(bk_class_id(env, cls)) : 0;
    jint length = -1;
    if (ctag != 0 && ids_array_type(ctag) != JVMPI_NORMAL_OBJECT) {
        length = (*env)->GetArrayLength(env, (jarray)obj);
    }
    jlong size = 0;
    JVMTI_CALL(bk.jvmti, GetObjectSize, obj, &size);
    if (cls != NULL) {
        (*env)->DeleteLocalRef(env, cls);
    }
    if (ctag == 0) {
        LOG_ERROR_UNLESS_VM_DEAD("OBJECT_DUMP: the class of object %p has no ID", (void *)seam_id_from_tag(w->only_tag));
        return false;
    }
    return heapstore_add_rec(w, w->only_tag, ctag, size, length) == 0;
}

/* The classes an OBJECT_DUMP's snapshot lists: its object's class (a Class
 * object's, its own) and that class's superclasses. */
static bool object_chain(klasses *ks, jobject obj)
{
    JNIEnv *env = ks->env;
    if (is_class_id(ks->w->only_tag)) {
        return fieldmap_klasses_chain(ks, (jclass)obj);
    }
    jclass cls = (*env)->GetObjectClass(env, obj);
    return cls != NULL && fieldmap_klasses_chain(ks, cls);
}

/* only: NULL for HEAP_DUMP, else OBJECT_DUMP's object. */
static bool snapshot_take(JNIEnv *env, jobjectID only, seam_heap_detail detail, seam_heap_snapshot *out)
{
    memset(out, 0, sizeof *out);
    if (only == NULL) {
        bk_exitfrees_wait();
    }
    snapshot_priv *p = calloc(1, sizeof *p);
    if (p == NULL) {
        LOG_ERROR("heap dump: out of memory");
        return false;
    }
    walk *w = &p->w;
    jobject obj = NULL;
    /* OBJECT_DUMP: the object's class and superclasses, which the read
     * and the snapshot share, made in a local frame of their own. */
    klasses chain;
    memset(&chain, 0, sizeof chain);
    chain.env = env;
    chain.w = w;
    bool framed = false;
    /* JVM TI names no reference in its JNI_GLOBAL roots; the layer's JNI
     * table keeps the live ones, matched to the roots by tag below. */
    int n_grefs = 0;
    bk_global_ref *grefs = only == NULL ? bk_global_refs(env, &n_grefs) : NULL;
    if (only != NULL) {
        /* A class by its ID among the classes alone: the index of every
         * object (finder.c) would cost a pass over the heap to build. */
        jlong tag = seam_tag_from_id(only);
        obj = is_class_id(tag) ? onedump_class_of_id(env, tag) : bk_object_of_tag(env, tag);
        framed = obj != NULL && (*env)->PushLocalFrame(env, 64) == 0;
        if (!framed) {
            (*env)->ExceptionClear(env);
            if (obj != NULL) {
                (*env)->DeleteLocalRef(env, obj);
            }
            free(p);
            return false;
        }
    } else {
        seam_define_loaded_classes(env);
    }
    jvmtiHeapCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.heap_reference_callback = on_reference;
    if (detail == SEAM_HEAP_VALUES) {
        cb.primitive_field_callback = on_primitive_field;
        cb.array_primitive_value_callback = on_array_values;
    }
    bool walked = false;
    /* One object is read through JNI (see onedump.c), else walked. */
    bool by_jni = only != NULL;
    for (int attempt = 0; attempt < MAX_WALKS; attempt++) {
        heapstore_walk_free(w);
        heapstore_arena_free(&w->mem);
        memset(w, 0, sizeof *w);
        w->detail = detail;
        w->single = only != NULL;
        w->only_tag = seam_tag_from_id(only);
        w->class_class_tag = bk_class_class_tag();
        w->last_owner = -1;
        if (!w->single && !vtguard_prepare(w)) {
            LOG_ERROR("heap dump: out of memory");
            break;
        }
        if (w->single && !single_record(env, w, obj)) {
            break;
        }
        /* After the record: that may have given the object's class its ID. */
        if (w->single && chain.n == 0 && !chain.partial && !object_chain(&chain, obj)) {
            LOG_ERROR("OBJECT_DUMP: out of memory");
            break;
        }
        if (by_jni) {
            by_jni = false;
            if (onedump_read(env, &chain, obj)) {
                walked = true;
                break;
            }
            LOG_DEBUG("OBJECT_DUMP of %p: not readable through JNI, walked instead", (void *)only);
            attempt--;
            continue;
        }
        if (w->single) {
            bk_exitfrees_wait(); /* a heap pass after all (heap dumps waited first thing) */
        }
        if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, FollowReferences, 0, NULL, obj, &cb, w))) {
            break;
        }
        if (w->failed) {
            LOG_ERROR("heap dump: out of memory during the heap walk");
            break;
        }
        walked = true;
        /* Classes loaded since they were defined: define them, walk again.
         * Classes loaded but not linked (their objects can come from the
         * CDS archive) cannot be defined: no point walking again for them. */
        if (w->orphans == 0 || attempt + 1 == MAX_WALKS || definable_classes() == 0) {
            break;
        }
        LOG_DEBUG("heap dump: %ld objects of classes without an ID; walking again", w->orphans);
        seam_define_loaded_classes(env);
    }
    bool resolved = walked && heapsnap_resolve_aliases(env, w);
    if (resolved) {
        long left_out = w->orphans;
        for (int32_t i = 0; i < w->n_recs && resolved; i++) {
            if (w->recs[i].kind == KIND_NONE) {
                left_out++;
                resolved = heapstore_tagmap_put(&w->dropped, w->recs[i].tag, 0);
            }
        }
        if (left_out > 0) {
            LOG_INFO("heap dump: %ld objects left out: their classes have no ID (not linked yet)", left_out);
        }
    }
    bool built = resolved && heapsnap_build(env, w, w->single ? &chain : NULL, out);
    fieldmap_klasses_free(&chain);
    if (framed) {
        (*env)->PopLocalFrame(env, NULL);
    }
    if (obj != NULL) {
        (*env)->DeleteLocalRef(env, obj);
    }
    if (!built) {
        if (walked) {
            LOG_ERROR("heap dump: out of memory building the snapshot");
        }
        heapstore_walk_free(w);
        heapstore_arena_free(&w->mem);
        free(p);
        free(grefs);
        memset(out, 0, sizeof *out);
        return false;
    }
    heapsnap_name_global_refs(out, grefs, n_grefs);
    free(grefs);
    /* What the snapshot points into (the arena) stays; the walk's own
     * tables go now. */
    heapstore_walk_free(w);
    out->priv = p;
    return true;
}

bool seam_heap_snapshot_take(JNIEnv *env, seam_heap_detail detail, seam_heap_snapshot *out)
{
    return snapshot_take(env, NULL, detail, out);
}

bool seam_object_snapshot_take(JNIEnv *env, jobjectID id, seam_heap_snapshot *out)
{
    return id != NULL && snapshot_take(env, id, SEAM_HEAP_VALUES, out);
}

void seam_heap_snapshot_free(seam_heap_snapshot *snap)
{
    snapshot_priv *p = snap->priv;
    if (p != NULL) {
        heapstore_walk_free(&p->w);
        heapstore_arena_free(&p->w.mem);
        free(p);
    }
    memset(snap, 0, sizeof *snap);
}
