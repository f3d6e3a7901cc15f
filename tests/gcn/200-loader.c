/*
 * 200-loader.c - code-object loader tests on real hipcc 5.2 output.
 *
 * Golden inputs (tests/emu/data/, shared with the emulator tests): vectoradd.gfx803.co is the gfx803 code
 * object of benchmarks/vectoradd.hip at -O2; vectoradd.bundle is the
 * .hip_fatbin section of the same program (objcopy -O binary
 * --only-section=.hip_fatbin). Expected values were read independently with
 * llvm-readelf --notes and xxd of the descriptor at .rodata 0x680, decoded by
 * hand against AMDGPUUsage "Kernel Descriptor". Tests must run from the
 * repository root (as `make unit` does).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcn/gcn_loader.h"

static uint8_t *load(const char *name, size_t *len)
{
    char path[512];
    const char *f = __FILE__; /* tests/gcn/200-loader.c: inputs shared with tests/emu */
    const char *slash = strrchr(f, '/');
    snprintf(path, sizeof path, "%.*s/../emu/data/%s", slash ? (int)(slash - f) : 1, slash ? f : ".",
             name);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        fail_msg("cannot open %s (run from the repository root)", path);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    *len = (size_t)n;
    return b;
}

static void test_bundle_find(void **state)
{
    size_t blen, clen;
    uint8_t *b = load("vectoradd.bundle", &blen);
    uint8_t *co = load("vectoradd.gfx803.co", &clen);
    gcn_bundle_entry e;
    char err[256] = "";
    assert_int_equal(gcn_bundle_find_gfx803(b, blen, &e, err, sizeof err), GCN_LD_OK);
    assert_string_equal(e.triple, "hipv4-amdgcn-amd-amdhsa--gfx803");
    assert_int_equal(e.size, clen);
    assert_ptr_equal(e.data, b + 0x1000);
    assert_memory_equal(e.data, co, clen);
    /* Unknown length (the __hipRegisterFatBinary case). */
    memset(&e, 0, sizeof e);
    assert_int_equal(gcn_bundle_find_gfx803(b, 0, &e, err, sizeof err), GCN_LD_OK);
    assert_int_equal(e.size, clen);
    size_t ext = 0;
    assert_int_equal(gcn_bundle_extent(b, &ext, err, sizeof err), GCN_LD_OK);
    assert_int_equal(ext, 0x1000 + clen);
    free(b);
    free(co);
}

static void test_bundle_other_target(void **state)
{
    size_t blen;
    uint8_t *b = load("vectoradd.bundle", &blen);
    uint8_t *p = memmem(b, 0x100, "gfx803", 6);
    assert_non_null(p);
    memcpy(p, "gfx906", 6);
    char err[256] = "";
    assert_int_equal(gcn_bundle_find_gfx803(b, blen, NULL, err, sizeof err), GCN_LD_NO_TARGET);
    assert_non_null(strstr(err, "hipv4-amdgcn-amd-amdhsa--gfx906"));
    assert_non_null(strstr(err, "host-x86_64-unknown-linux"));
    free(b);
}

static void test_bundle_corrupt(void **state)
{
    size_t blen;
    uint8_t *b = load("vectoradd.bundle", &blen);
    char err[256];
    /* Every prefix shorter than the extent is an error, never a crash. */
    for (size_t n = 0; n < 0x1000 + 3456; n++) {
        uint8_t *c = malloc(n ? n : 1);
        memcpy(c, b, n);
        err[0] = 0;
        gcn_ld_status st = gcn_bundle_find_gfx803(c, n ? n : 1, NULL, err, sizeof err);
        if (st == GCN_LD_OK)
            fail_msg("prefix of %zu bytes accepted", n);
        assert_true(err[0] != 0);
        free(c);
    }
    uint8_t *c = malloc(blen);
    memcpy(c, b, blen);
    c[0] = 'X';
    assert_int_equal(gcn_bundle_find_gfx803(c, blen, NULL, err, sizeof err), GCN_LD_BAD_BUNDLE);
    memcpy(c, b, blen);
    c[24] = 0; /* zero entries */
    assert_int_equal(gcn_bundle_find_gfx803(c, blen, NULL, err, sizeof err), GCN_LD_BAD_BUNDLE);
    memcpy(c, b, blen);
    c[0x58 + 7] = 0x80; /* gfx803 entry offset huge */
    assert_int_equal(gcn_bundle_find_gfx803(c, blen, NULL, err, sizeof err), GCN_LD_BAD_BUNDLE);
    assert_int_equal(gcn_bundle_find_gfx803(c, 0, NULL, err, sizeof err), GCN_LD_BAD_BUNDLE);
    assert_int_equal(gcn_bundle_find_gfx803(NULL, 0, NULL, err, sizeof err), GCN_LD_BAD_BUNDLE);
    free(c);
    free(b);
}

