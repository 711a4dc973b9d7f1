/*
 * classinfo.c - class IDs (tags on java.lang.Class objects, set in both JVM
 * TI environments) and what a CLASS_LOAD says about a class.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "hooksclass.h"
#include "nativewrap.h"
#include "vtguard.h"

#define ACC_STATIC 0x0008

/* Held while a class is given its ID and record, so that an ID is never
 * visible before the record that answers RequestEvent(CLASS_LOAD) for it. */
static pthread_mutex_t class_lock = PTHREAD_MUTEX_INITIALIZER;

void seam_class_info_free(seam_class_info *info)
{
    if (info == NULL) {
        return;
    }
    free(info->name);
    free(info->source_name);
    for (jint i = 0; i < info->num_methods; i++) {
        free(info->methods[i].method_name);
        free(info->methods[i].method_signature);
    }
    free(info->methods);
    for (jint i = 0; i < info->num_statics; i++) {
        free(info->statics[i].field_name);
        free(info->statics[i].field_signature);
    }
    free(info->statics);
    for (jint i = 0; i < info->num_instances; i++) {
        free(info->instances[i].field_name);
        free(info->instances[i].field_signature);
    }
    free(info->instances);
    free(info);
}

/* "Ljava/lang/String;" -> "java.lang.String"; "[Ljava/lang/String;" ->
 * "[Ljava.lang.String;" (what Class.getName says, as JVMPI did). */
static char *external_name(const char *sig)
{
    size_t len = strlen(sig);
    char *name;
    if (sig[0] == 'L' && len >= 2 && sig[len - 1] == ';') {
        name = strndup(sig + 1, len - 2);
    } else {
        name = strdup(sig);
    }
    for (char *p = name; p != NULL && *p != '\0'; p++) {
        if (*p == '/') {
            *p = '.';
        }
    }
    return name;
}

/* First and last bytecode's lines; -1 when the method has no line table. */
static void method_lines(jmethodID m, jint *start, jint *end)
{
    jint n = 0;
    jvmtiLineNumberEntry *table = NULL;
    *start = *end = -1;
    if (!JVMTI_OK(JVMTI_TRY(bk.jvmti, GetLineNumberTable, m, &n, &table)) || n <= 0) {
        bk_deallocate(table);
        return;
    }
    jint lo = 0, hi = 0;
    for (jint i = 1; i < n; i++) {
        if (table[i].start_location < table[lo].start_location) {
            lo = i;
        }
        if (table[i].start_location > table[hi].start_location) {
            hi = i;
        }
    }
    *start = table[lo].line_number;
    *end = table[hi].line_number;
    bk_deallocate(table);
}

static bool fill_methods(jclass klass, seam_class_info *info)
{
    jint n = 0;
    jmethodID *methods = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassMethods, klass, &n, &methods))) {
        return false;
    }
    info->methods = calloc((size_t)n + 1, sizeof *info->methods);
    if (info->methods == NULL) {
        bk_deallocate(methods);
        return false;
    }
    for (jint i = 0; i < n; i++) {
        char *name = NULL, *sig = NULL;
        if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetMethodName, methods[i], &name, &sig, NULL))) {
            continue;
        }
        if (nativewrap_hidden_name(name)) {
            bk_deallocate(name);
            bk_deallocate(sig);
            continue; /* a native the class rewriter renamed: its wrapper has its name */
        }
        JVMPI_Method *m = &info->methods[info->num_methods++];
        m->method_name = bk_take_string(name);
        m->method_signature = bk_take_string(sig);
        m->method_id = methods[i];
        method_lines(methods[i], &m->start_lineno, &m->end_lineno);
    }
    bk_deallocate(methods);
    return true;
}

static bool fill_fields(jclass klass, seam_class_info *info)
{
    jint n = 0;
    jfieldID *fields = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassFields, klass, &n, &fields))) {
        return false;
    }
    info->statics = calloc((size_t)n + 1, sizeof *info->statics);
    info->instances = calloc((size_t)n + 1, sizeof *info->instances);
    if (info->statics == NULL || info->instances == NULL) {
        bk_deallocate(fields);
        return false;
    }
    for (jint i = 0; i < n; i++) {
        char *name = NULL, *sig = NULL;
        jint mods = 0;
        if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetFieldName, klass, fields[i], &name, &sig, NULL)) ||
            !JVMTI_OK(JVMTI_CALL(bk.jvmti, GetFieldModifiers, klass, fields[i], &mods))) {
            bk_deallocate(name);
            bk_deallocate(sig);
            continue;
        }
        JVMPI_Field *f = (mods & ACC_STATIC) ? &info->statics[info->num_statics++]
                                             : &info->instances[info->num_instances++];
        f->field_name = bk_take_string(name);
        f->field_signature = bk_take_string(sig);
    }
    bk_deallocate(fields);
    return true;
}

