#!/bin/bash
# RequestEvent(CLASS_LOAD, id) from inside the CLASS_UNLOAD handler of that
# class: JDK 5.0 answered it from the class's saved data (the class object is
# already gone), its methods listed with every method_id NULL, and agents
# that meet a class ID first at its unload use it.
. "$(dirname "$0")/lib.sh"

out="$WORK/agent.txt"
run_java run "$(agent_arg a_unload "out=$out,requnload=1")" -cp "$CLASSES" A_Unload "$out" ||
  { tail -3 "$WORK/run.out"; cat "$WORK/run.err"; fail "java exited non-zero"; }
expect_file_has "$WORK/run.out" '^unload seen'
expect_file_has "$out" '^START requnload=1'
expect_no_agent_failures "$out"
expect_file_has "$out" '^REQUESTED during unload: A_UnloadMe .* methods, every method_id NULL'
expect_file_has "$out" '^DONE '
exit 0
