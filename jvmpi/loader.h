/*
 * loader - finds and starts the legacy agent library, as -Xrun did.
 *
 * lib<name>.so is looked for in the JDK's own library directory
 * (sun.boot.library.path), then LD_LIBRARY_PATH, then java.library.path,
 * then the project's agents directory beside libjvmpi.so, then wherever
 * dlopen finds it.  A name containing '/' is a path and is used as it is.
 */
#ifndef JVMPI_LOADER_H_
#define JVMPI_LOADER_H_

#include <stddef.h>

#include <jni.h>

typedef struct {
    const char *boot_library_path;   /* ':'-separated, may be NULL */
    const char *ld_library_path;
    const char *java_library_path;
    const char *agents_dir;
} loader_paths;

/* Full path of lib<name>.so in the first directory that has it, malloc'd;
 * NULL when none has it (the caller may still try dlopen on the bare name). */
char *loader_find(const char *name, const loader_paths *paths);

/* The directory the layer's own agents are installed in (…/lib/agents). */
const char *loader_agents_dir(void);

/* Loads the agent and calls its JVM_OnLoad(vm, options, NULL).  A library
 * already in the process (another agent's), or one the VM will load for an
 * -Xrun agent of the same name, is loaded from a copy of its file, so that
 * each agent has globals of its own.  Returns JNI_OK, or JNI_ERR after one
 * line saying what went wrong. */
jint loader_start_agent(JavaVM *vm, const char *agent, const char *options, const loader_paths *paths);

/* Why dlopen refused file, for one line: a library for another machine or
 * word size said so (glibc only says it found no such file), else dlerr
 * without the file name it starts with, shortened; in buf, or a constant. */
const char *loader_why(const char *file, const char *dlerr, char *buf, size_t size);

/* 0, or -1 with a one-line reason: a command line whose -Xrun agents the
 * layer cannot serve (one named twice: the VM would start one library twice;
 * one whose library, in boot_library_path or LD_LIBRARY_PATH, has no
 * JVM_OnLoad: JDK 25 crashes on it). */
int loader_check_xrun(const char *boot_library_path, char *err, size_t errlen);

/* How many -Xrun agents the command line names (JDWP's -Xrunjdwp, a JVM TI
 * agent, not counted): known in Agent_OnLoad, long before the VM calls
 * their JVM_OnLoad. */
int loader_xrun_agents(void);

/* log=info: the -Xrun agent whose library is file asked for JVMPI, with the
 * options the command line gave it. */
void loader_log_xrun_agent(const char *file);

/* Tests: read the command line and JAVA_TOOL_OPTIONS again at the next ask. */
void loader_xrun_forget(void);

#endif
