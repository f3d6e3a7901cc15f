/*
 * cache.c - set-associative cache component (L1 vector, L1 scalar, L2 bank),
 * DRAM controller and the RDMA engine that carries accesses between GPUs.
 *
 * Cache pipeline: one message per cycle of the cache clock, fills (bottom
 * port) before new requests (top port), so that MSHRs free as early as
 * possible. A hit is answered `latency` after it enters the pipeline; a miss
 * leaves for the lower level one cycle after it enters and its response is
 * answered `latency` after the fill enters the pipeline. Requests to a line
 * with a pending miss merge into its MSHR; with every MSHR busy the input
 * stalls (the port keeps queueing) until a fill frees one: no busy ticking.
 *
 * Write policies: write-through/no-write-allocate (L1; the paper notes real
 * hardware effectively bypasses the L1 for writes) and write-back/
 * write-allocate (L2). The L2 keeps no data (values live in the functional
 * image), so a partial-line write allocates without fetching (byte-masked
 * lines, as GPU L2s do). Dirty lines are written back on eviction and on
 * FLUSH (kernel end). Replacement: LRU.
 *
 * Invariants: an MSHR is busy iff a fill for its line is outstanding; a line
 * is never both in the tag array twice; flush_pending counts write-backs
 * issued by a FLUSH and not yet acknowledged.
 */
#include "rp_sim.h"

#include <stdlib.h>
#include <string.h>

#define FLUSH_TAG ((void *)1)

static void cache_wake(rp_port *p, rp_engine *e)
{
    rp_cache *c = p->owner;
    if (c->stalled && p == &c->top)
        return; /* the fill that frees an MSHR wakes us */
    rp_time t = c->next_free > e->now ? c->next_free : e->now;
    rp_engine_wake(e, &c->ev, rp_clock_edge(c->spec.clk, t));
}

static void respond(rp_cache *c, rp_msg *m, rp_time t)
{
    switch (m->type) {
    case RP_MSG_READ: m->type = RP_MSG_READ_RSP; m->payload = (uint16_t)c->spec.line; break;
    case RP_MSG_WRITE: m->type = RP_MSG_WRITE_ACK; m->payload = 0; break;
    case RP_MSG_ATOMIC: m->type = RP_MSG_ATOMIC_RSP; m->payload = (uint16_t)c->spec.line; break;
    case RP_MSG_FLUSH: case RP_MSG_INVAL: m->type = RP_MSG_FLUSH_ACK; m->payload = 0; break;
    default: break;
    }
    m->dst = m->reply_port;
    rp_link_send(m->reply_link, m, t);
}

/* Set of a line: a mask when the set count is a power of two (the usual
 * case), else a division. */
static inline uint32_t set_of(const rp_cache *c, uint64_t line)
{
    uint64_t x = line >> c->line_shift;
    return (uint32_t)((c->sets & (c->sets - 1)) == 0 ? x & (c->sets - 1) : x % c->sets);
}

static int64_t lookup(rp_cache *c, uint64_t line)
{
    uint32_t set = set_of(c, line);
    uint64_t *t = &c->tag[(uint64_t)set * c->spec.assoc];
    for (uint32_t w = 0; w < c->spec.assoc; w++)
        if (t[w] == line + 1)
            return (int64_t)set * c->spec.assoc + w;
    return -1;
}

static void send_down(rp_cache *c, uint8_t type, uint64_t line, uint16_t payload, void *ctx,
                      rp_access *acc, uint64_t mask, rp_time t)
{
    rp_msg *d = rp_msg_alloc(c->pool);
    if (!d) {
        if (c->sim)
            rp_sim_fail(c->sim, "%s: out of memory for a message", c->comp.name);
        return;
    }
    d->type = type;
    d->addr = line;
    d->payload = payload;
    d->ctx = ctx;
    d->acc = acc;
    d->lane_mask = mask;
    d->reply_link = &c->fill_link;
    d->reply_port = &c->bottom;
    rp_port *dst = NULL;
    rp_link *l = c->route(c->route_ctx, line, &dst);
    d->dst = dst;
    rp_link_send(l, d, t);
}

