/*
 * heapsnap.c - the snapshot from a heap walk's records: each record's
 * facts in order, classes filled from the walk and from the VM, objects
 * with their fields named by CLASS_LOAD slot, roots, the references behind
 * JNI_GLOBAL roots, and Class objects found under object tags.
 *
 * Separate from heapwalk.c: everything here runs after the walk, may call
 * JNI and JVM TI, and turns JVM TI's view into the seam's.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "fieldmap.h"
#include "heapsnap.h"

/* ---- the snapshot ------------------------------------------------------------ */

static int by_owner(const void *a, const void *b)
{
    const run *x = a, *y = b;
    if (x->owner != y->owner) {
        return x->owner < y->owner ? -1 : 1;
    }
    return x->first < y->first ? -1 : x->first > y->first;
}

static int by_class_id(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const seam_heap_class *)a)->id;
    uintptr_t y = (uintptr_t)((const seam_heap_class *)b)->id;
    return x < y ? -1 : x > y;
}

/* For each record, its first run in the sorted runs (-1: no facts). */
static int32_t *index_runs(walk *w)
{
    int32_t *first = malloc(((size_t)w->n_recs + 1) * sizeof *first);
    if (first == NULL) {
        return NULL;
    }
    for (int32_t i = 0; i < w->n_recs; i++) {
        first[i] = -1;
    }
    qsort(w->runs, w->n_runs, sizeof *w->runs, by_owner);
    for (size_t r = w->n_runs; r-- > 0;) {
        first[w->runs[r].owner] = (int32_t)r;
    }
    return first;
}

/* Calls visit for every fact of a record, in walk order. */
#define FOR_FACTS(w, first_run, rec, f)                                                                      \
    for (size_t r_ = (first_run)[rec] < 0 ? (w)->n_runs : (size_t)(first_run)[rec];                      \
         r_ < (w)->n_runs && (w)->runs[r_].owner == (rec); r_++)                                           \
        for (size_t i_ = 0; i_ < (w)->runs[r_].count; i_++)                                                \
            for (const fact *f = fact_at((w), (w)->runs[r_].first + i_); f != NULL; f = NULL)

static jfieldID class_name_field(JNIEnv *env)
{
    static jfieldID fid;
    static bool tried;
    if (!tried) {
        tried = true;
        jclass cc = (*env)->FindClass(env, "java/lang/Class");
        if (cc != NULL) {
            fid = (*env)->GetFieldID(env, cc, "name", "Ljava/lang/String;");
            (*env)->DeleteLocalRef(env, cc);
        }
        if ((*env)->ExceptionCheck(env)) {
            (*env)->ExceptionClear(env);
            fid = NULL;
        }
    }
    return fid;
}

/* The class-name String the VM caches in the Class object (what JVMPI's
 * class dump names), when it is set and in this dump. */
static jobjectID cached_name(klasses *ks, jclass cls)
{
    JNIEnv *env = ks->env;
    jfieldID fid = class_name_field(env);
    if (fid == NULL || cls == NULL || ks->w->single) {
        return NULL;
    }
    jobject name = (*env)->GetObjectField(env, cls, fid);
    if (name == NULL) {
        return NULL;
    }
    jlong tag = 0;
    JVMTI_CALL(bk.jvmti, GetTag, name, &tag);
    (*env)->DeleteLocalRef(env, name);
    return tag != 0 && heapstore_tagmap_get(&ks->w->index, tag) >= 0 ? seam_id_from_tag(tag) : NULL;
}

/* The class tag an object tag stands for (alias), or the tag itself. */
static jlong unalias(const walk *w, jlong tag)
{
    int32_t i = heapstore_tagmap_get(&w->alias, tag);
    return i >= 0 ? w->alias_to[i] : tag;
}

/* A reference as the snapshot writes it.  In a heap dump every object
 * referred to is in the dump, or the reference is null: objects left out
 * (their class has no ID) must not leave IDs that resolve to nothing. */
static jobjectID ref_id(const walk *w, jobjectID id)
{
    jlong tag = seam_tag_from_id(id);
    if (tag == 0) {
        return NULL;
    }
    tag = unalias(w, tag);
    return heapstore_tagmap_get(&w->dropped, tag) >= 0 ? NULL : seam_id_from_tag(tag);
}

