/*
 * sim.c - builds the machine of a topology (single GPU, U-MGPU, D-MGPU; MGSim
 * paper Sec. IV-C), replays the host timeline of a trace through it, and
 * reports per-kernel results and statistics (text and JSON).
 *
 * Host timeline: events are applied in program order. Launches are queued
 * on the dispatcher of their GPU and run asynchronously; copies, memsets and
 * synchronisations wait until the GPU(s) they touch are idle (HIP's blocking
 * semantics on the null stream), then act on the functional image; their
 * transfers and the launch overhead are timed in host.c over the host links
 * and the interconnect (net.c).
 *
 * Address placement: single GPU: everything local. U-MGPU: GPU =
 * (addr / mem.gpu_interleave) % gpus. D-MGPU: the GPU of the device whose
 * ALLOC event covers the address (device % gpus); addresses outside every
 * allocation are local to the accessing GPU. Within a GPU: L2 bank =
 * (addr / l2.interleave) % l2.banks, DRAM channel = (addr / dram.interleave
 * [/ gpus in U-MGPU]) % dram.channels. L2s are memory-side (each caches only
 * its own GPU's memory), so remote accesses go L1 -> RDMA -> interconnect
 * (interconnect.kind, net.c) -> remote RDMA -> remote L2 and back.
 */
#include "rp_sim_internal.h"

#include <inttypes.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcn/gcn_loader.h"

char *rp_printable(char *dst, size_t n, const char *src)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)src; *p && o + 1 < n; p++) {
        if (*p >= 0x20 && *p < 0x7f && *p != '\\') {
            dst[o++] = (char)*p;
        } else {
            if (o + 5 > n)
                break;
            snprintf(dst + o, n - o, "\\x%02x", *p);
            o += 4;
        }
    }
    if (n)
        dst[o] = 0;
    return dst;
}

void rp_sim_fail(rp_sim *s, const char *fmt, ...)
{
    /* Partitions may fail at the same time: the first message stays. */
    if (s->fail_lock)
        pthread_mutex_lock(s->fail_lock);
    if (!__atomic_load_n(&s->failed, __ATOMIC_ACQUIRE)) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->err, sizeof s->err, fmt, ap);
        va_end(ap);
        __atomic_store_n(&s->failed, 1, __ATOMIC_RELEASE);
    }
    if (s->fail_lock)
        pthread_mutex_unlock(s->fail_lock);
}

/* ---- placement and routing ---------------------------------------------------------- */

/* The allocation (of s->allocs, sorted) that holds addr, or NULL. */
static const rp_alloc *alloc_at(const rp_sim *s, uint64_t addr)
{
    size_t lo = 0, hi = s->n_allocs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->allocs[mid].addr + s->allocs[mid].size <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n_allocs && s->allocs[lo].addr <= addr ? &s->allocs[lo] : NULL;
}

/* Is a's memory unified memory under um.policy (rp_um.h)? */
static inline bool um_governs(const rp_sim *s, const rp_alloc *a)
{
    return a && a->kind == TRC_MEM_DEVICE && (a->managed || s->cfg.topo_kind == RP_TOPO_UNIFIED);
}

/* Where a governed page of allocation a starts (rp_um.h): U-MGPU, or
 * um.policy = interleave, its mem.gpu_interleave slice; else the GPU of the
 * allocating device. */
static inline uint32_t um_home(const rp_sim *s, const rp_alloc *a, uint64_t addr)
{
    if (s->cfg.topo_kind == RP_TOPO_UNIFIED || s->um_pol == RP_UM_INTERLEAVE)
        return (uint32_t)((addr / s->cfg.gpu_interleave) % s->n_gpus);
    return a->gpu;
}

uint32_t rp_gpu_of(rp_sim *s, uint64_t addr, uint32_t accessing_gpu)
{
    if (rp_is_pte_addr(addr)) /* page tables: each GPU walks its own (rp_tlb.h) */
        return rp_pte_gpu(addr) < s->n_gpus ? rp_pte_gpu(addr) : accessing_gpu;
    switch (s->cfg.topo_kind) {
    case RP_TOPO_UNIFIED:
        if (s->um_moves) {
            const rp_alloc *a = alloc_at(s, addr);
            if (um_governs(s, a))
                return rp_um_owner(&s->um, addr, um_home(s, a, addr));
        }
        return (uint32_t)((addr / s->cfg.gpu_interleave) % s->n_gpus);
    case RP_TOPO_DISCRETE: {
        const rp_alloc *a = alloc_at(s, addr);
        if (s->um_on && um_governs(s, a))
            return s->um_moves ? rp_um_owner(&s->um, addr, um_home(s, a, addr)) : um_home(s, a, addr);
        return a ? a->gpu : accessing_gpu;
    }
    default:
        return 0;
    }
}

rp_link *rp_route_l2_bank(rp_sim *s, uint32_t gpu, uint32_t grp, uint64_t addr, rp_port **dst)
{
    uint32_t b = s->l2_bank_pow2 ? (uint32_t)((addr >> s->l2_bank_shift) & s->l2_bank_mask)
                                 : (uint32_t)((addr / s->cfg.l2_interleave) % s->cfg.l2_banks);
    rp_gpu *g = &s->gpus[gpu];
    *dst = NULL;
    if (!g->n_groups)
        return &g->l2_links[b];
    if (grp > g->n_groups)
        grp = g->n_groups; /* the memory side */
    return &g->l2_stage[(size_t)grp * s->cfg.l2_banks + b];
}

/* L1 (vector or scalar) miss: the local L2 bank, or the RDMA engine
 * (ctx: the rp_route_grp of the L1's group of shader arrays). */
rp_link *rp_route_l1(void *ctx, uint64_t line, rp_port **dst)
{
    const rp_route_grp *r = ctx;
    rp_gpu *g = r->g;
    rp_sim *s = g->sim;
    uint32_t t = rp_gpu_of(s, line, g->id);
    if (s->um_moves && s->um.n_replicated && t != g->id) { /* a read-only copy of its own serves it */
        const rp_alloc *a = alloc_at(s, line);
        if (um_governs(s, a))
            t = rp_um_serving(&s->um, line, um_home(s, a, line), g->id);
    }
    if (t == g->id)
        return rp_route_l2_bank(s, g->id, r->grp, line, dst);
    if (s->um_pol == RP_UM_COUNTER && s->um_moves) { /* a remote access counts */
        const rp_alloc *a = alloc_at(s, line);
        if (um_governs(s, a))
            rp_um_remote(&s->um, g->id, line, um_home(s, a, line));
    }
    *dst = NULL;
    return g->n_groups ? &g->rdma_stage[r->grp] : &g->rdma.in_link;
}

/* L2 miss or write-back: the DRAM channel of the line. */
rp_link *rp_route_l2(void *ctx, uint64_t line, rp_port **dst)
{
    rp_gpu *g = ctx;
    rp_sim *s = g->sim;
    uint64_t x = line / s->cfg.dram_interleave;
    if (s->cfg.topo_kind == RP_TOPO_UNIFIED)
        x /= s->n_gpus;
    *dst = NULL;
    return &g->dram[x % s->cfg.dram_channels].in;
}

/* ---- building ------------------------------------------------------------------------------ */

static uint8_t log2u(uint64_t v)
{
    uint8_t k = 0;
    while ((1ull << k) < v)
        k++;
    return k;
}

/* Address translation of GPU g (tlb.enable; rp_tlb.h): the L2 TLB and its
 * walker on the memory side; an L1 vector TLB per CU and an L1
 * scalar/instruction TLB per shader array in their partitions, each with a
 * NoC link to the L2 TLB and one back (crossing partitions under the cut:
 * their latency, noc.latency, is at least the lookahead). 0 or -1. */
static int build_tlbs(rp_sim *s, rp_gpu *g)
{
    const rp_config *c = &s->cfg;
    char name[48];
    rp_time noc = rp_lat_ps(c->noc_latency, s->clk);
    uint32_t n1 = g->n_cus + c->shader_arrays;
    g->cu_tlb = calloc(g->n_cus, sizeof *g->cu_tlb);
    g->sa_tlb = calloc(c->shader_arrays, sizeof *g->sa_tlb);
    g->tlb_req = calloc(n1, sizeof *g->tlb_req);
    if (!g->cu_tlb || !g->sa_tlb || !g->tlb_req)
        return -1;
    rp_tlb_spec l2 = {c->tlb_l2_entries / c->tlb_l2_ways, c->tlb_l2_ways, c->tlb_l2_mshrs,
                      rp_lat_ps(c->tlb_l2_latency, s->clk), s->clk, c->tlb_walkers, c->tlb_levels,
                      c->tlb_pwc_entries, rp_lat_ps(c->tlb_walk_level_latency, s->clk),
                      rp_lat_ps(c->tlb_iommu_latency, s->clk)};
    s->stats.reg_part = (int32_t)g->part->id + 1;
    snprintf(name, sizeof name, "gpu[%u].l2tlb", g->id);
    if (rp_tlb_init(&g->l2_tlb, &g->part->eng, &s->ctx, name, &l2, g->id, 0, noc))
        return -1;
    rp_tlb_register_stats(&g->l2_tlb, &s->stats);
    rp_tlb_spec v = {c->tlb_l1v_entries / c->tlb_l1v_ways, c->tlb_l1v_ways, c->tlb_l1v_mshrs,
                     rp_lat_ps(c->tlb_l1v_latency, s->clk), s->clk, 0, 0, 0, 0, 0};
    rp_tlb_spec sc = {c->tlb_l1s_entries / c->tlb_l1s_ways, c->tlb_l1s_ways, c->tlb_l1s_mshrs,
                      rp_lat_ps(c->tlb_l1s_latency, s->clk), s->clk, 0, 0, 0, 0, 0};
    for (uint32_t i = 0; i < n1; i++) {
        bool is_cu = i < g->n_cus;
        uint32_t sa = is_cu ? g->cus[i].sa : i - g->n_cus;
        rp_part *sp = g->sa_part[sa];
        rp_tlb *t = is_cu ? &g->cu_tlb[i] : &g->sa_tlb[sa];
        if (is_cu)
            snprintf(name, sizeof name, "%s.l1vtlb", g->cus[i].name);
        else
            snprintf(name, sizeof name, "gpu[%u].sa[%u].l1tlb", g->id, sa);
        s->stats.reg_part = (int32_t)sp->id + 1;
        if (rp_tlb_init(t, &sp->eng, &s->ctx, name, is_cu ? &v : &sc, g->id, noc, 0))
            return -1;
        rp_tlb_register_stats(t, &s->stats);
        rp_link_init(&g->tlb_req[i], &g->part->eng, &g->l2_tlb.in, noc, 0, 0);
        rp_link_from(s, &g->tlb_req[i], sp, g->part);
        rp_link_from(s, &t->resp_link, g->part, sp);
        t->req_link = &g->tlb_req[i];
    }
    for (uint32_t i = 0; i < g->n_cus; i++) {
        g->cus[i].vtlb = &g->cu_tlb[i];
        g->cus[i].stlb = &g->sa_tlb[g->cus[i].sa];
    }
    for (uint32_t a = 0; a < c->shader_arrays; a++)
        g->l1i[a].tlb = &g->sa_tlb[a];
    s->stats.reg_part = 0;
    return 0;
}