/* Install line; evict the LRU way (writing it back if dirty). Returns slot. */
static uint64_t install(rp_cache *c, uint64_t line, rp_time now)
{
    int64_t hit = lookup(c, line);
    if (hit >= 0)
        return (uint64_t)hit;
    uint32_t set = set_of(c, line);
    uint64_t base = (uint64_t)set * c->spec.assoc, v = base;
    for (uint32_t w = 0; w < c->spec.assoc; w++) {
        if (c->tag[base + w] == 0) {
            v = base + w;
            break;
        }
        if (c->age[base + w] < c->age[v])
            v = base + w;
    }
    if (c->tag[v] && c->dirty[v]) {
        c->st_writebacks++;
        send_down(c, RP_MSG_WRITE, c->tag[v] - 1, (uint16_t)c->spec.line, NULL, NULL, 0,
                  now + c->spec.clk.period_ps);
    }
    c->tag[v] = line + 1;
    c->dirty[v] = 0;
    return v;
}

static void perform(rp_cache *c, rp_msg *m)
{
    if (c->sim && m->acc)
        rp_perform(c->sim, m->acc, m->lane_mask);
}

/* Handle one request from above. Returns false if it must wait (MSHRs full). */
static bool handle_top(rp_cache *c, rp_msg *m, rp_time now)
{
    rp_time lat = c->spec.latency_ps, cyc = c->spec.clk.period_ps;
    uint64_t line = m->addr & ~(uint64_t)(c->spec.line - 1);
    int64_t slot = lookup(c, line);
    switch (m->type) {
    case RP_MSG_READ:
    case RP_MSG_ATOMIC: {
        bool atomic = m->type == RP_MSG_ATOMIC;
        if (atomic && !c->spec.perform_atomic) {
            /* L1: atomics go to the point of coherence; drop our copy. */
            if (slot >= 0)
                c->tag[slot] = 0;
            c->st_atomics++;
            send_down(c, RP_MSG_ATOMIC, line, m->payload, m, m->acc, m->lane_mask, now + cyc);
            return true;
        }
        if (slot >= 0) {
            c->age[slot] = ++c->stamp;
            if (atomic) {
                c->st_atomics++;
                c->dirty[slot] = 1;
            } else
                c->st_read_hits++;
            if (atomic || c->spec.perform_rw)
                perform(c, m);
            respond(c, m, now + lat);
            return true;
        }
        for (uint32_t i = 0; i < c->spec.mshrs; i++)
            if (c->mshr[i].busy && c->mshr[i].line == line) {
                if (atomic)
                    c->st_atomics++;
                else {
                    c->st_read_misses++;
                    c->st_mshr_merges++;
                }
                if (!atomic && c->spec.perform_rw)
                    perform(c, m);
                m->next = NULL;
                c->mshr[i].wtail->next = m;
                c->mshr[i].wtail = m;
                return true;
            }
        if (c->mshr_used == c->spec.mshrs) {
            c->st_mshr_stalls++;
            return false;
        }
        uint32_t i = 0;
        while (c->mshr[i].busy)
            i++;
        c->mshr[i] = (rp_mshr){line, m, m, true};
        m->next = NULL;
        c->mshr_used++;
        if (atomic)
            c->st_atomics++;
        else
            c->st_read_misses++;
        if (!atomic && c->spec.perform_rw)
            perform(c, m);
        send_down(c, RP_MSG_READ, line, 0, (void *)(uintptr_t)i, NULL, 0, now + cyc);
        return true;
    }
    case RP_MSG_WRITE:
        if (c->spec.perform_rw)
            perform(c, m);
        if (c->spec.write_back) {
            if (slot >= 0)
                c->st_write_hits++;
            else {
                c->st_write_misses++;
                slot = (int64_t)install(c, line, now);
            }
            c->age[slot] = ++c->stamp;
            c->dirty[slot] = 1;
            respond(c, m, now + lat);
        } else {
            if (slot >= 0) {
                c->st_write_hits++;
                c->age[slot] = ++c->stamp;
            } else
                c->st_write_misses++;
            send_down(c, RP_MSG_WRITE, line, m->payload, m, NULL, 0, now + cyc);
        }
        return true;
    case RP_MSG_INVAL:
        memset(c->tag, 0, (size_t)c->sets * c->spec.assoc * sizeof *c->tag);
        rp_msg_free(c->pool, m); /* fire-and-forget: ordered before later requests on the link */
        return true;
    case RP_MSG_FLUSH: {
        uint64_t n = (uint64_t)c->sets * c->spec.assoc, k = 0;
        for (uint64_t i = 0; i < n; i++)
            if (c->tag[i] && c->dirty[i]) {
                c->dirty[i] = 0;
                c->st_writebacks++;
                send_down(c, RP_MSG_WRITE, c->tag[i] - 1, (uint16_t)c->spec.line, FLUSH_TAG, NULL, 0,
                          now + cyc * (1 + k++));
            }
        c->flush_pending += k;
        if (c->flush_pending == 0)
            respond(c, m, now + cyc);
        else
            c->flush_req = m;
        return true;
    }
    default:
        if (c->sim)
            rp_sim_fail(c->sim, "%s: unexpected message type %u on the top port", c->comp.name, m->type);
        rp_msg_free(c->pool, m);
        return true;
    }
}

