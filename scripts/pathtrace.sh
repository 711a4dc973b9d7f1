#!/bin/bash
# Measures the path of one allocation through the layer, from the backend's
# callback (bk_on_sampled_alloc) to the agent's handler and back, on a real
# JVM.  Builds an instrumented layer in its own build dir (-DJVMPI_TRACE_PATH=ON;
# normal builds are untouched), runs the c_alloc test agent (OBJECT_ALLOC,
# CLASS_LOAD, THREAD_START, enabled at JVM_INIT_DONE) on C_Alloc, and counts
# the recorded path with scripts/pathtrace/count.py.  docs/design.md, "The
# event pipeline", says how it is counted.
#
#   scripts/pathtrace.sh [count.py options, e.g. --calls-too or --max-reentries N]
#
# Environment: PATH_BUILD_DIR (default build-path), PATH_NO_BUILD=1 to use it
# as built, JVMPI_PATH_NTH (which allocation, default 1000), JAVA_HOME
# (default JDK 17).
set -euo pipefail
cd "$(dirname "$0")/.."

build=${PATH_BUILD_DIR:-build-path}
case $build in /*) ;; *) build=$PWD/$build ;; esac
java_home=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
work=$build/pathtrace
mkdir -p "$work"
if [ -z "${PATH_NO_BUILD:-}" ]; then
  { cmake -S . -B "$build" -DJVMPI_TRACE_PATH=ON -DJVMPI_BENCH=OFF &&
    cmake --build "$build" --target jvmpi testagent_c_alloc java_test_classes -j2; } >"$work/build.log" 2>&1 ||
    { tail -20 "$work/build.log"; echo "pathtrace.sh: build failed (see $work/build.log)" >&2; exit 1; }
fi
agent=$build/tests/agents/libc_alloc.so
rm -f "$work/calls.txt"
JVMPI_PATH_OUT=$work/calls.txt JVMPI_PATH_NTH=${JVMPI_PATH_NTH:-1000} \
  timeout 300 "$java_home/bin/java" "-agentpath:$build/lib/libjvmpi.so=$agent:out=$work/agent.txt,enable=init" \
  -Dagent.lib="$agent" -cp "$build/tests/classes" C_Alloc >"$work/java.out" 2>&1 ||
  { tail -20 "$work/java.out"; echo "pathtrace.sh: java failed (see $work/java.out)" >&2; exit 1; }
exec python3 scripts/pathtrace/count.py "$@" "$work/calls.txt"
