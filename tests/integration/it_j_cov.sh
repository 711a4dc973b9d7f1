#!/bin/bash
# A coverage agent as Sun's jcov was (tests/agents/j_cov.c), on J_Cov
# compiled here with javac -Xjcov -g: every method's Code then carries a
# CharacterRangeTable, which the agent reads from CLASS_LOAD_HOOK's bytes.
# Call counts (METHOD_ENTRY) and block and branch counts (INSTRUCTION_START
# at the ranges' offsets) must be exactly those the marks in J_Cov.java
# give, with the class rewriter's hooks (the default) and with JVM TI's
# events (methods=jvmti, which needs caps=all for single stepping).
. "$(dirname "$0")/lib.sh"

lib="$AGENTS_DIR/libj_cov.so"
[ -f "$lib" ] || fail "libj_cov.so not built"
src="$SOURCE_DIR/tests/jcov/J_Cov.java"
mkdir -p "$WORK/classes"
"$JAVA_HOME/bin/javac" -Xjcov -g -d "$WORK/classes" "$src" 2>"$WORK/javac.err" ||
  { cat "$WORK/javac.err"; fail "javac -Xjcov failed"; }
# The marks: "//#S n", "//#B t f" and "//#C name n", several to a line.
awk '{ i = index($0, "//#"); if (!i) next
       n = split(substr($0, i + 3), parts, "#")
       for (k = 1; k <= n; k++) {
         split(parts[k], f, " ")
         if (f[1] == "C") print "C", f[2], f[3]
         else if (f[1] == "S") print "S", NR, f[2]
         else if (f[1] == "B") print "B", NR, f[2], f[3]
       } }' "$src" >"$WORK/expect.txt"
[ "$(wc -l <"$WORK/expect.txt")" -ge 30 ] || { cat "$WORK/expect.txt"; fail "too few marks in J_Cov.java"; }

for mode in rewrite jvmti; do
  out="$WORK/cov-$mode.txt"
  opts=methods=$mode
  [ $mode = jvmti ] && opts="$opts,caps=all"
  JVMPI_LAYER_OPTIONS=$opts run_java "cov-$mode" "$(agent_arg j_cov "out=$out,expect=$WORK/expect.txt")" \
    -cp "$WORK/classes" J_Cov ||
    { tail -30 "$WORK/cov-$mode.err"; [ -f "$out" ] && grep '^FAIL' "$out"; fail "$mode: java exited non-zero"; }
  expect_no_crash
  expect_file_has "$WORK/cov-$mode.out" '^J_Cov: evens=8 odds=7 caught=1 sum=18 onetwotwomany w=4$'
  [ -s "$out" ] || fail "$mode: agent wrote nothing"
  echo "  $mode: $(grep -c '^ok' "$out") checks passed"
  expect_no_agent_failures "$out"
  # the layer has nothing to say about these classes
  expect_file_lacks "$WORK/cov-$mode.err" 'left as it is'
  expect_summary "$out" j_cov 40
done
exit 0
