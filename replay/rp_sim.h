/*
 * rp_sim.h - the replay timing model: components (caches, DRAM controllers,
 * RDMA engines, CUs, dispatchers, host) and the top-level replay of a trace.
 *
 * Component structs are "immutable spec + plain state + ports" (STYLE.md
 * #10); they are laid out here so that tests can drive one component between
 * mock ports. Components talk only through rp_link/rp_port (rp_engine.h).
 *
 * Memory protocol: requests are one cache line each (RP_MSG_READ/WRITE/
 * ATOMIC), carry the link and port their response goes to, and an rp_access
 * (the memory instruction in flight) plus a mask of the access's active-lane
 * ordinals served by this line. Functional effects happen where an access is
 * "performed": loads and stores at the L1 (vector or scalar) when it processes
 * the line, in per-CU order; atomics at the L2 bank that owns the line (the
 * point of coherence); LDS operations in the CU's LDS unit.
 */
#ifndef RP_SIM_H
#define RP_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rp_config.h"
#include "rp_engine.h"
#include "rp_fmem.h"

#include "emu/isa/gcn_isa.h"
#include "traceformat/trc.h"

typedef struct rp_sim rp_sim;
typedef struct rp_cu rp_cu;
typedef struct rp_wave rp_wave;
typedef struct rp_wg rp_wg;
typedef struct rp_kernel rp_kernel;

/* ---- caches ------------------------------------------------------------------ */

typedef struct rp_cache rp_cache;
/* Where a line goes below this cache: the link and (shared links) the port. */
typedef rp_link *(*rp_route_fn)(void *ctx, uint64_t line_addr, rp_port **dst);

typedef struct rp_cache_spec {
    uint64_t size;          /* bytes */
    uint32_t assoc, line;   /* ways, bytes */
    uint32_t mshrs;
    rp_time latency_ps;     /* hit latency */
    rp_clock clk;           /* pipeline: one message per cycle */
    bool write_back;        /* true: write-back + write-allocate (L2); false: write-through, no-write-allocate (L1) */
    bool perform_rw;        /* loads/stores are performed here (L1 levels) */
    bool perform_atomic;    /* atomics are performed here (L2, point of coherence) */
} rp_cache_spec;

typedef struct rp_mshr {
    uint64_t line;
    rp_msg *waiters; /* requests waiting for the fill, in arrival order */
    rp_msg *wtail;
    bool busy;
} rp_mshr;

struct rp_cache {
    rp_component comp;
    rp_engine *eng;
    rp_sim *sim;             /* for perform callbacks; NULL in unit tests */
    rp_msg_pool *pool;
    rp_cache_spec spec;
    uint32_t sets, line_shift;
    uint64_t *tag;           /* sets*assoc: line address + 1, 0 = invalid */
    uint64_t *age;           /* LRU stamps */
    uint8_t *dirty;
    uint64_t stamp;
    rp_mshr *mshr;
    uint32_t mshr_used;
    bool stalled;            /* input blocked on a full MSHR file */
    rp_event ev;
    rp_time next_free;       /* pipeline free at */
    rp_port top, bottom;
    rp_link fill_link;       /* into `bottom`: what lower levels reply on */
    rp_route_fn route;
    void *route_ctx;
    rp_msg *flush_req;       /* pending FLUSH request */
    uint64_t flush_pending;  /* write-backs not yet acknowledged */
    /* statistics */
    uint64_t st_read_hits, st_read_misses, st_mshr_merges, st_write_hits, st_write_misses;
    uint64_t st_atomics, st_writebacks, st_mshr_stalls;
};

/* Build a cache (arrays allocated here). Returns 0 or -1 (out of memory). */
int rp_cache_init(rp_cache *c, rp_engine *e, rp_msg_pool *pool, rp_sim *sim, const char *name,
                  const rp_cache_spec *spec, rp_route_fn route, void *route_ctx,
                  rp_time fill_latency_ps, uint64_t fill_bytes_per_s, uint32_t header_bytes);
void rp_cache_fini(rp_cache *c);
void rp_cache_register_stats(rp_cache *c, rp_stats *s);

/* ---- DRAM controller ------------------------------------------------------------ */

typedef struct rp_dram {
    rp_component comp;
    rp_engine *eng;
    rp_port top;
    rp_link in;             /* into top */
    rp_time latency_ps;
    uint64_t bytes_per_s;
    rp_time busy_until;
    uint32_t line;
    uint64_t st_reads, st_writes, st_read_bytes, st_write_bytes;
} rp_dram;

void rp_dram_init(rp_dram *d, rp_engine *e, const char *name, rp_time latency_ps, uint64_t bytes_per_s,
                  uint32_t line);

/* ---- RDMA engine (inter-GPU accesses) --------------------------------------------- */

