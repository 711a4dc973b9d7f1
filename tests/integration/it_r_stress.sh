#!/bin/bash
# The reliability suite: load and fault cases (tests/java/R_Stress.java), each
# run once with the HPROF work-alike (heap=all: SITES and a HEAP DUMP at exit,
# cpu=samples, monitor=y) and once with e_strict (tests/agents/e_strict.c,
# which aborts on any ID before its defining event, with a heap and monitor
# dump during the run):
#   contend   200 threads on 4 monitors (entries, waits, notifies)
#   churn     1500 threads, 200 alive at a time, on 20 monitors: owners end
#             while others block on what they held (JDK 8 could free an
#             owner while the layer asked for it: jvmti_backend/monowner.c)
#   short     short-lived threads, 16 alive at a time
#   throw     exceptions thrown and caught, each with a stack trace
#   unload    classes from throw-away loaders, each unloaded
#   oom       the heap filled to OutOfMemoryError, caught and survived, 10 times
#   vthreads  virtual threads (JDK 21 and later)
# Sized so the whole script takes about a minute per JDK on a quiet 2-core
# machine (R_STRESS_SCALE=N multiplies the sizes, for a longer soak).  Each
# run must: end within HANG_S seconds (else it is named a hang, with the
# layer's and agent's frames of every thread, and killed), keep its exit
# code, write the program's last line and the agent's complete output (every
# closing section of HPROF; e_strict's summary with no failed check), and
# leave no layer warning or error line and no hs_err file.  Every run is
# made whatever the earlier ones gave, so one log shows every problem.
. "$(dirname "$0")/lib.sh"
. "$SOURCE_DIR/tests/hprof/hprof_lib.sh"
require_hprof R_Stress
[ -f "$AGENTS_DIR/libe_strict.so" ] || fail "libe_strict.so not built"
ulimit -c 0

SCALE=${R_STRESS_SCALE:-1}
HANG_S=${R_STRESS_HANG_S:-45}
PROBLEMS=()

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# verdict NAME AGENT CASE RC WANT: judges run NAME (see the top).
verdict() {
  local name=$1 agent=$2 what=$3 rc=$4 want=$5 f="$WORK/$1.txt" s h
  [ "$rc" = hang ] && return 1
  [ "$rc" = "$want" ] || { tail -5 "$WORK/$name.err"; echo "exit code $rc, expected $want"; return 1; }
  for h in "$WORK/$name"/hs_err*; do
    [ -e "$h" ] && { head -20 "$h"; echo "the JVM crashed ($(basename "$h"))"; return 1; }
  done
  grep -q "^R_Stress $what done: " "$WORK/$name.out" || { echo "the program never finished its work"; return 1; }
  if grep -q 'JVMPI layer: \(warning\|error\)' "$WORK/$name.err"; then
    grep 'JVMPI layer' "$WORK/$name.err" | head -5
    echo "the layer printed a warning or error"
    return 1
  fi
  [ -s "$f" ] || { echo "the agent wrote nothing"; return 1; }
  if [ "$agent" = hprof ]; then
    for s in 'SITES' 'HEAP DUMP' 'CPU SAMPLES' 'MONITOR TIME' 'MONITOR DUMP'; do
      grep -q "^$s END" "$f" || { tail -5 "$f"; echo "no '$s END' in the profile"; return 1; }
    done
    # JDK 8's HPROF's order, which the work-alike follows: the CPU section last.
    [ "$(grep -v '^$' "$f" | tail -1)" = "CPU SAMPLES END" ] ||
      { tail -5 "$f"; echo "the profile does not end with its CPU SAMPLES section"; return 1; }
  else
    if grep -q '^FAIL' "$f"; then grep '^FAIL' "$f" | head -5; echo "e_strict found a broken rule"; return 1; fi
    s=$(grep '^e_strict: finished, ' "$f" | tail -1)
    [[ "$s" =~ \ ([0-9]+)\ checks\ passed,\ 0\ failed$ ]] && (( BASH_REMATCH[1] >= 1000 )) ||
      { tail -3 "$f"; echo "e_strict's summary is missing or counts failures or too few checks"; return 1; }
    grep -q '^heap dump 1: ' "$f" || { echo "e_strict's heap dump never came"; return 1; }
  fi
  return 0
}

