/*
 * methods.c - the JVM TI side of method events, compiled code and
 * instruction steps: MethodEntry/MethodExit, CompiledMethodLoad/Unload (and
 * their replay through GenerateEvents), SingleStep, and the capabilities
 * they need.
 *
 * Capabilities: HotSpot (17 and 25) grants method entry/exit, single step
 * and local variable access only in the OnLoad phase, and holding them
 * slows compiled code for the whole run.  By default none is taken: the
 * class rewriter (methodhooks.c) gives method entry and exit, receivers
 * and instruction steps without them.  With methods=jvmti they are taken
 * in the OnLoad phase for what the agent enabled there, or all for an -Xrun
 * agent (bk_methods_onload_caps).  Compiled method events and bytecodes are
 * granted in the live phase too: they are added when first needed.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "backend.h"
#include "hooksclass.h"
#include "nativewrap.h"

#include <jvmticmlr.h> /* needs jni.h first */

#define ACC_STATIC 0x0008

static _Atomic bool want_receiver;
/* A replay asked for before the live phase, done after VM init. */
static _Atomic bool replay_pending;

void bk_methods_onload_caps(jvmtiCapabilities *caps, const seam_caps_wanted *w)
{
    caps->can_generate_method_entry_events = w->methods;
    caps->can_generate_method_exit_events = w->methods;
    caps->can_generate_single_step_events = w->instructions;
    /* Only for METHOD_ENTRY2's receiver with JVM TI's events
     * (GetLocalInstance); the rewriter needs none of the four. */
    caps->can_access_local_variables = w->receiver;
}

/* Granted in the live phase too: taken when first needed. */
static bool add_live_caps(bool compiled, bool bytecodes)
{
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_compiled_method_load_events = compiled;
    caps.can_get_bytecodes = bytecodes;
    return bk_need_capabilities(&caps);
}

bool bk_methods_source_set(seam_source source, bool on)
{
    bool rewrite = !layer_methods_by_jvmti();
    bool method = source == SEAM_SRC_METHOD_ENTRY || source == SEAM_SRC_METHOD_EXIT;
    bool step = source == SEAM_SRC_SINGLE_STEP;
    if (on && !rewrite && ((method && !bk.caps_methods) || (step && !bk.caps_steps))) {
        bk_caps_missing(source == SEAM_SRC_SINGLE_STEP ? "INSTRUCTION_START" : "METHOD_ENTRY/ENTRY2/EXIT");
        return false;
    }
    if (on && !rewrite && source == SEAM_SRC_METHOD_RECEIVER && !bk.caps_receiver) {
        bk_caps_missing("METHOD_ENTRY2");
        return false;
    }
    if (rewrite && step) {
        bool ok = bk_methodhooks_set(source, on);
        if (ok) {
            layer_single_step_switched(on);
        }
        return ok;
    }
    if (rewrite && (method || source == SEAM_SRC_METHOD_RECEIVER)) {
        return bk_methodhooks_set(source, on);
    }
    switch (source) {
    case SEAM_SRC_METHOD_ENTRY:
        return bk_set_event(bk.jvmti, JVMTI_EVENT_METHOD_ENTRY, on);
    case SEAM_SRC_METHOD_RECEIVER:
        atomic_store(&want_receiver, on);
        return true;
    case SEAM_SRC_METHOD_EXIT:
        return bk_set_event(bk.jvmti, JVMTI_EVENT_METHOD_EXIT, on);
    case SEAM_SRC_COMPILED_LOAD:
        return (!on || add_live_caps(true, false)) && bk_set_event(bk.jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD, on);
    case SEAM_SRC_COMPILED_UNLOAD:
        return (!on || add_live_caps(true, false)) && bk_set_event(bk.jvmti, JVMTI_EVENT_COMPILED_METHOD_UNLOAD, on);
    case SEAM_SRC_SINGLE_STEP: {
        if (on && !add_live_caps(false, true)) {
            return false;
        }
        bool ok = bk_set_event(bk.jvmti, JVMTI_EVENT_SINGLE_STEP, on);
        if (ok) {
            layer_single_step_switched(on);
        }
        return ok;
    }
    default:
        return false;
    }
}

/* ---- method entry and exit ------------------------------------------------ */

static jobjectID receiver_id(JNIEnv *env, jthread thread, jmethodID method)
{
    jint mods = 0;
    /* HotSpot 8: a local read in MethodEntry upsets the running program
     * (class loading fails with an empty native library stack). */
    if (!bk.live_frames) {
        return NULL;
    }
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetMethodModifiers, method, &mods)) || (mods & ACC_STATIC)) {
        return NULL;
    }
    jobject obj = NULL;
    if (!JVMTI_OK(JVMTI_TRY(bk.jvmti, GetLocalInstance, thread, 0, &obj)) || obj == NULL) {
        return NULL;
    }
    jobjectID id = seam_id_from_object(env, obj);
    (*env)->DeleteLocalRef(env, obj);
    return id;
}

