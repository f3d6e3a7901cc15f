/*
 * parallel.c - partitions of the machine and the conservative, deterministic
 * parallel replay of one run (mgpu-replay --threads T).
 *
 * Partitions. Every GPU is a partition with its own event engine (when the
 * topology has several GPUs and every link between GPUs has a non-zero
 * latency; otherwise all GPUs share partition 0). Partitions interact only
 * through links whose latency is at least the lookahead W:
 *   - interconnect links between nodes of different partitions (net.c: a
 *     GPU's router is in its partition, a PCIe switch in the partition of
 *     its first GPU, the root complex and the PCIe bus's arbiter and exit
 *     in a partition of their own, the last; the shared bus is split into
 *     a pure-latency half from each GPU to the arbiter and the serialising
 *     half after it, which gives the same arrival times as one shared
 *     link);
 *   - U-MGPU's dispatcher on GPU 0 and the other GPUs' CUs and L2 banks
 *     (WG_ASSIGN, WG_DONE, FLUSH, FLUSH_ACK cross the interconnect: latency
 *     max(cu.dispatch_latency, W));
 *   - the completion of a kernel, which the host sees host.link_latency
 *     later (the completion signal crosses the host link).
 * W = min(those latencies). A message sent at time t arrives at t + W or
 * later, so all partitions can run the window [t0, t0 + W) independently,
 * where t0 is the earliest pending event anywhere (Chandy-Misra-Bryant
 * conservative synchronisation with a global lookahead; Fujimoto, Parallel
 * and Distributed Simulation Systems, 2000, ch. 3).
 *
 * The loop (one coordinator thread plus T - 1 workers):
 *   serial point: flip the cross-partition queues; flush the partitions'
 *     buffered output in partition order; sample per-kernel counters of
 *     kernels that started or ended (rp_knote) and tell the host of ends;
 *     find t_dev = the earliest event of any partition or message in
 *     flight between partitions and t_host = the host's next event. The
 *     host timeline runs here, alone, when t_host < t_dev (at equal times
 *     the devices go first, as RP_PRIO_HOST orders them in one engine): it
 *     may read and change any GPU's state (queue launches, apply copies).
 *   window: each partition (taken in any order by any thread) delivers the
 *     messages queued for it, then handles its events before
 *     t_lim = min(t_dev + W, t_host + 1).
 * Every step depends only on the partitions' states at the serial points,
 * never on which thread ran a partition or when: statistics, data-check
 * results and output are bit-identical for every T. The model is the same
 * for every T (T = 1 runs the same windows on one thread).
 */
#include "rp_sim_internal.h"
#include "rp_wgload.h"

#include <pthread.h>
#include <stdio_ext.h>
#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Thread_local rp_part *rp_part_tls;
_Thread_local const rp_res *rp_res_tls;

/* ---- partitions ----------------------------------------------------------------------- */

/* Latency of one interconnect link between GPUs (the smallest a message
 * between partitions can take), 0 when some link has none. */
static rp_time net_hop_ps(const rp_sim *s)
{
    const rp_config *c = &s->cfg;
    uint32_t kind = 0;
    if (rp_net_kind_parse(c->net_kind, &kind))
        return 0;
    switch (kind) {
    case RP_NET_PCIE_BUS:
        return rp_lat_ps(c->link_latency, s->clk) / 2; /* the bus is split at its arbiter (net.c) */
    case RP_NET_PCIE_TREE:
        return rp_lat_ps(c->pcie_hop_latency, s->clk);
    default:
        return rp_lat_ps(c->p2p_latency, s->clk);
    }
}

