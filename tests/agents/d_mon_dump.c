/*
 * d_mon_dump - reads a MONITOR_DUMP, requested by D_MonDump
 * (tests/java/D_MonDump.java) at a point where the monitors are in a known
 * state, and checks every byte of it.  Options: <output file>.
 *
 * The reader follows the JVMPI specification's dump format (records
 * [u1 kind][body], u4 big-endian, IDs and pointers native) and its monitor
 * dump layout, written apart from the layer's writer:
 *   JVMPI_MONITOR_JAVA: jobjectID, JNIEnv *owner, u4 entry count,
 *       u4 n, JNIEnv *[n] waiting to enter, u4 m, JNIEnv *[m] waiting to be notified
 *   JVMPI_MONITOR_RAW: char *name, JVMPI_RawMonitor, JNIEnv *owner,
 *       u4 entry count, then the two lists as above.
 * What it expects beyond the specification is what HotSpot 5.0 gave, which
 * agents were written against: a Java monitor's entry count is the number
 * of threads it lists (entering plus waiting), not the owner's recursion;
 * a Class object's monitor is not listed; a raw monitor nobody owns is not
 * listed; num_traces is 0 and threads_status NULL.  With D_MON_DUMP_TRACES=1
 * in the environment (the layer run with monitordump=traces) it expects
 * instead a trace and a status for every thread, as the specification
 * describes them.
 */
#include <arpa/inet.h>
#include <stdint.h>

#include "b_common.h"

#define ROLES 6
static JNIEnv *roles[ROLES];
static const char *role_name[ROLES] = {"main", "blocked", "waiter", "rawOwner", "rawEnterer", "rawWaiter"};
static jobjectID mark_m, mark_class;
static JVMPI_RawMonitor raw, idle_raw;
static int want_traces;
static volatile int raw_owned, raw_release;
static int dumps_seen;

static void JNICALL notify_event(JVMPI_Event *ev);

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (b_setup(vm, options, "d_mon_dump") != JNI_OK)
        return JNI_ERR;
    b_pi->NotifyEvent = notify_event;
    raw = b_pi->RawMonitorCreate("d_mon_raw");
    b_check(raw != NULL, "RawMonitorCreate(d_mon_raw)");
    idle_raw = b_pi->RawMonitorCreate("d_mon_idle"); /* never entered */
    const char *t = getenv("D_MON_DUMP_TRACES");
    want_traces = t != NULL && strcmp(t, "1") == 0;
    b_check(b_pi->EnableEvent(JVMPI_EVENT_MONITOR_DUMP, NULL) == JVMPI_NOT_AVAILABLE,
            "EnableEvent(MONITOR_DUMP) is NOT_AVAILABLE (RequestEvent only)");
    return JNI_OK;
}

/* ---- the reader ---------------------------------------------------------- */

typedef struct {
    const unsigned char *p, *end;
    const unsigned char *begin;
    int bad;
} rd;

static int need(rd *r, size_t n, const char *what)
{
    if ((size_t)(r->end - r->p) < n) {
        b_fail("dump: %s at offset %ld runs past the end (%ld bytes left, %zu needed)", what,
               (long)(r->p - r->begin), (long)(r->end - r->p), n);
        r->bad = 1;
        return 0;
    }
    return 1;
}

static uint32_t rd_u4(rd *r, const char *what)
{
    uint32_t v = 0;
    if (need(r, 4, what)) {
        memcpy(&v, r->p, 4);
        r->p += 4;
    }
    return ntohl(v);
}

static void *rd_ptr(rd *r, const char *what)
{
    void *v = NULL;
    if (need(r, sizeof v, what)) {
        memcpy(&v, r->p, sizeof v);
        r->p += sizeof v;
    }
    return v;
}

typedef struct {
    int kind;
    void *id;          /* object ID or raw monitor ID */
    char *name;        /* raw only */
    JNIEnv *owner;
    uint32_t count;
    uint32_t n_enter, n_wait;
    JNIEnv *enter[16], *wait[16];
} mon_rec;

