/*
 * disp.c - a GPU's dispatcher (command processor + ACE): takes the kernels
 * the host timeline launches on its GPU in order, hands their workgroups to
 * CUs as wavefront slots, VGPRs, SGPRs and LDS allow (round robin over the
 * CUs that fit), and at a kernel's end flushes the L2 banks (write-back)
 * before the kernel counts as done. Kernels of different hardware queues
 * (streams, dispatcher.hw_queues) run concurrently (may_start). With
 * dispatcher.policy = fifo the next kernel starts as soon as the one before
 * has handed out its last workgroup, and takes the CUs' room that is left;
 * with interleave it starts at once and the kernels handing out workgroups
 * take turns, one workgroup each, round robin.
 */
#include "rp_sim_internal.h"
#include "gcn/gcn_occupancy.h"

#include <stdlib.h>
#include <string.h>

/* Per-CU resources a workgroup holds, rounded to the GCN3 allocation granules
 * (gcn/gcn_occupancy.h, shared with the emulator's residency). */
static uint32_t res_vgprs(const trc_launch *l) { return gcn_vgpr_alloc(l->vgpr_count); }
static uint32_t res_sgprs(const trc_launch *l) { return gcn_sgpr_alloc(l->sgpr_count); }
static uint64_t res_lds(const trc_launch *l) { return gcn_lds_alloc(l->group_segment_size); }

