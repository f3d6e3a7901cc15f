/*
 * gcn_launch.c - kernel dispatch: validation, the AQL dispatch packet and
 * amd_queue_t the kernel may read, the dispatch's scratch, initial wavefront
 * state, and running workgroups on the worker pool.
 *
 * Initial state follows LLVM AMDGPUUsage "Initial Kernel Execution State"
 * (code object v4, GFX8): user SGPRs from s0 in the fixed order private
 * segment buffer (4), dispatch ptr (2), queue ptr (2), kernarg segment ptr
 * (2), dispatch id (2), flat scratch init (2), private segment size (1), each
 * present only when the kernel descriptor enables it; then the system SGPRs
 * workgroup id x/y/z, workgroup info, private segment wave byte offset. VGPRs
 * v0/v1/v2 hold the work-item ids x/y/z as enabled.
 *
 * Invariants: every workgroup runs entirely on one worker; its waves switch
 * only at s_barrier, s_sleep, s_endpgm, an error, or a yield of a wave that
 * waits (gcn_sched.c: residency, forward progress, deadlock), in wave order,
 * so the result of a race-free kernel does not depend on the thread count.
 * Each wave gets its own scratch slice, so private memory never aliases
 * between waves.
 *
 * Cooperative launches (gcn_launch_cooperative, hipLaunchCooperativeKernel):
 * a grid-wide sync (cooperative_groups::this_grid().sync()) compiles for
 * gfx803 (ROCm 5.2 ockl __ockl_grid_sync) to s_barrier, then one wave per
 * workgroup executing `ds_gws_barrier vN gds` with vN = workgroups - 1 (the
 * Global Wave Sync unit releases the waves when that many + 1 arrived), then
 * s_barrier. So every workgroup must be resident at once: one worker runs all
 * workgroups of the dispatch interleaved (run_coop), each in turn until its
 * waves block (s_barrier, s_sleep, the GWS barrier) or end. The interpreter
 * stops a wave at ds_gws_barrier with status GCN_WAVE_GWS_BARRIER (count =
 * data0 + 1, resource id; rule in gcn_sem.c); run_coop counts the arrivals
 * over the whole grid and releases every waiting wave when the count arrived
 * (one GWS resource in flight at a time). The order is fixed,
 * so cooperative kernels are deterministic. A GWS barrier outside a
 * cooperative launch fails with a message saying so (the hardware would
 * hang: the GWS unit is allocated to cooperative dispatches only).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec_internal.h"
#include "gcn/gcn_occupancy.h"

/* ---- the trace recorder behind the ISA layer's recorder interface ------------ */

_Static_assert((unsigned)GCN_MO_LOAD == TRC_MO_LOAD && (unsigned)GCN_MO_STORE == TRC_MO_STORE &&
                   (unsigned)GCN_MO_ATOMIC == TRC_MO_ATOMIC &&
                   (unsigned)GCN_MO_LDS == TRC_MO_LDS && (unsigned)GCN_MO_SMEM == TRC_MO_SMEM &&
                   (unsigned)GCN_MO_SCRATCH == TRC_MO_SCRATCH &&
                   (unsigned)GCN_MO_CMPSWAP == TRC_MO_CMPSWAP,
               "gcn_wave.h GCN_MO_* must keep the trace format's TRC_MO_* values");

static void rec_branch(void *ctx, uint32_t wave, int taken) { trc_rec_branch(ctx, wave, taken); }
static void rec_indirect(void *ctx, uint32_t wave, uint64_t t) { trc_rec_indirect(ctx, wave, t); }
static void rec_exec(void *ctx, uint32_t wave, uint64_t dyn, uint64_t exec) { trc_rec_exec(ctx, wave, dyn, exec); }
static void rec_mem(void *ctx, uint32_t wave, uint32_t flags, uint32_t bpl, uint64_t exec, const uint64_t *addr,
                    const void *load, const void *store)
{
    if (flags & GCN_MO_NORET) { /* an atomic without return: no pre-op values (gcn_wave.h) */
        flags &= ~(uint32_t)GCN_MO_NORET;
        load = NULL;
    }
    if (flags & GCN_MO_GLC) /* a glc load keeps its values under --load-values=hash */
        flags = (flags & ~(uint32_t)GCN_MO_GLC) | TRC_REC_KEEP_VALUES;
    if (flags & GCN_MO_LINEAR4) /* lane-linear dword addresses (gcn_wave.h) */
        flags = (flags & ~(uint32_t)GCN_MO_LINEAR4) | TRC_REC_LINEAR4;
    trc_rec_mem(ctx, wave, flags, bpl, exec, addr, load, store);
}
static void rec_wave_end(void *ctx, uint32_t wave, uint64_t n) { trc_rec_wave_end(ctx, wave, n); }
static void rec_await_mark(void *ctx, uint32_t wave, uint64_t dyn) { trc_rec_await_mark(ctx, wave, dyn); }
static int rec_await_commit(void *ctx, uint32_t wave, uint64_t dyn, uint64_t pc)
{
    return trc_rec_await_commit(ctx, wave, dyn, pc);
}
static void rec_await_drop(void *ctx, uint32_t wave, uint64_t dyn) { trc_rec_await_drop(ctx, wave, dyn); }
static void rec_await_end(void *ctx, uint32_t wave) { trc_rec_await_end(ctx, wave); }
static void rec_retry_mark(void *ctx, uint32_t wave, uint64_t dyn) { trc_rec_retry_mark(ctx, wave, dyn); }
static int rec_retry_commit(void *ctx, uint32_t wave, uint64_t dyn, uint64_t pc)
{
    return trc_rec_retry_commit(ctx, wave, dyn, pc);
}
static const gcn_recorder_ops trace_recorder = {rec_branch, rec_indirect, rec_exec, rec_mem, rec_wave_end,
                                                rec_await_mark, rec_await_commit, rec_await_drop, rec_await_end,
                                                rec_retry_mark, rec_retry_commit};
/* gcn_machine_config.no_awaits: every loop iteration recorded (trace format
 * 1.2 without awaits, as 1.1 recorded waits), for measuring what awaits save */
static const gcn_recorder_ops plain_recorder = {rec_branch, rec_indirect, rec_exec, rec_mem, rec_wave_end,
                                                NULL, NULL, NULL, NULL, NULL, NULL};

/* Layout of the TRC_MEM_KERNARG allocation of one dispatch. */
enum {
    KA_QUEUE = 0,      /* amd_queue_t, 256 bytes (ROCr amd_hsa_queue.h) */
    KA_PACKET = 256,   /* hsa_kernel_dispatch_packet_t, 64 bytes (hsa.h) */
    KA_KERNARG = 512,  /* kernarg segment; 256-byte aligned covers any .kernarg_segment_align */
    KA_TAIL = 256,     /* zero slack after the kernarg bytes: SMEM loads of up to
                        * 64 bytes (s_load_dwordx16) at the last argument stay in bounds */
};


