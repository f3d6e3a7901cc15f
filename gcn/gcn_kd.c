/*
 * gcn_kd.c - the 64-byte AMDHSA kernel descriptor (code object v3+) and the
 * 256-byte amd_kernel_code_t of code object v2.
 *
 * Source: LLVM AMDGPUUsage, "Kernel Descriptor" (table "Kernel Descriptor for
 * GFX6-GFX10"), "compute_pgm_rsrc1 for GFX6-GFX10", "compute_pgm_rsrc2 for
 * GFX6-GFX10" and "Kernel Code Properties". Byte offsets:
 *   0 group_segment_fixed_size u32, 4 private_segment_fixed_size u32,
 *   8 kernarg_size u32, 12 reserved(4), 16 kernel_code_entry_byte_offset i64,
 *   24 reserved(20), 44 compute_pgm_rsrc3 (GFX90A/GFX10+ only, 0 on GFX8),
 *   48 compute_pgm_rsrc1, 52 compute_pgm_rsrc2, 56 kernel_code_properties u16,
 *   58 reserved(6).
 * The parse rejects only what would make the emulator's initial state wrong
 * (wave32, an invalid work-item-id setting, more user SGPRs than exist).
 */
#include "gcn_loader.h"
#include "loader_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>


static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t bits(uint32_t v, unsigned lo, unsigned n)
{
    return (v >> lo) & ((1u << n) - 1);
}

gcn_ld_status gcn_kd_parse(const uint8_t raw[64], gcn_kernel_desc *out, char *err, size_t errlen)
{
    if (!raw || !out)
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen, "kernel descriptor: NULL argument");
    gcn_kernel_desc d;
    memset(&d, 0, sizeof d);
    d.group_segment_fixed_size = rd32(raw + 0);
    d.private_segment_fixed_size = rd32(raw + 4);
    d.kernarg_size = rd32(raw + 8);
    d.kernel_code_entry_byte_offset = (int64_t)((uint64_t)rd32(raw + 16) |
                                                (uint64_t)rd32(raw + 20) << 32);
    uint32_t rsrc3 = rd32(raw + 44);
    d.compute_pgm_rsrc1 = rd32(raw + 48);
    d.compute_pgm_rsrc2 = rd32(raw + 52);
    d.kernel_code_properties = (uint16_t)(raw[56] | raw[57] << 8);

    uint32_t r1 = d.compute_pgm_rsrc1, r2 = d.compute_pgm_rsrc2;
    d.vgpr_count = (bits(r1, 0, 6) + 1) * 4;
    d.sgpr_count = (bits(r1, 6, 4) + 1) * 8;
    d.float_round_mode_32 = (uint8_t)bits(r1, 12, 2);
    d.float_round_mode_16_64 = (uint8_t)bits(r1, 14, 2);
    d.float_denorm_mode_32 = (uint8_t)bits(r1, 16, 2);
    d.float_denorm_mode_16_64 = (uint8_t)bits(r1, 18, 2);
    d.dx10_clamp = (uint8_t)bits(r1, 21, 1);
    d.ieee_mode = (uint8_t)bits(r1, 23, 1);

    d.enable_private_segment = (uint8_t)bits(r2, 0, 1);
    d.user_sgpr_count = (uint8_t)bits(r2, 1, 5);
    d.enable_sgpr_workgroup_id[0] = (uint8_t)bits(r2, 7, 1);
    d.enable_sgpr_workgroup_id[1] = (uint8_t)bits(r2, 8, 1);
    d.enable_sgpr_workgroup_id[2] = (uint8_t)bits(r2, 9, 1);
    d.enable_sgpr_workgroup_info = (uint8_t)bits(r2, 10, 1);
    d.enable_vgpr_workitem_id = (uint8_t)bits(r2, 11, 2);

    uint32_t kcp = d.kernel_code_properties;
    d.enable_sgpr_private_segment_buffer = (uint8_t)bits(kcp, 0, 1);
    d.enable_sgpr_dispatch_ptr = (uint8_t)bits(kcp, 1, 1);
    d.enable_sgpr_queue_ptr = (uint8_t)bits(kcp, 2, 1);
    d.enable_sgpr_kernarg_segment_ptr = (uint8_t)bits(kcp, 3, 1);
    d.enable_sgpr_dispatch_id = (uint8_t)bits(kcp, 4, 1);
    d.enable_sgpr_flat_scratch_init = (uint8_t)bits(kcp, 5, 1);
    d.enable_sgpr_private_segment_size = (uint8_t)bits(kcp, 6, 1);

    if (bits(kcp, 10, 1))
        return gcn_ld_fail(GCN_LD_UNSUPPORTED, err, errlen,
                    "kernel descriptor: ENABLE_WAVEFRONT_SIZE32 is set; GCN3 runs wave64 only");
    if (rsrc3)
        return gcn_ld_fail(GCN_LD_UNSUPPORTED, err, errlen,
                    "kernel descriptor: compute_pgm_rsrc3 = 0x%x, must be 0 on gfx8", rsrc3);
    if (d.enable_vgpr_workitem_id == 3)
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                    "kernel descriptor: ENABLE_VGPR_WORKITEM_ID = 3 is reserved");
    /* User SGPRs the properties ask for (AMDGPUUsage "Initial Kernel Execution
     * State": 4 + 2 + 2 + 2 + 2 + 2 + 1); they must fit in USER_SGPR_COUNT. */
    unsigned need = 4u * d.enable_sgpr_private_segment_buffer + 2u * d.enable_sgpr_dispatch_ptr +
                    2u * d.enable_sgpr_queue_ptr + 2u * d.enable_sgpr_kernarg_segment_ptr +
                    2u * d.enable_sgpr_dispatch_id + 2u * d.enable_sgpr_flat_scratch_init +
                    1u * d.enable_sgpr_private_segment_size;
    if (need > d.user_sgpr_count || d.user_sgpr_count > 16)
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                    "kernel descriptor: USER_SGPR_COUNT %u inconsistent with enabled user "
                    "SGPRs (%u needed, 16 max)",
                    d.user_sgpr_count, need);
    if (d.kernel_code_entry_byte_offset == 0)
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                    "kernel descriptor: kernel_code_entry_byte_offset is 0");
    *out = d;
    return GCN_LD_OK;
}

