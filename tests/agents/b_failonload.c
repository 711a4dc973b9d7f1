/*
 * b_failonload - an agent whose JVM_OnLoad refuses (it_b_loaderr.sh).
 * It prints a marker on stdout first, so the test knows it was called, and
 * then returns JNI_ERR: the JVM must not start the program.  The marker does
 * not name the agent: the test counts the layer's lines that do.
 */
#include <jvmpi.h>
#include <stdio.h>

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved);

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    printf("FAILONLOAD: JVM_OnLoad called, options '%s', returning JNI_ERR\n", options ? options : "(null)");
    fflush(stdout);
    return JNI_ERR;
}
