/*
 * 311-valu-f16.c - half-precision VALU semantics on a hand-built wavefront:
 * VOP2/VOP3 arithmetic (add/sub/subrev/mul/min/max/ldexp/mac/mad/fma/
 * div_fixup), input/output modifiers (abs, neg, clamp, omod), f16 inline
 * constants and literals, unary ops and conversions, every v_cmp class and
 * v_cmpx, the MODE denormal (bits 7:6) and round (bits 3:2) fields.
 *
 * Expected values come from the ISA manual's definitions evaluated with an
 * independent reference: the exact result in __float128 (exact for sums,
 * products and fma of f16 values) rounded to f16 by the host's _Float16
 * conversion under the matching fesetround mode. Every lane is checked,
 * including EXEC-masked ones (unchanged) and the zeroed high half.
 */
#include <fenv.h>
#include <math.h>

#include "3xx_wave_harness.h"
#include "data/31x-programs.h"

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

/* ---- reference arithmetic ---- */
static uint16_t hb(_Float16 x) { uint16_t b; memcpy(&b, &x, 2); return b; }
static _Float16 bh(uint16_t b) { _Float16 x; memcpy(&x, &b, 2); return x; }
static int g_rm;  /* GCN round mode 0..3 */
static int g_ftz; /* f16 denormals flushed (MODE bits 7:6 clear) */
static int isnan_h(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff); }
static uint16_t flush(uint16_t h) { return (g_ftz && !(h & 0x7c00)) ? h & 0x8000 : h; }
static __float128 qin(uint16_t h) { return (__float128)bh(flush(h)); }
static __attribute__((noinline)) uint16_t qout(__float128 x)
{
    static const int host[4] = {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
    fesetround(host[g_rm]);
    volatile __float128 v = x;
    volatile _Float16 h = (_Float16)v;
    fesetround(FE_TONEAREST);
    return flush(hb(h));
}
static int qnan(__float128 x) { return x != x; }

/* 16-bit results: NaN matches any NaN; the high half must be zero */
static void check_h(uint32_t got, uint16_t want, unsigned lane, const char *what)
{
    int ok = (got >> 16) == 0 && (isnan_h(want) ? isnan_h((uint16_t)got) : (uint16_t)got == want);
    if (!ok) print_error("%s lane %u: got 0x%08x want 0x%04x\n", what, lane, got, want);
    assert_true(ok);
}

static const uint16_t specials[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x7d00, 0x0001, 0x83ff,
                                    0x0400, 0x7bff, 0xfbff, 0x3555, 0x4200, 0x3800, 0x03ff, 0x8001, 0x5bff, 0x1400};
#define NSPEC (sizeof specials / sizeof specials[0])
static uint16_t gen_h(unsigned l, unsigned salt)
{
    if (l < NSPEC) return specials[(l + salt) % NSPEC];
    uint16_t h = (uint16_t)rnd();
    if ((h & 0x7c00) == 0x7c00 && (rnd() & 3)) h ^= 0x4000; /* fewer NaN/inf */
    return h;
}

#define MASKED 0xdeadbeefu

static __float128 fixup_ref(uint16_t hq, __float128 den, __float128 num, uint16_t hd, uint16_t hn)
{
    int neg = ((hd ^ hn) & 0x8000) != 0;
    if (qnan(num)) return num;
    if (qnan(den)) return den;
    if ((den == 0 && num == 0) || (__builtin_isinf((double)den) && __builtin_isinf((double)num))) return (__float128)NAN;
    if (den == 0 || __builtin_isinf((double)num)) return neg ? -(__float128)INFINITY : (__float128)INFINITY;
    if (__builtin_isinf((double)den) || num == 0) return neg ? -(__float128)0.0 : (__float128)0.0;
    __float128 aq = qin(hq & 0x7fff);
    return neg ? -aq : aq;
}

static uint16_t minmax_ref(uint16_t x, uint16_t y, int is_max)
{
    x = flush(x);
    y = flush(y);
    if (isnan_h(x) && !(x & 0x200)) return x | 0x200;
    if (isnan_h(y) && !(y & 0x200)) return y | 0x200;
    if (isnan_h(x)) return y;
    if (isnan_h(y)) return x;
    float a = (float)bh(x), b = (float)bh(y);
    if (a == b) return (uint16_t)(((x & 0x8000) != 0) == is_max ? y : x);
    return (a > b) == is_max ? x : y;
}

static void run_vop2(int mode_ftz)
{
    harness h;
    WAVE_INIT(&h, prog31_f16_vop2, 0);
    g_ftz = mode_ftz;
    g_rm = 0;
    h.w.mode = mode_ftz ? 0x300u : MODE_HIP;
    uint16_t a[64], b[64], c[64];
    int16_t e[64];
    uint64_t ex = 0xf0f0ffff3fffffffull;
    for (unsigned l = 0; l < 64; l++) {
        a[l] = gen_h(l, 0);
        b[l] = gen_h(l, 7);
        c[l] = gen_h(l, 3);
        e[l] = (int16_t)((int)(rnd() % 61) - 30);
        g_vregs[0][l] = a[l] | 0xabcd0000u; /* high halves are ignored */
        g_vregs[1][l] = b[l] | 0x12340000u;
        g_vregs[2][l] = c[l];
        g_vregs[3][l] = (uint16_t)e[l];
        for (unsigned r = 10; r <= 20; r++) g_vregs[r][l] = MASKED;
        g_vregs[17][l] = c[l];
    }
    /* the fma tie case: a*b = 2^-48 added to 1.0 is exact only with the round-to-odd sum */
    a[20] = b[20] = 0x0001;
    c[20] = 0x3c00;
    g_vregs[0][20] = a[20];
    g_vregs[1][20] = b[20];
    g_vregs[2][20] = g_vregs[17][20] = c[20];
    gcn_set_exec(&h.w, ex);
    run_ok(&h);
    for (unsigned l = 0; l < 64; l++) {
        if (!((ex >> l) & 1)) {
            for (unsigned r = 10; r <= 20; r++)
                if (r != 17) assert_int_equal(g_vregs[r][l], MASKED);
            assert_int_equal(g_vregs[17][l], c[l]);
            continue;
        }
        __float128 x = qin(a[l]), y = qin(b[l]), z = qin(c[l]);
        check_h(g_vregs[10][l], qout(x + y), l, "v_add_f16");
        check_h(g_vregs[11][l], qout(x - y), l, "v_sub_f16");
        check_h(g_vregs[12][l], qout(y - x), l, "v_subrev_f16");
        check_h(g_vregs[13][l], qout(x * y), l, "v_mul_f16");
        check_h(g_vregs[14][l], minmax_ref(a[l], b[l], 1), l, "v_max_f16");
        check_h(g_vregs[15][l], minmax_ref(a[l], b[l], 0), l, "v_min_f16");
        check_h(g_vregs[16][l], qout(x * (__float128)ldexp(1.0, e[l])), l, "v_ldexp_f16");
        __float128 p = qin(qout(x * y));
        check_h(g_vregs[17][l], qout(p + z), l, "v_mac_f16");
        check_h(g_vregs[18][l], qout(p + z), l, "v_mad_f16");
        check_h(g_vregs[19][l], qout(x * y + z), l, "v_fma_f16");
        check_h(g_vregs[20][l], qout(fixup_ref(a[l], y, z, flush(b[l]), flush(c[l]))), l, "v_div_fixup_f16");
    }
    wave_fini(&h);
}

static void test_vop2(void **state) { (void)state; run_vop2(0); }
static void test_vop2_flush(void **state) { (void)state; run_vop2(1); }

static void test_mods(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog31_f16_mods, 0);
    g_ftz = 0;
    g_rm = 0;
    uint16_t a[64], b[64], c[64];
    for (unsigned l = 0; l < 64; l++) {
        a[l] = gen_h(l, 1);
        b[l] = gen_h(l, 5);
        c[l] = gen_h(l, 11);
        g_vregs[0][l] = a[l];
        g_vregs[1][l] = b[l];
        g_vregs[2][l] = c[l];
    }
    run_ok(&h);
    for (unsigned l = 0; l < 64; l++) {
        __float128 x = qin(a[l]), y = qin(b[l]), z = qin(c[l]);
        __float128 ay = y < 0 ? -y : y, ax = x < 0 ? -x : x;
        check_h(g_vregs[10][l], qout(-x + ay), l, "v_add_f16 -a |b|");
        __float128 m = x * y;
        m = qnan(m) ? 0 : m < 0 ? 0 : m > 1 ? 1 : m;
        check_h(g_vregs[11][l], qout(m), l, "v_mul_f16 clamp");
        check_h(g_vregs[12][l], qout((x + y) * 2), l, "v_add_f16 mul:2");
        check_h(g_vregs[13][l], qout((-ax * y - z) / 2), l, "v_fma_f16 div:2");
        check_h(g_vregs[14][l], qout(qin(qout(x * y)) + 3), l, "v_madak_f16");
        check_h(g_vregs[15][l], qout(qin(qout(x * (__float128)0.5)) + y), l, "v_madmk_f16");
        check_h(g_vregs[16][l], qout(1 + x), l, "v_add_f16 literal 1.0");
        check_h(g_vregs[17][l], qout(1 + x), l, "v_add_f16 inline 1.0");
        check_h(g_vregs[18][l], qout(qin(0x3118) * x), l, "v_mul_f16 inline 1/(2pi)");
        check_h(g_vregs[19][l], qout(qin(0x0001) + x), l, "v_add_f16 inline integer 1 (raw bits)");
        check_h(g_vregs[20][l], qout((2 - x) * 4), l, "v_sub_f16 mul:4");
    }
    wave_fini(&h);
}

