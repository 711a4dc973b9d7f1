/*
 * methodhooks.c - METHOD_ENTRY, METHOD_ENTRY2 and METHOD_EXIT with the JIT
 * on: classes are rewritten as they load (ClassFileLoadHook) to call the
 * layer at each method's entry and exits (rewriter/inject.h), and those
 * loaded before are retransformed.  JVM TI's MethodEntry/MethodExit, the
 * other source (methods=jvmti), put every thread in the interpreter.
 *
 * The calls go to static natives of one class the layer defines in
 * the boot loader's unnamed module, whose natives it registers
 * (RegisterNatives): no symbol is looked up, no library loaded.  Code of
 * every module can call it: the JVM makes a module whose classes an agent
 * transformed read the boot loader's unnamed module (the java.lang.instrument
 * specification says so, and HotSpot does it for JVM TI agents alike), and
 * the unnamed module exports everything.  In a named module (java.lang) the
 * VM would print a warning for natives registered from outside it.  Each
 * call passes the method's number; its jmethodID is found once, from the
 * calling frame.
 *
 * The rewriting happens in an environment of its own, the only one with
 * can_retransform_classes: a retransformation calls the hooks of
 * retransformation-capable environments alone, so JVMPI's CLASS_LOAD_HOOK
 * (the main environment's) sees each class once, as the VM loaded it, and
 * before the rewriting.  Off means off: when the last method event is
 * disabled the rewritten classes are retransformed back.
 *
 * Beside this file: the hooks' class itself (hooksclass.c), constructors'
 * receivers read from their frames (receivers.c), the program's natives
 * wrapped (nativewrap.c).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bootmethods.h"
#include "classfile.h"
#include "hooksclass.h"
#include "inject.h"
#include "memo.h"
#include "nativewrap.h"
#include "receivers.h"
#include "tls.h"

/* Method numbers, in chunks that never move once made. */
#define CHUNK_BITS 12
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CHUNKS 16384u /* 64 million methods rewritten in one run */

typedef struct {
    _Atomic(jmethodID) method; /* found on the first call */
    bool ctor;                 /* <init>: its receiver is read from the frame */
    /* With instruction hooks: the method's code as the class file had it,
     * which INSTRUCTION_START's offsets and branch outcomes are about. */
    unsigned char *code;
    jint code_len;
    const bootmethods_name *boot; /* a boot class's: found by name, not by frame */
} hook_method;

static hook_method *_Atomic chunks[MAX_CHUNKS];
static pthread_mutex_t chunk_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint32_t next_id = 1;

static jvmtiEnv *hooks_env;
static _Atomic bool rewriting;  /* new classes get the hooks */
static _Atomic bool entry_on, exit_on, receiver_on, step_on;
static _Atomic bool stepping; /* new classes get the instruction hooks too */
/* java.lang.Object's constructor passes its receiver to a hook at its exits
 * (inject.h), so that constructors' receivers are objects the frame walk
 * can read (ctor_receiver): what METHOD_ENTRY2 needs. */
static _Atomic bool receiving;
/* OBJECT_ALLOC without SampledObjectAlloc: java.lang.Object's constructor
 * passes its receiver for that too, and every array allocation its array. */
static _Atomic bool allocs_on;
static _Atomic bool arraying; /* new classes get the array hooks */
static _Atomic bool any_rewritten;
static pthread_mutex_t switch_lock = PTHREAD_MUTEX_INITIALIZER;
/* A hook calls no Java, but what it calls may (an agent's handler through
 * JNI): those frames are the layer's doing, not the program's. */
static TLS_FAST int in_hook;

/* ---- method numbers -------------------------------------------------------- */

/* Numbers for count methods, or 0 when they are used up. */
static uint32_t ids_take(uint32_t count)
{
    uint32_t first = atomic_fetch_add(&next_id, count);
    if ((uint64_t)first + count > (uint64_t)MAX_CHUNKS * CHUNK_SIZE) {
        return 0;
    }
    {
        pthread_mutex_lock(&chunk_lock);
        bool ok = true;
        for (uint32_t c = first >> CHUNK_BITS; ok && c <= (first + count) >> CHUNK_BITS && c < MAX_CHUNKS; c++) {
            if (atomic_load(&chunks[c]) == NULL) {
                hook_method *chunk = calloc(CHUNK_SIZE, sizeof *chunk);
                ok = chunk != NULL;
                atomic_store(&chunks[c], chunk);
            }
        }
        pthread_mutex_unlock(&chunk_lock);
        if (!ok) {
            return 0;
        }
    }
    return first;
}

