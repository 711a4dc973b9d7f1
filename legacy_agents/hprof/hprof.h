/*
 * hprof.h - what the modules of the HPROF work-alike share.
 *
 * The agent is written the way a JVMPI profiler was written around 2002:
 * <jvmpi.h>, the C library, pthreads and BSD sockets, nothing else.  Every
 * table lives under one raw monitor (hprof_lock); the modules assume the
 * caller holds it unless a comment says otherwise.
 */
#ifndef HPROF_H_
#define HPROF_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jvmpi.h>

/* ---- hprof.c: the agent's globals and the dump sequence ---------------- */

extern JVMPI_Interface *hprof_jvmpi;
extern JVMPI_RawMonitor hprof_lock;
/* Set once JVM_INIT_DONE arrived: before it, allocations have no trace
 * worth taking (the start-up replay) and no thread may be created. */
extern volatile int hprof_init_done;
/* Set once the output was closed (JVM_SHUT_DOWN): late events are ignored. */
extern volatile int hprof_shut_down;

void hprof_lock_enter(void);
void hprof_lock_exit(void);
void hprof_error(const char *fmt, ...);
/* "Wed Oct  7 11:38:10 1998", the date HPROF put in section headers. */
const char *hprof_date(char *buf, size_t len);
/* What the user typed, for an error line: as it is, or its start and its
 * length when long, so that the reason after it is seen. */
#define HPROF_SHOWN_BUF 160
const char *hprof_shown(const char *text, char *buf, size_t len);
#define HPROF_SHOWN(text) hprof_shown((text), (char[HPROF_SHOWN_BUF]){0}, HPROF_SHOWN_BUF)

/* ---- hprof_options.c --------------------------------------------------- */

#define HPROF_HEAP_SITES 1
#define HPROF_HEAP_DUMP 2

#define HPROF_CPU_OFF 0
#define HPROF_CPU_SAMPLES 1
#define HPROF_CPU_TIMES 2
#define HPROF_CPU_OLD 3

typedef struct {
    int heap;          /* HPROF_HEAP_* bits */
    int heap_given;    /* heap= was on the command line */
    int cpu;
    int monitor;
    int binary;
    char *file;        /* NULL: the default name for the format */
    char *net_host;
    int net_port;
    int depth;
    double cutoff;
    int lineno;
    int thread;
    int doe;
    int interval;      /* ms between cpu=samples ticks (JDK 5 to 8) */
    int force;         /* n: never overwrite an existing file= (JDK 5 to 8) */
    int verbose;       /* "Dumping ... done." on stderr at each dump (JDK 5 to 8) */
} hprof_options;

extern hprof_options hprof_opt;

/* 0 = go on, 1 = "help" was given, -1 = a bad option (already reported). */
int hprof_options_parse(const char *options);
void hprof_options_usage(FILE *to);
/* With cpu=old JDK 8's HPROF made the ascii file a java -prof listing: no
 * preamble, no THREAD lines, traces only where another section needs them. */
#define HPROF_PROF_LISTING() (hprof_opt.cpu == HPROF_CPU_OLD && !hprof_opt.binary)

/* ---- hprof_io.c: the output, ascii or binary --------------------------- */

/* Binary record tags of the "JAVA PROFILE 1.0.1" format. */
#define HPROF_UTF8 0x01
#define HPROF_LOAD_CLASS 0x02
#define HPROF_UNLOAD_CLASS 0x03
#define HPROF_FRAME 0x04
#define HPROF_TRACE 0x05
#define HPROF_ALLOC_SITES 0x06
#define HPROF_HEAP_SUMMARY 0x07
#define HPROF_START_THREAD 0x0A
#define HPROF_END_THREAD 0x0B
#define HPROF_REC_HEAP_DUMP 0x0C
#define HPROF_REC_CPU_SAMPLES 0x0D
#define HPROF_CONTROL_SETTINGS 0x0E

/* Heap dump sub-record tags. */
#define HPROF_GC_ROOT_UNKNOWN 0xFF
#define HPROF_GC_ROOT_JNI_GLOBAL 0x01
#define HPROF_GC_ROOT_JNI_LOCAL 0x02
#define HPROF_GC_ROOT_JAVA_FRAME 0x03
#define HPROF_GC_ROOT_NATIVE_STACK 0x04
#define HPROF_GC_ROOT_STICKY_CLASS 0x05
#define HPROF_GC_ROOT_THREAD_BLOCK 0x06
#define HPROF_GC_ROOT_MONITOR_USED 0x07
#define HPROF_GC_ROOT_THREAD_OBJ 0x08
#define HPROF_GC_CLASS_DUMP 0x20
#define HPROF_GC_INSTANCE_DUMP 0x21
#define HPROF_GC_OBJ_ARRAY_DUMP 0x22
#define HPROF_GC_PRIM_ARRAY_DUMP 0x23

