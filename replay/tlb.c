/*
 * tlb.c - TLBs and the page-table walker of the timing model (rp_tlb.h).
 *
 * An L1 TLB sits on its requesters' send path (rp_tlb_send): a hit sends the
 * line request on after the lookup latency; a miss holds it in an MSHR of
 * its page and asks the L2 TLB over the NoC. The L2 TLB looks requests up one
 * per cycle; a miss takes an MSHR of its page and, when a walker is free,
 * walks: from the deepest upper level the page-walk cache holds (or the
 * root) down to the level that maps the page, one page-table entry read
 * through the GPU's L2 per level, then the IOMMU's translation for a host or
 * peer page. The translation is installed in the L2 TLB and sent back to
 * every L1 TLB that asked; each installs it and releases what it held.
 */
#include "rp_tlb.h"

#include <stdlib.h>
#include <string.h>

static inline uint64_t tag_of(uint64_t page, uint8_t sh) { return ((page >> sh) << 6 | sh) + 1; }
static inline bool is_write(uint8_t type) { return type == RP_MSG_WRITE || type == RP_MSG_ATOMIC; }

/* The entry of page (with log2 size sh) in t, or -1. Updates LRU. */
static int64_t holds(rp_tlb *t, uint64_t page, uint8_t sh)
{
    uint64_t want = tag_of(page, sh);
    uint32_t set = (uint32_t)((page >> sh) % t->spec.sets);
    size_t base = (size_t)set * t->spec.ways;
    for (uint32_t w = 0; w < t->spec.ways; w++)
        if (t->tag[base + w] == want) {
            t->age[base + w] = ++t->stamp;
            t->mru_page = page + 1;
            t->mru_shift = sh;
            t->mru_ro = t->ro[base + w];
            return (int64_t)(base + w);
        }
    return -1;
}

static void page_of(rp_tlb *t, uint64_t addr, uint8_t *sh, bool *iommu);

/* Does t translate addr now? -1: no; 0: yes; 1: yes, read-only (a page
 * with copies, rp_um.h). The last entry used first; a fully associative
 * TLB compares every entry at its own page size, a set-associative one
 * looks in the set of addr's page (its size from rp_ctx.page_of). */
static int lookup(rp_tlb *t, uint64_t addr)
{
    if (t->mru_page && (addr >> t->mru_shift << t->mru_shift) + 1 == t->mru_page)
        return t->mru_ro; /* it is the most recently used entry already */
    if (t->spec.sets == 1) {
        if (!t->n_valid)
            return -1; /* (on one GPU most memory needs no translation: no entries) */
        for (uint32_t w = 0; w < t->spec.ways; w++) {
            uint64_t g = t->tag[w];
            uint8_t sh = (uint8_t)((g - 1) & 63);
            if (g && (g - 1) >> 6 == addr >> sh) {
                t->age[w] = ++t->stamp;
                t->mru_page = (addr >> sh << sh) + 1;
                t->mru_shift = sh;
                t->mru_ro = t->ro[w];
                return t->ro[w];
            }
        }
        return -1;
    }
    uint8_t sh;
    bool io;
    page_of(t, addr, &sh, &io);
    if (!sh)
        return 0;
    int64_t e = holds(t, addr >> sh << sh, sh);
    return e < 0 ? -1 : t->ro[e];
}

static void install(rp_tlb *t, uint64_t page, uint8_t sh, bool ro)
{
    int64_t e = holds(t, page, sh);
    if (e >= 0) {
        t->ro[e] = ro;
        t->mru_ro = ro;
        return;
    }
    uint32_t set = (uint32_t)((page >> sh) % t->spec.sets);
    size_t base = (size_t)set * t->spec.ways, v = base;
    for (uint32_t w = 0; w < t->spec.ways; w++) {
        if (!t->tag[base + w]) {
            v = base + w;
            break;
        }
        if (t->age[base + w] < t->age[v])
            v = base + w;
    }
    if (!t->tag[v])
        t->n_valid++;
    t->tag[v] = tag_of(page, sh);
    t->ro[v] = ro;
    t->age[v] = ++t->stamp;
    t->mru_page = page + 1;
    t->mru_shift = sh;
    t->mru_ro = ro;
}

