#!/bin/bash
# compare.sh [--agent <agent>[:<options>]] [--out <dir>] [--cpu-samples <file>] [--cpu-interval <ms>] [--jfc <file>] -- <java command...>
#
# Runs a Java command once with a legacy JVMPI agent through the layer AND a
# JFR recording (default settings, allocation sampling raised, execution
# sampling at the agent's own interval),
# takes a class histogram (jcmd GC.class_histogram) of the heap at the end,
# and writes a report that sets what the agent was told beside what JFR and
# the histogram saw: text on the terminal, an HTML page with charts in the
# output directory.  See docs/compare.md.
#
#   --agent        the legacy agent and its options, as after libjvmpi.so=
#                  (default: hprof:heap=sites,cpu=samples, the HPROF work-alike)
#   --out          where the files go (default: ./jvmpi-compare)
#   --cpu-samples  the agent's CPU samples, in HPROF's text format, when the
#                  agent is not the HPROF work-alike
#   --cpu-interval how often the agent samples, in ms (default 10, the HPROF
#                  work-alike's): JFR samples as often, so that both sides
#                  rest on comparable numbers of samples
#   --jfc          JFR's settings from this .jfc file, as they are, instead of
#                  the default settings with sampling raised
#
# The command is `java ...`, or another JDK launcher (`javac ...`), whose
# options then get -J in front.  Environment: JVMPI_LAYER=<libjvmpi.so> uses
# that layer (and the agents beside it) instead of building; BUILD_DIR as for
# scripts/build.sh; on JDK 8, which has none, JFR_TOOL=<bin/jfr of JDK 11 or
# later> (or a jfr on the PATH) reads the recording.  Exits 0 once the report is written, whatever the
# command's own exit code (the report gives it); 2 on a usage error, 1 when
# no report could be made.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

die() { echo "compare: $*" >&2; exit 1; }
usage() {
  echo "compare: $*" >&2
  echo "usage: scripts/compare.sh [--agent <agent>[:<options>]] [--out <dir>] [--cpu-samples <file>] [--cpu-interval <ms>] [--jfc <file>] -- java <args...>" >&2
  exit 2
}

agent_spec="hprof:heap=sites,cpu=samples"
out="$PWD/jvmpi-compare"
cpu_file=""
cpu_interval=10
jfc=""
while [ $# -gt 0 ]; do
  case $1 in
    --agent) [ $# -ge 2 ] || usage "--agent needs a value"; agent_spec=$2; shift 2 ;;
    --agent=*) agent_spec=${1#--agent=}; shift ;;
    --out) [ $# -ge 2 ] || usage "--out needs a directory"; out=$2; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    --cpu-samples) [ $# -ge 2 ] || usage "--cpu-samples needs a file"; cpu_file=$2; shift 2 ;;
    --cpu-samples=*) cpu_file=${1#--cpu-samples=}; shift ;;
    --cpu-interval) [ $# -ge 2 ] || usage "--cpu-interval needs a number of ms"; cpu_interval=$2; shift 2 ;;
    --cpu-interval=*) cpu_interval=${1#--cpu-interval=}; shift ;;
    --jfc) [ $# -ge 2 ] || usage "--jfc needs a file"; jfc=$2; shift 2 ;;
    --jfc=*) jfc=${1#--jfc=}; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^[^#]/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) usage "unknown option '$1' (the Java command goes after --)" ;;
  esac
done
[ $# -gt 0 ] || usage "no command after --"
[[ $cpu_interval =~ ^[1-9][0-9]{0,5}$ ]] || usage "--cpu-interval '$cpu_interval': expected a whole number of ms, 1 or more"
if [ -n "$jfc" ]; then
  [ -f "$jfc" ] || usage "--jfc '$jfc': no such file"
  jfc=$(readlink -f "$jfc")
  case $jfc in *,*|*:*) usage "--jfc '$jfc': the path holds a ',' or ':', which the JVM's options cannot carry" ;; esac
fi
cmd=("$@")
[ -n "$agent_spec" ] && [ "${agent_spec:0:1}" != ":" ] || usage "--agent '$agent_spec': no agent name before ':'"

# ---- the JDK that runs the command, and python3: before anything is made ------
prog=$(command -v -- "${cmd[0]}") || die "cannot find the command '${cmd[0]}'"
real=$(readlink -f -- "$prog")
jdk=$(dirname "$(dirname "$real")")
# A JDK launcher sits in a JDK's bin directory, beside java, below a release
# file or the runtime image (lib/modules).
# JDK 8 has no runtime image: its rt.jar is under jre/, whose bin holds the
# JDK's java as well.
jdk8=
if [ -f "$jdk/lib/rt.jar" ] && [ "$(basename "$jdk")" = jre ] && [ -x "$jdk/../bin/java" ]; then
  jdk=$(dirname "$jdk") jdk8=1
elif [ -f "$jdk/jre/lib/rt.jar" ]; then
  jdk8=1
fi
if [ ! -x "$(dirname "$real")/java" ] || { [ ! -f "$jdk/release" ] && [ ! -f "$jdk/lib/modules" ] && [ -z "$jdk8" ]; }; then
  die "'${cmd[0]}' is not a JDK launcher ($real is not in a JDK's bin directory): the command must be java, javac or another launcher of a JDK, which compare.sh starts with its own JVM options"
fi
jfr_missing=
jfr_tool=$jdk/bin/jfr
if [ -n "$jdk8" ]; then
  # JDK 8 records (8u262 and later) but has no jfr tool: a later JDK's reads
  # its recordings.
  jfr_tool=${JFR_TOOL:-$(command -v jfr || true)}
  if [ ! -f "$jdk/jre/lib/jfr.jar" ]; then
    jfr_missing="the JDK at $jdk has no JFR (it came with JDK 8u262)"
  elif [ -z "$jfr_tool" ] || [ ! -x "$jfr_tool" ]; then
    jfr_missing="JDK 8 has no jfr tool to read a recording with: set JFR_TOOL to the bin/jfr of JDK 11 or later"
  fi
elif [ -f "$jdk/release" ] && ! grep -q '^MODULES=.*[" ]jdk\.jfr[" ]' "$jdk/release"; then
  jfr_missing="the JDK at $jdk has no JFR: its runtime image lacks the jdk.jfr module"
elif [ ! -x "$jfr_tool" ]; then
  jfr_missing="the JDK at $jdk has no jfr tool to read a recording with"
fi
jcmd=$jdk/bin/jcmd
histogram_missing=
[ -x "$jcmd" ] || histogram_missing="the JDK at $jdk has no jcmd"
command -v python3 >/dev/null || die "python3 is needed to write the report (scripts/setup.sh installs it)"

if [ -n "${JVMPI_LAYER:-}" ] && [ ! -f "$JVMPI_LAYER" ]; then
  die "JVMPI_LAYER=$JVMPI_LAYER: no such file (it names the layer, libjvmpi.so, to use instead of building one)"
fi

err=$(mkdir -p -- "$out" 2>&1) || die "cannot create the output directory $out: ${err##*: }"
out=$(cd "$out" && pwd)
case $out in
  *,*|*:*) die "the output directory's path $out holds a ',' or ':', which the JVM's options cannot carry" ;;
