/*
 * trc_internal.h - private constants and helpers shared by the .gtrace writer
 * (trc_writer.c), reader (trc_reader.c) and tools/gcn3-trace.c.
 *
 * The byte layout described here is specified in docs/trace-format.md; keep
 * both in step. All multi-byte integers in the file framing are
 * little-endian; chunk payloads are zstd frames of protobuf messages
 * (traceformat/gtrace.proto).
 */
#ifndef TRC_INTERNAL_H
#define TRC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "traceformat/trc.h"

/* File header: magic[8], u32 major, u32 minor. */
#define TRC_FILE_MAGIC      "GTRACE\0\0"
#define TRC_FILE_HDR_SIZE   16u
/* Chunk header: u32 type, u32 flags (reserved, 0), u64 payload size. */
#define TRC_CHUNK_HDR_SIZE  16u
/* Trailer: u64 index chunk offset, u64 file size, magic[8]. */
#define TRC_TRAILER_MAGIC   "GTRCEND\0"
#define TRC_TRAILER_SIZE    24u

/* Header.magic inside the header message. */
#define TRC_HEADER_MAGIC_STR "gtrace"

enum trc_chunk_type {
    TRC_CHUNK_HEADER      = 1, /* gtrace.Header */
    TRC_CHUNK_CODE_OBJECT = 2, /* gtrace.CodeObject */
    TRC_CHUNK_EVENT       = 3, /* gtrace.Event */
    TRC_CHUNK_WORKGROUP   = 4, /* gtrace.Workgroup (no data values) */
    TRC_CHUNK_WG_DATA     = 5, /* gtrace.WorkgroupData */
    TRC_CHUNK_INDEX       = 6, /* gtrace.Index */
};

/* Atomic compare-and-swap: store_data holds two operands per lane (src then
 * cmp), so its length is 2 * popcount(exec) * bytes_per_lane.
 * PENDING in trc.h: the lead is asked to add this flag there; until then the
 * writer and reader accept bit 6 with this meaning. */
#ifndef TRC_MO_CMPSWAP
#define TRC_MO_CMPSWAP (1u << 6)
#endif
#define TRC_MO_KNOWN (TRC_MO_LOAD | TRC_MO_STORE | TRC_MO_ATOMIC | TRC_MO_LDS | \
                      TRC_MO_SMEM | TRC_MO_SCRATCH | TRC_MO_CMPSWAP)

/* Largest bytes_per_lane accepted (SMEM s_load_dwordx16 is 64 bytes total;
 * the largest VMEM access is 16 bytes per lane). A sanity bound so that
 * corrupt input cannot make lengths overflow. */
#define TRC_MAX_BYTES_PER_LANE 4096u

/* zstd level used for every chunk (3 = zstd default; good speed/ratio). */
#define TRC_ZSTD_LEVEL 3

static inline void trc_put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void trc_put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t trc_get_le32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
    return v;
}
static inline uint64_t trc_get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Bytes of load and store data a memory op carries, per TRC_MO_* rules
 * (n = active lanes). */
static inline uint64_t trc_mo_load_len(uint32_t flags, uint32_t n, uint32_t bpl)
{
    return (flags & (TRC_MO_LOAD | TRC_MO_ATOMIC)) ? (uint64_t)n * bpl : 0;
}
static inline uint64_t trc_mo_store_len(uint32_t flags, uint32_t n, uint32_t bpl)
{
    if (flags & TRC_MO_ATOMIC)
        return (uint64_t)n * bpl * ((flags & TRC_MO_CMPSWAP) ? 2u : 1u);
    return (flags & TRC_MO_STORE) ? (uint64_t)n * bpl : 0;
}

/* ---- Reader extensions used by tools/gcn3-trace (PENDING in trc.h) ------ */

typedef struct trc_kernel_stats {
    uint32_t launch_event;  /* index of the LAUNCH event */
    uint32_t n_wg;          /* workgroups recorded */
    uint64_t n_waves;
    uint64_t n_instr;       /* wavefront instructions */
    uint64_t n_mem;         /* memory ops */
    uint64_t wg_bytes;      /* compressed Workgroup chunks, chunk headers included */
    uint64_t data_bytes;    /* compressed WorkgroupData chunks, chunk headers included */
    int ended;
} trc_kernel_stats;

size_t trc_reader_n_kernels(const trc_reader *r);
int trc_reader_kernel_stats(const trc_reader *r, uint32_t kernel_id, trc_kernel_stats *st);
/* As trc_reader_load_wg; with_data = 0 skips the data chunk (mem ops then
 * have load_data = store_data = NULL), so a timing-only replay never
 * decompresses data values. */
trc_wg *trc_reader_load_wg_ex(trc_reader *r, uint32_t kernel_id, uint32_t i, int with_data,
                              char *err, size_t errlen);

#endif
