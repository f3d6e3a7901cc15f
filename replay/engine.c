/*
 * engine.c - the discrete-event engine: embedded events keyed by (time,
 * priority, insertion sequence) in a near-future ring (events due within
 * RP_RING_PS ps of now, most of them) and a 4-ary min-heap (the rest);
 * message pool, links.
 *
 * Invariants: every pending event has exactly one live entry (same seq,
 * pending=1), in the ring if it was due less than RP_RING_PS after the `now`
 * at which it was scheduled, else in the heap; cancelled or rescheduled
 * events leave stale entries, skipped when popped (lazy deletion: sifting
 * never touches events); every ring entry's time is >= now; e->n counts
 * pending events; e->now never decreases; a link's FIFO is ordered by
 * arrival time (see rp_link_send) and its event is pending iff the FIFO is
 * non-empty.
 */
#include "rp_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rp_event_init(rp_event *ev, rp_handler fn, void *owner, enum rp_prio prio)
{
    memset(ev, 0, sizeof *ev);
    ev->fn = fn;
    ev->owner = owner;
    ev->prio = (uint8_t)prio;
}

#define RNONE UINT32_MAX
#define NPRIO 3
_Static_assert(RP_RING_SUMW >= 1 && RP_RING_SUMW * 64 * 64 == RP_RING_PS,
               "ring_first_slot: a whole number of summary words over the bitmap words");

/* Grow the ring entry pool (doubling) and put the new entries on the free list. */
static int ring_grow(rp_engine *e)
{
    uint32_t ncap = e->rcap ? 2 * e->rcap : 4096;
    rp_rent *r = realloc(e->rent, (size_t)ncap * sizeof *r);
    if (!r) {
        snprintf(e->err, sizeof e->err, "engine: out of memory growing the event ring");
        return -1;
    }
    for (uint32_t i = e->rcap; i < ncap; i++)
        r[i].next = i + 1 < ncap ? i + 1 : e->rfree;
    e->rfree = e->rcap;
    e->rent = r;
    e->rcap = ncap;
    return 0;
}

int rp_engine_init(rp_engine *e)
{
    memset(e, 0, sizeof *e);
    e->cap = 1024;
    e->heap = malloc(e->cap * sizeof *e->heap);
    e->comps_tail = &e->comps;
    e->rfree = RNONE;
    e->rq = malloc((size_t)RP_RING_PS * NPRIO * sizeof *e->rq);
    if (!e->heap || !e->rq || ring_grow(e))
        return -1;
    memset(e->rq, 0xff, (size_t)RP_RING_PS * NPRIO * sizeof *e->rq);
    return 0;
}

void rp_engine_fini(rp_engine *e)
{
    free(e->heap);
    free(e->rent);
    free(e->rq);
    e->heap = NULL;
    e->rent = NULL;
    e->rq = NULL;
    e->n = e->hn = e->cap = 0;
    e->rcap = 0;
}

void rp_engine_add_component(rp_engine *e, rp_component *c, const char *name,
                             void (*dump)(rp_component *, FILE *))
{
    snprintf(c->name, sizeof c->name, "%s", name);
    c->dump = dump;
    c->next = NULL;
    *e->comps_tail = c;
    e->comps_tail = &c->next;
}

#define SEQ_BITS 56
#define SEQ_MASK ((1ull << SEQ_BITS) - 1)

static inline bool ent_less(const rp_hent *a, const rp_hent *b)
{
    return a->time < b->time || (a->time == b->time && a->key < b->key);
}

