/* 700-l2: an L2 bank (write-back, write-allocate) driven through mock ports:
 * a hit costs exactly its configured latency; a miss costs one tag cycle +
 * DRAM + the latency again on the fill; same-line misses merge in an MSHR;
 * with every MSHR busy the input stalls until a fill; FLUSH writes back dirty
 * lines; an L1-style write-through cache forwards writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "replay/rp_sim_internal.h"

#define CYC 1000 /* ps at 1 GHz */

typedef struct bench {
    rp_engine e;
    rp_msg_pool pool;
    rp_cache c;
    rp_dram dram;
    rp_link in;        /* requester -> cache top, no latency */
    rp_port req;       /* requester's response port */
    rp_link req_link;  /* cache -> requester, no latency */
    rp_time got_at[16];
    uint8_t got_type[16];
    int n_got;
} bench;

static bench *B;

static rp_link *route(void *ctx, uint64_t line, rp_port **dst)
{
    (void)line;
    *dst = NULL;
    return &((bench *)ctx)->dram.in;
}

static void on_resp(rp_port *p, rp_engine *e)
{
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        B->got_at[B->n_got] = e->now;
        B->got_type[B->n_got++] = m->type;
        rp_msg_free(&B->pool, m);
    }
}

static void setup(bench *b, bool write_back, uint32_t mshrs)
{
    memset(b, 0, sizeof *b);
    B = b;
    rp_engine_init(&b->e);
    rp_clock clk = rp_clock_make(1000000000);
    rp_cache_spec sp = {128 * 1024, 16, 64, mshrs, 70 * CYC, clk, write_back, false, write_back, {0, 0}, {0, 0}, 0};
    assert_int_equal(rp_cache_init(&b->c, &b->e, &b->pool, NULL, "gpu[0].l2[0]", &sp, route, b, 0, 0, 0), 0);
    rp_dram_init(&b->dram, &b->e, "gpu[0].dram[0]", 100000, 0, 64);
    rp_link_init(&b->in, &b->e, &b->c.top, 0, 0, 0);
    b->req.notify = on_resp;
    rp_link_init(&b->req_link, &b->e, &b->req, 0, 0, 0);
}

static void send(bench *b, uint8_t type, uint64_t addr)
{
    rp_msg *m = rp_msg_alloc(&b->pool);
    m->type = type;
    m->addr = addr;
    m->payload = type == RP_MSG_WRITE ? 64 : 0;
    m->reply_link = &b->req_link;
    m->reply_port = &b->req;
    rp_link_send(&b->in, m, b->e.now);
}

static void run(bench *b)
{
    while (rp_engine_step(&b->e))
        ;
}

static void teardown(bench *b)
{
    rp_cache_fini(&b->c);
    rp_msg_pool_fini(&b->pool);
    rp_engine_fini(&b->e);
}

static void test_hit_latency(void **state)
{
    (void)state;
    bench b;
    setup(&b, true, 8);
    send(&b, RP_MSG_READ, 0x1000);
    run(&b);
    assert_int_equal(b.n_got, 1);
    /* miss: 1 tag cycle + 100 ns DRAM + 70-cycle fill */
    assert_int_equal(b.got_at[0], CYC + 100000 + 70 * CYC);
    assert_int_equal(b.c.st_read_misses, 1);
    rp_time t0 = b.e.now;
    send(&b, RP_MSG_READ, 0x1020); /* same line */
    run(&b);
    assert_int_equal(b.n_got, 2);
    assert_int_equal(b.got_at[1] - t0, 70 * CYC); /* exactly the configured latency */
    assert_int_equal(b.got_type[1], RP_MSG_READ_RSP);
    assert_int_equal(b.c.st_read_hits, 1);
    teardown(&b);
}

static void test_mshr_merge(void **state)
{
    (void)state;
    bench b;
    setup(&b, true, 8);
    send(&b, RP_MSG_READ, 0x2000);
    send(&b, RP_MSG_READ, 0x2008);
    run(&b);
    assert_int_equal(b.n_got, 2);
    assert_int_equal(b.dram.st_reads, 1);
    assert_int_equal(b.c.st_mshr_merges, 1);
    assert_int_equal(b.got_at[0], b.got_at[1]);
    teardown(&b);
}

static void test_mshr_stall(void **state)
{
    (void)state;
    bench b;
    setup(&b, true, 2);
    send(&b, RP_MSG_READ, 0x10000);
    send(&b, RP_MSG_READ, 0x20000);
    send(&b, RP_MSG_READ, 0x30000);
    run(&b);
    assert_int_equal(b.n_got, 3);
    assert_int_equal(b.c.st_mshr_stalls, 1);
    /* the third enters the pipeline only after the first fill frees an MSHR */
    assert_true(b.got_at[2] >= b.got_at[0] + 100000);
    assert_int_equal(b.c.mshr_used, 0);
    teardown(&b);
}