void JNICALL bk_on_method_entry(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jmethodID method)
{
    if (bk_own_call) {
        return;
    }
    BEGIN_CALLBACK();
    jobjectID receiver = NULL;
    if (atomic_load_explicit(&want_receiver, memory_order_relaxed)) {
        receiver = receiver_id(env, thread, method);
    }
    layer_method_entry(env, method, receiver);
    END_CALLBACK();
}

void JNICALL bk_on_method_exit(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jmethodID method,
                               jboolean by_exception, jvalue value)
{
    if (bk_own_call) {
        return;
    }
    BEGIN_CALLBACK();
    layer_method_exit(env, method);
    END_CALLBACK();
}

/* ---- instructions ----------------------------------------------------------- */

void JNICALL bk_on_single_step(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jmethodID method, jlocation location)
{
    BEGIN_CALLBACK();
    layer_single_step(env, method, (jint)location);
    END_CALLBACK();
}

unsigned char *seam_method_bytecodes(jmethodID method, jint *len)
{
    jint n = 0;
    unsigned char *code = bk_methodhooks_original_code(method, len);
    if (code != NULL) {
        return code; /* the VM's is the rewritten code */
    }
    *len = 0;
    if (!add_live_caps(false, true) || !JVMTI_OK(JVMTI_TRY(bk.jvmti, GetBytecodes, method, &n, &code))) {
        return NULL;
    }
    unsigned char *copy = n > 0 ? malloc((size_t)n) : NULL;
    if (copy != NULL) {
        memcpy(copy, code, (size_t)n);
        *len = n;
    }
    bk_deallocate(code);
    return copy;
}

/* ---- compiled code -------------------------------------------------------------- */

typedef struct {
    jint offset;
    jint bci;
} pc_bci;

static int by_offset(const void *a, const void *b)
{
    const pc_bci *x = a, *y = b;
    return x->offset != y->offset ? (x->offset < y->offset ? -1 : 1) : 0;
}

/* The source line of a bytecode index: the entry with the greatest start
 * at or before it (the table is not sorted). */
static jint line_of(const jvmtiLineNumberEntry *t, jint n, jint bci)
{
    jint best = -1;
    jlocation best_start = -1;
    for (jint i = 0; i < n; i++) {
        if (t[i].start_location <= bci && t[i].start_location > best_start) {
            best_start = t[i].start_location;
            best = t[i].line_number;
        }
    }
    return best;
}

/* pc -> bytecode index of the compiled method itself (not of what was
 * inlined into it): the map HotSpot passes already walks each pc's scope
 * out to the compiled method; without a map the inline records say the same
 * in their outermost frame. */
static pc_bci *pc_map(jmethodID method, const void *code_addr, jint code_size, jint map_length,
                      const jvmtiAddrLocationMap *map, const void *compile_info, jint *count)
{
    const char *base = code_addr;
    jint cap = map_length, n = 0;
    if (map_length <= 0 || map == NULL) {
        cap = 0;
        for (const jvmtiCompiledMethodLoadRecordHeader *h = compile_info; h != NULL; h = h->next) {
            if (h->kind == JVMTI_CMLR_INLINE_INFO) {
                cap += ((const jvmtiCompiledMethodLoadInlineRecord *)h)->numpcs;
            }
        }
    }
    pc_bci *out = cap > 0 ? malloc(sizeof *out * (size_t)cap) : NULL;
    if (out == NULL) {
        *count = 0;
        return NULL;
    }
    if (map_length > 0 && map != NULL) {
        for (jint i = 0; i < map_length; i++) {
            long off = (const char *)map[i].start_address - base;
            if (off >= 0 && off < code_size && map[i].location >= 0) {
                out[n++] = (pc_bci){(jint)off, (jint)map[i].location};
            }
        }
    } else {
        for (const jvmtiCompiledMethodLoadRecordHeader *h = compile_info; h != NULL; h = h->next) {
            if (h->kind != JVMTI_CMLR_INLINE_INFO) {
                continue;
            }
            const jvmtiCompiledMethodLoadInlineRecord *r = (const void *)h;
            for (jint i = 0; i < r->numpcs; i++) {
                const PCStackInfo *pc = &r->pcinfo[i];
                long off = (const char *)pc->pc - base;
                jint top = pc->numstackframes - 1;
                if (top >= 0 && pc->methods[top] == method && pc->bcis[top] >= 0 && off >= 0 && off < code_size) {
                    out[n++] = (pc_bci){(jint)off, pc->bcis[top]};
                }
            }
        }
    }
    qsort(out, (size_t)n, sizeof *out, by_offset);
    *count = n;
    return out;
}

/* JVMPI wants code offset -> source line; runs of one line are folded into
 * their first offset, which keeps "last entry at or before a pc" lookups
 * exact. */
