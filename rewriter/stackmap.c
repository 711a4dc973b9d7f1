/*
 * stackmap.c - a StackMapTable moved to new offsets.  See stackmap.h.
 *
 * Frames are copied as they are but for their offset_delta and the offsets
 * inside Uninitialized types: decoding them into full type lists and
 * encoding them again would be more code and could only lose information.
 */
#include "stackmap.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "wbuf.h"

enum {
    SAME_MAX = 63,
    SAME_LOCALS_1 = 64,
    SAME_LOCALS_1_MAX = 127,
    SAME_LOCALS_1_EXTENDED = 247,
    CHOP_FIRST = 248,
    SAME_EXTENDED = 251,
    APPEND_LAST = 254,
    FULL = 255,
    ITEM_UNINITIALIZED_THIS = 6,
    ITEM_OBJECT = 7,
    ITEM_UNINITIALIZED = 8,
};

typedef struct {
    const uint8_t *p;
    uint32_t left;
    bool failed;
    char *err;
    size_t errlen;
} rd;

static bool take(rd *r, uint32_t n, const char *what)
{
    if (r->failed)
        return false;
    if (n > r->left) {
        errbuf_set(r->err, r->errlen, "StackMapTable: %s runs past the end of the attribute", what);
        r->failed = true;
        return false;
    }
    return true;
}

static uint8_t rd_u1(rd *r, const char *what)
{
    if (!take(r, 1, what))
        return 0;
    r->left--;
    return *r->p++;
}

static uint16_t rd_u2(rd *r, const char *what)
{
    if (!take(r, 2, what))
        return 0;
    uint16_t v = (uint16_t)(r->p[0] << 8 | r->p[1]);
    r->p += 2;
    r->left -= 2;
    return v;
}

/* Copies count verification types, moving Uninitialized offsets. */
static void copy_types(rd *r, wbuf *w, unsigned count, const stackmap_map *map)
{
    for (unsigned i = 0; i < count && !r->failed; i++) {
        uint8_t tag = rd_u1(r, "a verification type");
        if (r->failed)
            return;
        if (tag > ITEM_UNINITIALIZED) {
            errbuf_set(r->err, r->errlen, "StackMapTable" ERRBUF_UNKNOWN "stack map verification type tag %u", tag);
            r->failed = true;
            return;
        }
        wbuf_u1(w, tag);
        if (tag == ITEM_OBJECT) {
            wbuf_u2(w, rd_u2(r, "an Object type"));
        } else if (tag == ITEM_UNINITIALIZED) {
            uint16_t old = rd_u2(r, "an Uninitialized type");
            int ok = 1;
            uint32_t moved = map->new_insn(map->ctx, old, &ok);
            if (!r->failed && (!ok || moved > UINT16_MAX)) {
                errbuf_set(r->err, r->errlen, "StackMapTable: Uninitialized(%u) names no `new` instruction", old);
                r->failed = true;
                return;
            }
            wbuf_u2(w, moved);
        }
    }
}

/* The frame header for a delta: the kind, widened if the delta needs it. */
static void put_header(wbuf *w, uint8_t type, uint32_t delta)
{
    if (type <= SAME_MAX) {
        if (delta <= SAME_MAX) {
            wbuf_u1(w, delta);
        } else {
            wbuf_u1(w, SAME_EXTENDED);
            wbuf_u2(w, delta);
        }
    } else if (type <= SAME_LOCALS_1_MAX) {
        if (delta <= SAME_MAX) {
            wbuf_u1(w, SAME_LOCALS_1 + delta);
        } else {
            wbuf_u1(w, SAME_LOCALS_1_EXTENDED);
            wbuf_u2(w, delta);
        }
    } else {
        wbuf_u1(w, type);
        wbuf_u2(w, delta);
    }
}

