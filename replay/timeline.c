/*
 * timeline.c - a Chrome trace-event JSON timeline of a replay (opens in
 * Perfetto UI and chrome://tracing): an observer of the kernel and workgroup
 * observation points (rp_hooks.h). One process per GPU; in it a "dispatcher"
 * track with one span per null-stream kernel, a track per hardware queue
 * with the kernels of the streams mapped to it (dispatcher.hw_queues), and
 * one track per CU with one span per workgroup, named by kernel and
 * workgroup id. Times are simulated
 * (microseconds in the file, from the model's picoseconds).
 *
 * Bounded: at most `budget` workgroup spans are kept, the earliest ones (by
 * start time, GPU, CU: a bounded max-heap, so which spans are kept does not
 * depend on the order observers of parallel partitions deliver them); each
 * CU's busy time (the sum of all its workgroups' spans) is then written as a
 * counter too, and the file says how many spans it left out. Deterministic
 * for any --threads: observers append under a lock, spans are sorted before
 * writing.
 *
 * Counter tracks, per interval of simulated time (at most TL_BINS intervals:
 * the interval starts at 10 ns and doubles, merging pairs, whenever the run
 * outgrows it, so the result depends on the last event's time only): per GPU
 * "IPC" (wavefront instructions issued per GPU cycle, all CUs), "L2 hit rate"
 * (hits / requests of its L2 banks; intervals without requests are not
 * written) and "DRAM GB/s" (bytes into its DRAM channels: line reads and
 * written data); per inter-GPU link "<link> GB/s" in an "interconnect"
 * process (bytes sent, headers included). The host is a process of its own
 * with a span per copy and memset on the track of its stream, from its start
 * to the end of its transfer; a copy that ran on a copy engine (SDMA) is also
 * a span on that engine's track in its GPU's process, from the start of its
 * transfer to its end.
 */
#include "rp_sim_internal.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TL_QUEUE_TRACK (1u << 20) /* + q: hardware queue q's kernels */
#define TL_SDMA_TRACK (1u << 21)  /* + k: copy engine k's transfers */

typedef struct tl_span {
    rp_time t0, t1;
    uint32_t gpu, track;      /* track 0: dispatcher (null-stream kernels), c + 1: CU c, TL_QUEUE_TRACK + q: queue q */
    uint32_t kernel, wg;      /* kernel id; workgroup index (UINT32_MAX: a kernel span) */
    uint32_t wg_id[3];
} tl_span;

#define TL_BINS 1000
#define TL_BIN0_PS 10000 /* the first interval: 10 ns */
enum { TL_IPC, TL_L2, TL_BW };
typedef struct tl_series {
    char name[64];             /* counter name */
    uint32_t pid, kind;
    const void *key;           /* a link (TL_BW: several DRAM links share a GPU's series by name) */
    uint64_t a[TL_BINS], b[TL_BINS]; /* IPC: instructions; L2: hits, requests; BW: bytes */
} tl_series;

typedef struct tl_copy {
    rp_time t0, t1, xfer;      /* the call's start, its transfer's end and start */
    uint32_t engine_gpu, engine; /* rp_copy_timing */
    uint64_t bytes, index;     /* index: host event (program order) */
    uint32_t device, stream, kind; /* kind: TRC_COPY_* or UINT32_MAX for a memset */
} tl_copy;

struct rp_timeline {
    pthread_mutex_t mu;
    rp_time bin_ps, period_ps;
    uint32_t dram_line;
    tl_series **ser;           /* 0..2*n_gpus-1: IPC and L2 of each GPU; then bandwidth series */
    size_t nser;
    struct { const void *link; size_t ser; } *lmap; /* named link -> its series */
    size_t nlmap;
    tl_copy *cp;
    size_t ncp, capcp;
    uint64_t budget;
    tl_span *v;               /* kernel spans (few: all kept) */
    size_t n, cap;
    tl_span *h;               /* workgroup spans: max-heap by span_cmp, at most budget */
    size_t hn, hcap;
    uint64_t left_out;        /* workgroup spans over the budget */
    uint64_t *busy_ps;        /* per (gpu, cu): busy time of the spans left out and kept */
    uint32_t n_gpus, n_cus;
    int failed;
};

