/*
 * 313-valu-misc.c - the remaining VALU opcodes on a hand-built wavefront:
 * packing conversions (v_cvt_pk_u8_f32, v_cvt_pkaccum_u8_f32,
 * v_cvt_pknorm_i16/u16_f32, v_cvt_pk_u16_u32, v_cvt_pk_i16_i32),
 * v_cvt_off_f32_i4, media ops (v_lerp_u8, v_sad_hi_u8, v_msad_u8,
 * v_qsad_pk_u16_u8, v_mqsad_pk_u16_u8, v_mqsad_u32_u8), the cube-map ops,
 * v_trig_preop_f64, v_clrexcp, the graphics-only f16 interpolation (reported),
 * and MODE.FP_ROUND applied to the f32/f64 handlers by gcn_sem_fp_round_exec.
 * Expected values are worked out from the ISA manual definitions (Sec. 12.7)
 * and AMD's cl_amd_media_ops2 for the SAD family.
 */
#include <fenv.h>
#include <math.h>

#include "3xx_wave_harness.h"
#include "data/31x-programs.h"

/* gcn_sem_valu.c: run an instruction under MODE.FP_ROUND */
void gcn_sem_fp_round_exec(gcn_wave *w, const gcn_insn *in, gcn_exec_fn h);

static uint64_t rnd_state = 0x5851f42d4c957f2dull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}
#define MASKED 0xdeadbeefu

static uint32_t u8_of(float f) /* round to nearest even, saturate, NaN -> 0 */
{
    if (isnan(f) || f <= 0) return 0;
    if (f >= 255) return 255;
    float r = floorf(f), d = f - r;
    if (d > 0.5f || (d == 0.5f && fmodf(r, 2) != 0)) r += 1;
    return (uint32_t)r;
}
static uint32_t absdiff(uint32_t a, uint32_t b) { return a > b ? a - b : b - a; }
static uint32_t sad_ref(uint32_t a, uint32_t b, int masked)
{
    uint32_t s = 0;
    for (int i = 0; i < 32; i += 8)
        if (!masked || ((b >> i) & 0xff)) s += absdiff((a >> i) & 0xff, (b >> i) & 0xff);
    return s;
}

