/*
 * trc_himg.c - the host image (trc_himg.h): segments per 4 KiB page in an
 * open-addressing hash table on the page number.
 *
 * Invariants: a page's segments are in event order (trc_himg_write and
 * trc_himg_forget are called in event order); a segment never spans pages;
 * the table is at most half full; a slot is empty iff its pn is EMPTY.
 */
#include "trc_himg.h"

#include <stdlib.h>
#include <string.h>

#define PG_BITS 12
#define PG_SIZE (1u << PG_BITS)
#define EMPTY UINT64_MAX

enum { SEG_DATA, SEG_FILL, SEG_UNKNOWN };

typedef struct seg {
    uint64_t ev;
    const uint8_t *src; /* SEG_DATA: the byte written at lo */
    uint16_t lo;        /* [lo, hi) of the page */
    uint16_t hi;        /* up to PG_SIZE */
    uint8_t kind, fill;
    uint32_t tag;       /* SEG_DATA: the writer's name for src's bytes */
} seg;

typedef struct pent {
    uint64_t pn;
    seg *s;
    uint32_t n, cap;
} pent;

struct trc_himg {
    pent *t;
    size_t cap, used; /* slots (a power of two), pages */
    int failed;
    int latest;       /* trc_himg_create_latest: newer segments drop the ones they cover */
    void (*release)(void *ctx, uint32_t tag);
    void *ctx;
};

trc_himg *trc_himg_create(void)
{
    trc_himg *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->cap = 1024;
    if (!(h->t = malloc(h->cap * sizeof *h->t))) {
        free(h);
        return NULL;
    }
    for (size_t i = 0; i < h->cap; i++) h->t[i].pn = EMPTY;
    return h;
}

trc_himg *trc_himg_create_latest(void (*release)(void *ctx, uint32_t tag), void *ctx)
{
    trc_himg *h = trc_himg_create();
    if (!h) return NULL;
    h->latest = 1;
    h->release = release;
    h->ctx = ctx;
    return h;
}

void trc_himg_destroy(trc_himg *h)
{
    if (!h) return;
    for (size_t i = 0; i < h->cap; i++)
        if (h->t[i].pn != EMPTY) free(h->t[i].s);
    free(h->t);
    free(h);
}

int trc_himg_failed(const trc_himg *h) { return h->failed; }

static inline size_t slot_of(uint64_t pn, size_t cap)
{
    uint64_t x = pn * 0x9e3779b97f4a7c15ull; /* Fibonacci hashing (Knuth, TAOCP 6.4) */
    return (size_t)(x >> 20) & (cap - 1);
}

static const pent *find(const trc_himg *h, uint64_t pn)
{
    for (size_t i = slot_of(pn, h->cap);; i = (i + 1) & (h->cap - 1)) {
        if (h->t[i].pn == pn) return &h->t[i];
        if (h->t[i].pn == EMPTY) return NULL;
    }
}

static int grow_table(trc_himg *h)
{
    size_t nc = 2 * h->cap;
    pent *nt = malloc(nc * sizeof *nt);
    if (!nt) return -1;
    for (size_t i = 0; i < nc; i++) nt[i].pn = EMPTY;
    for (size_t i = 0; i < h->cap; i++) {
        if (h->t[i].pn == EMPTY) continue;
        size_t j = slot_of(h->t[i].pn, nc);
        while (nt[j].pn != EMPTY) j = (j + 1) & (nc - 1);
        nt[j] = h->t[i];
    }
    free(h->t);
    h->t = nt;
    h->cap = nc;
    return 0;
}

/* The entry of page pn, made when missing; NULL out of memory. */
static pent *get(trc_himg *h, uint64_t pn)
{
    if (2 * (h->used + 1) > h->cap && grow_table(h) < 0) return NULL;
    size_t i = slot_of(pn, h->cap);
    while (h->t[i].pn != EMPTY && h->t[i].pn != pn) i = (i + 1) & (h->cap - 1);
    if (h->t[i].pn == EMPTY) {
        h->t[i] = (pent){pn, NULL, 0, 0};
        h->used++;
    }
    return &h->t[i];
}

static int add(trc_himg *h, uint64_t ev, uint64_t addr, uint64_t n, const uint8_t *data, uint8_t fill, int kind,
               uint32_t tag)
{
    if (h->failed) return -1;
    int made = 0;
    while (n) {
        uint32_t off = (uint32_t)(addr & (PG_SIZE - 1));
        uint32_t k = PG_SIZE - off < n ? PG_SIZE - off : (uint32_t)n;
        pent *p = get(h, addr >> PG_BITS);
        if (!p) goto oom;
        if (p->n == p->cap) {
            uint32_t nc = p->cap ? 2 * p->cap : 2;
            seg *ns = realloc(p->s, nc * sizeof *ns);
            if (!ns) goto oom;
            p->s = ns;
            p->cap = nc;
        }
        if (h->latest) {
            /* reads are as of now only: what the new segment covers is gone */
            uint32_t o = 0;
            for (uint32_t i = 0; i < p->n; i++) {
                const seg *s = &p->s[i];
                if (s->lo >= off && s->hi <= off + k) {
                    if (s->kind == SEG_DATA && h->release) h->release(h->ctx, s->tag);
                } else {
                    p->s[o++] = *s;
                }
            }
            p->n = o;
        }
        made++;
        p->s[p->n++] = (seg){ev, data, (uint16_t)off, (uint16_t)(off + k), (uint8_t)kind, fill, tag};
        addr += k;
        n -= k;
        if (data) data += k;
    }
    return made;
oom:
    h->failed = 1;
    return -1;
}

