/* The fast-forward's schedule (replay/lanes.c, rp_lanes.h) driven through
 * random interleavings of its threads (one per lane), each step's work
 * finishing at a random later point, as threads that let go of the lock do:
 * no slot is decoded into while a lane has still to apply the job it holds
 * (the stop 53 CI hang: a thread back from warming claimed a slot in use),
 * every lane applies every job once and in order, a failure stops every
 * lane at the first failed job, and a run always ends (no thread waits for
 * ever). Deterministic: a fixed generator and seeds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "replay/rp_lanes.h"

#define MAXL 5
#define MAXQ 6

static uint64_t rng;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static uint32_t ww_percent; /* how often decoding "would wait" */
static bool would_wait(void *ctx, uint32_t job)
{
    (void)ctx;
    (void)job;
    return rnd(100) < ww_percent;
}

/* what the slots hold, as the threads see it */
typedef struct shadow {
    int64_t job[MAXQ];   /* -1: never used */
    bool decoded[MAXQ];
    uint32_t mask[MAXQ]; /* lanes that applied it */
} shadow;

/* A thread starts decoding job: its slot must hold nothing a lane has still to apply. */
static void start_decode(const rp_lanes *l, shadow *sh, uint32_t job)
{
    uint32_t s = job % l->q, all = (1u << l->lanes) - 1;
    if (sh->job[s] >= 0 && sh->mask[s] != all)
        fail_msg("job %u decoded into slot %u while job %lld there was applied by lanes 0x%x of 0x%x", job, s,
                 (long long)sh->job[s], sh->mask[s], all);
    sh->job[s] = job;
    sh->decoded[s] = false;
    sh->mask[s] = 0;
}

typedef struct thr {
    rp_lanes_step st; /* its step */
    bool out;         /* working on st outside the lock */
    uint32_t pos;     /* the next job its lane applies */
} thr;

/* Thread t (lane t) takes the lock and picks a step: whether it got one. */
static bool take(rp_lanes *l, shadow *sh, thr *th, uint32_t t)
{
    rp_lanes_step x = rp_lanes_pick(l, t, ww_percent ? would_wait : NULL, NULL);
    if (x.kind == RP_LANES_NONE)
        return false;
    if (x.kind == RP_LANES_DECODE)
        start_decode(l, sh, x.job);
    if (x.kind == RP_LANES_APPLY) {
        uint32_t s = x.job % l->q;
        assert_int_equal(sh->job[s], x.job);
        assert_true(sh->decoded[s]);
        assert_false(sh->mask[s] & (1u << t));
        assert_int_equal(x.job, th[t].pos);
    }
    th[t].st = x;
    th[t].out = true;
    return true;
}

/* One run of count jobs; fail_job (or UINT32_MAX) fails in every lane that applies it. */
static void run(rp_lanes *l, shadow *sh, uint32_t count, uint32_t fail_job)
{
    rp_lanes_start(l, count);
    for (uint32_t s = 0; s < MAXQ; s++)
        sh->job[s] = -1, sh->decoded[s] = false, sh->mask[s] = 0;
    thr th[MAXL] = {0};
    uint32_t firsts = 0;
    for (uint64_t it = 0;; it++) {
        assert_true(it < 10000000);
        bool any = false;
        for (uint32_t t = 0; t < l->lanes; t++)
            any |= th[t].out;
        if (!any) {
            /* every thread waits: one must have something to do, or the run is over */
            if (rp_lanes_done(l))
                break;
            bool moved = false;
            for (uint32_t t = 0; t < l->lanes && !moved; t++)
                moved = take(l, sh, th, t);
            if (!moved)
                fail_msg("every thread waits and the run is not over (count %u, stop_at %u)", count, l->stop_at);
            continue;
        }
        uint32_t t = rnd(l->lanes);
        if (!th[t].out) {
            take(l, sh, th, t);
            continue;
        }
        /* thread t finishes its step and takes the lock again */
        rp_lanes_step x = th[t].st;
        th[t].out = false;
        uint32_t s = x.job % l->q;
        switch (x.kind) {
        case RP_LANES_DECODE:
            assert_int_equal(sh->job[s], x.job);
            sh->decoded[s] = true;
            rp_lanes_decoded(l, x.job);
            break;
        case RP_LANES_APPLY:
            assert_int_equal(sh->job[s], x.job); /* still there while it applied */
            sh->mask[s] |= 1u << t;
            th[t].pos = x.job + 1;
            firsts += rp_lanes_applied(l, t, x.job, x.job == fail_job);
            break;
        case RP_LANES_WARM: {
            rp_lanes_step y = rp_lanes_warmed(l, x.job, rnd(2));
            if (y.kind == RP_LANES_DECODE) {
                start_decode(l, sh, y.job);
                th[t].st = y;
                th[t].out = true;
            } else
                assert_int_equal(y.kind, RP_LANES_NONE);
            break;
        }
        default:
            fail_msg("a step of kind %d handed out", (int)x.kind);
        }
    }
    if (fail_job < count) {
        assert_int_equal(l->stop_at, fail_job);
        assert_int_equal(firsts, 1);
        for (uint32_t t = 0; t < l->lanes; t++)
            assert_true(th[t].pos == fail_job || th[t].pos == fail_job + 1);
    } else {
        assert_int_equal(l->stop_at, count);
        assert_int_equal(firsts, 0);
        for (uint32_t t = 0; t < l->lanes; t++)
            assert_int_equal(th[t].pos, count);
    }
}