int rp_sim_partition(rp_sim *s)
{
    rp_time hop = s->n_gpus > 1 ? net_hop_ps(s) : 0;
    s->notify_ps = rp_lat_ps(s->cfg.host_link_latency, s->clk);
    if (s->notify_ps < s->clk.period_ps)
        s->notify_ps = s->clk.period_ps; /* the host never sees an end at the same instant */
    /* per GPU: its memory side, then its groups of shader arrays (the cut
     * inside a GPU, sim.gpu_partitions: over the NoC and dispatch links) */
    uint32_t grp_parts = s->cfg.gpu_partitions > 1 ? s->cfg.gpu_partitions : 1;
    bool dram_cut = grp_parts > 1 && s->cfg.dram_partition; /* and its DRAM channels last */
    uint32_t slices = dram_cut ? s->cfg.l2_partitions : 0; /* its L2 banks before them (sim.l2_partitions) */
    uint32_t per = grp_parts + slices + dram_cut;
    if (slices && s->cfg.topo_kind == RP_TOPO_UNIFIED && s->n_gpus > 1) {
        snprintf(s->err, sizeof s->err,
                 "config: sim.l2_partitions with a unified multi-GPU topology is not implemented (the kernel-end "
                 "flush of the other GPUs' L2 banks reaches them over the interconnect, not the NoC)");
        return -1;
    }
    /* a unified-memory policy that moves pages shares one page table
     * between the GPUs (rp_um.h): one partition */
    bool one = rp_um_moves(rp_um_policy_parse(s->cfg.um_policy));
    uint32_t gparts = s->n_gpus > 1 && hop > 0 && !one ? s->n_gpus : 1;
    /* The interconnect's hubs, which every message between GPUs crosses (the
     * PCIe bus's arbiter and exit, a PCIe tree's root complex), take a
     * partition of their own after the GPUs' when the GPUs are partitions:
     * in GPU 0's they made it the slowest (u-mgpu, bitonic at the 4x size:
     * 18.5 M events against 10.2 M in each other GPU's). Their links have
     * the hop latency (net_hop_ps): at least the lookahead. */
    uint32_t kind = 0;
    bool hubs = !rp_net_kind_parse(s->cfg.net_kind, &kind) && (kind == RP_NET_PCIE_BUS || kind == RP_NET_PCIE_TREE);
    uint32_t net_parts = gparts > 1 && hubs ? 1 : 0;
    s->n_parts = gparts * per + net_parts;
    s->ctx.n_parts = s->n_parts;
    s->ctx.gpu_cut = per > 1;
    s->lookahead_ps = s->notify_ps;
    if (gparts > 1 && hop < s->lookahead_ps)
        s->lookahead_ps = hop;
    if (per > 1) {
        rp_time noc = rp_lat_ps(s->cfg.noc_latency, s->clk), dl = rp_lat_ps(s->cfg.dispatch_latency, s->clk);
        if (noc < s->lookahead_ps)
            s->lookahead_ps = noc;
        if (dl < s->lookahead_ps)
            s->lookahead_ps = dl;
    }
    s->dram_shift_ps = 0;
    if (dram_cut) {
        /* d >= the lookahead, in whole DRAM clocks: shifting a channel's whole
         * timeline (arrivals, clock edges, refreshes) by d changes nothing in it */
        rp_clock dc = rp_clock_make(s->cfg.dram_freq);
        rp_time d = (s->lookahead_ps + dc.period_ps - 1) / dc.period_ps * dc.period_ps;
        rp_time lat = rp_lat_ps(s->cfg.dram_latency, s->clk);
        if (2 * d > lat) {
            snprintf(s->err, sizeof s->err,
                     "config: sim.dram_partition = 1 needs dram.latency >= %llu ps (twice the lookahead %llu ps in "
                     "whole DRAM clocks); it is %llu ps",
                     (unsigned long long)(2 * d), (unsigned long long)s->lookahead_ps, (unsigned long long)lat);
            return -1;
        }
        s->dram_shift_ps = d;
    }
    if (!s->threads)
        s->threads = 1;
    s->parts = aligned_alloc(_Alignof(rp_part), s->n_parts * sizeof *s->parts); /* whole host cache lines */
    if (!s->parts) {
        snprintf(s->err, sizeof s->err, "out of memory");
        return -1;
    }
    memset(s->parts, 0, s->n_parts * sizeof *s->parts);
    for (uint32_t p = 0; p < s->n_parts; p++) {
        rp_part *pt = &s->parts[p];
        pt->id = p;
        pt->fan_slot = UINT32_MAX;
        pt->xq = calloc(s->n_parts, sizeof *pt->xq);
        if (rp_engine_init(&pt->eng) || !pt->xq) {
            snprintf(s->err, sizeof s->err, "out of memory");
            return -1;
        }
        for (uint32_t q = 0; q < s->n_parts; q++) {
            pt->xq[q].written = &pt->written;
            pt->xq[q].to = q;
        }
        if (s->out) {
            pt->out = open_memstream(&pt->obuf, &pt->olen);
            if (!pt->out) {
                snprintf(s->err, sizeof s->err, "out of memory for the output of partition %u", p);
                return -1;
            }
        }
        pt->res = (rp_res){&pt->pool, &pt->check, pt->out};
    }
    s->net_part = net_parts ? &s->parts[s->n_parts - 1] : NULL;
    /* A sampled replay may run such partitions on several threads when what a
     * fast-forward changes (the L2 banks and the functional memory) is all in
     * the dispatcher's partition, which decides it: one GPU, its banks on the
     * memory side; or, with a multi-GPU topology of one partition per GPU,
     * when what a fast-forward changes in other partitions waits for the next
     * serial point (smp_defer; sample.c "Partitions") */
    s->smp_defer = s->cfg.sample_enable && gparts > 1 && per == 1 &&
                   (s->cfg.topo_kind == RP_TOPO_UNIFIED || s->cfg.topo_kind == RP_TOPO_DISCRETE);
    /* with a dispatcher per GPU (discrete), each in its partition, the kernel
     * level's groups (shared by all) change only at serial points */
    s->smp_serial_groups = s->smp_defer && s->cfg.topo_kind == RP_TOPO_DISCRETE;
    s->smp_parts = s->cfg.sample_enable && s->n_parts > 1 && ((s->n_gpus == 1 && !slices) || s->smp_defer);
    for (uint32_t g = 0; g < s->n_gpus; g++) {
        rp_gpu *gp = &s->gpus[g];
        uint32_t base = (gparts > 1 ? g : 0) * per;
        gp->part = &s->parts[base];
        gp->dram_part = &s->parts[dram_cut ? base + per - 1 : base];
        gp->n_groups = grp_parts - 1;
        gp->n_slices = slices;
        gp->part->fan_slot = 0;
        for (uint32_t i = 0; i < slices; i++)
            s->parts[base + grp_parts + i].fan_slot = 1 + i;
        gp->bank_part = calloc(s->cfg.l2_banks ? s->cfg.l2_banks : 1, sizeof *gp->bank_part);
        if (!gp->bank_part) {
            snprintf(s->err, sizeof s->err, "out of memory");
            return -1;
        }
        for (uint32_t b = 0; b < s->cfg.l2_banks; b++)
            gp->bank_part[b] = slices ? &s->parts[base + grp_parts + (uint32_t)((uint64_t)b * slices / s->cfg.l2_banks)]
                                      : gp->part;
        gp->sa_part = calloc(s->cfg.shader_arrays ? s->cfg.shader_arrays : 1, sizeof *gp->sa_part);
        if (!gp->sa_part) {
            snprintf(s->err, sizeof s->err, "out of memory");
            return -1;
        }
        for (uint32_t a = 0; a < s->cfg.shader_arrays; a++)
            gp->sa_part[a] = grp_parts > 1 ? &s->parts[base + 1 + rp_sa_group(a, grp_parts - 1, s->cfg.shader_arrays)]
                                           : gp->part;
    }
    pthread_mutex_t *mu = malloc(sizeof *mu);
    if (!mu || pthread_mutex_init(mu, NULL)) {
        free(mu);
        snprintf(s->err, sizeof s->err, "out of memory");
        return -1;
    }
    s->fail_lock = mu;
    return 0;
}

uint32_t rp_part_holds(const rp_sim *s, uint32_t p, char *buf, size_t n)
{
    const rp_part *pt = &s->parts[p];
    if (pt == s->net_part) {
        snprintf(buf, n, "interconnect hubs");
        return UINT32_MAX;
    }
    for (uint32_t g = 0; g < s->n_gpus; g++) {
        const rp_gpu *gp = &s->gpus[g];
        if (pt == gp->part) {
            snprintf(buf, n, "%s", gp->n_groups ? "memory side" : s->n_parts == 1 ? "all" : "GPU");
            return g;
        }
        if (pt == gp->dram_part) {
            snprintf(buf, n, "DRAM channels");
            return g;
        }
        uint32_t a0 = UINT32_MAX, a1 = 0;
        for (uint32_t a = 0; a < s->cfg.shader_arrays; a++)
            if (gp->sa_part[a] == pt) {
                if (a0 == UINT32_MAX)
                    a0 = a;
                a1 = a;
            }
        if (a0 != UINT32_MAX) {
            if (a0 == a1)
                snprintf(buf, n, "shader array %u", a0);
            else
                snprintf(buf, n, "shader arrays %u-%u", a0, a1);
            return g;
        }
    }
    snprintf(buf, n, "none");
    return 0;
}

/* l (already initialised on the receiver's engine) is sent on from
 * partition `from`: queue its messages when that is another partition. */
void rp_link_from(rp_sim *s, rp_link *l, const rp_part *from, const rp_part *to)
{
    if (from != to)
        rp_link_cross(l, (rp_engine *)&from->eng, &s->parts[from->id].xq[to->id]);
}

/* l, into partition `to`, gets senders in GPU gp's memory side (fan slot 0)
 * and each of its L2 slices (slot 1 + i; sim.l2_partitions): an input from
 * each (rp_link_fan). 0 or -1 out of memory. */
static int fan_from_banks(rp_sim *s, rp_gpu *gp, rp_link *l, rp_part *to)
{
    rp_fan **v = realloc(s->fans, (s->n_fans + 1) * sizeof *v);
    if (!v) {
        snprintf(s->err, sizeof s->err, "out of memory");
        return -1;
    }
    s->fans = v;
    rp_fan *f = rp_link_fan(l, 1 + gp->n_slices);
    if (!f) {
        snprintf(s->err, sizeof s->err, "out of memory");
        return -1;
    }
    s->fans[s->n_fans++] = f;
    rp_link_from(s, &f->in[0], gp->part, to);
    for (uint32_t i = 0; i < gp->n_slices; i++)
        rp_link_from(s, &f->in[1 + i], &s->parts[gp->part->id + gp->n_groups + 1 + i], to);
    return 0;
}

/* The cut inside GPU gp (sim.gpu_partitions): what its groups of shader
 * arrays (partition gp->part + 1 + j) and its memory side (gp->part) send
 * each other crosses partitions: requests into the L2 banks' and the RDMA
 * engine's arbiters, fills back into the L1s, workgroup assignments from
 * dispatcher d (in partition dp) and their ends over a link per group
 * (latency dlat).
 * Every one of these links has a latency >= the lookahead. 0 or -1. */