static inline hook_method *id_slot(jint id)
{
    uint32_t u = (uint32_t)id;
    hook_method *chunk = u >> CHUNK_BITS < MAX_CHUNKS ? atomic_load_explicit(&chunks[u >> CHUNK_BITS], memory_order_acquire) : NULL;
    return chunk != NULL ? &chunk[u & (CHUNK_SIZE - 1)] : NULL;
}

/* jmethodID -> its hook_method, for the original code of a stepped method */
static memo_table stepped = {NULL, PTHREAD_MUTEX_INITIALIZER};

/* The method of the frame that called the hook (depth 1: the hook's own
 * native frame is 0), or for a boot class's the method of that name
 * (bootmethods.h says why).  A virtual thread's code between its unmount
 * and its next mount (JDK 21 and later) has no frames JVM TI will show,
 * and JVM TI posts no events for it either: a method first called there
 * in a class not of the boot loader is not known yet, and its calls there
 * are not reported. */
static __attribute__((noinline)) jmethodID method_first(JNIEnv *env, hook_method *m)
{
    jmethodID method = NULL;
    jlocation where;
    if (m->boot != NULL) {
        method = bootmethods_find(env, m->boot);
    }
    if (method == NULL && !JVMTI_OK(JVMTI_TRY(hooks_env, GetFrameLocation, NULL, 1, &method, &where))) {
        return NULL;
    }
    if (m->code != NULL) {
        memo_put(&stepped, method, m);
    }
    atomic_store_explicit(&m->method, method, memory_order_relaxed);
    return method;
}

/* The hooks run at every Java call: they and what they call here are inline. */
#define HOT static inline __attribute__((always_inline))

HOT jmethodID method_of(JNIEnv *env, hook_method *m)
{
    jmethodID method = atomic_load_explicit(&m->method, memory_order_relaxed);
    return method != NULL ? method : method_first(env, m);
}

/* ---- the natives ------------------------------------------------------------ */

/* The method a hook call is about, with the callback guard taken and this
 * thread marked as inside a hook; NULL when nothing is to be reported. */
HOT hook_method *hook_begin(jint id)
{
    hook_method *m = id_slot(id);
    if (m == NULL || in_hook || bk_own_call || !bk_callback_enter()) {
        return NULL;
    }
    in_hook = 1;
    return m;
}

HOT void hook_end(void)
{
    in_hook = 0;
    bk_callback_exit();
}

HOT void entry_of(JNIEnv *env, hook_method *m, jmethodID method, jobject self)
{
    jobjectID receiver = NULL;
    if (atomic_load_explicit(&receiver_on, memory_order_relaxed)) {
        jobject obj = self;
        if (m->ctor) {
            obj = receivers_of_ctor(env);
        }
        receiver = obj != NULL ? seam_id_from_object(env, obj) : NULL;
        if (obj != NULL && obj != self) {
            (*env)->DeleteLocalRef(env, obj);
        }
    }
    layer_method_entry(env, method, receiver);
}

HOT void entry(JNIEnv *env, jint id, jobject self)
{
    hook_method *m = hook_begin(id);
    if (m == NULL) {
        return;
    }
    jmethodID method = method_of(env, m);
    if (method != NULL) {
        entry_of(env, m, method, self);
    }
    hook_end();
}

static void JNICALL hook_enter(JNIEnv *env, jclass cls, jint id)
{
    if (atomic_load_explicit(&entry_on, memory_order_relaxed)) {
        entry(env, id, NULL);
    }
}

static void JNICALL hook_enter_this(JNIEnv *env, jclass cls, jobject self, jint id)
{
    if (atomic_load_explicit(&entry_on, memory_order_relaxed)) {
        entry(env, id, self);
    }
}

