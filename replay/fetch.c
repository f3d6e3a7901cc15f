/*
 * fetch.c - the CU front end's instruction fetch.
 *
 * Front end (MGSim paper Sec. IV-B, GCN3 ISA manual Sec. 2-4): each wave has
 * an instruction buffer of `cu.ibuffer_entries` dwords filled by a fetch
 * arbiter (one fetch per CU per cycle, one fetch in flight per wave) in
 * aligned chunks of `cu.fetch_bytes` from the shader array's L1 instruction
 * cache (rp_l1i below; 32 KB 4-way per 4 CUs, 64-byte lines; misses go to the
 * L2 bank of device address code_base + pc, where code_base is the device
 * address the code object was loaded at; invalidated at each new kernel,
 * as the CP does at dispatch). With cu.fetch_ahead = 1 the next sequential
 * chunk is fetched as soon as the buffer has room; with 0 (r9nano, fitted to
 * the R9 Nano ALU and l2_read probes, ../shared/hw-r9nano) only while the
 * wave waits on s_waitcnt or a barrier, and otherwise when the wave needs it:
 * a wave issuing back to back pays each new line's fetch. A taken branch out
 * of the buffer discards it and refetches at the target. The issue arbiter lets a CU issue
 * at most one instruction per unit type per cycle (SALU, branch, VMEM, SMEM,
 * LDS; VALU per SIMD via its occupancy); a wave issues its next instruction
 * `cu.decode_cycles` after the previous one left its unit (a lone wave's
 * VALU chain runs at valu_cycles + decode_cycles per instruction: the 5
 * cycles of the paper's ALU micro-benchmark, Sec. VII-A).
 *
 * Invariants: a wave has at most one fetch in flight (w->fetch); its buffer
 * holds the chunks [ib_base, ib_base + ib_n * fetch_bytes); a fetch whose
 * wave ended or was redirected lands unclaimed (f->w == NULL).
 */
#include "rp_sim_internal.h"
#include "rp_tlb.h"

#include <stdlib.h>
#include <string.h>

/* ---- instruction fetch: L1I (per shader array) and per-wave buffers ---------------- */

/* Device address each code object was loaded at: recorded with the code
 * object (format 1.1); in a 1.0 trace the k-th TRC_MEM_CODE allocation of the
 * timeline holds code object k (gcn_module_load allocates the image, then
 * stores the code object, in that order). A trace with neither fetches from
 * address pc (the ELF vaddr). */
uint64_t rp_code_base(rp_sim *s, uint32_t co)
{
    rp_gpu *g0 = &s->gpus[0];
    if (!g0->co_base) {
        size_t n = trc_reader_n_code_objects(s->rd), k = 0;
        g0->co_base = calloc(n ? n : 1, sizeof *g0->co_base);
        if (!g0->co_base) {
            rp_sim_fail(s, "out of memory for the code-object table");
            return 0;
        }
        g0->n_co_base = n;
        /* format 1.1 records where each code object was loaded; a 1.0 trace
         * does not, and there the k-th code allocation is code object k */
        size_t ne = trc_reader_n_events(s->rd);
        for (size_t i = 0; i < ne && k < n; i++) {
            const trc_event *ev = trc_reader_event(s->rd, i);
            if (ev && ev->kind == TRC_EV_ALLOC && ev->mem_kind == TRC_MEM_CODE)
                g0->co_base[k++] = ev->addr;
        }
        for (size_t i = 0; i < n; i++)
            if (trc_reader_code_object_addr(s->rd, i))
                g0->co_base[i] = trc_reader_code_object_addr(s->rd, i);
    }
    return co < g0->n_co_base ? g0->co_base[co] : 0;
}

static void l1i_install(rp_l1i *c, uint64_t line);

static void fetch_enqueue(rp_cu *cu, rp_fetch *f)
{
    rp_fetch **pp = &cu->fetch_head;
    while (*pp && (*pp)->done <= f->done)
        pp = &(*pp)->next;
    f->next = *pp;
    *pp = f;
    rp_engine_wake(cu->eng, &cu->fetch_ev, cu->fetch_head->done);
}

/* Look f's line up in the L1I at time t (>= now); hit: f lands after the hit
 * latency; miss: f waits in an MSHR (or, with all busy, in the stall list). */
