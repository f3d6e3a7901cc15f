/*
 * cu.c - compute unit and dispatcher of the timing model (the functional
 * "perform" of memory accesses and the data check are in perform.c).
 *
 * A wavefront replays its dynamic instruction stream: it walks the decoded
 * program from the kernel entry, taking conditional branches from the trace's
 * branch bits, jumps from their static target, indirect branches from the
 * trace's targets, and consumes one recorded memory op per memory
 * instruction. Issue costs (MGSim paper Sec. IV-B; GCN3 ISA manual Sec. 2):
 * SALU/branch `cu.salu_cycles`, VALU occupies the wave's SIMD `valu_cycles`
 * (F64/transcendental more), VMEM occupies the CU's vector-memory unit and
 * sends one request per 64-byte line, SMEM goes to the shader array's scalar
 * cache, LDS costs latency plus bank-conflict cycles. s_waitcnt blocks until
 * the vm/lgkm counters reach the thresholds; s_barrier waits for every live
 * wave of the workgroup.
 *
 * Front end (MGSim paper Sec. IV-B, GCN3 ISA manual Sec. 2-4): each wave has
 * an instruction buffer of `cu.ibuffer_entries` dwords filled by a fetch
 * arbiter (one fetch per CU per cycle, one fetch in flight per wave) in
 * aligned chunks of `cu.fetch_bytes` from the shader array's L1 instruction
 * cache (rp_l1i below; 32 KB 4-way per 4 CUs, 64-byte lines; misses go to the
 * L2 bank of device address code_base + pc, where code_base is the device
 * address the code object was loaded at). The next sequential chunk is
 * fetched as soon as the buffer has room; a taken branch out of the buffer
 * discards it and refetches at the target. The issue arbiter lets a CU issue
 * at most one instruction per unit type per cycle (SALU, branch, VMEM, SMEM,
 * LDS; VALU per SIMD via its occupancy); a wave issues its next instruction
 * `cu.decode_cycles` after the previous one left its unit (a lone wave's
 * VALU chain runs at valu_cycles + decode_cycles per instruction: the 5
 * cycles of the paper's ALU micro-benchmark, Sec. VII-A).
 *
 * Event economy: a wave runs ahead through instructions that only use
 * wave-local resources (SALU, branches, nops), accumulating a local time
 * t >= now without events; before it touches a shared resource (SIMD,
 * memory units, counters, barrier) it reschedules itself at t, so shared
 * resources are always reserved in simulated-time order (deterministic FCFS).
 *
 * Invariants: a wave's event is pending iff state == RUN; vmcnt/lgkmcnt count
 * issued accesses not yet completed; wg->n_bar <= wg->n_live.
 */
#include "rp_sim.h"

#include <stdlib.h>
#include <string.h>

/* ---- CU ------------------------------------------------------------------------------ */

static void wave_run(rp_event *ev, rp_engine *e);

/* A trace inconsistency of wave w: what, or (NULL) the walker's message. */
static void walk_error(rp_wave *w, const char *what)
{
    if (!what)
        what = w->walk.err;
    rp_sim *s = w->cu->sim;
    rp_chk(s)->walk_errors++;
    __atomic_add_fetch(&w->wg->k->walk_errors, 1, __ATOMIC_RELAXED);
    if (rp_out(s) && rp_chk(s)->walk_errors <= 10)
        fprintf(rp_out(s), "trace walk: kernel %u wg %u wave %u at dyn %llu pc 0x%llx: %s\n",
                w->wg->k->launch.kernel_id, w->wg->index, w->walk.tw->wave_in_wg, (unsigned long long)w->walk.dyn,
                (unsigned long long)(w->walk.idx < w->walk.prog->n_insn ? w->walk.prog->insn[w->walk.idx].pc : 0),
                what);
}

static rp_access *acc_get(rp_cu *cu)
{
    rp_access *a = cu->acc_free;
    if (a) {
        cu->acc_free = a->next;
        memset(a, 0, sizeof *a);
        return a;
    }
    a = calloc(1, sizeof *a);
    if (!a)
        rp_sim_fail(cu->sim, "%s: out of memory", cu->name);
    return a;
}

static void acc_put(rp_cu *cu, rp_access *a)
{
    a->next = cu->acc_free;
    cu->acc_free = a;
}

static void wg_finish(rp_wg *wg, rp_engine *e);

static bool waitcnt_ok(const rp_wave *w)
{
    return w->vmcnt <= w->wait_vm && w->lgkmcnt <= w->wait_lgkm;
}

static void wave_finish(rp_wave *w, rp_engine *e)
{
    w->state = RP_W_DONE;
    /* per wave, not per instruction: a U-MGPU kernel's waves run in several partitions */
    __atomic_add_fetch(&w->wg->k->n_instr, w->walk.dyn, __ATOMIC_RELAXED);
    if (w->fetch) {
        w->fetch->w = NULL; /* lands unclaimed */
        w->fetch = NULL;
    }
    /* a wave that reached s_endpgm used its whole record (an aborted one
     * was reported where it stopped) */
    if (w->walk.ended && gcn_walk_end(&w->walk))
        walk_error(w, NULL);
    rp_wg *wg = w->wg;
    wg->n_live--;
    if (wg->n_live == 0) {
        wg_finish(wg, e);
        return;
    }
    /* Waves waiting at a barrier no longer wait for this one. */
    if (wg->n_bar && wg->n_bar == wg->n_live) {
        rp_time t = e->now + rp_lat_ps(w->cu->sim->cfg.barrier_latency, w->cu->sim->clk);
        wg->n_bar = 0;
        for (uint32_t i = 0; i < wg->n_waves; i++)
            if (wg->waves[i].state == RP_W_BARRIER) {
                wg->waves[i].state = RP_W_RUN;
                rp_engine_schedule(e, &wg->waves[i].ev, t);
            }
    }
}

