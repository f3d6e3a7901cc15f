/*
 * perform.c - the functional "perform" of memory accesses: a memory access
 * in flight (rp_access) is applied where the model performs it, on the data
 * the model holds there (cache.c: loads on the L1's line, stores on every
 * level's copy, atomics on the L2 bank's line; LDS in the CU). Every value
 * the model's memory returns that the trace recorded goes to the
 * observers of RP_HOOK_VALUE (the data check, check.c); the polls of awaits
 * are the model's own waiting and are compared here (poll_seen). Also the
 * host's view of the hierarchy: host copies and memsets against DRAM
 * (rp_fmem) with the L2 write-back before device-to-host reads.
 */
#include "rp_sim_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- functional perform ------------------------------------------------------------ */

/* A value the model's memory returned, beside the recorded one: to the
 * observers of RP_HOOK_VALUE (the data check, check.c). */
static inline void value_seen(rp_sim *s, const rp_access *a, rp_value_kind kind, uint64_t addr, const uint8_t *got,
                              const uint8_t *exp, uint32_t len, uint32_t stride, uint32_t lanes)
{
    rp_value v = {kind, addr, got, exp, len, stride, lanes, NULL};
    const rp_cu *cu = a->w->cu; /* NULL in component tests */
    RP_HOOK_FIRE(&s->hooks, RP_HOOK_VALUE, rp_part_tls ? rp_part_tls->eng.now : s->eng.now,
                 cu ? cu->gpu : UINT32_MAX, cu ? cu->id : UINT32_MAX, a, &v, s);
}

/* A poll of an await (rp_access.poll) read data: compared with what was
 * recorded, a difference is no mismatch but tells the wave's walk that memory
 * changed (gcn_walk.h awaits). Returns true when a was a poll. The walk reads
 * aw_diff only after the access completed (s_waitcnt), and performs of
 * another partition happen before that completion crosses back. `checked`:
 * lanes this comparison covers (0 for a later part of a lane). addr: where
 * (a poll of runtime-written memory never differs: adopted). got/exp: the
 * n bytes read and recorded (exp NULL: nothing recorded, no difference). A
 * difference is soft (gcn_walk.h) when both are non-zero, n <= 8 and the
 * caller does not force it hard (a compare-and-swap, several lanes at once,
 * part of a lane); else it sets aw_hard too. */
static inline bool nonzero(const uint8_t *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (p[i])
            return true;
    return false;
}
static inline bool poll_seen(rp_sim *s, rp_access *a, uint64_t checked, uint64_t addr, const uint8_t *got,
                             const uint8_t *exp, uint32_t n, bool hard)
{
    if (!a->poll)
        return false;
    rp_chk(s)->polls_checked += checked;
    if (a->kind == RP_ACC_LDS ? s->lds_omitted : exp && rp_adopted(s, addr, n)) {
        /* memory the host writes during the kernel (the hostcall buffer's
         * ready flags), or an LDS whose values the trace does not hold
         * (--lds-values none): its writes are not in the trace, so the wait
         * goes as recorded: the template's poll sees the host's answer come
         * (memory changed), the way out's reads what the recording read
         * (adopted) */
        if (exp && got && memcmp(got, exp, n))
            rp_chk(s)->load_adopted++;
        if (a->poll == 1) {
            __atomic_store_n(&a->w->walk.aw_hard, 1, __ATOMIC_RELAXED);
            __atomic_store_n(&a->w->walk.aw_diff, 1, __ATOMIC_RELAXED);
        }
        return true;
    }
    if (exp && memcmp(got, exp, n)) {
        rp_chk(s)->poll_changes++;
        if (hard || n > 8 || !nonzero(got, n) || !nonzero(exp, n))
            __atomic_store_n(&a->w->walk.aw_hard, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&a->w->walk.aw_diff, 1, __ATOMIC_RELAXED);
    }
    return true;
}

/* [addr, addr + n) inside an LDS of `size` bytes, without overflow (the
 * addresses come from a trace, which may be hostile: addr + n can wrap). */
static inline bool lds_fits(uint64_t addr, uint64_t n, uint64_t size) { return addr <= size && n <= size - addr; }

