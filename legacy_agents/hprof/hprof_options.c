/*
 * hprof_options.c - the -Xrunhprof / -agentlib:hprof option string.
 *
 * Every option and value that HPROF took from JDK 1.2 to JDK 8 is taken
 * here, with the same default: the eleven of the JVMPI specification's
 * usage table (section 7.1), and those the JVM TI HPROF of JDK 5 to 8 added
 * (interval, force, verbose, msa, the obsolete gc_okay, and its unlisted
 * debugging switches).  Start scripts written for any of them must run
 * unchanged.  A bad option stops the VM from starting, as it did: silently
 * profiling something else than what was asked for helps nobody; and, as
 * JDK 8 did, it is said in one line naming the option, not buried under
 * the usage.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hprof.h"

hprof_options hprof_opt;

/* Past this many frames a stack trace tells nothing more, and the sampler
 * keeps depth frames for each of up to 1024 threads: deeper is taken as
 * this (JDK 8 took any depth, and failed at its first dump on huge ones). */
#define MAX_DEPTH 1024

void hprof_options_usage(FILE *to)
{
    fprintf(to,
            "HPROF usage: -Xrunhprof[:help]|[:option=value, ...]\n"
            "         or: -agentlib:hprof[=help]|[=option=value, ...]\n"
            "\n"
            "Option Name and Value   Description             Default\n"
            "---------------------   -----------             -------\n"
            "heap=dump|sites|all     heap profiling          all\n"
            "cpu=samples|times|old   CPU usage               off\n"
            "monitor=y|n             monitor contention      n\n"
            "format=a|b              ascii or binary output  a\n"
            "file=name               write data to file      java.hprof(.txt for ascii)\n"
            "net=host:port           send data over a socket write to file\n"
            "depth=size              stack trace depth       4\n"
            "interval=ms             cpu=samples period, ms  10\n"
            "cutoff=value            output cutoff point     0.0001\n"
            "lineno=y|n              line number in traces?  y\n"
            "thread=y|n              thread in traces?       n\n"
            "doe=y|n                 dump on exit?           y\n"
            "msa=y|n                 Solaris microstates     n (y was for Solaris only)\n"
            "force=y|n               overwrite the file?     y (n: keep it, write name.<pid>)\n"
            "verbose=y|n             say each dump on stderr y\n"
            "\n"
            "Obsolete, accepted and ignored: gc_okay=y|n\n"
            "\n"
            "Examples: java -Xrunhprof:cpu=samples,file=log.txt,depth=3 FooClass\n"
            "          jvmpi java -agentlib:hprof=cpu=samples,interval=20 FooClass  (JDK 9 and later)\n"
            "          java -agentpath:<dir>/libjvmpi.so=hprof:heap=sites FooClass  (through the JVMPI layer)\n"
            "\n"
            "Heap profiling is on (heap=all) when neither cpu= nor monitor=y is given,\n"
            "as with the original HPROF; give heap= to combine it with them.\n");
}

/* One line naming the option and what is wrong with it. */
static int bad(const char *opt, const char *why)
{
    fprintf(stderr, "HPROF ERROR: bad option '%s': %s\n", HPROF_SHOWN(opt), why);
    return -1;
}

/* The y|n options.  Those with no field are taken and have no effect here:
 * gc_okay was already obsolete in JDK 5; primfields and primarrays chose
 * what JDK 8's binary heap dump left out (this one always writes both);
 * the rest were switches for debugging HPROF itself. */
static const struct {
    const char *name;
    int *field;
} yes_no_options[] = {
    {"monitor", &hprof_opt.monitor}, {"lineno", &hprof_opt.lineno}, {"thread", &hprof_opt.thread},
    {"doe", &hprof_opt.doe},         {"force", &hprof_opt.force},   {"verbose", &hprof_opt.verbose},
    {"msa", NULL},                   {"gc_okay", NULL},             {"primfields", NULL},
    {"primarrays", NULL},            {"coredump", NULL},            {"errorexit", NULL},
    {"pause", NULL},                 {"debug", NULL},               {"exitpause", NULL},
    {"precrash", NULL},
};

/* Debugging switches of JDK 5 to 8 with a free-form value: taken, no effect. */
static const char *const free_options[] = {"logflags", "debugflags", "X"};

/* A whole decimal number, digits only (JDK 8 refused "0x10" and "+5" too);
 * values past INT_MAX come out as INT_MAX. */
static int decimal(const char *val, long *out)
{
    if (*val == '\0' || strspn(val, "0123456789") != strlen(val)) {
        return -1;
    }
    errno = 0;
    long v = strtol(val, NULL, 10);
    *out = errno == ERANGE || v > INT_MAX ? INT_MAX : v;
    return 0;
}

