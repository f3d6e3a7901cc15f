/*
 * sample.c - sampled replay (sample.enable, mgpu-replay --sample; issue 16,
 * docs/timing-model.md "Sampled replay").
 *
 * Workgroup level: a kernel runs in detail while its rate (wavefront
 * instructions per ps) is measured over windows of sample.window rounds (a
 * round: as many workgroups done as the GPU held at once). After
 * sample.warmup windows, once the last sample.stable groups of f windows
 * agree within sample.tolerance (f = 1, 2, 4, ...: a rate that swings over
 * several rounds agrees over groups longer than its period) and their rate
 * is within sample.tolerance of that of every window since the warm-up, the next
 * sample.period x f rounds of workgroups not yet handed out are
 * fast-forwarded; then one group is measured, and if it confirms the rate
 * the next stretch is sample.period_growth times longer. A
 * fast-forwarded workgroup's stores and atomics reach the memory at once, as
 * the L2 takes a write (allocated, dirty: rp_cache_functional_write), and its
 * loads allocate their lines, so later kernels, copies and the data check see
 * its values and the L2 state it leaves; its time is predicted from the rate
 * measured before it. The last stretch stops sample.tail rounds short of
 * the kernel's end: those workgroups run in detail, handed out as the
 * workgroups in flight end, and the stretch is applied once those are done
 * (grid order in the caches); the kernel then ends the summed predictions
 * (skip_ps) later.
 *
 * Wave level (rp_sample_wave, rp_sim_internal.h): in a kernel's last round
 * (every wave started: one round of long waves, where the workgroup level
 * has nothing to skip), each wave measures its own time per instruction and
 * skips ahead inside the loop it measured, its stores applied when it wakes
 * (one partition, or one per GPU; sent to the memory side at once with the
 * GPU cut), sleeping for
 * the predicted time.
 *
 * Kernel level: launches alike (same kernel, grid, workgroup size and
 * kernarg bytes; or, on one device, other kernarg bytes and vectors from the
 * trace that agree: sample.alike_vectors, a loose group) are fast-forwarded
 * whole once sample.kernels of them (a loose group: at least 3) agree in
 * time per instruction; a loose group replays a launch in detail again
 * after 4, 8, ... 64 skipped. Such a launch's loads allocate their lines only
 * when work replayed in detail may come next (ff_loads_matter).
 *
 * The error bound is each prediction times how the rates it came from moved
 * (spread, drift, distance from the whole detailed rate; at the kernel level
 * the group's spread plus its sampled members' bounds): not how far the
 * skipped work is from the measured work (a kernel whose later workgroups
 * behave unlike its first ones needs a full replay).
 *
 * At the wave level: each skip's prediction times its wave's measured
 * spread, summed and divided by the waves' mean concurrency.
 *
 * Not sampled (replayed in full): kernels whose waves polled (awaits: the
 * time depends on other workgroups), cooperative kernels (grid barrier),
 * kernels with global compare-and-swaps (their recorded order, cache.c),
 * kernels that never reach a stable rate with enough rounds left. No skip is
 * taken whose bound would widen its kernel's past sample.max_bound of its
 * time (too_wide; the wave level decides once for all of a kernel's waves,
 * wave_decide): that work runs in detail. The
 * skipped workgroups' loads are not checked. Sampled replay runs on one
 * thread; with --threads T, T - 1 helpers decode the workgroups a
 * fast-forward skips and apply them with the replay's thread, each thread
 * the L2 banks of its lane (ff_range).
 *
 * Partitions. One GPU cut into partitions (sim.gpu_partitions, optionally
 * sim.dram_partition; not sim.l2_partitions) runs them on --threads threads
 * (rp_sim.smp_parts, parallel.c): the workgroup and kernel levels decide in
 * the dispatcher, on the memory side, and a fast-forward changes only what
 * is there (the L2 banks, the functional memory; the DRAM partition holds no
 * data), while the shader arrays' partitions run their window beside it. What
 * the decision reads must not depend on how far those have got: the
 * instructions of the workgroups whose WG_DONE the dispatcher handled
 * (rp_kernel.wg_instr_done) stand for the kernel's, and their polls for its
 * polls, so the windows' rates are those of whole workgroups (a model
 * variant: T = 1 gives the same result). At the wave level a wave reads of
 * its kernel only what the serial points between windows publish
 * (rp_sample_publish: off, or every workgroup handed out, which stands for
 * "every wave started"), counts in its workgroup what the dispatcher adds to
 * the kernel at WG_DONE, and sends what its skip stores, atomically updates
 * and loads to the dispatcher (RP_MSG_FF_APPLY over its CU's link there,
 * the lookahead's latency or more), which applies it when it arrives
 * instead of at once.
 *
 * A unified multi-GPU topology with a partition per GPU (u-mgpu; not with
 * the cut inside the GPUs) runs them on --threads threads the same way
 * (rp_sim.smp_defer): its one dispatcher, on GPU 0, decides the workgroup and
 * kernel levels from the workgroups whose end it saw, and the waves, on
 * every GPU, from what the serial points publish (a compare-and-swap seen by
 * any GPU's L2 stops the workgroup level at the next serial point,
 * rp_ksample.pub_cas). A fast-forward is applied where it runs (the
 * dispatcher's workgroup and kernel levels, a wave's skip on its own GPU's
 * partition): what it does to that partition's L2 banks at once, and what it
 * does to another partition's (a line another GPU's L2 holds: three lines of
 * four with u-mgpu's interleaved pages) at the next serial point, each
 * partition's in order, partitions in order (its pool's defer list, bytes
 * copied). Between, the GPUs' detailed work may not see those lines: it
 * reads what skipped workgroups of the same kernel wrote only if workgroups
 * observe each other, which the sampler does not skip. A model variant: the
 * same result for every T, not that of one partition. No helpers decode
 * (each partition has its own pool, used by its own thread). A discrete
 * multi-GPU topology (d-mgpu) runs the same way, with a dispatcher per GPU in
 * its GPU's partition: the kernel level's groups, which all share, are only
 * read during a window; a launch joins its group, and adds its time to it,
 * at the serial point that handles its start and end notes
 * (rp_sim.smp_serial_groups, rp_sample_note), in partition order; each
 * partition counts what it skipped until the next serial point (whether a
 * kernel ran after skipped work: skip_seen).
 */
#include "rp_sim_internal.h"
#include "rp_lanes.h"
#include "gcn/gcn_occupancy.h"

#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- fast-forward: what a skipped wave does to the memory ------------------------------------
 * A skipped wave's memory ops become lists of actions (ff_collect, on any
 * thread: it only reads the record), one list per apply lane: an action
 * goes to the lane of the L2 bank that holds its line (ff_lane). The lanes
 * apply their lists (ff_apply: the L2s and the functional memory) each in
 * grid order and wave order. A line is in exactly one bank, and everything
 * applying an action does (the bank's tags, ages, data and write-backs, the
 * functional memory of that line) belongs to that line's bank, so every bank
 * sees the same actions in the same order as on one thread: the result is
 * the same for any number of lanes. A fast-forward of many workgroups runs
 * on the replay's thread and the --threads T - 1 helpers: each thread
 * decodes workgroups ahead and applies its own lane. */

typedef struct ff_act {
    uint64_t addr;       /* load: its line; store: the first byte of a run inside one line; atomic: the lane's address */
    const uint8_t *src;  /* store: the run's bytes (inside the workgroup's record; deferred: FF_DEFERRED_BYTES) */
    uint64_t asrc, acmp; /* atomic: operand and compare value; a deferred store: its bytes' offset (ff_defer) */
    uint32_t n;          /* store: run bytes; atomic: 4 or 8 bytes; load: lines from addr on (0: one) */
    uint8_t aop;         /* atomic: its gcn_atomic_op; GCN_AT_NONE otherwise */
    uint16_t gpu;        /* deferred: the GPU whose side applies it (ff_apply's g) */
} ff_act;

/* A deferred store's src: its bytes are in its partition's pool (rp_ffpool.dbytes) at asrc */
#define FF_DEFERRED_BYTES ((const uint8_t *)1)

typedef struct ff_list {
    ff_act *a;
    size_t n, cap;
} ff_list;

static ff_act *ff_push(ff_list *l)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        ff_act *a = realloc(l->a, cap * sizeof *a);
        if (!a)
            return NULL;
        l->a = a;
        l->cap = cap;
    }
    return &l->a[l->n++];
}

/* Where a fast-forward's actions go: lanes lists, from GPU g's side. */
typedef struct ff_route {
    rp_sim *s;
    uint32_t g, lanes;
    ff_list *l;
    bool loads; /* loads allocate their lines (else only stores and atomics act) */
} ff_route;

/* The lane of line's L2 bank (its GPU's banks numbered after the previous
 * GPUs'). With pages that move (unified memory placement) everything is lane
 * 0: where a line lives may then depend on what was applied before it. Any
 * thread: reads only what no fast-forward changes. */
static ff_list *ff_lane(const ff_route *r, uint64_t line)
{
    if (r->lanes == 1 || r->s->um_moves)
        return &r->l[0];
    rp_sim *s = r->s;
    uint32_t gpu = rp_gpu_of(s, line, r->g);
    uint64_t bank = (uint64_t)(rp_l2_bank(s, gpu, line) - s->gpus[gpu].l2);
    return &r->l[((uint64_t)gpu * s->cfg.l2_banks + bank) % r->lanes];
}

/* The actions of one recorded memory op of a fast-forwarded wave
 * (instruction in: read for an atomic only, NULL otherwise allowed),
 * appended to their lanes' lists: a global store or atomic reaches the
 * memory, a load allocates its lines in the L2; LDS, scalar stores and ops
 * the detailed replay reports as walk errors are left out. 0, or -1 out of
 * memory. Reads only the record: safe on any thread. */
static int ff_collect(const ff_route *rt, const gcn_insn *in, const trc_mem_op *op)
{
    if (!op || (op->flags & TRC_MO_LDS))
        return 0;
    const rp_config *c = &rt->s->cfg;
    uint32_t nl = trc_popcount64(op->exec), bpl = op->bytes_per_lane;
    uint64_t lb = c->l1v_line;
    ff_act *a;
    if (!(op->flags & (TRC_MO_STORE | TRC_MO_ATOMIC))) {
        if (!rt->loads)
            return 0;
        /* a load: its lines enter the L2 as they would (once per line) */
        uint64_t prev = UINT64_MAX;
        if (nl && op->addr_strided && op->addr_stride <= lb) {
            /* lanes 0..nl-1 at addr[0] + k * stride, stride <= a line: every
             * line from the first lane's to the last lane's, once, in order
             * (what the loop below finds, without reading the addresses) */
            uint64_t l0 = trc_mo_addr(op, 0) & ~(lb - 1), l1 = (trc_mo_addr(op, 0) + (uint64_t)(nl - 1) * op->addr_stride) & ~(lb - 1);
            if (l1 >= l0 && rt->s->n_gpus == 1 && (rt->lanes == 1 || rt->s->um_moves) && (l1 - l0) / lb < UINT32_MAX) {
                /* one list and one GPU: the lines as one action, applied in
                 * the same order (ff_apply_one); a wave's skip held up to
                 * ~100 KB of single-line actions until it woke (km_assign's
                 * 2,048 skips: 6% of a sampled replay of km at 15
                 * iterations in page faults growing them) */
                if (!(a = ff_push(ff_lane(rt, l0))))
                    return -1;
                *a = (ff_act){.addr = l0, .n = (uint32_t)((l1 - l0) / lb + 1), .aop = GCN_AT_NONE};
                return 0;
            }
            if (l1 >= l0) {
                for (uint64_t line = l0;; line += lb) {
                    if (!(a = ff_push(ff_lane(rt, line))))
                        return -1;
                    *a = (ff_act){.addr = line, .aop = GCN_AT_NONE};
                    if (line == l1)
                        break;
                }
                return 0;
            }
        }
        for (uint32_t i = 0; i < nl; i++) {
            uint64_t line = trc_mo_addr(op, i) & ~(lb - 1);
            if (line != prev) {
                if (!(a = ff_push(ff_lane(rt, line))))
                    return -1;
                *a = (ff_act){.addr = line, .aop = GCN_AT_NONE};
            }
            prev = line;
        }
        return 0;
    }
    if (!op->store_data || (op->flags & TRC_MO_SMEM))
        return 0;
    if (op->flags & TRC_MO_ATOMIC) {
        const gcn_op_info *oi = &gcn_op_infos[in->op];
        unsigned w = oi->elem_bytes == 8 ? 8 : 4;
        bool cas = oi->aop == GCN_AT_CMPSWAP;
        if (oi->aop == GCN_AT_NONE || oi->aop == GCN_AT_UNKNOWN || cas != !!(op->flags & TRC_MO_CMPSWAP))
            return 0; /* the detailed replay reports these as walk errors */
        for (uint32_t i = 0; i < nl; i++) {
            uint64_t src = 0, cmp = 0;
            memcpy(&src, op->store_data + (size_t)i * (cas ? 2 : 1) * w, w);
            if (cas)
                memcpy(&cmp, op->store_data + (size_t)i * 2 * w + w, w);
            if (cas && rp_cas_failed_in_recording(op, i, w, cmp))
                continue; /* reads only (perform.c) */
            if (!(a = ff_push(ff_lane(rt, trc_mo_addr(op, i) & ~(lb - 1)))))
                return -1;
            *a = (ff_act){.addr = trc_mo_addr(op, i), .asrc = src, .acmp = cmp, .n = w, .aop = (uint8_t)oi->aop};
        }
        return 0;
    }
    /* lanes whose addresses follow each other (the usual coalesced store)
     * are applied as one run, cut at line boundaries: the same bytes in the
     * same order, and the same L2 lines touched in the same order (its LRU
     * compares ages only), with one call per line instead of one per lane */
    for (uint32_t i = 0, r; i < nl; i += r) {
        if (op->addr_strided && op->addr_stride == bpl)
            r = nl - i; /* one run */
        else
            for (r = 1; i + r < nl && trc_mo_addr(op, i + r) == trc_mo_addr(op, i) + (uint64_t)r * bpl; r++)
                ;
        uint64_t addr = trc_mo_addr(op, i);
        const uint8_t *src = op->store_data + (size_t)i * bpl;
        for (uint64_t left = (uint64_t)r * bpl; left;) {
            uint64_t room = lb - (addr & (lb - 1)), part = left < room ? left : room;
            if (!(a = ff_push(ff_lane(rt, addr & ~(lb - 1)))))
                return -1;
            *a = (ff_act){.addr = addr, .src = src, .n = (uint32_t)part, .aop = GCN_AT_NONE};
            addr += part, src += part, left -= part;
        }
    }
    return 0;
}

