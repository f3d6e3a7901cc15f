/*
 * cache.c - set-associative cache component (L1 vector, L1 scalar, L2 bank)
 * with data (the DRAM controller is in dram.c, the RDMA engines in net.c).
 *
 * Cache pipeline: one message per cycle of the cache clock, fills (bottom
 * port) before new requests (top port), so that MSHRs free as early as
 * possible. A hit is answered `latency` after it enters the pipeline; a miss
 * leaves for the lower level one cycle after it enters and its response is
 * answered `latency` after the fill enters the pipeline. Requests to a line
 * with a pending miss merge into its MSHR (L2: writes too, so that they are
 * applied after the fill, in arrival order); with every MSHR busy the input
 * stalls (the port keeps queueing) until a fill frees one: no busy ticking.
 *
 * Data (DESIGN.md Sec. 6, data-value checking): every line holds its bytes.
 * L1 levels (spec.perform_rw) perform loads on their copy - on a hit when the
 * request is processed, on a miss when the fill arrives, in MSHR order - and
 * compare them with the trace (rp_perform_line). Write-through/no-write-
 * allocate L1: a store updates the L1's copy if present (a snapshot of it
 * joins the MSHR waiters when the line's fill is pending, so that loads
 * queued before it do not see it and the installed line does) and travels
 * down with its access (rp_msg.acc + lane_mask name the lanes, addresses and
 * store data). Write-back/write-allocate L2: a store merges into the line and
 * marks it dirty; a partial-line write allocates without a timed fetch and
 * takes the bytes it does not write from DRAM (rp_fmem), which is what a
 * byte-masked line merged with its later fill would hold, because the L2
 * bank is the only writer of its lines' DRAM. Atomics are performed at the
 * L2 (the point of coherence) on its copy; an L1 drops its copy. Fills from
 * the L2 to a cache carry a snapshot of the line (rp_msg.data, from the
 * rp_lbufs pool) taken when the L2 served the request; a fill that arrives
 * without data (a forwarder dropped it) reads the line at the point of
 * coherence (rp_mem_read_line, counted as fill_peeks). DRAM is timing only;
 * its contents are the sim's rp_fmem: a dirty line's data is written there
 * when its write-back leaves the L2 bank (eviction or FLUSH) and an L2 fill
 * reads it when it arrives back at the bank. L1s are invalidated at kernel
 * start: the L1V by its CU's INVAL, every L1 also on the first request of a
 * new kernel (the shared scalar cache has no CU to do it).
 *
 * Test hook: skip_flush (debug.skip_l2_flush) turns FLUSH into an immediate
 * acknowledgement that writes nothing back: an injected bug that the D2H
 * data check must catch.
 *
 * Replacement: LRU. Functional work is done only when the cache has a
 * memory context (rp_mem_ctx: the functional memory and the data path's
 * entry points; component tests without one get the timing alone). The
 * cache knows nothing else of the simulation around it.
 *
 * Invariants: an MSHR is busy iff a fill for its line is outstanding; a line
 * is never in the tag array twice, and never while an MSHR for it is busy;
 * flush_pending counts write-backs issued by a FLUSH and not yet
 * acknowledged; an L2 line is complete (every byte valid).
 */
