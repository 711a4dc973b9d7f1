/*
 * The ledger's file, one record a line, fields separated by tabs:
 *
 *   jvmpi-ledger  1
 *   pid           <the VM's process id>
 *   agent         <name>                      one line per agent
 *   event         <NAME> <enabled 0|1> <delivered> <requested> <from JVM_SHUT_DOWN on>
 *   class_loads   <CLASS_LOADs of array classes>
 *   gc_windows    <windows for a collection> <collections they served> <windows for late frees only>
 *   class         <name> <allocs> <bytes> <run allocs> <run bytes> <frees> <freed bytes>
 *   site          <method> <allocs> <bytes>
 *   end
 *
 * Class names are in Java's form (java.lang.String, int[], java.lang.Object[][]),
 * methods as <class>.<name>.  "run" allocations are those the program made
 * while it ran; the others are the start-up replay's (objects already in the
 * heap at VM init) and objects defined for an event that named them.  The
 * first two lines are written at start-up, the rest at VM death; "end" says
 * the file is complete.  gc_windows counts the windows delivered
 * before JVM_SHUT_DOWN (GC_START's last field counts those after).
 */
#include "ledger.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uthash.h>

#include "agents.h"
#include "classes.h"
#include "events.h"
#include "ids.h"
#include "interface.h"
#include "log.h"
#include "threads.h"

_Atomic bool ledger_on;

#define N_TYPES (JVMPI_MAX_EVENT_TYPE_VAL + 1)

static _Atomic bool enabled_ever[N_TYPES];
static _Atomic long delivered[N_TYPES], requested[N_TYPES], from_shutdown[N_TYPES];
static _Atomic bool shutting_down;
static _Atomic long array_class_loads;
static _Atomic long collection_windows, window_collections, frees_only_windows;

static FILE *out;
static char *out_path;
static int hold_seconds;

/* A class as the ledger keys it: the object's own class (kind KEY_OWN),
 * or, when the layer has no record of that, what the OBJECT_ALLOC said
 * (kind: its is_array, cls: its class_id's tag). */
#define KEY_OWN (-1)
#define KEY_UNKNOWN (-2)
typedef struct class_key {
    int64_t cls;
    jint kind;
    jint pad; /* zeroed: the key is hashed as bytes */
} class_key;

typedef struct counts {
    int64_t allocs, bytes, run_allocs, run_bytes, frees, freed_bytes;
} counts;

typedef struct class_entry {
    class_key key;
    char *name;
    counts n;
    UT_hash_handle hh;
} class_entry;

typedef struct site_entry {
    jmethodID method; /* NULL: no Java frame */
    char *name;
    int64_t allocs, bytes;
    UT_hash_handle hh;
} site_entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static class_entry *classes_seen; /* under lock */
static site_entry *sites_seen;    /* under lock */

static const char unknown_class[] = "(class not known)";

/* ---- names ------------------------------------------------------------- */

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
    default: return NULL;
    }
}

/* The descriptor letter of a JVMPI primitive type (JVMPI_INT: 'I'), 0 for others. */
static char type_code(jint type)
{
    static const char codes[] = {
        [JVMPI_BOOLEAN] = 'Z', [JVMPI_CHAR] = 'C', [JVMPI_FLOAT] = 'F', [JVMPI_DOUBLE] = 'D',
        [JVMPI_BYTE] = 'B',    [JVMPI_SHORT] = 'S', [JVMPI_INT] = 'I',   [JVMPI_LONG] = 'J',
    };
    return type >= 0 && (size_t)type < sizeof codes ? codes[type] : 0;
}

/* A class name as CLASS_LOAD gives it ("[I", "[Ljava.lang.String;",
 * java.lang.String) in Java's form, with extra "[]" added. */
