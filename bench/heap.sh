#!/bin/bash
# bench/heap.sh - what full heap tracking costs through the layer, against no
# agent and against a plain JVM TI agent doing the same work.  A benchmark,
# not a test: it prints numbers, it never fails on them.  See bench/README.md.
#
#   bench/heap.sh            measure (configurations interleaved, REPS rounds)
#   bench/heap.sh perf [javac|alloc] [a|b|c|d]
#                            perf record -g one run (default: alloc d) and
#                            print where the time goes: by library, then the
#                            top symbols of the agent's libraries (the layer's
#                            for d), libjvm, libc and the kernel
#
# Environment:
#   BUILD_DIR   build directory (default build), configured and built if needed
#   JAVA_HOME   JDK to measure (default /usr/lib/jvm/java-17-openjdk-amd64)
#   REPS        rounds (default 5)
#   WORKLOADS   "javac alloc" (default) or one of them
#   CONFIGS     "a b c d" (default) or a subset
#   JAVAC_FILES how many java/util sources javac compiles (default 60)
#   ALLOC_ARGS  AllocHeavy's arguments: threads, allocations per thread
#               (default "4 1200000")
#   JAVA_OPTS   extra JVM options for every run (e.g. -Xmx1g)
#   RUN_TIMEOUT seconds before one run is killed (default 180)
#   LAYER       a libjvmpi.so to measure instead of building the tree's
#   BASE_LAYER  another libjvmpi.so (an older build, say) to measure as
#               configuration e, interleaved with the others: CONFIGS="c d e"
#   BENCH_WORK  scratch directory (default $BUILD_DIR/bench/work)
#   BENCH_INSTALL_SOURCE=1  apt-get install openjdk-17-source instead of
#               unpacking the downloaded package into BENCH_WORK (installing it
#               upgrades openjdk-17-jdk to the source package's version)
set -euo pipefail

. "$(dirname "$0")/lib.sh"
REPS=${REPS:-5}
WORKLOADS=${WORKLOADS:-javac alloc}
CONFIGS=${CONFIGS:-a b c d}
JAVAC_FILES=${JAVAC_FILES:-60}
ALLOC_ARGS=${ALLOC_ARGS:-4 1200000}
JAVA_OPTS=${JAVA_OPTS:-}
RUN_TIMEOUT=${RUN_TIMEOUT:-180}
MODE=${1:-run}
bench_init heap work
cd "$ROOT"
command -v unzip >/dev/null || { say "installing unzip"; bench_apt_install unzip; }
bench_build bench
bench_layer || true # configuration d says why it cannot run
case " $CONFIGS " in
  *" e "*) [ -f "${BASE_LAYER:-}" ] || die "configuration e measures BASE_LAYER: set it to a libjvmpi.so" ;;
esac
PLAIN=$BUILD_DIR/lib/bench/libplain_heap.so
COUNT=$BUILD_DIR/lib/bench/libcount_heap.so
CLASSES=$BUILD_DIR/bench/classes

# ---- the javac workload: a fixed set of java/util sources ----------------
prepare_javac() {
  if [ "${BENCH_INSTALL_SOURCE:-0}" = 1 ] && [ ! -r /usr/lib/jvm/openjdk-17/lib/src.zip ]; then
    say "installing openjdk-17-source"
    bench_apt_install openjdk-17-source
  fi
  bench_javac_tree "$JAVAC_FILES"
  ORIGIN=$(jdk_sources_zip "$TREE")
}

# ---- one run --------------------------------------------------------------
# agent_opt CFG COUNTS_FILE: the -agentpath option of a configuration.
agent_opt() {
  case $1 in
    a) ;;
    b) echo "-agentpath:$PLAIN=mode=count,out=$2" ;;
    c) echo "-agentpath:$PLAIN=mode=tag,out=$2" ;;
    d) echo "-agentpath:$LAYER=$COUNT:out=$2" ;;
    e) echo "-agentpath:$BASE_LAYER=$COUNT:out=$2" ;;
  esac
}

