/*
 * gcn_sem_valu.c - VALU instruction semantics beyond gcn_sem.c: 16-bit float
 * arithmetic, compares and conversions, the 16-bit integer conversions, the
 * packing / media ops (v_cvt_pk*, v_lerp_u8, v_msad/qsad/mqsad, v_sad_hi_u8),
 * the cube-map ops, v_cvt_off_f32_i4, v_trig_preop_f64 and v_clrexcp.
 * Source: AMD GCN3 ISA manual (Rev 1.1, 2016) Ch. 6 and 12.7 (VOP2/VOP1/VOPC/
 * VOP3 opcode descriptions); AMD cl_amd_media_ops2 for the exact SAD variants.
 *
 * Half precision (f16) model. Operands are the low 16 bits of a VGPR / SGPR /
 * constant; abs/neg act on bit 15; input denormals are flushed when
 * MODE.FP_DENORM[2] (bit 6, "f64/f16 input denormals allowed") is clear and
 * results when bit 7 is clear (ISA manual Sec. 3.5.2: the f64 denormal field
 * also governs f16). Results are rounded to f16 by MODE.FP_ROUND[3:2] (f64/f16
 * round mode: 0 nearest even, 1 +inf, 2 -inf, 3 toward zero), written to bits
 * 15:0 with bits 31:16 zeroed (gfx8 16-bit VALU ops zero the high half; LLVM
 * GCNSubtarget::zeroesHigh16BitsOfDest). Every operation is computed exactly
 * in double and rounded once: sums, differences and products of two f16 values
 * are exact in double; fma uses round-to-odd in double (53 >= 11 + 2 bits
 * makes the final rounding correct in every mode); quotients and square roots
 * of f16 values cannot lie within 2^-53 of an f16 rounding boundary without
 * being on it. v_mad_f16 / v_mac_f16 / v_madak / v_madmk round the product to
 * f16 before the add (unfused, like V_MAD_F32).
 *
 * Accuracy of the transcendental ops against the ISA manual (Sec. 12.7 gives
 * no ulp bounds for GCN3 beyond "approximate"; LLVM documents the hardware
 * v_rcp_f32/v_rsq_f32/v_sqrt_f32 at 1 ulp, v_exp_f32/v_log_f32 at 1 ulp on
 * normal results, f16 forms at 0.51 ulp):
 *   v_rcp_f16, v_sqrt_f16, v_rsq_f16   correctly rounded (<= 0.5 ulp): at least
 *                                      as accurate as the hardware; results may
 *                                      differ from silicon in the last bit.
 *   v_exp_f16, v_log_f16               exp2/log2 in double, rounded once
 *                                      (<= 0.5 ulp + 2^-40 relative).
 *   v_sin_f16, v_cos_f16               sin/cos(x * 2pi) in double (input in
 *                                      revolutions as in the manual); the
 *                                      hardware's input range limit (|x| < 256
 *                                      revolutions for f32) is not modelled:
 *                                      larger inputs give the exact answer.
 *   f32/f64 forms (gcn_sem.c)          host libm / IEEE division: correctly
 *                                      rounded or <= 1 ulp (glibc), i.e. at
 *                                      least as accurate as the hardware's
 *                                      1-ulp approximations; v_rcp_iflag_f32 /
 *                                      *_legacy are computed like the plain ops.
 *   v_trig_preop_f64                   exact (table of 1216 bits of 2/pi).
 */
#include <fenv.h>

#include "gcn_sem_internal.h"

#include "gcn_sem_ops.h"

/* referenced by gcn_sem.c so that the static library links this file */
const char gcn_sem_valu_part[] = "valu";

/* ---- f16 <-> double with the four GCN round modes --------------------------------- */

enum { RM_NEAREST = 0, RM_PLUS_INF = 1, RM_MINUS_INF = 2, RM_ZERO = 3 };

static inline double h2d(uint16_t h) { return (double)f16_to_f32(h); }

/* x rounded to f16 by mode rm (GCN encoding); NaN keeps its sign and top payload
 * bits and comes out quiet. Exact for every finite x. */
