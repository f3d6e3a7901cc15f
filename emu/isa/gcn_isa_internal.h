/*
 * gcn_isa_internal.h - private to emu/isa (and its tests): the expansion of the
 * instruction table gcn3.def, the operand-code encoding of gcn_insn.dst/src and
 * the packing of gcn_insn.mods.
 *
 * Operand codes (gcn_insn.dst[] / src[], uint16_t):
 *   0..255   scalar operand code exactly as in the encoding (GCN3 ISA manual
 *            Sec. 12.1 SSRC): 0..101 SGPRs, 102..127 special registers (index
 *            into gcn_wave.s), 128..208 inline integers 0..64,-1..-16,
 *            240..248 inline floats, 251 VCCZ, 252 EXECZ, 253 SCC,
 *            255 literal constant (value in gcn_insn.literal)
 *   256..511 VGPR v(code-256)
 *   0xffff   no operand
 * Inline constants therefore stay codes: their value depends on the operand
 * width (a 64-bit float op reads 1.0 as 0x3ff0000000000000), which the
 * semantics know; lookup is one indexed load from a const table.
 */
#ifndef GCN_ISA_INTERNAL_H
#define GCN_ISA_INTERNAL_H

#include "gcn_isa.h"

/* Encoding formats (gcn_insn.fmt). */
typedef enum gcn_fmt {
    GCN_FMT_INVALID = 0,
    GCN_FMT_SOP2, GCN_FMT_SOPK, GCN_FMT_SOP1, GCN_FMT_SOPC, GCN_FMT_SOPP, GCN_FMT_SMEM,
    GCN_FMT_VOP2, GCN_FMT_VOP1, GCN_FMT_VOPC, GCN_FMT_VOP3, GCN_FMT_VINTRP, GCN_FMT_DS,
    GCN_FMT_MUBUF, GCN_FMT_MTBUF, GCN_FMT_FLAT, GCN_FMT_MIMG, GCN_FMT_EXP,
    GCN_FMT_COUNT
} gcn_fmt;

/* Decoder attributes (ATTR field of gcn3.def). */
enum {
    GCN_A_E64   = 1u << 0, /* VOPC/VOP2/VOP1 op that also has a VOP3 encoding */
    GCN_A_VOP3B = 1u << 1, /* VOP3b: sdst field instead of abs/clamp (carry out, div_scale, mad_u64) */
    GCN_A_SDWA  = 1u << 2, /* VOP1/VOP2/VOPC op with an SDWA form (as LLVM 14 decodes gfx803) */
    GCN_A_DPP   = 1u << 3, /* VOP1/VOP2/VOPC op with a DPP form */
};

/* The table wrappers: each field of gcn3.def is named by its macro. */
#define FMT(x) GCN_FMT_##x
#define OPC(x) x
#define UNIT(x) GCN_UNIT_##x
#define FLAGS(x) (x)
#define MEM(x) x
#define DW(x) x
#define SW(a, b, c) a, b, c
#define ATTR(x) (x)

typedef enum gcn_op {
    GCN_OP_INVALID = 0,
#define GCN_OP(name, fmt, opc, unit, flags, mem, dw, sw, attr) GCN_OP_##name,
#include "gcn3.def"
#undef GCN_OP
    GCN_OP_COUNT
} gcn_op;

/* Static facts about one op, expanded from gcn3.def (index: gcn_op). */
typedef struct gcn_op_info {
    const char *name;
    uint8_t fmt, unit, mem, dw;
    uint8_t sw[3];
    uint8_t attr;
    uint16_t opc;
    uint32_t flags;
} gcn_op_info;
extern const gcn_op_info gcn_op_infos[GCN_OP_COUNT];

/* Operand codes */
#define GCN_OPD_LIT 255u
#define GCN_OPD_VGPR 256u
#define GCN_OPD_NONE 0xffffu
#define GCN_OPD_VCCZ 251u
#define GCN_OPD_EXECZ 252u
#define GCN_OPD_SCC 253u
#define GCN_OPD_VCC 106u  /* VCC_LO; = GCN_SREG_VCC_LO */
#define GCN_OPD_EXEC 126u

/* gcn_insn.mods packing */
enum {
    GCN_M_ABS_SHIFT = 0,       /* bits 0..2: |src0|,|src1|,|src2| (VOP3, SDWA, DPP) */
    GCN_M_NEG_SHIFT = 3,       /* bits 3..5: -src0,-src1,-src2 */
    GCN_M_CLAMP = 1u << 6,
    GCN_M_OMOD_SHIFT = 7,      /* bits 7..8: 0 none, 1 *2, 2 *4, 3 /2 */
    GCN_M_GLC = 1u << 9,
    GCN_M_SLC = 1u << 10,
    GCN_M_OFFEN = 1u << 11,
    GCN_M_IDXEN = 1u << 12,
    GCN_M_LDS = 1u << 13,
    GCN_M_TFE = 1u << 14,
    GCN_M_GDS = 1u << 15,
    GCN_M_E64 = 1u << 16,      /* encoded as VOP3 */
    GCN_M_SDWA = 1u << 17,     /* imm2 = SDWA dword */
    GCN_M_DPP = 1u << 18,      /* imm2 = DPP dword */
    GCN_M_SMEM_IMM = 1u << 19, /* SMEM offset is imm (else src[1] is an SGPR code) */
    GCN_M_SEXT_SHIFT = 20,     /* SDWA: bits 20..21 sext src0/src1 */
};

/* One (mask, match) pattern of the first dword of an instruction (overlap test). */
typedef struct gcn_dec_pattern {
    uint32_t mask, match;
    uint16_t op;
    uint8_t e64; /* VOP3 form of a VOPC/VOP2/VOP1 op */
} gcn_dec_pattern;
/* Fill up to max patterns; returns the total number. */
size_t gcn_dec_patterns(gcn_dec_pattern *out, size_t max);
/* Check the decode tables: every op present once, no slot claimed twice.
 * Returns 0 or -1 with a message in err. */
int gcn_dec_check_tables(char *err, size_t n);

/* Semantics: one function per op (gcn_sem.c). */
struct gcn_wave;
typedef void (*gcn_exec_fn)(struct gcn_wave *w, const gcn_insn *in);
/* Handler table, defined by gcn_sem.c; referenced weakly by the decoder so
 * that programs which only decode (mgpu-replay, tools) do not pull in the
 * interpreter and its dependencies on exec/ and traceformat/. */
extern const gcn_exec_fn gcn_sem_handlers[GCN_OP_COUNT];
/* Ops whose handler only stops the wave with a message (graphics-only
 * encodings, fork/join, trap return): the reason, or NULL when op executes.
 * For docs/isa-coverage.md (gcn_sem.c). */
const char *gcn_sem_refusal(unsigned op);

#endif