/* A Class object's bytes where JVM TI gives its class's metadata's
 * (bk.klass_sized_mirrors): the fields every Class object has, then the
 * class's statics as JDK 8 lays them out, references first, then longs and
 * doubles (8-aligned), ints and floats, shorts and chars, bytes and
 * booleans, in whole words. */
typedef struct {
    jlong tag;
    int32_t refs, wide, word, half, byte;
} statics_shape;

static statics_shape shape_of(const seam_class_info *info)
{
    statics_shape s = { 0, 0, 0, 0, 0, 0 };
    for (jint i = 0; i < info->num_statics; i++) {
        const char *sig = info->statics[i].field_signature;
        switch (sig != NULL ? sig[0] : 'L') {
        case 'J':
        case 'D': s.wide++; break;
        case 'I':
        case 'F': s.word++; break;
        case 'S':
        case 'C': s.half++; break;
        case 'B':
        case 'Z': s.byte++; break;
        default: s.refs++; break;
        }
    }
    return s;
}

static jlong mirror_size(const statics_shape *s)
{
    jlong end = bk.mirror_base + s->refs * bk.mirror_ref;
    if (s->wide > 0) {
        end = (end + 7) / 8 * 8;
    }
    end += 8 * (jlong)s->wide + 4 * (jlong)s->word + 2 * (jlong)s->half + s->byte;
    return bk.mirror_base + (end - bk.mirror_base + 7) / 8 * 8;
}

/* Classes that got their IDs before VM init measured a Class object: their
 * sizes are set then (bk_classinfo_mirrors_measured).  Under class_lock,
 * as are bk.mirror_base and bk.mirror_ref once set. */
static statics_shape *unsized;
static int n_unsized, cap_unsized;

static void size_mirror(seam_class_info *info)
{
    if (bk.mirror_base != 0) {
        statics_shape s = shape_of(info);
        info->object_size = mirror_size(&s);
    }
}

/* Under class_lock, once the class has its tag. */
static void note_unsized(jlong tag, const seam_class_info *info)
{
    if (bk.mirror_base != 0) {
        return;
    }
    if (n_unsized == cap_unsized) {
        int cap = cap_unsized ? 2 * cap_unsized : 512;
        statics_shape *grown = realloc(unsized, (size_t)cap * sizeof *grown);
        if (grown == NULL) {
            return;
        }
        unsized = grown;
        cap_unsized = cap;
    }
    statics_shape s = shape_of(info);
    s.tag = tag;
    unsized[n_unsized++] = s;
}

void bk_classinfo_mirrors_measured(jlong base, jlong ref)
{
    if (base <= 0 || ref <= 0) {
        LOG_WARN("a Class object could not be measured: OBJECT_ALLOC gives Class objects the size of their "
                 "class's VM data");
        return;
    }
    statics_shape *list;
    int n;
    {
        pthread_mutex_lock(&class_lock);
        bk.mirror_base = base;
        bk.mirror_ref = ref;
        list = unsized;
        n = n_unsized;
        unsized = NULL;
        n_unsized = cap_unsized = 0;
        pthread_mutex_unlock(&class_lock);
    }
    for (int i = 0; i < n; i++) {
        layer_class_sized(seam_id_from_tag(list[i].tag), mirror_size(&list[i]));
    }
    free(list);
}

/* JVMPI type of an array class's elements, from its signature "[I", "[[J", "[Lx;". */
static jint array_type(const char *sig)
{
    switch (sig[1]) {
    case 'Z': return JVMPI_BOOLEAN;
    case 'C': return JVMPI_CHAR;
    case 'F': return JVMPI_FLOAT;
    case 'D': return JVMPI_DOUBLE;
    case 'B': return JVMPI_BYTE;
    case 'S': return JVMPI_SHORT;
    case 'I': return JVMPI_INT;
    case 'J': return JVMPI_LONG;
    default: return JVMPI_CLASS;
    }
}

