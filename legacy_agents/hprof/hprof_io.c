/*
 * hprof_io.c - where the profile goes: a file or a TCP socket, the same bytes
 * either way, through one buffer.  Ascii lines are printf'ed; binary records
 * are built in memory so that their length field is exact.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "hprof.h"

#define OUT_BUF_SIZE (64 * 1024)
#define MAX_NESTED_RECORDS 8

static int out_fd = -1;
static int out_failed;
static unsigned char out_buf[OUT_BUF_SIZE];
static size_t out_len;
static uint64_t start_us;   /* header time, microseconds since the epoch */

typedef struct {
    int tag;
    unsigned char *p;
    size_t len, cap;
} record;

static record records[MAX_NESTED_RECORDS];
static int depth;

static hprof_bmap strings;
static uint64_t next_string_id = 1;

static uint64_t now_us(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

static void out_write(const void *p, size_t n)
{
    const unsigned char *b = p;
    while (n > 0 && !out_failed) {
        ssize_t w = write(out_fd, b, n);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            hprof_error("writing the profile failed: %s; nothing more is written", strerror(errno));
            out_failed = 1;
            return;
        }
        b += w;
        n -= (size_t)w;
    }
}

void hprof_io_flush(void)
{
    if (out_fd >= 0 && out_len > 0) {
        out_write(out_buf, out_len);
    }
    out_len = 0;
}

static void out_put(const void *p, size_t n)
{
    if (out_fd < 0) {
        return;
    }
    if (out_len + n > sizeof out_buf) {
        hprof_io_flush();
        if (n > sizeof out_buf) {
            out_write(p, n);
            return;
        }
    }
    memcpy(out_buf + out_len, p, n);
    out_len += n;
}

static int open_socket(const char *host, int port)
{
    struct addrinfo hints, *res = NULL, *ai;
    char service[16];
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(service, sizeof service, "%d", port);
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        hprof_error("cannot resolve host '%s': %s", HPROF_SHOWN(host), gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    int err = 0;
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            break;
        }
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        hprof_error("cannot connect to %s:%d: %s", HPROF_SHOWN(host), port, strerror(err));
    }
    return fd;
}

/* force=n and the file is there: it is kept, and the profile goes to a name
 * with the process id in it, where JDK 8's HPROF put it: java.hprof.txt ->
 * java.hprof.<pid>.txt (a .txt of any case stays last; other ascii names
 * get .txt after the pid), java.hprof -> java.hprof.<pid> in binary. */
static void keep_existing_file(void)
{
    if (access(hprof_opt.file, F_OK) != 0) {
        return;
    }
    const char *name = hprof_opt.file;
    size_t n = strlen(name);
    const char *suffix = hprof_opt.binary ? "" : ".txt";
    size_t prefix = n;
    if (!hprof_opt.binary && n >= 4 && strcasecmp(name + n - 4, ".txt") == 0) {
        suffix = name + n - 4;
        prefix = n - 4;
    }
    size_t len = n + 32;
    char *unique = hprof_calloc(len, 1);
    snprintf(unique, len, "%.*s.%ld%s", (int)prefix, name, (long)getpid(), suffix);
    free(hprof_opt.file);
    hprof_opt.file = unique;
}

int hprof_io_open(void)
{
    hprof_bmap_init(&strings, 4096);
    if (hprof_opt.net_host != NULL) {
        out_fd = open_socket(hprof_opt.net_host, hprof_opt.net_port);
    } else {
        if (!hprof_opt.force) {
            keep_existing_file();
        }
        out_fd = open(hprof_opt.file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out_fd < 0) {
            hprof_error("cannot open %s: %s", HPROF_SHOWN(hprof_opt.file), strerror(errno));
        }
    }
    if (out_fd < 0) {
        return -1;
    }
    start_us = now_us();
    if (hprof_opt.binary) {
        static const char magic[] = "JAVA PROFILE 1.0.1";
        uint64_t ms = start_us / 1000;
        out_put(magic, sizeof magic); /* with its NUL */
        hprof_u4(8);
        hprof_u4((uint32_t)(ms >> 32));
        hprof_u4((uint32_t)ms);
    }
    return 0;
}