static int span_cmp(const void *a, const void *b);

/* the budget's heap: the root is the latest kept span */
static void heap_push(rp_timeline *t, const tl_span *sp)
{
    if (t->hn == t->hcap) {
        size_t nc = t->hcap * 2 < t->budget ? t->hcap * 2 : t->budget;
        tl_span *nh = realloc(t->h, nc * sizeof *nh);
        if (!nh) {
            t->failed = 1;
            return;
        }
        t->h = nh, t->hcap = nc;
    }
    size_t i = t->hn++;
    t->h[i] = *sp;
    while (i && span_cmp(&t->h[(i - 1) / 2], &t->h[i]) < 0) {
        tl_span x = t->h[i];
        t->h[i] = t->h[(i - 1) / 2];
        t->h[(i - 1) / 2] = x;
        i = (i - 1) / 2;
    }
}
static void heap_replace_root(rp_timeline *t, const tl_span *sp)
{
    size_t i = 0;
    t->h[0] = *sp;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < t->hn && span_cmp(&t->h[l], &t->h[m]) > 0) m = l;
        if (r < t->hn && span_cmp(&t->h[r], &t->h[m]) > 0) m = r;
        if (m == i) break;
        tl_span x = t->h[i];
        t->h[i] = t->h[m];
        t->h[m] = x;
        i = m;
    }
}

static void add_span(rp_timeline *t, const tl_span *sp)
{
    pthread_mutex_lock(&t->mu);
    if (sp->wg != UINT32_MAX) {
        if (sp->gpu < t->n_gpus && sp->track - 1 < t->n_cus)
            t->busy_ps[(size_t)sp->gpu * t->n_cus + (sp->track - 1)] += sp->t1 - sp->t0;
        if (t->hn < t->budget) {
            heap_push(t, sp);
        } else {
            t->left_out++;
            if (span_cmp(sp, &t->h[0]) < 0)
                heap_replace_root(t, sp); /* an earlier span displaces the latest kept one */
        }
    } else {
        if (t->n == t->cap) {
            size_t nc = t->cap ? 2 * t->cap : 1024;
            tl_span *nv = realloc(t->v, nc * sizeof *nv);
            if (!nv) {
                t->failed = 1;
                pthread_mutex_unlock(&t->mu);
                return;
            }
            t->v = nv, t->cap = nc;
        }
        t->v[t->n++] = *sp;
    }
    pthread_mutex_unlock(&t->mu);
}

/* workgroup.end and kernel.end: the span is complete */
static void on_end(void *arg, const rp_hook_ctx *c)
{
    rp_timeline *t = arg;
    tl_span sp;
    memset(&sp, 0, sizeof sp);
    if (c->point == RP_HOOK_WG_END) {
        const rp_wg *wg = c->item;
        sp.t0 = wg->start;
        sp.t1 = c->now;
        sp.gpu = c->gpu;
        sp.track = c->cu + 1;
        sp.kernel = wg->k->launch.kernel_id;
        sp.wg = wg->index;
        if (wg->tw)
            memcpy(sp.wg_id, wg->tw->wg_id, sizeof sp.wg_id);
    } else {
        const rp_kernel *k = c->item;
        sp.t0 = k->start;
        sp.t1 = c->now;
        sp.gpu = c->gpu;
        /* the null stream's kernels on the dispatcher track, the others on
         * their hardware queue's (they may run side by side) */
        const rp_sim *s = c->sim;
        sp.track = k->stream ? TL_QUEUE_TRACK + (k->stream - 1) % s->cfg.dispatch_hw_queues : 0;
        sp.kernel = k->launch.kernel_id;
        sp.wg = UINT32_MAX;
    }
    add_span(t, &sp);
}

