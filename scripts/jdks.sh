#!/bin/bash
# jdks.sh [N...] - Debian's OpenJDK N (default: $TEST_JDKS, or "8 11 21 26
# 27" when it is unset, which with the system's 17 and 25 is every JDK the
# layer supports) unpacked under build/jdks/N (or $JDKS_DIR/N), beside the
# system's own packages and never over them; only what is missing is fetched.
# tests/integration/CMakeLists.txt runs every integration test on each JDK
# found there.
#
# The packages come from Debian's archive (scripts/debfetch.py checks each
# against the index's SHA256), from the releases that have them: 11 from
# Debian 11, 21 from Debian 13, 8, 26, 27 and the early-access 28 from
# unstable.
# Those built for a newer glibc than this machine's run under the glibc of
# Debian 13's libc6, unpacked beside them: each of their executables becomes
# a small script that starts the real one through that glibc's loader, which
# then serves that process alone (its children, the JVM's jspawnhelper
# included, go through such a script again); JDK 8's, which must know their
# own path, are patched instead (patch_executables).  Debian's /etc/java-N links are
# replaced by the files they point to, which the package carries.  Each JDK
# also gets its own sources (openjdk-N-source) as lib/src.zip, for the javac
# workloads of the tests.
#
# Works without a terminal; fails with one line when the archive cannot be
# reached.  Needs python3 and dpkg-deb (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

ROOT=${JDKS_DIR:-${BUILD_DIR:-build}/jdks}
# TEST_JDKS (space-separated) replaces the default list, "none" for none.
read -r -a DEFAULT_JDKS <<<"${TEST_JDKS:-8 11 21 26 27}"
[ "${DEFAULT_JDKS[*]}" = none ] && DEFAULT_JDKS=()

# Debian releases to take each JDK from, the first that has it.
suites_for() {
  case $1 in
    8) echo "sid" ;;
    11) echo "bullseye sid" ;;
    21) echo "trixie sid" ;;
    25) echo "trixie sid" ;;
    26 | 27 | 28) echo "sid" ;;
    *) return 1 ;;
  esac
}

say() { echo "jdks: $*"; }
die() { echo "jdks: $*" >&2; exit 1; }

# version_lt A B: A sorts before B as a version.
version_lt() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" = "$1" ]; }

system_glibc() { getconf GNU_LIBC_VERSION | awk '{print $2}'; }

# The glibc the wrapped launchers load, at least version $1.
ensure_libc() {
  local floor=$1 line ver
  if [ -f "$ROOT/libc/.version" ] && ! version_lt "$(cat "$ROOT/libc/.version")" "$floor"; then
    return 0
  fi
  line=$(python3 scripts/debfetch.py "$ROOT/debs" "trixie sid" libc6) || exit 1
  ver=$(cut -f2 <<<"$line")
  version_lt "${ver%%-*}" "$floor" && die "Debian's newest libc6 is $ver, older than the $floor a JDK needs"
  rm -rf "$ROOT/libc" && mkdir -p "$ROOT/libc"
  dpkg-deb -x "$(cut -f4 <<<"$line")" "$ROOT/libc"
  rm -f "$(cut -f4 <<<"$line")"
  echo "${ver%%-*}" >"$ROOT/libc/.version"
  say "glibc ${ver%%-*} (Debian's libc6 $ver) under $ROOT/libc, for the JDKs that need it"
}

