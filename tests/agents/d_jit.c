/*
 * d_jit - COMPILED_METHOD_LOAD / COMPILED_METHOD_UNLOAD, with D_Jit (-Xbatch).
 *
 * Options: out=FILE.  CLASS_LOAD is on from JVM_OnLoad (for the methods'
 * start/end lines); COMPILED_METHOD_LOAD and _UNLOAD are enabled from
 * D_Jit.enableCompiledEvents(), after hotBefore was compiled.  Checked:
 *  - the replay: hotBefore's COMPILED_METHOD_LOAD arrives while EnableEvent
 *    runs, on the enabling thread, without the REQUESTED bit;
 *  - hotAfter, compiled after the enable, gets its COMPILED_METHOD_LOAD;
 *  - every COMPILED_METHOD_LOAD of a D_Jit method: code_addr set, code_size
 *    > 0, a non-empty line table sorted by offset, offsets inside the code,
 *    every line within the method's start..end lines from CLASS_LOAD;
 *  - D_JitVictim.spin (its class loaded by a loader of its own, made hot,
 *    then dropped) is loaded and later unloaded (COMPILED_METHOD_UNLOAD).
 */
#include "c_common.h"

typedef struct {
    const char *cls, *name;
    jmethodID id;
    jint start, end;
    int loads, loads_in_enable, bad_tables, unloads;
} tracked;

static tracked methods[] = {
    {"D_Jit", "hotBefore", NULL, 0, 0, 0, 0, 0, 0},
    {"D_Jit", "hotAfter", NULL, 0, 0, 0, 0, 0, 0},
    {"D_JitVictim", "spin", NULL, 0, 0, 0, 0, 0, 0},
};
#define N_TRACKED ((int)(sizeof methods / sizeof methods[0]))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int in_enable;
static JNIEnv *enabling_env;
static long requested_bit, table_failures;

static tracked *find(jmethodID id)
{
    for (int i = 0; i < N_TRACKED; i++)
        if (id != NULL && methods[i].id == id)
            return &methods[i];
    return NULL;
}

/* 0 when the table is good, else a FAIL line says why. */
static int check_table(const tracked *t, const JVMPI_Event *ev)
{
    const JVMPI_Event *e = ev;
    jint size = e->u.compiled_method_load.code_size, n = e->u.compiled_method_load.lineno_table_size;
    const JVMPI_Lineno *lt = e->u.compiled_method_load.lineno_table;
    if (e->u.compiled_method_load.code_addr == NULL || size <= 0) {
        C_FAIL_SOME(table_failures, "%s: code_addr %p, code_size %d", t->name, e->u.compiled_method_load.code_addr,
                    (int)size);
        return 1;
    }
    if (n <= 0 || lt == NULL) {
        C_FAIL_SOME(table_failures, "%s: empty line table (%d entries)", t->name, (int)n);
        return 1;
    }
    for (jint i = 0; i < n; i++) {
        if (lt[i].offset < 0 || lt[i].offset >= size || (i > 0 && lt[i].offset <= lt[i - 1].offset)) {
            C_FAIL_SOME(table_failures, "%s: line table entry %d has offset %d (code size %d, previous %d)", t->name,
                        (int)i, (int)lt[i].offset, (int)size, i > 0 ? (int)lt[i - 1].offset : -1);
            return 1;
        }
        if (lt[i].lineno < t->start || lt[i].lineno > t->end) {
            C_FAIL_SOME(table_failures, "%s: line table entry %d has line %d, outside the method's lines %d..%d",
                        t->name, (int)i, (int)lt[i].lineno, (int)t->start, (int)t->end);
            return 1;
        }
    }
    return 0;
}

