#!/bin/bash
# e_overlap (tests/agents/e_overlap.c): an allocation tracer whose per-thread
# ID tables have no lock, because the JVMPI spec issues OBJECT_ALLOC with GC
# disabled and OBJECT_FREE in thread suspended mode, between GC_START and
# GC_FINISH: no free may overlap an allocation handler on any thread.  The
# agent aborts on the first overlap.
# Runs: javac on 60 java.util files (allocation on main, GC windows from the
# VM's collections), and E_LateArrays (four allocating threads, System.gc()
# while they run).
. "$(dirname "$0")/lib.sh"
. "$SOURCE_DIR/tests/agents/e_run.sh"

e_javac overlap-javac e_overlap "" 60
e_verdict overlap-javac e_overlap 10000

e_late overlap-late e_overlap ""
e_verdict overlap-late e_overlap 10000

e_finish
