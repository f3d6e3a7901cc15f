/* 740-datapath: data values through the modelled hierarchy, between mock
 * ports: two CUs' L1s (write-through, no-write-allocate) over one L2 bank
 * (write-back, write-allocate) over a DRAM channel whose contents are the
 * sim's rp_fmem. Checks that
 *  - a store reaches the L2 and stays there (DRAM unchanged) until the line
 *    is evicted, and the eviction writes its data back to DRAM;
 *  - after the L2 flush, DRAM holds a store and a load from another CU sees
 *    it (through its L1 miss and the L2, and again after a DRAM refetch);
 *  - the injected bug (skip_flush, debug.skip_l2_flush) leaves DRAM stale;
 *  - a load whose trace value differs from memory is reported (the check
 *    can fail);
 *  - a store that meets its line's pending fill in the L1 is seen by later
 *    loads but not by the load queued before it;
 *  - an atomic is performed at the L2 on its copy, returns the old value and
 *    the L1 drops its own copy;
 *  - compare-and-swaps that succeeded in the recording apply in the recorded
 *    order (the L2 holds one whose compare value is not there yet), one that
 *    failed there never writes, and with holds off (sim.cas_hold_max = 0)
 *    they apply in arrival order;
 *  - a hashed load (trace 2.2) whose lanes come from two lines is checked
 *    by its hash once it has both: a right one is clean, one wrong lane is
 *    one mismatch (of the instruction). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "replay/rp_sim_internal.h"

#define LINE 64
#define NACC 32

typedef struct bench {
    rp_sim s;                 /* only eng, pool, mem, cfg, check, lbufs and hooks (the data check) are used */
    rp_mem_ctx memx;          /* the caches' view of it */
    rp_dram dram;
    rp_cache l1[2], l2;
    rp_link to_l1[2], to_l2;  /* CU -> L1 top; L1s -> L2 top */
    rp_port cu;               /* responses of both L1s */
    rp_link cu_link;
    rp_kernel k;
    rp_wg wg;
    rp_wave w;
    rp_access acc[NACC];
    trc_mem_op op[NACC];
    uint64_t addr[NACC][64];
    uint8_t buf[NACC][64 * 16];
    int n_acc, n_got;
} bench;

static bench *B;

static void on_resp(rp_port *p, rp_engine *e)
{
    (void)e;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        assert_null(m->data); /* the CU gets no line data: loads are performed in the L1 */
        B->n_got++;
        rp_msg_free(&B->s.pool, m);
    }
}

static rp_link *route_l1(void *ctx, uint64_t line, rp_port **dst)
{
    (void)line;
    *dst = NULL;
    return &((bench *)ctx)->to_l2;
}

static rp_link *route_l2(void *ctx, uint64_t line, rp_port **dst)
{
    (void)line;
    *dst = NULL;
    return &((bench *)ctx)->dram.in;
}

