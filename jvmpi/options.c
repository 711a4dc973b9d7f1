#include "options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

int options_parse_agent(const char *text, options_agent *out, char *err, size_t errlen)
{
    out->agent = NULL;
    out->agent_options = NULL;
    if (text == NULL || *text == '\0') {
        return 0;
    }
    const char *colon = strchr(text, ':');
    size_t name_len = colon != NULL ? (size_t)(colon - text) : strlen(text);
    if (name_len == 0) {
        snprintf(err, errlen, "no agent name before ':' in \"%s\"", text);
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

/* An option that takes one of two words: 0 for `first`, 1 for `second`, or
 * -1 with the error line in err. */
static int parse_choice(const char *name, const char *value, const char *first, const char *second, char *err,
                        size_t errlen)
{
    if (strcmp(value, first) == 0) {
        return 0;
    }
    if (strcmp(value, second) == 0) {
        return 1;
    }
    snprintf(err, errlen, "JVMPI_LAYER_OPTIONS: %s=%s: expected %s or %s", name, value, first, second);
    return -1;
}

int options_parse_layer(const char *text, options_layer *out, char *err, size_t errlen)
{
    out->log_level = LOG_LEVEL_WARN;
    out->log_file = NULL;
    out->caps_all = false;
    out->class_cache = true;
    out->vthreads_carriers = false;
    if (text == NULL) {
        return 0;
    }
    char *copy = strdup(text), *save = NULL;
    if (copy == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        const char *value = eq != NULL ? eq + 1 : "";
        if (eq != NULL) {
            *eq = '\0';
        }
        if (strcmp(tok, "log") == 0) {
            if (parse_level(value, &out->log_level) != 0) {
                snprintf(err, errlen, "JVMPI_LAYER_OPTIONS: log=%s: expected error, warn, info or debug", value);
                rc = -1;
                break;
            }
        } else if (strcmp(tok, "logfile") == 0) {
            if (*value == '\0') {
                snprintf(err, errlen, "JVMPI_LAYER_OPTIONS: logfile= needs a path");
                rc = -1;
                break;
            }
            free(out->log_file);
            out->log_file = strdup(value);
        } else if (strcmp(tok, "caps") == 0) {
            int c = parse_choice(tok, value, "auto", "all", err, errlen);
            if (c < 0) {
                rc = -1;
                break;
            }
            out->caps_all = c == 1;
        } else if (strcmp(tok, "classcache") == 0) {
            int c = parse_choice(tok, value, "auto", "off", err, errlen);
            if (c < 0) {
                rc = -1;
                break;
            }
            out->class_cache = c == 0;
        } else if (strcmp(tok, "vthreads") == 0) {
            int c = parse_choice(tok, value, "threads", "carriers", err, errlen);
            if (c < 0) {
                rc = -1;
                break;
            }
            out->vthreads_carriers = c == 1;
        } else {
            snprintf(err, errlen,
                     "JVMPI_LAYER_OPTIONS: unknown option '%s' (known: log=<level>, logfile=<path>, caps=<auto|all>, "
                     "classcache=<auto|off>, vthreads=<threads|carriers>)",
                     tok);
            rc = -1;
            break;
        }
    }
    free(copy);
    if (rc != 0) {
        options_layer_free(out);
    }
    return rc;
}

void options_layer_free(options_layer *o)
{
    free(o->log_file);
    o->log_file = NULL;
}
