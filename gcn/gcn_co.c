/*
 * gcn_co.c - AMDGPU ELF code objects: header checks, PT_LOAD segments, .text,
 * symbols, kernel descriptors and the metadata note: NT_AMDGPU_METADATA
 * msgpack (v3-v5) or NT_AMD_AMDGPU_HSA_METADATA YAML (v2, gcn_md_yaml.c).
 *
 * Sources: LLVM AMDGPUUsage sections "ELF Header" (EM_AMDGPU = 224,
 * ELFOSABI_AMDGPU_HSA = 64, EI_ABIVERSION 0..3 = code object v2..v5,
 * EF_AMDGPU_MACH = e_flags & 0xff), "Note Records" (NT_AMDGPU_METADATA = 32,
 * name "AMDGPU"), "Code Object V3 Metadata" / "V4" (the msgpack map keys) and
 * "Kernel Descriptor"; "Code Object V2 Note Records" (owner "AMD":
 * NT_AMD_HSA_ISA_VERSION = 3, NT_AMD_HSA_METADATA = 10); FACTS.md for what
 * hipcc 5.2 emits. v2 kernels are labelled by an STT_AMDGPU_HSA_KERNEL
 * symbol on a 256-byte amd_kernel_code_t placed in .text before the code.
 *
 * Invariants: the input is untrusted. The header is checked on the raw bytes
 * before libelf sees it (for precise messages); every offset taken from the
 * file is checked against the private copy's size before use; metadata
 * values are type-checked. A parsed gcn_code_object is immutable and owns
 * all its memory (the ELF copy, segments, kernels, args).
 */
#include "gcn_loader.h"
#include "loader_internal.h"

#include <gelf.h>
#include <libelf.h>
#include <msgpack.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EM_AMDGPU_ 224
#define ELFOSABI_AMDGPU_HSA_ 64
#define NT_AMDGPU_METADATA_ 32
#define NT_AMD_HSA_ISA_VERSION_ 3
#define NT_AMD_HSA_METADATA_ 10
#define V2_KD_SIZE 256 /* sizeof(amd_kernel_code_t) */
#define EF_AMDGPU_MACH_MASK 0xffu
/* Largest image we agree to map: real code objects are KiBs to a few MiBs. */
#define MAX_IMAGE_SIZE ((uint64_t)1 << 30)


/* EF_AMDGPU_MACH values, AMDGPUUsage table "AMDGPU EF_AMDGPU_MACH Values"
 * (same as llvm/BinaryFormat/ELF.h of LLVM 14). */
static const char *mach_name(unsigned mach)
{
    static const char *const names[] = {
        [0x20] = "gfx600",  [0x21] = "gfx601",  [0x22] = "gfx700",  [0x23] = "gfx701",
        [0x24] = "gfx702",  [0x25] = "gfx703",  [0x26] = "gfx704",  [0x28] = "gfx801",
        [0x29] = "gfx802",  [0x2a] = "gfx803",  [0x2b] = "gfx810",  [0x2c] = "gfx900",
        [0x2d] = "gfx902",  [0x2e] = "gfx904",  [0x2f] = "gfx906",  [0x30] = "gfx908",
        [0x31] = "gfx909",  [0x32] = "gfx90c",  [0x33] = "gfx1010", [0x34] = "gfx1011",
        [0x35] = "gfx1012", [0x36] = "gfx1030", [0x37] = "gfx1031", [0x38] = "gfx1032",
        [0x39] = "gfx1033", [0x3a] = "gfx602",  [0x3b] = "gfx705",  [0x3c] = "gfx805",
        [0x3d] = "gfx1035", [0x3e] = "gfx1034", [0x3f] = "gfx90a",  [0x42] = "gfx1013",
    };
    if (mach < sizeof names / sizeof names[0] && names[mach])
        return names[mach];
    return NULL;
}

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static int elf_ok;
static void elf_init(void)
{
    elf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- msgpack helpers ------------------------------------------------------ */

static const msgpack_object *mp_get(const msgpack_object *map, const char *key)
{
    if (!map || map->type != MSGPACK_OBJECT_MAP)
        return NULL;
    size_t kl = strlen(key);
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *k = &map->via.map.ptr[i].key;
        if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == kl &&
            memcmp(k->via.str.ptr, key, kl) == 0)
            return &map->via.map.ptr[i].val;
    }
    return NULL;
}

/* 0 ok, -1 missing, -2 wrong type or out of range. */
static int mp_u32(const msgpack_object *map, const char *key, uint32_t *out)
{
    const msgpack_object *v = mp_get(map, key);
    if (!v)
        return -1;
    if (v->type != MSGPACK_OBJECT_POSITIVE_INTEGER || v->via.u64 > UINT32_MAX)
        return -2;
    *out = (uint32_t)v->via.u64;
    return 0;
}

/* Copies into out[cap]; 0 ok, -1 missing, -2 wrong type, -3 too long. */
static int mp_str(const msgpack_object *map, const char *key, char *out, size_t cap)
{
    const msgpack_object *v = mp_get(map, key);
    if (!v)
        return -1;
    if (v->type != MSGPACK_OBJECT_STR)
        return -2;
    if (v->via.str.size >= cap)
        return -3;
    memcpy(out, v->via.str.ptr, v->via.str.size);
    out[v->via.str.size] = 0;
    if (strlen(out) != v->via.str.size)
        return -2; /* embedded NUL */
    return 0;
}