static int link_cut(rp_sim *s, rp_gpu *gp, rp_disp *d, rp_part *dp, rp_time dlat)
{
    const rp_config *c = &s->cfg;
    rp_part *mem = gp->part;
    gp->done_grp = calloc(gp->n_groups, sizeof *gp->done_grp);
    if (!gp->done_grp) {
        snprintf(s->err, sizeof s->err, "out of memory");
        return -1;
    }
    for (uint32_t j = 0; j < gp->n_groups; j++) {
        rp_part *gj = &s->parts[mem->id + 1 + j];
        for (uint32_t b = 0; b < c->l2_banks; b++)
            rp_link_from(s, &gp->l2_stage[(size_t)j * c->l2_banks + b], gj, gp->bank_part[b]);
        rp_link_from(s, &gp->rdma_stage[j], gj, mem);
        rp_link_init(&gp->done_grp[j], d->eng, &d->in, dlat, 0, 0);
        rp_link_from(s, &gp->done_grp[j], gj, dp);
    }
    if (gp->n_slices) {
        /* the L2 banks in partitions of their own (sim.l2_partitions): the
         * memory side's own NoC links into them (RDMA requests from other
         * GPUs, page walks, the kernel-end flush), and an input per sending
         * partition into every link the banks answer on in the memory side */
        for (uint32_t b = 0; b < c->l2_banks; b++)
            rp_link_from(s, &gp->l2_stage[(size_t)gp->n_groups * c->l2_banks + b], mem, gp->bank_part[b]);
        if (fan_from_banks(s, gp, &d->in_link, dp) || fan_from_banks(s, gp, &gp->rdma.l2resp_link, mem) ||
            (c->tlb_enable && fan_from_banks(s, gp, &gp->l2_tlb.fill_link, mem)))
            return -1;
    }
    if (gp->dram_part != mem) {
        /* L2 misses and write-backs into the channels, and their responses
         * into the banks' fill links (only the DRAM sends on those) */
        for (uint32_t ch = 0; ch < c->dram_channels; ch++) {
            if (!gp->n_slices)
                rp_link_from(s, &gp->dram[ch].in, mem, gp->dram_part);
            else if (fan_from_banks(s, gp, &gp->dram[ch].in, gp->dram_part))
                return -1;
        }
        for (uint32_t b = 0; b < c->l2_banks; b++)
            rp_link_from(s, &gp->l2[b].fill_link, gp->dram_part, gp->bank_part[b]);
    }
    for (uint32_t a = 0; a < c->shader_arrays; a++) {
        if (!gp->n_slices) {
            rp_link_from(s, &gp->l1s[a].fill_link, mem, gp->sa_part[a]);
            rp_link_from(s, &gp->l1i[a].fill_link, mem, gp->sa_part[a]);
        } else if (fan_from_banks(s, gp, &gp->l1s[a].fill_link, gp->sa_part[a]) ||
                   fan_from_banks(s, gp, &gp->l1i[a].fill_link, gp->sa_part[a]))
            return -1;
    }
    for (uint32_t i = 0; i < gp->n_cus; i++) {
        rp_cu *cu = &gp->cus[i];
        rp_part *sp = gp->sa_part[cu->sa];
        if (!gp->n_slices)
            rp_link_from(s, &cu->l1v.fill_link, mem, sp);
        else if (fan_from_banks(s, gp, &cu->l1v.fill_link, sp))
            return -1;
        cu->ctl_link.latency_ps = dlat;
        rp_link_from(s, &cu->ctl_link, dp, sp);
        cu->done_link = &gp->done_grp[rp_sa_group(cu->sa, gp->n_groups, c->shader_arrays)];
    }
    return 0;
}

int rp_sim_link_partitions(rp_sim *s)
{
    bool unified = s->cfg.topo_kind == RP_TOPO_UNIFIED && s->n_gpus > 1;
    rp_gpu *g0 = &s->gpus[0];
    rp_disp *d0 = &g0->disp;
    rp_time dl = rp_lat_ps(s->cfg.dispatch_latency, s->clk), hop = net_hop_ps(s);
    if (unified) {
        d0->gpu_in = calloc(s->n_gpus, sizeof *d0->gpu_in);
        d0->gpu_flush = calloc(s->n_gpus, sizeof *d0->gpu_flush);
        if (!d0->gpu_in || !d0->gpu_flush) {
            snprintf(s->err, sizeof s->err, "out of memory");
            return -1;
        }
    }
    for (uint32_t g = 0; g < s->n_gpus; g++) {
        rp_gpu *gp = &s->gpus[g];
        rp_disp *d = unified ? d0 : &gp->disp;
        rp_link *done = &d->in_link;
        if (unified && g != 0) {
            /* Dispatch to, completion from and the kernel-end flush of another
             * GPU cross the interconnect. */
            rp_time x = dl > hop ? dl : hop;
            rp_link_init(&d0->gpu_in[g], &g0->part->eng, &d0->in, x, 0, 0);
            rp_link_from(s, &d0->gpu_in[g], gp->part, g0->part);
            rp_link_init(&d0->gpu_flush[g], &gp->part->eng, NULL, hop, 0, 0);
            rp_link_from(s, &d0->gpu_flush[g], g0->part, gp->part);
            done = &d0->gpu_in[g];
            for (uint32_t i = 0; i < gp->n_cus; i++) {
                gp->cus[i].ctl_link.latency_ps = x;
                rp_link_from(s, &gp->cus[i].ctl_link, g0->part, gp->part);
            }
        }
        for (uint32_t i = 0; i < gp->n_cus; i++)
            gp->cus[i].done_link = done;
        if (gp->n_groups && link_cut(s, gp, d, unified ? g0->part : gp->part, unified && g != 0 ? (dl > hop ? dl : hop) : dl))
            return -1;
    }
    return rp_net_partition(s);
}

void rp_parts_fini(rp_sim *s)
{
    for (uint32_t p = 0; s->parts && p < s->n_parts; p++) {
        rp_part *pt = &s->parts[p];
        if (pt->out)
            fclose(pt->out);
        free(pt->obuf);
        for (uint32_t q = 0; pt->xq && q < s->n_parts; q++)
            rp_xq_fini(&pt->xq[q]);
        free(pt->xq);
        rp_xq_list_fini(&pt->written);
        rp_xq_list_fini(&pt->incoming);
        free(pt->notes);
        rp_lbufs_fini(&pt->lbufs);
        rp_msg_pool_fini(&pt->pool);
        rp_engine_fini(&pt->eng);
    }
    free(s->parts);
    s->parts = NULL;
    s->n_parts = 0;
    for (size_t i = 0; i < s->n_fans; i++)
        free(s->fans[i]);
    free(s->fans);
    s->fans = NULL;
    s->n_fans = 0;
    if (s->fail_lock) {
        pthread_mutex_destroy(s->fail_lock);
        free(s->fail_lock);
        s->fail_lock = NULL;
    }
}