static char *java_name(const char *external, int extra_dims)
{
    int dims = 0;
    while (external[dims] == '[') {
        dims++;
    }
    const char *base = external + dims;
    size_t base_len = strlen(base);
    if (dims > 0) {
        const char *prim = base_len == 1 ? primitive_name(base[0]) : NULL;
        if (prim != NULL) {
            base = prim;
            base_len = strlen(prim);
        } else if (base[0] == 'L' && base_len >= 2 && base[base_len - 1] == ';') {
            base++;
            base_len -= 2;
        }
    }
    dims += extra_dims;
    char *s = malloc(base_len + 2 * (size_t)dims + 1);
    if (s == NULL) {
        return NULL;
    }
    memcpy(s, base, base_len);
    for (int i = 0; i < dims; i++) {
        memcpy(s + base_len + 2 * (size_t)i, "[]", 2);
    }
    s[base_len + 2 * (size_t)dims] = '\0';
    return s;
}

static char *class_id_name(jobjectID id, int extra_dims)
{
    class_rec *c = id != NULL ? classes_acquire(id) : NULL;
    if (c == NULL) {
        return NULL;
    }
    char *s = java_name(c->info->name, extra_dims);
    classes_release(c);
    return s;
}

static char *key_name(const class_key *k)
{
    char *s = NULL;
    if (k->kind == KEY_OWN || k->kind == JVMPI_NORMAL_OBJECT) {
        s = class_id_name(seam_id_from_tag(k->cls), 0);
    } else if (k->kind == JVMPI_CLASS) {
        s = class_id_name(seam_id_from_tag(k->cls), 1);
    } else if (type_code(k->kind) != 0) {
        char array[3] = {'[', type_code(k->kind), '\0'};
        s = java_name(array, 0);
    }
    return s != NULL ? s : strdup(unknown_class);
}

static char *method_name(jmethodID method)
{
    if (method == NULL) {
        return strdup("(no Java frame)");
    }
    jobjectID cls = seam_method_class(method);
    class_rec *c = cls != NULL ? classes_acquire(cls) : NULL;
    char *s = NULL;
    if (c != NULL) {
        const seam_class_info *i = c->info;
        for (jint m = 0; m < i->num_methods && s == NULL; m++) {
            if (i->methods[m].method_id == method) {
                char *owner = java_name(i->name, 0);
                size_t len = (owner != NULL ? strlen(owner) : 0) + strlen(i->methods[m].method_name) + 2;
                s = owner != NULL ? malloc(len) : NULL;
                if (s != NULL) {
                    snprintf(s, len, "%s.%s", owner, i->methods[m].method_name);
                }
                free(owner);
            }
        }
        classes_release(c);
    }
    return s != NULL ? s : strdup("(method not known)");
}

/* ---- counting ------------------------------------------------------------ */

/* The entry of k, made (named outside the lock: naming may ask the VM)
 * when new; NULL when out of memory.  Returns with lock held. */
static class_entry *class_entry_locked(const class_key *k)
{
    class_entry *e = NULL;
    pthread_mutex_lock(&lock);
    HASH_FIND(hh, classes_seen, k, sizeof *k, e);
    if (e != NULL) {
        return e;
    }
    pthread_mutex_unlock(&lock);
    char *name = key_name(k);
    pthread_mutex_lock(&lock);
    HASH_FIND(hh, classes_seen, k, sizeof *k, e);
    if (e == NULL && name != NULL && (e = calloc(1, sizeof *e)) != NULL) {
        e->key = *k;
        e->name = name;
        name = NULL;
        HASH_ADD(hh, classes_seen, key, sizeof e->key, e);
    }
    free(name);
    return e;
}

static site_entry *site_entry_locked(jmethodID method)
{
    site_entry *e = NULL;
    pthread_mutex_lock(&lock);
    HASH_FIND_PTR(sites_seen, &method, e);
    if (e != NULL) {
        return e;
    }
    pthread_mutex_unlock(&lock);
    char *name = method_name(method);
    pthread_mutex_lock(&lock);
    HASH_FIND_PTR(sites_seen, &method, e);
    if (e == NULL && name != NULL && (e = calloc(1, sizeof *e)) != NULL) {
        e->method = method;
        e->name = name;
        name = NULL;
        HASH_ADD_PTR(sites_seen, method, e);
    }
    free(name);
    return e;
}

/* The class an OBJECT_ALLOC counts under: the object's own, as the layer
 * recorded it with its ID, so that its OBJECT_FREE finds the same one. */
