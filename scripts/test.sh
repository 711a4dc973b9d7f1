#!/bin/bash
# Everything CI checks: installs what is missing, builds, runs every test
# (unit and integration, on the system's JDKs and on those that
# scripts/jdks.sh unpacks from Debian's archive), then builds the unit tests
# again with AddressSanitizer/UBSan in build-asan and runs them there.
#
# TEST_JDKS names the JDKs from Debian's archive, "8 11 21 26 27" (every
# supported JDK beside the system's 17 and 25) when unset, "none" for none.
# They are fetched in the background while the system's JDKs are tested, and
# tested after them.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --tests
export TEST_JDKS=${TEST_JDKS:-8 11 21 26 27}
echo "test: JDKs from Debian's archive: $TEST_JDKS"
mkdir -p build
# At the lowest CPU priority: the tests running meanwhile include timed ones.
nice -n 19 bash scripts/jdks.sh >build/jdks.log 2>&1 &
fetch=$!

failed=()

# jdk_labels: the JDKs ctest runs the integration tests on (labels jdkN), as
# CMake found them.
jdk_labels() { ctest --test-dir build -N -L integration | grep -o 'jdk[0-9]*$' | sort -uV | tr '\n' ' ' || true; }

# ctest_build WHAT ARGS...: one ctest run over build.  A failing test does
# not stop the script: the rest still tells its story, and the script fails
# at the end.
ctest_build() {
  local what=$1
  shift
  echo "test: ctest build ($what)"
  ctest --test-dir build --output-on-failure --no-tests=error -j2 "$@" || failed+=("ctest build ($what)")
}

bash scripts/build.sh -DJVMPI_TREE_JDKS=OFF
system_jdks=$(jdk_labels)
system_jdks=${system_jdks% }
echo "test: integration tests on the system's JDKs: ${system_jdks:-none}"
ctest_build "unit, the system's JDKs"

echo "test: waiting for scripts/jdks.sh"
fetched=true
wait "$fetch" || fetched=false
cat build/jdks.log
if [ "$fetched" = false ]; then
  failed+=("scripts/jdks.sh")
fi
bash scripts/build.sh -DJVMPI_TREE_JDKS=ON
jdks_run=$(jdk_labels)
jdks_run=${jdks_run% }
added=()
for label in $jdks_run; do
  [[ " $system_jdks " == *" $label "* ]] || added+=("$label")
done
if [ ${#added[@]} -gt 0 ]; then
  echo "test: integration tests on the JDKs of build/jdks: ${added[*]}"
  ctest_build "${added[*]}" -L "^($(
    IFS='|'
    echo "${added[*]}"
  ))\$"
fi

# Only the unit suites carry the sanitizers (the layer itself is loaded into a
# JVM, which does not run under ASan), so only they are built here.
suites=()
for s in tests/unit/test_*.c; do
  [ -e "$s" ] && suites+=("$(basename "$s" .c)")
done
if [ ${#suites[@]} -eq 0 ]; then
  echo "test: no unit suites in tests/unit" >&2
  exit 1
fi
echo "test: configure build-asan (JVMPI_SANITIZE=ON)"
cmake -S . -B build-asan -DJVMPI_SANITIZE=ON
echo "test: compile build-asan: ${suites[*]}"
cmake --build build-asan -j"$(nproc)" --target "${suites[@]}"
echo "test: ctest build-asan (unit)"
ctest --test-dir build-asan -L unit --output-on-failure --no-tests=error || failed+=("ctest build-asan")

if [ ${#failed[@]} -gt 0 ]; then
  echo "test: FAILED: ${failed[*]} (integration tests on: $jdks_run)" >&2
  exit 1
fi
echo "test: all passed (integration tests on: $jdks_run)"
