/*
 * net.c - the inter-GPU interconnect, the host links, and the per-GPU RDMA
 * engines that turn remote memory accesses into interconnect transactions.
 *
 * Network model. Nodes are the GPUs (0..gpus-1) and, for the PCIe tree, the
 * switches and the root complex. Every node has a router port; links are
 * directed rp_links (full duplex = one link per direction) that deliver to
 * the next node's router, which forwards the message on the next link of its
 * route or, at the destination GPU, into the sink port (the GPU's RDMA
 * engine). Forwarding is store-and-forward: each link crossed adds the
 * message's serialisation, (payload + header) / bandwidth, behind earlier
 * traffic on that link (FIFO, no back-pressure), plus the link latency. For
 * the 8-72-byte messages of remote cache-line accesses the difference to
 * cut-through is one serialisation per extra hop (2.3 ns for 72 B at
 * 31.5 GB/s), small against the per-hop latency.
 *
 * Kinds (interconnect.kind):
 *   pcie-bus   one link shared by all GPUs and both directions: the 16 GB/s
 *              PCIe bus of MGSim (Sec. IV-C); link.latency, link.bandwidth.
 *   pcie-tree  each GPU on an x16 link (one per direction) to a PCIe switch
 *              (interconnect.gpus_per_switch GPUs each), switches on x16
 *              links to the root complex; GPU a -> switch -> [root -> switch]
 *              -> GPU b: 2 links under one switch, 4 otherwise;
 *              interconnect.pcie_bandwidth (PCIe 4.0 x16: 16 GT/s x 16 lanes
 *              x 128b/130b = 31.5 GB/s per direction) and pcie_hop_latency.
 *   p2p-ring   GPU i linked to i+1 and i-1 (mod gpus) in both directions;
 *              messages take the shorter way round (clockwise on a tie),
 *              through intermediate GPUs; interconnect.p2p_*.
 *   p2p-all    a direct link per ordered GPU pair (NVLink / Infinity-Fabric
 *              like all-to-all); one hop.
 *
 * Bulk transfers (peer copies) and host copies are reserved analytically on
 * the same links (busy_until), so they queue with message traffic.
 *
 * Statistics per link (rp_stats, under "net.*"): messages, bytes (headers
 * included), busy_ps (serialisation time).
 */
#include "rp_sim_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct net_link {
    rp_link l;
    uint32_t from;        /* node that sends on it */
    uint32_t to;          /* node the link delivers to */
    uint64_t st_busy_ps;
    char name[48];
} net_link;

typedef struct net_node {
    rp_port router;
    rp_net *net;
    uint32_t id;
    rp_engine *eng;       /* its partition's engine */
    uint64_t inj_msgs, inj_bytes; /* injected here (GPU nodes; updated by its partition) */
} net_node;

struct rp_net {
    rp_engine *eng;
    rp_net_spec spec;
    uint32_t g;            /* GPUs */
    uint32_t n_sw;         /* pcie-tree switches */
    uint32_t n_nodes;      /* GPUs, switches, root */
    net_node *nodes;
    rp_port **sink;        /* per GPU */
    net_link *links;
    uint32_t n_links, cap_links;
    int32_t *hop;          /* p2p: [a * g + b] link from a to neighbour/peer b, -1 none */
    uint32_t bus;          /* pcie-bus: the serialising bus link (sent on by the arbiter node) */
    uint32_t *bus_in;      /* pcie-bus: per GPU, the latency half from the GPU to the arbiter */
    uint32_t *bus_out;     /* pcie-bus: per GPU, the other half from the bus to the GPU */
    uint32_t *gpu_up, *gpu_down, *sw_up, *sw_down;
    net_link *host;        /* [2 * g]: h2d, d2h */
    uint64_t st_inj_bytes, st_inj_msgs;
};

static const char *kind_names[] = {"pcie-bus", "pcie-tree", "p2p-ring", "p2p-all"};

int rp_net_kind_parse(const char *name, uint32_t *kind)
{
    for (uint32_t i = 0; i < 4; i++)
        if (!strcmp(name, kind_names[i])) {
            *kind = i;
            return 0;
        }
    return -1;
}