static void l1i_access(rp_l1i *c, rp_fetch *f, rp_time t)
{
    const rp_ctx *x = c->x;
    uint64_t lsz = x->cfg->l1v_line;
    uint64_t line = (f->w->code_base + f->pc) & ~(lsz - 1);
    uint32_t set = (uint32_t)((line >> c->line_shift) % c->sets);
    uint64_t *tg = &c->tag[(uint64_t)set * c->assoc];
    uint32_t k = f->w->wg ? f->w->wg->k->launch.kernel_id + 1 : 0;
    if (k && k != c->kernel) {
        /* kernel-start invalidate: the dispatch's acquire makes the CP
         * invalidate the instruction and scalar caches (AMDGPUUsage, memory
         * model GFX6-GFX9: "invalidated between kernel dispatches by CP");
         * then the dispatch's code prefetch (l1i.launch_prefetch bytes from
         * the kernel's entry) is in place before its first wave fetches */
        if (c->kernel) {
            memset(c->tag, 0, (size_t)c->sets * c->assoc * sizeof *c->tag);
            c->st_invalidations++;
        }
        c->kernel = k;
        const rp_kernel *kk = f->w->wg->k;
        uint64_t entry = (f->w->code_base + kk->prog->insn[kk->entry_idx].pc) & ~(lsz - 1);
        for (uint64_t a = entry; a < entry + x->cfg->l1i_launch_prefetch; a += lsz)
            l1i_install(c, a);
    }
    for (uint32_t w = 0; w < c->assoc; w++)
        if (tg[w] == line + 1) {
            c->age[(uint64_t)set * c->assoc + w] = ++c->stamp;
            c->st_hits++;
            f->done = t + c->latency_ps;
            fetch_enqueue(f->cu, f);
            return;
        }
    for (uint32_t i = 0; i < c->mshrs; i++)
        if (c->mshr[i].busy && c->mshr[i].line == line) {
            c->st_misses++;
            c->st_merges++;
            f->next = c->mshr[i].waiters;
            c->mshr[i].waiters = f;
            return;
        }
    if (c->mshr_used == c->mshrs) {
        c->st_mshr_stalls++;
        f->next = NULL;
        if (c->stall_tail)
            c->stall_tail->next = f;
        else
            c->stall_head = f;
        c->stall_tail = f;
        return;
    }
    uint32_t i = 0;
    while (c->mshr[i].busy)
        i++;
    c->mshr[i] = (rp_l1i_mshr){line, f, true};
    f->next = NULL;
    c->mshr_used++;
    c->st_misses++;
    rp_msg *m = rp_msg_alloc(rp_ctx_pool(x));
    if (!m) {
        rp_ctx_fail(x, "%s: out of memory for a message", c->comp.name);
        return;
    }
    m->type = RP_MSG_READ;
    m->addr = line;
    m->ctx = (void *)(uintptr_t)i;
    m->src_gpu = (uint8_t)c->gpu;
    m->reply_link = &c->fill_link;
    m->reply_port = &c->bottom;
    rp_port *dst = NULL;
    rp_link *l = x->route_l2(x->owner, c->gpu, c->grp, line, &dst);
    m->dst = dst;
    if (c->tlb)
        rp_tlb_send(c->tlb, l, m, t + x->clk.period_ps);
    else
        rp_link_send(l, m, t + x->clk.period_ps);
}

/* Put line into c, in its set's invalid or least recently used way. */
static void l1i_install(rp_l1i *c, uint64_t line)
{
    uint32_t set = (uint32_t)((line >> c->line_shift) % c->sets);
    uint64_t base = (uint64_t)set * c->assoc, v = base;
    for (uint32_t w = 0; w < c->assoc; w++) {
        if (c->tag[base + w] == 0) {
            v = base + w;
            break;
        }
        if (c->age[base + w] < c->age[v])
            v = base + w;
    }
    c->tag[v] = line + 1;
    c->age[v] = ++c->stamp;
}

