/*
 * 310-valu.c - vector ALU semantics on a hand-built wavefront: carry-out /
 * carry-in forms (VOP2 with VCC and VOP3b with SGPR pairs), 64-bit shifts,
 * v_mad_u64_u32 / v_mad_i64_i32, cross-lane ops (v_readlane, v_writelane,
 * v_readfirstlane, v_mbcnt), compares, v_cndmask, v_cmpx, EXEC masking,
 * VOP3 float modifiers, conversions, and the compiled f32 division sequence
 * with MODE toggling FP32 denormals (FACTS.md).
 */
#include <math.h>

#include "3xx_wave_harness.h"

static uint64_t rnd_state = 0x1234567887654321ull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

static void test_carry64(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_valu_carry64, 0);
    uint64_t a[64], b[64], ex = 0x5555aaaaffff0f0full;
    for (unsigned l = 0; l < 64; l++) {
        a[l] = rnd();
        b[l] = l % 3 ? rnd() : ~a[l] + (l & 1); /* force carries / exact wrap */
        set64(0, l, a[l]);
        set64(2, l, b[l]);
        for (unsigned r = 4; r <= 10; r++) g_vregs[r][l] = 0xdeadbeef;
    }
    gcn_set_exec(&h.w, ex);
    run_ok(&h);
    uint64_t c0 = 0, c1 = 0, b0 = 0;
    for (unsigned l = 0; l < 64; l++) {
        if (!((ex >> l) & 1)) {
            for (unsigned r = 4; r <= 10; r++) assert_int_equal(g_vregs[r][l], 0xdeadbeef);
            continue;
        }
        assert_int_equal(v64(4, l), a[l] + b[l]);
        assert_int_equal(v64(6, l), a[l] + b[l]);
        assert_int_equal(v64(8, l), a[l] - b[l]);
        assert_int_equal(g_vregs[10][l], (uint32_t)b[l] - (uint32_t)a[l]);
        if ((uint32_t)a[l] + (uint64_t)(uint32_t)b[l] > 0xffffffffu) c0 |= 1ull << l;
        if (a[l] + b[l] < a[l]) c1 |= 1ull << l;
        if ((uint32_t)a[l] > (uint32_t)b[l]) b0 |= 1ull << l;
    }
    assert_int_equal((uint64_t)h.w.s[10] | (uint64_t)h.w.s[11] << 32, c0);
    assert_int_equal((uint64_t)h.w.s[12] | (uint64_t)h.w.s[13] << 32, c1);
    assert_int_equal((uint64_t)h.w.s[14] | (uint64_t)h.w.s[15] << 32, b0);
    uint64_t borrow = 0;
    for (unsigned l = 0; l < 64; l++)
        if ((ex >> l) & 1 && a[l] < b[l]) borrow |= 1ull << l;
    assert_int_equal(gcn_vcc(&h.w), borrow); /* v_subb_u32 left the 64-bit borrow */
    wave_fini(&h);
}

static void test_wide(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_valu_wide, 0);
    uint32_t x[64], y[64];
    uint64_t z[64];
    for (unsigned l = 0; l < 64; l++) {
        x[l] = (uint32_t)rnd();
        y[l] = l == 0 ? 0xffffffffu : (uint32_t)rnd();
        z[l] = l == 0 ? ~0ull : rnd();
        if (l == 0) x[l] = 0xffffffffu;
        g_vregs[0][l] = x[l];
        g_vregs[1][l] = y[l];
        set64(2, l, z[l]);
    }
    run_ok(&h);
    uint64_t co = 0;
    for (unsigned l = 0; l < 64; l++) {
        unsigned __int128 m = (unsigned __int128)((uint64_t)x[l] * y[l]) + z[l];
        assert_int_equal(v64(4, l), (uint64_t)m);
        if (m >> 64) co |= 1ull << l;
        /* v_mad_i64_i32: 64-bit wrap-around sum (computed unsigned: no signed overflow) */
        assert_int_equal(v64(6, l), (uint64_t)((int64_t)(int32_t)x[l] * (int32_t)y[l]) + z[l]);
        assert_int_equal(v64(8, l), z[l] << 33);
        assert_int_equal(v64(10, l), z[l] >> (x[l] & 63));
        assert_int_equal(v64(12, l), (uint64_t)((int64_t)z[l] >> 4));
        assert_int_equal(g_vregs[14][l], x[l] * y[l]);
        assert_int_equal(g_vregs[15][l], (uint32_t)(((uint64_t)x[l] * y[l]) >> 32));
        assert_int_equal(g_vregs[16][l], (x[l] & 0xffffff) * (y[l] & 0xffffff) + 5);
        assert_int_equal(g_vregs[17][l], (y[l] >> 8) & 31);
        assert_int_equal(g_vregs[18][l], y[l] >> 3);
        assert_int_equal(g_vregs[19][l], (uint32_t)((int32_t)y[l] >> 31));
        assert_int_equal(g_vregs[20][l], x[l] < 9 ? x[l] : 9);
    }
    assert_int_equal((uint64_t)h.w.s[2] | (uint64_t)h.w.s[3] << 32, co);
    assert_true(co & 1);
    wave_fini(&h);
}

