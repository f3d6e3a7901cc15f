/*
 * gcn_bundle.c - clang offload bundles ("__CLANG_OFFLOAD_BUNDLE__").
 *
 * Layout (clang-offload-bundler documentation, FACTS.md): 24-byte magic,
 * u64 entry count, then per entry u64 offset (from the start of the bundle),
 * u64 size, u64 triple length and the triple bytes (not NUL-terminated). All
 * integers are little-endian. Entries seen from hipcc 5.2:
 * "host-x86_64-unknown-linux" (size 0) and "hipv4-amdgcn-amd-amdhsa--gfx803";
 * older bundles use "hip-amdgcn-amd-amdhsa-gfx803".
 *
 * Invariant: every read is bounds-checked against the known length. When the
 * length is unknown (0, the __hipRegisterFatBinary case) the header is read
 * field by field with an upper bound on sizes, and the extent is computed from
 * the entries; the caller vouches that the memory is a mapped bundle.
 */
#include "gcn_loader.h"
#include "loader_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define BUNDLE_MAGIC "__CLANG_OFFLOAD_BUNDLE__"
#define BUNDLE_MAGIC_LEN 24
/* Sanity limits for bundles of unknown length: no real bundle comes close. */
#define MAX_ENTRIES 4096u
#define MAX_TRIPLE 4096u
#define MAX_UNKNOWN_EXTENT ((uint64_t)1 << 34) /* 16 GiB */

gcn_ld_status gcn_ld_fail(gcn_ld_status st, char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return st;
}

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

const char *gcn_ld_status_name(gcn_ld_status s)
{
    switch (s) {
    case GCN_LD_OK: return "ok";
    case GCN_LD_ENOMEM: return "out of memory";
    case GCN_LD_BAD_BUNDLE: return "bad offload bundle";
    case GCN_LD_NO_TARGET: return "no supported target in bundle";
    case GCN_LD_BAD_ELF: return "bad ELF code object";
    case GCN_LD_UNSUPPORTED: return "unsupported code object";
    case GCN_LD_BAD_METADATA: return "bad code object metadata";
    }
    return "unknown loader status";
}

/* Walk the entry table. len == 0: unknown. Calls `fn` per entry when set;
 * returns the extent (header end and max offset+size) in *extent. */
typedef int (*entry_fn)(void *ctx, uint64_t off, uint64_t size, const char *triple,
                        size_t triple_len);

static gcn_ld_status walk(const uint8_t *b, size_t len, uint64_t *extent, entry_fn fn,
                          void *ctx, char *err, size_t errlen)
{
    if (!b)
        return gcn_ld_fail(GCN_LD_BAD_BUNDLE, err, errlen, "offload bundle: NULL pointer");
    uint64_t limit = len ? (uint64_t)len : UINT64_MAX;
    if (limit < BUNDLE_MAGIC_LEN + 8)
        return gcn_ld_fail(GCN_LD_BAD_BUNDLE, err, errlen,
                    "offload bundle: truncated header (%zu bytes)", len);
    if (memcmp(b, BUNDLE_MAGIC, BUNDLE_MAGIC_LEN) != 0)
        return gcn_ld_fail(GCN_LD_BAD_BUNDLE, err, errlen,
                    "offload bundle: no \"" BUNDLE_MAGIC "\" magic at offset 0");
    uint64_t n = rd64(b + BUNDLE_MAGIC_LEN);
    if (n == 0 || n > MAX_ENTRIES)
        return gcn_ld_fail(GCN_LD_BAD_BUNDLE, err, errlen,
                    "offload bundle: implausible entry count %llu", (unsigned long long)n);
    uint64_t pos = BUNDLE_MAGIC_LEN + 8, end = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (limit - pos < 24)
            return gcn_ld_fail(GCN_LD_BAD_BUNDLE, err, errlen,
                        "offload bundle: entry %llu header truncated at byte %llu",
                        (unsigned long long)i, (unsigned long long)pos);
        uint64_t off = rd64(b + pos), size = rd64(b + pos + 8), tlen = rd64(b + pos + 16);
        pos += 24;
        if (tlen > MAX_TRIPLE || limit - pos < tlen)
            return gcn_ld_fail(GCN_LD_BAD_BUNDLE, err, errlen,
                        "offload bundle: entry %llu triple (%llu bytes) truncated or too long",
                        (unsigned long long)i, (unsigned long long)tlen);
        const char *triple = (const char *)(b + pos);
        pos += tlen;
        if (off > limit || size > limit - off ||
            (!len && (off > MAX_UNKNOWN_EXTENT || size > MAX_UNKNOWN_EXTENT)))
            return gcn_ld_fail(GCN_LD_BAD_BUNDLE, err, errlen,
                        "offload bundle: entry %llu (%.*s) range [%llu, +%llu) outside the bundle",
                        (unsigned long long)i, (int)(tlen > 80 ? 80 : tlen), triple,
                        (unsigned long long)off, (unsigned long long)size);
        if (size && off + size > end)
            end = off + size;
        if (fn && fn(ctx, off, size, triple, (size_t)tlen))
            break;
    }
    if (pos > end)
        end = pos;
    if (extent)
        *extent = end;
    return GCN_LD_OK;
}

