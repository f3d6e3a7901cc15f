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

/* Make room for one more element in the array *v of *cap elements of elem
 * bytes holding n (doubling, first 16). 0, or -1 out of memory. */
static int room_for_one(void **v, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? 2 * *cap : 16;
    void *p = realloc(*v, nc * elem);
    if (!p)
        return -1;
    *v = p;
    *cap = nc;
    return 0;
}

static uint32_t gpu_of_device(rp_sim *s, uint32_t device)
{
    return s->cfg.topo_kind == RP_TOPO_DISCRETE ? device % s->n_gpus : 0;
}

static bool gpu_idle(rp_sim *s, uint32_t g)
{
    rp_disp *d = &s->gpus[g].disp;
    return !d->active && !d->queue;
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
static bool host_write_ok(rp_sim *s, const trc_event *ev, size_t idx)
{
    bool writes = ev->kind == TRC_EV_MEMSET ||
                  (ev->kind == TRC_EV_COPY && ev->copy_kind != TRC_COPY_D2H);
    if (!writes || !ev->size || in_alloc(s, ev->addr, ev->size))
        return true;
    rp_sim_fail(s, "trace event %zu: a %s of %llu bytes at 0x%llx lies outside every allocation of the trace "
                "(damaged trace?)", idx, ev->kind == TRC_EV_MEMSET ? "memset" : "copy",
                (unsigned long long)ev->size, (unsigned long long)ev->addr);
    return false;
}

static int add_alloc(rp_sim *s, uint64_t addr, uint64_t size, uint32_t gpu, uint8_t kind, uint8_t managed)
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
    s->allocs[i] = (rp_alloc){addr, size ? size : 1, gpu, kind, managed};
    s->n_allocs++;
    return 0;
}

/* Whether stream was declared hipStreamNonBlocking (trace 1.3). */
static bool is_nonblocking(const rp_sim *s, uint32_t stream)
{
    for (size_t i = 0; stream && i < s->host.n_nonblocking; i++)
        if (s->host.nonblocking[i] == stream)
            return true;
    return false;
}