static int build_gpu(rp_sim *s, rp_gpu *g, uint32_t id)
{
    const rp_config *c = &s->cfg;
    char name[48];
    g->sim = s;
    g->id = id;
    g->n_cus = c->shader_arrays * c->cus_per_sa;
    s->stats.reg_part = (int32_t)g->part->id + 1; /* counters below are updated by its partition */
    rp_time noc = rp_lat_ps(c->noc_latency, s->clk);
    uint64_t nbw = rp_bw_Bps(c->noc_bandwidth, s->clk);
    g->cus = calloc(g->n_cus, sizeof *g->cus);
    g->l1s = calloc(c->shader_arrays, sizeof *g->l1s);
    g->l1s_links = calloc(c->shader_arrays, sizeof *g->l1s_links);
    g->l2 = calloc(c->l2_banks, sizeof *g->l2);
    g->l2_links = calloc(c->l2_banks, sizeof *g->l2_links);
    g->dram = calloc(c->dram_channels, sizeof *g->dram);
    if (!g->cus || !g->l1s || !g->l1s_links || !g->l2 || !g->l2_links || !g->dram)
        return -1;

    /* sim.dram_partition: the channels in a partition of their own, d =
     * dram_shift_ps away each way; each channel's timeline moves d later
     * (requests, refreshes) and its fixed latency loses 2d, so its responses
     * reach the L2 at the same times (parallel.c rp_sim_partition) */
    rp_time dsh = s->dram_shift_ps;
    s->stats.reg_part = (int32_t)g->dram_part->id + 1;
    for (uint32_t ch = 0; ch < c->dram_channels; ch++) {
        snprintf(name, sizeof name, "gpu[%u].dram[%u]", id, ch);
        rp_dram_spec ds;
        rp_dram_spec_from_config(&ds, c, s->clk, ch,
                                 (uint64_t)c->dram_channels * (c->topo_kind == RP_TOPO_UNIFIED ? s->n_gpus : 1));
        ds.latency_ps -= 2 * dsh;
        ds.refresh_phase += dsh;
        if (rp_dram_init_spec(&g->dram[ch], &g->dram_part->eng, name, &ds))
            return -1;
        g->dram[ch].in.latency_ps = dsh;
        rp_dram_register_stats(&g->dram[ch], &s->stats);
    }
    s->stats.reg_part = (int32_t)g->part->id + 1;
    rp_cache_spec l2 = {c->l2_size / c->l2_banks, c->l2_assoc, c->l1v_line, c->l2_mshrs,
                        rp_lat_ps(c->l2_latency, s->clk), s->clk, true, false, true, {0, 0}, {0, 0},
                        rp_lat_ps(c->cas_hold_max, s->clk)};
    {
        int k = 0;
        if (c->topo_kind == RP_TOPO_UNIFIED && s->n_gpus > 1) {
            l2.strip_stride[k] = c->gpu_interleave;
            l2.strip_n[k++] = s->n_gpus;
        }
        l2.strip_stride[k] = c->l2_interleave;
        l2.strip_n[k] = c->l2_banks;
        if (k == 1 && l2.strip_stride[0] < l2.strip_stride[1]) { /* larger stride first */
            uint64_t t = l2.strip_stride[0];
            uint32_t n = l2.strip_n[0];
            l2.strip_stride[0] = l2.strip_stride[1], l2.strip_n[0] = l2.strip_n[1];
            l2.strip_stride[1] = t, l2.strip_n[1] = n;
        }
    }
    g->rgrp = calloc(g->n_groups + 1, sizeof *g->rgrp);
    if (!g->rgrp)
        return -1;
    for (uint32_t j = 0; j <= g->n_groups; j++)
        g->rgrp[j] = (rp_route_grp){g, j};
    if (g->n_groups) { /* the cut: each group's NoC links into the banks' arbiters (parallel.c crosses them) */
        g->l2_stage = calloc((size_t)(g->n_groups + 1) * c->l2_banks, sizeof *g->l2_stage);
        g->l2_arb = calloc(c->l2_banks, sizeof *g->l2_arb);
        g->rdma_stage = calloc(g->n_groups, sizeof *g->rdma_stage);
        if (!g->l2_stage || !g->l2_arb || !g->rdma_stage)
            return -1;
    }
    for (uint32_t b = 0; b < c->l2_banks; b++) {
        rp_part *bp = g->bank_part[b]; /* the memory side, or its L2 slice (sim.l2_partitions) */
        s->stats.reg_part = (int32_t)bp->id + 1;
        snprintf(name, sizeof name, "gpu[%u].l2[%u]", id, b);
        if (rp_cache_init(&g->l2[b], &bp->eng, &bp->pool, &s->memx, name, &l2, rp_route_l2, g, dsh, 0,
                          c->header_bytes))
            return -1;
        rp_link_init(&g->l2_links[b], &bp->eng, &g->l2[b].top, g->n_groups ? 0 : noc, nbw, c->header_bytes);
        if (g->n_groups) {
            g->l2_arb[b].owner = &g->l2_links[b];
            g->l2_arb[b].notify = rp_port_forward;
            for (uint32_t j = 0; j <= g->n_groups; j++)
                rp_link_init(&g->l2_stage[(size_t)j * c->l2_banks + b], &bp->eng, &g->l2_arb[b], noc, 0, 0);
        }
        g->l2[b].lbufs = &bp->lbufs;
        g->l2[b].gpu = id;
        rp_cache_register_stats(&g->l2[b], &s->stats);
    }
    s->stats.reg_part = (int32_t)g->part->id + 1;
    rp_cache_spec l1s = {c->l1s_size, c->l1s_assoc, c->l1v_line, c->l1s_mshrs,
                         rp_lat_ps(c->l1s_latency, s->clk), s->clk, false, true, false, {0, 0}, {0, 0}, 0};
    for (uint32_t a = 0; a < c->shader_arrays; a++) {
        rp_part *sp = g->sa_part[a];
        s->stats.reg_part = (int32_t)sp->id + 1;
        snprintf(name, sizeof name, "gpu[%u].sa[%u].l1s", id, a);
        if (rp_cache_init(&g->l1s[a], &sp->eng, &sp->pool, &s->memx, name, &l1s, rp_route_l1,
                          &g->rgrp[rp_sa_group(a, g->n_groups, c->shader_arrays)], noc, nbw, c->header_bytes))
            return -1;
        rp_link_init(&g->l1s_links[a], &sp->eng, &g->l1s[a].top, 0, 0, 0);
        g->l1s[a].lbufs = &sp->lbufs;
        g->l1s[a].gpu = id;
        rp_cache_register_stats(&g->l1s[a], &s->stats);
    }
    rp_cache_spec l1v = {c->l1v_size, c->l1v_assoc, c->l1v_line, c->l1v_mshrs,
                         rp_lat_ps(c->l1v_latency, s->clk), s->clk, false, true, false, {0, 0}, {0, 0}, 0};
    for (uint32_t i = 0; i < g->n_cus; i++) {
        rp_cu *cu = &g->cus[i];
        rp_cu_init(cu, s, id, i);
        rp_part *sp = g->sa_part[cu->sa];
        s->stats.reg_part = (int32_t)sp->id + 1;
        snprintf(name, sizeof name, "%s.l1v", cu->name);
        if (rp_cache_init(&cu->l1v, &sp->eng, &sp->pool, &s->memx, name, &l1v, rp_route_l1,
                          &g->rgrp[rp_sa_group(cu->sa, g->n_groups, c->shader_arrays)], noc, nbw, c->header_bytes))
            return -1;
        cu->l1v.no_allocate = c->l1v_bypass != 0;
        cu->l1v.lbufs = &sp->lbufs;
        cu->l1v.gpu = id;
        rp_link_init(&cu->l1v_link, &sp->eng, &cu->l1v.top, 0, 0, 0);
        cu->l1s_link = &g->l1s_links[cu->sa];
        rp_cache_register_stats(&cu->l1v, &s->stats);
        const char *p = cu->name;
        rp_stats_add(&s->stats, p, "instructions", &cu->st_instr, "count", "wavefront instructions issued");
        rp_stats_add(&s->stats, p, "valu", &cu->st_valu, "count", "vector ALU wavefront instructions");
        rp_stats_add(&s->stats, p, "salu", &cu->st_salu, "count", "scalar ALU wavefront instructions");
        rp_stats_add(&s->stats, p, "branch", &cu->st_branch, "count", "branch wavefront instructions");
        rp_stats_add(&s->stats, p, "vmem", &cu->st_vmem, "count", "vector memory wavefront instructions");
        rp_stats_add(&s->stats, p, "vmem_lines", &cu->st_vmem_lines, "count", "cache-line requests of the vector memory instructions");
        rp_stats_add(&s->stats, p, "smem", &cu->st_smem, "count", "scalar memory wavefront instructions");
        rp_stats_add(&s->stats, p, "lds", &cu->st_lds, "count", "LDS wavefront instructions");
        rp_stats_add(&s->stats, p, "lds_bank_cycles", &cu->st_lds_conflict_cycles, "cycles", "LDS cycles including bank-conflict serialisation");
        rp_stats_add(&s->stats, p, "workgroups", &cu->st_wgs, "count", "workgroups");
    }
    if (rp_gpu_frontend_init(s, g)) /* L1 instruction caches (cu.c) */
        return -1;
    if (c->tlb_enable && build_tlbs(s, g))
        return -1;
    s->stats.reg_part = (int32_t)g->part->id + 1;
    rp_rdma_init(&g->rdma, s, id);
    if (g->n_groups) { /* L1s' requests for other GPUs: latency per group, then the engine's input serialises */
        g->rdma.in_link.latency_ps = 0;
        g->rdma_arb.owner = &g->rdma.in_link;
        g->rdma_arb.notify = rp_port_forward;
        for (uint32_t j = 0; j < g->n_groups; j++)
            rp_link_init(&g->rdma_stage[j], &g->part->eng, &g->rdma_arb, noc, 0, 0);
    }
    snprintf(name, sizeof name, "gpu[%u].rdma", id);
    rp_stats_add(&s->stats, name, "out_requests", &g->rdma.st_out_reqs, "count", "requests this GPU sent to other GPUs' memory");
    rp_stats_add(&s->stats, name, "in_requests", &g->rdma.st_in_reqs, "count", "requests from other GPUs served by this GPU");
    rp_stats_add(&s->stats, name, "out_bytes", &g->rdma.st_out_bytes, "bytes", "bytes this GPU sent to other GPUs");
    rp_disp_init(&g->disp, s, id);
    snprintf(name, sizeof name, "gpu[%u].dispatcher", id);
    rp_stats_add(&s->stats, name, "workgroups", &g->disp.st_wgs_dispatched, "count", "workgroups dispatched");
    rp_stats_add(&s->stats, name, "kernels", &g->disp.st_kernels, "count", "kernels dispatched");
    s->stats.reg_part = 0;
    return 0;
}


/* The caches' memory context (rp_mem_ctx): the sim's data path. */
static bool memx_perform_line(void *arg, struct rp_access *a, uint64_t mask, uint64_t line, uint8_t *data, uint32_t lb,
                              uint8_t *bm)
{
    return rp_perform_line(arg, a, mask, line, data, lb, bm);
}
static void memx_read_line(void *arg, uint64_t line, uint8_t *dst, uint32_t lb) { rp_mem_read_line(arg, line, dst, lb); }
static void memx_fail(void *arg, const char *msg) { rp_sim_fail(arg, "%s", msg); }
static bool memx_atomic_ready(void *arg, struct rp_access *a, uint64_t mask, uint64_t line, const uint8_t *data,
                              uint32_t lb)
{
    return rp_atomic_ready(arg, a, mask, line, data, lb);
}

rp_mem_ctx rp_sim_mem_ctx(rp_sim *s)
{
    return (rp_mem_ctx){s->mem, &s->lbufs, s, memx_perform_line, memx_read_line, memx_fail,
                        s->cfg.debug_skip_l2_flush, NULL, NULL, memx_atomic_ready};
}

/* rp_mem_ctx.alien: does GPU gpu's memory not serve line now (unified
 * memory that moved, rp_um.h)? A write that reaches a read-only copy (one
 * translated before the copy was made and still on its way) drops the
 * page's copies first, as a write fault would. */
