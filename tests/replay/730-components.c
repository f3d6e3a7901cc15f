/* 730-components: components between mock ports, with exact times computed
 * from the configuration (the parameter table's defaults, i.e. the R9 Nano):
 * an L1V hit, an L2 hit behind the L1, the whole L1 -> L2 -> DRAM round trip,
 * DRAM row hit / row miss (closed bank) / row conflict, writes, a
 * bank-parallel pair vs a same-bank pair, FR-FCFS letting a row hit overtake,
 * closed-page policy, refresh delaying a request, a link transfer of N bytes
 * and two messages contending on one link. Every expected time is a formula
 * of config values; none is a literal number of picoseconds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "replay/rp_sim_internal.h"

#define MAXGOT 16

typedef struct bench {
    rp_config cfg;
    rp_clock clk;              /* GPU clock */
    rp_engine e;
    rp_msg_pool pool;
    rp_dram dram;
    rp_dram_spec ds;
    rp_cache l1, l2;
    rp_link to_l1, to_l2;      /* requester -> L1 top (no latency); L1 -> L2 (NoC) */
    rp_link to_dram_direct;    /* requester -> DRAM top (no latency) */
    rp_port req;               /* requester's response port */
    rp_link req_link;          /* -> requester, no latency */
    rp_time got_at[MAXGOT];
    uint64_t got_addr[MAXGOT];
    uint8_t got_type[MAXGOT];
    int n_got;
} bench;

static bench *B;

