#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
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

/* call, when not NULL, heads the line as "<call>: " (a refused call's). */
static void write_line(log_level_t level, const char *call, const char *fmt, va_list ap)
{
    /* One buffer, one write: lines from several threads do not interleave.
     * A line longer than the buffer gets one of its size, so that no
     * reason is ever cut off; what a user typed is shortened where it is
     * quoted (log_shorten). */
    char small[1024];
    char *line = small;
    int n = snprintf(small, sizeof small, "JVMPI layer: %s: %s%s", level_names[level], call != NULL ? call : "",
                     call != NULL ? ": " : "");
    if (n < 0 || (size_t)n >= sizeof small - 1) {
        n = (int)strlen(small); /* no call name is this long; cut if one were */
    }
    va_list again;
    va_copy(again, ap);
    int body = vsnprintf(small + n, sizeof small - (size_t)n - 1, fmt, ap);
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

void log_write(log_level_t level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    write_line(level, NULL, fmt, ap);
    va_end(ap);
}

/* ---- refused calls ------------------------------------------------------ */

/* More kinds than the layer has refusal lines (about a hundred call and
 * reason pairs); should they ever run out, a refusal of a kind without a
 * slot is printed every time, never hidden. */
#define KINDS 256
/* Set in a kind's count by the summary: later refusals are printed. */
#define CLOSED (UINT64_C(1) << 63)

typedef struct {
    _Atomic uint64_t key;        /* hash of call and fmt; 0: free */
    _Atomic(const char *) call;  /* for the summary; set before the count grows */
    _Atomic(const char *) fmt;
    _Atomic uint64_t seen;       /* refusals of this kind, | CLOSED after the summary */
} refusal_kind;

static refusal_kind kinds[KINDS];
/* The agent may suspend a thread anywhere in a refused call (JVMPI's
 * thread-suspended mode): counting one must hold nothing another waits on. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_POINTER_LOCK_FREE == 2, "lock-free counts");

/* By text, not by address: the same literal in two files may be two
 * copies.  Two kinds with one 64-bit hash would share a count, which over
 * a hundred kinds is as good as impossible. */
static uint64_t kind_key(const char *call, const char *fmt)
{
    uint64_t h = UINT64_C(14695981039346656037); /* FNV-1a */
    for (const char *p = call;; p++) {
        h = (h ^ (unsigned char)*p) * UINT64_C(1099511628211);
        if (*p == '\0') {
            break; /* the NUL keeps "a" + "b: c" apart from "a: b" + "c" */
        }
    }
    for (const char *p = fmt; *p != '\0'; p++) {
        h = (h ^ (unsigned char)*p) * UINT64_C(1099511628211);
    }
    return h != 0 ? h : 1;
}

/* Claimed with one compare-and-swap of the key, so no thread ever waits
 * on another (one may be suspended by the agent mid-call). */
static refusal_kind *kind_of(const char *call, const char *fmt)
{
    uint64_t key = kind_key(call, fmt);
    for (unsigned i = 0; i < KINDS; i++) {
        refusal_kind *k = &kinds[(key + i) % KINDS];
        uint64_t now = atomic_load_explicit(&k->key, memory_order_acquire);
        if (now == 0 && atomic_compare_exchange_strong(&k->key, &now, key)) {
            now = key;
        }
        if (now == key) {
            return k;
        }
    }
    return NULL;
}

/* The reason as a user reads it: fmt with each value shown as "...".
 * Longer than any reason the layer gives, so none is cut. */
#define SHAPE_BUF 512
static void reason_shape(const char *fmt, char *buf, size_t size)
{
    size_t n = 0;
    for (const char *p = fmt; *p != '\0' && n + 4 < size; p++) {
        if (*p != '%') {
            buf[n++] = *p;
        } else if (p[1] == '%') {
            buf[n++] = '%';
            p++;
        } else {
            p += strspn(p + 1, "-+ #0123456789.*hlLqjzt");
            if (p[1] == '\0') {
                break;
            }
            p++; /* the conversion's letter */
            memcpy(buf + n, "...", 3);
            n += 3;
        }
    }
    buf[n] = '\0';
}

/* 82851 as 82,851: a count of refusals is read at a glance. */
static const char *grouped(uint64_t v, char buf[32])
{
    char digits[24];
    int len = snprintf(digits, sizeof digits, "%" PRIu64, v);
    int n = 0;
    for (int i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0) {
            buf[n++] = ',';
        }
        buf[n++] = digits[i];
    }
    buf[n] = '\0';
    return buf;
}

void log_refused(const char *call, const char *fmt, ...)
{
    refusal_kind *k = kind_of(call, fmt);
    uint64_t nth = 0; /* 0: printed whatever the count */
    if (k != NULL) {
        if (atomic_load_explicit(&k->call, memory_order_relaxed) == NULL) {
            /* Racing threads store equal text: any of them will do. */
            atomic_store_explicit(&k->call, call, memory_order_relaxed);
            atomic_store_explicit(&k->fmt, fmt, memory_order_relaxed);
        }
        uint64_t before = atomic_fetch_add(&k->seen, 1);
        nth = (before & CLOSED) ? 0 : before + 1;
    }
    if (nth > LOG_REFUSALS_SHOWN + 1) {
        return;
    }
    if (nth == LOG_REFUSALS_SHOWN + 1) {
        char shape[SHAPE_BUF];
        reason_shape(fmt, shape, sizeof shape);
        log_write(LOG_LEVEL_ERROR,
                  "%s: further calls refused for the same reason (%s) are counted, not printed; "
                  "their number comes when the VM ends",
                  call, shape);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    write_line(LOG_LEVEL_ERROR, call, fmt, ap);
    va_end(ap);
}

void log_refusals_summary(void)
{
    for (unsigned i = 0; i < KINDS; i++) {
        refusal_kind *k = &kinds[i];
        /* The count and the closing in one step: a refusal either is in
         * this number or sees CLOSED and prints its own line. */
        uint64_t seen = atomic_fetch_or(&k->seen, CLOSED);
        const char *call = atomic_load_explicit(&k->call, memory_order_relaxed);
        const char *fmt = atomic_load_explicit(&k->fmt, memory_order_relaxed);
        if ((seen & CLOSED) || seen <= LOG_REFUSALS_SHOWN || call == NULL || fmt == NULL) {
            continue;
        }
        char shape[SHAPE_BUF], count[32];
        reason_shape(fmt, shape, sizeof shape);
        log_write(LOG_LEVEL_ERROR, "%s: %s more calls refused for the same reason: %s", call,
                  grouped(seen - LOG_REFUSALS_SHOWN, count), shape);
    }
}

void log_refusals_reset(void)
{
    for (unsigned i = 0; i < KINDS; i++) {
        atomic_store(&kinds[i].seen, 0);
        atomic_store(&kinds[i].call, NULL);
        atomic_store(&kinds[i].fmt, NULL);
        atomic_store(&kinds[i].key, 0);
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