static const char *mp_why(int rc)
{
    return rc == -1 ? "missing" : rc == -2 ? "has the wrong type or range" : "is too long";
}

static gcn_ld_status parse_args(const msgpack_object *args, gcn_kernel *k, unsigned ki, char *err,
                                size_t errlen)
{
    if (!args)
        return GCN_LD_OK; /* .args is optional: a kernel without arguments */
    if (args->type != MSGPACK_OBJECT_ARRAY)
        return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                    "code object metadata: kernel %u (%s): .args is not an array", ki, k->name);
    uint32_t n = args->via.array.size;
    if (!n)
        return GCN_LD_OK;
    k->args = calloc(n, sizeof *k->args);
    if (!k->args)
        return gcn_ld_fail(GCN_LD_ENOMEM, err, errlen, "code object metadata: out of memory");
    k->n_args = n;
    for (uint32_t i = 0; i < n; i++) {
        const msgpack_object *a = &args->via.array.ptr[i];
        gcn_kernel_arg *ar = &k->args[i];
        int rc;
        if (a->type != MSGPACK_OBJECT_MAP)
            return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                        "code object metadata: kernel %s arg %u is not a map", k->name, i);
        if ((rc = mp_u32(a, ".offset", &ar->offset)) || (rc = mp_u32(a, ".size", &ar->size)))
            return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                        "code object metadata: kernel %s arg %u: .offset/.size %s", k->name, i,
                        mp_why(rc));
        if ((rc = mp_str(a, ".value_kind", ar->value_kind, sizeof ar->value_kind)))
            return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                        "code object metadata: kernel %s arg %u: .value_kind %s", k->name, i,
                        mp_why(rc));
        /* .name is informational only (absent at -O2); a long one is cut. */
        const msgpack_object *nm = mp_get(a, ".name");
        if (nm && nm->type == MSGPACK_OBJECT_STR) {
            size_t l = nm->via.str.size < sizeof ar->name - 1 ? nm->via.str.size : sizeof ar->name - 1;
            memcpy(ar->name, nm->via.str.ptr, l);
            ar->name[l] = 0;
        }
        if ((uint64_t)ar->offset + ar->size > k->kernarg_segment_size)
            return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                        "code object metadata: kernel %s arg %u [%u, +%u) extends past "
                        ".kernarg_segment_size %u",
                        k->name, i, ar->offset, ar->size, k->kernarg_segment_size);
    }
    return GCN_LD_OK;
}

