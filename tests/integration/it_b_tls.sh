#!/bin/bash
# Set/GetThreadLocalStorage per thread from THREAD_START to THREAD_END, and
# GetCurrentThreadCpuTime across a spin and a sleep (agent b_tls with
# B_Workers running 8 short threads).
. "$(dirname "$0")/lib.sh"

[ -f "$AGENTS_DIR/libb_tls.so" ] || fail "libb_tls.so not built"
out="$WORK/tls.txt"
run_java tls "$(agent_arg b_tls "$out,workers=8")" -cp "$CLASSES" B_Workers 8 \
  || { tail -30 "$WORK/tls.err"; cat "$WORK/tls.out"; [ -f "$out" ] && cat "$out"; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/tls.out" '^B_Workers end$'
expect_no_agent_failures "$out"
# 4 EnableEvent, 4 on CPU time, 6 at shut-down.
expect_summary "$out" b_tls 14
expect_file_has "$out" '^ok all 8 worker threads ended with their storage intact'
expect_file_has "$out" '^ok GetCurrentThreadCpuTime grew by the spin'
note "b_tls: all checks passed"
exit 0
