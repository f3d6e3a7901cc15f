/*
 * 240-walk-awaits.c - the wave walker's awaits (gcn/gcn_walk.h, trace format
 * 1.2): a wait loop recorded as one prefix iteration, the template and the
 * way out, walked with awaits off (the record as it is) and on, with the
 * caller's polls reporting "memory changed" at chosen polls: the template
 * repeats while nothing changed, a change in the prefix skips to the way out,
 * a way out whose poll reads other data goes back to the template, a wait
 * that never ends gives up after max_repeats and goes on as recorded, and a template that does not
 * start at its loop head is an inconsistency. Instruction counts are checked
 * as executed = dyn + dyn_extra - dyn_skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gcn/gcn_walk.h"

#define VADDR 0x100u
/* 0x100 s_mov_b32 s0, 0
 * 0x104 H: s_load_dword s1, s[2:3], 0x0     (the poll)
 * 0x10c s_waitcnt lgkmcnt(0)
 * 0x110 s_cmp_eq_u32 s1, 0
 * 0x114 s_cbranch_scc1 H                     (the back-edge)
 * 0x118 s_endpgm                             (llvm-mc 15, gfx803) */
static const uint32_t code[] = {0xbe800080u, 0xc0020041u, 0x00000000u, 0xbf8c007fu,
                                0xbf068001u, 0xbf85fffbu, 0xbf810000u};

/* dyn 0 s_mov; 1-4 prefix iteration (taken); 5-8 template (taken); 9-12 the
 * way out (not taken); 13 s_endpgm */
static const uint8_t branches[] = {0x3}; /* T, T, n */
static const uint64_t exec_at[] = {0}, exec_val[] = {~0ull};
static const uint64_t addr = 0x2000;
static const uint64_t aw_at[] = {5}, aw_len[] = {4}, aw_pc[] = {0x104};

typedef struct fixture {
    gcn_program *p;
    trc_mem_op mem[3];
    trc_wave tw;
} fixture;

static void setup(fixture *f, uint64_t at)
{
    memset(f, 0, sizeof *f);
    f->p = gcn_program_decode(NULL, (const uint8_t *)code, sizeof code, VADDR);
    assert_non_null(f->p);
    for (int i = 0; i < 3; i++)
        f->mem[i] = (trc_mem_op){.flags = TRC_MO_LOAD | TRC_MO_SMEM, .bytes_per_lane = 4, .exec = 1, .addr = &addr};
    static uint64_t at_v[1];
    at_v[0] = at;
    f->tw = (trc_wave){.n_instr = 14, .n_branch = 3, .branch_taken = branches, .n_exec = 1, .exec_at = exec_at,
                       .exec_val = exec_val, .n_mem = 3, .mem = f->mem, .n_await = 1, .await_at = at_v,
                       .await_len = aw_len, .await_pc = aw_pc};
}

/* Walk to the end; the polls listed in `diff` (1-based, in poll order) report
 * a change: a hard one (aw_hard), or a soft one when listed negated.
 * Returns instructions executed, or -1 (w->err). */
static long walk(gcn_walk *w, const fixture *f, int on, uint64_t max, const int *diff, int nd, int *polls)
{
    gcn_walk_init(w, f->p, 0, &f->tw);
    if (on)
        gcn_walk_awaits_on(w, max);
    long n = 0;
    *polls = 0;
    while (!w->ended) {
        const gcn_insn *in = gcn_walk_insn(w);
        if (!in)
            return -1;
        if (gcn_walk_is_mem(in)) {
            const trc_mem_op *op;
            if (gcn_walk_mem(w, in, &op) < 0)
                return -1;
            if (w->aw_state != GCN_AW_NONE) {
                ++*polls;
                for (int i = 0; i < nd; i++)
                    if (diff[i] == *polls || diff[i] == -*polls) {
                        w->aw_diff = 1;
                        w->aw_hard |= diff[i] > 0;
                    }
            }
        }
        if (gcn_walk_step(w, in) < 0)
            return -1;
        n++;
    }
    if (gcn_walk_end(w) != 0)
        return -1;
    assert_int_equal((uint64_t)n, w->dyn + w->dyn_extra - w->dyn_skipped);
    return n;
}

static void test_off_walks_the_record(void **state)
{
    (void)state;
    fixture f;
    setup(&f, aw_at[0]);
    gcn_walk w;
    int polls;
    assert_int_equal(walk(&w, &f, 0, 0, NULL, 0, &polls), 14);
    assert_int_equal(polls, 0);
    gcn_program_free(f.p);
}

static void test_template_repeats_until_a_change(void **state)
{
    (void)state;
    fixture f;
    setup(&f, aw_at[0]);
    gcn_walk w;
    int polls, d[] = {4};
    /* polls 1 prefix, 2 and 3 the template (no change: again), 4 the template
     * (changed: the way out), 5 the way out (as recorded: done) */
    long n = walk(&w, &f, 1, 100, d, 1, &polls);
    if (n < 0) fail_msg("%s", w.err);
    assert_int_equal(polls, 5);
    assert_int_equal(n, 1 + 4 + 3 * 4 + 4 + 1);
    assert_int_equal(w.aw_repeats, 2);
    assert_int_equal(w.aw_iters, 4); /* one prefix iteration, three template walks */
    assert_int_equal(w.aw_check, 0); /* no await left */
    gcn_program_free(f.p);
}