static uint16_t d2h(double x, int rm)
{
    uint64_t b = db_of(x);
    uint16_t sign = (uint16_t)((b >> 48) & 0x8000);
    if (isnan(x)) return (uint16_t)(sign | 0x7e00 | ((b >> 42) & 0x3ff));
    double ax = fabs(x);
    if (isinf(x)) return (uint16_t)(sign | 0x7c00);
    if (ax == 0.0) return sign;
    int e;
    frexp(ax, &e);                    /* ax = m * 2^e, m in [0.5, 1) */
    int E = e - 1;                    /* ax in [2^E, 2^(E+1)) */
    if (E < -14) E = -14;             /* subnormal quantum */
    if (E > 15) E = 16;               /* far above the range: overflow below */
    double q = ldexp(1.0, E - 10);    /* f16 quantum at this exponent */
    double t = ax / q;                /* exact: power-of-two scaling */
    double i = floor(t), frac = t - i;
    int up;
    switch (rm) {
    case RM_NEAREST: up = frac > 0.5 || (frac == 0.5 && fmod(i, 2.0) != 0.0); break;
    case RM_PLUS_INF: up = frac > 0.0 && !sign; break;
    case RM_MINUS_INF: up = frac > 0.0 && sign; break;
    default: up = 0; break;
    }
    double v = (i + up) * q;
    if (v > 65504.0) {
        int to_inf = rm == RM_NEAREST || (rm == RM_PLUS_INF && !sign) || (rm == RM_MINUS_INF && sign);
        return (uint16_t)(sign | (to_inf ? 0x7c00 : 0x7bff));
    }
    if (v < 0x1p-14) return (uint16_t)(sign | (uint16_t)(v * 0x1p24)); /* subnormal (or 2^-14 exactly below) */
    int ve;
    double vm = frexp(v, &ve); /* v = vm * 2^ve, vm in [0.5, 1) */
    return (uint16_t)(sign | (uint16_t)((ve - 1 + 15) << 10) | (uint16_t)((vm * 2048.0) - 1024.0));
}

/* fma(a, b, c) in double with round-to-odd, so that one more rounding to a
 * narrower format (f16) is correct in every rounding mode. The product of two
 * values with at most 24 significant bits is exact in double. Assumes the
 * host rounds to nearest (f16 handlers never run under fesetround). */
static double fma_odd(double a, double b, double c)
{
    double p = a * b, s = p + c;
    if (!isfinite(s)) return s;
    double bb = s - p, err = (p - (s - bb)) + (c - bb);
    if (err != 0.0 && !(db_of(s) & 1)) s = nextafter(s, err > 0 ? INFINITY : -INFINITY);
    return s;
}

typedef struct hmods {
    uint32_t and16[3], xor16[3];
    int ftz_in, ftz_out, clamp, omod, rm;
} hmods;

static inline hmods hmods_of(const gcn_wave *w, const gcn_insn *in)
{
    hmods m;
    for (int i = 0; i < 3; i++) {
        m.and16[i] = ((in->mods >> (GCN_M_ABS_SHIFT + i)) & 1) ? 0x7fffu : 0xffffu;
        m.xor16[i] = ((in->mods >> (GCN_M_NEG_SHIFT + i)) & 1) ? 0x8000u : 0;
    }
    m.ftz_in = !((w->mode >> 6) & 1);
    m.ftz_out = !((w->mode >> 7) & 1);
    m.clamp = !!(in->mods & GCN_M_CLAMP);
    m.omod = (in->mods >> GCN_M_OMOD_SHIFT) & 3;
    m.rm = (int)((w->mode >> 2) & 3);
    return m;
}

/* f16 source bits (low half of an operand) with abs/neg and input flushing */
static inline uint16_t hbits(const hmods *m, int i, uint32_t b)
{
    uint16_t h = (uint16_t)((b & m->and16[i]) ^ m->xor16[i]);
    if (m->ftz_in && (h & 0x7c00) == 0) h &= 0x8000;
    return h;
}
static inline double hin(const hmods *m, int i, uint32_t b) { return h2d(hbits(m, i, b)); }

/* round an intermediate to f16 precision (unfused mad), honouring flushing */
static inline double hround(const hmods *m, double x)
{
    uint16_t h = d2h(x, m->rm);
    if (m->ftz_out && (h & 0x7c00) == 0) h &= 0x8000;
    return h2d(h);
}

/* result: omod, clamp (NaN -> 0 as with DX10_CLAMP), rounding, output flushing */
static inline uint32_t hout(const hmods *m, double x)
{
    if (m->omod) x = m->omod == 1 ? x * 2.0 : m->omod == 2 ? x * 4.0 : x * 0.5;
    if (m->clamp) x = x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : isnan(x) ? 0.0 : x;
    uint16_t h = d2h(x, m->rm);
    if (m->ftz_out && (h & 0x7c00) == 0) h &= 0x8000;
    return h;
}