/* Stop walking after a trace inconsistency; in-flight accesses still land. */
static void wave_abort(rp_wave *w, rp_engine *e)
{
    w->state = RP_W_ENDING;
    if (w->vmcnt == 0 && w->lgkmcnt == 0)
        wave_finish(w, e);
}

/* An access finished: drop its counter, wake a wave waiting on it. */
static void acc_complete(rp_cu *cu, rp_access *a, rp_engine *e)
{
    rp_wave *w = a->w;
    if (a->counts_vm)
        w->vmcnt--;
    else
        w->lgkmcnt--;
    acc_put(cu, a);
    e->progress++;
    if (w->state == RP_W_WAITCNT && waitcnt_ok(w)) {
        w->state = RP_W_RUN;
        rp_engine_schedule(e, &w->ev, e->now + cu->sim->clk.period_ps);
    } else if (w->state == RP_W_ENDING && w->vmcnt == 0 && w->lgkmcnt == 0) {
        wave_finish(w, e);
    }
}

static void cu_resp(rp_port *p, rp_engine *e)
{
    rp_cu *cu = p->owner;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        rp_access *a = m->acc;
        rp_msg_free(rp_pool(cu->sim), m);
        if (a && --a->lines_pending == 0)
            acc_complete(cu, a, e);
    }
}