static void lane_load(rp_sim *s, rp_access *a, uint8_t *lds, uint64_t lds_size, uint64_t addr,
                      const uint8_t *exp, uint32_t n)
{
    uint8_t got[64];
    if (n > sizeof got)
        n = sizeof got;
    if (!lds_fits(addr, n, lds_size)) {
        rp_chk(s)->lds_unchecked++;
        return;
    }
    memcpy(got, lds + addr, n);
    if (poll_seen(s, a, 1, addr, got, exp, n, false))
        return;
    value_seen(s, a, RP_VALUE_LDS, addr, got, exp, n, n, 1);
}

/* memcpy of n bytes, inlined for the usual element sizes (a byte to a qword) */
static inline void copy_small(uint8_t *dst, const uint8_t *src, uint32_t n)
{
    switch (n) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, n); break;
    }
}

static inline void lane_store(rp_sim *s, uint8_t *lds, uint64_t lds_size, uint64_t addr, const uint8_t *src,
                              uint32_t n)
{
    if (lds_fits(addr, n, lds_size))
        copy_small(lds + addr, src, n);
    else
        rp_chk(s)->lds_unchecked++;
}

/* An LDS load checked at once, the usual case: the lanes of mask (a run of
 * active-lane ordinals), each with n_el elements of esz bytes (the second
 * delta bytes after the first: ds_read2), all inside the LDS, gathered in
 * the recorded layout (lane k's elements at k n_el esz) and equal to the
 * record: one value of n_el x lanes elements for the observers; returns
 * true. false (nothing reported): a lane differs or lies outside the LDS,
 * or mask is not one run; the caller then goes lane by lane, each
 * difference at its own address. n_el esz <= 16. Inlined: n_el is a
 * constant at each caller. */
static inline __attribute__((always_inline)) bool lds_load_whole(rp_sim *s, rp_access *a, const uint8_t *lds,
                                                                 uint64_t lds_size, const uint8_t *data,
                                                                 uint64_t mask, uint32_t n_el, uint32_t esz,
                                                                 int32_t delta)
{
    const trc_mem_op *op = a->op;
    if (!mask)
        return false;
    uint32_t first = (uint32_t)__builtin_ctzll(mask), bpl = n_el * esz;
    uint64_t run = mask >> first;
    if (run & (run + 1))
        return false;
    uint32_t n = trc_popcount64(run);
    uint8_t got[64 * 16];
    for (uint32_t i = 0; i < n; i++) {
        uint64_t ak = trc_mo_addr(op, first + i);
        for (uint32_t el = 0; el < n_el; el++) {
            uint64_t ae = ak + (el ? (uint64_t)(int64_t)delta : 0);
            if (!lds_fits(ae, esz, lds_size))
                return false;
            copy_small(got + (size_t)i * bpl + el * esz, lds + ae, esz);
        }
    }
    const uint8_t *exp = data + (size_t)first * bpl;
    if (memcmp(got, exp, (size_t)n * bpl))
        return false;
    value_seen(s, a, RP_VALUE_LDS, trc_mo_addr(op, first), got, exp, n * bpl, esz, n_el * n);
    return true;
}

/* Atomic of active lane k on the w bytes at p (an L2 line or the LDS), with
 * the emulator's arithmetic; checks the returned (old) value. */
