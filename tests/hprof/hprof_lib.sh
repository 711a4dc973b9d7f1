# Sourced by tests/integration/it_hprof_*.sh after lib.sh: what the hprof
# tests share.  The agent is legacy_agents/hprof, built as
# $PROJECT_AGENTS_DIR/libhprof.so beside the layer; until it exists every
# hprof test fails (it must not skip).

HPROF_SO="$PROJECT_AGENTS_DIR/libhprof.so"
HPROF_TOOLS="$SOURCE_DIR/tests/hprof"
JAVAC="$JAVA_HOME/bin/javac"
VISUALVM_JAR=/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar

require_hprof() {
  [ -f "$HPROF_SO" ] || fail "hprof agent not built: $HPROF_SO does not exist (legacy_agents/hprof)"
  local c
  for c in "$@"; do
    [ -f "$CLASSES/$c.class" ] || fail "$c.class missing from $CLASSES"
  done
}

# hprof_arg OPTIONS: the -agentpath argument loading hprof by name through the layer.
hprof_arg() { echo "-agentpath:$LAYER=hprof${1:+:$1}"; }

# build_walker: compiles tests/hprof/HprofWalk.java into $WORK/tools.
build_walker() {
  mkdir -p "$WORK/tools"
  "$JAVAC" -d "$WORK/tools" "$HPROF_TOOLS/HprofWalk.java" || fail "HprofWalk.java does not compile"
}

# walk FILE OUT: runs the binary walker on FILE, output to OUT; fails on any
# framing or reference error it reports.
walk() {
  "$JAVA" -cp "$WORK/tools" HprofWalk "$1" >"$2" 2>&1
  local rc=$?
  if [ $rc -ne 0 ] || ! grep -q '^END errors=0 ' "$2"; then
    grep -m 25 -e '^ERROR' -e '^HEADER' -e '^END' -e 'Exception' "$2"
    fail "$(basename "$1") is not a well-formed JAVA PROFILE file (walker exit $rc, see above)"
  fi
}

# expect_binary_header FILE: starts with "JAVA PROFILE 1.0.1" and a NUL.
expect_binary_header() {
  [ -s "$1" ] || fail "$(basename "$1") missing or empty"
  head -c 19 "$1" | cmp -s - <(printf 'JAVA PROFILE 1.0.1\0') ||
    fail "$(basename "$1") does not start with 'JAVA PROFILE 1.0.1\\0' (got: $(head -c 19 "$1" | od -An -c -w19))"
}

# sites_rows FILE [N]: the rows of the Nth SITES section (default the last),
# as "rank self accum livebytes liveobjs allocbytes allocobjs trace class".
sites_rows() {
  awk -v want="${2:-0}" '
    /^SITES BEGIN/ { n++; on = 1; if (want == 0 || n == want) { delete rows; k = 0 }; next }
    /^SITES END/ { on = 0; next }
    on && (want == 0 || n == want) && $1 ~ /^[0-9]+$/ {
      cls = $9; for (i = 10; i <= NF; i++) cls = cls " " $i
      rows[++k] = $1 " " $2 " " $3 " " $4 " " $5 " " $6 " " $7 " " $8 " " cls }
    END { for (i = 1; i <= k; i++) print rows[i] }' "$1"
}

# trace_frames FILE SERIAL: the frame lines of "TRACE SERIAL:" (first one),
# without their leading white space.
trace_frames() {
  awk -v s="$2" '
    $0 ~ "^TRACE " s ":" { on = 1; next }
    on && /^[ \t]/ { sub(/^[ \t]+/, ""); print; next }
    on { exit }' "$1"
}

# traces_without_thread FILE: TRACE header lines with frames but no
# "(thread=N)" (a trace with no frames, printed "<empty>", belongs to no
# thread, e.g. the trace of objects that were there before the agent).
traces_without_thread() {
  awk '/^TRACE [0-9]+:/ { h = $0; next }
       h != "" { if ($0 !~ /<empty>/ && h !~ /^TRACE [0-9]+: \(thread=[0-9]+\)$/) print h; h = "" }' "$1"
}

# start_java NAME java-args...: starts java in the background, output in
# $WORK/NAME.out/.err; sets JPID.  The JVM is killed by the EXIT trap if the
# script ends first.
BG_PIDS=()
start_java() {
  local out="$1"; shift
  note "java (background) $*"
  "$JAVA" "$@" >"$WORK/$out.out" 2>"$WORK/$out.err" &
  JPID=$!
  BG_PIDS+=("$JPID")
}
cleanup_bg() {
  local p
  for p in "${BG_PIDS[@]}"; do
    kill -0 "$p" 2>/dev/null && kill -9 "$p" 2>/dev/null
  done
  return 0
}
trap cleanup_bg EXIT

# wait_for FILE REGEX SECONDS [PID]: waits until FILE has a line matching
# REGEX; returns 1 on timeout, 2 if PID ended first.
wait_for() {
  local i=0 limit=$(($3 * 10))
  while [ $i -lt $limit ]; do
    [ -f "$1" ] && grep -q -- "$2" "$1" && return 0
    if [ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null; then
      [ -f "$1" ] && grep -q -- "$2" "$1" && return 0
      return 2
    fi
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}

# wait_exit PID SECONDS: waits for a background JVM to end; sets JRC to its
# exit code ("timeout" if it had to be killed).  Not in a subshell: only the
# shell that started the JVM can collect its exit code.
wait_exit() {
  local i=0
  while kill -0 "$1" 2>/dev/null && [ $i -lt $(($2 * 10)) ]; do sleep 0.1; i=$((i + 1)); done
  if kill -0 "$1" 2>/dev/null; then
    kill -9 "$1"
    wait "$1" 2>/dev/null
    JRC=timeout
    return 1
  fi
  wait "$1"
  JRC=$?
  note "background java $1 exit code $JRC"
}

# run_java as lib.sh's, but with a shorter limit and a KILL after it: a JVM
# hung in an agent or the layer ignores SIGTERM, and one hung run must fail
# this script, not eat ctest's whole time limit.
run_java() {
  local out="$1"; shift
  note "java $*"
  timeout -k 5 "${HPROF_JAVA_TIMEOUT:-50}" "$JAVA" "$@" >"$WORK/$out.out" 2>"$WORK/$out.err"
  local rc=$?
  note "exit code $rc"
  [ $rc = 124 ] || [ $rc = 137 ] && note "java did not finish within ${HPROF_JAVA_TIMEOUT:-50} s (killed)"
  return $rc
}
