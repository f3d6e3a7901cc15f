/*
 * trc_rec.c - recording one workgroup (the hot half of the writer): the
 * emulator's threads append each wave's branch outcomes, indirect targets,
 * EXEC changes and memory ops (addresses delta/stride-coded, data values
 * appended) to per-wave column vectors of their own trc_wg_rec, without any
 * lock; trc_wg_commit (trc_writer.c) hands the workgroup to the encoder.
 * Errors stick in the recorder (trc_rec_bad) and fail the commit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "traceformat/gtrace.pb-c.h"
#include "traceformat/trc_himg.h"
#include "traceformat/trc_writer_internal.h"

trc_wg_rec *trc_wg_rec_create(void)
{
    trc_wg_rec *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->cctx = trc_new_cctx(TRC_ZSTD_LEVEL_REC);
    g->cctx_data = trc_new_cctx(TRC_ZSTD_LEVEL_DATA);
    if (!g->cctx || !g->cctx_data) {
        ZSTD_freeCCtx(g->cctx);
        ZSTD_freeCCtx(g->cctx_data);
        free(g);
        return NULL;
    }
    return g;
}

void trc_free_waves(wave_rec *w, uint32_t cap)
{
    for (uint32_t i = 0; i < cap; i++) {
        wave_rec *v = &w[i];
        free(v->branch.p); free(v->indirect.p); free(v->exec_at_delta.p); free(v->exec_val.p);
        free(v->mflags.p); free(v->mbytes.p); free(v->akind.p); free(v->mexec.p);
        free(v->abase.p); free(v->astride.p); free(v->adelta.p);
        free(v->load_len.p); free(v->store_len.p); free(v->load.p); free(v->store.p); free(v->lhash.p);
        free(v->await_at_delta.p); free(v->await_len.p); free(v->await_pc.p); free(v->await_kind.p);
    }
    free(w);
}

void trc_wg_rec_destroy(trc_wg_rec *g)
{
    if (!g) return;
    trc_free_waves(g->w, g->cap_waves);
    if (g->spare) trc_free_piece(g->spare);
    free(g->segs.p);
    free(g->se_rec.p); free(g->se_dat.p); free(g->sz_rec.p); free(g->sz_dat.p);
    ZSTD_freeCCtx(g->cctx);
    ZSTD_freeCCtx(g->cctx_data);
    free(g);
}

void trc_rec_bad(trc_wg_rec *g, const char *what, uint32_t wave)
{
    if (g->bad) return;
    g->bad = 1;
    snprintf(g->bad_msg, sizeof g->bad_msg, "%s (kernel %u, workgroup %u,%u,%u, wave %u)", what,
             g->kernel_id, g->wg_id[0], g->wg_id[1], g->wg_id[2], wave);
}

void trc_wg_rec_begin(trc_wg_rec *g, uint32_t kernel_id, const uint32_t wg_id[3], uint32_t n_waves)
{
    g->kernel_id = kernel_id;
    memcpy(g->wg_id, wg_id, sizeof g->wg_id);
    g->wr = NULL;
    g->no_scratch_data = 0;
    g->no_lds_data = 0;
    g->hash_loads = 0;
    g->himg = NULL;
    g->segs.n = 0;
    g->bad = 0;
    g->bad_msg[0] = 0;
    if (n_waves > g->cap_waves) {
        wave_rec *nw = realloc(g->w, n_waves * sizeof *nw);
        if (nw) {
            g->w = nw;
            memset(nw + g->cap_waves, 0, (n_waves - g->cap_waves) * sizeof *nw);
            g->cap_waves = n_waves;
        } else {
            g->n_waves = 0;
            trc_rec_bad(g, "out of memory for wave buffers", n_waves);
            return;
        }
    }
    g->n_waves = n_waves;
    for (uint32_t i = 0; i < n_waves; i++) {
        wave_rec *v = &g->w[i];
        v->n_instr = 0;
        v->ended = 0;
        v->n_branch = 0;
        v->branch.n = v->indirect.n = v->exec_at_delta.n = v->exec_val.n = 0;
        v->last_exec_at = 0;
        v->mflags.n = v->mbytes.n = v->akind.n = v->mexec.n = 0;
        v->abase.n = v->astride.n = v->adelta.n = 0;
        v->last_base = 0;
        v->load_len.n = v->store_len.n = v->load.n = v->store.n = 0;
        v->lhash.n = 0;
        v->await_at_delta.n = v->await_len.n = v->await_pc.n = v->await_kind.n = 0;
        v->retry_set = 0;
        v->last_await_at = v->dyn_dropped = 0;
        v->await_state = 0;
        v->n_seg = 0;
        v->mem_spilled = 0;
    }
}

void trc_wg_rec_scratch_data(trc_wg_rec *g, int keep) { g->no_scratch_data = !keep; }
void trc_wg_rec_lds_data(trc_wg_rec *g, int keep) { g->no_lds_data = !keep; }
void trc_wg_rec_hash_loads(trc_wg_rec *g, int on) { g->hash_loads = on != 0; }
void trc_wg_rec_host_image(trc_wg_rec *g, trc_writer *w) { g->himg = w ? trc_writer_himg(w) : NULL; }

/* 2.6: whether the n active lanes' values (bpl bytes each, lane addresses
 * a[]) equal the host image's: runs of adjacent lanes compared at once;
 * linear: the lanes are one run (dwords at stride 4), not scanned for runs. */
