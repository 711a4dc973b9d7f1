#include "log.h"

#include <stdarg.h>
#include <string.h>

int log_level = LOG_LEVEL_WARN;
static FILE *log_out;

static const char *const level_names[] = {"error", "warning", "info", "debug"};

void log_set_level(log_level_t level) { log_level = (int)level; }

int log_set_file(const char *path)
{
    if (path == NULL || *path == '\0') {
        return 0;
    }
    FILE *f = fopen(path, "a");
    if (f == NULL) {
        return -1;
    }
    setvbuf(f, NULL, _IOLBF, 0);
    log_out = f;
    return 0;
}

void log_write(log_level_t level, const char *fmt, ...)
{
    /* One buffer, one write: lines from several threads do not interleave. */
    char line[1024];
    int n = snprintf(line, sizeof line, "JVMPI layer: %s: ", level_names[level]);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = strlen(line);
    line[len] = '\n';
    FILE *out = log_out != NULL ? log_out : stderr;
    fwrite(line, 1, len + 1, out);
    fflush(out);
}