static void lane_atomic(rp_sim *s, rp_access *a, uint8_t *p, uint64_t addr, uint32_t k)
{
    const trc_mem_op *op = a->op;
    unsigned w = a->atomic_bytes;
    uint64_t old = 0, src = 0, cmp = 0;
    if (w == 0 || w > 8)
        return;
    memcpy(&old, p, w);
    if (op->store_data) {
        if (a->atomic_op == GCN_AT_CMPSWAP) {
            memcpy(&src, op->store_data + (size_t)k * 2 * w, w);
            memcpy(&cmp, op->store_data + (size_t)k * 2 * w + w, w);
        } else {
            memcpy(&src, op->store_data + (size_t)k * w, w);
        }
    }
    uint64_t nv = gcn_atomic_apply((gcn_atomic_op)a->atomic_op, w, old, src, cmp);
    if (a->atomic_op == GCN_AT_CMPSWAP && a->kind != RP_ACC_LDS && !a->w->wg->k->cas_seen)
        __atomic_store_n(&a->w->wg->k->cas_seen, 1, __ATOMIC_RELAXED);
    /* a compare-and-swap that failed in the recording reads only: the wave
     * went on as a failure (its loop tried again), so it must not write here
     * even where this order lets it (rp_atomic_ready) */
    if (!a->poll && a->atomic_op == GCN_AT_CMPSWAP && op->store_data && rp_cas_failed_in_recording(op, k, w, cmp))
        nv = old;
    if (a->poll) {
        /* an await's atomic: before the recorded way out (poll 1) it changed
         * nothing in the recording, so it reads only; in that way out it
         * applies (a lock is taken) */
        poll_seen(s, a, 1, addr, (const uint8_t *)&old, op->load_data ? op->load_data + (size_t)k * w : NULL, w,
                  a->atomic_op == GCN_AT_CMPSWAP);
        if (a->poll == 2)
            memcpy(p, &nv, w);
        return;
    }
    if (op->load_data)
        value_seen(s, a, RP_VALUE_ATOMIC, addr, (const uint8_t *)&old, op->load_data + (size_t)k * w, w, w, 1);
    memcpy(p, &nv, w);
}

bool rp_atomic_ready(rp_sim *s, rp_access *a, uint64_t mask, uint64_t line, const uint8_t *data, uint32_t lb)
{
    (void)s;
    const trc_mem_op *op = a->op;
    unsigned w = a->atomic_bytes;
    uint8_t buf[512];
    if (a->poll || a->atomic_op != GCN_AT_CMPSWAP || !op->load_data || !op->store_data || w == 0 || w > 8 ||
        lb > sizeof buf)
        return true;
    /* the lanes in order on a copy of the line, as lane_atomic applies them */
    memcpy(buf, data, lb);
    uint64_t end = line + lb;
    while (mask) {
        uint32_t k = (uint32_t)__builtin_ctzll(mask);
        mask &= mask - 1;
        uint64_t addr = trc_mo_addr(op, k), old = 0, src = 0, cmp = 0;
        if (addr < line || addr + w > end)
            continue;
        memcpy(&old, buf + (addr - line), w);
        memcpy(&src, op->store_data + (size_t)k * 2 * w, w);
        memcpy(&cmp, op->store_data + (size_t)k * 2 * w + w, w);
        if (rp_cas_failed_in_recording(op, k, w, cmp))
            continue; /* reads only */
        if (old != cmp)
            return false;
        memcpy(buf + (addr - line), &src, w);
    }
    return true;
}

/* Active-lane ordinals of a VMEM/SMEM access whose bytes cross a line
 * boundary (computed once per access). */
uint64_t rp_access_cross_mask(rp_access *a, uint32_t lb)
{
    if (a->xmask_done)
        return a->xmask;
    uint32_t bpl = a->bpl, n = a->lanes;
    uint64_t x = 0;
    if (a->kind == RP_ACC_SMEM)
        n = 1;
    if (n > 64)
        n = 64;
    if (bpl <= lb && !(bpl & (bpl - 1))) {
        /* the usual case: naturally aligned power-of-two elements never cross
         * a (power-of-two) line; strided lanes are all aligned when the first
         * one and the stride are, else one vectorisable OR over the addresses */
        uint64_t o = a->strided ? a->base | (n >= 2 ? a->stride : 0) : 0;
        if (!a->strided)
            for (uint32_t k = 0; k < n; k++)
                o |= a->addr[k];
        if (!(o & (bpl - 1))) {
            a->xmask_done = 1;
            return a->xmask = 0;
        }
    }
    for (uint32_t k = 0; k < n; k++)
        if ((rp_acc_addr(a, k) & (lb - 1)) + bpl > lb)
            x |= 1ull << k;
    a->xmask = x;
    a->xmask_done = 1;
    return x;
}