/* The interval of time t, merging pairs of intervals until t fits (under t->mu). */
static size_t bin_of(rp_timeline *t, rp_time at)
{
    while (at / t->bin_ps >= TL_BINS) {
        for (size_t k = 0; k < t->nser; k++) {
            tl_series *x = t->ser[k];
            for (size_t i = 0; i < TL_BINS / 2; i++) {
                x->a[i] = x->a[2 * i] + x->a[2 * i + 1];
                x->b[i] = x->b[2 * i] + x->b[2 * i + 1];
            }
            memset(x->a + TL_BINS / 2, 0, sizeof x->a / 2);
            memset(x->b + TL_BINS / 2, 0, sizeof x->b / 2);
        }
        t->bin_ps *= 2;
    }
    return (size_t)(at / t->bin_ps);
}

static tl_series *series_new(rp_timeline *t, const char *name, uint32_t pid, uint32_t kind)
{
    tl_series **ns = realloc(t->ser, (t->nser + 1) * sizeof *ns);
    if (!ns)
        return NULL;
    t->ser = ns;
    tl_series *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    snprintf(x->name, sizeof x->name, "%s", name);
    x->pid = pid, x->kind = kind;
    t->ser[t->nser++] = x;
    return x;
}

static void on_issue(void *arg, const rp_hook_ctx *c)
{
    rp_timeline *t = arg;
    if (c->gpu >= t->n_gpus)
        return;
    pthread_mutex_lock(&t->mu);
    t->ser[2 * c->gpu]->a[bin_of(t, c->now)]++;
    pthread_mutex_unlock(&t->mu);
}

static void on_cache(void *arg, const rp_hook_ctx *c)
{
    rp_timeline *t = arg;
    const rp_cache *ca = c->item;
    if (!ca->spec.perform_atomic || c->gpu >= t->n_gpus) /* the L2 (point of coherence) only */
        return;
    pthread_mutex_lock(&t->mu);
    size_t i = bin_of(t, c->now);
    tl_series *x = t->ser[2 * c->gpu + 1];
    x->a[i] += *(const int *)c->detail != 0;
    x->b[i]++;
    pthread_mutex_unlock(&t->mu);
}

static void on_link(void *arg, const rp_hook_ctx *c)
{
    rp_timeline *t = arg;
    const rp_link *l = c->item;
    if (!l->name)
        return;
    const rp_msg *m = c->detail;
    pthread_mutex_lock(&t->mu);
    size_t k = 0;
    while (k < t->nlmap && t->lmap[k].link != l)
        k++;
    if (k == t->nlmap) { /* first message on this link: find or make its series */
        char name[64];
        uint32_t pid = t->n_gpus + 1, g;
        if (sscanf(l->name, "gpu[%u].dram", &g) == 1 && g < t->n_gpus)
            snprintf(name, sizeof name, "DRAM GB/s"), pid = g;
        else
            snprintf(name, sizeof name, "%.50s GB/s", l->name);
        size_t j = 2 * (size_t)t->n_gpus;
        while (j < t->nser && (t->ser[j]->pid != pid || strcmp(t->ser[j]->name, name)))
            j++;
        void *nm = realloc(t->lmap, (t->nlmap + 1) * sizeof *t->lmap);
        if (!nm || (j == t->nser && !series_new(t, name, pid, TL_BW))) {
            t->failed = 1;
            pthread_mutex_unlock(&t->mu);
            return;
        }
        t->lmap = nm;
        t->lmap[t->nlmap].link = l;
        t->lmap[t->nlmap].ser = j;
        t->nlmap++;
    }
    tl_series *x = t->ser[t->lmap[k].ser];
    uint64_t bytes = (uint64_t)m->payload + l->header_bytes;
    if (x->pid < t->n_gpus && m->type == RP_MSG_READ) /* a DRAM read moves a line back */
        bytes += t->dram_line;
    x->a[bin_of(t, c->now)] += bytes;
    pthread_mutex_unlock(&t->mu);
}