/* result within `ulps` f16 steps of want (same sign), or both NaN, or equal */
static void check_h_ulp(uint32_t got, double want_d, int ulps, unsigned lane, const char *what)
{
    uint16_t want = hb((_Float16)want_d), g = (uint16_t)got;
    int ok = (got >> 16) == 0;
    if (isnan_h(want)) ok = ok && isnan_h(g);
    else if (g != want) ok = ok && !isnan_h(g) && ((g ^ want) & 0x8000) == 0 && abs((int)(g & 0x7fff) - (int)(want & 0x7fff)) <= ulps;
    if (!ok) print_error("%s lane %u: got 0x%08x want 0x%04x (%g)\n", what, lane, got, want, want_d);
    assert_true(ok);
}

static void test_unary(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog31_f16_unary, 0);
    g_ftz = 0;
    g_rm = 0;
    uint16_t a[64], u[64];
    uint64_t ex = 0x7fffffffffff0fffull;
    for (unsigned l = 0; l < 64; l++) {
        a[l] = gen_h(l, 2);
        if (l >= 40) a[l] = hb((_Float16)((double)(int)(rnd() % 2000) / 16.0 - 62.5)); /* moderate values */
        u[l] = (uint16_t)rnd();
        g_vregs[0][l] = a[l];
        g_vregs[1][l] = u[l];
        for (unsigned r = 10; r <= 27; r++) g_vregs[r][l] = MASKED;
    }
    gcn_set_exec(&h.w, ex);
    run_ok(&h);
    for (unsigned l = 0; l < 64; l++) {
        if (!((ex >> l) & 1)) {
            for (unsigned r = 10; r <= 27; r++) assert_int_equal(g_vregs[r][l], MASKED);
            continue;
        }
        double x = (double)bh(a[l]);
        check_h(g_vregs[10][l], hb((_Float16)(1.0 / x)), l, "v_rcp_f16");
        check_h(g_vregs[11][l], hb((_Float16)sqrt(x)), l, "v_sqrt_f16");
        check_h_ulp(g_vregs[12][l], 1.0 / sqrt(x), 1, l, "v_rsq_f16");
        check_h_ulp(g_vregs[13][l], log2(x), 1, l, "v_log_f16");
        check_h_ulp(g_vregs[14][l], exp2(x), 1, l, "v_exp_f16");
        /* sin/cos take revolutions; allow 1 ulp plus the absolute error near zeros */
        double sn = sin(x * 2 * M_PI), cs = cos(x * 2 * M_PI);
        if (fabs(sn) > 1e-2 || isnan(sn)) check_h_ulp(g_vregs[15][l], sn, 1, l, "v_sin_f16");
        else assert_true(fabs((double)bh((uint16_t)g_vregs[15][l]) - sn) < 1e-3);
        if (fabs(cs) > 1e-2 || isnan(cs)) check_h_ulp(g_vregs[16][l], cs, 1, l, "v_cos_f16");
        else assert_true(fabs((double)bh((uint16_t)g_vregs[16][l]) - cs) < 1e-3);
        check_h(g_vregs[17][l], hb((_Float16)floor(x)), l, "v_floor_f16");
        check_h(g_vregs[18][l], hb((_Float16)ceil(x)), l, "v_ceil_f16");
        check_h(g_vregs[19][l], hb((_Float16)trunc(x)), l, "v_trunc_f16");
        check_h(g_vregs[20][l], hb((_Float16)nearbyint(x)), l, "v_rndne_f16");
        /* fract: x - floor(x), at most the largest f16 below 1; NaN for inf and NaN */
        double fr = isinf(x) ? NAN : fmin(x - floor(x), 0x1.ffcp-1);
        check_h(g_vregs[21][l], hb((_Float16)fr), l, "v_fract_f16");
        int ee = 0;
        double mant = (isinf(x) || isnan(x)) ? x : frexp(x, &ee);
        check_h(g_vregs[22][l], hb((_Float16)mant), l, "v_frexp_mant_f16");
        assert_int_equal(g_vregs[23][l], (uint16_t)(int16_t)ee);
        uint32_t cu = isnan(x) || x <= 0 ? 0 : x >= 65535 ? 65535 : (uint32_t)x;
        assert_int_equal(g_vregs[24][l], cu);
        int ci = isnan(x) ? 0 : x >= 32767 ? 32767 : x <= -32768 ? -32768 : (int)x;
        assert_int_equal(g_vregs[25][l], (uint16_t)(int16_t)ci);
        check_h(g_vregs[26][l], hb((_Float16)(float)u[l]), l, "v_cvt_f16_u16");
        check_h(g_vregs[27][l], hb((_Float16)(float)(int16_t)u[l]), l, "v_cvt_f16_i16");
    }
    wave_fini(&h);
}