bool rp_perform_line(rp_sim *s, rp_access *a, uint64_t mask, uint64_t line, uint8_t *data, uint32_t lb,
                     uint8_t *bm)
{
    uint32_t bpl = a->bpl;
    bool whole = false;
    if (!bpl || a->kind == RP_ACC_LDS)
        return false;
    uint64_t end = line + lb;
    if (a->flags & TRC_MO_ATOMIC) {
        unsigned w = a->atomic_bytes;
        while (mask) {
            uint32_t k = (uint32_t)__builtin_ctzll(mask);
            mask &= mask - 1;
            uint64_t addr = rp_acc_addr(a, k);
            if (addr >= line && addr + w <= end)
                lane_atomic(s, a, data + (addr - line), addr, k);
            else
                rp_chk(s)->walk_errors++; /* atomics are naturally aligned: never crosses a line */
        }
        return false;
    }
    bool load = (a->flags & TRC_MO_LOAD) != 0;
    const uint8_t *src = load ? a->load_data : (a->flags & TRC_MO_STORE) ? a->store_data : NULL;
    if (!src && load && a->hashed) {
        /* a hashed load (trace 2.2): the bytes this line returns gathered by
         * lane, hashed when the access completes (rp_load_hash_check) */
        uint64_t all = mask | rp_access_cross_mask(a, lb);
        while (all) {
            uint32_t k = (uint32_t)__builtin_ctzll(all);
            all &= all - 1;
            uint64_t addr = rp_acc_addr(a, k);
            uint64_t lo = addr > line ? addr : line, hi = addr + bpl < end ? addr + bpl : end;
            if (lo < hi)
                memcpy(a->hbuf + (size_t)k * bpl + (lo - addr), data + (lo - line), hi - lo);
        }
        return false;
    }
    if (!src) {
        /* nothing recorded (private memory without --scratch-data): a load's
         * lanes whose first byte is here are counted, not checked */
        if (load && mask)
            value_seen(s, a, RP_VALUE_LOAD, line, data, NULL, 0, 0, trc_popcount64(mask));
        return false;
    }
    uint64_t all = mask | rp_access_cross_mask(a, lb);
    bool smem = a->kind == RP_ACC_SMEM;
    while (all) {
        uint32_t k = (uint32_t)__builtin_ctzll(all), j = k + 1;
        uint64_t addr = smem ? a->base : rp_acc_addr(a, k);
        uint64_t lo = addr > line ? addr : line, hi = addr + bpl < end ? addr + bpl : end;
        if (lo >= hi) { /* a crossing lane of another line */
            all &= all - 1;
            continue;
        }
        if (lo == addr && hi == addr + bpl && !smem) {
            /* Run of consecutive lanes with contiguous addresses inside the
             * line: one block (same result as lane by lane: they do not
             * overlap). */
            uint64_t fit = (end - addr) / bpl, want = addr + bpl;
            uint32_t maxj = fit >= 64 - k ? 64 : k + (uint32_t)fit;
            if (a->strided && a->stride == bpl) {
                /* unit stride: the run is the lanes of `all` set from k on */
                uint64_t r = ~(all >> k);
                j = r ? k + (uint32_t)__builtin_ctzll(r) : 64;
                if (j > maxj)
                    j = maxj;
            } else
                while (j < maxj && (all >> j & 1) && rp_acc_addr(a, j) == want) {
                    j++;
                    want += bpl;
                }
        }
        all &= j < 64 ? ~((1ull << j) - 1) : 0;
        uint32_t len = (uint32_t)(j > k + 1 ? (uint64_t)(j - k) * bpl : hi - lo);
        uint8_t *d = data + (lo - line);
        const uint8_t *x = src + (size_t)k * bpl + (lo - addr);
        if (!load) {
            memcpy(d, x, len);
            whole |= len == lb;
            if (bm)
                for (uint64_t i = lo - line; i < lo - line + len; i++)
                    bm[i >> 3] |= (uint8_t)(1u << (i & 7));
            continue;
        }
        /* an await's poll: counted apart, a difference tells the walk */
        if (poll_seen(s, a, lo == addr ? j - k : 0, lo, d, x, len, j > k + 1 || lo != addr || hi != addr + bpl))
            continue;
        /* lanes are counted where their first byte is; a run of several
         * lanes is contiguous: lane i's bytes at (i - k) * bpl */
        value_seen(s, a, RP_VALUE_LOAD, lo, d, x, len, j > k + 1 ? bpl : len, lo == addr ? j - k : 0);
    }
    return whole;
}