/* Reads a thread list; keeps up to 16. */
static uint32_t rd_list(rd *r, JNIEnv **keep, const char *what)
{
    uint32_t n = rd_u4(r, what);
    if (n > 100000) {
        b_fail("dump: %s count %u is not plausible", what, n);
        r->bad = 1;
        return 0;
    }
    for (uint32_t i = 0; i < n && !r->bad; i++) {
        JNIEnv *e = rd_ptr(r, what);
        if (i < 16)
            keep[i] = e;
    }
    return n;
}

static int role_of(JNIEnv *e)
{
    for (int i = 0; i < ROLES; i++)
        if (roles[i] != NULL && roles[i] == e)
            return i;
    return -1;
}

static int in_traces(JVMPI_Event *ev, JNIEnv *e)
{
    for (jint i = 0; i < ev->u.monitor_dump.num_traces; i++)
        if (ev->u.monitor_dump.traces[i].env_id == e)
            return 1;
    return 0;
}

static void check_dump(JVMPI_Event *ev)
{
    b_check(ev->event_type == (JVMPI_EVENT_MONITOR_DUMP | JVMPI_REQUESTED_EVENT),
            "MONITOR_DUMP carries JVMPI_REQUESTED_EVENT");
    b_check(ev->env_id == roles[0], "MONITOR_DUMP delivered in the requesting thread");
    rd r = {(const unsigned char *)ev->u.monitor_dump.begin, (const unsigned char *)ev->u.monitor_dump.end,
            (const unsigned char *)ev->u.monitor_dump.begin, 0};
    if (!b_check(r.p != NULL && r.end >= r.p, "dump: begin <= end"))
        return;
    int n_java = 0, n_raw = 0, found_m = 0, found_raw = 0, found_class = 0, found_idle = 0, strangers = 0;
    mon_rec m_rec, raw_rec;
    memset(&m_rec, 0, sizeof m_rec);
    memset(&raw_rec, 0, sizeof raw_rec);
    while (r.p < r.end && !r.bad) {
        mon_rec x;
        memset(&x, 0, sizeof x);
        x.kind = *r.p++;
        if (x.kind == JVMPI_MONITOR_JAVA) {
            x.id = rd_ptr(&r, "java object ID");
            n_java++;
        } else if (x.kind == JVMPI_MONITOR_RAW) {
            x.name = rd_ptr(&r, "raw name");
            x.id = rd_ptr(&r, "raw ID");
            n_raw++;
        } else {
            b_fail("dump: record kind %d at offset %ld", x.kind, (long)(r.p - 1 - r.begin));
            r.bad = 1;
            break;
        }
        x.owner = rd_ptr(&r, "owner");
        x.count = rd_u4(&r, "entry count");
        x.n_enter = rd_list(&r, x.enter, "waiting to enter");
        x.n_wait = rd_list(&r, x.wait, "waiting to be notified");
        if (r.bad)
            break;
        /* with traces, every thread the dump names must be one of them */
        if (x.owner != NULL && !in_traces(ev, x.owner))
            strangers++;
        for (uint32_t i = 0; i < x.n_enter && i < 16; i++)
            if (x.enter[i] != NULL && !in_traces(ev, x.enter[i]))
                strangers++;
        for (uint32_t i = 0; i < x.n_wait && i < 16; i++)
            if (x.wait[i] != NULL && !in_traces(ev, x.wait[i]))
                strangers++;
        if (x.kind == JVMPI_MONITOR_JAVA && x.count != x.n_enter + x.n_wait)
            b_fail("dump: Java monitor %p has entry count %u, not its %u entering + %u waiting", x.id, x.count,
                   x.n_enter, x.n_wait);
        if (x.kind == JVMPI_MONITOR_RAW && x.owner == NULL)
            b_fail("dump: raw monitor %s listed with no owner", x.name != NULL ? x.name : "?");
        found_class += x.kind == JVMPI_MONITOR_JAVA && x.id == mark_class;
        found_idle += x.kind == JVMPI_MONITOR_RAW && x.id == (void *)idle_raw;
        if (x.kind == JVMPI_MONITOR_JAVA && x.id == mark_m) {
            found_m++;
            m_rec = x;
        }
        if (x.kind == JVMPI_MONITOR_RAW && x.id == (void *)raw) {
            found_raw++;
            raw_rec = x;
        }
    }
    b_check(!r.bad && r.p == r.end, "dump: every byte from begin to end read as records (%ld bytes, %d Java, %d raw)",
            (long)(r.end - r.begin), n_java, n_raw);
    if (want_traces)
        b_check(strangers == 0, "dump: every thread a record names has a trace (%d do not)", strangers);
    b_check(found_class == 0, "the Class object main holds is not listed (%d)", found_class);
    b_check(found_idle == 0, "the raw monitor nobody owns is not listed (%d)", found_idle);

    b_check(found_m == 1, "monitor M listed once (%d)", found_m);
    if (found_m == 1) {
        b_check(m_rec.owner == roles[0], "M: owner is main (role %d)", role_of(m_rec.owner));
        b_check(m_rec.count == 2, "M: entry count 2, its 1 entering + 1 waiting (got %u)", m_rec.count);
        b_check(m_rec.n_enter == 1 && m_rec.enter[0] == roles[1],
                "M: waiting to enter = [blocked] (%u, first role %d)", m_rec.n_enter, role_of(m_rec.enter[0]));
        b_check(m_rec.n_wait == 1 && m_rec.wait[0] == roles[2],
                "M: waiting to be notified = [waiter] (%u, first role %d)", m_rec.n_wait, role_of(m_rec.wait[0]));
    }
    b_check(found_raw == 1, "raw monitor listed once (%d)", found_raw);
    if (found_raw == 1) {
        b_check(raw_rec.name != NULL && strcmp(raw_rec.name, "d_mon_raw") == 0, "raw: name d_mon_raw");
        b_check(raw_rec.owner == roles[3], "raw: owner is rawOwner (role %d)", role_of(raw_rec.owner));
        b_check(raw_rec.count == 1, "raw: entry count 1 (got %u)", raw_rec.count);
        b_check(raw_rec.n_enter == 1 && raw_rec.enter[0] == roles[4],
                "raw: waiting to enter = [rawEnterer] (%u, first role %d)", raw_rec.n_enter,
                role_of(raw_rec.enter[0]));
        b_check(raw_rec.n_wait == 1 && raw_rec.wait[0] == roles[5],
                "raw: waiting to be notified = [rawWaiter] (%u, first role %d)", raw_rec.n_wait,
                role_of(raw_rec.wait[0]));
    }

    if (!want_traces) {
        b_check(ev->u.monitor_dump.num_traces == 0 && ev->u.monitor_dump.threads_status == NULL,
                "dump: num_traces 0, threads_status NULL (%d, %p)", (int)ev->u.monitor_dump.num_traces,
                (void *)ev->u.monitor_dump.threads_status);
        return;
    }
    /* traces and statuses */
    static const jint want[ROLES] = {JVMPI_THREAD_RUNNABLE,    JVMPI_THREAD_MONITOR_WAIT, JVMPI_THREAD_CONDVAR_WAIT,
                                     JVMPI_THREAD_RUNNABLE,    JVMPI_THREAD_MONITOR_WAIT, JVMPI_THREAD_CONDVAR_WAIT};
    int seen[ROLES] = {0};
    jint n = ev->u.monitor_dump.num_traces;
    b_check(n >= ROLES && ev->u.monitor_dump.traces != NULL && ev->u.monitor_dump.threads_status != NULL,
            "dump: %d traces with statuses", (int)n);
    for (jint i = 0; i < n && ev->u.monitor_dump.traces && ev->u.monitor_dump.threads_status; i++) {
        JVMPI_CallTrace *t = &ev->u.monitor_dump.traces[i];
        int role = role_of(t->env_id);
        if (t->num_frames < 0 || (t->num_frames > 0 && t->frames == NULL))
            b_fail("trace %d: %d frames, frames %p", (int)i, (int)t->num_frames, (void *)t->frames);
        if (role < 0)
            continue;
        seen[role]++;
        jint st = ev->u.monitor_dump.threads_status[i] & ~(JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED);
        b_check(st == want[role], "status of %s is %d (got %d)", role_name[role], (int)want[role], (int)st);
        if (role == 0) {
            /* main is in the native dump(): a native top frame, then Java frames */
            b_check(t->num_frames >= 2 && t->frames[0].lineno == -3 && t->frames[1].lineno > 0,
                    "main's trace: native dump() on top of D_MonDump.main (%d frames, lines %d, %d)",
                    (int)t->num_frames, t->num_frames > 0 ? (int)t->frames[0].lineno : 0,
                    t->num_frames > 1 ? (int)t->frames[1].lineno : 0);
        }
    }
    for (int r2 = 0; r2 < ROLES; r2++)
        b_check(seen[r2] == 1, "%s has exactly one trace (%d)", role_name[r2], seen[r2]);
}

