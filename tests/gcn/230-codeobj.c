/*
 * 230-codeobj.c - code object v2 (YAML metadata, amd_kernel_code_t) and the
 * target refusals of the loader, on objects built here byte by byte.
 *
 * The synthetic v2 object follows AMDGPUUsage "Code Object V2" (ELF ABI
 * version 0, note owner "AMD": NT_AMD_HSA_ISA_VERSION = 3 with u16 vendor /
 * arch name sizes, u32 major, minor, stepping; NT_AMD_HSA_METADATA = 10 with
 * the YAML text) and LLVM's AMDKernelCodeT.h (256-byte amd_kernel_code_t,
 * version 1.1, entry at +256). Its e_flags are 0 as in pre-LLVM-7 objects, so
 * the GPU comes from the ISA note. Real v2 objects from clang are run by
 * tests/e2e/programs-module.sh.
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

/* ---- the YAML metadata parser --------------------------------------------- */

static const char yaml_ok[] =
    "---\n"
    "Version:         [ 1, 0 ]\n"
    "Kernels:\n"
    "  - Name:            vadd\n"
    "    SymbolName:      'vadd@kd'\n"
    "    Language:        OpenCL C\n"
    "    Args:\n"
    "      - Name:            a\n"
    "        Size:            8\n"
    "        Align:           8\n"
    "        ValueKind:       GlobalBuffer\n"
    "        AddrSpaceQual:   Global\n"
    "      - Size:            1\n"
    "        Align:           1\n"
    "        ValueKind:       ByValue\n"
    "      - Size:            8\n"
    "        Align:           8\n"
    "        ValueKind:       ByValue\n"
    "      - Size:            4\n"
    "        Align:           4\n"
    "        ValueKind:       ByValue\n"
    "      - Size:            8\n"
    "        Align:           8\n"
    "        ValueKind:       HiddenGlobalOffsetX\n"
    "      - Size:            8\n"
    "        Align:           8\n"
    "        ValueKind:       HiddenMultiGridSyncArg\n"
    "    CodeProps:\n"
    "      KernargSegmentSize: 48\n"
    "      GroupSegmentFixedSize: 128\n"
    "      PrivateSegmentFixedSize: 16\n"
    "      KernargSegmentAlign: 8\n"
    "      WavefrontSize:   64\n"
    "      NumSGPRs:        18\n"
    "      NumVGPRs:        7\n"
    "      MaxFlatWorkGroupSize: 512\n"
    "  - Name:            noargs\n"
    "    CodeProps:\n"
    "      KernargSegmentSize: 0\n"
    "...\n";

static void test_yaml_parse(void **state)
{
    (void)state;
    gcn_code_object co;
    memset(&co, 0, sizeof co);
    char err[256] = "";
    assert_int_equal(gcn_md_parse_yaml(&co, yaml_ok, sizeof yaml_ok, err, sizeof err), GCN_LD_OK);
    assert_int_equal(co.n_kernels, 2);
    const gcn_kernel *k = &co.kernels[0];
    assert_string_equal(k->name, "vadd");
    assert_string_equal(k->symbol, "vadd"); /* v2: the kernel symbol is the name */
    assert_int_equal(k->kernarg_segment_size, 48);
    assert_int_equal(k->group_segment_fixed_size, 128);
    assert_int_equal(k->private_segment_fixed_size, 16);
    assert_int_equal(k->sgpr_count, 18);
    assert_int_equal(k->vgpr_count, 7);
    assert_int_equal(k->max_flat_workgroup_size, 512);
    assert_int_equal(k->wavefront_size, 64);
    assert_int_equal(k->n_args, 6);
    /* offsets: each arg at the previous end rounded up to its Align */
    static const uint32_t off[] = {0, 8, 16, 24, 32, 40}, size[] = {8, 1, 8, 4, 8, 8};
    static const char *const kind[] = {"global_buffer", "by_value", "by_value", "by_value",
                                       "hidden_global_offset_x", "hidden_multigrid_sync_arg"};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(k->args[i].offset, off[i]);
        assert_int_equal(k->args[i].size, size[i]);
        assert_string_equal(k->args[i].value_kind, kind[i]);
    }
    assert_string_equal(k->args[0].name, "a");
    assert_string_equal(k->args[1].name, "");
    assert_ptr_equal(k->co, &co);
    /* defaults of a kernel with a minimal CodeProps */
    const gcn_kernel *k2 = &co.kernels[1];
    assert_string_equal(k2->name, "noargs");
    assert_int_equal(k2->n_args, 0);
    assert_int_equal(k2->max_flat_workgroup_size, 256);
    assert_int_equal(k2->wavefront_size, 64);
    for (uint32_t i = 0; i < co.n_kernels; i++)
        free(co.kernels[i].args);
    free(co.kernels);
}