static seam_heap_bits ref_value(const walk *w, jint type, seam_heap_bits v)
{
    if (type == JVMPI_CLASS) {
        v.id = ref_id(w, v.id);
    }
    return v;
}

/* Instance sizes of classes, as measured on an instance in an earlier
 * snapshot: a later one without an instance (an OBJECT_DUMP of the class)
 * gives the same size rather than an estimate, which differs where the VM
 * lays fields out with gaps (JDK 8 starts a subclass's fields after its
 * superclass's, unpacked). */
typedef struct {
    jlong class_tag;
    jint size;
    UT_hash_handle hh;
} measured_size;
static measured_size *measured;
static pthread_mutex_t measured_lock = PTHREAD_MUTEX_INITIALIZER;

static void measured_put(jlong class_tag, jint size)
{
    measured_size *m = NULL;
    pthread_mutex_lock(&measured_lock);
    HASH_FIND(hh, measured, &class_tag, sizeof class_tag, m);
    if (m == NULL && (m = malloc(sizeof *m)) != NULL) {
        m->class_tag = class_tag;
        HASH_ADD(hh, measured, class_tag, sizeof m->class_tag, m);
    }
    if (m != NULL) {
        m->size = size;
    }
    pthread_mutex_unlock(&measured_lock);
}

static jint measured_get(jlong class_tag)
{
    measured_size *m = NULL;
    pthread_mutex_lock(&measured_lock);
    HASH_FIND(hh, measured, &class_tag, sizeof class_tag, m);
    jint size = m != NULL ? m->size : -1;
    pthread_mutex_unlock(&measured_lock);
    return size;
}

/* Fills a class entry: what the walk saw of the class object, if it is in
 * the snapshot (rec >= 0), and what the VM says of the class. */
static bool fill_class(klasses *ks, int32_t *first_run, jlong tag, int32_t rec, seam_heap_class *hc)
{
    walk *w = ks->w;
    memset(hc, 0, sizeof *hc);
    hc->id = seam_id_from_tag(tag);
    fieldmap_klass_resolve(ks, tag);
    klass *k = fieldmap_klass_of(ks, tag);
    if (k == NULL) {
        return true;
    }
    hc->super = seam_id_from_tag(k->super_tag);
    hc->element = seam_id_from_tag(k->element_tag);
    bool is_array = ids_array_type(tag) != JVMPI_NORMAL_OBJECT;
    if (k->is_interface || is_array) {
        hc->instance_size = 0;
    } else if (k->observed_size >= 0) {
        hc->instance_size = k->observed_size;
    } else if ((hc->instance_size = measured_get(tag)) < 0) {
        hc->instance_size = fieldmap_estimate_instance_size(ks, tag);
    }
    if (rec < 0 || w->detail == SEAM_HEAP_IDS) {
        return true;
    }
    hc->name = cached_name(ks, fieldmap_klass_of(ks, tag)->cls);
    jint n_ifaces = 0, n_statics = 0;
    FOR_FACTS(w, first_run, rec, f) {
        n_ifaces += f->kind == F_INTERFACE;
        n_statics += f->kind == F_STATIC;
    }
    hc->interfaces = heapstore_arena_calloc(&w->mem, (size_t)n_ifaces + 1, sizeof *hc->interfaces);
    hc->statics = heapstore_arena_calloc(&w->mem, (size_t)n_statics + 1, sizeof *hc->statics);
    if (hc->interfaces == NULL || hc->statics == NULL) {
        return false;
    }
    if (n_statics > 0) {
        k = fieldmap_klass_field_map(ks, tag);
    }
    FOR_FACTS(w, first_run, rec, f) {
        switch (f->kind) {
        case F_LOADER: hc->loader = ref_id(w, f->v.id); break;
        case F_SIGNERS: hc->signers = ref_id(w, f->v.id); break;
        case F_DOMAIN: hc->domain = ref_id(w, f->v.id); break;
        case F_INTERFACE: hc->interfaces[hc->num_interfaces++] = ref_id(w, f->v.id); break;
        case F_STATIC: {
            const field_key *key = fieldmap_field_of(k, f->index);
            if (key == NULL || !key->is_static || key->decl != tag) {
                LOG_DEBUG("heap dump: static field index %d of class %p not found", (int)f->index, (void *)hc->id);
                break;
            }
            seam_heap_field *s = &hc->statics[hc->num_statics++];
            s->decl = hc->id;
            s->slot = key->slot;
            s->type = f->type;
            s->v = ref_value(w, f->type, f->v);
            break;
        }
        default: break;
        }
    }
    return true;
}

