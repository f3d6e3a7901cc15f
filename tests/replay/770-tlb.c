/* 770-tlb: address translation between mock ports (rp_tlb.h), with exact
 * times computed from the configuration (the parameter table's defaults):
 * an L1 TLB hit, an L1 miss that hits the L2 TLB, a full walk, a walk that
 * finds its upper level in the page-walk cache, a 2 MiB fragment of a host
 * page (every level read, the IOMMU's latency on top, one TLB entry for all of it), requests of one page merged into
 * one walk, and walks queued behind a busy walker. The page-table entries are
 * read from a mock memory that answers after MEM_PS; every expected time is a
 * formula of config values and MEM_PS. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "replay/rp_sim_internal.h"
#include "replay/rp_tlb.h"

#define MAXGOT 16
#define MEM_PS 97000u  /* the mock memory's answer time for an entry read */
#define FILL_PS 5000u  /* the link back to the walker */

typedef struct bench {
    rp_config cfg;
    rp_clock clk;
    rp_engine e;
    rp_msg_pool pool;
    rp_res res;
    rp_ctx x;
    rp_tlb l1a, l1b, l2;
    rp_link req_a, req_b;     /* L1 TLBs -> L2 TLB (noc) */
    rp_port mem;              /* mock memory of the page table */
    rp_link to_mem;
    rp_port sink;             /* where translated requests go */
    rp_link out;
    uint8_t host_shift;       /* page_of: log2 page size, IOMMU for addresses >= HOST_BASE */
    uint64_t mem_reads;
    uint64_t pte_addr[MAXGOT];
    rp_time got_at[MAXGOT];
    uint64_t got_addr[MAXGOT];
    int n_got;
} bench;

#define HOST_BASE 0x7f0000000000ull
static bench *B;

static void on_sink(rp_port *p, rp_engine *e)
{
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        assert_true(B->n_got < MAXGOT);
        B->got_at[B->n_got] = e->now;
        B->got_addr[B->n_got++] = m->addr;
        rp_msg_free(&B->pool, m);
    }
}

static void on_mem(rp_port *p, rp_engine *e)
{
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        assert_int_equal(m->type, RP_MSG_READ);
        if (B->mem_reads < MAXGOT)
            B->pte_addr[B->mem_reads] = m->addr;
        B->mem_reads++;
        m->type = RP_MSG_READ_RSP;
        m->dst = m->reply_port;
        rp_link_send(m->reply_link, m, e->now + MEM_PS);
    }
}

static rp_link *route(void *owner, uint32_t gpu, uint32_t grp, uint64_t addr, rp_port **dst)
{
    (void)gpu;
    (void)grp;
    assert_true(rp_is_pte_addr(addr));
    *dst = NULL;
    return &((bench *)owner)->to_mem;
}

static void page_of(void *owner, uint64_t addr, uint32_t gpu, uint8_t *shift, bool *iommu)
{
    bench *b = owner;
    (void)gpu;
    bool host = addr >= HOST_BASE;
    *shift = host ? b->host_shift : 12;
    *iommu = host;
}

static void on_fail(void *owner, const char *msg)
{
    (void)owner;
    fail_msg("%s", msg);
}

