/*
 * ledger - a per-run account of what the layer delivered to the agents,
 * written to a file at VM death, so that what a legacy agent was told can
 * be set beside what other tools saw of the same run (scripts/compare.sh):
 *
 *   - every event type: whether an agent enabled it, how many were
 *     delivered (and requested), how many came from JVM_SHUT_DOWN on;
 *   - objects by class: OBJECT_ALLOCs and OBJECT_FREEs with their bytes,
 *     and which of the allocations the program made while it ran (not the
 *     objects of the start-up replay, nor those defined for an event);
 *   - those allocations by site: the allocating method (the top frame);
 *   - GC windows (GC_START to GC_FINISH): those that served collections of
 *     the VM, how many collections, and those that carried late frees only.
 *
 * Switched on by JVMPI_LAYER_OPTIONS=ledger=<file>.  Off, the event path
 * only tests one flag (ledger_active()).
 */
#ifndef JVMPI_LEDGER_H_
#define JVMPI_LEDGER_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seam.h"

struct thread_rec;

extern _Atomic bool ledger_on;

static inline bool ledger_active(void) { return atomic_load_explicit(&ledger_on, memory_order_relaxed); }

/* Starts the ledger: path is created now, so that a path that cannot be
 * written stops the run at start-up rather than losing it at the end.
 * hold_s > 0: at VM death, once the ledger is written, the VM waits until
 * a file <path>.done exists, at most hold_s seconds (time for a tool to
 * look at the heap the ledger counted, e.g. jcmd GC.class_histogram).
 * Returns 0, or -1 with a one-line reason in err. */
int ledger_start(const char *path, int hold_s, char *err, size_t errlen);

/* An agent enabled the event (noted whether or not the ledger is on). */
void ledger_event_enabled(jint event_type);

/* ev is being delivered, as built, on the calling thread (me: the thread
 * the layer knows it as, NULL if none).  Called once per delivery, before
 * the first agent's handler runs. */
void ledger_event(JNIEnv *env, struct thread_rec *me, const JVMPI_Event *ev);

/* What the ledger must know of a freed object, read before its record is
 * dropped (jvmpi/gc.c), and counted once its OBJECT_FREE was delivered. */
typedef struct ledger_free {
    int64_t class_tag; /* its class; 0 when not known */
    jlong size;
} ledger_free;
void ledger_free_note(int64_t tag, ledger_free *out);
void ledger_object_freed(const ledger_free *f);

/* A GC window's GC_START was delivered; collections: how many of the VM's
 * collections it served (0: it carried frees the VM posted late). */
void ledger_gc_window(long collections);

/* VM death: writes the ledger, then holds the VM if asked to. */
void ledger_finish(void);

void ledger_reset(void);

#endif
