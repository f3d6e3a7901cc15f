/*
 * gcn3-objdump - disassemble gfx803 machine code the way `llvm-objdump -d
 * --mcpu=gfx803` does, with our own decoder (gcn/gcn_decode.c).
 *
 *   gcn3-objdump FILE...
 *
 * FILE may be an AMDGPU ELF (code object or relocatable object from llvm-mc),
 * a clang offload bundle (hipcc --genco), or a host executable/shared object
 * whose .hip_fatbin section holds offload bundles (every gfx803 code object in
 * it is disassembled, in file order).
 *
 * Output: per executable section "Disassembly of section NAME:", per symbol
 * "ADDR <name>:" and one line per instruction: tab, the instruction text,
 * and a "// ADDR: WORDS" comment as llvm-objdump prints it. Like llvm-objdump,
 * disassembly restarts at every symbol, runs of 8 or more zero bytes print as
 * "..." and words that do not decode print as ".long 0x...".
 *
 * Invariant relied on by the differential test (tests/e2e/objdump-diff.sh):
 * the instruction text is exactly gcn_disasm()'s output.
 *
 * Exit status: 0 ok, 1 unreadable or unsupported input (one-line message on
 * stderr naming the file and the problem), 2 usage error.
 */
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gcn/gcn_isa.h"
#include "gcn/gcn_loader.h"
#include "gcn3sim_version.h"

#ifndef EM_AMDGPU
#define EM_AMDGPU 224
#endif
/* AMDGPUUsage "ELF Header": e_flags EF_AMDGPU_MACH (low 8 bits). */
#define MACH_MASK 0xffu

static const char *prog = "gcn3-objdump";

