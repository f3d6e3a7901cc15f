/*
 * trc_fastpb.c - a decoder of the two messages every replay decodes most,
 * Workgroup and WorkgroupData (traceformat/gtrace.proto, docs/trace-format.md
 * 3.4 and 3.5), for the encoding trc_encode.c writes: every field at most
 * once per message, repeated scalars packed, no field this file does not
 * know. It fills the same protobuf-c structures protobuf_c_message_unpack
 * would (the reader's checks and conversion run on them unchanged), in one
 * allocation, in two passes over the bytes (sizes, then values), where
 * protobuf-c's generic unpack looks each field up in the descriptor, counts
 * every packed field before parsing it and allocates each array apart: the
 * fast-forward of a sampled replay decodes every skipped workgroup, and spent
 * about half its decoding time in protobuf_c_message_unpack (km at 131072
 * points, 15 iterations).
 *
 * Anything else (a field repeated, an unpacked repeated field, an unknown
 * field, a varint longer than its type, a truncated message) returns NULL:
 * the caller then decodes with protobuf-c, which accepts every valid
 * encoding and reports what is corrupt. The wire format is the protobuf
 * encoding (protobuf.dev, "Encoding": varints, zigzag sint64, wire types 0,
 * 1, 2, 5; packed repeated fields). tests/trace/506-fastpb.c checks that both
 * decoders give the same content.
 */
#include "traceformat/trc_internal.h"
#include "traceformat/gtrace.pb-c.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

/* Reads a varint at *p (< end) of at most 10 bytes; false when truncated or longer. */
static inline bool rd_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    const uint8_t *q = *p;
    uint64_t x = 0;
    for (unsigned s = 0; s < 70 && q < end; s += 7) {
        uint8_t b = *q++;
        if (s == 63 && b > 1)
            return false; /* past 64 bits */
        x |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) {
            *p = q;
            *v = x;
            return true;
        }
    }
    return false;
}

/* One field: its number, wire type, and value (WT_VARINT) or payload
 * [lp, lp + ln) (WT_LEN). */
typedef struct {
    uint32_t fn, wt;
    uint64_t v;
    const uint8_t *lp;
    size_t ln;
} fb_field;

/* The field at *p; false on a truncated or unsupported one. */
static inline bool rd_field(const uint8_t **p, const uint8_t *end, fb_field *f)
{
    uint64_t key;
    f->v = 0;
    f->lp = NULL;
    f->ln = 0;
    if (!rd_varint(p, end, &key) || key >> 32 || (key >> 3) == 0)
        return false;
    f->fn = (uint32_t)(key >> 3);
    f->wt = (uint32_t)(key & 7);
    switch (f->wt) {
    case WT_VARINT:
        return rd_varint(p, end, &f->v);
    case WT_LEN: {
        uint64_t n;
        if (!rd_varint(p, end, &n) || n > (uint64_t)(end - *p))
            return false;
        f->lp = *p;
        f->ln = (size_t)n;
        *p += n;
        return true;
    }
    default:
        return false; /* no fixed-width scalar outside packed fields in these messages */
    }
}

/* As rd_field, for a message whose fields number at most max_fn (< 32) and
 * come at most once each (*seen: those read so far). */
static inline bool rd_field_once(const uint8_t **p, const uint8_t *end, uint32_t max_fn, uint32_t *seen, fb_field *f)
{
    if (!rd_field(p, end, f) || f->fn > max_fn || (*seen >> f->fn & 1))
        return false;
    *seen |= 1u << f->fn;
    return true;
}

typedef struct {
    uint8_t *p;
    size_t at, cap;
} fb_arena;

/* bytes (rounded up to 8) of a; NULL past its end */
static inline void *fb_take(fb_arena *a, size_t bytes)
{
    size_t r8 = (bytes + 7) & ~(size_t)7;
    if (r8 > a->cap - a->at)
        return NULL;
    void *r = a->p + a->at;
    a->at += r8;
    return r;
}

enum { K_U32, K_U64, K_S64, K_F64 };

/* Store element c of a packed field of this kind (a constant where inlined). */
static inline __attribute__((always_inline)) bool put_elem(int kind, uint8_t *out, size_t c, uint64_t v)
{
    switch (kind) {
    case K_U32:
        if (v >> 32)
            return false;
        ((uint32_t *)out)[c] = (uint32_t)v;
        return true;
    case K_U64:
        ((uint64_t *)out)[c] = v;
        return true;
    default:
        ((int64_t *)out)[c] = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
        return true;
    }
}

