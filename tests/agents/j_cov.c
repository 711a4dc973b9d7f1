/*
 * j_cov - a coverage agent as Sun's jcov was: the program's classes are
 * compiled with javac -Xjcov, which gives each method's Code a
 * CharacterRangeTable (source ranges: statements, blocks, conditions, each
 * with its bytecode offsets); the agent reads those tables from the class
 * bytes CLASS_LOAD_HOOK hands it, counts calls with METHOD_ENTRY and blocks
 * with INSTRUCTION_START (an instruction at a range's start_pc is one run of
 * that range; an if-bytecode's is_true inside a branch range says which way
 * the condition went), and reports at JVM_SHUT_DOWN.
 *
 * Options: out=FILE, expect=FILE, class=NAME (default J_Cov).  The expect
 * file, made from the marks in the program's source, holds lines
 *   C name n       method name was called n times
 *   S line n       every statement range starting on line ran n times
 *   B line t f     every branch range starting on line: the condition was
 *                  true t times and false f times
 * A line must match at least one range, so a missing table fails.  Also
 * checked: every INSTRUCTION_START offset of the class is an instruction of
 * the code the agent was given.
 */
#include "c_common.h"

enum {
    CRT_STATEMENT = 0x0001,
    CRT_BRANCH_TRUE = 0x0080,
    CRT_BRANCH_FALSE = 0x0100,
    MAX_METHODS = 64,
};

typedef struct {
    unsigned start_pc, end_pc; /* end_pc: the last byte of the range */
    unsigned start_line, start_col, flags;
} crt_entry;

typedef struct {
    char *name, *desc;
    unsigned char *code;
    unsigned code_len;
    crt_entry *crt;
    unsigned n_crt;
    jmethodID id;
    long calls;
    long *hits, *taken, *not_taken; /* per offset */
} method;

static char *tracked = "J_Cov";
static char *expect_path;
static method methods[MAX_METHODS];
static int n_methods;        /* parsed from the class bytes */
static int n_live;           /* with their method IDs: readers scan these */
static int hook_seen, load_seen, crt_seen;
static long not_insn, entries_total, instr_total;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- the class file, as jcov read it ---------------------------------------- */

typedef struct {
    const unsigned char *p;
    size_t len, pos;
    int bad;
} rd;

static unsigned rd_u1(rd *r)
{
    if (r->pos + 1 > r->len) {
        r->bad = 1;
        return 0;
    }
    return r->p[r->pos++];
}

static unsigned rd_u2(rd *r) { unsigned a = rd_u1(r); return a << 8 | rd_u1(r); }
static unsigned rd_u4(rd *r) { unsigned a = rd_u2(r); return a << 16 | rd_u2(r); }

static void rd_skip(rd *r, size_t n)
{
    if (r->pos + n > r->len)
        r->bad = 1;
    else
        r->pos += n;
}

/* The constant pool's UTF8 entries, as offsets into the data (0: none). */
static size_t *utf8_at;
static unsigned *class_name_of;
static unsigned cp_count;

static int utf8_is(const rd *r, unsigned index, const char *s)
{
    if (index == 0 || index >= cp_count || utf8_at[index] == 0)
        return 0;
    unsigned n = (unsigned)(r->p[utf8_at[index]] << 8 | r->p[utf8_at[index] + 1]);
    return n == strlen(s) && memcmp(r->p + utf8_at[index] + 2, s, n) == 0;
}

static char *utf8_dup(const rd *r, unsigned index)
{
    if (index == 0 || index >= cp_count || utf8_at[index] == 0)
        return strdup("?");
    unsigned n = (unsigned)(r->p[utf8_at[index]] << 8 | r->p[utf8_at[index] + 1]);
    char *s = malloc(n + 1);
    memcpy(s, r->p + utf8_at[index] + 2, n);
    s[n] = '\0';
    return s;
}

