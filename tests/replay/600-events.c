/* 600-events: the event engine orders by (time, priority, insertion order),
 * refuses scheduling into the past and double scheduling, and links deliver
 * with latency + serialisation at their bandwidth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "replay/rp_engine.h"

typedef struct rec {
    rp_event ev;
    int id;
    int *log;
    int *n;
} rec;

static void h(rp_event *ev, rp_engine *e)
{
    rec *r = ev->owner;
    (void)e;
    r->log[(*r->n)++] = r->id;
}

static void test_order(void **state)
{
    (void)state;
    rp_engine e;
    assert_int_equal(rp_engine_init(&e), 0);
    int log[16], n = 0;
    rec r[6];
    /* id: time, prio */
    struct { rp_time t; enum rp_prio p; } spec[6] = {
        {300, RP_PRIO_COMPONENT}, {100, RP_PRIO_HOST}, {100, RP_PRIO_COMPONENT},
        {100, RP_PRIO_DELIVER},   {100, RP_PRIO_COMPONENT}, {0, RP_PRIO_HOST}};
    for (int i = 0; i < 6; i++) {
        rp_event_init(&r[i].ev, h, &r[i], spec[i].p);
        r[i].id = i;
        r[i].log = log;
        r[i].n = &n;
        assert_int_equal(rp_engine_schedule(&e, &r[i].ev, spec[i].t), 0);
    }
    while (rp_engine_step(&e))
        ;
    /* t=0: 5; t=100: DELIVER 3, COMPONENT 2 then 4 (insertion), HOST 1; t=300: 0 */
    int want[6] = {5, 3, 2, 4, 1, 0};
    assert_int_equal(n, 6);
    for (int i = 0; i < 6; i++)
        assert_int_equal(log[i], want[i]);
    assert_int_equal(e.now, 300);
    rp_engine_fini(&e);
}

static void test_past_refused(void **state)
{
    (void)state;
    rp_engine e;
    rp_engine_init(&e);
    int log[4], n = 0;
    rec a = {.id = 1, .log = log, .n = &n}, b = {.id = 2, .log = log, .n = &n};
    rp_event_init(&a.ev, h, &a, RP_PRIO_COMPONENT);
    rp_event_init(&b.ev, h, &b, RP_PRIO_COMPONENT);
    assert_int_equal(rp_engine_schedule(&e, &a.ev, 1000), 0);
    assert_int_equal(rp_engine_schedule(&e, &a.ev, 2000), -1); /* already pending */
    assert_true(rp_engine_step(&e));
    assert_int_equal(rp_engine_schedule(&e, &b.ev, 999), -1);  /* into the past */
    assert_non_null(strstr(e.err, "past"));
    assert_int_equal(rp_engine_schedule(&e, &b.ev, 1000), 0);  /* now is fine */
    assert_true(rp_engine_step(&e));
    assert_false(rp_engine_step(&e));
    assert_int_equal(n, 2);
    rp_engine_fini(&e);
}

static void test_cancel_and_wake(void **state)
{
    (void)state;
    rp_engine e;
    rp_engine_init(&e);
    int log[8], n = 0;
    rec r[3];
    for (int i = 0; i < 3; i++) {
        r[i] = (rec){.id = i, .log = log, .n = &n};
        rp_event_init(&r[i].ev, h, &r[i], RP_PRIO_COMPONENT);
        rp_engine_schedule(&e, &r[i].ev, 100 * (rp_time)(i + 1));
    }
    rp_engine_cancel(&e, &r[1].ev);
    rp_engine_wake(&e, &r[2].ev, 50);  /* moves earlier */
    rp_engine_wake(&e, &r[0].ev, 500); /* already earlier: stays */
    while (rp_engine_step(&e))
        ;
    assert_int_equal(n, 2);
    assert_int_equal(log[0], 2);
    assert_int_equal(log[1], 0);
    rp_engine_fini(&e);
}

static int delivered;
static rp_time delivered_at[4];
static void port_note(rp_port *p, rp_engine *e)
{
    rp_msg *m;
    while ((m = rp_port_pop(p)))
        delivered_at[delivered++] = e->now;
}

static void test_link_bandwidth(void **state)
{
    (void)state;
    rp_engine e;
    rp_engine_init(&e);
    rp_msg_pool pool = {0};
    rp_port dst = {.notify = port_note};
    rp_link l;
    /* 64 B/ns = 64 GB/s, latency 10 ns, 0-byte header */
    rp_link_init(&l, &e, &dst, 10000, 64000000000ull, 0);
    for (int i = 0; i < 3; i++) {
        rp_msg *m = rp_msg_alloc(&pool);
        m->payload = 64;
        rp_link_send(&l, m, 0);
    }
    while (rp_engine_step(&e))
        ;
    assert_int_equal(delivered, 3);
    assert_int_equal(delivered_at[0], 11000); /* 1 ns on the wire + 10 ns */
    assert_int_equal(delivered_at[1], 12000);
    assert_int_equal(delivered_at[2], 13000);
    rp_msg_pool_fini(&pool);
    rp_engine_fini(&e);
}

/* The arbiter of a cut NoC input (rp_port_forward): two senders' latency
 * links into it and one bandwidth link out give the arrival times of one
 * shared link with both (sim.gpu_partitions, replay/sim.c). Sends: A at 0,
 * 0, 5 ns; B at 0.5, 3, 20 ns; 64 B each at 64 B/ns (1 ns on the wire),
 * latency 10 ns. */
typedef struct tlog {
    rp_time at[8];
    uint64_t addr[8];
    int n;
} tlog;
static void tlog_note(rp_port *p, rp_engine *e)
{
    tlog *g = p->owner;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        g->at[g->n] = e->now;
        g->addr[g->n++] = m->addr;
    }
}
/* Variant 2, a fan-in (rp_link_fan, sim.l2_partitions): the same sends on one
 * link made into a fan of two inputs, the sender chosen by rp_link_fan_slot;
 * each message names its destination port (as a response does, m->dst),
 * which the inputs ignore (they deliver into the arbiter) and the link out
 * honours. */
