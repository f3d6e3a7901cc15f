/*
 * gcn_isa.h - GCN3 (gfx803) instruction set: decoded-instruction form shared by
 * the emulator (which executes it), the replay engine (which times it) and the
 * tools (which disassemble and count it). Lives in the target room gcn/.
 *
 * The single source of truth for opcodes is gcn/gcn3.def (X-macro table,
 * see ../shared/STYLE.md #1). Everything in this header that the replay uses is
 * the "static facts" half of the trace contract (docs/trace-format.md): the
 * trace records only dynamic behaviour, and the replay re-decodes the code
 * object with these functions to know what each dynamic instruction was.
 *
 * Sources: "AMD GCN3 ISA Architecture Manual" (Rev 1.1, 2016), chapters 4-13
 * (formats) and 12 (encodings); LLVM AMDGPU backend VIInstructions.td and friends for
 * gfx8 opcode numbers.
 *
 * Thread-safety: a decoded gcn_program is immutable after gcn_program_decode()
 * and may be shared by any number of threads.
 */
#ifndef GCN_ISA_H
#define GCN_ISA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Execution unit an instruction issues to (timing class used by the replay;
 * MGSim paper Sec. IV-B / GCN3 ISA manual Sec. 2). */
typedef enum gcn_unit {
    GCN_UNIT_SALU = 0, /* SOP1/SOP2/SOPK/SOPC (and SOPP that are not special) */
    GCN_UNIT_SMEM,     /* scalar memory: s_load_*, s_buffer_load_*, s_store_*, s_memtime */
    GCN_UNIT_VALU,     /* VOP1/VOP2/VOPC/VOP3/VINTRP incl. v_readlane/v_writelane */
    GCN_UNIT_VMEM,     /* vector memory: FLAT, MUBUF, MTBUF, MIMG */
    GCN_UNIT_LDS,      /* DS (LDS and ds_bpermute/permute/swizzle) */
    GCN_UNIT_BRANCH,   /* s_branch, s_cbranch_*, s_setpc/s_swappc */
    GCN_UNIT_SPECIAL,  /* s_waitcnt, s_barrier, s_endpgm, s_nop, s_sleep, s_trap, s_sendmsg, ... */
    GCN_UNIT_EXPORT,   /* EXP (graphics only; decoded, never executed) */
    GCN_UNIT_COUNT
} gcn_unit;

/* Per-instruction flags (gcn_insn.flags). */
enum {
    GCN_IF_LOAD        = 1u << 0,  /* reads memory (VMEM/SMEM/LDS) */
    GCN_IF_STORE       = 1u << 1,  /* writes memory */
    GCN_IF_ATOMIC      = 1u << 2,  /* read-modify-write (also sets LOAD|STORE) */
    GCN_IF_ATOMIC_RTN  = 1u << 3,  /* atomic that returns the pre-op value (glc / _rtn) */
    GCN_IF_BR_COND     = 1u << 4,  /* s_cbranch_*: outcome comes from the trace */
    GCN_IF_BR_JUMP     = 1u << 5,  /* s_branch: always taken, target static */
    GCN_IF_BR_INDIRECT = 1u << 6,  /* s_setpc_b64 / s_swappc_b64: target from the trace */
    GCN_IF_ENDPGM      = 1u << 7,  /* s_endpgm: wavefront ends */
    GCN_IF_BARRIER     = 1u << 8,  /* s_barrier */
    GCN_IF_WAITCNT     = 1u << 9,  /* s_waitcnt: see vmcnt/lgkmcnt/expcnt */
    GCN_IF_FLAT        = 1u << 10, /* FLAT encoding (address may be global, LDS or private) */
    GCN_IF_SCRATCH     = 1u << 11, /* MUBUF through the private segment buffer */
    GCN_IF_F64         = 1u << 12, /* 64-bit float VALU op (quarter rate on Fiji) */
    GCN_IF_TRANS       = 1u << 13, /* transcendental VALU op (quarter rate) */
    GCN_IF_SLEEP       = 1u << 14, /* s_sleep: simm16 * 64 cycles */
    GCN_IF_WRITES_EXEC = 1u << 15, /* may change EXEC */
    GCN_IF_INVALID     = 1u << 16, /* word(s) that do not decode; executing it is an error */
    GCN_IF_GDS         = 1u << 17, /* DS with gds=1 (unsupported: error when executed) */
    GCN_IF_MEM_FENCE   = 1u << 18, /* buffer_wbinvl1(_vol): L1 invalidate */
    GCN_IF_LOOP_HEAD   = 1u << 19, /* target of a backward branch of the program (set by
                                    * gcn_program_decode, not by the instruction table) */
    GCN_IF_POLL_EXIT   = 1u << 20, /* conditional back-edge whose condition may depend on what
                                    * a poll-capable load (glc, atomic with return, LDS) of its
                                    * loop returned: a loop that can wait (gcn_poll.c; set by
                                    * gcn_program_decode) */
};


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

