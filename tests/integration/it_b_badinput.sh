#!/bin/bash
# Bad arguments to JVMPI functions (NULLs, unknown JNIEnv *, a destroyed raw
# monitor, event numbers that do not exist) never crash the layer, and the
# program then runs to its normal end (agent b_badinput with B_Workers).
. "$(dirname "$0")/lib.sh"

[ -f "$AGENTS_DIR/libb_badinput.so" ] || fail "libb_badinput.so not built"
out="$WORK/badinput.txt"
run_java bad "$(agent_arg b_badinput "$out")" -cp "$CLASSES" B_Workers 2
rc=$?
expect_no_crash
[ "$rc" = 0 ] || { tail -30 "$WORK/bad.err"; [ -f "$out" ] && cat "$out"; fail "java exited with $rc after bad calls"; }
# The program's own output, complete and in order.
printf 'B_Workers start\nB_Workers end\n' | cmp -s - "$WORK/bad.out" \
  || { cat "$WORK/bad.out"; fail "the program's output is not intact"; }
expect_no_agent_failures "$out"
expect_file_has "$out" '^JVM_INIT_DONE: all calls returned$'
# 14 event numbers, 2 EnableEvent, 6 thread, 2 monitor, 8 ID, 3 sanity, 1 at shut-down.
expect_summary "$out" b_badinput 36
# 1001 RequestEvent(CLASS_LOAD)s with no class's ID (a NULL, then 1000 made up):
# the first 5 printed, one line saying the rest are counted, and their
# exact number at VM death.
err="$WORK/bad.err"
shown=$(grep -c '^JVMPI layer: error: RequestEvent(CLASS_LOAD): [^ ]* is not a class ID$' "$err")
[ "$shown" = 5 ] || { grep 'CLASS_LOAD' "$err" | head -20; fail "$shown lines for refused CLASS_LOAD requests, not 5"; }
[ "$(grep -c '^JVMPI layer: error: RequestEvent(CLASS_LOAD): further calls refused for the same reason' "$err")" = 1 ] \
  || fail "no single line saying further refused CLASS_LOAD requests are counted"
expect_file_has "$err" \
  '^JVMPI layer: error: RequestEvent(CLASS_LOAD): 996 more calls refused for the same reason: \.\.\. is not a class ID$'
# Method IDs no method has: JDK 8 to 25 crash on one if asked, so the layer
# refuses them itself, one line each; from JDK 26 on the VM refuses them.
if [ "$JDK_MAJOR" -lt 26 ]; then
  [ "$(grep -c '^JVMPI layer: error: GetMethodClass: [^ ]* is not a method ID$' "$err")" = 4 ] \
    || { grep 'GetMethodClass' "$err"; fail "GetMethodClass of IDs no method has: not one line each"; }
fi
note "b_badinput: all checks passed"
exit 0