void rp_sim_set_threads(rp_sim *s, uint32_t threads)
{
    /* sampled replay: one thread replays (the partitions of a GPU cut into
     * several, s->smp_parts: all threads); the others decode what it
     * fast-forwards and apply it with it, by L2 bank (sample.c) */
    s->threads = threads && (!s->cfg.sample_enable || s->smp_parts) ? threads : 1;
    s->smp_threads = s->cfg.sample_enable && threads && !s->smp_defer ? threads : 1; /* (smp_defer: no helpers) */
}

void rp_sim_set_progress(rp_sim *s, void (*fn)(void *arg, const rp_progress *p), void *arg, double every_s)
{
    s->progress_fn = fn;
    s->progress_arg = arg;
    s->progress_every = every_s > 0 ? every_s : 0.5;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Between windows (or at the end): every partition is stopped, so the
 * kernels' counters are read without a race. */
static void report_progress(rp_sim *s, double t0, uint64_t instr_total, int final)
{
    rp_progress p = {.instr_total = instr_total, .kernels_total = (uint32_t)trc_reader_n_kernels(s->rd),
                     .sim_ps = (uint64_t)rp_sim_now(s), .wall_s = wall_now() - t0, .final = final};
    for (size_t i = 0; i < s->n_kernels; i++)
        p.kernels_done += s->kernels[i]->done;
    for (uint32_t g = 0; g < s->n_gpus; g++) /* instructions issued so far, every CU */
        for (uint32_t c = 0; c < s->gpus[g].n_cus; c++)
            p.instr_done += s->gpus[g].cus[c].st_instr;
    s->progress_fn(s->progress_arg, &p);
}

void rp_kernel_note(rp_sim *s, rp_kernel *k, int end)
{
    rp_part *p = rp_part_tls ? rp_part_tls : s->gpus[k->gpu].part;
    if (p->n_notes == p->cap_notes) {
        size_t nc = p->cap_notes ? 2 * p->cap_notes : 16;
        rp_knote *v = realloc(p->notes, nc * sizeof *v);
        if (!v) {
            rp_sim_fail(s, "out of memory noting a kernel's %s", end ? "end" : "start");
            return;
        }
        p->notes = v;
        p->cap_notes = nc;
    }
    p->notes[p->n_notes++] = (rp_knote){k, (uint8_t)end};
    /* The counters of the kernel's own partition, sampled now, at the exact
     * time (the other partitions' at the next serial point: nothing of this
     * kernel reaches them before, as every message to them takes >= W). */
    if (k->snap0)
        rp_stats_snapshot_part(&s->stats, k->snap0, (int32_t)p->id, true, end != 0);
    rp_ksum *sum = end ? &k->sum1 : &k->sum0;
    memset(sum, 0, sizeof *sum);
    rp_ksum_take(s, k, sum, (int32_t)p->id, true);
}

rp_time rp_sim_now(const rp_sim *s)
{
    rp_time t = s->eng.now;
    for (uint32_t p = 0; p < s->n_parts; p++)
        if (s->parts[p].eng.now > t)
            t = s->parts[p].eng.now;
    return t;
}

uint64_t rp_sim_events(const rp_sim *s)
{
    uint64_t n = s->eng.n_events;
    for (uint32_t p = 0; p < s->n_parts; p++)
        n += s->parts[p].eng.n_events;
    return n;
}

/* ---- the window loop --------------------------------------------------------------------- */

/* Sense-reversing barrier: spins a little (windows are short and the
 * partitions of one window take similar times), then sleeps on a futex, so
 * that a loaded machine or more threads than cores costs no busy CPU. */
/* How long a thread waiting at the window barrier spins before it sleeps:
 * an estimate, several windows' waiting (windows take 8-60 us of work at 16
 * threads on the bench traces, docs/timing-model.md). */
#define RP_SPIN_US 200

typedef struct barrier {
    uint32_t n, count, sense;
    uint32_t sleepers;        /* threads in futex_wait (or about to be) */
    uint32_t spin_us;         /* busy-wait this long before sleeping (max_spin_us or 0: see barrier_wait) */
    uint32_t max_spin_us;
    bool always_spin;         /* MGPU_REPLAY_BARRIER=spin: never stop spinning when preempted */
} barrier;

static void futex_wait(uint32_t *addr, uint32_t val)
{
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake_all(uint32_t *addr) { syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0); }

static void barrier_wait(barrier *b, uint32_t *local_sense)
{
    uint32_t ls = *local_sense ^= 1;
    if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == __atomic_load_n(&b->n, __ATOMIC_RELAXED)) {
        __atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&b->sense, ls, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&b->sleepers, __ATOMIC_SEQ_CST))
            futex_wake_all(&b->sense);
        return;
    }
    /* Spin only while the machine is not oversubscribed: every 1024 waits a
     * thread looks at how often it was preempted (involuntary context
     * switches). On a loaded machine the thread waited for is often off its
     * CPU and spinning only delays it (measured on 2 cores beside one busy
     * process: 4000 spins made a run 3x slower than sleeping at once). */
    static _Thread_local uint32_t waits;
    static _Thread_local long nivcsw;
    if (!(++waits & 1023) && b->max_spin_us && !b->always_spin) {
        struct rusage ru;
        if (!getrusage(RUSAGE_THREAD, &ru)) {
            __atomic_store_n(&b->spin_us, ru.ru_nivcsw - nivcsw > 8 ? 0 : b->max_spin_us, __ATOMIC_RELAXED);
            nivcsw = ru.ru_nivcsw;
        }
    }
    /* The spin is bounded in time, not in pause instructions: a pause takes
     * about 10 cycles on Intel cores before Skylake and about 140 from it on
     * (Intel 64 and IA-32 Optimization Reference Manual, Skylake's pause
     * latency), so a count that waits out a window on one
     * machine sleeps through every window on another (measured on a 16-vCPU
     * Xeon VM: 4000 pauses lost to spinning by 5-20% at 8 and 16 threads). */
    uint32_t us = __atomic_load_n(&b->spin_us, __ATOMIC_RELAXED);
    if (us) {
        double t_end = 0; /* the clock is read only once the wait is not short */
        for (;;) {
            for (int i = 0; i < 32; i++) {
                if (__atomic_load_n(&b->sense, __ATOMIC_ACQUIRE) == ls)
                    return;
                __builtin_ia32_pause();
            }
            double t = wall_now();
            if (!t_end)
                t_end = t + 1e-6 * us;
            else if (t > t_end)
                break;
        }
    }
    /* Either the last thread sees sleepers > 0 and wakes us, or we see its
     * new sense (both sequentially consistent): no lost wake-up. */
    __atomic_add_fetch(&b->sleepers, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&b->sense, __ATOMIC_SEQ_CST) != ls)
        futex_wait(&b->sense, ls ^ 1);
    __atomic_sub_fetch(&b->sleepers, 1, __ATOMIC_SEQ_CST);
}

/* A partition's claim, on a cache line of its own: the window in which a
 * thread last took it (so a new window needs no reset). */
typedef struct claim_word {
    _Alignas(64) uint64_t window;
} claim_word;

/* Windows between two assignments of partitions to threads (a stretch). */
#define RP_ASSIGN_EVERY 256
/* Stretches between two trials of the deals (assign). */
#define RP_DEAL_PERIOD 64