static void on_copy(void *arg, const rp_hook_ctx *c)
{
    rp_timeline *t = arg;
    const trc_event *ev = c->item;
    rp_sim *s = c->sim;
    pthread_mutex_lock(&t->mu);
    if (t->ncp == t->capcp) {
        size_t nc = t->capcp ? 2 * t->capcp : 64;
        tl_copy *n = realloc(t->cp, nc * sizeof *n);
        if (!n) {
            t->failed = 1;
            pthread_mutex_unlock(&t->mu);
            return;
        }
        t->cp = n, t->capcp = nc;
    }
    const rp_copy_timing *ct = c->detail;
    t->cp[t->ncp++] = (tl_copy){c->now, ct->end, ct->start, ct->engine_gpu, ct->engine, ev->size, s->next_event,
                                ev->device, ev->stream, ev->kind == TRC_EV_MEMSET ? UINT32_MAX : ev->copy_kind};
    pthread_mutex_unlock(&t->mu);
}

int rp_sim_timeline(rp_sim *s, uint64_t budget)
{
    if (s->timeline)
        return 0;
    rp_timeline *t = calloc(1, sizeof *t);
    if (!t)
        return -1;
    pthread_mutex_init(&t->mu, NULL);
    t->budget = budget ? budget : RP_TIMELINE_BUDGET;
    t->n_gpus = s->n_gpus;
    t->n_cus = s->gpus ? s->gpus[0].n_cus : 0;
    for (uint32_t g = 0; g < s->n_gpus; g++)
        if (s->gpus[g].n_cus > t->n_cus)
            t->n_cus = s->gpus[g].n_cus;
    t->busy_ps = calloc((size_t)t->n_gpus * t->n_cus + 1, sizeof *t->busy_ps);
    /* the heap grows with the spans up to the budget */
    t->h = malloc((t->budget < 65536 ? t->budget : 65536) * sizeof *t->h);
    t->hcap = t->budget < 65536 ? t->budget : 65536;
    t->bin_ps = TL_BIN0_PS;
    t->period_ps = s->clk.period_ps;
    t->dram_line = s->cfg.l1v_line; /* one line size throughout the hierarchy */
    int bad = !t->busy_ps || !t->h;
    for (uint32_t g = 0; g < t->n_gpus && !bad; g++)
        bad = !series_new(t, "IPC", g, TL_IPC) || !series_new(t, "L2 hit rate", g, TL_L2);
    if (bad || rp_hooks_attach(&s->hooks, RP_HOOK_WG_END, on_end, t) ||
        rp_hooks_attach(&s->hooks, RP_HOOK_KERNEL_END, on_end, t) ||
        rp_hooks_attach(&s->hooks, RP_HOOK_WAVE_ISSUE, on_issue, t) ||
        rp_hooks_attach(&s->hooks, RP_HOOK_CACHE_ACCESS, on_cache, t) ||
        rp_hooks_attach(&s->hooks, RP_HOOK_LINK_SEND, on_link, t) ||
        rp_hooks_attach(&s->hooks, RP_HOOK_HOST_COPY, on_copy, t)) {
        rp_timeline_free(t);
        return -1;
    }
    s->timeline = t;
    return 0;
}

static int span_cmp(const void *a, const void *b)
{
    const tl_span *x = a, *y = b;
#define CMP(f) if (x->f != y->f) return x->f < y->f ? -1 : 1
    CMP(t0); CMP(gpu); CMP(track); CMP(t1); CMP(kernel); CMP(wg);
#undef CMP
    return 0;
}

static int series_cmp(const void *a, const void *b)
{
    const tl_series *x = *(tl_series *const *)a, *y = *(tl_series *const *)b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return strcmp(x->name, y->name);
}

