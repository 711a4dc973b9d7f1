#!/bin/bash
# GetThreadStatus, ThreadHasRun, SuspendThread/ResumeThread and
# SuspendThreadList/ResumeThreadList on threads of B_ThreadStates in known
# states (agent b_threadstat, see tests/agents/b_threadstat.c for what is
# expected and why).
. "$(dirname "$0")/lib.sh"

# expect_summary FILE AGENT MIN: AGENT wrote its closing line, with no failed
# check and at least MIN passed ones (so an agent that checked nothing fails).
expect_summary() {
  local line passed failed
  line=$(grep "^$2: finished, " "$1" | tail -1)
  [ -n "$line" ] || { echo "--- $1 (tail):"; tail -20 "$1"; fail "$2 never finished (no summary line)"; }
  passed=$(echo "$line" | sed -n 's/.* \([0-9]*\) checks passed, \([0-9]*\) failed$/\1/p')
  failed=$(echo "$line" | sed -n 's/.* \([0-9]*\) checks passed, \([0-9]*\) failed$/\2/p')
  [ "$failed" = 0 ] || { grep '^FAIL' "$1"; fail "$2: $failed checks failed"; }
  [ "$passed" -ge "$3" ] || fail "$2: only $passed checks passed, expected at least $3"
}
# expect_no_crash: no hs_err file from a JVM crash in the work directory.
expect_no_crash() {
  local f
  for f in "$WORK"/hs_err*; do
    [ -e "$f" ] && { head -30 "$f"; fail "the JVM crashed: $(basename "$f")"; }
  done
  return 0
}

[ -f "$AGENTS_DIR/libb_threadstat.so" ] || fail "libb_threadstat.so not built"
out="$WORK/threadstat.txt"
run_java ts "$(agent_arg b_threadstat "$out")" -cp "$CLASSES" B_ThreadStates "$out.ready" "$out.done" \
  || { tail -30 "$WORK/ts.err"; cat "$WORK/ts.out"; [ -f "$out" ] && cat "$out"; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/ts.out" '^B_ThreadStates end$'
expect_no_agent_failures "$out"
# 2 EnableEvent, CreateSystemThread, ready, envs; 10 free; 8 SuspendThread;
# 9 for the other three; 7 for the lists; 5 after: 44 checks.
expect_summary "$out" b_threadstat 44
expect_file_has "$out" '^ok ThreadHasRun(spinner) is JNI_TRUE'
expect_file_has "$out" '^ok ThreadHasRun(sleeper) is JNI_FALSE'
expect_file_has "$out" '^ok blocked while suspended by SuspendThread: GetThreadStatus .* (MONITOR_WAIT)'
expect_file_has "$out" '^ok waiter while suspended by SuspendThread: GetThreadStatus .* (CONDVAR_WAIT)'
expect_file_has "$out" '^ok SuspendThreadList/ResumeThreadList report 0'
note "b_threadstat: all checks passed"
exit 0