static seam_class_info *class_info(JNIEnv *env, jclass klass, jint status)
{
    seam_class_info *info = calloc(1, sizeof *info);
    char *sig = NULL;
    if (info == NULL || !JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassSignature, klass, &sig, NULL))) {
        free(info);
        return NULL;
    }
    info->name = external_name(sig);
    JVMTI_CALL(bk.jvmti, GetObjectSize, klass, &info->object_size);
    if (status & JVMTI_CLASS_STATUS_ARRAY) {
        /* Arrays: no source, methods or fields, as in JDK 5.0. */
        if (bk.klass_sized_mirrors) {
            size_mirror(info); /* no statics */
        }
        info->array_type = array_type(sig);
        bk_deallocate(sig);
        return info;
    }
    bk_deallocate(sig);
    char *source = NULL;
    if (JVMTI_OK(JVMTI_TRY(bk.jvmti, GetSourceFileName, klass, &source))) {
        info->source_name = bk_take_string(source);
    }
    jint n_ifaces = 0;
    jclass *ifaces = NULL;
    if (JVMTI_OK(JVMTI_CALL(bk.jvmti, GetImplementedInterfaces, klass, &n_ifaces, &ifaces))) {
        info->num_interfaces = n_ifaces;
        for (jint i = 0; i < n_ifaces; i++) {
            (*env)->DeleteLocalRef(env, ifaces[i]);
        }
        bk_deallocate(ifaces);
    }
    if (!fill_methods(klass, info) || !fill_fields(klass, info)) {
        seam_class_info_free(info);
        return NULL;
    }
    if (bk.klass_sized_mirrors) {
        size_mirror(info);
    }
    return info;
}

static jlong class_tag(jclass klass)
{
    jlong tag = 0;
    JVMTI_CALL(bk.jvmti_cls, GetTag, klass, &tag);
    return tag;
}

/* IDs defined under class_lock, announced once it is released: the agent's
 * handler must never run while the layer holds a lock of its own. */
typedef struct {
    jobjectID *ids;
    jlong *placeholders;  /* the class's placeholder tag (heap.c), 0 if none */
    int count, cap;
} id_list;

static void id_list_add(id_list *l, jobjectID id, jlong placeholder)
{
    if (l == NULL) {
        return;
    }
    if (l->count == l->cap) {
        int cap = l->cap ? l->cap * 2 : 8;
        jobjectID *grown = realloc(l->ids, (size_t)cap * sizeof *grown);
        if (grown != NULL) {
            l->ids = grown;
        }
        jlong *grown_p = grown != NULL ? realloc(l->placeholders, (size_t)cap * sizeof *grown_p) : NULL;
        if (grown_p == NULL) {
            return;
        }
        l->placeholders = grown_p;
        l->cap = cap;
    }
    l->placeholders[l->count] = placeholder;
    l->ids[l->count++] = id;
}

static jobjectID define_class(JNIEnv *env, jclass klass, id_list *defined);

/* The element class of an array of references; with class_lock held. */
static jobjectID define_element(JNIEnv *env, jclass array_class, id_list *defined)
{
    jclass element = bk_array_element_class(env, array_class);
    if (element == NULL) {
        return NULL;
    }
    jobjectID id = define_class(env, element, defined);
    (*env)->DeleteLocalRef(env, element);
    return id;
}

/* ---- element classes linked before their arrays' classes ---------------------
 *
 * A class gets its ID when it is prepared: JVM TI lists no methods or
 * fields of a class before (GetClassMethods, GetClassFields).  But an array
 * of a class can be made before the class is linked (new Marker[n] with no
 * Marker made yet), and an OBJECT_ALLOC of a reference array names its
 * element class, never NULL, as HotSpot 5.0's did.  So the innermost element class of an array class is linked when the
 * layer first needs it.  Neither JNI nor JVM TI has a call that links
 * without initializing; HotSpot links a class when reflection asks for its
 * declared members, and Class.getDeclaredFields0 is a native: no bytecode
 * of the program's or the JDK's runs, and linking runs no static
 * initializer.  What it allocates is not reported, nor its method events;
 * the ClassPrepare it causes gives the class its ID and CLASS_LOAD, as
 * linking by the program would.  Never with class_lock held: that
 * ClassPrepare takes it on this thread. */

TLS_FAST jmethodID bk_own_call;
static jclass class_class;        /* global ref */
static jmethodID declared_fields; /* Class.getDeclaredFields0(boolean) */