static void on_resp(rp_port *p, rp_engine *e)
{
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        assert_true(B->n_got < MAXGOT);
        B->got_at[B->n_got] = e->now;
        B->got_addr[B->n_got] = m->addr;
        B->got_type[B->n_got++] = m->type;
        rp_msg_free(&B->pool, m);
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

/* Build the requester, a DRAM channel (one channel: addresses are local) and,
 * with caches, an L1V and one L2 bank from cfg (after `tweak`). */
static void setup(bench *b, void (*tweak)(rp_config *))
{
    memset(b, 0, sizeof *b);
    B = b;
    rp_config_defaults(&b->cfg);
    if (tweak)
        tweak(&b->cfg);
    char err[256];
    assert_int_equal(rp_config_validate(&b->cfg, err, sizeof err), 0);
    rp_config *c = &b->cfg;
    b->clk = rp_clock_make(c->gpu_freq);
    assert_int_equal(rp_engine_init(&b->e), 0);
    rp_dram_spec_from_config(&b->ds, c, b->clk, 0, 1);
    assert_int_equal(rp_dram_init_spec(&b->dram, &b->e, "gpu[0].dram[0]", &b->ds), 0);
    rp_time noc = rp_lat_ps(c->noc_latency, b->clk);
    uint64_t nbw = rp_bw_Bps(c->noc_bandwidth, b->clk);
    rp_cache_spec l2 = {c->l2_size / c->l2_banks, c->l2_assoc, c->l1v_line, c->l2_mshrs,
                        rp_lat_ps(c->l2_latency, b->clk), b->clk, true, false, true, {0, 0}, {0, 0}, 0};
    assert_int_equal(rp_cache_init(&b->l2, &b->e, &b->pool, NULL, "gpu[0].l2[0]", &l2, route_l2, b, 0, 0,
                                   c->header_bytes), 0);
    rp_link_init(&b->to_l2, &b->e, &b->l2.top, noc, nbw, c->header_bytes);
    rp_cache_spec l1 = {c->l1v_size, c->l1v_assoc, c->l1v_line, c->l1v_mshrs,
                        rp_lat_ps(c->l1v_latency, b->clk), b->clk, false, true, false, {0, 0}, {0, 0}, 0};
    assert_int_equal(rp_cache_init(&b->l1, &b->e, &b->pool, NULL, "gpu[0].cu[0].l1v", &l1, route_l1, b, noc, nbw,
                                   c->header_bytes), 0);
    rp_link_init(&b->to_l1, &b->e, &b->l1.top, 0, 0, 0);
    rp_link_init(&b->to_dram_direct, &b->e, &b->dram.top, 0, 0, 0);
    b->req.notify = on_resp;
    rp_link_init(&b->req_link, &b->e, &b->req, 0, 0, 0);
}

static void teardown(bench *b)
{
    rp_cache_fini(&b->l1);
    rp_cache_fini(&b->l2);
    rp_msg_pool_fini(&b->pool);
    rp_engine_fini(&b->e);
}

static void send(bench *b, rp_link *l, uint8_t type, uint64_t addr)
{
    rp_msg *m = rp_msg_alloc(&b->pool);
    assert_non_null(m);
    m->type = type;
    m->addr = addr;
    m->payload = type == RP_MSG_WRITE ? (uint16_t)b->cfg.l1v_line : 0;
    m->reply_link = &b->req_link;
    m->reply_port = &b->req;
    rp_link_send(l, m, b->e.now);
}

static void run(bench *b)
{
    while (rp_engine_step(&b->e))
        ;
}

static void nop(rp_event *ev, rp_engine *e)
{
    (void)ev;
    (void)e;
}

/* Advance time to t (the queue is empty) by handling an empty event at t. */
static void advance(bench *b, rp_time t)
{
    static rp_event ev;
    rp_event_init(&ev, nop, NULL, RP_PRIO_COMPONENT);
    assert_int_equal(rp_engine_schedule(&b->e, &ev, t), 0);
    run(b);
    assert_int_equal(b->e.now, t);
}

static rp_time ser(uint64_t bytes, uint64_t bps) { return bps ? (bytes * 1000000000000ull + bps - 1) / bps : 0; }
static rp_time tmax(rp_time a, rp_time b) { return a > b ? a : b; }
static rp_time dedge(const bench *b, rp_time t) { return rp_clock_edge(b->ds.clk, t); }
static rp_time gedge(const bench *b, rp_time t) { return rp_clock_edge(b->clk, t); }
/* Data-bus time of one line: line / dram.bandwidth. */
static rp_time burst(const bench *b) { return ser(b->cfg.l1v_line, b->ds.bytes_per_s); }

static void no_refresh(rp_config *c) { c->dram_tREFI.v = 0; }

/* Addresses inside one channel: bank k, row r. */
static uint64_t at(const bench *b, uint32_t bank, uint64_t row)
{
    return (row * b->ds.banks + bank) * b->ds.bank_interleave;
}

/* ---- DRAM ------------------------------------------------------------------------------------ */

static void test_dram_mapping(void **state)
{
    (void)state;
    bench b;
    setup(&b, no_refresh);
    uint32_t bank;
    uint64_t row;
    rp_dram_map(&b.ds, at(&b, 3, 5) + 64, &bank, &row);
    assert_int_equal(bank, 3);
    assert_int_equal(row, 5 * b.ds.bank_interleave / b.ds.row_size);
    /* channel bits stripped: with 4 channels, the next interleave block of this channel is 4 blocks on */
    rp_dram_spec s4 = b.ds;
    s4.chan_stride = 4;
    rp_dram_map(&s4, 4 * s4.chan_interleave, &bank, &row);
    uint32_t bank1;
    uint64_t row1;
    rp_dram_map(&b.ds, s4.chan_interleave, &bank1, &row1);
    assert_int_equal(bank, bank1);
    assert_int_equal(row, row1);
    teardown(&b);
}

/* A closed bank: ACT, tRCD, RD, tCL, burst, then the fixed latency. */
static void test_dram_row_miss_hit_conflict(void **state)
{
    (void)state;
    bench b;
    setup(&b, no_refresh);
    const rp_dram_spec *s = &b.ds;
    send(&b, &b.to_dram_direct, RP_MSG_READ, at(&b, 1, 7));
    run(&b);
    assert_int_equal(b.n_got, 1);
    assert_int_equal(b.got_type[0], RP_MSG_READ_RSP);
    assert_int_equal(b.got_at[0], s->tRCD + s->tCL + burst(&b) + s->latency_ps);
    assert_int_equal(b.dram.st_row_misses, 1);

    /* row hit: RD at the next DRAM clock edge */
    rp_time t1 = b.e.now;
    send(&b, &b.to_dram_direct, RP_MSG_READ, at(&b, 1, 7) + b.cfg.l1v_line);
    run(&b);
    assert_int_equal(b.got_at[1], dedge(&b, t1) + s->tCL + burst(&b) + s->latency_ps);
    assert_int_equal(b.dram.st_row_hits, 1);

    /* row conflict: PRE, tRP, ACT, tRCD, RD */
    rp_time t2 = b.e.now;
    send(&b, &b.to_dram_direct, RP_MSG_READ, at(&b, 1, 8));
    run(&b);
    assert_int_equal(b.got_at[2], dedge(&b, t2) + s->tRP + s->tRCD + s->tCL + burst(&b) + s->latency_ps);
    assert_int_equal(b.dram.st_row_conflicts, 1);

    /* a write to the open row: WR, tCWL, burst */
    rp_time t3 = b.e.now;
    send(&b, &b.to_dram_direct, RP_MSG_WRITE, at(&b, 1, 8));
    run(&b);
    assert_int_equal(b.got_type[3], RP_MSG_WRITE_ACK);
    assert_int_equal(b.got_at[3], dedge(&b, t3) + s->tCWL + burst(&b) + s->latency_ps);
    assert_int_equal(b.dram.st_reads, 3);
    assert_int_equal(b.dram.st_writes, 1);
    assert_int_equal(b.dram.st_bytes, 4 * b.cfg.l1v_line);
    assert_int_equal(b.dram.st_busy_cycles, 4 * ((burst(&b) + s->clk.period_ps - 1) / s->clk.period_ps));
    teardown(&b);
}

/* Two requests at once to two closed banks overlap (the second ACT waits
 * only tRRD); to one bank the second waits tRAS for the PRE, then tRP. */
static void test_dram_bank_parallel_vs_same_bank(void **state)
{
    (void)state;
    bench b;
    setup(&b, no_refresh);
    const rp_dram_spec *s = &b.ds;
    rp_time tck = s->clk.period_ps;
    send(&b, &b.to_dram_direct, RP_MSG_READ, at(&b, 0, 1));
    send(&b, &b.to_dram_direct, RP_MSG_READ, at(&b, 1, 1));
    run(&b);
    assert_int_equal(b.n_got, 2);
    rp_time a_end = s->tRCD + s->tCL + burst(&b);
    assert_int_equal(b.got_at[0], a_end + s->latency_ps);
    /* B is picked one tCK later; ACT_B = max(tCK, tRRD); RD_B after tRCD, tCCD and the data bus */
    rp_time act_b = tmax(tck, s->tRRD);
    rp_time rd_b = tmax(tmax(act_b + s->tRCD, s->tRCD + s->tCCD), a_end - s->tCL);
    assert_int_equal(b.got_at[1], rd_b + s->tCL + burst(&b) + s->latency_ps);
    teardown(&b);

    setup(&b, no_refresh);
    send(&b, &b.to_dram_direct, RP_MSG_READ, at(&b, 0, 1));
    send(&b, &b.to_dram_direct, RP_MSG_READ, at(&b, 0, 2));
    run(&b);
    assert_int_equal(b.n_got, 2);
    assert_int_equal(b.got_at[0], a_end + s->latency_ps);
    rp_time pre = tmax(s->tRAS, s->tRCD + s->tRTP); /* bank's precharge-ready time after A */
    assert_int_equal(b.got_at[1], pre + s->tRP + s->tRCD + s->tCL + burst(&b) + s->latency_ps);
    assert_int_equal(b.dram.st_row_conflicts, 1);
    assert_true(b.got_at[1] > rd_b + s->tCL + burst(&b) + s->latency_ps); /* slower than two banks */
    teardown(&b);
}

/* FR-FCFS: an older request to a closed row and a younger row hit arrive
 * together: the hit is served first. */
static void test_dram_frfcfs(void **state)
{
    (void)state;
    bench b;
    setup(&b, no_refresh);
    const rp_dram_spec *s = &b.ds;
    send(&b, &b.to_dram_direct, RP_MSG_READ, at(&b, 2, 4)); /* opens row 4 of bank 2 */
    run(&b);
    rp_time t1 = b.e.now;
    send(&b, &b.to_dram_direct, RP_MSG_READ, at(&b, 2, 9));  /* older: conflict */
    send(&b, &b.to_dram_direct, RP_MSG_READ, at(&b, 2, 4) + b.cfg.l1v_line); /* younger: hit */
    run(&b);
    assert_int_equal(b.n_got, 3);
    assert_int_equal(b.got_addr[1], at(&b, 2, 4) + b.cfg.l1v_line);
    rp_time rd_hit = dedge(&b, t1);
    assert_int_equal(b.got_at[1], rd_hit + s->tCL + burst(&b) + s->latency_ps);
    /* the conflict is picked next: PRE waits for tRTP after the hit's RD */
    rp_time pre = dedge(&b, tmax(rd_hit + s->clk.period_ps, rd_hit + s->tRTP));
    assert_int_equal(b.got_at[2], pre + s->tRP + s->tRCD + s->tCL + burst(&b) + s->latency_ps);
    teardown(&b);
}

static void closed_page(rp_config *c)
{
    c->dram_tREFI.v = 0;
    snprintf(c->dram_page_policy, sizeof c->dram_page_policy, "closed");
}

/* Closed page: the same row again is a miss (ACT), never a hit. */
static void test_dram_closed_page(void **state)
{
    (void)state;
    bench b;
    setup(&b, closed_page);
    const rp_dram_spec *s = &b.ds;
    assert_true(s->closed_page);
    send(&b, &b.to_dram_direct, RP_MSG_READ, at(&b, 0, 3));
    run(&b);
    rp_time t1 = b.e.now;
    send(&b, &b.to_dram_direct, RP_MSG_READ, at(&b, 0, 3));
    run(&b);
    assert_int_equal(b.got_at[1], dedge(&b, t1) + s->tRCD + s->tCL + burst(&b) + s->latency_ps);
    assert_int_equal(b.dram.st_row_hits, 0);
    assert_int_equal(b.dram.st_row_misses, 2);
    teardown(&b);
}

/* A request arriving inside a refresh window waits for its end, and the
 * refresh closed the row it had opened before. */
static void test_dram_refresh(void **state)
{
    (void)state;
    bench b;
    setup(&b, NULL);
    const rp_dram_spec *s = &b.ds;
    assert_true(s->tREFI > 0 && s->refresh_phase == 0);
    send(&b, &b.to_dram_direct, RP_MSG_READ, at(&b, 0, 3));
    run(&b);
    rp_time tin = s->tREFI + s->tRFC / 2; /* inside refresh 1: [tREFI, tREFI + tRFC) */
    assert_true(b.e.now < s->tREFI);
    advance(&b, tin);
    send(&b, &b.to_dram_direct, RP_MSG_READ, at(&b, 0, 3));
    run(&b);
    assert_int_equal(b.n_got, 2);
    assert_int_equal(b.got_at[1], dedge(&b, s->tREFI + s->tRFC) + s->tRCD + s->tCL + burst(&b) + s->latency_ps);
    assert_int_equal(b.dram.st_refreshes, 1);
    assert_int_equal(b.dram.st_row_misses, 2); /* the refresh closed row 3 */
    assert_int_equal(b.dram.st_row_hits, 0);
    /* queue latency: the second request waited from tin to the end of the refresh */
    assert_int_equal(b.dram.st_queue_ps, dedge(&b, s->tREFI + s->tRFC) - tin);
    teardown(&b);
}

/* ---- caches in front of the DRAM ------------------------------------------------------------- */

/* L1 miss -> NoC -> L2 miss -> DRAM (row miss) -> L2 fill -> NoC -> L1 fill. */
static rp_time chain_miss_time(const bench *b, rp_time t0)
{
    const rp_config *c = &b->cfg;
    rp_time cyc = b->clk.period_ps, noc = rp_lat_ps(c->noc_latency, b->clk);
    uint64_t nbw = rp_bw_Bps(c->noc_bandwidth, b->clk);
    const rp_dram_spec *s = &b->ds;
    rp_time a1 = gedge(b, t0) + cyc + ser(c->header_bytes, nbw) + noc;      /* request at the L2 */
    rp_time a2 = gedge(b, a1) + cyc;                                         /* request at the DRAM */
    rp_time r = dedge(b, a2) + s->tRCD + s->tCL + burst(b) + s->latency_ps; /* DRAM response */
    rp_time a4 = gedge(b, r) + rp_lat_ps(c->l2_latency, b->clk) + ser(c->l1v_line + c->header_bytes, nbw) + noc;
    return gedge(b, a4) + rp_lat_ps(c->l1v_latency, b->clk);
}

static void test_chain_l1_hit_l2_hit_dram(void **state)
{
    (void)state;
    bench b;
    setup(&b, no_refresh);
    const rp_config *c = &b.cfg;
    rp_time cyc = b.clk.period_ps, noc = rp_lat_ps(c->noc_latency, b.clk);
    uint64_t nbw = rp_bw_Bps(c->noc_bandwidth, b.clk);
    /* cold read: the whole hierarchy */
    send(&b, &b.to_l1, RP_MSG_READ, 0x10000);
    run(&b);
    assert_int_equal(b.n_got, 1);
    assert_int_equal(b.got_at[0], chain_miss_time(&b, 0));
    /* same line again: an L1 hit costs exactly the L1 latency */
    rp_time t1 = b.e.now;
    send(&b, &b.to_l1, RP_MSG_READ, 0x10000 + 4);
    run(&b);
    assert_int_equal(b.got_at[1] - gedge(&b, t1), rp_lat_ps(c->l1v_latency, b.clk));
    assert_int_equal(b.l1.st_read_hits, 1);
    /* a write allocates in the L2 only (L1 is no-write-allocate) ... */
    send(&b, &b.to_l1, RP_MSG_WRITE, 0x20000);
    run(&b);
    assert_int_equal(b.got_type[2], RP_MSG_WRITE_ACK);
    assert_int_equal(b.dram.st_reads, 1);
    /* ... so a read of that line misses the L1 and hits the L2 */
    rp_time t3 = b.e.now;
    send(&b, &b.to_l1, RP_MSG_READ, 0x20000);
    run(&b);
    rp_time at_l2 = gedge(&b, t3) + cyc + ser(c->header_bytes, nbw) + noc;
    rp_time at_l1 = gedge(&b, at_l2) + rp_lat_ps(c->l2_latency, b.clk) + ser(c->l1v_line + c->header_bytes, nbw) + noc;
    assert_int_equal(b.got_at[3], gedge(&b, at_l1) + rp_lat_ps(c->l1v_latency, b.clk));
    assert_int_equal(b.l2.st_read_hits, 1);
    assert_int_equal(b.dram.st_reads, 1);
    teardown(&b);
}

/* The r9nano preset: print the L1 -> L2 -> DRAM -> back breakdown and check
 * that an L2 miss lands near the MGSim paper's ~460 cycles (Sec. VII-A,
 * Fig. 6d), including the CU's vector-memory issue cost. */
static void test_r9nano_breakdown(void **state)
{
    (void)state;
    bench b;
    rp_config c;
    char err[512];
    rp_config_defaults(&c);
    FILE *f = fopen("replay/configs/r9nano.ini", "r");
    if (!f) {
        print_message("replay/configs/r9nano.ini not found (run from the repository root): skipped\n");
        skip();
    }
    fclose(f);
    assert_int_equal(rp_config_load_file(&c, "replay/configs/r9nano.ini", err, sizeof err), 0);
    memset(&b, 0, sizeof b);
    b.cfg = c;
    b.clk = rp_clock_make(c.gpu_freq);
    const rp_config preset = c;
    rp_dram_spec_from_config(&b.ds, &preset, b.clk, 0, 1);
    rp_time cyc = b.clk.period_ps;
    rp_time miss = chain_miss_time(&b, 0);
    rp_time dram = b.ds.tRCD + b.ds.tCL + burst(&b);
    rp_time issue = preset.vmem_issue_cycles * cyc;
    print_message("r9nano L2 miss (row miss) from a CU: %.1f cycles = CU issue %.1f + L1 tag %.1f + NoC %.1f + "
                  "L2 tag %.1f + DRAM banks (tRCD+tCL+burst) %.1f + DRAM fixed %.1f + L2 fill %.1f + NoC back %.1f + "
                  "L1 fill %.1f (+ clock-edge alignment)\n",
                  (double)(miss + issue) / cyc, (double)issue / cyc, 1.0,
                  (double)(rp_lat_ps(preset.noc_latency, b.clk)) / cyc, 1.0, (double)dram / cyc,
                  (double)b.ds.latency_ps / cyc, (double)rp_lat_ps(preset.l2_latency, b.clk) / cyc,
                  (double)(rp_lat_ps(preset.noc_latency, b.clk)) / cyc,
                  (double)rp_lat_ps(preset.l1v_latency, b.clk) / cyc);
    double total = (double)(miss + issue) / cyc;
    assert_true(total > 460 * 0.85 && total < 460 * 1.15);
}

/* ---- links ------------------------------------------------------------------------------------ */

static void test_link_transfer_and_contention(void **state)
{
    (void)state;
    bench b;
    setup(&b, no_refresh);
    const rp_config *c = &b.cfg;
    rp_time noc = rp_lat_ps(c->noc_latency, b.clk);
    uint64_t nbw = rp_bw_Bps(c->noc_bandwidth, b.clk);
    rp_link l;
    rp_link_init(&l, &b.e, &b.req, noc, nbw, c->header_bytes);
    /* one message of N bytes: serialisation of N + header at the bandwidth, then the latency */
    uint16_t n = 200;
    rp_msg *m = rp_msg_alloc(&b.pool);
    m->type = RP_MSG_READ_RSP;
    m->payload = n;
    rp_link_send(&l, m, 0);
    run(&b);
    assert_int_equal(b.n_got, 1);
    assert_int_equal(b.got_at[0], ser(n + c->header_bytes, nbw) + noc);
    assert_int_equal(l.st_bytes, n + c->header_bytes);
    /* two messages sent at once: the second waits for the first's serialisation */
    rp_time t0 = b.e.now;
    rp_msg *x = rp_msg_alloc(&b.pool), *y = rp_msg_alloc(&b.pool);
    x->type = y->type = RP_MSG_READ_RSP;
    x->payload = (uint16_t)c->l1v_line;
    y->payload = 0;
    rp_link_send(&l, x, t0);
    rp_link_send(&l, y, t0);
    run(&b);
    assert_int_equal(b.n_got, 3);
    rp_time sx = ser(c->l1v_line + c->header_bytes, nbw), sy = ser(c->header_bytes, nbw);
    assert_int_equal(b.got_at[1], t0 + sx + noc);
    assert_int_equal(b.got_at[2], t0 + sx + sy + noc);
    teardown(&b);
}

/* The LDS bank-conflict count in closed form (strided accesses) equals the
 * dword-by-dword count, over random strides, element sizes, read2/write2
 * offsets, EXEC masks and bank counts, and on the shapes kernels use. */
/* The count by its definition (rp_cu.h), dword by dword with a quadratic
 * search for equal dwords: the reference for both of replay/cu.c's ways. */
static uint32_t lds_reference(const trc_mem_op *op, const rp_access *a, uint32_t nb)
{
    uint32_t esz = a->ds2 ? a->ds2_esz : op->bytes_per_lane, dw_el = esz ? (esz + 3) / 4 : 1, total = 0, k = 0;
    if (dw_el > 4)
        dw_el = 4;
    nb = nb == 0 ? 1 : nb > 1024 ? 1024 : nb;
    for (uint32_t half = 0; half < 2; half++) {
        uint64_t dw[256];
        uint32_t nd = 0, cnt[2048] = {0}, worst = 0;
        for (uint32_t lane = 32 * half; lane < 32 * half + 32; lane++) {
            if (!(op->exec >> lane & 1))
                continue;
            uint64_t base = a->strided ? a->base + (uint64_t)k * a->stride : a->addr[k];
            k++;
            for (uint32_t el = 0; el < (a->ds2 ? 2u : 1u); el++)
                for (uint32_t d = 0; d < dw_el; d++) {
                    uint64_t x = ((base + (el ? (uint64_t)(int64_t)a->ds2_delta : 0)) >> 2) + d;
                    bool seen = false;
                    for (uint32_t i = 0; i < nd && !seen; i++)
                        seen = dw[i] == x;
                    if (seen)
                        continue;
                    dw[nd++] = x;
                    if (++cnt[x % nb] > worst)
                        worst = cnt[x % nb];
                }
        }
        if (nd)
            total += worst > (nd + nb - 1) / nb ? worst : (nd + nb - 1) / nb;
    }
    return total ? total : 1;
}

static void test_lds_conflicts_closed_form(void **state)
{
    (void)state;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    static const int64_t strides[] = {0, 4, 8, 12, 16, 20, 32, 64, 128, 132, 256, 260, 1024, -4, -8, -128, 6, 2, 1};
    static const uint32_t bpls[] = {1, 2, 4, 8, 12, 16};
    static const int32_t deltas[] = {0, 4, 128, 256, 1024, 4096, -128, -1024, 8, 12, 2, 64, -64, 40, 200, 68};
    static const uint32_t nbs[] = {32, 16, 64, 1, 24, 2048};
    uint32_t fast_used = 0;
    for (uint32_t it = 0; it < 200000; it++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t r = seed >> 11;
        trc_mem_op op;
        memset(&op, 0, sizeof op);
        switch (r % 5) {
        case 0: op.exec = ~0ull; break;
        case 1: op.exec = 0xffffffffull << (32 * (r >> 3 & 1)); break;
        case 2: op.exec = 1ull << (r >> 4 & 63); break;
        default: op.exec = (seed * 0xd1342543de82ef95ull) ^ (seed << 7); break;
        }
        rp_access a;
        memset(&a, 0, sizeof a);
        a.strided = 1;
        a.base = (r >> 8) % 65536;
        a.stride = (uint64_t)strides[(r >> 20) % (sizeof strides / sizeof strides[0])];
        op.bytes_per_lane = bpls[(r >> 28) % (sizeof bpls / sizeof bpls[0])];
        if ((r >> 33) & 1) {
            a.ds2 = 1;
            a.ds2_esz = (uint8_t)(op.bytes_per_lane <= 8 ? op.bytes_per_lane : 4);
            a.ds2_delta = deltas[(r >> 34) % (sizeof deltas / sizeof deltas[0])];
        }
        uint32_t nb = nbs[(r >> 40) % (sizeof nbs / sizeof nbs[0])];
        uint64_t list[64];
        if ((r >> 44) % 4 == 0) { /* scattered addresses (a gather), some of them equal */
            uint64_t z = seed;
            for (uint32_t i = 0; i < 64; i++) {
                z = z * 6364136223846793005ull + 1442695040888963407ull;
                list[i] = (z >> 33) % ((r >> 46) % 2 ? 512 : 65536) & ~(uint64_t)((r >> 47) % 2 ? 3 : 0);
            }
            a.strided = 0;
            a.addr = list;
        }
        uint32_t want = lds_reference(&op, &a, nb), exact = rp_lds_conflict_cycles_exact(&op, &a, nb),
                 got = rp_lds_conflict_cycles(&op, &a, nb);
        if (want != got || want != exact)
            fail_msg("exec %016llx base %llu stride %lld bpl %u ds2 %u delta %d banks %u: closed form %u, dword by "
                     "dword %u, reference %u",
                     (unsigned long long)op.exec, (unsigned long long)a.base, (long long)a.stride, op.bytes_per_lane,
                     a.ds2, a.ds2_delta, nb, got, exact, want);
        fast_used += a.strided && a.stride % 4 == 0;
    }
    assert_true(fast_used > 1000);
    /* the usual shapes, by hand: 64 lanes of dwords at unit stride take one
     * cycle per half; a stride of 32 dwords puts a half's 32 lanes in one
     * bank; ds_write2st64_b32 (offsets 64 dwords apart) doubles unit stride */
    trc_mem_op op;
    memset(&op, 0, sizeof op);
    op.exec = ~0ull;
    op.bytes_per_lane = 4;
    rp_access a;
    memset(&a, 0, sizeof a);
    a.strided = 1;
    a.stride = 4;
    assert_int_equal(rp_lds_conflict_cycles(&op, &a, 32), 2);
    a.stride = 128;
    assert_int_equal(rp_lds_conflict_cycles(&op, &a, 32), 64);
    a.stride = 4;
    a.ds2 = 1;
    a.ds2_esz = 4;
    a.ds2_delta = 256;
    op.bytes_per_lane = 8;
    assert_int_equal(rp_lds_conflict_cycles(&op, &a, 32), 4);
    /* a half of 16 lanes writing two runs of 16 dwords back to back: 32
     * dwords in 32 banks, one cycle */
    op.exec = 0xffffull;
    a.ds2_delta = 64;
    assert_int_equal(rp_lds_conflict_cycles(&op, &a, 32), 1);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_dram_mapping),
        cmocka_unit_test(test_dram_row_miss_hit_conflict),
        cmocka_unit_test(test_dram_bank_parallel_vs_same_bank),
        cmocka_unit_test(test_dram_frfcfs),
        cmocka_unit_test(test_dram_closed_page),
        cmocka_unit_test(test_dram_refresh),
        cmocka_unit_test(test_chain_l1_hit_l2_hit_dram),
        cmocka_unit_test(test_r9nano_breakdown),
        cmocka_unit_test(test_link_transfer_and_contention),
        cmocka_unit_test(test_lds_conflicts_closed_form),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