/* A hashed LDS load (trace 2.2): the lanes' bytes (ds_read2: element 0 then
 * 1) gathered from the LDS in active-lane order and their hash checked at
 * once (an LDS access is performed when it issues). */
static void lds_hashed(rp_sim *s, rp_access *a, const uint8_t *lds, uint64_t lds_size, uint64_t mask)
{
    const trc_mem_op *op = a->op;
    uint32_t bpl = op->bytes_per_lane;
    uint32_t esz = a->ds2 ? a->ds2_esz : bpl, nel = a->ds2 ? 2 : 1;
    if (nel * esz != bpl) {
        rp_chk(s)->lds_unchecked++;
        return;
    }
    while (mask) {
        uint32_t k = (uint32_t)__builtin_ctzll(mask);
        mask &= mask - 1;
        for (uint32_t el = 0; el < nel; el++) {
            uint64_t addr = trc_mo_addr(op, k) + (el ? (uint64_t)(int64_t)a->ds2_delta : 0);
            if (!lds_fits(addr, esz, lds_size)) {
                rp_chk(s)->lds_unchecked++;
                a->hashed = 0;
                return;
            }
            memcpy(a->hbuf + (size_t)k * bpl + el * esz, lds + addr, esz);
        }
    }
    rp_load_hash_check(s, a);
}

void rp_load_hash_check(void *owner, rp_access *a)
{
    rp_sim *s = owner;
    const trc_mem_op *op = a->op;
    uint32_t n = trc_popcount64(op->exec);
    uint64_t got = trc_load_hash(a->hbuf, (size_t)n * op->bytes_per_lane), exp = op->load_hash;
    a->hashed = 0;
    /* lanes counted as the values' check counts them (ds_read2: each element) */
    uint32_t lanes = a->kind == RP_ACC_LDS && a->ds2 ? 2 * n : n;
    value_seen(s, a, a->kind == RP_ACC_LDS ? RP_VALUE_LDS_HASH : RP_VALUE_LOAD_HASH, n ? trc_mo_addr(op, 0) : 0,
               (const uint8_t *)&got, (const uint8_t *)&exp, 8, 8, lanes);
}