/* Name of a format ("vop3"), never NULL. */
const char *gcn_fmt_name(unsigned fmt);

/* Opcodes: one enumerator per line of gcn3.def, in table order. */
typedef enum gcn_op {
    GCN_OP_INVALID = 0,
#define GCN_OP(name, ...) GCN_OP_##name,
#include "gcn3.def"
#undef GCN_OP
    GCN_OP_COUNT
} gcn_op;


/* Memory an op addresses (gcn3.def SEG column). */
typedef enum gcn_seg {
    GCN_SEG_NONE = 0,
    GCN_SEG_SCALAR, /* SMEM: scalar data cache */
    GCN_SEG_GLOBAL, /* MUBUF/MTBUF: a buffer (or the private segment, known at run time) */
    GCN_SEG_FLAT,   /* FLAT: global, LDS or private, decided per lane at run time */
    GCN_SEG_IMAGE,  /* MIMG (graphics; decoded, not executed) */
    GCN_SEG_LDS,    /* DS data ops: values the replay's LDS model applies and checks */
    GCN_SEG_XLANE,  /* DS cross-lane ops through the LDS crossbar (permute, bpermute, swizzle) */
    GCN_SEG_LDSCTR, /* ds_append / ds_consume: a counter addressed by M0 */
    GCN_SEG_GDS,    /* global data share ops (ds_gws_*, ds_ordered_count) */
    GCN_SEG_COUNT
} gcn_seg;

/* Class of a VALU op (gcn3.def VCLS column; gcn3-trace's instruction mix). */
typedef enum gcn_vcls {
    GCN_VCLS_NONE = 0, /* not a VALU op */
    GCN_VCLS_INT, GCN_VCLS_F16, GCN_VCLS_F32, GCN_VCLS_F64,
    GCN_VCLS_TRANS, /* quarter-rate transcendental (GCN_IF_TRANS) */
    GCN_VCLS_CMP,   /* v_cmp* / v_cmpx* */
    GCN_VCLS_CVT,   /* v_cvt* */
    GCN_VCLS_LANE,  /* v_readlane, v_writelane, v_readfirstlane */
    GCN_VCLS_COUNT
} gcn_vcls;

/* Static facts about one op, expanded from gcn3.def (index: gcn_op). Each
 * field is one named column of the table (see the head of gcn3.def). */
typedef struct gcn_op_info {
    const char *name;
    uint8_t fmt, unit, mem, dw;
    uint8_t sw[3];
    uint8_t attr;
    uint16_t opc;
    uint32_t flags;
    uint8_t aop;        /* gcn_atomic_op: GCN_AT_NONE unless flags has GCN_IF_ATOMIC */
    uint8_t elem_bytes; /* bytes of one element a lane moves (atomics: 4 or 8) */
    uint8_t elem_count; /* elements per lane: 2 for ds_read2/write2/wrxchg2, else 1 (0: no memory) */
    uint8_t elem_scale; /* DS offset0/offset1 unit in elements: 64 for the st64 forms, else 1 */
    uint8_t seg;        /* gcn_seg */
    uint8_t vcls;       /* gcn_vcls */
} gcn_op_info;
extern const gcn_op_info gcn_op_infos[GCN_OP_COUNT];
/* Static facts of op (GCN_OP_INVALID's entry for an out-of-range op), never NULL. */
const gcn_op_info *gcn_op_info_of(unsigned op);

/*
 * One decoded instruction. Fields down to `target` are the stable public part
 * (the replay relies on them); the operand fields below are the emulator's.
 */
