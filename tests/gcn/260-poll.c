/*
 * 260-poll.c - GCN_IF_POLL_EXIT (gcn/gcn_poll.c): which loops can wait, so
 * that a loop the emulator ran once is recorded as a RETRY await only when
 * its exit may depend on what it polled. Encodings from llvm-mc 15
 * -arch=amdgcn -mcpu=gfx803 -show-encoding.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gcn/gcn_isa.h"

#define VADDR 0x100u
#define ENDPGM 0xbf810000u
#define SCC0 0xbf840000u   /* s_cbranch_scc0 */
#define SCC1 0xbf850000u   /* s_cbranch_scc1 */
#define VCCNZ 0xbf870000u  /* s_cbranch_vccnz */
#define EXECNZ 0xbf890000u /* s_cbranch_execnz */
#define CDBG 0xbf970000u   /* s_cbranch_cdbgsys */

/* instructions (words) */
#define SLOAD2_S16_S8 0xc0060404u, 0u        /* s_load_dwordx2 s[16:17], s[8:9], 0x0 */
#define SLOAD_S4_GLC 0xc0030100u, 0u         /* s_load_dword s4, s[0:1], 0x0 glc */
#define SADD_S11_M1 0x810bc10bu              /* s_add_i32 s11, s11, -1 */
#define WAIT_LGKM 0xbf8c007fu                /* s_waitcnt lgkmcnt(0) */
#define VMOV_V5_S17 0x7e0a0211u              /* v_mov_b32 v5, s17 */
#define VADD_V3_S16 0x32060610u              /* v_add_u32 v3, vcc, s16, v3 */
#define VADDC_V4 0x38080905u                 /* v_addc_u32 v4, vcc, v5, v4, vcc */
#define FLOAD_V3 0xdc500000u, 0x03000003u    /* flat_load_dword v3, v[3:4] */
#define FLOAD_V3_GLC 0xdc510000u, 0x03000000u /* flat_load_dword v3, v[0:1] glc */
#define SCMP_S11_0 0xbf06800bu               /* s_cmp_eq_u32 s11, 0 */
#define WAIT_VM 0xbf8c0f70u                  /* s_waitcnt vmcnt(0) */
#define VADDF_V2 0x02040702u                 /* v_add_f32 v2, v2, v3 */
#define VCMP_EQ0_V3 0x7d940680u              /* v_cmp_eq_u32 vcc, 0, v3 */
#define VCMP_NE0_V3 0x7d9a0680u              /* v_cmp_ne_u32 vcc, 0, v3 */
#define SAND_VCC 0x86ea6a7eu                 /* s_and_b64 vcc, exec, vcc */
#define SCMP_S4_0 0xbf068004u                /* s_cmp_eq_u32 s4, 0 */
#define DSREAD_V3 0xd86c0000u, 0x03000000u   /* ds_read_b32 v3, v0 */
#define CMPSWAP 0xdd050000u, 0x03000400u     /* flat_atomic_cmpswap v3, v[0:1], v[4:5] glc */
#define VCMP_NE_V3_V4 0x7d9a0903u            /* v_cmp_ne_u32 vcc, v3, v4 */
#define RFL_S5_V3 0x7e0a0503u                /* v_readfirstlane_b32 s5, v3 */
#define SADDU_S11_S5 0x800b050bu             /* s_add_u32 s11, s11, s5 */
#define SANDN2_EXEC 0x89fe6a7eu              /* s_andn2_b64 exec, exec, vcc */
#define SETPC_S30 0xbe801d1eu                /* s_setpc_b64 s[30:31] */

/* Decodes pre (words before the loop), the loop body and a conditional
 * branch br back to the body's first instruction, then s_endpgm and post;
 * returns whether the branch has GCN_IF_POLL_EXIT. */
static int poll_exit_of(const uint32_t *pre, size_t npre, const uint32_t *body, size_t nbody, uint32_t br,
                        const uint32_t *post, size_t npost)
{
    uint32_t code[128];
    size_t n = 0;
    if (npre)
        memcpy(code, pre, npre * 4);
    n += npre;
    memcpy(code + n, body, nbody * 4);
    n += nbody;
    code[n] = br | (uint16_t)(-(int)(nbody + 1)); /* simm16: words from the next instruction */
    size_t bi = n++;
    code[n++] = ENDPGM;
    if (npost)
        memcpy(code + n, post, npost * 4);
    n += npost;
    gcn_program *p = gcn_program_decode(NULL, (const uint8_t *)code, n * 4, VADDR);
    assert_non_null(p);
    const gcn_insn *b = gcn_program_at(p, VADDR + 4 * bi);
    assert_non_null(b);
    assert_true(b->flags & GCN_IF_BR_COND);
    assert_int_equal(b->target, VADDR + 4 * npre);
    const gcn_insn *h = gcn_program_at(p, b->target);
    assert_non_null(h);
    assert_true(h->flags & GCN_IF_LOOP_HEAD);
    int r = (b->flags & GCN_IF_POLL_EXIT) != 0;
    gcn_program_free(p);
    return r;
}