/* LDS accesses (VMEM and SMEM ones are performed in the caches). */
void rp_perform(rp_sim *s, rp_access *a, uint64_t mask)
{
    const trc_mem_op *op = a->op;
    uint32_t bpl = op->bytes_per_lane;
    if (a->kind != RP_ACC_LDS) {
        rp_sim_fail(s, "rp_perform: vector and scalar memory accesses are performed in the caches "
                       "(rp_perform_line), not here");
        return;
    }
    if (s->lds_omitted) {
        /* trace 2.3 recorded with --lds-values none: addresses only, so
         * nothing to write or compare; an await's poll ends as recorded */
        if (a->poll)
            poll_seen(s, a, 1, 0, NULL, NULL, 0, false);
        return;
    }
    uint8_t *lds = a->w->wg->lds;
    uint64_t lds_size = a->w->wg->lds_size;
    if (!lds) {
        rp_chk(s)->lds_unchecked++;
        return;
    }
    if (a->hashed) {
        lds_hashed(s, a, lds, lds_size, mask);
        return;
    }
    if (a->ds2 && !(op->flags & TRC_MO_ATOMIC)) {
        /* ds_read2/write2: the recorded address is element 0's; element 1
         * lies ds2_delta bytes away; each lane's data holds element 0 then 1. */
        uint32_t esz = a->ds2_esz;
        bool load = (op->flags & TRC_MO_LOAD) != 0;
        const uint8_t *data = load ? op->load_data : (op->flags & TRC_MO_STORE) ? op->store_data : NULL;
        if (!data || 2 * esz != bpl) {
            rp_chk(s)->lds_unchecked++;
            return;
        }
        if (load && !a->poll && esz <= 8 && lds_load_whole(s, a, lds, lds_size, data, mask, 2, esz, a->ds2_delta))
            return;
        while (mask) {
            uint32_t k = (uint32_t)__builtin_ctzll(mask);
            mask &= mask - 1;
            for (uint32_t el = 0; el < 2; el++) {
                uint64_t addr = trc_mo_addr(op, k) + (el ? (uint64_t)(int64_t)a->ds2_delta : 0);
                const uint8_t *d = data + (size_t)k * bpl + el * esz;
                if (load)
                    lane_load(s, a, lds, lds_size, addr, d, esz);
                else if (!el || !s->cfg.debug_skip_ds2_write)
                    lane_store(s, lds, lds_size, addr, d, esz);
            }
        }
        return;
    }
    if (!(op->flags & TRC_MO_ATOMIC) && bpl) {
        /* contiguous in-bounds runs at once */
        bool load = (op->flags & TRC_MO_LOAD) != 0;
        const uint8_t *data = load ? op->load_data : (op->flags & TRC_MO_STORE) ? op->store_data : NULL;
        if (!data)
            return;
        /* a gather (table lookups, strides other than the element's) */
        if (load && !a->poll && bpl <= 16 && (!op->addr_strided || op->addr_stride != bpl) &&
            lds_load_whole(s, a, lds, lds_size, data, mask, 1, bpl, 0))
            return;
        while (mask) {
            uint32_t k = (uint32_t)__builtin_ctzll(mask), j = k + 1;
            uint64_t addr = trc_mo_addr(op, k);
            for (uint64_t want = addr + bpl; j < 64 && (mask >> j & 1) && trc_mo_addr(op, j) == want; want += bpl)
                j++;
            uint32_t nlanes = j - k;
            uint64_t len = (uint64_t)nlanes * bpl;
            const uint8_t *src = data + (size_t)k * bpl;
            if (addr >= lds_size || len > lds_size - addr || bpl > 64) {
                /* out of bounds somewhere (or odd size): lane by lane */
                nlanes = 1;
                j = k + 1;
                if (load)
                    lane_load(s, a, lds, lds_size, addr, src, bpl);
                else
                    lane_store(s, lds, lds_size, addr, src, bpl);
            } else if (!load) {
                memcpy(lds + addr, src, len);
            } else if (a->poll) { /* an await's polls: the model's own waiting, lane by lane */
                for (uint32_t i = k; i < j; i++)
                    lane_load(s, a, lds, lds_size, trc_mo_addr(op, i), data + (size_t)i * bpl, bpl);
            } else {
                value_seen(s, a, RP_VALUE_LDS, addr, lds + addr, src, (uint32_t)len, bpl, nlanes);
            }
            mask &= j < 64 ? ~((1ull << j) - 1) : 0;
        }
        return;
    }
    while (mask) {
        uint32_t k = (uint32_t)__builtin_ctzll(mask);
        mask &= mask - 1;
        uint64_t addr = trc_mo_addr(op, k);
        if (op->flags & TRC_MO_ATOMIC) {
            if (lds_fits(addr, a->atomic_bytes, lds_size))
                lane_atomic(s, a, lds + addr, addr, k);
            else
                rp_chk(s)->lds_unchecked++;
        } else if (op->flags & TRC_MO_LOAD) {
            if (op->load_data)
                lane_load(s, a, lds, lds_size, addr, op->load_data + (size_t)k * bpl, bpl);
        } else if (op->flags & TRC_MO_STORE) {
            if (op->store_data)
                lane_store(s, lds, lds_size, addr, op->store_data + (size_t)k * bpl, bpl);
        }
    }
}

/* ---- the memory hierarchy seen from the host ------------------------------------------ */

/* The L2 bank of GPU g that owns addr (the cache behind its routing link). */
void rp_mem_read_line(rp_sim *s, uint64_t line, uint8_t *dst, uint32_t lb)
{
    rp_cache *c = rp_l2_bank(s, rp_gpu_of(s, line, 0), line);
    uint8_t *d = c ? rp_cache_line_data(c, line) : NULL;
    if (d)
        memcpy(dst, d, lb);
    else
        rp_fmem_read(s->mem, line, dst, lb);
}

