#!/bin/bash
# jdk_sources.sh - a real Java source tree for the demo and the benchmarks:
# java.util from the JDK's own sources (src.zip of Debian's openjdk-17-source).
# Sourced, not run.  jdk_sources_tree DIR N unpacks the first N java/util
# files (sorted) into DIR/src and writes DIR/sources.args for javac @-files.
#
# Installing openjdk-17-source would also move openjdk-17-jdk to the source
# package's version on this machine; only src.zip is needed, so the package is
# downloaded and unpacked under DIR instead.  A src.zip named by SRC_ZIP, or
# one the JDK already has (JAVA_HOME/lib/src.zip), is used as it is.

jdk_sources_zip() {
  local dir=$1 z
  for z in "${SRC_ZIP:-/nonexistent}" "${JAVA_HOME:-/nonexistent}/lib/src.zip" /usr/lib/jvm/openjdk-17/lib/src.zip \
           "$dir/deb/usr/lib/jvm/openjdk-17/lib/src.zip"; do
    [ -r "$z" ] && { echo "$z"; return 0; }
  done
  mkdir -p "$dir/deb"
  ( cd "$dir" && { apt-get download openjdk-17-source || { apt-get update -q && apt-get download openjdk-17-source; }; } ) \
    >"$dir/apt.log" 2>&1 || { echo "jdk_sources: apt-get download openjdk-17-source failed (see $dir/apt.log)" >&2; return 1; }
  dpkg-deb -x "$dir"/openjdk-17-source_*.deb "$dir/deb" && rm -f "$dir"/openjdk-17-source_*.deb
  z="$dir/deb/usr/lib/jvm/openjdk-17/lib/src.zip"
  [ -r "$z" ] || { echo "jdk_sources: no src.zip in the openjdk-17-source package" >&2; return 1; }
  echo "$z"
}

jdk_sources_tree() {
  local dir=$1 n=$2 zip
  [ -f "$dir/.done-$n" ] && return 0
  command -v unzip >/dev/null || { echo "jdk_sources: unzip is missing (scripts/setup.sh installs it)" >&2; return 1; }
  zip=$(jdk_sources_zip "$dir") || return 1
  rm -rf "$dir/src" && mkdir -p "$dir/src"
  unzip -Z1 "$zip" | grep -E '^(java\.base/)?java/util/[^/]+\.java$' | LC_ALL=C sort | head -n "$n" >"$dir/files.txt"
  [ -s "$dir/files.txt" ] || { echo "jdk_sources: no java/util sources in $zip" >&2; return 1; }
  (cd "$dir/src" && unzip -q "$zip" $(cat "$dir/files.txt")) || return 1
  sed "s|^|$dir/src/|" "$dir/files.txt" >"$dir/sources.args"
  touch "$dir/.done-$n"
}
