#include "tls.h"

#include <pthread.h>
#include <stdlib.h>

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static TLS_FAST tls_caches *mine;

static void make_key(void) { pthread_key_create(&key, free); }

tls_caches *tls_caches_get(void)
{
    tls_caches *c = mine;
    if (c == NULL) {
        pthread_once(&key_once, make_key);
        c = calloc(1, sizeof *c);
        if (c == NULL) {
            return NULL;
        }
        /* The key's destructor frees it when the thread exits. */
        pthread_setspecific(key, c);
        mine = c;
    }
    return c;
}