static int host_values(const trc_himg *h, const uint64_t *a, uint32_t n, uint32_t bpl, const uint8_t *data,
                       int linear)
{
    if (linear) /* one run: the caller's guarantee (TRC_REC_LINEAR4, bpl 4) */
        return trc_himg_equal(h, a[0], (uint64_t)n * bpl, data);
    for (uint32_t k = 0; k < n;) {
        uint32_t e = k + 1;
        while (e < n && a[e] == a[e - 1] + bpl) e++;
        if (!trc_himg_equal(h, a[k], (uint64_t)(e - k) * bpl, data + (size_t)k * bpl)) return 0;
        k = e;
    }
    return 1;
}

uint64_t trc_load_hash(const void *data, size_t n)
{
    uint64_t h = XXH3_64bits(data, n);
    return h ? h : 1;
}

/* Format 2.2 hashed loads (trc_wg_rec_hash_loads): replaces the values of
 * v's plain loads by their hash (v->lhash, one entry per op) and compacts the
 * load stream; clears the TRC_REC_KEEP_VALUES marks. Run just before v's
 * columns are encoded (a segment, or the workgroup's end), when no await or
 * retry mark will rewind them any more. Entries of an earlier run are kept.
 * 0, or -1 out of memory. */
int trc_hash_loads(wave_rec *v)
{
    size_t m = v->mflags.n, had = v->lhash.n;
    if (m > v->lhash.cap && grow((void **)&v->lhash.p, &v->lhash.cap, m, 8) < 0)
        return -1;
    for (size_t j = had; j < m; j++) v->lhash.p[j] = 0;
    size_t rd = 0, wr = 0;
    int any = 0;
    for (size_t j = 0; j < m; j++) {
        uint32_t f = v->mflags.p[j], ll = v->load_len.p[j];
        v->mflags.p[j] = f & ~TRC_REC_KEEP_VALUES;
        if (ll && j >= had && !(f & TRC_REC_KEEP_VALUES) &&
            (f & (TRC_MO_LOAD | TRC_MO_ATOMIC | TRC_MO_SMEM | TRC_MO_SCRATCH)) == TRC_MO_LOAD) {
            v->lhash.p[j] = trc_load_hash(v->load.p + rd, ll);
            v->load_len.p[j] = 0;
            rd += ll;
            any = 1;
            continue;
        }
        if (ll && wr != rd) memmove(v->load.p + wr, v->load.p + rd, ll);
        rd += ll;
        wr += ll;
        any |= v->lhash.p[j] != 0;
    }
    v->load.n = wr;
    v->lhash.n = any ? m : 0; /* the column is written only when an op of this part is hashed */
    return 0;
}

void trc_wg_rec_stream(trc_wg_rec *g, trc_writer *w)
{
    g->wr = w;
    if (w) trc_writer_segment_limits(w, &g->seg_rec_lim, &g->seg_dat_lim);
}

/* ---- 2.0 wave segments -------------------------------------------------------- */

/* Raw bytes of v's record columns (the part not yet spilled). */
static inline size_t rec_bytes(const wave_rec *v)
{
    return v->branch.n + 8 * (v->indirect.n + 2 * v->exec_val.n + v->astride.n + v->adelta.n) +
           36 * v->mflags.n + 28 * v->await_len.n;
}

