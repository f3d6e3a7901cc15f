/*
 * gcn_sched.c - running the workgroups of a dispatch on the worker pool with
 * forward progress: residency as on the GPU, waves that wait yield, and a
 * dispatch that can never complete is reported as a deadlock.
 *
 * Residency. At most job->max_resident workgroups of a dispatch are resident
 * at once (gcn_wgs_per_cu of the kernel's waves, VGPRs, SGPRs and LDS x the
 * R9 Nano's 64 CUs: the limits the replay's dispatcher uses, gcn/gcn_occupancy.h),
 * and workgroups become resident in grid order, as the command processor
 * dispatches them. A worker holds a set of resident workgroups (slots).
 *
 * Scheduling. A worker admits the next workgroup and runs it (its waves in
 * order, each until it ends, reaches s_barrier or yields, as many passes as
 * make progress). A workgroup that never waits runs to its end before the
 * worker admits the next one, exactly as before forward progress existed, so
 * a race-free kernel gives the same results and trace. A workgroup whose live
 * waves all wait (yielded: a loop that repeats its state, gcn_wave.h "Forward
 * progress"; s_sleep; a used-up time slice of GCN_SCHED_SLICE instructions; or s_barrier
 * with such waves) stays resident, and the worker admits further workgroups
 * while residency allows; when it cannot, it runs its resident workgroups
 * round robin. So every workgroup a resident one waits for either runs on
 * some worker or is not resident on the GPU either.
 *
 * Deadlock. A round of a worker is quiet when every wave it ran yielded as
 * stuck with the same state hash as at its previous yield (nothing it reads
 * changed), no wave ended and no barrier opened. A dispatch is deadlocked
 * when every worker that holds workgroups had QUIET_ROUNDS quiet rounds in a
 * row, no round anywhere made progress meanwhile (job->epoch), and no further
 * workgroup can become resident (the grid is exhausted or residency is full).
 * A kernel that waits for a flag nobody sets, or for a workgroup that cannot
 * become resident, is detected after a few rounds. The launch then fails with
 * GCN_LAUNCH_DEADLOCK; every worker prints its waiting waves (kernel,
 * workgroup, wave, what it waits in, pc, and the addresses its wait loop
 * polls) on stderr, at most REPORT_LINES lines in all.
 */
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec_internal.h"

#define QUIET_ROUNDS 3
#define REPORT_LINES 32

/* One resident workgroup. Slot storage is the worker's own (first slot) or
 * allocated for the dispatch (further slots). */
typedef struct gcn_wg_slot {
    gcn_wave *waves;
    uint32_t (*vgprs)[GCN_WAVE_LANES];
    uint8_t *lds;
    trc_wg_rec *rec;
    struct gcn_wg ctx;
    uint32_t wg_lin;
    int own;              /* storage allocated here (free at the dispatch's end) */
    int live;
} gcn_wg_slot;

enum { STEP_DONE, STEP_WAIT, STEP_ERROR };

int gcn_sched_quiet_yield(gcn_wave *w)
{
    int q = w->stuck && w->yield_hash == w->state_hash;
    w->yield_hash = w->stuck ? w->state_hash : 0;
    return q;
}

/* Resume a wave; its time slice starts at its first run in a step. */
static void resume(struct gcn_launch_job *job, gcn_wave *w, int first_in_step)
{
    if (w->status == GCN_WAVE_SLEEP && job->m->cfg.on_wave_sleep)
        job->m->cfg.on_wave_sleep(job->m->cfg.on_wave_sleep_arg);
    w->status = GCN_WAVE_RUNNING;
    if (first_in_step)
        w->slice_end = w->n_instr + GCN_SCHED_SLICE;
    w->preempt = (const int *)&job->stop;
}

/* Run the waves of g until none can go on. *quiet: nothing progressed (see
 * the file comment). */
