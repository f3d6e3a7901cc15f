/*
 * 320-memory.c - memory instruction semantics on a hand-built wavefront with
 * test doubles of exec's gcn_mem_global/gcn_mem_flat (3xx_wave_harness.h):
 * SMEM, FLAT loads/stores of every width with sign/zero extension, FLAT
 * atomics (add with and without return, add_x2, cmpswap_x2, umax), MUBUF
 * scratch through a swizzled V# (GCN3 ISA manual 8.1.4), FLAT through the
 * group and private apertures, DS reads/writes/atomics/bpermute, and faults.
 * Each test also checks what was recorded (the recorder double of 3xx_wave_harness.h).
 */
#include "3xx_wave_harness.h"

static uint64_t gaddr(size_t off) { return (uint64_t)(uintptr_t)g_mem + off; }

static void test_smem(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_mem_smem, 1);
    uint32_t vals[4] = {0x11111111, 0x22222222, 0x33333333, 0x44444444};
    memcpy(g_mem, vals, sizeof vals);
    h.w.s[0] = (uint32_t)gaddr(0);
    h.w.s[1] = (uint32_t)(gaddr(0) >> 32);
    run_ok(&h);
    assert_int_equal(h.w.s[4], 0x33333333);
    assert_int_equal(h.w.s[5], 0x44444444);
    assert_int_equal(h.w.s[6], 0x11111111);
    assert_int_equal(g_log.n_mem, 2);
    assert_int_equal(g_log.mem_flags[0], GCN_MO_LOAD | GCN_MO_SMEM);
    assert_int_equal(g_log.mem_bytes[0], 8);
    assert_int_equal(g_log.mem_addr0[0], gaddr(8));
    assert_memory_equal(g_log.mem_load[0], &vals[2], 8);
    wave_fini(&h);
}

static void test_flat(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_mem_flat, 1);
    for (size_t i = 0; i < sizeof g_mem; i++) g_mem[i] = (uint8_t)(i * 7 + 3);
    uint64_t ex = 0xffff0000ffff00ffull;
    for (unsigned l = 0; l < 64; l++) {
        set64(0, l, gaddr(256 + l * 8));
        set64(2, l, gaddr(4096 + l * 4));
        g_vregs[10][l] = 0xab00 + l;
    }
    gcn_set_exec(&h.w, ex);
    run_ok(&h);
    for (unsigned l = 0; l < 64; l++) {
        const uint8_t *p = g_mem + 256 + l * 8;
        uint32_t d;
        memcpy(&d, p, 4);
        if (!((ex >> l) & 1)) {
            assert_int_equal(g_vregs[4][l], 0);
            continue;
        }
        assert_int_equal(g_vregs[4][l], d);
        assert_memory_equal(&g_vregs[5][l], p, 4);
        assert_memory_equal(&g_vregs[6][l], p + 4, 4);
        assert_int_equal(g_vregs[7][l], p[0]);
        assert_int_equal(g_vregs[8][l], (uint32_t)(int32_t)(int8_t)p[0]);
        assert_int_equal(g_vregs[9][l], (uint32_t)(p[0] | p[1] << 8));
        uint8_t st[4];
        memcpy(st, &d, 4);
        st[0] = (uint8_t)(0xab00 + l);
        assert_memory_equal(g_mem + 4096 + l * 4, st, 4);
        for (int k = 0; k < 4; k++) assert_memory_equal(&g_vregs[12 + k][l], p + 4 * k, 4);
    }
    assert_int_equal(g_log.n_mem, 8);
    assert_int_equal(g_log.mem_flags[0], GCN_MO_LOAD);
    assert_int_equal(g_log.mem_flags[5], GCN_MO_STORE);
    assert_int_equal(g_log.mem_bytes[2], 1);
    assert_int_equal(g_log.mem_exec[0], ex);
    assert_int_equal(g_log.mem_addr0[0], gaddr(256));
    assert_memory_equal(g_log.mem_load[0], g_mem + 256, 4);
    wave_fini(&h);
}

