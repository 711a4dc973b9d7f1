/*
 * fieldmap.c - classes after the walk, as the VM describes them: the loaded
 * classes by ID, their superclasses and kinds, their own fields, and JVM
 * TI's field indexes mapped to CLASS_LOAD's slots.
 *
 * Separate from the walk (which may not call the VM) and from the snapshot
 * building (which only asks "what field is index i of class c"): JVM TI's
 * field numbering is a subject of its own.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fieldmap.h"

#define ACC_STATIC 0x0008
#define ACC_INTERFACE 0x0200
/* Object layout for classes no instance of which is in the heap. */
#define OBJECT_HEADER 12
#define OBJECT_ALIGN 8

/* ---- after the walk: classes, as the VM describes them ----------------------------- */

klass *fieldmap_klass_of(klasses *ks, jlong tag)
{
    int32_t i = heapstore_tagmap_get(&ks->by_tag, tag);
    return i >= 0 ? &ks->k[i] : NULL;
}

klass *fieldmap_klass_add(klasses *ks, jlong tag, jclass cls)
{
    if (ks->n == ks->cap) {
        int32_t cap = ks->cap ? ks->cap * 2 : 1024;
        klass *grown = realloc(ks->k, (size_t)cap * sizeof *grown);
        if (grown == NULL) {
            return NULL;
        }
        ks->k = grown;
        ks->cap = cap;
    }
    if (!heapstore_tagmap_put(&ks->by_tag, tag, ks->n)) {
        return NULL;
    }
    klass *k = &ks->k[ks->n++];
    memset(k, 0, sizeof *k);
    k->tag = tag;
    k->cls = cls;
    k->observed_size = -1;
    return k;
}

/* A class's ID: its tag in the class environment, which nothing else sets. */
static jlong class_tag_of(jclass cls)
{
    jlong tag = 0;
    if (cls == NULL || !JVMTI_OK(JVMTI_CALL(bk.jvmti_cls, GetTag, cls, &tag)) || !is_class_id(tag)) {
        return 0;
    }
    return tag;
}

bool fieldmap_klasses_load(klasses *ks)
{
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetLoadedClasses, &ks->n_loaded, &ks->loaded))) {
        ks->n_loaded = 0;
        ks->loaded = NULL;
        return false;
    }
    for (jint i = 0; i < ks->n_loaded; i++) {
        jlong tag = class_tag_of(ks->loaded[i]);
        if (tag != 0 && fieldmap_klass_of(ks, tag) == NULL && fieldmap_klass_add(ks, tag, ks->loaded[i]) == NULL) {
            return false;
        }
    }
    return true;
}

/* An OBJECT_DUMP needs only its object's class and that class's
 * superclasses: GetLoadedClasses would cost time in proportion to every
 * class loaded, for each request. */
bool fieldmap_klasses_chain(klasses *ks, jclass cls)
{
    JNIEnv *env = ks->env;
    jclass c = cls != NULL ? (*env)->NewLocalRef(env, cls) : NULL;
    for (int d = 0; c != NULL && d < MAX_CHAIN; d++) {
        jlong tag = class_tag_of(c);
        if (tag == 0) {
            /* No ID: a snapshot names none of it, as with every loaded
             * class, but its fields have no place in JVM TI's numbering. */
            ks->partial = true;
            break;
        }
        if (fieldmap_klass_of(ks, tag) == NULL && fieldmap_klass_add(ks, tag, c) == NULL) {
            return false;
        }
        c = (*env)->GetSuperclass(env, c);
    }
    return true;
}

void fieldmap_klasses_free(klasses *ks)
{
    for (int32_t i = 0; i < ks->n; i++) {
        free(ks->k[i].own);
        free(ks->k[i].map);
    }
    for (jint i = 0; i < ks->n_loaded; i++) {
        (*ks->env)->DeleteLocalRef(ks->env, ks->loaded[i]);
    }
    bk_deallocate(ks->loaded);
    free(ks->k);
    heapstore_tagmap_free(&ks->by_tag);
}

/* Superclass and kind; pointers into ks->k may move, so callers re-find. */
void fieldmap_klass_resolve(klasses *ks, jlong tag)
{
    klass *k = fieldmap_klass_of(ks, tag);
    if (k == NULL || k->resolved) {
        return;
    }
    k->resolved = true;
    if (k->cls == NULL) {
        return;
    }
    JNIEnv *env = ks->env;
    jint mods = 0;
    if (JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassModifiers, k->cls, &mods))) {
        k->is_interface = (mods & ACC_INTERFACE) != 0;
    }
    jclass super = (*env)->GetSuperclass(env, k->cls);
    if (super != NULL) {
        k->super_tag = class_tag_of(super);
        (*env)->DeleteLocalRef(env, super);
    }
    if (ids_array_type(tag) == JVMPI_CLASS) {
        fieldmap_klass_of(ks, tag)->element_tag = seam_tag_from_id(bk_element_class_id(env, k->cls));
    }
}

