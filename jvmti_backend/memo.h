/*
 * memo.h - answers kept per jmethodID, for the questions the method hooks
 * and traces ask about a method again and again (its original code, its
 * current version, whether it is a renamed native).  HotSpot never frees
 * nor reuses a jmethodID, so an answer kept never goes stale.
 */
#ifndef JVMPI_MEMO_H_
#define JVMPI_MEMO_H_

#include <pthread.h>
#include <stdbool.h>
#include <uthash.h>

#include <jni.h>

typedef struct {
    jmethodID method;
    void *value;
    UT_hash_handle hh;
} memo;

/* Starts as {NULL, PTHREAD_MUTEX_INITIALIZER}. */
typedef struct {
    memo *table;
    pthread_mutex_t lock;
} memo_table;

bool memo_get(memo_table *t, jmethodID method, void **value);
void memo_put(memo_table *t, jmethodID method, void *value);

#endif
