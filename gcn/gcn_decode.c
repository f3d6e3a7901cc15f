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
 * Words that LLVM 14 rejects for gfx803 because an operand is reserved or out
 * of range (operands_valid(): reserved SSRC codes, register tuples past the
 * register file, literals in VOP3, SDWA/DPP forms an op does not have) decode
 * as GCN_IF_INVALID too, so the disassembly matches llvm-objdump's ".long".
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
#define GCN_OP(nm, fmt_, opc_, unit_, flags_, mem_, dw_, sw_, attr_, aop_, elem_, seg_, vcls_)   \
    [GCN_OP_##nm] = {.name = #nm, .fmt = fmt_, .unit = unit_, .mem = mem_, .dw = dw_,        \
                     .sw = {sw_}, .attr = attr_, .opc = opc_, .flags = flags_, .aop = aop_,   \
                     .elem_bytes = GCN_ARG0(elem_), .elem_count = GCN_ARG1(elem_),               \
                     .elem_scale = GCN_ARG2(elem_), .seg = seg_, .vcls = vcls_},
#include "gcn3.def"
#undef GCN_OP
};

const gcn_op_info *gcn_op_info_of(unsigned op)
{
    return &gcn_op_infos[op < GCN_OP_COUNT ? op : GCN_OP_INVALID];
}

const char *gcn_fmt_name(unsigned fmt)
{
    static const char *const n[GCN_FMT_COUNT] = {
        [GCN_FMT_INVALID] = "invalid", [GCN_FMT_SOP2] = "sop2",   [GCN_FMT_SOPK] = "sopk",
        [GCN_FMT_SOP1] = "sop1",       [GCN_FMT_SOPC] = "sopc",   [GCN_FMT_SOPP] = "sopp",
        [GCN_FMT_SMEM] = "smem",       [GCN_FMT_VOP2] = "vop2",   [GCN_FMT_VOP1] = "vop1",
        [GCN_FMT_VOPC] = "vopc",       [GCN_FMT_VOP3] = "vop3",   [GCN_FMT_VINTRP] = "vintrp",
        [GCN_FMT_DS] = "ds",           [GCN_FMT_MUBUF] = "mubuf", [GCN_FMT_MTBUF] = "mtbuf",
        [GCN_FMT_FLAT] = "flat",       [GCN_FMT_MIMG] = "mimg",   [GCN_FMT_EXP] = "exp",
    };
    return fmt < GCN_FMT_COUNT && n[fmt] ? n[fmt] : "?";
}

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
            /* GDS-only DS ops need gds=1 (and bit 25 clear); buffer_store_lds_dword needs lds=1 */
            if ((oi->fmt == GCN_FMT_DS && (oi->flags & GCN_IF_GDS)) || op == GCN_OP_buffer_store_lds_dword) {
                m |= 1u << 16 | (oi->fmt == GCN_FMT_DS ? 1u << 25 : 0);
                v |= 1u << 16;
            }
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

/* Scalar operand code c used as a `width`-dword operand: a register tuple that
 * exists (SGPRs end at s101, trap temporaries at ttmp11; 64-bit special
 * registers are the even halves of flat_scratch, xnack_mask, vcc, tba, tma,
 * exec), or (sources) an inline constant / literal. Codes 209-234 and
 * 249-250 are reserved (GCN3 ISA manual Sec. 12.1 SSRC). */
static int scalar_ok(unsigned c, unsigned width, int is_src)
{
    if (c >= GCN_OPD_VGPR) return c != GCN_OPD_NONE || !is_src ? 1 : 1;
    if (width == 0) width = 1;
    unsigned al = width >= 4 ? 4 : width;
    if (c <= 101) return (c & ~(al - 1)) + width - 1 <= (width >= 4 ? 103u : 101u); /* LLVM: s[100:103] */
    if (width >= 4 && c < 128) return c >= 102; /* LLVM prints flat_scratch, null, ... for wide tuples */
    if (c >= 112 && c <= 123) return (c & ~(al - 1)) + width - 1 <= 127; /* LLVM knows ttmp[0:15] */
    if (c < 128) {
        if (width == 1) return 1;
        return width == 2 && (c == 102 || c == 104 || c == 106 || c == 108 || c == 110 || c == 125 || c == 126);
    }
    if (!is_src) return 0;
    if (c <= 208 || (c >= 240 && c <= 248) || c == 255) return 1;
    return (c >= 235 && c <= 239) || (c >= 251 && c <= 254); /* src_shared_base.., src_vccz/execz/scc, lds_direct */
}

/* Encodings LLVM 14 rejects for gfx803 and hardware treats as illegal:
 * reserved or out-of-range operands, VOP3 literals, fields that must be zero. */
