#!/bin/bash
# Signals at any moment of a run, exit included, never hang the JVM (S_Exit:
# a worker calls System.exit(3) while others allocate).  Each run sends a
# SIGQUIT storm (a thread-dump request every 20 ms) from the moment the VM
# can take signals until the process is gone: through the layer's start-up,
# the run and the exit.  Some runs send a SIGTERM or SIGINT in the storm.
# The agents take their own raw monitor in DATA_DUMP_REQUEST and
# JVM_SHUT_DOWN and call RunGC under it: the HPROF work-alike (heap=sites)
# and s_sigexit (tests/agents/s_sigexit.c), in turn.  Every run must end
# within HANG_S seconds (else it is killed and named a hang, with what each
# of its threads was doing), with exit code 3 (or the signal's, 143 or 130,
# when the SIGTERM/SIGINT came first) and the agent's complete profile.
. "$(dirname "$0")/lib.sh"
. "$SOURCE_DIR/tests/hprof/hprof_lib.sh"
require_hprof S_Exit
[ -f "$AGENTS_DIR/libs_sigexit.so" ] || fail "libs_sigexit.so not built"

RUNS=${SIGEXIT_RUNS:-$(scaled 50 15)}
HANG_S=${SIGEXIT_HANG_S:-12}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# alive PID: the child has not exited (a zombie has).
alive() {
  local st
  st=$(sed -n 's/^[0-9]* ([^)]*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null)
  [ -n "$st" ] && [ "$st" != Z ]
}
# At VM death HotSpot flushes pending ObjectFree events on the exiting
# thread and can deadlock there with the Service Thread while a VM operation
# (SIGQUIT's thread dump, a collection) waits: the layer posts those frees
# itself first (jvmti_backend/exitfrees.c).  A hang there fails too.

# run_one I: one run, its agent, signals and timings chosen from I.
run_one() {
  local i=$1 agent out arg extra="no other signal" exit_ms storm_ms
  exit_ms=$(( (i * 37) % 500 + 100 ))
  storm_ms=$(( (i * 53) % 200 ))
  case $(( i % 5 )) in 3) extra=TERM ;; 4) extra=INT ;; esac
  out="$WORK/run$i.txt"
  if (( i % 2 == 0 )); then
    agent=hprof
    arg=$(hprof_arg "heap=sites,file=$out")
  else
    agent=s_sigexit
    arg=$(agent_arg s_sigexit "$out")
  fi
  "$JAVA" -Xmx64m "$arg" -cp "$CLASSES" S_Exit "$exit_ms" >"$WORK/run$i.out" 2>"$WORK/run$i.err" &
  local pid=$! t0 sent=0 rc
  t0=$(now_ms)
  # Signals before the VM has its handlers would end it as SIGQUIT's default
  # does: the storm starts with its Signal Dispatcher (named "Signal
  # ..atcher" from JDK 27 on, which shortens long thread names in the middle).
  while alive "$pid" && ! grep -qs '^Signal \(Dispatch\|\.\.atcher\)' /proc/"$pid"/task/*/comm; do
    sleep 0.005
  done
  sleep "$(printf '0.%03d' "$storm_ms")"
  while alive "$pid"; do
    if (( $(now_ms) - t0 > HANG_S * 1000 )); then
      echo "--- run $i ($agent, $extra): threads after ${HANG_S}s:"
      hang_stacks "$pid" "$WORK/hang.gdb"
      kill -KILL "$pid"
      wait "$pid"
      tail -20 "$WORK/run$i.err"
      fail "run $i ($agent, SIGQUIT storm, $extra, exit after ${exit_ms} ms) hung: killed after ${HANG_S} s"
    fi
    kill -QUIT "$pid" 2>/dev/null
    sent=$((sent + 1))
    if (( sent == 8 )) && [ "$extra" != "no other signal" ]; then
      kill -"$extra" "$pid" 2>/dev/null
    fi
    sleep 0.02
  done
  wait "$pid"
  rc=$?
  local ok="3"
  case $extra in TERM) ok="3 143" ;; INT) ok="3 130" ;; esac
  [[ " $ok " == *" $rc "* ]] || { tail -20 "$WORK/run$i.err"; fail "run $i ($agent, $extra): exit code $rc, expected one of: $ok"; }
  expect_no_crash
  expect_file_lacks "$WORK/run$i.err" 'JVMPI layer: \(warning\|error\)'
  if [ "$agent" = hprof ]; then
    # Complete: the threads, then the SITES section written at exit, last.
    expect_file_has "$out" '^THREAD START'
    [ "$(grep -v '^$' "$out" | tail -1)" = "SITES END" ] ||
      { tail -5 "$out"; fail "run $i (hprof, $extra): the profile does not end with its SITES section"; }
  else
    expect_no_agent_failures "$out"
    expect_file_has "$out" '^s_sigexit: complete, [1-9][0-9]* allocations'
  fi
  quits=$((quits + sent))
}

quits=0
start=$(now_ms)
for ((i = 0; i < RUNS; i++)); do
  run_one "$i"
done
(( quits > 0 )) || fail "no signal was sent in $RUNS runs: the VM's Signal Dispatcher thread was never seen"
note "$RUNS runs, $quits signals, $(( ($(now_ms) - start) / 1000 )) s: none hung, every exit code and profile as expected"
exit 0
