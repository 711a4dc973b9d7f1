#!/bin/bash
# Capabilities that slow the VM even unused (JVM TI's method events)
# are taken at start-up only for the event families the
# agent enabled in JVM_OnLoad; with methods=jvmti, JVMPI_LAYER_OPTIONS=caps=all
# takes them all (the default class rewriter needs none, and caps=all then
# takes none).
# An agent that enables METHOD_ENTRY later:
#  - by default gets it: the class rewriter needs no start-up capability;
#  - with methods=jvmti gets JVMPI_FAIL and one line naming the option,
#    and JVMPI_SUCCESS with caps=all.
. "$(dirname "$0")/lib.sh"

out="$WORK/rewrite.txt"
run_java rewrite "$(agent_arg d_caps "out=$out")" -cp "$CLASSES" A_Hello || fail "java exited non-zero (rewrite)"
expect_file_has "$out" '^LATE_METHOD_ENTRY 0$'
[ -s "$WORK/rewrite.err" ] && { cat "$WORK/rewrite.err"; fail "the layer printed something (rewrite)"; }
expect_no_crash

# caps=all under the default methods=rewrite takes nothing: the rewriter
# needs none of them (capsprobe, loaded after the layer, sees none held).
out="$WORK/rewrite-all.txt"
JVMPI_LAYER_OPTIONS=caps=all run_java rewrite-all "$(agent_arg d_caps "out=$out")" \
  "-agentpath:$AGENTS_DIR/libcapsprobe.so=$WORK/rewrite-all.caps" -cp "$CLASSES" A_Hello ||
  fail "java exited non-zero (caps=all, rewrite)"
expect_file_has "$out" '^LATE_METHOD_ENTRY 0$'
# Except on JDK 8, which has no stack walker of live frames: there the
# rewriter reads a constructor's receiver (METHOD_ENTRY2) with local
# variable access, which exists only at start-up, and caps=all takes it.
if [ "$JDK_MAJOR" -ge 9 ]; then
  expect_file_has "$WORK/rewrite-all.caps" '^CAPS single_step=0 local_variables=0 method_entry=0 method_exit=0 '
else
  expect_file_has "$WORK/rewrite-all.caps" '^CAPS single_step=0 local_variables=1 method_entry=0 method_exit=0 '
fi
[ -s "$WORK/rewrite-all.err" ] && { cat "$WORK/rewrite-all.err"; fail "the layer printed something (caps=all, rewrite)"; }

out="$WORK/auto.txt"
JVMPI_LAYER_OPTIONS=methods=jvmti run_java auto "$(agent_arg d_caps "out=$out")" -cp "$CLASSES" A_Hello ||
  fail "java exited non-zero (caps=auto)"
expect_file_has "$out" "^LATE_METHOD_ENTRY $(printf '%d' -1)\$"
expect_file_has "$WORK/auto.err" 'METHOD_ENTRY/ENTRY2/EXIT: not available: .*JVMPI_LAYER_OPTIONS=caps=all'
expect_no_crash

out="$WORK/all.txt"
JVMPI_LAYER_OPTIONS=methods=jvmti,caps=all run_java all "$(agent_arg d_caps "out=$out")" \
  "-agentpath:$AGENTS_DIR/libcapsprobe.so=$WORK/all.caps" -cp "$CLASSES" A_Hello || fail "java exited non-zero (caps=all)"
expect_file_has "$out" '^LATE_METHOD_ENTRY 0$'
expect_file_has "$WORK/all.caps" '^CAPS single_step=1 local_variables=1 method_entry=1 method_exit=1 '

JVMPI_LAYER_OPTIONS=caps=some run_java bad "$(agent_arg d_caps "out=$WORK/bad.txt")" -cp "$CLASSES" A_Hello &&
  fail "caps=some was accepted"
expect_file_has "$WORK/bad.err" 'JVMPI_LAYER_OPTIONS: caps=some: expected auto or all'
JVMPI_LAYER_OPTIONS=methods=fast run_java bad2 "$(agent_arg d_caps "out=$WORK/bad2.txt")" -cp "$CLASSES" A_Hello &&
  fail "methods=fast was accepted"
expect_file_has "$WORK/bad2.err" 'JVMPI_LAYER_OPTIONS: methods=fast: expected rewrite or jvmti'
echo "ok"
