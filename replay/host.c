/*
 * host.c - the host timeline of a replay: walks the trace's host events in
 * order (allocations, launches, copies, memsets, synchronisations), queues
 * launches on the dispatchers, and applies host memory events when the GPUs
 * they touch are idle (their functional effect: rp_host_apply, perform.c).
 */
#include "rp_sim.h"

#include <stdlib.h>
#include <string.h>

#include "emu/loader/gcn_loader.h"

/* ---- host timeline ------------------------------------------------------------------- */

static uint32_t gpu_of_device(rp_sim *s, uint32_t device)
{
    return s->cfg.topo_kind == RP_TOPO_DISCRETE ? device % s->n_gpus : 0;
}

static bool gpu_idle(rp_sim *s, uint32_t g)
{
    rp_disp *d = &s->gpus[g].disp;
    return !d->cur && !d->queue;
}

static const gcn_program *program_of(rp_sim *s, uint32_t co_id)
{
    if (co_id >= s->n_progs) {
        rp_sim_fail(s, "launch names code object %u, the trace has %zu", co_id, s->n_progs);
        return NULL;
    }
    if (s->progs[co_id])
        return s->progs[co_id];
    size_t len = 0;
    const uint8_t *elf = trc_reader_code_object(s->rd, co_id, &len);
    gcn_code_object *co = NULL;
    char err[256];
    if (!elf || gcn_co_parse(elf, len, &co, err, sizeof err) != GCN_LD_OK) {
        rp_sim_fail(s, "code object %u of the trace: %s", co_id, elf ? err : "missing");
        return NULL;
    }
    s->progs[co_id] = gcn_program_decode(co->text, co->text_size, co->text_vaddr);
    gcn_co_free(co);
    if (!s->progs[co_id])
        rp_sim_fail(s, "code object %u: out of memory decoding .text", co_id);
    return s->progs[co_id];
}

static int add_alloc(rp_sim *s, uint64_t addr, uint64_t size, uint32_t gpu)
{
    if (s->n_allocs == s->cap_allocs) {
        size_t nc = s->cap_allocs ? 2 * s->cap_allocs : 64;
        rp_alloc *a = realloc(s->allocs, nc * sizeof *a);
        if (!a)
            return -1;
        s->allocs = a;
        s->cap_allocs = nc;
    }
    /* keep sorted by address; drop entries the new one overlaps (reuse after free) */
    size_t i = s->n_allocs;
    while (i > 0 && s->allocs[i - 1].addr > addr)
        i--;
    memmove(&s->allocs[i + 1], &s->allocs[i], (s->n_allocs - i) * sizeof *s->allocs);
    s->allocs[i] = (rp_alloc){addr, size ? size : 1, gpu};
    s->n_allocs++;
    return 0;
}

static int enqueue_launch(rp_sim *s, const trc_event *ev)
{
    rp_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return -1;
    k->launch = ev->launch;
    k->launch.kernarg = NULL; /* not kept: lives in the reader, not needed after INIT */
    k->n_wg = ev->n_wg;
    k->n_instr_traced = ev->n_instr;
    k->prog = program_of(s, ev->launch.code_object_id);
    if (!k->prog) {
        free(k);
        return -1;
    }
    k->entry_idx = UINT32_MAX;
    const gcn_insn *in = gcn_program_at(k->prog, ev->launch.entry_vaddr);
    if (!in) {
        rp_sim_fail(s, "kernel %u (%s): entry 0x%llx is not an instruction of code object %u", ev->launch.kernel_id,
                    ev->launch.kernel_name, (unsigned long long)ev->launch.entry_vaddr, ev->launch.code_object_id);
        free(k);
        return -1;
    }
    k->entry_idx = (uint32_t)(in - k->prog->insn);
    k->gpu = gpu_of_device(s, ev->launch.device);
    k->gpu_first = k->gpu;
    k->gpu_count = 1;
    if (s->cfg.topo_kind == RP_TOPO_UNIFIED) {
        k->gpu_first = 0;
        k->gpu_count = s->n_gpus;
    }
    k->snap0 = calloc(s->stats.n ? s->stats.n : 1, sizeof *k->snap0);
    if (s->n_kernels == s->cap_kernels) {
        size_t nc = s->cap_kernels ? 2 * s->cap_kernels : 16;
        rp_kernel **v = realloc(s->kernels, nc * sizeof *v);
        if (!v) {
            free(k);
            return -1;
        }
        s->kernels = v;
        s->cap_kernels = nc;
    }
    s->kernels[s->n_kernels++] = k;
    rp_disp *d = &s->gpus[k->gpu].disp;
    if (d->queue_tail)
        d->queue_tail->next = k;
    else
        d->queue = k;
    d->queue_tail = k;
    rp_disp_kick(d);
    return 0;
}