static void test_atomics(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_mem_atomics, 1);
    memset(g_mem, 0, 256);
    uint32_t c0 = 10;
    uint64_t c1 = 0x100000000ull;
    memcpy(g_mem, &c0, 4);
    memcpy(g_mem + 64, &c1, 8);
    uint64_t after_add = c1 + 64 * 0x100000001ull;
    for (unsigned l = 0; l < 64; l++) {
        set64(0, l, gaddr(0));
        set64(2, l, gaddr(64));
        g_vregs[4][l] = 1;
        set64(6, l, 0x100000001ull);
        set64(10, l, 1000 + l);   /* cmpswap source */
        set64(12, l, after_add);  /* compare */
        g_vregs[14][l] = l * 3;
    }
    run_ok(&h);
    uint32_t m0;
    memcpy(&m0, g_mem, 4);
    assert_int_equal(m0, 189); /* 10 + 64 + 64 = 138, then umax with 189 */
    uint32_t seen[128] = {0};
    for (unsigned l = 0; l < 64; l++) {
        uint32_t r = g_vregs[5][l];
        assert_true(r >= 74 && r < 138);
        assert_false(seen[r - 74]++);
    }
    uint64_t m1;
    memcpy(&m1, g_mem + 64, 8);
    assert_int_equal(m1, 1000); /* lane 0 wins the CAS */
    assert_int_equal(v64(8, 0), after_add);
    for (unsigned l = 1; l < 64; l++) assert_int_equal(v64(8, l), 1000);
    assert_int_equal(g_log.n_mem, 5);
    /* flat_atomic_add without glc returns nothing: the recorder is told so
     * (it keeps no pre-op values of it); the glc one (op 1) returns */
    assert_int_equal(g_log.mem_flags[0], GCN_MO_ATOMIC | GCN_MO_LOAD | GCN_MO_STORE | GCN_MO_NORET);
    assert_int_equal(g_log.mem_flags[1], GCN_MO_ATOMIC | GCN_MO_LOAD | GCN_MO_STORE);
    assert_int_equal(g_log.mem_bytes[3], 8);
    uint64_t op[2];
    memcpy(op, g_log.mem_store[3], 16); /* lane 0: src then cmp */
    assert_int_equal(op[0], 1000);
    assert_int_equal(op[1], after_add);
    memcpy(op, g_log.mem_load[3], 8);
    assert_int_equal(op[0], after_add);
    wave_fini(&h);
}

/* scratch V#: swizzled, element size 4, index stride 64, add_tid */
static void scratch_vsharp(gcn_wave *w)
{
    uint64_t base = (uint64_t)(uintptr_t)g_scratch;
    w->s[0] = (uint32_t)base;
    w->s[1] = (uint32_t)(base >> 32) | 1u << 31;
    w->s[2] = 0xffffffffu;
    w->s[3] = 1u << 19 | 3u << 21 | 1u << 23;
    w->s[5] = 0x400;
}
static const uint8_t *scratch_at(unsigned off, unsigned lane)
{
    return g_scratch + 0x400 + (off / 4) * 256 + lane * 4 + off % 4;
}

static void test_mubuf_scratch(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_mem_mubuf, 1);
    memset(g_scratch, 0, sizeof g_scratch);
    scratch_vsharp(&h.w);
    for (unsigned l = 0; l < 64; l++) {
        g_vregs[1][l] = 0x1000 + l;
        g_vregs[3][l] = 0x3000 + l;
        g_vregs[4][l] = 8;
        set64(6, l, 0x7777000000000000ull + l);
        g_vregs[10][l] = 0x5a + l;
    }
    run_ok(&h);
    for (unsigned l = 0; l < 64; l++) {
        uint32_t d;
        memcpy(&d, scratch_at(16, l), 4);
        assert_int_equal(d, 0x1000 + l);
        assert_int_equal(g_vregs[2][l], 0x1000 + l);
        memcpy(&d, scratch_at(12, l), 4);
        assert_int_equal(d, 0x3000 + l);
        assert_int_equal(g_vregs[5][l], 0x3000 + l);
        memcpy(&d, scratch_at(32, l), 4);
        assert_int_equal(d, l);
        memcpy(&d, scratch_at(36, l), 4);
        assert_int_equal(d, 0x77770000u);
        assert_int_equal(v64(8, l), 0x7777000000000000ull + l);
        assert_int_equal(*scratch_at(41, l), (uint8_t)(0x5a + l));
        assert_int_equal(g_vregs[11][l], (uint8_t)(0x5a + l));
    }
    assert_int_equal(g_log.n_mem, 8);
    assert_int_equal(g_log.mem_flags[0], GCN_MO_STORE | GCN_MO_SCRATCH);
    assert_int_equal(g_log.mem_addr0[0], (uint64_t)(uintptr_t)scratch_at(16, 0));
    assert_int_equal(g_log.mem_flags[1], GCN_MO_LOAD | GCN_MO_SCRATCH);
    /* the private-segment dword fast path says its addresses are lane-linear */
    assert_true(g_log.mem_linear[0] && g_log.mem_linear[1]);
    wave_fini(&h);
}