static class_key alloc_key(const JVMPI_Event *ev)
{
    class_key k = {0, 0, 0};
    int64_t own = 0, tag = seam_tag_from_id(ev->u.obj_alloc.obj_id);
    if (ids_is_class(tag)) {
        /* A Class object, requested java.lang.Class's own too, whose event
         * names no class: its class is java.lang.Class all the same. */
        k.cls = seam_tag_from_id(seam_class_class_id());
        k.kind = KEY_OWN;
    } else if (ids_object_class(tag, &own) == IDS_OBJECT_LIVE) {
        k.cls = own;
        k.kind = KEY_OWN;
    } else {
        k.cls = seam_tag_from_id(ev->u.obj_alloc.class_id);
        k.kind = ev->u.obj_alloc.is_array;
    }
    return k;
}

/* An allocation the program made while it ran (not one the layer replays
 * or defines): its thread is at the allocation now. */
static bool made_now(const JVMPI_Event *ev)
{
    int64_t tag = seam_tag_from_id(ev->u.obj_alloc.obj_id);
    return !ids_is_class(tag) && !ids_is_unannounced(tag) && interface_init_done();
}

static void count_alloc(JNIEnv *env, thread_rec *me, const JVMPI_Event *ev)
{
    class_key k = alloc_key(ev);
    jlong size = ev->u.obj_alloc.size;
    bool run = made_now(ev);
    jmethodID site = NULL;
    if (run) {
        thread_rec *t = me != NULL ? me : threads_self(env);
        JVMPI_CallFrame top;
        if (t != NULL && seam_call_trace(t->info.handle, 1, &top) == 1) {
            site = top.method_id;
        }
    }
    class_entry *c = class_entry_locked(&k);
    if (c != NULL) {
        c->n.allocs++;
        c->n.bytes += size;
        if (run) {
            c->n.run_allocs++;
            c->n.run_bytes += size;
        }
    }
    pthread_mutex_unlock(&lock);
    if (run) {
        site_entry *s = site_entry_locked(site);
        if (s != NULL) {
            s->allocs++;
            s->bytes += size;
        }
        pthread_mutex_unlock(&lock);
    }
}

void ledger_event_enabled(jint event_type)
{
    if (event_type > 0 && event_type < N_TYPES) {
        atomic_store(&enabled_ever[event_type], true);
    }
}