static int operands_valid(const gcn_insn *o, const gcn_op_info *oi, uint32_t w0, uint32_t w1)
{
    unsigned op = o->op;
    switch (o->fmt) {
    case GCN_FMT_SOP2: case GCN_FMT_SOP1: case GCN_FMT_SOPC: case GCN_FMT_SOPK:
        if (o->dst[0] != GCN_OPD_NONE && !scalar_ok(o->dst[0], oi->dw, 0)) return 0;
        if (o->fmt != GCN_FMT_SOPK && ((o->src[0] == 254 && oi->sw[0] > 1) || (o->src[1] == 254 && oi->sw[1] > 1)))
            return 0; /* no 64-bit lds_direct */
        for (int i = 0; i < 2; i++)
            if (o->src[i] != GCN_OPD_NONE && op != GCN_OP_s_set_gpr_idx_on && o->fmt != GCN_FMT_SOPK &&
                !scalar_ok(o->src[i], oi->sw[i], 1))
                return 0;
        if (o->fmt == GCN_FMT_SOPK && o->src[0] != GCN_OPD_NONE &&
            !scalar_ok(o->src[0], op == GCN_OP_s_cbranch_i_fork ? 2 : 1, 0))
            return 0;
        return 1;
    case GCN_FMT_SOPP:
        if ((op == GCN_OP_s_barrier || op == GCN_OP_s_wakeup || op == GCN_OP_s_icache_inv ||
             op == GCN_OP_s_ttracedata || op == GCN_OP_s_endpgm_saved || op == GCN_OP_s_set_gpr_idx_off) &&
            (w0 & 0xffff))
            return 0;
        return 1;
    case GCN_FMT_SMEM: {
        /* LLVM ignores the unused fields of s_dcache_* / s_memtime but not glc */
        int mem = (oi->flags & (GCN_IF_LOAD | GCN_IF_STORE)) != 0;
        int probe = op == GCN_OP_s_atc_probe || op == GCN_OP_s_atc_probe_buffer;
        /* s_dcache_*, s_memtime: with imm set, every other field but sdata must be 0 (as LLVM 14 decodes) */
        if (!mem && !probe && (w0 & (1u << 17)) && ((w0 & 0x1003f) || w1 || (!oi->dw && ((w0 >> 6) & 0x7f))))
            return 0;
        if (o->dst[0] != GCN_OPD_NONE && !scalar_ok(o->dst[0], oi->dw, 0)) return 0;
        if (o->src[2] != GCN_OPD_NONE && !scalar_ok(o->src[2], oi->sw[0], 0)) return 0;
        if (mem && !(o->mods & GCN_M_SMEM_IMM) && !scalar_ok(o->src[1], 1, 1)) return 0;
        return 1;
    }
    case GCN_FMT_VOP1: case GCN_FMT_VOP2: case GCN_FMT_VOPC:
        if ((op == GCN_OP_v_nop || op == GCN_OP_v_clrexcp) && (w0 & 0x01fe01ff)) return 0;
        if ((o->mods & GCN_M_SDWA) && !(oi->attr & GCN_A_SDWA)) return 0;
        if ((o->mods & GCN_M_DPP) && !(oi->attr & GCN_A_DPP)) return 0;
        if (op == GCN_OP_v_readfirstlane_b32 && !(o->mods & (GCN_M_SDWA | GCN_M_DPP)) &&
            ((o->dst[0] >= 209 && o->dst[0] <= 234) || o->dst[0] == 249 || o->dst[0] == 250))
            return 0;
        if (!(o->mods & (GCN_M_SDWA | GCN_M_DPP)) && o->src[0] < GCN_OPD_VGPR &&
            !scalar_ok(o->src[0], oi->sw[0], 1))
            return 0;
        return 1;
    case GCN_FMT_VOP3:
        for (int i = 0; i < 3; i++) {
            unsigned c = o->src[i];
            if (c == GCN_OPD_NONE || c >= GCN_OPD_VGPR) continue;
            if (c == GCN_OPD_LIT || c == 249 || c == 250) return 0; /* no literal / SDWA / DPP in VOP3 */
            if (!strncmp(oi->name, "v_interp_", 9) && i == 0) continue; /* attr, not an operand */
            if (!scalar_ok(c, oi->sw[i] ? oi->sw[i] : 1, 1)) return 0;
        }
        if ((oi->fmt == GCN_FMT_VOPC || op == GCN_OP_v_readlane_b32 || op == GCN_OP_v_readfirstlane_b32) &&
            !scalar_ok(o->dst[0], oi->fmt == GCN_FMT_VOPC ? 2 : 1, 0))
            return 0;
        if ((oi->attr & GCN_A_VOP3B) && !scalar_ok(o->dst[1], 2, 0)) return 0;
        return 1;
    case GCN_FMT_DS:
        /* GDS-only ops (gcn3.def GCN_IF_GDS): LLVM 14 decodes them only with gds=1 and
         * the fields they do not use zero; the GWS ops name data0 in the ADDR byte */
        if (oi->flags & GCN_IF_GDS) {
            if (!(w0 & (1u << 16)) || (w0 & (1u << 25))) return 0;
            if (op == GCN_OP_ds_ordered_count) return (w1 & 0x00ffff00u) == 0;
            return (w1 & (oi->sw[0] ? 0xffffff00u : 0xffffffffu)) == 0;
        }
        return 1;
    case GCN_FMT_MUBUF: case GCN_FMT_MTBUF:
        if (op == GCN_OP_buffer_store_lds_dword) /* LDS -> memory: only the lds form, no VGPRs */
            return (o->mods & GCN_M_LDS) && !(w0 & 0x3000u) && !(w1 & 0x00e0ffffu) && scalar_ok(o->src[3], 1, 1) &&
                   o->src[2] != 124;
        if (!scalar_ok(o->src[3], 1, 1) || o->src[2] == 124) return 0;
        if (((w1 >> 8) & 0xff) + (oi->dw > oi->sw[1] ? oi->dw : oi->sw[1]) > 256) return 0; /* vdata past v255 */
        /* lds: only loads have LDS forms */
        if ((o->mods & GCN_M_LDS) && (!(oi->flags & GCN_IF_LOAD) || (oi->flags & GCN_IF_ATOMIC))) return 0;
        return 1;
    }
    return 1;
}

/* Operand fields of the scalar formats (SOP2, SOPK, SOP1, SOPC, SOPP, SMEM): ISA manual Sec. 12.1-12.6.
 * Returns how many of src[] may hold a literal constant, or -1 when the
 * instruction needs a second dword that is not there. */
static int dec_scalar(gcn_insn *o, const gcn_op_info *oi, unsigned fmt, unsigned op, unsigned e64, uint32_t w0,
                      uint32_t w1, size_t n_words, uint64_t pc)
{
    int nsrc = 0;
    (void)e64, (void)pc, (void)n_words, (void)op, (void)w1;
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
            if (n_words < 2) return -1;
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
        if (op == GCN_OP_s_atc_probe || op == GCN_OP_s_atc_probe_buffer) o->imm2 = (w0 >> 6) & 0x7f; /* probe mode */
        if (w0 & (1u << 16)) o->mods |= GCN_M_GLC;
        if (w0 & (1u << 17)) { o->mods |= GCN_M_SMEM_IMM; o->imm = w1 & 0xfffff; }
        else o->src[1] = w1 & 0x7f;
        break;
    }
    return nsrc;
}

/* Operand fields of the vector ALU formats (VOP2, VOP1, VOPC with their SDWA/DPP forms, VOP3,
 * VINTRP): ISA manual Sec. 12.7-12.11.
 * Returns how many of src[] may hold a literal constant, or -1 when the
 * instruction needs a second dword that is not there. */
static int dec_vector(gcn_insn *o, const gcn_op_info *oi, unsigned fmt, unsigned op, unsigned e64, uint32_t w0,
                      uint32_t w1, size_t n_words, uint64_t pc)
{
    int nsrc = 0;
    (void)e64, (void)pc, (void)n_words, (void)op, (void)w1;
    switch (fmt) {
    case GCN_FMT_VOP2:
    case GCN_FMT_VOP1:
    case GCN_FMT_VOPC:
        o->src[0] = w0 & 0x1ff;
        if (fmt == GCN_FMT_VOP1 && oi->sw[0] == 0) { /* v_nop, v_clrexcp */
            o->src[0] = GCN_OPD_NONE;
            break;
        }
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
            if (n_words < 2) return -1;
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
    }
    return nsrc;
}

/* Operand fields of the memory and graphics formats (DS, FLAT, MUBUF, MTBUF, MIMG, EXP): ISA
 * manual Sec. 12.12-12.16.
 * Returns how many of src[] may hold a literal constant, or -1 when the
 * instruction needs a second dword that is not there. */