uint32_t gcn_initial_mode(const gcn_kernel_desc *kd)
{
    return (uint32_t)(kd->float_round_mode_32 & 3u) | (uint32_t)(kd->float_round_mode_16_64 & 3u) << 2 |
           (uint32_t)(kd->float_denorm_mode_32 & 3u) << 4 |
           (uint32_t)(kd->float_denorm_mode_16_64 & 3u) << 6 | (uint32_t)(kd->dx10_clamp & 1u) << 8 |
           (uint32_t)(kd->ieee_mode & 1u) << 9;
}

void gcn_job_error(struct gcn_launch_job *job, gcn_launch_status st, const char *msg)
{
    pthread_mutex_lock(&job->err_lock);
    if (job->status == GCN_LAUNCH_OK) {
        job->status = st;
        snprintf(job->message, sizeof(job->message), "%s", msg);
    }
    pthread_mutex_unlock(&job->err_lock);
    atomic_store(&job->stop, 1);
}

static void put64(uint32_t *s, uint64_t v)
{
    s[0] = (uint32_t)v;
    s[1] = (uint32_t)(v >> 32);
}

void gcn_wave_init_state(gcn_worker *wk, const struct gcn_launch_job *job, gcn_wave *w, uint32_t wi,
                         uint32_t wg_lin, const uint32_t wg_id[3], struct gcn_wg *wg)
{
    const gcn_kernel_desc *kd = &job->k->kd;
    const gcn_launch_params *p = job->p;
    memset(w->s, 0, sizeof(w->s));
    w->v = wk->vgprs + (size_t)wi * job->n_vgpr;
    memset(w->v, 0, (size_t)job->n_vgpr * sizeof(*w->v));
    w->n_vgpr = job->n_vgpr;
    {
        uint32_t ns = kd->sgpr_count > job->k->sgpr_count ? kd->sgpr_count : job->k->sgpr_count;
        w->n_sgpr = ns && ns < 102 ? ns : 0;
    }
    w->pc = job->k->entry_vaddr;
    w->scc = 0;
    w->mode = job->mode;
    w->trapsts = 0;
    w->status = GCN_WAVE_RUNNING;
    w->n_instr = 0;
    /* forward progress and awaits start afresh (gcn_wave.h) */
    w->slice_end = 0;
    w->preempt = NULL;
    w->stuck = 0;
    w->spin_valid = 0;
    w->spin_hits = w->spin_miss = 0;
    w->spin_pc = w->sleep_pc = 0;
    w->spin_shash = w->spin_hash = w->sleep_hash = w->state_hash = w->yield_hash = 0;
    w->aw_state = 0;
    w->aw_have = 0;
    w->aw_pc = 0;
    w->rt_head = 0;
    w->at_back_edge = 0;
    w->prog = job->mod->prog;
    w->image_base = (uint64_t)(uintptr_t)job->mod->image;
    w->kernel_name = job->k->name;
    memcpy(w->wg_id, wg_id, sizeof(w->wg_id));
    w->wave_in_wg = wi;
    w->wave_global = wg_lin * job->waves_per_wg + wi;
    w->lds = wk->lds;
    w->lds_size = job->lds_size;
    w->scratch_base = job->scratch_base;
    w->scratch_wave_offset = job->scratch_base ? (uint64_t)w->wave_global * job->slice : 0;
    w->private_size = job->private_size;
    /* HW_ID (ISA manual Sec. 3.5.2 Table): wave_id[3:0], simd_id[5:4], cu_id[11:8],
     * sh_id[12], se_id[14:13], tg_id[19:16]; a plausible placement on 64 CUs. */
    w->hw_id = (uint64_t)((wi / 4u) & 15u) | (uint64_t)(wi % 4u) << 4 | (uint64_t)(wg_lin % 16u) << 8 |
               (uint64_t)((wg_lin / 16u) % 2u) << 12 | (uint64_t)((wg_lin / 32u) % 4u) << 13 |
               (uint64_t)(wg_lin % 16u) << 16;
    w->rec = job->recording && wk->rec
                 ? (gcn_recorder){job->m->cfg.no_awaits ? &plain_recorder : &trace_recorder, wk->rec,
                                  job->m->cfg.scratch_data}
                 : (gcn_recorder){NULL, NULL, 0};
    w->wg = wg;
    w->mem_cache = &wk->cache;
    w->err[0] = 0;

    /* Real ROCm gives every wave the same V# and its slice offset in the wave
     * offset SGPR (32 bits). When the dispatch's scratch exceeds 4 GiB (-O0
     * builds with call stacks: 16 KiB per work-item) the offset does not fit:
     * then the V# base itself points at the wave's slice and the SGPR is 0.
     * Both address the same bytes (gcn_wave.h formula). */
    uint64_t vbase = job->scratch_base;
    uint32_t soff = (uint32_t)w->scratch_wave_offset;
    uint64_t vrecords = job->scratch_size;
    if (job->scratch_size > UINT32_MAX) {
        vbase += w->scratch_wave_offset;
        vrecords -= w->scratch_wave_offset;
        soff = 0;
        /* the wave's view matches its V# (the interpreter recognises scratch
         * MUBUF accesses by V# base == scratch_base) */
        w->scratch_base = vbase;
        w->scratch_wave_offset = 0;
    }
    if (vrecords > UINT32_MAX)
        vrecords = UINT32_MAX;

    uint32_t *s = w->s;
    uint32_t n = 0;
    if (kd->enable_sgpr_private_segment_buffer) {
        /* Scratch V# (GCN3 ISA manual Sec. 8.1.5 buffer resource; values as ROCr
         * amd_aql_queue.cpp sets them for GFX8): stride 0 with SWIZZLE_ENABLE,
         * NUM_RECORDS = scratch bytes, word3 element size 4 / index stride 64 /
         * ADD_TID_ENABLE. */
        s[n + 0] = (uint32_t)vbase;
        s[n + 1] = (uint32_t)(vbase >> 32) & 0xffffu;
        s[n + 1] |= 1u << 31; /* SWIZZLE_ENABLE */
        s[n + 2] = (uint32_t)vrecords;
        s[n + 3] = GCN_SCRATCH_RSRC_WORD3;
        n += 4;
    }
    if (kd->enable_sgpr_dispatch_ptr) {
        put64(s + n, job->dispatch_ptr);
        n += 2;
    }
    if (kd->enable_sgpr_queue_ptr) {
        put64(s + n, job->queue_ptr);
        n += 2;
    }
    if (kd->enable_sgpr_kernarg_segment_ptr) {
        put64(s + n, job->kernarg_ptr);
        n += 2;
    }
    if (kd->enable_sgpr_dispatch_id) {
        put64(s + n, job->dispatch_id);
        n += 2;
    }
    if (kd->enable_sgpr_flat_scratch_init) {
        /* GFX8: byte offset of the dispatch's scratch from the scratch base
         * (ours: 0, the V# base is the allocation) and the per-work-item size.
         * The kernel adds its wave offset and writes FLAT_SCRATCH; the FLAT
         * private aperture itself is translated by gcn_mem_flat. */
        s[n + 0] = 0;
        s[n + 1] = job->private_size;
        n += 2;
    }
    if (kd->enable_sgpr_private_segment_size) {
        s[n++] = job->private_size;
    }
    /* n == kd->user_sgpr_count was checked by the launch. */
    n = kd->user_sgpr_count;
    for (int d = 0; d < 3; d++)
        if (kd->enable_sgpr_workgroup_id[d])
            s[n++] = wg_id[d];
    if (kd->enable_sgpr_workgroup_info)
        s[n++] = (wi == 0 ? 1u << 31 : 0u) | (job->waves_per_wg & 63u);
    if (kd->enable_private_segment)
        s[n++] = soff;

    /* Work-item ids and EXEC (partial last wave). */
    /* t = x + wx * (y + wy * z), stepped per lane without divisions */
    uint32_t wx = p->wg_size[0], wy = p->wg_size[1];
    uint32_t t0 = wi * GCN_WAVE_LANES;
    uint32_t x = t0 % wx, y = (t0 / wx) % wy, z = t0 / (wx * wy);
    uint32_t n_lanes = job->wg_items - t0 < GCN_WAVE_LANES ? job->wg_items - t0 : GCN_WAVE_LANES;
    int want_y = kd->enable_vgpr_workitem_id >= 1 && job->n_vgpr > 1;
    int want_z = kd->enable_vgpr_workitem_id >= 2 && job->n_vgpr > 2;
    uint64_t exec = n_lanes == GCN_WAVE_LANES ? ~0ull : (1ull << n_lanes) - 1;
    for (uint32_t l = 0; l < n_lanes; l++) {
        w->v[0][l] = x;
        if (want_y)
            w->v[1][l] = y;
        if (want_z)
            w->v[2][l] = z;
        if (++x == wx) {
            x = 0;
            if (++y == wy) {
                y = 0;
                z++;
            }
        }
    }
    gcn_set_exec(w, exec);
    w->s[GCN_SREG_VCC_LO] = w->s[GCN_SREG_VCC_HI] = 0;
    /* M0 is not initialised by hardware; compiled code sets it before use
     * (s_mov_b32 m0, -1 before DS on GFX8). -1 keeps DS clamping permissive. */
    w->s[GCN_SREG_M0] = 0xffffffffu;
}

