/*
 * cpuclock.c - the calling thread's CPU time.  See cpuclock.h.
 */
#include "cpuclock.h"

#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* As tls.h's TLS_FAST; this module needs nothing else of the layer. */
#define CLOCK_TLS __thread __attribute__((tls_model("initial-exec")))

typedef struct {
    volatile struct perf_event_mmap_page *page;
    int fd;
    uint32_t seq;       /* the page's sequence at the last exact reading */
    int64_t cpu_ns;     /* that reading */
    int64_t wall_ns;    /* the monotonic clock then */
    uint64_t tsc;       /* the time-stamp counter then */
    int64_t last_ns;    /* the last reading returned */
} thread_clock;

static CLOCK_TLS thread_clock *mine;
static CLOCK_TLS int state; /* 0 not tried, 1 fast, -1 slow */
/* perf_event_open refused once: not asked again by every thread. */
static _Atomic bool refused;
static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static int64_t exact_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) {
        return 0;
    }
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The time-stamp counter stands in for the monotonic clock where the kernel
 * keeps its own time with it (so it runs at one rate, on every CPU alike):
 * reading it costs about 9 ns here against 21 ns for the vDSO's clock, and
 * cpu=times reads the clock at every method entry and exit.  Its rate is
 * learnt from the monotonic clock over the process's first CALIBRATE_NS of
 * exact readings; until then, and where it cannot serve, the vDSO's clock. */
#define CALIBRATE_NS 50000000LL
enum { TSC_UNKNOWN, TSC_CALIBRATING, TSC_READY, TSC_UNUSABLE };
static _Atomic int tsc_state = TSC_UNKNOWN;
static _Atomic uint64_t tsc_mult; /* nanoseconds per tick, times 2^32 */
static pthread_mutex_t calibration_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t cal_wall;
static uint64_t cal_tsc;

static uint64_t tsc_now(void)
{
#if defined(__x86_64__)
    return __rdtsc();
#else
    return 0;
#endif
}

static bool kernel_clock_is_tsc(void)
{
#if defined(__x86_64__)
    char name[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f != NULL) {
        if (fgets(name, sizeof name, f) == NULL) {
            name[0] = '\0';
        }
        fclose(f);
    }
    return strcmp(name, "tsc\n") == 0;
#else
    return false;
#endif
}

/* One exact reading pair more for the rate: the first is kept, and one
 * CALIBRATE_NS later the rate is known. */
static void calibrate(int64_t wall, uint64_t tsc)
{
    pthread_mutex_lock(&calibration_lock);
    int how = atomic_load(&tsc_state);
    if (how == TSC_UNKNOWN) {
        how = kernel_clock_is_tsc() ? TSC_CALIBRATING : TSC_UNUSABLE;
        atomic_store(&tsc_state, how);
    }
    if (how == TSC_CALIBRATING) {
        if (cal_wall == 0) {
            cal_wall = wall;
            cal_tsc = tsc;
        } else if (wall - cal_wall >= CALIBRATE_NS && tsc > cal_tsc) {
            atomic_store(&tsc_mult, (uint64_t)(((unsigned __int128)(wall - cal_wall) << 32) / (tsc - cal_tsc)));
            atomic_store(&tsc_state, TSC_READY);
        }
    }
    pthread_mutex_unlock(&calibration_lock);
}

static void close_clock(void *p)
{
    thread_clock *c = p;
    munmap((void *)c->page, (size_t)sysconf(_SC_PAGESIZE));
    close(c->fd);
    free(c);
}

static void make_key(void) { pthread_key_create(&key, close_clock); }

static bool open_clock(void)
{
    if (atomic_load_explicit(&refused, memory_order_relaxed)) {
        return false;
    }
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.size = sizeof attr;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        atomic_store(&refused, true);
        return false;
    }
    void *page = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
    thread_clock *c = page != MAP_FAILED ? calloc(1, sizeof *c) : NULL;
    if (c == NULL) {
        if (page != MAP_FAILED) {
            munmap(page, (size_t)sysconf(_SC_PAGESIZE));
        }
        close(fd);
        return false;
    }
    c->page = page;
    c->fd = fd;
    c->seq = c->page->lock + 1; /* the first reading is exact */
    pthread_once(&key_once, make_key);
    pthread_setspecific(key, c);
    mine = c;
    return true;
}

/* This thread's clock opened on first use: whether the fast path is there. */
static bool fast_ready(void)
{
    if (state == 0) {
        state = open_clock() ? 1 : -1;
    }
    return state > 0;
}

/* An estimate can run ahead of the exact clock (time the hypervisor took
 * from a virtual CPU passes on the counter, not always on the thread's
 * clock): the next exact reading must not then go back, since an agent
 * takes differences of readings as times spent. */
static inline int64_t not_back(thread_clock *c, int64_t ns)
{
    if (ns < c->last_ns) {
        ns = c->last_ns;
    }
    c->last_ns = ns;
    return ns;
}

int64_t cpuclock_thread_ns(void)
{
    thread_clock *c = fast_ready() ? mine : NULL;
    if (c == NULL) {
        return exact_ns();
    }
    bool by_tsc = atomic_load_explicit(&tsc_state, memory_order_relaxed) == TSC_READY;
    uint32_t seq = c->page->lock;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    int64_t since = by_tsc ? (int64_t)(((unsigned __int128)(tsc_now() - c->tsc) *
                                        atomic_load_explicit(&tsc_mult, memory_order_relaxed)) >> 32)
                           : wall_ns() - c->wall_ns;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (seq == c->seq && c->page->lock == seq) {
        /* On its CPU throughout since the exact reading. */
        return not_back(c, c->cpu_ns + since);
    }
    uint32_t before = c->page->lock;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    c->cpu_ns = exact_ns();
    c->wall_ns = wall_ns();
    c->tsc = tsc_now();
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    uint32_t after = c->page->lock;
    /* Scheduled out or in between the two clocks: the pair is not one
     * instant, and the next reading is exact again. */
    c->seq = before == after ? after : after + 1;
    if (before == after && atomic_load_explicit(&tsc_state, memory_order_relaxed) < TSC_READY) {
        calibrate(c->wall_ns, c->tsc);
    }
    return not_back(c, c->cpu_ns);
}

bool cpuclock_fast(void) { return fast_ready(); }

bool cpuclock_by_tsc(void) { return fast_ready() && atomic_load(&tsc_state) == TSC_READY; }