void bk_classinfo_vm_init(JNIEnv *env)
{
    jclass c = (*env)->FindClass(env, "java/lang/Class");
    jmethodID m = c != NULL ? (*env)->GetMethodID(env, c, "getDeclaredFields0", "(Z)[Ljava/lang/reflect/Field;") : NULL;
    (*env)->ExceptionClear(env);
    if (m == NULL) {
        LOG_WARN("java.lang.Class has no getDeclaredFields0: an array made before its element class is linked "
                 "names no element class");
    } else {
        declared_fields = m;
        bk_methodcheck_learn(m); /* java.lang.Class's: the CDS copy's vtable, if CDS is on */
    }
    if (c != NULL) {
        class_class = bk_new_global_ref(env, c);
        (*env)->DeleteLocalRef(env, c);
    }
}

/* Not through FindClass in an event: in a MethodEntry of a method of
 * ClassLoader$NativeLibrary, JNI's FindClass takes its caller for
 * JNI_OnLoad's and asks NativeLibrary.getFromClass for its class, which on
 * JDK 8 to 14 throws NullPointerException into the program unless a
 * library is being loaded just then. */
bool bk_is_class_object(JNIEnv *env, jobject obj)
{
    if (class_class != NULL) {
        return (*env)->IsInstanceOf(env, obj, class_class);
    }
    jclass c = (*env)->FindClass(env, "java/lang/Class");
    bool is = c != NULL && (*env)->IsInstanceOf(env, obj, c);
    if (c != NULL) {
        (*env)->DeleteLocalRef(env, c);
    }
    return is;
}

/* Links klass, its superclasses and interfaces (not initialized). */
static void link_class(JNIEnv *env, jclass klass)
{
    jthrowable pending = (*env)->ExceptionOccurred(env);
    if (pending != NULL) {
        (*env)->ExceptionClear(env);
    }
    bool quiet = bk_alloc_quiet(true);
    jmethodID own = bk_own_call;
    bk_own_call = declared_fields;
    jobject fields = (*env)->CallNonvirtualObjectMethod(env, klass, class_class, declared_fields, JNI_TRUE);
    bk_own_call = own;
    bk_alloc_quiet(quiet);
    if ((*env)->ExceptionCheck(env)) {
        /* A class that fails to link (it fails again when the program uses it). */
        (*env)->ExceptionClear(env);
        LOG_DEBUG("an array's element class could not be linked: its arrays name no element class");
    }
    if (fields != NULL) {
        (*env)->DeleteLocalRef(env, fields);
    }
    if (pending != NULL) {
        (*env)->Throw(env, pending);
        (*env)->DeleteLocalRef(env, pending);
    }
}

/* Whether klass is an array class; its status in *status. */
static bool is_array_class(jclass klass, jint *status)
{
    *status = 0;
    return JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassStatus, klass, status)) && (*status & JVMTI_CLASS_STATUS_ARRAY);
}

void bk_link_element(JNIEnv *env, jclass array_class)
{
    jint status = 0;
    /* componentType is read of array classes only: HotSpot may keep
     * something else in that slot of other Class objects. */
    if (declared_fields == NULL || !is_array_class(array_class, &status)) {
        return;
    }
    jclass e = bk_array_element_class(env, array_class);
    while (e != NULL && is_array_class(e, &status)) {
        jclass inner = bk_array_element_class(env, e);
        (*env)->DeleteLocalRef(env, e);
        e = inner;
    }
    if (e != NULL && class_tag(e) == 0 &&
        !(status & (JVMTI_CLASS_STATUS_PREPARED | JVMTI_CLASS_STATUS_ERROR | JVMTI_CLASS_STATUS_PRIMITIVE))) {
        if (log_level >= LOG_LEVEL_DEBUG) {
            char *sig = NULL;
            JVMTI_CALL(bk.jvmti, GetClassSignature, e, &sig, NULL);
            LOG_DEBUG("%s is linked now: an array of it names it", sig != NULL ? sig : "?");
            bk_deallocate(sig);
        }
        link_class(env, e);
    }
    if (e != NULL) {
        (*env)->DeleteLocalRef(env, e);
    }
}

/* Gives the class its ID and record; superclasses first, so that CLASS_LOADs
 * sent in definition order never name a super the agent has not seen. */