static void l1i_fill(rp_port *p, rp_engine *e)
{
    rp_l1i *c = p->owner;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        uint32_t i = (uint32_t)(uintptr_t)m->ctx;
        rp_msg_free(rp_ctx_pool(c->x), m);
        if (i >= c->mshrs || !c->mshr[i].busy) {
            rp_ctx_fail(c->x, "%s: fill for an idle MSHR", c->comp.name);
            return;
        }
        rp_l1i_mshr *ms = &c->mshr[i];
        l1i_install(c, ms->line);
        for (rp_fetch *f = ms->waiters, *nx; f; f = nx) {
            nx = f->next;
            f->done = e->now + c->latency_ps;
            fetch_enqueue(f->cu, f);
        }
        ms->busy = false;
        ms->waiters = NULL;
        c->mshr_used--;
        e->progress++;
        while (c->stall_head && c->mshr_used < c->mshrs) {
            rp_fetch *f = c->stall_head;
            c->stall_head = f->next;
            if (!c->stall_head)
                c->stall_tail = NULL;
            if (!f->w) { /* its wave is gone: nothing to fetch for */
                f->done = e->now;
                fetch_enqueue(f->cu, f);
                continue;
            }
            l1i_access(c, f, e->now);
        }
    }
}

static void l1i_dump(rp_component *comp, FILE *f)
{
    rp_l1i *c = (rp_l1i *)comp;
    if (c->mshr_used || c->stall_head)
        fprintf(f, "  %s: %u/%u MSHRs busy, stalled fetches %s\n", comp->name, c->mshr_used, c->mshrs,
                c->stall_head ? "yes" : "no");
}

static int l1i_init(rp_l1i *c, rp_sim *s, uint32_t gpu, uint32_t sa, const char *name)
{
    const rp_config *cfg = &s->cfg;
    memset(c, 0, sizeof *c);
    c->x = &s->ctx;
    c->gpu = gpu;
    c->assoc = cfg->l1i_assoc;
    c->sets = (uint32_t)(cfg->l1i_size / cfg->l1v_line / cfg->l1i_assoc);
    while ((1ull << c->line_shift) < cfg->l1v_line)
        c->line_shift++;
    c->mshrs = cfg->l1i_mshrs;
    c->latency_ps = rp_lat_ps(cfg->l1i_latency, s->clk);
    size_t n = (size_t)c->sets * c->assoc;
    c->tag = calloc(n ? n : 1, sizeof *c->tag);
    c->age = calloc(n ? n : 1, sizeof *c->age);
    c->mshr = calloc(c->mshrs, sizeof *c->mshr);
    if (!c->tag || !c->age || !c->mshr || !c->sets)
        return -1;
    c->bottom.owner = c;
    c->bottom.notify = l1i_fill;
    c->grp = rp_sa_group(sa, s->gpus[gpu].n_groups, cfg->shader_arrays);
    c->eng = &s->gpus[gpu].sa_part[sa]->eng;
    rp_link_init(&c->fill_link, c->eng, &c->bottom, rp_lat_ps(cfg->noc_latency, s->clk),
                 rp_bw_Bps(cfg->noc_bandwidth, s->clk), cfg->header_bytes);
    rp_engine_add_component(c->eng, &c->comp, name, l1i_dump);
    return 0;
}

int rp_gpu_frontend_init(rp_sim *s, rp_gpu *g)
{
    char name[48];
    /* Tables the partitions only read, filled before the run. */
    rp_code_base(s, 0);
    g->l1i = calloc(s->cfg.shader_arrays, sizeof *g->l1i);
    if (!g->l1i)
        return -1;
    for (uint32_t a = 0; a < s->cfg.shader_arrays; a++) {
        rp_l1i *c = &g->l1i[a];
        snprintf(name, sizeof name, "gpu[%u].sa[%u].l1i", g->id, a);
        s->stats.reg_part = (int32_t)g->sa_part[a]->id + 1;
        if (l1i_init(c, s, g->id, a, name))
            return -1;
        const char *p = c->comp.name;
        rp_stats_add(&s->stats, p, "read_hits", &c->st_hits, "count", "instruction fetches that hit the L1I");
        rp_stats_add(&s->stats, p, "read_misses", &c->st_misses, "count", "instruction fetches that missed the L1I");
        rp_stats_add(&s->stats, p, "mshr_merges", &c->st_merges, "count", "fetch misses that joined a pending L1I MSHR");
        rp_stats_add(&s->stats, p, "mshr_stalls", &c->st_mshr_stalls, "count", "fetch misses that waited for a free L1I MSHR");
        rp_stats_add(&s->stats, p, "invalidations", &c->st_invalidations, "count", "whole-cache invalidations (new kernel)");
    }
    for (uint32_t i = 0; i < g->n_cus; i++) {
        rp_cu *cu = &g->cus[i];
        cu->l1i = &g->l1i[cu->sa < s->cfg.shader_arrays ? cu->sa : 0];
        s->stats.reg_part = (int32_t)g->sa_part[cu->sa < s->cfg.shader_arrays ? cu->sa : 0]->id + 1;
        rp_stats_add(&s->stats, cu->name, "fetches", &cu->st_fetches, "count", "instruction-buffer fetches the CU issued");
        rp_stats_add(&s->stats, cu->name, "fetch_stall_cycles", &cu->st_fetch_stall_cycles, "cycles", "cycles waves waited for instruction fetches");
    }
    return 0;
}

