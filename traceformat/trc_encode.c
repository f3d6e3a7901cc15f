/*
 * trc_encode.c - encoding recorded workgroups: a hand-written proto3 encoder
 * of the Workgroup / WorkgroupData messages (gtrace.proto) straight from the
 * recorder's column vectors, data values byte-plane shuffled in the same pass,
 * and the compression of a batch of encoded workgroups into one record frame
 * and one data frame (docs/trace-format.md).
 */
#include <assert.h>
#include <string.h>

#include "traceformat/gtrace.pb-c.h"
#include "traceformat/trc_writer_internal.h"

/* ---- direct protobuf encoding of the workgroup messages --------------------
 *
 * Workgroup and WorkgroupData are encoded here by hand instead of through
 * protobuf-c's descriptor-driven packer (which cost ~10% of recording time):
 * the output is ordinary proto3 wire format for gtrace.proto (fields in
 * number order, zero scalars and empty repeated fields omitted, repeated
 * scalars packed), decoded by the reader with protobuf-c as before.
 * Capacity: callers reserve an upper bound first (enc_bound_*), so the put_*
 * helpers never check. Length-delimited submessages are written with a
 * 5-byte length hole that is closed up afterwards (sizes < 2^35). */

static inline uint8_t *put_u64(uint8_t *q, uint32_t field, uint64_t v)
{
    return v ? put_varint(put_tag(q, field, 0), v) : q;
}
static inline uint8_t *put_bytes(uint8_t *q, uint32_t field, const void *b, size_t n)
{
    if (!n) return q;
    q = put_varint(put_tag(q, field, 2), n);
    memcpy(q, b, n);
    return q + n;
}
/* Opens a length-delimited field: returns where its body starts. */
static inline uint8_t *len_open(uint8_t *q, uint32_t field, uint8_t **hole)
{
    q = put_tag(q, field, 2);
    *hole = q;
    return q + 5;
}
/* Closes it: writes the body length into the hole and moves the body down. */
static inline uint8_t *len_close(uint8_t *hole, uint8_t *end)
{
    size_t len = (size_t)(end - (hole + 5));
    uint8_t tmp[10];
    size_t k = (size_t)(put_varint(tmp, len) - tmp);
    memmove(hole + k, hole + 5, len);
    memcpy(hole, tmp, k);
    return hole + k + len;
}
/* arr and n are read once: the byte stores of ENC may alias any object, so
 * a loop over (arr)[i] and (n) as written reloaded both from the recorder's
 * column vector at every element (enc_workgroup was 19% of recording aes). */
#define PUT_PACKED(q, field, arr, n, ENC)                           \
    do {                                                            \
        size_t n_ = (n);                                            \
        if (n_) {                                                   \
            const __typeof__(*(arr)) *a_ = (arr);                   \
            uint8_t *hole_;                                         \
            uint8_t *b_ = len_open(q, field, &hole_);               \
            for (size_t i_ = 0; i_ < n_; i_++) b_ = ENC(b_, a_[i_]); \
            q = len_close(hole_, b_);                               \
        }                                                           \
    } while (0)
static inline uint8_t *enc_varint(uint8_t *q, uint64_t v) { return put_varint(q, v); }
/* A recorded op's mem_flags as the file has them: without the recorder's
 * TRC_MO_HOST (2.6: WaveData.load_host says it, see host_bytes) */
