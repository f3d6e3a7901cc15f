/*
 * trc_format.h - the byte layout of a .gtrace file (docs/trace-format.md
 * Sec. 3) for programs that walk its chunks: the file header, chunk headers
 * and types, the trailer, little-endian helpers, the data-length rules of a
 * memory op, and one function that reads, checks and decompresses a chunk.
 * The writer, reader and salvage (traceformat/) and gcn3-trace and the fuzz
 * targets use these; the record messages themselves are gtrace.proto.
 */
#ifndef TRC_FORMAT_H
#define TRC_FORMAT_H

#include <stddef.h>
#include <stdint.h>

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
    TRC_CHUNK_WORKGROUP   = 4, /* record frame: length-prefixed gtrace.Workgroup messages */
    TRC_CHUNK_WG_DATA     = 5, /* data frame: length-prefixed gtrace.WorkgroupData messages */
    TRC_CHUNK_INDEX       = 6, /* gtrace.Index */
    TRC_CHUNK_KERNEL_END  = 7, /* gtrace.KernelIndex of one ended kernel */
    TRC_CHUNK_SEGMENT     = 8, /* 2.0 wave segment: one gtrace.Workgroup holding one wave's part */
    TRC_CHUNK_SEG_DATA    = 9, /* 2.0 its data: one gtrace.WorkgroupData holding that wave's part */
    TRC_CHUNK_WG_STORES   = 10, /* 2.4 store frame: a data frame's workgroups again, only their non-LDS store values */
};
#define TRC_CHUNK_MAX 10u

/* Largest bytes_per_lane accepted (SMEM s_load_dwordx16 is 64 bytes total;
 * the largest VMEM access is 16 bytes per lane). A sanity bound so that
 * corrupt input cannot make lengths overflow. */
#define TRC_MAX_BYTES_PER_LANE 4096u

#define TRC_MO_KNOWN (TRC_MO_LOAD | TRC_MO_STORE | TRC_MO_ATOMIC | TRC_MO_LDS | \
                      TRC_MO_SMEM | TRC_MO_SCRATCH | TRC_MO_CMPSWAP)


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

/* Reads the chunk at `off` (its header and payload must end at or before
 * `end`), of type `want` (0: any known type, returned in *type), checks the
 * framing rules of docs/trace-format.md Sec. 3 (reserved flags zero, exactly
 * one zstd frame with content size and checksum, no dictionary, ...) and
 * decompresses it into *out (malloc'd, *outlen bytes; caller frees).
 * *chunk_bytes (may be NULL) receives header + payload size. Returns 0, or
 * -1 with a one-line message naming path and offset in err. Thread-safe
 * (pread only). */
int trc_read_chunk_raw(int fd, const char *path, uint64_t off, uint64_t end, uint32_t want,
                       uint32_t *type, uint8_t **out, size_t *outlen, uint64_t *chunk_bytes,
                       char *err, size_t errlen);

/* Name of a chunk type ("record frame"), "unknown" for others; never NULL. */
const char *trc_chunk_type_name(uint32_t type);

/* The one chunk walker: every chunk header of a file is read through it.
 * Sequential walks (gcn3-trace's framing scan, salvage) start with it =
 * {fd, off = first chunk (TRC_FILE_HDR_SIZE), end = where chunks must stop};
 * the reader's random access through the index (trc_read_chunk_raw) starts
 * one at the indexed offset. Each call reads the next chunk header. */
typedef struct trc_chunk_iter {
    int fd;
    uint64_t off;  /* next chunk header (advanced past each chunk returned) */
    uint64_t end;  /* chunks must end at or before this byte */
} trc_chunk_iter;
typedef struct trc_chunk_info {
    uint64_t off;    /* its header's byte offset */
    uint32_t type;   /* TRC_CHUNK_* (not checked: unknown types are the caller's call) */
    uint32_t flags;  /* reserved, must be 0 (not checked here) */
    uint64_t size;   /* payload bytes after the 16-byte header */
    uint8_t head[32];  /* the first payload bytes (up to 32; enough for a zstd frame header) */
    uint32_t head_len;
} trc_chunk_info;
/* 1 with *c and it->off moved past the chunk; 0 when it->off == it->end (no
 * more chunks); -1 when the header or the payload runs past it->end or a read
 * fails, with a one-line message in err ("cut off inside the chunk header at
 * byte N (chunks end at byte E)", "cut off inside the chunk at byte N (P
 * payload bytes run past byte E)", "read error at byte N: ..."). */
int trc_chunk_next(trc_chunk_iter *it, trc_chunk_info *c, char *err, size_t errlen);

#endif
