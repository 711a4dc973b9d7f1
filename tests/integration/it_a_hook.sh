#!/bin/bash
# CLASS_LOAD_HOOK: a rewrite through malloc_f/new_class_data that the program
# observes, and two hooks that must change nothing (one never touches
# new_class_data, one hands back an unchanged copy of every class).
. "$(dirname "$0")/lib.sh"

for mode in rewrite noop copyall; do
  out="$WORK/agent-$mode.txt"
  run_java "run-$mode" "$(agent_arg a_hook "out=$out,mode=$mode")" -cp "$CLASSES" A_Hook ||
    { cat "$WORK/run-$mode.err"; fail "java exited non-zero (mode=$mode)"; }
  [ -s "$out" ] || fail "agent wrote nothing (mode=$mode)"
  expect_file_has "$out" "^START mode=$mode"
  expect_file_has "$out" '^DONE '
  expect_no_agent_failures "$out"
  # Exactly one class file holds the mark: A_HookTarget.
  expect_file_has "$out" '^DONE hooks=[1-9][0-9]* marked=1 '
  if [ "$mode" = rewrite ]; then
    expect_file_has "$out" '^DONE .* rewritten=1 '
    expect_file_has "$WORK/run-$mode.out" '^text=REWRITTEN-ABC$'
  else
    expect_file_has "$out" '^DONE .* rewritten=0 '
    expect_file_has "$WORK/run-$mode.out" '^text=ORIGINAL-MARK$'
  fi
  note "mode=$mode: $(cat "$WORK/run-$mode.out"); $(grep '^DONE' "$out")"
done
exit 0
