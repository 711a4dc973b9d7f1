# Sourced by every it_*.sh.  ctest sets JAVA_HOME, LAYER, AGENTS_DIR,
# PROJECT_AGENTS_DIR, CLASSES, WORK_ROOT, SOURCE_DIR and JDK_MAJOR.
set -u
JAVA="$JAVA_HOME/bin/java"
WORK="$WORK_ROOT"
rm -rf "$WORK" && mkdir -p "$WORK"
cd "$WORK" || exit 1

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
note() { echo "-- $*"; }

# IT_SCALE: "full" (the default: the JDK the layer is built with) or
# "short" (tests/integration/CMakeLists.txt sets it for every other JDK, so
# that CI runs all seven within its hour): the heavy tests run smaller
# workloads, each still doing what it checks.  scaled FULL
# SHORT: the size for this run.
IT_SCALE=${IT_SCALE:-full}
case $IT_SCALE in
  full | short) ;;
  *) fail "IT_SCALE is '$IT_SCALE': expected full or short" ;;
esac
scaled() { if [ "$IT_SCALE" = short ]; then echo "$2"; else echo "$1"; fi; }
# full_run WHAT: true on a full run; on a short one, notes that WHAT (a case
# whose outcome does not depend on the JDK) is left to the full runs.
full_run() { [ "$IT_SCALE" = full ] || { note "short run: $1 is left to the full runs"; return 1; }; }

# run_java OUT_PREFIX java-args...: runs java, keeps stdout/stderr in
# $WORK/OUT_PREFIX.out / .err, returns java's exit code.
run_java() {
  local out="$1"; shift
  note "java $*"
  timeout 120 "$JAVA" "$@" >"$WORK/$out.out" 2>"$WORK/$out.err"
  local rc=$?
  note "exit code $rc"
  return $rc
}

# A JDK older than 17 gets the test programs compiled for 11, less those whose
# source starts with "// needs Java N: why".  has_class NAME: is NAME there;
# needs_class NAME: skip the test, with that reason, when it is not.
has_class() { [ -e "$CLASSES/$1.class" ]; }
class_missing_why() { echo "JDK $JDK_MAJOR: $1 $(sed -n '1s|^// ||p' "$SOURCE_DIR/tests/java/$1.java")"; }
needs_class() { has_class "$1" || skip "$(class_missing_why "$1")"; }

# compact_headers: 1 when this JVM uses compact object headers (JDK 27's
# default), where an array's elements of 4 bytes or less start at offset 12
# rather than 16; 0 otherwise.
compact_headers() {
  "$JAVA" -XX:+PrintFlagsFinal -version 2>/dev/null | grep -qE 'UseCompactObjectHeaders +=[ ]+true' && echo 1 || echo 0
}

# agent_arg NAME OPTIONS: the -agentpath argument loading test agent NAME.
agent_arg() { echo "-agentpath:$LAYER=$AGENTS_DIR/lib$1.so${2:+:$2}"; }

expect_file_has() { grep -q -- "$2" "$1" || { echo "--- $1:"; head -50 "$1"; fail "expected '$2' in $(basename "$1")"; }; }
expect_file_lacks() { ! grep -q -- "$2" "$1" || { echo "--- $1:"; grep -- "$2" "$1" | head; fail "did not expect '$2' in $(basename "$1")"; }; }
# A test agent reports "FAIL ..." lines for what it checked itself.
expect_no_agent_failures() { for f in "$@"; do expect_file_lacks "$f" '^FAIL'; done; }

# expect_summary FILE AGENT MIN: AGENT wrote its closing line, with no failed
# check and at least MIN passed ones (so an agent that checked nothing fails).
expect_summary() {
  local line passed failed
  line=$(grep "^$2: finished, " "$1" | tail -1)
  [ -n "$line" ] || { echo "--- $1 (tail):"; tail -20 "$1"; fail "$2 never finished (no summary line)"; }
  passed=$(echo "$line" | sed -n 's/.* \([0-9]*\) checks passed, \([0-9]*\) failed$/\1/p')
  failed=$(echo "$line" | sed -n 's/.* \([0-9]*\) checks passed, \([0-9]*\) failed$/\2/p')
  [ "$failed" = 0 ] || { grep '^FAIL' "$1"; fail "$2: $failed checks failed"; }
  [ "$passed" -ge "$3" ] || fail "$2: only $passed checks passed, expected at least $3"
}
# expect_no_crash: no hs_err file from a JVM crash in the work directory.
expect_no_crash() {
  local f
  for f in "$WORK"/hs_err*; do
    [ -e "$f" ] && { head -30 "$f"; fail "the JVM crashed: $(basename "$f")"; }
  done
  return 0
}

# hang_stacks PID FILE: what each thread of a hung JVM waits in: with gdb,
# every stack into FILE and the layer's and the agents' frames printed; else
# each thread's name and kernel wait channel.
hang_stacks() {
  local t
  if command -v gdb >/dev/null; then
    timeout 60 gdb -batch -p "$1" -ex 'thread apply all bt' >"$2" 2>&1
    echo "(all stacks: $2)"
    awk '
      /^Thread / { hdr = $0; shown = 0; next }
      /\/(jvmpi|jvmti_backend|legacy_agents|tests\/agents)\// {
        if (!shown) { print hdr; shown = 1 }
        f = $0; sub(/^#[0-9]+ +(0x[0-9a-f]+ in )?/, "", f); sub(/ \(.*\) at .*\//, " at ", f)
        print "    " f
      }' "$2" | head -150
  else
    for t in /proc/"$1"/task/*; do
      printf '  %-18s %s\n' "$(cat "$t/comm" 2>/dev/null)" "$(cat "$t/wchan" 2>/dev/null)"
    done
  fi
}


# not_on_jdk8 WHY: skips the test on JDK 8, saying why it cannot pass there.
not_on_jdk8() { [ "$JDK_MAJOR" -ge 9 ] || skip "JDK 8: $*"; }