static void test_interleavings(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= 3000; seed++) {
        rng = 0x9E3779B97F4A7C15ull * seed;
        uint32_t lanes = 1 + rnd(MAXL), q = 1 + rnd(MAXQ);
        ww_percent = (uint32_t[]){0, 20, 60, 95}[rnd(4)];
        rp_lanes l;
        assert_int_equal(rp_lanes_init(&l, lanes, q), 0);
        shadow sh;
        for (int r = 0; r < 3; r++) { /* runs reuse the schedule */
            uint32_t count = rnd(40);
            uint32_t fail = rnd(3) == 0 && count ? rnd(count) : UINT32_MAX;
            run(&l, &sh, count, fail);
        }
        rp_lanes_fini(&l);
    }
}

/* The step the stop 53 hang needed: a thread back from warming, after the
 * others filled every slot, claims nothing. */
static void test_warm_then_full(void **state)
{
    (void)state;
    rp_lanes l;
    assert_int_equal(rp_lanes_init(&l, 2, 2), 0);
    rp_lanes_start(&l, 10);
    ww_percent = 100;
    rng = 7;
    rp_lanes_step w = rp_lanes_pick(&l, 1, would_wait, NULL); /* lane 1 goes to warm job 0 */
    assert_int_equal(w.kind, RP_LANES_WARM);
    assert_int_equal(w.job, 0);
    rp_lanes_step a = rp_lanes_pick(&l, 0, NULL, NULL), b;
    assert_int_equal(a.kind, RP_LANES_DECODE);
    assert_int_equal(a.job, 0);
    rp_lanes_decoded(&l, 0);
    b = rp_lanes_pick(&l, 0, NULL, NULL); /* lane 0 applies job 0 */
    assert_int_equal(b.kind, RP_LANES_APPLY);
    rp_lanes_applied(&l, 0, 0, false);
    b = rp_lanes_pick(&l, 0, NULL, NULL); /* and decodes job 1: both slots in use */
    assert_int_equal(b.kind, RP_LANES_DECODE);
    assert_int_equal(b.job, 1);
    rp_lanes_decoded(&l, 1);
    assert_int_equal(rp_lanes_pick(&l, 0, NULL, NULL).kind, RP_LANES_APPLY);
    rp_lanes_applied(&l, 0, 1, false);
    assert_int_equal(rp_lanes_pick(&l, 0, NULL, NULL).kind, RP_LANES_NONE); /* lane 1 has not applied job 0 */
    /* lane 1 back from warming with nothing done: job 0 is no longer its to
     * claim, nor job 2 (slot 0 holds job 0, lane 1 has still to apply it) */
    assert_int_equal(rp_lanes_warmed(&l, w.job, false).kind, RP_LANES_NONE);
    assert_int_equal(l.claimed, 2);
    rp_lanes_fini(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warm_then_full),
        cmocka_unit_test(test_interleavings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
