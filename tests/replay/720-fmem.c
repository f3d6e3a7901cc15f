/* 720-fmem: the functional memory image reads back what was written (zero
 * where never written) and rp_fmem_equal agrees with read + memcmp,
 * including across page boundaries and over unwritten pages. */
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

int main(void)
{
    const struct CMUnitTest t[] = {cmocka_unit_test(test_equal_matches_read)};
    return cmocka_run_group_tests(t, NULL, NULL);
}