/* A thread that has run its own partitions takes another thread's (one no
 * thread has started) only when that partition's load (rp_part.load: 64 x its
 * events per window, moving average) is at least RP_STEAL_MIN_LOAD, 128
 * events (about 10 us of work at the 2-core VM's 80 ns per event), or when
 * there are RP_STEAL_MANY or more partitions per thread (each then a small
 * share of a thread's state). Moving a partition costs its working set's
 * cache misses on the thief's core, and again on its owner's in the next
 * window. Estimates from measurements (2-core VM, --threads 2, 2026-12-02):
 * where a window holds ~33 events per partition and a thread 3 partitions
 * (r9nano cut into 6 partitions, 4 ns windows) taking them cost more than it
 * saved (km 1x 3.50-3.67 s with, 3.24-3.44 s without); where it holds
 * 250-500 (u-mgpu, 250 ns windows) it helped (gd 1x 1.14-1.18 s with,
 * 1.23-1.46 s without; conv 1x 1.01-1.16 against 1.23-1.29 s), and where a
 * thread holds 12 small ones (d-mgpu cut, 25 partitions) too (gd 1x, 4 GPUs:
 * 3.93-4.19 s taking any, 4.00-4.33 s none, 4.47-4.64 s only the loads of
 * 128 events or more). */
#define RP_STEAL_MIN_LOAD (64u * 128u)
#define RP_STEAL_MANY 4

typedef struct run_ctx {
    rp_sim *s;
    barrier bar;
    rp_time t_lim;
    uint64_t window;          /* the current window's number, from 1 (claims) */
    claim_word *claim;        /* [n_parts] */
    uint32_t nt;              /* threads (the coordinator is thread 0) */
    uint32_t *order;          /* [n_parts]: the partitions, heaviest first (by rp_part.load) */
    uint32_t *list;           /* [nt * n_parts]: thread t's own partitions at list[t * n_parts ...] */
    uint32_t *list_n;         /* [nt] */
    uint64_t *tsum;           /* [nt]: the load dealt to each thread (assign) */
    uint32_t *unit;           /* [n_parts]: its GPU (n_gpus: the interconnect's hubs) */
    uint32_t n_units;         /* > 0: GPUs are dealt to threads whole (assign) */
    uint64_t *uload;          /* [n_units] */
    uint32_t *uorder, *uowner; /* [n_units] */
    uint8_t *idle;            /* [n_parts]: nothing to do in this window (written before it, read only in it) */
    int stop;                 /* set by the coordinator: workers leave */
    /* the deal's trials (assign): host ticks and partition events since the
     * last deal, and each deal's ticks per event in its last trial */
    uint64_t ep_t0, ep_events;
    double trial[2];
    double wins[2];           /* each deal's wins over the trials, decaying by 7/8 a period */
    uint32_t deal;            /* the deal of the current stretch: RP_DEAL_* */
} run_ctx;

/* How assign deals partitions (or GPUs) to threads. */
enum { RP_DEAL_LPT, RP_DEAL_ROUND_ROBIN };

/* A host clock for choosing the deal (never seen by the model): the
 * time-stamp counter where there is one, else CLOCK_MONOTONIC in ns. */
static inline uint64_t rp_host_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

typedef struct worker_arg {
    run_ctx *c;
    uint32_t tid;             /* 1 .. nt - 1 */
} worker_arg;

/* Run partition p's window: deliver what other partitions sent it during
 * the last window, then handle its events before the limit. What the
 * coordinator reads of it after the window is left on one host cache line
 * (next, ev_win, lb_away beside written); the incoming list, which the
 * coordinator writes, is only read here (the coordinator empties it). */
static void run_part(rp_sim *s, rp_part *p, rp_time t_lim)
{
    rp_part_tls = p;
    rp_res_tls = &p->res;
    rp_link_fan_slot = p->fan_slot;
    for (size_t i = 0; i < p->incoming.n; i++) /* in sending-partition order */
        rp_xq_drain(p->incoming.v[i]);
    rp_engine *e = &p->eng;
    uint64_t ev0 = e->n_events;
    rp_engine_run_before(e, t_lim, &s->failed);
    p->next = rp_engine_next_time(e);
    p->ev_win = e->n_events - ev0;
    p->lb_away = p->lbufs.away != NULL;
    rp_part_tls = NULL;
    rp_res_tls = NULL;
    rp_link_fan_slot = UINT32_MAX;
}

/* Partition p has nothing before t_lim: no event and nothing delivered to
 * it (running it would handle nothing and change nothing). */
static inline bool idle(const rp_part *p, rp_time t_lim) { return p->next >= t_lim && !p->incoming.n; }

/* Take partition i for this window: true for the one thread that does. */
static inline bool claim(run_ctx *c, uint32_t i)
{
    uint64_t w = c->window;
    return __atomic_load_n(&c->claim[i].window, __ATOMIC_RELAXED) != w &&
           __atomic_exchange_n(&c->claim[i].window, w, __ATOMIC_ACQ_REL) != w;
}

/* Thread tid's share of a window: its own partitions with work (c->idle)
 * first (the same ones window after window, so their state stays in that
 * core's caches), heaviest first, then partitions no thread has taken yet
 * from the ends of the other threads' lists, where the work moved is worth
 * the move (RP_STEAL_MIN_LOAD: a thread whose partitions were light helps a
 * busy one); only those claim words are read (each on a line other threads
 * write: reading all of them every window was 7% of a two-thread run with
 * 25 partitions). Every partition is on some thread's own list (assign), so
 * every one with work runs. Which thread runs a partition, and when, never
 * changes a result. */
static void run_window(run_ctx *c, uint32_t tid)
{
    rp_sim *s = c->s;
    uint32_t n = s->n_parts;
    const uint32_t *own = &c->list[(size_t)tid * n];
    for (uint32_t k = 0; k < c->list_n[tid]; k++)
        if (!c->idle[own[k]] && claim(c, own[k]))
            run_part(s, &s->parts[own[k]], c->t_lim);
    /* Then the other threads' lists from their ends, where their owners,
     * who go down them in order, arrive last: a partition taken there
     * means the rest of that list is taken (or being taken) too. */
    bool many = n >= RP_STEAL_MANY * c->nt;
    for (uint32_t d = 1; d < c->nt; d++) {
        uint32_t v = (tid + d) % c->nt;
        const uint32_t *vl = &c->list[(size_t)v * n];
        for (uint32_t k = c->list_n[v]; k-- > 0;) {
            uint32_t i = vl[k];
            if (c->idle[i] || (!many && s->parts[i].load < RP_STEAL_MIN_LOAD))
                continue;
            if (!claim(c, i))
                break;
            run_part(s, &s->parts[i], c->t_lim);
        }
    }
}

/* Indices 0..n-1 into ord, by key[ord[k]] descending; an insertion sort:
 * stable, so ties stay in index order (n is small). */
static void sort_heaviest_first(uint32_t *ord, uint32_t n, const uint64_t *key, size_t stride)
{
    for (uint32_t k = 0; k < n; k++)
        ord[k] = k;
    for (uint32_t k = 1; k < n; k++)
        for (uint32_t j = k; j > 0 && *(const uint64_t *)((const char *)key + ord[j] * stride) >
                                          *(const uint64_t *)((const char *)key + ord[j - 1] * stride);
             j--) {
            uint32_t t = ord[j];
            ord[j] = ord[j - 1];
            ord[j - 1] = t;
        }
}

/* The thread with the least load dealt so far. */
static uint32_t least(const run_ctx *c)
{
    uint32_t best = 0;
    for (uint32_t t = 1; t < c->nt; t++)
        if (c->tsum[t] < c->tsum[best])
            best = t;
    return best;
}

