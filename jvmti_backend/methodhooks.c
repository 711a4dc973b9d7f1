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
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "backend.h"
#include "bootmethods.h"
#include "classfile.h"
#include "inject.h"
#include "tls.h"

#define HOOKS_CLASS "jvmpi/layer/MethodHooks"
/* A native method's new name; a method of its old name wraps it. */
#define NATIVE_PREFIX "jvmpi$"

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
static _Atomic(jclass) hooks_class; /* global ref, once defined */
#define HOOKS_NATIVES 9
#define HOOKS_METHODS (HOOKS_NATIVES + 2)
static _Atomic(jmethodID) hooks_methods[HOOKS_METHODS]; /* its methods: never in a trace or event */
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
static _Atomic bool any_rewritten, any_wrapped;
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

/* Answers kept per jmethodID: HotSpot never frees nor reuses one. */
typedef struct {
    jmethodID method;
    void *value;
    UT_hash_handle hh;
} memo;

typedef struct {
    memo *table;
    pthread_mutex_t lock;
} memo_table;

static bool memo_get(memo_table *t, jmethodID method, void **value)
{
    memo *m = NULL;
    pthread_mutex_lock(&t->lock);
    HASH_FIND_PTR(t->table, &method, m);
    if (m != NULL) {
        *value = m->value;
    }
    pthread_mutex_unlock(&t->lock);
    return m != NULL;
}

/* Two threads may work out the same answer: the first one kept stays. */
static void memo_put(memo_table *t, jmethodID method, void *value)
{
    memo *m = malloc(sizeof *m);
    if (m == NULL) {
        return;
    }
    m->method = method;
    m->value = value;
    pthread_mutex_lock(&t->lock);
    memo *had = NULL;
    HASH_FIND_PTR(t->table, &method, had);
    if (had == NULL) {
        HASH_ADD_PTR(t->table, method, m);
    } else {
        free(m);
    }
    pthread_mutex_unlock(&t->lock);
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

/* ---- constructors' receivers ------------------------------------------------ */

/* A constructor cannot pass its receiver before super() has run (the
 * verifier allows no use of an uninitialized this), so the hook reads it
 * from the constructor's frame.  JVM TI's GetLocalInstance would need
 * can_access_local_variables, which the VM grants only in the OnLoad phase
 * and which slows compiled code for the whole run; the JDK's stack walker
 * of live frames reads it without any capability. */
static jobject walker, caller_frame;        /* global refs: the walker, the Function */
static jmethodID walk_method, locals_method;
static _Atomic bool receivers_ready;

static _Atomic bool receivers_by_locals; /* JDK 8: GetLocalInstance, no walker */

static __attribute__((noinline)) jobject ctor_receiver(JNIEnv *env)
{
    if (!atomic_load_explicit(&receivers_ready, memory_order_acquire)) {
        return NULL;
    }
    if (atomic_load_explicit(&receivers_by_locals, memory_order_relaxed)) {
        jobject self = NULL;
        /* depth 0 is the hook's native frame, 1 the constructor */
        if (!JVMTI_OK(JVMTI_TRY(bk.jvmti, GetLocalInstance, NULL, 1, &self))) {
            return NULL;
        }
        return self;
    }
    jobject self = NULL;
    bk_alloc_quiet(true); /* the walk allocates: the layer's doing, not the program's */
    jobject frame = (*env)->CallObjectMethod(env, walker, walk_method, caller_frame);
    if (frame != NULL && !(*env)->ExceptionCheck(env)) {
        jobjectArray locals = (*env)->CallObjectMethod(env, frame, locals_method);
        if (locals != NULL && !(*env)->ExceptionCheck(env) && (*env)->GetArrayLength(env, locals) > 0) {
            self = (*env)->GetObjectArrayElement(env, locals, 0);
        }
        if (locals != NULL) {
            (*env)->DeleteLocalRef(env, locals);
        }
    }
    if (frame != NULL) {
        (*env)->DeleteLocalRef(env, frame);
    }
    bk_alloc_quiet(false);
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        static _Atomic bool said;
        if (!atomic_exchange(&said, true)) {
            LOG_ERROR("METHOD_ENTRY2: a constructor's receiver could not be read from its frame; it is given as NULL");
        }
        self = NULL;
    }
    return self;
}

