# Sourced by tests/integration/it_e_*.sh, after lib.sh: how those scripts run
# the e_* agents (tests/agents/e_*.c) on their two workloads and judge each
# run.  Each script runs every workload, whatever the earlier ones gave, so
# that one log shows every rule the layer broke; e_finish fails the test if
# any run went wrong.
#
# Workloads:
#  - javac compiling N files of java.util, the JDK's own sources
#    (scripts/jdk_sources.sh) compiled into java.base with --patch-module,
#    as bench/ and the demo do: a large, real, mostly single-threaded
#    program;
#  - E_LateArrays (tests/java): array classes, class loaders and unloading,
#    allocating threads, contended monitors and waits, after start-up.
#
# A run is healthy when: the agent wrote no FAIL line, java exited 0, no
# hs_err file appeared, the agent's closing line counts at least MIN passed
# checks and no failed one (lib.sh's expect_summary), the JVM's stderr has no
# line from the layer ("JVMPI layer: ..."; the layer must print nothing for
# these agents), and the lines the caller asks for are in the agent's file.

# An agent that finds a broken rule aborts, as its 2002 model did: no core.
ulimit -c 0
E_PROBLEMS=()
E_RUNS=0

e_note_rc() {
  case $E_RC in
    134) note "$1: exit code 134 (SIGABRT: the agent aborted)" ;;
    124) note "$1: exit code 124 (timed out)" ;;
    *) note "$1: exit code $E_RC" ;;
  esac
}

# e_javac_tree N: E_TREE is a directory with src/ and sources.args for the
# first N java/util sources of this JDK; returns 1 (with a note) if this JDK
# has no sources (only JDK 17's can be downloaded, by jdk_sources.sh).
e_javac_tree() {
  local n=$1 base zip
  base="$(dirname "$WORK_ROOT")/e-jdk-sources-jdk$JDK_MAJOR"
  mkdir -p "$base"
  . "$SOURCE_DIR/scripts/jdk_sources.sh"
  if [ "$JDK_MAJOR" != 17 ] && [ ! -r "$JAVA_HOME/lib/src.zip" ]; then
    note "JDK $JDK_MAJOR has no lib/src.zip: the javac workload cannot run here"
    return 1
  fi
  # Scripts may run in parallel: one downloads or unpacks at a time.
  zip=$( (flock 9 && jdk_sources_zip "$base") 9>"$base.lock") || fail "no java.util sources for JDK $JDK_MAJOR"
  E_TREE="$base-n$n"
  (flock 9 && SRC_ZIP=$zip jdk_sources_tree "$E_TREE" "$n") 9>"$base.lock" ||
    fail "could not unpack $n java.util sources from $zip"
}

# e_patch_module: javac's option that lets it compile java.util's own sources
# (JDK 8's javac, with no modules, needs none).
e_patch_module() { [ "$JDK_MAJOR" -lt 9 ] || echo "--patch-module java.base=$E_TREE/src/java.base"; }

# e_javac NAME AGENT OPTIONS N: javac on N files with the agent, in
# $WORK/NAME; the agent writes $WORK/NAME.txt.  Sets E_RC.
e_javac() {
  local name=$1 agent=$2 opts=$3 n=$4
  # Short runs: 10 files at most, which keep javac running long enough for
  # the agents' timed dumps and collections (2 to 3 s apart, as g_javac's).
  n=$(scaled "$n" $((n < 10 ? n : 10)))
  E_RC=skipped
  e_javac_tree "$n" || return 0
  mkdir -p "$WORK/$name/out"
  note "$name: javac, $n files, $agent:$opts"
  # (The braces keep bash from reporting an agent's abort itself.)
  { (cd "$WORK/$name" && exec timeout 150 "$JAVA_HOME/bin/javac" \
    "-J$(agent_arg "$agent" "out=$WORK/$name.txt${opts:+,$opts}")" \
    $(e_patch_module) -d out -nowarn -XDignore.symbol.file -proc:none \
    "@$E_TREE/sources.args") >"$WORK/$name.out" 2>"$WORK/$name.err"; } 2>/dev/null
  E_RC=$?
  e_note_rc "$name"
}

# e_late NAME AGENT OPTIONS: E_LateArrays with the agent.  Sets E_RC.
e_late() {
  local name=$1 agent=$2 opts=$3
  mkdir -p "$WORK/$name"
  note "$name: E_LateArrays, $agent:$opts"
  { (cd "$WORK/$name" && exec timeout 120 "$JAVA" "$(agent_arg "$agent" "out=$WORK/$name.txt${opts:+,$opts}")" \
    -cp "$CLASSES" E_LateArrays) >"$WORK/$name.out" 2>"$WORK/$name.err"; } 2>/dev/null
  E_RC=$?
  e_note_rc "$name"
}

