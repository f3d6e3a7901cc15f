/*
 * gcn_sem_ops.h - the macro vocabulary of the instruction semantics
 * (STYLE.md #2), private to gcn_sem.c. Every handler is
 *     void gcn_h_NAME(gcn_wave *w, const gcn_insn *in)
 * and reads its operands through the helpers below; lane loops run over the
 * 64 lanes under EXEC.
 *
 *   H(name)            define the handler of op `name` (gcn3.def spelling)
 *   EX                 the EXEC mask at entry (uint64_t ex, declared by LANES users)
 *   LANES              for each active lane l
 *   S32(i) / S64(i)    scalar source i (SGPR, special, inline constant, literal)
 *   VSRC(i, x)         bind vector source i as x; read lane l with X32(x, l)
 *   VSRC64(i, x)       same for a 64-bit source; X64(x, l)
 *   VDST(p)            uint32_t *p = destination VGPR (dst[0])
 *   VDST64(lo, hi)     destination VGPR pair
 *   SDST32(v) / SDST64(v) write the scalar destination dst[0]
 */
#ifndef GCN_SEM_OPS_H
#define GCN_SEM_OPS_H

#define H(name) void gcn_h_##name(gcn_wave *w, const gcn_insn *in)

/* _all is loop-invariant: the compiler unswitches the loop into a full-EXEC
 * version without the per-lane test, which it can vectorise (gcn_sem.c is
 * compiled with loop unswitching and the vectoriser on, see its top). */
#define LANES for (unsigned l = 0, _all = (ex == ~0ull); l < GCN_WAVE_LANES; l++) if (_all || ((ex >> l) & 1))
#define EXEC_DECL uint64_t ex = gcn_exec_mask(w)

#define S32(i) rs32(w, in, in->src[i])
#define S64(i) rs64(w, in, in->src[i], 0)
#define S64F(i) rs64(w, in, in->src[i], 1)
#define SDST32(v) ws32(w, in->dst[0], (v))
#define SDST64(v) ws64(w, in->dst[0], (v))

/* A vector source: the VGPR's 64 lanes, or a scalar broadcast into 64 lanes
 * (so that lane loops index every source the same way and vectorise). */
#define VSRC(i, x)                                                                          \
    uint32_t x##_k[GCN_WAVE_LANES];                                                         \
    const uint32_t *x##_p = vsrc_lanes(w, in, in->src[i], x##_k)
#define X32(x, l) (x##_p[(l)])

