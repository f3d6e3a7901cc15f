/*
 * 100-decoder.c - GCN3 decoder: golden encodings from llvm-objdump/llvm-mc 14
 * (tests/gcn/data/100-golden.h: corpus instructions with their full
 * disassembly, and one encoding per opcode of every format), decode-table
 * consistency, (mask, match) overlap check (STYLE.md #4), public fields of
 * specific instructions, invalid words and a random-word robustness run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gcn/gcn_isa.h"
#include "gcn/gcn_operand.h"

#include "data/100-golden.h"

static void test_golden(void **state)
{
    (void)state;
    size_t n = sizeof golden / sizeof golden[0], bad = 0, full = 0;
    for (size_t i = 0; i < n; i++) {
        const struct golden *g = &golden[i];
        gcn_insn in;
        int sz = gcn_decode_one(g->w, g->n, 0x1000, &in);
        char buf[256];
        gcn_disasm(&in, buf, sizeof buf);
        int ok;
        if (g->full) {
            full++;
            ok = strcmp(buf, g->text) == 0;
        } else {
            size_t k = strcspn(buf, " ");
            ok = strlen(g->text) == k && strncmp(buf, g->text, k) == 0;
        }
        if (sz != 4 * g->n || (in.flags & GCN_IF_INVALID) || !ok) {
            if (bad++ < 20)
                print_error("golden %zu (0x%08x): got '%s' size %d flags 0x%x, want '%s' size %d\n", i, g->w[0], buf, sz,
                            in.flags, g->text, 4 * g->n);
        }
    }
    print_message("%zu golden encodings (%zu with full disassembly), %zu mismatches\n", n, full, bad);
    assert_int_equal(bad, 0);
}

static void test_tables(void **state)
{
    (void)state;
    char err[200];
    int r = gcn_dec_check_tables(err, sizeof err);
    if (r) print_error("%s\n", err);
    assert_int_equal(r, 0);
    /* every op has a unique name */
    for (unsigned a = 1; a < GCN_OP_COUNT; a++)
        for (unsigned b = a + 1; b < GCN_OP_COUNT; b++) assert_string_not_equal(gcn_op_name(a), gcn_op_name(b));
    assert_true(GCN_OP_COUNT > 900);
}

static void test_no_overlap(void **state)
{
    (void)state;
    size_t n = gcn_dec_patterns(NULL, 0);
    gcn_dec_pattern *p = calloc(n, sizeof *p);
    assert_non_null(p);
    assert_int_equal(gcn_dec_patterns(p, n), n);
    size_t overlaps = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++) {
            if (((p[i].match ^ p[j].match) & p[i].mask & p[j].mask) == 0) {
                if (overlaps++ < 10)
                    print_error("patterns overlap: %s%s (%08x/%08x) and %s%s (%08x/%08x)\n", gcn_op_name(p[i].op),
                                p[i].e64 ? "_e64" : "", p[i].mask, p[i].match, gcn_op_name(p[j].op),
                                p[j].e64 ? "_e64" : "", p[j].mask, p[j].match);
            }
        }
        /* and the decoder agrees with the pattern */
        uint32_t w[3] = {p[i].match, 0, 0};
        if (p[i].op == GCN_OP_s_setreg_imm32_b32) w[1] = 0;
        gcn_insn in;
        gcn_decode_one(w, 3, 0, &in);
        if (in.op != p[i].op) print_error("pattern of %s decodes as %s\n", gcn_op_name(p[i].op), gcn_op_name(in.op));
        assert_int_equal(in.op, p[i].op);
    }
    free(p);
    assert_int_equal(overlaps, 0);
}

static gcn_insn dec(const uint8_t *b, size_t len)
{
    uint32_t w[3] = {0};
    memcpy(w, b, len);
    gcn_insn in;
    int sz = gcn_decode_one(w, len / 4, 0x2000, &in);
    assert_int_equal(sz, (int)len);
    return in;
}
#define DEC(...) dec((const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__}))

