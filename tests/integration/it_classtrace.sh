#!/bin/bash
# The classtrace agent (legacy_agents/classtrace), loaded by name through the
# layer: with -agentpath:$LAYER=classtrace:..., where the layer finds
# libclasstrace.so in its own agents directory (PROJECT_AGENTS_DIR), and with
# the unchanged -Xrunclasstrace command line.
. "$(dirname "$0")/lib.sh"

[ -f "$PROJECT_AGENTS_DIR/libclasstrace.so" ] || fail "libclasstrace.so not built in $PROJECT_AGENTS_DIR"
[ -f "$CLASSES/CtHello.class" ] || fail "CtHello.class missing from $CLASSES"

# summary_counts FILE: prints "loaded unloaded threads" from the summary line.
summary_counts() {
  sed -n 's/^classtrace: \([0-9]*\) classes loaded, \([0-9]*\) unloaded, \([0-9]*\) threads$/\1 \2 \3/p' "$1"
}

# check_trace FILE: what every run must show, whatever the options.
check_trace() {
  local f="$1"
  expect_file_has "$f" '^CLASS_LOAD java\.lang\.Object (Object\.java) '
  expect_file_has "$f" '^CLASS_LOAD java\.lang\.String (String\.java) '
  expect_file_has "$f" '^CLASS_LOAD java\.lang\.Thread (Thread\.java) '
  # CtHello: <init>, run, main; static 'runs', instance 'greeting'; Runnable.
  expect_file_has "$f" '^CLASS_LOAD CtHello (CtHello\.java) methods=3 statics=1 instances=1 interfaces=1$'
  expect_file_has "$f" '^THREAD_START main '
  expect_file_has "$f" '^THREAD_START ct-worker group=main parent='
  expect_file_has "$f" '^THREAD_END ct-worker$'
  expect_file_has "$f" '^JVM_INIT_DONE$'
  expect_file_lacks "$f" 'unknown thread'

  local counts loaded unloaded threads
  counts=$(summary_counts "$f")
  [ -n "$counts" ] || { tail -5 "$f"; fail "no summary line in $(basename "$f")"; }
  read -r loaded unloaded threads <<<"$counts"
  # The summary is the agent's own count: it must agree with what it printed.
  local lines starts
  lines=$(grep -c '^CLASS_LOAD ' "$f")
  starts=$(grep -c '^THREAD_START ' "$f")
  [ "$loaded" -eq "$lines" ] || fail "summary says $loaded classes, file has $lines CLASS_LOAD lines"
  [ "$threads" -eq "$starts" ] || fail "summary says $threads threads, file has $starts THREAD_START lines"
  # Even a hello world loads a few hundred classes; far fewer means the
  # start-up replay of already loaded classes is missing.
  [ "$loaded" -ge 300 ] || fail "only $loaded classes traced"
  # The summary is written at JVM_SHUT_DOWN and nothing may follow it.
  tail -1 "$f" | grep -q '^classtrace: ' || fail "summary is not the last line"
  # Start-up order: every class loaded before VM init is reported before
  # JVM_INIT_DONE, so java.lang.Object comes first of all.
  local first_obj init
  first_obj=$(grep -n '^CLASS_LOAD java\.lang\.Object ' "$f" | head -1 | cut -d: -f1)
  init=$(grep -n '^JVM_INIT_DONE$' "$f" | cut -d: -f1)
  [ "$first_obj" -lt "$init" ] || fail "java.lang.Object reported after JVM_INIT_DONE"
  # Each class is loaded once by one loader here; a class reported twice
  # would mean the replay and the live events overlap.
  local dups
  dups=$(grep '^CLASS_LOAD \(java\.lang\.\(Object\|String\|Thread\)\|CtHello\) ' "$f" | sort | uniq -d)
  [ -z "$dups" ] || fail "classes reported twice: $dups"
  echo "$loaded $unloaded $threads"
}

# 1. -agentpath form, default options.
run_java plain "-agentpath:$LAYER=classtrace:file=$WORK/ct.txt" -cp "$CLASSES" CtHello \
  || { cat "$WORK/plain.err"; fail "java exited non-zero"; }
expect_file_has "$WORK/plain.out" '^hello from 1$'
counts=$(check_trace "$WORK/ct.txt") || { echo "$counts"; exit 1; }
note "plain: loaded/unloaded/threads = $counts"
expect_file_lacks "$WORK/ct.txt" '^  main('
# unload=n: CLASS_UNLOAD is never enabled, so the count stays 0.
[ "$(echo "$counts" | cut -d' ' -f2)" = 0 ] || fail "unloads counted with unload=n"

