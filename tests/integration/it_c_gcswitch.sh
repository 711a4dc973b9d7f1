#!/bin/bash
# The collection a heap event's switch causes is not shown: HotSpot 5.0 ran
# a full collection when the first of OBJECT_ALLOC, OBJECT_FREE,
# OBJECT_MOVE, ARENA_NEW/DELETE and the JNI global reference events went on
# (and the last off) and posted no GC_START/GC_FINISH for it; the layer
# collects when OBJECT_ALLOC goes on (JVM TI's allocation sampling starts
# with one) and hides it the same way.  The c_gcswitch agent switches them
# all on and off in the live VM and must see no GC event for a second;
# then RunGC must bring a window.  A heap large enough that the idle
# program never collects on its own.
. "$(dirname "$0")/lib.sh"

lib="$AGENTS_DIR/libc_gcswitch.so"
[ -f "$lib" ] || fail "libc_gcswitch.so not built"
out="$WORK/gcswitch.txt"
run_java gcswitch "$(agent_arg c_gcswitch "out=$out")" -Xms256m -Dagent.lib="$lib" -cp "$CLASSES" C_GcSwitch ||
  { tail -30 "$WORK/gcswitch.err"; [ -f "$out" ] && cat "$out"; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/gcswitch.out" '^C_GcSwitch done'
expect_no_agent_failures "$out"
expect_file_has "$out" '^ok switching the heap events on and off shows no GC_START/GC_FINISH'
expect_file_has "$out" '^ok RunGC still brings a GC_START'
expect_summary "$out" c_gcswitch 6
exit 0
