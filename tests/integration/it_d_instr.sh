#!/bin/bash
# INSTRUCTION_START: D_Instr runs branchy(0, 2, 1000, 7)
# with the event on; the d_instr agent compares branchy's events with the
# exact sequence of offsets and branch details (if taken or not, tableswitch
# key/low/hi, lookupswitch chosen pair/pairs_total with the default as
# pairs_total), all in the calling thread, none after DisableEvent.
. "$(dirname "$0")/lib.sh"
# INSTRUCTION_START is enabled after JVM_OnLoad: its JVM TI capabilities exist only at
# start-up, so the layer must take them all.
export JVMPI_LAYER_OPTIONS=caps=all

lib="$AGENTS_DIR/libd_instr.so"
[ -f "$lib" ] || fail "libd_instr.so not built"
out="$WORK/instr.txt"
run_java instr "$(agent_arg d_instr "out=$out")" -Dagent.lib="$lib" -cp "$CLASSES" D_Instr ||
  { tail -30 "$WORK/instr.err"; [ -f "$out" ] && grep -E '^(FAIL|seen|expected)' "$out"; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/instr.out" '^D_Instr: sum=1243$'
[ -s "$out" ] || fail "agent wrote nothing"
grep -E '^(seen|expected)' "$out" | sed 's/^/   /'
expect_no_agent_failures "$out"
# EnableEvent, branchy found, DisableEvent, the sequence, env, count, stop, after.
expect_summary "$out" d_instr 8
exit 0