/* Spills what wave `wave` recorded so far as one segment: whole memory ops
 * and whole bytes of branch bits (a partial last byte stays), every delta
 * chain (EXEC, bases, awaits) continuing into the next part. An await or
 * retry mark in progress is given up (its iteration is partly spilled); the
 * wave is never cut while it drops repeats of a template (state 2). */
static void seg_spill(trc_wg_rec *g, uint32_t wave, wave_rec *v)
{
    uint32_t nb = v->n_branch & ~7u, part = v->n_branch & 7u;
    size_t bn = v->branch.n;
    v->n_branch = nb;
    v->branch.n = nb / 8;
    const char *why = NULL;
    uint64_t off = 0;
    if (g->segs.n == g->segs.cap && grow((void **)&g->segs.p, &g->segs.cap, g->segs.n + 1, sizeof *g->segs.p) < 0) {
        trc_rec_bad(g, "out of memory spilling a wave segment", wave);
        goto restore;
    }
    if (trc_encode_segment(g, wave, &why) < 0) {
        char m[120];
        snprintf(m, sizeof m, "cannot encode a wave segment: %s", why);
        trc_rec_bad(g, m, wave);
        goto restore;
    }
    if (trc_writer_spill(g->wr, &g->sz_rec, &g->sz_dat, &off) < 0) {
        g->wr = NULL; /* the writer has failed (and says why at the commit): keep the rest in memory */
        goto restore;
    }
    g->segs.p[g->segs.n++] = (seg_ref){wave, (uint32_t)g->sz_rec.n, (uint32_t)g->sz_dat.n, off};
    v->n_seg++;
    v->mem_spilled += v->mflags.n;
    if (part) v->branch.p[0] = v->branch.p[nb / 8];
    v->branch.n = part ? 1 : 0;
    v->n_branch = part;
    v->indirect.n = v->exec_at_delta.n = v->exec_val.n = 0;
    v->mflags.n = v->mbytes.n = v->akind.n = v->mexec.n = v->abase.n = 0;
    v->astride.n = v->adelta.n = 0;
    v->load_len.n = v->store_len.n = v->load.n = v->store.n = 0;
    v->lhash.n = 0;
    v->await_at_delta.n = v->await_len.n = v->await_pc.n = v->await_kind.n = 0;
    if (v->await_state == 1) v->await_state = 0;
    v->retry_set = 0;
    return;
restore:
    v->n_branch = nb + part;
    v->branch.n = bn;
}

/* Spills wave `wave` once its columns reach the segment limits. */
static inline void seg_check(trc_wg_rec *g, uint32_t wave, wave_rec *v)
{
    if (g->wr && v->await_state != 2 && !g->bad &&
        (v->load.n + v->store.n >= g->seg_dat_lim || rec_bytes(v) >= g->seg_rec_lim))
        seg_spill(g, wave, v);
}

/* Append helpers; a failed growth marks the workgroup bad (reported at
 * commit) and returns from the caller with `...` (empty in a void function).
 * The `likely` path is one compare and one store. */
#define PUSH_RET(g, wave, vec, val, ...)                                            \
    do {                                                                            \
        if ((vec).n == (vec).cap &&                                                 \
            grow((void **)&(vec).p, &(vec).cap, (vec).n + 1, sizeof *(vec).p) < 0) { \
            trc_rec_bad(g, "out of memory recording", wave);                            \
            return __VA_ARGS__;                                                     \
        }                                                                           \
        (vec).p[(vec).n++] = (val);                                                 \
    } while (0)
#define PUSH(g, wave, vec, val) PUSH_RET(g, wave, vec, val, )

static inline wave_rec *wave_of(trc_wg_rec *g, uint32_t wave)
{
    if (wave >= g->n_waves) {
        trc_rec_bad(g, "recording for a wave index beyond the workgroup's wave count", wave);
        return NULL;
    }
    return &g->w[wave];
}

void trc_rec_branch(trc_wg_rec *g, uint32_t wave, int taken)
{
    wave_rec *v = wave_of(g, wave);
    if (!v) return;
    uint32_t i = v->n_branch;
    if ((i & 7) == 0) {
        seg_check(g, wave, v);
        i = v->n_branch;
        PUSH(g, wave, v->branch, 0);
    }
    if (taken) v->branch.p[v->branch.n - 1] |= (uint8_t)(1u << (i & 7));
    v->n_branch = i + 1;
}

