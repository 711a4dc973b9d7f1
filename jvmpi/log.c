#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int log_level = LOG_LEVEL_WARN;
static FILE *log_out;
static char *log_path;
static FILE *log_failed; /* a log file that failed, kept open */

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
    free(log_path);
    log_path = strdup(path);
    log_out = f;
    return 0;
}

/* 0, or -1 when the line could not be written. */
static int put(FILE *out, const char *line, size_t len)
{
    bool ok = fwrite(line, 1, len, out) == len;
    return fflush(out) == 0 && ok ? 0 : -1;
}

/* A log file that cannot take a line (a full disk) is said once, on
 * stderr, and stderr takes its lines from then on: none is lost unseen. */
static void log_file_failed(void)
{
    int err = errno;
    /* Not closed: another thread may be writing to it this moment. */
    FILE *f = __atomic_exchange_n(&log_out, NULL, __ATOMIC_ACQ_REL);
    if (f == NULL) {
        return; /* said already, by the thread that failed first */
    }
    log_failed = f; /* still reachable: not a leak */
    char shown[LOG_SHORT_BUF];
    fprintf(stderr, "JVMPI layer: error: cannot write to logfile %s: %s; messages go to stderr from now on\n",
            log_shorten(log_path, shown, sizeof shown), strerror(err));
    fflush(stderr);
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
    FILE *file = __atomic_load_n(&log_out, __ATOMIC_ACQUIRE);
    FILE *out = file != NULL ? file : stderr;
    if (put(out, line, len + 1) != 0 && out != stderr) {
        log_file_failed();
        out = stderr;
        put(out, line, len + 1);
    }
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