/* L2: 2 sets x 2 ways (256 B), so lines 0x000, 0x080, 0x100 share set 0. */
static bench *setup_hold(bool skip_flush, rp_time cas_hold_max_ps)
{
    bench *b = calloc(1, sizeof *b);
    assert_non_null(b);
    B = b;
    rp_config_defaults(&b->s.cfg);
    b->s.cfg.check_print = 0;
    /* the data check observes the values the model's memory returns, as rp_sim_init attaches it */
    assert_int_equal(rp_hooks_attach(&b->s.hooks, RP_HOOK_VALUE, rp_check_observe, NULL), 0);
    assert_int_equal(rp_hooks_attach(&b->s.hooks, RP_HOOK_MISMATCH, rp_check_reporter, NULL), 0);
    assert_int_equal(rp_engine_init(&b->s.eng), 0);
    b->s.mem = rp_fmem_create();
    assert_non_null(b->s.mem);
    b->memx = rp_sim_mem_ctx(&b->s);
    rp_clock clk = rp_clock_make(1000000000);
    rp_cache_spec l2 = {256, 2, LINE, 4, 70000, clk, true, false, true, {0, 0}, {0, 0}, cas_hold_max_ps};
    rp_cache_spec l1 = {1024, 4, LINE, 4, 20000, clk, false, true, false, {0, 0}, {0, 0}, 0};
    rp_dram_init(&b->dram, &b->s.eng, "gpu[0].dram[0]", 100000, 0, LINE);
    assert_int_equal(rp_cache_init(&b->l2, &b->s.eng, &b->s.pool, &b->memx, "gpu[0].l2[0]", &l2, route_l2, b, 0, 0, 0), 0);
    b->l2.skip_flush = skip_flush;
    rp_link_init(&b->to_l2, &b->s.eng, &b->l2.top, 4000, 0, 0);
    for (int i = 0; i < 2; i++) {
        char name[32];
        snprintf(name, sizeof name, "gpu[0].cu[%d].l1v", i);
        assert_int_equal(rp_cache_init(&b->l1[i], &b->s.eng, &b->s.pool, &b->memx, name, &l1, route_l1, b, 4000, 0, 0), 0);
        rp_link_init(&b->to_l1[i], &b->s.eng, &b->l1[i].top, 0, 0, 0);
    }
    b->cu.notify = on_resp;
    rp_link_init(&b->cu_link, &b->s.eng, &b->cu, 0, 0, 0);
    b->wg.k = &b->k;
    b->w.wg = &b->wg;
    return b;
}

static bench *setup(bool skip_flush) { return setup_hold(skip_flush, 0); }

static void teardown(bench *b)
{
    for (int i = 0; i < 2; i++)
        rp_cache_fini(&b->l1[i]);
    rp_cache_fini(&b->l2);
    rp_lbufs_fini(&b->s.lbufs);
    rp_fmem_destroy(b->s.mem);
    rp_msg_pool_fini(&b->s.pool);
    rp_engine_fini(&b->s.eng);
    free(b);
}

static void run(bench *b)
{
    while (rp_engine_step(&b->s.eng))
        ;
}

/* One VMEM access of `lanes` dwords at consecutive addresses from addr,
 * lane i's dword = base + i (stores) or the expected value (loads). */
static rp_access *access(bench *b, uint32_t flags, uint64_t addr, uint32_t lanes, uint32_t base)
{
    assert_true(b->n_acc < NACC);
    int i = b->n_acc++;
    trc_mem_op *op = &b->op[i];
    op->flags = flags;
    op->bytes_per_lane = 4;
    op->exec = lanes >= 64 ? ~0ull : (1ull << lanes) - 1;
    for (uint32_t l = 0; l < lanes; l++) {
        b->addr[i][l] = addr + 4 * l;
        uint32_t v = base + l;
        memcpy(b->buf[i] + 4 * l, &v, 4);
    }
    op->addr = b->addr[i];
    if (flags & (TRC_MO_LOAD | TRC_MO_ATOMIC))
        op->load_data = b->buf[i];
    if (flags & TRC_MO_STORE)
        op->store_data = b->buf[i];
    rp_access *a = &b->acc[i];
    a->w = &b->w;
    rp_access_bind(a, op, flags & TRC_MO_SMEM ? 1 : lanes);
    a->kind = RP_ACC_VMEM;
    return a;
}

/* Send the line of access a through CU cu's L1 (lanes: all of a's). */
/* Send the lanes `mask` of access a, all in the line at `line`, through CU
 * cu's L1. */
static void issue_part(bench *b, int cu, uint8_t type, rp_access *a, uint64_t line, uint64_t mask)
{
    rp_msg *m = rp_msg_alloc(&b->s.pool);
    assert_non_null(m);
    m->type = type;
    m->addr = line;
    m->lane_mask = mask;
    m->acc = a;
    m->payload = type == RP_MSG_READ ? 0 : LINE;
    m->reply_link = &b->cu_link;
    m->reply_port = &b->cu;
    rp_link_send(&b->to_l1[cu], m, b->s.eng.now);
}

static void issue(bench *b, int cu, uint8_t type, rp_access *a)
{
    issue_part(b, cu, type, a, a->op->addr[0] & ~(uint64_t)(LINE - 1), a->op->exec);
}

