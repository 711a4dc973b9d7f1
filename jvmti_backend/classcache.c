/*
 * classcache.c - the class of each allocated object, without a JVM TI call
 * per allocation.
 *
 * SampledObjectAlloc gives the object's class as a JNI local reference, and
 * OBJECT_ALLOC needs that class's ID: its tag in the class-tag environment.
 * GetTag costs a VM transition plus that tag map's lock, which all
 * allocating threads then contend for; measured on AllocHeavy, about 7% of
 * the run (bench/README.md).  So each thread remembers the classes it
 * allocated from, keyed by the address of the class's mirror (the
 * java.lang.Class object), which HotSpot keeps in the local reference's slot.
 *
 * An address names one object only as long as nothing moves or frees
 * objects.  Serial, Parallel and G1 do both only in pauses, and JVM TI posts
 * GarbageCollectionStart and Finish around every one of them, so entries
 * carry the number of the pause interval they were made in and are void
 * after the next pause.  ZGC and Shenandoah move objects while the program
 * runs: with them the cache stays off.  It is also off when the VM does not
 * show the layout it relies on (checked at VM init), and with
 * JVMPI_LAYER_OPTIONS=classcache=off.  One hit in CHECK_EVERY is compared
 * with GetTag; a disagreement turns the cache off for good, with a warning.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "tls.h"

#define CHECK_EVERY 4096

static _Atomic bool enabled;
/* For the closing log line; hits are counted per thread and added here at each check. */
static _Atomic unsigned long hits, misses, checks;

/* The mirror address a local reference holds.  The slot belongs to this
 * thread, but a collector may rewrite it concurrently while the thread is in
 * native code, hence the atomic load; acquire, so that the pause count read
 * after it is not read before it. */
static uintptr_t mirror_of(jclass local)
{
    return __atomic_load_n((const uintptr_t *)local, __ATOMIC_ACQUIRE);
}

/* Fibonacci hashing: mirrors lie close together, and their low bits say little. */
static unsigned slot_of(uintptr_t mirror)
{
    return (unsigned)(((uint64_t)mirror * UINT64_C(0x9E3779B97F4A7C15)) >> 32) % TLS_CLASS_SLOTS;
}

bool bk_classcache_find(tls_caches *tc, jclass klass, bk_classcache_key *key, jlong *class_tag)
{
    key->mirror = 0;
    if (!atomic_load_explicit(&enabled, memory_order_relaxed) || tc == NULL) {
        return false;
    }
    /* A sequence lock over the pauses: the address read is valid for
     * interval `started` only if no pause was running or began meanwhile. */
    unsigned long started = atomic_load_explicit(&bk.pauses_started, memory_order_acquire);
    if (started != atomic_load_explicit(&bk.pauses_finished, memory_order_acquire)) {
        return false;
    }
    uintptr_t mirror = mirror_of(klass);
    if (atomic_load_explicit(&bk.pauses_started, memory_order_acquire) != started) {
        return false;
    }
    key->mirror = mirror;
    key->interval = started;
    key->tc = tc;
    unsigned s = slot_of(mirror);
    if (tc->classes[s].mirror != mirror || tc->classes[s].interval != started) {
        atomic_fetch_add_explicit(&misses, 1, memory_order_relaxed);
        return false;
    }
    *class_tag = tc->classes[s].tag;
    if (++tc->class_hits == CHECK_EVERY) {
        tc->class_hits = 0;
        jlong truth = 0;
        JVMTI_CALL(bk.jvmti_cls, GetTag, klass, &truth);
        atomic_fetch_add_explicit(&checks, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&hits, CHECK_EVERY, memory_order_relaxed);
        if (truth != *class_tag) {
            if (atomic_exchange(&enabled, false)) {
                LOG_WARN("class cache: an entry disagreed with JVM TI (tag %lld, expected %lld); "
                         "the cache is off for the rest of the run",
                         (long long)*class_tag, (long long)truth);
            }
            key->mirror = 0;
            return false;
        }
    }
    return true;
}

void bk_classcache_put(const bk_classcache_key *key, jlong class_tag)
{
    tls_caches *tc = key->tc;
    if (key->mirror == 0 || tc == NULL) {
        return;
    }
    unsigned s = slot_of(key->mirror);
    tc->classes[s].mirror = key->mirror;
    tc->classes[s].interval = key->interval;
    tc->classes[s].tag = class_tag;
}