/* Inline float constants of a 16-bit float operand are f16 values (VI: 0.5,
 * -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0, 1/(2pi)); integer inline constants
 * and literals are raw bits (ISA manual Sec. 6.? with LLVM's VI encoding). */
static const uint16_t inl_f16[9] = {0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118};
static inline const uint32_t *hsrc_lanes(gcn_wave *w, const gcn_insn *in, unsigned c, uint32_t *k)
{
    if (c >= 240 && c <= 248) {
        for (unsigned l = 0; l < GCN_WAVE_LANES; l++) k[l] = inl_f16[c - 240];
        return k;
    }
    return vsrc_lanes(w, in, c, k);
}
#define HSRC(i, x)                                                                          \
    uint32_t x##_k[GCN_WAVE_LANES];                                                         \
    const uint32_t *x##_p = hsrc_lanes(w, in, in->src[i], x##_k)

#define HSETUP                                                                              \
    EXEC_DECL;                                                                              \
    const hmods hm = hmods_of(w, in)
#define HIN(i, bits) hin(&hm, i, bits)
#define HOUT(x) hout(&hm, x)

#define VOP_1H(name, EXPR)                                                                  \
    H(name)                                                                                 \
    {                                                                                       \
        HSETUP;                                                                             \
        HSRC(0, A);                                                                         \
        VDST(d);                                                                            \
        LANES                                                                               \
        {                                                                                   \
            double a = HIN(0, X32(A, l));                                                   \
            d[l] = (EXPR);                                                                  \
        }                                                                                   \
    }
#define VOP_2H(name, EXPR)                                                                  \
    H(name)                                                                                 \
    {                                                                                       \
        HSETUP;                                                                             \
        HSRC(0, A);                                                                         \
        HSRC(1, B);                                                                         \
        VDST(d);                                                                            \
        LANES                                                                               \
        {                                                                                   \
            double a = HIN(0, X32(A, l)), b = HIN(1, X32(B, l));                            \
            d[l] = (EXPR);                                                                  \
        }                                                                                   \
    }
#define VOP_3H(name, EXPR)                                                                  \
    H(name)                                                                                 \
    {                                                                                       \
        HSETUP;                                                                             \
        HSRC(0, A);                                                                         \
        HSRC(1, B);                                                                         \
        HSRC(2, C);                                                                         \
        VDST(d);                                                                            \
        LANES                                                                               \
        {                                                                                   \
            double a = HIN(0, X32(A, l)), b = HIN(1, X32(B, l)), c = HIN(2, X32(C, l));     \
            d[l] = (EXPR);                                                                  \
        }                                                                                   \
    }

/* ---- f16 arithmetic ------------------------------------------------------------------ */

VOP_2H(v_add_f16, HOUT(a + b))
VOP_2H(v_sub_f16, HOUT(a - b))
VOP_2H(v_subrev_f16, HOUT(b - a))
VOP_2H(v_mul_f16, HOUT(a * b))
/* IEEE-mode min/max (MODE.IEEE, set for compute): a quiet NaN operand yields
 * the other operand, a signalling NaN yields itself quieted; -0 < +0. */