static void test_co_parse(void **state)
{
    size_t len;
    uint8_t *b = load("vectoradd.gfx803.co", &len);
    gcn_code_object *co = NULL;
    char err[256] = "";
    gcn_ld_status st = gcn_co_parse(b, len, &co, err, sizeof err);
    if (st != GCN_LD_OK)
        fail_msg("%s: %s", gcn_ld_status_name(st), err);
    assert_string_equal(co->target, "amdgcn-amd-amdhsa--gfx803");
    assert_int_equal(co->code_object_version, 4);
    assert_int_equal(co->elf_size, len);
    assert_ptr_not_equal(co->elf, b); /* private copy */
    /* PT_LOADs: readelf -l */
    assert_int_equal(co->n_segs, 3);
    assert_int_equal(co->segs[0].vaddr, 0);
    assert_int_equal(co->segs[0].filesz, 0x6c3);
    assert_int_equal(co->segs[1].vaddr, 0x1700);
    assert_int_equal(co->segs[1].offset, 0x700);
    assert_int_equal(co->segs[1].filesz, 0xac);
    assert_int_equal(co->segs[1].flags, 5); /* R E */
    assert_int_equal(co->segs[2].vaddr, 0x27b0);
    assert_int_equal(co->segs[2].memsz, 0x70);
    assert_int_equal(co->image_size, 0x2820);
    assert_int_equal(co->text_vaddr, 0x1700);
    assert_int_equal(co->text_size, 0xac);
    assert_ptr_equal(co->text, co->elf + 0x700);
    /* first instruction: s_load_dword s0, s[4:5], 0x4 = C0020002 00000004 */
    assert_int_equal(co->text[0] | co->text[1] << 8 | co->text[2] << 16 | (uint32_t)co->text[3] << 24,
                     0xC0020002u);

    assert_int_equal(co->n_kernels, 1);
    const gcn_kernel *k = &co->kernels[0];
    assert_ptr_equal(k->co, co);
    assert_string_equal(k->name, "_Z9vectoraddPKfS0_Pfi");
    assert_string_equal(k->symbol, "_Z9vectoraddPKfS0_Pfi.kd");
    assert_int_equal(k->kd_vaddr, 0x680);
    assert_int_equal(k->entry_vaddr, 0x1700);
    assert_int_equal(k->kernarg_segment_size, 28);
    assert_int_equal(k->kernarg_segment_align, 8);
    assert_int_equal(k->group_segment_fixed_size, 0);
    assert_int_equal(k->private_segment_fixed_size, 0);
    assert_int_equal(k->wavefront_size, 64);
    assert_int_equal(k->sgpr_count, 11);
    assert_int_equal(k->vgpr_count, 6);
    assert_int_equal(k->max_flat_workgroup_size, 1024);
    assert_int_equal(k->n_args, 4);
    static const uint32_t off[4] = {0, 8, 16, 24}, sz[4] = {8, 8, 8, 4};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(k->args[i].offset, off[i]);
        assert_int_equal(k->args[i].size, sz[i]);
        assert_string_equal(k->args[i].value_kind, i < 3 ? "global_buffer" : "by_value");
        assert_string_equal(k->args[i].name, ""); /* -O2 drops names */
    }
    /* Descriptor bytes at 0x680: rsrc1 0x00ac0041, rsrc2 0x90, properties 0x0b. */
    const gcn_kernel_desc *d = &k->kd;
    assert_int_equal(d->kernarg_size, 28);
    assert_int_equal(d->kernel_code_entry_byte_offset, 0x1080);
    assert_int_equal(d->compute_pgm_rsrc1, 0x00ac0041);
    assert_int_equal(d->compute_pgm_rsrc2, 0x90);
    assert_int_equal(d->kernel_code_properties, 0x0b);
    assert_int_equal(d->vgpr_count, 8);
    assert_int_equal(d->sgpr_count, 16);
    assert_int_equal(d->float_round_mode_32, 0);
    assert_int_equal(d->float_round_mode_16_64, 0);
    assert_int_equal(d->float_denorm_mode_32, 0);    /* FP32 denormals flushed */
    assert_int_equal(d->float_denorm_mode_16_64, 3); /* FP64/16 kept */
    assert_int_equal(d->dx10_clamp, 1);
    assert_int_equal(d->ieee_mode, 1);
    assert_int_equal(d->user_sgpr_count, 8);
    assert_int_equal(d->enable_private_segment, 0);
    assert_int_equal(d->enable_sgpr_workgroup_id[0], 1);
    assert_int_equal(d->enable_sgpr_workgroup_id[1], 0);
    assert_int_equal(d->enable_sgpr_workgroup_id[2], 0);
    assert_int_equal(d->enable_vgpr_workitem_id, 0);
    assert_int_equal(d->enable_sgpr_private_segment_buffer, 1);
    assert_int_equal(d->enable_sgpr_dispatch_ptr, 1);
    assert_int_equal(d->enable_sgpr_queue_ptr, 0);
    assert_int_equal(d->enable_sgpr_kernarg_segment_ptr, 1);
    assert_int_equal(d->enable_sgpr_dispatch_id, 0);
    assert_int_equal(d->enable_sgpr_flat_scratch_init, 0);

    assert_ptr_equal(gcn_co_find_kernel(co, "_Z9vectoraddPKfS0_Pfi"), k);
    assert_ptr_equal(gcn_co_find_kernel(co, "_Z9vectoraddPKfS0_Pfi.kd"), k);
    assert_null(gcn_co_find_kernel(co, "_Z9vectoraddPKfS0_Pf"));
    assert_null(gcn_co_find_kernel(co, "vectoradd"));
    assert_null(gcn_co_find_kernel(NULL, "x"));

    uint8_t *img = malloc(co->image_size);
    memset(img, 0xee, co->image_size);
    gcn_co_map_image(co, img);
    assert_memory_equal(img + 0x1700, b + 0x700, 0xac);
    assert_memory_equal(img + 0x680, b + 0x680, 64);
    assert_int_equal(img[0x1000], 0); /* gap between segments is zeroed */
    assert_int_equal(img[0x27b0 + 0x6f], b[0x7b0 + 0x6f]);
    free(img);
    gcn_co_free(co);
    gcn_co_free(NULL);
    free(b);
}

