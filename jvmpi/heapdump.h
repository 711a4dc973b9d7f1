/*
 * heapdump - HEAP_DUMP and OBJECT_DUMP: a snapshot from the backend
 * (seam_heap_snapshot_take, seam_object_snapshot_take) laid out in JVMPI's
 * dump format and delivered on the calling thread, with the REQUESTED bit,
 * before RequestEvent returns.
 */
#ifndef JVMPI_HEAPDUMP_H_
#define JVMPI_HEAPDUMP_H_

#include "seam.h"

/* RequestEvent(HEAP_DUMP, arg): arg is a JVMPI_HeapDumpArg *, NULL meaning
 * level 2.  JVMPI_SUCCESS once the event was delivered, JVMPI_FAIL (one error
 * line) for a bad level or when no snapshot could be taken. */
jint heapdump_request_heap(void *arg);

/* RequestEvent(OBJECT_DUMP, id): JVMPI_FAIL (one error line) when id is not
 * the ID of a live object. */
jint heapdump_request_object(jobjectID id);

#endif