static bool memx_alien(void *arg, uint32_t gpu, uint64_t line, bool write)
{
    rp_sim *s = arg;
    if (!s->um_moves || rp_is_pte_addr(line))
        return false;
    const rp_alloc *a = alloc_at(s, line);
    if (!um_governs(s, a))
        return false;
    uint32_t home = um_home(s, a, line);
    if (write && s->um.n_replicated && rp_um_owner(&s->um, line, home) != gpu &&
        rp_um_serving(&s->um, line, home, gpu) == gpu)
        rp_um_host_write(&s->um, line, 1); /* drops the page's copies */
    return rp_um_serving(&s->um, line, home, gpu) != gpu;
}

/* rp_mem_ctx.authority: the holder's L2 line (dirty when written), or NULL. */
static uint8_t *memx_authority(void *arg, uint64_t line, bool write)
{
    rp_sim *s = arg;
    rp_cache *c = rp_l2_bank(s, rp_gpu_of(s, line, 0), line);
    return write ? rp_cache_line_data_w(c, line) : rp_cache_line_data(c, line);
}

/* The GPU-side components' context (rp_ctx): the sim's services. */
static void ctx_fail(void *o, const char *msg) { rp_sim_fail(o, "%s", msg); }
static void ctx_perform(void *o, rp_access *a, uint64_t mask) { rp_perform(o, a, mask); }
static rp_link *ctx_route_l2(void *o, uint32_t gpu, uint32_t grp, uint64_t addr, rp_port **dst)
{
    return rp_route_l2_bank(o, gpu, grp, addr, dst);
}
static uint32_t ctx_gpu_of(void *o, uint64_t addr, uint32_t gpu) { return rp_gpu_of(o, addr, gpu); }
/* Page size and IOMMU need of addr for GPU gpu's walker (rp_tlb.h): host
 * memory (hipHostMalloc) has tlb.host_page_size and goes through
 * the IOMMU, as does, in D-MGPU, memory placed on another GPU; device memory
 * is mapped in fragments of up to tlb.page_size, no larger than the
 * allocation's size and the alignment of its start allow (amdgpu_vm.c picks
 * the largest fragment a contiguous range's alignment allows); an address in
 * no allocation, 4 KiB. Kernarg and scratch count as translated (shift 0):
 * the runtime reuses its kernarg ring and a queue's scratch dispatch after
 * dispatch, so their few pages stay in the TLBs, while the emulator gives each
 * dispatch fresh addresses, which would cost a cold walk per launch that the
 * hardware does not pay. */
static void ctx_page_of(void *o, uint64_t addr, uint32_t gpu, uint8_t *shift, bool *iommu)
{
    rp_sim *s = o;
    const rp_alloc *a = alloc_at(s, addr);
    if (a && (a->kind == TRC_MEM_KERNARG || a->kind == TRC_MEM_SCRATCH)) {
        *shift = 0; /* translated already (rp_ctx.page_of) */
        *iommu = false;
        return;
    }
    if (s->um_on && um_governs(s, a)) { /* unified memory: pages of um.page_size, placed by um.policy */
        uint8_t sh = log2u(s->cfg.um_page_size);
        if (!s->um_moves) { /* interleaved: no page spans two GPUs */
            uint8_t il = log2u(s->cfg.gpu_interleave);
            sh = il < 12 ? 12 : il < sh ? il : sh;
        }
        *shift = sh;
        *iommu = s->cfg.topo_kind == RP_TOPO_DISCRETE && rp_gpu_of(s, addr, gpu) != gpu;
        return;
    }
    bool host = a && a->kind == TRC_MEM_HOST_PINNED;
    uint8_t sh = log2u(host ? s->cfg.tlb_host_page_size : s->cfg.tlb_page_size);
    if (!a)
        sh = 12;
    else if (!host) {
        while (sh > 12 && ((a->addr & ((1ull << sh) - 1)) || a->size < (1ull << sh)))
            sh--;
    }
    *shift = sh;
    *iommu = host || (a && s->cfg.topo_kind == RP_TOPO_DISCRETE && a->gpu != gpu);
}
/* The walker's end (rp_ctx.um_walk): unified memory's fault or move. */
static rp_time ctx_um_walk(void *o, uint64_t page, uint32_t gpu, bool write, bool *ro, bool *retry, rp_time now)
{
    rp_sim *s = o;
    const rp_alloc *a = alloc_at(s, page);
    *ro = *retry = false;
    return um_governs(s, a) ? rp_um_walk(&s->um, gpu, page, um_home(s, a, page), write, ro, retry, now) : now;
}

/* GPU gpu's L2 lines of [page, page + bytes): written back if dirty, and
 * dropped unless keep (the functional image is DRAM). */
static void um_l2_lines(rp_sim *s, uint32_t gpu, uint64_t page, uint64_t bytes, bool keep)
{
    uint64_t lb = s->cfg.l1v_line;
    for (uint64_t l = page; l < page + bytes; l += lb) {
        rp_cache *c = rp_l2_bank(s, gpu, l);
        if (keep)
            rp_cache_writeback(c, l, lb);
        else
            rp_cache_drop(c, l, lb);
    }
}

/* rp_um_ops.move: the page's lines leave both L2s (the old holder's dirty
 * ones written back first), then its bytes cross the interconnect (net.c,
 * shared with the other traffic). */
static rp_time um_move(void *o, uint32_t from, uint32_t to, uint64_t page, uint64_t bytes, rp_time ready)
{
    rp_sim *s = o;
    um_l2_lines(s, from, page, bytes, false);
    um_l2_lines(s, to, page, bytes, false);
    return s->net ? rp_net_bulk(s->net, from, to, bytes, ready) : ready;
}

/* rp_um_ops.copy: a read-only copy; the holder keeps its lines (dirty ones
 * written back: DRAM is what a copy's fills read), the receiver's stale
 * lines are dropped, the bytes cross the interconnect. */
static rp_time um_copy(void *o, uint32_t from, uint32_t to, uint64_t page, uint64_t bytes, rp_time ready)
{
    rp_sim *s = o;
    um_l2_lines(s, from, page, bytes, true);
    um_l2_lines(s, to, page, bytes, false);
    return s->net ? rp_net_bulk(s->net, from, to, bytes, ready) : ready;
}

/* rp_um_ops.drop: GPU gpu's copy is gone (its lines are clean). */
static void um_drop(void *o, uint32_t gpu, uint64_t page, uint64_t bytes) { um_l2_lines(o, gpu, page, bytes, false); }

/* rp_um_ops.shootdown: every TLB of GPU gpu forgets the page. */
static void um_shootdown(void *o, uint32_t gpu, uint64_t page, uint8_t shift)
{
    (void)shift;
    rp_sim *s = o;
    rp_gpu *g = &s->gpus[gpu];
    if (!g->cu_tlb)
        return;
    for (uint32_t i = 0; i < g->n_cus; i++)
        rp_tlb_invalidate(&g->cu_tlb[i], page);
    for (uint32_t a = 0; a < s->cfg.shader_arrays; a++)
        rp_tlb_invalidate(&g->sa_tlb[a], page);
    rp_tlb_invalidate(&g->l2_tlb, page);
}

/* Unified memory (rp_um.h) of a multi-GPU run: its page table when
 * um.policy moves pages, its counters per GPU. */
static int build_um(rp_sim *s)
{
    int pol = rp_um_policy_parse(s->cfg.um_policy);
    s->um_pol = pol;
    if (s->n_gpus < 2 || pol == RP_UM_HOME || (pol == RP_UM_INTERLEAVE && s->cfg.topo_kind == RP_TOPO_UNIFIED))
        return 0;
    s->um_on = true;
    if (!rp_um_moves(pol))
        return 0;
    rp_um_spec sp = {pol, s->n_gpus, log2u(s->cfg.um_page_size), rp_lat_ps(s->cfg.um_fault_latency, s->clk),
                     rp_lat_ps(s->cfg.um_shootdown_latency, s->clk), s->cfg.um_counter_threshold,
                     s->cfg.um_replicate != 0};
    rp_um_ops ops = {s, um_move, um_shootdown, um_copy, um_drop};
    if (rp_um_init(&s->um, &sp, &ops)) {
        snprintf(s->err, sizeof s->err, "out of memory for the unified-memory page table");
        return -1;
    }
    s->um_moves = true;
    s->ctx.um_walk = ctx_um_walk;
    for (uint32_t g = 0; g < s->n_gpus; g++) {
        char name[32];
        rp_um_gpu *u = &s->um.st[g];
        s->stats.reg_part = (int32_t)s->gpus[g].part->id + 1; /* updated by the walkers' partition */
        snprintf(name, sizeof name, "gpu[%u].um", g);
        rp_stats_add(&s->stats, name, "faults", &u->faults, "count", "page faults of this GPU's walker (um.policy)");
        rp_stats_add(&s->stats, name, "fault_ps", &u->fault_ps, "ps", "sum of the times faulting walks waited for their page");
        rp_stats_add(&s->stats, name, "migrations_in", &u->migrations_in, "count", "pages moved to this GPU");
        rp_stats_add(&s->stats, name, "migrations_out", &u->migrations_out, "count", "pages moved away from this GPU");
        rp_stats_add(&s->stats, name, "bytes_in", &u->bytes_in, "bytes", "bytes of the pages moved to this GPU");
        rp_stats_add(&s->stats, name, "shootdowns", &u->shootdowns, "count", "TLB shootdowns this GPU received");
        rp_stats_add(&s->stats, name, "remote_counted", &u->remote_counted, "count",
                     "remote line accesses counted (access-counter)");
        if (s->cfg.um_replicate) {
            rp_stats_add(&s->stats, name, "replicas_in", &u->replicas_in, "count",
                         "read-only copies of pages made in this GPU's memory (um.replicate)");
            rp_stats_add(&s->stats, name, "collapses", &u->collapses, "count",
                         "writes of this GPU that dropped a page's copies (protection faults)");
        }
    }
    s->stats.reg_part = 0;
    return 0;
}

static void ctx_kernel_note(void *o, rp_kernel *k, int end) { rp_kernel_note(o, k, end); }
static uint64_t ctx_flush_l2(void *o, uint32_t gpu) { return rp_mem_flush_l2(o, gpu); }
static int ctx_sample_kernel_start(void *o, rp_kernel *k) { return rp_sample_kernel_start(o, k); }
static void ctx_sample_kernel_end(void *o, rp_kernel *k) { rp_sample_kernel_end(o, k); }
static int ctx_sample_wg_done(void *o, rp_kernel *k, rp_time now) { return rp_sample_wg_done(o, k, now); }
static int ctx_sample_hold(void *o, rp_kernel *k) { return rp_sample_hold(o, k); }
static int ctx_sample_wave(void *o, rp_wave *w, rp_engine *e, rp_time t, rp_time *resume)
{
    return rp_sample_wave(o, w, e, t, resume);
}
static void ctx_sample_wave_end(void *o, rp_wave *w, rp_time t) { rp_sample_wave_end(o, w, t); }
static void ctx_sample_wg_end(void *o, rp_kernel *k, const rp_wg *wg) { rp_sample_wg_end(o, k, wg); }
static int ctx_sample_apply(void *o, void *batch) { return rp_sample_apply(o, batch); }

void rp_ctx_fail(const rp_ctx *x, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    x->fail(x->owner, msg);
}

