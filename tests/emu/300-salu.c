/*
 * 300-salu.c - scalar ALU, program flow and wave-status semantics on a
 * hand-built wavefront (3xx_wave_harness.h): 64-bit adds with carry, SCC
 * results, shifts, bit-field extract, branches with recorded outcomes,
 * s_getpc/s_swappc/s_setpc with recorded indirect targets, saveexec with
 * recorded EXEC changes, MODE through s_setreg/s_getreg, s_trap, s_barrier,
 * invalid and unimplemented instructions; every bit-count / find-first /
 * bit-field / quad-mask / saveexec variant with its SCC result, VGPR indexing
 * (s_set_gpr_idx_*), VSKIP, hardware registers, s_memtime, and graphics-only
 * encodings stopping with a message. Expected values follow the ISA manual's
 * definitions (Ch. 12), written out here.
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
    h.w.status = GCN_WAVE_RUNNING;
    /* s_sleep yields to the scheduler with the pc past it */
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_SLEEP);
    assert_int_equal(h.w.s[0], 2);
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
    assert_non_null(strstr(h.w.err, "kernel test_kernel: wg (0,0,0) wave 0: illegal instruction at pc 0x104 (encoding 0xffffffff"));
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

static void test_bits(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_salu_bits, 0);
    gcn_wave *w = &h.w;
    uint64_t s01 = 0x80000000000f0f01ull;
    w->s[0] = (uint32_t)s01; w->s[1] = (uint32_t)(s01 >> 32);
    w->s[2] = 0x12345678; w->s[3] = 0x100; w->s[4] = 0xfffffff0u; w->s[30] = 0x7fffffff;
    run_ok(&h);
    assert_int_equal(w->s[10], 10);                       /* popcount of s[0:1] */
    assert_int_equal(w->s[11], 32 - 13);                  /* zeros of 0x12345678 */
    assert_int_equal(w->s[12], 8);                        /* first 1 of 0x100 */
    assert_int_equal(w->s[13], 1);                        /* first 0 of ...0f01 */
    assert_int_equal(w->s[14], 3);                        /* leading zeros of 0x12345678 */
    assert_int_equal(w->s[15], 28);                       /* bits equal to the sign of -16, from the MSB */
    assert_int_equal(w->s[16], 1);
    assert_int_equal(w->s[18] | (uint64_t)w->s[19] << 32, 0x8015); /* quads 0,2,4 and 15 non-zero */
    assert_int_equal(w->s[20] | (uint64_t)w->s[21] << 32, 0xf0000000000f0f0full);
    assert_int_equal(w->s[22], 0xfffffff8u);              /* sign-extended nibble 8 */
    assert_int_equal(w->s[24] | (uint64_t)w->s[25] << 32, (s01 >> 16) & 0xffffffffull);
    assert_int_equal(w->s[26] | (uint64_t)w->s[27] << 32, ((1ull << 36) - 1) << 4);
    assert_int_equal(w->s[28], 0x12345678u + 16);         /* |-16 - 0x12345678| */
    assert_int_equal(w->s[29], 1);                        /* -16 < 0 */
    assert_int_equal(w->s[30], 0x80000000u);
    assert_int_equal(w->s[31], 1);                        /* s_addk signed overflow */
    assert_int_equal(w->s[32], 0xfffffff0u);
    assert_int_equal(w->s[33], 1);                        /* s_min_i32: SCC = s0 < s1 */
    assert_int_equal(w->s[34] | w->s[35], 0);
    assert_int_equal(w->s[36], 0);                        /* result 0: SCC 0 */
    assert_int_equal(w->s[38] | (uint64_t)w->s[39] << 32, 0xfffffffffffffff8ull);
    assert_int_equal(w->s[40], 0);
    assert_int_equal(w->s[41], 0);
    assert_int_equal(w->s[42], 0x12345678u);              /* s_movrels: s[0 + m0] */
    assert_int_equal(w->s[45], 0x12345678u);              /* s_movreld: s[43 + m0] */
    wave_fini(&h);
}

static void test_saveexec_all(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_salu_saveexec_all, 0);
    gcn_wave *w = &h.w;
    uint64_t S = 0x00ff00ff0f0f0f0full, E = 0xffff0000ffff0000ull;
    w->s[0] = (uint32_t)S; w->s[1] = (uint32_t)(S >> 32);
    w->s[2] = (uint32_t)E; w->s[3] = (uint32_t)(E >> 32);
    gcn_set_exec(w, E);
    run_ok(&h);
