/*
 * resetsig.c - the trigger of DATA_RESET_REQUEST, which JVM TI has no twin
 * for: the signal SIGUSR1 (`kill -USR1 <pid>`).
 *
 * HotSpot takes SIGQUIT for thread dumps (our DATA_DUMP_REQUEST), SIGUSR2
 * for its own thread suspension, and SIGHUP/SIGINT/SIGTERM for shutdown;
 * it leaves SIGUSR1 alone, whose default action would kill the process.
 * The handler is installed when the agent first enables the event and stays
 * (afterwards the signal is ignored while the event is off), so a late
 * signal never kills a VM that an agent once asked to be reset.
 *
 * A signal handler may not run agent code: it posts a semaphore that a
 * plain thread of the layer waits on, and that thread passes the request to
 * the JVMPI side, whose delivery thread sends the event.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <unistd.h>
#include <string.h>

#include "backend.h"

#define RESET_SIGNAL SIGUSR1

static sem_t requests;
static _Atomic bool reset_on;
static bool installed;
static struct sigaction previous;
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_reset_signal(int sig, siginfo_t *info, void *context)
{
    int saved = errno;
    sem_post(&requests);
    errno = saved;
    /* Someone had a handler before us (signal chaining libraries, or the
     * application through sun.misc.Signal): it still gets the signal. */
    if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction != NULL) {
        previous.sa_sigaction(sig, info, context);
    } else if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler != SIG_DFL &&
               previous.sa_handler != SIG_IGN && previous.sa_handler != NULL) {
        previous.sa_handler(sig);
    }
}

static void *wait_for_requests(void *unused)
{
    for (;;) {
        if (sem_wait(&requests) != 0) {
            continue; /* EINTR */
        }
        if (atomic_load(&reset_on)) {
            layer_data_reset_request();
        }
    }
    return NULL;
}

static bool install(void)
{
    if (sem_init(&requests, 0, 0) != 0) {
        LOG_ERROR("DATA_RESET_REQUEST: sem_init failed: %s", strerror(errno));
        return false;
    }
    /* The waiting thread must never be the one a process signal lands on. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t t;
    int rc = pthread_create(&t, NULL, wait_for_requests, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        LOG_ERROR("DATA_RESET_REQUEST: no thread for the reset signal: %s", strerror(rc));
        return false;
    }
    pthread_detach(t);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_reset_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(RESET_SIGNAL, &sa, &previous) != 0) {
        LOG_ERROR("DATA_RESET_REQUEST: cannot handle SIGUSR1: %s", strerror(errno));
        return false;
    }
    LOG_INFO("DATA_RESET_REQUEST: sent on SIGUSR1 (kill -USR1 %ld)", (long)getpid());
    return true;
}

bool bk_reset_signal_switch(bool on)
{
    pthread_mutex_lock(&install_lock);
    bool ok = true;
    if (on && !installed) {
        ok = installed = install();
    }
    pthread_mutex_unlock(&install_lock);
    if (ok) {
        atomic_store(&reset_on, on);
    }
    return ok;
}