static void test_arbiter_as_one_link(void **state)
{
    (void)state;
    static const rp_time send_t[6] = {0, 0, 500, 3000, 5000, 20000};
    static const int from_b[6] = {0, 0, 1, 1, 0, 1};
    /* one shared link: arrival = max(ready, previous departure) + 1 ns + 10 ns */
    static const rp_time want[6] = {11000, 12000, 13000, 14000, 16000, 31000};
    tlog got[3];
    memset(got, 0, sizeof got);
    for (int v = 0; v < 3; v++) {
        rp_engine e;
        assert_int_equal(rp_engine_init(&e), 0);
        rp_msg_pool pool = {0};
        rp_port dst = {.notify = tlog_note, .owner = &got[v]}, unused = {0};
        rp_link shared, a, b, out;
        rp_port arb = {.notify = rp_port_forward, .owner = &out};
        rp_link_init(&shared, &e, v == 2 ? &unused : &dst, 10000, 64000000000ull, 0);
        rp_link_init(&out, &e, &dst, 0, 64000000000ull, 0);
        rp_link_init(&a, &e, &arb, 10000, 0, 0);
        rp_link_init(&b, &e, &arb, 10000, 0, 0);
        rp_fan *f = NULL;
        if (v == 2) {
            f = rp_link_fan(&shared, 2);
            assert_non_null(f);
            assert_int_equal(shared.latency_ps, 0);
            assert_int_equal(f->in[1].latency_ps, 10000);
        }
        for (int i = 0; i < 6; i++) {
            while (rp_engine_next_time(&e) < send_t[i] && rp_engine_step(&e))
                ;
            rp_engine_advance(&e, send_t[i]);
            rp_msg *m = rp_msg_alloc(&pool);
            m->payload = 64;
            m->addr = (uint64_t)i;
            if (v == 2)
                m->dst = &dst;
            rp_link_fan_slot = (uint32_t)from_b[i];
            rp_link_send(v == 1 ? (from_b[i] ? &b : &a) : &shared, m, send_t[i]);
        }
        rp_link_fan_slot = UINT32_MAX;
        while (rp_engine_step(&e))
            ;
        if (f) {
            assert_int_equal(f->in[0].st_msgs, 3);
            assert_int_equal(f->in[1].st_msgs, 3);
            assert_int_equal(shared.st_msgs, 6);
        }
        free(f);
        rp_msg_pool_fini(&pool);
        rp_engine_fini(&e);
    }
    for (int v = 0; v < 3; v++) {
        assert_int_equal(got[v].n, 6);
        for (int i = 0; i < 6; i++) {
            assert_int_equal(got[v].at[i], want[i]);
            assert_int_equal(got[v].addr[i], (uint64_t)i);
        }
    }
}

/* A pull port (rp_port.arrive): a link hands it each message when sent,
 * with no delivery event; arrive() is told the arrival time at once; the
 * port keeps arrival order across links (equal arrivals in the order
 * handed over), and rp_port_ready holds back what has not arrived. A
 * fan-in's inputs still deliver by event into their arbiter, whose link out
 * hands the message to the pull port it names. */
typedef struct pull_log {
    rp_time told[8];
    rp_time woke_at;
    int n;
    rp_event ev;
    rp_port *p;
    uint64_t taken[8];
    rp_time taken_at[8];
    int nt;
} pull_log;
static void pull_arrive(rp_port *p, rp_engine *e, rp_time t)
{
    pull_log *g = p->owner;
    g->told[g->n++] = t;
    rp_engine_wake(e, &g->ev, t);
}
static void pull_run(rp_event *ev, rp_engine *e)
{
    pull_log *g = ev->owner;
    while (rp_port_ready(g->p, e->now)) {
        rp_msg *m = rp_port_pop(g->p);
        g->taken_at[g->nt] = e->now;
        g->taken[g->nt++] = m->addr;
    }
    if (g->p->head)
        rp_engine_schedule(e, ev, rp_port_next(g->p));
}
static void test_pull_port(void **state)
{
    (void)state;
    rp_engine e;
    assert_int_equal(rp_engine_init(&e), 0);
    rp_msg_pool pool = {0};
    pull_log g;
    memset(&g, 0, sizeof g);
    rp_port p = {.arrive = pull_arrive, .owner = &g};
    g.p = &p;
    rp_event_init(&g.ev, pull_run, &g, RP_PRIO_COMPONENT);
    rp_link slow, fast;
    rp_link_init(&slow, &e, &p, 10000, 0, 0);
    rp_link_init(&fast, &e, &p, 2000, 0, 0);
    /* at 0: addr 0 on slow (arrives 10 ns), addr 1 on fast (2 ns), addr 2
     * on slow (10 ns, after 0), addr 3 on fast ready at 8 ns (10 ns, after 2) */
    rp_link *on[4] = {&slow, &fast, &slow, &fast};
    rp_time ready[4] = {0, 0, 0, 8000};
    for (int i = 0; i < 4; i++) {
        rp_msg *m = rp_msg_alloc(&pool);
        m->addr = (uint64_t)i;
        rp_link_send(on[i], m, ready[i]);
    }
    /* told at once, nothing scheduled for the links themselves */
    assert_int_equal(g.n, 4);
    assert_int_equal(g.told[0], 10000);
    assert_int_equal(g.told[1], 2000);
    assert_int_equal(g.told[3], 10000);
    assert_int_equal(p.n, 4);
    assert_false(slow.ev.pending);
    assert_false(fast.ev.pending);
    assert_false(rp_port_ready(&p, 0));
    assert_int_equal(rp_port_next(&p), 2000);
    uint64_t n0 = e.n_events;
    while (rp_engine_step(&e))
        ;
    assert_int_equal(g.nt, 4);
    static const uint64_t want[4] = {1, 0, 2, 3};
    static const rp_time want_at[4] = {2000, 10000, 10000, 10000};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(g.taken[i], want[i]);
        assert_int_equal(g.taken_at[i], want_at[i]);
    }
    assert_int_equal(e.n_events - n0, 2); /* the owner's two runs, no deliveries */
    assert_int_equal(p.n, 0);

    /* a fan-in: its inputs deliver into the arbiter (events), the link out
     * hands the message to the pull port it names (m->dst) */
    memset(&g, 0, sizeof g);
    g.p = &p;
    rp_event_init(&g.ev, pull_run, &g, RP_PRIO_COMPONENT);
    rp_port unused = {0};
    rp_link shared;
    rp_link_init(&shared, &e, &unused, 10000, 64000000000ull, 0);
    rp_fan *f = rp_link_fan(&shared, 2);
    assert_non_null(f);
    rp_time t0 = e.now;
    rp_msg *m = rp_msg_alloc(&pool);
    m->payload = 64;
    m->addr = 7;
    m->dst = &p;
    rp_link_fan_slot = 1;
    rp_link_send(&shared, m, t0);
    rp_link_fan_slot = UINT32_MAX;
    assert_int_equal(g.n, 0); /* still on the input link */
    assert_true(f->in[1].ev.pending);
    while (rp_engine_step(&e))
        ;
    assert_int_equal(g.n, 1);
    assert_int_equal(g.told[0], t0 + 11000); /* 10 ns on the input, 1 ns on the wire */
    assert_int_equal(g.nt, 1);
    assert_int_equal(g.taken[0], 7);
    assert_int_equal(g.taken_at[0], t0 + 11000);
    free(f);
    rp_msg_pool_fini(&pool);
    rp_engine_fini(&e);
}

