/*
 * rp_rdma.h - a GPU's RDMA engine (sim.c): its L1s' requests for other GPUs' memory
 * go out over the interconnect, other GPUs' requests come in to its L2.
 */
#ifndef RP_RDMA_H
#define RP_RDMA_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rp_ctx.h"
#include "rp_engine.h"

typedef struct rp_sim rp_sim;
typedef struct rp_cu rp_cu;
typedef struct rp_wave rp_wave;
typedef struct rp_wg rp_wg;
typedef struct rp_kernel rp_kernel;
typedef struct rp_part rp_part;
typedef struct rp_net rp_net;

/* ---- RDMA engine (inter-GPU accesses) --------------------------------------------- */

typedef struct rp_rdma {
    rp_component comp;
    const rp_ctx *x;        /* the machine around it (rp_ctx.h) */
    rp_net *net;            /* the interconnect it sends on */
    rp_engine *eng;         /* its partition's engine */
    uint32_t gpu;
    rp_port inside;         /* requests from local L1s for remote memory */
    rp_port outside;        /* requests from other GPUs, and responses to ours */
    rp_port l2resp;         /* local L2 responses to remote requests */
    rp_link in_link;        /* into inside */
    rp_link l2resp_link;    /* into l2resp */
    uint64_t st_out_reqs, st_in_reqs, st_out_bytes, st_in_bytes;
    uint64_t st_own_bytes;  /* network bytes of this GPU's own remote accesses: its requests + their responses */
} rp_rdma;

#endif