static inline uint32_t minmax_h(const hmods *m, uint16_t x, uint16_t y, int is_max)
{
    int xn = (x & 0x7c00) == 0x7c00 && (x & 0x3ff), yn = (y & 0x7c00) == 0x7c00 && (y & 0x3ff);
    if (xn && !(x & 0x200)) return x | 0x200u;
    if (yn && !(y & 0x200)) return y | 0x200u;
    if (xn) return yn ? x : hout(m, h2d(y));
    if (yn) return hout(m, h2d(x));
    double a = h2d(x), b = h2d(y), r;
    if (a == b) r = (signbit(a) != 0) == is_max ? b : a;
    else r = (a > b) == is_max ? a : b;
    return hout(m, r);
}
H(v_max_f16)
{
    HSETUP;
    HSRC(0, A);
    HSRC(1, B);
    VDST(d);
    LANES d[l] = minmax_h(&hm, hbits(&hm, 0, X32(A, l)), hbits(&hm, 1, X32(B, l)), 1);
}
H(v_min_f16)
{
    HSETUP;
    HSRC(0, A);
    HSRC(1, B);
    VDST(d);
    LANES d[l] = minmax_h(&hm, hbits(&hm, 0, X32(A, l)), hbits(&hm, 1, X32(B, l)), 0);
}
/* D = S0 * 2^S1.i16; the exponent is clamped so that the double stays exact */
H(v_ldexp_f16)
{
    HSETUP;
    HSRC(0, A);
    VSRC(1, B);
    VDST(d);
    LANES
    {
        int e = (int16_t)X32(B, l);
        e = e < -64 ? -64 : e > 64 ? 64 : e;
        d[l] = HOUT(ldexp(HIN(0, X32(A, l)), e));
    }
}
VOP_3H(v_mac_f16, HOUT(hround(&hm, a * b) + c))
VOP_3H(v_mad_f16, HOUT(hround(&hm, a * b) + c))
VOP_3H(v_madmk_f16, HOUT(hround(&hm, a * b) + c))
VOP_3H(v_madak_f16, HOUT(hround(&hm, a * b) + c))
VOP_3H(v_fma_f16, HOUT(fma_odd(a, b, c)))

/* div_fixup (ISA manual 12.7 V_DIV_FIXUP_F16): S0 quotient, S1 denominator, S2 numerator */
static inline double div_fixup_h(double q, double den, double num)
{
    int neg = signbit(den) != signbit(num);
    if (isnan(num)) return num;
    if (isnan(den)) return den;
    if ((den == 0.0 && num == 0.0) || (isinf(den) && isinf(num))) return -NAN;
    if (den == 0.0 || isinf(num)) return neg ? -INFINITY : INFINITY;
    if (isinf(den) || num == 0.0) return neg ? -0.0 : 0.0;
    return neg ? -fabs(q) : fabs(q);
}
VOP_3H(v_div_fixup_f16, HOUT(div_fixup_h(a, b, c)))

/* unary */
static inline double fract_h(double a) { return isinf(a) ? NAN : fmin(a - floor(a), 0x1.ffcp-1); }
VOP_1H(v_rcp_f16, HOUT(1.0 / a))
VOP_1H(v_sqrt_f16, HOUT(sqrt(a)))
VOP_1H(v_rsq_f16, HOUT(1.0 / sqrt(a)))
VOP_1H(v_log_f16, HOUT(log2(a)))
VOP_1H(v_exp_f16, HOUT(exp2(a)))
VOP_1H(v_sin_f16, HOUT(sin(a * 6.283185307179586476925)))
VOP_1H(v_cos_f16, HOUT(cos(a * 6.283185307179586476925)))
VOP_1H(v_floor_f16, HOUT(floor(a)))
VOP_1H(v_ceil_f16, HOUT(ceil(a)))
VOP_1H(v_trunc_f16, HOUT(trunc(a)))
VOP_1H(v_rndne_f16, HOUT(nearbyint(a))) /* f16 handlers run with the host in round-to-nearest */
VOP_1H(v_fract_f16, HOUT(fract_h(a)))
VOP_1H(v_frexp_mant_f16, HOUT((isinf(a) || isnan(a)) ? a : frexp(a, &(int){0})))
static inline uint32_t frexp_exp_h(double a)
{
    int e = 0;
    if (!isinf(a) && !isnan(a)) frexp(a, &e);
    return (uint16_t)(int16_t)e;
}
VOP_1H(v_frexp_exp_i16_f16, frexp_exp_h(a))

/* conversions: integer -> f16 rounds by MODE; f16 -> integer truncates and saturates, NaN -> 0 */
/* f32 <-> f16: the f16 side follows MODE's f16 denormal (bits 7:6) and round
 * (bits 3:2) fields and reads f16 inline constants; the f32 side MODE bits 5:4. */
