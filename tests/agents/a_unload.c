/*
 * a_unload - CLASS_UNLOAD carries the class_id CLASS_LOAD gave.
 *
 * Options: out=FILE[,requnload=1].  Enables CLASS_LOAD, CLASS_UNLOAD and
 * JVM_SHUT_DOWN.  Writes "LOADED A_UnloadMe <id>" and
 * "UNLOADED A_UnloadMe <id>" (A_Unload polls for the latter).  Checks: every
 * CLASS_UNLOAD names a class_id some CLASS_LOAD defined, at most once, and the
 * unused event bytes are zero.
 * With requnload=1 the agent also calls RequestEvent(CLASS_LOAD, id) inside
 * each CLASS_UNLOAD of A_UnloadMe: JDK 5.0 answered that from the class's
 * saved data, with its methods listed and every method_id NULL (the methods
 * are gone), and agents that learn of a class only when it goes away rely
 * on it.
 */
#include "a_common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static a_idmap loaded, unloaded;
static int requnload;
static long n_load, n_unload, n_target_load, n_target_unload;

static _Thread_local int in_request;
static _Thread_local int req_handled;
static _Thread_local char *req_name;
static _Thread_local jobjectID req_id;
static _Thread_local jint req_methods, req_method_ids;

static void on_load(JVMPI_Event *ev)
{
    const char *name = ev->u.class_load.class_name;
    jobjectID id = ev->u.class_load.class_id;
    if (ev->event_type & JVMPI_REQUESTED_EVENT) {
        if (!in_request) {
            a_fail("requested CLASS_LOAD outside RequestEvent on this thread");
            return;
        }
        req_handled++;
        free(req_name);
        req_name = name ? strdup(name) : NULL;
        req_id = id;
        req_methods = ev->u.class_load.num_methods;
        req_method_ids = 0;
        for (jint i = 0; i < req_methods; i++)
            req_method_ids += ev->u.class_load.methods[i].method_id != NULL;
        return;
    }
    if (!id || !name) {
        a_fail("CLASS_LOAD %s with class_id %p", a_str(name), (void *)id);
        return;
    }
    int existed, target = a_streq(name, "A_UnloadMe");
    pthread_mutex_lock(&lock);
    n_load++;
    n_target_load += target;
    a_idmap_put(&loaded, id, name, &existed);
    pthread_mutex_unlock(&lock);
    if (existed)
        a_fail("class_id %p defined twice (now for %s)", (void *)id, name);
    if (target)
        a_rec("LOADED A_UnloadMe %p", (void *)id);
}

static void on_unload(JVMPI_Event *ev)
{
    a_check_unused_zero(ev, A_USED_END(class_unload), "CLASS_UNLOAD");
    jobjectID id = ev->u.class_unload.class_id;
    int existed = 0;
    char *name = NULL;
    pthread_mutex_lock(&lock);
    n_unload++;
    a_slot *s = a_idmap_find(&loaded, id);
    if (s) {
        name = strdup(s->name);
        a_idmap_put(&unloaded, id, name, &existed);
    }
    int target = a_streq(name, "A_UnloadMe");
    n_target_unload += target;
    pthread_mutex_unlock(&lock);

    if (!id)
        a_fail("CLASS_UNLOAD with NULL class_id");
    else if (!name)
        a_fail("CLASS_UNLOAD of class_id %p, which no CLASS_LOAD defined", (void *)id);
    else if (existed)
        a_fail("CLASS_UNLOAD of %s (%p) twice", name, (void *)id);
    if (target) {
        if (requnload) {
            in_request = 1;
            req_handled = 0;
            jint rc = a_jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, id);
            in_request = 0;
            if (rc != JVMPI_SUCCESS || req_handled != 1)
                a_fail("RequestEvent(CLASS_LOAD, %p) during its CLASS_UNLOAD returned %d, delivered %d events",
                       (void *)id, (int)rc, req_handled);
            else if (!a_streq(req_name, name) || req_id != id)
                a_fail("RequestEvent(CLASS_LOAD, %p) during its CLASS_UNLOAD gave %s / %p", (void *)id,
                       a_str(req_name), (void *)req_id);
            else if (req_methods < 1 || req_method_ids != 0)
                a_fail("RequestEvent(CLASS_LOAD, %p) during its CLASS_UNLOAD: %d methods, %d with a method_id "
                       "(JDK 5.0: listed, every method_id NULL)",
                       (void *)id, (int)req_methods, (int)req_method_ids);
            else
                a_rec("REQUESTED during unload: %s %p, %d methods, every method_id NULL", req_name, (void *)req_id,
                      (int)req_methods);
        }
        a_rec("UNLOADED A_UnloadMe %p", (void *)id);
    }
    free(name);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        on_load(ev);
        return;
    case JVMPI_EVENT_CLASS_UNLOAD:
        if (ev->event_type == JVMPI_EVENT_CLASS_UNLOAD) {
            on_unload(ev);
            return;
        }
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        if (ev->event_type == JVMPI_EVENT_JVM_SHUT_DOWN) {
            pthread_mutex_lock(&lock);
            a_rec("DONE class_load=%ld class_unload=%ld target_load=%ld target_unload=%ld failures=%d", n_load,
                  n_unload, n_target_load, n_target_unload, a_failures);
            pthread_mutex_unlock(&lock);
            return;
        }
        break;
    }
    a_fail("event type 0x%x was never enabled", (unsigned)ev->event_type);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (a_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    char *r = a_opt(options, "requnload");
    requnload = a_streq(r, "1");
    free(r);
    a_jvmpi->NotifyEvent = notify;
    a_expect_enable(JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD");
    a_expect_enable(JVMPI_EVENT_CLASS_UNLOAD, "CLASS_UNLOAD");
    a_expect_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    a_rec("START requnload=%d", requnload);
    return JNI_OK;
}