static void read_pool(rd *r)
{
    cp_count = rd_u2(r);
    utf8_at = calloc(cp_count + 1, sizeof *utf8_at);
    class_name_of = calloc(cp_count + 1, sizeof *class_name_of);
    for (unsigned i = 1; i < cp_count && !r->bad; i++) {
        unsigned tag = rd_u1(r);
        switch (tag) {
        case 1: utf8_at[i] = r->pos; rd_skip(r, rd_u2(r)); break;
        case 7: class_name_of[i] = rd_u2(r); break;
        case 8: case 16: case 19: case 20: rd_skip(r, 2); break;
        case 15: rd_skip(r, 3); break;
        case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18: rd_skip(r, 4); break;
        case 5: case 6: rd_skip(r, 8); i++; break;
        default: r->bad = 1; break;
        }
    }
}

static void skip_attrs(rd *r)
{
    for (unsigned n = rd_u2(r); n > 0 && !r->bad; n--) {
        rd_skip(r, 2);
        rd_skip(r, rd_u4(r));
    }
}

static void read_code(rd *r, method *m)
{
    rd_skip(r, 4); /* max_stack, max_locals */
    m->code_len = rd_u4(r);
    if (r->bad || r->pos + m->code_len > r->len) {
        r->bad = 1;
        return;
    }
    m->code = malloc(m->code_len);
    memcpy(m->code, r->p + r->pos, m->code_len);
    rd_skip(r, m->code_len);
    rd_skip(r, 8 * (size_t)rd_u2(r)); /* exception table */
    for (unsigned n = rd_u2(r); n > 0 && !r->bad; n--) {
        unsigned name = rd_u2(r), len = rd_u4(r);
        size_t end = r->pos + len;
        if (utf8_is(r, name, "CharacterRangeTable")) {
            m->n_crt = rd_u2(r);
            m->crt = calloc(m->n_crt + 1, sizeof *m->crt);
            for (unsigned k = 0; k < m->n_crt && !r->bad; k++) {
                crt_entry *e = &m->crt[k];
                e->start_pc = rd_u2(r);
                e->end_pc = rd_u2(r);
                unsigned start = rd_u4(r);
                rd_u4(r); /* character_range_end */
                e->flags = rd_u2(r);
                e->start_line = start >> 10; /* javac: line << 10 | column */
                e->start_col = start & 0x3ff;
            }
            crt_seen = 1;
        } else {
            rd_skip(r, len);
        }
        if (r->pos != end)
            r->bad = 1;
    }
}

/* Parses the tracked class's methods into methods[]; 0 if malformed. */
static int read_class(const unsigned char *data, size_t len)
{
    rd r = {data, len, 8, 0};
    read_pool(&r);
    rd_skip(&r, 6); /* access, this, super */
    rd_skip(&r, 2 * (size_t)rd_u2(&r));
    for (unsigned n = rd_u2(&r); n > 0 && !r.bad; n--) {
        rd_skip(&r, 6);
        skip_attrs(&r);
    }
    unsigned count = rd_u2(&r);
    for (unsigned i = 0; i < count && !r.bad && n_methods < MAX_METHODS; i++) {
        method *m = &methods[n_methods++];
        rd_skip(&r, 2);
        m->name = utf8_dup(&r, rd_u2(&r));
        m->desc = utf8_dup(&r, rd_u2(&r));
        for (unsigned a = rd_u2(&r); a > 0 && !r.bad; a--) {
            unsigned name = rd_u2(&r), alen = rd_u4(&r);
            size_t end = r.pos + alen;
            if (utf8_is(&r, name, "Code"))
                read_code(&r, m);
            else
                rd_skip(&r, alen);
            if (r.pos != end)
                r.bad = 1;
        }
        m->hits = calloc(m->code_len + 1, sizeof *m->hits);
        m->taken = calloc(m->code_len + 1, sizeof *m->taken);
        m->not_taken = calloc(m->code_len + 1, sizeof *m->not_taken);
    }
    free(utf8_at);
    free(class_name_of);
    return !r.bad;
}

