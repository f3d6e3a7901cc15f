/*
 * cu.c - compute unit of the timing model (its instruction fetch is
 * fetch.c, the dispatcher that feeds it disp.c; the functional "perform" of
 * memory accesses and the data check are in perform.c).
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
 * Front end: fetch.c (rp_front_end before each instruction).
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
#include "rp_sim_internal.h"
#include "rp_tlb.h"
#include "rp_wgload.h"

#include <stdlib.h>
#include <string.h>

/* ---- CU ------------------------------------------------------------------------------ */

static void wave_run(rp_event *ev, rp_engine *e);

/* A trace inconsistency of wave w: what, or (NULL) the walker's message. */
void rp_walk_error(rp_wave *w, const char *what)
{
    if (!what)
        what = w->walk.err;
    const rp_ctx *x = w->cu->x;
    rp_ctx_chk(x)->walk_errors++;
    __atomic_add_fetch(&w->wg->k->walk_errors, 1, __ATOMIC_RELAXED);
    if (rp_ctx_out(x) && rp_ctx_chk(x)->walk_errors <= 10)
        fprintf(rp_ctx_out(x), "trace walk: kernel %u wg %u wave %u at dyn %llu pc 0x%llx: %s\n",
                w->wg->k->launch.kernel_id, w->wg->index, w->walk.tw->wave_in_wg, (unsigned long long)w->walk.dyn,
                (unsigned long long)(w->walk.idx < w->walk.prog->n_insn ? w->walk.prog->insn[w->walk.idx].pc : 0),
                what);
}

static rp_access *acc_get(rp_cu *cu)
{
    rp_access *a = cu->acc_free;
    if (a) {
        cu->acc_free = a->next;
        rp_access *all = a->all_next;
        uint8_t *hbuf = a->hbuf;
        uint32_t hcap = a->hcap;
        memset(a, 0, sizeof *a);
        a->all_next = all;
        a->hbuf = hbuf;
        a->hcap = hcap;
        return a;
    }
    a = calloc(1, sizeof *a);
    if (!a) {
        rp_ctx_fail(cu->x, "%s: out of memory", cu->name);
        return NULL;
    }
    /* every access the CU allocated, in flight or free: freed at the end
     * even when a run stopped with accesses in flight */
    a->all_next = cu->acc_all;
    cu->acc_all = a;
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
    RP_HOOK_FIRE(w->cu->x->hooks, RP_HOOK_WAVE_RETIRE, e->now, w->cu->gpu, w->cu->id, w, NULL, w->cu->x->owner);
    /* per wave, not per instruction: a U-MGPU kernel's waves run in several partitions
     * (instructions a sampled replay skipped are not replayed: sample.c counts them) */
    uint64_t ran = w->walk.dyn + w->walk.dyn_extra - w->walk.dyn_skipped - w->smp_skipped;
    __atomic_add_fetch(&w->wg->k->n_instr, ran, __ATOMIC_RELAXED);
    w->wg->instr_done += ran; /* its workgroup's waves all run on its CU: this partition */
    if (w->cu->x->cfg->sample_enable && w->cu->x->cfg->sample_waves)
        w->cu->x->sample_wave_end(w->cu->x->owner, w, e->now);
    if (w->walk.aw_gave_up) {
        /* polls never read what the recording saw: a difference */
        const rp_ctx *x = w->cu->x;
        rp_ctx_chk(x)->await_give_ups += w->walk.aw_gave_up;
        __atomic_add_fetch(&w->wg->k->mismatches, w->walk.aw_gave_up, __ATOMIC_RELAXED);
        if (rp_ctx_out(x) && rp_ctx_chk(x)->printed < x->cfg->check_print) {
            rp_ctx_chk(x)->printed++;
            const rp_wg *wg = w->wg;
            fprintf(rp_ctx_out(x),
                    "mismatch: await kernel %u wg (%u,%u,%u) wave %u: %llu wait(s) gave up, the first at loop 0x%llx: "
                    "memory never showed what the recording saw (sim.await_max_polls polls; at most 16384 for a "
                    "retried iteration); went on as recorded\n",
                    wg->k->launch.kernel_id, wg->tw->wg_id[0], wg->tw->wg_id[1], wg->tw->wg_id[2],
                    w->walk.tw->wave_in_wg, (unsigned long long)w->walk.aw_gave_up,
                    (unsigned long long)w->walk.aw_gave_up_pc);
        }
    }
    if (w->walk.aw_soft_exits) {
        /* waits left on a flag set to another value than the recording's:
         * the data that follows is the model's order (classify.c) */
        rp_ctx_chk(w->cu->x)->load_order += w->walk.aw_soft_exits;
        __atomic_add_fetch(&w->wg->k->order_loads, w->walk.aw_soft_exits, __ATOMIC_RELAXED);
    }
    if (w->walk.aw_iters) {
        __atomic_add_fetch(&w->wg->k->spin_iterations, w->walk.aw_iters, __ATOMIC_RELAXED);
        w->wg->spins_done += w->walk.aw_iters;
        rp_ctx_chk(w->cu->x)->spin_iterations += w->walk.aw_iters;
    }
    if (w->wait_since) /* ended inside an await's loop */
        w->wait_ps += e->now + 1 - w->wait_since;
    if (w->wait_ps) {
        __atomic_add_fetch(&w->wg->k->wait_ps, w->wait_ps, __ATOMIC_RELAXED);
        rp_ctx_chk(w->cu->x)->wait_ps += w->wait_ps;
    }
    if (w->fetch) {
        w->fetch->w = NULL; /* lands unclaimed */
        w->fetch = NULL;
    }
    /* a wave that reached s_endpgm used its whole record (an aborted one
     * was reported where it stopped) */
    if (w->walk.ended && gcn_walk_end(&w->walk))
        rp_walk_error(w, NULL);
    rp_wg *wg = w->wg;
    wg->n_live--;
    if (wg->n_live == 0) {
        wg_finish(wg, e);
        return;
    }
    /* Waves waiting at a barrier no longer wait for this one. */
    if (wg->n_bar && wg->n_bar == wg->n_live) {
        rp_time t = e->now + rp_lat_ps(w->cu->x->cfg->barrier_latency, w->cu->x->clk);
        wg->n_bar = 0;
        for (uint32_t i = 0; i < wg->n_waves; i++)
            if (wg->waves[i].state == RP_W_BARRIER) {
                wg->waves[i].state = RP_W_RUN;
                rp_engine_schedule(e, &wg->waves[i].ev, t);
            }
    }
}