typedef struct gcn_insn {
    uint64_t pc;        /* ELF virtual address of the instruction in its code object (bytes) */
    uint16_t op;        /* gcn_op enumerator generated from gcn3.def */
    uint8_t fmt;        /* gcn_fmt enumerator */
    uint8_t unit;       /* gcn_unit */
    uint8_t size;       /* encoded length in bytes, literal constant included: 4, 8 or 12 */
    uint8_t mem_bytes;  /* memory ops: bytes moved per lane (VMEM/LDS, e.g. 4 for _dword,
                           8 for ds_read2_b32) or in total for SMEM (4..64); else 0 */
    uint16_t waitcnt_vm;   /* s_waitcnt: vmcnt threshold (0..15); 0xffff when not a waitcnt */
    uint16_t waitcnt_lgkm; /* s_waitcnt: lgkmcnt threshold (0..15) */
    uint16_t waitcnt_exp;  /* s_waitcnt: expcnt threshold (0..7) */
    uint32_t flags;     /* GCN_IF_* */
    uint64_t target;    /* BR_COND / BR_JUMP: ELF vaddr of the taken target; SLEEP: simm16 */

    /* ---- operands, resolved at decode (layout: gcn_operand.h) ---- */
    uint16_t dst[2];    /* destination operand codes (see gcn_operand encoding in gcn_isa_internal.h) */
    uint16_t src[4];    /* source operand codes */
    uint32_t literal;   /* 32-bit literal or inline-constant value */
    uint32_t imm;       /* offsets, simm16, etc. */
    uint32_t imm2;      /* second offset (ds *2 forms), sdwa/dpp control, ... */
    uint32_t mods;      /* modifiers: abs/neg/clamp/omod/glc/slc/... packed by the decoder */
} gcn_insn;

/* An ISA target this build has an instruction table and decoder for. Today
 * one: GCN3 (gfx803; gfx801/802/810 share its encodings). A GCN5 table
 * (gfx900) would be a second entry of the target list in gcn_decode.c, found
 * by the same names (docs/architecture.md). */
typedef struct gcn_target {
    const char *name;        /* processor: "gfx803" */
    const char *isa;         /* "GCN3" */
    const struct gcn_op_info *ops; /* its instruction table, n_ops entries (index: gcn_op) */
    unsigned n_ops;
} gcn_target;

/* The target of a processor name ("gfx803") or of an AMDGCN triple that ends
 * in one ("amdgcn-amd-amdhsa--gfx803", "hipv4-amdgcn-amd-amdhsa--gfx803:xnack-"):
 * the code object's (gcn_code_object.target) or the trace header's
 * (isa_target). NULL when this build has no table for it. */
const gcn_target *gcn_target_find(const char *name_or_triple);
/* Processor names this build decodes, for messages: "gfx803 (also gfx801, gfx802, gfx810)". */
const char *gcn_target_names(void);

/* Whole decoded .text of one code object: decode once at load (STYLE.md #3). */
typedef struct gcn_program {
    const gcn_target *target; /* whose table decoded it */
    uint64_t vaddr;      /* ELF vaddr of the first byte of .text */
    uint64_t size;       /* bytes of .text */
    size_t n_insn;
    gcn_insn *insn;      /* n_insn instructions in address order */
    uint32_t *index_of;  /* (pc - vaddr) / 4 -> index into insn, or UINT32_MAX mid-instruction */
} gcn_program;

/* Status codes of the ISA module. */
typedef enum gcn_isa_status {
    GCN_ISA_OK = 0,
    GCN_ISA_ENOMEM,
    GCN_ISA_EINVAL,
} gcn_isa_status;

/*
 * Decode a whole .text section (linear sweep). Words that do not decode become
 * instructions with GCN_IF_INVALID (size 4): decoding never fails on bad words;
 * executing one is reported by the emulator with kernel, PC and encoding.
 * t: the target (gcn_target_find; NULL: gfx803); text/len: section bytes;
 * vaddr: ELF address of text[0].
 * Returns NULL only when out of memory (errno ENOMEM).
 */
gcn_program *gcn_program_decode(const gcn_target *t, const uint8_t *text, size_t len, uint64_t vaddr);
void gcn_program_free(gcn_program *p); /* accepts NULL */

/* Instruction at ELF vaddr pc, or NULL if pc is outside the program or not at
 * an instruction boundary. O(1). */
const gcn_insn *gcn_program_at(const gcn_program *p, uint64_t pc);