typedef struct rp_rdma {
    rp_component comp;
    rp_sim *sim;
    uint32_t gpu;
    rp_port inside;         /* requests from local L1s for remote memory */
    rp_port outside;        /* requests from other GPUs, and responses to ours */
    rp_port l2resp;         /* local L2 responses to remote requests */
    rp_link in_link;        /* into inside */
    rp_link l2resp_link;    /* into l2resp */
    uint64_t st_out_reqs, st_in_reqs, st_out_bytes, st_in_bytes;
} rp_rdma;

/* ---- compute unit --------------------------------------------------------------- */

enum rp_acc_kind { RP_ACC_VMEM = 0, RP_ACC_SMEM, RP_ACC_LDS };

/* One memory instruction of a wavefront in flight. */
typedef struct rp_access {
    struct rp_access *next;   /* free list / LDS completion FIFO */
    rp_wave *w;
    const gcn_insn *in;
    const trc_mem_op *op;
    uint32_t lines_pending;
    uint8_t kind;             /* rp_acc_kind */
    uint8_t counts_vm;        /* 1: vmcnt, 0: lgkmcnt */
    uint8_t atomic_op;        /* gcn_atomic_op */
    uint8_t atomic_bytes;
    uint8_t ds2;              /* LDS read2/write2: two elements per lane (ds2_esz bytes each) */
    uint8_t ds2_esz;
    int32_t ds2_delta;        /* byte distance of element 1 from element 0 (recorded address) */
    rp_time done;             /* LDS completion time */
} rp_access;

enum rp_wave_state { RP_W_RUN = 0, RP_W_WAITCNT, RP_W_BARRIER, RP_W_ENDING, RP_W_DONE };

struct rp_wave {
    rp_event ev;
    rp_cu *cu;
    rp_wg *wg;
    const trc_wave *tw;
    const gcn_program *prog;
    uint32_t simd;
    uint32_t idx;             /* index into prog->insn of the next instruction */
    uint64_t dyn;             /* dynamic instructions executed */
    uint32_t br_i, ind_i, exec_i, mem_i;
    uint64_t exec;
    uint32_t vmcnt, lgkmcnt;
    uint16_t wait_vm, wait_lgkm;
    uint8_t state;
};

struct rp_wg {
    rp_wg *next;
    rp_kernel *k;
    rp_cu *cu;
    uint32_t index;           /* commit-order index in the trace */
    trc_wg *tw;
    rp_wave *waves;
    uint32_t n_waves, n_live, n_bar;
    uint8_t simd_of[64];      /* SIMD of each wave (dispatcher's choice) */
    uint8_t *lds;             /* functional LDS image, group_segment_size bytes */
    uint32_t lds_size;
};

struct rp_cu {
    rp_component comp;
    rp_sim *sim;
    uint32_t gpu, id, sa;     /* GPU index, CU index within the GPU, shader array */
    char name[40];
    rp_port resp;             /* responses from L1V/L1S */
    rp_port ctl;              /* WG assignments */
    rp_link resp_link, ctl_link;
    rp_link l1v_link;         /* CU -> own L1V (TA path) */
    rp_link *l1s_link;        /* CU -> its shader array's L1S (shared) */
    rp_cache l1v;
    rp_time simd_busy[16];
    rp_time vmem_busy, smem_busy, lds_busy;
    rp_access *acc_free;
    rp_access *lds_head, *lds_tail; /* LDS completions in time order */
    rp_event lds_ev;
    uint32_t last_kernel;     /* kernel id of the last WG: L1V invalidated on change */
    uint32_t live_wgs;
    /* statistics */
    uint64_t st_instr, st_valu, st_salu, st_vmem, st_smem, st_lds, st_branch, st_wgs;
    uint64_t st_lds_conflict_cycles, st_vmem_lines;
};

/* ---- dispatcher (command processor + ACE) -------------------------------------------- */

typedef struct rp_cu_res {    /* dispatcher's view of a CU's free resources */
    uint32_t slots[16], vgprs[16], sgprs[16];
    uint64_t lds;
} rp_cu_res;

typedef struct rp_disp {
    rp_component comp;
    rp_sim *sim;
    uint32_t gpu;
    rp_event ev;
    rp_port in;               /* WG_DONE from CUs, FLUSH_ACK from L2 banks */
    rp_link in_link;
    rp_cu **cus;
    rp_cu_res *res;
    uint32_t n_cus, rr;
    rp_kernel *queue, *queue_tail, *cur;
    uint32_t next_wg, wgs_done, flush_acks_pending;
    uint8_t flushing;
    rp_time busy_until;
    uint64_t st_wgs_dispatched, st_kernels;
} rp_disp;

/* ---- GPU, kernel, sim ------------------------------------------------------------------ */

typedef struct rp_gpu {
    rp_sim *sim;
    uint32_t id;
    rp_cu *cus;
    uint32_t n_cus;
    rp_cache *l1s;            /* one per shader array */
    rp_link *l1s_links;
    rp_cache *l2;             /* banks */
    rp_link *l2_links;        /* into each bank's top */
    rp_dram *dram;
    rp_rdma rdma;
    rp_disp disp;
} rp_gpu;

