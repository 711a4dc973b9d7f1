/*
 * a_hook - CLASS_LOAD_HOOK: rewriting a class, or leaving it alone.
 *
 * Options: out=FILE, mode=rewrite|noop|copyall.
 *  rewrite  the class whose constant pool holds the UTF8 constant
 *           "ORIGINAL-MARK" gets a copy (from malloc_f) with that constant
 *           changed to the same-length "REWRITTEN-ABC"; other classes untouched.
 *  noop     never touches new_class_data / new_class_data_len (as agents
 *           that only look did): nothing may change.
 *  copyall  hands back an unchanged copy of every class, in malloc_f memory:
 *           nothing may change and the VM must take (and free) every buffer.
 * Every hook is checked for a sane class file (magic, length), a malloc_f,
 * and zero bytes beyond the class_load_hook members.
 */
#include "a_common.h"

static const char mark[] = "ORIGINAL-MARK";
static const char repl[] = "REWRITTEN-ABC";
_Static_assert(sizeof mark == sizeof repl, "the replacement must keep the constant's length");

enum { REWRITE, NOOP, COPYALL };
static int mode;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long n_hooks, n_marked, n_changed, n_preset, n_copied;

/* Offset of the mark's bytes in a CONSTANT_Utf8 entry (tag 1, u2 length),
 * or -1. */
static long find_mark(const unsigned char *d, jint len)
{
    size_t ml = sizeof mark - 1;
    for (jint i = 0; i + 3 + (jint)ml <= len; i++) {
        if (d[i] == 1 && d[i + 1] == 0 && (size_t)d[i + 2] == ml && memcmp(d + i + 3, mark, ml) == 0)
            return i + 3;
    }
    return -1;
}

static void on_hook(JVMPI_Event *ev)
{
    a_check_unused_zero(ev, A_USED_END(class_load_hook), "CLASS_LOAD_HOOK");
    unsigned char *data = ev->u.class_load_hook.class_data;
    jint len = ev->u.class_load_hook.class_data_len;
    void *(*malloc_f)(unsigned int) = ev->u.class_load_hook.malloc_f;
    if (!data || len < 10) {
        a_fail("CLASS_LOAD_HOOK with class_data %p, length %d", (void *)data, (int)len);
        return;
    }
    if (data[0] != 0xCA || data[1] != 0xFE || data[2] != 0xBA || data[3] != 0xBE)
        a_fail("CLASS_LOAD_HOOK class_data does not start with 0xCAFEBABE (%02x%02x%02x%02x)", data[0],
               data[1], data[2], data[3]);
    if (!malloc_f) {
        a_fail("CLASS_LOAD_HOOK with NULL malloc_f");
        return;
    }
    /* JDK 5.0 used new_class_data unconditionally afterwards, so the layer
     * pre-sets it to the incoming class; recorded, the program's output is
     * what decides. */
    int preset = ev->u.class_load_hook.new_class_data == data && ev->u.class_load_hook.new_class_data_len == len;
    long at = find_mark(data, len);

    int changed = 0, copied = 0;
    if ((mode == REWRITE && at >= 0) || mode == COPYALL) {
        unsigned char *copy = malloc_f((unsigned int)len);
        if (!copy) {
            a_fail("malloc_f(%d) returned NULL", (int)len);
            return;
        }
        memcpy(copy, data, (size_t)len);
        if (mode == REWRITE) {
            memcpy(copy + at, repl, sizeof repl - 1);
            changed = 1;
        }
        ev->u.class_load_hook.new_class_data = copy;
        ev->u.class_load_hook.new_class_data_len = len;
        copied = 1;
    }
    pthread_mutex_lock(&lock);
    n_hooks++;
    n_marked += at >= 0;
    n_changed += changed;
    n_copied += copied;
    n_preset += preset;
    pthread_mutex_unlock(&lock);
    if (at >= 0)
        a_rec("MARK found in a class of %d bytes at offset %ld%s", (int)len, at, changed ? ", rewritten" : "");
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_CLASS_LOAD_HOOK:
        on_hook(ev);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        pthread_mutex_lock(&lock);
        a_rec("DONE hooks=%ld marked=%ld rewritten=%ld copied=%ld preset=%ld failures=%d", n_hooks, n_marked,
              n_changed, n_copied, n_preset, a_failures);
        pthread_mutex_unlock(&lock);
        break;
    default:
        a_fail("event type %d was never enabled", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (a_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    char *m = a_opt(options, "mode");
    mode = a_streq(m, "noop") ? NOOP : a_streq(m, "copyall") ? COPYALL : REWRITE;
    a_rec("START mode=%s", m ? m : "rewrite");
    free(m);
    a_jvmpi->NotifyEvent = notify;
    a_expect_enable(JVMPI_EVENT_CLASS_LOAD_HOOK, "CLASS_LOAD_HOOK");
    a_expect_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    return JNI_OK;
}
