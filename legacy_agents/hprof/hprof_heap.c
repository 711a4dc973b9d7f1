/*
 * hprof_heap.c - allocation sites and the table of live objects.
 *
 * A site is (class, array kind, trace): every OBJECT_ALLOC adds to one, and
 * the object table remembers which, with the object's size, so that
 * OBJECT_FREE can take it off the live counts again.
 */
#include <stdlib.h>
#include <string.h>

#include "hprof.h"

typedef struct {
    jobjectID class_id;     /* element class for arrays of references; NULL for primitive arrays */
    jint is_array;
    int trace_serial;
} site_key;

typedef struct {
    site_key key;
    hprof_class *cls;
    hprof_trace *trace;
    uint32_t index;         /* in sites[], what the object table keeps */
    jlong live_bytes, live_objs;
    jlong alloc_bytes, alloc_objs;
} site;

static hprof_bmap sites_by_key;
static site **sites;
static uint32_t n_sites, cap_sites;
static hprof_map objects;   /* jobjectID -> site index << 32 | size */

static jlong total_live_bytes, total_live_objs, total_alloc_bytes, total_alloc_objs;
static long unknown_frees;

/* What the last requested OBJECT_ALLOC said (hprof_heap_request_object). */
static jobjectID wanted;
static jobjectID wanted_class;
static jint wanted_size, wanted_is_array;
static int wanted_seen;

void hprof_heap_init(void)
{
    hprof_bmap_init(&sites_by_key, 16381);
    hprof_map_init(&objects, 1 << 18);
}

static site *site_for(jobjectID class_id, jint is_array, hprof_trace *trace)
{
    site_key k;
    memset(&k, 0, sizeof k);
    k.class_id = is_array != JVMPI_NORMAL_OBJECT && is_array != JVMPI_CLASS ? NULL : class_id;
    k.is_array = is_array;
    k.trace_serial = trace->serial;
    site *s = hprof_bmap_get(&sites_by_key, &k, sizeof k);
    if (s != NULL) {
        return s;
    }
    s = hprof_calloc(1, sizeof *s);
    s->key = k;
    s->trace = trace;
    s->cls = hprof_class_find(k.class_id);
    if (n_sites == cap_sites) {
        cap_sites = cap_sites ? cap_sites * 2 : 4096;
        site **grown = realloc(sites, (size_t)cap_sites * sizeof *grown);
        if (grown == NULL) {
            hprof_error("out of memory");
            abort();
        }
        sites = grown;
    }
    s->index = n_sites;
    sites[n_sites++] = s;
    hprof_bmap_put(&sites_by_key, &k, sizeof k, s);
    return s;
}

static void record_object(jobjectID obj, jobjectID class_id, jint is_array, jint size, hprof_trace *trace)
{
    uint64_t old;
    if (hprof_map_get(&objects, (uint64_t)(uintptr_t)obj, &old)) {
        return; /* the start-up replay and a request may both tell of it */
    }
    site *s = site_for(class_id, is_array, trace);
    uint32_t index = s->index;
    s->alloc_bytes += size;
    s->alloc_objs++;
    s->live_bytes += size;
    s->live_objs++;
    total_alloc_bytes += size;
    total_alloc_objs++;
    total_live_bytes += size;
    total_live_objs++;
    hprof_map_put(&objects, (uint64_t)(uintptr_t)obj, (uint64_t)index << 32 | (uint32_t)size);
}

void hprof_heap_obj_alloc(JVMPI_Event *ev)
{
    int requested = (ev->event_type & JVMPI_REQUESTED_EVENT) != 0;
    jobjectID obj = ev->u.obj_alloc.obj_id;
    if (requested) {
        /* On the requesting thread, which holds the lock already. */
        if (obj == wanted) {
            wanted_class = ev->u.obj_alloc.class_id;
            wanted_size = ev->u.obj_alloc.size;
            wanted_is_array = ev->u.obj_alloc.is_array;
            wanted_seen = 1;
        }
        if (hprof_opt.heap) {
            hprof_lock_enter();
            record_object(obj, ev->u.obj_alloc.class_id, ev->u.obj_alloc.is_array, ev->u.obj_alloc.size,
                          hprof_trace_empty());
            hprof_lock_exit();
        }
        return;
    }
    JVMPI_CallFrame frames[64];
    JVMPI_CallFrame *fr = frames;
    int n = 0;
    int depth = hprof_opt.depth;
    if (hprof_init_done && depth > 0) {
        if (depth > 64) {
            fr = hprof_calloc((size_t)depth, sizeof *fr);
        }
        /* Taken before the lock: another thread's sampler or dump is not held up by it. */
        n = hprof_trace_take(ev->env_id, fr, depth);
    }
    hprof_lock_enter();
    if (!hprof_shut_down) {
        hprof_trace *t = hprof_trace_intern(hprof_thread_serial(ev->env_id), fr, n);
        jobjectID cls = ev->u.obj_alloc.class_id;
        if (cls != NULL && hprof_init_done && hprof_class_find(cls) == NULL) {
            hprof_class_lookup(cls);
        }
        record_object(obj, cls, ev->u.obj_alloc.is_array, ev->u.obj_alloc.size, t);
    }
    hprof_lock_exit();
    if (fr != frames) {
        free(fr);
    }
}

