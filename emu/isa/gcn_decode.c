/*
 * gcn_decode.c - GCN3 (gfx803) decoder and disassembler.
 *
 * The decode tables are expanded from gcn3.def (STYLE.md #1): one table per
 * encoding format indexed by the opcode field, built once (pthread_once). A
 * word first selects its format from the fixed high bits (GCN3 ISA manual
 * Ch. 12 "Microcode formats", VI layout as in LLVM's VI*Instructions.td), then
 * the opcode field selects the op; unused slots decode as GCN_IF_INVALID.
 * Every operand is resolved here into operand codes (gcn_isa_internal.h) so
 * the interpreter never looks at encoding bits again (STYLE.md #3).
 *
 * Invariants: gcn_decode_one never reads past n_words and never fails; a
 * program decode is a linear sweep in which each instruction consumes its
 * size (4, 8 or 12 bytes) and invalid words consume 4.
 */
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcn_isa_internal.h"

const gcn_op_info gcn_op_infos[GCN_OP_COUNT] = {
    [GCN_OP_INVALID] = {.name = "<invalid>", .fmt = GCN_FMT_INVALID, .unit = GCN_UNIT_SPECIAL,
                        .flags = GCN_IF_INVALID},
#define GCN_OP(nm, fmt_, opc_, unit_, flags_, mem_, dw_, sw_, attr_)                          \
    [GCN_OP_##nm] = {.name = #nm, .fmt = fmt_, .unit = unit_, .mem = mem_, .dw = dw_,        \
                     .sw = {sw_}, .attr = attr_, .opc = opc_, .flags = flags_},
#include "gcn3.def"
#undef GCN_OP
};

/* Weak: NULL unless gcn_sem.c (the interpreter) is linked in. */
extern const gcn_exec_fn gcn_sem_handlers[GCN_OP_COUNT] __attribute__((weak));

/* ---- decode tables ------------------------------------------------------- */

static uint16_t t_sop2[128], t_sopk[32], t_sop1[256], t_sopc[128], t_sopp[128], t_smem[256],
    t_vop2[64], t_vop1[256], t_vopc[256], t_vop3[1024], t_vintrp[4], t_ds[256], t_mubuf[128],
    t_mtbuf[16], t_flat[128], t_mimg[128];
static int t_conflict;
static char t_conflict_msg[160];
static pthread_once_t t_once = PTHREAD_ONCE_INIT;

/* VOP3 opcode of the VOP3 form of a VOPC/VOP2/VOP1/VINTRP op: base + opcode */
static unsigned vop3_base(unsigned fmt)
{
    return fmt == GCN_FMT_VOPC ? 0 : fmt == GCN_FMT_VOP2 ? 0x100 : fmt == GCN_FMT_VOP1 ? 0x140 : 0x270;
}

static uint16_t *table_of(unsigned fmt, size_t *n)
{
#define T(f, t) case GCN_FMT_##f: *n = sizeof(t) / sizeof(t[0]); return t;
    switch (fmt) {
    T(SOP2, t_sop2) T(SOPK, t_sopk) T(SOP1, t_sop1) T(SOPC, t_sopc) T(SOPP, t_sopp)
    T(SMEM, t_smem) T(VOP2, t_vop2) T(VOP1, t_vop1) T(VOPC, t_vopc) T(VOP3, t_vop3)
    T(VINTRP, t_vintrp) T(DS, t_ds) T(MUBUF, t_mubuf) T(MTBUF, t_mtbuf) T(FLAT, t_flat)
    T(MIMG, t_mimg)
    default: *n = 0; return NULL;
    }
#undef T
}

static void claim(uint16_t *t, size_t n, unsigned idx, uint16_t op)
{
    if (idx >= n || t[idx]) {
        if (!t_conflict)
            snprintf(t_conflict_msg, sizeof t_conflict_msg, "gcn3.def: %s slot %u %s", gcn_op_infos[op].name,
                     idx, idx >= n ? "out of range" : gcn_op_infos[t[idx]].name);
        t_conflict = 1;
        return;
    }
    t[idx] = op;
}

static void build_tables(void)
{
    for (unsigned op = 1; op < GCN_OP_COUNT; op++) {
        const gcn_op_info *oi = &gcn_op_infos[op];
        size_t n;
        uint16_t *t = table_of(oi->fmt, &n);
        if (t) claim(t, n, oi->opc, (uint16_t)op);
        if (oi->attr & GCN_A_E64) {
            unsigned base = vop3_base(oi->fmt);
            claim(t_vop3, 1024, base + oi->opc, (uint16_t)op);
        }
    }
}

int gcn_dec_check_tables(char *err, size_t n)
{
    pthread_once(&t_once, build_tables);
    if (t_conflict) {
        snprintf(err, n, "%s", t_conflict_msg);
        return -1;
    }
    return 0;
}

