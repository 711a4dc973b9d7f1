#!/bin/bash
# -agentlib:hprof through the jvmpi launcher (installed into a prefix, as
# users have it).  JDK 9 removed HPROF, so on it the launcher rewrites
# -agentlib:hprof[=OPTIONS] (and -J-agentlib:hprof, and the words of
# JAVA_TOOL_OPTIONS) to -Xrunhprof[:OPTIONS], the work-alike.  A JDK 8 with
# its own libhprof.so keeps that one, unless JVMPI_HPROF=workalike: then both
# -agentlib:hprof and -Xrunhprof go to the work-alike.
. "$(dirname "$0")/lib.sh"
needs_class CtHello
BUILD=$(dirname "$(dirname "$LAYER")")
PREFIX="$WORK/prefix"
cmake --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; fail "cmake --install failed"; }
JVMPI=$PREFIX/bin/jvmpi
own=no
for f in "$JAVA_HOME"/jre/lib/*/libhprof.so; do [ -f "$f" ] && own=yes; done

# through NAME [VAR=VALUE...] -- java-args...: java through the launcher.
through() {
  local name=$1; shift
  local -a envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  note "${envs[*]} jvmpi java $*"
  env -u JAVA_TOOL_OPTIONS -u JVMPI_HPROF "${envs[@]}" timeout 120 "$JVMPI" "$JAVA" "$@" -cp "$CLASSES" CtHello \
    >"$WORK/$name.out" 2>"$WORK/$name.err"
}
workalike() { # FILE: a profile of the work-alike, with SITES
  expect_file_has "$1" '^Written by the HPROF work-alike JVMPI agent'
  expect_file_has "$1" '^SITES BEGIN'
}
jdks_own() { # FILE: a profile of JDK 8's own HPROF
  expect_file_lacks "$1" 'HPROF work-alike'
  expect_file_has "$1" '^SITES BEGIN'
}

# The rewriting itself, seen by a command that prints its arguments.
env -u JVMPI_HPROF JAVA_TOOL_OPTIONS="-agentlib:hprof=heap=sites -Dx=1" "$JVMPI" sh -c \
  'printf "%s\n" "$@" "$JAVA_TOOL_OPTIONS"' sh -agentlib:hprof -J-agentlib:hprof=cpu=samples,interval=20 -Xrunhprof:doe=n \
  -agentlib:jdwp=x >"$WORK/args.out" || fail "the launcher did not run sh"
if [ $own = no ]; then
  printf '%s\n' -Xrunhprof -J-Xrunhprof:cpu=samples,interval=20 -Xrunhprof:doe=n -agentlib:jdwp=x \
    "-agentpath:$(readlink -f "$PREFIX/lib/jvmpi/libjvmpi.so") -Xrunhprof:heap=sites -Dx=1" >"$WORK/args.want"
else
  printf '%s\n' -agentlib:hprof -J-agentlib:hprof=cpu=samples,interval=20 -Xrunhprof:doe=n -agentlib:jdwp=x \
    "-agentpath:$(readlink -f "$PREFIX/lib/jvmpi/libjvmpi.so") -agentlib:hprof=heap=sites -Dx=1" >"$WORK/args.want"
fi
diff "$WORK/args.want" "$WORK/args.out" || fail "the launcher's rewriting (JDK $JDK_MAJOR, own HPROF: $own): expected left, got right"

if [ $own = no ]; then
  through opts -- -agentlib:hprof=heap=sites,file="$WORK/opts.txt" || { cat "$WORK/opts.err"; fail "-agentlib:hprof=... exited non-zero"; }
  workalike "$WORK/opts.txt"
  mkdir -p "$WORK/d" && (cd "$WORK/d" && through bare -- -agentlib:hprof) || { cat "$WORK/bare.err"; fail "-agentlib:hprof exited non-zero"; }
  workalike "$WORK/d/java.hprof.txt"
  expect_file_has "$WORK/d/java.hprof.txt" '^HEAP DUMP BEGIN'
  through tool JAVA_TOOL_OPTIONS="-agentlib:hprof=heap=sites,file=$WORK/tool.txt" -- ||
    { cat "$WORK/tool.err"; fail "JAVA_TOOL_OPTIONS=-agentlib:hprof=... exited non-zero"; }
  workalike "$WORK/tool.txt"
  through help -- -agentlib:hprof=help || { cat "$WORK/help.err"; fail "-agentlib:hprof=help exited non-zero"; }
  expect_file_has "$WORK/help.out" '^interval=ms'
else
  through own -- -agentlib:hprof=heap=sites,file="$WORK/own.txt" || { cat "$WORK/own.err"; fail "JDK 8's own HPROF exited non-zero"; }
  jdks_own "$WORK/own.txt"
  through wa JVMPI_HPROF=workalike -- -agentlib:hprof=heap=sites,file="$WORK/wa.txt" ||
    { cat "$WORK/wa.err"; fail "JVMPI_HPROF=workalike -agentlib:hprof=... exited non-zero"; }
  workalike "$WORK/wa.txt"
  expect_file_has "$WORK/wa.err" "^Picked up JAVA_TOOL_OPTIONS: -agentpath:[^ ]*/libjvmpi.so=hprof:heap=sites,file=$WORK/wa.txt\$"
  through wx JVMPI_HPROF=workalike -- -Xrunhprof:heap=sites,file="$WORK/wx.txt" ||
    { cat "$WORK/wx.err"; fail "JVMPI_HPROF=workalike -Xrunhprof:... exited non-zero"; }
  workalike "$WORK/wx.txt"
  # Named twice, it cannot be given to the layer twice: one line says so.
  if through twice JVMPI_HPROF=workalike -- -agentlib:hprof -Xrunhprof:heap=sites; then fail "hprof named twice ran"; fi
  expect_file_has "$WORK/twice.err" '^jvmpi: error: hprof is asked for 2 times'
fi

# A JVMPI_HPROF the launcher does not know: one line, and nothing runs.
if JVMPI_HPROF=jdk "$JVMPI" "$JAVA" -version >"$WORK/badenv.out" 2>"$WORK/badenv.err"; then fail "JVMPI_HPROF=jdk was taken"; fi
[ "$(wc -l <"$WORK/badenv.err")" = 1 ] && expect_file_has "$WORK/badenv.err" '^jvmpi: error: JVMPI_HPROF=jdk' ||
  { cat "$WORK/badenv.err"; fail "JVMPI_HPROF=jdk: not one error line"; }
"$JVMPI" --help | grep -q 'JVMPI_HPROF=workalike' || fail "jvmpi --help does not tell of JVMPI_HPROF=workalike"
"$JVMPI" --help | grep -q "'man jvmpi'" || fail "jvmpi --help does not name the man page"
expect_no_crash
echo "ok: -agentlib:hprof through the launcher on JDK $JDK_MAJOR ($([ $own = yes ] && echo "its own HPROF kept; the work-alike with JVMPI_HPROF=workalike" || echo "the work-alike"))"
