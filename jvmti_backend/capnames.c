/*
 * capnames.c - the JVM TI capabilities the layer holds, by name, for
 * log=info: what a user weighs when the VM runs slower with the layer.
 */
#include <string.h>

#include "backend.h"
#include "log.h"

/* The names of jvmtiCapabilities' bits in JVM TI 1.2 to 17's order. */
#define BK_CAPABILITIES(X)                                                                                             \
    X(can_tag_objects) X(can_generate_field_modification_events) X(can_generate_field_access_events)                   \
    X(can_get_bytecodes) X(can_get_synthetic_attribute) X(can_get_owned_monitor_info)                                  \
    X(can_get_current_contended_monitor) X(can_get_monitor_info) X(can_pop_frame) X(can_redefine_classes)              \
    X(can_signal_thread) X(can_get_source_file_name) X(can_get_line_numbers) X(can_get_source_debug_extension)         \
    X(can_access_local_variables) X(can_maintain_original_method_order) X(can_generate_single_step_events)             \
    X(can_generate_exception_events) X(can_generate_frame_pop_events) X(can_generate_breakpoint_events)                \
    X(can_suspend) X(can_redefine_any_class) X(can_get_current_thread_cpu_time) X(can_get_thread_cpu_time)             \
    X(can_generate_method_entry_events) X(can_generate_method_exit_events) X(can_generate_all_class_hook_events)       \
    X(can_generate_compiled_method_load_events) X(can_generate_monitor_events)                                         \
    X(can_generate_vm_object_alloc_events) X(can_generate_native_method_bind_events)                                   \
    X(can_generate_garbage_collection_events) X(can_generate_object_free_events) X(can_force_early_return)             \
    X(can_get_owned_monitor_stack_depth_info) X(can_get_constant_pool) X(can_set_native_method_prefix)                 \
    X(can_retransform_classes) X(can_retransform_any_class) X(can_generate_resource_exhaustion_heap_events)            \
    X(can_generate_resource_exhaustion_threads_events) X(can_generate_early_vmstart)                                   \
    X(can_generate_early_class_hook_events) X(can_generate_sampled_object_alloc_events)

static void append(char *buf, size_t size, const char *name)
{
    size_t len = strlen(buf);
    if (len + strlen(name) + 3 < size) {
        snprintf(buf + len, size - len, "%s%s", len > 0 ? " " : "", name);
    } else if (len + 4 < size && strcmp(buf + len - 3, "...") != 0) {
        snprintf(buf + len, size - len, " ...");
    }
}

static void names_of(const jvmtiCapabilities *caps, char *buf, size_t size)
{
    buf[0] = '\0';
#define BK_CAP_NAME(field)                                                                                             \
    if (caps->field) {                                                                                                 \
        append(buf, size, #field);                                                                                     \
    }
    BK_CAPABILITIES(BK_CAP_NAME)
#undef BK_CAP_NAME
    if (bk_vthreads_capability_in(caps)) {
        append(buf, size, "can_support_virtual_threads");
    }
    if (buf[0] == '\0') {
        snprintf(buf, size, "none");
    }
}

void bk_caps_log(const char *what, const jvmtiCapabilities *caps)
{
    if (log_level < LOG_LEVEL_INFO) {
        return;
    }
    char names[2048];
    names_of(caps, names, sizeof names);
    LOG_INFO("JVM TI capabilities %s: %s", what, names);
}

void bk_caps_log_env(const char *what, jvmtiEnv *env)
{
    if (log_level < LOG_LEVEL_INFO) {
        return;
    }
    jvmtiCapabilities caps;
    if (JVMTI_OK(JVMTI_CALL(env, GetCapabilities, &caps))) {
        bk_caps_log(what, &caps);
    }
}
