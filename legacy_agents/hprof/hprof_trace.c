/*
 * hprof_trace.c - stack traces and their frames, each kept once.
 *
 * A trace is (thread serial when thread=y, else 0; frames); a frame is
 * (method, line).  Serials are handed out in the order traces are first
 * seen and are what every other section refers to.  TRACE records are
 * written lazily, at the next dump, for the traces made since the last.
 */
#include <stdlib.h>
#include <string.h>

#include "hprof.h"

#define FIRST_TRACE_SERIAL 1

static hprof_bmap traces;    /* key: int thread, then (method, line) pairs */
static hprof_bmap frames;    /* key: (method, line) */
static hprof_trace **all;
static int n_all, cap_all;
static uint64_t next_frame_id = 1;
static hprof_trace *empty;

typedef struct {
    jmethodID method;
    jint line;
    jint pad;
} frame_key;

void hprof_trace_init(void)
{
    hprof_bmap_init(&traces, 16381);
    hprof_bmap_init(&frames, 16381);
    empty = hprof_trace_intern(0, NULL, 0);
}

/* lineno=n drops line numbers, not the marks for native (-3) and compiled
 * (-2) frames: cpu=samples needs the native mark to tell a thread blocked
 * in native code, and the traces still say "Native method". */
static jint kept_line(jint line) { return hprof_opt.lineno || line < 0 ? line : 0; }

static hprof_frame *frame_intern(jmethodID method, jint line)
{
    frame_key k;
    memset(&k, 0, sizeof k);
    k.method = method;
    k.line = kept_line(line);
    hprof_frame *f = hprof_bmap_get(&frames, &k, sizeof k);
    if (f == NULL) {
        f = hprof_calloc(1, sizeof *f);
        f->method = method;
        f->line = k.line;
        f->id = next_frame_id++;
        hprof_bmap_put(&frames, &k, sizeof k, f);
    }
    return f;
}

hprof_trace *hprof_trace_intern(int thread_serial, const JVMPI_CallFrame *fr, int n)
{
    size_t len = sizeof(int) + (size_t)n * sizeof(frame_key);
    unsigned char small[sizeof(int) + 64 * sizeof(frame_key)];
    unsigned char *key = len <= sizeof small ? small : hprof_calloc(1, len);
    int ts = hprof_opt.thread ? thread_serial : 0;
    memset(key, 0, len);
    memcpy(key, &ts, sizeof ts);
    for (int i = 0; i < n; i++) {
        frame_key k;
        memset(&k, 0, sizeof k);
        k.method = fr[i].method_id;
        k.line = kept_line(fr[i].lineno);
        memcpy(key + sizeof(int) + (size_t)i * sizeof k, &k, sizeof k);
    }
    hprof_trace *t = hprof_bmap_get(&traces, key, len);
    if (t == NULL) {
        t = hprof_calloc(1, sizeof *t);
        t->thread_serial = ts;
        t->nframes = n;
        t->frames = hprof_calloc((size_t)n, sizeof *t->frames);
        for (int i = 0; i < n; i++) {
            t->frames[i] = frame_intern(fr[i].method_id, fr[i].lineno);
        }
        if (n_all == cap_all) {
            cap_all = cap_all ? cap_all * 2 : 4096;
            hprof_trace **grown = realloc(all, (size_t)cap_all * sizeof *grown);
            if (grown == NULL) {
                hprof_error("out of memory");
                abort();
            }
            all = grown;
        }
        all[n_all++] = t;
        t->serial = FIRST_TRACE_SERIAL + n_all - 1;
        hprof_bmap_put(&traces, key, len, t);
    }
    if (key != small) {
        free(key);
    }
    return t;
}

hprof_trace *hprof_trace_empty(void) { return empty; }

hprof_trace **hprof_trace_all(int *n)
{
    *n = n_all;
    return all;
}

int hprof_trace_take(JNIEnv *env, JVMPI_CallFrame *fr, int depth)
{
    JVMPI_CallTrace ct;
    if (depth <= 0) {
        return 0;
    }
    ct.env_id = env;
    ct.num_frames = 0;
    ct.frames = fr;
    hprof_jvmpi->GetCallTrace(&ct, depth);
    return ct.num_frames > 0 ? ct.num_frames : 0;
}