static uint64_t be_n(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* Walk one msgpack object at p[0..n) without allocating (msgpack spec,
 * github.com/msgpack/msgpack/blob/master/spec.md): the bytes it takes, or 0
 * when it is malformed, nests deeper than 64, or declares more elements or
 * bytes than remain. msgpack-c allocates what a header declares before it
 * reads the elements, so a damaged or hostile note could ask for gigabytes:
 * checked first (found by fuzz/replay_fuzz.c). */
static size_t mp_size(const uint8_t *p, size_t n, int depth)
{
    if (!n || depth > 64)
        return 0;
    uint8_t b = p[0];
    size_t hdr = 1;
    uint64_t elems = 0, payload = 0;
    if (b <= 0x7f || b >= 0xe0)
        return 1; /* positive / negative fixint */
    if ((b & 0xf0) == 0x80)
        elems = 2ull * (b & 0x0f); /* fixmap */
    else if ((b & 0xf0) == 0x90)
        elems = b & 0x0f; /* fixarray */
    else if ((b & 0xe0) == 0xa0)
        payload = b & 0x1f; /* fixstr */
    else {
        static const uint8_t fixed[32] = {
            /* 0xc0 nil, c1 never, c2 false, c3 true: sizes; 0 = variable or invalid */
            1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 5, 9, 2, 3, 5, 9,   /* c0..cf: float32/64, uint8..64 */
            2, 3, 5, 9, 3, 4, 6, 10, 18, 0, 0, 0, 0, 0, 0, 0, /* d0..df: int8..64, fixext1..16 */
        };
        if (fixed[b - 0xc0])
            return fixed[b - 0xc0] <= n ? fixed[b - 0xc0] : 0;
        unsigned lw;
        switch (b) {
        case 0xc4: case 0xd9: lw = 1; break;          /* bin8, str8 */
        case 0xc5: case 0xda: lw = 2; break;          /* bin16, str16 */
        case 0xc6: case 0xdb: lw = 4; break;          /* bin32, str32 */
        case 0xc7: case 0xc8: case 0xc9:              /* ext8/16/32: length, type, data */
            lw = b == 0xc7 ? 1 : b == 0xc8 ? 2 : 4;
            if (n < 2 + lw)
                return 0;
            payload = be_n(p + 1, lw) + 1;
            hdr = 1 + lw;
            return payload <= n - hdr ? hdr + payload : 0;
        case 0xdc: case 0xdd:                         /* array16/32 */
            lw = b == 0xdc ? 2 : 4;
            if (n < 1 + lw)
                return 0;
            elems = be_n(p + 1, lw);
            hdr = 1 + lw;
            goto container;
        case 0xde: case 0xdf:                         /* map16/32 */
            lw = b == 0xde ? 2 : 4;
            if (n < 1 + lw)
                return 0;
            elems = 2 * be_n(p + 1, lw);
            hdr = 1 + lw;
            goto container;
        default:
            return 0;
        }
        if (n < 1 + lw)
            return 0;
        payload = be_n(p + 1, lw);
        hdr = 1 + lw;
    }
    if (!elems)
        return payload <= n - hdr ? hdr + payload : 0;
container:
    if (elems > n - hdr) /* every element takes at least one byte */
        return 0;
    size_t off = hdr;
    for (uint64_t i = 0; i < elems; i++) {
        size_t k = mp_size(p + off, n - off, depth + 1);
        if (!k)
            return 0;
        off += k;
    }
    return off;
}

static gcn_ld_status parse_metadata(gcn_code_object *co, const uint8_t *desc, size_t len, char *err,
                                    size_t errlen)
{
    if (!mp_size(desc, len, 0))
        return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                           "code object metadata: NT_AMDGPU_METADATA note is not valid msgpack (a header declares "
                           "more than the %zu-byte note holds, or it nests too deep)", len);
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0;
    gcn_ld_status st = GCN_LD_OK;
    msgpack_unpack_return r = msgpack_unpack_next(&u, (const char *)desc, len, &off);
    if (r != MSGPACK_UNPACK_SUCCESS) {
        st = gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                  "code object metadata: NT_AMDGPU_METADATA note is not valid msgpack (%s)",
                  r == MSGPACK_UNPACK_CONTINUE ? "truncated" : r == MSGPACK_UNPACK_NOMEM_ERROR
                                                                   ? "out of memory"
                                                                   : "parse error");
        goto out;
    }
    const msgpack_object *root = &u.data;
    if (root->type != MSGPACK_OBJECT_MAP) {
        st = gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen, "code object metadata: root is not a map");
        goto out;
    }
    char target[sizeof co->target];
    int rc = mp_str(root, "amdhsa.target", target, sizeof target);
    if (rc == 0)
        memcpy(co->target, target, sizeof target);
    else if (rc != -1) {
        st = gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen, "code object metadata: amdhsa.target %s",
                  mp_why(rc));
        goto out;
    }
    const msgpack_object *ks = mp_get(root, "amdhsa.kernels");
    if (!ks || ks->type != MSGPACK_OBJECT_ARRAY) {
        st = gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                  "code object metadata: amdhsa.kernels missing or not an array");
        goto out;
    }
    uint32_t n = ks->via.array.size;
    if (n) {
        co->kernels = calloc(n, sizeof *co->kernels);
        if (!co->kernels) {
            st = gcn_ld_fail(GCN_LD_ENOMEM, err, errlen, "code object metadata: out of memory");
            goto out;
        }
    }
    co->n_kernels = n;
    for (uint32_t i = 0; i < n; i++) {
        const msgpack_object *km = &ks->via.array.ptr[i];
        gcn_kernel *k = &co->kernels[i];
        k->co = co;
        if (km->type != MSGPACK_OBJECT_MAP) {
            st = gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                      "code object metadata: amdhsa.kernels[%u] is not a map", i);
            goto out;
        }
        if ((rc = mp_str(km, ".name", k->name, sizeof k->name))) {
            st = gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                      "code object metadata: amdhsa.kernels[%u] .name %s%s", i, mp_why(rc),
                      rc == -3 ? " (more than 255 bytes; the loader's limit)" : "");
            goto out;
        }
        if ((rc = mp_str(km, ".symbol", k->symbol, sizeof k->symbol))) {
            st = gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                      "code object metadata: kernel %s: .symbol %s", k->name, mp_why(rc));
            goto out;
        }
        static const struct {
            const char *key;
            size_t off;
        } req[] = {
            {".kernarg_segment_size", offsetof(gcn_kernel, kernarg_segment_size)},
            {".kernarg_segment_align", offsetof(gcn_kernel, kernarg_segment_align)},
            {".group_segment_fixed_size", offsetof(gcn_kernel, group_segment_fixed_size)},
            {".private_segment_fixed_size", offsetof(gcn_kernel, private_segment_fixed_size)},
            {".wavefront_size", offsetof(gcn_kernel, wavefront_size)},
            {".sgpr_count", offsetof(gcn_kernel, sgpr_count)},
            {".vgpr_count", offsetof(gcn_kernel, vgpr_count)},
            {".max_flat_workgroup_size", offsetof(gcn_kernel, max_flat_workgroup_size)},
        };
        for (size_t j = 0; j < sizeof req / sizeof req[0]; j++) {
            uint32_t v = 0;
            if ((rc = mp_u32(km, req[j].key, &v))) {
                st = gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                          "code object metadata: kernel %s: %s %s", k->name, req[j].key,
                          mp_why(rc));
                goto out;
            }
            memcpy((char *)k + req[j].off, &v, sizeof v);
        }
        if (k->wavefront_size != 64) {
            st = gcn_ld_fail(GCN_LD_UNSUPPORTED, err, errlen,
                      "code object metadata: kernel %s: .wavefront_size %u, GCN3 runs wave64 only",
                      k->name, k->wavefront_size);
            goto out;
        }
        if ((st = parse_args(mp_get(km, ".args"), k, i, err, errlen)) != GCN_LD_OK)
            goto out;
    }
out:
    msgpack_unpacked_destroy(&u);
    return st;
}

/* ---- ELF --------------------------------------------------------------------- */

