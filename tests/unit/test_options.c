/*
 * test_options.c - what the layer reads before anything runs: the
 * -agentpath option text (jvmpi/options.c, options_parse_agent), the
 * JVMPI_LAYER_OPTIONS variable (options_parse_layer), and where the agent
 * library is looked for (jvmpi/loader.c, loader_find).
 *
 * The agent's option string is handed to a 20-year-old JVM_OnLoad that
 * parses it itself, so it must arrive byte for byte: every case below
 * compares the whole string, not a prefix.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "loader.h"
#include "log.h"
#include "options.h"
#include "stderr_capture.h"

/* ------------------------------------------------------------------------ */
/* options_parse_agent                                                       */
/* ------------------------------------------------------------------------ */

struct agent_case {
    const char *text;
    const char *agent;    /* NULL: no agent expected */
    const char *options;  /* NULL: no options expected */
};

static const struct agent_case agent_cases[] = {
    {"hprof:heap=sites,depth=8", "hprof", "heap=sites,depth=8"},
    {"hprof", "hprof", NULL},
    {"hprof:", "hprof", ""},
    /* only the first ':' splits; later ':' and '=' belong to the agent */
    {"hprof:file=/tmp/a:b=c,x==y", "hprof", "file=/tmp/a:b=c,x==y"},
    {"myagent::", "myagent", ":"},
    {"a:=", "a", "="},
    {"a=b:c", "a=b", "c"},
    /* a path names the library directly; its '/' are not separators */
    {"/opt/prof/libx.so:opt", "/opt/prof/libx.so", "opt"},
    {"hprof: leading and trailing spaces ", "hprof", " leading and trailing spaces "},
};

START_TEST(test_agent_split)
{
    const struct agent_case *c = &agent_cases[_i];
    options_agent a;
    char err[256] = "";
    memset(&a, 0x5a, sizeof a); /* the parser must set both fields */
    int rc = options_parse_agent(c->text, &a, err, sizeof err);
    ck_assert_msg(rc == 0, "\"%s\": rc %d (%s)", c->text, rc, err);
    ck_assert_msg(a.agent != NULL && strcmp(a.agent, c->agent) == 0, "\"%s\": agent \"%s\", expected \"%s\"",
                  c->text, a.agent ? a.agent : "(null)", c->agent);
    if (c->options == NULL) {
        ck_assert_msg(a.agent_options == NULL, "\"%s\": options \"%s\", expected NULL", c->text, a.agent_options);
    } else {
        ck_assert_msg(a.agent_options != NULL && strcmp(a.agent_options, c->options) == 0,
                      "\"%s\": options \"%s\", expected \"%s\"", c->text,
                      a.agent_options ? a.agent_options : "(null)", c->options);
    }
    options_agent_free(&a);
    ck_assert_ptr_null(a.agent);
    ck_assert_ptr_null(a.agent_options);
}
END_TEST

START_TEST(test_agent_none)
{
    options_agent a;
    char err[64];
    memset(&a, 0x5a, sizeof a);
    ck_assert_int_eq(options_parse_agent(NULL, &a, err, sizeof err), 0);
    ck_assert_ptr_null(a.agent);
    ck_assert_ptr_null(a.agent_options);
    options_agent_free(&a); /* freeing the empty result is harmless */
}
END_TEST

START_TEST(test_agent_no_name)
{
    /* "" is "-agentpath:libjvmpi.so=": an agent meant and left out. */
    static const char *const bad[] = {":x", ":", "::opts", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        options_agent a;
        char err[256] = "";
        int rc = options_parse_agent(bad[i], &a, err, sizeof err);
        ck_assert_msg(rc == -1, "\"%s\" accepted (rc %d)", bad[i], rc);
        ck_assert_msg(err[0] != '\0', "\"%s\": no reason given", bad[i]);
        ck_assert_ptr_null(a.agent);
        ck_assert_ptr_null(a.agent_options);
    }
}
END_TEST

/* A short error buffer truncates the reason, never overflows. */
START_TEST(test_agent_error_small_buffer)
{
    options_agent a;
    char err[8];
    memset(err, 'Z', sizeof err);
    ck_assert_int_eq(options_parse_agent(":a very long option string that does not fit", &a, err, 4), -1);
    ck_assert_int_eq(err[3], '\0');
    ck_assert_int_eq(err[4], 'Z');
}
END_TEST

