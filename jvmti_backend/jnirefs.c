/*
 * jnirefs.c - JNI_(WEAK_)GLOBALREF_ALLOC/FREE, and the references behind the
 * JNI_GLOBAL roots of heap dumps.  JVM TI has no event for JNI references and
 * names no reference in its roots, so from VM init on the VM's JNI function
 * table is replaced by a copy whose four global-reference functions keep a
 * set of the live global references and report what they did when the agent
 * wants it.  The layer's own references go straight to the VM's functions.
 * Where the VM has no SampledObjectAlloc (JDK 8), which alone sees JNI's
 * allocations, the table's allocating functions report them too.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "backend.h"

/* The VM's table, read once at VM init; NULL before. */
static jniNativeInterface *vm_table;
static jniNativeInterface reporting_table;
static _Atomic bool reporting;

/* Live global references made since VM init. */
typedef struct live_ref {
    jobject ref;
    UT_hash_handle hh;
} live_ref;
static pthread_mutex_t refs_lock = PTHREAD_MUTEX_INITIALIZER;
static live_ref *live_refs;

static void refs_add(jobject ref)
{
    live_ref *r = malloc(sizeof *r);
    if (r == NULL) {
        return; /* the dump's root will name no reference: no harm done */
    }
    r->ref = ref;
    pthread_mutex_lock(&refs_lock);
    HASH_ADD_PTR(live_refs, ref, r);
    pthread_mutex_unlock(&refs_lock);
}

static void refs_remove(jobject ref)
{
    live_ref *r = NULL;
    pthread_mutex_lock(&refs_lock);
    HASH_FIND_PTR(live_refs, &ref, r);
    if (r != NULL) {
        HASH_DEL(live_refs, r);
    }
    pthread_mutex_unlock(&refs_lock);
    free(r);
}

static const jniNativeInterface *functions(JNIEnv *env)
{
    return vm_table != NULL ? vm_table : *env;
}

jobject bk_new_global_ref(JNIEnv *env, jobject obj) { return functions(env)->NewGlobalRef(env, obj); }

void bk_delete_global_ref(JNIEnv *env, jobject ref) { functions(env)->DeleteGlobalRef(env, ref); }

jweak bk_new_weak_ref(JNIEnv *env, jobject obj) { return functions(env)->NewWeakGlobalRef(env, obj); }

void bk_delete_weak_ref(JNIEnv *env, jweak ref) { functions(env)->DeleteWeakGlobalRef(env, ref); }

static void report(JNIEnv *env, bool weak, jobject ref, jobject obj)
{
    if (atomic_load_explicit(&reporting, memory_order_relaxed) && bk_callback_enter()) {
        layer_jni_ref(env, weak, ref, obj);
        bk_callback_exit();
    }
}

static jobject JNICALL new_global_ref(JNIEnv *env, jobject obj)
{
    jobject ref = vm_table->NewGlobalRef(env, obj);
    if (ref != NULL) {
        refs_add(ref);
        report(env, false, ref, obj);
    }
    return ref;
}

static void JNICALL delete_global_ref(JNIEnv *env, jobject ref)
{
    if (ref != NULL) {
        refs_remove(ref);
    }
    vm_table->DeleteGlobalRef(env, ref);
    if (ref != NULL) {
        report(env, false, ref, NULL);
    }
}

static jweak JNICALL new_weak_global_ref(JNIEnv *env, jobject obj)
{
    jweak ref = vm_table->NewWeakGlobalRef(env, obj);
    if (ref != NULL) {
        report(env, true, ref, obj);
    }
    return ref;
}

static void JNICALL delete_weak_global_ref(JNIEnv *env, jweak ref)
{
    vm_table->DeleteWeakGlobalRef(env, ref);
    if (ref != NULL) {
        report(env, true, ref, NULL);
    }
}

/* ---- allocations through JNI, where the VM reports none (JDK 8) ---------- */