static inline uint8_t *enc_mflags(uint8_t *q, uint32_t v) { return put_varint(q, v & ~(uint32_t)TRC_MO_HOST); }
static inline uint8_t *enc_sint(uint8_t *q, int64_t v)
{
    return put_varint(q, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}
/* enc_sint's bytes, for the address fields (base deltas, strides, lane
 * deltas): a zigzag value below 2^14 (LDS and most gathers' lane deltas) is
 * written without a branch on its length (one or two bytes at random made
 * the varint loop's exit a misprediction per lane). Writes q[1] even for a
 * one-byte value: only for PUT_PACKED fields, whose bound (enc_bound_wg)
 * reserves 10 bytes a value. */
static inline uint8_t *enc_sint_short(uint8_t *q, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    if (z < 0x4000) {
        uint64_t two = z >= 0x80;
        q[0] = (uint8_t)(z | two << 7);
        q[1] = (uint8_t)(z >> 7);
        return q + 1 + two;
    }
    return put_varint(q, z);
}
static inline uint8_t *enc_fixed64(uint8_t *q, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(q, &v, 8);
#else
    trc_put_le64(q, v);
#endif
    return q + 8;
}

/* Upper bound of the encoded Workgroup / WorkgroupData sizes. */
static size_t enc_bound_wg(const wgview *g)
{
    size_t b = 64;
    for (uint32_t i = 0; i < g->n_waves; i++) {
        const wave_rec *v = &g->w[i];
        b += 128 + v->branch.n +
             10 * (v->indirect.n + 2 * v->exec_val.n + 5 * v->mflags.n + v->astride.n + v->adelta.n +
                   4 * v->await_len.n);
    }
    return b;
}
static size_t enc_bound_wd(const wgview *g)
{
    size_t b = 64;
    for (uint32_t i = 0; i < g->n_waves; i++) {
        const wave_rec *v = &g->w[i];
        b += 80 + 10 * 2 * v->mflags.n + v->load.n + v->store.n + 8 * v->mflags.n + v->mflags.n / 8 + 16;
    }
    return b;
}

static uint8_t *enc_wg_id(uint8_t *q, const uint32_t id[3])
{
    uint8_t *hole;
    uint8_t *b = len_open(q, 2, &hole);
    for (int i = 0; i < 3; i++) b = put_varint(b, id[i]);
    return len_close(hole, b);
}

/* gtrace.Workgroup with its Waves. */
static uint8_t *enc_workgroup(uint8_t *q, const wgview *g)
{
    q = put_u64(q, 1, g->kernel_id);
    q = enc_wg_id(q, g->wg_id);
    q = put_u64(q, 3, g->n_waves);
    for (uint32_t i = 0; i < g->n_waves; i++) {
        const wave_rec *v = &g->w[i];
        uint8_t *hole;
        uint8_t *b = len_open(q, 4, &hole);
        b = put_u64(b, 1, g->wave0 + i);
        b = put_u64(b, 2, g->segment ? 0 : v->n_instr);
        b = put_u64(b, 3, v->n_branch);
        b = put_bytes(b, 4, v->branch.p, v->branch.n);
        PUT_PACKED(b, 5, v->indirect.p, v->indirect.n, enc_varint);
        PUT_PACKED(b, 6, v->exec_at_delta.p, v->exec_at_delta.n, enc_varint);
        PUT_PACKED(b, 7, v->exec_val.p, v->exec_val.n, enc_fixed64);
        PUT_PACKED(b, 8, v->mflags.p, v->mflags.n, enc_mflags);
        PUT_PACKED(b, 9, v->mbytes.p, v->mbytes.n, enc_varint);
        PUT_PACKED(b, 10, v->mexec.p, v->mexec.n, enc_fixed64);
        PUT_PACKED(b, 11, v->akind.p, v->akind.n, enc_varint);
        PUT_PACKED(b, 12, v->abase.p, v->abase.n, enc_sint_short);
        PUT_PACKED(b, 13, v->astride.p, v->astride.n, enc_sint_short);
        PUT_PACKED(b, 14, v->adelta.p, v->adelta.n, enc_sint_short);
        PUT_PACKED(b, 15, v->await_at_delta.p, v->await_at_delta.n, enc_varint);
        PUT_PACKED(b, 16, v->await_len.p, v->await_len.n, enc_varint);
        PUT_PACKED(b, 17, v->await_pc.p, v->await_pc.n, enc_varint);
        PUT_PACKED(b, 18, v->await_kind.p, v->await_kind.n, enc_varint);
        b = put_u64(b, 19, g->segment ? 0 : v->n_seg);
        q = len_close(hole, b);
    }
    return q;
}

static inline size_t vlen(uint64_t v)
{
    size_t k = 1;
    while (v >= 0x80) {
        v >>= 7;
        k++;
    }
    return k;
}
/* Encoded size of a packed varint field (0 when empty). */
static size_t packed_u32_size(const uint32_t *a, size_t n)
{
    if (!n) return 0;
    size_t l = 0;
    for (size_t i = 0; i < n; i++) l += vlen(a[i]);
    return 1 + vlen(l) + l;
}

/* 2.6 WaveData.load_host of v: ceil(m/8) bytes when an op has TRC_MO_HOST,
 * else 0 (the field is left out). */
static size_t host_bytes(const wave_rec *v)
{
    for (size_t j = 0; j < v->mflags.n; j++)
        if (v->mflags.p[j] & TRC_MO_HOST) return (v->mflags.n + 7) / 8;
    return 0;
}

/* Exact encoded size of wave i's WaveData body (nh: host_bytes(v)). */
static size_t wave_data_size(const wave_rec *v, uint32_t i, size_t nh)
{
    return (i ? 1 + vlen(i) : 0) + packed_u32_size(v->load_len.p, v->load_len.n) +
           packed_u32_size(v->store_len.p, v->store_len.n) +
           (v->load.n ? 1 + vlen(v->load.n) + v->load.n : 0) +
           (v->store.n ? 1 + vlen(v->store.n) + v->store.n : 0) +
           (v->lhash.n ? 1 + vlen(8 * v->lhash.n) + 8 * v->lhash.n : 0) + (nh ? 1 + vlen(nh) + nh : 0);
}

/* gtrace.WorkgroupData, preceded by its varint length. The data streams go
 * into the shuf4 fields, byte-plane shuffled straight from the recording
 * buffers (one pass over the data). Sizes are computed exactly first, so
 * nothing is moved afterwards. *body receives where the message starts. */
static uint8_t *enc_workgroup_data(uint8_t *q, const wgview *g, uint8_t **body)
{
    size_t total = (g->kernel_id ? 1 + vlen(g->kernel_id) : 0);
    size_t idl = vlen(g->wg_id[0]) + vlen(g->wg_id[1]) + vlen(g->wg_id[2]);
    total += 1 + vlen(idl) + idl;
    for (uint32_t i = 0; i < g->n_waves; i++) {
        size_t sz = wave_data_size(&g->w[i], g->wave0 + i, host_bytes(&g->w[i]));
        total += 1 + vlen(sz) + sz;
    }
    q = put_varint(q, total);
    uint8_t *q0 = q;
    *body = q;
    q = put_u64(q, 1, g->kernel_id);
    q = enc_wg_id(q, g->wg_id);
    for (uint32_t i = 0; i < g->n_waves; i++) {
        const wave_rec *v = &g->w[i];
        size_t nh = host_bytes(v), sz = wave_data_size(v, g->wave0 + i, nh);
        uint8_t *b = put_varint(put_tag(q, 3, 2), sz);
        uint8_t *b0 = b;
        b = put_u64(b, 1, g->wave0 + i);
        PUT_PACKED(b, 2, v->load_len.p, v->load_len.n, enc_varint);
        PUT_PACKED(b, 3, v->store_len.p, v->store_len.n, enc_varint);
        if (v->load.n) {
            b = put_varint(put_tag(b, 6, 2), v->load.n);
            trc_shuf4(b, v->load.p, v->load.n);
            b += v->load.n;
        }
        if (v->store.n) {
            b = put_varint(put_tag(b, 7, 2), v->store.n);
            trc_shuf4(b, v->store.p, v->store.n);
            b += v->store.n;
        }
        if (v->lhash.n) { /* 2.2 hashed loads: packed fixed64 */
            b = put_varint(put_tag(b, 8, 2), 8 * v->lhash.n);
            for (size_t k = 0; k < v->lhash.n; k++) {
                trc_put_le64(b, v->lhash.p[k]);
                b += 8;
            }
        }
        if (nh) { /* 2.6 host-image loads: a bit per op */
            b = put_varint(put_tag(b, 10, 2), nh);
            memset(b, 0, nh);
            for (size_t j = 0; j < v->mflags.n; j++)
                if (v->mflags.p[j] & TRC_MO_HOST) b[j >> 3] |= (uint8_t)(1u << (j & 7));
            b += nh;
        }
        assert((size_t)(b - b0) == sz);
        (void)b0;
        q = b;
    }
    assert((size_t)(q - q0) == total);
    return q;
}

/* 2.4 store frame: whether op j of v is a store outside the LDS with
 * values (its store_len then counts), and the bytes of those values. */
static inline int sto_op(const wave_rec *v, size_t j) { return v->store_len.p[j] && !(v->mflags.p[j] & TRC_MO_LDS); }
static uint64_t sto_bytes(const wave_rec *v)
{
    uint64_t n = 0;
    for (size_t j = 0; j < v->store_len.n; j++)
        if (sto_op(v, j)) n += v->store_len.p[j];
    return n;
}

/* 2.5: WaveData.store_ops of wave v (number i) in a store frame: a Wave
 * with wave_in_wg, n_instr and the memory-op columns of the ops sto_op
 * keeps, in op order; addr_base_delta chained over them from 0; each op's
 * stride (strided, two lanes or more) or lane deltas (deltas: lanes - 1)
 * copied from the wave's streams (trc_rec.c's layout). At most 80 bytes +
 * 50 an op + 10 an address entry (reserved by trc_encode_piece). Returns
 * the end. */
static uint8_t *enc_store_ops(uint8_t *q, const wave_rec *v, uint32_t i)
{
    uint8_t *hole, *hl;
    uint8_t *b = len_open(q, 9, &hole);
    b = put_u64(b, 1, i);
    b = put_u64(b, 2, v->n_instr);
    size_t n = 0;
    for (size_t j = 0; j < v->store_len.n; j++) n += sto_op(v, j);
    if (n) {
#define STO_COL(field, ENC, EXPR)                                 \
    do {                                                          \
        uint8_t *l_ = len_open(b, field, &hl);                    \
        for (size_t j = 0; j < v->store_len.n; j++)               \
            if (sto_op(v, j)) l_ = ENC(l_, EXPR);                 \
        b = len_close(hl, l_);                                    \
    } while (0)
        STO_COL(8, enc_mflags, v->mflags.p[j]);
        STO_COL(9, enc_varint, v->mbytes.p[j]);
        STO_COL(10, enc_fixed64, v->mexec.p[j]);
        STO_COL(11, enc_varint, v->akind.p[j]);
#undef STO_COL
        /* base deltas rechained over the kept ops; the stride and delta
         * streams walked alongside (an op's entries: trc_rec.c) */
        uint64_t base = 0, prev = 0;
        size_t si = 0, di = 0, ns = 0, nd = 0;
        uint8_t *l = len_open(b, 12, &hl);
        for (size_t j = 0; j < v->store_len.n; j++) {
            base += (uint64_t)v->abase.p[j];
            uint32_t lanes = (uint32_t)__builtin_popcountll(v->mexec.p[j]);
            int strided = v->akind.p[j] == GTRACE__ADDR_KIND__ADDR_STRIDED;
            if (sto_op(v, j)) {
                l = enc_sint_short(l, (int64_t)(base - prev));
                prev = base;
                if (strided) ns += lanes >= 2;
                else nd += lanes ? lanes - 1 : 0;
            }
        }
        b = len_close(hl, l);
        if (ns) {
            l = len_open(b, 13, &hl);
            for (size_t j = 0; j < v->store_len.n; j++) {
                uint32_t lanes = (uint32_t)__builtin_popcountll(v->mexec.p[j]);
                if (v->akind.p[j] != GTRACE__ADDR_KIND__ADDR_STRIDED || lanes < 2) continue;
                if (sto_op(v, j)) l = enc_sint_short(l, v->astride.p[si]);
                si++;
            }
            b = len_close(hl, l);
        }
        if (nd) {
            l = len_open(b, 14, &hl);
            for (size_t j = 0; j < v->store_len.n; j++) {
                uint32_t lanes = (uint32_t)__builtin_popcountll(v->mexec.p[j]);
                if (v->akind.p[j] == GTRACE__ADDR_KIND__ADDR_STRIDED || lanes < 2) continue;
                if (sto_op(v, j))
                    for (uint32_t k = 0; k + 1 < lanes; k++) l = enc_sint_short(l, v->adelta.p[di + k]);
                di += lanes - 1;
            }
            b = len_close(hl, l);
        }
    }
    return len_close(hole, b);
}

/* gtrace.WorkgroupData of a 2.4 store frame, without its length prefix:
 * per wave store_len (0 for LDS ops) and the stores' bytes outside the LDS,
 * gathered into scratch (room for the largest wave's) and shuffled
 * (store_data_shuf4); no load fields. Submessages through len_open /
 * len_close, as enc_workgroup. Returns the end. */
static uint8_t *enc_store_data(uint8_t *q, const wgview *g, uint8_t *scratch)
{
    q = put_u64(q, 1, g->kernel_id);
    q = enc_wg_id(q, g->wg_id);
    for (uint32_t i = 0; i < g->n_waves; i++) {
        const wave_rec *v = &g->w[i];
        uint8_t *hole, *hl;
        uint8_t *b = len_open(q, 3, &hole);
        b = put_u64(b, 1, g->wave0 + i);
        size_t nb = 0, o = 0;
        if (v->store_len.n) {
            uint8_t *l = len_open(b, 3, &hl);
            for (size_t j = 0; j < v->store_len.n; j++) {
                uint32_t n = v->store_len.p[j];
                l = put_varint(l, sto_op(v, j) ? n : 0);
                if (sto_op(v, j)) {
                    memcpy(scratch + nb, v->store.p + o, n);
                    nb += n;
                }
                o += n;
            }
            b = len_close(hl, l);
        }
        if (nb) {
            b = put_varint(put_tag(b, 7, 2), nb);
            trc_shuf4(b, scratch, nb);
            b += nb;
        }
        b = enc_store_ops(b, v, g->wave0 + i);
        q = len_close(hole, b);
    }
    return q;
}

/* The zstd level of a data frame of `total` bytes (trc_internal.h): the
 * fast level when the frame's first TRC_ZSTD_PROBE_BYTES compress at it to at
 * most TRC_ZSTD_FAST_LOSS percent more than at TRC_ZSTD_LEVEL_DATA. Frames too
 * small for the probes to pay, and a probe that fails, keep
 * TRC_ZSTD_LEVEL_DATA. b->zp is the scratch. Leaves c at some level:
 * compress_pieces sets the chosen one and puts TRC_ZSTD_LEVEL_DATA back. */
static int data_level(ZSTD_CCtx *c, batch *b, uint64_t total)
{
    const size_t np = TRC_ZSTD_PROBE_BYTES;
    if (total < 4 * (uint64_t)np)
        return TRC_ZSTD_LEVEL_DATA;
    size_t bound = ZSTD_compressBound(np);
    if (grow((void **)&b->zp.p, &b->zp.cap, np + bound, 1) < 0)
        return TRC_ZSTD_LEVEL_DATA;
    size_t n = 0;
    for (const piece *p = b->head; p && n < np; p = p->next) {
        size_t k = p->edat.n < np - n ? p->edat.n : np - n;
        memcpy(b->zp.p + n, p->edat.p, k);
        n += k;
    }
    const int lv[2] = {TRC_ZSTD_LEVEL_DATA_FAST, TRC_ZSTD_LEVEL_DATA};
    size_t z[2];
    for (int i = 0; i < 2; i++) {
        if (ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, lv[i])))
            return TRC_ZSTD_LEVEL_DATA;
        z[i] = ZSTD_compress2(c, b->zp.p + np, bound, b->zp.p, n);
        if (ZSTD_isError(z[i]))
            return TRC_ZSTD_LEVEL_DATA;
    }
    return z[0] * 100 <= z[1] * (100 + TRC_ZSTD_FAST_LOSS) ? TRC_ZSTD_LEVEL_DATA_FAST : TRC_ZSTD_LEVEL_DATA;
}

