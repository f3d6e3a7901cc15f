/*
 * sim.c - builds the machine of a topology (single GPU, U-MGPU, D-MGPU; MGSim
 * paper Sec. IV-C), replays the host timeline of a trace through it, and
 * reports per-kernel results and statistics (text and JSON).
 *
 * Host timeline: events are applied in program order. Launches are queued
 * on the dispatcher of their GPU and run asynchronously; copies, memsets and
 * synchronisations wait until the GPU(s) they touch are idle (HIP's blocking
 * semantics on the null stream), then act on the functional image in zero
 * simulated time (host transfers are not timed yet).
 *
 * Address placement: single GPU: everything local. U-MGPU: GPU =
 * (addr / mem.gpu_interleave) % gpus. D-MGPU: the GPU of the device whose
 * ALLOC event covers the address (device % gpus); addresses outside every
 * allocation are local to the accessing GPU. Within a GPU: L2 bank =
 * (addr / l2.interleave) % l2.banks, DRAM channel = (addr / dram.interleave
 * [/ gpus in U-MGPU]) % dram.channels. L2s are memory-side (each caches only
 * its own GPU's memory), so remote accesses go L1 -> RDMA -> inter-GPU bus ->
 * remote RDMA -> remote L2 and back.
 */
#include "rp_sim.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "emu/loader/gcn_loader.h"

void rp_sim_fail(rp_sim *s, const char *fmt, ...)
{
    if (s->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    s->failed = 1;
}

/* ---- placement and routing ---------------------------------------------------------- */

uint32_t rp_gpu_of(rp_sim *s, uint64_t addr, uint32_t accessing_gpu)
{
    switch (s->cfg.topo_kind) {
    case RP_TOPO_UNIFIED:
        return (uint32_t)((addr / s->cfg.gpu_interleave) % s->n_gpus);
    case RP_TOPO_DISCRETE: {
        size_t lo = 0, hi = s->n_allocs;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (s->allocs[mid].addr + s->allocs[mid].size <= addr)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < s->n_allocs && s->allocs[lo].addr <= addr)
            return s->allocs[lo].gpu;
        return accessing_gpu;
    }
    default:
        return 0;
    }
}

rp_link *rp_route_l2_bank(rp_sim *s, uint32_t gpu, uint64_t addr, rp_port **dst)
{
    uint32_t b = (uint32_t)((addr / s->cfg.l2_interleave) % s->cfg.l2_banks);
    *dst = NULL;
    return &s->gpus[gpu].l2_links[b];
}

