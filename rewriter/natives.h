/*
 * natives - a native method's hooks (inject.h, native_prefix): the native
 * is renamed with the prefix (and made private), and a method of its own
 * name, flags and attributes takes its place, which calls the entry hook,
 * the renamed native and the exit hook, with a handler that reports an
 * exception's exit.  JVM TI's native method prefix makes the VM bind the
 * renamed one to the original implementation.
 *
 * No JVM TI, no global state.
 */
#ifndef JVMPI_NATIVES_H_
#define JVMPI_NATIVES_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classfile.h"
#include "hookcall.h"

/* Wraps native method index of cf; the wrapper is appended to the method
 * table as wrapper_index (the next free one) and calls the hooks with that
 * number.  A native whose arguments take more than 255 local slots is left
 * alone (true, nothing added).  False with a one-line reason; cf may then be
 * half changed. */
bool natives_wrap(classfile *cf, uint16_t index, uint16_t wrapper_index, const char *prefix, const pool_refs *refs,
                  char *err, size_t errlen);

/* Whether m is a native the JIT replaces by an intrinsic: not to be wrapped. */
bool natives_is_intrinsic(const classfile *cf, const classfile_member *m);

#endif