/* Replace the first `from` in yaml_ok by `to` and expect status/needle. */
static void yaml_expect(const char *from, const char *to, gcn_ld_status want, const char *needle)
{
    char buf[4096];
    const char *p = strstr(yaml_ok, from);
    assert_non_null(p);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(p - yaml_ok), yaml_ok, to, p + strlen(from));
    gcn_code_object co;
    memset(&co, 0, sizeof co);
    char err[256] = "";
    gcn_ld_status st = gcn_md_parse_yaml(&co, buf, strlen(buf), err, sizeof err);
    for (uint32_t i = 0; i < co.n_kernels; i++)
        free(co.kernels[i].args);
    free(co.kernels);
    assert_int_equal(st, want);
    if (!strstr(err, needle))
        fail_msg("message \"%s\" does not mention \"%s\"", err, needle);
}

static void test_yaml_errors(void **state)
{
    (void)state;
    yaml_expect("KernargSegmentSize: 48", "KernargSegmentSize: 20", GCN_LD_BAD_METADATA,
                "extends past KernargSegmentSize 20");
    yaml_expect("KernargSegmentSize: 48", "KernargSize: 48", GCN_LD_BAD_METADATA,
                "CodeProps.KernargSegmentSize missing");
    yaml_expect("WavefrontSize:   64", "WavefrontSize:   32", GCN_LD_UNSUPPORTED, "wave64");
    yaml_expect("Align:           4", "Align:           3", GCN_LD_BAD_METADATA, "power of two");
    yaml_expect("ValueKind:       ByValue", "ValueKind:       'By Value'", GCN_LD_BAD_METADATA,
                "By Value");
    yaml_expect("NumSGPRs:        18", "NumSGPRs:        -1", GCN_LD_BAD_METADATA, "NumSGPRs");
    yaml_expect("Version:         [ 1, 0 ]", "Version:         [ 2, 0 ]", GCN_LD_UNSUPPORTED,
                "Version");
    yaml_expect("  - Name:            vadd\n", "  - Nam: [\n", GCN_LD_BAD_METADATA, "not valid YAML");
    yaml_expect("Kernels:\n", "Kernels: 3\nOther:\n", GCN_LD_BAD_METADATA, "not a sequence");
    yaml_expect("MaxFlatWorkGroupSize: 512", "MaxFlatWorkGroupSize: 2048", GCN_LD_BAD_METADATA,
                "MaxFlatWorkGroupSize");
}

/* ---- a synthetic v2 ELF ----------------------------------------------------- */

enum { TEXT_OFF = 0x800, DATA_OFF = 0xa00, KD_SIZE = 256 };

static const char yaml_v2[] =
    "---\n"
    "Version: [ 1, 0 ]\n"
    "Kernels:\n"
    "  - Name: k1\n"
    "    SymbolName: 'k1@kd'\n"
    "    Args:\n"
    "      - { Size: 8, Align: 8, ValueKind: GlobalBuffer }\n"
    "      - { Size: 4, Align: 4, ValueKind: ByValue }\n"
    "    CodeProps: { KernargSegmentSize: 16, KernargSegmentAlign: 8, WavefrontSize: 64,\n"
    "                 MaxFlatWorkGroupSize: 256 }\n"
    "...\n";

static void w16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void w32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void w64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static size_t note(uint8_t *p, uint32_t type, const void *desc, uint32_t descsz)
{
    w32(p, 4), w32(p + 4, descsz), w32(p + 8, type);
    memcpy(p + 12, "AMD", 4);
    memcpy(p + 16, desc, descsz);
    return 16 + ((descsz + 3u) & ~3u);
}

