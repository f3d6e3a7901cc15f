/*
 * perform.c - the functional "perform" of memory accesses and the data-value
 * check: a memory access in flight (rp_access) is applied where the model
 * performs it (rp_sim.h: loads/stores at the L1s, atomics at the L2 bank,
 * LDS in the CU) and every loaded value is compared with the trace.
 */
#include "rp_sim.h"

#include <stdlib.h>
#include <string.h>

#define PRINT_BYTES 16

/* ---- functional perform + data check ---------------------------------------------- */

static void hexbytes(char *buf, size_t n, const uint8_t *p, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    if (len > PRINT_BYTES)
        len = PRINT_BYTES;
    /* little-endian value, most significant byte first */
    o += (size_t)snprintf(buf + o, n - o, "0x");
    for (size_t i = len; i-- > 0 && o < n;)
        o += (size_t)snprintf(buf + o, n - o, "%02x", p[i]);
}

static void report(rp_sim *s, const rp_access *a, const char *what, uint64_t addr, const uint8_t *exp,
                   const uint8_t *got, size_t len)
{
    /* Order-dependent atomic return values are expected to differ between the
     * emulator's and the timing model's interleaving: shown apart, at most 3. */
    int atomic = !strncmp(what, "atomic", 6);
    if (!s->out || (atomic ? s->check.atomic_printed >= 3 : s->check.printed >= s->cfg.check_print))
        return;
    if (atomic)
        s->check.atomic_printed++;
    else
        s->check.printed++;
    char e[48], g[48];
    hexbytes(e, sizeof e, exp, len);
    hexbytes(g, sizeof g, got, len);
    const rp_wave *w = a->w;
    const rp_wg *wg = w->wg;
    fprintf(s->out,
            "%s: %s kernel %u (%s) wg (%u,%u,%u) wave %u pc 0x%llx (%s) addr 0x%llx: expected %s got %s\n",
            atomic ? "note" : "mismatch", what, wg->k->launch.kernel_id, wg->k->launch.kernel_name, wg->tw->wg_id[0], wg->tw->wg_id[1],
            wg->tw->wg_id[2], w->tw->wave_in_wg, (unsigned long long)a->in->pc, gcn_op_name(a->in->op),
            (unsigned long long)addr, e, g);
}

static void lane_load(rp_sim *s, rp_access *a, uint8_t *lds, uint64_t lds_size, uint64_t addr,
                      const uint8_t *exp, uint32_t n)
{
    uint8_t got[64];
    if (n > sizeof got)
        n = sizeof got;
    if (lds) {
        if (addr + n > lds_size) {
            s->check.lds_unchecked++;
            return;
        }
        memcpy(got, lds + addr, n);
        s->check.lds_checked++;
    } else {
        rp_fmem_read(s->mem, addr, got, n);
        s->check.loads_checked++;
    }
    if (memcmp(got, exp, n)) {
        if (lds)
            s->check.lds_mismatches++;
        else
            s->check.load_mismatches++;
        a->w->wg->k->mismatches++;
        report(s, a, lds ? "lds load" : "load", addr, exp, got, n);
    }
}

static void lane_store(rp_sim *s, uint8_t *lds, uint64_t lds_size, uint64_t addr, const uint8_t *src, uint32_t n)
{
    if (lds) {
        if (addr + n <= lds_size)
            memcpy(lds + addr, src, n);
        else
            s->check.lds_unchecked++;
        return;
    }
    if (rp_fmem_write(s->mem, addr, src, n))
        rp_sim_fail(s, "functional memory: out of memory");
}