static bool wg_fits(rp_disp *d, uint32_t c, const rp_kernel *k, uint8_t *simd_of)
{
    const rp_config *cfg = d->x->cfg;
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

/* Whether k, the head of the queue, may start now: the kernels before it
 * have handed out all their workgroups (one kernel is dispatched at a time,
 * in launch order) and none still running is on its hardware queue (a queue
 * runs its kernels in order; ROCm maps stream k > 0 to queue (k - 1) mod
 * GPU_MAX_HW_QUEUES). The null stream synchronises with every blocking
 * stream. */
static bool may_start(const rp_disp *d, const rp_kernel *k)
{
    uint32_t nq = d->x->cfg->dispatch_hw_queues;
    for (const rp_kernel *a = d->active; a; a = a->next) {
        if ((a->next_wg < a->n_wg && !d->interleave) || nq <= 1 || rp_kernels_ordered(a, k))
            return false;
        if (!a->stream || !k->stream)
            continue; /* the null stream beside a non-blocking stream */
        if ((a->stream - 1) % nq == (k->stream - 1) % nq)
            return false;
    }
    return true;
}

static void disp_start_kernel(rp_disp *d, rp_engine *e)
{
    const rp_ctx *x = d->x;
    rp_kernel *k = d->queue;
    d->queue = k->next;
    if (!d->queue)
        d->queue_tail = NULL;
    k->next = NULL;
    rp_kernel **pp = &d->active;
    while (*pp)
        pp = &(*pp)->next;
    *pp = k;
    k->next_wg = k->wgs_done = 0;
    k->flushing = 0;
    k->start = e->now;
    d->st_kernels++;
    x->kernel_note(x->owner, k, 0); /* per-kernel counters at start */
    RP_HOOK_FIRE(x->hooks, RP_HOOK_KERNEL_START, e->now, d->gpu, UINT32_MAX, k, NULL, x->owner);
    if (x->sample_kernel_start(x->owner, k)) /* sampled replay: a launch like earlier ones may be fast-forwarded */
        return;
    /* A workgroup that can never fit is an error, not a hang. */
    const rp_config *cfg = x->cfg;
    const trc_launch *l = &k->launch;
    uint64_t waves = l->waves_per_wg ? l->waves_per_wg : 1;
    if (res_vgprs(l) > cfg->vgprs || res_sgprs(l) > cfg->sgprs || res_lds(l) > cfg->lds_size ||
        waves > (uint64_t)cfg->simds * cfg->wave_slots) {
        char kn[128];
        rp_ctx_fail(x, "kernel %u (%s): a workgroup (%u waves, %u VGPRs, %u SGPRs, %u B LDS) never fits a CU",
                    l->kernel_id, rp_printable(kn, sizeof kn, l->kernel_name), l->waves_per_wg, l->vgpr_count, l->sgpr_count,
                    l->group_segment_size);
    }
}

static void disp_kernel_end(rp_disp *d, rp_kernel *k, rp_engine *e)
{
    const rp_ctx *x = d->x;
    k->end = e->now;
    k->done = true;
    x->sample_kernel_end(x->owner, k);
    x->kernel_note(x->owner, k, 1); /* counters at end (deltas); the host learns of it at the next synchronisation point */
    RP_HOOK_FIRE(x->hooks, RP_HOOK_KERNEL_END, e->now, d->gpu, UINT32_MAX, k, NULL, x->owner);
    rp_kernel **pp = &d->active;
    while (*pp && *pp != k)
        pp = &(*pp)->next;
    if (*pp)
        *pp = k->next;
    k->next = NULL;
}

/* Kernel end: write back the L2s of the GPUs k used (release). */
static void disp_flush(rp_disp *d, rp_kernel *k, rp_engine *e)
{
    const rp_ctx *x = d->x;
    k->flushing = 1;
    k->flush_acks_pending = 0;
    for (uint32_t g = k->gpu_first; g < k->gpu_first + k->gpu_count; g++) {
        for (uint32_t b = 0; b < x->cfg->l2_banks; b++) {
            rp_msg *m = rp_msg_alloc(rp_ctx_pool(x));
            if (!m) {
                rp_ctx_fail(x, "dispatcher: out of memory");
                return;
            }
            m->type = RP_MSG_FLUSH;
            m->ctx = k;
            bool remote = g != d->gpu && d->gpu_flush; /* U-MGPU: over the interconnect */
            m->reply_link = remote ? &d->gpu_in[g] : &d->in_link;
            m->reply_port = &d->in;
            m->dst = d->l2_top[(size_t)g * x->cfg->l2_banks + b];
            rp_link_send(remote ? &d->gpu_flush[g] : d->l2_link[(size_t)g * x->cfg->l2_banks + b], m, e->now);
            k->flush_acks_pending++;
        }
    }
}

static void disp_run(rp_event *ev, rp_engine *e)
{
    rp_disp *d = ev->owner;
    const rp_ctx *x = d->x;
    if (*x->failed)
        return;
    while (d->queue && may_start(d, d->queue)) {
        disp_start_kernel(d, e);
        if (*x->failed)
            return;
    }
    /* Kernels whose workgroups are all done flush; the others hand out
     * workgroups (fifo: at most one, the last started). */
    uint32_t nk = 0;
    for (rp_kernel *a = d->active, *an; a; a = an) {
        an = a->next;
        if (a->next_wg < a->n_wg)
            nk++;
        else if (!a->flushing && a->wgs_done == a->n_wg) {
            if (a->smp.switched && !a->smp.held) {
                /* sampled: the fast-forwarded workgroups' predicted time (sample.c),
                 * the last stretch applied now */
                if (x->sample_hold && x->sample_hold(x->owner, a))
                    return;
                a->smp.held = true;
                a->smp.hold_until = e->now + a->smp.skip_ps;
            }
            if (a->smp.held && e->now < a->smp.hold_until) {
                /* wake at the end, or before the watchdog would take the wait for a hang */
                rp_time wd = rp_lat_ps(x->cfg->watchdog, x->clk) / 2, t = a->smp.hold_until;
                if (wd && t - e->now > wd)
                    t = e->now + wd;
                e->progress++;
                rp_engine_wake(e, ev, t);
                continue;
            }
            if (a->smp.whole) {
                /* fast-forwarded whole: the predicted time of its launches
                 * alike includes their end-of-kernel write-back, so this one's
                 * takes no time (rp_mem_flush_l2 writes back functionally) */
                for (uint32_t g = a->gpu_first; g < a->gpu_first + a->gpu_count; g++)
                    x->flush_l2(x->owner, g);
                disp_kernel_end(d, a, e);
                rp_engine_wake(e, ev, e->now); /* the next kernel may start */
                continue;
            }
            disp_flush(d, a, e);
            if (*x->failed)
                return;
        }
    }
    if (!nk)
        return;
    if (d->busy_until > e->now) {
        rp_engine_schedule(e, ev, d->busy_until);
        return;
    }
    uint8_t simd_of[64];
    for (uint32_t t = 0; t < nk; t++) {
        /* the kernel whose turn it is, then the next ones if it does not fit */
        uint32_t want = (d->kturn + t) % nk, j = 0;
        rp_kernel *k = NULL;
        for (rp_kernel *a = d->active; a && !k; a = a->next)
            if (a->next_wg < a->n_wg && j++ == want)
                k = a;
        for (uint32_t i = 0; i < d->n_cus; i++) {
            uint32_t c = (d->rr + i) % d->n_cus;
            if (!wg_fits(d, c, k, simd_of))
                continue;
            rp_wg *wg = calloc(1, sizeof *wg);
            rp_msg *m = rp_msg_alloc(rp_ctx_pool(x));
            if (!wg || !m) {
                rp_ctx_fail(x, "dispatcher: out of memory");
                return;
            }
            wg->live_next = d->live;
            if (d->live)
                d->live->live_prev = wg;
            d->live = wg;
            wg->k = k;
            wg->index = k->next_wg++;
            wg->cu = d->cus[c];
            memcpy(wg->simd_of, simd_of, sizeof simd_of);
            m->type = RP_MSG_WG_ASSIGN;
            m->ctx = wg;
            rp_link_send(&d->cus[c]->ctl_link, m, e->now);
            d->st_wgs_dispatched++;
            d->rr = (c + 1) % d->n_cus;
            d->kturn = want + 1;
            /* occupancy: wg_cycles per workgroup, or wave_cycles per
             * wavefront when that is more (R9 Nano empty-kernel probe) */
            uint64_t waves = k->launch.waves_per_wg ? k->launch.waves_per_wg : 1;
            uint64_t occ = waves * x->cfg->dispatch_wave_cycles;
            if (occ < x->cfg->dispatch_cycles)
                occ = x->cfg->dispatch_cycles;
            d->busy_until = e->now + occ * x->clk.period_ps;
            e->progress++;
            /* more to hand out, or the next kernel may start once this one's
             * last workgroup is out */
            bool more = d->queue && may_start(d, d->queue);
            for (rp_kernel *a = d->active; a && !more; a = a->next)
                more = a->next_wg < a->n_wg;
            if (more)
                rp_engine_schedule(e, ev, d->busy_until);
            return;
        }
    }
    /* no CU has room: a WG_DONE wakes us */
}

static void disp_in(rp_port *p, rp_engine *e)
{
    rp_disp *d = p->owner;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        if (m->type == RP_MSG_WG_DONE) {
            rp_wg *wg = m->ctx;
            wg_release(d, wg);
            if (wg->live_prev)
                wg->live_prev->live_next = wg->live_next;
            else
                d->live = wg->live_next;
            if (wg->live_next)
                wg->live_next->live_prev = wg->live_prev;
            rp_kernel *k = wg->k;
            k->wgs_done++;
            if (d->x->sample_wg_end)
                d->x->sample_wg_end(d->x->owner, k, wg);
            free(wg);
            if (d->x->sample_wg_done(d->x->owner, k, e->now)) {
                rp_msg_free(rp_ctx_pool(d->x), m);
                return;
            }
        } else if (m->type == RP_MSG_FF_APPLY) {
            /* a skipped wave's stores (sample.c "Partitions"): the memory side is this partition */
            void *batch = m->ctx;
            m->ctx = NULL;
            if (d->x->sample_apply(d->x->owner, batch)) {
                rp_msg_free(rp_ctx_pool(d->x), m);
                return;
            }
        } else if (m->type == RP_MSG_GWS_ARRIVE) {
            /* a wave at the grid barrier of a kernel over several partitions
             * (cu.c gws_arrive): when one per workgroup arrived, release all */
            rp_wave *w = m->ctx;
            rp_kernel *k = w->wg->k;
            int all = rp_gws_add(d->x, k, w);
            if (all < 0) {
                rp_msg_free(rp_ctx_pool(d->x), m);
                return;
            }
            if (all) {
                for (uint32_t i = 0; i < k->gws_n; i++) {
                    rp_msg *r = rp_msg_alloc(rp_ctx_pool(d->x));
                    if (!r) {
                        rp_msg_free(rp_ctx_pool(d->x), m);
                        rp_ctx_fail(d->x, "dispatcher: out of memory for the grid barrier");
                        return;
                    }
                    r->type = RP_MSG_GWS_RELEASE;
                    r->ctx = k->gws_wait[i];
                    rp_link_send(&k->gws_wait[i]->cu->ctl_link, r, e->now);
                }
                k->gws_n = 0;
            }
        } else if (m->type == RP_MSG_FLUSH_ACK) {
            rp_kernel *k = m->ctx;
            if (k && --k->flush_acks_pending == 0 && k->flushing) {
                rp_msg_free(rp_ctx_pool(d->x), m);
                disp_kernel_end(d, k, e);
                rp_engine_wake(e, &d->ev, e->now);
                continue;
            }
        }
        rp_msg_free(rp_ctx_pool(d->x), m);
    }
    rp_engine_wake(e, &d->ev, e->now);
}

