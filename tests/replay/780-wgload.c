/* Workgroup records loaded ahead on a spare thread (replay/wgload.c): every
 * record taken equals what the reader loads directly, in grid order, with
 * skips (a sampled replay's fast-forwards), switching kernels, going back,
 * asking past the end; records the helper held when it stops are freed
 * (ASan's leak check in make test). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "replay/rp_wgload.h"
#include "traceformat/trc.h"
#include "tests/trace/data/gen.h"

static char path[256];

/* a and b hold the same record (waves, instructions, memory ops and their values) */
static void same(const trc_wg *a, const trc_wg *b)
{
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->n_waves, b->n_waves);
    for (uint32_t v = 0; v < a->n_waves; v++) {
        const trc_wave *x = &a->waves[v], *y = &b->waves[v];
        assert_int_equal(x->n_instr, y->n_instr);
        assert_int_equal(x->n_mem, y->n_mem);
        for (uint32_t m = 0; m < x->n_mem; m++) {
            assert_int_equal(x->mem[m].flags, y->mem[m].flags);
            assert_int_equal(x->mem[m].exec, y->mem[m].exec);
            assert_int_equal(trc_mo_addr(&x->mem[m], 0), trc_mo_addr(&y->mem[m], 0));
            size_t n = (size_t)trc_popcount64(x->mem[m].exec) * x->mem[m].bytes_per_lane;
            assert_int_equal(x->mem[m].load_data != NULL, y->mem[m].load_data != NULL);
            if (x->mem[m].load_data && n)
                assert_memory_equal(x->mem[m].load_data, y->mem[m].load_data, n);
            assert_int_equal(x->mem[m].store_data != NULL, y->mem[m].store_data != NULL);
            if (x->mem[m].store_data && n)
                assert_memory_equal(x->mem[m].store_data, y->mem[m].store_data, n);
        }
    }
}

static void check(rp_wgload *l, trc_reader *rd, trc_reader *ref, uint32_t k, uint32_t i)
{
    char err[512];
    trc_wg *a = rp_wgload_take(l, rd, k, i, err, sizeof err);
    trc_wg *b = trc_reader_load_wg(ref, k, i, err, sizeof err);
    same(a, b);
    trc_wg_free(a);
    trc_wg_free(b);
}

static void test_take(void **state)
{
    (void)state;
    char err[512];
    if (gen_trace(path, 2, 7, 2048, 8192, 1, err, sizeof err) != 0)
        fail_msg("%s", err);
    trc_reader *rd = trc_reader_open(path, err, sizeof err), *ref = trc_reader_open(path, err, sizeof err);
    assert_non_null(rd);
    assert_non_null(ref);
    trc_kernel_stats k0, k1;
    assert_int_equal(trc_reader_kernel_stats(rd, 0, &k0), 0);
    assert_int_equal(trc_reader_kernel_stats(rd, 1, &k1), 0);
    assert_true(k0.n_wg >= 4);
    rp_wgload *l = rp_wgload_start(rd);
    assert_non_null(l);
    for (uint32_t i = 0; i < k0.n_wg; i++) /* grid order: the helper runs ahead */
        check(l, rd, ref, 0, i);
    for (uint32_t i = 0; i < k1.n_wg; i += 3) /* another kernel, with skips */
        check(l, rd, ref, 1, i);
    check(l, rd, ref, 0, 1); /* back to the first kernel, and back in it */
    check(l, rd, ref, 0, 0);
    trc_wg *bad = rp_wgload_take(l, rd, 0, k0.n_wg, err, sizeof err); /* past the end: the reader's error */
    assert_null(bad);
    assert_true(strlen(err) > 0);
    check(l, rd, ref, 0, 0); /* the helper holds the next ones when it stops */
    uint64_t hits, misses;
    rp_wgload_stats(l, &hits, &misses);
    assert_int_equal(hits + misses, k0.n_wg + (k1.n_wg + 2) / 3 + 4);
    rp_wgload_stop(l);
    /* without a helper: loads directly */
    check(NULL, rd, ref, 1, 0);
    rp_wgload_stop(NULL);
    trc_reader_close(rd);
    trc_reader_close(ref);
    unlink(path);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/rp780-%d.gtrace", tmp ? tmp : "/tmp", (int)getpid());
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_take)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
