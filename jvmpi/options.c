#include "options.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

int options_parse_agent(const char *text, options_agent *out, char *err, size_t errlen)
{
    out->agent = NULL;
    out->agent_options = NULL;
    if (text == NULL) {
        return 0;
    }
    if (*text == '\0') {
        /* "libjvmpi.so=" with nothing after: an agent was meant and lost;
         * without '=' the layer waits for -Xrun agents. */
        snprintf(err, errlen, "no agent named after '='");
        return -1;
    }
    const char *colon = strchr(text, ':');
    size_t name_len = colon != NULL ? (size_t)(colon - text) : strlen(text);
    if (name_len == 0) {
        char shown[LOG_SHORT_BUF];
        snprintf(err, errlen, "no agent name before ':' in \"%s\"", log_shorten(text, shown, sizeof shown));
        return -1;
    }
    out->agent = strndup(text, name_len);
    if (colon != NULL) {
        out->agent_options = strdup(colon + 1);
    }
    if (out->agent == NULL || (colon != NULL && out->agent_options == NULL)) {
        options_agent_free(out);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

void options_agent_free(options_agent *a)
{
    free(a->agent);
    free(a->agent_options);
    a->agent = a->agent_options = NULL;
}

static int parse_level(const char *v, int *level)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i < 4; i++) {
        if (strcmp(v, names[i]) == 0) {
            *level = i;
            return 0;
        }
    }
    return -1;
}

/* The options that take one of two words, and the flag each sets: true
 * for `on`, false for the other word. */
typedef struct {
    const char *name, *first, *second, *on;
    size_t flag; /* offset of the bool in options_layer */
} choice;

static const choice choices[] = {
    {"caps", "auto", "all", "all", offsetof(options_layer, caps_all)},
    {"classcache", "auto", "off", "auto", offsetof(options_layer, class_cache)},
    {"vthreads", "threads", "carriers", "carriers", offsetof(options_layer, vthreads_carriers)},
    {"methods", "rewrite", "jvmti", "jvmti", offsetof(options_layer, methods_jvmti)},
    {"monitordump", "jdk5", "traces", "traces", offsetof(options_layer, monitordump_traces)},
    {"allocs", "auto", "hooks", "hooks", offsetof(options_layer, allocs_hooks)},
};

#define KNOWN                                                                                                  \
    "log=<level>, logfile=<path>, caps=<auto|all>, classcache=<auto|off>, vthreads=<threads|carriers>, "       \
    "methods=<rewrite|jvmti>, monitordump=<jdk5|traces>, allocs=<auto|hooks>, ledger=<path>, ledgerhold=<seconds>"

/* Options whose value is a path, which may hold commas. */
static bool is_path_option(const char *name, size_t len)
{
    return (len == strlen("logfile") && strncmp(name, "logfile", len) == 0) ||
           (len == strlen("ledger") && strncmp(name, "ledger", len) == 0);
}

