/*
 * threads - the layer's table of live Java threads, keyed by JNIEnv * (the
 * JVMPI thread handle) and by thread object ID.
 *
 * Records are reference counted: a thread may end while another thread is
 * suspending or sampling it, so every lookup returns an acquired record that
 * the caller releases.  The calling thread's own record is cached in a
 * thread-local, which keeps Get/SetThreadLocalStorage off the table lock.
 */
#ifndef JVMPI_THREADS_H_
#define JVMPI_THREADS_H_

#include <stdbool.h>

#include "once.h"
#include "seam.h"
#include "tls.h"
#include "tlswords.h"

typedef struct thread_rec thread_rec;

struct thread_rec {
    seam_thread_info info;   /* env, id, backend handle, names */
    tlswords *tls;           /* each agent's thread-local storage word; NULL if none could be had */
    bool internal;           /* the layer's own thread: never reported */
    _Atomic bool suspended;  /* suspended through JVMPI (changed under interface.c's suspend lock) */
    _Atomic jint suspended_status; /* GetThreadStatus at that suspension, bits left out */
    _Atomic jlong cpu_ns;    /* virtual threads: CPU time on carriers, counted once asked for */
    once_flag announced;     /* THREAD_START */
    int refs;
    bool ended;
    int standing_in;         /* deliveries carrying its env_id for another thread (table lock) */
    bool ending;             /* its THREAD_END is due: no longer a stand-in (table lock) */
};

/* Takes ownership of info's strings and handle.  Returns the record,
 * acquired once for the caller.  Must be called in the thread itself. */
thread_rec *threads_add(seam_thread_info *info, bool internal);

/* Frees what info holds (strings, handle), for a thread not recorded. */
void threads_info_discard(seam_thread_info *info);

/* Marks the calling thread's record ended and drops it from the table. */
void threads_end(JNIEnv *env);

/* How many ended threads threads_recently_ended remembers. */
#define THREADS_ENDED_KEPT 1024

/* True when env was the JNIEnv * of a thread that has ended, one of the
 * last THREADS_ENDED_KEPT to end.  Says nothing of a live thread that has
 * env now (the VM reuses them): look that up first, the live thread wins. */
bool threads_recently_ended(JNIEnv *env);
/* True when id was the Thread object ID of one of those threads. */
bool threads_id_recently_ended(jobjectID id);

thread_rec *threads_acquire_by_env(JNIEnv *env);
thread_rec *threads_acquire_by_id(jobjectID id);
void threads_release(thread_rec *t);

/* True once per record: the caller is the one that sends its THREAD_START,
 * then calls once_sent(&t->announced).  Waits while another thread sends it. */
bool threads_claim_announce(thread_rec *t);

/* The calling thread's own record (not acquired: it lives as long as the
 * thread), found through env or, for a thread the agent knows by a
 * layer-made handle, through the thread's ID; NULL for a thread the layer
 * does not know.  Inline once found: every event asks. */
extern TLS_FAST thread_rec *threads_me;
thread_rec *threads_self_lookup(JNIEnv *env);
static inline thread_rec *threads_self(JNIEnv *env)
{
    thread_rec *me = threads_me;
    return me != NULL ? me : threads_self_lookup(env);
}

/* Virtual threads (JDK 21+): while vt is mounted on the calling carrier
 * thread, it is the calling thread's own record (threads_self), so every
 * event the carrier sends carries vt's env_id.  The caller keeps vt alive
 * until threads_unmount. */
void threads_mount(thread_rec *vt);
void threads_unmount(void);
/* GetCurrentThreadCpuTime: the calling thread's CPU time, or, while a
 * virtual thread is mounted, that virtual thread's (its carriers' time while
 * it ran on them, counted from the first call on: until an agent asks, no
 * mount pays for the clock). */
jlong threads_current_cpu_time(void);

/* Acquired: the thread whose env_id events carry when the thread that sends
 * them is none the agent knows (the VM's hidden threads, the layer's own):
 * the earliest started live thread the agent was told about. NULL if none.
 * Given back with threads_stand_in_done. */
thread_rec *threads_stand_in(void);
void threads_stand_in_done(thread_rec *t);
/* Before t's THREAD_END: it stands in for no thread from now on, and the
 * deliveries it stands in for have ended (none names it after its end). */
void threads_mark_ending(thread_rec *t);
/* The JNIEnv * the agents know the live thread with this ID by; NULL for
 * none, the layer's own, or one whose THREAD_END is due: HotSpot lets a
 * thread past its ThreadEnd still take its own Thread object's monitor
 * (to wake the threads joining it), and no event may name it then. */
JNIEnv *threads_running_env(jobjectID id);

/* The agent's thread-local storage word; false when env names no known
 * thread.  Safe in a signal handler: no lock, no allocation, no log line. */
bool threads_tls_get(JNIEnv *env, int agent, void **value);
bool threads_tls_set(JNIEnv *env, int agent, void *value);

/* What GetThreadStatus answers for t: vm_status is the VM's view of it
 * (SUSPENDED and INTERRUPTED bits included, JVMPI_FAIL when it has none),
 * raw_status the raw monitor state the layer knows (0: not blocked in one).
 * While t is suspended through JVMPI, its status at the suspension, with
 * the SUSPENDED bit.  Never negative: a thread the VM does not run (yet,
 * or any more) is RUNNABLE, as on JDK 5.0. */
jint threads_status(const thread_rec *t, jint vm_status, jint raw_status);

/* Acquired records of every live, non-internal thread in start order;
 * *count set.  Release each, then free the array. */
thread_rec **threads_snapshot(int *count);

/* As threads_snapshot, for a dump that names the threads it lists: threads
 * already ending are left out, and the THREAD_END of each listed one waits
 * until its record is given back with threads_stand_in_done, so that the
 * dump reaches the agent before any of those ends. */
thread_rec **threads_snapshot_held(int *count);

/* Drops every record (VM death, tests). */
void threads_reset(void);

#endif