static rp_time ser_ps(uint64_t bytes, uint64_t bytes_per_s)
{
    return bytes_per_s ? (rp_time)((bytes * 1000000000000ull + bytes_per_s - 1) / bytes_per_s) : 0;
}

static uint32_t add_link(rp_net *n, uint32_t from, uint32_t to, rp_time lat, uint64_t bw, const char *name)
{
    uint32_t i = n->n_links++;
    net_link *k = &n->links[i];
    rp_link_init(&k->l, n->eng, NULL, lat, bw, n->spec.header_bytes);
    k->from = from;
    k->to = to;
    snprintf(k->name, sizeof k->name, "%s", name);
    k->l.name = k->name;
    return i;
}

static void sink_push(rp_net *n, uint32_t gpu, rp_msg *m, rp_engine *e)
{
    rp_port *p = n->sink[gpu];
    m->next = NULL;
    m->dst = p;
    if (p->tail)
        p->tail->next = m;
    else
        p->head = m;
    p->tail = m;
    p->n++;
    if (p->notify)
        p->notify(p, e);
}

/* The link a message at node `at` bound for GPU `dst` (!= at) takes next. */
static net_link *next_link(const rp_net *n, uint32_t at, uint32_t dst)
{
    uint32_t g = n->g;
    switch (n->spec.kind) {
    case RP_NET_PCIE_BUS:
        return at < g ? &n->links[n->bus_in[at]] : at == g ? &n->links[n->bus] : &n->links[n->bus_out[dst]];
    case RP_NET_PCIE_TREE: {
        uint32_t gps = n->spec.gpus_per_switch, sw_dst = dst / gps;
        if (at < g)                       /* GPU: up to its switch */
            return &n->links[n->gpu_up[at]];
        if (at < g + n->n_sw) {           /* switch */
            uint32_t k = at - g;
            return k == sw_dst ? &n->links[n->gpu_down[dst]] : &n->links[n->sw_up[k]];
        }
        return &n->links[n->sw_down[sw_dst]]; /* root */
    }
    case RP_NET_P2P_RING: {
        uint32_t cw = (dst + g - at) % g;
        uint32_t nb = cw <= g - cw ? (at + 1) % g : (at + g - 1) % g;
        return &n->links[n->hop[at * g + nb]];
    }
    default:
        return &n->links[n->hop[at * g + dst]];
    }
}

static void link_send(rp_net *n, net_link *k, rp_msg *m, rp_time ready)
{
    k->st_busy_ps += ser_ps((uint64_t)m->payload + k->l.header_bytes, k->l.bytes_per_s);
    m->dst = &n->nodes[k->to].router;
    rp_link_send(&k->l, m, ready);
}

static void router_notify(rp_port *p, rp_engine *e)
{
    net_node *nd = p->owner;
    rp_net *n = nd->net;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        if (m->net_dst == nd->id)
            sink_push(n, nd->id, m, e);
        else
            link_send(n, next_link(n, nd->id, m->net_dst), m, e->now);
    }
}

void rp_net_send(rp_net *n, uint32_t from, uint32_t to, rp_msg *m, rp_time ready)
{
    m->net_dst = (uint8_t)to;
    net_node *src = &n->nodes[from];
    src->inj_msgs++;
    src->inj_bytes += (uint64_t)m->payload + n->spec.header_bytes;
    if (from == to) { /* not a network transfer: hand it over now */
        sink_push(n, to, m, src->eng);
        return;
    }
    link_send(n, next_link(n, from, to), m, ready);
}

uint32_t rp_net_hops(const rp_net *n, uint32_t from, uint32_t to)
{
    if (n->spec.kind == RP_NET_PCIE_BUS) /* the halves of the bus latency are one link */
        return from != to;
    uint32_t h = 0, at = from;
    while (at != to && h < 2 * n->n_nodes) {
        at = next_link(n, at, to)->to;
        h++;
    }
    return h;
}

