/* 600-events: the event engine orders by (time, priority, insertion order),
 * refuses scheduling into the past and double scheduling, and links deliver
 * with latency + serialisation at their bandwidth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_order),        cmocka_unit_test(test_past_refused),
        cmocka_unit_test(test_cancel_and_wake), cmocka_unit_test(test_link_bandwidth),
        cmocka_unit_test(test_clock), cmocka_unit_test(test_schedule_in_handler),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