static void JNICALL notify_event(JVMPI_Event *ev)
{
    if ((ev->event_type & ~JVMPI_REQUESTED_EVENT) == JVMPI_EVENT_MONITOR_DUMP) {
        dumps_seen++;
        check_dump(ev);
    }
}

/* ---- natives for D_MonDump ------------------------------------------------ */

JNIEXPORT void JNICALL Java_D_1MonDump_register(JNIEnv *env, jclass cls, jint role)
{
    roles[role] = env;
}

JNIEXPORT void JNICALL Java_D_1MonDump_mark(JNIEnv *env, jclass cls, jobject m)
{
    mark_m = b_pi->jobject2jobjectID(m);
    b_check(mark_m != NULL, "M has an object ID");
}

JNIEXPORT void JNICALL Java_D_1MonDump_markClass(JNIEnv *env, jclass cls, jobject c)
{
    mark_class = b_pi->jobject2jobjectID(c);
    b_check(mark_class != NULL, "the Class object has an object ID");
}

JNIEXPORT void JNICALL Java_D_1MonDump_rawWaiter(JNIEnv *env, jclass cls)
{
    b_pi->RawMonitorEnter(raw);
    b_pi->RawMonitorWait(raw, 0);
    b_pi->RawMonitorExit(raw);
}