/* File offset of [vaddr, vaddr+n) if a PT_LOAD segment holds it in file bytes. */
static int vaddr_to_off(const gcn_code_object *co, uint64_t vaddr, uint64_t n, uint64_t *off)
{
    for (uint32_t i = 0; i < co->n_segs; i++) {
        const gcn_segment *s = &co->segs[i];
        if (vaddr >= s->vaddr && vaddr - s->vaddr <= s->filesz && n <= s->filesz - (vaddr - s->vaddr)) {
            *off = s->offset + (vaddr - s->vaddr);
            return 1;
        }
    }
    return 0;
}

static gcn_ld_status check_mach(unsigned mach, char *err, size_t errlen)
{
    if (mach == 0x28 || mach == 0x29 || mach == 0x2a || mach == 0x2b)
        return GCN_LD_OK;
    const char *nm = mach_name(mach);
    if (nm)
        return gcn_ld_fail(GCN_LD_UNSUPPORTED, err, errlen,
                    "code object target is amdgcn-amd-amdhsa--%s, only gfx803 "
                    "(and gfx801/802/810) is supported; rebuild with --offload-arch=gfx803",
                    nm);
    return gcn_ld_fail(GCN_LD_UNSUPPORTED, err, errlen,
                "code object target is unknown (EF_AMDGPU_MACH 0x%02x), only gfx803 is "
                "supported; rebuild with --offload-arch=gfx803",
                mach);
}

/* v2 ISA note (major, minor, stepping) -> EF_AMDGPU_MACH, or refusal. */
static gcn_ld_status mach_from_isa_note(const uint8_t *desc, size_t n, unsigned *mach, char *err,
                                        size_t errlen)
{
    /* u16 vendor_name_size, u16 architecture_name_size, u32 major, minor,
     * stepping, then the names (AMDGPUUsage "Code Object V2 Note Records"). */
    if (!desc || n < 16)
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                    "code object v2: e_flags names no GPU and there is no "
                    "NT_AMD_HSA_ISA_VERSION note (owner \"AMD\", type 3) to name it");
    uint32_t maj = rd32(desc + 4), min = rd32(desc + 8), step = rd32(desc + 12);
    static const struct {
        uint32_t maj, min, step;
        unsigned mach;
    } ok[] = {{8, 0, 1, 0x28}, {8, 0, 2, 0x29}, {8, 0, 3, 0x2a}, {8, 1, 0, 0x2b}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (maj == ok[i].maj && min == ok[i].min && step == ok[i].step) {
            *mach = ok[i].mach;
            return GCN_LD_OK;
        }
    return gcn_ld_fail(GCN_LD_UNSUPPORTED, err, errlen,
                "code object target is amdgcn-amd-amdhsa--gfx%u%u%u (NT_AMD_HSA_ISA_VERSION), "
                "only gfx803 (and gfx801/802/810) is supported; rebuild with "
                "--offload-arch=gfx803",
                maj, min, step);
}

static gcn_ld_status check_header(const uint8_t *b, size_t len, int *version, unsigned *mach,
                                  char *err, size_t errlen)
{
    if (!b || len < 64)
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen, "code object: %zu bytes, too short for an ELF header",
                    b ? len : 0);
    if (memcmp(b, "\177ELF", 4) != 0)
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen, "code object: no ELF magic at offset 0");
    if (b[EI_CLASS] != ELFCLASS64 || b[EI_DATA] != ELFDATA2LSB)
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                    "code object: not a little-endian ELF64 file (class %u, data %u)",
                    b[EI_CLASS], b[EI_DATA]);
    uint16_t machine = rd16(b + 18);
    if (machine != EM_AMDGPU_)
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                    "code object: e_machine is %u, not EM_AMDGPU (224)", machine);
    if (b[EI_OSABI] != ELFOSABI_AMDGPU_HSA_)
        return gcn_ld_fail(GCN_LD_UNSUPPORTED, err, errlen,
                    "code object: OS ABI %u is not ELFOSABI_AMDGPU_HSA (64); only HSA code "
                    "objects are supported",
                    b[EI_OSABI]);
    unsigned abiv = b[EI_ABIVERSION];
    if (abiv > 3)
        return gcn_ld_fail(GCN_LD_UNSUPPORTED, err, errlen,
                    "code object: unknown ELF ABI version %u (code object v%u); only v2 to v5 "
                    "are supported",
                    abiv, abiv + 2);
    *version = (int)abiv + 2;
    uint32_t flags = rd32(b + 48);
    *mach = flags & EF_AMDGPU_MACH_MASK;
    /* v2 producers before LLVM 7 leave e_flags 0 and name the GPU only in
     * the NT_AMD_HSA_ISA_VERSION note: checked once the notes are read. */
    if (*mach == 0 && *version == 2)
        return GCN_LD_OK;
    return check_mach(*mach, err, errlen);
}

