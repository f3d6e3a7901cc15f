/*
 * 330-atomic: the atomic arithmetic shared by the emulator and the replay
 * (gcn_atomic_apply) and the mnemonic -> operation mapping.
 * Expected values from the GCN3 ISA manual's ATOMIC_* pseudocode.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "emu/isa/gcn_isa.h"

static uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static void test_integer_ops(void **state)
{
    (void)state;
    assert_int_equal(gcn_atomic_apply(GCN_AT_ADD, 4, 0xffffffffu, 2, 0), 1);          /* wraps at 32 bits */
    assert_int_equal(gcn_atomic_apply(GCN_AT_ADD, 8, 0xffffffffu, 2, 0), 0x100000001ull);
    assert_int_equal(gcn_atomic_apply(GCN_AT_RSUB, 4, 3, 10, 0), 7);
    assert_int_equal(gcn_atomic_apply(GCN_AT_SMIN, 4, 5, 0xfffffffeu, 0), 0xfffffffeu); /* -2 < 5 */
    assert_int_equal(gcn_atomic_apply(GCN_AT_UMIN, 4, 5, 0xfffffffeu, 0), 5);
    assert_int_equal(gcn_atomic_apply(GCN_AT_SMAX, 8, 1, ~0ull, 0), 1);
    assert_int_equal(gcn_atomic_apply(GCN_AT_INC, 4, 7, 7, 0), 0);  /* old >= src: wrap to 0 */
    assert_int_equal(gcn_atomic_apply(GCN_AT_INC, 4, 6, 7, 0), 7);
    assert_int_equal(gcn_atomic_apply(GCN_AT_DEC, 4, 0, 9, 0), 9);  /* old == 0: src */
    assert_int_equal(gcn_atomic_apply(GCN_AT_DEC, 4, 12, 9, 0), 9); /* old > src: src */
    assert_int_equal(gcn_atomic_apply(GCN_AT_DEC, 4, 5, 9, 0), 4);
    assert_int_equal(gcn_atomic_apply(GCN_AT_CMPSWAP, 8, 42, 7, 42), 7);
    assert_int_equal(gcn_atomic_apply(GCN_AT_CMPSWAP, 8, 42, 7, 41), 42);
    assert_int_equal(gcn_atomic_apply(GCN_AT_XOR, 4, 0xf0, 0xff, 0), 0x0f);
}

static void test_float_ops(void **state)
{
    (void)state;
    assert_int_equal(gcn_atomic_apply(GCN_AT_FADD, 4, fbits(1.5f), fbits(2.25f), 0), fbits(3.75f));
    assert_int_equal(gcn_atomic_apply(GCN_AT_FMIN, 4, fbits(-1.0f), fbits(2.0f), 0), fbits(-1.0f));
    assert_int_equal(gcn_atomic_apply(GCN_AT_FMAX, 4, fbits(-1.0f), fbits(2.0f), 0), fbits(2.0f));
}

static void test_names(void **state)
{
    (void)state;
    assert_int_equal(gcn_atomic_of_name("flat_atomic_add_x2"), GCN_AT_ADD);
    assert_int_equal(gcn_atomic_of_name("flat_atomic_cmpswap"), GCN_AT_CMPSWAP);
    assert_int_equal(gcn_atomic_of_name("buffer_atomic_umax"), GCN_AT_UMAX);
    assert_int_equal(gcn_atomic_of_name("ds_add_rtn_u32"), GCN_AT_ADD);
    assert_int_equal(gcn_atomic_of_name("ds_add_f32"), GCN_AT_FADD);
    assert_int_equal(gcn_atomic_of_name("ds_min_i32"), GCN_AT_SMIN);
    assert_int_equal(gcn_atomic_of_name("ds_wrxchg_rtn_b32"), GCN_AT_SWAP);
    assert_int_equal(gcn_atomic_of_name("v_add_f32"), GCN_AT_NONE);
    assert_int_equal(gcn_atomic_of_name("ds_read_b32"), GCN_AT_UNKNOWN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integer_ops),
        cmocka_unit_test(test_float_ops),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