static void lds_done(rp_event *ev, rp_engine *e)
{
    rp_cu *cu = ev->owner;
    while (cu->lds_head && cu->lds_head->done <= e->now) {
        rp_access *a = cu->lds_head;
        cu->lds_head = a->next;
        if (!cu->lds_head)
            cu->lds_tail = NULL;
        acc_complete(cu, a, e);
    }
    if (cu->lds_head)
        rp_engine_schedule(e, ev, cu->lds_head->done);
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* Bank-conflict cycles of an LDS access (GCN3 ISA manual Sec. 11: 32 banks
 * of 4 bytes; a wavefront's access is processed in halves of 32 lanes, lanes
 * 0-31 then 32-63): per half with an active lane, the largest number of
 * distinct dwords mapping to one bank (equal dwords are broadcast, so they
 * cost one access). ds_read2/write2 touch two elements per lane (the second
 * at ds2_delta bytes); 64/96/128-bit elements touch consecutive dwords. */
static uint32_t lds_cycles(const trc_mem_op *op, const rp_access *a, uint32_t banks)
{
    uint32_t esz = a->ds2 ? a->ds2_esz : op->bytes_per_lane;
    uint32_t dw_el = esz ? (esz + 3) / 4 : 1, n_el = a->ds2 ? 2 : 1, total = 0;
    if (dw_el > 4)
        dw_el = 4;
    if (banks == 0)
        banks = 1;
    uint32_t ord = 0; /* index into op->addr: active lanes in lane order */
    for (uint32_t half = 0; half < 2; half++) {
        uint64_t dw[32 * 8];
        uint32_t nd = 0;
        for (uint32_t lane = half * 32; lane < half * 32 + 32; lane++) {
            if (!((op->exec >> lane) & 1))
                continue;
            uint64_t base = op->addr[ord++];
            for (uint32_t el = 0; el < n_el; el++) {
                uint64_t ad = base + (el ? (uint64_t)(int64_t)a->ds2_delta : 0);
                for (uint32_t d = 0; d < dw_el; d++)
                    dw[nd++] = (ad >> 2) + d;
            }
        }
        if (!nd)
            continue;
        if (nd <= 64) { /* the usual 32-64 dwords: insertion sort beats qsort's calls */
            for (uint32_t i = 1; i < nd; i++) {
                uint64_t x = dw[i];
                uint32_t j = i;
                for (; j > 0 && dw[j - 1] > x; j--)
                    dw[j] = dw[j - 1];
                dw[j] = x;
            }
        } else
            qsort(dw, nd, sizeof dw[0], cmp_u64);
        uint32_t cnt[1024], worst = 1, nb = banks > 1024 ? 1024 : banks, nu = 0;
        memset(cnt, 0, nb * sizeof cnt[0]);
        for (uint32_t i = 0; i < nd; i++) {
            if (i && dw[i] == dw[i - 1])
                continue; /* broadcast */
            nu++;
            uint32_t b = (uint32_t)(dw[i] % nb);
            if (++cnt[b] > worst)
                worst = cnt[b];
        }
        /* a half moves at most `banks` dwords per cycle */
        uint32_t uniq_min = (nu + nb - 1) / nb;
        total += worst > uniq_min ? worst : uniq_min;
    }
    return total ? total : 1;
}

/* Static facts of an opcode: the named columns of gcn/gcn3.def (in->op is
 * always < GCN_OP_COUNT: the decoder produces nothing else). */
static inline const gcn_op_info *op_info(const gcn_insn *in) { return &gcn_op_infos[in->op]; }

/* An LDS access whose values the functional LDS model applies and checks:
 * not the cross-lane crossbar ops, the M0 counters or the GDS. */
static inline bool lds_checked_op(const gcn_op_info *oi)
{
    return oi->seg != GCN_SEG_XLANE && oi->seg != GCN_SEG_LDSCTR && oi->seg != GCN_SEG_GDS;
}

/* Issue a memory instruction. Returns false on a trace inconsistency. */
static bool issue_mem(rp_wave *w, const gcn_insn *in, rp_time now, rp_time *t_next, rp_engine *e)
{
    rp_cu *cu = w->cu;
    rp_sim *s = cu->sim;
    const rp_config *cfg = &s->cfg;
    rp_time cyc = s->clk.period_ps;
    if (!gcn_walk_is_mem(in)) {
        *t_next = now + cyc; /* s_memtime, buffer_wbinvl1, ...: no recorded access */
        return true;
    }
    const trc_mem_op *op;
    int got = gcn_walk_mem(&w->walk, in, &op);
    if (got < 0) {
        walk_error(w, NULL);
        return false;
    }
    if (got == 0) {
        *t_next = now + cyc; /* EXEC=0: nothing recorded for this instruction */
        return true;
    }
    uint32_t n = op->flags & TRC_MO_SMEM ? 1 : (uint32_t)__builtin_popcountll(op->exec);
    if (n == 0) {
        *t_next = now + cyc;
        return true;
    }
    rp_access *a = acc_get(cu);
    if (!a)
        return false;
    a->w = w;
    a->in = in;
    a->op = op;
    if (op->flags & TRC_MO_ATOMIC) {
        const gcn_op_info *oi = op_info(in);
        a->atomic_op = oi->aop;
        a->atomic_bytes = oi->elem_bytes == 8 ? 8 : 4;
        if (a->atomic_op == GCN_AT_UNKNOWN || a->atomic_op == GCN_AT_NONE) {
            walk_error(w, "atomic opcode not understood by the functional model");
            a->atomic_op = GCN_AT_NONE;
        } else if ((a->atomic_op == GCN_AT_CMPSWAP) != !!(op->flags & TRC_MO_CMPSWAP)) {
            /* store_data holds 2 operands per lane only with TRC_MO_CMPSWAP (the
             * reader checked its length against the flags): never read past it */
            walk_error(w, a->atomic_op == GCN_AT_CMPSWAP
                              ? "compare-and-swap record without its compare value (no cmpswap flag: "
                                "recorded by a gcn3-emu older than the fix of issue 20; record again)"
                              : "cmpswap flag on an atomic that is not a compare-and-swap");
            a->atomic_op = GCN_AT_NONE;
        }
    }

    if (op->flags & TRC_MO_LDS) {
        a->kind = RP_ACC_LDS;
        a->counts_vm = in->unit == GCN_UNIT_VMEM; /* FLAT to LDS counts as a vector access */
        cu->st_lds++;
        const gcn_op_info *oi = op_info(in);
        /* two elements per lane at two offsets (ds_read2/write2[st64]); the
         * ds_wrxchg2 atomics are applied as one access per lane, as before */
        if (oi->elem_count == 2 && !(oi->flags & GCN_IF_ATOMIC)) {
            /* offset0 = imm[7:0], offset1 = imm2 (gcn_decode.c, DS format;
             * emu/isa/gcn_sem.c ds_access reads the same fields) */
            uint32_t esz = op->bytes_per_lane / 2, scale = esz * oi->elem_scale;
            a->ds2 = 1;
            a->ds2_esz = (uint8_t)esz;
            a->ds2_delta = ((int32_t)(in->imm2 & 0xff) - (int32_t)(in->imm & 0xff)) * (int32_t)scale;
        }
        uint32_t c = lds_cycles(op, a, cfg->lds_banks);
        cu->st_lds_conflict_cycles += c;
        rp_time start = cu->lds_busy > now ? cu->lds_busy : now;
        cu->lds_busy = start + c * cyc;
        a->done = cu->lds_busy + rp_lat_ps(cfg->lds_latency, s->clk);
        if (lds_checked_op(oi) && (op->load_data || op->store_data))
            rp_perform(s, a, n >= 64 ? ~0ull : (1ull << n) - 1);
        else
            rp_chk(s)->lds_unchecked++;
        if (a->counts_vm)
            w->vmcnt++;
        else
            w->lgkmcnt++;
        a->next = NULL;
        if (cu->lds_tail)
            cu->lds_tail->next = a;
        else
            cu->lds_head = a;
        cu->lds_tail = a;
        if (!cu->lds_ev.pending)
            rp_engine_schedule(e, &cu->lds_ev, cu->lds_head->done);
        *t_next = start + cyc;
        return true;
    }

    uint8_t type = op->flags & TRC_MO_ATOMIC ? RP_MSG_ATOMIC : op->flags & TRC_MO_STORE ? RP_MSG_WRITE : RP_MSG_READ;
    uint64_t lmask = ~(uint64_t)(cfg->l1v_line - 1);
    /* Coalesce lane addresses into lines; mask bits are active-lane ordinals. */
    uint64_t line[128], mask[128];
    uint32_t nl = 0;
    uint32_t bytes = op->bytes_per_lane ? op->bytes_per_lane : 4;
    if (op->flags & TRC_MO_SMEM) {
        uint64_t a0 = op->addr[0] & lmask, a1 = (op->addr[0] + bytes - 1) & lmask;
        line[nl] = a0, mask[nl++] = 1;
        for (uint64_t x = a0 + cfg->l1v_line; x <= a1 && nl < 128; x += cfg->l1v_line)
            line[nl] = x, mask[nl++] = 0;
    } else {
        for (uint32_t k = 0; k < n; k++) {
            uint64_t l0 = op->addr[k] & lmask, l1 = (op->addr[k] + bytes - 1) & lmask;
            for (uint64_t x = l0; x <= l1; x += cfg->l1v_line) {
                uint32_t j;
                /* lanes are usually sequential: search from the newest line */
                for (j = nl; j-- > 0;)
                    if (line[j] == x)
                        break;
                if (j == UINT32_MAX) {
                    if (nl == 128) {
                        walk_error(w, "more than 128 cache lines in one access");
                        break;
                    }
                    j = nl++;
                    line[j] = x;
                    mask[j] = 0;
                }
                if (x == l0)
                    mask[j] |= 1ull << k;
            }
        }
    }
    a->lines_pending = nl;
    rp_time start;
    rp_link *link;
    if (op->flags & TRC_MO_SMEM) {
        a->kind = RP_ACC_SMEM;
        a->counts_vm = 0;
        w->lgkmcnt++;
        cu->st_smem++;
        start = cu->smem_busy > now ? cu->smem_busy : now;
        cu->smem_busy = start + cfg->smem_issue_cycles * cyc;
        link = cu->l1s_link;
    } else {
        a->kind = RP_ACC_VMEM;
        a->counts_vm = 1;
        w->vmcnt++;
        cu->st_vmem++;
        cu->st_vmem_lines += nl;
        start = cu->vmem_busy > now ? cu->vmem_busy : now;
        uint32_t c = nl > cfg->vmem_issue_cycles ? nl : cfg->vmem_issue_cycles;
        cu->vmem_busy = start + c * cyc;
        link = &cu->l1v_link; /* l1v.bypass: the L1V allocates nothing (rp_cache.no_allocate) */
    }
    /* Computed here, once: caches of other partitions (a remote L2) only read it. */
    rp_access_cross_mask(a, cfg->l1v_line);
    for (uint32_t j = 0; j < nl; j++) {
        rp_msg *m = rp_msg_alloc(rp_pool(s));
        if (!m) {
            rp_sim_fail(s, "%s: out of memory for messages", cu->name);
            return false;
        }
        m->type = type;
        m->addr = line[j];
        m->lane_mask = mask[j];
        m->acc = a;
        m->src_gpu = (uint8_t)cu->gpu;
        m->payload = type == RP_MSG_READ ? 0 : (uint16_t)cfg->l1v_line;
        m->reply_link = &cu->resp_link;
        m->reply_port = &cu->resp;
        if (a->kind == RP_ACC_SMEM)
            m->dst = NULL; /* shared L1S link: default destination */
        rp_link_send(link, m, start + (rp_time)j * cyc);
    }
    *t_next = start + cyc;
    return true;
}

/* ---- instruction fetch: L1I (per shader array) and per-wave buffers ---------------- */

/* Device address each code object was loaded at: the k-th TRC_MEM_CODE
 * allocation of the timeline holds code object k (gcn_module_load allocates
 * the image, then stores the code object, in that order). A trace without
 * them fetches from address pc (the ELF vaddr). */
static uint64_t code_base_of(rp_sim *s, uint32_t co)
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
    rp_sim *s = c->sim;
    uint64_t lsz = s->cfg.l1v_line;
    uint64_t line = (f->w->code_base + f->pc) & ~(lsz - 1);
    uint32_t set = (uint32_t)((line >> c->line_shift) % c->sets);
    uint64_t *tg = &c->tag[(uint64_t)set * c->assoc];
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
    rp_msg *m = rp_msg_alloc(rp_pool(s));
    if (!m) {
        rp_sim_fail(s, "%s: out of memory for a message", c->comp.name);
        return;
    }
    m->type = RP_MSG_READ;
    m->addr = line;
    m->ctx = (void *)(uintptr_t)i;
    m->src_gpu = (uint8_t)c->gpu;
    m->reply_link = &c->fill_link;
    m->reply_port = &c->bottom;
    rp_port *dst = NULL;
    rp_link *l = rp_route_l2_bank(s, c->gpu, line, &dst);
    m->dst = dst;
    rp_link_send(l, m, t + s->clk.period_ps);
}

