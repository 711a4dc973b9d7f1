#include "monitordump.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agents.h"
#include "defs.h"
#include "dumpbuf.h"
#include "dumpdefs.h"
#include "events.h"
#include "log.h"
#include "rawmon.h"
#include "threads.h"

static void put_envs(dumpbuf *b, jint n, JNIEnv *const *envs)
{
    dumpbuf_u4(b, (uint32_t)n);
    for (jint i = 0; i < n; i++) {
        dumpbuf_ptr(b, envs[i]);
    }
}

/* Thread IDs -> the JNIEnv * the agent knows; unknown threads dropped. */
static jint map_threads(jint n, const jobjectID *ids, JNIEnv **out)
{
    jint k = 0;
    for (jint i = 0; i < n; i++) {
        thread_rec *t = threads_acquire_by_id(ids[i]);
        if (t != NULL) {
            if (!t->internal) {
                out[k++] = t->info.env;
            }
            threads_release(t);
        }
    }
    return k;
}

static void put_java_monitor(dumpbuf *b, const seam_monitor_info *m)
{
    JNIEnv *owner = NULL;
    if (m->owner != NULL) {
        map_threads(1, &m->owner, &owner);
    }
    JNIEnv **entering = calloc((size_t)m->n_entering + 1, sizeof *entering);
    JNIEnv **waiting = calloc((size_t)m->n_waiting + 1, sizeof *waiting);
    if (entering == NULL || waiting == NULL) {
        free(entering);
        free(waiting);
        b->failed = true;
        return;
    }
    jint n_entering = map_threads(m->n_entering, m->entering, entering);
    jint n_waiting = map_threads(m->n_waiting, m->waiting, waiting);
    dumpbuf_u1(b, JVMPI_MONITOR_JAVA);
    dumpbuf_ptr(b, m->object);
    dumpbuf_ptr(b, owner);
    /* HotSpot 5.0's count: the threads after the monitor, not the owner's
     * recursion; agents that size or print it were written against that. */
    dumpbuf_u4(b, (uint32_t)(n_entering + n_waiting));
    put_envs(b, n_entering, entering);
    put_envs(b, n_waiting, waiting);
    free(entering);
    free(waiting);
}

typedef struct {
    dumpbuf *buf;
    char **names;     /* copies, alive until the event has been delivered */
    int n_names, cap_names;
} raw_ctx;

static void put_raw_monitor(const rawmon_snapshot *s, void *arg)
{
    raw_ctx *c = arg;
    if (agents_target() >= 0 && s->creator != agents_target()) {
        return; /* another agent's: the asking agent alone never saw it */
    }
    if (s->owner == NULL) {
        return; /* HotSpot 5.0 listed a raw monitor only while owned */
    }
    if (c->n_names == c->cap_names) {
        int cap = c->cap_names ? c->cap_names * 2 : 16;
        char **names = realloc(c->names, (size_t)cap * sizeof *names);
        if (names == NULL) {
            c->buf->failed = true;
            return;
        }
        c->names = names;
        c->cap_names = cap;
    }
    char *name = strdup(s->name != NULL ? s->name : "");
    if (name == NULL) {
        c->buf->failed = true;
        return;
    }
    c->names[c->n_names++] = name;
    dumpbuf *b = c->buf;
    dumpbuf_u1(b, JVMPI_MONITOR_RAW);
    dumpbuf_ptr(b, name);
    dumpbuf_ptr(b, s->id);
    dumpbuf_ptr(b, s->owner);
    dumpbuf_u4(b, (uint32_t)s->entry_count);
    put_envs(b, s->n_entering, s->entering);
    put_envs(b, s->n_waiting, s->waiting);
}

/* GetThreadStatus's answer for a thread in the dump. */
static jint status_of(const thread_rec *t, jint vm_status)
{
    return threads_status(t, vm_status, rawmon_thread_blocked_status(t->info.env));
}

/* HotSpot 5.0 skipped Class objects' monitors: they are moved past
 * num_monitors (in order), so that neither the dump nor what it announces
 * first names them; the caller restores the count before freeing. */
static void skip_class_monitors(seam_monitor_snapshot *snap)
{
    int kept = 0;
    for (int i = 0; i < snap->num_monitors; i++) {
        if (!snap->monitors[i].is_class) {
            seam_monitor_info m = snap->monitors[kept];
            snap->monitors[kept++] = snap->monitors[i];
            snap->monitors[i] = m;
        }
    }
    snap->num_monitors = kept;
}

