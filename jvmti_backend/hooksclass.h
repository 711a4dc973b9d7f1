/*
 * hooksclass.h - the class whose static natives the rewritten code calls
 * (methodhooks.c): made here byte by byte, defined in the boot loader's
 * unnamed module, its natives registered.  It is the layer's own: the agent
 * is never told of it nor of its methods.
 */
#ifndef JVMPI_HOOKSCLASS_H_
#define JVMPI_HOOKSCLASS_H_

#include "backend.h"

#define HOOKS_CLASS "jvmpi/layer/MethodHooks"

/* The natives' code, one per native of the class. */
typedef struct {
    void *enter, *enter_this, *exit, *step, *exit_init, *leaf, *leaf_this, *new_array, *new_multi_array;
} hooksclass_natives;

/* Defines the class once and registers natives; false (said on the log)
 * when the VM would not. */
bool hooksclass_define(JNIEnv *env, const hooksclass_natives *natives);
/* A global reference to the class, NULL before it is defined. */
jclass hooksclass_class(void);
/* The layer's own class, which the agent is never told of. */
bool hooksclass_is_class(JNIEnv *env, jclass klass);
/* One of its methods: dropped from call traces and compiled-code events. */
bool hooksclass_is_method(jmethodID method);

#endif