static void test_fields(void **state)
{
    (void)state;
    gcn_insn in = DEC(0x70, 0x00, 0x8c, 0xbf); /* s_waitcnt vmcnt(0) lgkmcnt(0) */
    assert_int_equal(in.op, GCN_OP_s_waitcnt);
    assert_true(in.flags & GCN_IF_WAITCNT);
    assert_int_equal(in.unit, GCN_UNIT_SPECIAL);
    assert_int_equal(in.waitcnt_vm, 0);
    assert_int_equal(in.waitcnt_lgkm, 0);
    assert_int_equal(in.waitcnt_exp, 7);
    in = DEC(0x23, 0x01, 0x8c, 0xbf); /* vmcnt(3) expcnt(2) lgkmcnt(1) */
    assert_int_equal(in.waitcnt_vm, 3);
    assert_int_equal(in.waitcnt_exp, 2);
    assert_int_equal(in.waitcnt_lgkm, 1);
    in = DEC(0x05, 0x00, 0x88, 0xbf); /* s_cbranch_execz 5 */
    assert_true(in.flags & GCN_IF_BR_COND);
    assert_int_equal(in.unit, GCN_UNIT_BRANCH);
    assert_int_equal(in.target, 0x2000 + 4 + 20);
    assert_int_equal(in.waitcnt_vm, 0xffff);
    in = DEC(0xfe, 0xff, 0x82, 0xbf); /* s_branch -2 */
    assert_true(in.flags & GCN_IF_BR_JUMP);
    assert_int_equal(in.target, 0x2000 + 4 - 8);
    in = DEC(0x00, 0x00, 0x50, 0xdc, 0x00, 0x00, 0x00, 0x00); /* flat_load_dword */
    assert_int_equal(in.unit, GCN_UNIT_VMEM);
    assert_int_equal(in.mem_bytes, 4);
    assert_int_equal(in.flags & (GCN_IF_LOAD | GCN_IF_STORE | GCN_IF_FLAT), GCN_IF_LOAD | GCN_IF_FLAT);
    in = DEC(0x00, 0x00, 0x85, 0xdd, 0x02, 0x04, 0x00, 0x00); /* flat_atomic_cmpswap_x2 ... glc */
    assert_int_equal(in.op, GCN_OP_flat_atomic_cmpswap_x2);
    assert_int_equal(in.mem_bytes, 8);
    assert_true(in.flags & GCN_IF_ATOMIC && in.flags & GCN_IF_ATOMIC_RTN && in.flags & GCN_IF_LOAD &&
                in.flags & GCN_IF_STORE);
    in = DEC(0x00, 0x00, 0x08, 0xdd, 0x02, 0x04, 0x00, 0x00); /* flat_atomic_add no glc */
    assert_true(in.flags & GCN_IF_ATOMIC);
    assert_false(in.flags & GCN_IF_ATOMIC_RTN);
    assert_int_equal(in.dst[0], GCN_OPD_NONE);
    in = DEC(0x00, 0x00, 0x81, 0xbf);
    assert_true(in.flags & GCN_IF_ENDPGM);
    in = DEC(0x6a, 0x20, 0x84, 0xbe); /* s_and_saveexec_b64 */
    assert_true(in.flags & GCN_IF_WRITES_EXEC);
    in = DEC(0x04, 0x01, 0xfe, 0xbe); /* s_mov_b64 exec, s[4:5] */
    assert_true(in.flags & GCN_IF_WRITES_EXEC);
    in = DEC(0x10, 0x00, 0x70, 0xe0, 0x00, 0x01, 0x00, 0x05); /* buffer_store_dword v1, off, s[0:3], s5 offset:16 */
    assert_true(in.flags & GCN_IF_SCRATCH && in.flags & GCN_IF_STORE);
    assert_int_equal(in.imm, 16);
    assert_int_equal(in.src[3], 5);
    in = DEC(0xff, 0x00, 0x80, 0xbe, 0x78, 0x56, 0x34, 0x12); /* s_mov_b32 s0, literal */
    assert_int_equal(in.size, 8);
    assert_int_equal(in.literal, 0x12345678);
    in = DEC(0xff, 0x04, 0x02, 0x02, 0xdb, 0x0f, 0x49, 0x40); /* v_add_f32_e32 v1, lit, v2 */
    assert_int_equal(in.op, GCN_OP_v_add_f32);
    assert_int_equal(in.literal, 0x40490fdb);
    assert_int_equal(in.src[0], GCN_OPD_LIT);
    assert_int_equal(in.src[1], GCN_OPD_VGPR + 2);
    assert_int_equal(in.dst[0], GCN_OPD_VGPR + 1);
    in = DEC(0x01, 0x04, 0x19, 0xd1, 0x02, 0x07, 0x02, 0x00); /* v_add_u32_e64 v1, s[4:5], v2, v3 */
    assert_int_equal(in.op, GCN_OP_v_add_u32);
    assert_int_equal(in.dst[1], 4);
    assert_true(in.mods & GCN_M_E64);
    in = DEC(0x01, 0x05, 0x94, 0x7d); /* v_cmp_eq_u32_e32 vcc */
    assert_int_equal(in.dst[0], GCN_OPD_VCC);
    in = DEC(0x01, 0x03, 0x6e, 0xd8, 0x02, 0x00, 0x00, 0x00); /* ds_read2_b32 offset0:1 offset1:3 */
    assert_int_equal(in.unit, GCN_UNIT_LDS);
    assert_int_equal(in.mem_bytes, 8);
    assert_int_equal(in.imm & 0xff, 1);
    assert_int_equal(in.imm >> 8, 3);
    in = DEC(0x03, 0x00, 0x8e, 0xbf); /* s_sleep 3 */
    assert_true(in.flags & GCN_IF_SLEEP);
    assert_int_equal(in.target, 3);
    in = DEC(0x02, 0x00, 0x0a, 0xc0, 0x10, 0x00, 0x00, 0x00); /* s_load_dwordx4 s[0:3], s[4:5], 0x10 */
    assert_int_equal(in.unit, GCN_UNIT_SMEM);
    assert_int_equal(in.mem_bytes, 16);
    assert_int_equal(in.src[0], 4);
    assert_int_equal(in.imm, 0x10);
    in = DEC(0x00, 0x02, 0xe8, 0xd1, 0x02, 0x07, 0x12, 0x04); /* v_mad_u64_u32 v[0:1], s[2:3], v2, v3, v[4:5] */
    assert_int_equal(in.dst[1], 2);
    assert_int_equal(in.src[2], GCN_OPD_VGPR + 4);
    in = DEC(0x00, 0x00, 0xdc, 0xd0, 0x01, 0x05, 0x02, 0x00); /* v_cmpx_gt_u32_e64 */
    assert_true(in.flags & GCN_IF_WRITES_EXEC);
    in = DEC(0x01, 0x09, 0x00, 0xba, 0x03, 0x00, 0x00, 0x00); /* s_setreg_imm32_b32 */
    assert_int_equal(in.size, 8);
    assert_int_equal(in.literal, 3);
    in = DEC(0x00, 0x81, 0x01, 0xd1, 0x01, 0x05, 0x02, 0x48); /* v_add_f32_e64 v0, |v1|, -v2 clamp mul:2 */
    assert_int_equal(in.mods & 7, 1);
    assert_int_equal((in.mods >> GCN_M_NEG_SHIFT) & 7, 2);
    assert_true(in.mods & GCN_M_CLAMP);
    assert_int_equal((in.mods >> GCN_M_OMOD_SHIFT) & 3, 1);
    char buf[128];
    gcn_disasm(&in, buf, sizeof buf);
    assert_string_equal(buf, "v_add_f32_e64 v0, |v1|, -v2 clamp mul:2");
    in = DEC(0x00, 0x00, 0x00, 0xd1, 0x01, 0xe5, 0x09, 0x00);
    gcn_disasm(&in, buf, sizeof buf);
    assert_string_equal(buf, "v_cndmask_b32_e64 v0, v1, 1.0, s[2:3]");
    assert_string_equal(gcn_unit_name(GCN_UNIT_VALU), "valu");
    assert_string_equal(gcn_op_name(GCN_OP_v_add_f32), "v_add_f32");
    assert_non_null(gcn_op_name(99999));
}

