#!/bin/bash
# RequestEvent(CLASS_LOAD / THREAD_START) with those events NOT enabled: the
# a_request agent asks from JVM_INIT_DONE and from THREAD_END handlers and
# checks the answer arrives on the same thread before RequestEvent returns,
# with JVMPI_REQUESTED_EVENT set, and that other types get NOT_AVAILABLE.
. "$(dirname "$0")/lib.sh"

out="$WORK/agent.txt"
run_java run "$(agent_arg a_request "out=$out")" -cp "$CLASSES" A_Request ||
  { cat "$WORK/run.err"; fail "java exited non-zero"; }
expect_file_has "$WORK/run.out" '^marker=42'
expect_file_has "$WORK/run.out" '^request done'
[ -s "$out" ] || fail "agent wrote nothing (not loaded?)"
expect_file_has "$out" '^START'
expect_file_has "$out" '^INIT_DONE checks finished'
expect_file_has "$out" '^WORKER checks finished'
expect_file_has "$out" '^DONE '
expect_no_agent_failures "$out"
expect_file_has "$out" '^THREAD_START of main: THREAD_START name main group main parent system '
expect_file_has "$out" '^CLASS_LOAD of java.lang.String (via length()I): class_name java.lang.String '
expect_file_has "$out" '^CLASS_LOAD of A_Request (via marker()I): class_name A_Request source A_Request.java '
note "$(grep '^DONE' "$out")"
exit 0
