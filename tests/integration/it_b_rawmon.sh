#!/bin/bash
# Raw monitors between two CreateSystemThread threads (agent b_rawmon, see
# tests/agents/b_rawmon.c): contention events on "lockA" with the right
# thread, name and id; none for names starting with '_'; recursion; timed
# RawMonitorWait; RawMonitorNotifyAll.  The agent checks, the program waits
# for it (B_Main --wait-for).
. "$(dirname "$0")/lib.sh"

[ -f "$AGENTS_DIR/libb_rawmon.so" ] || fail "libb_rawmon.so not built"
out="$WORK/rawmon.txt"
run_java rawmon "$(agent_arg b_rawmon "$out")" -cp "$CLASSES" B_Main --wait-for "$out.done" \
  || { tail -30 "$WORK/rawmon.err"; cat "$WORK/rawmon.out"; [ -f "$out" ] && cat "$out"; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/rawmon.out" '^B_Main end$'
expect_no_agent_failures "$out"
# 4 EnableEvent, create, CreateSystemThread, distinct envs; 6 in each lockA
# phase (1, 3); 2, 1 and 2 in phases 2, 4, 5; 2 on names: 26 checks.
expect_summary "$out" b_rawmon 26
expect_file_has "$out" '^ok phase 1 (contention): one RAW_MONITOR_CONTENDED_EXIT for lockA on thread 1'
expect_file_has "$out" '^ok phase 2: contention on _quiet sends no event'
expect_file_has "$out" '^ok phase 5: RawMonitorNotifyAll woke the waiter'
note "b_rawmon: all checks passed"
exit 0
