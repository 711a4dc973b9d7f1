/*
 * leaf - which methods may report their entry and their exit in one call.
 *
 * Each hook call is a native call, a JNI transition each way, and a getter
 * the JIT would have inlined into nothing then costs two of them.  A method
 * whose body can do nothing an agent could see between its METHOD_ENTRY and
 * its METHOD_EXIT loses nothing when both are sent at its start, one after
 * the other: a "leaf" here.  Its body must
 *   - call nothing, allocate nothing, enter no monitor, and resolve no class
 *     (no invoke, new, checkcast, instanceof, ldc of anything but a number):
 *     no other event can come between the two;
 *   - throw nothing (no athrow, no array access, no integer division, a
 *     field only of `this` or of the class's own statics, declared in the
 *     class itself, and written only if not final): its exit is the normal
 *     one;
 *   - branch only forward, and be at most LEAF_MAX_CODE bytes: it runs for a
 *     few instructions, so the time an agent measures between the two events
 *     is what it would have been;
 *   - sit on one source line: a stack trace taken in either event shows the
 *     method at the line it would have shown.
 * Not a constructor, class initializer or synchronized method, nor a method
 * of an interface (whose statics may still be uninitialized there).
 *
 * No JVM TI, no global state.
 */
#ifndef JVMPI_LEAF_H_
#define JVMPI_LEAF_H_

#include <stdbool.h>

#include "classfile.h"

#define LEAF_MAX_CODE 32u

/* Whether method m of cf is a leaf (see above); false for a method without code. */
bool leaf_method(const classfile *cf, const classfile_member *m);

#endif
