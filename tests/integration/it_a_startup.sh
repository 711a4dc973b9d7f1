#!/bin/bash
# Start-up order and event filtering, with NotifyEvent set before and (as some
# real agents did) only after the EnableEvent calls in JVM_OnLoad.
# The a_startup agent checks: CLASS_LOAD of Object/String/Thread before any
# THREAD_START, THREAD_START of main before JVM_INIT_DONE, one JVM_INIT_DONE,
# no event type it did not enable, zeroed unused event bytes.
. "$(dirname "$0")/lib.sh"

for mode in early late; do
  out="$WORK/agent-$mode.txt"
  run_java "run-$mode" "$(agent_arg a_startup "out=$out,notify=$mode")" -cp "$CLASSES" A_Hello ||
    { cat "$WORK/run-$mode.err"; fail "java exited non-zero (notify=$mode)"; }
  expect_file_has "$WORK/run-$mode.out" '^hello done'
  [ -s "$out" ] || fail "agent wrote nothing (notify=$mode)"
  expect_file_has "$out" "^START notify=$mode"
  expect_file_has "$out" 'JVM_INIT_DONE after'
  expect_file_has "$out" '^EVENT [0-9]* THREAD_START main group main parent system$'
  # The program's own thread starts after JVM_INIT_DONE; THREAD_START of it
  # must still come (the event stays enabled), THREAD_END must not.
  expect_file_has "$out" 'THREAD_START a-hello-thread .*(after JVM_INIT_DONE)'
  expect_file_has "$out" '^EXIT .* init_done=1 '
  expect_no_agent_failures "$out"
  note "notify=$mode: $(grep '^EXIT' "$out")"
done
exit 0