static void test_clock(void **state)
{
    (void)state;
    rp_clock c = rp_clock_make(1000000000);
    assert_int_equal(c.period_ps, 1000);
    assert_int_equal(rp_clock_edge(c, 1001), 2000);
    assert_int_equal(rp_clock_edge(c, 2000), 2000);
    assert_int_equal(rp_clock_make(1500000000).period_ps, 667);
}


/* Handlers that schedule while they run (the engine reuses the spent heap
 * root for the first such event), interleaved with cancellations and moves:
 * the order is still (time, priority, insertion order). A long random run is
 * compared against a reference computed by sorting. */
typedef struct chain {
    rp_event ev;
    int id;
    uint32_t *rng;
    int *log, *n, max;
    rp_time *at;
    rp_time step;          /* delay unit of the random schedules (ps) */
    struct chain *all;
    int n_all;
} chain;

static uint32_t xs(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static void chain_h(rp_event *ev, rp_engine *e)
{
    chain *c = ev->owner;
    if (*c->n > 0)
        assert_true(e->now >= c->at[*c->n - 1]); /* time never goes back */
    c->at[*c->n] = e->now;
    c->log[(*c->n)++] = c->id;
    if (*c->n >= c->max)
        return;
    /* reschedule self, and poke a random other event (schedule, move or cancel) */
    rp_engine_schedule(e, ev, e->now + (xs(c->rng) % 3) * c->step);
    chain *o = &c->all[xs(c->rng) % (uint32_t)c->n_all];
    uint32_t r = xs(c->rng) % 4;
    if (r == 0)
        rp_engine_cancel(e, &o->ev);
    else
        rp_engine_wake(e, &o->ev, e->now + (r - 1) * c->step);
}

/* step: delay unit in ps; small steps keep every event in the engine's
 * near-future ring, larger ones (> RP_RING_PS / 2) mix ring and heap. */
static void run_schedule_in_handler(rp_time unit)
{
    enum { N = 16, MAX = 20000 };
    static int log[MAX + 64];
    static rp_time at[MAX + 64];
    rp_engine e;
    assert_int_equal(rp_engine_init(&e), 0);
    uint32_t rng = 12345;
    int n = 0;
    chain c[N];
    for (int i = 0; i < N; i++) {
        c[i] = (chain){.id = i, .rng = &rng, .log = log, .n = &n, .max = MAX, .at = at, .step = unit,
                       .all = c, .n_all = N};
        rp_event_init(&c[i].ev, chain_h, &c[i], (enum rp_prio)(i % 3));
        assert_int_equal(rp_engine_schedule(&e, &c[i].ev, (rp_time)(i % 4) * unit), 0);
    }
    uint64_t handled = 0;
    while (rp_engine_step(&e)) {
        handled++;
        /* pending count matches the events flagged pending */
        size_t p = 0;
        for (int i = 0; i < N; i++)
            p += c[i].ev.pending;
        assert_int_equal(p, e.n);
    }
    assert_int_equal(handled, (uint64_t)n);
    assert_true(n >= MAX);
    assert_int_equal(e.n, 0);
    /* Reference: the same decisions against a linear-scan queue. */
    struct { int pending; rp_time t; uint64_t seq; int prio; } q[N];
    uint64_t seq = 0;
    rp_time now = 0;
    rng = 12345;
    for (int i = 0; i < N; i++)
        q[i].pending = 1, q[i].t = (rp_time)(i % 4) * unit, q[i].seq = seq++, q[i].prio = i % 3;
    for (int step = 0; step < n; step++) {
        int b = -1;
        for (int i = 0; i < N; i++)
            if (q[i].pending && (b < 0 || q[i].t < q[b].t || (q[i].t == q[b].t && (q[i].prio < q[b].prio ||
                                                                                     (q[i].prio == q[b].prio && q[i].seq < q[b].seq)))))
                b = i;
        assert_true(b >= 0);
        assert_int_equal(b, log[step]);
        q[b].pending = 0;
        now = q[b].t;
        if (step + 1 >= MAX)
            continue;
        q[b].pending = 1, q[b].t = now + (xs(&rng) % 3) * unit, q[b].seq = seq++;
        int o = (int)(xs(&rng) % N);
        uint32_t r = xs(&rng) % 4;
        if (r == 0)
            q[o].pending = 0;
        else {
            rp_time t = now + (r - 1) * unit;
            if (!(q[o].pending && q[o].t <= t))
                q[o].pending = 1, q[o].t = t, q[o].seq = seq++;
        }
    }
    rp_engine_fini(&e);
}

static void test_schedule_in_handler(void **state)
{
    (void)state;
    run_schedule_in_handler(500);                    /* near future only (ring) */
    run_schedule_in_handler(RP_RING_PS / 2 + 333);   /* 0, ~0.6x and ~1.2x the ring span: ring and heap */
    run_schedule_in_handler(RP_RING_PS - 1);         /* edge of the ring */
    run_schedule_in_handler(RP_RING_PS);             /* just past it */
}

/* ---- windows: step_before, next_time, advance (parallel replay) ---------- */

typedef struct tev {
    rp_event ev;
    int id;
    int *n;
    int *log;
    rp_time *at;
} tev;

static void tev_h(rp_event *ev, rp_engine *e)
{
    tev *t = ev->owner;
    t->log[*t->n] = t->id;
    t->at[(*t->n)++] = e->now;
}

/* Event id of a test, logging into log/at (count n) when handled. */
static void tev_make(tev *t, int id, int *n, int *log, rp_time *at, enum rp_prio p)
{
    *t = (tev){.id = id, .n = n, .log = log, .at = at};
    rp_event_init(&t->ev, tev_h, t, p);
}

/* Events at base + offsets, all scheduled at now = 0: base 0 puts them in
 * the near-future ring, a large base in the heap. The limit is base + 300. */
static void limit_case(rp_time base)
{
    rp_engine e;
    assert_int_equal(rp_engine_init(&e), 0);
    int log[16], n = 0;
    rp_time at[16];
    enum { A, B, C, D, X, Y, Z, NEV };
    tev t[NEV];
    struct { rp_time off; enum rp_prio p; } spec[NEV] = {
        [A] = {100, RP_PRIO_COMPONENT}, [B] = {299, RP_PRIO_HOST},    [C] = {300, RP_PRIO_COMPONENT},
        [D] = {300, RP_PRIO_DELIVER},   [X] = {150, RP_PRIO_COMPONENT}, [Y] = {200, RP_PRIO_COMPONENT},
        [Z] = {400, RP_PRIO_COMPONENT},
    };
    for (int i = 0; i < NEV; i++) {
        tev_make(&t[i], i, &n, log, at, spec[i].p);
        assert_int_equal(rp_engine_schedule(&e, &t[i].ev, base + spec[i].off), 0);
    }
    assert_int_equal(rp_engine_next_time(&e), base + 100);
    rp_engine_cancel(&e, &t[X].ev);                                  /* stale entry at base+150 */
    rp_engine_cancel(&e, &t[Y].ev);                                  /* moved later: stale at base+200 */
    assert_int_equal(rp_engine_schedule(&e, &t[Y].ev, base + 350), 0);
    rp_engine_wake(&e, &t[Z].ev, base + 250);                        /* moved earlier: stale at base+400 */
    assert_int_equal(e.n, 6);
    assert_int_equal(rp_engine_next_time(&e), base + 100);
    assert_int_equal(e.now, 0); /* next_time runs nothing */
    assert_int_equal(n, 0);

    rp_time lim = base + 300;
    while (rp_engine_step_before(&e, lim))
        ;
    assert_int_equal(n, 3); /* A@100, Z@250, B@299; neither C nor D (both at the limit) */
    assert_int_equal(log[0], A);
    assert_int_equal(at[0], base + 100);
    assert_int_equal(log[1], Z);
    assert_int_equal(at[1], base + 250);
    assert_int_equal(log[2], B);
    assert_int_equal(at[2], base + 299);
    assert_int_equal(e.now, base + 299);
    assert_int_equal(rp_engine_next_time(&e), base + 300);
    assert_false(rp_engine_step_before(&e, lim)); /* still refused */
    assert_int_equal(n, 3);
    assert_int_equal(e.now, base + 299);
    assert_int_equal(e.n, 3);

    while (rp_engine_step_before(&e, lim + 1))
        ;
    assert_int_equal(n, 5); /* D (DELIVER) before C at the same instant */
    assert_int_equal(log[3], D);
    assert_int_equal(log[4], C);
    assert_int_equal(at[4], base + 300);
    /* Y's old entry (200) is gone, its live one is at 350 */
    assert_int_equal(rp_engine_next_time(&e), base + 350);
    assert_false(rp_engine_step_before(&e, base + 350));
    assert_true(rp_engine_step_before(&e, base + 351));
    assert_int_equal(log[5], Y);
    assert_int_equal(at[5], base + 350);
    /* only Z's stale entry (400) is left: not reported, not run */
    assert_int_equal(e.n, 0);
    assert_int_equal(rp_engine_next_time(&e), RP_TIME_MAX);
    assert_false(rp_engine_step_before(&e, RP_TIME_MAX));
    assert_int_equal(e.now, base + 350);
    assert_int_equal(n, 6);

    /* A stale entry before the limit and a live one after it: nothing runs,
     * now does not move to the stale entry's time. */
    rp_engine_schedule(&e, &t[X].ev, e.now + 1000);
    rp_engine_schedule(&e, &t[A].ev, e.now + 2000);
    rp_engine_cancel(&e, &t[X].ev);
    assert_false(rp_engine_step_before(&e, base + 350 + 1500));
    assert_int_equal(e.now, base + 350);
    assert_int_equal(n, 6);
    assert_int_equal(rp_engine_next_time(&e), base + 350 + 2000);
    assert_true(rp_engine_step(&e));
    assert_int_equal(n, 7);
    assert_int_equal(rp_engine_next_time(&e), RP_TIME_MAX);
    rp_engine_fini(&e);
}

static void test_step_before_limit(void **state)
{
    (void)state;
    limit_case(0);                 /* near future: the ring */
    limit_case(100000);            /* far: the heap */
    limit_case(RP_RING_PS - 400);  /* straddling the ring's span */
}

/* A ring event and a heap event at the same instant, the limit exactly there;
 * and the ring after advance() past stale entries (slots reused by later times). */
static void test_advance_ring_heap(void **state)
{
    (void)state;
    rp_engine e;
    assert_int_equal(rp_engine_init(&e), 0);
    int log[16], n = 0;
    rp_time at[16];
    tev t[8];
    for (int i = 0; i < 8; i++)
        tev_make(&t[i], i, &n, log, at, i == 1 ? RP_PRIO_DELIVER : RP_PRIO_COMPONENT);
    assert_int_equal(rp_engine_schedule(&e, &t[0].ev, 5000), 0); /* heap (now = 0) */
    rp_engine_advance(&e, 1000);
    assert_int_equal(e.now, 1000);
    rp_engine_advance(&e, 10); /* backwards: no-op */
    assert_int_equal(e.now, 1000);
    assert_int_equal(rp_engine_schedule(&e, &t[1].ev, 5000), 0); /* ring, DELIVER */
    assert_int_equal(rp_engine_schedule(&e, &t[2].ev, 999), -1);  /* past */
    assert_int_equal(rp_engine_next_time(&e), 5000);
    assert_false(rp_engine_step_before(&e, 5000));
    assert_int_equal(e.now, 1000);
    assert_true(rp_engine_step_before(&e, 5001));
    assert_true(rp_engine_step_before(&e, 5001));
    assert_false(rp_engine_step_before(&e, 5001));
    assert_int_equal(n, 2);
    assert_int_equal(log[0], 1);
    assert_int_equal(log[1], 0);

    /* stale ring entry at slot s, then advance far beyond the ring span */
    rp_time now = e.now; /* 5000 */
    rp_time stale_t = now + 1908;
    assert_int_equal(rp_engine_schedule(&e, &t[2].ev, stale_t), 0);
    assert_int_equal(rp_engine_schedule(&e, &t[3].ev, now + 3000), 0);
    rp_engine_cancel(&e, &t[2].ev);
    assert_int_equal(rp_engine_next_time(&e), now + 3000);
    rp_engine_cancel(&e, &t[3].ev); /* another stale entry */
    assert_int_equal(rp_engine_next_time(&e), RP_TIME_MAX);
    rp_engine_advance(&e, now + 3 * RP_RING_PS + 17);
    rp_time b = e.now;
    /* A lands in the stale entry's slot; B, C, D spread over the ring span */
    rp_time ta = stale_t + (b - stale_t + RP_RING_PS) / RP_RING_PS * RP_RING_PS; /* stale_t's slot, > b */
    assert_true(ta > b && ta - b < RP_RING_PS);
    assert_int_equal(rp_engine_schedule(&e, &t[4].ev, ta), 0);
    assert_int_equal(rp_engine_schedule(&e, &t[5].ev, b + 5), 0);
    assert_int_equal(rp_engine_schedule(&e, &t[6].ev, b + RP_RING_PS - 1), 0);
    assert_int_equal(rp_engine_schedule(&e, &t[7].ev, b + RP_RING_PS), 0); /* heap */
    assert_int_equal(rp_engine_next_time(&e), b + 5);
    assert_true(rp_engine_step_before(&e, ta));
    assert_false(rp_engine_step_before(&e, ta));
    assert_int_equal(rp_engine_next_time(&e), ta);
    while (rp_engine_step(&e))
        ;
    int want[4] = {5, 4, 6, 7};
    rp_time want_t[4] = {b + 5, ta, b + RP_RING_PS - 1, b + RP_RING_PS};
    assert_int_equal(n, 6);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(log[2 + i], want[i]);
        assert_int_equal(at[2 + i], want_t[i]);
    }
    rp_engine_fini(&e);
}

