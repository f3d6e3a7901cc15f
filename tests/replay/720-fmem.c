/* 720-fmem: the functional memory image reads back what was written (zero
 * where never written) and rp_fmem_equal agrees with read + memcmp,
 * including across page boundaries and over unwritten pages; several threads
 * may create and write pages of one image at once (parallel replay); the
 * per-thread lookup cache never leaks between images. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "replay/rp_fmem.h"

static void test_equal_matches_read(void **state)
{
    (void)state;
    rp_fmem *m = rp_fmem_create();
    assert_non_null(m);
    uint8_t src[10000];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 7 + 1); /* never zero in the first 36 bytes */
    const uint64_t base = 0x100000000ull + 4096 - 100; /* straddles pages */
    assert_int_equal(rp_fmem_write(m, base, src, 5000), 0);
    uint8_t got[10000];
    rp_fmem_read(m, base, got, 5000);
    assert_memory_equal(got, src, 5000);
    assert_true(rp_fmem_equal(m, base, src, 5000));
    assert_true(rp_fmem_equal(m, base + 4000, src + 4000, 1000));
    /* one byte off, at the start, in the middle (next page) and at the end */
    size_t at[3] = {0, 2345, 4999};
    for (int i = 0; i < 3; i++) {
        uint8_t x[5000];
        memcpy(x, src, sizeof x);
        x[at[i]] ^= 0x40;
        assert_false(rp_fmem_equal(m, base, x, sizeof x));
    }
    /* never-written memory reads as zero: equal to zeros, not to non-zero */
    uint8_t z[6000] = {0};
    assert_true(rp_fmem_equal(m, 0x200000000ull + 17, z, sizeof z));
    z[5999] = 1;
    assert_false(rp_fmem_equal(m, 0x200000000ull + 17, z, sizeof z));
    /* a range that runs from written into unwritten memory */
    uint8_t tail[200];
    memcpy(tail, src + 4900, 100);
    memset(tail + 100, 0, 100);
    assert_true(rp_fmem_equal(m, base + 4900, tail, sizeof tail));
    tail[150] = 1;
    assert_false(rp_fmem_equal(m, base + 4900, tail, sizeof tail));
    rp_fmem_destroy(m);
}

/* ---- concurrency: several threads create and fill pages of one image ------ */

enum { NT = 4, NREG = 48, NIMG = 8, CHUNK = 96, CHUNK_DATA = 80, REG_OFF = 1000, REG_LEN = 6000 };

static uint64_t splitmix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Region k: [page pn_k + REG_OFF, + REG_LEN), inside pages pn_k and pn_k + 1
 * (pn_k even; page pn_k + 2 is never written). Half the regions are dense
 * (sharing radix nodes), half scattered over the 52-bit page-number space
 * (a new path of nodes each). */
static uint64_t reg_pn(int k)
{
    if (k < NREG / 2)
        return 0x4000 + 4 * (uint64_t)k;
    return (splitmix((uint64_t)k) & ((1ull << 52) - 1)) & ~3ull;
}

/* Byte expected at offset o of region k in image img: chunks of CHUNK bytes
 * belong to thread (chunk % NT); the last CHUNK - CHUNK_DATA bytes of each
 * chunk are never written; every 8th chunk is filled with one value. */
static uint8_t expect(int img, int k, size_t o)
{
    size_t c = o / CHUNK, w = o % CHUNK;
    if (w >= CHUNK_DATA)
        return 0;
    if (c % 8 == 7)
        return (uint8_t)((c * 13 + (size_t)k + (size_t)img * 5) | 1);
    return (uint8_t)(splitmix((uint64_t)img << 40 ^ (uint64_t)k << 20 ^ o) | 1);
}

typedef struct wshared {
    rp_fmem *m;
    pthread_barrier_t bar;
    unsigned errs[NT];
    uint64_t last_addr[NT];
} wshared;
typedef struct warg {
    wshared *sh;
    int id;
} warg;

