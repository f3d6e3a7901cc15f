/*
 * 401-wave-init.c - initial wavefront state of a dispatch (LLVM AMDGPUUsage
 * "Initial Kernel Execution State", GFX8): user SGPR order, system SGPRs,
 * work-item id VGPRs, EXEC of a partial last wave, MODE, the scratch V#
 * (swizzle, ROCr word 3) and the wave offset, on hand-built descriptors.
 *
 * Needs only emu/exec: the waves are initialised, not run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emu/exec/exec_internal.h"

struct fix {
    gcn_worker wk;
    gcn_module mod;
    gcn_kernel k;
    gcn_launch_params p;
    struct gcn_launch_job job;
    struct gcn_wg wg;
    uint8_t image[64];
};

static void fix_init(struct fix *f, uint32_t wx, uint32_t wy, uint32_t wz)
{
    memset(f, 0, sizeof(*f));
    f->wk.vgprs = calloc((size_t)GCN_MAX_WAVES_PER_WG * 256, sizeof(*f->wk.vgprs));
    f->wk.lds = calloc(1, GCN_MAX_LDS);
    assert_non_null(f->wk.vgprs);
    f->mod.image = f->image;
    strcpy(f->k.name, "_Z1kv");
    f->k.entry_vaddr = 0x1100;
    f->p.grid[0] = 7;
    f->p.grid[1] = 5;
    f->p.grid[2] = 3;
    f->p.wg_size[0] = wx;
    f->p.wg_size[1] = wy;
    f->p.wg_size[2] = wz;
    f->job.mod = &f->mod;
    f->job.k = &f->k;
    f->job.p = &f->p;
    f->job.wg_items = wx * wy * wz;
    f->job.waves_per_wg = (f->job.wg_items + 63) / 64;
    f->job.n_vgpr = 8;
    f->job.lds_size = 512;
    f->job.dispatch_ptr = 0x7000000100ull;
    f->job.queue_ptr = 0x7000000000ull;
    f->job.kernarg_ptr = 0x7000000200ull;
    f->job.dispatch_id = 0x1234567890ull;
}

static void fix_free(struct fix *f)
{
    free(f->wk.vgprs);
    free(f->wk.lds);
}

/* Every user SGPR enabled (as far as GFX8 allows), scratch on. */
static void test_all_sgprs(void **state)
{
    (void)state;
    struct fix f;
    fix_init(&f, 16, 8, 2); /* 256 items: 4 full waves */
    gcn_kernel_desc *kd = &f.k.kd;
    kd->enable_sgpr_private_segment_buffer = 1;
    kd->enable_sgpr_dispatch_ptr = 1;
    kd->enable_sgpr_queue_ptr = 1;
    kd->enable_sgpr_kernarg_segment_ptr = 1;
    kd->enable_sgpr_dispatch_id = 1;
    kd->enable_sgpr_flat_scratch_init = 1;
    kd->enable_sgpr_private_segment_size = 1;
    kd->user_sgpr_count = 15;
    kd->enable_sgpr_workgroup_id[0] = kd->enable_sgpr_workgroup_id[1] = kd->enable_sgpr_workgroup_id[2] = 1;
    kd->enable_sgpr_workgroup_info = 1;
    kd->enable_private_segment = 1;
    kd->enable_vgpr_workitem_id = 2;
    f.job.private_size = 40;
    f.job.slice = 40 * 64;
    f.job.scratch_base = 0x7f0000000000ull;
    f.job.scratch_size = 7 * 5 * 3 * 4 * f.job.slice;
    f.job.mode = 0x3c0;

    gcn_wave w;
    uint32_t wg_id[3] = {4, 2, 1};
    uint32_t wg_lin = 4 + 2 * 7 + 1 * 35;
    gcn_wave_init_state(&f.wk, &f.job, &w, 3, wg_lin, wg_id, &f.wg);

    /* s[0:3] scratch V#: base, swizzle, records, ROCr word 3 */
    assert_int_equal(w.s[0], 0x00000000u);
    assert_int_equal(w.s[1], 0x80007f00u);
    assert_int_equal(w.s[2], (uint32_t)f.job.scratch_size);
    assert_int_equal(w.s[3], 0x00EA4FACu);
    assert_int_equal(w.s[4], 0x00000100u); /* dispatch ptr */
    assert_int_equal(w.s[5], 0x70u);
    assert_int_equal(w.s[6], 0x00000000u); /* queue ptr */
    assert_int_equal(w.s[7], 0x70u);
    assert_int_equal(w.s[8], 0x00000200u); /* kernarg ptr */
    assert_int_equal(w.s[9], 0x70u);
    assert_int_equal(w.s[10], 0x34567890u); /* dispatch id */
    assert_int_equal(w.s[11], 0x12u);
    assert_int_equal(w.s[12], 0u);          /* flat scratch init: offset, size */
    assert_int_equal(w.s[13], 40u);
    assert_int_equal(w.s[14], 40u);         /* private segment size */
    assert_int_equal(w.s[15], 4u);          /* workgroup id x, y, z */
    assert_int_equal(w.s[16], 2u);
    assert_int_equal(w.s[17], 1u);
    assert_int_equal(w.s[18], 4u);          /* workgroup info: not first wave, 4 waves */
    uint32_t wave_global = wg_lin * 4 + 3;
    assert_int_equal(w.wave_global, wave_global);
    assert_int_equal(w.s[19], wave_global * 40u * 64u); /* private segment wave byte offset */
    assert_int_equal(w.scratch_wave_offset, (uint64_t)wave_global * 40u * 64u);
    assert_int_equal(w.s[20], 0u);
    assert_int_equal(w.scratch_base, 0x7f0000000000ull);
    assert_int_equal(w.private_size, 40);

    assert_int_equal(gcn_exec_mask(&w), UINT64_MAX);
    assert_int_equal(gcn_vcc(&w), 0);
    assert_int_equal(w.mode, 0x3c0);
    assert_int_equal(w.pc, 0x1100);
    assert_int_equal(w.status, GCN_WAVE_RUNNING);
    assert_int_equal(w.n_vgpr, 8);
    assert_ptr_equal(w.lds, f.wk.lds);
    assert_int_equal(w.lds_size, 512);
    assert_int_equal(w.image_base, (uintptr_t)f.image);
    /* work-items 192..255 of a 16x8x2 block */
    for (uint32_t l = 0; l < 64; l++) {
        uint32_t t = 192 + l;
        assert_int_equal(w.v[0][l], t % 16);
        assert_int_equal(w.v[1][l], (t / 16) % 8);
        assert_int_equal(w.v[2][l], t / 128);
    }
    fix_free(&f);
}