/* First-dword (mask, match) of each op's encoding(s). */
static int pattern_of(unsigned fmt, unsigned opc, uint32_t *mask, uint32_t *match)
{
    switch (fmt) {
    case GCN_FMT_SOP2: *mask = 0xff800000u; *match = 0x80000000u | opc << 23; return 0;
    case GCN_FMT_SOPK: *mask = 0xff800000u; *match = 0xb0000000u | opc << 23; return 0;
    case GCN_FMT_SOP1: *mask = 0xff80ff00u; *match = 0xbe800000u | opc << 8; return 0;
    case GCN_FMT_SOPC: *mask = 0xffff0000u; *match = 0xbf000000u | opc << 16; return 0;
    case GCN_FMT_SOPP: *mask = 0xffff0000u; *match = 0xbf800000u | opc << 16; return 0;
    case GCN_FMT_SMEM: *mask = 0xfffc0000u; *match = 0xc0000000u | opc << 18; return 0;
    case GCN_FMT_VOP2: *mask = 0xfe000000u; *match = opc << 25; return 0;
    case GCN_FMT_VOP1: *mask = 0xfe01fe00u; *match = 0x7e000000u | opc << 9; return 0;
    case GCN_FMT_VOPC: *mask = 0xfffe0000u; *match = 0x7c000000u | opc << 17; return 0;
    case GCN_FMT_VOP3: *mask = 0xfc000000u | 0x3ff0000u; *match = 0xd0000000u | opc << 16; return 0;
    case GCN_FMT_VINTRP: *mask = 0xfc030000u; *match = 0xd4000000u | opc << 16; return 0;
    case GCN_FMT_DS: *mask = 0xfdfe0000u; *match = 0xd8000000u | opc << 17; return 0;
    case GCN_FMT_FLAT: *mask = 0xfdfc0000u; *match = 0xdc000000u | opc << 18; return 0;
    case GCN_FMT_MUBUF: *mask = 0xfdfc0000u; *match = 0xe0000000u | opc << 18; return 0;
    case GCN_FMT_MTBUF: *mask = 0xfc078000u; *match = 0xe8000000u | opc << 15; return 0;
    case GCN_FMT_MIMG: *mask = 0xfdfc0000u; *match = 0xf0000000u | opc << 18; return 0;
    case GCN_FMT_EXP: *mask = 0xfc000000u; *match = 0xc4000000u; return 0;
    }
    return -1;
}

size_t gcn_dec_patterns(gcn_dec_pattern *out, size_t max)
{
    size_t k = 0;
    for (unsigned op = 1; op < GCN_OP_COUNT; op++) {
        const gcn_op_info *oi = &gcn_op_infos[op];
        uint32_t m, v;
        if (pattern_of(oi->fmt, oi->opc, &m, &v) == 0) {
            if (k < max) out[k] = (gcn_dec_pattern){m, v, (uint16_t)op, 0};
            k++;
        }
        if (oi->attr & GCN_A_E64) {
            unsigned base = vop3_base(oi->fmt);
            pattern_of(GCN_FMT_VOP3, base + oi->opc, &m, &v);
            if (k < max) out[k] = (gcn_dec_pattern){m, v, (uint16_t)op, 1};
            k++;
        }
    }
    return k;
}

/* ---- one instruction ----------------------------------------------------- */

static unsigned fmt_of(uint32_t w)
{
    if ((w >> 30) == 2) {
        unsigned top9 = w >> 23;
        if (top9 == 0x17d) return GCN_FMT_SOP1;
        if (top9 == 0x17e) return GCN_FMT_SOPC;
        if (top9 == 0x17f) return GCN_FMT_SOPP;
        if ((w >> 28) == 0xb) return GCN_FMT_SOPK;
        return GCN_FMT_SOP2;
    }
    if ((w >> 31) == 0) {
        unsigned top7 = w >> 25;
        if (top7 == 0x3f) return GCN_FMT_VOP1;
        if (top7 == 0x3e) return GCN_FMT_VOPC;
        return GCN_FMT_VOP2;
    }
    switch (w >> 26) {
    case 0x30: return GCN_FMT_SMEM;
    case 0x31: return GCN_FMT_EXP;
    case 0x34: return GCN_FMT_VOP3;
    case 0x35: return GCN_FMT_VINTRP;
    case 0x36: return GCN_FMT_DS;
    case 0x37: return GCN_FMT_FLAT;
    case 0x38: return GCN_FMT_MUBUF;
    case 0x3a: return GCN_FMT_MTBUF;
    case 0x3c: return GCN_FMT_MIMG;
    }
    return GCN_FMT_INVALID;
}

static void set_invalid(gcn_insn *o, const uint32_t *words, uint64_t pc)
{
    memset(o, 0, sizeof *o);
    o->pc = pc;
    o->op = GCN_OP_INVALID;
    o->fmt = GCN_FMT_INVALID;
    o->unit = GCN_UNIT_SPECIAL;
    o->size = 4;
    o->waitcnt_vm = o->waitcnt_lgkm = o->waitcnt_exp = 0xffff;
    o->flags = GCN_IF_INVALID;
    o->literal = words[0]; /* keep the word for error messages */
    for (int i = 0; i < 4; i++) o->src[i] = GCN_OPD_NONE;
    o->dst[0] = o->dst[1] = GCN_OPD_NONE;
}

static int is_exec_code(unsigned c, unsigned width)
{
    return c < 128 && c + (width ? width : 1) - 1 >= 126;
}

