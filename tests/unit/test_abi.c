/*
 * test_abi.c - the binary interface of jvmpi/jvmpi.h, checked against
 * Sun's jvmpi.h of JDK 5.0 (x86_64, LP64).
 *
 * Legacy agents were compiled against Sun's header long ago, so the only thing
 * that matters is that our numbers and layouts are the ones baked into those
 * binaries.  Every expected value below is therefore typed in as a literal
 * from Sun's header rather than derived from our jvmpi.h: deriving it would
 * make the test agree with whatever our header says.
 *
 * Each table row is its own Check loop iteration, so one run reports every
 * discrepancy by name instead of stopping at the first.
 */
#include <stddef.h>
#include <stdlib.h>

#include <check.h>

#include <jvmpi.h>

/* ------------------------------------------------------------------------ */
/* platform: the expected offsets only hold under these assumptions         */
/* ------------------------------------------------------------------------ */

START_TEST(test_platform_is_lp64)
{
    ck_assert_msg(sizeof(void *) == 8 && sizeof(long) == 8,
                  "the expected layouts are for LP64; this build has %zu-byte pointers, %zu-byte longs",
                  sizeof(void *), sizeof(long));
    ck_assert_uint_eq(sizeof(jint), 4);
    ck_assert_uint_eq(sizeof(jlong), 8);
    ck_assert_uint_eq(sizeof(jboolean), 1);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* constants                                                                 */
/* ------------------------------------------------------------------------ */

struct constant_fact {
    const char *name;
    long long actual;
    long long expected;
};

#define CONSTANT(name, expected) { #name, (long long)(name), (expected) }

static const struct constant_fact constants[] = {
    /* versions and return codes */
    CONSTANT(JVMPI_VERSION_1, 0x10000001),
    CONSTANT(JVMPI_VERSION_1_1, 0x10000002),
    CONSTANT(JVMPI_VERSION_1_2, 0x10000003),
    CONSTANT(JVMPI_SUCCESS, 0),
    CONSTANT(JVMPI_NOT_AVAILABLE, 1),
    CONSTANT(JVMPI_FAIL, -1),
    CONSTANT(JVMPI_REQUESTED_EVENT, 0x10000000),

    /* event types */
    CONSTANT(JVMPI_EVENT_METHOD_ENTRY, 1),
    CONSTANT(JVMPI_EVENT_METHOD_ENTRY2, 2),
    CONSTANT(JVMPI_EVENT_METHOD_EXIT, 3),
    CONSTANT(JVMPI_EVENT_OBJECT_ALLOC, 4),
    CONSTANT(JVMPI_EVENT_OBJECT_FREE, 5),
    CONSTANT(JVMPI_EVENT_OBJECT_MOVE, 6),
    CONSTANT(JVMPI_EVENT_COMPILED_METHOD_LOAD, 7),
    CONSTANT(JVMPI_EVENT_COMPILED_METHOD_UNLOAD, 8),
    CONSTANT(JVMPI_EVENT_INSTRUCTION_START, 9),
    CONSTANT(JVMPI_EVENT_THREAD_START, 33),
    CONSTANT(JVMPI_EVENT_THREAD_END, 34),
    CONSTANT(JVMPI_EVENT_CLASS_LOAD_HOOK, 35),
    CONSTANT(JVMPI_EVENT_HEAP_DUMP, 37),
    CONSTANT(JVMPI_EVENT_JNI_GLOBALREF_ALLOC, 38),
    CONSTANT(JVMPI_EVENT_JNI_GLOBALREF_FREE, 39),
    CONSTANT(JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC, 40),
    CONSTANT(JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE, 41),
    CONSTANT(JVMPI_EVENT_CLASS_LOAD, 42),
    CONSTANT(JVMPI_EVENT_CLASS_UNLOAD, 43),
    CONSTANT(JVMPI_EVENT_DATA_DUMP_REQUEST, 44),
    CONSTANT(JVMPI_EVENT_DATA_RESET_REQUEST, 45),
    CONSTANT(JVMPI_EVENT_JVM_INIT_DONE, 46),
    CONSTANT(JVMPI_EVENT_JVM_SHUT_DOWN, 47),
    CONSTANT(JVMPI_EVENT_ARENA_NEW, 48),
    CONSTANT(JVMPI_EVENT_ARENA_DELETE, 49),
    CONSTANT(JVMPI_EVENT_OBJECT_DUMP, 50),
    CONSTANT(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, 51),
    CONSTANT(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED, 52),
    CONSTANT(JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, 53),
    CONSTANT(JVMPI_EVENT_MONITOR_CONTENDED_ENTER, 54),
    CONSTANT(JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, 55),
    CONSTANT(JVMPI_EVENT_MONITOR_CONTENDED_EXIT, 56),
    CONSTANT(JVMPI_EVENT_MONITOR_WAIT, 57),
    CONSTANT(JVMPI_EVENT_MONITOR_WAITED, 58),
    CONSTANT(JVMPI_EVENT_MONITOR_DUMP, 59),
    CONSTANT(JVMPI_EVENT_GC_START, 60),
    CONSTANT(JVMPI_EVENT_GC_FINISH, 61),
    CONSTANT(JVMPI_MAX_EVENT_TYPE_VAL, 61),

    /* old names: agents built against early headers still use them */
    CONSTANT(JVMPI_EVENT_OBJ_ALLOC, 4),
    CONSTANT(JVMPI_EVENT_OBJ_FREE, 5),
    CONSTANT(JVMPI_EVENT_OBJ_MOVE, 6),
    CONSTANT(JVMPI_EVENT_LOAD_COMPILED_METHOD, 7),
    CONSTANT(JVMPI_EVENT_UNLOAD_COMPILED_METHOD, 8),
    CONSTANT(JVMPI_EVENT_DUMP_DATA_REQUEST, 44),
    CONSTANT(JVMPI_EVENT_RESET_DATA_REQUEST, 45),
    CONSTANT(JVMPI_EVENT_NEW_ARENA, 48),
    CONSTANT(JVMPI_EVENT_DELETE_ARENA, 49),

    /* thread status and the bits or-ed into it */
    CONSTANT(JVMPI_THREAD_RUNNABLE, 1),
    CONSTANT(JVMPI_THREAD_MONITOR_WAIT, 2),
    CONSTANT(JVMPI_THREAD_CONDVAR_WAIT, 3),
    CONSTANT(JVMPI_THREAD_SUSPENDED, 0x8000),
    CONSTANT(JVMPI_THREAD_INTERRUPTED, 0x4000),

    /* priorities */
    CONSTANT(JVMPI_MINIMUM_PRIORITY, 1),
    CONSTANT(JVMPI_NORMAL_PRIORITY, 5),
    CONSTANT(JVMPI_MAXIMUM_PRIORITY, 10),

    /* object / element types */
    CONSTANT(JVMPI_NORMAL_OBJECT, 0),
    CONSTANT(JVMPI_CLASS, 2),
    CONSTANT(JVMPI_BOOLEAN, 4),
    CONSTANT(JVMPI_CHAR, 5),
    CONSTANT(JVMPI_FLOAT, 6),
    CONSTANT(JVMPI_DOUBLE, 7),
    CONSTANT(JVMPI_BYTE, 8),
    CONSTANT(JVMPI_SHORT, 9),
    CONSTANT(JVMPI_INT, 10),
    CONSTANT(JVMPI_LONG, 11),

    /* monitor dump kinds */
    CONSTANT(JVMPI_MONITOR_JAVA, 0x01),
    CONSTANT(JVMPI_MONITOR_RAW, 0x02),

    /* heap dump root records */
    CONSTANT(JVMPI_GC_ROOT_UNKNOWN, 0xff),
    CONSTANT(JVMPI_GC_ROOT_JNI_GLOBAL, 0x01),
    CONSTANT(JVMPI_GC_ROOT_JNI_LOCAL, 0x02),
    CONSTANT(JVMPI_GC_ROOT_JAVA_FRAME, 0x03),
    CONSTANT(JVMPI_GC_ROOT_NATIVE_STACK, 0x04),
    CONSTANT(JVMPI_GC_ROOT_STICKY_CLASS, 0x05),
    CONSTANT(JVMPI_GC_ROOT_THREAD_BLOCK, 0x06),
    CONSTANT(JVMPI_GC_ROOT_MONITOR_USED, 0x07),
    CONSTANT(JVMPI_GC_ROOT_THREAD_OBJ, 0x08),

    /* heap dump object records */
    CONSTANT(JVMPI_GC_CLASS_DUMP, 0x20),
    CONSTANT(JVMPI_GC_INSTANCE_DUMP, 0x21),
    CONSTANT(JVMPI_GC_OBJ_ARRAY_DUMP, 0x22),
    CONSTANT(JVMPI_GC_PRIM_ARRAY_DUMP, 0x23),

    /* dump levels */
    CONSTANT(JVMPI_DUMP_LEVEL_0, 0),
    CONSTANT(JVMPI_DUMP_LEVEL_1, 1),
    CONSTANT(JVMPI_DUMP_LEVEL_2, 2),
};

#define COUNT(table) ((int)(sizeof(table) / sizeof((table)[0])))

START_TEST(test_constant)
{
    const struct constant_fact *c = &constants[_i];

    ck_assert_msg(c->actual == c->expected, "%s is %lld (0x%llx), Sun's jvmpi.h says %lld (0x%llx)",
                  c->name, c->actual, c->actual, c->expected, c->expected);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* sizes                                                                     */
/* ------------------------------------------------------------------------ */

struct size_fact {
    const char *what;
    size_t actual;
    size_t expected;
};

#define SIZE_OF(type, expected) { "sizeof(" #type ")", sizeof(type), (expected) }

static const struct size_fact sizes[] = {
    SIZE_OF(JVMPI_CallFrame, 16),
    SIZE_OF(JVMPI_CallTrace, 24),
    SIZE_OF(JVMPI_Method, 32),
    SIZE_OF(JVMPI_Field, 16),
    SIZE_OF(JVMPI_Lineno, 8),
    SIZE_OF(JVMPI_HeapDumpArg, 4),
    SIZE_OF(JVMPI_Event, 88),
    SIZE_OF(JVMPI_Interface, 240),
    SIZE_OF(jobjectID, 8),
    SIZE_OF(JVMPI_RawMonitor, 8),
    SIZE_OF(jvmpi_void_function_of_void, 8),
    /*
     * The tables older headers declared ended where the newer functions
     * start; an agent built against them reads nothing beyond.
     */
    { "JVMPI_Interface as of VERSION_1 (offsetof jobjectID2jobject)",
      offsetof(JVMPI_Interface, jobjectID2jobject), 208 },
    { "JVMPI_Interface as of VERSION_1_1 (offsetof SuspendThreadList)",
      offsetof(JVMPI_Interface, SuspendThreadList), 224 },
};

START_TEST(test_size)
{
    const struct size_fact *s = &sizes[_i];

    ck_assert_msg(s->actual == s->expected, "%s is %zu, Sun's jvmpi.h says %zu",
                  s->what, s->actual, s->expected);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* field offsets, sizes and types                                            */
/* ------------------------------------------------------------------------ */

struct field_fact {
    const char *name;
    size_t offset, expected_offset;
    size_t size, expected_size;
    int type_matches;   /* 1 when the member has exactly the type in Sun's jvmpi.h */
    const char *type;   /* NULL: member of an unnamed type, only placed and sized */
};

/*
 * The type goes last, as variadic arguments, because function-pointer types
 * contain commas.  _Generic picks the first branch only for a compatible type,
 * so a jint that became an unsigned int, or a char * that became a
 * const char *, is reported even where size and offset still agree.
 */
#define FIELD(T, member, off, sz, ...)                                          \
    { #T "." #member, offsetof(T, member), (off), sizeof(((T *)0)->member), (sz), \
      _Generic(((T *)0)->member, __VA_ARGS__: 1, default: 0), #__VA_ARGS__ }

#define UNTYPED_FIELD(T, member, off, sz)                                       \
    { #T "." #member, offsetof(T, member), (off), sizeof(((T *)0)->member), (sz), 1, NULL }

#define EVENT(member, off, sz, ...) FIELD(JVMPI_Event, member, off, sz, __VA_ARGS__)
#define FUNCTION(member, off, ...)  FIELD(JVMPI_Interface, member, off, 8, __VA_ARGS__)

static const struct field_fact data_fields[] = {
    FIELD(JVMPI_CallFrame, lineno, 0, 4, jint),
    FIELD(JVMPI_CallFrame, method_id, 8, 8, jmethodID),

    FIELD(JVMPI_CallTrace, env_id, 0, 8, JNIEnv *),
    FIELD(JVMPI_CallTrace, num_frames, 8, 4, jint),
    FIELD(JVMPI_CallTrace, frames, 16, 8, JVMPI_CallFrame *),

    FIELD(JVMPI_Method, method_name, 0, 8, char *),
    FIELD(JVMPI_Method, method_signature, 8, 8, char *),
    FIELD(JVMPI_Method, start_lineno, 16, 4, jint),
    FIELD(JVMPI_Method, end_lineno, 20, 4, jint),
    FIELD(JVMPI_Method, method_id, 24, 8, jmethodID),

    FIELD(JVMPI_Field, field_name, 0, 8, char *),
    FIELD(JVMPI_Field, field_signature, 8, 8, char *),

    FIELD(JVMPI_Lineno, offset, 0, 4, jint),
    FIELD(JVMPI_Lineno, lineno, 4, 4, jint),

    FIELD(JVMPI_HeapDumpArg, heap_dump_level, 0, 4, jint),
};

/* Offsets are from the start of JVMPI_Event. */
static const struct field_fact event_fields[] = {
    EVENT(event_type, 0, 4, jint),
    EVENT(env_id, 8, 8, JNIEnv *),
    UNTYPED_FIELD(JVMPI_Event, u, 16, 72),

    EVENT(u.class_load.class_name, 16, 8, char *),
    EVENT(u.class_load.source_name, 24, 8, char *),
    EVENT(u.class_load.num_interfaces, 32, 4, jint),
    EVENT(u.class_load.num_methods, 36, 4, jint),
    EVENT(u.class_load.methods, 40, 8, JVMPI_Method *),
    EVENT(u.class_load.num_static_fields, 48, 4, jint),
    EVENT(u.class_load.statics, 56, 8, JVMPI_Field *),
    EVENT(u.class_load.num_instance_fields, 64, 4, jint),
    EVENT(u.class_load.instances, 72, 8, JVMPI_Field *),
    EVENT(u.class_load.class_id, 80, 8, jobjectID),

    EVENT(u.class_unload.class_id, 16, 8, jobjectID),

    EVENT(u.class_load_hook.class_data, 16, 8, unsigned char *),
    EVENT(u.class_load_hook.class_data_len, 24, 4, jint),
    EVENT(u.class_load_hook.new_class_data, 32, 8, unsigned char *),
    EVENT(u.class_load_hook.new_class_data_len, 40, 4, jint),
    EVENT(u.class_load_hook.malloc_f, 48, 8, void *(*)(unsigned int)),

    EVENT(u.obj_alloc.arena_id, 16, 4, jint),
    EVENT(u.obj_alloc.class_id, 24, 8, jobjectID),
    EVENT(u.obj_alloc.is_array, 32, 4, jint),
    EVENT(u.obj_alloc.size, 36, 4, jint),
    EVENT(u.obj_alloc.obj_id, 40, 8, jobjectID),

    EVENT(u.obj_free.obj_id, 16, 8, jobjectID),

    EVENT(u.obj_move.arena_id, 16, 4, jint),
    EVENT(u.obj_move.obj_id, 24, 8, jobjectID),
    EVENT(u.obj_move.new_arena_id, 32, 4, jint),
    EVENT(u.obj_move.new_obj_id, 40, 8, jobjectID),

    EVENT(u.new_arena.arena_id, 16, 4, jint),
    EVENT(u.new_arena.arena_name, 24, 8, char *),

    EVENT(u.delete_arena.arena_id, 16, 4, jint),

    EVENT(u.thread_start.thread_name, 16, 8, char *),
    EVENT(u.thread_start.group_name, 24, 8, char *),
    EVENT(u.thread_start.parent_name, 32, 8, char *),
    EVENT(u.thread_start.thread_id, 40, 8, jobjectID),
    EVENT(u.thread_start.thread_env_id, 48, 8, JNIEnv *),

    EVENT(u.heap_dump.dump_level, 16, 4, int),
    EVENT(u.heap_dump.begin, 24, 8, char *),
    EVENT(u.heap_dump.end, 32, 8, char *),
    EVENT(u.heap_dump.num_traces, 40, 4, jint),
    EVENT(u.heap_dump.traces, 48, 8, JVMPI_CallTrace *),

    EVENT(u.jni_globalref_alloc.obj_id, 16, 8, jobjectID),
    EVENT(u.jni_globalref_alloc.ref_id, 24, 8, jobject),

    EVENT(u.jni_globalref_free.ref_id, 16, 8, jobject),

    EVENT(u.method.method_id, 16, 8, jmethodID),

    EVENT(u.method_entry2.method_id, 16, 8, jmethodID),
    EVENT(u.method_entry2.obj_id, 24, 8, jobjectID),

    EVENT(u.compiled_method_load.method_id, 16, 8, jmethodID),
    EVENT(u.compiled_method_load.code_addr, 24, 8, void *),
    EVENT(u.compiled_method_load.code_size, 32, 4, jint),
    EVENT(u.compiled_method_load.lineno_table_size, 36, 4, jint),
    EVENT(u.compiled_method_load.lineno_table, 40, 8, JVMPI_Lineno *),

    EVENT(u.compiled_method_unload.method_id, 16, 8, jmethodID),

    EVENT(u.instruction.method_id, 16, 8, jmethodID),
    EVENT(u.instruction.offset, 24, 4, jint),
    /* the inner union is as large as its largest view, tableswitch_info's three jints */
    UNTYPED_FIELD(JVMPI_Event, u.instruction.u, 28, 12),
    EVENT(u.instruction.u.if_info.is_true, 28, 1, jboolean),
    EVENT(u.instruction.u.tableswitch_info.key, 28, 4, jint),
    EVENT(u.instruction.u.tableswitch_info.low, 32, 4, jint),
    EVENT(u.instruction.u.tableswitch_info.hi, 36, 4, jint),
    EVENT(u.instruction.u.lookupswitch_info.chosen_pair_index, 28, 4, jint),
    /* Sun's headers, not the spec's "jboolean is_default": binaries follow the header */
    EVENT(u.instruction.u.lookupswitch_info.pairs_total, 32, 4, jint),

    EVENT(u.monitor_dump.begin, 16, 8, char *),
    EVENT(u.monitor_dump.end, 24, 8, char *),
    EVENT(u.monitor_dump.num_traces, 32, 4, jint),
    EVENT(u.monitor_dump.traces, 40, 8, JVMPI_CallTrace *),
    EVENT(u.monitor_dump.threads_status, 48, 8, jint *),

    EVENT(u.raw_monitor.name, 16, 8, char *),
    EVENT(u.raw_monitor.id, 24, 8, JVMPI_RawMonitor),

    EVENT(u.monitor.object, 16, 8, jobjectID),

    EVENT(u.monitor_wait.object, 16, 8, jobjectID),
    EVENT(u.monitor_wait.timeout, 24, 8, jlong),

    EVENT(u.gc_info.used_objects, 16, 8, jlong),
    EVENT(u.gc_info.used_object_space, 24, 8, jlong),
    EVENT(u.gc_info.total_object_space, 32, 8, jlong),

    /* overlays heap_dump.dump_level / heap_dump.begin: the layer fills both views */
    EVENT(u.object_dump.data_len, 16, 4, jint),
    EVENT(u.object_dump.data, 24, 8, char *),
};

static const struct field_fact interface_fields[] = {
    FIELD(JVMPI_Interface, version, 0, 4, jint),
    FUNCTION(NotifyEvent, 8, void (*)(JVMPI_Event *)),
    FUNCTION(EnableEvent, 16, jint (*)(jint, void *)),
    FUNCTION(DisableEvent, 24, jint (*)(jint, void *)),
    FUNCTION(RequestEvent, 32, jint (*)(jint, void *)),
    FUNCTION(GetCallTrace, 40, void (*)(JVMPI_CallTrace *, jint)),
    FUNCTION(ProfilerExit, 48, void (*)(jint)),
    FUNCTION(RawMonitorCreate, 56, JVMPI_RawMonitor (*)(char *)),
    FUNCTION(RawMonitorEnter, 64, void (*)(JVMPI_RawMonitor)),
    FUNCTION(RawMonitorExit, 72, void (*)(JVMPI_RawMonitor)),
    FUNCTION(RawMonitorWait, 80, void (*)(JVMPI_RawMonitor, jlong)),
    FUNCTION(RawMonitorNotifyAll, 88, void (*)(JVMPI_RawMonitor)),
    FUNCTION(RawMonitorDestroy, 96, void (*)(JVMPI_RawMonitor)),
    FUNCTION(GetCurrentThreadCpuTime, 104, jlong (*)(void)),
    FUNCTION(SuspendThread, 112, void (*)(JNIEnv *)),
    FUNCTION(ResumeThread, 120, void (*)(JNIEnv *)),
    FUNCTION(GetThreadStatus, 128, jint (*)(JNIEnv *)),
    FUNCTION(ThreadHasRun, 136, jboolean (*)(JNIEnv *)),
    FUNCTION(CreateSystemThread, 144, jint (*)(char *, jint, void (*)(void *))),
    FUNCTION(SetThreadLocalStorage, 152, void (*)(JNIEnv *, void *)),
    FUNCTION(GetThreadLocalStorage, 160, void *(*)(JNIEnv *)),
    FUNCTION(DisableGC, 168, void (*)(void)),
    FUNCTION(EnableGC, 176, void (*)(void)),
    FUNCTION(RunGC, 184, void (*)(void)),
    FUNCTION(GetThreadObject, 192, jobjectID (*)(JNIEnv *)),
    FUNCTION(GetMethodClass, 200, jobjectID (*)(jmethodID)),
    FUNCTION(jobjectID2jobject, 208, jobject (*)(jobjectID)),
    FUNCTION(jobject2jobjectID, 216, jobjectID (*)(jobject)),
    FUNCTION(SuspendThreadList, 224, void (*)(jint, JNIEnv **, jint *)),
    FUNCTION(ResumeThreadList, 232, void (*)(jint, JNIEnv **, jint *)),
};

static void check_field(const struct field_fact *f)
{
    ck_assert_msg(f->offset == f->expected_offset, "%s is at offset %zu, Sun's jvmpi.h says %zu",
                  f->name, f->offset, f->expected_offset);
    ck_assert_msg(f->size == f->expected_size, "%s is %zu bytes, Sun's jvmpi.h says %zu",
                  f->name, f->size, f->expected_size);
    ck_assert_msg(f->type_matches, "%s does not have the type Sun's jvmpi.h gives: %s",
                  f->name, f->type ? f->type : "?");
}

START_TEST(test_data_field)
{
    check_field(&data_fields[_i]);
}
END_TEST

START_TEST(test_event_field)
{
    check_field(&event_fields[_i]);
}
END_TEST

START_TEST(test_interface_field)
{
    check_field(&interface_fields[_i]);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* typedefs                                                                  */
/* ------------------------------------------------------------------------ */

START_TEST(test_typedefs)
{
    /* pointers to distinct opaque structs, so agents cannot mix IDs up silently */
    ck_assert_msg(_Generic((jobjectID)0, struct _jobjectID *: 1, default: 0),
                  "jobjectID is not struct _jobjectID *");
    ck_assert_msg(_Generic((JVMPI_RawMonitor)0, struct _JVMPI_RawMonitor *: 1, default: 0),
                  "JVMPI_RawMonitor is not struct _JVMPI_RawMonitor *");
    ck_assert_msg(_Generic((jvmpi_void_function_of_void)0, void (*)(void *): 1, default: 0),
                  "jvmpi_void_function_of_void is not void (*)(void *)");
}
END_TEST

/* ------------------------------------------------------------------------ */

static Suite *abi_suite(void)
{
    Suite *s = suite_create("jvmpi_abi");
    TCase *tc;

    tc = tcase_create("platform");
    tcase_add_test(tc, test_platform_is_lp64);
    suite_add_tcase(s, tc);

    tc = tcase_create("constants");
    tcase_add_loop_test(tc, test_constant, 0, COUNT(constants));
    suite_add_tcase(s, tc);

    tc = tcase_create("sizes");
    tcase_add_loop_test(tc, test_size, 0, COUNT(sizes));
    suite_add_tcase(s, tc);

    tc = tcase_create("data_structs");
    tcase_add_loop_test(tc, test_data_field, 0, COUNT(data_fields));
    suite_add_tcase(s, tc);

    tc = tcase_create("event");
    tcase_add_loop_test(tc, test_event_field, 0, COUNT(event_fields));
    suite_add_tcase(s, tc);

    tc = tcase_create("interface");
    tcase_add_loop_test(tc, test_interface_field, 0, COUNT(interface_fields));
    suite_add_tcase(s, tc);

    tc = tcase_create("typedefs");
    tcase_add_test(tc, test_typedefs);
    suite_add_tcase(s, tc);

    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(abi_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
