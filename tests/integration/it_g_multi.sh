#!/bin/bash
# Several JVMPI agents in one VM (tests/agents/g_multi.c on G_Multi): two and
# three agents, loaded as several -agentpath:libjvmpi.so=<agent> options, as
# several -Xrun<agent> options with the layer in JAVA_TOOL_OPTIONS, and
# mixed.  Each agent is strict (it aborts on an event it did not enable, a
# request answered to someone else, a thread-local word not its own, an ID
# it was never told of) and must see what it sees alone: its "d " lines
# (program classes and threads, Marker objects allocated and freed, the
# kinds of events it got) are compared with those of its run alone.
# CLASS_LOAD_HOOK chains in load order: A rewrites HOOKMARK0 to HOOKMARK1,
# B rewrites HOOKMARK1 to HOOKMARK2, so the program prints HOOKMARK2 only if
# B was given A's output.  Combinations the layer cannot serve (one -Xrun
# library named twice, more agents than it serves) fail with one line.
. "$(dirname "$0")/lib.sh"

PROBLEMS=()
problem() { echo "PROBLEM: $*" >&2; PROBLEMS+=("$*"); }

# One library file per agent, as three agents of 2002 would be; -Xrun finds
# them through LD_LIBRARY_PATH.
for n in gma gmb gmc; do cp "$AGENTS_DIR/libg_multi.so" "$WORK/lib$n.so"; done
export LD_LIBRARY_PATH="$WORK${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# A: everything from the start, a hook, requests and dumps.
# B: threads and a hook from the start, classes and allocations enabled
#    late (in its JVM_INIT_DONE handler), after A was told of them.
# C: classes and allocations from the start.
opts() {
  case $1 in
    A) echo "on=classload+threads+alloc+gc+hook,hook=0>1,dump=1" ;;
    B) echo "on=threads+hook,late=classload+alloc,hook=1>2" ;;
    C) echo "on=classload+alloc+gc" ;;
  esac
}

# run NAME JAVA-ARGS...: one JVM; returns java's exit code.
run() {
  local name=$1; shift
  run_java "$name" -cp "$CLASSES" "$@" G_Multi
}

# check_agent RUN AGENT: AGENT's file of RUN is sound and its "d " lines are
# those of its run alone.
check_agent() {
  local run=$1 agent=$2 f="$WORK/$1-$2.txt"
  if ! grep -q "^g_multi: finished, " "$f" 2>/dev/null; then
    problem "$run: agent $agent never finished"; tail -5 "$f" 2>/dev/null; return
  fi
  if grep -q '^FAIL' "$f"; then
    problem "$run: agent $agent: $(grep -m1 '^FAIL' "$f")"; return
  fi
  if ! diff <(grep '^d ' "$WORK/alone-$agent.txt" | sort -u) <(grep '^d ' "$f" | sort -u) >"$WORK/$run-$agent.diff"; then
    cat "$WORK/$run-$agent.diff"
    problem "$run: agent $agent saw other than it sees alone (< alone, > together)"
  else
    note "$run: agent $agent saw what it sees alone"
  fi
}

# check_run RUN RC AGENTS...: java exited 0, the layer printed nothing,
# every agent as alone.
check_run() {
  local run=$1 rc=$2; shift 2
  [ "$rc" = 0 ] || { head -20 "$WORK/$run.err"; problem "$run: java exited $rc"; }
  if grep -q "JVMPI layer" "$WORK/$run.err"; then
    grep "JVMPI layer" "$WORK/$run.err" | head -5; problem "$run: the layer printed something"
  fi
  for a in "$@"; do check_agent "$run" "$a"; done
}

lib_of() { case $1 in A) echo gma ;; B) echo gmb ;; C) echo gmc ;; esac; }
agentpath() { echo "-agentpath:$LAYER=$WORK/lib$(lib_of "$2").so:out=$WORK/$1-$2.txt,$(opts "$2")"; }
xrun() { echo "-Xrun$(lib_of "$2"):out=$WORK/$1-$2.txt,$(opts "$2")"; }

# ---- each alone -------------------------------------------------------------
for a in A B C; do
  run "alone-$a" "$(agentpath alone "$a")"; rc=$?
  [ "$rc" = 0 ] || { head -20 "$WORK/alone-$a.err"; fail "agent $a alone: java exited $rc"; }
  expect_summary "$WORK/alone-$a.txt" g_multi 20
