#!/bin/bash
# Virtual threads are JVMPI threads (JDK 21 and later): agent f_vthreads on
# F_VThreads, 300 virtual threads that allocate, leave their carrier (a
# sleep), come back and allocate again, and one that stays parked.  Each
# has its own THREAD_START, THREAD_END, env_id and thread-local storage,
# its allocations carry its env_id on whichever carrier runs it, and
# GetCallTrace and GetThreadStatus answer for it, mounted or not; MONITOR_DUMP
# and HEAP_DUMP show virtual threads with their monitors, traces and stack
# roots (see the agent's header).  Then JVMPI_LAYER_OPTIONS=vthreads=carriers: none is
# reported, their work is the carriers'.  JDK 17 has no virtual threads.
. "$(dirname "$0")/lib.sh"

[ "$JDK_MAJOR" -ge 21 ] || skip "JDK $JDK_MAJOR has no virtual threads"
[ -f "$AGENTS_DIR/libf_vthreads.so" ] || fail "libf_vthreads.so not built"

# JDK 25's JVM TI reports the stack references of an unmounted virtual
# thread (the heap walk's roots); for others the agent only logs them.
out="$WORK/threads.txt"
opts=$out
[ "$JDK_MAJOR" -ge 25 ] && opts="$out,roots=expect"
run_java threads "$(agent_arg f_vthreads "$opts")" -cp "$CLASSES" F_VThreads 300 ||
  { tail -30 "$WORK/threads.err"; [ -f "$out" ] && cat "$out"; fail "java exited non-zero"; }
expect_no_crash
expect_file_has "$WORK/threads.out" '^F_VThreads done: 300 virtual threads'
expect_no_agent_failures "$out"
expect_summary "$out" f_vthreads 11
[ "$JDK_MAJOR" -lt 25 ] || expect_file_has "$out" '^ok HEAP_DUMP: [0-9]* stack roots name fv-parked'
expect_file_has "$out" "^ok one MONITOR_CONTENDED_ENTER with fv-blocked's env_id"
expect_file_has "$out" '^ok 303 virtual threads started, 303 ended'
expect_file_has "$out" '^ok MONITOR_DUMP: a Java monitor owned by fv-holder, fv-blocked waiting to enter it'
expect_file_has "$out" '^ok 300 of 300 fv-N threads allocated both F_VtWork under their own env_id'
expect_file_has "$out" '^ok 600 of 600 F_VtWork allocations: GetCallTrace names work()'
expect_file_lacks "$WORK/threads.err" 'JVMPI layer'

out="$WORK/carriers.txt"
JVMPI_LAYER_OPTIONS=vthreads=carriers run_java carriers "$(agent_arg f_vthreads "$out,expect=carriers")" \
  -cp "$CLASSES" F_VThreads 100 ||
  { tail -30 "$WORK/carriers.err"; [ -f "$out" ] && cat "$out"; fail "java exited non-zero (vthreads=carriers)"; }
expect_no_crash
expect_no_agent_failures "$out"
expect_summary "$out" f_vthreads 2
expect_file_has "$out" '^ok vthreads=carriers: no virtual thread reported'
# The HPROF work-alike's cpu=samples on two CPU-bound virtual threads: the
# samples name their hot method (with vthreads=carriers, the carriers'
# frames hide it: what the layer did before it knew virtual threads).
rank1() { awk '/^CPU SAMPLES BEGIN/ { on = 1; next } on && $1 == "1" { print $6; exit }' "$1"; }
hprof_samples() {
  run_java "$1" "-agentpath:$LAYER=hprof:cpu=samples,file=$WORK/$1.txt" -cp "$CLASSES" F_VtBusy 2 ||
    { tail -20 "$WORK/$1.err"; fail "cpu=samples ($1): java exited non-zero"; }
  expect_file_has "$WORK/$1.out" '^F_VtBusy done'
  expect_file_has "$WORK/$1.txt" '^CPU SAMPLES END'
}
hprof_samples samples
top=$(rank1 "$WORK/samples.txt")
[ "$top" = F_VtBusy.spin ] ||
  { sed -n '/^CPU SAMPLES BEGIN/,/^CPU SAMPLES END/p' "$WORK/samples.txt" | head -8; fail "cpu=samples: rank 1 is '$top', not F_VtBusy.spin"; }
JVMPI_LAYER_OPTIONS=vthreads=carriers hprof_samples samples-carriers
expect_file_lacks "$WORK/samples-carriers.txt" ' F_VtBusy\.spin$'
note "f_vthreads: all checks passed"
exit 0
