/*
 * h_trace - writes every METHOD_ENTRY2 and METHOD_EXIT of chosen classes,
 * one line each, in the order each thread saw them, so that two runs (the
 * layer's class rewriter against JVM TI's method events) can be compared
 * event by event.
 *
 * Options: out=FILE, classes=PREFIX[|PREFIX...] (class names as CLASS_LOAD
 * gives them, with '.' or '/'), entry=plain (METHOD_ENTRY instead of
 * METHOD_ENTRY2: no receiver IDs to make; the receiver column is then 0),
 * steps=y (INSTRUCTION_START too), allocs=y (OBJECT_ALLOC too, only counted:
 * the arrays among them at JVM_SHUT_DOWN).
 * Lines:
 *   <thread name> E <class>.<method><signature> <0|1: obj_id given>
 *   <thread name> X <class>.<method><signature>
 *   <thread name> I <class>.<method><signature> <offset> <the union's three ints>
 * Trusts the spec: an event's thread must have had its THREAD_START, and
 * an event's method must be in a CLASS_LOAD that came before (for methods
 * of chosen classes, whose names it keeps); otherwise it aborts.
 */
#include "c_common.h"

#define MAX_METHODS 8192
#define MAX_THREADS 256

static struct {
    jmethodID id;
    char *name; /* class.method(signature) */
} methods[MAX_METHODS];
static int n_methods;
static struct {
    JNIEnv *env;
    char *name;
} threads[MAX_THREADS];
static int n_threads;
static long n_arrays; /* OBJECT_ALLOCs of arrays, with allocs=y */
static char *prefixes;
static JVMPI_RawMonitor lock;

static int chosen(const char *cls)
{
    char *copy = strdup(prefixes), *save = NULL;
    int yes = 0;
    for (char *p = strtok_r(copy, "|", &save); p != NULL && !yes; p = strtok_r(NULL, "|", &save)) {
        size_t n = strlen(p), i;
        for (i = 0; i < n && cls[i] != '\0'; i++)
            if (cls[i] != p[i] && !((cls[i] == '/' || cls[i] == '.') && (p[i] == '/' || p[i] == '.')))
                break;
        yes = i == n;
    }
    free(copy);
    return yes;
}

static const char *method_name(jmethodID id)
{
    for (int i = 0; i < n_methods; i++)
        if (methods[i].id == id)
            return methods[i].name;
    return NULL;
}

static const char *thread_name(JNIEnv *env)
{
    for (int i = 0; i < n_threads; i++)
        if (threads[i].env == env)
            return threads[i].name;
    fprintf(stderr, "h_trace: a method event on thread %p, which no THREAD_START named\n", (void *)env);
    abort();
}

/* The branch details as three ints (is_true, a switch's fields): whatever
 * the union holds, both sources must give the same. */
static void step_line(JVMPI_Event *ev, const char *m)
{
    c_log("%s I %s %d %d %d %d", thread_name(ev->env_id), m, (int)ev->u.instruction.offset,
          (int)ev->u.instruction.u.tableswitch_info.key, (int)ev->u.instruction.u.tableswitch_info.low,
          (int)ev->u.instruction.u.tableswitch_info.hi);
}

