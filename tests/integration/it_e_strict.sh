#!/bin/bash
# e_strict (tests/agents/e_strict.c): an agent in the manner of OProfile's,
# which aborts when an event names a thread, class, method, object or JNI
# global reference whose defining event it never had (the JVMPI spec: the
# agent "is guaranteed to be notified of an entity's creation through a
# defining event, before the entity appears in other JVMPI events"), the
# start-up replay and heap and monitor dumps included.
# Runs: javac on 30 java.util files (heap, class, thread, JIT, monitor and
# JNI reference events, two rounds of HEAP_DUMP + MONITOR_DUMP); javac on 5
# files as Sun's HPROF profiles it (a call trace per allocation, a dump at
# exit), and E_Keeper the same way; javac on 2
# files with METHOD_ENTRY/METHOD_EXIT on too (every call of javac's start-up
# and work, tens of millions); E_LateArrays with METHOD_ENTRY2/METHOD_EXIT
# (every receiver an object ID), and again with INSTRUCTION_START too (every
# bytecode); on JDK 21 and later, F_VThreads's virtual threads with METHOD_ENTRY.
. "$(dirname "$0")/lib.sh"
. "$SOURCE_DIR/tests/agents/e_run.sh"

e_javac strict-javac e_strict "dumps=2,dump_ms=2500" 30
e_verdict strict-javac e_strict 10000 '^heap dump 2: ' '^monitor dump 2: '

# As Sun's HPROF takes an allocation's site: GetCallTrace in every
# OBJECT_ALLOC handler, each frame's method listed by a CLASS_LOAD, from the
# start-up replay on; and a heap dump from the JVM_SHUT_DOWN handler.
e_javac strict-javac-traces e_strict "traces=8,exitdump=y,dumps=0" 5
e_verdict strict-javac-traces e_strict 100000 '^heap dump 1: '

e_javac strict-javac-methods e_strict "methods=entry,dumps=1,dump_ms=2500" 2
e_verdict strict-javac-methods e_strict 10000 '^heap dump 1: ' '^monitor dump 1: '

e_late strict-late e_strict "methods=entry2,dumps=2,dump_ms=600"
e_verdict strict-late e_strict 10000 '^heap dump 2: ' '^monitor dump 2: '

e_late strict-steps e_strict "methods=entry2,steps=y,dumps=1,dump_ms=600"
e_verdict strict-steps e_strict 100000 '^heap dump 1: ' '^monitor dump 1: '

# The program a heap profiler is most often pointed at (E_Keeper: over a
# million live objects, short-lived StringBuilders on four threads contending for a
# lock), with the agent doing what Sun's HPROF does, as above: classes the
# exit loads on other threads must still be announced before their
# CLASS_DUMP in the dump taken at JVM_SHUT_DOWN.
e_class strict-keeper e_strict "traces=8,exitdump=y,dumps=0" E_Keeper "$(scaled 600000 200000)" 50000
e_verdict strict-keeper e_strict 100000 '^heap dump 1: '

# JDK 21+: 3000 virtual threads, each with its own THREAD_START, every call
# a METHOD_ENTRY carrying its env_id, dumps taken while they run (and while
# virtual threads are under construction, which the JVM's own heap walk
# must not visit: jvmti_backend/vtguard.h).
if [ "$JDK_MAJOR" -ge 21 ]; then
  e_class strict-vthreads e_strict "methods=entry,dumps=2,dump_ms=150" F_VThreads 3000
  e_verdict strict-vthreads e_strict 100000 '^heap dump 2: '
fi

e_finish
