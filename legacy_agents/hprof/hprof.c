/*
 * hprof.c - an HPROF work-alike: JVM_OnLoad, the event dispatch and the dump.
 *
 *   java -Xrunhprof[:help]|[option=value, ...] App
 *   java -agentpath:<dir>/libjvmpi.so=hprof:heap=sites,cpu=samples App  (through the layer)
 *
 * See hprof_options.c for the options; the output is described by the
 * preamble written at the top of every ascii profile (write_preamble).
 *
 * Locking: one raw monitor, hprof_lock, guards every table and the output.
 * It is re-entrant, which matters: a handler holding it may ask the VM for a
 * CLASS_LOAD or OBJECT_ALLOC, and the requested event comes back on the same
 * thread into a handler that takes it again.  GC_START takes it and GC_FINISH
 * releases it, so OBJECT_FREE (in between, where nothing may block) finds it
 * held.  It is never held while asking the VM for a GC or a dump: the VM may
 * have to finish delivering a GC window, whose GC_START waits for the lock.
 * Its name starts with '_' so that the VM reports no contention on it.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hprof.h"

/* The VM finds the agent by this name; jvmpi.h does not declare it. */
JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved);

JVMPI_Interface *hprof_jvmpi;
JVMPI_RawMonitor hprof_lock;
volatile int hprof_init_done;
volatile int hprof_shut_down;

static JVMPI_RawMonitor dump_lock;   /* one dump at a time: SIGQUIT vs. exit */
static char *option_text;

void hprof_lock_enter(void) { hprof_jvmpi->RawMonitorEnter(hprof_lock); }
void hprof_lock_exit(void) { hprof_jvmpi->RawMonitorExit(hprof_lock); }

void hprof_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "HPROF ERROR: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
}

const char *hprof_shown(const char *text, char *buf, size_t len)
{
    size_t n = strlen(text);
    if (n <= 120) {
        return text;
    }
    snprintf(buf, len, "%.100s... (%zu bytes in all)", text, n);
    return buf;
}

const char *hprof_date(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(buf, len, "%a %b %e %H:%M:%S %Y", &tm);
    return buf;
}

static void write_preamble(void)
{
    char date[64];
    hprof_printf("JAVA PROFILE 1.0.1, created %s\n\n", hprof_date(date, sizeof date));
    hprof_printf(
        "Written by the HPROF work-alike JVMPI agent (options: \"%s\").\n"
        "\n"
        "How to read this file.  Records refer to each other by number: a thread by\n"
        "its serial (id = n), a stack trace by its serial (TRACE n), objects and\n"
        "classes by their IDs, printed in hex.  The profile is written when the VM\n"
        "exits (doe=y) and again each time the process receives SIGQUIT (kill -3);\n"
        "every such dump repeats the summary sections with the counts so far.\n"
        "\n"
        "THREAD START / THREAD END   a thread began or ended: obj is its Thread\n"
        "        object, id its serial, with its name and thread group.\n"
        "WAIT / WAITED   with monitor=y: a thread began or ended Object.wait on\n"
        "        a monitor, named by its class; timeout and time_waited in ms.\n"
        "TRACE n   a call stack, innermost frame first, at most depth=%d frames:\n"
        "        class.method(SourceFile.java:line).  With thread=y the thread's\n"
        "        serial follows, and the same stack in two threads is two traces.\n"
        "SITES   the allocation sites, a site being a class together with the\n"
        "        trace that allocated it, ranked by the bytes still live there\n"
        "        (after a full GC): self is a site's share of all live bytes, accum\n"
        "        the running total; alloc'ed counts everything ever allocated\n"
        "        there, collected or not.  Sites under cutoff=%g of the live\n"
        "        bytes are left out.  Arrays show as char[] or java.lang.String[].\n"
        "CPU SAMPLES   every interval=%d ms the stack of each runnable thread is\n"
        "        taken; count is how often a trace was seen, method its top frame.\n"
        "CPU TIME (ms)   with cpu=times: CPU time spent in a method itself, not in\n"
        "        its callees, per calling trace; count is the number of calls.\n"
        "MONITOR TIME   with monitor=y: time threads spent waiting to enter a\n"
        "        monitor another thread held, per trace and monitor.\n"
        "HEAP DUMP   every object reachable from the roots: ROOT (a garbage\n"
        "        collection root and its kind), CLS (a class), OBJ (an object:\n"
        "        size, allocation trace, class),\n"
        "        ARR (an array); below each, its non-null references, one a line.\n"
        "MONITOR DUMP   with monitor=y: each thread with its trace and status\n"
        "        (R runnable, MW waiting to enter a monitor, CW in wait, sleep or\n"
        "        park; S suspended, I interrupted), then each monitor in use with\n"
        "        its owner and the threads waiting for it.\n"
        "--------\n\n",
        option_text, hprof_opt.depth, hprof_opt.cutoff, hprof_opt.interval);
}