static int step_wg(struct gcn_launch_job *job, gcn_wg_slot *g, int *quiet)
{
    uint32_t nw = job->waves_per_wg;
    uint8_t yielded[GCN_MAX_WAVES_PER_WG] = {0}, started[GCN_MAX_WAVES_PER_WG] = {0};
    *quiet = 1;
    for (;;) {
        uint32_t n_done = 0, n_barrier = 0;
        int ran = 0, advanced = 0;
        for (uint32_t wi = 0; wi < nw; wi++) {
            gcn_wave *w = &g->waves[wi];
            int runnable = w->status == GCN_WAVE_RUNNING || w->status == GCN_WAVE_SLEEP || w->status == GCN_WAVE_SPIN;
            if (runnable && !yielded[wi]) {
                resume(job, w, !started[wi]);
                started[wi] = 1;
                gcn_wave_run(w);
                ran = 1;
                gcn_launch_status ls;
                if (w->status == GCN_WAVE_GWS_BARRIER) {
                    char msg[512];
                    snprintf(msg, sizeof(msg),
                             "kernel %s: wg (%u,%u,%u) wave %u pc 0x%" PRIx64 ": ds_gws_barrier (grid-wide sync, "
                             "cooperative_groups::this_grid().sync()) in a launch that is not cooperative; "
                             "launch the kernel with hipLaunchCooperativeKernel",
                             w->kernel_name ? w->kernel_name : "?", w->wg_id[0], w->wg_id[1], w->wg_id[2],
                             w->wave_in_wg, w->pc - 8);
                    gcn_job_error(job, GCN_LAUNCH_ILLEGAL_INSN, msg);
                    return STEP_ERROR;
                }
                if (gcn_wave_error_status((gcn_wave_status)w->status, &ls)) {
                    gcn_job_error(job, ls, w->err[0] ? w->err : "wave stopped with an error and no message");
                    return STEP_ERROR;
                }
                if (w->status == GCN_WAVE_SPIN || (w->status == GCN_WAVE_SLEEP && w->stuck)) {
                    yielded[wi] = 1;
                    if (!gcn_sched_quiet_yield(w))
                        *quiet = 0;
                } else {
                    /* ended, reached s_barrier, or an s_sleep whose loop still
                     * changes state (e.g. a hostcall just answered) */
                    advanced = 1;
                    w->yield_hash = 0;
                }
            }
            if (w->status == GCN_WAVE_DONE)
                n_done++;
            else if (w->status == GCN_WAVE_BARRIER)
                n_barrier++;
        }
        if (n_done == nw)
            return STEP_DONE;
        if (n_barrier && n_done + n_barrier == nw) {
            /* every live wave reached s_barrier (ended waves do not take part,
             * as on hardware): release them */
            for (uint32_t wi = 0; wi < nw; wi++)
                if (g->waves[wi].status == GCN_WAVE_BARRIER)
                    g->waves[wi].status = GCN_WAVE_RUNNING;
            advanced = 1;
        }
        if (atomic_load_explicit(&job->stop, memory_order_relaxed))
            return STEP_ERROR;
        if (advanced) {
            /* something changed: waiting waves of this workgroup look again */
            *quiet = 0;
            memset(yielded, 0, sizeof(yielded));
            continue;
        }
        if (!ran)
            return STEP_WAIT;
    }
}

/* ---- slots ---------------------------------------------------------------- */

typedef struct sched {
    gcn_worker *wk;
    struct gcn_launch_job *job;
    gcn_wg_slot **slot;     /* resident workgroups */
    uint32_t n, cap;
    gcn_wg_slot **spare;    /* allocated slots not in use */
    uint32_t n_spare;
    int first_in_use;       /* the worker's own storage holds a workgroup */
    gcn_wg_slot first;
} sched;

static void slot_free(gcn_wg_slot *g)
{
    if (!g || !g->own)
        return;
    free(g->waves);
    free(g->vgprs);
    free(g->lds);
    trc_wg_rec_destroy(g->rec);
    free(g);
}

