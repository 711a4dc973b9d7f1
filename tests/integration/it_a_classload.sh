#!/bin/bash
# CLASS_LOAD of known classes against what reflection says about them.
#
# A_ClassShapes writes its reflection view (reflect.txt); the a_classload agent
# writes its CLASS_LOAD view of the same classes (agent.txt, lines "VIEW ...").
# Both list methods (constructors as <init>), static and instance fields with
# their descriptors, the direct interface count and the source file.
# Compared order-insensitively: neither JVMPI nor reflection promises an order.
#
# Known difference: JVMPI lists the static initializer <clinit> as a method
# (JDK 5.0 reported every method of the class file); reflection cannot see it.
# So <clinit> is removed from the agent's view before comparing, and checked
# separately: present in A_Shape (it has a static block), absent in
# A_ShapeOne (its only field is a compile-time constant, so javac emits no
# <clinit>).
. "$(dirname "$0")/lib.sh"
needs_class A_ClassShapes

SRC="$SOURCE_DIR/tests/java/A_ClassShapes.java"
run_java run "$(agent_arg a_classload "out=$WORK/agent.txt")" -cp "$CLASSES" \
  A_ClassShapes "$WORK/reflect.txt" || { cat "$WORK/run.err"; fail "java exited non-zero"; }
expect_file_has "$WORK/run.out" '^total='
[ -s "$WORK/agent.txt" ] || fail "agent wrote nothing (not loaded?)"
expect_file_has "$WORK/agent.txt" '^START'
expect_file_has "$WORK/agent.txt" '^DONE '
expect_no_agent_failures "$WORK/agent.txt"

# Dotted names for JDK classes and for the test's own classes.
for c in java.lang.Object java.lang.String java.lang.Thread java.util.HashMap \
         A_ClassShapes 'A_ClassShapes\$Nested' A_Shape A_ShapeOne; do
  expect_file_has "$WORK/agent.txt" "^NAME $c\$"
done
expect_file_lacks "$WORK/agent.txt" '^NAME java/lang/'

# Each class exactly once (the start-up replay and ClassPrepare must not both
# report one class; the agent checks class_id uniqueness separately).
for c in A_ClassShapes A_Shape A_ShapeBase A_ShapeOne A_ShapeTwo A_ShapeMark; do
  n=$(grep -c "^NAME $c\$" "$WORK/agent.txt")
  [ "$n" = 1 ] || fail "CLASS_LOAD of $c seen $n times"
done

sed -n 's/^VIEW //p' "$WORK/agent.txt" | grep -v ' METHOD <clinit> ' | sort >"$WORK/agent.view"
sort "$WORK/reflect.txt" >"$WORK/reflect.view"
[ -s "$WORK/reflect.view" ] || fail "program wrote no reflection view"
if ! diff -u "$WORK/reflect.view" "$WORK/agent.view" >"$WORK/view.diff"; then
  cat "$WORK/view.diff"
  fail "CLASS_LOAD view differs from reflection (- reflection, + JVMPI)"
fi
note "CLASS_LOAD view equals reflection for $(cut -d' ' -f1 "$WORK/reflect.view" | sort -u | wc -l) classes"

expect_file_has "$WORK/agent.txt" '^VIEW A_Shape METHOD <clinit> ()V$'
expect_file_lacks "$WORK/agent.txt" '^VIEW A_ShapeOne METHOD <clinit> '
# Direct interfaces only: A_Shape names 2, and inherits a third (A_ShapeMark).
expect_file_has "$WORK/agent.txt" '^VIEW A_Shape INTERFACES 2$'
expect_file_has "$WORK/agent.txt" '^VIEW A_ShapeTwo INTERFACES 1$'
expect_file_has "$WORK/agent.txt" '^VIEW A_Shape SOURCE A_ClassShapes.java$'

# start/end line of A_Shape.compute are those of its first and last statement
# (first and last bytecode: a straight-line method ending in a return).
first=$(grep -n 'A-FIRST-LINE' "$SRC" | head -1 | cut -d: -f1)
last=$(grep -n 'A-LAST-LINE' "$SRC" | head -1 | cut -d: -f1)
[ -n "$first" ] && [ -n "$last" ] || fail "markers not found in $SRC"
got=$(grep '^LINES A_Shape compute (I)I ' "$WORK/agent.txt")
[ "$got" = "LINES A_Shape compute (I)I $first $last" ] ||
  fail "A_Shape.compute lines: expected '$first $last', agent saw '${got:-nothing}'"
note "compute(I)I spans lines $first-$last as in the source"
exit 0
