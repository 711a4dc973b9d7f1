#!/bin/bash
# bench/vthreads.sh - what virtual threads cost through the layer, against
# no agent and against a plain JVM TI agent doing the same work.  A
# benchmark, not a test: it prints numbers, it never fails on them.
#
# Workload: bench/java/VtChurn.java starts and ends COUNT short virtual
# threads (default 1,000,000), BATCH at a time.
# Configurations (interleaved, rotated each round; medians of REPS rounds):
#   a  no agent
#   b  plain JVM TI agent (bench/agents/plain_vthreads.c) doing what the
#      layer must: VirtualThreadStart and End, each thread's name and group,
#      a tag and a global reference for it, its mounts followed, counts
#   c  layer + count_threads enabling nothing (no thread event, no
#      allocation event: virtual threads must cost it nothing)
#   d  layer + count_threads with THREAD_START and THREAD_END
#   e  as d, with JVMPI_LAYER_OPTIONS=vthreads=carriers (virtual threads
#      not reported: the option for agents that cannot afford them)
#
# Environment: BUILD_DIR (default build), JAVA_HOME (default: the first JDK
# 21 or later under /usr/lib/jvm), REPS (default 5), COUNT (1000000),
# BATCH (10000), BENCH_WORK (default $BUILD_DIR/bench/work-vthreads).
set -euo pipefail

. "$(dirname "$0")/lib.sh"
REPS=${REPS:-5}
COUNT=${COUNT:-1000000}
BATCH=${BATCH:-10000}
if [ -z "${JAVA_HOME:-}" ] || [ "$(bench_jdk_major "$JAVA_HOME")" -lt 21 ] 2>/dev/null; then
  JAVA_HOME=
  for j in /usr/lib/jvm/*/; do
    j=${j%/}
    [ -x "$j/bin/java" ] && [ "$(bench_jdk_major "$j")" -ge 21 ] 2>/dev/null && { JAVA_HOME=$j; break; }
  done
  [ -n "$JAVA_HOME" ] || die "no JDK 21 or later under /usr/lib/jvm: virtual threads need one"
fi
bench_init vthreads
bench_build bench jvmpi
LAYER=$BUILD_DIR/lib/libjvmpi.so
PLAIN=$BUILD_DIR/lib/bench/libplain_vthreads.so
COUNTER=$BUILD_DIR/lib/bench/libcount_threads.so
CLASSES=$BUILD_DIR/bench/classes

agent_opt() {
  case $1 in
    a) ;;
    b) echo "-agentpath:$PLAIN=out=$2" ;;
    c) echo "-agentpath:$LAYER=$COUNTER:out=$2,none" ;;
    d | e) echo "-agentpath:$LAYER=$COUNTER:out=$2" ;;
  esac
}

RESULTS=$WORK/results.tsv
: >"$RESULTS"
cfgs=(a b c d e)
n=${#cfgs[@]}
say "JDK $JDK_MAJOR ($JAVA_HOME): $REPS rounds of VtChurn $COUNT $BATCH x configurations ${cfgs[*]}"
for ((rep = 1; rep <= REPS; rep++)); do
  for ((i = 0; i < n; i++)); do
    cfg=${cfgs[$(((i + rep - 1) % n))]}
    cnt=$WORK/counts.txt
    rm -f "$cnt"
    a=$(agent_opt "$cfg" "$cnt")
    lopts=
    [ "$cfg" = e ] && lopts=vthreads=carriers
    rc=0
    JVMPI_LAYER_OPTIONS=$lopts /usr/bin/time -f '%e %U %S %M' -o "$WORK/time.txt" timeout 600 \
      "$JAVA_HOME/bin/java" ${a:+"$a"} -cp "$CLASSES" VtChurn "$COUNT" "$BATCH" >"$WORK/run-$cfg.log" 2>&1 || rc=$?
    counts=-
    [ -f "$cnt" ] && counts=$(tr ' ' ',' <"$cnt")
    printf '%s\t%s\t%s\t%s\t%s\n' "$cfg" "$rep" "$rc" "$(tail -1 "$WORK/time.txt" | tr ' ' '\t')" \
      "${counts:--}" >>"$RESULTS"
    [ "$rc" = 0 ] || say "$cfg round $rep: exit code $rc (log $WORK/run-$cfg.log)"
  done
  say "round $rep of $REPS done"
done

# median COLUMN CFG: over the successful runs; columns: 4 wall, 5 user, 6 sys, 7 rss_kb.
median() {
  awk -F'\t' -v c="$1" -v g="$2" '$1 == g && $3 == 0 { print (c == "cpu" ? $5 + $6 : $c) }' "$RESULTS" |
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v x="$1" -v y="$2" 'BEGIN { if (x == "-" || y == "-" || y == 0) print "n/a"; else printf "%.2f", x / y }'; }
echo
echo "JDK $JDK_MAJOR ($JAVA_HOME), VtChurn $COUNT virtual threads ($BATCH at a time), $REPS rounds, interleaved; medians"
printf '%-44s %7s %7s %7s %7s %7s %s\n' config wall_s cpu_s "wall/a" "wall/b" "cpu/b" "events (last run)"
wa=$(median 4 a) wb=$(median 4 b) cb=$(median cpu b)
for cfg in "${cfgs[@]}"; do
  w=$(median 4 "$cfg") c=$(median cpu "$cfg")
  ev=$(awk -F'\t' -v g="$cfg" '$1 == g { e = $8 } END { print e }' "$RESULTS")
  case $cfg in
    a) l="a  no agent" ;;
    b) l="b  plain JVM TI agent, same work" ;;
    c) l="c  layer, agent enables nothing" ;;
    d) l="d  layer + count_threads (THREAD_START/END)" ;;
    e) l="e  as d, vthreads=carriers" ;;
  esac
  printf '%-44s %7s %7s %7s %7s %7s %s\n' "$l" "$w" "$c" "$(ratio "$w" "$wa")" "$(ratio "$w" "$wb")" \
    "$(ratio "$c" "$cb")" "${ev:--}"
done
echo "(raw results: $RESULTS)"