static uint32_t dram_word(bench *b, uint64_t addr)
{
    uint32_t v;
    rp_fmem_read(b->s.mem, addr, &v, 4);
    return v;
}

static void test_eviction_writes_back(void **state)
{
    (void)state;
    bench *b = setup(false);
    issue(b, 0, RP_MSG_WRITE, access(b, TRC_MO_STORE, 0x000, 16, 100));
    run(b);
    assert_int_equal(b->n_got, 1);
    assert_int_equal(dram_word(b, 0x000), 0);       /* still only in the L2 (write-back) */
    assert_int_equal(b->l2.st_writebacks, 0);
    issue(b, 0, RP_MSG_WRITE, access(b, TRC_MO_STORE, 0x080, 16, 200));
    issue(b, 0, RP_MSG_WRITE, access(b, TRC_MO_STORE, 0x100, 16, 300)); /* evicts 0x000 */
    run(b);
    assert_int_equal(b->l2.st_writebacks, 1);
    assert_int_equal(b->dram.st_writes, 1);
    for (uint32_t l = 0; l < 16; l++)
        assert_int_equal(dram_word(b, 0x000 + 4 * l), 100 + l);
    assert_int_equal(dram_word(b, 0x100), 0);       /* the others are still dirty in the L2 */
    /* the evicted line comes back from DRAM for a load of the other CU */
    issue(b, 1, RP_MSG_READ, access(b, TRC_MO_LOAD, 0x000, 16, 100));
    run(b);
    assert_int_equal(b->s.check.loads_checked, 16);
    assert_int_equal(b->s.check.load_mismatches, 0);
    teardown(b);
}

static void flush(bench *b)
{
    rp_msg *m = rp_msg_alloc(&b->s.pool);
    m->type = RP_MSG_FLUSH;
    m->reply_link = &b->cu_link;
    m->reply_port = &b->cu;
    rp_link_send(&b->to_l2, m, b->s.eng.now);
    run(b);
}

static void test_store_flush_load_other_cu(void **state)
{
    (void)state;
    bench *b = setup(false);
    /* CU 1 caches the old line first, so that the kernel-start invalidate matters */
    rp_access *a0 = access(b, TRC_MO_LOAD, 0x040, 16, 0);
    memset(b->buf[0], 0, 64); /* expected: never-written memory reads as zeros */
    issue(b, 1, RP_MSG_READ, a0);
    run(b);
    assert_int_equal(b->s.check.loads_checked, 16);
    assert_int_equal(b->s.check.load_mismatches, 0);
    issue(b, 0, RP_MSG_WRITE, access(b, TRC_MO_STORE, 0x040, 16, 7000));
    run(b);
    flush(b); /* kernel end */
    assert_int_equal(b->l2.st_writebacks, 1);
    for (uint32_t l = 0; l < 16; l++)
        assert_int_equal(dram_word(b, 0x040 + 4 * l), 7000 + l);
    /* next kernel: CU 1 invalidates its L1V (as cu.c does at kernel start) */
    rp_msg *inv = rp_msg_alloc(&b->s.pool);
    inv->type = RP_MSG_INVAL;
    rp_link_send(&b->to_l1[1], inv, b->s.eng.now);
    rp_kernel k2 = {0};
    rp_wg wg2 = {0};
    rp_wave w2 = {0};
    wg2.k = &k2;
    w2.wg = &wg2;
    rp_access *a = access(b, TRC_MO_LOAD, 0x040, 16, 7000);
    a->w = &w2;
    uint64_t checked = b->s.check.loads_checked;
    issue(b, 1, RP_MSG_READ, a);
    run(b);
    assert_int_equal(b->s.check.loads_checked - checked, 16);
    assert_int_equal(b->s.check.load_mismatches, 0);
    assert_int_equal(k2.mismatches, 0);
    teardown(b);
}

/* The shared scalar cache has no CU to invalidate it: the first request of
 * a new kernel does. */
