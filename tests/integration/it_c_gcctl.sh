#!/bin/bash
# GC control: DisableGC twice and EnableGC once, then
# C_GcCtl drops 5000 markers and calls System.gc(): the c_gc agent must get
# no GC_START, GC_FINISH or OBJECT_FREE, RunGC must deliver nothing, new
# objects get fresh IDs; after the second EnableGC and a RunGC exactly the
# 5000 are freed.  OBJECT_MOVE, ARENA_NEW and ARENA_DELETE enable with
# JVMPI_SUCCESS and never arrive.
. "$(dirname "$0")/lib.sh"

lib="$AGENTS_DIR/libc_gc.so"
[ -f "$lib" ] || fail "libc_gc.so not built"
out="$WORK/gcctl.txt"
run_java gcctl "$(agent_arg c_gc "out=$out")" -Dagent.lib="$lib" -cp "$CLASSES" C_GcCtl ||
  { tail -30 "$WORK/gcctl.err"; [ -f "$out" ] && grep -v '^ok' "$out" | head -40; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/gcctl.out" '^C_GcCtl done'
[ -s "$out" ] || fail "agent wrote nothing"
expect_no_agent_failures "$out"
for e in OBJECT_MOVE ARENA_NEW ARENA_DELETE; do
  expect_file_has "$out" "^ok EnableEvent($e) returns JVMPI_SUCCESS"
done
expect_file_has "$out" '^ok RunGC while GC is disabled delivers no window'
expect_file_has "$out" '^ok no GC_START, GC_FINISH or OBJECT_FREE while GC was disabled (got 0)'
expect_file_has "$out" '^ok after EnableGC and RunGC: 5000 OBJECT_FREE of C_Marker'
expect_file_has "$out" '^ok late ones dropped: 1000 OBJECT_FREE of C_Marker'
expect_summary "$out" c_gc 30
exit 0