rp_time rp_net_bulk(rp_net *n, uint32_t from, uint32_t to, uint64_t bytes, rp_time ready)
{
    if (ready < n->eng->now)
        ready = n->eng->now;
    n->nodes[from].inj_msgs++;
    n->nodes[from].inj_bytes += bytes;
    /* t: first data reaches the link; e: last data has left the previous link
     * and crossed its latency. */
    rp_time t = ready, e = 0;
    uint32_t at = from;
    while (at != to) {
        net_link *k = next_link(n, at, to);
        rp_time start = t > k->l.busy_until ? t : k->l.busy_until;
        rp_time s = ser_ps(bytes, k->l.bytes_per_s);
        rp_time last = start + s > e ? start + s : e;
        k->l.busy_until = last;
        k->st_busy_ps += s;
        k->l.st_msgs++;
        k->l.st_bytes += bytes;
        t = start + k->l.latency_ps;
        e = last + k->l.latency_ps;
        at = k->to;
    }
    return e > ready ? e : ready;
}

rp_time rp_net_host_copy(rp_net *n, uint32_t gpu, bool h2d, uint64_t bytes, rp_time ready)
{
    net_link *k = &n->host[2 * gpu + (h2d ? 0 : 1)];
    if (ready < n->eng->now)
        ready = n->eng->now;
    rp_time start = ready > k->l.busy_until ? ready : k->l.busy_until;
    rp_time s = ser_ps(bytes, k->l.bytes_per_s);
    k->l.busy_until = start + s;
    k->st_busy_ps += s;
    k->l.st_msgs++;
    k->l.st_bytes += bytes;
    return start + s + k->l.latency_ps;
}

void rp_net_sum(rp_net *n)
{
    if (!n)
        return;
    n->st_inj_msgs = n->st_inj_bytes = 0;
    for (uint32_t i = 0; i < n->n_nodes; i++) {
        n->st_inj_msgs += n->nodes[i].inj_msgs;
        n->st_inj_bytes += n->nodes[i].inj_bytes;
    }
}

uint64_t rp_net_bytes(const rp_net *n)
{
    uint64_t b = 0;
    for (uint32_t i = 0; i < n->n_nodes; i++)
        b += n->nodes[i].inj_bytes;
    return b;
}

void rp_net_set_sink(rp_net *n, uint32_t gpu, rp_port *p)
{
    if (gpu < n->g)
        n->sink[gpu] = p;
}

static void reg(rp_stats *st, net_link *k)
{
    rp_stats_add(st, k->name, "messages", &k->l.st_msgs, "count", "messages that crossed this link");
    rp_stats_add(st, k->name, "bytes", &k->l.st_bytes, "bytes", "bytes (payload and headers) that crossed this link");
    rp_stats_add(st, k->name, "busy_ps", &k->st_busy_ps, "ps", "time this link was serialising data");
}