/* The derived columns of gcn3.def (AOP, ELEM, SEG, VCLS) agree with the
 * instruction's other columns and with the atomic-family rule of
 * gcn_atomic_of_name, so no reader has to guess them from a mnemonic. */
static void test_named_columns(void **state)
{
    (void)state;
    unsigned n_atomic = 0, n_cas = 0, n_ds2 = 0, n_st64 = 0;
    for (unsigned op = 1; op < GCN_OP_COUNT; op++) {
        const gcn_op_info *oi = gcn_op_info_of(op);
        const char *nm = oi->name;
        if (oi->flags & GCN_IF_ATOMIC) {
            n_atomic++;
            assert_int_equal(oi->aop, gcn_atomic_of_name(nm));
            if (oi->aop == GCN_AT_CMPSWAP) n_cas++;
            /* the element of an atomic is 4 or 8 bytes */
            assert_true(oi->elem_bytes == 4 || oi->elem_bytes == 8);
        } else {
            assert_int_equal(oi->aop, GCN_AT_NONE);
        }
        if (oi->mem) assert_int_equal(oi->elem_bytes * oi->elem_count, oi->mem);
        else assert_int_equal(oi->elem_count, 0);
        if (oi->elem_count == 2) {
            n_ds2++;
            assert_int_equal(oi->fmt, GCN_FMT_DS);
        }
        assert_int_equal(oi->elem_scale, strstr(nm, "st64") ? 64 : 1);
        n_st64 += oi->elem_scale == 64;
        assert_true(oi->seg < GCN_SEG_COUNT);
        if (oi->seg == GCN_SEG_LDS || oi->seg == GCN_SEG_XLANE || oi->seg == GCN_SEG_LDSCTR || oi->seg == GCN_SEG_GDS)
            assert_int_equal(oi->fmt, GCN_FMT_DS);
        if (oi->fmt == GCN_FMT_FLAT) assert_int_equal(oi->seg, GCN_SEG_FLAT);
        assert_true(oi->vcls < GCN_VCLS_COUNT);
        assert_int_equal(oi->vcls != GCN_VCLS_NONE, oi->unit == GCN_UNIT_VALU);
        if (oi->flags & GCN_IF_TRANS) assert_true(oi->vcls == GCN_VCLS_TRANS || oi->vcls == GCN_VCLS_LANE);
    }
    /* spot checks, one per column */
    assert_int_equal(gcn_op_info_of(GCN_OP_flat_atomic_cmpswap_x2)->aop, GCN_AT_CMPSWAP);
    assert_int_equal(gcn_op_info_of(GCN_OP_flat_atomic_cmpswap_x2)->elem_bytes, 8);
    assert_int_equal(gcn_op_info_of(GCN_OP_ds_cmpst_rtn_b32)->aop, GCN_AT_CMPSWAP);
    assert_int_equal(gcn_op_info_of(GCN_OP_ds_min_rtn_i32)->aop, GCN_AT_SMIN);
    assert_int_equal(gcn_op_info_of(GCN_OP_ds_add_rtn_u64)->elem_bytes, 8);
    assert_int_equal(gcn_op_info_of(GCN_OP_ds_wrxchg2st64_rtn_b32)->elem_bytes, 4);
    assert_int_equal(gcn_op_info_of(GCN_OP_ds_read2st64_b64)->elem_count, 2);
    assert_int_equal(gcn_op_info_of(GCN_OP_ds_read2st64_b64)->elem_scale, 64);
    assert_int_equal(gcn_op_info_of(GCN_OP_ds_bpermute_b32)->seg, GCN_SEG_XLANE);
    assert_int_equal(gcn_op_info_of(GCN_OP_ds_append)->seg, GCN_SEG_LDSCTR);
    assert_int_equal(gcn_op_info_of(GCN_OP_ds_gws_barrier)->seg, GCN_SEG_GDS);
    assert_int_equal(gcn_op_info_of(GCN_OP_s_load_dwordx4)->seg, GCN_SEG_SCALAR);
    assert_int_equal(gcn_op_info_of(GCN_OP_buffer_load_dword)->seg, GCN_SEG_GLOBAL);
    assert_int_equal(gcn_op_info_of(GCN_OP_v_readlane_b32)->vcls, GCN_VCLS_LANE);
    assert_int_equal(gcn_op_info_of(GCN_OP_v_cmp_lt_f32)->vcls, GCN_VCLS_CMP);
    assert_int_equal(gcn_op_info_of(GCN_OP_v_fma_f64)->vcls, GCN_VCLS_F64);
    assert_int_equal(gcn_op_info_of(GCN_OP_v_add_u32)->vcls, GCN_VCLS_INT);
    assert_int_equal(gcn_op_info_of(GCN_OP_s_add_u32)->vcls, GCN_VCLS_NONE);
    assert_int_equal(gcn_op_info_of(100000)->flags, GCN_IF_INVALID); /* out of range: the invalid op */
    assert_true(n_atomic > 100 && n_cas >= 10 && n_ds2 == 12 && n_st64 == 6);
    assert_string_equal(gcn_fmt_name(GCN_FMT_VOP3), "vop3");
    assert_string_equal(gcn_fmt_name(999), "?");
}