static void JNICALL hook_exit(JNIEnv *env, jclass cls, jint id)
{
    if (!atomic_load_explicit(&exit_on, memory_order_relaxed)) {
        return;
    }
    hook_method *m = hook_begin(id);
    if (m == NULL) {
        return;
    }
    jmethodID method = method_of(env, m);
    if (method != NULL) {
        layer_method_exit(env, method);
    }
    hook_end();
}

/* A leaf (rewriter/leaf.h): nothing of its body can come between its
 * entry and its exit, so both are sent from one native call. */
HOT void leaf(JNIEnv *env, jint id, jobject self)
{
    if (!atomic_load_explicit(&entry_on, memory_order_relaxed) &&
        !atomic_load_explicit(&exit_on, memory_order_relaxed)) {
        return;
    }
    hook_method *m = hook_begin(id);
    if (m == NULL) {
        return;
    }
    jmethodID method = method_of(env, m);
    if (method != NULL && atomic_load_explicit(&entry_on, memory_order_relaxed)) {
        entry_of(env, m, method, self);
    }
    /* read again: the entry's handler may have switched the exit off or on */
    if (method != NULL && atomic_load_explicit(&exit_on, memory_order_relaxed)) {
        layer_method_exit(env, method);
    }
    hook_end();
}

static void JNICALL hook_leaf(JNIEnv *env, jclass cls, jint id) { leaf(env, id, NULL); }

static void JNICALL hook_leaf_this(JNIEnv *env, jclass cls, jobject self, jint id) { leaf(env, id, self); }

/* java.lang.Object's constructor's exits: the receiver is only passed so
 * that it escapes. */
static void JNICALL hook_exit_init(JNIEnv *env, jclass cls, jobject self, jint id)
{
    /* Where the VM cannot sample every allocation (JDK 8), every object a
     * constructor made passes here once. */
    if (atomic_load_explicit(&allocs_on, memory_order_relaxed) && !in_hook && !bk_own_call) {
        bk_heap_constructed(env, self);
    }
    hook_exit(env, cls, id);
}

/* An array made by bytecode (rewriter/arrayhooks.h), as it is made: no
 * other event can have named it yet. */
static void JNICALL hook_new_array(JNIEnv *env, jclass cls, jobject array)
{
    if (atomic_load_explicit(&allocs_on, memory_order_relaxed) && !in_hook && !bk_own_call) {
        bk_heap_constructed(env, array);
    }
}

/* The arrays of the inner dimensions are the outer one's elements, made
 * with it: reported after it, depth first, as the VM made them. */
static void new_arrays(JNIEnv *env, jobject array, jint dims)
{
    bk_heap_constructed(env, array);
    jsize n = dims > 1 && array != NULL ? (*env)->GetArrayLength(env, array) : 0;
    for (jsize i = 0; i < n; i++) {
        jobject inner = (*env)->GetObjectArrayElement(env, array, i);
        new_arrays(env, inner, dims - 1);
        if (inner != NULL) {
            (*env)->DeleteLocalRef(env, inner);
        }
    }
}

static void JNICALL hook_new_multi_array(JNIEnv *env, jclass cls, jobject array, jint dims)
{
    if (atomic_load_explicit(&allocs_on, memory_order_relaxed) && !in_hook && !bk_own_call &&
        (*env)->EnsureLocalCapacity(env, dims) == 0) {
        new_arrays(env, array, dims);
    }
}

static void JNICALL hook_step(JNIEnv *env, jclass cls, jint id, jint offset)
{
    if (!atomic_load_explicit(&step_on, memory_order_relaxed)) {
        return;
    }
    hook_method *m = hook_begin(id);
    if (m == NULL) {
        return;
    }
    jmethodID method = method_of(env, m);
    if (method != NULL) {
        layer_single_step(env, method, offset & 0xffff);
    }
    hook_end();
}

unsigned char *bk_methodhooks_original_code(jmethodID method, jint *len)
{
    void *found = NULL;
    if (!atomic_load_explicit(&any_rewritten, memory_order_relaxed) || !memo_get(&stepped, method, &found) ||
        found == NULL) {
        return NULL;
    }
    hook_method *m = found;
    unsigned char *copy = malloc((size_t)m->code_len);
    if (copy != NULL) {
        memcpy(copy, m->code, (size_t)m->code_len);
        *len = m->code_len;
    }
    return copy;
}

