#!/bin/bash
# bench/monitors.sh - what the Java monitor events cost through the layer,
# against no agent and against a plain JVM TI agent doing the same work.  A
# benchmark, not a test: it prints numbers, it never fails on them.
#
# Configurations (interleaved, rotated each round; medians of REPS rounds):
#   a  no agent
#   b  plain JVM TI agent (bench/agents/plain_monitors.c): MonitorContended*
#      and MonitorWait*, monitor objects tagged, counts
#   c  layer + count_monitors enabling nothing: the price of the layer's
#      up-front capabilities (can_get_owned_monitor_info and
#      can_get_current_contended_monitor for MONITOR_DUMP, among others)
#   d  layer + count_monitors with the five monitor events on
# Workloads: javac (JAVAC_FILES java/util sources, as bench/heap.sh) and
# Contend (bench/java/Contend.java, CONTEND_ARGS).
#
# Environment: BUILD_DIR (default build), JAVA_HOME (default JDK 17), REPS
# (default 5), WORKLOADS ("javac contend"), JAVAC_FILES (60),
# CONTEND_ARGS ("4 200000"), BENCH_WORK (default $BUILD_DIR/bench/work-monitors),
# JAVAC_TREE (a source tree bench/heap.sh prepared, to reuse it).
set -euo pipefail

. "$(dirname "$0")/lib.sh"
REPS=${REPS:-5}
WORKLOADS=${WORKLOADS:-javac contend}
JAVAC_FILES=${JAVAC_FILES:-60}
CONTEND_ARGS=${CONTEND_ARGS:-4 200000}
bench_init monitors
bench_build bench jvmpi
LAYER=$BUILD_DIR/lib/libjvmpi.so
PLAIN=$BUILD_DIR/lib/bench/libplain_monitors.so
COUNT=$BUILD_DIR/lib/bench/libcount_monitors.so
CLASSES=$BUILD_DIR/bench/classes

agent_opt() {
  case $1 in
    a) ;;
    b) echo "-agentpath:$PLAIN=out=$2" ;;
    c) echo "-agentpath:$LAYER=$COUNT:out=$2,none" ;;
    d) echo "-agentpath:$LAYER=$COUNT:out=$2" ;;
  esac
}

command_for() {
  local a
  a=$(agent_opt "$2" "$3")
  case $1 in
    javac) bench_javac_command "$a" ;;
    contend)
      echo "$JAVA_HOME/bin/java"
      [ -n "$a" ] && echo "$a"
      printf '%s\n' -cp "$CLASSES" Contend $CONTEND_ARGS ;;
  esac
}

RESULTS=$WORK/results.tsv
: >"$RESULTS"
for wl in $WORKLOADS; do [ "$wl" != javac ] || bench_javac_tree "$JAVAC_FILES"; done
run_one() {
  local wl=$1 cfg=$2 rep=$3 cnt rc counts
  local -a cmd
  cnt=$WORK/counts.txt
  rm -rf "$cnt" "$WORK/javac-out" && mkdir -p "$WORK/javac-out"
  mapfile -t cmd < <(command_for "$wl" "$cfg" "$cnt")
  rc=0
  /usr/bin/time -f '%e %U %S' -o "$WORK/time.txt" timeout 600 "${cmd[@]}" >"$WORK/run-$wl-$cfg.log" 2>&1 || rc=$?
  counts=$(cat "$cnt" 2>/dev/null | tr ' ' ',' || true)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$cfg" "$rep" "$rc" "$(tail -1 "$WORK/time.txt" | tr ' ' '\t')" \
    "${counts:--}" >>"$RESULTS"
  [ "$rc" = 0 ] || say "$wl/$cfg round $rep: exit code $rc (log $WORK/run-$wl-$cfg.log)"
}
bench_rounds "$REPS" "$WORKLOADS" "a b c d"

median() { bench_median "$RESULTS" "$@"; }
ratio() { bench_ratio "$1" "$2"; }
echo
echo "JDK $JDK_MAJOR ($JAVA_HOME), $REPS rounds, configurations interleaved; medians of wall time"
for wl in $WORKLOADS; do
  echo "== $wl"
  a=$(median 5 "$wl" a)
  b=$(median 5 "$wl" b)
  printf '%-34s %8s %8s %8s %s\n' config wall_s "x a" "x b" "events (last run)"
  for cfg in a b c d; do
    w=$(median 5 "$wl" "$cfg")
    ev=$(awk -F'\t' -v w="$wl" -v g="$cfg" '$1 == w && $2 == g { e = $8 } END { print e }' "$RESULTS")
    case $cfg in
      a) l="a  no agent" ;; b) l="b  plain JVM TI agent" ;;
      c) l="c  layer, agent enables nothing" ;; d) l="d  layer + count_monitors" ;;
    esac
    printf '%-34s %8s %8s %8s %s\n' "$l" "$w" "$(ratio "$w" "$a")" "$(ratio "$w" "$b")" "${ev:--}"
  done
done