static void test_scalar_cache_kernel_invalidate(void **state)
{
    (void)state;
    bench *b = setup(false);
    rp_access *a0 = access(b, TRC_MO_LOAD | TRC_MO_SMEM, 0x500, 1, 0);
    a0->kind = RP_ACC_SMEM;
    memset(b->buf[0], 0, 4);
    issue(b, 1, RP_MSG_READ, a0);
    run(b);
    issue(b, 0, RP_MSG_WRITE, access(b, TRC_MO_STORE, 0x500, 1, 42));
    run(b);
    rp_kernel k2 = {0};
    rp_wg wg2 = {0};
    rp_wave w2 = {0};
    wg2.k = &k2;
    w2.wg = &wg2;
    rp_access *a = access(b, TRC_MO_LOAD | TRC_MO_SMEM, 0x500, 1, 42);
    a->kind = RP_ACC_SMEM;
    a->w = &w2;
    uint64_t inv = b->l1[1].st_invalidations;
    issue(b, 1, RP_MSG_READ, a);
    run(b);
    assert_int_equal(b->l1[1].st_invalidations, inv + 1);
    assert_int_equal(b->s.check.loads_checked, 2);
    assert_int_equal(b->s.check.load_mismatches, 0);
    teardown(b);
}

static void test_skip_flush_leaves_dram_stale(void **state)
{
    (void)state;
    bench *b = setup(true);
    issue(b, 0, RP_MSG_WRITE, access(b, TRC_MO_STORE, 0x040, 16, 7000));
    run(b);
    flush(b);
    assert_int_equal(b->l2.st_writebacks, 0);
    assert_int_equal(dram_word(b, 0x040), 0);              /* the injected bug: DRAM is stale */
    assert_int_equal(rp_cache_writeback(&b->l2, 0, UINT64_MAX), 0); /* the host-side flush too */
    assert_non_null(rp_cache_line_data(&b->l2, 0x040));    /* the data is still in the L2 */
    b->l2.skip_flush = false;
    assert_int_equal(rp_cache_writeback(&b->l2, 0x040, 4), 1);
    assert_int_equal(dram_word(b, 0x040), 7000);
    teardown(b);
}

static void test_mismatch_reported(void **state)
{
    (void)state;
    bench *b = setup(false);
    uint32_t v = 5;
    assert_int_equal(rp_fmem_write(b->s.mem, 0x200, &v, 4), 0);
    issue(b, 0, RP_MSG_READ, access(b, TRC_MO_LOAD, 0x200, 4, 5)); /* lane 0 right, lanes 1-3 expect 6,7,8 */
    run(b);
    assert_int_equal(b->s.check.loads_checked, 4);
    assert_int_equal(b->s.check.load_mismatches, 3);
    assert_int_equal(b->k.mismatches, 3);
    teardown(b);
}

static void test_store_meets_pending_fill(void **state)
{
    (void)state;
    bench *b = setup(false);
    uint32_t old[16];
    for (int i = 0; i < 16; i++)
        old[i] = 50 + i;
    assert_int_equal(rp_fmem_write(b->s.mem, 0x300, old, sizeof old), 0);
    rp_access *l0 = access(b, TRC_MO_LOAD, 0x300, 16, 50);   /* sees the old values */
    rp_access *st = access(b, TRC_MO_STORE, 0x300, 16, 900);
    rp_access *l1 = access(b, TRC_MO_LOAD, 0x300, 16, 900);  /* issued after the store: sees it */
    issue(b, 0, RP_MSG_READ, l0);
    issue(b, 0, RP_MSG_WRITE, st);
    issue(b, 0, RP_MSG_READ, l1);
    run(b);
    assert_int_equal(b->n_got, 3);
    assert_int_equal(b->s.check.loads_checked, 32);
    assert_int_equal(b->s.check.load_mismatches, 0);
    /* and the installed L1 line holds the store */
    uint8_t *d = rp_cache_line_data(&b->l1[0], 0x300);
    assert_non_null(d);
    uint32_t x;
    memcpy(&x, d + 4, 4);
    assert_int_equal(x, 901);
    assert_int_equal(b->s.lbufs.live, 0); /* every line buffer came back */
    teardown(b);
}