static void test_writeback_flush(void **state)
{
    (void)state;
    bench b;
    setup(&b, true, 8);
    send(&b, RP_MSG_WRITE, 0x4000);
    run(&b);
    assert_int_equal(b.n_got, 1);
    assert_int_equal(b.got_type[0], RP_MSG_WRITE_ACK);
    assert_int_equal(b.got_at[0], 70 * CYC); /* write-allocate without fetch */
    assert_int_equal(b.dram.st_reads, 0);
    send(&b, RP_MSG_FLUSH, 0);
    run(&b);
    assert_int_equal(b.n_got, 2);
    assert_int_equal(b.got_type[1], RP_MSG_FLUSH_ACK);
    assert_int_equal(b.dram.st_writes, 1);
    send(&b, RP_MSG_FLUSH, 0); /* clean now: nothing to write */
    run(&b);
    assert_int_equal(b.dram.st_writes, 1);
    teardown(&b);
}

static void test_write_through(void **state)
{
    (void)state;
    bench b;
    setup(&b, false, 8);
    send(&b, RP_MSG_WRITE, 0x8000);
    run(&b);
    assert_int_equal(b.n_got, 1);
    assert_int_equal(b.got_type[0], RP_MSG_WRITE_ACK);
    assert_int_equal(b.dram.st_writes, 1);
    send(&b, RP_MSG_READ, 0x8000); /* no-write-allocate: still a miss */
    run(&b);
    assert_int_equal(b.c.st_read_misses, 1);
    teardown(&b);
}

/* The sampled replay's functional write (rp_cache_functional_write): a
 * write miss allocates the line dirty with no message and no time, a read
 * allocates it clean, a timed read then hits, the flush writes the dirty
 * line back; a write-through cache and a line-crossing write are refused. */
static void test_functional_write(void **state)
{
    (void)state;
    bench b;
    setup(&b, true, 8);
    const uint8_t v[4] = {1, 2, 3, 4};
    assert_int_equal(rp_cache_functional_write(&b.c, 0x4010, v, 4), 0);
    assert_int_equal(rp_cache_functional_write(&b.c, 0x403e, v, 4), -1); /* crosses the line */
    uint8_t *d = rp_cache_line_data(&b.c, 0x4000);
    assert_non_null(d);
    assert_memory_equal(d + 0x10, v, 4);
    assert_int_equal(rp_cache_functional_write(&b.c, 0x8000, NULL, 4), 0); /* a load: clean */
    assert_non_null(rp_cache_line_data(&b.c, 0x8000));
    assert_int_equal(b.e.now, 0);
    send(&b, RP_MSG_READ, 0x8000);
    run(&b);
    assert_int_equal(b.c.st_read_hits, 1);
    assert_int_equal(b.dram.st_reads, 0);
    send(&b, RP_MSG_FLUSH, 0);
    run(&b);
    assert_int_equal(b.dram.st_writes, 1); /* only the written line was dirty */
    teardown(&b);
    setup(&b, false, 8);
    assert_int_equal(rp_cache_functional_write(&b.c, 0x4010, v, 4), -1);
    assert_null(rp_cache_line_data(&b.c, 0x4000));
    teardown(&b);
}

/* The bank and GPU bits are stripped before the set index (spec.strip_*):
 * the lines one bank holds fill every set, so as many of them as the bank
 * has ways stay resident, and one more evicts exactly the least recently
 * used. Strides and counts that are powers of two (shifts) and not
 * (divisions), with one and two levels. */
