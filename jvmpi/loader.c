#include "loader.h"

#include <ctype.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents.h"
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

/* The -Xrun agents of the command line, by name (what follows -Xrun, up
 * to a ':'), read once from the process's arguments and JAVA_TOOL_OPTIONS. */
#define XRUN_MAX 32
static char *xrun_names[XRUN_MAX];
static int xrun_count = -1;

static void xrun_add(const char *arg)
{
    if (strncmp(arg, "-J-Xrun", 7) == 0) {
        arg += 2; /* javac and the other launchers pass -J options to the VM */
    }
    if (strncmp(arg, "-Xrun", 5) != 0 || arg[5] == '\0' || xrun_count >= XRUN_MAX) {
        return;
    }
    const char *name = arg + 5;
    size_t len = strcspn(name, ":");
    xrun_names[xrun_count++] = strndup(name, len);
}

static void xrun_add_words(const char *text)
{
    while (text != NULL && *text != '\0') {
        while (isspace((unsigned char)*text)) {
            text++;
        }
        size_t len = strcspn(text, " \t\n");
        if (len > 0) {
            char *word = strndup(text, len);
            if (word != NULL) {
                xrun_add(word);
                free(word);
            }
        }
        text += len;
    }
}

static void xrun_read(void)
{
    if (xrun_count >= 0) {
        return;
    }
    xrun_count = 0;
    xrun_add_words(getenv("JAVA_TOOL_OPTIONS"));
    xrun_add_words(getenv("_JAVA_OPTIONS"));
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f == NULL) {
        return;
    }
    char arg[4096];
    size_t n = 0;
    int c;
    while ((c = fgetc(f)) != EOF) {
        if (c != '\0' && n + 1 < sizeof arg) {
            arg[n++] = (char)c;
            continue;
        }
        arg[n] = '\0';
        xrun_add(arg);
        n = 0;
    }
    fclose(f);
}

/* The agent's bare name: /x/liba.so and liba.so are a. */
static void bare_name(const char *agent, char *out, size_t size)
{
    const char *slash = strrchr(agent, '/');
    const char *b = slash != NULL ? slash + 1 : agent;
    if (slash != NULL && strncmp(b, "lib", 3) == 0) {
        b += 3;
    }
    size_t len = strlen(b);
    if (slash != NULL && len > 3 && strcmp(b + len - 3, ".so") == 0) {
        len -= 3;
    }
    snprintf(out, size, "%.*s", (int)len, b);
}

static bool named_by_xrun(const char *agent)
{
    char name[256];
    bare_name(agent, name, sizeof name);
    xrun_read();
    for (int i = 0; i < xrun_count; i++) {
        if (strcmp(xrun_names[i], name) == 0) {
            return true;
        }
    }
    return false;
}

int loader_xrun_agents(void)
{
    xrun_read();
    int n = 0;
    for (int i = 0; i < xrun_count; i++) {
        n += strcmp(xrun_names[i], "jdwp") != 0;
    }
    return n;
}

void loader_xrun_forget(void)
{
    for (int i = 0; i < xrun_count; i++) {
        free(xrun_names[i]);
        xrun_names[i] = NULL;
    }
    xrun_count = -1;
}

int loader_check_xrun(char *err, size_t errlen)
{
    xrun_read();
    for (int i = 0; i < xrun_count; i++) {
        for (int j = i + 1; j < xrun_count; j++) {
            /* -Xrunjdwp is JDWP, which the VM starts as a JVM TI agent. */
            if (strcmp(xrun_names[i], xrun_names[j]) == 0 && strcmp(xrun_names[i], "jdwp") != 0) {
                snprintf(err, errlen,
                         "-Xrun%s is given twice: the VM loads lib%s.so once and would start it twice, its "
                         "two runs sharing one set of globals; name the second as "
                         "-agentpath:libjvmpi.so=%s:<options>, which gets a copy of its own",
                         xrun_names[i], xrun_names[i], xrun_names[i]);
                return -1;
            }
        }
    }
    return 0;
}

/* What the user typed, in a message: shortened when long (log_shorten). */
#define SHOWN(text) log_shorten((text), (char[LOG_SHORT_BUF]){0}, LOG_SHORT_BUF)

/* A library already in the process (another agent's, or the VM's for an
 * -Xrun agent of the same name) shares its globals with it: the agent gets
 * a copy of the file, loaded apart.  The copy is unlinked once mapped. */
