/*
 * 321-ds.c - DS (LDS) instruction semantics on a hand-built wavefront
 * (3xx_wave_harness.h), every lane checked against the GCN3 ISA manual's
 * definitions (Ch. 12.13), with EXEC-masked lanes that must leave LDS and
 * their VGPRs untouched: read2/write2 st64, sub-dword sign/zero extension,
 * mskor, wrap, cmpst (integer and float compare), wrxchg2, condxchg32,
 * signed max and dec with return, the *_src2 forms (both stride encodings),
 * append/consume, swizzle (quad and bit-mask modes), permute/bpermute,
 * GDS refused, and recording.
 */
#include "3xx_wave_harness.h"

static uint32_t lds32(uint32_t a) { uint32_t v; memcpy(&v, g_lds + a, 4); return v; }
static void set_lds32(uint32_t a, uint32_t v) { memcpy(g_lds + a, &v, 4); }

static void test_ds_more(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_ds_more, 1);
    memset(g_lds, 0, sizeof g_lds);
    uint64_t ex = 0x7fffffffffff0ffeull;
    uint32_t init[64][16];
    for (unsigned l = 0; l < 64; l++) {
        g_vregs[0][l] = l * 4;
        g_vregs[1][l] = 0x8070 + l;
        g_vregs[2][l] = 0x5000 + l;
        uint32_t b = 1024 + l * 64;
        g_vregs[3][l] = b;
        for (unsigned k = 0; k < 16; k++) { init[l][k] = l * 0x01010101u + k * 0x1111u; set_lds32(b + 4 * k, init[l][k]); }
        g_vregs[10][l] = 0x0000ff00; g_vregs[11][l] = 0x5a;            /* mskor: mask, bits */
        g_vregs[12][l] = l & 1 ? 0xffffffffu : 5; g_vregs[13][l] = 3;   /* wrap */
        g_vregs[15][l] = l % 3 ? init[l][2] : 1; g_vregs[16][l] = 0xc0de0000u + l; /* cmpst: cmp, new */
        set_lds32(b + 12, l & 1 ? 0x80000000u : 0x7fc00000u);          /* -0.0 / NaN */
        init[l][3] = lds32(b + 12);
        g_vregs[18][l] = 0; g_vregs[19][l] = 0x3f800000u + l;           /* cmpst_f32: cmp +0.0 */
        g_vregs[22][l] = 0xaa00 + l; g_vregs[23][l] = 0xbb00 + l;       /* wrxchg2 */
        g_vregs[26][l] = (l & 1 ? 0x80000000u : 0) | 0x1234; g_vregs[27][l] = (l & 2 ? 0x80000000u : 0) | 0x5678;
        g_vregs[29][l] = l & 1 ? 0xfffffff0u : 0x7f000000u;             /* max_i32 */
        g_vregs[31][l] = 4;                                             /* dec */
    }
    gcn_set_exec(&h.w, ex);
    run_ok(&h);
    for (unsigned l = 0; l < 64; l++) {
        int on = (ex >> l) & 1;
        uint32_t b = 1024 + l * 64;
        uint32_t v1 = 0x8070 + l;
        assert_int_equal(lds32(l * 4 + 256), on ? v1 : 0);
        assert_int_equal(lds32(l * 4 + 512), on ? 0x5000 + l : 0);
        assert_int_equal(g_vregs[4][l], on ? v1 : 0);
        assert_int_equal(g_vregs[5][l], on ? 0x5000 + l : 0);
        assert_int_equal(g_vregs[6][l], on ? (uint32_t)(int32_t)(int8_t)(v1 & 0xff) : 0);
        assert_int_equal(g_vregs[7][l], on ? (v1 & 0xffff) : 0);
        if (!on) {
            for (unsigned k = 0; k < 16; k++) assert_int_equal(lds32(b + 4 * k), init[l][k]);
            for (unsigned r = 8; r <= 30; r++)
                if (r != 10 && r != 11 && r != 12 && r != 13 && r != 15 && r != 16 && r != 18 && r != 19 && r != 22 &&
                    r != 23 && r != 26 && r != 27 && r != 29)
                    assert_int_equal(g_vregs[r][l], 0);
            continue;
        }
        /* DS_MSKOR: (old & ~mask) | bits */
        assert_int_equal(g_vregs[8][l], init[l][0]);
        assert_int_equal(lds32(b), (init[l][0] & ~0xff00u) | 0x5a);
        /* DS_WRAP: old >= d0 ? old - d0 : old + d1 */
        uint32_t o = init[l][1], d0 = l & 1 ? 0xffffffffu : 5;
        assert_int_equal(g_vregs[9][l], o);
        assert_int_equal(lds32(b + 4), o >= d0 ? o - d0 : o + 3);
        /* DS_CMPST_B32: old == cmp ? new : old */
        assert_int_equal(g_vregs[14][l], init[l][2]);
        assert_int_equal(lds32(b + 8), l % 3 ? 0xc0de0000u + l : init[l][2]);
        /* DS_CMPST_F32: float compare, -0.0 == +0.0, NaN never equal */
        assert_int_equal(g_vregs[17][l], init[l][3]);
        assert_int_equal(lds32(b + 12), l & 1 ? 0x3f800000u + l : 0x7fc00000u);
        /* DS_WRXCHG2_RTN_B32 at +8*4 and +9*4 */
        assert_int_equal(g_vregs[20][l], init[l][8]);
        assert_int_equal(g_vregs[21][l], init[l][9]);
        assert_int_equal(lds32(b + 32), 0xaa00 + l);
        assert_int_equal(lds32(b + 36), 0xbb00 + l);
        /* DS_CONDXCHG32_RTN_B64: each half replaced by data[30:0] when its bit 31 is set */
        assert_int_equal(g_vregs[24][l], init[l][12]);
        assert_int_equal(g_vregs[25][l], init[l][13]);
        assert_int_equal(lds32(b + 48), l & 1 ? 0x1234u : init[l][12]);
        assert_int_equal(lds32(b + 52), l & 2 ? 0x5678u : init[l][13]);
        /* DS_MAX_RTN_I32 (signed) */
        int32_t om = (int32_t)init[l][14], dm = (int32_t)(l & 1 ? 0xfffffff0u : 0x7f000000u);
        assert_int_equal(g_vregs[28][l], init[l][14]);
        assert_int_equal(lds32(b + 56), (uint32_t)(om > dm ? om : dm));
        /* DS_DEC_RTN_U32: old == 0 || old > d ? d : old - 1 */
        uint32_t od = init[l][15];
        assert_int_equal(g_vregs[30][l], od);
        assert_int_equal(lds32(b + 60), od == 0 || od > 4 ? 4 : od - 1);
    }
    assert_true(g_log.n_mem >= 12);
    assert_int_equal(g_log.mem_flags[4], GCN_MO_ATOMIC | GCN_MO_LOAD | GCN_MO_STORE | GCN_MO_LDS); /* mskor */
    assert_int_equal(g_log.mem_exec[4], ex);
    wave_fini(&h);
}

