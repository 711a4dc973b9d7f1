#!/bin/bash
# e_gclock (tests/agents/e_gclock.c): an agent that takes its table lock in
# GC_START and releases it in GC_FINISH, as the JVMPI spec advises, and relies
# on what the spec promises about that window: thread suspended mode (no
# event on any other thread, only OBJECT_FREE/OBJECT_MOVE on the window's
# own), no GC while a handler of an event issued with GC disabled runs,
# OBJECT_FREE only inside a window, every env_id (GC_START's included) a
# thread a THREAD_START defined, and RunGC's window delivered before RunGC
# returns (3 RunGC calls from a CreateSystemThread thread).
# Runs: javac on 60 java.util files; E_LateArrays with METHOD_ENTRY/EXIT on
# too (events from every thread that runs Java code).
. "$(dirname "$0")/lib.sh"
. "$SOURCE_DIR/tests/agents/e_run.sh"

# On JDK 8 every allocation comes through the class rewriter's calls (docs/
# differences.md): javac on 60 files took 113 s under e_gclock against 22 s
# alone, on a loaded machine, and exited 0.2 s after JVM_SHUT_DOWN (no hang),
# so there it compiles half as many within the 150 s.
files=60
[ "$JDK_MAJOR" -ge 9 ] || files=30
e_javac gclock-javac e_gclock "rungc=3,rungc_ms=1500" $files
e_verdict gclock-javac e_gclock 10000 '^RunGC: 3 calls done'

e_late gclock-late e_gclock "methods=1,rungc=3,rungc_ms=300"
e_verdict gclock-late e_gclock 10000 '^RunGC: 3 calls done'

e_finish
