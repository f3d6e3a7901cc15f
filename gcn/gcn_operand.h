/*
 * gcn_operand.h - how a decoded gcn_insn names its operands and modifiers, for
 * executors (emu/isa semantics) and the disassembler: operand codes of
 * gcn_insn.dst[] / src[] and the packing of gcn_insn.mods.
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
#ifndef GCN_OPERAND_H
#define GCN_OPERAND_H

#include "gcn_isa.h"

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

#endif