static void test_pack(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog31_misc_pack, 0);
    float f0[64], f3[64], f7[64];
    uint32_t v1[64], v2[64], v4[64], v5[64], v6[64], old[64];
    uint64_t ex = 0xfffffeffffffffefull;
    for (unsigned l = 0; l < 64; l++) {
        f0[l] = l < 32 ? (float)((int)(rnd() % 6000) - 1000) / 16.0f : (float)((int)(rnd() % 3001) - 1500) / 1000.0f;
        f3[l] = (float)((int)(rnd() % 4001) - 2000) / 1000.0f;
        f7[l] = (float)((int)(rnd() % 4001) - 2000) / 1000.0f;
        v1[l] = (uint32_t)rnd();
        v2[l] = (uint32_t)rnd();
        v4[l] = (uint32_t)rnd();
        v5[l] = (l & 1) ? (uint32_t)rnd() : (uint32_t)(rnd() & 0x00ff00ffu); /* zero reference bytes */
        v6[l] = (uint32_t)rnd();
        if (l < 8) v4[l] = (uint32_t)((int)l - 4) * 7000u, v5[l] = (uint32_t)l * 40000u;
        old[l] = (uint32_t)rnd();
        g_vregs[0][l] = bf(f0[l]);
        g_vregs[1][l] = v1[l];
        g_vregs[2][l] = v2[l];
        g_vregs[3][l] = bf(f3[l]);
        g_vregs[4][l] = v4[l];
        g_vregs[5][l] = v5[l];
        g_vregs[6][l] = v6[l];
        g_vregs[7][l] = bf(f7[l]);
        for (unsigned r = 10; r <= 23; r++) g_vregs[r][l] = old[l];
    }
    f0[1] = 2.5f, f0[2] = 3.5f, f0[3] = NAN, f0[9] = 300.0f; /* ties to even, NaN, saturation */
    for (unsigned l = 1; l < 10; l++) g_vregs[0][l] = bf(f0[l]);
    f0[40] = 0.0f, f3[40] = -3.0f, f7[40] = 1.0f; /* |z| major, z > 0 vs |y| = 3: y major */
    f0[41] = 0.5f, f3[41] = -2.0f, f7[41] = 1.0f;
    f0[42] = -4.0f, f3[42] = 1.0f, f7[42] = 2.0f;
    f0[43] = 1.0f, f3[43] = 1.0f, f7[43] = -1.0f; /* ties: z wins, then y */
    for (unsigned l = 40; l < 44; l++) g_vregs[0][l] = bf(f0[l]), g_vregs[3][l] = bf(f3[l]), g_vregs[7][l] = bf(f7[l]);
    gcn_set_exec(&h.w, ex);
    run_ok(&h);
    for (unsigned l = 0; l < 64; l++) {
        if (!((ex >> l) & 1)) {
            for (unsigned r = 10; r <= 23; r++) assert_int_equal(g_vregs[r][l], old[l]);
            continue;
        }
        unsigned sh = 8 * (v1[l] & 3);
        assert_int_equal(g_vregs[10][l], (v2[l] & ~(0xffu << sh)) | u8_of(f0[l]) << sh);
        assert_int_equal(g_vregs[11][l], (old[l] & ~(0xffu << sh)) | u8_of(f0[l]) << sh);
        float c0 = f0[l] < -1 ? -1 : f0[l] > 1 ? 1 : f0[l], c3 = f3[l] < -1 ? -1 : f3[l] > 1 ? 1 : f3[l];
        assert_int_equal(g_vregs[12][l], (uint32_t)(uint16_t)(int16_t)rintf(c0 * 32767) |
                                             (uint32_t)(uint16_t)(int16_t)rintf(c3 * 32767) << 16);
        float u0 = f0[l] < 0 ? 0 : f0[l] > 1 ? 1 : f0[l], u3 = f3[l] < 0 ? 0 : f3[l] > 1 ? 1 : f3[l];
        assert_int_equal(g_vregs[13][l], (uint32_t)rintf(u0 * 65535) | (uint32_t)rintf(u3 * 65535) << 16);
        uint32_t a16 = v4[l] > 0xffff ? 0xffff : v4[l], b16 = v5[l] > 0xffff ? 0xffff : v5[l];
        assert_int_equal(g_vregs[14][l], a16 | b16 << 16);
        int32_t ai = (int32_t)v4[l], bi = (int32_t)v5[l];
        ai = ai > 32767 ? 32767 : ai < -32768 ? -32768 : ai;
        bi = bi > 32767 ? 32767 : bi < -32768 ? -32768 : bi;
        assert_int_equal(g_vregs[15][l], (uint32_t)(uint16_t)ai | (uint32_t)(uint16_t)bi << 16);
        /* cvt_off: S0[3:0] as signed 4-bit, times 1/16 */
        int n4 = (int)(v4[l] & 15) - ((v4[l] & 8) ? 16 : 0);
        assert_int_equal(g_vregs[16][l], bf((float)n4 / 16.0f));
        uint32_t lerp = 0;
        for (int i = 0; i < 32; i += 8)
            lerp |= ((((v4[l] >> i) & 0xff) + ((v5[l] >> i) & 0xff) + ((v6[l] >> i) & 1)) >> 1) << i;
        assert_int_equal(g_vregs[17][l], lerp);
        assert_int_equal(g_vregs[18][l], (sad_ref(v4[l], v5[l], 0) << 16) + v6[l]);
        assert_int_equal(g_vregs[19][l], sad_ref(v4[l], v5[l], 1) + v6[l]);
        /* cube: major axis z (ties to z, then y), else y, else x */
        float x = f0[l], y = f3[l], z = f7[l], id, sc, tc, ma;
        if (fabsf(z) >= fabsf(x) && fabsf(z) >= fabsf(y)) id = z < 0 ? 5 : 4, sc = z < 0 ? -x : x, tc = -y, ma = 2 * z;
        else if (fabsf(y) >= fabsf(x)) id = y < 0 ? 3 : 2, sc = x, tc = y < 0 ? -z : z, ma = 2 * y;
        else id = x < 0 ? 1 : 0, sc = x < 0 ? z : -z, tc = -y, ma = 2 * x;
        assert_int_equal(g_vregs[20][l], bf(id));
        assert_int_equal(g_vregs[21][l], bf(sc));
        assert_int_equal(g_vregs[22][l], bf(tc));
        assert_int_equal(g_vregs[23][l], bf(ma));
    }
    /* hand-worked lanes */
    assert_int_equal(g_vregs[10][1] >> (8 * (v1[1] & 3)) & 0xff, 2);   /* 2.5 -> 2 */
    assert_int_equal(g_vregs[10][2] >> (8 * (v1[2] & 3)) & 0xff, 4);   /* 3.5 -> 4 */
    assert_int_equal(g_vregs[10][3] >> (8 * (v1[3] & 3)) & 0xff, 0);   /* NaN -> 0 */
    assert_int_equal(g_vregs[10][9] >> (8 * (v1[9] & 3)) & 0xff, 255); /* saturate */
    assert_int_equal(g_vregs[20][41], bf(3.0f));   /* -y face */
    assert_int_equal(g_vregs[22][41], bf(-1.0f));  /* tc = -z */
    assert_int_equal(g_vregs[23][41], bf(-4.0f));  /* ma = 2 * y */
    assert_int_equal(g_vregs[20][42], bf(1.0f));   /* -x face */
    assert_int_equal(g_vregs[21][42], bf(2.0f));   /* sc = z */
    assert_int_equal(g_vregs[20][43], bf(5.0f));   /* tie: -z face */
    wave_fini(&h);
}

