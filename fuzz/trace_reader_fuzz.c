/*
 * trace_reader_fuzz.c - libFuzzer target for the .gtrace reader
 * (traceformat/trc_reader.c) and, when the library has it, trc_salvage().
 *
 * Each input is written to an in-memory file (memfd) and opened by path
 * through /proc/self/fd, exactly as a user's file would be. Then everything
 * the reader hands out is decoded and touched: header strings, every code
 * object's bytes, every event with its copy data and kernarg bytes, and every workgroup of every kernel with and
 * without data values, reading every byte of every array at the length the
 * reader claims (so ASan sees any lie). Bad input must only produce errors:
 * a crash, a sanitizer report, a leak, or one of the property checks below
 * failing (abort) is a finding.
 *
 * Properties checked:
 *  - every failing call leaves a NUL-terminated, non-empty one-line message;
 *  - salvage (when implemented) either fails with a message or writes a
 *    trace: of a cut or damaged input (st.complete = 0) one that the reader
 *    opens and whose every workgroup loads; of a complete input (copied as
 *    is) one that reads back exactly as well as the input did.
 *
 * Structure-aware mutation: every chunk payload carries a zstd content
 * checksum, so byte-level mutations almost never get past the frame check.
 * LLVMFuzzerCustomMutator below therefore also mutates *inside* a chunk:
 * it decompresses a random chunk, lets libFuzzer mutate the protobuf
 * content, recompresses it (with checksum), and rewrites the chunk offsets
 * held by later index and kernel-end chunks (and the trailer) so that the
 * file stays consistent apart from the mutation. Other rounds mutate the raw
 * bytes or cut the file at a random byte (what salvage must handle).
 *
 * Build: `make fuzz` (mk/fuzz.mk), run: tests/e2e/fuzz.sh or
 *   build/fuzz/trace_reader_fuzz -dict=fuzz/trace_reader.dict CORPUS_DIR
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zstd.h>

#include "traceformat/gtrace.pb-c.h"
#include "traceformat/trc.h"
#include "traceformat/trc_format.h"

#pragma weak trc_salvage

/* Work caps per input, so that a valid index naming millions of workgroups
 * does not turn one input into a timeout (each load is still exercised). */
#define MAX_WG_LOADS 512u

static volatile uint64_t sink; /* keeps the touching loops alive */

static void touch(const void *p, uint64_t n)
{
    const uint8_t *b = p;
    uint64_t s = 0;
    for (uint64_t i = 0; i < n; i++) s += b[i];
    sink += s;
}

static void check_msg(const char *err, size_t cap, const char *what)
{
    size_t n = strnlen(err, cap);
    if (n == 0 || n == cap || memchr(err, '\n', n)) {
        fprintf(stderr, "fuzz property failed: %s: error message empty, unterminated or multi-line: '%.*s'\n", what,
                (int)(n < cap ? n : cap - 1), err);
        abort();
    }
}

static void touch_wave(const trc_wave *w)
{
    touch(w->branch_taken, ((uint64_t)w->n_branch + 7) / 8);
    touch(w->indirect_target, (uint64_t)w->n_indirect * sizeof *w->indirect_target);
    touch(w->exec_at, (uint64_t)w->n_exec * sizeof *w->exec_at);
    touch(w->exec_val, (uint64_t)w->n_exec * sizeof *w->exec_val);
    touch(w->await_at, (uint64_t)w->n_await * sizeof *w->await_at);
    touch(w->await_len, (uint64_t)w->n_await * sizeof *w->await_len);
    touch(w->await_pc, (uint64_t)w->n_await * sizeof *w->await_pc);
    for (uint32_t a = 0; a < w->n_await; a++)
        if (w->await_len[a] == 0 || w->await_at[a] + w->await_len[a] > w->n_instr ||
            (a && w->await_at[a] < w->await_at[a - 1] + w->await_len[a - 1])) {
            fprintf(stderr, "fuzz property failed: the reader passed an await outside its wave or overlapping\n");
            abort();
        }
    for (uint32_t m = 0; m < w->n_mem; m++) {
        const trc_mem_op *o = &w->mem[m];
        uint32_t n = o->flags & TRC_MO_SMEM ? 1 : (uint32_t)__builtin_popcountll(o->exec);
        touch(o->addr, (uint64_t)n * sizeof *o->addr);
        if (o->load_data) touch(o->load_data, trc_mo_load_len(o->flags, n, o->bytes_per_lane));
        if (o->store_data) touch(o->store_data, trc_mo_store_len(o->flags, n, o->bytes_per_lane));
    }
}

/* Open path and exercise everything. Returns 0 if it opened and every
 * workgroup loaded, 1 if a workgroup was rejected, 2 if the open failed. */
