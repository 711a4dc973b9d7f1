#!/bin/bash
# The layer installed as users install it: `cmake --install` into a prefix,
# and the Debian package (cpack -G DEB) unpacked into a scratch root with
# dpkg -x.  From each, the launcher runs an unchanged -Xrun command line
# through the installed layer and agents, keeping the user's own
# JAVA_TOOL_OPTIONS and LD_LIBRARY_PATH.
. "$(dirname "$0")/lib.sh"

BUILD=$(dirname "$(dirname "$LAYER")")
[ -f "$BUILD/CPackConfig.cmake" ] || fail "no CPackConfig.cmake in $BUILD"
command -v dpkg >/dev/null || skip "dpkg not found: cannot unpack the Debian package"
needs_class CtHello

# ct_run LAUNCHER TAG: java -Xrunclasstrace through LAUNCHER, with a
# JAVA_TOOL_OPTIONS and an LD_LIBRARY_PATH of the user's that must survive.
ct_run() {
  local launcher=$1 tag=$2
  note "$launcher java -Xrunclasstrace:file=$WORK/$tag.txt -cp \$CLASSES CtHello"
  PATH="$JAVA_HOME/bin:$PATH" JAVA_TOOL_OPTIONS="-Dmine=kept" LD_LIBRARY_PATH=/nonexistent \
    timeout 120 "$launcher" java -Xrunclasstrace:file="$WORK/$tag.txt" -cp "$CLASSES" CtHello \
    >"$WORK/$tag.out" 2>"$WORK/$tag.err" || { cat "$WORK/$tag.err"; fail "$tag: java exited non-zero"; }
  expect_file_has "$WORK/$tag.txt" '^CLASS_LOAD CtHello (CtHello\.java) '
  expect_file_has "$WORK/$tag.txt" '^JVM_INIT_DONE$'
  expect_file_has "$WORK/$tag.out" '^done$'
  # The JVM shows what it picked up: the layer first, the user's option after.
  expect_file_has "$WORK/$tag.err" "^Picked up JAVA_TOOL_OPTIONS: -agentpath:[^ ]*/lib/jvmpi/libjvmpi.so -Dmine=kept\$"
  expect_file_lacks "$WORK/$tag.err" 'JVMPI layer'
}

# ---- cmake --install into a prefix ----
PREFIX="$WORK/prefix"
cmake --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; fail "cmake --install failed"; }
for f in bin/jvmpi lib/jvmpi/libjvmpi.so lib/jvmpi/agents/libhprof.so lib/jvmpi/agents/libclasstrace.so \
  include/jvmpi/jvmpi.h share/doc/jvmpi-layer/README.md share/man/man1/jvmpi.1; do
  [ -e "$PREFIX/$f" ] || fail "cmake --install left out $f"
done
ct_run "$PREFIX/bin/jvmpi" prefix

# The launcher says what is wrong in one line when the layer is missing.
mkdir -p "$WORK/broken/bin" && cp "$PREFIX/bin/jvmpi" "$WORK/broken/bin/"
if "$WORK/broken/bin/jvmpi" true 2>"$WORK/broken.err"; then fail "the launcher ran without its layer"; fi
expect_file_has "$WORK/broken.err" '^jvmpi: error: the layer is not at .*/lib/jvmpi/libjvmpi.so'
[ "$(wc -l <"$WORK/broken.err")" -eq 1 ] || fail "the launcher's error is not one line"

# ---- the Debian package, unpacked into a scratch root ----
# The package is the same whatever the JDK (and cpack rebuilds a build
# directory whose sources changed): made on the full runs only.
launcher=$PREFIX/bin/jvmpi
if full_run "the Debian package"; then
  (cd "$WORK" && cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$WORK/pkg") >"$WORK/cpack.log" 2>&1 ||
    { tail -20 "$WORK/cpack.log"; fail "cpack -G DEB failed"; }
  DEB=$(ls "$WORK"/pkg/jvmpi-layer_*_amd64.deb 2>/dev/null | head -1)
  [ -n "$DEB" ] || fail "cpack made no jvmpi-layer .deb in $WORK/pkg"
  dpkg-deb -f "$DEB" Package | grep -qx jvmpi-layer || fail "$DEB is not the jvmpi-layer package"
  dpkg -x "$DEB" "$WORK/root" || fail "dpkg -x $DEB failed"
  [ -x "$WORK/root/usr/bin/jvmpi" ] || fail "the package has no /usr/bin/jvmpi"
  [ -f "$WORK/root/usr/share/man/man1/jvmpi.1" ] || fail "the package has no man page (/usr/share/man/man1/jvmpi.1)"
  ct_run "$WORK/root/usr/bin/jvmpi" deb
  launcher=$WORK/root/usr/bin/jvmpi
fi

# The HPROF work-alike by its old name (JDK 8's own HPROF answers -Xrunhprof there).
if [ "$JDK_MAJOR" -ge 9 ]; then
  PATH="$JAVA_HOME/bin:$PATH" timeout 120 "$launcher" java -Xrunhprof:heap=sites,file="$WORK/hprof.txt" \
    -cp "$CLASSES" CtHello >"$WORK/hprof.out" 2>"$WORK/hprof.err" || { cat "$WORK/hprof.err"; fail "-Xrunhprof through $launcher failed"; }
  expect_file_has "$WORK/hprof.txt" '^Written by the HPROF work-alike JVMPI agent'
  expect_file_has "$WORK/hprof.txt" '^SITES BEGIN'
fi
echo "install: $([ "$launcher" = "$PREFIX/bin/jvmpi" ] && echo prefix || echo 'prefix and package both') run -Xrunclasstrace$([ "$JDK_MAJOR" -ge 9 ] && echo ' and -Xrunhprof')"
