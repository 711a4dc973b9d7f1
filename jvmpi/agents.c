#include "agents.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

TLS_FAST int agents_target_now = -1;

typedef struct {
    const void *lib_base; /* NULL: not placed in a library */
    char *name;
    bool started_by_layer; /* else the VM started it (-Xrun) */
    bool told;             /* agents_first_call said so once */
} agent_slot;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static agent_slot slots[AGENTS_MAX];
static _Atomic int count;
static const char *loading_name;
static const void *loading_base;

void agents_loading(const char *name, const void *lib_base)
{
    pthread_mutex_lock(&lock);
    loading_name = name;
    loading_base = lib_base;
    pthread_mutex_unlock(&lock);
}

/* With lock held. */
static int add(const void *base, const char *name)
{
    int n = atomic_load(&count);
    if (n == AGENTS_MAX) {
        return -1;
    }
    slots[n].lib_base = base;
    slots[n].name = strdup(name != NULL ? name : "(an agent)");
    atomic_store(&count, n + 1);
    return n;
}

int agents_for_caller(const void *caller)
{
    Dl_info info;
    const void *base = NULL;
    const char *file = NULL;
    if (caller != NULL && dladdr(caller, &info) != 0) {
        base = info.dli_fbase;
        file = info.dli_fname;
    }
    int k = -1;
    bool full = false;
    {
        pthread_mutex_lock(&lock);
        if (base == NULL && loading_base != NULL) {
            base = loading_base; /* the library the loader is starting */
        }
        if (base != NULL && base == loading_base && loading_name != NULL) {
            /* As the user named it: the file may be a private copy in /tmp. */
            file = loading_name;
        }
        int n = atomic_load(&count);
        for (int i = 0; i < n && k < 0; i++) {
            if (slots[i].lib_base == base) {
                k = i;
            }
        }
        if (k < 0) {
            k = add(base, file != NULL ? file : loading_name);
            full = k < 0;
            if (k >= 0) {
                slots[k].started_by_layer = loading_base != NULL && base == loading_base;
            }
        }
        pthread_mutex_unlock(&lock);
    }
    if (full) {
        LOG_ERROR("GetEnv(JVMPI) from %s: the layer serves at most %d JVMPI agents in one VM, and %d are loaded",
                  file != NULL ? LOG_SHOWN(file) : "an unknown library", AGENTS_MAX, AGENTS_MAX);
    }
    return k;
}

bool agents_started_by_vm_first_call(int k)
{
    bool first = false;
    pthread_mutex_lock(&lock);
    if (k >= 0 && k < atomic_load(&count) && !slots[k].told) {
        slots[k].told = true;
        first = !slots[k].started_by_layer;
    }
    pthread_mutex_unlock(&lock);
    return first;
}

int agents_count(void) { return atomic_load(&count); }

agents_mask agents_all(void)
{
    int n = atomic_load(&count);
    return n == 0 ? 0 : (agents_mask)((1ull << n) - 1);
}

const char *agents_name(int k) { return k >= 0 && k < atomic_load(&count) ? slots[k].name : "(no agent)"; }

void agents_ensure(int k)
{
    pthread_mutex_lock(&lock);
    while (atomic_load(&count) <= k && add(NULL, "(unit test agent)") >= 0) {
    }
    pthread_mutex_unlock(&lock);
}

void agents_reset(void)
{
    pthread_mutex_lock(&lock);
    int n = atomic_load(&count);
    for (int i = 0; i < n; i++) {
        free(slots[i].name);
        slots[i].name = NULL;
        slots[i].lib_base = NULL;
    }
    atomic_store(&count, 0);
    loading_name = NULL;
    loading_base = NULL;
    pthread_mutex_unlock(&lock);
    agents_target_now = -1;
}