static unsigned class_ref(uint16_t h)
{
    unsigned e = (h >> 10) & 31, f = h & 0x3ff, neg = h >> 15;
    if (e == 31) return f ? ((f & 0x200) ? 1 : 0) : (neg ? 2 : 9);
    if (e == 0) return f ? (neg ? 4 : 7) : (neg ? 5 : 6);
    return neg ? 3 : 8;
}

static void test_cmp(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog31_f16_cmp, 0);
    g_ftz = 0;
    uint16_t a[64], b[64];
    uint32_t m[64];
    uint64_t ex = 0xffff0000fffffff7ull;
    for (unsigned l = 0; l < 64; l++) {
        a[l] = gen_h(l, 4);
        b[l] = (l & 3) == 0 ? a[l] : gen_h(l, 9); /* equal pairs too */
        if (l == 30) a[l] = 0x3c00; /* 1.0 for the inline-constant compare */
        m[l] = (uint32_t)rnd() & 0x3ff;
        g_vregs[0][l] = a[l];
        g_vregs[1][l] = b[l];
        g_vregs[2][l] = m[l];
    }
    gcn_set_exec(&h.w, ex);
    uint64_t exp_[16] = {0}, cls = 0, ltm = 0, eq1 = 0, gt = 0;
    for (unsigned l = 0; l < 64; l++) {
        if (!((ex >> l) & 1)) continue;
        float x = (float)bh(a[l]), y = (float)bh(b[l]);
        int r[16] = {x < y, x == y, x <= y, x > y, x < y || x > y, x >= y, !isnan(x) && !isnan(y),
                     isnan(x) || isnan(y), !(x >= y), !(x < y || x > y), !(x > y), !(x <= y), !(x == y),
                     !(x < y), 1, 0};
        for (int k = 0; k < 16; k++) exp_[k] |= (uint64_t)r[k] << l;
        cls |= (uint64_t)((m[l] >> class_ref(a[l])) & 1) << l;
        ltm |= (uint64_t)(-x < fabsf(y)) << l;
        eq1 |= (uint64_t)(x == 1.0f) << l;
        gt |= (uint64_t)(x > y) << l;
    }
    run_ok(&h);
    const char *names[16] = {"lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt", "tru", "f"};
    for (int k = 0; k < 16; k++) {
        uint64_t got = (uint64_t)h.w.s[2 * k] | (uint64_t)h.w.s[2 * k + 1] << 32;
        if (got != exp_[k]) print_error("v_cmp_%s_f16: got 0x%016llx want 0x%016llx\n", names[k],
                                        (unsigned long long)got, (unsigned long long)exp_[k]);
        assert_int_equal(got, exp_[k]);
    }
    assert_int_equal((uint64_t)h.w.s[32] | (uint64_t)h.w.s[33] << 32, cls);
    assert_int_equal((uint64_t)h.w.s[34] | (uint64_t)h.w.s[35] << 32, ltm);
    assert_int_equal((uint64_t)h.w.s[36] | (uint64_t)h.w.s[37] << 32, eq1);
    assert_true(eq1 >> 30 & 1);
    assert_int_equal((uint64_t)h.w.s[38] | (uint64_t)h.w.s[39] << 32, cls);
    assert_int_equal(gcn_vcc(&h.w), gt);
    assert_int_equal(gcn_exec_mask(&h.w), gt); /* v_cmpx wrote EXEC */
    wave_fini(&h);
}