static gcn_wg_slot *slot_get(sched *s)
{
    struct gcn_launch_job *job = s->job;
    if (!s->first_in_use) {
        s->first_in_use = 1;
        gcn_wg_slot *g = &s->first;
        memset(g, 0, sizeof(*g));
        g->waves = s->wk->waves;
        g->vgprs = s->wk->vgprs;
        g->lds = s->wk->lds;
        g->rec = s->wk->rec;
        return g;
    }
    if (s->n_spare)
        return s->spare[--s->n_spare];
    gcn_wg_slot *g = calloc(1, sizeof(*g));
    if (!g)
        return NULL;
    g->own = 1;
    g->waves = calloc(job->waves_per_wg, sizeof(gcn_wave));
    g->vgprs = calloc((size_t)job->waves_per_wg * job->n_vgpr, sizeof(*g->vgprs));
    g->lds = job->lds_size ? malloc(job->lds_size) : NULL; /* LDS of size 0: the worker's (never touched) */
    if (job->recording)
        g->rec = trc_wg_rec_create();
    if (!g->waves || !g->vgprs || (job->lds_size && !g->lds) || (job->recording && !g->rec)) {
        slot_free(g);
        return NULL;
    }
    return g;
}

static void slot_put(sched *s, gcn_wg_slot *g)
{
    g->live = 0;
    if (g == &s->first) {
        s->first_in_use = 0;
        return;
    }
    gcn_wg_slot **np = realloc(s->spare, (s->n_spare + 1) * sizeof(*np));
    if (!np) {
        slot_free(g);
        return;
    }
    s->spare = np;
    s->spare[s->n_spare++] = g;
}

/* Make workgroup wg_lin resident in a slot and set up its waves. */
static gcn_wg_slot *slot_start(sched *s, uint32_t wg_lin)
{
    struct gcn_launch_job *job = s->job;
    gcn_worker *wk = s->wk;
    const gcn_launch_params *p = job->p;
    gcn_wg_slot *g = slot_get(s);
    if (!g) {
        char msg[512];
        snprintf(msg, sizeof msg, "launch of %s: out of memory for %u resident workgroups", job->k->name, s->n + 1);
        gcn_job_error(job, GCN_LAUNCH_NOMEM, msg);
        return NULL;
    }
    uint32_t wg_id[3] = {wg_lin % p->grid[0], (wg_lin / p->grid[0]) % p->grid[1],
                         (uint32_t)((uint64_t)wg_lin / ((uint64_t)p->grid[0] * p->grid[1]))};
    uint32_t nw = job->waves_per_wg;
    g->wg_lin = wg_lin;
    g->live = 1;
    g->ctx.m = job->m;
    if (job->lds_size)
        memset(g->lds, 0, job->lds_size);
    if (job->recording) {
        trc_wg_rec_begin(g->rec, job->kernel_id, wg_id, nw);
        trc_wg_rec_stream(g->rec, job->m->cfg.trace); /* long waves stream out in segments */
        trc_wg_rec_scratch_data(g->rec, job->m->cfg.scratch_data);
        trc_wg_rec_hash_loads(g->rec, job->m->cfg.hash_loads);
        trc_wg_rec_lds_data(g->rec, !job->m->cfg.no_lds_values);
        trc_wg_rec_host_image(g->rec, job->m->cfg.host_image ? job->m->cfg.trace : NULL);
    }
    /* gcn_wave_init_state places waves in the worker's storage: point it at the slot's */
    uint32_t(*save_v)[GCN_WAVE_LANES] = wk->vgprs;
    uint8_t *save_lds = wk->lds;
    trc_wg_rec *save_rec = wk->rec;
    wk->vgprs = g->vgprs;
    wk->lds = g->lds ? g->lds : save_lds;
    wk->rec = g->rec;
    for (uint32_t wi = 0; wi < nw; wi++) {
        gcn_wave_init_state(wk, job, &g->waves[wi], wi, wg_lin, wg_id, &g->ctx);
        if (job->recording)
            trc_rec_exec(g->rec, wi, 0, gcn_exec_mask(&g->waves[wi]));
    }
    wk->vgprs = save_v;
    wk->lds = save_lds;
    wk->rec = save_rec;
    return g;
}

static void count_waves(gcn_worker *wk, const struct gcn_launch_job *job, const gcn_wg_slot *g)
{
    for (uint32_t wi = 0; wi < job->waves_per_wg; wi++)
        wk->n_instr += g->waves[wi].n_instr;
    wk->n_waves += job->waves_per_wg;
}