/* The class's own fields in GetClassFields order, numbered the way
 * classinfo.c numbers them for CLASS_LOAD (statics and instances apart). */
static void klass_read_fields(klass *k)
{
    if (k->own_read) {
        return;
    }
    k->own_read = true;
    jint n = 0;
    jfieldID *fields = NULL;
    if (k->cls == NULL || !JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassFields, k->cls, &n, &fields))) {
        return;
    }
    k->own = calloc((size_t)n + 1, sizeof *k->own);
    if (k->own == NULL) {
        bk_deallocate(fields);
        return;
    }
    k->n_own = n;
    int32_t statics = 0, instances = 0;
    for (jint i = 0; i < n; i++) {
        char *name = NULL, *sig = NULL;
        jint mods = 0;
        own_field *f = &k->own[i];
        if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetFieldName, k->cls, fields[i], &name, &sig, NULL)) ||
            !JVMTI_OK(JVMTI_CALL(bk.jvmti, GetFieldModifiers, k->cls, fields[i], &mods))) {
            bk_deallocate(name);
            bk_deallocate(sig);
            continue; /* classinfo.c leaves it out of CLASS_LOAD too */
        }
        f->valid = true;
        f->type = sig != NULL ? sig[0] : 'L';
        f->is_static = (mods & ACC_STATIC) != 0;
        f->slot = f->is_static ? statics++ : instances++;
        bk_deallocate(name);
        bk_deallocate(sig);
    }
    bk_deallocate(fields);
}

/* Adds the interfaces of cls not yet in seen, and theirs, counting fields. */
static void count_interface_fields(JNIEnv *env, jclass cls, jclass **seen, int *n_seen, int *cap_seen,
                                   int32_t *fields)
{
    jint n = 0;
    jclass *ifaces = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetImplementedInterfaces, cls, &n, &ifaces))) {
        return;
    }
    for (jint i = 0; i < n; i++) {
        bool known = false;
        for (int s = 0; s < *n_seen && !known; s++) {
            known = (*env)->IsSameObject(env, (*seen)[s], ifaces[i]);
        }
        if (known) {
            (*env)->DeleteLocalRef(env, ifaces[i]);
            continue;
        }
        if (*n_seen == *cap_seen) {
            int cap = *cap_seen ? *cap_seen * 2 : 16;
            jclass *grown = realloc(*seen, (size_t)cap * sizeof *grown);
            if (grown == NULL) {
                (*env)->DeleteLocalRef(env, ifaces[i]);
                continue;
            }
            *seen = grown;
            *cap_seen = cap;
        }
        (*seen)[(*n_seen)++] = ifaces[i];
        jint nf = 0;
        jfieldID *f = NULL;
        if (JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassFields, ifaces[i], &nf, &f))) {
            *fields += nf;
            bk_deallocate(f);
        }
        count_interface_fields(env, ifaces[i], seen, n_seen, cap_seen, fields);
    }
    bk_deallocate(ifaces);
}

/* JVM TI's field indexes for a class (jvmtiHeapReferenceInfoField): the
 * fields of every interface the class implements, directly or through its
 * supers and superinterfaces, each interface once, come first; then all
 * fields of java.lang.Object, of each class down the chain, and of the
 * class itself, statics included, in GetClassFields order.  For an
 * interface: its superinterfaces' fields, then its own. */
klass *fieldmap_klass_field_map(klasses *ks, jlong tag)
{
    klass *k = fieldmap_klass_of(ks, tag);
    if (k == NULL || k->map_built) {
        return k;
    }
    k->map_built = true;
    JNIEnv *env = ks->env;
    fieldmap_klass_resolve(ks, tag);
    k = fieldmap_klass_of(ks, tag);
    if (k->cls == NULL) {
        return k;
    }
    jlong chain[MAX_CHAIN];
    int depth = 0;
    if (k->is_interface) {
        chain[depth++] = tag;
    } else {
        for (jlong t = tag; t != 0 && depth < MAX_CHAIN; depth++) {
            chain[depth] = t;
            fieldmap_klass_resolve(ks, t);
            klass *c = fieldmap_klass_of(ks, t);
            t = c != NULL ? c->super_tag : 0;
        }
    }
    if ((*env)->PushLocalFrame(env, 64) != 0) {
        (*env)->ExceptionClear(env);
        return fieldmap_klass_of(ks, tag);
    }
    jclass *seen = NULL;
    int n_seen = 0, cap_seen = 0;
    int32_t base = 0, total = 0;
    for (int d = 0; d < depth; d++) {
        klass *c = fieldmap_klass_of(ks, chain[d]);
        if (c != NULL && c->cls != NULL) {
            count_interface_fields(env, c->cls, &seen, &n_seen, &cap_seen, &base);
            klass_read_fields(c);
            total += c->n_own;
        }
    }
    free(seen);
    (*env)->PopLocalFrame(env, NULL);
    k = fieldmap_klass_of(ks, tag);
    field_key *map = calloc((size_t)total + 1, sizeof *map);
    if (map == NULL) {
        return k;
    }
    int32_t at = 0;
    for (int d = depth - 1; d >= 0; d--) {
        klass *c = fieldmap_klass_of(ks, chain[d]);
        for (int32_t i = 0; c != NULL && i < c->n_own && at < total; i++, at++) {
            map[at].decl = c->own[i].valid ? chain[d] : 0;
            map[at].slot = c->own[i].slot;
            map[at].is_static = c->own[i].is_static;
        }
    }
    k = fieldmap_klass_of(ks, tag);
    k->map = map;
    k->map_base = base;
    k->map_count = at;
    return k;
}