static void lane_atomic(rp_sim *s, rp_access *a, uint8_t *lds, uint64_t lds_size, uint64_t addr, uint32_t k)
{
    const trc_mem_op *op = a->op;
    unsigned w = a->atomic_bytes;
    uint64_t old = 0, src = 0, cmp = 0;
    if (lds) {
        if (addr + w > lds_size) {
            s->check.lds_unchecked++;
            return;
        }
        memcpy(&old, lds + addr, w);
    } else {
        rp_fmem_read(s->mem, addr, &old, w);
    }
    if (op->store_data) {
        if (a->atomic_op == GCN_AT_CMPSWAP) {
            memcpy(&src, op->store_data + (size_t)k * 2 * w, w);
            memcpy(&cmp, op->store_data + (size_t)k * 2 * w + w, w);
        } else {
            memcpy(&src, op->store_data + (size_t)k * w, w);
        }
    }
    uint64_t nv = gcn_atomic_apply((gcn_atomic_op)a->atomic_op, w, old, src, cmp);
    if (op->load_data) {
        s->check.atomics_checked++;
        if (memcmp(&old, op->load_data + (size_t)k * w, w)) {
            /* Atomic return values depend on the order of competing atomics:
             * reported apart, not a data error. */
            s->check.atomic_mismatches++;
            a->w->wg->k->atomic_mismatches++;
            report(s, a, "atomic return (order-dependent)", addr, op->load_data + (size_t)k * w,
                   (const uint8_t *)&old, w);
        }
    }
    if (lds)
        memcpy(lds + addr, &nv, w);
    else if (rp_fmem_write(s->mem, addr, &nv, w))
        rp_sim_fail(s, "functional memory: out of memory");
}

void rp_perform(rp_sim *s, rp_access *a, uint64_t mask)
{
    const trc_mem_op *op = a->op;
    uint32_t bpl = op->bytes_per_lane;
    uint8_t *lds = NULL;
    uint64_t lds_size = 0;
    if (a->kind == RP_ACC_LDS) {
        lds = a->w->wg->lds;
        lds_size = a->w->wg->lds_size;
        if (!lds) {
            s->check.lds_unchecked++;
            return;
        }
    }
    if (a->kind == RP_ACC_VMEM && !(op->flags & TRC_MO_ATOMIC) && bpl && bpl <= 64) {
        /* Fast path: runs of consecutive lanes with contiguous addresses are
         * read/compared or written as one block (same result as lane by lane:
         * the lanes of a run do not overlap). A run that mismatches is
         * re-checked lane by lane for the report. */
        bool load = (op->flags & TRC_MO_LOAD) != 0;
        const uint8_t *data = load ? op->load_data : (op->flags & TRC_MO_STORE) ? op->store_data : NULL;
        if (!data)
            return;
        const uint64_t max_run = 1024; /* bytes per block (stores copy at most this at once) */
        while (mask) {
            uint32_t k = (uint32_t)__builtin_ctzll(mask), j = k + 1;
            uint64_t addr = op->addr[k];
            while (j < 64 && (mask >> j & 1) && op->addr[j] == addr + (uint64_t)(j - k) * bpl &&
                   (uint64_t)(j - k + 1) * bpl <= max_run)
                j++;
            uint32_t nlanes = j - k;
            size_t len = (size_t)nlanes * bpl;
            mask &= j < 64 ? ~((1ull << j) - 1) : 0;
            const uint8_t *src = data + (size_t)k * bpl;
            if (!load) {
                if (rp_fmem_write(s->mem, addr, src, len))
                    rp_sim_fail(s, "functional memory: out of memory");
                continue;
            }
            if (rp_fmem_equal(s->mem, addr, src, len)) {
                s->check.loads_checked += nlanes;
                continue;
            }
            for (uint32_t i = k; i < j; i++)
                lane_load(s, a, NULL, 0, op->addr[i], data + (size_t)i * bpl, bpl);
        }
        return;
    }
    if (lds && a->ds2 && !(op->flags & TRC_MO_ATOMIC)) {
        /* ds_read2/write2: the recorded address is element 0's; element 1
         * lies ds2_delta bytes away; each lane's data holds element 0 then 1. */
        uint32_t esz = a->ds2_esz;
        bool load = (op->flags & TRC_MO_LOAD) != 0;
        const uint8_t *data = load ? op->load_data : (op->flags & TRC_MO_STORE) ? op->store_data : NULL;
        if (!data || 2 * esz != bpl) {
            s->check.lds_unchecked++;
            return;
        }
        while (mask) {
            uint32_t k = (uint32_t)__builtin_ctzll(mask);
            mask &= mask - 1;
            for (uint32_t el = 0; el < 2; el++) {
                uint64_t addr = op->addr[k] + (el ? (uint64_t)(int64_t)a->ds2_delta : 0);
                const uint8_t *d = data + (size_t)k * bpl + el * esz;
                if (load)
                    lane_load(s, a, lds, lds_size, addr, d, esz);
                else
                    lane_store(s, lds, lds_size, addr, d, esz);
            }
        }
        return;
    }
    if (lds && !(op->flags & TRC_MO_ATOMIC) && bpl) {
        /* LDS fast path, as for VMEM: contiguous in-bounds runs at once. */
        bool load = (op->flags & TRC_MO_LOAD) != 0;
        const uint8_t *data = load ? op->load_data : (op->flags & TRC_MO_STORE) ? op->store_data : NULL;
        if (!data)
            return;
        while (mask) {
            uint32_t k = (uint32_t)__builtin_ctzll(mask), j = k + 1;
            uint64_t addr = op->addr[k];
            while (j < 64 && (mask >> j & 1) && op->addr[j] == addr + (uint64_t)(j - k) * bpl)
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
            } else if (!memcmp(lds + addr, src, len)) {
                s->check.lds_checked += nlanes;
            } else {
                for (uint32_t i = k; i < j; i++)
                    lane_load(s, a, lds, lds_size, op->addr[i], data + (size_t)i * bpl, bpl);
            }
            mask &= j < 64 ? ~((1ull << j) - 1) : 0;
        }
        return;
    }
    while (mask) {
        uint32_t k = (uint32_t)__builtin_ctzll(mask);
        mask &= mask - 1;
        uint64_t addr = op->addr[a->kind == RP_ACC_SMEM ? 0 : k];
        if (op->flags & TRC_MO_ATOMIC) {
            lane_atomic(s, a, lds, lds_size, addr, k);
        } else if (op->flags & TRC_MO_LOAD) {
            if (op->load_data)
                lane_load(s, a, lds, lds_size, addr, op->load_data + (size_t)k * bpl, bpl);
        } else if (op->flags & TRC_MO_STORE) {
            if (op->store_data)
                lane_store(s, lds, lds_size, addr, op->store_data + (size_t)k * bpl, bpl);
        }
    }
}