static void test_lanes(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_valu_lanes, 1);
    for (unsigned l = 0; l < 64; l++) {
        set64(4, l, l * 3ull << 32);
        set64(6, l, (64 - l) * 3ull << 32);
    }
    run_ok(&h);
    for (unsigned l = 0; l < 64; l++) assert_int_equal(g_vregs[1][l], l);
    assert_int_equal(h.w.s[0], 5);
    assert_int_equal(h.w.s[2], 63);
    assert_int_equal(g_vregs[2][7], 5);
    assert_int_equal(g_vregs[2][6], 0);
    assert_int_equal(h.w.s[3], 0);
    for (unsigned l = 0; l < 64; l++) assert_int_equal(g_vregs[3][l], l == 3 ? 20 : 10);
    assert_int_equal((uint64_t)h.w.s[4] | (uint64_t)h.w.s[5] << 32, ~(1ull << 2));
    uint64_t lt = 0;
    for (unsigned l = 0; l < 64; l++)
        if (l * 3 < (64 - l) * 3) lt |= 1ull << l;
    assert_int_equal((uint64_t)h.w.s[6] | (uint64_t)h.w.s[7] << 32, lt);
    assert_int_equal(gcn_exec_mask(&h.w), 0xff);
    assert_int_equal(gcn_vcc(&h.w), 0xff);
    for (unsigned l = 0; l < 64; l++) assert_int_equal(g_vregs[8][l], l < 8 ? 99 : 0);
    assert_int_equal(g_log.n_exec, 1);
    assert_int_equal(g_log.exec_at[0], 12);
    assert_int_equal(g_log.exec_val[0], 0xff);
    wave_fini(&h);

    /* partial EXEC: mbcnt counts only lanes below, readfirstlane picks lane 4 */
    WAVE_INIT(&h, prog_valu_lanes, 0);
    gcn_set_exec(&h.w, 0xf0f0);
    run_ok(&h);
    assert_int_equal(g_vregs[1][4], 4);
    assert_int_equal(g_vregs[1][15], 15);
    assert_int_equal(g_vregs[1][3], 0); /* inactive: untouched */
    assert_int_equal(h.w.s[3], 4);
    assert_int_equal(h.w.s[0], 5);       /* mbcnt counts mask bits, not EXEC */
    assert_int_equal(g_vregs[2][7], 5); /* v_writelane ignores EXEC */
    wave_fini(&h);
}

/* f32 with the flush-to-zero of MODE_HIP (inputs and outputs) */
static float ftz(float f)
{
    uint32_t b = bf(f);
    if ((b & 0x7f800000u) == 0) b &= 0x80000000u;
    return fb(b);
}