/* Once the hooks class is defined; a first walk here loads what walking
 * loads, so that no hook does. */
static bool prepare_receivers(JNIEnv *env)
{
    if (atomic_load(&receivers_ready)) {
        return true;
    }
    if (!bk.live_frames) {
        if (!bk.caps_receiver) {
            LOG_ERROR("METHOD_ENTRY2: this JDK has no stack walker of live frames, and the agent did not enable "
                      "METHOD_ENTRY2 in JVM_OnLoad, the only time the local variable access that replaces it can "
                      "be taken: constructors' receivers are given as NULL");
            return false;
        }
        atomic_store(&receivers_by_locals, true);
        atomic_store_explicit(&receivers_ready, true, memory_order_release);
        return true;
    }
    in_hook = 1; /* the walk runs rewritten code of the JDK: no method events for it */
    bk_alloc_quiet(true);
    jclass live = (*env)->FindClass(env, "java/lang/LiveStackFrame");
    jclass stack_walker = live != NULL ? (*env)->FindClass(env, "java/lang/StackWalker") : NULL;
    jmethodID get = live != NULL ? (*env)->GetStaticMethodID(env, live, "getStackWalker", "()Ljava/lang/StackWalker;") : NULL;
    jmethodID init = get != NULL ? (*env)->GetMethodID(env, hooks_class, "<init>", "()V") : NULL;
    walk_method = stack_walker != NULL
                      ? (*env)->GetMethodID(env, stack_walker, "walk", "(Ljava/util/function/Function;)Ljava/lang/Object;")
                      : NULL;
    locals_method = live != NULL ? (*env)->GetMethodID(env, live, "getLocals", "()[Ljava/lang/Object;") : NULL;
    jobject w = get != NULL && init != NULL ? (*env)->CallStaticObjectMethod(env, live, get) : NULL;
    jobject f = w != NULL ? (*env)->NewObject(env, hooks_class, init) : NULL;
    bool ok = f != NULL && walk_method != NULL && locals_method != NULL && !(*env)->ExceptionCheck(env);
    if (ok) {
        walker = bk_new_global_ref(env, w);
        caller_frame = bk_new_global_ref(env, f);
        ok = walker != NULL && caller_frame != NULL;
    }
    (*env)->ExceptionClear(env);
    jobject refs[] = {live, stack_walker, w, f};
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        if (refs[i] != NULL) {
            (*env)->DeleteLocalRef(env, refs[i]);
        }
    }
    bk_alloc_quiet(false);
    if (ok) {
        atomic_store_explicit(&receivers_ready, true, memory_order_release);
        jobject none = ctor_receiver(env);
        if (none != NULL) {
            (*env)->DeleteLocalRef(env, none);
        }
    } else {
        LOG_ERROR("METHOD_ENTRY2: this JDK's stack walker of live frames was not found; constructors' receivers "
                  "are given as NULL");
    }
    in_hook = 0;
    return ok;
}

