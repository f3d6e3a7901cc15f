/*
 * gcn_sem_dpp.c - SDWA (sub-dword addressing) and DPP (data-parallel
 * primitives) operand forms of VOP1/VOP2/VOPC instructions.
 * Source: AMD GCN3 ISA manual (Rev 1.1, 2016) Sec. 6.? and 12.? (SDWA, DPP).
 *
 * One generic executor for every opcode: the modified source lanes are built
 * in three temporary VGPRs (src0, src1, dst), the wave's register file is
 * pointed at them for the duration of the plain handler, which runs on a copy
 * of the instruction whose operands name the temporaries, and the result is
 * merged back into the real destination:
 *   SDWA  src0_sel/src1_sel pick BYTE_0..3 / WORD_0..1 / DWORD of each source,
 *         zero- or (sext) sign-extended; abs/neg/clamp stay in gcn_insn.mods for
 *         the float handlers; dst_sel places the low bits of the result into the
 *         selected field, dst_unused fills the rest with zeros (UNUSED_PAD), the
 *         field's sign above it and zeros below (UNUSED_SEXT) or the old value
 *         (UNUSED_PRESERVE). VOPC SDWA writes VCC (gfx8 has no sdst field).
 *   DPP   lane l of src0 reads lane src(l) of the VGPR (quad_perm, row_shl/
 *         shr/ror 1..15, wave_shl/rol/shr/ror 1, row_mirror, row_half_mirror,
 *         row_bcast15/31). A source lane outside the row / wave, or disabled
 *         in EXEC, is invalid: with bound_ctrl the lane reads 0, without it
 *         the lane is not written. row_mask (bit r: lanes 16r..16r+15) and
 *         bank_mask (bit b: lanes with (l >> 2) & 3 == b) disable writes; the
 *         handler runs with EXEC narrowed to the written lanes (v_cmpx keeps
 *         the EXEC it produced). src1 is not permuted.
 * 64-bit operands cannot use SDWA / DPP on gfx8 and are reported as illegal.
 */
#include "gcn_sem_internal.h"

/* the three temporaries: src0, src1, dst (one set per thread) */
static _Thread_local uint32_t tmp_v[3][GCN_WAVE_LANES];

enum { SEL_BYTE0 = 0, SEL_WORD0 = 4, SEL_WORD1 = 5, SEL_DWORD = 6 };
enum { UNUSED_PAD = 0, UNUSED_SEXT = 1, UNUSED_PRESERVE = 2 };

static inline uint32_t sdwa_src(uint32_t v, unsigned sel, int sext)
{
    if (sel < SEL_WORD0) {
        uint32_t b = (v >> (8 * sel)) & 0xff;
        return sext ? (uint32_t)(int32_t)(int8_t)b : b;
    }
    if (sel <= SEL_WORD1) {
        uint32_t h = (v >> (16 * (sel - SEL_WORD0))) & 0xffff;
        return sext ? (uint32_t)(int32_t)(int16_t)h : h;
    }
    return v; /* DWORD */
}

static inline uint32_t sdwa_dst(uint32_t old, uint32_t r, unsigned sel, unsigned unused)
{
    if (sel >= SEL_DWORD) return r;
    unsigned sh = sel < SEL_WORD0 ? 8 * sel : 16 * (sel - SEL_WORD0), width = sel < SEL_WORD0 ? 8 : 16;
    uint32_t fmask = ((1u << width) - 1) << sh, v = (r << sh) & fmask;
    if (unused == UNUSED_PRESERVE) return (old & ~fmask) | v;
    if (unused == UNUSED_SEXT && ((v >> (sh + width - 1)) & 1) && sh + width < 32) v |= ~0u << (sh + width);
    return v;
}

/* DPP source lane of lane l, or -1 when out of range (ISA manual DPP_CTRL table) */
static inline int dpp_src_lane(unsigned ctrl, int l)
{
    int row = l & ~15, r = l & 15;
    if (ctrl <= 0xff) return (l & ~3) | (int)((ctrl >> (2 * (l & 3))) & 3);  /* quad_perm */
    if (ctrl >= 0x101 && ctrl <= 0x10f) { int s = r + (int)(ctrl & 15); return s < 16 ? row + s : -1; } /* row_shl */
    if (ctrl >= 0x111 && ctrl <= 0x11f) { int s = r - (int)(ctrl & 15); return s >= 0 ? row + s : -1; } /* row_shr */
    if (ctrl >= 0x121 && ctrl <= 0x12f) return row + ((r - (int)(ctrl & 15)) & 15);            /* row_ror */
    switch (ctrl) {
    case 0x130: return l + 1 < GCN_WAVE_LANES ? l + 1 : -1;  /* wave_shl:1 */
    case 0x134: return (l + 1) & 63;                         /* wave_rol:1 */
    case 0x138: return l - 1;                                /* wave_shr:1 (-1 for lane 0) */
    case 0x13c: return (l - 1) & 63;                         /* wave_ror:1 */
    case 0x140: return row + 15 - r;                         /* row_mirror */
    case 0x141: return (l & ~7) + 7 - (l & 7);               /* row_half_mirror */
    case 0x142: return row ? row - 1 : -1;                   /* row_bcast:15: lane 15 of the row before */
    case 0x143: return l >= 32 ? 31 : -1;                    /* row_bcast:31: lane 31 to rows 2 and 3 */
    default: return -2;                                      /* reserved encoding */
    }
}

