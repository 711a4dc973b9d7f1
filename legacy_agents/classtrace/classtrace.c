/*
 * classtrace - a JVMPI agent that traces every class a Java program loads.
 *
 * This is the kind of agent JVMPI spec section 8.1 describes, written the way
 * one was written for JDK 1.2-5.0: against <jvmpi.h> only, started by the VM
 * through JVM_OnLoad (java -Xrunclasstrace:<options>).  On today's JDKs it runs
 * unchanged through the compatibility layer:
 *
 *   java -agentpath:/path/libjvmpi.so=classtrace:file=ct.txt Main
 *   JAVA_TOOL_OPTIONS=-agentpath:/path/libjvmpi.so java -Xrunclasstrace Main
 *     (the VM finds libclasstrace.so for -Xrun itself, on LD_LIBRARY_PATH)
 *
 * Options (comma separated, see usage()):
 *   file=<path>   where the trace goes (default: standard output)
 *   methods=y|n   also list each method with signature and line range
 *   unload=y|n    also trace class unloading
 *   help          print the options and exit
 *
 * Output, one line per event:
 *   CLASS_LOAD java.lang.String (String.java) methods=N statics=N instances=N interfaces=N
 *   THREAD_START main group=main parent=system
 *   THREAD_END main
 *   CLASS_UNLOAD Foo
 * and at VM shut-down:
 *   classtrace: N classes loaded, M unloaded, T threads
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jvmpi.h>

#define CT_NAME "classtrace"

/* The VM finds the agent by this name; jvmpi.h does not declare it. */
JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved);

static JVMPI_Interface *jvmpi;

/* Events arrive on whatever thread loads the class or starts the thread, so
 * the output file, the tables and the counters are only touched while holding
 * this monitor.  The leading '_' keeps the layer from reporting contention on
 * it as RAW_MONITOR_CONTENDED_* events, the same as Sun's own agents did. */
static JVMPI_RawMonitor lock;

static FILE *out;
static int out_is_file;
static int out_failed;
static char *opt_file;
static int opt_methods;
static int opt_unload;
static int shut_down;

static long classes_loaded;
static long classes_unloaded;
static long threads_started;

/*
 * A small pointer -> name table.  CLASS_UNLOAD only carries the class ID and
 * THREAD_END only the thread's JNIEnv *, so the names seen at the defining
 * events are kept here.  The strings in an event are only valid during the
 * NotifyEvent call, hence the copies.
 */
#define TABLE_BUCKETS 4093

typedef struct entry {
    void *key;
    char *name;
    struct entry *next;
} entry;

typedef struct {
    entry *bucket[TABLE_BUCKETS];
} table;

static table class_names;
static table thread_names;

static unsigned table_hash(void *key)
{
    unsigned long k = (unsigned long)key;
    /* IDs and JNIEnv pointers are aligned: drop the low bits that never vary. */
    return (unsigned)((k >> 3) ^ (k >> 17)) % TABLE_BUCKETS;
}

static char *copy_string(const char *s)
{
    char *c;
    size_t n;

    if (s == NULL)
        s = "?";
    n = strlen(s) + 1;
    c = malloc(n);
    if (c != NULL)
        memcpy(c, s, n);
    return c;
}

/* A key seen again (IDs may be reused after their undefining event was lost,
 * e.g. while unload tracing was off) just gets its name replaced. */
static void table_put(table *t, void *key, const char *name)
{
    unsigned h = table_hash(key);
    entry *e;
    char *copy = copy_string(name);

    if (copy == NULL)
        return;
    for (e = t->bucket[h]; e != NULL; e = e->next) {
        if (e->key == key) {
            free(e->name);
            e->name = copy;
            return;
        }
    }
    e = malloc(sizeof(*e));
    if (e == NULL) {
        free(copy);
        return;
    }
    e->key = key;
    e->name = copy;
    e->next = t->bucket[h];
    t->bucket[h] = e;
}

/* Removes the entry and hands its name to the caller, who frees it. */
static char *table_take(table *t, void *key)
{
    entry **p = &t->bucket[table_hash(key)];

    for (; *p != NULL; p = &(*p)->next) {
        if ((*p)->key == key) {
            entry *e = *p;
            char *name = e->name;
            *p = e->next;
            free(e);
            return name;
        }
    }
    return NULL;
}

static void table_clear(table *t)
{
    int i;

    for (i = 0; i < TABLE_BUCKETS; i++) {
        entry *e = t->bucket[i];
        while (e != NULL) {
            entry *next = e->next;
            free(e->name);
            free(e);
            e = next;
        }
        t->bucket[i] = NULL;
    }
}

/* What the user typed, for an error line: its start and length when long,
 * so that a 100 KB option does not bury the reason. */