static void test_flat_apertures(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_mem_flat_apertures, 1);
    memset(g_scratch, 0, sizeof g_scratch);
    memset(g_lds, 0, sizeof g_lds);
    h.w.scratch_wave_offset = 0x400;
    for (unsigned l = 0; l < 64; l++) {
        set64(0, l, (uint64_t)GCN_GROUP_APERTURE_HI << 32 | (l * 4));
        set64(2, l, (uint64_t)GCN_PRIVATE_APERTURE_HI << 32 | 8);
        g_vregs[4][l] = 0x4000 + l;
        g_vregs[6][l] = 0x6000 + l;
        set64(8, l, 0x8888000000000000ull | l);
    }
    run_ok(&h);
    for (unsigned l = 0; l < 64; l++) {
        uint32_t d;
        memcpy(&d, g_lds + l * 4, 4);
        assert_int_equal(d, 0x4000 + l);
        assert_int_equal(g_vregs[5][l], 0x4000 + l);
        assert_int_equal(g_vregs[7][l], 0x6000 + l);
        /* the 8-byte private access is split per swizzled dword */
        memcpy(&d, scratch_at(8, l), 4); /* same bytes as MUBUF offset 8 would use */
        assert_int_equal(d, l);
        memcpy(&d, scratch_at(12, l), 4);
        assert_int_equal(d, 0x88880000u);
        assert_int_equal(v64(10, l), 0x8888000000000000ull | l);
    }
    assert_int_equal(g_log.mem_flags[4], GCN_MO_STORE | GCN_MO_SCRATCH);
    assert_int_equal(g_log.mem_bytes[4], 8);
    assert_memory_equal(g_log.mem_store[4], (uint64_t[]){0x8888000000000000ull}, 8);
    assert_int_equal(g_log.mem_flags[0], GCN_MO_STORE | GCN_MO_LDS);
    assert_int_equal(g_log.mem_addr0[0], 0);
    assert_int_equal(g_log.mem_flags[2], GCN_MO_STORE | GCN_MO_SCRATCH);
    assert_int_equal(g_log.mem_addr0[2], (uint64_t)(uintptr_t)scratch_at(8, 0));
    /* every lane at private offset 8: lane-linear; the LDS op is not hinted */
    assert_true(g_log.mem_linear[2] && g_log.mem_linear[4]);
    assert_false(g_log.mem_linear[0]);
    wave_fini(&h);
}

static void test_ds(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_mem_ds, 1);
    memset(g_lds, 0, sizeof g_lds);
    uint32_t init = 5;
    memcpy(g_lds + 4096, &init, 4);
    for (unsigned l = 0; l < 64; l++) {
        g_vregs[0][l] = l * 8;
        g_vregs[1][l] = 100 + l;
        g_vregs[3][l] = 200 + l;
        g_vregs[6][l] = 4096;
        g_vregs[7][l] = 1;
        g_vregs[10][l] = ((l + 1) % 64) * 4;
        set64(12, l, 0xabcdef0000000000ull | l);
    }
    run_ok(&h);
    uint32_t seen[64] = {0};
    for (unsigned l = 0; l < 64; l++) {
        assert_int_equal(g_vregs[2][l], 100 + l);
        assert_int_equal(g_vregs[4][l], 100 + l);
        assert_int_equal(g_vregs[5][l], 200 + l);
        uint32_t r = g_vregs[8][l];
        assert_true(r >= 69 && r < 133);
        assert_false(seen[r - 69]++);
        assert_int_equal(g_vregs[9][l], 100 + (l + 1) % 64);
        assert_int_equal(v64(14, l), 0xabcdef0000000000ull | l);
    }
    uint32_t c;
    memcpy(&c, g_lds + 4096, 4);
    assert_int_equal(c, 5 + 128);
    /* bpermute is not a memory access: 8 LDS ops recorded */
    assert_int_equal(g_log.n_mem, 8);
    assert_int_equal(g_log.mem_flags[0], GCN_MO_STORE | GCN_MO_LDS);
    assert_int_equal(g_log.mem_addr0[0], 4);
    assert_int_equal(g_log.mem_bytes[3], 8);
    assert_int_equal(g_log.mem_flags[4], GCN_MO_ATOMIC | GCN_MO_LOAD | GCN_MO_STORE | GCN_MO_LDS);
    wave_fini(&h);
}

