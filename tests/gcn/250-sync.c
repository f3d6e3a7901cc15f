/*
 * 250-sync.c - gcn_program_sync_reasons (gcn/gcn_sync.c): which kernels may
 * wait on other workgroups, so that the emulator runs them on one worker and
 * their traces do not depend on --threads (issue 15). Encodings from
 * llvm-mc 15 -arch=amdgcn -mcpu=gfx803 -show-encoding.
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
#define SLEEP1 0xbf8e0001u
#define SETPC_S30 0xbe801d1eu

static uint32_t reasons(const uint32_t *code, size_t n_words, uint64_t entry, uint64_t *first)
{
    gcn_program *p = gcn_program_decode(NULL, (const uint8_t *)code, n_words * 4, VADDR);
    assert_non_null(p);
    uint32_t r = gcn_program_sync_reasons(p, entry, first);
    gcn_program_free(p);
    return r;
}

/* One memory instruction (two words) and s_endpgm. */
static uint32_t one(uint32_t w0, uint32_t w1)
{
    const uint32_t code[] = {w0, w1, ENDPGM};
    return reasons(code, 3, VADDR, NULL);
}

static void test_memory_ops(void **state)
{
    (void)state;
    assert_int_equal(one(0xdc500000u, 0), 0);                   /* flat_load_dword v0, v[0:1] */
    assert_int_equal(one(0xdc510000u, 0), GCN_SYNC_GLC_LOAD);   /* ... glc (volatile/atomic load) */
    assert_int_equal(one(0xdd050000u, 0x0200u), GCN_SYNC_ATOMIC_RTN); /* flat_atomic_cmpswap v0, .. glc */
    assert_int_equal(one(0xdd040000u, 0x0200u), 0);             /* the same without return */
    assert_int_equal(one(0xd8400000u, 0x0201u), 0);             /* ds_add_rtn_u32: LDS stays in the workgroup */
    assert_int_equal(one(0xc0030001u, 0), GCN_SYNC_GLC_LOAD);   /* s_load_dword s0, s[2:3], 0x0 glc */
}

static void test_control_flow(void **state)
{
    (void)state;
    /* 0x100 s_branch 0x108; 0x104 s_sleep 1 (skipped); 0x108 s_endpgm;
     * 0x10c s_cbranch_scc0 0x114; 0x110 s_endpgm; 0x114 s_sleep 1; 0x118 s_endpgm */
    const uint32_t code[] = {0xbf820001u, SLEEP1, ENDPGM, 0xbf840001u, ENDPGM, SLEEP1, ENDPGM};
    uint64_t first = 0;
    assert_int_equal(reasons(code, 7, 0x100, NULL), 0);
    assert_int_equal(reasons(code, 7, 0x10c, &first), GCN_SYNC_SLEEP);
    assert_int_equal(first, 0x114);
    assert_int_equal(reasons(code, 7, 0x108, NULL), 0); /* s_endpgm alone */
}

static void test_calls(void **state)
{
    (void)state;
    /* 0x100 s_getpc_b64 s[4:5] (0x104); 0x104 s_add_u32 s4, s4, 16;
     * 0x108 s_addc_u32 s5, s5, 0; 0x10c s_swappc_b64 s[30:31], s[4:5] (-> 0x114);
     * 0x110 s_endpgm; 0x114 s_sleep 1 (the function); 0x118 s_setpc_b64 s[30:31];
     * 0x11c s_endpgm (a second kernel that calls nothing) */
    const uint32_t code[] = {0xbe841c00u, 0x80049004u, 0x82058005u, 0xbe9e1e04u,
                             ENDPGM,      SLEEP1,      SETPC_S30,   ENDPGM};
    uint64_t first = 0;
    assert_int_equal(reasons(code, 8, 0x100, &first), GCN_SYNC_SLEEP);
    assert_int_equal(first, 0x114);
    assert_int_equal(reasons(code, 8, 0x11c, NULL), 0);
    /* a call through a pointer loaded from memory: every function counts.
     * 0x100 s_load_dwordx2 s[4:5], s[0:1], 0x0; 0x108 s_swappc_b64 s[30:31], s[4:5];
     * 0x10c s_endpgm; 0x110 s_sleep 1; 0x114 s_setpc_b64 s[30:31] */
    const uint32_t ind[] = {0xc0060100u, 0, 0xbe9e1e04u, ENDPGM, SLEEP1, SETPC_S30};
    assert_int_equal(reasons(ind, 6, 0x100, NULL), GCN_SYNC_SLEEP | GCN_SYNC_INDIRECT);
    /* ... and with no waiting instruction anywhere, nothing */
    const uint32_t ind0[] = {0xc0060100u, 0, 0xbe9e1e04u, ENDPGM, SETPC_S30};
    assert_int_equal(reasons(ind0, 5, 0x100, NULL), 0);
    /* the address pair overwritten between s_getpc and the call: not resolved */
    const uint32_t clob[] = {0xbe841c00u, 0x80049004u, 0x82058005u, 0xbe840080u /* s_mov_b32 s4, 0 */,
                             0xbe9e1e04u, ENDPGM, SLEEP1, SETPC_S30};
    assert_int_equal(reasons(clob, 8, 0x100, NULL), GCN_SYNC_SLEEP | GCN_SYNC_INDIRECT);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(gcn_sync_reason_name(GCN_SYNC_SLEEP | GCN_SYNC_GLC_LOAD), "s_sleep");
    assert_string_equal(gcn_sync_reason_name(GCN_SYNC_GLC_LOAD), "a glc (volatile or atomic) load");
    assert_string_equal(gcn_sync_reason_name(0), "nothing");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_ops),
        cmocka_unit_test(test_control_flow),
        cmocka_unit_test(test_calls),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