static void *writer(void *p)
{
    warg *a = p;
    wshared *sh = a->sh;
    int t = a->id;
    const size_t nchunks = (REG_LEN + CHUNK - 1) / CHUNK;
    for (int img = 0; img < NIMG; img++) {
        pthread_barrier_wait(&sh->bar); /* main created sh->m */
        rp_fmem *m = sh->m;
        /* the previous image's page is still in this thread's lookup cache:
         * the new image must not show its data */
        if (img) {
            uint8_t b = 0xee;
            rp_fmem_read(m, sh->last_addr[t], &b, 1);
            if (b != 0)
                sh->errs[t]++;
        }
        for (int k = 0; k < NREG; k++) {
            /* all threads start on the same fresh page at once */
            pthread_barrier_wait(&sh->bar);
            uint64_t base = reg_pn(k) << 12;
            uint8_t buf[CHUNK];
            for (size_t i = 0; i < nchunks; i++) {
                size_t c = t % 2 ? nchunks - 1 - i : i; /* odd threads go backwards */
                if (c % NT != (size_t)t)
                    continue;
                size_t o = c * CHUNK, len = CHUNK_DATA;
                if (o + len > REG_LEN)
                    len = REG_LEN - o;
                uint64_t addr = base + REG_OFF + o;
                if (c % 8 == 7) {
                    if (rp_fmem_fill(m, addr, expect(img, k, o), len))
                        sh->errs[t]++;
                } else {
                    for (size_t j = 0; j < len; j++)
                        buf[j] = expect(img, k, o + j);
                    if (rp_fmem_write(m, addr, buf, len))
                        sh->errs[t]++;
                }
                sh->last_addr[t] = addr;
                /* read back own bytes and the never-written tail of the chunk
                 * while the others create and write pages */
                uint8_t got[CHUNK];
                size_t full = o + CHUNK > REG_LEN ? REG_LEN - o : CHUNK;
                rp_fmem_read(m, addr, got, full);
                for (size_t j = 0; j < full; j++)
                    if (got[j] != (j < len ? expect(img, k, o + j) : 0))
                        sh->errs[t]++;
                /* a page nobody writes reads as zero and is not created */
                uint8_t z = 0xee;
                rp_fmem_read(m, ((reg_pn(k) + 2) << 12) + o, &z, 1);
                if (z)
                    sh->errs[t]++;
            }
        }
        pthread_barrier_wait(&sh->bar); /* done: main verifies, then destroys */
    }
    return NULL;
}

static void test_concurrent_writers(void **state)
{
    (void)state;
    /* the regions' pages and the guard pages (pn + 2) are all distinct */
    for (int i = 0; i < NREG; i++)
        for (int j = 0; j < NREG; j++)
            if (i != j)
                for (uint64_t d = 0; d < 3; d++)
                    for (uint64_t f = 0; f < 3; f++)
                        assert_true(reg_pn(i) + d != reg_pn(j) + f);
    wshared sh;
    memset(&sh, 0, sizeof sh);
    assert_int_equal(pthread_barrier_init(&sh.bar, NULL, NT + 1), 0);
    pthread_t th[NT];
    warg args[NT];
    for (int t = 0; t < NT; t++) {
        args[t] = (warg){&sh, t};
        assert_int_equal(pthread_create(&th[t], NULL, writer, &args[t]), 0);
    }
    static uint8_t got[REG_LEN + 2 * 4096], want[REG_LEN + 2 * 4096];
    for (int img = 0; img < NIMG; img++) {
        sh.m = rp_fmem_create();
        assert_non_null(sh.m);
        pthread_barrier_wait(&sh.bar);
        for (int k = 0; k < NREG; k++)
            pthread_barrier_wait(&sh.bar);
        pthread_barrier_wait(&sh.bar);
        for (int t = 0; t < NT; t++)
            assert_int_equal(sh.errs[t], 0);
        /* every byte of both pages of each region, from this thread */
        for (int k = 0; k < NREG; k++) {
            uint64_t base = reg_pn(k) << 12;
            memset(want, 0, sizeof want);
            for (size_t o = 0; o < REG_LEN; o++)
                want[REG_OFF + o] = expect(img, k, o);
            rp_fmem_read(sh.m, base, got, sizeof got); /* pages pn, pn + 1, pn + 2 (unwritten) */
            assert_memory_equal(got, want, sizeof got);
            assert_true(rp_fmem_equal(sh.m, base, want, sizeof want));
            want[REG_OFF + CHUNK_DATA] = 1; /* a never-written byte */
            assert_false(rp_fmem_equal(sh.m, base, want, sizeof want));
        }
        assert_int_equal(rp_fmem_pages(sh.m), 2 * NREG);
        rp_fmem_destroy(sh.m);
    }
    for (int t = 0; t < NT; t++)
        assert_int_equal(pthread_join(th[t], NULL), 0);
    for (int t = 0; t < NT; t++)
        assert_int_equal(sh.errs[t], 0);
    pthread_barrier_destroy(&sh.bar);
}

