/*
 * hprof_class.c - what the VM said about classes, methods and threads.
 *
 * Event data is only valid during NotifyEvent, so everything is copied.
 * Records are never freed: traces, sites and the binary output refer to
 * them by pointer and serial long after a class unloads or a thread ends.
 */
#include <stdlib.h>
#include <string.h>

#include "hprof.h"

static hprof_map classes_by_id;     /* jobjectID -> hprof_class * */
static hprof_bmap classes_by_name;  /* name -> hprof_class * (the first) */
static hprof_map methods;           /* jmethodID -> hprof_method * */
static hprof_map threads;           /* JNIEnv * -> hprof_thread * (the latest) */

static hprof_class **all_classes;
static int n_classes, cap_classes;
static hprof_thread **all_threads;
static int n_threads, cap_threads;

void hprof_class_init(void)
{
    hprof_map_init(&classes_by_id, 4096);
    hprof_bmap_init(&classes_by_name, 4093);
    hprof_map_init(&methods, 32768);
    hprof_map_init(&threads, 64);
}

static hprof_field *copy_fields(int n, const JVMPI_Field *f)
{
    hprof_field *out = hprof_calloc((size_t)n, sizeof *out);
    for (int i = 0; i < n; i++) {
        out[i].name = hprof_strdup(f[i].field_name != NULL ? f[i].field_name : "?");
        out[i].sig = hprof_strdup(f[i].field_signature != NULL ? f[i].field_signature : "Ljava/lang/Object;");
    }
    return out;
}

void hprof_class_load(JVMPI_Event *ev)
{
    jobjectID id = ev->u.class_load.class_id;
    uint64_t old;
    if (id == NULL) {
        return;
    }
    if (hprof_map_get(&classes_by_id, (uint64_t)(uintptr_t)id, &old)) {
        hprof_class *known = (hprof_class *)(uintptr_t)old;
        if (!known->unloaded) {
            return; /* requested again, or the start-up replay */
        }
    }
    hprof_class *c = hprof_calloc(1, sizeof *c);
    c->id = id;
    c->name = hprof_strdup(ev->u.class_load.class_name != NULL ? ev->u.class_load.class_name : "<Unknown>");
    c->source = hprof_strdup(ev->u.class_load.source_name);
    c->num_interfaces = ev->u.class_load.num_interfaces;
    c->num_statics = ev->u.class_load.num_static_fields;
    c->statics = copy_fields(c->num_statics, ev->u.class_load.statics);
    c->num_instances = ev->u.class_load.num_instance_fields;
    c->instances = copy_fields(c->num_instances, ev->u.class_load.instances);
    if (n_classes == cap_classes) {
        cap_classes = cap_classes ? cap_classes * 2 : 1024;
        hprof_class **grown = realloc(all_classes, (size_t)cap_classes * sizeof *grown);
        if (grown == NULL) {
            hprof_error("out of memory");
            abort();
        }
        all_classes = grown;
    }
    all_classes[n_classes++] = c;
    c->serial = n_classes;
    hprof_map_put(&classes_by_id, (uint64_t)(uintptr_t)id, (uint64_t)(uintptr_t)c);
    size_t len = strlen(c->name);
    /* Several loaders may define one name; by name means the first one
     * (only array classes are looked up by name, and any of them will do). */
    if (hprof_bmap_get(&classes_by_name, c->name, len) == NULL) {
        hprof_bmap_put(&classes_by_name, c->name, len, c);
    }
    for (int i = 0; i < ev->u.class_load.num_methods; i++) {
        const JVMPI_Method *jm = &ev->u.class_load.methods[i];
        if (jm->method_id == NULL) {
            continue;
        }
        hprof_method *m = hprof_calloc(1, sizeof *m);
        m->id = jm->method_id;
        m->name = hprof_strdup(jm->method_name != NULL ? jm->method_name : "?");
        m->sig = hprof_strdup(jm->method_signature != NULL ? jm->method_signature : "()V");
        m->cls = c;
        hprof_map_put(&methods, (uint64_t)(uintptr_t)m->id, (uint64_t)(uintptr_t)m);
    }
}