static void test_atomic_at_l2(void **state)
{
    (void)state;
    bench *b = setup(false);
    uint32_t v = 10;
    assert_int_equal(rp_fmem_write(b->s.mem, 0x400, &v, 4), 0);
    issue(b, 0, RP_MSG_READ, access(b, TRC_MO_LOAD, 0x400, 1, 10)); /* L1 copy */
    run(b);
    assert_non_null(rp_cache_line_data(&b->l1[0], 0x400));
    rp_access *a = access(b, TRC_MO_ATOMIC, 0x400, 1, 10); /* load_data = old value 10 */
    uint32_t add = 5;
    b->op[b->n_acc - 1].store_data = (const uint8_t *)&add;
    rp_access_bind(a, &b->op[b->n_acc - 1], 1);
    a->atomic_op = GCN_AT_ADD;
    a->atomic_bytes = 4;
    issue(b, 0, RP_MSG_ATOMIC, a);
    run(b);
    assert_int_equal(b->s.check.atomics_checked, 1);
    assert_int_equal(b->s.check.atomic_mismatches, 0);
    assert_null(rp_cache_line_data(&b->l1[0], 0x400)); /* the L1 dropped its copy */
    uint8_t *d = rp_cache_line_data(&b->l2, 0x400);
    assert_non_null(d);
    memcpy(&v, d, 4);
    assert_int_equal(v, 15);
    issue(b, 0, RP_MSG_READ, access(b, TRC_MO_LOAD, 0x400, 1, 15));
    run(b);
    assert_int_equal(b->s.check.load_mismatches, 0);
    teardown(b);
}


/* One lane's 32-bit compare-and-swap at addr: recorded return `ret`, swap
 * value src, compare value cmp (store data: src then cmp). */
static rp_access *cas(bench *b, uint64_t addr, uint32_t ret, uint32_t src, uint32_t cmp)
{
    rp_access *a = access(b, TRC_MO_ATOMIC | TRC_MO_CMPSWAP, addr, 1, ret);
    uint32_t v[2] = {src, cmp};
    memcpy(b->buf[b->n_acc - 1] + 64, v, 8);
    b->op[b->n_acc - 1].store_data = b->buf[b->n_acc - 1] + 64;
    rp_access_bind(a, &b->op[b->n_acc - 1], 1);
    a->atomic_op = GCN_AT_CMPSWAP;
    a->atomic_bytes = 4;
    return a;
}

static uint32_t l2_word(bench *b, uint64_t addr)
{
    uint8_t *d = rp_cache_line_data(&b->l2, addr & ~(uint64_t)(LINE - 1));
    assert_non_null(d);
    uint32_t v;
    memcpy(&v, d + (addr & (LINE - 1)), 4);
    return v;
}

static void test_cas_recorded_order(void **state)
{
    (void)state;
    for (int hold = 1; hold >= 0; hold--) {
        bench *b = setup_hold(false, hold ? 1000000000 : 0);
        uint32_t v = 5;
        assert_int_equal(rp_fmem_write(b->s.mem, 0x400, &v, 4), 0);
        /* the recording: 5 -> 6 (first), then 6 -> 7; a third attempt
         * compared with 5 and failed (it returned 6) */
        rp_access *second = cas(b, 0x400, 6, 7, 6);
        rp_access *failed = cas(b, 0x400, 6, 99, 5);
        rp_access *first = cas(b, 0x400, 5, 6, 5);
        issue(b, 0, RP_MSG_ATOMIC, second); /* reaches the L2 first */
        issue(b, 1, RP_MSG_ATOMIC, failed);
        while (rp_engine_step_before(&b->s.eng, 10000000)) /* 10 us: long before a give-up */
            ;
        assert_int_equal(b->n_got, hold ? 1 : 2); /* held: the second has no answer yet */
        assert_int_equal(l2_word(b, 0x400), 5);   /* the failed one wrote nothing though 5 == its compare value */
        issue(b, 0, RP_MSG_ATOMIC, first);
        run(b);
        assert_int_equal(b->n_got, 3);
        if (hold) {
            assert_int_equal(l2_word(b, 0x400), 7); /* 5 -> 6 -> 7, the recorded order */
            assert_int_equal(b->l2.st_cas_holds, 1);
            assert_int_equal(b->l2.st_cas_give_ups, 0);
            assert_int_equal(b->s.check.atomic_mismatches, 1); /* only the failed one returned another value */
        } else {
            assert_int_equal(l2_word(b, 0x400), 6); /* the second came too early and failed */
            assert_int_equal(b->l2.st_cas_holds, 0);
        }
        teardown(b);
    }
}