void rp_host_run(rp_event *hev, rp_engine *e)
{
    rp_sim *s = hev->owner;
    while (s->next_event < s->n_events && !s->failed) {
        const trc_event *ev = trc_reader_event(s->rd, s->next_event);
        uint32_t g = gpu_of_device(s, ev->device);
        int r = 0;
        switch (ev->kind) {
        case TRC_EV_ALLOC:
            r = add_alloc(s, ev->addr, ev->size, g);
            break;
        case TRC_EV_FREE:
            break;
        case TRC_EV_LAUNCH:
            if (enqueue_launch(s, ev) && !s->failed)
                rp_sim_fail(s, "out of memory queueing a launch");
            break;
        case TRC_EV_COPY:
        case TRC_EV_MEMSET:
        case TRC_EV_SYNC: {
            /* Blocking: wait for the GPU(s) involved. Runtime-side
             * initialisation (a launch's kernarg segment, a code image) goes
             * to memory no running kernel uses and does not wait: otherwise
             * the kernarg write of a program's second launch on device 0
             * would hold back its launches on the other devices. */
            bool idle = gpu_idle(s, g);
            if (ev->kind == TRC_EV_COPY && ev->copy_kind == TRC_COPY_INIT)
                idle = true;
            if (ev->kind == TRC_EV_COPY && ev->copy_kind == TRC_COPY_D2D)
                idle = idle && gpu_idle(s, rp_gpu_of(s, ev->src, g)) && gpu_idle(s, rp_gpu_of(s, ev->addr, g));
            if (ev->kind == TRC_EV_COPY && ev->copy_kind == TRC_COPY_D2H)
                idle = idle && gpu_idle(s, rp_gpu_of(s, ev->src, g));
            if (s->cfg.topo_kind == RP_TOPO_UNIFIED && !(ev->kind == TRC_EV_COPY && ev->copy_kind == TRC_COPY_INIT))
                idle = gpu_idle(s, 0);
            if (!idle)
                return; /* rp_host_kernel_done wakes us */
            r = rp_host_apply(s, ev);
            break;
        }
        }
        if (r) {
            rp_sim_fail(s, "host event %zu: out of memory", s->next_event);
            return;
        }
        s->next_event++;
    }
    s->host_done = true;
    (void)e;
}

void rp_host_kernel_done(rp_sim *s, rp_kernel *k)
{
    (void)k;
    if (!s->host_done)
        rp_engine_wake(&s->eng, &s->host_ev, s->eng.now);
}

static bool sim_done(void *arg)
{
    rp_sim *s = arg;
    if (s->failed)
        return true;
    if (!s->host_done)
        return false;
    for (uint32_t g = 0; g < s->n_gpus; g++)
        if (!gpu_idle(s, g))
            return false;
    return true;
}

int rp_sim_run(rp_sim *s)
{
    rp_engine_schedule(&s->eng, &s->host_ev, 0);
    if (rp_engine_run(&s->eng, sim_done, s, stderr)) {
        if (!s->failed)
            rp_sim_fail(s, "%s", s->eng.err);
    }
    return s->failed ? -1 : 0;
}

/* ---- reporting -------------------------------------------------------------------------- */

