/* 750-net: the inter-GPU interconnect (net.c) and the timed host operations
 * (host.c).
 *
 * Network, between mock sink ports: a message of N bytes from GPU a to GPU b
 * arrives after exactly hops x ((N + header) / bandwidth + latency) (store-
 * and-forward) on an idle network: the shared PCIe bus (one hop), the PCIe
 * switch tree (2 hops under one switch, 4 across switches), the ring (shorter
 * way round, through intermediate GPUs) and all-to-all (one hop); two
 * transfers on the shared bus serialise; each link counts messages, bytes and
 * busy time under its hierarchical name.
 *
 * Host timeline, through a whole replay of a crafted trace (no kernels):
 * a blocking copy costs host.copy_overhead + size / host.link_bandwidth +
 * host.link_latency, the next event waits for it; runtime INIT copies cost
 * the host nothing; a peer copy crosses the interconnect; a launch-free trace
 * with an asynchronous copy still ends when the copy does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "replay/rp_sim_internal.h"

#define NS 1000ull

typedef struct bench {
    rp_engine e;
    rp_msg_pool pool;
    rp_stats st;
    rp_net *n;
    rp_port sink[8];
    rp_time got_at[8][8];
    int n_got[8];
} bench;

static void on_sink(rp_port *p, rp_engine *e)
{
    bench *b = p->owner;
    int g = (int)(p - b->sink);
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        b->got_at[g][b->n_got[g]++] = e->now;
        rp_msg_free(&b->pool, m);
    }
}

static void setup(bench *b, uint32_t kind, uint32_t gpus, uint32_t gps)
{
    memset(b, 0, sizeof *b);
    assert_int_equal(rp_engine_init(&b->e), 0);
    rp_net_spec sp = {0};
    sp.kind = kind;
    sp.gpus = gpus;
    sp.gpus_per_switch = gps;
    sp.bus_latency_ps = 500 * NS;
    sp.bus_bytes_per_s = 16000000000ull;
    sp.pcie_latency_ps = 150 * NS;
    sp.pcie_bytes_per_s = 32000000000ull;
    sp.p2p_latency_ps = 100 * NS;
    sp.p2p_bytes_per_s = 24000000000ull;
    sp.host_latency_ps = 1000 * NS;
    sp.host_bytes_per_s = 16000000000ull;
    sp.header_bytes = 8;
    char err[128];
    b->n = rp_net_create(&b->e, &sp, &b->st, err, sizeof err);
    assert_non_null(b->n);
    for (uint32_t g = 0; g < gpus; g++) {
        b->sink[g].owner = b;
        b->sink[g].notify = on_sink;
        rp_net_set_sink(b->n, g, &b->sink[g]);
    }
}

static void send(bench *b, uint32_t from, uint32_t to, uint16_t payload)
{
    rp_msg *m = rp_msg_alloc(&b->pool);
    m->type = payload ? RP_MSG_READ_RSP : RP_MSG_READ;
    m->payload = payload;
    m->src_gpu = (uint8_t)from;
    rp_net_send(b->n, from, to, m, b->e.now);
}

static void run(bench *b)
{
    while (rp_engine_step(&b->e))
        ;
}

static void teardown(bench *b)
{
    rp_net_destroy(b->n);
    rp_stats_fini(&b->st);
    rp_msg_pool_fini(&b->pool);
    rp_engine_fini(&b->e);
}

static uint64_t stat(bench *b, const char *name)
{
    for (size_t i = 0; i < b->st.n; i++)
        if (!strcmp(b->st.v[i].name, name))
            return *b->st.v[i].ptr;
    fail_msg("no counter %s", name);
    return 0;
}

/* 72 bytes (64 + 8 header) at 16 GB/s = 4.5 ns; + 500 ns. A second message
 * at the same time waits for the first one's serialisation. */
