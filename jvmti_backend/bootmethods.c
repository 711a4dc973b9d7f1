/*
 * bootmethods.c - a boot class's methods found by name (bootmethods.h).
 */
#include <stdlib.h>
#include <string.h>

#include "bootmethods.h"

bootmethods_name *bootmethods_keep(const char *class_name, const classfile *cf)
{
    size_t size = cf->method_count * sizeof(bootmethods_name) + strlen(class_name) + 1;
    for (uint16_t i = 0; i < cf->method_count; i++) {
        const char *name = classfile_utf8(cf, cf->methods[i].name_index);
        const char *sig = classfile_utf8(cf, cf->methods[i].descriptor_index);
        if (name == NULL || sig == NULL) {
            return NULL;
        }
        size += strlen(name) + strlen(sig) + 2;
    }
    bootmethods_name *all = malloc(size);
    if (all == NULL) {
        return NULL;
    }
    char *text = (char *)(all + cf->method_count);
    size_t len = strlen(class_name) + 1;
    memcpy(text, class_name, len);
    const char *cls = text;
    text += len;
    for (uint16_t i = 0; i < cf->method_count; i++) {
        const char *parts[2] = {classfile_utf8(cf, cf->methods[i].name_index),
                                classfile_utf8(cf, cf->methods[i].descriptor_index)};
        const char *kept[2];
        for (int p = 0; p < 2; p++) {
            len = strlen(parts[p]) + 1;
            memcpy(text, parts[p], len);
            kept[p] = text;
            text += len;
        }
        all[i] = (bootmethods_name){cls, kept[0], kept[1]};
    }
    return all;
}

bool bootmethods_class_method(jclass cls, const char *name, const char *sig, bool (*accept)(const char *),
                              jmethodID *found)
{
    jint n = 0;
    jmethodID *all = NULL;
    *found = NULL;
    if (!JVMTI_OK(JVMTI_TRY(bk.jvmti, GetClassMethods, cls, &n, &all))) {
        return false;
    }
    for (jint i = 0; i < n && *found == NULL; i++) {
        char *n2 = NULL, *s2 = NULL;
        if (JVMTI_OK(JVMTI_TRY(bk.jvmti, GetMethodName, all[i], &n2, &s2, NULL)) &&
            (name == NULL ? accept(n2) : strcmp(n2, name) == 0 && strcmp(s2, sig) == 0)) {
            *found = all[i];
        }
        bk_deallocate(n2);
        bk_deallocate(s2);
    }
    bk_deallocate(all);
    return true;
}

jmethodID bootmethods_find(JNIEnv *env, const bootmethods_name *n)
{
    /* FindClass from a hook, a native of a boot class, asks the boot loader
     * alone; the class is running, so it is loaded and initialized (or
     * being initialized by this very thread). */
    jthrowable pending = (*env)->ExceptionOccurred(env);
    if (pending != NULL) {
        (*env)->ExceptionClear(env);
    }
    jmethodID found = NULL;
    jclass cls = (*env)->FindClass(env, n->class_name);
    if (cls == NULL) {
        (*env)->ExceptionClear(env);
    } else {
        bootmethods_class_method(cls, n->name, n->sig, NULL, &found);
        (*env)->DeleteLocalRef(env, cls);
    }
    if (pending != NULL) {
        (*env)->Throw(env, pending);
        (*env)->DeleteLocalRef(env, pending);
    }
    return found;
}