int gcn_wave_error_status(gcn_wave_status st, gcn_launch_status *out)
{
    switch (st) {
    case GCN_WAVE_FAULT: *out = GCN_LAUNCH_FAULT; return 1;
    case GCN_WAVE_ILLEGAL: *out = GCN_LAUNCH_ILLEGAL_INSN; return 1;
    case GCN_WAVE_TRAP: *out = GCN_LAUNCH_TRAP; return 1;
    default: return 0;
    }
}

/* A dispatch as gcn_launch posts it: workers receive &job. */
typedef struct launch_job_ext {
    struct gcn_launch_job job;
    int coop;                 /* gcn_launch_cooperative: run_coop on worker 0 */
} launch_job_ext;

/* Co-residency bound of a cooperative dispatch: 64 CUs x 40 wave slots (R9
 * Nano; GCN3 ISA manual Sec. 1: 10 waves per SIMD, 4 SIMDs per CU). The HIP
 * runtime applies the exact occupancy rule before launching. */
#define COOP_MAX_WAVES (64u * 40u)

/* One workgroup of a cooperative dispatch. */
typedef struct coop_wg {
    gcn_wave *waves;
    uint8_t *gws_wait;        /* per wave: blocked at the GWS barrier */
    trc_wg_rec *rec;          /* NULL when not recording */
    int done;
    struct gcn_wg ctx;
} coop_wg;

static void coop_fail(struct gcn_launch_job *job, gcn_launch_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void coop_fail(struct gcn_launch_job *job, gcn_launch_status st, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    gcn_job_error(job, st, msg);
}

/* Run every workgroup of a cooperative dispatch interleaved on this worker
 * (see the file comment): round robin over the workgroups, each until its
 * waves block or end; the GWS barrier releases when its count arrived. A pass
 * in which no wave can run is a deadlock and fails the launch. */
/* Per cooperative launch: the grid barrier (ds_gws_barrier) in flight. */
typedef struct coop_gws {
    uint32_t target;          /* waves it waits for (0: none in flight) */
    uint32_t arrived;
    uint32_t res;             /* its GWS resource */
} coop_gws;

/* Set up the n workgroups of a cooperative launch: their waves, registers,
 * LDS and records (the worker's own are restored by the caller). 0, or -1
 * after coop_fail. */
static int coop_init_wgs(gcn_worker *wk, struct gcn_launch_job *job, coop_wg *g, gcn_wave *waves, uint8_t *wait,
                         uint32_t (*vgprs)[GCN_WAVE_LANES], uint8_t *lds, uint8_t *save_lds)
{
    const gcn_launch_params *p = job->p;
    const char *kn = job->k->name;
    uint32_t n = job->n_wg, nw = job->waves_per_wg;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t wg_id[3] = {i % p->grid[0], (i / p->grid[0]) % p->grid[1],
                             (uint32_t)((uint64_t)i / ((uint64_t)p->grid[0] * p->grid[1]))};
        coop_wg *c = &g[i];
        c->waves = waves + (size_t)i * nw;
        c->gws_wait = wait + (size_t)i * nw;
        c->ctx.m = job->m;
        if (job->recording) {
            c->rec = trc_wg_rec_create();
            if (!c->rec) {
                coop_fail(job, GCN_LAUNCH_NOMEM, "cooperative launch of %s: out of memory recording %u workgroups",
                          kn, n);
                return -1;
            }
            trc_wg_rec_begin(c->rec, job->kernel_id, wg_id, nw);
            trc_wg_rec_stream(c->rec, job->m->cfg.trace);
            trc_wg_rec_scratch_data(c->rec, job->m->cfg.scratch_data);
            trc_wg_rec_hash_loads(c->rec, job->m->cfg.hash_loads);
        trc_wg_rec_lds_data(c->rec, !job->m->cfg.no_lds_values);
        trc_wg_rec_host_image(c->rec, job->m->cfg.host_image ? job->m->cfg.trace : NULL);
        }
        wk->vgprs = vgprs + (size_t)i * nw * job->n_vgpr;
        wk->lds = lds ? lds + (size_t)i * job->lds_size : save_lds;
        wk->rec = c->rec;
        for (uint32_t wi = 0; wi < nw; wi++) {
            gcn_wave_init_state(wk, job, &c->waves[wi], wi, i, wg_id, &c->ctx);
            if (c->rec)
                trc_rec_exec(c->rec, wi, 0, gcn_exec_mask(&c->waves[wi]));
        }
    }
    return 0;
}