static void test_bus(void **st)
{
    (void)st;
    bench *b = malloc(sizeof *b);
    setup(b, RP_NET_PCIE_BUS, 4, 2);
    assert_int_equal(rp_net_hops(b->n, 0, 3), 1);
    send(b, 0, 2, 64);
    send(b, 3, 1, 64); /* other GPUs, same bus: contention */
    send(b, 1, 3, 0);  /* a read request: header only, 0.5 ns */
    run(b);
    assert_int_equal(b->n_got[2], 1);
    assert_int_equal(b->got_at[2][0], 4500 + 500 * NS);
    assert_int_equal(b->got_at[1][0], 2 * 4500 + 500 * NS);
    assert_int_equal(b->got_at[3][0], 2 * 4500 + 500 + 500 * NS);
    assert_int_equal(stat(b, "net.pcie.bus.messages"), 3);
    assert_int_equal(stat(b, "net.pcie.bus.bytes"), 72 + 72 + 8);
    assert_int_equal(stat(b, "net.pcie.bus.busy_ps"), 4500 + 4500 + 500);
    assert_int_equal(rp_net_bytes(b->n), 152);
    teardown(b);
    free(b);
}

/* 72 B at 32 GB/s = 2.25 ns per link, + 150 ns per hop; store-and-forward. */
static void test_tree(void **st)
{
    (void)st;
    bench *b = malloc(sizeof *b);
    setup(b, RP_NET_PCIE_TREE, 4, 2);
    assert_int_equal(rp_net_hops(b->n, 0, 1), 2); /* GPU - switch - GPU */
    assert_int_equal(rp_net_hops(b->n, 0, 3), 4); /* GPU - switch - root - switch - GPU */
    assert_int_equal(rp_net_hops(b->n, 3, 2), 2);
    send(b, 0, 1, 64);
    send(b, 0, 3, 64); /* shares gpu[0].up with the first: 2.25 ns later */
    run(b);
    assert_int_equal(b->got_at[1][0], 2 * (2250 + 150 * NS));
    assert_int_equal(b->got_at[3][0], 2250 + 4 * (2250 + 150 * NS));
    assert_int_equal(stat(b, "net.pcie.gpu[0].up.messages"), 2);
    assert_int_equal(stat(b, "net.pcie.sw[0].up.bytes"), 72);
    assert_int_equal(stat(b, "net.pcie.sw[1].down.bytes"), 72);
    assert_int_equal(stat(b, "net.pcie.gpu[3].down.busy_ps"), 2250);
    assert_int_equal(stat(b, "net.pcie.gpu[2].down.messages"), 0);
    teardown(b);
    free(b);
}

/* 72 B at 24 GB/s = 3 ns per link, + 100 ns. */
static void test_ring(void **st)
{
    (void)st;
    bench *b = malloc(sizeof *b);
    setup(b, RP_NET_P2P_RING, 4, 1);
    assert_int_equal(rp_net_hops(b->n, 0, 1), 1);
    assert_int_equal(rp_net_hops(b->n, 0, 2), 2); /* tie: clockwise, through GPU 1 */
    assert_int_equal(rp_net_hops(b->n, 0, 3), 1); /* the shorter way: 0 -> 3 */
    assert_int_equal(rp_net_hops(b->n, 3, 1), 2); /* 3 -> 0 -> 1 */
    send(b, 0, 2, 64);
    run(b);
    assert_int_equal(b->got_at[2][0], 2 * (3000 + 100 * NS));
    assert_int_equal(stat(b, "net.link[0-1].bytes"), 72);
    assert_int_equal(stat(b, "net.link[1-2].bytes"), 72);
    assert_int_equal(stat(b, "net.link[0-3].bytes"), 0);
    teardown(b);
    bench *c = malloc(sizeof *c);
    setup(c, RP_NET_P2P_RING, 5, 1);
    assert_int_equal(rp_net_hops(c->n, 0, 3), 2); /* counter-clockwise: 0 -> 4 -> 3 */
    assert_int_equal(rp_net_hops(c->n, 0, 2), 2); /* clockwise */
    send(c, 0, 3, 0);
    run(c);
    assert_int_equal(c->got_at[3][0], 2 * (334 + 100 * NS)); /* 8 B at 24 GB/s = 333.3 ps, rounded up */
    assert_int_equal(stat(c, "net.link[4-3].messages"), 1);
    teardown(c);
    free(c);
    free(b);
}

static void test_all(void **st)
{
    (void)st;
    bench *b = malloc(sizeof *b);
    setup(b, RP_NET_P2P_ALL, 4, 1);
    for (uint32_t a = 0; a < 4; a++)
        for (uint32_t c = 0; c < 4; c++)
            if (a != c)
                assert_int_equal(rp_net_hops(b->n, a, c), 1);
    send(b, 0, 2, 64);
    send(b, 1, 2, 64); /* another link: no contention */
    run(b);
    assert_int_equal(b->got_at[2][0], 3000 + 100 * NS);
    assert_int_equal(b->got_at[2][1], 3000 + 100 * NS);
    assert_int_equal(stat(b, "net.link[1-2].messages"), 1);
    teardown(b);
    free(b);
}