static void handle_bottom(rp_cache *c, rp_msg *d, rp_time now)
{
    rp_time lat = c->spec.latency_ps;
    switch (d->type) {
    case RP_MSG_READ_RSP: {
        uint32_t i = (uint32_t)(uintptr_t)d->ctx;
        rp_mshr *ms = &c->mshr[i];
        bool allocate = true;
        uint64_t slot = allocate ? install(c, ms->line, now) : 0;
        c->age[slot] = ++c->stamp;
        for (rp_msg *m = ms->waiters, *nx; m; m = nx) {
            nx = m->next;
            if (m->type == RP_MSG_ATOMIC) {
                c->dirty[slot] = 1;
                perform(c, m);
            }
            respond(c, m, now + lat);
        }
        ms->busy = false;
        ms->waiters = ms->wtail = NULL;
        c->mshr_used--;
        if (c->stalled) {
            c->stalled = false;
            if (c->top.head)
                rp_engine_wake(c->eng, &c->ev, now + c->spec.clk.period_ps);
        }
        break;
    }
    case RP_MSG_WRITE_ACK:
    case RP_MSG_ATOMIC_RSP:
        if (d->ctx == FLUSH_TAG) {
            if (--c->flush_pending == 0 && c->flush_req) {
                respond(c, c->flush_req, now + c->spec.clk.period_ps);
                c->flush_req = NULL;
            }
        } else if (d->ctx) {
            respond(c, (rp_msg *)d->ctx, now + c->spec.clk.period_ps);
        }
        break;
    default:
        if (c->sim)
            rp_sim_fail(c->sim, "%s: unexpected message type %u on the bottom port", c->comp.name, d->type);
    }
    rp_msg_free(c->pool, d);
}

static void cache_run(rp_event *ev, rp_engine *e)
{
    rp_cache *c = ev->owner;
    rp_time now = e->now;
    if (c->next_free > now) {
        rp_engine_schedule(e, ev, c->next_free);
        return;
    }
    rp_msg *m = rp_port_pop(&c->bottom);
    if (m) {
        handle_bottom(c, m, now);
    } else if (!c->stalled && (m = rp_port_pop(&c->top))) {
        if (!handle_top(c, m, now)) {
            /* Put it back at the head and sleep until a fill frees an MSHR. */
            m->next = c->top.head;
            c->top.head = m;
            if (!c->top.tail)
                c->top.tail = m;
            c->top.n++;
            c->stalled = true;
        }
    } else {
        return;
    }
    e->progress++;
    c->next_free = now + c->spec.clk.period_ps;
    if (c->bottom.head || (!c->stalled && c->top.head))
        rp_engine_schedule(e, ev, c->next_free);
}

static void cache_dump(rp_component *comp, FILE *f)
{
    rp_cache *c = (rp_cache *)comp;
    if (!c->mshr_used && !c->top.n && !c->bottom.n && !c->flush_req)
        return;
    fprintf(f, "  %s: mshrs %u/%u busy, stalled=%d, top queue %u, bottom queue %u, flush pending %llu\n",
            c->comp.name, c->mshr_used, c->spec.mshrs, c->stalled, c->top.n, c->bottom.n,
            (unsigned long long)c->flush_pending);
}