static void test_faults(void **state)
{
    (void)state;
    harness h;
    /* an LDS read running past the allocation is clamped, not a fault: it
     * returns 0 (GCN3 ISA manual Sec. 9.3); the other lanes read normally */
    WAVE_INIT(&h, prog_mem_ds_oob, 0);
    memcpy(g_lds, "\x11\x22\x33\x44", 4);
    for (unsigned l = 0; l < 64; l++) g_vregs[0][l] = l == 3 ? h.w.lds_size - 2 : 0;
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_DONE);
    for (unsigned l = 0; l < 64; l++) assert_int_equal(g_vregs[2][l], l == 3 ? 0u : 0x44332211u);
    wave_fini(&h);

    WAVE_INIT(&h, prog_mem_fault, 0);
    for (unsigned l = 0; l < 64; l++) set64(0, l, 0x1234);
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_FAULT);
    print_message("%s\n", h.w.err);
    assert_non_null(strstr(h.w.err, "0x1234"));
    assert_int_equal(h.w.pc, VADDR);
    assert_int_equal(h.w.n_instr, 0);
    wave_fini(&h);
}

/* SMEM stores (s_store_dword*, s_buffer_store_dword) and s_buffer_load with
 * the V#'s num_records: out-of-range stores are dropped, loads read 0 (ISA
 * manual 5.3 / 12.x) */
static void test_smem_store(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_smem_store, 1);
    memset(g_mem, 0, 256);
    gcn_wave *w = &h.w;
    uint64_t b = gaddr(0), vb = gaddr(128);
    w->s[0] = (uint32_t)b; w->s[1] = (uint32_t)(b >> 32);
    w->s[4] = 0x11223344; w->s[5] = 0x55667788; w->s[6] = 0xaaaa0001; w->s[7] = 0xbbbb0002;
    w->s[8] = (uint32_t)vb; w->s[9] = (uint32_t)(vb >> 32) & 0xffff; w->s[10] = 0x40; w->s[11] = 0x27fac;
    w->s[14] = w->s[15] = 0xcccccccc;
    run_ok(&h);
    uint32_t m[4];
    memcpy(m, g_mem, 16);
    assert_int_equal(m[0], 0x11223344);
    assert_int_equal(m[2], 0xaaaa0001);
    assert_int_equal(m[3], 0xbbbb0002);
    memcpy(m, g_mem + 128 + 0x10, 4);
    assert_int_equal(m[0], 0x11223344);        /* in range: stored */
    memcpy(m, g_mem + 128 + 0x40, 4);
    assert_int_equal(m[0], 0);                 /* offset 0x40 + 4 > 0x40 records: dropped */
    assert_int_equal(w->s[12], 0x11223344);
    assert_int_equal(w->s[14], 0);             /* 0x3c + 8 > 0x40: reads 0 */
    assert_int_equal(w->s[15], 0);
    assert_int_equal(g_log.n_mem, 4);          /* 2 stores + 1 buffer store + 1 buffer load in range */
    assert_int_equal(g_log.mem_flags[0], GCN_MO_STORE | GCN_MO_SMEM);
    wave_fini(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_smem_store),
        cmocka_unit_test(test_smem),          cmocka_unit_test(test_flat),
        cmocka_unit_test(test_atomics),       cmocka_unit_test(test_mubuf_scratch),
        cmocka_unit_test(test_flat_apertures), cmocka_unit_test(test_ds),
        cmocka_unit_test(test_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
