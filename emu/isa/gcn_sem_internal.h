/*
 * gcn_sem_internal.h - what every file of instruction semantics shares
 * (private to emu/isa/gcn_sem*.c): operand access (SGPR/special/inline
 * constant/literal, VGPR with bounds check), lane-mask packing, the float
 * input/output modifiers (abs/neg/clamp/omod, MODE.FP_DENORM flushing), and
 * the error reporters. Handlers are defined with the gcn_sem_ops.h macros;
 * a handler in any gcn_sem*.c file overrides the weak NULL entry of
 * gcn_sem_handlers[] (gcn_sem.c).
 *
 * Source: AMD GCN3 ISA manual (Rev 1.1, 2016) Sec. 3.5 (MODE), 6 (VALU
 * operands, inline constants Table 6.?), 12 (opcodes).
 */
#ifndef GCN_SEM_INTERNAL_H
#define GCN_SEM_INTERNAL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gcn/gcn_isa.h"
#include "gcn/gcn_operand.h"
#include "gcn_sem.h"
#include "gcn_wave.h"

/* Stop the wave with status st (FAULT/ILLEGAL/TRAP) and a one-line message naming
 * kernel, workgroup, wave, pc (and encoding + disassembly for ILLEGAL); keeps the
 * first error. */
void gcn_sem_wave_error(gcn_wave *w, const gcn_insn *in, gcn_wave_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* "NAME [what] is not implemented by the emulator" as an ILLEGAL stop. */
void gcn_sem_unimplemented(gcn_wave *w, const gcn_insn *in, const char *what);
/* Execute in, whose operands carry SDWA or DPP modifiers, with the plain
 * handler h of its opcode: the sources are selected / permuted before and the
 * destination merged after (gcn_sem_dpp.c; ISA manual Sec. 6.? SDWA, DPP). */
void gcn_sem_sdwa_dpp(gcn_wave *w, const gcn_insn *in, gcn_exec_fn h);
/* Execute in (plain, SDWA or DPP) under the host rounding mode that
 * MODE.FP_ROUND selects for its type (gcn_sem_valu.c); the run loop calls it
 * while MODE[3:0] != 0. */
void gcn_sem_fp_round_exec(gcn_wave *w, const gcn_insn *in, gcn_exec_fn h);
#define MODE_FP_ROUND 0xfu
#define wave_error gcn_sem_wave_error
#define unimplemented gcn_sem_unimplemented

/* MODE register bits beyond the float controls (ISA manual Sec. 3.5.2, VI):
 * VGPR indexing enable (s_set_gpr_idx_on/off) and VSKIP (s_setvskip). */
#define MODE_GPR_IDX_EN (1u << 27)
#define MODE_VSKIP (1u << 28)

/* lanes that absorb writes of an instruction that already failed (one per thread, per file) */
static _Thread_local uint32_t dummy_lanes[4 * GCN_WAVE_LANES] __attribute__((unused));

/* ---- operands -------------------------------------------------------------- */

static const uint32_t inl_f32[9] __attribute__((unused)) = {0x3f000000, 0xbf000000, 0x3f800000, 0xbf800000, 0x40000000,
                                    0xc0000000, 0x40800000, 0xc0800000, 0x3e22f983};
static const uint64_t inl_f64[9] __attribute__((unused)) = {0x3fe0000000000000, 0xbfe0000000000000, 0x3ff0000000000000,
                                    0xbff0000000000000, 0x4000000000000000, 0xc000000000000000,
                                    0x4010000000000000, 0xc010000000000000, 0x3fc45f306dc9c882};

static inline uint32_t rs32(const gcn_wave *w, const gcn_insn *in, unsigned c)
{
    if (c < 128) return w->s[c];
    if (c == GCN_OPD_LIT) return in->literal;
    if (c <= 192) return c - 128;
    if (c <= 208) return (uint32_t)(192 - (int)c);
    if (c >= 240 && c <= 248) return inl_f32[c - 240];
    if (c == GCN_OPD_VCCZ) return gcn_vcc(w) == 0;
    if (c == GCN_OPD_EXECZ) return gcn_exec_mask(w) == 0;
    if (c == GCN_OPD_SCC) return w->scc;
    if (c >= GCN_OPD_VGPR && c < GCN_OPD_VGPR + w->n_vgpr) return w->v[c - GCN_OPD_VGPR][0];
    return 0;
}

static inline uint64_t rs64(const gcn_wave *w, const gcn_insn *in, unsigned c, int isf64)
{
    if (c < 127) return (uint64_t)w->s[c] | (uint64_t)w->s[c + 1] << 32;
    if (c == GCN_OPD_LIT) return isf64 ? (uint64_t)in->literal << 32 : in->literal;
    if (c >= 128 && c <= 208) return (uint64_t)(int64_t)(int32_t)rs32(w, in, c);
    if (c >= 240 && c <= 248) return isf64 ? inl_f64[c - 240] : inl_f64[c - 240];
    return rs32(w, in, c);
}

static inline void ws32(gcn_wave *w, unsigned c, uint32_t v)
{
    if (c < 128) w->s[c] = v;
}

static inline void ws64(gcn_wave *w, unsigned c, uint64_t v)
{
    if (c < 127) {
        w->s[c] = (uint32_t)v;
        w->s[c + 1] = (uint32_t)(v >> 32);
    }
}

static inline uint32_t *vreg_bad(gcn_wave *w, const gcn_insn *in, unsigned c)
{
    wave_error(w, in, GCN_WAVE_ILLEGAL, "operand code %u is not a VGPR below the %u allocated", c, w->n_vgpr);
    return dummy_lanes;
}

static inline __attribute__((always_inline)) uint32_t *vreg(gcn_wave *w, const gcn_insn *in, unsigned c, unsigned n)
{
    unsigned r = c - GCN_OPD_VGPR;
    if (c < GCN_OPD_VGPR || r + n > w->n_vgpr) return vreg_bad(w, in, c);
    return w->v[r];
}

static inline __attribute__((always_inline)) const uint32_t *vsrc_lanes(gcn_wave *w, const gcn_insn *in, unsigned c,
                                                                        uint32_t *k)
{
    if (c >= GCN_OPD_VGPR) return vreg(w, in, c, 1);
    uint32_t v = rs32(w, in, c);
    for (unsigned l = 0; l < GCN_WAVE_LANES; l++) k[l] = v;
    return k;
}

static inline void vsrc_bind64(gcn_wave *w, const gcn_insn *in, unsigned c, int isf, uint32_t *k,
                               const uint32_t **lo, const uint32_t **hi, unsigned *m)
{
    if (c >= GCN_OPD_VGPR) {
        *lo = vreg(w, in, c, 2);
        *hi = *lo == dummy_lanes ? dummy_lanes : *lo + GCN_WAVE_LANES;
        *m = 63;
    } else {
        uint64_t v = rs64(w, in, c, isf);
        k[0] = (uint32_t)v;
        k[1] = (uint32_t)(v >> 32);
        *lo = &k[0];
        *hi = &k[1];
        *m = 0;
    }
}

/* ---- lane masks <-> per-lane flag bytes ------------------------------------------
 * Lane loops that produce or consume a lane mask (carry out/in, VOPC, v_cndmask)
 * go through a byte per lane so that the loop itself vectorises; 8 lanes are
 * packed / unpacked with one multiply (bit i of the byte <-> byte i). */

static inline uint64_t pack_flags(const uint8_t *f)
{
    uint64_t m = 0;
    for (unsigned g = 0; g < GCN_WAVE_LANES / 8; g++) {
        uint64_t x;
        memcpy(&x, f + 8 * g, 8); /* each byte 0 or 1 */
        m |= ((x * 0x0102040810204080ull) >> 56) << (8 * g);
    }
    return m;
}

static inline void unpack_mask(uint64_t m, uint8_t *f)
{
    for (unsigned g = 0; g < GCN_WAVE_LANES / 8; g++) {
        uint64_t x = ((m >> (8 * g)) & 0xffu) * 0x0101010101010101ull;
        x &= 0x8040201008040201ull;                                 /* byte i keeps bit i */
        x = ((x + 0x7f7f7f7f7f7f7f7full) >> 7) & 0x0101010101010101ull; /* nonzero -> 1 */
        memcpy(f + 8 * g, &x, 8);
    }
}

/* ---- float helpers ------------------------------------------------------------ */

static inline float f_of(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static inline uint32_t b_of(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static inline double d_of(uint64_t b) { double f; memcpy(&f, &b, 8); return f; }
static inline uint64_t db_of(double f) { uint64_t b; memcpy(&b, &f, 8); return b; }

typedef struct fmods {
    uint32_t and32[3], xor32[3];
    uint64_t and64[3], xor64[3];
    int ftz_in, ftz_out, dftz_in, dftz_out, clamp, omod;
} fmods;

static inline fmods fmods_of(const gcn_wave *w, const gcn_insn *in)
{
    fmods m;
    for (int i = 0; i < 3; i++) {
        int a = (in->mods >> (GCN_M_ABS_SHIFT + i)) & 1, n = (in->mods >> (GCN_M_NEG_SHIFT + i)) & 1;
        m.and32[i] = a ? 0x7fffffffu : 0xffffffffu;
        m.xor32[i] = n ? 0x80000000u : 0;
        m.and64[i] = a ? 0x7fffffffffffffffull : ~0ull;
        m.xor64[i] = n ? 0x8000000000000000ull : 0;
    }
    /* MODE.FP_DENORM (bits 7:4): bit 4 allow f32 input denormals, bit 5 allow
     * f32 output denormals; bits 6/7 the same for f64 (ISA manual Sec. 3.5.2) */
    m.ftz_in = !((w->mode >> 4) & 1);
    m.ftz_out = !((w->mode >> 5) & 1);
    m.dftz_in = !((w->mode >> 6) & 1);
    m.dftz_out = !((w->mode >> 7) & 1);
    m.clamp = !!(in->mods & GCN_M_CLAMP);
    m.omod = (in->mods >> GCN_M_OMOD_SHIFT) & 3;
    return m;
}

static inline float fin32(const fmods *m, int i, uint32_t b)
{
    b = (b & m->and32[i]) ^ m->xor32[i];
    if (m->ftz_in && (b & 0x7f800000u) == 0) b &= 0x80000000u;
    return f_of(b);
}

static inline uint32_t fout32(const fmods *m, float f)
{
    if (m->omod) f = m->omod == 1 ? f * 2.0f : m->omod == 2 ? f * 4.0f : f * 0.5f;
    if (m->clamp) f = f < 0.0f ? 0.0f : f > 1.0f ? 1.0f : isnan(f) ? 0.0f : f;
    uint32_t b = b_of(f);
    if (m->ftz_out && (b & 0x7f800000u) == 0) b &= 0x80000000u;
    return b;
}

static inline float fin32b(const fmods *m, int i, uint32_t b)
{
    b = (b & m->and32[i]) ^ m->xor32[i];
    b = (m->ftz_in && (b & 0x7f800000u) == 0) ? b & 0x80000000u : b;
    return f_of(b);
}

static inline uint32_t fout32b(const fmods *m, float f)
{
    uint32_t b = b_of(f);
    return (m->ftz_out && (b & 0x7f800000u) == 0) ? b & 0x80000000u : b;
}

static inline double fin64(const fmods *m, int i, uint64_t b)
{
    b = (b & m->and64[i]) ^ m->xor64[i];
    if (m->dftz_in && (b & 0x7ff0000000000000ull) == 0) b &= 0x8000000000000000ull;
    return d_of(b);
}

static inline uint64_t fout64(const fmods *m, double f)
{
    if (m->omod) f = m->omod == 1 ? f * 2.0 : m->omod == 2 ? f * 4.0 : f * 0.5;
    if (m->clamp) f = f < 0.0 ? 0.0 : f > 1.0 ? 1.0 : isnan(f) ? 0.0 : f;
    uint64_t b = db_of(f);
    if (m->dftz_out && (b & 0x7ff0000000000000ull) == 0) b &= 0x8000000000000000ull;
    return b;
}

/* IEEE-mode min/max: a NaN operand yields the other operand (ISA manual 12.7) */
static inline float fmin_ieee(float a, float b) { return fminf(a, b); }
static inline float fmax_ieee(float a, float b) { return fmaxf(a, b); }

static inline int32_t cvt_i32(double f)
{
    if (isnan(f)) return 0;
    if (f >= 2147483647.0) return INT32_MAX;
    if (f <= -2147483648.0) return INT32_MIN;
    return (int32_t)f;
}
static inline uint32_t cvt_u32(double f)
{
    if (isnan(f) || f <= 0) return 0;
    if (f >= 4294967295.0) return UINT32_MAX;
    return (uint32_t)f;
}
static inline float fract32(float a) { return isinf(a) ? NAN : fminf(a - floorf(a), 0x1.fffffep-1f); }
static inline double fract64(double a) { return isinf(a) ? NAN : fmin(a - floor(a), 0x1.fffffffffffffp-1); }

static inline int fexp32(uint32_t b) { return (int)((b >> 23) & 0xff); }

/* half <-> single (round to nearest even) */
static inline uint16_t f32_to_f16(float f)
{
    uint32_t b = b_of(f), sign = (b >> 16) & 0x8000;
    int e = (int)((b >> 23) & 0xff) - 127 + 15;
    uint32_t m = b & 0x7fffff;
    if (((b >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00 | (m ? 0x200 : 0));
    if (e >= 31) return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        if (e < -10) return (uint16_t)sign;
        m |= 0x800000;
        unsigned shift = (unsigned)(14 - e);
        uint32_t h = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = (uint32_t)e << 10 | m >> 13, rem = m & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
    return (uint16_t)(sign | h);
}
static inline float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0) {
        float f = ldexpf((float)m, -24);
        return sign ? -f : f;
    }
    if (e == 31) return f_of(sign | 0x7f800000 | (m << 13));
    return f_of(sign | (e + 112) << 23 | m << 13);
}

#endif
