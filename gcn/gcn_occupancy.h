/*
 * gcn_occupancy.h - how many workgroups of a kernel one GCN3 compute unit
 * holds at once: the resource rule shared by the replay's dispatcher
 * (replay/disp.c) and the emulator's residency (emu/exec: forward progress).
 *
 * Allocation granules for gfx8 (AMD GCN3 ISA manual Sec. 3 and LLVM
 * AMDGPUUsage / AMDGPUBaseInfo for gfx8): VGPRs in blocks of 4 per lane,
 * SGPRs in blocks of 16, LDS in blocks of 128 dwords (512 bytes). Each wave
 * of a workgroup takes a wave slot, its VGPRs and SGPRs on one SIMD (the
 * least-loaded SIMD that has room); the workgroup's LDS is taken once per CU.
 */
#ifndef GCN_OCCUPANCY_H
#define GCN_OCCUPANCY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Per-CU resources. */
typedef struct gcn_cu_limits {
    uint32_t simds;       /* SIMD units per CU */
    uint32_t wave_slots;  /* wavefront slots per SIMD */
    uint32_t vgprs;       /* VGPRs per lane per SIMD */
    uint32_t sgprs;       /* SGPRs per SIMD */
    uint64_t lds;         /* LDS bytes per CU */
} gcn_cu_limits;

/* R9 Nano (Fiji, gfx803): 4 SIMDs x 10 wave slots, 256 VGPRs, 800 SGPRs,
 * 64 KiB LDS per CU (GCN3 ISA manual Sec. 1 and 3.2); 64 CUs per GPU. */
#define GCN3_R9NANO_CU_LIMITS {4u, 10u, 256u, 800u, 65536u}
#define GCN3_R9NANO_CUS 64u

/* Resources a wave / workgroup holds, rounded up to the granules above
 * (0 counts as 1 register). */
static inline uint32_t gcn_vgpr_alloc(uint32_t vgprs) { uint32_t v = vgprs ? vgprs : 1u; return (v + 3u) & ~3u; }
static inline uint32_t gcn_sgpr_alloc(uint32_t sgprs) { uint32_t v = sgprs ? sgprs : 1u; return (v + 15u) & ~15u; }
static inline uint64_t gcn_lds_alloc(uint64_t bytes) { return (bytes + 511u) & ~(uint64_t)511u; }

/* Workgroups of `waves_per_wg` waves (each `vgprs` VGPRs and `sgprs` SGPRs)
 * and `lds_bytes` of LDS that one empty CU with limits `lim` holds at once,
 * placing waves as the replay's dispatcher does. 0 when one never fits. */
uint32_t gcn_wgs_per_cu(const gcn_cu_limits *lim, uint32_t waves_per_wg, uint32_t vgprs, uint32_t sgprs,
                        uint64_t lds_bytes);

#ifdef __cplusplus
}
#endif
#endif
