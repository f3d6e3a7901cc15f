/*
 * trc_internal.h - private constants and helpers shared by the .gtrace writer
 * (trc_writer.c), reader (trc_reader.c), salvage (trc_salvage.c) and
 * tools/gcn3-trace.c.
 *
 * The byte layout described here is specified in docs/trace-format.md; keep
 * both in step. All multi-byte integers in the file framing are
 * little-endian; chunk payloads are zstd frames of protobuf messages
 * (traceformat/gtrace.proto).
 */
#ifndef TRC_INTERNAL_H
#define TRC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "traceformat/trc.h"
#include "traceformat/trc_format.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Workgroups are grouped into frames of consecutive workgroups (grid order):
 * a frame is sealed once its encoded records reach TRC_FRAME_REC_BYTES or
 * its encoded data values reach TRC_FRAME_DATA_BYTES (measured by an upper
 * bound computed from the recorded content alone, so frame boundaries do not
 * depend on timing or thread count), and at the kernel's end. 128 KiB makes
 * zstd's fixed per-frame cost (context reset, entropy tables, ~10-20 us)
 * negligible against the ~1 ms it takes to compress a frame, while a reader
 * decoding one workgroup decompresses at most ~1 MiB of data values. */
#define TRC_FRAME_REC_BYTES  (128u * 1024u)
#define TRC_FRAME_DATA_BYTES (1024u * 1024u)
/* Largest decompressed frame or single message a reader accepts (a sanity
 * bound against corrupt sizes; a writer never produces more than one
 * workgroup's encoding beyond the thresholds above). */
#define TRC_MAX_FRAME_BYTES  (1ull << 32)

/* Minor format version this writer produces (the reader reads every 1.x). */
#define TRC_WRITE_FORMAT_MINOR ((uint32_t)TRC_FORMAT_MINOR)

/* zstd levels. Header, code-object, kernel-end, index and data-less event
 * chunks are few: level 3 (zstd default). Record and data frames (~128 KiB
 * to 1 MiB each, so zstd's per-frame setup is amortised) and copy payloads:
 * level 1. Measured on shuffled data frames of benchmarks/vectoradd (zstd
 * 1.5.4 CLI, 1 MiB blocks): level 1 x15.5 at 1.0 GB/s, level 3 x16.4 at
 * 0.88 GB/s, --fast=1..5 x14.7..x12.2 at the same ~1 GB/s; so negative
 * levels buy nothing here. */
#define TRC_ZSTD_LEVEL      3
#define TRC_ZSTD_LEVEL_REC  1
#define TRC_ZSTD_LEVEL_DATA 1

/* Data frames of values with few repeats (float data, sort keys, the
 * hashes of --load-values hash) give level 1's match search little to
 * find; zstd's negative levels skip most of it. The first
 * TRC_ZSTD_PROBE_BYTES of a data frame of at least 4 times that are
 * compressed at TRC_ZSTD_LEVEL_DATA and at TRC_ZSTD_LEVEL_DATA_FAST; when the
 * fast one is at most TRC_ZSTD_FAST_LOSS percent larger, the frame takes the
 * fast level. The choice depends on the frame's bytes only (the same
 * content always gives the same file). Measured (zstd 1.5.4 CLI, 2026-12-02,
 * 20 data frames of benchmarks/gd, 20 MB): level 1 x1.847 at 385 MB/s,
 * --fast=1 x1.793 at 581 MB/s, --fast=3 x1.759 at 954 MB/s; km's data frames
 * (repeated LDS values) lose 17% at -1 and keep level 1. The 6% bound is an
 * estimate between them. */
/* 2.4 store frames (docs/trace-format.md Sec. 1.6): a group of workgroups
 * gets one beside its data frame when the values of its stores outside the
 * LDS take at most 1 / TRC_STORE_FRAME_SHARE of the data frame's bytes, raw
 * and compressed (so the copy costs at most an eighth more data, and a
 * fast-forward reading it instead of the data frame decompresses at most an
 * eighth of it); km's
 * km_partial: 59 MB of data per launch (LDS values, loads) for 0.5 MB of
 * stores. A model choice: with a quarter, transpose (a load, an LDS store
 * and load, a store: a quarter) got them, its trace 4.46 -> 5.60 MB and its
 * recording 4% slower; vectoradd (a third) gets none either way. */
#define TRC_STORE_FRAME_SHARE 8
#define TRC_ZSTD_LEVEL_DATA_FAST (-3)
#define TRC_ZSTD_PROBE_BYTES     32768
#define TRC_ZSTD_FAST_LOSS       6

