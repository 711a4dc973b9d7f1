/*
 * hooksclass.c - the method hooks' class (hooksclass.h).
 */
#include <string.h>

#include "hooksclass.h"

#define HOOKS_NATIVES 9
#define HOOKS_METHODS (HOOKS_NATIVES + 2)
static _Atomic(jmethodID) hooks_methods[HOOKS_METHODS]; /* its methods: never in a trace or event */
static _Atomic(jclass) hooks_class; /* global ref, once defined */

/* A public final class with nine public static natives, which is also a
 * Function picking the second frame of a stack walk (the first is the
 * hook's own): a constructor's receiver is read from its frame through
 * that walk (receivers.c), which needs no JVM TI capability. */
static size_t hooks_class_bytes(unsigned char *b)
{
    enum { UTF8 = 1, CLASS = 7, METHODREF = 10, IMETHODREF = 11, NAMETYPE = 12 };
    static const struct {
        unsigned char tag;
        const char *text;
        unsigned short a, b;
    } pool[] = {
        {0, NULL, 0, 0},
        {UTF8, HOOKS_CLASS, 0, 0},                                   /* 1 */
        {CLASS, NULL, 1, 0},                                         /* 2 */
        {UTF8, "java/lang/Object", 0, 0},                            /* 3 */
        {CLASS, NULL, 3, 0},                                         /* 4 */
        {UTF8, "enter", 0, 0},                                       /* 5 */
        {UTF8, "(I)V", 0, 0},                                        /* 6 */
        {UTF8, "enterThis", 0, 0},                                   /* 7 */
        {UTF8, "(Ljava/lang/Object;I)V", 0, 0},                      /* 8 */
        {UTF8, "exit", 0, 0},                                        /* 9 */
        {UTF8, "java/util/function/Function", 0, 0},                 /* 10 */
        {CLASS, NULL, 10, 0},                                        /* 11 */
        {UTF8, "<init>", 0, 0},                                      /* 12 */
        {UTF8, "()V", 0, 0},                                         /* 13 */
        {UTF8, "apply", 0, 0},                                       /* 14 */
        {UTF8, "(Ljava/lang/Object;)Ljava/lang/Object;", 0, 0},      /* 15 */
        {UTF8, "Code", 0, 0},                                        /* 16 */
        {UTF8, "java/util/stream/Stream", 0, 0},                     /* 17 */
        {CLASS, NULL, 17, 0},                                        /* 18 */
        {UTF8, "skip", 0, 0},                                        /* 19 */
        {UTF8, "(J)Ljava/util/stream/Stream;", 0, 0},                /* 20 */
        {NAMETYPE, NULL, 19, 20},                                    /* 21 */
        {IMETHODREF, NULL, 18, 21},                                  /* 22 */
        {UTF8, "findFirst", 0, 0},                                   /* 23 */
        {UTF8, "()Ljava/util/Optional;", 0, 0},                      /* 24 */
        {NAMETYPE, NULL, 23, 24},                                    /* 25 */
        {IMETHODREF, NULL, 18, 25},                                  /* 26 */
        {UTF8, "java/util/Optional", 0, 0},                          /* 27 */
        {CLASS, NULL, 27, 0},                                        /* 28 */
        {UTF8, "orElse", 0, 0},                                      /* 29 */
        {NAMETYPE, NULL, 29, 15},                                    /* 30 */
        {METHODREF, NULL, 28, 30},                                   /* 31 */
        {NAMETYPE, NULL, 12, 13},                                    /* 32 */
        {METHODREF, NULL, 4, 32},                                    /* 33 */
        {UTF8, "step", 0, 0},                                        /* 34 */
        {UTF8, "(II)V", 0, 0},                                       /* 35 */
        {UTF8, "exitInit", 0, 0},                                    /* 36 */
        {UTF8, "leaf", 0, 0},                                        /* 37 */
        {UTF8, "leafThis", 0, 0},                                    /* 38 */
        {UTF8, "newArray", 0, 0},                                    /* 39 */
        {UTF8, "(Ljava/lang/Object;)V", 0, 0},                       /* 40 */
        {UTF8, "newMultiArray", 0, 0},                               /* 41 */
    };
    /* <init>: aload_0, invokespecial Object.<init>, return */
    static const unsigned char init_code[] = {0x2a, 0xb7, 0, 33, 0xb1};
    /* apply(s): ((Stream) s).skip(1L).findFirst().orElse(null) */
    static const unsigned char apply_code[] = {0x2b, 0xc0, 0, 18, 0x0a, 0xb9, 0, 22, 3, 0, 0xb9, 0, 26, 1, 0,
                                               0x01, 0xb6, 0, 31, 0xb0};
    size_t n = 0;
#define U1(v) (b[n++] = (unsigned char)(v))
#define U2(v) (U1((v) >> 8), U1(v))
#define U4(v) (U2((v) >> 16), U2(v))
    U2(0xCAFE), U2(0xBABE), U2(0), U2(52);
    U2(sizeof pool / sizeof pool[0]);
    for (size_t i = 1; i < sizeof pool / sizeof pool[0]; i++) {
        U1(pool[i].tag);
        if (pool[i].tag == UTF8) {
            size_t len = strlen(pool[i].text);
            U2(len);
            memcpy(b + n, pool[i].text, len);
            n += len;
        } else {
            U2(pool[i].a);
            if (pool[i].tag != CLASS) {
                U2(pool[i].b);
            }
        }
    }
    U2(0x0031), U2(2), U2(4); /* public final super; this, super */
    U2(1), U2(11);            /* implements Function */
    U2(0);                    /* no fields */
    U2(HOOKS_NATIVES + 2);
    static const int natives[HOOKS_NATIVES][2] = {{5, 6},  {7, 8},  {9, 6},   {34, 35}, {36, 8},
                                                  {37, 6}, {38, 8}, {39, 40}, {41, 8}};
    for (int i = 0; i < HOOKS_NATIVES; i++) {
        U2(0x0109), U2(natives[i][0]), U2(natives[i][1]), U2(0); /* public static native */
    }
    static const struct {
        int name, desc, stack, locals;
        const unsigned char *code;
        size_t len;
    } coded[2] = {{12, 13, 1, 1, init_code, sizeof init_code}, {14, 15, 3, 2, apply_code, sizeof apply_code}};
    for (int i = 0; i < 2; i++) {
        U2(0x0001), U2(coded[i].name), U2(coded[i].desc), U2(1); /* public, one attribute */
        U2(16), U4(12 + coded[i].len);
        U2(coded[i].stack), U2(coded[i].locals), U4(coded[i].len);
        memcpy(b + n, coded[i].code, coded[i].len);
        n += coded[i].len;
        U2(0), U2(0); /* no exception table, no attributes */
    }
    U2(0);
#undef U4
#undef U2
#undef U1
    return n;
}
bool hooksclass_define(JNIEnv *env, const hooksclass_natives *fn)
{
    unsigned char bytes[2048];
    size_t len = hooks_class_bytes(bytes);
    jclass cls = (*env)->DefineClass(env, HOOKS_CLASS, NULL, (const jbyte *)bytes, (jsize)len);
    if (cls == NULL) {
        (*env)->ExceptionDescribe(env);
        (*env)->ExceptionClear(env);
        LOG_ERROR("method events: the layer's class %s could not be defined", HOOKS_CLASS);
        return false;
    }
    const JNINativeMethod natives[] = {
        {"enter", "(I)V", fn->enter},
        {"enterThis", "(Ljava/lang/Object;I)V", fn->enter_this},
        {"exit", "(I)V", fn->exit},
        {"step", "(II)V", fn->step},
        {"exitInit", "(Ljava/lang/Object;I)V", fn->exit_init},
        {"leaf", "(I)V", fn->leaf},
        {"leafThis", "(Ljava/lang/Object;I)V", fn->leaf_this},
        {"newArray", "(Ljava/lang/Object;)V", fn->new_array},
        {"newMultiArray", "(Ljava/lang/Object;I)V", fn->new_multi_array},
    };
    if ((*env)->RegisterNatives(env, cls, natives, HOOKS_NATIVES) != 0) {
        (*env)->ExceptionClear(env);
        LOG_ERROR("method events: the natives of %s could not be registered", HOOKS_CLASS);
        return false;
    }
    for (int i = 0; i < HOOKS_NATIVES; i++) {
        atomic_store(&hooks_methods[i], (*env)->GetStaticMethodID(env, cls, natives[i].name, natives[i].signature));
    }
    atomic_store(&hooks_methods[HOOKS_NATIVES], (*env)->GetMethodID(env, cls, "<init>", "()V"));
    atomic_store(&hooks_methods[HOOKS_NATIVES + 1],
                 (*env)->GetMethodID(env, cls, "apply", "(Ljava/lang/Object;)Ljava/lang/Object;"));
    hooks_class = bk_new_global_ref(env, cls);
    (*env)->DeleteLocalRef(env, cls);
    return hooks_class != NULL;
}

jclass hooksclass_class(void)
{
    return hooks_class;
}

bool hooksclass_is_method(jmethodID method)
{
    for (int i = 0; i < HOOKS_METHODS; i++) {
        if (method == atomic_load_explicit(&hooks_methods[i], memory_order_relaxed) && method != NULL) {
            return true;
        }
    }
    return false;
}

bool hooksclass_is_class(JNIEnv *env, jclass klass)
{
    return hooks_class != NULL && (*env)->IsSameObject(env, klass, hooks_class);
}
