/*
 * host.c - the host timeline of a replay: walks the trace's host events in
 * order (allocations, launches, copies, memsets, synchronisations), queues
 * launches on the dispatchers after the launch overhead, and times host
 * memory events over the host links and the interconnect (net.c) when the
 * GPUs they touch are idle (their functional effect: rp_host_apply,
 * perform.c). See rp_host_run for the rules.
 */
#include "rp_sim_internal.h"

#include <stdlib.h>
#include <string.h>

#include "gcn/gcn_loader.h"

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
    const gcn_target *t = gcn_target_find(co->target);
    if (t != s->target) {
        rp_sim_fail(s, "code object %u of the trace is for %s, the trace for %s", co_id, co->target,
                    trc_reader_header(s->rd)->isa_target);
        gcn_co_free(co);
        return NULL;
    }
    s->progs[co_id] = gcn_program_decode(t, co->text, co->text_size, co->text_vaddr);
    gcn_co_free(co);
    if (!s->progs[co_id])
        rp_sim_fail(s, "code object %u: out of memory decoding .text", co_id);
    return s->progs[co_id];
}

/* [addr, addr + size) inside one allocation of the trace (overflow-safe: the
 * addresses come from a trace, which may be hostile). */
static bool in_alloc(const rp_sim *s, uint64_t addr, uint64_t size)
{
    return rp_alloc_holds(s->allocs, s->n_allocs, addr, size);
}

/* A host event that writes device memory must stay inside an allocation:
 * a damaged or hostile trace could otherwise make the functional memory
 * grow without bound. Fails the run with the event named. */