/* Byte-plane shuffle of a data stream seen as 4-byte words (most GPU data is
 * dwords; wider accesses are dword-structured): with w = n / 4, output byte
 * b*w + i is input byte 4*i + b (b = 0..3, i < w); the n % 4 tail bytes
 * follow verbatim. Grouping the bytes of equal significance (float exponents,
 * high bytes of small integers) makes zstd both faster and 2x smaller on
 * typical data. trc_unshuf4 is the exact inverse. */
static inline void trc_shuf4(uint8_t *restrict dst, const uint8_t *restrict src, size_t n)
{
    if (!n) return;
    size_t w = n / 4, i = 0;
    uint8_t *d0 = dst, *d1 = dst + w, *d2 = dst + 2 * w, *d3 = dst + 3 * w;
#ifdef __SSE2__
    /* 16 words at a time: a 16x4 byte transpose in three rounds of byte
     * interleaves and one of 64-bit interleaves (x86-64 baseline). */
    for (; i + 16 <= w; i += 16) {
        const uint8_t *s = src + 4 * i;
        __m128i v0 = _mm_loadu_si128((const __m128i *)s);
        __m128i v1 = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i v2 = _mm_loadu_si128((const __m128i *)(s + 32));
        __m128i v3 = _mm_loadu_si128((const __m128i *)(s + 48));
        __m128i x0 = _mm_unpacklo_epi8(v0, v1), x1 = _mm_unpackhi_epi8(v0, v1);
        __m128i x2 = _mm_unpacklo_epi8(v2, v3), x3 = _mm_unpackhi_epi8(v2, v3);
        __m128i y0 = _mm_unpacklo_epi8(x0, x1), y1 = _mm_unpackhi_epi8(x0, x1);
        __m128i y2 = _mm_unpacklo_epi8(x2, x3), y3 = _mm_unpackhi_epi8(x2, x3);
        __m128i z0 = _mm_unpacklo_epi8(y0, y1), z1 = _mm_unpackhi_epi8(y0, y1);
        __m128i z2 = _mm_unpacklo_epi8(y2, y3), z3 = _mm_unpackhi_epi8(y2, y3);
        _mm_storeu_si128((__m128i *)(d0 + i), _mm_unpacklo_epi64(z0, z2));
        _mm_storeu_si128((__m128i *)(d1 + i), _mm_unpackhi_epi64(z0, z2));
        _mm_storeu_si128((__m128i *)(d2 + i), _mm_unpacklo_epi64(z1, z3));
        _mm_storeu_si128((__m128i *)(d3 + i), _mm_unpackhi_epi64(z1, z3));
    }
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; i < w; i++) { /* one 32-bit load per word */
        uint32_t x;
        memcpy(&x, src + 4 * i, 4);
        d0[i] = (uint8_t)x;
        d1[i] = (uint8_t)(x >> 8);
        d2[i] = (uint8_t)(x >> 16);
        d3[i] = (uint8_t)(x >> 24);
    }
#else
    for (; i < w; i++) {
        d0[i] = src[4 * i];
        d1[i] = src[4 * i + 1];
        d2[i] = src[4 * i + 2];
        d3[i] = src[4 * i + 3];
    }
#endif
    memcpy(dst + 4 * w, src + 4 * w, n - 4 * w);
}
static inline void trc_unshuf4(uint8_t *restrict dst, const uint8_t *restrict src, size_t n)
{
    if (!n) return;
    size_t w = n / 4, i = 0;
    const uint8_t *s0 = src, *s1 = src + w, *s2 = src + 2 * w, *s3 = src + 3 * w;
#ifdef __SSE2__
    for (; i + 16 <= w; i += 16) {
        __m128i p0 = _mm_loadu_si128((const __m128i *)(s0 + i));
        __m128i p1 = _mm_loadu_si128((const __m128i *)(s1 + i));
        __m128i p2 = _mm_loadu_si128((const __m128i *)(s2 + i));
        __m128i p3 = _mm_loadu_si128((const __m128i *)(s3 + i));
        __m128i u0 = _mm_unpacklo_epi8(p0, p1), u1 = _mm_unpackhi_epi8(p0, p1);
        __m128i u2 = _mm_unpacklo_epi8(p2, p3), u3 = _mm_unpackhi_epi8(p2, p3);
        uint8_t *d = dst + 4 * i;
        _mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi16(u0, u2));
        _mm_storeu_si128((__m128i *)(d + 16), _mm_unpackhi_epi16(u0, u2));
        _mm_storeu_si128((__m128i *)(d + 32), _mm_unpacklo_epi16(u1, u3));
        _mm_storeu_si128((__m128i *)(d + 48), _mm_unpackhi_epi16(u1, u3));
    }
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; i < w; i++) {
        uint32_t x = (uint32_t)s0[i] | (uint32_t)s1[i] << 8 | (uint32_t)s2[i] << 16 |
                     (uint32_t)s3[i] << 24;
        memcpy(dst + 4 * i, &x, 4);
    }
