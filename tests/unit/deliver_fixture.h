/*
 * deliver_fixture.h - what the delivery suites share (test_events.c,
 * test_whose.c): agent 0's handlers counting what they get, the last event
 * kept, distinct JNIEnv * values for threads, and an event of a type.
 */
#ifndef TEST_DELIVER_FIXTURE_H_
#define TEST_DELIVER_FIXTURE_H_

#include <string.h>

#include "events.h"
#include "jvmpi.h"

static int calls_a, calls_b;
static JVMPI_Event last;

static inline void deliver_counts_reset(void)
{
    calls_a = calls_b = 0;
    memset(&last, 0, sizeof last);
}

static inline void notify_a(JVMPI_Event *ev)
{
    calls_a++;
    last = *ev;
}

static inline void notify_b(JVMPI_Event *ev)
{
    calls_b++;
    last = *ev;
}

static char env_token[3];
#define ENV_A ((JNIEnv *)(void *)&env_token[0])
#define ENV_B ((JNIEnv *)(void *)&env_token[1])
#define ENV_C ((JNIEnv *)(void *)&env_token[2])

static inline JVMPI_Event plain(jint type)
{
    JVMPI_Event ev;
    memset(&ev, 0, sizeof ev);
    ev.event_type = type;
    return ev;
}

/* Agent 0 gets every event through notify_a. */
static JVMPI_Interface iface_a;
static inline void agent_a_listens(void)
{
    memset(&iface_a, 0, sizeof iface_a);
    iface_a.NotifyEvent = notify_a;
    events_set_interface(0, &iface_a);
}

#endif