void gcn_sem_sdwa_dpp(gcn_wave *w, const gcn_insn *in, gcn_exec_fn h)
{
    const gcn_op_info *oi = &gcn_op_infos[in->op];
    const int sdwa = !!(in->mods & GCN_M_SDWA);
    const uint32_t ctl = in->imm2;
    if (oi->sw[0] > 1 || oi->sw[1] > 1 || (in->fmt != GCN_FMT_VOPC && oi->dw > 1)) {
        wave_error(w, in, GCN_WAVE_ILLEGAL, "%s with 64-bit operands does not exist on gfx8",
                   sdwa ? "SDWA" : "DPP");
        return;
    }
    const int two = in->fmt != GCN_FMT_VOP1 && in->src[1] != GCN_OPD_NONE;
    const int vdst = in->dst[0] >= GCN_OPD_VGPR && in->dst[0] != GCN_OPD_NONE;
    const uint32_t *s0 = vreg(w, in, in->src[0], 1);
    const uint32_t *s1 = two && in->src[1] >= GCN_OPD_VGPR ? vreg(w, in, in->src[1], 1) : NULL;
    uint32_t *d = vdst ? vreg(w, in, in->dst[0], 1) : NULL;
    if (w->status != GCN_WAVE_RUNNING) return;
    if (two && !s1) {
        wave_error(w, in, GCN_WAVE_ILLEGAL, "src1 of an SDWA/DPP instruction must be a VGPR");
        return;
    }

    const uint64_t ex = gcn_exec_mask(w);
    uint64_t en = ex; /* lanes the instruction writes */
    uint32_t (*t)[GCN_WAVE_LANES] = tmp_v;
    unsigned dsel = SEL_DWORD, dunused = UNUSED_PRESERVE;
    if (sdwa) {
        unsigned sel0 = (ctl >> 16) & 7, sel1 = (ctl >> 24) & 7;
        int sx0 = (in->mods >> GCN_M_SEXT_SHIFT) & 1, sx1 = (in->mods >> (GCN_M_SEXT_SHIFT + 1)) & 1;
        dsel = (ctl >> 8) & 7;
        dunused = (ctl >> 11) & 3;
        if (sel0 > SEL_DWORD || (two && sel1 > SEL_DWORD) || (vdst && (dsel > SEL_DWORD || dunused > 2))) {
            wave_error(w, in, GCN_WAVE_ILLEGAL, "reserved SDWA select (src0_sel %u src1_sel %u dst_sel %u dst_unused %u)",
                       sel0, sel1, dsel, dunused);
            return;
        }
        for (unsigned l = 0; l < GCN_WAVE_LANES; l++) t[0][l] = sdwa_src(s0[l], sel0, sx0);
        if (two)
            for (unsigned l = 0; l < GCN_WAVE_LANES; l++) t[1][l] = sdwa_src(s1[l], sel1, sx1);
    } else {
        unsigned dctrl = (ctl >> 8) & 0x1ff, bound0 = (ctl >> 19) & 1, bank = (ctl >> 24) & 15, rowm = (ctl >> 28) & 15;
        uint64_t mask = 0;
        for (int l = 0; l < GCN_WAVE_LANES; l++) {
            int s = dpp_src_lane(dctrl, l);
            if (s == -2) {
                wave_error(w, in, GCN_WAVE_ILLEGAL, "reserved DPP control 0x%x", dctrl);
                return;
            }
            int ok = ((rowm >> (l >> 4)) & 1) && ((bank >> ((l >> 2) & 3)) & 1);
            int valid = s >= 0 && ((ex >> s) & 1);
            t[0][l] = valid ? s0[s] : 0;
            if (ok && (valid || bound0)) mask |= 1ull << l;
        }
        en = ex & mask;
        if (two) memcpy(t[1], s1, sizeof t[1]);
    }
    if (vdst) memcpy(t[2], d, sizeof t[2]);

    gcn_insn c = *in;
    c.mods &= ~(uint32_t)(GCN_M_SDWA | GCN_M_DPP);
    c.src[0] = GCN_OPD_VGPR + 0;
    if (two) c.src[1] = GCN_OPD_VGPR + 1;
    if (vdst) {
        if (c.src[2] == in->dst[0]) c.src[2] = GCN_OPD_VGPR + 2; /* v_mac: accumulator is the destination */
        c.dst[0] = GCN_OPD_VGPR + 2;
    }
    uint32_t(*v_save)[GCN_WAVE_LANES] = w->v;
    uint32_t n_save = w->n_vgpr;
    w->v = t;
    w->n_vgpr = 3;
    if (en != ex) gcn_set_exec(w, en);
    h(w, &c);
    w->v = v_save;
    w->n_vgpr = n_save;
    if (en != ex && !(oi->flags & GCN_IF_WRITES_EXEC)) gcn_set_exec(w, ex);
    if (!vdst || w->status != GCN_WAVE_RUNNING) return;
    for (unsigned l = 0; l < GCN_WAVE_LANES; l++)
        if ((en >> l) & 1) d[l] = sdwa ? sdwa_dst(d[l], t[2][l], dsel, dunused) : t[2][l];
}