static int dec_memory(gcn_insn *o, const gcn_op_info *oi, unsigned fmt, unsigned op, unsigned e64, uint32_t w0,
                      uint32_t w1, size_t n_words, uint64_t pc)
{
    int nsrc = 0;
    (void)e64, (void)pc, (void)n_words, (void)op, (void)w1;
    switch (fmt) {
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
        if ((oi->flags & GCN_IF_STORE) && oi->sw[1]) o->src[1] = GCN_OPD_VGPR + ((w1 >> 8) & 0xff);
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
    return nsrc;
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

    int nsrc; /* gcn_fmt order: the scalar formats, then vector ALU, then memory (gcn_isa.h) */
    if (fmt <= GCN_FMT_SMEM)
        nsrc = dec_scalar(o, oi, fmt, op, e64, w0, w1, n_words, pc);
    else if (fmt <= GCN_FMT_VINTRP)
        nsrc = dec_vector(o, oi, fmt, op, e64, w0, w1, n_words, pc);
    else
        nsrc = dec_memory(o, oi, fmt, op, e64, w0, w1, n_words, pc);
    if (nsrc < 0) {
        set_invalid(o, words, pc);
        return 4;
    }
    /* literal constant (VI: only SOP*, VOP1/2/C; VOP3 cannot carry one) */
    for (int i = 0; i < nsrc; i++) {
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
    if (!operands_valid(o, oi, w0, w1)) {
        set_invalid(o, words, pc);
        return 4;
    }
    for (int i = 0; i < 2; i++)
        if (o->dst[i] != GCN_OPD_NONE && is_exec_code(o->dst[i], i == 0 ? (oi->dw ? oi->dw : 1) : 2))
            o->flags |= GCN_IF_WRITES_EXEC;
    if (op == GCN_OP_s_mov_b64 || op == GCN_OP_s_setpc_b64) { /* nothing special */ }
    return o->size;
}

/* ---- program ------------------------------------------------------------- */

/* ---- targets ------------------------------------------------------------- */

static const gcn_target targets[] = {
    {"gfx803", "GCN3", gcn_op_infos, GCN_OP_COUNT},
};
/* gfx8 processors with the encodings of gfx803 (LLVM AMDGPUUsage: GFX8). */
static const char *const gfx8_alias[] = {"gfx801", "gfx802", "gfx810"};

const gcn_target *gcn_target_find(const char *s)
{
    if (!s)
        return NULL;
    /* the processor: before any ':feature', after the last '-' of a triple */
    size_t end = strcspn(s, ":");
    const char *p = s;
    for (size_t i = 0; i < end; i++)
        if (s[i] == '-')
            p = s + i + 1;
    size_t n = (size_t)(s + end - p);
    for (size_t i = 0; i < sizeof targets / sizeof *targets; i++)
        if (strlen(targets[i].name) == n && !strncmp(p, targets[i].name, n))
            return &targets[i];
    for (size_t i = 0; i < sizeof gfx8_alias / sizeof *gfx8_alias; i++)
        if (strlen(gfx8_alias[i]) == n && !strncmp(p, gfx8_alias[i], n))
            return &targets[0];
    return NULL;
}

static char target_names[160];
static void build_target_names(void)
{
    size_t o = 0;
    for (size_t i = 0; i < sizeof targets / sizeof *targets; i++)
        o += (size_t)snprintf(target_names + o, sizeof target_names - o, "%s%s", i ? ", " : "", targets[i].name);
    for (size_t i = 0; i < sizeof gfx8_alias / sizeof *gfx8_alias && o < sizeof target_names; i++)
        o += (size_t)snprintf(target_names + o, sizeof target_names - o, "%s%s", i ? ", " : " (also ", gfx8_alias[i]);
    if (o < sizeof target_names)
        snprintf(target_names + o, sizeof target_names - o, ")");
}

const char *gcn_target_names(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, build_target_names);
    return target_names;
}

gcn_program *gcn_program_decode(const gcn_target *t, const uint8_t *text, size_t len, uint64_t vaddr)
{
    gcn_program *p = calloc(1, sizeof *p);
    if (!p) { errno = ENOMEM; return NULL; }
    /* one table today: every target found decodes with it */
    p->target = t ? t : &targets[0];
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
    /* loop heads: targets of backward branches (the emulator's awaits) */
    for (size_t j = 0; j < p->n_insn; j++) {
        const gcn_insn *b = &p->insn[j];
        if (!(b->flags & (GCN_IF_BR_COND | GCN_IF_BR_JUMP)) || b->target > b->pc || b->target < vaddr)
            continue;
        uint64_t off = b->target - vaddr;
        if (off / 4 < len / 4 && !(off & 3) && p->index_of[off / 4] != UINT32_MAX)
            p->insn[p->index_of[off / 4]].flags |= GCN_IF_LOOP_HEAD;
    }
    gcn_program_mark_poll_exits(p); /* GCN_IF_POLL_EXIT: the loops that can wait */
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

/* ---- disassembler (llvm-objdump syntax) ----------------------------------
 *
 * Prints exactly what LLVM 14's AMDGPUInstPrinter prints for gfx803 (checked
 * by tests/e2e/objdump-diff.sh against llvm-objdump over an opcode corpus and
 * random words). Immediates follow printImmediate16/32/64: an operand's
 * width and float-ness come from the op's type suffixes (src_type()).
 */

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
                                     [125] = "null", [126] = "exec_lo", [127] = "exec_hi"};
    if (width >= 2) {
        switch (c) {
        case 102: return "flat_scratch";
        case 104: return "xnack_mask";
        case 106: return "vcc";
        case 108: return "tba";
        case 110: return "tma";
        case 125: return "null";
        case 126: return "exec";
        }
        return NULL;
    }
    return c < 128 && lo[c] ? lo[c] : NULL;
}

/* Operand type of source i: float or integer, and width in bits (16, 32, 64)
 * for printing immediates, from the type suffixes of the mnemonic as in LLVM's
 * VOP profiles (v_cvt_f32_f16: source f16; v_add_f16: f16; v_ldexp_*,
 * v_cmp_class_* and v_trig_preop_f64: integer second source). */
static void src_type(unsigned op, unsigned i, int *is_float, unsigned *bits)
{
    const gcn_op_info *oi = &gcn_op_infos[op];
    const char *n = oi->name;
    char last = 'u';
    unsigned lbits = 32;
    for (const char *p = strchr(n, '_'); p; p = strchr(p + 1, '_')) {
        char k = p[1];
        if ((k == 'f' || k == 'i' || k == 'u' || k == 'b') && p[2] >= '0' && p[2] <= '9') {
            last = k;
            lbits = (unsigned)atoi(p + 2);
        } else if (!strncmp(p + 1, "ubyte", 5)) {
            last = 'u';
            lbits = 32;
        }
    }
    *is_float = last == 'f';
    *bits = lbits == 16 ? (last == 'f' ? 16 : 17) : lbits == 64 ? 64 : 32;
    if (!strcmp(n, "v_sad_u16")) { /* VOP_I32_I32_I32_I32 in LLVM */
        *is_float = 0;
        *bits = 32;
        return;
    }
    if (i == 1 && (strstr(n, "_class_") || strstr(n, "v_ldexp_") || !strcmp(n, "v_trig_preop_f64") ||
                   !strcmp(n, "v_cvt_pkaccum_u8_f32"))) {
        *is_float = 0;
        *bits = 32;
    }
    if (i < 3 && oi->sw[i] == 2) *bits = 64;
    else if (*bits == 64) *bits = 32;
    if (*bits == 17 && *is_float) *bits = 16;
}