H(v_cvt_f32_f16)
{
    HSETUP;
    const fmods fm = fmods_of(w, in);
    HSRC(0, A);
    VDST(d);
    LANES d[l] = fout32(&fm, (float)HIN(0, X32(A, l)));
}
H(v_cvt_f16_f32)
{
    HSETUP;
    const fmods fm = fmods_of(w, in);
    VSRC(0, A);
    VDST(d);
    LANES d[l] = HOUT((double)fin32(&fm, 0, X32(A, l)));
}
H(v_cvt_f16_u16) { HSETUP; VSRC(0, A); VDST(d); LANES d[l] = HOUT((double)(uint16_t)X32(A, l)); }
H(v_cvt_f16_i16) { HSETUP; VSRC(0, A); VDST(d); LANES d[l] = HOUT((double)(int16_t)X32(A, l)); }
static inline uint32_t cvt_u16(double a)
{
    if (isnan(a) || a <= 0.0) return 0;
    return a >= 65535.0 ? 65535u : (uint32_t)a;
}
static inline uint32_t cvt_i16(double a)
{
    if (isnan(a)) return 0;
    int v = a >= 32767.0 ? 32767 : a <= -32768.0 ? -32768 : (int)a;
    return (uint16_t)(int16_t)v;
}
VOP_1H(v_cvt_u16_f16, cvt_u16(a))
VOP_1H(v_cvt_i16_f16, cvt_i16(a))

/* ---- f16 compares ------------------------------------------------------------------------ */

#define L_f16                                                                               \
    const hmods hm = hmods_of(w, in);                                                       \
    HSRC(0, A);                                                                             \
    HSRC(1, B)
#define G_f16 double a = HIN(0, X32(A, l)), b = HIN(1, X32(B, l))
FLT_CMPS(f16)

/* v_cmp_class_f16: S1 bit mask over the classes of S0 (ISA manual 12.8:
 * 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal,
 * 8 +normal, 9 +inf). abs/neg apply; denormals are classified as such. */
static void cmp_class_f16(gcn_wave *w, const gcn_insn *in, int x)
{
    EXEC_DECL;
    HSRC(0, A);
    VSRC(1, B);
    uint32_t am = ((in->mods >> GCN_M_ABS_SHIFT) & 1) ? 0x7fffu : 0xffffu;
    uint32_t nx = ((in->mods >> GCN_M_NEG_SHIFT) & 1) ? 0x8000u : 0;
    uint64_t r = 0;
    LANES
    {
        uint32_t h = (X32(A, l) & am) ^ nx, m = X32(B, l), e = (h >> 10) & 0x1f, f = h & 0x3ff, neg = h >> 15 & 1;
        unsigned cls;
        if (e == 31) cls = f ? ((f & 0x200) ? 1 : 0) : (neg ? 2 : 9);
        else if (e == 0) cls = f ? (neg ? 4 : 7) : (neg ? 5 : 6);
        else cls = neg ? 3 : 8;
        r |= (uint64_t)((m >> cls) & 1) << l;
    }
    ws64(w, in->dst[0], r);
    if (x) gcn_set_exec(w, r);
}
H(v_cmp_class_f16) { cmp_class_f16(w, in, 0); }
H(v_cmpx_class_f16) { cmp_class_f16(w, in, 1); }

/* ---- packing / conversions of f32 ------------------------------------------------------ */

/* v_cvt_off_f32_i4: S0[3:0] as a signed 4-bit value / 16 (interpolation offsets) */
H(v_cvt_off_f32_i4)
{
    FSETUP;
    VSRC(0, A);
    VDST(d);
    LANES d[l] = FOUT((float)((int32_t)(X32(A, l) << 28) >> 28) * 0.0625f);
}