static const char *shown(const char *s)
{
    static char buf[160];
    size_t n = strlen(s);

    if (n <= 120)
        return s;
    snprintf(buf, sizeof buf, "%.100s... (%lu bytes in all)", s, (unsigned long)n);
    return buf;
}

static const char *or_unknown(const char *s)
{
    return s != NULL ? s : "?";
}

/* ---- event handlers (called with the lock held) ---- */

static void class_load(JVMPI_Event *ev)
{
    const char *name = or_unknown(ev->u.class_load.class_name);
    int i;

    classes_loaded++;
    fprintf(out, "CLASS_LOAD %s (%s) methods=%d statics=%d instances=%d interfaces=%d\n",
            name,
            ev->u.class_load.source_name != NULL ? ev->u.class_load.source_name
                                                 : "no source",
            (int)ev->u.class_load.num_methods,
            (int)ev->u.class_load.num_static_fields,
            (int)ev->u.class_load.num_instance_fields,
            (int)ev->u.class_load.num_interfaces);

    if (opt_methods && ev->u.class_load.methods != NULL) {
        for (i = 0; i < ev->u.class_load.num_methods; i++) {
            JVMPI_Method *m = &ev->u.class_load.methods[i];
            /* Native and abstract methods have no line table: the VM
             * reports a non-positive line for them. */
            if (m->start_lineno > 0)
                fprintf(out, "  %s%s lines %d-%d\n",
                        or_unknown(m->method_name), or_unknown(m->method_signature),
                        (int)m->start_lineno, (int)m->end_lineno);
            else
                fprintf(out, "  %s%s no lines\n",
                        or_unknown(m->method_name), or_unknown(m->method_signature));
        }
    }

    if (opt_unload)
        table_put(&class_names, ev->u.class_load.class_id, name);
}

static void class_unload(JVMPI_Event *ev)
{
    char *name = table_take(&class_names, ev->u.class_unload.class_id);

    classes_unloaded++;
    if (name != NULL) {
        fprintf(out, "CLASS_UNLOAD %s\n", name);
        free(name);
    } else {
        fprintf(out, "CLASS_UNLOAD <unknown class %p>\n",
                (void *)ev->u.class_unload.class_id);
    }
}

static void thread_start(JVMPI_Event *ev)
{
    const char *name = or_unknown(ev->u.thread_start.thread_name);

    threads_started++;
    fprintf(out, "THREAD_START %s group=%s parent=%s\n", name,
            or_unknown(ev->u.thread_start.group_name),
            or_unknown(ev->u.thread_start.parent_name));
    /* The start event names the thread by thread_env_id (for the threads
     * already running at start-up, env_id is the thread doing the telling);
     * THREAD_END comes on the ending thread itself, as env_id. */
    table_put(&thread_names, ev->u.thread_start.thread_env_id, name);
}

static void thread_end(JVMPI_Event *ev)
{
    char *name = table_take(&thread_names, ev->env_id);

    if (name != NULL) {
        fprintf(out, "THREAD_END %s\n", name);
        free(name);
    } else {
        fprintf(out, "THREAD_END <unknown thread %p>\n", (void *)ev->env_id);
    }
}

/* A trace cut short by a full disk must not pass for a whole one: the
 * first failed write is said once, on stderr (called with the lock held,
 * right after the writes, while errno is still theirs). */
static void check_out(int failed)
{
    int err = errno;

    if (out_failed || !(failed || ferror(out)))
        return;
    out_failed = 1;
    fprintf(stderr, CT_NAME ": writing the trace to %s failed: %s; the trace is incomplete\n",
            out_is_file ? shown(opt_file) : "standard output", strerror(err));
}

static void jvm_shut_down(void)
{
    int failed;

    fprintf(out, CT_NAME ": %ld classes loaded, %ld unloaded, %ld threads\n",
            classes_loaded, classes_unloaded, threads_started);
    failed = fflush(out) != 0;
    check_out(failed);
    if (out_is_file && fclose(out) != 0)
        check_out(1);
    out = NULL;
    shut_down = 1;
    table_clear(&class_names);
    table_clear(&thread_names);
}

static void notify_event(JVMPI_Event *ev)
{
    jvmpi->RawMonitorEnter(lock);
    /* Nothing may be written once the file is closed; a late THREAD_END
     * from a VM still tearing down is simply dropped. */
    if (!shut_down) {
        switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
        case JVMPI_EVENT_CLASS_LOAD:
            class_load(ev);
            break;
        case JVMPI_EVENT_CLASS_UNLOAD:
            class_unload(ev);
            break;
        case JVMPI_EVENT_THREAD_START:
            thread_start(ev);
            break;
        case JVMPI_EVENT_THREAD_END:
            thread_end(ev);
            break;
        case JVMPI_EVENT_JVM_INIT_DONE:
            /* Marks where the start-up replay ends and the program begins. */
            fprintf(out, "JVM_INIT_DONE\n");
            break;
        case JVMPI_EVENT_JVM_SHUT_DOWN:
            jvm_shut_down();
            break;
        default:
            break;
        }
        if (!shut_down)
            check_out(0);
    }
    jvmpi->RawMonitorExit(lock);
}