rp_net *rp_net_create(rp_engine *e, const rp_net_spec *spec, rp_stats *stats, char *err, size_t errlen)
{
    uint32_t g = spec->gpus;
    if (g == 0 || g > 255 || spec->kind > RP_NET_P2P_ALL || (spec->kind == RP_NET_PCIE_TREE && !spec->gpus_per_switch)) {
        snprintf(err, errlen, "interconnect: bad spec (%u GPUs, kind %u; 1..255 GPUs and a known kind needed)", g,
                 spec->kind);
        return NULL;
    }
    rp_net *n = calloc(1, sizeof *n);
    if (!n) {
        snprintf(err, errlen, "interconnect: out of memory");
        return NULL;
    }
    n->eng = e;
    n->spec = *spec;
    n->g = g;
    if (spec->kind == RP_NET_PCIE_TREE)
        n->n_sw = (g + spec->gpus_per_switch - 1) / spec->gpus_per_switch;
    n->n_nodes = g + (n->n_sw ? n->n_sw + 1 : 0) + (spec->kind == RP_NET_PCIE_BUS ? 2 : 0);
    n->cap_links = 2 * g * g + 3 * g + 2 * n->n_sw + 1;
    n->nodes = calloc(n->n_nodes, sizeof *n->nodes);
    n->sink = calloc(g, sizeof *n->sink);
    n->links = calloc(n->cap_links, sizeof *n->links);
    n->hop = malloc((size_t)g * g * sizeof *n->hop);
    n->gpu_up = calloc(g, sizeof *n->gpu_up);
    n->gpu_down = calloc(g, sizeof *n->gpu_down);
    n->sw_up = calloc(n->n_sw + 1, sizeof *n->sw_up);
    n->sw_down = calloc(n->n_sw + 1, sizeof *n->sw_down);
    n->host = calloc(2 * (size_t)g, sizeof *n->host);
    n->bus_in = calloc(g, sizeof *n->bus_in);
    n->bus_out = calloc(g, sizeof *n->bus_out);
    if (!n->nodes || !n->sink || !n->links || !n->hop || !n->gpu_up || !n->gpu_down || !n->sw_up || !n->sw_down ||
        !n->host || !n->bus_in || !n->bus_out) {
        rp_net_destroy(n);
        snprintf(err, errlen, "interconnect: out of memory");
        return NULL;
    }
    for (uint32_t i = 0; i < n->n_nodes; i++) {
        n->nodes[i].net = n;
        n->nodes[i].id = i;
        n->nodes[i].router.owner = &n->nodes[i];
        n->nodes[i].router.notify = router_notify;
        n->nodes[i].eng = e;
    }
    for (size_t i = 0; i < (size_t)g * g; i++)
        n->hop[i] = -1;
    char name[48];
    switch (spec->kind) {
    case RP_NET_PCIE_BUS:
        /* One shared link (the bus: serialisation only) from the arbiter
         * (node g), which every GPU reaches over the first half of the
         * latency, to the bus exit (node g + 1), from which the second half
         * leads to each GPU. Arrival = max(ready + L/2, busy) +
         * serialisation + L - L/2: the arithmetic of one shared link of
         * latency L (in a frame shifted by L/2), and the partitions of a
         * parallel replay meet only after L/2 (parallel.c). */
        for (uint32_t a = 0; a < g; a++) {
            snprintf(name, sizeof name, "net.pcie.gpu[%u].to_bus", a);
            n->bus_in[a] = add_link(n, a, g, spec->bus_latency_ps / 2, 0, name);
            snprintf(name, sizeof name, "net.pcie.gpu[%u].from_bus", a);
            n->bus_out[a] = add_link(n, g + 1, a, spec->bus_latency_ps - spec->bus_latency_ps / 2, 0, name);
        }
        n->bus = add_link(n, g, g + 1, 0, spec->bus_bytes_per_s, "net.pcie.bus");
        break;
    case RP_NET_PCIE_TREE:
        for (uint32_t a = 0; a < g; a++) {
            uint32_t sw = g + a / spec->gpus_per_switch;
            snprintf(name, sizeof name, "net.pcie.gpu[%u].up", a);
            n->gpu_up[a] = add_link(n, a, sw, spec->pcie_latency_ps, spec->pcie_bytes_per_s, name);
            snprintf(name, sizeof name, "net.pcie.gpu[%u].down", a);
            n->gpu_down[a] = add_link(n, sw, a, spec->pcie_latency_ps, spec->pcie_bytes_per_s, name);
        }
        if (n->n_sw > 1)
            for (uint32_t k = 0; k < n->n_sw; k++) {
                snprintf(name, sizeof name, "net.pcie.sw[%u].up", k);
                n->sw_up[k] = add_link(n, g + k, g + n->n_sw, spec->pcie_latency_ps, spec->pcie_bytes_per_s, name);
                snprintf(name, sizeof name, "net.pcie.sw[%u].down", k);
                n->sw_down[k] = add_link(n, g + n->n_sw, g + k, spec->pcie_latency_ps, spec->pcie_bytes_per_s, name);
            }
        break;
    case RP_NET_P2P_RING:
    case RP_NET_P2P_ALL:
        for (uint32_t a = 0; a < g; a++)
            for (uint32_t b = 0; b < g; b++) {
                bool nb = spec->kind == RP_NET_P2P_ALL ? a != b
                                                       : g > 1 && a != b && (b == (a + 1) % g || a == (b + 1) % g);
                if (!nb)
                    continue;
                snprintf(name, sizeof name, "net.link[%u-%u]", a, b);
                n->hop[a * g + b] = (int32_t)add_link(n, a, b, spec->p2p_latency_ps, spec->p2p_bytes_per_s, name);
            }
        break;
    }
    for (uint32_t a = 0; a < g; a++) {
        snprintf(name, sizeof name, "net.host.gpu[%u].h2d", a);
        rp_link_init(&n->host[2 * a].l, e, NULL, spec->host_latency_ps, spec->host_bytes_per_s, 0);
        snprintf(n->host[2 * a].name, sizeof n->host[2 * a].name, "%s", name);
        snprintf(name, sizeof name, "net.host.gpu[%u].d2h", a);
        rp_link_init(&n->host[2 * a + 1].l, e, NULL, spec->host_latency_ps, spec->host_bytes_per_s, 0);
        snprintf(n->host[2 * a + 1].name, sizeof n->host[2 * a + 1].name, "%s", name);
    }
    if (stats) {
        for (uint32_t i = 0; i < n->n_links; i++)
            reg(stats, &n->links[i]);
        for (uint32_t i = 0; i < 2 * g; i++)
            reg(stats, &n->host[i]);
        /* Totals injected into the network (each message once): the stable
         * keys "link.messages" / "link.bytes" of the single-bus model. */
        rp_stats_add(stats, "link", "messages", &n->st_inj_msgs, "count", "messages injected into the inter-GPU network");
        rp_stats_add(stats, "link", "bytes", &n->st_inj_bytes, "bytes", "bytes injected into the inter-GPU network (each message once)");
    }
    return n;
}