static int fail(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const char *file, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: %s: ", prog, file);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

/* Name of an EF_AMDGPU_MACH value (AMDGPUUsage table "AMDGPU ELF Header
 * e_flags"), for error messages. */
static const char *mach_name(unsigned m)
{
    switch (m) {
    case 0x20: return "gfx600"; case 0x21: return "gfx601"; case 0x22: return "gfx700";
    case 0x23: return "gfx701"; case 0x24: return "gfx702"; case 0x25: return "gfx703";
    case 0x26: return "gfx704"; case 0x28: return "gfx801"; case 0x29: return "gfx802";
    case 0x2a: return "gfx803"; case 0x2b: return "gfx810"; case 0x2c: return "gfx900";
    case 0x2d: return "gfx902"; case 0x2e: return "gfx904"; case 0x2f: return "gfx906";
    case 0x30: return "gfx908"; case 0x31: return "gfx909"; case 0x32: return "gfx90c";
    case 0x33: return "gfx1010"; case 0x34: return "gfx1011"; case 0x35: return "gfx1012";
    case 0x36: return "gfx1030"; case 0x37: return "gfx1031"; case 0x38: return "gfx1032";
    case 0x39: return "gfx1033"; case 0x3a: return "gfx602"; case 0x3b: return "gfx705";
    case 0x3c: return "gfx805"; case 0x3d: return "gfx1035"; case 0x3e: return "gfx1034";
    case 0x3f: return "gfx90a"; case 0x40: return "gfx940";
    }
    return NULL;
}

typedef struct sym {
    uint64_t addr;
    const char *name;
    int notype; /* STT_NOTYPE: a label LLVM's AMDGPUSymbolizer prints for branch targets */
} sym;

/* STT_NOTYPE labels of the section being disassembled, sorted by address. */
static const sym *g_labels;
static size_t g_nlabels;

static int sym_cmp(const void *a, const void *b)
{
    const sym *x = a, *y = b;
    if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* llvm-objdump's countSkippableZeroBytes: a run of at least 8 zero bytes is
 * skipped, rounded down to whole words. */
static size_t zero_run(const uint8_t *p, size_t n)
{
    size_t z = 0;
    while (z < n && !p[z]) z++;
    return z < 8 ? 0 : z & ~(size_t)3;
}

/* Branch targets that hit an STT_NOTYPE symbol print as its name, as
 * llvm-objdump's AMDGPUSymbolizer does (LLVM 14: first such symbol in address
 * order); the last operand of the text is replaced. */
static void symbolize(const gcn_insn *in, char *text, size_t n)
{
    uint64_t tgt;
    if (in->flags & (GCN_IF_BR_COND | GCN_IF_BR_JUMP)) tgt = in->target;
    else if (!strcmp(gcn_op_name(in->op), "s_cbranch_i_fork")) tgt = in->pc + 4 + (uint64_t)((int64_t)(int16_t)in->imm * 4);
    else return;
    for (size_t i = 0; i < g_nlabels; i++) {
        if (g_labels[i].addr != tgt || !g_labels[i].notype) continue;
        char *sp = strrchr(text, ' ');
        if (!sp) return;
        snprintf(sp + 1, n - (size_t)(sp + 1 - text), "%s", g_labels[i].name);
        return;
    }
}

/* Disassemble [start, end) of a section whose bytes are data (vaddr base). */
static void dis_range(const uint8_t *data, uint64_t base, uint64_t start, uint64_t end)
{
    uint64_t a = start;
    while (a < end) {
        size_t left = (size_t)(end - a);
        size_t z = zero_run(data + (a - base), left);
        if (z) {
            printf("\t\t...\n");
            a += z;
            continue;
        }
        if (left < 4) { /* trailing bytes that are not a word */
            printf("\t.byte");
            for (size_t i = 0; i < left; i++) printf("%s0x%02x", i ? ", " : " ", data[a - base + i]);
            printf("\n");
            break;
        }
        uint32_t w[3] = {0, 0, 0};
        size_t nw = left / 4 > 3 ? 3 : left / 4;
        memcpy(w, data + (a - base), nw * 4);
        gcn_insn in;
        int sz = gcn_decode_one(w, nw, a, &in);
        char text[256];
        gcn_disasm(&in, text, sizeof text);
        symbolize(&in, text, sizeof text);
        char line[512];
        int k = snprintf(line, sizeof line, "\t%-58s // %012" PRIX64 ":", text, a);
        for (int i = 0; i < sz / 4 && k > 0 && (size_t)k < sizeof line; i++)
            k += snprintf(line + k, sizeof line - (size_t)k, " %08X", w[i]);
        puts(line);
        a += (uint64_t)sz;
    }
}

/* Disassemble every executable section of an AMDGPU ELF held in memory. */
static int dump_amdgpu_elf(const char *file, const void *buf, size_t len)
{
    Elf *e = elf_memory((char *)buf, len);
    if (!e) return fail(file, "not an ELF file (%s)", elf_errmsg(-1));
    int rc = 1;
    GElf_Ehdr eh;
    size_t shstrndx;
    if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || elf_getshdrstrndx(e, &shstrndx) != 0) {
        rc = fail(file, "not an ELF file");
        goto out;
    }
    if (eh.e_machine != EM_AMDGPU) {
        rc = fail(file, "ELF machine %u is not AMDGPU (%u)", eh.e_machine, EM_AMDGPU);
        goto out;
    }
    unsigned mach = eh.e_flags & MACH_MASK;
    if (mach != 0x2a && mach != 0x28 && mach != 0x29 && mach != 0x2b) {
        const char *n = mach_name(mach);
        if (n) rc = fail(file, "code object target is %s (e_flags 0x%x), only gfx803 is supported", n, (unsigned)eh.e_flags);
        else rc = fail(file, "unknown AMDGPU target (e_flags 0x%x), only gfx803 is supported", (unsigned)eh.e_flags);
        goto out;
    }
    /* symbols */
    sym *syms = NULL;
    size_t nsym = 0;
    size_t *sym_sec = NULL;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize) continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d) continue;
        size_t n = sh.sh_size / sh.sh_entsize;
        sym *ns = realloc(syms, (nsym + n) * sizeof *syms);
        size_t *nsec = realloc(sym_sec, (nsym + n) * sizeof *sym_sec);
        if (!ns || !nsec) {
            free(ns ? ns : syms);
            free(nsec ? nsec : sym_sec);
            rc = fail(file, "out of memory");
            goto out;
        }
        syms = ns;
        sym_sec = nsec;
        for (size_t i = 1; i < n; i++) {
            GElf_Sym s;
            if (!gelf_getsym(d, (int)i, &s)) continue;
            int t = GELF_ST_TYPE(s.st_info);
            if (t == STT_SECTION || t == STT_FILE || s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE) continue;
            const char *nm = elf_strptr(e, sh.sh_link, s.st_name);
            if (!nm || !*nm) continue;
            syms[nsym] = (sym){s.st_value, nm, t == STT_NOTYPE};
            sym_sec[nsym] = s.st_shndx;
            nsym++;
        }
    }
    int first = 1;
    scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) || sh.sh_type != SHT_PROGBITS) continue;
        const char *sname = elf_strptr(e, shstrndx, sh.sh_name);
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d || !d->d_buf || d->d_size < sh.sh_size) {
            rc = fail(file, "section %s: cannot read its bytes", sname ? sname : "?");
            free(syms);
            free(sym_sec);
            goto out;
        }
        if (first) printf("\n%s:\tfile format elf64-amdgpu\n", file);
        first = 0;
        printf("\nDisassembly of section %s:\n", sname ? sname : "?");
        size_t idx = elf_ndxscn(scn);
        /* this section's symbols, sorted; one label per address */
        sym *ss = malloc((nsym + 1) * sizeof *ss);
        size_t ns = 0;
        if (!ss) {
            rc = fail(file, "out of memory");
            free(syms);
            free(sym_sec);
            goto out;
        }
        for (size_t i = 0; i < nsym; i++)
            if (sym_sec[i] == idx && syms[i].addr >= sh.sh_addr && syms[i].addr < sh.sh_addr + sh.sh_size)
                ss[ns++] = syms[i];
        qsort(ss, ns, sizeof *ss, sym_cmp);
        /* every symbol of the section (before the one-label-per-address merge) */
        sym *lab = malloc((ns ? ns : 1) * sizeof *lab);
        if (!lab) {
            rc = fail(file, "out of memory");
            free(ss);
            free(syms);
            free(sym_sec);
            goto out;
        }
        memcpy(lab, ss, ns * sizeof *ss);
        g_labels = lab;
        g_nlabels = ns;
        size_t u = 0;
        for (size_t i = 0; i < ns; i++) {
            if (u && ss[u - 1].addr == ss[i].addr) { ss[u - 1] = ss[i]; continue; } /* last name wins */
            ss[u++] = ss[i];
        }
        ns = u;
        if (ns == 0 || ss[0].addr > sh.sh_addr) { /* bytes before the first symbol */
            memmove(ss + 1, ss, ns * sizeof *ss);
            ss[0] = (sym){sh.sh_addr, sname ? sname : "?", 0};
            ns++;
        }
        for (size_t i = 0; i < ns; i++) {
            uint64_t end = i + 1 < ns ? ss[i + 1].addr : sh.sh_addr + sh.sh_size;
            printf("\n%016" PRIx64 " <%s>:\n", ss[i].addr, ss[i].name);
            dis_range(d->d_buf, sh.sh_addr, ss[i].addr, end);
        }
        free(ss);
        free(lab);
        g_labels = NULL;
        g_nlabels = 0;
    }
    free(syms);
    free(sym_sec);
    if (first) rc = fail(file, "no executable section to disassemble");
    else rc = 0;
