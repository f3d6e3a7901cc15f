/*
 * fmem.c - sparse functional memory image (the modelled DRAM's contents)
 * and the statistics registry.
 *
 * Invariants: pages live in a four-level radix tree on the 52-bit page
 * number (13 bits per level); nodes and pages are created on first write and
 * never freed or moved (freeing device memory in the trace keeps its last
 * values, which is what a later D2H copy of stale memory would observe on
 * hardware too). Lookups are lock-free (acquire loads) and creation
 * publishes with compare-and-swap, so partitions of a parallel replay may
 * look up and create pages at the same time; the bytes of a page are
 * written by one partition at a time (each line has one owner L2 bank).
 */
#include "rp_fmem.h"

#include <stdlib.h>
#include <string.h>

#define PAGE_BITS 12
#define PAGE_SIZE (1u << PAGE_BITS)
#define LV_BITS 13
#define LV_N (1u << LV_BITS)
#define LEVELS 4

struct rp_fmem {
    void **root;           /* LV_N entries: level-1 nodes */
    size_t n;              /* pages (atomic) */
    uint64_t gen;          /* identifies this image for the per-thread lookup cache */
};

static uint64_t fmem_gen;  /* atomic: image generations */
/* One-entry lookup cache per thread: (image generation, page number) -> data. */
static _Thread_local struct {
    uint64_t gen, pn;
    uint8_t *data;
} tcache;

rp_fmem *rp_fmem_create(void)
{
    rp_fmem *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->root = calloc(LV_N, sizeof *m->root);
    if (!m->root) {
        free(m);
        return NULL;
    }
    m->gen = __atomic_add_fetch(&fmem_gen, 1, __ATOMIC_RELAXED);
    return m;
}

static void free_node(void **nd, int level)
{
    if (!nd)
        return;
    for (size_t i = 0; i < LV_N; i++)
        if (nd[i]) {
            if (level + 1 < LEVELS)
                free_node(nd[i], level + 1);
            else
                free(nd[i]);
        }
    free(nd);
}

void rp_fmem_destroy(rp_fmem *m)
{
    if (!m)
        return;
    free_node(m->root, 0);
    if (tcache.gen == m->gen)
        tcache.gen = 0;
    free(m);
}

size_t rp_fmem_pages(const rp_fmem *m) { return __atomic_load_n(&m->n, __ATOMIC_RELAXED); }

static inline uint32_t lv_index(uint64_t pn, int level)
{
    return (uint32_t)(pn >> (LV_BITS * (LEVELS - 1 - level))) & (LV_N - 1);
}

/* Data of page pn, NULL when it was never written; create: make it (and the
 * nodes on its path) when missing (NULL then means out of memory). */
static uint8_t *page(rp_fmem *m, uint64_t pn, bool create)
{
    if (tcache.gen == m->gen && tcache.pn == pn && tcache.data)
        return tcache.data;
    void **nd = m->root;
    for (int level = 0; level < LEVELS; level++) {
        void **slot = &nd[lv_index(pn, level)];
        void *next = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (!next) {
            if (!create)
                return NULL;
            bool leaf = level == LEVELS - 1;
            void *fresh = leaf ? calloc(1, PAGE_SIZE) : calloc(LV_N, sizeof(void *));
            if (!fresh)
                return NULL;
            void *expected = NULL;
            if (__atomic_compare_exchange_n(slot, &expected, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                next = fresh;
                if (leaf)
                    __atomic_add_fetch(&m->n, 1, __ATOMIC_RELAXED);
            } else {
                free(fresh); /* another partition created it first */
                next = expected;
            }
        }
        nd = next;
    }
    tcache.gen = m->gen;
    tcache.pn = pn;
    tcache.data = (uint8_t *)nd;
    return (uint8_t *)nd;
}

static uint8_t *page_for_write(rp_fmem *m, uint64_t pn) { return page(m, pn, true); }

int rp_fmem_write(rp_fmem *m, uint64_t addr, const void *src, size_t n)
{
    const uint8_t *s = src;
    while (n) {
        uint64_t off = addr & (PAGE_SIZE - 1);
        size_t k = PAGE_SIZE - off < n ? PAGE_SIZE - off : n;
        uint8_t *d = page_for_write(m, addr >> PAGE_BITS);
        if (!d)
            return -1;
        memcpy(d + off, s, k);
        addr += k, s += k, n -= k;
    }
    return 0;
}

int rp_fmem_fill(rp_fmem *m, uint64_t addr, uint8_t value, size_t n)
{
    while (n) {
        uint64_t off = addr & (PAGE_SIZE - 1);
        size_t k = PAGE_SIZE - off < n ? PAGE_SIZE - off : n;
        uint8_t *d = page_for_write(m, addr >> PAGE_BITS);
        if (!d)
            return -1;
        memset(d + off, value, k);
        addr += k, n -= k;
    }
    return 0;
}

void rp_fmem_read(rp_fmem *m, uint64_t addr, void *dst, size_t n)
{
    uint8_t *o = dst;
    while (n) {
        uint64_t off = addr & (PAGE_SIZE - 1);
        size_t k = PAGE_SIZE - off < n ? PAGE_SIZE - off : n;
        const uint8_t *p = page(m, addr >> PAGE_BITS, false);
        if (p)
            memcpy(o, p + off, k);
        else
            memset(o, 0, k);
        addr += k, o += k, n -= k;
    }
}

bool rp_fmem_equal(rp_fmem *m, uint64_t addr, const void *exp, size_t n)
{
    const uint8_t *x = exp;
    while (n) {
        uint64_t off = addr & (PAGE_SIZE - 1);
        size_t k = PAGE_SIZE - off < n ? PAGE_SIZE - off : n;
        const uint8_t *p = page(m, addr >> PAGE_BITS, false);
        if (p) {
            if (memcmp(p + off, x, k))
                return false;
        } else {
            for (size_t i = 0; i < k; i++)
                if (x[i])
                    return false;
        }
        addr += k, x += k, n -= k;
    }
    return true;
}

int rp_fmem_copy(rp_fmem *m, uint64_t dst, uint64_t src, size_t n)
{
    uint8_t buf[PAGE_SIZE];
    /* Overlap-safe like memmove: copy backwards when dst lies inside src. */
    if (dst > src && dst < src + n) {
        while (n) {
            size_t k = n < PAGE_SIZE ? n : PAGE_SIZE;
            rp_fmem_read(m, src + n - k, buf, k);
            if (rp_fmem_write(m, dst + n - k, buf, k))
                return -1;
            n -= k;
        }
        return 0;
    }
    while (n) {
        size_t k = n < PAGE_SIZE ? n : PAGE_SIZE;
        rp_fmem_read(m, src, buf, k);
        if (rp_fmem_write(m, dst, buf, k))
            return -1;
        src += k, dst += k, n -= k;
    }
    return 0;
}