/* Move entry x up from hole i. */
static void sift_up(rp_hent *h, size_t i, rp_hent x)
{
    while (i > 0) {
        size_t p = (i - 1) / 4;
        if (!ent_less(&x, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = x;
}

/* Move entry x down from hole i in a heap of n entries. */
static void sift_down(rp_hent *h, size_t n, size_t i, rp_hent x)
{
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n)
            break;
        size_t m = c, end = c + 4 < n ? c + 4 : n;
        for (size_t j = c + 1; j < end; j++)
            if (ent_less(&h[j], &h[m]))
                m = j;
        if (!ent_less(&h[m], &x))
            break;
        h[i] = h[m];
        i = m;
    }
    h[i] = x;
}

/* Push an entry for ev (time and seq already set). */
static int heap_push(rp_engine *e, rp_event *ev)
{
    if (e->root_free) {
        /* The root holds the entry being handled: replace it (one sift down
         * instead of a pop and a push; new events are near the minimum). */
        rp_hent x = {ev->time, (uint64_t)ev->prio << SEQ_BITS | ev->seq, ev};
        e->root_free = 0;
        sift_down(e->heap, e->hn, 0, x);
        return 0;
    }
    if (e->hn == e->cap) {
        rp_hent *h = realloc(e->heap, 2 * e->cap * sizeof *h);
        if (!h) {
            snprintf(e->err, sizeof e->err, "engine: out of memory growing the event heap");
            return -1;
        }
        e->heap = h;
        e->cap *= 2;
    }
    rp_hent x = {ev->time, (uint64_t)ev->prio << SEQ_BITS | ev->seq, ev};
    sift_up(e->heap, e->hn++, x);
    return 0;
}

/* An entry is live iff its event is pending under the same insertion number;
 * cancelled or moved events leave stale entries that pops discard. */
static inline bool ent_live(const rp_hent *x)
{
    return x->ev->pending && x->ev->seq == (x->key & SEQ_MASK);
}

static void heap_pop(rp_engine *e)
{
    rp_hent last = e->heap[--e->hn];
    if (e->hn)
        sift_down(e->heap, e->hn, 0, last);
}

/* ---- near-future ring ------------------------------------------------------
 * Slot = time mod RP_RING_PS (ps); every ring entry's time lies in
 * [now, now + RP_RING_PS), so a slot holds one time value and the cyclic
 * order of slots from now is time order. Per (slot, priority) a FIFO in
 * insertion (seq) order, so the ring's first entry is its (time, prio, seq)
 * minimum; step compares it with the heap's top. Stale entries (cancelled or
 * moved events) are skipped when reached, as in the heap. */

static int ring_push(rp_engine *e, rp_event *ev)
{
    if (e->rfree == RNONE && ring_grow(e))
        return -1;
    uint32_t i = e->rfree;
    e->rfree = e->rent[i].next;
    e->rent[i] = (rp_rent){ev, ev->seq, RNONE};
    uint32_t slot = (uint32_t)(ev->time & (RP_RING_PS - 1)), q = slot * NPRIO + ev->prio;
    uint32_t wi = slot >> 6;
    uint64_t bit = 1ull << (slot & 63);
    /* A slot whose bit is clear has all its FIFOs empty (ring_pop): its
     * FIFO is then written without being read, so that a slot the host has
     * not touched for a while costs no wait for its cache line (the FIFO
     * array is 384 KiB; rq[q].tail was the slowest load of the replay). */
    if (e->rfirst_ok && (e->rfirst < 0 || ((slot - e->now) & (RP_RING_PS - 1)) <
                                              (((uint32_t)e->rfirst - e->now) & (RP_RING_PS - 1))))
        e->rfirst = slot; /* earlier than the first slot known */
    if (!(e->rbits[wi] & bit) || e->rq[q].tail == RNONE)
        e->rq[q].head = i;
    else
        e->rent[e->rq[q].tail].next = i;
    e->rq[q].tail = i;
    if (!e->rbits[wi]) {
        e->rsum[wi >> 6] |= 1ull << (wi & 63);
        e->rwords++;
    }
    e->rbits[wi] |= bit;
    return 0;
}

/* First non-empty bitmap word at or after word `from` (not cyclically); -1 when none. */
static inline int64_t ring_word_from(const rp_engine *e, uint32_t from)
{
    for (uint32_t si = from >> 6; si < RP_RING_SUMW; si++) {
        uint64_t m = e->rsum[si];
        if (si == from >> 6)
            m &= ~0ull << (from & 63);
        if (m)
            return (int64_t)(si * 64 + (uint32_t)__builtin_ctzll(m));
    }
    return -1;
}

/* First non-empty slot at or after now (cyclically); -1 when the ring is empty. */
static inline int64_t ring_scan_first(const rp_engine *e)
{
    if (!e->rwords)
        return -1;
    uint32_t p = (uint32_t)(e->now & (RP_RING_PS - 1)), wi = p >> 6, b = p & 63;
    uint64_t w = e->rbits[wi] & (~0ull << b);
    if (w)
        return (int64_t)(wi * 64 + (uint32_t)__builtin_ctzll(w));
    int64_t wj = wi + 1 < RP_RING_WORDS ? ring_word_from(e, wi + 1) : -1;
    if (wj < 0)
        wj = ring_word_from(e, 0); /* wrapped: at most wi, whose low bits are then the first */
    if ((uint32_t)wj != wi)
        return wj * 64 + (uint32_t)__builtin_ctzll(e->rbits[wj]);
    w = e->rbits[wi] & ((1ull << b) - 1);
    return (int64_t)(wi * 64 + (uint32_t)__builtin_ctzll(w)); /* w != 0: word wi is non-empty */
}

/* ring_scan_first, kept between steps (e->rfirst): ring_push moves it to an
 * earlier slot, and a pop that empties it forgets it (pops take the first
 * slot only), so a step scans the bitmap once instead of twice (the
 * prefetch of the next event scanned it again). */
static inline int64_t ring_first_slot(rp_engine *e)
{
    if (!e->rfirst_ok) {
        e->rfirst = ring_scan_first(e);
        e->rfirst_ok = 1;
    }
    return e->rfirst;
}

/* Remove the head entry of FIFO q (slot*NPRIO+prio). */
static inline void ring_pop(rp_engine *e, uint32_t slot, uint32_t q)
{
    uint32_t i = e->rq[q].head;
    e->rq[q].head = e->rent[i].next;
    if (e->rq[q].head == RNONE) {
        e->rq[q].tail = RNONE;
        const rp_rq *h = &e->rq[slot * NPRIO];
        if (h[0].head == RNONE && h[1].head == RNONE && h[2].head == RNONE) {
            uint32_t wi = slot >> 6;
            e->rfirst_ok = 0; /* (the slot was the first) */
            e->rbits[wi] &= ~(1ull << (slot & 63));
            if (!e->rbits[wi]) {
                e->rsum[wi >> 6] &= ~(1ull << (wi & 63));
                e->rwords--;
            }
        }
    }
    e->rent[i].next = e->rfree;
    e->rfree = i;
}

/* The first non-empty FIFO (slot*NPRIO+prio) of a slot whose bit is set. */
static inline uint32_t slot_first_q(const rp_engine *e, uint32_t sl)
{
    uint32_t q = sl * NPRIO;
    while (e->rq[q].head == RNONE)
        q++;
    return q;
}

int rp_engine_schedule(rp_engine *e, rp_event *ev, rp_time t)
{
    if (t < e->now) {
        snprintf(e->err, sizeof e->err,
                 "engine: event scheduled into the past (t=%llu ps < now=%llu ps)",
                 (unsigned long long)t, (unsigned long long)e->now);
        return -1;
    }
    if (ev->pending) {
        snprintf(e->err, sizeof e->err, "engine: event already pending at t=%llu ps",
                 (unsigned long long)ev->time);
        return -1;
    }
    ev->time = t;
    ev->seq = e->seq++ & SEQ_MASK;
    if (t - e->now < RP_RING_PS && ev->prio < NPRIO ? ring_push(e, ev) : heap_push(e, ev))
        return -1;
    ev->pending = 1;
    e->n++;
    return 0;
}

void rp_engine_cancel(rp_engine *e, rp_event *ev)
{
    if (ev->pending) {
        ev->pending = 0; /* its heap entry is now stale */
        e->n--;
    }
}

void rp_engine_wake(rp_engine *e, rp_event *ev, rp_time t)
{
    if (t < e->now)
        t = e->now;
    if (ev->pending) {
        if (ev->time <= t)
            return;
        rp_engine_cancel(e, ev);
    }
    rp_engine_schedule(e, ev, t); /* cannot fail: t >= now, not pending */
}

bool rp_engine_step(rp_engine *e) { return rp_engine_step_before(e, RP_TIME_MAX); }

rp_time rp_engine_next_time(rp_engine *e)
{
    if (e->root_free) { /* called from a handler: drop the running event's spent root first */
        e->root_free = 0;
        heap_pop(e);
    }
    for (;;) {
        while (e->hn && !ent_live(&e->heap[0]))
            heap_pop(e);
        rp_time t = e->hn ? e->heap[0].time : RP_TIME_MAX;
        int64_t slot = ring_first_slot(e);
        if (slot < 0)
            return t;
        uint32_t sl = (uint32_t)slot, q = slot_first_q(e, sl);
        const rp_rent *r = &e->rent[e->rq[q].head];
        if (!r->ev->pending || r->ev->seq != r->seq) {
            ring_pop(e, sl, q); /* stale */
            continue;
        }
        return r->ev->time < t ? r->ev->time : t;
    }
}

void rp_engine_advance(rp_engine *e, rp_time t)
{
    if (t > e->now) {
        e->now = t;
        /* stale entries may lie before t: the first slot is scanned again
         * from t, as ring_first_slot's cyclic order starts at now */
        e->rfirst_ok = 0;
    }
}

/* Prefetch the event of the ring's first live-looking entry (after the one
 * being handled was popped and now set): most events are handled in a
 * different slot than the one before, and the event struct was the miss
 * that made up half of a step's time. */
static inline void ring_prefetch_next(rp_engine *e)
{
    int64_t slot = ring_first_slot(e);
    if (slot < 0)
        return;
    uint32_t q = slot_first_q(e, (uint32_t)slot);
    __builtin_prefetch(e->rent[e->rq[q].head].ev);
}

/* One event before limit (rp_engine_step_before); inlined into the
 * run loop below, so that a window's events cost no call each. */
static inline __attribute__((always_inline)) bool step_one(rp_engine *e, rp_time limit)
{
    for (;;) {
        /* The heap's top is checked for staleness only when it would be
         * taken (below): a ring entry earlier than it is earlier than every
         * heap entry, live or not, and its event is not touched. */
        int64_t slot = ring_first_slot(e);
        if (slot >= 0) {
            uint32_t sl = (uint32_t)slot, q = slot_first_q(e, sl);
            const rp_rent *r = &e->rent[e->rq[q].head];
            rp_event *ev = r->ev;
            if (!ev->pending || ev->seq != r->seq) {
                ring_pop(e, sl, q); /* stale */
                continue;
            }
            rp_time t = ev->time; /* live: the time it was scheduled for, slot sl */
            uint64_t key = (uint64_t)(q - sl * NPRIO) << SEQ_BITS | r->seq;
            if (!e->hn || t < e->heap[0].time || (t == e->heap[0].time && key < e->heap[0].key)) {
                if (t >= limit)
                    return false;
                ring_pop(e, sl, q);
                ev->pending = 0;
                e->n--;
                e->now = t;
                e->n_events++;
                /* fetch the next event while this one is handled */
                ring_prefetch_next(e);
                ev->fn(ev, e);
                return true;
            }
        }
        if (!e->hn || e->heap[0].time >= limit)
            return false;
        if (!ent_live(&e->heap[0])) {
            heap_pop(e); /* stale */
            continue;
        }
        rp_hent top = e->heap[0];
        rp_event *ev = top.ev;
        ev->pending = 0;
        e->n--;
        e->now = ev->time;
        e->n_events++;
        e->root_free = 1; /* the first event scheduled by the handler takes the root */
        ev->fn(ev, e);
        if (e->root_free) {
            e->root_free = 0;
            heap_pop(e);
        }
        return true;
    }
}

bool rp_engine_step_before(rp_engine *e, rp_time limit) { return step_one(e, limit); }

uint64_t rp_engine_run_before(rp_engine *e, rp_time limit, const int *stop)
{
    uint64_t n = 0;
    while (step_one(e, limit))
        if (!(++n & 1023) && stop && __atomic_load_n(stop, __ATOMIC_RELAXED))
            break;
    return n;
}

void rp_engine_dump(rp_engine *e, FILE *f)
{
    fprintf(f, "engine: now=%llu ps, %zu pending events, %llu handled\n",
            (unsigned long long)e->now, e->n, (unsigned long long)e->n_events);
    for (rp_component *c = e->comps; c; c = c->next)
        if (c->dump)
            c->dump(c, f);
}

int rp_engine_run(rp_engine *e, bool (*done)(void *), void *arg, FILE *dump)
{
    uint64_t last_progress = e->progress;
    rp_time last_progress_t = e->now;
    while (!done(arg)) {
        if (!rp_engine_step(e)) {
            snprintf(e->err, sizeof e->err,
                     "watchdog: deadlock at t=%llu ps: no events pending but work remains "
                     "(component states dumped)",
                     (unsigned long long)e->now);
            if (dump)
                rp_engine_dump(e, dump);
            return -1;
        }
        if (e->progress != last_progress) {
            last_progress = e->progress;
            last_progress_t = e->now;
        } else if (e->watchdog_ps && e->now - last_progress_t > e->watchdog_ps) {
            snprintf(e->err, sizeof e->err,
                     "watchdog: no progress for %llu ps (t=%llu ps; component states dumped)",
                     (unsigned long long)(e->now - last_progress_t), (unsigned long long)e->now);
            if (dump)
                rp_engine_dump(e, dump);
            return -1;
        }
    }
    return 0;
}

/* ---- messages ------------------------------------------------------------ */

#define MSG_CHUNK 4096

rp_msg *rp_msg_alloc(rp_msg_pool *p)
{
    if (!p->free) {
        rp_msg *c = aligned_alloc(_Alignof(rp_msg), MSG_CHUNK * sizeof *c);
        void **ch = realloc(p->chunks, (p->n_chunks + 1) * sizeof *ch);
        if (!c || !ch) {
            free(c);
            if (ch)
                p->chunks = ch;
            return NULL;
        }
        p->chunks = ch;
        p->chunks[p->n_chunks++] = c;
        for (size_t i = 0; i < MSG_CHUNK; i++) {
            c[i].next = p->free;
            p->free = &c[i];
        }
    }
    rp_msg *m = p->free;
    p->free = m->next;
    memset(m, 0, sizeof *m);
    p->live++;
    return m;
}

void rp_msg_free(rp_msg_pool *p, rp_msg *m)
{
    m->next = p->free;
    p->free = m;
    p->live--;
}

void rp_msg_pool_fini(rp_msg_pool *p)
{
    for (size_t i = 0; i < p->n_chunks; i++)
        free(p->chunks[i]);
    free(p->chunks);
    memset(p, 0, sizeof *p);
}

/* ---- links --------------------------------------------------------------- */

_Thread_local uint32_t rp_link_fan_slot = UINT32_MAX;

/* Deliver every message of l due now; notify each destination port once per
 * batch in FIFO order (a port notified twice is harmless: owners wake).
 * own: always into l->dst (a fan-in's arbiter), whatever the message names. */
static inline void deliver(rp_link *l, rp_engine *e, bool own)
{
    while (l->head && l->head->arrive <= e->now) {
        rp_msg *m = l->head;
        l->head = m->next;
        if (!l->head)
            l->tail = NULL;
        else
            __builtin_prefetch(l->head);
        rp_port *p = m->dst && !own ? m->dst : l->dst;
        /* the receiver serves it at its next clock edge: the requester's
         * access it will perform (rp_perform_line) was a miss there */
        if (m->acc)
            __builtin_prefetch(m->acc);
        m->next = NULL;
        if (p->tail)
            p->tail->next = m;
        else
            p->head = m;
        p->tail = m;
        p->n++;
        if (p->notify)
            p->notify(p, e);
    }
    if (l->head)
        rp_engine_schedule(e, &l->ev, l->head->arrive);
}

static void link_deliver(rp_event *ev, rp_engine *e) { deliver(ev->owner, e, false); }
static void fan_deliver(rp_event *ev, rp_engine *e) { deliver(ev->owner, e, true); }

static void link_send(rp_link *l, rp_msg *m, rp_time ready);

rp_fan *rp_link_fan(rp_link *l, uint32_t n)
{
    rp_fan *f = calloc(1, sizeof *f + (size_t)n * sizeof *f->in);
    if (!f)
        return NULL;
    f->n = n;
    f->arb.owner = l;
    f->arb.notify = rp_port_forward;
    for (uint32_t i = 0; i < n; i++) {
        rp_link_init(&f->in[i], l->eng, &f->arb, l->latency_ps, 0, 0);
        rp_event_init(&f->in[i].ev, fan_deliver, &f->in[i], RP_PRIO_DELIVER);
    }
    l->latency_ps = 0;
    l->fan = f;
    return f;
}

void rp_link_init(rp_link *l, rp_engine *e, rp_port *dst, rp_time latency_ps,
                  uint64_t bytes_per_s, uint32_t header_bytes)
{
    memset(l, 0, sizeof *l);
    rp_event_init(&l->ev, link_deliver, l, RP_PRIO_DELIVER);
    l->eng = l->src_eng = e;
    l->dst = dst;
    l->latency_ps = latency_ps;
    l->bytes_per_s = bytes_per_s;
    l->header_bytes = header_bytes;
}

void rp_link_unordered(rp_link *l)
{
    if (l->bytes_per_s || l->fan || !l->dst || !l->dst->arrive) {
        /* a wiring error, not bad input */
        fprintf(stderr, "mgpu-replay: internal error: only a link without bandwidth into a pull port may be unordered\n");
        abort();
    }
    l->unordered = 1;
}

void rp_port_forward(rp_port *p, rp_engine *e)
{
    rp_link *l = p->owner;
    rp_msg *m;
    while ((m = rp_port_pop(p)))
        link_send(l, m, e->now); /* on l itself, never its fan-in (l may be one's output) */
}

void rp_link_cross(rp_link *l, rp_engine *src_eng, rp_xq *q)
{
    l->src_eng = src_eng;
    l->xq = q;
}

/* Sender side of a link crossing partitions: queue (l, m) for the receiver. */
static void xq_push(rp_xq *q, rp_link *l, rp_msg *m)
{
    rp_xbuf *x = rp_xq_buf(q, q->w);
    if (x->n == x->cap) {
        size_t nc = x->cap ? 2 * x->cap : 256;
        rp_xent *b = realloc(x->buf, nc * sizeof *b);
        if (!b) {
            q->oom = 1;
            if (q->written)
                q->written->oom = 1;
            return;
        }
        x->buf = b;
        x->cap = nc;
    }
    if (x->n == 0 && q->written && rp_xq_list_push(q->written, q)) {
        q->oom = 1; /* the push set written->oom */
        return;
    }
    if (x->n == 0 || m->arrive < x->min_arrive)
        x->min_arrive = m->arrive;
    x->buf[x->n++] = (rp_xent){l, m};
}

/* Hand m to pull port p in arrival order (after every message that
 * arrives no later than it). */
static void port_insert(rp_port *p, rp_msg *m)
{
    m->next = NULL;
    p->n++;
    if (!p->tail || p->tail->arrive <= m->arrive) {
        if (p->tail)
            p->tail->next = m;
        else
            p->head = m;
        p->tail = m;
        return;
    }
    rp_msg **pp = &p->head; /* before the tail: it stays the tail */
    while ((*pp)->arrive <= m->arrive)
        pp = &(*pp)->next;
    m->next = *pp;
    *pp = m;
}

static void link_append(rp_link *l, rp_msg *m)
{
    rp_port *p = m->dst && l->ev.fn != fan_deliver ? m->dst : l->dst;
    if (p->arrive) {
        port_insert(p, m);
        p->arrive(p, l->eng, m->arrive);
        return;
    }
    rp_msg_append(&l->head, &l->tail, m);
    if (!l->ev.pending)
        rp_engine_schedule(l->eng, &l->ev, l->head->arrive);
}

void rp_xq_drain(rp_xq *q)
{
    rp_xbuf *x = rp_xq_buf(q, q->w ^ 1);
    for (size_t i = 0; i < x->n; i++)
        link_append(x->buf[i].l, x->buf[i].m);
    x->n = 0;
    x->min_arrive = RP_TIME_MAX;
}

void rp_xq_flip(rp_xq *q)
{
    q->w ^= 1;
    rp_xbuf *x = rp_xq_buf(q, q->w);
    x->n = 0;
    x->min_arrive = RP_TIME_MAX;
}

int rp_xq_list_push(rp_xq_list *l, rp_xq *q)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 8;
        rp_xq **v = realloc(l->v, nc * sizeof *v);
        if (!v) {
            l->oom = 1;
            return -1;
        }
        l->v = v;
        l->cap = nc;
    }
    l->v[l->n++] = q;
    return 0;
}

