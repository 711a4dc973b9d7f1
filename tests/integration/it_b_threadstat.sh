#!/bin/bash
# GetThreadStatus, ThreadHasRun, SuspendThread/ResumeThread and
# SuspendThreadList/ResumeThreadList on threads of B_ThreadStates in known
# states (agent b_threadstat, see tests/agents/b_threadstat.c for what is
# expected and why).
. "$(dirname "$0")/lib.sh"

[ -f "$AGENTS_DIR/libb_threadstat.so" ] || fail "libb_threadstat.so not built"
out="$WORK/threadstat.txt"
run_java ts "$(agent_arg b_threadstat "$out")" -cp "$CLASSES" B_ThreadStates "$out.ready" "$out.done" \
  || { tail -30 "$WORK/ts.err"; cat "$WORK/ts.out"; [ -f "$out" ] && cat "$out"; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/ts.out" '^B_ThreadStates end$'
expect_no_agent_failures "$out"
# 2 EnableEvent, CreateSystemThread, ready, envs; 24 free (status and bits
# of 6 threads, twice); 8 SuspendThread; 16 for the other four; 7 for the
# lists; 6 odd cases; 12 after: 78 checks.  Where the JVMPI specification
# leaves room, HotSpot 5.0's answers (sleeping is RUNNABLE, ThreadHasRun
# always true, the caller never suspended, JVMDI's codes in the lists).
expect_summary "$out" b_threadstat 78
expect_file_has "$out" '^ok ThreadHasRun(spinner) is JNI_TRUE'
expect_file_has "$out" '^ok ThreadHasRun(sleeper) is JNI_TRUE'
expect_file_has "$out" '^ok sleeper running free: GetThreadStatus .* (RUNNABLE)'
expect_file_has "$out" '^ok SuspendThread of the calling thread returned at once'
expect_file_has "$out" '^ok SuspendThreadList: 10 for the caller, NULL and no thread, 14 for a suspended one'
expect_file_has "$out" '^ok GetThreadStatus of NULL and of no thread: RUNNABLE'
expect_file_has "$out" '^ok blocked while suspended by SuspendThread: GetThreadStatus .* (MONITOR_WAIT)'
expect_file_has "$out" '^ok waiter while suspended by SuspendThread: GetThreadStatus .* (CONDVAR_WAIT)'
expect_file_has "$out" '^ok SuspendThreadList/ResumeThreadList report 0'
expect_file_has "$out" '^ok blocked while suspended by SuspendThread: SUSPENDED set, INTERRUPTED clear'
expect_file_has "$out" '^ok flagged running free: SUSPENDED clear, INTERRUPTED set'
expect_file_has "$out" '^ok flagged while suspended by SuspendThread: SUSPENDED set, INTERRUPTED set'
expect_file_has "$out" '^ok spinner while suspended by SuspendThreadList: SUSPENDED set'
# Nothing else is a mistake of the agent's: the layer says only that NULL
# and the JNIEnv * that is no thread's are not threads.
loud=$(grep -c 'JVMPI layer: \(warning\|error\)' "$WORK/ts.err")
[ "$loud" = 6 ] || { grep 'JVMPI layer:' "$WORK/ts.err"; fail "expected 6 error lines from the layer, got $loud"; }
note "b_threadstat: all checks passed"
exit 0