const field_key *fieldmap_field_of(const klass *k, jint index)
{
    if (k == NULL || k->map == NULL) {
        return NULL;
    }
    int64_t i = (int64_t)index - k->map_base;
    return i >= 0 && i < k->map_count && k->map[i].decl != 0 ? &k->map[i] : NULL;
}

static jint ref_size(const walk *w) { return w->wide_refs ? 8 : 4; }

/* Bytes of the fields of one class, by kind, in a layout before JDK 15. */
typedef struct {
    int32_t wide, word, half, byte, ref;
} field_counts;

/* Where the fields of a class end (unaligned) when they start at offset, as
 * HotSpot laid them out before JDK 15: wide ones first, an int, shorts or
 * bytes (or else a reference) in the gap before them when offset is not
 * 8-aligned, then ints, shorts, bytes and references. */
static jlong block_end(jlong offset, field_counts n, jint ref)
{
    if (n.wide > 0 && offset % 8 != 0) {
        jlong gap = 8 - offset % 8;
        if (n.word > 0 && gap >= 4) {
            n.word--;
            gap -= 4;
        }
        for (; gap >= 2 && n.half > 0; gap -= 2) {
            n.half--;
        }
        for (; gap >= 1 && n.byte > 0; gap--) {
            n.byte--;
        }
        if (gap >= ref && n.ref > 0) {
            n.ref--;
        }
        offset += 8 - offset % 8;
    }
    offset += 8 * (jlong)n.wide + 4 * (jlong)n.word + 2 * (jlong)n.half + n.byte;
    if (n.ref > 0) {
        offset = (offset + ref - 1) / ref * ref + (jlong)n.ref * ref;
    }
    return offset;
}

/* Bytes of an instance when none is in the heap to measure: header and the
 * instance fields of the class and its supers, packed as from JDK 15 on
 * (where a subclass's fields may fill its superclasses' gaps), in blocks
 * per class before it (each class's block starting where its superclass's
 * ends, rounded up to a reference's size), rounded up. */
jint fieldmap_estimate_instance_size(klasses *ks, jlong tag)
{
    jlong chain[MAX_CHAIN];
    int depth = 0;
    for (jlong t = tag; t != 0 && depth < MAX_CHAIN; depth++) {
        fieldmap_klass_resolve(ks, t);
        klass *c = fieldmap_klass_of(ks, t);
        if (c == NULL) {
            break;
        }
        chain[depth] = t;
        t = c->super_tag;
    }
    jint ref = ref_size(ks->w);
    jlong bytes = OBJECT_HEADER;
    for (int d = depth - 1; d >= 0; d--) {
        klass *c = fieldmap_klass_of(ks, chain[d]);
        klass_read_fields(c);
        field_counts n = { 0, 0, 0, 0, 0 };
        for (int32_t i = 0; i < c->n_own; i++) {
            if (!c->own[i].valid || c->own[i].is_static) {
                continue;
            }
            switch (c->own[i].type) {
            case 'J':
            case 'D': n.wide++; break;
            case 'I':
            case 'F': n.word++; break;
            case 'C':
            case 'S': n.half++; break;
            case 'Z':
            case 'B': n.byte++; break;
            default: n.ref++; break;
            }
        }
        if (!bk.block_fields) {
            bytes += 8 * (jlong)n.wide + 4 * (jlong)n.word + 2 * (jlong)n.half + n.byte + (jlong)ref * n.ref;
        } else if (n.wide + n.word + n.half + n.byte + n.ref > 0) {
            bytes = block_end(bytes, n, ref);
            bytes = (bytes + ref - 1) / ref * ref;
        }
    }
    bytes = (bytes + OBJECT_ALIGN - 1) / OBJECT_ALIGN * OBJECT_ALIGN;
    return (jint)(bytes < 2 * OBJECT_ALIGN ? 2 * OBJECT_ALIGN : bytes);
}