/* What makes a kernel's code wait on other workgroups of its dispatch
 * (gcn_program_sync_reasons; gcn/gcn_sync.c says why these). */
enum {
    GCN_SYNC_GLC_LOAD   = 1u << 0, /* a VMEM/FLAT/SMEM load with glc = 1 (volatile or atomic load) */
    GCN_SYNC_ATOMIC_RTN = 1u << 1, /* a VMEM/FLAT atomic that returns the pre-op value */
    GCN_SYNC_SLEEP      = 1u << 2, /* s_sleep */
    GCN_SYNC_INDIRECT   = 1u << 3, /* with another reason: s_setpc/s_swappc reached, the whole .text was scanned */
    GCN_SYNC_UNKNOWN    = 1u << 4, /* out of memory: assumed to wait */
};

/*
 * The GCN_SYNC_* reasons found in the instructions reachable from the kernel
 * entry at ELF vaddr `entry` (static control flow: fall-through, s_branch and
 * both ways of s_cbranch, until s_endpgm; an indirect branch makes every
 * instruction of the program count). 0: the kernel's workgroups cannot
 * observe each other's progress. *first_pc (may be NULL): the first
 * instruction found with a reason. O(instructions).
 */
uint32_t gcn_program_sync_reasons(const gcn_program *p, uint64_t entry, uint64_t *first_pc);
/* Words for the first reason of a GCN_SYNC_* set ("s_sleep"), never NULL. */
const char *gcn_sync_reason_name(uint32_t reasons);

/* Decode one instruction from words (at least 1, up to 3 readable: pass n_words).
 * Returns the size in bytes (4, 8, 12); for an invalid encoding, fills an
 * instruction with GCN_IF_INVALID and returns 4. */
int gcn_decode_one(const uint32_t *words, size_t n_words, uint64_t pc, gcn_insn *out);

/* Operation of a memory atomic (FLAT/MUBUF/DS). */
typedef enum gcn_atomic_op {
    GCN_AT_NONE = 0, GCN_AT_SWAP, GCN_AT_CMPSWAP, GCN_AT_ADD, GCN_AT_SUB, GCN_AT_RSUB,
    GCN_AT_SMIN, GCN_AT_UMIN, GCN_AT_SMAX, GCN_AT_UMAX, GCN_AT_AND, GCN_AT_OR, GCN_AT_XOR,
    GCN_AT_INC, GCN_AT_DEC, GCN_AT_FADD, GCN_AT_FMIN, GCN_AT_FMAX,
    GCN_AT_UNKNOWN, /* an atomic mnemonic this table does not know */
} gcn_atomic_op;

/* Atomic operation of a mnemonic: "flat_atomic_add_x2" -> GCN_AT_ADD (the width
 * comes from the access size), "ds_add_rtn_u32" -> GCN_AT_ADD; GCN_AT_NONE for
 * names that are not FLAT/MUBUF/DS atomics' families. */
gcn_atomic_op gcn_atomic_of_name(const char *mnemonic);

/* New memory value of an atomic of `bytes` (4 or 8) bytes, given the old
 * memory value, the source operand and (CMPSWAP) the compare value. Used by
 * the emulator and the replay alike. GCN3 ISA manual Sec. 9-11 (inc/dec wrap:
 * inc: old >= src ? 0 : old+1; dec: old == 0 || old > src ? src : old-1). */
uint64_t gcn_atomic_apply(gcn_atomic_op op, unsigned bytes, uint64_t old, uint64_t src, uint64_t cmp);

/* Decoder introspection (tests, gcn3-isa-coverage). One (mask, match) pattern of the first dword of an instruction (overlap test). */
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

/* Mnemonic of an opcode ("v_add_f32"), never NULL. */
const char *gcn_op_name(unsigned op);
/* Name of a unit ("valu"), never NULL. */
const char *gcn_unit_name(unsigned unit);

/* Disassemble one decoded instruction into buf with the instruction text of
 * `llvm-objdump -d --mcpu=gfx803` (LLVM 14): equal on every opcode/operand
 * variant of tests/isa/gfx803-corpus.s; words LLVM rejects print as
 * `.long 0x...` where the decoder knows them invalid (tests/e2e/objdump-diff.sh).
 * Returns chars written (snprintf-like). */
int gcn_disasm(const gcn_insn *in, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
