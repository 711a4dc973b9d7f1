#!/bin/bash
# ProfilerExit(42) from an event handler makes the JVM exit with code 42 at
# once (agent b_exit): from JVM_INIT_DONE, before the main class runs, and
# from the THREAD_START of a thread the program starts.  "At once": no
# warning from the layer, and well under the 5 s a wait for the calling
# handler to return (which it never does) would take.
. "$(dirname "$0")/lib.sh"

# exited_at_once NAME START_NS: NAME's run took under 4 s and the layer had
# nothing to complain about.
exited_at_once() {
  local ms=$(( ($(date +%s%N) - $2) / 1000000 ))
  note "$1: ran $ms ms"
  expect_file_lacks "$WORK/$1.err" 'JVMPI layer: \(warning\|error\)'
  [ "$ms" -lt 4000 ] || fail "$1: ProfilerExit took $ms ms to end the JVM"
}

[ -f "$AGENTS_DIR/libb_exit.so" ] || fail "libb_exit.so not built"

out="$WORK/exit-init.txt"
t0=$(date +%s%N)
run_java init "$(agent_arg b_exit "$out,when=initdone")" -cp "$CLASSES" B_Main
rc=$?
expect_no_crash
[ "$rc" = 42 ] || { tail -30 "$WORK/init.err"; cat "$out"; fail "ProfilerExit(42) at JVM_INIT_DONE: exit code $rc, expected 42"; }
expect_file_has "$out" '^calling ProfilerExit(42) from JVM_INIT_DONE$'
expect_no_agent_failures "$out"
expect_file_lacks "$WORK/init.out" '^B_Main start'
exited_at_once init "$t0"

out="$WORK/exit-thread.txt"
t0=$(date +%s%N)
run_java thread "$(agent_arg b_exit "$out,when=thread")" -cp "$CLASSES" B_ExitTrigger
rc=$?
expect_no_crash
[ "$rc" = 42 ] || { tail -30 "$WORK/thread.err"; cat "$out"; fail "ProfilerExit(42) at THREAD_START: exit code $rc, expected 42"; }
expect_file_has "$out" '^calling ProfilerExit(42) from THREAD_START$'
expect_no_agent_failures "$out"
expect_file_has "$WORK/thread.out" '^B_ExitTrigger before$'
expect_file_lacks "$WORK/thread.out" '^B_ExitTrigger after'
exited_at_once thread "$t0"
note "b_exit: all checks passed"
exit 0