static void *load_copy(const char *agent, const char *path)
{
    const char *tmp = getenv("TMPDIR");
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s/libjvmpi-agent-XXXXXX", tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
    int out = mkstemp(copy);
    int in = open(path, O_RDONLY);
    bool ok = out >= 0 && in >= 0;
    char buf[65536];
    ssize_t n;
    while (ok && (n = read(in, buf, sizeof buf)) > 0) {
        ok = write(out, buf, (size_t)n) == n;
    }
    if (in >= 0) {
        close(in);
    }
    if (out >= 0) {
        ok = close(out) == 0 && ok;
    }
    void *lib = ok ? dlopen(copy, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!ok) {
        LOG_ERROR("JVMPI agent '%s': %s is loaded already (as another agent) and a copy of it could not be "
                  "made in %s",
                  SHOWN(agent), SHOWN(path), tmp != NULL ? tmp : "/tmp");
    } else if (lib == NULL) {
        LOG_ERROR("cannot load a copy of JVMPI agent '%s' (%s): %s", SHOWN(agent), SHOWN(path), dlerror());
    } else {
        LOG_INFO("JVMPI agent '%s': %s is loaded already, so this agent runs from a copy of its own", SHOWN(agent),
                 SHOWN(path));
    }
    if (out >= 0) {
        unlink(copy);
    }
    return lib;
}

/* The file a library was loaded from, malloc'd. */
static char *loaded_path(void *lib)
{
    struct link_map *map = NULL;
    if (dlinfo(lib, RTLD_DI_LINKMAP, &map) != 0 || map == NULL || map->l_name == NULL || map->l_name[0] == '\0') {
        return NULL;
    }
    return strdup(map->l_name);
}

/* dlopen, or a copy of the file when the library is in the process already
 * or the VM will load it for an -Xrun agent.  Never RTLD_GLOBAL: a copy's
 * references to its own exported globals (an agent of several files shares
 * its state through them) would bind to the first copy's, and two agents
 * would write one profile's tables.  The VM loads -Xrun libraries local too. */
static void *load(const char *agent, const char *path)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (lib == NULL && !named_by_xrun(agent)) {
        return dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (lib == NULL) {
        lib = dlopen(path, RTLD_NOW | RTLD_LOCAL); /* the -Xrun agent's, loaded ahead: the file to copy */
    }
    char *file = lib != NULL ? loaded_path(lib) : NULL;
    if (file == NULL) {
        return lib; /* no file to copy: the library as it is */
    }
    void *copy = load_copy(agent, file);
    free(file);
    return copy;
}

jint loader_start_agent(JavaVM *vm, const char *agent, const char *options, const loader_paths *paths)
{
    char *path = strchr(agent, '/') != NULL ? strdup(agent) : loader_find(agent, paths);
    void *lib;
    if (path != NULL) {
        lib = load(agent, path);
    } else {
        char bare[PATH_MAX];
        snprintf(bare, sizeof bare, "lib%s.so", agent);
        lib = load(agent, bare);
        if (lib == NULL) {
            LOG_ERROR("cannot find JVMPI agent '%s': no lib%s.so in the JDK library directory, "
                      "LD_LIBRARY_PATH, java.library.path or %s",
                      SHOWN(agent), SHOWN(agent), paths->agents_dir != NULL ? paths->agents_dir : "(agents dir unknown)");
            return JNI_ERR;
        }
    }
    if (lib == NULL) {
        const char *why = dlerror();
        LOG_ERROR("cannot load JVMPI agent '%s' (%s): %s", SHOWN(agent), SHOWN(path), why != NULL ? why : "see above");
        free(path);
        return JNI_ERR;
    }
    jvm_onload_fn onload;
    *(void **)&onload = dlsym(lib, "JVM_OnLoad");
    if (onload == NULL) {
        LOG_ERROR("JVMPI agent '%s' (%s) has no JVM_OnLoad: it is not a JVMPI agent", SHOWN(agent),
                  path != NULL ? SHOWN(path) : "found by dlopen");
        free(path);
        return JNI_ERR;
    }
    LOG_INFO("starting JVMPI agent '%s' from %s with options %s%s%s", SHOWN(agent),
             path != NULL ? SHOWN(path) : "the dlopen search path", options ? "\"" : "",
             options ? SHOWN(options) : "(none)", options ? "\"" : "");
    free(path);
    /* The agent may keep the pointer (2002 agents did): hand it a copy it owns. */
    char *opts = options != NULL ? strdup(options) : NULL;
    Dl_info info;
    agents_loading(agent, dladdr(*(void **)&onload, &info) != 0 ? info.dli_fbase : NULL);
    jint rc = onload(vm, opts, NULL);
    agents_loading(NULL, NULL);
    if (rc != JNI_OK) {
        LOG_ERROR("JVM_OnLoad of JVMPI agent '%s' returned %d: the agent failed to start", SHOWN(agent), (int)rc);
        return JNI_ERR;
    }
    return JNI_OK;
}