/* Compresses the pieces' messages (field `which`: 0 records, 1 data, 2 stores) as one
 * frame into z, streaming them through zstd without concatenating them.
 * Returns 0 or -1 with *why. */
static int compress_pieces(ZSTD_CCtx *c, batch *b, int which, uint64_t total, u8v *z,
                           const char **why)
{
    size_t bound = ZSTD_compressBound((size_t)total);
    if (grow((void **)&z->p, &z->cap, bound + 1, 1) < 0) {
        *why = "out of memory compressing a frame";
        return -1;
    }
    size_t r = 0;
    if (which == 1) /* every data frame sets its level: the context's last one must not leak in */
        r = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, data_level(c, b, total));
    if (!ZSTD_isError(r)) r = ZSTD_CCtx_reset(c, ZSTD_reset_session_only);
    if (!ZSTD_isError(r)) r = ZSTD_CCtx_setPledgedSrcSize(c, total); /* content size in the header */
    ZSTD_outBuffer out = {z->p, z->cap, 0};
    for (const piece *p = b->head; p && !ZSTD_isError(r); p = p->next) {
        const u8v *v = which == 2 ? &p->esto : which ? &p->edat : &p->erec;
        ZSTD_inBuffer in = {v->p, v->n, 0};
        while (in.pos < in.size && !ZSTD_isError(r))
            r = ZSTD_compressStream2(c, &out, &in, ZSTD_e_continue);
    }
    ZSTD_inBuffer none = {NULL, 0, 0};
    while (!ZSTD_isError(r) && (r = ZSTD_compressStream2(c, &out, &none, ZSTD_e_end)) != 0 &&
           !ZSTD_isError(r) && out.pos < out.size) {
    }
    if (which == 1) /* back to the data level: wave segments and store frames share this context */
        (void)ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, TRC_ZSTD_LEVEL_DATA);
    if (ZSTD_isError(r) || r != 0) {
        *why = ZSTD_isError(r) ? ZSTD_getErrorName(r) : "compressed frame larger than its bound";
        return -1;
    }
    z->n = out.pos;
    return 0;
}