/* The class's own name (this_class), compared with the tracked one. */
static int is_tracked(const unsigned char *data, size_t len)
{
    rd r = {data, len, 8, 0};
    read_pool(&r);
    rd_skip(&r, 2);
    unsigned self = rd_u2(&r);
    int yes = !r.bad && self < cp_count && utf8_is(&r, class_name_of[self], tracked);
    free(utf8_at);
    free(class_name_of);
    return yes;
}

/* ---- instructions ------------------------------------------------------------- */

static long s4(const unsigned char *p) { return (int32_t)((uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]); }

/* The length of the instruction at pc, or 0 if none can start there. */
static unsigned insn_len(const unsigned char *code, unsigned len, unsigned pc)
{
    static const unsigned char fixed[256] = {
        [0x10] = 2, [0x11] = 3, [0x12] = 2, [0x13] = 3, [0x14] = 3, [0x15] = 2, [0x16] = 2, [0x17] = 2,
        [0x18] = 2, [0x19] = 2, [0x36] = 2, [0x37] = 2, [0x38] = 2, [0x39] = 2, [0x3a] = 2, [0x84] = 3,
        [0xa9] = 2, [0xb2] = 3, [0xb3] = 3, [0xb4] = 3, [0xb5] = 3, [0xb6] = 3, [0xb7] = 3, [0xb8] = 3,
        [0xb9] = 5, [0xba] = 5, [0xbb] = 3, [0xbc] = 2, [0xbd] = 3, [0xc0] = 3, [0xc1] = 3, [0xc5] = 4,
        [0xc6] = 3, [0xc7] = 3, [0xc8] = 5, [0xc9] = 5};
    unsigned op = code[pc];
    if (op >= 0x99 && op <= 0xa8)
        return 3;
    if (op == 0xaa || op == 0xab) {
        unsigned p = pc + 1 + (4 - (pc + 1) % 4) % 4;
        if (p + 12 > len)
            return 0;
        long n = op == 0xaa ? s4(code + p + 8) - s4(code + p + 4) + 1 : s4(code + p + 4);
        return p - pc + (op == 0xaa ? 12 + 4 * (unsigned)n : 8 + 8 * (unsigned)n);
    }
    if (op == 0xc4)
        return pc + 1 < len && code[pc + 1] == 0x84 ? 6 : 4;
    if (fixed[op])
        return fixed[op];
    return op <= 0xc3 ? 1 : 0;
}

static int is_insn_start(const method *m, unsigned off)
{
    for (unsigned pc = 0; pc < m->code_len;) {
        if (pc == off)
            return 1;
        unsigned n = insn_len(m->code, m->code_len, pc);
        if (n == 0)
            return 0;
        pc += n;
    }
    return 0;
}

static int is_if(unsigned op) { return (op >= 0x99 && op <= 0xa6) || op == 0xc6 || op == 0xc7; }

/* ---- events --------------------------------------------------------------------- */

