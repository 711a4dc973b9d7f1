#!/bin/bash
# bench/methods.sh - what method entry/exit tracking costs through the layer,
# against no agent and against a plain JVM TI agent doing the same work
# (counting MethodEntry/MethodExit).  A benchmark, not a test: it prints
# numbers, it never fails on them.  Configurations, interleaved and rotated
# each round, medians of REPS rounds:
#   a  no agent
#   n  the layer + count_methods:none (enables nothing: the cost of the
#      capabilities the layer takes up front)
#   p  plain JVM TI agent counting MethodEntry/MethodExit
#   l  the layer + count_methods (METHOD_ENTRY + METHOD_EXIT), from the
#      layer's class rewriter (the default)
#   j  the same with JVMPI_LAYER_OPTIONS=methods=jvmti (JVM TI's events)
#   e  l with BASE_LAYER, another libjvmpi.so (an older build, say): two
#      builds compared in one run, interleaved (not in the default CONFIGS)
# The targets: l/a at most 3 on javac, at most 5 on CallHeavy.
#
# Environment: BUILD_DIR (default build), JAVA_HOME (default JDK 17), REPS
# (default 3), WORKLOADS ("javac calls"), CONFIGS ("a n p l"), JAVAC_FILES
# (java/util sources javac compiles, default 15), CALL_ROUNDS (CallHeavy's
# argument, default 60), RUN_TIMEOUT (default 600), BENCH_WORK, SRC_ZIP (the JDK's
# sources; default $JAVA_HOME/lib/src.zip, else the one scripts/jdk_sources.sh fetches).
set -euo pipefail

. "$(dirname "$0")/lib.sh"
REPS=${REPS:-3}
WORKLOADS=${WORKLOADS:-javac calls}
CONFIGS=${CONFIGS:-a n p l j}
JAVAC_FILES=${JAVAC_FILES:-15}
CALL_ROUNDS=${CALL_ROUNDS:-60}
RUN_TIMEOUT=${RUN_TIMEOUT:-600}
bench_init methods
case " $CONFIGS " in
  *" e "*) [ -f "${BASE_LAYER:-}" ] || die "configuration e measures BASE_LAYER: set it to a libjvmpi.so" ;;
esac
bench_build bench jvmpi
LAYER=$BUILD_DIR/lib/libjvmpi.so
PLAIN=$BUILD_DIR/lib/bench/libplain_methods.so
COUNT=$BUILD_DIR/lib/bench/libcount_methods.so
CLASSES=$BUILD_DIR/bench/classes

agent_opt() {
  case $1 in
    a) ;;
    n) echo "-agentpath:$LAYER=$COUNT:none,out=$2" ;;
    p) echo "-agentpath:$PLAIN=out=$2" ;;
    l | j) echo "-agentpath:$LAYER=$COUNT:out=$2" ;;
    e) echo "-agentpath:$BASE_LAYER=$COUNT:out=$2" ;;
  esac
}

command_for() {
  local a
  a=$(agent_opt "$2" "$3")
  [ "$2" = j ] && printf '%s\n' env JVMPI_LAYER_OPTIONS=methods=jvmti
  case $1 in
    javac) bench_javac_command "$a" ;;
    calls)
      echo "$JAVA_HOME/bin/java"
      [ -n "$a" ] && echo "$a"
      printf '%s\n' -cp "$CLASSES" CallHeavy "$CALL_ROUNDS" ;;
  esac
}

RESULTS=$WORK/results.tsv
: >"$RESULTS"
run_one() {
  local wl=$1 cfg=$2 rep=$3 cnt=$WORK/counts.txt tf=$WORK/time.txt log=$WORK/run-$1-$2.log
  local -a cmd
  mapfile -t cmd < <(command_for "$wl" "$cfg" "$cnt")
  rm -rf "$cnt" "$WORK/javac-out" && mkdir -p "$WORK/javac-out"
  local rc=0
  /usr/bin/time -f '%e %U %S' -o "$tf" timeout "$RUN_TIMEOUT" "${cmd[@]}" >"$log" 2>&1 || rc=$?
  local entries=-
  [ -f "$cnt" ] && entries=$(sed -n 's/.* entries=\([0-9]*\).*/\1/p' "$cnt")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$cfg" "$rep" "$rc" $(tail -1 "$tf") "${entries:--}" >>"$RESULTS"
  [ "$rc" = 0 ] || say "$wl/$cfg round $rep: exit code $rc (see $log)"
}

for wl in $WORKLOADS; do [ "$wl" = javac ] && bench_javac_tree "$JAVAC_FILES"; done
start=$SECONDS
bench_rounds "$REPS" "$WORKLOADS" "$CONFIGS"
median() { bench_median "$RESULTS" "$@"; }
ratio() { bench_ratio "$1" "$2"; }
label() {
  case $1 in
    a) echo "a  no agent" ;; n) echo "n  layer, agent enables nothing" ;;
    p) echo "p  JVM TI MethodEntry/Exit count" ;; l) echo "l  layer + count_methods" ;;
    j) echo "j  layer + count_methods, jvmti" ;;
    e) echo "e  BASE_LAYER + count_methods" ;;
  esac
}
echo
echo "JDK $("$JAVA_HOME/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.runtime\.version = //p'), $REPS rounds, interleaved; medians"
for wl in $WORKLOADS; do
  echo
  case $wl in javac) echo "== javac: $JAVAC_FILES files of java/util" ;; calls) echo "== CallHeavy $CALL_ROUNDS" ;; esac
  printf '%-34s %8s %8s %14s\n' config wall_s user_s entries
  for cfg in $CONFIGS; do
    printf '%-34s %8s %8s %14s\n' "$(label "$cfg")" "$(median 5 "$wl" "$cfg")" "$(median 6 "$wl" "$cfg")" "$(median 8 "$wl" "$cfg")"
  done
  a=$(median 5 "$wl" a) n=$(median 5 "$wl" n) p=$(median 5 "$wl" p) l=$(median 5 "$wl" l) j=$(median 5 "$wl" j)
  e=$(median 5 "$wl" e)
  target=3
  [ "$wl" = calls ] && target=5
  echo "ratios of wall medians: n/a $(ratio "$n" "$a")  p/a $(ratio "$p" "$a")  l/a $(ratio "$l" "$a") (target <= $target)  j/a $(ratio "$j" "$a")  l/p $(ratio "$l" "$p")"
  [ "$e" = - ] || echo "the other build: e/a $(ratio "$e" "$a")  l/e $(ratio "$l" "$e")"
done
echo
echo "(raw results: $RESULTS; $((SECONDS - start)) s)"
