/*
 * gcn_sem.c - GCN3 instruction semantics and the wavefront run loop.
 *
 * One short body per instruction (STYLE.md #2), written with the macro
 * vocabulary of gcn_sem_ops.h; execution is per wavefront with lane loops
 * under EXEC (STYLE.md #3). Handlers are found through gcn_sem_handlers[],
 * expanded from gcn3.def: an op without a body here has a NULL entry and
 * executing it stops the wave with GCN_WAVE_ILLEGAL naming the instruction.
 *
 * Recording: when w->rec.ops is set the run loop reports EXEC changes and
 * the branch / memory handlers report outcomes and per-lane addresses and data
 * through the recorder interface (gcn_wave.h; emu/exec plugs in the trace
 * writer). With w->rec.ops == NULL nothing is gathered.
 *
 * Sources: AMD "Graphics Core Next Architecture, Generation 3" ISA manual
 * (Rev 1.1, 2016): Ch. 4 (program flow), 5 (SALU/SMEM), 6 (VALU), 8 (MUBUF
 * addressing incl. swizzle, Sec. 8.1.4), 9 (DS), 10 (FLAT), 12 (opcode
 * descriptions).
 *
 * Invariants: a handler either completes the instruction or sets w->status
 * to FAULT/ILLEGAL/TRAP with w->err; it never reads VGPRs at or beyond
 * w->n_vgpr (vreg() checks) and never touches memory except through
 * gcn_mem_global/gcn_mem_flat (exec) or w->lds with a bounds check.
 */
/* The lane loops (LANES, gcn_sem_ops.h) rely on loop unswitching (full-EXEC
 * version) and the vectoriser with runtime alias checks: -O3 for this file. */
#pragma GCC optimize("O3")

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "gcn_sem_internal.h"

#include "gcn_sem_ops.h"

/* Every handler is declared weak so that gcn_sem_handlers[] can name all ops
 * of the table; the ones without a body stay NULL. */
#define GCN_OP(nm, fmt, ...)                                 \
    void gcn_h_##nm(gcn_wave *w, const gcn_insn *in) __attribute__((weak));
#include "gcn/gcn3.def"
#undef GCN_OP

/* ---- errors ---------------------------------------------------------------- */