static void notify(JVMPI_Event *ev)
{
    jint type = ev->event_type;
    if ((type & ~JVMPI_REQUESTED_EVENT) == JVMPI_EVENT_COMPILED_METHOD_LOAD && (type & JVMPI_REQUESTED_EVENT))
        __atomic_add_fetch(&requested_bit, 1, __ATOMIC_SEQ_CST);
    switch (type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        pthread_mutex_lock(&lock);
        for (int m = 0; m < ev->u.class_load.num_methods; m++) {
            JVMPI_Method *jm = &ev->u.class_load.methods[m];
            for (int i = 0; i < N_TRACKED; i++) {
                if (c_streq(ev->u.class_load.class_name, methods[i].cls) && c_streq(jm->method_name, methods[i].name)) {
                    methods[i].id = jm->method_id;
                    methods[i].start = jm->start_lineno;
                    methods[i].end = jm->end_lineno;
                    c_log("method %s.%s lines %d..%d", methods[i].cls, methods[i].name, (int)jm->start_lineno,
                          (int)jm->end_lineno);
                }
            }
        }
        pthread_mutex_unlock(&lock);
        break;
    case JVMPI_EVENT_COMPILED_METHOD_LOAD: {
        pthread_mutex_lock(&lock);
        tracked *t = find(ev->u.compiled_method_load.method_id);
        if (t != NULL) {
            t->loads++;
            if (in_enable && ev->env_id == enabling_env)
                t->loads_in_enable++;
            t->bad_tables += check_table(t, ev);
            c_log("COMPILED_METHOD_LOAD %s size %d lines %d%s", t->name, (int)ev->u.compiled_method_load.code_size,
                  (int)ev->u.compiled_method_load.lineno_table_size, in_enable ? " (during EnableEvent)" : "");
        }
        pthread_mutex_unlock(&lock);
        break;
    }
    case JVMPI_EVENT_COMPILED_METHOD_UNLOAD: {
        pthread_mutex_lock(&lock);
        tracked *t = find(ev->u.compiled_method_unload.method_id);
        if (t != NULL) {
            t->unloads++;
            c_log("COMPILED_METHOD_UNLOAD %s", t->name);
        }
        pthread_mutex_unlock(&lock);
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        pthread_mutex_lock(&lock);
        c_check(methods[0].loads_in_enable >= 1,
                "hotBefore, compiled before the enable, was replayed during EnableEvent on its thread (%d loads, %d "
                "during EnableEvent)",
                methods[0].loads, methods[0].loads_in_enable);
        c_check(methods[1].loads >= 1, "hotAfter got a COMPILED_METHOD_LOAD (%d)", methods[1].loads);
        c_check(methods[2].loads >= 1, "D_JitVictim.spin got a COMPILED_METHOD_LOAD (%d)", methods[2].loads);
        c_check(methods[2].unloads >= 1, "D_JitVictim.spin got a COMPILED_METHOD_UNLOAD (%d)", methods[2].unloads);
        for (int i = 0; i < N_TRACKED; i++)
            c_check(methods[i].bad_tables == 0, "%s: every COMPILED_METHOD_LOAD had a good line table (%d bad)",
                    methods[i].name, methods[i].bad_tables);
        c_check(requested_bit == 0, "no COMPILED_METHOD_LOAD had the REQUESTED bit (%ld had)", requested_bit);
        pthread_mutex_unlock(&lock);
        c_summary("d_jit");
        break;
    default:
        break;
    }
}

JNIEXPORT void JNICALL Java_D_1Jit_enableCompiledEvents(JNIEnv *env, jclass cls)
{
    if (!c_ready("enableCompiledEvents"))
        return;
    pthread_mutex_lock(&lock);
    in_enable = 1;
    enabling_env = env;
    pthread_mutex_unlock(&lock);
    /* The lock is not held across EnableEvent: the replay calls notify. */
    c_enable(JVMPI_EVENT_COMPILED_METHOD_LOAD, "COMPILED_METHOD_LOAD");
    pthread_mutex_lock(&lock);
    in_enable = 0;
    pthread_mutex_unlock(&lock);
    c_enable(JVMPI_EVENT_COMPILED_METHOD_UNLOAD, "COMPILED_METHOD_UNLOAD");
}

JNIEXPORT jboolean JNICALL Java_D_1Jit_seen(JNIEnv *env, jclass cls, jstring name)
{
    const char *s = (*env)->GetStringUTFChars(env, name, NULL);
    int r = 0;
    pthread_mutex_lock(&lock);
    if (c_streq(s, "hotAfter"))
        r = methods[1].loads > 0;
    else if (c_streq(s, "spin"))
        r = methods[2].loads > 0;
    else if (c_streq(s, "spin-unloaded"))
        r = methods[2].unloads > 0;
    pthread_mutex_unlock(&lock);
    (*env)->ReleaseStringUTFChars(env, name, s);
    return r ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (c_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    c_pi->NotifyEvent = notify;
    c_enable(JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD");
    c_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    return JNI_OK;
}