/* ------------------------------------------------------------------------ */
/* options_parse_layer                                                       */
/* ------------------------------------------------------------------------ */

struct layer_case {
    const char *text;
    int level;
    const char *file;
};

static const struct layer_case layer_cases[] = {
    {NULL, LOG_LEVEL_WARN, NULL},
    {"", LOG_LEVEL_WARN, NULL},
    {"log=error", LOG_LEVEL_ERROR, NULL},
    {"log=warn", LOG_LEVEL_WARN, NULL},
    {"log=info", LOG_LEVEL_INFO, NULL},
    {"log=debug", LOG_LEVEL_DEBUG, NULL},
    {"logfile=/tmp/layer.log", LOG_LEVEL_WARN, "/tmp/layer.log"},
    {"log=debug,logfile=/tmp/x.log", LOG_LEVEL_DEBUG, "/tmp/x.log"},
    {"logfile=/tmp/x.log,log=info", LOG_LEVEL_INFO, "/tmp/x.log"},
    /* the last one wins */
    {"log=error,log=debug", LOG_LEVEL_DEBUG, NULL},
    {"logfile=/a,logfile=/b", LOG_LEVEL_WARN, "/b"},
    /* a path may contain '=' */
    {"logfile=/tmp/a=b", LOG_LEVEL_WARN, "/tmp/a=b"},
};

START_TEST(test_layer_ok)
{
    const struct layer_case *c = &layer_cases[_i];
    options_layer o;
    char err[256] = "";
    memset(&o, 0x5a, sizeof o);
    int rc = options_parse_layer(c->text, &o, err, sizeof err);
    ck_assert_msg(rc == 0, "\"%s\": rc %d (%s)", c->text ? c->text : "(null)", rc, err);
    ck_assert_msg(o.log_level == c->level, "\"%s\": level %d, expected %d", c->text ? c->text : "(null)",
                  o.log_level, c->level);
    if (c->file == NULL) {
        ck_assert_ptr_null(o.log_file);
    } else {
        ck_assert_msg(o.log_file != NULL && strcmp(o.log_file, c->file) == 0, "\"%s\": logfile \"%s\"", c->text,
                      o.log_file ? o.log_file : "(null)");
    }
    options_layer_free(&o);
    ck_assert_ptr_null(o.log_file);
}
END_TEST

/* caps=, classcache= and vthreads=: the defaults, each value, the last one
 * winning. */
static const struct {
    const char *text;
    bool caps_all, class_cache, vthreads_carriers;
} switch_cases[] = {
    {NULL, false, true, false},
    {"log=info", false, true, false},
    {"caps=all", true, true, false},
    {"caps=all,caps=auto", false, true, false},
    {"classcache=off", false, false, false},
    {"classcache=off,classcache=auto", false, true, false},
    {"caps=all,classcache=off,log=debug", true, false, false},
    {"vthreads=carriers", false, true, true},
    {"vthreads=carriers,vthreads=threads", false, true, false},
    {"log=info,vthreads=carriers,caps=all", true, true, true},
};

START_TEST(test_layer_switches)
{
    options_layer o;
    char err[256] = "";
    memset(&o, 0x5a, sizeof o);
    const char *text = switch_cases[_i].text;
    ck_assert_msg(options_parse_layer(text, &o, err, sizeof err) == 0, "\"%s\": %s", text ? text : "(null)", err);
    ck_assert_msg(o.caps_all == switch_cases[_i].caps_all, "\"%s\": caps_all %d", text ? text : "(null)",
                  (int)o.caps_all);
    ck_assert_msg(o.class_cache == switch_cases[_i].class_cache, "\"%s\": class_cache %d",
                  text ? text : "(null)", (int)o.class_cache);
    ck_assert_msg(o.vthreads_carriers == switch_cases[_i].vthreads_carriers, "\"%s\": vthreads_carriers %d",
                  text ? text : "(null)", (int)o.vthreads_carriers);
    options_layer_free(&o);
}
END_TEST

/* monitordump=: HotSpot 5.0's dump (no traces) unless traces are asked for. */
START_TEST(test_layer_monitordump)
{
    options_layer o;
    char err[256] = "";
    ck_assert_int_eq(options_parse_layer(NULL, &o, err, sizeof err), 0);
    ck_assert(!o.monitordump_traces);
    options_layer_free(&o);
    ck_assert_int_eq(options_parse_layer("monitordump=traces", &o, err, sizeof err), 0);
    ck_assert(o.monitordump_traces);
    options_layer_free(&o);
    ck_assert_int_eq(options_parse_layer("monitordump=traces,monitordump=jdk5", &o, err, sizeof err), 0);
    ck_assert(!o.monitordump_traces);
    options_layer_free(&o);
}
END_TEST

