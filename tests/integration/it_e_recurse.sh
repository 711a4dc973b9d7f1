#!/bin/bash
# e_recurse (tests/agents/e_recurse.c): an agent that resolves every class_id
# it does not know by requesting that object's OBJECT_ALLOC from inside its
# handler, with no guard against recursion, and names every array of
# references through its element class with no NULL check, as Sun's HPROF
# did.  java.lang.Class's own Class object must name no class (else the
# requests recur without end), and an array must name its element class even
# when that class is loaded but not yet linked.
# Runs: javac on 20 java.util files; E_Recurse, whose arrays of classes not
# yet linked (plain, two-dimensional, interface, hidden, from the CDS
# archive) are made after start-up, with a level 2 heap dump on SIGQUIT
# while they are held.
. "$(dirname "$0")/lib.sh"
. "$SOURCE_DIR/tests/agents/e_run.sh"

# A JDK class in this JDK's CDS archive that a small program does not use.
shared=java.util.StringJoiner

e_javac recurse-javac e_recurse "" 20
e_verdict recurse-javac e_recurse 10000

if ! has_class E_Recurse; then
  note "recurse-arrays skipped: $(class_missing_why E_Recurse)"
else
e_sigquit recurse-arrays e_recurse "watch=$shared" '^heap dump for DATA_DUMP_REQUEST done' E_Recurse "$shared"
e_verdict recurse-arrays e_recurse 1000 '^heap dump for DATA_DUMP_REQUEST done' \
  '^array: E_RcMarker\[\]' '^array: E_RcDeep\[\]' '^array: E_RcShape\[\]' '^array: E_RcHidden[./][0-9a-fx]*\[\]' \
  "^array: $shared\\[\\]"
grep -q '^E_Recurse done 1' "$WORK/recurse-arrays.out" 2>/dev/null ||
  E_PROBLEMS+=("recurse-arrays: E_Recurse did not end normally")
fi

e_finish
