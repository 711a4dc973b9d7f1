/* A JVM TI agent and nothing else (Agent_OnLoad, no JVM_OnLoad), as JDK 8's
 * own libhprof.so is: the loader's search for a JVMPI agent passes over it. */
#include <jvmti.h> /* declares Agent_OnLoad */

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)vm;
    (void)options;
    (void)reserved;
    return JNI_ERR;
}