static void test_strip_sets(void **state)
{
    (void)state;
    static const struct { uint64_t st[2]; uint32_t n[2]; } cfg[] = {
        {{256, 0}, {16, 0}},       /* 16 banks: shifts */
        {{4096, 256}, {4, 16}},    /* 4 GPUs x 16 banks: shifts, two levels */
        {{256, 0}, {3, 0}},        /* 3 banks: divisions */
        {{3072, 256}, {2, 6}},     /* 2 GPUs x 6 banks: divisions, two levels */
    };
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
        bench b;
        memset(&b, 0, sizeof b);
        rp_engine_init(&b.e);
        rp_cache_spec sp = {128 * 1024, 16, 64, 8, 70 * CYC, rp_clock_make(1000000000), true, false, true,
                            {cfg[i].st[0], cfg[i].st[1]}, {cfg[i].n[0], cfg[i].n[1]}, 0};
        assert_int_equal(rp_cache_init(&b.c, &b.e, &b.pool, NULL, "gpu[0].l2[0]", &sp, route, &b, 0, 0, 0), 0);
        uint64_t lines[2049], n = 0;
        for (uint64_t a = 0; n < 2049; a += 64) {
            bool mine = true;
            for (int k = 0; k < 2; k++)
                if (cfg[i].n[k] > 1 && (a / cfg[i].st[k]) % cfg[i].n[k])
                    mine = false;
            if (mine)
                lines[n++] = a;
        }
        for (uint64_t k = 0; k < 2048; k++)
            assert_int_equal(rp_cache_functional_write(&b.c, lines[k], NULL, 4), 0);
        for (uint64_t k = 0; k < 2048; k++)
            assert_non_null(rp_cache_line_data(&b.c, lines[k]));
        assert_int_equal(rp_cache_functional_write(&b.c, lines[2048], NULL, 4), 0);
        uint64_t gone = 0;
        for (uint64_t k = 0; k < 2048; k++)
            gone += rp_cache_line_data(&b.c, lines[k]) == NULL;
        assert_int_equal(gone, 1);
        assert_null(rp_cache_line_data(&b.c, lines[0])); /* 2048 = 128 sets x 16 ways: lines[0] shares its set and is the LRU */
        rp_cache_fini(&b.c);
        rp_msg_pool_fini(&b.pool);
        rp_engine_fini(&b.e);
    }
}

/* Line buffers go back to the pool that made them: one released into
 * another partition's pool waits on its `away` list until rp_lbufs_return
 * (a serial point), and the maker then hands it out again instead of
 * making a new one. */
static void test_lbufs_return_to_maker(void **state)
{
    (void)state;
    rp_lbufs a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    uint8_t *x = rp_lbuf_get(&a, 64), *y = rp_lbuf_get(&b, 64);
    assert_non_null(x);
    assert_non_null(y);
    rp_lbuf_put(&b, x); /* a's buffer released in b's partition */
    rp_lbuf_put(&b, y); /* b's own */
    assert_ptr_equal(b.free, y);
    assert_ptr_equal(b.away, x);
    assert_null(a.free);
    rp_lbufs_return(&b);
    assert_null(b.away);
    assert_ptr_equal(a.free, x);
    assert_ptr_equal(rp_lbuf_get(&a, 64), x); /* reused, not made anew */
    assert_ptr_equal(rp_lbuf_get(&b, 64), y);
    rp_lbuf_put(&a, x);
    rp_lbufs_fini(&a);
    rp_lbufs_fini(&b); /* y is in flight: fini frees what b made all the same */
}

/* Several buffers of one maker released in another pool go back as one
 * spliced list (every one of them, none lost); buffers of two makers
 * released in a third pool go back each to its own maker. */
static void test_lbufs_return_splice(void **state)
{
    (void)state;
    rp_lbufs a, b, c;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&c, 0, sizeof c);
    uint8_t *x[3];
    for (int i = 0; i < 3; i++)
        assert_non_null(x[i] = rp_lbuf_get(&a, 64));
    uint8_t *own = rp_lbuf_get(&a, 64);
    rp_lbuf_put(&a, own); /* a's free list: own */
    for (int i = 0; i < 3; i++)
        rp_lbuf_put(&b, x[i]);
    assert_ptr_equal(b.away_maker, &a);
    assert_ptr_equal(b.away_tail, x[0]);
    rp_lbufs_return(&b);
    assert_null(b.away);
    assert_null(b.away_tail);
    int seen[4] = {0};
    for (int k = 0; k < 4; k++) {
        uint8_t *g = rp_lbuf_get(&a, 64);
        for (int i = 0; i < 3; i++)
            seen[i] += g == x[i];
        seen[3] += g == own;
    }
    for (int i = 0; i < 4; i++)
        assert_int_equal(seen[i], 1);
    assert_null(a.free); /* all four handed out again, none made anew */
    /* two makers into a third pool */
    uint8_t *ya = x[0], *yc = rp_lbuf_get(&c, 64);
    assert_non_null(yc);
    rp_lbuf_put(&b, ya);
    rp_lbuf_put(&b, yc);
    assert_ptr_equal(b.away_maker, RP_LBUFS_MIXED);
    rp_lbufs_return(&b);
    assert_null(b.away);
    assert_ptr_equal(a.free, ya);
    assert_ptr_equal(c.free, yc);
    assert_null(b.away_maker);
    rp_lbufs_fini(&a);
    rp_lbufs_fini(&b);
    rp_lbufs_fini(&c);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_hit_latency), cmocka_unit_test(test_mshr_merge),
        cmocka_unit_test(test_mshr_stall), cmocka_unit_test(test_writeback_flush),
        cmocka_unit_test(test_write_through), cmocka_unit_test(test_functional_write),
        cmocka_unit_test(test_lbufs_return_to_maker), cmocka_unit_test(test_lbufs_return_splice),
        cmocka_unit_test(test_strip_sets),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
