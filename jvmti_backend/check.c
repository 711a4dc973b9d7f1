#include <stdlib.h>
#include <string.h>

#include "backend.h"

backend_globals bk;

jvmtiError bk_check(jvmtiError err, bool expected, const char *call, const char *file, int line)
{
    if (err == JVMTI_ERROR_NONE) {
        return err;
    }
    /* A request an agent's own thread was making when the VM died (JDK 21
     * ends the VM beside such threads): it fails, as one made a moment
     * later is refused (jvmpi/interface.c), and that is no error. */
    if (err == JVMTI_ERROR_WRONG_PHASE && atomic_load(&bk_vm_dead)) {
        expected = true;
    }
    if (expected && log_level < LOG_LEVEL_DEBUG) {
        return err;
    }
    char *name = NULL;
    if (bk.jvmti == NULL || (*bk.jvmti)->GetErrorName(bk.jvmti, err, &name) != JVMTI_ERROR_NONE) {
        name = NULL;
    }
    log_write(expected ? LOG_LEVEL_DEBUG : LOG_LEVEL_ERROR, "JVM TI %s failed: %s (%d) at %s:%d", call,
              name != NULL ? name : "unknown error", (int)err, file, line);
    if (name != NULL) {
        (*bk.jvmti)->Deallocate(bk.jvmti, (unsigned char *)name);
    }
    return err;
}

void bk_deallocate(void *p)
{
    if (p != NULL) {
        (*bk.jvmti)->Deallocate(bk.jvmti, (unsigned char *)p);
    }
}

char *bk_take_string(char *s)
{
    if (s == NULL) {
        return NULL;
    }
    char *copy = strdup(s);
    bk_deallocate(s);
    return copy;
}
