/*
 * d_caps - the costly JVM TI capabilities of method events are taken at
 * start-up only for what the agent enabled in JVM_OnLoad (JVMPI_LAYER_OPTIONS
 * caps=auto, the default) or for everything (caps=all).  This agent enables
 * nothing in JVM_OnLoad and tries METHOD_ENTRY at JVM_INIT_DONE.
 *
 * Options: out=FILE.  Writes "LATE_METHOD_ENTRY <rc>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jvmpi.h>

static JVMPI_Interface *jvmpi;
static FILE *out;

static void notify(JVMPI_Event *ev)
{
    if (ev->event_type == JVMPI_EVENT_JVM_INIT_DONE) {
        jint rc = jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
        fprintf(out, "LATE_METHOD_ENTRY %d\n", (int)rc);
        if (rc == JVMPI_SUCCESS) {
            jvmpi->DisableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL);
        }
        fflush(out);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    const char *path = options != NULL && strncmp(options, "out=", 4) == 0 ? options + 4 : NULL;
    if (path == NULL || (out = fopen(path, "w")) == NULL) {
        fprintf(stderr, "d_caps: needs out=FILE\n");
        return JNI_ERR;
    }
    if ((*vm)->GetEnv(vm, (void **)&jvmpi, JVMPI_VERSION_1_2) != JNI_OK) {
        return JNI_ERR;
    }
    jvmpi->NotifyEvent = notify;
    return jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL) == JVMPI_SUCCESS ? JNI_OK : JNI_ERR;
}