/* LLVM printImmediate16/32/64 (bits 16/32/64) and printImmediateInt16
 * (bits 17: 16-bit integer operand) of a value. */
static void put_imm(sbuf *b, uint32_t v, unsigned bits)
{
    if (bits == 17) {
        int16_t s = (int16_t)v;
        if (s >= -16 && s <= 64) put(b, "%d", s);
        else put(b, "0x%x", v);
        return;
    }
    if (bits == 64) {
        if (v <= 64) put(b, "%u", v);
        else put(b, "0x%x", v);
        return;
    }
    if (bits == 16) {
        int16_t s = (int16_t)v;
        static const struct { uint32_t v; const char *s; } h[] = {
            {0x3800, "0.5"}, {0xb800, "-0.5"}, {0x3c00, "1.0"}, {0xbc00, "-1.0"}, {0x4000, "2.0"},
            {0xc000, "-2.0"}, {0x4400, "4.0"}, {0xc400, "-4.0"}, {0x3118, "0.15915494"}};
        if (s >= -16 && s <= 64) { put(b, "%d", s); return; }
        for (size_t k = 0; k < sizeof h / sizeof h[0]; k++)
            if (v == h[k].v) { put(b, "%s", h[k].s); return; }
        put(b, "0x%x", v);
        return;
    }
    static const struct { uint32_t v; const char *s; } f[] = {
        {0x3f000000, "0.5"}, {0xbf000000, "-0.5"}, {0x3f800000, "1.0"}, {0xbf800000, "-1.0"}, {0x40000000, "2.0"},
        {0xc0000000, "-2.0"}, {0x40800000, "4.0"}, {0xc0800000, "-4.0"}, {0x3e22f983, "0.15915494"}};
    int32_t s = (int32_t)v;
    if (s >= -16 && s <= 64) { put(b, "%d", s); return; }
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
        if (v == f[k].v) { put(b, "%s", f[k].s); return; }
    put(b, "0x%x", v);
}

/* Is operand code c an immediate (inline constant or literal)? */
static int is_imm_code(unsigned c)
{
    return (c >= 128 && c <= 208) || (c >= 240 && c <= 248) || c == GCN_OPD_LIT;
}

/* One operand of `width` dwords; bits = immediate width (16/32/64). */
static void put_opd(sbuf *b, const gcn_insn *in, unsigned c, unsigned width, unsigned bits)
{
    if (width == 0) width = 1;
    if (c >= GCN_OPD_VGPR && c < GCN_OPD_VGPR + 256) {
        unsigned r = c - GCN_OPD_VGPR;
        if (width == 1) put(b, "v%u", r);
        else put(b, "v[%u:%u]", r, r + width - 1);
        return;
    }
    /* scalar tuples are aligned (LLVM decodes s[1:2] as s[0:1]) */
    unsigned al = width >= 4 ? 4 : width;
    if (c <= 101) {
        if (width == 1) put(b, "s%u", c);
        else { c &= ~(al - 1); put(b, "s[%u:%u]", c, c + width - 1); }
        return;
    }
    if (c >= 112 && c <= 123) {
        unsigned t = c - 112;
        if (width == 1) put(b, "ttmp%u", t);
        else { t &= ~(al - 1); put(b, "ttmp[%u:%u]", t, t + width - 1); }
        return;
    }
    const char *sp = special_name(c, width);
    if (sp) { put(b, "%s", sp); return; }
    if (c >= 128 && c <= 192) { put(b, "%u", c - 128); return; }
    if (c >= 193 && c <= 208) { put(b, "-%u", c - 192); return; }
    static const char *const fl[] = {"0.5", "-0.5", "1.0", "-1.0", "2.0", "-2.0", "4.0", "-4.0", "0.15915494"};
    static const uint16_t h16[] = {0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118};
    if (c >= 240 && c <= 248 && bits == 17) { put(b, "0x%x", h16[c - 240]); return; }
    if (c >= 240 && c <= 248) { put(b, "%s", c == 248 && bits == 64 ? "0.15915494309189532" : fl[c - 240]); return; }
    static const char *const src_special[] = {"src_shared_base", "src_shared_limit", "src_private_base",
                                              "src_private_limit", "src_pops_exiting_wave_id"};
    if (c >= 235 && c <= 239) { put(b, "%s", src_special[c - 235]); return; }
    if (c == 254) { put(b, "src_lds_direct"); return; }
    if (c == GCN_OPD_VCCZ) { put(b, "src_vccz"); return; }
    if (c == GCN_OPD_EXECZ) { put(b, "src_execz"); return; }
    if (c == GCN_OPD_SCC) { put(b, "src_scc"); return; }
    if (c == GCN_OPD_LIT) { put_imm(b, bits == 16 || bits == 17 ? in->literal & 0xffff : in->literal, bits); return; }
    put(b, "<invalid operand %u>", c);
}

static void put_hwreg(sbuf *b, unsigned imm)
{
    static const char *const hw[] = {NULL, "HW_REG_MODE", "HW_REG_STATUS", "HW_REG_TRAPSTS", "HW_REG_HW_ID",
                                     "HW_REG_GPR_ALLOC", "HW_REG_LDS_ALLOC", "HW_REG_IB_STS"};
    unsigned id = imm & 0x3f, off = (imm >> 6) & 0x1f, sz = ((imm >> 11) & 0x1f) + 1;
    if (id < 8 && hw[id]) put(b, "hwreg(%s", hw[id]);
    else put(b, "hwreg(%u", id);
    if (off != 0 || sz != 32) put(b, ", %u, %u", off, sz);
    put(b, ")");
}

/* LLVM printSendMsg (GCN3: message ids 1-4 and 15, GS/GS_DONE/SYSMSG ops). */
static void put_sendmsg(sbuf *b, unsigned imm)
{
    static const char *const msg[16] = {[1] = "MSG_INTERRUPT", [2] = "MSG_GS", [3] = "MSG_GS_DONE",
                                        [4] = "MSG_SAVEWAVE", [15] = "MSG_SYSMSG"};
    static const char *const gsop[] = {"GS_OP_NOP", "GS_OP_CUT", "GS_OP_EMIT", "GS_OP_EMIT_CUT"};
    static const char *const sysop[] = {NULL, "SYSMSG_OP_ECC_ERR_INTERRUPT", "SYSMSG_OP_REG_RD",
                                        "SYSMSG_OP_HOST_TRAP_ACK", "SYSMSG_OP_TTRACE_PC"};
    unsigned id = imm & 0xf, opid = (imm >> 4) & 7, st = (imm >> 8) & 3;
    int valid = msg[id] != NULL, gs = id == 2 || id == 3;
    if (valid) {
        if (id == 2) valid = opid >= 1 && opid <= 3;
        else if (id == 3) valid = opid <= 3 && (opid != 0 || st == 0);
        else if (id == 15) valid = opid >= 1 && opid <= 4 && st == 0;
        else valid = opid == 0 && st == 0;
    }
    if (valid) {
        put(b, "sendmsg(%s", msg[id]);
        if (gs) {
            put(b, ", %s", gsop[opid]);
            if (opid != 0) put(b, ", %u", st);
        } else if (id == 15) {
            put(b, ", %s", sysop[opid]);
        }
        put(b, ")");
    } else if ((id | opid << 4 | st << 8) == imm) {
        put(b, "sendmsg(%u, %u, %u)", id, opid, st);
    } else {
        put(b, "%u", imm);
    }
}