int rp_sim_init(rp_sim *s, const rp_config *cfg, trc_reader *rd, FILE *out)
{
    memset(s, 0, sizeof *s);
    s->cfg = *cfg;
    s->rd = rd;
    s->out = out;
    rp_hooks_attach(&s->hooks, RP_HOOK_VALUE, rp_check_observe, NULL); /* the data check */
    rp_hooks_attach(&s->hooks, RP_HOOK_MISMATCH, rp_check_reporter, NULL);
    if (rp_classify_init(s)) {
        snprintf(s->err, sizeof s->err, "out of memory reading the trace's allocations");
        return -1;
    }
    if (rp_config_validate(cfg, s->err, sizeof s->err))
        return -1;
    /* the instruction table is the trace's target's (trace header) */
    const char *isa = trc_reader_header(rd)->isa_target;
    s->lds_omitted = trc_reader_header(rd)->lds_values_omitted != 0;
    s->target = gcn_target_find(isa);
    if (!s->target) {
        char pi[80]; /* the header is the trace's: printed escaped (a name may hold anything) */
        snprintf(s->err, sizeof s->err, "trace ISA target '%s': this build replays %s traces only",
                 rp_printable(pi, sizeof pi, isa), gcn_target_names());
        return -1;
    }
    if (rp_engine_init(&s->eng)) {
        snprintf(s->err, sizeof s->err, "out of memory");
        return -1;
    }
    s->clk = rp_clock_make(cfg->gpu_freq);
    s->eng.watchdog_ps = rp_lat_ps(cfg->watchdog, s->clk);
    s->mem = rp_fmem_create();
    s->memx = rp_sim_mem_ctx(s);
    s->res = (rp_res){&s->pool, &s->check, s->out};
    s->ctx = (rp_ctx){.cfg = &s->cfg, .clk = s->clk, .hooks = &s->hooks, .owner = s, .rd = rd, .serial = &s->res,
                      .n_parts = 1, .failed = &s->failed, .fail = ctx_fail, .perform = ctx_perform,
                      .route_l2 = ctx_route_l2, .gpu_of = ctx_gpu_of, .kernel_note = ctx_kernel_note,
                      .flush_l2 = ctx_flush_l2, .sample_kernel_start = ctx_sample_kernel_start,
                      .sample_kernel_end = ctx_sample_kernel_end, .sample_wg_done = ctx_sample_wg_done,
                      .sample_hold = ctx_sample_hold,
                      .sample_wave = ctx_sample_wave, .sample_wave_end = ctx_sample_wave_end,
                      .sample_wg_end = ctx_sample_wg_end, .sample_apply = ctx_sample_apply, .page_of = ctx_page_of};
    s->n_gpus = cfg->topo_kind == RP_TOPO_SINGLE ? 1 : cfg->gpus;
    if (cfg->topo_kind == RP_TOPO_SINGLE && cfg->gpus > 1) {
        /* M-SGPU (MGSim paper Sec. IV-C): one monolithic GPU with N times the
         * shader arrays (CUs), L2 capacity and banks and DRAM channels of
         * the base GPU; per-CU and per-bank parameters stay. */
        uint32_t n = cfg->gpus;
        s->cfg.shader_arrays *= n;
        s->cfg.l2_size *= n;
        s->cfg.l2_banks *= n;
        s->cfg.dram_channels *= n;
        if (rp_config_validate(&s->cfg, s->err, sizeof s->err))
            return -1;
    }
    /* the bank shift and mask of the banks as built (after M-SGPU's scaling) */
    uint64_t il = s->cfg.l2_interleave, nb = s->cfg.l2_banks;
    if (il && nb && !(il & (il - 1)) && !(nb & (nb - 1))) {
        s->l2_bank_pow2 = true;
        s->l2_bank_mask = (uint32_t)(nb - 1);
        while ((1ull << s->l2_bank_shift) < il)
            s->l2_bank_shift++;
    }
    s->gpus = calloc(s->n_gpus, sizeof *s->gpus);
    if (!s->mem || !s->gpus) {
        snprintf(s->err, sizeof s->err, "out of memory");
        return -1;
    }
    if (rp_sim_partition(s)) /* engines of the GPUs' partitions, the lookahead */
        return -1;
    if (s->n_gpus > 1 && rp_um_moves(rp_um_policy_parse(cfg->um_policy))) { /* before the L2s register their stats */
        s->memx.alien = memx_alien;
        s->memx.authority = memx_authority;
    }
    if (rp_net_build(s)) /* before the GPUs: their RDMA engines become its sinks */
        return -1;
    for (uint32_t g = 0; g < s->n_gpus; g++)
        if (build_gpu(s, &s->gpus[g], g)) {
            snprintf(s->err, sizeof s->err, "out of memory building gpu[%u]", g);
            return -1;
        }
    s->ctx.co_base = s->gpus[0].co_base; /* rp_gpu_frontend_init built the table */
    s->ctx.n_co_base = s->gpus[0].n_co_base;
    /* Dispatchers: U-MGPU's GPU 0 drives every CU of every GPU; otherwise each
     * GPU's dispatcher drives its own CUs. */
    for (uint32_t g = 0; g < s->n_gpus; g++) {
        rp_disp *d = &s->gpus[g].disp;
        uint32_t first = g, count = 1;
        if (cfg->topo_kind == RP_TOPO_UNIFIED) {
            if (g != 0)
                continue;
            first = 0;
            count = s->n_gpus;
        }
        for (uint32_t h = first; h < first + count; h++)
            d->n_cus += s->gpus[h].n_cus;
        d->cus = calloc(d->n_cus, sizeof *d->cus);
        d->res = calloc(d->n_cus, sizeof *d->res);
        size_t nb = (size_t)s->n_gpus * s->cfg.l2_banks;
        d->l2_top = calloc(nb, sizeof *d->l2_top);
        d->l2_link = calloc(nb, sizeof *d->l2_link);
        if (!d->cus || !d->res || !d->l2_top || !d->l2_link) {
            snprintf(s->err, sizeof s->err, "out of memory");
            return -1;
        }
        for (uint32_t h = 0; h < s->n_gpus; h++)
            for (uint32_t b = 0; b < s->cfg.l2_banks; b++) {
                d->l2_top[(size_t)h * s->cfg.l2_banks + b] = &s->gpus[h].l2[b].top;
                /* the kernel-end flush: with the banks in partitions of their own
                 * (sim.l2_partitions) over the memory side's NoC link */
                d->l2_link[(size_t)h * s->cfg.l2_banks + b] =
                    s->gpus[h].n_slices ? &s->gpus[h].l2_stage[(size_t)s->gpus[h].n_groups * s->cfg.l2_banks + b]
                                        : &s->gpus[h].l2_links[b];
            }
        uint32_t n = 0;
        for (uint32_t h = first; h < first + count; h++)
            for (uint32_t i = 0; i < s->gpus[h].n_cus; i++) {
                d->cus[n] = &s->gpus[h].cus[i];
                for (uint32_t sm = 0; sm < cfg->simds && sm < 16; sm++) {
                    d->res[n].slots[sm] = cfg->wave_slots;
                    d->res[n].vgprs[sm] = cfg->vgprs;
                    d->res[n].sgprs[sm] = cfg->sgprs;
                }
                d->res[n].lds = cfg->lds_size;
                n++;
            }
    }
    if (build_um(s))
        return -1;
    if (rp_sim_link_partitions(s))
        return -1;
    if (cfg->simds > 16) {
        snprintf(s->err, sizeof s->err, "config: cu.simds = %u: at most 16 supported", cfg->simds);
        return -1;
    }
    rp_event_init(&s->host_ev, rp_host_run, s, RP_PRIO_HOST);
    s->n_events = trc_reader_n_events(rd);
    s->n_progs = trc_reader_n_code_objects(rd);
    s->progs = calloc(s->n_progs ? s->n_progs : 1, sizeof *s->progs);
    return s->progs ? 0 : -1;
}

void rp_sim_fini(rp_sim *s)
{
    /* the sampled replay's helper threads stop first: nothing they may touch
     * (kernels, memory, caches) is freed while one runs */
    rp_sample_fini(s);
    for (uint32_t g = 0; s->gpus && g < s->n_gpus; g++) {
        rp_gpu *gp = &s->gpus[g];
        for (uint32_t i = 0; gp->cus && i < gp->n_cus; i++) {
            rp_cache_fini(&gp->cus[i].l1v);
            for (rp_access *a = gp->cus[i].acc_all, *n; a; a = n) {
                n = a->all_next;
                free(a->hbuf);
                free(a);
            }
        }
        rp_gpu_frontend_fini(s, gp);
        for (uint32_t i = 0; gp->cu_tlb && i < gp->n_cus; i++)
            rp_tlb_fini(&gp->cu_tlb[i]);
        for (uint32_t a = 0; gp->sa_tlb && a < s->cfg.shader_arrays; a++)
            rp_tlb_fini(&gp->sa_tlb[a]);
        rp_tlb_fini(&gp->l2_tlb);
        free(gp->cu_tlb);
        free(gp->sa_tlb);
        free(gp->tlb_req);
        for (uint32_t a = 0; gp->l1s && a < s->cfg.shader_arrays; a++)
            rp_cache_fini(&gp->l1s[a]);
        for (uint32_t b = 0; gp->l2 && b < s->cfg.l2_banks; b++)
            rp_cache_fini(&gp->l2[b]);
        free(gp->cus);
        free(gp->l1s);
        free(gp->l1s_links);
        free(gp->l2);
        free(gp->l2_links);
        free(gp->dram);
        free(gp->disp.cus);
        free(gp->disp.res);
        free(gp->sa_part);
        free(gp->bank_part);
        free(gp->rgrp);
        free(gp->l2_stage);
        free(gp->l2_arb);
        free(gp->rdma_stage);
        free(gp->done_grp);
        free(gp->disp.l2_top);
        free(gp->disp.l2_link);
        for (rp_wg *wg = gp->disp.live, *n; wg; wg = n) { /* a run that stopped early */
            n = wg->live_next;
            trc_wg_free(wg->tw);
            for (uint32_t i = 0; wg->waves && i < wg->n_waves; i++)
                free(wg->waves[i].smp_data); /* sampled replay's measurement (sample.c) */
            free(wg->waves);
            free(wg->lds);
            free(wg);
        }
        free(gp->disp.gpu_in);    /* U-MGPU: links of the unified dispatcher (parallel.c) */
        free(gp->disp.gpu_flush);
    }
    free(s->gpus);
    free(s->sumcls);
    rp_um_fini(&s->um);
    for (size_t i = 0; i < s->n_progs; i++)
        gcn_program_free(s->progs[i]);
    free(s->progs);
    rp_classify_fini(s);
    for (size_t i = 0; i < s->n_kernels; i++) {
        free(s->kernels[i]->snap0);
        free(s->kernels[i]->gws_wait);
        free(s->kernels[i]);
    }
    free(s->kernels);
    free(s->allocs);
    free(s->host.sbusy);
    free(s->host.nonblocking);
    free(s->host.sdma);
    free(s->sgroups);
    for (size_t i = 0; i < s->n_smp_lvec; i++)
        free(s->smp_lvec[i]);
    free(s->smp_lvec);
    free(s->host.cspan);
    for (size_t i = 0; i < s->host.n_hs; i++)
        free(s->host.hs[i].ev);
    free(s->host.hs);
    rp_net_destroy(s->net);
    s->net = NULL;
    rp_timeline_free(s->timeline);
    s->timeline = NULL;
    rp_fmem_destroy(s->mem);
    rp_stats_fini(&s->stats);
    rp_lbufs_fini(&s->lbufs);
    rp_msg_pool_fini(&s->pool);
    rp_engine_fini(&s->eng);
    rp_parts_fini(s);
}

/* ---- the public face (rp_sim.h) ---------------------------------------------------- */

rp_sim *rp_sim_create(const rp_config *cfg, trc_reader *rd, FILE *out, char *err, size_t errlen)
{
    rp_sim *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (rp_sim_init(s, cfg, rd, out)) {
        snprintf(err, errlen, "%s", s->err);
        rp_sim_fini(s);
        free(s);
        return NULL;
    }
    return s;
}

void rp_sim_destroy(rp_sim *s)
{
    if (!s)
        return;
    rp_sim_fini(s);
    free(s);
}

const char *rp_sim_error(const rp_sim *s) { return s->err; }

