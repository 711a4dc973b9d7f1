#include "classes.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <uthash.h>

#include "log.h"

typedef struct {
    class_rec rec;
    jobjectID id;
    unsigned long seq;
    UT_hash_handle hh;
} class_entry;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static class_entry *by_id;
static unsigned long next_seq;

static void entry_free(class_entry *e)
{
    free(atomic_load(&e->rec.unloaded_methods));
    seam_class_info_free(e->rec.info);
    free(e);
}

bool classes_add(seam_class_info *info)
{
    class_entry *e = calloc(1, sizeof *e), *old = NULL;
    if (e == NULL) {
        LOG_ERROR("out of memory recording class %s", info->name ? info->name : "?");
        seam_class_info_free(info);
        return false;
    }
    e->rec.info = info;
    e->rec.refs = 1;
    e->id = info->id;
    {
        pthread_mutex_lock(&table_lock);
        HASH_FIND(hh, by_id, &info->id, sizeof info->id, old);
        if (old == NULL) {
            e->seq = next_seq++;
            HASH_ADD(hh, by_id, id, sizeof e->id, e);
        }
        pthread_mutex_unlock(&table_lock);
    }
    if (old != NULL) {
        entry_free(e);
        return false;
    }
    return true;
}

class_rec *classes_acquire(jobjectID id)
{
    class_entry *e = NULL;
    if (id == NULL) {
        return NULL;
    }
    pthread_mutex_lock(&table_lock);
    HASH_FIND(hh, by_id, &id, sizeof id, e);
    if (e != NULL) {
        e->rec.refs++;
    }
    pthread_mutex_unlock(&table_lock);
    return e != NULL ? &e->rec : NULL;
}

void classes_release(class_rec *c)
{
    if (c == NULL) {
        return;
    }
    bool free_now;
    {
        pthread_mutex_lock(&table_lock);
        free_now = --c->refs == 0;
        pthread_mutex_unlock(&table_lock);
    }
    if (free_now) {
        entry_free((class_entry *)c);
    }
}

bool classes_claim_announce(class_rec *c) { return once_claim(&c->announced); }

void classes_mark_unloading(jobjectID id)
{
    class_rec *c = classes_acquire(id);
    if (c == NULL) {
        return;
    }
    const seam_class_info *i = c->info;
    JVMPI_Method *m = calloc((size_t)i->num_methods + 1, sizeof *m);
    if (m != NULL) {
        for (jint k = 0; k < i->num_methods; k++) {
            m[k] = i->methods[k];
            m[k].method_id = NULL;
        }
        JVMPI_Method *none = NULL;
        if (!atomic_compare_exchange_strong(&c->unloaded_methods, &none, m)) {
            free(m);
        }
    }
    classes_release(c);
}

const JVMPI_Method *classes_methods(const class_rec *c)
{
    const JVMPI_Method *m = atomic_load(&((class_rec *)c)->unloaded_methods);
    return m != NULL ? m : c->info->methods;
}

void classes_remove(jobjectID id)
{
    class_entry *e = NULL;
    bool free_now = false;
    {
        pthread_mutex_lock(&table_lock);
        HASH_FIND(hh, by_id, &id, sizeof id, e);
        if (e != NULL) {
            HASH_DELETE(hh, by_id, e);
            free_now = --e->rec.refs == 0;
        }
        pthread_mutex_unlock(&table_lock);
    }
    if (free_now) {
        entry_free(e);
    }
}

static int by_seq(const void *a, const void *b)
{
    const class_entry *x = *(class_entry *const *)a, *y = *(class_entry *const *)b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

class_rec **classes_unannounced(agents_mask agents, int *count)
{
    class_entry **list;
    int n = 0;
    {
        pthread_mutex_lock(&table_lock);
        list = calloc(HASH_COUNT(by_id) + 1, sizeof *list);
        if (list != NULL) {
            for (class_entry *e = by_id; e != NULL; e = e->hh.next) {
                if (!once_was_sent(&e->rec.announced, agents)) {
                    e->rec.refs++;
                    list[n++] = e;
                }
            }
        }
        pthread_mutex_unlock(&table_lock);
    }
    if (list != NULL) {
        qsort(list, (size_t)n, sizeof *list, by_seq);
    }
    *count = n;
    return (class_rec **)list;
}

int classes_count(void)
{
    pthread_mutex_lock(&table_lock);
    int n = (int)HASH_COUNT(by_id);
    pthread_mutex_unlock(&table_lock);
    return n;
}

void classes_reset(void)
{
    class_entry *e, *tmp;
    pthread_mutex_lock(&table_lock);
    HASH_ITER(hh, by_id, e, tmp) {
        HASH_DELETE(hh, by_id, e);
        if (--e->rec.refs == 0) {
            entry_free(e);
        }
    }
    pthread_mutex_unlock(&table_lock);
}