/* A workgroup ended: commit its record, give back its residency. */
static void slot_done(sched *s, gcn_wg_slot *g)
{
    struct gcn_launch_job *job = s->job;
    count_waves(s->wk, job, g);
    if (job->recording && !atomic_load(&job->stop) && trc_wg_commit(job->m->cfg.trace, g->rec) != 0 &&
        !trc_writer_failed(job->m->cfg.trace)) {
        /* a record the writer refused; a failed writer (full disk) only
         * stops the recording, the kernel goes on */
        char msg[512];
        snprintf(msg, sizeof(msg), "trace: %s", trc_writer_error(job->m->cfg.trace));
        gcn_job_error(job, GCN_LAUNCH_TRACE_ERROR, msg);
    }
    slot_put(s, g);
    atomic_fetch_sub(&job->resident, 1);
}

/* Reserve residency and take the next workgroup in grid order; UINT32_MAX
 * when the grid is exhausted or the GPU is full. */
static uint32_t admit(struct gcn_launch_job *job)
{
    uint32_t r = atomic_load(&job->resident);
    do {
        if (r >= job->max_resident)
            return UINT32_MAX;
    } while (!atomic_compare_exchange_weak(&job->resident, &r, r + 1));
    uint32_t i = atomic_fetch_add(&job->next_wg, 1);
    if (i >= job->n_wg) {
        atomic_fetch_sub(&job->resident, 1);
        return UINT32_MAX;
    }
    return i;
}

static int can_admit(struct gcn_launch_job *job)
{
    return atomic_load(&job->next_wg) < job->n_wg && atomic_load(&job->resident) < job->max_resident;
}

/* ---- the deadlock report ---------------------------------------------------- */

typedef struct probe {
    uint64_t addr[4];
    uint32_t flags[4], bytes[4];
    int n;
} probe;

static void pr_branch(void *c, uint32_t w, int t) { (void)c; (void)w; (void)t; }
static void pr_indirect(void *c, uint32_t w, uint64_t t) { (void)c; (void)w; (void)t; }
static void pr_exec(void *c, uint32_t w, uint64_t d, uint64_t e) { (void)c; (void)w; (void)d; (void)e; }
static void pr_end(void *c, uint32_t w, uint64_t n) { (void)c; (void)w; (void)n; }
static void pr_mem(void *ctx, uint32_t wave, uint32_t flags, uint32_t bpl, uint64_t exec, const uint64_t *addr,
                   const void *load, const void *store)
{
    (void)wave;
    (void)load;
    (void)store;
    probe *p = ctx;
    flags &= ~(uint32_t)GCN_MO_LINEAR4; /* a hint, not what the op is */
    if (!(flags & (GCN_MO_LOAD | GCN_MO_ATOMIC)) || !exec)
        return;
    uint64_t a = (flags & GCN_MO_SMEM) ? addr[0] : addr[__builtin_ctzll(exec)];
    for (int i = 0; i < p->n; i++)
        if (p->addr[i] == a && p->flags[i] == flags)
            return;
    if (p->n < 4) {
        p->addr[p->n] = a;
        p->flags[p->n] = flags;
        p->bytes[p->n] = bpl;
        p->n++;
    }
}
static const gcn_recorder_ops probe_ops = {pr_branch, pr_indirect, pr_exec, pr_mem, pr_end, NULL, NULL, NULL, NULL, NULL, NULL};

/* Run a waiting wave once more (the dispatch is stopping: it yields at its
 * next back-edge) with a recorder that notes what its wait loop reads. */
static void probe_wave(gcn_wave *w, probe *p)
{
    memset(p, 0, sizeof(*p));
    if (w->status != GCN_WAVE_SPIN && w->status != GCN_WAVE_SLEEP)
        return;
    gcn_recorder save = w->rec;
    uint64_t pc = w->pc;
    uint32_t status = w->status;
    uint8_t stuck = w->stuck;
    w->rec = (gcn_recorder){&probe_ops, p, 0};
    for (int i = 0; i < 2 && (w->status == GCN_WAVE_SPIN || w->status == GCN_WAVE_SLEEP); i++) {
        w->status = GCN_WAVE_RUNNING;
        w->slice_end = w->n_instr + 4096;
        gcn_wave_run(w);
    }
    w->rec = save;
    w->pc = pc;
    w->status = status;
    w->stuck = stuck;
}