/* ---- host memory events ---------------------------------------------------------- */

static void d2h_check(rp_sim *s, const trc_event *ev)
{
    if (!ev->data)
        return;
    uint8_t buf[4096];
    for (uint64_t off = 0; off < ev->size; off += sizeof buf) {
        size_t n = ev->size - off < sizeof buf ? (size_t)(ev->size - off) : sizeof buf;
        rp_fmem_read(s->mem, ev->src + off, buf, n);
        s->check.d2h_checked++;
        if (memcmp(buf, ev->data + off, n)) {
            s->check.d2h_mismatches++;
            for (size_t j = 0; j < n; j++)
                if (buf[j] != ev->data[off + j]) {
                    if (s->out && s->check.printed < s->cfg.check_print) {
                        s->check.printed++;
                        fprintf(s->out, "mismatch: D2H copy from 0x%llx (%llu bytes): byte at 0x%llx expected 0x%02x got 0x%02x\n",
                                (unsigned long long)ev->src, (unsigned long long)ev->size,
                                (unsigned long long)(ev->src + off + j), ev->data[off + j], buf[j]);
                    }
                    break;
                }
        }
    }
}

/* Functional effect of a host memory event (COPY of any kind, MEMSET) on
 * the modelled memory, and the D2H data check. 0, or -1 out of memory. */
int rp_host_apply(rp_sim *s, const trc_event *ev)
{
    int r = 0;
    if (ev->kind == TRC_EV_MEMSET)
        r = rp_fmem_fill(s->mem, ev->addr, ev->value, ev->size);
    else if (ev->kind == TRC_EV_COPY) {
        switch (ev->copy_kind) {
        case TRC_COPY_H2D:
        case TRC_COPY_INIT:
            if (ev->data)
                r = rp_fmem_write(s->mem, ev->addr, ev->data, ev->size);
            break;
        case TRC_COPY_D2H:
            d2h_check(s, ev);
            break;
        case TRC_COPY_D2D:
            r = rp_fmem_copy(s->mem, ev->addr, ev->src, ev->size);
            break;
        }
    }
    return r;
}
