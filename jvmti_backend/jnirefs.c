/*
 * jnirefs.c - JNI_(WEAK_)GLOBALREF_ALLOC/FREE.  JVM TI has no event for JNI
 * references, so while the agent wants them the VM's JNI function table is
 * replaced by a copy whose four global-reference functions report what they
 * did.  The layer's own references go straight to the VM's functions.
 */
#include <pthread.h>
#include <string.h>

#include "backend.h"

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
/* The VM's table, read once; NULL until the first switch on. */
static jniNativeInterface *vm_table;
static jniNativeInterface reporting_table;

static const jniNativeInterface *functions(JNIEnv *env)
{
    return vm_table != NULL ? vm_table : *env;
}

jobject bk_new_global_ref(JNIEnv *env, jobject obj) { return functions(env)->NewGlobalRef(env, obj); }

void bk_delete_global_ref(JNIEnv *env, jobject ref) { functions(env)->DeleteGlobalRef(env, ref); }

static void report(JNIEnv *env, bool weak, jobject ref, jobject obj)
{
    if (bk_callback_enter()) {
        layer_jni_ref(env, weak, ref, obj);
        bk_callback_exit();
    }
}

static jobject JNICALL new_global_ref(JNIEnv *env, jobject obj)
{
    jobject ref = vm_table->NewGlobalRef(env, obj);
    if (ref != NULL) {
        report(env, false, ref, obj);
    }
    return ref;
}

static void JNICALL delete_global_ref(JNIEnv *env, jobject ref)
{
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

bool bk_jni_refs_switch(bool on)
{
    bool ok = true;
    {
        pthread_mutex_lock(&table_lock);
        if (vm_table == NULL) {
            ok = JVMTI_OK(JVMTI_CALL(bk.jvmti, GetJNIFunctionTable, &vm_table));
            if (ok) {
                reporting_table = *vm_table;
                reporting_table.NewGlobalRef = new_global_ref;
                reporting_table.DeleteGlobalRef = delete_global_ref;
                reporting_table.NewWeakGlobalRef = new_weak_global_ref;
                reporting_table.DeleteWeakGlobalRef = delete_weak_global_ref;
            } else {
                vm_table = NULL;
            }
        }
        if (ok) {
            ok = JVMTI_OK(JVMTI_CALL(bk.jvmti, SetJNIFunctionTable, on ? &reporting_table : vm_table));
        }
        pthread_mutex_unlock(&table_lock);
    }
    return ok;
}