/* allocs=: the VM's sampler where it is complete, unless the hooks are asked for. */
START_TEST(test_layer_allocs)
{
    options_layer o;
    char err[256] = "";
    ck_assert_int_eq(options_parse_layer("log=warn", &o, err, sizeof err), 0);
    ck_assert(!o.allocs_hooks);
    options_layer_free(&o);
    ck_assert_int_eq(options_parse_layer("allocs=hooks", &o, err, sizeof err), 0);
    ck_assert(o.allocs_hooks);
    options_layer_free(&o);
    ck_assert_int_eq(options_parse_layer("allocs=hooks,allocs=auto", &o, err, sizeof err), 0);
    ck_assert(!o.allocs_hooks);
    options_layer_free(&o);
}
END_TEST

struct layer_bad {
    const char *text;
    const char *must_name;  /* the error text names what was wrong */
};

static const struct layer_bad layer_bad_cases[] = {
    {"verbose=1", "verbose"},
    {"log=info,colour=red", "colour"},
    {"log=verbose", "verbose"},
    {"log=", "log"},
    {"log", "log"},
    {"LOG=info", "LOG"},
    {"logfile=/tmp/x,bogus=1", "bogus"},
    {"logfile=", "logfile"},
    {"caps=some", "caps=some"},
    {"caps", "caps"},
    {"classcache=on", "classcache=on"},
    {"log=info,classcache", "classcache"},
    {"vthreads=virtual", "vthreads=virtual"},
    {"vthreads", "vthreads"},
    {"monitordump=all", "monitordump=all"},
    {"allocs=sampled", "allocs=sampled"},
    /* empty or nameless items are typos, not nothing */
    {"=", "no option name"},
    {",,,", "an empty option"},
    {",log=info", "an empty option"},
    {"log=info,,caps=all", "an empty option"},
    {"log=info,", "an empty option"},
    {"=info", "no option name"},
};

START_TEST(test_layer_bad)
{
    const struct layer_bad *c = &layer_bad_cases[_i];
    options_layer o;
    char err[256] = "";
    int rc = options_parse_layer(c->text, &o, err, sizeof err);
    ck_assert_msg(rc == -1, "\"%s\" accepted", c->text);
    ck_assert_msg(strstr(err, c->must_name) != NULL, "\"%s\": the error \"%s\" does not name \"%s\"", c->text, err,
                  c->must_name);
    ck_assert_msg(strchr(err, '\n') == NULL, "\"%s\": error is not one line: \"%s\"", c->text, err);
    /* nothing half-parsed is left to leak or to use */
    ck_assert_ptr_null(o.log_file);
}
END_TEST

/* A comma in a log file's path is part of the path unless what follows it
 * reads as an option. */
START_TEST(test_layer_logfile_comma)
{
    options_layer o;
    char err[256] = "";
    ck_assert_int_eq(options_parse_layer("log=info,logfile=/tmp/a,b,c.log,caps=all", &o, err, sizeof err), 0);
    ck_assert_str_eq(o.log_file, "/tmp/a,b,c.log");
    ck_assert(o.caps_all);
    ck_assert_int_eq(o.log_level, LOG_LEVEL_INFO);
    options_layer_free(&o);
    ck_assert_int_eq(options_parse_layer("logfile=/tmp/end,", &o, err, sizeof err), 0);
    ck_assert_str_eq(o.log_file, "/tmp/end,");
    options_layer_free(&o);
}
END_TEST

/* A 100 KB value is quoted shortened, with its length, and the reason after
 * it survives in a buffer of ordinary size. */
START_TEST(test_layer_long_value)
{
    size_t n = 100 * 1024;
    char *text = malloc(n + 16);
    strcpy(text, "caps=");
    memset(text + 5, 'x', n);
    text[5 + n] = '\0';
    options_layer o;
    char err[512] = "";
    ck_assert_int_eq(options_parse_layer(text, &o, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "expected auto or all") != NULL, "reason lost: %s", err);
    ck_assert_msg(strstr(err, "102400 bytes") != NULL, "length not given: %s", err);
    ck_assert_msg(strlen(err) < 300, "not shortened: %zu bytes", strlen(err));
    free(text);
}
END_TEST

