#!/bin/bash
# bench/xrun.sh - what the unchanged -Xrun command line costs, against the
# same agent loaded through -agentpath:libjvmpi.so=<agent> and against no
# agent.  A benchmark, not a test: it prints numbers, it never fails on them.
# Configurations, interleaved and rotated each round, medians of REPS rounds:
#   a   no agent
#   ca  -agentpath:libjvmpi.so=classtrace:file=...   (CLASS_LOAD and threads only)
#   cx  JAVA_TOOL_OPTIONS=-agentpath:libjvmpi.so  java -Xrunclasstrace:file=...
#   ha  -agentpath:libjvmpi.so=hprof:cpu=samples,file=...
#   hx  JAVA_TOOL_OPTIONS=-agentpath:libjvmpi.so  java -Xrunhprof:cpu=samples,file=...
# Workloads: javac compiling java/util sources (the targets: cx/a and hx/a at
# most 1.03), and OneSecond, a program of about a second (the target: each
# configuration's wall time at most 0.2 s above no agent's).
#
# Environment: BUILD_DIR (default build), JAVA_HOME (default JDK 17), REPS
# (default 5), WORKLOADS ("javac onesec"), CONFIGS ("a ca cx ha hx"),
# JAVAC_FILES (default 15), RUN_TIMEOUT (default 600), BENCH_WORK, SRC_ZIP.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
REPS=${REPS:-5}
WORKLOADS=${WORKLOADS:-javac onesec}
CONFIGS=${CONFIGS:-a ca cx ha hx}
JAVAC_FILES=${JAVAC_FILES:-15}
RUN_TIMEOUT=${RUN_TIMEOUT:-600}
bench_init xrun
bench_build bench jvmpi classtrace hprof
LAYER=$BUILD_DIR/lib/libjvmpi.so
AGENTS=$BUILD_DIR/lib/agents
CLASSES=$BUILD_DIR/bench/classes

# The agent's option, one per line: -agentpath:... or -Xrun...
agent_opt() {
  local out=$2
  case $1 in
    a) ;;
    ca) echo "-agentpath:$LAYER=classtrace:file=$out" ;;
    cx) echo "-Xrunclasstrace:file=$out" ;;
    ha) echo "-agentpath:$LAYER=hprof:cpu=samples,file=$out" ;;
    hx) echo "-Xrunhprof:cpu=samples,file=$out" ;;
  esac
}

command_for() {
  local a
  a=$(agent_opt "$2" "$3")
  case $2 in
    cx | hx) printf '%s\n' env "JAVA_TOOL_OPTIONS=-agentpath:$LAYER" "LD_LIBRARY_PATH=$AGENTS" ;;
  esac
  case $1 in
    javac) bench_javac_command "$a" ;;
    onesec)
      echo "$JAVA_HOME/bin/java"
      [ -n "$a" ] && echo "$a"
      printf '%s\n' -cp "$CLASSES" OneSecond ;;
  esac
}

RESULTS=$WORK/results.tsv
: >"$RESULTS"
run_one() {
  local wl=$1 cfg=$2 rep=$3 out=$WORK/agent-out.txt tf=$WORK/time.txt log=$WORK/run-$1-$2.log
  local -a cmd
  mapfile -t cmd < <(command_for "$wl" "$cfg" "$out")
  rm -rf "$out" "$WORK/javac-out" && mkdir -p "$WORK/javac-out"
  local rc=0
  /usr/bin/time -f '%e %U %S' -o "$tf" timeout "$RUN_TIMEOUT" "${cmd[@]}" >"$log" 2>&1 || rc=$?
  # An agent that did not run is a failed configuration, not a fast one.
  [ "$cfg" = a ] || [ -s "$out" ] || { [ "$rc" = 0 ] && rc=99; }
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$cfg" "$rep" "$rc" $(tail -1 "$tf") >>"$RESULTS"
  [ "$rc" = 0 ] || say "$wl/$cfg round $rep: exit code $rc (see $log)"
}

for wl in $WORKLOADS; do [ "$wl" = javac ] && bench_javac_tree "$JAVAC_FILES"; done
start=$SECONDS
bench_rounds "$REPS" "$WORKLOADS" "$CONFIGS"
median() { bench_median "$RESULTS" "$@"; }
ratio() { bench_ratio "$1" "$2" %.3f; }
delta() { awk -v x="$1" -v y="$2" 'BEGIN { if (x == "-" || y == "-") print "n/a"; else printf "%+.2f s", x - y }'; }
label() {
  case $1 in
    a) echo "a   no agent" ;;
    ca) echo "ca  classtrace, -agentpath" ;; cx) echo "cx  classtrace, -Xrun" ;;
    ha) echo "ha  hprof cpu=samples, -agentpath" ;; hx) echo "hx  hprof cpu=samples, -Xrun" ;;
  esac
}
echo
echo "JDK $("$JAVA_HOME/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.runtime\.version = //p'), $REPS rounds, interleaved; medians"
for wl in $WORKLOADS; do
  echo
  case $wl in javac) echo "== javac: $JAVAC_FILES files of java/util (target: x/a <= 1.03)" ;;
    onesec) echo "== OneSecond (target: at most +0.20 s over no agent)" ;; esac
  printf '%-36s %8s %8s %8s %10s\n' config wall_s user_s ratio over_a
  a=$(median 5 "$wl" a)
  for cfg in $CONFIGS; do
    w=$(median 5 "$wl" "$cfg")
    printf '%-36s %8s %8s %8s %10s\n' "$(label "$cfg")" "$w" "$(median 6 "$wl" "$cfg")" "$(ratio "$w" "$a")" "$(delta "$w" "$a")"
  done
done
echo
echo "(raw results: $RESULTS; $((SECONDS - start)) s)"