void hprof_class_unload(JVMPI_Event *ev)
{
    uint64_t v;
    if (hprof_map_get(&classes_by_id, (uint64_t)(uintptr_t)ev->u.class_unload.class_id, &v)) {
        hprof_class *c = (hprof_class *)(uintptr_t)v;
        c->unloaded = 1;
        hprof_map_remove(&classes_by_id, (uint64_t)(uintptr_t)c->id, NULL);
        if (hprof_opt.binary && c->loaded_written) {
            hprof_record_begin(HPROF_UNLOAD_CLASS);
            hprof_u4((uint32_t)c->serial);
            hprof_record_end();
        }
    }
}

hprof_class *hprof_class_find(jobjectID id)
{
    uint64_t v;
    if (id != NULL && hprof_map_get(&classes_by_id, (uint64_t)(uintptr_t)id, &v)) {
        return (hprof_class *)(uintptr_t)v;
    }
    return NULL;
}

hprof_class *hprof_class_lookup(jobjectID id)
{
    hprof_class *c = hprof_class_find(id);
    if (c == NULL && id != NULL && !hprof_shut_down) {
        hprof_jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, id);
        c = hprof_class_find(id);
        if (c == NULL) {
            /* The VM will not say: a placeholder, so that it is asked only
             * once and the binary dump still has a class for the ID. */
            char name[64];
            JVMPI_Event ev;
            memset(&ev, 0, sizeof ev);
            snprintf(name, sizeof name, "<Unknown class %llx>", (unsigned long long)(uintptr_t)id);
            ev.event_type = JVMPI_EVENT_CLASS_LOAD;
            ev.u.class_load.class_name = name;
            ev.u.class_load.class_id = id;
            hprof_class_load(&ev);
            c = hprof_class_find(id);
            if (c != NULL) {
                c->placeholder = 1;
            }
        }
    }
    return c;
}

hprof_class *hprof_class_by_name(const char *name)
{
    return hprof_bmap_get(&classes_by_name, name, strlen(name));
}

hprof_class **hprof_class_all(int *n)
{
    *n = n_classes;
    return all_classes;
}

static const char *primitive_name(char code)
{
    switch (code) {
    case 'Z': return "boolean";
    case 'B': return "byte";
    case 'C': return "char";
    case 'S': return "short";
    case 'I': return "int";
    case 'J': return "long";
    case 'F': return "float";
    case 'D': return "double";
    case 'V': return "void";
    default: return NULL;
    }
}

void hprof_class_print_name(const char *name, char *buf, size_t len)
{
    int dims = 0;
    while (name[dims] == '[') {
        dims++;
    }
    if (dims == 0) {
        snprintf(buf, len, "%s", name);
    } else {
        const char *elem = name + dims;
        const char *prim = elem[1] == '\0' ? primitive_name(elem[0]) : NULL;
        size_t elen;
        if (prim != NULL) {
            elem = prim;
            elen = strlen(prim);
        } else if (elem[0] == 'L') {
            elem++;
            elen = strlen(elem);
            if (elen > 0 && elem[elen - 1] == ';') {
                elen--;
            }
        } else {
            elen = strlen(elem);
        }
        size_t at = (size_t)snprintf(buf, len, "%.*s", (int)elen, elem);
        for (int i = 0; i < dims && at + 2 < len; i++) {
            buf[at++] = '[';
            buf[at++] = ']';
        }
        if (at < len) {
            buf[at] = '\0';
        }
    }
    for (char *p = buf; *p; p++) {
        if (*p == '/') {
            *p = '.';
        }
    }
}

void hprof_class_binary_name(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s", name);
    for (char *p = buf; *p; p++) {
        if (*p == '.') {
            *p = '/';
        }
    }
}

void hprof_class_write_load(hprof_class *c)
{
    char name[1024];
    if (c->loaded_written) {
        return;
    }
    hprof_class_binary_name(c->name, name, sizeof name);
    uint64_t sid = hprof_string_id(name);
    hprof_record_begin(HPROF_LOAD_CLASS);
    hprof_u4((uint32_t)c->serial);
    hprof_id((uint64_t)(uintptr_t)c->id);
    hprof_u4((uint32_t)hprof_trace_empty()->serial);
    hprof_id(sid);
    hprof_record_end();
    c->loaded_written = 1;
}

hprof_method *hprof_method_find(jmethodID id)
{
    uint64_t v;
    if (id != NULL && hprof_map_get(&methods, (uint64_t)(uintptr_t)id, &v)) {
        return (hprof_method *)(uintptr_t)v;
    }
    return NULL;
}