static void put_swizzle(sbuf *b, unsigned imm)
{
    if (imm == 0) return;
    put(b, " offset:");
    if ((imm & 0xff00) == 0x8000) {
        put(b, "swizzle(QUAD_PERM");
        for (int i = 0; i < 4; i++) put(b, ",%u", (imm >> (2 * i)) & 3);
        put(b, ")");
    } else if ((imm & 0x8000) == 0) {
        unsigned a = imm & 0x1f, o = (imm >> 5) & 0x1f, x = (imm >> 10) & 0x1f;
        unsigned gs = 31 - a + 1;
        if (a == 31 && o == 0 && x && !(x & (x - 1))) put(b, "swizzle(SWAP,%u)", x);
        else if (a == 31 && o == 0 && x && !((x + 1) & x)) put(b, "swizzle(REVERSE,%u)", x + 1);
        else if (gs > 1 && !(gs & (gs - 1)) && o < gs && x == 0) put(b, "swizzle(BROADCAST,%u,%u)", gs, o);
        else {
            unsigned p0 = (0 | o) ^ x, p1 = ((0x1f & a) | o) ^ x;
            put(b, "swizzle(BITMASK_PERM,\"");
            for (unsigned m = 16; m; m >>= 1) {
                unsigned q0 = p0 & m, q1 = p1 & m;
                put(b, "%c", q0 == q1 ? (q0 ? '1' : '0') : (q0 ? 'i' : 'p'));
            }
            put(b, "\")");
        }
    } else {
        put(b, "%u", imm);
    }
}

static void put_dpp(sbuf *b, uint32_t d)
{
    unsigned c = (d >> 8) & 0x1ff;
    if (c <= 0xff) put(b, " quad_perm:[%u,%u,%u,%u]", c & 3, (c >> 2) & 3, (c >> 4) & 3, (c >> 6) & 3);
    else if (c >= 0x101 && c <= 0x10f) put(b, " row_shl:%u", c & 0xf);
    else if (c >= 0x111 && c <= 0x11f) put(b, " row_shr:%u", c & 0xf);
    else if (c >= 0x121 && c <= 0x12f) put(b, " row_ror:%u", c & 0xf);
    else if (c == 0x130) put(b, " wave_shl:1");
    else if (c == 0x134) put(b, " wave_rol:1");
    else if (c == 0x138) put(b, " wave_shr:1");
    else if (c == 0x13c) put(b, " wave_ror:1");
    else if (c == 0x140) put(b, " row_mirror");
    else if (c == 0x141) put(b, " row_half_mirror");
    else if (c == 0x142) put(b, " row_bcast:15");
    else if (c == 0x143) put(b, " row_bcast:31");
    else if (c >= 0x150 && c <= 0x15f)
        put(b, " /* row_newbcast/row_share is not supported on ASICs earlier than GFX90A/GFX10 */");
    else if (c >= 0x160 && c <= 0x16f) put(b, " /* row_xmask is not supported on ASICs earlier than GFX10 */");
    else put(b, " /* Invalid dpp_ctrl value */");
    put(b, " row_mask:0x%x bank_mask:0x%x", d >> 28, (d >> 24) & 0xf);
    if (d & (1u << 19)) put(b, " bound_ctrl:1");
}

static const char *const sdwa_sel[] = {"BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD", "?"};
static const char *const sdwa_unused[] = {"UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE", "UNUSED_PAD"};

/* Source i of a VOP instruction with its modifiers. */
static void put_vsrc(sbuf *b, const gcn_insn *in, unsigned i, unsigned width)
{
    int fl;
    unsigned bits;
    src_type(in->op, i, &fl, &bits);
    unsigned c = in->src[i];
    int neg = (in->mods >> (GCN_M_NEG_SHIFT + i)) & 1, abs_ = (in->mods >> (GCN_M_ABS_SHIFT + i)) & 1;
    int sext = i < 2 && (in->mods & GCN_M_SDWA) && ((in->mods >> (GCN_M_SEXT_SHIFT + i)) & 1);
    if (!fl) neg = abs_ = 0; /* integer operands have no float modifiers */
    else sext = 0;
    int negf = neg && !abs_ && is_imm_code(c);
    if (sext) put(b, "sext(");
    if (neg) put(b, negf ? "neg(" : "-");
    if (abs_) put(b, "|");
    put_opd(b, in, c, width, bits);
    if (abs_) put(b, "|");
    if (negf) put(b, ")");
    if (sext) put(b, ")");
}