/* Apply action a from GPU g's side. 0, or -1 out of memory. */
static int ff_apply_one(rp_sim *s, uint32_t g, const ff_act *a)
{
    if (a->aop != GCN_AT_NONE)
        return rp_mem_functional(s, g, a->addr, NULL, a->n, a->aop, a->asrc, a->acmp);
    if (a->src)
        return rp_mem_functional(s, g, a->addr, a->src, a->n, GCN_AT_NONE, 0, 0);
    uint64_t lb = s->cfg.l1v_line;
    for (uint32_t k = 0; k < (a->n ? a->n : 1); k++) /* a load: its lines, in order */
        if (rp_mem_functional(s, g, a->addr + k * lb, NULL, 1, GCN_AT_NONE, 0, 0))
            return -1;
    return 0;
}

static int ff_defer(struct rp_ffpool *p, uint32_t g, const ff_act *a);

/* Apply a from GPU g's side, or, with one partition per GPU (s->smp_defer)
 * and a's line in another partition's L2 bank, keep it in p for the next
 * serial point (p NULL: apply). 0, or -1 out of memory. */
static int ff_act_go(rp_sim *s, uint32_t g, const ff_act *a, struct rp_ffpool *p)
{
    const rp_part *me = s->smp_defer ? rp_part_tls : NULL;
    if (me && p && s->gpus[rp_gpu_of(s, a->addr & ~(uint64_t)(s->cfg.l1v_line - 1), g)].part != me)
        return ff_defer(p, g, a);
    return ff_apply_one(s, g, a);
}

/* Apply l's actions from GPU g's side, in order. With one partition per GPU
 * (s->smp_defer; "Partitions" above), an action whose line is in another
 * partition's L2 bank waits in this partition's pool (p; NULL: nothing waits,
 * as on the memory side of a cut) for the next serial point. 0, or -1 out of
 * memory. */
static int ff_apply(rp_sim *s, uint32_t g, const ff_list *l, struct rp_ffpool *p)
{
    int rc = 0;
    for (size_t i = 0; i < l->n && !rc; i++)
        rc = ff_act_go(s, g, &l->a[i], p);
    return rc;
}

/* One workgroup decoded for a fast-forward. */
typedef struct ff_wgd {
    trc_wg *g;      /* kept until every lane applied it: the actions' bytes point into it */
    ff_list *acts;  /* one list per lane */
    uint64_t instr; /* its wavefront instructions */
    int oom;        /* out of memory collecting */
    char err[256];  /* the reader's message when it could not be loaded */
} ff_wgd;

/* What a fast-forward reads of a workgroup (trc_reader_load_wg_ex):
 * without its loads (loads = false: ff_loads_matter), only the store
 * frame where it carries the stores' ops (format 2.5). */
static inline int ff_reads(bool loads) { return TRC_WG_STORES_ONLY | (loads ? 0 : TRC_WG_STORE_OPS); }

/* Whether a loaded workgroup has an atomic (its action needs the
 * instruction, from a walk of the wave's record). */
static bool wg_has_atomic(const trc_wg *g)
{
    for (uint32_t v = 0; v < g->n_waves; v++)
        for (uint32_t m = 0; m < g->waves[v].n_mem; m++)
            if (g->waves[v].mem[m].flags & TRC_MO_ATOMIC)
                return true;
    return false;
}

/* Decode workgroup i of k into d for `lanes` lanes: load it, walk its
 * waves' records and collect their actions, in wave order. A record the
 * walk cannot follow counts as a walk error of the kernel (as in a detailed
 * replay) and the rest of that wave is left out. Frees what d held from
 * its last use. Any thread. */
static void ff_decode(rp_sim *s, rp_kernel *k, uint32_t i, ff_wgd *d, uint32_t lanes, bool loads)
{
    trc_wg_free(d->g);
    for (uint32_t l = 0; l < lanes; l++)
        d->acts[l].n = 0;
    d->instr = 0;
    d->oom = 0;
    d->err[0] = 0;
    /* without the load values (only stores and atomics act; from the 2.4
     * store frame where there is one; without loads, from that frame alone
     * where it carries the stores' ops, 2.5: ff_reads), unless a
     * compare-and-swap needs what it returned (rp_cas_failed_in_recording);
     * without the LDS ops' addresses (ff_collect leaves LDS ops out) */
    d->g = trc_reader_load_wg_ex(s->rd, k->launch.kernel_id, i, ff_reads(loads) | TRC_WG_NO_LDS_ADDR, d->err,
                                 sizeof d->err);
    if (d->g && d->g->ops_only && wg_has_atomic(d->g)) {
        /* only its store ops (format 2.5): an atomic needs the records */
        trc_wg_free(d->g);
        d->g = trc_reader_load_wg_ex(s->rd, k->launch.kernel_id, i, TRC_WG_STORES_ONLY | TRC_WG_NO_LDS_ADDR, d->err,
                                     sizeof d->err);
    }
    for (uint32_t v = 0; d->g && v < d->g->n_waves; v++) {
        const trc_wave *tw = &d->g->waves[v];
        uint32_t m = 0;
        while (m < tw->n_mem && !(tw->mem[m].flags & TRC_MO_CMPSWAP))
            m++;
        if (m < tw->n_mem) {
            trc_wg_free(d->g);
            d->g = trc_reader_load_wg_ex(s->rd, k->launch.kernel_id, i, 1 | TRC_WG_NO_LDS_ADDR, d->err, sizeof d->err);
            break;
        }
    }
    if (!d->g) {
        if (!d->err[0])
            snprintf(d->err, sizeof d->err, "cannot be loaded");
        return;
    }
    ff_route rt = {s, k->gpu, lanes, d->acts, loads};
    for (uint32_t v = 0; v < d->g->n_waves && !d->oom; v++) {
        const trc_wave *tw = &d->g->waves[v];
        d->instr += tw->n_instr;
        uint32_t m = 0;
        while (m < tw->n_mem && !(tw->mem[m].flags & TRC_MO_ATOMIC))
            m++;
        if (m == tw->n_mem) {
            /* no atomic: its ops in record order are all a walk would hand
             * ff_collect (only an atomic needs its instruction), so the
             * record is not walked (nor checked: its walk errors, if any,
             * are not counted) */
            for (m = 0; m < tw->n_mem && !d->oom; m++)
                d->oom = ff_collect(&rt, NULL, &tw->mem[m]) < 0;
            continue;
        }
        gcn_walk wk;
        gcn_walk_init(&wk, k->prog, k->entry_idx, tw);
        const gcn_insn *in;
        const trc_mem_op *op;
        int r = 0;
        while (!d->oom && (r = gcn_walk_next(&wk, &in, &op)) > 0)
            d->oom = ff_collect(&rt, in, op) < 0;
        if (r < 0)
            __atomic_add_fetch(&k->walk_errors, 1, __ATOMIC_RELAXED);
    }
}

/* The fast-forward's threads: the replay's thread (lane 0) and helpers
 * (lanes 1..n_th). A run is workgroups [first, first + count) of k; job
 * index j is workgroup first + j, decoded into slot j % q. Each lane
 * applies its actions of job 0, 1, 2, ... in turn; a slot is reused once
 * every lane has applied its job; a job that cannot be decoded or applied
 * stops every lane there: the schedule (ls, rp_lanes.h, under mu). The
 * replay's thread reports the first such job in grid order. */
struct rp_ffpool {
    rp_sim *s;
    pthread_t *th;
    uint32_t n_th, lanes, q;
    pthread_mutex_t mu, fail_mu;
    pthread_cond_t cv;
    rp_kernel *k;              /* the run's kernel (NULL: none) */
    bool loads;                /* its loads allocate their lines (ff_loads_matter) */
    uint32_t first, count;     /* its workgroups */
    rp_lanes ls;               /* the schedule */
    char err[300];             /* the message for job ls.stop_at */
    uint64_t instr;            /* the job's applied wavefront instructions (lane 0) */
    bool stop;
    ff_wgd *slot;
    /* with s->smp_defer (a pool per partition): what its fast-forwards do in
     * other partitions' L2 banks, applied at the next serial point
     * (rp_sample_publish), and the bytes of its stores */
    ff_list defer;
    uint8_t *dbytes;
    size_t dn, dcap;
    /* a run applied by rounds (round > 0: ff_apply_round): per lane, the
     * stores and atomics of the current round's workgroups, their bytes
     * copied (a slot is reused before its round ends) */
    uint32_t round;
    struct ff_pend {
        ff_list l;
        uint8_t *b;
        size_t n, cap;
    } *pend;
};

/* Append n bytes from src to the buffer *b (*len used of *cap), their
 * offset in *at. 0, or -1 out of memory (nothing changed). */
static int bytes_put(uint8_t **b, size_t *len, size_t *cap, const uint8_t *src, size_t n, uint64_t *at)
{
    if (*len + n > *cap) {
        size_t nc = *cap ? 2 * *cap : 4096;
        while (nc < *len + n)
            nc *= 2;
        uint8_t *nb = realloc(*b, nc);
        if (!nb)
            return -1;
        *b = nb;
        *cap = nc;
    }
    memcpy(*b + *len, src, n);
    *at = *len;
    *len += n;
    return 0;
}

/* Keep a for the next serial point (a store's bytes copied: its record may
 * be gone by then). 0, or -1 out of memory. */
static int ff_defer(struct rp_ffpool *p, uint32_t g, const ff_act *a)
{
    ff_act *d = ff_push(&p->defer);
    if (!d)
        return -1;
    *d = *a;
    d->gpu = (uint16_t)g;
    if (a->src && a->aop == GCN_AT_NONE) {
        if (bytes_put(&p->dbytes, &p->dn, &p->dcap, a->src, a->n, &d->asrc)) {
            p->defer.n--;
            return -1;
        }
        d->src = FF_DEFERRED_BYTES;
    }
    return 0;
}

/* At a serial point: apply what p's partition deferred, in order. 0, or -1
 * out of memory. */
static int ff_apply_deferred(rp_sim *s, struct rp_ffpool *p)
{
    int rc = 0;
    for (size_t i = 0; i < p->defer.n && !rc; i++) {
        ff_act a = p->defer.a[i];
        if (a.src == FF_DEFERRED_BYTES)
            a.src = p->dbytes + a.asrc;
        rc = ff_apply_one(s, a.gpu, &a);
    }
    p->defer.n = 0;
    p->dn = 0;
    return rc;
}

/* Lane's actions l of job (workgroup p->first + job) of a run applied by
 * rounds of p->round workgroups: its loads (lines allocated) now, its stores
 * and atomics once every workgroup of its round has had its loads applied,
 * in workgroup order. In detail a round's workgroups run side by side and
 * store mostly after they load (gd's forward, one round: each workgroup
 * streams 147 KB of x, then writes its partial sum); applied workgroup
 * after workgroup, a later workgroup's loads evicted an earlier one's
 * stores, which the next kernel then missed in the L2. Loads carry no data
 * here, so the order changes only what the L2 holds, not the memory.
 * Under no lock (the lane's own pending list). 0, or -1 out of memory. */
static int ff_apply_round(struct rp_ffpool *p, uint32_t lane, uint32_t job, const ff_list *l)
{
    rp_sim *s = p->s;
    uint32_t g = p->k->gpu;
    struct ff_pend *q = &p->pend[lane];
    int rc = 0;
    for (size_t i = 0; i < l->n && !rc; i++) {
        const ff_act *a = &l->a[i];
        if (!a->src && a->aop == GCN_AT_NONE) { /* a load */
            rc = ff_act_go(s, g, a, p);
            continue;
        }
        ff_act *d = ff_push(&q->l);
        if (!d)
            return -1;
        *d = *a;
        if (a->src && a->aop == GCN_AT_NONE && bytes_put(&q->b, &q->n, &q->cap, a->src, a->n, &d->asrc))
            return -1; /* its bytes: at offset asrc of q->b */
    }
    if (rc || ((job + 1) % p->round && job + 1 < p->count))
        return rc;
    /* the round's last workgroup: its stores and atomics, in order */
    for (size_t i = 0; i < q->l.n && !rc; i++) {
        ff_act a = q->l.a[i];
        if (a.src && a.aop == GCN_AT_NONE)
            a.src = q->b + a.asrc;
        rc = ff_act_go(s, g, &a, p);
    }
    q->l.n = 0;
    q->n = 0;
    return rc;
}

/* Frames a fast-forward's thread decompresses ahead of the workgroups
 * claimed, rather than wait for a frame another thread decompresses (the
 * reference writer's frames: up to 1 MiB of data values, many workgroups) */
#define FF_WARM_FRAMES 2

/* Would decoding job wait for a frame another thread decompresses? */
static bool ff_would_wait(void *ctx, uint32_t job)
{
    struct rp_ffpool *p = ctx;
    return trc_reader_wg_busy(p->s->rd, p->k->launch.kernel_id, p->first + job, ff_reads(p->loads));
}