void rp_sim_get_summary(const rp_sim *s, rp_sim_summary *o)
{
    memset(o, 0, sizeof *o);
    o->topo_name = s->cfg.topo_name;
    o->gpus = s->n_gpus;
    o->cus_per_gpu = s->cfg.shader_arrays * s->cfg.cus_per_sa;
    o->gpu_freq_hz = s->cfg.gpu_freq;
    o->kernels = s->n_kernels;
    for (size_t i = 0; i < s->n_kernels; i++)
        o->wavefront_instructions += s->kernels[i]->n_instr;
    o->now_ps = rp_sim_now(s);
    o->events = rp_sim_events(s);
    o->partitions = s->n_parts;
    o->threads = s->threads < s->n_parts ? s->threads : s->n_parts;
    o->windows = s->windows;
    o->lookahead_ps = s->lookahead_ps;
    for (uint32_t p = 0; p < s->n_parts; p++)
        o->part_events += s->parts[p].eng.n_events;
    o->crit_events = s->crit_events;
    o->check = s->check;
}

void rp_sim_list_stats(const rp_sim *s, FILE *f) { rp_stats_list(&s->stats, f); }

int rp_sim_observe(rp_sim *s, rp_hook_point p, rp_hook_fn fn, void *arg)
{
    return rp_hooks_attach(&s->hooks, p, fn, arg);
}