void rp_gpu_frontend_fini(rp_sim *s, rp_gpu *g)
{
    for (uint32_t a = 0; g->l1i && a < s->cfg.shader_arrays; a++) {
        rp_l1i *c = &g->l1i[a];
        free(c->tag);
        free(c->age);
        for (uint32_t i = 0; c->mshr && i < c->mshrs; i++)
            for (rp_fetch *f = c->mshr[i].waiters, *n; f; f = n) {
                n = f->next;
                free(f);
            }
        free(c->mshr);
        for (rp_fetch *f = c->stall_head, *n; f; f = n) {
            n = f->next;
            free(f);
        }
    }
    for (uint32_t i = 0; g->cus && i < g->n_cus; i++) {
        rp_cu *cu = &g->cus[i];
        for (rp_fetch *l = cu->fetch_free; l;) {
            rp_fetch *n = l->next;
            free(l);
            l = n;
        }
        for (rp_fetch *l = cu->fetch_head; l;) {
            rp_fetch *n = l->next;
            free(l);
            l = n;
        }
        cu->fetch_free = cu->fetch_head = NULL;
    }
    free(g->l1i);
    g->l1i = NULL;
    free(g->co_base);
    g->co_base = NULL;
}

/* Start fetching the chunk at pc for w (the one fetch in flight), at now or
 * when the CU's fetch arbiter and the L1I pipeline are free. */
static void fetch_start(rp_wave *w, uint64_t pc, rp_time now)
{
    rp_cu *cu = w->cu;
    const rp_ctx *x = cu->x;
    rp_l1i *c = cu->l1i;
    rp_time cyc = x->clk.period_ps;
    rp_fetch *f = cu->fetch_free;
    if (f)
        cu->fetch_free = f->next;
    else if (!(f = malloc(sizeof *f))) {
        rp_ctx_fail(x, "%s: out of memory", cu->name);
        return;
    }
    f->next = NULL;
    f->w = w;
    f->cu = cu;
    f->pc = pc;
    w->fetch = f;
    cu->st_fetches++;
    rp_time t = cu->fetch_busy > now ? cu->fetch_busy : now;
    cu->fetch_busy = t + cyc;
    if (c->next_free > t)
        t = c->next_free;
    c->next_free = t + cyc;
    l1i_access(c, f, t);
}

/* Prefetch the next sequential chunk if the buffer has room for it and it
 * lies in the program. */
static void fetch_next(rp_wave *w, rp_time now)
{
    const rp_config *cfg = w->cu->x->cfg;
    uint64_t fb = cfg->fetch_bytes, next = w->ib_base + (uint64_t)w->ib_n * fb;
    if (w->fetch || (uint64_t)(w->ib_n + 1) * fb > cfg->ibuffer_entries * 4ull)
        return;
    if (next >= w->walk.prog->vaddr + w->walk.prog->size)
        return;
    fetch_start(w, next, now);
}

/* rp_cu.h: w stopped to wait (s_waitcnt, s_barrier, the grid barrier); with
 * cu.fetch_ahead = 0 this is when its buffer is refilled ahead of need. */