int gcn_decode_one(const uint32_t *words, size_t n_words, uint64_t pc, gcn_insn *o)
{
    pthread_once(&t_once, build_tables);
    set_invalid(o, words, pc);
    if (n_words < 1) return 4;
    uint32_t w0 = words[0], w1 = n_words > 1 ? words[1] : 0;
    unsigned fmt = fmt_of(w0);
    size_t tn;
    uint16_t *tab = table_of(fmt, &tn);
    unsigned opc = 0, need = 1, e64 = 0;
    switch (fmt) {
    case GCN_FMT_SOP2: opc = (w0 >> 23) & 0x7f; break;
    case GCN_FMT_SOPK: opc = (w0 >> 23) & 0x1f; break;
    case GCN_FMT_SOP1: opc = (w0 >> 8) & 0xff; break;
    case GCN_FMT_SOPC: opc = (w0 >> 16) & 0x7f; break;
    case GCN_FMT_SOPP: opc = (w0 >> 16) & 0x7f; break;
    case GCN_FMT_SMEM: opc = (w0 >> 18) & 0xff; need = 2; break;
    case GCN_FMT_VOP2: opc = (w0 >> 25) & 0x3f; break;
    case GCN_FMT_VOP1: opc = (w0 >> 9) & 0xff; break;
    case GCN_FMT_VOPC: opc = (w0 >> 17) & 0xff; break;
    case GCN_FMT_VOP3: opc = (w0 >> 16) & 0x3ff; need = 2; break;
    case GCN_FMT_VINTRP: opc = (w0 >> 16) & 3; break;
    case GCN_FMT_DS: opc = (w0 >> 17) & 0xff; need = 2; break;
    case GCN_FMT_FLAT: opc = (w0 >> 18) & 0x7f; need = 2; break;
    case GCN_FMT_MUBUF: opc = (w0 >> 18) & 0x7f; need = 2; break;
    case GCN_FMT_MTBUF: opc = (w0 >> 15) & 0xf; need = 2; break;
    case GCN_FMT_MIMG: opc = (w0 >> 18) & 0x7f; need = 2; break;
    case GCN_FMT_EXP: need = 2; break;
    default: return 4;
    }
    unsigned op = 0;
    if (fmt == GCN_FMT_EXP) op = GCN_OP_exp;
    else if (tab && opc < tn) op = tab[opc];
    if (!op || need > n_words) return 4;
    const gcn_op_info *oi = &gcn_op_infos[op];
    if (fmt == GCN_FMT_VOP3 && oi->fmt != GCN_FMT_VOP3) e64 = 1;
    o->op = (uint16_t)op;
    o->fmt = (uint8_t)fmt;
    o->unit = oi->unit;
    o->flags = oi->flags;
    o->mem_bytes = oi->mem;
    o->size = (uint8_t)(need * 4);
    o->literal = 0;

    unsigned nsrc = 0; /* how many src[] may hold a literal (VOP/SOP) */
    switch (fmt) {
    case GCN_FMT_SOP2:
        o->dst[0] = (w0 >> 16) & 0x7f;
        o->src[0] = w0 & 0xff;
        o->src[1] = (w0 >> 8) & 0xff;
        if (oi->dw == 0) o->dst[0] = GCN_OPD_NONE;
        nsrc = 2;
        break;
    case GCN_FMT_SOPK:
        o->dst[0] = (w0 >> 16) & 0x7f;
        o->imm = w0 & 0xffff;
        if (op == GCN_OP_s_setreg_imm32_b32) {
            if (n_words < 2) { set_invalid(o, words, pc); return 4; }
            o->literal = w1;
            o->size = 8;
            o->dst[0] = GCN_OPD_NONE;
        } else if (op == GCN_OP_s_setreg_b32 || (op >= GCN_OP_s_cmpk_eq_i32 && op <= GCN_OP_s_cmpk_le_u32)) {
            o->src[0] = o->dst[0]; /* the sdst field is a source */
            o->dst[0] = GCN_OPD_NONE;
        } else if (op == GCN_OP_s_cbranch_i_fork) {
            o->src[0] = o->dst[0];
            o->dst[0] = GCN_OPD_NONE;
        }
        break;
    case GCN_FMT_SOP1:
        o->dst[0] = (w0 >> 16) & 0x7f;
        o->src[0] = w0 & 0xff;
        nsrc = 1;
        if (oi->dw == 0) o->dst[0] = GCN_OPD_NONE;
        if (oi->sw[0] == 0) o->src[0] = GCN_OPD_NONE, nsrc = 0;
        break;
    case GCN_FMT_SOPC:
        o->src[0] = w0 & 0xff;
        o->src[1] = (w0 >> 8) & 0xff;
        nsrc = 2;
        break;
    case GCN_FMT_SOPP: {
        uint32_t simm = w0 & 0xffff;
        o->imm = simm;
        if (o->flags & (GCN_IF_BR_COND | GCN_IF_BR_JUMP))
            o->target = pc + 4 + (uint64_t)((int64_t)(int16_t)simm * 4);
        if (o->flags & GCN_IF_SLEEP) o->target = simm;
        if (o->flags & GCN_IF_WAITCNT) {
            o->waitcnt_vm = simm & 0xf;
            o->waitcnt_exp = (simm >> 4) & 0x7;
            o->waitcnt_lgkm = (simm >> 8) & 0xf;
        }
        break;
    }
    case GCN_FMT_SMEM:
        o->src[0] = (uint16_t)((w0 & 0x3f) << 1);
        if (oi->flags & GCN_IF_STORE) o->src[2] = (w0 >> 6) & 0x7f;
        else if (oi->dw) o->dst[0] = (w0 >> 6) & 0x7f;
        if (w0 & (1u << 16)) o->mods |= GCN_M_GLC;
        if (w0 & (1u << 17)) { o->mods |= GCN_M_SMEM_IMM; o->imm = w1 & 0xfffff; }
        else o->src[1] = w1 & 0x7f;
        break;
    case GCN_FMT_VOP2:
    case GCN_FMT_VOP1:
    case GCN_FMT_VOPC:
        o->src[0] = w0 & 0x1ff;
        if (fmt != GCN_FMT_VOP1) o->src[1] = GCN_OPD_VGPR + ((w0 >> 9) & 0xff);
        if (fmt == GCN_FMT_VOPC) o->dst[0] = GCN_OPD_VCC;
        else if (oi->dw) {
            unsigned vd = (w0 >> 17) & 0xff;
            o->dst[0] = op == GCN_OP_v_readfirstlane_b32 ? vd : GCN_OPD_VGPR + vd;
        }
        if (oi->attr & GCN_A_VOP3B) o->dst[1] = GCN_OPD_VCC;
        if (op == GCN_OP_v_addc_u32 || op == GCN_OP_v_subb_u32 || op == GCN_OP_v_subbrev_u32 ||
            op == GCN_OP_v_cndmask_b32)
            o->src[2] = GCN_OPD_VCC;
        if (op == GCN_OP_v_madmk_f32 || op == GCN_OP_v_madmk_f16) {
            o->src[2] = o->src[1];
            o->src[1] = GCN_OPD_LIT;
        } else if (op == GCN_OP_v_madak_f32 || op == GCN_OP_v_madak_f16) {
            o->src[2] = GCN_OPD_LIT;
        }
        if (op == GCN_OP_v_mac_f32 || op == GCN_OP_v_mac_f16) o->src[2] = o->dst[0];
        nsrc = 3;
        if (o->src[0] == 0xf9 || o->src[0] == 0xfa) { /* SDWA / DPP: second dword */
            if (n_words < 2) { set_invalid(o, words, pc); return 4; }
            o->size = 8;
            o->imm2 = w1;
            o->src[0] = GCN_OPD_VGPR + (w1 & 0xff);
            if ((w0 & 0x1ff) == 0xf9) {
                o->mods |= GCN_M_SDWA;
                if (w1 & (1u << 13)) o->mods |= GCN_M_CLAMP;
                o->mods |= ((w1 >> 21) & 1) << GCN_M_ABS_SHIFT | ((w1 >> 29) & 1) << (GCN_M_ABS_SHIFT + 1);
                o->mods |= ((w1 >> 20) & 1) << GCN_M_NEG_SHIFT | ((w1 >> 28) & 1) << (GCN_M_NEG_SHIFT + 1);
                o->mods |= ((w1 >> 19) & 1) << GCN_M_SEXT_SHIFT | ((w1 >> 27) & 1) << (GCN_M_SEXT_SHIFT + 1);
            } else {
                o->mods |= GCN_M_DPP;
                o->mods |= ((w1 >> 21) & 1) << GCN_M_ABS_SHIFT | ((w1 >> 23) & 1) << (GCN_M_ABS_SHIFT + 1);
                o->mods |= ((w1 >> 20) & 1) << GCN_M_NEG_SHIFT | ((w1 >> 22) & 1) << (GCN_M_NEG_SHIFT + 1);
            }
            nsrc = 0;
        }
        break;
    case GCN_FMT_VOP3: {
        unsigned vdst = w0 & 0xff;
        o->mods |= GCN_M_E64 * e64;
        o->src[0] = w1 & 0x1ff;
        o->src[1] = (w1 >> 9) & 0x1ff;
        o->src[2] = (w1 >> 18) & 0x1ff;
        unsigned ns = oi->sw[2] ? 3 : oi->sw[1] ? 2 : oi->sw[0] ? 1 : 0;
        if (op == GCN_OP_v_cndmask_b32 || op == GCN_OP_v_addc_u32 || op == GCN_OP_v_subb_u32 ||
            op == GCN_OP_v_subbrev_u32)
            ns = 3;
        for (unsigned i = ns; i < 3; i++) o->src[i] = GCN_OPD_NONE;
        if (oi->attr & GCN_A_VOP3B) {
            o->dst[1] = (w0 >> 8) & 0x7f;
        } else {
            o->mods |= ((w0 >> 8) & 7) << GCN_M_ABS_SHIFT;
            if (w0 & (1u << 15)) o->mods |= GCN_M_CLAMP;
        }
        if (oi->attr & GCN_A_VOP3B && (w0 & (1u << 15))) o->mods |= GCN_M_CLAMP;
        o->mods |= ((w1 >> 29) & 7) << GCN_M_NEG_SHIFT;
        o->mods |= ((w1 >> 27) & 3) << GCN_M_OMOD_SHIFT;
        if (oi->fmt == GCN_FMT_VOPC || op == GCN_OP_v_readlane_b32 || op == GCN_OP_v_readfirstlane_b32)
            o->dst[0] = vdst;
        else if (oi->dw)
            o->dst[0] = GCN_OPD_VGPR + vdst;
        if (op == GCN_OP_v_mac_f32 || op == GCN_OP_v_mac_f16) o->src[2] = o->dst[0];
        break;
    }
    case GCN_FMT_VINTRP:
        o->dst[0] = GCN_OPD_VGPR + ((w0 >> 18) & 0xff);
        o->src[0] = GCN_OPD_VGPR + (w0 & 0xff);
        o->imm = (w0 >> 8) & 0x3ff; /* attr chan / attr */
        break;
    case GCN_FMT_DS:
        o->imm = w0 & 0xffff; /* offset0 | offset1 << 8 */
        o->imm2 = (w0 >> 8) & 0xff;
        if (w0 & (1u << 16)) { o->mods |= GCN_M_GDS; o->flags |= GCN_IF_GDS; }
        o->src[0] = GCN_OPD_VGPR + (w1 & 0xff);
        if (oi->sw[1]) o->src[1] = GCN_OPD_VGPR + ((w1 >> 8) & 0xff);
        if (oi->sw[2]) o->src[2] = GCN_OPD_VGPR + ((w1 >> 16) & 0xff);
        if (oi->dw) o->dst[0] = GCN_OPD_VGPR + ((w1 >> 24) & 0xff);
        break;
    case GCN_FMT_FLAT:
        if (w0 & (1u << 16)) o->mods |= GCN_M_GLC;
        if (w0 & (1u << 17)) o->mods |= GCN_M_SLC;
        if (w1 & (1u << 23)) o->mods |= GCN_M_TFE;
        o->src[0] = GCN_OPD_VGPR + (w1 & 0xff);
        if (oi->flags & GCN_IF_STORE) o->src[1] = GCN_OPD_VGPR + ((w1 >> 8) & 0xff);
        if ((oi->flags & GCN_IF_LOAD) && (!(oi->flags & GCN_IF_ATOMIC) || (o->mods & GCN_M_GLC)))
            o->dst[0] = GCN_OPD_VGPR + ((w1 >> 24) & 0xff);
        if ((oi->flags & GCN_IF_ATOMIC) && (o->mods & GCN_M_GLC)) o->flags |= GCN_IF_ATOMIC_RTN;
        break;
    case GCN_FMT_MUBUF:
    case GCN_FMT_MTBUF:
        o->imm = w0 & 0xfff;
        if (w0 & (1u << 12)) o->mods |= GCN_M_OFFEN;
        if (w0 & (1u << 13)) o->mods |= GCN_M_IDXEN;
        if (w0 & (1u << 14)) o->mods |= GCN_M_GLC;
        if (fmt == GCN_FMT_MUBUF) {
            if (w0 & (1u << 16)) o->mods |= GCN_M_LDS;
            if (w0 & (1u << 17)) o->mods |= GCN_M_SLC;
        } else {
            o->imm2 = (w0 >> 19) & 0x7f; /* dfmt | nfmt << 4 */
            if (w1 & (1u << 22)) o->mods |= GCN_M_SLC;
        }
        if (w1 & (1u << 23)) o->mods |= GCN_M_TFE;
        o->src[0] = GCN_OPD_VGPR + (w1 & 0xff);
        if (oi->flags & GCN_IF_STORE) o->src[1] = GCN_OPD_VGPR + ((w1 >> 8) & 0xff);
        if ((oi->flags & GCN_IF_LOAD) && (!(oi->flags & GCN_IF_ATOMIC) || (o->mods & GCN_M_GLC)))
            o->dst[0] = GCN_OPD_VGPR + ((w1 >> 8) & 0xff);
        o->src[2] = (uint16_t)(((w1 >> 16) & 0x1f) << 2);
        o->src[3] = (w1 >> 24) & 0xff;
        if ((oi->flags & GCN_IF_ATOMIC) && (o->mods & GCN_M_GLC)) o->flags |= GCN_IF_ATOMIC_RTN;
        /* HIP on gfx803 uses MUBUF only for the private segment, through the
         * private segment buffer V# the ABI puts in s[0:3] */
        if (o->src[2] == 0 && (oi->flags & (GCN_IF_LOAD | GCN_IF_STORE))) o->flags |= GCN_IF_SCRATCH;
        break;
    case GCN_FMT_MIMG:
    case GCN_FMT_EXP:
        o->imm = w0;
        o->imm2 = w1;
        break;
    }
    /* literal constant (VI: only SOP*, VOP1/2/C; VOP3 cannot carry one) */
    for (unsigned i = 0; i < nsrc; i++) {
        if (o->src[i] == GCN_OPD_LIT && fmt != GCN_FMT_VOP3 &&
            !((op == GCN_OP_v_madmk_f32 || op == GCN_OP_v_madmk_f16) && i == 1) &&
            !((op == GCN_OP_v_madak_f32 || op == GCN_OP_v_madak_f16) && i == 2)) {
            goto has_lit;
        }
    }
    if (op == GCN_OP_v_madmk_f32 || op == GCN_OP_v_madak_f32 || op == GCN_OP_v_madmk_f16 ||
        op == GCN_OP_v_madak_f16)
        goto has_lit;
    goto no_lit;
has_lit:
    if (o->size / 4 >= n_words) { set_invalid(o, words, pc); return 4; }
    o->literal = words[o->size / 4];
    o->size += 4;
no_lit:
    for (int i = 0; i < 2; i++)
        if (o->dst[i] != GCN_OPD_NONE && is_exec_code(o->dst[i], i == 0 ? (oi->dw ? oi->dw : 1) : 2))
            o->flags |= GCN_IF_WRITES_EXEC;
    if (op == GCN_OP_s_mov_b64 || op == GCN_OP_s_setpc_b64) { /* nothing special */ }
    o->handler = &gcn_sem_handlers ? (void *)gcn_sem_handlers[op] : NULL;
    return o->size;
}

