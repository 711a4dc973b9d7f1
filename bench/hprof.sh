#!/bin/bash
# bench/hprof.sh - what each mode of the HPROF work-alike (legacy_agents/hprof)
# costs on javac, against javac with no agent.  A benchmark, not a test: it
# prints numbers, it never fails on them.  Configurations are interleaved and
# rotated each round; the medians of REPS rounds are compared, so the ratios
# come from one run.
#
# Environment: BUILD_DIR (default build), JAVA_HOME (default JDK 17), REPS
# (default 3), JAVAC_FILES (java/util sources javac compiles, default 15),
# MODES (default: every mode below), RUN_TIMEOUT (seconds, default 600),
# BENCH_WORK (default $BUILD_DIR/bench/work-hprof).
set -euo pipefail

. "$(dirname "$0")/lib.sh"
REPS=${REPS:-3}
JAVAC_FILES=${JAVAC_FILES:-15}
RUN_TIMEOUT=${RUN_TIMEOUT:-600}
MODES=${MODES:-"none heap=sites heap=dump heap=all cpu=samples cpu=times cpu=old monitor=y heap=all,format=b"}
bench_init hprof
cd "$ROOT"
[ -x "$JAVA_HOME/bin/javac" ] || die "no javac under $JAVA_HOME"
bench_build jvmpi hprof
LAYER=$BUILD_DIR/lib/libjvmpi.so
bench_javac_tree "$JAVAC_FILES"

# run MODE ROUND: one javac; appends "mode wall cpu rss_kb" to results.
run() {
  local mode=$1 round=$2 agent=
  local -a cmd
  [ "$mode" = none ] || agent="-agentpath:$LAYER=hprof:$mode,file=$WORK/profile-$round"
  mapfile -t cmd < <(bench_javac_command "$agent")
  rm -rf "$WORK/javac-out" && mkdir -p "$WORK/javac-out"
  if ! timeout "$RUN_TIMEOUT" /usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "${cmd[@]}" >"$WORK/run.log" 2>&1; then
    say "$mode (round $round) failed or timed out; see $WORK/run.log"
    echo "$mode n/a n/a n/a" >>"$WORK/results.tsv"
    return
  fi
  awk -v m="$mode" '{ print m, $1, $2 + $3, $4 }' "$WORK/time" >>"$WORK/results.tsv"
}

: >"$WORK/results.tsv"
read -r -a modes <<<"$MODES"
n=${#modes[@]}
say "javac, $JAVAC_FILES files of java/util, $REPS rounds of ${n} configurations"
for ((r = 0; r < REPS; r++)); do
  for ((i = 0; i < n; i++)); do
    run "${modes[$(((i + r) % n))]}" "$r"
  done
done

echo "== javac ($JAVAC_FILES files of java/util), $(basename "$(readlink -f "$JAVA_HOME")"), medians of $REPS rounds"
awk -v order="$MODES" '
  function median(list,   a, k, m, i, j, t) {
    k = split(list, a, " ")
    for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    m = int((k + 1) / 2); return k % 2 ? a[m] : (a[m] + a[m + 1]) / 2 }
  $2 != "n/a" { w[$1] = w[$1] " " $2; c[$1] = c[$1] " " $3; m[$1] = m[$1] " " $4 }
  $2 == "n/a" { bad[$1] = 1 }
  END {
    k = split(order, mode, " ")
    printf "%-22s %8s %8s %8s %10s %10s\n", "hprof options", "wall_s", "cpu_s", "rss_MB", "wall/none", "cpu/none"
    bw = median(w["none"]); bc = median(c["none"])
    for (i = 1; i <= k; i++) {
      x = mode[i]
      if (bad[x] || w[x] == "") { printf "%-22s %8s\n", x, "n/a"; continue }
      mw = median(w[x]); mc = median(c[x]); mr = median(m[x]) / 1024
      printf "%-22s %8.2f %8.2f %8.0f %10.2f %10.2f\n", x, mw, mc, mr, bw ? mw / bw : 0, bc ? mc / bc : 0
    }
  }' "$WORK/results.tsv"