/* One pass over workgroup c's waves (nw each; nwaves in the launch): each
 * runs a slice; waves at the grid barrier join gw; a workgroup whose waves
 * all ended is committed, one whose waves all wait at s_barrier is
 * released. *progress is set when anything moved. 0, or -1 after
 * coop_fail / gcn_job_error. */
static int coop_step_wg(struct gcn_launch_job *job, coop_wg *c, uint32_t nw, size_t nwaves, coop_gws *gw,
                        int *progress, uint32_t *n_done_wg)
{
    const char *kn = job->k->name;
    uint32_t n_done = 0, n_barrier = 0;
    for (uint32_t wi = 0; wi < nw; wi++) {
        gcn_wave *w = &c->waves[wi];
        if (c->gws_wait[wi])
            continue;
        if (w->status == GCN_WAVE_SLEEP || w->status == GCN_WAVE_SPIN) {
            if (w->status == GCN_WAVE_SLEEP && job->m->cfg.on_wave_sleep)
                job->m->cfg.on_wave_sleep(job->m->cfg.on_wave_sleep_arg);
            w->status = GCN_WAVE_RUNNING;
        }
        if (w->status == GCN_WAVE_RUNNING) {
            w->slice_end = w->n_instr + GCN_SCHED_SLICE;
            w->preempt = (const int *)&job->stop;
            gcn_wave_run(w);
            /* a wave that waits and whose state repeats is no progress
             * (gcn_sched.c); anything else is */
            if (w->status == GCN_WAVE_SPIN || (w->status == GCN_WAVE_SLEEP && w->stuck)) {
                if (!gcn_sched_quiet_yield(w))
                    *progress = 1;
            } else {
                *progress = 1;
                w->yield_hash = 0;
            }
        }
        gcn_launch_status ls;
        if (w->status == GCN_WAVE_GWS_BARRIER) {
            /* the wave waits at the GWS unit; one barrier (resource) in flight at a time */
            uint32_t cnt = w->gws_count;
            if (cnt > nwaves || (gw->target && (cnt != gw->target || w->gws_resource != gw->res))) {
                coop_fail(job, GCN_LAUNCH_ILLEGAL_INSN,
                          "kernel %s: wg (%u,%u,%u) wave %u pc 0x%" PRIx64 ": ds_gws_barrier (resource %u) "
                          "waits for %u waves but %s", kn, w->wg_id[0], w->wg_id[1], w->wg_id[2], wi,
                          w->pc - 8, w->gws_resource, cnt,
                          cnt > nwaves ? "the dispatch has fewer (it would hang)"
                          : cnt != gw->target ? "other waves of this barrier wait for a different count"
                                              : "another GWS resource is in use (only one is modelled)");
                return -1;
            }
            gw->target = cnt;
            gw->res = w->gws_resource;
            c->gws_wait[wi] = 1;
            gw->arrived++;
        } else if (gcn_wave_error_status((gcn_wave_status)w->status, &ls)) {
            gcn_job_error(job, ls, w->err[0] ? w->err : "wave stopped with an error and no message");
            return -1;
        } else if (w->status == GCN_WAVE_DONE) {
            n_done++;
        } else if (w->status == GCN_WAVE_BARRIER) {
            n_barrier++;
        }
    }
    if (n_done == nw) {
        c->done = 1;
        (*n_done_wg)++;
        if (c->rec && trc_wg_commit(job->m->cfg.trace, c->rec) != 0 &&
            !trc_writer_failed(job->m->cfg.trace)) {
            coop_fail(job, GCN_LAUNCH_TRACE_ERROR, "trace: %s", trc_writer_error(job->m->cfg.trace));
            return -1;
        }
    } else if (n_barrier && n_done + n_barrier == nw) {
        for (uint32_t wi = 0; wi < nw; wi++)
            if (c->waves[wi].status == GCN_WAVE_BARRIER)
                c->waves[wi].status = GCN_WAVE_RUNNING;
        *progress = 1;
    }
    return 0;
}

static void run_coop(gcn_worker *wk, struct gcn_launch_job *job)
{
    const char *kn = job->k->name;
    uint32_t n = job->n_wg, nw = job->waves_per_wg;
    size_t nwaves = (size_t)n * nw;
    coop_wg *g = calloc(n, sizeof(*g));
    gcn_wave *waves = calloc(nwaves, sizeof(*waves));
    uint8_t *wait = calloc(nwaves, 1);
    uint32_t(*vgprs)[GCN_WAVE_LANES] = calloc(nwaves * job->n_vgpr, sizeof(*vgprs));
    uint8_t *lds = job->lds_size ? calloc(n, job->lds_size) : NULL;
    uint32_t(*save_vgprs)[GCN_WAVE_LANES] = wk->vgprs;
    uint8_t *save_lds = wk->lds;
    trc_wg_rec *save_rec = wk->rec;
    uint32_t n_done_wg = 0, quiet_passes = 0;
    coop_gws gw = {0, 0, 0};
    if (!g || !waves || !wait || !vgprs || (job->lds_size && !lds)) {
        coop_fail(job, GCN_LAUNCH_NOMEM, "cooperative launch of %s: cannot allocate the state of %u workgroups",
                  kn, n);
        goto out;
    }
    if (coop_init_wgs(wk, job, g, waves, wait, vgprs, lds, save_lds))
        goto out;
    wk->vgprs = save_vgprs;
    wk->lds = save_lds;
    wk->rec = save_rec;
    while (n_done_wg < n && !atomic_load_explicit(&job->stop, memory_order_relaxed)) {
        int progress = 0;
        for (uint32_t i = 0; i < n; i++)
            if (!g[i].done && coop_step_wg(job, &g[i], nw, nwaves, &gw, &progress, &n_done_wg))
                goto out;
        if (gw.target && gw.arrived >= gw.target) {
            for (size_t k = 0; k < nwaves; k++)
                if (wait[k])
                    waves[k].status = GCN_WAVE_RUNNING;
            memset(wait, 0, nwaves);
            gw.arrived = 0;
            gw.target = 0;
            progress = 1;
        }
        /* three passes in a row without progress: a change one wave made after
         * another looked is seen by the next pass */
        quiet_passes = progress ? 0 : quiet_passes + 1;
        if (quiet_passes >= 3 && n_done_wg < n) {
            coop_fail(job, GCN_LAUNCH_DEADLOCK,
                      "cooperative launch of %s: deadlock: %u waves wait at the grid barrier (ds_gws_barrier) "
                      "for %u, %u of %u workgroups ended, the others wait in loops that make no progress; "
                      "the kernel would hang on the GPU",
                      kn, gw.arrived, gw.target, n_done_wg, n);
            goto out;
        }
    }
out:
    wk->vgprs = save_vgprs;
    wk->lds = save_lds;
    wk->rec = save_rec;
    if (g)
        for (uint32_t i = 0; i < n; i++)
            trc_wg_rec_destroy(g[i].rec);
    if (waves)
        for (size_t i = 0; i < nwaves; i++)
            wk->n_instr += waves[i].n_instr;
    wk->n_waves += nwaves;
    free(g);
    free(waves);
    free(wait);
    free(vgprs);
    free(lds);
}