/* Under p->mu: one step of lane's work (rp_lanes_pick), or false when there
 * is none now. A decoding step whose frame another thread decompresses
 * decompresses the next frames instead of waiting (FF_WARM_FRAMES ahead at
 * most; what is cached changes no result). */
static bool ff_step(struct rp_ffpool *p, uint32_t lane)
{
    rp_kernel *k = p->k;
    rp_lanes_step st = rp_lanes_pick(&p->ls, lane, p->lanes > 1 ? ff_would_wait : NULL, p);
    if (st.kind == RP_LANES_NONE)
        return false;
    if (st.kind == RP_LANES_WARM) {
        pthread_mutex_unlock(&p->mu);
        int rc = trc_reader_warm_after(p->s->rd, k->launch.kernel_id, p->first + st.job, FF_WARM_FRAMES,
                                       ff_reads(p->loads));
        pthread_mutex_lock(&p->mu);
        st = rp_lanes_warmed(&p->ls, st.job, rc > 0);
        if (st.kind == RP_LANES_NONE) {
            pthread_cond_broadcast(&p->cv);
            return true;
        }
    }
    ff_wgd *d = &p->slot[st.job % p->q];
    if (st.kind == RP_LANES_DECODE) {
        pthread_mutex_unlock(&p->mu);
        ff_decode(p->s, k, p->first + st.job, d, p->lanes, p->loads);
        pthread_mutex_lock(&p->mu);
        rp_lanes_decoded(&p->ls, st.job);
        pthread_cond_broadcast(&p->cv);
        return true;
    }
    pthread_mutex_unlock(&p->mu);
    int rc = 0; /* 1: cannot be decoded; 2: out of memory */
    if (!d->g)
        rc = 1;
    else if (d->oom || (p->round ? ff_apply_round(p, lane, st.job, &d->acts[lane])
                                 : ff_apply(p->s, k->gpu, &d->acts[lane], p)))
        rc = 2;
    pthread_mutex_lock(&p->mu);
    if (!rc && lane == 0)
        p->instr += d->instr;
    if (rp_lanes_applied(&p->ls, lane, st.job, rc != 0))
        snprintf(p->err, sizeof p->err, "%s", rc == 1 ? d->err : "out of memory");
    pthread_cond_broadcast(&p->cv);
    return true;
}