/* The busy MSHR of page, or -1. */
static int find_mshr(const rp_tlb *t, uint64_t page, uint8_t sh)
{
    for (uint32_t i = 0; i < t->spec.mshrs; i++)
        if (t->mshr[i].busy && t->mshr[i].page == page && t->mshr[i].shift == sh)
            return (int)i;
    return -1;
}

static int alloc_mshr(rp_tlb *t, uint64_t page, uint8_t sh)
{
    for (uint32_t i = 0; i < t->spec.mshrs; i++)
        if (!t->mshr[i].busy) {
            rp_tlb_mshr *ms = &t->mshr[i];
            ms->page = page;
            ms->shift = sh;
            ms->busy = true;
            ms->iommu = false;
            ms->write = ms->ro = false;
            ms->walking = false;
            ms->waiters = ms->wtail = NULL;
            ms->next_q = 0;
            t->mshr_used++;
            return (int)i;
        }
    return -1;
}

static void hold(rp_tlb_mshr *ms, rp_msg *m) { rp_msg_append(&ms->waiters, &ms->wtail, m); }

static void stall(rp_tlb *t, rp_msg *m)
{
    t->st_mshr_stalls++;
    m->next = NULL;
    if (t->stall_tail)
        t->stall_tail->next = m;
    else
        t->stall_head = m;
    t->stall_tail = m;
}

static void page_of(rp_tlb *t, uint64_t addr, uint8_t *sh, bool *iommu)
{
    *sh = 12;
    *iommu = false;
    if (t->x->page_of)
        t->x->page_of(t->x->owner, addr, t->gpu, sh, iommu);
}

/* ---- L1 TLB ------------------------------------------------------------------------------ */

/* drain: m comes from the stall list (counted already; the rest of the list
 * waits behind it) */
static void l1_access(rp_tlb *t, rp_link *l, rp_msg *m, rp_time ready, bool drain)
{
    bool w = is_write(m->type);
    int h = lookup(t, m->addr);
    if (h == 0 || (h == 1 && !w)) { /* a write to a read-only page misses: a protection fault (rp_um.h) */
        if (!drain)
            t->st_hits++;
        rp_link_send(l, m, ready + t->spec.latency_ps);
        return;
    }
    uint8_t sh;
    bool io;
    page_of(t, m->addr, &sh, &io);
    if (!sh) { /* needs no translation (rp_ctx.page_of): as a hit */
        if (!drain)
            t->st_hits++;
        rp_link_send(l, m, ready + t->spec.latency_ps);
        return;
    }
    if (!drain)
        t->st_misses++;
    m->fwd = l;
    uint64_t page = m->addr >> sh << sh;
    int i = find_mshr(t, page, sh);
    if (i >= 0) {
        if (!drain)
            t->st_merges++;
        hold(&t->mshr[i], m);
        return;
    }
    if ((t->stall_head && !drain) || (i = alloc_mshr(t, page, sh)) < 0) {
        stall(t, m);
        return;
    }
    hold(&t->mshr[i], m);
    rp_msg *q = rp_msg_alloc(rp_ctx_pool(t->x));
    if (!q) {
        rp_ctx_fail(t->x, "%s: out of memory for a message", t->comp.name);
        return;
    }
    q->type = RP_MSG_XLATE;
    q->addr = page;
    q->lane_mask = sh | (uint64_t)w << 8; /* bit 8: for a write */
    q->ctx = (void *)(uintptr_t)i;
    q->src_gpu = (uint8_t)t->gpu;
    q->reply_link = &t->resp_link;
    q->reply_port = &t->resp;
    rp_link_send(t->req_link, q, ready + t->spec.latency_ps);
}

void rp_tlb_send(rp_tlb *t, rp_link *l, rp_msg *m, rp_time ready)
{
    l1_access(t, l, m, ready, false);
}