static json_t *meta(const char *what, uint32_t pid, int64_t tid, const char *name)
{
    json_t *e = json_object();
    json_object_set_new(e, "ph", json_string("M"));
    json_object_set_new(e, "name", json_string(what));
    json_object_set_new(e, "pid", json_integer(pid));
    if (tid >= 0)
        json_object_set_new(e, "tid", json_integer(tid));
    json_t *a = json_object();
    json_object_set_new(a, "name", json_string(name));
    json_object_set_new(e, "args", a);
    return e;
}

/* picoseconds to the file's microseconds */
static json_t *us(rp_time ps) { return json_real((double)ps / 1e6); }

/* Process and thread names: a process per GPU (its dispatcher and CUs), a
 * track per hardware queue that ran kernels. */
static void tl_tracks(json_t *ev, const rp_timeline *t)
{
    char name[160];
    for (uint32_t g = 0; g < t->n_gpus; g++) {
        snprintf(name, sizeof name, "GPU %u", g);
        json_array_append_new(ev, meta("process_name", g, -1, name));
        json_array_append_new(ev, meta("thread_name", g, 0, "dispatcher"));
        for (uint32_t c = 0; c < t->n_cus; c++) {
            snprintf(name, sizeof name, "CU %u", c);
            json_array_append_new(ev, meta("thread_name", g, c + 1, name));
        }
    }
    /* a track per hardware queue that ran kernels (t->v is sorted by time: a
     * queue is named at its first span) */
    for (size_t i = 0; i < t->n; i++) {
        const tl_span *sp = &t->v[i];
        bool seen = sp->track < TL_QUEUE_TRACK;
        for (size_t j = 0; j < i && !seen; j++)
            seen = t->v[j].gpu == sp->gpu && t->v[j].track == sp->track;
        if (!seen) {
            snprintf(name, sizeof name, "hardware queue %u", sp->track - TL_QUEUE_TRACK);
            json_array_append_new(ev, meta("thread_name", sp->gpu, sp->track, name));
        }
    }
}

/* A complete event per kernel and kept workgroup span; returns the last end. */
static rp_time tl_spans(json_t *ev, const rp_sim *s, const rp_timeline *t)
{
    rp_time end = 0;
    char name[160];
    for (size_t i = 0; i < t->n; i++) {
        const tl_span *sp = &t->v[i];
        char kn[96];
        const rp_kernel *k = sp->kernel < s->n_kernels ? s->kernels[sp->kernel] : NULL;
        rp_printable(kn, sizeof kn, k ? k->launch.kernel_name : "?");
        json_t *e = json_object();
        if (sp->wg == UINT32_MAX) {
            snprintf(name, sizeof name, "%s", kn);
            json_object_set_new(e, "cat", json_string("kernel"));
        } else {
            snprintf(name, sizeof name, "%s wg (%u,%u,%u)", kn, sp->wg_id[0], sp->wg_id[1], sp->wg_id[2]);
            json_object_set_new(e, "cat", json_string("workgroup"));
        }
        json_object_set_new(e, "name", json_string(name));
        json_object_set_new(e, "ph", json_string("X"));
        json_object_set_new(e, "ts", us(sp->t0));
        json_object_set_new(e, "dur", us(sp->t1 - sp->t0));
        json_object_set_new(e, "pid", json_integer(sp->gpu));
        json_object_set_new(e, "tid", json_integer(sp->track));
        json_t *a = json_object();
        json_object_set_new(a, "kernel", json_integer(sp->kernel));
        if (sp->wg != UINT32_MAX)
            json_object_set_new(a, "workgroup", json_integer(sp->wg));
        json_object_set_new(e, "args", a);
        json_array_append_new(ev, e);
        if (sp->t1 > end)
            end = sp->t1;
    }
    return end;
}