static void l1i_fill(rp_port *p, rp_engine *e)
{
    rp_l1i *c = p->owner;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        uint32_t i = (uint32_t)(uintptr_t)m->ctx;
        rp_msg_free(rp_pool(c->sim), m);
        if (i >= c->mshrs || !c->mshr[i].busy) {
            rp_sim_fail(c->sim, "%s: fill for an idle MSHR", c->comp.name);
            return;
        }
        rp_l1i_mshr *ms = &c->mshr[i];
        uint32_t set = (uint32_t)((ms->line >> c->line_shift) % c->sets);
        uint64_t base = (uint64_t)set * c->assoc, v = base;
        for (uint32_t w = 0; w < c->assoc; w++) {
            if (c->tag[base + w] == 0) {
                v = base + w;
                break;
            }
            if (c->age[base + w] < c->age[v])
                v = base + w;
        }
        c->tag[v] = ms->line + 1;
        c->age[v] = ++c->stamp;
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

static int l1i_init(rp_l1i *c, rp_sim *s, uint32_t gpu, const char *name)
{
    const rp_config *cfg = &s->cfg;
    memset(c, 0, sizeof *c);
    c->sim = s;
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
    c->eng = &s->gpus[gpu].part->eng;
    rp_link_init(&c->fill_link, c->eng, &c->bottom, rp_lat_ps(cfg->noc_latency, s->clk),
                 rp_bw_Bps(cfg->noc_bandwidth, s->clk), cfg->header_bytes);
    rp_engine_add_component(c->eng, &c->comp, name, l1i_dump);
    return 0;
}

int rp_gpu_frontend_init(rp_sim *s, rp_gpu *g)
{
    char name[48];
    /* Tables the partitions only read, filled before the run. */
    code_base_of(s, 0);
    g->l1i = calloc(s->cfg.shader_arrays, sizeof *g->l1i);
    if (!g->l1i)
        return -1;
    for (uint32_t a = 0; a < s->cfg.shader_arrays; a++) {
        rp_l1i *c = &g->l1i[a];
        snprintf(name, sizeof name, "gpu[%u].sa[%u].l1i", g->id, a);
        if (l1i_init(c, s, g->id, name))
            return -1;
        const char *p = c->comp.name;
        rp_stats_add(&s->stats, p, "read_hits", &c->st_hits, "count");
        rp_stats_add(&s->stats, p, "read_misses", &c->st_misses, "count");
        rp_stats_add(&s->stats, p, "mshr_merges", &c->st_merges, "count");
        rp_stats_add(&s->stats, p, "mshr_stalls", &c->st_mshr_stalls, "count");
    }
    for (uint32_t i = 0; i < g->n_cus; i++) {
        rp_cu *cu = &g->cus[i];
        cu->l1i = &g->l1i[cu->sa < s->cfg.shader_arrays ? cu->sa : 0];
        rp_stats_add(&s->stats, cu->name, "fetches", &cu->st_fetches, "count");
        rp_stats_add(&s->stats, cu->name, "fetch_stall_cycles", &cu->st_fetch_stall_cycles, "cycles");
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
    rp_sim *s = cu->sim;
    rp_l1i *c = cu->l1i;
    rp_time cyc = s->clk.period_ps;
    rp_fetch *f = cu->fetch_free;
    if (f)
        cu->fetch_free = f->next;
    else if (!(f = malloc(sizeof *f))) {
        rp_sim_fail(s, "%s: out of memory", cu->name);
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
    const rp_config *cfg = &w->cu->sim->cfg;
    uint64_t fb = cfg->fetch_bytes, next = w->ib_base + (uint64_t)w->ib_n * fb;
    if (w->fetch || (uint64_t)(w->ib_n + 1) * fb > cfg->ibuffer_entries * 4ull)
        return;
    if (next >= w->walk.prog->vaddr + w->walk.prog->size)
        return;
    fetch_start(w, next, now);
}

static bool insn_buffered(const rp_wave *w, const gcn_insn *in, uint64_t fb)
{
    return in->pc >= w->ib_base && in->pc + in->size <= w->ib_base + (uint64_t)w->ib_n * fb;
}

static void fetch_land(rp_wave *w, rp_fetch *f, rp_engine *e)
{
    rp_cu *cu = w->cu;
    uint64_t fb = cu->sim->cfg.fetch_bytes;
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
    fetch_next(w, e->now);
    if (w->state == RP_W_FETCH && insn_buffered(w, &w->walk.prog->insn[w->walk.idx], fb)) {
        w->state = RP_W_RUN;
        cu->st_fetch_stall_cycles += (e->now - w->parked) / cu->sim->clk.period_ps;
        rp_engine_schedule(e, &w->ev, e->now);
    }
}

static void fetch_done(rp_event *ev, rp_engine *e)
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
    if (cu->fetch_head)
        rp_engine_schedule(e, ev, cu->fetch_head->done);
}

/* Before executing in at local time *t: drop buffered chunks the wave has
 * moved past (prefetching the next one), and if in is not buffered start or
 * await its fetch. Returns true when in can issue now; false when the wave
 * was rescheduled (t > now) or parked in RP_W_FETCH. */
static bool front_end(rp_wave *w, const gcn_insn *in, rp_time t, rp_engine *e)
{
    const rp_config *cfg = &w->cu->sim->cfg;
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
        fetch_next(w, e->now);
    }
    if (insn_buffered(w, in, fb))
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
            walk_error(w, "instruction beyond the end of the code object");
            wave_abort(w, e);
            return false;
        }
        fetch_start(w, end, e->now);
    }
    w->state = RP_W_FETCH;
    w->parked = e->now;
    return false;
}