#define VSRC64(i, x, isf)                                                                   \
    uint32_t x##_k[2];                                                                      \
    const uint32_t *x##_lo, *x##_hi;                                                        \
    unsigned x##_m;                                                                         \
    vsrc_bind64(w, in, in->src[i], isf, x##_k, &x##_lo, &x##_hi, &x##_m)
#define X64(x, l) ((uint64_t)x##_lo[(l) & x##_m] | (uint64_t)x##_hi[(l) & x##_m] << 32)

#define VDST(p) uint32_t *p = vreg(w, in, in->dst[0], 1)
#define VDST64(lo, hi)                                                                      \
    uint32_t *lo = vreg(w, in, in->dst[0], 2);                                              \
    uint32_t *hi = lo == dummy_lanes ? dummy_lanes : lo + GCN_WAVE_LANES

/* ---- stamp-out helpers for whole families ---- */

/* d = EXPR(a, b) on u32 lanes; VOP2 / VOP3 / VOP1 alike */
#define VOP_2U(name, EXPR)                                                                  \
    H(name)                                                                                 \
    {                                                                                       \
        EXEC_DECL;                                                                          \
        VSRC(0, A);                                                                         \
        VSRC(1, B);                                                                         \
        VDST(d);                                                                            \
        LANES                                                                               \
        {                                                                                   \
            uint32_t a = X32(A, l), b = X32(B, l);                                          \
            d[l] = (EXPR);                                                                  \
        }                                                                                   \
    }
#define VOP_1U(name, EXPR)                                                                  \
    H(name)                                                                                 \
    {                                                                                       \
        EXEC_DECL;                                                                          \
        VSRC(0, A);                                                                         \
        VDST(d);                                                                            \
        LANES                                                                               \
        {                                                                                   \
            uint32_t a = X32(A, l);                                                         \
            d[l] = (EXPR);                                                                  \
        }                                                                                   \
    }
#define VOP_3U(name, EXPR)                                                                  \
    H(name)                                                                                 \
    {                                                                                       \
        EXEC_DECL;                                                                          \
        VSRC(0, A);                                                                         \
        VSRC(1, B);                                                                         \
        VSRC(2, C);                                                                         \
        VDST(d);                                                                            \
        LANES                                                                               \
        {                                                                                   \
            uint32_t a = X32(A, l), b = X32(B, l), c = X32(C, l);                           \
            d[l] = (EXPR);                                                                  \
        }                                                                                   \
    }

/* f32: inputs with abs/neg and input-denorm flushing, output with omod,
 * clamp and output-denorm flushing (MODE.FP_DENORM[1:0], ISA manual Sec. 3.5.2) */
#define FSETUP                                                                              \
    EXEC_DECL;                                                                              \
    const fmods fm = fmods_of(w, in)
#define FIN(i, bits) fin32(&fm, i, bits)
#define FOUT(f) fout32(&fm, f)
/* branch-free forms for the full-EXEC loops without omod / clamp (vectorisable) */
#define FINB(i, bits) fin32b(&fm, i, bits)
#define FOUTB(f) fout32b(&fm, f)

#define VOP_2F(name, EXPR)                                                                  \
    H(name)                                                                                 \
    {                                                                                       \
        FSETUP;                                                                             \
        VSRC(0, A);                                                                         \
        VSRC(1, B);                                                                         \
        VDST(d);                                                                            \
        if (ex == ~0ull && !fm.omod && !fm.clamp) {                                     \
            for (unsigned l = 0; l < GCN_WAVE_LANES; l++) {                             \
                float a = FINB(0, X32(A, l)), b = FINB(1, X32(B, l));                   \
                (void)b;                                                                \
                d[l] = FOUTB(EXPR);                                                     \
            }                                                                           \
            return;                                                                     \
        }                                                                               \
        LANES                                                                               \
        {                                                                                   \
            float a = FIN(0, X32(A, l)), b = FIN(1, X32(B, l));                             \
            (void)b;                                                                        \
            d[l] = FOUT(EXPR);                                                              \
        }                                                                                   \
    }
#define VOP_1F(name, EXPR)                                                                  \
    H(name)                                                                                 \
    {                                                                                       \
        FSETUP;                                                                             \
        VSRC(0, A);                                                                         \
        VDST(d);                                                                            \
        if (ex == ~0ull && !fm.omod && !fm.clamp) {                                     \
            for (unsigned l = 0; l < GCN_WAVE_LANES; l++) {                             \
                float a = FINB(0, X32(A, l));                                           \
                (void)a;                                                                \
                d[l] = FOUTB(EXPR);                                                     \
            }                                                                           \
            return;                                                                     \
        }                                                                               \
        LANES                                                                               \
        {                                                                                   \
            float a = FIN(0, X32(A, l));                                                    \
            d[l] = FOUT(EXPR);                                                              \
        }                                                                                   \
    }
#define VOP_3F(name, EXPR)                                                                  \
    H(name)                                                                                 \
    {                                                                                       \
        FSETUP;                                                                             \
        VSRC(0, A);                                                                         \
        VSRC(1, B);                                                                         \
        VSRC(2, C);                                                                         \
        VDST(d);                                                                            \
        if (ex == ~0ull && !fm.omod && !fm.clamp) {                                     \
            for (unsigned l = 0; l < GCN_WAVE_LANES; l++) {                             \
                float a = FINB(0, X32(A, l)), b = FINB(1, X32(B, l)), c = FINB(2, X32(C, l)); \
                (void)b;                                                                \
                d[l] = FOUTB(EXPR);                                                     \
            }                                                                           \
            return;                                                                     \
        }                                                                               \
        LANES                                                                               \
        {                                                                                   \
            float a = FIN(0, X32(A, l)), b = FIN(1, X32(B, l)), c = FIN(2, X32(C, l));      \
            d[l] = FOUT(EXPR);                                                              \
        }                                                                                   \
    }
/* f64 (FP64 denormals per MODE.FP_DENORM[3:2]) */
#define DIN(i, bits) fin64(&fm, i, bits)
#define DOUT(f) fout64(&fm, f)
#define VOP_2D(name, EXPR)                                                                  \
    H(name)                                                                                 \
    {                                                                                       \
        FSETUP;                                                                             \
        VSRC64(0, A, 1);                                                                    \
        VSRC64(1, B, 1);                                                                    \
        VDST64(dl, dh);                                                                     \
        LANES                                                                               \
        {                                                                                   \
            double a = DIN(0, X64(A, l)), b = DIN(1, X64(B, l));                            \
            uint64_t r = DOUT(EXPR);                                                        \
            dl[l] = (uint32_t)r;                                                            \
            dh[l] = (uint32_t)(r >> 32);                                                    \
        }                                                                                   \
    }
#define VOP_1D(name, EXPR)                                                                  \
    H(name)                                                                                 \
    {                                                                                       \
        FSETUP;                                                                             \
        VSRC64(0, A, 1);                                                                    \
        VDST64(dl, dh);                                                                     \
        LANES                                                                               \
        {                                                                                   \
            double a = DIN(0, X64(A, l));                                                   \
            uint64_t r = DOUT(EXPR);                                                        \
            dl[l] = (uint32_t)r;                                                            \
            dh[l] = (uint32_t)(r >> 32);                                                    \
        }                                                                                   \
    }

/* VOPC: v_cmp_* writes a lane mask (inactive lanes 0) to dst; v_cmpx_* also to EXEC */
#define CMP_LOOP(LOAD, GET, COND, X)                                                        \
    {                                                                                       \
        FSETUP;                                                                             \
        (void)fm;                                                                           \
        LOAD;                                                                               \
        uint64_t r = 0;                                                                     \
        if (ex == ~0ull) {                                                                  \
            uint8_t f[GCN_WAVE_LANES];                                                      \
            for (unsigned l = 0; l < GCN_WAVE_LANES; l++) {                                 \
                GET;                                                                        \
                (void)a;                                                                    \
                (void)b;                                                                    \
                f[l] = (COND) ? 1 : 0;                                                      \
            }                                                                               \
            r = pack_flags(f);                                                              \
        } else LANES                                                                        \
        {                                                                                   \
            GET;                                                                            \
            (void)a;                                                                        \
            (void)b;                                                                        \
            r |= (uint64_t)((COND) ? 1 : 0) << l;                                           \
        }                                                                                   \
        ws64(w, in->dst[0], r);                                                             \
        if (X) gcn_set_exec(w, r);                                                          \
    }
#define LD32 VSRC(0, A); VSRC(1, B)
#define LD64 VSRC64(0, A, 0); VSRC64(1, B, 0)
#define LD64F VSRC64(0, A, 1); VSRC64(1, B, 1)
#define G_i16 int16_t a = (int16_t)X32(A, l), b = (int16_t)X32(B, l)
#define G_u16 uint16_t a = (uint16_t)X32(A, l), b = (uint16_t)X32(B, l)
#define G_i32 int32_t a = (int32_t)X32(A, l), b = (int32_t)X32(B, l)
#define G_u32 uint32_t a = X32(A, l), b = X32(B, l)
#define G_i64 int64_t a = (int64_t)X64(A, l), b = (int64_t)X64(B, l)
#define G_u64 uint64_t a = X64(A, l), b = X64(B, l)
#define G_f32 float a = FIN(0, X32(A, l)), b = FIN(1, X32(B, l))
#define G_f64 double a = DIN(0, X64(A, l)), b = DIN(1, X64(B, l))
#define L_i16 LD32
#define L_u16 LD32
#define L_i32 LD32
#define L_u32 LD32
#define L_i64 LD64
#define L_u64 LD64
#define L_f32 LD32
#define L_f64 LD64F

#define DEFCMP(cond, T, COND)                                                               \
    H(v_cmp_##cond##_##T) CMP_LOOP(L_##T, G_##T, COND, 0)                                   \
    H(v_cmpx_##cond##_##T) CMP_LOOP(L_##T, G_##T, COND, 1)

#define INT_CMPS(T)                                                                         \
    DEFCMP(f, T, 0)                                                                         \
    DEFCMP(lt, T, a < b)                                                                    \
    DEFCMP(eq, T, a == b)                                                                   \
    DEFCMP(le, T, a <= b)                                                                   \
    DEFCMP(gt, T, a > b)                                                                    \
    DEFCMP(ne, T, a != b)                                                                   \
    DEFCMP(ge, T, a >= b)                                                                   \
    DEFCMP(t, T, 1)
#define FLT_CMPS(T)                                                                         \
    DEFCMP(f, T, 0)                                                                         \
    DEFCMP(lt, T, a < b)                                                                    \
    DEFCMP(eq, T, a == b)                                                                   \
    DEFCMP(le, T, a <= b)                                                                   \
    DEFCMP(gt, T, a > b)                                                                    \
    DEFCMP(lg, T, a < b || a > b)                                                           \
    DEFCMP(ge, T, a >= b)                                                                   \
    DEFCMP(o, T, !isnan(a) && !isnan(b))                                                    \
    DEFCMP(u, T, isnan(a) || isnan(b))                                                      \
    DEFCMP(nge, T, !(a >= b))                                                               \
    DEFCMP(nlg, T, !(a < b || a > b))                                                       \
    DEFCMP(ngt, T, !(a > b))                                                                \
    DEFCMP(nle, T, !(a <= b))                                                               \
    DEFCMP(neq, T, !(a == b))                                                               \
    DEFCMP(nlt, T, !(a < b))                                                                \
    DEFCMP(tru, T, 1)

#endif