/* Random schedules, cancels and moves (from handlers and between windows),
 * run in windows [t0, t0 + w) with advance() between them, checked against a
 * shadow queue: every handled event is the (time, prio, seq) minimum, lies in
 * its window, and next_time equals the shadow's earliest time. */
enum { WN = 24 };
typedef struct wsh {
    int pending;
    rp_time t;
    uint64_t seq;
    int prio;
} wsh;
typedef struct wctx {
    rp_engine *e;
    tev ev[WN];
    wsh sh[WN];
    uint64_t seq;
    uint32_t rng;
    rp_time unit, lo, hi;
    int n, bad;
    int log[4];
    rp_time at[4];
} wctx;
static wctx *wcur;

static void w_sched(wctx *c, int i, rp_time t)
{
    assert_int_equal(rp_engine_schedule(c->e, &c->ev[i].ev, t), 0);
    c->sh[i] = (wsh){1, t, c->seq++, c->sh[i].prio};
}

static void w_wake(wctx *c, int i, rp_time t)
{
    rp_engine_wake(c->e, &c->ev[i].ev, t);
    if (t < c->e->now)
        t = c->e->now;
    if (!(c->sh[i].pending && c->sh[i].t <= t))
        c->sh[i] = (wsh){1, t, c->seq++, c->sh[i].prio};
}

