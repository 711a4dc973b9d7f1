#!/bin/bash
# Everything CI checks: installs what is missing, builds, runs every test
# (unit and integration, on each JDK found: the system's and those that
# scripts/jdks.sh unpacks from Debian's archive), then builds the unit tests again
# with AddressSanitizer/UBSan in build-asan and runs them there.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --tests
# The JDKs the integration tests run on besides the system's (build/jdks):
# those of TEST_JDKS, e.g. TEST_JDKS="8 11 21 26 27" for every supported JDK;
# none by default (all seven would take CI past its hour today).
echo "test: JDKs from Debian's archive: ${TEST_JDKS:-none}"
bash scripts/jdks.sh
bash scripts/build.sh

# The JDKs ctest runs the integration tests on (labels jdkN), as CMake found them.
jdks_run=$(ctest --test-dir build -N -L integration | grep -o 'jdk[0-9]*$' | sort -uV | tr '\n' ' ' || true)
jdks_run=${jdks_run% }
echo "test: integration tests on: ${jdks_run:-no JDK}"

failed=()

echo "test: ctest build"
# A failing test does not stop the run: the sanitizer pass below still tells
# its own story, and the script fails at the end.
ctest --test-dir build --output-on-failure --no-tests=error -j2 || failed+=("ctest build")

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