int rp_cache_init(rp_cache *c, rp_engine *e, rp_msg_pool *pool, rp_sim *sim, const char *name,
                  const rp_cache_spec *spec, rp_route_fn route, void *route_ctx,
                  rp_time fill_latency_ps, uint64_t fill_bytes_per_s, uint32_t header_bytes)
{
    memset(c, 0, sizeof *c);
    c->eng = e;
    c->pool = pool;
    c->sim = sim;
    c->spec = *spec;
    c->sets = (uint32_t)(spec->size / spec->line / spec->assoc);
    while ((1u << c->line_shift) < spec->line)
        c->line_shift++;
    size_t n = (size_t)c->sets * spec->assoc;
    c->tag = calloc(n, sizeof *c->tag);
    c->age = calloc(n, sizeof *c->age);
    c->dirty = calloc(n, 1);
    c->mshr = calloc(spec->mshrs, sizeof *c->mshr);
    if (!c->tag || !c->age || !c->dirty || !c->mshr || c->sets == 0)
        return -1;
    c->route = route;
    c->route_ctx = route_ctx;
    rp_event_init(&c->ev, cache_run, c, RP_PRIO_COMPONENT);
    c->top.owner = c->bottom.owner = c;
    c->top.notify = c->bottom.notify = cache_wake;
    rp_link_init(&c->fill_link, e, &c->bottom, fill_latency_ps, fill_bytes_per_s, header_bytes);
    rp_engine_add_component(e, &c->comp, name, cache_dump);
    return 0;
}

void rp_cache_fini(rp_cache *c)
{
    free(c->tag);
    free(c->age);
    free(c->dirty);
    free(c->mshr);
}

void rp_cache_register_stats(rp_cache *c, rp_stats *s)
{
    const char *p = c->comp.name;
    rp_stats_add(s, p, "read_hits", &c->st_read_hits, "count");
    rp_stats_add(s, p, "read_misses", &c->st_read_misses, "count");
    rp_stats_add(s, p, "mshr_merges", &c->st_mshr_merges, "count");
    rp_stats_add(s, p, "write_hits", &c->st_write_hits, "count");
    rp_stats_add(s, p, "write_misses", &c->st_write_misses, "count");
    rp_stats_add(s, p, "atomics", &c->st_atomics, "count");
    rp_stats_add(s, p, "writebacks", &c->st_writebacks, "count");
    rp_stats_add(s, p, "mshr_stalls", &c->st_mshr_stalls, "count");
}

/* ---- DRAM ---------------------------------------------------------------------- */

/* Requests are served in arrival order at the channel bandwidth; each
 * returns `latency` after its data transfer ends. Zero-time handler: the
 * controller has no internal event (its timing is the busy_until horizon). */
static void dram_notify(rp_port *p, rp_engine *e)
{
    rp_dram *d = p->owner;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        uint64_t bytes = d->line;
        rp_time start = d->busy_until > e->now ? d->busy_until : e->now;
        rp_time ser = d->bytes_per_s ? (bytes * 1000000000000ull + d->bytes_per_s - 1) / d->bytes_per_s : 0;
        d->busy_until = start + ser;
        if (m->type == RP_MSG_WRITE) {
            d->st_writes++;
            d->st_write_bytes += bytes;
            m->type = RP_MSG_WRITE_ACK;
            m->payload = 0;
        } else {
            d->st_reads++;
            d->st_read_bytes += bytes;
            m->type = m->type == RP_MSG_ATOMIC ? RP_MSG_ATOMIC_RSP : RP_MSG_READ_RSP;
            m->payload = (uint16_t)d->line;
        }
        m->dst = m->reply_port;
        rp_link_send(m->reply_link, m, d->busy_until + d->latency_ps);
        e->progress++;
    }
}

void rp_dram_init(rp_dram *d, rp_engine *e, const char *name, rp_time latency_ps, uint64_t bytes_per_s,
                  uint32_t line)
{
    memset(d, 0, sizeof *d);
    d->eng = e;
    d->latency_ps = latency_ps;
    d->bytes_per_s = bytes_per_s;
    d->line = line;
    d->top.owner = d;
    d->top.notify = dram_notify;
    rp_link_init(&d->in, e, &d->top, 0, 0, 0);
    rp_engine_add_component(e, &d->comp, name, NULL);
}