/* Defined STT_OBJECT symbols of `symscn` (NULL: none) into co->syms. */
static gcn_ld_status collect_symbols(gcn_code_object *co, Elf *e, Elf_Scn *symscn, char *err,
                                     size_t errlen)
{
    GElf_Shdr sh;
    Elf_Data *d;
    if (!symscn || !gelf_getshdr(symscn, &sh) || !(d = elf_getdata(symscn, NULL)) || !sh.sh_entsize)
        return GCN_LD_OK;
    size_t nsym = d->d_size / sh.sh_entsize, n = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t j = 0; j < nsym; j++) {
            GElf_Sym sym;
            if (!gelf_getsym(d, (int)j, &sym))
                break;
            if (GELF_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_shndx == SHN_UNDEF ||
                sym.st_shndx >= SHN_LORESERVE)
                continue;
            const char *sn = elf_strptr(e, sh.sh_link, sym.st_name);
            if (!sn || !*sn)
                continue;
            if (pass == 0) {
                n++;
                continue;
            }
            if (sym.st_value > co->image_size || sym.st_size > co->image_size - sym.st_value)
                return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                            "code object: symbol %s [0x%llx, +0x%llx) lies outside the image",
                            sn, (unsigned long long)sym.st_value,
                            (unsigned long long)sym.st_size);
            gcn_symbol *s = &co->syms[co->n_syms];
            if (!(s->name = strdup(sn)))
                return gcn_ld_fail(GCN_LD_ENOMEM, err, errlen, "code object: out of memory");
            s->vaddr = sym.st_value;
            s->size = sym.st_size;
            co->n_syms++;
        }
        if (pass == 0) {
            if (!n)
                return GCN_LD_OK;
            if (!(co->syms = calloc(n, sizeof *co->syms)))
                return gcn_ld_fail(GCN_LD_ENOMEM, err, errlen, "code object: out of memory");
        }
    }
    return GCN_LD_OK;
}

/* Each kernel's descriptor (its symbol in symscn; v2: the 256-byte
 * amd_kernel_code_t at the kernel's own symbol), parsed into k->kd, and its
 * entry, which must lie in .text. GCN_LD_OK, or a status with the message
 * in err. */
static gcn_ld_status read_kernel_descriptors(Elf *e, Elf_Scn *symscn, int version, gcn_code_object *co, char *err,
                                             size_t errlen)
{
    gcn_ld_status st = GCN_LD_OK;
    const uint64_t kd_size = version == 2 ? V2_KD_SIZE : 64;
    for (uint32_t i = 0; i < co->n_kernels; i++) {
        gcn_kernel *k = &co->kernels[i];
        int found = 0;
        if (symscn) {
            GElf_Shdr sh;
            Elf_Data *d = elf_getdata(symscn, NULL);
            if (gelf_getshdr(symscn, &sh) && d && sh.sh_entsize) {
                size_t nsym = d->d_size / sh.sh_entsize;
                for (size_t j = 0; j < nsym && !found; j++) {
                    GElf_Sym sym;
                    if (!gelf_getsym(d, (int)j, &sym))
                        break;
                    const char *sn = elf_strptr(e, sh.sh_link, sym.st_name);
                    if (sn && strcmp(sn, k->symbol) == 0 && sym.st_shndx != SHN_UNDEF) {
                        k->kd_vaddr = sym.st_value;
                        found = 1;
                    }
                }
            }
        }
        if (!found) {
            st = gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                      "code object: kernel descriptor symbol %s not found", k->symbol);
            return st;
        }
        uint64_t kd_off;
        if (!vaddr_to_off(co, k->kd_vaddr, kd_size, &kd_off)) {
            st = gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                      "code object: kernel descriptor %s at vaddr 0x%llx is not inside a loaded "
                      "segment",
                      k->symbol, (unsigned long long)k->kd_vaddr);
            return st;
        }
        char kerr[200] = "";
        st = version == 2 ? gcn_kd_parse_v2(co->elf + kd_off, &k->kd, kerr, sizeof kerr)
                          : gcn_kd_parse(co->elf + kd_off, &k->kd, kerr, sizeof kerr);
        if (st != GCN_LD_OK) {
            gcn_ld_fail(st, err, errlen, "code object: kernel %s: %s", k->name, kerr);
            return st;
        }
        if (version == 2) {
            /* Older v2 metadata omits the segment sizes: the descriptor has them. */
            if (!k->group_segment_fixed_size)
                k->group_segment_fixed_size = k->kd.group_segment_fixed_size;
            if (!k->private_segment_fixed_size)
                k->private_segment_fixed_size = k->kd.private_segment_fixed_size;
        }
        k->entry_vaddr = k->kd_vaddr + (uint64_t)k->kd.kernel_code_entry_byte_offset;
        if (k->entry_vaddr < co->text_vaddr || k->entry_vaddr - co->text_vaddr >= co->text_size) {
            st = gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                      "code object: kernel %s entry 0x%llx lies outside .text [0x%llx, +0x%llx)",
                      k->name, (unsigned long long)k->entry_vaddr,
                      (unsigned long long)co->text_vaddr, (unsigned long long)co->text_size);
            return st;
        }
    }
    return GCN_LD_OK;
}

/* The PT_LOAD segments of e (len bytes) into co->segs and co->image_size.
 * GCN_LD_OK, or a status with the message in err. */
