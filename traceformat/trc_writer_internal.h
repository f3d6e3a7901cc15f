/*
 * trc_writer_internal.h - what the three parts of the .gtrace writer share
 * (private to traceformat/): trc_rec.c records a workgroup into a trc_wg_rec
 * (per-wave column vectors), trc_encode.c encodes a recorded workgroup into a
 * `piece` (hand-written proto3 encoder) and a batch of pieces into one record
 * frame and one data frame, trc_writer.c frames chunks into the file and runs
 * the commit / reorder / compress pipeline (see its top comment).
 */
#ifndef TRC_WRITER_INTERNAL_H
#define TRC_WRITER_INTERNAL_H

#include <stdint.h>
#include <stdlib.h>

#include <zstd.h>

#include "traceformat/trc_internal.h"

/* ---- growable arrays ------------------------------------------------------ */

/* Grows *p (elements of `elem` bytes, capacity *cap) to hold `need`; doubles
 * so appends are amortised O(1). Returns 0 or -1 (out of memory). */
static inline int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > SIZE_MAX / 2 / elem) return -1;
        nc *= 2;
    }
    void *np = realloc(*p, nc * elem);
    if (!np) return -1;
    *p = np;
    *cap = nc;
    return 0;
}

#define VEC(T) struct { T *p; size_t n, cap; }
typedef VEC(uint64_t) u64v;
typedef VEC(int64_t) i64v;
typedef VEC(uint32_t) u32v;
typedef VEC(uint8_t) u8v;
typedef struct wave_rec {
    uint64_t n_instr;
    int ended;
    uint32_t n_branch;
    u8v branch;
    u64v indirect;
    u64v exec_at_delta, exec_val;
    uint64_t last_exec_at;
    u32v mflags, mbytes, akind;
    u64v mexec;
    i64v abase, astride, adelta;
    uint64_t last_base;
    u32v load_len, store_len;
    u8v load, store;
    u64v lhash;               /* 2.2 hashed loads (trc_hash_loads): empty or one per op */
    /* 1.2 awaits (trc_rec_await_*): entries as encoded (at as delta from the
     * previous await's at), the await being captured, and the instructions
     * dropped so far (subtracted from later dynamic indices) */
    u64v await_at_delta, await_len, await_pc;
    u32v await_kind;
    uint64_t retry_dyn;       /* record index of the retry mark (retry_mark: column lengths there) */
    int retry_set;
    uint64_t last_await_at, dyn_dropped;
    int await_state;          /* 0 none, 1 a loop head marked (a template may start there), 2 dropping repeats */
    uint64_t await_dyn;       /* record index of the template start (1) or end (2) */
    uint64_t await_head;      /* pc of the loop head */
    struct trc_rec_mark {     /* column lengths at the template start (1) or end (2) */
        uint32_t n_branch;
        size_t branch, indirect, exec_at_delta, mem, astride, adelta, load, store;
        uint64_t last_exec_at, last_base;
    } await_mark, retry_mark;
    /* 2.0 segments: parts of this wave already spilled (trc_rec_segment) */
    uint32_t n_seg;
    uint64_t mem_spilled;     /* memory ops in them */
} wave_rec;

/* A wave segment spilled by the recorder (trc_rec.c) and waiting, in the
 * writer's spill file, for its workgroup's turn in the file. */
typedef struct seg_ref {
    uint32_t wave;
    uint32_t zr_len, zd_len;  /* compressed record / data chunk payloads */
    uint64_t spill_off;       /* record payload, then data payload */
} seg_ref;
typedef VEC(seg_ref) segv;


/* One committed workgroup, encoded by the committing thread: its
 * length-prefixed Workgroup and WorkgroupData messages, exactly as they go
 * into the frames. Pieces are recycled with their grown buffers. */
typedef struct piece {
    u8v erec, edat;          /* varint length + message */
    uint32_t rec_moff, dat_moff; /* where the message starts (after the prefix) */
    /* 2.4 store frame: its WorkgroupData again with only the values of its
     * stores outside the LDS (length-prefixed), when sto_ok (no wave of it in
     * segments); sto_bytes: those values' bytes */
    u8v esto;
    uint32_t sto_moff;
    int sto_ok;
    uint64_t sto_bytes;
    uint32_t n_waves, kernel_id, wg_id[3];
    uint64_t lin;            /* linear id in the grid: x + gx * (y + gy * z) */
    uint64_t n_instr, n_mem;
    segv segs;               /* 2.0: its waves' spilled segments, by wave, in order */
    struct piece *next;
} piece;

/* What the encoders read: a recorded workgroup. */
typedef struct wgview {
    const wave_rec *w;
    uint32_t n_waves, kernel_id;
    const uint32_t *wg_id;
    uint32_t wave0;          /* wave_in_wg of w[0] */
    int segment;             /* a wave segment: n_instr and n_segments are 0 */
} wgview;

/* Consecutive workgroups of one kernel that become one record frame and one
 * data frame. */
/* proto3 wire format: a varint, and a field's tag (wire type wt), at q;
 * return the end (trc_encode.c's encoder, the writer's copy events). */