/* ---- the rewriting ------------------------------------------------------------ */

typedef struct {
    const char *class_name;
    bool program; /* of a class loader other than the boot and platform ones */
} unstepped_ctx;

/* A program's method: one warning line each.  The JDK's (its SystemModules
 * tables, run once before VM init) would give the same lines in every run:
 * log=info. */
static void unstepped(void *ctx, const char *name, const char *desc, const char *why)
{
    const unstepped_ctx *c = ctx;
    if (c->program) {
        LOG_WARN("INSTRUCTION_START: no events for the instructions of %s.%s%s: %s", c->class_name, name, desc, why);
    } else {
        LOG_INFO("INSTRUCTION_START: no events for the instructions of %s.%s%s: %s", c->class_name, name, desc, why);
    }
}

static void keep_original_code(const classfile *cf, uint32_t first)
{
    for (uint16_t i = 0; i < cf->method_count; i++) {
        const classfile_code *c = classfile_code_of(&cf->methods[i]);
        hook_method *m = c != NULL ? id_slot((jint)(first + i)) : NULL;
        if (m != NULL && c->code_length > 0 && (m->code = malloc(c->code_length)) != NULL) {
            memcpy(m->code, c->code, c->code_length);
            m->code_len = (jint)c->code_length;
        }
    }
}

static void JNICALL on_class_file_load_hook(jvmtiEnv *jvmti, JNIEnv *env, jclass redefined, jobject loader,
                                            const char *name, jobject domain, jint len, const unsigned char *data,
                                            jint *new_len, unsigned char **new_data)
{
    if ((name != NULL && strcmp(name, HOOKS_CLASS) == 0) || !bk_callback_enter()) {
        return;
    }
    /* Natives are wrapped as a class first loads (one of the program's: see
     * nativewrap_loader_wraps); a class that was must keep its wrappers when
     * retransformed, even back to its original with the events off (a
     * retransformation adds and removes no method), and one that was not
     * must not get any.  Its hooks then do nothing. */
    bool kept = redefined != NULL && nativewrap_kept(name, redefined);
    bool object_alone = atomic_load(&allocs_on) && name != NULL && strcmp(name, "java/lang/Object") == 0;
    bool methods = atomic_load(&rewriting) || kept || object_alone;
    bool arrays = atomic_load(&arraying);
    if (!methods && !arrays) {
        bk_callback_exit();
        return;
    }
    bool wrap = methods && (kept || (redefined == NULL && nativewrap_loader_wraps(env, loader)));
    const char *shown = name != NULL ? name : "(a class without a name)";
    char err[300] = "";
    classfile *cf = classfile_parse(data, (size_t)len, err, sizeof err);
    uint32_t first = cf != NULL && cf->method_count > 0
                         ? ids_take((uint32_t)cf->method_count + (wrap ? inject_native_count(cf) : 0))
                         : 0;
    if (cf != NULL && cf->method_count > 0 && first == 0) {
        snprintf(err, sizeof err, "no method numbers left (or out of memory)");
    }
    uint8_t *out = NULL;
    size_t outlen = 0;
    int changed = -1;
    bool steps = atomic_load(&stepping);
    if (first != 0 && steps) {
        keep_original_code(cf, first);
    }
    unstepped_ctx where = {shown, nativewrap_loader_wraps(env, loader)};
    if (first != 0) {
        inject_hooks hooks = {.hooks_class = HOOKS_CLASS,
                              .enter = methods ? "enter" : NULL,
                              .enter_this = "enterThis",
                              .exit = "exit",
                              .exit_init = atomic_load(&receiving) ? "exitInit" : NULL,
                              .step = steps ? "step" : NULL,
                              .leaf = "leaf",
                              .leaf_this = "leafThis",
                              .unstepped = unstepped,
                              .ctx = &where,
                              .first_id = first,
                              .native_prefix = wrap ? NATIVE_PREFIX : NULL,
                              .new_array = arrays ? "newArray" : NULL,
                              .new_multi_array = arrays ? "newMultiArray" : NULL};
        changed = inject_class(cf, &hooks, err, sizeof err);
        if (changed > 0 && classfile_write(cf, &out, &outlen, err, sizeof err) != 0) {
            changed = -1;
        }
    } else if (cf != NULL && cf->method_count == 0) {
        changed = 0;
    }
    if (changed > 0) {
        for (uint16_t i = 0; i < cf->method_count; i++) {
            const char *mname = classfile_utf8(cf, cf->methods[i].name_index);
            id_slot((jint)(first + i))->ctor = mname != NULL && strcmp(mname, "<init>") == 0;
        }
        bootmethods_name *names = loader == NULL && name != NULL ? bootmethods_keep(name, cf) : NULL;
        for (uint16_t i = 0; names != NULL && i < cf->method_count; i++) {
            id_slot((jint)(first + i))->boot = &names[i];
        }
        unsigned char *copy = NULL;
        if (outlen <= INT32_MAX && JVMTI_OK(JVMTI_CALL(jvmti, Allocate, (jlong)outlen, &copy))) {
            memcpy(copy, out, outlen);
            *new_data = copy;
            *new_len = (jint)outlen;
            atomic_store(&any_rewritten, true);
            if (wrap && inject_native_count(cf) > 0 && name != NULL) {
                nativewrap_remember(name);
            }
        }
    } else if (changed < 0) {
        bk_refusals_class(shown, len >= 8 ? (unsigned)(data[6] << 8 | data[7]) : 0, err);
    }
    free(out);
    classfile_free(cf);
    bk_callback_exit();
}