static void notify(JVMPI_Event *ev)
{
    c_pi->RawMonitorEnter(lock);
    switch (ev->event_type) {
    case JVMPI_EVENT_CLASS_LOAD: {
        const char *cls = ev->u.class_load.class_name;
        if (!chosen(cls))
            break;
        for (int i = 0; i < ev->u.class_load.num_methods && n_methods < MAX_METHODS; i++) {
            JVMPI_Method *m = &ev->u.class_load.methods[i];
            size_t len = strlen(cls) + strlen(m->method_name) + strlen(m->method_signature) + 2;
            char *s = malloc(len);
            snprintf(s, len, "%s.%s%s", cls, m->method_name, m->method_signature);
            for (size_t k = 0; k < strlen(cls); k++)
                if (s[k] == '/')
                    s[k] = '.';
            methods[n_methods].id = m->method_id;
            methods[n_methods++].name = s;
        }
        break;
    }
    case JVMPI_EVENT_THREAD_START:
        if (n_threads < MAX_THREADS) {
            threads[n_threads].env = ev->u.thread_start.thread_env_id;
            threads[n_threads++].name = strdup(ev->u.thread_start.thread_name);
        }
        break;
    case JVMPI_EVENT_METHOD_ENTRY2: {
        const char *m = method_name(ev->u.method_entry2.method_id);
        if (m != NULL)
            c_log("%s E %s %d", thread_name(ev->env_id), m, ev->u.method_entry2.obj_id != NULL);
        break;
    }
    case JVMPI_EVENT_METHOD_ENTRY: {
        const char *m = method_name(ev->u.method.method_id);
        if (m != NULL)
            c_log("%s E %s 0", thread_name(ev->env_id), m);
        break;
    }
    case JVMPI_EVENT_METHOD_EXIT: {
        const char *m = method_name(ev->u.method.method_id);
        if (m != NULL)
            c_log("%s X %s", thread_name(ev->env_id), m);
        break;
    }
    case JVMPI_EVENT_INSTRUCTION_START: {
        const char *m = method_name(ev->u.instruction.method_id);
        if (m != NULL)
            step_line(ev, m);
        break;
    }
    case JVMPI_EVENT_OBJECT_ALLOC:
        n_arrays += ev->u.obj_alloc.is_array != JVMPI_NORMAL_OBJECT;
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        c_log("h_trace: %d methods of chosen classes, %d threads", n_methods, n_threads);
        if (n_arrays > 0)
            c_log("h_trace: %ld arrays allocated", n_arrays);
        break;
    default:
        break;
    }
    c_pi->RawMonitorExit(lock);
}

/* H_Shapes' natives. */
JNIEXPORT jint JNICALL Java_H_1Shapes_twice(JNIEnv *env, jclass cls, jint x) { return 2 * x; }

JNIEXPORT jlong JNICALL Java_H_1Shapes_mix(JNIEnv *env, jobject self, jlong a, jdouble b, jstring s)
{
    return a + (jlong)b + (*env)->GetStringUTFLength(env, s);
}

JNIEXPORT void JNICALL Java_H_1Shapes_raise(JNIEnv *env, jclass cls, jstring message)
{
    const char *m = (*env)->GetStringUTFChars(env, message, NULL);
    jclass iae = (*env)->FindClass(env, "java/lang/IllegalArgumentException");
    if (iae != NULL)
        (*env)->ThrowNew(env, iae, m);
    (*env)->ReleaseStringUTFChars(env, message, m);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (c_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    prefixes = c_opt(options, "classes");
    if (prefixes == NULL)
        prefixes = strdup("H_");
    lock = c_pi->RawMonitorCreate("h_trace");
    c_pi->NotifyEvent = notify;
    c_enable(JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD");
    c_enable(JVMPI_EVENT_THREAD_START, "THREAD_START");
    char *entry = c_opt(options, "entry");
    if (entry != NULL && c_streq(entry, "plain"))
        c_enable(JVMPI_EVENT_METHOD_ENTRY, "METHOD_ENTRY");
    else
        c_enable(JVMPI_EVENT_METHOD_ENTRY2, "METHOD_ENTRY2");
    free(entry);
    char *steps = c_opt(options, "steps");
    if (steps != NULL && c_streq(steps, "y"))
        c_enable(JVMPI_EVENT_INSTRUCTION_START, "INSTRUCTION_START");
    free(steps);
    char *allocs = c_opt(options, "allocs");
    if (allocs != NULL && c_streq(allocs, "y"))
        c_enable(JVMPI_EVENT_OBJECT_ALLOC, "OBJECT_ALLOC");
    free(allocs);
    c_enable(JVMPI_EVENT_METHOD_EXIT, "METHOD_EXIT");
    c_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    return JNI_OK;
}