/* Stop walking after a trace inconsistency; in-flight accesses still land. */
void rp_wave_abort(rp_wave *w, rp_engine *e)
{
    w->state = RP_W_ENDING;
    if (w->vmcnt == 0 && w->lgkmcnt == 0)
        wave_finish(w, e);
}

/* An access finished: drop its counter, wake a wave waiting on it. */
static void acc_complete(rp_cu *cu, rp_access *a, rp_engine *e)
{
    rp_wave *w = a->w;
    if (a->hashed && a->kind != RP_ACC_LDS) /* (LDS: checked where it is performed, at issue) */
        rp_load_hash_check(cu->x->owner, a);
    RP_HOOK_FIRE(cu->x->hooks, RP_HOOK_ACCESS_DONE, e->now, cu->gpu, cu->id, a, NULL, cu->x->owner);
    if (a->counts_vm)
        w->vmcnt--;
    else
        w->lgkmcnt--;
    acc_put(cu, a);
    e->progress++;
    if (w->state == RP_W_WAITCNT && waitcnt_ok(w)) {
        w->state = RP_W_RUN;
        rp_engine_schedule(e, &w->ev, e->now + cu->x->clk.period_ps);
    } else if (w->state == RP_W_ENDING && w->vmcnt == 0 && w->lgkmcnt == 0) {
        wave_finish(w, e);
    }
}

/* A response line for the CU arrives at t (a message appended to its
 * response port directly: t = now). An access completes when its last line
 * arrives: the lines are counted as they are sent (the response port is a
 * pull port, rp_port: no delivery event per line) and the access joins the
 * completions (vm_done), in arrival order, when its last one is. */
static void cu_resp_arrive(rp_port *p, rp_engine *e, rp_time t)
{
    rp_cu *cu = p->owner;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        rp_access *a = m->acc;
        rp_msg_free(rp_ctx_pool(cu->x), m);
        if (!a || --a->lines_pending)
            continue;
        a->done = t;
        rp_access **pp = &cu->vm_head; /* after every completion due no later (mostly: at the end) */
        if (cu->vm_tail && cu->vm_tail->done <= t)
            pp = &cu->vm_tail->next;
        else
            while (*pp && (*pp)->done <= t)
                pp = &(*pp)->next;
        a->next = *pp;
        *pp = a;
        if (!a->next)
            cu->vm_tail = a;
        rp_engine_wake(e, &cu->vm_ev, t);
    }
}

static void cu_resp(rp_port *p, rp_engine *e) { cu_resp_arrive(p, e, e->now); }

/* Complete the accesses of the FIFO (*head, *tail), in time order, that are
 * due by now; ev (the FIFO's event) then waits for the next one. */
static void complete_due(rp_cu *cu, rp_access **head, rp_access **tail, rp_event *ev, rp_engine *e)
{
    while (*head && (*head)->done <= e->now) {
        rp_access *a = *head;
        *head = a->next;
        if (!*head)
            *tail = NULL;
        acc_complete(cu, a, e);
    }
    if (*head && !ev->pending)
        rp_engine_schedule(e, ev, (*head)->done);
}

/* Accesses whose last line has arrived complete (priority DELIVER: where a
 * delivery of that line completed them before). */
static void vm_done(rp_event *ev, rp_engine *e)
{
    rp_cu *cu = ev->owner;
    complete_due(cu, &cu->vm_head, &cu->vm_tail, ev, e);
}

static void lds_done(rp_event *ev, rp_engine *e)
{
    rp_cu *cu = ev->owner;
    complete_due(cu, &cu->lds_head, &cu->lds_tail, ev, e);
}

/* Bank-conflict cycles of an LDS access (GCN3 ISA manual Sec. 11: 32 banks
 * of 4 bytes; a wavefront's access is processed in halves of 32 lanes, lanes
 * 0-31 then 32-63): per half with an active lane, the largest number of
 * distinct dwords mapping to one bank (equal dwords are broadcast, so they
 * cost one access). ds_read2/write2 touch two elements per lane (the second
 * at ds2_delta bytes); 64/96/128-bit elements touch consecutive dwords. */
