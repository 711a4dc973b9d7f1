#include "methods.h"

#include "dispatch.h"
#include "events.h"
#include "layer.h"

/* Both entry events go out when both are on (an agent may use either to
 * build its call tree), ENTRY2 first.  These two, and the dispatch and
 * delivery they call, are declared inline so that link-time optimization
 * takes them into the rewriter's hooks: they run at every Java call. */
inline void layer_method_entry(JNIEnv *env, jmethodID method, jobjectID receiver)
{
    if (!layer_is_live()) {
        return;
    }
    if (events_enabled(JVMPI_EVENT_METHOD_ENTRY2)) {
        dispatch_method_entry2(env, method, receiver);
    }
    if (events_enabled(JVMPI_EVENT_METHOD_ENTRY)) {
        dispatch_method(env, JVMPI_EVENT_METHOD_ENTRY, method);
    }
}

inline void layer_method_exit(JNIEnv *env, jmethodID method)
{
    if (layer_is_live() && events_enabled(JVMPI_EVENT_METHOD_EXIT)) {
        dispatch_method(env, JVMPI_EVENT_METHOD_EXIT, method);
    }
}

void layer_compiled_method_load(JNIEnv *env, jmethodID method, const void *code_addr, jint code_size,
                                jint num_lines, const JVMPI_Lineno *lines)
{
    if (layer_is_live() && events_enabled(JVMPI_EVENT_COMPILED_METHOD_LOAD)) {
        dispatch_compiled_method_load(env, method, code_addr, code_size, num_lines, lines);
    }
}

void layer_compiled_method_unload(JNIEnv *env, jmethodID method)
{
    if (layer_is_live() && events_enabled(JVMPI_EVENT_COMPILED_METHOD_UNLOAD)) {
        dispatch_compiled_method_unload(env, method);
    }
}

void methods_after_enable_compiled(void) { seam_compiled_methods_replay(); }
