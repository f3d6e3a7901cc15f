/*
 * rp_ctx.h - what the GPU-side components (compute unit, fetch unit and L1I,
 * dispatcher, RDMA engine) use of the machine around them besides their
 * links and ports: the configuration and clock, the observation points, the
 * trace, the resources of whoever runs them now (message pool, data-check
 * counters, human output) and a few services of the machine (stop the run,
 * the LDS data path, routing to an L2 bank, kernel notes, the grid barrier's
 * release, sampled replay). The sim builds one (rp_sim_init) and each
 * component keeps a const pointer to it, not to the sim: a component test
 * can hand a component a context of its own. The caches have the smaller
 * rp_mem_ctx (rp_cache.h).
 */
#ifndef RP_CTX_H
#define RP_CTX_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rp_config.h"
#include "rp_engine.h"
#include "rp_hooks.h"
#include "rp_sim.h"

#include "traceformat/trc.h"

typedef struct rp_access rp_access;
typedef struct rp_kernel rp_kernel;
typedef struct rp_wave rp_wave;
typedef struct rp_wg rp_wg;

/* The resources of a partition (parallel.c), or of the host timeline at a
 * serial point: where messages come from, where data-check counters go,
 * where human output is buffered (NULL: quiet). */
typedef struct rp_res {
    rp_msg_pool *pool;
    rp_check *check;
    FILE *out;
} rp_res;

/* The resources of the partition the calling thread runs (parallel.c sets
 * it for a window); NULL at serial points, where the host's are used. */
extern _Thread_local const rp_res *rp_res_tls;

typedef struct rp_ctx {
    const rp_config *cfg;
    rp_clock clk;             /* GPU clock */
    rp_hooks *hooks;          /* observation points */
    void *owner;              /* the sim, opaque: rp_hook_ctx.sim and the services' first argument */
    trc_reader *rd;
    struct rp_wgload *wgload; /* loads workgroup records ahead (wgload.c; one partition, --threads >= 2), or NULL */
    const rp_res *serial;     /* the host's resources */
    uint32_t n_parts;         /* partitions of the run (set when they are made) */
    bool gpu_cut;             /* sim.gpu_partitions > 1: a GPU's CUs and its dispatcher are in different partitions */
    const int *failed;        /* non-zero once the run failed (the message is the sim's) */
    /* device address of each code object's loaded image (trace 1.1: recorded;
     * 1.0: the k-th code allocation), built before the run */
    const uint64_t *co_base;
    size_t n_co_base;
    /* services */
    void (*fail)(void *owner, const char *msg);                    /* stop the run with a one-line message */
    void (*perform)(void *owner, rp_access *a, uint64_t lane_mask); /* an LDS access's data (perform.c) */
    /* into addr's L2 bank of GPU gpu, from a sender of shader-array group grp (UINT32_MAX: the memory side) */
    rp_link *(*route_l2)(void *owner, uint32_t gpu, uint32_t grp, uint64_t addr, rp_port **dst);
    uint32_t (*gpu_of)(void *owner, uint64_t addr, uint32_t accessing_gpu);        /* the GPU that owns addr */
    void (*kernel_note)(void *owner, rp_kernel *k, int end);       /* a kernel started (0) or ended (1) */
    uint64_t (*flush_l2)(void *owner, uint32_t gpu);               /* functional L2 write-back (sampling) */
    int (*sample_kernel_start)(void *owner, rp_kernel *k);         /* sample.c */
    void (*sample_kernel_end)(void *owner, rp_kernel *k);
    int (*sample_wg_done)(void *owner, rp_kernel *k, rp_time now);
    int (*sample_hold)(void *owner, rp_kernel *k); /* its workgroups done, its predicted time begins */
    /* wave w is at walk.dyn >= w->smp_next, to issue at t: 0 go on, 1 sleep
     * until *resume (it skipped ahead), -1 the walk failed (rp_walk_error
     * reported it); and w ended at t */
    int (*sample_wave)(void *owner, rp_wave *w, rp_engine *e, rp_time t, rp_time *resume);
    void (*sample_wave_end)(void *owner, rp_wave *w, rp_time t);
    /* at the dispatcher (its partition): workgroup wg of k ended (WG_DONE, before it is
     * freed), and an RP_MSG_FF_APPLY batch arrived (applied and freed) */
    void (*sample_wg_end)(void *owner, rp_kernel *k, const rp_wg *wg);
    int (*sample_apply)(void *owner, void *batch);
    /* address translation (rp_tlb.h): log2 of the page size of addr (0: addr
     * needs no translation, as if always in the TLBs), and whether GPU gpu's
     * walk of it also needs the IOMMU (host memory; a peer GPU's memory in
     * D-MGPU) */
    void (*page_of)(void *owner, uint64_t addr, uint32_t gpu, uint8_t *shift, bool *iommu);
    /* The walker of GPU gpu has translated page at `now` (the leaf entry
     * read, the IOMMU's part done) for a writable (write) or any translation:
     * unified memory (rp_um.h) may make it wait for a fault and a page move
     * or copy. Returns when the translation is usable (>= now); *ro: it is
     * read-only; *retry: the page was being serviced, call again at the
     * returned time. NULL: never waits, never read-only. */
    rp_time (*um_walk)(void *owner, uint64_t page, uint32_t gpu, bool write, bool *ro, bool *retry, rp_time now);
} rp_ctx;

static inline rp_msg_pool *rp_ctx_pool(const rp_ctx *x) { return (rp_res_tls ? rp_res_tls : x->serial)->pool; }
static inline rp_check *rp_ctx_chk(const rp_ctx *x) { return (rp_res_tls ? rp_res_tls : x->serial)->check; }
static inline FILE *rp_ctx_out(const rp_ctx *x) { return (rp_res_tls ? rp_res_tls : x->serial)->out; }
static inline uint64_t rp_ctx_code_base(const rp_ctx *x, uint32_t co)
{
    return co < x->n_co_base ? x->co_base[co] : 0;
}
/* Stop the run with a printf-formatted one-line message (x->fail). */
void rp_ctx_fail(const rp_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