static void test_ds_src2(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_ds_src2, 0);
    memset(g_lds, 0, sizeof g_lds);
    uint64_t ex = 0xfffffffffffffffdull;
    for (unsigned i = 0; i < 8192 / 4; i++) set_lds32(i * 4, i * 2654435761u);
    uint8_t before[8192];
    memcpy(before, g_lds, sizeof before);
    for (unsigned l = 0; l < 64; l++) {
        g_vregs[0][l] = l * 8;                               /* stride +1 element */
        g_vregs[1][l] = (2u << 17) | (2048 + l * 16);       /* stride from A[31:17] = +2 elements */
        g_vregs[2][l] = 4096 + l * 8 + 4;                   /* offset 0x7fff: stride -1 element */
    }
    gcn_set_exec(&h.w, ex);
    run_ok(&h);
    uint32_t b32[2048];
    memcpy(b32, before, sizeof b32);
    for (unsigned l = 0; l < 64; l++) {
        int on = (ex >> l) & 1;
        unsigned a = l * 8 / 4;
        assert_int_equal(lds32(l * 8), on ? b32[a] + b32[a + 1] : b32[a]);
        a = (2048 + l * 16) / 4;
        assert_int_equal(lds32(2048 + l * 16), on ? b32[a + 2] : b32[a]);
        a = (4096 + l * 8 + 4) / 4;
        assert_int_equal(lds32(4096 + l * 8 + 4), on ? (b32[a] > b32[a - 1] ? b32[a] : b32[a - 1]) : b32[a]);
    }
    wave_fini(&h);
}

