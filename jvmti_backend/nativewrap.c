/*
 * nativewrap.c - the program's native methods, wrapped by the rewriter so
 * that their calls report method events (nativewrap.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "bootmethods.h"
#include "memo.h"
#include "nativewrap.h"

static _Atomic bool any_wrapped;

bool nativewrap_hidden_name(const char *method_name)
{
    return strncmp(method_name, NATIVE_PREFIX, sizeof NATIVE_PREFIX - 1) == 0;
}

/* The JDK's natives (boot and platform loaders) are left alone: some serve
 * the binding of natives itself (NativeLibrary.findEntry0), so a wrapper
 * of theirs would need itself to be bound; JVM TI's events report them
 * only with methods=jvmti.  The program's natives are wrapped. */
static jobject platform_loader; /* global ref, taken with the hooks class */

bool nativewrap_loader_wraps(JNIEnv *env, jobject loader)
{
    return loader != NULL && platform_loader != NULL && !(*env)->IsSameObject(env, loader, platform_loader);
}

/* JDK 8 has no platform loader: its JDK classes outside the boot class path
 * come from the extension loader, the parent of the launcher's loader. */
static jobject jdk8_extension_loader(JNIEnv *env)
{
    jclass launcher = (*env)->FindClass(env, "sun/misc/Launcher");
    jmethodID get = launcher != NULL ? (*env)->GetStaticMethodID(env, launcher, "getLauncher", "()Lsun/misc/Launcher;") : NULL;
    jmethodID loader_of = launcher != NULL ? (*env)->GetMethodID(env, launcher, "getClassLoader", "()Ljava/lang/ClassLoader;") : NULL;
    jclass cl = (*env)->FindClass(env, "java/lang/ClassLoader");
    jmethodID parent_of = cl != NULL ? (*env)->GetMethodID(env, cl, "getParent", "()Ljava/lang/ClassLoader;") : NULL;
    jobject l = get != NULL && loader_of != NULL && parent_of != NULL ? (*env)->CallStaticObjectMethod(env, launcher, get) : NULL;
    jobject app = l != NULL ? (*env)->CallObjectMethod(env, l, loader_of) : NULL;
    jobject ext = app != NULL ? (*env)->CallObjectMethod(env, app, parent_of) : NULL;
    (*env)->ExceptionClear(env);
    jobject refs[] = {launcher, cl, l, app};
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        if (refs[i] != NULL) {
            (*env)->DeleteLocalRef(env, refs[i]);
        }
    }
    return ext;
}

static jobject find_platform_loader(JNIEnv *env)
{
    jclass cl = (*env)->FindClass(env, "java/lang/ClassLoader");
    jmethodID get = cl != NULL ? (*env)->GetStaticMethodID(env, cl, "getPlatformClassLoader", "()Ljava/lang/ClassLoader;")
                               : NULL;
    jobject loader = get != NULL ? (*env)->CallStaticObjectMethod(env, cl, get) : NULL;
    (*env)->ExceptionClear(env);
    if (get == NULL) {
        loader = jdk8_extension_loader(env);
    }
    jobject global = loader != NULL ? bk_new_global_ref(env, loader) : NULL;
    if (loader != NULL) {
        (*env)->DeleteLocalRef(env, loader);
    }
    if (cl != NULL) {
        (*env)->DeleteLocalRef(env, cl);
    }
    return global;
}

void nativewrap_take_loader(JNIEnv *env)
{
    platform_loader = find_platform_loader(env);
}

/* Names of the classes given wrappers: a class is retransformed with its
 * wrappers if it has a renamed native, which an unprepared class cannot
 * be asked; then its name having been wrapped decides. */
typedef struct {
    UT_hash_handle hh;
    char name[];
} wrapped_name;

static wrapped_name *wrapped_names;
static pthread_mutex_t wrapped_lock = PTHREAD_MUTEX_INITIALIZER;

void nativewrap_remember(const char *name)
{
    size_t n = strlen(name);
    wrapped_name *w = malloc(sizeof *w + n + 1);
    if (w == NULL) {
        return;
    }
    memcpy(w->name, name, n + 1);
    pthread_mutex_lock(&wrapped_lock);
    wrapped_name *had = NULL;
    HASH_FIND_STR(wrapped_names, name, had);
    if (had == NULL) {
        HASH_ADD_STR(wrapped_names, name, w);
    } else {
        free(w);
    }
    pthread_mutex_unlock(&wrapped_lock);
    atomic_store(&any_wrapped, true);
}

bool nativewrap_kept(const char *name, jclass klass)
{
    if (!atomic_load(&any_wrapped) || name == NULL) {
        return false;
    }
    wrapped_name *w = NULL;
    {
        pthread_mutex_lock(&wrapped_lock);
        HASH_FIND_STR(wrapped_names, name, w);
        pthread_mutex_unlock(&wrapped_lock);
    }
    if (w == NULL) {
        return false;
    }
    jmethodID renamed = NULL;
    if (!bootmethods_class_method(klass, NULL, NULL, nativewrap_hidden_name, &renamed)) {
        return true; /* not prepared: a class of this name was wrapped */
    }
    return renamed != NULL;
}

/* Renamed natives, by jmethodID: asked for every native frame of a trace. */
static memo_table natives_seen = {NULL, PTHREAD_MUTEX_INITIALIZER};

bool nativewrap_is_renamed(jmethodID method)
{
    if (!atomic_load_explicit(&any_wrapped, memory_order_relaxed) || method == NULL) {
        return false;
    }
    void *renamed = NULL;
    if (!memo_get(&natives_seen, method, &renamed)) {
        char *mname = NULL;
        renamed = JVMTI_OK(JVMTI_TRY(bk.jvmti, GetMethodName, method, &mname, NULL, NULL)) &&
                          nativewrap_hidden_name(mname)
                      ? method
                      : NULL;
        bk_deallocate(mname);
        memo_put(&natives_seen, method, renamed);
    }
    return renamed != NULL;
}
