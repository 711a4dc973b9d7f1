#!/bin/bash
# bench/hprof8.sh - on JDK 8, what the HPROF work-alike through the layer
# costs against JDK 8's own JVM TI HPROF (-agentlib:hprof) in the same mode,
# and both against no agent, on the same javac compilation.  A benchmark, not a
# test: it prints numbers, it never fails on them.  Configurations,
# interleaved and rotated each round, medians of REPS rounds:
#   none        no agent
#   L:<mode>    -agentpath:libjvmpi.so=hprof:<mode>   (the work-alike)
#   H:<mode>    -agentlib:hprof=<mode>                (JDK 8's own)
# for each mode of MODES.  The target: L:<mode> costs no more than H:<mode>.
#
# Environment: BUILD_DIR (default build), JAVA_HOME (default build/jdks/8,
# as scripts/jdks.sh 8 unpacks it), REPS (default 3), MODES (default
# "heap=sites cpu=samples cpu=times heap=dump,format=b"), JAVAC_FILES (default
# 10), RUN_TIMEOUT (default 600), BENCH_WORK, SRC_ZIP.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
REPS=${REPS:-3}
MODES=${MODES:-heap=sites cpu=samples cpu=times heap=dump,format=b}
JAVAC_FILES=${JAVAC_FILES:-10}
RUN_TIMEOUT=${RUN_TIMEOUT:-600}
JAVA_HOME=${JAVA_HOME:-$(cd "$(dirname "$0")/.." && pwd)/${BUILD_DIR:-build}/jdks/8}
bench_init hprof8
[ "$JDK_MAJOR" = 1.8 ] || die "JAVA_HOME must be a JDK 8 (this one says $JDK_MAJOR): only JDK 8 ships an HPROF of its own"
bench_build jvmpi hprof
LAYER=$BUILD_DIR/lib/libjvmpi.so

CONFIGS="none"
for m in $MODES; do CONFIGS="$CONFIGS L:$m H:$m"; done

agent_opt() {
  case $1 in
    none) ;;
    L:*) echo "-agentpath:$LAYER=hprof:${1#L:},file=$2" ;;
    H:*) echo "-agentlib:hprof=${1#H:},file=$2" ;;
  esac
}

RESULTS=$WORK/results.tsv
: >"$RESULTS"
run_one() {
  local wl=$1 cfg=$2 rep=$3 out=$WORK/agent-out tf=$WORK/time.txt log=$WORK/run.log
  local -a cmd
  mapfile -t cmd < <(bench_javac_command "$(agent_opt "$cfg" "$out")")
  rm -rf "$out" "$WORK/javac-out" && mkdir -p "$WORK/javac-out"
  local rc=0
  /usr/bin/time -f '%e %U %S' -o "$tf" timeout "$RUN_TIMEOUT" "${cmd[@]}" >"$log" 2>&1 || rc=$?
  # An agent that wrote nothing did not run: a failed configuration, not a fast one.
  [ "$cfg" = none ] || [ -s "$out" ] || { [ "$rc" = 0 ] && rc=99; }
  # wall, user and system seconds, and user + system
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$cfg" "$rep" "$rc" $(tail -1 "$tf" | awk '{ print $1, $2, $3, $2 + $3 }') >>"$RESULTS"
  [ "$rc" = 0 ] || { say "$cfg round $rep: exit code $rc"; cp "$log" "$WORK/failed-${cfg//[:=,]/_}-$rep.log"; }
}

bench_javac_tree "$JAVAC_FILES"
start=$SECONDS
bench_rounds "$REPS" javac "$CONFIGS"
median() { bench_median "$RESULTS" "$1" javac "$2"; }
echo
echo "JDK $("$JAVA_HOME/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.runtime\.version = //p'), javac on $JAVAC_FILES files of java/util, $REPS rounds, interleaved; medians"
echo "(L: the layer's HPROF work-alike; H: JDK 8's own HPROF; target: L/H <= 1.00)"
printf '%-22s %8s %8s %8s %8s %8s %8s %8s\n' mode L_wall H_wall L/none H/none L_cpu H_cpu L/H_cpu
nw=$(median 5 none); nc=$(median 8 none)
printf '%-22s %8s %8s %8s %8s %8s %8s %8s\n' none "$nw" "$nw" 1.00 1.00 "$nc" "$nc" 1.00
for m in $MODES; do
  lw=$(median 5 "L:$m"); hw=$(median 5 "H:$m")
  lc=$(median 8 "L:$m"); hc=$(median 8 "H:$m")
  printf '%-22s %8s %8s %8s %8s %8s %8s %8s\n' "$m" "$lw" "$hw" "$(bench_ratio "$lw" "$nw")" "$(bench_ratio "$hw" "$nw")" \
    "$lc" "$hc" "$(bench_ratio "$lc" "$hc")"
done
echo
echo "(raw results: $RESULTS; $((SECONDS - start)) s)"
