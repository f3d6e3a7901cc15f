/*
 * 504-golden - golden traces pin format 2.6 (docs/trace-format.md), and the
 * 1.0, 1.1, 1.2, 1.3, 1.4, 2.0, 2.1, 2.2, 2.3, 2.4 and 2.5 golden files stay
 * readable.
 *
 * tests/trace/data/golden-2.6.gtrace was written by the checked-in
 * generator tests/trace/data/gen.h (run `504-golden --generate
 * tests/trace/data` to rewrite it, then update the two constants below and
 * say why in the commit: a changed golden file is a format change).
 * golden-1.0.gtrace is the file the 1.0 writer made from the same generator
 * (before code objects carried their load address), golden-1.1.gtrace the
 * 1.1 writer's (before awaits), golden-1.2.gtrace the 1.2 writer's (before
 * stream waits), golden-1.3.gtrace the 1.3 writer's (before host gaps),
 * golden-1.4.gtrace the 1.4 writer's (before wave segments: its kernel 2 has
 * no long loop), golden-2.0.gtrace the 2.0 writer's (before managed
 * allocations: no ALLOC carries `managed`), golden-2.1.gtrace the 2.1
 * writer's (before hashed loads: every load of kernel 2 has its values),
 * golden-2.2.gtrace the 2.2 writer's (before the header's
 * lds_values_omitted; it holds what 2.3 writes when LDS values are kept, the
 * field's default, so its decoded content equals the 2.3 file's),
 * golden-2.3.gtrace the 2.3 writer's (before store frames; the generator's
 * stores are 29% of its data values, more than an eighth, so the 2.4 writer
 * adds none and the 2.4 file differs only in its version: its decoded
 * content is the same; store frames are pinned by
 * tests/trace/500-roundtrip.c test_store_frames), golden-2.4.gtrace the
 * 2.4 writer's (before the store frames' ops; it has no store frame, so the
 * 2.5 file differs only in its version), golden-2.5.gtrace the 2.5 writer's
 * (before host-image loads: the 2.6 generator adds loads of what its copies
 * and memset wrote, so the 2.6 content differs from the 2.5 one, which
 * 2.2-2.5 share, GOLDEN25_CONTENT):
 * they are never rewritten, and the reader must
 * decode them to the content they always had.
 *
 *  - the file's bytes are pinned by GOLDEN_FILE_FNV;
 *  - what the reader decodes from it (every field of every record) is
 *    pinned by GOLDEN_CONTENT, and must equal what it decodes from a fresh
 *    generation;
 *  - a fresh generation has the same framing (chunk types, order, sizes of
 *    the decompressed payloads) and the same decompressed payloads as the
 *    golden file: only zstd's choice of compressed bytes may differ between
 *    libzstd versions;
 *  - fresh generations with 1 or 4 committing threads, any commit order and
 *    with or without background compressors are byte-identical.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/trace/data/gen.h"
#include "traceformat/trc_writer_internal.h"

#define GOLDEN_NAME "golden-2.6.gtrace"
#define GOLDEN_FILE_FNV 0x51a1f96b046d022aull
#define GOLDEN_CONTENT  0xdfcd51e57062ba8cull
/* format 2.5, frozen since 2.6 (host-image loads): bytes and decoded content */
#define GOLDEN25_NAME "golden-2.5.gtrace"
#define GOLDEN25_FILE_FNV 0x8c41f4c2e3df2f22ull
#define GOLDEN25_CONTENT  0x4653e006038825deull
/* format 2.4, frozen since 2.5 (the store frames' ops): bytes and decoded content */
#define GOLDEN24_NAME "golden-2.4.gtrace"
#define GOLDEN24_FILE_FNV 0xb67e4adc54c57f8cull
#define GOLDEN24_CONTENT  0x4653e006038825deull
/* format 2.3, frozen since 2.4 (store frames): bytes and decoded content */
#define GOLDEN23_NAME "golden-2.3.gtrace"
#define GOLDEN23_FILE_FNV 0xc987fa934809cef4ull
#define GOLDEN23_CONTENT  0x4653e006038825deull
/* format 2.2, frozen since 2.3 (LDS values left out): bytes and decoded content */
#define GOLDEN22_NAME "golden-2.2.gtrace"
#define GOLDEN22_FILE_FNV 0xf011f71a3b587ddbull
#define GOLDEN22_CONTENT  0x4653e006038825deull
/* format 2.1, frozen since 2.2 (hashed loads): bytes and decoded content */
#define GOLDEN21_NAME "golden-2.1.gtrace"
#define GOLDEN21_FILE_FNV 0xd9dd2d80437c8063ull
#define GOLDEN21_CONTENT  0x6cd6145068ed6cd1ull
/* format 2.0, frozen since 2.1 (managed allocations): bytes and decoded content */
#define GOLDEN20_NAME "golden-2.0.gtrace"
#define GOLDEN20_FILE_FNV 0xf9b3ade154836f23ull
#define GOLDEN20_CONTENT  0xaaa98e0a5797e515ull
/* format 1.4, frozen since 2.0 (wave segments): bytes and decoded content */
#define GOLDEN14_NAME "golden-1.4.gtrace"
#define GOLDEN14_FILE_FNV 0x9f2fc083aec609ddull
#define GOLDEN14_CONTENT  0xeff492df66555881ull
/* format 1.3, frozen since 1.4 (host time between calls): bytes and decoded content */
#define GOLDEN13_NAME "golden-1.3.gtrace"
#define GOLDEN13_FILE_FNV 0x0c6915344fe8ebf5ull
#define GOLDEN13_CONTENT  0x1e30bf4121b4392bull
/* format 1.2, frozen since 1.3 (stream waits): bytes and decoded content */
#define GOLDEN12_NAME "golden-1.2.gtrace"
#define GOLDEN12_FILE_FNV 0x20869949b4e7a46dull
#define GOLDEN12_CONTENT  0xb94fb0eb3786f8ebull
/* format 1.1, frozen since 1.2 (awaits): bytes and decoded content */
#define GOLDEN11_NAME "golden-1.1.gtrace"
#define GOLDEN11_FILE_FNV 0x1f4273df0620a8b9ull
#define GOLDEN11_CONTENT  0x308def0087b4a1cbull
/* format 1.0, frozen: bytes and decoded content */
#define GOLDEN10_NAME "golden-1.0.gtrace"
#define GOLDEN10_FILE_FNV 0x6c1f31b2088e588full
#define GOLDEN10_CONTENT  0x0db5481bda5efcfbull
/* Generation parameters of the golden file. */
#define G_THREADS 2
#define G_SEED 1
#define G_FRAME_REC 1024
#define G_FRAME_DATA 4096