static void test_change_in_prefix_skips_to_the_way_out(void **state)
{
    (void)state;
    fixture f;
    setup(&f, aw_at[0]);
    gcn_walk w;
    int polls, d[] = {1};
    long n = walk(&w, &f, 1, 100, d, 1, &polls);
    if (n < 0) fail_msg("%s", w.err);
    assert_int_equal(polls, 2);          /* the prefix's, then the way out's */
    assert_int_equal(n, 1 + 4 + 4 + 1);  /* the template was not executed */
    assert_int_equal(w.dyn_skipped, 4);
    assert_int_equal(w.aw_repeats, 0);
    gcn_program_free(f.p);
}

static void test_failed_way_out_waits_again(void **state)
{
    (void)state;
    fixture f;
    setup(&f, aw_at[0]);
    gcn_walk w;
    int polls, d[] = {2, 3, 5};
    /* 1 prefix; 2 template changed -> way out; 3 way out reads other data ->
     * back to the template; 4 template (no change) -> again; 5 changed -> way
     * out; 6 as recorded -> done */
    long n = walk(&w, &f, 1, 100, d, 3, &polls);
    if (n < 0) fail_msg("%s", w.err);
    assert_int_equal(polls, 6);
    assert_int_equal(n, 1 + 4 + 4 + 4 + 4 + 4 + 4 + 1);
    assert_int_equal(w.aw_repeats, 2);
    gcn_program_free(f.p);
}

/* A wait whose polls never read other data: after max_repeats repetitions
 * of the template the walk gives up, goes on with the recorded way out and
 * counts it (the rest of the wave is walked, no walk error). */
static void test_endless_wait_gives_up(void **state)
{
    (void)state;
    fixture f;
    setup(&f, aw_at[0]);
    gcn_walk w;
    int polls;
    long n = walk(&w, &f, 1, 50, NULL, 0, &polls);
    if (n < 0) fail_msg("%s", w.err);
    assert_int_equal(w.aw_gave_up, 1);
    assert_int_equal(w.aw_gave_up_pc, 0x104);
    assert_int_equal(w.aw_repeats, 50);
    /* prefix, template, 50 repeats; the way out after a give-up is no poll (a
     * plain load: its data is checked) */
    assert_int_equal(polls, 1 + 1 + 50);
    assert_int_equal(n, 1 + 4 + 4 + 50 * 4 + 4 + 1);
    assert_int_equal(w.aw_check, 0);
    gcn_program_free(f.p);
}

/* The way out's poll keeps reading other data (memory changed, never to what
 * the recording saw): back to the template each time, then given up from
 * inside the way out. */
static void test_way_out_that_never_matches_gives_up(void **state)
{
    (void)state;
    fixture f;
    setup(&f, aw_at[0]);
    gcn_walk w;
    int polls, d[64];
    for (int i = 0; i < 64; i++)
        d[i] = i + 2; /* every poll after the prefix's reads other data */
    long n = walk(&w, &f, 1, 3, d, 64, &polls);
    if (n < 0) fail_msg("%s", w.err);
    assert_int_equal(w.aw_gave_up, 1);
    assert_int_equal(w.aw_repeats, 3);
    gcn_program_free(f.p);
}

/* A RETRY await: the loop's only recorded iteration (dyn 1-4 of a record
 * whose back-edge was not taken: s_mov, iteration, s_endpgm = 6) repeats
 * while its poll reads other data, and goes on when it reads the recorded
 * value; one that never does gives up after GCN_WALK_MAX_RETRY and counts it. */
static const uint8_t once[] = {0x0}; /* n */
static const uint64_t rt_at[] = {1}, rt_len[] = {4};
static const uint32_t rt_kind[] = {TRC_AWAIT_RETRY};

static void setup_retry(fixture *f)
{
    setup(f, 0);
    f->tw.n_instr = 6;
    f->tw.n_branch = 1;
    f->tw.branch_taken = once;
    f->tw.n_mem = 1;
    f->tw.await_at = rt_at;
    f->tw.await_len = rt_len;
    f->tw.await_kind = rt_kind;
}

static void test_retry_repeats_while_memory_differs(void **state)
{
    (void)state;
    fixture f;
    setup_retry(&f);
    gcn_walk w;
    int polls, d[] = {1, 2, 3};
    long n = walk(&w, &f, 1, 100, d, 3, &polls);
    if (n < 0) fail_msg("%s", w.err);
    assert_int_equal(polls, 4);          /* three differ: three more walks, the fourth reads the recorded value */
    assert_int_equal(n, 1 + 4 * 4 + 1);
    assert_int_equal(w.aw_repeats, 3);
    assert_int_equal(w.aw_gave_up, 0);
    /* off, or nothing differs: the record as it is */
    assert_int_equal(walk(&w, &f, 1, 100, NULL, 0, &polls), 6);
    assert_int_equal(walk(&w, &f, 0, 0, d, 3, &polls), 6);
    gcn_program_free(f.p);
}

