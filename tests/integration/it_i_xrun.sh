#!/bin/bash
# The unchanged -Xrun command line (JAVA_TOOL_OPTIONS=-agentpath:libjvmpi.so,
# java -Xrun<agent>) costs nothing an agent does not use.  The VM calls an
# -Xrun agent's JVM_OnLoad after the OnLoad phase, the only phase HotSpot
# grants single stepping, local variable access and method entry/exit in:
# the layer cannot know then what the agent will enable.  It takes none of
# them: the class rewriter gives method events, receivers and instruction
# steps without them.  For each family (methods, receivers, instructions,
# monitors, allocations and collections, compiled methods, JNI references,
# monitor and heap dumps, and method and instruction events enabled late,
# at JVM_INIT_DONE), an -Xrun agent that enables it gets its events (i_xrun
# checks them on I_Xrun, whose loop C2 compiles), and a plain JVM TI helper
# (capsprobe) shows that no one in the VM holds any OnLoad-only capability
# that slows compiled code.  The monitor information capabilities (for
# MONITOR_DUMP) are held: on JDK 17 and later they cost compiled code
# nothing (see docs/design.md).  With methods=jvmti the layer has no other
# way and takes the four of JVM TI's method events up front when an -Xrun
# agent is on the command line, and none when there is none.  JDWP, which
# holds them all, shows the probe sees each.
. "$(dirname "$0")/lib.sh"

probe="$AGENTS_DIR/libcapsprobe.so"
[ -f "$probe" ] && [ -f "$AGENTS_DIR/libi_xrun.so" ] || fail "capsprobe or i_xrun not built"
# Costly to compiled code even unused, and granted only in the OnLoad phase:
# none may be held.  MONITOR_DUMP's two cost nothing on JDK 17 and later and
# must be held, for an -Xrun agent's MONITOR_DUMP.
costly='single_step=0 local_variables=0 method_entry=0 method_exit=0 breakpoints=0 frame_pop=0 exceptions=0 pop_frame=0 early_return=0 field_access=0 field_modification=0'
monitor_caps='owned_monitor=1 contended_monitor=1'
# JDK 8 has no stack walker of live frames: a constructor's receiver, for
# METHOD_ENTRY2, is read with local variable access, granted only in the
# OnLoad phase, before an -Xrun agent can say whether it wants METHOD_ENTRY2.
# There the layer holds it for every -Xrun agent (group=receiver checks the
# receivers it gives), so JDK 8's C2 does without escape analysis.
xrun_costly=$costly
[ "$JDK_MAJOR" -ge 9 ] || xrun_costly=${costly/local_variables=0/local_variables=1}

xrun() { # NAME GROUP [layer options]
  JAVA_TOOL_OPTIONS="-agentpath:$LAYER" LD_LIBRARY_PATH="$AGENTS_DIR" JVMPI_LAYER_OPTIONS="${3:-}" \
    run_java "$1" "-agentpath:$probe=$WORK/$1.caps" "-Xruni_xrun:group=$2,out=$WORK/$1.txt" -cp "$CLASSES" I_Xrun
}

# expect_group NAME GROUP N: the run went well and i_xrun passed N checks of
# the group's own events (its "ok <group>: " lines): an ignored group=
# option, which would check nothing of the group, fails here.
expect_group() {
  local n
  expect_no_crash
  expect_file_has "$WORK/$1.out" '^I_Xrun: sum='
  expect_no_agent_failures "$WORK/$1.txt"
  expect_summary "$WORK/$1.txt" i_xrun "$3"
  n=$(grep -c "^ok $2: " "$WORK/$1.txt")
  [ "$n" = "$3" ] || { grep '^ok' "$WORK/$1.txt"; fail "$1: $n checks of group $2 passed, expected $3"; }
}

# group, then how many checks of its own events i_xrun makes
for g in none:1 methods:1 receiver:2 instructions:2 monitors:2 alloc:3 compiled:1 jniref:1 dump:2 late:3; do
  group=${g%%:*}
  xrun "$group" "$group" || { tail -20 "$WORK/$group.err"; fail "$group: java exited non-zero"; }
  expect_group "$group" "$group" "${g#*:}"
  expect_file_has "$WORK/$group.caps" "^CAPS $xrun_costly $monitor_caps\$"
  # Nothing but the launcher's note of JAVA_TOOL_OPTIONS on stderr.
  grep -v '^Picked up JAVA_TOOL_OPTIONS' "$WORK/$group.err" && fail "$group: something was printed"
  note "$group: $(grep '^CAPS' "$WORK/$group.caps")"
done

# methods=jvmti has no other way than JVM TI's events: all four are taken up
# front for an -Xrun agent, also beside an -agentpath one (d_caps, which
# enables nothing costly itself and METHOD_ENTRY at JVM_INIT_DONE)...
with_jvmti='single_step=1 local_variables=1 method_entry=1 method_exit=1 breakpoints=0 frame_pop=0 exceptions=0 pop_frame=0 early_return=0 field_access=0 field_modification=0'
xrun jvmti methods methods=jvmti || { tail -20 "$WORK/jvmti.err"; fail "methods=jvmti: java exited non-zero"; }
expect_group jvmti methods 1
expect_file_has "$WORK/jvmti.caps" "^CAPS $with_jvmti $monitor_caps\$"
LD_LIBRARY_PATH="$AGENTS_DIR" JVMPI_LAYER_OPTIONS=methods=jvmti run_java mixed "$(agent_arg d_caps "out=$WORK/mixed-d_caps.txt")" \
  "-agentpath:$probe=$WORK/mixed.caps" "-Xruni_xrun:group=methods,out=$WORK/mixed.txt" -cp "$CLASSES" I_Xrun ||
  { tail -20 "$WORK/mixed.err"; fail "methods=jvmti, -agentpath and -Xrun: java exited non-zero"; }
expect_group mixed methods 1
expect_file_has "$WORK/mixed-d_caps.txt" '^LATE_METHOD_ENTRY 0$'
expect_file_has "$WORK/mixed.caps" "^CAPS $with_jvmti $monitor_caps\$"
# ... and none in a JVM with no -Xrun agent, the layer waiting in vain.
JAVA_TOOL_OPTIONS="-agentpath:$LAYER" JVMPI_LAYER_OPTIONS=methods=jvmti run_java noxrun "-agentpath:$probe=$WORK/noxrun.caps" \
  -cp "$CLASSES" I_Xrun || { tail -20 "$WORK/noxrun.err"; fail "methods=jvmti, no -Xrun agent: java exited non-zero"; }
expect_file_has "$WORK/noxrun.caps" "^CAPS $costly $monitor_caps\$"

# The probe sees each of them when someone holds it: JDWP takes them all.
run_java jdwp "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0" \
  "-agentpath:$probe=$WORK/jdwp.caps" -cp "$CLASSES" I_Xrun || fail "JDWP: java exited non-zero"
note "jdwp: $(cat "$WORK/jdwp.caps")"
expect_file_has "$WORK/jdwp.caps" "^CAPS \([a-z_]*=1 \)*[a-z_]*=1\$"
echo ok
