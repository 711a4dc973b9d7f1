#!/bin/bash
# bench/requests.sh - what a dump-based legacy profiler pays to learn each
# object of a heap dump: a level-0 HEAP_DUMP, then one
# RequestEvent(OBJECT_ALLOC) per object it names (agents/dump_requests.c),
# on heaps of a known number of live objects (java/LiveHeap.java).  A
# benchmark, not a test: it prints numbers, it never fails on them.  See
# bench/README.md.
#
# Printed for each heap size and for both ways an object gets its ID
# ("dump": the heap dump gives it, OBJECT_ALLOC being off; "alloc": its
# OBJECT_ALLOC gave it, so the survivors' IDs are spread over the IDs of
# the garbage made between them): the objects requested, the failures, the
# dump's time, the mean time of one request, and the memory the layer
# keeps for its records of objects' classes, per live object (the layer's
# own count, from its log at VM death).  Medians of REPS rounds.
#
# With INDUMP, the agent also asks, in its HEAP_DUMP handler, for the
# OBJECT_DUMP of that many Class objects, as Sun's HPROF did for classes
# whose superclass it had not learnt: one row per INDUMP value, the values
# run in turn within each round, so that their dump times compare within
# one run ("x dump": the dump's time against the first value's; "ns/in
# dump": the mean time of one of those requests).
#
# Environment:
#   BUILD_DIR  build directory (default build), configured and built if needed
#   JAVA_HOME  JDK to measure (default /usr/lib/jvm/java-17-openjdk-amd64)
#   SIZES      live objects (default "100000 1000000 4000000")
#   MODES      "dump alloc" (default) or one of them
#   REPS       rounds (default 3)
#   WHAT       what is asked of each object: alloc (default, RequestEvent of
#              OBJECT_ALLOC), objdump (RequestEvent of OBJECT_DUMP) or jobject
#              (jobjectID2jobject, then jobject2jobjectID back); classdump:
#              RequestEvent(OBJECT_DUMP) of every class's Class object instead;
#              none: nothing (for INDUMP alone)
#   MAX        at most this many requests, spread over the dump (default all)
#   REPEAT     the requests made this many times over (default 1; the few
#              hundred classes of WHAT=classdump take too short a time once)
#   INDUMP     Class objects whose OBJECT_DUMP the HEAP_DUMP handler asks for,
#              one configuration per value (default "0")
#   LEVEL      the heap dump's level (default 0; objects are asked about
#              from a level 0 dump only, Class objects from any)
#   LAYER      a libjvmpi.so to measure instead of the tree's
#   BENCH_WORK scratch directory (default $BUILD_DIR/bench/requests)
set -euo pipefail

. "$(dirname "$0")/lib.sh"
SIZES=${SIZES:-100000 1000000 4000000}
MODES=${MODES:-dump alloc}
REPS=${REPS:-3}
WHAT=${WHAT:-alloc}
MAX=${MAX:-}
REPEAT=${REPEAT:-1}
INDUMP=${INDUMP:-0}
LEVEL=${LEVEL:-0}
bench_init requests requests
cd "$ROOT"
bench_build bench
bench_layer || die "$LAYER_PROBLEM"
AGENT=$BUILD_DIR/lib/bench/libdump_requests.so

# one run: size mode round indump -> "objects failed dump_ms request_ns bytes_per_record indump indump_failed indump_ns"
run() {
  local n=$1 mode=$2 r=$3 i=$4 d=$WORK/$1-$2-$3-$4
  rm -rf "$d"; mkdir -p "$d"
  local opts="out=$d/result,go=$d/go,done=$d/done"
  [ "$mode" = alloc ] && opts="$opts,alloc"
  # the same events on in every INDUMP configuration: CLASS_LOAD gives the classes' IDs
  [ "$INDUMP" = 0 ] || opts="$opts,classes"
  opts="$opts,what=$WHAT,indump=$i,level=$LEVEL,repeat=$REPEAT"
  [ -n "$MAX" ] && opts="$opts,max=$MAX"
  if ! JVMPI_LAYER_OPTIONS="log=info,logfile=$d/layer.log" timeout 1800 \
       "$JAVA_HOME/bin/java" -Xmx$(( (n / 1000000 + 1) * 2 ))g -agentpath:"$LAYER=$AGENT:$opts" \
       -cp "$BUILD_DIR/bench/classes" LiveHeap "$n" "$d/go" "$d/done" >"$d/stdout" 2>"$d/stderr"; then
    say "run $n $mode $r failed (see $d)"; echo "n/a n/a n/a n/a n/a n/a n/a n/a"; return
  fi
  local line per
  line=$(cat "$d/result" 2>/dev/null || true)
  per=$(sed -n 's/.*object with an ID, at VM death: .*(\([0-9.]*\) per object).*/\1/p' "$d/layer.log" | tail -1)
  echo "$line" | sed -n "s/.*objects=[0-9]* requests=\([0-9]*\) ok=[0-9]* failed=\([0-9]*\) dump_ms=\([0-9]*\) request_ns=\([0-9]*\) indump=\([0-9]*\) indump_failed=\([0-9]*\) indump_ns=\([0-9]*\).*/\1 \2 \3 \4 ${per:-n\/a} \5 \6 \7/p"
}

median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0 || v[1] == "n/a") print "n/a"; else print v[int((NR + 1) / 2)]}'; }

echo "JDK $("$JAVA_HOME/bin/java" -version 2>&1 | head -1), layer $LAYER, $REPS rounds, each object: $WHAT, dump level $LEVEL"
printf '%-9s %-6s %7s %10s %7s %9s %7s %12s %11s %14s\n' live mode "in dump" requested failed "dump ms" "x dump" \
  "ns/request" "ns/in dump" "bytes/object"
for n in $SIZES; do
  for mode in $MODES; do
    for i in $INDUMP; do : >"$WORK/rows-$i"; done
    # the INDUMP configurations in turn within each round, the first one rotating
    for r in $(seq 1 "$REPS"); do
      set -- $INDUMP
      for _ in $(seq 2 "$r"); do set -- "${@:2}" "$1"; done
      for i in "$@"; do run "$n" "$mode" "$r" "$i" >>"$WORK/rows-$i"; done
    done
    first=
    for i in $INDUMP; do
      col() { awk -v c="$1" '{print $c}' "$WORK/rows-$i" | median; }
      dump=$(col 3)
      [ -n "$first" ] || first=$dump
      x=$(awk -v a="$dump" -v b="$first" 'BEGIN { if (a == "n/a" || b == "n/a" || b == 0) print "n/a"; else printf "%.2f", a / b }')
      printf '%-9s %-6s %7s %10s %7s %9s %7s %12s %11s %14s\n' "$n" "$mode" "$(col 6)" "$(col 1)" \
        "$(awk '{s += $2 + $7} END {print s + 0}' "$WORK/rows-$i")" "$dump" "$x" "$(col 4)" "$(col 8)" "$(col 5)"
    done
  done
done
