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
 * ordinals served by this line. Data lives in the hierarchy (cache.c): every
 * cache line holds its bytes and DRAM's contents are the sim's rp_fmem. Loads
 * are performed (and checked against the trace) at the L1 (vector or scalar)
 * on its copy - at a hit, or when the fill arrives; fills from the L2 carry a
 * snapshot of the line (rp_msg.data). Stores update each level's copy on
 * their way down (the access's lanes and data travel with the message); the
 * L2 is write-back and its dirty lines reach DRAM on eviction and at the
 * kernel-end FLUSH; atomics are performed at the L2 bank that owns the line
 * (the point of coherence); LDS operations in the CU's LDS unit (rp_perform).
 */
#ifndef RP_SIM_H
#define RP_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rp_config.h"
#include "rp_engine.h"
#include "rp_fmem.h"

#include "gcn/gcn_isa.h"
#include "gcn/gcn_walk.h"
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
    /* Address bits that select this cache among its peers (the L2 bank, and in
     * U-MGPU the GPU) are constant within it and are removed before the set
     * index is taken, larger stride first: addr -> addr / (stride * n) *
     * stride + addr % stride. n = 0: unused. Without this a bank would use
     * only sets / banks of its sets. */
    uint64_t strip_stride[2];
    uint32_t strip_n[2];
} rp_cache_spec;

typedef struct rp_mshr {
    uint64_t line;
    rp_msg *waiters; /* requests waiting for the fill, in arrival order (L1: also store records) */
    rp_msg *wtail;
    bool busy;
    bool noinstall;  /* serve the waiters, do not install: an atomic passed this L1 while the fill was
                      * pending, or the cache allocates nothing (no_allocate) */
} rp_mshr;

/* Free list of line buffers (cache.c): the data a fill response carries
 * (rp_msg.data), and the L1's snapshots of stores that meet a pending fill.
 * A buffer holds `line` data bytes then line/8 bytes of byte mask. Buffers
 * are malloc'd one by one, so any pool may take back any buffer. */
typedef struct rp_lbufs {
    void *free;
    uint32_t line;           /* data bytes per buffer (0 until first use) */
    uint64_t live;           /* handed out, not yet returned */
} rp_lbufs;
uint8_t *rp_lbuf_get(rp_lbufs *p, uint32_t line); /* NULL only when out of memory */
void rp_lbuf_put(rp_lbufs *p, uint8_t *b);          /* accepts NULL */
void rp_lbufs_fini(rp_lbufs *p);

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
    /* data (cache.c): sets*assoc lines of spec.line bytes; an L2 line is
     * always complete (a write-allocated line takes the bytes it does not
     * write from DRAM = rp_fmem), so one dirty bit per line suffices */
    uint8_t *data;
    rp_lbufs own_lbufs, *lbufs; /* lbufs: the sim's shared pool, or own_lbufs without a sim */
    const void *kernel;      /* L1: kernel of the last request; a new kernel invalidates (kernel-start invalidate) */
    bool skip_flush;         /* test hook debug.skip_l2_flush: FLUSH and rp_mem_flush_l2 write nothing back */
    bool no_allocate;        /* l1v.bypass: read fills serve their MSHR's waiters but are not installed,
                              * so nothing is kept between accesses (MGSim Sec. VII-A) */
    rp_time mshr_t;          /* time of the last change of mshr_used */
    /* MSHR lookup without scanning (cache.c): busy MSHRs per hash of their
     * line and, where exactly one, its index; free MSHR indices as a stack */
    uint16_t mshr_hcnt[256], mshr_hidx[256];
    uint32_t *mshr_free, mshr_nfree;
    /* statistics */
    uint64_t st_read_hits, st_read_misses, st_mshr_merges, st_write_hits, st_write_misses;
    uint64_t st_atomics, st_writebacks, st_mshr_stalls;
    uint64_t st_mshr_allocs, st_mshr_busy_ps, st_mshr_peak, st_fill_peeks, st_invalidations;
};

/* Build a cache (arrays allocated here). Returns 0 or -1 (out of memory). */
int rp_cache_init(rp_cache *c, rp_engine *e, rp_msg_pool *pool, rp_sim *sim, const char *name,
                  const rp_cache_spec *spec, rp_route_fn route, void *route_ctx,
                  rp_time fill_latency_ps, uint64_t fill_bytes_per_s, uint32_t header_bytes);