static void expect_refusal(uint8_t *b, size_t len, gcn_ld_status want, const char *needle)
{
    gcn_code_object *co = (gcn_code_object *)1;
    char err[256] = "";
    gcn_ld_status st = gcn_co_parse(b, len, &co, err, sizeof err);
    assert_int_equal(st, want);
    assert_null(co);
    if (!strstr(err, needle))
        fail_msg("message \"%s\" does not mention \"%s\"", err, needle);
}

static void test_co_refusals(void **state)
{
    size_t len;
    uint8_t *b = load("vectoradd.gfx803.co", &len);
    uint8_t *c = malloc(len);
    memcpy(c, b, len);
    c[48] = 0x2f; /* e_flags mach = gfx906 */
    expect_refusal(c, len, GCN_LD_UNSUPPORTED, "gfx906");
    c[48] = 0x7e; /* unknown */
    expect_refusal(c, len, GCN_LD_UNSUPPORTED, "0x7e");
    memcpy(c, b, len);
    c[8] = 1; /* ABI version 1 = code object v3: accepted (v4's msgpack note is v3's format) */
    gcn_code_object *co3 = NULL;
    assert_int_equal(gcn_co_parse(c, len, &co3, NULL, 0), GCN_LD_OK);
    assert_int_equal(co3->code_object_version, 3);
    gcn_co_free(co3);
    c[8] = 0; /* v2: a v4 object relabelled has no v2 YAML metadata note */
    expect_refusal(c, len, GCN_LD_BAD_METADATA, "v2");
    memcpy(c, b, len);
    c[7] = 0; /* System V OS ABI */
    expect_refusal(c, len, GCN_LD_UNSUPPORTED, "ELFOSABI_AMDGPU_HSA");
    memcpy(c, b, len);
    c[18] = 62; /* x86-64 */
    expect_refusal(c, len, GCN_LD_BAD_ELF, "EM_AMDGPU");
    memcpy(c, b, len);
    c[4] = 1; /* ELF32 */
    expect_refusal(c, len, GCN_LD_BAD_ELF, "ELF64");
    /* gfx801/802/810 are accepted: same ISA family. */
    memcpy(c, b, len);
    c[48] = 0x29;
    gcn_code_object *co = NULL;
    char err[256];
    assert_int_equal(gcn_co_parse(c, len, &co, err, sizeof err), GCN_LD_OK);
    gcn_co_free(co);
    /* Wave32 bit in kernel_code_properties (descriptor at 0x680 + 57, bit 10). */
    memcpy(c, b, len);
    c[0x680 + 57] |= 0x04;
    expect_refusal(c, len, GCN_LD_UNSUPPORTED, "WAVEFRONT_SIZE32");
    /* Metadata kernel name renamed: the descriptor symbol no longer matches. */
    memcpy(c, b, len);
    uint8_t *p = memmem(c + 0x200, 0x2a0, "_Z9vectoraddPKfS0_Pfi.kd", 24);
    assert_non_null(p);
    p[3] = 'X';
    expect_refusal(c, len, GCN_LD_BAD_ELF, "_Z9XectoraddPKfS0_Pfi.kd");
    /* Metadata note type changed: no metadata. */
    memcpy(c, b, len);
    c[0x208] = 33;
    expect_refusal(c, len, GCN_LD_BAD_METADATA, "NT_AMDGPU_METADATA");
    free(c);
    free(b);
}