static char tmpdir[512];

static uint8_t *slurp(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)sz + 1);
    *n = fread(b, 1, (size_t)sz, f);
    fclose(f);
    return b;
}

static const char *golden_path_of(const char *name)
{
    static char p[1024];
    const char *d = getenv("TRC_GOLDEN_DIR");
    snprintf(p, sizeof p, "%s/%s", d ? d : "tests/trace/data", name);
    return p;
}
static const char *golden_path(void) { return golden_path_of(GOLDEN_NAME); }

/* The current golden file, open (the test fails when it cannot be read). */
static trc_reader *open_golden(void)
{
    char err[512];
    trc_reader *r = trc_reader_open(golden_path(), err, sizeof err);
    if (!r) fail_msg("%s", err);
    return r;
}

/* Chunk-by-chunk comparison of two traces' framing and decompressed
 * payloads. */
static void same_payloads(const char *a, const char *b)
{
    size_t na, nb;
    uint8_t *fa = slurp(a, &na), *fb = slurp(b, &nb);
    assert_non_null(fa);
    assert_non_null(fb);
    assert_memory_equal(fa, fb, TRC_FILE_HDR_SIZE);
    uint64_t oa = TRC_FILE_HDR_SIZE, ob = TRC_FILE_HDR_SIZE, ia = trc_get_le64(fa + na - TRC_TRAILER_SIZE),
             ib = trc_get_le64(fb + nb - TRC_TRAILER_SIZE);
    int ka = open(a, 0), kb = open(b, 0);
    int n = 0;
    for (;;) {
        uint32_t ta, tb;
        uint8_t *ra, *rb;
        size_t la, lb;
        uint64_t ca, cb;
        char err[512];
        if (trc_read_chunk_raw(ka, a, oa, na - TRC_TRAILER_SIZE, 0, &ta, &ra, &la, &ca, err, sizeof err) != 0)
            fail_msg("%s", err);
        if (trc_read_chunk_raw(kb, b, ob, nb - TRC_TRAILER_SIZE, 0, &tb, &rb, &lb, &cb, err, sizeof err) != 0)
            fail_msg("%s", err);
        if (ta != tb || la != lb || memcmp(ra, rb, la) != 0)
            fail_msg("chunk %d (type %u at %llu vs type %u at %llu) differs", n, ta,
                     (unsigned long long)oa, tb, (unsigned long long)ob);
        free(ra);
        free(rb);
        n++;
        if (ta == TRC_CHUNK_INDEX) break;
        oa += ca;
        ob += cb;
    }
    assert_int_equal(oa, ia);
    assert_int_equal(ob, ib);
    close(ka);
    close(kb);
    free(fa);
    free(fb);
}

static uint64_t content_of(const char *p)
{
    char err[512];
    trc_reader *r = trc_reader_open(p, err, sizeof err);
    if (!r) fail_msg("%s", err);
    uint64_t h = gen_content_hash(r, SIZE_MAX, SIZE_MAX, SIZE_MAX, err, sizeof err);
    if (h == (uint64_t)-1) fail_msg("%s", err);
    trc_reader_close(r);
    return h;
}