/* ---- program ------------------------------------------------------------- */

gcn_program *gcn_program_decode(const uint8_t *text, size_t len, uint64_t vaddr)
{
    gcn_program *p = calloc(1, sizeof *p);
    if (!p) { errno = ENOMEM; return NULL; }
    size_t nw = len / 4;
    p->vaddr = vaddr;
    p->size = len;
    p->insn = malloc((nw ? nw : 1) * sizeof *p->insn);
    p->index_of = malloc((nw ? nw : 1) * sizeof *p->index_of);
    uint32_t *words = malloc((nw + 2) * sizeof *words);
    if (!p->insn || !p->index_of || !words) {
        free(words);
        gcn_program_free(p);
        errno = ENOMEM;
        return NULL;
    }
    memcpy(words, text, nw * 4);
    words[nw] = words[nw + 1] = 0;
    size_t i = 0;
    while (i < nw) {
        gcn_insn *in = &p->insn[p->n_insn];
        int sz = gcn_decode_one(words + i, nw - i, vaddr + i * 4, in);
        unsigned k = (unsigned)sz / 4;
        p->index_of[i] = (uint32_t)p->n_insn;
        for (unsigned j = 1; j < k; j++) p->index_of[i + j] = UINT32_MAX;
        p->n_insn++;
        i += k;
    }
    free(words);
    return p;
}