/* Translations from the L2 TLB: install, release what waited for them. */
static void l1_resp(rp_port *p, rp_engine *e)
{
    rp_tlb *t = p->owner;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        uint32_t i = (uint32_t)(uintptr_t)m->ctx;
        if (i >= t->spec.mshrs || !t->mshr[i].busy) {
            rp_ctx_fail(t->x, "%s: translation for an idle MSHR", t->comp.name);
            return;
        }
        rp_tlb_mshr *ms = &t->mshr[i];
        bool ro = (m->lane_mask >> 8) & 1;
        install(t, ms->page, ms->shift, ro);
        rp_msg_free(rp_ctx_pool(t->x), m);
        rp_msg *list = ms->waiters;
        ms->waiters = ms->wtail = NULL;
        ms->busy = false;
        t->mshr_used--;
        e->progress++;
        for (rp_msg *w = list, *nx; w; w = nx) {
            nx = w->next;
            w->next = NULL;
            rp_link *l = w->fwd;
            w->fwd = NULL;
            if (ro && is_write(w->type))
                l1_access(t, l, w, e->now, true); /* a read-only translation: the write asks again */
            else
                rp_link_send(l, w, e->now);
        }
        while (t->stall_head && t->mshr_used < t->spec.mshrs) {
            rp_msg *s = t->stall_head;
            t->stall_head = s->next;
            if (!t->stall_head)
                t->stall_tail = NULL;
            rp_link *l = s->fwd;
            s->fwd = NULL;
            l1_access(t, l, s, e->now, true);
        }
    }
}

/* ---- L2 TLB and walker ------------------------------------------------------------------- */

static void l2_request(rp_tlb *t, rp_msg *m, rp_time t0, bool drain);

static int pwc_find(const rp_tlb *t, uint64_t key)
{
    for (uint32_t i = 0; i < t->spec.pwc_entries; i++)
        if (t->pwc_tag[i] == key)
            return (int)i;
    return -1;
}

static uint64_t pwc_key(uint32_t d, uint64_t va) { return ((uint64_t)d << 56 | (va >> (12 + 9 * d))) + 1; }

static void pwc_insert(rp_tlb *t, uint32_t d, uint64_t va)
{
    if (!t->spec.pwc_entries)
        return;
    uint64_t key = pwc_key(d, va);
    int i = pwc_find(t, key);
    if (i < 0) {
        i = 0;
        for (uint32_t j = 0; j < t->spec.pwc_entries; j++) {
            if (!t->pwc_tag[j]) {
                i = (int)j;
                break;
            }
            if (t->pwc_age[j] < t->pwc_age[i])
                i = (int)j;
        }
        t->pwc_tag[i] = key;
    }
    t->pwc_age[i] = ++t->stamp;
}

/* Read the entry of level ms->level for MSHR i, ready at `ready`. */
static void read_entry(rp_tlb *t, uint32_t i, rp_time ready)
{
    rp_tlb_mshr *ms = &t->mshr[i];
    uint64_t lsz = t->x->cfg->l1v_line;
    uint64_t a = rp_pte_addr(t->gpu, ms->level, ms->page) & ~(lsz - 1);
    rp_msg *m = rp_msg_alloc(rp_ctx_pool(t->x));
    if (!m) {
        rp_ctx_fail(t->x, "%s: out of memory for a message", t->comp.name);
        return;
    }
    m->type = RP_MSG_READ;
    m->addr = a;
    m->ctx = (void *)(uintptr_t)i;
    m->src_gpu = (uint8_t)t->gpu;
    m->reply_link = &t->fill_link;
    m->reply_port = &t->fill;
    rp_port *dst = NULL;
    rp_link *l = t->x->route_l2(t->x->owner, t->gpu, UINT32_MAX, a, &dst);
    m->dst = dst;
    t->st_pte_reads++;
    rp_link_send(l, m, ready + t->spec.level_ps);
}

