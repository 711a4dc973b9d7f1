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

static const char *xrun_name_start(const char *arg)
{
    if (strncmp(arg, "-J", 2) == 0) {
        arg += 2;
    }
    return strncmp(arg, "-Xrun", 5) == 0 && arg[5] != '\0' ? arg + 5 : NULL;
}

int loader_xrun_names(const char *const *args, int nargs, void (*fn)(const char *name, void *arg), void *arg)
{
    int found = 0;
    for (int i = 0; i < nargs; i++) {
        const char *start = xrun_name_start(args[i]);
        if (start == NULL) {
            continue;
        }
        size_t len = strcspn(start, ":");
        char *name = strndup(start, len);
        if (name != NULL && len > 0) {
            fn(name, arg);
            found++;
        }
        free(name);
    }
    return found;
}

static void preload_one(const char *name, void *arg)
{
    const loader_paths *paths = arg;
    if (strchr(name, '/') != NULL || paths->agents_dir == NULL) {
        return;
    }
    loader_paths vm_search = {paths->boot_library_path, paths->ld_library_path, NULL, NULL};
    char *vm_finds = loader_find(name, &vm_search);
    if (vm_finds != NULL) {
        free(vm_finds);
        return;
    }
    loader_paths ours = {NULL, NULL, NULL, paths->agents_dir};
    char *path = loader_find(name, &ours);
    if (path != NULL) {
        if (dlopen(path, RTLD_NOW | RTLD_GLOBAL) == NULL) {
            LOG_ERROR("cannot load -Xrun%s from %s: %s", name, path, dlerror());
        } else {
            LOG_INFO("-Xrun%s: using %s", name, path);
        }
        free(path);
    }
}

/* Splits s on blanks into args (pointers into a copy kept in *buf). */
static int split_blanks(const char *s, char **buf, const char **args, int max)
{
    int n = 0;
    if (s == NULL || (*buf = strdup(s)) == NULL) {
        return 0;
    }
    char *save = NULL;
    for (char *t = strtok_r(*buf, " \t\n", &save); t != NULL && n < max; t = strtok_r(NULL, " \t\n", &save)) {
        args[n++] = t;
    }
    return n;
}

void loader_preload_xrun_agents(const loader_paths *paths)
{
    enum { MAX_ARGS = 512 };
    const char *args[MAX_ARGS];
    int n = 0;
    char cmdline[65536];
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f != NULL) {
        size_t len = fread(cmdline, 1, sizeof cmdline - 1, f);
        fclose(f);
        cmdline[len] = '\0';
        for (size_t off = 0; off < len && n < MAX_ARGS; off += strlen(cmdline + off) + 1) {
            args[n++] = cmdline + off;
        }
    }
    char *bufs[3] = {NULL, NULL, NULL};
    const char *envs[3] = {"JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"};
    for (int i = 0; i < 3; i++) {
        n += split_blanks(getenv(envs[i]), &bufs[i], args + n, MAX_ARGS - n);
    }
    loader_xrun_names(args, n, preload_one, (void *)paths);
    for (int i = 0; i < 3; i++) {
        free(bufs[i]);
    }
}
