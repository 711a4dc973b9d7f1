/*
 * instr - INSTRUCTION_START from JVM TI single steps.
 *
 * A step comes before its bytecode runs, so the outcome of a branch (if*,
 * tableswitch, lookupswitch) is only known at the thread's next step: the
 * branch's event is held in the thread until then and sent first, so every
 * bytecode's event still precedes the next one's, in the executing thread.
 */
#ifndef JVMPI_INSTR_H_
#define JVMPI_INSTR_H_

#include <stdbool.h>

#include "jvmpi.h"

/* Whether the bytecode op needs its outcome: the if* family, tableswitch,
 * lookupswitch. */
bool instr_is_branch(unsigned char op);

/* Fills ev->u.instruction's branch details for the branch at offset in code
 * (len bytes), given that the next bytecode executed is at next (-1:
 * unknown).  if*: is_true = the jump was taken.  tableswitch: low, hi and
 * key = low + the index of the first case whose target is next, or, for
 * the default, hi + 1 (low - 1 when hi is the largest int): a value that
 * selects it.  lookupswitch: chosen_pair_index = the first pair whose
 * target is next, pairs_total when none is (the default). */
void instr_branch_outcome(const unsigned char *code, jint len, jint offset, jint next, JVMPI_Event *ev);

/* Drops the bytecode cache (tests). */
void instr_reset(void);

#endif