static void raw_words(const gcn_wave *w, const gcn_insn *in, char *buf, size_t n)
{
    if (!w->image_base || (in->flags & GCN_IF_INVALID && in->op == GCN_OP_INVALID)) {
        snprintf(buf, n, "0x%08x", in->literal);
        if (!(in->flags & GCN_IF_INVALID && in->op == GCN_OP_INVALID)) snprintf(buf, n, "?");
        return;
    }
    const uint32_t *p = (const uint32_t *)(uintptr_t)(w->image_base + in->pc);
    size_t k = 0;
    for (unsigned i = 0; i < in->size / 4u && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s0x%08x", i ? " " : "", p[i]);
}

/* messages are cut to w->err on purpose: one line, bounded */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-truncation"
void gcn_sem_wave_error(gcn_wave *w, const gcn_insn *in, gcn_wave_status st, const char *fmt, ...)
{
    if (w->status != GCN_WAVE_RUNNING) return; /* keep the first error */
    char why[200], enc[64], dis[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    w->status = st;
    gcn_disasm(in, dis, sizeof dis);
    if (st == GCN_WAVE_ILLEGAL) {
        raw_words(w, in, enc, sizeof enc);
        snprintf(w->err, sizeof w->err,
                 "kernel %s: wg (%u,%u,%u) wave %u: illegal instruction at pc 0x%llx (encoding %s, %s): %s",
                 w->kernel_name ? w->kernel_name : "?", w->wg_id[0], w->wg_id[1], w->wg_id[2], w->wave_in_wg,
                 (unsigned long long)in->pc, enc, dis, why);
    } else {
        /* FAULT: the run loop appends the disassembly (exec's messages lack it too) */
        snprintf(w->err, sizeof w->err, "kernel %s: wg (%u,%u,%u) wave %u pc 0x%llx%s%s%s: %s",
                 w->kernel_name ? w->kernel_name : "?", w->wg_id[0], w->wg_id[1], w->wg_id[2], w->wave_in_wg,
                 (unsigned long long)in->pc, st == GCN_WAVE_FAULT ? "" : " (", st == GCN_WAVE_FAULT ? "" : dis,
                 st == GCN_WAVE_FAULT ? "" : ")", why);
    }
}

/* Name the faulting instruction in a memory-fault message (exec's
 * gcn_mem_global/gcn_mem_flat and lds_ptr name kernel, wg, wave, lane, pc and
 * address but not the instruction). */
static void __attribute__((noinline, cold)) fault_add_disasm(gcn_wave *w, const gcn_insn *in)
{
    char dis[96];
    gcn_disasm(in, dis, sizeof dis);
    size_t k = strnlen(w->err, sizeof w->err);
    if (k + 8 < sizeof w->err) snprintf(w->err + k, sizeof w->err - k, " (in `%s`)", dis);
}
#pragma GCC diagnostic pop

void gcn_sem_unimplemented(gcn_wave *w, const gcn_insn *in, const char *what)
{
    wave_error(w, in, GCN_WAVE_ILLEGAL, "%s%s%s is not implemented by the emulator", gcn_op_name(in->op),
               *what ? " " : "", what);
}

/* ---- SALU ------------------------------------------------------------------ */

#define SOP2_32(name, EXPR, SCC)                                                            \
    H(name)                                                                                 \
    {                                                                                       \
        uint32_t a = S32(0), b = S32(1);                                                    \
        uint32_t d = (EXPR);                                                                \
        SCC;                                                                                \
        SDST32(d);                                                                          \
    }
#define SOP2_64(name, EXPR, SCC)                                                            \
    H(name)                                                                                 \
    {                                                                                       \
        uint64_t a = S64(0), b = S64(1);                                                    \
        uint64_t d = (EXPR);                                                                \
        SCC;                                                                                \
        SDST64(d);                                                                          \
    }
#define SCC_NZ w->scc = d != 0
#define NOSCC (void)0

H(s_add_u32) { uint32_t a = S32(0), b = S32(1), d = a + b; w->scc = d < a; SDST32(d); }
H(s_sub_u32) { uint32_t a = S32(0), b = S32(1), d = a - b; w->scc = b > a; SDST32(d); }
H(s_add_i32)
{
    uint32_t a = S32(0), b = S32(1), d = a + b;
    w->scc = ((~(a ^ b) & (a ^ d)) >> 31) & 1;
    SDST32(d);
}
H(s_sub_i32)
{
    uint32_t a = S32(0), b = S32(1), d = a - b;
    w->scc = (((a ^ b) & (a ^ d)) >> 31) & 1;
    SDST32(d);
}
H(s_addc_u32)
{
    uint64_t r = (uint64_t)S32(0) + S32(1) + w->scc;
    w->scc = (uint32_t)(r >> 32) & 1;
    SDST32((uint32_t)r);
}
H(s_subb_u32)
{
    uint32_t a = S32(0), b = S32(1), c = w->scc;
    w->scc = (uint64_t)b + c > a;
    SDST32(a - b - c);
}
SOP2_32(s_min_i32, (int32_t)a < (int32_t)b ? a : b, w->scc = (int32_t)a < (int32_t)b)
SOP2_32(s_min_u32, a < b ? a : b, w->scc = a < b)
SOP2_32(s_max_i32, (int32_t)a > (int32_t)b ? a : b, w->scc = (int32_t)a > (int32_t)b)
SOP2_32(s_max_u32, a > b ? a : b, w->scc = a > b)
SOP2_32(s_cselect_b32, w->scc ? a : b, NOSCC)
SOP2_64(s_cselect_b64, w->scc ? a : b, NOSCC)
SOP2_32(s_and_b32, a & b, SCC_NZ)
SOP2_64(s_and_b64, a & b, SCC_NZ)
SOP2_32(s_or_b32, a | b, SCC_NZ)
SOP2_64(s_or_b64, a | b, SCC_NZ)
SOP2_32(s_xor_b32, a ^ b, SCC_NZ)
SOP2_64(s_xor_b64, a ^ b, SCC_NZ)
SOP2_32(s_andn2_b32, a & ~b, SCC_NZ)
SOP2_64(s_andn2_b64, a & ~b, SCC_NZ)
SOP2_32(s_orn2_b32, a | ~b, SCC_NZ)
SOP2_64(s_orn2_b64, a | ~b, SCC_NZ)
SOP2_32(s_nand_b32, ~(a & b), SCC_NZ)
SOP2_64(s_nand_b64, ~(a & b), SCC_NZ)
SOP2_32(s_nor_b32, ~(a | b), SCC_NZ)
SOP2_64(s_nor_b64, ~(a | b), SCC_NZ)
SOP2_32(s_xnor_b32, ~(a ^ b), SCC_NZ)
SOP2_64(s_xnor_b64, ~(a ^ b), SCC_NZ)
SOP2_32(s_lshl_b32, a << (b & 31), SCC_NZ)
SOP2_32(s_lshr_b32, a >> (b & 31), SCC_NZ)
SOP2_32(s_ashr_i32, (uint32_t)((int32_t)a >> (b & 31)), SCC_NZ)
H(s_lshl_b64) { uint64_t d = S64(0) << (S32(1) & 63); w->scc = d != 0; SDST64(d); }
H(s_lshr_b64) { uint64_t d = S64(0) >> (S32(1) & 63); w->scc = d != 0; SDST64(d); }
H(s_ashr_i64) { uint64_t d = (uint64_t)((int64_t)S64(0) >> (S32(1) & 63)); w->scc = d != 0; SDST64(d); }
SOP2_32(s_bfm_b32, (uint32_t)(((1ull << (a & 31)) - 1) << (b & 31)), NOSCC)
H(s_bfm_b64)
{
    uint32_t a = S32(0), b = S32(1);
    SDST64(((a & 63) == 0 ? 0 : ((~0ull) >> (64 - (a & 63)))) << (b & 63));
}
SOP2_32(s_mul_i32, (uint32_t)((int64_t)(int32_t)a * (int32_t)b), NOSCC)
static inline uint32_t bfe_u32(uint32_t v, uint32_t off, uint32_t wd)
{
    off &= 31;
    wd &= 31;
    return wd == 0 ? 0 : (v >> off) & (uint32_t)((1ull << wd) - 1);
}
static inline uint32_t bfe_i32(uint32_t v, uint32_t off, uint32_t wd)
{
    off &= 31;
    wd &= 31;
    if (wd == 0) return 0;
    uint32_t x = (v >> off) & (uint32_t)((1ull << wd) - 1);
    return (uint32_t)((int32_t)(x << (32 - wd)) >> (32 - wd));
}
SOP2_32(s_bfe_u32, bfe_u32(a, b, (b >> 16) & 0x7f), SCC_NZ)
SOP2_32(s_bfe_i32, bfe_i32(a, b, (b >> 16) & 0x7f), SCC_NZ)
H(s_bfe_u64)
{
    uint64_t a = S64(0);
    uint32_t b = S32(1), off = b & 63, wd = (b >> 16) & 0x7f;
    uint64_t d = wd == 0 ? 0 : wd >= 64 ? a >> off : (a >> off) & ((1ull << wd) - 1);
    w->scc = d != 0;
    SDST64(d);
}
H(s_bfe_i64)
{
    uint64_t a = S64(0);
    uint32_t b = S32(1), off = b & 63, wd = (b >> 16) & 0x7f;
    uint64_t d = 0;
    if (wd) {
        if (wd > 64) wd = 64;
        uint64_t x = a >> off;
        d = wd == 64 ? x : (uint64_t)((int64_t)(x << (64 - wd)) >> (64 - wd));
    }
    w->scc = d != 0;
    SDST64(d);
}
H(s_absdiff_i32)
{
    int64_t r = (int64_t)(int32_t)S32(0) - (int32_t)S32(1);
    uint32_t d = (uint32_t)(r < 0 ? -r : r);
    w->scc = d != 0;
    SDST32(d);
}

/* SOP1 */
H(s_mov_b32) { SDST32(S32(0)); }
H(s_mov_b64) { SDST64(S64(0)); }
H(s_cmov_b32) { if (w->scc) SDST32(S32(0)); }
H(s_cmov_b64) { if (w->scc) SDST64(S64(0)); }
H(s_not_b32) { uint32_t d = ~S32(0); w->scc = d != 0; SDST32(d); }
H(s_not_b64) { uint64_t d = ~S64(0); w->scc = d != 0; SDST64(d); }
static uint64_t wqm(uint64_t a, int nq)
{
    uint64_t d = 0;
    for (int q = 0; q < nq; q++)
        if ((a >> (4 * q)) & 0xf) d |= 0xfull << (4 * q);
    return d;
}
H(s_wqm_b32) { uint32_t d = (uint32_t)wqm(S32(0), 8); w->scc = d != 0; SDST32(d); }
H(s_wqm_b64) { uint64_t d = wqm(S64(0), 16); w->scc = d != 0; SDST64(d); }
static uint64_t brev64(uint64_t v)
{
    uint64_t r = 0;
    for (int i = 0; i < 64; i++) r |= ((v >> i) & 1) << (63 - i);
    return r;
}
H(s_brev_b32) { SDST32((uint32_t)(brev64(S32(0)) >> 32)); }
H(s_brev_b64) { SDST64(brev64(S64(0))); }
H(s_bcnt0_i32_b32) { uint32_t d = (uint32_t)__builtin_popcount(~S32(0)); w->scc = d != 0; SDST32(d); }
H(s_bcnt0_i32_b64) { uint32_t d = (uint32_t)__builtin_popcountll(~S64(0)); w->scc = d != 0; SDST32(d); }
H(s_bcnt1_i32_b32) { uint32_t d = (uint32_t)__builtin_popcount(S32(0)); w->scc = d != 0; SDST32(d); }
H(s_bcnt1_i32_b64) { uint32_t d = (uint32_t)__builtin_popcountll(S64(0)); w->scc = d != 0; SDST32(d); }
H(s_ff0_i32_b32) { uint32_t a = ~S32(0); SDST32(a ? (uint32_t)__builtin_ctz(a) : UINT32_MAX); }
H(s_ff0_i32_b64) { uint64_t a = ~S64(0); SDST32(a ? (uint32_t)__builtin_ctzll(a) : UINT32_MAX); }
H(s_ff1_i32_b32) { uint32_t a = S32(0); SDST32(a ? (uint32_t)__builtin_ctz(a) : UINT32_MAX); }
H(s_ff1_i32_b64) { uint64_t a = S64(0); SDST32(a ? (uint32_t)__builtin_ctzll(a) : UINT32_MAX); }
H(s_flbit_i32_b32) { uint32_t a = S32(0); SDST32(a ? (uint32_t)__builtin_clz(a) : UINT32_MAX); }
H(s_flbit_i32_b64) { uint64_t a = S64(0); SDST32(a ? (uint32_t)__builtin_clzll(a) : UINT32_MAX); }
H(s_flbit_i32)
{
    uint32_t a = S32(0);
    if ((int32_t)a < 0) a = ~a;
    SDST32(a ? (uint32_t)__builtin_clz(a) : UINT32_MAX);
}
H(s_flbit_i32_i64)
{
    uint64_t a = S64(0);
    if ((int64_t)a < 0) a = ~a;
    SDST32(a ? (uint32_t)__builtin_clzll(a) : UINT32_MAX);
}
H(s_sext_i32_i8) { SDST32((uint32_t)(int32_t)(int8_t)S32(0)); }
H(s_sext_i32_i16) { SDST32((uint32_t)(int32_t)(int16_t)S32(0)); }
H(s_bitset0_b32) { w->s[in->dst[0] & 127] &= ~(1u << (S32(0) & 31)); }
H(s_bitset1_b32) { w->s[in->dst[0] & 127] |= 1u << (S32(0) & 31); }
H(s_bitset0_b64) { SDST64(rs64(w, in, in->dst[0], 0) & ~(1ull << (S32(0) & 63))); }
H(s_bitset1_b64) { SDST64(rs64(w, in, in->dst[0], 0) | (1ull << (S32(0) & 63))); }
H(s_getpc_b64) { SDST64(w->image_base + in->pc + in->size); }
static void indirect(gcn_wave *w, const gcn_insn *in, uint64_t target)
{
    w->pc = target - w->image_base;
    if (w->rec.ops) w->rec.ops->indirect(w->rec.ctx, w->wave_in_wg, w->pc);
}
H(s_setpc_b64) { indirect(w, in, S64(0)); }
H(s_swappc_b64)
{
    uint64_t t = S64(0);
    SDST64(w->image_base + in->pc + in->size);
    indirect(w, in, t);
}
#define SAVEEXEC(name, EXPR)                                                                \
    H(name)                                                                                 \
    {                                                                                       \
        uint64_t s = S64(0), e = gcn_exec_mask(w), n = (EXPR);                              \
        SDST64(e);                                                                          \
        gcn_set_exec(w, n);                                                                 \
        w->scc = n != 0;                                                                    \
    }
SAVEEXEC(s_and_saveexec_b64, s & e)
SAVEEXEC(s_or_saveexec_b64, s | e)
SAVEEXEC(s_xor_saveexec_b64, s ^ e)
SAVEEXEC(s_andn2_saveexec_b64, s & ~e)
SAVEEXEC(s_orn2_saveexec_b64, s | ~e)
SAVEEXEC(s_nand_saveexec_b64, ~(s & e))
SAVEEXEC(s_nor_saveexec_b64, ~(s | e))
SAVEEXEC(s_xnor_saveexec_b64, ~(s ^ e))
static uint64_t quadmask(uint64_t a, int nq)
{
    uint64_t d = 0;
    for (int q = 0; q < nq; q++)
        if ((a >> (4 * q)) & 0xf) d |= 1ull << q;
    return d;
}
H(s_quadmask_b32) { uint32_t d = (uint32_t)quadmask(S32(0), 8); w->scc = d != 0; SDST32(d); }
H(s_quadmask_b64) { uint64_t d = quadmask(S64(0), 16); w->scc = d != 0; SDST64(d); }
H(s_movrels_b32) { unsigned c = in->src[0] + w->s[GCN_SREG_M0]; SDST32(c < 128 ? w->s[c] : 0); }
H(s_movrels_b64) { unsigned c = in->src[0] + w->s[GCN_SREG_M0]; SDST64(c < 127 ? rs64(w, in, c, 0) : 0); }
H(s_movreld_b32) { unsigned c = in->dst[0] + w->s[GCN_SREG_M0]; ws32(w, c, S32(0)); }
H(s_movreld_b64) { unsigned c = in->dst[0] + w->s[GCN_SREG_M0]; ws64(w, c, S64(0)); }
H(s_abs_i32)
{
    int32_t a = (int32_t)S32(0);
    uint32_t d = a < 0 ? (uint32_t)0 - (uint32_t)a : (uint32_t)a;
    w->scc = d != 0;
    SDST32(d);
}

/* SOPC */
#define SOPC(name, T, COND)                                                                 \
    H(name)                                                                                 \
    {                                                                                       \
        T a = (T)S32(0), b = (T)S32(1);                                                     \
        w->scc = (COND) ? 1 : 0;                                                            \
    }
SOPC(s_cmp_eq_i32, int32_t, a == b)
SOPC(s_cmp_lg_i32, int32_t, a != b)
SOPC(s_cmp_gt_i32, int32_t, a > b)
SOPC(s_cmp_ge_i32, int32_t, a >= b)
SOPC(s_cmp_lt_i32, int32_t, a < b)
SOPC(s_cmp_le_i32, int32_t, a <= b)
SOPC(s_cmp_eq_u32, uint32_t, a == b)
SOPC(s_cmp_lg_u32, uint32_t, a != b)
SOPC(s_cmp_gt_u32, uint32_t, a > b)
SOPC(s_cmp_ge_u32, uint32_t, a >= b)
SOPC(s_cmp_lt_u32, uint32_t, a < b)
SOPC(s_cmp_le_u32, uint32_t, a <= b)
SOPC(s_bitcmp0_b32, uint32_t, ((a >> (b & 31)) & 1) == 0)
SOPC(s_bitcmp1_b32, uint32_t, ((a >> (b & 31)) & 1) == 1)
H(s_bitcmp0_b64) { w->scc = ((S64(0) >> (S32(1) & 63)) & 1) == 0; }
H(s_bitcmp1_b64) { w->scc = ((S64(0) >> (S32(1) & 63)) & 1) == 1; }
H(s_cmp_eq_u64) { w->scc = S64(0) == S64(1); }
H(s_cmp_lg_u64) { w->scc = S64(0) != S64(1); }

/* SOPK (simm16 in imm) */
#define SIMM ((uint32_t)(int32_t)(int16_t)in->imm)
H(s_movk_i32) { SDST32(SIMM); }
H(s_cmovk_i32) { if (w->scc) SDST32(SIMM); }
#define SOPK_CMP(name, T, V, COND)                                                          \
    H(name)                                                                                 \
    {                                                                                       \
        T a = (T)S32(0), b = (T)(V);                                                        \
        w->scc = (COND) ? 1 : 0;                                                            \
    }
SOPK_CMP(s_cmpk_eq_i32, int32_t, SIMM, a == b)
SOPK_CMP(s_cmpk_lg_i32, int32_t, SIMM, a != b)
SOPK_CMP(s_cmpk_gt_i32, int32_t, SIMM, a > b)
SOPK_CMP(s_cmpk_ge_i32, int32_t, SIMM, a >= b)
SOPK_CMP(s_cmpk_lt_i32, int32_t, SIMM, a < b)
SOPK_CMP(s_cmpk_le_i32, int32_t, SIMM, a <= b)
SOPK_CMP(s_cmpk_eq_u32, uint32_t, in->imm & 0xffff, a == b)
SOPK_CMP(s_cmpk_lg_u32, uint32_t, in->imm & 0xffff, a != b)
SOPK_CMP(s_cmpk_gt_u32, uint32_t, in->imm & 0xffff, a > b)
SOPK_CMP(s_cmpk_ge_u32, uint32_t, in->imm & 0xffff, a >= b)
SOPK_CMP(s_cmpk_lt_u32, uint32_t, in->imm & 0xffff, a < b)
SOPK_CMP(s_cmpk_le_u32, uint32_t, in->imm & 0xffff, a <= b)
H(s_addk_i32)
{
    uint32_t a = rs32(w, in, in->dst[0]), b = SIMM, d = a + b;
    w->scc = ((~(a ^ b) & (a ^ d)) >> 31) & 1;
    SDST32(d);
}
H(s_mulk_i32) { SDST32((uint32_t)((int64_t)(int32_t)rs32(w, in, in->dst[0]) * (int16_t)in->imm)); }

/* hardware registers (ISA manual Sec. 3.5 / s_getreg): id, offset, size-1 in simm16 */
static uint32_t status_reg(const gcn_wave *w)
{
    return (w->scc & 1) | (uint32_t)(gcn_exec_mask(w) == 0) << 9 | (uint32_t)(gcn_vcc(w) == 0) << 10;
}
H(s_getreg_b32)
{
    unsigned id = in->imm & 0x3f, off = (in->imm >> 6) & 0x1f, sz = ((in->imm >> 11) & 0x1f) + 1;
    uint32_t v;
    switch (id) {
    case 1: v = w->mode; break;
    case 2: v = status_reg(w); break;
    case 3: v = w->trapsts; break;
    case 4: v = (uint32_t)w->hw_id; break;
    case 5: v = ((w->n_vgpr / 4 - 1) & 0x3f) << 8; break; /* GPR_ALLOC: vgpr_size */
    case 6: v = ((w->lds_size + 255) / 256) << 12; break; /* LDS_ALLOC: lds_size in 64-dword units */
    case 7: v = 0; break;  /* IB_STS: no counters outstanding (memory completes in order) */
    default: v = 0; break; /* PC_LO/HI, INST_DW0/1, IB_DBG0: debug-only, read as 0 */
    }
    SDST32((uint32_t)((v >> off) & ((1ull << sz) - 1)));
}
static void setreg(gcn_wave *w, const gcn_insn *in, uint32_t val)
{
    unsigned id = in->imm & 0x3f, off = (in->imm >> 6) & 0x1f, sz = ((in->imm >> 11) & 0x1f) + 1;
    uint32_t m = (uint32_t)(((1ull << sz) - 1) << off);
    switch (id) {
    case 1: w->mode = (w->mode & ~m) | ((val << off) & m); break;
    case 3: w->trapsts = (w->trapsts & ~m) | ((val << off) & m); break;
    default:
        wave_error(w, in, GCN_WAVE_ILLEGAL, "s_setreg of hardware register %u is not implemented", id);
    }
}
H(s_setreg_b32) { setreg(w, in, S32(0)); }
H(s_setreg_imm32_b32) { setreg(w, in, in->literal); }

/* VGPR indexing (VI, ISA manual 4.6 / 12.x): index in M0[7:0], operand enables
 * in M0[15:12] (src0, src1, src2, dst), on/off in MODE.GPR_IDX_EN; applied by
 * exec_special() in the run loop. */
H(s_set_gpr_idx_on)
{
    uint32_t m0 = w->s[GCN_SREG_M0];
    w->s[GCN_SREG_M0] = (m0 & ~0xf0ffu) | (S32(0) & 0xff) | ((in->src[1] & 0xf) << 12);
    w->mode |= MODE_GPR_IDX_EN;
}
H(s_set_gpr_idx_off) { w->mode &= ~MODE_GPR_IDX_EN; }
H(s_set_gpr_idx_idx) { w->s[GCN_SREG_M0] = (w->s[GCN_SREG_M0] & ~0xffu) | (S32(0) & 0xff); }
H(s_set_gpr_idx_mode) { w->s[GCN_SREG_M0] = (w->s[GCN_SREG_M0] & ~0xf000u) | ((in->imm & 0xf) << 12); }
/* VSKIP = S0[S1[4:0]]: while set, vector instructions are not issued */
H(s_setvskip) { w->mode = (w->mode & ~MODE_VSKIP) | (((S32(0) >> (S32(1) & 31)) & 1) ? MODE_VSKIP : 0); }

/* Fork/join (removed after GCN3; LLVM never emits them), exception return and
 * halting need a control stack, a trap handler or a debugger the emulator does
 * not model: they stop the wave with a message naming the instruction. */
H(s_cbranch_g_fork) { unimplemented(w, in, "(fork/join control stack; not emitted by compilers)"); }
H(s_cbranch_i_fork) { unimplemented(w, in, "(fork/join control stack; not emitted by compilers)"); }
H(s_cbranch_join) { unimplemented(w, in, "(fork/join control stack; not emitted by compilers)"); }
H(s_rfe_b64) { unimplemented(w, in, "(return from a trap handler; no trap handler is installed)"); }
H(s_rfe_restore_b64) { unimplemented(w, in, "(return from a trap handler; no trap handler is installed)"); }

/* ---- SOPP / program flow ------------------------------------------------------- */

H(s_nop) {}
H(s_waitcnt) {}   /* functional: memory completes in order */
/* s_sleep yields the wave to the workgroup scheduler (gcn_launch.c), which
 * runs host services (hostcall) and other waves before resuming it: spin
 * loops that poll memory written by the host or by other workgroups (device
 * printf, grid barriers) make progress, deterministically. */
H(s_sleep)
{
    /* a sleep in a wait loop: stuck when the state repeats since the last
     * s_sleep at this pc (gcn_wave.h "Forward progress") */
    uint64_t h = gcn_wave_state_hash(w);
    w->stuck = (uint8_t)(w->sleep_pc == w->pc && w->sleep_hash == h);
    w->sleep_pc = w->pc;
    w->sleep_hash = h;
    w->state_hash = h;
    w->status = GCN_WAVE_SLEEP;
}
H(s_setprio) {}
H(s_sendmsg) {}   /* MSG_INTERRUPT etc.: no host-side interrupt handling */
H(s_icache_inv) {}
H(s_incperflevel) {}
H(s_decperflevel) {}
H(s_ttracedata) {}
H(s_barrier) { w->status = GCN_WAVE_BARRIER; }
H(s_endpgm)
{
    w->status = GCN_WAVE_DONE;
    if (w->rec.ops) w->rec.ops->wave_end(w->rec.ctx, w->wave_in_wg, w->n_instr);
}
H(s_trap)
{
    wave_error(w, in, GCN_WAVE_TRAP, "s_trap %u (trap id %u%s)", in->imm & 0xff, in->imm & 0xff,
               (in->imm & 0xff) == 2 ? ": device-side assert failed" : "");
}
H(s_branch) { w->pc = in->target; }
#define CBRANCH(name, COND)                                                                 \
    H(name)                                                                                 \
    {                                                                                       \
        int t = (COND) ? 1 : 0;                                                             \
        if (t) w->pc = in->target;                                                          \
        if (w->rec.ops) w->rec.ops->branch(w->rec.ctx, w->wave_in_wg, t);                               \
    }
CBRANCH(s_cbranch_scc0, w->scc == 0)
CBRANCH(s_cbranch_scc1, w->scc != 0)
CBRANCH(s_cbranch_vccz, gcn_vcc(w) == 0)
CBRANCH(s_cbranch_vccnz, gcn_vcc(w) != 0)
CBRANCH(s_cbranch_execz, gcn_exec_mask(w) == 0)
CBRANCH(s_cbranch_execnz, gcn_exec_mask(w) != 0)
/* debugger branches: no debugger is attached, so the system and user debug
 * flags are 0 (ISA manual 12.x S_CBRANCH_CDBG*) */
CBRANCH(s_cbranch_cdbgsys, 0)
CBRANCH(s_cbranch_cdbguser, 0)
CBRANCH(s_cbranch_cdbgsys_or_user, 0)
CBRANCH(s_cbranch_cdbgsys_and_user, 0)
H(s_wakeup) {}   /* waves yield at s_sleep only until the scheduler resumes them: nothing to wake */
/* s_endpgm_saved ends a wave whose state the context-save handler stored */
H(s_endpgm_saved)
{
    w->status = GCN_WAVE_DONE;
    if (w->rec.ops) w->rec.ops->wave_end(w->rec.ctx, w->wave_in_wg, w->n_instr);
}
H(s_sethalt)
{
    if (in->imm & 1) wave_error(w, in, GCN_WAVE_TRAP, "s_sethalt 1 halts the wave until a debugger resumes it");
}
H(s_setkill)
{
    if (in->imm & 1) wave_error(w, in, GCN_WAVE_TRAP, "s_setkill 1 kills the wave");
}
H(s_sendmsghalt) { wave_error(w, in, GCN_WAVE_TRAP, "s_sendmsghalt halts the wave until the host resumes it"); }

/* v_cvt_f16_f32 / v_cvt_f32_f16 are in gcn_sem_valu.c (f16 operand rules) */

/* ---- VALU: moves, lanes ---------------------------------------------------------- */

VOP_1U(v_mov_b32, a)
H(v_nop) {}
H(v_readlane_b32)
{
    uint32_t *s = vreg(w, in, in->src[0], 1);
    SDST32(s[S32(1) & 63]);
}
H(v_writelane_b32)
{
    uint32_t *d = vreg(w, in, in->dst[0], 1);
    d[S32(1) & 63] = S32(0);
}
H(v_readfirstlane_b32)
{
    uint64_t ex = gcn_exec_mask(w);
    unsigned l = ex ? (unsigned)__builtin_ctzll(ex) : 0;
    VSRC(0, A);
    SDST32(X32(A, l));
}
H(v_mbcnt_lo_u32_b32)
{
    EXEC_DECL;
    VSRC(0, A);
    VSRC(1, B);
    VDST(d);
    LANES
    {
        uint32_t m = l >= 32 ? 0xffffffffu : (uint32_t)((1ull << l) - 1);
        d[l] = (uint32_t)__builtin_popcount(X32(A, l) & m) + X32(B, l);
    }
}
H(v_mbcnt_hi_u32_b32)
{
    EXEC_DECL;
    VSRC(0, A);
    VSRC(1, B);
    VDST(d);
    LANES
    {
        uint32_t m = l <= 32 ? 0 : (uint32_t)((1ull << (l - 32)) - 1);
        d[l] = (uint32_t)__builtin_popcount(X32(A, l) & m) + X32(B, l);
    }
}
H(v_cndmask_b32)
{
    EXEC_DECL;
    VSRC(0, A);
    VSRC(1, B);
    VDST(d);
    uint64_t c = rs64(w, in, in->src[2], 0);
    if (ex == ~0ull) {
        uint8_t cf[GCN_WAVE_LANES];
        unpack_mask(c, cf);
        for (unsigned l = 0; l < GCN_WAVE_LANES; l++) d[l] = cf[l] ? X32(B, l) : X32(A, l);
        return;
    }
    LANES d[l] = ((c >> l) & 1) ? X32(B, l) : X32(A, l);
}
H(v_movrels_b32)
{
    EXEC_DECL;
    uint32_t *s = vreg(w, in, in->src[0] + w->s[GCN_SREG_M0], 1);
    VDST(d);
    LANES d[l] = s[l];
}
H(v_movreld_b32)
{
    EXEC_DECL;
    VSRC(0, A);
    uint32_t *d = vreg(w, in, in->dst[0] + w->s[GCN_SREG_M0], 1);
    LANES d[l] = X32(A, l);
}
H(v_movrelsd_b32)
{
    EXEC_DECL;
    uint32_t *s = vreg(w, in, in->src[0] + w->s[GCN_SREG_M0], 1);
    uint32_t *d = vreg(w, in, in->dst[0] + w->s[GCN_SREG_M0], 1);
    LANES d[l] = s[l];
}

/* ---- VALU: integer ---------------------------------------------------------------- */

VOP_2U(v_and_b32, a & b)
VOP_2U(v_or_b32, a | b)
VOP_2U(v_xor_b32, a ^ b)
VOP_1U(v_not_b32, ~a)
VOP_1U(v_bfrev_b32, (uint32_t)(brev64(a) >> 32))
VOP_1U(v_ffbh_u32, a ? (uint32_t)__builtin_clz(a) : UINT32_MAX)
VOP_1U(v_ffbl_b32, a ? (uint32_t)__builtin_ctz(a) : UINT32_MAX)
VOP_1U(v_ffbh_i32, ((int32_t)a < 0 ? ~a : a) ? (uint32_t)__builtin_clz((int32_t)a < 0 ? ~a : a) : UINT32_MAX)
/* shifts: a shift count from a scalar operand is the same in every lane, which
 * lets the full-EXEC loop use one vector shift */
#define VOP_SHIFT32(name, EXPR)                                                             \
    H(name)                                                                                 \
    {                                                                                       \
        EXEC_DECL;                                                                          \
        if (ex == ~0ull && in->src[0] < GCN_OPD_VGPR && in->src[1] >= GCN_OPD_VGPR) {       \
            const uint32_t *B_p = vreg(w, in, in->src[1], 1);                               \
            VDST(d);                                                                        \
            uint32_t a = S32(0) & 31;                                                       \
            for (unsigned l = 0; l < GCN_WAVE_LANES; l++) {                                 \
                uint32_t b = B_p[l];                                                        \
                d[l] = (EXPR);                                                              \
            }                                                                               \
            return;                                                                         \
        }                                                                                   \
        VSRC(0, A);                                                                         \
        VSRC(1, B);                                                                         \
        VDST(d);                                                                            \
        LANES                                                                               \
        {                                                                                   \
            uint32_t a = X32(A, l) & 31, b = X32(B, l);                                     \
            d[l] = (EXPR);                                                                  \
        }                                                                                   \
    }
VOP_SHIFT32(v_lshrrev_b32, b >> a)
VOP_SHIFT32(v_ashrrev_i32, (uint32_t)((int32_t)b >> a))
VOP_SHIFT32(v_lshlrev_b32, b << a)
VOP_2U(v_min_i32, (int32_t)a < (int32_t)b ? a : b)
VOP_2U(v_max_i32, (int32_t)a > (int32_t)b ? a : b)
VOP_2U(v_min_u32, a < b ? a : b)
VOP_2U(v_max_u32, a > b ? a : b)
VOP_2U(v_mul_i32_i24, (uint32_t)((int32_t)(a << 8) >> 8) * (uint32_t)((int32_t)(b << 8) >> 8))
VOP_2U(v_mul_hi_i32_i24, (uint32_t)(((int64_t)((int32_t)(a << 8) >> 8) * ((int32_t)(b << 8) >> 8)) >> 32))
VOP_2U(v_mul_u32_u24, (a & 0xffffff) * (b & 0xffffff))
VOP_2U(v_mul_hi_u32_u24, (uint32_t)(((uint64_t)(a & 0xffffff) * (b & 0xffffff)) >> 32))
VOP_2U(v_mul_lo_u32, a * b)
VOP_2U(v_mul_hi_u32, (uint32_t)(((uint64_t)a * b) >> 32))
VOP_2U(v_mul_hi_i32, (uint32_t)(((int64_t)(int32_t)a * (int32_t)b) >> 32))
VOP_2U(v_bcnt_u32_b32, (uint32_t)__builtin_popcount(a) + b)
VOP_2U(v_bfm_b32, (uint32_t)(((1ull << (a & 31)) - 1) << (b & 31)))
VOP_3U(v_mad_u32_u24, (a & 0xffffff) * (b & 0xffffff) + c)
VOP_3U(v_mad_i32_i24, (uint32_t)((int32_t)(a << 8) >> 8) * (uint32_t)((int32_t)(b << 8) >> 8) + c)
VOP_3U(v_bfe_u32, bfe_u32(a, b, c))
VOP_3U(v_bfe_i32, bfe_i32(a, b, c))
VOP_3U(v_bfi_b32, (a & b) | (~a & c))
VOP_3U(v_alignbit_b32, (uint32_t)((((uint64_t)a << 32) | b) >> (c & 31)))
VOP_3U(v_alignbyte_b32, (uint32_t)((((uint64_t)a << 32) | b) >> (8 * (c & 3))))
static inline uint32_t min3u(uint32_t a, uint32_t b, uint32_t c) { uint32_t m = a < b ? a : b; return m < c ? m : c; }
static inline uint32_t max3u(uint32_t a, uint32_t b, uint32_t c) { uint32_t m = a > b ? a : b; return m > c ? m : c; }
static inline int32_t min3i(int32_t a, int32_t b, int32_t c) { int32_t m = a < b ? a : b; return m < c ? m : c; }
static inline int32_t max3i(int32_t a, int32_t b, int32_t c) { int32_t m = a > b ? a : b; return m > c ? m : c; }
VOP_3U(v_min3_u32, min3u(a, b, c))
VOP_3U(v_max3_u32, max3u(a, b, c))
VOP_3U(v_min3_i32, (uint32_t)min3i((int32_t)a, (int32_t)b, (int32_t)c))
VOP_3U(v_max3_i32, (uint32_t)max3i((int32_t)a, (int32_t)b, (int32_t)c))
VOP_3U(v_med3_u32, max3u(a < b ? a : b, b < c ? b : c, a < c ? a : c))
VOP_3U(v_med3_i32, (uint32_t)max3i(min3i((int32_t)a, (int32_t)b, INT32_MAX), min3i((int32_t)b, (int32_t)c, INT32_MAX),
                                   min3i((int32_t)a, (int32_t)c, INT32_MAX)))
static inline uint32_t perm_b32(uint32_t a, uint32_t b, uint32_t sel)
{
    uint64_t v = (uint64_t)a << 32 | b;
    uint32_t d = 0;
    for (int i = 0; i < 4; i++) {
        unsigned s = (sel >> (8 * i)) & 0xff, byte;
        if (s < 8) byte = (unsigned)(v >> (8 * s)) & 0xff;
        else if (s < 12) byte = ((v >> (16 * (s - 8) + 15)) & 1) ? 0xff : 0; /* sign of 16-bit halves */
        else if (s == 12) byte = 0;
        else byte = 0xff;
        d |= (uint32_t)byte << (8 * i);
    }
    return d;
}
VOP_3U(v_perm_b32, perm_b32(a, b, c))
static inline uint32_t sad_u8(uint32_t a, uint32_t b)
{
    uint32_t s = 0;
    for (int i = 0; i < 4; i++) {
        int x = (int)((a >> (8 * i)) & 0xff) - (int)((b >> (8 * i)) & 0xff);
        s += (uint32_t)(x < 0 ? -x : x);
    }
    return s;
}
VOP_3U(v_sad_u8, sad_u8(a, b) + c)
VOP_3U(v_sad_u32, (a > b ? a - b : b - a) + c)
VOP_3U(v_sad_u16, (uint32_t)abs((int)(a & 0xffff) - (int)(b & 0xffff)) + (uint32_t)abs((int)(a >> 16) - (int)(b >> 16)) + c)

/* 16-bit integer (VI): result in the low half, high half zeroed */
VOP_2U(v_add_u16, (uint16_t)(a + b))
VOP_2U(v_sub_u16, (uint16_t)(a - b))
VOP_2U(v_subrev_u16, (uint16_t)(b - a))
VOP_2U(v_mul_lo_u16, (uint16_t)(a * b))
VOP_2U(v_lshlrev_b16, (uint16_t)(b << (a & 15)))
VOP_2U(v_lshrrev_b16, (uint16_t)((b & 0xffff) >> (a & 15)))
VOP_2U(v_ashrrev_i16, (uint16_t)((int16_t)b >> (a & 15)))
VOP_2U(v_max_u16, (uint16_t)a > (uint16_t)b ? (uint16_t)a : (uint16_t)b)
VOP_2U(v_min_u16, (uint16_t)a < (uint16_t)b ? (uint16_t)a : (uint16_t)b)
VOP_2U(v_max_i16, (uint16_t)((int16_t)a > (int16_t)b ? a : b))
VOP_2U(v_min_i16, (uint16_t)((int16_t)a < (int16_t)b ? a : b))
VOP_3U(v_mad_u16, (uint16_t)(a * b + c))
VOP_3U(v_mad_i16, (uint16_t)((int16_t)a * (int16_t)b + (int16_t)c))

/* carry-out / carry-in (VOP2 with VCC, VOP3b with an SGPR pair; ISA manual 6.3) */
#define VOP_CARRY(name, CIN, EXPR_D, EXPR_CO, EXPR_CO32)                                    \
    H(name)                                                                                 \
    {                                                                                       \
        EXEC_DECL;                                                                          \
        VSRC(0, A);                                                                         \
        VSRC(1, B);                                                                         \
        VDST(d);                                                                            \
        uint64_t cin = (CIN) ? rs64(w, in, in->src[2], 0) : 0, co = 0;                      \
        if (ex == ~0ull) {                                                                  \
            uint8_t cf[GCN_WAVE_LANES], of[GCN_WAVE_LANES];                                 \
            if (CIN) unpack_mask(cin, cf);                                                  \
            for (unsigned l = 0; l < GCN_WAVE_LANES; l++) {                                 \
                uint32_t a = X32(A, l), b = X32(B, l), c = (CIN) ? cf[l] : 0;               \
                (void)c;                                                                    \
                d[l] = (uint32_t)(EXPR_D);                                                  \
                of[l] = (EXPR_CO32) ? 1 : 0;                                                \
            }                                                                               \
            ws64(w, in->dst[1], pack_flags(of));                                            \
            return;                                                                         \
        }                                                                                   \
        LANES                                                                               \
        {                                                                                   \
            uint64_t a = X32(A, l), b = X32(B, l), c = (cin >> l) & 1;                      \
            (void)c;                                                                        \
            d[l] = (uint32_t)(EXPR_D);                                                      \
            co |= (uint64_t)((EXPR_CO) ? 1 : 0) << l;                                       \
        }                                                                                   \
        ws64(w, in->dst[1], co);                                                            \
    }
/* EXPR_CO32: the same carry / borrow in 32-bit arithmetic (c is 0 or 1) */
VOP_CARRY(v_add_u32, 0, a + b, (a + b) >> 32, (uint32_t)(a + b) < a)
VOP_CARRY(v_sub_u32, 0, a - b, b > a, b > a)
VOP_CARRY(v_subrev_u32, 0, b - a, a > b, a > b)
VOP_CARRY(v_addc_u32, 1, a + b + c, (a + b + c) >> 32, ((uint32_t)(a + b) < a) | ((uint32_t)(a + b + c) < c))
VOP_CARRY(v_subb_u32, 1, a - b - c, b + c > a, (b > a) | ((uint32_t)(a - b) < c))
VOP_CARRY(v_subbrev_u32, 1, b - a - c, a + c > b, (a > b) | ((uint32_t)(b - a) < c))

H(v_mad_u64_u32)
{
    EXEC_DECL;
    VSRC(0, A);
    VSRC(1, B);
    VSRC64(2, C, 0);
    VDST64(dl, dh);
    uint64_t co = 0;
    LANES
    {
        unsigned __int128 r = (unsigned __int128)((uint64_t)X32(A, l) * X32(B, l)) + X64(C, l);
        dl[l] = (uint32_t)r;
        dh[l] = (uint32_t)((uint64_t)r >> 32);
        co |= (uint64_t)(r >> 64 & 1) << l;
    }
    ws64(w, in->dst[1], co);
}
H(v_mad_i64_i32)
{
    EXEC_DECL;
    VSRC(0, A);
    VSRC(1, B);
    VSRC64(2, C, 0);
    VDST64(dl, dh);
    uint64_t co = 0;
    LANES
    {
        int64_t r;
        int ov = __builtin_add_overflow((int64_t)(int32_t)X32(A, l) * (int32_t)X32(B, l), (int64_t)X64(C, l), &r);
        dl[l] = (uint32_t)r;
        dh[l] = (uint32_t)((uint64_t)r >> 32);
        co |= (uint64_t)ov << l;
    }
    ws64(w, in->dst[1], co);
}

#define VOP_SHIFT64(name, EXPR)                                                             \
    H(name)                                                                                 \
    {                                                                                       \
        EXEC_DECL;                                                                          \
        if (ex == ~0ull && in->src[0] < GCN_OPD_VGPR && in->src[1] >= GCN_OPD_VGPR) {       \
            const uint32_t *bl = vreg(w, in, in->src[1], 2);                                \
            const uint32_t *bh = bl == dummy_lanes ? dummy_lanes : bl + GCN_WAVE_LANES;     \
            VDST64(dl, dh);                                                                 \
            uint32_t a = S32(0) & 63;                                                       \
            uint64_t r_[GCN_WAVE_LANES];                                                    \
            for (unsigned l = 0; l < GCN_WAVE_LANES; l++) {                                 \
                uint64_t b = (uint64_t)bl[l] | (uint64_t)bh[l] << 32;                       \
                r_[l] = (EXPR);                                                             \
            }                                                                               \
            for (unsigned l = 0; l < GCN_WAVE_LANES; l++) {                                 \
                dl[l] = (uint32_t)r_[l];                                                    \
                dh[l] = (uint32_t)(r_[l] >> 32);                                            \
            }                                                                               \
            return;                                                                         \
        }                                                                                   \
        VSRC(0, A);                                                                         \
        VSRC64(1, B, 0);                                                                    \
        VDST64(dl, dh);                                                                     \
        LANES                                                                               \
        {                                                                                   \
            uint32_t a = X32(A, l) & 63;                                                    \
            uint64_t b = X64(B, l), r = (EXPR);                                             \
            dl[l] = (uint32_t)r;                                                            \
            dh[l] = (uint32_t)(r >> 32);                                                    \
        }                                                                                   \
    }
VOP_SHIFT64(v_lshlrev_b64, b << a)
VOP_SHIFT64(v_lshrrev_b64, b >> a)
VOP_SHIFT64(v_ashrrev_i64, (uint64_t)((int64_t)b >> a))

/* ---- VALU: f32 ---------------------------------------------------------------------- */

VOP_2F(v_add_f32, a + b)
VOP_2F(v_sub_f32, a - b)
VOP_2F(v_subrev_f32, b - a)
VOP_2F(v_mul_f32, a * b)
VOP_2F(v_mul_legacy_f32, (a == 0.0f || b == 0.0f) ? 0.0f : a * b)
VOP_2F(v_min_f32, fmin_ieee(a, b))
VOP_2F(v_max_f32, fmax_ieee(a, b))
VOP_2F(v_ldexp_f32, ldexpf(a, (int32_t)X32(B, l)))
/* GCN3 MAD/MAC are not fused: the product is rounded before the add (ISA
 * manual 12.7 V_MAD_F32 vs V_FMA_F32); -std=c11 keeps gcc from contracting */
static inline float mad32(float a, float b, float c)
{
    volatile float p = a * b;
    return p + c;
}
VOP_3F(v_mac_f32, mad32(a, b, c))
VOP_3F(v_mad_f32, mad32(a, b, c))
VOP_3F(v_madmk_f32, mad32(a, b, c))
VOP_3F(v_madak_f32, mad32(a, b, c))
VOP_3F(v_fma_f32, fmaf(a, b, c))
VOP_3F(v_mad_legacy_f32, (a == 0.0f || b == 0.0f) ? c : mad32(a, b, c))
VOP_3F(v_min3_f32, fmin_ieee(fmin_ieee(a, b), c))
VOP_3F(v_max3_f32, fmax_ieee(fmax_ieee(a, b), c))
VOP_3F(v_med3_f32, fmax_ieee(fmin_ieee(a, b), fmin_ieee(fmax_ieee(a, b), c)))
VOP_1F(v_trunc_f32, truncf(a))
VOP_1F(v_ceil_f32, ceilf(a))
VOP_1F(v_floor_f32, floorf(a))
VOP_1F(v_rndne_f32, rintf(a))
VOP_1F(v_fract_f32, fract32(a))
VOP_1F(v_exp_f32, exp2f(a))
VOP_1F(v_log_f32, log2f(a))
VOP_1F(v_exp_legacy_f32, exp2f(a))
VOP_1F(v_log_legacy_f32, log2f(a))
VOP_1F(v_rcp_f32, 1.0f / a)
VOP_1F(v_rcp_iflag_f32, 1.0f / a)
VOP_1F(v_rsq_f32, 1.0f / sqrtf(a))
VOP_1F(v_sqrt_f32, sqrtf(a))
VOP_1F(v_sin_f32, sinf(a * 6.2831853071795864769f))
VOP_1F(v_cos_f32, cosf(a * 6.2831853071795864769f))
VOP_1F(v_frexp_mant_f32, (isinf(a) || isnan(a)) ? a : frexpf(a, &(int){0}))
H(v_frexp_exp_i32_f32)
{
    FSETUP;
    VSRC(0, A);
    VDST(d);
    LANES
    {
        float a = FIN(0, X32(A, l));
        int e = 0;
        if (!isinf(a) && !isnan(a)) frexpf(a, &e);
        d[l] = (uint32_t)e;
    }
}
/* conversions */
H(v_cvt_f32_i32) { FSETUP; VSRC(0, A); VDST(d); LANES d[l] = FOUT((float)(int32_t)X32(A, l)); }
H(v_cvt_f32_u32) { FSETUP; VSRC(0, A); VDST(d); LANES d[l] = FOUT((float)X32(A, l)); }
H(v_cvt_u32_f32) { FSETUP; VSRC(0, A); VDST(d); LANES d[l] = cvt_u32(FIN(0, X32(A, l))); }
H(v_cvt_i32_f32) { FSETUP; VSRC(0, A); VDST(d); LANES d[l] = (uint32_t)cvt_i32(FIN(0, X32(A, l))); }
H(v_cvt_flr_i32_f32) { FSETUP; VSRC(0, A); VDST(d); LANES d[l] = (uint32_t)cvt_i32(floorf(FIN(0, X32(A, l)))); }
H(v_cvt_rpi_i32_f32) { FSETUP; VSRC(0, A); VDST(d); LANES d[l] = (uint32_t)cvt_i32(floorf(FIN(0, X32(A, l)) + 0.5f)); }
H(v_cvt_f32_ubyte0) { FSETUP; VSRC(0, A); VDST(d); LANES d[l] = FOUT((float)(X32(A, l) & 0xff)); }
H(v_cvt_f32_ubyte1) { FSETUP; VSRC(0, A); VDST(d); LANES d[l] = FOUT((float)((X32(A, l) >> 8) & 0xff)); }
H(v_cvt_f32_ubyte2) { FSETUP; VSRC(0, A); VDST(d); LANES d[l] = FOUT((float)((X32(A, l) >> 16) & 0xff)); }
H(v_cvt_f32_ubyte3) { FSETUP; VSRC(0, A); VDST(d); LANES d[l] = FOUT((float)(X32(A, l) >> 24)); }
H(v_cvt_pkrtz_f16_f32)
{
    FSETUP;
    VSRC(0, A);
    VSRC(1, B);
    VDST(d);
    LANES
    {
        float a = FIN(0, X32(A, l)), b = FIN(1, X32(B, l));
        /* round toward zero: truncate the mantissa before converting */
        d[l] = (uint32_t)f32_to_f16(f_of(b_of(a) & 0xffffe000u)) |
               (uint32_t)f32_to_f16(f_of(b_of(b) & 0xffffe000u)) << 16;
    }
}
H(v_cvt_f64_f32) { FSETUP; VSRC(0, A); VDST64(dl, dh); LANES { uint64_t r = DOUT((double)FIN(0, X32(A, l))); dl[l] = (uint32_t)r; dh[l] = (uint32_t)(r >> 32); } }
H(v_cvt_f32_f64) { FSETUP; VSRC64(0, A, 1); VDST(d); LANES d[l] = FOUT((float)DIN(0, X64(A, l))); }
H(v_cvt_f64_i32) { FSETUP; VSRC(0, A); VDST64(dl, dh); LANES { uint64_t r = DOUT((double)(int32_t)X32(A, l)); dl[l] = (uint32_t)r; dh[l] = (uint32_t)(r >> 32); } }
H(v_cvt_f64_u32) { FSETUP; VSRC(0, A); VDST64(dl, dh); LANES { uint64_t r = DOUT((double)X32(A, l)); dl[l] = (uint32_t)r; dh[l] = (uint32_t)(r >> 32); } }
H(v_cvt_i32_f64) { FSETUP; VSRC64(0, A, 1); VDST(d); LANES d[l] = (uint32_t)cvt_i32(DIN(0, X64(A, l))); }
H(v_cvt_u32_f64) { FSETUP; VSRC64(0, A, 1); VDST(d); LANES d[l] = cvt_u32(DIN(0, X64(A, l))); }

static inline uint32_t cmp_class(double a, uint32_t m, int isden)
{
    int cls;
    if (isnan(a)) cls = 1; /* quiet NaN (signalling NaNs are not produced by the host FPU path) */
    else if (isinf(a)) cls = a < 0 ? 2 : 9;
    else if (a == 0) cls = signbit(a) ? 5 : 6;
    else if (isden) cls = a < 0 ? 4 : 7;
    else cls = a < 0 ? 3 : 8;
    return (m >> cls) & 1;
}
static void cmp_class_f32(gcn_wave *w, const gcn_insn *in, int x)
{
    EXEC_DECL;
    VSRC(0, A);
    VSRC(1, B);
    uint64_t r = 0;
    uint32_t am = (in->mods >> GCN_M_ABS_SHIFT) & 1 ? 0x7fffffffu : ~0u, nx = (in->mods >> GCN_M_NEG_SHIFT) & 1 ? 0x80000000u : 0;
    LANES
    {
        uint32_t b = (X32(A, l) & am) ^ nx;
        uint32_t m = X32(B, l);
        int isden = (b & 0x7f800000u) == 0 && (b & 0x7fffff);
        uint32_t c = ((b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffff))
                         ? ((b & 0x400000) ? (m >> 1) & 1 : m & 1)
                         : cmp_class(f_of(b), m, isden);
        r |= (uint64_t)c << l;
    }
    ws64(w, in->dst[0], r);
    if (x) gcn_set_exec(w, r);
}
H(v_cmp_class_f32) { cmp_class_f32(w, in, 0); }
H(v_cmpx_class_f32) { cmp_class_f32(w, in, 1); }
static void cmp_class_f64(gcn_wave *w, const gcn_insn *in, int x)
{
    EXEC_DECL;
    VSRC64(0, A, 1);
    VSRC(1, B);
    uint64_t r = 0;
    LANES
    {
        uint64_t b = X64(A, l);
        if ((in->mods >> GCN_M_ABS_SHIFT) & 1) b &= ~(1ull << 63);
        if ((in->mods >> GCN_M_NEG_SHIFT) & 1) b ^= 1ull << 63;
        uint32_t m = X32(B, l);
        int isden = (b & 0x7ff0000000000000ull) == 0 && (b & 0xfffffffffffffull);
        uint32_t c = ((b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (b & 0xfffffffffffffull))
                         ? ((b & 0x8000000000000ull) ? (m >> 1) & 1 : m & 1)
                         : cmp_class(d_of(b), m, isden);
        r |= (uint64_t)c << l;
    }
    ws64(w, in->dst[0], r);
    if (x) gcn_set_exec(w, r);
}
H(v_cmp_class_f64) { cmp_class_f64(w, in, 0); }
H(v_cmpx_class_f64) { cmp_class_f64(w, in, 1); }

/* Division helpers (ISA manual 12.7: V_DIV_SCALE / V_DIV_FMAS / V_DIV_FIXUP). The
 * compiled f32 division sequence enables FP32 denormals around these. */
H(v_div_scale_f32)
{
    FSETUP;
    VSRC(0, A);
    VSRC(1, B);
    VSRC(2, C);
    VDST(d);
    uint64_t vcc = 0;
    LANES
    {
        float s0 = FIN(0, X32(A, l)), s1 = FIN(1, X32(B, l)), s2 = FIN(2, X32(C, l));
        float r = s0;
        int e1 = fexp32(b_of(s1)), e2 = fexp32(b_of(s2));
        if (s2 == 0.0f || s1 == 0.0f) r = NAN;
        else if (e2 - e1 >= 96) { vcc |= 1ull << l; if (s0 == s1) r = ldexpf(s0, 64); }
        else if (e1 == 0) r = ldexpf(s0, 64);
        else if (fexp32(b_of(1.0f / s1)) == 0 && fexp32(b_of(s2 / s1)) == 0) { vcc |= 1ull << l; if (s0 == s1) r = ldexpf(s0, 64); }
        else if (fexp32(b_of(1.0f / s1)) == 0) r = ldexpf(s0, -64);
        else if (fexp32(b_of(s2 / s1)) == 0) { vcc |= 1ull << l; if (s0 == s2) r = ldexpf(s0, 64); }
        else if (e2 <= 23) r = ldexpf(s0, 64);
        d[l] = FOUT(r);
    }
    ws64(w, in->dst[1], vcc);
}
H(v_div_fmas_f32)
{
    FSETUP;
    VSRC(0, A);
    VSRC(1, B);
    VSRC(2, C);
    VDST(d);
    uint64_t vcc = gcn_vcc(w);
    LANES
    {
        float a = FIN(0, X32(A, l)), b = FIN(1, X32(B, l)), c = FIN(2, X32(C, l));
        float r = fmaf(a, b, c);
        if ((vcc >> l) & 1) r = ldexpf(r, fexp32(b_of(c)) > 127 ? 64 : -64);
        d[l] = FOUT(r);
    }
}
H(v_div_fixup_f32)
{
    FSETUP;
    VSRC(0, A);
    VSRC(1, B);
    VSRC(2, C);
    VDST(d);
    LANES
    {
        float q = FIN(0, X32(A, l)), den = FIN(1, X32(B, l)), num = FIN(2, X32(C, l));
        uint32_t sign = (b_of(den) ^ b_of(num)) & 0x80000000u;
        float r;
        if (isnan(num)) r = num;
        else if (isnan(den)) r = den;
        else if (den == 0.0f && num == 0.0f) r = f_of(0xffc00000u);
        else if (isinf(den) && isinf(num)) r = f_of(0xffc00000u);
        else if (den == 0.0f || isinf(num)) r = f_of(sign | 0x7f800000u);
        else if (isinf(den) || num == 0.0f) r = f_of(sign);
        else r = f_of(sign | (b_of(q) & 0x7fffffffu));
        d[l] = FOUT(r);
    }
}

/* ---- VALU: f64 ---------------------------------------------------------------------- */

VOP_2D(v_add_f64, a + b)
VOP_2D(v_mul_f64, a * b)
VOP_2D(v_min_f64, fmin(a, b))
VOP_2D(v_max_f64, fmax(a, b))
H(v_ldexp_f64)
{
    FSETUP;
    VSRC64(0, A, 1);
    VSRC(1, B);
    VDST64(dl, dh);
    LANES
    {
        uint64_t r = DOUT(ldexp(DIN(0, X64(A, l)), (int32_t)X32(B, l)));
        dl[l] = (uint32_t)r;
        dh[l] = (uint32_t)(r >> 32);
    }
}
H(v_fma_f64)
{
    FSETUP;
    VSRC64(0, A, 1);
    VSRC64(1, B, 1);
    VSRC64(2, C, 1);
    VDST64(dl, dh);
    LANES
    {
        uint64_t r = DOUT(fma(DIN(0, X64(A, l)), DIN(1, X64(B, l)), DIN(2, X64(C, l))));
        dl[l] = (uint32_t)r;
        dh[l] = (uint32_t)(r >> 32);
    }
}
VOP_1D(v_trunc_f64, trunc(a))
VOP_1D(v_ceil_f64, ceil(a))
VOP_1D(v_floor_f64, floor(a))
VOP_1D(v_rndne_f64, rint(a))
VOP_1D(v_fract_f64, fract64(a))
VOP_1D(v_rcp_f64, 1.0 / a)
VOP_1D(v_rsq_f64, 1.0 / sqrt(a))
VOP_1D(v_sqrt_f64, sqrt(a))
VOP_1D(v_frexp_mant_f64, (isinf(a) || isnan(a)) ? a : frexp(a, &(int){0}))
H(v_frexp_exp_i32_f64)
{
    FSETUP;
    VSRC64(0, A, 1);
    VDST(d);
    LANES
    {
        double a = DIN(0, X64(A, l));
        int e = 0;
        if (!isinf(a) && !isnan(a)) frexp(a, &e);
        d[l] = (uint32_t)e;
    }
}
H(v_div_scale_f64)
{
    FSETUP;
    VSRC64(0, A, 1);
    VSRC64(1, B, 1);
    VSRC64(2, C, 1);
    VDST64(dl, dh);
    uint64_t vcc = 0;
    LANES
    {
        double s0 = DIN(0, X64(A, l)), s1 = DIN(1, X64(B, l)), s2 = DIN(2, X64(C, l)), r = s0;
        int e1 = (int)((db_of(s1) >> 52) & 0x7ff), e2 = (int)((db_of(s2) >> 52) & 0x7ff);
        if (s2 == 0.0 || s1 == 0.0) r = NAN;
        else if (e2 - e1 >= 768) { vcc |= 1ull << l; if (s0 == s1) r = ldexp(s0, 128); }
        else if (e1 == 0) r = ldexp(s0, 128);
        else if (((db_of(1.0 / s1) >> 52) & 0x7ff) == 0 && ((db_of(s2 / s1) >> 52) & 0x7ff) == 0) { vcc |= 1ull << l; if (s0 == s1) r = ldexp(s0, 128); }
        else if (((db_of(1.0 / s1) >> 52) & 0x7ff) == 0) r = ldexp(s0, -128);
        else if (((db_of(s2 / s1) >> 52) & 0x7ff) == 0) { vcc |= 1ull << l; if (s0 == s2) r = ldexp(s0, 128); }
        else if (e2 <= 53) r = ldexp(s0, 128);
        uint64_t o = DOUT(r);
        dl[l] = (uint32_t)o;
        dh[l] = (uint32_t)(o >> 32);
    }
    ws64(w, in->dst[1], vcc);
}
H(v_div_fmas_f64)
{
    FSETUP;
    VSRC64(0, A, 1);
    VSRC64(1, B, 1);
    VSRC64(2, C, 1);
    VDST64(dl, dh);
    uint64_t vcc = gcn_vcc(w);
    LANES
    {
        double c = DIN(2, X64(C, l)), r = fma(DIN(0, X64(A, l)), DIN(1, X64(B, l)), c);
        if ((vcc >> l) & 1) r = ldexp(r, ((db_of(c) >> 52) & 0x7ff) > 1023 ? 128 : -128);
        uint64_t o = DOUT(r);
        dl[l] = (uint32_t)o;
        dh[l] = (uint32_t)(o >> 32);
    }
}
H(v_div_fixup_f64)
{
    FSETUP;
    VSRC64(0, A, 1);
    VSRC64(1, B, 1);
    VSRC64(2, C, 1);
    VDST64(dl, dh);
    LANES
    {
        double q = DIN(0, X64(A, l)), den = DIN(1, X64(B, l)), num = DIN(2, X64(C, l)), r;
        uint64_t sign = (db_of(den) ^ db_of(num)) & 0x8000000000000000ull;
        if (isnan(num)) r = num;
        else if (isnan(den)) r = den;
        else if ((den == 0.0 && num == 0.0) || (isinf(den) && isinf(num))) r = d_of(0xfff8000000000000ull);
        else if (den == 0.0 || isinf(num)) r = d_of(sign | 0x7ff0000000000000ull);
        else if (isinf(den) || num == 0.0) r = d_of(sign);
        else r = d_of(sign | (db_of(q) & 0x7fffffffffffffffull));
        uint64_t o = DOUT(r);
        dl[l] = (uint32_t)o;
        dh[l] = (uint32_t)(o >> 32);
    }
}

/* ---- VOPC --------------------------------------------------------------------------- */

INT_CMPS(i16)
INT_CMPS(u16)
INT_CMPS(i32)
INT_CMPS(u32)
INT_CMPS(i64)
INT_CMPS(u64)
FLT_CMPS(f32)
FLT_CMPS(f64)

/* ---- SMEM ------------------------------------------------------------------------------ */

static void smem_access(gcn_wave *w, const gcn_insn *in, int store, int buffer)
{
    uint64_t base = rs64(w, in, in->src[0], 0);
    uint32_t off = (in->mods & GCN_M_SMEM_IMM) ? in->imm : rs32(w, in, in->src[1]);
    unsigned n = in->mem_bytes;
    uint32_t data[16];
    if (buffer) {
        uint32_t num_records = w->s[(in->src[0] + 2) & 127];
        base &= 0xffffffffffffull;
        if ((uint64_t)off + n > num_records) { /* out of range: loads read 0, stores are dropped (ISA manual 5.3) */
            if (!store)
                for (unsigned i = 0; i < n / 4; i++) ws32(w, in->dst[0] + i, 0);
            return;
        }
    }
    uint64_t addr = (base + off) & ~3ull;
    void *p = gcn_mem_global(w, addr, n, store, 0, in->pc);
    if (!p) return;
    if (store) {
        for (unsigned i = 0; i < n / 4; i++) data[i] = rs32(w, in, in->src[2] + i);
        memcpy(p, data, n);
    } else {
        memcpy(data, p, n);
        for (unsigned i = 0; i < n / 4; i++) ws32(w, in->dst[0] + i, data[i]);
    }
    if (w->rec.ops)
        w->rec.ops->mem(w->rec.ctx, w->wave_in_wg, (store ? GCN_MO_STORE : GCN_MO_LOAD) | GCN_MO_SMEM, n, 1, &addr,
                    store ? NULL : data, store ? data : NULL);
}
H(s_load_dword) { smem_access(w, in, 0, 0); }
H(s_load_dwordx2) { smem_access(w, in, 0, 0); }
H(s_load_dwordx4) { smem_access(w, in, 0, 0); }
H(s_load_dwordx8) { smem_access(w, in, 0, 0); }
H(s_load_dwordx16) { smem_access(w, in, 0, 0); }
H(s_buffer_load_dword) { smem_access(w, in, 0, 1); }
H(s_buffer_load_dwordx2) { smem_access(w, in, 0, 1); }
H(s_buffer_load_dwordx4) { smem_access(w, in, 0, 1); }
H(s_buffer_load_dwordx8) { smem_access(w, in, 0, 1); }
H(s_buffer_load_dwordx16) { smem_access(w, in, 0, 1); }
H(s_store_dword) { smem_access(w, in, 1, 0); }
H(s_store_dwordx2) { smem_access(w, in, 1, 0); }
H(s_store_dwordx4) { smem_access(w, in, 1, 0); }
H(s_buffer_store_dword) { smem_access(w, in, 1, 1); }
H(s_buffer_store_dwordx2) { smem_access(w, in, 1, 1); }
H(s_buffer_store_dwordx4) { smem_access(w, in, 1, 1); }
/* address-translation-cache probes are hints; memory is always translated here */
H(s_atc_probe) {}
H(s_atc_probe_buffer) {}
H(s_dcache_inv) {}
H(s_dcache_wb) {}
H(s_dcache_inv_vol) {}
H(s_dcache_wb_vol) {}
/* A deterministic "clock": 4 cycles per executed instruction of this wave, so
 * that emulation and replay agree (the timing model owns real time). */
H(s_memtime) { SDST64(w->n_instr * 4); }
H(s_memrealtime) { SDST64(w->n_instr * 4); }

/* ---- vector memory: common pieces -------------------------------------------------- */

typedef struct memrec {
    uint64_t addr[GCN_WAVE_LANES];
    uint8_t load[GCN_WAVE_LANES * 32];
    uint8_t store[GCN_WAVE_LANES * 32];
    size_t nl, ns;
} memrec;

/* load lane value from memory bytes into registers (dword granularity, sub-dword extended) */
static inline void put_lane(gcn_wave *w, uint32_t *d, unsigned l, const uint8_t *p, unsigned n, int sext)
{
    if (n >= 4) {
        for (unsigned k = 0; k < n / 4; k++) {
            uint32_t v;
            memcpy(&v, p + 4 * k, 4);
            d[k * GCN_WAVE_LANES + l] = v;
        }
    } else if (n == 2) {
        uint16_t v;
        memcpy(&v, p, 2);
        d[l] = sext ? (uint32_t)(int32_t)(int16_t)v : v;
    } else {
        d[l] = sext ? (uint32_t)(int32_t)(int8_t)p[0] : p[0];
    }
    (void)w;
}
static inline void get_lane(const uint32_t *s, unsigned l, uint8_t *p, unsigned n)
{
    if (n >= 4) {
        for (unsigned k = 0; k < n / 4; k++) memcpy(p + 4 * k, &s[k * GCN_WAVE_LANES + l], 4);
    } else {
        uint32_t v = s[l];
        memcpy(p, &v, n);
    }
}

typedef gcn_atomic_op atom_op;

/* One atomic on host memory; returns the pre-op value (ISA manual 12.x ATOMIC_*).
 * Operations the host has as one instruction use it; the others run
 * gcn_atomic_apply (shared with the replay) in a compare-and-swap loop. */
static uint64_t atomic_rmw(void *p, int is64, atom_op op, uint64_t src, uint64_t cmp)
{
    if (is64) {
        uint64_t *q = p, old = __atomic_load_n(q, __ATOMIC_RELAXED), nv;
        switch (op) {
        case GCN_AT_SWAP: return __atomic_exchange_n(q, src, __ATOMIC_SEQ_CST);
        case GCN_AT_ADD: return __atomic_fetch_add(q, src, __ATOMIC_SEQ_CST);
        case GCN_AT_SUB: return __atomic_fetch_sub(q, src, __ATOMIC_SEQ_CST);
        case GCN_AT_AND: return __atomic_fetch_and(q, src, __ATOMIC_SEQ_CST);
        case GCN_AT_OR: return __atomic_fetch_or(q, src, __ATOMIC_SEQ_CST);
        case GCN_AT_XOR: return __atomic_fetch_xor(q, src, __ATOMIC_SEQ_CST);
        default: break;
        }
        do {
            nv = gcn_atomic_apply(op, 8, old, src, cmp);
            if (nv == old)
                return old; /* nothing to write (e.g. a failed cmpswap) */
        } while (!__atomic_compare_exchange_n(q, &old, nv, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
        return old;
    }
    uint32_t *q = p, s = (uint32_t)src, old = __atomic_load_n(q, __ATOMIC_RELAXED), nv;
    switch (op) {
    case GCN_AT_SWAP: return __atomic_exchange_n(q, s, __ATOMIC_SEQ_CST);
    case GCN_AT_ADD: return __atomic_fetch_add(q, s, __ATOMIC_SEQ_CST);
    case GCN_AT_SUB: return __atomic_fetch_sub(q, s, __ATOMIC_SEQ_CST);
    case GCN_AT_AND: return __atomic_fetch_and(q, s, __ATOMIC_SEQ_CST);
    case GCN_AT_OR: return __atomic_fetch_or(q, s, __ATOMIC_SEQ_CST);
    case GCN_AT_XOR: return __atomic_fetch_xor(q, s, __ATOMIC_SEQ_CST);
    default: break;
    }
    do {
        nv = (uint32_t)gcn_atomic_apply(op, 4, old, src, cmp);
        if (nv == old)
            return old;
    } while (!__atomic_compare_exchange_n(q, &old, nv, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    return old;
}

/* Per-lane memory body shared by FLAT and MUBUF once the host pointer is known:
 * load / store / atomic of n bytes, registers from dst[0] / src[1]. */
/* Copies n bytes between guest memory at m and the buffer b (to_mem: b to m)
 * the way the GPU accesses memory: each naturally aligned 64-bit word of m in
 * one 64-bit access, each other naturally aligned dword in one 32-bit access,
 * the rest byte by byte. So a concurrent access of another wave to the same
 * word sees the old or the new value, never a mix: single-copy atomicity of
 * aligned accesses up to 64 bits, which the HSA memory model (and AMDGPUUsage's
 * "Memory Model" section, on which GFX8 code generation relies) assumes of the
 * hardware. Relaxed atomics: plain moves on x86-64, and no C data race for
 * ThreadSanitizer. */
static inline void mem_copy_sca(uint8_t *m, uint8_t *b, unsigned n, int to_mem)
{
    unsigned i = 0;
    while (i < n) {
        uintptr_t a = (uintptr_t)(m + i);
        if (!(a & 7) && n - i >= 8) {
            uint64_t v;
            if (to_mem) {
                memcpy(&v, b + i, 8);
                __atomic_store_n((uint64_t *)(void *)(m + i), v, __ATOMIC_RELAXED);
            } else {
                v = __atomic_load_n((const uint64_t *)(const void *)(m + i), __ATOMIC_RELAXED);
                memcpy(b + i, &v, 8);
            }
            i += 8;
        } else if (!(a & 3) && n - i >= 4) {
            uint32_t v;
            if (to_mem) {
                memcpy(&v, b + i, 4);
                __atomic_store_n((uint32_t *)(void *)(m + i), v, __ATOMIC_RELAXED);
            } else {
                v = __atomic_load_n((const uint32_t *)(const void *)(m + i), __ATOMIC_RELAXED);
                memcpy(b + i, &v, 4);
            }
            i += 4;
        } else {
            if (to_mem) m[i] = b[i];
            else b[i] = m[i];
            i++;
        }
    }
}

static void lane_access(gcn_wave *w, const gcn_insn *in, unsigned l, uint8_t *p, int sext, int atomic, atom_op aop,
                        memrec *mr)
{
    unsigned n = in->mem_bytes;
    if (atomic) {
        int is64 = n == 8;
        uint32_t *s = vreg(w, in, in->src[1], is64 ? (aop == GCN_AT_CMPSWAP ? 4 : 2) : (aop == GCN_AT_CMPSWAP ? 2 : 1));
        uint64_t src = s[l] | (is64 ? (uint64_t)s[GCN_WAVE_LANES + l] << 32 : 0), cmp = 0;
        if (aop == GCN_AT_CMPSWAP)
            cmp = is64 ? (s[2 * GCN_WAVE_LANES + l] | (uint64_t)s[3 * GCN_WAVE_LANES + l] << 32) : s[GCN_WAVE_LANES + l];
        uint64_t old = atomic_rmw(p, is64, aop, src, cmp);
        if (in->dst[0] != GCN_OPD_NONE) {
            uint32_t *d = vreg(w, in, in->dst[0], is64 ? 2 : 1);
            d[l] = (uint32_t)old;
            if (is64) d[GCN_WAVE_LANES + l] = (uint32_t)(old >> 32);
        }
        if (mr) {
            memcpy(mr->load + mr->nl, &old, n);
            mr->nl += n;
            memcpy(mr->store + mr->ns, &src, n);
            mr->ns += n;
            if (aop == GCN_AT_CMPSWAP) {
                memcpy(mr->store + mr->ns, &cmp, n);
                mr->ns += n;
            }
        }
    } else if (in->flags & GCN_IF_STORE) {
        uint32_t *s = vreg(w, in, in->src[1], (n + 3) / 4);
        uint8_t tmp[16];
        get_lane(s, l, tmp, n);
        mem_copy_sca(p, tmp, n, 1);
        if (mr) {
            memcpy(mr->store + mr->ns, tmp, n);
            mr->ns += n;
        }
    } else {
        uint32_t *d = vreg(w, in, in->dst[0], (n + 3) / 4);
        uint8_t tmp[16];
        mem_copy_sca(p, tmp, n, 0);
        put_lane(w, d, l, tmp, n, sext);
        if (mr) {
            memcpy(mr->load + mr->nl, tmp, n);
            mr->nl += n;
        }
    }
}

/* Load/store of one lane whose bytes are in separate pieces of `chunk` bytes
 * (swizzled private memory; NULL piece = out of range: reads 0, write dropped). */
static void lane_access_split(gcn_wave *w, const gcn_insn *in, unsigned l, uint8_t *const *ptrs, unsigned chunk,
                              int sext, memrec *mr)
{
    unsigned n = in->mem_bytes;
    uint8_t buf[16] = {0};
    if (in->flags & GCN_IF_STORE) {
        uint32_t *s = vreg(w, in, in->src[1], (n + 3) / 4);
        get_lane(s, l, buf, n);
        for (unsigned k = 0; k < n; k += chunk)
            if (ptrs[k / chunk]) memcpy(ptrs[k / chunk], buf + k, chunk);
        if (mr) { memcpy(mr->store + mr->ns, buf, n); mr->ns += n; }
    } else {
        for (unsigned k = 0; k < n; k += chunk)
            if (ptrs[k / chunk]) memcpy(buf + k, ptrs[k / chunk], chunk);
        uint32_t *d = vreg(w, in, in->dst[0], (n + 3) / 4);
        put_lane(w, d, l, buf, n, sext);
        if (mr) { memcpy(mr->load + mr->nl, buf, n); mr->nl += n; }
    }
}

/* Trace flags of a memory instruction. A compare-and-swap (the AOP column of
 * gcn3.def) records source then compare value per lane in store data and
 * must say so with GCN_MO_CMPSWAP (docs/trace-format.md), or the writer keeps
 * only half of the store data and the replay swaps without its compare value. */
static unsigned rec_flags(const gcn_insn *in)
{
    unsigned f = 0;
    if (in->flags & GCN_IF_ATOMIC) {
        f |= GCN_MO_ATOMIC | GCN_MO_LOAD | GCN_MO_STORE;
        if (gcn_op_infos[in->op].aop == GCN_AT_CMPSWAP) f |= GCN_MO_CMPSWAP;
        if (in->fmt != GCN_FMT_DS && !(in->flags & GCN_IF_ATOMIC_RTN)) f |= GCN_MO_NORET;
    }
    else if (in->flags & GCN_IF_STORE) f |= GCN_MO_STORE;
    else f |= GCN_MO_LOAD | ((in->mods & GCN_M_GLC) ? GCN_MO_GLC : 0);
    return f;
}

/* ---- FLAT ------------------------------------------------------------------------------ */

/* A translation the fast path used only as a range probe failed: undo the
 * fault it raised, the per-lane path reports the precise lane. */
static inline void probe_undo(gcn_wave *w)
{
    w->status = GCN_WAVE_RUNNING;
    w->err[0] = 0;
}

/* flat_fast, LDS and private apertures: the active lanes' host pointers (hp)
 * and trace addresses (ta), the host distance between a lane's dwords and
 * the record flags. 1, or 0 when the per-lane path must do it. */
static int flat_fast_aperture(gcn_wave *w, const gcn_insn *in, uint64_t ex, const uint32_t *a, unsigned n, int wr,
                              uint8_t **hp, uint64_t *ta, uintptr_t *kstride_out, unsigned *kind_out)
{
    const uint32_t *ahi = a + GCN_WAVE_LANES;
    unsigned first = (unsigned)__builtin_ctzll(ex);
    uint32_t hi0 = ahi[first];
    uintptr_t kstride = 4;
    unsigned kind_flags = 0;
    uint32_t diff = 0, mn = UINT32_MAX, mx = 0, bad = 0;
    unsigned lmn = first;
    LANES
    {
        uint32_t lo = a[l];
        diff |= ahi[l] ^ hi0;
        if (lo < mn) { mn = lo; lmn = l; }
        if (lo > mx) mx = lo;
        bad |= n <= 4 ? ((lo & 3u) + n > 4u) : ((lo & 3u) != 0);
    }
    if (diff || (uint64_t)mx + n > UINT32_MAX) return 0;
    gcn_flat_kind kind;
    uint64_t t0;
    if (hi0 == GCN_GROUP_APERTURE_HI) {
        uint8_t *p0 = gcn_mem_flat(w, (uint64_t)hi0 << 32 | mn, mx - mn + n, wr, lmn, in->pc, &kind, &t0);
        if (!p0) { probe_undo(w); return 0; }
        LANES { hp[l] = p0 + (a[l] - mn); ta[l] = a[l]; }
        kind_flags = GCN_MO_LDS;
    } else {
        if (bad) return 0;
        uint64_t t1;
        uint8_t *p0 = gcn_mem_flat(w, (uint64_t)hi0 << 32 | mn, 1, wr, lmn, in->pc, &kind, &t0);
        if (!p0) { probe_undo(w); return 0; }
        if (!gcn_mem_flat(w, (uint64_t)hi0 << 32 | (mx + n - 1), 1, wr, lmn, in->pc, &kind, &t1)) {
            probe_undo(w);
            return 0;
        }
        uintptr_t hb = (uintptr_t)p0 - (uintptr_t)(mn >> 2) * 256u - lmn * 4u - (mn & 3u);
        uint64_t tb = t0 - (uint64_t)(mn >> 2) * 256u - lmn * 4u - (mn & 3u);
        LANES
        {
            uint32_t lo = a[l];
            uint64_t o = (uint64_t)(lo >> 2) * 256u + l * 4u + (lo & 3u);
            hp[l] = (uint8_t *)(hb + (uintptr_t)o);
            ta[l] = tb + o;
        }
        kstride = 256;
        /* every lane at the same private offset: lane l's dword at tb + mn + 4l */
        kind_flags = GCN_MO_SCRATCH | (mn == mx ? GCN_MO_LINEAR4 : 0);
    }
    *kstride_out = kstride;
    *kind_out = kind_flags;
    return 1;
}

/* flat_fast, global memory: 2 when the access is done (a unit-stride block
 * or dwords copied directly), 1 with the active lanes' host pointers (hp) and
 * trace addresses (ta), 0 when the per-lane path must do it. */
static int flat_fast_global(gcn_wave *w, const gcn_insn *in, uint64_t ex, const uint32_t *a, unsigned n, int wr,
                            uint8_t **hp, uint64_t *ta)
{
    const uint32_t *ahi = a + GCN_WAVE_LANES;
    unsigned first = (unsigned)__builtin_ctzll(ex);
    uint32_t hi0 = ahi[first];
    /* common case: every lane in one 4 GiB window, whole access in one
     * allocation, dword granules: copy directly; when recording, the
     * VGPR is already the packed data of the 64 lanes */
    if (ex == ~0ull && n == 4 && a[0] <= UINT32_MAX - 4u * GCN_WAVE_LANES) {
        /* unit-stride dwords (lane l at a[0] + 4l): one 256-byte block */
        uint32_t nc = 0, a0 = a[0];
        for (unsigned l = 0; l < GCN_WAVE_LANES; l++) nc |= (a[l] - a0 - 4u * l) | (ahi[l] ^ hi0);
        if (!nc) {
            uint64_t ab = (uint64_t)hi0 << 32 | a0;
            uint8_t *p0 = gcn_mem_global(w, ab, 4u * GCN_WAVE_LANES, wr, first, in->pc);
            if (!p0) { probe_undo(w); return 0; }
            if (w->rec.ops) /* before the load: the destination may be the address VGPRs */
                for (unsigned l = 0; l < GCN_WAVE_LANES; l++) ta[l] = ab + 4u * l;
            uint32_t *r;
            if (wr) memcpy(p0, r = vreg(w, in, in->src[1], 1), 4u * GCN_WAVE_LANES);
            else memcpy(r = vreg(w, in, in->dst[0], 1), p0, 4u * GCN_WAVE_LANES);
            if (w->rec.ops)
                w->rec.ops->mem(w->rec.ctx, w->wave_in_wg, rec_flags(in) | GCN_MO_LINEAR4, 4, ex, ta, wr ? NULL : r,
                                wr ? r : NULL);
            return 2;
        }
    }
    uint32_t diff = 0, mnl = UINT32_MAX, mxl = 0;
    LANES
    {
        diff |= ahi[l] ^ hi0;
        mnl = a[l] < mnl ? a[l] : mnl;
        mxl = a[l] > mxl ? a[l] : mxl;
    }
    if (!diff && mxl - mnl <= UINT32_MAX - 16u) {
        uint64_t hb = (uint64_t)hi0 << 32;
        uint8_t *p0 = gcn_mem_global(w, hb | mnl, (mxl - mnl) + n, wr, first, in->pc);
        if (!p0) { probe_undo(w); return 0; }
        uintptr_t b = (uintptr_t)p0 - mnl; /* host address of offset 0 of the window */
        if (n == 4 && !w->rec.ops) {
            /* aligned dwords single-copy atomic (see below) */
            uintptr_t mis = b;
            LANES mis |= a[l];
            if (wr) {
                const uint32_t *s = vreg(w, in, in->src[1], 1);
                if (!(mis & 3)) {
                    LANES __atomic_store_n((uint32_t *)(b + a[l]), s[l], __ATOMIC_RELAXED);
                } else {
                    LANES memcpy((void *)(b + a[l]), &s[l], 4);
                }
            } else {
                uint32_t *d = vreg(w, in, in->dst[0], 1);
                if (!(mis & 3)) {
                    LANES d[l] = __atomic_load_n((const uint32_t *)(b + a[l]), __ATOMIC_RELAXED);
                } else {
                    LANES memcpy(&d[l], (const void *)(b + a[l]), 4);
                }
            }
            return 2;
        }
        LANES
        {
            hp[l] = (uint8_t *)(b + a[l]);
            ta[l] = hb | a[l];
        }
    } else {
        uint64_t mn = UINT64_MAX, mx = 0;
        unsigned lmn = first, ap = 0;
        LANES
        {
            uint64_t ad = a[l] | (uint64_t)ahi[l] << 32;
            ap |= ahi[l] == GCN_GROUP_APERTURE_HI || ahi[l] == GCN_PRIVATE_APERTURE_HI;
            if (ad < mn) { mn = ad; lmn = l; }
            if (ad > mx) mx = ad;
        }
        if (ap || mx - mn > UINT32_MAX - 64u || mx + n < mx) return 0;
        uint8_t *p0 = gcn_mem_global(w, mn, (uint32_t)(mx - mn) + n, wr, lmn, in->pc);
        if (!p0) { probe_undo(w); return 0; }
        LANES
        {
            uint64_t ad = a[l] | (uint64_t)ahi[l] << 32;
            hp[l] = p0 + (ad - mn);
            ta[l] = ad;
        }
    }
    return 1;
}

/* flat_fast's copy between the registers and the lanes' host bytes (hp;
 * kstride apart for each further dword of a lane), and the record. */
static int flat_fast_copy(gcn_wave *w, const gcn_insn *in, uint64_t ex, unsigned n, int wr, int sext,
                          uint8_t *const *hp, const uint64_t *ta, uintptr_t kstride, unsigned kind_flags)
{
    /* the copy, and for recording the packed data of the active lanes (lane
     * order, a lane's bytes in address order) */
    uint32_t rbuf[GCN_WAVE_LANES * 4]; /* 64 lanes x up to 16 bytes */
    const void *rdat = rbuf;
    uint32_t *r = wr ? vreg(w, in, in->src[1], (n + 3) / 4) : vreg(w, in, in->dst[0], (n + 3) / 4);
    if (n == 4) {
        /* naturally aligned dwords are single-copy atomic, as on the GPU:
         * another wave's concurrent access sees the old or the new value,
         * never a mix (relaxed atomics: plain moves on x86, and no C data
         * race for ThreadSanitizer when a program polls a flag) */
        uintptr_t mis = 0;
        LANES mis |= (uintptr_t)hp[l];
        if (!(mis & 3)) {
            if (wr) {
                LANES __atomic_store_n((uint32_t *)(void *)hp[l], r[l], __ATOMIC_RELAXED);
            } else {
                LANES r[l] = __atomic_load_n((const uint32_t *)(const void *)hp[l], __ATOMIC_RELAXED);
            }
        } else if (wr) {
            LANES memcpy(hp[l], &r[l], 4);
        } else {
            LANES memcpy(&r[l], hp[l], 4);
        }
        if (w->rec.ops) {
            if (ex == ~0ull) rdat = r;
            else {
                unsigned m = 0;
                LANES rbuf[m++] = r[l];
            }
        }
    } else if (n > 4 && kstride == 4) {
        /* a lane's dwords are contiguous: aligned 64-bit words single-copy atomic */
        unsigned nd = n / 4, m = 0;
        LANES
        {
            uint32_t *lane = &rbuf[m];
            if (wr)
                for (unsigned k = 0; k < nd; k++) lane[k] = r[k * GCN_WAVE_LANES + l];
            mem_copy_sca(hp[l], (uint8_t *)lane, n, wr);
            if (!wr)
                for (unsigned k = 0; k < nd; k++) r[k * GCN_WAVE_LANES + l] = lane[k];
            m += nd;
        }
    } else if (n > 4) {
        /* private memory (swizzled per dword, one wave's own): plain copies */
        unsigned nd = n / 4, m = 0;
        LANES
        {
            for (unsigned k = 0; k < nd; k++) {
                uint32_t *reg = &r[k * GCN_WAVE_LANES + l];
                if (wr) memcpy(hp[l] + k * kstride, reg, 4);
                else memcpy(reg, hp[l] + k * kstride, 4);
                rbuf[m + k] = *reg;
            }
            m += nd;
        }
    } else {
        uint8_t *rd = (uint8_t *)rbuf;
        size_t nb = 0;
        LANES
        {
            uint8_t tmp[4];
            if (wr) {
                uint32_t v = r[l];
                memcpy(tmp, &v, 4);
                memcpy(hp[l], tmp, n);
            } else {
                memcpy(tmp, hp[l], n);
                put_lane(w, r, l, tmp, n, sext);
            }
            memcpy(rd + nb, tmp, n);
            nb += n;
        }
    }
    if (w->rec.ops)
        w->rec.ops->mem(w->rec.ctx, w->wave_in_wg, rec_flags(in) | kind_flags, n, ex, ta, wr ? NULL : rdat,
                    wr ? rdat : NULL);
    return 1;
}


/* Fast path of a non-atomic FLAT access: every active lane is in one class
 * (global, LDS aperture or private aperture) and the whole range of the
 * instruction is validated with one or two translations instead of one per
 * lane. Global / LDS: one translation of [min, max + n) (exec returns a
 * pointer only when the whole range lies in one allocation / the LDS).
 * Private: the first and the last byte are translated; every other lane and
 * dword follows from the swizzle formula of gcn_wave.h (dword P/4 of lane L
 * at (P/4)*256 + L*4 + P%4 from the wave's slice), which exec implements.
 * Returns 1 when the instruction completed or faulted, 0 when the caller must
 * take the per-lane path (nothing has been changed then). */
static int flat_fast(gcn_wave *w, const gcn_insn *in, uint64_t ex, const uint32_t *a, unsigned n, int wr, int sext)
{
    uint8_t *hp[GCN_WAVE_LANES];
    uint64_t ta[GCN_WAVE_LANES];
    uintptr_t kstride = 4; /* host distance between consecutive dwords of one lane */
    unsigned kind_flags = 0;
    uint32_t hi0 = a[GCN_WAVE_LANES + __builtin_ctzll(ex)];
    if (hi0 == GCN_GROUP_APERTURE_HI || hi0 == GCN_PRIVATE_APERTURE_HI) {
        if (!flat_fast_aperture(w, in, ex, a, n, wr, hp, ta, &kstride, &kind_flags))
            return 0;
    } else {
        int r = flat_fast_global(w, in, ex, a, n, wr, hp, ta);
        if (r != 1)
            return r == 2;
    }
    return flat_fast_copy(w, in, ex, n, wr, sext, hp, ta, kstride, kind_flags);
}

static void flat_access(gcn_wave *w, const gcn_insn *in, int sext, int atomic, atom_op aop)
{
    EXEC_DECL;
    uint32_t *a = vreg(w, in, in->src[0], 2);
    unsigned n = in->mem_bytes;
    int wr = !!(in->flags & GCN_IF_STORE);
    if (!atomic && ex && a != dummy_lanes && flat_fast(w, in, ex, a, n, wr, sext))
        return;
    memrec *mr = NULL, mrs;
    if (w->rec.ops) { mr = &mrs; mr->nl = mr->ns = 0; }
    unsigned kind_flags = 0;
    LANES
    {
        uint64_t addr = a[l] | (uint64_t)a[GCN_WAVE_LANES + l] << 32, ta = addr;
        gcn_flat_kind kind = GCN_FLAT_GLOBAL;
        if (n > 4 && (uint32_t)(addr >> 32) == GCN_PRIVATE_APERTURE_HI) {
            /* private memory is swizzled per dword (gcn_wave.h): one translation per dword */
            if (atomic) { unimplemented(w, in, "on private memory"); return; }
            uint8_t *ptrs[4];
            for (unsigned k = 0; k < n / 4; k++) {
                uint64_t tk;
                ptrs[k] = gcn_mem_flat(w, addr + 4 * k, 4, wr, l, in->pc, &kind, k ? &tk : &ta);
                if (!ptrs[k]) return;
            }
            if (mr) { mr->addr[l] = ta; kind_flags = GCN_MO_SCRATCH; }
            lane_access_split(w, in, l, ptrs, 4, sext, mr);
            continue;
        }
        uint8_t *p = gcn_mem_flat(w, addr, n, wr, l, in->pc, &kind, &ta);
        if (!p) return;
        if (mr) {
            mr->addr[l] = ta;
            kind_flags = kind == GCN_FLAT_LDS ? GCN_MO_LDS : kind == GCN_FLAT_PRIVATE ? GCN_MO_SCRATCH : 0;
        }
        lane_access(w, in, l, p, sext, atomic, aop, mr);
    }
    if (mr)
        w->rec.ops->mem(w->rec.ctx, w->wave_in_wg, rec_flags(in) | kind_flags, n, ex, mr->addr, mr->nl ? mr->load : NULL,
                    mr->ns ? mr->store : NULL);
}
H(flat_load_ubyte) { flat_access(w, in, 0, 0, 0); }
H(flat_load_sbyte) { flat_access(w, in, 1, 0, 0); }
H(flat_load_ushort) { flat_access(w, in, 0, 0, 0); }
H(flat_load_sshort) { flat_access(w, in, 1, 0, 0); }
H(flat_load_dword) { flat_access(w, in, 0, 0, 0); }
H(flat_load_dwordx2) { flat_access(w, in, 0, 0, 0); }
H(flat_load_dwordx3) { flat_access(w, in, 0, 0, 0); }
H(flat_load_dwordx4) { flat_access(w, in, 0, 0, 0); }
H(flat_store_byte) { flat_access(w, in, 0, 0, 0); }
H(flat_store_short) { flat_access(w, in, 0, 0, 0); }
H(flat_store_dword) { flat_access(w, in, 0, 0, 0); }
H(flat_store_dwordx2) { flat_access(w, in, 0, 0, 0); }
H(flat_store_dwordx3) { flat_access(w, in, 0, 0, 0); }
H(flat_store_dwordx4) { flat_access(w, in, 0, 0, 0); }
#define FLAT_ATOMIC(sfx, AOP)                                                               \
    H(flat_atomic_##sfx) { flat_access(w, in, 0, 1, AOP); }                                 \
    H(flat_atomic_##sfx##_x2) { flat_access(w, in, 0, 1, AOP); }
FLAT_ATOMIC(swap, GCN_AT_SWAP)
FLAT_ATOMIC(cmpswap, GCN_AT_CMPSWAP)
FLAT_ATOMIC(add, GCN_AT_ADD)
FLAT_ATOMIC(sub, GCN_AT_SUB)
FLAT_ATOMIC(smin, GCN_AT_SMIN)
FLAT_ATOMIC(umin, GCN_AT_UMIN)
FLAT_ATOMIC(smax, GCN_AT_SMAX)
FLAT_ATOMIC(umax, GCN_AT_UMAX)
FLAT_ATOMIC(and, GCN_AT_AND)
FLAT_ATOMIC(or, GCN_AT_OR)
FLAT_ATOMIC(xor, GCN_AT_XOR)
FLAT_ATOMIC(inc, GCN_AT_INC)
FLAT_ATOMIC(dec, GCN_AT_DEC)

/* ---- MUBUF ----------------------------------------------------------------------------- */

/* Buffer address of one lane and byte offset `extra` (ISA manual Sec. 8.1.4):
 *   index  = (idxen ? vgpr_index : 0) + (add_tid ? lane : 0)
 *   offset = (offen ? vgpr_offset : 0) + inst_offset + extra
 *   swizzled: base + soffset + (index/istride * stride + offset/esize * esize) * istride
 *             + (index % istride) * esize + offset % esize
 *   linear:   base + soffset + index * stride + offset
 * Returns 0 if out of range (loads read 0, stores are dropped). */
static int buffer_addr(const uint32_t vs[4], uint32_t soff, uint32_t vidx, uint32_t voff, unsigned lane,
                       const gcn_insn *in, uint32_t extra, unsigned n, uint64_t *out)
{
    uint64_t base = vs[0] | (uint64_t)(vs[1] & 0xffff) << 32;
    uint32_t stride = (vs[1] >> 16) & 0x3fff, num = vs[2];
    int swz = (vs[1] >> 31) & 1, add_tid = (vs[3] >> 23) & 1;
    uint32_t esize = 2u << ((vs[3] >> 19) & 3), istride = 8u << ((vs[3] >> 21) & 3);
    uint64_t index = ((in->mods & GCN_M_IDXEN) ? vidx : 0) + (add_tid ? lane : 0);
    uint64_t offset = ((in->mods & GCN_M_OFFEN) ? voff : 0) + in->imm + extra;
    if (stride == 0 && !swz) {
        if (offset + n > num) return 0;
    } else if (index >= num && num != 0xffffffffu) {
        return 0;
    }
    if (swz) {
        *out = base + soff + (index / istride * stride + offset / esize * esize) * istride + (index % istride) * esize +
               offset % esize;
    } else {
        *out = base + soff + index * stride + offset;
    }
    return 1;
}

static void mubuf_access(gcn_wave *w, const gcn_insn *in, int sext, int atomic, atom_op aop)
{
    EXEC_DECL;
    if (in->mods & GCN_M_LDS) { unimplemented(w, in, "with lds=1"); return; }
    uint32_t vs[4];
    for (int i = 0; i < 4; i++) vs[i] = w->s[(in->src[2] + i) & 127];
    uint32_t soff = rs32(w, in, in->src[3]);
    unsigned n = in->mem_bytes, nv = !!(in->mods & GCN_M_IDXEN) + !!(in->mods & GCN_M_OFFEN);
    const uint32_t *va = nv ? vreg(w, in, in->src[0], nv) : NULL;
    const uint32_t *vidx = (in->mods & GCN_M_IDXEN) ? va : NULL;
    const uint32_t *voff = (in->mods & GCN_M_OFFEN) ? va + ((in->mods & GCN_M_IDXEN) ? GCN_WAVE_LANES : 0) : NULL;
    int wr = !!(in->flags & GCN_IF_STORE);
    int swz = (vs[1] >> 31) & 1;
    uint32_t esize = 2u << ((vs[3] >> 19) & 3);
    /* with swizzling, accesses wider than the element are split per element */
    unsigned chunk = (swz && n > esize) ? esize : n;
    memrec *mr = NULL, mrs;
    if (w->rec.ops) { mr = &mrs; mr->nl = mr->ns = 0; }
    uint64_t base = vs[0] | (uint64_t)(vs[1] & 0xffff) << 32;
    int scratch = (in->flags & GCN_IF_SCRATCH) || (w->scratch_base && base == w->scratch_base);
    /* Fast path for the private-segment V# of HIP code (swizzled, 4-byte elements,
     * index stride 64, add_tid, no VGPR address): lane l's dword is at
     * base + soffset + (offset / 4) * 256 + l * 4, one contiguous 256-byte row. */
    if (!atomic && n == 4 && swz && esize == 4 && ((vs[3] >> 21) & 3) == 3 && ((vs[3] >> 23) & 1) && nv == 0 &&
        (in->imm & 3) == 0 && ex && (vs[2] == 0xffffffffu || vs[2] >= 64)) {
        unsigned first = (unsigned)__builtin_ctzll(ex), last = 63u - (unsigned)__builtin_clzll(ex);
        uint64_t row = base + soff + (uint64_t)(in->imm / 4) * 256;
        uint8_t *p = gcn_mem_global(w, row + first * 4, (last - first) * 4 + 4, wr, first, in->pc);
        if (!p) return;
        uint32_t *q = (uint32_t *)(void *)(p - first * 4);
        if (wr) {
            const uint32_t *sv = vreg(w, in, in->src[1], 1);
            LANES memcpy(&q[l], &sv[l], 4);
        } else {
            uint32_t *d = vreg(w, in, in->dst[0], 1);
            LANES memcpy(&d[l], &q[l], 4);
        }
        if (mr) {
            /* private data the recorder drops (gcn_recorder.scratch_data) is not gathered */
            int keep = !scratch || w->rec.scratch_data;
            uint32_t *data = (uint32_t *)(void *)(wr ? mr->store : mr->load);
            if (ex == ~0ull) {
                for (unsigned l = 0; l < GCN_WAVE_LANES; l++) mr->addr[l] = row + l * 4;
                if (keep) memcpy(data, q, 4u * GCN_WAVE_LANES);
            } else {
                size_t k = 0;
                LANES
                {
                    mr->addr[l] = row + l * 4;
                    if (keep) memcpy(&data[k++], &q[l], 4);
                }
            }
            const void *ld = keep && !wr ? mr->load : NULL, *st = keep && wr ? mr->store : NULL;
            w->rec.ops->mem(w->rec.ctx, w->wave_in_wg, rec_flags(in) | (scratch ? GCN_MO_SCRATCH : 0) | GCN_MO_LINEAR4,
                            n, ex, mr->addr, ld, st);
        }
        return;
    }
    LANES
    {
        uint8_t buf[16] = {0};
        uint8_t *ptrs[16] = {NULL};
        int oob = 0;
        for (unsigned k = 0; k < n; k += chunk) {
            uint64_t addr;
            if (!buffer_addr(vs, soff, vidx ? vidx[l] : 0, voff ? voff[l] : 0, l, in, k, chunk, &addr)) {
                oob = 1;
                ptrs[k / chunk] = NULL;
                if (k == 0 && mr) mr->addr[l] = 0;
                continue;
            }
            if (k == 0 && mr) mr->addr[l] = addr;
            ptrs[k / chunk] = gcn_mem_global(w, addr, chunk, wr, l, in->pc);
            if (!ptrs[k / chunk]) return;
        }
        if (chunk == n && !oob) {
            lane_access(w, in, l, ptrs[0], sext, atomic, aop, mr);
            continue;
        }
        if (atomic) { if (!oob) lane_access(w, in, l, ptrs[0], sext, atomic, aop, mr); continue; }
        (void)buf;
        lane_access_split(w, in, l, ptrs, chunk, sext, mr);
    }
    if (mr)
        w->rec.ops->mem(w->rec.ctx, w->wave_in_wg, rec_flags(in) | (scratch ? GCN_MO_SCRATCH : 0), n, ex, mr->addr,
                    mr->nl ? mr->load : NULL, mr->ns ? mr->store : NULL);
}
H(buffer_load_ubyte) { mubuf_access(w, in, 0, 0, 0); }
H(buffer_load_sbyte) { mubuf_access(w, in, 1, 0, 0); }
H(buffer_load_ushort) { mubuf_access(w, in, 0, 0, 0); }
H(buffer_load_sshort) { mubuf_access(w, in, 1, 0, 0); }
H(buffer_load_dword) { mubuf_access(w, in, 0, 0, 0); }
H(buffer_load_dwordx2) { mubuf_access(w, in, 0, 0, 0); }
H(buffer_load_dwordx3) { mubuf_access(w, in, 0, 0, 0); }
H(buffer_load_dwordx4) { mubuf_access(w, in, 0, 0, 0); }
H(buffer_store_byte) { mubuf_access(w, in, 0, 0, 0); }
H(buffer_store_short) { mubuf_access(w, in, 0, 0, 0); }
H(buffer_store_dword) { mubuf_access(w, in, 0, 0, 0); }
H(buffer_store_dwordx2) { mubuf_access(w, in, 0, 0, 0); }
H(buffer_store_dwordx3) { mubuf_access(w, in, 0, 0, 0); }
H(buffer_store_dwordx4) { mubuf_access(w, in, 0, 0, 0); }
#define BUF_ATOMIC(sfx, AOP)                                                                \
    H(buffer_atomic_##sfx) { mubuf_access(w, in, 0, 1, AOP); }                              \
    H(buffer_atomic_##sfx##_x2) { mubuf_access(w, in, 0, 1, AOP); }
BUF_ATOMIC(swap, GCN_AT_SWAP)
BUF_ATOMIC(cmpswap, GCN_AT_CMPSWAP)
BUF_ATOMIC(add, GCN_AT_ADD)
BUF_ATOMIC(sub, GCN_AT_SUB)
BUF_ATOMIC(smin, GCN_AT_SMIN)
BUF_ATOMIC(umin, GCN_AT_UMIN)
BUF_ATOMIC(smax, GCN_AT_SMAX)
BUF_ATOMIC(umax, GCN_AT_UMAX)
BUF_ATOMIC(and, GCN_AT_AND)
BUF_ATOMIC(or, GCN_AT_OR)
BUF_ATOMIC(xor, GCN_AT_XOR)
BUF_ATOMIC(inc, GCN_AT_INC)
BUF_ATOMIC(dec, GCN_AT_DEC)
/* ---- MUBUF / MTBUF typed ("format") accesses ------------------------------------------- */

/* BUF_DATA_FORMAT (ISA manual Table 8.x; V# word3[18:15] for MUBUF *_format_*,
 * the instruction's dfmt for MTBUF): element bytes, components, and the bits
 * of each component from bit 0 up (names list components from the MSB, so
 * 10_11_11 is x:11 y:11 z:10, as Mesa's R11G11B10_FLOAT). */
typedef struct buf_dfmt { uint8_t bytes, ncomp, bits[4]; } buf_dfmt;
static const buf_dfmt buf_dfmts[16] = {
    [1] = {1, 1, {8}},          [2] = {2, 1, {16}},          [3] = {2, 2, {8, 8}},
    [4] = {4, 1, {32}},         [5] = {4, 2, {16, 16}},      [6] = {4, 3, {11, 11, 10}},
    [7] = {4, 3, {10, 11, 11}}, [8] = {4, 4, {2, 10, 10, 10}}, [9] = {4, 4, {10, 10, 10, 2}},
    [10] = {4, 4, {8, 8, 8, 8}}, [11] = {8, 2, {32, 32}},    [12] = {8, 4, {16, 16, 16, 16}},
    [13] = {12, 3, {32, 32, 32}}, [14] = {16, 4, {32, 32, 32, 32}},
};
enum { NF_UNORM = 0, NF_SNORM, NF_USCALED, NF_SSCALED, NF_UINT, NF_SINT, NF_SNORM_OGL, NF_FLOAT };

/* unsigned small float (5-bit exponent, m-bit mantissa, no sign: 11/10-bit
 * packed floats) <-> f32, through f16 (same exponent) */
static float ufloat_to_f32(uint32_t v, unsigned bits)
{
    unsigned m = bits - 5;
    return f16_to_f32((uint16_t)((v & ((1u << bits) - 1)) << (10 - m)));
}
static uint32_t f32_to_ufloat(float f, unsigned bits)
{
    if (isnan(f)) return ((1u << bits) - 1); /* all ones: NaN */
    if (!(f > 0)) return 0;
    unsigned m = bits - 5;
    uint32_t h = f32_to_f16(f) & 0x7fff, sh = 10 - m;
    if ((h & 0x7c00) == 0x7c00) return 0x1fu << m; /* inf */
    uint32_t r = (h + (1u << (sh - 1)) - 1 + ((h >> sh) & 1)) >> sh;   /* round to nearest even */
    return r > (0x1fu << m) ? 0x1fu << m : r;
}

/* component raw bits -> register value */
static uint32_t fmt_unpack(uint32_t r, unsigned b, unsigned nf)
{
    uint32_t mask = b == 32 ? ~0u : (1u << b) - 1;
    r &= mask;
    int64_t sx = b == 32 ? (int64_t)(int32_t)r : (int64_t)((r ^ (1u << (b - 1))) - (1u << (b - 1)));
    double umax = (double)mask, smax = (double)(mask >> 1);
    switch (nf) {
    case NF_UNORM: return b_of((float)(r / umax));
    case NF_SNORM: { double v = sx / smax; return b_of((float)(v < -1.0 ? -1.0 : v)); }
    case NF_USCALED: return b_of((float)r);
    case NF_SSCALED: return b_of((float)sx);
    case NF_UINT: return r;
    case NF_SINT: return (uint32_t)(int32_t)sx;
    case NF_SNORM_OGL: return b_of((float)((2.0 * sx + 1.0) / umax));
    default: /* float */
        if (b == 32) return r;
        if (b == 16) return b_of(f16_to_f32((uint16_t)r));
        if (b == 11 || b == 10) return b_of(ufloat_to_f32(r, b));
        return 0;
    }
}
/* register value -> component raw bits */
static uint32_t fmt_pack(uint32_t v, unsigned b, unsigned nf)
{
    uint32_t mask = b == 32 ? ~0u : (1u << b) - 1;
    double umax = (double)mask, smax = (double)(mask >> 1), f = f_of(v);
    switch (nf) {
    case NF_UNORM: f = isnan(f) ? 0 : f < 0 ? 0 : f > 1 ? 1 : f; return (uint32_t)rint(f * umax) & mask;
    case NF_SNORM: f = isnan(f) ? 0 : f < -1 ? -1 : f > 1 ? 1 : f; return (uint32_t)(int64_t)rint(f * smax) & mask;
    case NF_SNORM_OGL:
        f = isnan(f) ? 0 : f < -1 ? -1 : f > 1 ? 1 : f;
        return (uint32_t)(int64_t)floor((f * umax - 1.0) / 2.0 + 0.5) & mask;
    case NF_USCALED: return (uint32_t)(isnan(f) || f < 0 ? 0 : f > umax ? umax : f) & mask;
    case NF_SSCALED: return (uint32_t)(int64_t)(isnan(f) ? 0 : f < -smax - 1 ? -smax - 1 : f > smax ? smax : f) & mask;
    case NF_UINT: case NF_SINT: return v & mask;
    default:
        if (b == 32) return v;
        if (b == 16) return f32_to_f16(f_of(v));
        if (b == 11 || b == 10) return f32_to_ufloat(f_of(v), b);
        return 0;
    }
}

/* buffer_{load,store}_format_* and tbuffer_*: ncomp components (x, xy, xyz,
 * xyzw) converted from / to the data and number format; d16 forms hold each
 * component in the low 16 bits of its own VGPR (gfx803 has unpacked D16 VMEM;
 * float formats as f16). Loads apply the V#'s DST_SEL (0, 1, x, y, z, w);
 * components the format lacks read 0 (y, z) and 1 (w). Out-of-range lanes
 * read 0 and drop stores. */
static void buffer_format(gcn_wave *w, const gcn_insn *in, unsigned ncomp, int d16, int typed)
{
    EXEC_DECL;
    if (in->mods & GCN_M_LDS) { unimplemented(w, in, "with lds=1"); return; }
    uint32_t vs[4];
    for (int i = 0; i < 4; i++) vs[i] = w->s[(in->src[2] + i) & 127];
    unsigned dfmt = typed ? (in->imm2 & 0xf) : (vs[3] >> 15) & 0xf, nfmt = typed ? (in->imm2 >> 4) & 7 : (vs[3] >> 12) & 7;
    const buf_dfmt *df = &buf_dfmts[dfmt];
    if (!df->bytes) {
        wave_error(w, in, GCN_WAVE_ILLEGAL, "buffer data format %u is invalid", dfmt);
        return;
    }
    uint32_t soff = rs32(w, in, in->src[3]);
    unsigned nv = !!(in->mods & GCN_M_IDXEN) + !!(in->mods & GCN_M_OFFEN);
    const uint32_t *va = nv ? vreg(w, in, in->src[0], nv) : NULL;
    const uint32_t *vidx = (in->mods & GCN_M_IDXEN) ? va : NULL;
    const uint32_t *voff = (in->mods & GCN_M_OFFEN) ? va + ((in->mods & GCN_M_IDXEN) ? GCN_WAVE_LANES : 0) : NULL;
    int wr = !!(in->flags & GCN_IF_STORE);
    uint32_t *r = wr ? vreg(w, in, in->src[1], ncomp) : vreg(w, in, in->dst[0], ncomp);
    if (w->status != GCN_WAVE_RUNNING) return;
    int isfloat = nfmt != NF_UINT && nfmt != NF_SINT;
    unsigned eb = df->bytes, swz = (vs[1] >> 31) & 1, esize = 2u << ((vs[3] >> 19) & 3);
    unsigned chunk = (swz && eb > esize) ? esize : eb;
    memrec *mr = NULL, mrs;
    if (w->rec.ops) { mr = &mrs; mr->nl = mr->ns = 0; }
    LANES
    {
        uint8_t buf[16] = {0};
        uint8_t *ptrs[16] = {NULL};
        int oob = 0;
        for (unsigned k = 0; k < eb; k += chunk) {
            uint64_t addr;
            if (!buffer_addr(vs, soff, vidx ? vidx[l] : 0, voff ? voff[l] : 0, l, in, k, chunk, &addr)) {
                oob = 1;
                if (k == 0 && mr) mr->addr[l] = 0;
                continue;
            }
            if (k == 0 && mr) mr->addr[l] = addr;
            ptrs[k / chunk] = gcn_mem_global(w, addr, chunk, wr, l, in->pc);
            if (!ptrs[k / chunk]) return;
        }
        /* components of the element, as raw bits */
        uint32_t raw[4] = {0};
        if (wr) {
            for (unsigned c = 0; c < df->ncomp && c < ncomp; c++) {
                uint32_t v = r[c * GCN_WAVE_LANES + l];
                if (d16) /* d16: f16 for the float-valued formats, 16-bit integers otherwise */
                    v = isfloat ? b_of(f16_to_f32((uint16_t)v))
                        : nfmt == NF_SINT ? (uint32_t)(int32_t)(int16_t)v : (v & 0xffff);
                raw[c] = fmt_pack(v, df->bits[c], nfmt);
            }
            /* components the instruction does not write keep their memory value */
            if (ncomp < df->ncomp) {
                for (unsigned k = 0; k < eb; k += chunk)
                    if (ptrs[k / chunk]) memcpy(buf + k, ptrs[k / chunk], chunk);
            }
            if (df->bits[0] >= 8 && df->bits[0] % 8 == 0 && (df->ncomp == 1 || df->bits[1] == df->bits[0])) {
                unsigned cb = df->bits[0] / 8;
                for (unsigned c = 0; c < df->ncomp && c < ncomp; c++) memcpy(buf + c * cb, &raw[c], cb);
            } else { /* packed 32-bit element */
                uint32_t e, sh = 0;
                memcpy(&e, buf, 4);
                for (unsigned c = 0; c < df->ncomp; c++) {
                    uint32_t m = ((1u << df->bits[c]) - 1) << sh;
                    if (c < ncomp) e = (e & ~m) | ((raw[c] << sh) & m);
                    sh += df->bits[c];
                }
                memcpy(buf, &e, 4);
            }
            if (!oob)
                for (unsigned k = 0; k < eb; k += chunk)
                    if (ptrs[k / chunk]) memcpy(ptrs[k / chunk], buf + k, chunk);
            if (mr) { memcpy(mr->store + mr->ns, buf, eb); mr->ns += eb; }
        } else {
            for (unsigned k = 0; k < eb; k += chunk)
                if (ptrs[k / chunk] && !oob) memcpy(buf + k, ptrs[k / chunk], chunk);
            if (mr) { memcpy(mr->load + mr->nl, buf, eb); mr->nl += eb; }
            if (df->bits[0] >= 8 && df->bits[0] % 8 == 0 && (df->ncomp == 1 || df->bits[1] == df->bits[0])) {
                unsigned cb = df->bits[0] / 8;
                for (unsigned c = 0; c < df->ncomp; c++) memcpy(&raw[c], buf + c * cb, cb);
            } else {
                uint32_t e, sh = 0;
                memcpy(&e, buf, 4);
                for (unsigned c = 0; c < df->ncomp; c++) {
                    raw[c] = (e >> sh) & ((1u << df->bits[c]) - 1);
                    sh += df->bits[c];
                }
            }
            uint32_t one = isfloat ? 0x3f800000u : 1u, val[4];
            for (unsigned c = 0; c < 4; c++)
                val[c] = c < df->ncomp ? fmt_unpack(raw[c], df->bits[c], nfmt) : c == 3 ? one : 0;
            if (oob) val[0] = val[1] = val[2] = val[3] = 0;
            for (unsigned c = 0; c < ncomp; c++) {
                unsigned sel = (vs[3] >> (3 * c)) & 7;
                uint32_t v = sel >= 4 ? val[sel - 4] : sel == 1 ? one : 0;
                if (oob) v = 0;
                if (d16) v = isfloat ? f32_to_f16(f_of(v)) : (v & 0xffff);
                r[c * GCN_WAVE_LANES + l] = v;
            }
        }
    }
    if (mr)
        w->rec.ops->mem(w->rec.ctx, w->wave_in_wg, rec_flags(in), eb, ex, mr->addr, mr->nl ? mr->load : NULL,
                    mr->ns ? mr->store : NULL);
}
#define BUF_FORMAT(pfx, typed)                                                              \
    H(pfx##_load_format_x) { buffer_format(w, in, 1, 0, typed); }                           \
    H(pfx##_load_format_xy) { buffer_format(w, in, 2, 0, typed); }                          \
    H(pfx##_load_format_xyz) { buffer_format(w, in, 3, 0, typed); }                         \
    H(pfx##_load_format_xyzw) { buffer_format(w, in, 4, 0, typed); }                        \
    H(pfx##_store_format_x) { buffer_format(w, in, 1, 0, typed); }                          \
    H(pfx##_store_format_xy) { buffer_format(w, in, 2, 0, typed); }                         \
    H(pfx##_store_format_xyz) { buffer_format(w, in, 3, 0, typed); }                        \
    H(pfx##_store_format_xyzw) { buffer_format(w, in, 4, 0, typed); }                       \
    H(pfx##_load_format_d16_x) { buffer_format(w, in, 1, 1, typed); }                       \
    H(pfx##_load_format_d16_xy) { buffer_format(w, in, 2, 1, typed); }                      \
    H(pfx##_load_format_d16_xyz) { buffer_format(w, in, 3, 1, typed); }                     \
    H(pfx##_load_format_d16_xyzw) { buffer_format(w, in, 4, 1, typed); }                    \
    H(pfx##_store_format_d16_x) { buffer_format(w, in, 1, 1, typed); }                      \
    H(pfx##_store_format_d16_xy) { buffer_format(w, in, 2, 1, typed); }                     \
    H(pfx##_store_format_d16_xyz) { buffer_format(w, in, 3, 1, typed); }                    \
    H(pfx##_store_format_d16_xyzw) { buffer_format(w, in, 4, 1, typed); }
BUF_FORMAT(buffer, 0)
BUF_FORMAT(tbuffer, 1)

H(buffer_wbinvl1) {}     /* functional memory is coherent: only the timing model cares (MEM_FENCE) */
H(buffer_wbinvl1_vol) {}

/* ---- DS (LDS) --------------------------------------------------------------------------- */

/* LDS addresses are 32 bits (a computed negative base wraps, as Rodinia nw
 * relies on) and an access outside the workgroup's allocation is clamped as
 * the hardware does, not a fault: reads return 0, writes are dropped (GCN3
 * ISA manual Sec. 9.3, LDS range check against M0 and the allocation). The
 * returned pointer then is a zeroed per-thread sink. */
static inline uint64_t lds_addr(uint64_t a) { return a & 0xffffffffu; }
static uint8_t *lds_ptr(gcn_wave *w, const gcn_insn *in, uint64_t a, unsigned n, int wr, unsigned l)
{
    (void)in, (void)wr, (void)l;
    a = lds_addr(a);
    if (a + n > w->lds_size) {
        static _Thread_local uint8_t sink[16];
        memset(sink, 0, sizeof sink);
        return n <= sizeof sink ? sink : NULL;
    }
    return w->lds + a;
}

/* kinds of DS instruction bodies */
enum { DS_READ, DS_WRITE, DS_READ2, DS_WRITE2, DS_ATOM };

static void ds_access(gcn_wave *w, const gcn_insn *in, int kind, unsigned esz, int sext, unsigned st64, atom_op aop,
                      int rtn)
{
    EXEC_DECL;
    if (in->flags & GCN_IF_GDS) { unimplemented(w, in, "with gds=1"); return; }
    uint32_t *a = vreg(w, in, in->src[0], 1);
    memrec *mr = NULL, mrs;
    if (w->rec.ops) { mr = &mrs; mr->nl = mr->ns = 0; }
    unsigned ew = (esz + 3) / 4;
    uint32_t *d0 = in->src[1] != GCN_OPD_NONE ? vreg(w, in, in->src[1], ew) : NULL;
    uint32_t *d1 = in->src[2] != GCN_OPD_NONE ? vreg(w, in, in->src[2], ew) : NULL;
    uint32_t *dst = in->dst[0] != GCN_OPD_NONE ? vreg(w, in, in->dst[0], kind == DS_READ2 ? 2 * ew : ew) : NULL;
    if (w->status != GCN_WAVE_RUNNING) return;
    unsigned o0 = in->imm & 0xff, o1 = (in->imm >> 8) & 0xff, scale = esz * (st64 ? 64 : 1);
    if (!mr && ex && esz == 4 && (kind == DS_READ || kind == DS_WRITE)) {
        /* fast path: one bounds check of the highest address for the whole
         * instruction; lanes in order as below (same result for overlaps) */
        uint32_t off = in->imm & 0xffff, mx = 0;
        LANES mx = a[l] > mx ? a[l] : mx;
        if ((uint64_t)mx + off + 4 <= w->lds_size) {
            uint8_t *base = w->lds + off;
            if (kind == DS_READ) {
                LANES memcpy(&dst[l], base + a[l], 4);
            } else {
                LANES memcpy(base + a[l], &d0[l], 4);
            }
            return;
        }
    }
    LANES
    {
        uint8_t tmp[16];
        if (kind == DS_READ2 || kind == DS_WRITE2) {
            uint64_t ad[2] = {lds_addr((uint64_t)a[l] + o0 * scale), lds_addr((uint64_t)a[l] + o1 * scale)};
            if (mr) mr->addr[l] = ad[0];
            for (int k = 0; k < 2; k++) {
                uint8_t *p = lds_ptr(w, in, ad[k], esz, kind == DS_WRITE2, l);
                if (!p) return;
                if (kind == DS_READ2) {
                    memcpy(tmp, p, esz);
                    put_lane(w, dst + (size_t)k * ew * GCN_WAVE_LANES, l, tmp, esz, 0);
                    if (mr) { memcpy(mr->load + mr->nl, tmp, esz); mr->nl += esz; }
                } else {
                    get_lane(k ? d1 : d0, l, tmp, esz);
                    memcpy(p, tmp, esz);
                    if (mr) { memcpy(mr->store + mr->ns, tmp, esz); mr->ns += esz; }
                }
            }
            continue;
        }
        uint64_t ad = lds_addr((uint64_t)a[l] + (in->imm & 0xffff));
        if (mr) mr->addr[l] = ad;
        uint8_t *p = lds_ptr(w, in, ad, esz, kind != DS_READ, l);
        if (!p) return;
        if (kind == DS_READ) {
            memcpy(tmp, p, esz);
            put_lane(w, dst, l, tmp, esz, sext);
            if (mr) { memcpy(mr->load + mr->nl, tmp, esz); mr->nl += esz; }
        } else if (kind == DS_WRITE) {
            get_lane(d0, l, tmp, esz);
            memcpy(p, tmp, esz);
            if (mr) { memcpy(mr->store + mr->ns, tmp, esz); mr->ns += esz; }
        } else {
            int is64 = esz == 8;
            uint64_t src = d0[l] | (is64 ? (uint64_t)d0[GCN_WAVE_LANES + l] << 32 : 0), cmp = 0;
            if (aop == GCN_AT_CMPSWAP) {
                /* ds_cmpst: data0 = compare, data1 = new value (ISA manual 12.13) */
                cmp = src;
                src = d1[l] | (is64 ? (uint64_t)d1[GCN_WAVE_LANES + l] << 32 : 0);
            }
            uint64_t old = atomic_rmw(p, is64, aop, src, cmp);
            if (rtn && dst) {
                dst[l] = (uint32_t)old;
                if (is64) dst[GCN_WAVE_LANES + l] = (uint32_t)(old >> 32);
            }
            if (mr) {
                memcpy(mr->load + mr->nl, &old, esz);
                mr->nl += esz;
                memcpy(mr->store + mr->ns, &src, esz);
                mr->ns += esz;
                if (aop == GCN_AT_CMPSWAP) { memcpy(mr->store + mr->ns, &cmp, esz); mr->ns += esz; }
            }
        }
    }
    if (mr)
        w->rec.ops->mem(w->rec.ctx, w->wave_in_wg, rec_flags(in) | GCN_MO_LDS, in->mem_bytes, ex, mr->addr,
                    mr->nl ? mr->load : NULL, mr->ns ? mr->store : NULL);
}
H(ds_read_b32) { ds_access(w, in, DS_READ, 4, 0, 0, 0, 0); }
H(ds_read_b64) { ds_access(w, in, DS_READ, 8, 0, 0, 0, 0); }
H(ds_read_b96) { ds_access(w, in, DS_READ, 12, 0, 0, 0, 0); }
H(ds_read_b128) { ds_access(w, in, DS_READ, 16, 0, 0, 0, 0); }
H(ds_read_u8) { ds_access(w, in, DS_READ, 1, 0, 0, 0, 0); }
H(ds_read_i8) { ds_access(w, in, DS_READ, 1, 1, 0, 0, 0); }
H(ds_read_u16) { ds_access(w, in, DS_READ, 2, 0, 0, 0, 0); }
H(ds_read_i16) { ds_access(w, in, DS_READ, 2, 1, 0, 0, 0); }
H(ds_read2_b32) { ds_access(w, in, DS_READ2, 4, 0, 0, 0, 0); }
H(ds_read2_b64) { ds_access(w, in, DS_READ2, 8, 0, 0, 0, 0); }
H(ds_read2st64_b32) { ds_access(w, in, DS_READ2, 4, 0, 1, 0, 0); }
H(ds_read2st64_b64) { ds_access(w, in, DS_READ2, 8, 0, 1, 0, 0); }
H(ds_write_b8) { ds_access(w, in, DS_WRITE, 1, 0, 0, 0, 0); }
H(ds_write_b16) { ds_access(w, in, DS_WRITE, 2, 0, 0, 0, 0); }
H(ds_write_b32) { ds_access(w, in, DS_WRITE, 4, 0, 0, 0, 0); }
H(ds_write_b64) { ds_access(w, in, DS_WRITE, 8, 0, 0, 0, 0); }
H(ds_write_b96) { ds_access(w, in, DS_WRITE, 12, 0, 0, 0, 0); }
H(ds_write_b128) { ds_access(w, in, DS_WRITE, 16, 0, 0, 0, 0); }
H(ds_write2_b32) { ds_access(w, in, DS_WRITE2, 4, 0, 0, 0, 0); }
H(ds_write2_b64) { ds_access(w, in, DS_WRITE2, 8, 0, 0, 0, 0); }
H(ds_write2st64_b32) { ds_access(w, in, DS_WRITE2, 4, 0, 1, 0, 0); }
H(ds_write2st64_b64) { ds_access(w, in, DS_WRITE2, 8, 0, 1, 0, 0); }
#define DS_ATOMS(nm, AOP)                                                                   \
    H(ds_##nm##_u32) { ds_access(w, in, DS_ATOM, 4, 0, 0, AOP, 0); }                        \
    H(ds_##nm##_rtn_u32) { ds_access(w, in, DS_ATOM, 4, 0, 0, AOP, 1); }                    \
    H(ds_##nm##_u64) { ds_access(w, in, DS_ATOM, 8, 0, 0, AOP, 0); }                        \
    H(ds_##nm##_rtn_u64) { ds_access(w, in, DS_ATOM, 8, 0, 0, AOP, 1); }
#define DS_ATOMS_T(nm, t32, t64, AOP)                                                       \
    H(ds_##nm##_##t32) { ds_access(w, in, DS_ATOM, 4, 0, 0, AOP, 0); }                      \
    H(ds_##nm##_rtn_##t32) { ds_access(w, in, DS_ATOM, 4, 0, 0, AOP, 1); }                  \
    H(ds_##nm##_##t64) { ds_access(w, in, DS_ATOM, 8, 0, 0, AOP, 0); }                      \
    H(ds_##nm##_rtn_##t64) { ds_access(w, in, DS_ATOM, 8, 0, 0, AOP, 1); }
DS_ATOMS(add, GCN_AT_ADD)
DS_ATOMS(sub, GCN_AT_SUB)
DS_ATOMS(rsub, GCN_AT_RSUB)
DS_ATOMS(inc, GCN_AT_INC)
DS_ATOMS(dec, GCN_AT_DEC)
DS_ATOMS(min, GCN_AT_UMIN)
DS_ATOMS(max, GCN_AT_UMAX)
DS_ATOMS_T(min, i32, i64, GCN_AT_SMIN)
DS_ATOMS_T(max, i32, i64, GCN_AT_SMAX)
DS_ATOMS_T(and, b32, b64, GCN_AT_AND)
DS_ATOMS_T(or, b32, b64, GCN_AT_OR)
DS_ATOMS_T(xor, b32, b64, GCN_AT_XOR)
DS_ATOMS_T(cmpst, b32, b64, GCN_AT_CMPSWAP)
DS_ATOMS_T(min, f32, f64, GCN_AT_FMIN)
DS_ATOMS_T(max, f32, f64, GCN_AT_FMAX)
H(ds_add_f32) { ds_access(w, in, DS_ATOM, 4, 0, 0, GCN_AT_FADD, 0); }
H(ds_add_rtn_f32) { ds_access(w, in, DS_ATOM, 4, 0, 0, GCN_AT_FADD, 1); }
H(ds_wrxchg_rtn_b32) { ds_access(w, in, DS_ATOM, 4, 0, 0, GCN_AT_SWAP, 1); }
H(ds_wrxchg_rtn_b64) { ds_access(w, in, DS_ATOM, 8, 0, 0, GCN_AT_SWAP, 1); }
H(ds_nop) {}

/* Cross-lane permutes through the LDS crossbar; no LDS memory is touched.
 * bpermute: lane l reads lane (addr/4)%64 (0 from an inactive lane);
 * permute: lane l writes its data to lane (addr/4)%64. */
H(ds_bpermute_b32)
{
    EXEC_DECL;
    uint32_t *a = vreg(w, in, in->src[0], 1), *s = vreg(w, in, in->src[1], 1), *d = vreg(w, in, in->dst[0], 1);
    uint32_t tmp[GCN_WAVE_LANES];
    LANES
    {
        unsigned src = ((a[l] + (in->imm & 0xffff)) >> 2) & 63;
        tmp[l] = ((ex >> src) & 1) ? s[src] : 0;
    }
    LANES d[l] = tmp[l];
}
H(ds_permute_b32)
{
    EXEC_DECL;
    uint32_t *a = vreg(w, in, in->src[0], 1), *s = vreg(w, in, in->src[1], 1), *d = vreg(w, in, in->dst[0], 1);
    uint32_t tmp[GCN_WAVE_LANES] = {0};
    LANES tmp[((a[l] + (in->imm & 0xffff)) >> 2) & 63] = s[l];
    LANES d[l] = tmp[l];
}
H(ds_swizzle_b32)
{
    EXEC_DECL;
    uint32_t *s = vreg(w, in, in->src[0], 1), *d = vreg(w, in, in->dst[0], 1);
    uint32_t tmp[GCN_WAVE_LANES], off = in->imm & 0xffff;
    LANES
    {
        unsigned src;
        if (off & 0x8000) { /* quad permute */
            src = (l & ~3u) | ((off >> (2 * (l & 3))) & 3);
        } else { /* bit mode over 32-lane halves: and, or, xor masks */
            unsigned andm = off & 0x1f, orm = (off >> 5) & 0x1f, xorm = (off >> 10) & 0x1f;
            src = (l & 32) | ((((l & 31) & andm) | orm) ^ xorm);
        }
        tmp[l] = ((ex >> src) & 1) ? s[src] : 0;
    }
    LANES d[l] = tmp[l];
}

/* ---- DS: the remaining forms ------------------------------------------------------------ */

/* Read-modify-write of one LDS element by a DS op that is not a plain atomic;
 * the body computes the new value from the old one and the lane's data. */
enum { DSX_MSKOR, DSX_WRAP, DSX_CMPST_F, DSX_CONDXCHG };
static uint64_t dsx_new(int kind, unsigned esz, uint64_t old, uint64_t d0, uint64_t d1)
{
    switch (kind) {
    case DSX_MSKOR: return (old & ~d0) | d1;                  /* ISA manual 12.13 DS_MSKOR */
    case DSX_WRAP: return old >= d0 ? old - d0 : old + d1;     /* DS_WRAP_RTN_B32 */
    case DSX_CMPST_F:                                          /* float compare: -0 == +0, NaN never equal */
        if (esz == 4) return f_of((uint32_t)old) == f_of((uint32_t)d0) ? d1 : old;
        return d_of(old) == d_of(d0) ? d1 : old;
    default: { /* DSX_CONDXCHG: each half written with data[30:0] when its flag bit 31 is set */
        uint64_t r = old;
        if (d0 & 0x80000000ull) r = (r & ~0xffffffffull) | (d0 & 0x7fffffffull);
        if (d0 & 0x8000000000000000ull) r = (r & 0xffffffffull) | (d0 & 0x7fffffff00000000ull);
        return r;
    }
    }
}
static void ds_rmw_x(gcn_wave *w, const gcn_insn *in, int kind, unsigned esz, int rtn)
{
    EXEC_DECL;
    if (in->flags & GCN_IF_GDS) { unimplemented(w, in, "with gds=1 (GDS is not supported)"); return; }
    unsigned ew = esz / 4;
    uint32_t *a = vreg(w, in, in->src[0], 1);
    uint32_t *s0 = in->src[1] != GCN_OPD_NONE ? vreg(w, in, in->src[1], ew) : NULL;
    uint32_t *s1 = in->src[2] != GCN_OPD_NONE ? vreg(w, in, in->src[2], ew) : NULL;
    uint32_t *dst = rtn && in->dst[0] != GCN_OPD_NONE ? vreg(w, in, in->dst[0], ew) : NULL;
    if (w->status != GCN_WAVE_RUNNING || !s0) return;
    memrec *mr = NULL, mrs;
    if (w->rec.ops) { mr = &mrs; mr->nl = mr->ns = 0; }
    LANES
    {
        uint64_t ad = lds_addr((uint64_t)a[l] + (in->imm & 0xffff));
        uint8_t *p = lds_ptr(w, in, ad, esz, 1, l);
        if (!p) return;
        uint64_t old = 0, d0 = s0[l], d1 = s1 ? s1[l] : 0, nv;
        if (esz == 8) {
            d0 |= (uint64_t)s0[GCN_WAVE_LANES + l] << 32;
            if (s1) d1 |= (uint64_t)s1[GCN_WAVE_LANES + l] << 32;
        }
        memcpy(&old, p, esz);
        nv = dsx_new(kind, esz, old, d0, d1);
        memcpy(p, &nv, esz);
        if (dst) {
            dst[l] = (uint32_t)old;
            if (esz == 8) dst[GCN_WAVE_LANES + l] = (uint32_t)(old >> 32);
        }
        if (mr) {
            mr->addr[l] = ad;
            memcpy(mr->load + mr->nl, &old, esz);
            mr->nl += esz;
            memcpy(mr->store + mr->ns, &nv, esz);
            mr->ns += esz;
        }
    }
    if (mr)
        w->rec.ops->mem(w->rec.ctx, w->wave_in_wg, GCN_MO_ATOMIC | GCN_MO_LOAD | GCN_MO_STORE | GCN_MO_LDS, esz, ex, mr->addr,
                    mr->load, mr->store);
}
H(ds_mskor_b32) { ds_rmw_x(w, in, DSX_MSKOR, 4, 0); }
H(ds_mskor_rtn_b32) { ds_rmw_x(w, in, DSX_MSKOR, 4, 1); }
H(ds_mskor_b64) { ds_rmw_x(w, in, DSX_MSKOR, 8, 0); }
H(ds_mskor_rtn_b64) { ds_rmw_x(w, in, DSX_MSKOR, 8, 1); }
H(ds_wrap_rtn_b32) { ds_rmw_x(w, in, DSX_WRAP, 4, 1); }
H(ds_cmpst_f32) { ds_rmw_x(w, in, DSX_CMPST_F, 4, 0); }
H(ds_cmpst_rtn_f32) { ds_rmw_x(w, in, DSX_CMPST_F, 4, 1); }
H(ds_cmpst_f64) { ds_rmw_x(w, in, DSX_CMPST_F, 8, 0); }
H(ds_cmpst_rtn_f64) { ds_rmw_x(w, in, DSX_CMPST_F, 8, 1); }
H(ds_condxchg32_rtn_b64) { ds_rmw_x(w, in, DSX_CONDXCHG, 8, 1); }

/* DS_WRXCHG2(ST64)_RTN: two exchanges at addr + offset0/1 * esz (* 64 for
 * st64); the old values go to vdst[0:ew-1] and vdst[ew:2ew-1]. */
static void ds_wrxchg2(gcn_wave *w, const gcn_insn *in, unsigned esz, unsigned st64)
{
    EXEC_DECL;
    if (in->flags & GCN_IF_GDS) { unimplemented(w, in, "with gds=1 (GDS is not supported)"); return; }
    unsigned ew = esz / 4, scale = esz * (st64 ? 64 : 1);
    uint32_t *a = vreg(w, in, in->src[0], 1), *s[2] = {vreg(w, in, in->src[1], ew), vreg(w, in, in->src[2], ew)};
    uint32_t *dst = vreg(w, in, in->dst[0], 2 * ew);
    if (w->status != GCN_WAVE_RUNNING) return;
    memrec *mr = NULL, mrs;
    if (w->rec.ops) { mr = &mrs; mr->nl = mr->ns = 0; }
    LANES
    {
        for (unsigned k = 0; k < 2; k++) {
            uint64_t ad = lds_addr((uint64_t)a[l] + ((in->imm >> (8 * k)) & 0xff) * scale);
            uint8_t *p = lds_ptr(w, in, ad, esz, 1, l);
            if (!p) return;
            uint8_t old[8], nv[8];
            memcpy(old, p, esz);
            get_lane(s[k], l, nv, esz);
            memcpy(p, nv, esz);
            put_lane(w, dst + (size_t)k * ew * GCN_WAVE_LANES, l, old, esz, 0);
            if (mr) {
                if (k == 0) mr->addr[l] = ad;
                memcpy(mr->load + mr->nl, old, esz);
                mr->nl += esz;
                memcpy(mr->store + mr->ns, nv, esz);
                mr->ns += esz;
            }
        }
    }
    if (mr)
        w->rec.ops->mem(w->rec.ctx, w->wave_in_wg, GCN_MO_ATOMIC | GCN_MO_LOAD | GCN_MO_STORE | GCN_MO_LDS, 2 * esz, ex,
                    mr->addr, mr->load, mr->store);
}
H(ds_wrxchg2_rtn_b32) { ds_wrxchg2(w, in, 4, 0); }
H(ds_wrxchg2_rtn_b64) { ds_wrxchg2(w, in, 8, 0); }
H(ds_wrxchg2st64_rtn_b32) { ds_wrxchg2(w, in, 4, 1); }
H(ds_wrxchg2st64_rtn_b64) { ds_wrxchg2(w, in, 8, 1); }

/* *_SRC2 forms (ISA manual 12.13): A = vaddr,
 *   B = A + esz * (offset1[7] ? {A[31], A[31:17]} : {offset1[6], offset1[6:0], offset0})
 * (a signed 16-bit element stride), DS[A] = op(DS[A], DS[B]); nothing returned.
 * Lanes run in order, so a lane sees the results of lower lanes. */
static void ds_src2(gcn_wave *w, const gcn_insn *in, unsigned esz, atom_op aop)
{
    EXEC_DECL;
    if (in->flags & GCN_IF_GDS) { unimplemented(w, in, "with gds=1 (GDS is not supported)"); return; }
    uint32_t *a = vreg(w, in, in->src[0], 1);
    if (w->status != GCN_WAVE_RUNNING) return;
    uint32_t off = in->imm & 0xffff;
    memrec *mr = NULL, mrs;
    if (w->rec.ops) { mr = &mrs; mr->nl = mr->ns = 0; }
    LANES
    {
        uint32_t A = a[l];
        int16_t stride = (off & 0x8000) ? (int16_t)(uint16_t)(A >> 17 | (A >> 31) << 15)
                                        : (int16_t)(uint16_t)((off & 0x7fff) | ((off & 0x4000) << 1));
        if (off & 0x8000) A &= 0x1ffffu; /* the high bits carried the stride */
        uint64_t B = (uint64_t)A + (uint64_t)((int64_t)stride * (int64_t)esz);
        uint8_t *pa = lds_ptr(w, in, A, esz, 1, l), *pb = pa ? lds_ptr(w, in, B & 0xffffffffu, esz, 0, l) : NULL;
        if (!pa || !pb) return;
        uint64_t va = 0, vb = 0, nv;
        memcpy(&va, pa, esz);
        memcpy(&vb, pb, esz);
        nv = aop == GCN_AT_NONE ? vb : gcn_atomic_apply(aop, esz, va, vb, 0);
        memcpy(pa, &nv, esz);
        if (mr) {
            mr->addr[l] = A;
            memcpy(mr->load + mr->nl, &va, esz);
            mr->nl += esz;
            memcpy(mr->store + mr->ns, &nv, esz);
            mr->ns += esz;
        }
    }
    if (mr)
        w->rec.ops->mem(w->rec.ctx, w->wave_in_wg, GCN_MO_ATOMIC | GCN_MO_LOAD | GCN_MO_STORE | GCN_MO_LDS, esz, ex, mr->addr,
                    mr->load, mr->store);
}
#define DS_SRC2(nm, t32, t64, AOP)                                                          \
    H(ds_##nm##_src2_##t32) { ds_src2(w, in, 4, AOP); }                                     \
    H(ds_##nm##_src2_##t64) { ds_src2(w, in, 8, AOP); }
DS_SRC2(add, u32, u64, GCN_AT_ADD)
DS_SRC2(sub, u32, u64, GCN_AT_SUB)
DS_SRC2(rsub, u32, u64, GCN_AT_RSUB)
DS_SRC2(inc, u32, u64, GCN_AT_INC)
DS_SRC2(dec, u32, u64, GCN_AT_DEC)
DS_SRC2(min, i32, i64, GCN_AT_SMIN)
DS_SRC2(max, i32, i64, GCN_AT_SMAX)
DS_SRC2(min, u32, u64, GCN_AT_UMIN)
DS_SRC2(max, u32, u64, GCN_AT_UMAX)
DS_SRC2(and, b32, b64, GCN_AT_AND)
DS_SRC2(or, b32, b64, GCN_AT_OR)
DS_SRC2(xor, b32, b64, GCN_AT_XOR)
DS_SRC2(write, b32, b64, GCN_AT_NONE)
DS_SRC2(min, f32, f64, GCN_AT_FMIN)
DS_SRC2(max, f32, f64, GCN_AT_FMAX)
H(ds_add_src2_f32) { ds_src2(w, in, 4, GCN_AT_FADD); }

/* DS_APPEND / DS_CONSUME (ISA manual 9.x "Append/consume"): a 32-bit counter
 * in LDS at M0 + offset (no GDS here, so always the per-workgroup LDS
 * counter) is incremented / decremented by the number of active lanes; every
 * active lane receives the pre-op value. */
static void ds_counter(gcn_wave *w, const gcn_insn *in, int dir)
{
    EXEC_DECL;
    if (in->flags & GCN_IF_GDS) { unimplemented(w, in, "with gds=1 (GDS is not supported)"); return; }
    uint32_t *d = vreg(w, in, in->dst[0], 1);
    if (w->status != GCN_WAVE_RUNNING || !ex) return;
    uint64_t ad = (uint64_t)(w->s[GCN_SREG_M0] & 0xffff) + (in->imm & 0xffff);
    unsigned first = (unsigned)__builtin_ctzll(ex);
    uint8_t *p = lds_ptr(w, in, ad, 4, 1, first);
    if (!p) return;
    uint32_t old, cnt = (uint32_t)__builtin_popcountll(ex), nv;
    memcpy(&old, p, 4);
    nv = dir > 0 ? old + cnt : old - cnt;
    memcpy(p, &nv, 4);
    LANES d[l] = old;
    if (w->rec.ops) {
        uint64_t addr[GCN_WAVE_LANES] = {0};
        addr[first] = ad;
        w->rec.ops->mem(w->rec.ctx, w->wave_in_wg, GCN_MO_ATOMIC | GCN_MO_LOAD | GCN_MO_STORE | GCN_MO_LDS, 4, 1ull << first,
                    addr, &old, &nv);
    }
}
H(ds_append) { ds_counter(w, in, 1); }
H(ds_consume) { ds_counter(w, in, -1); }

/* ---- GDS / GWS (global data share, global wave sync) ---------------------------------------
 *
 * The GDS-only DS ops (gcn3.def GCN_IF_GDS: ds_gws_*, ds_ordered_count) use the
 * device-wide GDS memory and the GWS unit, which the emulator does not model,
 * so they stop the wave with a message naming them, except ds_gws_barrier:
 * ROCm 5.2 compiles a cooperative-groups grid sync (this_grid().sync(),
 * ROCm-Device-Libs ockl cg.cl __ockl_grid_sync) for gfx803 to
 *     s_barrier; [wave 0 of each workgroup] ds_gws_barrier vN gds; s_barrier
 * with vN = workgroups - 1 and GWS resource 0 (M0[21:16] = 0, offset 0).
 *
 * Rule implemented (LLVM AMDGPUUsage / DSInstructions.td: data0 of the first
 * active lane, in the ADDR field; the resource id is offset[5:0] + M0[21:16];
 * GCN3 ISA manual DS_GWS_BARRIER): the barrier of resource R completes when
 * data0 + 1 waves arrived at it; every arriving wave must name the same count
 * (ds_gws_init would set it; ROCm does not call it, so the count of the first
 * arrival defines it). The handler only stops the wave with status
 * GCN_WAVE_GWS_BARRIER (pc past the instruction, count and resource in the
 * wave); the cooperative scheduler of emu/exec (gcn_launch.c run_coop) counts
 * arrivals across the whole grid and releases the waves; a non-cooperative
 * launch fails with a message. Nothing is recorded: like ds_nop or
 * ds_swizzle_b32 the instruction touches no memory, so the trace holds no
 * record for it and the replay walker finds it in the code object. */
static void gds_refused(gcn_wave *w, const gcn_insn *in)
{
    wave_error(w, in, GCN_WAVE_ILLEGAL, "GDS/GWS instruction %s not supported (global data share is not modelled)",
               gcn_op_name(in->op));
}
H(ds_gws_init) { gds_refused(w, in); }
H(ds_gws_sema_v) { gds_refused(w, in); }
H(ds_gws_sema_br) { gds_refused(w, in); }
H(ds_gws_sema_p) { gds_refused(w, in); }
H(ds_gws_sema_release_all) { gds_refused(w, in); }
H(ds_ordered_count) { gds_refused(w, in); }
H(ds_gws_barrier)
{
    EXEC_DECL;
    if (!ex) { wave_error(w, in, GCN_WAVE_ILLEGAL, "ds_gws_barrier with EXEC = 0 (no lane supplies data0)"); return; }
    const uint32_t *d0 = vreg(w, in, in->src[0], 1);
    if (w->status != GCN_WAVE_RUNNING) return;
    w->gws_count = d0[__builtin_ctzll(ex)] + 1u;
    w->gws_resource = ((in->imm & 0x3fu) + ((w->s[GCN_SREG_M0] >> 16) & 0x3fu)) & 0x3fu;
    w->status = GCN_WAVE_GWS_BARRIER;
}

/* LDS -> memory DMA (MUBUF lds form without VGPRs): not modelled. */
H(buffer_store_lds_dword) { unimplemented(w, in, "(LDS-to-memory DMA is not modelled)"); }

/* ---- graphics-only encodings ------------------------------------------------------------ */

/* MIMG (image sampling, needs texture descriptors and samplers), EXP (export to
 * render targets) and VINTRP (attribute interpolation from the parameter cache)
 * exist only in graphics shaders: a compute dispatch cannot run them. */
static void graphics_only(gcn_wave *w, const gcn_insn *in)
{
    wave_error(w, in, GCN_WAVE_ILLEGAL, "graphics instruction %s not supported (compute emulator: %s)",
               gcn_op_name(in->op),
               in->fmt == GCN_FMT_MIMG ? "no image resources or samplers"
               : in->fmt == GCN_FMT_EXP ? "no render targets to export to"
                                        : "no interpolated attributes");
}
#define GFX_FMT(f) GFX_##f
#define GFX_MIMG(nm) H(nm) { graphics_only(w, in); }
#define GFX_EXP(nm) H(nm) { graphics_only(w, in); }
#define GFX_VINTRP(nm) H(nm) { graphics_only(w, in); }
#define GFX_SOP2(nm)
#define GFX_SOPK(nm)
#define GFX_SOP1(nm)
#define GFX_SOPC(nm)
#define GFX_SOPP(nm)
#define GFX_SMEM(nm)
#define GFX_VOP2(nm)
#define GFX_VOP1(nm)
#define GFX_VOPC(nm)
#define GFX_VOP3(nm)
#define GFX_DS(nm)
#define GFX_MUBUF(nm)
#define GFX_MTBUF(nm)
#define GFX_FLAT(nm)
#define GCN_OP(nm, fmt, ...) GFX_##fmt(nm)
#include "gcn/gcn3.def"
#undef GCN_OP

const char *gcn_sem_refusal(unsigned op)
{
    if (op >= GCN_OP_COUNT) return "unknown op";
    switch (gcn_op_infos[op].fmt) {
    case GCN_FMT_MIMG: case GCN_FMT_EXP: case GCN_FMT_VINTRP: return "graphics only";
    default: break;
    }
    switch (op) {
    case GCN_OP_v_interp_p1ll_f16: case GCN_OP_v_interp_p1lv_f16: case GCN_OP_v_interp_p2_f16:
        return "graphics only";
    case GCN_OP_s_cbranch_g_fork: case GCN_OP_s_cbranch_i_fork: case GCN_OP_s_cbranch_join:
        return "fork/join stack not modelled";
    case GCN_OP_s_rfe_b64: case GCN_OP_s_rfe_restore_b64:
        return "no trap handler";
    case GCN_OP_ds_gws_init: case GCN_OP_ds_gws_sema_v: case GCN_OP_ds_gws_sema_br: case GCN_OP_ds_gws_sema_p:
    case GCN_OP_ds_gws_sema_release_all: case GCN_OP_ds_ordered_count:
        return "global data share not modelled";
    case GCN_OP_buffer_store_lds_dword:
        return "LDS-to-memory DMA not modelled";
    default:
        return gcn_sem_handlers[op] ? NULL : "no semantics";
    }
}

/* ---- table and run loop ---------------------------------------------------------------- */

/* Files of handlers that nothing else references: named here so that the
 * static library always links them (a weak reference alone pulls no member). */
extern const char gcn_sem_valu_part[];
__attribute__((used)) static const char *const sem_parts[] = {gcn_sem_valu_part};

const gcn_exec_fn gcn_sem_handlers[GCN_OP_COUNT] = {
#define GCN_OP(nm, fmt, ...) [GCN_OP_##nm] = gcn_h_##nm,
#include "gcn/gcn3.def"
#undef GCN_OP
};

/* Instructions that need more than their handler: SDWA / DPP operand forms
 * (gcn_sem_dpp.c), VSKIP mode (s_setvskip: vector instructions are not issued)
 * and VGPR indexing mode (s_set_gpr_idx_on: VALU VGPR operands enabled in
 * M0[15:12] = src0, src1, src2, dst are offset by M0[7:0]; ISA manual Sec. 4.6
 * "GPR indexing" and 12.x S_SET_GPR_IDX_ON). */
static void __attribute__((noinline)) exec_special(gcn_wave *w, const gcn_insn *in, gcn_exec_fn h)
{
    if (w->mode & (MODE_GPR_IDX_EN | MODE_VSKIP)) {
        int vec = in->unit == GCN_UNIT_VALU || in->unit == GCN_UNIT_VMEM || in->unit == GCN_UNIT_LDS;
        if ((w->mode & MODE_VSKIP) && vec) return;
        if ((w->mode & MODE_GPR_IDX_EN) && in->unit == GCN_UNIT_VALU) {
            gcn_insn c = *in;
            uint32_t m0 = w->s[GCN_SREG_M0], idx = m0 & 0xff;
            for (int i = 0; i < 3; i++)
                if (((m0 >> (12 + i)) & 1) && c.src[i] >= GCN_OPD_VGPR && c.src[i] != GCN_OPD_NONE)
                    c.src[i] = (uint16_t)(c.src[i] + idx);
            if (((m0 >> 15) & 1) && c.dst[0] >= GCN_OPD_VGPR && c.dst[0] != GCN_OPD_NONE)
                c.dst[0] = (uint16_t)(c.dst[0] + idx);
            gcn_sem_fp_round_exec(w, &c, h);
            return;
        }
    }
    gcn_sem_fp_round_exec(w, in, h);
}

static void illegal_insn(gcn_wave *w, const gcn_insn *in)
{
    if (in->flags & GCN_IF_INVALID) wave_error(w, in, GCN_WAVE_ILLEGAL, "invalid encoding");
    else unimplemented(w, in, "");
}

static gcn_wave_status bad_pc(gcn_wave *w)
{
    w->status = GCN_WAVE_ILLEGAL;
    snprintf(w->err, sizeof w->err,
             "kernel %s: wg (%u,%u,%u) wave %u: illegal instruction at pc 0x%llx (encoding ?): pc is outside the "
             "code object's .text or inside an instruction",
             w->kernel_name ? w->kernel_name : "?", w->wg_id[0], w->wg_id[1], w->wg_id[2], w->wave_in_wg,
             (unsigned long long)w->pc);
    return GCN_WAVE_ILLEGAL;
}

/* The scalar half of the state hash: pc, SCC, MODE, the SGPRs the kernel
 * uses (s0..s[n_sgpr-1]; all 102 when n_sgpr is 0) and the special registers
 * s[102..127] (VCC, M0, EXEC, ...). The others cannot change. XXH3 (the
 * xxHash library) over the register arrays: a wave that records takes this
 * at every loop back-edge (await_edge), and a chain of one multiply per
 * register pair cost 2-3% of recording km. Only compared within one run. */
static uint64_t scalar_hash(const gcn_wave *w)
{
    uint32_t ns = w->n_sgpr && w->n_sgpr < 102 ? w->n_sgpr : 102;
    uint64_t h = XXH3_64bits_withSeed(w->s, (size_t)ns * 4, w->pc ^ ((uint64_t)w->scc << 32 | w->mode) * 0x9e3779b97f4a7c15ull);
    return XXH3_64bits_withSeed(w->s + 102, 26 * 4, h);
}

/* The whole state hash from its scalar half: adds every VGPR of every lane. */
static uint64_t vector_hash(const gcn_wave *w, uint64_t h)
{
    if (w->v && w->n_vgpr)
        h = XXH3_64bits_withSeed(w->v, (size_t)w->n_vgpr * sizeof *w->v, h);
    return h;
}

uint64_t gcn_wave_state_hash(const gcn_wave *w) { return vector_hash(w, scalar_hash(w)); }

/* The awaits' first filter: the scalar half and one lane of every VGPR (the
 * first lane in EXEC: a loop that counts in VGPRs differs here already).
 * Equal states give equal values; vector_hash(w, await_hash(w)) decides. */
static uint64_t await_hash(const gcn_wave *w)
{
    uint64_t h = scalar_hash(w), ex = gcn_exec_mask(w);
    unsigned lane = ex ? (unsigned)__builtin_ctzll(ex) : 0;
    if (!w->v || !w->n_vgpr)
        return h;
    uint32_t buf[256];
    uint32_t n = w->n_vgpr < 256 ? w->n_vgpr : 256;
    for (uint32_t r = 0; r < n; r++)
        buf[r] = w->v[r][lane];
    return XXH3_64bits_withSeed(buf, (size_t)n * 4, h);
}

static void await_stop(gcn_wave *w)
{
    if (w->aw_state == 2 && w->rec.ops && w->rec.ops->await_end)
        w->rec.ops->await_end(w->rec.ctx, w->wave_in_wg);
    w->aw_state = 0;
}

/* Awaits (gcn_wave.h): a recorded wave took a back-edge to w->pc. At each
 * return to the same loop head it compares the state with the previous one
 * (the scalar half first); an iteration that left the state as it found it
 * becomes an await's template, and each further one that does so is dropped
 * from the record, until the state changes or another loop is entered. */
static __attribute__((noinline)) void await_edge(gcn_wave *w)
{
    const gcn_recorder_ops *ops = w->rec.ops;
    if (!ops->await_mark || !ops->await_commit || !ops->await_drop || !ops->await_end)
        return;
    void *ctx = w->rec.ctx;
    uint32_t wv = w->wave_in_wg;
    uint64_t dyn = w->n_instr;
    if (w->pc != w->aw_pc) { /* another loop head: its scalar state, to compare at the next return
                              * (the VGPRs only once that repeats: hashing them at every loop
                              * entry made recording conv 68% slower) */
        await_stop(w);
        w->aw_pc = w->pc;
        w->aw_shash = await_hash(w);
        w->aw_have = 1;
        ops->await_mark(ctx, wv, dyn);
        w->aw_dyn = dyn;
        return;
    }
    uint64_t hs = await_hash(w), h = 0;
    int have_h = 0;
    if (w->aw_state == 2) {
        if (hs == w->aw_shash && dyn - w->aw_dyn == w->aw_len && (h = vector_hash(w, hs)) == w->aw_hash) {
            ops->await_drop(ctx, wv, dyn); /* the same iteration again */
            w->aw_dyn = dyn;
            return;
        }
        await_stop(w); /* it saw memory change: recorded from here on as usual */
        w->aw_have = 0;
    }
    if ((w->aw_have & 1) && hs == w->aw_shash) {
        h = vector_hash(w, hs);
        have_h = 1;
        if ((w->aw_have & 2) && h == w->aw_hash && ops->await_commit(ctx, wv, dyn, w->pc)) {
            w->aw_state = 2; /* the iteration since the last mark is the template */
            w->aw_done_pc = w->pc;
            w->aw_len = dyn - w->aw_dyn;
            w->aw_dyn = dyn;
            return;
        }
    }
    w->aw_shash = hs;
    w->aw_hash = h;
    w->aw_have = (uint8_t)(1 | (have_h ? 2 : 0));
    ops->await_mark(ctx, wv, dyn);
    w->aw_dyn = dyn;
}

/* Retry awaits (gcn_wave.h): a recorded wave is at a loop head (in) */
static __attribute__((noinline)) void loop_head(gcn_wave *w, const gcn_insn *in, int came_back)
{
    const gcn_recorder_ops *ops = w->rec.ops;
    if (!ops->retry_mark || !ops->retry_commit)
        return;
    if (came_back) { /* the loop runs again: not a single iteration */
        if (in->pc == w->rt_head)
            w->rt_head = 0;
        return;
    }
    ops->retry_mark(w->rec.ctx, w->wave_in_wg, w->n_instr);
    w->rt_head = in->pc;
    w->guard_set = 0; /* the mark is the loop's now */
}

/* Guard polls: a wait loop compiled with its first poll before the loop
 * (`if (!flag) do { s_sleep; } while (!flag);`, rocPRIM's look-back status
 * load) that found the flag set runs no iteration, so there is no loop to
 * mark. A recorded wave's glc load (a volatile or atomic load, not in a
 * loop that is a retry candidate) that reads non-zero is marked as a retry
 * await's start; when the next conditional branch, at most GUARD_SPAN
 * instructions later, does not go where the other way is a loop head, the
 * load up to that branch becomes a RETRY await with the load as its head
 * (trace format "RETRY awaits"): the replay polls it again while its data
 * is not what the recording read (zero where the recording saw the flag
 * set), so the model makes the wait the emulator did not have to make. */
#define GUARD_SPAN 16u

static inline int guard_candidate(const gcn_insn *in)
{
    return (in->flags & (GCN_IF_LOAD | GCN_IF_ATOMIC)) == GCN_IF_LOAD && (in->mods & GCN_M_GLC) &&
           (in->fmt == GCN_FMT_FLAT || in->fmt == GCN_FMT_MUBUF) && !(in->flags & GCN_IF_SCRATCH);
}

/* Does the code at pc enter a loop within GUARD_SPAN instructions (straight
 * line and s_branch followed, up to the first conditional branch): a loop
 * head, or a branch back to at or before where it is (the middle of a
 * rotated loop)? */
static int enters_loop(const gcn_program *p, uint64_t pc)
{
    for (unsigned i = 0; i < GUARD_SPAN; i++) {
        const gcn_insn *x = gcn_program_at(p, pc);
        if (!x || (x->flags & (GCN_IF_ENDPGM | GCN_IF_INVALID | GCN_IF_BR_INDIRECT)))
            return 0;
        if (x->flags & GCN_IF_LOOP_HEAD)
            return 1;
        if (x->flags & (GCN_IF_BR_COND | GCN_IF_BR_JUMP)) {
            if (x->target <= x->pc)
                return 1;
            if (x->flags & GCN_IF_BR_COND)
                return 0;
            pc = x->target;
            continue;
        }
        pc = x->pc + x->size;
    }
    return 0;
}

/* before a glc load runs (dyn: its index) */
static __attribute__((noinline)) void guard_mark(gcn_wave *w, const gcn_insn *in, uint64_t dyn)
{
    w->guard_set = 0;
    if (w->rt_head || !w->rec.ops->retry_mark || !w->rec.ops->retry_commit ||
        (w->aw_done_pc && w->aw_pc == w->aw_done_pc))
        return; /* a loop that is a retry candidate, or the way out of a WAIT await */
    w->rec.ops->retry_mark(w->rec.ctx, w->wave_in_wg, dyn);
    w->guard_set = 1;
    w->guard_pc = in->pc;
    w->guard_dyn = dyn;
}

/* after instruction in ran (the wave's n_instr counts it) */
static __attribute__((noinline)) void guard_step(gcn_wave *w, const gcn_insn *in)
{
    if (in->pc == w->guard_pc && guard_candidate(in)) {
        /* the poll itself: only a flag found set (non-zero in the first active lane) */
        uint64_t ex = gcn_exec_mask(w);
        unsigned lane = ex ? (unsigned)__builtin_ctzll(ex) : 0, nd = in->mem_bytes >= 4 ? in->mem_bytes / 4 : 1;
        uint32_t any = 0;
        for (unsigned d = 0; d < nd && in->dst[0] >= GCN_OPD_VGPR && in->dst[0] - GCN_OPD_VGPR + d < w->n_vgpr; d++)
            any |= w->v[in->dst[0] - GCN_OPD_VGPR + d][lane];
        if (!ex || !any)
            w->guard_set = 0;
        return;
    }
    if (w->n_instr - w->guard_dyn > GUARD_SPAN || (in->flags & (GCN_IF_BR_JUMP | GCN_IF_BR_INDIRECT | GCN_IF_ENDPGM))) {
        w->guard_set = 0;
        return;
    }
    if (!(in->flags & GCN_IF_BR_COND))
        return;
    w->guard_set = 0;
    uint64_t other = w->pc == in->pc + in->size ? in->target : in->pc + in->size;
    if (other != w->pc && enters_loop(w->prog, other))
        w->rec.ops->retry_commit(w->rec.ctx, w->wave_in_wg, w->n_instr, w->guard_pc);
}

/* ... and left the loop at its not-taken back-edge in */
static __attribute__((noinline)) void loop_exit(gcn_wave *w, const gcn_insn *in)
{
    /* only a loop whose exit may depend on what it polled can be a wait
     * (GCN_IF_POLL_EXIT, gcn/gcn_poll.c): a loop that ran once over a count
     * is not offered */
    if (in->target == w->rt_head && (in->flags & GCN_IF_POLL_EXIT) && w->rec.ops->retry_commit)
        w->rec.ops->retry_commit(w->rec.ctx, w->wave_in_wg, w->n_instr, in->target);
    w->rt_head = 0;
}

/* The forward-progress test of gcn_wave.h, at every 16th return to the loop
 * head followed and at every 64th back-edge elsewhere (back_edge below): the
 * time slice and the preempt flag, then following a new loop head or
 * comparing the state hash. Returns 1 when the wave must yield (status SPIN). */
static __attribute__((noinline)) int back_edge_check(gcn_wave *w)
{
    if ((w->slice_end && w->n_instr >= w->slice_end) ||
        (w->preempt && __atomic_load_n(w->preempt, __ATOMIC_RELAXED))) {
        w->stuck = 0;
        w->status = GCN_WAVE_SPIN;
        return 1;
    }
    if (w->pc != w->spin_pc) {
        w->spin_pc = w->pc; /* 64 back-edges elsewhere: follow this loop */
        w->spin_miss = w->spin_hits = 0;
        w->spin_valid = 0;
        return 0;
    }
    /* the scalar state first: a loop counted in SGPRs (most) never pays for
     * hashing the VGPRs */
    uint64_t hs = scalar_hash(w);
    if (!(w->spin_valid & 1) || hs != w->spin_shash) {
        w->spin_shash = hs;
        w->spin_valid = 1;
        return 0;
    }
    uint64_t h = vector_hash(w, hs);
    if (!(w->spin_valid & 2) || h != w->spin_hash) {
        w->spin_hash = h;
        w->spin_valid = 3;
        return 0;
    }
    w->stuck = 1;
    w->state_hash = h;
    w->status = GCN_WAVE_SPIN;
    return 1;
}

/* A taken branch went back to w->pc (a loop head): count it; the test itself
 * runs every GCN_SPIN_CHECK_EVERY-th time at the followed loop head and every
 * 64th time elsewhere, so a loop pays one compare and one increment. */
static inline __attribute__((always_inline)) int back_edge(gcn_wave *w, const int rec)
{
    if (rec)
        await_edge(w); /* recorded waves only: awaits */
    if (w->pc == w->spin_pc) {
        w->spin_miss = 0;
        if (++w->spin_hits % GCN_SPIN_CHECK_EVERY)
            return 0;
    } else if (++w->spin_miss < 64) {
        return 0;
    }
    return back_edge_check(w);
}

/* The run loop. The next instruction is found without the pc -> index lookup
 * when the handler left pc at the fall-through address (everything but taken
 * branches). */
static inline __attribute__((always_inline)) gcn_wave_status run(gcn_wave *w, const int rec)
{
    const gcn_program *p = w->prog;
    const gcn_insn *const insn = p->insn;
    const size_t n_insn = p->n_insn;
    w->status = GCN_WAVE_RUNNING;
    uint64_t off = w->pc - p->vaddr;
    uint32_t idx = (off < p->size && !(off & 3)) ? p->index_of[off >> 2] : UINT32_MAX;
    if (idx == UINT32_MAX)
        return bad_pc(w);
    uint64_t n_instr = w->n_instr;
    int came_back = w->at_back_edge; /* recording: the last taken branch went backwards */
    w->at_back_edge = 0;
    for (;;) {
        const gcn_insn *in = &insn[idx];
        if (rec && __builtin_expect((in->flags & GCN_IF_LOOP_HEAD) != 0, 0)) {
            w->n_instr = n_instr;
            loop_head(w, in, came_back);
        }
        gcn_exec_fn h = gcn_sem_handlers[in->op];
        if (__builtin_expect(!h || (in->flags & GCN_IF_INVALID), 0)) {
            w->n_instr = n_instr;
            illegal_insn(w, in);
            return (gcn_wave_status)w->status;
        }
        if (rec && __builtin_expect(guard_candidate(in), 0))
            guard_mark(w, in, n_instr);
        uint64_t exec_before = rec ? gcn_exec_mask(w) : 0;
        uint64_t next_pc = in->pc + in->size;
        w->pc = next_pc;
        w->n_instr = ++n_instr;
        if (__builtin_expect((in->mods & (GCN_M_SDWA | GCN_M_DPP)) | (w->mode & (MODE_GPR_IDX_EN | MODE_VSKIP | MODE_FP_ROUND)), 0))
            exec_special(w, in, h);
        else
            h(w, in);
        if (rec && (in->flags & GCN_IF_WRITES_EXEC) && gcn_exec_mask(w) != exec_before)
            w->rec.ops->exec(w->rec.ctx, w->wave_in_wg, w->n_instr, gcn_exec_mask(w));
        if (__builtin_expect(w->status != GCN_WAVE_RUNNING, 0)) {
            if (w->status == GCN_WAVE_FAULT || w->status == GCN_WAVE_ILLEGAL || w->status == GCN_WAVE_TRAP) {
                w->pc = in->pc; /* report / resume at the faulting instruction */
                w->n_instr--;
                if (w->status == GCN_WAVE_FAULT) fault_add_disasm(w, in);
            }
            return (gcn_wave_status)w->status;
        }
        n_instr = w->n_instr;
        if (rec && __builtin_expect(w->guard_set, 0))
            guard_step(w, in);
        if (__builtin_expect(w->pc == next_pc && idx + 1 < n_insn, 1)) {
            if (rec && __builtin_expect((in->flags & GCN_IF_BR_COND) && in->target <= in->pc, 0))
                loop_exit(w, in);
            came_back = 0;
            idx++;
            continue;
        }
        came_back = w->pc <= in->pc;
        if (w->pc <= in->pc && back_edge(w, rec)) {
            w->at_back_edge = 1;
            return GCN_WAVE_SPIN;
        }
        off = w->pc - p->vaddr;
        idx = (off < p->size && !(off & 3)) ? p->index_of[off >> 2] : UINT32_MAX;
        if (idx == UINT32_MAX)
            return bad_pc(w);
    }
}

gcn_wave_status gcn_wave_run(gcn_wave *w)
{
    return w->rec.ops ? run(w, 1) : run(w, 0);
}