static bool host_write_ok(rp_sim *s, const trc_event *ev)
{
    bool writes = ev->kind == TRC_EV_MEMSET ||
                  (ev->kind == TRC_EV_COPY && ev->copy_kind != TRC_COPY_D2H);
    if (!writes || !ev->size || in_alloc(s, ev->addr, ev->size))
        return true;
    rp_sim_fail(s, "trace event %zu: a %s of %llu bytes at 0x%llx lies outside every allocation of the trace "
                "(damaged trace?)", s->next_event, ev->kind == TRC_EV_MEMSET ? "memset" : "copy",
                (unsigned long long)ev->size, (unsigned long long)ev->addr);
    return false;
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
    uint64_t grid = (uint64_t)ev->launch.grid[0] * ev->launch.grid[1] * ev->launch.grid[2];
    if (ev->n_wg < grid) {
        /* the emulator stopped during this kernel (a fault, a deadlock, an
         * interrupt): its committed workgroups are all there is */
        char kn[128];
        fprintf(stderr,
                "mgpu-replay: warning: kernel %u (%s): the trace holds %u of its %llu workgroups (the recording "
                "stopped during it: a fault, deadlock or interrupt); they are replayed alone\n",
                ev->launch.kernel_id, rp_printable(kn, sizeof kn, ev->launch.kernel_name), ev->n_wg,
                (unsigned long long)grid);
    }
    k->prog = program_of(s, ev->launch.code_object_id);
    if (!k->prog) {
        free(k);
        return -1;
    }
    k->entry_idx = UINT32_MAX;
    const gcn_insn *in = gcn_program_at(k->prog, ev->launch.entry_vaddr);
    if (!in) {
        char kn[128];
        rp_sim_fail(s, "kernel %u (%s): entry 0x%llx is not an instruction of code object %u", ev->launch.kernel_id,
                    rp_printable(kn, sizeof kn, ev->launch.kernel_name), (unsigned long long)ev->launch.entry_vaddr, ev->launch.code_object_id);
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

/* GPUs an event involves, as a bit mask: the device's GPU and the GPUs that
 * own the memory it touches; every GPU in the unified topology (one logical
 * device). */
static uint64_t involved(rp_sim *s, const trc_event *ev, uint32_t g)
{
    if (s->cfg.topo_kind == RP_TOPO_UNIFIED)
        return s->n_gpus >= 64 ? ~0ull : (1ull << s->n_gpus) - 1;
    uint64_t m = 1ull << g;
    if (ev->kind == TRC_EV_COPY && ev->copy_kind != TRC_COPY_H2D)
        m |= 1ull << rp_gpu_of(s, ev->src, g);
    if ((ev->kind == TRC_EV_COPY && ev->copy_kind != TRC_COPY_D2H) || ev->kind == TRC_EV_MEMSET)
        m |= 1ull << rp_gpu_of(s, ev->addr, g);
    return m;
}

/* Latest end of a copy/memset on the GPUs of mask. */
static rp_time busy_until(rp_sim *s, uint64_t mask)
{
    rp_time t = 0;
    for (uint32_t i = 0; i < s->n_gpus && i < 64; i++)
        if ((mask >> i & 1) && s->host.gpu_busy_until[i] > t)
            t = s->host.gpu_busy_until[i];
    return t;
}

static bool all_idle(rp_sim *s, uint64_t mask)
{
    for (uint32_t i = 0; i < s->n_gpus && i < 64; i++)
        if ((mask >> i & 1) && !gpu_idle(s, i))
            return false;
    return true;
}

/* Aggregate DRAM bandwidth of a GPU (all GPUs in the unified topology), B/s. */
static uint64_t mem_bw(rp_sim *s)
{
    uint64_t bw = rp_bw_Bps(s->cfg.dram_bandwidth, s->clk) * s->cfg.dram_channels;
    return s->cfg.topo_kind == RP_TOPO_UNIFIED ? bw * s->n_gpus : bw;
}

static rp_time mem_time(uint64_t bytes, uint64_t bw)
{
    return bw ? (rp_time)((bytes * 1000000000000ull + bw - 1) / bw) : 0;
}

/* A host copy of size bytes to (h2d) or from the memory of GPU gpu; in the
 * unified topology the 4 KB-interleaved range is spread over every GPU's
 * host link in equal shares. Returns the completion time. */
static rp_time host_copy(rp_sim *s, uint32_t gpu, bool h2d, uint64_t size, rp_time t0)
{
    if (s->cfg.topo_kind != RP_TOPO_UNIFIED || s->n_gpus == 1)
        return rp_net_host_copy(s->net, gpu, h2d, size, t0);
    rp_time done = t0;
    uint64_t per = size / s->n_gpus, rem = size % s->n_gpus;
    for (uint32_t i = 0; i < s->n_gpus; i++) {
        rp_time d = rp_net_host_copy(s->net, i, h2d, per + (i == 0 ? rem : 0), t0);
        if (d > done)
            done = d;
    }
    return done;
}

/* Start the transfer of a COPY (not INIT) or MEMSET at `now`: returns its
 * completion time. Timing: host.copy_overhead, then H2D/D2H over the host
 * link (size / host.link_bandwidth + host.link_latency, FIFO per direction),
 * D2D between GPUs over the interconnect path (rp_net_bulk), D2D within a GPU
 * and memsets at the GPU's DRAM bandwidth (a copy reads and writes: 2 x size). */
static rp_time start_transfer(rp_sim *s, const trc_event *ev, uint32_t g, rp_time now)
{
    rp_time t0 = now + rp_lat_ps(s->cfg.host_copy_overhead, s->clk);
    if (ev->kind == TRC_EV_MEMSET) {
        s->host.st_memsets++;
        return t0 + mem_time(ev->size, mem_bw(s));
    }
    s->host.st_copies++;
    s->host.st_copy_bytes += ev->size;
    switch (ev->copy_kind) {
    case TRC_COPY_H2D:
        return host_copy(s, rp_gpu_of(s, ev->addr, g), true, ev->size, t0);
    case TRC_COPY_D2H:
        return host_copy(s, rp_gpu_of(s, ev->src, g), false, ev->size, t0);
    default: {
        uint32_t a = rp_gpu_of(s, ev->src, g), b = rp_gpu_of(s, ev->addr, g);
        if (s->cfg.topo_kind == RP_TOPO_DISCRETE && a != b)
            return rp_net_bulk(s->net, a, b, ev->size, t0);
        return t0 + mem_time(2 * ev->size, mem_bw(s));
    }
    }
}

/*
 * The host timeline. Each event is handled in program order:
 *  - LAUNCH: waits for copies in flight on its GPU(s), then the host is busy
 *    for host.launch_overhead (runtime and driver work of the launch call)
 *    and the kernel is queued on the dispatcher (which runs it as soon as the
 *    kernels before it are done). The host goes on: launches are asynchronous.
 *  - COPY/MEMSET: waits until the GPUs involved are idle (kernels and earlier
 *    copies done: stream order, conservatively per GPU rather than per
 *    stream), applies the functional effect (rp_host_apply) at the start of
 *    the transfer, then the transfer takes its time (start_transfer). A copy
 *    on the null stream (hipMemcpy, hipMemset) blocks the host until it
 *    completes; one on another stream (the *Async calls) does not, but the
 *    next launch/copy/sync touching its GPUs waits for it. Applying at the
 *    start is equivalent to applying at completion because nothing on the
 *    involved GPUs runs before completion, and it is where a D2H copy reads
 *    the device (after the L2 flush rp_host_apply performs).
 *  - COPY INIT (kernarg segments, code images written by the runtime): small;
 *    applied at once without waiting for idle GPUs and without the copy
 *    overhead; their bytes occupy the host link (h2d) but nobody waits.
 *  - SYNC: waits until the GPUs of the device are idle and their copies done.
 *  At the end of the trace the host waits for every copy in flight.
 */
void rp_host_run(rp_event *hev, rp_engine *e)
{
    rp_sim *s = hev->owner;
    rp_host_tl *h = &s->host;
    rp_time now = e->now;
    while (s->next_event < s->n_events && !s->failed) {
        const trc_event *ev = trc_reader_event(s->rd, s->next_event);
        uint32_t g = gpu_of_device(s, ev->device);
        int r = 0;
        if (h->phase == 1) {
            /* The current event's launch call / blocking copy is in progress. */
            if (now < h->wait_until) {
                rp_engine_wake(e, hev, h->wait_until);
                return;
            }
            h->phase = 0;
            if (ev->kind == TRC_EV_LAUNCH && enqueue_launch(s, ev) && !s->failed)
                rp_sim_fail(s, "out of memory queueing a launch");
            s->next_event++;
            continue;
        }
        switch (ev->kind) {
        case TRC_EV_ALLOC:
            r = add_alloc(s, ev->addr, ev->size, g);
            break;
        case TRC_EV_FREE:
            break;
        case TRC_EV_LAUNCH: {
            uint32_t kg = s->cfg.topo_kind == RP_TOPO_UNIFIED ? 0 : g;
            rp_time b = busy_until(s, s->cfg.topo_kind == RP_TOPO_UNIFIED ? involved(s, ev, g) : 1ull << kg);
            if (b > now) {
                rp_engine_wake(e, hev, b);
                return;
            }
            h->st_launches++;
            rp_time lo = rp_lat_ps(s->cfg.host_launch_overhead, s->clk);
            if (lo) {
                h->phase = 1;
                h->wait_until = now + lo;
                rp_engine_wake(e, hev, h->wait_until);
                return;
            }
            if (enqueue_launch(s, ev) && !s->failed)
                rp_sim_fail(s, "out of memory queueing a launch");
            break;
        }
        case TRC_EV_COPY:
        case TRC_EV_MEMSET:
        case TRC_EV_SYNC: {
            if (!host_write_ok(s, ev))
                return;
            if (ev->kind == TRC_EV_COPY && ev->copy_kind == TRC_COPY_INIT) {
                /* Runtime-side initialisation goes to memory no running
                 * kernel uses and does not wait: otherwise the kernarg write
                 * of a program's second launch on device 0 would hold back
                 * its launches on the other devices. */
                rp_net_host_copy(s->net, rp_gpu_of(s, ev->addr, g), true, ev->size, now);
                r = rp_host_apply(s, ev);
                break;
            }
            uint64_t mask = involved(s, ev, g);
            if (!all_idle(s, mask))
                return; /* rp_host_kernel_done wakes us */
            rp_time b = busy_until(s, mask);
            if (b > now) {
                rp_engine_wake(e, hev, b);
                return;
            }
            if (ev->kind == TRC_EV_SYNC)
                break;
            r = rp_host_apply(s, ev);
            if (r)
                break;
            rp_time done = start_transfer(s, ev, g, now);
            RP_HOOK_FIRE(&s->hooks, RP_HOOK_HOST_COPY, now, g, UINT32_MAX, ev, &done, s);
            h->st_copy_ps += done - now;
            for (uint32_t i = 0; i < s->n_gpus && i < 64; i++)
                if ((mask >> i & 1) && h->gpu_busy_until[i] < done)
                    h->gpu_busy_until[i] = done;
            if (ev->stream == 0 && done > now) {
                h->phase = 1;
                h->wait_until = done;
                rp_engine_wake(e, hev, done);
                return;
            }
            break;
        }
        }
        if (r) {
            if (!s->failed)
                rp_sim_fail(s, "host event %zu: out of memory", s->next_event);
            return;
        }
        s->next_event++;
    }
    if (!s->failed) {
        rp_time b = busy_until(s, ~0ull);
        if (b > now) {
            rp_engine_wake(e, hev, b);
            return;
        }
    }
    s->host_done = true;
}

void rp_host_kernel_done(rp_sim *s, rp_kernel *k)
{
    /* The completion signal reaches the host over the host link (parallel.c:
     * notify_ps is also the lookahead's upper bound). */
    if (!s->host_done)
        rp_engine_wake(&s->eng, &s->host_ev, k->end + s->notify_ps);
}

bool rp_host_finished(rp_sim *s)
{
    if (s->failed)
        return true;
    if (!s->host_done)
        return false;
    for (uint32_t g = 0; g < s->n_gpus; g++)
        if (!gpu_idle(s, g))
            return false;
    return true;
}

/* ---- reporting -------------------------------------------------------------------------- */