static void setup(bench *b, void (*tweak)(rp_config *))
{
    memset(b, 0, sizeof *b);
    B = b;
    rp_config_defaults(&b->cfg);
    b->cfg.tlb_l1v_latency = (rp_lat){7, 1}; /* a lookup latency of its own, so that hits are seen to pay it */
    if (tweak)
        tweak(&b->cfg);
    char err[256];
    assert_int_equal(rp_config_validate(&b->cfg, err, sizeof err), 0);
    const rp_config *c = &b->cfg;
    b->clk = rp_clock_make(c->gpu_freq);
    b->host_shift = 12;
    assert_int_equal(rp_engine_init(&b->e), 0);
    b->res = (rp_res){&b->pool, NULL, NULL};
    b->x = (rp_ctx){.cfg = &b->cfg, .clk = b->clk, .owner = b, .serial = &b->res, .n_parts = 1, .fail = on_fail,
                    .route_l2 = route, .page_of = page_of};
    rp_time noc = rp_lat_ps(c->noc_latency, b->clk);
    rp_tlb_spec l2 = {c->tlb_l2_entries / c->tlb_l2_ways, c->tlb_l2_ways, c->tlb_l2_mshrs,
                      rp_lat_ps(c->tlb_l2_latency, b->clk), b->clk, c->tlb_walkers, c->tlb_levels,
                      c->tlb_pwc_entries, rp_lat_ps(c->tlb_walk_level_latency, b->clk),
                      rp_lat_ps(c->tlb_iommu_latency, b->clk)};
    assert_int_equal(rp_tlb_init(&b->l2, &b->e, &b->x, "gpu[0].l2tlb", &l2, 0, 0, FILL_PS), 0);
    rp_tlb_spec l1 = {c->tlb_l1v_entries / c->tlb_l1v_ways, c->tlb_l1v_ways, c->tlb_l1v_mshrs,
                      rp_lat_ps(c->tlb_l1v_latency, b->clk), b->clk, 0, 0, 0, 0, 0};
    assert_int_equal(rp_tlb_init(&b->l1a, &b->e, &b->x, "gpu[0].cu[0].l1vtlb", &l1, 0, noc, 0), 0);
    assert_int_equal(rp_tlb_init(&b->l1b, &b->e, &b->x, "gpu[0].cu[1].l1vtlb", &l1, 0, noc, 0), 0);
    rp_link_init(&b->req_a, &b->e, &b->l2.in, noc, 0, 0);
    rp_link_init(&b->req_b, &b->e, &b->l2.in, noc, 0, 0);
    b->l1a.req_link = &b->req_a;
    b->l1b.req_link = &b->req_b;
    b->mem.notify = on_mem;
    rp_link_init(&b->to_mem, &b->e, &b->mem, 0, 0, 0);
    b->sink.notify = on_sink;
    rp_link_init(&b->out, &b->e, &b->sink, 0, 0, 0);
}

static void teardown(bench *b)
{
    rp_tlb_fini(&b->l1a);
    rp_tlb_fini(&b->l1b);
    rp_tlb_fini(&b->l2);
    rp_msg_pool_fini(&b->pool);
    rp_engine_fini(&b->e);
}

static void run(bench *b)
{
    while (rp_engine_step(&b->e))
        ;
}

/* A line request for addr through L1 TLB t, ready now. */
static void send(bench *b, rp_tlb *t, uint64_t addr)
{
    rp_msg *m = rp_msg_alloc(&b->pool);
    assert_non_null(m);
    m->type = RP_MSG_READ;
    m->addr = addr;
    rp_tlb_send(t, &b->out, m, b->e.now);
}

/* Times of the formulas. */
static rp_time l1lat(const bench *b) { return rp_lat_ps(b->cfg.tlb_l1v_latency, b->clk); }
static rp_time l2lat(const bench *b) { return rp_lat_ps(b->cfg.tlb_l2_latency, b->clk); }
static rp_time noc(const bench *b) { return rp_lat_ps(b->cfg.noc_latency, b->clk); }
static rp_time level(const bench *b) { return rp_lat_ps(b->cfg.tlb_walk_level_latency, b->clk) + MEM_PS + FILL_PS; }
static rp_time to_l2(const bench *b) { return l1lat(b) + noc(b) + l2lat(b); } /* request at the L2 TLB, looked up */

static void test_l1_hit_and_full_walk(void **state)
{
    (void)state;
    bench b;
    setup(&b, NULL);
    const uint64_t a = 0x100000123440ull;
    send(&b, &b.l1a, a);
    run(&b);
    /* cold: L1 miss, L2 miss, PWC miss: every level read (tlb.levels, 4 KiB pages) */
    assert_int_equal(b.n_got, 1);
    assert_int_equal(b.got_addr[0], a);
    assert_int_equal(b.got_at[0], to_l2(&b) + b.cfg.tlb_levels * level(&b) + noc(&b));
    assert_int_equal(b.mem_reads, b.cfg.tlb_levels);
    assert_true(rp_is_pte_addr(b.pte_addr[0]) && rp_pte_gpu(b.pte_addr[0]) == 0);
    assert_int_equal(b.l2.st_walks, 1);
    assert_int_equal(b.l2.st_walk_ps, b.cfg.tlb_levels * level(&b));
    /* the same page again: an L1 hit */
    rp_time t0 = b.e.now;
    send(&b, &b.l1a, a + 64);
    run(&b);
    assert_int_equal(b.n_got, 2);
    assert_int_equal(b.got_at[1] - t0, l1lat(&b));
    assert_int_equal(b.l1a.st_hits, 1);
    assert_int_equal(b.l1a.st_misses, 1);
    teardown(&b);
}

