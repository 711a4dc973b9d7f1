/*
 * inject - the method hooks put into a class's code: a call at each
 * method's entry, one before each of its returns, and an exception handler
 * that reports the exit of a frame an exception unwinds and throws the
 * exception on.  This is how method entry and exit events are had with the
 * JIT on (JVM TI's own MethodEntry/MethodExit put every thread in the
 * interpreter); HPROF on JVM TI did the same.
 *
 * The calls are static methods of one hooks class, each given the method's
 * number (first_id + its index in the class's method table):
 *   enter(int)              static methods, constructors, class initializers
 *   enter_this(Object, int) other instance methods, with their receiver
 *   exit(int)               before each return, and in the handler
 *   step(int, int)          with instruction hooks, before each instruction,
 *                           with its offset in the original code
 *   leaf(int), leaf_this(Object, int)
 *                           instead of all the others, at the entry of a
 *                           method whose body no agent can see into (a
 *                           getter, say: leaf.h): entry and exit in one call
 * A constructor's receiver is not initialized until it calls its super
 * constructor, so no verifiable code can pass it at entry; whoever needs it
 * finds it in the frame.
 *
 * Everything that holds a code offset is moved with the code: branches (a
 * goto or jsr that no longer reaches becomes goto_w or jsr_w), switch padding
 * and offsets, exception tables, LineNumberTable, LocalVariableTable,
 * LocalVariableTypeTable, StackMapTable and javac's CharacterRangeTable.  A
 * branch to a return lands on the exit call in front of it; a branch to
 * offset 0 skips the entry call.  Refused, with the class left as it was: a
 * conditional branch that no longer reaches (widening it would need a new
 * stack map frame), code over 65535 bytes after insertion, an opcode or a
 * stack map type not known here, and in a class file newer than
 * CLASSFILE_KNOWN_MAJOR a Code attribute not known here (a later JVM may
 * read it; the reason is one classfile_unknown_in finds).  Every other Code
 * attribute (the type annotations of code, a CharacterRangeTable not on
 * instructions, one not known here in a class of a known version) is
 * dropped, as nothing at run time reads them.  Attributes outside Code are
 * kept as they are, whatever their name: code offsets are found only inside
 * Code, and constants keep their indexes, as the pool only grows at its end.
 *
 * No JVM TI, no global state.
 */
#ifndef JVMPI_INJECT_H_
#define JVMPI_INJECT_H_

#include <stddef.h>
#include <stdint.h>

#include "classfile.h"

typedef struct {
    const char *hooks_class; /* internal name */
    /* (I)V, or NULL: no method hooks at all (enter_this, exit, exit_init,
     * step, leaf, leaf_this and native_prefix are then not read), only the
     * allocation hooks below. */
    const char *enter;
    const char *enter_this;  /* (Ljava/lang/Object;I)V */
    const char *exit;        /* (I)V */
    /* (Ljava/lang/Object;I)V, or NULL: none.  java.lang.Object's constructor,
     * which every other constructor calls last, passes its receiver to it
     * at its exits, instead of calling exit: the new object then escapes
     * (into a native call), so the JIT cannot replace it by its fields, and
     * every constructor's frame holds it as an object from the start.  Who
     * reads a constructor's receiver from its frame needs that. */
    const char *exit_init;
    /* (II)V, called before each instruction with the method's number and
     * the instruction's offset in the original code (as a short: offsets
     * over 32767 arrive negative), after the entry call and before the exit
     * call; NULL: no instruction hooks.  A method whose code would grow too
     * big with them gets the method hooks alone, and unstepped says which. */
    const char *step;
    /* (I)V and (Ljava/lang/Object;I)V, or NULL: every method gets entry and
     * exit calls.  Not with instruction hooks. */
    const char *leaf;
    const char *leaf_this;
    void (*unstepped)(void *ctx, const char *name, const char *desc, const char *why);
    void *ctx;
    uint32_t first_id;
    /* NULL: native methods are left alone.  Otherwise each native method is
     * renamed with this prefix (made private) and a method of its own name,
     * flags and attributes takes its place, which calls the hooks around a
     * call of the renamed native: JVM TI's native method prefix
     * (SetNativeMethodPrefix) makes the VM bind the renamed one to the
     * original implementation.  Methods are added, so only for a class as
     * it first loads, or one that was loaded so (a retransformation must
     * give the class the methods it has). */
    const char *native_prefix;
    /* (Ljava/lang/Object;)V and (Ljava/lang/Object;I)V, or NULL: no
     * allocation hooks.  Right after each newarray and anewarray the new
     * array is passed to new_array, and after each multianewarray to
     * new_multi_array with the instruction's dimension count (the arrays of
     * the inner dimensions are the outer one's elements): where the VM
     * reports no allocation made by bytecode (no SampledObjectAlloc), this is
     * how arrays are seen.  The call is part of the instruction (a branch to
     * what follows lands after it), so no stack map frame changes. */
    const char *new_array;
    const char *new_multi_array;
} inject_hooks;

/*
 * Puts the hooks into every method of cf that has code, and wraps its native
 * methods if hooks->native_prefix says so; with hooks->enter NULL, only the
 * allocation hooks, into the methods that allocate arrays (the wrappers are appended to the
 * method table: method i still gets first_id + i, wrappers included).
 * Returns how many methods were changed or added (0: none, cf untouched),
 * or -1 with a one-line reason naming the method; then cf may be half
 * changed and must not be written.  A native whose arguments take more than
 * 255 local slots is left unwrapped.
 */
int inject_class(classfile *cf, const inject_hooks *hooks, char *err, size_t errlen);

/* How many native methods cf has (the wrappers inject_class may add). */
uint16_t inject_native_count(const classfile *cf);

#endif
