#include "reset.h"

#include <stdatomic.h>

#include "dispatch.h"
#include "events.h"
#include "layer.h"

static _Atomic int requests;
static void (*_Atomic wake)(void);

void reset_set_waker(void (*waker)(void)) { atomic_store(&wake, waker); }

void layer_data_reset_request(void)
{
    atomic_fetch_add(&requests, 1);
    void (*w)(void) = atomic_load(&wake);
    if (w != NULL) {
        w();
    }
}

bool reset_due(void) { return atomic_load(&requests) > 0; }

void reset_deliver_due(JNIEnv *env)
{
    for (int n = atomic_exchange(&requests, 0); n > 0; n--) {
        if (layer_is_live() && events_enabled(JVMPI_EVENT_DATA_RESET_REQUEST)) {
            dispatch_plain(env, JVMPI_EVENT_DATA_RESET_REQUEST);
        }
    }
}
