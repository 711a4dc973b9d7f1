#include "loader.h"

#include <ctype.h>
#include <dlfcn.h>
#include <elf.h>
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

/* A JVM TI agent of the same name (JDK 8's own libhprof.so in the JDK
 * library directory) is not the JVMPI agent meant: the search goes on.  One
 * that cannot be loaded to look is left to the load to judge. */
static bool jvmti_only(const char *path)
{
    void *lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (lib == NULL) {
        return false;
    }
    bool only = dlsym(lib, "JVM_OnLoad") == NULL && dlsym(lib, "Agent_OnLoad") != NULL;
    dlclose(lib);
    return only;
}

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
            if (n > 0 && (size_t)n < sizeof path && access(path, R_OK) == 0 && !jvmti_only(path)) {
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
static char *xrun_options[XRUN_MAX]; /* NULL: none given */
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
    xrun_options[xrun_count] = name[len] == ':' ? strdup(name + len + 1) : NULL;
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

/* The index of agent's -Xrun entry, or -1. */
static int xrun_index(const char *agent)
{
    char name[256];
    bare_name(agent, name, sizeof name);
    xrun_read();
    for (int i = 0; i < xrun_count; i++) {
        if (strcmp(xrun_names[i], name) == 0) {
            return i;
        }
    }
    return -1;
}

static bool named_by_xrun(const char *agent) { return xrun_index(agent) >= 0; }

void loader_log_xrun_agent(const char *file)
{
    if (log_level < LOG_LEVEL_INFO) {
        return;
    }
    int i = xrun_index(file);
    if (i < 0) {
        LOG_INFO("JVMPI agent in %s asked for JVMPI (not named by -Xrun on the command line)", LOG_SHOWN(file));
        return;
    }
    const char *opts = xrun_options[i];
    LOG_INFO("JVMPI agent '%s' started by the VM (-Xrun%s) from %s with options %s%s%s", LOG_SHOWN(xrun_names[i]),
             LOG_SHOWN(xrun_names[i]), LOG_SHOWN(file), opts ? "\"" : "", opts ? LOG_SHOWN(opts) : "(none)",
             opts ? "\"" : "");
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
        free(xrun_options[i]);
        xrun_names[i] = xrun_options[i] = NULL;
    }
    xrun_count = -1;
}

/* 0, or -1 with the reason when lib<name>.so, where the VM will take it
 * from, has neither JVM_OnLoad nor Agent_OnLoad: JDK 25 then crashes
 * calling the one it did not find (JDK 17 refuses before the layer runs). */
static int xrun_entry_missing(const char *name, const char *boot, char *err, size_t errlen)
{
    char *path = find_in(name, boot);
    if (path == NULL) {
        path = find_in(name, getenv("LD_LIBRARY_PATH"));
    }
    if (path == NULL) {
        return 0; /* not where the layer looks: the VM says what it finds */
    }
    void *lib = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    if (lib == NULL) {
        lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    }
    int rc = 0;
    if (lib != NULL && dlsym(lib, "JVM_OnLoad") == NULL && dlsym(lib, "Agent_OnLoad") == NULL) {
        snprintf(err, errlen, "-Xrun%s: %s has no JVM_OnLoad: it is not a JVMPI agent", LOG_SHOWN(name),
                 LOG_SHOWN(path));
        rc = -1;
    }
    if (lib != NULL) {
        dlclose(lib); /* NOLOAD took a reference too */
    }
    free(path);
    return rc;
}

int loader_check_xrun(const char *boot_library_path, char *err, size_t errlen)
{
    xrun_read();
    for (int i = 0; i < xrun_count; i++) {
        if (strcmp(xrun_names[i], "jdwp") != 0 &&
            xrun_entry_missing(xrun_names[i], boot_library_path, err, errlen) != 0) {
            return -1;
        }
    }
    for (int i = 0; i < xrun_count; i++) {
        for (int j = i + 1; j < xrun_count; j++) {
            /* -Xrunjdwp is JDWP, which the VM starts as a JVM TI agent. */
            if (strcmp(xrun_names[i], xrun_names[j]) == 0 && strcmp(xrun_names[i], "jdwp") != 0) {
                const char *name = LOG_SHOWN(xrun_names[i]);
                snprintf(err, errlen,
                         "-Xrun%s is given twice: the VM loads lib%s.so once and would start it twice, its "
                         "two runs sharing one set of globals; name the second as "
                         "-agentpath:libjvmpi.so=%s:<options>, which gets a copy of its own",
                         name, name, name);
                return -1;
            }
        }
    }
    return 0;
}

static const char *machine_name(unsigned machine)
{
    switch (machine) {
    case EM_386: return "IA 32";
    case EM_X86_64: return "AMD 64";
    case EM_AARCH64: return "AARCH64";
    case EM_ARM: return "ARM";
    case EM_PPC: return "PPC";
    case EM_PPC64: return "PPC64";
    case EM_S390: return "S390";
    case EM_RISCV: return "RISCV";
    case EM_SPARCV9: return "SPARC v9";
    default: return NULL;
    }
}

