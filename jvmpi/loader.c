#include "loader.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

typedef jint (JNICALL *jvm_onload_fn)(JavaVM *vm, char *options, void *reserved);

static char *find_in(const char *name, const char *dirs)
{
    if (dirs == NULL || *dirs == '\0') {
        return NULL;
    }
    const char *p = dirs;
    while (*p != '\0') {
        const char *end = strchr(p, ':');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len > 0) {
            char path[PATH_MAX];
            int n = snprintf(path, sizeof path, "%.*s/lib%s.so", (int)len, p, name);
            if (n > 0 && (size_t)n < sizeof path && access(path, R_OK) == 0) {
                return strdup(path);
            }
        }
        if (end == NULL) {
            break;
        }
        p = end + 1;
    }
    return NULL;
}

char *loader_find(const char *name, const loader_paths *paths)
{
    const char *order[] = {paths->boot_library_path, paths->ld_library_path,
                           paths->java_library_path, paths->agents_dir};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        char *found = find_in(name, order[i]);
        if (found != NULL) {
            return found;
        }
    }
    return NULL;
}

const char *loader_agents_dir(void)
{
    static char dir[PATH_MAX];
    if (dir[0] == '\0') {
        Dl_info info;
        if (dladdr((void *)&loader_agents_dir, &info) == 0 || info.dli_fname == NULL) {
            return NULL;
        }
        char self[PATH_MAX];
        snprintf(self, sizeof self, "%s", info.dli_fname);
        snprintf(dir, sizeof dir, "%s/agents", dirname(self));
    }
    return dir;
}

jint loader_start_agent(JavaVM *vm, const char *agent, const char *options, const loader_paths *paths)
{
    char *path = strchr(agent, '/') != NULL ? strdup(agent) : loader_find(agent, paths);
    void *lib;
    if (path != NULL) {
        lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    } else {
        char bare[PATH_MAX];
        snprintf(bare, sizeof bare, "lib%s.so", agent);
        lib = dlopen(bare, RTLD_NOW | RTLD_GLOBAL);
        if (lib == NULL) {
            LOG_ERROR("cannot find JVMPI agent '%s': no lib%s.so in the JDK library directory, "
                      "LD_LIBRARY_PATH, java.library.path or %s",
                      agent, agent, paths->agents_dir != NULL ? paths->agents_dir : "(agents dir unknown)");
            return JNI_ERR;
        }
    }
    if (lib == NULL) {
        LOG_ERROR("cannot load JVMPI agent '%s' (%s): %s", agent, path, dlerror());
        free(path);
        return JNI_ERR;
    }
    jvm_onload_fn onload;
    *(void **)&onload = dlsym(lib, "JVM_OnLoad");
    if (onload == NULL) {
        LOG_ERROR("JVMPI agent '%s' (%s) has no JVM_OnLoad: it is not a JVMPI agent", agent,
                  path != NULL ? path : "found by dlopen");
        free(path);
        return JNI_ERR;
    }
    LOG_INFO("starting JVMPI agent '%s' from %s with options %s%s%s", agent,
             path != NULL ? path : "the dlopen search path", options ? "\"" : "", options ? options : "(none)",
             options ? "\"" : "");
    free(path);
    /* The agent may keep the pointer (2002 agents did): hand it a copy it owns. */
    char *opts = options != NULL ? strdup(options) : NULL;
    jint rc = onload(vm, opts, NULL);
    if (rc != JNI_OK) {
        LOG_ERROR("JVM_OnLoad of JVMPI agent '%s' returned %d: the agent failed to start", agent, (int)rc);
        return JNI_ERR;
    }
    return JNI_OK;
}