void rp_net_destroy(rp_net *n)
{
    if (!n)
        return;
    free(n->nodes);
    free(n->sink);
    free(n->links);
    free(n->hop);
    free(n->gpu_up);
    free(n->gpu_down);
    free(n->sw_up);
    free(n->sw_down);
    free(n->host);
    free(n->bus_in);
    free(n->bus_out);
    free(n);
}

int rp_net_partition(rp_sim *s)
{
    rp_net *n = s->net;
    rp_part **np = calloc(n->n_nodes, sizeof *np);
    if (!np) {
        snprintf(s->err, sizeof s->err, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < n->n_nodes; i++) {
        uint32_t gpu = 0;                                 /* root complex, bus arbiter and exit */
        if (i < n->g)
            gpu = i;
        else if (i < n->g + n->n_sw)
            gpu = (i - n->g) * n->spec.gpus_per_switch;  /* a switch: its first GPU's */
        np[i] = s->gpus[gpu < s->n_gpus ? gpu : 0].part;
        if (i >= n->g + n->n_sw && s->net_part)
            np[i] = s->net_part;                         /* the hubs' own partition (parallel.c) */
        n->nodes[i].eng = &np[i]->eng;
    }
    for (uint32_t i = 0; i < n->n_links; i++) {
        net_link *k = &n->links[i];
        k->l.eng = k->l.src_eng = &np[k->to]->eng;
        rp_link_from(s, &k->l, np[k->from], np[k->to]);
    }
    free(np);
    return 0;
}

int rp_net_build(rp_sim *s)
{
    const rp_config *c = &s->cfg;
    rp_net_spec sp;
    memset(&sp, 0, sizeof sp);
    if (rp_net_kind_parse(c->net_kind, &sp.kind)) {
        snprintf(s->err, sizeof s->err,
                 "config: interconnect.kind = '%s': expected pcie-bus, pcie-tree, p2p-ring or p2p-all", c->net_kind);
        return -1;
    }
    sp.gpus = s->n_gpus;
    sp.gpus_per_switch = c->net_gpus_per_switch;
    sp.bus_latency_ps = rp_lat_ps(c->link_latency, s->clk);
    sp.bus_bytes_per_s = rp_bw_Bps(c->link_bandwidth, s->clk);
    sp.pcie_latency_ps = rp_lat_ps(c->pcie_hop_latency, s->clk);
    sp.pcie_bytes_per_s = rp_bw_Bps(c->pcie_bandwidth, s->clk);
    sp.p2p_latency_ps = rp_lat_ps(c->p2p_latency, s->clk);
    sp.p2p_bytes_per_s = rp_bw_Bps(c->p2p_bandwidth, s->clk);
    sp.host_latency_ps = rp_lat_ps(c->host_link_latency, s->clk);
    sp.host_bytes_per_s = rp_bw_Bps(c->host_link_bandwidth, s->clk);
    sp.header_bytes = c->header_bytes;
    s->net = rp_net_create(&s->eng, &sp, &s->stats, s->err, sizeof s->err);
    if (!s->net)
        return -1;
    /* The host timeline's counters (host.c) live with its links. */
    rp_stats_add(&s->stats, "host", "copies", &s->host.st_copies, "count", "host copies (H2D, D2H, D2D, peer) timed");
    rp_stats_add(&s->stats, "host", "copy_bytes", &s->host.st_copy_bytes, "bytes", "bytes of the host copies");
    rp_stats_add(&s->stats, "host", "copy_ps", &s->host.st_copy_ps, "ps", "sum of the host copies' durations");
    rp_stats_add(&s->stats, "host", "memsets", &s->host.st_memsets, "count", "memsets timed");
    rp_stats_add(&s->stats, "host", "launches", &s->host.st_launches, "count", "kernel launches");
    rp_stats_add(&s->stats, "host", "gap_ps", &s->host.st_host_gap_ps, "ps",
                 "recorded host time between HIP calls replayed (trace 1.4, host.gap_percent)");
    return 0;
}

/* ---- RDMA engines ------------------------------------------------------------------------
 *
 * A local L1's miss to another GPU's memory enters `inside` (over the NoC
 * link in_link), is copied into a network message (same type, address and
 * payload: a read request carries no data, a write carries its line, an
 * atomic its operands) and injected towards the owner GPU. There the RDMA
 * engine's `outside` port hands it to the L2 bank of the line; the L2's
 * response (read: the line; write: an acknowledgement without data) comes
 * back through `l2resp` and is returned over the network to the requester's
 * `outside`, which answers the original L1 request. */

static bool is_request(uint8_t t) { return t == RP_MSG_READ || t == RP_MSG_WRITE || t == RP_MSG_ATOMIC; }

static void rdma_inside(rp_port *p, rp_engine *e)
{
    rp_rdma *r = p->owner;
    const rp_ctx *rx = r->x;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        uint32_t t = rx->gpu_of(rx->owner, m->addr, r->gpu);
        rp_msg *d = rp_msg_alloc(rp_ctx_pool(rx));
        if (!d) {
            rp_ctx_fail(rx, "%s: out of memory", r->comp.name);
            return;
        }
        d->type = m->type;
        d->addr = m->addr;
        d->payload = m->payload;
        d->acc = m->acc;
        d->lane_mask = m->lane_mask;
        d->data = m->data; /* a cache's READ asks for the line's data (cache.c's marker) */
        d->src_gpu = (uint8_t)r->gpu;
        d->ctx = m;
        r->st_out_reqs++;
        r->st_out_bytes += (uint64_t)d->payload + rx->cfg->header_bytes;
        r->st_own_bytes += (uint64_t)d->payload + rx->cfg->header_bytes;
        rp_net_send(r->net, r->gpu, t, d, e->now);
    }
}

