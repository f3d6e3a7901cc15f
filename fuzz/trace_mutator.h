/*
 * trace_mutator.h - the structure-aware libFuzzer mutator of .gtrace inputs,
 * shared by the fuzz targets (trace_reader_fuzz.c, replay_fuzz.c): most rounds
 * decompress one chunk, mutate its protobuf content, recompress it with a
 * valid checksum and fix up the offsets in later index / kernel-end chunks
 * and the trailer; other rounds mutate raw bytes or cut the file at a random
 * byte. Include once per target (it defines LLVMFuzzerCustomMutator).
 */
#ifndef FUZZ_TRACE_MUTATOR_H
#define FUZZ_TRACE_MUTATOR_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "traceformat/gtrace.pb-c.h"
#include "traceformat/trc.h"
#include "traceformat/trc_format.h"

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
    for (size_t i = 0; i < ki->n_seg_offset; i++) ki->seg_offset[i] = remap(c, no, k, ki->seg_offset[i]);
    for (size_t i = 0; i < ki->n_seg_data_offset; i++)
        ki->seg_data_offset[i] = remap(c, no, k, ki->seg_data_offset[i]);
    for (size_t i = 0; i < ki->n_store_frame_offset; i++) /* 2.4; 0 = none stays 0 */
        if (ki->store_frame_offset[i]) ki->store_frame_offset[i] = remap(c, no, k, ki->store_frame_offset[i]);
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
        } else if (i > pick && (c[i].type == TRC_CHUNK_INDEX || c[i].type == TRC_CHUNK_KERNEL_END)) {
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

#endif
