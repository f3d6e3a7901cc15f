/*
 * 322-mubuf.c - MUBUF and MTBUF semantics on a hand-built wavefront
 * (3xx_wave_harness.h), every lane checked against the GCN3 ISA manual
 * (Sec. 8.1 buffer addressing, Table 8.x data/number formats, Ch. 12.x
 * BUFFER_* / TBUFFER_*), with EXEC-masked lanes: offen with soffset and
 * inst_offset, idxen with stride and out-of-range indices (read 0), byte
 * store / signed byte load, atomics with return (cmpswap, add_x2) and
 * without (umax), typed stores/loads in 8_8_8_8 unorm, 16_16 float,
 * 2_10_10_10 sint, the V#'s format and DST_SEL for buffer_*_format, d16
 * (unpacked on gfx803), and a partial-component format store.
 */
#include <math.h>

#include "3xx_wave_harness.h"

static uint32_t m32(size_t off) { uint32_t v; memcpy(&v, g_mem + off, 4); return v; }
static void set_m32(size_t off, uint32_t v) { memcpy(g_mem + off, &v, 4); }
static uint64_t m64(size_t off) { uint64_t v; memcpy(&v, g_mem + off, 8); return v; }

/* V# (ISA manual Table 8.5): base, stride, num_records, word3 */
static void vsharp(gcn_wave *w, unsigned s, uint64_t base, uint32_t stride, uint32_t num, uint32_t w3)
{
    w->s[s] = (uint32_t)base;
    w->s[s + 1] = (uint32_t)(base >> 32 & 0xffff) | stride << 16;
    w->s[s + 2] = num;
    w->s[s + 3] = w3;
}
#define W3_RAW 0x27facu /* dst_sel x,y,z,w; 32-bit float format */

static void test_buffer_ops(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_buf_ops, 1);
    memset(g_mem, 0, sizeof g_mem);
    gcn_wave *w = &h.w;
    uint64_t base = (uint64_t)(uintptr_t)g_mem;
    vsharp(w, 0, base, 0, 4096, W3_RAW);
    vsharp(w, 8, base + 1536, 8, 16, W3_RAW);
    w->s[4] = 8;
    uint64_t ex = 0xfffffffffffffff7ull; /* lane 3 off */
    for (unsigned l = 0; l < 64; l++) {
        g_vregs[0][l] = l * 4;
        g_vregs[1][l] = 0xab80 + l;
        g_vregs[6][l] = l;
        g_vregs[7][l] = l * 8;
        set_m32(1536 + l * 8, 0x77000000u + l);     /* idxen data (stride 8) */
        set_m32(2048 + l * 4, l * 7);               /* cmpswap targets (offset 2048) */
        g_vregs[10][l] = 0xaaaa0000u + l;           /* cmpswap: new value */
        g_vregs[11][l] = l % 2 ? 12345 : l * 7;     /* cmpswap: compare */
        memcpy(g_mem + 3072 + l * 8, &(uint64_t){0xffffffffull + l}, 8);
        set64(12, l, 0x100000001ull);
        set_m32(2560 + l * 4, 30);
        g_vregs[14][l] = l;
    }
    gcn_set_exec(w, ex);
    uint8_t before[4096];
    memcpy(before, g_mem, sizeof before);
    run_ok(&h);
    for (unsigned l = 0; l < 64; l++) {
        int on = (ex >> l) & 1;
        uint32_t v1 = 0xab80 + l, old;
        memcpy(&old, before + l * 4, 4);
        assert_int_equal(m32(l * 4), on ? v1 : old);
        if (!on) {
            assert_int_equal(g_vregs[2][l], 0);
            assert_int_equal(g_vregs[3][l], 0);
            assert_int_equal(g_vregs[5][l], 0);
            assert_int_equal(g_vregs[10][l], 0xaaaa0000u + l);
            continue;
        }
        /* offen + soffset 8 + offset 4: dword at l*4 + 12 (lane l+3's store, lane 3 inactive) */
        unsigned src = l + 3;
        uint32_t want2 = 0; /* lanes run in order: lane l+3 has not stored yet... */
        memcpy(&want2, before + l * 4 + 12, 4);
        /* ...but the store ran for all lanes before the load: lane l+3's value */
        if (src < 64 && ((ex >> src) & 1)) want2 = 0xab80 + src;
        assert_int_equal(g_vregs[2][l], want2);
        assert_int_equal(g_mem[1024 + l * 4], (uint8_t)v1);
        assert_int_equal(g_vregs[3][l], (uint32_t)(int32_t)(int8_t)(uint8_t)v1);
        /* idxen, stride 8, 16 records: index >= 16 reads 0 */
        assert_int_equal(g_vregs[5][l], l < 16 ? 0x77000000u + l : 0);
        /* BUFFER_ATOMIC_CMPSWAP: data = {src, cmp}; returns the old value */
        uint32_t c_old;
        memcpy(&c_old, before + 2048 + l * 4, 4);
        assert_int_equal(g_vregs[10][l], c_old);
        assert_int_equal(m32(2048 + l * 4), l % 2 == 0 ? 0xaaaa0000u + l : c_old); /* swapped where cmp matched */
        /* BUFFER_ATOMIC_ADD_X2 with return */
        uint64_t a_old;
        memcpy(&a_old, before + 3072 + l * 8, 8);
        assert_int_equal(v64(12, l), a_old);
        assert_int_equal(m64(3072 + l * 8), a_old + 0x100000001ull);
        /* BUFFER_ATOMIC_UMAX without glc: memory only, v14 untouched */
        uint32_t u_old;
        memcpy(&u_old, before + 2560 + l * 4, 4);
        assert_int_equal(m32(2560 + l * 4), u_old > l ? u_old : l);
        assert_int_equal(g_vregs[14][l], l);
    }
    assert_true(g_log.n_mem >= 8);
    assert_int_equal(g_log.mem_exec[0], ex);
    wave_fini(&h);
}

