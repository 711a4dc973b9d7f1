#!/bin/bash
# INSTRUCTION_START: D_Instr runs branchy(0, 2, 1000, 7)
# with the event on; the d_instr agent compares branchy's events with the
# exact sequence of offsets and branch details (if taken or not, tableswitch
# key/low/hi, lookupswitch chosen pair/pairs_total with the default as
# pairs_total), all in the calling thread, none after DisableEvent.
# Both sources must give the same: the class rewriter's instruction hooks
# (the default, no capability), and JVM TI's single stepping (methods=jvmti;
# its capability exists only at start-up and the agent enables the event
# after JVM_OnLoad, so that run also has caps=all).
. "$(dirname "$0")/lib.sh"

lib="$AGENTS_DIR/libd_instr.so"
[ -f "$lib" ] || fail "libd_instr.so not built"
for mode in rewrite jvmti; do
  out="$WORK/instr-$mode.txt"
  opts=methods=$mode
  [ $mode = jvmti ] && opts="$opts,caps=all"
  JVMPI_LAYER_OPTIONS=$opts run_java "instr-$mode" "$(agent_arg d_instr "out=$out")" -Dagent.lib="$lib" \
    -cp "$CLASSES" D_Instr ||
    { tail -30 "$WORK/instr-$mode.err"; [ -f "$out" ] && grep -E '^(FAIL|seen|expected)' "$out"; fail "$mode: java exited non-zero"; }
  expect_no_crash
  expect_file_has "$WORK/instr-$mode.out" '^D_Instr: sum=1243$'
  [ -s "$out" ] || fail "$mode: agent wrote nothing"
  echo "  $mode:"
  grep -E '^(seen|expected)' "$out" | sed 's/^/   /'
  expect_no_agent_failures "$out"
  # EnableEvent, branchy found, DisableEvent, the sequence, env, count, stop, after.
  expect_summary "$out" d_instr 8
done
exit 0
