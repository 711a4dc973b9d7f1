#!/bin/bash
# e_requester (tests/agents/e_requester.c): an HPROF-like agent that asks
# RequestEvent for the defining event of every object or class ID it does not
# know and uses the answer at once; a failed request is fatal.  Among them:
# every class, as the object ID of its java.lang.Class object (the JVMPI
# spec), must be answered by RequestEvent(OBJECT_ALLOC, class_id) as an
# instance of java.lang.Class; and every ID of a level 2 heap dump.
# Runs: javac on 60 java.util files with a heap dump from the agent's system
# thread; E_LateArrays with a heap dump during its work and one on the
# DATA_DUMP_REQUEST that SIGQUIT makes, once its late arrays, loaders and
# unloads are done.
. "$(dirname "$0")/lib.sh"
. "$SOURCE_DIR/tests/agents/e_run.sh"

e_javac requester-javac e_requester "dumps=1,dump_ms=3000" 60
e_verdict requester-javac e_requester 10000 '^heap dump for the timer done'

e_late_sigquit requester-late e_requester "dumps=1,dump_ms=600" '^heap dump for DATA_DUMP_REQUEST done'
e_verdict requester-late e_requester 10000 '^heap dump for the timer done' '^heap dump for DATA_DUMP_REQUEST done'
# The program collected its throw-away loader: E_Payload's CLASS_UNLOAD must
# have reached the agent by JVM_SHUT_DOWN.
if grep -q 'unloaded=true' "$WORK/requester-late.out" 2>/dev/null &&
   ! grep -q '^CLASS_UNLOAD of E_Payload' "$WORK/requester-late.txt"; then
  E_PROBLEMS+=("requester-late: the loader of E_Payload was collected, but no CLASS_UNLOAD of E_Payload came")
fi

e_finish