static bool needs_now(const gcn_insn *in)
{
    switch (in->unit) {
    case GCN_UNIT_SALU:
    case GCN_UNIT_BRANCH:
        return false;
    case GCN_UNIT_SPECIAL:
        return (in->flags & (GCN_IF_WAITCNT | GCN_IF_BARRIER | GCN_IF_ENDPGM)) != 0;
    default:
        return true;
    }
}

static void wave_run(rp_event *ev, rp_engine *e)
{
    rp_wave *w = ev->owner;
    rp_cu *cu = w->cu;
    rp_sim *s = cu->sim;
    const rp_config *cfg = &s->cfg;
    rp_time now = e->now, t = now, cyc = s->clk.period_ps;

    for (int budget = 0; budget < 1024; budget++) {
        /* the next instruction, EXEC applied (gcn/gcn_walk.h: the rules of the record) */
        const gcn_insn *in = gcn_walk_insn(&w->walk);
        if (!in) {
            walk_error(w, NULL);
            wave_abort(w, e);
            return;
        }
        if (!front_end(w, in, t, e))
            return;
        if (t > now && needs_now(in)) {
            rp_engine_schedule(e, ev, t);
            return;
        }
        uint32_t fl = in->flags;
        if (fl & GCN_IF_WAITCNT) {
            w->wait_vm = in->waitcnt_vm >= 15 ? 0xffff : in->waitcnt_vm;
            w->wait_lgkm = in->waitcnt_lgkm >= 15 ? 0xffff : in->waitcnt_lgkm;
            if (!waitcnt_ok(w)) {
                w->state = RP_W_WAITCNT; /* dyn/idx advance when it resumes */
                return;
            }
        }
        /* The instruction executes now (at time t). */
        cu->st_instr++;
        rp_time t_next = t + cfg->salu_cycles * cyc;
        switch (in->unit) {
        case GCN_UNIT_VALU: {
            uint32_t c = fl & GCN_IF_F64 ? cfg->valu_f64_cycles : fl & GCN_IF_TRANS ? cfg->valu_trans_cycles
                                                                                   : cfg->valu_cycles;
            rp_time *busy = &cu->simd_busy[w->simd];
            rp_time start = *busy > t ? *busy : t;
            *busy = start + c * cyc;
            t_next = start + c * cyc; /* the wave's next issue waits for this one to leave the SIMD */
            cu->st_valu++;
            break;
        }
        case GCN_UNIT_VMEM:
        case GCN_UNIT_SMEM:
        case GCN_UNIT_LDS:
            if (!issue_mem(w, in, t, &t_next, e)) {
                wave_abort(w, e);
                return;
            }
            break;
        case GCN_UNIT_BRANCH: {
            rp_time start = cu->branch_busy > t ? cu->branch_busy : t;
            cu->branch_busy = start + cyc;
            t_next = start + cfg->salu_cycles * cyc;
            cu->st_branch++;
            break;
        }
        case GCN_UNIT_SALU: {
            rp_time start = cu->salu_busy > t ? cu->salu_busy : t;
            cu->salu_busy = start + cyc;
            t_next = start + cfg->salu_cycles * cyc;
            cu->st_salu++;
            break;
        }
        default:
            if (fl & GCN_IF_SLEEP)
                t_next = t + (in->target & 0xffff) * 64 * cyc;
            break;
        }
        t_next += cfg->decode_cycles * cyc;
        /* next instruction: counted, branch outcome or target from the record */
        if (gcn_walk_step(&w->walk, in) < 0) {
            walk_error(w, NULL);
            wave_abort(w, e);
            return;
        }
        if (fl & GCN_IF_ENDPGM) {
            w->state = RP_W_ENDING;
            if (w->vmcnt == 0 && w->lgkmcnt == 0)
                wave_finish(w, e);
            return;
        }
        if (fl & GCN_IF_BARRIER) {
            rp_wg *wg = w->wg;
            w->state = RP_W_BARRIER;
            if (++wg->n_bar == wg->n_live) {
                rp_time rt = t_next + rp_lat_ps(cfg->barrier_latency, s->clk);
                wg->n_bar = 0;
                for (uint32_t i = 0; i < wg->n_waves; i++)
                    if (wg->waves[i].state == RP_W_BARRIER) {
                        wg->waves[i].state = RP_W_RUN;
                        rp_engine_schedule(e, &wg->waves[i].ev, rt);
                    }
            }
            return;
        }
        t = t_next;
    }
    rp_engine_schedule(e, ev, t > now ? t : now + cyc);
}