hprof_method *hprof_method_lookup(jmethodID id)
{
    hprof_method *m = hprof_method_find(id);
    if (m == NULL && id != NULL && !hprof_shut_down) {
        /* The spec asks for GC to be off around GetMethodClass. */
        hprof_jvmpi->DisableGC();
        jobjectID cls = hprof_jvmpi->GetMethodClass(id);
        if (cls != NULL) {
            hprof_class_lookup(cls);
        }
        hprof_jvmpi->EnableGC();
        m = hprof_method_find(id);
        if (m == NULL) {
            /* Remember the failure: a method of an unloaded class. */
            m = hprof_calloc(1, sizeof *m);
            m->id = id;
            m->name = hprof_strdup("<unknown method>");
            m->sig = hprof_strdup("()V");
            hprof_map_put(&methods, (uint64_t)(uintptr_t)id, (uint64_t)(uintptr_t)m);
        }
    }
    return m;
}

/* ---- threads ----------------------------------------------------------- */

void hprof_thread_start(JVMPI_Event *ev)
{
    JNIEnv *env = ev->u.thread_start.thread_env_id;
    if (env == NULL) {
        env = ev->env_id;
    }
    hprof_thread *t = hprof_thread_find(env);
    if (t != NULL && t->alive && t->obj == ev->u.thread_start.thread_id) {
        return; /* requested again */
    }
    t = hprof_calloc(1, sizeof *t);
    t->env = env;
    t->obj = ev->u.thread_start.thread_id;
    t->name = hprof_strdup(ev->u.thread_start.thread_name != NULL ? ev->u.thread_start.thread_name : "");
    t->group = hprof_strdup(ev->u.thread_start.group_name != NULL ? ev->u.thread_start.group_name : "");
    t->parent = hprof_strdup(ev->u.thread_start.parent_name != NULL ? ev->u.thread_start.parent_name : "");
    t->alive = 1;
    if (n_threads == cap_threads) {
        cap_threads = cap_threads ? cap_threads * 2 : 64;
        hprof_thread **grown = realloc(all_threads, (size_t)cap_threads * sizeof *grown);
        if (grown == NULL) {
            hprof_error("out of memory");
            abort();
        }
        all_threads = grown;
    }
    all_threads[n_threads++] = t;
    t->serial = n_threads;
    hprof_map_put(&threads, (uint64_t)(uintptr_t)env, (uint64_t)(uintptr_t)t);
    if (hprof_opt.binary) {
        uint64_t name = hprof_string_id(t->name);
        uint64_t group = hprof_string_id(t->group);
        uint64_t parent = hprof_string_id(t->parent);
        hprof_record_begin(HPROF_START_THREAD);
        hprof_u4((uint32_t)t->serial);
        hprof_id((uint64_t)(uintptr_t)t->obj);
        hprof_u4((uint32_t)hprof_trace_empty()->serial);
        hprof_id(name);
        hprof_id(group);
        hprof_id(parent);
        hprof_record_end();
    } else if (!HPROF_PROF_LISTING()) {
        hprof_printf("THREAD START (obj=%llx, id = %d, name=\"%s\", group=\"%s\")\n",
                     (unsigned long long)(uintptr_t)t->obj, t->serial, t->name, t->group);
    }
}

void hprof_thread_end(JVMPI_Event *ev)
{
    hprof_thread *t = hprof_thread_find(ev->env_id);
    if (t == NULL || !t->alive) {
        return;
    }
    t->alive = 0;
    if (hprof_opt.binary) {
        hprof_record_begin(HPROF_END_THREAD);
        hprof_u4((uint32_t)t->serial);
        hprof_record_end();
    } else if (!HPROF_PROF_LISTING()) {
        hprof_printf("THREAD END (id = %d)\n", t->serial);
    }
}

hprof_thread *hprof_thread_find(JNIEnv *env)
{
    uint64_t v;
    if (env != NULL && hprof_map_get(&threads, (uint64_t)(uintptr_t)env, &v)) {
        return (hprof_thread *)(uintptr_t)v;
    }
    return NULL;
}

hprof_thread **hprof_thread_all(int *n)
{
    *n = n_threads;
    return all_threads;
}

int hprof_thread_serial(JNIEnv *env)
{
    hprof_thread *t = hprof_thread_find(env);
    return t != NULL ? t->serial : 0;
}
