/*
 * nativewrap.h - native methods wrapped by the rewriter: a native is
 * renamed with NATIVE_PREFIX (JVM TI's SetNativeMethodPrefix binds it still)
 * and a method of its old name, which has the hooks, calls it.  The renamed
 * native is never shown to the agent: not in CLASS_LOAD, traces or
 * compiled-code events.
 */
#ifndef JVMPI_NATIVEWRAP_H_
#define JVMPI_NATIVEWRAP_H_

#include "backend.h"

/* A native method's new name; a method of its old name wraps it. */
#define NATIVE_PREFIX "jvmpi$"

/* A native method's name once the rewriter wrapped it. */
bool nativewrap_hidden_name(const char *method_name);
bool nativewrap_is_renamed(jmethodID method);

/* Once, with the hooks class: the loader whose natives, like the boot
 * loader's, are left alone. */
void nativewrap_take_loader(JNIEnv *env);
/* Whether a class of that loader, loading, gets its natives wrapped. */
bool nativewrap_loader_wraps(JNIEnv *env, jobject loader);
/* A class was given wrappers. */
void nativewrap_remember(const char *name);
/* Whether a class being retransformed must keep the wrappers it has. */
bool nativewrap_kept(const char *name, jclass klass);

#endif