/* A walker takes MSHR i at `ready`: start below the deepest upper level the
 * page-walk cache holds. Walks end at the leaf page table (level 0) whatever
 * the page size: GFX8 maps a larger page as a fragment, a field of each of
 * its 4 KiB page-table entries that lets a TLB entry cover the whole fragment
 * (Linux amdgpu, amdgpu_vm.c). */
static void walk_start(rp_tlb *t, uint32_t i, rp_time ready)
{
    rp_tlb_mshr *ms = &t->mshr[i];
    uint32_t d = t->spec.levels - 1;
    for (uint32_t u = 1; u < t->spec.levels; u++) {
        int j = pwc_find(t, pwc_key(u, ms->page));
        if (j >= 0) {
            t->pwc_age[j] = ++t->stamp;
            t->st_pwc_hits++;
            d = u - 1;
            break;
        }
    }
    ms->walking = true;
    ms->level = (uint8_t)d;
    t->walks_busy++;
    if (t->walks_busy > t->st_walk_peak)
        t->st_walk_peak = t->walks_busy;
    read_entry(t, i, ready);
}

static void walk_queue(rp_tlb *t, uint32_t i, rp_time ready)
{
    if (t->walks_busy < t->spec.walkers) {
        walk_start(t, i, ready);
        return;
    }
    t->mshr[i].next_q = 0;
    if (t->wq_tail)
        t->mshr[t->wq_tail - 1].next_q = i + 1;
    else
        t->wq_head = i + 1;
    t->wq_tail = i + 1;
}

/* The walk of MSHR i is over (now): install, answer every waiter, free the
 * walker and the MSHR for what queued behind them. */
static void walk_done(rp_tlb *t, uint32_t i, rp_engine *e)
{
    rp_tlb_mshr *ms = &t->mshr[i];
    t->st_walks++;
    t->st_walk_ps += e->now - ms->start;
    install(t, ms->page, ms->shift, ms->ro);
    for (rp_msg *w = ms->waiters, *nx; w; w = nx) {
        nx = w->next;
        w->next = NULL;
        w->type = RP_MSG_XLATE_RSP;
        w->addr = ms->page;
        w->lane_mask = ms->shift | (uint64_t)ms->ro << 8;
        w->dst = w->reply_port;
        rp_link_send(w->reply_link, w, e->now);
    }
    ms->waiters = ms->wtail = NULL;
    ms->busy = ms->walking = false;
    t->mshr_used--;
    t->walks_busy--;
    e->progress++;
    if (t->wq_head) {
        uint32_t q = t->wq_head - 1;
        t->wq_head = t->mshr[q].next_q;
        if (!t->wq_head)
            t->wq_tail = 0;
        t->st_walk_queue_ps += e->now - t->mshr[q].start;
        walk_start(t, q, e->now);
    }
    while (t->stall_head && t->mshr_used < t->spec.mshrs) {
        rp_msg *s = t->stall_head;
        t->stall_head = s->next;
        if (!t->stall_head)
            t->stall_tail = NULL;
        l2_request(t, s, e->now, true);
    }
}

/* The IOMMU's part of a walk, or a fault or page move it waited for, is over. */
/* The walk of MSHR i has its leaf translation, usable from `ready`:
 * unified memory may make it wait for a fault, a move or copy, or for an
 * earlier walk servicing the same page (then it asks again, rp_um.h). */
static void walk_end(rp_tlb *t, uint32_t i, rp_engine *e, rp_time ready)
{
    rp_tlb_mshr *ms = &t->mshr[i];
    ms->ro = ms->um_retry = false;
    if (t->x->um_walk)
        ready = t->x->um_walk(t->x->owner, ms->page, t->gpu, ms->write, &ms->ro, &ms->um_retry, ready);
    if (ready > e->now)
        rp_engine_schedule(e, &ms->ev, ready);
    else
        walk_done(t, i, e);
}