static rp_time w_min(const wctx *c)
{
    rp_time m = RP_TIME_MAX;
    for (int i = 0; i < WN; i++)
        if (c->sh[i].pending && c->sh[i].t < m)
            m = c->sh[i].t;
    return m;
}

static void w_poke(wctx *c)
{
    int o = (int)(xs(&c->rng) % WN);
    uint32_t r = xs(&c->rng) % 5;
    rp_time d = (xs(&c->rng) % 4) * c->unit + xs(&c->rng) % 7;
    if (r == 0) {
        rp_engine_cancel(c->e, &c->ev[o].ev);
        c->sh[o].pending = 0;
    } else if (r == 1 && !c->sh[o].pending) {
        w_sched(c, o, c->e->now + d);
    } else {
        w_wake(c, o, c->e->now + d);
    }
}

static void w_h(rp_event *ev, rp_engine *e)
{
    wctx *c = wcur;
    tev *t = ev->owner;
    int i = t->id;
    /* the handled event is the shadow minimum */
    for (int j = 0; j < WN; j++) {
        const wsh *a = &c->sh[j], *b = &c->sh[i];
        if (j != i && a->pending &&
            (a->t < b->t || (a->t == b->t && (a->prio < b->prio || (a->prio == b->prio && a->seq < b->seq)))))
            c->bad++;
    }
    if (!c->sh[i].pending || c->sh[i].t != e->now || e->now < c->lo || e->now >= c->hi)
        c->bad++;
    c->sh[i].pending = 0;
    c->n++;
    if (xs(&c->rng) % 3)
        w_sched(c, i, e->now + (xs(&c->rng) % 3) * c->unit + xs(&c->rng) % 5);
    w_poke(c);
}

static void run_windows_random(rp_time unit, uint32_t seed)
{
    rp_engine e;
    assert_int_equal(rp_engine_init(&e), 0);
    static wctx c;
    memset(&c, 0, sizeof c);
    c.e = &e;
    c.rng = seed;
    c.unit = unit;
    wcur = &c;
    int dummy_n = 0;
    for (int i = 0; i < WN; i++) {
        c.ev[i] = (tev){.id = i, .n = &dummy_n, .log = c.log, .at = c.at};
        rp_event_init(&c.ev[i].ev, w_h, &c.ev[i], (enum rp_prio)(i % 3));
        c.sh[i].prio = i % 3;
        if (i % 2 == 0)
            w_sched(&c, i, (xs(&c.rng) % 4) * unit + xs(&c.rng) % 3);
    }
    int windows = 0;
    while (c.n < 30000) {
        rp_time t0 = rp_engine_next_time(&e);
        assert_int_equal(t0, w_min(&c));
        if (t0 == RP_TIME_MAX) { /* everything died out: restart a few */
            for (int k = 0; k < 4; k++) {
                int i = (int)(xs(&c.rng) % WN);
                if (!c.sh[i].pending)
                    w_sched(&c, i, e.now + xs(&c.rng) % (2 * unit));
            }
            continue;
        }
        c.lo = t0;
        c.hi = t0 + 1 + xs(&c.rng) % (3 * unit);
        while (rp_engine_step_before(&e, c.hi))
            ;
        assert_int_equal(c.bad, 0);
        rp_time nx = rp_engine_next_time(&e);
        assert_int_equal(nx, w_min(&c));
        assert_true(nx >= c.hi);
        /* a synchronisation point: move forward, up to the next event */
        if (nx != RP_TIME_MAX && xs(&c.rng) % 2) {
            rp_time lim = nx < c.hi + 5 * unit ? nx : c.hi + 5 * unit;
            rp_engine_advance(&e, c.hi + xs(&c.rng) % (lim - c.hi + 1));
        }
        /* messages drained between windows: schedule or move from outside */
        if (xs(&c.rng) % 2)
            w_poke(&c);
        windows++;
    }
    assert_true(c.n >= 30000);
    assert_true(windows > 1000);
    size_t p = 0;
    for (int i = 0; i < WN; i++)
        p += (size_t)c.sh[i].pending;
    assert_int_equal(p, e.n);
    rp_engine_fini(&e);
}

/* The ring keeps its first slot between steps (engine.c ring_first_slot):
 * after advance() past a stale entry that was that slot, a later event
 * pushed into the same slot (one ring span on) must not go before an
 * earlier event scheduled before the advance. */