int hprof_io_failed(void) { return out_failed; }

void hprof_io_close(void)
{
    hprof_io_flush();
    if (out_fd >= 0) {
        if (hprof_opt.net_host != NULL) {
            shutdown(out_fd, SHUT_WR);
        }
        /* A file system may say only here that the data did not fit. */
        if (close(out_fd) != 0 && errno != EINTR && !out_failed) {
            hprof_error("writing the profile failed: %s; it is incomplete", strerror(errno));
            out_failed = 1;
        }
    }
    out_fd = -1;
}

void hprof_printf(const char *fmt, ...)
{
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if ((size_t)n < sizeof small) {
        out_put(small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (big == NULL) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    out_put(big, (size_t)n);
    free(big);
}

/* ---- binary ------------------------------------------------------------ */

void hprof_bytes(const void *p, size_t n)
{
    if (depth == 0) {
        out_put(p, n);
        return;
    }
    record *r = &records[depth - 1];
    if (r->len + n > r->cap) {
        size_t cap = r->cap ? r->cap : 256;
        while (cap < r->len + n) {
            cap *= 2;
        }
        unsigned char *grown = realloc(r->p, cap);
        if (grown == NULL) {
            hprof_error("out of memory building a record of %zu bytes", r->len + n);
            return;
        }
        r->p = grown;
        r->cap = cap;
    }
    memcpy(r->p + r->len, p, n);
    r->len += n;
}

void hprof_u1(unsigned v)
{
    unsigned char b = (unsigned char)v;
    hprof_bytes(&b, 1);
}

void hprof_u2(unsigned v)
{
    unsigned char b[2] = {(unsigned char)(v >> 8), (unsigned char)v};
    hprof_bytes(b, 2);
}

void hprof_u4(uint32_t v)
{
    unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
                          (unsigned char)v};
    hprof_bytes(b, 4);
}

void hprof_u8(uint64_t v)
{
    hprof_u4((uint32_t)(v >> 32));
    hprof_u4((uint32_t)v);
}

void hprof_id(uint64_t v) { hprof_u8(v); }

void hprof_record_begin(int tag)
{
    if (depth == MAX_NESTED_RECORDS) {
        hprof_error("internal: records nested too deep");
        abort();
    }
    record *r = &records[depth++];
    r->tag = tag;
    r->len = 0;
}

void hprof_record_end(void)
{
    record *r = &records[--depth];
    unsigned char head[9];
    uint32_t us = (uint32_t)(now_us() - start_us);
    uint32_t len = (uint32_t)r->len;
    if (r->len > 0xffffffffu) {
        hprof_error("a record of %zu bytes does not fit the format; it is cut", r->len);
        len = 0xffffffffu;
    }
    head[0] = (unsigned char)r->tag;
    head[1] = (unsigned char)(us >> 24);
    head[2] = (unsigned char)(us >> 16);
    head[3] = (unsigned char)(us >> 8);
    head[4] = (unsigned char)us;
    head[5] = (unsigned char)(len >> 24);
    head[6] = (unsigned char)(len >> 16);
    head[7] = (unsigned char)(len >> 8);
    head[8] = (unsigned char)len;
    /* Records nested in this one were already written: they come first. */
    out_put(head, sizeof head);
    out_put(r->p, len);
    /* A heap dump's buffer is large and rare: give it back. */
    if (r->cap > 1024 * 1024) {
        free(r->p);
        r->p = NULL;
        r->cap = 0;
    }
    r->len = 0;
}

uint64_t hprof_string_id(const char *s)
{
    if (s == NULL) {
        s = "";
    }
    size_t len = strlen(s);
    void *v = hprof_bmap_get(&strings, s, len);
    if (v != NULL) {
        return (uint64_t)(uintptr_t)v;
    }
    uint64_t id = next_string_id++;
    hprof_bmap_put(&strings, s, len, (void *)(uintptr_t)id);
    hprof_record_begin(HPROF_UTF8);
    hprof_id(id);
    hprof_bytes(s, len);
    hprof_record_end();
    return id;
}
