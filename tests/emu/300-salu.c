/*
 * 300-salu.c - scalar ALU, program flow and wave-status semantics on a
 * hand-built wavefront (3xx_wave_harness.h): 64-bit adds with carry, SCC
 * results, shifts, bit-field extract, branches with recorded outcomes,
 * s_getpc/s_swappc/s_setpc with recorded indirect targets, saveexec with
 * recorded EXEC changes, MODE through s_setreg/s_getreg, s_trap, s_barrier,
 * invalid and unimplemented instructions.
 */
#include "3xx_wave_harness.h"

static void test_add64_and_friends(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_salu_add64, 0);
    gcn_wave *w = &h.w;
    w->s[0] = 0xffffffffu; w->s[1] = 1; w->s[4] = 2; w->s[5] = 3;
    w->s[9] = 0x80000000u; w->s[10] = 1; /* INT_MIN - 1 overflows */
    w->s[15] = 0x00001234;
    run_ok(&h);
    assert_int_equal(w->s[2], 1);
    assert_int_equal(w->s[3], 5); /* 1 + 3 + carry */
    assert_int_equal(w->s[6], 0); /* s_cselect reads SCC = carry-out of s_addc_u32 = 0 */
    assert_int_equal(w->s[7], 0);
    assert_int_equal(w->s[8], 0x7fffffffu);
    assert_int_equal(w->s[11], 1);          /* signed overflow sets SCC */
    assert_int_equal(((uint64_t)w->s[13] << 32 | w->s[12]), (0x1ffffffffull << 36));
    assert_int_equal(w->s[14], 0x23);       /* bits [11:4] of 0x1234 */
    assert_int_equal(w->s[16], 0xffff8000u);
    assert_int_equal(w->s[17], 0xfffff800u);
    assert_int_equal(w->s[18], 0x18000u);
    assert_int_equal(w->s[19], 77);
    assert_int_equal(w->s[20], 0);
    assert_int_equal(w->s[21], 0xfffffffeu);
    assert_int_equal(w->n_instr, 13);
    wave_fini(&h);
}

static void test_cselect_after_addc(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_salu_add64, 0);
    h.w.s[1] = 0xffffffffu; h.w.s[5] = 1; /* s_addc carries out */
    run_ok(&h);
    assert_int_equal(h.w.s[6], 0xffffffffu);
    assert_int_equal(h.w.s[7], 0xffffffffu);
    assert_int_equal(h.w.s[3], 0);
    wave_fini(&h);
}

static void test_branches_recorded(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_salu_branch, 1);
    h.w.s[0] = 0; /* 0 < 10: skip s_mov s1,5; then loop s0 = 1..4 */
    run_ok(&h);
    assert_int_equal(h.w.s[0], 4);
    assert_int_equal(h.w.s[1], 1); /* the loop body is only s_add_u32 s0 */
    assert_int_equal(g_log.n_branch, 5);
    int want[5] = {1, 1, 1, 1, 0};
    for (int i = 0; i < 5; i++) assert_int_equal(g_log.taken[i], want[i]);
    assert_true(g_log.ended);
    assert_int_equal(g_log.end_n, h.w.n_instr);
    wave_fini(&h);

    WAVE_INIT(&h, prog_salu_branch, 0);
    h.w.s[0] = 20; /* not taken: s1 = 5 + 1, loop exits at once */
    run_ok(&h);
    assert_int_equal(h.w.s[1], 6);
    assert_int_equal(h.w.s[0], 21);
    assert_int_equal(g_log.n_branch, 0); /* not recording */
    wave_fini(&h);
}

static void test_calls(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_salu_calls, 1);
    run_ok(&h);
    assert_int_equal(h.w.s[10], 42);
    uint64_t ret = (uint64_t)h.w.s[30] | (uint64_t)h.w.s[31] << 32;
    assert_int_equal(ret, h.w.image_base + VADDR + 16);
    assert_int_equal(g_log.n_indirect, 2);
    assert_int_equal(g_log.indirect[0], VADDR + 20); /* ELF vaddr of the callee */
    assert_int_equal(g_log.indirect[1], VADDR + 16); /* return */
    assert_int_equal(h.w.n_instr, 7);
    wave_fini(&h);
}