void rp_fetch_waiting(rp_wave *w, rp_time now)
{
    if (!w->redirect)
        fetch_next(w, now);
}

static void fetch_land(rp_wave *w, rp_fetch *f, rp_engine *e)
{
    rp_cu *cu = w->cu;
    uint64_t fb = cu->x->cfg->fetch_bytes;
    w->fetch = NULL;
    if (w->redirect) {
        w->redirect = 0;
        w->ib_base = w->redirect_pc;
        w->ib_n = 0;
        fetch_start(w, w->redirect_pc, e->now);
        return;
    }
    if (f->pc == w->ib_base + (uint64_t)w->ib_n * fb)
        w->ib_n++;
    if (cu->x->cfg->fetch_ahead || w->state == RP_W_WAITCNT || w->state == RP_W_BARRIER || w->state == RP_W_GWS)
        fetch_next(w, e->now);
    /* a parked wave runs again when its instruction is buffered; without
     * fetch-ahead also when it is not (it straddles into the next chunk):
     * its front end then fetches that chunk on demand */
    if (w->state == RP_W_FETCH &&
        (!cu->x->cfg->fetch_ahead || rp_insn_buffered(w, &w->walk.prog->insn[w->walk.idx], fb))) {
        w->state = RP_W_RUN;
        cu->st_fetch_stall_cycles += (e->now - w->parked) / cu->x->clk.period_ps;
        rp_engine_schedule(e, &w->ev, e->now);
    }
}

void rp_fetch_done(rp_event *ev, rp_engine *e)
{
    rp_cu *cu = ev->owner;
    while (cu->fetch_head && cu->fetch_head->done <= e->now) {
        rp_fetch *f = cu->fetch_head;
        cu->fetch_head = f->next;
        if (f->w)
            fetch_land(f->w, f, e);
        f->next = cu->fetch_free;
        cu->fetch_free = f;
        e->progress++;
    }
    /* a fetch that started while landing the others (fetch_enqueue) may have
     * woken ev already */
    if (cu->fetch_head && !ev->pending)
        rp_engine_schedule(e, ev, cu->fetch_head->done);
}

/* rp_cu.h: the slow half of rp_front_end. */
bool rp_front_end_slow(rp_wave *w, const gcn_insn *in, rp_time t, rp_engine *e)
{
    const rp_config *cfg = w->cu->x->cfg;
    uint64_t fb = cfg->fetch_bytes, chunk = in->pc & ~(fb - 1);
    uint64_t end = w->ib_base + (uint64_t)w->ib_n * fb;
    if (!w->redirect && chunk > w->ib_base && chunk <= end) {
        /* sequential progress into a later chunk: the earlier ones are done */
        if (t > e->now) {
            rp_engine_schedule(e, &w->ev, t);
            return false;
        }
        uint32_t drop = (uint32_t)((chunk - w->ib_base) / fb);
        if (drop > w->ib_n)
            drop = w->ib_n;
        w->ib_base += (uint64_t)drop * fb;
        w->ib_n -= drop;
        if (cfg->fetch_ahead)
            fetch_next(w, e->now);
    }
    if (rp_insn_buffered(w, in, fb))
        return true;
    if (t > e->now) {
        rp_engine_schedule(e, &w->ev, t);
        return false;
    }
    end = w->ib_base + (uint64_t)w->ib_n * fb;
    bool pending = w->redirect ? w->redirect_pc == chunk
                               : (chunk >= w->ib_base && chunk <= end) && (w->fetch || chunk < end);
    if (!pending) {
        /* taken branch out of the buffer: discard it, refetch at the target */
        w->ib_base = chunk;
        w->ib_n = 0;
        if (w->fetch) {
            w->redirect = 1;
            w->redirect_pc = chunk;
        } else {
            fetch_start(w, chunk, e->now);
        }
    } else if (!w->fetch && !w->redirect) {
        /* an instruction straddling into the next chunk */
        if (end >= w->walk.prog->vaddr + w->walk.prog->size) {
            rp_walk_error(w, "instruction beyond the end of the code object");
            rp_wave_abort(w, e);
            return false;
        }
        fetch_start(w, end, e->now);
    }
    w->state = RP_W_FETCH;
    w->parked = e->now;
    return false;
}