static float unorm8(uint32_t b) { return (float)(b / 255.0); }

static void test_buffer_formats(void **state)
{
    (void)state;
    harness h;
    WAVE_INIT(&h, prog_buf_format, 0);
    memset(g_mem, 0, sizeof g_mem);
    gcn_wave *w = &h.w;
    uint64_t base = (uint64_t)(uintptr_t)g_mem + 16384;
    uint8_t *mb = g_mem + 16384;
    vsharp(w, 0, base, 0, 4096, W3_RAW);
    /* V# 2: 8_8_8_8 uint, DST_SEL = w, z, y, x */
    vsharp(w, 4, base, 0, 4096, 7u | 6u << 3 | 5u << 6 | 4u << 9 | 4u << 12 | 10u << 15);
    uint64_t ex = 0xfffffffffffffffbull; /* lane 2 off */
    for (unsigned l = 0; l < 64; l++) {
        g_vregs[0][l] = l * 4;
        g_vregs[1][l] = 0x100 + l;
        g_vregs[10][l] = bf((float)l / 63.0f);
        g_vregs[11][l] = bf(1.0f);
        g_vregs[12][l] = bf(0.5f);
        g_vregs[13][l] = bf(-1.0f);
        g_vregs[18][l] = bf((float)l + 0.5f);
        g_vregs[19][l] = bf(-(float)l * 0.25f);
        /* 2_10_10_10 sint source words at +1024 */
        uint32_t x = (l * 37) & 0x3ff, y = (0x3ff - l * 11) & 0x3ff;
        uint32_t word = x | y << 10 | 0x155u << 20 | 2u << 30;
        memcpy(mb + 1024 + l * 4, &word, 4);
        memcpy(mb + 1536 + l * 4, &(uint32_t){0xddddddddu}, 4);
    }
    gcn_set_exec(w, ex);
    run_ok(&h);
    for (unsigned l = 0; l < 64; l++) {
        int on = (ex >> l) & 1;
        uint32_t e8, e16, e1536;
        memcpy(&e8, mb + l * 4, 4);
        memcpy(&e16, mb + 512 + l * 4, 4);
        memcpy(&e1536, mb + 1536 + l * 4, 4);
        if (!on) {
            assert_int_equal(e8, 0);
            assert_int_equal(e16, 0);
            assert_int_equal(e1536, 0xddddddddu);
            for (unsigned r = 14; r <= 31; r++) if (r != 18 && r != 19) assert_int_equal(g_vregs[r][l], 0);
            continue;
        }
        /* 8_8_8_8 UNORM store: round(clamp(f, 0, 1) * 255) per byte, x in the low byte */
        uint32_t bx = (uint32_t)rint((double)((float)l / 63.0f) * 255.0);
        assert_int_equal(e8, bx | 255u << 8 | 128u << 16 | 0u << 24);
        /* and back: byte / 255 */
        assert_int_equal(g_vregs[14][l], bf(unorm8(bx)));
        assert_int_equal(g_vregs[15][l], bf(1.0f));
        assert_int_equal(g_vregs[16][l], bf(unorm8(128)));
        assert_int_equal(g_vregs[17][l], bf(0.0f));
        /* 16_16 FLOAT: halves, exact for these values; z = 0, w = 1.0 on load */
        float fx = (float)l + 0.5f, fy = -(float)l * 0.25f;
        assert_int_equal(g_vregs[20][l], bf(fx));
        assert_int_equal(g_vregs[21][l], bf(fy));
        assert_int_equal(g_vregs[22][l], 0);
        assert_int_equal(g_vregs[23][l], bf(1.0f));
        /* 2_10_10_10 SINT: x = bits 9:0, y = bits 19:10, sign-extended */
        uint32_t x = (l * 37) & 0x3ff, y = (0x3ff - l * 11) & 0x3ff;
        assert_int_equal(g_vregs[24][l], (uint32_t)((int32_t)(x << 22) >> 22));
        assert_int_equal(g_vregs[25][l], (uint32_t)((int32_t)(y << 22) >> 22));
        /* buffer_load_format via the V#: 8_8_8_8 UINT of the 16_16 data, DST_SEL w,z,y,x */
        assert_int_equal(g_vregs[26][l], e16 >> 24);
        assert_int_equal(g_vregs[27][l], (e16 >> 16) & 0xff);
        assert_int_equal(g_vregs[28][l], (e16 >> 8) & 0xff);
        assert_int_equal(g_vregs[29][l], e16 & 0xff);
        /* d16 (unpacked): one component per VGPR in its low 16 bits; the V#
         * format is 32 FLOAT with one component, so y reads 0 */
        assert_int_equal(g_vregs[31][l], 0);
        assert_true(g_vregs[30][l] <= 0xffff);
        /* format store of x only into 8_8_8_8: the other bytes keep memory */
        assert_int_equal(e1536, 0xdddddd00u | ((0x100 + l) & 0xff));
    }
    wave_fini(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buffer_ops),
        cmocka_unit_test(test_buffer_formats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
