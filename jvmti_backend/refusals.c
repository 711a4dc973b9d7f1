/*
 * refusals.c - what the layer says of a class the rewriter left as it was.
 *
 * A class refused for its own shape (a method that would pass 64 KB, a
 * branch that would no longer reach) is named, one line each.  One refused
 * for holding something the rewriter does not know (a constant kind, an
 * opcode, a Code attribute that a JDK newer than the layer brought) would
 * give that line for every class such a JDK compiled: each such thing is
 * said once, with the first class it was met in, and the classes at debug
 * level.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "backend.h"
#include "classfile.h"

typedef struct {
    UT_hash_handle hh;
    char kind[]; /* the key */
} said_kind;

static said_kind *said;
static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;

/* Whether kind is new, remembering it.  Out of memory it counts as new:
 * a line said twice is better than one never said. */
static bool first_time(const char *kind)
{
    pthread_mutex_lock(&said_lock);
    said_kind *k = NULL;
    HASH_FIND_STR(said, kind, k);
    bool first = k == NULL;
    if (first) {
        size_t n = strlen(kind) + 1;
        k = malloc(sizeof *k + n);
        if (k != NULL) {
            memcpy(k->kind, kind, n);
            HASH_ADD_STR(said, kind, k);
        }
    }
    pthread_mutex_unlock(&said_lock);
    return first;
}

void bk_refusals_class(const char *name, unsigned major, const char *why)
{
    const char *kind = classfile_unknown_in(why);
    if (kind == NULL) {
        LOG_WARN("method events: class %s left as it is (%s): its methods report no METHOD_ENTRY or METHOD_EXIT",
                 name, why);
        return;
    }
    if (first_time(kind)) {
        LOG_WARN("method events: the class rewriter does not know the %s that class %s (class file version %u) "
                 "holds: classes that hold it are left as they are and their methods report no METHOD_ENTRY or "
                 "METHOD_EXIT; JVMPI_LAYER_OPTIONS=methods=jvmti reports them",
                 kind, name, major);
    }
    LOG_DEBUG("method events: class %s left as it is (%s)", name, why);
}