static void test_advance_first_slot(void **state)
{
    (void)state;
    rp_engine e;
    assert_int_equal(rp_engine_init(&e), 0);
    int log[8], n = 0;
    rp_time at[8];
    tev t[4];
    for (int i = 0; i < 4; i++)
        tev_make(&t[i], i, &n, log, at, RP_PRIO_COMPONENT);
    rp_time n0 = 1000, ta = n0 + 1908, te = n0 + 5000, b = n0 + 4000;
    rp_engine_advance(&e, n0);
    assert_int_equal(rp_engine_schedule(&e, &t[0].ev, ta), 0);  /* A: the first slot */
    assert_int_equal(rp_engine_next_time(&e), ta);              /* (the engine looks at it) */
    assert_int_equal(rp_engine_schedule(&e, &t[1].ev, te), 0);  /* E: after A */
    rp_engine_cancel(&e, &t[0].ev);                             /* A: a stale entry */
    rp_engine_advance(&e, b);                                   /* past A, before E */
    rp_time tc = ta + RP_RING_PS;                               /* C: A's slot, after E */
    assert_true(tc > te && tc - b < RP_RING_PS);
    assert_int_equal(rp_engine_schedule(&e, &t[2].ev, tc), 0);
    assert_int_equal(rp_engine_next_time(&e), te);
    while (rp_engine_step(&e))
        ;
    assert_int_equal(n, 2);
    assert_int_equal(log[0], 1);
    assert_int_equal(at[0], te);
    assert_int_equal(log[1], 2);
    assert_int_equal(at[1], tc);
    rp_engine_fini(&e);
}

static void test_windows_random(void **state)
{
    (void)state;
    run_windows_random(300, 1);                /* ring */
    run_windows_random(RP_RING_PS / 2 + 77, 2); /* ring and heap */
    run_windows_random(3 * RP_RING_PS, 3);     /* mostly heap, advance across ring spans */
}

/* ---- links crossing partitions ------------------------------------------- */

typedef struct xlog {
    int n;
    rp_time at[64];
    uint64_t addr[64];
} xlog;

static void xlog_note(rp_port *p, rp_engine *e)
{
    xlog *x = p->owner;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        assert_true(x->n < 64);
        x->at[x->n] = e->now;
        x->addr[x->n++] = m->addr;
    }
}

typedef struct sender {
    rp_event ev;
    rp_link *l;
    rp_msg_pool *pool;
    int count;
    uint64_t addr;
    uint16_t payload;
} sender;

static void sender_h(rp_event *ev, rp_engine *e)
{
    sender *s = ev->owner;
    for (int i = 0; i < s->count; i++) {
        rp_msg *m = rp_msg_alloc(s->pool);
        assert_non_null(m);
        m->addr = s->addr + (uint64_t)i;
        m->payload = s->payload;
        rp_link_send(s->l, m, e->now);
    }
}

/* Engine A (sender) and engine B (receiver), link latency L = 10 ns and
 * 64 B/ns, W = L. Sends: 2 at 0.5 ns, 1 at 9.999 ns, 1 at 11.6 ns, 1 at 15 ns. */
enum { XL = 10000 };
static const rp_time x_send_t[4] = {500, 9999, 11600, 15000};
static const int x_send_n[4] = {2, 1, 1, 1};
/* arrival = max(ready, busy) + 1000 (64 B at 64 B/ns) + 10000 */
static const rp_time x_want[5] = {11500, 12500, 20999, 22600, 26000};

static void test_cross_link_windows(void **state)
{
    (void)state;
    rp_engine A, B;
    assert_int_equal(rp_engine_init(&A), 0);
    assert_int_equal(rp_engine_init(&B), 0);
    rp_msg_pool pool = {0};
    xlog got = {0};
    rp_port dst = {.notify = xlog_note, .owner = &got};
    rp_link l;
    rp_xq q = {0};
    rp_link_init(&l, &B, &dst, XL, 64000000000ull, 0);
    rp_link_cross(&l, &A, &q);
    assert_ptr_equal(l.eng, &B);
    assert_ptr_equal(l.src_eng, &A);
    sender s[4];
    for (int i = 0; i < 4; i++) {
        s[i] = (sender){.l = &l, .pool = &pool, .count = x_send_n[i], .addr = 10 * (uint64_t)(i + 1), .payload = 64};
        rp_event_init(&s[i].ev, sender_h, &s[i], RP_PRIO_COMPONENT);
        assert_int_equal(rp_engine_schedule(&A, &s[i].ev, x_send_t[i]), 0);
    }

    /* window 1: [0, L) */
    while (rp_engine_step_before(&A, XL))
        ;
    assert_int_equal(A.now, 9999);
    assert_int_equal(q.w, 0);
    assert_int_equal(q.b0.n, 3);
    assert_int_equal(q.b1.n, 0);
    assert_int_equal(q.b0.min_arrive, 11500);
    for (int i = 0; i < 3; i++) {
        assert_ptr_equal(q.b0.buf[i].l, &l);
        assert_int_equal(q.b0.buf[i].m->arrive, x_want[i]);
    }
    /* nothing reached B: no event, no delivery, no link activity */
    assert_int_equal(rp_engine_next_time(&B), RP_TIME_MAX);
    assert_false(rp_engine_step_before(&B, XL));
    assert_true(rp_engine_empty(&B));
    assert_int_equal(got.n, 0);
    assert_null(l.head);
    assert_false(l.ev.pending);
    rp_xq_drain(&q); /* drain buffer (1) is empty: nothing moves */
    assert_int_equal(q.b0.n, 3);
    assert_true(rp_engine_empty(&B));

    /* serial point */
    rp_xq_flip(&q);
    assert_int_equal(q.w, 1);
    assert_int_equal(q.b0.n, 3);
    assert_int_equal(q.b1.n, 0);
    assert_int_equal(q.b0.min_arrive, 11500);
    rp_time t0 = rp_engine_next_time(&A); /* 11600 */
    assert_int_equal(t0, 11600);
    if (q.b0.min_arrive < t0)
        t0 = q.b0.min_arrive;
    assert_int_equal(t0, 11500);
    rp_time lim = t0 + XL; /* window 2: [11500, 21500) */

    /* A runs part of its window before B drains: its send lands in buf[1]
     * and leaves buf[0] (being drained) alone */
    while (rp_engine_step_before(&A, 13000))
        ;
    assert_int_equal(q.b1.n, 1);
    assert_int_equal(q.b1.min_arrive, 22600);
    assert_int_equal(q.b0.n, 3);
    assert_int_equal(q.b0.min_arrive, 11500);
    /* B: drain, then its whole window */
    rp_xq_drain(&q);
    assert_int_equal(q.b0.n, 0);
    assert_int_equal(q.b0.min_arrive, RP_TIME_MAX);
    assert_int_equal(q.b1.n, 1);
    assert_int_equal(rp_engine_next_time(&B), 11500);
    assert_int_equal(got.n, 0);
    while (rp_engine_step_before(&B, lim))
        ;
    assert_int_equal(got.n, 3);
    assert_int_equal(B.now, 20999);
    /* A finishes its window after B ran ahead: the arrival is computed on
     * A's clock (15000), not B's (20999) */
    while (rp_engine_step_before(&A, lim))
        ;
    assert_int_equal(A.now, 15000);
    assert_int_equal(q.b1.n, 2);
    assert_int_equal(q.b1.buf[1].m->arrive, 26000);
    assert_int_equal(q.b1.min_arrive, 22600);
    assert_int_equal(rp_engine_next_time(&B), RP_TIME_MAX);

    /* serial point; window 3 */
    rp_xq_flip(&q);
    assert_int_equal(q.w, 0);
    assert_int_equal(q.b0.n, 0);
    assert_int_equal(q.b0.min_arrive, RP_TIME_MAX);
    assert_int_equal(rp_engine_next_time(&A), RP_TIME_MAX);
    t0 = q.b1.min_arrive;
    assert_int_equal(t0, 22600);
    assert_true(t0 >= lim); /* the lookahead guarantee */
    rp_xq_drain(&q);
    assert_int_equal(q.b1.n, 0);
    while (rp_engine_step_before(&B, t0 + XL))
        ;
    assert_int_equal(got.n, 5);
    uint64_t want_addr[5] = {10, 11, 20, 30, 40};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(got.at[i], x_want[i]);
        assert_int_equal(got.addr[i], want_addr[i]);
    }
    assert_int_equal(l.st_msgs, 5);
    assert_int_equal(l.st_bytes, 5 * 64);
    assert_true(rp_engine_empty(&A));
    assert_true(rp_engine_empty(&B));
    assert_null(l.head);

    /* the same sends on one engine over a plain link give the same times */
    rp_engine E;
    assert_int_equal(rp_engine_init(&E), 0);
    xlog ref = {0};
    rp_port rdst = {.notify = xlog_note, .owner = &ref};
    rp_link rl;
    rp_link_init(&rl, &E, &rdst, XL, 64000000000ull, 0);
    for (int i = 0; i < 4; i++) {
        s[i].l = &rl;
        assert_int_equal(rp_engine_schedule(&E, &s[i].ev, x_send_t[i]), 0);
    }
    while (rp_engine_step(&E))
        ;
    assert_int_equal(ref.n, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(ref.at[i], got.at[i]);
        assert_int_equal(ref.addr[i], got.addr[i]);
    }
    rp_engine_fini(&E);
    rp_xq_fini(&q);
    assert_null(q.b0.buf);
    assert_null(q.b1.buf);
    rp_msg_pool_fini(&pool);
    rp_engine_fini(&A);
    rp_engine_fini(&B);
}