static void write_control_settings(void)
{
    hprof_record_begin(HPROF_CONTROL_SETTINGS);
    hprof_u4(((hprof_opt.heap & HPROF_HEAP_SITES) ? 0x1u : 0u) | (hprof_opt.cpu == HPROF_CPU_SAMPLES ? 0x2u : 0u));
    hprof_u2((unsigned)hprof_opt.depth);
    hprof_record_end();
}

/* With verbose=y (the default since JDK 5) each dump is told on stderr, in
 * JDK 8's words, part by part as it goes: a dump that takes long shows where. */
static void say(const char *part)
{
    if (hprof_opt.verbose) {
        fputs(part, stderr);
        fflush(stderr);
    }
}

/* The traces a section is about to refer to: those made since the last
 * write, by threads that ran while the section before was written. */
static void write_new_traces(void)
{
    if (hprof_opt.heap || hprof_opt.monitor || !HPROF_PROF_LISTING()) {
        hprof_trace_write_pending();
    }
}

/* Everything so far, to the file or socket.  The sections come in JDK 8's
 * order (MONITOR DUMP, MONITOR TIME, HEAP DUMP, SITES, then CPU), which is
 * where scripts written for its output look for them.  Called without the
 * lock, which is not held across a request to the VM (see the top). */
static void dump_all(void)
{
    hprof_jvmpi->RawMonitorEnter(dump_lock);
    if (hprof_shut_down) {
        hprof_jvmpi->RawMonitorExit(dump_lock);
        return;
    }
    say("Dumping");
    if (hprof_opt.heap & HPROF_HEAP_SITES) {
        /* Live counts are what the last GC left: make that now, so SITES
         * shows what is reachable (the 0x4 "force GC" of ALLOC SITES), and
         * take them now, before the heap dump (see hprof_heap_take_sites). */
        hprof_jvmpi->RunGC();
    }
    hprof_lock_enter();
    if (hprof_opt.heap & HPROF_HEAP_SITES) {
        hprof_heap_take_sites();
    }
    write_new_traces();
    hprof_io_flush();
    hprof_lock_exit();
    if (hprof_opt.monitor) {
        say(" contended monitor usage ...");
        if (!hprof_opt.binary && hprof_jvmpi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL) != JVMPI_SUCCESS) {
            hprof_lock_enter();
            hprof_printf("MONITOR DUMP BEGIN\n    (not available from this VM)\nMONITOR DUMP END\n");
            hprof_lock_exit();
        }
        hprof_lock_enter();
        write_new_traces();
        hprof_monitor_write_time();
        hprof_lock_exit();
    }
    if (hprof_opt.heap & HPROF_HEAP_DUMP) {
        say(" Java heap ...");
        JVMPI_HeapDumpArg arg;
        arg.heap_dump_level = JVMPI_DUMP_LEVEL_2;
        jint rc = hprof_jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg);
        if (rc != JVMPI_SUCCESS) {
            hprof_error("the VM gave no heap dump (RequestEvent returned %d)", (int)rc);
        }
    }
    if (hprof_opt.heap & HPROF_HEAP_SITES) {
        say(" allocation sites ...");
        hprof_lock_enter();
        write_new_traces();
        hprof_heap_write_sites();
        hprof_lock_exit();
    }
    if (hprof_opt.cpu != HPROF_CPU_OFF) {
        say(hprof_opt.cpu == HPROF_CPU_SAMPLES ? " CPU usage by sampling running threads ..."
            : hprof_opt.cpu == HPROF_CPU_TIMES ? " CPU usage by timing methods ..."
                                               : " CPU usage in old prof format ...");
        hprof_lock_enter();
        write_new_traces();
        hprof_cpu_write();
        hprof_lock_exit();
    }
    hprof_lock_enter();
    hprof_io_flush();
    hprof_lock_exit();
    say(" done.\n");
    hprof_jvmpi->RawMonitorExit(dump_lock);
}

