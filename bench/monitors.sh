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

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-build}
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$ROOT/$BUILD_DIR ;; esac
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
REPS=${REPS:-5}
WORKLOADS=${WORKLOADS:-javac contend}
JAVAC_FILES=${JAVAC_FILES:-60}
CONTEND_ARGS=${CONTEND_ARGS:-4 200000}
WORK=${BENCH_WORK:-$BUILD_DIR/bench/work-monitors}
say() { echo "monitors.sh: $*" >&2; }
die() { say "$*"; exit 1; }
mkdir -p "$WORK"
[ -x /usr/bin/time ] || die "needs /usr/bin/time (apt-get install time)"

if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" >"$WORK/configure.log" 2>&1 || die "configure failed ($WORK/configure.log)"
fi
cmake --build "$BUILD_DIR" --target bench jvmpi -j2 >"$WORK/build.log" 2>&1 || die "build failed ($WORK/build.log)"
LAYER=$BUILD_DIR/lib/libjvmpi.so
PLAIN=$BUILD_DIR/lib/bench/libplain_monitors.so
COUNT=$BUILD_DIR/lib/bench/libcount_monitors.so
CLASSES=$BUILD_DIR/bench/classes
JDK_MAJOR=$("$JAVA_HOME/bin/java" -XshowSettings:properties -version 2>&1 |
            sed -n 's/^ *java\.specification\.version = //p')

# The javac workload: JAVAC_FILES java/util sources of the measured JDK,
# compiled into java.base (as bench/heap.sh does it).
TREE=${JAVAC_TREE:-$WORK/javac-jdk$JDK_MAJOR-$JAVAC_FILES}
prepare_javac() {
  . "$ROOT/scripts/jdk_sources.sh"
  jdk_sources_tree "$TREE" "$JAVAC_FILES" || die "no java/util sources for JDK $JDK_MAJOR"
}

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
    javac)
      echo "$JAVA_HOME/bin/javac"
      [ -n "$a" ] && echo "-J$a"
      printf '%s\n' --patch-module "java.base=$TREE/src/java.base" -d "$WORK/javac-out" \
        -nowarn -XDignore.symbol.file -proc:none "@$TREE/sources.args" ;;
    contend)
      echo "$JAVA_HOME/bin/java"
      [ -n "$a" ] && echo "$a"
      printf '%s\n' -cp "$CLASSES" Contend $CONTEND_ARGS ;;
  esac
}

RESULTS=$WORK/results.tsv
: >"$RESULTS"
for wl in $WORKLOADS; do [ "$wl" != javac ] || prepare_javac; done
cfgs=(a b c d)
for ((rep = 1; rep <= REPS; rep++)); do
  for wl in $WORKLOADS; do
    for ((i = 0; i < 4; i++)); do
      cfg=${cfgs[$(((i + rep - 1) % 4))]}
      cnt=$WORK/counts.txt
      rm -rf "$cnt" "$WORK/javac-out" && mkdir -p "$WORK/javac-out"
      mapfile -t cmd < <(command_for "$wl" "$cfg" "$cnt")
      rc=0
      /usr/bin/time -f '%e %U %S' -o "$WORK/time.txt" timeout 600 "${cmd[@]}" >"$WORK/run-$wl-$cfg.log" 2>&1 || rc=$?
      counts=$(cat "$cnt" 2>/dev/null | tr ' ' ',' || true)
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$cfg" "$rep" "$rc" "$(tail -1 "$WORK/time.txt" | tr ' ' '\t')" \
        "${counts:--}" >>"$RESULTS"
      [ "$rc" = 0 ] || say "$wl/$cfg round $rep: exit code $rc (log $WORK/run-$wl-$cfg.log)"
    done
  done
  say "round $rep of $REPS done"
done

median() {
  awk -F'\t' -v c="$1" -v w="$2" -v g="$3" '$1 == w && $2 == g && $4 == 0 { print $c }' "$RESULTS" |
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v x="$1" -v y="$2" 'BEGIN { if (x == "-" || y == "-" || y == 0) print "n/a"; else printf "%.2f", x / y }'; }
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