static void test_qsad(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog31_misc_qsad, 0);
    uint64_t s0[64], acc64[64];
    uint32_t ref[64], acc[64][4], seg[64];
    double x[64];
    for (unsigned l = 0; l < 64; l++) {
        s0[l] = rnd();
        ref[l] = (uint32_t)rnd() & ((l & 1) ? 0xffffffffu : 0xff00ff00u);
        for (int k = 0; k < 4; k++) acc[l][k] = (uint32_t)rnd() >> (l & 3) * 8;
        acc64[l] = (uint64_t)acc[l][1] << 32 | acc[l][0];
        seg[l] = (uint32_t)(l % 26);
        x[l] = l < 32 ? 1.0 + l : ldexp(1.0 + l, 900 + (int)l * 3); /* exponents above 1077 and 1968 */
        set64(0, l, s0[l]);
        g_vregs[2][l] = ref[l];
        for (int k = 0; k < 4; k++) g_vregs[4 + k][l] = acc[l][k];
        g_vregs[3][l] = seg[l];
        uint64_t xb;
        memcpy(&xb, &x[l], 8);
        set64(8, l, xb);
    }
    run_ok(&h);
    /* 2/pi = 0.a2f9836e... (the first 1216 fraction bits, hex digits) */
    static const char two_pi_hex[] =
        "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561b7246e3a424dd2e006492eea09d1921c"
        "fe1deb1cb129a73ee88235f52ebb4484e99c7026b45f7e413991d639835339f49c845f8bbdf9283b1ff897ffde05980f"
        "ef2f118b5a0a6d1f6d367ecf27cb09b74f463f669e5fea2d7527bac7ebe5f17b3d0739f78a5292ea6bfb5fb11f8d5d08"
        "56033046fc7b6bab";
    for (unsigned l = 0; l < 64; l++) {
        uint64_t q = 0, mq = 0;
        uint32_t m32[4];
        for (int k = 0; k < 4; k++) {
            uint32_t win = (uint32_t)(s0[l] >> (8 * k));
            uint32_t a16 = (uint32_t)(acc64[l] >> (16 * k)) & 0xffff;
            q |= (uint64_t)((sad_ref(win, ref[l], 0) + a16) & 0xffff) << (16 * k);
            mq |= (uint64_t)((sad_ref(win, ref[l], 1) + a16) & 0xffff) << (16 * k);
            m32[k] = sad_ref(win, ref[l], 1) + acc[l][k];
        }
        assert_int_equal(v64(10, l), q);
        assert_int_equal(v64(12, l), mq);
        for (int k = 0; k < 4; k++) assert_int_equal(g_vregs[16 + k][l], m32[k]);
        /* trig_preop: 53 bits of 2/pi from bit shift on, times 2^(-53 - shift) */
        uint64_t xb;
        memcpy(&xb, &x[l], 8);
        int ex = (int)(xb >> 52 & 0x7ff);
        unsigned shift = seg[l] * 53 + (ex > 1077 ? (unsigned)(ex - 1077) : 0);
        uint64_t m = 0;
        for (unsigned k = shift; k < shift + 53; k++) {
            unsigned bit = 0;
            if (k <= 1200) {
                char c = two_pi_hex[k / 4];
                unsigned nib = (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
                bit = (nib >> (3 - k % 4)) & 1;
            }
            m = m << 1 | bit;
        }
        double want = ldexp((double)m, -53 - (int)shift + (ex >= 1968 ? 128 : 0));
        uint64_t wb;
        memcpy(&wb, &want, 8);
        assert_int_equal(v64(20, l), wb);
    }
    /* segment 0 of a small input is 2/pi truncated to 53 bits (as the f64 inline constant 1/(2pi) is) */
    assert_int_equal(v64(20, 0), 0x3fe45f306dc9c882ull);
    wave_fini(&h);
}

