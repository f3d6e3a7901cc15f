/*
 * fmem.c - sparse functional memory image (the modelled DRAM's contents)
 * and the statistics registry.
 *
 * Invariants: the page table is a power-of-two open-addressing hash with
 * linear probing, at most half full; a page once created is never freed
 * (freeing device memory in the trace keeps its last values, which is what a
 * later D2H copy of stale memory would observe on hardware too).
 */
#include "rp_fmem.h"

#include <stdlib.h>
#include <string.h>

#define PAGE_BITS 12
#define PAGE_SIZE (1u << PAGE_BITS)

typedef struct fpage {
    uint64_t pn; /* page number + 1 (0 = empty slot) */
    uint8_t *data;
} fpage;

struct rp_fmem {
    fpage *tab;
    size_t cap, n;
    fpage *last; /* one-entry lookup cache */
};

static inline size_t hash_pn(uint64_t pn) { return (size_t)((pn * 0x9E3779B97F4A7C15ull) >> 17); }

rp_fmem *rp_fmem_create(void)
{
    rp_fmem *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->cap = 1024;
    m->tab = calloc(m->cap, sizeof *m->tab);
    if (!m->tab) {
        free(m);
        return NULL;
    }
    return m;
}

void rp_fmem_destroy(rp_fmem *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->cap; i++)
        free(m->tab[i].data);
    free(m->tab);
    free(m);
}

size_t rp_fmem_pages(const rp_fmem *m) { return m->n; }

static fpage *lookup(rp_fmem *m, uint64_t pn)
{
    if (m->last && m->last->pn == pn + 1)
        return m->last;
    size_t mask = m->cap - 1;
    for (size_t i = hash_pn(pn) & mask;; i = (i + 1) & mask) {
        if (m->tab[i].pn == pn + 1)
            return m->last = &m->tab[i];
        if (m->tab[i].pn == 0)
            return NULL;
    }
}

static int grow(rp_fmem *m)
{
    size_t ncap = m->cap * 2;
    fpage *nt = calloc(ncap, sizeof *nt);
    if (!nt)
        return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->tab[i].pn) {
            size_t j = hash_pn(m->tab[i].pn - 1) & (ncap - 1);
            while (nt[j].pn)
                j = (j + 1) & (ncap - 1);
            nt[j] = m->tab[i];
        }
    free(m->tab);
    m->tab = nt;
    m->cap = ncap;
    m->last = NULL;
    return 0;
}

static uint8_t *page_for_write(rp_fmem *m, uint64_t pn)
{
    fpage *p = lookup(m, pn);
    if (p)
        return p->data;
    if (2 * (m->n + 1) > m->cap && grow(m))
        return NULL;
    uint8_t *d = calloc(1, PAGE_SIZE);
    if (!d)
        return NULL;
    size_t mask = m->cap - 1, i = hash_pn(pn) & mask;
    while (m->tab[i].pn)
        i = (i + 1) & mask;
    m->tab[i].pn = pn + 1;
    m->tab[i].data = d;
    m->n++;
    m->last = &m->tab[i];
    return d;
}

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
        fpage *p = lookup(m, addr >> PAGE_BITS);
        if (p)
            memcpy(o, p->data + off, k);
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
        fpage *p = lookup(m, addr >> PAGE_BITS);
        if (p) {
            if (memcmp(p->data + off, x, k))
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


/* ---- statistics ------------------------------------------------------------------ */

int rp_stats_add(rp_stats *s, const char *prefix, const char *name, uint64_t *ptr, const char *unit)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 256;
        rp_stat *v = realloc(s->v, nc * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = nc;
    }
    size_t l = strlen(prefix) + strlen(name) + 2;
    char *nm = malloc(l);
    if (!nm)
        return -1;
    snprintf(nm, l, "%s%s%s", prefix, *prefix ? "." : "", name);
    s->v[s->n++] = (rp_stat){nm, ptr, unit};
    return 0;
}

void rp_stats_snapshot(const rp_stats *s, uint64_t *out)
{
    for (size_t i = 0; i < s->n; i++)
        out[i] = *s->v[i].ptr;
}

void rp_stats_fini(rp_stats *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].name);
    free(s->v);
    memset(s, 0, sizeof *s);
}