typedef struct rp_ksum {      /* per-kernel summary counters */
    uint64_t l1v_hits, l1v_accesses, l2_hits, l2_accesses, dram_bytes, link_bytes;
} rp_ksum;

struct rp_kernel {
    rp_kernel *next;          /* dispatcher queue */
    trc_launch launch;
    uint32_t n_wg;
    uint64_t n_instr_traced;
    const gcn_program *prog;
    uint32_t entry_idx;
    uint32_t gpu;             /* GPU whose dispatcher runs it */
    uint32_t gpu_first, gpu_count; /* GPUs whose CUs it may use */
    rp_time start, end;
    uint64_t n_instr;         /* wavefront instructions replayed */
    uint64_t mismatches, atomic_mismatches, walk_errors;
    rp_ksum sum0, sum1;
    uint64_t *snap0;          /* counters at start; at end replaced by deltas */
    bool done;
};

typedef struct rp_alloc {     /* a device allocation from an ALLOC event (D-MGPU placement) */
    uint64_t addr, size;
    uint32_t gpu;
} rp_alloc;

/* Counters of the data check. */
typedef struct rp_check {
    uint64_t loads_checked, load_mismatches;
    uint64_t atomics_checked, atomic_mismatches;
    uint64_t lds_checked, lds_mismatches, lds_unchecked;
    uint64_t d2h_checked, d2h_mismatches;
    uint64_t walk_errors;     /* trace/program inconsistencies */
    uint64_t printed;
    uint64_t atomic_printed;
} rp_check;

struct rp_sim {
    rp_config cfg;
    rp_engine eng;
    rp_msg_pool pool;
    rp_stats stats;
    rp_fmem *mem;
    trc_reader *rd;
    rp_clock clk;             /* GPU clock */
    rp_gpu *gpus;
    uint32_t n_gpus;
    rp_link pcie;             /* inter-GPU bus, shared by all GPUs */
    /* host timeline */
    rp_event host_ev;
    size_t next_event, n_events;
    bool host_done;
    /* code objects */
    gcn_program **progs;
    size_t n_progs;
    /* kernels */
    rp_kernel **kernels;
    size_t n_kernels, cap_kernels;
    /* D-MGPU placement */
    rp_alloc *allocs;
    size_t n_allocs, cap_allocs;
    rp_check check;
    uint8_t *op_class;        /* per opcode (65536): RP_OPC_* bits, computed on first use */
    FILE *out;                /* human output (mismatch lines); NULL = quiet */
    bool quiet;
    int failed;               /* a fatal error happened (message in err) */
    char err[512];
};

/* Build the machine described by cfg for the trace rd (not owned). Returns 0
 * or -1 with a message in s->err. */
int rp_sim_init(rp_sim *s, const rp_config *cfg, trc_reader *rd, FILE *out);
/* Replay the whole host timeline. 0 on success (even with data mismatches;
 * see s->check), -1 on a fatal error (message in s->err). */
int rp_sim_run(rp_sim *s);
void rp_sim_fini(rp_sim *s);
/* Print the per-kernel summary table. */
void rp_sim_report(rp_sim *s, FILE *f);
/* Write the stats JSON. 0 or -1. */
int rp_sim_write_json(rp_sim *s, const char *path, const char *trace_path);

/* Internal entry points shared by the component files. */
void rp_perform(rp_sim *s, rp_access *a, uint64_t lane_mask);
uint32_t rp_gpu_of(rp_sim *s, uint64_t addr, uint32_t accessing_gpu);
rp_link *rp_route_l1(void *ctx, uint64_t line, rp_port **dst);
rp_link *rp_route_l2(void *ctx, uint64_t line, rp_port **dst);
/* Link (and port) into the L2 bank of GPU gpu that holds addr. */
rp_link *rp_route_l2_bank(rp_sim *s, uint32_t gpu, uint64_t addr, rp_port **dst);
void rp_cu_init(rp_cu *cu, rp_sim *s, uint32_t gpu, uint32_t id);
void rp_disp_init(rp_disp *d, rp_sim *s, uint32_t gpu);
void rp_disp_kick(rp_disp *d);
void rp_rdma_init(rp_rdma *r, rp_sim *s, uint32_t gpu);
/* Host timeline event handler (host.c): owner is the rp_sim. */
void rp_host_run(rp_event *hev, rp_engine *e);
void rp_host_kernel_done(rp_sim *s, rp_kernel *k);
/* Functional effect of a host COPY/MEMSET event on the modelled memory plus
 * the D2H data check (perform.c). 0, or -1 out of memory. */
int rp_host_apply(rp_sim *s, const trc_event *ev);
void rp_sim_fail(rp_sim *s, const char *fmt, ...);
void rp_ksum_take(rp_sim *s, const rp_kernel *k, rp_ksum *out);

#endif