void gcn_worker_run_job(gcn_worker *wk, struct gcn_launch_job *job)
{
    wk->n_instr = 0;
    wk->n_waves = 0;
    memset(&wk->cache, 0, sizeof(wk->cache));
    if (((launch_job_ext *)job)->coop) {
        if (wk->index == 0)
            run_coop(wk, job);
        return;
    }
    if (job->serial && wk->index != 0)
        return; /* worker 0 runs it alone (its quiet stays -1: no part in the deadlock test) */
    gcn_sched_run(wk, job);
}

static gcn_launch_status fail(gcn_launch_result *res, gcn_launch_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static gcn_launch_status fail(gcn_launch_result *res, gcn_launch_status st, const char *fmt, ...)
{
    res->status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->message, sizeof(res->message), fmt, ap);
    va_end(ap);
    return st;
}

/* Number of user SGPRs the descriptor's enables place (AMDGPUUsage table
 * "User SGPRs"). */
static uint32_t user_sgprs_placed(const gcn_kernel_desc *kd)
{
    return 4u * !!kd->enable_sgpr_private_segment_buffer + 2u * !!kd->enable_sgpr_dispatch_ptr +
           2u * !!kd->enable_sgpr_queue_ptr + 2u * !!kd->enable_sgpr_kernarg_segment_ptr +
           2u * !!kd->enable_sgpr_dispatch_id + 2u * !!kd->enable_sgpr_flat_scratch_init +
           1u * !!kd->enable_sgpr_private_segment_size;
}

static void wr16(uint8_t *b, uint32_t off, uint16_t v) { memcpy(b + off, &v, 2); }
static void wr32(uint8_t *b, uint32_t off, uint32_t v) { memcpy(b + off, &v, 4); }
static void wr64(uint8_t *b, uint32_t off, uint64_t v) { memcpy(b + off, &v, 8); }

/* The dispatch packet and the queue a kernel sees through its dispatch and
 * queue pointers, in its kernarg allocation ka (at device address ka_base):
 * hsa_kernel_dispatch_packet_t (HSA runtime hsa.h) at KA_PACKET and
 * amd_queue_t (ROCr amd_hsa_queue.h) at KA_QUEUE. */
static void write_dispatch_state(uint8_t *ka, uint64_t ka_base, const gcn_module *mod, const gcn_kernel *k,
                                 const gcn_launch_params *p, uint32_t private_size, uint64_t lds,
                                 uint64_t dispatch_id, uint64_t scratch_base, uint64_t scratch_size)
{
    /* hsa_kernel_dispatch_packet_t (HSA runtime hsa.h). Header: type
     * KERNEL_DISPATCH (2), barrier bit, acquire/release fence scope SYSTEM (2). */
    uint8_t *pk = ka + KA_PACKET;
    wr16(pk, 0x00, (uint16_t)(2u | 1u << 8 | 2u << 9 | 2u << 11));
    wr16(pk, 0x02, 3); /* setup: dimensions (HIP launches are always 3-D) */
    wr16(pk, 0x04, (uint16_t)p->wg_size[0]);
    wr16(pk, 0x06, (uint16_t)p->wg_size[1]);
    wr16(pk, 0x08, (uint16_t)p->wg_size[2]);
    for (int d = 0; d < 3; d++)
        wr32(pk, 0x0c + 4 * d, p->grid[d] * p->wg_size[d]); /* work-items */
    wr32(pk, 0x18, private_size);
    wr32(pk, 0x1c, (uint32_t)lds);
    wr64(pk, 0x20, gcn_module_base(mod) + k->kd_vaddr);
    wr64(pk, 0x28, ka_base + KA_KERNARG);
    wr64(pk, 0x38, 0); /* completion signal: none visible to the kernel */
    /* amd_queue_t (ROCr amd_hsa_queue.h): hsa_queue_t then AMD fields. */
    uint8_t *q = ka + KA_QUEUE;
    wr32(q, 0x00, 0);                              /* type MULTI */
    wr32(q, 0x04, 1);                              /* features: KERNEL_DISPATCH */
    wr64(q, 0x08, ka_base + KA_PACKET);            /* base_address: the ring (one packet) */
    wr32(q, 0x18, 1);                              /* size in packets */
    wr64(q, 0x20, p->device);                      /* id */
    wr64(q, 0x38, dispatch_id + 1);                /* write_dispatch_id */
    wr32(q, 0x40, GCN_GROUP_APERTURE_HI);          /* group_segment_aperture_base_hi */
    wr32(q, 0x44, GCN_PRIVATE_APERTURE_HI);        /* private_segment_aperture_base_hi */
    wr32(q, 0x48, 63);                             /* max_cu_id (R9 Nano: 64 CUs) */
    wr32(q, 0x4c, 39);                             /* max_wave_id (40 waves per CU) */
    wr64(q, 0x80, dispatch_id);                    /* read_dispatch_id */
    wr32(q, 0x90, (uint32_t)scratch_base);         /* scratch_resource_descriptor[4] */
    wr32(q, 0x94, ((uint32_t)(scratch_base >> 32) & 0xffffu) | 1u << 31);
    wr32(q, 0x98, scratch_size > UINT32_MAX ? UINT32_MAX : (uint32_t)scratch_size);
    wr32(q, 0x9c, GCN_SCRATCH_RSRC_WORD3);
    wr64(q, 0xa0, scratch_base);                   /* scratch_backing_memory_location */
    wr64(q, 0xa8, scratch_size);                   /* scratch_backing_memory_byte_size */
    wr32(q, 0xb0, private_size);                   /* scratch_workitem_byte_size */
}

/* Wait for the workers (pool_lock held), printing a progress line every half
 * second once the kernel has run that long (gcn_machine_config.progress). */
static void wait_with_progress(gcn_machine *m, struct gcn_launch_job *job, const struct timespec *t0)
{
    int shown = 0;
    while (m->workers_busy > 0) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_nsec += 500000000L;
        if (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&m->pool_done, &m->pool_lock, &dl);
        if (m->workers_busy == 0)
            break;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double s = (double)(now.tv_sec - t0->tv_sec) + 1e-9 * (double)(now.tv_nsec - t0->tv_nsec);
        if (s < 0.5)
            continue;
        uint32_t next = atomic_load(&job->next_wg), res = atomic_load(&job->resident);
        uint32_t adm = next < job->n_wg ? next : job->n_wg;
        fprintf(stderr, "%sgcn3-emu: kernel %.60s: %u of %u workgroups done, %u resident, %.1f s%s",
                m->cfg.progress_tty ? "\r\033[K" : "", job->k->name, adm > res ? adm - res : 0, job->n_wg, res, s,
                m->cfg.progress_tty ? "" : "\n");
        fflush(stderr);
        shown = 1;
    }
    if (shown && m->cfg.progress_tty)
        fputs("\r\033[K", stderr);
}

