#!/bin/bash
# METHOD_ENTRY / METHOD_ENTRY2 / METHOD_EXIT: D_Methods
# calls known methods a known number of times on two threads, some leaving
# by an exception; the d_methods agent (enabled in JVM_OnLoad) counts them
# exactly per thread, checks ENTRY2's receiver against jobject2jobjectID and
# NULL for static methods, then switches the events off and checks that the
# JIT compiles a hot method again.  Twice: with the layer's class rewriter
# (the default), whose hooks leave the JIT on while the events are on, and
# with JVM TI's MethodEntry/MethodExit (methods=jvmti), under which HotSpot
# compiles nothing the interpreter-only threads ask for.  No JVM flags:
# compilation must come from the default tiered policy.
. "$(dirname "$0")/lib.sh"

lib="$AGENTS_DIR/libd_methods.so"
[ -f "$lib" ] || fail "libd_methods.so not built"
modes="rewrite jvmti"
# With methods=jvmti on JDK 8, METHOD_ENTRY2 names no receiver: HotSpot 8
# upsets the program when a local is read in MethodEntry (docs/differences.md,
# "METHOD_ENTRY2 of a constructor on JDK 8"), and this test checks them.
if [ "$JDK_MAJOR" -lt 9 ]; then
  modes=rewrite
  note "methods=jvmti: not run on JDK 8, whose MethodEntry gives no receivers"
fi
for mode in $modes; do
  out="$WORK/methods-$mode.txt"
  jit=on
  [ $mode = jvmti ] && jit=off
  JVMPI_LAYER_OPTIONS=methods=$mode run_java "methods-$mode" "$(agent_arg d_methods "out=$out,jit=$jit")" \
    -Dagent.lib="$lib" -cp "$CLASSES" D_Methods ||
    { tail -30 "$WORK/methods-$mode.err"; [ -f "$out" ] && grep '^FAIL' "$out" | head -40; fail "java exited non-zero ($mode)"; }
  expect_no_crash
  expect_file_has "$WORK/methods-$mode.out" '^D_Methods: caught=2000 '
  [ -s "$out" ] || fail "agent wrote nothing ($mode)"
  expect_no_agent_failures "$out"
  # 7 EnableEvent, 3 DisableEvent, 21 counts, 7 "no other thread", 9 more.
  expect_summary "$out" d_methods 47
  # JDK 24 and later warn about System.load (the program loads the agent's natives): nothing else.
  grep -v -e '^WARNING: ' -e '^$' "$WORK/methods-$mode.err" && fail "the layer or the VM printed something ($mode)"
  note "$mode: $(grep '^D_Methods:' "$WORK/methods-$mode.out")"
done
exit 0
