/*
 * vthreads.c - virtual threads (JDK 21 and later) as JVMPI threads.
 *
 * JVMPI names a thread by its JNIEnv *, but a virtual thread runs on
 * whichever carrier thread picks it up, under the carrier's JNIEnv *.  The
 * JVMPI side gives each virtual thread a handle of its own (its record's
 * address, as for threads whose JNIEnv * the layer never learnt) and makes
 * it the carrier's identity while the carrier runs it.  JVM TI says when:
 * VirtualThreadStart and VirtualThreadEnd come on the virtual thread, and
 * HotSpot's extension events VirtualThreadMount and VirtualThreadUnmount
 * each time it moves on or off a carrier.  The record rides in the virtual
 * thread's JVM TI thread-local storage, so a mount finds it without a
 * lookup.
 *
 * Tracking starts when the agent first enables an event of a thread (the
 * SEAM_SRC_VTHREADS source) and then stays on: a carrier may be running a
 * virtual thread at any moment, and only its unmount event can give the
 * carrier its own identity back.  A virtual thread that started before
 * that gets its record, and its THREAD_START, at its next mount.
 */
#include <stdlib.h>
#include <string.h>

#include "backend.h"

#define EVENT_VIRTUAL_THREAD_START 87
#define EVENT_VIRTUAL_THREAD_END 88

static const char mount_id[] = "com.sun.hotspot.events.VirtualThreadMount";
static const char unmount_id[] = "com.sun.hotspot.events.VirtualThreadUnmount";

static bool supported;       /* the capability was taken: the VM has virtual threads */
static jint mount_index = -1, unmount_index = -1;
static _Atomic bool tracking;

/* can_support_virtual_threads is the bit after
 * can_generate_sampled_object_alloc_events (JVM TI 21); headers of older
 * JDKs leave it unnamed, so it is found from its neighbour.  Bit-fields are
 * laid out from the low bit up on the ABIs the layer builds for. */
static void set_virtual_threads_bit(jvmtiCapabilities *caps, bool on)
{
    jvmtiCapabilities probe;
    memset(&probe, 0, sizeof probe);
    probe.can_generate_sampled_object_alloc_events = 1;
    const unsigned char *p = (const unsigned char *)&probe;
    unsigned char *c = (unsigned char *)caps;
    for (size_t i = 0; i < sizeof probe; i++) {
        for (int b = 0; b < 8; b++) {
            if (p[i] & (1u << b)) {
                size_t bit = i * 8 + (size_t)b + 1;
                if (on) {
                    c[bit / 8] |= (unsigned char)(1u << (bit % 8));
                } else {
                    c[bit / 8] &= (unsigned char)~(1u << (bit % 8));
                }
                return;
            }
        }
    }
}

static bool has_virtual_threads_bit(const jvmtiCapabilities *caps)
{
    jvmtiCapabilities only;
    memset(&only, 0, sizeof only);
    set_virtual_threads_bit(&only, true);
    const unsigned char *a = (const unsigned char *)caps, *m = (const unsigned char *)&only;
    for (size_t i = 0; i < sizeof only; i++) {
        if (a[i] & m[i]) {
            return true;
        }
    }
    return false;
}

bool bk_vthreads_capability_in(const jvmtiCapabilities *caps) { return has_virtual_threads_bit(caps); }

static void find_mount_events(void)
{
    jint n = 0;
    jvmtiExtensionEventInfo *events = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetExtensionEvents, &n, &events))) {
        return;
    }
    for (jint i = 0; i < n; i++) {
        if (strcmp(events[i].id, mount_id) == 0) {
            mount_index = events[i].extension_event_index;
        } else if (strcmp(events[i].id, unmount_id) == 0) {
            unmount_index = events[i].extension_event_index;
        }
        for (jint k = 0; k < events[i].param_count; k++) {
            bk_deallocate(events[i].params[k].name);
        }
        bk_deallocate(events[i].params);
        bk_deallocate(events[i].id);
        bk_deallocate(events[i].short_description);
    }
    bk_deallocate(events);
}

void bk_vthreads_onload(void)
{
    if (layer_vthreads_as_carriers()) {
        LOG_DEBUG("virtual threads: presented as their carriers (vthreads=carriers)");
        return;
    }
    jvmtiCapabilities potential;
    memset(&potential, 0, sizeof potential);
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetPotentialCapabilities, &potential)) ||
        !has_virtual_threads_bit(&potential)) {
        return; /* a VM without virtual threads: nothing to tell apart */
    }
    find_mount_events();
    if (mount_index < 0 || unmount_index < 0) {
        LOG_WARN("virtual threads: this VM has no %s events; virtual threads are shown as their carriers",
                 mount_index < 0 ? mount_id : unmount_id);
        return;
    }
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    set_virtual_threads_bit(&caps, true);
    supported = bk_need_capabilities(&caps);
}