static gcn_ld_status read_segments(Elf *e, size_t len, gcn_code_object *co, char *err, size_t errlen)
{
    gcn_ld_status st = GCN_LD_OK;
    size_t nph = 0;
    if (elf_getphdrnum(e, &nph) != 0) {
        st = gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen, "code object: bad program headers: %s",
                  elf_errmsg(-1));
        return st;
    }
    co->segs = calloc(nph ? nph : 1, sizeof *co->segs);
    if (!co->segs) {
        st = gcn_ld_fail(GCN_LD_ENOMEM, err, errlen, "code object: out of memory");
        return st;
    }
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(e, (int)i, &ph)) {
            st = gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen, "code object: program header %zu unreadable: %s",
                      i, elf_errmsg(-1));
            return st;
        }
        if (ph.p_type != PT_LOAD)
            continue;
        if (ph.p_offset > len || ph.p_filesz > len - ph.p_offset || ph.p_filesz > ph.p_memsz ||
            ph.p_vaddr > MAX_IMAGE_SIZE || ph.p_memsz > MAX_IMAGE_SIZE - ph.p_vaddr) {
            st = gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                      "code object: PT_LOAD %zu (offset 0x%llx filesz 0x%llx vaddr 0x%llx memsz "
                      "0x%llx) lies outside the file or the 1 GiB image limit",
                      i, (unsigned long long)ph.p_offset, (unsigned long long)ph.p_filesz,
                      (unsigned long long)ph.p_vaddr, (unsigned long long)ph.p_memsz);
            return st;
        }
        gcn_segment *s = &co->segs[co->n_segs++];
        s->vaddr = ph.p_vaddr;
        s->memsz = ph.p_memsz;
        s->offset = ph.p_offset;
        s->filesz = ph.p_filesz;
        s->flags = ph.p_flags;
        if (s->vaddr + s->memsz > co->image_size)
            co->image_size = s->vaddr + s->memsz;
    }
    if (!co->n_segs) {
        st = gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen, "code object: no PT_LOAD segment");
        return st;
    }
    return GCN_LD_OK;
}

/* v2: .text with every in-text amd_kernel_code_t (up to its entry) as s_nop 0
 * (0xbf800000, GCN3 ISA manual SOPP), so the linear-sweep decoder reaches each
 * entry at an instruction boundary. */
static gcn_ld_status v2_text_copy(gcn_code_object *co, char *err, size_t errlen)
{
    co->text_buf = malloc(co->text_size ? co->text_size : 1);
    if (!co->text_buf)
        return gcn_ld_fail(GCN_LD_ENOMEM, err, errlen, "code object: out of memory");
    memcpy(co->text_buf, co->text, co->text_size);
    for (uint32_t i = 0; i < co->n_kernels; i++) {
        const gcn_kernel *k = &co->kernels[i];
        if (k->kd_vaddr < co->text_vaddr || k->kd_vaddr >= co->text_vaddr + co->text_size)
            continue;
        uint64_t from = k->kd_vaddr - co->text_vaddr, to = k->entry_vaddr - co->text_vaddr;
        if (to < from || to > co->text_size)
            continue;
        for (uint64_t o = from & ~(uint64_t)3; o + 4 <= to; o += 4) {
            static const uint8_t nop[4] = {0x00, 0x00, 0x80, 0xbf};
            memcpy(co->text_buf + o, nop, 4);
        }
    }
    co->text = co->text_buf;
    return GCN_LD_OK;
}

/* What gcn_co_parse takes from the sections: metadata notes (v3+ msgpack,
 * v2 YAML, the v2 ISA note), the symbol tables, whether there is a .text. */
typedef struct co_sections {
    const uint8_t *meta, *yaml_meta, *isa_note;
    size_t meta_len, yaml_len, isa_len;
    Elf_Scn *symscn, *dynsymscn;
    int have_text;
} co_sections;

/* The notes of one SHT_NOTE section: the first of each kind is kept. */
static void scan_notes(Elf_Scn *scn, co_sections *sc)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || !d->d_buf)
        return;
    size_t noff = 0, next, name_off, desc_off;
    GElf_Nhdr nh;
    while (noff < d->d_size &&
           (next = gelf_getnote(d, noff, &nh, &name_off, &desc_off)) > 0) {
        const char *owner = (const char *)d->d_buf + name_off;
        const uint8_t *desc = (const uint8_t *)d->d_buf + desc_off;
        if (nh.n_type == NT_AMDGPU_METADATA_ && nh.n_namesz == 7 &&
            memcmp(owner, "AMDGPU", 7) == 0 && !sc->meta) {
            sc->meta = desc;
            sc->meta_len = nh.n_descsz;
        } else if (nh.n_namesz == 4 && memcmp(owner, "AMD", 4) == 0) {
            if (nh.n_type == NT_AMD_HSA_METADATA_ && !sc->yaml_meta) {
                sc->yaml_meta = desc;
                sc->yaml_len = nh.n_descsz;
            } else if (nh.n_type == NT_AMD_HSA_ISA_VERSION_ && !sc->isa_note) {
                sc->isa_note = desc;
                sc->isa_len = nh.n_descsz;
            }
        }
        noff = next;
    }
}

/* Every section: .text (co->text*), symbol tables and notes into sc; a
 * section outside the file or a relocation section is an error. */
