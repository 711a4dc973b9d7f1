#!/bin/bash
# MONITOR_DUMP (agent d_mon_dump, program D_MonDump): a Java monitor owned
# twice by main with one thread blocked entering it and one waiting on it,
# and a raw monitor of the agent owned by one thread with one blocked
# entering and one waiting; the agent reads the whole buffer with its own
# reader and checks the records, the traces and the thread statuses.
. "$(dirname "$0")/lib.sh"
# The agent requests MONITOR_DUMP without enabling a monitor event in JVM_OnLoad:
# the layer holds what the dump needs from start-up on, for every agent.

lib="$AGENTS_DIR/libd_mon_dump.so"
[ -f "$lib" ] || fail "libd_mon_dump.so not built"
out="$WORK/mon_dump.txt"
run_java dump "$(agent_arg d_mon_dump "$out")" -Dagent.lib="$lib" -cp "$CLASSES" D_MonDump \
  || { tail -30 "$WORK/dump.err"; cat "$WORK/dump.out"; [ -f "$out" ] && cat "$out"; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/dump.out" '^D_MonDump end$'
expect_file_has "$WORK/dump.out" '^dump returned 0$'
expect_no_agent_failures "$out"
# 3 setup, 2 event, 2 buffer, 5 M, 6 raw, 1 count + 6 statuses + 1 main trace + 6 once, 2 request, 1 final
expect_summary "$out" d_mon_dump 35
exit 0
