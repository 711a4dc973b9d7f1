#!/bin/bash
# Two real-style agents in one javac, on 10 files of java.util: e_strict
# (tests/agents/e_strict.c, which aborts on any event naming what it was
# never told of, raw monitors included, and asks for heap and monitor
# dumps) and the HPROF work-alike (heap=sites,cpu=samples,
# a lock held across its handlers, RequestEvent for what it does not know).
# Each must work as it does alone: e_strict healthy (no broken rule, its
# dumps read), hprof's profile complete, with javac's own allocation sites;
# and the two dumps e_strict asked for must not reach hprof (it would write
# a HEAP DUMP section it never asked for).
. "$(dirname "$0")/lib.sh"
. "$SOURCE_DIR/tests/agents/e_run.sh"

e_javac_tree 10 || skip "no java.util sources for JDK $JDK_MAJOR"
name=strict-hprof
mkdir -p "$WORK/$name/out"
profile="$WORK/$name.hprof.txt"
note "$name: javac, 10 files, e_strict and hprof"
{ (cd "$WORK/$name" && exec timeout 300 "$JAVA_HOME/bin/javac" \
  "-J$(agent_arg e_strict "out=$WORK/$name.txt,dumps=2,dump_ms=2500")" \
  "-J-agentpath:$LAYER=$PROJECT_AGENTS_DIR/libhprof.so:heap=sites,cpu=samples,depth=4,file=$profile" \
  $(e_patch_module) -d out -nowarn -XDignore.symbol.file -proc:none \
  "@$E_TREE/sources.args") >"$WORK/$name.out" 2>"$WORK/$name.err"; } 2>/dev/null
E_RC=$?
e_note_rc "$name"
e_verdict "$name" e_strict 10000 '^heap dump 2: ' '^monitor dump 2: '

expect_file_has "$profile" '^SITES BEGIN'
expect_file_has "$profile" '^CPU SAMPLES BEGIN'
expect_file_has "$profile" 'com\.sun\.tools\.javac\.'
expect_file_lacks "$profile" '^HEAP DUMP BEGIN'
expect_file_lacks "$profile" '^MONITOR DUMP BEGIN'
e_finish