/* packed() for one integer kind (a constant where inlined): eight one-byte
 * varints at a time while the next eight bytes are all below 0x80 (most
 * elements are small: deltas, flags, sizes), else one varint, unrolled. */
static inline __attribute__((always_inline)) bool packed_int(int kind, const uint8_t *p, size_t n, fb_arena *a,
                                                             size_t *count, void **arr)
{
    size_t esz = kind == K_U32 ? 4 : 8, room = (a->cap - a->at) / esz, c = 0;
    uint8_t *out = a->p + a->at;
    const uint8_t *q = p, *end = p + n;
    while (q < end) {
        if (end - q >= 8 && room - c >= 8) {
            uint64_t w;
            memcpy(&w, q, 8);
            if (!(w & 0x8080808080808080ull)) {
                for (unsigned k = 0; k < 8; k++)
                    put_elem(kind, out, c + k, q[k]); /* cannot fail: < 0x80 */
                q += 8;
                c += 8;
                continue;
            }
        }
        uint64_t v = *q;
        if (end - q >= 10) {
            /* unrolled, no bounds check. One or two bytes (most lane and
             * address deltas) without a branch on which: a random mix of
             * the two made that branch a misprediction per element */
            uint64_t b = q[1];
            if (!(v & b & 0x80)) {
                uint64_t two = v >> 7; /* then b < 0x80 */
                v = (v & 0x7f) | ((b << 7) & (0 - two));
                q += 1 + two;
            } else {
                /* each byte adds its 7 bits (the continuation bit of the
                 * one before subtracted) */
                v += (b - 1) << 7;
                unsigned i = 2;
                for (; i < 10; i++) {
                    b = q[i];
                    v += (b - 1) << (7 * i);
                    if (b < 0x80)
                        break;
                }
                if (i == 10 || (i == 9 && b > 1))
                    return false; /* longer than 10 bytes, or past 64 bits */
                q += i + 1;
            }
        } else if (v < 0x80) {
            q++;
        } else if (!rd_varint(&q, end, &v)) {
            return false;
        }
        if (c == room || !put_elem(kind, out, c, v))
            return false;
        c++;
    }
    *count = c;
    *arr = out;
    a->at += (c * esz + 7) & ~(size_t)7;
    return true;
}

/* A packed field's elements decoded into a at its current end: their count
 * in *count and the array in *arr (NULL when empty); false when a varint is
 * cut off or too wide, or a runs out. */
static bool packed(int kind, const uint8_t *p, size_t n, fb_arena *a, size_t *count, void **arr)
{
    *count = 0;
    *arr = NULL;
    if (!n)
        return true;
    switch (kind) {
    case K_F64:
        if (n % 8 || !(*arr = fb_take(a, n)))
            return false;
        memcpy(*arr, p, n); /* little-endian host (top_decode) */
        *count = n / 8;
        return true;
    case K_U32:
        return packed_int(K_U32, p, n, a, count, arr);
    case K_U64:
        return packed_int(K_U64, p, n, a, count, arr);
    default:
        return packed_int(K_S64, p, n, a, count, arr);
    }
}

/* ---- Wave ------------------------------------------------------------------ */

/* Wave's packed fields: number, element kind, offsets of its count and array. */
typedef struct {
    uint8_t fn, kind;
    uint16_t n_off, p_off;
} fb_rep;

#define REP(f, k, name) {f, k, offsetof(Gtrace__Wave, n_##name), offsetof(Gtrace__Wave, name)}
static const fb_rep wave_rep[] = {
    REP(5, K_U64, indirect_target), REP(6, K_U64, exec_at_delta), REP(7, K_F64, exec_val),
    REP(8, K_U32, mem_flags),       REP(9, K_U32, mem_bytes),      REP(10, K_F64, mem_exec),
    REP(11, K_U32, addr_kind),      REP(12, K_S64, addr_base_delta), REP(13, K_S64, addr_stride),
    REP(14, K_S64, addr_delta),     REP(15, K_U64, await_at_delta), REP(16, K_U64, await_len),
    REP(17, K_U64, await_pc),       REP(18, K_U32, await_kind),
};
#undef REP

/* A wave decoded by trc_fast_workgroup_lazy: its address deltas (field 14)
 * left as their varints, delta[0..delta_len) inside the message's bytes. */
typedef struct {
    Gtrace__Wave w; /* first: a Gtrace__Wave * to it is a pointer to this */
    const uint8_t *delta;
    size_t delta_len;
} fb_lazy_wave;