void rp_ksum_take(rp_sim *s, const rp_kernel *k, rp_ksum *o, int32_t part, bool match)
{
    for (uint32_t g = k->gpu_first; g < k->gpu_first + k->gpu_count; g++) {
        rp_gpu *gp = &s->gpus[g];
        for (uint32_t i = 0; i < gp->n_cus; i++) {
            if (((int32_t)gp->sa_part[gp->cus[i].sa]->id == part) != match)
                continue;
            rp_cache *c = &gp->cus[i].l1v;
            o->l1v_hits += c->st_read_hits;
            o->l1v_accesses += c->st_read_hits + c->st_read_misses;
        }
        /* each component's counters by its own partition (read while no other thread changes them) */
        for (uint32_t b = 0; b < s->cfg.l2_banks; b++) {
            if (((int32_t)gp->bank_part[b]->id == part) != match)
                continue;
            rp_cache *c = &gp->l2[b];
            o->l2_hits += c->st_read_hits + c->st_write_hits;
            o->l2_accesses += c->st_read_hits + c->st_read_misses + c->st_write_hits + c->st_write_misses;
        }
        if (((int32_t)gp->dram_part->id == part) != match)
            continue;
        for (uint32_t ch = 0; ch < s->cfg.dram_channels; ch++)
            o->dram_bytes += gp->dram[ch].st_read_bytes + gp->dram[ch].st_write_bytes;
    }
    /* Only the traffic of the kernel's own GPUs: kernels running at the same
     * time on other GPUs must not count (a global counter inflated per-kernel
     * link bytes ~gpus-fold in D-MGPU). */
    for (uint32_t g = k->gpu_first; g < k->gpu_first + k->gpu_count; g++)
        if (((int32_t)s->gpus[g].part->id == part) == match)
            o->link_bytes += s->gpus[g].rdma.st_own_bytes;
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

/* ---- summary from the registered counters ------------------------------------------------ */

/* The summary (human and JSON) is computed from the registered counters by
 * name, so it shows whatever the components register: cache levels by the
 * component name before the counter ("gpu[0].cu[3].l1v.read_hits", "gpu[0].l2[5].
 * mshr_busy_ps"), DRAM channels ("gpu[0].dram[2].row_hits"), CU counters
 * ("gpu[0].cu[3].instructions", stall counters: any CU counter whose name
 * contains "stall", occupancy from "wave_ps" = live wavefronts x ps when a CU
 * registers it) and interconnect links (counters "net.*.bytes"). A kernel's
 * summary counts the components of the GPUs it ran on (links: all). */
enum { LV_L1V = 0, LV_L1S, LV_L1I, LV_L2, LV_N };
static const char *const lv_name[LV_N] = {"l1v", "l1s", "l1i", "l2"};

typedef struct sum_lv {
    uint64_t rh, rm, wh, wm, mshr_ps, mshr_allocs, mshr_stalls, mshr_peak, n;
} sum_lv;

#define SUM_STALLS 16
typedef struct summary {
    rp_time span_ps;
    uint64_t cycles, instr, cus, wave_ps;
    bool has_wave_ps, has_rows;
    sum_lv lv[LV_N];
    uint64_t dram_rd, dram_wr, row_hits, row_misses, row_conflicts;
    char stall_name[SUM_STALLS][48];
    uint64_t stall[SUM_STALLS];
    uint32_t n_stall;
} summary;

/* "gpu[2].sa[1].l1s.read_hits": gpu 2, component "l1s", counter "read_hits". */
static int split_name(const char *n, char *comp, size_t cl, const char **ctr)
{
    unsigned g = 0;
    int gpu = sscanf(n, "gpu[%u]", &g) == 1 ? (int)g : -1;
    const char *last = strrchr(n, '.');
    *ctr = last ? last + 1 : n;
    comp[0] = 0;
    if (!last)
        return gpu;
    const char *p = last;
    while (p > n && p[-1] != '.')
        p--;
    size_t k = 0;
    for (; p < last && p[0] != '[' && k + 1 < cl; p++)
        comp[k++] = *p;
    comp[k] = 0;
    return gpu;
}

/* What summarize adds a counter to, worked out from its name once per
 * counter (split_name and the string compares cost ~1,300 instructions a
 * counter: with thousands of counters, summing every kernel's was most of
 * a many-kernel replay's time with --stats). */
enum sum_what {
    SW_NONE = 0,
    SW_RH, SW_RM, SW_WH, SW_WM, SW_MSHR_PS, SW_MSHR_ALLOCS, SW_MSHR_STALLS, SW_MSHR_PEAK, /* cache level (lv) */
    SW_DRAM_RD, SW_DRAM_WR, SW_ROW_HITS, SW_ROW_MISSES, SW_ROW_CONFLICTS,
    SW_WAVE_PS, SW_STALL, /* CU */
};
typedef struct sum_class {
    int32_t gpu;      /* -1: not a GPU's counter */
    uint8_t what;     /* enum sum_what */
    int8_t lv;        /* cache level (LV_*) of SW_RH..SW_MSHR_PEAK */
    bool link_bytes;  /* an interconnect link's byte counter (is_link_bytes) */
    const char *ctr;  /* the counter's own name (SW_STALL: the stall's name) */
} sum_class;

static bool is_link_bytes(const char *n)
{
    size_t l = strlen(n);
    return !strncmp(n, "net.", 4) && l > 6 && !strcmp(n + l - 6, ".bytes");
}

static sum_class classify(const char *n)
{
    const char *ctr;
    char comp[32];
    sum_class c = {split_name(n, comp, sizeof comp, &ctr), SW_NONE, -1, is_link_bytes(n), NULL};
    c.ctr = ctr;
    int lv = -1;
    for (int i = 0; i < LV_N; i++)
        if (!strcmp(comp, lv_name[i]))
            lv = i;
    if (lv >= 0) {
        static const char *const k[] = {"read_hits", "read_misses", "write_hits", "write_misses",
                                        "mshr_busy_ps", "mshr_allocs", "mshr_stalls", "mshr_peak"};
        for (int i = 0; i < 8; i++)
            if (!strcmp(ctr, k[i]))
                c.what = (uint8_t)(SW_RH + i);
        if (c.what)
            c.lv = (int8_t)lv;
    } else if (!strcmp(comp, "dram")) {
        static const char *const k[] = {"read_bytes", "write_bytes", "row_hits", "row_misses", "row_conflicts"};
        for (int i = 0; i < 5; i++)
            if (!strcmp(ctr, k[i]))
                c.what = (uint8_t)(SW_DRAM_RD + i);
    } else if (!strcmp(comp, "cu")) {
        if (!strcmp(ctr, "wave_ps"))
            c.what = SW_WAVE_PS;
        else if (strstr(ctr, "stall"))
            c.what = SW_STALL;
    }
    return c;
}

/* The classes of s's counters, computed for the counters registered since
 * the last call; NULL when out of memory (summarize then classifies each
 * counter on the spot). */
static const sum_class *sum_classes(rp_sim *s)
{
    if (s->sumcls_n < s->stats.n) {
        sum_class *v = realloc(s->sumcls, s->stats.n * sizeof *v);
        if (!v)
            return NULL;
        s->sumcls = v;
        for (size_t j = s->sumcls_n; j < s->stats.n; j++)
            v[j] = classify(s->stats.v[j].name);
        s->sumcls_n = s->stats.n;
    }
    return s->sumcls;
}

static void summarize(rp_sim *s, const uint64_t *vals, uint32_t gfirst, uint32_t gcount, rp_time span,
                      uint64_t instr, summary *o)
{
    memset(o, 0, sizeof *o);
    o->span_ps = span;
    o->cycles = span / s->clk.period_ps;
    o->instr = instr;
    for (uint32_t g = gfirst; g < gfirst + gcount && g < s->n_gpus; g++)
        o->cus += s->gpus[g].n_cus;
    const sum_class *cls = sum_classes(s);
    for (size_t j = 0; j < s->stats.n; j++) {
        sum_class one;
        const sum_class *c = cls ? &cls[j] : (one = classify(s->stats.v[j].name), &one);
        if (c->what == SW_NONE || c->gpu < 0 || (uint32_t)c->gpu < gfirst ||
            (uint32_t)c->gpu >= gfirst + gcount)
            continue;
        uint64_t v = vals[j];
        sum_lv *L = c->lv >= 0 ? &o->lv[c->lv] : NULL;
        switch ((enum sum_what)c->what) {
        case SW_NONE: break;
        case SW_RH: L->rh += v; L->n++; break;
        case SW_RM: L->rm += v; break;
        case SW_WH: L->wh += v; break;
        case SW_WM: L->wm += v; break;
        case SW_MSHR_PS: L->mshr_ps += v; break;
        case SW_MSHR_ALLOCS: L->mshr_allocs += v; break;
        case SW_MSHR_STALLS: L->mshr_stalls += v; break;
        case SW_MSHR_PEAK: if (v > L->mshr_peak) L->mshr_peak = v; break;
        case SW_DRAM_RD: o->dram_rd += v; break;
        case SW_DRAM_WR: o->dram_wr += v; break;
        case SW_ROW_HITS: o->row_hits += v; o->has_rows = true; break;
        case SW_ROW_MISSES: o->row_misses += v; break;
        case SW_ROW_CONFLICTS: o->row_conflicts += v; break;
        case SW_WAVE_PS: o->wave_ps += v; o->has_wave_ps = true; break;
        case SW_STALL: {
            uint32_t i = 0;
            while (i < o->n_stall && strcmp(o->stall_name[i], c->ctr))
                i++;
            if (i == o->n_stall && i < SUM_STALLS)
                snprintf(o->stall_name[o->n_stall++], sizeof o->stall_name[0], "%s", c->ctr);
            if (i < SUM_STALLS)
                o->stall[i] += v;
            break;
        }
        }
    }
}

static double sum_occupancy(const rp_sim *s, const summary *o)
{
    uint64_t slots = (uint64_t)s->cfg.simds * s->cfg.wave_slots * o->cus;
    return o->span_ps && slots ? (double)o->wave_ps / ((double)o->span_ps * (double)slots) : 0.0;
}

static double sum_dram_gbps(const summary *o)
{
    return o->span_ps ? (double)(o->dram_rd + o->dram_wr) * 1000.0 / (double)o->span_ps : 0.0; /* B/ps*1e3 = GB/s */
}

static double sum_mshr_occ(const summary *o, const sum_lv *L)
{
    return o->span_ps && L->n ? (double)L->mshr_ps / ((double)o->span_ps * (double)L->n) : 0.0;
}

/* Kernel time of the whole run: per GPU (whose dispatcher ran the kernels)
 * the sum of its kernels' times, the busiest GPU's; and all instructions.
 * Host gaps between kernels are not counted. */
static void run_span(rp_sim *s, rp_time *span, uint64_t *instr)
{
    *instr = 0;
    *span = 0;
    for (uint32_t g = 0; g < s->n_gpus; g++) {
        rp_time t = 0;
        for (size_t i = 0; i < s->n_kernels; i++) {
            rp_kernel *k = s->kernels[i];
            if (k->gpu != g)
                continue;
            *instr += k->n_instr;
            if (k->end > k->start)
                t += k->end - k->start;
        }
        if (t > *span)
            *span = t;
    }
}

static void print_summary(rp_sim *s, FILE *f)
{
    uint64_t *vals = calloc(s->stats.n ? s->stats.n : 1, sizeof *vals);
    if (!vals)
        return;
    rp_stats_snapshot(&s->stats, vals);
    rp_time span;
    uint64_t instr;
    run_span(s, &span, &instr);
    summary o;
    summarize(s, vals, 0, s->n_gpus, span, instr, &o);
    fprintf(f, "summary (all kernels; time = kernel time of the busiest GPU): %llu cycles, %.3f us, %llu wavefront instructions, IPC %.2f",
            (unsigned long long)o.cycles, (double)span / 1e6, (unsigned long long)instr, ratio(instr, o.cycles));
    if (o.has_wave_ps)
        fprintf(f, ", occupancy %.1f%% of wave slots\n", 100 * sum_occupancy(s, &o));
    else
        fprintf(f, ", occupancy n/a (no CU wave_ps counter)\n");
    if (o.n_stall) {
        fprintf(f, "summary stalls (all CUs):");
        for (uint32_t i = 0; i < o.n_stall; i++)
            fprintf(f, " %s %llu", o.stall_name[i], (unsigned long long)o.stall[i]);
        fprintf(f, "\n");
    }
    for (int i = 0; i < LV_N; i++) {
        const sum_lv *L = &o.lv[i];
        if (!L->n)
            continue;
        fprintf(f, "summary %-4s x%-4llu reads %llu (hit %.1f%%), writes %llu (hit %.1f%%), MSHR: %llu allocated, "
                   "avg %.2f busy per cache, peak %llu, %llu stalls\n",
                lv_name[i], (unsigned long long)L->n, (unsigned long long)(L->rh + L->rm), 100 * ratio(L->rh, L->rh + L->rm),
                (unsigned long long)(L->wh + L->wm), 100 * ratio(L->wh, L->wh + L->wm), (unsigned long long)L->mshr_allocs,
                sum_mshr_occ(&o, L), (unsigned long long)L->mshr_peak, (unsigned long long)L->mshr_stalls);
    }
    fprintf(f, "summary dram: %llu bytes read, %llu written, %.1f GB/s", (unsigned long long)o.dram_rd,
            (unsigned long long)o.dram_wr, sum_dram_gbps(&o));
    if (o.has_rows)
        fprintf(f, ", row-buffer hit rate %.1f%% (%llu hits, %llu misses, %llu conflicts)\n",
                100 * ratio(o.row_hits, o.row_hits + o.row_misses + o.row_conflicts), (unsigned long long)o.row_hits,
                (unsigned long long)o.row_misses, (unsigned long long)o.row_conflicts);
    else
        fprintf(f, "\n");
    for (size_t j = 0; j < s->stats.n; j++)
        if (is_link_bytes(s->stats.v[j].name) && vals[j])
            fprintf(f, "summary link %s: %llu bytes\n", s->stats.v[j].name, (unsigned long long)vals[j]);
    free(vals);
}

/* total: the whole run (peaks are only meaningful there: per-kernel values
 * are counter deltas). */
static json_t *summary_json(rp_sim *s, const summary *o, const uint64_t *vals, bool total)
{
    json_t *j = json_object(), *st = json_object(), *cs = json_object(), *ln = json_object();
    json_object_set_new(j, "cycles", json_integer((json_int_t)o->cycles));
    json_object_set_new(j, "time_ns", json_real((double)o->span_ps / 1e3));
    json_object_set_new(j, "wavefront_instructions", json_integer((json_int_t)o->instr));
    json_object_set_new(j, "ipc", json_real(ratio(o->instr, o->cycles)));
    json_object_set_new(j, "occupancy", o->has_wave_ps ? json_real(sum_occupancy(s, o)) : json_null());
    for (uint32_t i = 0; i < o->n_stall; i++)
        json_object_set_new(st, o->stall_name[i], json_integer((json_int_t)o->stall[i]));
    json_object_set_new(j, "stall_cycles", st);
    for (int i = 0; i < LV_N; i++) {
        const sum_lv *L = &o->lv[i];
        json_t *c = json_object();
        json_object_set_new(c, "caches", json_integer((json_int_t)L->n));
        json_object_set_new(c, "read_hits", json_integer((json_int_t)L->rh));
        json_object_set_new(c, "read_misses", json_integer((json_int_t)L->rm));
        json_object_set_new(c, "write_hits", json_integer((json_int_t)L->wh));
        json_object_set_new(c, "write_misses", json_integer((json_int_t)L->wm));
        json_object_set_new(c, "read_hit_rate", json_real(ratio(L->rh, L->rh + L->rm)));
        json_object_set_new(c, "mshr_allocs", json_integer((json_int_t)L->mshr_allocs));
        json_object_set_new(c, "mshr_stalls", json_integer((json_int_t)L->mshr_stalls));
        json_object_set_new(c, "mshr_occupancy", json_real(sum_mshr_occ(o, L)));
        json_object_set_new(c, "mshr_peak", total ? json_integer((json_int_t)L->mshr_peak) : json_null());
        json_object_set_new(cs, lv_name[i], c);
    }
    json_object_set_new(j, "caches", cs);
    json_object_set_new(j, "dram_read_bytes", json_integer((json_int_t)o->dram_rd));
    json_object_set_new(j, "dram_write_bytes", json_integer((json_int_t)o->dram_wr));
    json_object_set_new(j, "dram_bandwidth_GBps", json_real(sum_dram_gbps(o)));
    json_object_set_new(j, "dram_row_hit_rate",
                        o->has_rows ? json_real(ratio(o->row_hits, o->row_hits + o->row_misses + o->row_conflicts))
                                    : json_null());
    const sum_class *cls = sum_classes(s);
    for (size_t k = 0; k < s->stats.n; k++)
        if (cls ? cls[k].link_bytes : is_link_bytes(s->stats.v[k].name))
            json_object_set_new(ln, s->stats.v[k].name, json_integer((json_int_t)vals[k]));
    json_object_set_new(j, "link_bytes", ln);
    return j;
}

/* A kernel's time: 0 for one that did not finish (a failed run), whose end
 * is not set (it printed as a huge number). */
static rp_time kspan(const rp_kernel *k) { return k->done && k->end > k->start ? k->end - k->start : 0; }

void rp_sim_report(rp_sim *s, FILE *f)
{
    fprintf(f, "%-4s %-32s %3s %12s %12s %12s %6s %6s %6s %12s %12s  %s\n", "id", "kernel", "gpu", "cycles",
            "time_us", "wf_instr", "ipc", "l1v%", "l2%", "dram_bytes", "link_bytes", "data");
    for (size_t i = 0; i < s->n_kernels; i++) {
        rp_kernel *k = s->kernels[i];
        uint64_t cyc = kspan(k) / s->clk.period_ps;
        rp_ksum d = {k->sum1.l1v_hits - k->sum0.l1v_hits, k->sum1.l1v_accesses - k->sum0.l1v_accesses,
                     k->sum1.l2_hits - k->sum0.l2_hits, k->sum1.l2_accesses - k->sum0.l2_accesses,
                     k->sum1.dram_bytes - k->sum0.dram_bytes, k->sum1.link_bytes - k->sum0.link_bytes};
        if (!k->done)
            memset(&d, 0, sizeof d); /* its end counters were never taken */
        char name[33];
        rp_printable(name, sizeof name, k->launch.kernel_name);
        char chk[800];
        if (!k->done)
            snprintf(chk, sizeof chk, "not finished");
        else if (k->mismatches)
            snprintf(chk, sizeof chk, "%llu mismatches", (unsigned long long)k->mismatches);
        else
            snprintf(chk, sizeof chk, "OK");
        if (k->atomic_mismatches)
            snprintf(chk + strlen(chk), sizeof chk - strlen(chk), " (%llu atomic-order)",
                     (unsigned long long)k->atomic_mismatches);
        if (k->walk_errors)
            snprintf(chk + strlen(chk), sizeof chk - strlen(chk), " [%llu walk errors]",
                     (unsigned long long)k->walk_errors);
        if (k->order_loads || k->adopted_loads)
            snprintf(chk + strlen(chk), sizeof chk - strlen(chk), " (loads: %llu order-dependent, %llu adopted)",
                     (unsigned long long)k->order_loads, (unsigned long long)k->adopted_loads);
        if (k->smp.switched)
            snprintf(chk + strlen(chk), sizeof chk - strlen(chk),
                     " [sampled: %u of %u workgroups in detail%s, the rest predicted %.3f us +- %.3f us]",
                     k->smp.detailed_wgs, k->n_wg, k->smp.by_group ? " (its rate as its launches alike's)" : "",
                     (double)k->smp.skip_ps / 1e6, (double)k->smp.bound_ps / 1e6);
        if (k->smp.wave_skips)
            snprintf(chk + strlen(chk), sizeof chk - strlen(chk),
                     " [%s%llu of %llu wavefront instructions skipped in %llu waves, time predicted +- %.3f us]",
                     k->smp.switched ? "waves: " : "sampled: ", (unsigned long long)k->smp.wave_instr,
                     (unsigned long long)(k->n_instr + k->smp.wave_instr), (unsigned long long)k->smp.wave_skips,
                     (double)k->smp.wave_bound_ps / 1e6);
        if (k->smp.after_skips)
            snprintf(chk + strlen(chk), sizeof chk - strlen(chk), " [after skipped work]");
        char why[400];
        if (rp_sample_why_full(s, k, why, sizeof why) >= 0)
            snprintf(chk + strlen(chk), sizeof chk - strlen(chk), " [in full: %s]", why);
        fprintf(f, "%-4u %-32s %3u %12llu %12.3f %12llu %6.2f %6.1f %6.1f %12llu %12llu  %s\n", k->launch.kernel_id,
                name, k->gpu, (unsigned long long)cyc, (double)kspan(k) / 1e6,
                (unsigned long long)k->n_instr, ratio(k->n_instr, cyc), 100 * ratio(d.l1v_hits, d.l1v_accesses),
                100 * ratio(d.l2_hits, d.l2_accesses), (unsigned long long)d.dram_bytes,
                (unsigned long long)d.link_bytes, chk);
    }
    const rp_check *c = &s->check;
    fprintf(f,
            "total: %zu kernels, %.3f us simulated, %llu events; data check: %llu loads (%llu mismatches), "
            "%llu atomic returns (%llu order-dependent differences), %llu LDS loads (%llu mismatches, %llu "
            "accesses unchecked), %llu D2H blocks (%llu mismatches), %llu trace-walk errors\n",
            s->n_kernels, (double)rp_sim_now(s) / 1e6, (unsigned long long)rp_sim_events(s),
            (unsigned long long)c->loads_checked, (unsigned long long)c->load_mismatches,
            (unsigned long long)c->atomics_checked, (unsigned long long)c->atomic_mismatches,
            (unsigned long long)c->lds_checked, (unsigned long long)c->lds_mismatches,
            (unsigned long long)c->lds_unchecked, (unsigned long long)c->d2h_checked,
            (unsigned long long)c->d2h_mismatches, (unsigned long long)c->walk_errors);
    if (s->cfg.sample_enable) {
        rp_sample_sum ss;
        rp_sample_summary(s, &ss);
        char full[256] = "";
        size_t at = 0;
        for (int r = 0; r < RP_WHY_N; r++)
            if (ss.in_full[r] && at < sizeof full)
                at += (size_t)snprintf(full + at, sizeof full - at, "%s%u %s", at ? ", " : "", ss.in_full[r],
                                       rp_why_full_label[r]);
        fprintf(f,
                "sampled: %u of %u kernels (%u whole, %u at the workgroup level, %u at the wave level), %llu of %llu "
                "wavefront instructions skipped (%.1f%%), kernel time %.3f us +- %.3f us (the sampled kernels' "
                "bounds summed); in full: %u%s%s%s; detailed after skipped work (no bound): %u\n",
                ss.sampled, ss.kernels, ss.whole, ss.wg_level, ss.wave_level, (unsigned long long)ss.skipped,
                (unsigned long long)ss.instr, ss.instr ? 100.0 * (double)ss.skipped / (double)ss.instr : 0.0,
                (double)ss.kernel_ps / 1e6, (double)ss.bound_ps / 1e6, ss.kernels - ss.sampled, at ? " (" : "", full,
                at ? ")" : "", ss.after_skips);
    }
    if (c->loads_hashed)
        fprintf(f, "hashed: %llu of the load lanes checked were compared by their instruction's hash (the trace was "
                   "recorded with gcn3-emu --load-values hash): a difference names the instruction, not the lane\n",
                (unsigned long long)c->loads_hashed);
    if (c->loads_unrecorded)
        fprintf(f, "not checked: %llu loads whose values the trace does not hold (private memory, recorded without "
                   "gcn3-emu --scratch-data)\n",
                (unsigned long long)c->loads_unrecorded);
    if (s->lds_omitted)
        fprintf(f, "not checked: the LDS (the trace was recorded with gcn3-emu --lds-values none: its LDS accesses "
                   "hold addresses, no values, and count as unchecked; an await polling the LDS ends as recorded)\n");
    if (c->load_order || c->load_adopted || c->d2h_order || c->d2h_adopted)
        fprintf(f,
                "explained differences (not mismatches): %llu order-dependent loads (another wave of the kernel, "
                "or a kernel of another stream, writes the location), %llu adopted loads (memory the runtime writes during kernels), %llu "
                "order-dependent D2H blocks (last written by several waves), %llu adopted D2H blocks\n",
                (unsigned long long)c->load_order, (unsigned long long)c->load_adopted,
                (unsigned long long)c->d2h_order, (unsigned long long)c->d2h_adopted);
    if (c->polls_checked || c->spin_iterations)
        fprintf(f,
                "awaits: %llu polls read (%llu saw memory change), %llu wait iterations polled, %llu waits "
                "gave up (differences), %llu wave-cycles waiting (trace 1.2)\n",
                (unsigned long long)c->polls_checked, (unsigned long long)c->poll_changes,
                (unsigned long long)c->spin_iterations, (unsigned long long)c->await_give_ups,
                (unsigned long long)(c->wait_ps / s->clk.period_ps));
    print_summary(s, f);
}

/* ---- streams: overlap and busy time ------------------------------------------------- */

typedef struct { rp_time a, b; } span_t;

static int span_cmp(const void *x, const void *y)
{
    const span_t *p = x, *q = y;
    return p->a != q->a ? (p->a < q->a ? -1 : 1) : (p->b > q->b) - (p->b < q->b);
}

/* Length of the union of the n intervals v (sorted in place), ps. */
static rp_time union_len(span_t *v, size_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, span_cmp);
    rp_time tot = 0, a = v[0].a, b = v[0].b;
    for (size_t i = 1; i < n; i++) {
        if (v[i].a > b) {
            tot += b - a;
            a = v[i].a;
            b = v[i].b;
        } else if (v[i].b > b) {
            b = v[i].b;
        }
    }
    return tot + (b - a);
}

