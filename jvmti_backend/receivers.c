/*
 * receivers.c - a constructor's receiver, for METHOD_ENTRY2 (receivers.h).
 *
 * A constructor cannot pass its receiver before super() has run (the
 * verifier allows no use of an uninitialized this), so the hook reads it
 * from the constructor's frame.  JVM TI's GetLocalInstance would need
 * can_access_local_variables, which the VM grants only in the OnLoad phase
 * and which slows compiled code for the whole run; the JDK's stack walker
 * of live frames reads it without any capability.
 */
#include "receivers.h"

static jobject walker, caller_frame;        /* global refs: the walker, the Function */
static jmethodID walk_method, locals_method;
static _Atomic bool receivers_ready;

static _Atomic bool receivers_by_locals; /* JDK 8: GetLocalInstance, no walker */

jobject receivers_of_ctor(JNIEnv *env)
{
    if (!atomic_load_explicit(&receivers_ready, memory_order_acquire)) {
        return NULL;
    }
    if (atomic_load_explicit(&receivers_by_locals, memory_order_relaxed)) {
        jobject self = NULL;
        /* depth 0 is the hook's native frame, 1 the constructor */
        if (!JVMTI_OK(JVMTI_TRY(bk.jvmti, GetLocalInstance, NULL, 1, &self))) {
            return NULL;
        }
        return self;
    }
    jobject self = NULL;
    bk_alloc_quiet(true); /* the walk allocates: the layer's doing, not the program's */
    jobject frame = (*env)->CallObjectMethod(env, walker, walk_method, caller_frame);
    if (frame != NULL && !(*env)->ExceptionCheck(env)) {
        jobjectArray locals = (*env)->CallObjectMethod(env, frame, locals_method);
        if (locals != NULL && !(*env)->ExceptionCheck(env) && (*env)->GetArrayLength(env, locals) > 0) {
            self = (*env)->GetObjectArrayElement(env, locals, 0);
        }
        if (locals != NULL) {
            (*env)->DeleteLocalRef(env, locals);
        }
    }
    if (frame != NULL) {
        (*env)->DeleteLocalRef(env, frame);
    }
    bk_alloc_quiet(false);
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        static _Atomic bool said;
        if (!atomic_exchange(&said, true)) {
            LOG_ERROR("METHOD_ENTRY2: a constructor's receiver could not be read from its frame; it is given as NULL");
        }
        self = NULL;
    }
    return self;
}

bool receivers_prepare(JNIEnv *env, jclass hooks_class)
{
    if (atomic_load(&receivers_ready)) {
        return true;
    }
    if (!bk.live_frames) {
        if (!bk.caps_receiver) {
            LOG_ERROR("METHOD_ENTRY2: this JDK has no stack walker of live frames, and the agent did not enable "
                      "METHOD_ENTRY2 in JVM_OnLoad, the only time the local variable access that replaces it can "
                      "be taken: constructors' receivers are given as NULL");
            return false;
        }
        atomic_store(&receivers_by_locals, true);
        atomic_store_explicit(&receivers_ready, true, memory_order_release);
        return true;
    }
    bk_alloc_quiet(true);
    jclass live = (*env)->FindClass(env, "java/lang/LiveStackFrame");
    jclass stack_walker = live != NULL ? (*env)->FindClass(env, "java/lang/StackWalker") : NULL;
    jmethodID get = live != NULL ? (*env)->GetStaticMethodID(env, live, "getStackWalker", "()Ljava/lang/StackWalker;") : NULL;
    jmethodID init = get != NULL ? (*env)->GetMethodID(env, hooks_class, "<init>", "()V") : NULL;
    walk_method = stack_walker != NULL
                      ? (*env)->GetMethodID(env, stack_walker, "walk", "(Ljava/util/function/Function;)Ljava/lang/Object;")
                      : NULL;
    locals_method = live != NULL ? (*env)->GetMethodID(env, live, "getLocals", "()[Ljava/lang/Object;") : NULL;
    jobject w = get != NULL && init != NULL ? (*env)->CallStaticObjectMethod(env, live, get) : NULL;
    jobject f = w != NULL ? (*env)->NewObject(env, hooks_class, init) : NULL;
    bool ok = f != NULL && walk_method != NULL && locals_method != NULL && !(*env)->ExceptionCheck(env);
    if (ok) {
        walker = bk_new_global_ref(env, w);
        caller_frame = bk_new_global_ref(env, f);
        ok = walker != NULL && caller_frame != NULL;
    }
    (*env)->ExceptionClear(env);
    jobject refs[] = {live, stack_walker, w, f};
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        if (refs[i] != NULL) {
            (*env)->DeleteLocalRef(env, refs[i]);
        }
    }
    bk_alloc_quiet(false);
    if (ok) {
        atomic_store_explicit(&receivers_ready, true, memory_order_release);
        jobject none = receivers_of_ctor(env);
        if (none != NULL) {
            (*env)->DeleteLocalRef(env, none);
        }
    } else {
        LOG_ERROR("METHOD_ENTRY2: this JDK's stack walker of live frames was not found; constructors' receivers "
                  "are given as NULL");
    }
    return ok;
}