/* In a GC window: the lock was taken at GC_START; no malloc here. */
void hprof_heap_obj_free(JVMPI_Event *ev)
{
    uint64_t v;
    if (!hprof_map_remove(&objects, (uint64_t)(uintptr_t)ev->u.obj_free.obj_id, &v)) {
        unknown_frees++;
        return;
    }
    uint32_t index = (uint32_t)(v >> 32);
    jint size = (jint)(uint32_t)v;
    if (index < n_sites) {
        sites[index]->live_bytes -= size;
        sites[index]->live_objs--;
    }
    total_live_bytes -= size;
    total_live_objs--;
}

int hprof_heap_object(jobjectID id, jint *size, hprof_trace **trace)
{
    uint64_t v;
    if (!hprof_map_get(&objects, (uint64_t)(uintptr_t)id, &v)) {
        return 0;
    }
    uint32_t index = (uint32_t)(v >> 32);
    *size = (jint)(uint32_t)v;
    *trace = index < n_sites ? sites[index]->trace : hprof_trace_empty();
    return 1;
}

jobjectID hprof_heap_object_class(jobjectID id)
{
    uint64_t v;
    if (!hprof_map_get(&objects, (uint64_t)(uintptr_t)id, &v)) {
        return NULL;
    }
    uint32_t index = (uint32_t)(v >> 32);
    return index < n_sites && sites[index]->key.is_array == JVMPI_NORMAL_OBJECT ? sites[index]->key.class_id : NULL;
}

jobjectID hprof_heap_request_object(jobjectID id, jint *size, jint *is_array)
{
    wanted = id;
    wanted_seen = 0;
    wanted_class = NULL;
    if (id == NULL || hprof_shut_down ||
        hprof_jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, id) != JVMPI_SUCCESS || !wanted_seen) {
        wanted = NULL;
        return NULL;
    }
    wanted = NULL;
    if (size != NULL) {
        *size = wanted_size;
    }
    if (is_array != NULL) {
        *is_array = wanted_is_array;
    }
    return wanted_class;
}

void hprof_heap_totals(jlong *live_bytes, jlong *live_objs, jlong *alloc_bytes, jlong *alloc_objs)
{
    *live_bytes = total_live_bytes;
    *live_objs = total_live_objs;
    *alloc_bytes = total_alloc_bytes;
    *alloc_objs = total_alloc_objs;
}

/* ---- the SITES section ------------------------------------------------- */

static int by_live_bytes(const void *a, const void *b)
{
    const site *x = *(site *const *)a, *y = *(site *const *)b;
    if (x->live_bytes != y->live_bytes) {
        return x->live_bytes > y->live_bytes ? -1 : 1;
    }
    if (x->alloc_bytes != y->alloc_bytes) {
        return x->alloc_bytes > y->alloc_bytes ? -1 : 1;
    }
    return x->trace->serial - y->trace->serial;
}

static const char *prim_array_name(jint is_array)
{
    switch (is_array) {
    case JVMPI_BOOLEAN: return "boolean[]";
    case JVMPI_BYTE: return "byte[]";
    case JVMPI_CHAR: return "char[]";
    case JVMPI_SHORT: return "short[]";
    case JVMPI_INT: return "int[]";
    case JVMPI_LONG: return "long[]";
    case JVMPI_FLOAT: return "float[]";
    case JVMPI_DOUBLE: return "double[]";
    default: return NULL;
    }
}

static void site_name(site *s, char *buf, size_t len)
{
    const char *prim = prim_array_name(s->key.is_array);
    if (prim != NULL) {
        snprintf(buf, len, "%s", prim);
        return;
    }
    if (s->cls == NULL && s->key.class_id != NULL) {
        s->cls = hprof_class_lookup(s->key.class_id);
    }
    if (s->cls == NULL) {
        snprintf(buf, len, s->key.is_array == JVMPI_CLASS ? "java.lang.Object[]" : "<Unknown class>");
        return;
    }
    hprof_class_print_name(s->cls->name, buf, len);
    if (s->key.is_array == JVMPI_CLASS) {
        size_t at = strlen(buf);
        snprintf(buf + at, len - at, "[]");
    }
}

/* SITES as they were when hprof_heap_take_sites ran: the figures are taken
 * right after the forced GC and written later, after the HEAP DUMP, where
 * JDK 8's HPROF put the section.  Taken later, they would count as live what
 * the JDK allocates while the dump is taken (some 200 Strings on JDK 8),
 * which the dump itself cannot have. */
typedef struct {
    site *s;
    jlong live_bytes, live_objs, alloc_bytes, alloc_objs;
} site_row;