uint32_t rp_lds_conflict_cycles_exact(const trc_mem_op *op, const rp_access *a, uint32_t banks)
{
    uint32_t esz = a->ds2 ? a->ds2_esz : op->bytes_per_lane;
    uint32_t dw_el = esz ? (esz + 3) / 4 : 1, n_el = a->ds2 ? 2 : 1, total = 0;
    if (dw_el > 4)
        dw_el = 4;
    if (banks == 0)
        banks = 1;
    uint32_t ord = 0; /* index into op->addr: active lanes in lane order (the lanes' own numbers do not matter) */
    for (uint32_t half = 0; half < 2; half++) {
        uint64_t dw[32 * 8];
        uint32_t nd = 0, m = trc_popcount64((op->exec >> (32 * half)) & 0xffffffffull);
        if (!m)
            continue;
        uint64_t dmax = 0; /* the largest dword index */
        if (n_el == 1 && dw_el == 1) /* one dword per active lane, in lane order */
            for (uint32_t j = 0; j < m; j++) {
                uint64_t x = rp_acc_addr(a, ord + j) >> 2;
                dw[nd++] = x;
                dmax = x > dmax ? x : dmax;
            }
        else if (dw_el == 1) /* ds_read2/write2 of dwords */
            for (uint32_t j = 0; j < m; j++) {
                uint64_t base = rp_acc_addr(a, ord + j), x0 = base >> 2,
                         x1 = (base + (uint64_t)(int64_t)a->ds2_delta) >> 2;
                dw[nd++] = x0;
                dw[nd++] = x1;
                dmax = x0 > dmax ? x0 : dmax;
                dmax = x1 > dmax ? x1 : dmax;
            }
        else
            for (uint32_t j = 0; j < m; j++) {
                uint64_t base = rp_acc_addr(a, ord + j);
                for (uint32_t el = 0; el < n_el; el++) {
                    uint64_t ad = base + (el ? (uint64_t)(int64_t)a->ds2_delta : 0);
                    for (uint32_t d = 0; d < dw_el; d++) {
                        dw[nd++] = (ad >> 2) + d;
                        dmax = (ad >> 2) + d > dmax ? (ad >> 2) + d : dmax;
                    }
                }
            }
        ord += m;
        uint32_t worst = 1, nb = banks > 1024 ? 1024 : banks, nu = 0;
        /* the bank of dword x: x mod nb, a mask for the usual power of two
         * (32 banks): no 64-bit division per dword */
        uint64_t bmask = (nb & (nb - 1)) == 0 ? nb - 1 : 0;
        if (bmask && dmax < 64 * 1024 / 4) {
            /* every dword inside a 64 KiB LDS: the distinct ones marked in a
             * bitmap, counted per bank */
            uint64_t seen[64 * 1024 / 4 / 64];
            uint32_t cnt[1024];
            memset(seen, 0, ((dmax >> 6) + 1) * sizeof seen[0]); /* the words in use */
            memset(cnt, 0, nb * sizeof cnt[0]);
            for (uint32_t i = 0; i < nd; i++) {
                uint64_t x = dw[i], bit = 1ull << (x & 63);
                if (seen[x >> 6] & bit)
                    continue; /* broadcast */
                seen[x >> 6] |= bit;
                nu++;
                uint32_t c = ++cnt[x & bmask];
                if (c > worst)
                    worst = c;
            }
            uint32_t uniq_min = (nu + nb - 1) / nb;
            total += worst > uniq_min ? worst : uniq_min;
            continue;
        }
        /* each bank's distinct dwords on a chain (equal ones are broadcast:
         * counted once); a new dword's count in its bank is the chain's
         * length + 1. nd <= 256 (32 lanes, two elements of up to four dwords) */
        uint16_t head[1024], nxt[32 * 8];
        memset(head, 0xff, nb * sizeof head[0]);
        for (uint32_t i = 0; i < nd; i++) {
            uint64_t x = dw[i];
            uint32_t b = (uint32_t)(bmask ? x & bmask : x % nb), c = 0, k = head[b];
            while (k != 0xffff && dw[k] != x) {
                k = nxt[k];
                c++;
            }
            if (k != 0xffff)
                continue; /* broadcast */
            nxt[i] = head[b];
            head[b] = (uint16_t)i;
            nu++;
            if (c + 1 > worst)
                worst = c + 1;
        }
        /* a half moves at most `banks` dwords per cycle */
        uint32_t uniq_min = (nu + nb - 1) / nb;
        total += worst > uniq_min ? worst : uniq_min;
    }
    return total ? total : 1;
}