JNIEXPORT void JNICALL Java_D_1MonDump_rawOwner(JNIEnv *env, jclass cls)
{
    b_pi->RawMonitorEnter(raw);
    __atomic_store_n(&raw_owned, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&raw_release, __ATOMIC_SEQ_CST))
        b_sleep_ms(2);
    b_pi->RawMonitorExit(raw);
}

JNIEXPORT void JNICALL Java_D_1MonDump_rawEnterer(JNIEnv *env, jclass cls)
{
    b_pi->RawMonitorEnter(raw);
    b_pi->RawMonitorExit(raw);
}

JNIEXPORT jboolean JNICALL Java_D_1MonDump_rawOwned(JNIEnv *env, jclass cls)
{
    return __atomic_load_n(&raw_owned, __ATOMIC_SEQ_CST) ? JNI_TRUE : JNI_FALSE;
}

static jint status_of(jint role)
{
    return roles[role] != NULL ? b_pi->GetThreadStatus(roles[role]) & 0x3 : -1;
}

JNIEXPORT jboolean JNICALL Java_D_1MonDump_blockedInRaw(JNIEnv *env, jclass cls, jint role)
{
    return status_of(role) == JVMPI_THREAD_MONITOR_WAIT;
}

JNIEXPORT jboolean JNICALL Java_D_1MonDump_waitingInRaw(JNIEnv *env, jclass cls, jint role)
{
    return status_of(role) == JVMPI_THREAD_CONDVAR_WAIT;
}

JNIEXPORT jint JNICALL Java_D_1MonDump_dump(JNIEnv *env, jclass cls)
{
    int before = dumps_seen;
    jint rc = b_pi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL);
    b_check(rc == JVMPI_SUCCESS, "RequestEvent(MONITOR_DUMP) = %d", (int)rc);
    b_check(dumps_seen == before + 1, "the dump was delivered before RequestEvent returned");
    return rc;
}

JNIEXPORT void JNICALL Java_D_1MonDump_rawRelease(JNIEnv *env, jclass cls)
{
    __atomic_store_n(&raw_release, 1, __ATOMIC_SEQ_CST);
}

JNIEXPORT void JNICALL Java_D_1MonDump_rawNotify(JNIEnv *env, jclass cls)
{
    b_pi->RawMonitorEnter(raw);
    b_pi->RawMonitorNotifyAll(raw);
    b_pi->RawMonitorExit(raw);
}

JNIEXPORT void JNICALL Java_D_1MonDump_finish(JNIEnv *env, jclass cls)
{
    b_check(dumps_seen == 1, "one MONITOR_DUMP in all (%d)", dumps_seen);
    b_summary("d_mon_dump");
}