void gcn_program_free(gcn_program *p)
{
    if (!p) return;
    free(p->insn);
    free(p->index_of);
    free(p);
}

const gcn_insn *gcn_program_at(const gcn_program *p, uint64_t pc)
{
    if (!p || pc < p->vaddr || (pc - p->vaddr) & 3 || pc - p->vaddr >= (p->size & ~(uint64_t)3)) return NULL;
    uint32_t i = p->index_of[(pc - p->vaddr) / 4];
    return i == UINT32_MAX ? NULL : &p->insn[i];
}

const char *gcn_op_name(unsigned op)
{
    return op < GCN_OP_COUNT ? gcn_op_infos[op].name : "<bad op>";
}

const char *gcn_unit_name(unsigned unit)
{
    static const char *const n[GCN_UNIT_COUNT] = {"salu", "smem", "valu", "vmem", "lds", "branch", "special", "export"};
    return unit < GCN_UNIT_COUNT ? n[unit] : "<bad unit>";
}

/* ---- disassembler (llvm-objdump syntax) ---------------------------------- */

typedef struct sbuf { char *p; size_t n, len; } sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *dst = b->len < b->n ? b->p + b->len : NULL;
    int r = vsnprintf(dst, dst ? b->n - b->len : 0, fmt, ap);
    va_end(ap);
    if (r > 0) b->len += (size_t)r;
}