static bool define_hooks_class(JNIEnv *env)
{
    static const hooksclass_natives natives = {
        .enter = (void *)hook_enter,
        .enter_this = (void *)hook_enter_this,
        .exit = (void *)hook_exit,
        .step = (void *)hook_step,
        .exit_init = (void *)hook_exit_init,
        .leaf = (void *)hook_leaf,
        .leaf_this = (void *)hook_leaf_this,
        .new_array = (void *)hook_new_array,
        .new_multi_array = (void *)hook_new_multi_array,
    };
    if (!hooksclass_define(env, &natives)) {
        return false;
    }
    nativewrap_take_loader(env);
    return true;
}

static bool make_env(void)
{
    if ((*bk.vm)->GetEnv(bk.vm, (void **)&hooks_env, JVMTI_VERSION_1_2) != JNI_OK) {
        LOG_ERROR("method events: no JVM TI environment for the class rewriter");
        return false;
    }
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_retransform_classes = 1;
    caps.can_generate_all_class_hook_events = 1;
    caps.can_set_native_method_prefix = 1;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ClassFileLoadHook = on_class_file_load_hook;
    return JVMTI_OK(JVMTI_CALL(hooks_env, AddCapabilities, &caps)) &&
           JVMTI_OK(JVMTI_CALL(hooks_env, SetNativeMethodPrefix, NATIVE_PREFIX)) &&
           JVMTI_OK(JVMTI_CALL(hooks_env, SetEventCallbacks, &cb, (jint)sizeof cb)) &&
           bk_set_event(hooks_env, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, true);
}

/* Every loaded class that can be: rewritten or back to its original,
 * as rewriting says.  A batch the VM refuses is retried class by class, so
 * one class it will not retransform costs only that class. */