static void put_vop(sbuf *b, const gcn_insn *in, int *first)
{
    const gcn_op_info *oi = &gcn_op_infos[in->op];
    unsigned op = in->op;
#define SEP() do { put(b, *first ? " " : ", "); *first = 0; } while (0)
    /* interpolation: attrN.c operands */
    if (oi->fmt == GCN_FMT_VINTRP || (in->fmt == GCN_FMT_VOP3 && strncmp(oi->name, "v_interp_", 9) == 0)) {
        static const char chan[] = "xyzw";
        unsigned attr, ch, high = 0;
        SEP(); put_opd(b, in, in->dst[0], 1, 32);
        if (in->fmt == GCN_FMT_VINTRP) {
            attr = (in->imm >> 2) & 0x3f;
            ch = in->imm & 3;
            SEP();
            if (op == GCN_OP_v_interp_mov_f32) {
                static const char *const p[] = {"p10", "p20", "p0"};
                unsigned k = in->src[0] - GCN_OPD_VGPR;
                if (k < 3) put(b, "%s", p[k]);
                else put(b, "invalid_param_%u", k);
            } else {
                put_opd(b, in, in->src[0], 1, 32);
            }
            SEP(); put(b, "attr%u.%c", attr, chan[ch]);
            return;
        }
        /* VOP3 form: src0 = attr | chan << 6 | high << 8, src1 = vsrc, src2 */
        unsigned s0 = in->src[0];
        attr = s0 & 0x3f;
        ch = (s0 >> 6) & 3;
        high = (s0 >> 8) & 1;
        SEP();
        if (op == GCN_OP_v_interp_mov_f32) {
            static const char *const p[] = {"p10", "p20", "p0", "p?"};
            put(b, "%s", p[(in->src[1] >= GCN_OPD_VGPR ? in->src[1] - GCN_OPD_VGPR : in->src[1]) & 3]);
        } else {
            put_vsrc(b, in, 1, 1);
        }
        SEP(); put(b, "attr%u.%c", attr, chan[ch]);
        if (oi->sw[2] && in->src[2] != GCN_OPD_NONE) { SEP(); put_vsrc(b, in, 2, 1); }
        if (high) put(b, " high");
        if (in->mods & GCN_M_CLAMP) put(b, " clamp");
        switch ((in->mods >> GCN_M_OMOD_SHIFT) & 3) {
        case 1: put(b, " mul:2"); break;
        case 2: put(b, " mul:4"); break;
        case 3: put(b, " div:2"); break;
        }
        return;
    }
    int vop3 = in->fmt == GCN_FMT_VOP3;
    /* destination(s) */
    if (oi->fmt == GCN_FMT_VOPC) {
        SEP();
        if (vop3) put_opd(b, in, in->dst[0], 2, 32);
        else put(b, "vcc");
    } else if (in->dst[0] != GCN_OPD_NONE) {
        SEP();
        if (is_imm_code(in->dst[0]) || (in->dst[0] >= 235 && in->dst[0] < GCN_OPD_VGPR)) put(b, "/*invalid immediate*/");
        else put_opd(b, in, in->dst[0], oi->dw, 32);
    }
    if (in->dst[1] != GCN_OPD_NONE) { SEP(); put_opd(b, in, in->dst[1], 2, 32); }
    /* sources */
    for (unsigned i = 0; i < 3; i++) {
        if (in->src[i] == GCN_OPD_NONE) continue;
        if ((op == GCN_OP_v_mac_f32 || op == GCN_OP_v_mac_f16) && i == 2) continue;
        unsigned wd = oi->sw[i] ? oi->sw[i] : 1;
        if (i == 2 && (op == GCN_OP_v_cndmask_b32 || op == GCN_OP_v_addc_u32 || op == GCN_OP_v_subb_u32 ||
                       op == GCN_OP_v_subbrev_u32))
            wd = 2;
        SEP();
        if (!vop3 && ((i == 1 && (op == GCN_OP_v_madmk_f32 || op == GCN_OP_v_madmk_f16)) ||
                      (i == 2 && (op == GCN_OP_v_madak_f32 || op == GCN_OP_v_madak_f16)))) {
            put(b, "0x%x", in->literal);
            continue;
        }
        if (!vop3 && i == 2 && wd == 2) { put(b, "vcc"); continue; } /* implicit carry-in / mask */
        if (!vop3 && i == 0 && in->src[0] == GCN_OPD_LIT &&
            (op == GCN_OP_v_madmk_f32 || op == GCN_OP_v_madak_f32 || op == GCN_OP_v_madmk_f16 || op == GCN_OP_v_madak_f16)) {
            put(b, "0x%x", in->literal);
            continue;
        }
        if (i == 0 && is_imm_code(in->src[0]) && !(in->mods & (GCN_M_SDWA | GCN_M_DPP)) &&
            (op == GCN_OP_v_readfirstlane_b32 || op == GCN_OP_v_movrels_b32 || op == GCN_OP_v_movrelsd_b32)) {
            put(b, "/*invalid immediate*/"); /* a VGPR-only source in LLVM */
            continue;
        }
        put_vsrc(b, in, i, wd);
    }
    if (in->mods & GCN_M_CLAMP) put(b, " clamp");
    switch ((in->mods >> GCN_M_OMOD_SHIFT) & 3) {
    case 1: put(b, " mul:2"); break;
    case 2: put(b, " mul:4"); break;
    case 3: put(b, " div:2"); break;
    }
    if (in->mods & GCN_M_SDWA) {
        uint32_t d = in->imm2;
        if (oi->fmt != GCN_FMT_VOPC)
            put(b, " dst_sel:%s dst_unused:%s", sdwa_sel[(d >> 8) & 7], sdwa_unused[(d >> 11) & 3]);
        put(b, " src0_sel:%s", sdwa_sel[(d >> 16) & 7]);
        if (oi->fmt != GCN_FMT_VOP1) put(b, " src1_sel:%s", sdwa_sel[(d >> 24) & 7]);
    }
    if (in->mods & GCN_M_DPP) put_dpp(b, in->imm2);
#undef SEP
}

static const char *const dfmt_name[16] = {"INVALID", "8", "16", "8_8", "32", "16_16", "10_11_11", "11_11_10",
                                          "10_10_10_2", "2_10_10_10", "8_8_8_8", "32_32", "16_16_16_16",
                                          "32_32_32", "32_32_32_32", "RESERVED_15"};
static const char *const nfmt_name[8] = {"UNORM", "SNORM", "USCALED", "SSCALED", "UINT", "SINT", "RESERVED_6", "FLOAT"};

