/*
 * c_jniref - JNI_GLOBALREF_ALLOC/FREE and JNI_WEAK_GLOBALREF_ALLOC/FREE.
 * Agent and JNI natives for tests/java/C_JniRef.java.
 *
 * Options: out=FILE.  Enables the four JNI reference events and
 * JVM_SHUT_DOWN in JVM_OnLoad.  The program calls refs(o, label), which, on
 * the calling thread, does
 *     g  = NewGlobalRef(o)        -> GLOBALREF_ALLOC      {obj_id = id(o), ref_id = g}
 *     g2 = NewGlobalRef(g)        -> GLOBALREF_ALLOC      {id(o), g2}
 *     DeleteGlobalRef(g)          -> GLOBALREF_FREE       {g}
 *     w  = NewWeakGlobalRef(o)    -> WEAK_GLOBALREF_ALLOC {id(o), w}
 *     DeleteWeakGlobalRef(w)      -> WEAK_GLOBALREF_FREE  {w}
 *     DeleteGlobalRef(g2)         -> GLOBALREF_FREE       {g2}
 * where id(o) = jobject2jobjectID(o), and checks that exactly these six
 * events, in this order, reached NotifyEvent on this thread while refs() ran
 * (each during its own JNI call), with env_id the caller's JNIEnv.
 * Events of other threads (the JDK's own natives make global refs too) are
 * not looked at.
 */
#include "c_common.h"

#define MAXREC 32

typedef struct {
    jint type;
    JNIEnv *env;
    JNIEnv *thread_env;
    jobject ref;
    jobjectID obj;
    int step; /* which JNI call of refs() was running */
} rec;

static _Thread_local int recording, cur_step, nrec;
static _Thread_local rec recs[MAXREC];
static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static long n_events, n_rounds;