static bool fill_object(klasses *ks, int32_t *first_run, int32_t rec, seam_heap_object *o)
{
    walk *w = ks->w;
    const obj_rec *r = &w->recs[rec];
    memset(o, 0, sizeof *o);
    o->id = seam_id_from_tag(r->tag);
    o->kind = r->kind;
    if (r->kind == SEAM_HEAP_CLASS) {
        return true;
    }
    o->class_id = seam_id_from_tag(r->class_tag);
    switch (r->kind) {
    case SEAM_HEAP_PRIM_ARRAY:
        o->count = r->length;
        o->elem_type = r->elem_type;
        o->u.values = w->detail == SEAM_HEAP_VALUES ? r->values : NULL;
        return true;
    case SEAM_HEAP_OBJ_ARRAY:
        o->count = r->length;
        if (w->detail == SEAM_HEAP_IDS) {
            return true;
        }
        o->u.elements = heapstore_arena_calloc(&w->mem, (size_t)r->length + 1, sizeof *o->u.elements);
        if (o->u.elements == NULL) {
            return false;
        }
        FOR_FACTS(w, first_run, rec, f) {
            if (f->kind == F_ELEMENT && f->index >= 0 && f->index < r->length) {
                o->u.elements[f->index] = ref_id(w, f->v.id);
            }
        }
        return true;
    default:
        break;
    }
    if (w->detail == SEAM_HEAP_IDS) {
        return true;
    }
    jint n = 0;
    FOR_FACTS(w, first_run, rec, f) { n += f->kind == F_FIELD; }
    if (n == 0) {
        return true;
    }
    o->u.fields = heapstore_arena_calloc(&w->mem, (size_t)n, sizeof *o->u.fields);
    if (o->u.fields == NULL) {
        return false;
    }
    const klass *k = fieldmap_klass_field_map(ks, r->class_tag);
    FOR_FACTS(w, first_run, rec, f) {
        if (f->kind != F_FIELD) {
            continue;
        }
        const field_key *key = fieldmap_field_of(k, f->index);
        if (key == NULL || key->is_static) {
            LOG_DEBUG("heap dump: field index %d of object %p not found", (int)f->index, (void *)o->id);
            continue;
        }
        seam_heap_field *d = &o->u.fields[o->count++];
        d->decl = seam_id_from_tag(key->decl);
        d->slot = key->slot;
        d->type = f->type;
        d->v = ref_value(w, f->type, f->v);
    }
    return true;
}

/* Marks a class and its superclasses as needed in the snapshot. */
static void need_class(klasses *ks, jlong tag)
{
    for (int d = 0; tag != 0 && d < MAX_CHAIN; d++) {
        klass *k = fieldmap_klass_of(ks, tag);
        if (k == NULL) {
            k = fieldmap_klass_add(ks, tag, NULL); /* no longer loaded: an entry with what is known */
            if (k == NULL) {
                return;
            }
        }
        if (k->needed) {
            return;
        }
        k->needed = true;
        fieldmap_klass_resolve(ks, tag);
        tag = fieldmap_klass_of(ks, tag)->super_tag;
    }
}

/* SYSTEM_CLASS roots include what the boot loader's data holds besides
 * classes (module objects, constant pool caches): sticky classes are
 * classes only. */
