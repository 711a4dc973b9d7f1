#include "log.h"

#include <stdarg.h>
#include <stdlib.h>
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

static void put(FILE *out, const char *line, size_t len)
{
    fwrite(line, 1, len, out);
    fflush(out);
}

void log_write(log_level_t level, const char *fmt, ...)
{
    /* One buffer, one write: lines from several threads do not interleave.
     * A line longer than the buffer gets one of its size, so that no
     * reason is ever cut off; what a user typed is shortened where it is
     * quoted (log_shorten). */
    char small[1024];
    char *line = small;
    int n = snprintf(small, sizeof small, "JVMPI layer: %s: ", level_names[level]);
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int body = vsnprintf(small + n, sizeof small - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (body > 0 && (size_t)(n + body) + 2 > sizeof small) {
        char *big = malloc((size_t)(n + body) + 2);
        if (big != NULL) {
            memcpy(big, small, (size_t)n);
            vsnprintf(big + n, (size_t)body + 1, fmt, again);
            line = big;
        }
    }
    va_end(again);
    size_t len = strlen(line);
    line[len] = '\n';
    FILE *out = log_out != NULL ? log_out : stderr;
    put(out, line, len + 1);
    /* An error may be what stops the VM: the person at the terminal must
     * see it even when messages go to a file. */
    if (level == LOG_LEVEL_ERROR && out != stderr) {
        put(stderr, line, len + 1);
    }
    if (line != small) {
        free(line);
    }
}

const char *log_shorten(const char *text, char *buf, size_t size)
{
    if (text == NULL) {
        return "(null)";
    }
    size_t len = strlen(text);
    if (len <= LOG_SHORT_MAX) {
        return text;
    }
    snprintf(buf, size, "%.*s... (%zu bytes in all)", (int)(LOG_SHORT_MAX - 20), text, len);
    return buf;
}