/* The varints in p[0..n): their count into *count; false when one is cut
 * off at the end, longer than 10 bytes or wider than 64 bits (what packed()
 * rejects). Eight bytes at a time: a varint ends at a byte below 0x80. */
static bool count_varints(const uint8_t *p, size_t n, size_t *count)
{
    size_t c = 0, run = 0; /* run: continuation bytes since the last varint's end */
    const uint8_t *q = p, *end = p + n;
    while (end - q >= 8) {
        uint64_t w;
        memcpy(&w, q, 8);
        uint64_t t = ~w & 0x8080808080808080ull; /* the bytes that end a varint */
        if (!t) {
            run += 8;
            if (run > 9)
                return false;
            q += 8;
            continue;
        }
        unsigned f = (unsigned)__builtin_ctzll(t) >> 3; /* later ones in the word are at most 8 bytes long */
        if (run + f > 9 || (run + f == 9 && q[f] > 1))
            return false;
        c += (size_t)trc_popcount64(t);
        run = 7 - ((63u - (unsigned)__builtin_clzll(t)) >> 3);
        q += 8;
    }
    for (; q < end; q++) {
        if (*q < 0x80) {
            if (run == 9 && *q > 1)
                return false;
            c++;
            run = 0;
        } else if (++run > 9) {
            return false;
        }
    }
    if (run)
        return false;
    *count = c;
    return true;
}

/* One Wave message into *w (initialised), its arrays from a; lazy: w is
 * an fb_lazy_wave and its address deltas stay varints. */
static bool wave_parse(const uint8_t *p, size_t n, Gtrace__Wave *w, fb_arena *a, bool lazy)
{
    const uint8_t *end = p + n;
    uint32_t seen = 0;
    while (p < end) {
        fb_field f;
        if (!rd_field_once(&p, end, 19, &seen, &f))
            return false;
        const uint32_t fn = f.fn, wt = f.wt;
        const uint64_t v = f.v;
        const uint8_t *lp = f.lp;
        const size_t ln = f.ln;
        if (fn == 14 && lazy) {
            size_t count;
            if (wt != WT_LEN || !count_varints(lp, ln, &count))
                return false;
            fb_lazy_wave *lw = (fb_lazy_wave *)w;
            lw->delta = lp;
            lw->delta_len = ln;
            w->n_addr_delta = count;
            w->addr_delta = NULL;
            continue;
        }
        if (fn >= 5 && fn <= 18) {
            const fb_rep *r = &wave_rep[fn - 5];
            size_t count;
            void *arr;
            if (wt != WT_LEN || !packed(r->kind, lp, ln, a, &count, &arr))
                return false;
            *(size_t *)((char *)w + r->n_off) = count;
            *(void **)((char *)w + r->p_off) = arr;
            continue;
        }
        if (fn == 4) { /* branch_bits */
            if (wt != WT_LEN || (ln && !(w->branch_bits.data = fb_take(a, ln))))
                return false;
            w->branch_bits.len = ln;
            if (ln)
                memcpy(w->branch_bits.data, lp, ln);
            continue;
        }
        if (wt != WT_VARINT || (fn != 2 && v >> 32))
            return false;
        switch (fn) {
        case 1: w->wave_in_wg = (uint32_t)v; break;
        case 2: w->n_instr = v; break;
        case 3: w->n_branch = (uint32_t)v; break;
        case 19: w->n_segments = (uint32_t)v; break;
        default: return false;
        }
    }
    return true;
}

/* ---- WaveData ---------------------------------------------------------------- */

/* One WaveData message into *w (initialised). Its bytes fields point into
 * the caller's buffer (which outlives the message). */