static void wg_start(rp_cu *cu, rp_wg *wg, rp_engine *e)
{
    rp_sim *s = cu->sim;
    rp_kernel *k = wg->k;
    char err[256];
    if (cu->last_kernel != k->launch.kernel_id) {
        /* New kernel on this CU: invalidate the L1V (GCN invalidates L1s at
         * kernel start); ordered before our next requests on the same link. */
        cu->last_kernel = k->launch.kernel_id;
        rp_msg *m = rp_msg_alloc(rp_pool(s));
        if (m) {
            m->type = RP_MSG_INVAL;
            rp_link_send(&cu->l1v_link, m, e->now);
        }
    }
    wg->tw = trc_reader_load_wg(s->rd, k->launch.kernel_id, wg->index, err, sizeof err);
    if (!wg->tw) {
        rp_sim_fail(s, "%s: %s", cu->name, err);
        return;
    }
    wg->cu = cu;
    wg->n_waves = wg->tw->n_waves;
    wg->n_live = wg->n_waves;
    wg->waves = calloc(wg->n_waves ? wg->n_waves : 1, sizeof *wg->waves);
    wg->lds_size = k->launch.group_segment_size;
    wg->lds = wg->lds_size ? calloc(1, wg->lds_size) : NULL;
    if (!wg->waves || (wg->lds_size && !wg->lds)) {
        rp_sim_fail(s, "%s: out of memory", cu->name);
        return;
    }
    uint64_t code_base = code_base_of(s, k->launch.code_object_id);
    cu->st_wgs++;
    cu->live_wgs++;
    if (wg->n_waves == 0) {
        wg_finish(wg, e);
        return;
    }
    for (uint32_t i = 0; i < wg->n_waves; i++) {
        rp_wave *w = &wg->waves[i];
        rp_event_init(&w->ev, wave_run, w, RP_PRIO_COMPONENT);
        w->cu = cu;
        w->wg = wg;
        gcn_walk_init(&w->walk, k->prog, k->entry_idx, &wg->tw->waves[i]);
        w->simd = i < 64 ? wg->simd_of[i] % s->cfg.simds : 0;
        w->code_base = code_base;
        w->ib_base = k->prog->insn[k->entry_idx].pc & ~(uint64_t)(s->cfg.fetch_bytes - 1);
        w->ib_n = 0;
        w->wait_vm = w->wait_lgkm = 0xffff;
        w->state = RP_W_RUN;
        rp_engine_schedule(e, &w->ev, e->now);
    }
}

static void wg_finish(rp_wg *wg, rp_engine *e)
{
    rp_cu *cu = wg->cu;
    rp_sim *s = cu->sim;
    trc_wg_free(wg->tw);
    wg->tw = NULL;
    free(wg->waves);
    wg->waves = NULL;
    free(wg->lds);
    wg->lds = NULL;
    cu->live_wgs--;
    rp_msg *m = rp_msg_alloc(rp_pool(s));
    if (!m) {
        rp_sim_fail(s, "%s: out of memory", cu->name);
        return;
    }
    m->type = RP_MSG_WG_DONE;
    m->ctx = wg;
    rp_link_send(cu->done_link, m, e->now);
    e->progress++;
}