/* Lays out b's pieces in its two frames (message offsets) and compresses
 * them. Returns 0 or -1 with *why. */
int trc_encode_batch(batch *b, ZSTD_CCtx *c_rec, ZSTD_CCtx *c_dat, const char **why)
{
    *why = "out of memory encoding a frame";
    if (grow((void **)&b->roff.p, &b->roff.cap, b->n + 1, 4) < 0 ||
        grow((void **)&b->rlen.p, &b->rlen.cap, b->n + 1, 4) < 0 ||
        grow((void **)&b->doff.p, &b->doff.cap, b->n + 1, 4) < 0 ||
        grow((void **)&b->dlen.p, &b->dlen.cap, b->n + 1, 4) < 0)
        return -1;
    uint64_t r = 0, d = 0;
    size_t i = 0;
    for (const piece *p = b->head; p; p = p->next, i++) {
        if (r + p->erec.n > UINT32_MAX || d + p->edat.n > UINT32_MAX) {
            *why = "a frame larger than 4 GiB";
            return -1;
        }
        b->roff.p[i] = (uint32_t)(r + p->rec_moff);
        b->rlen.p[i] = (uint32_t)(p->erec.n - p->rec_moff);
        b->doff.p[i] = (uint32_t)(d + p->dat_moff);
        b->dlen.p[i] = (uint32_t)(p->edat.n - p->dat_moff);
        r += p->erec.n;
        d += p->edat.n;
    }
    b->raw_rec = r;
    b->raw_dat = d;
    if (compress_pieces(c_rec, b, 0, r, &b->zr, why) < 0 || compress_pieces(c_dat, b, 1, d, &b->zd, why) < 0)
        return -1;
    /* 2.4 store frame: when every piece has its store message and their
     * values are a small share of the data frame (TRC_STORE_FRAME_SHARE) */
    uint64_t sv = 0, sn = 0;
    b->has_sto = 0;
    b->raw_sto = 0;
    for (const piece *p = b->head; p; p = p->next) {
        if (!p->sto_ok) return 0;
        sv += p->sto_bytes;
        sn += p->esto.n;
    }
    if (!b->head || sv * TRC_STORE_FRAME_SHARE > d || sn > UINT32_MAX)
        return 0;
    if (grow((void **)&b->soff.p, &b->soff.cap, b->n + 1, 4) < 0 ||
        grow((void **)&b->slen.p, &b->slen.cap, b->n + 1, 4) < 0) {
        *why = "out of memory encoding a frame";
        return -1;
    }
    uint64_t o = 0;
    i = 0;
    for (const piece *p = b->head; p; p = p->next, i++) {
        b->soff.p[i] = (uint32_t)(o + p->sto_moff);
        b->slen.p[i] = (uint32_t)(p->esto.n - p->sto_moff);
        o += p->esto.n;
    }
    if (compress_pieces(c_dat, b, 2, o, &b->zs, why) < 0)
        return -1;
    /* and compressed, at most the same share of the data frame's bytes: the
     * file grows by at most that (store values often compress worse than the
     * loads beside them: fir's by a sixth, against an eighth raw) */
    if (b->zs.n * TRC_STORE_FRAME_SHARE > b->zd.n)
        return 0;
    b->raw_sto = o;
    b->has_sto = 1;
    return 0;
}

