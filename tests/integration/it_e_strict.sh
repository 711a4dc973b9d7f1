#!/bin/bash
# e_strict (tests/agents/e_strict.c): an agent in the manner of OProfile's,
# which aborts when an event names a thread, class, method, object or JNI
# global reference whose defining event it never had (the JVMPI spec: the
# agent "is guaranteed to be notified of an entity's creation through a
# defining event, before the entity appears in other JVMPI events"), the
# start-up replay and heap and monitor dumps included.
# Runs: javac on 40 java.util files (heap, class, thread, JIT, monitor and
# JNI reference events, two rounds of HEAP_DUMP + MONITOR_DUMP); javac on 12
# files with METHOD_ENTRY2/METHOD_EXIT on too (every call, in the
# interpreter: hence fewer files); E_LateArrays with method events.
. "$(dirname "$0")/lib.sh"
. "$SOURCE_DIR/tests/agents/e_run.sh"

e_javac strict-javac e_strict "dumps=2,dump_ms=2500" 40
e_verdict strict-javac e_strict 10000 '^heap dump 2: ' '^monitor dump 2: '

e_javac strict-javac-methods e_strict "methods=1,dumps=1,dump_ms=2500" 12
e_verdict strict-javac-methods e_strict 10000 '^heap dump 1: ' '^monitor dump 1: '

e_late strict-late e_strict "methods=1,dumps=2,dump_ms=600"
e_verdict strict-late e_strict 10000 '^heap dump 2: ' '^monitor dump 2: '

e_finish
