#!/bin/bash
# DATA_DUMP_REQUEST: A_Quit sends itself SIGQUIT twice (waiting for the agent
# to see each); the a_datadump agent must count exactly 2.  (HotSpot also
# prints its thread dump on SIGQUIT; that is the VM's business, not checked.)
. "$(dirname "$0")/lib.sh"

out="$WORK/agent.txt"
run_java run "$(agent_arg a_datadump "out=$out")" -cp "$CLASSES" A_Quit "$out" 2 ||
  { tail -5 "$WORK/run.out"; cat "$WORK/run.err"; fail "java exited non-zero"; }
expect_file_has "$WORK/run.out" '^quit done'
expect_file_has "$out" '^START'
expect_file_has "$out" '^DONE count=2 '
expect_no_agent_failures "$out"
note "$(grep '^DONE' "$out")"
exit 0