static const char *special_name(unsigned c, unsigned width)
{
    static const char *const lo[] = {[102] = "flat_scratch_lo", [103] = "flat_scratch_hi", [104] = "xnack_mask_lo",
                                     [105] = "xnack_mask_hi", [106] = "vcc_lo", [107] = "vcc_hi", [108] = "tba_lo",
                                     [109] = "tba_hi", [110] = "tma_lo", [111] = "tma_hi", [124] = "m0",
                                     [126] = "exec_lo", [127] = "exec_hi"};
    if (width == 2) {
        switch (c) {
        case 102: return "flat_scratch";
        case 104: return "xnack_mask";
        case 106: return "vcc";
        case 108: return "tba";
        case 110: return "tma";
        case 126: return "exec";
        }
    }
    return c < 128 && lo[c] ? lo[c] : NULL;
}

static void put_operand(sbuf *b, const gcn_insn *in, unsigned c, unsigned width, int is_f64)
{
    if (width == 0) width = 1;
    if (c >= GCN_OPD_VGPR && c < GCN_OPD_VGPR + 256) {
        unsigned r = c - GCN_OPD_VGPR;
        if (width == 1) put(b, "v%u", r);
        else put(b, "v[%u:%u]", r, r + width - 1);
        return;
    }
    if (c <= 101) {
        if (width == 1) put(b, "s%u", c);
        else put(b, "s[%u:%u]", c, c + width - 1);
        return;
    }
    if (c >= 112 && c <= 123) {
        if (width == 1) put(b, "ttmp%u", c - 112);
        else put(b, "ttmp[%u:%u]", c - 112, c - 112 + width - 1);
        return;
    }
    const char *sp = special_name(c, width);
    if (sp) { put(b, "%s", sp); return; }
    if (c >= 128 && c <= 192) { put(b, "%u", c - 128); return; }
    if (c >= 193 && c <= 208) { put(b, "-%u", c - 192); return; }
    static const char *const fl[] = {"0.5", "-0.5", "1.0", "-1.0", "2.0", "-2.0", "4.0", "-4.0", "0.15915494"};
    if (c >= 240 && c <= 248) { put(b, "%s", fl[c - 240]); return; }
    if (c == GCN_OPD_VCCZ) { put(b, "vccz"); return; }
    if (c == GCN_OPD_EXECZ) { put(b, "execz"); return; }
    if (c == GCN_OPD_SCC) { put(b, "scc"); return; }
    if (c == GCN_OPD_LIT) { /* llvm prints inlinable values of a literal as such */
        int32_t v = (int32_t)in->literal;
        if (v >= -16 && v <= 64) put(b, "%d", v);
        else put(b, "0x%x", in->literal);
        (void)is_f64;
        return;
    }
    put(b, "<opd %u>", c);
}

static void put_src_mod(sbuf *b, const gcn_insn *in, unsigned i, unsigned width)
{
    int neg = (in->mods >> (GCN_M_NEG_SHIFT + i)) & 1, abs_ = (in->mods >> (GCN_M_ABS_SHIFT + i)) & 1;
    if (neg) put(b, "-");
    if (abs_) put(b, "|");
    put_operand(b, in, in->src[i], width, 0);
    if (abs_) put(b, "|");
}