const char *loader_why(const char *file, const char *dlerr, char *buf, size_t size)
{
    /* glibc answers "No such file or directory" for a library built for
     * another machine: the header says what it really is, as the VM's own
     * loader tells. */
    unsigned char h[EI_NIDENT + 4];
    int fd = file != NULL ? open(file, O_RDONLY) : -1;
    ssize_t got = fd >= 0 ? read(fd, h, sizeof h) : -1;
    if (fd >= 0) {
        close(fd);
    }
    if (got == (ssize_t)sizeof h && memcmp(h, ELFMAG, SELFMAG) == 0) {
        unsigned mine = EM_NUM;
#if defined(__x86_64__)
        mine = EM_X86_64;
#elif defined(__aarch64__)
        mine = EM_AARCH64;
#elif defined(__i386__)
        mine = EM_386;
#endif
        unsigned machine = h[EI_DATA] == ELFDATA2MSB ? (unsigned)h[EI_NIDENT + 2] << 8 | h[EI_NIDENT + 3]
                                                     : (unsigned)h[EI_NIDENT + 3] << 8 | h[EI_NIDENT + 2];
        int bits = h[EI_CLASS] == ELFCLASS64 ? 64 : h[EI_CLASS] == ELFCLASS32 ? 32 : 0;
        int my_bits = (int)sizeof(void *) * 8;
        if ((mine != EM_NUM && machine != mine) || bits != my_bits) {
            const char *theirs = machine_name(machine);
            char num[32];
            snprintf(num, sizeof num, "machine %u", machine);
            snprintf(buf, size, "it is a %d-bit library for %s, and this VM runs on %s (%d-bit)", bits,
                     theirs != NULL ? theirs : num, mine != EM_NUM ? machine_name(mine) : "this machine", my_bits);
            return buf;
        }
    }
    if (dlerr == NULL) {
        return "see above";
    }
    /* dlerror names the file first: the message names it already, or it is
     * a private copy the user never named. */
    size_t flen = file != NULL ? strlen(file) : 0;
    if (flen > 0 && strncmp(dlerr, file, flen) == 0 && strncmp(dlerr + flen, ": ", 2) == 0) {
        dlerr += flen + 2;
    }
    return log_shorten(dlerr, buf, size);
}

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
    char why[LOG_SHORT_BUF];
    if (ok && lib == NULL) {
        loader_why(copy, dlerror(), why, sizeof why);
    }
    if (!ok) {
        LOG_ERROR("JVMPI agent '%s': %s is loaded already (as another agent) and a copy of it could not be "
                  "made in %s",
                  LOG_SHOWN(agent), LOG_SHOWN(path), tmp != NULL ? tmp : "/tmp");
    } else if (lib == NULL) {
        LOG_ERROR("cannot load a copy of JVMPI agent '%s' (%s): %s", LOG_SHOWN(agent), LOG_SHOWN(path), why);
    } else {
        LOG_INFO("JVMPI agent '%s': %s is loaded already, so this agent runs from a copy of its own", LOG_SHOWN(agent),
                 LOG_SHOWN(path));
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
                      LOG_SHOWN(agent), LOG_SHOWN(agent), paths->agents_dir != NULL ? paths->agents_dir : "(agents dir unknown)");
            return JNI_ERR;
        }
    }
    if (lib == NULL) {
        char why[LOG_SHORT_BUF];
        LOG_ERROR("cannot load JVMPI agent '%s' (%s): %s", LOG_SHOWN(agent), LOG_SHOWN(path),
                  loader_why(path, dlerror(), why, sizeof why));
        free(path);
        return JNI_ERR;
    }
    jvm_onload_fn onload;
    *(void **)&onload = dlsym(lib, "JVM_OnLoad");
    if (onload == NULL) {
        LOG_ERROR("JVMPI agent '%s' (%s) has no JVM_OnLoad: it is not a JVMPI agent", LOG_SHOWN(agent),
                  path != NULL ? LOG_SHOWN(path) : "found by dlopen");
        free(path);
        return JNI_ERR;
    }
    LOG_INFO("starting JVMPI agent '%s' from %s with options %s%s%s", LOG_SHOWN(agent),
             path != NULL ? LOG_SHOWN(path) : "the dlopen search path", options ? "\"" : "",
             options ? LOG_SHOWN(options) : "(none)", options ? "\"" : "");
    free(path);
    /* The agent may keep the pointer (2002 agents did): hand it a copy it owns. */
    char *opts = options != NULL ? strdup(options) : NULL;
    Dl_info info;
    agents_loading(agent, dladdr(*(void **)&onload, &info) != 0 ? info.dli_fbase : NULL);
    jint rc = onload(vm, opts, NULL);
    agents_loading(NULL, NULL);
    if (rc != JNI_OK) {
        LOG_ERROR("JVM_OnLoad of JVMPI agent '%s' returned %d: the agent failed to start", LOG_SHOWN(agent), (int)rc);
        return JNI_ERR;
    }
    return JNI_OK;
}
