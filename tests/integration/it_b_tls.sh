#!/bin/bash
# Set/GetThreadLocalStorage per thread from THREAD_START to THREAD_END,
# GetCurrentThreadCpuTime across a spin and a sleep, and every function that
# takes a JNIEnv * on threads that have ended, from a sampler racing their
# ends and at shut-down (agent b_tls with B_Workers running 8 short threads).
. "$(dirname "$0")/lib.sh"

[ -f "$AGENTS_DIR/libb_tls.so" ] || fail "libb_tls.so not built"
out="$WORK/tls.txt"
run_java tls "$(agent_arg b_tls "$out,workers=8")" -cp "$CLASSES" B_Workers 8 \
  || { tail -30 "$WORK/tls.err"; cat "$WORK/tls.out"; [ -f "$out" ] && cat "$out"; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/tls.out" '^B_Workers end$'
expect_no_agent_failures "$out"
# 4 EnableEvent, CreateSystemThread, 4 on CPU time, SIGPROF handler set,
# 10 at shut-down.
expect_summary "$out" b_tls 20
expect_file_has "$out" '^ok all 8 worker threads ended with their storage intact'
expect_file_has "$out" '^ok GetCurrentThreadCpuTime grew by the spin'
# HotSpot 5.0's answers for threads it no longer had (RUNNABLE, never -1;
# JVMDI's INVALID_THREAD in the lists).
expect_file_has "$out" '^ok [0-9]* threads that ended: GetThreadStatus RUNNABLE, the list results 10'
expect_file_has "$out" '^ok SIGPROF handler: [1-9][0-9]* runs'
# Calls naming threads that ended (the sampler's, and those at shut-down)
# are answered without a word; the one JNIEnv * that was never a thread's
# gets the one error line.
loud=$(grep -c 'JVMPI layer: \(warning\|error\)' "$WORK/tls.err")
[ "$loud" = 1 ] && expect_file_has "$WORK/tls.err" '^JVMPI layer: error: GetThreadStatus: JNIEnv .* is not a live thread' \
  || { grep 'JVMPI layer:' "$WORK/tls.err" | sort | uniq -c | sort -rn | head; fail "expected exactly one error line from the layer, got $loud"; }
note "b_tls: all checks passed"
exit 0