int gcn_disasm(const gcn_insn *in, char *buf, size_t n)
{
    sbuf b = {buf, n, 0};
    if (n) buf[0] = 0;
    const gcn_op_info *oi = &gcn_op_infos[in->op < GCN_OP_COUNT ? in->op : 0];
    if (in->flags & GCN_IF_INVALID && in->op == GCN_OP_INVALID) {
        put(&b, ".long 0x%08x", in->literal);
        return (int)b.len;
    }
    const char *sfx = "";
    if (oi->fmt == GCN_FMT_VOP1 || oi->fmt == GCN_FMT_VOP2 || oi->fmt == GCN_FMT_VOPC || oi->fmt == GCN_FMT_VINTRP) {
        sfx = (in->mods & GCN_M_E64) ? "_e64" : (in->mods & GCN_M_SDWA) ? "_sdwa" : (in->mods & GCN_M_DPP) ? "_dpp" : "_e32";
        if (in->op == GCN_OP_v_madmk_f32 || in->op == GCN_OP_v_madak_f32 || in->op == GCN_OP_v_madmk_f16 ||
            in->op == GCN_OP_v_madak_f16 || in->op == GCN_OP_v_nop || in->op == GCN_OP_v_clrexcp ||
            in->op == GCN_OP_v_readfirstlane_b32)
            sfx = "";
    }
    put(&b, "%s%s", oi->name, sfx);
    int first = 1;
#define SEP() do { put(&b, first ? " " : ", "); first = 0; } while (0)
    switch (in->fmt) {
    case GCN_FMT_SOP2: case GCN_FMT_SOP1: case GCN_FMT_SOPC:
        if (in->dst[0] != GCN_OPD_NONE) { SEP(); put_operand(&b, in, in->dst[0], oi->dw, 0); }
        for (int i = 0; i < 2; i++)
            if (in->src[i] != GCN_OPD_NONE && oi->sw[i]) { SEP(); put_operand(&b, in, in->src[i], oi->sw[i], 0); }
        break;
    case GCN_FMT_SOPK:
        if (in->op == GCN_OP_s_getreg_b32 || in->op == GCN_OP_s_setreg_b32 || in->op == GCN_OP_s_setreg_imm32_b32) {
            static const char *const hw[] = {NULL, "HW_REG_MODE", "HW_REG_STATUS", "HW_REG_TRAPSTS", "HW_REG_HW_ID",
                                             "HW_REG_GPR_ALLOC", "HW_REG_LDS_ALLOC", "HW_REG_IB_STS"};
            unsigned id = in->imm & 0x3f, off = (in->imm >> 6) & 0x1f, sz = ((in->imm >> 11) & 0x1f) + 1;
            char h[48];
            if (id < 8 && hw[id]) snprintf(h, sizeof h, "hwreg(%s, %u, %u)", hw[id], off, sz);
            else snprintf(h, sizeof h, "hwreg(%u, %u, %u)", id, off, sz);
            if (in->op == GCN_OP_s_getreg_b32) { SEP(); put_operand(&b, in, in->dst[0], 1, 0); SEP(); put(&b, "%s", h); }
            else if (in->op == GCN_OP_s_setreg_b32) { SEP(); put(&b, "%s", h); SEP(); put_operand(&b, in, in->src[0], 1, 0); }
            else { SEP(); put(&b, "%s", h); SEP(); put(&b, "0x%x", in->literal); }
        } else {
            SEP(); put_operand(&b, in, in->dst[0] != GCN_OPD_NONE ? in->dst[0] : in->src[0], 1, 0);
            SEP(); put(&b, "0x%x", in->imm);
        }
        break;
    case GCN_FMT_SOPP:
        if (in->flags & GCN_IF_WAITCNT) {
            int any = 0;
            if (in->waitcnt_vm != 0xf) { put(&b, " vmcnt(%u)", in->waitcnt_vm); any = 1; }
            if (in->waitcnt_exp != 0x7) { put(&b, " expcnt(%u)", in->waitcnt_exp); any = 1; }
            if (in->waitcnt_lgkm != 0xf) { put(&b, " lgkmcnt(%u)", in->waitcnt_lgkm); any = 1; }
            if (!any) put(&b, " 0x%x", in->imm);
        } else if (in->op == GCN_OP_s_endpgm || in->op == GCN_OP_s_barrier || in->op == GCN_OP_s_wakeup ||
                   in->op == GCN_OP_s_icache_inv || in->op == GCN_OP_s_ttracedata ||
                   in->op == GCN_OP_s_endpgm_saved || in->op == GCN_OP_s_set_gpr_idx_off) {
        } else if (in->op == GCN_OP_s_sendmsg) {
            static const char *const msg[] = {NULL, "MSG_INTERRUPT", "MSG_GS", "MSG_GS_DONE", NULL, NULL, NULL, NULL,
                                              NULL, NULL, NULL, NULL, NULL, NULL, NULL, "MSG_SYSMSG"};
            unsigned id = in->imm & 0xf;
            if (msg[id] && (id == 1 || id == 15)) put(&b, " sendmsg(%s)", msg[id]);
            else put(&b, " sendmsg(%u, %u, %u)", id, (in->imm >> 4) & 3, (in->imm >> 8) & 3);
        } else if (in->flags & (GCN_IF_BR_COND | GCN_IF_BR_JUMP)) {
            put(&b, " %u", in->imm & 0xffff);
        } else {
            put(&b, " %u", in->imm);
        }
        break;
    case GCN_FMT_SMEM:
        if (in->dst[0] != GCN_OPD_NONE) { SEP(); put_operand(&b, in, in->dst[0], oi->dw, 0); }
        if (in->src[2] != GCN_OPD_NONE) { SEP(); put_operand(&b, in, in->src[2], oi->sw[0], 0); }
        if (oi->flags & (GCN_IF_LOAD | GCN_IF_STORE)) {
            SEP(); put_operand(&b, in, in->src[0], strstr(oi->name, "buffer") ? 4 : 2, 0);
            SEP();
            if (in->mods & GCN_M_SMEM_IMM) put(&b, "0x%x", in->imm);
            else put_operand(&b, in, in->src[1], 1, 0);
        }
        if (in->mods & GCN_M_GLC) put(&b, " glc");
        break;
    case GCN_FMT_VOP1: case GCN_FMT_VOP2: case GCN_FMT_VOPC: case GCN_FMT_VOP3: {
        if (in->dst[0] != GCN_OPD_NONE) { SEP(); put_operand(&b, in, in->dst[0], oi->fmt == GCN_FMT_VOPC ? 2 : oi->dw, 0); }
        else if (oi->fmt == GCN_FMT_VOPC && !(in->mods & GCN_M_E64)) { SEP(); put(&b, "vcc"); }
        if (in->dst[1] != GCN_OPD_NONE) { SEP(); put_operand(&b, in, in->dst[1], 2, 0); }
        int nsrc = 3;
        for (int i = 0; i < nsrc; i++) {
            if (in->src[i] == GCN_OPD_NONE) continue;
            if (in->op == GCN_OP_v_mac_f32 || in->op == GCN_OP_v_mac_f16) { if (i == 2) continue; }
            unsigned wd = oi->sw[i] ? oi->sw[i] : (i == 2 ? 2 : 1);
            SEP();
            put_src_mod(&b, in, (unsigned)i, wd);
        }
        if (in->mods & GCN_M_CLAMP) put(&b, " clamp");
        switch ((in->mods >> GCN_M_OMOD_SHIFT) & 3) {
        case 1: put(&b, " mul:2"); break;
        case 2: put(&b, " mul:4"); break;
        case 3: put(&b, " div:2"); break;
        }
        if (in->mods & GCN_M_SDWA) put(&b, " sdwa:0x%x", in->imm2 >> 8);
        if (in->mods & GCN_M_DPP) put(&b, " dpp_ctrl:0x%x row_mask:0x%x bank_mask:0x%x", (in->imm2 >> 8) & 0x1ff,
                                      in->imm2 >> 28, (in->imm2 >> 24) & 0xf);
        break;
    }
    case GCN_FMT_DS: {
        if (in->dst[0] != GCN_OPD_NONE) { SEP(); put_operand(&b, in, in->dst[0], oi->dw, 0); }
        SEP(); put_operand(&b, in, in->src[0], 1, 0);
        if (in->src[1] != GCN_OPD_NONE) { SEP(); put_operand(&b, in, in->src[1], oi->sw[1], 0); }
        if (in->src[2] != GCN_OPD_NONE) { SEP(); put_operand(&b, in, in->src[2], oi->sw[2], 0); }
        int two = strstr(oi->name, "2_") || strstr(oi->name, "2st64");
        if (two) {
            if (in->imm & 0xff) put(&b, " offset0:%u", in->imm & 0xff);
            if (in->imm >> 8) put(&b, " offset1:%u", in->imm >> 8);
        } else if (in->imm) put(&b, " offset:%u", in->imm);
        if (in->mods & GCN_M_GDS) put(&b, " gds");
        break;
    }
    case GCN_FMT_FLAT:
        if (in->dst[0] != GCN_OPD_NONE) { SEP(); put_operand(&b, in, in->dst[0], oi->dw, 0); }
        SEP(); put_operand(&b, in, in->src[0], 2, 0);
        if (in->src[1] != GCN_OPD_NONE) { SEP(); put_operand(&b, in, in->src[1], oi->sw[1], 0); }
        if (in->mods & GCN_M_GLC) put(&b, " glc");
        if (in->mods & GCN_M_SLC) put(&b, " slc");
        break;
    case GCN_FMT_MUBUF: case GCN_FMT_MTBUF:
        if (oi->flags & (GCN_IF_LOAD | GCN_IF_STORE)) {
            unsigned vd = in->dst[0] != GCN_OPD_NONE ? in->dst[0] : in->src[1];
            SEP(); put_operand(&b, in, vd, in->dst[0] != GCN_OPD_NONE ? oi->dw : oi->sw[1], 0);
            SEP();
            unsigned na = !!(in->mods & GCN_M_OFFEN) + !!(in->mods & GCN_M_IDXEN);
            if (na == 0) put(&b, "off");
            else put_operand(&b, in, in->src[0], na, 0);
            SEP(); put_operand(&b, in, in->src[2], 4, 0);
            SEP(); put_operand(&b, in, in->src[3], 1, 0);
            if (in->mods & GCN_M_IDXEN) put(&b, " idxen");
            if (in->mods & GCN_M_OFFEN) put(&b, " offen");
            if (in->imm) put(&b, " offset:%u", in->imm);
            if (in->mods & GCN_M_GLC) put(&b, " glc");
            if (in->mods & GCN_M_SLC) put(&b, " slc");
            if (in->mods & GCN_M_LDS) put(&b, " lds");
        }
        break;
    default:
        put(&b, " 0x%08x 0x%08x", in->imm, in->imm2);
        break;
    }
#undef SEP
    return (int)b.len;
}