/* What a launch needs, derived from its kernel and parameters by
 * launch_shape (all checked there). */
typedef struct launch_shape {
    uint64_t wg_items, n_wg, lds, slice, scratch_size;
    uint32_t n_vgpr, sgprs, private_size, waves_per_wg, ka_bytes;
} launch_shape;

/* Checks the launch (grid, workgroup, LDS, SGPR/VGPR and scratch limits of
 * the kernel descriptor, AMDGPUUsage "Kernel Descriptor") and fills sh.
 * GCN_LAUNCH_OK, or the failure written into res. */
static gcn_launch_status launch_shape_of(gcn_machine *m, const gcn_module *mod, const gcn_kernel *k,
                                         const gcn_launch_params *p, gcn_launch_result *res, launch_shape *sh)
{
    const char *kn = k->name;
    const gcn_kernel_desc *kd = &k->kd;
    if (k->co != mod->co)
        return fail(res, GCN_LAUNCH_BAD_CONFIG, "launch of %s: kernel does not belong to the module", kn);
    if (p->device >= m->cfg.n_gpus)
        return fail(res, GCN_LAUNCH_BAD_CONFIG, "launch of %s: device %u does not exist (%u devices)", kn,
                    p->device, m->cfg.n_gpus);
    for (int d = 0; d < 3; d++) {
        if (p->grid[d] == 0 || p->wg_size[d] == 0)
            return fail(res, GCN_LAUNCH_BAD_CONFIG,
                        "launch of %s: grid (%u,%u,%u) x workgroup (%u,%u,%u) has a zero dimension", kn,
                        p->grid[0], p->grid[1], p->grid[2], p->wg_size[0], p->wg_size[1], p->wg_size[2]);
        if ((uint64_t)p->grid[d] * p->wg_size[d] > UINT32_MAX)
            return fail(res, GCN_LAUNCH_BAD_CONFIG,
                        "launch of %s: grid size in dimension %d (%u workgroups x %u) exceeds 2^32-1 work-items",
                        kn, d, p->grid[d], p->wg_size[d]);
    }
    uint64_t wg_items = (uint64_t)p->wg_size[0] * p->wg_size[1] * p->wg_size[2];
    if (wg_items > GCN_MAX_WG_ITEMS)
        return fail(res, GCN_LAUNCH_BAD_CONFIG, "launch of %s: workgroup (%u,%u,%u) has %" PRIu64
                    " work-items, more than %u", kn, p->wg_size[0], p->wg_size[1], p->wg_size[2],
                    wg_items, GCN_MAX_WG_ITEMS);
    if (k->max_flat_workgroup_size && wg_items > k->max_flat_workgroup_size)
        return fail(res, GCN_LAUNCH_BAD_CONFIG, "launch of %s: workgroup of %" PRIu64
                    " work-items exceeds the kernel's .max_flat_workgroup_size %u", kn, wg_items,
                    k->max_flat_workgroup_size);
    uint64_t n_wg64 = (uint64_t)p->grid[0] * p->grid[1] * p->grid[2];
    if (n_wg64 > UINT32_MAX)
        return fail(res, GCN_LAUNCH_BAD_CONFIG, "launch of %s: %" PRIu64 " workgroups, more than 2^32-1", kn,
                    n_wg64);
    uint32_t static_lds = kd->group_segment_fixed_size > k->group_segment_fixed_size
                              ? kd->group_segment_fixed_size : k->group_segment_fixed_size;
    uint64_t lds = (uint64_t)static_lds + p->dynamic_lds;
    if (lds > GCN_MAX_LDS)
        return fail(res, GCN_LAUNCH_BAD_CONFIG, "launch of %s: LDS %u static + %u dynamic bytes exceeds %u",
                    kn, static_lds, p->dynamic_lds, GCN_MAX_LDS);
    uint32_t placed = user_sgprs_placed(kd);
    if (placed != kd->user_sgpr_count)
        return fail(res, GCN_LAUNCH_BAD_CONFIG,
                    "launch of %s: kernel descriptor enables %u user SGPRs but rsrc2.USER_SGPR is %u", kn,
                    placed, kd->user_sgpr_count);
    uint32_t n_sys = !!kd->enable_sgpr_workgroup_id[0] + !!kd->enable_sgpr_workgroup_id[1] +
                     !!kd->enable_sgpr_workgroup_id[2] + !!kd->enable_sgpr_workgroup_info +
                     !!kd->enable_private_segment;
    if (kd->user_sgpr_count + n_sys > 102)
        return fail(res, GCN_LAUNCH_BAD_CONFIG, "launch of %s: %u user + %u system SGPRs exceed 102", kn,
                    kd->user_sgpr_count, n_sys);
    uint32_t n_vgpr = kd->vgpr_count;
    if (n_vgpr < k->vgpr_count)
        n_vgpr = k->vgpr_count;
    if (n_vgpr < 1u + kd->enable_vgpr_workitem_id)
        n_vgpr = 1u + kd->enable_vgpr_workitem_id;
    if (n_vgpr > 256)
        return fail(res, GCN_LAUNCH_BAD_CONFIG, "launch of %s: kernel descriptor asks for %u VGPRs (max 256)",
                    kn, n_vgpr);
    uint32_t private_size = kd->private_segment_fixed_size > k->private_segment_fixed_size
                                ? kd->private_segment_fixed_size : k->private_segment_fixed_size;
    uint32_t waves_per_wg = (uint32_t)((wg_items + GCN_WAVE_LANES - 1) / GCN_WAVE_LANES);
    uint64_t total_waves = n_wg64 * waves_per_wg;
    uint64_t slice = (((uint64_t)private_size + 3) & ~3ull) * GCN_WAVE_LANES;
    uint64_t scratch_size = private_size ? total_waves * slice : 0;
    if (private_size && (scratch_size / slice != total_waves || scratch_size > (1ull << 46)))
        return fail(res, GCN_LAUNCH_NOMEM,
                    "launch of %s: scratch of %" PRIu64 " waves x %" PRIu64
                    " bytes exceeds 64 TiB; reduce the grid", kn, total_waves, slice);
    if (p->kernarg_size && !p->kernarg)
        return fail(res, GCN_LAUNCH_BAD_CONFIG, "launch of %s: kernarg_size %u but no kernarg bytes", kn,
                    p->kernarg_size);
    *sh = (launch_shape){.wg_items = wg_items, .n_wg = n_wg64, .lds = lds, .slice = slice,
                         .scratch_size = scratch_size, .n_vgpr = n_vgpr,
                         .sgprs = kd->sgpr_count > k->sgpr_count ? kd->sgpr_count : k->sgpr_count,
                         .private_size = private_size, .waves_per_wg = waves_per_wg,
                         .ka_bytes = p->kernarg_size > k->kernarg_segment_size ? p->kernarg_size
                                                                               : k->kernarg_segment_size};
    return GCN_LAUNCH_OK;
}