int trc_himg_write(trc_himg *h, uint64_t ev, uint64_t addr, uint64_t n, const uint8_t *data, uint8_t fill,
                   uint32_t tag)
{
    if (addr + n < addr || (!data && n > TRC_HIMG_MAX_FILL)) /* too large a memset (or one that wraps): unknown */
        return trc_himg_forget(h, ev, addr, n) < 0 ? -1 : 0;
    return add(h, ev, addr, n, data, fill, data ? SEG_DATA : SEG_FILL, tag);
}

/* The part of [addr, addr + n) on page pn (first..last: the range's pages)
 * made unknown by event ev. 0 or -1. */
static int forget_page(trc_himg *h, uint64_t ev, uint64_t pn, uint64_t first, uint64_t last, uint64_t addr,
                       uint64_t n)
{
    uint64_t lo = pn == first ? addr : pn << PG_BITS;
    uint64_t hi = pn == last ? addr + n : (pn + 1) << PG_BITS;
    return add(h, ev, lo, hi - lo, NULL, 0, SEG_UNKNOWN, 0) < 0 ? -1 : 0;
}

/* Only the pages that hold segments take one: a page without any is
 * unknown already. A FREE may cover gigabytes of address space (a dispatch's
 * private-segment backing store) of which the image holds nothing. */
int trc_himg_forget(trc_himg *h, uint64_t ev, uint64_t addr, uint64_t n)
{
    if (h->failed) return -1;
    if (addr + n < addr) n = UINT64_MAX - addr; /* wraps (a corrupt event): to the end of the address space */
    if (!n) return 0;
    uint64_t first = addr >> PG_BITS, last = (addr + n - 1) >> PG_BITS;
    if (last - first < h->used) {
        for (uint64_t pn = first;; pn++) {
            if (find(h, pn) && forget_page(h, ev, pn, first, last, addr, n) < 0) return -1;
            if (pn == last) break;
        }
        return 0;
    }
    /* fewer pages in the image than in the range: visit those (collected
     * first: add() may grow the table; pages are independent, so their
     * order does not matter) */
    uint64_t *pns = malloc(h->used * sizeof *pns);
    if (!pns && h->used) {
        h->failed = 1;
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < h->cap; i++)
        if (h->t[i].pn != EMPTY && h->t[i].pn >= first && h->t[i].pn <= last) pns[k++] = h->t[i].pn;
    int rc = 0;
    for (size_t i = 0; i < k && rc == 0; i++)
        rc = forget_page(h, ev, pns[i], first, last, addr, n);
    free(pns);
    return rc;
}

/* Bytes [lo, hi) of page p from its segments 0..i (the newest first) into
 * out (out[0] is byte lo). 0, or -1 when a byte is unknown. */
static int fill_from(const pent *p, int64_t i, uint32_t lo, uint32_t hi, uint8_t *out)
{
    while (lo < hi) {
        const seg *s = NULL;
        for (; i >= 0; i--) {
            s = &p->s[i];
            if (s->lo < hi && s->hi > lo) break;
        }
        if (i < 0 || s->kind == SEG_UNKNOWN) return -1;
        uint32_t a = s->lo > lo ? s->lo : lo, b = s->hi < hi ? s->hi : hi;
        if (s->kind == SEG_DATA) memcpy(out + (a - lo), s->src + (a - s->lo), b - a);
        else memset(out + (a - lo), s->fill, b - a);
        /* what lies left of it comes from older segments; right of it too */
        if (lo < a && fill_from(p, i - 1, lo, a, out) < 0) return -1;
        out += b - lo;
        lo = b;
        i--;
    }
    return 0;
}

int trc_himg_read(const trc_himg *h, uint64_t before, uint64_t addr, uint64_t n, uint8_t *out)
{
    if (h->failed) return -1;
    while (n) {
        uint32_t off = (uint32_t)(addr & (PG_SIZE - 1));
        uint32_t k = PG_SIZE - off < n ? PG_SIZE - off : (uint32_t)n;
        const pent *p = find(h, addr >> PG_BITS);
        if (!p) return -1;
        /* the newest segment before `before` (segments are in event order:
         * a binary search, a page may have been written by every launch) */
        uint32_t lo = 0, hi = p->n;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (p->s[mid].ev < before) lo = mid + 1;
            else hi = mid;
        }
        int64_t i = (int64_t)lo - 1;
        if (fill_from(p, i, off, off + k, out) < 0) return -1;
        addr += k;
        n -= k;
        out += k;
    }
    return 0;
}

int trc_himg_equal(const trc_himg *h, uint64_t addr, uint64_t n, const uint8_t *p)
{
    uint8_t buf[512];
    if (h->failed) return 0;
    while (n) {
        uint32_t off = (uint32_t)(addr & (PG_SIZE - 1));
        uint32_t k = PG_SIZE - off < n ? PG_SIZE - off : (uint32_t)n;
        if (k > sizeof buf) k = sizeof buf;
        const pent *e = find(h, addr >> PG_BITS);
        if (!e || !e->n) return 0;
        const seg *s = &e->s[e->n - 1];
        if (s->lo <= off && s->hi >= off + k && s->kind == SEG_DATA) {
            /* the newest segment holds them all (the common case) */
            if (memcmp(s->src + (off - s->lo), p, k)) return 0;
        } else if (fill_from(e, (int64_t)e->n - 1, off, off + k, buf) < 0 || memcmp(buf, p, k)) {
            return 0;
        }
        addr += k;
        n -= k;
        p += k;
    }
    return 1;
}