void trc_rec_indirect(trc_wg_rec *g, uint32_t wave, uint64_t target_vaddr)
{
    wave_rec *v = wave_of(g, wave);
    if (!v) return;
    PUSH(g, wave, v->indirect, target_vaddr);
}

void trc_rec_exec(trc_wg_rec *g, uint32_t wave, uint64_t dyn_index, uint64_t exec)
{
    wave_rec *v = wave_of(g, wave);
    if (!v) return;
    dyn_index -= v->dyn_dropped; /* record index (trc_rec_await_drop) */
    if (dyn_index < v->last_exec_at) {
        trc_rec_bad(g, "EXEC changes recorded out of order", wave);
        return;
    }
    PUSH(g, wave, v->exec_at_delta, dyn_index - v->last_exec_at);
    v->last_exec_at = dyn_index;
    PUSH(g, wave, v->exec_val, exec);
    seg_check(g, wave, v);
}

static int append_bytes(trc_wg_rec *g, uint32_t wave, u8v *vec, const void *src, size_t n)
{
    if (vec->n + n > vec->cap && grow((void **)&vec->p, &vec->cap, vec->n + n, 1) < 0) {
        trc_rec_bad(g, "out of memory recording data", wave);
        return -1;
    }
    memcpy(vec->p + vec->n, src, n);
    vec->n += n;
    return 0;
}

/* Makes room for one more memory op in the seven per-op columns of v (they
 * always hold the same count). Returns 0 or -1 (workgroup marked bad). */
static int reserve_mem_op(trc_wg_rec *g, uint32_t wave, wave_rec *v)
{
    size_t need = v->mflags.n + 1;
    if (need <= v->mflags.cap && need <= v->mbytes.cap && need <= v->akind.cap &&
        need <= v->mexec.cap && need <= v->abase.cap && need <= v->load_len.cap &&
        need <= v->store_len.cap)
        return 0;
    if (grow((void **)&v->mflags.p, &v->mflags.cap, need, 4) < 0 ||
        grow((void **)&v->mbytes.p, &v->mbytes.cap, need, 4) < 0 ||
        grow((void **)&v->akind.p, &v->akind.cap, need, 4) < 0 ||
        grow((void **)&v->mexec.p, &v->mexec.cap, need, 8) < 0 ||
        grow((void **)&v->abase.p, &v->abase.cap, need, 8) < 0 ||
        grow((void **)&v->load_len.p, &v->load_len.cap, need, 4) < 0 ||
        grow((void **)&v->store_len.p, &v->store_len.cap, need, 4) < 0) {
        trc_rec_bad(g, "out of memory recording", wave);
        return -1;
    }
    return 0;
}

/* Hot path: called for every executed memory instruction. In steady state it
 * allocates nothing; a full-EXEC op reads the caller's address array in
 * place (no gather) and the stride test is a branch-free reduction. */