/* HotSpot 5.0 gave no traces (num_traces 0, threads_status NULL), though
 * the JVMPI specification describes them: agents written against 5.0 never
 * had them, so they are given only when asked for. */
static bool with_traces;

void monitordump_set_traces(bool traces) { with_traces = traces; }

static void give_back(thread_rec **all, int n)
{
    for (int i = 0; all != NULL && i < n; i++) {
        threads_stand_in_done(all[i]);
    }
    free(all);
}

jint monitordump_request(JNIEnv *env)
{
    seam_monitor_snapshot snap;
    memset(&snap, 0, sizeof snap);
    if (env == NULL) {
        log_refused("RequestEvent(MONITOR_DUMP)", "the calling thread is not attached to the VM");
        return JVMPI_FAIL;
    }
    int n_all = 0, n_virtual = 0;
    /* The threads it names end after it has been delivered (heapdump.c). */
    thread_rec **all = threads_snapshot_held(&n_all);
    void **vthreads = calloc((size_t)n_all + 1, sizeof *vthreads);
    for (int i = 0; all != NULL && vthreads != NULL && i < n_all; i++) {
        if (all[i]->info.is_virtual && all[i]->info.handle != NULL) {
            vthreads[n_virtual++] = all[i]->info.handle;
        }
    }
    bool taken = seam_monitor_snapshot_take(env, with_traces ? MONITORDUMP_MAX_FRAMES : 0, vthreads, n_virtual, &snap);
    free(vthreads);
    if (!taken) {
        give_back(all, n_all);
        return JVMPI_FAIL;
    }
    int all_monitors = snap.num_monitors;
    skip_class_monitors(&snap);
    dumpdefs_monitors(env, &snap);
    jint rc = JVMPI_FAIL;
    dumpbuf b = {0};
    raw_ctx raw = {&b, NULL, 0, 0};
    JVMPI_CallTrace *traces = calloc((size_t)snap.num_threads + 1, sizeof *traces);
    jint *status = calloc((size_t)snap.num_threads + 1, sizeof *status);
    if (traces == NULL || status == NULL) {
        LOG_ERROR("RequestEvent(MONITOR_DUMP): out of memory");
        goto out;
    }
    jint n = 0;
    for (int i = 0; with_traces && i < snap.num_threads; i++) {
        const seam_monitor_thread *st = &snap.threads[i];
        thread_rec *t = threads_acquire_by_id(st->id);
        if (t == NULL) {
            continue;
        }
        if (!t->internal) {
            traces[n].env_id = t->info.env;
            traces[n].num_frames = st->num_frames;
            traces[n].frames = st->frames;
            status[n] = status_of(t, st->status);
            n++;
        }
        threads_release(t);
    }
    for (int i = 0; i < snap.num_monitors; i++) {
        put_java_monitor(&b, &snap.monitors[i]);
    }
    rawmon_for_each(put_raw_monitor, &raw);
    if (b.failed) {
        LOG_ERROR("RequestEvent(MONITOR_DUMP): out of memory");
        goto out;
    }
    /* An empty dump still needs a begin that is not NULL. */
    dumpbuf_u1(&b, 0);
    b.len--;
    if (b.failed) {
        goto out;
    }
    JVMPI_Event ev;
    memset(&ev, 0, sizeof ev);
    ev.event_type = JVMPI_EVENT_MONITOR_DUMP | JVMPI_REQUESTED_EVENT;
    ev.u.monitor_dump.begin = (char *)b.p;
    ev.u.monitor_dump.end = (char *)b.p + b.len;
    ev.u.monitor_dump.num_traces = n;
    ev.u.monitor_dump.traces = with_traces ? traces : NULL;
    ev.u.monitor_dump.threads_status = with_traces ? status : NULL;
    events_deliver(env, &ev);
    rc = JVMPI_SUCCESS;
out:
    for (int i = 0; i < raw.n_names; i++) {
        free(raw.names[i]);
    }
    free(raw.names);
    free(b.p);
    free(traces);
    free(status);
    snap.num_monitors = all_monitors;
    seam_monitor_snapshot_free(&snap);
    give_back(all, n_all);
    return rc;
}