/* Sets up the job the workers run (its residency limit: what the replay's
 * dispatcher lets one GPU hold, gcn_sched.c). */
static void job_init(launch_job_ext *jx, gcn_machine *m, const gcn_module *mod, const gcn_kernel *k,
                     const gcn_launch_params *p, const launch_shape *sh, int coop, uint64_t ka_base,
                     uint64_t scratch_base, uint64_t dispatch_id)
{
    memset(jx, 0, sizeof(*jx));
    jx->coop = coop;
    jx->job.m = m;
    jx->job.mod = mod;
    jx->job.k = k;
    jx->job.p = p;
    jx->job.n_wg = (uint32_t)sh->n_wg;
    jx->job.wg_items = (uint32_t)sh->wg_items;
    jx->job.waves_per_wg = sh->waves_per_wg;
    jx->job.lds_size = (uint32_t)sh->lds;
    jx->job.n_vgpr = sh->n_vgpr;
    jx->job.private_size = sh->private_size;
    jx->job.mode = gcn_initial_mode(&k->kd);
    jx->job.scratch_base = scratch_base;
    jx->job.slice = sh->slice;
    jx->job.scratch_size = sh->scratch_size;
    jx->job.dispatch_ptr = ka_base + KA_PACKET;
    jx->job.queue_ptr = ka_base + KA_QUEUE;
    jx->job.kernarg_ptr = ka_base + KA_KERNARG;
    jx->job.dispatch_id = dispatch_id;
    /* A writer that failed (full disk) stops recording, not the program:
     * later kernels run unrecorded (the HIP layer says so once). */
    jx->job.recording = m->cfg.trace != NULL && !trc_writer_failed(m->cfg.trace);
    atomic_init(&jx->job.next_wg, 0);
    gcn_cu_limits lim = GCN3_R9NANO_CU_LIMITS;
    uint64_t per_gpu =
        (uint64_t)gcn_wgs_per_cu(&lim, sh->waves_per_wg, sh->n_vgpr, sh->sgprs, sh->lds) * GCN3_R9NANO_CUS;
    jx->job.max_resident = per_gpu > UINT32_MAX ? UINT32_MAX : per_gpu ? (uint32_t)per_gpu : 1u;
    atomic_init(&jx->job.resident, 0);
    atomic_init(&jx->job.epoch, 0);
    atomic_init(&jx->job.deadlock, 0);
    atomic_init(&jx->job.report_lines, 0);
    for (uint32_t i = 0; i < m->n_workers; i++)
        atomic_store(&m->workers[i].quiet, -1);
    atomic_init(&jx->job.stop, 0);
    pthread_mutex_init(&jx->job.err_lock, NULL);
    jx->job.status = GCN_LAUNCH_OK;
}

/* Writes the kernarg allocation's initial contents and the LAUNCH event;
 * sets jx->job.kernel_id. A writer that has failed turns recording off for
 * this kernel. GCN_LAUNCH_OK or the failure written into res. */
static gcn_launch_status record_launch(launch_job_ext *jx, gcn_launch_result *res, const launch_shape *sh,
                                       uint8_t *ka, uint64_t ka_alloc_size)
{
    gcn_machine *m = jx->job.m;
    const gcn_module *mod = jx->job.mod;
    const gcn_kernel *k = jx->job.k;
    const gcn_launch_params *p = jx->job.p;
    uint64_t ka_base = (uint64_t)(uintptr_t)ka;
    gcn_launch_status st = GCN_LAUNCH_OK;
    trc_writer *tw = m->cfg.trace;
    trc_event ev = {.kind = TRC_EV_COPY, .device = p->device, .addr = ka_base, .size = ka_alloc_size,
                    .copy_kind = TRC_COPY_INIT, .data = ka};
    trc_launch tl;
    memset(&tl, 0, sizeof(tl));
    tl.device = p->device;
    tl.stream = p->stream;
    tl.code_object_id = mod->trace_co_id < 0 ? 0 : (uint32_t)mod->trace_co_id;
    snprintf(tl.kernel_name, sizeof(tl.kernel_name), "%s", k->name);
    tl.entry_vaddr = k->entry_vaddr;
    memcpy(tl.grid, p->grid, sizeof(tl.grid));
    memcpy(tl.wg_size, p->wg_size, sizeof(tl.wg_size));
    tl.waves_per_wg = sh->waves_per_wg;
    tl.group_segment_size = (uint32_t)sh->lds;
    tl.private_segment_size = sh->private_size;
    tl.vgpr_count = sh->n_vgpr;
    tl.sgpr_count = sh->sgprs;
    tl.kernarg_addr = ka_base + KA_KERNARG;
    tl.kernarg_size = sh->ka_bytes;
    tl.kernarg = ka + KA_KERNARG;
    pthread_mutex_lock(&m->trace_lock);
    int rc = mod->trace_co_id < 0 ? -1 : trc_writer_event(tw, &ev);
    if (rc == 0)
        rc = trc_writer_begin_kernel(tw, &tl);
    if (rc != 0 && mod->trace_co_id >= 0 && trc_writer_failed(tw)) {
        jx->job.recording = 0; /* the writer failed: the kernel runs unrecorded */
    } else if (rc != 0) {
        st = fail(res, GCN_LAUNCH_TRACE_ERROR, "launch of %s: trace: %s", k->name,
                  mod->trace_co_id < 0 ? "module was loaded without a trace (no code object id)"
                                       : trc_writer_error(tw));
    }
    pthread_mutex_unlock(&m->trace_lock);
    jx->job.kernel_id = tl.kernel_id;
    return st;
}

/* Hands the job to the worker pool and waits for it (with a progress line
 * when asked); a signal that interrupted it becomes the job's status. */