# command_for WORKLOAD CFG COUNTS_FILE: prints the command, one word a line.
command_for() {
  local a o
  a=$(agent_opt "$2" "$3")
  case $1 in
    javac)
      echo "$JAVA_HOME/bin/javac"
      [ -n "$a" ] && echo "-J$a"
      for o in $JAVA_OPTS; do echo "-J$o"; done
      printf '%s\n' --patch-module "java.base=$TREE/src/java.base" -d "$WORK/javac-out" \
        -nowarn -XDignore.symbol.file -proc:none "@$TREE/sources.args" ;;
    alloc)
      echo "$JAVA_HOME/bin/java"
      [ -n "$a" ] && echo "$a"
      for o in $JAVA_OPTS; do echo "$o"; done
      printf '%s\n' -cp "$CLASSES" AllocHeavy $ALLOC_ARGS ;;
  esac
}

RESULTS=$WORK/results.tsv
# Why configuration d cannot run: for every workload (the layer did not build,
# the agent refused to start) or for one (it crashed or hung there once: the
# remaining rounds skip it rather than wait out the timeout again).
D_PROBLEM=$LAYER_PROBLEM
declare -A D_PROBLEM_IN=()

# run_timed LOG TIMEFILE HANGFILE command...: runs the command under
# /usr/bin/time; one that is still running after RUN_TIMEOUT seconds gets its
# native stacks written to HANGFILE (when gdb is here) and is killed.
run_timed() {
  local log=$1 tf=$2 hang=$3 rc=0 ticks=0 tp jp
  shift 3
  # In WORK, where a crashing JVM leaves its hs_err file.
  (cd "$WORK" && exec /usr/bin/time -f '%e %U %S %M' -o "$tf" "$@") >"$log" 2>&1 &
  tp=$!
  while kill -0 "$tp" 2>/dev/null; do
    if ((ticks++ >= RUN_TIMEOUT * 2)); then
      jp=$(pgrep -P "$tp" || true)
      if [ -n "$jp" ]; then
        if command -v gdb >/dev/null; then
          timeout 120 gdb -batch -p "$jp" -ex 'thread apply all bt 30' >"$hang" 2>&1 || true
        fi
        kill -9 "$jp" 2>/dev/null || true
      fi
      break
    fi
    sleep 0.5
  done
  wait "$tp" || rc=$?
  return "$rc"
}

# run_one WORKLOAD CFG REP: appends a line to RESULTS:
#   workload cfg rep rc wall user sys rss_kb allocs frees program_allocs
run_one() {
  local wl=$1 cfg=$2 rep=$3 cnt=$WORK/counts.txt tf=$WORK/time.txt log=$WORK/run-$1-$2.log
  local hang=$WORK/hang-$1-$2-$3.txt
  local -a cmd
  mapfile -t cmd < <(command_for "$wl" "$cfg" "$cnt")
  rm -rf "$cnt" "$WORK/javac-out" && mkdir -p "$WORK/javac-out"
  local rc=0
  run_timed "$log" "$tf" "$hang" "${cmd[@]}" || rc=$?
  local t allocs=- frees=- prog=-
  t=$(tail -1 "$tf")
  if [ -f "$cnt" ]; then
    allocs=$(sed -n 's/.* allocs=\([0-9]*\).*/\1/p' "$cnt")
    frees=$(sed -n 's/.* frees=\([0-9]*\).*/\1/p' "$cnt")
  fi
  [ "$wl" = alloc ] && prog=$(sed -n 's/^AllocHeavy: .* allocations=\([0-9]*\).*/\1/p' "$log")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$cfg" "$rep" "$rc" \
    $t "${allocs:--}" "${frees:--}" "${prog:--}" >>"$RESULTS"
  if [ "$rc" != 0 ]; then
    local why
    if [ -f "$hang" ]; then
      why="still running after $RUN_TIMEOUT s, killed (native stacks: $hang)"
    elif [ "$rc" -gt 128 ]; then
      why="killed by signal $((rc - 128))$(ls "$WORK"/hs_err* >/dev/null 2>&1 && echo ", hs_err file in $WORK")"
    else
      why=$(grep -m1 -E 'count_heap|plain_heap|jvmpi|Error|error:' "$log" || tail -1 "$log")
    fi
    say "$wl/$cfg round $rep: exit code $rc: $why"
    if [ "$cfg" = d ]; then
      if grep -q '^count_heap: EnableEvent' "$log"; then
        D_PROBLEM="$why"
      else
        D_PROBLEM_IN[$wl]="exit code $rc in round $rep: $why"
      fi
    fi
  fi
  return 0
}

