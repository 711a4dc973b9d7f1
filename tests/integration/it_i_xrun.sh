#!/bin/bash
# The unchanged -Xrun command line (JAVA_TOOL_OPTIONS=-agentpath:libjvmpi.so,
# java -Xrun<agent>) costs nothing an agent does not use.  The VM calls an
# -Xrun agent's JVM_OnLoad after the OnLoad phase, the only phase HotSpot
# grants single stepping, local variable access and method entry/exit in:
# the layer cannot know then what the agent will enable.  It takes none of
# them: the class rewriter gives method events, receivers and instruction
# steps without them.  For each family, an -Xrun agent that enables it in
# JVM_OnLoad gets its events (i_xrun checks them on I_Xrun), and a plain
# JVM TI helper (capsprobe) shows that no one in the VM holds any of the
# four.  The monitor information capabilities (for MONITOR_DUMP) are held:
# on JDK 17 and later they cost compiled code nothing (see docs/mapping.md).
# With methods=jvmti the layer has no other way and takes all four up front.
. "$(dirname "$0")/lib.sh"

probe="$AGENTS_DIR/libcapsprobe.so"
[ -f "$probe" ] && [ -f "$AGENTS_DIR/libi_xrun.so" ] || fail "capsprobe or i_xrun not built"
costly='single_step=0 local_variables=0 method_entry=0 method_exit=0'

xrun() { # NAME GROUP [layer options]
  JAVA_TOOL_OPTIONS="-agentpath:$LAYER" LD_LIBRARY_PATH="$AGENTS_DIR" JVMPI_LAYER_OPTIONS="${3:-}" \
    run_java "$1" "-agentpath:$probe=$WORK/$1.caps" "-Xruni_xrun:group=$2,out=$WORK/$1.txt" -cp "$CLASSES" I_Xrun
}

for group in none methods receiver instructions monitors; do
  xrun "$group" "$group" || { tail -20 "$WORK/$group.err"; fail "$group: java exited non-zero"; }
  expect_no_crash
  expect_file_has "$WORK/$group.out" '^I_Xrun: sum='
  expect_no_agent_failures "$WORK/$group.txt"
  expect_summary "$WORK/$group.txt" i_xrun 2
  expect_file_has "$WORK/$group.caps" "^CAPS $costly "
  # Nothing but the launcher's note of JAVA_TOOL_OPTIONS on stderr.
  grep -v '^Picked up JAVA_TOOL_OPTIONS' "$WORK/$group.err" && fail "$group: something was printed"
  note "$group: $(grep '^CAPS' "$WORK/$group.caps")"
done

xrun jvmti methods methods=jvmti || { tail -20 "$WORK/jvmti.err"; fail "methods=jvmti: java exited non-zero"; }
expect_summary "$WORK/jvmti.txt" i_xrun 2
expect_file_has "$WORK/jvmti.caps" '^CAPS single_step=1 local_variables=1 method_entry=1 method_exit=1 '
echo ok