static JVMPI_Lineno *line_table(jmethodID method, const void *code_addr, jint code_size, jint map_length,
                                const jvmtiAddrLocationMap *map, const void *compile_info, jint *count)
{
    *count = 0;
    jint nlines = 0;
    jvmtiLineNumberEntry *lines = NULL;
    if (!JVMTI_OK(JVMTI_TRY(bk.jvmti, GetLineNumberTable, method, &nlines, &lines))) {
        return NULL;
    }
    jint npc = 0;
    pc_bci *pcs = pc_map(method, code_addr, code_size, map_length, map, compile_info, &npc);
    JVMPI_Lineno *out = malloc(sizeof *out * (size_t)(npc + 1));
    jint n = 0;
    for (jint i = 0; out != NULL && i < npc; i++) {
        jint line = line_of(lines, nlines, pcs[i].bci);
        if (line < 0 || (n > 0 && (out[n - 1].lineno == line || out[n - 1].offset == pcs[i].offset))) {
            continue;
        }
        out[n].offset = pcs[i].offset;
        out[n].lineno = line;
        n++;
    }
    /* HotSpot maps pcs to bytecodes only at safepoints unless compiled
     * method events were on during the compilation (or the VM runs with
     * -XX:+DebugNonSafepoints): a method compiled earlier may have no entry
     * at all.  Its code starts where its first bytecode does. */
    if (out != NULL && n == 0 && line_of(lines, nlines, 0) >= 0) {
        out[0].offset = 0;
        out[0].lineno = line_of(lines, nlines, 0);
        n = 1;
    }
    free(pcs);
    bk_deallocate(lines);
    *count = n;
    return out;
}

/* Methods whose COMPILED_METHOD_LOAD was delivered.  At the unload of a
 * method's code the VM may no longer name its class: the class is being
 * unloaded (the agent still knows the method: its CLASS_UNLOAD comes
 * later), or the method is an obsolete version a retransformation left,
 * freed meanwhile, which no CLASS_LOAD listed.  Only the first kind had a
 * load delivered under that ID. */
typedef struct {
    jmethodID method;
    UT_hash_handle hh;
} sent_method;
static sent_method *loads_sent;
static pthread_mutex_t loads_lock = PTHREAD_MUTEX_INITIALIZER;

static void load_sent(jmethodID method)
{
    pthread_mutex_lock(&loads_lock);
    sent_method *m = NULL;
    HASH_FIND_PTR(loads_sent, &method, m);
    if (m == NULL && (m = malloc(sizeof *m)) != NULL) {
        m->method = method;
        HASH_ADD_PTR(loads_sent, method, m);
    }
    pthread_mutex_unlock(&loads_lock);
}

static bool was_load_sent(jmethodID method)
{
    pthread_mutex_lock(&loads_lock);
    sent_method *m = NULL;
    HASH_FIND_PTR(loads_sent, &method, m);
    pthread_mutex_unlock(&loads_lock);
    return m != NULL;
}

void JNICALL bk_on_compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size, const void *code_addr,
                                        jint map_length, const jvmtiAddrLocationMap *map, const void *compile_info)
{
    if (hooksclass_is_method(method) || bk_methodhooks_obsolete(method) ||
        nativewrap_is_renamed(method)) {
        return; /* the layer's own code; code of a method version no longer called */
    }
    BEGIN_CALLBACK();
    jint n = 0;
    JVMPI_Lineno *lines = line_table(method, code_addr, code_size, map_length, map, compile_info, &n);
    layer_compiled_method_load(seam_current_env(), method, code_addr, code_size, n, lines);
    load_sent(method);
    free(lines);
    END_CALLBACK();
}

static bool method_gone(JNIEnv *env, jmethodID method)
{
    jclass cls = NULL;
    if (!JVMTI_OK(JVMTI_TRY(bk.jvmti, GetMethodDeclaringClass, method, &cls)) || cls == NULL) {
        return true;
    }
    if (env != NULL) {
        (*env)->DeleteLocalRef(env, cls);
    }
    return false;
}

void JNICALL bk_on_compiled_method_unload(jvmtiEnv *jvmti, jmethodID method, const void *code_addr)
{
    if (hooksclass_is_method(method) || bk_methodhooks_obsolete(method) ||
        nativewrap_is_renamed(method) || (!was_load_sent(method) && method_gone(seam_current_env(), method))) {
        return;
    }
    BEGIN_CALLBACK();
    layer_compiled_method_unload(seam_current_env(), method);
    END_CALLBACK();
}

void seam_compiled_methods_replay(void)
{
    jvmtiPhase phase = JVMTI_PHASE_LIVE;
    JVMTI_CALL(bk.jvmti, GetPhase, &phase);
    if (phase != JVMTI_PHASE_LIVE) {
        atomic_store(&replay_pending, true);
        return;
    }
    if (add_live_caps(true, false)) {
        JVMTI_CALL(bk.jvmti, GenerateEvents, JVMTI_EVENT_COMPILED_METHOD_LOAD);
    }
}

void bk_methods_vm_init(void)
{
    if (atomic_exchange(&replay_pending, false)) {
        seam_compiled_methods_replay();
    }
}