static void test_retry_gives_up(void **state)
{
    (void)state;
    fixture f;
    setup_retry(&f);
    gcn_walk w;
    int polls;
    int *d = malloc(sizeof(int) * (GCN_WALK_MAX_RETRY + 2));
    for (int i = 0; i < (int)GCN_WALK_MAX_RETRY + 2; i++)
        d[i] = i + 1;
    long n = walk(&w, &f, 1, 1u << 30, d, (int)GCN_WALK_MAX_RETRY + 2, &polls);
    if (n < 0) fail_msg("%s", w.err);
    assert_int_equal(w.aw_gave_up, 1);
    assert_int_equal(w.aw_repeats, GCN_WALK_MAX_RETRY);
    /* a smaller max_repeats (sim.await_max_polls) bounds it too */
    n = walk(&w, &f, 1, 100, d, (int)GCN_WALK_MAX_RETRY + 2, &polls);
    free(d);
    if (n < 0) fail_msg("%s", w.err);
    assert_int_equal(w.aw_gave_up, 1);
    assert_int_equal(w.aw_repeats, 100);
    gcn_program_free(f.p);
}

/* Soft differences: a flag set to another value than the recording's. After
 * a hard change in the template (the flag was set), a soft difference in the
 * way out ends the wait (counted in aw_soft_exits); after a soft change in
 * the template (a counter that moved), it waits again as before. */
static void test_soft_way_out_after_a_hard_change_leaves(void **state)
{
    (void)state;
    fixture f;
    setup(&f, aw_at[0]);
    gcn_walk w;
    int polls, d[] = {2, -3};
    /* 1 prefix; 2 template: hard change -> way out; 3 way out: soft -> done */
    long n = walk(&w, &f, 1, 100, d, 2, &polls);
    if (n < 0) fail_msg("%s", w.err);
    assert_int_equal(polls, 3);
    assert_int_equal(n, 1 + 4 + 4 + 4 + 1);
    assert_int_equal(w.aw_soft_exits, 1);
    assert_int_equal(w.aw_gave_up, 0);
    gcn_program_free(f.p);
}

static void test_soft_way_out_after_a_soft_change_waits(void **state)
{
    (void)state;
    fixture f;
    setup(&f, aw_at[0]);
    gcn_walk w;
    int polls, d[] = {-2, -3, 5};
    /* 1 prefix; 2 template soft change -> way out; 3 way out soft -> back
     * (the exact rule); 4 template unchanged -> again; 5 hard -> way out; 6
     * as recorded -> done */
    long n = walk(&w, &f, 1, 100, d, 3, &polls);
    if (n < 0) fail_msg("%s", w.err);
    assert_int_equal(polls, 6);
    assert_int_equal(w.aw_soft_exits, 0);
    assert_int_equal(w.aw_repeats, 2);
    gcn_program_free(f.p);
}

/* A RETRY await whose poll differs softly (a status word set to another
 * value) ends at once: no repeat, counted as a soft exit. */
static void test_retry_soft_difference_leaves(void **state)
{
    (void)state;
    fixture f;
    setup_retry(&f);
    gcn_walk w;
    int polls, d[] = {-1};
    long n = walk(&w, &f, 1, 100, d, 1, &polls);
    if (n < 0) fail_msg("%s", w.err);
    assert_int_equal(polls, 1);
    assert_int_equal(w.aw_repeats, 0);
    assert_int_equal(w.aw_soft_exits, 1);
    assert_int_equal(w.aw_gave_up, 0);
    gcn_program_free(f.p);
}

static void test_template_away_from_its_head(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 6); /* dyn 6 is s_waitcnt, not the loop head */
    gcn_walk w;
    int polls;
    assert_int_equal(walk(&w, &f, 1, 50, NULL, 0, &polls), -1);
    assert_true(strstr(w.err, "away from its loop head") || strstr(w.err, "never reached at its loop head"));
    gcn_program_free(f.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_off_walks_the_record),
        cmocka_unit_test(test_template_repeats_until_a_change),
        cmocka_unit_test(test_change_in_prefix_skips_to_the_way_out),
        cmocka_unit_test(test_failed_way_out_waits_again),
        cmocka_unit_test(test_endless_wait_gives_up),
        cmocka_unit_test(test_way_out_that_never_matches_gives_up),
        cmocka_unit_test(test_template_away_from_its_head),
        cmocka_unit_test(test_soft_way_out_after_a_hard_change_leaves),
        cmocka_unit_test(test_soft_way_out_after_a_soft_change_waits),
        cmocka_unit_test(test_retry_soft_difference_leaves),
        cmocka_unit_test(test_retry_repeats_while_memory_differs),
        cmocka_unit_test(test_retry_gives_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