/* Over the workgroup-span budget: each CU's busy time as a counter at end. */
static void tl_busy(json_t *ev, const rp_timeline *t, rp_time end)
{
    char name[160];
    if (t->left_out) {
        /* over the budget: each CU's busy time, as a counter at the end */
        for (uint32_t g = 0; g < t->n_gpus; g++)
            for (uint32_t c = 0; c < t->n_cus; c++) {
                json_t *e = json_object(), *a = json_object();
                snprintf(name, sizeof name, "CU %u busy", c);
                json_object_set_new(e, "name", json_string(name));
                json_object_set_new(e, "ph", json_string("C"));
                json_object_set_new(e, "ts", us(end));
                json_object_set_new(e, "pid", json_integer(g));
                json_object_set_new(a, "busy_us", us(t->busy_ps[(size_t)g * t->n_cus + c]));
                json_object_set_new(e, "args", a);
                json_array_append_new(ev, e);
            }
    }
}

/* The host process: a span per copy and memset on its stream's track, and
 * each copy's transfer on the copy engine that ran it. */
static void tl_copies(json_t *ev, const rp_timeline *t)
{
    /* the host: a span per copy and memset, on its stream's track */
    uint32_t host = t->n_gpus;
    char name[160];
    static const char *const ck[] = {"copy H2D", "copy D2H", "copy D2D", "copy init"};
    for (size_t i = 0; i < t->ncp; i++) {
        const tl_copy *cp = &t->cp[i];
        json_t *e = json_object(), *a = json_object();
        json_object_set_new(e, "name", json_string(cp->kind == UINT32_MAX ? "memset" : cp->kind < 4 ? ck[cp->kind] : "copy"));
        json_object_set_new(e, "cat", json_string("copy"));
        json_object_set_new(e, "ph", json_string("X"));
        json_object_set_new(e, "ts", us(cp->t0));
        json_object_set_new(e, "dur", us(cp->t1 - cp->t0));
        json_object_set_new(e, "pid", json_integer(host));
        json_object_set_new(e, "tid", json_integer(cp->stream));
        json_object_set_new(a, "bytes", json_integer((json_int_t)cp->bytes));
        json_object_set_new(a, "device", json_integer(cp->device));
        json_object_set_new(a, "host_event", json_integer((json_int_t)cp->index));
        json_object_set_new(e, "args", a);
        json_array_append_new(ev, e);
        if (cp->engine_gpu == UINT32_MAX || cp->engine_gpu >= t->n_gpus)
            continue;
        /* and its transfer on the copy engine that ran it, in its GPU's process
         * (t->cp is in start order: an engine is named at its first copy) */
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = t->cp[j].engine_gpu == cp->engine_gpu && t->cp[j].engine == cp->engine;
        if (!seen) {
            snprintf(name, sizeof name, "copy engine %u", cp->engine);
            json_array_append_new(ev, meta("thread_name", cp->engine_gpu, TL_SDMA_TRACK + cp->engine, name));
        }
        e = json_deep_copy(e);
        json_object_set_new(e, "ts", us(cp->xfer));
        json_object_set_new(e, "dur", us(cp->t1 - cp->xfer));
        json_object_set_new(e, "pid", json_integer(cp->engine_gpu));
        json_object_set_new(e, "tid", json_integer(TL_SDMA_TRACK + cp->engine));
        json_object_set_new(json_object_get(e, "args"), "stream", json_integer(cp->stream));
        json_array_append_new(ev, e);
    }
}

/* Counter tracks, per interval (L2 hit rate, IPC, link bandwidth). Returns
 * whether the interconnect process (net) has one, -1 out of memory. */