# wrap_executables HOME FINAL: every executable of the JDK at HOME (to be
# moved to FINAL) is started through the private glibc's loader.
wrap_executables() {
  local home=$1 final=$2 f dir name rel
  while IFS= read -r f; do
    [ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
    dir=$(dirname "$f") name=$(basename "$f")
    # Beside the original directory, at the same depth: the binaries' own
    # $ORIGIN/../lib run paths still lead to the JDK's libraries.
    mkdir -p "$dir.real" && mv "$f" "$dir.real/$name"
    rel=$(realpath -m --relative-to="$final/${dir#"$home"/}" "$ROOT/libc/usr/lib/x86_64-linux-gnu")
    cat >"$f" <<EOF
#!/bin/sh
# Written by scripts/jdks.sh: this JDK needs a newer glibc than the system's,
# so its $name runs under the one unpacked in $ROOT/libc.
here=\$(dirname "\$(readlink -f "\$0")")
libc=\$here/$rel
exec "\$libc/ld-linux-x86-64.so.2" --library-path "\$libc\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" --argv0 "\$0" "\$here/../$(basename "$dir").real/$name" "\$@"
EOF
    chmod 755 "$f"
  done < <(find "$home" -type f -perm -u+x ! -name '*.so' ! -name '*.so.*')
}

# patch_executables HOME FINAL: JDK 8's launcher finds its JRE from its own
# executable's path, which under a script of wrap_executables would be the
# loader's: its executables get the private glibc's loader as their
# interpreter and its library directory first in their run path instead
# (absolute paths: FINAL stays where it is).
patch_executables() {
  local home=$1 final=$2 f rpath libc
  libc=$(realpath -m "$ROOT/libc/usr/lib/x86_64-linux-gnu")
  command -v patchelf >/dev/null || die "patchelf is missing (scripts/setup.sh installs it)"
  while IFS= read -r f; do
    [ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
    rpath=$(patchelf --print-rpath "$f")
    patchelf --set-interpreter "$libc/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$libc${rpath:+:$rpath}" "$f"
  done < <(find "$home" -type f -perm -u+x ! -name '*.so' ! -name '*.so.*')
}

# The JDK's own sources (Debian's openjdk-N-source) as lib/src.zip, where a
# JDK has them: the tests' javac workloads compile its java.util.
provision_sources() {
  local n=$1 final="$ROOT/$1" line zip tmp="$ROOT/.unpack-$1-src"
  [ -e "$final/lib/src.zip" ] && return 0
  say "JDK $n: fetching openjdk-$n-source (its java.util, which the javac workloads of the tests compile)"
  line=$(python3 scripts/debfetch.py "$ROOT/debs" "$(suites_for "$n")" "openjdk-$n-source") || exit 1
  rm -rf "$tmp" && mkdir -p "$tmp"
  dpkg-deb -x "$(cut -f4 <<<"$line")" "$tmp"
  zip=$(find "$tmp" -name src.zip -type f | head -1)
  [ -n "$zip" ] || die "JDK $n: no src.zip in openjdk-$n-source"
  mv "$zip" "$final/lib/src.zip.part" && mv "$final/lib/src.zip.part" "$final/lib/src.zip"
  rm -rf "$tmp" "$(cut -f4 <<<"$line")"
}

provision() {
  local n=$1 suites tmp lines home floor sys l
  local final="$ROOT/$n"
  [ -f "$final/.provisioned" ] && { provision_sources "$n"; return 0; }
  suites=$(suites_for "$n") || die "no Debian release known for JDK $n (known: 8 11 21 25 26 27 28)"
  say "JDK $n: fetching openjdk-$n-jre-headless and openjdk-$n-jdk-headless from Debian ($suites)"
  lines=$(python3 scripts/debfetch.py "$ROOT/debs" "$suites" "openjdk-$n-jre-headless" "openjdk-$n-jdk-headless") || exit 1
  tmp="$ROOT/.unpack-$n"
  rm -rf "$tmp" "$final" && mkdir -p "$tmp"
  while IFS= read -r l; do dpkg-deb -x "$(cut -f4 <<<"$l")" "$tmp"; done <<<"$lines"
  home=$(find "$tmp/usr/lib/jvm" -mindepth 1 -maxdepth 1 -type d -name "java-$n-openjdk-*" | head -1)
  [ -n "$home" ] && [ -e "$home/bin/javac" ] || die "JDK $n: no java-$n-openjdk-* with bin/javac in the packages"
  # Links into /etc/java-N-openjdk: the files are in the package's etc/.
  while IFS= read -r l; do
    local target
    target=$(readlink "$l")
    [ -e "$tmp$target" ] && cp --remove-destination "$tmp$target" "$l"
  done < <(find "$home" -type l -lname '/etc/java-*')
  floor=$(cut -f5 <<<"$lines" | sort -V | tail -1)
  sys=$(system_glibc)
  if [ -n "$floor" ] && version_lt "$sys" "$floor"; then
    ensure_libc "$floor"
    if [ "$n" -lt 9 ]; then
      patch_executables "$home" "$final"
    else
      wrap_executables "$home" "$final"
    fi
    say "JDK $n needs glibc $floor (this system has $sys): it runs under $ROOT/libc"
  fi
  mv "$home" "$final"
  rm -rf "$tmp"
  while IFS= read -r l; do rm -f "$(cut -f4 <<<"$l")"; done <<<"$lines"
  "$final/bin/java" -version >/dev/null 2>&1 && "$final/bin/javac" -version >/dev/null 2>&1 ||
    die "JDK $n unpacked in $final but its java or javac does not start: $("$final/bin/java" -version 2>&1 | head -1)"
  cut -f1-3 <<<"$lines" >"$final/.provisioned"
  say "JDK $n: $(cut -f2,3 <<<"$lines" | head -1 | tr '\t' ' ') in $final"
  provision_sources "$n"
}

command -v python3 >/dev/null || die "python3 is missing (scripts/setup.sh installs it)"
command -v dpkg-deb >/dev/null || die "dpkg-deb is missing"
mkdir -p "$ROOT"
jdks=("$@")
[ ${#jdks[@]} -eq 0 ] && jdks=("${DEFAULT_JDKS[@]}")
for n in "${jdks[@]}"; do provision "$n"; done
say "JDKs in $ROOT: $(cd "$ROOT" && ls -d [0-9]* 2>/dev/null | sort -n | tr '\n' ' ')"