#define LOOP(br, ...)                                                                                        \
    ({                                                                                                       \
        const uint32_t body_[] = {__VA_ARGS__};                                                              \
        poll_exit_of(NULL, 0, body_, sizeof body_ / 4, (br), NULL, 0);                                       \
    })

/* gd's update: for (e = 0; e < ngpu; e++) sum += g.p[e][j]; a count loop over
 * plain loads (its exit is s11's) */
static void test_count_loops(void **state)
{
    (void)state;
    assert_false(LOOP(SCC0, SLOAD2_S16_S8, SADD_S11_M1, WAIT_LGKM, VMOV_V5_S17, VADD_V3_S16, VADDC_V4, FLOAD_V3,
                      SCMP_S11_0, WAIT_VM, VADDF_V2));
    /* the same summing volatile (glc) values: what it polled does not decide its exit */
    assert_false(LOOP(SCC0, SLOAD2_S16_S8, SADD_S11_M1, WAIT_LGKM, FLOAD_V3_GLC, SCMP_S11_0, WAIT_VM, VADDF_V2));
    /* ... unless the count comes from the polled value (v_readfirstlane into s5, added to s11) */
    assert_true(LOOP(SCC0, FLOAD_V3_GLC, WAIT_VM, RFL_S5_V3, SADDU_S11_S5, SCMP_S11_0));
    /* a value carried around the loop: s5 read first, polled later in the body */
    assert_true(LOOP(SCC0, SADDU_S11_S5, SCMP_S11_0, FLOAD_V3_GLC, WAIT_VM, RFL_S5_V3));
}

static void test_wait_loops(void **state)
{
    (void)state;
    /* while (volatile flag == 0): VCC from the glc load */
    assert_true(LOOP(VCCNZ, FLOAD_V3_GLC, WAIT_VM, VCMP_EQ0_V3, SAND_VCC));
    /* a scalar poll: s_load glc, SCC from it */
    assert_true(LOOP(SCC1, SLOAD_S4_GLC, WAIT_LGKM, SCMP_S4_0));
    /* the LDS: a wave waits on another wave of its workgroup */
    assert_true(LOOP(VCCNZ, DSREAD_V3, WAIT_LGKM, VCMP_EQ0_V3, SAND_VCC));
    /* a compare-and-swap lock: the returned value decides */
    assert_true(LOOP(VCCNZ, CMPSWAP, WAIT_VM, VCMP_NE_V3_V4, SAND_VCC));
    /* a divergent poll: the lanes whose flag is set leave (EXEC) */
    assert_true(LOOP(EXECNZ, FLOAD_V3_GLC, WAIT_VM, VCMP_NE0_V3, SANDN2_EXEC));
    /* a plain load cannot see another wave's progress (the compiler may hoist it) */
    assert_false(LOOP(VCCNZ, FLOAD_V3, WAIT_VM, VCMP_EQ0_V3, SAND_VCC));
}

static void test_not_followed(void **state)
{
    (void)state;
    /* a debug branch's condition is not followed */
    assert_true(LOOP(CDBG, SADD_S11_M1, SCMP_S11_0));
    /* a call inside the loop */
    assert_true(LOOP(SCC0, SADD_S11_M1, SETPC_S30, SCMP_S11_0));
    /* the count loop entered in its middle from after the loop (s_branch back to
     * its s_cmp): the iteration may run code outside the range */
    const uint32_t body[] = {SADD_S11_M1, SCMP_S11_0};
    const uint32_t post[] = {0xbf82fffcu /* s_branch to VADDR + 4: s_cmp */};
    assert_true(poll_exit_of(NULL, 0, body, 2, SCC0, post, 1));
    assert_false(poll_exit_of(NULL, 0, body, 2, SCC0, NULL, 0));
    /* entered at its head from before the loop: an ordinary entry */
    const uint32_t pre[] = {0xbf820000u /* s_branch to the next instruction */};
    assert_false(poll_exit_of(pre, 1, body, 2, SCC0, NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_loops),
        cmocka_unit_test(test_wait_loops),
        cmocka_unit_test(test_not_followed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