/* The unknown option's line lists the known ones, each with what it takes:
 * every one listed is accepted with each value the list gives it, so the
 * list a user reads is one the parser keeps to. */
START_TEST(test_layer_known_list)
{
    options_layer o;
    char err[1024] = "";
    ck_assert_int_eq(options_parse_layer("nosuch=1", &o, err, sizeof err), -1);
    const char *from = strstr(err, "(known: ");
    ck_assert_msg(from != NULL && err[strlen(err) - 1] == ')', "no list: %s", err);
    char list[1024];
    snprintf(list, sizeof list, "%.*s", (int)(strlen(from) - strlen("(known: ") - 1), from + strlen("(known: "));
    int listed = 0;
    for (char *save = NULL, *item = strtok_r(list, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
        while (*item == ' ') {
            item++;
        }
        char name[64], what[64];
        ck_assert_msg(sscanf(item, "%63[^=]=<%63[^>]>", name, what) == 2, "not name=<...>: \"%s\"", item);
        char values[2][64];
        int n = 0;
        if (strcmp(what, "level") == 0) {
            snprintf(values[n++], sizeof values[0], "debug");
        } else if (strcmp(what, "path") == 0) {
            snprintf(values[n++], sizeof values[0], "/tmp/x");
        } else if (strcmp(what, "seconds") == 0) {
            snprintf(values[n++], sizeof values[0], "5");
        } else {
            ck_assert_msg(sscanf(what, "%63[^|]|%63s", values[0], values[1]) == 2, "%s: not <a|b>: %s", name, what);
            n = 2;
        }
        for (int i = 0; i < n; i++) {
            char text[256];
            /* seconds hold the VM after the ledger: a ledger is given */
            snprintf(text, sizeof text, "ledger=/tmp/l,%s=%s", name, values[i]);
            err[0] = '\0';
            ck_assert_msg(options_parse_layer(text, &o, err, sizeof err) == 0, "%s refused: %s", text, err);
            options_layer_free(&o);
        }
        listed++;
    }
    ck_assert_msg(listed > 0, "nothing listed");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* loader_find                                                               */
/* ------------------------------------------------------------------------ */

static char root[64];
static char dir_boot[128], dir_ld[128], dir_java[128], dir_agents[128], dir_empty[128];

static void mkdir_or_die(const char *p)
{
    ck_assert_msg(mkdir(p, 0755) == 0, "mkdir %s: %s", p, strerror(errno));
}

static void touch(const char *dir, const char *file)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    FILE *f = fopen(p, "w");
    ck_assert_msg(f != NULL, "create %s: %s", p, strerror(errno));
    fputs("not really an ELF file\n", f);
    fclose(f);
}

static void loader_setup(void)
{
    snprintf(root, sizeof root, "/tmp/jvmpi-loader-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
    snprintf(dir_boot, sizeof dir_boot, "%s/boot", root);
    snprintf(dir_ld, sizeof dir_ld, "%s/ld", root);
    snprintf(dir_java, sizeof dir_java, "%s/java", root);
    snprintf(dir_agents, sizeof dir_agents, "%s/agents", root);
    snprintf(dir_empty, sizeof dir_empty, "%s/empty", root);
    mkdir_or_die(dir_boot);
    mkdir_or_die(dir_ld);
    mkdir_or_die(dir_java);
    mkdir_or_die(dir_agents);
    mkdir_or_die(dir_empty);
    /* libeverywhere is in all four, libld_java in the last three, ... */
    touch(dir_boot, "libeverywhere.so");
    touch(dir_ld, "libeverywhere.so");
    touch(dir_java, "libeverywhere.so");
    touch(dir_agents, "libeverywhere.so");
    touch(dir_ld, "libld_java.so");
    touch(dir_java, "libld_java.so");
    touch(dir_agents, "libld_java.so");
    touch(dir_java, "libjava_agents.so");
    touch(dir_agents, "libjava_agents.so");
    touch(dir_agents, "libonly_agents.so");
    /* not a lib<name>.so: must not be found as "plain" */
    touch(dir_boot, "plain.so");
    touch(dir_boot, "libplain.so.1");
}

static void loader_teardown(void)
{
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (root[0] != '\0' && system(cmd) != 0) {
        fprintf(stderr, "could not remove %s\n", root);
    }
}

static void expect_found(const char *name, const loader_paths *p, const char *dir)
{
    char want[256];
    snprintf(want, sizeof want, "%s/lib%s.so", dir, name);
    char *got = loader_find(name, p);
    ck_assert_msg(got != NULL, "%s: not found, expected %s", name, want);
    ck_assert_msg(strcmp(got, want) == 0, "%s: found %s, expected %s", name, got, want);
    free(got);
}

static void expect_missing(const char *name, const loader_paths *p)
{
    char *got = loader_find(name, p);
    ck_assert_msg(got == NULL, "%s: found %s, expected nothing", name, got);
}

START_TEST(test_loader_order)
{
    loader_paths p = {dir_boot, dir_ld, dir_java, dir_agents};
    expect_found("everywhere", &p, dir_boot);
    expect_found("ld_java", &p, dir_ld);
    expect_found("java_agents", &p, dir_java);
    expect_found("only_agents", &p, dir_agents);
    expect_missing("nowhere", &p);
    expect_missing("plain", &p);
}
END_TEST

/* A JVM TI agent of the agent's name earlier on the path is passed over. */
START_TEST(test_loader_skips_jvmti_only)
{
    char p_boot[256];
    snprintf(p_boot, sizeof p_boot, "%s/libonly_agents.so", dir_boot);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", JVMTI_ONLY_LIB, p_boot);
    ck_assert_int_eq(system(cmd), 0);
    loader_paths p = {dir_boot, dir_ld, dir_java, dir_agents};
    expect_found("only_agents", &p, dir_agents);
}
END_TEST

/* Each level skipped when it is NULL or "" */
START_TEST(test_loader_missing_levels)
{
    loader_paths p = {NULL, "", NULL, dir_agents};
    expect_found("everywhere", &p, dir_agents);
    loader_paths q = {"", NULL, dir_java, NULL};
    expect_found("everywhere", &q, dir_java);
    expect_missing("only_agents", &q);
    loader_paths none = {NULL, NULL, NULL, NULL};
    expect_missing("everywhere", &none);
}
END_TEST

START_TEST(test_loader_lists)
{
    char boot[512], ld[512], java[512];
    /* empty entries before, between and after; the first directory that has it wins */
    snprintf(boot, sizeof boot, "::%s:%s/nonexistent:", dir_empty, root);
    snprintf(ld, sizeof ld, ":%s::%s:", dir_empty, dir_ld);
    snprintf(java, sizeof java, "%s:::%s", dir_java, dir_agents);
    loader_paths p = {boot, ld, java, dir_agents};
    expect_found("everywhere", &p, dir_ld);
    expect_found("ld_java", &p, dir_ld);
    expect_found("java_agents", &p, dir_java);
    expect_found("only_agents", &p, dir_agents);

    /* order inside one list */
    snprintf(ld, sizeof ld, "%s:%s:%s", dir_agents, dir_java, dir_ld);
    loader_paths q = {NULL, ld, NULL, NULL};
    expect_found("everywhere", &q, dir_agents);
    expect_found("ld_java", &q, dir_agents);
    snprintf(ld, sizeof ld, "%s:%s", dir_java, dir_ld);
    expect_found("ld_java", &q, dir_java);

    /* only separators */
    loader_paths r = {":", "::", ":::", dir_agents};
    expect_found("everywhere", &r, dir_agents);
}
END_TEST

/* A list is never changed in place (they come from getenv and properties). */
START_TEST(test_loader_lists_untouched)
{
    char ld[512], copy[512];
    snprintf(ld, sizeof ld, "%s::%s:", dir_empty, dir_java);
    memcpy(copy, ld, sizeof ld);
    loader_paths p = {NULL, ld, NULL, NULL};
    expect_found("java_agents", &p, dir_java);
    ck_assert_str_eq(ld, copy);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* loader_why, and the log file that cannot be written                       */
/* ------------------------------------------------------------------------ */

/* A library whose ELF header names another machine is said to be one
 * (glibc only says "No such file or directory"). */
START_TEST(test_why_other_machine)
{
    char path[] = "/tmp/test_options_elfXXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    unsigned char h[64] = {0x7f, 'E', 'L', 'F', 2 /* 64-bit */, 1 /* little-endian */, 1};
    h[18] = 183; /* EM_AARCH64, or EM_X86_64 when this runs on AArch64 */
#if defined(__aarch64__)
    h[18] = 62;
#endif
    ck_assert_int_eq(write(fd, h, sizeof h), (ssize_t)sizeof h);
    close(fd);
    char buf[LOG_SHORT_BUF];
    const char *why = loader_why(path, "cannot open shared object file: No such file or directory", buf, sizeof buf);
    unlink(path);
    ck_assert_msg(strstr(why, "64-bit library for") != NULL && strstr(why, "No such file") == NULL, "%s", why);
#if defined(__x86_64__)
    ck_assert_msg(strstr(why, "for AARCH64, and this VM runs on AMD 64") != NULL, "%s", why);
#endif
}
END_TEST

/* dlerror's text without the file it starts with (a private copy the user
 * never named), shortened when long. */
START_TEST(test_why_dlerror)
{
    char buf[LOG_SHORT_BUF];
    ck_assert_str_eq(loader_why("/tmp/libjvmpi-agent-Ab12Cd", "/tmp/libjvmpi-agent-Ab12Cd: undefined symbol: foo", buf,
                                sizeof buf),
                     "undefined symbol: foo");
    ck_assert_str_eq(loader_why("/nonexistent/liba.so", "something else", buf, sizeof buf), "something else");
    ck_assert_str_eq(loader_why(NULL, NULL, buf, sizeof buf), "see above");
    char long_err[4000];
    memset(long_err, 'y', sizeof long_err - 1);
    long_err[sizeof long_err - 1] = '\0';
    const char *why = loader_why(NULL, long_err, buf, sizeof buf);
    ck_assert_msg(strlen(why) < LOG_SHORT_BUF && strstr(why, "3999 bytes in all") != NULL, "%s", why);
}
END_TEST

/* A full log file: one line on stderr saying so, and the lines after it
 * there, none lost. */
START_TEST(test_log_file_full)
{
    ck_assert_int_eq(log_set_file("/dev/full"), 0);
    stderr_capture c;
    stderr_capture_begin(&c);
    log_write(LOG_LEVEL_INFO, "first line");
    log_write(LOG_LEVEL_INFO, "second line");
    stderr_capture_end(&c);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: error: cannot write to logfile /dev/full: "), 1);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: info: first line"), 1);
    ck_assert_int_eq(stderr_capture_count(&c, "JVMPI layer: info: second line"), 1);
}
END_TEST

/* ------------------------------------------------------------------------ */

static Suite *options_suite(void)
{
    Suite *s = suite_create("options");
    TCase *tc;

    tc = tcase_create("agent");
    tcase_add_loop_test(tc, test_agent_split, 0, (int)(sizeof agent_cases / sizeof agent_cases[0]));
    tcase_add_test(tc, test_agent_none);
    tcase_add_test(tc, test_agent_no_name);
    tcase_add_test(tc, test_agent_error_small_buffer);
    suite_add_tcase(s, tc);

    tc = tcase_create("layer");
    tcase_add_loop_test(tc, test_layer_ok, 0, (int)(sizeof layer_cases / sizeof layer_cases[0]));
    tcase_add_loop_test(tc, test_layer_bad, 0, (int)(sizeof layer_bad_cases / sizeof layer_bad_cases[0]));
    tcase_add_test(tc, test_layer_logfile_comma);
    tcase_add_test(tc, test_layer_long_value);
    tcase_add_test(tc, test_layer_known_list);
    tcase_add_loop_test(tc, test_layer_switches, 0, (int)(sizeof switch_cases / sizeof switch_cases[0]));
    tcase_add_test(tc, test_layer_monitordump);
    tcase_add_test(tc, test_layer_allocs);
    suite_add_tcase(s, tc);

    tc = tcase_create("loader");
    tcase_add_checked_fixture(tc, loader_setup, loader_teardown);
    tcase_add_test(tc, test_loader_order);
    tcase_add_test(tc, test_loader_skips_jvmti_only);
    tcase_add_test(tc, test_loader_missing_levels);
    tcase_add_test(tc, test_loader_lists);
    tcase_add_test(tc, test_loader_lists_untouched);
    suite_add_tcase(s, tc);

    tc = tcase_create("messages");
    tcase_add_test(tc, test_why_other_machine);
    tcase_add_test(tc, test_why_dlerror);
    tcase_add_test(tc, test_log_file_full);
    suite_add_tcase(s, tc);

    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(options_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
