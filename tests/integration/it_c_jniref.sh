#!/bin/bash
# JNI references: the c_jniref agent's native makes and
# deletes global and weak global references to known objects (a marker, an
# int[], a String), on main and on "c-jniref-worker"; on the calling thread,
# in order, it must get GLOBALREF_ALLOC x2, GLOBALREF_FREE, WEAK_GLOBALREF_
# ALLOC, WEAK_GLOBALREF_FREE, GLOBALREF_FREE with those very ref_ids and the
# object's ID (jobject2jobjectID), and nothing else.
. "$(dirname "$0")/lib.sh"

lib="$AGENTS_DIR/libc_jniref.so"
[ -f "$lib" ] || fail "libc_jniref.so not built"
out="$WORK/jniref.txt"
run_java jniref "$(agent_arg c_jniref "out=$out")" -Dagent.lib="$lib" -cp "$CLASSES" C_JniRef ||
  { tail -30 "$WORK/jniref.err"; [ -f "$out" ] && grep -v '^ok' "$out" | head -40; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/jniref.out" '^C_JniRef done'
[ -s "$out" ] || fail "agent wrote nothing"
expect_no_agent_failures "$out"
for l in 'main marker 1' 'main marker 2' 'main int\[\]' 'worker marker' "worker main's marker" 'main string'; do
  expect_file_has "$out" "^ok $l: GLOBALREF_ALLOC x2, GLOBALREF_FREE, WEAK pair, GLOBALREF_FREE"
done
expect_file_has "$out" '^ok main marker 1: 64 jobjectID2jobject found the object, with no JNI reference event'
# 5 enables + 6 rounds x 4
expect_summary "$out" c_jniref 29
exit 0
