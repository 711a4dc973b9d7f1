#!/bin/bash
# Set/GetThreadLocalStorage per thread from THREAD_START to THREAD_END, and
# GetCurrentThreadCpuTime across a spin and a sleep (agent b_tls with
# B_Workers running 8 short threads).
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