/* How long k ran beside other kernels of its GPU (*kern) and beside copies
 * or memsets of its device's GPU (*copy), ps; buf holds n_kernels +
 * n_cspan spans. */
static void kernel_overlap(const rp_sim *s, const rp_kernel *k, span_t *buf, rp_time *kern, rp_time *copy)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_kernels; i++) {
        const rp_kernel *o = s->kernels[i];
        if (o == k || !o->done || o->gpu != k->gpu || o->end <= k->start || o->start >= k->end)
            continue;
        buf[n++] = (span_t){o->start > k->start ? o->start : k->start, o->end < k->end ? o->end : k->end};
    }
    *kern = union_len(buf, n);
    n = 0;
    for (size_t i = 0; i < s->host.n_cspan; i++) {
        const struct rp_copy_span *c = &s->host.cspan[i];
        if (c->gpu != k->gpu || c->end <= k->start || c->start >= k->end)
            continue;
        buf[n++] = (span_t){c->start > k->start ? c->start : k->start, c->end < k->end ? c->end : k->end};
    }
    *copy = union_len(buf, n);
}

/* Per stream (in order of first appearance: kernels, then copies): its
 * kernels and their busy time (the union of their spans), its copies and
 * memsets, their bytes and busy time. */
static json_t *streams_json(const rp_sim *s, span_t *buf)
{
    json_t *arr = json_array();
    uint32_t *ids = malloc((s->n_kernels + s->host.n_cspan + 1) * sizeof *ids);
    size_t nid = 0;
    if (!ids)
        return arr;
    for (size_t i = 0; i < s->n_kernels + s->host.n_cspan; i++) {
        uint32_t id = i < s->n_kernels ? s->kernels[i]->stream : s->host.cspan[i - s->n_kernels].stream;
        size_t j = 0;
        while (j < nid && ids[j] != id)
            j++;
        if (j == nid)
            ids[nid++] = id;
    }
    for (size_t j = 0; j < nid; j++) {
        size_t nk = 0, nc = 0;
        uint64_t bytes = 0;
        for (size_t i = 0; i < s->n_kernels; i++)
            if (s->kernels[i]->stream == ids[j] && s->kernels[i]->done)
                buf[nk++] = (span_t){s->kernels[i]->start, s->kernels[i]->end};
        rp_time kbusy = union_len(buf, nk);
        for (size_t i = 0; i < s->host.n_cspan; i++)
            if (s->host.cspan[i].stream == ids[j]) {
                buf[nc++] = (span_t){s->host.cspan[i].start, s->host.cspan[i].end};
                bytes += s->host.cspan[i].bytes;
            }
        rp_time cbusy = union_len(buf, nc);
        json_t *o = json_object();
        json_object_set_new(o, "stream", json_integer(ids[j]));
        json_object_set_new(o, "kernels", json_integer((json_int_t)nk));
        json_object_set_new(o, "kernel_busy_ps", json_integer((json_int_t)kbusy));
        json_object_set_new(o, "copies", json_integer((json_int_t)nc));
        json_object_set_new(o, "copy_bytes", json_integer((json_int_t)bytes));
        json_object_set_new(o, "copy_busy_ps", json_integer((json_int_t)cbusy));
        json_array_append_new(arr, o);
    }
    free(ids);
    return arr;
}

static void cfg_json(void *arg, const char *key, const char *val)
{
    json_object_set_new((json_t *)arg, key, json_string(val));
}

/* Kernel i's object of the stats JSON (rp_sim_write_json's "kernels"
 * array, written one at a time: rp_json_dump_file_stream). */
struct kjson_ctx {
    rp_sim *s;
    span_t *sbuf;
};

static json_t *kernel_json(size_t i, void *arg)
{
    const struct kjson_ctx *x = arg;
    rp_sim *s = x->s;
    span_t *sbuf = x->sbuf;
    rp_kernel *k = s->kernels[i];
    json_t *o = json_object(), *kc = json_object();
    uint64_t cyc = kspan(k) / s->clk.period_ps;
    json_object_set_new(o, "id", json_integer(k->launch.kernel_id));
    char kn[1024];
    json_object_set_new(o, "name", json_string(rp_printable(kn, sizeof kn, k->launch.kernel_name)));
    json_object_set_new(o, "device", json_integer(k->launch.device));
    json_object_set_new(o, "gpu", json_integer(k->gpu));
    json_object_set_new(o, "stream", json_integer(k->stream));
    /* its hardware queue (disp.c: stream k > 0 on queue (k - 1) mod dispatcher.hw_queues); the null
     * stream's kernels go through the dispatcher itself (null) */
    json_object_set_new(o, "queue", k->stream ? json_integer((k->stream - 1) % s->cfg.dispatch_hw_queues)
                                              : json_null());
    if (k->done) {
        rp_time ok_ps, oc_ps;
        kernel_overlap(s, k, sbuf, &ok_ps, &oc_ps);
        json_object_set_new(o, "overlap_kernels_ps", json_integer((json_int_t)ok_ps));
        json_object_set_new(o, "overlap_copies_ps", json_integer((json_int_t)oc_ps));
    }
    json_object_set_new(o, "workgroups", json_integer(k->n_wg));
    if (s->cfg.sample_enable) /* its time carries the effect of earlier skips: no bound covers it */
        json_object_set_new(o, "after_skipped_work", json_boolean(k->smp.after_skips));
    if (k->smp.switched || k->smp.wave_skips) {
        /* sampled replay (sample.c): end_ps, cycles and time_ns are predictions within bound_ps;
         * wavefront_instructions and the counters cover the detailed workgroups only, less the
         * instructions their waves skipped */
        json_t *sm = json_object();
        json_object_set_new(sm, "detailed_workgroups", json_integer(k->smp.switched ? k->smp.detailed_wgs : k->n_wg));
        json_object_set_new(sm, "skipped_workgroups", json_integer(k->smp.skipped_wgs));
        json_object_set_new(sm, "stretches", json_integer(k->smp.stretches));
        json_object_set_new(sm, "group_windows", json_integer(k->smp.merge));
        /* the first stretch decided by agreeing with the launches alike's rate (sample.alike_groups) */
        json_object_set_new(sm, "by_launches_alike", json_boolean(k->smp.by_group));
        if (k->smp.whole) {
            /* kernel level: how many launches alike decided, and the bound's share for the
             * L2's state at its start when one did (sample.kernels_stream) */
            json_object_set_new(sm, "launches_alike_measured", json_integer(k->smp.alike_n));
            if (k->smp.by_vectors) /* (only then: sample.alike_vectors) */
                json_object_set_new(sm, "alike_by_vectors", json_true());
            if (k->smp.start_rel > 0)
                json_object_set_new(sm, "start_state_bound_ps",
                                    json_integer((json_int_t)((double)k->smp.skip_ps * k->smp.start_rel)));
        }
        if (k->smp.wave_skips) {
            json_object_set_new(sm, "wave_skips", json_integer((json_int_t)k->smp.wave_skips));
            json_object_set_new(sm, "wave_skipped_instructions", json_integer((json_int_t)k->smp.wave_instr));
            json_object_set_new(sm, "wave_bound_ps", json_integer((json_int_t)k->smp.wave_bound_ps));
        }
        json_object_set_new(sm, "skipped_wavefront_instructions", json_integer((json_int_t)k->smp.skipped_instr));
        json_object_set_new(sm, "switch_ps", json_integer((json_int_t)k->smp.t_switch));
        json_object_set_new(sm, "rate_per_ns", json_real(k->smp.rate_mean * 1e3));
        json_object_set_new(sm, "rate_spread", json_real(k->smp.rate_dev));
        json_object_set_new(sm, "predicted_ps", json_integer((json_int_t)k->smp.skip_ps));
        json_object_set_new(sm, "bound_ps", json_integer((json_int_t)k->smp.bound_ps));
        json_object_set_new(o, "sampled", sm);
    }
    char why[400];
    if (rp_sample_why_full(s, k, why, sizeof why) >= 0)
        json_object_set_new(o, "replayed_in_full", json_string(why));
    json_object_set_new(o, "start_ps", json_integer((json_int_t)k->start));
    json_object_set_new(o, "end_ps", json_integer((json_int_t)k->end));
    json_object_set_new(o, "cycles", json_integer((json_int_t)cyc));
    json_object_set_new(o, "time_ns", json_real((double)kspan(k) / 1e3));
    json_object_set_new(o, "wavefront_instructions", json_integer((json_int_t)k->n_instr));
    json_object_set_new(o, "ipc", json_real(ratio(k->n_instr, cyc)));
    json_object_set_new(o, "l1v_hit_rate",
                        json_real(ratio(k->sum1.l1v_hits - k->sum0.l1v_hits, k->sum1.l1v_accesses - k->sum0.l1v_accesses)));
    json_object_set_new(o, "l2_hit_rate",
                        json_real(ratio(k->sum1.l2_hits - k->sum0.l2_hits, k->sum1.l2_accesses - k->sum0.l2_accesses)));
    json_object_set_new(o, "dram_bytes", json_integer((json_int_t)(k->sum1.dram_bytes - k->sum0.dram_bytes)));
    json_object_set_new(o, "inter_gpu_bytes", json_integer((json_int_t)(k->sum1.link_bytes - k->sum0.link_bytes)));
    json_object_set_new(o, "load_mismatches", json_integer((json_int_t)k->mismatches));
    json_object_set_new(o, "atomic_order_mismatches", json_integer((json_int_t)k->atomic_mismatches));
    json_object_set_new(o, "load_order_dependent", json_integer((json_int_t)k->order_loads));
    json_object_set_new(o, "load_adopted", json_integer((json_int_t)k->adopted_loads));
    json_object_set_new(o, "walk_errors", json_integer((json_int_t)k->walk_errors));
    json_object_set_new(o, "spin_iterations", json_integer((json_int_t)k->spin_iterations));
    json_object_set_new(o, "wait_cycles", json_integer((json_int_t)(k->wait_ps / s->clk.period_ps)));
    /* counter names are ASCII, built by the components (rp_stats_add):
     * no UTF-8 check (_nocheck) for these thousands of keys */
    if (k->snap0 && k->done)
        for (size_t j = 0; j < s->stats.n; j++)
            if (k->snap0[j])
                json_object_set_new_nocheck(kc, s->stats.v[j].name, json_integer((json_int_t)k->snap0[j]));
    if (k->snap0 && k->done) {
        summary sm;
        summarize(s, k->snap0, k->gpu_first, k->gpu_count, k->end - k->start, k->n_instr, &sm);
        json_object_set_new(o, "summary", summary_json(s, &sm, k->snap0, false));
    } else
        json_object_set_new(o, "summary", json_null());
    json_object_set_new(o, "counters", kc);
    return o;
}

