/*
 * memo.c - answers kept per jmethodID (memo.h).
 */
#include <stdlib.h>

#include "memo.h"

bool memo_get(memo_table *t, jmethodID method, void **value)
{
    memo *m = NULL;
    pthread_mutex_lock(&t->lock);
    HASH_FIND_PTR(t->table, &method, m);
    if (m != NULL) {
        *value = m->value;
    }
    pthread_mutex_unlock(&t->lock);
    return m != NULL;
}

/* Two threads may work out the same answer: the first one kept stays. */
void memo_put(memo_table *t, jmethodID method, void *value)
{
    memo *m = malloc(sizeof *m);
    if (m == NULL) {
        return;
    }
    m->method = method;
    m->value = value;
    pthread_mutex_lock(&t->lock);
    memo *had = NULL;
    HASH_FIND_PTR(t->table, &method, had);
    if (had == NULL) {
        HASH_ADD_PTR(t->table, method, m);
    } else {
        free(m);
    }
    pthread_mutex_unlock(&t->lock);
}
