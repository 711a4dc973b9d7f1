#include "fake_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interface.h"
#include "layer.h"
#include "threads.h"

fake_backend_state fake;

static __thread JNIEnv *thread_env;
static __thread bool thread_env_set;
static __thread jobjectID thread_id;
static __thread bool thread_id_set;

void fake_reset(void)
{
    memset(&fake, 0, sizeof fake);
    fake.thread_status = JVMPI_THREAD_RUNNABLE;
    thread_env = NULL;
    thread_env_set = false;
    thread_id = NULL;
    thread_id_set = false;
}

JVMPI_Interface *fake_layer_loaded(JNIEnv *main_env)
{
    unsetenv("JVMPI_LAYER_OPTIONS");
    layer_reset();
    fake_reset();
    if (layer_onload(NULL, NULL) != JNI_OK) {
        return NULL;
    }
    fake_set_thread_env(main_env);
    return interface_table();
}

void fake_set_thread_env(JNIEnv *env)
{
    thread_env = env;
    thread_env_set = env != NULL;
}

void fake_set_thread_id(jobjectID id)
{
    thread_id = id;
    thread_id_set = id != NULL;
}

static char *dup_fmt(const char *prefix, int i)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s%d", prefix, i);
    return strdup(buf);
}

seam_class_info *fake_class(jobjectID id, const char *name, int methods, int statics, int instances)
{
    seam_class_info *c = calloc(1, sizeof *c);
    c->id = id;
    c->name = strdup(name);
    c->source_name = strdup("Fake.java");
    c->num_interfaces = 1;
    c->num_methods = methods;
    c->methods = calloc((size_t)methods + 1, sizeof *c->methods);
    for (int i = 0; i < methods; i++) {
        c->methods[i].method_name = dup_fmt("m", i);
        c->methods[i].method_signature = strdup("()V");
        c->methods[i].start_lineno = 10 * i;
        c->methods[i].end_lineno = 10 * i + 5;
        c->methods[i].method_id = (jmethodID)(uintptr_t)(0x1000 + i);
    }
    c->num_statics = statics;
    c->statics = calloc((size_t)statics + 1, sizeof *c->statics);
    for (int i = 0; i < statics; i++) {
        c->statics[i].field_name = dup_fmt("s", i);
        c->statics[i].field_signature = strdup("I");
    }
    c->num_instances = instances;
    c->instances = calloc((size_t)instances + 1, sizeof *c->instances);
    for (int i = 0; i < instances; i++) {
        c->instances[i].field_name = dup_fmt("f", i);
        c->instances[i].field_signature = strdup("J");
    }
    return c;
}

/* What the backend would say of a thread (all strings malloc'd). */
static seam_thread_info thread_info(JNIEnv *env, jobjectID id, const char *name)
{
    seam_thread_info info;
    memset(&info, 0, sizeof info);
    info.env = env;
    info.id = id;
    info.handle = (void *)env;
    info.name = strdup(name);
    info.group_name = strdup("main");
    info.parent_name = strdup("system");
    return info;
}

void fake_thread(JNIEnv *env, jobjectID id, const char *name)
{
    seam_thread_info info = thread_info(env, id, name);
    JNIEnv *saved = thread_env;
    bool saved_set = thread_env_set;
    jobjectID saved_id = thread_id;
    bool saved_id_set = thread_id_set;
    thread_env = env;
    thread_env_set = true;
    thread_id = id;
    thread_id_set = true;
    layer_thread_started(&info);
    thread_env = saved;
    thread_env_set = saved_set;
    thread_id = saved_id;
    thread_id_set = saved_id_set;
}

struct thread_rec *fake_unannounced_thread(JNIEnv *env, jobjectID id, const char *name)
{
    seam_thread_info info = thread_info(env, id, name);
    return threads_add(&info, false);
}

/* ---- the seam --------------------------------------------------------------- */