void rp_cache_fini(rp_cache *c);
void rp_cache_register_stats(rp_cache *c, rp_stats *s);
/* Data of line (line-aligned address) if this cache holds it, else NULL. */
uint8_t *rp_cache_line_data(rp_cache *c, uint64_t line);
/* Functional write-back (zero simulated time) of the dirty lines of c that
 * overlap [addr, addr + n) (n = UINT64_MAX: all) into the sim's rp_fmem;
 * they become clean. Honours skip_flush. Returns the lines written back. */
uint64_t rp_cache_writeback(rp_cache *c, uint64_t addr, uint64_t n);

/* ---- DRAM controller ------------------------------------------------------------ */

/* One DRAM channel (dram.c): banks with open rows, a request queue scheduled
 * FR-FCFS, per-bank command timing, the channel's data bus and refresh.
 * Timing only: the functional data lives in rp_fmem. All times in ps. */
#define RP_DRAM_MAX_BANKS 64

typedef struct rp_dram_spec {
    rp_clock clk;             /* command clock (R9 Nano HBM1: 500 MHz) */
    uint32_t line;            /* bytes per request (one cache line) */
    uint64_t bytes_per_s;     /* data bus of the channel; 0 = infinite */
    rp_time latency_ps;       /* controller + PHY fixed latency added to every response */
    uint32_t banks;           /* 1..RP_DRAM_MAX_BANKS */
    uint32_t queue_depth;     /* requests visible to the scheduler; more wait in the port */
    uint64_t row_size;        /* bytes per row (page) */
    uint64_t bank_interleave; /* consecutive blocks of this many bytes go to consecutive banks */
    uint64_t chan_interleave; /* channel-bit stripping: local = addr/(il*stride)*il + addr%il */
    uint64_t chan_stride;     /* channels sharing the interleave (1 = address is already local) */
    bool closed_page;         /* auto-precharge after every access */
    rp_time tCL, tCWL, tRCD, tRP, tRAS, tCCD, tRRD, tFAW, tWR, tRTP;
    rp_time tREFI, tRFC;      /* tREFI 0 = no refresh */
    rp_time refresh_phase;    /* refresh k (k >= 1) starts at phase + k * tREFI */
} rp_dram_spec;

typedef struct rp_dram_bank {
    uint64_t open_row;        /* row + 1; 0 = precharged */
    rp_time act_ok, col_ok, pre_ok; /* earliest ACT, RD/WR and PRE */
} rp_dram_bank;

typedef struct rp_dram {
    rp_component comp;
    rp_engine *eng;
    rp_port top;
    rp_link in;             /* into top */
    rp_dram_spec spec;
    rp_time burst_ps;       /* data-bus time of one line */
    rp_dram_bank bank[RP_DRAM_MAX_BANKS];
    rp_msg *q_head, *q_tail; /* scheduler queue, arrival order */
    uint32_t qn;
    rp_msg *d_head, *d_tail; /* scheduled, in completion order (m->arrive = response time) */
    uint32_t dn;
    rp_event ev, done_ev;
    rp_time next_pick, row_next, col_next, act_next, data_free;
    rp_time faw[4];         /* last four ACTs' time + tFAW (0 = none): the next ACT waits for the oldest */
    uint32_t faw_i;
    uint64_t refreshes_seen;
    /* statistics */
    uint64_t st_reads, st_writes, st_read_bytes, st_write_bytes, st_bytes;
    uint64_t st_row_hits, st_row_misses, st_row_conflicts, st_refreshes;
    uint64_t st_busy_cycles, st_queue_ps, st_access_ps;
} rp_dram;

/* Build a channel from spec (spec->banks <= RP_DRAM_MAX_BANKS, queue_depth >= 1).
 * Returns 0, or -1 when the spec is out of range. No allocation: nothing to free. */
int rp_dram_init_spec(rp_dram *d, rp_engine *e, const char *name, const rp_dram_spec *spec);
/* Fixed-latency channel without bank timing (one bank, no refresh): each
 * request is serialised at bytes_per_s (0 = infinite) and answered latency_ps
 * after its transfer. For component tests of the levels above. */
void rp_dram_init(rp_dram *d, rp_engine *e, const char *name, rp_time latency_ps, uint64_t bytes_per_s,
                  uint32_t line);
void rp_dram_register_stats(rp_dram *d, rp_stats *s);
/* The spec of channel ch from the dram.* parameters; gpu_clk converts
 * dram.latency and dram.bandwidth given per GPU cycle; chan_stride = channels
 * sharing the dram.interleave striping (channels x GPUs in U-MGPU). Refresh
 * phases are staggered across channels: phase = ch * tREFI / dram.channels. */
void rp_dram_spec_from_config(rp_dram_spec *sp, const rp_config *c, rp_clock gpu_clk, uint32_t ch,
                              uint64_t chan_stride);