static void test_float(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_valu_float, 0);
    float x[64], y[64], acc[64];
    uint32_t u[64];
    for (unsigned l = 0; l < 64; l++) {
        x[l] = ((int)(rnd() % 2000) - 1000) / 37.0f;
        y[l] = ((int)(rnd() % 2000) - 1000) / 13.0f;
        if (l == 5) x[l] = fb(0x10); /* denormal input: flushed */
        if (l == 6) { x[l] = 0.75f; y[l] = 0.5f; }
        u[l] = (uint32_t)rnd();
        acc[l] = (float)l;
        g_vregs[0][l] = bf(x[l]);
        g_vregs[1][l] = bf(y[l]);
        g_vregs[10][l] = u[l];
        g_vregs[11][l] = bf(acc[l]);
    }
    run_ok(&h);
    for (unsigned l = 0; l < 64; l++) {
        float a = ftz(x[l]), b = ftz(y[l]);
        assert_int_equal(g_vregs[2][l], bf(ftz(a + b)));
        assert_int_equal(g_vregs[3][l], bf(ftz(fabsf(a) + -b)));
        float c = a + b;
        c = c < 0 ? 0 : c > 1 ? 1 : c;
        assert_int_equal(g_vregs[4][l], bf(c));
        assert_int_equal(g_vregs[5][l], bf(ftz((a * b) * 2.0f)));
        assert_int_equal(g_vregs[6][l], bf(ftz((a * b) * 0.5f)));
        assert_int_equal(g_vregs[7][l], bf((float)u[l]));
        assert_int_equal(g_vregs[8][l], a <= 0 ? 0 : (uint32_t)a);
        assert_int_equal(g_vregs[9][l], (uint32_t)(int32_t)b);
        volatile float p = a * b;
        assert_int_equal(g_vregs[11][l], bf(ftz(p + acc[l])));
        assert_int_equal(g_vregs[12][l], bf(ftz(p + 2.0f)));
        assert_int_equal(v64(14, l), (uint64_t)0 | ({ double d = a; uint64_t r; memcpy(&r, &d, 8); r; }));
        double d1 = (double)a + 1.0;
        uint64_t d1b;
        memcpy(&d1b, &d1, 8);
        assert_int_equal(v64(16, l), d1b);
        assert_int_equal(g_vregs[18][l], bf((float)d1));
        assert_int_equal(g_vregs[19][l], bf(ftz(fmaf(a, b, 0.5f))));
        assert_int_equal((((uint64_t)h.w.s[0] | (uint64_t)h.w.s[1] << 32) >> l) & 1, a < b);
        assert_int_equal(g_vregs[20][l], bf(ftz(1.0f / a)));
        assert_int_equal(g_vregs[21][l], bf(floorf(b)));
    }
    assert_int_equal(g_vregs[4][6], bf(1.0f)); /* clamp */
    assert_int_equal(g_vregs[2][5], g_vregs[1][5]); /* denormal + y == y */
    wave_fini(&h);
}

/* The f32 division sequence clang 15 emits for gfx803 (s_setreg toggles FP32
 * denormals around v_div_fmas); results must equal IEEE division of the
 * flushed inputs, flushed. */
static void test_fdiv(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_valu_fdiv, 0);
    float num[64], den[64];
    static const float special[][2] = {
        {1.0f, 3.0f}, {-7.0f, 2.0f}, {0.0f, 5.0f}, {5.0f, 0.0f}, {0.0f, 0.0f}, {INFINITY, 2.0f},
        {2.0f, INFINITY}, {INFINITY, INFINITY}, {1e-30f, 1e10f}, {1e30f, 1e-10f}, {3e38f, 0.5f},
        {1.5e-38f, 2.0f}, {-1e-37f, 3.0f}, {1.0f, 1e-37f}, {6.0f, -3.0f}, {1e38f, 3e-39f},
    };
    for (unsigned l = 0; l < 64; l++) {
        if (l < sizeof special / sizeof special[0]) {
            num[l] = special[l][0];
            den[l] = special[l][1];
        } else {
            num[l] = ldexpf((float)(rnd() % 1000000 + 1) / 1000000.0f, (int)(rnd() % 80) - 40) * (rnd() & 1 ? 1 : -1);
            den[l] = ldexpf((float)(rnd() % 1000000 + 1) / 1000000.0f, (int)(rnd() % 80) - 40);
        }
        g_vregs[0][l] = bf(num[l]);
        g_vregs[1][l] = bf(den[l]);
    }
    run_ok(&h);
    assert_int_equal(h.w.mode, MODE_HIP);
    int bad = 0;
    for (unsigned l = 0; l < 64; l++) {
        float want = ftz(ftz(num[l]) / ftz(den[l]));
        float got = fb(g_vregs[0][l]);
        int ok = isnan(want) ? isnan(got) : bf(got) == bf(want);
        if (!ok && bad++ < 8)
            print_error("lane %u: %a / %a = %a, want %a\n", l, (double)num[l], (double)den[l], (double)got, (double)want);
    }
    assert_int_equal(bad, 0);
    wave_fini(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_carry64), cmocka_unit_test(test_wide),  cmocka_unit_test(test_lanes),
        cmocka_unit_test(test_float),   cmocka_unit_test(test_fdiv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