static void describe_wave(gcn_wave *w, char *buf, size_t len)
{
    const char *what = w->status == GCN_WAVE_BARRIER ? "waits at s_barrier"
                       : w->status == GCN_WAVE_SLEEP ? "sleeps in a wait loop (s_sleep)"
                       : w->status == GCN_WAVE_SPIN && w->stuck ? "spins in a loop"
                                                                : "runs";
    size_t o = (size_t)snprintf(buf, len, "wg (%u,%u,%u) wave %u %s at pc 0x%" PRIx64, w->wg_id[0], w->wg_id[1],
                                w->wg_id[2], w->wave_in_wg, what, w->pc);
    probe p;
    probe_wave(w, &p);
    for (int i = 0; i < p.n && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s %s 0x%" PRIx64 " (%u bytes%s)",
                              i ? "," : w->stuck ? "; polls" : "; reads",
                              (p.flags[i] & GCN_MO_LDS) ? "LDS offset" : "address", p.addr[i], p.bytes[i],
                              (p.flags[i] & GCN_MO_ATOMIC) ? ", atomic" : "");
}

static void report_waves(sched *s, const char *why)
{
    struct gcn_launch_job *job = s->job;
    for (uint32_t i = 0; i < s->n; i++) {
        gcn_wg_slot *g = s->slot[i];
        for (uint32_t wi = 0; wi < job->waves_per_wg; wi++) {
            gcn_wave *w = &g->waves[wi];
            if (w->status == GCN_WAVE_DONE)
                continue;
            uint32_t line = atomic_fetch_add(&job->report_lines, 1);
            if (line >= REPORT_LINES)
                continue;
            char buf[512];
            describe_wave(w, buf, sizeof buf);
            fprintf(stderr, "gcn3-emu: %s: kernel %s: %s\n", why, job->k->name, buf);
        }
    }
}

/* Every worker quiet for QUIET_ROUNDS rounds, no progress since `since`, and
 * nothing more can become resident. */
static int deadlocked(struct gcn_launch_job *job, uint64_t since)
{
    if (can_admit(job) || atomic_load(&job->epoch) != since)
        return 0;
    gcn_machine *m = job->m;
    for (uint32_t i = 0; i < m->n_workers; i++) {
        int q = atomic_load(&m->workers[i].quiet);
        if (q >= 0 && q < QUIET_ROUNDS)
            return 0;
    }
    return atomic_load(&job->epoch) == since && !can_admit(job);
}

static void declare_deadlock(sched *s)
{
    struct gcn_launch_job *job = s->job;
    gcn_wave *w = NULL;
    for (uint32_t i = 0; i < s->n && !w; i++)
        for (uint32_t wi = 0; wi < job->waves_per_wg && !w; wi++)
            if (s->slot[i]->waves[wi].status != GCN_WAVE_DONE)
                w = &s->slot[i]->waves[wi];
    uint32_t resident = atomic_load(&job->resident);
    uint32_t next = atomic_load(&job->next_wg);
    uint32_t waiting = next < job->n_wg ? job->n_wg - next : 0;
    char first[400] = "";
    if (w)
        describe_wave(w, first, sizeof first);
    char msg[512];
    snprintf(msg, sizeof msg,
             "kernel %s: deadlock: none of the %u resident workgroups can make progress%s%.0u%s; %s (every "
             "waiting wave on stderr)",
             job->k->name, resident, waiting ? " and " : "", waiting, waiting ? " more cannot become resident" : "",
             first);
    if (waiting) {
        /* say what residency allows: the usual cause of a wait that hardware would also never end */
        char tail[160];
        snprintf(tail, sizeof tail, " [at most %u workgroups of this kernel fit on the GPU at once]",
                 job->max_resident);
        size_t l = strlen(msg);
        if (l + strlen(tail) < sizeof msg)
            memcpy(msg + l, tail, strlen(tail) + 1);
    }
    pthread_mutex_lock(&job->err_lock);
    int first_error = job->status == GCN_LAUNCH_OK;
    pthread_mutex_unlock(&job->err_lock);
    if (first_error)
        atomic_store(&job->deadlock, 1);
    gcn_job_error(job, GCN_LAUNCH_DEADLOCK, msg);
}

