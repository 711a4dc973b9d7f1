/*
 * c_allocswitch.c - OBJECT_ALLOC switched off and on while OBJECT_FREE
 * stays on: no OBJECT_FREE may name an object the agent was never sent an
 * OBJECT_ALLOC for while OBJECT_ALLOC is on.
 *
 * A system thread switches OBJECT_ALLOC off for 100 ms, then on for 200
 * ms, rounds=N times (default 5), while the program allocates.  Objects
 * made while it is off are never announced; they die later, many while
 * OBJECT_ALLOC is on again, and their frees must not reach the agent.
 * Frees that come while OBJECT_ALLOC is off (or in a window that began
 * before it came back on) are the agent's business and not checked: it may
 * know those objects from elsewhere.
 */
#include <unistd.h>

#include "c_common.h"

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static c_map announced;
static int rounds = 5;
/* Switches so far (odd: off); the count at the last GC_FINISH. */
static int switches, switches_at_window_end;
static int toggler_done;
static long allocs, known_frees, unchecked_frees, unknown_frees;

static void toggler(void *arg)
{
    (void)arg;
    for (int i = 0; i < rounds; i++) {
        usleep(100000);
        pthread_mutex_lock(&lk);
        switches++;
        pthread_mutex_unlock(&lk);
        c_check(c_pi->DisableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL) == JVMPI_SUCCESS, "DisableEvent(OBJECT_ALLOC)");
        usleep(100000);
        c_check(c_pi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL) == JVMPI_SUCCESS, "EnableEvent(OBJECT_ALLOC)");
        pthread_mutex_lock(&lk);
        switches++;
        pthread_mutex_unlock(&lk);
        usleep(200000);
    }
    pthread_mutex_lock(&lk);
    toggler_done = 1;
    pthread_mutex_unlock(&lk);
}

static void JNICALL notify(JVMPI_Event *ev)
{
    jint type = ev->event_type & ~JVMPI_REQUESTED_EVENT;
    switch (type) {
    case JVMPI_EVENT_OBJECT_ALLOC: {
        int existed = 0;
        pthread_mutex_lock(&lk);
        c_slot *s = c_map_put(&announced, ev->u.obj_alloc.obj_id, 1, &existed);
        if (s != NULL)
            s->val = 1; /* also an ID given again after its OBJECT_FREE */
        allocs++;
        pthread_mutex_unlock(&lk);
        break;
    }
    case JVMPI_EVENT_OBJECT_FREE: {
        pthread_mutex_lock(&lk);
        c_slot *s = c_map_find(&announced, ev->u.obj_free.obj_id);
        int known = s != NULL && s->val == 1;
        /* On, and not switched since before this window was made. */
        int checked = switches % 2 == 0 && switches == switches_at_window_end;
        if (known) {
            s->val = 0;
            known_frees++;
        } else if (checked) {
            unknown_frees++;
        } else {
            unchecked_frees++;
        }
        pthread_mutex_unlock(&lk);
        if (!known && checked) {
            static int shown;
            C_FAIL_SOME(shown, "OBJECT_FREE of %p, which no OBJECT_ALLOC announced, while OBJECT_ALLOC is on",
                        (void *)ev->u.obj_free.obj_id);
        }
        break;
    }
    case JVMPI_EVENT_GC_FINISH:
        pthread_mutex_lock(&lk);
        switches_at_window_end = switches;
        pthread_mutex_unlock(&lk);
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        c_check(c_pi->CreateSystemThread("c_allocswitch toggler", JVMPI_NORMAL_PRIORITY, toggler) == JNI_OK,
                "CreateSystemThread");
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        pthread_mutex_lock(&lk);
        c_check(toggler_done, "the toggler finished its %d rounds before the program ended", rounds);
        c_log("%ld OBJECT_ALLOCs; OBJECT_FREEs: %ld of announced objects, %ld unchecked, %ld of unknown objects",
              allocs, known_frees, unchecked_frees, unknown_frees);
        c_check(known_frees > 1000, "OBJECT_FREEs of announced objects came (%ld)", known_frees);
        c_check(unknown_frees == 0, "no OBJECT_FREE of an unannounced object while OBJECT_ALLOC was on (%ld)",
                unknown_frees);
        pthread_mutex_unlock(&lk);
        c_summary("c_allocswitch");
        break;
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    if (c_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    char *r = c_opt(options, "rounds");
    if (r) {
        rounds = atoi(r);
        free(r);
    }
    c_pi->NotifyEvent = notify;
    c_enable(JVMPI_EVENT_OBJECT_ALLOC, "OBJECT_ALLOC");
    c_enable(JVMPI_EVENT_OBJECT_FREE, "OBJECT_FREE");
    c_enable(JVMPI_EVENT_GC_FINISH, "GC_FINISH");
    c_enable(JVMPI_EVENT_JVM_INIT_DONE, "JVM_INIT_DONE");
    c_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    return JNI_OK;
}