/* ---- start-up ---- */

static void usage(FILE *f)
{
    fprintf(f,
            CT_NAME " usage: java -Xrun" CT_NAME "[:option,...] ...\n"
            "\n"
            "Option          Default   Meaning\n"
            "file=<path>     stdout    write the trace to <path> (no commas in it)\n"
            "methods=y|n     n         list each method with signature and line range\n"
            "unload=y|n      n         trace class unloading too\n"
            "help                      print this message and exit\n"
            "\n"
            "Example: java -Xrun" CT_NAME ":file=classes.txt,methods=y Hello\n");
}

/* Returns 1 for a good y/n option value, storing it in *flag. */
static int yes_no(const char *value, int *flag)
{
    if (strcmp(value, "y") == 0) {
        *flag = 1;
        return 1;
    }
    if (strcmp(value, "n") == 0) {
        *flag = 0;
        return 1;
    }
    return 0;
}

/* Returns 0 and sets *bad to the offending option, or 1 when all is well. */
static int parse_options(char *options, char **bad, int *want_help)
{
    char *opt = options;

    while (opt != NULL && *opt != '\0') {
        char *comma = strchr(opt, ',');
        if (comma != NULL)
            *comma = '\0';

        if (strcmp(opt, "help") == 0) {
            *want_help = 1;
        } else if (strncmp(opt, "file=", 5) == 0 && opt[5] != '\0') {
            opt_file = opt + 5;
        } else if (strncmp(opt, "methods=", 8) == 0 && yes_no(opt + 8, &opt_methods)) {
            /* stored by yes_no */
        } else if (strncmp(opt, "unload=", 7) == 0 && yes_no(opt + 7, &opt_unload)) {
            /* stored by yes_no */
        } else if (*opt != '\0') {
            /* An empty item (a doubled or trailing comma) is let pass, as
             * -Xrun option strings were often built by scripts. */
            *bad = opt;
            return 0;
        }
        opt = comma != NULL ? comma + 1 : NULL;
    }
    return 1;
}

static int enable(jint event, const char *name)
{
    jint rc = jvmpi->EnableEvent(event, NULL);

    if (rc != JVMPI_SUCCESS) {
        fprintf(stderr, CT_NAME ": cannot enable %s (error %d)\n", name, (int)rc);
        return 0;
    }
    return 1;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    static char *options_copy;
    char *bad = NULL;
    int want_help = 0;

    /* The option string belongs to the VM; keep our own copy, since opt_file
     * points into it for the life of the VM. */
    options_copy = copy_string(options != NULL ? options : "");
    if (options_copy == NULL)
        return JNI_ERR;
    if (!parse_options(options_copy, &bad, &want_help)) {
        usage(stderr);
        fprintf(stderr, CT_NAME ": bad option '%s'\n", shown(bad));
        free(options_copy);
        return JNI_ERR;
    }
    if (want_help) {
        /* Asked for: the usage is the whole answer, not a failed start. */
        usage(stdout);
        fflush(stdout);
        exit(0);
    }

    if ((*vm)->GetEnv(vm, (void **)&jvmpi, JVMPI_VERSION_1) < 0 || jvmpi == NULL) {
        fprintf(stderr, CT_NAME ": JVMPI is not available in this VM\n");
        return JNI_ERR;
    }

    if (opt_file != NULL) {
        out = fopen(opt_file, "w");
        if (out == NULL) {
            fprintf(stderr, CT_NAME ": cannot open '%s' for writing\n", shown(opt_file));
            return JNI_ERR;
        }
        out_is_file = 1;
    } else {
        out = stdout;
    }

    lock = jvmpi->RawMonitorCreate("_" CT_NAME "_lock");
    if (lock == NULL) {
        fprintf(stderr, CT_NAME ": cannot create a raw monitor\n");
        return JNI_ERR;
    }

    /* NotifyEvent must be in place before the first EnableEvent: a VM may
     * deliver events (the classes already loaded) as soon as they are on. */
    jvmpi->NotifyEvent = notify_event;

    if (!enable(JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD")
        || !enable(JVMPI_EVENT_THREAD_START, "THREAD_START")
        || !enable(JVMPI_EVENT_THREAD_END, "THREAD_END")
        || !enable(JVMPI_EVENT_JVM_INIT_DONE, "JVM_INIT_DONE")
        || !enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN")
        || (opt_unload && !enable(JVMPI_EVENT_CLASS_UNLOAD, "CLASS_UNLOAD")))
        return JNI_ERR;

    return JNI_OK;
}