static void cu_ctl(rp_port *p, rp_engine *e)
{
    rp_cu *cu = p->owner;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        rp_wg *wg = m->ctx;
        rp_msg_free(rp_pool(cu->sim), m);
        wg_start(cu, wg, e);
    }
}

static void cu_dump(rp_component *c, FILE *f)
{
    rp_cu *cu = (rp_cu *)c;
    if (!cu->live_wgs)
        return;
    fprintf(f, "  %s: %u live workgroups, lds queue %s\n", cu->name, cu->live_wgs, cu->lds_head ? "busy" : "empty");
}

void rp_cu_init(rp_cu *cu, rp_sim *s, uint32_t gpu, uint32_t id)
{
    memset(cu, 0, sizeof *cu);
    cu->sim = s;
    cu->gpu = gpu;
    cu->id = id;
    cu->sa = id / s->cfg.cus_per_sa;
    cu->last_kernel = UINT32_MAX;
    snprintf(cu->name, sizeof cu->name, "gpu[%u].cu[%u]", gpu, id);
    cu->resp.owner = cu->ctl.owner = cu;
    cu->resp.notify = cu_resp;
    cu->ctl.notify = cu_ctl;
    rp_time dl = rp_lat_ps(s->cfg.dispatch_latency, s->clk);
    cu->eng = &s->gpus[gpu].part->eng;
    rp_link_init(&cu->ctl_link, cu->eng, &cu->ctl, dl, 0, 0);
    rp_link_init(&cu->resp_link, cu->eng, &cu->resp, 0, 0, 0);
    rp_event_init(&cu->lds_ev, lds_done, cu, RP_PRIO_COMPONENT);
    rp_event_init(&cu->fetch_ev, fetch_done, cu, RP_PRIO_COMPONENT);
    rp_engine_add_component(cu->eng, &cu->comp, cu->name, cu_dump);
}

/* ---- dispatcher ----------------------------------------------------------------------- */

/* Per-CU resources a workgroup holds, rounded to the GCN3 allocation granules
 * (AMD GCN3 ISA manual Sec. 3 / LLVM AMDGPUUsage for gfx8: VGPRs in blocks of
 * 4, SGPRs in blocks of 16, LDS in blocks of 128 dwords = 512 bytes). */
static uint32_t res_vgprs(const trc_launch *l) { uint32_t v = l->vgpr_count ? l->vgpr_count : 1; return (v + 3) & ~3u; }
static uint32_t res_sgprs(const trc_launch *l) { uint32_t v = l->sgpr_count ? l->sgpr_count : 1; return (v + 15) & ~15u; }
static uint64_t res_lds(const trc_launch *l) { return ((uint64_t)l->group_segment_size + 511) & ~(uint64_t)511; }

static bool wg_fits(rp_disp *d, uint32_t c, const rp_kernel *k, uint8_t *simd_of)
{
    const rp_config *cfg = &d->sim->cfg;
    rp_cu_res r = d->res[c];
    const trc_launch *l = &k->launch;
    if (res_lds(l) > r.lds)
        return false;
    uint32_t vg = res_vgprs(l), sg = res_sgprs(l);
    uint32_t n = l->waves_per_wg ? l->waves_per_wg : 1;
    for (uint32_t i = 0; i < n; i++) {
        /* least-loaded SIMD that has a slot and registers */
        int best = -1;
        for (uint32_t sm = 0; sm < cfg->simds; sm++)
            if (r.slots[sm] && r.vgprs[sm] >= vg && r.sgprs[sm] >= sg && (best < 0 || r.slots[sm] > r.slots[best]))
                best = (int)sm;
        if (best < 0)
            return false;
        r.slots[best]--;
        r.vgprs[best] -= vg;
        r.sgprs[best] -= sg;
        if (i < 64)
            simd_of[i] = (uint8_t)best;
    }
    r.lds -= res_lds(l);
    d->res[c] = r;
    return true;
}

static void wg_release(rp_disp *d, rp_wg *wg)
{
    const trc_launch *l = &wg->k->launch;
    uint32_t c;
    for (c = 0; c < d->n_cus; c++)
        if (d->cus[c] == wg->cu)
            break;
    if (c == d->n_cus)
        return;
    uint32_t vg = res_vgprs(l), sg = res_sgprs(l);
    uint32_t n = l->waves_per_wg ? l->waves_per_wg : 1;
    for (uint32_t i = 0; i < n && i < 64; i++) {
        d->res[c].slots[wg->simd_of[i]]++;
        d->res[c].vgprs[wg->simd_of[i]] += vg;
        d->res[c].sgprs[wg->simd_of[i]] += sg;
    }
    d->res[c].lds += res_lds(l);
}

static void disp_start_kernel(rp_disp *d, rp_engine *e)
{
    rp_sim *s = d->sim;
    rp_kernel *k = d->queue;
    d->queue = k->next;
    if (!d->queue)
        d->queue_tail = NULL;
    d->cur = k;
    d->next_wg = d->wgs_done = 0;
    d->flushing = 0;
    k->start = e->now;
    d->st_kernels++;
    rp_kernel_note(s, k, 0); /* per-kernel counters at start */
    /* A workgroup that can never fit is an error, not a hang. */
    const rp_config *cfg = &s->cfg;
    const trc_launch *l = &k->launch;
    uint64_t waves = l->waves_per_wg ? l->waves_per_wg : 1;
    if (res_vgprs(l) > cfg->vgprs || res_sgprs(l) > cfg->sgprs || res_lds(l) > cfg->lds_size ||
        waves > (uint64_t)cfg->simds * cfg->wave_slots)
        rp_sim_fail(s, "kernel %u (%s): a workgroup (%u waves, %u VGPRs, %u SGPRs, %u B LDS) never fits a CU",
                    l->kernel_id, l->kernel_name, l->waves_per_wg, l->vgpr_count, l->sgpr_count,
                    l->group_segment_size);
}

