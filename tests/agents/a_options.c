/*
 * a_options - records the option string JVM_OnLoad receives, exactly.
 *
 * The options are what is under test, so the record file comes from the
 * environment (A_OPTIONS_OUT), appended to: one line
 *   OPTIONS NULL                        options == NULL
 *   OPTIONS [<text>] length <n>         otherwise
 * followed by "GETENV <rc>" for GetEnv(JVMPI_VERSION_1_2): on the -Xrun
 * path the VM calls JVM_OnLoad itself, and the JVMPI interface must still be
 * there.
 */
#include "a_common.h"

static void notify(JVMPI_Event *ev)
{
    (void)ev;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    const char *path = getenv("A_OPTIONS_OUT");
    a_out = path ? fopen(path, "a") : NULL;
    if (options)
        a_rec("OPTIONS [%s] length %zu", options, strlen(options));
    else
        a_rec("OPTIONS NULL");
    JVMPI_Interface *jvmpi = NULL;
    jint rc = (*vm)->GetEnv(vm, (void **)&jvmpi, JVMPI_VERSION_1_2);
    a_rec("GETENV %d", (int)rc);
    if (rc != JNI_OK || !jvmpi)
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    return JNI_OK;
}