# e_class NAME AGENT OPTIONS CLASS [ARGS...]: another program of tests/java
# with the agent.  Sets E_RC.
e_class() {
  local name=$1 agent=$2 opts=$3
  shift 3
  mkdir -p "$WORK/$name"
  note "$name: $*, $agent:$opts"
  { (cd "$WORK/$name" && exec timeout 120 "$JAVA" "$(agent_arg "$agent" "out=$WORK/$name.txt${opts:+,$opts}")" \
    -cp "$CLASSES" "$@") >"$WORK/$name.out" 2>"$WORK/$name.err"; } 2>/dev/null
  E_RC=$?
  e_note_rc "$name"
}

# e_wait_for FILE REGEX SECONDS PID: until FILE has a line matching REGEX;
# returns 1 on a timeout or when PID has exited first.
e_wait_for() {
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    kill -0 "$4" 2>/dev/null || { grep -q -- "$2" "$1" 2>/dev/null; return; }
    sleep 0.1
  done
  return 1
}

# e_sigquit NAME AGENT OPTIONS DONE-REGEX CLASS [ARGS...]: the program
# CLASS of tests/java with the agent, a go file added to its arguments;
# once it prints "CLASS ready" (its work done), SIGQUIT makes the layer send
# DATA_DUMP_REQUEST; the program ends when the agent's file matches
# DONE-REGEX (or after 60 s).  Sets E_RC.
e_sigquit() {
  local name=$1 agent=$2 opts=$3 done_re=$4 class=$5 pid i
  shift 5
  local go="$WORK/$name.go"
  mkdir -p "$WORK/$name"
  note "$name: $class with SIGQUIT, $agent:$opts"
  (cd "$WORK/$name" && exec "$JAVA" "$(agent_arg "$agent" "out=$WORK/$name.txt${opts:+,$opts}")" \
    -cp "$CLASSES" "$class" "$@" "$go") >"$WORK/$name.out" 2>"$WORK/$name.err" &
  pid=$!
  if e_wait_for "$WORK/$name.out" "^$class ready" 60 "$pid"; then
    kill -QUIT "$pid"
    e_wait_for "$WORK/$name.txt" "$done_re\\|^FAIL" 60 "$pid" || note "$name: '$done_re' did not come"
  fi
  touch "$go"
  for ((i = 0; i < 600; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && { note "$name: still running after 60 s, killed"; kill -9 "$pid"; }
  { wait "$pid"; } 2>/dev/null
  E_RC=$?
  e_note_rc "$name"
}

# e_late_sigquit NAME AGENT OPTIONS DONE-REGEX: e_sigquit on E_LateArrays.
e_late_sigquit() {
  e_sigquit "$1" "$2" "$3" "$4" E_LateArrays
}

# e_verdict NAME AGENT MIN [REGEX...]: judges run NAME (see the top); a
# broken run is recorded with its first lines of evidence.
e_verdict() {
  local name=$1 agent=$2 min=$3 rc=$E_RC
  shift 3
  E_RUNS=$((E_RUNS + 1))
  [ "$rc" = skipped ] && { note "$name: skipped"; return 0; }
  if (
    f="$WORK/$name.txt"
    [ -s "$f" ] || fail "$name: the agent wrote nothing (exit code $rc)"
    if grep -q '^FAIL' "$f"; then
      grep '^FAIL' "$f" | head -5
      fail "$name: the agent found a broken rule (exit code $rc)"
    fi
    for h in "$WORK/$name"/hs_err*; do
      [ -e "$h" ] && { head -20 "$h"; fail "$name: the JVM crashed ($(basename "$h"))"; }
    done
    [ "$rc" = 0 ] || { tail -5 "$WORK/$name.err"; fail "$name: exit code $rc"; }
    expect_summary "$f" "$agent" "$min"
    expect_file_lacks "$WORK/$name.err" '^JVMPI layer:'
    for re in "$@"; do
      expect_file_has "$f" "$re"
    done
  ) >"$WORK/$name.verdict" 2>&1; then
    note "$name: healthy ($(grep "^$agent: finished" "$WORK/$name.txt"))"
  else
    sed 's/^/   | /' "$WORK/$name.verdict"
    E_PROBLEMS+=("$name: $(grep -m1 '^FAIL' "$WORK/$name.verdict" | cut -c1-300)")
  fi
  return 0
}

# e_finish: the test's outcome.
e_finish() {
  local p
  if [ ${#E_PROBLEMS[@]} -gt 0 ]; then
    echo "--- ${#E_PROBLEMS[@]} of $E_RUNS runs went wrong:"
    for p in "${E_PROBLEMS[@]}"; do
      echo "   $p"
    done
    fail "${E_PROBLEMS[0]}"
  fi
  note "all $E_RUNS runs healthy"
  exit 0
}
