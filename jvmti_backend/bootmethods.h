/*
 * bootmethods.h - a boot class's methods found by name, with no frame
 * looked at.
 *
 * A hook learns which method called it from the calling frame the first
 * time it runs.  On JDK 21 that frame lookup (GetFrameLocation, like every
 * JVM TI call about frames there) first waits until no virtual thread is
 * mounting or unmounting; the JDK's own code that runs inside such a
 * transition (VirtualThread.mount, Continuation.run, Thread.setInterrupt
 * when it is called there) would wait for itself, and every other thread
 * and the heap walk with it.  Only boot classes run there, and a boot class
 * is found by its name alone, so their methods are found from the names
 * kept as they are rewritten.
 */
#ifndef JVMPI_BOOTMETHODS_H_
#define JVMPI_BOOTMETHODS_H_

#include "backend.h"
#include "classfile.h"

typedef struct {
    const char *class_name; /* internal form, as FindClass takes it */
    const char *name, *sig;
} bootmethods_name;

/* The names of cf's methods, in its method table's order, in one block
 * that is never freed (a hook of an old version of the class may still
 * run); NULL when out of memory. */
bootmethods_name *bootmethods_keep(const char *class_name, const classfile *cf);
/* The method so named, or NULL; an exception pending on entry is pending
 * again on return. */
jmethodID bootmethods_find(JNIEnv *env, const bootmethods_name *n);
/* The method of cls with this name and signature, or, name NULL, the first
 * whose name accept takes; false when the class's methods cannot be had
 * (a class not yet prepared). */
bool bootmethods_class_method(jclass cls, const char *name, const char *sig, bool (*accept)(const char *),
                              jmethodID *found);

#endif