static void run_job(launch_job_ext *jx, int coop, const struct timespec *t0)
{
    gcn_machine *m = jx->job.m;
    atomic_fetch_add(&m->launches_active, 1); /* seq_cst: pairs with the table publish */
    atomic_store(&m->interrupt, 0);
    atomic_store(&m->stop_flag, &jx->job.stop);
    pthread_mutex_lock(&m->pool_lock);
    m->job = &jx->job;
    m->job_seq++;
    m->workers_busy = m->n_workers;
    pthread_cond_broadcast(&m->pool_wake);
    if (!m->cfg.progress || coop) {
        while (m->workers_busy > 0)
            pthread_cond_wait(&m->pool_done, &m->pool_lock);
    } else {
        wait_with_progress(m, &jx->job, t0);
    }
    m->job = NULL;
    pthread_mutex_unlock(&m->pool_lock);
    atomic_store(&m->stop_flag, NULL);
    int sig = atomic_load(&m->interrupt);
    if (sig) {
        pthread_mutex_lock(&jx->job.err_lock);
        if (jx->job.status == GCN_LAUNCH_OK) {
            jx->job.status = GCN_LAUNCH_INTERRUPTED;
            snprintf(jx->job.message, sizeof jx->job.message,
                     "kernel %s: interrupted by signal %d (%s); where each resident wave was is listed above",
                     jx->job.k->name, sig, strsignal(sig));
        }
        pthread_mutex_unlock(&jx->job.err_lock);
    }
    atomic_fetch_sub(&m->launches_active, 1);
    gcn_mem_reclaim(m);
}

/* The result of a job that ran: instruction and wave counts, its status,
 * and the end of its kernel in the trace. */
static gcn_launch_status finish_job(launch_job_ext *jx, gcn_launch_result *res)
{
    gcn_machine *m = jx->job.m;
    gcn_launch_status st = GCN_LAUNCH_OK;
    for (uint32_t i = 0; i < m->n_workers; i++) {
        res->wave_instructions += m->workers[i].n_instr;
        res->waves += m->workers[i].n_waves;
    }
    if (jx->job.status != GCN_LAUNCH_OK) {
        st = jx->job.status;
        res->status = st;
        snprintf(res->message, sizeof(res->message), "%s", jx->job.message);
    }
    if (jx->job.recording) {
        pthread_mutex_lock(&m->trace_lock);
        if (trc_writer_end_kernel(m->cfg.trace, jx->job.kernel_id) != 0 && st == GCN_LAUNCH_OK &&
            !trc_writer_failed(m->cfg.trace)) {
            st = fail(res, GCN_LAUNCH_TRACE_ERROR, "launch of %s: trace: %s", jx->job.k->name,
                      trc_writer_error(m->cfg.trace));
        }
        pthread_mutex_unlock(&m->trace_lock);
    }
    return st;
}

static gcn_launch_status launch_impl(gcn_machine *m, const gcn_module *mod, const gcn_kernel *k,
                                     const gcn_launch_params *p, gcn_launch_result *res, int coop)
{
    gcn_launch_result dummy;
    if (!res)
        res = &dummy;
    memset(res, 0, sizeof(*res));
    if (!m || !mod || !k || !p)
        return fail(res, GCN_LAUNCH_BAD_CONFIG, "gcn_launch: missing machine, module, kernel or parameters");
    const char *kn = k->name;
    launch_shape sh = {0};
    gcn_launch_status st = launch_shape_of(m, mod, k, p, res, &sh);
    if (st != GCN_LAUNCH_OK)
        return st;

    /* Kernarg allocation: queue, dispatch packet, kernarg segment; scratch. */
    uint64_t ka_alloc_size = KA_KERNARG + (((uint64_t)sh.ka_bytes + 255) & ~255ull) + KA_TAIL;
    uint8_t *ka = gcn_mem_alloc(m, p->device, ka_alloc_size, TRC_MEM_KERNARG);
    if (!ka)
        return fail(res, GCN_LAUNCH_NOMEM, "launch of %s: cannot allocate %" PRIu64 " bytes of kernarg memory",
                    kn, ka_alloc_size);
    uint8_t *scratch = NULL;
    if (sh.scratch_size) {
        scratch = gcn_mem_alloc(m, p->device, sh.scratch_size, TRC_MEM_SCRATCH);
        if (!scratch) {
            gcn_mem_free(m, ka);
            return fail(res, GCN_LAUNCH_NOMEM, "launch of %s: cannot allocate %" PRIu64 " bytes of scratch", kn,
                        sh.scratch_size);
        }
    }
    uint64_t ka_base = (uint64_t)(uintptr_t)ka;
    uint64_t scratch_base = (uint64_t)(uintptr_t)scratch;
    uint64_t dispatch_id = m->dispatch_id++;
    if (p->kernarg_size)
        memcpy(ka + KA_KERNARG, p->kernarg, p->kernarg_size);
    write_dispatch_state(ka, ka_base, mod, k, p, sh.private_size, sh.lds, dispatch_id, scratch_base,
                         sh.scratch_size);

    launch_job_ext jx;
    job_init(&jx, m, mod, k, p, &sh, coop, ka_base, scratch_base, dispatch_id);
    /* a kernel that may wait on other workgroups runs on worker 0 alone
     * (gcn_worker_run_job), unless --parallel-waits */
    if (!m->cfg.parallel_waits && m->n_workers >= 2) {
        const gcn_code_object *co = mod->co;
        if (co && k >= co->kernels && k < co->kernels + co->n_kernels) {
            res->sync_reasons = mod->kernel_sync[k - co->kernels].reasons;
            res->sync_pc = mod->kernel_sync[k - co->kernels].pc;
        } else
            res->sync_reasons = gcn_program_sync_reasons(mod->prog, k->entry_vaddr, &res->sync_pc);
        jx.job.serial = res->sync_reasons != 0;
    }
    if (jx.job.recording)
        st = record_launch(&jx, res, &sh, ka, ka_alloc_size);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (st == GCN_LAUNCH_OK)
        run_job(&jx, coop, &t0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (st == GCN_LAUNCH_OK)
        st = finish_job(&jx, res);
    pthread_mutex_destroy(&jx.job.err_lock);
    if (scratch)
        gcn_mem_free(m, scratch);
    gcn_mem_free(m, ka);
    res->status = st;
    return st;
}

gcn_launch_status gcn_launch(gcn_machine *m, const gcn_module *mod, const gcn_kernel *k,
                             const gcn_launch_params *p, gcn_launch_result *res)
{
    return launch_impl(m, mod, k, p, res, 0);
}

gcn_launch_status gcn_launch_cooperative(gcn_machine *m, const gcn_module *mod, const gcn_kernel *k,
                                         const gcn_launch_params *p, gcn_launch_result *res)
{
    gcn_launch_result dummy;
    if (!res)
        res = &dummy;
    if (k && p) {
        uint64_t wg_items = (uint64_t)p->wg_size[0] * p->wg_size[1] * p->wg_size[2];
        uint64_t waves = (uint64_t)p->grid[0] * p->grid[1] * p->grid[2] *
                         ((wg_items + GCN_WAVE_LANES - 1) / GCN_WAVE_LANES);
        if (waves > COOP_MAX_WAVES) {
            memset(res, 0, sizeof(*res));
            return fail(res, GCN_LAUNCH_BAD_CONFIG,
                        "cooperative launch of %s: %" PRIu64 " waves cannot be resident at once (at most %u)",
                        k->name, waves, COOP_MAX_WAVES);
        }
    }
    return launch_impl(m, mod, k, p, res, 1);
}