/* Bulk transfers: pipelined over the path (size / bandwidth + hops x
 * latency); host copies FIFO per direction, full duplex. */
static void test_bulk_and_host(void **st)
{
    (void)st;
    bench *b = malloc(sizeof *b);
    setup(b, RP_NET_PCIE_TREE, 4, 2);
    /* 1 MiB at 32 GB/s = 32768 ns, 4 hops of 150 ns */
    assert_int_equal(rp_net_bulk(b->n, 0, 3, 1 << 20, 0), 32768 * NS + 4 * 150 * NS);
    /* 1 MiB at 16 GB/s = 65536 ns + 1 us; the second one queues; d2h is independent */
    assert_int_equal(rp_net_host_copy(b->n, 1, true, 1 << 20, 10 * NS), 10 * NS + 65536 * NS + 1000 * NS);
    assert_int_equal(rp_net_host_copy(b->n, 1, true, 1 << 20, 20 * NS), 10 * NS + 2 * 65536 * NS + 1000 * NS);
    assert_int_equal(rp_net_host_copy(b->n, 1, false, 1 << 20, 20 * NS), 20 * NS + 65536 * NS + 1000 * NS);
    assert_int_equal(stat(b, "net.host.gpu[1].h2d.bytes"), 2 << 20);
    assert_int_equal(stat(b, "net.host.gpu[1].h2d.busy_ps"), 2 * 65536 * NS);
    teardown(b);
    free(b);
}

/* ---- host timeline through a replay of a crafted trace --------------------------------- */

static const char *isa_target = "amdgcn-amd-amdhsa--gfx803";

static char *write_trace(const trc_event *evs, size_t n)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/750-net-%d.gtrace", (int)getpid());
    trc_header_info h;
    memset(&h, 0, sizeof h);
    snprintf(h.producer, sizeof h.producer, "750-net");
    snprintf(h.isa_target, sizeof h.isa_target, "%s", isa_target);
    h.device_count = 2;
    char err[256];
    trc_writer *w = trc_writer_open(path, &h, err, sizeof err);
    assert_non_null(w);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(trc_writer_event(w, &evs[i]), 0);
    assert_int_equal(trc_writer_close(w), 0);
    trc_writer_destroy(w);
    return path;
}

static rp_time replay(const trc_event *evs, size_t n, const char **sets, rp_sim *s)
{
    const char *path = write_trace(evs, n);
    char err[256];
    trc_reader *rd = trc_reader_open(path, err, sizeof err);
    assert_non_null(rd);
    rp_config cfg;
    rp_config_defaults(&cfg);
    for (; sets && *sets; sets++)
        assert_int_equal(rp_config_set(&cfg, *sets, err, sizeof err), 0);
    assert_int_equal(rp_sim_init(s, &cfg, rd, NULL), 0);
    assert_int_equal(rp_sim_run(s), 0);
    rp_time t = s->eng.now;
    assert_int_equal(s->check.d2h_mismatches, 0);
    rp_sim_fini(s);
    trc_reader_close(rd);
    unlink(path);
    return t;
}

#define MIB (1u << 20)
static uint8_t buf[MIB];

static trc_event ev_alloc(uint32_t dev, uint64_t addr, uint64_t size)
{
    trc_event e;
    memset(&e, 0, sizeof e);
    e.kind = TRC_EV_ALLOC;
    e.device = dev;
    e.addr = addr;
    e.size = size;
    return e;
}

static trc_event ev_copy(trc_copy_kind k, uint32_t dev, uint32_t stream, uint64_t dst, uint64_t src, uint64_t size)
{
    trc_event e;
    memset(&e, 0, sizeof e);
    e.kind = TRC_EV_COPY;
    e.copy_kind = k;
    e.device = dev;
    e.stream = stream;
    e.addr = dst;
    e.src = src;
    e.size = size;
    e.data = k == TRC_COPY_D2D ? NULL : buf;
    return e;
}