void trc_rec_mem(trc_wg_rec *g, uint32_t wave, uint32_t flags, uint32_t bytes_per_lane,
                 uint64_t exec, const uint64_t *addr, const void *load_data,
                 const void *store_data)
{
    wave_rec *v = wave_of(g, wave);
    if (!v) return;
    /* hashed loads: which ops keep their values is marked in mflags until
     * trc_hash_loads runs (a glc load; the way out of a WAIT await) */
    uint32_t keep = g->hash_loads && ((flags & TRC_REC_KEEP_VALUES) || v->await_state == 2) ? TRC_REC_KEEP_VALUES : 0;
    int linear = (flags & TRC_REC_LINEAR4) != 0;
    flags &= ~(TRC_REC_KEEP_VALUES | TRC_REC_LINEAR4);
    if (flags & ~TRC_MO_KNOWN) { /* TRC_MO_HOST included: the recorder's own */
        trc_rec_bad(g, "memory op with unknown flag bits", wave);
        return;
    }
    if (bytes_per_lane > TRC_MAX_BYTES_PER_LANE) {
        trc_rec_bad(g, "memory op with more than 4096 bytes per lane", wave);
        return;
    }
    if ((flags & TRC_MO_SCRATCH) && g->no_scratch_data)
        load_data = store_data = NULL; /* private memory: addresses only */
    if ((flags & TRC_MO_LDS) && g->no_lds_data)
        load_data = store_data = NULL; /* --lds-values none: addresses only */
    uint64_t buf[64];
    const uint64_t *a;
    uint32_t n;
    if (exec == ~0ull) {
        a = addr;
        n = 64;
    } else if (exec && ((exec >> __builtin_ctzll(exec)) & ((exec >> __builtin_ctzll(exec)) + 1)) == 0) {
        /* contiguous active lanes: their addresses in place (no gather) */
        a = addr + __builtin_ctzll(exec);
        n = (uint32_t)trc_popcount64(exec);
    } else {
        n = 0;
        for (uint64_t m = exec; m; m &= m - 1) buf[n++] = addr[__builtin_ctzll(m)];
        a = buf;
        linear = 0; /* lanes with gaps: not strided by 4 once packed */
    }
    /* 2.6: a load that read what the host wrote there keeps a flag instead
     * of its values (the reader takes them from the trace's copies) */
    if (g->himg && load_data && n && trc_himg_load_ok(flags) &&
        host_values(g->himg, a, n, bytes_per_lane, load_data, linear && bytes_per_lane == 4)) {
        flags |= TRC_MO_HOST;
        load_data = NULL;
    }
    if (reserve_mem_op(g, wave, v) < 0) return;
    size_t j = v->mflags.n;
    v->mflags.p[j] = flags | keep;
    v->mbytes.p[j] = bytes_per_lane;
    v->mexec.p[j] = exec;
    uint64_t base = n ? a[0] : v->last_base;
    v->abase.p[j] = (int64_t)(base - v->last_base);
    v->last_base = base;
    uint32_t kind = GTRACE__ADDR_KIND__ADDR_STRIDED;
    if (n >= 2 && linear) {
        PUSH(g, wave, v->astride, (int64_t)4); /* the caller's guarantee (TRC_REC_LINEAR4) */
    } else if (n >= 2) {
        uint64_t s = a[1] - a[0], diff = 0;
        uint32_t k = 2;
#ifdef __SSE2__
        /* two lanes per step: (a[k] - a[k-1]) ^ s accumulated with OR */
        __m128i vs = _mm_set1_epi64x((long long)s), acc = _mm_setzero_si128();
        for (; k + 2 <= n; k += 2) {
            __m128i cur = _mm_loadu_si128((const __m128i *)(a + k));
            __m128i prev = _mm_loadu_si128((const __m128i *)(a + k - 1));
            acc = _mm_or_si128(acc, _mm_xor_si128(_mm_sub_epi64(cur, prev), vs));
        }
        uint64_t lo = (uint64_t)_mm_cvtsi128_si64(acc);
        uint64_t hi = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(acc, acc));
        diff = lo | hi;
#endif
        for (; k < n; k++) diff |= (a[k] - a[k - 1]) ^ s;
        if (diff == 0) {
            PUSH(g, wave, v->astride, (int64_t)s);
        } else {
            kind = GTRACE__ADDR_KIND__ADDR_DELTAS;
            if (v->adelta.n + n > v->adelta.cap &&
                grow((void **)&v->adelta.p, &v->adelta.cap, v->adelta.n + n, 8) < 0) {
                trc_rec_bad(g, "out of memory recording addresses", wave);
                return;
            }
            int64_t *d = v->adelta.p + v->adelta.n;
            for (uint32_t k = 1; k < n; k++) d[k - 1] = (int64_t)(a[k] - a[k - 1]);
            v->adelta.n += n - 1;
        }
    }
    v->akind.p[j] = kind;
    uint64_t ll = load_data ? trc_mo_load_len(flags, n, bytes_per_lane) : 0;
    uint64_t sl = store_data ? trc_mo_store_len(flags, n, bytes_per_lane) : 0;
    v->load_len.p[j] = (uint32_t)ll;
    v->store_len.p[j] = (uint32_t)sl;
    size_t nn = j + 1;
    v->mflags.n = v->mbytes.n = v->mexec.n = v->abase.n = v->akind.n = nn;
    v->load_len.n = v->store_len.n = nn;
    if (ll && append_bytes(g, wave, &v->load, load_data, ll) < 0) return;
    if (sl && append_bytes(g, wave, &v->store, store_data, sl) < 0) return;
    seg_check(g, wave, v);
}

void trc_rec_wave_end(trc_wg_rec *g, uint32_t wave, uint64_t n_instr)
{
    wave_rec *v = wave_of(g, wave);
    if (!v) return;
    if (v->ended) {
        trc_rec_bad(g, "wave ended twice", wave);
        return;
    }
    v->n_instr = n_instr - v->dyn_dropped;
    v->ended = 1;
}