static int enqueue_launch(rp_sim *s, const trc_event *ev, size_t idx)
{
    rp_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return -1;
    k->launch = ev->launch;
    k->stream = ev->stream;
    k->ev_index = idx;
    k->nonblocking = is_nonblocking(s, ev->stream);
    /* sampled replay groups launches by their arguments: a hash of them (FNV-1a) */
    k->kernarg_hash = rp_kernarg_hash(&ev->launch);
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

/* Whether work of stream a must finish before work of stream b starts (or
 * the other way round): the same stream, or one is the null stream and the
 * other a blocking stream (HIP's legacy default stream synchronises with
 * every stream not created hipStreamNonBlocking). */
static bool streams_ordered(const rp_sim *s, uint32_t a, uint32_t b)
{
    return a == b || (!a && !is_nonblocking(s, b)) || (!b && !is_nonblocking(s, a));
}

/* Latest end of a copy/memset on the GPUs of mask that the stream's work
 * must follow (RP_ALL_STREAMS: every copy). */
#define RP_ALL_STREAMS UINT32_MAX
static rp_time busy_until(rp_sim *s, uint64_t mask, uint32_t stream)
{
    rp_time t = 0;
    if (stream == RP_ALL_STREAMS) {
        for (uint32_t i = 0; i < s->n_gpus && i < 64; i++)
            if ((mask >> i & 1) && s->host.gpu_busy_until[i] > t)
                t = s->host.gpu_busy_until[i];
        return t;
    }
    for (size_t i = 0; i < s->host.n_sbusy; i++) {
        const struct rp_stream_busy *b = &s->host.sbusy[i];
        if (b->gpu < 64 && (mask >> b->gpu & 1) && streams_ordered(s, b->stream, stream) && b->until > t)
            t = b->until;
    }
    return t;
}

/* Record that stream's copy on GPU g ends at done. 0, or -1 out of memory. */
static int note_busy(rp_sim *s, uint32_t g, uint32_t stream, rp_time done)
{
    rp_host_tl *h = &s->host;
    if (h->gpu_busy_until[g] < done)
        h->gpu_busy_until[g] = done;
    for (size_t i = 0; i < h->n_sbusy; i++)
        if (h->sbusy[i].gpu == g && h->sbusy[i].stream == stream) {
            if (h->sbusy[i].until < done)
                h->sbusy[i].until = done;
            return 0;
        }
    if (room_for_one((void **)&h->sbusy, &h->cap_sbusy, h->n_sbusy, sizeof *h->sbusy))
        return -1;
    h->sbusy[h->n_sbusy++] = (struct rp_stream_busy){g, stream, done};
    return 0;
}

/* Whether no kernel that the stream's work must follow is queued or running
 * on the GPUs of mask (for the null stream: no kernel at all). */
static bool all_idle(rp_sim *s, uint64_t mask, uint32_t stream)
{
    for (uint32_t i = 0; i < s->n_gpus && i < 64; i++) {
        if (!(mask >> i & 1))
            continue;
        const rp_disp *d = &s->gpus[i].disp;
        for (const rp_kernel *k = d->active; k; k = k->next)
            if (streams_ordered(s, k->stream, stream))
                return false;
        for (const rp_kernel *k = d->queue; k; k = k->next)
            if (streams_ordered(s, k->stream, stream))
                return false;
    }
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

/* The copy engine (SDMA) of GPU gpu that frees first, and the time a copy
 * ready at t0 starts on it: *k is its index in s->host.sdma. -1 out of
 * memory. Ties go to the lowest engine, so the choice is deterministic. */
static int sdma_pick(rp_sim *s, uint32_t gpu, rp_time *t0, size_t *k)
{
    rp_host_tl *h = &s->host;
    uint32_t n = s->cfg.host_sdma_engines ? s->cfg.host_sdma_engines : 1;
    if (!h->sdma && !(h->sdma = calloc((size_t)s->n_gpus * n, sizeof *h->sdma)))
        return -1;
    size_t best = (size_t)gpu * n;
    for (size_t i = best + 1; i < (size_t)(gpu + 1) * n; i++)
        if (h->sdma[i].free_at < h->sdma[best].free_at)
            best = i;
    if (h->sdma[best].free_at > *t0)
        *t0 = h->sdma[best].free_at;
    *k = best;
    return 0;
}

/* Start the transfer of a COPY (not INIT) or MEMSET at `now`: fills *ct
 * (its transfer's start and end, the copy engine that runs it), 0 or -1
 * (out of memory). Timing: host.copy_overhead; then H2D, D2H and D2D
 * between GPUs each wait for a copy engine (SDMA, host.sdma_engines per GPU:
 * H2D on the destination GPU's, D2H on the source's, a peer copy on the GPU
 * of its stream) and hold it until the transfer ends: H2D/D2H over the host
 * link (size / host.link_bandwidth + host.link_latency, FIFO per direction),
 * D2D between GPUs over the interconnect path (rp_net_bulk). D2D within a
 * GPU and memsets (blit kernels in ROCm, no engine) take the GPU's DRAM
 * bandwidth (a copy reads and writes: 2 x size) and no engine. */
static int start_transfer(rp_sim *s, const trc_event *ev, uint32_t g, rp_time now, rp_copy_timing *ct)
{
    rp_time t0 = now + rp_lat_ps(s->cfg.host_copy_overhead, s->clk);
    ct->engine_gpu = ct->engine = UINT32_MAX;
    ct->start = t0;
    if (ev->kind == TRC_EV_MEMSET) {
        s->host.st_memsets++;
        ct->end = t0 + mem_time(ev->size, mem_bw(s));
        return 0;
    }
    s->host.st_copies++;
    s->host.st_copy_bytes += ev->size;
    uint32_t a = rp_gpu_of(s, ev->src, g), b = rp_gpu_of(s, ev->addr, g);
    bool h2d = ev->copy_kind == TRC_COPY_H2D, d2h = ev->copy_kind == TRC_COPY_D2H;
    bool peer = !h2d && !d2h && s->cfg.topo_kind == RP_TOPO_DISCRETE && a != b;
    if (!h2d && !d2h && !peer) {
        ct->end = t0 + mem_time(2 * ev->size, mem_bw(s));
        return 0;
    }
    uint32_t eg = h2d ? b : d2h ? a : g;
    size_t k;
    if (sdma_pick(s, eg, &t0, &k))
        return -1;
    ct->start = t0;
    ct->end = h2d ? host_copy(s, b, true, ev->size, t0)
            : d2h ? host_copy(s, a, false, ev->size, t0)
                  : rp_net_bulk(s->net, a, b, ev->size, t0);
    struct rp_sdma *e = &s->host.sdma[k];
    e->free_at = ct->end;
    e->copies++;
    e->bytes += ev->size;
    e->busy_ps += ct->end - t0;
    ct->engine_gpu = eg;
    ct->engine = (uint32_t)(k - (size_t)eg * (s->cfg.host_sdma_engines ? s->cfg.host_sdma_engines : 1));
    return 0;
}

/* ---- streams: operations deferred in stream order ---------------------------------- */

static struct rp_hstream *hstream(rp_sim *s, uint32_t stream)
{
    rp_host_tl *h = &s->host;
    for (size_t i = 0; i < h->n_hs; i++)
        if (h->hs[i].stream == stream)
            return &h->hs[i];
    struct rp_hstream *v = realloc(h->hs, (h->n_hs + 1) * sizeof *v);
    if (!v)
        return NULL;
    h->hs = v;
    v[h->n_hs] = (struct rp_hstream){stream, NULL, 0, 0, 0};
    return &h->hs[h->n_hs++];
}

/* Whether no operation is deferred on stream, or on a stream ordered with
 * it (streams_ordered: for the null stream, every blocking stream);
 * RP_ALL_STREAMS: on any stream. */
static bool hs_empty(rp_sim *s, uint32_t stream)
{
    for (size_t i = 0; i < s->host.n_hs; i++)
        if (s->host.hs[i].head < s->host.hs[i].n &&
            (stream == RP_ALL_STREAMS || streams_ordered(s, s->host.hs[i].stream, stream)))
            return false;
    return true;
}

static int hs_push(rp_sim *s, uint32_t stream, size_t idx)
{
    struct rp_hstream *q = hstream(s, stream);
    if (!q)
        return -1;
    if (q->head == q->n)
        q->head = q->n = 0;
    if (room_for_one((void **)&q->ev, &q->cap, q->n, sizeof *q->ev))
        return -1;
    q->ev[q->n++] = idx;
    return 0;
}

/* Whether the work of `stream` issued before trace event `until` (0: all
 * of it) on the GPUs of mask is done at now: none of it deferred, queued or
 * running, no copy of it in flight (then *wake is lowered to its end). The
 * null stream's work is everything's (it synchronises with every stream). */
static bool stream_done_before(rp_sim *s, uint32_t stream, uint64_t until, uint64_t mask, rp_time now, rp_time *wake)
{
    for (size_t i = 0; i < s->host.n_hs; i++) {
        const struct rp_hstream *q = &s->host.hs[i];
        if (q->head < q->n && streams_ordered(s, q->stream, stream) && (!until || q->ev[q->head] < until))
            return false;
    }
    for (uint32_t g = 0; g < s->n_gpus && g < 64; g++) {
        if (!(mask >> g & 1))
            continue;
        const rp_disp *d = &s->gpus[g].disp;
        for (int pass = 0; pass < 2; pass++)
            for (const rp_kernel *k = pass ? d->queue : d->active; k; k = k->next)
                if (streams_ordered(s, k->stream, stream) && (!until || k->ev_index < until))
                    return false;
    }
    bool done = true;
    for (size_t i = 0; i < s->host.n_cspan; i++) {
        const struct rp_copy_span *c = &s->host.cspan[i];
        if (c->end > now && streams_ordered(s, c->stream, stream) && (!until || c->ev < until)) {
            done = false;
            if (c->end < *wake)
                *wake = c->end;
        }
    }
    return done;
}

/* Whether the launch, copy or memset ev of a stream may start at now: the
 * work of its stream (and of the null stream) before it is done: copies
 * (busy_until) and, for a copy or memset, kernels (a launch is ordered
 * behind its stream's kernels by the dispatcher's hardware queues). If it
 * waits for a copy, *wake is lowered to when that copy ends. */
static bool op_ready(rp_sim *s, const trc_event *ev, rp_time now, rp_time *wake)
{
    uint32_t g = gpu_of_device(s, ev->device);
    if (ev->kind == TRC_EV_SYNC) /* a stream waits for another's work (hipStreamWaitEvent) */
        return stream_done_before(s, ev->stream, ev->until_event, involved(s, ev, g), now, wake);
    uint64_t mask = ev->kind == TRC_EV_LAUNCH && s->cfg.topo_kind != RP_TOPO_UNIFIED ? 1ull << g : involved(s, ev, g);
    if (ev->kind != TRC_EV_LAUNCH && !all_idle(s, mask, ev->stream))
        return false; /* rp_host_kernel_done wakes the host */
    rp_time b = busy_until(s, mask, ev->stream);
    if (b > now) {
        if (b < *wake)
            *wake = b;
        return false;
    }
    return true;
}

/* Start the launch, copy or memset ev (trace event idx) at now. For a copy
 * or memset: its functional effect (rp_host_apply) and its transfer; *done
 * is when the transfer ends. 0, or -1 after rp_sim_fail or out of memory
 * (op_start names it). */
static int op_start_(rp_sim *s, const trc_event *ev, size_t idx, rp_time now, rp_time *done)
{
    *done = now;
    if (ev->kind == TRC_EV_SYNC)
        return 0;
    if (ev->kind == TRC_EV_LAUNCH)
        return enqueue_launch(s, ev, idx);
    if (!host_write_ok(s, ev, idx))
        return -1;
    if (rp_host_apply(s, ev))
        return -1;
    uint32_t g = gpu_of_device(s, ev->device);
    uint64_t mask = involved(s, ev, g);
    rp_copy_timing ct;
    if (start_transfer(s, ev, g, now, &ct))
        return -1;
    *done = ct.end;
    RP_HOOK_FIRE(&s->hooks, RP_HOOK_HOST_COPY, now, g, UINT32_MAX, ev, &ct, s);
    rp_host_tl *h = &s->host;
    h->st_copy_ps += *done - now;
    if (room_for_one((void **)&h->cspan, &h->cap_cspan, h->n_cspan, sizeof *h->cspan))
        return -1;
    h->cspan[h->n_cspan++] = (struct rp_copy_span){ev->stream, g, now, *done, ev->size, idx};
    for (uint32_t i = 0; i < s->n_gpus && i < 64; i++)
        if ((mask >> i & 1) && note_busy(s, i, ev->stream, *done))
            return -1;
    return 0;
}

/* op_start_, and the run fails naming the event when it does. */
static int op_start(rp_sim *s, const trc_event *ev, size_t idx, rp_time now, rp_time *done)
{
    if (!op_start_(s, ev, idx, now, done))
        return 0;
    if (!s->failed)
        rp_sim_fail(s, "host event %zu: out of memory", idx);
    return -1;
}

/* Start the deferred operations whose turn has come, each stream in order;
 * wake the host when a copy they wait for ends. 0, or -1 (failed). */
static int pump(rp_sim *s, rp_event *hev, rp_engine *e)
{
    rp_time wake = RP_TIME_MAX, done;
    for (size_t i = 0; i < s->host.n_hs; i++) {
        struct rp_hstream *q = &s->host.hs[i];
        while (q->head < q->n) {
            const trc_event *ev = trc_reader_event(s->rd, q->ev[q->head]);
            if (!op_ready(s, ev, e->now, &wake))
                break;
            if (op_start(s, ev, q->ev[q->head], e->now, &done))
                return -1;
            q->head++;
        }
    }
    if (wake != RP_TIME_MAX)
        rp_engine_wake(e, hev, wake);
    return 0;
}

/*
 * The host timeline. The host walks the events in program order; the GPU
 * side runs each stream's work in order and the streams side by side:
 *  - LAUNCH: the host is busy for host.launch_overhead (runtime and driver
 *    work of the launch call). On the null stream it first waits for every
 *    stream's work before it and for copies in flight on its GPU(s); on
 *    another stream it goes on at once and the launch waits, in its
 *    stream's order, for the stream's earlier copies. The kernel is then
 *    queued on the dispatcher, which runs the kernels of one hardware queue
 *    in order and those of different queues side by side (disp.c).
 *  - COPY/MEMSET: starts when the earlier work of its stream is done (its
 *    kernels and copies; on the null stream: all work on the GPUs involved,
 *    the legacy default stream's synchronisation). Its functional effect
 *    (rp_host_apply) is applied at the start, then the transfer takes its
 *    time (start_transfer). On the null stream (hipMemcpy, hipMemset) the
 *    host waits for it to complete; an *Async call on another stream only
 *    queues it behind its stream's work and the host goes on. Applying at
 *    the start is equivalent to applying at completion because nothing of
 *    its stream runs before completion, and it is where a D2H copy reads the
 *    device (after the L2 flush rp_host_apply performs).
 *  - COPY INIT (kernarg segments, code images written by the runtime): small;
 *    applied at once without waiting and without the copy overhead; their
 *    bytes occupy the host link (h2d) but nobody waits.
 *  - SYNC: the host waits until the stream's work is done (the null stream:
 *    all work on the device's GPUs). hipStreamWaitEvent is recorded as a
 *    SYNC on the event's stream, so the host waits there too.
 *  At the end of the trace the host waits for every stream and copy.
 */
/* A copy, memset or synchronisation event ev of the host timeline at now
 * (g: the GPU it names). Returns 1 when the host must wait (hev is woken, or
 * a kernel's or copy's end or pump wakes it), 0 when ev is done and the
 * timeline goes on; *r = -1: out of memory. */
static int host_copy_sync(rp_sim *s, rp_event *hev, rp_engine *e, const trc_event *ev, uint32_t g, int *r)
{
    rp_host_tl *h = &s->host;
    rp_time now = e->now, done;
    if (ev->kind == TRC_EV_COPY && ev->copy_kind == TRC_COPY_INIT) {
        /* Runtime-side initialisation goes to memory no running
         * kernel uses and does not wait: otherwise the kernarg write
         * of a program's second launch on device 0 would hold back
         * its launches on the other devices. */
        if (!host_write_ok(s, ev, s->next_event))
            return 1;
        rp_net_host_copy(s->net, rp_gpu_of(s, ev->addr, g), true, ev->size, now);
        *r = rp_host_apply(s, ev);
        return 0;
    }
    if (ev->kind != TRC_EV_SYNC && ev->stream) {
        /* an *Async call: queued behind its stream's work */
        rp_time wake = RP_TIME_MAX;
        if (hs_empty(s, ev->stream) && op_ready(s, ev, now, &wake)) {
            if (op_start(s, ev, s->next_event, now, &done))
                return 1;
        } else {
            *r = hs_push(s, ev->stream, s->next_event);
        }
        if (wake != RP_TIME_MAX)
            rp_engine_wake(e, hev, wake);
        return 0;
    }
    if (ev->kind == TRC_EV_SYNC && ev->stream_nonblocking) {
        /* hipStreamCreateWithFlags(hipStreamNonBlocking): remembered */
        if (!is_nonblocking(s, ev->stream)) {
            uint32_t *v = realloc(h->nonblocking, (h->n_nonblocking + 1) * sizeof *v);
            if (!v) {
                *r = -1;
                return 0;
            }
            h->nonblocking = v;
            h->nonblocking[h->n_nonblocking++] = ev->stream;
        }
        return 0;
    }
    if (ev->kind == TRC_EV_SYNC && ev->stream_wait && ev->wait_stream) {
        /* hipStreamWaitEvent: the waiting stream's later work queues
         * behind this wait; the host goes on */
        rp_time wake = RP_TIME_MAX;
        if (!hs_empty(s, ev->wait_stream) || !op_ready(s, ev, now, &wake))
            *r = hs_push(s, ev->wait_stream, s->next_event);
        if (wake != RP_TIME_MAX)
            rp_engine_wake(e, hev, wake);
        return 0;
    }
    if (ev->kind == TRC_EV_SYNC && ev->until_event) {
        /* hipEventSynchronize (or the null stream waiting for an
         * event): the work before the event's record point */
        rp_time wake = RP_TIME_MAX;
        if (!stream_done_before(s, ev->stream, ev->until_event, involved(s, ev, g), now, &wake)) {
            if (wake != RP_TIME_MAX)
                rp_engine_wake(e, hev, wake);
            return 1; /* a kernel's end, a copy's end or pump wakes us */
        }
        return 0;
    }
    if (!hs_empty(s, ev->stream))
        return 1; /* pump wakes us */
    uint64_t mask = involved(s, ev, g);
    if (!all_idle(s, mask, ev->stream))
        return 1; /* rp_host_kernel_done wakes us */
    rp_time b = busy_until(s, mask, ev->stream);
    if (b > now) {
        rp_engine_wake(e, hev, b);
        return 1;
    }
    if (ev->kind == TRC_EV_SYNC)
        return 0;
    if (op_start(s, ev, s->next_event, now, &done))
        return 1;
    if (done > now) { /* a null-stream copy blocks the host */
        h->phase = 1;
        h->wait_until = done;
        rp_engine_wake(e, hev, done);
        return 1;
    }
    return 0;
}

/* The end of a launch call's host overhead (phase 1) for launch event ev:
 * the kernel is queued on its GPU, or behind its stream's work. 0, or -1
 * out of memory (after rp_sim_fail). */
static int host_launch_issued(rp_sim *s, rp_event *hev, rp_engine *e, const trc_event *ev)
{
    rp_time wake = RP_TIME_MAX;
    int r;
    if (!ev->stream || (hs_empty(s, ev->stream) && op_ready(s, ev, e->now, &wake)))
        r = enqueue_launch(s, ev, s->next_event);
    else
        r = hs_push(s, ev->stream, s->next_event);
    if (wake != RP_TIME_MAX)
        rp_engine_wake(e, hev, wake);
    if (r && !s->failed)
        rp_sim_fail(s, "out of memory queueing a launch");
    return r;
}

/* The program's own host work before event ev (trace 1.4), scaled by
 * host.gap_percent, once per event: true while it lasts (hev is woken at
 * its end). */
static bool host_gap_wait(rp_sim *s, rp_event *hev, rp_engine *e, const trc_event *ev)
{
    rp_host_tl *h = &s->host;
    if (!ev->host_gap_ns || !s->cfg.host_gap_percent)
        return false;
    if (h->gap_event != s->next_event + 1) {
        unsigned __int128 ps = (unsigned __int128)ev->host_gap_ns * 10u * s->cfg.host_gap_percent;
        rp_time gap = ps > RP_TIME_MAX / 2 ? RP_TIME_MAX / 2 : (rp_time)ps;
        h->gap_event = s->next_event + 1;
        h->gap_until = e->now + gap;
        h->st_host_gap_ps += gap;
    }
    if (e->now < h->gap_until) {
        rp_engine_wake(e, hev, h->gap_until);
        return true;
    }
    return false;
}

void rp_host_run(rp_event *hev, rp_engine *e)
{
    rp_sim *s = hev->owner;
    rp_host_tl *h = &s->host;
    rp_time now = e->now;
    if (pump(s, hev, e))
        return;
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
            if (ev->kind == TRC_EV_LAUNCH)
                host_launch_issued(s, hev, e, ev);
            s->next_event++;
            continue;
        }
        if (host_gap_wait(s, hev, e, ev))
            return;
        switch (ev->kind) {
        case TRC_EV_ALLOC:
            r = add_alloc(s, ev->addr, ev->size, g, (uint8_t)ev->mem_kind, ev->managed);
            break;
        case TRC_EV_FREE:
            break;
        case TRC_EV_LAUNCH: {
            if (!ev->stream) {
                if (!hs_empty(s, 0))
                    return; /* the null stream waits for every stream: pump wakes us */
                uint32_t kg = s->cfg.topo_kind == RP_TOPO_UNIFIED ? 0 : g;
                rp_time b = busy_until(s, s->cfg.topo_kind == RP_TOPO_UNIFIED ? involved(s, ev, g) : 1ull << kg, 0);
                if (b > now) {
                    rp_engine_wake(e, hev, b);
                    return;
                }
            }
            h->st_launches++;
            rp_time lo = rp_lat_ps(s->cfg.host_launch_overhead, s->clk);
            h->phase = 1; /* without overhead handled as at its end, now */
            h->wait_until = now + lo;
            if (lo) {
                rp_engine_wake(e, hev, h->wait_until);
                return;
            }
            continue;
        }
        case TRC_EV_COPY:
        case TRC_EV_MEMSET:
        case TRC_EV_SYNC:
            if (host_copy_sync(s, hev, e, ev, g, &r))
                return;
            break;
        }
        if (r) {
            if (!s->failed)
                rp_sim_fail(s, "host event %zu: out of memory", s->next_event);
            return;
        }
        s->next_event++;
    }
    if (!s->failed) {
        if (!hs_empty(s, RP_ALL_STREAMS))
            return; /* pump wakes us */
        rp_time b = busy_until(s, ~0ull, RP_ALL_STREAMS);
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

