/*
 * a_classload - CLASS_LOAD as a JDK 5.0 agent saw it.
 *
 * Options: out=FILE.  Writes
 *   NAME <class>                         for every CLASS_LOAD
 *   VIEW <class> SOURCE|INTERFACES|METHOD|STATIC|INSTANCE ...
 *                                        for the classes of A_ClassShapes.java,
 *                                        in the format A_ClassShapes prints
 *                                        from reflection
 *   LINES <class> <name> <sig> <start> <end>
 *   DONE ...                             at JVM_SHUT_DOWN
 * and checks by itself: dotted names, non-NULL unique class IDs, non-NULL
 * unique method IDs within a class, complete field/method entries, zeroed
 * padding, and that each event arrives on the thread named by env_id.
 */
#include "a_common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static a_idmap class_ids;
static int n_classes;

static int interesting(const char *name)
{
    return strncmp(name, "A_Shape", 7) == 0 || strncmp(name, "A_ClassShapes", 13) == 0;
}

static void check_fields(const char *cname, const char *kind, jint n, const JVMPI_Field *f, int show)
{
    if (n < 0) {
        a_fail("%s: %s count %d", cname, kind, (int)n);
        return;
    }
    if (n > 0 && !f) {
        a_fail("%s: %d %s fields but NULL array", cname, (int)n, kind);
        return;
    }
    for (jint i = 0; i < n; i++) {
        if (!f[i].field_name || !f[i].field_signature)
            a_fail("%s: %s field %d has name %s signature %s", cname, kind, (int)i,
                   a_str(f[i].field_name), a_str(f[i].field_signature));
        if (show)
            a_rec("VIEW %s %s %s %s", cname, kind, a_str(f[i].field_name), a_str(f[i].field_signature));
    }
}

static void on_class_load(JVMPI_Event *ev)
{
    const char *name = ev->u.class_load.class_name;
    if (!name) {
        a_fail("CLASS_LOAD with NULL class_name (class_id %p)", (void *)ev->u.class_load.class_id);
        return;
    }
    a_rec("NAME %s", name);

    /* Dotted external names: java.lang.String, never java/lang/String or
     * the JNI form Ljava/lang/String;.  Hidden classes come as N.suffix
     * from JVM TI, so they need no '/' either. */
    if (strchr(name, '/'))
        a_fail("class name with '/': %s", name);
    if (name[0] != '[' && name[strlen(name) - 1] == ';')
        a_fail("class name in signature form: %s", name);

    if (ev->env_id != a_current_env())
        a_fail("CLASS_LOAD %s: env_id %p is not the calling thread's JNIEnv %p", name,
               (void *)ev->env_id, (void *)a_current_env());

    a_check_unused_zero(ev, A_USED_END(class_load), "CLASS_LOAD");
    a_check_zero_range(ev, offsetof(JVMPI_Event, u.class_load.num_static_fields) + sizeof(jint),
                       offsetof(JVMPI_Event, u.class_load.statics), "CLASS_LOAD padding");
    a_check_zero_range(ev, offsetof(JVMPI_Event, u.class_load.num_instance_fields) + sizeof(jint),
                       offsetof(JVMPI_Event, u.class_load.instances), "CLASS_LOAD padding");

    jobjectID id = ev->u.class_load.class_id;
    if (!id) {
        a_fail("CLASS_LOAD %s: NULL class_id", name);
    } else {
        int existed;
        pthread_mutex_lock(&lock);
        a_slot *s = a_idmap_put(&class_ids, id, name, &existed);
        char *prev = existed ? strdup(s->name) : NULL;
        n_classes++;
        pthread_mutex_unlock(&lock);
        if (prev) {
            a_fail("class_id %p given to %s and again to %s", (void *)id, prev, name);
            free(prev);
        }
    }

    int show = interesting(name);
    if (ev->u.class_load.num_interfaces < 0)
        a_fail("%s: num_interfaces %d", name, (int)ev->u.class_load.num_interfaces);
    if (show) {
        a_rec("VIEW %s SOURCE %s", name, a_str(ev->u.class_load.source_name));
        a_rec("VIEW %s INTERFACES %d", name, (int)ev->u.class_load.num_interfaces);
    }

    jint nm = ev->u.class_load.num_methods;
    JVMPI_Method *m = ev->u.class_load.methods;
    if (nm < 0 || (nm > 0 && !m)) {
        a_fail("%s: num_methods %d, methods %p", name, (int)nm, (void *)m);
        nm = 0;
    }
    for (jint i = 0; i < nm; i++) {
        if (!m[i].method_name || !m[i].method_signature)
            a_fail("%s: method %d has name %s signature %s", name, (int)i,
                   a_str(m[i].method_name), a_str(m[i].method_signature));
        if (!m[i].method_id)
            a_fail("%s: method %s%s has NULL method_id", name, a_str(m[i].method_name),
                   a_str(m[i].method_signature));
        for (jint j = 0; j < i; j++) {
            if (m[i].method_id && m[j].method_id == m[i].method_id)
                a_fail("%s: methods %s%s and %s%s share method_id %p", name,
                       a_str(m[j].method_name), a_str(m[j].method_signature),
                       a_str(m[i].method_name), a_str(m[i].method_signature),
                       (void *)m[i].method_id);
        }
        /* No start <= end check: the lines are those of the first and the
         * last bytecode (as JDK 5.0 gave them), and bytecode order is not
         * source order: the last bytecode can carry an earlier line than the
         * first (java.util.KeyValueHolder.equals on JDK 17: 106 and 104). */
        if (show) {
            a_rec("VIEW %s METHOD %s %s", name, a_str(m[i].method_name), a_str(m[i].method_signature));
            a_rec("LINES %s %s %s %d %d", name, a_str(m[i].method_name), a_str(m[i].method_signature),
                  (int)m[i].start_lineno, (int)m[i].end_lineno);
        }
    }
    check_fields(name, "STATIC", ev->u.class_load.num_static_fields, ev->u.class_load.statics, show);
    check_fields(name, "INSTANCE", ev->u.class_load.num_instance_fields, ev->u.class_load.instances, show);
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        pthread_mutex_lock(&lock);
        int n = n_classes;
        pthread_mutex_unlock(&lock);
        a_rec("DONE classes=%d failures=%d", n, a_failures);
        break;
    default:
        a_fail("event type %d was never enabled", (int)ev->event_type);
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (a_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    a_jvmpi->NotifyEvent = notify;
    a_expect_enable(JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD");
    a_expect_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    a_rec("START");
    return JNI_OK;
}
