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

typedef enum { OPT_LEVEL, OPT_PATH, OPT_SECONDS, OPT_CHOICE } option_kind;

/* Every layer option.  A choice takes one of two words, the first being the
 * default, and sets its flag: true for `on`, false for the other word. */
typedef struct {
    const char *name;
    option_kind kind;
    size_t at; /* offset of the value in options_layer */
    const char *first, *second, *on;
} option;

static const option table[] = {
    {"log", OPT_LEVEL, offsetof(options_layer, log_level), NULL, NULL, NULL},
    {"logfile", OPT_PATH, offsetof(options_layer, log_file), NULL, NULL, NULL},
    {"caps", OPT_CHOICE, offsetof(options_layer, caps_all), "auto", "all", "all"},
    {"classcache", OPT_CHOICE, offsetof(options_layer, class_cache), "auto", "off", "auto"},
    {"vthreads", OPT_CHOICE, offsetof(options_layer, vthreads_carriers), "threads", "carriers", "carriers"},
    {"methods", OPT_CHOICE, offsetof(options_layer, methods_jvmti), "rewrite", "jvmti", "jvmti"},
    {"monitordump", OPT_CHOICE, offsetof(options_layer, monitordump_traces), "jdk5", "traces", "traces"},
    {"allocs", OPT_CHOICE, offsetof(options_layer, allocs_hooks), "auto", "hooks", "hooks"},
    {"ledger", OPT_PATH, offsetof(options_layer, ledger_file), NULL, NULL, NULL},
    {"ledgerhold", OPT_SECONDS, offsetof(options_layer, ledger_hold_s), NULL, NULL, NULL},
};
#define OPTIONS (sizeof table / sizeof table[0])

#define FIELD(out, o, type) ((type *)((char *)(out) + (o)->at))

static const option *option_named(const char *name, size_t len)
{
    for (size_t i = 0; i < OPTIONS; i++) {
        if (strlen(table[i].name) == len && strncmp(name, table[i].name, len) == 0) {
            return &table[i];
        }
    }
    return NULL;
}

/* "log=<level>, logfile=<path>, caps=<auto|all>, ...", for the error line
 * of an unknown option. */
static void known_options(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < OPTIONS && n < len; i++) {
        const option *o = &table[i];
        const char *sep = i > 0 ? ", " : "";
        if (o->kind == OPT_CHOICE) {
            n += (size_t)snprintf(buf + n, len - n, "%s%s=<%s|%s>", sep, o->name, o->first, o->second);
        } else {
            n += (size_t)snprintf(buf + n, len - n, "%s%s=<%s>", sep, o->name,
                                  o->kind == OPT_LEVEL ? "level" : o->kind == OPT_PATH ? "path" : "seconds");
        }
    }
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
    const option *o = option_named(name, strlen(name));
    if (o == NULL) {
        char known[512];
        known_options(known, sizeof known);
        snprintf(err, errlen, "JVMPI_LAYER_OPTIONS: unknown option '%s' (known: %s)",
                 log_shorten(name, shown, sizeof shown), known);
        return -1;
    }
    switch (o->kind) {
    case OPT_LEVEL:
        if (parse_level(value, FIELD(out, o, int)) != 0) {
            snprintf(err, errlen, "JVMPI_LAYER_OPTIONS: %s=%s: expected error, warn, info or debug", name,
                     log_shorten(value, shown, sizeof shown));
            return -1;
        }
        return 0;
    case OPT_PATH:
        return set_path(name, value, FIELD(out, o, char *), err, errlen);
    case OPT_SECONDS: {
        char *end = NULL;
        long s = strtol(value, &end, 10);
        if (*value == '\0' || *end != '\0' || s < 1 || s > LEDGER_HOLD_MAX) {
            snprintf(err, errlen, "JVMPI_LAYER_OPTIONS: %s=%s: expected a number of seconds from 1 to %d", name,
                     log_shorten(value, shown, sizeof shown), LEDGER_HOLD_MAX);
            return -1;
        }
        *FIELD(out, o, int) = (int)s;
        return 0;
    }
    case OPT_CHOICE:
        if (strcmp(value, o->first) != 0 && strcmp(value, o->second) != 0) {
            snprintf(err, errlen, "JVMPI_LAYER_OPTIONS: %s=%s: expected %s or %s", name,
                     log_shorten(value, shown, sizeof shown), o->first, o->second);
            return -1;
        }
        *FIELD(out, o, bool) = strcmp(value, o->on) == 0;
        return 0;
    }
    return -1;
}

int options_parse_layer(const char *text, options_layer *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out); /* no paths, no seconds */
    out->log_level = LOG_LEVEL_WARN;
    for (size_t i = 0; i < OPTIONS; i++) {
        if (table[i].kind == OPT_CHOICE) {
            *FIELD(out, &table[i], bool) = strcmp(table[i].first, table[i].on) == 0;
        }
    }
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
        const option *named = eq != NULL ? option_named(p, (size_t)(eq - p)) : NULL;
        if (named != NULL && named->kind == OPT_PATH) {
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