/* Bank and row of a (global) address under spec. */
void rp_dram_map(const rp_dram_spec *spec, uint64_t addr, uint32_t *bank, uint64_t *row);

/* ---- RDMA engine (inter-GPU accesses) --------------------------------------------- */

typedef struct rp_rdma {
    rp_component comp;
    rp_sim *sim;
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
 * PCIe switch in its first GPU's, the root complex and the bus arbiter in
 * partition 0): links deliver on their destination node's engine and cross
 * partitions where their ends differ. 0 or -1. */
int rp_net_partition(rp_sim *s);
/* Refresh the network's injected totals ("link.messages"/"link.bytes")
 * from the per-node counters; at synchronisation points. */
void rp_net_sum(rp_net *n);

/* Timing state of the host timeline (host.c). */
typedef struct rp_host_tl {
    rp_time wait_until;       /* the current event's operation (or launch call) ends at */
    uint8_t phase;            /* 0: current event not started; 1: started, waiting for wait_until */
    rp_time gpu_busy_until[64]; /* per GPU: end of its latest copy/memset (asynchronous ones included) */
    uint64_t st_copies, st_copy_bytes, st_copy_ps, st_launches, st_memsets;
} rp_host_tl;

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
    uint64_t xmask;           /* perform.c: active-lane ordinals whose bytes cross a line boundary */
    uint8_t xmask_done;       /* xmask computed (accesses are zeroed when taken from the free list) */
} rp_access;

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
    rp_sim *sim;
    rp_engine *eng;
    uint32_t gpu;
    uint32_t sets, assoc, line_shift, mshrs, mshr_used;
    uint64_t *tag, *age, stamp;   /* tag: line address + 1, 0 = invalid; LRU stamps */
    rp_l1i_mshr *mshr;
    rp_fetch *stall_head, *stall_tail; /* misses waiting for a free MSHR */
    rp_time next_free;        /* lookup pipeline: one fetch per cycle */
    rp_time latency_ps;
    rp_port bottom;           /* fills from the L2 */
    rp_link fill_link;
    uint64_t st_hits, st_misses, st_merges, st_mshr_stalls;
} rp_l1i;

enum rp_wave_state { RP_W_RUN = 0, RP_W_WAITCNT, RP_W_BARRIER, RP_W_ENDING, RP_W_DONE, RP_W_FETCH };

struct rp_wave {
    rp_event ev;
    rp_cu *cu;
    rp_wg *wg;
    uint32_t simd;
    uint32_t vmcnt, lgkmcnt;
    uint16_t wait_vm, wait_lgkm;
    uint8_t state;
    /* instruction buffer (cu.c): chunks [ib_base, ib_base + ib_n * fetch_bytes)
     * of the code are buffered; `fetch` is the one fetch in flight */
    uint64_t code_base;       /* device address of the code object's image (pc + code_base = fetch address) */
    uint64_t ib_base;
    uint32_t ib_n;
    rp_fetch *fetch;
    uint64_t redirect_pc;     /* after a taken branch out of the buffer: chunk to fetch once `fetch` lands */
    uint8_t redirect;
    rp_time parked;           /* RP_W_FETCH since */
    gcn_walk walk;            /* position in the code and the wave's record (gcn/gcn_walk.h) */
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
    rp_engine *eng;           /* its GPU's partition engine */
    rp_link *done_link;       /* WG_DONE to the dispatcher that drives it */
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
    rp_time salu_busy, branch_busy, fetch_busy; /* issue arbiter: one per unit type per cycle */
    rp_l1i *l1i;              /* its shader array's instruction cache */
    rp_fetch *fetch_free;
    rp_fetch *fetch_head;     /* fetches landing, in time order */
    rp_event fetch_ev;
    uint64_t st_fetches, st_fetch_stall_cycles;
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
    uint32_t n_cus, rr;
    rp_kernel *queue, *queue_tail, *cur;
    uint32_t next_wg, wgs_done, flush_acks_pending;
    uint8_t flushing;
    rp_time busy_until;
    uint64_t st_wgs_dispatched, st_kernels;
} rp_disp;

/* ---- GPU, kernel, sim ------------------------------------------------------------------ */

typedef struct rp_part rp_part;