static void shdr(uint8_t *p, uint32_t name, uint32_t type, uint64_t flags, uint64_t addr,
                 uint64_t off, uint64_t size, uint32_t link, uint64_t entsize)
{
    w32(p, name), w32(p + 4, type), w64(p + 8, flags), w64(p + 16, addr), w64(p + 24, off);
    w64(p + 32, size), w32(p + 40, link), w64(p + 48, 8), w64(p + 56, entsize);
}

/* Builds the object into a calloc'd buffer; `isa` = major, minor, stepping
 * of the ISA note; with_yaml = 0 leaves the metadata note out. */
static uint8_t *make_v2(size_t *len, uint32_t isa_major, uint32_t isa_minor, uint32_t isa_step,
                        int with_yaml)
{
    enum { SZ = 0x1000, NOTE_OFF = 0x100, SYM_OFF = 0xa80, STR_OFF = 0xb00, SHSTR_OFF = 0xb40,
           SH_OFF = 0xc00 };
    uint8_t *b = calloc(1, SZ);
    assert_non_null(b);
    /* ELF header */
    memcpy(b, "\177ELF", 4);
    b[4] = 2, b[5] = 1, b[6] = 1, b[7] = 64 /* ELFOSABI_AMDGPU_HSA */, b[8] = 0 /* v2 */;
    w16(b + 16, 3 /* ET_DYN */), w16(b + 18, 224 /* EM_AMDGPU */), w32(b + 20, 1);
    w64(b + 32, 64 /* phoff */), w64(b + 40, SH_OFF), w32(b + 48, 0 /* e_flags: none */);
    w16(b + 52, 64), w16(b + 54, 56), w16(b + 56, 1), w16(b + 58, 64), w16(b + 60, 8);
    w16(b + 62, 7 /* shstrndx */);
    /* one PT_LOAD: file offset = vaddr */
    uint8_t *ph = b + 64;
    w32(ph, 1), w32(ph + 4, 7), w64(ph + 8, 0), w64(ph + 16, 0), w64(ph + 24, 0);
    w64(ph + 32, SZ), w64(ph + 40, SZ), w64(ph + 48, 0x1000);
    /* notes */
    uint8_t isa[27];
    w16(isa, 4), w16(isa + 2, 7), w32(isa + 4, isa_major), w32(isa + 8, isa_minor);
    w32(isa + 12, isa_step);
    memcpy(isa + 16, "AMD", 4), memcpy(isa + 20, "AMDGPU", 7);
    size_t n = note(b + NOTE_OFF, 3, isa, sizeof isa);
    if (with_yaml)
        n += note(b + NOTE_OFF + n, 10, yaml_v2, sizeof yaml_v2);
    assert_true(NOTE_OFF + n <= TEXT_OFF);
    /* .text: amd_kernel_code_t then s_endpgm */
    uint8_t *kd = b + TEXT_OFF;
    w32(kd + 0, 1), w32(kd + 4, 1);             /* version 1.1 */
    w64(kd + 16, KD_SIZE);                      /* kernel_code_entry_byte_offset */
    w32(kd + 48, 0x00000041);                   /* rsrc1: 8 VGPRs, 16 SGPRs */
    w32(kd + 52, (8u << 1) | (1u << 7));        /* rsrc2: 8 user SGPRs, workgroup id x */
    w32(kd + 56, 0x0b);                         /* private segment buffer, dispatch, kernarg ptrs */
    w32(kd + 60, 16), w32(kd + 64, 1024);       /* private, group segment bytes */
    w64(kd + 72, 16);                           /* kernarg_segment_byte_size */
    kd[103] = 6;                                /* wavefront 2^6 */
    memset(kd + 104, 0xff, 24);                 /* bytes that do not decode as an s_nop */
    w32(b + TEXT_OFF + KD_SIZE, 0xbf810000);    /* s_endpgm */
    /* .data: g */
    for (int i = 0; i < 16; i++)
        b[DATA_OFF + i] = (uint8_t)(i + 1);
    /* .symtab: null, k1 (STT_AMDGPU_HSA_KERNEL = 10, global), g (STT_OBJECT, global) */
    uint8_t *s = b + SYM_OFF + 24;
    w32(s, 1), s[4] = (1 << 4) | 10, w16(s + 6, 2), w64(s + 8, TEXT_OFF), w64(s + 16, KD_SIZE + 4);
    s += 24;
    w32(s, 4), s[4] = (1 << 4) | 1, w16(s + 6, 3), w64(s + 8, DATA_OFF), w64(s + 16, 16);
    memcpy(b + STR_OFF, "\0k1\0g", 6);
    static const char shs[] = "\0.note\0.text\0.data\0.symtab\0.strtab\0.shstrtab";
    memcpy(b + SHSTR_OFF, shs, sizeof shs);
    /* sections: 0 null, 1 .note, 2 .text, 3 .data, 4 .symtab, 5 .strtab, 6 (unused), 7 .shstrtab */
    uint8_t *sh = b + SH_OFF;
    shdr(sh + 64 * 1, 1, 7 /* NOTE */, 2, NOTE_OFF, NOTE_OFF, n, 0, 0);
    w64(sh + 64 * 1 + 48, 4); /* 4-byte note alignment */
    shdr(sh + 64 * 2, 7, 1 /* PROGBITS */, 6, TEXT_OFF, TEXT_OFF, KD_SIZE + 4, 0, 0);
    shdr(sh + 64 * 3, 13, 1, 3, DATA_OFF, DATA_OFF, 16, 0, 0);
    shdr(sh + 64 * 4, 19, 2 /* SYMTAB */, 0, 0, SYM_OFF, 72, 5, 24);
    w32(sh + 64 * 4 + 44, 1); /* sh_info: first global */
    shdr(sh + 64 * 5, 27, 3 /* STRTAB */, 0, 0, STR_OFF, 6, 0, 0);
    shdr(sh + 64 * 7, 35, 3, 0, 0, SHSTR_OFF, sizeof shs, 0, 0);
    *len = SZ;
    return b;
}