void rp_xq_list_fini(rp_xq_list *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

void rp_xq_fini(rp_xq *q)
{
    free(q->b0.buf);
    free(q->b1.buf);
    memset(q, 0, sizeof *q);
}

void rp_link_send(rp_link *l, rp_msg *m, rp_time ready)
{
    if (l->fan) {
        uint32_t k = rp_link_fan_slot;
        if (k >= l->fan->n) {
            /* a wiring error, not bad input: parallel.c gives every sender of a fan-in its slot */
            fprintf(stderr, "mgpu-replay: internal error: a sender without a slot (%u) sent on a fan-in link of %u\n",
                    k, l->fan->n);
            abort();
        }
        l = &l->fan->in[k];
    }
    link_send(l, m, ready);
}

static void link_send(rp_link *l, rp_msg *m, rp_time ready)
{
    rp_engine *e = l->src_eng;
    if (ready < e->now)
        ready = e->now;
    uint64_t bytes = (uint64_t)m->payload + l->header_bytes;
    if (l->unordered) {
        m->arrive = ready + l->latency_ps;
    } else {
        rp_time start = ready > l->busy_until ? ready : l->busy_until;
        rp_time ser = 0;
        if (l->bytes_per_s)
            ser = (rp_time)((bytes * 1000000000000ull + l->bytes_per_s - 1) / l->bytes_per_s);
        l->busy_until = start + ser;
        m->arrive = l->busy_until + l->latency_ps;
    }
    m->next = NULL;
    l->st_msgs++;
    l->st_bytes += bytes;
    RP_HOOK_FIRE(e->hooks, RP_HOOK_LINK_SEND, e->now, UINT32_MAX, UINT32_MAX, l, m, e->hook_sim);
    if (l->xq)
        xq_push(l->xq, l, m);
    else
        link_append(l, m);
}