/* At a serial point, every RP_ASSIGN_EVERY windows: the partitions dealt to
 * the threads, by one of two deals. Round robin: partition i to thread
 * i mod T, in partition order. LPT: heaviest first (by rp_part.load), each
 * to the thread with the least load so far (longest processing time first;
 * Graham 1969). Neither wins everywhere (2-core VM, --threads 2, 1x traces,
 * 2026-12-02: r9nano cut km 3.05-3.10 s round robin against 3.41-3.47 s LPT,
 * gd 0.93-0.98 against 1.07-1.10 s, but conv 0.97-1.00 against 0.89-1.02 s
 * and u-mgpu gd at 4x 4.43-4.96 against 4.28-4.42 s), and the load counts
 * events, not what they cost: so the replay tries both now and then and
 * keeps the one that handled an event in fewer host ticks (the choice only
 * moves work between threads, never a result). With the
 * cut inside GPUs and at least as many GPUs as threads (c->n_units), whole
 * GPUs are dealt that way (their partitions' loads summed; the hubs' as one
 * more): most messages stay between partitions of one GPU, which then stay
 * on one core (D-MGPU cut into 25 partitions, gd 1x on 4 GPUs, --threads 2:
 * the partitions' work took 13.7 G cycles of thread time dealt one by one,
 * against 8.9 G on one thread). */
static void assign(run_ctx *c)
{
    rp_sim *s = c->s;
    uint32_t n = s->n_parts;
    if (c->window % RP_ASSIGN_EVERY != 1)
        return;
    /* Which deal: in each period of RP_DEAL_PERIOD stretches, stretches 1
     * and 2 deal by LPT, 3 and 4 round robin, each pair's second measured
     * (the first moves partitions between cores); the rest take the deal
     * whose measured stretch took fewer host ticks per partition event. */
    uint64_t now = rp_host_ticks(), ep = c->window / RP_ASSIGN_EVERY;
    if (c->ep_t0 && ep) {
        uint64_t prev = (ep - 1) % RP_DEAL_PERIOD;
        if (prev == 2 || prev == 4)
            c->trial[prev / 2 - 1] = (double)(now - c->ep_t0) / (double)(c->ep_events + 1);
    }
    c->ep_t0 = now;
    c->ep_events = 0;
    uint64_t k0 = ep % RP_DEAL_PERIOD;
    if (k0 == 5 && c->trial[RP_DEAL_LPT] > 0 && c->trial[RP_DEAL_ROUND_ROBIN] > 0) {
        /* one period's trial is one vote: a stretch's work may be unlike the
         * other's (a kernel ends), the majority of recent periods decides */
        c->wins[RP_DEAL_LPT] *= 0.875;
        c->wins[RP_DEAL_ROUND_ROBIN] *= 0.875;
        c->wins[c->trial[RP_DEAL_ROUND_ROBIN] < c->trial[RP_DEAL_LPT] ? RP_DEAL_ROUND_ROBIN : RP_DEAL_LPT] += 1;
    }
    c->deal = k0 == 1 || k0 == 2 ? RP_DEAL_LPT
              : k0 == 3 || k0 == 4 ? RP_DEAL_ROUND_ROBIN
              : c->wins[RP_DEAL_ROUND_ROBIN] > c->wins[RP_DEAL_LPT] ? RP_DEAL_ROUND_ROBIN
                                                                    : RP_DEAL_LPT;
    uint64_t *sum = c->tsum;
    for (uint32_t t = 0; t < c->nt; t++)
        c->list_n[t] = 0, sum[t] = 0;
    if (c->deal == RP_DEAL_ROUND_ROBIN) { /* partition (or GPU) i to thread i mod T, in partition order */
        for (uint32_t k = 0; k < n; k++) {
            uint32_t t = (c->n_units ? c->unit[k] : k) % c->nt;
            c->list[(size_t)t * n + c->list_n[t]++] = k;
        }
        return;
    }
    sort_heaviest_first(c->order, n, &s->parts[0].load, sizeof s->parts[0]);
    if (c->n_units) {
        for (uint32_t u = 0; u < c->n_units; u++)
            c->uload[u] = 0;
        for (uint32_t k = 0; k < n; k++)
            c->uload[c->unit[k]] += s->parts[k].load + 1;
        sort_heaviest_first(c->uorder, c->n_units, c->uload, sizeof *c->uload);
        for (uint32_t k = 0; k < c->n_units; k++) {
            uint32_t best = least(c);
            sum[best] += c->uload[c->uorder[k]];
            c->uowner[c->uorder[k]] = best;
        }
        for (uint32_t k = 0; k < n; k++) { /* each thread's partitions heaviest first */
            uint32_t i = c->order[k], t = c->uowner[c->unit[i]];
            c->list[(size_t)t * n + c->list_n[t]++] = i;
        }
        return;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t best = least(c);
        sum[best] += s->parts[c->order[k]].load + 1;
        c->list[(size_t)best * n + c->list_n[best]++] = c->order[k];
    }
}

static void *worker(void *arg)
{
    worker_arg *wa = arg;
    run_ctx *c = wa->c;
    uint32_t sense = 0;
    for (;;) {
        barrier_wait(&c->bar, &sense); /* window starts */
        if (__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE))
            return NULL;
        run_window(c, wa->tid);
        barrier_wait(&c->bar, &sense); /* window ends */
    }
}

/* Copy a partition's buffered output to the sim's output. Most windows
 * print nothing: __fpending (glibc, stdio_ext.h: the bytes written to a
 * stream's buffer and not yet flushed; for a memory stream, since the last
 * rewind) skips the fflush, which was 3-4% of a run cut into 25 partitions
 * (one per partition per window). */
static void flush_out(rp_sim *s, rp_part *p)
{
    if (!p->out || !__fpending(p->out))
        return;
    fflush(p->out);
    if (p->olen) {
        fwrite(p->obuf, 1, p->olen, s->out);
        rewind(p->out);
        p->olen = 0;
    }
}

/* Serial point: what the partitions noted during the last window. */
static void serial_point(rp_sim *s)
{
    if (s->smp_parts)
        rp_sample_publish(s); /* what waves may read of their kernels in the next window (and, with one
                               * partition per GPU, what fast-forwards did to other partitions' L2 banks;
                               * a failure is s->failed) */
    for (uint32_t p = 0; p < s->n_parts; p++) {
        rp_part *pt = &s->parts[p];
        flush_out(s, pt);
        if (pt->lb_away) /* only a window lends a partition's buffers away (rp_lb) */
            rp_lbufs_return(&pt->lbufs), pt->lb_away = false;
    }
    rp_lbufs_return(&s->lbufs);
    rp_net_sum(s->net);
    for (uint32_t p = 0; p < s->n_parts; p++) {
        rp_part *pt = &s->parts[p];
        for (size_t i = 0; i < pt->n_notes; i++) {
            rp_knote *n = &pt->notes[i];
            rp_kernel *k = n->k;
            if (k->snap0)
                rp_stats_snapshot_part(&s->stats, k->snap0, (int32_t)p, false, n->end);
            rp_ksum_take(s, k, n->end ? &k->sum1 : &k->sum0, (int32_t)p, false);
            if (s->smp_serial_groups)
                rp_sample_note(s, k, n->end);
            if (n->end)
                rp_host_kernel_done(s, k);
        }
        pt->n_notes = 0;
    }
}

