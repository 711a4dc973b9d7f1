#!/bin/bash
# A class the rewriter does not understand is left as it is, and the layer
# says so once for each thing it did not know, not once per class: three
# classes whose first constant has a tag no JDK defines (21 twice, 22) give
# one warning line for each tag, the first class named.  A class file
# version past any JDK's is by itself no reason: that class gives no line.
# (The VM refuses all four classes after the rewriter has seen them.)
. "$(dirname "$0")/lib.sh"

out="$WORK/trace.txt"
run_java run "$(agent_arg h_trace "out=$out,classes=H_Unknown,entry=plain")" -cp "$CLASSES" H_Unknown ||
  { tail -20 "$WORK/run.err"; fail "java exited non-zero"; }
expect_no_crash
[ "$(grep -c ': ClassFormatError$\|: UnsupportedClassVersionError$' "$WORK/run.out")" -eq 4 ] ||
  { cat "$WORK/run.out"; fail "the VM did not refuse the four classes"; }
[ "$(grep -c 'constant pool tag 21' "$WORK/run.err")" -eq 1 ] || fail "not one line for constant pool tag 21"
[ "$(grep -c 'constant pool tag 22' "$WORK/run.err")" -eq 1 ] || fail "not one line for constant pool tag 22"
expect_file_has "$WORK/run.err" 'does not know the constant pool tag 21 that class H_Unknown\$Shape (class file version 61)'
expect_file_lacks "$WORK/run.err" 'left as it is'
expect_file_lacks "$WORK/run.err" 'version 200'
[ "$(wc -l < "$WORK/run.err")" -eq 2 ] || fail "the layer printed more than the two lines"
expect_file_has "$out" '^main E H_Unknown.main(\[Ljava/lang/String;)V 0$'
echo ok