static bool wavedata_parse(const uint8_t *p, size_t n, Gtrace__WaveData *w, fb_arena *a)
{
    const uint8_t *end = p + n;
    uint32_t seen = 0;
    while (p < end) {
        fb_field f;
        if (!rd_field_once(&p, end, 10, &seen, &f))
            return false;
        const uint32_t fn = f.fn, wt = f.wt;
        const uint64_t v = f.v;
        const uint8_t *lp = f.lp;
        const size_t ln = f.ln;
        if (fn == 1) {
            if (wt != WT_VARINT || v >> 32)
                return false;
            w->wave_in_wg = (uint32_t)v;
            continue;
        }
        if (wt != WT_LEN)
            return false;
        if (fn == 10) { /* 2.6 load_host: a bit per op */
            w->load_host.len = ln;
            w->load_host.data = ln ? (uint8_t *)lp : NULL;
            continue;
        }
        if (fn == 9) { /* 2.5 store_ops (a store frame's): a Wave of memory ops */
            Gtrace__Wave *so = fb_take(a, sizeof *so);
            if (!so)
                return false;
            *so = (Gtrace__Wave)GTRACE__WAVE__INIT;
            if (!wave_parse(lp, ln, so, a, false))
                return false;
            w->store_ops = so;
            continue;
        }
        if (fn >= 4 && fn <= 7) {
            ProtobufCBinaryData *d = fn == 4 ? &w->load_data : fn == 5 ? &w->store_data
                                   : fn == 6 ? &w->load_data_shuf4 : &w->store_data_shuf4;
            d->len = ln;
            d->data = ln ? (uint8_t *)lp : NULL;
            continue;
        }
        size_t count;
        void *arr;
        if (!packed(fn == 8 ? K_F64 : K_U32, lp, ln, a, &count, &arr))
            return false;
        if (fn == 2)
            w->n_load_len = count, w->load_len = arr;
        else if (fn == 3)
            w->n_store_len = count, w->store_len = arr;
        else
            w->n_load_hash = count, w->load_hash = arr;
    }
    return true;
}

/* ---- the top-level messages -------------------------------------------------- */

/* Workgroup (is_data = 0) or WorkgroupData (1): kernel_id = 1, wg_id = 2
 * (packed), then wave_count = 3 and waves = 4 (Workgroup) or waves = 3
 * (WorkgroupData). A first pass counts the waves; the arrays then take at
 * most 12 bytes per byte of the message (an element of at most 8 bytes per
 * byte of varint, and each array's rounding to 8 bytes per field of at least
 * 2 bytes). */
static void *top_decode(const uint8_t *p, size_t n, int is_data, bool lazy)
{
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    return NULL; /* fixed64 fields are copied as they lie: protobuf-c decodes them */
#endif
    const uint8_t *end = p + n, *q;
    uint32_t seen = 0;
    fb_field f;
    size_t nw = 0;
    const uint32_t waves_fn = is_data ? 3 : 4;
    const size_t msg = is_data ? sizeof(Gtrace__WorkgroupData) : sizeof(Gtrace__Workgroup);
    const size_t wmsg = is_data ? sizeof(Gtrace__WaveData) : lazy ? sizeof(fb_lazy_wave) : sizeof(Gtrace__Wave);
    for (q = p; q < end;) {
        if (!rd_field(&q, end, &f))
            return NULL;
        if (f.fn == waves_fn) {
            if (f.wt != WT_LEN)
                return NULL;
            nw++;
            continue;
        }
        if (f.fn > 3 || (seen >> f.fn & 1) || (f.fn == 2 ? f.wt != WT_LEN : f.wt != WT_VARINT || f.v >> 32))
            return NULL;
        seen |= 1u << f.fn;
    }
    if (n > (SIZE_MAX - 64) / 16 || nw > SIZE_MAX / 4 / (wmsg + 16 + sizeof(Gtrace__Wave)))
        return NULL;
    /* (a WaveData's 2.5 store_ops: one Wave more per wave) */
    const size_t extra = is_data ? (sizeof(Gtrace__Wave) + 7) & ~(size_t)7 : 0;
    size_t total = ((msg + 7) & ~(size_t)7) + nw * (8 + ((wmsg + 7) & ~(size_t)7) + extra) + 12 * n + 64;
    fb_arena a = {malloc(total), 0, total};
    if (!a.p)
        return NULL;
    void *m = fb_take(&a, msg);
    void **wv = nw ? fb_take(&a, nw * sizeof *wv) : NULL;
    Gtrace__Workgroup *wg = m;
    Gtrace__WorkgroupData *wd = m;
    if (is_data) {
        *wd = (Gtrace__WorkgroupData)GTRACE__WORKGROUP_DATA__INIT;
        wd->n_waves = nw;
        wd->waves = (Gtrace__WaveData **)wv;
    } else {
        *wg = (Gtrace__Workgroup)GTRACE__WORKGROUP__INIT;
        wg->n_waves = nw;
        wg->waves = (Gtrace__Wave **)wv;
    }
    size_t i = 0;
    for (q = p; q < end;) {
        if (!rd_field(&q, end, &f))
            goto fail;
        if (f.fn == waves_fn) {
            if (i >= nw || !(wv[i] = fb_take(&a, wmsg)))
                goto fail;
            if (is_data) {
                Gtrace__WaveData *w = wv[i];
                *w = (Gtrace__WaveData)GTRACE__WAVE_DATA__INIT;
                if (!wavedata_parse(f.lp, f.ln, w, &a))
                    goto fail;
            } else {
                Gtrace__Wave *w = wv[i];
                *w = (Gtrace__Wave)GTRACE__WAVE__INIT;
                if (lazy)
                    ((fb_lazy_wave *)w)->delta = NULL, ((fb_lazy_wave *)w)->delta_len = 0;
                if (!wave_parse(f.lp, f.ln, w, &a, lazy))
                    goto fail;
            }
            i++;
        } else if (f.fn == 2) {
            size_t nid;
            void *id;
            if (!packed(K_U32, f.lp, f.ln, &a, &nid, &id))
                goto fail;
            if (is_data)
                wd->n_wg_id = nid, wd->wg_id = id;
            else
                wg->n_wg_id = nid, wg->wg_id = id;
        } else if (f.fn == 1) {
            if (is_data)
                wd->kernel_id = (uint32_t)f.v;
            else
                wg->kernel_id = (uint32_t)f.v;
        } else if (f.fn == 3 && !is_data) {
            wg->wave_count = (uint32_t)f.v;
        }
    }
    if (i == nw)
        return m;
fail:
    free(a.p);
    return NULL;
}