# launch NAME ARG CASE N EXIT [java options...]: one run of R_Stress under the
# hang detector; sets RC (its exit code, or "hang").
launch() {
  local name=$1 arg=$2 what=$3 n=$4 want=$5 pid t0
  shift 5
  mkdir -p "$WORK/$name"
  t0=$(now_ms)
  # (The braces keep bash from reporting an agent's abort itself.)
  { (cd "$WORK/$name" && exec "$JAVA" "$@" "$arg" -cp "$CLASSES" R_Stress "$what" "$n" "$want") \
    >"$WORK/$name.out" 2>"$WORK/$name.err" & } 2>/dev/null
  pid=$!
  BG_PIDS+=("$pid")
  while kill -0 "$pid" 2>/dev/null && (( $(now_ms) - t0 < HANG_S * 1000 )); do
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "--- $name: threads after ${HANG_S} s:"
    hang_stacks "$pid" "$WORK/$name.gdb"
    kill -KILL "$pid"
    { wait "$pid"; } 2>/dev/null
    RC=hang
  else
    { wait "$pid"; } 2>/dev/null
    RC=$?
  fi
}

# run AGENT CASE N EXIT [java options...]: R_Stress CASE N EXIT with AGENT,
# launched and judged.  e_strict's heap dumps meet virtual threads under
# construction, which HotSpot 25's own heap walk cannot visit: the layer
# keeps the walk away from them (jvmti_backend/vtguard.h).
run() {
  local agent=$1 what=$2 n=$3 want=$4 name="$1-$2" arg t0 rc
  shift 4
  if [ "$agent" = hprof ]; then
    arg=$(hprof_arg "heap=all,cpu=samples,monitor=y,file=$WORK/$name.txt")
  else
    arg=$(agent_arg e_strict "out=$WORK/$name.txt,dumps=1,dump_ms=150")
  fi
  t0=$(now_ms)
  launch "$name" "$arg" "$what" "$n" "$want" "$@"
  rc=$RC
  if verdict "$name" "$agent" "$what" "$rc" "$want" >"$WORK/$name.verdict" 2>&1; then
    note "$name ($what $n): healthy, $(( ($(now_ms) - t0) / 1000 )) s, exit code $rc"
  else
    [ "$rc" = hang ] && echo "hung: killed after $HANG_S s" >>"$WORK/$name.verdict"
    sed 's/^/   | /' "$WORK/$name.verdict"
    PROBLEMS+=("$name ($what $n): $(tail -1 "$WORK/$name.verdict")")
  fi
}

start=$(now_ms)
for agent in hprof e_strict; do
  run "$agent" contend 200 3
  run "$agent" churn $((1500 * SCALE)) 8
  run "$agent" short $((2000 * SCALE)) 0
  run "$agent" throw $((60000 * SCALE)) 4
  if [ "$JDK_MAJOR" -ge 9 ]; then
    run "$agent" unload $((1500 * SCALE)) 5 -Xlog:class+unload=info:file=unload.log
    n=$(grep -c 'R_Stress\$Victim' "$WORK/$agent-unload/unload.log" 2>/dev/null)
  else
    # JDK 8 has no -Xlog: its unloading trace goes to standard output.
    run "$agent" unload $((1500 * SCALE)) 5 -XX:+TraceClassUnloading
    n=$(grep -c '^\[Unloading class R_Stress\$Victim' "$WORK/$agent-unload.out" 2>/dev/null)
  fi
  # The case is real only if the JVM unloaded most of what it loaded.
  (( ${n:-0} >= 1000 * SCALE )) || PROBLEMS+=("$agent-unload: the JVM unloaded only ${n:-0} Victim classes")
  run "$agent" oom 10 6 -Xmx64m
  if [ "$JDK_MAJOR" -ge 21 ]; then
    run "$agent" vthreads $((30000 * SCALE)) 7
  fi
done
[ "$JDK_MAJOR" -ge 21 ] || note "vthreads: skipped (JDK $JDK_MAJOR has no virtual threads)"
note "$(( ($(now_ms) - start) / 1000 )) s in all"

if [ ${#PROBLEMS[@]} -gt 0 ]; then
  echo "--- ${#PROBLEMS[@]} runs went wrong:"
  printf '   %s\n' "${PROBLEMS[@]}"
  fail "${PROBLEMS[0]}"
fi
note "every run healthy"
exit 0