/* Whether the VM was started with a collector that moves objects outside
 * pauses.  The VM's arguments, as jdk.internal.misc.VM has them, include
 * those from JAVA_TOOL_OPTIONS and flag files; the last setting wins. */
static const char *concurrent_collector(JNIEnv *env, bool *known)
{
    static const char *const names[] = {"UseZGC", "UseShenandoahGC"};
    bool on[2] = {false, false};
    jclass vm = (*env)->FindClass(env, "jdk/internal/misc/VM");
    jmethodID get = vm != NULL ? (*env)->GetStaticMethodID(env, vm, "getRuntimeArguments", "()[Ljava/lang/String;")
                               : NULL;
    jobjectArray args = get != NULL ? (*env)->CallStaticObjectMethod(env, vm, get) : NULL;
    if ((*env)->ExceptionCheck(env) || args == NULL) {
        (*env)->ExceptionClear(env);
        if (vm != NULL) {
            (*env)->DeleteLocalRef(env, vm);
        }
        *known = false;
        return NULL;
    }
    jsize n = (*env)->GetArrayLength(env, args);
    for (jsize i = 0; i < n; i++) {
        jstring s = (*env)->GetObjectArrayElement(env, args, i);
        const char *arg = s != NULL ? (*env)->GetStringUTFChars(env, s, NULL) : NULL;
        for (int k = 0; arg != NULL && k < 2; k++) {
            const char *at = strstr(arg, names[k]);
            if (at != NULL && at > arg && (at[-1] == '+' || at[-1] == '-') && at[strlen(names[k])] == '\0') {
                on[k] = at[-1] == '+';
            }
        }
        if (arg != NULL) {
            (*env)->ReleaseStringUTFChars(env, s, arg);
        }
        if (s != NULL) {
            (*env)->DeleteLocalRef(env, s);
        }
    }
    (*env)->DeleteLocalRef(env, args);
    (*env)->DeleteLocalRef(env, vm);
    *known = true;
    return on[0] ? "ZGC" : on[1] ? "Shenandoah" : NULL;
}

/* Whether local references hold the referent's address in their slot: two
 * references to one class must read the same, to two classes differently. */
static bool local_refs_hold_addresses(JNIEnv *env)
{
    jclass a = (*env)->FindClass(env, "java/lang/String");
    jclass b = a != NULL ? (*env)->NewLocalRef(env, a) : NULL;
    jclass c = (*env)->FindClass(env, "java/lang/Object");
    bool ok = a != NULL && b != NULL && c != NULL && a != b;
    if (ok) {
        uintptr_t ma = mirror_of(a), mb = mirror_of(b), mc = mirror_of(c);
        ok = ma != 0 && ma == mb && ma != mc && mc != 0 && (ma & 7) == 0 && ma != (uintptr_t)a;
    }
    (*env)->ExceptionClear(env);
    for (jclass *r = (jclass[]){a, b, c}, *end = r + 3; r < end; r++) {
        if (*r != NULL) {
            (*env)->DeleteLocalRef(env, *r);
        }
    }
    return ok;
}

void bk_classcache_vm_init(JNIEnv *env, bool allowed)
{
    char why_not[160] = "";
    bool known = false;
    const char *collector = allowed ? concurrent_collector(env, &known) : NULL;
    if (!allowed) {
        snprintf(why_not, sizeof why_not, "JVMPI_LAYER_OPTIONS has classcache=off");
    } else if (!known) {
        snprintf(why_not, sizeof why_not, "the VM's arguments cannot be read, so the collector is not known");
    } else if (collector != NULL) {
        snprintf(why_not, sizeof why_not, "%s moves objects while the program runs", collector);
    } else if (!local_refs_hold_addresses(env)) {
        snprintf(why_not, sizeof why_not, "this VM's local references do not hold addresses");
    }
    if (why_not[0] != '\0') {
        LOG_INFO("class cache off: %s; every allocation asks JVM TI for its class's tag", why_not);
    } else {
        LOG_INFO("class cache on: the collector moves objects only in pauses");
    }
    bk_classcache_set_enabled(why_not[0] == '\0');
}

void bk_classcache_set_enabled(bool on) { atomic_store(&enabled, on); }

void bk_classcache_vm_death(void)
{
    LOG_INFO("class cache: about %lu hits, %lu misses, %lu hits checked against JVM TI, %lu pauses%s",
             atomic_load(&hits), atomic_load(&misses), atomic_load(&checks), atomic_load(&bk.pauses_finished),
             atomic_load(&enabled) ? "" : " (off)");
}