/* Encodes the recorded workgroup into p. Returns 0 or -1 (out of memory). */
int trc_encode_piece(const trc_wg_rec *g, piece *p)
{
    for (uint32_t i = 0; g->hash_loads && i < g->n_waves; i++)
        if (trc_hash_loads(&g->w[i]) < 0)
            return -1;
    wgview v = {g->w, g->n_waves, g->kernel_id, g->wg_id, 0, 0};
    size_t br = enc_bound_wg(&v) + 16, bd = enc_bound_wd(&v) + 16;
    if (grow((void **)&p->erec.p, &p->erec.cap, br, 1) < 0 ||
        grow((void **)&p->edat.p, &p->edat.cap, bd, 1) < 0)
        return -1;
    /* record: 5-byte length hole closed up afterwards (records are small) */
    uint8_t *e = enc_workgroup(p->erec.p + 5, &v);
    size_t len = (size_t)(e - (p->erec.p + 5));
    uint8_t tmp[10];
    size_t k = (size_t)(put_varint(tmp, len) - tmp);
    memmove(p->erec.p + k, p->erec.p + 5, len);
    memcpy(p->erec.p, tmp, k);
    p->erec.n = k + len;
    p->rec_moff = (uint32_t)k;
    uint8_t *body;
    uint8_t *de = enc_workgroup_data(p->edat.p, &v, &body);
    p->edat.n = (size_t)(de - p->edat.p);
    p->dat_moff = (uint32_t)(body - p->edat.p);
    assert(p->erec.n <= br && p->edat.n <= bd);
    /* 2.4: the same workgroup's store values outside the LDS, for a store
     * frame: only when they are at most TRC_STORE_FRAME_SHARE of its own
     * data (so that no work is spent on workgroups whose batch cannot have
     * one: trc_encode_batch wants every piece's), and not when a wave of it
     * is in segments (their values are in the segments' data chunks) */
    p->sto_ok = 0;
    p->esto.n = 0;
    p->sto_bytes = 0;
    size_t bs = 64, most = 0;
    for (uint32_t i = 0; i < g->n_waves; i++) {
        const wave_rec *w = &g->w[i];
        if (w->n_seg) return 0;
        uint64_t nb = sto_bytes(w);
        p->sto_bytes += nb;
        if (nb > most) most = nb;
        bs += 48 + 11 * w->store_len.n + nb + 80 + 50 * w->store_len.n + 10 * (w->astride.n + w->adelta.n);
    }
    if (p->sto_bytes * TRC_STORE_FRAME_SHARE > p->edat.n)
        return 0;
    if (grow((void **)&p->esto.p, &p->esto.cap, bs + most, 1) < 0)
        return -1;
    /* 5-byte length hole closed up afterwards, as the record's */
    uint8_t *se = enc_store_data(p->esto.p + 5, &v, p->esto.p + bs);
    len = (size_t)(se - (p->esto.p + 5));
    k = (size_t)(put_varint(tmp, len) - tmp);
    memmove(p->esto.p + k, p->esto.p + 5, len);
    memcpy(p->esto.p, tmp, k);
    p->esto.n = k + len;
    p->sto_moff = (uint32_t)k;
    assert(p->esto.n <= bs);
    p->sto_ok = 1;
    return 0;
}