static void iommu_done(rp_event *ev, rp_engine *e)
{
    rp_tlb_mshr *ms = ev->owner;
    uint32_t i = (uint32_t)(ms - ms->owner->mshr);
    if (ms->um_retry)
        walk_end(ms->owner, i, e, e->now);
    else
        walk_done(ms->owner, i, e);
}

/* An entry came back from the L2. */
static void walk_fill(rp_port *p, rp_engine *e)
{
    rp_tlb *t = p->owner;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        uint32_t i = (uint32_t)(uintptr_t)m->ctx;
        rp_msg_free(rp_ctx_pool(t->x), m);
        if (i >= t->spec.mshrs || !t->mshr[i].walking) {
            rp_ctx_fail(t->x, "%s: page-table entry for an idle walk", t->comp.name);
            return;
        }
        rp_tlb_mshr *ms = &t->mshr[i];
        if (ms->level > 0) {
            pwc_insert(t, ms->level, ms->page);
            ms->level--;
            read_entry(t, i, e->now);
            continue;
        }
        /* the leaf: the IOMMU's translation of a host or peer page, then
         * what unified memory makes the walk wait for (a fault, a move) */
        rp_time ready = e->now;
        if (ms->iommu) {
            t->st_iommu++;
            ready += t->spec.iommu_ps;
        }
        walk_end(t, i, e, ready);
    }
}

/* A translation request looked up at t0 (>= now, the pipeline's slot);
 * drain: from the stall list (counted already). */
static void l2_request(rp_tlb *t, rp_msg *m, rp_time t0, bool drain)
{
    rp_time t1 = t0 + t->spec.latency_ps;
    uint8_t sh = (uint8_t)(m->lane_mask & 0xff);
    bool w = (m->lane_mask >> 8) & 1;
    uint64_t page = m->addr;
    int64_t e = holds(t, page, sh);
    if (e >= 0 && (!w || !t->ro[e])) {
        t->st_hits += !drain;
        m->type = RP_MSG_XLATE_RSP;
        m->dst = m->reply_port;
        m->lane_mask = sh | (uint64_t)t->ro[e] << 8;
        rp_link_send(m->reply_link, m, t1);
        return;
    }
    t->st_misses += !drain;
    int i = find_mshr(t, page, sh);
    if (i >= 0) {
        t->st_merges += !drain;
        t->mshr[i].write |= w; /* seen by the walk's end if it has not come yet */
        hold(&t->mshr[i], m);
        return;
    }
    if ((t->stall_head && !drain) || (i = alloc_mshr(t, page, sh)) < 0) {
        stall(t, m);
        return;
    }
    rp_tlb_mshr *ms = &t->mshr[i];
    ms->write = w;
    hold(ms, m);
    uint8_t sh2;
    page_of(t, page, &sh2, &ms->iommu);
    ms->start = t1;
    walk_queue(t, (uint32_t)i, t1);
}

static void l2_in(rp_port *p, rp_engine *e)
{
    rp_tlb *t = p->owner;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        rp_time t0 = t->next_free > e->now ? t->next_free : e->now;
        t->next_free = t0 + t->spec.clk.period_ps;
        l2_request(t, m, t0, false);
    }
}

void rp_tlb_invalidate(rp_tlb *t, uint64_t addr)
{
    for (size_t w = 0; w < (size_t)t->spec.sets * t->spec.ways; w++) {
        uint64_t g = t->tag[w];
        uint8_t sh = (uint8_t)((g - 1) & 63);
        if (g && (g - 1) >> 6 == addr >> sh) {
            t->tag[w] = 0;
            t->n_valid--;
        }
    }
    if (t->mru_page && (addr >> t->mru_shift << t->mru_shift) + 1 == t->mru_page)
        t->mru_page = 0;
}

/* ---- building ---------------------------------------------------------------------------- */

static void tlb_dump(rp_component *c, FILE *f)
{
    rp_tlb *t = (rp_tlb *)c;
    if (t->mshr_used || t->stall_head)
        fprintf(f, "  %s: %u/%u MSHRs busy, %u walks, stalled requests %s\n", c->name, t->mshr_used, t->spec.mshrs,
                t->walks_busy, t->stall_head ? "yes" : "no");
}