uint64_t rp_mem_flush_l2(rp_sim *s, uint32_t gpu)
{
    uint64_t n = 0;
    if (gpu >= s->n_gpus)
        return 0;
    for (uint32_t b = 0; b < s->cfg.l2_banks; b++)
        n += rp_cache_writeback(&s->gpus[gpu].l2[b], 0, UINT64_MAX);
    return n;
}

/* Lines of [addr, addr + n) big enough to scan whole L2s instead of line by line. */
static bool big_range(rp_sim *s, uint64_t n)
{
    uint64_t ways = s->cfg.l2_size / s->cfg.l1v_line; /* lines of one GPU's L2 */
    return n / s->cfg.l1v_line > ways;
}

/* Write back the dirty L2 lines that hold bytes of [addr, addr + n) (the
 * flush before a D2H copy, or the source of a D2D copy, reads memory). */
static void flush_range(rp_sim *s, uint64_t addr, uint64_t n, uint32_t g)
{
    uint64_t lb = s->cfg.l1v_line;
    if (big_range(s, n)) {
        for (uint32_t i = 0; i < s->n_gpus; i++)
            for (uint32_t b = 0; b < s->cfg.l2_banks; b++)
                rp_cache_writeback(&s->gpus[i].l2[b], addr, n);
        return;
    }
    for (uint64_t l = addr & ~(lb - 1); l < addr + n; l += lb) {
        rp_cache *c = rp_l2_bank(s, rp_gpu_of(s, l, g), l);
        if (c)
            rp_cache_writeback(c, l, lb);
    }
}

/* After the host wrote [addr, addr + n) of DRAM: L2 copies of those bytes
 * take the new values (the rest of a dirty line stays dirty). L1s need
 * nothing: they are invalidated at the next kernel start. */
static void update_range(rp_sim *s, uint64_t addr, uint64_t n, uint32_t g)
{
    uint64_t lb = s->cfg.l1v_line, end = addr + n;
    for (uint64_t l = addr & ~(lb - 1); l < end; l += lb) {
        rp_cache *c = rp_l2_bank(s, rp_gpu_of(s, l, g), l);
        uint8_t *d = c ? rp_cache_line_data(c, l) : NULL;
        if (!d)
            continue;
        uint64_t lo = addr > l ? addr : l, hi = end < l + lb ? end : l + lb;
        rp_fmem_read(s->mem, lo, d + (lo - l), hi - lo);
    }
}

static void update_big(rp_sim *s, uint64_t addr, uint64_t n, uint32_t g)
{
    if (!big_range(s, n)) {
        update_range(s, addr, n, g);
        return;
    }
    /* scan every L2 line once instead of every line of the range */
    uint64_t lb = s->cfg.l1v_line, end = addr + n;
    for (uint32_t i = 0; i < s->n_gpus; i++)
        for (uint32_t b = 0; b < s->cfg.l2_banks; b++) {
            rp_cache *c = &s->gpus[i].l2[b];
            uint64_t ways = (uint64_t)c->sets * c->spec.assoc;
            for (uint64_t w = 0; w < ways; w++) {
                uint64_t l = c->tag[w] - 1;
                if (!c->tag[w] || l + lb <= addr || l >= end)
                    continue;
                uint64_t lo = addr > l ? addr : l, hi = end < l + lb ? end : l + lb;
                rp_fmem_read(s->mem, lo, c->data + (w << c->line_shift) + (lo - l), hi - lo);
            }
        }
}