static int tl_counters(json_t *ev, const rp_timeline *t, uint32_t net)
{
    /* counter tracks, per interval; series sorted by process and name (the
     * order links first carried a message depends on --threads) */
    tl_series **so = malloc((t->nser + 1) * sizeof *so);
    if (!so)
        return -1;
    memcpy(so, t->ser, t->nser * sizeof *so);
    qsort(so, t->nser, sizeof *so, series_cmp);
    int have_net = 0;
    for (size_t k = 0; k < t->nser; k++) {
        const tl_series *x = so[k];
        size_t last = TL_BINS;
        while (last > 0 && !x->a[last - 1] && !x->b[last - 1])
            last--;
        if (!last)
            continue;
        have_net |= x->pid == net;
        double cycles = (double)t->bin_ps / (double)(t->period_ps ? t->period_ps : 1);
        for (size_t i = 0; i <= last && i < TL_BINS; i++) {
            double v;
            if (x->kind == TL_L2) {
                if (!x->b[i])
                    continue;
                v = (double)x->a[i] / (double)x->b[i];
            } else if (x->kind == TL_IPC)
                v = (double)x->a[i] / cycles;
            else
                v = (double)x->a[i] * 1000.0 / (double)t->bin_ps; /* bytes/ps = 1000 GB/s */
            json_t *e = json_object(), *a = json_object();
            json_object_set_new(e, "name", json_string(x->name));
            json_object_set_new(e, "ph", json_string("C"));
            json_object_set_new(e, "ts", us((rp_time)i * t->bin_ps));
            json_object_set_new(e, "pid", json_integer(x->pid));
            json_object_set_new(a, "value", json_real(v));
            json_object_set_new(e, "args", a);
            json_array_append_new(ev, e);
        }
    }
    free(so);
    return have_net;
}

int rp_sim_write_timeline(rp_sim *s, const char *path)
{
    rp_timeline *t = s->timeline;
    if (!t) {
        snprintf(s->err, sizeof s->err, "no timeline was attached (rp_sim_timeline before rp_sim_run)");
        return -1;
    }
    if (t->failed) {
        snprintf(s->err, sizeof s->err, "%s: out of memory collecting the timeline", path);
        return -1;
    }
    /* kernel and kept workgroup spans together, in order */
    if (t->n + t->hn > t->cap) {
        tl_span *nv = realloc(t->v, (t->n + t->hn) * sizeof *nv);
        if (!nv) {
            snprintf(s->err, sizeof s->err, "%s: out of memory writing the timeline", path);
            return -1;
        }
        t->v = nv, t->cap = t->n + t->hn;
    }
    memcpy(t->v + t->n, t->h, t->hn * sizeof *t->h);
    t->n += t->hn;
    t->hn = 0;
    qsort(t->v, t->n, sizeof *t->v, span_cmp);
    json_t *root = json_object(), *ev = json_array();
    tl_tracks(ev, t);
    rp_time end = tl_spans(ev, s, t);
    tl_busy(ev, t, end);
    uint32_t host = t->n_gpus, net = t->n_gpus + 1;
    json_array_append_new(ev, meta("process_name", host, -1, "host"));
    tl_copies(ev, t);
    int have_net = tl_counters(ev, t, net);
    if (have_net < 0) {
        json_decref(root);
        json_decref(ev);
        snprintf(s->err, sizeof s->err, "%s: out of memory writing the timeline", path);
        return -1;
    }
    if (have_net)
        json_array_append_new(ev, meta("process_name", net, -1, "interconnect"));
    json_object_set_new(root, "traceEvents", ev);
    json_object_set_new(root, "displayTimeUnit", json_string("ns"));
    json_t *od = json_object();
    json_object_set_new(od, "producer", json_string("mgpu-replay"));
    json_object_set_new(od, "workgroup_span_budget", json_integer((json_int_t)t->budget));
    json_object_set_new(od, "workgroup_spans_left_out", json_integer((json_int_t)t->left_out));
    json_object_set_new(od, "counter_interval_ps", json_integer((json_int_t)t->bin_ps));
    json_object_set_new(root, "otherData", od);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int r = rp_json_dump_file(root, tmp, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (r || rename(tmp, path)) {
        snprintf(s->err, sizeof s->err, "%s: cannot write the timeline: %s", path,
                 r ? "write failed (disk full?)" : strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

void rp_timeline_free(rp_timeline *t)
{
    if (!t)
        return;
    for (size_t k = 0; k < t->nser; k++)
        free(t->ser[k]);
    free(t->ser);
    free(t->lmap);
    free(t->cp);
    pthread_mutex_destroy(&t->mu);
    free(t->v);
    free(t->h);
    free(t->busy_ps);
    free(t);
}