#else
    for (; i < w; i++) {
        dst[4 * i] = s0[i];
        dst[4 * i + 1] = s1[i];
        dst[4 * i + 2] = s2[i];
        dst[4 * i + 3] = s3[i];
    }
#endif
    memcpy(dst + 4 * w, src + 4 * w, n - 4 * w);
}

/* The consistency rules of one host-timeline event message (kinds in range,
 * data only on copies and exactly `size` bytes, a launch record exactly on
 * launches, 3-D grid/workgroup sizes): NULL when it is valid, else what is
 * wrong (a fixed string). Shared by trc_reader_open and trc_salvage, so that
 * salvage never keeps an event the reader would refuse. */
/* trc_writer_open with an explicit number of background compressor threads
 * (0 = compress in the committing threads; < 0 = one per spare CPU, the
 * default; at most 4). For tests and benchmarks of both paths. */
trc_writer *trc_writer_open_ex(const char *path, const trc_header_info *h, int bg_threads, char *err,
                               size_t errlen);

/* Frame sealing thresholds (bytes of encoded records / data values; default
 * TRC_FRAME_REC_BYTES / TRC_FRAME_DATA_BYTES). Tests use small values to get
 * many frames from little data. Call before the first commit. */
void trc_writer_set_frame_limits(trc_writer *w, size_t rec_bytes, size_t data_bytes);
/* Wave-segment thresholds (format 2.0: raw bytes of a wave's records / data
 * values before trc_wg_rec_stream'ed recorders spill them; default
 * TRC_SEG_REC_BYTES / TRC_SEG_DATA_BYTES, trc_writer_internal.h). Tests use
 * small values. Call before the first recorder is bound with
 * trc_wg_rec_stream. */
void trc_writer_set_segment_limits(trc_writer *w, size_t rec_bytes, size_t data_bytes);

struct Gtrace__Event;
const char *trc_event_problem(const struct Gtrace__Event *m);

/* trc_fastpb.c: a Workgroup / WorkgroupData message decoded from p[0..n)
 * into the protobuf-c structures, in one allocation (release with free(),
 * not protobuf_c_message_free_unpacked), when it is in the writer's encoding
 * (each field once, repeated scalars packed, no unknown field); else NULL,
 * and the caller decodes it with protobuf-c. WorkgroupData's bytes fields
 * point into p, which must outlive the message. */
struct Gtrace__Workgroup;
struct Gtrace__WorkgroupData;
struct Gtrace__Workgroup *trc_fast_workgroup(const uint8_t *p, size_t n);
struct Gtrace__WorkgroupData *trc_fast_workgroup_data(const uint8_t *p, size_t n);
/* As trc_fast_workgroup, but each wave's per-lane address deltas
 * (Wave.addr_delta, docs/trace-format.md 3.4) stay varints inside p (which
 * must then outlive the message), checked and counted (n_addr_delta) but not
 * decoded: addr_delta is NULL where n_addr_delta is not 0, and
 * trc_fast_wave_delta gives the varints, which trc_fast_deltas_fill decodes
 * into addresses and trc_fast_deltas_skip steps over (a fast-forward needs
 * no LDS addresses; km at 131,072 points: most of its decoding was these). */
struct Gtrace__Workgroup *trc_fast_workgroup_lazy(const uint8_t *p, size_t n);
struct Gtrace__Wave;
/* A wave of trc_fast_workgroup_lazy with deltas: true and their varints
 * [*p, *end); false for every other wave (none, or decoded). */
bool trc_fast_wave_delta(const struct Gtrace__Wave *w, const uint8_t **p, const uint8_t **end);
/* addr[k] = addr[k - 1] + delta k for k = 1..cnt, the deltas read from q
 * (checked varints, at least cnt before end); returns the byte after them. */
const uint8_t *trc_fast_deltas_fill(uint64_t *addr, uint32_t cnt, const uint8_t *q, const uint8_t *end);
/* The byte after the next cnt checked varints at q. */
const uint8_t *trc_fast_deltas_skip(uint32_t cnt, const uint8_t *q, const uint8_t *end);
/* Whether the reader tries trc_fast_* first (1, the default); 0 makes it
 * decode with protobuf-c only (tests compare the two). */
extern int trc_fast_decode;

#endif