Gtrace__Workgroup *trc_fast_workgroup(const uint8_t *p, size_t n) { return top_decode(p, n, 0, false); }

Gtrace__Workgroup *trc_fast_workgroup_lazy(const uint8_t *p, size_t n) { return top_decode(p, n, 0, true); }

Gtrace__WorkgroupData *trc_fast_workgroup_data(const uint8_t *p, size_t n) { return top_decode(p, n, 1, false); }

bool trc_fast_wave_delta(const Gtrace__Wave *w, const uint8_t **p, const uint8_t **end)
{
    if (!w->n_addr_delta || w->addr_delta)
        return false; /* decoded (a count without an array: only a lazy wave's) */
    const fb_lazy_wave *lw = (const fb_lazy_wave *)w;
    *p = lw->delta;
    *end = lw->delta + lw->delta_len;
    return true;
}

/* The zigzag varint at *q, checked by count_varints (ends before the
 * stream does, at most 10 bytes, at most 64 bits). */
static inline int64_t rd_delta(const uint8_t **pq)
{
    const uint8_t *q = *pq;
    uint64_t v = q[0];
    if (v < 0x80) {
        *pq = q + 1;
    } else {
        v &= 0x7f;
        unsigned i = 1;
        for (;; i++) {
            uint64_t b = q[i];
            v |= (b & 0x7f) << (7 * i);
            if (b < 0x80)
                break;
        }
        *pq = q + i + 1;
    }
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

const uint8_t *trc_fast_deltas_fill(uint64_t *addr, uint32_t cnt, const uint8_t *q, const uint8_t *end)
{
    uint64_t x = addr[0];
    uint32_t k = 1;
    while (k <= cnt) {
        if (cnt - k >= 7 && end - q >= 8) {
            uint64_t w;
            memcpy(&w, q, 8);
            if (!(w & 0x8080808080808080ull)) { /* eight one-byte deltas */
                for (unsigned b = 0; b < 8; b++) {
                    uint64_t v = q[b];
                    x += (uint64_t)((int64_t)(v >> 1) ^ -(int64_t)(v & 1));
                    addr[k + b] = x;
                }
                q += 8;
                k += 8;
                continue;
            }
        }
        x += (uint64_t)rd_delta(&q);
        addr[k++] = x;
    }
    return q;
}

const uint8_t *trc_fast_deltas_skip(uint32_t cnt, const uint8_t *q, const uint8_t *end)
{
    while (cnt && end - q >= 8) {
        uint64_t w;
        memcpy(&w, q, 8);
        uint64_t t = ~w & 0x8080808080808080ull;
        unsigned pc = (unsigned)trc_popcount64(t);
        if (pc < cnt) {
            cnt -= pc;
            q += 8;
            continue;
        }
        for (unsigned k = 1; k < cnt; k++)
            t &= t - 1; /* the cnt-th end in the word */
        return q + ((unsigned)__builtin_ctzll(t) >> 3) + 1;
    }
    for (; cnt; q++)
        if (*q < 0x80)
            cnt--;
    return q;
}