static void test_saveexec_recorded(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_salu_saveexec, 1);
    for (unsigned l = 0; l < 64; l++) g_vregs[0][l] = l;
    gcn_set_exec(&h.w, 0x0000ffffffffffffull);
    run_ok(&h);
    for (unsigned l = 0; l < 64; l++) {
        uint32_t want = l < 10 ? 8 : l < 48 ? 1 : 0;
        assert_int_equal(g_vregs[1][l], want);
    }
    assert_int_equal(gcn_exec_mask(&h.w), 0x0000ffffffffffffull);
    assert_int_equal(g_log.n_exec, 2);
    assert_int_equal(g_log.exec_at[0], 2); /* after v_cmp (0) and s_and_saveexec (1) */
    assert_int_equal(g_log.exec_val[0], 0x3ff);
    assert_int_equal(g_log.exec_at[1], 4);
    assert_int_equal(g_log.exec_val[1], 0x0000ffffffffffffull);
    assert_int_equal(g_log.n_branch, 1);
    assert_int_equal(g_log.taken[0], 0);
    assert_int_equal(h.w.s[4], 0xffffffffu);
    assert_int_equal(h.w.s[5], 0xffffu);
    wave_fini(&h);
}

static void test_hwreg_mode(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_salu_hwreg, 0);
    run_ok(&h);
    assert_int_equal(h.w.s[0], MODE_HIP);
    assert_int_equal(h.w.s[1], 0xf);      /* FP_DENORM f32 = 3, f64 = 3 */
    assert_int_equal(h.w.s[3], MODE_HIP); /* back to flushed */
    assert_int_equal(h.w.mode, MODE_HIP);
    wave_fini(&h);
}

static void test_trap(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_salu_trap, 0);
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_TRAP);
    assert_non_null(strstr(h.w.err, "test_kernel"));
    assert_non_null(strstr(h.w.err, "s_trap 2"));
    assert_non_null(strstr(h.w.err, "pc 0x104"));
    assert_int_equal(h.w.pc, VADDR + 4);
    wave_fini(&h);
}

static void test_barrier_resume(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_salu_barrier, 1);
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_BARRIER);
    assert_int_equal(h.w.s[0], 1);
    assert_int_equal(h.w.pc, VADDR + 8);
    assert_false(g_log.ended);
    run_ok(&h);
    assert_int_equal(h.w.s[0], 2);
    assert_int_equal(h.w.n_instr, 8);
    assert_true(g_log.ended);
    assert_int_equal(g_log.end_n, 8);
    wave_fini(&h);
}

static void test_illegal(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_illegal_word, 0);
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_ILLEGAL);
    print_message("%s\n", h.w.err);
    assert_non_null(strstr(h.w.err, "kernel test_kernel: illegal instruction at pc 0x104 (encoding 0xffffffff"));
    assert_non_null(strstr(h.w.err, "invalid encoding"));
    assert_int_equal(h.w.s[0], 1);
    wave_fini(&h);

    WAVE_INIT(&h, prog_unimpl_op, 0);
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_ILLEGAL);
    print_message("%s\n", h.w.err);
    assert_non_null(strstr(h.w.err, "pc 0x100 (encoding 0x94800200"));
    assert_non_null(strstr(h.w.err, "s_cbranch_g_fork"));
    assert_non_null(strstr(h.w.err, "not implemented"));
    wave_fini(&h);

    /* running off the end of .text */
    static const uint32_t nop_only[] = {0xbf800000};
    WAVE_INIT(&h, nop_only, 0);
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_ILLEGAL);
    assert_non_null(strstr(h.w.err, "outside"));
    wave_fini(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add64_and_friends), cmocka_unit_test(test_cselect_after_addc),
        cmocka_unit_test(test_branches_recorded), cmocka_unit_test(test_calls),
        cmocka_unit_test(test_saveexec_recorded), cmocka_unit_test(test_hwreg_mode),
        cmocka_unit_test(test_trap),              cmocka_unit_test(test_barrier_resume),
        cmocka_unit_test(test_illegal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