static jint root_kind(jvmtiHeapReferenceKind kind, jlong tag)
{
    switch (kind) {
    case JVMTI_HEAP_REFERENCE_JNI_GLOBAL: return JVMPI_GC_ROOT_JNI_GLOBAL;
    case JVMTI_HEAP_REFERENCE_JNI_LOCAL: return JVMPI_GC_ROOT_JNI_LOCAL;
    case JVMTI_HEAP_REFERENCE_STACK_LOCAL: return JVMPI_GC_ROOT_JAVA_FRAME;
    case JVMTI_HEAP_REFERENCE_SYSTEM_CLASS: return is_class_id(tag) ? JVMPI_GC_ROOT_STICKY_CLASS : JVMPI_GC_ROOT_UNKNOWN;
    case JVMTI_HEAP_REFERENCE_THREAD: return JVMPI_GC_ROOT_THREAD_BLOCK;
    case JVMTI_HEAP_REFERENCE_MONITOR: return JVMPI_GC_ROOT_MONITOR_USED;
    default: return JVMPI_GC_ROOT_UNKNOWN;
    }
}

bool heapsnap_build(JNIEnv *env, walk *w, klasses *chain, seam_heap_snapshot *out)
{
    /* An OBJECT_DUMP lists its object's class chain alone: GetLoadedClasses
     * would cost time in proportion to every class loaded, per request. */
    klasses all;
    memset(&all, 0, sizeof all);
    all.env = env;
    all.w = w;
    klasses *ks = chain != NULL ? chain : &all;
    bool ok = false;
    int32_t *first_run = index_runs(w);
    if (first_run == NULL || (chain == NULL && !fieldmap_klasses_load(&all))) {
        goto done;
    }
    if (w->detail != SEAM_HEAP_IDS) {
        for (int32_t i = 0; i < w->n_recs; i++) {
            const obj_rec *r = &w->recs[i];
            if (r->kind == KIND_NONE) {
                continue;
            }
            need_class(ks, r->kind == SEAM_HEAP_CLASS ? r->tag : r->class_tag);
            klass *k = r->kind == SEAM_HEAP_INSTANCE ? fieldmap_klass_of(ks, r->class_tag) : NULL;
            if (k != NULL && k->observed_size < 0 && r->class_tag != w->class_class_tag) {
                k->observed_size = (jint)r->size;
                measured_put(r->class_tag, k->observed_size);
            }
        }
    }
    int n_classes = 0;
    for (int32_t i = 0; i < ks->n; i++) {
        n_classes += ks->k[i].needed;
    }
    out->classes = heapstore_arena_calloc(&w->mem, (size_t)n_classes + 1, sizeof *out->classes);
    out->objects = heapstore_arena_calloc(&w->mem, (size_t)w->n_recs + 1, sizeof *out->objects);
    out->roots = heapstore_arena_calloc(&w->mem, w->n_roots + 1, sizeof *out->roots);
    if (out->classes == NULL || out->objects == NULL || out->roots == NULL) {
        goto done;
    }
    for (int32_t i = 0; i < ks->n; i++) {
        if (ks->k[i].needed) {
            jlong tag = ks->k[i].tag;
            int32_t rec = w->single ? (tag == w->only_tag ? 0 : -1) : heapstore_tagmap_get(&w->index, tag);
            if (!fill_class(ks, first_run, tag, rec, &out->classes[out->num_classes++])) {
                goto done;
            }
        }
    }
    qsort(out->classes, (size_t)out->num_classes, sizeof *out->classes, by_class_id);
    for (int32_t i = 0; i < w->n_recs; i++) {
        if (w->recs[i].kind != KIND_NONE && !fill_object(ks, first_run, i, &out->objects[out->num_objects++])) {
            goto done;
        }
    }
    for (size_t i = 0; i < w->n_roots; i++) {
        const root_rec *r = &w->roots[i];
        jobjectID id = ref_id(w, seam_id_from_tag(r->tag));
        if (id == NULL) {
            continue;
        }
        seam_heap_root *d = &out->roots[out->num_roots++];
        d->kind = root_kind(r->kind, seam_tag_from_id(id));
        d->id = id;
        d->thread = seam_id_from_tag(r->kind == JVMTI_HEAP_REFERENCE_THREAD ? seam_tag_from_id(id) : r->thread_tag);
        d->depth = r->depth;
        d->method = r->method;
        d->ref = NULL;
    }
    ok = true;
done:
    free(first_run);
    fieldmap_klasses_free(&all);
    return ok;
}