static method *live(jmethodID id)
{
    int n = __atomic_load_n(&n_live, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (methods[i].id == id)
            return &methods[i];
    return NULL;
}

static void on_hook(JVMPI_Event *ev)
{
    unsigned char *data = ev->u.class_load_hook.class_data;
    jint len = ev->u.class_load_hook.class_data_len;
    /* the class goes on unchanged: a copy in the VM's memory, as the
     * specification asks of every hook */
    unsigned char *copy = ev->u.class_load_hook.malloc_f((unsigned)len);
    if (copy == NULL) {
        c_fail("malloc_f(%d) returned NULL", (int)len);
        return;
    }
    memcpy(copy, data, (size_t)len);
    ev->u.class_load_hook.new_class_data = copy;
    ev->u.class_load_hook.new_class_data_len = len;
    if (len < 10)
        return;
    /* hooks come on any thread at once, and the constant pool's tables
     * are shared: the whole read is under the lock */
    pthread_mutex_lock(&lock);
    if (is_tracked(data, (size_t)len) && !hook_seen++ && !read_class(data, (size_t)len))
        c_fail("%s's class bytes could not be read", tracked);
    pthread_mutex_unlock(&lock);
}

static void on_class_load(JVMPI_Event *ev)
{
    if (strcmp(ev->u.class_load.class_name, tracked) != 0)
        return;
    pthread_mutex_lock(&lock);
    if (!load_seen++) {
        for (jint k = 0; k < ev->u.class_load.num_methods; k++) {
            const JVMPI_Method *jm = &ev->u.class_load.methods[k];
            for (int i = 0; i < n_methods; i++)
                if (strcmp(methods[i].name, jm->method_name) == 0 && strcmp(methods[i].desc, jm->method_signature) == 0)
                    methods[i].id = jm->method_id;
        }
        __atomic_store_n(&n_live, n_methods, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
}

static void on_instruction(JVMPI_Event *ev)
{
    method *m = live(ev->u.instruction.method_id);
    if (m == NULL)
        return;
    __atomic_add_fetch(&instr_total, 1, __ATOMIC_RELAXED);
    jint off = ev->u.instruction.offset;
    if (off < 0 || (unsigned)off >= m->code_len || !is_insn_start(m, (unsigned)off)) {
        C_FAIL_SOME(not_insn, "INSTRUCTION_START in %s%s at %d, not an instruction of its code", m->name, m->desc,
                    (int)off);
        return;
    }
    __atomic_add_fetch(&m->hits[off], 1, __ATOMIC_RELAXED);
    if (is_if(m->code[off]))
        __atomic_add_fetch(ev->u.instruction.u.if_info.is_true ? &m->taken[off] : &m->not_taken[off], 1,
                           __ATOMIC_RELAXED);
}

/* ---- the report ------------------------------------------------------------------ */

static void report(void)
{
    for (int i = 0; i < n_methods; i++) {
        const method *m = &methods[i];
        c_log("method %s%s calls %ld", m->name, m->desc, m->calls);
        for (unsigned k = 0; k < m->n_crt; k++) {
            const crt_entry *e = &m->crt[k];
            c_log("  range %u-%u line %u:%u flags 0x%x runs %ld", e->start_pc, e->end_pc, e->start_line,
                  e->start_col, e->flags, e->start_pc < m->code_len ? m->hits[e->start_pc] : -1L);
        }
    }
}

static void check_calls(const char *name, long want)
{
    for (int i = 0; i < n_methods; i++)
        if (strcmp(methods[i].name, name) == 0) {
            c_check(methods[i].calls == want, "%s called %ld times (counted %ld)", name, want, methods[i].calls);
            return;
        }
    c_fail("no method %s in %s", name, tracked);
}

static void check_statements(unsigned line, long want)
{
    int found = 0;
    for (int i = 0; i < n_methods; i++)
        for (unsigned k = 0; k < methods[i].n_crt; k++) {
            const crt_entry *e = &methods[i].crt[k];
            if (e->start_line != line || !(e->flags & CRT_STATEMENT) || e->start_pc >= methods[i].code_len)
                continue;
            found++;
            long got = methods[i].hits[e->start_pc];
            c_check(got == want, "line %u: the statement at %u:%u (%s, pc %u) ran %ld times (counted %ld)", line, line,
                    e->start_col, methods[i].name, e->start_pc, want, got);
        }
    c_check(found > 0, "line %u: %d statement ranges", line, found);
}

static void check_branches(unsigned line, long want_true, long want_false)
{
    int found = 0;
    for (int i = 0; i < n_methods; i++)
        for (unsigned k = 0; k < methods[i].n_crt; k++) {
            const method *m = &methods[i];
            const crt_entry *e = &m->crt[k];
            if (e->start_line != line || !(e->flags & (CRT_BRANCH_TRUE | CRT_BRANCH_FALSE)))
                continue;
            found++;
            long taken = 0, not_taken = 0;
            for (unsigned pc = e->start_pc; pc <= e->end_pc && pc < m->code_len; pc++) {
                taken += m->taken[pc];
                not_taken += m->not_taken[pc];
            }
            /* a branch-true range jumps when the source's condition holds */
            long t = e->flags & CRT_BRANCH_TRUE ? taken : not_taken, f = e->flags & CRT_BRANCH_TRUE ? not_taken : taken;
            c_check(t == want_true && f == want_false,
                    "line %u: the condition at %u:%u (%s) was true %ld and false %ld times (counted %ld and %ld)", line,
                    line, e->start_col, m->name, want_true, want_false, t, f);
        }
    c_check(found > 0, "line %u: %d branch ranges", line, found);
}

static void shut_down(void)
{
    pthread_mutex_lock(&lock);
    c_check(hook_seen == 1, "CLASS_LOAD_HOOK gave %s's bytes once (%d)", tracked, hook_seen);
    c_check(crt_seen, "%s's methods carry a CharacterRangeTable (javac -Xjcov)", tracked);
    c_check(load_seen == 1, "CLASS_LOAD of %s once (%d)", tracked, load_seen);
    int ids = 0;
    for (int i = 0; i < n_methods; i++)
        ids += methods[i].id != NULL;
    c_check(ids == n_methods && ids > 0, "every method of %s has its method ID (%d of %d)", tracked, ids, n_methods);
    c_check(entries_total > 0 && instr_total > 0, "%s's methods had METHOD_ENTRY (%ld) and INSTRUCTION_START (%ld)",
            tracked, entries_total, instr_total);
    c_check(not_insn == 0, "every INSTRUCTION_START offset was an instruction of the class as read (%ld were not)",
            not_insn);
    report();
    FILE *f = expect_path ? fopen(expect_path, "r") : NULL;
    c_check(f != NULL, "expectations read from %s", expect_path ? expect_path : "(no expect= option)");
    char kind[4], name[128];
    long a, b;
    unsigned line;
    int lines = 0;
    while (f != NULL && fscanf(f, "%3s", kind) == 1) {
        lines++;
        if (strcmp(kind, "C") == 0 && fscanf(f, "%127s %ld", name, &a) == 2)
            check_calls(name, a);
        else if (strcmp(kind, "S") == 0 && fscanf(f, "%u %ld", &line, &a) == 2)
            check_statements(line, a);
        else if (strcmp(kind, "B") == 0 && fscanf(f, "%u %ld %ld", &line, &a, &b) == 3)
            check_branches(line, a, b);
        else
            c_fail("expectation %d (%s) cannot be read", lines, kind);
    }
    if (f != NULL)
        fclose(f);
    c_check(lines >= 10, "%d expectations", lines);
    pthread_mutex_unlock(&lock);
    c_summary("j_cov");
}

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type) {
    case JVMPI_EVENT_CLASS_LOAD_HOOK:
        on_hook(ev);
        break;
    case JVMPI_EVENT_CLASS_LOAD:
        on_class_load(ev);
        break;
    case JVMPI_EVENT_METHOD_ENTRY: {
        method *m = live(ev->u.method.method_id);
        if (m != NULL) {
            __atomic_add_fetch(&m->calls, 1, __ATOMIC_RELAXED);
            __atomic_add_fetch(&entries_total, 1, __ATOMIC_RELAXED);
        }
        break;
    }
    case JVMPI_EVENT_INSTRUCTION_START:
        on_instruction(ev);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        shut_down();
        break;
    default:
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    if (c_setup(vm, options) != JNI_OK)
        return JNI_ERR;
    char *cls = c_opt(options, "class");
    if (cls != NULL)
        tracked = cls;
    expect_path = c_opt(options, "expect");
    c_pi->NotifyEvent = notify;
    c_enable(JVMPI_EVENT_CLASS_LOAD_HOOK, "CLASS_LOAD_HOOK");
    c_enable(JVMPI_EVENT_CLASS_LOAD, "CLASS_LOAD");
    c_enable(JVMPI_EVENT_METHOD_ENTRY, "METHOD_ENTRY");
    c_enable(JVMPI_EVENT_INSTRUCTION_START, "INSTRUCTION_START");
    c_enable(JVMPI_EVENT_JVM_SHUT_DOWN, "JVM_SHUT_DOWN");
    return JNI_OK;
}