static void test_host_copies(void **st)
{
    (void)st;
    rp_sim *s = malloc(sizeof *s);
    for (size_t i = 0; i < MIB; i++)
        buf[i] = (uint8_t)(i * 7);
    const uint64_t A = 0x100000000ull, B = 0x200000000ull;
    /* Defaults: copy overhead 10 us, host link 16 GB/s, 1 us. H2D then D2H
     * (blocking): 2 x (10 us + 65.536 us + 1 us). */
    trc_event e1[] = {ev_alloc(0, A, MIB), ev_copy(TRC_COPY_H2D, 0, 0, A, 0x1000, MIB),
                      ev_copy(TRC_COPY_D2H, 0, 0, 0x1000, A, MIB)};
    assert_int_equal(replay(e1, 3, NULL, s), 2 * (10000 + 65536 + 1000) * NS);
    const char *no_oh[] = {"host.copy_overhead=0ns", "host.link_latency=2us", "host.link_bandwidth=8GB/s", NULL};
    assert_int_equal(replay(e1, 3, no_oh, s), 2 * (131072 + 2000) * NS);
    /* A runtime INIT copy costs the host nothing. */
    trc_event e2[] = {ev_alloc(0, A, MIB), ev_copy(TRC_COPY_INIT, 0, 0, A, 0, 4096)};
    assert_int_equal(replay(e2, 2, NULL, s), 0);
    /* An asynchronous copy (stream 1) does not block the host, but the trace
     * ends when it is done; a following blocking copy to the same GPU waits
     * for it (per-GPU order). */
    trc_event e3[] = {ev_alloc(0, A, MIB), ev_copy(TRC_COPY_H2D, 0, 1, A, 0x1000, MIB)};
    assert_int_equal(replay(e3, 2, NULL, s), (10000 + 65536 + 1000) * NS);
    /* Peer copy between GPUs of D-MGPU: 10 us + 1 MiB over the network. */
    trc_event e4[] = {ev_alloc(0, A, MIB), ev_alloc(1, B, MIB), ev_copy(TRC_COPY_H2D, 0, 0, A, 0x1000, MIB),
                      ev_copy(TRC_COPY_D2D, 1, 0, B, A, MIB), ev_copy(TRC_COPY_D2H, 1, 0, 0x1000, B, MIB)};
    rp_time h = (10000 + 65536 + 1000) * NS;
    const char *bus[] = {"topo.kind=discrete", "topo.gpus=2", NULL};
    assert_int_equal(replay(e4, 5, bus, s), 2 * h + 10000 * NS + 65536 * NS + 500 * NS);
    const char *all[] = {"topo.kind=discrete", "topo.gpus=2", "interconnect.kind=p2p-all",
                         "interconnect.p2p_bandwidth=32GB/s", "interconnect.p2p_latency=200ns", NULL};
    assert_int_equal(replay(e4, 5, all, s), 2 * h + 10000 * NS + 32768 * NS + 200 * NS);
    free(s);
}

/* The trace header's ISA target selects the instruction table: a target
 * this build has none for is refused with the target named (rp_sim_create). */
static void test_isa_target(void **st)
{
    (void)st;
    trc_event e[] = {ev_alloc(0, 0x100000000ull, 64)};
    char err[256];
    rp_config cfg;
    rp_config_defaults(&cfg);
    isa_target = "amdgcn-amd-amdhsa--gfx900";
    const char *path = write_trace(e, 1);
    isa_target = "amdgcn-amd-amdhsa--gfx803";
    trc_reader *rd = trc_reader_open(path, err, sizeof err);
    assert_non_null(rd);
    rp_sim *s = rp_sim_create(&cfg, rd, NULL, err, sizeof err);
    assert_null(s);
    assert_non_null(strstr(err, "gfx900"));
    assert_non_null(strstr(err, "gfx803"));
    trc_reader_close(rd);
    /* gfx8 variants and feature suffixes use the GCN3 table */
    assert_non_null(gcn_target_find("hipv4-amdgcn-amd-amdhsa--gfx803:xnack-"));
    assert_ptr_equal(gcn_target_find("gfx802"), gcn_target_find("gfx803"));
    assert_string_equal(gcn_target_find("gfx803")->isa, "GCN3");
    assert_null(gcn_target_find("gfx900"));
    assert_null(gcn_target_find(""));
    assert_null(gcn_target_find(NULL));
    unlink(path);
}