static void expect_refusal(const uint8_t *b, size_t len, gcn_ld_status want, const char *needle)
{
    gcn_code_object *co = (gcn_code_object *)1;
    char err[256] = "";
    gcn_ld_status st = gcn_co_parse(b, len, &co, err, sizeof err);
    assert_int_equal(st, want);
    assert_null(co);
    if (!strstr(err, needle))
        fail_msg("message \"%s\" does not mention \"%s\"", err, needle);
}

static void test_v2_elf(void **state)
{
    (void)state;
    size_t len;
    uint8_t *b = make_v2(&len, 8, 0, 3, 1);
    size_t ext = 0;
    assert_int_equal(gcn_elf_extent(b, &ext, NULL, 0), GCN_LD_OK);
    assert_int_equal(ext, len);
    gcn_code_object *co = NULL;
    char err[256] = "";
    gcn_ld_status st = gcn_co_parse(b, len, &co, err, sizeof err);
    if (st != GCN_LD_OK)
        fail_msg("v2 object refused: %s", err);
    assert_int_equal(co->code_object_version, 2);
    assert_string_equal(co->target, "amdgcn-amd-amdhsa--gfx803"); /* from the ISA note */
    assert_int_equal(co->n_kernels, 1);
    const gcn_kernel *k = gcn_co_find_kernel(co, "k1");
    assert_non_null(k);
    assert_int_equal(k->kd_vaddr, TEXT_OFF);
    assert_int_equal(k->entry_vaddr, TEXT_OFF + KD_SIZE);
    assert_int_equal(k->kd.user_sgpr_count, 8);
    assert_int_equal(k->kd.enable_sgpr_dispatch_ptr, 1);
    assert_int_equal(k->kd.enable_sgpr_kernarg_segment_ptr, 1);
    assert_int_equal(k->kd.enable_sgpr_queue_ptr, 0);
    assert_int_equal(k->kd.vgpr_count, 8);
    assert_int_equal(k->kd.kernarg_size, 16);
    /* segment sizes absent from the metadata come from amd_kernel_code_t */
    assert_int_equal(k->group_segment_fixed_size, 1024);
    assert_int_equal(k->private_segment_fixed_size, 16);
    assert_int_equal(k->n_args, 2);
    assert_int_equal(k->args[1].offset, 8);
    /* the decoder's .text: the descriptor is s_nop, the code untouched; the
     * ELF copy (mapped to device memory, stored in traces) keeps the header */
    assert_ptr_not_equal(co->text, co->elf + TEXT_OFF);
    for (int o = 0; o < KD_SIZE; o += 4) {
        uint32_t w;
        memcpy(&w, co->text + o, 4);
        assert_int_equal(w, 0xbf800000);
    }
    uint32_t w;
    memcpy(&w, co->text + KD_SIZE, 4);
    assert_int_equal(w, 0xbf810000);
    assert_int_equal(co->elf[TEXT_OFF], 1);
    /* data symbols */
    const gcn_symbol *g = gcn_co_find_symbol(co, "g");
    assert_non_null(g);
    assert_int_equal(g->vaddr, DATA_OFF);
    assert_int_equal(g->size, 16);
    assert_null(gcn_co_find_symbol(co, "k1")); /* a kernel, not data */
    assert_null(gcn_co_find_symbol(co, "nope"));
    uint8_t *img = malloc(co->image_size);
    gcn_co_map_image(co, img);
    assert_memory_equal(img + TEXT_OFF, b + TEXT_OFF, KD_SIZE + 4);
    assert_int_equal(img[DATA_OFF + 15], 16);
    free(img);
    gcn_co_free(co);
    free(b);
}