static int one_option(char *opt)
{
    char *eq = strchr(opt, '=');
    if (strcmp(opt, "help") == 0) {
        return 1;
    }
    if (eq == NULL) {
        return bad(opt, "expected name=value (or help)");
    }
    *eq = '\0';
    const char *name = opt;
    const char *val = eq + 1;
    const char *why = NULL;
    for (size_t i = 0; i < sizeof yes_no_options / sizeof yes_no_options[0]; i++) {
        if (strcmp(name, yes_no_options[i].name) == 0) {
            int y = strcmp(val, "y") == 0;
            if (!y && strcmp(val, "n") != 0) {
                why = "the value must be y or n";
            } else if (y && strcmp(name, "msa") == 0) {
                why = "micro state accounting (msa=y) existed only in HPROF on Solaris";
            } else if (yes_no_options[i].field != NULL) {
                *yes_no_options[i].field = y;
            }
            goto done;
        }
    }
    for (size_t i = 0; i < sizeof free_options / sizeof free_options[0]; i++) {
        if (strcmp(name, free_options[i]) == 0) {
            goto done;
        }
    }
    if (strcmp(name, "heap") == 0) {
        /* Given twice, the kinds add up (heap=sites,heap=dump is heap=all), as in JDK 8. */
        if (strcmp(val, "dump") == 0) {
            hprof_opt.heap |= HPROF_HEAP_DUMP;
        } else if (strcmp(val, "sites") == 0) {
            hprof_opt.heap |= HPROF_HEAP_SITES;
        } else if (strcmp(val, "all") == 0) {
            hprof_opt.heap |= HPROF_HEAP_SITES | HPROF_HEAP_DUMP;
        } else {
            why = "heap must be dump, sites or all";
        }
        hprof_opt.heap_given = 1;
    } else if (strcmp(name, "cpu") == 0) {
        if (strcmp(val, "samples") == 0) {
            hprof_opt.cpu = HPROF_CPU_SAMPLES;
        } else if (strcmp(val, "times") == 0) {
            hprof_opt.cpu = HPROF_CPU_TIMES;
        } else if (strcmp(val, "old") == 0) {
            hprof_opt.cpu = HPROF_CPU_OLD;
        } else {
            why = "cpu must be samples, times or old";
        }
    } else if (strcmp(name, "format") == 0) {
        if (strcmp(val, "a") == 0) {
            hprof_opt.binary = 0;
        } else if (strcmp(val, "b") == 0) {
            hprof_opt.binary = 1;
        } else {
            why = "format must be a (ascii) or b (binary)";
        }
    } else if (strcmp(name, "file") == 0) {
        if (*val == '\0') {
            why = "file needs a name";
        } else {
            free(hprof_opt.file);
            hprof_opt.file = hprof_strdup(val);
        }
    } else if (strcmp(name, "net") == 0) {
        const char *colon = strrchr(val, ':');
        long port = 0;
        if (colon == NULL || colon == val || decimal(colon + 1, &port) != 0 || port <= 0 || port > 65535) {
            why = "net must be host:port, port 1..65535";
        } else {
            free(hprof_opt.net_host);
            hprof_opt.net_host = hprof_strdup(val);
            hprof_opt.net_host[colon - val] = '\0';
            hprof_opt.net_port = (int)port;
        }
    } else if (strcmp(name, "depth") == 0) {
        long d = 0;
        if (decimal(val, &d) != 0) {
            why = "depth must be a whole number, 0 or more";
        } else {
            hprof_opt.depth = d > MAX_DEPTH ? MAX_DEPTH : (int)d;
        }
    } else if (strcmp(name, "interval") == 0) {
        long ms = 0;
        if (decimal(val, &ms) != 0 || ms < 1) {
            why = "interval must be a whole number of milliseconds, 1 or more";
        } else {
            hprof_opt.interval = (int)ms;
        }
    } else if (strcmp(name, "cutoff") == 0) {
        char *end = NULL;
        double c = strtod(val, &end);
        /* Over 1 is allowed, as in JDK 8: it leaves every row out. */
        if (*val == '\0' || *end != '\0' || !isfinite(c) || c < 0.0) {
            why = "cutoff must be a number, 0 or more (0.0001 is one hundredth of a percent)";
        } else {
            hprof_opt.cutoff = c;
        }
    } else {
        why = "unknown option name (the option 'help' lists them all)";
    }
done:
    if (why != NULL) {
        *eq = '=';
        return bad(opt, why);
    }
    return 0;
}

int hprof_options_parse(const char *options)
{
    free(hprof_opt.file);
    free(hprof_opt.net_host);
    memset(&hprof_opt, 0, sizeof hprof_opt);
    hprof_opt.depth = 4;
    hprof_opt.cutoff = 0.0001;
    hprof_opt.lineno = 1;
    hprof_opt.thread = 0;
    hprof_opt.doe = 1;
    hprof_opt.interval = 10;
    hprof_opt.force = 1;
    hprof_opt.verbose = 1;

    int rc = 0;
    if (options != NULL && *options != '\0') {
        char *copy = hprof_strdup(options);
        char *p = copy;
        while (rc == 0 && p != NULL) {
            char *comma = strchr(p, ',');
            if (comma != NULL) {
                *comma = '\0';
            }
            if (*p == '\0' && comma == NULL && p != copy) {
                break; /* one trailing comma: JDK 8 took "cpu=samples," */
            }
            if (*p == '\0') {
                rc = bad(options, "an empty option in it (two commas in a row, or a comma first)");
            } else {
                rc = one_option(p);
            }
            p = comma != NULL ? comma + 1 : NULL;
        }
        free(copy);
    }
    if (rc != 0) {
        return rc;
    }
    if (!hprof_opt.heap_given && hprof_opt.cpu == HPROF_CPU_OFF && !hprof_opt.monitor) {
        hprof_opt.heap = HPROF_HEAP_SITES | HPROF_HEAP_DUMP;
    }
    if (hprof_opt.file == NULL) {
        hprof_opt.file = hprof_strdup(hprof_opt.binary ? "java.hprof" : "java.hprof.txt");
    }
    return 0;
}