/* Compresses n bytes at src as one frame into z (level of c). 0 or -1. */
static int compress_one(ZSTD_CCtx *c, const uint8_t *src, size_t n, u8v *z, const char **why)
{
    size_t bound = ZSTD_compressBound(n);
    if (grow((void **)&z->p, &z->cap, bound + 1, 1) < 0) {
        *why = "out of memory compressing a wave segment";
        return -1;
    }
    size_t r = ZSTD_compress2(c, z->p, z->cap, src, n);
    if (ZSTD_isError(r)) {
        *why = ZSTD_getErrorName(r);
        return -1;
    }
    z->n = r;
    return 0;
}

int trc_encode_segment(trc_wg_rec *g, uint32_t wave, const char **why)
{
    if (g->hash_loads && trc_hash_loads(&g->w[wave]) < 0) {
        *why = "out of memory";
        return -1;
    }
    wgview v = {&g->w[wave], 1, g->kernel_id, g->wg_id, wave, 1};
    size_t br = enc_bound_wg(&v) + 16, bd = enc_bound_wd(&v) + 16;
    if (grow((void **)&g->se_rec.p, &g->se_rec.cap, br, 1) < 0 ||
        grow((void **)&g->se_dat.p, &g->se_dat.cap, bd, 1) < 0) {
        *why = "out of memory";
        return -1;
    }
    uint8_t *e = enc_workgroup(g->se_rec.p, &v);
    g->se_rec.n = (size_t)(e - g->se_rec.p);
    uint8_t *body;
    uint8_t *de = enc_workgroup_data(g->se_dat.p, &v, &body);
    g->se_dat.n = (size_t)(de - g->se_dat.p);
    assert(g->se_rec.n <= br && g->se_dat.n <= bd);
    if (g->se_rec.n > UINT32_MAX / 2 || g->se_dat.n > UINT32_MAX / 2) {
        *why = "a wave segment larger than 2 GiB";
        return -1;
    }
    if (compress_one(g->cctx, g->se_rec.p, g->se_rec.n, &g->sz_rec, why) < 0 ||
        compress_one(g->cctx_data, body, (size_t)(de - body), &g->sz_dat, why) < 0)
        return -1;
    return 0;
}