/* MODE.FP_ROUND[3:2] set by s_setreg: every f16 result rounds by it */
static void test_round_modes(void **state)
{
    (void)state;
    for (int rm = 0; rm < 4; rm++) {
        harness h;
        WAVE_INIT(&h, prog31_f16_round, 0);
        g_ftz = 0;
        g_rm = rm;
        h.w.s[0] = (uint32_t)rm;
        uint16_t a[64], b[64], c[64], u[64];
        for (unsigned l = 0; l < 64; l++) {
            a[l] = gen_h(l, 6);
            b[l] = gen_h(l, 13);
            c[l] = gen_h(l, 17);
            u[l] = (uint16_t)(rnd() | 0x800);
            g_vregs[0][l] = a[l];
            g_vregs[1][l] = b[l];
            g_vregs[2][l] = c[l];
            g_vregs[3][l] = u[l];
        }
        a[21] = b[21] = 0x0001; /* 1.0 + 2^-48: the directed modes must see the tiny product */
        c[21] = 0x3c00;
        g_vregs[0][21] = a[21];
        g_vregs[1][21] = b[21];
        g_vregs[2][21] = c[21];
        run_ok(&h);
        assert_int_equal((h.w.mode >> 2) & 3, (uint32_t)rm);
        for (unsigned l = 0; l < 64; l++) {
            __float128 x = qin(a[l]), y = qin(b[l]), z = qin(c[l]);
            check_h(g_vregs[10][l], qout(x + y), l, "v_add_f16 (round mode)");
            check_h(g_vregs[11][l], qout(x * y), l, "v_mul_f16 (round mode)");
            check_h(g_vregs[12][l], qout(x * y + z), l, "v_fma_f16 (round mode)");
            check_h(g_vregs[13][l], qout(qin(qout(x * y)) + z), l, "v_mad_f16 (round mode)");
            check_h(g_vregs[14][l], qout((__float128)u[l]), l, "v_cvt_f16_u16 (round mode)");
            if (!(x < 0)) check_h(g_vregs[15][l], qout((__float128)sqrt((double)x)), l, "v_sqrt_f16 (round mode)");
        }
        if (rm == 1) assert_int_equal(g_vregs[12][21], 0x3c01); /* toward +inf */
        if (rm != 1) assert_int_equal(g_vregs[12][21], 0x3c00);
        wave_fini(&h);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vop2),  cmocka_unit_test(test_vop2_flush), cmocka_unit_test(test_mods),
        cmocka_unit_test(test_unary), cmocka_unit_test(test_cmp),        cmocka_unit_test(test_round_modes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