/* ---- awaits (format 1.2) ------------------------------------------------------ */

static void mark(const wave_rec *v, struct trc_rec_mark *m)
{
    m->n_branch = v->n_branch;
    m->branch = v->branch.n;
    m->indirect = v->indirect.n;
    m->exec_at_delta = v->exec_at_delta.n;
    m->mem = v->mflags.n;
    m->astride = v->astride.n;
    m->adelta = v->adelta.n;
    m->load = v->load.n;
    m->store = v->store.n;
    m->last_exec_at = v->last_exec_at;
    m->last_base = v->last_base;
}

static void rewind_to(wave_rec *v, const struct trc_rec_mark *m)
{
    v->n_branch = m->n_branch;
    v->branch.n = m->branch;
    if (m->n_branch & 7) /* bits recorded after the mark in the last byte */
        v->branch.p[m->branch - 1] &= (uint8_t)((1u << (m->n_branch & 7)) - 1);
    v->indirect.n = m->indirect;
    v->exec_at_delta.n = v->exec_val.n = m->exec_at_delta;
    v->mflags.n = v->mbytes.n = v->akind.n = v->mexec.n = v->abase.n = m->mem;
    v->load_len.n = v->store_len.n = m->mem;
    v->astride.n = m->astride;
    v->adelta.n = m->adelta;
    v->load.n = m->load;
    v->store.n = m->store;
    v->last_exec_at = m->last_exec_at;
    v->last_base = m->last_base;
}

/* Hashed loads: the ops [from, end) are an await's polls and keep their
 * values (the replay compares what its polls read with them). */
static void keep_values(const trc_wg_rec *g, wave_rec *v, size_t from)
{
    if (g->hash_loads)
        for (size_t j = from; j < v->mflags.n; j++) v->mflags.p[j] |= TRC_REC_KEEP_VALUES;
}

/* Append await (at, len, pc, kind); the kinds column is written only once a
 * RETRY exists (all WAIT before it). 0 or -1 (out of memory). */
static int push_await(trc_wg_rec *g, uint32_t wave, wave_rec *v, uint64_t at, uint64_t len, uint64_t pc,
                      uint32_t kind)
{
    if (kind != TRC_AWAIT_WAIT && v->await_kind.n < v->await_len.n) {
        /* the first RETRY: the earlier awaits get their WAIT entries */
        while (v->await_kind.n < v->await_len.n)
            PUSH_RET(g, wave, v->await_kind, TRC_AWAIT_WAIT, -1);
    }
    PUSH_RET(g, wave, v->await_at_delta, at - v->last_await_at, -1);
    PUSH_RET(g, wave, v->await_len, len, -1);
    PUSH_RET(g, wave, v->await_pc, pc, -1);
    if (v->await_kind.n || kind != TRC_AWAIT_WAIT)
        PUSH_RET(g, wave, v->await_kind, kind, -1);
    v->last_await_at = at;
    return 0;
}

void trc_rec_await_mark(trc_wg_rec *g, uint32_t wave, uint64_t dyn)
{
    wave_rec *v = wave_of(g, wave);
    if (!v) return;
    mark(v, &v->await_mark);
    v->await_dyn = dyn - v->dyn_dropped;
    v->await_state = 1;
}

int trc_rec_await_commit(trc_wg_rec *g, uint32_t wave, uint64_t dyn, uint64_t head_pc)
{
    wave_rec *v = wave_of(g, wave);
    if (!v || v->await_state != 1) return 0;
    v->await_head = head_pc;
    uint64_t at = v->await_dyn, now = dyn - v->dyn_dropped;
    /* an atomic that returns nothing changed memory whatever it read: its
     * repeats are not the same iteration again (the wait is kept as is) */
    for (size_t j = v->await_mark.mem; j < v->mflags.n; j++)
        if ((v->mflags.p[j] & TRC_MO_ATOMIC) && !(v->mflags.p[j] & TRC_MO_LOAD)) {
            v->await_state = 0;
            return 0;
        }
    uint64_t prev_end = v->await_len.n ? v->last_await_at + v->await_len.p[v->await_len.n - 1] : 0;
    if (now <= at || at < prev_end) {
        v->await_state = 0;
        return 0;
    }
    if (push_await(g, wave, v, at, now - at, v->await_head, TRC_AWAIT_WAIT) < 0)
        return 0;
    keep_values(g, v, v->await_mark.mem); /* the template's polls */
    mark(v, &v->await_mark);
    v->await_dyn = now;
    v->await_state = 2;
    return 1;
}