/* Ping-pong across two partitions: senders on A send requests to B over a
 * crossed link; B answers each on another crossed link back to A. Run in
 * conservative windows (flip, drain, step_before) with either partition
 * first, or on one engine with plain links: every run gives the same
 * delivery times and order. */
typedef struct pp_side {
    xlog log;
    rp_link *reply;        /* B: link for answers; NULL on A */
    rp_msg_pool *pool;
    rp_time lo, hi;        /* current window of this side's engine */
    int bad;
} pp_side;

static void pp_note(rp_port *p, rp_engine *e)
{
    pp_side *sd = p->owner;
    rp_msg *m;
    if (e->now < sd->lo || e->now >= sd->hi)
        sd->bad++;
    while ((m = rp_port_pop(p))) {
        if (sd->log.n < 64) {
            sd->log.at[sd->log.n] = e->now;
            sd->log.addr[sd->log.n++] = m->addr;
        } else {
            sd->bad++;
        }
        if (sd->reply) {
            rp_msg *r = rp_msg_alloc(sd->pool);
            r->addr = m->addr | 0x1000;
            r->payload = (uint16_t)(m->addr % 3 * 32);
            rp_link_send(sd->reply, r, e->now + 700);
        }
        rp_msg_free(sd->pool, m);
    }
}

typedef struct pp_result {
    xlog a, b;
    uint64_t windows;
} pp_result;

/* mode 0: one engine; 1: partitions, A first; 2: partitions, B first */
static void pp_run(int mode, pp_result *out)
{
    enum { NS = 12 };
    const rp_time L = 8000;
    rp_engine ea, eb;
    assert_int_equal(rp_engine_init(&ea), 0);
    assert_int_equal(rp_engine_init(&eb), 0);
    rp_engine *A = &ea, *B = mode ? &eb : &ea;
    rp_msg_pool pool = {0};
    pp_side sa = {.pool = &pool, .hi = RP_TIME_MAX}, sb = {.pool = &pool, .hi = RP_TIME_MAX};
    rp_port pa = {.notify = pp_note, .owner = &sa}, pb = {.notify = pp_note, .owner = &sb};
    rp_link ab, ba;
    rp_xq qab = {0}, qba = {0};
    rp_link_init(&ab, B, &pb, L, 32000000000ull, 16);  /* 32 B/ns, 16 B header */
    rp_link_init(&ba, A, &pa, L + 1234, 16000000000ull, 8);
    if (mode) {
        rp_link_cross(&ab, A, &qab);
        rp_link_cross(&ba, B, &qba);
    }
    sb.reply = &ba;
    sender s[NS];
    uint32_t rng = 777;
    for (int i = 0; i < NS; i++) {
        s[i] = (sender){.l = &ab, .pool = &pool, .count = 1 + (int)(xs(&rng) % 3),
                        .addr = 16 * (uint64_t)i, .payload = (uint16_t)(xs(&rng) % 4 * 32)};
        rp_event_init(&s[i].ev, sender_h, &s[i], RP_PRIO_COMPONENT);
        assert_int_equal(rp_engine_schedule(A, &s[i].ev, xs(&rng) % 60000), 0);
    }
    uint64_t windows = 0;
    if (!mode) {
        while (rp_engine_step(A))
            ;
    } else {
        rp_time prev_lim = 0;
        for (;;) {
            rp_xq_flip(&qab);
            rp_xq_flip(&qba);
            rp_time t = rp_engine_next_time(A), tb = rp_engine_next_time(B);
            if (tb < t)
                t = tb;
            rp_xq *qs[2] = {&qab, &qba};
            for (int k = 0; k < 2; k++) {
                const rp_xbuf *r = rp_xq_buf(qs[k], qs[k]->w ^ 1);
                if (r->n) {
                    assert_true(r->min_arrive >= prev_lim);
                    for (size_t j = 0; j < r->n; j++)
                        assert_true(r->buf[j].m->arrive >= r->min_arrive);
                    if (r->min_arrive < t)
                        t = r->min_arrive;
                } else if (windows) { /* (a zeroed rp_xq starts with min_arrive 0) */
                    assert_int_equal(r->min_arrive, RP_TIME_MAX);
                }
            }
            if (t == RP_TIME_MAX)
                break;
            assert_true(t >= prev_lim);
            rp_time lim = t + L;
            sa.lo = sb.lo = t;
            sa.hi = sb.hi = lim;
            for (int k = 0; k < 2; k++) {
                int side = (mode == 1) ? k : 1 - k;
                rp_engine *e = side ? B : A;
                rp_xq_drain(side ? &qab : &qba);
                while (rp_engine_step_before(e, lim))
                    ;
                assert_true(rp_engine_next_time(e) >= lim);
            }
            prev_lim = lim;
            windows++;
        }
        assert_int_equal(qab.oom, 0);
        assert_int_equal(qba.oom, 0);
    }
    assert_int_equal(sa.bad, 0);
    assert_int_equal(sb.bad, 0);
    assert_int_equal(pool.live, 0);
    out->a = sa.log;
    out->b = sb.log;
    out->windows = windows;
    rp_xq_fini(&qab);
    rp_xq_fini(&qba);
    rp_msg_pool_fini(&pool);
    rp_engine_fini(&ea);
    rp_engine_fini(&eb);
}