/* L1 (vector or scalar) miss: the local L2 bank, or the RDMA engine. */
rp_link *rp_route_l1(void *ctx, uint64_t line, rp_port **dst)
{
    rp_gpu *g = ctx;
    rp_sim *s = g->sim;
    uint32_t t = rp_gpu_of(s, line, g->id);
    if (t == g->id)
        return rp_route_l2_bank(s, g->id, line, dst);
    *dst = NULL;
    return &g->rdma.in_link;
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

static int build_gpu(rp_sim *s, rp_gpu *g, uint32_t id)
{
    const rp_config *c = &s->cfg;
    char name[48];
    g->sim = s;
    g->id = id;
    g->n_cus = c->shader_arrays * c->cus_per_sa;
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

    for (uint32_t ch = 0; ch < c->dram_channels; ch++) {
        snprintf(name, sizeof name, "gpu[%u].dram[%u]", id, ch);
        rp_dram_init(&g->dram[ch], &s->eng, name, rp_lat_ps(c->dram_latency, s->clk),
                     rp_bw_Bps(c->dram_bandwidth, s->clk), c->l1v_line);
        rp_stats_add(&s->stats, name, "reads", &g->dram[ch].st_reads, "count");
        rp_stats_add(&s->stats, name, "writes", &g->dram[ch].st_writes, "count");
        rp_stats_add(&s->stats, name, "read_bytes", &g->dram[ch].st_read_bytes, "bytes");
        rp_stats_add(&s->stats, name, "write_bytes", &g->dram[ch].st_write_bytes, "bytes");
    }
    rp_cache_spec l2 = {c->l2_size / c->l2_banks, c->l2_assoc, c->l1v_line, c->l2_mshrs,
                        rp_lat_ps(c->l2_latency, s->clk), s->clk, true, false, true};
    for (uint32_t b = 0; b < c->l2_banks; b++) {
        snprintf(name, sizeof name, "gpu[%u].l2[%u]", id, b);
        if (rp_cache_init(&g->l2[b], &s->eng, &s->pool, s, name, &l2, rp_route_l2, g, 0, 0, c->header_bytes))
            return -1;
        rp_link_init(&g->l2_links[b], &s->eng, &g->l2[b].top, noc, nbw, c->header_bytes);
        rp_cache_register_stats(&g->l2[b], &s->stats);
    }
    rp_cache_spec l1s = {c->l1s_size, c->l1s_assoc, c->l1v_line, c->l1s_mshrs,
                         rp_lat_ps(c->l1s_latency, s->clk), s->clk, false, true, false};
    for (uint32_t a = 0; a < c->shader_arrays; a++) {
        snprintf(name, sizeof name, "gpu[%u].sa[%u].l1s", id, a);
        if (rp_cache_init(&g->l1s[a], &s->eng, &s->pool, s, name, &l1s, rp_route_l1, g, noc, nbw, c->header_bytes))
            return -1;
        rp_link_init(&g->l1s_links[a], &s->eng, &g->l1s[a].top, 0, 0, 0);
        rp_cache_register_stats(&g->l1s[a], &s->stats);
    }
    rp_cache_spec l1v = {c->l1v_size, c->l1v_assoc, c->l1v_line, c->l1v_mshrs,
                         rp_lat_ps(c->l1v_latency, s->clk), s->clk, false, true, false};
    for (uint32_t i = 0; i < g->n_cus; i++) {
        rp_cu *cu = &g->cus[i];
        rp_cu_init(cu, s, id, i);
        snprintf(name, sizeof name, "%s.l1v", cu->name);
        if (rp_cache_init(&cu->l1v, &s->eng, &s->pool, s, name, &l1v, rp_route_l1, g, noc, nbw, c->header_bytes))
            return -1;
        rp_link_init(&cu->l1v_link, &s->eng, &cu->l1v.top, 0, 0, 0);
        cu->l1s_link = &g->l1s_links[cu->sa];
        rp_cache_register_stats(&cu->l1v, &s->stats);
        const char *p = cu->name;
        rp_stats_add(&s->stats, p, "instructions", &cu->st_instr, "count");
        rp_stats_add(&s->stats, p, "valu", &cu->st_valu, "count");
        rp_stats_add(&s->stats, p, "salu", &cu->st_salu, "count");
        rp_stats_add(&s->stats, p, "branch", &cu->st_branch, "count");
        rp_stats_add(&s->stats, p, "vmem", &cu->st_vmem, "count");
        rp_stats_add(&s->stats, p, "vmem_lines", &cu->st_vmem_lines, "count");
        rp_stats_add(&s->stats, p, "smem", &cu->st_smem, "count");
        rp_stats_add(&s->stats, p, "lds", &cu->st_lds, "count");
        rp_stats_add(&s->stats, p, "lds_bank_cycles", &cu->st_lds_conflict_cycles, "cycles");
        rp_stats_add(&s->stats, p, "workgroups", &cu->st_wgs, "count");
    }
    rp_rdma_init(&g->rdma, s, id);
    snprintf(name, sizeof name, "gpu[%u].rdma", id);
    rp_stats_add(&s->stats, name, "out_requests", &g->rdma.st_out_reqs, "count");
    rp_stats_add(&s->stats, name, "in_requests", &g->rdma.st_in_reqs, "count");
    rp_stats_add(&s->stats, name, "out_bytes", &g->rdma.st_out_bytes, "bytes");
    rp_disp_init(&g->disp, s, id);
    snprintf(name, sizeof name, "gpu[%u].dispatcher", id);
    rp_stats_add(&s->stats, name, "workgroups", &g->disp.st_wgs_dispatched, "count");
    rp_stats_add(&s->stats, name, "kernels", &g->disp.st_kernels, "count");
    return 0;
}


int rp_sim_init(rp_sim *s, const rp_config *cfg, trc_reader *rd, FILE *out)
{
    memset(s, 0, sizeof *s);
    s->cfg = *cfg;
    s->rd = rd;
    s->out = out;
    if (rp_config_validate(cfg, s->err, sizeof s->err))
        return -1;
    if (rp_engine_init(&s->eng)) {
        snprintf(s->err, sizeof s->err, "out of memory");
        return -1;
    }
    s->clk = rp_clock_make(cfg->gpu_freq);
    s->eng.watchdog_ps = rp_lat_ps(cfg->watchdog, s->clk);
    s->mem = rp_fmem_create();
    s->n_gpus = cfg->topo_kind == RP_TOPO_SINGLE ? 1 : cfg->gpus;
    if (cfg->topo_kind == RP_TOPO_SINGLE && cfg->gpus != 1) {
        snprintf(s->err, sizeof s->err, "config: topo.kind = single needs topo.gpus = 1 (got %u)", cfg->gpus);
        return -1;
    }
    s->gpus = calloc(s->n_gpus, sizeof *s->gpus);
    if (!s->mem || !s->gpus) {
        snprintf(s->err, sizeof s->err, "out of memory");
        return -1;
    }
    rp_link_init(&s->pcie, &s->eng, NULL, rp_lat_ps(cfg->link_latency, s->clk), rp_bw_Bps(cfg->link_bandwidth, s->clk),
                 cfg->header_bytes);
    rp_stats_add(&s->stats, "link", "messages", &s->pcie.st_msgs, "count");
    rp_stats_add(&s->stats, "link", "bytes", &s->pcie.st_bytes, "bytes");
    for (uint32_t g = 0; g < s->n_gpus; g++)
        if (build_gpu(s, &s->gpus[g], g)) {
            snprintf(s->err, sizeof s->err, "out of memory building gpu[%u]", g);
            return -1;
        }
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
        if (!d->cus || !d->res) {
            snprintf(s->err, sizeof s->err, "out of memory");
            return -1;
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
    for (uint32_t g = 0; s->gpus && g < s->n_gpus; g++) {
        rp_gpu *gp = &s->gpus[g];
        for (uint32_t i = 0; gp->cus && i < gp->n_cus; i++) {
            rp_cache_fini(&gp->cus[i].l1v);
            for (rp_access *a = gp->cus[i].acc_free, *n; a; a = n) {
                n = a->next;
                free(a);
            }
        }
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
    }
    free(s->gpus);
    for (size_t i = 0; i < s->n_progs; i++)
        gcn_program_free(s->progs[i]);
    free(s->progs);
    free(s->op_class);
    s->op_class = NULL;
    for (size_t i = 0; i < s->n_kernels; i++) {
        free(s->kernels[i]->snap0);
        free(s->kernels[i]);
    }
    free(s->kernels);
    free(s->allocs);
    rp_fmem_destroy(s->mem);
    rp_stats_fini(&s->stats);
    rp_msg_pool_fini(&s->pool);
    rp_engine_fini(&s->eng);
}

void rp_ksum_take(rp_sim *s, const rp_kernel *k, rp_ksum *o)
{
    memset(o, 0, sizeof *o);
    for (uint32_t g = k->gpu_first; g < k->gpu_first + k->gpu_count; g++) {
        rp_gpu *gp = &s->gpus[g];
        for (uint32_t i = 0; i < gp->n_cus; i++) {
            rp_cache *c = &gp->cus[i].l1v;
            o->l1v_hits += c->st_read_hits;
            o->l1v_accesses += c->st_read_hits + c->st_read_misses;
        }
        for (uint32_t b = 0; b < s->cfg.l2_banks; b++) {
            rp_cache *c = &gp->l2[b];
            o->l2_hits += c->st_read_hits + c->st_write_hits;
            o->l2_accesses += c->st_read_hits + c->st_read_misses + c->st_write_hits + c->st_write_misses;
        }
        for (uint32_t ch = 0; ch < s->cfg.dram_channels; ch++)
            o->dram_bytes += gp->dram[ch].st_read_bytes + gp->dram[ch].st_write_bytes;
    }
    o->link_bytes = s->pcie.st_bytes;
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

void rp_sim_report(rp_sim *s, FILE *f)
{
    fprintf(f, "%-4s %-32s %3s %12s %12s %12s %6s %6s %6s %12s %12s  %s\n", "id", "kernel", "gpu", "cycles",
            "time_us", "wf_instr", "ipc", "l1v%", "l2%", "dram_bytes", "link_bytes", "data");
    for (size_t i = 0; i < s->n_kernels; i++) {
        rp_kernel *k = s->kernels[i];
        uint64_t cyc = (k->end - k->start) / s->clk.period_ps;
        rp_ksum d = {k->sum1.l1v_hits - k->sum0.l1v_hits, k->sum1.l1v_accesses - k->sum0.l1v_accesses,
                     k->sum1.l2_hits - k->sum0.l2_hits, k->sum1.l2_accesses - k->sum0.l2_accesses,
                     k->sum1.dram_bytes - k->sum0.dram_bytes, k->sum1.link_bytes - k->sum0.link_bytes};
        char name[33];
        size_t nl = strnlen(k->launch.kernel_name, 32);
        memcpy(name, k->launch.kernel_name, nl);
        name[nl] = 0;
        char chk[64];
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
        fprintf(f, "%-4u %-32s %3u %12llu %12.3f %12llu %6.2f %6.1f %6.1f %12llu %12llu  %s\n", k->launch.kernel_id,
                name, k->gpu, (unsigned long long)cyc, (double)(k->end - k->start) / 1e6,
                (unsigned long long)k->n_instr, ratio(k->n_instr, cyc), 100 * ratio(d.l1v_hits, d.l1v_accesses),
                100 * ratio(d.l2_hits, d.l2_accesses), (unsigned long long)d.dram_bytes,
                (unsigned long long)d.link_bytes, chk);
    }
    const rp_check *c = &s->check;
    fprintf(f,
            "total: %zu kernels, %.3f us simulated, %llu events; data check: %llu loads (%llu mismatches), "
            "%llu atomic returns (%llu order-dependent differences), %llu LDS loads (%llu mismatches, %llu "
            "accesses unchecked), %llu D2H blocks (%llu mismatches), %llu trace-walk errors\n",
            s->n_kernels, (double)s->eng.now / 1e6, (unsigned long long)s->eng.n_events,
            (unsigned long long)c->loads_checked, (unsigned long long)c->load_mismatches,
            (unsigned long long)c->atomics_checked, (unsigned long long)c->atomic_mismatches,
            (unsigned long long)c->lds_checked, (unsigned long long)c->lds_mismatches,
            (unsigned long long)c->lds_unchecked, (unsigned long long)c->d2h_checked,
            (unsigned long long)c->d2h_mismatches, (unsigned long long)c->walk_errors);
}

static void cfg_json(void *arg, const char *key, const char *val)
{
    json_object_set_new((json_t *)arg, key, json_string(val));
}

int rp_sim_write_json(rp_sim *s, const char *path, const char *trace_path)
{
    json_t *root = json_object(), *cfg = json_object(), *ks = json_array(), *tot = json_object(),
           *counters = json_object(), *chk = json_object();
    rp_config_foreach(&s->cfg, cfg_json, cfg);
    json_object_set_new(root, "trace", json_string(trace_path ? trace_path : ""));
    json_object_set_new(root, "config", cfg);
    for (size_t i = 0; i < s->n_kernels; i++) {
        rp_kernel *k = s->kernels[i];
        json_t *o = json_object(), *kc = json_object();
        uint64_t cyc = (k->end - k->start) / s->clk.period_ps;
        json_object_set_new(o, "id", json_integer(k->launch.kernel_id));
        json_object_set_new(o, "name", json_string(k->launch.kernel_name));
        json_object_set_new(o, "device", json_integer(k->launch.device));
        json_object_set_new(o, "gpu", json_integer(k->gpu));
        json_object_set_new(o, "workgroups", json_integer(k->n_wg));
        json_object_set_new(o, "start_ps", json_integer((json_int_t)k->start));
        json_object_set_new(o, "end_ps", json_integer((json_int_t)k->end));
        json_object_set_new(o, "cycles", json_integer((json_int_t)cyc));
        json_object_set_new(o, "time_ns", json_real((double)(k->end - k->start) / 1e3));
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
        json_object_set_new(o, "walk_errors", json_integer((json_int_t)k->walk_errors));
        if (k->snap0 && k->done)
            for (size_t j = 0; j < s->stats.n; j++)
                if (k->snap0[j])
                    json_object_set_new(kc, s->stats.v[j].name, json_integer((json_int_t)k->snap0[j]));
        json_object_set_new(o, "counters", kc);
        json_array_append_new(ks, o);
    }
    json_object_set_new(root, "kernels", ks);
    for (size_t j = 0; j < s->stats.n; j++)
        json_object_set_new(counters, s->stats.v[j].name, json_integer((json_int_t)*s->stats.v[j].ptr));
    json_object_set_new(tot, "simulated_ps", json_integer((json_int_t)s->eng.now));
    json_object_set_new(tot, "events", json_integer((json_int_t)s->eng.n_events));
    uint64_t instr = 0;
    for (size_t i = 0; i < s->n_kernels; i++)
        instr += s->kernels[i]->n_instr;
    json_object_set_new(tot, "wavefront_instructions", json_integer((json_int_t)instr));
    json_object_set_new(tot, "counters", counters);
    json_object_set_new(root, "totals", tot);
    const rp_check *c = &s->check;
    json_object_set_new(chk, "loads_checked", json_integer((json_int_t)c->loads_checked));
    json_object_set_new(chk, "load_mismatches", json_integer((json_int_t)c->load_mismatches));
    json_object_set_new(chk, "atomics_checked", json_integer((json_int_t)c->atomics_checked));
    json_object_set_new(chk, "atomic_order_mismatches", json_integer((json_int_t)c->atomic_mismatches));
    json_object_set_new(chk, "lds_checked", json_integer((json_int_t)c->lds_checked));
    json_object_set_new(chk, "lds_mismatches", json_integer((json_int_t)c->lds_mismatches));
    json_object_set_new(chk, "lds_unchecked", json_integer((json_int_t)c->lds_unchecked));
    json_object_set_new(chk, "d2h_checked", json_integer((json_int_t)c->d2h_checked));
    json_object_set_new(chk, "d2h_mismatches", json_integer((json_int_t)c->d2h_mismatches));
    json_object_set_new(chk, "walk_errors", json_integer((json_int_t)c->walk_errors));
    json_object_set_new(root, "check", chk);
    int r = json_dump_file(root, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (r) {
        snprintf(s->err, sizeof s->err, "%s: cannot write the stats JSON", path);
        return -1;
    }
    return 0;
}