static void notify(JVMPI_Event *ev)
{
    jint t = ev->event_type;
    switch (t) {
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_GLOBALREF_FREE:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE:
        pthread_mutex_lock(&lk);
        n_events++;
        pthread_mutex_unlock(&lk);
        if (!recording)
            return;
        if (nrec < MAXREC) {
            rec *r = &recs[nrec];
            r->type = t;
            r->env = ev->env_id;
            r->thread_env = c_current_env();
            int alloc = t == JVMPI_EVENT_JNI_GLOBALREF_ALLOC || t == JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC;
            r->ref = alloc ? ev->u.jni_globalref_alloc.ref_id : ev->u.jni_globalref_free.ref_id;
            r->obj = alloc ? ev->u.jni_globalref_alloc.obj_id : NULL;
            r->step = cur_step;
        }
        nrec++;
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        c_log("JVM_SHUT_DOWN: %ld JNI reference events in all, %ld rounds checked", n_events, n_rounds);
        c_summary("c_jniref");
        break;
    default:
        c_fail("event type %d was never enabled", (int)t);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    if (c_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    c_pi->NotifyEvent = notify;
    c_enable(JVMPI_EVENT_JNI_GLOBALREF_ALLOC, "JNI_GLOBALREF_ALLOC");
    c_enable(JVMPI_EVENT_JNI_GLOBALREF_FREE, "JNI_GLOBALREF_FREE");
    c_enable(JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC, "JNI_WEAK_GLOBALREF_ALLOC");
    c_enable(JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE, "JNI_WEAK_GLOBALREF_FREE");
    c_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    c_log("START");
    return JNI_OK;
}

static const char *type_name(jint t)
{
    switch (t) {
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
        return "GLOBALREF_ALLOC";
    case JVMPI_EVENT_JNI_GLOBALREF_FREE:
        return "GLOBALREF_FREE";
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
        return "WEAK_GLOBALREF_ALLOC";
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE:
        return "WEAK_GLOBALREF_FREE";
    default:
        return "?";
    }
}

JNIEXPORT void JNICALL Java_C_1JniRef_refs(JNIEnv *env, jclass cls, jobject o, jstring jlabel)
{
    (void)cls;
    if (!c_ready("refs"))
        return;
    const char *label = (*env)->GetStringUTFChars(env, jlabel, NULL);
    jobjectID id = c_pi->jobject2jobjectID(o);
    nrec = 0;
    recording = 1;
    cur_step = 1;
    jobject g = (*env)->NewGlobalRef(env, o);
    cur_step = 2;
    jobject g2 = (*env)->NewGlobalRef(env, g);
    cur_step = 3;
    (*env)->DeleteGlobalRef(env, g);
    cur_step = 4;
    jweak w = (*env)->NewWeakGlobalRef(env, o);
    cur_step = 5;
    (*env)->DeleteWeakGlobalRef(env, w);
    cur_step = 6;
    (*env)->DeleteGlobalRef(env, g2);
    recording = 0;

    const struct {
        jint type;
        jobject ref;
        int alloc;
    } want[6] = {
        {JVMPI_EVENT_JNI_GLOBALREF_ALLOC, g, 1},      {JVMPI_EVENT_JNI_GLOBALREF_ALLOC, g2, 1},
        {JVMPI_EVENT_JNI_GLOBALREF_FREE, g, 0},       {JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC, w, 1},
        {JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE, w, 0},  {JVMPI_EVENT_JNI_GLOBALREF_FREE, g2, 0},
    };
    c_log("%s: object ID %p, g %p, g2 %p, w %p; %d events on this thread", label, (void *)id, (void *)g, (void *)g2,
          (void *)w, nrec);
    int ok = c_check(nrec == 6, "%s: 6 JNI reference events on the calling thread (got %d)", label, nrec);
    for (int i = 0; i < nrec && i < MAXREC; i++) {
        rec *r = &recs[i];
        c_log("%s:   event %d during call %d: %s ref %p obj %p env %p", label, i + 1, r->step, type_name(r->type),
              (void *)r->ref, (void *)r->obj, (void *)r->env);
        if (i >= 6) {
            ok = 0;
            continue;
        }
        int good = r->type == want[i].type && r->ref == want[i].ref && r->step == i + 1 && r->env == env &&
                   r->thread_env == env && (!want[i].alloc || r->obj == id);
        if (!good) {
            c_fail("%s: event %d is %s ref %p obj %p env %p during call %d; expected %s ref %p%s%p env %p during "
                   "call %d",
                   label, i + 1, type_name(r->type), (void *)r->ref, (void *)r->obj, (void *)r->env, r->step,
                   type_name(want[i].type), (void *)want[i].ref, want[i].alloc ? " obj " : "",
                   want[i].alloc ? (void *)id : NULL, (void *)env, i + 1);
            ok = 0;
        }
    }
    c_check(ok && id != NULL, "%s: GLOBALREF_ALLOC x2, GLOBALREF_FREE, WEAK pair, GLOBALREF_FREE with the refs made "
            "and object ID %p, in order, on the calling thread", label, (void *)id);
    c_check(c_pi->jobject2jobjectID(o) == id, "%s: the object kept its ID", label);
    /* The layer's own references (it finds objects by ID through weak ones,
     * once asked often enough) are none of the agent's business. */
    nrec = 0;
    recording = 1;
    int found = 0;
    for (int i = 0; i < 64; i++) {
        jobject back = c_pi->jobjectID2jobject(id);
        found += back != NULL && (*env)->IsSameObject(env, back, o);
        if (back != NULL)
            (*env)->DeleteLocalRef(env, back);
    }
    recording = 0;
    c_check(found == 64 && nrec == 0, "%s: 64 jobjectID2jobject found the object, with no JNI reference event (%d)",
            label, nrec);
    pthread_mutex_lock(&lk);
    n_rounds++;
    pthread_mutex_unlock(&lk);
    (*env)->ReleaseStringUTFChars(env, jlabel, label);
}