#define SEP() do { put(b, *first ? " " : ", "); *first = 0; } while (0)
/* Operands of the scalar formats (SOP2, SOP1, SOPC, SOPK, SOPP, SMEM), as LLVM 14 prints them. */
static void put_scalar(sbuf *b, const gcn_insn *in, int *first)
{
    const gcn_op_info *oi = &gcn_op_infos[in->op];
    unsigned op = in->op;
    (void)op;
    switch (in->fmt) {
    case GCN_FMT_SOP2: case GCN_FMT_SOP1: case GCN_FMT_SOPC:
        if (in->dst[0] != GCN_OPD_NONE) { SEP(); put_opd(b, in, in->dst[0], oi->dw, 32); }
        for (int i = 0; i < 2; i++) {
            if (in->src[i] == GCN_OPD_NONE || (!oi->sw[i] && op != GCN_OP_s_set_gpr_idx_on)) continue;
            SEP();
            if (i == 1 && op == GCN_OP_s_set_gpr_idx_on) {
                unsigned m = in->src[1];
                if (m & ~0xfu) { put(b, "0x%x", m); continue; }
                static const char *const id[] = {"SRC0", "SRC1", "SRC2", "DST"};
                put(b, "gpr_idx(");
                for (int k = 0, c = 0; k < 4; k++)
                    if (m & (1u << k)) put(b, "%s%s", c++ ? "," : "", id[k]);
                put(b, ")");
                continue;
            }
            if (is_imm_code(in->src[i]) && (op == GCN_OP_s_setpc_b64 || op == GCN_OP_s_cbranch_join ||
                                             op == GCN_OP_s_movrels_b32 || op == GCN_OP_s_movrels_b64 ||
                                             op == GCN_OP_s_rfe_b64)) {
                put(b, "/*invalid immediate*/"); /* an SReg operand (not SSrc) in LLVM */
                continue;
            }
            put_opd(b, in, in->src[i], oi->sw[i], oi->sw[i] == 2 ? 64 : 32);
        }
        break;
    case GCN_FMT_SOPK:
        if (op == GCN_OP_s_getreg_b32) { SEP(); put_opd(b, in, in->dst[0], 1, 32); SEP(); put_hwreg(b, in->imm); }
        else if (op == GCN_OP_s_setreg_b32) { SEP(); put_hwreg(b, in->imm); SEP(); put_opd(b, in, in->src[0], 1, 32); }
        else if (op == GCN_OP_s_setreg_imm32_b32) { SEP(); put_hwreg(b, in->imm); SEP(); put_imm(b, in->literal, 32); }
        else if (op == GCN_OP_s_cbranch_i_fork) { SEP(); put_opd(b, in, in->src[0], 2, 32); SEP(); put(b, "%u", in->imm); }
        else {
            SEP(); put_opd(b, in, in->dst[0] != GCN_OPD_NONE ? in->dst[0] : in->src[0], 1, 32);
            SEP(); put(b, "0x%x", in->imm);
        }
        break;
    case GCN_FMT_SOPP:
        if (in->flags & GCN_IF_WAITCNT) {
            int dv = in->waitcnt_vm == 0xf, de = in->waitcnt_exp == 0x7, dl = in->waitcnt_lgkm == 0xf, all = dv && de && dl;
            if (!dv || all) { SEP(); put(b, "vmcnt(%u)", in->waitcnt_vm); }
            if (!de || all) { put(b, first ? " " : " "); first = 0; put(b, "expcnt(%u)", in->waitcnt_exp); }
            if (!dl || all) { put(b, first ? " " : " "); first = 0; put(b, "lgkmcnt(%u)", in->waitcnt_lgkm); }
        } else if (op == GCN_OP_s_barrier || op == GCN_OP_s_wakeup || op == GCN_OP_s_icache_inv ||
                   op == GCN_OP_s_ttracedata || op == GCN_OP_s_endpgm_saved || op == GCN_OP_s_set_gpr_idx_off) {
        } else if (op == GCN_OP_s_endpgm) {
            if (in->imm) put(b, " %u", in->imm);
        } else if (op == GCN_OP_s_sendmsg || op == GCN_OP_s_sendmsghalt) {
            put(b, " ");
            put_sendmsg(b, in->imm);
        } else if (op == GCN_OP_s_set_gpr_idx_mode) {
            unsigned m = in->imm;
            if (m & ~0xfu) put(b, " 0x%x", m);
            else {
                static const char *const id[] = {"SRC0", "SRC1", "SRC2", "DST"};
                put(b, " gpr_idx(");
                for (int k = 0, c = 0; k < 4; k++)
                    if (m & (1u << k)) put(b, "%s%s", c++ ? "," : "", id[k]);
                put(b, ")");
            }
        } else if (in->flags & (GCN_IF_BR_COND | GCN_IF_BR_JUMP)) {
            put(b, " %u", in->imm & 0xffff);
        } else {
            put(b, " ");
            put_imm(b, in->imm, 32);
        }
        break;
    case GCN_FMT_SMEM:
        if (op == GCN_OP_s_atc_probe || op == GCN_OP_s_atc_probe_buffer) {
            SEP(); put_imm(b, in->imm2, 32);
        } else if (in->dst[0] != GCN_OPD_NONE) {
            SEP(); put_opd(b, in, in->dst[0], oi->dw, 32);
        }
        if (in->src[2] != GCN_OPD_NONE) { SEP(); put_opd(b, in, in->src[2], oi->sw[0], 32); }
        if (oi->flags & (GCN_IF_LOAD | GCN_IF_STORE) || op == GCN_OP_s_atc_probe || op == GCN_OP_s_atc_probe_buffer) {
            SEP(); put_opd(b, in, in->src[0], strstr(oi->name, "buffer") ? 4 : 2, 32);
            SEP();
            if (in->mods & GCN_M_SMEM_IMM) put(b, "0x%x", in->imm);
            else put_opd(b, in, in->src[1], 1, 32);
        }
        if ((in->mods & GCN_M_GLC) && (oi->flags & (GCN_IF_LOAD | GCN_IF_STORE))) put(b, " glc");
        break;
    default:
        break;
    }
}

/* Operands and modifiers of the memory and graphics formats (DS, FLAT, MUBUF,
 * MTBUF, MIMG, EXP), as LLVM 14 prints them. */