/* A path option's value: the old one replaced; -1 with the error line in err. */
static int set_path(const char *name, const char *value, char **slot, char *err, size_t errlen)
{
    if (*value == '\0') {
        snprintf(err, errlen, "JVMPI_LAYER_OPTIONS: %s= needs a path", name);
        return -1;
    }
    free(*slot);
    *slot = strdup(value);
    if (*slot == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

#define LEDGER_HOLD_MAX 3600

/* One name=value; returns 0, or -1 with the error line in err. */
static int one_option(const char *name, const char *value, options_layer *out, char *err, size_t errlen)
{
    char shown[LOG_SHORT_BUF];
    if (strcmp(name, "log") == 0) {
        if (parse_level(value, &out->log_level) != 0) {
            snprintf(err, errlen, "JVMPI_LAYER_OPTIONS: log=%s: expected error, warn, info or debug",
                     log_shorten(value, shown, sizeof shown));
            return -1;
        }
        return 0;
    }
    if (strcmp(name, "logfile") == 0) {
        return set_path(name, value, &out->log_file, err, errlen);
    }
    if (strcmp(name, "ledger") == 0) {
        return set_path(name, value, &out->ledger_file, err, errlen);
    }
    if (strcmp(name, "ledgerhold") == 0) {
        char *end = NULL;
        long s = strtol(value, &end, 10);
        if (*value == '\0' || *end != '\0' || s < 1 || s > LEDGER_HOLD_MAX) {
            snprintf(err, errlen, "JVMPI_LAYER_OPTIONS: ledgerhold=%s: expected a number of seconds from 1 to %d",
                     log_shorten(value, shown, sizeof shown), LEDGER_HOLD_MAX);
            return -1;
        }
        out->ledger_hold_s = (int)s;
        return 0;
    }
    for (size_t i = 0; i < sizeof choices / sizeof choices[0]; i++) {
        const choice *c = &choices[i];
        if (strcmp(name, c->name) == 0) {
            if (strcmp(value, c->first) != 0 && strcmp(value, c->second) != 0) {
                snprintf(err, errlen, "JVMPI_LAYER_OPTIONS: %s=%s: expected %s or %s", name,
                         log_shorten(value, shown, sizeof shown), c->first, c->second);
                return -1;
            }
            *(bool *)((char *)out + c->flag) = strcmp(value, c->on) == 0;
            return 0;
        }
    }
    snprintf(err, errlen, "JVMPI_LAYER_OPTIONS: unknown option '%s' (known: " KNOWN ")",
             log_shorten(name, shown, sizeof shown));
    return -1;
}

int options_parse_layer(const char *text, options_layer *out, char *err, size_t errlen)
{
    out->log_level = LOG_LEVEL_WARN;
    out->log_file = NULL;
    out->caps_all = false;
    out->class_cache = true;
    out->vthreads_carriers = false;
    out->methods_jvmti = false;
    out->monitordump_traces = false;
    out->allocs_hooks = false;
    out->ledger_file = NULL;
    out->ledger_hold_s = 0;
    if (text == NULL || *text == '\0') {
        return 0; /* set but empty: as not set */
    }
    char *copy = strdup(text);
    if (copy == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    char *p = copy;
    for (bool last = false; rc == 0 && !last;) {
        char *end = p + strcspn(p, ",");
        char *eq = memchr(p, '=', (size_t)(end - p));
        if (eq != NULL && is_path_option(p, (size_t)(eq - p))) {
            /* A path may hold commas: what follows one is still the path
             * unless it reads as an option (name=value). */
            while (*end == ',' && memchr(end + 1, '=', strcspn(end + 1, ",")) == NULL) {
                end = end + 1 + strcspn(end + 1, ",");
            }
        }
        last = *end == '\0';
        *end = '\0';
        if (eq != NULL) {
            *eq = '\0';
        }
        if (*p == '\0' || p == eq) {
            /* Nothing to take, but a typo's all the same (",," or "=x"):
             * refused like any other, or the option meant is lost unseen. */
            char shown[LOG_SHORT_BUF];
            snprintf(err, errlen, "JVMPI_LAYER_OPTIONS: %s in \"%s\" (expected name=value[,name=value...])",
                     p == eq ? "no option name before '='" : "an empty option",
                     log_shorten(text, shown, sizeof shown));
            rc = -1;
        } else {
            rc = one_option(p, eq != NULL ? eq + 1 : "", out, err, errlen);
        }
        p = end + 1;
    }
    free(copy);
    if (rc == 0 && out->ledger_hold_s > 0 && out->ledger_file == NULL) {
        snprintf(err, errlen, "JVMPI_LAYER_OPTIONS: ledgerhold= needs ledger=<path>: the VM is held once the ledger is written");
        rc = -1;
    }
    if (rc != 0) {
        options_layer_free(out);
    }
    return rc;
}

void options_layer_free(options_layer *o)
{
    free(o->log_file);
    o->log_file = NULL;
    free(o->ledger_file);
    o->ledger_file = NULL;
}