out:
    elf_end(e);
    return rc;
}

static int dump_bundle(const char *file, const uint8_t *buf, size_t len)
{
    gcn_bundle_entry ent;
    char err[256];
    gcn_ld_status st = gcn_bundle_find_gfx803(buf, len, &ent, err, sizeof err);
    if (st != GCN_LD_OK) return fail(file, "%s", err);
    char label[1024];
    snprintf(label, sizeof label, "%s:%s", file, ent.triple);
    return dump_amdgpu_elf(label, ent.data, (size_t)ent.size);
}

#define BUNDLE_MAGIC "__CLANG_OFFLOAD_BUNDLE__"

/* Host ELF: every offload bundle in .hip_fatbin (FACTS.md: one per source file
 * with device code, 4 KiB aligned). */
static int dump_host_elf(const char *file, const uint8_t *buf, size_t len)
{
    Elf *e = elf_memory((char *)buf, len);
    size_t shstrndx;
    if (!e || elf_getshdrstrndx(e, &shstrndx) != 0) {
        if (e) elf_end(e);
        return fail(file, "not an ELF file");
    }
    Elf_Scn *scn = NULL;
    int found = 0, rc = 0;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) continue;
        const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
        if (!nm || strcmp(nm, ".hip_fatbin") != 0) continue;
        if (sh.sh_type == SHT_NOBITS || sh.sh_offset > len || sh.sh_size > len - sh.sh_offset) {
            rc = fail(file, "section .hip_fatbin lies outside the file");
            break;
        }
        found = 1;
        const uint8_t *p = buf + sh.sh_offset;
        size_t n = (size_t)sh.sh_size, off = 0;
        int nb = 0;
        while (off + 24 <= n) {
            if (memcmp(p + off, BUNDLE_MAGIC, 24) != 0) { off += 8; continue; }
            size_t ext = 0;
            char err[256];
            if (gcn_bundle_extent(p + off, &ext, err, sizeof err) != GCN_LD_OK || ext > n - off) {
                rc = fail(file, ".hip_fatbin+0x%zx: %s", off, ext > n - off ? "bundle runs past the section" : err);
                break;
            }
            char label[1024];
            snprintf(label, sizeof label, "%s:.hip_fatbin+0x%zx", file, off);
            if (dump_bundle(label, p + off, ext)) rc = 1;
            nb++;
            off += (ext + 7) & ~(size_t)7;
        }
        if (!nb && !rc) rc = fail(file, "section .hip_fatbin holds no offload bundle");
    }
    elf_end(e);
    if (!found) return fail(file, "host ELF without a .hip_fatbin section (not a HIP program?)");
    return rc;
}