int stackmap_rewrite(const uint8_t *data, uint32_t len, const stackmap_map *map, const stackmap_handler *handlers,
                     int n_handlers, uint16_t throwable, uint8_t **out, uint32_t *outlen, char *err, size_t errlen)
{
    rd r = {data, len, false, err, errlen};
    wbuf w = {NULL, 0, 0, false};
    uint16_t count = data != NULL ? rd_u2(&r, "number_of_entries") : 0;
    unsigned total = count + (unsigned)n_handlers;
    if (total > UINT16_MAX) {
        errbuf_set(err, errlen, "StackMapTable: %u frames do not fit its count", total);
        return -1;
    }
    wbuf_u2(&w, total);
    uint32_t old_pc = 0, new_prev = 0;
    for (unsigned i = 0; i < count && !r.failed; i++) {
        uint8_t type = rd_u1(&r, "a frame");
        uint32_t delta;
        if (type <= SAME_LOCALS_1_MAX) {
            delta = type <= SAME_MAX ? type : (uint32_t)(type - SAME_LOCALS_1);
        } else if (type >= SAME_LOCALS_1_EXTENDED) {
            delta = rd_u2(&r, "an offset_delta");
        } else {
            errbuf_set(err, errlen, "StackMapTable" ERRBUF_UNKNOWN "stack map frame type %u", type);
            r.failed = true;
            break;
        }
        old_pc = i == 0 ? delta : old_pc + delta + 1;
        int ok = 1;
        uint32_t pc = map->frame(map->ctx, old_pc, &ok);
        if (!ok || (i > 0 && pc <= new_prev)) {
            if (!r.failed)
                errbuf_set(err, errlen, "StackMapTable: a frame at %u, which is not an instruction", old_pc);
            r.failed = true;
            break;
        }
        uint32_t new_delta = i == 0 ? pc : pc - new_prev - 1;
        if (new_delta > UINT16_MAX) {
            errbuf_set(err, errlen, "StackMapTable: offset_delta %u does not fit", new_delta);
            r.failed = true;
            break;
        }
        new_prev = pc;
        put_header(&w, type, new_delta);
        if ((type >= SAME_LOCALS_1 && type <= SAME_LOCALS_1_MAX) || type == SAME_LOCALS_1_EXTENDED) {
            copy_types(&r, &w, 1, map);
        } else if (type > SAME_EXTENDED && type <= APPEND_LAST) {
            copy_types(&r, &w, type - SAME_EXTENDED, map);
        } else if (type == FULL) {
            uint16_t nlocals = rd_u2(&r, "number_of_locals");
            wbuf_u2(&w, nlocals);
            copy_types(&r, &w, nlocals, map);
            uint16_t nstack = rd_u2(&r, "number_of_stack_items");
            wbuf_u2(&w, nstack);
            copy_types(&r, &w, nstack, map);
        }
    }
    if (!r.failed && r.left != 0) {
        errbuf_set(err, errlen, "StackMapTable: %u bytes after its last frame", r.left);
        r.failed = true;
    }
    for (int h = 0; h < n_handlers && !r.failed; h++) {
        uint32_t pc = handlers[h].pc;
        bool first = count == 0 && h == 0;
        if (!first && pc <= new_prev) {
            errbuf_set(err, errlen, "StackMapTable: the handler frame at %u is not after the others", pc);
            r.failed = true;
            break;
        }
        uint32_t delta = first ? pc : pc - new_prev - 1;
        if (delta > UINT16_MAX) {
            errbuf_set(err, errlen, "StackMapTable: offset_delta %u does not fit", delta);
            r.failed = true;
            break;
        }
        new_prev = pc;
        wbuf_u1(&w, FULL);
        wbuf_u2(&w, delta);
        if (handlers[h].uninitialized_this) {
            wbuf_u2(&w, 1);
            wbuf_u1(&w, ITEM_UNINITIALIZED_THIS);
        } else {
            wbuf_u2(&w, 0);
        }
        wbuf_u2(&w, 1);
        wbuf_u1(&w, ITEM_OBJECT);
        wbuf_u2(&w, throwable);
    }
    if (!r.failed && w.oom) {
        errbuf_set(err, errlen, "StackMapTable: out of memory");
        r.failed = true;
    }
    if (r.failed || w.len > UINT32_MAX) {
        free(w.p);
        return -1;
    }
    *out = w.p;
    *outlen = (uint32_t)w.len;
    return 0;
}
