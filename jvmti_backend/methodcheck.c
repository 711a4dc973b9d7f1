/*
 * methodcheck.c - whether a method ID an agent passes is one the VM made,
 * before JVM TI is given it.
 *
 * JVM TI checks a jmethodID by reading through it: up to JDK 25 HotSpot's
 * jmethodID is the address of a slot that holds the method's Method*, and a
 * garbage ID (an agent that kept a 32-bit half of a pointer, or a freed
 * table) crashes the VM inside GetMethodDeclaringClass.  So an ID is read
 * here first, without a fault: the slot must be readable, and the Method*
 * in it must point at an object whose first word (its C++ vtable) is that of
 * a Method: inside libjvm.so, or, for the methods of classes the VM maps
 * from a CDS archive, the copy in the archive, learnt from the methods of
 * the classes the layer defines.  From JDK 26 on a jmethodID is a number
 * the VM looks up in a table of its own, which refuses what it does not
 * know: such IDs go to JVM TI as they are.
 */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend.h"

/* IDs below this are numbers, not addresses. */
#define SMALLEST_ADDRESS ((uintptr_t)1 << 20)

#define MAX_VTABLES 4
static _Atomic bool ids_are_addresses, ids_are_numbers;
static _Atomic uintptr_t method_vtables[MAX_VTABLES];

/* A pipe the bytes go through when process_vm_readv is not allowed. */
static pthread_mutex_t pipe_lock = PTHREAD_MUTEX_INITIALIZER;
static int probe_pipe[2] = {-1, -1};
static _Atomic bool readv_refused;

static bool read_by_pipe(uintptr_t addr, uintptr_t *out)
{
    bool ok = false;
    pthread_mutex_lock(&pipe_lock);
    if (probe_pipe[0] >= 0 || pipe(probe_pipe) == 0) {
        /* write() answers EFAULT for memory it cannot read, with no signal. */
        ok = write(probe_pipe[1], (const void *)addr, sizeof *out) == (ssize_t)sizeof *out &&
             read(probe_pipe[0], out, sizeof *out) == (ssize_t)sizeof *out;
    }
    pthread_mutex_unlock(&pipe_lock);
    return ok;
}

/* One word at addr, or false where reading it would fault. */
static bool read_word(uintptr_t addr, uintptr_t *out)
{
    if (addr < SMALLEST_ADDRESS || addr % sizeof(uintptr_t) != 0) {
        return false;
    }
    if (!atomic_load_explicit(&readv_refused, memory_order_relaxed)) {
        struct iovec local = {out, sizeof *out};
        struct iovec remote = {(void *)addr, sizeof *out};
        ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
        if (n == (ssize_t)sizeof *out) {
            return true;
        }
        if (n >= 0 || errno == EFAULT) {
            return false;
        }
        atomic_store(&readv_refused, true); /* EPERM under some sandboxes, ENOSYS */
    }
    return read_by_pipe(addr, out);
}

static bool vtable_known(uintptr_t vtable)
{
    for (int i = 0; i < MAX_VTABLES; i++) {
        if (atomic_load_explicit(&method_vtables[i], memory_order_acquire) == vtable) {
            return true;
        }
    }
    return false;
}

void bk_methodcheck_learn(jmethodID known)
{
    uintptr_t id = (uintptr_t)known, method = 0, vtable = 0;
    if (id == 0 || atomic_load_explicit(&ids_are_numbers, memory_order_relaxed)) {
        return;
    }
    if (id < SMALLEST_ADDRESS) {
        atomic_store(&ids_are_numbers, true);
        return;
    }
    if (!read_word(id, &method) || !read_word(method, &vtable) || vtable == 0 || vtable_known(vtable)) {
        return;
    }
    for (int i = 0; i < MAX_VTABLES; i++) {
        uintptr_t none = 0;
        if (atomic_compare_exchange_strong(&method_vtables[i], &none, vtable)) {
            atomic_store(&ids_are_addresses, true);
            return;
        }
        if (none == vtable) {
            return;
        }
    }
}

/* Tries left for bk_methodcheck_learn_some: with CDS off there is only one
 * vtable to learn, and the second is never found. */
static _Atomic int learn_budget = 1000;

void bk_methodcheck_learn_some(jmethodID known)
{
    if (atomic_load_explicit(&method_vtables[1], memory_order_relaxed) == 0 &&
        atomic_fetch_sub_explicit(&learn_budget, 1, memory_order_relaxed) > 0) {
        bk_methodcheck_learn(known);
    }
}

/* Whether addr lies in libjvm.so, where the VM's own vtables are. */
static bool in_libjvm(uintptr_t addr)
{
    Dl_info info;
    if (dladdr((void *)addr, &info) == 0 || info.dli_fname == NULL) {
        return false;
    }
    const char *base = strrchr(info.dli_fname, '/');
    return strcmp(base != NULL ? base + 1 : info.dli_fname, "libjvm.so") == 0;
}

bool bk_method_id_plausible(jmethodID m)
{
    if (!atomic_load_explicit(&ids_are_addresses, memory_order_acquire)) {
        return m != NULL; /* numbers, or nothing learnt: the VM checks */
    }
    uintptr_t method = 0, vtable = 0;
    return read_word((uintptr_t)m, &method) && read_word(method, &vtable) &&
           (vtable_known(vtable) || in_libjvm(vtable));
}