static inline uint8_t *put_varint(uint8_t *q, uint64_t v)
{
    while (v >= 0x80) {
        *q++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *q++ = (uint8_t)v;
    return q;
}
static inline uint8_t *put_tag(uint8_t *q, uint32_t field, uint32_t wt)
{
    return put_varint(q, (uint64_t)field << 3 | wt);
}

/* What a sequenced item of the writer's append stream holds (batch.kind). */
enum { TRC_BATCH_FRAMES = 0, /* a group of workgroups: one record frame and one data frame */
       TRC_BATCH_CHUNK,      /* a host chunk (event, code object), compressed already: in zr */
       TRC_BATCH_END };      /* kernel kernel_id's kernel-end chunk, built when its turn comes */

typedef struct batch {
    int kind;                /* TRC_BATCH_* */
    uint32_t chunk_type;     /* TRC_BATCH_CHUNK: its chunk type */
    u64v *offv;              /* TRC_BATCH_CHUNK: where its offset goes (offv->p[off_idx]) */
    size_t off_idx;
    uint32_t kernel_id;
    uint64_t seq;            /* append order, from 1 */
    piece *head, *tail;
    uint32_t n;
    size_t est_rec, est_dat; /* encoded bytes of its pieces */
    int failed;
    uint64_t raw_rec, raw_dat; /* decompressed frame sizes */
    u8v zr, zd;              /* compressed frames */
    u8v zp;                  /* data frame level probe (trc_encode.c data_level): its input, then output */
    u32v roff, rlen, doff, dlen; /* per workgroup: message offsets/lengths */
    /* 2.4: its store frame (has_sto: written; trc_encode_batch decides) */
    int has_sto;
    uint64_t raw_sto;
    u8v zs;
    u32v soff, slen;
    struct batch *next;
} batch;

/* A workgroup being recorded (trc_rec.c). */
struct trc_wg_rec {
    uint32_t kernel_id, wg_id[3], n_waves;
    wave_rec *w;
    uint32_t cap_waves;
    int bad;
    char bad_msg[160];
    ZSTD_CCtx *cctx, *cctx_data; /* inline compression (no background threads), segments */
    struct piece *spare;          /* encoding target of the next commit */
    /* 2.0 segments of long waves (trc_wg_rec_stream): spilled to w as they fill */
    trc_writer *wr;
    size_t seg_rec_lim, seg_dat_lim;
    int no_scratch_data;          /* trc_wg_rec_scratch_data(g, 0) */
    int no_lds_data;              /* trc_wg_rec_lds_data(g, 0) */
    int hash_loads;               /* trc_wg_rec_hash_loads(g, 1): mflags carry TRC_REC_KEEP_VALUES */
    const struct trc_himg *himg;  /* 2.6 trc_wg_rec_host_image: the writer's host image, or NULL */
    segv segs;                    /* spilled so far, in spill order */
    u8v se_rec, se_dat, sz_rec, sz_dat; /* segment encoding / compression scratch */
};

/* Raw bytes a wave's record / data columns may hold before the recorder
 * spills them as a segment (TRC_SEG_*_BYTES by default; the writer's
 * trc_writer_set_segment_limits). Counted from the column lengths, so where
 * a wave is cut depends on its content alone. */
#define TRC_SEG_REC_BYTES  (256u * 1024u)
#define TRC_SEG_DATA_BYTES (1024u * 1024u)
/* trc_writer.c: the limits, and the spill of one segment (its two compressed
 * payloads) into the writer's spill file: 0 with *off, or -1 (writer failed). */
void trc_writer_segment_limits(const trc_writer *w, size_t *rec_bytes, size_t *data_bytes);
int trc_writer_spill(trc_writer *w, const u8v *zr, const u8v *zd, uint64_t *off);

/* trc_rec.c */
void trc_rec_bad(trc_wg_rec *g, const char *what, uint32_t wave); /* first error sticks */
void trc_free_waves(wave_rec *w, uint32_t cap);

/* trc_encode.c */
/* Encodes the recorded workgroup into p (length-prefixed Workgroup and
 * WorkgroupData messages). Returns 0 or -1 (out of memory). */
int trc_encode_piece(const trc_wg_rec *g, piece *p);
/* Encodes and compresses the current part of wave `wave` of g as one wave
 * segment (a Workgroup and a WorkgroupData message of that one wave) into
 * g->sz_rec / g->sz_dat. Returns 0 or -1 with *why. */
int trc_encode_segment(trc_wg_rec *g, uint32_t wave, const char **why);
int trc_hash_loads(wave_rec *v); /* trc_rec.c */
/* Lays out b's pieces in its two frames (message offsets) and compresses
 * them; and, when every piece has one and their store values are at most
 * TRC_STORE_FRAME_SHARE of the data frame's bytes, its 2.4 store frame
 * (b->has_sto). Returns 0 or -1 with *why. */
int trc_encode_batch(batch *b, ZSTD_CCtx *c_rec, ZSTD_CCtx *c_dat, const char **why);

/* Tests only (tests/trace/504-golden.c test_async_end): hold (on = 1) or
 * release the background compressors, so that sealed batches stay unwritten
 * while a test writes kernel ends and events behind them; and how many host
 * chunks (events, code objects) so far waited in the sequence instead of
 * being written at once. */
void trc_writer_test_hold(trc_writer *w, int on);
uint64_t trc_writer_test_queued(trc_writer *w);

/* trc_writer.c */
/* 2.6: the writer's host image for its recorders to compare loads with
 * (trc_wg_rec_host_image), NULL when it no longer matches (an event written
 * while a kernel was open, its copies over the limit, out of memory). Read
 * only while a kernel is open: no event changes it then. */
const struct trc_himg *trc_writer_himg(trc_writer *w);
/* A compression context at `level` with checksums and content sizes (every
 * frame of the format has both); NULL when out of memory. */
ZSTD_CCtx *trc_new_cctx(int level);
void trc_free_piece(piece *p);

#endif