static void put_memory(sbuf *b, const gcn_insn *in, int *first)
{
    const gcn_op_info *oi = &gcn_op_infos[in->op];
    unsigned op = in->op;
    (void)op;
    switch (in->fmt) {
    case GCN_FMT_DS: {
        if (in->dst[0] != GCN_OPD_NONE) { SEP(); put_opd(b, in, in->dst[0], oi->dw, 32); }
        if (oi->sw[0]) { SEP(); put_opd(b, in, in->src[0], 1, 32); }
        if (in->src[1] != GCN_OPD_NONE) { SEP(); put_opd(b, in, in->src[1], oi->sw[1], 32); }
        if (in->src[2] != GCN_OPD_NONE) { SEP(); put_opd(b, in, in->src[2], oi->sw[2], 32); }
        int two = !strncmp(oi->name, "ds_read2", 8) || !strncmp(oi->name, "ds_write2", 9) ||
                  !strncmp(oi->name, "ds_wrxchg2", 10);
        if (two) {
            if (in->imm & 0xff) put(b, " offset0:%u", in->imm & 0xff);
            if (in->imm >> 8) put(b, " offset1:%u", in->imm >> 8);
        } else if (op == GCN_OP_ds_swizzle_b32) {
            put_swizzle(b, in->imm);
        } else if (in->imm) put(b, " offset:%u", in->imm);
        if (in->mods & GCN_M_GDS) put(b, " gds");
        break;
    }
    case GCN_FMT_FLAT:
        if (in->dst[0] != GCN_OPD_NONE) { SEP(); put_opd(b, in, in->dst[0], oi->dw, 32); }
        SEP(); put_opd(b, in, in->src[0], 2, 32);
        if (in->src[1] != GCN_OPD_NONE) { SEP(); put_opd(b, in, in->src[1], oi->sw[1], 32); }
        if (in->mods & GCN_M_GLC) put(b, " glc");
        if (in->mods & GCN_M_SLC) put(b, " slc");
        if (in->mods & GCN_M_TFE) put(b, " tfe");
        break;
    case GCN_FMT_MUBUF: case GCN_FMT_MTBUF:
        if (op == GCN_OP_buffer_store_lds_dword) { /* no vdata, no vaddr (LLVM 14 syntax) */
            SEP(); put_opd(b, in, in->src[2], 4, 32);
            SEP(); put_opd(b, in, in->src[3], 1, 32);
            if (in->imm) put(b, " offset:%u", in->imm);
            put(b, " lds");
            if (in->mods & GCN_M_GLC) put(b, " glc");
            if (in->mods & GCN_M_SLC) put(b, " slc");
        } else if (oi->flags & (GCN_IF_LOAD | GCN_IF_STORE)) {
            unsigned vd = in->dst[0] != GCN_OPD_NONE ? in->dst[0] : in->src[1];
            unsigned vw = (oi->flags & GCN_IF_ATOMIC) ? oi->sw[1] : in->dst[0] != GCN_OPD_NONE ? oi->dw : oi->sw[1];
            if (vd == GCN_OPD_NONE) vd = GCN_OPD_VGPR; /* not reached: loads/stores have vdata */
            SEP(); put_opd(b, in, vd, vw, 32);
            SEP();
            unsigned na = !!(in->mods & GCN_M_OFFEN) + !!(in->mods & GCN_M_IDXEN);
            if (na == 0) put(b, "off");
            else put_opd(b, in, in->src[0], na, 32);
            SEP(); put_opd(b, in, in->src[2], 4, 32);
            SEP(); put_opd(b, in, in->src[3], 1, 32);
            if (in->fmt == GCN_FMT_MTBUF) {
                unsigned df = in->imm2 & 0xf, nf = (in->imm2 >> 4) & 7;
                if (df != 1 || nf != 0) {
                    put(b, " format:[");
                    if (df != 1) put(b, "BUF_DATA_FORMAT_%s%s", dfmt_name[df], nf != 0 ? "," : "");
                    if (nf != 0) put(b, "BUF_NUM_FORMAT_%s", nfmt_name[nf]);
                    put(b, "]");
                }
            }
            if (in->mods & GCN_M_IDXEN) put(b, " idxen");
            if (in->mods & GCN_M_OFFEN) put(b, " offen");
            if (in->imm) put(b, " offset:%u", in->imm);
            if (in->mods & GCN_M_GLC) put(b, " glc");
            if (in->mods & GCN_M_SLC) put(b, " slc");
            if (in->mods & GCN_M_LDS) put(b, " lds");
            else if ((in->mods & GCN_M_TFE) && !(oi->flags & GCN_IF_ATOMIC)) put(b, " tfe");
        }
        break;
    case GCN_FMT_MIMG: {
        uint32_t w0 = in->imm, w1 = in->imm2;
        unsigned dmask = (w0 >> 8) & 0xf, tfe = (w0 >> 16) & 1;
        unsigned nd = (unsigned)__builtin_popcount(dmask);
        if (strstr(oi->name, "gather4")) nd = 4;
        if (nd == 0) nd = 1;
        nd += tfe;
        SEP(); put_opd(b, in, GCN_OPD_VGPR + ((w1 >> 8) & 0xff), nd, 32);
        SEP(); put_opd(b, in, GCN_OPD_VGPR + (w1 & 0xff), oi->sw[0] ? oi->sw[0] : 1, 32);
        SEP(); put_opd(b, in, ((w1 >> 16) & 0x1f) << 2, 8, 32);
        if (strstr(oi->name, "sample") || strstr(oi->name, "gather4") || strstr(oi->name, "get_lod")) {
            SEP(); put_opd(b, in, ((w1 >> 21) & 0x1f) << 2, 4, 32);
        }
        if (dmask) put(b, " dmask:0x%x", dmask);
        if (w0 & (1u << 12)) put(b, " unorm");
        if (w0 & (1u << 13)) put(b, " glc");
        if (w0 & (1u << 25)) put(b, " slc");
        if (w0 & (1u << 15)) put(b, " r128");
        if (tfe) put(b, " tfe");
        if (w0 & (1u << 17)) put(b, " lwe");
        if (w0 & (1u << 14)) put(b, " da");
        if (w1 & (1u << 31)) put(b, " d16");
        break;
    }
    case GCN_FMT_EXP: {
        uint32_t w0 = in->imm, w1 = in->imm2;
        unsigned tgt = (w0 >> 4) & 0x3f, en = w0 & 0xf, compr = (w0 >> 10) & 1;
        put(b, " ");
        if (tgt <= 7) put(b, "mrt%u", tgt);
        else if (tgt == 8) put(b, "mrtz");
        else if (tgt == 9) put(b, "null");
        else if (tgt >= 12 && tgt <= 15) put(b, "pos%u", tgt - 12);
        else if (tgt >= 32 && tgt <= 63) put(b, "param%u", tgt - 32);
        else put(b, "invalid_target_%u", tgt);
        for (unsigned i = 0; i < 4; i++) {
            /* compressed exports print vsrc0, vsrc0, vsrc1, vsrc1 (LLVM printExpSrcN) */
            unsigned k = compr ? i / 2 : i;
            put(b, i ? ", " : " ");
            if ((en >> i) & 1) put(b, "v%u", (w1 >> (8 * k)) & 0xff);
            else put(b, "off");
        }
        if (w0 & (1u << 11)) put(b, " done");
        if (compr) put(b, " compr");
        if (w0 & (1u << 12)) put(b, " vm");
        break;
    }
    default:
        break;
    }
}
#undef SEP

int gcn_disasm(const gcn_insn *in, char *buf, size_t n)
{
    sbuf b = {buf, n, 0};
    if (n) buf[0] = 0;
    unsigned op = in->op < GCN_OP_COUNT ? in->op : 0;
    const gcn_op_info *oi = &gcn_op_infos[op];
    if ((in->flags & GCN_IF_INVALID) || op == GCN_OP_INVALID) {
        put(&b, ".long 0x%08x", in->literal);
        return (int)b.len;
    }
    const char *sfx = "";
    if (oi->fmt == GCN_FMT_VOP1 || oi->fmt == GCN_FMT_VOP2 || oi->fmt == GCN_FMT_VOPC || oi->fmt == GCN_FMT_VINTRP) {
        sfx = (in->mods & GCN_M_E64) ? "_e64" : (in->mods & GCN_M_SDWA) ? "_sdwa" : (in->mods & GCN_M_DPP) ? "_dpp" : "_e32";
        if ((in->mods & GCN_M_SDWA) && oi->fmt == GCN_FMT_VOPC) sfx = ""; /* LLVM 14 prints VI VOPC SDWA bare */
        if (op == GCN_OP_v_madmk_f32 || op == GCN_OP_v_madak_f32 || op == GCN_OP_v_madmk_f16 ||
            op == GCN_OP_v_madak_f16 || op == GCN_OP_v_nop || op == GCN_OP_v_clrexcp ||
            (op == GCN_OP_v_readfirstlane_b32 && !(in->mods & GCN_M_E64)))
            sfx = "";
    }
    put(&b, "%s%s", oi->name, sfx);
    if (in->fmt == GCN_FMT_MIMG && (in->imm & 1) && !strncmp(oi->name, "image_sample", 12) &&
        (strstr(oi->name, "_d_") || strstr(oi->name, "_cd") || !strcmp(oi->name + strlen(oi->name) - 2, "_d")))
        put(&b, "_g16"); /* LLVM 14 decodes bit 0 (unused on gfx8) as gfx10's G16 variants */
    int first = 1;
    if (in->fmt <= GCN_FMT_SMEM)
        put_scalar(&b, in, &first);
    else if (in->fmt <= GCN_FMT_VINTRP)
        put_vop(&b, in, &first);
    else
        put_memory(&b, in, &first);
    return (int)b.len;
}