static int exercise(const char *path)
{
    char err[512];
    trc_reader *r = trc_reader_open(path, err, sizeof err);
    if (!r) {
        check_msg(err, sizeof err, "trc_reader_open");
        return 2;
    }
    const trc_header_info *h = trc_reader_header(r);
    touch(h, sizeof *h);
    if (!memchr(h->producer, 0, sizeof h->producer) || !memchr(h->command_line, 0, sizeof h->command_line) ||
        !memchr(h->isa_target, 0, sizeof h->isa_target) || !memchr(h->producer_version, 0, sizeof h->producer_version)) {
        fprintf(stderr, "fuzz property failed: header string not NUL-terminated\n");
        abort();
    }
    for (size_t i = 0; i < trc_reader_n_code_objects(r); i++) {
        size_t len = 0;
        const uint8_t *elf = trc_reader_code_object(r, i, &len);
        if (!elf) continue;
        touch(elf, len);
    }
    for (size_t i = 0; i < trc_reader_n_events(r); i++) {
        const trc_event *e = trc_reader_event(r, i);
        if (!e) continue;
        if (e->kind == TRC_EV_COPY && e->data) touch(e->data, e->size);
        if (e->kind == TRC_EV_LAUNCH) {
            if (e->launch.kernarg) touch(e->launch.kernarg, e->launch.kernarg_size);
            if (!memchr(e->launch.kernel_name, 0, sizeof e->launch.kernel_name)) {
                fprintf(stderr, "fuzz property failed: kernel name not NUL-terminated\n");
                abort();
            }
        }
    }
    int bad = 0;
    uint32_t loads = 0;
    for (uint32_t k = 0; k < trc_reader_n_kernels(r); k++) {
        trc_kernel_stats st;
        if (trc_reader_kernel_stats(r, k, &st) != 0) {
            bad = 1;
            continue;
        }
        for (uint32_t i = 0; i < st.n_wg && loads < MAX_WG_LOADS; i++, loads++) {
            for (int with_data = 1; with_data >= 0; with_data--) {
                trc_wg *g = trc_reader_load_wg_ex(r, k, i, with_data, err, sizeof err);
                if (!g) {
                    check_msg(err, sizeof err, "trc_reader_load_wg");
                    bad = 1;
                    break;
                }
                for (uint32_t v = 0; v < g->n_waves; v++) touch_wave(&g->waves[v]);
                trc_wg_free(g);
            }
        }
    }
    /* Out-of-range requests must fail cleanly too. */
    trc_wg *g = trc_reader_load_wg(r, (uint32_t)trc_reader_n_kernels(r), 0, err, sizeof err);
    if (g) {
        fprintf(stderr, "fuzz property failed: loaded a workgroup of a kernel that does not exist\n");
        abort();
    }
    trc_reader_close(r);
    return bad;
}

static int in_fd = -1, out_fd = -1;
static char in_path[64], out_path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (in_fd < 0) {
        in_fd = memfd_create("gtrace-fuzz-in", 0);
        out_fd = memfd_create("gtrace-fuzz-out", 0);
        if (in_fd < 0 || out_fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(in_path, sizeof in_path, "/proc/self/fd/%d", in_fd);
        snprintf(out_path, sizeof out_path, "/proc/self/fd/%d", out_fd);
    }
    if (ftruncate(in_fd, 0) != 0) abort();
    for (size_t off = 0; off < size;) {
        ssize_t n = pwrite(in_fd, data + off, size - off, (off_t)off);
        if (n <= 0) abort();
        off += (size_t)n;
    }
    int in_rc = exercise(in_path);
    /* TRC_FUZZ_SALVAGE=off leaves salvage out; =lax runs it (sanitizers
     * still watch it) without checking that its output reads back, to fuzz
     * past a known salvage finding. Default: strict. */
    static int salvage_mode = -1; /* 0 off, 1 lax, 2 strict */
    if (salvage_mode < 0) {
        const char *m = getenv("TRC_FUZZ_SALVAGE");
        salvage_mode = !m ? 2 : !strcmp(m, "off") ? 0 : !strcmp(m, "lax") ? 1 : 2;
    }
    if (trc_salvage && salvage_mode) {
        char err[512];
        trc_salvage_stats st;
        if (ftruncate(out_fd, 0) != 0) abort();
        if (trc_salvage(in_path, out_path, &st, err, sizeof err) != 0) {
            check_msg(err, sizeof err, "trc_salvage");
        } else {
            int out_rc = exercise(out_path);
            if (salvage_mode == 2 && (st.complete ? out_rc != in_rc : out_rc != 0)) {
                fprintf(stderr, "fuzz property failed: trc_salvage succeeded (complete=%d) but its output %s "
                                "(input: %d)\n",
                        st.complete, out_rc == 2 ? "does not open" : "has a workgroup that does not load", in_rc);
                abort();
            }
        }
    }
    return 0;
}