int rp_sim_write_json(rp_sim *s, const char *path, const char *trace_path)
{
    return rp_sim_write_json_with(s, path, trace_path, NULL, NULL);
}

int rp_sim_write_json_with(rp_sim *s, const char *path, const char *trace_path, const char *key, json_t *last)
{
    json_t *root = json_object(), *cfg = json_object(), *ks = json_array(), *tot = json_object(),
           *counters = json_object(), *chk = json_object();
    rp_config_foreach(&s->cfg, cfg_json, cfg);
    json_object_set_new(root, "trace", json_string(trace_path ? trace_path : ""));
    json_object_set_new(root, "config", cfg);
    span_t *sbuf = malloc((s->n_kernels + s->host.n_cspan + 1) * sizeof *sbuf);
    if (!sbuf) {
        snprintf(s->err, sizeof s->err, "%s: out of memory for the stats JSON", path);
        json_decref(last);
        json_decref(root);
        json_decref(ks);
        json_decref(tot);
        json_decref(counters);
        json_decref(chk);
        return -1;
    }
    /* the kernels are written one by one (below): a trace of thousands of
     * launches never holds all their objects at once */
    json_object_set_new(root, "kernels", ks);
    json_object_set_new(root, "streams", streams_json(s, sbuf));
    json_t *eng = json_array(); /* per GPU and copy engine (SDMA) */
    for (uint32_t g = 0; g < s->n_gpus; g++)
        for (uint32_t k = 0; k < s->cfg.host_sdma_engines; k++) {
            const struct rp_sdma *e = s->host.sdma ? &s->host.sdma[(size_t)g * s->cfg.host_sdma_engines + k] : NULL;
            json_t *o = json_object();
            json_object_set_new(o, "gpu", json_integer(g));
            json_object_set_new(o, "engine", json_integer(k));
            json_object_set_new(o, "copies", json_integer(e ? (json_int_t)e->copies : 0));
            json_object_set_new(o, "bytes", json_integer(e ? (json_int_t)e->bytes : 0));
            json_object_set_new(o, "busy_ps", json_integer(e ? (json_int_t)e->busy_ps : 0));
            json_array_append_new(eng, o);
        }
    json_object_set_new(root, "copy_engines", eng);
    for (size_t j = 0; j < s->stats.n; j++)
        json_object_set_new_nocheck(counters, s->stats.v[j].name, json_integer((json_int_t)*s->stats.v[j].ptr));
    json_object_set_new(tot, "simulated_ps", json_integer((json_int_t)rp_sim_now(s)));
    json_object_set_new(tot, "events", json_integer((json_int_t)rp_sim_events(s)));
    json_object_set_new(tot, "partitions", json_integer((json_int_t)s->n_parts));
    json_object_set_new(tot, "lookahead_ps", json_integer((json_int_t)s->lookahead_ps));
    json_object_set_new(tot, "sync_windows", json_integer((json_int_t)s->windows));
    json_object_set_new(tot, "critical_path_events", json_integer((json_int_t)s->crit_events));
    json_t *pev = json_array();
    for (uint32_t p = 0; p < s->n_parts; p++) {
        char holds[96];
        json_t *o = json_object();
        uint32_t g = rp_part_holds(s, p, holds, sizeof holds);
        json_object_set_new(o, "gpu", g == UINT32_MAX ? json_null() : json_integer(g));
        json_object_set_new(o, "holds", json_string(holds));
        json_object_set_new(o, "events", json_integer((json_int_t)s->parts[p].eng.n_events));
        json_array_append_new(pev, o);
    }
    json_object_set_new(tot, "partition_events", pev);
    uint64_t instr = 0;
    for (size_t i = 0; i < s->n_kernels; i++)
        instr += s->kernels[i]->n_instr;
    json_object_set_new(tot, "wavefront_instructions", json_integer((json_int_t)instr));
    uint64_t *vals = calloc(s->stats.n ? s->stats.n : 1, sizeof *vals);
    if (vals) {
        rp_time span;
        uint64_t ninstr;
        summary sm;
        rp_stats_snapshot(&s->stats, vals);
        run_span(s, &span, &ninstr);
        summarize(s, vals, 0, s->n_gpus, span, ninstr, &sm);
        json_object_set_new(tot, "summary", summary_json(s, &sm, vals, true));
        free(vals);
    }
    json_object_set_new(tot, "counters", counters);
    json_object_set_new(root, "totals", tot);
    const rp_check *c = &s->check;
    json_object_set_new(chk, "loads_checked", json_integer((json_int_t)c->loads_checked));
    json_object_set_new(chk, "loads_unrecorded", json_integer((json_int_t)c->loads_unrecorded));
    if (c->loads_hashed) /* only for traces with hashed loads (2.2): other outputs stay as they were */
        json_object_set_new(chk, "loads_hashed", json_integer((json_int_t)c->loads_hashed));
    json_object_set_new(chk, "load_mismatches", json_integer((json_int_t)c->load_mismatches));
    json_object_set_new(chk, "atomics_checked", json_integer((json_int_t)c->atomics_checked));
    json_object_set_new(chk, "atomic_order_mismatches", json_integer((json_int_t)c->atomic_mismatches));
    json_object_set_new(chk, "lds_checked", json_integer((json_int_t)c->lds_checked));
    json_object_set_new(chk, "lds_mismatches", json_integer((json_int_t)c->lds_mismatches));
    json_object_set_new(chk, "lds_unchecked", json_integer((json_int_t)c->lds_unchecked));
    if (s->lds_omitted) /* only for traces recorded without LDS values (2.3): other outputs stay as they were */
        json_object_set_new(chk, "lds_values_recorded", json_false());
    json_object_set_new(chk, "d2h_checked", json_integer((json_int_t)c->d2h_checked));
    json_object_set_new(chk, "d2h_mismatches", json_integer((json_int_t)c->d2h_mismatches));
    json_object_set_new(chk, "walk_errors", json_integer((json_int_t)c->walk_errors));
    json_object_set_new(chk, "polls_checked", json_integer((json_int_t)c->polls_checked));
    json_object_set_new(chk, "poll_changes", json_integer((json_int_t)c->poll_changes));
    json_object_set_new(chk, "spin_iterations", json_integer((json_int_t)c->spin_iterations));
    json_object_set_new(chk, "wait_cycles", json_integer((json_int_t)(c->wait_ps / s->clk.period_ps)));
    json_object_set_new(chk, "await_give_ups", json_integer((json_int_t)c->await_give_ups));
    json_object_set_new(chk, "load_order_dependent", json_integer((json_int_t)c->load_order));
    json_object_set_new(chk, "load_adopted", json_integer((json_int_t)c->load_adopted));
    json_object_set_new(chk, "d2h_order_dependent", json_integer((json_int_t)c->d2h_order));
    json_object_set_new(chk, "d2h_adopted", json_integer((json_int_t)c->d2h_adopted));
    json_object_set_new(root, "check", chk);
    if (s->cfg.sample_enable) { /* what the sampled replay sampled (rp_sample_summary) */
        rp_sample_sum ss;
        rp_sample_summary(s, &ss);
        json_t *sm = json_object(), *why = json_object();
        json_object_set_new(sm, "kernels", json_integer(ss.kernels));
        json_object_set_new(sm, "kernels_sampled", json_integer(ss.sampled));
        json_object_set_new(sm, "whole", json_integer(ss.whole));
        json_object_set_new(sm, "workgroup_level", json_integer(ss.wg_level));
        json_object_set_new(sm, "wave_level", json_integer(ss.wave_level));
        json_object_set_new(sm, "wavefront_instructions", json_integer((json_int_t)ss.instr));
        json_object_set_new(sm, "skipped_wavefront_instructions", json_integer((json_int_t)ss.skipped));
        json_object_set_new(sm, "kernel_ps", json_integer((json_int_t)ss.kernel_ps));
        json_object_set_new(sm, "bound_ps", json_integer((json_int_t)ss.bound_ps));
        for (int r = 0; r < RP_WHY_N; r++)
            json_object_set_new(why, rp_why_full_label[r], json_integer(ss.in_full[r]));
        json_object_set_new(sm, "in_full", why);
        json_object_set_new(sm, "detailed_after_skips", json_integer(ss.after_skips));
        json_object_set_new(root, "sampled", sm);
    }
    if (last)
        json_object_set_new(root, key, last);
    /* written next to path and renamed over it: a failed write (full disk)
     * never leaves a truncated file in place of an earlier result */
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    struct kjson_ctx kx = {s, sbuf};
    int r = rp_json_dump_file_stream(root, tmp, JSON_INDENT(1) | JSON_PRESERVE_ORDER, "kernels", s->n_kernels,
                                     kernel_json, &kx);
    json_decref(root);
    free(sbuf);
    if (r || rename(tmp, path)) {
        snprintf(s->err, sizeof s->err, "%s: cannot write the stats JSON: %s", path,
                 r ? "write failed (disk full? out of memory?)" : strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}