# ---- perf mode ------------------------------------------------------------
if [ "$MODE" = perf ]; then
  wl=${2:-alloc}
  cfg=${3:-d}
  command -v perf >/dev/null || bench_apt_install linux-perf
  [ "$cfg" != d ] || [ -z "$LAYER_PROBLEM" ] || die "$LAYER_PROBLEM"
  [ "$wl" != javac ] || prepare_javac
  JAVA_OPTS="$JAVA_OPTS -XX:+PreserveFramePointer"
  mapfile -t cmd < <(command_for "$wl" "$cfg" "$WORK/counts.txt")
  rm -rf "$WORK/javac-out" && mkdir -p "$WORK/javac-out"
  say "perf record -g: $wl, configuration $cfg"
  (cd "$WORK" && exec perf record -q -g -o "$WORK/perf.data" -- "${cmd[@]}") >"$WORK/perf-run.log" 2>&1 ||
    die "perf record failed (see $WORK/perf-run.log)"
  cat "$WORK/counts.txt" 2>/dev/null || true
  report() { perf report -i "$WORK/perf.data" --no-children -g none --stdio "$@" 2>/dev/null |
             grep -v '^#' | grep -v '^$' | head -"$TOP" || true; }
  TOP=15
  echo "== time by library (self time, % of all samples)"
  report --sort dso
  case $cfg in
    d) libs="$(basename "$LAYER") libcount_heap.so libjvm.so libc.so.6 [kernel.kallsyms]" ;;
    b | c) libs="libplain_heap.so libjvm.so libc.so.6 [kernel.kallsyms]" ;;
    *) libs="libjvm.so [kernel.kallsyms]" ;;
  esac
  for lib in $libs; do
    echo "== top symbols of $lib (self time, % of all samples)"
    TOP=${PERF_TOP:-25} report --dsos "$lib" --sort sym
  done
  echo "(perf.data in $WORK; e.g. perf report -i $WORK/perf.data --no-children --dsos libjvmpi.so)"
  exit 0
fi
[ "$MODE" = run ] || die "unknown mode '$MODE' (run or perf)"

# ---- measure: configurations interleaved, rotated each round -------------
for wl in $WORKLOADS; do
  case $wl in javac) prepare_javac ;; alloc) ;; *) die "unknown workload $wl" ;; esac
done
: >"$RESULTS"
read -r -a cfgs <<<"$CONFIGS"
ncfg=${#cfgs[@]}
say "JDK $JDK_VERSION, $REPS rounds of: $WORKLOADS x configurations $CONFIGS"
[ -n "$D_PROBLEM" ] && say "configuration d: $D_PROBLEM"
start=$SECONDS
for ((rep = 1; rep <= REPS; rep++)); do
  for wl in $WORKLOADS; do
    for ((i = 0; i < ncfg; i++)); do
      cfg=${cfgs[$(((i + rep - 1) % ncfg))]}
      # Once d cannot run, the remaining rounds skip it.
      if [ "$cfg" = d ] && [ -n "$D_PROBLEM${D_PROBLEM_IN[$wl]:-}" ]; then continue; fi
      run_one "$wl" "$cfg" "$rep"
    done
  done
  say "round $rep of $REPS done ($((SECONDS - start)) s)"
done

# ---- report ---------------------------------------------------------------
# median COLUMN WL CFG: median over the successful runs, "-" when none.
median() {
  awk -F'\t' -v c="$1" -v w="$2" -v g="$3" '$1 == w && $2 == g && $4 == 0 && $c != "-" { print $c }' "$RESULTS" |
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.15g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v x="$1" -v y="$2" 'BEGIN { if (x == "-" || y == "-" || y == 0) print "n/a"; else printf "%.2f", x / y }'; }
# round_range WL X Y wall|cpu: the per-round ratios X/Y, "min..max".
round_range() {
  awk -F'\t' -v w="$1" -v x="$2" -v y="$3" -v m="$4" '
    function v() { return m == "cpu" ? $6 + $7 : $5 }
    $1 == w && $4 == 0 && $2 == x { a[$3] = v() } $1 == w && $4 == 0 && $2 == y { b[$3] = v() }
    END { n = 0; for (r in a) if ((r in b) && b[r] > 0) { q = a[r] / b[r]; if (!n || q < lo) lo = q; if (!n || q > hi) hi = q; n++ }
          if (n) printf "%.2f..%.2f", lo, hi; else printf "n/a" }' "$RESULTS"
}

label() {
  case $1 in
    a) echo "a  no agent" ;;
    b) echo "b  JVM TI, count only" ;;
    c) echo "c  JVM TI, tag + ObjectFree" ;;
    d) echo "d  layer + count_heap" ;;
    e) echo "e  BASE_LAYER + count_heap" ;;
  esac
}

