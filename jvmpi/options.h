/*
 * options - the two option strings the layer reads:
 *   -agentpath:libjvmpi.so=<agent>[:<agent options>]   (what followed -Xrun)
 *   JVMPI_LAYER_OPTIONS=log=<error|warn|info|debug>[,logfile=<path>][,caps=<auto|all>][,classcache=<auto|off>][,vthreads=<threads|carriers>][,methods=<rewrite|jvmti>][,monitordump=<jdk5|traces>][,allocs=<auto|hooks>]
 *                       [,ledger=<path>][,ledgerhold=<seconds>]
 */
#ifndef JVMPI_OPTIONS_H_
#define JVMPI_OPTIONS_H_

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *agent;          /* NULL: no '=' at all; wait for -Xrun agents */
    char *agent_options;  /* exactly the text after the first ':'; NULL when there was no ':' */
} options_agent;

/* Returns 0, or -1 with a one-line reason in err. */
int options_parse_agent(const char *text, options_agent *out, char *err, size_t errlen);
void options_agent_free(options_agent *a);

typedef struct {
    int log_level;        /* log_level_t */
    char *log_file;
    bool caps_all;        /* caps=all: take every costly capability up front */
    bool class_cache;     /* classcache=auto (true) or off */
    bool vthreads_carriers; /* vthreads=carriers (true) or threads */
    bool methods_jvmti;   /* methods=jvmti (true) or rewrite */
    bool monitordump_traces; /* monitordump=traces (true) or jdk5 */
    bool allocs_hooks;    /* allocs=hooks (true) or auto */
    char *ledger_file;    /* ledger=<path>: NULL when not given */
    int ledger_hold_s;    /* ledgerhold=<seconds>: 0 when not given */
} options_layer;

int options_parse_layer(const char *text, options_layer *out, char *err, size_t errlen);
void options_layer_free(options_layer *o);

#endif
