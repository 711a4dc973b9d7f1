/*
 * arrayhooks - the call put after each array allocation (inject.h,
 * new_array and new_multi_array): where the VM reports no allocation made
 * by bytecode, this is how the layer sees arrays.  Internal to the
 * rewriter; inject.c lays the code out and moves the offsets.
 *
 * No JVM TI, no global state.
 */
#ifndef JVMPI_ARRAYHOOKS_H_
#define JVMPI_ARRAYHOOKS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classfile.h"
#include "hookcall.h"

/* How many bytes the hook after the instruction op takes: dup; invokestatic
 * <new_array> after newarray and anewarray, dup; bipush <dimensions>;
 * invokestatic <new_multi_array> after multianewarray; 0 after any other. */
uint32_t arrayhooks_len(uint8_t op);

/* Writes the hook of the array allocation at insn to q. */
void arrayhooks_emit(uint8_t *q, const uint8_t *insn, const pool_refs *refs);

/*
 * Adds to cf's pool the hooks the array allocations among the n instructions
 * of code (starting at starts) call, those not in refs yet.  *extra: what
 * the calls need on the stack beyond the code's own (0: the code allocates
 * no array).  false with a one-line reason if the pool is full.
 */
bool arrayhooks_refs(classfile *cf, const char *hooks_class, const char *new_array, const char *new_multi_array,
                     const uint8_t *code, const uint32_t *starts, uint32_t n, pool_refs *refs, uint32_t *extra,
                     char *err, size_t errlen);

#endif
