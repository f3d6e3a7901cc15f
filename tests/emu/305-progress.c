/*
 * 305-progress.c - the interpreter's forward-progress test (gcn_wave.h
 * "Forward progress"): a loop whose whole state repeats yields as stuck with
 * status GCN_WAVE_SPIN at its loop head and resumes there; loops whose SGPRs or
 * VGPRs change never look stuck and run to the end, or yield not stuck when
 * their time slice (slice_end) runs out or the scheduler's preempt flag is
 * set (both looked at with the loop test, so within 64 back-edges); s_sleep reports stuck when the state at the s_sleep repeats; the state
 * hash sees every SGPR and VGPR. Programs assembled with llvm-mc (gfx803),
 * the source beside each.
 */
#include "3xx_wave_harness.h"

/* loop: s_branch loop */
static const uint32_t prog_self[] = {0xbf82ffffu};
/* s_mov_b32 s0, 0; loop: s_add_u32 s0, s0, 1; s_cmp_lg_u32 s0, 100000;
 * s_cbranch_scc1 loop; s_endpgm */
static const uint32_t prog_count[] = {0xbe800080u, 0x80008100u, 0xbf07ff00u, 0x000186a0u, 0xbf85fffcu, 0xbf810000u};
/* loop: s_sleep 1; s_branch loop */
static const uint32_t prog_sleep[] = {0xbf8e0001u, 0xbf82fffeu};
/* loop: v_add_u32 v0, vcc, 1, v0; s_branch loop */
static const uint32_t prog_vcount[] = {0x32000081u, 0xbf82fffeu};

static void test_self_loop_is_stuck(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_self, 1);
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_SPIN);
    assert_int_equal(h.w.stuck, 1);
    assert_int_equal(h.w.pc, VADDR);           /* resumes at the loop head */
    assert_int_equal(h.w.state_hash, gcn_wave_state_hash(&h.w));
    /* 64 back-edges to find the loop, then two checks GCN_SPIN_CHECK_EVERY apart */
    assert_true(h.w.n_instr <= 64 + 3 * GCN_SPIN_CHECK_EVERY);
    assert_int_equal(g_log.n_branch, 0);       /* s_branch records nothing */
    /* resumed, it yields again with the same state */
    uint64_t hash = h.w.state_hash;
    h.w.status = GCN_WAVE_RUNNING;
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_SPIN);
    assert_int_equal(h.w.stuck, 1);
    assert_int_equal(h.w.state_hash, hash);
    wave_fini(&h);
}

static void test_counting_loop_runs_to_the_end(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_count, 1);
    run_ok(&h);
    assert_int_equal(h.w.s[0], 100000);
    assert_int_equal(h.w.n_instr, 1 + 3 * 100000 + 1);
    assert_int_equal(g_log.n_branch, 100000);
    wave_fini(&h);
}

static void test_time_slice_yields_not_stuck(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_count, 1);
    h.w.slice_end = 1000;
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_SPIN);
    assert_int_equal(h.w.stuck, 0);
    assert_int_equal(h.w.pc, VADDR + 4);       /* the loop head */
    /* checked with the loop test: within GCN_SPIN_CHECK_EVERY iterations (3 instructions) */
    assert_true(h.w.n_instr >= 1000 && h.w.n_instr < 1000 + 3 * GCN_SPIN_CHECK_EVERY + 3);
    uint32_t s0 = h.w.s[0];
    assert_int_equal(h.w.n_instr, 1 + 3ull * s0);
    /* resumed without a slice it finishes exactly as an uninterrupted run */
    h.w.slice_end = 0;
    h.w.status = GCN_WAVE_RUNNING;
    run_ok(&h);
    assert_int_equal(h.w.s[0], 100000);
    assert_int_equal(h.w.n_instr, 1 + 3 * 100000 + 1);
    assert_int_equal(g_log.n_branch, 100000);
    wave_fini(&h);
}

static void test_preempt_flag(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_count, 0);
    int flag = 1;
    h.w.preempt = &flag;
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_SPIN);
    assert_int_equal(h.w.stuck, 0);
    assert_true(h.w.s[0] >= 1 && h.w.s[0] <= 64); /* at the first test: within 64 back-edges */
    flag = 0;
    h.w.status = GCN_WAVE_RUNNING;
    run_ok(&h);
    assert_int_equal(h.w.s[0], 100000);
    wave_fini(&h);
}

static void test_vgpr_counter_is_not_stuck(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_vcount, 0);
    h.w.slice_end = 100000;
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_SPIN);
    assert_int_equal(h.w.stuck, 0);            /* only the slice stopped it */
    assert_true(h.w.n_instr >= 100000);
    assert_int_equal(g_vregs[0][0], h.w.n_instr / 2);
    assert_int_equal(g_vregs[0][63], h.w.n_instr / 2);
    wave_fini(&h);
}

static void test_sleep_loop(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_sleep, 0);
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_SLEEP);
    assert_int_equal(h.w.stuck, 0);            /* first s_sleep: nothing to compare with */
    assert_int_equal(h.w.pc, VADDR + 4);
    h.w.status = GCN_WAVE_RUNNING;
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_SLEEP);
    assert_int_equal(h.w.stuck, 1);            /* the same state at the same s_sleep */
    h.w.s[7] = 1;                              /* something the loop would read changed */
    h.w.status = GCN_WAVE_RUNNING;
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_SLEEP);
    assert_int_equal(h.w.stuck, 0);
    wave_fini(&h);
}

static void test_state_hash_sees_everything(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_self, 0);
    uint64_t h0 = gcn_wave_state_hash(&h.w);
    assert_int_equal(gcn_wave_state_hash(&h.w), h0);
    g_vregs[127][63] ^= 1;                     /* last VGPR, last lane */
    assert_true(gcn_wave_state_hash(&h.w) != h0);
    g_vregs[127][63] ^= 1;
    h.w.s[GCN_SREG_M0] ^= 1;
    assert_true(gcn_wave_state_hash(&h.w) != h0);
    h.w.s[GCN_SREG_M0] ^= 1;
    h.w.scc ^= 1;
    assert_true(gcn_wave_state_hash(&h.w) != h0);
    h.w.scc ^= 1;
    h.w.pc += 4;
    assert_true(gcn_wave_state_hash(&h.w) != h0);
    h.w.pc -= 4;
    assert_int_equal(gcn_wave_state_hash(&h.w), h0);
    wave_fini(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_self_loop_is_stuck),
        cmocka_unit_test(test_counting_loop_runs_to_the_end),
        cmocka_unit_test(test_time_slice_yields_not_stuck),
        cmocka_unit_test(test_preempt_flag),
        cmocka_unit_test(test_vgpr_counter_is_not_stuck),
        cmocka_unit_test(test_sleep_loop),
        cmocka_unit_test(test_state_hash_sees_everything),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