void ledger_event(JNIEnv *env, thread_rec *me, const JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    if (type <= 0 || type >= N_TYPES) {
        return;
    }
    if ((ev->event_type & JVMPI_REQUESTED_EVENT) != 0) {
        atomic_fetch_add_explicit(&requested[type], 1, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&delivered[type], 1, memory_order_relaxed);
    if (atomic_load_explicit(&shutting_down, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&from_shutdown[type], 1, memory_order_relaxed);
    }
    switch (type) {
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        atomic_fetch_add(&from_shutdown[type], 1);
        atomic_store(&shutting_down, true);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        if (ev->u.class_load.class_name != NULL && ev->u.class_load.class_name[0] == '[') {
            atomic_fetch_add_explicit(&array_class_loads, 1, memory_order_relaxed);
        }
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        count_alloc(env, me, ev);
        break;
    default:
        break;
    }
}

void ledger_free_note(int64_t tag, ledger_free *out_note)
{
    out_note->class_tag = 0;
    out_note->size = 0;
    if (ids_is_class(tag)) {
        /* A class's own object: its record outlives it until its CLASS_UNLOAD. */
        class_rec *c = classes_acquire(seam_id_from_tag(tag));
        if (c != NULL) {
            out_note->size = c->info->object_size;
            classes_release(c);
        }
        out_note->class_tag = seam_tag_from_id(seam_class_class_id());
        return;
    }
    out_note->size = ids_object_size(tag);
    int64_t own = 0;
    if (ids_object_class(tag, &own) == IDS_OBJECT_LIVE) {
        out_note->class_tag = own;
    }
}

void ledger_object_freed(const ledger_free *f)
{
    class_key k = {f->class_tag, f->class_tag != 0 ? KEY_OWN : KEY_UNKNOWN, 0};
    class_entry *c = class_entry_locked(&k);
    if (c != NULL) {
        c->n.frees++;
        c->n.freed_bytes += f->size;
    }
    pthread_mutex_unlock(&lock);
}

void ledger_gc_window(long collections)
{
    if (!ledger_active() || atomic_load_explicit(&shutting_down, memory_order_relaxed)) {
        return;
    }
    if (collections > 0) {
        atomic_fetch_add(&collection_windows, 1);
        atomic_fetch_add(&window_collections, collections);
    } else {
        atomic_fetch_add(&frees_only_windows, 1);
    }
}

/* ---- the file -------------------------------------------------------------- */

int ledger_start(const char *path, int hold_s, char *err, size_t errlen)
{
    char shown[LOG_SHORT_BUF];
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        snprintf(err, errlen, "JVMPI_LAYER_OPTIONS: ledger=%s: cannot create the file: %s",
                 log_shorten(path, shown, sizeof shown), strerror(errno));
        return -1;
    }
    char *p = strdup(path);
    if (p == NULL) {
        fclose(f);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    fprintf(f, "jvmpi-ledger\t1\npid\t%ld\n", (long)getpid());
    fflush(f);
    out = f;
    out_path = p;
    hold_seconds = hold_s;
    atomic_store(&ledger_on, true);
    LOG_INFO("ledger: what the agents are sent is counted, and written to %s at VM death", path);
    return 0;
}

/* A name as one field: no tab or line break in it. */
static void put_field(FILE *f, const char *s)
{
    for (; *s != '\0'; s++) {
        fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
}

static int by_class_name(const void *a, const void *b)
{
    return strcmp((*(class_entry *const *)a)->name, (*(class_entry *const *)b)->name);
}

static int by_site_name(const void *a, const void *b)
{
    return strcmp((*(site_entry *const *)a)->name, (*(site_entry *const *)b)->name);
}

/* The entries of a table in name order, so that those of one name (a
 * class seen under two keys, methods of one name) are written as one. */
static class_entry **sorted_classes(size_t *n)
{
    class_entry **v = malloc((HASH_COUNT(classes_seen) + 1) * sizeof *v);
    class_entry *e, *tmp;
    *n = 0;
    if (v != NULL) {
        HASH_ITER(hh, classes_seen, e, tmp) { v[(*n)++] = e; }
        qsort(v, *n, sizeof *v, by_class_name);
    }
    return v;
}

static site_entry **sorted_sites(size_t *n)
{
    site_entry **v = malloc((HASH_COUNT(sites_seen) + 1) * sizeof *v);
    site_entry *e, *tmp;
    *n = 0;
    if (v != NULL) {
        HASH_ITER(hh, sites_seen, e, tmp) { v[(*n)++] = e; }
        qsort(v, *n, sizeof *v, by_site_name);
    }
    return v;
}

static void write_classes(FILE *f)
{
    size_t n;
    class_entry **v = sorted_classes(&n);
    for (size_t i = 0; i < n;) {
        counts sum = {0, 0, 0, 0, 0, 0};
        size_t j = i;
        for (; j < n && strcmp(v[j]->name, v[i]->name) == 0; j++) {
            sum.allocs += v[j]->n.allocs;
            sum.bytes += v[j]->n.bytes;
            sum.run_allocs += v[j]->n.run_allocs;
            sum.run_bytes += v[j]->n.run_bytes;
            sum.frees += v[j]->n.frees;
            sum.freed_bytes += v[j]->n.freed_bytes;
        }
        fputs("class\t", f);
        put_field(f, v[i]->name);
        fprintf(f, "\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\n", (long long)sum.allocs, (long long)sum.bytes,
                (long long)sum.run_allocs, (long long)sum.run_bytes, (long long)sum.frees,
                (long long)sum.freed_bytes);
        i = j;
    }
    free(v);
}

static void write_sites(FILE *f)
{
    size_t n;
    site_entry **v = sorted_sites(&n);
    for (size_t i = 0; i < n;) {
        int64_t allocs = 0, bytes = 0;
        size_t j = i;
        for (; j < n && strcmp(v[j]->name, v[i]->name) == 0; j++) {
            allocs += v[j]->allocs;
            bytes += v[j]->bytes;
        }
        fputs("site\t", f);
        put_field(f, v[i]->name);
        fprintf(f, "\t%lld\t%lld\n", (long long)allocs, (long long)bytes);
        i = j;
    }
    free(v);
}

static void write_events(FILE *f)
{
    for (jint t = 1; t < N_TYPES; t++) {
        events_kind kind = events_kind_of(t);
        if (kind == EVENTS_UNUSED) {
            continue;
        }
        fprintf(f, "event\t%s\t%d\t%ld\t%ld\t%ld\n", events_name(t), atomic_load(&enabled_ever[t]) ? 1 : 0,
                atomic_load(&delivered[t]), atomic_load(&requested[t]), atomic_load(&from_shutdown[t]));
    }
    fprintf(f, "class_loads\t%ld\n", atomic_load(&array_class_loads));
    fprintf(f, "gc_windows\t%ld\t%ld\t%ld\n", atomic_load(&collection_windows), atomic_load(&window_collections),
            atomic_load(&frees_only_windows));
}

static void hold_vm(void)
{
    size_t len = strlen(out_path) + sizeof ".done";
    char *done = malloc(len);
    if (done == NULL) {
        return;
    }
    snprintf(done, len, "%s.done", out_path);
    LOG_INFO("ledger: holding the VM until %s exists (at most %d s)", done, hold_seconds);
    struct timespec step = {0, 20 * 1000000L};
    long steps = (long)hold_seconds * 50;
    while (access(done, F_OK) != 0 && steps-- > 0) {
        nanosleep(&step, NULL);
    }
    if (steps < 0) {
        LOG_WARN("ledger: %s did not appear within %d s; the VM goes on exiting", LOG_SHOWN(done), hold_seconds);
    }
    free(done);
}

void ledger_finish(void)
{
    if (!ledger_active() || out == NULL) {
        return;
    }
    atomic_store(&ledger_on, false);
    FILE *f = out;
    out = NULL;
    int agents = agents_count();
    for (int k = 0; k < agents; k++) {
        fputs("agent\t", f);
        put_field(f, agents_name(k));
        fputc('\n', f);
    }
    write_events(f);
    pthread_mutex_lock(&lock);
    write_classes(f);
    write_sites(f);
    pthread_mutex_unlock(&lock);
    fputs("end\n", f);
    bool failed = ferror(f) != 0;
    if (fclose(f) != 0 || failed) {
        LOG_ERROR("ledger: writing %s failed (disk full, or the file was removed?)", LOG_SHOWN(out_path));
        return;
    }
    LOG_INFO("ledger: written to %s", out_path);
    if (hold_seconds > 0) {
        hold_vm();
    }
}

void ledger_reset(void)
{
    atomic_store(&ledger_on, false);
    if (out != NULL) {
        fclose(out);
        out = NULL;
    }
    free(out_path);
    out_path = NULL;
    hold_seconds = 0;
    for (int t = 0; t < N_TYPES; t++) {
        atomic_store(&enabled_ever[t], false);
        atomic_store(&delivered[t], 0);
        atomic_store(&requested[t], 0);
        atomic_store(&from_shutdown[t], 0);
    }
    atomic_store(&shutting_down, false);
    atomic_store(&array_class_loads, 0);
    atomic_store(&collection_windows, 0);
    atomic_store(&window_collections, 0);
    atomic_store(&frees_only_windows, 0);
    pthread_mutex_lock(&lock);
    class_entry *c, *ctmp;
    HASH_ITER(hh, classes_seen, c, ctmp)
    {
        HASH_DEL(classes_seen, c);
        free(c->name);
        free(c);
    }
    site_entry *s, *stmp;
    HASH_ITER(hh, sites_seen, s, stmp)
    {
        HASH_DEL(sites_seen, s);
        free(s->name);
        free(s);
    }
    pthread_mutex_unlock(&lock);
}
