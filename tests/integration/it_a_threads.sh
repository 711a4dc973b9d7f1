#!/bin/bash
# THREAD_START / THREAD_END of worker-1..3 (group a-workers, parent a-parent):
# the a_threads agent checks names, group and parent names, IDs, that each
# event arrives on its own thread, that THREAD_END repeats THREAD_START's
# fields, and GetThreadObject(thread_env_id) == thread_id.
. "$(dirname "$0")/lib.sh"

out="$WORK/agent.txt"
run_java run "$(agent_arg a_threads "out=$out")" -cp "$CLASSES" A_Threads ||
  { cat "$WORK/run.err"; fail "java exited non-zero"; }
expect_file_has "$WORK/run.out" '^threads done'
[ -s "$out" ] || fail "agent wrote nothing (not loaded?)"
expect_file_has "$out" '^START'
expect_file_has "$out" '^DONE '
expect_no_agent_failures "$out"
for i in 1 2 3; do
  expect_file_has "$out" "^THREAD_START worker-$i group a-workers parent a-parent "
  expect_file_has "$out" "^THREAD_END worker-$i group a-workers parent a-parent "
done
note "$(grep '^DONE' "$out")"
exit 0