/* ---- structure-aware mutator ------------------------------------------- */

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

#ifndef TRC_CHUNK_MAX
#define TRC_CHUNK_MAX 6u
#endif
#define MUT_MAX_CHUNKS 4096
#define MUT_MAX_RAW (4u << 20)

typedef struct mchunk {
    uint64_t off, end; /* [off, end): header + payload in the input */
    uint32_t type;
} mchunk;

static uint64_t rng_next(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ull;
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Chunks of a well-framed file; 0 if the framing does not parse. */
static size_t parse_chunks(const uint8_t *d, size_t n, mchunk *c, size_t cap)
{
    if (n < TRC_FILE_HDR_SIZE + TRC_TRAILER_SIZE || memcmp(d + n - 8, TRC_TRAILER_MAGIC, 8)) return 0;
    uint64_t index_off = trc_get_le64(d + n - TRC_TRAILER_SIZE), end = n - TRC_TRAILER_SIZE;
    size_t k = 0;
    for (uint64_t off = TRC_FILE_HDR_SIZE; off < end && k < cap;) {
        if (end - off < TRC_CHUNK_HDR_SIZE) return 0;
        uint64_t sz = trc_get_le64(d + off + 8);
        if (sz > end - off - TRC_CHUNK_HDR_SIZE) return 0;
        c[k++] = (mchunk){off, off + TRC_CHUNK_HDR_SIZE + sz, trc_get_le32(d + off)};
        if (off == index_off) return k;
        off += TRC_CHUNK_HDR_SIZE + sz;
    }
    return 0;
}

static uint8_t *decompress(const uint8_t *p, size_t n, size_t *len, size_t extra)
{
    unsigned long long cs = ZSTD_getFrameContentSize(p, n);
    if (cs == ZSTD_CONTENTSIZE_ERROR || cs == ZSTD_CONTENTSIZE_UNKNOWN || cs > MUT_MAX_RAW) return NULL;
    uint8_t *out = malloc((size_t)cs + extra + 1);
    if (!out) return NULL;
    size_t got = ZSTD_decompress(out, (size_t)cs + 1, p, n);
    if (ZSTD_isError(got) || got != cs) {
        free(out);
        return NULL;
    }
    *len = got;
    return out;
}

/* One zstd frame with content size and checksum, as the writer makes. */
static uint8_t *compress(const uint8_t *p, size_t n, size_t *len)
{
    size_t cap = ZSTD_compressBound(n);
    uint8_t *out = malloc(cap);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    size_t r = 1;
    if (out && cc) {
        ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1);
        ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
        ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 1);
        r = ZSTD_compress2(cc, out, cap, p, n);
    }
    ZSTD_freeCCtx(cc);
    if (!out || ZSTD_isError(r)) {
        free(out);
        return NULL;
    }
    *len = r;
    return out;
}

/* Offset in the output of input offset o: exact for chunk starts, else
 * shifted like the chunk it falls into (so corrupt offsets stay corrupt). */
static uint64_t remap(const mchunk *c, const uint64_t *newoff, size_t k, uint64_t o)
{
    if (o < TRC_FILE_HDR_SIZE) return o;
    size_t lo = 0, hi = k;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (c[mid].off <= o) lo = mid;
        else hi = mid;
    }
    if (c[lo].off > o) return o;
    return newoff[lo] + (o - c[lo].off);
}

static void remap_kernel(Gtrace__KernelIndex *ki, const mchunk *c, const uint64_t *no, size_t k)
{
    for (size_t i = 0; i < ki->n_frame_offset; i++) ki->frame_offset[i] = remap(c, no, k, ki->frame_offset[i]);
    for (size_t i = 0; i < ki->n_data_frame_offset; i++)
        ki->data_frame_offset[i] = remap(c, no, k, ki->data_frame_offset[i]);
}

/* New content of an index / kernel-end chunk with remapped offsets, or NULL
 * (then the chunk is copied unchanged). */