/* ---- the worker's part of a dispatch --------------------------------------------- */

static int sched_add(sched *s, gcn_wg_slot *g)
{
    if (s->n == s->cap) {
        uint32_t nc = s->cap ? 2 * s->cap : 8;
        gcn_wg_slot **np = realloc(s->slot, nc * sizeof(*np));
        if (!np)
            return -1;
        s->slot = np;
        s->cap = nc;
    }
    s->slot[s->n++] = g;
    return 0;
}

void gcn_sched_run(gcn_worker *wk, struct gcn_launch_job *job)
{
    sched s = {.wk = wk, .job = job};
    int streak = 0;
    uint64_t streak_epoch = 0;
    for (;;) {
        if (atomic_load_explicit(&job->stop, memory_order_relaxed))
            break;
        /* new workgroups first: dispatch fills the GPU in grid order */
        int admitted = 0;
        uint32_t i;
        while (!atomic_load_explicit(&job->stop, memory_order_relaxed) && (i = admit(job)) != UINT32_MAX) {
            atomic_store(&wk->quiet, 0);
            gcn_wg_slot *g = slot_start(&s, i);
            if (!g) {
                atomic_fetch_sub(&job->resident, 1);
                break;
            }
            admitted = 1;
            int q;
            int r = step_wg(job, g, &q);
            if (r == STEP_DONE) {
                slot_done(&s, g);
            } else if (sched_add(&s, g) != 0) {
                gcn_job_error(job, GCN_LAUNCH_NOMEM, "out of memory for the resident workgroups");
                count_waves(wk, job, g);
                slot_put(&s, g);
                break;
            }
            if (r == STEP_ERROR)
                break;
        }
        if (admitted)
            atomic_fetch_add(&job->epoch, 1);
        if (atomic_load_explicit(&job->stop, memory_order_relaxed))
            break;
        if (s.n == 0) {
            if (atomic_load(&job->next_wg) >= job->n_wg)
                break; /* the grid is done here */
            /* the GPU is full of other workers' workgroups: wait for a free slot */
            atomic_store(&wk->quiet, -1);
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
            continue;
        }
        /* round robin over the resident workgroups */
        uint64_t e0 = atomic_load(&job->epoch);
        int quiet = 1;
        for (uint32_t k = 0; k < s.n && !atomic_load_explicit(&job->stop, memory_order_relaxed);) {
            gcn_wg_slot *g = s.slot[k];
            int q;
            int r = step_wg(job, g, &q);
            if (r == STEP_ERROR)
                break;
            if (r == STEP_DONE) {
                slot_done(&s, g);
                s.slot[k] = s.slot[--s.n]; /* order within a round does not matter */
                quiet = 0;
                continue;
            }
            if (!q)
                quiet = 0;
            k++;
        }
        if (atomic_load_explicit(&job->stop, memory_order_relaxed))
            break;
        if (!quiet) {
            streak = 0;
            atomic_store(&wk->quiet, 0);
            atomic_fetch_add(&job->epoch, 1);
            continue;
        }
        if (streak++ == 0)
            streak_epoch = e0;
        atomic_store(&wk->quiet, streak);
        if (streak >= QUIET_ROUNDS && deadlocked(job, streak_epoch))
            declare_deadlock(&s);
        else if (streak >= QUIET_ROUNDS)
            sched_yield();
    }
    atomic_store(&wk->quiet, -1);
    if (atomic_load(&job->deadlock))
        report_waves(&s, "deadlock");
    else if (atomic_load(&job->m->interrupt))
        report_waves(&s, "interrupted");
    for (uint32_t k = 0; k < s.n; k++) {
        count_waves(wk, job, s.slot[k]);
        s.slot[k]->live = 0;
        if (s.slot[k] != &s.first)
            slot_free(s.slot[k]);
    }
    for (uint32_t k = 0; k < s.n_spare; k++)
        slot_free(s.spare[k]);
    free(s.slot);
    free(s.spare);
}
