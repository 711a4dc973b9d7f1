#!/bin/bash
# e_dumpsize (tests/agents/e_dumpsize.c): an agent that sizes every record of
# every heap dump (levels 0, 1 and 2) and of OBJECT_DUMP from CLASS_LOAD's
# lists alone, as Sun's HPROF did, and aborts at the first record whose length
# disagrees; it also wants HotSpot 5.0's frame numbers in frame roots and no
# class dump of an array class.
# Runs: E_DumpShapes, whose heap holds a class loaded but not linked, one
# linked but not initialized, a hidden class, classes with fields of every
# type and interfaces with constants, arrays of each, the primitive types'
# Class objects and CDS-archived JDK classes; then javac on 60 java.util files.
. "$(dirname "$0")/lib.sh"
. "$SOURCE_DIR/tests/agents/e_run.sh"

if ! has_class E_DumpShapes; then
  note "dumpsize-shapes skipped: $(class_missing_why E_DumpShapes)"
else
e_class dumpsize-shapes e_dumpsize "dumps=1,dump_ms=1500,focus=E_D,objdumps=200" E_DumpShapes \
  "$WORK/dumpsize-shapes.txt"
# Each state's class was met in a level 2 dump and sized there.
e_verdict dumpsize-shapes e_dumpsize 1000 '^dumps for the timer done' \
  '^class dump E_DsStatics: 2 interfaces, 0 constant pool entries, 13 statics' \
  '^class dump E_DsMore: 1 interfaces, 0 constant pool entries, 4 statics' \
  '^class dump E_DsConsts: 0 interfaces, 0 constant pool entries, 8 statics' \
  '^class dump E_DsLinkedOnly: ' '^class dump E_DsArrayFirst: 0 interfaces, 0 constant pool entries, 1 statics' '^class dump E_DsHiddenSrc[./]' '^class dump E_DumpShapes: ' \
  '^level 2 heap dump .*(\(9\|[1-9][0-9][0-9]*\) of java.lang.Class)'
if grep -q '^class dump E_DsNotLinked:' "$WORK/dumpsize-shapes.txt" 2>/dev/null; then
  E_PROBLEMS+=("dumpsize-shapes: E_DsNotLinked, never linked, has a class dump (it can have had no CLASS_LOAD)")
fi
fi

# The dumps start 1.5 s in, while javac runs; when javac ends sooner (the 10
# files of a short run, a fast machine), the agent's JVM_SHUT_DOWN handler
# has the round made then and waits for it.
e_javac dumpsize-javac e_dumpsize "dumps=1,dump_ms=1500,objdumps=150" 60
e_verdict dumpsize-javac e_dumpsize 10000 '^dumps for the timer done'

e_finish