static site_row *taken;
static uint32_t n_taken;
static int have_taken;
static jlong taken_live_bytes, taken_live_objs, taken_alloc_bytes, taken_alloc_objs;

void hprof_heap_take_sites(void)
{
    site **sorted = hprof_calloc(n_sites, sizeof *sorted);
    uint32_t n = 0;
    for (uint32_t i = 0; i < n_sites; i++) {
        site *s = sites[i];
        double ratio = total_live_bytes > 0 ? (double)s->live_bytes / (double)total_live_bytes : 0.0;
        if (s->alloc_objs == 0 || (hprof_opt.cutoff > 0.0 && ratio < hprof_opt.cutoff)) {
            continue;
        }
        sorted[n++] = s;
    }
    qsort(sorted, n, sizeof *sorted, by_live_bytes);
    /* Classes of the sites are looked up before anything is written:
     * a requested CLASS_LOAD must not land in the middle of a record. */
    for (uint32_t i = 0; i < n; i++) {
        if (sorted[i]->cls == NULL && sorted[i]->key.class_id != NULL) {
            sorted[i]->cls = hprof_class_lookup(sorted[i]->key.class_id);
        }
    }
    free(taken);
    taken = hprof_calloc(n > 0 ? n : 1, sizeof *taken);
    for (uint32_t i = 0; i < n; i++) {
        site *s = sorted[i];
        taken[i] = (site_row){s, s->live_bytes, s->live_objs, s->alloc_bytes, s->alloc_objs};
    }
    n_taken = n;
    taken_live_bytes = total_live_bytes;
    taken_live_objs = total_live_objs;
    taken_alloc_bytes = total_alloc_bytes;
    taken_alloc_objs = total_alloc_objs;
    have_taken = 1;
    free(sorted);
}

void hprof_heap_write_sites(void)
{
    char date[64];
    if (!have_taken) {
        hprof_heap_take_sites();
    }
    have_taken = 0;
    uint32_t n = n_taken;
    if (hprof_opt.binary) {
        float cutoff = (float)hprof_opt.cutoff;
        uint32_t cutoff_bits;
        memcpy(&cutoff_bits, &cutoff, sizeof cutoff_bits);
        for (uint32_t i = 0; i < n; i++) {
            if (taken[i].s->cls != NULL) {
                hprof_class_write_load(taken[i].s->cls);
            }
        }
        hprof_record_begin(HPROF_ALLOC_SITES);
        hprof_u2(0x4); /* a full GC was forced before (see the dump sequence) */
        hprof_u4(cutoff_bits);
        hprof_u4((uint32_t)taken_live_bytes);
        hprof_u4((uint32_t)taken_live_objs);
        hprof_u8((uint64_t)taken_alloc_bytes);
        hprof_u8((uint64_t)taken_alloc_objs);
        hprof_u4(n);
        for (uint32_t i = 0; i < n; i++) {
            const site_row *r = &taken[i];
            unsigned kind = r->s->key.is_array == JVMPI_CLASS ? HPROF_T_OBJECT : (unsigned)r->s->key.is_array;
            hprof_u1(kind);
            hprof_u4(r->s->cls != NULL ? (uint32_t)r->s->cls->serial : 0);
            hprof_u4((uint32_t)r->s->trace->serial);
            hprof_u4((uint32_t)r->live_bytes);
            hprof_u4((uint32_t)r->live_objs);
            hprof_u4((uint32_t)r->alloc_bytes);
            hprof_u4((uint32_t)r->alloc_objs);
        }
        hprof_record_end();
        hprof_record_begin(HPROF_HEAP_SUMMARY);
        hprof_u4((uint32_t)taken_live_bytes);
        hprof_u4((uint32_t)taken_live_objs);
        hprof_u8((uint64_t)taken_alloc_bytes);
        hprof_u8((uint64_t)taken_alloc_objs);
        hprof_record_end();
    } else {
        double accum = 0.0;
        hprof_printf("SITES BEGIN (ordered by live bytes) %s\n", hprof_date(date, sizeof date));
        hprof_printf("          percent          live          alloc'ed  stack class\n");
        hprof_printf(" rank   self  accum     bytes objs     bytes  objs trace name\n");
        for (uint32_t i = 0; i < n; i++) {
            const site_row *r = &taken[i];
            char name[1024];
            double self = taken_live_bytes > 0 ? 100.0 * (double)r->live_bytes / (double)taken_live_bytes : 0.0;
            accum += self;
            site_name(r->s, name, sizeof name);
            hprof_printf("%5u %5.2f%% %5.2f%% %9lld %4lld %9lld %5lld %5d %s\n", i + 1, self, accum,
                         (long long)r->live_bytes, (long long)r->live_objs, (long long)r->alloc_bytes,
                         (long long)r->alloc_objs, r->s->trace->serial, name);
        }
        hprof_printf("SITES END\n");
    }
}