static jobjectID define_class(JNIEnv *env, jclass klass, id_list *defined)
{
    jlong tag = class_tag(klass);
    if (tag != 0) {
        return seam_id_from_tag(tag);
    }
    jint status = 0;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetClassStatus, klass, &status))) {
        return NULL;
    }
    bool is_array = (status & JVMTI_CLASS_STATUS_ARRAY) != 0;
    if ((status & JVMTI_CLASS_STATUS_PRIMITIVE) || (!is_array && !(status & JVMTI_CLASS_STATUS_PREPARED))) {
        return NULL; /* primitives are no classes to JVMPI; unprepared ones get a ClassPrepare later */
    }
    if (hooksclass_is_class(env, klass)) {
        return NULL; /* the layer's own */
    }
    jclass super = (*env)->GetSuperclass(env, klass);
    if (super != NULL) {
        define_class(env, super, defined);
        (*env)->DeleteLocalRef(env, super);
    }
    seam_class_info *info = class_info(env, klass, status);
    if (info == NULL) {
        return NULL;
    }
    if (info->array_type == JVMPI_CLASS) {
        info->element_id = define_element(env, klass, defined);
    }
    jlong placeholder = 0;
    JVMTI_CALL(bk.jvmti, GetTag, klass, &placeholder);
    if (!ids_is_pending_class(placeholder)) {
        placeholder = 0;
    }
    tag = ids_next_class(info->array_type);
    info->id = seam_id_from_tag(tag);
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti_cls, SetTag, klass, tag)) ||
        !JVMTI_OK(JVMTI_CALL(bk.jvmti, SetTag, klass, tag))) {
        seam_class_info_free(info);
        return NULL;
    }
    vtguard_note_class(env, klass, info->name, tag);
    if (bk.klass_sized_mirrors) {
        note_unsized(tag, info);
    }
    layer_class_defined(info);
    id_list_add(defined, seam_id_from_tag(tag), placeholder);
    return seam_id_from_tag(tag);
}

/* With class_lock released: CLASS_LOADs (if announce), then the objects
 * the start-up replay held back for classes that were not linked then. */
static void after_defining(JNIEnv *env, id_list *defined, bool announce)
{
    for (int i = 0; i < defined->count; i++) {
        if (announce) {
            layer_class_announce(env, defined->ids[i]);
        }
        if (defined->placeholders[i] != 0) {
            bk_heap_class_linked(env, defined->placeholders[i], defined->ids[i]);
        }
    }
    free(defined->ids);
    free(defined->placeholders);
}

jobjectID bk_class_id(JNIEnv *env, jclass klass)
{
    jlong tag = class_tag(klass);
    if (tag != 0) {
        return seam_id_from_tag(tag);
    }
    bk_link_element(env, klass); /* before class_lock: see above */
    jobjectID id;
    id_list defined;
    memset(&defined, 0, sizeof defined);
    {
        pthread_mutex_lock(&class_lock);
        id = define_class(env, klass, &defined);
        pthread_mutex_unlock(&class_lock);
    }
    after_defining(env, &defined, true);
    return id;
}

void JNICALL bk_on_class_prepare(jvmtiEnv *jvmti, JNIEnv *env, jthread thread, jclass klass)
{
    BEGIN_CALLBACK();
    bk_class_id(env, klass);
    END_CALLBACK();
}

void JNICALL bk_on_class_tag_free(jvmtiEnv *jvmti, jlong tag)
{
    BEGIN_CALLBACK();
    bk_exitfrees_count();
    layer_class_freed(seam_id_from_tag(tag));
    END_CALLBACK();
}

void seam_define_loaded_classes(JNIEnv *env)
{
    jint n = 0;
    jclass *classes = NULL;
    if (!JVMTI_OK(JVMTI_CALL(bk.jvmti, GetLoadedClasses, &n, &classes))) {
        return;
    }
    for (jint i = 0; i < n; i++) {
        if (class_tag(classes[i]) == 0) {
            bk_link_element(env, classes[i]);
        }
    }
    id_list defined;
    memset(&defined, 0, sizeof defined);
    {
        pthread_mutex_lock(&class_lock);
        for (jint i = 0; i < n; i++) {
            define_class(env, classes[i], &defined);
            (*env)->DeleteLocalRef(env, classes[i]);
        }
        pthread_mutex_unlock(&class_lock);
    }
    bk_deallocate(classes);
    after_defining(env, &defined, false);
}

bool seam_method_id_valid(jmethodID method) { return bk_method_id_plausible(method); }

jobjectID seam_method_class(jmethodID method)
{
    jclass klass = NULL;
    JNIEnv *env = seam_current_env();
    if (env == NULL || !JVMTI_OK(JVMTI_CALL(bk.jvmti, GetMethodDeclaringClass, method, &klass))) {
        return NULL;
    }
    jobjectID id = bk_class_id(env, klass);
    (*env)->DeleteLocalRef(env, klass);
    return id;
}
