/*
 * hprof_options.c - the -Xrunhprof option string.
 *
 * The options and their defaults are those of the usage table in the JVMPI
 * spec (section 7.1).  A bad option stops the VM from starting, as it did:
 * silently profiling something else than what was asked for helps nobody.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "hprof.h"

hprof_options hprof_opt;

void hprof_options_usage(FILE *to)
{
    fprintf(to,
            "HPROF usage: -Xrunhprof[:help]|[option=value, ...]\n"
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
            "cutoff=value            output cutoff point     0.0001\n"
            "lineno=y|n              line number in traces?  y\n"
            "thread=y|n              thread in traces?       n\n"
            "doe=y|n                 dump on exit?           y\n"
            "\n"
            "Example: java -Xrunhprof:cpu=samples,file=log.txt,depth=3 FooClass\n"
            "(through the JVMPI layer: java -agentpath:<dir>/libjvmpi.so=hprof:cpu=samples FooClass)\n"
            "\n"
            "Heap profiling is on (heap=all) when neither cpu= nor monitor=y is given,\n"
            "as with the original HPROF; give heap= to combine it with them.\n");
}

static int bad(const char *opt, const char *why)
{
    hprof_options_usage(stderr);
    fprintf(stderr, "HPROF ERROR: bad option '%s': %s\n", HPROF_SHOWN(opt), why);
    return -1;
}

static int yes_no(const char *opt, const char *val, int *out)
{
    if (strcmp(val, "y") == 0) {
        *out = 1;
        return 0;
    }
    if (strcmp(val, "n") == 0) {
        *out = 0;
        return 0;
    }
    return bad(opt, "the value must be y or n");
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
    int rc = 0;
    if (strcmp(name, "heap") == 0) {
        if (strcmp(val, "dump") == 0) {
            hprof_opt.heap = HPROF_HEAP_DUMP;
        } else if (strcmp(val, "sites") == 0) {
            hprof_opt.heap = HPROF_HEAP_SITES;
        } else if (strcmp(val, "all") == 0) {
            hprof_opt.heap = HPROF_HEAP_SITES | HPROF_HEAP_DUMP;
        } else {
            rc = -2;
        }
        hprof_opt.heap_given = 1;
        if (rc == -2) {
            *eq = '=';
            return bad(opt, "heap must be dump, sites or all");
        }
    } else if (strcmp(name, "cpu") == 0) {
        if (strcmp(val, "samples") == 0) {
            hprof_opt.cpu = HPROF_CPU_SAMPLES;
        } else if (strcmp(val, "times") == 0) {
            hprof_opt.cpu = HPROF_CPU_TIMES;
        } else if (strcmp(val, "old") == 0) {
            hprof_opt.cpu = HPROF_CPU_OLD;
        } else {
            *eq = '=';
            return bad(opt, "cpu must be samples, times or old");
        }
    } else if (strcmp(name, "monitor") == 0) {
        rc = yes_no(name, val, &hprof_opt.monitor);
    } else if (strcmp(name, "format") == 0) {
        if (strcmp(val, "a") == 0) {
            hprof_opt.binary = 0;
        } else if (strcmp(val, "b") == 0) {
            hprof_opt.binary = 1;
        } else {
            *eq = '=';
            return bad(opt, "format must be a (ascii) or b (binary)");
        }
    } else if (strcmp(name, "file") == 0) {
        if (*val == '\0') {
            *eq = '=';
            return bad(opt, "file needs a name");
        }
        free(hprof_opt.file);
        hprof_opt.file = hprof_strdup(val);
    } else if (strcmp(name, "net") == 0) {
        const char *colon = strrchr(val, ':');
        char *end = NULL;
        long port = colon != NULL ? strtol(colon + 1, &end, 10) : 0;
        if (colon == NULL || colon == val || end == colon + 1 || *end != '\0' || port <= 0 || port > 65535) {
            *eq = '=';
            return bad(opt, "net must be host:port, port 1..65535");
        }
        free(hprof_opt.net_host);
        hprof_opt.net_host = hprof_strdup(val);
        hprof_opt.net_host[colon - val] = '\0';
        hprof_opt.net_port = (int)port;
    } else if (strcmp(name, "depth") == 0) {
        char *end = NULL;
        errno = 0;
        long d = strtol(val, &end, 10);
        if (*val == '\0' || *end != '\0' || errno != 0 || d < 0 || d > 1024) {
            *eq = '=';
            return bad(opt, "depth must be a number 0..1024");
        }
        hprof_opt.depth = (int)d;
    } else if (strcmp(name, "cutoff") == 0) {
        char *end = NULL;
        errno = 0;
        double c = strtod(val, &end);
        if (*val == '\0' || *end != '\0' || errno != 0 || !(c >= 0.0 && c <= 1.0)) {
            *eq = '=';
            return bad(opt, "cutoff must be a number between 0 and 1");
        }
        hprof_opt.cutoff = c;
    } else if (strcmp(name, "lineno") == 0) {
        rc = yes_no(name, val, &hprof_opt.lineno);
    } else if (strcmp(name, "thread") == 0) {
        rc = yes_no(name, val, &hprof_opt.thread);
    } else if (strcmp(name, "doe") == 0) {
        rc = yes_no(name, val, &hprof_opt.doe);
    } else {
        *eq = '=';
        return bad(opt, "unknown option name");
    }
    return rc;
}

int hprof_options_parse(const char *options)
{
    memset(&hprof_opt, 0, sizeof hprof_opt);
    hprof_opt.depth = 4;
    hprof_opt.cutoff = 0.0001;
    hprof_opt.lineno = 1;
    hprof_opt.thread = 0;
    hprof_opt.doe = 1;

    int rc = 0;
    if (options != NULL && *options != '\0') {
        char *copy = hprof_strdup(options);
        char *p = copy;
        while (rc == 0 && p != NULL) {
            char *comma = strchr(p, ',');
            if (comma != NULL) {
                *comma = '\0';
            }
            if (*p == '\0') {
                rc = bad("", "empty option (two commas, or a trailing comma)");
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