static void rdma_outside(rp_port *p, rp_engine *e)
{
    rp_rdma *r = p->owner;
    const rp_ctx *rx = r->x;
    rp_msg *m;
    while ((m = rp_port_pop(p))) {
        r->st_in_bytes += (uint64_t)m->payload + rx->cfg->header_bytes;
        if (is_request(m->type)) {
            /* A remote GPU's request: into our own L2 bank for the line. */
            rp_msg *x = rp_msg_alloc(rp_ctx_pool(rx));
            if (!x) {
                rp_ctx_fail(rx, "%s: out of memory", r->comp.name);
                return;
            }
            x->type = m->type;
            x->addr = m->addr;
            x->payload = m->payload;
            x->acc = m->acc;
            x->lane_mask = m->lane_mask;
            x->data = m->data;
            m->data = NULL;
            x->ctx = m;
            x->reply_link = &r->l2resp_link;
            x->reply_port = &r->l2resp;
            r->st_in_reqs++;
            rp_port *dst = NULL;
            rp_link *l = rx->route_l2(rx->owner, r->gpu, UINT32_MAX, m->addr, &dst);
            x->dst = dst;
            rp_link_send(l, x, e->now);
        } else {
            /* The response to one of our requests: back to the L1. */
            r->st_own_bytes += (uint64_t)m->payload + rx->cfg->header_bytes;
            rp_msg *orig = m->ctx;
            orig->type = m->type;
            orig->payload = m->payload;
            orig->data = m->data; /* the line's bytes as the owner's L2 served them */
            orig->dst = orig->reply_port;
            rp_link_send(orig->reply_link, orig, e->now);
            rp_msg_free(rp_ctx_pool(rx), m);
        }
    }
}