# 2. methods=y,unload=y: each method with signature and its line range, and
# CtHello$Gone unloaded (CtHello drops its loader and collects until the Class
# object is gone).  The expected start/end are the lowest and highest line in
# the method's line number table, i.e. the method's extent in the source; main's
# table is not in line order (loops), so its first/last entries would not do.
# Lines from tests/java/CtHello.java.
run_java methods "-agentpath:$LAYER=classtrace:file=$WORK/ctm.txt,methods=y,unload=y" -cp "$CLASSES" CtHello unload \
  || { cat "$WORK/methods.err"; fail "java exited non-zero"; }
expect_file_has "$WORK/methods.out" '^unloaded$'
counts=$(check_trace "$WORK/ctm.txt") || { echo "$counts"; exit 1; }
note "methods: loaded/unloaded/threads = $counts"
f="$WORK/ctm.txt"
grep -A3 '^CLASS_LOAD CtHello ' "$f" > "$WORK/cthello.txt"
expect_file_has "$WORK/cthello.txt" '^  <init>(Ljava/lang/String;)V lines 13-15$'
expect_file_has "$WORK/cthello.txt" '^  run()V lines 18-20$'
expect_file_has "$WORK/cthello.txt" '^  main(\[Ljava/lang/String;)V lines 23-47$'
# Native methods have no line table.
expect_file_has "$f" '^  hashCode()I no lines$'
expect_file_has "$f" '^CLASS_LOAD CtHello\$Gone (CtHello\.java) methods=1 statics=0 instances=0 interfaces=0$'
# The agent names an unloaded class from its own record of the CLASS_LOAD with
# the same class ID: a right name means the layer kept the ID stable.
expect_file_has "$f" '^CLASS_UNLOAD CtHello\$Gone$'
expect_file_lacks "$f" '^CLASS_UNLOAD <unknown'
unloads=$(grep -c '^CLASS_UNLOAD ' "$f")
[ "$(echo "$counts" | cut -d' ' -f2)" = "$unloads" ] || fail "summary unload count differs from $unloads CLASS_UNLOAD lines"

# 3. The unchanged command line: the layer from JAVA_TOOL_OPTIONS, the agent by
# -Xrun name.  The VM itself looks the -Xrun library up (its own lib directory,
# then LD_LIBRARY_PATH, as JDK 5.0 did), so the agents directory goes on
# LD_LIBRARY_PATH.
# With log=info the layer names the agent the VM started, its file and its
# options, and the JVM TI capabilities it holds.
LD_LIBRARY_PATH="$PROJECT_AGENTS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" JVMPI_LAYER_OPTIONS=log=info \
JAVA_TOOL_OPTIONS="-agentpath:$LAYER" run_java xrun "-Xrunclasstrace:file=$WORK/ctx.txt" -cp "$CLASSES" CtHello \
  || { cat "$WORK/xrun.err"; fail "java -Xrunclasstrace exited non-zero"; }
expect_file_has "$WORK/xrun.out" '^done$'
expect_file_has "$WORK/xrun.err" "^JVMPI layer: info: JVMPI agent 'classtrace' started by the VM (-Xrunclasstrace) from $PROJECT_AGENTS_DIR/libclasstrace.so with options \"file=$WORK/ctx.txt\"\$"
expect_file_has "$WORK/xrun.err" '^JVMPI layer: info: JVM TI capabilities held at VM init: can_tag_objects .*can_generate_object_free_events'
counts=$(check_trace "$WORK/ctx.txt") || { echo "$counts"; exit 1; }
note "xrun: loaded/unloaded/threads = $counts"

# 4. help prints the options and exits 0, as HPROF's did; a bad option makes
# JVM_OnLoad return JNI_ERR, and the VM must not start the program (as JDK 5.0
# aborted start-up when an -Xrun library failed).
run_java help "-agentpath:$LAYER=classtrace:help" -cp "$CLASSES" CtHello || fail "classtrace:help did not exit 0"
expect_file_has "$WORK/help.out" 'methods=y|n'
expect_file_lacks "$WORK/help.out" '^hello from'
expect_file_lacks "$WORK/help.err" 'JVMPI layer'
if run_java bad "-agentpath:$LAYER=classtrace:methods=y,bogus=1" -cp "$CLASSES" CtHello; then
  fail "java ran with a bad classtrace option"
fi
expect_file_has "$WORK/bad.err" 'methods=y|n'
expect_file_has "$WORK/bad.err" "^classtrace: bad option 'bogus=1'$"
expect_file_lacks "$WORK/bad.out" '^hello from'

note "classtrace: all checks passed"
exit 0