/* Earliest pending device activity: events and messages between partitions. */
static rp_time device_next(rp_sim *s)
{
    rp_time t = RP_TIME_MAX;
    for (uint32_t p = 0; p < s->n_parts; p++) {
        rp_part *pt = &s->parts[p];
        if (pt->next < t)
            t = pt->next;
        if (pt->written.oom || pt->incoming.oom)
            rp_sim_fail(s, "out of memory queueing messages between partitions");
        for (size_t i = 0; i < pt->incoming.n; i++) {
            rp_xq *x = pt->incoming.v[i];
            const rp_xbuf *r = rp_xq_buf(x, x->w ^ 1);
            if (r->n && r->min_arrive < t)
                t = r->min_arrive;
        }
    }
    return t;
}

static void dump_all(rp_sim *s, FILE *f)
{
    rp_engine_dump(&s->eng, f);
    for (uint32_t p = 0; p < s->n_parts; p++)
        rp_engine_dump(&s->parts[p].eng, f);
}

static uint64_t progress(const rp_sim *s)
{
    uint64_t n = s->eng.progress;
    for (uint32_t p = 0; p < s->n_parts; p++)
        n += s->parts[p].eng.progress;
    return n;
}

/* Start the nt - 1 worker threads (tid[1..]); returns how many run. When
 * not all of them start, those that did are stopped again and the run goes
 * on this thread alone (the same result): returns 0. */
static uint32_t start_workers(run_ctx *c, pthread_t *tid, worker_arg *wa, uint32_t nt)
{
    uint32_t started = 0;
    for (uint32_t i = 1; i < nt; i++) {
        wa[i] = (worker_arg){c, i};
        if (pthread_create(&tid[i], NULL, worker, &wa[i]))
            break;
        started++;
    }
    if (started + 1 < nt) {
        if (started) {
            __atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
            __atomic_store_n(&c->bar.n, started + 1, __ATOMIC_RELAXED); /* (workers may be in barrier_wait) */
            uint32_t sense = 0;
            barrier_wait(&c->bar, &sense);
            for (uint32_t i = 1; i <= started; i++)
                pthread_join(tid[i], NULL);
            c->stop = 0;
            started = 0;
        }
        c->bar.n = 1;
        c->nt = 1;
    }
    return started;
}

/* The watchdog at a serial point whose next device event is at t_dev: no
 * event pending while work remains (a deadlock), or no progress for more
 * than wd ps (sim.watchdog). Returns true after rp_sim_fail, with every
 * component's state dumped to stderr. */
static bool watchdog(rp_sim *s, rp_time t_dev, uint64_t *last_progress, rp_time *last_progress_t, rp_time wd)
{
    if (t_dev == RP_TIME_MAX) {
        snprintf(s->eng.err, sizeof s->eng.err,
                 "watchdog: deadlock at t=%llu ps: no events pending but work remains (component states dumped)",
                 (unsigned long long)rp_sim_now(s));
        dump_all(s, stderr);
        rp_sim_fail(s, "%s", s->eng.err);
        return true;
    }
    uint64_t pr = progress(s);
    if (pr != *last_progress) {
        *last_progress = pr;
        *last_progress_t = t_dev;
    } else if (wd && t_dev - *last_progress_t > wd) {
        snprintf(s->eng.err, sizeof s->eng.err, "watchdog: no progress for %llu ps (t=%llu ps; component states dumped)",
                 (unsigned long long)(t_dev - *last_progress_t), (unsigned long long)t_dev);
        dump_all(s, stderr);
        rp_sim_fail(s, "%s", s->eng.err);
        return true;
    }
    return false;
}

/* t += k, counter by counter (the data check's totals over partitions). */
static void check_add(rp_check *t, const rp_check *k)
{
    t->loads_checked += k->loads_checked;
    t->loads_unrecorded += k->loads_unrecorded;
    t->loads_hashed += k->loads_hashed;
    t->load_mismatches += k->load_mismatches;
    t->atomics_checked += k->atomics_checked;
    t->atomic_mismatches += k->atomic_mismatches;
    t->lds_checked += k->lds_checked;
    t->lds_mismatches += k->lds_mismatches;
    t->lds_unchecked += k->lds_unchecked;
    t->d2h_checked += k->d2h_checked;
    t->d2h_mismatches += k->d2h_mismatches;
    t->walk_errors += k->walk_errors;
    t->polls_checked += k->polls_checked;
    t->poll_changes += k->poll_changes;
    t->spin_iterations += k->spin_iterations;
    t->wait_ps += k->wait_ps;
    t->await_give_ups += k->await_give_ups;
    t->load_order += k->load_order;
    t->load_adopted += k->load_adopted;
    t->d2h_order += k->d2h_order;
    t->d2h_adopted += k->d2h_adopted;
    t->printed += k->printed;
    t->atomic_printed += k->atomic_printed;
}

static int run_parts(rp_sim *s);

int rp_sim_run(rp_sim *s)
{
    /* One partition with --threads 2 or more (a sampled replay's helpers
     * included): a spare thread loads the workgroup records ahead (wgload.c;
     * the same records, the same results). GCN3SIM_WGLOAD=0 turns it off. */
    const char *wl = getenv("GCN3SIM_WGLOAD");
    uint32_t want = s->threads > s->smp_threads ? s->threads : s->smp_threads;
    if (s->n_parts == 1 && want >= 2 && !(wl && !strcmp(wl, "0")))
        s->ctx.wgload = rp_wgload_start(s->rd);
    int r = run_parts(s);
    rp_wgload_stop(s->ctx.wgload);
    s->ctx.wgload = NULL;
    return r;
}