/* f32 -> u8 with round to nearest even and saturation (NaN -> 0) */
static inline uint32_t f32_to_u8(float f)
{
    if (!(f > 0.0f)) return 0;
    if (f >= 255.0f) return 255;
    return (uint32_t)nearbyintf(f);
}
/* D = S2 with byte S1[1:0] replaced by u8(S0) */
H(v_cvt_pk_u8_f32)
{
    FSETUP;
    VSRC(0, A);
    VSRC(1, B);
    VSRC(2, C);
    VDST(d);
    LANES
    {
        unsigned sh = 8 * (X32(B, l) & 3);
        d[l] = (X32(C, l) & ~(0xffu << sh)) | f32_to_u8(FIN(0, X32(A, l))) << sh;
    }
}
/* the same accumulating into D itself */
H(v_cvt_pkaccum_u8_f32)
{
    FSETUP;
    VSRC(0, A);
    VSRC(1, B);
    VDST(d);
    LANES
    {
        unsigned sh = 8 * (X32(B, l) & 3);
        d[l] = (d[l] & ~(0xffu << sh)) | f32_to_u8(FIN(0, X32(A, l))) << sh;
    }
}
static inline uint32_t snorm16(float f)
{
    if (isnan(f)) return 0;
    f = f < -1.0f ? -1.0f : f > 1.0f ? 1.0f : f;
    return (uint16_t)(int16_t)nearbyintf(f * 32767.0f);
}
static inline uint32_t unorm16(float f)
{
    if (!(f > 0.0f)) return 0;
    f = f > 1.0f ? 1.0f : f;
    return (uint32_t)nearbyintf(f * 65535.0f);
}
H(v_cvt_pknorm_i16_f32)
{
    FSETUP;
    VSRC(0, A);
    VSRC(1, B);
    VDST(d);
    LANES d[l] = snorm16(FIN(0, X32(A, l))) | snorm16(FIN(1, X32(B, l))) << 16;
}
H(v_cvt_pknorm_u16_f32)
{
    FSETUP;
    VSRC(0, A);
    VSRC(1, B);
    VDST(d);
    LANES d[l] = unorm16(FIN(0, X32(A, l))) | unorm16(FIN(1, X32(B, l))) << 16;
}
static inline uint32_t sat_u16(uint32_t v) { return v > 0xffffu ? 0xffffu : v; }
static inline uint32_t sat_i16(uint32_t v)
{
    int32_t s = (int32_t)v;
    return (uint16_t)(int16_t)(s > 32767 ? 32767 : s < -32768 ? -32768 : s);
}
VOP_2U(v_cvt_pk_u16_u32, sat_u16(a) | sat_u16(b) << 16)
VOP_2U(v_cvt_pk_i16_i32, sat_i16(a) | sat_i16(b) << 16)

/* ---- media: lerp and sums of absolute differences --------------------------------------- */

static inline uint32_t lerp_u8(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t d = 0;
    for (int i = 0; i < 4; i++) {
        uint32_t x = (a >> (8 * i)) & 0xff, y = (b >> (8 * i)) & 0xff, r = (c >> (8 * i)) & 1;
        d |= ((x + y + r) >> 1) << (8 * i);
    }
    return d;
}
VOP_3U(v_lerp_u8, lerp_u8(a, b, c))

static inline uint32_t sad8(uint32_t a, uint32_t b, int masked)
{
    uint32_t s = 0;
    for (int i = 0; i < 4; i++) {
        int x = (int)((a >> (8 * i)) & 0xff), y = (int)((b >> (8 * i)) & 0xff);
        if (masked && y == 0) continue; /* MSAD: reference bytes of 0 are not counted */
        s += (uint32_t)(x > y ? x - y : y - x);
    }
    return s;
}
VOP_3U(v_sad_hi_u8, (sad8(a, b, 0) << 16) + c)
VOP_3U(v_msad_u8, sad8(a, b, 1) + c)

/* QSAD/MQSAD: four SADs of S1 against the byte windows 0..3, 1..4, 2..5, 3..6 of S0[63:0] */
static void qsad(gcn_wave *w, const gcn_insn *in, int masked, int wide)
{
    EXEC_DECL;
    VSRC64(0, A, 0);
    VSRC(1, B);
    uint32_t ck[4];
    const uint32_t *c[4];
    if (in->src[2] >= GCN_OPD_VGPR) {
        const uint32_t *r = vreg(w, in, in->src[2], wide ? 4 : 2);
        for (int i = 0; i < 4; i++) c[i] = r == dummy_lanes ? dummy_lanes : r + i * GCN_WAVE_LANES;
    } else {
        uint64_t v = rs64(w, in, in->src[2], 0);
        ck[0] = (uint32_t)v;
        ck[1] = (uint32_t)(v >> 32);
        ck[2] = ck[3] = 0;
        if (wide && in->src[2] < 125) {
            ck[2] = w->s[in->src[2] + 2];
            ck[3] = w->s[in->src[2] + 3];
        }
        for (int i = 0; i < 4; i++) c[i] = &ck[i];
    }
    unsigned cm = in->src[2] >= GCN_OPD_VGPR ? 63 : 0;
    uint32_t *d = vreg(w, in, in->dst[0], wide ? 4 : 2);
    if (w->status != GCN_WAVE_RUNNING) return;
    LANES
    {
        uint64_t s0 = X64(A, l);
        uint32_t r[4];
        for (int k = 0; k < 4; k++) {
            uint32_t win = (uint32_t)(s0 >> (8 * k));
            if (wide) {
                r[k] = sad8(win, X32(B, l), masked) + c[k][l & cm];
            } else {
                uint32_t acc = (c[k / 2][l & cm] >> (16 * (k & 1))) & 0xffff;
                r[k] = (sad8(win, X32(B, l), masked) + acc) & 0xffff;
            }
        }
        if (wide) {
            for (int k = 0; k < 4; k++) d[k * GCN_WAVE_LANES + l] = r[k];
        } else {
            d[l] = r[0] | r[1] << 16;
            d[GCN_WAVE_LANES + l] = r[2] | r[3] << 16;
        }
    }
}
H(v_qsad_pk_u16_u8) { qsad(w, in, 0, 0); }
H(v_mqsad_pk_u16_u8) { qsad(w, in, 1, 0); }
H(v_mqsad_u32_u8) { qsad(w, in, 1, 1); }