static gcn_ld_status scan_sections(Elf *e, size_t len, gcn_code_object *co, co_sections *sc, char *err,
                                   size_t errlen)
{
    size_t shstrndx = 0;
    if (elf_getshdrstrndx(e, &shstrndx) != 0) {
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen, "code object: no section name table: %s",
                  elf_errmsg(-1));
    }
    for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) {
            return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen, "code object: section header unreadable: %s",
                      elf_errmsg(-1));
        }
        const char *name = elf_strptr(e, shstrndx, sh.sh_name);
        if (!name)
            name = "";
        int in_file = sh.sh_type == SHT_NOBITS ||
                      (sh.sh_offset <= len && sh.sh_size <= len - sh.sh_offset);
        if (!in_file) {
            return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                      "code object: section %s [0x%llx, +0x%llx) lies outside the file (%zu bytes)",
                      name, (unsigned long long)sh.sh_offset, (unsigned long long)sh.sh_size, len);
        }
        if (sh.sh_type == SHT_PROGBITS && strcmp(name, ".text") == 0) {
            sc->have_text = 1;
            co->text_vaddr = sh.sh_addr;
            co->text_size = sh.sh_size;
            co->text = co->elf + sh.sh_offset;
        } else if (sh.sh_type == SHT_SYMTAB) {
            sc->symscn = scn;
        } else if (sh.sh_type == SHT_DYNSYM) {
            sc->dynsymscn = scn;
        } else if ((sh.sh_type == SHT_RELA || sh.sh_type == SHT_REL) && sh.sh_size) {
            return gcn_ld_fail(GCN_LD_UNSUPPORTED, err, errlen,
                      "code object: relocation section %s (%llu bytes) present; relocated code "
                      "objects are not supported yet",
                      name, (unsigned long long)sh.sh_size);
        } else if (sh.sh_type == SHT_NOTE) {
            scan_notes(scn, sc);
        }
    }
    return GCN_LD_OK;
}

/* The target name (from e_flags, or a v2 code object's ISA note) and the
 * kernels' metadata (v2: YAML note; v3+: msgpack note). */
static gcn_ld_status read_target_and_metadata(gcn_code_object *co, int version, unsigned mach,
                                              const co_sections *sc, char *err, size_t errlen)
{
    gcn_ld_status st;
    if (mach == 0 && (st = mach_from_isa_note(sc->isa_note, sc->isa_len, &mach, err, errlen)) != GCN_LD_OK)
        return st;
    snprintf(co->target, sizeof co->target, "amdgcn-amd-amdhsa--%s", mach_name(mach));
    if (version == 2) {
        if (!sc->yaml_meta) {
            return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                      "code object v2 (ELF ABI version 0): no NT_AMD_AMDGPU_HSA_METADATA note "
                      "(type 10, owner \"AMD\")%s",
                      sc->meta ? " (it has v3+ msgpack metadata: wrong EI_ABIVERSION?)" : "");
        }
        if ((st = gcn_md_parse_yaml(co, (const char *)sc->yaml_meta, sc->yaml_len, err, errlen)) != GCN_LD_OK)
            return st;
    } else {
        if (!sc->meta) {
            return gcn_ld_fail(GCN_LD_BAD_METADATA, err, errlen,
                      "code object v%d: no NT_AMDGPU_METADATA note (type 32, owner \"AMDGPU\")",
                      version);
        }
        if ((st = parse_metadata(co, sc->meta, sc->meta_len, err, errlen)) != GCN_LD_OK)
            return st;
    }
    return GCN_LD_OK;
}

gcn_ld_status gcn_co_parse(const void *elf_bytes, size_t len, gcn_code_object **out, char *err,
                           size_t errlen)
{
    if (out)
        *out = NULL;
    if (!out)
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen, "gcn_co_parse: NULL output pointer");
    int version = 0;
    unsigned mach = 0;
    gcn_ld_status st = check_header(elf_bytes, len, &version, &mach, err, errlen);
    if (st != GCN_LD_OK)
        return st;
    pthread_once(&elf_once, elf_init);
    if (!elf_ok)
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen, "code object: libelf version mismatch");

    gcn_code_object *co = calloc(1, sizeof *co);
    if (!co)
        return gcn_ld_fail(GCN_LD_ENOMEM, err, errlen, "code object: out of memory");
    co->elf = malloc(len);
    if (!co->elf) {
        free(co);
        return gcn_ld_fail(GCN_LD_ENOMEM, err, errlen, "code object: out of memory (%zu bytes)", len);
    }
    memcpy(co->elf, elf_bytes, len);
    co->elf_size = len;
    co->code_object_version = version;

    Elf *e = elf_memory((char *)co->elf, len);
    GElf_Ehdr eh;
    co_sections sc;
    memset(&sc, 0, sizeof sc);

    if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
        st = gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen, "code object: libelf cannot read it: %s",
                  elf_errmsg(-1));
        goto fail;
    }
    if (eh.e_type != ET_DYN) {
        st = gcn_ld_fail(GCN_LD_UNSUPPORTED, err, errlen,
                  "code object: ELF type %u is not ET_DYN (a relocatable object must be "
                  "linked first)",
                  eh.e_type);
        goto fail;
    }

    /* Loadable segments. */
    if ((st = read_segments(e, len, co, err, errlen)) != GCN_LD_OK)
        goto fail;

    /* Sections: .text, symbol tables, notes, relocations. */
    if ((st = scan_sections(e, len, co, &sc, err, errlen)) != GCN_LD_OK)
        goto fail;
    if ((st = read_target_and_metadata(co, version, mach, &sc, err, errlen)) != GCN_LD_OK)
        goto fail;
    if (co->n_kernels && !sc.have_text) {
        st = gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen, "code object: kernels but no .text section");
        goto fail;
    }

    /* Kernel descriptors: symbol .symbol, 64 bytes (v2: 256-byte
     * amd_kernel_code_t at the kernel's own symbol). */
    Elf_Scn *symscn = sc.symscn ? sc.symscn : sc.dynsymscn;
    if ((st = collect_symbols(co, e, symscn, err, errlen)) != GCN_LD_OK)
        goto fail;
    if ((st = read_kernel_descriptors(e, symscn, version, co, err, errlen)) != GCN_LD_OK)
        goto fail;
    /* .text must be inside the mapped image so the emulator's PCs are valid. */
    if (sc.have_text) {
        uint64_t toff;
        if (co->text_size && !vaddr_to_off(co, co->text_vaddr, co->text_size, &toff)) {
            st = gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                      "code object: .text [0x%llx, +0x%llx) is not inside a loaded segment",
                      (unsigned long long)co->text_vaddr, (unsigned long long)co->text_size);
            goto fail;
        }
    }
    if (version == 2 && sc.have_text && (st = v2_text_copy(co, err, errlen)) != GCN_LD_OK)
        goto fail;
    elf_end(e);
    *out = co;
    return GCN_LD_OK;