static void test_l1_miss_l2_hit(void **state)
{
    (void)state;
    bench b;
    setup(&b, NULL);
    const uint64_t a = 0x200000000000ull;
    send(&b, &b.l1a, a);
    run(&b);
    rp_time t0 = b.e.now;
    send(&b, &b.l1b, a + 8); /* another CU's L1 TLB: misses, the L2 TLB has it */
    run(&b);
    assert_int_equal(b.n_got, 2);
    assert_int_equal(b.got_at[1] - t0, to_l2(&b) + noc(&b));
    assert_int_equal(b.l2.st_hits, 1);
    assert_int_equal(b.l2.st_walks, 1);
    teardown(&b);
}

static void test_pwc_and_large_and_iommu(void **state)
{
    (void)state;
    bench b;
    setup(&b, NULL);
    assert_true(b.cfg.tlb_levels == 2 && b.cfg.tlb_pwc_entries > 0);
    const uint64_t a = 0x300000000000ull;
    send(&b, &b.l1a, a);
    run(&b);
    /* the next 4 KiB page of the same 2 MiB region: its page directory entry is
     * in the page-walk cache, the walk reads only the leaf */
    rp_time t0 = b.e.now;
    uint64_t before = b.mem_reads;
    send(&b, &b.l1a, a + 4096);
    run(&b);
    assert_int_equal(b.got_at[1] - t0, to_l2(&b) + level(&b) + noc(&b));
    assert_int_equal(b.mem_reads - before, 1);
    assert_int_equal(b.l2.st_pwc_hits, 1);
    /* a host page of 2 MiB (a fragment): the walk still reads both levels
     * (GFX8 fragments live in the leaf entries), then the IOMMU */
    b.host_shift = 21;
    t0 = b.e.now;
    send(&b, &b.l1a, HOST_BASE + 0x1234);
    run(&b);
    assert_int_equal(b.got_at[2] - t0, to_l2(&b) + b.cfg.tlb_levels * level(&b) +
                                           rp_lat_ps(b.cfg.tlb_iommu_latency, b.clk) + noc(&b));
    assert_int_equal(b.l2.st_iommu, 1);
    /* anywhere in that 2 MiB page now hits the L1 TLB */
    t0 = b.e.now;
    send(&b, &b.l1a, HOST_BASE + 0x1ff000);
    run(&b);
    assert_int_equal(b.got_at[3] - t0, l1lat(&b));
    teardown(&b);
}

static void test_merge_and_walker_queue(void **state)
{
    (void)state;
    bench b;
    setup(&b, NULL);
    /* three requests of one page from two L1 TLBs at once: one walk */
    const uint64_t a = 0x400000000000ull;
    send(&b, &b.l1a, a);
    send(&b, &b.l1a, a + 64);
    send(&b, &b.l1b, a + 128);
    run(&b);
    assert_int_equal(b.n_got, 3);
    rp_time walk = to_l2(&b) + b.cfg.tlb_levels * level(&b) + noc(&b);
    for (int i = 0; i < 3; i++)
        assert_int_equal(b.got_at[i], walk);
    assert_int_equal(b.l2.st_walks, 1);
    assert_int_equal(b.l1a.st_merges, 1);
    assert_int_equal(b.l2.st_merges, 1);
    teardown(&b);
}

static void one_walker(rp_config *c) { c->tlb_walkers = 1; }

static void test_walker_queue(void **state)
{
    (void)state;
    bench b;
    setup(&b, one_walker);
    /* two pages in different 2 MiB regions, one walker: the second walk
     * starts when the first ends (its L2 TLB lookup was one cycle later) */
    const uint64_t a = 0x500000000000ull, c = 0x500040000000ull;
    send(&b, &b.l1a, a);
    send(&b, &b.l1b, c);
    run(&b);
    assert_int_equal(b.n_got, 2);
    rp_time first = to_l2(&b) + 2 * level(&b);
    assert_int_equal(b.got_at[0], first + noc(&b));
    assert_int_equal(b.got_at[1], first + 2 * level(&b) + noc(&b));
    assert_int_equal(b.l2.st_walk_queue_ps, first - (to_l2(&b) + b.clk.period_ps));
    assert_int_equal(b.l2.st_walk_peak, 1);
    teardown(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_l1_hit_and_full_walk),
        cmocka_unit_test(test_l1_miss_l2_hit),
        cmocka_unit_test(test_pwc_and_large_and_iommu),
        cmocka_unit_test(test_merge_and_walker_queue),
        cmocka_unit_test(test_walker_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