static uint8_t *remap_chunk(uint32_t type, const uint8_t *raw, size_t n, const mchunk *c, const uint64_t *no,
                            size_t k, size_t *len)
{
    uint8_t *out = NULL;
    if (type == TRC_CHUNK_INDEX) {
        Gtrace__Index *ix = gtrace__index__unpack(NULL, n, raw);
        if (!ix) return NULL;
        ix->header_offset = remap(c, no, k, ix->header_offset);
        for (size_t i = 0; i < ix->n_code_object_offset; i++)
            ix->code_object_offset[i] = remap(c, no, k, ix->code_object_offset[i]);
        for (size_t i = 0; i < ix->n_event_offset; i++) ix->event_offset[i] = remap(c, no, k, ix->event_offset[i]);
        for (size_t i = 0; i < ix->n_kernels; i++) remap_kernel(ix->kernels[i], c, no, k);
        *len = gtrace__index__get_packed_size(ix);
        if ((out = malloc(*len + 1))) gtrace__index__pack(ix, out);
        gtrace__index__free_unpacked(ix, NULL);
    } else {
        Gtrace__KernelIndex *ki = gtrace__kernel_index__unpack(NULL, n, raw);
        if (!ki) return NULL;
        remap_kernel(ki, c, no, k);
        *len = gtrace__kernel_index__get_packed_size(ki);
        if ((out = malloc(*len + 1))) gtrace__kernel_index__pack(ki, out);
        gtrace__kernel_index__free_unpacked(ki, NULL);
    }
    return out;
}

static int put(uint8_t *dst, size_t cap, size_t *o, const void *src, size_t n)
{
    if (n > cap - *o) return -1;
    memcpy(dst + *o, src, n);
    *o += n;
    return 0;
}

static size_t mutate_chunk(uint8_t *data, size_t size, size_t max_size, uint64_t *rs)
{
    static mchunk c[MUT_MAX_CHUNKS];
    static uint64_t newoff[MUT_MAX_CHUNKS];
    size_t k = parse_chunks(data, size, c, MUT_MAX_CHUNKS);
    if (!k) return 0;
    size_t pick = (size_t)(rng_next(rs) % k);
    size_t rawlen = 0;
    uint8_t *raw = decompress(data + c[pick].off + TRC_CHUNK_HDR_SIZE, c[pick].end - c[pick].off - TRC_CHUNK_HDR_SIZE,
                              &rawlen, rawlen + 4096);
    if (!raw) return 0;
    size_t cap = rawlen + 4096;
    uint8_t *grown = realloc(raw, cap);
    if (!grown) {
        free(raw);
        return 0;
    }
    raw = grown;
    size_t mlen = LLVMFuzzerMutate(raw, rawlen, cap);
    size_t plen = 0;
    uint8_t *payload = compress(raw, mlen, &plen);
    free(raw);
    if (!payload) return 0;
    uint8_t *out = malloc(max_size);
    if (!out) {
        free(payload);
        return 0;
    }
    size_t o = 0;
    int bad = put(out, max_size, &o, data, TRC_FILE_HDR_SIZE);
    uint64_t index_new = 0;
    for (size_t i = 0; i < k && !bad; i++) {
        newoff[i] = o;
        uint8_t hdr[TRC_CHUNK_HDR_SIZE];
        memcpy(hdr, data + c[i].off, TRC_CHUNK_HDR_SIZE);
        const uint8_t *src = data + c[i].off + TRC_CHUNK_HDR_SIZE;
        size_t slen = c[i].end - c[i].off - TRC_CHUNK_HDR_SIZE;
        uint8_t *fresh = NULL;
        if (i == pick) {
            src = payload, slen = plen;
        } else if (i > pick && (c[i].type == TRC_CHUNK_INDEX || c[i].type == TRC_CHUNK_MAX)) {
            size_t rl = 0, nl = 0;
            uint8_t *r = decompress(src, slen, &rl, 0);
            uint8_t *m = r ? remap_chunk(c[i].type, r, rl, c, newoff, i, &nl) : NULL;
            free(r);
            if (m) {
                fresh = compress(m, nl, &slen);
                free(m);
                if (fresh) src = fresh;
                else slen = c[i].end - c[i].off - TRC_CHUNK_HDR_SIZE;
            }
        }
        if (c[i].type == TRC_CHUNK_INDEX) index_new = o;
        trc_put_le64(hdr + 8, slen);
        bad = put(out, max_size, &o, hdr, sizeof hdr) || put(out, max_size, &o, src, slen);
        free(fresh);
    }
    free(payload);
    uint8_t tr[TRC_TRAILER_SIZE];
    trc_put_le64(tr, index_new);
    trc_put_le64(tr + 8, (uint64_t)o + TRC_TRAILER_SIZE);
    memcpy(tr + 16, TRC_TRAILER_MAGIC, 8);
    if (bad || put(out, max_size, &o, tr, sizeof tr)) {
        free(out);
        return 0;
    }
    memcpy(data, out, o);
    free(out);
    return o;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    uint64_t rs = seed;
    unsigned what = (unsigned)(rng_next(&rs) % 8);
    if (what < 4) {
        size_t n = mutate_chunk(data, size, max_size, &rs);
        if (n) return n;
    } else if (what == 4 && size > 1) {
        return 1 + (size_t)(rng_next(&rs) % (size - 1)); /* cut off, as a killed emulator leaves it */
    }
    return LLVMFuzzerMutate(data, size, max_size);
}
