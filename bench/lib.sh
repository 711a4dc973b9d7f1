# bench/lib.sh - what the benchmark drivers share; sourced, never run.
#
#   bench_init NAME [DIR]      ROOT, BUILD_DIR (absolute), JAVA_HOME (default JDK 17),
#                              JDK_MAJOR, JDK_VERSION, WORK (BENCH_WORK or
#                              $BUILD_DIR/bench/DIR, default work-NAME), say/die;
#                              /usr/bin/time installed if missing; configures
#                              the build if it was not
#   bench_jdk_major JAVA_HOME  its java.specification.version (1.8, 11, 17, ...)
#   bench_apt_install PKG...   apt-get install, the package lists updated if need be
#   bench_build TARGET...      builds them (the layer, the bench agents, ...)
#   bench_layer                LAYER: the libjvmpi.so given, else the tree's, built;
#                              false with LAYER_PROBLEM set when there is none
#   bench_javac_tree FILES     TREE: FILES java/util sources of the measured JDK,
#                              patched into java.base, so every run does the same work
#   bench_javac_command AGENT  javac's arguments (AGENT: a -agentpath or -Xrun
#                              option, or empty), one per line
#   bench_rounds REPS WORKLOADS CONFIGS   runs `run_one <workload> <config> <round>`
#                              (the driver's) for each, interleaved, rotated each round
#   bench_median FILE COL WL CFG          median of column COL of the runs of WL/CFG
#                              that exited 0 (tab-separated: wl cfg round rc ...), or -
#   bench_ratio X Y [FORMAT]   X/Y (default %.2f), n/a if either is missing
bench_init() {
  BENCH_NAME=$1
  ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  BUILD_DIR=${BUILD_DIR:-build}
  case $BUILD_DIR in /*) ;; *) BUILD_DIR=$ROOT/$BUILD_DIR ;; esac
  JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
  WORK=${BENCH_WORK:-$BUILD_DIR/bench/${2:-work-$BENCH_NAME}}
  mkdir -p "$WORK"
  [ -x "$JAVA_HOME/bin/java" ] || die "no JDK at $JAVA_HOME"
  [ -x /usr/bin/time ] || { say "installing time"; bench_apt_install time; }
  JDK_MAJOR=$(bench_jdk_major "$JAVA_HOME")
  JDK_VERSION=$("$JAVA_HOME/bin/java" -XshowSettings:properties -version 2>&1 |
    sed -n 's/^ *java\.runtime\.version = //p')
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    cmake -S "$ROOT" -B "$BUILD_DIR" >"$WORK/configure.log" 2>&1 || die "configure failed (see $WORK/configure.log)"
  fi
}
say() { echo "$(basename "$0"): $*" >&2; } # usable before bench_init
die() { say "$*"; exit 1; }

bench_jdk_major() {
  "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p'
}

bench_apt_install() {
  apt-get install -y -q "$@" >"$WORK/apt.log" 2>&1 ||
    { apt-get update -q >>"$WORK/apt.log" 2>&1 && apt-get install -y -q "$@" >>"$WORK/apt.log" 2>&1; } ||
    die "apt-get install $* failed (see $WORK/apt.log)"
}

bench_build() {
  cmake --build "$BUILD_DIR" --target "$@" -j2 >"$WORK/build.log" 2>&1 || die "build failed (see $WORK/build.log)"
}

bench_layer() {
  LAYER_PROBLEM=
  if [ -n "${LAYER:-}" ]; then
    [ -f "$LAYER" ] || LAYER_PROBLEM="no $LAYER"
  elif LAYER=$BUILD_DIR/lib/libjvmpi.so && ! cmake --build "$BUILD_DIR" --target jvmpi -j2 >"$WORK/build-layer.log" 2>&1; then
    LAYER_PROBLEM="the layer did not build (see $WORK/build-layer.log)"
  elif [ ! -f "$LAYER" ]; then
    LAYER_PROBLEM="no $LAYER"
  fi
  [ -z "$LAYER_PROBLEM" ]
}

bench_javac_tree() {
  TREE=${JAVAC_TREE:-$WORK/javac-jdk$JDK_MAJOR-$1}
  . "$ROOT/scripts/jdk_sources.sh"
  jdk_sources_tree "$TREE" "$1" || die "no java/util sources for JDK $JDK_MAJOR"
}

bench_javac_command() {
  echo "$JAVA_HOME/bin/javac"
  [ -n "$1" ] && echo "-J$1"
  # JDK 8's javac compiles java.util's sources without --patch-module.
  [ "$JDK_MAJOR" = 1.8 ] || printf '%s\n' --patch-module "java.base=$TREE/src/java.base"
  printf '%s\n' -d "$WORK/javac-out" \
    -nowarn -XDignore.symbol.file -proc:none "@$TREE/sources.args"
}

bench_rounds() {
  local reps=$1 wl i rep start=$SECONDS
  local -a wls cfgs
  read -r -a wls <<<"$2"
  read -r -a cfgs <<<"$3"
  for ((rep = 1; rep <= reps; rep++)); do
    for wl in "${wls[@]}"; do
      for ((i = 0; i < ${#cfgs[@]}; i++)); do
        run_one "$wl" "${cfgs[$(((i + rep - 1) % ${#cfgs[@]}))]}" "$rep"
      done
    done
    say "round $rep of $reps done ($((SECONDS - start)) s)"
  done
}

bench_median() {
  awk -F'\t' -v c="$2" -v w="$3" -v g="$4" '$1 == w && $2 == g && $4 == 0 && $c != "-" { print $c }' "$1" |
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

bench_ratio() {
  awk -v x="$1" -v y="$2" -v f="${3:-%.2f}" 'BEGIN { if (x == "-" || y == "-" || y == 0) print "n/a"; else printf f, x / y }'
}
