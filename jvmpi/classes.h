/*
 * classes - every class that has a JVMPI ID, with what its CLASS_LOAD says.
 *
 * The data stays until the CLASS_UNLOAD for the class has been delivered, so
 * a RequestEvent(CLASS_LOAD) made while handling that unload still answers.
 */
#ifndef JVMPI_CLASSES_H_
#define JVMPI_CLASSES_H_

#include <stdbool.h>

#include "once.h"
#include "seam.h"

typedef struct class_rec {
    seam_class_info *info;
    once_flag announced;   /* CLASS_LOAD */
    int refs;
    /* Once its CLASS_UNLOAD is due: info's methods with every method_id
     * NULL, what a request then answers (HotSpot 5.0's saved data). */
    JVMPI_Method *_Atomic unloaded_methods;
} class_rec;

/* Takes ownership of info.  Returns false (and frees info) when the ID is known. */
bool classes_add(seam_class_info *info);

class_rec *classes_acquire(jobjectID id);
void classes_release(class_rec *c);

/* True once per class: the caller is the one that sends its CLASS_LOAD, then
 * calls once_sent(&c->announced).  Waits while another thread sends it. */
bool classes_claim_announce(class_rec *c);

/* The class's CLASS_UNLOAD is about to be delivered: from now on a
 * requested CLASS_LOAD of it names no method (its methods are gone). */
void classes_mark_unloading(jobjectID id);

/* The methods a requested CLASS_LOAD of c carries: NULL method IDs once
 * unloading. */
const JVMPI_Method *classes_methods(const class_rec *c);

/* Drops a class from the table (after its CLASS_UNLOAD was delivered). */
void classes_remove(jobjectID id);

/* Acquired records of every class not yet announced to all of agents, in
 * definition order. */
class_rec **classes_unannounced(agents_mask agents, int *count);

int classes_count(void);
void classes_reset(void);

#endif
