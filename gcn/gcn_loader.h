/*
 * gcn_loader.h - AMDGPU code objects: clang offload bundles, ELF (libelf),
 * kernel descriptors and the NT_AMDGPU_METADATA msgpack note.
 *
 * Used by the emulator (to run kernels) and by the replay (to re-decode the
 * code objects stored in a trace). Code object versions 2 (YAML metadata in
 * the NT_AMD_AMDGPU_HSA_METADATA note, 256-byte amd_kernel_code_t
 * descriptors), 3, 4 and 5 (msgpack metadata, 64-byte kernel descriptors). Parsing only: mapping the loadable segments
 * into device memory is the emulator's job (emu/exec), using `segs`.
 *
 * Sources: LLVM AMDGPUUsage ("Code Object V4 Metadata", "Kernel Descriptor",
 * "ELF Header", "Note Records"), clang-offload-bundler documentation,
 * ../shared/FACTS.md.
 *
 * Errors: functions return a gcn_ld_status and, when err != NULL, write a
 * one-line message naming what is wrong and where (e.g. "code object target is
 * amdgcn-amd-amdhsa--gfx906, only gfx803 is supported"). Untrusted input never
 * asserts or crashes. Thread-safety: parsed objects are immutable.
 */
#ifndef GCN_LOADER_H
#define GCN_LOADER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gcn_ld_status {
    GCN_LD_OK = 0,
    GCN_LD_ENOMEM,
    GCN_LD_BAD_BUNDLE,   /* not an offload bundle, or truncated */
    GCN_LD_NO_TARGET,    /* bundle has no entry for a supported GPU */
    GCN_LD_BAD_ELF,      /* not an AMDGPU ELF, or malformed */
    GCN_LD_UNSUPPORTED,  /* valid but unsupported: other target, code object version */
    GCN_LD_BAD_METADATA, /* metadata note missing or malformed */
} gcn_ld_status;

const char *gcn_ld_status_name(gcn_ld_status s);

/* ---- Offload bundles ---------------------------------------------------- */

/* One entry of a clang offload bundle. */
typedef struct gcn_bundle_entry {
    const uint8_t *data; /* points into the bundle */
    uint64_t size;
    char triple[128];    /* e.g. "hipv4-amdgcn-amd-amdhsa--gfx803" */
} gcn_bundle_entry;

/*
 * Find the gfx803-compatible code object in an offload bundle
 * ("__CLANG_OFFLOAD_BUNDLE__", u64 count, then per entry u64 offset, u64 size,
 * u64 triple length, triple). `len` may be 0 when unknown (the bundle passed to
 * __hipRegisterFatBinary has no length): the extent is then computed from the
 * entries. On GCN_LD_NO_TARGET the message lists the targets found.
 */
gcn_ld_status gcn_bundle_find_gfx803(const void *bundle, size_t len, gcn_bundle_entry *out,
                                     char *err, size_t errlen);

/* Total size in bytes of a bundle (header through the end of the last entry). */
gcn_ld_status gcn_bundle_extent(const void *bundle, size_t *out_len, char *err, size_t errlen);

/* ---- Kernel descriptor (AMDGPUUsage "Kernel Descriptor", 64 bytes) ----- */

typedef struct gcn_kernel_desc {
    uint32_t group_segment_fixed_size;   /* bytes of static LDS */
    uint32_t private_segment_fixed_size; /* bytes of scratch per work-item */
    uint32_t kernarg_size;               /* bytes (v3+; 0 if unknown) */
    int64_t kernel_code_entry_byte_offset; /* entry = descriptor address + this */
    uint32_t compute_pgm_rsrc1;
    uint32_t compute_pgm_rsrc2;
    uint16_t kernel_code_properties;
    /* decoded from the above */
    uint32_t vgpr_count;      /* (GRANULATED_WORKITEM_VGPR_COUNT+1)*4 */
    uint32_t sgpr_count;      /* (GRANULATED_WAVEFRONT_SGPR_COUNT+1)*8 */
    uint8_t float_round_mode_32, float_round_mode_16_64;
    uint8_t float_denorm_mode_32, float_denorm_mode_16_64;
    uint8_t dx10_clamp, ieee_mode;
    uint8_t user_sgpr_count;  /* rsrc2.USER_SGPR */
    uint8_t enable_private_segment; /* rsrc2.ENABLE_PRIVATE_SEGMENT (scratch wave offset SGPR) */
    uint8_t enable_sgpr_workgroup_id[3];     /* x, y, z */
    uint8_t enable_sgpr_workgroup_info;
    uint8_t enable_vgpr_workitem_id;         /* 0: x, 1: x,y, 2: x,y,z */
    /* kernel_code_properties bits */
    uint8_t enable_sgpr_private_segment_buffer;
    uint8_t enable_sgpr_dispatch_ptr;
    uint8_t enable_sgpr_queue_ptr;
    uint8_t enable_sgpr_kernarg_segment_ptr;
    uint8_t enable_sgpr_dispatch_id;
    uint8_t enable_sgpr_flat_scratch_init;
    uint8_t enable_sgpr_private_segment_size;
} gcn_kernel_desc;

/* Parse 64 raw bytes. */
gcn_ld_status gcn_kd_parse(const uint8_t raw[64], gcn_kernel_desc *out, char *err, size_t errlen);

/*
 * Parse a code object v2 descriptor: the 256-byte amd_kernel_code_t at the
 * kernel's symbol (LLVM AMDKernelCodeT.h, AMDGPUUsage "Code Object V2"),
 * translated into the v3 form. Refuses what the emulator cannot start
 * (grid-workgroup-count user SGPRs, wave32, a version other than 1.x).
 */