done
expect_file_has "$WORK/alone-A.out" "mark HOOKMARK1"
expect_file_has "$WORK/alone-B.out" "mark HOOKMARK0"
# What the comparisons rest on must be there to compare.
expect_file_has "$WORK/alone-A.txt" "d markers-allocated 800"
expect_file_has "$WORK/alone-A.txt" "d markers-freed 800"
expect_file_has "$WORK/alone-B.txt" "d markers-allocated 800"
expect_file_has "$WORK/alone-A.txt" "d requests-answered 3"
expect_file_has "$WORK/alone-A.txt" "d thread g-worker-2"
expect_file_has "$WORK/alone-B.txt" "d class G_Multi\$Late"

# ---- -agentpath, two and three ---------------------------------------------
run ap2 "$(agentpath ap2 A)" "$(agentpath ap2 B)"; check_run ap2 $? A B
grep -q "mark HOOKMARK2" "$WORK/ap2.out" || problem "ap2: B was not given A's class file (output: $(cat "$WORK/ap2.out"))"
grep -q "^hooksaw HOOKMARK1" "$WORK/ap2-B.txt" || problem "ap2: B never saw HOOKMARK1"
run ap3 "$(agentpath ap3 A)" "$(agentpath ap3 B)" "$(agentpath ap3 C)"; check_run ap3 $? A B C
grep -q "mark HOOKMARK2" "$WORK/ap3.out" || problem "ap3: the hooks did not chain"

# ---- -Xrun, two and three, the layer in JAVA_TOOL_OPTIONS --------------------
JAVA_TOOL_OPTIONS="-agentpath:$LAYER" run xr2 "$(xrun xr2 A)" "$(xrun xr2 B)"; rc=$?
sed -i '/^Picked up JAVA_TOOL_OPTIONS/d' "$WORK/xr2.err"; check_run xr2 $rc A B
grep -q "mark HOOKMARK2" "$WORK/xr2.out" || problem "xr2: the hooks did not chain"
JAVA_TOOL_OPTIONS="-agentpath:$LAYER" run xr3 "$(xrun xr3 A)" "$(xrun xr3 B)" "$(xrun xr3 C)"; rc=$?
sed -i '/^Picked up JAVA_TOOL_OPTIONS/d' "$WORK/xr3.err"; check_run xr3 $rc A B C

# ---- mixed: one -agentpath agent, two -Xrun agents --------------------------
run mix "$(agentpath mix A)" "$(xrun mix B)" "$(xrun mix C)"; check_run mix $? A B C
grep -q "mark HOOKMARK2" "$WORK/mix.out" || problem "mix: the hooks did not chain"

# ---- one library as two agents: the second gets a copy of its own -----------
run same "$(agentpath same A)" "-agentpath:$LAYER=$WORK/libgma.so:out=$WORK/same-C.txt,$(opts C)"
check_run same $? A C
# The same name as -agentpath and as -Xrun: the -agentpath one runs from a copy.
run apx "$(agentpath apx A)" "-Xrungma:out=$WORK/apx-C.txt,$(opts C)"; check_run apx $? A C

# ---- what cannot be served fails at start-up, in one line -------------------
JAVA_TOOL_OPTIONS="-agentpath:$LAYER" run twice "$(xrun twice A)" "-Xrungma:out=$WORK/twice-C.txt"; rc=$?
[ "$rc" != 0 ] || problem "twice: -Xrungma given twice started"
grep -q "JVMPI layer: error: -Xrungma is given twice" "$WORK/twice.err" ||
  { cat "$WORK/twice.err"; problem "twice: no line saying -Xrungma is given twice"; }
[ "$(grep -c "JVMPI layer" "$WORK/twice.err")" = 1 ] || { cat "$WORK/twice.err"; problem "twice: more than one line"; }

nine=()
for i in 1 2 3 4 5 6 7 8 9; do
  cp "$AGENTS_DIR/libg_multi.so" "$WORK/libg9_$i.so"
  nine+=("-agentpath:$LAYER=$WORK/libg9_$i.so:out=$WORK/nine-$i.txt")
done
run nine "${nine[@]}"; rc=$?
[ "$rc" != 0 ] || problem "nine: nine agents started"
grep -q "JVMPI layer: error: GetEnv(JVMPI) from .*libg9_9.so: the layer serves at most 8 JVMPI agents" \
  "$WORK/nine.err" || { cat "$WORK/nine.err"; problem "nine: no line saying at most 8 agents are served"; }

expect_no_crash
[ ${#PROBLEMS[@]} = 0 ] || fail "${#PROBLEMS[@]} problems: ${PROBLEMS[*]}"
note "every agent saw what it sees alone, in every form"
