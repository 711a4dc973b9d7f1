#!/bin/bash
# Java monitor events (agent d_mon_events, program D_MonEvents): contention
# with one and with two blocked threads (CONTENDED_ENTER / _ENTERED, and the
# layer's emulated CONTENDED_EXIT: see tests/agents/d_mon_events.c for what
# is expected and why), Object.wait with and without a timeout, and
# Thread.sleep reported as a wait on NULL (on JDK 17 sleep is native, on
# JDK 21+ Java around a native: both wrapped).
. "$(dirname "$0")/lib.sh"

lib="$AGENTS_DIR/libd_mon_events.so"
[ -f "$lib" ] || fail "libd_mon_events.so not built"
out="$WORK/mon_events.txt"
run_java mon "$(agent_arg d_mon_events "$out")" -Dagent.lib="$lib" -cp "$CLASSES" D_MonEvents \
  || { tail -30 "$WORK/mon.err"; cat "$WORK/mon.out"; [ -f "$out" ] && cat "$out"; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/mon.out" '^D_MonEvents end$'
expect_no_agent_failures "$out"
# 5 EnableEvent, 3 marks, 4 + 5 contention, 5 + 3 waits and sleeps, 2 at the end
expect_summary "$out" d_mon_events 27
exit 0
