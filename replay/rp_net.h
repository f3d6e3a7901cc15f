/*
 * rp_net.h - the inter-GPU interconnect and the host links (net.c): PCIe bus or tree,
 * p2p ring or all-to-all, store-and-forward links with latency and bandwidth.
 */
#ifndef RP_NET_H
#define RP_NET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rp_engine.h"
#include "rp_stats.h"

typedef struct rp_sim rp_sim;
typedef struct rp_cu rp_cu;
typedef struct rp_wave rp_wave;
typedef struct rp_wg rp_wg;
typedef struct rp_kernel rp_kernel;
typedef struct rp_part rp_part;

/* ---- interconnect (net.c) --------------------------------------------------------- */

/* Inter-GPU network kinds (config interconnect.kind). */
enum rp_net_kind { RP_NET_PCIE_BUS = 0, RP_NET_PCIE_TREE, RP_NET_P2P_RING, RP_NET_P2P_ALL };

typedef struct rp_net_spec {
    uint32_t kind;            /* rp_net_kind */
    uint32_t gpus;            /* nodes 0..gpus-1 (<= 255) */
    uint32_t gpus_per_switch; /* pcie-tree */
    rp_time bus_latency_ps;  uint64_t bus_bytes_per_s;  /* pcie-bus: the one shared link */
    rp_time pcie_latency_ps; uint64_t pcie_bytes_per_s; /* pcie-tree: per link crossed */
    rp_time p2p_latency_ps;  uint64_t p2p_bytes_per_s;  /* p2p-*: per link crossed */
    rp_time host_latency_ps; uint64_t host_bytes_per_s; /* host <-> GPU, per GPU and direction */
    uint32_t header_bytes;    /* added to every message on every link */
} rp_net_spec;

typedef struct rp_net rp_net;

/* "pcie-bus" etc. to rp_net_kind. 0 or -1. */
int rp_net_kind_parse(const char *name, uint32_t *kind);
/* Build the network (links, routers) and, when stats is non-NULL, register
 * per-link counters (messages, bytes, busy_ps) under "net.*". NULL: out of
 * memory or a bad spec (message in err). */
rp_net *rp_net_create(rp_engine *e, const rp_net_spec *spec, rp_stats *stats, char *err, size_t errlen);
void rp_net_destroy(rp_net *n);
/* Where messages bound for GPU `gpu` are delivered (its RDMA engine). */
void rp_net_set_sink(rp_net *n, uint32_t gpu, rp_port *p);
/* Inject m at GPU `from`, bound for GPU `to` (!= from), ready at `ready`.
 * Store-and-forward per link: each link adds (payload + header) / bandwidth
 * of serialisation (FIFO behind earlier traffic) plus its latency. */
void rp_net_send(rp_net *n, uint32_t from, uint32_t to, rp_msg *m, rp_time ready);
/* Links a message from `from` to `to` crosses. */
uint32_t rp_net_hops(const rp_net *n, uint32_t from, uint32_t to);
/* A bulk DMA of `bytes` (peer copy) from GPU `from` to GPU `to`, pipelined
 * over the path (cut-through: each link starts when the first data reaches
 * it); reserves the links and returns the completion time. */
rp_time rp_net_bulk(rp_net *n, uint32_t from, uint32_t to, uint64_t bytes, rp_time ready);
/* A host copy of `bytes` over GPU `gpu`'s host link (h2d: towards the GPU):
 * FIFO behind earlier copies in that direction; returns start + bytes /
 * bandwidth + latency. */
rp_time rp_net_host_copy(rp_net *n, uint32_t gpu, bool h2d, uint64_t bytes, rp_time ready);
/* Bytes injected into the inter-GPU network so far (each message once,
 * headers included; bulk peer copies included). */
uint64_t rp_net_bytes(const rp_net *n);
/* Build s->net from s->cfg (net.c). 0 or -1 (message in s->err). */
int rp_net_build(rp_sim *s);
/* Put each network node in its partition (a GPU's router in the GPU's, a
 * PCIe switch in its first GPU's, the root complex and the bus's arbiter and
 * exit in the hubs' own partition, s->net_part, or GPU 0's when there is
 * none): links deliver on their destination node's engine and cross
 * partitions where their ends differ. 0 or -1. */
int rp_net_partition(rp_sim *s);
/* Refresh the network's injected totals ("link.messages"/"link.bytes")
 * from the per-node counters; at synchronisation points. */
void rp_net_sum(rp_net *n);

#endif