/* ---- cube map (ISA manual 12.7 V_CUBE*; same case split as LLVM's constant folder) ---- */

typedef struct cube { float id, sc, tc, ma; } cube;
static inline cube cube_of(float x, float y, float z)
{
    cube c;
    if (fabsf(z) >= fabsf(x) && fabsf(z) >= fabsf(y)) {
        int n = z < 0.0f;
        c.id = n ? 5.0f : 4.0f;
        c.sc = n ? -x : x;
        c.tc = -y;
        c.ma = 2.0f * z;
    } else if (fabsf(y) >= fabsf(x)) {
        int n = y < 0.0f;
        c.id = n ? 3.0f : 2.0f;
        c.sc = x;
        c.tc = n ? -z : z;
        c.ma = 2.0f * y;
    } else {
        int n = x < 0.0f;
        c.id = n ? 1.0f : 0.0f;
        c.sc = n ? z : -z;
        c.tc = -y;
        c.ma = 2.0f * x;
    }
    return c;
}
VOP_3F(v_cubeid_f32, cube_of(a, b, c).id)
VOP_3F(v_cubesc_f32, cube_of(a, b, c).sc)
VOP_3F(v_cubetc_f32, cube_of(a, b, c).tc)
VOP_3F(v_cubema_f32, cube_of(a, b, c).ma)

/* ---- v_trig_preop_f64 ------------------------------------------------------------------ */

/* the first 1216 fraction bits of 2/pi, most significant first (integer
 * arithmetic, Machin's formula); the hardware holds 1201 of them */
static const uint64_t two_over_pi[19] = {
    0xa2f9836e4e441529ull, 0xfc2757d1f534ddc0ull, 0xdb6295993c439041ull, 0xfe5163abdebbc561ull,
    0xb7246e3a424dd2e0ull, 0x06492eea09d1921cull, 0xfe1deb1cb129a73eull, 0xe88235f52ebb4484ull,
    0xe99c7026b45f7e41ull, 0x3991d639835339f4ull, 0x9c845f8bbdf9283bull, 0x1ff897ffde05980full,
    0xef2f118b5a0a6d1full, 0x6d367ecf27cb09b7ull, 0x4f463f669e5fea2dull, 0x7527bac7ebe5f17bull,
    0x3d0739f78a5292eaull, 0x6bfb5fb11f8d5d08ull, 0x56033046fc7b6babull};
static inline unsigned two_over_pi_bit(unsigned k) /* k = 0: first bit after the point */
{
    return k > 1200 ? 0 : (unsigned)(two_over_pi[k / 64] >> (63 - k % 64)) & 1;
}
/* ISA manual 12.7: shift = S1[4:0] * 53 (+ exp - 1077 for exp > 1077); D = the
 * 53 bits of 2/pi from bit `shift` on, scaled by 2^(-53 - shift) (+128 when
 * exp >= 1968); exp is the biased exponent of S0. */
static inline double trig_preop(uint64_t s0, uint32_t sel)
{
    int ex = (int)((s0 >> 52) & 0x7ff);
    unsigned shift = (sel & 31) * 53 + (ex > 1077 ? (unsigned)(ex - 1077) : 0);
    uint64_t m = 0;
    for (unsigned k = 0; k < 53; k++) m = m << 1 | two_over_pi_bit(shift + k);
    int scale = -53 - (int)shift + (ex >= 1968 ? 128 : 0);
    return ldexp((double)m, scale);
}
H(v_trig_preop_f64)
{
    FSETUP;
    VSRC64(0, A, 1);
    VSRC(1, B);
    VDST64(dl, dh);
    LANES
    {
        uint64_t a = db_of(DIN(0, X64(A, l)));
        uint64_t r = DOUT(trig_preop(a, X32(B, l)));
        dl[l] = (uint32_t)r;
        dh[l] = (uint32_t)(r >> 32);
    }
}

