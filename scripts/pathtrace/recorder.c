/*
 * The path recorder of scripts/pathtrace.sh, linked into libjvmpi.so only
 * when it is built with -DJVMPI_TRACE_PATH=ON (every other source of the
 * layer is then compiled with -finstrument-functions).  It records, on the
 * allocating thread, every function of the layer entered while inside
 * bk_on_sampled_alloc, for the allocations numbered JVMPI_PATH_NTH to
 * JVMPI_PATH_NTH + SLOTS - 1 (counted from the first sampled allocation),
 * and writes them to JVMPI_PATH_OUT once all are recorded (or at exit).
 * Several allocations are kept so that the counting script can choose the
 * first that reached an agent's handler.  Nothing here may be instrumented:
 * it would record itself.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Only its address is used, to know where a path starts.  Weak: the unit
 * tests link the same instrumented library without the backend. */
extern void bk_on_sampled_alloc(void) __attribute__((weak));

#define NI __attribute__((no_instrument_function))
/* Hidden: glibc exports do-nothing hooks of these names, which an exported
 * definition here would lose to (the layer is loaded RTLD_LOCAL). */
#define HIDDEN __attribute__((visibility("hidden")))
#define SLOTS 16
#define MAX_CALLS 8192

typedef struct {
    void *fn;
    void *site;
    int depth;
} call;

static call calls[SLOTS][MAX_CALLS];
static int ncalls[SLOTS];
static _Atomic int overflowed[SLOTS];
static _Atomic int slot_done[SLOTS];
static _Atomic long tickets;
static _Atomic int finished;
static _Atomic int written;
static long first = 1000;
static const char *out_path;

static __thread int slot = -1;
static __thread int depth;

NI static void write_out(void)
{
    if (out_path == NULL || bk_on_sampled_alloc == NULL || atomic_exchange(&written, 1) != 0) {
        return;
    }
    Dl_info info;
    if (dladdr((void *)bk_on_sampled_alloc, &info) == 0) {
        return;
    }
    FILE *f = fopen(out_path, "w");
    if (f == NULL) {
        return;
    }
    fprintf(f, "lib %s\n", info.dli_fname);
    fprintf(f, "# tickets %ld\n", atomic_load(&tickets));
    for (int s = 0; s < SLOTS; s++) {
        if (!atomic_load(&slot_done[s])) {
            continue;
        }
        fprintf(f, "alloc %ld%s\n", first + s, atomic_load(&overflowed[s]) ? " overflowed" : "");
        for (int i = 0; i < ncalls[s]; i++) {
            /* Called from outside the layer: the agent's handler asking
             * something of the layer, not the event's own way. */
            Dl_info caller;
            bool outside = dladdr(calls[s][i].site, &caller) == 0 || caller.dli_fbase != info.dli_fbase;
            fprintf(f, "%d %#lx%s\n", calls[s][i].depth,
                    (unsigned long)((char *)calls[s][i].fn - (char *)info.dli_fbase), outside ? " outside" : "");
        }
    }
    fclose(f);
}

NI __attribute__((constructor)) static void recorder_init(void)
{
    out_path = getenv("JVMPI_PATH_OUT");
    const char *nth = getenv("JVMPI_PATH_NTH");
    if (nth != NULL) {
        first = atol(nth);
    }
}

NI __attribute__((destructor)) static void recorder_fini(void) { write_out(); }

HIDDEN NI void __cyg_profile_func_enter(void *fn, void *site)
{
    if (slot < 0) {
        if (fn != (void *)bk_on_sampled_alloc || fn == NULL || out_path == NULL) {
            return;
        }
        long t = atomic_fetch_add(&tickets, 1) - first;
        if (t < 0 || t >= SLOTS) {
            return;
        }
        slot = (int)t;
        depth = 0;
    }
    if (ncalls[slot] < MAX_CALLS) {
        calls[slot][ncalls[slot]++] = (call){fn, site, depth};
    } else {
        atomic_store(&overflowed[slot], 1);
    }
    depth++;
}

HIDDEN NI void __cyg_profile_func_exit(void *fn, void *site)
{
    if (slot < 0) {
        return;
    }
    if (--depth == 0) {
        atomic_store(&slot_done[slot], 1);
        slot = -1;
        if (atomic_fetch_add(&finished, 1) + 1 == SLOTS) {
            write_out();
        }
    }
}