/* Names from a trace are printed escaped: a hostile kernel name's terminal
 * escape sequences never reach the terminal (issue 20). */
static void test_printable(void **st)
{
    (void)st;
    char b[64];
    assert_string_equal(rp_printable(b, sizeof b, "_Z6kernelPfS_"), "_Z6kernelPfS_");
    assert_string_equal(rp_printable(b, sizeof b, "a\x1b[2Jb\\c\n"), "a\\x1b[2Jb\\x5cc\\x0a");
    assert_string_equal(rp_printable(b, 6, "abcdefgh"), "abcde");
    assert_string_equal(rp_printable(b, 6, "ab\x01" "cd"), "ab"); /* no half escape */
}

static void test_bad_kind(void **st)
{
    (void)st;
    uint32_t k = 9;
    assert_int_equal(rp_net_kind_parse("p2p-ring", &k), 0);
    assert_int_equal(k, RP_NET_P2P_RING);
    assert_int_equal(rp_net_kind_parse("nvlink", &k), -1);
    rp_sim *s = malloc(sizeof *s);
    trc_event e[] = {ev_alloc(0, 0x100000000ull, 64)};
    const char *path = write_trace(e, 1);
    char err[256];
    trc_reader *rd = trc_reader_open(path, err, sizeof err);
    rp_config cfg;
    rp_config_defaults(&cfg);
    assert_int_equal(rp_config_set(&cfg, "interconnect.kind=nvlink", err, sizeof err), 0);
    assert_int_equal(rp_sim_init(s, &cfg, rd, NULL), -1);
    assert_non_null(strstr(s->err, "interconnect.kind = 'nvlink'"));
    rp_sim_fini(s);
    trc_reader_close(rd);
    unlink(path);
    free(s);
}

/* The L2 bank of an address is the bank the sim built: address / l2.interleave
 * mod the bank count, M-SGPU's scaled count included (4 x 16 = 64 banks: the
 * shift-and-mask path once kept the unscaled mask of 16, so three quarters of
 * the banks were never used), and a count that is no power of two (the
 * division path). Routing (rp_route_l2_bank) picks the same bank. */
static void test_l2_bank_of(void **st)
{
    (void)st;
    const char *sets[][4] = {{NULL},
                             {"topo.kind=single", "topo.gpus=4", NULL},
                             {"l2.banks=12", "l2.size=3MiB", NULL},
                             {"topo.kind=single", "topo.gpus=3", NULL}};
    const uint32_t banks[] = {16, 64, 12, 48};
    for (size_t k = 0; k < 4; k++) {
        rp_sim *s = malloc(sizeof *s);
        trc_event e[] = {ev_alloc(0, 0x100000000ull, 64)};
        const char *path = write_trace(e, 1);
        char err[256];
        trc_reader *rd = trc_reader_open(path, err, sizeof err);
        assert_non_null(rd);
        rp_config cfg;
        rp_config_defaults(&cfg);
        for (const char **x = sets[k]; *x; x++)
            assert_int_equal(rp_config_set(&cfg, *x, err, sizeof err), 0);
        if (rp_sim_init(s, &cfg, rd, NULL))
            fail_msg("case %zu: %s", k, s->err);
        assert_int_equal(s->cfg.l2_banks, banks[k]);
        assert_int_equal(s->l2_bank_pow2, (banks[k] & (banks[k] - 1)) == 0);
        uint64_t il = s->cfg.l2_interleave;
        for (uint64_t b = 0; b < 3 * (uint64_t)banks[k]; b++) {
            uint64_t a = b * il + (b * 13) % il;
            assert_ptr_equal(rp_l2_bank(s, 0, a), &s->gpus[0].l2[b % banks[k]]);
            rp_port *dst;
            assert_ptr_equal(rp_route_l2_bank(s, 0, 0, a, &dst), &s->gpus[0].l2_links[b % banks[k]]);
        }
        rp_sim_fini(s);
        trc_reader_close(rd);
        unlink(path);
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bus),          cmocka_unit_test(test_tree),
        cmocka_unit_test(test_ring),         cmocka_unit_test(test_all),
        cmocka_unit_test(test_bulk_and_host), cmocka_unit_test(test_host_copies),
        cmocka_unit_test(test_bad_kind),   cmocka_unit_test(test_isa_target),
        cmocka_unit_test(test_printable), cmocka_unit_test(test_l2_bank_of),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
