/*
 * reset - DATA_RESET_REQUEST.  The backend's trigger (a signal) calls
 * layer_data_reset_request from outside the VM; the layer's delivery thread
 * sends the event, once per request.
 */
#ifndef JVMPI_RESET_H_
#define JVMPI_RESET_H_

#include <stdbool.h>

#include "jvmpi.h"

/* How to wake the delivery thread (layer.c's). */
void reset_set_waker(void (*waker)(void));
/* Whether a request waits for delivery. */
bool reset_due(void);
/* On the delivery thread: sends the requests that came in. */
void reset_deliver_due(JNIEnv *env);

#endif
