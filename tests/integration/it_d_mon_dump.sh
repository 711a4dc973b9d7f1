#!/bin/bash
# MONITOR_DUMP (agent d_mon_dump, program D_MonDump): a Java monitor owned
# three times by main with one thread blocked entering it and one waiting on
# it, the monitor of a Class object main owns, a raw monitor of the agent
# owned by one thread with one blocked entering and one waiting, and one no
# thread owns; the agent reads the whole buffer with its own reader.
# First as HotSpot 5.0 gave it (entry count = threads entering + waiting,
# no Class object's monitor, no unowned raw monitor, no traces), which
# agents were written against; then with monitordump=traces, which adds a
# trace and a status per thread, as the JVMPI specification describes.
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
expect_file_has "$out" '^ok dump: num_traces 0, threads_status NULL'
expect_file_has "$out" '^ok the Class object main holds is not listed'
expect_file_has "$out" '^ok the raw monitor nobody owns is not listed'
# 4 setup, 2 event, 2 buffer, 2 left out, 5 M, 6 raw, 1 no traces, 2 request, 1 final
expect_summary "$out" d_mon_dump 25

out="$WORK/mon_dump_traces.txt"
(export D_MON_DUMP_TRACES=1 JVMPI_LAYER_OPTIONS=monitordump=traces
 run_java traces "$(agent_arg d_mon_dump "$out")" -Dagent.lib="$lib" -cp "$CLASSES" D_MonDump) \
  || { tail -30 "$WORK/traces.err"; cat "$WORK/traces.out"; [ -f "$out" ] && cat "$out"; fail "java exited non-zero (traces)"; }
expect_no_crash
expect_file_has "$WORK/traces.out" '^D_MonDump end$'
expect_no_agent_failures "$out"
# as above, less the no-traces check, plus 1 trace per thread named, 1 count
# + 6 statuses + 1 main trace + 6 once
expect_summary "$out" d_mon_dump 39
exit 0