static void test_co_every_prefix(void **state)
{
    size_t len;
    uint8_t *b = load("vectoradd.gfx803.co", &len);
    char err[256];
    for (size_t n = 0; n < len; n++) {
        /* An exact-size heap copy so ASan catches any read past the prefix. */
        uint8_t *c = malloc(n ? n : 1);
        memcpy(c, b, n);
        gcn_code_object *co = NULL;
        err[0] = 0;
        gcn_ld_status st = gcn_co_parse(c, n, &co, err, sizeof err);
        /* The section headers sit at the end (e_shoff 0xa40 + 13*64 = len). */
        if (st == GCN_LD_OK)
            fail_msg("prefix of %zu bytes accepted", n);
        assert_null(co);
        assert_true(err[0] != 0);
        free(c);
    }
    free(b);
}

/* Deterministic random corruption: any status is fine, a crash is not, and
 * an accepted object must satisfy the loader's invariants. */
static void test_co_mutations(void **state)
{
    size_t len;
    uint8_t *b = load("vectoradd.gfx803.co", &len);
    uint8_t *c = malloc(len);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    int accepted = 0;
    for (int it = 0; it < 20000; it++) {
        memcpy(c, b, len);
        int flips = 1 + it % 4;
        for (int f = 0; f < flips; f++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t pos = (size_t)(x % len);
            /* Keep the first 64 bytes' identity checks passing half the time so
             * the deeper parsers get exercised. */
            if (it & 1 && pos < 64)
                continue;
            c[pos] ^= (uint8_t)(1u << ((x >> 32) & 7));
        }
        gcn_code_object *co = NULL;
        char err[256];
        if (gcn_co_parse(c, len, &co, err, sizeof err) == GCN_LD_OK) {
            accepted++;
            for (uint32_t k = 0; k < co->n_kernels; k++) {
                const gcn_kernel *kk = &co->kernels[k];
                assert_true(kk->entry_vaddr >= co->text_vaddr &&
                            kk->entry_vaddr < co->text_vaddr + co->text_size);
                for (uint32_t a = 0; a < kk->n_args; a++)
                    assert_true(kk->args[a].offset + kk->args[a].size <= kk->kernarg_segment_size);
            }
            assert_true(co->image_size <= (1ull << 30));
            uint8_t *img = malloc(co->image_size ? co->image_size : 1);
            gcn_co_map_image(co, img);
            free(img);
            gcn_co_free(co);
        } else {
            assert_null(co);
        }
    }
    assert_true(accepted > 0); /* flips in padding and .comment are harmless */
    free(c);
    free(b);
}

static void test_status_names(void **state)
{
    for (int s = GCN_LD_OK; s <= GCN_LD_BAD_METADATA; s++) {
        const char *n = gcn_ld_status_name((gcn_ld_status)s);
        assert_non_null(n);
        assert_string_not_equal(n, "unknown loader status");
    }
    assert_string_equal(gcn_ld_status_name((gcn_ld_status)99), "unknown loader status");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bundle_find),     cmocka_unit_test(test_bundle_other_target),
        cmocka_unit_test(test_bundle_corrupt),  cmocka_unit_test(test_co_parse),
        cmocka_unit_test(test_co_refusals),     cmocka_unit_test(test_co_every_prefix),
        cmocka_unit_test(test_co_mutations),    cmocka_unit_test(test_status_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