static void disp_kernel_end(rp_disp *d, rp_engine *e)
{
    rp_sim *s = d->sim;
    rp_kernel *k = d->cur;
    k->end = e->now;
    k->done = true;
    rp_kernel_note(s, k, 1); /* counters at end (deltas); the host learns of it at the next synchronisation point */
    d->cur = NULL;
}

static void disp_run(rp_event *ev, rp_engine *e)
{
    rp_disp *d = ev->owner;
    rp_sim *s = d->sim;
    if (s->failed)
        return;
    if (!d->cur) {
        if (!d->queue)
            return;
        disp_start_kernel(d, e);
        if (s->failed)
            return;
    }
    rp_kernel *k = d->cur;
    if (d->flushing)
        return;
    if (d->next_wg < k->n_wg) {
        if (d->busy_until > e->now) {
            rp_engine_schedule(e, ev, d->busy_until);
            return;
        }
        uint8_t simd_of[64];
        for (uint32_t i = 0; i < d->n_cus; i++) {
            uint32_t c = (d->rr + i) % d->n_cus;
            if (!wg_fits(d, c, k, simd_of))
                continue;
            rp_wg *wg = calloc(1, sizeof *wg);
            rp_msg *m = rp_msg_alloc(rp_pool(s));
            if (!wg || !m) {
                rp_sim_fail(s, "dispatcher: out of memory");
                return;
            }
            wg->k = k;
            wg->index = d->next_wg++;
            wg->cu = d->cus[c];
            memcpy(wg->simd_of, simd_of, sizeof simd_of);
            m->type = RP_MSG_WG_ASSIGN;
            m->ctx = wg;
            rp_link_send(&d->cus[c]->ctl_link, m, e->now);
            d->st_wgs_dispatched++;
            d->rr = (c + 1) % d->n_cus;
            d->busy_until = e->now + s->cfg.dispatch_cycles * s->clk.period_ps;
            e->progress++;
            if (d->next_wg < k->n_wg)
                rp_engine_schedule(e, ev, d->busy_until);
            return;
        }
        return; /* no CU has room: a WG_DONE wakes us */
    }
    if (d->wgs_done == k->n_wg) {
        /* Kernel end: write back the L2s of the GPUs it used (release). */
        d->flushing = 1;
        d->flush_acks_pending = 0;
        for (uint32_t g = k->gpu_first; g < k->gpu_first + k->gpu_count; g++) {
            rp_gpu *gp = &s->gpus[g];
            for (uint32_t b = 0; b < s->cfg.l2_banks; b++) {
                rp_msg *m = rp_msg_alloc(rp_pool(s));
                if (!m) {
                    rp_sim_fail(s, "dispatcher: out of memory");
                    return;
                }
                m->type = RP_MSG_FLUSH;
                bool remote = g != d->gpu && d->gpu_flush; /* U-MGPU: over the interconnect */
                m->reply_link = remote ? &d->gpu_in[g] : &d->in_link;
                m->reply_port = &d->in;
                m->dst = &gp->l2[b].top;
                rp_link_send(remote ? &d->gpu_flush[g] : &gp->l2_links[b], m, e->now);
                d->flush_acks_pending++;
            }
        }
    }
}

static void disp_in(rp_port *p, rp_engine *e)
{
    rp_disp *d = p->owner;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        if (m->type == RP_MSG_WG_DONE) {
            rp_wg *wg = m->ctx;
            wg_release(d, wg);
            free(wg);
            d->wgs_done++;
        } else if (m->type == RP_MSG_FLUSH_ACK) {
            if (--d->flush_acks_pending == 0 && d->flushing) {
                rp_msg_free(rp_pool(d->sim), m);
                disp_kernel_end(d, e);
                rp_engine_wake(e, &d->ev, e->now);
                continue;
            }
        }
        rp_msg_free(rp_pool(d->sim), m);
    }
    rp_engine_wake(e, &d->ev, e->now);
}

static void disp_dump(rp_component *c, FILE *f)
{
    rp_disp *d = (rp_disp *)c;
    if (!d->cur && !d->queue)
        return;
    if (d->cur)
        fprintf(f, "  %s: kernel %u: %u/%u workgroups dispatched, %u done, flushing=%u (%u acks pending)\n",
                c->name, d->cur->launch.kernel_id, d->next_wg, d->cur->n_wg, d->wgs_done, d->flushing,
                d->flush_acks_pending);
    else
        fprintf(f, "  %s: idle with queued kernels\n", c->name);
}

void rp_disp_init(rp_disp *d, rp_sim *s, uint32_t gpu)
{
    char name[48];
    memset(d, 0, sizeof *d);
    d->sim = s;
    d->gpu = gpu;
    rp_event_init(&d->ev, disp_run, d, RP_PRIO_COMPONENT);
    d->in.owner = d;
    d->in.notify = disp_in;
    d->eng = &s->gpus[gpu].part->eng;
    rp_link_init(&d->in_link, d->eng, &d->in, rp_lat_ps(s->cfg.dispatch_latency, s->clk), 0, 0);
    snprintf(name, sizeof name, "gpu[%u].dispatcher", gpu);
    rp_engine_add_component(d->eng, &d->comp, name, disp_dump);
}

void rp_disp_kick(rp_disp *d) { rp_engine_wake(d->eng, &d->ev, d->eng->now); }