static void test_ds_counter(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_ds_counter, 1);
    memset(g_lds, 0, sizeof g_lds);
    set_lds32(0x104, 100);
    set_lds32(0x108, 100);
    uint64_t ex = 0x00ff00ff00ff00f0ull; /* 28 lanes */
    gcn_set_exec(&h.w, ex);
    run_ok(&h);
    assert_int_equal(lds32(0x104), 128);
    assert_int_equal(lds32(0x108), 72);
    for (unsigned l = 0; l < 64; l++) {
        int on = (ex >> l) & 1;
        assert_int_equal(g_vregs[1][l], on ? 100 : 0); /* every active lane gets the pre-op value */
        assert_int_equal(g_vregs[2][l], on ? 100 : 0);
    }
    assert_int_equal(g_log.n_mem, 2);
    assert_int_equal(g_log.mem_addr0[0], 0x104);
    wave_fini(&h);
}

static void test_ds_xlane(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_ds_xlane, 0);
    uint64_t ex = 0xfffffffffffffeffull; /* lane 8 inactive */
    for (unsigned l = 0; l < 64; l++) {
        g_vregs[0][l] = 0x100 + l;
        g_vregs[4][l] = ((l * 5 + 3) % 64) * 4;
    }
    gcn_set_exec(&h.w, ex);
    run_ok(&h);
    uint32_t perm[64] = {0};
    for (unsigned l = 0; l < 64; l++)
        if ((ex >> l) & 1) perm[(l * 5 + 3) % 64] = 0x100 + l;
    for (unsigned l = 0; l < 64; l++) {
        if (!((ex >> l) & 1)) {
            for (unsigned r = 1; r <= 5; r++) if (r != 4) assert_int_equal(g_vregs[r][l], 0);
            continue;
        }
        unsigned q = (l & ~3u) | (3 - (l & 3));                  /* QUAD_PERM 3,2,1,0 */
        assert_int_equal(g_vregs[1][l], (ex >> q) & 1 ? 0x100 + q : 0);
        unsigned bm = (l & 32) | ((l & 4) | 3);                  /* BITMASK_PERM "00p11" */
        assert_int_equal(g_vregs[2][l], (ex >> bm) & 1 ? 0x100 + bm : 0);
        assert_int_equal(g_vregs[3][l], perm[l]);
        unsigned s = (l * 5 + 3) % 64;
        assert_int_equal(g_vregs[5][l], (ex >> s) & 1 ? 0x100 + s : 0);
    }
    wave_fini(&h);
}

static void test_ds_gds_refused(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_ds_gds, 0);
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_ILLEGAL);
    assert_non_null(strstr(h.w.err, "gds"));
    assert_non_null(strstr(h.w.err, "ds_add_u32"));
    wave_fini(&h);
}

/* Issue 15 scope 5: LDS addresses are 32 bits (a computed negative base
 * wraps: Rodinia nw) and accesses outside the allocation are clamped as on
 * hardware (reads return 0, writes are dropped), not faults. */
static void test_ds_out_of_range_clamped(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_mem_ds_oob, 0);
    memset(g_lds, 0x5a, 8192);
    for (unsigned l = 0; l < 64; l++) g_vregs[0][l] = l == 37 ? 8192 : l == 38 ? 0xfffffffcu : 0;
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_DONE);
    for (unsigned l = 0; l < 64; l++) assert_int_equal(g_vregs[2][l], l == 37 || l == 38 ? 0u : 0x5a5a5a5au);
    wave_fini(&h);

    /* base 0xfffffffc + offset 8 = LDS address 4 (32-bit wrap); a write
     * past the end is dropped: nothing beyond the allocation changes */
    WAVE_INIT(&h, prog_mem_ds_wrap, 0);
    memset(g_lds, 0, sizeof g_lds);
    for (unsigned l = 0; l < 64; l++) {
        g_vregs[0][l] = l == 0 ? 0xfffffffcu : 8192 + 4 * l;
        g_vregs[1][l] = 0x1000 + l;
    }
    assert_int_equal(gcn_wave_run(&h.w), GCN_WAVE_DONE);
    uint32_t got;
    memcpy(&got, g_lds + 4, 4);
    assert_int_equal(got, 0x1000);                    /* lane 0's write landed at address 4 */
    assert_int_equal(g_vregs[2][0], 0x1000);          /* and reads back */
    for (unsigned l = 1; l < 64; l++) assert_int_equal(g_vregs[2][l], 0); /* the others: clamped */
    for (size_t i = 8192; i < sizeof g_lds; i++) assert_int_equal(g_lds[i], 0);
    wave_fini(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ds_more),    cmocka_unit_test(test_ds_src2),
        cmocka_unit_test(test_ds_counter), cmocka_unit_test(test_ds_xlane),
        cmocka_unit_test(test_ds_gds_refused), cmocka_unit_test(test_ds_out_of_range_clamped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