void seam_class_info_free(seam_class_info *c)
{
    if (c == NULL) {
        return;
    }
    for (jint i = 0; i < c->num_methods; i++) {
        free(c->methods[i].method_name);
        free(c->methods[i].method_signature);
    }
    for (jint i = 0; i < c->num_statics; i++) {
        free(c->statics[i].field_name);
        free(c->statics[i].field_signature);
    }
    for (jint i = 0; i < c->num_instances; i++) {
        free(c->instances[i].field_name);
        free(c->instances[i].field_signature);
    }
    free(c->methods);
    free(c->statics);
    free(c->instances);
    free(c->name);
    free(c->source_name);
    free(c);
}

void seam_alloc_hooks(bool forced) { (void)forced; }

bool seam_source_set(seam_source source, bool on)
{
    if (fake.refuse_sources || fake.refuse_source[source]) {
        return false;
    }
    fake.source_on[source] = on;
    fake.source_switches++;
    if (source == SEAM_SRC_OBJECT_ALLOC && on && fake.collect_on_alloc_switch) {
        layer_gc_finish();
    }
    return true;
}

char *seam_system_property(const char *name) { return NULL; }
JNIEnv *seam_current_env(void) { return thread_env_set ? thread_env : fake.current_env; }
jobjectID seam_current_thread_id(void) { return thread_id_set ? thread_id : fake.current_thread_id; }

void seam_define_loaded_classes(JNIEnv *env)
{
    fake.define_loaded_calls++;
    if (fake.on_define_loaded != NULL) {
        fake.on_define_loaded(env);
    }
}

jobjectID seam_method_class(jmethodID method) { return fake.method_class; }

bool seam_method_id_valid(jmethodID method) { return method != NULL && method != fake.bad_method; }

jobjectID seam_class_class_id(void) { return fake.class_class_id; }

seam_adoption seam_thread_adopt(JNIEnv *env)
{
    fake.adopt_calls++;
    if (fake.adopt_unborn) {
        return SEAM_ADOPT_UNBORN;
    }
    if (fake.adopt_name == NULL) {
        return SEAM_ADOPT_HIDDEN;
    }
    fake_thread(env, fake.adopt_id, fake.adopt_name);
    return SEAM_ADOPTED;
}

jint seam_call_trace(void *handle, jint depth, JVMPI_CallFrame *frames)
{
    fake.trace_handle = handle;
    fake.trace_depth = depth;
    jint n = fake.trace_frames < depth ? fake.trace_frames : depth;
    for (jint i = 0; i < n; i++) {
        frames[i].lineno = 100 + i;
        frames[i].method_id = (jmethodID)(uintptr_t)(0x2000 + i);
    }
    if (n > 0 && fake.trace_top != NULL) {
        frames[0].method_id = fake.trace_top;
    }
    return n;
}

jint seam_thread_status(void *handle) { return fake.thread_status; }
bool seam_thread_suspend(void *handle)
{
    fake.suspend_calls++;
    fake.suspend_handle = handle;
    return true;
}

bool seam_thread_resume(void *handle)
{
    fake.resume_calls++;
    fake.resume_handle = handle;
    return true;
}

jlong seam_thread_cpu_time(void *handle) { return fake.cpu_time; }
void seam_thread_handle_release(void *handle)
{
    fake.handle_releases++;
    fake.last_released_handle = handle;
}

bool seam_start_system_thread(JNIEnv *env, const char *name, jint priority, void (*f)(void *), void *arg)
{
    fake.system_threads++;
    fake.system_thread_priority = priority;
    fake.system_thread_fn = f;
    return true;
}

bool seam_start_delivery_thread(JNIEnv *env)
{
    fake.delivery_threads++;
    return true;
}

void *seam_vm_alloc(unsigned int size)
{
    fake.vm_allocs++;
    return malloc(size);
}

void seam_vm_free(void *p)
{
    fake.vm_frees++;
    free(p);
}

