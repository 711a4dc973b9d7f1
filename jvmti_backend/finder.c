/*
 * finder.c - the object that has a given tag.
 *
 * JVM TI's only way from a tag to its object is GetObjectsWithTags, which
 * scans the environment's whole tag map (HotSpot compares every entry with
 * every tag asked for), so finding one object costs time in proportion to
 * the heap.  The agents that do this (jobjectID2jobject, RequestEvent of
 * OBJECT_DUMP) typically do it for every object of a heap dump, with GC
 * disabled as the JVMPI specification asks: a scan each would take time in
 * proportion to the square of the heap.
 *
 * So a lookup builds an index of every object with an ID, tag to
 * weak reference, in time in proportion to the heap: a third environment
 * (bk.jvmti_find) tags every object with a group number in one heap
 * iteration, and one GetObjectsWithTags per group of FIND_GROUP objects
 * hands them all back, each then named by its tag in the main environment.
 * Later lookups of those objects take constant time.  An object that got
 * its ID after the index was built makes a new index if the old one
 * served enough lookups to pay for it (a quarter of what it holds);
 * otherwise the index is dropped and the next few lookups scan before one
 * is built again.  A dump-then-inspect agent thus pays a constant time per
 * object, and one that looks up an object now and then about twice a scan.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

#define FIND_GROUP 1000000
#define MIN_CAP 1024

typedef struct {
    jlong tag;
    jweak ref;
} entry;

/* Open addressing, linear probing; tag 0 is empty.  Entries are never
 * removed: the index is dropped and built anew as a whole. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *tab;
static size_t cap, used;
static long hits; /* since the index was built */
static bool have_index;
/* After an index that did not pay for itself: scans before the next one. */
#define SCANS_BEFORE_REBUILD 8
static int scans_owed;

static size_t home(jlong tag) { return (size_t)(((uint64_t)tag * 0x9E3779B97F4A7C15ull) % cap); }

static entry *slot_of(jlong tag)
{
    for (size_t i = home(tag);; i = i + 1 == cap ? 0 : i + 1) {
        if (tab[i].tag == tag || tab[i].tag == 0) {
            return &tab[i];
        }
    }
}

/* Under lock. */
static void drop_index(JNIEnv *env)
{
    for (size_t i = 0; i < cap; i++) {
        if (tab[i].tag != 0) {
            bk_delete_weak_ref(env, tab[i].ref);
        }
    }
    free(tab);
    tab = NULL;
    cap = used = 0;
    hits = 0;
    have_index = false;
}

static jint JNICALL group_object(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *user_data)
{
    long *seen = user_data;
    *tag_ptr = 1 + (*seen)++ / FIND_GROUP;
    return 0;
}

static jint JNICALL untag_object(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *user_data)
{
    *tag_ptr = 0;
    return 0;
}

/* Under lock: every object with an ID in the index. */
static bool build_index(JNIEnv *env)
{
    jvmtiHeapCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.heap_iteration_callback = group_object;
    long seen = 0;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti_find, IterateThroughHeap, 0, NULL, &cb, &seen))) {
        return false;
    }
    /* A load of at most a half: probes stay short. */
    cap = (size_t)seen * 2 + MIN_CAP;
    tab = calloc(cap, sizeof *tab);
    bool ok = tab != NULL;
    if (!ok) {
        LOG_ERROR("jobjectID2jobject: out of memory for the index of %ld objects; scanning instead", seen);
        cap = 0;
    }
    for (jlong group = 1; ok && group <= 1 + (seen - 1) / FIND_GROUP; group++) {
        jint n = 0;
        jobject *objs = NULL;
        if (!JVMTI_OK(JVMTI_CALL(bk.jvmti_find, GetObjectsWithTags, 1, &group, &n, &objs, NULL))) {
            ok = false;
            break;
        }
        for (jint i = 0; i < n; i++) {
            jlong tag = 0;
            if (ok && JVMTI_OK(JVMTI_CALL(bk.jvmti, GetTag, objs[i], &tag)) && tag != 0 &&
                !ids_is_pending_class(tag)) {
                entry *e = slot_of(tag);
                if (e->tag == 0 && used * 2 < cap && (e->ref = bk_new_weak_ref(env, objs[i])) != NULL) {
                    e->tag = tag;
                    used++;
                }
            }
            (*env)->DeleteLocalRef(env, objs[i]);
        }
        bk_deallocate(objs);
    }
    memset(&cb, 0, sizeof cb);
    cb.heap_iteration_callback = untag_object;
    JVMTI_CALL(bk.jvmti_find, IterateThroughHeap, JVMTI_HEAP_FILTER_UNTAGGED, NULL, &cb, NULL);
    if (!ok) {
        drop_index(env);
        return false;
    }
    have_index = true;
    LOG_DEBUG("object index built: %zu objects with IDs of %ld", used, seen);
    return true;
}

/* Under lock: a local ref to the indexed object, NULL when not indexed or gone. */
static jobject indexed(JNIEnv *env, jlong tag)
{
    if (!have_index) {
        return NULL;
    }
    entry *e = slot_of(tag);
    jobject obj = e->tag == tag ? (*env)->NewLocalRef(env, e->ref) : NULL;
    if (obj != NULL) {
        hits++;
    }
    return obj;
}

jobject bk_object_scan(JNIEnv *env, jlong tag)
{
    jint n = 0;
    jobject *found = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetObjectsWithTags, 1, &tag, &n, &found, NULL))) {
        return NULL;
    }
    jobject obj = n > 0 ? found[0] : NULL;
    for (jint i = 1; i < n; i++) {
        (*env)->DeleteLocalRef(env, found[i]);
    }
    bk_deallocate(found);
    return obj;
}

jobject bk_object_of_tag(JNIEnv *env, jlong tag)
{
    int64_t class_tag;
    if (tag == 0 || (!ids_is_class(tag) && ids_object_class(tag, &class_tag) == IDS_OBJECT_GONE)) {
        return NULL; /* freed, or never an object's ID: no scan */
    }
    jobject obj = NULL;
    bool built = false;
    {
        pthread_mutex_lock(&lock);
        obj = indexed(env, tag);
        if (obj == NULL) {
            if (have_index) {
                /* Stale: built anew if it paid for itself, else dropped. */
                scans_owed = (size_t)hits * 4 >= used ? 0 : SCANS_BEFORE_REBUILD;
                drop_index(env);
            }
            if (scans_owed > 0) {
                scans_owed--;
            } else if (build_index(env)) {
                built = true;
                obj = indexed(env, tag);
            }
        }
        pthread_mutex_unlock(&lock);
    }
    /* Not in an index just built: no live object has the tag. */
    return obj != NULL || built ? obj : bk_object_scan(env, tag);
}