static void disp_dump(rp_component *c, FILE *f)
{
    rp_disp *d = (rp_disp *)c;
    for (const rp_kernel *k = d->active; k; k = k->next)
        fprintf(f, "  %s: kernel %u (stream %u): %u/%u workgroups dispatched, %u done, flushing=%u (%u acks pending)\n",
                c->name, k->launch.kernel_id, k->stream, k->next_wg, k->n_wg, k->wgs_done, k->flushing,
                k->flush_acks_pending);
    if (!d->active && d->queue)
        fprintf(f, "  %s: idle with queued kernels\n", c->name);
}

void rp_disp_init(rp_disp *d, rp_sim *s, uint32_t gpu)
{
    char name[48];
    memset(d, 0, sizeof *d);
    d->x = &s->ctx;
    d->gpu = gpu;
    d->interleave = !strcmp(s->cfg.dispatch_policy, "interleave");
    rp_event_init(&d->ev, disp_run, d, RP_PRIO_COMPONENT);
    d->in.owner = d;
    d->in.notify = disp_in;
    d->eng = &s->gpus[gpu].part->eng;
    rp_link_init(&d->in_link, d->eng, &d->in, rp_lat_ps(s->cfg.dispatch_latency, s->clk), 0, 0);
    snprintf(name, sizeof name, "gpu[%u].dispatcher", gpu);
    rp_engine_add_component(d->eng, &d->comp, name, disp_dump);
}

void rp_disp_kick(rp_disp *d) { rp_engine_wake(d->eng, &d->ev, d->eng->now); }