static void test_cross_determinism(void **state)
{
    (void)state;
    static pp_result r[4];
    pp_run(0, &r[0]);
    pp_run(1, &r[1]);
    pp_run(1, &r[2]);
    pp_run(2, &r[3]);
    assert_true(r[0].b.n >= 12);
    assert_int_equal(r[0].a.n, r[0].b.n); /* every request answered */
    assert_true(r[1].windows > 3);
    for (int k = 1; k < 4; k++) {
        assert_int_equal(r[k].a.n, r[0].a.n);
        assert_int_equal(r[k].b.n, r[0].b.n);
        assert_memory_equal(r[k].a.at, r[0].a.at, sizeof r[0].a.at[0] * (size_t)r[0].a.n);
        assert_memory_equal(r[k].a.addr, r[0].a.addr, sizeof r[0].a.addr[0] * (size_t)r[0].a.n);
        assert_memory_equal(r[k].b.at, r[0].b.at, sizeof r[0].b.at[0] * (size_t)r[0].b.n);
        assert_memory_equal(r[k].b.addr, r[0].b.addr, sizeof r[0].b.addr[0] * (size_t)r[0].b.n);
    }
    assert_int_equal(r[1].windows, r[2].windows);
    assert_int_equal(r[1].windows, r[3].windows);
    /* requests arrive in send order per link and no earlier than latency after 0 */
    for (int i = 0; i < r[0].b.n; i++) {
        assert_true(r[0].b.at[i] >= 8000);
        if (i)
            assert_true(r[0].b.at[i] >= r[0].b.at[i - 1]);
    }
}

/* The queues a partition wrote in a window (rp_xq.written): a queue is
 * listed once, at its first message of the window, in first-write order;
 * the window loop (replay/parallel.c) flips only those and clears the list. */
static void test_xq_written_list(void **state)
{
    (void)state;
    rp_engine A, B;
    assert_int_equal(rp_engine_init(&A), 0);
    assert_int_equal(rp_engine_init(&B), 0);
    rp_msg_pool pool = {0};
    xlog got = {0};
    rp_port dst = {.notify = xlog_note, .owner = &got};
    rp_xq_list written = {0};
    rp_xq q[3];
    memset(q, 0, sizeof q);
    rp_link l[3];
    for (int i = 0; i < 3; i++) {
        q[i].written = &written;
        q[i].to = (uint32_t)i;
        rp_link_init(&l[i], &B, &dst, XL, 0, 0);
        rp_link_cross(&l[i], &A, &q[i]);
    }
    /* nothing written: nothing listed */
    assert_int_equal(written.n, 0);
    int order[] = {2, 0, 2, 2, 0};
    for (int i = 0; i < 5; i++) {
        rp_msg *m = rp_msg_alloc(&pool);
        assert_non_null(m);
        m->addr = (uint64_t)i;
        rp_link_send(&l[order[i]], m, 0);
    }
    assert_int_equal(written.n, 2);
    assert_ptr_equal(written.v[0], &q[2]);
    assert_ptr_equal(written.v[1], &q[0]);
    assert_int_equal(rp_xq_buf(&q[2], q[2].w)->n, 3);
    assert_int_equal(rp_xq_buf(&q[0], q[0].w)->n, 2);
    assert_int_equal(rp_xq_buf(&q[1], q[1].w)->n, 0);
    assert_false(written.oom);
    /* serial point: flip the written ones, clear the list; the next window's
     * first message lists a queue again */
    for (size_t i = 0; i < written.n; i++)
        rp_xq_flip(written.v[i]);
    written.n = 0;
    rp_xq_drain(&q[2]);
    rp_xq_drain(&q[0]);
    assert_int_equal(rp_xq_buf(&q[2], q[2].w ^ 1)->n, 0);
    rp_msg *m = rp_msg_alloc(&pool);
    rp_link_send(&l[1], m, XL);
    assert_int_equal(written.n, 1);
    assert_ptr_equal(written.v[0], &q[1]);
    while (rp_engine_step_before(&B, RP_TIME_MAX))
        ;
    assert_int_equal(got.n, 5); /* the five of the first window reached B */
    rp_xq_drain(&q[1]); /* not flipped: its message stays in the write buffer */
    assert_int_equal(rp_xq_buf(&q[1], q[1].w)->n, 1);
    rp_xq_flip(&q[1]);
    rp_xq_drain(&q[1]);
    while (rp_engine_step_before(&B, RP_TIME_MAX))
        ;
    assert_int_equal(got.n, 6);
    for (int i = 0; i < 3; i++)
        rp_xq_fini(&q[i]);
    rp_xq_list_fini(&written);
    rp_engine_fini(&A);
    rp_engine_fini(&B);
    rp_msg_pool_fini(&pool);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_order),        cmocka_unit_test(test_past_refused),
        cmocka_unit_test(test_cancel_and_wake), cmocka_unit_test(test_link_bandwidth),
        cmocka_unit_test(test_arbiter_as_one_link), cmocka_unit_test(test_pull_port),
        cmocka_unit_test(test_clock), cmocka_unit_test(test_schedule_in_handler),
        cmocka_unit_test(test_step_before_limit), cmocka_unit_test(test_advance_ring_heap),
        cmocka_unit_test(test_advance_first_slot),
        cmocka_unit_test(test_windows_random), cmocka_unit_test(test_cross_link_windows),
        cmocka_unit_test(test_cross_determinism), cmocka_unit_test(test_xq_written_list),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
