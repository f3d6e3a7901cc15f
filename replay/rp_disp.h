/*
 * rp_disp.h - a GPU's dispatcher (disp.c): the command processor and ACE that hand a
 * kernel's workgroups to CUs as their resources allow, and flush the L2 at the
 * kernel's end.
 */
#ifndef RP_DISP_H
#define RP_DISP_H

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

/* ---- dispatcher (command processor + ACE) -------------------------------------------- */

typedef struct rp_cu_res {    /* dispatcher's view of a CU's free resources */
    uint32_t slots[16], vgprs[16], sgprs[16];
    uint64_t lds;
} rp_cu_res;

typedef struct rp_disp {
    rp_component comp;
    const rp_ctx *x;          /* the machine around it (rp_ctx.h) */
    struct rp_wg *live;       /* workgroups placed and not yet done (rp_sim_fini frees what a failed run left) */
    rp_engine *eng;
    uint32_t gpu;
    rp_event ev;
    rp_port in;               /* WG_DONE from CUs, FLUSH_ACK from L2 banks */
    rp_link in_link;          /* from its own GPU's CUs and L2 banks */
    /* U-MGPU (GPU 0 drives every GPU's CUs): per other GPU, a link from
     * that GPU's CUs and L2 banks into `in` and one carrying FLUSH to its
     * L2 banks; both cross the interconnect (latency >= the inter-GPU
     * lookahead, parallel.c). NULL otherwise. */
    rp_link *gpu_in, *gpu_flush;
    rp_cu **cus;
    rp_cu_res *res;
    /* the L2 banks its kernels' end flush goes to: [gpu * l2_banks + bank], every GPU
     * (a U-MGPU kernel uses them all): each bank's top port and the link into it */
    rp_port **l2_top;
    rp_link **l2_link;
    uint32_t n_cus, rr;
    bool interleave;          /* dispatcher.policy = interleave */
    uint32_t kturn;           /* interleave: the next kernel's turn among those handing out workgroups */
    rp_kernel *queue, *queue_tail; /* launched, not started, in launch order */
    rp_kernel *active;        /* started and not ended, in start order (rp_kernel.next) */
    rp_time busy_until;
    uint64_t st_wgs_dispatched, st_kernels;
} rp_disp;

void rp_disp_init(rp_disp *d, rp_sim *s, uint32_t gpu);
void rp_disp_kick(rp_disp *d);

#endif