HOT void entry_of(JNIEnv *env, hook_method *m, jmethodID method, jobject self)
{
    jobjectID receiver = NULL;
    if (atomic_load_explicit(&receiver_on, memory_order_relaxed)) {
        jobject obj = self;
        if (m->ctor) {
            obj = ctor_receiver(env);
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

bool bk_methodhooks_hidden_name(const char *method_name)
{
    return strncmp(method_name, NATIVE_PREFIX, sizeof NATIVE_PREFIX - 1) == 0;
}

/* The JDK's natives (boot and platform loaders) are left alone: some serve
 * the binding of natives itself (NativeLibrary.findEntry0), so a wrapper
 * of theirs would need itself to be bound; JVM TI's events report them
 * only with methods=jvmti.  The program's natives are wrapped. */
static jobject platform_loader; /* global ref, taken with the hooks class */

static bool wraps_natives_of(JNIEnv *env, jobject loader)
{
    return loader != NULL && platform_loader != NULL && !(*env)->IsSameObject(env, loader, platform_loader);
}

/* JDK 8 has no platform loader: its JDK classes outside the boot class path
 * come from the extension loader, the parent of the launcher's loader. */
static jobject jdk8_extension_loader(JNIEnv *env)
{
    jclass launcher = (*env)->FindClass(env, "sun/misc/Launcher");
    jmethodID get = launcher != NULL ? (*env)->GetStaticMethodID(env, launcher, "getLauncher", "()Lsun/misc/Launcher;") : NULL;
    jmethodID loader_of = launcher != NULL ? (*env)->GetMethodID(env, launcher, "getClassLoader", "()Ljava/lang/ClassLoader;") : NULL;
    jclass cl = (*env)->FindClass(env, "java/lang/ClassLoader");
    jmethodID parent_of = cl != NULL ? (*env)->GetMethodID(env, cl, "getParent", "()Ljava/lang/ClassLoader;") : NULL;
    jobject l = get != NULL && loader_of != NULL && parent_of != NULL ? (*env)->CallStaticObjectMethod(env, launcher, get) : NULL;
    jobject app = l != NULL ? (*env)->CallObjectMethod(env, l, loader_of) : NULL;
    jobject ext = app != NULL ? (*env)->CallObjectMethod(env, app, parent_of) : NULL;
    (*env)->ExceptionClear(env);
    jobject refs[] = {launcher, cl, l, app};
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        if (refs[i] != NULL) {
            (*env)->DeleteLocalRef(env, refs[i]);
        }
    }
    return ext;
}

static jobject find_platform_loader(JNIEnv *env)
{
    jclass cl = (*env)->FindClass(env, "java/lang/ClassLoader");
    jmethodID get = cl != NULL ? (*env)->GetStaticMethodID(env, cl, "getPlatformClassLoader", "()Ljava/lang/ClassLoader;")
                               : NULL;
    jobject loader = get != NULL ? (*env)->CallStaticObjectMethod(env, cl, get) : NULL;
    (*env)->ExceptionClear(env);
    if (get == NULL) {
        loader = jdk8_extension_loader(env);
    }
    jobject global = loader != NULL ? bk_new_global_ref(env, loader) : NULL;
    if (loader != NULL) {
        (*env)->DeleteLocalRef(env, loader);
    }
    if (cl != NULL) {
        (*env)->DeleteLocalRef(env, cl);
    }
    return global;
}

/* Names of the classes given wrappers: a class is retransformed with its
 * wrappers if it has a renamed native, which an unprepared class cannot
 * be asked; then its name having been wrapped decides. */
typedef struct {
    UT_hash_handle hh;
    char name[];
} wrapped_name;

static wrapped_name *wrapped_names;
static pthread_mutex_t wrapped_lock = PTHREAD_MUTEX_INITIALIZER;

static void remember_wrapped(const char *name)
{
    size_t n = strlen(name);
    wrapped_name *w = malloc(sizeof *w + n + 1);
    if (w == NULL) {
        return;
    }
    memcpy(w->name, name, n + 1);
    pthread_mutex_lock(&wrapped_lock);
    wrapped_name *had = NULL;
    HASH_FIND_STR(wrapped_names, name, had);
    if (had == NULL) {
        HASH_ADD_STR(wrapped_names, name, w);
    } else {
        free(w);
    }
    pthread_mutex_unlock(&wrapped_lock);
}

static bool has_wrappers(const char *name, jclass klass)
{
    if (!atomic_load(&any_wrapped) || name == NULL) {
        return false;
    }
    wrapped_name *w = NULL;
    {
        pthread_mutex_lock(&wrapped_lock);
        HASH_FIND_STR(wrapped_names, name, w);
        pthread_mutex_unlock(&wrapped_lock);
    }
    if (w == NULL) {
        return false;
    }
    jmethodID renamed = NULL;
    if (!bootmethods_class_method(klass, NULL, NULL, bk_methodhooks_hidden_name, &renamed)) {
        return true; /* not prepared: a class of this name was wrapped */
    }
    return renamed != NULL;
}

/* Renamed natives, by jmethodID: asked for every native frame of a trace. */
static memo_table natives_seen = {NULL, PTHREAD_MUTEX_INITIALIZER};

bool bk_methodhooks_is_renamed_native(jmethodID method)
{
    if (!atomic_load_explicit(&any_wrapped, memory_order_relaxed) || method == NULL) {
        return false;
    }
    void *renamed = NULL;
    if (!memo_get(&natives_seen, method, &renamed)) {
        char *mname = NULL;
        renamed = JVMTI_OK(JVMTI_TRY(bk.jvmti, GetMethodName, method, &mname, NULL, NULL)) &&
                          bk_methodhooks_hidden_name(mname)
                      ? method
                      : NULL;
        bk_deallocate(mname);
        memo_put(&natives_seen, method, renamed);
    }
    return renamed != NULL;
}

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
     * wraps_natives_of); a class that was must keep its wrappers when
     * retransformed, even back to its original with the events off (a
     * retransformation adds and removes no method), and one that was not
     * must not get any.  Its hooks then do nothing. */
    bool kept = redefined != NULL && has_wrappers(name, redefined);
    bool object_alone = atomic_load(&allocs_on) && name != NULL && strcmp(name, "java/lang/Object") == 0;
    bool methods = atomic_load(&rewriting) || kept || object_alone;
    bool arrays = atomic_load(&arraying);
    if (!methods && !arrays) {
        bk_callback_exit();
        return;
    }
    bool wrap = methods && (kept || (redefined == NULL && wraps_natives_of(env, loader)));
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
    unstepped_ctx where = {shown, wraps_natives_of(env, loader)};
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
                remember_wrapped(name);
                atomic_store(&any_wrapped, true);
            }
        }
    } else if (changed < 0) {
        bk_refusals_class(shown, len >= 8 ? (unsigned)(data[6] << 8 | data[7]) : 0, err);
    }
    free(out);
    classfile_free(cf);
    bk_callback_exit();
}