/* ---- RDMA ------------------------------------------------------------------------ */

static bool is_request(uint8_t t) { return t == RP_MSG_READ || t == RP_MSG_WRITE || t == RP_MSG_ATOMIC; }

/* From a local L1: forward over the inter-GPU bus to the owner's RDMA. */
static void rdma_inside(rp_port *p, rp_engine *e)
{
    rp_rdma *r = p->owner;
    rp_sim *s = r->sim;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        uint32_t t = rp_gpu_of(s, m->addr, r->gpu);
        rp_msg *d = rp_msg_alloc(&s->pool);
        if (!d) {
            rp_sim_fail(s, "%s: out of memory", r->comp.name);
            return;
        }
        d->type = m->type;
        d->addr = m->addr;
        d->payload = m->payload;
        d->acc = m->acc;
        d->lane_mask = m->lane_mask;
        d->src_gpu = (uint8_t)r->gpu;
        d->ctx = m;
        d->dst = &s->gpus[t].rdma.outside;
        d->reply_link = &s->pcie;
        d->reply_port = &r->outside;
        r->st_out_reqs++;
        r->st_out_bytes += d->payload + s->pcie.header_bytes;
        rp_link_send(&s->pcie, d, e->now);
    }
}

static void rdma_outside(rp_port *p, rp_engine *e)
{
    rp_rdma *r = p->owner;
    rp_sim *s = r->sim;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        if (is_request(m->type)) {
            /* A remote GPU's request: into our own L2 bank for the line. */
            rp_msg *x = rp_msg_alloc(&s->pool);
            if (!x) {
                rp_sim_fail(s, "%s: out of memory", r->comp.name);
                return;
            }
            x->type = m->type;
            x->addr = m->addr;
            x->payload = m->payload;
            x->acc = m->acc;
            x->lane_mask = m->lane_mask;
            x->ctx = m;
            x->reply_link = &r->l2resp_link;
            x->reply_port = &r->l2resp;
            r->st_in_reqs++;
            r->st_in_bytes += m->payload;
            rp_port *dst = NULL;
            rp_link *l = rp_route_l2_bank(s, r->gpu, m->addr, &dst);
            x->dst = dst;
            rp_link_send(l, x, e->now);
        } else {
            /* The response to one of our requests: back to the L1. */
            rp_msg *orig = m->ctx;
            orig->type = m->type;
            orig->payload = m->payload;
            orig->dst = orig->reply_port;
            rp_link_send(orig->reply_link, orig, e->now);
            rp_msg_free(&s->pool, m);
        }
    }
}

static void rdma_l2resp(rp_port *p, rp_engine *e)
{
    rp_rdma *r = p->owner;
    rp_sim *s = r->sim;
    rp_msg *x;
    while ((x = rp_port_pop(p))) {
        rp_msg *m = x->ctx;
        m->type = x->type;
        m->payload = x->payload;
        m->dst = m->reply_port;
        r->st_out_bytes += m->payload + s->pcie.header_bytes;
        rp_link_send(m->reply_link, m, e->now);
        rp_msg_free(&s->pool, x);
    }
}

void rp_rdma_init(rp_rdma *r, rp_sim *s, uint32_t gpu)
{
    char name[48];
    memset(r, 0, sizeof *r);
    r->sim = s;
    r->gpu = gpu;
    r->inside.owner = r->outside.owner = r->l2resp.owner = r;
    r->inside.notify = rdma_inside;
    r->outside.notify = rdma_outside;
    r->l2resp.notify = rdma_l2resp;
    rp_time noc = rp_lat_ps(s->cfg.noc_latency, s->clk);
    uint64_t bw = rp_bw_Bps(s->cfg.noc_bandwidth, s->clk);
    rp_link_init(&r->in_link, &s->eng, &r->inside, noc, bw, s->cfg.header_bytes);
    rp_link_init(&r->l2resp_link, &s->eng, &r->l2resp, noc, bw, s->cfg.header_bytes);
    snprintf(name, sizeof name, "gpu[%u].rdma", gpu);
    rp_engine_add_component(&s->eng, &r->comp, name, NULL);
}
