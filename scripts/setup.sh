#!/bin/bash
# Installs what building and testing the project needs on a Debian 12 machine,
# and only what is missing.  Runs as root, or through sudo otherwise; safe to
# run again and again (a no-op once everything is there), and works without a
# terminal (CI=true, no stdin).
#
#   --tests   also what only the tests need: Debian's chromium, in which
#             tests/integration/it_m_browser.sh loads the comparison report
#             (optional on a developer's machine, where that test then skips;
#             required under CI=true, so that CI never skips it)
set -euo pipefail

PACKAGES=(build-essential cmake pkg-config uthash-dev check openjdk-17-jdk-headless unzip python3 patchelf)

step() { echo "setup: $*"; }

# --- packages only some tests need -------------------------------------------
# optional_package PACKAGE FILE TEST WHY [required]: installs PACKAGE unless
# FILE (one of its files) is there.  Failing that is a warning (TEST then
# skips), or with "required" an error.  A stale package list is the usual
# reason for a failure: it is refreshed once and the install tried again.
optional_package() {
  local pkg=$1 file=$2 test=$3 why=$4 required=${5:-} root=()
  [ -e "$file" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      [ -n "$required" ] && { echo "setup: $pkg missing, and neither root nor sudo to install it" >&2; exit 1; }
      step "warning: $pkg missing and neither root nor sudo; $test will skip"
      return 0
    fi
    root=(sudo -n)
  fi
  local apt=("${root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get)
  step "apt-get install $pkg ($why)"
  if ! "${apt[@]}" install -y -q --no-install-recommends "$pkg" </dev/null >/dev/null 2>&1; then
    "${apt[@]}" update -q </dev/null >/dev/null 2>&1 || true
    if ! "${apt[@]}" install -y -q --no-install-recommends "$pkg" </dev/null >/dev/null 2>&1; then
      [ -n "$required" ] && { echo "setup: $pkg could not be installed, and CI needs it" >&2; exit 1; }
      step "warning: $pkg could not be installed; $test will skip"
    fi
  fi
  return 0
}

# visualvm: tests/integration/it_hprof_binary.sh reads the hprof agent's
# binary dumps with the heap library of Debian's visualvm package (an
# independent reader); optional, the test skips without it.
# chromium (--tests): tests/integration/it_m_browser.sh loads the comparison
# report in it; required under CI=true, so that CI never skips that test.
# Both before the required packages, whose "all present" exit would
# otherwise never reach them.
optional_package visualvm /usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar \
  it_hprof_binary "optional, for the hprof binary test"
for arg in "$@"; do
  case $arg in
    --tests)
      ci_needs=
      [ "${CI:-}" = true ] && ci_needs=required
      optional_package chromium /usr/bin/chromium it_m_browser "for the tests: the comparison report in a browser" $ci_needs
      ;;
    *) echo "setup: unknown option '$arg' (known: --tests)" >&2; exit 2 ;;
  esac
done
# --- end of packages only some tests need ----------------------------------------

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  step "all packages present (${PACKAGES[*]})"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  # -n: never wait for a password prompt nobody can answer in CI.
  as_root=(sudo -n env DEBIAN_FRONTEND=noninteractive)
else
  echo "setup: missing ${missing[*]}, and neither root nor sudo is available" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive

log=$(mktemp "${TMPDIR:-/tmp}/setup.XXXXXX.log")
trap 'rm -f "$log"' EXIT
# Runs a step quietly; on failure shows the end of its output.
quietly() {
  if ! "$@" >"$log" 2>&1 </dev/null; then
    echo "setup: failed: $*" >&2
    tail -30 "$log" >&2
    exit 1
  fi
}

step "missing: ${missing[*]}"
step "apt-get update"
quietly "${as_root[@]}" apt-get update -q
step "apt-get install ${missing[*]}"
quietly "${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"

for p in "${missing[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || { echo "setup: $p still not installed" >&2; exit 1; }
done
step "done"