/* Two images created and destroyed alternately on one thread: the
 * per-thread lookup cache never shows one image's page in the other, nor a
 * destroyed image's page in a new one (whose struct may reuse the address). */
static void test_images_alternate(void **state)
{
    (void)state;
    const uint64_t X = 0x7f0000123456ull, Y = X + 4096;
    rp_fmem *a = rp_fmem_create(), *b = rp_fmem_create();
    assert_non_null(a);
    assert_non_null(b);
    uint8_t v;
    for (int i = 0; i < 100; i++) {
        uint8_t va = (uint8_t)(2 * i + 1), vb = (uint8_t)(2 * i + 2);
        assert_int_equal(rp_fmem_write(a, X, &va, 1), 0);
        if (i == 0) { /* b has no page yet: reads 0 right after a's page was cached */
            rp_fmem_read(b, X, &v, 1);
            assert_int_equal(v, 0);
            assert_int_equal(rp_fmem_pages(b), 0);
        }
        assert_int_equal(rp_fmem_write(b, X, &vb, 1), 0);
        rp_fmem_read(a, X, &v, 1);
        assert_int_equal(v, va);
        rp_fmem_read(b, X, &v, 1);
        assert_int_equal(v, vb);
        assert_true(rp_fmem_equal(a, X, &va, 1));
        assert_false(rp_fmem_equal(a, X, &vb, 1));
        assert_true(rp_fmem_equal(b, X, &vb, 1));
    }
    assert_int_equal(rp_fmem_pages(a), 1);
    assert_int_equal(rp_fmem_pages(b), 1);
    /* destroy a while its page is this thread's cached one, create c and d */
    rp_fmem_read(a, X, &v, 1);
    rp_fmem_destroy(a);
    for (int r = 0; r < 20; r++) {
        rp_fmem *c = rp_fmem_create();
        assert_non_null(c);
        rp_fmem_read(c, X, &v, 1);
        assert_int_equal(v, 0);
        assert_int_equal(rp_fmem_pages(c), 0);
        uint8_t z[64] = {0};
        assert_true(rp_fmem_equal(c, X - 32, z, sizeof z));
        uint8_t w = (uint8_t)(0x80 | r);
        assert_int_equal(rp_fmem_write(c, Y, &w, 1), 0);
        rp_fmem_read(b, X, &v, 1);
        assert_int_equal(v, (uint8_t)200); /* b's last value */
        rp_fmem_read(b, Y, &v, 1);
        assert_int_equal(v, 0);
        rp_fmem_read(c, Y, &v, 1);
        assert_int_equal(v, w);
        /* destroy c while its page is cached; a new one must not see it */
        rp_fmem_destroy(c);
    }
    rp_fmem_destroy(b);
    rp_fmem *d = rp_fmem_create();
    assert_non_null(d);
    rp_fmem_read(d, X, &v, 1);
    assert_int_equal(v, 0);
    rp_fmem_read(d, Y, &v, 1);
    assert_int_equal(v, 0);
    assert_int_equal(rp_fmem_pages(d), 0);
    rp_fmem_destroy(d);
}

/* The extremes of the page-number space (top level index 0 and 8191). */
static void test_address_extremes(void **state)
{
    (void)state;
    rp_fmem *m = rp_fmem_create();
    assert_non_null(m);
    uint8_t src[300], got[300];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i + 1);
    const uint64_t top = UINT64_MAX - sizeof src + 1; /* the last 300 bytes of the address space */
    assert_int_equal(rp_fmem_write(m, top, src, sizeof src), 0);
    assert_int_equal(rp_fmem_write(m, 0, src, sizeof src), 0);
    rp_fmem_read(m, top, got, sizeof got);
    assert_memory_equal(got, src, sizeof src);
    rp_fmem_read(m, 0, got, sizeof got);
    assert_memory_equal(got, src, sizeof src);
    assert_int_equal(rp_fmem_pages(m), 2);
    /* a page that differs from the top one only in high page-number bits */
    rp_fmem_read(m, top & ((1ull << 51) - 1), got, sizeof got);
    for (size_t i = 0; i < sizeof got; i++)
        assert_int_equal(got[i], 0);
    rp_fmem_read(m, 4096, got, 1);
    assert_int_equal(got[0], 0);
    assert_int_equal(rp_fmem_pages(m), 2);
    rp_fmem_destroy(m);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_equal_matches_read), cmocka_unit_test(test_concurrent_writers),
        cmocka_unit_test(test_images_alternate),   cmocka_unit_test(test_address_extremes),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