/* A public final class with nine public static natives, which is also a
 * Function picking the second frame of a stack walk (the first is the
 * hook's own): a constructor's receiver is read from its frame through
 * that walk (ctor_receiver), which needs no JVM TI capability. */
static size_t hooks_class_bytes(unsigned char *b)
{
    enum { UTF8 = 1, CLASS = 7, METHODREF = 10, IMETHODREF = 11, NAMETYPE = 12 };
    static const struct {
        unsigned char tag;
        const char *text;
        unsigned short a, b;
    } pool[] = {
        {0, NULL, 0, 0},
        {UTF8, HOOKS_CLASS, 0, 0},                                   /* 1 */
        {CLASS, NULL, 1, 0},                                         /* 2 */
        {UTF8, "java/lang/Object", 0, 0},                            /* 3 */
        {CLASS, NULL, 3, 0},                                         /* 4 */
        {UTF8, "enter", 0, 0},                                       /* 5 */
        {UTF8, "(I)V", 0, 0},                                        /* 6 */
        {UTF8, "enterThis", 0, 0},                                   /* 7 */
        {UTF8, "(Ljava/lang/Object;I)V", 0, 0},                      /* 8 */
        {UTF8, "exit", 0, 0},                                        /* 9 */
        {UTF8, "java/util/function/Function", 0, 0},                 /* 10 */
        {CLASS, NULL, 10, 0},                                        /* 11 */
        {UTF8, "<init>", 0, 0},                                      /* 12 */
        {UTF8, "()V", 0, 0},                                         /* 13 */
        {UTF8, "apply", 0, 0},                                       /* 14 */
        {UTF8, "(Ljava/lang/Object;)Ljava/lang/Object;", 0, 0},      /* 15 */
        {UTF8, "Code", 0, 0},                                        /* 16 */
        {UTF8, "java/util/stream/Stream", 0, 0},                     /* 17 */
        {CLASS, NULL, 17, 0},                                        /* 18 */
        {UTF8, "skip", 0, 0},                                        /* 19 */
        {UTF8, "(J)Ljava/util/stream/Stream;", 0, 0},                /* 20 */
        {NAMETYPE, NULL, 19, 20},                                    /* 21 */
        {IMETHODREF, NULL, 18, 21},                                  /* 22 */
        {UTF8, "findFirst", 0, 0},                                   /* 23 */
        {UTF8, "()Ljava/util/Optional;", 0, 0},                      /* 24 */
        {NAMETYPE, NULL, 23, 24},                                    /* 25 */
        {IMETHODREF, NULL, 18, 25},                                  /* 26 */
        {UTF8, "java/util/Optional", 0, 0},                          /* 27 */
        {CLASS, NULL, 27, 0},                                        /* 28 */
        {UTF8, "orElse", 0, 0},                                      /* 29 */
        {NAMETYPE, NULL, 29, 15},                                    /* 30 */
        {METHODREF, NULL, 28, 30},                                   /* 31 */
        {NAMETYPE, NULL, 12, 13},                                    /* 32 */
        {METHODREF, NULL, 4, 32},                                    /* 33 */
        {UTF8, "step", 0, 0},                                        /* 34 */
        {UTF8, "(II)V", 0, 0},                                       /* 35 */
        {UTF8, "exitInit", 0, 0},                                    /* 36 */
        {UTF8, "leaf", 0, 0},                                        /* 37 */
        {UTF8, "leafThis", 0, 0},                                    /* 38 */
        {UTF8, "newArray", 0, 0},                                    /* 39 */
        {UTF8, "(Ljava/lang/Object;)V", 0, 0},                       /* 40 */
        {UTF8, "newMultiArray", 0, 0},                               /* 41 */
    };
    /* <init>: aload_0, invokespecial Object.<init>, return */
    static const unsigned char init_code[] = {0x2a, 0xb7, 0, 33, 0xb1};
    /* apply(s): ((Stream) s).skip(1L).findFirst().orElse(null) */
    static const unsigned char apply_code[] = {0x2b, 0xc0, 0, 18, 0x0a, 0xb9, 0, 22, 3, 0, 0xb9, 0, 26, 1, 0,
                                               0x01, 0xb6, 0, 31, 0xb0};
    size_t n = 0;
#define U1(v) (b[n++] = (unsigned char)(v))
#define U2(v) (U1((v) >> 8), U1(v))
#define U4(v) (U2((v) >> 16), U2(v))
    U2(0xCAFE), U2(0xBABE), U2(0), U2(52);
    U2(sizeof pool / sizeof pool[0]);
    for (size_t i = 1; i < sizeof pool / sizeof pool[0]; i++) {
        U1(pool[i].tag);
        if (pool[i].tag == UTF8) {
            size_t len = strlen(pool[i].text);
            U2(len);
            memcpy(b + n, pool[i].text, len);
            n += len;
        } else {
            U2(pool[i].a);
            if (pool[i].tag != CLASS) {
                U2(pool[i].b);
            }
        }
    }
    U2(0x0031), U2(2), U2(4); /* public final super; this, super */
    U2(1), U2(11);            /* implements Function */
    U2(0);                    /* no fields */
    U2(HOOKS_NATIVES + 2);
    static const int natives[HOOKS_NATIVES][2] = {{5, 6},  {7, 8},  {9, 6},   {34, 35}, {36, 8},
                                                  {37, 6}, {38, 8}, {39, 40}, {41, 8}};
    for (int i = 0; i < HOOKS_NATIVES; i++) {
        U2(0x0109), U2(natives[i][0]), U2(natives[i][1]), U2(0); /* public static native */
    }
    static const struct {
        int name, desc, stack, locals;
        const unsigned char *code;
        size_t len;
    } coded[2] = {{12, 13, 1, 1, init_code, sizeof init_code}, {14, 15, 3, 2, apply_code, sizeof apply_code}};
    for (int i = 0; i < 2; i++) {
        U2(0x0001), U2(coded[i].name), U2(coded[i].desc), U2(1); /* public, one attribute */
        U2(16), U4(12 + coded[i].len);
        U2(coded[i].stack), U2(coded[i].locals), U4(coded[i].len);
        memcpy(b + n, coded[i].code, coded[i].len);
        n += coded[i].len;
        U2(0), U2(0); /* no exception table, no attributes */
    }
    U2(0);
#undef U4
#undef U2
#undef U1
    return n;
}