/* The typical -O2 HIP kernel: s[0:3] scratch buffer, s[4:5] dispatch ptr,
 * s[6:7] kernarg ptr, s8 workgroup id x (FACTS.md; reduction.O2.co reads the
 * packet through s[4:5] and arguments through s[6:7]). Partial last wave. */
static void test_typical_o2(void **state)
{
    (void)state;
    struct fix f;
    fix_init(&f, 100, 1, 1); /* 100 items: waves of 64 and 36 */
    gcn_kernel_desc *kd = &f.k.kd;
    kd->enable_sgpr_private_segment_buffer = 1;
    kd->enable_sgpr_dispatch_ptr = 1;
    kd->enable_sgpr_kernarg_segment_ptr = 1;
    kd->user_sgpr_count = 8;
    kd->enable_sgpr_workgroup_id[0] = 1;
    kd->enable_vgpr_workitem_id = 0;
    gcn_wave w;
    uint32_t wg_id[3] = {6, 0, 0};
    gcn_wave_init_state(&f.wk, &f.job, &w, 1, 6, wg_id, &f.wg);
    assert_int_equal(w.s[0], 0);      /* no scratch: null V# base */
    assert_int_equal(w.s[3], 0x00EA4FACu);
    assert_int_equal(w.s[4], 0x100);
    assert_int_equal(w.s[6], 0x200);
    assert_int_equal(w.s[8], 6);
    assert_int_equal(w.s[9], 0);
    assert_int_equal(gcn_exec_mask(&w), (1ull << 36) - 1);
    for (uint32_t l = 0; l < 36; l++)
        assert_int_equal(w.v[0][l], 64 + l);
    assert_int_equal(w.scratch_base, 0);
    assert_int_equal(w.wave_global, 6 * 2 + 1);
    assert_int_equal(w.wave_in_wg, 1);
    assert_int_equal(w.wg_id[0], 6);
    fix_free(&f);
}

/* Scratch beyond 4 GiB: the wave offset no longer fits its SGPR, so the V#
 * base moves to the wave's slice and the SGPR is 0; same bytes either way. */
static void test_huge_scratch(void **state)
{
    (void)state;
    struct fix f;
    fix_init(&f, 256, 1, 1);
    gcn_kernel_desc *kd = &f.k.kd;
    kd->enable_sgpr_private_segment_buffer = 1;
    kd->user_sgpr_count = 4;
    kd->enable_private_segment = 1;
    f.job.private_size = 16624; /* reduction.O0.co */
    f.job.slice = 16624ull * 64;
    f.job.scratch_base = 0x7f0000000000ull;
    f.job.scratch_size = 4096ull * f.job.slice; /* 4.36e9 bytes */
    gcn_wave w;
    uint32_t wg_id[3] = {1020, 0, 0};
    gcn_wave_init_state(&f.wk, &f.job, &w, 2, 1020, wg_id, &f.wg);
    uint64_t off = (1020ull * 4 + 2) * f.job.slice;
    assert_true(off > UINT32_MAX);
    uint64_t vbase = (uint64_t)w.s[0] | (uint64_t)(w.s[1] & 0xffffu) << 32;
    assert_int_equal(vbase, 0x7f0000000000ull + off);
    assert_int_equal(w.s[4], 0); /* wave offset SGPR */
    assert_int_equal(w.scratch_base, vbase);
    assert_int_equal(w.scratch_wave_offset, 0);
    fix_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_sgprs),
        cmocka_unit_test(test_typical_o2),
        cmocka_unit_test(test_huge_scratch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