static void retransform_loaded(JNIEnv *env)
{
    jint n = 0;
    jclass *classes = NULL;
    if (!JVMTI_OK(JVMTI_CALL(hooks_env, GetLoadedClasses, &n, &classes))) {
        return;
    }
    jclass *batch = malloc(sizeof *batch * (size_t)(n + 1));
    jint k = 0;
    for (jint i = 0; batch != NULL && i < n; i++) {
        jboolean modifiable = JNI_FALSE;
        if (!(*env)->IsSameObject(env, classes[i], hooksclass_class()) &&
            JVMTI_OK(JVMTI_CALL(hooks_env, IsModifiableClass, classes[i], &modifiable)) && modifiable) {
            batch[k++] = classes[i];
        }
    }
    enum { BATCH = 256 };
    int refused = 0;
    for (jint at = 0; at < k; at += BATCH) {
        jint count = k - at < BATCH ? k - at : BATCH;
        if (JVMTI_OK(JVMTI_TRY(hooks_env, RetransformClasses, count, batch + at))) {
            continue;
        }
        for (jint i = at; i < at + count; i++) {
            jvmtiError e = JVMTI_TRY(hooks_env, RetransformClasses, 1, batch + i);
            if (!JVMTI_OK(e)) {
                char *sig = NULL;
                JVMTI_TRY(hooks_env, GetClassSignature, batch[i], &sig, NULL);
                char *ename = NULL;
                JVMTI_TRY(hooks_env, GetErrorName, e, &ename);
                LOG_DEBUG("method events: %s not retransformed: %s", sig ? sig : "?", ename ? ename : "?");
                bk_deallocate(sig);
                bk_deallocate(ename);
                refused++;
            }
        }
    }
    if (refused > 0) {
        if (atomic_load(&rewriting) || atomic_load(&arraying)) {
            LOG_WARN("%s: the VM would not retransform %d of the %d classes loaded before %s were enabled: their "
                     "methods report no %s (run with log=debug for them)",
                     atomic_load(&rewriting) ? "method events" : "OBJECT_ALLOC", refused, (int)k,
                     atomic_load(&rewriting) ? "method events" : "OBJECT_ALLOC",
                     atomic_load(&rewriting) ? "METHOD_ENTRY or METHOD_EXIT" : "OBJECT_ALLOC for the arrays they make");
        } else {
            LOG_WARN("method events: the VM would not retransform %d of the %d loaded classes back when method "
                     "events were disabled: their calls still go through the layer's hooks, which do nothing "
                     "(run with log=debug for them)",
                     refused, (int)k);
        }
    }
    LOG_DEBUG("method events: %d loaded classes retransformed", (int)k);
    for (jint i = 0; i < n; i++) {
        (*env)->DeleteLocalRef(env, classes[i]);
    }
    free(batch);
    bk_deallocate(classes);
}

/* java.lang.Object alone, when only whether its constructor passes its
 * receiver changes. */
static void retransform_object(JNIEnv *env)
{
    jclass object = (*env)->FindClass(env, "java/lang/Object");
    if (object == NULL) {
        (*env)->ExceptionClear(env);
        return;
    }
    if (!JVMTI_OK(JVMTI_CALL(hooks_env, RetransformClasses, 1, &object))) {
        LOG_WARN("METHOD_ENTRY2: java.lang.Object could not be retransformed: receivers of constructors the JIT "
                 "compiled may be given as NULL");
    }
    (*env)->DeleteLocalRef(env, object);
}

/* Set while several switches are made at once (the ones an agent made
 * during start-up): the classes are retransformed once, at the end. */
static bool held; /* under switch_lock */

/* Once VM death has begun no class runs long enough to gain from losing its
 * hooks (HPROF switches method events off in its JVM_SHUT_DOWN handler), and
 * retransforming every loaded class then can cost more than the run itself:
 * JDK 8's VM empties its compiled code's caches once for each class.  The
 * hooks read the switches at each call, so they fall silent all the same. */
static _Atomic bool dying;

void bk_methodhooks_vm_death(void)
{
    atomic_store(&dying, true);
}