static void *ff_helper(void *arg)
{
    struct rp_ffpool *p = arg;
    pthread_mutex_lock(&p->mu);
    uint32_t lane = 0;
    for (uint32_t i = 0; i < p->n_th; i++)
        if (pthread_equal(p->th[i], pthread_self()))
            lane = i + 1;
    for (;;) {
        while (!p->stop && !(p->k && lane && ff_step(p, lane)))
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->stop)
            break;
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* The fast-forward's state, made at the first fast-forward, with
 * s->smp_threads - 1 helpers (fewer when not all could be started: slower,
 * the same result); with s->smp_defer, one per partition, without helpers.
 * NULL out of memory. */
static void pool_free(rp_sim *s, struct rp_ffpool *p);

static struct rp_ffpool *ff_pool(rp_sim *s)
{
    struct rp_ffpool **where = s->smp_defer && rp_part_tls ? &rp_part_tls->ffpool : &s->ffpool;
    if (*where)
        return *where;
    struct rp_ffpool *p = calloc(1, sizeof *p);
    uint32_t n = s->smp_threads > 1 ? s->smp_threads - 1 : 0;
    if (!p)
        return NULL;
    p->s = s;
    p->q = 4 * n + 4;
    p->slot = calloc(p->q, sizeof *p->slot);
    p->th = calloc(n ? n : 1, sizeof *p->th);
    bool ok = p->slot && p->th && !rp_lanes_init(&p->ls, n + 1, p->q); /* (lanes set below) */
    for (uint32_t i = 0; ok && i < p->q; i++)
        ok = (p->slot[i].acts = calloc(n + 1, sizeof(ff_list))) != NULL;
    if (!ok) {
        for (uint32_t i = 0; p->slot && i < p->q; i++)
            free(p->slot[i].acts);
        free(p->slot);
        free(p->th);
        rp_lanes_fini(&p->ls);
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_mutex_init(&p->fail_mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    /* the helpers learn their lane (their index in th) under the lock, once
     * every helper that could be started is in th and lanes is final */
    pthread_mutex_lock(&p->mu);
    for (; p->n_th < n; p->n_th++)
        if (pthread_create(&p->th[p->n_th], NULL, ff_helper, p))
            break;
    p->lanes = p->ls.lanes = p->n_th + 1;
    p->pend = calloc(p->lanes, sizeof *p->pend);
    if (p->n_th && !s->fail_lock)
        s->fail_lock = &p->fail_mu; /* a helper's apply may fail (out of memory) beside the replay's thread */
    pthread_mutex_unlock(&p->mu);
    if (!p->pend) {
        pool_free(s, p);
        return NULL;
    }
    *where = p;
    return p;
}

static void pool_free(rp_sim *s, struct rp_ffpool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (uint32_t i = 0; i < p->n_th; i++)
        pthread_join(p->th[i], NULL);
    if (s->fail_lock == &p->fail_mu)
        s->fail_lock = NULL;
    for (uint32_t i = 0; i < p->q; i++) {
        trc_wg_free(p->slot[i].g);
        for (uint32_t l = 0; l < p->lanes; l++)
            free(p->slot[i].acts[l].a);
        free(p->slot[i].acts);
    }
    free(p->defer.a);
    free(p->dbytes);
    for (uint32_t l = 0; p->pend && l < p->lanes; l++)
        free(p->pend[l].l.a), free(p->pend[l].b);
    free(p->pend);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->fail_mu);
    pthread_cond_destroy(&p->cv);
    free(p->slot);
    free(p->th);
    rp_lanes_fini(&p->ls);
    free(p);
}

void rp_sample_fini(rp_sim *s)
{
    pool_free(s, s->ffpool);
    s->ffpool = NULL;
    for (uint32_t i = 0; s->parts && i < s->n_parts; i++) {
        pool_free(s, s->parts[i].ffpool);
        s->parts[i].ffpool = NULL;
    }
}

/* Count n skipped wavefront instructions: in rp_sim.smp_skipped, or, with a
 * dispatcher per GPU in partitions (smp_serial_groups), in the running
 * partition's count until the next serial point. */
static void skip_add(rp_sim *s, uint64_t n)
{
    if (s->smp_serial_groups && rp_part_tls)
        rp_part_tls->smp_skipped += n;
    else
        s->smp_skipped += n;
}

/* The skipped instructions a kernel ending now has seen: every partition's
 * until the last serial point and its own partition's since. */
static uint64_t skip_seen(const rp_sim *s)
{
    return s->smp_skipped + (s->smp_serial_groups && rp_part_tls ? rp_part_tls->smp_skipped : 0);
}

/* Fast-forward workgroups [first, first + count) of k: every global store
 * and atomic reaches the memory and every load allocates its lines, each L2
 * bank's in grid order and wave order (the replay's thread and the helpers
 * decode and apply their lanes); *instr += their wavefront instructions.
 * 0, or -1 after rp_sim_fail. */
static int ff_range(rp_sim *s, rp_kernel *k, uint32_t first, uint32_t count, bool loads, uint32_t round,
                    uint64_t *instr)
{
    struct rp_ffpool *p = ff_pool(s);
    if (!p) {
        rp_sim_fail(s, "sampled replay: kernel %u: out of memory", k->launch.kernel_id);
        return -1;
    }
    pthread_mutex_lock(&p->mu);
    p->k = k;
    p->loads = loads;
    p->round = loads && round > 1 ? round : 0; /* without loads: stores only, in order */
    p->first = first;
    p->count = count;
    for (uint32_t l = 0; l < p->lanes; l++)
        p->pend[l].l.n = 0, p->pend[l].n = 0;
    rp_lanes_start(&p->ls, count);
    p->instr = 0;
    pthread_cond_broadcast(&p->cv);
    for (;;) {
        if (ff_step(p, 0))
            continue;
        if (rp_lanes_done(&p->ls))
            break;
        pthread_cond_wait(&p->cv, &p->mu);
    }
    /* every lane is past stop_at and no thread works on the run: the slots
     * still decoded (after a failure) keep their records until reused */
    int rc = 0;
    if (p->ls.stop_at < p->count) {
        rp_sim_fail(s, "sampled replay: kernel %u, workgroup %u: %s", k->launch.kernel_id, first + p->ls.stop_at,
                    p->err);
        rc = -1;
    } else {
        *instr += p->instr;
        skip_add(s, p->instr);
    }
    p->k = NULL;
    pthread_mutex_unlock(&p->mu);
    return rc;
}

/* ---- wave level ---------------------------------------------------------------------------- */

enum { WS_OFF, WS_FIRST, WS_WARM, WS_HALF1, WS_HALF2, WS_SKIP, WS_ASLEEP };

/* Workgroups of k that fit on one CU (the dispatcher's resources:
 * gcn/gcn_occupancy.h), and the CUs of its GPUs. */
static uint32_t wgs_per_cu(const rp_config *c, const rp_kernel *k)
{
    const trc_launch *l = &k->launch;
    gcn_cu_limits lim = {c->simds, c->wave_slots, c->vgprs, c->sgprs, c->lds_size};
    return gcn_wgs_per_cu(&lim, l->waves_per_wg ? l->waves_per_wg : 1, l->vgpr_count, l->sgpr_count,
                          l->group_segment_size);
}

static uint64_t gpu_cus(const rp_config *c, const rp_kernel *k)
{
    return (uint64_t)(k->gpu_count ? k->gpu_count : 1) * c->shader_arrays * c->cus_per_sa;
}

/* Whether w's CU holds fewer than half the workgroups of k it holds when
 * full: the fewer of what fits on a CU (the dispatcher's resources:
 * gcn/gcn_occupancy.h) and the kernel's workgroups over the CUs. A wave
 * there runs in the kernel's ramp-down, where the memory system empties and
 * its time per instruction moves away from what it measured (gd at the 4x
 * size: backward's last workgroup, its CU otherwise empty, skipped 11 times
 * on halves 45% apart; reduction's last waves measured 104-243 ns per
 * instruction as their CUs emptied). Its CU's own count: the same for any
 * --threads. */
static bool ramping_down(const rp_config *c, const rp_kernel *k, const rp_wave *w)
{
    uint64_t per = wgs_per_cu(c, k), cus = gpu_cus(c, k);
    uint64_t share = cus ? ((uint64_t)k->n_wg + cus - 1) / cus : 1, full = per && per < share ? per : share;
    return (uint64_t)w->wg->cu->live_wgs * 2 < full;
}

/* Workgroups of k the GPUs hold at once (a round). */
static uint32_t wgs_at_once(const rp_config *c, const rp_kernel *k)
{
    uint64_t n = (uint64_t)wgs_per_cu(c, k) * gpu_cus(c, k);
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* May a skip walk past in? Not what needs the detailed model: a workgroup
 * or grid barrier, an LDS access (the LDS image), s_sleep, s_endpgm. */
static bool skippable(const gcn_insn *in)
{
    return !(in->flags & (GCN_IF_BARRIER | GCN_IF_ENDPGM | GCN_IF_SLEEP | GCN_IF_GDS)) && in->unit != GCN_UNIT_LDS &&
           in->op != GCN_OP_ds_gws_barrier;
}

/* A wave's measurement: the walk where it began and, once it ended, the
 * instructions (indices into the program) it ran: a skip stays inside them,
 * the loop that was measured, and stops where the wave leaves it. */
struct rp_wsample {
    gcn_walk w0;
    struct ff_batch *pending; /* the last skip's memory actions, applied when the wave wakes (skip_ahead) */
    uint64_t seen[];
};

static inline bool was_measured(const rp_wave *w, const gcn_walk *wk)
{
    return (w->smp_data->seen[wk->idx >> 6] >> (wk->idx & 63)) & 1;
}

/* The instructions w ran in its measurement, from smp_data->w0 to its walk
 * now (its record walked again): 0 when each is one a skip may take (then
 * marked), 1 when one is not (a barrier, an LDS access: the measurement
 * covered another phase than a skip would), -1 on a walk error (reported). */
static int mark_measured(rp_wave *w)
{
    gcn_walk wk = w->smp_data->w0;
    while (wk.dyn < w->walk.dyn) {
        const gcn_insn *in = gcn_walk_insn(&wk);
        const trc_mem_op *op;
        if (!in || (gcn_walk_is_mem(in) && gcn_walk_mem(&wk, in, &op) < 0) || gcn_walk_step(&wk, in) < 0) {
            rp_walk_error(w, NULL);
            return -1;
        }
        if (!skippable(in))
            return 1;
        w->smp_data->seen[(in - wk.prog->insn) >> 6] |= 1ull << ((in - wk.prog->insn) & 63);
    }
    return 0;
}

/* A skipped wave's actions when the GPU is cut into partitions ("Partitions"
 * above): its CU's partition lists them and sends them to the dispatcher,
 * on the memory side, which applies them (rp_sample_apply) in the order
 * they arrive (the CUs' links to it are FIFOs, with the lookahead's latency
 * at least: a model variant, the same for every --threads). The bytes its
 * stores write are copied: the record may be gone by then. */
typedef struct ff_batch {
    rp_kernel *k;
    ff_list l;
    uint8_t *bytes;
} ff_batch;

static void ff_batch_free(ff_batch *b)
{
    if (!b)
        return;
    free(b->l.a);
    free(b->bytes);
    free(b);
}

/* Send b (wave w's skip at t) to w's dispatcher (an empty one is freed):
 * 0, or -1 after rp_sim_fail (b not sent: the caller frees it). */
/* Copy the bytes b's stores write into b (the record may be gone when it
 * is applied): 0, or -1 after rp_sim_fail. */
static int own_bytes(rp_sim *s, ff_batch *b)
{
    size_t nb = 0;
    for (size_t i = 0; i < b->l.n; i++)
        if (b->l.a[i].src)
            nb += b->l.a[i].n;
    if (nb && !(b->bytes = malloc(nb))) {
        rp_sim_fail(s, "sampled replay: out of memory");
        return -1;
    }
    size_t at = 0;
    for (size_t i = 0; i < b->l.n; i++)
        if (b->l.a[i].src) {
            memcpy(b->bytes + at, b->l.a[i].src, b->l.a[i].n);
            b->l.a[i].src = b->bytes + at;
            at += b->l.a[i].n;
        }
    return 0;
}

static int send_batch(rp_sim *s, rp_wave *w, ff_batch *b, rp_time t)
{
    if (!b->l.n) { /* nothing to apply (a stretch without global memory ops) */
        ff_batch_free(b);
        return 0;
    }
    if (own_bytes(s, b) < 0)
        return -1;
    b->k = w->wg->k;
    rp_msg *m = rp_msg_alloc(rp_pool(s));
    if (!m) {
        rp_sim_fail(s, "sampled replay: out of memory");
        return -1;
    }
    m->type = RP_MSG_FF_APPLY;
    m->ctx = b;
    rp_link_send(w->cu->done_link, m, t);
    return 0;
}

int rp_sample_apply(rp_sim *s, void *batch)
{
    ff_batch *b = batch;
    int rc = ff_apply(s, b->k->gpu, &b->l, NULL);
    ff_batch_free(b);
    if (rc)
        rp_sim_fail(s, "sampled replay: out of memory");
    return rc ? -1 : 0;
}

/* Walk wk (wave w's walk or a copy) past the instructions a skip may take:
 * skippable ones its measurement ran, leaving the wave's last `tail`; each
 * memory op's actions listed in `into` (NULL: a trial, nothing listed),
 * applied when the wave wakes or by the memory side (rp_sample_apply). The
 * count walked, or
 * -1: a walk error (wk->err), or out of memory (rp_sim_fail). */
static int64_t skip_walk(rp_sim *s, rp_wave *w, gcn_walk *wk, uint64_t tail, ff_list *into)
{
    rp_kernel *k = w->wg->k;
    uint64_t n = wk->tw->n_instr, d0 = wk->dyn;
    while (wk->dyn + tail < n) {
        const gcn_insn *in = gcn_walk_insn(wk);
        if (!in)
            return -1;
        if (!skippable(in) || !was_measured(w, wk))
            break;
        if (gcn_walk_is_mem(in) && wk->mem_i < wk->tw->n_mem && (wk->tw->mem[wk->mem_i].flags & TRC_MO_LDS))
            break; /* a FLAT access to the LDS (or one after an EXEC = 0 instruction): the LDS image is the detailed model's */
        const trc_mem_op *op = NULL;
        if (gcn_walk_is_mem(in) && gcn_walk_mem(wk, in, &op) < 0)
            return -1;
        ff_route rt = {s, k->gpu, 1, into, true};
        if (into && ff_collect(&rt, in, op)) {
            rp_sim_fail(s, "sampled replay: kernel %u: out of memory", k->launch.kernel_id);
            return -1;
        }
        if (gcn_walk_step(wk, in) < 0)
            return -1;
    }
    return (int64_t)(wk->dyn - d0);
}

/* Is a skip that would give its kernel a bound of rel (relative to the
 * kernel's time) too wide for sample.max_bound? Counts it in m when it is.
 * The kernel level (a launch fast-forwarded whole) and the workgroup level
 * (a stretch) ask before they skip; the wave level asks once per kernel, for
 * all its waves (wave_decide), not wave by wave: refusing the wide waves
 * leaves the others skipping in a machine whose memory traffic the refused
 * ones no longer share (sample_waves: 704 of its 1,024 waves refused at 20%
 * moved its kernel from -1.4% to -12.6%, outside the narrower bound). */
static bool too_wide(const rp_config *c, rp_ksample *m, double rel)
{
    if (!c->sample_max_bound || rel * 100.0 <= c->sample_max_bound)
        return false;
    m->wide++;
    if (!m->wide_rel || rel < m->wide_rel)
        m->wide_rel = rel;
    return true;
}

/* sample.max_bound at the wave level: whether kernel k's waves may skip,
 * decided once for all of them, so that its waves either all skip as
 * measured or all run in detail (a kernel whose waves with close halves
 * skip while the others run on in detail ended later than either: km's
 * later km_assign launches on the golden km-iters trace +16% against +0.5%,
 * docs/timing-model.md). Made once every workgroup is out (k's caller
 * checked) and at least half of the waves then in flight that measure
 * (those long enough: sample.wave_min) have measured their rate, at least
 * one; false while too few have. The estimate of the
 * kernel's bound, as a share of its time: the largest rel (halves'
 * difference) of the waves measured so far, as the printed bound takes the
 * largest of one wave's errors (that wave may end the kernel), times the
 * share of a wave a skip covers (what
 * the warm-up, the measurement and the tail leave) times the share of the
 * kernel's waves in flight (only those can skip: a kernel of R rounds skips
 * in its last, about 1/R of its time). An estimate: the printed bound is
 * computed from the skips made (rp_sample_kernel_end). Refused: k's wave
 * level is off (sample.c RP_WHY_WIDE when nothing else skipped). */
static bool wave_decide(const rp_config *c, rp_kernel *k)
{
    rp_ksample *m = &k->smp;
    uint64_t started = __atomic_load_n(&m->wv_started, __ATOMIC_RELAXED);
    uint64_t ended = __atomic_load_n(&m->wv_ended, __ATOMIC_RELAXED);
    uint64_t n = __atomic_load_n(&m->wv_rel_n, __ATOMIC_RELAXED);
    uint64_t inflight = started > ended ? started - ended : 0;
    if (!n || n < (inflight + 1) / 2)
        return false;
    uint64_t all = (uint64_t)k->n_wg * (k->launch.waves_per_wg ? k->launch.waves_per_wg : 1);
    double rel = (double)__atomic_load_n(&m->wv_rel_max, __ATOMIC_RELAXED) / 1e6;
    uint32_t kept = c->sample_wave_warmup + c->sample_wave_measure + c->sample_wave_tail;
    double cover = kept < 100 ? (100.0 - kept) / 100.0 : 0.0;
    double share = all && inflight < all ? (double)inflight / (double)all : 1.0;
    m->wave_est = rel * cover * share;
    m->wave_decided = 1;
    if (too_wide(c, m, m->wave_est)) {
        m->wave_wide = 1;
        m->wave_off = true;
    }
    return true;
}

/* Skip w ahead if the stretch it may skip is worth predicting: at least as
 * long as its measurement (a shorter one, between LDS accesses or barriers,
 * would be predicted from a rate that averages over what it leaves out).
 * The count skipped (0: none; w->smp_next is then past the stretch), or -1
 * (walk error reported, or rp_sim_fail). */
static int64_t skip_ahead(rp_sim *s, rp_wave *w, uint64_t tail, rp_time t)
{
    gcn_walk trial = w->walk;
    int64_t len = skip_walk(s, w, &trial, tail, NULL);
    if (len < 0) {
        rp_walk_error(w, NULL);
        return -1;
    }
    if ((uint64_t)len < 2 * (w->smp_imid - w->smp_i0)) {
        if (s->smp_parts)
            w->wg->smp.shorts++;
        else
            w->wg->k->smp.wave_short++;
        w->smp_next = w->walk.dyn + (uint64_t)len + 1; /* look again after what stopped it */
        return 0;
    }
    /* the skipped instructions' memory actions: applied when the wave wakes
     * (one partition, or one per GPU), or, with the GPU cut, sent now to
     * the memory side, which applies them when they arrive (a wave that
     * wakes may go on to a barrier or read what it stored: the actions must
     * be there before) */
    bool at_wake = !(s->smp_parts && !s->smp_defer);
    ff_batch *b = calloc(1, sizeof *b);
    if (!b) {
        rp_sim_fail(s, "sampled replay: out of memory");
        return -1;
    }
    int64_t done = skip_walk(s, w, &w->walk, tail, &b->l);
    if (done < 0 && !s->failed)
        rp_walk_error(w, NULL);
    if (at_wake && done >= 0) {
        /* what the skipped instructions did comes after what other waves did
         * meanwhile, as at their end, not before it (the L2 the next kernel
         * finds: km_partial after a skipped km_assign -2.5% -> -1.0%); the
         * stores' bytes stay in the wave's record, which lives as long as
         * its workgroup */
        w->smp_data->pending = b;
        return done;
    }
    if (done < 0 || send_batch(s, w, b, t) < 0) {
        ff_batch_free(b);
        return -1;
    }
    return done;
}

int rp_sample_wave(rp_sim *s, rp_wave *w, rp_engine *e, rp_time t, rp_time *resume)
{
    const rp_config *c = &s->cfg;
    rp_kernel *k = w->wg->k;
    const trc_wave *tw = w->walk.tw;
    uint64_t n = tw->n_instr, dyn = w->walk.dyn;
    /* with the GPU cut into partitions ("Partitions" above) a wave reads of
     * its kernel only what the serial points publish, and counts in its
     * workgroup what the dispatcher adds to the kernel at its end */
    bool parts = s->smp_parts;
    struct rp_wg_smp *ws = &w->wg->smp;
    switch (w->smp_state) {
    case WS_FIRST:
        if (parts) { /* (what the first wave decides here, rp_sample_kernel_start decided) */
            if (tw->n_await)
                __atomic_store_n(&k->smp.off_req, 1, __ATOMIC_RELAXED);
        } else if (!k->smp.waves_started++) { /* the launch's first wave: what holds for all of them */
            /* workgroups that may observe each other (glc loads, returning atomics, s_sleep:
             * gcn/gcn_sync.c): a skipped wave's early stores would change what they see */
            if (gcn_program_sync_reasons(k->prog, k->prog->insn[k->entry_idx].pc, NULL))
                k->smp.wave_off = true;
            /* fewer waves than SIMDs: each one's time is the kernel's, replayed in full */
            if ((uint64_t)k->n_wg * (k->launch.waves_per_wg ? k->launch.waves_per_wg : w->wg->n_waves) <
                (uint64_t)(k->gpu_count ? k->gpu_count : 1) * c->shader_arrays * c->cus_per_sa * c->simds)
                k->smp.wave_off = true;
        }
        if (tw->n_await && !parts)
            k->smp.wave_off = true; /* its waves wait for each other: their time is the model's */
        if (n < c->sample_wave_min || tw->n_await) {
            w->smp_state = WS_OFF;
            return 0;
        }
        w->smp_state = WS_WARM;
        w->smp_next = n * c->sample_wave_warmup / 100;
        return 0;
    case WS_WARM: /* the measurement starts (again) */
        if (!w->smp_data) {
            w->smp_data = malloc(sizeof *w->smp_data + ((w->walk.prog->n_insn + 63) / 64) * sizeof(uint64_t));
            if (!w->smp_data) {
                rp_sim_fail(s, "sampled replay: out of memory");
                return -1;
            }
            if (c->sample_max_bound) /* a wave that measures (its end: rp_sample_wave_end) */
                __atomic_add_fetch(&k->smp.wv_started, 1, __ATOMIC_RELAXED);
        }
        w->smp_data->w0 = w->walk;
        w->smp_data->pending = NULL;
        memset(w->smp_data->seen, 0, ((w->walk.prog->n_insn + 63) / 64) * sizeof(uint64_t));
        w->smp_t0 = t;
        w->smp_i0 = dyn;
        w->smp_state = WS_HALF1;
        w->smp_next = dyn + (n * c->sample_wave_measure / 100 + 1) / 2;
        return 0;
    case WS_HALF1:
        w->smp_tmid = t;
        w->smp_imid = dyn;
        w->smp_state = WS_HALF2;
        w->smp_next = dyn + (dyn - w->smp_i0);
        return 0;
    case WS_HALF2: {
        int r = mark_measured(w);
        if (r < 0)
            return -1;
        if (r > 0) { /* measured across a barrier or an LDS access: measure the next stretch */
            if (parts)
                ws->crossed++;
            else
                k->smp.wave_crossed++;
            w->smp_state = dyn + 2 * (w->smp_imid - w->smp_i0) + n * c->sample_wave_tail / 100 < n ? WS_WARM : WS_OFF;
            w->smp_next = dyn;
            return 0;
        }
        double h1 = (double)(w->smp_tmid - w->smp_t0) / (double)(w->smp_imid - w->smp_i0);
        double h2 = (double)(t - w->smp_tmid) / (double)(dyn - w->smp_imid);
        w->smp_cpi = (double)(t - w->smp_t0) / (double)(dyn - w->smp_i0);
        if (parts)
            ws->measured++;
        else
            k->smp.wave_measured++;
        double d = w->smp_cpi > 0 ? (h1 > h2 ? h1 - h2 : h2 - h1) / w->smp_cpi : 0;
        w->smp_rel = d > c->sample_tolerance / 200.0 ? d : c->sample_tolerance / 200.0;
        if (c->sample_max_bound) {
            uint64_t r = (uint64_t)(w->smp_rel * 1e6 + 0.5), o = __atomic_load_n(&k->smp.wv_rel_max, __ATOMIC_RELAXED);
            while (r > o && !__atomic_compare_exchange_n(&k->smp.wv_rel_max, &o, r, true, __ATOMIC_RELAXED,
                                                         __ATOMIC_RELAXED)) {
            }
            __atomic_add_fetch(&k->smp.wv_rel_n, 1, __ATOMIC_RELAXED);
        }
        w->smp_state = WS_SKIP;
    }
        /* fall through */
    case WS_SKIP: {
        uint64_t tail = n * c->sample_wave_tail / 100;
        bool off = parts ? k->smp.pub_off : k->smp.wave_off || k->cas_seen || k->gws_cap || k->spin_iterations;
        if (off || dyn + tail + 1 >= n || w->smp_cpi <= 0) {
            w->smp_state = WS_OFF;
            return 0;
        }
        uint64_t all = (uint64_t)k->n_wg * (k->launch.waves_per_wg ? k->launch.waves_per_wg : w->wg->n_waves);
        if (parts ? !k->smp.pub_all_out : k->smp.waves_started < all) {
            w->smp_next = dyn + 16; /* workgroups are still to start: look again later */
            return 0;
        }
        if (c->sample_max_bound && !k->smp.wave_decided && (parts || !wave_decide(c, k))) {
            /* sample.max_bound: the kernel's waves skip only once it is
             * decided for all of them (with the cut, at a serial point) */
            w->smp_next = dyn + 16;
            return 0;
        }
        if (k->smp.wave_wide) { /* (with the cut: until the serial point publishes it as pub_off) */
            w->smp_state = WS_OFF;
            return 0;
        }
        if (w->vmcnt || w->lgkmcnt) {
            w->smp_next = dyn + 1; /* at a point where none of its accesses is in flight */
            return 0;
        }
        if (ramping_down(c, k, w)) {
            /* its CU is emptying at the kernel's end: the rate it measured among
             * more workgroups does not hold (the rest runs in detail) */
            if (parts)
                ws->ramp++;
            else
                k->smp.wave_ramp++;
            w->smp_state = WS_OFF;
            return 0;
        }
        int64_t skipped = skip_ahead(s, w, tail, t);
        if (skipped < 0)
            return -1;
        if (!skipped)
            return 0; /* runs this stretch in detail */
        double sleep = (double)skipped * w->smp_cpi;
        double err = sleep * w->smp_rel; /* the skip's error: its time times the halves' difference */
        w->smp_err += err;
        w->smp_skipped += (uint64_t)skipped;
        if (parts) {
            ws->skips++;
            ws->instr += (uint64_t)skipped;
            ws->sleep_ps += sleep;
            ws->err_ps += err;
        } else {
            k->smp.wave_skips++;
            k->smp.wave_instr += (uint64_t)skipped;
            s->smp_skipped += (uint64_t)skipped;
            k->smp.wave_sleep_ps += sleep;
            k->smp.wave_err_ps += err;
        }
        w->smp_until = t + (rp_time)sleep;
        w->smp_state = WS_ASLEEP;
        w->smp_next = w->walk.dyn;
    }
        /* fall through */
    case WS_ASLEEP: {
        if (t < w->smp_until) {
            /* wake before the watchdog would take the sleep for a hang */
            rp_time wd = rp_lat_ps(c->watchdog, s->clk) / 2, r = w->smp_until;
            if (wd && r - t > wd)
                r = t + wd;
            e->progress++;
            *resume = r;
            return 1;
        }
        ff_batch *b = w->smp_data ? w->smp_data->pending : NULL;
        if (b) {
            w->smp_data->pending = NULL;
            struct rp_ffpool *p = ff_pool(s);
            int rc = !p || ff_apply(s, k->gpu, &b->l, p);
            ff_batch_free(b);
            if (rc) {
                rp_sim_fail(s, "sampled replay: out of memory");
                return -1;
            }
        }
        uint64_t tail = n * c->sample_wave_tail / 100;
        w->smp_state = w->walk.dyn + tail + 1 < n ? WS_SKIP : WS_OFF;
        w->smp_next = w->walk.dyn + 1; /* the instruction that stopped the skip runs in detail */
        return 0;
    }
    default:
        w->smp_state = WS_OFF;
        return 0;
    }
}

void rp_sample_wave_end(rp_sim *s, rp_wave *w, rp_time t)
{
    rp_kernel *k = w->wg->k;
    if (s->cfg.sample_max_bound && w->smp_data)
        __atomic_add_fetch(&k->smp.wv_ended, 1, __ATOMIC_RELAXED);
    if (s->smp_parts) {
        w->wg->smp.life_ps += (double)(t - w->wg->start); /* (the dispatcher adds it at the workgroup's end) */
        if (w->smp_err > w->wg->smp.max_err_ps)
            w->wg->smp.max_err_ps = w->smp_err;
    } else {
        k->smp.wave_life_ps += (double)(t - w->wg->start);
        if (w->smp_err > k->smp.wave_max_err_ps)
            k->smp.wave_max_err_ps = w->smp_err;
    }
    if (w->smp_data)
        ff_batch_free(w->smp_data->pending);
    free(w->smp_data);
    w->smp_data = NULL;
}

void rp_sample_wg_end(rp_sim *s, rp_kernel *k, const rp_wg *wg)
{
    if (k->smp.defer_wait && wg->index < k->smp.defer_first)
        k->smp.defer_wait--;
    if (!s->smp_parts)
        return;
    k->wg_instr_done += wg->instr_done;
    k->wg_spins_done += wg->spins_done;
    const struct rp_wg_smp *ws = &wg->smp;
    rp_ksample *m = &k->smp;
    m->wave_skips += ws->skips;
    m->wave_instr += ws->instr;
    skip_add(s, ws->instr);
    m->wave_sleep_ps += ws->sleep_ps;
    m->wave_err_ps += ws->err_ps;
    m->wave_life_ps += ws->life_ps;
    if (ws->max_err_ps > m->wave_max_err_ps)
        m->wave_max_err_ps = ws->max_err_ps;
    m->wave_measured += ws->measured;
    m->wave_crossed += ws->crossed;
    m->wave_short += ws->shorts;
    m->wave_ramp += ws->ramp;
}

int rp_sample_publish(rp_sim *s)
{
    /* what the partitions' fast-forwards did to other partitions' L2 banks,
     * in partition order (the same for any --threads) */
    for (uint32_t i = 0; s->smp_defer && i < s->n_parts; i++) {
        if (s->parts[i].ffpool && s->parts[i].ffpool->defer.n && ff_apply_deferred(s, s->parts[i].ffpool)) {
            rp_sim_fail(s, "sampled replay: out of memory");
            return -1;
        }
        s->smp_skipped += s->parts[i].smp_skipped;
        s->parts[i].smp_skipped = 0;
    }
    for (uint32_t g = 0; g < s->n_gpus; g++)
        for (rp_kernel *k = s->gpus[g].disp.active; k; k = k->next) {
            rp_ksample *m = &k->smp;
            if (s->cfg.sample_max_bound && k->next_wg >= k->n_wg && !m->wave_decided)
                (void)wave_decide(&s->cfg, k); /* (a refusal sets wave_off, published below) */
            m->pub_off = m->wave_off || __atomic_load_n(&m->off_req, __ATOMIC_RELAXED) ||
                         __atomic_load_n(&k->cas_seen, __ATOMIC_RELAXED) || k->gws_cap ||
                         __atomic_load_n(&k->spin_iterations, __ATOMIC_RELAXED);
            m->pub_all_out = k->next_wg >= k->n_wg;
            m->pub_cas = __atomic_load_n(&k->cas_seen, __ATOMIC_RELAXED);
        }
    return 0;
}

/* Mean of v[0..n) and the largest relative deviation from it (0 when the
 * mean is not positive). */
static double spread(const double *v, uint32_t n, double *mean)
{
    double m = 0, dev = 0;
    for (uint32_t i = 0; i < n; i++)
        m += v[i];
    m /= n;
    *mean = m;
    if (m <= 0)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        double d = (v[i] > m ? v[i] - m : m - v[i]) / m;
        if (d > dev)
            dev = d;
    }
    return dev;
}

/* Wavefront instructions per ps over windows [from, from + n) of m. */
static double windows_rate(const rp_ksample *m, uint32_t from, uint32_t n)
{
    uint64_t i = 0, ps = 0;
    for (uint32_t w = from; w < from + n; w++)
        i += m->w_instr[w], ps += m->w_ps[w];
    return ps ? (double)i / (double)ps : 0;
}

/* How far one window's rate strays from mean, relative to it: the root mean
 * square of (window rate - mean) / mean over the n windows from `from`, each
 * weighted by its time (a time-weighted mean of the rates is mean itself when
 * mean is their rate). 0 for n < 2 or mean <= 0. */
static double windows_swing(const rp_ksample *m, uint32_t from, uint32_t n, double mean)
{
    if (n < 2 || mean <= 0)
        return 0;
    double acc = 0, ps = 0;
    for (uint32_t w = from; w < from + n; w++) {
        if (!m->w_ps[w])
            continue;
        double d = ((double)m->w_instr[w] / (double)m->w_ps[w] - mean) / mean;
        acc += d * d * (double)m->w_ps[w];
        ps += (double)m->w_ps[w];
    }
    return ps > 0 ? sqrt(acc / ps) : 0;
}

/* Fast-forward the stretch [first, first + n) of k predicted at rate mean
 * (wavefront instructions per ps) within rel of it: its time and bound
 * added to k's. 0, or -1 after rp_sim_fail. */
static int stretch_apply(rp_sim *s, rp_kernel *k, uint32_t first, uint32_t n, double mean, double rel)
{
    rp_ksample *m = &k->smp;
    uint64_t instr = 0;
    if (ff_range(s, k, first, n, true, 0, &instr))
        return -1;
    m->skipped_instr += instr;
    rp_time sp = (rp_time)((double)instr / mean);
    m->skip_ps += sp;
    m->bound_ps += (rp_time)((double)sp * rel);
    return 0;
}

/* The workgroups at the end of k replayed in detail after its last stretch
 * (sample.tail rounds; 0: none). They are handed out as the workgroups in
 * flight at the decision end, and the stretch is applied when the last of
 * those is done (rp_ksample.defer_wait): the workgroups before it leave the
 * caches first, as in grid order, and the GPU never drains. */
static uint64_t tail_wgs(const rp_config *c, const rp_kernel *k)
{
    return (uint64_t)c->sample_tail * k->smp.peak;
}

int rp_sample_hold(rp_sim *s, rp_kernel *k)
{
    rp_ksample *m = &k->smp;
    if (!m->defer_n)
        return 0;
    uint32_t n = m->defer_n;
    m->defer_n = 0;
    return stretch_apply(s, k, m->defer_first, n, m->defer_mean, m->defer_rel);
}

int rp_sample_wg_done(rp_sim *s, rp_kernel *k, rp_time now)
{
    rp_ksample *m = &k->smp;
    const rp_config *c = &s->cfg;
    if (m->defer_n && m->tail && !m->defer_wait && rp_sample_hold(s, k))
        return -1; /* the workgroups before the deferred stretch are done: it applies now */
    if (!c->sample_enable || m->off || m->whole || k->next_wg >= k->n_wg)
        return 0;
    /* The kernel's instructions so far and whether its waves polled: with
     * the GPU cut into partitions (s->smp_parts), those of the workgroups
     * whose end this dispatcher has seen (the CUs' partitions add theirs
     * concurrently); the same for any --threads */
    uint64_t ni = s->smp_parts ? k->wg_instr_done : k->n_instr;
    if ((s->smp_parts ? k->wg_spins_done : k->spin_iterations) || k->gws_cap ||
        (s->smp_defer ? k->smp.pub_cas : k->cas_seen)) {
        m->off = true; /* its time depends on other workgroups: replayed in full */
        return 0;
    }
    uint32_t inflight = k->next_wg - (k->wgs_done - 1); /* with the one just done */
    if (inflight > m->peak)
        m->peak = inflight;
    if (!m->lat) { /* the first window starts with the kernel's first workgroup done */
        m->lat = now > k->start ? now - k->start : 1;
        m->win_t0 = m->cum_t0 = now;
        m->win_i0 = m->cum_i0 = ni;
        return 0;
    }
    /* Windows of sample.window rounds: a round is as many workgroups done
     * as fit at once (the most seen in flight). Workgroups start and end in
     * waves, so a shorter window would alias with them. */
    if (++m->win_done < (uint64_t)c->sample_window * m->peak || now <= m->win_t0)
        return 0; /* (a window that took no time goes on) */
    m->win_done = 0;
    if (m->n_rate == RP_SAMPLE_WINDOWS) {
        memmove(m->w_instr, m->w_instr + 1, (RP_SAMPLE_WINDOWS - 1) * sizeof *m->w_instr);
        memmove(m->w_ps, m->w_ps + 1, (RP_SAMPLE_WINDOWS - 1) * sizeof *m->w_ps);
        m->n_rate--;
    }
    m->w_instr[m->n_rate] = ni - m->win_i0;
    m->w_ps[m->n_rate++] = now - m->win_t0;
    m->n_seen++;
    m->win_t0 = now;
    m->win_i0 = ni;
    uint32_t st = c->sample_stable;
    if (k->n_wg - k->next_wg < 2 * m->peak || m->n_seen <= c->sample_warmup ||
        k->n_wg - k->next_wg <= tail_wgs(c, k) || m->defer_n)
        return 0; /* less than two rounds of workgroups left (or only the tail, sample.tail), still
                   * warming up, or a stretch waits for the workgroups in flight */
    uint64_t usable = m->n_seen - c->sample_warmup < m->n_rate ? m->n_seen - c->sample_warmup : m->n_rate;
    double g_rate[32], mean = 0, dev = 1, drift = 0, moved = 0;
    uint32_t f = m->merge ? m->merge : 1;
    bool found = false;
    /* what the search below changes, put back when the stretch it finds is
     * refused for its bound (sample.max_bound) */
    const uint64_t period_was = m->period_rounds;
    const double last_dev_was = m->last_dev;
    const bool by_group_was = m->by_group;
    /* After a stretch: a check. The rate of one group of f windows (the f
     * that decided before) within the tolerance of the rate that predicted
     * the stretch confirms it: the next stretch is sample.period_growth times
     * longer. A kernel whose rate holds is then measured about log(rounds)
     * times, not once every sample.period rounds. */
    if (m->prev_mean > 0 && usable >= f) {
        double r = windows_rate(m, m->n_rate - f, f);
        if (r > 0) {
            moved = (r > m->prev_mean ? r - m->prev_mean : m->prev_mean - r) / r;
            if (moved * 100.0 <= c->sample_tolerance) {
                found = true;
                mean = r;
                dev = m->last_dev;
                drift = moved;
                if (m->period_rounds <= RP_SAMPLE_PERIOD_MAX / c->sample_period_growth)
                    m->period_rounds *= c->sample_period_growth;
                moved *= c->sample_period_growth; /* a stretch that much longer may drift that much further */
            }
        }
    }
    /* Launches alike measured before (the kernel level's group): this
     * launch's first stretch is decided once sample.alike_groups groups of
     * their f windows after its warm-up each agree within the tolerance with
     * the rate that decided their first stretch (the same code, grid and
     * arguments at the same point of the launch: theirs showed that the
     * rate holds still there, sample.stable groups of its own would show
     * it again). The group's rate is that of its last launch sampled at the
     * workgroup level (group_end). */
    const struct rp_sgroup *grp =
        !found && !m->switched && m->group && c->sample_alike_groups ? &s->sgroups[m->group - 1] : NULL;
    if (grp && !grp->off && grp->wg_rate > 0) {
        uint32_t fg = grp->wg_merge ? grp->wg_merge : 1, ng = c->sample_alike_groups;
        if ((uint64_t)fg * ng <= usable) {
            double worst = 0;
            for (uint32_t g = 0; g < ng; g++) {
                double r = windows_rate(m, m->n_rate - (ng - g) * fg, fg);
                double d = r > 0 ? (r > grp->wg_rate ? r - grp->wg_rate : grp->wg_rate - r) / grp->wg_rate : 1;
                if (d > worst)
                    worst = d;
            }
            mean = windows_rate(m, m->n_rate - ng * fg, ng * fg);
            if (mean > 0 && worst * 100.0 <= c->sample_tolerance) {
                found = true;
                f = fg;
                dev = worst;
                drift = 0;
                m->period_rounds = c->sample_period;
                m->last_dev = dev;
                m->by_group = true;
            }
        }
    }
    /* Else stable when the last sample.stable groups of f windows agree, and
     * their rate with the rate of every window since the warm-up, for the
     * smallest f = 1, 2, 4, ... (from the f that decided before) that the
     * windows measured so far allow. A kernel's rate can swing with a period
     * of several rounds (conv at 5120 x 5120: +-13% over about six rounds,
     * as its workgroups sweep the image's rows), which single rounds never
     * agree on; groups of rounds longer than the period do. The second test
     * keeps a few windows that agree at the trough of a swing from deciding
     * (conv at 2048 x 2048 was +6.3% off, outside its bound, before it; conv
     * at 5120 x 5120 +7.56% with twice the tolerance there: single windows in
     * its trough, 3.6% from the rate of all; +1.09% with the tolerance). The
     * next stretch is sample.period x f rounds (as long against its
     * measurement as for f = 1). */
    double all = found ? 0 : windows_rate(m, m->n_rate - (uint32_t)usable, (uint32_t)usable);
    if (!found && (uint64_t)f * st <= usable)
        m->tests++;
    for (; !found && (uint64_t)f * st <= usable; f *= 2) {
        for (uint32_t g = 0; g < st; g++)
            g_rate[g] = windows_rate(m, m->n_rate - (st - g) * f, f);
        double gm;
        dev = spread(g_rate, st, &gm);
        mean = windows_rate(m, m->n_rate - st * f, st * f); /* the rate over the deciding windows */
        if (!m->best_f || dev < m->best_dev)
            m->best_dev = dev, m->best_f = f;
        if (mean > 0 && gm > 0 && dev * 100.0 <= c->sample_tolerance &&
            (all > mean ? all - mean : mean - all) * 100.0 > c->sample_tolerance * mean)
            m->far_from_all++;
        if (mean > 0 && gm > 0 && dev * 100.0 <= c->sample_tolerance &&
            (all > mean ? all - mean : mean - all) * 100.0 <= c->sample_tolerance * mean) {
            found = true;
            drift = (g_rate[st - 1] > g_rate[0] ? g_rate[st - 1] - g_rate[0] : g_rate[0] - g_rate[st - 1]) / mean;
            if (m->prev_mean > 0) /* how far it moved over the last stretch, which the check did not confirm */
                moved = (mean > m->prev_mean ? mean - m->prev_mean : m->prev_mean - mean) / mean;
            m->period_rounds = c->sample_period;
            m->last_dev = dev;
            break;
        }
    }
    if (!found)
        return 0;
    /* the bound: the spread of the deciding windows (at least half the
     * tolerance), plus their drift from the first to the last (a check: its
     * distance from the rate it checked), plus the distance of their rate
     * from the rate of all detailed work so far, plus how far the rate moved
     * over the last stretch, scaled to this one; summed over the stretches */
    double cum = now > m->cum_t0 ? (double)(ni - m->cum_i0) / (double)(now - m->cum_t0) : mean;
    /* plus how far single windows since the warm-up strayed from the rate,
     * over f: a swing longer than the deciding groups of f windows, which
     * they could not see (conv at 2048 x 2048: three single windows on the
     * plateau of a swing with a period of about seven rounds agreed within
     * 1.9%, and the stretch after them held the swing's peak, 12% faster:
     * +3.9% on the kernel, outside its bound; the windows since the warm-up
     * strayed 10.7% from the rate) */
    double swing = windows_swing(m, m->n_rate - (uint32_t)usable, (uint32_t)usable, mean) / f;
    double rel = (dev > c->sample_tolerance / 200.0 ? dev : c->sample_tolerance / 200.0) + drift +
                 (cum > mean ? cum - mean : mean - cum) / mean + moved + swing;
    /* fast-forward the next stretch of workgroups not yet handed out (all of
     * them for sample.period = 0, or when what would be left could not be
     * measured again), then measure again */
    uint32_t left = k->n_wg - k->next_wg, chunk = left;
    uint64_t per = m->period_rounds * f * m->peak; /* a stretch as long, against its measurement, for any f */
    uint64_t tail = tail_wgs(c, k);
    if (per && per < left && left - per >= ((uint64_t)c->sample_warmup + f + 2) * m->peak)
        chunk = (uint32_t)per;
    else if (tail && left > tail)
        chunk = left - (uint32_t)tail;
    /* sample.max_bound: the kernel's bound, as a share of its time, is the
     * stretches' rel times their share of it, taken as their share of its
     * workgroups (an estimate: workgroups alike) */
    double share = (double)chunk / (double)k->n_wg;
    if (too_wide(c, m, m->rel_acc + rel * share)) {
        /* the kernel's bound would be wider than sample.max_bound: no skip;
         * the next window decides again */
        m->period_rounds = period_was;
        m->last_dev = last_dev_was;
        m->by_group = by_group_was;
        return 0;
    }
    m->rel_acc += rel * share;
    m->merge = f;
    if (!m->switched) {
        m->t_switch = now;
        m->first_mean = mean;
        m->first_merge = f;
    }
    m->switched = true;
    m->stretches++;
    m->rate_mean = mean;
    if (dev > m->rate_dev)
        m->rate_dev = dev;
    m->skipped_wgs += chunk;
    m->detailed_wgs = k->n_wg - m->skipped_wgs;
    if (k->next_wg + chunk == k->n_wg || k->next_wg + chunk + tail == k->n_wg) {
        /* the last stretch: applied once the workgroups in flight are done
         * (rp_sample_hold), so that what they leave in the caches comes
         * before what the later workgroups it skips leave, as in grid order.
         * With a tail (sample.tail) the tail's workgroups are handed out
         * meanwhile and run in detail: the kernel's ramp-down, and what its
         * last workgroups leave in the L2 for the end-of-kernel write-back,
         * are a full replay's (sample_deep's first launch: -3.45%, outside
         * its bound, with the last stretch reaching the kernel's end, where
         * the fast-forward left 16,384 dirty lines and the full replay
         * 18,219, the write-back taking 4.5 us instead of 5.7; -1.40% with
         * one round of tail) */
        m->defer_first = k->next_wg;
        m->defer_n = chunk;
        m->defer_mean = mean;
        m->defer_rel = rel;
        m->tail = k->next_wg + chunk < k->n_wg;
        /* the workgroups in flight (before the one just done): with a tail,
         * its workgroups are handed out meanwhile, and the stretch applies
         * when the last of these is done (rp_sample_wg_end counts them) */
        m->defer_wait = m->tail ? k->next_wg - k->wgs_done : 0;
    } else if (stretch_apply(s, k, k->next_wg, chunk, mean, rel)) {
        return -1;
    }
    if (m->tail && !m->defer_wait && rp_sample_hold(s, k))
        return -1; /* nothing in flight: at once */
    k->next_wg += chunk;
    k->wgs_done += chunk;
    m->prev_mean = mean;
    /* measure again from here (the fast-forward changed the caches: warm-up first) */
    m->n_rate = 0;
    m->n_seen = 0;
    m->win_done = 0;
    m->win_t0 = now;
    m->win_i0 = ni;
    return 0;
}

/* ---- launch vectors (sample.alike_vectors) ----------------------------------------------------
 * What the trace says of how a launch behaves, from the records alone (no
 * data values) of its first, middle and last workgroups: the same three for
 * every launch of a grid, so launches compare like with like. Scalars:
 * instructions per wave; vector memory ops (global, flat, private), vector
 * stores and atomics, LDS ops and scalar loads per instruction; active lanes
 * and 64-byte lines (GCN3's L1 and L2 line: AMD, "AMD Graphics Cores Next
 * Architecture" white paper, 2012) per vector op; the lines a wave touches
 * over those it touches op by op (reuse inside a wave: the two halves of a
 * pair in one line, or not). A histogram: the distance between the
 * addresses one work-item (the lowest lane active in both) accesses in a
 * wave's successive vector ops, in lines (64 B), by powers of two (the
 * stride between the two keys of a bitonic stage; a buffer swapped with
 * another keeps it; steps inside a line are one bin). A pure function of
 * the trace: the same on every thread and for every --threads. */
enum { LV_SCAL = 8, LV_HIST = 49 };
struct rp_lvec {
    uint8_t state; /* 0: not computed yet, 1: computed, 2: none (no workgroups, a record not read) */
    double f[LV_SCAL];
    double h[LV_HIST]; /* shares, summing to 1 (or all 0: no two vector ops in a wave) */
};

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Appends the distinct lines (64 B) of op's active lanes to *v (grown);
 * the count added, or -1 out of memory. */
static int64_t op_lines(const trc_mem_op *op, uint64_t **v, size_t *n, size_t *cap)
{
    uint32_t lanes = trc_popcount64(op->exec), b = op->bytes_per_lane ? op->bytes_per_lane : 1;
    if (*n + 2 * (size_t)lanes > *cap) {
        size_t c = *cap ? 2 * *cap : 1024;
        while (c < *n + 2 * (size_t)lanes)
            c *= 2;
        uint64_t *p = realloc(*v, c * sizeof *p);
        if (!p)
            return -1;
        *v = p;
        *cap = c;
    }
    size_t at = *n;
    for (uint32_t l = 0; l < lanes; l++) {
        uint64_t a = trc_mo_addr(op, l), lo = a >> 6, hi = (a + b - 1) >> 6;
        (*v)[(*n)++] = lo;
        if (hi != lo)
            (*v)[(*n)++] = hi;
    }
    qsort(*v + at, *n - at, sizeof **v, cmp_u64);
    size_t u = at;
    for (size_t i = at; i < *n; i++)
        if (i == at || (*v)[i] != (*v)[u - 1])
            (*v)[u++] = (*v)[i];
    *n = u;
    return (int64_t)(u - at);
}

static void lvec_compute(rp_sim *s, const trc_event *ev, struct rp_lvec *o)
{
    memset(o, 0, sizeof *o);
    o->state = 2;
    uint32_t n = ev->n_wg;
    if (!n)
        return;
    uint32_t at[3] = {0, n / 2, n - 1};
    double waves = 0, instr = 0, vmem = 0, vst = 0, lds = 0, smem = 0, lanes = 0, lines = 0, distinct = 0, steps = 0;
    uint64_t *wl = NULL; /* the lines of a wave's vector ops, op by op */
    size_t nw = 0, cw = 0;
    bool ok = true;
    for (int w = 0; w < 3 && ok; w++) {
        if (w && at[w] == at[w - 1])
            continue;
        char err[256];
        trc_wg *g = trc_reader_load_wg_ex(s->rd, ev->launch.kernel_id, at[w], TRC_WG_NO_LDS_ADDR, err, sizeof err);
        if (!g) {
            ok = false;
            break;
        }
        for (uint32_t v = 0; v < g->n_waves && ok; v++) {
            const trc_wave *tw = &g->waves[v];
            waves++;
            instr += (double)tw->n_instr;
            nw = 0;
            const trc_mem_op *prev = NULL;
            for (uint32_t m = 0; m < tw->n_mem; m++) {
                const trc_mem_op *op = &tw->mem[m];
                if (op->flags & TRC_MO_LDS) {
                    lds++;
                    continue;
                }
                if (op->flags & TRC_MO_SMEM) {
                    smem++;
                    continue;
                }
                if (!op->exec)
                    continue;
                vmem++;
                vst += (op->flags & (TRC_MO_STORE | TRC_MO_ATOMIC)) != 0;
                lanes += trc_popcount64(op->exec);
                int64_t c = op_lines(op, &wl, &nw, &cw);
                if (c < 0) {
                    ok = false;
                    break;
                }
                lines += (double)c;
                uint64_t both = prev ? prev->exec & op->exec : 0;
                if (both) {
                    /* the same work-item's step: its lowest lane active in both */
                    uint64_t below = (both & -both) - 1;
                    uint64_t a = trc_mo_addr(op, trc_popcount64(op->exec & below)),
                             p = trc_mo_addr(prev, trc_popcount64(prev->exec & below));
                    uint64_t d = (a > p ? a - p : p - a) >> 6; /* in lines: closer is one line for a cache */
                    uint32_t bin = d ? 64 - (uint32_t)__builtin_clzll(d) : 0;
                    o->h[bin < LV_HIST ? bin : LV_HIST - 1]++;
                    steps++;
                }
                prev = op;
            }
            if (nw) {
                qsort(wl, nw, sizeof *wl, cmp_u64);
                size_t u = 1;
                for (size_t i = 1; i < nw; i++)
                    u += wl[i] != wl[i - 1];
                distinct += (double)u;
            }
        }
        trc_wg_free(g);
    }
    free(wl);
    if (!ok || !waves || !instr)
        return;
    o->f[0] = instr / waves;
    o->f[1] = vmem / instr;
    o->f[2] = vst / instr;
    o->f[3] = lds / instr;
    o->f[4] = smem / instr;
    o->f[5] = vmem ? lanes / vmem : 0;
    o->f[6] = vmem ? lines / vmem : 0;
    o->f[7] = lines ? distinct / lines : 0;
    for (int i = 0; i < LV_HIST; i++)
        o->h[i] = steps ? o->h[i] / steps : 0;
    o->state = 1;
}

/* The vector of trace event i (a LAUNCH), computed when first asked for
 * (kept by kernel id: only launches compared with one of other arguments
 * have one); NULL when it has none or out of memory. Called only where
 * groups are made and read by one thread (not with smp_serial_groups:
 * vectors_on). */
static const struct rp_lvec *lvec_of(rp_sim *s, size_t i)
{
    const trc_event *ev = trc_reader_event(s->rd, i);
    size_t n = trc_reader_n_kernels(s->rd);
    if (!ev || ev->kind != TRC_EV_LAUNCH || ev->launch.kernel_id >= n)
        return NULL;
    if (!s->smp_lvec) {
        if (!(s->smp_lvec = calloc(n, sizeof *s->smp_lvec)))
            return NULL;
        s->n_smp_lvec = n;
    }
    struct rp_lvec **o = &s->smp_lvec[ev->launch.kernel_id];
    if (!*o) {
        if (!(*o = malloc(sizeof **o)))
            return NULL;
        lvec_compute(s, ev, *o);
    }
    return (*o)->state == 1 ? *o : NULL;
}

/* Vectors within sample.alike_vectors percent of each other: every scalar
 * (relative to the larger), and the histograms (their shares' absolute
 * differences summed, against twice the tolerance). */
static bool lvec_close(const struct rp_lvec *a, const struct rp_lvec *b, uint32_t pct)
{
    double t = pct / 100.0, d = 0;
    for (int i = 0; i < LV_SCAL; i++) {
        double x = a->f[i], y = b->f[i], m = x > y ? x : y;
        if ((x > y ? x - y : y - x) > t * m)
            return false;
    }
    for (int i = 0; i < LV_HIST; i++)
        d += a->h[i] > b->h[i] ? a->h[i] - b->h[i] : b->h[i] - a->h[i];
    return d <= 2 * t;
}

/* A loose group's checks (model choices): the first after 4 launches
 * fast-forwarded whole, then after twice as many each time, up to 64. */
#define LOOSE_CHECK_FIRST 4u
#define LOOSE_CHECK_MAX 64u

static bool vectors_on(const rp_sim *s) { return s->cfg.sample_alike_vectors && !s->smp_serial_groups; }

/* Launches alike: the same kernel of the same code object, grid, workgroup
 * size and kernel arguments (the same buffers and scalars: an iteration of a
 * loop on the host); or, with sample.alike_vectors, other arguments and
 * vectors (events ia and ib) that agree (a bitonic sort's stages of one
 * stride, buffers swapped between iterations). */
static bool alike_launch(rp_sim *s, const trc_launch *a, uint64_t ha, size_t ia, const trc_launch *b, uint64_t hb,
                         size_t ib)
{
    if (strcmp(a->kernel_name, b->kernel_name) || a->code_object_id != b->code_object_id ||
        memcmp(a->grid, b->grid, sizeof a->grid) || memcmp(a->wg_size, b->wg_size, sizeof a->wg_size) ||
        a->kernarg_size != b->kernarg_size)
        return false;
    if (ha == hb)
        return true;
    /* (on another device: where its data lies and what runs beside it
     * differ, which no vector shows: km --gpus 4 on u-mgpu, a device's
     * km_update 3.3 us, another's 11 us) */
    if (!vectors_on(s) || a->device != b->device)
        return false;
    const struct rp_lvec *va = lvec_of(s, ia), *vb = lvec_of(s, ib);
    return va && vb && lvec_close(va, vb, s->cfg.sample_alike_vectors);
}

static bool alike(rp_sim *s, const rp_kernel *ka, const rp_kernel *kb)
{
    return alike_launch(s, &ka->launch, ka->kernarg_hash, ka->ev_index, &kb->launch, kb->kernarg_hash, kb->ev_index);
}

/* Launches that decide a group, and the ring of their times: sample.kernels
 * (at most 8), 1 for a group whose first launch streamed (g->need), at
 * least 3 for a loose one (its launches are alike by their vectors only:
 * two that agree may still be unlike the rest). */
static uint32_t group_ring(const rp_sim *s, const struct rp_sgroup *g)
{
    uint32_t n = s->cfg.sample_kernels < 8 ? s->cfg.sample_kernels : 8;
    return g->loose && n < 3 ? 3 : n;
}

static uint32_t group_need(const rp_sim *s, const struct rp_sgroup *g)
{
    return g->loose ? group_ring(s, g) : g->need ? g->need : s->cfg.sample_kernels;
}

/* Whether the launches of g are fast-forwarded whole from now on (the test
 * of rp_sample_kernel_start); *mean, *dev: their ps per instruction and its
 * spread. */
static bool group_decided(const rp_sim *s, const struct rp_sgroup *g, double *mean, double *dev)
{
    const rp_config *c = &s->cfg;
    *mean = *dev = 0;
    if (g->off || g->n_detailed < group_need(s, g))
        return false;
    *dev = spread(g->ps_per_instr, g->n_detailed, mean);
    return *mean > 0 && *dev * 100.0 <= c->sample_tolerance;
}

/* Whether the next launch of g (its arguments other than its first's when
 * other_args) will be fast-forwarded whole (the test of
 * rp_sample_kernel_start). */
static bool group_will_skip(const rp_sim *s, const struct rp_sgroup *g, bool other_args)
{
    double mean, dev;
    struct rp_sgroup h = *g;
    if (other_args && vectors_on(s))
        h.loose = true; /* (rp_sample_kernel_start makes it loose) */
    if (!group_decided(s, &h, &mean, &dev))
        return false;
    return !h.loose || h.ff_run < h.check_every;
}

/* Does what the L2 holds after k (fast-forwarded whole) matter? Only to
 * work replayed in detail after it: not when the launch after it in the
 * trace, on the same GPUs, will be fast-forwarded whole too (its group is
 * decided, and a decided group stays so while its launches are not added
 * to it: a loose group's check, group_will_skip), nor when k is the last
 * launch. Then k's loads need not allocate their
 * lines: the next launch replayed in detail finds the L2 as the whole
 * fast-forwards before it left it with only the last one's loads (and every
 * store), which in a chain of launches that stream more than the L2 holds
 * is what it would hold anyway. Its stores still reach the memory. */
static bool ff_loads_matter(rp_sim *s, const rp_kernel *k)
{
    size_t n = trc_reader_n_events(s->rd);
    for (size_t i = k->ev_index + 1; i < n; i++) {
        const trc_event *ev = trc_reader_event(s->rd, i);
        if (!ev || ev->kind != TRC_EV_LAUNCH)
            continue;
        if (!ev->n_instr)
            continue; /* no work: it loads nothing */
        uint32_t gpu = s->cfg.topo_kind == RP_TOPO_DISCRETE ? ev->launch.device % s->n_gpus : 0; /* host.c */
        if (gpu != k->gpu)
            return true; /* another GPU's: this GPU's next launch is further on */
        uint64_t h = rp_kernarg_hash(&ev->launch);
        for (size_t j = 0; j < s->n_sgroups; j++) {
            const struct rp_sgroup *g = &s->sgroups[j];
            if (alike_launch(s, &g->first->launch, g->first->kernarg_hash, g->first->ev_index, &ev->launch, h, i))
                return !group_will_skip(s, g, h != g->first->kernarg_hash);
        }
        return true; /* a launch unlike every one so far: replayed in detail */
    }
    return false;
}

/* The group of launches alike k, NULL when there is none yet. */
static struct rp_sgroup *group_find(rp_sim *s, const rp_kernel *k)
{
    for (size_t i = 0; i < s->n_sgroups; i++) {
        if (alike(s, s->sgroups[i].first, k))
            return &s->sgroups[i];
    }
    return NULL;
}

/* The group of launches alike k, made if there is none; NULL out of memory. */
static struct rp_sgroup *group_of(rp_sim *s, const rp_kernel *k)
{
    struct rp_sgroup *g = group_find(s, k);
    if (g)
        return g;
    struct rp_sgroup *v = realloc(s->sgroups, (s->n_sgroups + 1) * sizeof *v);
    if (!v)
        return NULL;
    s->sgroups = v;
    memset(&v[s->n_sgroups], 0, sizeof *v);
    v[s->n_sgroups].first = k;
    return &v[s->n_sgroups++];
}

int rp_sample_kernel_start(rp_sim *s, rp_kernel *k)
{
    const rp_config *c = &s->cfg;
    if (c->sample_enable && s->smp_parts && k->prog) {
        /* what rp_sample_wave's first wave decides on one partition: the
         * waves, in several, read it once a serial point published it */
        if (gcn_program_sync_reasons(k->prog, k->prog->insn[k->entry_idx].pc, NULL))
            k->smp.wave_off = true;
        if ((uint64_t)k->n_wg * (k->launch.waves_per_wg ? k->launch.waves_per_wg : 1) <
            (uint64_t)(k->gpu_count ? k->gpu_count : 1) * c->shader_arrays * c->cus_per_sa * c->simds)
            k->smp.wave_off = true;
    }
    if (!c->sample_enable || !c->sample_kernels || !k->n_instr_traced)
        return 0;
    /* (with a dispatcher per GPU in partitions, groups are made and joined at
     * the serial points, rp_sample_note: here they are only read) */
    struct rp_sgroup *g = s->smp_serial_groups ? group_find(s, k) : group_of(s, k);
    if (!g) {
        if (s->smp_serial_groups)
            return 0; /* the first launch of its kind: runs in full */
        rp_sim_fail(s, "sampled replay: out of memory");
        return -1;
    }
    if (!s->smp_serial_groups) {
        k->smp.group = (size_t)(g - s->sgroups) + 1; /* its end adds it to the group */
        if (!g->loose && k->kernarg_hash != g->first->kernarg_hash) {
            g->loose = true; /* alike by its vector (vectors_on): decided anew on more launches */
            g->check_every = LOOSE_CHECK_FIRST;
            g->ff_run = 0;
        }
    }
    double mean, dev;
    if (!group_decided(s, g, &mean, &dev)) {
        if (!g->off && g->n_detailed >= group_need(s, g) && mean > 0)
            k->smp.group_dev = dev; /* (rp_sample_why_full) */
        return 0; /* too few launches yet, or they disagree: this one runs in full (and may join the group) */
    }
    if (g->loose) {
        /* launches alike by their vectors only: every check_every-th one
         * after a decision runs in detail and joins the ring; a run that
         * keeps agreeing is checked half as often (up to LOOSE_CHECK_MAX) */
        if (g->ff_run >= g->check_every) {
            k->smp.loose_check = true;
            g->ff_run = 0;
            g->check_every = g->check_every * 2 < LOOSE_CHECK_MAX ? g->check_every * 2 : LOOSE_CHECK_MAX;
            return 0;
        }
    }
    /* the group's spread, at least the tolerance: a group decides when its
     * launches are within the tolerance of their mean (group_decided), and
     * this launch is taken to be as they are; the spread of the two or so
     * that decided understates how far one may be (sample_warm: launches 1.6%
     * apart decided, later ones 1.5-3.2% from their mean), and one launch
     * (sample.kernels=1) measures none. Plus the largest bound of a member
     * that was itself sampled. */
    double least = c->sample_tolerance / 100.0;
    double rel = dev > least ? dev : least, mb = 0;
    /* a loose group's launches are alike by their vectors only: three
     * times that (bitonic 4x, launches of one stride: 1-7% from their
     * group's mean, the model's launch-to-launch jitter; twice left 11 of
     * 68 outside, three times 5; 2026-12-03, an estimate) */
    if (g->loose)
        rel *= 3;
    for (uint32_t i = 0; i < g->n_detailed; i++)
        if (g->rel_bound[i] > mb)
            mb = g->rel_bound[i];
    rel += mb;
    /* decided by its first launch alone, which streamed (group_end; the
     * stream rule, or sample.kernels = 1): plus what the L2's state at a
     * launch's start may change */
    bool streamed = !g->loose && (g->need == 1 || (c->sample_kernels == 1 && g->start_rel > 0));
    if (streamed)
        rel += g->start_rel;
    if (too_wide(c, &k->smp, rel))
        return 0; /* its bound would be wider than sample.max_bound: replayed in detail (it joins its
                   * group at its end, as a launch that ran in full) */
    if (g->loose)
        g->ff_run++; /* fast-forwarded whole since the group's last check */
    rp_ksample *m = &k->smp;
    m->switched = m->whole = true;
    m->t_switch = k->start;
    m->rate_mean = 1.0 / mean;
    m->rate_dev = dev;
    m->detailed_wgs = 0;
    m->skipped_wgs = k->n_wg;
    uint64_t instr = 0;
    if (ff_range(s, k, 0, k->n_wg, ff_loads_matter(s, k), wgs_at_once(c, k), &instr))
        return -1;
    m->skipped_instr = instr;
    m->skip_ps = (rp_time)((double)instr * mean);
    m->by_vectors = g->loose;
    m->alike_n = g->n_detailed;
    if (streamed)
        m->start_rel = g->start_rel;
    m->bound_ps = (rp_time)((double)m->skip_ps * rel);
    k->next_wg = k->wgs_done = k->n_wg;
    return 0;
}

static void group_end(rp_sim *s, rp_kernel *k);

void rp_sample_kernel_end(rp_sim *s, rp_kernel *k)
{
    rp_ksample *m = &k->smp;
    if (m->off_req)
        m->wave_off = true; /* (a wave that polls, with the GPU cut into partitions: rp_sample_why_full) */
    m->after_skips = skip_seen(s) > m->skipped_instr + m->wave_instr;
    if (m->wave_skips && !m->wave_bound_ps && m->wave_life_ps > 0 && k->end > k->start) {
        /* the wave level's bound: each skip's error (its time times its
         * wave's spread), over the waves' mean concurrency (their lifetimes
         * summed over the kernel's span): skips side by side overlap; but at
         * least the largest of one
         * wave's errors summed, as that wave may be the kernel's last (gd at
         * the 4x size: backward's last workgroup alone skipped, 11 skips of
         * 118 instructions, 6.7 us each, whose halves differed by 45%: a
         * bound of 18 ns over 1,800 waves' mean concurrency) */
        double b = m->wave_err_ps * (double)(k->end - k->start) / m->wave_life_ps;
        m->wave_bound_ps = (rp_time)(b > m->wave_max_err_ps ? b : m->wave_max_err_ps);
        m->bound_ps += m->wave_bound_ps;
    }
    if (!s->smp_serial_groups)
        group_end(s, k);
}

int rp_sample_note(rp_sim *s, rp_kernel *k, int end)
{
    const rp_config *c = &s->cfg;
    if (end) {
        group_end(s, k);
        return 0;
    }
    if (!c->sample_enable || !c->sample_kernels || !k->n_instr_traced || k->smp.whole)
        return 0;
    struct rp_sgroup *g = group_of(s, k);
    if (!g) {
        rp_sim_fail(s, "sampled replay: out of memory");
        return -1;
    }
    k->smp.group = (size_t)(g - s->sgroups) + 1;
    return 0;
}

/* The group's first launch k, at its end: does it decide the group alone
 * (g->need = 1; sample.kernels_stream; with sample.kernels = 1 it does
 * anyway, and its streaming widens the bound the same way)? A launch that moves many times the
 * L2's capacity through DRAM streams: at its end the L2 holds the last
 * data it touched, so the next launch alike, which reads in the same order,
 * has those lines evicted before it reaches them, as the first launch had
 * whatever came before it (the host's copies). So its first launch, warm or
 * cold, is as the later ones are, up to what the L2 held at their starts: at
 * most the L2's capacity of DRAM traffic, whose time at the DRAM's peak
 * bandwidth (r9nano: 2 MiB at 512 GB/s, 4.1 us) relative to the launch's time
 * widens the bound (an estimate: a launch waiting on latency rather than
 * bandwidth may gain more from the lines it finds). A launch sampled at the
 * workgroup or wave level counts its detailed work's DRAM bytes times its
 * instructions over its detailed ones (the skipped work's traffic is not
 * counted). Measured (2026-12-03): km large's launches move 40x (km_assign)
 * and 8x (km_partial) the L2 and differ from the first by 0.35%;
 * sample_deep's (3.7x when first measured, 7.9x since its detailed work is
 * counted this way) first launch is 4.4-6.6% slower than its later ones
 * (inside the widened bound), and sample_warm's (0.5x) 56%: the default 4
 * leaves that one to sample.kernels.
 * Read where the counters are final: one partition (now), or at a serial
 * point (a dispatcher per GPU, rp_sample_note after the kernel's end counters
 * were taken); not with the GPU cut into partitions or one partition per GPU
 * on a unified topology, where the DRAM's partition may be running. */
static void stream_test(rp_sim *s, const rp_kernel *k, struct rp_sgroup *g)
{
    const rp_config *c = &s->cfg;
    if (!c->sample_kernels_stream || !c->sample_kernels || !k->n_instr || k->end <= k->start)
        return;
    uint64_t dram;
    if (s->smp_serial_groups) {
        dram = k->sum1.dram_bytes - k->sum0.dram_bytes;
    } else if (s->n_parts <= 1) {
        rp_ksum now;
        memset(&now, 0, sizeof now);
        rp_ksum_take(s, k, &now, (int32_t)s->gpus[k->gpu].part->id, true);
        dram = now.dram_bytes - k->sum0.dram_bytes;
    } else {
        return;
    }
    uint64_t all = k->n_instr + k->smp.skipped_instr + k->smp.wave_instr;
    double moved = (double)dram * (double)all / (double)k->n_instr;
    uint32_t gpus = k->gpu_count ? k->gpu_count : 1;
    double cap = (double)c->l2_size * gpus;
    double bw = (double)rp_bw_Bps(c->dram_bandwidth, s->clk) * c->dram_channels * gpus;
    if (moved < (double)c->sample_kernels_stream * cap || bw <= 0)
        return;
    g->need = 1;
    g->start_rel = cap / bw * 1e12 / (double)(k->end - k->start);
}

/* A launch that ended and was not fast-forwarded whole adds its time per
 * instruction to its group (or turns the group off: its time depended on
 * other workgroups). */
static void group_end(rp_sim *s, rp_kernel *k)
{
    const rp_config *c = &s->cfg;
    if (!c->sample_enable || !c->sample_kernels || k->smp.whole || !k->n_instr || k->end <= k->start)
        return;
    if (!k->smp.group)
        return;
    struct rp_sgroup *g = &s->sgroups[k->smp.group - 1];
    /* (written atomically by the waves, on u-mgpu in other partitions: in an
     * earlier window, the barriers order them before this read) */
    if (__atomic_load_n(&k->spin_iterations, __ATOMIC_RELAXED) || k->gws_cap ||
        __atomic_load_n(&k->cas_seen, __ATOMIC_RELAXED)) {
        g->off = true; /* its time depends on other workgroups */
        return;
    }
    if (k->smp.switched && k->smp.first_mean > 0) {
        g->wg_rate = k->smp.first_mean; /* (rp_sample_wg_done, sample.alike_groups) */
        g->wg_merge = k->smp.first_merge;
    }
    if (!g->n_seen)
        stream_test(s, k, g);
    uint32_t n = group_ring(s, g); /* the last n launches replayed in full */
    /* a launch sampled at the workgroup level counts with its predicted time */
    g->rel_bound[g->n_seen % n] = (double)k->smp.bound_ps / (double)(k->end - k->start);
    g->ps_per_instr[g->n_seen++ % n] = (double)(k->end - k->start) / (double)(k->n_instr + k->smp.skipped_instr + k->smp.wave_instr);
    g->n_detailed = g->n_seen < n ? g->n_seen : n;
    double mean, dev;
    if (g->loose && !group_decided(s, g, &mean, &dev)) {
        g->check_every = LOOSE_CHECK_FIRST; /* they disagree: checked often again once they agree */
        g->ff_run = 0;
    }
}

int rp_sample_why_full(const rp_sim *s, const rp_kernel *k, char *buf, size_t n)
{
    const rp_config *c = &s->cfg;
    const rp_ksample *m = &k->smp;
    if (!c->sample_enable || m->switched || m->wave_skips || !k->n_instr_traced || !k->done)
        return -1;
    int why = __atomic_load_n(&k->spin_iterations, __ATOMIC_RELAXED) ? RP_WHY_POLLS
              : k->gws_cap                                          ? RP_WHY_GWS
              : __atomic_load_n(&k->cas_seen, __ATOMIC_RELAXED)      ? RP_WHY_CAS
              : m->wide          ? RP_WHY_WIDE
              : !m->tests        ? RP_WHY_ROUNDS
                                 : RP_WHY_RATE;
    if (!buf || !n)
        return why;
    int w;
    if (why == RP_WHY_POLLS)
        w = snprintf(buf, n, "its waves polled: its time depends on other workgroups");
    else if (why == RP_WHY_GWS)
        w = snprintf(buf, n, "a grid barrier (cooperative launch)");
    else if (why == RP_WHY_CAS)
        w = snprintf(buf, n, "global compare-and-swaps (replayed in their recorded order)");
    else if (why == RP_WHY_WIDE)
        w = snprintf(buf, n,
                     "bound too wide: %llu skip(s) refused, the narrowest with a bound of %.1f%% of its time, over "
                     "sample.max_bound %u%%",
                     (unsigned long long)m->wide, 100.0 * m->wide_rel, c->sample_max_bound);
    else if (why == RP_WHY_ROUNDS && m->peak)
        w = snprintf(buf, n,
                     "%u workgroups, at most %u in flight (%u rounds): too few for the workgroup level (a test "
                     "needs %u windows of %u round(s) after %u of warm-up, with two rounds left)",
                     k->n_wg, m->peak, (k->n_wg + m->peak - 1) / m->peak, c->sample_stable, c->sample_window,
                     c->sample_warmup);
    else if (why == RP_WHY_ROUNDS)
        w = snprintf(buf, n, "%u workgroup(s), all in flight at once: too few for the workgroup level", k->n_wg);
    else if (m->far_from_all && m->best_dev * 100.0 <= c->sample_tolerance)
        w = snprintf(buf, n,
                     "rate not stable: %u of %u tests found groups of windows within sample.tolerance %u%% of each "
                     "other, but not of the rate since the warm-up",
                     m->far_from_all, m->tests, c->sample_tolerance);
    else
        w = snprintf(buf, n,
                     "rate not stable within sample.tolerance %u%% (closest: groups of %u window(s) %.1f%% apart, %u "
                     "test(s))",
                     c->sample_tolerance, m->best_f, 100.0 * m->best_dev, m->tests);
    size_t at = w > 0 && (size_t)w < n ? (size_t)w : n - 1;
    if (m->loose_check && at < n - 1) {
        w = snprintf(buf + at, n - at, "; a check of launches alike by their vectors (sample.alike_vectors)");
        at = w > 0 && at + (size_t)w < n ? at + (size_t)w : n - 1;
    }
    if (m->group_dev > 0 && at < n - 1) {
        w = snprintf(buf + at, n - at, "; the last %u launches alike differ by %.1f%% in time per instruction (kernel level)",
                     c->sample_kernels < 8 ? c->sample_kernels : 8, 100.0 * m->group_dev);
        at = w > 0 && at + (size_t)w < n ? at + (size_t)w : n - 1;
    }
    bool synced = why == RP_WHY_POLLS || why == RP_WHY_GWS || why == RP_WHY_CAS;
    if (c->sample_waves && m->wave_wide && !synced)
        snprintf(buf + at, n - at,
                 "; the wave level's, for all its waves: the widest of %llu measurements had halves %.1f%% apart",
                 (unsigned long long)m->wv_rel_n, (double)m->wv_rel_max / 1e4);
    else if (c->sample_waves && m->wave_off && !synced)
        snprintf(buf + at, n - at, "; the wave level is off for it (its workgroups may observe each other, or "
                                   "it has fewer waves than SIMDs)");
    else if (c->sample_waves && !synced &&
             k->n_instr_traced < (uint64_t)c->sample_wave_min * k->n_wg *
                                     (k->launch.waves_per_wg ? k->launch.waves_per_wg : 1))
        snprintf(buf + at, n - at, "; its waves are shorter than sample.wave_min (%u instructions) on average",
                 c->sample_wave_min);
    else if (c->sample_waves && !synced && !m->wave_measured)
        snprintf(buf + at, n - at,
                 "; wave level: no wave measured its rate (%llu measurements crossed a barrier or an LDS access)",
                 (unsigned long long)m->wave_crossed);
    else if (c->sample_waves && !synced)
        snprintf(buf + at, n - at,
                 "; wave level: %llu waves measured their rate (%llu measurements crossed a barrier or an LDS "
                 "access), %llu stretches were shorter than the measurement (stopped by a barrier, an LDS "
                 "access or code it did not run), %llu waves ran to their end in detail as their CU emptied at "
                 "the kernel's end",
                 (unsigned long long)m->wave_measured, (unsigned long long)m->wave_crossed,
                 (unsigned long long)m->wave_short, (unsigned long long)m->wave_ramp);
    return why;
}

const char *const rp_why_full_label[RP_WHY_N] = {"polls", "grid barrier", "compare-and-swaps", "too few rounds",
                                                 "rate not stable", "bound too wide"};

void rp_sample_summary(const rp_sim *s, rp_sample_sum *o)
{
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < s->n_kernels; i++) {
        const rp_kernel *k = s->kernels[i];
        const rp_ksample *m = &k->smp;
        if (!k->done)
            continue;
        o->kernels++;
        o->instr += k->n_instr_traced;
        o->kernel_ps += k->end > k->start ? k->end - k->start : 0;
        if (m->switched || m->wave_skips) {
            o->sampled++;
            o->whole += m->whole;
            o->wg_level += m->switched && !m->whole;
            o->wave_level += m->wave_skips > 0;
            o->skipped += m->skipped_instr + m->wave_instr;
            o->bound_ps += m->bound_ps;
            continue;
        }
        int why = rp_sample_why_full(s, k, NULL, 0);
        if (why >= 0)
            o->in_full[why]++;
        o->after_skips += m->after_skips;
    }
}
