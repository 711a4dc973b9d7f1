#!/bin/bash
# The class rewriter's output passes the JVM's verifier: with method events
# on (the h_trace agent, METHOD_ENTRY + METHOD_EXIT) and OBJECT_ALLOC from the
# layer's allocation hooks (allocs=hooks: a call after every array
# allocation, as on JDK 8 and 11), every class of java.base and jdk.compiler
# (on JDK 8 the same packages of rt.jar and tools.jar) is loaded and linked
# under -Xverify:all, each
# rewritten as it loads or retransformed (those loaded before VM init); then
# javac, rewritten throughout, compiles the Java test programs.  No class may
# be rejected, none left unrewritten (the layer says so in a warning line),
# and the events must come from rewritten code of java.base as well, and
# from a class javac compiled for the JDK under test.
. "$(dirname "$0")/lib.sh"

out="$WORK/load.txt"
if [ "$JDK_MAJOR" -ge 9 ]; then
  load_args=(--add-modules jdk.compiler -cp "$CLASSES" H_LoadAll java.base jdk.compiler)
  opened='getFileSystem(Ljava/net/URI;)'
  javac_cmd=(-m jdk.compiler/com.sun.tools.javac.Main)
else
  # JDK 8 has no modules: what java.base holds is in rt.jar under these
  # packages, and javac is tools.jar's.
  load_args=(-cp "$CLASSES:$JAVA_HOME/lib/tools.jar" H_LoadAll "$JAVA_HOME/jre/lib/rt.jar" "$JAVA_HOME/lib/tools.jar"
    java/lang/ java/util/ java/io/ java/nio/ java/net/ java/math/ java/text/ java/time/ java/security/ sun/misc/ sun/nio/
    sun/net/ sun/util/ sun/security/ sun/reflect/ javax/crypto/ javax/security/ javax/net/
    sun/invoke/ sun/text/ com/sun/tools/javac/ com/sun/source/)
  opened='newFileSystem(Ljava/net/URI;Ljava/util/Map;)'
  javac_cmd=(-cp "$JAVA_HOME/lib/tools.jar" com.sun.tools.javac.Main)
fi
JVMPI_LAYER_OPTIONS=allocs=hooks run_java load \
  "$(agent_arg h_trace "out=$out,classes=H_LoadAll|java.nio.file.FileSystems,entry=plain,allocs=y")" \
  -Xverify:all "${load_args[@]}" || { tail -20 "$WORK/load.err"; fail "java exited non-zero"; }
expect_no_crash
line=$(grep '^H_LoadAll: ' "$WORK/load.out")
note "$line"
linked=$(echo "$line" | sed -n 's/.*linked=\([0-9]*\).*/\1/p')
[ "${linked:-0}" -ge 5000 ] || fail "only ${linked:-no} classes linked"
expect_file_has "$WORK/load.out" ' rejected=0 '
expect_file_lacks "$WORK/load.out" '^BAD '
expect_file_lacks "$WORK/load.err" 'left as it is'
[ -s "$WORK/load.err" ] && { cat "$WORK/load.err"; fail "the layer or the VM printed something"; }
expect_file_has "$out" '^main E H_LoadAll.main(\[Ljava/lang/String;)V 0$'
expect_file_has "$out" "^main X java.nio.file.FileSystems.$opened"'Ljava/nio/file/FileSystem;$'
expect_file_has "$out" '^h_trace: [0-9]* arrays allocated$'

mkdir -p "$WORK/javac-out"
out="$WORK/javac.txt"
JVMPI_LAYER_OPTIONS=allocs=hooks run_java javac \
  "$(agent_arg h_trace "out=$out,classes=com.sun.tools.javac.Main,entry=plain,allocs=y")" -Xverify:all \
  "${javac_cmd[@]}" -d "$WORK/javac-out" "$SOURCE_DIR"/tests/java/H_*.java \
  "$SOURCE_DIR"/tests/java/A_Hello.java || { tail -20 "$WORK/javac.err"; fail "javac failed"; }
expect_no_crash
[ -f "$WORK/javac-out/H_Shapes.class" ] || fail "javac wrote no H_Shapes.class"
expect_file_lacks "$WORK/javac.err" 'left as it is'
expect_file_has "$out" '^main E com.sun.tools.javac.Main.main(\[Ljava/lang/String;)V 0$'
expect_file_has "$out" '^h_trace: [0-9]* arrays allocated$'

# What that javac compiled is of this JDK's own class file version (a newer
# one than the rewriter was written for, on a JDK newer than 25): its
# methods report their events too.
version=$(od -An -tu1 -j6 -N2 "$WORK/javac-out/A_Hello.class" | awk '{print $1 * 256 + $2}')
note "A_Hello.class is of version $version"
[ "$version" -eq $((JDK_MAJOR + 44)) ] || fail "javac $JDK_MAJOR wrote class file version $version"
out="$WORK/hello.txt"
run_java hello "$(agent_arg h_trace "out=$out,classes=A_Hello,entry=plain")" -Xverify:all -cp "$WORK/javac-out" \
  A_Hello || { tail -20 "$WORK/hello.err"; fail "A_Hello failed"; }
[ -s "$WORK/hello.err" ] && { cat "$WORK/hello.err"; fail "the layer or the VM printed something"; }
expect_file_has "$out" '^main E A_Hello.main(\[Ljava/lang/String;)V 0$'
expect_file_has "$out" '^main X A_Hello.main(\[Ljava/lang/String;)V$'
echo ok