esac
ledger=$out/ledger.tsv
rm -f "$ledger" "$ledger.done" "$out/recording.jfr" "$out"/histogram.* "$out/agent.hprof.txt" \
  "$out/report.txt" "$out/report.html" "$out/stderr.txt"

# ---- the layer and the agent -------------------------------------------------
if [ -n "${JVMPI_LAYER:-}" ]; then
  layer=$JVMPI_LAYER
else
  build=${BUILD_DIR:-$ROOT/build}
  echo "compare: building the layer and its agents into $build (log: $out/build.log)"
  if ! BUILD_DIR=$build bash "$ROOT/scripts/build.sh" >"$out/build.log" 2>&1; then
    tail -15 "$out/build.log" >&2
    die "the build failed (see $out/build.log; scripts/setup.sh installs what it needs)"
  fi
  layer=$build/lib/libjvmpi.so
fi
[ -f "$layer" ] || die "no layer at $layer"
layer=$(readlink -f "$layer")

agent=${agent_spec%%:*}
agent_opts=
[[ $agent_spec == *:* ]] && agent_opts=${agent_spec#*:}

# Where the agent's CPU samples are, or why there are none.
cpu_missing=
cpu_named=
if [ -n "$cpu_file" ]; then
  cpu_file=$(readlink -f "$cpu_file")
  cpu_named=1
elif [ "$agent" = hprof ] || [ "$(basename "$agent")" = libhprof.so ]; then
  IFS=, read -ra parts <<<"$agent_opts"
  given_file= binary= net= samples=
  for p in "${parts[@]}"; do
    case $p in
      file=*) given_file=${p#file=} ;;
      format=b) binary=1 ;;
      format=a) binary= ;;
      net=*) net=1 ;;
      cpu=samples) samples=1 ;;
      cpu=*) samples= ;;
    esac
  done
  if [ -z "$given_file" ]; then
    agent_opts=${agent_opts:+$agent_opts,}file=$out/agent.hprof.txt
    cpu_file=$out/agent.hprof.txt
  else
    cpu_file=$(readlink -f "$given_file")
  fi
  agent_spec=$agent:$agent_opts
  if [ -n "$net" ]; then
    cpu_missing="the agent sends its profile over the network (net=), not to a file"
  elif [ -n "$binary" ]; then
    cpu_missing="the agent writes HPROF's binary format (format=b); the report reads the text format"
  elif [ -z "$samples" ]; then
    cpu_missing="the agent was not asked for CPU samples (add cpu=samples to its options)"
  fi
else
  cpu_missing="the agent '$agent' writes no CPU samples the report can read (the HPROF work-alike's cpu=samples does; --cpu-samples <file> names another agent's, in HPROF's text format)"
fi