void trc_rec_await_drop(trc_wg_rec *g, uint32_t wave, uint64_t dyn)
{
    wave_rec *v = wave_of(g, wave);
    if (!v || v->await_state != 2) return;
    uint64_t now = dyn - v->dyn_dropped;
    if (now < v->await_dyn) {
        trc_rec_bad(g, "await: an iteration dropped before its template ended", wave);
        return;
    }
    rewind_to(v, &v->await_mark);
    v->dyn_dropped += now - v->await_dyn;
    v->retry_set = 0; /* a retry mark inside what was dropped is gone with it */
}

void trc_rec_retry_mark(trc_wg_rec *g, uint32_t wave, uint64_t dyn)
{
    wave_rec *v = wave_of(g, wave);
    if (!v) return;
    mark(v, &v->retry_mark);
    v->retry_dyn = dyn - v->dyn_dropped;
    v->retry_set = 1;
}

/* First-lane address, load bytes and store bytes of the recorded ops
 * [from, v->mflags.n), walking the columns backwards. */
typedef struct op_view { uint64_t addr; const uint8_t *ld, *st; } op_view;
static void view_ops(const wave_rec *v, size_t from, op_view *o)
{
    uint64_t base = v->last_base;
    size_t lo = v->load.n, so = v->store.n;
    for (size_t j = v->mflags.n; j-- > from;) {
        lo -= v->load_len.p[j];
        so -= v->store_len.p[j];
        o[j - from] = (op_view){base, v->load_len.p[j] ? v->load.p + lo : NULL,
                                v->store_len.p[j] ? v->store.p + so : NULL};
        base -= (uint64_t)v->abase.p[j];
    }
}

#define RETRY_LOOKBACK 8u /* ops before the iteration searched for a compare value's source */

int trc_rec_retry_commit(trc_wg_rec *g, uint32_t wave, uint64_t dyn, uint64_t head_pc)
{
    wave_rec *v = wave_of(g, wave);
    if (!v || !v->retry_set) return 0;
    v->retry_set = 0;
    uint64_t at = v->retry_dyn, now = dyn - v->dyn_dropped;
    size_t m0 = v->retry_mark.mem, n = v->mflags.n;
    uint64_t prev_end = v->await_len.n ? v->last_await_at + v->await_len.p[v->await_len.n - 1] : 0;
    if (now <= at || at < prev_end || m0 >= n || n - m0 > 64)
        return 0;
    int loads = 0;
    for (size_t j = m0; j < n; j++) {
        uint32_t f = v->mflags.p[j];
        if (((f & TRC_MO_STORE) && !(f & TRC_MO_ATOMIC)) || ((f & TRC_MO_ATOMIC) && !(f & TRC_MO_LOAD)))
            return 0; /* not a pure poll */
        loads += (f & TRC_MO_LOAD) != 0;
    }
    if (!loads)
        return 0;
    /* a compare-and-swap whose compare value an earlier load of the same
     * address returned recomputes its operands when it fails (a CAS loop):
     * repeating the recorded one would wait for a value that may never come */
    size_t from = m0 > RETRY_LOOKBACK ? m0 - RETRY_LOOKBACK : 0;
    op_view o[64 + RETRY_LOOKBACK];
    view_ops(v, from, o);
    for (size_t j = m0; j < n; j++) {
        uint32_t f = v->mflags.p[j], b = v->mbytes.p[j];
        if (!(f & TRC_MO_CMPSWAP) || !o[j - from].st || b > 8)
            continue;
        const uint8_t *cmp = o[j - from].st + b;
        for (size_t i = from; i < j; i++)
            if (o[i - from].addr == o[j - from].addr && o[i - from].ld && v->mbytes.p[i] >= b &&
                !memcmp(o[i - from].ld, cmp, b))
                return 0;
    }
    if (push_await(g, wave, v, at, now - at, head_pc, TRC_AWAIT_RETRY) < 0)
        return 0;
    keep_values(g, v, m0);
    return 1;
}

void trc_rec_await_end(trc_wg_rec *g, uint32_t wave)
{
    wave_rec *v = wave_of(g, wave);
    if (v) v->await_state = 0;
}