#define P(i) ((uint64_t)w->s[i] | (uint64_t)w->s[(i) + 1] << 32)
    for (int i = 10; i <= 24; i += 2) assert_int_equal(P(i), E); /* every form saves the old EXEC */
    assert_int_equal(w->s[30], 1);
    assert_int_equal(P(40), S ^ E);
    assert_int_equal(P(42), S & ~E);
    assert_int_equal(P(44), S | ~E);
    assert_int_equal(P(46), ~(S & E));
    assert_int_equal(P(48), ~(S | E));
    assert_int_equal(P(50), ~(S ^ E));
    assert_int_equal(w->s[31], 0); /* EXEC = 0 -> SCC 0 */
    assert_int_equal(gcn_exec_mask(w), E);
#undef P
    wave_fini(&h);
}

static void test_modes(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_salu_modes, 0);
    gcn_wave *w = &h.w;
    w->s[5] = 3; w->s[6] = 10; w->hw_id = 0x1234;
    for (unsigned l = 0; l < 64; l++) { g_vregs[3][l] = 300 + l; g_vregs[10][l] = 1000 + l; g_vregs[0][l] = l; }
    uint64_t ex = 0xfffffffffffffff0ull;
    gcn_set_exec(w, ex);
    run_ok(&h);
    for (unsigned l = 0; l < 64; l++) {
        int on = (ex >> l) & 1;
        assert_int_equal(g_vregs[4][l], on ? 300 + l : 0);  /* v[1+3] = v[0+3] */
        assert_int_equal(g_vregs[1][l], 0);
        assert_int_equal(g_vregs[20][l], on ? 1000 + l : 0); /* src0 indexed by 10 */
        assert_int_equal(g_vregs[32][l], on ? 7 : 0);        /* dst indexed by 10 */
        assert_int_equal(g_vregs[22][l], 0);
        assert_int_equal(g_vregs[30][l], 0);                 /* skipped under VSKIP */
        assert_int_equal(g_vregs[31][l], on ? 6 : 0);
    }
    assert_int_equal(w->s[10], MODE_HIP);      /* GPR_IDX_EN and VSKIP off again */
    assert_int_equal(w->s[11], 32u << 12);     /* LDS_ALLOC: 8 KiB in 64-dword units */
    assert_int_equal(w->s[12], 0x1234);
    assert_int_equal(w->s[13], 1);             /* STATUS.SCC */
    assert_int_equal(w->s[14], 1);             /* no debugger: s_cbranch_cdbgsys not taken */
    uint64_t t0 = w->s[16] | (uint64_t)w->s[17] << 32, t1 = w->s[20] | (uint64_t)w->s[21] << 32;
    assert_true(t1 > t0);
    wave_fini(&h);
}

static void test_graphics_only(void **state)
{
    (void)state;
    struct { const uint32_t *p; size_t n; const char *name; } g[] = {
        {prog_gfx_exp, sizeof prog_gfx_exp / 4, "graphics instruction exp not supported"},
        {prog_gfx_image, sizeof prog_gfx_image / 4, "graphics instruction image_sample not supported"},
        {prog_gfx_interp, sizeof prog_gfx_interp / 4, "graphics instruction v_interp_p1_f32 not supported"},
    };
    for (unsigned i = 0; i < 3; i++) {
        harness h;
        wave_init_(&h, g[i].p, g[i].n, 0);
        assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_ILLEGAL);
        if (!strstr(h.w.err, g[i].name)) print_error("%s\n", h.w.err);
        assert_non_null(strstr(h.w.err, g[i].name));
        assert_non_null(strstr(h.w.err, "wg (0,0,0) wave 0"));
        wave_fini(&h);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add64_and_friends), cmocka_unit_test(test_cselect_after_addc),
        cmocka_unit_test(test_branches_recorded), cmocka_unit_test(test_calls),
        cmocka_unit_test(test_saveexec_recorded), cmocka_unit_test(test_hwreg_mode),
        cmocka_unit_test(test_trap),              cmocka_unit_test(test_barrier_resume),
        cmocka_unit_test(test_illegal),           cmocka_unit_test(test_bits),
        cmocka_unit_test(test_saveexec_all),      cmocka_unit_test(test_modes),
        cmocka_unit_test(test_graphics_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
