/*
 * stackmap - moving a StackMapTable (JVM specification 4.7.4) to a method's
 * new code layout.  The rewriter inserts code, so every frame's offset and
 * every Uninitialized(offset) of a `new` moves; the frames themselves (the
 * types in the locals and on the stack) do not change, because what is
 * inserted leaves both as it found them.  One frame is added: the one at the
 * rewriter's exception handler, after all the others.
 *
 * No JVM TI, no global state.
 */
#ifndef JVMPI_STACKMAP_H_
#define JVMPI_STACKMAP_H_

#include <stddef.h>
#include <stdint.h>

/* Where the code at an old offset went.  frame: the offset a frame at
 * old_pc now describes (a branch target's); new_insn: where the `new`
 * instruction at old_pc now is. */
typedef struct {
    uint32_t (*frame)(void *ctx, uint32_t old_pc, int *ok);
    uint32_t (*new_insn)(void *ctx, uint32_t old_pc, int *ok);
    void *ctx;
} stackmap_map;

/* A frame added at one of the rewriter's exception handlers: no locals but,
 * for a constructor's code before it calls its super or this constructor,
 * uninitializedThis in local 0; the stack one Object of the Class constant
 * throwable. */
typedef struct {
    uint32_t pc;
    int uninitialized_this;
} stackmap_handler;

/*
 * Rewrites the body of a StackMapTable attribute (data, len: from
 * number_of_entries on; data NULL and len 0 for a method that had none).
 * Each frame keeps its kind unless its new offset_delta needs a wider form
 * (same_frame and same_locals_1_stack_item become their _extended forms).
 * The handlers' frames are appended, in order; they must lie after every
 * other frame.  Returns 0 with *out (malloc'd) and *outlen, or -1 with
 * a one-line reason: a reserved frame type or verification tag, a table
 * that runs past len or has bytes after its last frame, an offset the map
 * refuses, more than 65535 frames.
 */
int stackmap_rewrite(const uint8_t *data, uint32_t len, const stackmap_map *map, const stackmap_handler *handlers,
                     int n_handlers, uint16_t throwable, uint8_t **out, uint32_t *outlen, char *err, size_t errlen);

#endif