#include "rp_cache.h"
#include "rp_cu.h"
#include "rp_fmem.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Stop the simulation with a one-line message (through the memory context). */
static void cfail(const rp_cache *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cfail(const rp_cache *c, const char *fmt, ...)
{
    if (!c->mx || !c->mx->fail)
        return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->mx->fail(c->mx->arg, msg);
}

#define FLUSH_TAG ((void *)1)
#define STORE_REC ((void *)2) /* L1 MSHR waiter: a store snapshot (data: bytes + byte mask) */
/* rp_msg.data of a READ request from a cache: "answer with line data". A
 * marker in the request (set by the requester) rather than a look at the
 * reply port, which would touch the requester's state on every response. */
#define WANT_DATA ((uint8_t *)&rp_want_data)
static const uint8_t rp_want_data;

/* ---- line buffers ------------------------------------------------------------------ */

#define LBUF_HDR 16 /* keeps the buffer 16-byte aligned: the `all` link, then the pool that made it */

static inline rp_lbufs *lbuf_maker(const uint8_t *b)
{
    rp_lbufs *m;
    memcpy(&m, b - LBUF_HDR + sizeof(void *), sizeof m);
    return m;
}

uint8_t *rp_lbuf_get(rp_lbufs *p, uint32_t line)
{
    if (!p->line)
        p->line = line < 16 ? 16 : line;
    uint8_t *b = p->free;
    if (b) {
        memcpy(&p->free, b, sizeof p->free);
    } else {
        /* a header links every buffer ever made (freed at rp_lbufs_fini even
         * when a run stopped with buffers in flight) and names its pool */
        uint8_t *blk = malloc(LBUF_HDR + p->line + p->line / 8);
        if (!blk)
            return NULL;
        memcpy(blk, &p->all, sizeof p->all);
        memcpy(blk + sizeof(void *), &p, sizeof p);
        p->all = blk;
        b = blk + LBUF_HDR;
    }
    p->live++;
    return b;
}

void rp_lbuf_put(rp_lbufs *p, uint8_t *b)
{
    if (!b)
        return;
    rp_lbufs *m = lbuf_maker(b);
    if (m == p) {
        memcpy(b, &p->free, sizeof p->free);
        p->free = b;
    } else {
        if (!p->away) {
            p->away_tail = b;
            p->away_maker = m;
        } else if (p->away_maker != m) {
            p->away_maker = RP_LBUFS_MIXED;
        }
        memcpy(b, &p->away, sizeof p->away);
        p->away = b;
    }
    p->live--;
}

/* Buffers released by another partition's thread were last written on its
 * core: when they all come from one pool (the usual case: the fills an L2
 * bank sent to one group's L1s) the list is spliced onto that pool's free
 * list whole, touching its last buffer only, not walked buffer by buffer at
 * the serial point. Which buffer a pool hands out next never changes a
 * result (a buffer's bytes are written before they are read). */
void rp_lbufs_return(rp_lbufs *p)
{
    if (!p->away)
        return;
    if (p->away_maker != RP_LBUFS_MIXED) {
        rp_lbufs *m = p->away_maker;
        memcpy(p->away_tail, &m->free, sizeof m->free);
        m->free = p->away;
    } else {
        for (uint8_t *b = p->away, *n; b; b = n) {
            memcpy(&n, b, sizeof n);
            rp_lbufs *m = lbuf_maker(b);
            memcpy(b, &m->free, sizeof m->free);
            m->free = b;
        }
    }
    p->away = p->away_tail = NULL;
    p->away_maker = NULL;
}

void rp_lbufs_fini(rp_lbufs *p)
{
    for (uint8_t *b = p->all, *n; b; b = n) {
        memcpy(&n, b, sizeof n);
        free(b);
    }
    memset(p, 0, sizeof *p);
}

/* ---- helpers ------------------------------------------------------------------------- */

/* Run c at t (>= now, a clock edge), or earlier if it runs earlier already.
 * arrival: for a message arriving at t (not at the cache's own pace): after
 * the components already due at t (RP_PRIO_ARRIVE), where a delivery event
 * at t used to wake it. */
static void cache_sched(rp_cache *c, rp_engine *e, rp_time t, bool arrival)
{
    if (c->ev.pending) {
        if (c->ev.time <= t)
            return;
        rp_engine_cancel(e, &c->ev);
    }
    c->ev.prio = arrival ? RP_PRIO_ARRIVE : RP_PRIO_COMPONENT;
    rp_engine_schedule(e, &c->ev, t);
}

/* When c runs next for work that arrives at w (its pipeline free at
 * next_free), and whether that is an arrival's own instant. */
static inline rp_time run_at(const rp_cache *c, rp_time w, bool *arrival)
{
    rp_time t = rp_clock_edge(c->spec.clk, w > c->next_free ? w : c->next_free);
    *arrival = t == w && w > c->next_free;
    return t;
}

/* A message reaches port p at t (>= now; both ports are pull ports, see
 * rp_port): wake at the first free pipeline cycle from t. */
static void cache_arrive(rp_port *p, rp_engine *e, rp_time t)
{
    rp_cache *c = p->owner;
    if (c->stalled && p == &c->top)
        return; /* the fill that frees an MSHR wakes us */
    bool arrival;
    rp_time r = run_at(c, t, &arrival);
    cache_sched(c, e, r, arrival);
}

/* A message appended to p directly (no link): it is there now. */
static void cache_wake(rp_port *p, rp_engine *e) { cache_arrive(p, e, e->now); }

/* When c next has a message to take: the earliest arrival at its bottom
 * port and, unless it is stalled, a held retry (now) or the earliest
 * arrival at its top port; RP_TIME_MAX: none. */
static inline rp_time next_work(const rp_cache *c, rp_time now)
{
    rp_time t = rp_port_next(&c->bottom);
    if (!c->stalled) {
        rp_time u = c->retry ? now : rp_port_next(&c->top);
        if (u < t)
            t = u;
    }
    return t;
}

static inline uint8_t *ldata(rp_cache *c, uint64_t slot) { return c->data + (slot << c->line_shift); }

/* Reply to m at t. A read answered to another cache carries a snapshot of
 * the line (line: its data here, NULL when there is none). */
static void respond(rp_cache *c, rp_msg *m, rp_time t, const uint8_t *line)
{
    switch (m->type) {
    case RP_MSG_READ:
        m->type = RP_MSG_READ_RSP;
        m->payload = (uint16_t)c->spec.line;
        if (m->data != WANT_DATA)
            m->data = NULL;
        else if (!line || !c->mx)
            m->data = NULL;
        else {
            m->data = rp_lbuf_get(c->lbufs, c->spec.line);
            if (m->data)
                memcpy(m->data, line, c->spec.line);
            else
                cfail(c, "%s: out of memory for line data", c->comp.name);
        }
        break;
    case RP_MSG_WRITE: m->type = RP_MSG_WRITE_ACK; m->payload = 0; break;
    case RP_MSG_ATOMIC: m->type = RP_MSG_ATOMIC_RSP; m->payload = (uint16_t)c->spec.line; break;
    case RP_MSG_FLUSH: case RP_MSG_INVAL: m->type = RP_MSG_FLUSH_ACK; m->payload = 0; break;
    default: break;
    }
    m->dst = m->reply_port;
    rp_link_send(m->reply_link, m, t);
}


/* Line i of c becomes dirty (and its group of 64 lines in dsum). */
static inline void set_dirty(rp_cache *c, uint64_t i)
{
    c->dirty[i] = 1;
    c->dsum[i >> 12] |= 1ull << ((i >> 6) & 63);
}

/* Set of a line: shifts and masks when the strides, counts and set count
 * are powers of two (the usual case), else divisions (the same result). */
static inline uint32_t set_of(const rp_cache *c, uint64_t line)
{
    if (c->strip_shifts) {
        for (int i = 0; i < 2; i++)
            if (c->strip_hi[i])
                line = (line >> c->strip_hi[i] << c->strip_lo[i]) | (line & ((1ull << c->strip_lo[i]) - 1));
    } else {
        for (int i = 0; i < 2; i++)
            if (c->spec.strip_n[i] > 1) {
                uint64_t st = c->spec.strip_stride[i];
                line = line / (st * c->spec.strip_n[i]) * st + line % st;
            }
    }
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

uint8_t *rp_cache_line_data(rp_cache *c, uint64_t line)
{
    int64_t s = lookup(c, line);
    return s >= 0 ? ldata(c, (uint64_t)s) : NULL;
}

uint8_t *rp_cache_line_data_w(rp_cache *c, uint64_t line)
{
    int64_t s = lookup(c, line);
    if (s < 0)
        return NULL;
    set_dirty(c, (uint64_t)s);
    return ldata(c, (uint64_t)s);
}

/* Bucket of a line in the MSHR index (mshr_hcnt/mshr_hidx): a Fibonacci
 * hash of the line number. Its low bits alone collide in an L2 bank, whose
 * lines share the bank-select bits (km/vectoradd: 16 of 256 buckets used, so
 * most lookups scanned every MSHR). Which bucket a line lands in never
 * changes what mshr_find returns, only how fast. */
static inline uint32_t mshr_hash(const rp_cache *c, uint64_t line)
{
    return (uint32_t)(((line >> c->line_shift) * 0x9E3779B97F4A7C15ull) >> 56);
}

static rp_mshr *mshr_find(rp_cache *c, uint64_t line)
{
    uint32_t h = mshr_hash(c, line);
    if (c->mshr_hcnt[h] == 0)
        return NULL;
    if (c->mshr_hcnt[h] == 1) {
        rp_mshr *ms = &c->mshr[c->mshr_hidx[h]];
        return ms->busy && ms->line == line ? ms : NULL;
    }
    for (uint32_t i = 0; i < c->spec.mshrs; i++)
        if (c->mshr[i].busy && c->mshr[i].line == line)
            return &c->mshr[i];
    return NULL;
}

static uint32_t mshr_take(rp_cache *c, uint64_t line)
{
    uint32_t i = c->mshr_free[--c->mshr_nfree], h = mshr_hash(c, line);
    c->mshr_hcnt[h]++;
    c->mshr_hidx[h] = (uint16_t)i;
    return i;
}

static void mshr_release(rp_cache *c, uint32_t i)
{
    uint32_t h = mshr_hash(c, c->mshr[i].line);
    c->mshr[i].busy = false;
    c->mshr_free[c->mshr_nfree++] = i;
    if (--c->mshr_hcnt[h] == 1) /* find the one left (collisions are rare) */
        for (uint32_t j = 0; j < c->spec.mshrs; j++)
            if (c->mshr[j].busy && mshr_hash(c, c->mshr[j].line) == h) {
                c->mshr_hidx[h] = (uint16_t)j;
                break;
            }
}

/* MSHR occupancy integral (mshr x ps) up to now; call before mshr_used changes. */
static inline void mshr_account(rp_cache *c, rp_time now)
{
    c->st_mshr_busy_ps += (uint64_t)c->mshr_used * (now - c->mshr_t);
    c->mshr_t = now;
}

static void send_down(rp_cache *c, uint8_t type, uint64_t line, uint16_t payload, void *ctx,
                      rp_access *acc, uint64_t mask, rp_time t)
{
    rp_msg *d = rp_msg_alloc(c->pool);
    if (!d) {
        if (c->mx)
            cfail(c, "%s: out of memory for a message", c->comp.name);
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
    if (type == RP_MSG_READ)
        d->data = WANT_DATA; /* a cache's fill: answer with the line's data */
    rp_port *dst = NULL;
    rp_link *l = c->route(c->route_ctx, line, &dst);
    d->dst = dst;
    rp_link_send(l, d, t);
}

/* Write a dirty line's data into DRAM (rp_fmem): its write-back leaves the bank. */
static void wb_data(rp_cache *c, uint64_t slot)
{
    if (c->mx && rp_fmem_write(c->mx->mem, c->tag[slot] - 1, ldata(c, slot), c->spec.line))
        cfail(c, "functional memory: out of memory");
}

/* The slot holding line (>= 0), or -1 with *v = the way it goes to: the
 * first invalid one of its set, else the least recently used. One pass. */
static int64_t lookup_victim(const rp_cache *c, uint64_t line, uint64_t *v)
{
    uint64_t base = (uint64_t)set_of(c, line) * c->spec.assoc, vic = base, vage = UINT64_MAX;
    const uint64_t *tag = c->tag + base, *age = c->age + base;
    bool invalid = false;
    for (uint32_t w = 0; w < c->spec.assoc; w++) {
        uint64_t t = tag[w];
        if (t == line + 1)
            return (int64_t)(base + w);
        if (invalid)
            continue;
        if (!t) {
            vic = base + w;
            invalid = true;
        } else if (age[w] < vage) {
            vic = base + w;
            vage = age[w];
        }
    }
    *v = vic;
    return -1;
}

/* Install line; evict the LRU way (writing it back if dirty). Returns the
 * slot; *fresh = the line was not present (its data is to be filled). */
static uint64_t install(rp_cache *c, uint64_t line, rp_time now, bool *fresh)
{
    uint64_t v;
    int64_t hit = lookup_victim(c, line, &v);
    *fresh = hit < 0;
    if (hit >= 0)
        return (uint64_t)hit;
    if (c->tag[v] && c->dirty[v]) {
        c->st_writebacks++;
        wb_data(c, v);
        send_down(c, RP_MSG_WRITE, c->tag[v] - 1, (uint16_t)c->spec.line, NULL, NULL, 0,
                  now + c->spec.clk.period_ps);
    }
    c->tag[v] = line + 1;
    c->dirty[v] = 0;
    return v;
}

int rp_cache_functional_write(rp_cache *c, uint64_t addr, const uint8_t *src, uint32_t n)
{
    uint64_t lb = c->spec.line, line = addr & ~(lb - 1);
    if (n == 0 || addr - line > lb - n || !c->spec.write_back || c->no_allocate)
        return -1;
    uint64_t v, slot;
    int64_t hit = lookup_victim(c, line, &v);
    if (hit >= 0) {
        slot = (uint64_t)hit;
    } else {
        /* write-allocate as install() does, without messages: the victim's
         * write-back goes to DRAM (rp_fmem) at once */
        if (c->tag[v] && c->dirty[v])
            wb_data(c, v);
        c->tag[v] = line + 1;
        c->dirty[v] = 0;
        if (c->mx)
            rp_fmem_read(c->mx->mem, line, ldata(c, v), (uint32_t)lb);
        else
            memset(ldata(c, v), 0, lb);
        slot = v;
    }
    c->age[slot] = ++c->stamp;
    if (src) {
        memcpy(ldata(c, slot) + (addr - line), src, n);
        set_dirty(c, (uint64_t)slot);
    }
    return 0;
}

static void invalidate_all(rp_cache *c)
{
    memset(c->tag, 0, (size_t)c->sets * c->spec.assoc * sizeof *c->tag);
    c->st_invalidations++;
}

static inline void perform_on(rp_cache *c, rp_msg *m, uint64_t line, uint8_t *data)
{
    if (c->mx && m->acc)
        c->mx->perform_line(c->mx->arg, m->acc, m->lane_mask, line, data, c->spec.line, NULL);
}

/* ---- compare-and-swap in the recorded order --------------------------------
 * The replay has no ALU: a compare-and-swap carries the compare and swap
 * values the recording computed, and whether it succeeded there (it
 * returned its compare value). In another order a CAS loop's attempts would
 * fail where they succeeded and the recorded walk (which left the loop)
 * would go on with a value never written: a CAS-loop counter or sum would
 * end wrong. So the point of coherence holds a compare-and-swap that
 * succeeded in the recording until the line holds its compare value
 * (rp_mem_ctx.atomic_ready): chains of them apply in the recorded order,
 * at the times the model gives (each link waits for the one before it to
 * reach the L2), and end with the recorded value. One that failed in the
 * recording reads only (perform.c). An await's polls are not held: the
 * await's own walk repeats them. A held request is looked at again after
 * every atomic or write this cache performs on its line, and every
 * HOLD_RECHECK cycles (an estimate); looking costs no cycle of the
 * pipeline, performing it takes its cycle as any request. When its line has
 * seen no atomic or write for spec.cas_hold_max_ps it is performed anyway
 * (st_cas_give_ups: the value the recording needs is not coming here, as
 * in a lock-free structure whose other updates the model ordered
 * differently). m->held_since is the time of the line's last activity
 * while held, + 1. */
#define HOLD_RECHECK 2048u

/* Held requests to line (all of them: line UINT64_MAX, the periodic look,
 * which is no activity on their lines) look again. */
static void held_kick(rp_cache *c, uint64_t line, rp_time now)
{
    rp_msg *keep = NULL, *keep_tail = NULL;
    for (rp_msg *m = c->held, *nx; m; m = nx) {
        nx = m->next;
        if (line == UINT64_MAX || (m->addr & ~(uint64_t)(c->spec.line - 1)) == line) {
            if (line != UINT64_MAX) { /* activity on its line: the idle time starts again */
                c->st_cas_hold_ps += now + 1 - m->held_since;
                m->held_since = now + 1;
            }
            rp_msg_append(&c->retry, &c->retry_tail, m);
            continue;
        }
        rp_msg_append(&keep, &keep_tail, m);
    }
    c->held = keep;
    c->held_tail = keep_tail;
}

/* Put m at the end of the held list; the periodic look is due. */
static void held_add(rp_cache *c, rp_msg *m, rp_time now)
{
    rp_msg_append(&c->held, &c->held_tail, m);
    if (!c->held_check || c->held_check <= now)
        c->held_check = now + (rp_time)HOLD_RECHECK * c->spec.clk.period_ps;
}

/* Hold atomic m (its line's data d) for its recorded turn? */
static bool cas_hold(rp_cache *c, rp_msg *m, rp_time now, uint64_t line, const uint8_t *d)
{
    if (!c->spec.cas_hold_max_ps || !c->mx || !c->mx->atomic_ready || !m->acc)
        return false;
    if (m->held_since && now + 1 - m->held_since >= c->spec.cas_hold_max_ps) {
        c->st_cas_give_ups++;
        return false;
    }
    if (c->mx->atomic_ready(c->mx->arg, m->acc, m->lane_mask, line, d, c->spec.line))
        return false;
    if (!m->held_since) {
        m->held_since = now + 1;
        c->st_cas_holds++;
    }
    held_add(c, m, now);
    return true;
}

/* An atomic or a write was performed here on line: held requests to it
 * look again. */
static inline void performed_write(rp_cache *c, rp_msg *m, rp_time now, uint64_t line)
{
    if (m->held_since) {
        c->st_cas_hold_ps += now + 1 - m->held_since;
        m->held_since = 0;
    }
    if (c->held)
        held_kick(c, line, now);
}

/* The next held request to take again: one that is ready, timed out, or
 * whose line is not here (it goes through a fill and is looked at then);
 * the others go back to the held list without taking a cycle. */
static rp_msg *retry_next(rp_cache *c, rp_time now)
{
    while (c->retry) {
        rp_msg *m = c->retry;
        c->retry = m->next;
        if (!c->retry)
            c->retry_tail = NULL;
        m->next = NULL;
        uint64_t line = m->addr & ~(uint64_t)(c->spec.line - 1);
        int64_t slot = lookup(c, line);
        if (slot < 0 || mshr_find(c, line) || now + 1 - m->held_since >= c->spec.cas_hold_max_ps ||
            c->mx->atomic_ready(c->mx->arg, m->acc, m->lane_mask, line, ldata(c, (uint64_t)slot), c->spec.line))
            return m;
        held_add(c, m, now);
    }
    return NULL;
}

/* A write-back cache's line that another GPU's memory serves now (a late
 * request after its unified-memory page moved, rp_mem_ctx.alien), for a
 * write or only reads? */
static inline bool alien(const rp_cache *c, uint64_t line, bool write)
{
    return c->spec.write_back && c->mx && c->mx->alien && c->mx->alien(c->mx->arg, c->gpu, line, write);
}

/* Serve m (READ, WRITE or ATOMIC) of an alien line on the authority's data
 * (the serving L2's line, else DRAM), as a hit here; nothing is installed. */
static void alien_serve(rp_cache *c, rp_msg *m, rp_time now, uint64_t line)
{
    bool w = m->type != RP_MSG_READ;
    uint8_t *d = c->mx->authority(c->mx->arg, line, w), *tmp = NULL;
    if (!d) {
        d = tmp = rp_lbuf_get(c->lbufs, c->spec.line);
        if (!d) {
            cfail(c, "%s: out of memory for line data", c->comp.name);
            return;
        }
        rp_fmem_read(c->mx->mem, line, d, c->spec.line);
    }
    c->st_alien++;
    if (m->type == RP_MSG_ATOMIC)
        c->st_atomics++;
    if (w || c->spec.perform_rw)
        perform_on(c, m, line, d);
    if (tmp && w && rp_fmem_write(c->mx->mem, line, d, c->spec.line))
        cfail(c, "functional memory: out of memory");
    respond(c, m, now + c->spec.latency_ps, d);
    rp_lbuf_put(c->lbufs, tmp);
}

/* A read or an atomic from above (slot: line's way, or -1). Returns false if
 * it must wait (MSHRs full). */
static bool top_read(rp_cache *c, rp_msg *m, rp_time now, uint64_t line, int64_t slot)
{
    rp_time lat = c->spec.latency_ps, cyc = c->spec.clk.period_ps;
    bool atomic = m->type == RP_MSG_ATOMIC;
    if (atomic && !c->spec.perform_atomic) {
        /* L1: atomics go to the point of coherence; drop our copy (and
         * do not install a fill that may predate the atomic). */
        if (slot >= 0)
            c->tag[slot] = 0;
        rp_mshr *ms = mshr_find(c, line);
        if (ms)
            ms->noinstall = true;
        c->st_atomics++;
        send_down(c, RP_MSG_ATOMIC, line, m->payload, m, m->acc, m->lane_mask, now + cyc);
        return true;
    }
    if (slot >= 0) {
        uint8_t *d = ldata(c, (uint64_t)slot);
        c->age[slot] = ++c->stamp;
        if (atomic) {
            if (cas_hold(c, m, now, line, d))
                return true;
            c->st_atomics++;
            set_dirty(c, (uint64_t)slot);
            perform_on(c, m, line, d);
            performed_write(c, m, now, line);
        } else {
            c->st_read_hits++;
            if (c->spec.perform_rw)
                perform_on(c, m, line, d);
        }
        respond(c, m, now + lat, d);
        return true;
    }
    rp_mshr *ms = mshr_find(c, line);
    if (ms) {
        if (atomic) {
            if (!m->held_since)
                c->st_atomics++;
        } else {
            c->st_read_misses++;
            c->st_mshr_merges++;
        }
        m->next = NULL;
        ms->wtail->next = m;
        ms->wtail = m;
        return true;
    }
    if (c->mshr_used == c->spec.mshrs) {
        c->st_mshr_stalls++;
        return false;
    }
    uint32_t i = mshr_take(c, line);
    c->mshr[i] = (rp_mshr){line, m, m, true, c->no_allocate};
    m->next = NULL;
    mshr_account(c, now);
    c->mshr_used++;
    c->st_mshr_allocs++;
    if (c->mshr_used > c->st_mshr_peak)
        c->st_mshr_peak = c->mshr_used;
    if (atomic) {
        if (!m->held_since)
            c->st_atomics++;
    } else
        c->st_read_misses++;
    send_down(c, RP_MSG_READ, line, 0, (void *)(uintptr_t)i, NULL, 0, now + cyc);
    return true;
}

/* A write from above: write-back (L2) merges it into the line, write-through
 * (L1) updates its copy and sends it down. */
static bool top_write(rp_cache *c, rp_msg *m, rp_time now, uint64_t line, int64_t slot)
{
    rp_time lat = c->spec.latency_ps, cyc = c->spec.clk.period_ps;
    if (c->spec.write_back) {
        rp_mshr *ms = mshr_find(c, line);
        if (ms) {
            /* applied after the pending fill, in order */
            c->st_write_misses++;
            c->st_mshr_merges++;
            m->next = NULL;
            ms->wtail->next = m;
            ms->wtail = m;
            return true;
        }
        if (slot >= 0) {
            c->st_write_hits++;
            perform_on(c, m, line, ldata(c, (uint64_t)slot));
        } else {
            c->st_write_misses++;
            bool fresh;
            slot = (int64_t)install(c, line, now, &fresh);
            uint8_t *d = ldata(c, (uint64_t)slot);
            /* a store that writes the whole line needs nothing from DRAM */
            if (c->mx && m->acc && !c->mx->perform_line(c->mx->arg, m->acc, m->lane_mask, line, d, c->spec.line, NULL)) {
                rp_fmem_read(c->mx->mem, line, d, c->spec.line);
                perform_on(c, m, line, d); /* stores only copy bytes: applying twice is safe */
            } else if (c->mx && !m->acc)
                rp_fmem_read(c->mx->mem, line, d, c->spec.line);
        }
        c->age[slot] = ++c->stamp;
        set_dirty(c, (uint64_t)slot);
        if (c->held)
            held_kick(c, line, now); /* a held compare-and-swap's value may be here now */
        respond(c, m, now + lat, NULL);
    } else {
        if (slot >= 0) {
            c->st_write_hits++;
            c->age[slot] = ++c->stamp;
            if (c->spec.perform_rw)
                perform_on(c, m, line, ldata(c, (uint64_t)slot));
        } else {
            c->st_write_misses++;
            rp_mshr *ms = mshr_find(c, line);
            if (ms && c->mx && m->acc) {
                /* snapshot for the pending fill (see the top) */
                rp_msg *r = rp_msg_alloc(c->pool);
                uint8_t *b = rp_lbuf_get(c->lbufs, c->spec.line);
                if (!r || !b) {
                    cfail(c, "%s: out of memory for a store record", c->comp.name);
                    return true;
                }
                memset(b + c->spec.line, 0, c->spec.line / 8);
                c->mx->perform_line(c->mx->arg, m->acc, m->lane_mask, line, b, c->spec.line, b + c->spec.line);
                r->type = RP_MSG_WRITE;
                r->ctx = STORE_REC;
                r->data = b;
                ms->wtail->next = r;
                ms->wtail = r;
            }
        }
        send_down(c, RP_MSG_WRITE, line, m->payload, m, m->acc, m->lane_mask, now + cyc);
    }
    return true;
}

/* FLUSH (kernel end): write back every dirty line; acknowledged when the last
 * write-back is. */
static bool top_flush(rp_cache *c, rp_msg *m, rp_time now)
{
    rp_time cyc = c->spec.clk.period_ps;
    uint64_t n = (uint64_t)c->sets * c->spec.assoc, k = 0;
    if (!c->skip_flush)
        for (uint64_t w = 0; w < (n + 4095) / 4096; w++)
            for (uint64_t bits = c->dsum[w]; bits; bits &= bits - 1) {
                /* the groups of 64 lines that may hold a dirty one, in line order */
                uint64_t i0 = (64 * w + (uint64_t)__builtin_ctzll(bits)) * 64, i1 = i0 + 64 < n ? i0 + 64 : n;
                for (uint64_t i = i0; i < i1; i++)
                    if (c->tag[i] && c->dirty[i]) {
                        c->dirty[i] = 0;
                        c->st_writebacks++;
                        wb_data(c, i);
                        send_down(c, RP_MSG_WRITE, c->tag[i] - 1, (uint16_t)c->spec.line, FLUSH_TAG, NULL, 0,
                                  now + cyc * (1 + k++));
                    }
                c->dsum[w] &= ~(1ull << (i0 / 64 % 64));
            }
    c->flush_pending += k;
    if (c->flush_pending == 0)
        respond(c, m, now + cyc, NULL);
    else
        c->flush_req = m;
    return true;
}

/* Handle one request from above. Returns false if it must wait (MSHRs full). */
static bool handle_top(rp_cache *c, rp_msg *m, rp_time now)
{
    uint64_t line = m->addr & ~(uint64_t)(c->spec.line - 1);
    if (c->spec.perform_rw && m->acc && m->acc->kind == RP_ACC_SMEM && c->mx && m->acc->w) {
        /* kernel-start invalidate of the scalar cache (see the top; the
         * L1V gets its CU's INVAL) */
        const void *k = m->acc->w->wg ? (const void *)m->acc->w->wg->k : NULL;
        if (k != c->kernel) {
            if (c->kernel)
                invalidate_all(c);
            c->kernel = k;
        }
    }
    int64_t slot = lookup(c, line);
    if ((m->type == RP_MSG_READ || m->type == RP_MSG_WRITE || m->type == RP_MSG_ATOMIC) &&
        alien(c, line, m->type != RP_MSG_READ)) {
        if (slot >= 0 && !mshr_find(c, line))
            c->tag[slot] = 0; /* a stale copy (written back when its page moved) */
        alien_serve(c, m, now, line);
        return true;
    }
    switch (m->type) {
    case RP_MSG_READ:
    case RP_MSG_ATOMIC:
        return top_read(c, m, now, line, slot);
    case RP_MSG_WRITE:
        return top_write(c, m, now, line, slot);
    case RP_MSG_INVAL:
        invalidate_all(c);
        rp_msg_free(c->pool, m); /* fire-and-forget: ordered before later requests on the link */
        return true;
    case RP_MSG_FLUSH:
        return top_flush(c, m, now);
    default:
        if (c->mx)
            cfail(c, "%s: unexpected message type %u on the top port", c->comp.name, m->type);
        rp_msg_free(c->pool, m);
        return true;
    }
}

/* Apply an L1 store record (bytes under its mask) to line data. */
static void apply_record(rp_cache *c, const uint8_t *b, uint8_t *d)
{
    const uint8_t *bm = b + c->spec.line;
    for (uint32_t i = 0; i < c->spec.line; i += 8) {
        uint8_t mk = bm[i / 8];
        if (mk == 0xff)
            memcpy(d + i, b + i, 8);
        else
            for (uint32_t j = 0; mk; j++, mk >>= 1)
                if (mk & 1)
                    d[i + j] = b[i + j];
    }
}

static void handle_fill(rp_cache *c, rp_msg *d, rp_time now)
{
    rp_time lat = c->spec.latency_ps;
    uint32_t i = (uint32_t)(uintptr_t)d->ctx;
    rp_mshr *ms = &c->mshr[i];
    uint64_t line = ms->line;
    uint8_t *ld, *tmp = NULL;
    bool fresh = true;
    bool anyw = false;
    /* the waiters were queued a memory latency ago: out of the host's caches */
    __builtin_prefetch(ms->waiters);
    for (rp_msg *m = ms->waiters; m && c->mx && c->mx->alien; m = m->next)
        anyw |= m->type != RP_MSG_READ;
    if (alien(c, line, anyw)) { /* its page moved away while the fill was on its way: its waiters go to the authority */
        for (rp_msg *m = ms->waiters, *nx; m; m = nx) {
            nx = m->next;
            m->next = NULL;
            alien_serve(c, m, now, line);
        }
        if (d->data && d->data != WANT_DATA)
            rp_lbuf_put(c->lbufs, d->data);
        d->data = NULL;
        ms->noinstall = true;
        ms->waiters = NULL;
    }
    if (!ms->noinstall) {
        uint64_t slot = install(c, line, now, &fresh);
        c->age[slot] = ++c->stamp;
        ld = ldata(c, slot);
    } else {
        ld = tmp = rp_lbuf_get(c->lbufs, c->spec.line);
        if (!ld) {
            cfail(c, "%s: out of memory for line data", c->comp.name);
            return;
        }
    }
    uint8_t *fd = d->data == WANT_DATA ? NULL : d->data; /* a level below that is no cache keeps the marker */
    d->data = NULL;
    if (fd) {
        if (fresh)
            memcpy(ld, fd, c->spec.line);
        rp_lbuf_put(c->lbufs, fd);
    } else if (fresh && c->mx) {
        if (c->spec.write_back)
            rp_fmem_read(c->mx->mem, line, ld, c->spec.line); /* DRAM is the backing store */
        else {
            c->mx->read_line(c->mx->arg, line, ld, c->spec.line);
            c->st_fill_peeks++;
        }
    } else if (fresh)
        memset(ld, 0, c->spec.line);
    for (rp_msg *m = ms->waiters, *nx; m; m = nx) {
        nx = m->next;
        if (nx)
            __builtin_prefetch(nx);
        m->next = NULL;
        if (m->ctx == STORE_REC && m->type == RP_MSG_WRITE) {
            apply_record(c, m->data, ld);
            rp_lbuf_put(c->lbufs, m->data);
            m->data = NULL;
            rp_msg_free(c->pool, m);
            continue;
        }
        if (m->type == RP_MSG_ATOMIC || m->type == RP_MSG_WRITE) {
            if (m->type == RP_MSG_ATOMIC && c->spec.perform_atomic && cas_hold(c, m, now, line, ld))
                continue;
            if (!ms->noinstall)
                set_dirty(c, (uint64_t)lookup(c, line));
            perform_on(c, m, line, ld);
            if (c->spec.perform_atomic)
                performed_write(c, m, now, line);
        } else if (c->spec.perform_rw)
            perform_on(c, m, line, ld);
        respond(c, m, now + lat, ld);
    }
    rp_lbuf_put(c->lbufs, tmp);
    mshr_release(c, i);
    ms->noinstall = false;
    ms->waiters = ms->wtail = NULL;
    mshr_account(c, now);
    c->mshr_used--;
    if (c->stalled) {
        c->stalled = false;
        rp_time w = c->retry ? now : rp_port_next(&c->top);
        if (w != RP_TIME_MAX) {
            rp_time t = now + c->spec.clk.period_ps, we = rp_clock_edge(c->spec.clk, w);
            cache_sched(c, c->eng, w > t ? we : t, w > t && we == w);
        }
    }
}

static void handle_bottom(rp_cache *c, rp_msg *d, rp_time now)
{
    switch (d->type) {
    case RP_MSG_READ_RSP:
        handle_fill(c, d, now);
        break;
    case RP_MSG_WRITE_ACK:
    case RP_MSG_ATOMIC_RSP:
        if (d->ctx == FLUSH_TAG) {
            if (--c->flush_pending == 0 && c->flush_req) {
                respond(c, c->flush_req, now + c->spec.clk.period_ps, NULL);
                c->flush_req = NULL;
            }
        } else if (d->ctx) {
            respond(c, (rp_msg *)d->ctx, now + c->spec.clk.period_ps, NULL);
        }
        break;
    default:
        if (c->mx)
            cfail(c, "%s: unexpected message type %u on the bottom port", c->comp.name, d->type);
    }
    if (d->data && d->data != WANT_DATA)
        rp_lbuf_put(c->lbufs, d->data);
    d->data = NULL;
    rp_msg_free(c->pool, d);
}

/* Unless ev is pending already: schedule c's next turn, for the earliest of
 * its next work (next_work, from its pipeline's next free cycle) and its next
 * look at held compare-and-swaps. (When nothing was taken this turn,
 * next_free <= now < held_check, so the held check's time is its own.) */
static void cache_next_run(rp_cache *c, rp_event *ev, rp_engine *e)
{
    if (ev->pending)
        return;
    rp_time w = next_work(c, e->now), t = RP_TIME_MAX;
    bool arrival = false;
    if (w != RP_TIME_MAX)
        t = run_at(c, w, &arrival);
    if (c->held && c->held_check) {
        rp_time h = c->held_check > c->next_free ? c->held_check : c->next_free;
        if (h < t) {
            t = h;
            arrival = false;
        }
    }
    if (t != RP_TIME_MAX)
        cache_sched(c, e, t, arrival);
}

static void cache_run(rp_event *ev, rp_engine *e)
{
    rp_cache *c = ev->owner;
    rp_time now = e->now;
    if (c->next_free > now) {
        cache_sched(c, e, c->next_free, false);
        return;
    }
    if (c->held && c->held_check && now >= c->held_check) {
        c->held_check = 0;
        held_kick(c, UINT64_MAX, now); /* the periodic look at held compare-and-swaps */
    }
    rp_msg *m = rp_port_ready(&c->bottom, now) ? rp_port_pop(&c->bottom) : NULL;
    if (m) {
        handle_bottom(c, m, now);
    } else if (!c->stalled && (m = retry_next(c, now))) {
        /* a held compare-and-swap, before new requests (it is older) */
        if (!handle_top(c, m, now)) {
            m->next = c->retry;
            c->retry = m;
            if (!c->retry_tail)
                c->retry_tail = m;
            c->stalled = true;
        }
    } else if (!c->stalled && rp_port_ready(&c->top, now) && (m = rp_port_pop(&c->top))) {
        /* cache.access: whether the request hit or missed, read off the
         * statistics handle_top keeps; only when someone observes it */
        bool observed = e->hooks && e->hooks->n[RP_HOOK_CACHE_ACCESS];
        uint64_t h0 = observed ? c->st_read_hits + c->st_write_hits : 0;
        uint64_t m0 = observed ? c->st_read_misses + c->st_write_misses : 0;
        bool took = handle_top(c, m, now);
        if (took && observed) {
            int hit = c->st_read_hits + c->st_write_hits != h0;
            if (hit || c->st_read_misses + c->st_write_misses != m0)
                RP_HOOK_FIRE(e->hooks, RP_HOOK_CACHE_ACCESS, now, c->gpu, UINT32_MAX, c, &hit, e->hook_sim);
        }
        if (!took) {
            /* Put it back at the head and sleep until a fill frees an MSHR. */
            m->next = c->top.head;
            c->top.head = m;
            if (!c->top.tail)
                c->top.tail = m;
            c->top.n++;
            c->stalled = true;
        }
    } else {
        /* nothing has arrived: sleep until something does (its arrival
         * woke ev, unless ev was pending then: for this run) or the next
         * look at held compare-and-swaps */
        cache_next_run(c, ev, e);
        return;
    }
    e->progress++;
    c->next_free = now + c->spec.clk.period_ps;
    /* (the handling may have woken ev already: cache_arrive) */
    cache_next_run(c, ev, e);
}

static void cache_dump(rp_component *comp, FILE *f)
{
    rp_cache *c = (rp_cache *)comp;
    if (!c->mshr_used && !c->top.n && !c->bottom.n && !c->flush_req && !c->held && !c->retry)
        return;
    unsigned held = 0;
    for (const rp_msg *m = c->held; m; m = m->next)
        held++;
    for (const rp_msg *m = c->retry; m; m = m->next)
        held++;
    fprintf(f, "  %s: mshrs %u/%u busy, stalled=%d, top queue %u, bottom queue %u, flush pending %llu, "
               "compare-and-swaps held %u\n",
            c->comp.name, c->mshr_used, c->spec.mshrs, c->stalled, c->top.n, c->bottom.n,
            (unsigned long long)c->flush_pending, held);
}

int rp_cache_init(rp_cache *c, rp_engine *e, rp_msg_pool *pool, const rp_mem_ctx *mx, const char *name,
                  const rp_cache_spec *spec, rp_route_fn route, void *route_ctx,
                  rp_time fill_latency_ps, uint64_t fill_bytes_per_s, uint32_t header_bytes)
{
    memset(c, 0, sizeof *c);
    c->eng = e;
    c->pool = pool;
    c->mx = mx;
    c->spec = *spec;
    c->sets = (uint32_t)(spec->size / spec->line / spec->assoc);
    while ((1u << c->line_shift) < spec->line)
        c->line_shift++;
    if ((1u << c->line_shift) != spec->line || spec->line < 16)
        return -1; /* line: a power of two >= 16 (config validates it) */
    c->strip_shifts = true;
    for (int i = 0; i < 2; i++) {
        uint64_t st = spec->strip_stride[i], sn = spec->strip_n[i];
        if (sn <= 1)
            continue;
        if (!st || (st & (st - 1)) || (sn & (sn - 1))) {
            c->strip_shifts = false;
            break;
        }
        while ((1ull << c->strip_lo[i]) < st)
            c->strip_lo[i]++;
        while ((1ull << c->strip_hi[i]) < st * sn)
            c->strip_hi[i]++;
    }
    size_t n = (size_t)c->sets * spec->assoc;
    c->tag = calloc(n, sizeof *c->tag);
    c->age = calloc(n, sizeof *c->age);
    c->dirty = calloc(n, 1);
    c->dsum = calloc((n + 4095) / 4096, sizeof *c->dsum);
    c->data = calloc(n, spec->line);
    c->mshr = calloc(spec->mshrs, sizeof *c->mshr);
    c->mshr_free = calloc(spec->mshrs, sizeof *c->mshr_free);
    if (!c->tag || !c->age || !c->dirty || !c->dsum || !c->data || !c->mshr || !c->mshr_free || c->sets == 0 ||
        spec->mshrs > 65535)
        return -1;
    for (uint32_t i = 0; i < spec->mshrs; i++) /* pop order: MSHR 0 first */
        c->mshr_free[i] = spec->mshrs - 1 - i;
    c->mshr_nfree = spec->mshrs;
    c->lbufs = mx && mx->lbufs ? mx->lbufs : &c->own_lbufs;
    c->skip_flush = mx && mx->skip_flush;
    c->route = route;
    c->route_ctx = route_ctx;
    rp_event_init(&c->ev, cache_run, c, RP_PRIO_COMPONENT);
    c->top.owner = c->bottom.owner = c;
    c->top.notify = c->bottom.notify = cache_wake;
    c->top.arrive = c->bottom.arrive = cache_arrive;
    rp_link_init(&c->fill_link, e, &c->bottom, fill_latency_ps, fill_bytes_per_s, header_bytes);
    rp_engine_add_component(e, &c->comp, name, cache_dump);
    return 0;
}

void rp_cache_fini(rp_cache *c)
{
    free(c->tag);
    free(c->age);
    free(c->dirty);
    free(c->data);
    free(c->mshr);
    free(c->mshr_free);
    c->mshr_free = NULL;
    rp_lbufs_fini(&c->own_lbufs);
    c->tag = c->age = NULL;
    c->dirty = c->data = NULL;
    free(c->dsum);
    c->dsum = NULL;
    c->mshr = NULL;
}

uint64_t rp_cache_writeback(rp_cache *c, uint64_t addr, uint64_t n)
{
    if (c->skip_flush || !c->mx)
        return 0;
    uint64_t ways = (uint64_t)c->sets * c->spec.assoc, done = 0, lb = c->spec.line;
    if (n == UINT64_MAX || n / lb >= ways) {
        uint64_t end = n == UINT64_MAX ? UINT64_MAX : addr + n;
        for (uint64_t w = 0; w < (ways + 4095) / 4096; w++)
            for (uint64_t bits = c->dsum[w]; bits; bits &= bits - 1) {
                /* the groups of 64 lines that may hold a dirty one (their
                 * bits stay: lines outside the range may still be dirty) */
                uint64_t i0 = (64 * w + (uint64_t)__builtin_ctzll(bits)) * 64, i1 = i0 + 64 < ways ? i0 + 64 : ways;
                for (uint64_t i = i0; i < i1; i++)
                    if (c->tag[i] && c->dirty[i] && c->tag[i] - 1 + lb > addr && c->tag[i] - 1 < end) {
                        wb_data(c, i);
                        c->dirty[i] = 0;
                        c->st_writebacks++;
                        done++;
                    }
            }
        return done;
    }
    for (uint64_t l = addr & ~(lb - 1); l < addr + n; l += lb) {
        int64_t s = lookup(c, l);
        if (s >= 0 && c->dirty[s]) {
            wb_data(c, (uint64_t)s);
            c->dirty[s] = 0;
            c->st_writebacks++;
            done++;
        }
    }
    return done;
}

void rp_cache_drop(rp_cache *c, uint64_t addr, uint64_t n)
{
    uint64_t lb = c->spec.line;
    for (uint64_t l = addr & ~(lb - 1); l < addr + n; l += lb) {
        int64_t s = lookup(c, l);
        if (s < 0)
            continue;
        if (c->dirty[s] && !c->skip_flush) {
            wb_data(c, (uint64_t)s);
            c->st_writebacks++;
        }
        c->dirty[s] = 0;
        c->tag[s] = 0;
    }
}

void rp_cache_register_stats(rp_cache *c, rp_stats *s)
{
    const char *p = c->comp.name;
    rp_stats_add(s, p, "read_hits", &c->st_read_hits, "count", "reads (loads, fetches) that found their line");
    rp_stats_add(s, p, "read_misses", &c->st_read_misses, "count", "reads that allocated an MSHR and went below");
    rp_stats_add(s, p, "mshr_merges", &c->st_mshr_merges, "count", "reads that joined a pending MSHR for the same line");
    rp_stats_add(s, p, "write_hits", &c->st_write_hits, "count", "writes to a line the cache holds");
    rp_stats_add(s, p, "write_misses", &c->st_write_misses, "count", "writes to a line the cache does not hold");
    rp_stats_add(s, p, "atomics", &c->st_atomics, "count", "atomic requests performed or passed through here");
    if (c->spec.cas_hold_max_ps) {
        rp_stats_add(s, p, "cas_holds", &c->st_cas_holds, "count",
                     "compare-and-swaps held for their recorded turn (sim.cas_hold_max)");
        rp_stats_add(s, p, "cas_hold_ps", &c->st_cas_hold_ps, "ps", "time they were held, summed");
        rp_stats_add(s, p, "cas_give_ups", &c->st_cas_give_ups, "count",
                     "held ones performed after sim.cas_hold_max without their turn");
    }
    rp_stats_add(s, p, "writebacks", &c->st_writebacks, "count", "dirty lines written to the level below (evictions and flushes)");
    rp_stats_add(s, p, "mshr_stalls", &c->st_mshr_stalls, "count", "times the input blocked on a full MSHR file");
    rp_stats_add(s, p, "mshr_allocs", &c->st_mshr_allocs, "count", "MSHRs allocated");
    rp_stats_add(s, p, "mshr_busy_ps", &c->st_mshr_busy_ps, "mshr*ps", "sum over time of busy MSHRs (occupancy integral)");
    rp_stats_add(s, p, "mshr_peak", &c->st_mshr_peak, "mshrs", "most MSHRs busy at once");
    rp_stats_add(s, p, "fill_peeks", &c->st_fill_peeks, "count", "L1 fills served by reading the line at the point of coherence (no data in the response)");
    if (c->spec.write_back && c->mx && c->mx->alien)
        rp_stats_add(s, p, "alien_requests", &c->st_alien, "count",
                     "requests that reached this bank after their unified-memory page moved away, served on the "
                     "serving GPU's data");
    rp_stats_add(s, p, "invalidations", &c->st_invalidations, "count", "whole-cache invalidations (new kernel, buffer_wbinvl1)");
}