typedef struct rp_gpu {
    rp_sim *sim;
    uint32_t id;
    rp_part *part;            /* partition it is simulated in (parallel.c) */
    rp_cu *cus;
    uint32_t n_cus;
    rp_cache *l1s;            /* one per shader array */
    rp_link *l1s_links;
    rp_l1i *l1i;              /* one per shader array (cu.c) */
    uint64_t *co_base;        /* per code object: device address of its loaded image (cu.c, lazily) */
    size_t n_co_base;
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

/* A kernel's start or end, noted by the dispatcher for the next
 * synchronisation point (parallel.c): per-kernel counters of other
 * partitions are sampled there, and the host learns of the end. */
typedef struct rp_knote {
    rp_kernel *k;
    uint8_t end;
} rp_knote;

/*
 * A partition of the machine (parallel.c): the components of one GPU with
 * their own event engine, message pool, line buffers, data-check counters
 * and buffered human output. Partitions exchange messages only over links
 * with at least the lookahead latency (rp_xq), so one synchronisation
 * window of that length runs them independently, on any thread. The host
 * timeline is not a partition: it runs between windows, on the sim's own
 * engine and resources.
 */
struct rp_part {
    rp_engine eng;
    rp_msg_pool pool;
    rp_lbufs lbufs;
    rp_check check;
    FILE *out;                /* open_memstream over obuf; NULL when the sim is quiet */
    char *obuf;
    size_t olen;
    rp_knote *notes;          /* kernel starts/ends since the last synchronisation point */
    size_t n_notes, cap_notes;
    rp_xq *xq;                /* [n_parts]: queues of messages towards each partition */
    rp_time next;             /* earliest pending event after its last window */
    uint32_t id;
    char pad[64];             /* keep partitions' hot fields on separate cache lines */
};

/* The partition the calling thread is running (NULL: the host / serial
 * parts, which use the sim's own engine, pool, line buffers and counters). */
extern _Thread_local rp_part *rp_part_tls;
static inline rp_msg_pool *rp_pool(rp_sim *s);
static inline rp_check *rp_chk(rp_sim *s);
static inline rp_lbufs *rp_lb(rp_sim *s);
static inline FILE *rp_out(rp_sim *s);

struct rp_sim {
    rp_config cfg;
    rp_engine eng;            /* the host timeline's engine (and everything when not partitioned) */
    rp_msg_pool pool;
    rp_stats stats;
    rp_fmem *mem;
    trc_reader *rd;
    rp_clock clk;             /* GPU clock */
    rp_gpu *gpus;
    uint32_t n_gpus;
    rp_net *net;              /* inter-GPU network and host links (net.c) */
    /* host timeline */
    rp_host_tl host;
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
    rp_check check;           /* the host's; after rp_sim_run the total of every partition */
    rp_lbufs lbufs;           /* line buffers carried by fill responses (cache.c) */
    /* partitions (parallel.c) */
    rp_part *parts;
    uint32_t n_parts;
    uint32_t threads;         /* worker threads for rp_sim_run (>= 1) */
    rp_time lookahead_ps;     /* synchronisation window: smallest latency of a link between partitions */
    rp_time notify_ps;        /* kernel completion seen by the host this long after the end */
    uint64_t windows;         /* synchronisation windows run */
    int fail_lock_init;
    void *fail_lock;          /* pthread_mutex_t, for rp_sim_fail from several threads */
    FILE *out;                /* human output (mismatch lines); NULL = quiet */
    bool quiet;
    int failed;               /* a fatal error happened (message in err) */
    char err[512];
};

static inline rp_msg_pool *rp_pool(rp_sim *s) { return rp_part_tls ? &rp_part_tls->pool : &s->pool; }
static inline rp_check *rp_chk(rp_sim *s) { return rp_part_tls ? &rp_part_tls->check : &s->check; }
static inline rp_lbufs *rp_lb(rp_sim *s) { return rp_part_tls ? &rp_part_tls->lbufs : &s->lbufs; }
static inline FILE *rp_out(rp_sim *s) { return rp_part_tls ? rp_part_tls->out : s->out; }

/* Build the machine described by cfg for the trace rd (not owned). Returns 0
 * or -1 with a message in s->err. */
int rp_sim_init(rp_sim *s, const rp_config *cfg, trc_reader *rd, FILE *out);
/* Replay with `threads` worker threads (>= 1; default 1). The statistics,
 * the data check and the output do not depend on it. Before rp_sim_run. */
void rp_sim_set_threads(rp_sim *s, uint32_t threads);
/* Partitions (parallel.c): one per GPU when the topology has several GPUs
 * and every link between them has a non-zero latency, else one. Assigns
 * s->gpus[*].part, engines and cross-partition links; computes the
 * lookahead. 0 or -1 (message in s->err). */
int rp_sim_partition(rp_sim *s);
void rp_parts_fini(rp_sim *s);
/* After the components are built: U-MGPU's links between GPU 0's dispatcher
 * and the other GPUs, every CU's done_link, and the links between
 * partitions (rp_net_partition). 0 or -1. */
int rp_sim_link_partitions(rp_sim *s);
/* l, initialised on the receiving partition's engine, is sent on from
 * partition `from`: make it cross partitions when `to` is another one. */
void rp_link_from(rp_sim *s, rp_link *l, const rp_part *from, const rp_part *to);
/* Note a kernel's start (end = 0) or end on the running partition (cu.c). */
void rp_kernel_note(rp_sim *s, rp_kernel *k, int end);
/* Simulated time reached (ps) and events handled, over every partition. */
rp_time rp_sim_now(const rp_sim *s);
uint64_t rp_sim_events(const rp_sim *s);
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
/* Active-lane ordinals of VMEM/SMEM access a whose bytes cross a boundary of
 * lb-byte lines; computed on the first call and kept in a->xmask (cu.c calls
 * it when the access is issued, so that caches in other partitions only
 * read it). perform.c. */
uint64_t rp_access_cross_mask(rp_access *a, uint32_t lb);
/* Perform the part of access a (VMEM/SMEM) that lies in the cache line at
 * `line` (lb bytes at data): loads compare the line's bytes with the trace
 * and report mismatches, stores write into data (and set the bits of the
 * byte mask bm when non-NULL), atomics read-modify-write data and check
 * their return values. lane_mask: the active-lane ordinals whose first byte
 * is in this line (rp_msg.lane_mask); lanes that only end in it are found
 * here. Returns true when a store wrote the whole line. perform.c. */
bool rp_perform_line(rp_sim *s, rp_access *a, uint64_t lane_mask, uint64_t line, uint8_t *data, uint32_t lb,
                     uint8_t *bm);
/* Line data as the memory hierarchy holds it at the point of coherence:
 * the owner GPU's L2 bank copy if present, else DRAM (rp_fmem). Used for
 * fills whose response carries no data (forwarders that drop rp_msg.data). */
void rp_mem_read_line(rp_sim *s, uint64_t line, uint8_t *dst, uint32_t lb);
/* Write back (functionally, zero simulated time) every dirty line of GPU
 * gpu's L2 banks into DRAM (rp_fmem); a no-op under debug.skip_l2_flush.
 * For host.c before a device-to-host copy (rp_host_apply also writes back
 * the lines a D2H/D2D source covers). Returns the lines written back. */
uint64_t rp_mem_flush_l2(rp_sim *s, uint32_t gpu);
uint32_t rp_gpu_of(rp_sim *s, uint64_t addr, uint32_t accessing_gpu);
rp_link *rp_route_l1(void *ctx, uint64_t line, rp_port **dst);
rp_link *rp_route_l2(void *ctx, uint64_t line, rp_port **dst);
/* Link (and port) into the L2 bank of GPU gpu that holds addr. */
rp_link *rp_route_l2_bank(rp_sim *s, uint32_t gpu, uint64_t addr, rp_port **dst);
void rp_cu_init(rp_cu *cu, rp_sim *s, uint32_t gpu, uint32_t id);
/* Build the L1 instruction caches of GPU g (one per shader array, after its
 * CUs) and attach each CU to its array's (cu.c). 0 or -1 (out of memory). */
int rp_gpu_frontend_init(rp_sim *s, rp_gpu *g);
/* Free what rp_gpu_frontend_init and the CUs' fetch units allocated. */
void rp_gpu_frontend_fini(rp_sim *s, rp_gpu *g);
void rp_disp_init(rp_disp *d, rp_sim *s, uint32_t gpu);
void rp_disp_kick(rp_disp *d);
void rp_rdma_init(rp_rdma *r, rp_sim *s, uint32_t gpu);
/* Host timeline event handler (host.c): owner is the rp_sim. */
void rp_host_run(rp_event *hev, rp_engine *e);
/* Kernel k has ended (at k->end); the host sees it notify_ps later. Called
 * at a synchronisation point (parallel.c). */
void rp_host_kernel_done(rp_sim *s, rp_kernel *k);
/* The replay is finished: the host timeline is done and every GPU idle. */
bool rp_host_finished(rp_sim *s);
/* Functional effect of a host COPY/MEMSET event on the modelled memory plus
 * the D2H data check (perform.c). 0, or -1 out of memory. */
int rp_host_apply(rp_sim *s, const trc_event *ev);
void rp_sim_fail(rp_sim *s, const char *fmt, ...);
/* Add to out the per-kernel summary counters of k's GPUs in partition part
 * (match) or in the other partitions (!match). */
void rp_ksum_take(rp_sim *s, const rp_kernel *k, rp_ksum *out, int32_t part, bool match);

#endif