/* Basic types of the binary format. */
#define HPROF_T_OBJECT 2
#define HPROF_T_BOOLEAN 4
#define HPROF_T_CHAR 5
#define HPROF_T_FLOAT 6
#define HPROF_T_DOUBLE 7
#define HPROF_T_BYTE 8
#define HPROF_T_SHORT 9
#define HPROF_T_INT 10
#define HPROF_T_LONG 11

int hprof_io_open(void);          /* 0 or -1 (reported) */
void hprof_io_flush(void);
int hprof_io_failed(void);        /* a write failed (reported once) */
void hprof_io_close(void);
void hprof_printf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Binary output.  Between hprof_record_begin and _end the bytes go to the
 * record's body; records begun inside another one (a STRING a LOAD CLASS
 * needs) are written out whole first, so they precede the outer one. */
void hprof_record_begin(int tag);
void hprof_record_end(void);
void hprof_u1(unsigned v);
void hprof_u2(unsigned v);
void hprof_u4(uint32_t v);
void hprof_u8(uint64_t v);
void hprof_id(uint64_t v);
void hprof_bytes(const void *p, size_t n);
/* ID of a string in the binary output; its STRING record is written the
 * first time it is asked for. */
uint64_t hprof_string_id(const char *s);

/* ---- hprof_table.c: hash tables ----------------------------------------- */

/* Open addressing, 64-bit key (never 0) -> 64-bit value.  Removal never
 * allocates, so OBJECT_FREE (thread suspended mode) may remove. */
typedef struct {
    uint64_t *keys;
    uint64_t *vals;
    size_t cap;     /* power of two */
    size_t count;
} hprof_map;

void hprof_map_init(hprof_map *m, size_t cap);
int hprof_map_get(const hprof_map *m, uint64_t key, uint64_t *val);
int hprof_map_put(hprof_map *m, uint64_t key, uint64_t val);   /* -1 out of memory */
int hprof_map_remove(hprof_map *m, uint64_t key, uint64_t *val);
/* Calls f for every entry; the table must not change meanwhile. */
void hprof_map_each(const hprof_map *m, void (*f)(uint64_t key, uint64_t val, void *arg), void *arg);

/* Chained, byte-string key -> pointer. */
typedef struct hprof_bentry {
    struct hprof_bentry *next;
    uint32_t hash;
    size_t len;
    void *val;
    unsigned char key[];
} hprof_bentry;

typedef struct {
    hprof_bentry **buckets;
    size_t nbuckets;
    size_t count;
} hprof_bmap;

void hprof_bmap_init(hprof_bmap *m, size_t nbuckets);
void *hprof_bmap_get(const hprof_bmap *m, const void *key, size_t len);
int hprof_bmap_put(hprof_bmap *m, const void *key, size_t len, void *val);

char *hprof_strdup(const char *s);
void *hprof_calloc(size_t n, size_t size);

/* ---- hprof_class.c: classes, methods, threads -------------------------- */

typedef struct {
    char *name;
    char *sig;
} hprof_field;

typedef struct hprof_class {
    jobjectID id;
    char *name;              /* as CLASS_LOAD gave it: "java.lang.String", "[I" */
    char *source;            /* NULL: unknown */
    int serial;              /* class serial of the binary format */
    int num_interfaces;
    int num_statics;
    hprof_field *statics;
    int num_instances;
    hprof_field *instances;
    jobjectID super;         /* learned from heap dumps; NULL until then */
    int loaded_written;      /* LOAD CLASS is in the binary output */
    int unloaded;
    int placeholder;         /* the VM gave no CLASS_LOAD for this ID */
} hprof_class;

typedef struct {
    jmethodID id;
    char *name;
    char *sig;
    hprof_class *cls;
} hprof_method;

typedef struct hprof_thread {
    JNIEnv *env;
    jobjectID obj;
    int serial;
    char *name;
    char *group;
    char *parent;
    int alive;
    /* monitor contention in progress (hprof_monitor.c) */
    int contending;
    jlong contend_start_ms;
    char *contend_what;
    struct hprof_trace *last_sample;   /* cpu=samples (hprof_cpu.c) */
} hprof_thread;

void hprof_class_init(void);
void hprof_class_load(JVMPI_Event *ev);
void hprof_class_unload(JVMPI_Event *ev);
hprof_class *hprof_class_find(jobjectID id);
/* Like find, but asks for the CLASS_LOAD of an unknown ID.  The lock is held;
 * the requested event re-enters it on this thread. */