static void method_names(jmethodID id, const char **cls, const char **name, const char **sig, const char **src)
{
    hprof_method *m = hprof_method_find(id);
    *cls = m != NULL && m->cls != NULL ? m->cls->name : "<Unknown class>";
    *name = m != NULL ? m->name : "<Unknown method>";
    *sig = m != NULL ? m->sig : "()V";
    *src = m != NULL && m->cls != NULL ? m->cls->source : NULL;
}

void hprof_trace_top_name(const hprof_trace *t, char *buf, size_t len)
{
    if (t->nframes == 0) {
        snprintf(buf, len, "<empty>");
        return;
    }
    const char *cls, *name, *sig, *src;
    method_names(t->frames[0]->method, &cls, &name, &sig, &src);
    snprintf(buf, len, "%s.%s", cls, name);
}

static void write_ascii(hprof_trace *t)
{
    if (hprof_opt.thread && t->thread_serial > 0) {
        hprof_printf("TRACE %d: (thread=%d)\n", t->serial, t->thread_serial);
    } else {
        hprof_printf("TRACE %d:\n", t->serial);
    }
    if (t->nframes == 0) {
        hprof_printf("\t<empty>\n");
    }
    for (int i = 0; i < t->nframes; i++) {
        const char *cls, *name, *sig, *src;
        char where[64];
        jint line = t->frames[i]->line;
        method_names(t->frames[i]->method, &cls, &name, &sig, &src);
        if (line == -3) {
            snprintf(where, sizeof where, "Native method");
        } else if (line == -2) {
            snprintf(where, sizeof where, "Compiled method");
        } else if (src == NULL) {
            snprintf(where, sizeof where, "Unknown source");
        } else if (line > 0 && hprof_opt.lineno) {
            snprintf(where, sizeof where, "%s:%d", src, (int)line);
        } else {
            snprintf(where, sizeof where, "%s:Unknown line", src);
        }
        hprof_printf("\t%s.%s(%s)\n", cls, name, where);
    }
}

static void write_binary(hprof_trace *t)
{
    for (int i = 0; i < t->nframes; i++) {
        hprof_frame *f = t->frames[i];
        if (f->written) {
            continue;
        }
        hprof_method *m = hprof_method_find(f->method);
        uint64_t name = hprof_string_id(m != NULL ? m->name : "<Unknown method>");
        uint64_t sig = hprof_string_id(m != NULL ? m->sig : "()V");
        uint64_t src = hprof_string_id(m != NULL && m->cls != NULL && m->cls->source != NULL ? m->cls->source
                                                                                            : "Unknown source");
        uint32_t serial = 0;
        if (m != NULL && m->cls != NULL) {
            hprof_class_write_load(m->cls);
            serial = (uint32_t)m->cls->serial;
        }
        /* The format: >0 a line, 0 none, -1 unknown, -2 compiled, -3 native. */
        jint line = f->line;
        if (!hprof_opt.lineno && line >= 0) {
            line = 0;
        } else if (line == 0) {
            line = -1;
        }
        hprof_record_begin(HPROF_FRAME);
        hprof_id(f->id);
        hprof_id(name);
        hprof_id(sig);
        hprof_id(src);
        hprof_u4(serial);
        hprof_u4((uint32_t)line);
        hprof_record_end();
        f->written = 1;
    }
    hprof_record_begin(HPROF_TRACE);
    hprof_u4((uint32_t)t->serial);
    hprof_u4((uint32_t)t->thread_serial);
    hprof_u4((uint32_t)t->nframes);
    for (int i = 0; i < t->nframes; i++) {
        hprof_id(t->frames[i]->id);
    }
    hprof_record_end();
}

void hprof_trace_write_pending(void)
{
    /* Traces are only ever added, and each call writes all that are new:
     * the next one starts where this one ended (a dump calls it before
     * each section, and javac makes some 100000 traces). */
    static int first_new;
    int i = first_new;
    for (; i < n_all; i++) {
        hprof_trace *t = all[i];
        if (t->written) {
            continue;
        }
        for (int k = 0; k < t->nframes; k++) {
            hprof_method_lookup(t->frames[k]->method);
        }
        if (hprof_opt.binary) {
            write_binary(t);
        } else {
            write_ascii(t);
        }
        t->written = 1;
    }
    first_new = i;
}