# ---- the run -------------------------------------------------------------------
jvm_opts=("-agentpath:$layer=$agent_spec")
# The JDK's major version, from its release file (JDK 8's says "1.8.0_...").
major=$(sed -n 's/^JAVA_VERSION="\(1\.\)\{0,1\}\([0-9]*\).*/\2/p' "$jdk/release" 2>/dev/null || true)
[ -n "$jdk8" ] && major=8
if [ -z "$jfr_missing" ] && [ -n "$major" ] && [ "$major" -lt 17 ]; then
  # Before JDK 17, JFR takes no setting on its command line, only a .jfc
  # file: the JDK's default one with sampling raised, allocations recorded at
  # each TLAB (no allocation sample event before JDK 16) and the statistics
  # at the end.
  if [ -z "$jfc" ]; then
    jfc=$out/jdk$major.jfc
    default_jfc=$jdk/lib/jfr/default.jfc
    [ -n "$jdk8" ] && default_jfc=$jdk/jre/lib/jfr/default.jfc
    python3 "$ROOT/scripts/compare_jfc.py" "$default_jfc" "$cpu_interval" >"$jfc" ||
      die "could not write JFR's settings for JDK $major into $jfc"
  fi
  jvm_opts+=("-XX:StartFlightRecording=filename=$out/recording.jfr,dumponexit=true,settings=$jfc")
elif [ -z "$jfr_missing" ]; then
  settings="settings=default,allocation-profiling=high,method-profiling=high,jdk.ExecutionSample#period=$cpu_interval ms,jdk.ClassLoadingStatistics#period=endChunk,jdk.JavaThreadStatistics#period=endChunk"
  [ -n "$jfc" ] && settings="settings=$jfc"
  jvm_opts+=("-XX:StartFlightRecording:filename=$out/recording.jfr,dumponexit=true,$settings" "-Xlog:jfr+startup=error")
fi
run=("${cmd[0]}")
if [ "$(basename "$real")" = java ]; then
  run+=("${jvm_opts[@]}")
else
  for o in "${jvm_opts[@]}"; do run+=("-J$o"); done
fi
run+=("${cmd[@]:1}")

# At VM death the layer writes the ledger and waits (ledgerhold) for
# <ledger>.done: meanwhile the histogram is taken of the heap the ledger counted.
take_histogram() {
  while [ "$(tail -n 1 "$ledger" 2>/dev/null)" != end ]; do
    sleep 0.2
  done
  if [ -z "$histogram_missing" ]; then
    local pid
    pid=$(awk -F'\t' '$1 == "pid" { print $2 }' "$ledger")
    timeout 100 "$jcmd" "$pid" GC.class_histogram >"$out/histogram.txt" 2>"$out/histogram.err"
    echo $? >"$out/histogram.rc"
  fi
  : >"$ledger.done"
}
take_histogram &
watcher=$!

echo "compare: running ${cmd[*]}"
echo "compare: with $agent_spec through the layer, JFR ${jfr_missing:+off ($jfr_missing)}${jfr_missing:-recording}"
# The JVM's standard error is kept too: the report quotes the layer's error
# line when the layer stopped the JVM (an agent it could not load).
{ JVMPI_LAYER_OPTIONS="${JVMPI_LAYER_OPTIONS:+$JVMPI_LAYER_OPTIONS,}ledger=$ledger,ledgerhold=120" \
    "${run[@]}" 2>&1 >&3 3>&- | tee "$out/stderr.txt" >&2; } 3>&1
rc=${PIPESTATUS[0]}
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
echo "compare: the command exited with code $rc"

if [ -z "$histogram_missing" ]; then
  if [ ! -f "$out/histogram.rc" ]; then
    histogram_missing="no histogram was taken: the JVM ended without VM death"
  elif [ "$(cat "$out/histogram.rc")" != 0 ]; then
    # jcmd's first line says why (an exception's stack trace follows it).
    why=$(cat "$out/histogram.err" "$out/histogram.txt" 2>/dev/null | grep -v -e '^[[:space:]]*at ' -e '^[0-9]*:$' -e '^[[:space:]]*$' | head -1 | cut -c1-300)
    histogram_missing="jcmd GC.class_histogram failed: ${why:-it said nothing (exit code $(cat "$out/histogram.rc"))}"
  fi
fi

report=(python3 "$ROOT/scripts/compare_report.py" --out "$out" --command "${cmd[*]}" --exit-code "$rc"
  --agent "$agent_spec" --jdk "$jdk" --jfr-tool "$jfr_tool" --jvm-stderr "$out/stderr.txt")
[ -n "$jfr_missing" ] && report+=(--jfr-missing "$jfr_missing")
[ -n "$histogram_missing" ] && report+=(--histogram-missing "$histogram_missing")
if [ -n "$cpu_missing" ]; then
  report+=(--cpu-missing "$cpu_missing")
else
  report+=(--cpu-samples "$cpu_file" ${cpu_named:+--cpu-samples-named})
fi
"${report[@]}" || die "the report could not be written"
