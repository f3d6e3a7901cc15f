/*
 * 402-module.c - loading real hipcc code objects onto the machine: the image
 * lands in a TRC_MEM_CODE allocation on device 0 with the ELF segment bytes
 * at their vaddrs, .text is decoded once, and every kernel's descriptor
 * places exactly rsrc2.USER_SGPR user SGPRs (what gcn_launch checks).
 *
 * Needs: gcn/ (loader, decoder: gcn_program_decode), hipcc.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "emu/exec/exec_internal.h"
#include "4xx_hipcc_internal.h"

static const char *src =
    "#include <hip/hip_runtime.h>\n"
    "__global__ void saxpy(float a, const float *x, float *y, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n"
    "__global__ void tile(float *o, const float *in, int w)\n"
    "{ __shared__ float t[16][17]; int x = threadIdx.x, y = threadIdx.y;\n"
    "  t[y][x] = in[(blockIdx.y * 16 + y) * w + blockIdx.x * 16 + x]; __syncthreads();\n"
    "  o[(blockIdx.x * 16 + y) * w + blockIdx.y * 16 + x] = t[x][y]; }\n";

static void check_module(const char *opt)
{
    gcn_code_object *co = t4_build_co(src, opt);
    assert_non_null(co);
    gcn_machine_config cfg = {.n_gpus = 2, .n_threads = 1};
    char err[512];
    gcn_machine *m = gcn_machine_create(&cfg, err, sizeof(err));
    assert_non_null(m);
    uint64_t image_size = co->image_size;
    gcn_module *mod = gcn_module_load(m, co, err, sizeof(err));
    if (!mod)
        fail_msg("%s", err);
    assert_ptr_equal(gcn_module_co(mod), co);
    uint64_t base = gcn_module_base(mod);
    gcn_alloc_info info;
    assert_int_equal(gcn_mem_find(m, base, image_size, &info), 1);
    assert_int_equal(info.base, base);
    assert_int_equal(info.kind, TRC_MEM_CODE);
    assert_int_equal(info.device, 0);
    /* segment bytes at their vaddrs, zero fill after filesz */
    for (uint32_t i = 0; i < co->n_segs; i++) {
        const gcn_segment *s = &co->segs[i];
        assert_memory_equal((const uint8_t *)(uintptr_t)(base + s->vaddr), co->elf + s->offset, s->filesz);
        for (uint64_t b = s->filesz; b < s->memsz; b++)
            assert_int_equal(((const uint8_t *)(uintptr_t)base)[s->vaddr + b], 0);
    }
    /* the kernel descriptor is in device memory where the packet will point */
    assert_int_equal(co->n_kernels, 2);
    for (uint32_t i = 0; i < co->n_kernels; i++) {
        const gcn_kernel *k = &co->kernels[i];
        const gcn_kernel_desc *kd = &k->kd;
        uint32_t placed = 4u * kd->enable_sgpr_private_segment_buffer + 2u * kd->enable_sgpr_dispatch_ptr +
                          2u * kd->enable_sgpr_queue_ptr + 2u * kd->enable_sgpr_kernarg_segment_ptr +
                          2u * kd->enable_sgpr_dispatch_id + 2u * kd->enable_sgpr_flat_scratch_init +
                          kd->enable_sgpr_private_segment_size;
        assert_int_equal(placed, kd->user_sgpr_count);
        assert_int_equal(k->entry_vaddr, k->kd_vaddr + (uint64_t)kd->kernel_code_entry_byte_offset);
        assert_true(k->entry_vaddr >= co->text_vaddr && k->entry_vaddr < co->text_vaddr + co->text_size);
        /* decoded once: the entry is an instruction boundary */
        assert_non_null(gcn_program_at(mod->prog, k->entry_vaddr));
        /* FACTS.md: every kernel's float mode */
        assert_int_equal(gcn_initial_mode(kd), 0x3c0);
    }
    gcn_module_unload(m, mod);
    assert_int_equal(gcn_mem_find(m, base, 1, &info), 0);
    gcn_module_unload(m, NULL);
    gcn_machine_destroy(m);
}

static void test_module_o2(void **state) { (void)state; check_module("-O2"); }
static void test_module_o0(void **state) { (void)state; check_module("-O0"); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_module_o2),
        cmocka_unit_test(test_module_o0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