static void test_golden(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = slurp(golden_path(), &n);
    if (!b)
        fail_msg("%s missing: run `504-golden --generate tests/trace/data` from the repository root",
                 golden_path());
    uint64_t fnv = gen_fnv(0xcbf29ce484222325ull, b, n);
    free(b);
    if (fnv != GOLDEN_FILE_FNV)
        fail_msg("%s changed: FNV-1a 0x%016llx, pinned 0x%016llx", golden_path(),
                 (unsigned long long)fnv, (unsigned long long)GOLDEN_FILE_FNV);
    uint64_t c = content_of(golden_path());
    if (c != GOLDEN_CONTENT)
        fail_msg("decoded content of %s: 0x%016llx, pinned 0x%016llx", golden_path(),
                 (unsigned long long)c, (unsigned long long)GOLDEN_CONTENT);
    char p[600], err[512];
    snprintf(p, sizeof p, "%s/trc504-%d.gtrace", tmpdir, (int)getpid());
    if (gen_trace(p, G_THREADS, G_SEED, G_FRAME_REC, G_FRAME_DATA, 1, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_true(content_of(p) == GOLDEN_CONTENT);
    same_payloads(golden_path(), p);
    unlink(p);
}

/* A frozen golden file: its bytes and decoded content are the pinned ones;
 * returns it opened (the caller checks what its version lacks). */
static trc_reader *open_frozen(const char *name, uint64_t file_fnv, uint64_t content, uint32_t minor)
{
    size_t n;
    const char *p = golden_path_of(name);
    uint8_t *b = slurp(p, &n);
    if (!b) fail_msg("%s missing (it is never regenerated: restore it from git)", p);
    uint64_t fnv = gen_fnv(0xcbf29ce484222325ull, b, n);
    free(b);
    if (fnv != file_fnv)
        fail_msg("%s changed: FNV-1a 0x%016llx, pinned 0x%016llx", p, (unsigned long long)fnv,
                 (unsigned long long)file_fnv);
    uint64_t c = content_of(p);
    if (c != content)
        fail_msg("decoded content of %s: 0x%016llx, pinned 0x%016llx", p, (unsigned long long)c,
                 (unsigned long long)content);
    char err[512];
    trc_reader *r = trc_reader_open(p, err, sizeof err);
    if (!r) fail_msg("%s", err);
    assert_int_equal(trc_reader_header(r)->format_minor, minor);
    return r;
}

/* The frozen 1.0 file: same bytes, read to the same content (its code objects
 * have no load address: the replay falls back to the allocation order). */
static void test_golden_1_0(void **state)
{
    (void)state;
    trc_reader *r = open_frozen(GOLDEN10_NAME, GOLDEN10_FILE_FNV, GOLDEN10_CONTENT, 0);
    assert_int_equal(trc_reader_code_object_addr(r, 0), 0);
    trc_reader_close(r);
}

/* The frozen 1.1 file (before awaits): same bytes, same content, no awaits. */
static void test_golden_1_1(void **state)
{
    (void)state;
    char err[512];
    trc_reader *r = open_frozen(GOLDEN11_NAME, GOLDEN11_FILE_FNV, GOLDEN11_CONTENT, 1);
    trc_wg *g = trc_reader_load_wg(r, 0, 0, err, sizeof err);
    if (!g) fail_msg("%s", err);
    for (uint32_t v = 0; v < g->n_waves; v++)
        assert_int_equal(g->waves[v].n_await, 0);
    trc_wg_free(g);
    trc_reader_close(r);
}

/* The frozen 1.2 file (before stream waits): same bytes, same content, and
 * no SYNC carries stream-wait fields. */
static void test_golden_1_2(void **state)
{
    (void)state;
    trc_reader *r = open_frozen(GOLDEN12_NAME, GOLDEN12_FILE_FNV, GOLDEN12_CONTENT, 2);
    for (size_t i = 0; i < trc_reader_n_events(r); i++) {
        const trc_event *e = trc_reader_event(r, i);
        assert_true(!e->until_event && !e->stream_wait && !e->wait_stream && !e->stream_nonblocking);
    }
    trc_reader_close(r);
}

/* The frozen 1.3 file (before host gaps): same bytes, same content, and no
 * event carries a host gap. */
static void test_golden_1_3(void **state)
{
    (void)state;
    trc_reader *r = open_frozen(GOLDEN13_NAME, GOLDEN13_FILE_FNV, GOLDEN13_CONTENT, 3);
    for (size_t i = 0; i < trc_reader_n_events(r); i++)
        assert_int_equal(trc_reader_event(r, i)->host_gap_ns, 0);
    trc_reader_close(r);
}

/* The frozen 1.4 file (before wave segments): same bytes, same content, no
 * kernel has segments. */
static void test_golden_1_4(void **state)
{
    (void)state;
    trc_reader *r = open_frozen(GOLDEN14_NAME, GOLDEN14_FILE_FNV, GOLDEN14_CONTENT, 4);
    assert_int_equal(trc_reader_header(r)->format_major, 1);
    for (uint32_t k = 0; k < trc_reader_n_kernels(r); k++) {
        trc_kernel_stats st;
        assert_int_equal(trc_reader_kernel_stats(r, k, &st), 0);
        assert_int_equal(st.n_segments, 0);
    }
    trc_reader_close(r);
}

/* The frozen 2.0 file (before managed allocations): same bytes, same
 * content, its long waves in segments, and no ALLOC is managed. */
static void test_golden_2_0(void **state)
{
    (void)state;
    trc_reader *r = open_frozen(GOLDEN20_NAME, GOLDEN20_FILE_FNV, GOLDEN20_CONTENT, 0);
    assert_int_equal(trc_reader_header(r)->format_major, 2);
    trc_kernel_stats st;
    assert_int_equal(trc_reader_kernel_stats(r, 2, &st), 0);
    assert_true(st.n_segments >= 2 * st.n_waves);
    for (size_t i = 0; i < trc_reader_n_events(r); i++)
        assert_int_equal(trc_reader_event(r, i)->managed, 0);
    trc_reader_close(r);
}

/* No memory op of kernel k's first workgroup carries a load hash. */
static void assert_no_hashes(trc_reader *r, uint32_t k)
{
    char err[512];
    trc_wg *g = trc_reader_load_wg(r, k, 0, err, sizeof err);
    if (!g) fail_msg("%s", err);
    for (uint32_t v = 0; v < g->n_waves; v++)
        for (uint32_t m = 0; m < g->waves[v].n_mem; m++)
            assert_int_equal(g->waves[v].mem[m].load_hash, 0);
    trc_wg_free(g);
}

/* The frozen 2.1 file (before hashed loads): same bytes, same content, and
 * every load of kernel 2 carries its values. */
static void test_golden_2_1(void **state)
{
    (void)state;
    trc_reader *r = open_frozen(GOLDEN21_NAME, GOLDEN21_FILE_FNV, GOLDEN21_CONTENT, 1);
    assert_int_equal(trc_reader_header(r)->format_major, 2);
    assert_no_hashes(r, 2);
    trc_reader_close(r);
}

/* The frozen 2.2 file (before lds_values_omitted): same bytes, same content
 * (that of the 2.3 file: the 2.3 writer adds nothing while LDS values are
 * kept), and a reader sees LDS values recorded. */
static void test_golden_2_2(void **state)
{
    (void)state;
    trc_reader *r = open_frozen(GOLDEN22_NAME, GOLDEN22_FILE_FNV, GOLDEN22_CONTENT, 2);
    assert_int_equal(trc_reader_header(r)->format_major, 2);
    assert_int_equal(trc_reader_header(r)->lds_values_omitted, 0);
    trc_reader_close(r);
    assert_true(GOLDEN22_CONTENT == GOLDEN25_CONTENT);
}

/* A frozen 2.x file of minor `minor` whose content is the 2.5 file's
 * and in which no kernel has a store frame (the generator's stores are
 * more than an eighth of its values). */
static void frozen_without_store_frames(const char *name, uint64_t file_fnv, uint64_t content, uint32_t minor)
{
    trc_reader *r = open_frozen(name, file_fnv, content, minor);
    assert_int_equal(trc_reader_header(r)->format_major, 2);
    for (uint32_t k = 0; k < trc_reader_n_kernels(r); k++) {
        trc_kernel_stats st;
        assert_int_equal(trc_reader_kernel_stats(r, k, &st), 0);
        assert_int_equal(st.n_store_frames, 0);
    }
    trc_reader_close(r);
    assert_true(content == GOLDEN25_CONTENT);
}

/* The frozen 2.3 file (before store frames): same bytes, same content (that
 * of the 2.4 and 2.5 files), and no kernel has a store frame. */
static void test_golden_2_3(void **state)
{
    (void)state;
    frozen_without_store_frames(GOLDEN23_NAME, GOLDEN23_FILE_FNV, GOLDEN23_CONTENT, 3);
}

/* The frozen 2.4 file (before the store frames' ops): the same. */
static void test_golden_2_4(void **state)
{
    (void)state;
    frozen_without_store_frames(GOLDEN24_NAME, GOLDEN24_FILE_FNV, GOLDEN24_CONTENT, 4);
}

/* Calls fn(kernel, wave, ctx) for every wave of every workgroup of r, each
 * workgroup loaded with its data. */
static void for_each_wave(trc_reader *r, void (*fn)(uint32_t k, const trc_wave *w, void *ctx), void *ctx)
{
    char err[512];
    for (uint32_t k = 0; k < trc_reader_n_kernels(r); k++) {
        trc_kernel_stats st;
        assert_int_equal(trc_reader_kernel_stats(r, k, &st), 0);
        for (uint32_t i = 0; i < st.n_wg; i++) {
            trc_wg *g = trc_reader_load_wg(r, k, i, err, sizeof err);
            if (!g) fail_msg("%s", err);
            for (uint32_t v = 0; v < g->n_waves; v++) fn(k, &g->waves[v], ctx);
            trc_wg_free(g);
        }
    }
}

static void check_no_host(uint32_t k, const trc_wave *w, void *ctx)
{
    (void)k, (void)ctx;
    for (uint32_t m = 0; m < w->n_mem; m++) assert_false(w->mem[m].flags & TRC_MO_HOST);
}

/* The frozen 2.5 file (before host-image loads): the same, and no op has
 * TRC_MO_HOST. */
static void test_golden_2_5(void **state)
{
    (void)state;
    frozen_without_store_frames(GOLDEN25_NAME, GOLDEN25_FILE_FNV, GOLDEN25_CONTENT, 5);
    char err[512];
    trc_reader *r = trc_reader_open(golden_path_of(GOLDEN25_NAME), err, sizeof err);
    if (!r) fail_msg("%s", err);
    for_each_wave(r, check_no_host, NULL);
    trc_reader_close(r);
}

/* One wave of the 2.6 file, as test_golden_host_image says (ctx: the
 * generator's copy bytes d[512]), k its kernel. */
static void check_host_wave(uint32_t k, const trc_wave *w, void *ctx)
{
    const uint8_t *d = ctx;
    uint32_t seen = 0, kept = 0;
    for (uint32_t m = 0; m < w->n_mem; m++) {
        const trc_mem_op *o = &w->mem[m];
        if (!o->exec || !o->addr) {
            assert_false(o->flags & TRC_MO_HOST);
            continue;
        }
        uint64_t a0 = trc_mo_addr(o, 0);
        if (k == 1 && a0 == 0x30000 && o->exec == 0xffffull) {
            assert_false(o->flags & TRC_MO_HOST);
            assert_memory_equal(o->load_data, d, 64);
            kept++;
        }
        if (!(o->flags & TRC_MO_HOST))
            continue;
        assert_true(k < 2);
        assert_int_equal(o->load_hash, 0);
        assert_non_null(o->load_data);
        seen++;
        if (a0 == 0x10000) {
            assert_int_equal(o->flags, TRC_MO_LOAD | TRC_MO_HOST);
            assert_memory_equal(o->load_data, d, 256);
        } else if (a0 == 0x10100) {
            uint8_t f[64];
            memset(f, 0x5a, sizeof f);
            assert_memory_equal(o->load_data, f, 64);
        } else {
            assert_int_equal(a0, 0x20010);
            assert_int_equal(o->flags, TRC_MO_LOAD | TRC_MO_SMEM | TRC_MO_HOST);
            assert_memory_equal(o->load_data, d + 116, 16);
        }
    }
    assert_int_equal(seen, k < 2 ? 3 : 0);
    assert_int_equal(kept, k == 1 ? 1 : 0);
}

/* The 2.6 file: in kernels 0 and 1 every wave has the generator's three
 * host-image loads (gen.h), flagged TRC_MO_HOST, their values rebuilt from
 * the copies and the memset before the launch: the H2D copy's bytes at
 * 0x10000, the memset's 0x5a at 0x10100, the INIT copy's bytes at 0x20010
 * (scalar); kernel 1's load at 0x30000 (written by a D2D copy: unknown to
 * the image) keeps its values; no other op is flagged. */
static void test_golden_host_image(void **state)
{
    (void)state;
    trc_reader *r = open_golden();
    assert_int_equal(trc_reader_header(r)->format_minor, 6);
    assert_int_equal(trc_reader_n_kernels(r), 3);
    uint8_t d[512];
    gen_bytes(d, sizeof d, 0xda);
    for_each_wave(r, check_host_wave, d);
    trc_reader_close(r);
}

/* The 2.6 file: kernel 2's plain loads (in wave segments) carry a hash of
 * their values and no values, the hash being that of what the generator
 * recorded (trc_load_hash); kernel 0's loads keep their values. */
static void test_golden_hashed(void **state)
{
    (void)state;
    char err[512];
    trc_reader *r = open_golden();
    assert_int_equal(trc_reader_header(r)->format_minor, 6);
    trc_wg *g = trc_reader_load_wg(r, 2, 0, err, sizeof err);
    if (!g) fail_msg("%s", err);
    uint32_t hashed = 0;
    for (uint32_t v = 0; v < g->n_waves; v++)
        for (uint32_t m = 0; m < g->waves[v].n_mem; m++) {
            const trc_mem_op *o = &g->waves[v].mem[m];
            if (!o->load_hash)
                continue;
            hashed++;
            assert_null(o->load_data);
            assert_int_equal(o->flags & ~(uint32_t)TRC_MO_LDS, TRC_MO_LOAD); /* VMEM or LDS */
        }
    assert_true(hashed >= GEN_LOOP * g->n_waves);
    /* wave 0's first load (gen.h): its values were gen_bytes(s * 31 + 1) */
    uint8_t ld[256];
    uint64_t s = (uint64_t)2 << 40;
    gen_bytes(ld, 256, s * 31 + 1);
    assert_true(g->waves[0].mem[0].load_hash == trc_load_hash(ld, 256));
    ld[0] ^= 1;
    assert_true(g->waves[0].mem[0].load_hash != trc_load_hash(ld, 256));
    trc_wg_free(g);
    assert_no_hashes(r, 0);
    trc_reader_close(r);
}

/* The 2.6 file holds the generator's managed allocation: exactly one event,
 * the third, an ALLOC of device memory at 0x40000 with managed == 1. */
static void test_golden_managed(void **state)
{
    (void)state;
    trc_reader *r = open_golden();
    assert_int_equal(trc_reader_header(r)->format_major, 2);
    assert_int_equal(trc_reader_header(r)->format_minor, 6);
    size_t found = 0;
    for (size_t i = 0; i < trc_reader_n_events(r); i++) {
        const trc_event *e = trc_reader_event(r, i);
        if (!e->managed)
            continue;
        found++;
        assert_int_equal(i, 2);
        assert_int_equal(e->kind, TRC_EV_ALLOC);
        assert_int_equal(e->mem_kind, TRC_MEM_DEVICE);
        assert_int_equal(e->addr, 0x40000);
        assert_int_equal(e->size, 0x8000);
    }
    assert_int_equal(found, 1);
    trc_reader_close(r);
}

/* The 2.6 file holds kernel 2's long waves in segments (several per wave);
 * the same generation without segments decodes to the same content. */
static void test_golden_segments(void **state)
{
    (void)state;
    trc_reader *r = open_golden();
    assert_int_equal(trc_reader_header(r)->format_major, 2);
    assert_int_equal(trc_reader_header(r)->format_minor, 6);
    trc_kernel_stats st;
    assert_int_equal(trc_reader_kernel_stats(r, 0, &st), 0);
    assert_int_equal(st.n_segments, 0);
    assert_int_equal(trc_reader_kernel_stats(r, 2, &st), 0);
    assert_true(st.n_segments >= 2 * st.n_waves); /* at least two per wave */
    assert_true(st.seg_bytes > 0);
    trc_reader_close(r);
    char p[600], err[512];
    snprintf(p, sizeof p, "%s/trc504-%d-whole.gtrace", tmpdir, (int)getpid());
    gen_no_segments = 1;
    int rc = gen_trace(p, G_THREADS, G_SEED, G_FRAME_REC, G_FRAME_DATA, 1, err, sizeof err);
    gen_no_segments = 0;
    if (rc != 0) fail_msg("%s", err);
    r = trc_reader_open(p, err, sizeof err);
    if (!r) fail_msg("%s", err);
    assert_int_equal(trc_reader_kernel_stats(r, 2, &st), 0);
    assert_int_equal(st.n_segments, 0);
    trc_reader_close(r);
    assert_true(content_of(p) == GOLDEN_CONTENT);
    unlink(p);
}

/* The 2.1 file carries the generator's host gaps: 123,456 ns (two calls
 * added up) on the launch of kernel 2, 7,000 ns on the copy after it, none
 * elsewhere. */
static void test_golden_host_gap(void **state)
{
    (void)state;
    trc_reader *r = open_golden();
    size_t found = 0;
    for (size_t i = 0; i < trc_reader_n_events(r); i++) {
        const trc_event *e = trc_reader_event(r, i);
        if (e->kind == TRC_EV_LAUNCH && e->launch.kernel_id == 2) {
            assert_int_equal(e->host_gap_ns, 123456);
            assert_true(i + 1 < trc_reader_n_events(r));
            assert_int_equal(trc_reader_event(r, i + 1)->host_gap_ns, 7000);
            found++;
            i++;
        } else {
            assert_int_equal(e->host_gap_ns, 0);
        }
    }
    assert_int_equal(found, 1);
    trc_reader_close(r);
}

/* The 2.6 file holds the generator's stream wait (stream 4 waits for stream
 * 3's work before the SYNC just before it) and declares stream 5
 * non-blocking. */
static void test_golden_stream_wait(void **state)
{
    (void)state;
    trc_reader *r = open_golden();
    size_t found = 0;
    for (size_t i = 0; i < trc_reader_n_events(r); i++) {
        const trc_event *e = trc_reader_event(r, i);
        if (!e->stream_wait)
            continue;
        found++;
        assert_int_equal(e->kind, TRC_EV_SYNC);
        assert_int_equal(e->stream, 3);
        assert_int_equal(e->wait_stream, 4);
        assert_int_equal(e->until_event, i - 1);
        assert_int_equal(trc_reader_event(r, i - 1)->kind, TRC_EV_SYNC);
    }
    assert_int_equal(found, 1);
    found = 0;
    for (size_t i = 0; i < trc_reader_n_events(r); i++)
        if (trc_reader_event(r, i)->stream_nonblocking) {
            found++;
            assert_int_equal(trc_reader_event(r, i)->stream, 5);
        }
    assert_int_equal(found, 1);
    trc_reader_close(r);
}

/* The 2.6 file holds the generator's awaits (wave 1 of every workgroup). */
static void test_golden_awaits(void **state)
{
    (void)state;
    char err[512];
    trc_reader *r = open_golden();
    assert_int_equal(trc_reader_header(r)->format_major, 2);
    trc_wg *g = trc_reader_load_wg(r, 0, 0, err, sizeof err);
    if (!g) fail_msg("%s", err);
    assert_true(g->n_waves >= 2);
    const trc_wave *w = &g->waves[1];
    assert_int_equal(w->n_await, 1);
    assert_int_equal(w->await_len[0], 2);   /* one iteration of two instructions */
    assert_int_equal(w->await_at[0], 5 + 1 + 1); /* after the EXEC change of wave 1 */
    assert_int_equal(w->n_instr, 30 + 0 + 1 - 2); /* the dropped repeat is not counted */
    assert_int_equal(g->waves[0].n_await, 0);
    trc_wg_free(g);
    trc_reader_close(r);
}

/* Writes a small trace whose events follow kernel 0's end at once: with
 * hold, the background compressor is held from before kernel 0 until those
 * events are written, so kernel 0's frames and kernel-end chunk are not in
 * the file yet when they come (trc_writer_end_kernel does not wait for
 * them) and the events wait in the sequence behind them. *queued: how many
 * host chunks waited. 0 or -1 with err. */
static int write_async(const char *path, int bg, int hold, uint64_t *queued, char *err, size_t errlen)
{
    trc_header_info h;
    memset(&h, 0, sizeof h);
    snprintf(h.producer, sizeof h.producer, "trc-504-async");
    snprintf(h.isa_target, sizeof h.isa_target, "amdgcn-amd-amdhsa--gfx803");
    h.device_count = 2;
    trc_writer *w = trc_writer_open_ex(path, &h, bg, err, errlen);
    if (!w) return -1;
    uint8_t co[96], d[256];
    gen_bytes(co, sizeof co, 0xa5);
    memcpy(co, "\177ELF", 4);
    gen_bytes(d, sizeof d, 0xd7);
    int rc = trc_writer_code_object(w, co, sizeof co, 0x200000) != 0;
    rc |= gen_event(w, TRC_EV_ALLOC, 0, 0, 0x10000, 0, 0x10000, TRC_MEM_DEVICE, 0, 0, NULL);
    if (hold) trc_writer_test_hold(w, 1);
    rc |= gen_kernel(w, 0, 1, 5); /* returns at once: no earlier kernel end to wait for */
    rc |= gen_event(w, TRC_EV_SYNC, 0, 0, 0, 0, 0, 0, 0, 0, NULL);
    rc |= gen_event(w, TRC_EV_COPY, 0, 0, 0x7f1000, 0x10000, sizeof d, 0, TRC_COPY_D2H, 0, d);
    rc |= trc_writer_code_object(w, co, sizeof co - 9, 0x201000) != 1;
    *queued = trc_writer_test_queued(w);
    if (hold) trc_writer_test_hold(w, 0);
    rc |= gen_kernel(w, 1, 1, 5); /* its end waits for kernel 0's */
    rc |= gen_event(w, TRC_EV_COPY, 0, 0, 0x7f2000, 0x10000, 100, 0, TRC_COPY_D2H, 0, d + 3);
    rc |= gen_kernel(w, 2, 1, 5);
    if (rc || trc_writer_close(w) != 0) {
        snprintf(err, errlen, "%s", trc_writer_error(w));
        trc_writer_destroy(w);
        return -1;
    }
    trc_writer_destroy(w);
    return 0;
}

/* A kernel's end does not wait for its last frames: the events after it wait
 * in the sequence behind them, and the file is byte for byte the one a
 * writer without background compressors (every end in the file on return)
 * writes; it reads back whole. */
static void test_async_end(void **state)
{
    (void)state;
    char p0[600], p1[600], err[512];
    snprintf(p0, sizeof p0, "%s/trc504-%d-async0.gtrace", tmpdir, (int)getpid());
    snprintf(p1, sizeof p1, "%s/trc504-%d-async1.gtrace", tmpdir, (int)getpid());
    uint64_t q0 = 0, q1 = 0;
    if (write_async(p0, 0, 0, &q0, err, sizeof err) != 0) fail_msg("%s", err);
    if (write_async(p1, 1, 1, &q1, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(q0, 0); /* inline: kernel 0 was in the file when its end returned */
    assert_int_equal(q1, 3); /* the SYNC, the copy and the code object waited behind it */
    size_t n0, n1;
    uint8_t *b0 = slurp(p0, &n0), *b1 = slurp(p1, &n1);
    if (n0 != n1 || memcmp(b0, b1, n0) != 0)
        fail_msg("the trace written behind a held compressor differs from the inline writer's (%zu vs %zu bytes)",
                 n1, n0);
    free(b0);
    free(b1);
    trc_reader *r = trc_reader_open(p1, err, sizeof err);
    if (!r) fail_msg("%s", err);
    assert_int_equal(trc_reader_n_kernels(r), 3);
    assert_int_equal(trc_reader_n_code_objects(r), 2);
    assert_int_equal(trc_reader_n_events(r), 7); /* alloc, 3 launches, sync, 2 copies */
    for (uint32_t k = 0; k < 3; k++) {
        trc_wg *g = trc_reader_load_wg(r, k, 0, err, sizeof err);
        if (!g) fail_msg("kernel %u: %s", k, err);
        trc_wg_free(g);
    }
    trc_reader_close(r);
    unlink(p0);
    unlink(p1);
}

/* Same bytes for any commit order, committing thread count and compressor
 * mode. */
static void test_deterministic(void **state)
{
    (void)state;
    static const struct { uint32_t threads; uint64_t seed; int bg; } v[] = {
        {1, 0, 0}, {4, 7, 0}, {4, 9, 2}, {2, 3, 1}, {8, 11, 4}};
    char p0[600], p[600], err[512];
    snprintf(p0, sizeof p0, "%s/trc504-%d-0.gtrace", tmpdir, (int)getpid());
    snprintf(p, sizeof p, "%s/trc504-%d-v.gtrace", tmpdir, (int)getpid());
    for (size_t frames = 0; frames < 2; frames++) {
        size_t fr = frames ? 1024 : 1u << 20, fd = frames ? 4096 : 1u << 22;
        if (gen_trace(p0, 1, 0, fr, fd, 0, err, sizeof err) != 0) fail_msg("%s", err);
        size_t n0;
        uint8_t *b0 = slurp(p0, &n0);
        for (size_t i = 1; i < sizeof v / sizeof *v; i++) {
            if (gen_trace(p, v[i].threads, v[i].seed, fr, fd, v[i].bg, err, sizeof err) != 0) fail_msg("%s", err);
            size_t n1;
            uint8_t *b1 = slurp(p, &n1);
            if (n1 != n0 || memcmp(b0, b1, n0) != 0)
                fail_msg("trace differs with %u threads, seed %llu, %d compressors (frames %zu)",
                         v[i].threads, (unsigned long long)v[i].seed, v[i].bg, fr);
            free(b1);
        }
        free(b0);
    }
    unlink(p0);
    unlink(p);
}

int main(int argc, char **argv)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s", tmp ? tmp : "/tmp");
    if (argc == 3 && strcmp(argv[1], "--generate") == 0) {
        char p[1024], err[512];
        snprintf(p, sizeof p, "%s/%s", argv[2], GOLDEN_NAME);
        if (gen_trace(p, G_THREADS, G_SEED, G_FRAME_REC, G_FRAME_DATA, 1, err, sizeof err) != 0) {
            fprintf(stderr, "504-golden: %s\n", err);
            return 1;
        }
        size_t n;
        uint8_t *b = slurp(p, &n);
        printf("%s: %zu bytes\n#define GOLDEN_FILE_FNV 0x%016llxull\n#define GOLDEN_CONTENT  0x%016llxull\n", p,
               n, (unsigned long long)gen_fnv(0xcbf29ce484222325ull, b, n),
               (unsigned long long)content_of(p));
        free(b);
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_async_end),
        cmocka_unit_test(test_golden_1_0),
        cmocka_unit_test(test_golden_1_1),
        cmocka_unit_test(test_golden_1_2),
        cmocka_unit_test(test_golden_1_3),
        cmocka_unit_test(test_golden_1_4),
        cmocka_unit_test(test_golden_2_0),
        cmocka_unit_test(test_golden_2_1),
        cmocka_unit_test(test_golden_2_2),
        cmocka_unit_test(test_golden_2_3),
        cmocka_unit_test(test_golden_2_4),
        cmocka_unit_test(test_golden_2_5),
        cmocka_unit_test(test_golden_host_image),
        cmocka_unit_test(test_golden_hashed),
        cmocka_unit_test(test_golden_managed),
        cmocka_unit_test(test_golden_segments),
        cmocka_unit_test(test_golden_host_gap),
        cmocka_unit_test(test_golden_stream_wait),
        cmocka_unit_test(test_golden_awaits),
        cmocka_unit_test(test_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