static void rdma_l2resp(rp_port *p, rp_engine *e)
{
    rp_rdma *r = p->owner;
    const rp_ctx *rx = r->x;
    rp_msg *x;
    while ((x = rp_port_pop(p))) {
        rp_msg *m = x->ctx; /* the network request, reused as the response */
        m->type = x->type;
        m->payload = x->payload;
        m->data = x->data; /* READ_RSP: snapshot of the line (travels with the response) */
        x->data = NULL;
        r->st_out_bytes += (uint64_t)m->payload + rx->cfg->header_bytes;
        rp_net_send(r->net, r->gpu, m->src_gpu, m, e->now);
        rp_msg_free(rp_ctx_pool(rx), x);
    }
}

static void rdma_dump(rp_component *c, FILE *f)
{
    rp_rdma *r = (rp_rdma *)c;
    if (r->inside.n || r->outside.n || r->l2resp.n)
        fprintf(f, "  %s: queued inside %u, outside %u, l2resp %u\n", c->name, r->inside.n, r->outside.n,
                r->l2resp.n);
}

void rp_rdma_init(rp_rdma *r, rp_sim *s, uint32_t gpu)
{
    char name[48];
    memset(r, 0, sizeof *r);
    r->x = &s->ctx;
    r->net = s->net;
    r->gpu = gpu;
    r->inside.owner = r->outside.owner = r->l2resp.owner = r;
    r->inside.notify = rdma_inside;
    r->outside.notify = rdma_outside;
    r->l2resp.notify = rdma_l2resp;
    rp_time noc = rp_lat_ps(s->cfg.noc_latency, s->clk);
    uint64_t bw = rp_bw_Bps(s->cfg.noc_bandwidth, s->clk);
    r->eng = &s->gpus[gpu].part->eng;
    rp_link_init(&r->in_link, r->eng, &r->inside, noc, bw, s->cfg.header_bytes);
    rp_link_init(&r->l2resp_link, r->eng, &r->l2resp, noc, bw, s->cfg.header_bytes);
    if (s->net)
        rp_net_set_sink(s->net, gpu, &r->outside);
    snprintf(name, sizeof name, "gpu[%u].rdma", gpu);
    rp_engine_add_component(r->eng, &r->comp, name, rdma_dump);
    /* (out_requests, in_requests, out_bytes are registered by sim.c) */
    rp_stats_add(&s->stats, name, "in_bytes", &r->st_in_bytes, "bytes", "network bytes of other GPUs' accesses to this GPU's memory");
    rp_stats_add(&s->stats, name, "own_bytes", &r->st_own_bytes, "bytes", "network bytes of this GPU's own remote accesses (requests and responses)");
}
