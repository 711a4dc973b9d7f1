#include "instr.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "dispatch.h"
#include "events.h"
#include "layer.h"
#include "log.h"
#include "tls.h"

#define OP_IFEQ 0x99
#define OP_IF_ACMPNE 0xa6
#define OP_TABLESWITCH 0xaa
#define OP_LOOKUPSWITCH 0xab
#define OP_IFNULL 0xc6
#define OP_IFNONNULL 0xc7

bool instr_is_branch(unsigned char op)
{
    return (op >= OP_IFEQ && op <= OP_IF_ACMPNE) || op == OP_IFNULL || op == OP_IFNONNULL ||
           op == OP_TABLESWITCH || op == OP_LOOKUPSWITCH;
}

static int32_t s4(const unsigned char *p)
{
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
}

void instr_branch_outcome(const unsigned char *code, jint len, jint offset, jint next, JVMPI_Event *ev)
{
    if (code == NULL || offset < 0 || offset >= len) {
        return;
    }
    unsigned char op = code[offset];
    if (op == OP_TABLESWITCH || op == OP_LOOKUPSWITCH) {
        /* The operands start at the next multiple of 4 from the method's start. */
        jint p = (offset + 4) & ~3;
        if (p + 8 > len) {
            return;
        }
        if (op == OP_TABLESWITCH) {
            if (p + 12 > len) {
                return;
            }
            int32_t low = s4(code + p + 4), high = s4(code + p + 8);
            ev->u.instruction.u.tableswitch_info.low = low;
            ev->u.instruction.u.tableswitch_info.hi = high;
            ev->u.instruction.u.tableswitch_info.key = high < INT32_MAX ? high + 1 : low - 1;
            for (int64_t i = 0; i <= (int64_t)high - low && p + 12 + 4 * i + 4 <= len; i++) {
                if (offset + s4(code + p + 12 + 4 * i) == next) {
                    ev->u.instruction.u.tableswitch_info.key = (jint)(low + i);
                    break;
                }
            }
        } else {
            int32_t npairs = s4(code + p + 4);
            ev->u.instruction.u.lookupswitch_info.pairs_total = npairs;
            ev->u.instruction.u.lookupswitch_info.chosen_pair_index = npairs;
            for (int32_t i = 0; i < npairs && p + 8 + 8 * (int64_t)i + 8 <= len; i++) {
                if (offset + s4(code + p + 8 + 8 * i + 4) == next) {
                    ev->u.instruction.u.lookupswitch_info.chosen_pair_index = i;
                    break;
                }
            }
        }
        return;
    }
    if (instr_is_branch(op) && offset + 3 <= len) {
        jint target = offset + (int16_t)(((unsigned)code[offset + 1] << 8) | code[offset + 2]);
        ev->u.instruction.u.if_info.is_true = (next == target && target != offset + 3) ? JNI_TRUE : JNI_FALSE;
    }
}

/* ---- bytecodes of each method ---------------------------------------------- */

typedef struct code_entry code_entry;

typedef struct {
    code_entry *last;        /* the method of the last step (steps come in runs) */
    bool delivering;         /* inside the agent's handler for this thread's event */
    bool pending;            /* a branch waits for its next step */
    unsigned pending_gen;
    code_entry *pending_code;
    jint pending_offset;
} step_state;

static TLS_FAST step_state me;

/* Entries live until instr_reset: a thread's cached pointer stays valid. */
struct code_entry {
    jmethodID method;
    unsigned char *code;
    jint len;
    UT_hash_handle hh;
};

static pthread_mutex_t code_lock = PTHREAD_MUTEX_INITIALIZER;
static code_entry *codes;

static code_entry *code_of(jmethodID method)
{
    code_entry *e = NULL;
    pthread_mutex_lock(&code_lock);
    HASH_FIND_PTR(codes, &method, e);
    pthread_mutex_unlock(&code_lock);
    if (e != NULL) {
        return e;
    }
    jint len = 0;
    unsigned char *code = seam_method_bytecodes(method, &len);
    code_entry *fresh = calloc(1, sizeof *fresh);
    if (fresh == NULL) {
        free(code);
        return NULL;
    }
    fresh->method = method;
    fresh->code = code;
    fresh->len = code != NULL ? len : 0;
    pthread_mutex_lock(&code_lock);
    HASH_FIND_PTR(codes, &method, e);
    if (e == NULL) {
        HASH_ADD_PTR(codes, method, fresh);
        e = fresh;
        fresh = NULL;
    }
    pthread_mutex_unlock(&code_lock);
    if (fresh != NULL) {
        free(fresh->code);
        free(fresh);
    }
    return e;
}

void instr_reset(void)
{
    code_entry *e, *tmp;
    pthread_mutex_lock(&code_lock);
    HASH_ITER(hh, codes, e, tmp)
    {
        HASH_DEL(codes, e);
        free(e->code);
        free(e);
    }
    pthread_mutex_unlock(&code_lock);
    memset(&me, 0, sizeof me);
}

/* ---- steps -------------------------------------------------------------------- */

/* Bumped whenever single steps go on or off: a branch a thread held from
 * before belongs to an earlier enable and is dropped, never sent late. */
static _Atomic unsigned generation;

void layer_single_step_switched(bool on) { atomic_fetch_add(&generation, 1); }

static void send(JNIEnv *env, JVMPI_Event *ev)
{
    me.delivering = true;
    events_deliver(env, ev);
    me.delivering = false;
}

static void init_event(JVMPI_Event *ev, jmethodID method, jint offset)
{
    memset(ev, 0, sizeof *ev);
    ev->event_type = JVMPI_EVENT_INSTRUCTION_START;
    ev->u.instruction.method_id = method;
    ev->u.instruction.offset = offset;
}

void layer_single_step(JNIEnv *env, jmethodID method, jint offset)
{
    /* Bytecodes the agent's own handler runs (through JNI) are not the
     * program's: reporting them would recurse without end. */
    if (me.delivering) {
        return;
    }
    if (!layer_is_live() || !events_enabled(JVMPI_EVENT_INSTRUCTION_START)) {
        me.pending = false;
        return;
    }
    unsigned gen = atomic_load_explicit(&generation, memory_order_relaxed);
    JVMPI_Event ev;
    if (me.pending) {
        me.pending = false;
        if (me.pending_gen == gen) {
            code_entry *c = me.pending_code;
            init_event(&ev, c->method, me.pending_offset);
            /* A branch never calls: its next step is in the same method. */
            instr_branch_outcome(c->code, c->len, me.pending_offset, c->method == method ? offset : -1, &ev);
            send(env, &ev);
        }
    }
    code_entry *c = me.last;
    if (c == NULL || c->method != method) {
        c = code_of(method);
        me.last = c;
    }
    if (c != NULL && offset >= 0 && offset < c->len && instr_is_branch(c->code[offset])) {
        me.pending = true;
        me.pending_gen = gen;
        me.pending_code = c;
        me.pending_offset = offset;
        return;
    }
    init_event(&ev, method, offset);
    send(env, &ev);
}