gcn_ld_status gcn_kd_parse_v2(const uint8_t raw[256], gcn_kernel_desc *out, char *err,
                              size_t errlen);

/* ---- Kernel metadata ------------------------------------------------------ */

typedef struct gcn_kernel_arg {
    char name[64];        /* .name, may be empty */
    char value_kind[32];  /* .value_kind: "global_buffer", "by_value", "hidden_global_offset_x", ... */
    uint32_t offset;      /* bytes into the kernarg segment */
    uint32_t size;        /* bytes */
} gcn_kernel_arg;

typedef struct gcn_kernel {
    char name[256];       /* .name (mangled), e.g. "_Z9vectoraddPKfS0_Pfi" */
    char symbol[264];     /* .symbol, e.g. "_Z9vectoraddPKfS0_Pfi.kd" */
    uint64_t kd_vaddr;    /* ELF vaddr of the kernel descriptor */
    uint64_t entry_vaddr; /* ELF vaddr of the first instruction */
    gcn_kernel_desc kd;
    uint32_t kernarg_segment_size;  /* .kernarg_segment_size */
    uint32_t kernarg_segment_align; /* .kernarg_segment_align */
    uint32_t group_segment_fixed_size;   /* .group_segment_fixed_size */
    uint32_t private_segment_fixed_size; /* .private_segment_fixed_size */
    uint32_t wavefront_size;  /* .wavefront_size (64) */
    uint32_t sgpr_count, vgpr_count; /* .sgpr_count, .vgpr_count */
    uint32_t max_flat_workgroup_size;
    uint32_t n_args;
    gcn_kernel_arg *args;
    struct gcn_code_object *co; /* owner */
} gcn_kernel;

/* A defined data symbol (STT_OBJECT) of the code object: a __device__ or
 * __constant__ variable, found by hipModuleGetGlobal / hipMemcpyToSymbol. */
typedef struct gcn_symbol {
    char *name;
    uint64_t vaddr;  /* ELF vaddr */
    uint64_t size;   /* bytes (st_size) */
} gcn_symbol;

/* A loadable segment (PT_LOAD) of the code object. */
typedef struct gcn_segment {
    uint64_t vaddr, memsz;   /* bytes */
    uint64_t offset, filesz; /* file bytes to copy; the rest (memsz-filesz) is zero */
    uint32_t flags;          /* PF_R/PF_W/PF_X */
} gcn_segment;

typedef struct gcn_code_object {
    uint8_t *elf;            /* private copy of the ELF bytes */
    size_t elf_size;
    char target[64];         /* "amdgcn-amd-amdhsa--gfx803" */
    int code_object_version; /* 2, 3, 4 or 5 */
    uint64_t image_size;     /* bytes needed to map all segments at their vaddr (max vaddr+memsz) */
    uint32_t n_segs;
    gcn_segment *segs;
    uint64_t text_vaddr;     /* .text section */
    uint64_t text_size;
    const uint8_t *text;     /* points into elf, or into text_buf (v2) */
    uint32_t n_kernels;
    gcn_kernel *kernels;
    uint32_t n_syms;
    gcn_symbol *syms;        /* defined STT_OBJECT symbols, from .symtab (else .dynsym) */
    /* v2 only: private copy of .text in which each in-text amd_kernel_code_t
     * is replaced by s_nop words, so that a linear-sweep decode of .text
     * starts every kernel at an instruction boundary. NULL for v3+. */
    uint8_t *text_buf;
} gcn_code_object;

/*
 * Parse an AMDGPU ELF code object (copies the bytes). Accepts code object
 * v2 (EI_ABIVERSION 0, YAML metadata), v3, v4 and v5 (EI_ABIVERSION 1..3,
 * msgpack metadata). Refuses machines other than gfx801/802/803/810, naming
 * the target found (from e_flags, or for v2 objects with e_flags 0 from the
 * NT_AMD_HSA_ISA_VERSION note).
 */
gcn_ld_status gcn_co_parse(const void *elf, size_t len, gcn_code_object **out, char *err,
                           size_t errlen);
void gcn_co_free(gcn_code_object *co); /* accepts NULL */

/*
 * Fill co->kernels from v2 YAML metadata (the NT_AMD_AMDGPU_HSA_METADATA
 * note's text, `len` bytes, NUL not required): Kernels[].Name, .Args (offsets
 * are computed from Size and Align in order, as the v2 ABI lays them out;
 * ValueKind CamelCase becomes the v3 snake_case name, e.g. HiddenGlobalOffsetX
 * -> hidden_global_offset_x) and .CodeProps. Kernel descriptors are not
 * touched (gcn_co_parse does that). co->kernels must be empty.
 */
gcn_ld_status gcn_md_parse_yaml(gcn_code_object *co, const char *text, size_t len, char *err,
                                size_t errlen);

/*
 * Size in bytes of an ELF64 image in memory whose length is unknown
 * (hipModuleLoadData): the end of the furthest header table, section or
 * segment. The caller vouches that the headers are mapped.
 */
gcn_ld_status gcn_elf_extent(const void *elf, size_t *out_len, char *err, size_t errlen);

/* Data symbol by name; NULL if absent. */
const gcn_symbol *gcn_co_find_symbol(const gcn_code_object *co, const char *name);

/* Kernel by name (.name, or .symbol with or without ".kd"); NULL if absent. */
const gcn_kernel *gcn_co_find_kernel(const gcn_code_object *co, const char *name);

/* Copy the loadable segments into `image` (image_size bytes, zeroed first)
 * so that image[v] is the byte at ELF vaddr v. */
void gcn_co_map_image(const gcn_code_object *co, uint8_t *image);

#ifdef __cplusplus
}
#endif
#endif
