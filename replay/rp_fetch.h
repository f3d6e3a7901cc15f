/*
 * rp_fetch.h - the CU front end's instruction fetch (fetch.c): the L1 instruction cache
 * of a shader array, shared by its CUs, and each wave's instruction buffer.
 */
#ifndef RP_FETCH_H
#define RP_FETCH_H

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

/* One instruction fetch in flight (cu.c): a wave's request for cu.fetch_bytes
 * of code, queued in the L1I MSHR while its line misses, then in the CU's
 * completion list. w == NULL: the wave ended or was redirected (dropped). */
typedef struct rp_fetch {
    struct rp_fetch *next;
    rp_wave *w;
    rp_cu *cu;
    uint64_t pc;              /* ELF vaddr of the fetched chunk */
    rp_time done;
} rp_fetch;

/* L1 instruction cache of a shader array (cu.c), shared by its CUs. Read-only:
 * misses go to the L2 bank of the line (code is treated as replicated per GPU,
 * so fetches never cross GPUs). */
typedef struct rp_l1i_mshr {
    uint64_t line;
    rp_fetch *waiters;
    bool busy;
} rp_l1i_mshr;

typedef struct rp_l1i {
    rp_component comp;
    const rp_ctx *x;          /* the machine around it (rp_ctx.h) */
    rp_engine *eng;
    uint32_t gpu;
    uint32_t grp;             /* its group of shader arrays (sim.gpu_partitions; route to the L2) */
    uint32_t sets, assoc, line_shift, mshrs, mshr_used;
    uint64_t *tag, *age, stamp;   /* tag: line address + 1, 0 = invalid; LRU stamps */
    rp_l1i_mshr *mshr;
    rp_fetch *stall_head, *stall_tail; /* misses waiting for a free MSHR */
    rp_time next_free;        /* lookup pipeline: one fetch per cycle */
    rp_time latency_ps;
    struct rp_tlb *tlb;       /* its shader array's L1 scalar/instruction TLB: misses are translated (NULL: none) */
    rp_port bottom;           /* fills from the L2 */
    rp_link fill_link;
    uint32_t kernel;          /* kernel id + 1 of the last fetch: a new kernel invalidates (0: none yet) */
    uint64_t st_hits, st_misses, st_merges, st_mshr_stalls, st_invalidations;
} rp_l1i;

/* Build the L1 instruction caches of GPU g (one per shader array, after its
 * CUs) and attach each CU to its array's. 0 or -1 (out of memory). */
typedef struct rp_gpu rp_gpu;
int rp_gpu_frontend_init(rp_sim *s, rp_gpu *g);
/* Free what rp_gpu_frontend_init and the CUs' fetch units allocated. */
void rp_gpu_frontend_fini(rp_sim *s, rp_gpu *g);
/* Device address of code object co's loaded image (pc + it = fetch address). */
uint64_t rp_code_base(rp_sim *s, uint32_t co);
/* The CU's fetch completions (event handler; owner is the rp_cu). */
void rp_fetch_done(rp_event *ev, rp_engine *e);

#endif
