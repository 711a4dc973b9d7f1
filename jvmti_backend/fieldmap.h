/*
 * fieldmap.h - classes after the walk, as the VM describes them: their
 * superclasses, element classes, and JVM TI's field numbering mapped to
 * the slots of CLASS_LOAD.
 *
 * Apart from the walk and from the snapshot because JVM TI's field
 * numbering has rules of its own (whose interfaces' fields come first, and
 * in what order) that the snapshot only consumes, one field at a time.
 */
#ifndef JVMPI_FIELDMAP_H_
#define JVMPI_FIELDMAP_H_

#include "heapstore.h"

/* A class's chain of superclasses is never longer. */
#define MAX_CHAIN 1024

/* ---- after the walk: classes, as the VM describes them ----------------------------- */

typedef struct {
    bool is_static, valid;
    char type;          /* first character of the signature */
    int32_t slot;       /* index in CLASS_LOAD statics / instances */
} own_field;

typedef struct {
    jlong decl;
    int32_t slot;
    bool is_static;
} field_key;

typedef struct {
    jlong tag;
    jclass cls;         /* local reference, NULL when not loaded */
    jlong super_tag;
    jlong element_tag;  /* arrays of references: the element class */
    bool resolved;      /* super_tag, element_tag, is_interface looked up */
    bool is_interface;
    bool needed;
    jint observed_size; /* size of an instance met in the walk, -1 none */
    int32_t n_own;
    own_field *own;     /* NULL until read */
    bool own_read;
    int32_t map_base;   /* JVM TI index of map[0] */
    int32_t map_count;
    field_key *map;
    bool map_built;
} klass;

typedef struct {
    JNIEnv *env;
    walk *w;
    klass *k;
    int32_t n, cap;
    tagmap by_tag;
    jclass *loaded;     /* GetLoadedClasses' local references */
    jint n_loaded;
    bool partial;       /* fieldmap_klasses_chain met a class without an ID */
} klasses;

klass *fieldmap_klass_of(klasses *ks, jlong tag);
klass *fieldmap_klass_add(klasses *ks, jlong tag, jclass cls);
/* Every loaded class with an ID (HEAP_DUMP). */
bool fieldmap_klasses_load(klasses *ks);
/* cls and its superclasses, up to the first without an ID (OBJECT_DUMP):
 * local references made in the caller's local frame, which the caller
 * pops. */
bool fieldmap_klasses_chain(klasses *ks, jclass cls);
void fieldmap_klasses_free(klasses *ks);
/* Superclass and kind; pointers into ks->k may move, so callers re-find. */
void fieldmap_klass_resolve(klasses *ks, jlong tag);
/* The class with its map of JVM TI's field indexes built (see fieldmap.c). */
klass *fieldmap_klass_field_map(klasses *ks, jlong tag);
const field_key *fieldmap_field_of(const klass *k, jint index);
/* Bytes of an instance when none is in the heap to measure. */
jint fieldmap_estimate_instance_size(klasses *ks, jlong tag);

#endif