int rp_tlb_init(rp_tlb *t, rp_engine *e, const rp_ctx *x, const char *name, const rp_tlb_spec *spec,
                uint32_t gpu, rp_time resp_ps, rp_time fill_ps)
{
    memset(t, 0, sizeof *t);
    if (!spec->sets || !spec->ways || !spec->mshrs || (spec->walkers && !spec->levels))
        return -1;
    t->x = x;
    t->eng = e;
    t->spec = *spec;
    t->gpu = gpu;
    size_t n = (size_t)spec->sets * spec->ways;
    t->tag = calloc(n, sizeof *t->tag);
    t->ro = calloc(n, sizeof *t->ro);
    t->age = calloc(n, sizeof *t->age);
    t->mshr = calloc(spec->mshrs, sizeof *t->mshr);
    if (!t->tag || !t->ro || !t->age || !t->mshr)
        return -1;
    for (uint32_t i = 0; i < spec->mshrs; i++) {
        t->mshr[i].owner = t;
        rp_event_init(&t->mshr[i].ev, iommu_done, &t->mshr[i], RP_PRIO_COMPONENT);
    }
    if (spec->walkers) {
        t->pwc_tag = calloc(spec->pwc_entries ? spec->pwc_entries : 1, sizeof *t->pwc_tag);
        t->pwc_age = calloc(spec->pwc_entries ? spec->pwc_entries : 1, sizeof *t->pwc_age);
        if (!t->pwc_tag || !t->pwc_age)
            return -1;
        t->in.owner = t;
        t->in.notify = l2_in;
        t->fill.owner = t;
        t->fill.notify = walk_fill;
        rp_link_init(&t->fill_link, e, &t->fill, fill_ps, 0, 0);
    } else {
        t->resp.owner = t;
        t->resp.notify = l1_resp;
        rp_link_init(&t->resp_link, e, &t->resp, resp_ps, 0, 0);
    }
    rp_engine_add_component(e, &t->comp, name, tlb_dump);
    return 0;
}

void rp_tlb_fini(rp_tlb *t)
{
    if (!t)
        return;
    free(t->tag);
    free(t->ro);
    t->ro = NULL;
    free(t->age);
    free(t->mshr);
    free(t->pwc_tag);
    free(t->pwc_age);
    t->tag = t->age = t->pwc_tag = t->pwc_age = NULL;
    t->mshr = NULL;
}

void rp_tlb_register_stats(rp_tlb *t, rp_stats *s)
{
    const char *p = t->comp.name;
    rp_stats_add(s, p, "hits", &t->st_hits, "count", "translations found in this TLB");
    rp_stats_add(s, p, "misses", &t->st_misses, "count", "translations not found (merges included)");
    rp_stats_add(s, p, "mshr_merges", &t->st_merges, "count", "misses that joined a pending miss of the same page");
    rp_stats_add(s, p, "mshr_stalls", &t->st_mshr_stalls, "count", "misses that waited for a free MSHR");
    if (!t->spec.walkers)
        return;
    rp_stats_add(s, p, "walks", &t->st_walks, "count", "page-table walks completed");
    rp_stats_add(s, p, "walk_ps", &t->st_walk_ps, "ps", "sum of walk latencies (L2 TLB miss to translation, queueing included)");
    rp_stats_add(s, p, "walk_queue_ps", &t->st_walk_queue_ps, "ps", "sum of the times walks waited for a free walker");
    rp_stats_add(s, p, "walk_peak", &t->st_walk_peak, "walks", "most walks in flight at once");
    rp_stats_add(s, p, "pte_reads", &t->st_pte_reads, "count", "page-table entries read through the L2");
    rp_stats_add(s, p, "pwc_hits", &t->st_pwc_hits, "count", "walks that started below the root thanks to the page-walk cache");
    rp_stats_add(s, p, "iommu_walks", &t->st_iommu, "count", "walks of host (or peer) pages that also took the IOMMU's translation");
}
