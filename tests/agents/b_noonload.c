/*
 * b_noonload - a shared library that is no JVMPI agent: it has no
 * JVM_OnLoad (it_b_loaderr.sh).  Loading it through the layer must fail
 * with one clear line and stop the JVM from starting.
 */
#include <jvmpi.h>

JNIEXPORT int b_noonload_marker(void);

JNIEXPORT int b_noonload_marker(void)
{
    return 42;
}