/* ---- after the walk: the references behind JNI_GLOBAL roots ------------------------- */

static int by_ref_tag(const void *a, const void *b)
{
    jlong x = ((const bk_global_ref *)a)->tag, y = ((const bk_global_ref *)b)->tag;
    return x < y ? -1 : x > y;
}

/* Each JNI_GLOBAL root gets a live global reference to its object, each
 * reference used once (an object held by two references is two roots).
 * References made before VM init are not known: those roots keep NULL. */
void heapsnap_name_global_refs(seam_heap_snapshot *out, bk_global_ref *refs, int n)
{
    if (refs == NULL || n == 0) {
        return;
    }
    qsort(refs, (size_t)n, sizeof *refs, by_ref_tag);
    for (jint i = 0; i < out->num_roots; i++) {
        seam_heap_root *r = &out->roots[i];
        if (r->kind != JVMPI_GC_ROOT_JNI_GLOBAL) {
            continue;
        }
        bk_global_ref key = {seam_tag_from_id(r->id), NULL};
        bk_global_ref *hit = bsearch(&key, refs, (size_t)n, sizeof *refs, by_ref_tag);
        while (hit != NULL && hit > refs && hit[-1].tag == key.tag) {
            hit--;
        }
        for (; hit != NULL && hit < refs + n && hit->tag == key.tag; hit++) {
            if (hit->ref != NULL) {
                r->ref = hit->ref;
                hit->ref = NULL;
                break;
            }
        }
    }
}

/* ---- after the walk: Class objects under object tags -------------------------------- */

/* A class's ID is its tag in the class environment; this environment's tag
 * is the same value unless something gave the Class object an object tag
 * (its allocation reported before the class had its ID, or the class not
 * being linked yet).  Such tags are looked up in the class environment;
 * what resolves is dumped under the class ID, records whose class still has
 * no ID are left out. */
bool heapsnap_resolve_aliases(JNIEnv *env, walk *w)
{
    if (w->n_candidates == 0) {
        return true;
    }
    jint n = 0;
    jobject *objs = NULL;
    jlong *tags = NULL;
    if (w->n_candidates > INT32_MAX ||
        !JVMTI_OK(JVMTI_CALL(bk.jvmti, GetObjectsWithTags, (jint)w->n_candidates, w->candidates, &n, &objs, &tags))) {
        return false;
    }
    w->alias_to = calloc((size_t)n + 1, sizeof *w->alias_to);
    int32_t n_alias = 0;
    for (jint i = 0; i < n; i++) {
        jlong ct = 0;
        if (w->alias_to != NULL && heapstore_tagmap_get(&w->alias, tags[i]) < 0 &&
            JVMTI_OK(JVMTI_CALL(bk.jvmti_cls, GetTag, objs[i], &ct)) && is_class_id(ct) &&
            heapstore_tagmap_put(&w->alias, tags[i], n_alias)) {
            w->alias_to[n_alias++] = ct;
        }
        (*env)->DeleteLocalRef(env, objs[i]);
    }
    bk_deallocate(objs);
    bk_deallocate(tags);
    if (w->alias_to == NULL) {
        return false;
    }
    LOG_DEBUG("heap dump: %zu Class objects under object tags, %d of them with a class ID", w->n_candidates,
              (int)n_alias);
    if (w->single || n_alias == 0) {
        return true;
    }
    jlong class_class = unalias(w, w->class_class_tag);
    for (int32_t i = 0; i < w->n_recs; i++) {
        obj_rec *r = &w->recs[i];
        jlong t = unalias(w, r->tag);
        r->class_tag = unalias(w, r->class_tag);
        if (t != r->tag) {
            r->tag = t;
            if (!heapstore_tagmap_put(&w->index, t, i)) {
                return false;
            }
        }
    }
    w->class_class_tag = class_class;
    for (int32_t i = 0; i < w->n_recs; i++) {
        heapstore_set_kind(w, &w->recs[i]);
    }
    return true;
}