void seam_force_gc(void)
{
    fake.gc_calls++;
    if (fake.on_force_gc != NULL) {
        fake.on_force_gc();
    }
}

void seam_post_pending_frees(JNIEnv *env) { fake.post_pending_calls++; }

jlong seam_heap_capacity(JNIEnv *env) { return fake.heap_capacity; }

bool seam_object_info_of(JNIEnv *env, jobjectID id, seam_object_info *out)
{
    fake.object_info_calls++;
    for (int i = 0; i < fake.object_count; i++) {
        if (fake.objects[i].id == id) {
            *out = fake.objects[i];
            return true;
        }
    }
    return false;
}

seam_object_info *seam_heap_objects(JNIEnv *env, int *count)
{
    fake.heap_objects_calls++;
    seam_object_info *copy = calloc((size_t)fake.object_count + 1, sizeof *copy);
    if (copy != NULL && fake.object_count > 0) {
        memcpy(copy, fake.objects, (size_t)fake.object_count * sizeof *copy);
    }
    *count = copy != NULL ? fake.object_count : 0;
    return copy;
}
jobject seam_object_from_id(JNIEnv *env, jobjectID id) { return (jobject)id; }
jobjectID seam_id_from_object(JNIEnv *env, jobject object) { return (jobjectID)object; }

void seam_halt(jint code)
{
    fake.halt_calls++;
    fake.halt_code = code;
}

static bool hand_out_snapshot(seam_heap_snapshot *out)
{
    if (fake.heap_snapshot_fails) {
        memset(out, 0, sizeof *out);
        return false;
    }
    *out = fake.heap_snapshot;
    return true;
}

bool seam_heap_snapshot_take(JNIEnv *env, seam_heap_detail detail, seam_heap_snapshot *out)
{
    fake.heap_snapshot_calls++;
    fake.heap_snapshot_detail = detail;
    fake.define_loaded_before_snapshot = fake.define_loaded_calls;
    return hand_out_snapshot(out);
}

bool seam_object_snapshot_take(JNIEnv *env, jobjectID id, seam_heap_snapshot *out)
{
    fake.object_snapshot_calls++;
    fake.object_snapshot_id = id;
    return hand_out_snapshot(out);
}

void seam_heap_snapshot_free(seam_heap_snapshot *snap)
{
    fake.heap_snapshot_frees++;
    memset(snap, 0, sizeof *snap);
}

jobjectID seam_monitor_owner(JNIEnv *env, jobject object)
{
    fake.monitor_owner_calls++;
    if (fake.monitor_owner_hook != NULL) {
        fake.monitor_owner_hook();
    }
    return fake.monitor_owner;
}

bool seam_monitor_snapshot_take(JNIEnv *env, jint max_frames, void *const *vthreads, int n_vthreads,
                                seam_monitor_snapshot *out)
{
    fake.monitor_snapshot_vthreads = n_vthreads;
    fake.monitor_snapshot_calls++;
    fake.monitor_snapshot_max_frames = max_frames;
    if (fake.monitor_snapshot_fails) {
        memset(out, 0, sizeof *out);
        return false;
    }
    *out = fake.monitor_snapshot;
    return true;
}

void seam_monitor_snapshot_free(seam_monitor_snapshot *snap)
{
    fake.monitor_snapshot_frees++;
    memset(snap, 0, sizeof *snap);
}

void seam_compiled_methods_replay(void) { fake.compiled_replay_calls++; }

unsigned char *seam_method_bytecodes(jmethodID method, jint *len)
{
    fake.bytecodes_calls++;
    *len = 0;
    if (fake.bytecodes == NULL || fake.bytecodes_len <= 0) {
        return NULL;
    }
    unsigned char *copy = malloc((size_t)fake.bytecodes_len);
    if (copy != NULL) {
        memcpy(copy, fake.bytecodes, (size_t)fake.bytecodes_len);
        *len = fake.bytecodes_len;
    }
    return copy;
}