static void test_invalid_and_program(void **state)
{
    (void)state;
    /* s_mov_b32 s0, lit | invalid word | s_endpgm */
    const uint32_t text[] = {0xbe8000ff, 0x12345678, 0xffffffffu, 0xbf810000};
    gcn_program *p = gcn_program_decode(NULL, (const uint8_t *)text, sizeof text, 0x1000);
    assert_non_null(p);
    assert_int_equal(p->n_insn, 3);
    assert_int_equal(p->insn[0].size, 8);
    assert_true(p->insn[1].flags & GCN_IF_INVALID);
    assert_int_equal(p->insn[1].size, 4);
    assert_int_equal(p->insn[2].op, GCN_OP_s_endpgm);
    assert_ptr_equal(gcn_program_at(p, 0x1000), &p->insn[0]);
    assert_null(gcn_program_at(p, 0x1004)); /* the literal */
    assert_ptr_equal(gcn_program_at(p, 0x1008), &p->insn[1]);
    assert_ptr_equal(gcn_program_at(p, 0x100c), &p->insn[2]);
    assert_null(gcn_program_at(p, 0x1010));
    assert_null(gcn_program_at(p, 0xffc));
    assert_null(gcn_program_at(p, 0x1002));
    char buf[64];
    gcn_disasm(&p->insn[1], buf, sizeof buf);
    assert_string_equal(buf, ".long 0xffffffff");
    gcn_program_free(p);
    gcn_program_free(NULL);
    /* a literal cut off by the end of .text, an 8-byte format with one word */
    const uint32_t cut[] = {0xbe8000ff};
    p = gcn_program_decode(NULL, (const uint8_t *)cut, sizeof cut, 0);
    assert_int_equal(p->n_insn, 1);
    assert_true(p->insn[0].flags & GCN_IF_INVALID);
    gcn_program_free(p);
    gcn_insn in;
    uint32_t w = 0xdc500000; /* flat_load_dword, second word missing */
    assert_int_equal(gcn_decode_one(&w, 1, 0, &in), 4);
    assert_true(in.flags & GCN_IF_INVALID);
}

static void test_random_words(void **state)
{
    (void)state;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    size_t nvalid = 0;
    for (int i = 0; i < 300000; i++) {
        uint32_t w[3];
        for (int k = 0; k < 3; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            w[k] = (uint32_t)x;
        }
        gcn_insn in;
        int sz = gcn_decode_one(w, 1 + (unsigned)(x % 3), 0, &in);
        assert_true(sz == 4 || sz == 8 || sz == 12);
        assert_true(in.op < GCN_OP_COUNT);
        char buf[160];
        int n = gcn_disasm(&in, buf, sizeof buf);
        assert_true(n > 0);
        nvalid += !(in.flags & GCN_IF_INVALID);
    }
    assert_true(nvalid > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),  cmocka_unit_test(test_tables),
        cmocka_unit_test(test_no_overlap), cmocka_unit_test(test_fields),
        cmocka_unit_test(test_invalid_and_program), cmocka_unit_test(test_random_words),
        cmocka_unit_test(test_named_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