static bool define_hooks_class(JNIEnv *env)
{
    unsigned char bytes[2048];
    size_t len = hooks_class_bytes(bytes);
    jclass cls = (*env)->DefineClass(env, HOOKS_CLASS, NULL, (const jbyte *)bytes, (jsize)len);
    if (cls == NULL) {
        (*env)->ExceptionDescribe(env);
        (*env)->ExceptionClear(env);
        LOG_ERROR("method events: the layer's class %s could not be defined", HOOKS_CLASS);
        return false;
    }
    static const JNINativeMethod natives[] = {
        {"enter", "(I)V", (void *)hook_enter},
        {"enterThis", "(Ljava/lang/Object;I)V", (void *)hook_enter_this},
        {"exit", "(I)V", (void *)hook_exit},
        {"step", "(II)V", (void *)hook_step},
        {"exitInit", "(Ljava/lang/Object;I)V", (void *)hook_exit_init},
        {"leaf", "(I)V", (void *)hook_leaf},
        {"leafThis", "(Ljava/lang/Object;I)V", (void *)hook_leaf_this},
        {"newArray", "(Ljava/lang/Object;)V", (void *)hook_new_array},
        {"newMultiArray", "(Ljava/lang/Object;I)V", (void *)hook_new_multi_array},
    };
    if ((*env)->RegisterNatives(env, cls, natives, HOOKS_NATIVES) != 0) {
        (*env)->ExceptionClear(env);
        LOG_ERROR("method events: the natives of %s could not be registered", HOOKS_CLASS);
        return false;
    }
    for (int i = 0; i < HOOKS_NATIVES; i++) {
        atomic_store(&hooks_methods[i], (*env)->GetStaticMethodID(env, cls, natives[i].name, natives[i].signature));
    }
    atomic_store(&hooks_methods[HOOKS_NATIVES], (*env)->GetMethodID(env, cls, "<init>", "()V"));
    atomic_store(&hooks_methods[HOOKS_NATIVES + 1],
                 (*env)->GetMethodID(env, cls, "apply", "(Ljava/lang/Object;)Ljava/lang/Object;"));
    hooks_class = bk_new_global_ref(env, cls);
    (*env)->DeleteLocalRef(env, cls);
    platform_loader = find_platform_loader(env);
    return hooks_class != NULL;
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
        if (!(*env)->IsSameObject(env, classes[i], hooks_class) &&
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

/* The classes made to agree with the switches.  Called with switch_lock held. */
static bool apply_locked(void)
{
    bool ok = true;
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
    if (ok && env != NULL && atomic_load(&receiver_on) && hooks_class != NULL) {
        prepare_receivers(env);
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

bool bk_methodhooks_is_hooks_method(jmethodID method)
{
    for (int i = 0; i < HOOKS_METHODS; i++) {
        if (method == atomic_load_explicit(&hooks_methods[i], memory_order_relaxed) && method != NULL) {
            return true;
        }
    }
    return false;
}

bool bk_methodhooks_is_hooks_class(JNIEnv *env, jclass klass)
{
    return hooks_class != NULL && (*env)->IsSameObject(env, klass, hooks_class);
}