echo
echo "JDK $JDK_VERSION ($JAVA_HOME), $REPS rounds, configurations interleaved; medians"
[ -z "$JAVA_OPTS" ] || echo "JVM options: $JAVA_OPTS"
for wl in $WORKLOADS; do
  echo
  case $wl in
    javac) echo "== javac: $JAVAC_FILES files of java/util from $ORIGIN" ;;
    alloc) echo "== AllocHeavy $ALLOC_ARGS (program's own count: $(median 11 alloc a))" ;;
  esac
  printf '%-30s %5s %8s %8s %8s %7s %11s %11s\n' config runs wall_s wall_min cpu_s rss_MB allocs frees
  for cfg in a b c d e; do
    case " $CONFIGS " in *" $cfg "*) ;; *) continue ;; esac
    n=$(awk -F'\t' -v w="$wl" -v g="$cfg" '$1 == w && $2 == g && $4 == 0' "$RESULTS" | wc -l)
    if [ "$n" = 0 ]; then
      why=$([ "$cfg" = d ] && echo "$D_PROBLEM${D_PROBLEM_IN[$wl]:-}" || echo "every run failed (logs in $WORK)")
      printf '%-30s %5s  n/a: %s\n' "$(label "$cfg")" 0 "$why"
      continue
    fi
    wall=$(median 5 "$wl" "$cfg")
    cpu=$(awk -F'\t' -v w="$wl" -v g="$cfg" '$1 == w && $2 == g && $4 == 0 { print $6 + $7 }' "$RESULTS" |
          sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    rss=$(awk -v k="$(median 8 "$wl" "$cfg")" 'BEGIN { printf "%.0f", k / 1024 }')
    [ "$cfg" = d ] && [ -n "${D_PROBLEM_IN[$wl]:-}" ] && echo "   (d stopped: ${D_PROBLEM_IN[$wl]})"
    wmin=$(awk -F'\t' -v w="$wl" -v g="$cfg" '$1 == w && $2 == g && $4 == 0 { print $5 }' "$RESULTS" | sort -g | head -1)
    printf '%-30s %5s %8.2f %8.2f %8.2f %7s %11s %11s\n' "$(label "$cfg")" "$n" "$wall" "$wmin" "$cpu" "$rss" \
      "$(median 9 "$wl" "$cfg")" "$(median 10 "$wl" "$cfg")"
    eval "W_$cfg=\$wall C_$cfg=\$cpu R_$cfg=\$rss"
  done
  printf '%-36s %8s %8s %8s\n' "ratios of medians" wall cpu rss
  pairs="d/a c/a b/a d/c"
  case " $CONFIGS " in *" e "*) pairs="$pairs e/c d/e" ;; esac
  for pair in $pairs; do
    x=${pair%/*} y=${pair#*/}
    wx=$(eval echo "\${W_$x:--}") wy=$(eval echo "\${W_$y:--}")
    cx=$(eval echo "\${C_$x:--}") cy=$(eval echo "\${C_$y:--}")
    rx=$(eval echo "\${R_$x:--}") ry=$(eval echo "\${R_$y:--}")
    note=
    [ "$pair" = d/c ] &&
      note="  (target <= 1.10; per round: wall $(round_range "$wl" d c wall), cpu $(round_range "$wl" d c cpu))"
    printf '%-36s %8s %8s %8s%s\n' "  $pair" "$(ratio "$wx" "$wy")" "$(ratio "$cx" "$cy")" "$(ratio "$rx" "$ry")" "$note"
  done
  unset W_a W_b W_c W_d W_e C_a C_b C_c C_d C_e R_a R_b R_c R_d R_e
  ca=$(median 9 "$wl" c) da=$(median 9 "$wl" d) cf=$(median 10 "$wl" c) df=$(median 10 "$wl" d)
  echo "counts: allocs c=$ca d=$da (d/c $(ratio "$da" "$ca")), frees c=$cf d=$df (d/c $(ratio "$df" "$cf"))"
done
echo
echo "(raw results: $RESULTS; $((SECONDS - start)) s)"