/* v_clrexcp clears the SIMD's floating-point exception state, which the
 * emulator does not keep (host exception flags are never consulted). */
H(v_clrexcp) {}

/* The f16 interpolation ops read attributes from the parameter cache, which
 * only graphics shaders have (as VINTRP in gcn_sem.c). */
static void interp_f16(gcn_wave *w, const gcn_insn *in)
{
    wave_error(w, in, GCN_WAVE_ILLEGAL, "graphics instruction %s not supported (compute emulator: %s)",
               gcn_op_name(in->op), "no interpolated attributes");
}
H(v_interp_p1ll_f16) { interp_f16(w, in); }
H(v_interp_p1lv_f16) { interp_f16(w, in); }
H(v_interp_p2_f16) { interp_f16(w, in); }

/* ---- MODE.FP_ROUND (ISA manual Sec. 3.5.2: bits 1:0 f32, bits 3:2 f64/f16;
 * 0 nearest even, 1 +inf, 2 -inf, 3 toward zero) ----------------------------------
 * The f16 handlers above round by MODE themselves. The f32/f64 handlers of
 * gcn_sem.c compute with host float/double arithmetic, so a non-default mode
 * is applied by switching the host rounding mode (SSE MXCSR, which the
 * vectorised loops honour too) around the handler. Only ops whose result is an
 * IEEE-rounded arithmetic result are switched: ops that must round to nearest
 * whatever the mode (v_rndne, v_cvt_rpi, packing with nearbyint) and the
 * approximations (rcp/rsq/exp/log/sin/cos) are not. Called by the run loop
 * only while MODE[3:0] != 0, so the default path costs nothing. */

/* 1: f32 round mode applies, 2: f64 round mode, 0: none */
static int round_class(unsigned op)
{
    switch (op) {
    case GCN_OP_v_add_f32: case GCN_OP_v_sub_f32: case GCN_OP_v_subrev_f32: case GCN_OP_v_mul_f32:
    case GCN_OP_v_mul_legacy_f32: case GCN_OP_v_mac_f32: case GCN_OP_v_mad_f32: case GCN_OP_v_madak_f32:
    case GCN_OP_v_madmk_f32: case GCN_OP_v_mad_legacy_f32: case GCN_OP_v_fma_f32: case GCN_OP_v_div_fmas_f32:
    case GCN_OP_v_div_scale_f32: case GCN_OP_v_sqrt_f32: case GCN_OP_v_ldexp_f32: case GCN_OP_v_cvt_f32_i32:
    case GCN_OP_v_cvt_f32_u32: case GCN_OP_v_cvt_f32_f64:
        return 1;
    case GCN_OP_v_add_f64: case GCN_OP_v_mul_f64: case GCN_OP_v_fma_f64: case GCN_OP_v_div_fmas_f64:
    case GCN_OP_v_div_scale_f64: case GCN_OP_v_sqrt_f64: case GCN_OP_v_ldexp_f64:
        return 2;
    default:
        return 0;
    }
}

/* Execute in (plain, SDWA or DPP form) under the round mode MODE selects for
 * its type. Interface for the run loop (declaration to be added to
 * gcn_sem_internal.h): call instead of h / gcn_sem_sdwa_dpp while
 * (w->mode & 0xf) != 0. */
void gcn_sem_fp_round_exec(gcn_wave *w, const gcn_insn *in, gcn_exec_fn h);
void gcn_sem_fp_round_exec(gcn_wave *w, const gcn_insn *in, gcn_exec_fn h)
{
    static const int host_rm[4] = {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
    int k = round_class(in->op);
    unsigned rm = k == 1 ? (w->mode & 3) : k == 2 ? ((w->mode >> 2) & 3) : 0;
    int old = rm ? fegetround() : 0;
    if (rm) fesetround(host_rm[rm]);
    if (in->mods & (GCN_M_SDWA | GCN_M_DPP)) gcn_sem_sdwa_dpp(w, in, h);
    else h(w, in);
    if (rm) fesetround(old);
}
