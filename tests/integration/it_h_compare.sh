#!/bin/bash
# Method and instruction events from the layer's class rewriter against JVM
# TI's own MethodEntry/MethodExit and SingleStep (methods=jvmti), event by
# event: the h_trace agent writes each thread's METHOD_ENTRY2/METHOD_EXIT and
# INSTRUCTION_START (offset and branch details) of H_Shapes' classes and of
# java.lang.Short (a bootstrap class, loaded before VM init), in order; both runs must write the
# same lines, thread by thread, with the same receivers given or not.  Once
# more without INSTRUCTION_START ("leaves"): then the rewriter reports the
# entry and exit of a leaf (a getter, say) from one call at its start.
#
# Left out of the comparison, as docs/differences.md says: the methods of
# hidden classes (the lambda and method reference proxies, H_Shapes$$Lambda),
# which JVM TI reports but which no ClassFileLoadHook ever shows the layer.
# H_Shapes' own natives are compared (the rewriter wraps them); the JDK's
# natives of classes loaded before VM init are not reported by the rewriter
# (java.lang.Short has none).
. "$(dirname "$0")/lib.sh"

classes='H_Shapes|java.lang.Short'
for mode in rewrite jvmti; do
  for how in normal escape leaves; do
    arg= steps=y
    [ $how = escape ] && arg=escape
    [ $how = leaves ] && steps=n
    out="$WORK/$mode-$how.txt"
    JVMPI_LAYER_OPTIONS=methods=$mode run_java "$mode-$how" "$(agent_arg h_trace "out=$out,classes=$classes,steps=$steps")" \
      -Xverify:all -Dagent.lib="$AGENTS_DIR/libh_trace.so" -cp "$CLASSES" H_Shapes $arg
    rc=$?
    want=0
    [ $how = escape ] && want=1
    [ $rc = $want ] || { tail -20 "$WORK/$mode-$how.err"; fail "$mode/$how: exit code $rc, expected $want"; }
    expect_file_has "$WORK/$mode-$how.out" '^H_Shapes: sum='
    expect_no_crash
  done
done
# The escape runs' stderr is the stack trace of the uncaught exception alone.
# JDK 24 and later warn of System.load (the program loads its natives): nothing else.
for f in "$WORK"/rewrite-normal.err "$WORK"/jvmti-normal.err; do
  grep -v -e '^WARNING: ' -e '^$' "$f" && fail "the layer or the VM printed something: $(basename "$f")"
done

# On JDK 8 two things are left out of the comparison (the rewriter's own
# lines are still checked below): receivers, which methods=jvmti does not
# read there (docs/differences.md, "METHOD_ENTRY2 of a constructor on JDK
# 8"), and the instruction steps of java.lang.Short and its nested class, which
# HotSpot 8's SingleStep did not report in these runs where the rewriter does (not yet looked into).
jdk8_view() {
  if [ "$JDK_MAJOR" -ge 9 ]; then
    cat
  else
    sed -E 's/^(\S+ E \S+) [01]$/\1/' | grep -v '^[^ ]* I java\.lang\.Short[.$]'
  fi
}
compare() {
  local how=$1 t
  for t in main h-dies; do
    grep "^$t [EXI] " "$WORK/rewrite-$how.txt" | grep -v '\$\$Lambda' | jdk8_view >"$WORK/rewrite-$how-$t.seq"
    grep "^$t [EXI] " "$WORK/jvmti-$how.txt" | grep -v '\$\$Lambda' | jdk8_view >"$WORK/jvmti-$how-$t.seq"
    [ -s "$WORK/jvmti-$how-$t.seq" ] || fail "$how: no method events on thread $t with JVM TI's events"
    diff -u "$WORK/jvmti-$how-$t.seq" "$WORK/rewrite-$how-$t.seq" >"$WORK/$how-$t.diff" ||
      { head -40 "$WORK/$how-$t.diff"; fail "$how, thread $t: the rewriter's events differ from JVM TI's"; }
    note "$how, thread $t: $(wc -l <"$WORK/jvmti-$how-$t.seq") events alike"
  done
}
compare normal
compare escape
compare leaves

seq=$WORK/rewrite-normal-main.seq
[ "$JDK_MAJOR" -ge 9 ] || { grep "^main [EXI] " "$WORK/rewrite-normal.txt" >"$seq"; grep "^main [EXI] " "$WORK/rewrite-leaves.txt" >"$WORK/rewrite-leaves-main.seq"; }
# Each shape is there (so that an empty or partial trace cannot pass).
for want in 'E H_Shapes.fact(I)I 0' 'X H_Shapes.thrower(I)V' 'E H_Shapes.<init>()V 1' 'E H_Shapes.<init>(I)V 1' \
            'E H_Shapes.syncInstance(I)I 1' 'E H_Shapes\$Box.make(Ljava/lang/Object;)Ljava/lang/Object; 1' \
            'E H_Shapes\$Lazy.<clinit>()V 0' 'E H_Shapes.lambda\$main\$0(I)I 0' 'E H_Shapes.helper()V 0' \
            'E java.lang.Short.parseShort(Ljava/lang/String;)S 0' 'E H_Shapes.<clinit>()V 0' \
            'E H_Shapes.twice(I)I 0' 'E H_Shapes.mix(JDLjava/lang/String;)J 1' \
            'X H_Shapes.raise(Ljava/lang/String;)V'; do
  grep -q -- "^main $want" "$seq" || fail "no '$want' on main"
done
# Instruction steps are there, a branch seen both taken (1) and not (0).
for want in 'I H_Shapes.fact(I)I 2 1 0 0' 'I H_Shapes.fact(I)I 2 0 0 0' 'I H_Shapes.fact(I)I 16 0 0 0'; do
  grep -q -- "^main $want" "$seq" || fail "no '$want' on main"
done
# The leaves, each entry followed by its exit, with the getter's receiver.
for want in 'getV()I 1' 'setW(I)V 1' 'getSeed()I 0' 'max(II)I 0'; do
  grep -A1 -- "^main E H_Shapes.$want\$" "$WORK/rewrite-leaves-main.seq" | tail -1 | grep -q -- "^main X H_Shapes.${want%% *}" ||
    fail "no entry and exit of the leaf $want"
done
grep -A1 -- '^main E java.lang.Short.shortValue()S 1$' "$WORK/rewrite-leaves-main.seq" | grep -q '^main X java.lang.Short.shortValue' ||
  fail "no entry and exit of the JDK's leaf Short.shortValue"
grep -q '^h-dies X H_Shapes.dies()V' "$WORK/rewrite-normal-h-dies.seq" || fail "the exit of dies(), left by an exception, is missing"
grep -q '^main X H_Shapes.main(\[Ljava/lang/String;)V' "$WORK/rewrite-escape-main.seq" ||
  fail "the exit of main, left by an exception, is missing"
echo ok
