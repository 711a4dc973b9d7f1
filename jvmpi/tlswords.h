/*
 * tlswords - each thread's thread-local storage words (one per agent),
 * found by JNIEnv * without a lock, an allocation or a log line.
 *
 * JVMPI agents call Get/SetThreadLocalStorage from SIGPROF handlers (JDK
 * 5.0 kept the word in the VM's thread, reached from the JNIEnv * in a few
 * loads): a handler that took a lock could interrupt the lock's holder on
 * its own thread and wait for ever.  The words live in memory that is
 * never freed, only reused once no reader can still be looking at it.
 */
#ifndef JVMPI_TLSWORDS_H_
#define JVMPI_TLSWORDS_H_

#include <stdbool.h>

#include "agents.h"
#include "seam.h"

typedef struct tlswords {
    JNIEnv *_Atomic env;         /* the thread's; NULL while unused */
    void *_Atomic word[AGENTS_MAX];
} tlswords;

/* Words for a thread that starts with env, every word NULL; NULL when out
 * of memory.  Not for signal handlers (it may allocate). */
tlswords *tlswords_claim(JNIEnv *env);
/* The thread has ended: its words are found no more, and reused later. */
void tlswords_drop(tlswords *w);

/* Agent k's word of the thread env; false when no live thread has env.
 * Safe in a signal handler. */
bool tlswords_get(JNIEnv *env, int agent, void **value);
bool tlswords_set(JNIEnv *env, int agent, void *value);

/* Tests: forgets every thread (no reader may be running). */
void tlswords_reset(void);

#endif
