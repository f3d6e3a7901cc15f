/*
 * 323-gws.c - the GDS-only DS instructions (global wave sync, ordered count)
 * on a hand-built wavefront (3xx_wave_harness.h): decode and disassembly as
 * llvm-objdump 14 prints them (gds=1 required, data0 in the ADDR byte),
 * ds_gws_barrier stopping the wave with status GCN_WAVE_GWS_BARRIER (pc past
 * it, count = data0 of the first active lane + 1, resource = offset +
 * M0[21:16]) and resuming, recording nothing, and the other GDS/GWS ops
 * refused by name. Encodings from `llvm-mc -arch=amdgcn -mcpu=gfx803
 * -show-encoding`.
 */
#include "3xx_wave_harness.h"

/* s_mov_b32 m0, 0x30000; ds_gws_barrier v1 offset:2 gds; s_endpgm */
static const uint32_t prog_gws_barrier[] = {0xbefc00ffu, 0x00030000u, 0xd93b0002u, 0x00000001u, 0xbf810000u};

static void test_gws_decode(void **state)
{
    (void)state;
    static const struct {
        uint32_t w[2];
        const char *text;
    } ok[] = {
        {{0xd93b0002u, 0x00000001u}, "ds_gws_barrier v1 offset:2 gds"},
        {{0xd9330000u, 0x00000000u}, "ds_gws_init v0 gds"},
        {{0xd9350000u, 0x00000000u}, "ds_gws_sema_v gds"},
        {{0xd9390000u, 0x00000000u}, "ds_gws_sema_p gds"},
        {{0xd9370000u, 0x000000ffu}, "ds_gws_sema_br v255 gds"},
        {{0xd9310004u, 0x00000000u}, "ds_gws_sema_release_all offset:4 gds"},
        {{0xd97f0004u, 0x02000000u}, "ds_ordered_count v2, v0 offset:4 gds"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        gcn_insn in;
        char buf[128];
        assert_int_equal(gcn_decode_one(ok[i].w, 2, 0, &in), 8);
        assert_true(in.flags & GCN_IF_GDS);
        assert_false(in.flags & (GCN_IF_LOAD | GCN_IF_STORE));
        gcn_disasm(&in, buf, sizeof buf);
        assert_string_equal(buf, ok[i].text);
    }
    /* LLVM 14 rejects them without gds, or with fields they do not use */
    static const uint32_t bad[][2] = {
        {0xd83b0000u, 0x00000001u}, /* ds_gws_barrier without gds */
        {0xd93b0000u, 0x00000100u}, /* data0 field set */
        {0xd93b0000u, 0x01000000u}, /* vdst set */
        {0xd9350000u, 0x00000001u}, /* sema_v has no operand */
        {0xd97f0000u, 0x00000100u}, /* ordered_count: data0 field */
        {0xdb3b0000u, 0x00000001u}, /* bit 25 */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gcn_insn in;
        gcn_decode_one(bad[i], 2, 0, &in);
        assert_int_equal(in.op, GCN_OP_INVALID);
    }
}

static void test_gws_barrier_status(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_gws_barrier, 1);
    for (unsigned l = 0; l < 64; l++) g_vregs[1][l] = 100 + l;
    gcn_set_exec(&h.w, ~1ull); /* lane 0 off: data0 comes from lane 1 */
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_GWS_BARRIER);
    assert_int_equal(h.w.status, GCN_WAVE_GWS_BARRIER);
    assert_int_equal(h.w.pc, VADDR + 16);          /* past the 8-byte DS instruction */
    assert_int_equal(h.w.n_instr, 2);
    assert_int_equal(h.w.gws_count, 101 + 1);
    assert_int_equal(h.w.gws_resource, 2 + 3);
    assert_int_equal(g_log.n_mem, 0);              /* no memory: nothing recorded */
    assert_int_equal(h.w.err[0], 0);
    /* released by the scheduler: the wave continues after the barrier */
    h.w.status = GCN_WAVE_RUNNING;
    run_ok(&h);
    assert_int_equal(h.w.n_instr, 3);
    assert_true(g_log.ended);
    assert_int_equal(g_log.end_n, 3);
    wave_fini(&h);
}

static void test_gws_barrier_exec_zero(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_gws_barrier, 0);
    gcn_set_exec(&h.w, 0);
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_ILLEGAL);
    assert_non_null(strstr(h.w.err, "ds_gws_barrier with EXEC = 0"));
    assert_int_equal(h.w.pc, VADDR + 8); /* reported at the instruction */
    wave_fini(&h);
}

static void test_gds_refused(void **state)
{
    (void)state;
    static const uint32_t progs[][3] = {
        {0xd9330000u, 0x00000000u, 0xbf810000u}, /* ds_gws_init v0 gds */
        {0xd9350000u, 0x00000000u, 0xbf810000u}, /* ds_gws_sema_v gds */
        {0xd9370000u, 0x00000000u, 0xbf810000u}, /* ds_gws_sema_br v0 gds */
        {0xd9390000u, 0x00000000u, 0xbf810000u}, /* ds_gws_sema_p gds */
        {0xd9310000u, 0x00000000u, 0xbf810000u}, /* ds_gws_sema_release_all gds */
        {0xd97f0000u, 0x02000000u, 0xbf810000u}, /* ds_ordered_count v2, v0 gds */
    };
    static const char *names[] = {"ds_gws_init", "ds_gws_sema_v", "ds_gws_sema_br", "ds_gws_sema_p",
                                  "ds_gws_sema_release_all", "ds_ordered_count"};
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
        harness h;
        WAVE_INIT(&h, progs[i], 0);
        assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_ILLEGAL);
        char want[160];
        snprintf(want, sizeof want, "GDS/GWS instruction %s not supported (global data share is not modelled)",
                 names[i]);
        if (!strstr(h.w.err, want)) print_error("got: %s\n", h.w.err);
        assert_non_null(strstr(h.w.err, want));
        assert_int_equal(h.w.pc, VADDR);
        wave_fini(&h);
    }
    assert_null(gcn_sem_refusal(GCN_OP_ds_gws_barrier));
    assert_non_null(gcn_sem_refusal(GCN_OP_ds_gws_init));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gws_decode),
        cmocka_unit_test(test_gws_barrier_status),
        cmocka_unit_test(test_gws_barrier_exec_zero),
        cmocka_unit_test(test_gds_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