static void shut_down(void)
{
    hprof_cpu_stop();
    if (hprof_opt.doe) {
        dump_all();
    }
    hprof_jvmpi->RawMonitorEnter(dump_lock);
    hprof_lock_enter();
    hprof_shut_down = 1;
    hprof_io_close();
    hprof_lock_exit();
    hprof_jvmpi->RawMonitorExit(dump_lock);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        hprof_heap_obj_alloc(ev);
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        hprof_heap_obj_free(ev);
        break;
    case JVMPI_EVENT_GC_START:
        hprof_lock_enter();
        break;
    case JVMPI_EVENT_GC_FINISH:
        hprof_lock_exit();
        break;
    case JVMPI_EVENT_METHOD_ENTRY:
        hprof_cpu_method_entry(ev);
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        hprof_cpu_method_exit(ev);
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_MONITOR_WAIT:
    case JVMPI_EVENT_MONITOR_WAITED:
        hprof_monitor_event(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        hprof_lock_enter();
        hprof_class_load(ev);
        hprof_lock_exit();
        break;
    case JVMPI_EVENT_CLASS_UNLOAD:
        hprof_lock_enter();
        if (!hprof_shut_down) {
            hprof_class_unload(ev);
        }
        hprof_lock_exit();
        break;
    case JVMPI_EVENT_THREAD_START:
        hprof_lock_enter();
        if (!hprof_shut_down) {
            hprof_thread_start(ev);
        }
        hprof_lock_exit();
        break;
    case JVMPI_EVENT_THREAD_END:
        hprof_lock_enter();
        if (!hprof_shut_down) {
            hprof_thread_end(ev);
        }
        hprof_lock_exit();
        hprof_cpu_thread_end(ev->env_id);
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        hprof_lock_enter();
        if (!hprof_shut_down) {
            hprof_dump_heap_event(ev);
        }
        hprof_lock_exit();
        break;
    case JVMPI_EVENT_MONITOR_DUMP:
        hprof_lock_enter();
        if (!hprof_shut_down) {
            hprof_monitor_dump_event(ev);
        }
        hprof_lock_exit();
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        hprof_init_done = 1;
        hprof_cpu_init_done();
        break;
    case JVMPI_EVENT_DATA_DUMP_REQUEST:
        dump_all();
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        shut_down();
        break;
    default:
        break;
    }
}

static int enable(jint event)
{
    jint rc = hprof_jvmpi->EnableEvent(event, NULL);
    if (rc != JVMPI_SUCCESS) {
        hprof_error("the VM cannot send event %d (EnableEvent returned %d)", (int)event, (int)rc);
        return -1;
    }
    return 0;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    int rc = hprof_options_parse(options);
    if (rc == 1) {
        /* Asked for: the usage is the whole answer, and no failed start. */
        hprof_options_usage(stdout);
        fflush(stdout);
        exit(0);
    }
    if (rc != 0) {
        return JNI_ERR;
    }
    option_text = hprof_strdup(options != NULL ? options : "");
    if ((*vm)->GetEnv(vm, (void **)&hprof_jvmpi, JVMPI_VERSION_1_2) != JNI_OK &&
        (*vm)->GetEnv(vm, (void **)&hprof_jvmpi, JVMPI_VERSION_1) != JNI_OK) {
        hprof_error("this VM has no JVMPI");
        return JNI_ERR;
    }
    hprof_lock = hprof_jvmpi->RawMonitorCreate("_hprof_lock");
    dump_lock = hprof_jvmpi->RawMonitorCreate("_hprof_dump");
    hprof_class_init();
    hprof_heap_init();
    if (hprof_io_open() != 0) {
        return JNI_ERR;
    }
    hprof_trace_init();
    if (hprof_opt.binary) {
        write_control_settings();
        hprof_trace_write_pending(); /* the empty trace: LOAD CLASS and START THREAD use it */
    } else if (!HPROF_PROF_LISTING()) {
        write_preamble();
    }
    hprof_io_flush();
    if (hprof_io_failed()) {
        return JNI_ERR; /* a full disk at start: said, and the run refused rather than left unprofiled */
    }

    hprof_jvmpi->NotifyEvent = notify;
    int bad = 0;
    bad |= enable(JVMPI_EVENT_CLASS_LOAD);
    bad |= enable(JVMPI_EVENT_CLASS_UNLOAD);
    bad |= enable(JVMPI_EVENT_THREAD_START);
    bad |= enable(JVMPI_EVENT_THREAD_END);
    bad |= enable(JVMPI_EVENT_JVM_INIT_DONE);
    bad |= enable(JVMPI_EVENT_JVM_SHUT_DOWN);
    bad |= enable(JVMPI_EVENT_DATA_DUMP_REQUEST);
    if (hprof_opt.heap) {
        bad |= enable(JVMPI_EVENT_OBJECT_ALLOC);
        bad |= enable(JVMPI_EVENT_OBJECT_FREE);
        bad |= enable(JVMPI_EVENT_GC_START);
        bad |= enable(JVMPI_EVENT_GC_FINISH);
    }
    if (bad) {
        return JNI_ERR;
    }
    hprof_cpu_start();
    if (hprof_opt.monitor) {
        hprof_monitor_start();
    }
    return JNI_OK;
}