hprof_class *hprof_class_lookup(jobjectID id);
hprof_class *hprof_class_by_name(const char *name);
/* Every class seen, in load order. */
hprof_class **hprof_class_all(int *n);
/* "java.lang.String", "char[]", "java.lang.String[][]" */
void hprof_class_print_name(const char *name, char *buf, size_t len);
/* "java/lang/String", "[C", "[Ljava/lang/String;": the names the binary
 * format's readers expect, the ones HotSpot's own heap dumps use. */
void hprof_class_binary_name(const char *name, char *buf, size_t len);
/* Writes the LOAD CLASS record if it was not written yet. */
void hprof_class_write_load(hprof_class *c);
hprof_method *hprof_method_find(jmethodID id);
/* Resolves an unknown method through GetMethodClass and CLASS_LOAD; must
 * not be called in a GC window. */
hprof_method *hprof_method_lookup(jmethodID id);

void hprof_thread_start(JVMPI_Event *ev);
void hprof_thread_end(JVMPI_Event *ev);
hprof_thread *hprof_thread_find(JNIEnv *env);
hprof_thread **hprof_thread_all(int *n);
int hprof_thread_serial(JNIEnv *env);   /* 0: not known */

/* ---- hprof_trace.c ---------------------------------------------------- */

typedef struct {
    jmethodID method;
    jint line;
    uint64_t id;            /* frame ID in the binary output */
    int written;
} hprof_frame;

typedef struct hprof_trace {
    int serial;
    int thread_serial;
    int nframes;
    hprof_frame **frames;
    int written;
    /* cpu=samples */
    long samples;
    /* cpu=times */
    long calls;
    jlong self_ns;
} hprof_trace;

void hprof_trace_init(void);
hprof_trace *hprof_trace_intern(int thread_serial, const JVMPI_CallFrame *frames, int n);
/* Trace with no frames, for what was allocated or seen without one. */
hprof_trace *hprof_trace_empty(void);
hprof_trace **hprof_trace_all(int *n);
/* Writes the TRACE (ascii) or STACK FRAME + STACK TRACE records (binary)
 * of every trace not written yet.  Resolves unknown methods first: must not
 * be called in a GC window. */
void hprof_trace_write_pending(void);
/* "java.lang.String.charAt" for the top frame, "<empty>" for none. */
void hprof_trace_top_name(const hprof_trace *t, char *buf, size_t len);
/* Takes the call trace of a thread; the lock must NOT be held by the caller
 * when the thread is another one. n == 0 when there is none. */
int hprof_trace_take(JNIEnv *env, JVMPI_CallFrame *frames, int depth);

/* ---- hprof_heap.c: sites and the object table --------------------------- */

void hprof_heap_init(void);
void hprof_heap_obj_alloc(JVMPI_Event *ev);
void hprof_heap_obj_free(JVMPI_Event *ev);
/* Size and trace of a live object; 0 when unknown. */
int hprof_heap_object(jobjectID id, jint *size, hprof_trace **trace);
/* Class of a plain object the table has; NULL otherwise. */
jobjectID hprof_heap_object_class(jobjectID id);
/* Asks the VM for the OBJECT_ALLOC of an object the table does not have;
 * returns its class (NULL if none) and fills size/is_array. */
jobjectID hprof_heap_request_object(jobjectID id, jint *size, jint *is_array);
/* SITES: the figures are taken (right after the forced GC of a dump) and
 * written later in the dump; write takes them itself if they were not. */
void hprof_heap_take_sites(void);
void hprof_heap_write_sites(void);
void hprof_heap_totals(jlong *live_bytes, jlong *live_objs, jlong *alloc_bytes, jlong *alloc_objs);

/* ---- hprof_dump.c: HEAP_DUMP conversion --------------------------------- */

void hprof_dump_heap_event(JVMPI_Event *ev);

/* ---- hprof_cpu.c ------------------------------------------------------- */

int hprof_cpu_start(void);              /* enables what the mode needs, in JVM_OnLoad */
void hprof_cpu_init_done(void);         /* starts the sampler */
void hprof_cpu_method_entry(JVMPI_Event *ev);
void hprof_cpu_method_exit(JVMPI_Event *ev);
void hprof_cpu_thread_end(JNIEnv *env);
void hprof_cpu_write(void);
void hprof_cpu_stop(void);

/* ---- hprof_monitor.c --------------------------------------------------- */

int hprof_monitor_start(void);
void hprof_monitor_event(JVMPI_Event *ev);
void hprof_monitor_dump_event(JVMPI_Event *ev);
void hprof_monitor_write_time(void);

#endif