/* ---- the events ------------------------------------------------------------------ */

/* The mounted virtual thread's record.  Every event here comes on the
 * virtual thread itself, and JVM TI serves the current thread's storage
 * without the lock it takes to find another thread's. */
static void *current_record(void)
{
    void *rec = NULL;
    if (!JVMTI_OK(JVMTI_TRY(bk.jvmti, GetThreadLocalStorage, NULL, &rec))) {
        return NULL;
    }
    return rec;
}

/* Records the mounted virtual thread, which mounts it; NULL on failure. */
static void *start(JNIEnv *env, jthread vthread)
{
    seam_thread_info info;
    if (!bk_thread_info(env, NULL, vthread, &info)) {
        return NULL;
    }
    info.is_virtual = true;
    void *rec = layer_vthread_started(&info);
    if (rec != NULL && !JVMTI_OK(JVMTI_CALL(bk.jvmti, SetThreadLocalStorage, NULL, rec))) {
        layer_vthread_ended(rec);
        rec = NULL;
    }
    return rec;
}

/* The virtual thread is on this carrier now: its record mounted, or made
 * (which mounts it) if it has none yet, because it started before tracking
 * did or because its mount event came before its start. */
static void mount_or_start(JNIEnv *env, jthread vthread)
{
    void *rec = current_record();
    if (rec != NULL) {
        layer_vthread_mount(rec);
    } else {
        start(env, vthread);
    }
}

static void JNICALL on_vthread_start(jvmtiEnv *jvmti, JNIEnv *env, jthread vthread)
{
    BEGIN_CALLBACK();
    mount_or_start(env, vthread);
    END_CALLBACK();
}

static void JNICALL on_vthread_end(jvmtiEnv *jvmti, JNIEnv *env, jthread vthread)
{
    BEGIN_CALLBACK();
    void *rec = current_record();
    if (rec != NULL) {
        JVMTI_CALL(bk.jvmti, SetThreadLocalStorage, NULL, NULL);
        layer_vthread_ended(rec);
    }
    END_CALLBACK();
}

static void JNICALL on_mount(jvmtiEnv *jvmti, JNIEnv *env, jthread vthread)
{
    BEGIN_CALLBACK();
    mount_or_start(env, vthread);
    END_CALLBACK();
}

static void JNICALL on_unmount(jvmtiEnv *jvmti, JNIEnv *env, jthread vthread)
{
    BEGIN_CALLBACK();
    layer_vthread_unmount();
    END_CALLBACK();
}

void bk_vthreads_callbacks(bk_callback_slots *all)
{
    all->slot[EVENT_VIRTUAL_THREAD_START - JVMTI_MIN_EVENT_TYPE_VAL] = (bk_any_callback)on_vthread_start;
    all->slot[EVENT_VIRTUAL_THREAD_END - JVMTI_MIN_EVENT_TYPE_VAL] = (bk_any_callback)on_vthread_end;
}

/* HotSpot posts an extension event once it has a callback and is enabled
 * like any event, under its index. */
static bool enable_extension_event(jint index)
{
    return JVMTI_OK(JVMTI_CALL(bk.jvmti, SetEventNotificationMode, JVMTI_ENABLE, (jvmtiEvent)index, NULL));
}

bool bk_vthreads_source_set(bool on)
{
    if (!on || !supported || atomic_exchange(&tracking, true)) {
        return true; /* once on, it stays on (see the top) */
    }
    bool ok = JVMTI_OK(JVMTI_CALL(bk.jvmti, SetExtensionEventCallback, mount_index, (jvmtiExtensionEvent)on_mount)) &&
              JVMTI_OK(JVMTI_CALL(bk.jvmti, SetExtensionEventCallback, unmount_index,
                                  (jvmtiExtensionEvent)on_unmount)) &&
              enable_extension_event(mount_index) && enable_extension_event(unmount_index) &&
              bk_set_event(bk.jvmti, (jvmtiEvent)EVENT_VIRTUAL_THREAD_START, true) &&
              bk_set_event(bk.jvmti, (jvmtiEvent)EVENT_VIRTUAL_THREAD_END, true);
    if (ok) {
        LOG_DEBUG("virtual threads: tracked from now on");
    }
    return ok;
}
