#!/bin/bash
# Installs what building and testing the project needs on a Debian 12 machine,
# and only what is missing.  Runs as root, or through sudo otherwise; safe to
# run again and again (a no-op once everything is there), and works without a
# terminal (CI=true, no stdin).
set -euo pipefail

PACKAGES=(build-essential cmake pkg-config uthash-dev check openjdk-17-jdk-headless unzip)

step() { echo "setup: $*"; }

# --- visualvm: optional, for tests/integration/it_hprof_binary.sh -----------
# That test reads the hprof agent's binary dumps with the heap library of
# Debian's visualvm package (an independent reader).  Optional: without it the
# test skips, so failing to install it is a warning, never an error.  Done
# before the required packages because the early "all present" exit below
# would otherwise never reach it.
setup_visualvm() {
  local jar=/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar
  local root=()
  [ -f "$jar" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      step "warning: visualvm missing and neither root nor sudo; it_hprof_binary will skip"
      return 0
    fi
    root=(sudo -n)
  fi
  local apt=("${root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get)
  step "apt-get install visualvm (optional, for the hprof binary test)"
  if ! "${apt[@]}" install -y -q --no-install-recommends visualvm </dev/null >/dev/null 2>&1; then
    # A stale package list is the usual reason: refresh it once and retry.
    "${apt[@]}" update -q </dev/null >/dev/null 2>&1 || true
    "${apt[@]}" install -y -q --no-install-recommends visualvm </dev/null >/dev/null 2>&1 ||
      step "warning: visualvm could not be installed; it_hprof_binary will skip"
  fi
  return 0
}
setup_visualvm
# --- end visualvm -------------------------------------------------------------

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
