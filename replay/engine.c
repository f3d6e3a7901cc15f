/*
 * engine.c - the discrete-event engine: a 4-ary min-heap of embedded events
 * keyed by (time, priority, insertion sequence), message pool, links.
 *
 * Invariants: every pending event has exactly one live heap entry (same seq,
 * pending=1); cancelled or rescheduled events leave stale entries, skipped
 * when popped (lazy deletion: sifting never touches events); e->n counts
 * pending events; e->now never decreases; a link's FIFO is ordered by
 * arrival time (see rp_link_send) and its event is pending iff the FIFO is
 * non-empty.
 */
#include "rp_engine.h"

#include <stdlib.h>
#include <string.h>

void rp_event_init(rp_event *ev, rp_handler fn, void *owner, enum rp_prio prio)
{
    memset(ev, 0, sizeof *ev);
    ev->fn = fn;
    ev->owner = owner;
    ev->prio = (uint8_t)prio;
}

int rp_engine_init(rp_engine *e)
{
    memset(e, 0, sizeof *e);
    e->cap = 1024;
    e->heap = malloc(e->cap * sizeof *e->heap);
    e->comps_tail = &e->comps;
    return e->heap ? 0 : -1;
}

void rp_engine_fini(rp_engine *e)
{
    free(e->heap);
    e->heap = NULL;
    e->n = e->hn = e->cap = 0;
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
    if (heap_push(e, ev))
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

bool rp_engine_step(rp_engine *e)
{
    while (e->hn) {
        rp_hent top = e->heap[0];
        if (!ent_live(&top)) {
            heap_pop(e);
            continue;
        }
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
    return false;
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
        rp_msg *c = malloc(MSG_CHUNK * sizeof *c);
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

static void link_deliver(rp_event *ev, rp_engine *e)
{
    rp_link *l = ev->owner;
    /* Deliver every message due now; notify each destination port once per
     * batch in FIFO order (a port notified twice is harmless: owners wake). */
    while (l->head && l->head->arrive <= e->now) {
        rp_msg *m = l->head;
        l->head = m->next;
        if (!l->head)
            l->tail = NULL;
        rp_port *p = m->dst ? m->dst : l->dst;
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

void rp_link_init(rp_link *l, rp_engine *e, rp_port *dst, rp_time latency_ps,
                  uint64_t bytes_per_s, uint32_t header_bytes)
{
    memset(l, 0, sizeof *l);
    rp_event_init(&l->ev, link_deliver, l, RP_PRIO_DELIVER);
    l->eng = e;
    l->dst = dst;
    l->latency_ps = latency_ps;
    l->bytes_per_s = bytes_per_s;
    l->header_bytes = header_bytes;
}

void rp_link_send(rp_link *l, rp_msg *m, rp_time ready)
{
    rp_engine *e = l->eng;
    if (ready < e->now)
        ready = e->now;
    uint64_t bytes = (uint64_t)m->payload + l->header_bytes;
    rp_time start = ready > l->busy_until ? ready : l->busy_until;
    rp_time ser = 0;
    if (l->bytes_per_s)
        ser = (rp_time)((bytes * 1000000000000ull + l->bytes_per_s - 1) / l->bytes_per_s);
    l->busy_until = start + ser;
    m->arrive = l->busy_until + l->latency_ps;
    m->next = NULL;
    l->st_msgs++;
    l->st_bytes += bytes;
    if (l->tail)
        l->tail->next = m;
    else
        l->head = m;
    l->tail = m;
    if (!l->ev.pending)
        rp_engine_schedule(e, &l->ev, l->head->arrive);
}