static int run_parts(rp_sim *s)
{
    /* every engine reports to the sim's observation points */
    s->eng.hooks = &s->hooks;
    s->eng.hook_sim = s;
    for (uint32_t i = 0; i < s->n_parts; i++) {
        s->parts[i].eng.hooks = &s->hooks;
        s->parts[i].eng.hook_sim = s;
    }
    run_ctx c;
    memset(&c, 0, sizeof c);
    c.s = s;
    uint32_t nt = s->threads < s->n_parts ? s->threads : s->n_parts;
    if (nt < 1)
        nt = 1;
    c.bar.n = nt;
    /* Spin while waiting for the others only when every thread has a core. */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    c.bar.spin_us = c.bar.max_spin_us = cpus > 0 && nt <= (uint32_t)cpus ? RP_SPIN_US : 0;
    /* MGPU_REPLAY_BARRIER=spin|sleep overrides the choice (auto: as above;
     * docs/user-guide.md); spin also keeps spinning when preempted */
    const char *bm = getenv("MGPU_REPLAY_BARRIER");
    if (bm && !strcmp(bm, "spin"))
        c.bar.spin_us = c.bar.max_spin_us = UINT32_MAX, c.bar.always_spin = true;
    else if (bm && !strcmp(bm, "sleep"))
        c.bar.spin_us = c.bar.max_spin_us = 0;
    else if (bm && *bm && strcmp(bm, "auto")) {
        rp_sim_fail(s, "MGPU_REPLAY_BARRIER=%s: expected spin, sleep or auto", bm);
        return -1;
    }
    pthread_t *tid = calloc(nt, sizeof *tid);
    worker_arg *wa = calloc(nt, sizeof *wa);
    c.nt = nt;
    c.claim = aligned_alloc(_Alignof(claim_word), s->n_parts * sizeof *c.claim);
    c.order = calloc(s->n_parts, sizeof *c.order);
    c.list = calloc((size_t)nt * s->n_parts, sizeof *c.list);
    c.list_n = calloc(nt, sizeof *c.list_n);
    c.tsum = calloc(nt, sizeof *c.tsum);
    c.idle = calloc(s->n_parts, sizeof *c.idle);
    c.unit = calloc(s->n_parts, sizeof *c.unit);
    c.uload = calloc(s->n_gpus + 1, sizeof *c.uload);
    c.uorder = calloc(s->n_gpus + 1, sizeof *c.uorder);
    c.uowner = calloc(s->n_gpus + 1, sizeof *c.uowner);
    if (!tid || !wa || !c.claim || !c.order || !c.list || !c.list_n || !c.tsum || !c.idle || !c.unit || !c.uload ||
        !c.uorder || !c.uowner) {
        free(tid), free(wa), free(c.claim), free(c.order), free(c.list), free(c.list_n), free(c.tsum), free(c.idle);
        free(c.unit), free(c.uload), free(c.uorder), free(c.uowner);
        rp_sim_fail(s, "out of memory");
        return -1;
    }
    memset(c.claim, 0, s->n_parts * sizeof *c.claim);
    /* whole GPUs to threads (assign): the cut inside GPUs that are
     * partitions of their own (each GPU's memory side in a partition of its
     * own), at least as many GPUs as threads */
    bool own = s->n_gpus > 1 && s->ctx.gpu_cut && s->n_gpus >= nt;
    for (uint32_t g = 1; own && g < s->n_gpus; g++)
        own = s->gpus[g].part != s->gpus[0].part;
    if (own) {
        char buf[64];
        for (uint32_t p = 0; p < s->n_parts; p++) {
            uint32_t g = rp_part_holds(s, p, buf, sizeof buf);
            c.unit[p] = g < s->n_gpus ? g : s->n_gpus;
        }
        c.n_units = s->n_gpus + (s->net_part != NULL);
    }
    uint32_t started = start_workers(&c, tid, wa, nt);
    for (uint32_t p = 0; p < s->n_parts; p++)
        s->parts[p].next = rp_engine_next_time(&s->parts[p].eng);
    rp_engine_schedule(&s->eng, &s->host_ev, 0);
    uint32_t sense = 0;
    double t0 = s->progress_fn ? wall_now() : 0, next_report = t0 + (s->progress_fn ? s->progress_every : 0);
    uint64_t instr_total = 0;
    if (s->progress_fn)
        for (uint32_t k = 0; k < trc_reader_n_kernels(s->rd); k++) {
            trc_kernel_stats st;
            if (trc_reader_kernel_stats(s->rd, k, &st) == 0)
                instr_total += st.n_instr;
        }
    uint64_t last_progress = progress(s);
    rp_time last_progress_t = 0, wd = rp_lat_ps(s->cfg.watchdog, s->clk);
    for (;;) {
        serial_point(s);
        if (s->failed || rp_host_finished(s))
            break;
        rp_time t_dev = device_next(s), t_host = rp_engine_next_time(&s->eng);
        if (s->failed)
            break;
        if (t_host < t_dev) {
            /* The host acts alone at t_host: every partition is there. */
            for (uint32_t p = 0; p < s->n_parts; p++)
                rp_engine_advance(&s->parts[p].eng, t_host);
            while (rp_engine_step_before(&s->eng, t_host + 1) && !s->failed)
                ;
            for (uint32_t p = 0; p < s->n_parts; p++)
                s->parts[p].next = rp_engine_next_time(&s->parts[p].eng);
            continue;
        }
        if (watchdog(s, t_dev, &last_progress, &last_progress_t, wd))
            break;
        if (s->progress_fn && (s->windows & 63) == 0 && wall_now() >= next_report) {
            report_progress(s, t0, instr_total, 0);
            next_report = wall_now() + s->progress_every;
        }
        c.t_lim = t_dev + s->lookahead_ps;
        if (t_host != RP_TIME_MAX && t_host + 1 < c.t_lim)
            c.t_lim = t_host + 1;
        s->windows++;
        /* A window with work in one partition only (a program that keeps one
         * GPU busy at a time, a kernel's tail) runs on this thread alone:
         * the workers stay at the barrier (they stop spinning and sleep
         * after RP_SPIN_US) instead of crossing it twice for nothing. Which
         * partitions have nothing to do is found once (running one partition
         * changes no other's: what it sends is delivered at the next window);
         * the barrier publishes it to the workers. */
        uint32_t busy = 0;
        for (uint32_t p = 0; p < s->n_parts; p++)
            busy += !(c.idle[p] = idle(&s->parts[p], c.t_lim));
        if (c.bar.n == 1 || busy < 2) {
            for (uint32_t p = 0; p < s->n_parts; p++)
                if (!c.idle[p])
                    run_part(s, &s->parts[p], c.t_lim);
        } else {
            c.window++;
            assign(&c);
            barrier_wait(&c.bar, &sense);
            run_window(&c, 0);
            barrier_wait(&c.bar, &sense);
        }
        /* What was sent during the window is delivered at the next one (every
         * read side was drained in the window: only the queues written need a
         * flip; the partitions that ran drained their incoming lists). The
         * receivers drain them in sending-partition order. The window's
         * critical path: the most events one partition handled. */
        for (uint32_t p = 0; p < s->n_parts; p++)
            if (!c.idle[p]) /* (an idle partition had nothing incoming) */
                s->parts[p].incoming.n = 0;
        uint64_t most = 0;
        for (uint32_t p = 0; p < s->n_parts; p++) {
            rp_part *pt = &s->parts[p];
            uint64_t ev = c.idle[p] ? 0 : pt->ev_win;
            pt->load += (ev + 1) * 16 - pt->load / 4; /* -> 64 x (events + 1) per window */
            if (ev > most)
                most = ev;
            c.ep_events += ev;
            for (size_t i = 0; i < pt->written.n; i++) {
                rp_xq *x = pt->written.v[i];
                rp_xq_flip(x);
                rp_xq_list_push(&s->parts[x->to].incoming, x); /* sets incoming.oom when it fails */
            }
            pt->written.n = 0;
        }
        s->crit_events += most;
    }
    if (c.bar.n > 1) {
        __atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
        barrier_wait(&c.bar, &sense);
    }
    for (uint32_t i = 1; i <= started; i++)
        pthread_join(tid[i], NULL);
    free(tid), free(wa), free(c.claim), free(c.order), free(c.list), free(c.list_n), free(c.tsum), free(c.idle);
    free(c.unit), free(c.uload), free(c.uorder), free(c.uowner);
    if (s->progress_fn)
        report_progress(s, t0, instr_total, 1);
    for (uint32_t p = 0; p < s->n_parts; p++)
        flush_out(s, &s->parts[p]);
    rp_net_sum(s->net);
    /* The data check's totals: the host's own counters plus every partition's. */
    for (uint32_t p = 0; p < s->n_parts; p++) {
        check_add(&s->check, &s->parts[p].check);
        memset(&s->parts[p].check, 0, sizeof s->parts[p].check);
    }
    return s->failed ? -1 : 0;
}