#define MAX_INPUT_BYTES (4ull << 30)

static int dump_file(const char *file)
{
    FILE *f = fopen(file, "rb");
    if (!f) return fail(file, "cannot open: %s", strerror(errno));
    /* a code object, bundle or program is a regular file of bounded size: a
     * device or pipe (/dev/zero) would be read forever */
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > MAX_INPUT_BYTES) {
        fclose(f);
        return fail(file, S_ISREG(sb.st_mode) ? "larger than 4 GiB: not a program or code object"
                                               : "not a regular file");
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + len, 1, cap - len, f)) > 0) {
        len += r;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb) { free(buf); buf = NULL; }
            else buf = nb;
        }
    }
    int ioerr = ferror(f);
    fclose(f);
    if (!buf) return fail(file, "out of memory");
    if (ioerr) { free(buf); return fail(file, "read error"); }
    int rc;
    if (len >= 24 && memcmp(buf, BUNDLE_MAGIC, 24) == 0) {
        rc = dump_bundle(file, buf, len);
    } else if (len >= 20 && memcmp(buf, "\177ELF", 4) == 0) {
        if (buf[4] != 2) rc = fail(file, "32-bit ELF: not an AMDGPU code object or HIP program");
        else {
            unsigned mach = buf[18] | buf[19] << 8; /* e_machine, little-endian */
            if (mach == EM_AMDGPU) rc = dump_amdgpu_elf(file, buf, len);
            else rc = dump_host_elf(file, buf, len);
        }
    } else {
        rc = fail(file, "not an ELF file or offload bundle");
    }
    free(buf);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: %s FILE...   (gfx803 code object, offload bundle or HIP executable)\n"
               "Disassemble the gfx803 kernels of each FILE with the emulator's own decoder, in\n"
               "llvm-objdump's syntax. --help, --version.\n",
               prog);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf("%s %s (commit %s)\n", prog, GCN3SIM_VERSION, GCN3SIM_COMMIT);
        return 0;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE...   (gfx803 code object, offload bundle or HIP executable)\n", prog);
        return 2;
    }
    if (elf_version(EV_CURRENT) == EV_NONE) {
        fprintf(stderr, "%s: libelf initialisation failed\n", prog);
        return 1;
    }
    int rc = 0;
    for (int i = 1; i < argc; i++)
        if (dump_file(argv[i])) rc = 1;
    return rc;
}