/* The classes made to agree with the switches.  Called with switch_lock held. */
static bool apply_locked(void)
{
    bool ok = true;
    if (atomic_load(&dying)) {
        return true;
    }
    bool want = atomic_load(&entry_on) || atomic_load(&exit_on) || atomic_load(&step_on);
    bool steps = atomic_load(&step_on);
    bool allocs = atomic_load(&allocs_on);
    /* The array hooks stay once in: an agent that switches OBJECT_ALLOC
     * off and on (HPROF around a dump, say) would otherwise cost a
     * retransformation of every class at each switch.  Off, each array
     * allocation pays one native call that returns at once. */
    bool arrays = allocs || atomic_load(&arraying);
    bool receives = (want && atomic_load(&receiver_on)) || allocs;
    JNIEnv *env = seam_current_env();
    if (allocs && hooks_env == NULL && env != NULL && !(make_env() && define_hooks_class(env))) {
        return false;
    }
    if ((want != atomic_load(&rewriting) || steps != atomic_load(&stepping) || arrays != atomic_load(&arraying)) &&
        env != NULL) {
        if (want && hooks_env == NULL) {
            ok = make_env() && define_hooks_class(env);
        }
        if (ok) {
            atomic_store(&rewriting, want);
            atomic_store(&stepping, steps);
            atomic_store(&receiving, receives);
            atomic_store(&arraying, arrays);
            if (want || arrays || atomic_load(&any_rewritten)) {
                retransform_loaded(env);
            }
        }
    } else if (receives != atomic_load(&receiving) && env != NULL && hooks_env != NULL) {
        atomic_store(&receiving, receives);
        retransform_object(env);
    }
    if (ok && env != NULL && atomic_load(&receiver_on) && hooksclass_class() != NULL) {
        in_hook = 1; /* the walk runs rewritten code of the JDK: no method events for it */
        receivers_prepare(env, hooksclass_class());
        in_hook = 0;
    }
    return ok;
}

bool bk_methodhooks_set(seam_source source, bool on)
{
    bool ok = true;
    pthread_mutex_lock(&switch_lock);
    if (source == SEAM_SRC_METHOD_ENTRY) {
        atomic_store(&entry_on, on);
    } else if (source == SEAM_SRC_METHOD_EXIT) {
        atomic_store(&exit_on, on);
    } else if (source == SEAM_SRC_METHOD_RECEIVER) {
        atomic_store(&receiver_on, on);
    } else if (source == SEAM_SRC_SINGLE_STEP) {
        atomic_store(&step_on, on);
    }
    if (!held) {
        ok = apply_locked();
    }
    pthread_mutex_unlock(&switch_lock);
    return ok;
}

bool bk_methodhooks_allocs(bool on)
{
    pthread_mutex_lock(&switch_lock);
    atomic_store(&allocs_on, on);
    bool ok = held || apply_locked();
    pthread_mutex_unlock(&switch_lock);
    return ok;
}

bool bk_methodhooks_hold(bool hold)
{
    pthread_mutex_lock(&switch_lock);
    held = hold;
    bool ok = hold || apply_locked();
    pthread_mutex_unlock(&switch_lock);
    return ok;
}

/* ---- obsolete methods --------------------------------------------------------- */

/* A retransformation leaves the frames running then, and code being compiled
 * then, on the old version of each method: an obsolete method, whose
 * jmethodID is one no CLASS_LOAD listed.  Frames show the current version
 * instead (same class, name and signature). */
/* obsolete method -> its current version */
static memo_table obsoletes = {NULL, PTHREAD_MUTEX_INITIALIZER};

bool bk_methodhooks_obsolete(jmethodID method)
{
    jboolean obsolete = JNI_FALSE;
    return atomic_load_explicit(&any_rewritten, memory_order_relaxed) && method != NULL &&
           JVMTI_OK(JVMTI_TRY(bk.jvmti, IsMethodObsolete, method, &obsolete)) && obsolete;
}

static jmethodID find_current(jmethodID method)
{
    jclass cls = NULL;
    char *name = NULL, *sig = NULL;
    jmethodID current = NULL;
    JNIEnv *env = seam_current_env();
    if (env != NULL && JVMTI_OK(JVMTI_TRY(bk.jvmti, GetMethodDeclaringClass, method, &cls)) &&
        JVMTI_OK(JVMTI_TRY(bk.jvmti, GetMethodName, method, &name, &sig, NULL))) {
        bootmethods_class_method(cls, name, sig, NULL, &current);
    }
    bk_deallocate(name);
    bk_deallocate(sig);
    if (cls != NULL) {
        (*env)->DeleteLocalRef(env, cls);
    }
    return current;
}

jmethodID bk_methodhooks_current(jmethodID method)
{
    if (!bk_methodhooks_obsolete(method)) {
        return method;
    }
    void *current = NULL;
    if (!memo_get(&obsoletes, method, &current)) {
        current = find_current(method);
        memo_put(&obsoletes, method, current);
    }
    return current;
}