/* ceil(a / b), b > 0 */
static inline uint32_t div_up(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

/* The cycles of one half of m active lanes (m >= 1) whose dwords are
 * d_j + e (j < m, e < dw_el) with d_j = d_0 + j t (a strided access, stride
 * 4 t bytes), and with ds2 also d_j + e + dd, nb banks (a power of two):
 * rp_lds_conflict_cycles_exact's count in closed form for the usual shapes,
 * else by bank where the dwords are known to be distinct (the count does
 * not depend on d_0: a shift permutes the banks), or 0 where neither applies
 * (the caller counts dword by dword). */
static uint32_t lds_half_strided(uint32_t m, int64_t t, uint32_t dw_el, bool ds2, int64_t dd, uint32_t nb)
{
    uint64_t at = (uint64_t)(t < 0 ? -t : t), ad = (uint64_t)(dd < 0 ? -dd : dd);
    if (!ds2) {
        if (at == 0) /* one lane's dword(s), broadcast: dw_el <= 4 consecutive dwords, distinct banks when nb >= 4 */
            return dw_el <= nb ? 1 : 0;
        if (at == dw_el) /* m dw_el consecutive dwords */
            return div_up(m * dw_el, nb);
        if (dw_el == 1) {
            /* m distinct dwords j t: bank residues repeat every L = nb / gcd(t, nb) lanes */
            uint32_t g = (uint32_t)(at & (uint64_t)(nb - 1)) ? (uint32_t)(at & -at) : nb;
            return div_up(m, nb / g);
        }
    } else if (dw_el == 1 && ad != 0 && !(ad & (uint64_t)(nb - 1))) {
        /* the second element's dwords in the same banks as the first's: when
         * they are other dwords, every bank's count doubles */
        if (at == 0)
            return 2;
        if (ad % at != 0 || ad / at >= m)
            return 2 * lds_half_strided(m, t, 1, false, 0, nb);
    }
    /* lanes at one address: as one lane (broadcast) */
    if (at == 0)
        m = 1;
    /* distinct dwords: |t| >= dw_el (or one lane), and the second element's span clear of the first's */
    if ((m > 1 && at < dw_el) || (ds2 && ad < (uint64_t)(m - 1) * at + dw_el) || nb > 1024)
        return 0;
    uint32_t cnt[1024], worst = 0, nd = 0, msk = nb - 1;
    memset(cnt, 0, nb * sizeof cnt[0]);
    for (uint32_t el = 0; el < (ds2 ? 2u : 1u); el++)
        for (uint32_t j = 0; j < m; j++) {
            uint64_t d = (uint64_t)((int64_t)j * t + (el ? dd : 0));
            for (uint32_t e = 0; e < dw_el; e++, nd++) {
                uint32_t c = ++cnt[(uint32_t)(d + e) & msk];
                if (c > worst)
                    worst = c;
            }
        }
    uint32_t uniq_min = div_up(nd, nb);
    return worst > uniq_min ? worst : uniq_min;
}

/* Bank-conflict cycles of an LDS access: rp_lds_conflict_cycles_exact's
 * count, in closed form for the usual strided accesses (unit stride,
 * broadcast, any dword stride of one-dword elements, read2/write2 of one
 * dword whose offsets differ by a multiple of the bank count) and by that
 * function otherwise. tests/replay/730-components.c compares the two. */
uint32_t rp_lds_conflict_cycles(const trc_mem_op *op, const rp_access *a, uint32_t banks)
{
    uint32_t esz = a->ds2 ? a->ds2_esz : op->bytes_per_lane;
    uint32_t dw_el = esz ? (esz + 3) / 4 : 1;
    if (!a->strided || (a->stride & 3) || dw_el > 4 || banks == 0 || banks > 1024 || (banks & (banks - 1)) ||
        (a->ds2 && (a->ds2_delta & 3)))
        return rp_lds_conflict_cycles_exact(op, a, banks);
    int64_t t = (int64_t)a->stride / 4, dd = a->ds2 ? a->ds2_delta / 4 : 0;
    uint32_t total = 0;
    for (uint32_t half = 0; half < 2; half++) {
        uint32_t m = trc_popcount64((op->exec >> (32 * half)) & 0xffffffffull);
        if (!m)
            continue;
        uint32_t c = lds_half_strided(m, t, dw_el, a->ds2, dd, banks);
        if (!c)
            return rp_lds_conflict_cycles_exact(op, a, banks);
        total += c;
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

/* A hashed load (trace 2.2, op->load_hash): room in a->hbuf for the n
 * active lanes' bytes the model will return (perform.c gathers them, the
 * hash is checked when the access completes). false: out of memory (the run
 * fails). */
static bool acc_hash_setup(rp_cu *cu, rp_access *a, const trc_mem_op *op, uint32_t n)
{
    uint64_t need = (uint64_t)n * op->bytes_per_lane;
    if (need > a->hcap) {
        uint8_t *p = realloc(a->hbuf, need);
        if (!p) {
            rp_ctx_fail(cu->x, "%s: out of memory for a hashed load", cu->name);
            return false;
        }
        a->hbuf = p;
        a->hcap = (uint32_t)need;
    }
    memset(a->hbuf, 0, need);
    a->hashed = 1;
    return true;
}

/* An LDS access (DS, or FLAT to LDS): the CU's LDS unit, bank conflicts,
 * performed and checked against the workgroup's functional LDS at issue;
 * completes after lds.latency in issue order (lds_done). */
static bool issue_lds(rp_wave *w, const gcn_insn *in, const trc_mem_op *op, rp_access *a, uint32_t n, rp_time now,
                      rp_time *t_next, rp_engine *e)
{
    rp_cu *cu = w->cu;
    const rp_ctx *x = cu->x;
    const rp_config *cfg = x->cfg;
    rp_time cyc = x->clk.period_ps;
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
    uint32_t c = rp_lds_conflict_cycles(op, a, cfg->lds_banks);
    cu->st_lds_conflict_cycles += c;
    rp_time start = cu->lds_busy > now ? cu->lds_busy : now;
    cu->lds_busy = start + c * cyc;
    a->done = cu->lds_busy + rp_lat_ps(cfg->lds_latency, x->clk);
    RP_HOOK_FIRE(x->hooks, RP_HOOK_ACCESS_ISSUE, start, cu->gpu, cu->id, a, NULL, x->owner);
    /* an await's poll is performed without values too: a trace recorded
     * without LDS values (2.3) lets it end as recorded (perform.c) */
    if (lds_checked_op(oi) && (op->load_data || op->store_data || a->hashed || a->poll))
        x->perform(x->owner, a, n >= 64 ? ~0ull : (1ull << n) - 1);
    else
        rp_ctx_chk(x)->lds_unchecked++;
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

/* The lb-byte lines a VMEM/SMEM access touches (at most 128), in first-touch
 * order, with per line the active-lane ordinals whose first byte is in it
 * (SMEM: lane 0 in its first line). Returns the number of lines. */
static uint32_t coalesce_lines(rp_wave *w, const rp_access *a, const trc_mem_op *op, uint32_t n, uint32_t lb,
                               uint64_t *line, uint64_t *mask)
{
    uint64_t lmask = ~(uint64_t)(lb - 1), last;
    uint32_t nl = 0;
    uint32_t bytes = op->bytes_per_lane ? op->bytes_per_lane : 4;
    if (op->flags & TRC_MO_SMEM) {
        uint64_t a0 = a->base & lmask, a1 = (a->base + bytes - 1) & lmask;
        line[nl] = a0, mask[nl++] = 1;
        for (uint64_t x = a0 + lb; x <= a1 && nl < 128; x += lb)
            line[nl] = x, mask[nl++] = 0;
    } else if (a->strided && n && (int64_t)a->stride >= 0 && a->stride <= lb && bytes <= lb &&
               (last = a->base + (uint64_t)(n - 1) * a->stride + bytes - 1) >= a->base &&
               ((last & lmask) - (a->base & lmask)) / lb < 128) {
        /* ascending lanes no more than a line apart (last: the last lane's
         * last byte, not wrapped around), elements of at most a line: every
         * line from the first lane's to the last lane's end, in ascending
         * order (what the search below finds, in closed form) */
        uint64_t l0 = a->base & lmask, end = last & lmask;
        unsigned sh = (unsigned)__builtin_ctz(lb);
        for (uint64_t x = l0; x <= end; x += lb)
            line[nl] = x, mask[nl++] = 0;
        for (uint32_t k = 0; k < n; k++)
            mask[(a->base + (uint64_t)k * a->stride - l0) >> sh] |= 1ull << k;
    } else {
        /* Lines in order of first appearance. Lanes are usually sequential,
         * so the newest line is tried first; beyond a few lines (a gather)
         * a small hash table of line -> index + 1 replaces the backward
         * search (same lines, same order, O(lanes) instead of O(lanes x lines)). */
        uint8_t hix[256];
        bool hashed = false;
        for (uint32_t k = 0; k < n; k++) {
            uint64_t ak = rp_acc_addr(a, k);
            uint64_t l0 = ak & lmask, l1 = (ak + bytes - 1) & lmask;
            for (uint64_t x = l0; x <= l1; x += lb) {
                uint32_t j = UINT32_MAX;
                if (nl && line[nl - 1] == x) {
                    j = nl - 1;
                } else if (hashed) {
                    uint32_t h = (uint32_t)((x / lb) * 0x9e3779b97f4a7c15ull >> 56);
                    for (; hix[h]; h = (h + 1) & 255)
                        if (line[hix[h] - 1] == x) {
                            j = hix[h] - 1u;
                            break;
                        }
                } else {
                    for (j = nl; j-- > 0;)
                        if (line[j] == x)
                            break;
                }
                if (j == UINT32_MAX) {
                    if (nl == 128) {
                        rp_walk_error(w, "more than 128 cache lines in one access");
                        break;
                    }
                    j = nl++;
                    line[j] = x;
                    mask[j] = 0;
                    if (!hashed && nl > 8) { /* a gather: index what there is */
                        memset(hix, 0, sizeof hix);
                        hashed = true;
                        for (uint32_t i = 0; i < nl; i++) {
                            uint32_t h = (uint32_t)((line[i] / lb) * 0x9e3779b97f4a7c15ull >> 56);
                            while (hix[h]) h = (h + 1) & 255;
                            hix[h] = (uint8_t)(i + 1);
                        }
                    } else if (hashed) {
                        uint32_t h = (uint32_t)((x / lb) * 0x9e3779b97f4a7c15ull >> 56);
                        while (hix[h]) h = (h + 1) & 255;
                        hix[h] = (uint8_t)(j + 1);
                    }
                }
                if (x == l0)
                    mask[j] |= 1ull << k;
            }
        }
    }
    return nl;
}

/* The operation and element width of an atomic access, from the op's row of
 * gcn3.def; an atomic the functional model cannot apply, or a record whose
 * compare-and-swap flag disagrees with the opcode, is a walk error and is
 * applied as no operation. */
static void atomic_setup(rp_wave *w, const gcn_insn *in, const trc_mem_op *op, rp_access *a)
{
    const gcn_op_info *oi = op_info(in);
    a->atomic_op = oi->aop;
    a->atomic_bytes = oi->elem_bytes == 8 ? 8 : 4;
    if (a->atomic_op == GCN_AT_UNKNOWN || a->atomic_op == GCN_AT_NONE) {
        rp_walk_error(w, "atomic opcode not understood by the functional model");
        a->atomic_op = GCN_AT_NONE;
    } else if ((a->atomic_op == GCN_AT_CMPSWAP) != !!(op->flags & TRC_MO_CMPSWAP)) {
        /* store_data holds 2 operands per lane only with TRC_MO_CMPSWAP (the
         * reader checked its length against the flags): never read past it */
        rp_walk_error(w, a->atomic_op == GCN_AT_CMPSWAP
                          ? "compare-and-swap record without its compare value (no cmpswap flag: "
                            "recorded by a gcn3-emu older than the fix of issue 20; record again)"
                          : "cmpswap flag on an atomic that is not a compare-and-swap");
        a->atomic_op = GCN_AT_NONE;
    }
}

/* Issue a memory instruction. Returns false on a trace inconsistency. */
static bool issue_mem(rp_wave *w, const gcn_insn *in, rp_time now, rp_time *t_next, rp_engine *e)
{
    rp_cu *cu = w->cu;
    const rp_ctx *x = cu->x;
    const rp_config *cfg = x->cfg;
    rp_time cyc = x->clk.period_ps;
    if (!gcn_walk_is_mem(in)) {
        *t_next = now + cyc; /* s_memtime, buffer_wbinvl1, ...: no recorded access */
        return true;
    }
    const trc_mem_op *op;
    int got = gcn_walk_mem(&w->walk, in, &op);
    if (got < 0) {
        rp_walk_error(w, NULL);
        return false;
    }
    if (got == 0) {
        *t_next = now + cyc; /* EXEC=0: nothing recorded for this instruction */
        return true;
    }
    uint32_t n = op->flags & TRC_MO_SMEM ? 1 : trc_popcount64(op->exec);
    if (n == 0) {
        *t_next = now + cyc;
        return true;
    }
    rp_access *a = acc_get(cu);
    if (!a)
        return false;
    a->w = w;
    a->in = in;
    rp_access_bind(a, op, n);
    if (op->load_data) {
        /* the recorded values the data check compares when the access
         * completes: the decoded workgroup's buffer, long out of the host's
         * caches by the time its wave gets here */
        const char *ld = (const char *)op->load_data;
        size_t len = (size_t)n * op->bytes_per_lane;
        for (size_t o = 0; o < len && o < 256; o += 64)
            __builtin_prefetch(ld + o);
    }
    /* The wave's next memory op, and its addresses: the reader lays a wave's
     * ops out in one array and their address arrays one after the other (one
     * address for a strided op: mgpu-replay's reader is compact), so the next
     * op's addresses start right after these (a guess that costs nothing when
     * wrong). Both are out of the host's caches, and issue_mem waited on them
     * one after the other. */
    if (w->walk.mem_i < w->walk.n_mem) {
        __builtin_prefetch(&w->walk.mem[w->walk.mem_i]);
        __builtin_prefetch(op->addr + ((op->flags & TRC_MO_SMEM) || op->addr_strided ? 1 : n)); /* compact reader */
    }
    a->poll = w->walk.aw_state == GCN_AW_NONE                                        ? 0
              : w->walk.aw_state == GCN_AW_EXIT || w->walk.aw_kind == TRC_AWAIT_RETRY ? 2
                                                                                      : 1;
    if (op->flags & TRC_MO_ATOMIC)
        atomic_setup(w, in, op, a);
    if (op->load_hash && !op->load_data && !a->poll && !acc_hash_setup(cu, a, op, n))
        return false;

    if (op->flags & TRC_MO_LDS)
        return issue_lds(w, in, op, a, n, now, t_next, e);

    uint8_t type = op->flags & TRC_MO_ATOMIC ? RP_MSG_ATOMIC : op->flags & TRC_MO_STORE ? RP_MSG_WRITE : RP_MSG_READ;
    /* Coalesce lane addresses into lines; mask bits are active-lane ordinals. */
    uint64_t line[128], mask[128];
    uint32_t nl = coalesce_lines(w, a, op, n, cfg->l1v_line, line, mask);
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
    RP_HOOK_FIRE(x->hooks, RP_HOOK_ACCESS_ISSUE, start, cu->gpu, cu->id, a, NULL, x->owner);
    for (uint32_t j = 0; j < nl; j++) {
        rp_msg *m = rp_msg_alloc(rp_ctx_pool(x));
        if (!m) {
            rp_ctx_fail(x, "%s: out of memory for messages", cu->name);
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
        rp_tlb *tlb = a->kind == RP_ACC_SMEM ? cu->stlb : cu->vtlb;
        if (tlb)
            rp_tlb_send(tlb, link, m, start + (rp_time)j * cyc);
        else
            rp_link_send(link, m, start + (rp_time)j * cyc);
    }
    *t_next = start + cyc;
    return true;
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

/* ds_gws_barrier: the grid barrier of a cooperative launch. HIP's grid sync
 * (ROCm 5.2 ockl __ockl_grid_sync for gfx803) has one wave of every
 * workgroup execute it with data0 = workgroups - 1, and the Global Wave Sync
 * unit releases them when all arrived (emu/exec gcn_launch.c run_coop): the
 * replay releases the waiting waves when one per recorded workgroup arrived,
 * after barrier_latency. The waves of a kernel spread over the partitions of
 * a unified multi-GPU topology arrive at the kernel's dispatcher instead, as
 * a message over the link a CU reports a workgroup's end on (across the
 * interconnect from another GPU); the dispatcher sends each a release over
 * the link it assigns workgroups on (rp_disp_gws_arrive), and the CU resumes
 * the wave barrier_latency after it arrives (cu_ctl). Returns false after
 * a failure (x->fail). */
int rp_gws_add(const rp_ctx *x, rp_kernel *k, rp_wave *w)
{
    if (k->gws_n == k->gws_cap) {
        uint32_t nc = k->gws_cap ? 2 * k->gws_cap : 64;
        rp_wave **nw = realloc(k->gws_wait, nc * sizeof *nw);
        if (!nw) {
            rp_ctx_fail(x, "out of memory for the grid barrier");
            return -1;
        }
        k->gws_wait = nw;
        k->gws_cap = nc;
    }
    k->gws_wait[k->gws_n++] = w;
    return k->gws_n >= k->n_wg;
}

static bool gws_arrive(rp_wave *w, rp_time t, rp_engine *e)
{
    const rp_ctx *x = w->cu->x;
    rp_kernel *k = w->wg->k;
    if ((k->gpu_count > 1 && x->n_parts > 1) || x->gpu_cut) {
        rp_msg *m = rp_msg_alloc(rp_ctx_pool(x));
        if (!m) {
            rp_ctx_fail(x, "%s: out of memory", w->cu->name);
            return false;
        }
        w->state = RP_W_GWS;
        m->type = RP_MSG_GWS_ARRIVE;
        m->ctx = w;
        rp_link_send(w->cu->done_link, m, t > e->now ? t : e->now);
        return true;
    }
    w->state = RP_W_GWS;
    int all = rp_gws_add(x, k, w);
    if (all <= 0)
        return all == 0;
    rp_time rt = t + rp_lat_ps(x->cfg->barrier_latency, x->clk);
    for (uint32_t i = 0; i < k->gws_n; i++) {
        k->gws_wait[i]->state = RP_W_RUN;
        rp_engine_schedule(e, &k->gws_wait[i]->ev, rt);
    }
    k->gws_n = 0;
    return true;
}

static void wave_run(rp_event *ev, rp_engine *e)
{
    rp_wave *w = ev->owner;
    rp_cu *cu = w->cu;
    const rp_ctx *x = cu->x;
    const rp_config *cfg = x->cfg;
    rp_time now = e->now, t = now, cyc = x->clk.period_ps;
    uint64_t fb = cfg->fetch_bytes;

    for (int budget = 0; budget < 1024; budget++) {
        if (__builtin_expect(w->smp_state != 0, 0) && w->walk.dyn >= w->smp_next) {
            /* sampled replay, wave level (sample.c): measure, or skip ahead and sleep */
            rp_time resume;
            int r = x->sample_wave(x->owner, w, e, t, &resume);
            if (r < 0) {
                rp_wave_abort(w, e);
                return;
            }
            if (r > 0) {
                rp_engine_schedule(e, ev, resume);
                return;
            }
        }
        /* the next instruction, EXEC applied (gcn/gcn_walk.h: the rules of the record) */
        const gcn_insn *in = gcn_walk_insn(&w->walk);
        if (!in) {
            rp_walk_error(w, NULL);
            rp_wave_abort(w, e);
            return;
        }
        if (!rp_front_end(w, in, t, e, fb))
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
                if (!cfg->fetch_ahead)
                    rp_fetch_waiting(w, now);
                return;
            }
        }
        /* The instruction executes now (at time t). Time in an await: from
         * the first instruction issued in it to the first one after it. */
        if ((w->walk.aw_state != GCN_AW_NONE) != (w->wait_since != 0)) {
            if (w->wait_since) {
                w->wait_ps += t + 1 - w->wait_since;
                w->wait_since = 0;
            } else
                w->wait_since = t + 1;
        }
        cu->st_instr++;
        RP_HOOK_FIRE(x->hooks, RP_HOOK_WAVE_ISSUE, t, cu->gpu, cu->id, w, in, x->owner);
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
                rp_wave_abort(w, e);
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
            rp_walk_error(w, NULL);
            rp_wave_abort(w, e);
            return;
        }
        if (fl & GCN_IF_ENDPGM) {
            w->state = RP_W_ENDING;
            if (w->vmcnt == 0 && w->lgkmcnt == 0)
                wave_finish(w, e);
            return;
        }
        if (__builtin_expect(in->op == GCN_OP_ds_gws_barrier, 0)) {
            if (!gws_arrive(w, t_next, e))
                rp_wave_abort(w, e);
            return;
        }
        if (fl & GCN_IF_BARRIER) {
            rp_wg *wg = w->wg;
            w->state = RP_W_BARRIER;
            if (++wg->n_bar == wg->n_live) {
                rp_time rt = t_next + rp_lat_ps(cfg->barrier_latency, x->clk);
                wg->n_bar = 0;
                for (uint32_t i = 0; i < wg->n_waves; i++)
                    if (wg->waves[i].state == RP_W_BARRIER) {
                        wg->waves[i].state = RP_W_RUN;
                        rp_engine_schedule(e, &wg->waves[i].ev, rt);
                    }
            } else if (!cfg->fetch_ahead) {
                rp_fetch_waiting(w, now);
            }
            return;
        }
        t = t_next;
    }
    rp_engine_schedule(e, ev, t > now ? t : now + cyc);
}

static void wg_start(rp_cu *cu, rp_wg *wg, rp_engine *e)
{
    const rp_ctx *x = cu->x;
    rp_kernel *k = wg->k;
    char err[256];
    if (cu->last_kernel != k->launch.kernel_id) {
        /* New kernel on this CU: invalidate the L1V (GCN invalidates L1s at
         * kernel start); ordered before our next requests on the same link. */
        cu->last_kernel = k->launch.kernel_id;
        rp_msg *m = rp_msg_alloc(rp_ctx_pool(x));
        if (m) {
            m->type = RP_MSG_INVAL;
            rp_link_send(&cu->l1v_link, m, e->now);
        }
    }
    wg->tw = rp_wgload_take(x->wgload, x->rd, k->launch.kernel_id, wg->index, err, sizeof err);
    if (!wg->tw) {
        rp_ctx_fail(x, "%s: %s", cu->name, err);
        return;
    }
    wg->cu = cu;
    wg->n_waves = wg->tw->n_waves;
    if (k->launch.waves_per_wg && wg->n_waves != k->launch.waves_per_wg) {
        /* the dispatcher reserved the launch's wave slots: a record that
         * disagrees is a damaged or hostile trace, not a workload */
        char kn[128];
        rp_ctx_fail(x, "trace: kernel %u (%s) workgroup %u records %u waves, its launch has %u per workgroup",
                    k->launch.kernel_id, rp_printable(kn, sizeof kn, k->launch.kernel_name), wg->index, wg->n_waves,
                    k->launch.waves_per_wg);
        return;
    }
    wg->n_live = wg->n_waves;
    wg->waves = calloc(wg->n_waves ? wg->n_waves : 1, sizeof *wg->waves);
    wg->lds_size = k->launch.group_segment_size;
    wg->lds = wg->lds_size ? calloc(1, wg->lds_size) : NULL;
    if (!wg->waves || (wg->lds_size && !wg->lds)) {
        rp_ctx_fail(x, "%s: out of memory", cu->name);
        return;
    }
    uint64_t code_base = rp_ctx_code_base(x, k->launch.code_object_id);
    cu->st_wgs++;
    cu->live_wgs++;
    wg->start = e->now;
    RP_HOOK_FIRE(x->hooks, RP_HOOK_WG_START, e->now, cu->gpu, cu->id, wg, NULL, x->owner);
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
        /* awaits (trace 1.2): the wave polls in the model until its memory changes */
        gcn_walk_awaits_on(&w->walk, x->cfg->await_max_polls);
        w->simd = i < 64 ? wg->simd_of[i] % x->cfg->simds : 0;
        w->code_base = code_base;
        w->ib_base = k->prog->insn[k->entry_idx].pc & ~(uint64_t)(x->cfg->fetch_bytes - 1);
        w->ib_n = 0;
        w->wait_vm = w->wait_lgkm = 0xffff;
        w->smp_state = x->cfg->sample_enable && x->cfg->sample_waves; /* sample.c decides at its first instruction */
        w->state = RP_W_RUN;
        rp_engine_schedule(e, &w->ev, e->now);
    }
}

static void wg_finish(rp_wg *wg, rp_engine *e)
{
    rp_cu *cu = wg->cu;
    const rp_ctx *x = cu->x;
    RP_HOOK_FIRE(x->hooks, RP_HOOK_WG_END, e->now, cu->gpu, cu->id, wg, NULL, x->owner);
    trc_wg_free(wg->tw);
    wg->tw = NULL;
    free(wg->waves);
    wg->waves = NULL;
    free(wg->lds);
    wg->lds = NULL;
    cu->live_wgs--;
    rp_msg *m = rp_msg_alloc(rp_ctx_pool(x));
    if (!m) {
        rp_ctx_fail(x, "%s: out of memory", cu->name);
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
        if (m->type == RP_MSG_GWS_RELEASE) { /* the grid barrier opened (gws_arrive) */
            rp_wave *w = m->ctx;
            rp_msg_free(rp_ctx_pool(cu->x), m);
            w->state = RP_W_RUN;
            rp_engine_schedule(e, &w->ev, e->now + rp_lat_ps(cu->x->cfg->barrier_latency, cu->x->clk));
            continue;
        }
        rp_wg *wg = m->ctx;
        rp_msg_free(rp_ctx_pool(cu->x), m);
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
    const rp_ctx *x = cu->x = &s->ctx;
    cu->gpu = gpu;
    cu->id = id;
    cu->sa = id / x->cfg->cus_per_sa;
    cu->last_kernel = UINT32_MAX;
    snprintf(cu->name, sizeof cu->name, "gpu[%u].cu[%u]", gpu, id);
    cu->resp.owner = cu->ctl.owner = cu;
    cu->resp.notify = cu_resp;
    cu->resp.arrive = cu_resp_arrive;
    cu->ctl.notify = cu_ctl;
    rp_time dl = rp_lat_ps(x->cfg->dispatch_latency, x->clk);
    cu->eng = &s->gpus[gpu].sa_part[cu->sa < s->cfg.shader_arrays ? cu->sa : 0]->eng;
    rp_link_init(&cu->ctl_link, cu->eng, &cu->ctl, dl, 0, 0);
    rp_link_init(&cu->resp_link, cu->eng, &cu->resp, 0, 0, 0);
    rp_link_unordered(&cu->resp_link); /* the L1V's and L1S's answers are independent */
    rp_event_init(&cu->lds_ev, lds_done, cu, RP_PRIO_COMPONENT);
    rp_event_init(&cu->vm_ev, vm_done, cu, RP_PRIO_DELIVER);
    rp_event_init(&cu->fetch_ev, rp_fetch_done, cu, RP_PRIO_COMPONENT);
    rp_engine_add_component(cu->eng, &cu->comp, cu->name, cu_dump);
}

