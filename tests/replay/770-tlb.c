/* 770-tlb: address translation between mock ports (rp_tlb.h), and unified
 * memory's faults and page moves in its walker (rp_um.h), with exact
 * times computed from the configuration (the parameter table's defaults):
 * an L1 TLB hit, an L1 miss that hits the L2 TLB, a full walk, a walk that
 * finds its upper level in the page-walk cache, a 2 MiB fragment of a host
 * page (every level read, the IOMMU's latency on top, one TLB entry for all of it), requests of one page merged into
 * one walk, and walks queued behind a busy walker; a fault that moves a page
 * from another GPU (on-fault), first-touch, a move earned by access counters,
 * a shootdown that makes the page fault back, and read-only replication
 * (a copy on a read, a protection fault on a write, copies dropped by a host
 * write). The page-table entries are
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
#include "replay/rp_um.h"

#define MAXGOT 16
#define MEM_PS 97000u  /* the mock memory's answer time for an entry read */
#define FILL_PS 5000u  /* the link back to the walker */
#define MOVE_PS 250000u /* the mock interconnect's transfer of a page */

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
    /* unified memory: the TLBs are GPU 0's; pages below UM_END are governed, home GPU 1 */
    rp_um um;
    int um_on;
    uint32_t moves, copies, last_from, last_to, shootdowns[2], drops[2];
    rp_time move_ready;
} bench;
#define UM_BASE 0x600000000000ull
#define UM_END  0x600000100000ull

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

static rp_time um_walk(void *owner, uint64_t page, uint32_t gpu, bool write, bool *ro, bool *retry, rp_time now)
{
    bench *b = owner;
    *ro = *retry = false;
    return page >= UM_BASE && page < UM_END ? rp_um_walk(&b->um, gpu, page, 1, write, ro, retry, now) : now;
}

/* rp_um_walk of another GPU's walker (a read; the page is not being serviced) */
static rp_time walk_other(bench *b, uint32_t gpu, uint64_t a, rp_time now)
{
    bool ro, retry;
    rp_time t = rp_um_walk(&b->um, gpu, a, 1, false, &ro, &retry, now);
    assert_false(retry);
    return t;
}

/* rp_um_ops of the bench: a transfer takes MOVE_PS; GPU 0's shootdown drops
 * the entry from its three TLBs (GPU 1 has none here) */
static rp_time um_move(void *owner, uint32_t from, uint32_t to, uint64_t page, uint64_t bytes, rp_time ready)
{
    bench *b = owner;
    (void)page;
    assert_int_equal(bytes, 4096);
    b->moves++;
    b->last_from = from;
    b->last_to = to;
    b->move_ready = ready;
    return ready + MOVE_PS;
}

static rp_time um_copy(void *owner, uint32_t from, uint32_t to, uint64_t page, uint64_t bytes, rp_time ready)
{
    bench *b = owner;
    (void)page;
    assert_int_equal(bytes, 4096);
    b->copies++;
    b->last_from = from;
    b->last_to = to;
    return ready + MOVE_PS;
}

static void um_drop(void *owner, uint32_t gpu, uint64_t page, uint64_t bytes)
{
    bench *b = owner;
    (void)page;
    (void)bytes;
    assert_true(gpu < 2);
    b->drops[gpu]++;
}