static void test_v2_refusals(void **state)
{
    (void)state;
    size_t len;
    /* other GPUs named by the ISA note (e_flags 0) */
    uint8_t *b = make_v2(&len, 9, 0, 6, 1);
    expect_refusal(b, len, GCN_LD_UNSUPPORTED, "amdgcn-amd-amdhsa--gfx906");
    free(b);
    b = make_v2(&len, 7, 0, 1, 1);
    expect_refusal(b, len, GCN_LD_UNSUPPORTED, "gfx701");
    free(b);
    /* gfx801/802/810 accepted */
    b = make_v2(&len, 8, 1, 0, 1);
    gcn_code_object *co = NULL;
    assert_int_equal(gcn_co_parse(b, len, &co, NULL, 0), GCN_LD_OK);
    assert_string_equal(co->target, "amdgcn-amd-amdhsa--gfx810");
    gcn_co_free(co);
    free(b);
    /* e_flags win when set */
    b = make_v2(&len, 8, 0, 3, 1);
    b[48] = 0x2f;
    expect_refusal(b, len, GCN_LD_UNSUPPORTED, "gfx906");
    b[48] = 0x2a;
    assert_int_equal(gcn_co_parse(b, len, &co, NULL, 0), GCN_LD_OK);
    gcn_co_free(co);
    /* grid-workgroup-count user SGPRs cannot be provided */
    b[TEXT_OFF + 56] |= 0x80;
    expect_refusal(b, len, GCN_LD_UNSUPPORTED, "GRID_WORKGROUP_COUNT");
    b[TEXT_OFF + 56] &= 0x7f;
    b[TEXT_OFF + 103] = 5; /* wave32 */
    expect_refusal(b, len, GCN_LD_UNSUPPORTED, "wave64");
    b[TEXT_OFF + 103] = 6;
    b[TEXT_OFF] = 2; /* amd_kernel_code_t version 2.x */
    expect_refusal(b, len, GCN_LD_UNSUPPORTED, "version 2");
    b[TEXT_OFF] = 1;
    /* declared v3 (ABI version 1) but only v2 metadata */
    b[8] = 1;
    expect_refusal(b, len, GCN_LD_BAD_METADATA, "NT_AMDGPU_METADATA");
    b[8] = 4; /* code object v6: unknown */
    expect_refusal(b, len, GCN_LD_UNSUPPORTED, "ELF ABI version 4");
    free(b);
    /* v2 without its metadata note */
    b = make_v2(&len, 8, 0, 3, 0);
    expect_refusal(b, len, GCN_LD_BAD_METADATA, "NT_AMD_AMDGPU_HSA_METADATA");
    free(b);
    /* every truncation is refused, none crashes */
    b = make_v2(&len, 8, 0, 3, 1);
    for (size_t l = 0; l < len; l += 7) {
        co = (gcn_code_object *)1;
        gcn_ld_status st = gcn_co_parse(b, l, &co, NULL, 0);
        if (st == GCN_LD_OK)
            gcn_co_free(co);
        else
            assert_null(co);
    }
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yaml_parse),
        cmocka_unit_test(test_yaml_errors),
        cmocka_unit_test(test_v2_elf),
        cmocka_unit_test(test_v2_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