/*
 * amd_kernel_code_t (LLVM AMDKernelCodeT.h; AMDGPUUsage "Code Object V2"),
 * byte offsets used here: 0 amd_kernel_code_version_major u32, 16
 * kernel_code_entry_byte_offset i64, 48 compute_pgm_rsrc1 u32, 52
 * compute_pgm_rsrc2 u32, 56 kernel_code_properties u32 (bits 0-6 as in the v3
 * descriptor, 7-9 ENABLE_SGPR_GRID_WORKGROUP_COUNT_X/Y/Z), 60
 * workitem_private_segment_byte_size u32, 64 workgroup_group_segment_byte_size
 * u32, 72 kernarg_segment_byte_size u64, 103 wavefront_size (log2) u8.
 */
gcn_ld_status gcn_kd_parse_v2(const uint8_t raw[256], gcn_kernel_desc *out, char *err,
                              size_t errlen)
{
    if (!raw || !out)
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen, "amd_kernel_code_t: NULL argument");
    uint32_t major = rd32(raw + 0);
    if (major != 1)
        return gcn_ld_fail(GCN_LD_UNSUPPORTED, err, errlen,
                    "amd_kernel_code_t: version %u.%u, only 1.x is known", major, rd32(raw + 4));
    uint32_t kcp = rd32(raw + 56);
    if (bits(kcp, 7, 3))
        return gcn_ld_fail(GCN_LD_UNSUPPORTED, err, errlen,
                    "amd_kernel_code_t: ENABLE_SGPR_GRID_WORKGROUP_COUNT user SGPRs (properties "
                    "0x%x) are not supported",
                    kcp);
    if (raw[103] != 6)
        return gcn_ld_fail(GCN_LD_UNSUPPORTED, err, errlen,
                    "amd_kernel_code_t: wavefront_size 2^%u, GCN3 runs wave64 only", raw[103]);
    uint64_t kernarg = (uint64_t)rd32(raw + 72) | (uint64_t)rd32(raw + 76) << 32;
    if (kernarg > UINT32_MAX)
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                    "amd_kernel_code_t: kernarg_segment_byte_size %llu is implausible",
                    (unsigned long long)kernarg);
    /* The same facts in the v3 descriptor layout, then the common checks. */
    uint8_t kd[64];
    memset(kd, 0, sizeof kd);
    memcpy(kd + 0, raw + 64, 4);  /* group segment */
    memcpy(kd + 4, raw + 60, 4);  /* private segment */
    memcpy(kd + 8, raw + 72, 4);  /* kernarg size */
    memcpy(kd + 16, raw + 16, 8); /* entry offset */
    memcpy(kd + 48, raw + 48, 8); /* rsrc1, rsrc2 */
    kd[56] = (uint8_t)(kcp & 0x7f);
    return gcn_kd_parse(kd, out, err, errlen);
}