/* A held compare-and-swap whose value never comes is performed after its
 * line has been idle for cas_hold_max. */
static void test_cas_hold_gives_up(void **state)
{
    (void)state;
    bench *b = setup_hold(false, 50000000); /* 50 us */
    uint32_t v = 1;
    assert_int_equal(rp_fmem_write(b->s.mem, 0x400, &v, 4), 0);
    issue(b, 0, RP_MSG_ATOMIC, cas(b, 0x400, 3, 4, 3));
    run(b);
    assert_int_equal(b->n_got, 1);
    assert_int_equal(b->l2.st_cas_give_ups, 1);
    assert_int_equal(l2_word(b, 0x400), 1); /* performed: 1 != 3, nothing written */
    assert_true(b->s.eng.now >= 50000000);
    assert_true(b->s.eng.now < 50000000 + 2 * 2048 * 1000 + 1000000);
    teardown(b);
}

/* A hashed load (trace 2.2) of `lanes` dwords from addr; lane `bad` is
 * recorded as another value than memory will hold (none: lanes). */
static rp_access *hashed_load(bench *b, uint64_t addr, uint32_t lanes, uint32_t base, uint32_t bad)
{
    rp_access *a = access(b, TRC_MO_LOAD, addr, lanes, base);
    trc_mem_op *op = &b->op[b->n_acc - 1];
    if (bad < lanes)
        b->buf[b->n_acc - 1][4 * bad] ^= 0x80;
    op->load_hash = trc_load_hash(op->load_data, (size_t)lanes * 4);
    op->load_data = NULL;
    rp_access_bind(a, op, lanes);
    a->hbuf = calloc(lanes, 4);
    assert_non_null(a->hbuf);
    a->hcap = lanes * 4;
    a->hashed = 1;
    return a;
}

static void test_hashed_load(void **state)
{
    (void)state;
    bench *b = setup(false);
    uint32_t w[32];
    for (int i = 0; i < 32; i++)
        w[i] = 100 + i;
    assert_int_equal(rp_fmem_write(b->s.mem, 0x3c0, w, sizeof w), 0);
    /* 4 lanes at 0x3f8: two in the line at 0x3c0, two in the one at 0x400 */
    rp_access *good = hashed_load(b, 0x3f8, 4, 114, 4), *wrong = hashed_load(b, 0x3f8, 4, 114, 3);
    for (int i = 0; i < 2; i++) {
        rp_access *a = i ? wrong : good;
        issue_part(b, 0, RP_MSG_READ, a, 0x3c0, 0x3);
        issue_part(b, 0, RP_MSG_READ, a, 0x400, 0xc);
    }
    run(b);
    assert_int_equal(b->n_got, 4);
    assert_int_equal(b->s.check.loads_checked, 0); /* nothing until the access is whole */
    rp_load_hash_check(&b->s, good);
    rp_load_hash_check(&b->s, wrong);
    assert_int_equal(b->s.check.loads_checked, 8);
    assert_int_equal(b->s.check.loads_hashed, 8);
    assert_int_equal(b->s.check.load_mismatches, 1);
    assert_int_equal(b->k.mismatches, 1);
    free(good->hbuf);
    free(wrong->hbuf);
    teardown(b);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_eviction_writes_back),
        cmocka_unit_test(test_store_flush_load_other_cu),
        cmocka_unit_test(test_scalar_cache_kernel_invalidate),
        cmocka_unit_test(test_skip_flush_leaves_dram_stale),
        cmocka_unit_test(test_mismatch_reported),
        cmocka_unit_test(test_store_meets_pending_fill),
        cmocka_unit_test(test_atomic_at_l2),
        cmocka_unit_test(test_cas_recorded_order),
        cmocka_unit_test(test_cas_hold_gives_up),
        cmocka_unit_test(test_hashed_load),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
