#!/bin/bash
# METHOD_ENTRY / METHOD_ENTRY2 / METHOD_EXIT: D_Methods
# calls known methods a known number of times on two threads, some leaving
# by an exception; the d_methods agent (enabled in JVM_OnLoad) counts them
# exactly per thread, checks ENTRY2's receiver against jobject2jobjectID and
# NULL for static methods, then switches the events off and checks that the
# JIT compiles a hot method again (while on, HotSpot compiles nothing the
# interpreter-only threads ask for).  No JVM flags: compilation must come
# from the default tiered policy.
. "$(dirname "$0")/lib.sh"

lib="$AGENTS_DIR/libd_methods.so"
[ -f "$lib" ] || fail "libd_methods.so not built"
out="$WORK/methods.txt"
run_java methods "$(agent_arg d_methods "out=$out")" -Dagent.lib="$lib" -cp "$CLASSES" D_Methods ||
  { tail -30 "$WORK/methods.err"; [ -f "$out" ] && grep '^FAIL' "$out" | head -40; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/methods.out" '^D_Methods: caught=2000 '
[ -s "$out" ] || fail "agent wrote nothing"
expect_no_agent_failures "$out"
# 7 EnableEvent, 3 DisableEvent, 21 counts, 7 "no other thread", 7 more.
expect_summary "$out" d_methods 45
note "$(grep '^D_Methods:' "$WORK/methods.out")"
exit 0
