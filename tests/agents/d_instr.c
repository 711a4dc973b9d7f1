/*
 * d_instr - INSTRUCTION_START, with D_Instr.
 *
 * Options: out=FILE.  start() enables INSTRUCTION_START, stop() disables it
 * and compares the events of D_Instr.branchy with the exact sequence below,
 * for branchy(0), branchy(2), branchy(1000), branchy(7).  Tokens: the
 * offset; if-bytecodes add ":T"/":F" (is_true); tableswitch ":key/low/hi";
 * lookupswitch ":chosen_pair_index/pairs_total".
 *
 * The offsets are those javac (JDK 17, --release 17) gives branchy (javap -c):
 *   0 iconst_0  1 istore_1  2 iload_0  3 ifle 9  6 iinc  9 iload_0
 *   10 tableswitch 1..3 -> 36, 42, 48, default 54   36/42/48 iinc, 39/45/51 goto 57
 *   54 iinc  57 iload_0  58 lookupswitch {10 -> 84, 1000 -> 90}, default 99
 *   84 iinc  87 goto 105  90 iinc_w  96 goto 105  99 iinc_w  105 iload_1  106 ireturn
 * "ifle 9" is taken (T) when x <= 0.  For the tableswitch's default the
 * layer reports key = hi + 1, a key that selects the default (the real key
 * is not known to JVM TI: see docs/differences.md).
 * Also checked: branchy's events came with main's env_id (other threads'
 * bytecodes are reported too, with theirs), and none came after stop().
 */
#include "c_common.h"

static const char expected[] =
    /* branchy(0) */ "0 1 2 3:T 9 10:4/1/3 54 57 58:2/2 99 105 106 "
    /* branchy(2) */ "0 1 2 3:F 6 9 10:2/1/3 42 45 57 58:2/2 99 105 106 "
    /* branchy(1000) */ "0 1 2 3:F 6 9 10:4/1/3 54 57 58:1/2 90 96 105 106 "
    /* branchy(7) */ "0 1 2 3:F 6 9 10:4/1/3 54 57 58:2/2 99 105 106 ";

static jmethodID branchy;
static JNIEnv *main_env;
static char seen[4096];
static size_t seen_len;
static long other_env, after_stop, total;
static int stopped;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void append(const char *tok)
{
    size_t n = strlen(tok);
    if (seen_len + n + 2 < sizeof seen) {
        memcpy(seen + seen_len, tok, n);
        seen_len += n;
        seen[seen_len++] = ' ';
        seen[seen_len] = '\0';
    }
}

static void notify(JVMPI_Event *ev)
{
    if (ev->event_type == JVMPI_EVENT_JVM_SHUT_DOWN) {
        c_check(stopped, "stop() ran");
        c_check(after_stop == 0, "no INSTRUCTION_START after DisableEvent (got %ld)", after_stop);
        c_summary("d_instr");
        return;
    }
    if (ev->event_type != JVMPI_EVENT_INSTRUCTION_START)
        return;
    pthread_mutex_lock(&lock);
    total++;
    if (stopped)
        after_stop++;
    if (ev->u.instruction.method_id == branchy && !stopped) {
        if (ev->env_id != main_env)
            other_env++;
        char tok[64];
        jint off = ev->u.instruction.offset;
        switch (off) {
        case 3:
            snprintf(tok, sizeof tok, "%d:%c", (int)off, ev->u.instruction.u.if_info.is_true ? 'T' : 'F');
            break;
        case 10:
            snprintf(tok, sizeof tok, "%d:%d/%d/%d", (int)off, (int)ev->u.instruction.u.tableswitch_info.key,
                     (int)ev->u.instruction.u.tableswitch_info.low, (int)ev->u.instruction.u.tableswitch_info.hi);
            break;
        case 58:
            snprintf(tok, sizeof tok, "%d:%d/%d", (int)off, (int)ev->u.instruction.u.lookupswitch_info.chosen_pair_index,
                     (int)ev->u.instruction.u.lookupswitch_info.pairs_total);
            break;
        default:
            snprintf(tok, sizeof tok, "%d", (int)off);
            break;
        }
        append(tok);
    }
    pthread_mutex_unlock(&lock);
}

JNIEXPORT void JNICALL Java_D_1Instr_start(JNIEnv *env, jclass cls)
{
    if (!c_ready("start"))
        return;
    branchy = (*env)->GetStaticMethodID(env, cls, "branchy", "(I)I");
    main_env = env;
    c_check(branchy != NULL, "D_Instr.branchy found");
    c_enable(JVMPI_EVENT_INSTRUCTION_START, "INSTRUCTION_START");
}

JNIEXPORT void JNICALL Java_D_1Instr_stop(JNIEnv *env, jclass cls)
{
    if (!c_ready("stop"))
        return;
    jint rc = c_pi->DisableEvent(JVMPI_EVENT_INSTRUCTION_START, NULL);
    pthread_mutex_lock(&lock);
    stopped = 1;
    char got[4096];
    memcpy(got, seen, seen_len + 1);
    long others = other_env, n = total;
    pthread_mutex_unlock(&lock);
    c_check(rc == JVMPI_SUCCESS, "DisableEvent(INSTRUCTION_START) returns JVMPI_SUCCESS (got %d)", (int)rc);
    c_log("seen     %s", got);
    c_log("expected %s", expected);
    c_check(strcmp(got, expected) == 0, "branchy's INSTRUCTION_START sequence is exactly the expected one");
    c_check(others == 0, "branchy's INSTRUCTION_START came with the calling thread's env_id (%ld did not)", others);
    c_check(n > (long)strlen(expected) / 4, "main's own bytecodes were reported too (%ld events in all)", n);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (c_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    c_pi->NotifyEvent = notify;
    c_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    return JNI_OK;
}
