#!/bin/bash
# OBJECT_FREE and GC events: C_Gc drops 10000 markers per
# round and calls RunGC through the c_gc agent, five rounds in one JVM; by
# the time RunGC returns the agent must have seen exactly 10000 OBJECT_FREEs
# of markers it saw allocated, inside GC_START ... GC_FINISH on one thread,
# none for IDs never allocated or already freed, no ID allocated twice, and
# GC_FINISH's gc_info must agree with the agent's count of live objects and
# with Runtime.totalMemory().  No JVM flags: the default collector.
. "$(dirname "$0")/lib.sh"

lib="$AGENTS_DIR/libc_gc.so"
[ -f "$lib" ] || fail "libc_gc.so not built"
out="$WORK/gc.txt"
run_java gc "$(agent_arg c_gc "out=$out")" -Dagent.lib="$lib" -cp "$CLASSES" C_Gc ||
  { tail -30 "$WORK/gc.err"; [ -f "$out" ] && grep -v '^ok' "$out" | head -40; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/gc.out" '^C_Gc done'
[ -s "$out" ] || fail "agent wrote nothing"
grep -E '^(round 4:|JVM_SHUT_DOWN)' "$out" | sed 's/^/   /'
expect_no_agent_failures "$out"
for r in 0 1 2 3 4; do
  expect_file_has "$out" "^ok round $r: 10000 OBJECT_FREE of C_Marker since the last check"
done
# 10 enables, 5 x (RunGC + 3 marker counts + 2 gc_info), 3 at start.
expect_summary "$out" c_gc 43
exit 0