gcn_ld_status gcn_bundle_extent(const void *bundle, size_t *out_len, char *err, size_t errlen)
{
    uint64_t ext = 0;
    gcn_ld_status st = walk(bundle, 0, &ext, NULL, NULL, err, errlen);
    if (st == GCN_LD_OK && out_len)
        *out_len = (size_t)ext;
    return st;
}

/* Processor name at the end of an AMDGCN triple, "gfx803" in
 * "hipv4-amdgcn-amd-amdhsa--gfx803" or "hip-amdgcn-amd-amdhsa-gfx803:xnack-". */
static int triple_gpu(const char *t, size_t n, char *gpu, size_t gpulen)
{
    const char *arch = "amdgcn-amd-amdhsa";
    size_t al = strlen(arch);
    if (n < 4 || strncmp(t, "hip", 3) != 0)
        return 0;
    const char *p = NULL;
    for (size_t i = 0; i + al <= n; i++)
        if (memcmp(t + i, arch, al) == 0) {
            p = t + i + al;
            break;
        }
    if (!p)
        return 0;
    const char *e = t + n;
    while (p < e && *p == '-')
        p++;
    size_t k = 0;
    while (p < e && *p != ':' && k + 1 < gpulen)
        gpu[k++] = *p++;
    gpu[k] = 0;
    return k > 0;
}

struct find_ctx {
    const uint8_t *base;
    int best_rank; /* 0 none, 1 compatible gfx8 variant, 2 exact gfx803 */
    gcn_bundle_entry best;
    char seen[512];
};

static int find_cb(void *vctx, uint64_t off, uint64_t size, const char *triple, size_t tlen)
{
    struct find_ctx *c = vctx;
    size_t sl = strlen(c->seen);
    if (sl + 4 < sizeof c->seen)
        snprintf(c->seen + sl, sizeof c->seen - sl, "%s%.*s", sl ? ", " : "",
                 (int)(tlen > 100 ? 100 : tlen), triple);
    char gpu[32];
    if (!size || !triple_gpu(triple, tlen, gpu, sizeof gpu))
        return 0;
    int rank = 0;
    if (strcmp(gpu, "gfx803") == 0)
        rank = 2;
    else if (!strcmp(gpu, "gfx801") || !strcmp(gpu, "gfx802") || !strcmp(gpu, "gfx810"))
        rank = 1;
    if (rank > c->best_rank) {
        c->best_rank = rank;
        c->best.data = c->base + off;
        c->best.size = size;
        size_t n = tlen < sizeof c->best.triple - 1 ? tlen : sizeof c->best.triple - 1;
        memcpy(c->best.triple, triple, n);
        c->best.triple[n] = 0;
    }
    return 0;
}

gcn_ld_status gcn_bundle_find_gfx803(const void *bundle, size_t len, gcn_bundle_entry *out,
                                     char *err, size_t errlen)
{
    struct find_ctx c;
    memset(&c, 0, sizeof c);
    c.base = bundle;
    gcn_ld_status st = walk(bundle, len, NULL, find_cb, &c, err, errlen);
    if (st != GCN_LD_OK)
        return st;
    if (!c.best_rank)
        return gcn_ld_fail(GCN_LD_NO_TARGET, err, errlen,
                    "offload bundle has no gfx803 code object (entries: %s); rebuild with "
                    "hipcc --offload-arch=gfx803",
                    c.seen[0] ? c.seen : "none");
    if (out)
        *out = c.best;
    return GCN_LD_OK;
}
