#!/bin/bash
# GetCallTrace: methods and source line numbers of known frames, a native
# frame (-3), depth limits, the current thread from an event handler, depth 0,
# an unknown env_id and a thread that has ended (agent b_calltrace with
# B_CallTrace).  The expected lines are B_CallTrace's LINE_* constants, which
# the program itself checks against the JVM's own stack traces.
. "$(dirname "$0")/lib.sh"

[ -f "$AGENTS_DIR/libb_calltrace.so" ] || fail "libb_calltrace.so not built"
src="$SOURCE_DIR/tests/java/B_CallTrace.java"
line_of() {
  local v
  v=$(sed -n "s/^ *static final int $1 = \([0-9]*\);.*/\1/p" "$src")
  [ -n "$v" ] || fail "no constant $1 in $src"
  echo "$v"
}
opts="spin=$(line_of LINE_SPIN),l3=$(line_of LINE_CALL_L3),l2=$(line_of LINE_CALL_L2),l1=$(line_of LINE_CALL_L1)"
opts="$opts,wait=$(line_of LINE_WAIT),w2=$(line_of LINE_CALL_W2),w1=$(line_of LINE_CALL_W1),newt=$(line_of LINE_NEW_TARGET)"
# The spin line is the one statement the whole loop stands on.
[ "$(grep -n 'while (!stop) { spins++; }' "$src" | cut -d: -f1)" = "$(line_of LINE_SPIN)" ] \
  || fail "LINE_SPIN does not match the source"

out="$WORK/calltrace.txt"
run_java ct "$(agent_arg b_calltrace "$out,$opts")" -cp "$CLASSES" B_CallTrace "$out.ready" "$out.done" \
  || { tail -30 "$WORK/ct.err"; cat "$WORK/ct.out"; [ -f "$out" ] && cat "$out"; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/ct.out" '^B_CallTrace: the JVM.s stacks agree with the LINE constants$'
expect_file_has "$WORK/ct.out" '^B_CallTrace end$'
expect_no_agent_failures "$out"
# 31 checks on JDK 17; one more on JDKs where Object.wait has a Java
# wrapper above the native frame.
expect_summary "$out" b_calltrace 31
expect_file_has "$out" '^ok b-target: frame 0 is B_CallTrace.level3 line'
expect_file_has "$out" '^ok b-waiter: the native frame 0 has line number -3'
expect_file_has "$out" '^ok GetCallTrace of the current thread in a CLASS_LOAD handler'
expect_file_has "$out" '^ok GetCallTrace with depth 0 gives num_frames 0'
expect_file_has "$out" '^ok GetCallTrace with an unknown env_id gives num_frames 0'
expect_file_has "$out" '^ok GetCallTrace of b-brief, which has ended, gives num_frames 0'
# The layer's lines are for the two bad calls only (depth 0, the unknown
# env_id), none for the thread that ended.
loud=$(grep -c 'JVMPI layer: \(warning\|error\)' "$WORK/ct.err")
[ "$loud" = 2 ] || { grep 'JVMPI layer:' "$WORK/ct.err"; fail "expected 2 lines from the layer, got $loud"; }
expect_file_has "$WORK/ct.err" '^JVMPI layer: error: GetCallTrace: depth must be at least 1'
expect_file_has "$WORK/ct.err" '^JVMPI layer: error: GetCallTrace: JNIEnv .* is not a live thread'
note "b_calltrace: all checks passed"
exit 0
