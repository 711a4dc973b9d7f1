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
 * from a CDS archive, the copy in the archive, learnt from a method of
 * java.lang.Class (always archived where CDS is on) at VM init.  From JDK 26 on a jmethodID is a number
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

/* Set at VM init: whether IDs are addresses (up to JDK 25), and the vtable
 * of java.lang.Class's methods, the CDS archive's copy where CDS is on. */
static bool ids_are_addresses;
static uintptr_t archived_vtable;

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

/* Once, at VM init, before any agent can pass an ID: no lock needed. */
void bk_methodcheck_learn(jmethodID known)
{
    uintptr_t id = (uintptr_t)known, method = 0, vtable = 0;
    if (id >= SMALLEST_ADDRESS && read_word(id, &method) && read_word(method, &vtable) && vtable != 0) {
        archived_vtable = vtable;
        ids_are_addresses = true;
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
    if (!ids_are_addresses) {
        return m != NULL; /* numbers, or nothing learnt: the VM checks */
    }
    uintptr_t method = 0, vtable = 0;
    return read_word((uintptr_t)m, &method) && read_word(method, &vtable) &&
           (vtable == archived_vtable || in_libjvm(vtable));
}