static jobject JNICALL alloc_object(JNIEnv *env, jclass klass)
{
    jobject obj = vm_table->AllocObject(env, klass);
    bk_heap_constructed(env, obj);
    return obj;
}

static jobjectArray JNICALL new_object_array(JNIEnv *env, jsize len, jclass element, jobject init)
{
    jobjectArray a = vm_table->NewObjectArray(env, len, element, init);
    bk_heap_constructed(env, a);
    return a;
}

#define NEW_ARRAY(Type, type)                                             \
    static type##Array JNICALL new_##type##_array(JNIEnv *env, jsize len) \
    {                                                                     \
        type##Array a = vm_table->New##Type##Array(env, len);             \
        bk_heap_constructed(env, a);                                      \
        return a;                                                         \
    }
NEW_ARRAY(Boolean, jboolean)
NEW_ARRAY(Byte, jbyte)
NEW_ARRAY(Char, jchar)
NEW_ARRAY(Short, jshort)
NEW_ARRAY(Int, jint)
NEW_ARRAY(Long, jlong)
NEW_ARRAY(Float, jfloat)
NEW_ARRAY(Double, jdouble)
#undef NEW_ARRAY

static void report_jni_allocs(jniNativeInterface *t)
{
    t->AllocObject = alloc_object;
    t->NewObjectArray = new_object_array;
    t->NewBooleanArray = new_jboolean_array;
    t->NewByteArray = new_jbyte_array;
    t->NewCharArray = new_jchar_array;
    t->NewShortArray = new_jshort_array;
    t->NewIntArray = new_jint_array;
    t->NewLongArray = new_jlong_array;
    t->NewFloatArray = new_jfloat_array;
    t->NewDoubleArray = new_jdouble_array;
}

bool bk_jni_refs_vm_init(void)
{
    /* Once, at VM init, before any wrapper can run. */
    bool ok = JVMTI_OK(JVMTI_CALL(bk.jvmti, GetJNIFunctionTable, &vm_table));
    if (ok) {
        reporting_table = *vm_table;
        reporting_table.NewGlobalRef = new_global_ref;
        reporting_table.DeleteGlobalRef = delete_global_ref;
        reporting_table.NewWeakGlobalRef = new_weak_global_ref;
        reporting_table.DeleteWeakGlobalRef = delete_weak_global_ref;
        if (bk.alloc_hooks) {
            report_jni_allocs(&reporting_table);
        }
        ok = JVMTI_OK(JVMTI_CALL(bk.jvmti, SetJNIFunctionTable, &reporting_table));
    }
    if (!ok) {
        vm_table = NULL;
    }
    if (!ok) {
        LOG_ERROR("the JNI function table could not be replaced: no JNI reference events, "
                  "and heap dumps name no JNI global references");
    }
    return ok;
}

bool bk_jni_refs_switch(bool on)
{
    if (on && vm_table == NULL) {
        return false; /* the table could not be replaced at VM init */
    }
    atomic_store(&reporting, on);
    return true;
}

bk_global_ref *bk_global_refs(JNIEnv *env, int *count)
{
    bk_global_ref *out = NULL;
    int n = 0;
    {
        pthread_mutex_lock(&refs_lock);
        out = calloc((size_t)HASH_COUNT(live_refs) + 1, sizeof *out);
        live_ref *r, *tmp;
        HASH_ITER(hh, live_refs, r, tmp) {
            if (out != NULL) {
                out[n++].ref = r->ref;
            }
        }
        pthread_mutex_unlock(&refs_lock);
    }
    /* Tags outside the lock: tagging may post ObjectFree on this thread. */
    int kept = 0;
    for (int i = 0; i < n; i++) {
        jlong tag = bk_object_tag(env, out[i].ref);
        if (tag != 0) {
            out[kept].ref = out[i].ref;
            out[kept++].tag = tag;
        }
    }
    *count = kept;
    return out;
}