int rp_mem_functional(rp_sim *s, uint32_t g, uint64_t addr, const uint8_t *src, uint32_t n, int atomic_op,
                      uint64_t asrc, uint64_t acmp)
{
    uint64_t lb = s->cfg.l1v_line, l = addr & ~(lb - 1);
    if (n == 0 || n > lb || addr - l > lb - n)
        return 0; /* crosses a line: not from a well-formed lane (the trace's checks refuse those) */
    rp_cache *c = rp_l2_bank(s, rp_gpu_of(s, l, g), l);
    if (!src && atomic_op == GCN_AT_NONE) { /* a load: the L2 allocates the line */
        if (c)
            rp_cache_functional_write(c, addr, NULL, n);
        return 0;
    }
    uint8_t v[8];
    if (atomic_op != GCN_AT_NONE) {
        if (n != 4 && n != 8)
            return 0;
        uint8_t *d = c ? rp_cache_line_data(c, l) : NULL;
        uint64_t old = 0;
        if (d)
            memcpy(&old, d + (addr - l), n);
        else
            rp_fmem_read(s->mem, addr, (uint8_t *)&old, n);
        uint64_t nv = gcn_atomic_apply((gcn_atomic_op)atomic_op, n, old, asrc, acmp);
        memcpy(v, &nv, n);
        src = v;
    }
    /* the L2 takes the write as a write miss or hit would (allocated, dirty):
     * its kernel-end write-back and the next kernel's hits are those of the
     * skipped work */
    if (c && !rp_cache_functional_write(c, addr, src, n))
        return 0;
    return rp_fmem_write(s->mem, addr, src, n);
}

/* ---- host memory events ---------------------------------------------------------- */

/* The bytes a device-to-host copy reads, block by block, beside what the
 * program received: to the observers of RP_HOOK_VALUE (the data check). */
static void d2h_check(rp_sim *s, const trc_event *ev)
{
    if (!ev->data)
        return;
    uint8_t buf[4096];
    for (uint64_t off = 0; off < ev->size; off += sizeof buf) {
        size_t n = ev->size - off < sizeof buf ? (size_t)(ev->size - off) : sizeof buf;
        rp_fmem_read(s->mem, ev->src + off, buf, n);
        rp_value v = {RP_VALUE_D2H, ev->src + off, buf, ev->data + off, (uint32_t)n, (uint32_t)n, 1, ev};
        RP_HOOK_FIRE(&s->hooks, RP_HOOK_VALUE, s->eng.now, UINT32_MAX, UINT32_MAX, NULL, &v, s);
    }
}

/* Functional effect of a host memory event (COPY of any kind, MEMSET) on
 * the modelled memory, and the D2H data check. DRAM is rp_fmem; the L2s are
 * kept consistent with it: a D2H copy (and a D2D source) first writes back
 * the dirty L2 lines it covers (the flush before a device-to-host copy;
 * nothing to do after a kernel-end flush, everything under
 * debug.skip_l2_flush, which is how that injected bug becomes visible), and
 * host writes into DRAM update the L2 copies of the bytes they write.
 * 0, or -1 out of memory. */
int rp_host_apply(rp_sim *s, const trc_event *ev)
{
    int r = 0;
    uint32_t g = s->cfg.topo_kind == RP_TOPO_DISCRETE && s->n_gpus ? ev->device % s->n_gpus : 0;
    if (s->um_moves && (ev->kind == TRC_EV_MEMSET || (ev->kind == TRC_EV_COPY && ev->copy_kind != TRC_COPY_D2H)))
        rp_um_host_write(&s->um, ev->addr, ev->size); /* read-only copies of what the host writes go */
    if (ev->kind == TRC_EV_MEMSET) {
        r = rp_fmem_fill(s->mem, ev->addr, ev->value, ev->size);
        update_big(s, ev->addr, ev->size, g);
    } else if (ev->kind == TRC_EV_COPY) {
        switch (ev->copy_kind) {
        case TRC_COPY_H2D:
        case TRC_COPY_INIT:
            if (ev->data) {
                r = rp_fmem_write(s->mem, ev->addr, ev->data, ev->size);
                update_big(s, ev->addr, ev->size, g);
            }
            break;
        case TRC_COPY_D2H:
            flush_range(s, ev->src, ev->size, g);
            d2h_check(s, ev);
            break;
        case TRC_COPY_D2D:
            flush_range(s, ev->src, ev->size, g);
            r = rp_fmem_copy(s->mem, ev->addr, ev->src, ev->size);
            update_big(s, ev->addr, ev->size, g);
            break;
        }
    }
    return r;
}