static void um_shootdown(void *owner, uint32_t gpu, uint64_t page, uint8_t shift)
{
    bench *b = owner;
    assert_int_equal(shift, 12);
    assert_true(gpu < 2);
    b->shootdowns[gpu]++;
    if (gpu == 0) {
        rp_tlb_invalidate(&b->l1a, page);
        rp_tlb_invalidate(&b->l1b, page);
        rp_tlb_invalidate(&b->l2, page);
    }
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

/* Unified memory under policy pol (RP_UM_*) for the bench's two GPUs. */
static void um_setup(bench *b, int pol, uint32_t threshold, bool replicate)
{
    const rp_config *c = &b->cfg;
    rp_um_spec sp = {pol, 2, 12, rp_lat_ps(c->um_fault_latency, b->clk), rp_lat_ps(c->um_shootdown_latency, b->clk),
                     threshold, replicate};
    rp_um_ops ops = {b, um_move, um_shootdown, um_copy, um_drop};
    assert_int_equal(rp_um_init(&b->um, &sp, &ops), 0);
    b->um_on = 1;
    b->x.um_walk = um_walk;
}

static void teardown(bench *b)
{
    if (b->um_on)
        rp_um_fini(&b->um);
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

/* A line request (type) for addr through L1 TLB t, ready now. */
static void send_t(bench *b, rp_tlb *t, uint64_t addr, uint8_t type)
{
    rp_msg *m = rp_msg_alloc(&b->pool);
    assert_non_null(m);
    m->type = type;
    m->addr = addr;
    rp_tlb_send(t, &b->out, m, b->e.now);
}
static void send(bench *b, rp_tlb *t, uint64_t addr) { send_t(b, t, addr, RP_MSG_READ); }

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

static rp_time fault_ps(const bench *b) { return rp_lat_ps(b->cfg.um_fault_latency, b->clk); }
static rp_time shoot_ps(const bench *b) { return rp_lat_ps(b->cfg.um_shootdown_latency, b->clk); }

static void test_um_fault_moves_page(void **state)
{
    (void)state;
    bench b;
    setup(&b, NULL);
    um_setup(&b, RP_UM_ON_FAULT, 1, false);
    const uint64_t a = UM_BASE + 0x3040;
    assert_int_equal(rp_um_owner(&b.um, a, 1), 1); /* at home until used */
    send(&b, &b.l1a, a);
    run(&b);
    /* a cold walk, then the fault: fault latency, the other GPU's shootdown,
     * the page's transfer, then the translation goes back */
    rp_time walk_end = to_l2(&b) + b.cfg.tlb_levels * level(&b);
    assert_int_equal(b.n_got, 1);
    assert_int_equal(b.got_at[0], walk_end + fault_ps(&b) + shoot_ps(&b) + MOVE_PS + noc(&b));
    assert_int_equal(b.move_ready, walk_end + fault_ps(&b) + shoot_ps(&b));
    assert_int_equal(b.moves, 1);
    assert_int_equal(b.last_from, 1);
    assert_int_equal(b.last_to, 0);
    assert_int_equal(rp_um_owner(&b.um, a, 1), 0);
    assert_int_equal(b.um.st[0].faults, 1);
    assert_int_equal(b.um.st[0].fault_ps, fault_ps(&b) + shoot_ps(&b) + MOVE_PS);
    assert_int_equal(b.um.st[0].migrations_in, 1);
    assert_int_equal(b.um.st[0].bytes_in, 4096);
    assert_int_equal(b.um.st[1].migrations_out, 1);
    assert_int_equal(b.um.st[1].shootdowns, 1);
    assert_int_equal(b.shootdowns[1], 1);
    assert_int_equal(b.shootdowns[0], 0);
    /* the page is GPU 0's now: the next access hits the L1 TLB */
    rp_time t0 = b.e.now;
    send(&b, &b.l1a, a + 64);
    run(&b);
    assert_int_equal(b.got_at[1] - t0, l1lat(&b));
    /* GPU 1 takes it back (its walker's fault): GPU 0's TLBs are shot down,
     * so GPU 0's next access walks (the leaf only: the PWC holds its upper
     * level) and faults again, once GPU 1's fault is serviced (one walk
     * services a page at a time: GPU 0's asks again 1 ps after it) */
    t0 = b.e.now;
    rp_time svc = fault_ps(&b) + shoot_ps(&b) + MOVE_PS;
    assert_int_equal(walk_other(&b, 1, a, t0), t0 + svc);
    assert_int_equal(b.shootdowns[0], 1);
    assert_int_equal(rp_um_owner(&b.um, a, 1), 1);
    send(&b, &b.l1a, a + 128);
    run(&b);
    assert_true(to_l2(&b) + level(&b) < svc);
    assert_int_equal(b.got_at[2] - t0, svc + 1 + svc + noc(&b));
    assert_int_equal(b.um.st[0].faults, 2);
    assert_int_equal(b.moves, 3);
    teardown(&b);
}

static void test_um_first_touch(void **state)
{
    (void)state;
    bench b;
    setup(&b, NULL);
    um_setup(&b, RP_UM_FIRST_TOUCH, 1, false);
    const uint64_t a = UM_BASE + 0x8000;
    /* GPU 1 (home) touches it first: no fault, it stays */
    assert_int_equal(walk_other(&b, 1, a, 1000), 1000);
    send(&b, &b.l1a, a);
    run(&b);
    /* GPU 0 then maps it remotely: a plain walk */
    assert_int_equal(b.got_at[0], to_l2(&b) + b.cfg.tlb_levels * level(&b) + noc(&b));
    assert_int_equal(b.moves, 0);
    assert_int_equal(rp_um_owner(&b.um, a, 1), 1);
    /* a page GPU 0 touches first moves to it with a fault */
    const uint64_t p = UM_BASE + 0x9000;
    rp_time t0 = b.e.now;
    send(&b, &b.l1a, p);
    run(&b);
    assert_int_equal(b.got_at[1] - t0, to_l2(&b) + level(&b) + fault_ps(&b) + shoot_ps(&b) + MOVE_PS + noc(&b));
    assert_int_equal(rp_um_owner(&b.um, p, 1), 0);
    /* and stays when GPU 1 uses it afterwards */
    assert_int_equal(walk_other(&b, 1, p, b.e.now), b.e.now);
    assert_int_equal(rp_um_owner(&b.um, p, 1), 0);
    assert_int_equal(b.um.st[0].faults, 1);
    teardown(&b);
}

static void test_um_access_counter(void **state)
{
    (void)state;
    bench b;
    setup(&b, NULL);
    um_setup(&b, RP_UM_COUNTER, 3, false);
    const uint64_t a = UM_BASE + 0x20000;
    send(&b, &b.l1a, a);
    run(&b);
    assert_int_equal(b.got_at[0], to_l2(&b) + b.cfg.tlb_levels * level(&b) + noc(&b)); /* mapped remotely */
    /* two remote accesses: counted, nothing moves; the third earns the page:
     * GPU 0's entry is dropped so that its next access walks */
    rp_um_remote(&b.um, 0, a, 1);
    rp_um_remote(&b.um, 0, a + 64, 1);
    assert_int_equal(b.shootdowns[0], 0);
    rp_um_remote(&b.um, 0, a + 128, 1);
    assert_int_equal(b.shootdowns[0], 1);
    assert_int_equal(b.um.st[0].remote_counted, 3);
    assert_int_equal(rp_um_owner(&b.um, a, 1), 1);
    rp_time t0 = b.e.now;
    send(&b, &b.l1a, a + 192);
    run(&b);
    /* the move without a fault: shootdown and transfer only */
    assert_int_equal(b.got_at[1] - t0, to_l2(&b) + level(&b) + shoot_ps(&b) + MOVE_PS + noc(&b));
    assert_int_equal(rp_um_owner(&b.um, a, 1), 0);
    assert_int_equal(b.um.st[0].faults, 0);
    assert_int_equal(b.um.st[0].migrations_in, 1);
    /* counters start again: GPU 1 needs three remote accesses of its own */
    rp_um_remote(&b.um, 1, a, 1);
    rp_um_remote(&b.um, 1, a, 1);
    assert_int_equal(walk_other(&b, 1, a, b.e.now), b.e.now);
    teardown(&b);
}

static void test_um_replicate(void **state)
{
    (void)state;
    bench b;
    setup(&b, NULL);
    um_setup(&b, RP_UM_ON_FAULT, 1, true);
    const uint64_t a = UM_BASE + 0x40000;
    /* a read of GPU 1's page: a read-only copy instead of a move (fault,
     * the first copy's shootdown of GPU 1, the transfer) */
    send(&b, &b.l1a, a);
    run(&b);
    rp_time walk_end = to_l2(&b) + b.cfg.tlb_levels * level(&b);
    assert_int_equal(b.got_at[0], walk_end + fault_ps(&b) + shoot_ps(&b) + MOVE_PS + noc(&b));
    assert_int_equal(b.copies, 1);
    assert_int_equal(b.moves, 0);
    assert_int_equal(b.shootdowns[1], 1);
    assert_int_equal(rp_um_owner(&b.um, a, 1), 1);
    assert_int_equal(rp_um_serving(&b.um, a, 1, 0), 0); /* GPU 0 reads its own copy */
    assert_int_equal(rp_um_serving(&b.um, a, 1, 1), 1);
    assert_int_equal(b.um.st[0].replicas_in, 1);
    /* reads hit the read-only entry */
    rp_time t0 = b.e.now;
    send(&b, &b.l1a, a + 64);
    run(&b);
    assert_int_equal(b.got_at[1] - t0, l1lat(&b));
    /* GPU 1 (the holder) reads: read-only too, nothing moves */
    bool ro = false, retry = true;
    assert_int_equal(rp_um_walk(&b.um, 1, a, 1, false, &ro, &retry, b.e.now), b.e.now);
    assert_true(ro);
    assert_false(retry);
    /* a write of GPU 0: its read-only entry is a miss at both TLBs; the walk
     * (the leaf: the PWC has the upper level) takes a protection fault, the
     * copies go (shootdown of GPU 1), then on-fault moves the page to the
     * writer without a second fault latency */
    t0 = b.e.now;
    send_t(&b, &b.l1a, a + 128, RP_MSG_WRITE);
    run(&b);
    assert_int_equal(b.got_at[2] - t0, to_l2(&b) + level(&b) + fault_ps(&b) + shoot_ps(&b) + MOVE_PS + noc(&b));
    assert_int_equal(b.um.st[0].collapses, 1);
    assert_int_equal(b.um.st[0].faults, 2);
    assert_int_equal(b.drops[0], 1);
    assert_int_equal(b.moves, 1);
    assert_int_equal(rp_um_owner(&b.um, a, 1), 0);
    assert_int_equal(rp_um_serving(&b.um, a, 1, 1), 0);
    /* the page is GPU 0's and writable: a write hits the L1 TLB */
    t0 = b.e.now;
    send_t(&b, &b.l1a, a + 192, RP_MSG_WRITE);
    run(&b);
    assert_int_equal(b.got_at[3] - t0, l1lat(&b));
    /* a host write drops copies without time */
    assert_int_equal(walk_other(&b, 1, a, b.e.now), b.e.now + fault_ps(&b) + shoot_ps(&b) + MOVE_PS); /* a copy */
    assert_int_equal(b.um.n_replicated, 1);
    rp_um_host_write(&b.um, a + 100, 8);
    assert_int_equal(b.um.n_replicated, 0);
    assert_int_equal(b.drops[1], 1);
    assert_int_equal(rp_um_serving(&b.um, a, 1, 1), 0);
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
        cmocka_unit_test(test_um_fault_moves_page),
        cmocka_unit_test(test_um_first_touch),
        cmocka_unit_test(test_um_access_counter),
        cmocka_unit_test(test_um_replicate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
