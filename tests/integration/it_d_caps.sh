#!/bin/bash
# Capabilities that slow the VM even unused (method events, MONITOR_DUMP) are
# taken at start-up only for the event families the agent enabled in
# JVM_OnLoad; JVMPI_LAYER_OPTIONS=caps=all takes them all.  An agent that
# enables METHOD_ENTRY later gets JVMPI_FAIL and one line naming the option
# under the default, and JVMPI_SUCCESS with caps=all.
. "$(dirname "$0")/lib.sh"

out="$WORK/auto.txt"
run_java auto "$(agent_arg d_caps "out=$out")" -cp "$CLASSES" A_Hello || fail "java exited non-zero (caps=auto)"
expect_file_has "$out" "^LATE_METHOD_ENTRY $(printf '%d' -1)\$"
expect_file_has "$WORK/auto.err" 'METHOD_ENTRY/ENTRY2/EXIT: not available: .*JVMPI_LAYER_OPTIONS=caps=all'
expect_no_crash

out="$WORK/all.txt"
JVMPI_LAYER_OPTIONS=caps=all run_java all "$(agent_arg d_caps "out=$out")" -cp "$CLASSES" A_Hello ||
  fail "java exited non-zero (caps=all)"
expect_file_has "$out" '^LATE_METHOD_ENTRY 0$'

JVMPI_LAYER_OPTIONS=caps=some run_java bad "$(agent_arg d_caps "out=$WORK/bad.txt")" -cp "$CLASSES" A_Hello &&
  fail "caps=some was accepted"
expect_file_has "$WORK/bad.err" 'JVMPI_LAYER_OPTIONS: caps=some: expected auto or all'
echo "ok"
