/*
 * 330-atomic: the atomic arithmetic shared by the emulator and the replay
 * (gcn_atomic_apply) and the mnemonic -> operation mapping.
 * Expected values from the GCN3 ISA manual's ATOMIC_* pseudocode; then every
 * FLAT atomic family on a hand-built wavefront (3xx_wave_harness.h), with
 * and without return (glc), 32 and 64 bits, lanes hitting one address in
 * lane order, and EXEC-masked lanes that must not touch memory or VGPRs.
 */
#include "3xx_wave_harness.h"

static uint32_t fbits(float f) { return bf(f); }

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

static void test_flat_atomics_wave(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_flat_atomics_all, 1);
    memset(g_mem, 0, sizeof g_mem);
    uint64_t ex = 0xfffffffeffffffefull; /* lanes 4 and 32 off */
    uint8_t *cell = g_mem + 64, *cnt = g_mem + 128;
    uint32_t c0 = 0x0f0f0f0fu, n0 = 5;
    memcpy(cell, &c0, 4);
    memcpy(cnt, &n0, 4);
    for (unsigned l = 0; l < 64; l++) {
        set64(0, l, (uint64_t)(uintptr_t)cell);   /* every lane on one address */
        g_vregs[2][l] = l;                         /* swap / sub */
        g_vregs[3][l] = (uint32_t)((int32_t)l - 32); /* smin / umax */
        g_vregs[4][l] = ~(1u << (l & 31));         /* and */
        g_vregs[5][l] = 1u << (l & 31);            /* or / xor */
        set64(6, l, (uint64_t)(uintptr_t)cnt);
        g_vregs[8][l] = 9;                         /* inc / dec limit */
        set64(20, l, (uint64_t)(uintptr_t)(g_mem + 1024 + l * 8));
        set64(22, l, (uint64_t)(int64_t)((int)l - 32));
        set64(26, l, l % 3 ? 0xdead00000000ull + l : 0x5555); /* cmpswap_x2: new value */
        uint64_t m = (uint64_t)(int64_t)-7;
        memcpy(g_mem + 1024 + l * 8, &m, 8);
    }
    /* compare value of cmpswap_x2 = the value smax_x2 leaves: max(-7, l - 32) */
    for (unsigned l = 0; l < 64; l++) set64(28, l, (uint64_t)(int64_t)((int)l - 32 > -7 ? (int)l - 32 : -7));
    gcn_set_exec(&h.w, ex);
    run_ok(&h);
    /* reference: lanes in order, each op of the ISA manual on one cell */
    uint32_t c = c0, n = n0;
    uint32_t r10[64] = {0}, r11[64] = {0}, r12[64] = {0}, r13[64] = {0}, r14[64] = {0}, r15[64] = {0}, r16[64] = {0};
    for (unsigned l = 0; l < 64; l++) if ((ex >> l) & 1) { r10[l] = c; c = l; }
    for (unsigned l = 0; l < 64; l++) if ((ex >> l) & 1) { r11[l] = c; c -= l; }
    for (unsigned l = 0; l < 64; l++) if ((ex >> l) & 1) { r12[l] = c; int32_t s = (int32_t)l - 32; c = (int32_t)c < s ? c : (uint32_t)s; }
    for (unsigned l = 0; l < 64; l++) if ((ex >> l) & 1) { r13[l] = c; uint32_t s = (uint32_t)((int32_t)l - 32); c = c > s ? c : s; }
    for (unsigned l = 0; l < 64; l++) if ((ex >> l) & 1) c &= ~(1u << (l & 31));
    for (unsigned l = 0; l < 64; l++) if ((ex >> l) & 1) c |= 1u << (l & 31);
    for (unsigned l = 0; l < 64; l++) if ((ex >> l) & 1) { r14[l] = c; c ^= 1u << (l & 31); }
    for (unsigned l = 0; l < 64; l++) if ((ex >> l) & 1) { r15[l] = n; n = n >= 9 ? 0 : n + 1; }
    for (unsigned l = 0; l < 64; l++) if ((ex >> l) & 1) { r16[l] = n; n = (n == 0 || n > 9) ? 9 : n - 1; }
    uint32_t got;
    memcpy(&got, cell, 4);
    assert_int_equal(got, c);
    memcpy(&got, cnt, 4);
    assert_int_equal(got, n);
    for (unsigned l = 0; l < 64; l++) {
        int on = (ex >> l) & 1;
        assert_int_equal(g_vregs[10][l], r10[l]);
        assert_int_equal(g_vregs[11][l], r11[l]);
        assert_int_equal(g_vregs[12][l], r12[l]);
        assert_int_equal(g_vregs[13][l], r13[l]);
        assert_int_equal(g_vregs[14][l], r14[l]);
        assert_int_equal(g_vregs[15][l], r15[l]);
        assert_int_equal(g_vregs[16][l], r16[l]);
        uint64_t mem;
        memcpy(&mem, g_mem + 1024 + l * 8, 8);
        int64_t mx = (int)l - 32 > -7 ? (int)l - 32 : -7;
        if (!on) {
            assert_int_equal(mem, (uint64_t)(int64_t)-7);
            assert_int_equal(v64(18, l), 0);
            assert_int_equal(v64(24, l), 0);
            continue;
        }
        assert_int_equal(v64(18, l), (uint64_t)(int64_t)-7);   /* smax_x2 returns the old value */
        assert_int_equal(v64(24, l), (uint64_t)mx);            /* cmpswap_x2 returns the old value */
        assert_int_equal(mem, l % 3 ? 0xdead00000000ull + l : 0x5555); /* compare always matches */
    }
    assert_int_equal(g_log.n_mem, 11);
    assert_int_equal(g_log.mem_flags[0], GCN_MO_ATOMIC | GCN_MO_LOAD | GCN_MO_STORE);
    assert_int_equal(g_log.mem_exec[4], ex);
    /* issue 20: a compare-and-swap declares its compare operand (store data
     * holds src then cmp per lane); the other atomics do not */
    assert_int_equal(g_log.mem_flags[10], GCN_MO_ATOMIC | GCN_MO_LOAD | GCN_MO_STORE | GCN_MO_CMPSWAP);
    assert_int_equal(g_log.mem_bytes[10], 8);
    for (int i = 0; i < 10; i++)
        assert_int_equal(g_log.mem_flags[i] & GCN_MO_CMPSWAP, 0);
    wave_fini(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integer_ops),
        cmocka_unit_test(test_float_ops),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_flat_atomics_wave),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