static void test_interp_f16_reported(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog31_misc_interp, 0);
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_ILLEGAL);
    assert_non_null(strstr(h.w.err, "v_interp_p2_f16"));
    assert_non_null(strstr(h.w.err, "graphics"));
    wave_fini(&h);
}

/* the reference results under host rounding modes m32 (f32) and m64 (f64);
 * volatile operands and a separate function keep the compiler from moving or
 * sharing the arithmetic across fesetround */
static __attribute__((noinline)) void ref_round(int m32, int m64, volatile float a, volatile float b, volatile float c,
                                                volatile double x, volatile double y, volatile uint32_t u, float *s,
                                                float *p, float *f, float *md, float *cu, double *dd)
{
    fesetround(m32);
    volatile float vs = a + b, vp = a * b, vf = fmaf(a, b, c), vp2 = a * b;
    volatile float vmd = vp2 + c, vcu = (float)u;
    fesetround(m64);
    volatile double vdd = x + y;
    fesetround(FE_TONEAREST);
    *s = vs, *p = vp, *f = vf, *md = vmd, *cu = vcu, *dd = vdd;
}

/* MODE.FP_ROUND[1:0] (f32) and [3:2] (f64) around the f32/f64 handlers; v_rndne stays even */
static void test_round_exec(void **state)
{
    (void)state;
    static const int host[4] = {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
    for (int rm = 0; rm < 4; rm++) {
        harness h;
        WAVE_INIT(&h, prog31_round_f32, 0);
        h.w.mode = MODE_HIP | 0x30u | (uint32_t)rm | (uint32_t)(3 - rm) << 2; /* f32 denormals on */
        float a[64], b[64], c[64];
        double x[64], y[64];
        uint32_t u[64];
        for (unsigned l = 0; l < 64; l++) {
            a[l] = (float)(int32_t)rnd() / 65536.0f;
            b[l] = (float)(int32_t)rnd() / 3.0e6f;
            c[l] = (float)(int32_t)rnd() / 7.0f;
            x[l] = (double)(int64_t)rnd() / 3.0;
            y[l] = (double)(int64_t)rnd() / 7.0e5;
            u[l] = (uint32_t)rnd() | 1;
            if (l == 0) a[l] = 2.5f; /* rndne tie */
            g_vregs[0][l] = bf(a[l]);
            g_vregs[1][l] = bf(b[l]);
            g_vregs[5][l] = bf(c[l]);
            uint64_t xb, yb;
            memcpy(&xb, &x[l], 8);
            memcpy(&yb, &y[l], 8);
            set64(10, l, xb);
            set64(12, l, yb);
            g_vregs[15][l] = u[l];
        }
        for (size_t i = 0; i + 1 < h.p->n_insn; i++) {
            const gcn_insn *in = &h.p->insn[i];
            gcn_sem_fp_round_exec(&h.w, in, gcn_sem_handlers[in->op]);
            assert_int_equal(h.w.status, GCN_WAVE_RUNNING);
        }
        assert_int_equal(fegetround(), FE_TONEAREST); /* host mode restored */
        for (unsigned l = 0; l < 64; l++) {
            float s, p, f, md, cu;
            double dd;
            ref_round(host[rm], host[3 - rm], a[l], b[l], c[l], x[l], y[l], u[l], &s, &p, &f, &md, &cu, &dd);
            assert_int_equal(g_vregs[2][l], bf(s));
            assert_int_equal(g_vregs[3][l], bf(p));
            assert_int_equal(g_vregs[4][l], bf(f));
            assert_int_equal(g_vregs[6][l], bf(md));
            uint64_t db;
            memcpy(&db, &dd, 8);
            assert_int_equal(v64(8, l), db);
            assert_int_equal(g_vregs[7][l], bf(nearbyintf(a[l])));
            assert_int_equal(g_vregs[14][l], bf(cu));
        }
        assert_int_equal(g_vregs[7][0], bf(2.0f));
        wave_fini(&h);
    }
}

/* MODE.FP_ROUND set by s_setreg in the program: the run loop applies it to
 * the f32 handlers (and MODE[3:2] to f16) until it is set back */
static void test_round_e2e(void **state)
{
    (void)state;
    static const int host[4] = {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
    for (int rm = 1; rm < 4; rm++) {
        harness h;
        WAVE_INIT(&h, prog31_round_e2e, 0);
        h.w.s[0] = (uint32_t)(rm | rm << 2);
        float a[64], b[64], c[64];
        for (unsigned l = 0; l < 64; l++) {
            a[l] = (float)(int32_t)rnd() / 65536.0f;
            b[l] = (float)(int32_t)rnd() / 3.0e6f;
            c[l] = (float)(int32_t)rnd() / 7.0f;
            g_vregs[0][l] = bf(a[l]);
            g_vregs[1][l] = bf(b[l]);
            g_vregs[5][l] = bf(c[l]);
            g_vregs[7][l] = 0x3c00; /* f16 1.0 + 2^-24 */
            g_vregs[8][l] = 0x0001;
        }
        run_ok(&h);
        int differ = 0;
        for (unsigned l = 0; l < 64; l++) {
            float s, s0, f, unused;
            double dd;
            ref_round(host[rm], FE_TONEAREST, a[l], b[l], c[l], 0, 0, 0, &s, &unused, &f, &unused, &unused, &dd);
            ref_round(FE_TONEAREST, FE_TONEAREST, a[l], b[l], c[l], 0, 0, 0, &s0, &unused, &unused, &unused, &unused, &dd);
            assert_int_equal(g_vregs[2][l], bf(s));
            assert_int_equal(g_vregs[4][l], bf(f));
            assert_int_equal(g_vregs[3][l], bf(s0)); /* after s_setreg back to nearest */
            assert_int_equal(g_vregs[6][l], rm == 1 ? 0x3c01u : 0x3c00u);
            differ += bf(s) != bf(s0);
        }
        assert_true(differ > 8);
        wave_fini(&h);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack),
        cmocka_unit_test(test_qsad),
        cmocka_unit_test(test_interp_f16_reported),
        cmocka_unit_test(test_round_exec),
        cmocka_unit_test(test_round_e2e),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