fail:
    if (e)
        elf_end(e);
    gcn_co_free(co);
    return st;
}

void gcn_co_free(gcn_code_object *co)
{
    if (!co)
        return;
    for (uint32_t i = 0; i < co->n_kernels; i++)
        free(co->kernels[i].args);
    free(co->kernels);
    for (uint32_t i = 0; i < co->n_syms; i++)
        free(co->syms[i].name);
    free(co->syms);
    free(co->text_buf);
    free(co->segs);
    free(co->elf);
    free(co);
}

const gcn_kernel *gcn_co_find_kernel(const gcn_code_object *co, const char *name)
{
    if (!co || !name)
        return NULL;
    size_t nl = strlen(name);
    for (uint32_t i = 0; i < co->n_kernels; i++) {
        const gcn_kernel *k = &co->kernels[i];
        if (strcmp(k->name, name) == 0 || strcmp(k->symbol, name) == 0)
            return k;
        /* .symbol without ".kd" */
        size_t sl = strlen(k->symbol);
        if (sl == nl + 3 && strncmp(k->symbol, name, nl) == 0 && strcmp(k->symbol + nl, ".kd") == 0)
            return k;
    }
    return NULL;
}

void gcn_co_map_image(const gcn_code_object *co, uint8_t *image)
{
    if (!co || !image)
        return;
    memset(image, 0, co->image_size);
    for (uint32_t i = 0; i < co->n_segs; i++) {
        const gcn_segment *s = &co->segs[i];
        memcpy(image + s->vaddr, co->elf + s->offset, s->filesz);
    }
}

const gcn_symbol *gcn_co_find_symbol(const gcn_code_object *co, const char *name)
{
    if (!co || !name)
        return NULL;
    for (uint32_t i = 0; i < co->n_syms; i++)
        if (strcmp(co->syms[i].name, name) == 0)
            return &co->syms[i];
    return NULL;
}

static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

gcn_ld_status gcn_elf_extent(const void *elf, size_t *out_len, char *err, size_t errlen)
{
    const uint8_t *b = elf;
    if (!b || memcmp(b, "\177ELF", 4) != 0)
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen, "code object: no ELF magic at offset 0");
    if (b[EI_CLASS] != ELFCLASS64 || b[EI_DATA] != ELFDATA2LSB)
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                    "code object: not a little-endian ELF64 file (class %u, data %u)", b[EI_CLASS],
                    b[EI_DATA]);
    uint64_t phoff = rd64(b + 32), shoff = rd64(b + 40);
    uint16_t phentsize = rd16(b + 54), phnum = rd16(b + 56), shentsize = rd16(b + 58),
             shnum = rd16(b + 60);
    if (phoff > MAX_IMAGE_SIZE || shoff > MAX_IMAGE_SIZE || (phnum && phentsize < 56) ||
        (shnum && shentsize < 64))
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                    "code object: implausible ELF header tables (phoff 0x%llx, shoff 0x%llx)",
                    (unsigned long long)phoff, (unsigned long long)shoff);
    uint64_t end = 64;
    if (phoff + (uint64_t)phnum * phentsize > end)
        end = phoff + (uint64_t)phnum * phentsize;
    if (shoff + (uint64_t)shnum * shentsize > end)
        end = shoff + (uint64_t)shnum * shentsize;
    for (unsigned i = 0; i < phnum; i++) {
        const uint8_t *ph = b + phoff + (uint64_t)i * phentsize;
        uint64_t off = rd64(ph + 8), filesz = rd64(ph + 32);
        if (off > MAX_IMAGE_SIZE || filesz > MAX_IMAGE_SIZE)
            return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                        "code object: program header %u is implausible", i);
        if (off + filesz > end)
            end = off + filesz;
    }
    for (unsigned i = 0; i < shnum; i++) {
        const uint8_t *sh = b + shoff + (uint64_t)i * shentsize;
        uint32_t type = rd32(sh + 4);
        uint64_t off = rd64(sh + 24), size = rd64(sh + 32);
        if (type == SHT_NOBITS || type == SHT_NULL)
            continue;
        if (off > MAX_IMAGE_SIZE || size > MAX_IMAGE_SIZE)
            return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen,
                        "code object: section header %u is implausible", i);
        if (off + size > end)
            end = off + size;
    }
    if (end > MAX_IMAGE_SIZE)
        return gcn_ld_fail(GCN_LD_BAD_ELF, err, errlen, "code object: larger than 1 GiB");
    if (out_len)
        *out_len = (size_t)end;
    return GCN_LD_OK;
}
