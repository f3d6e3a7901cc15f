/*
 * rp_sim_internal.h - the replay timing model as its files see it: the GPU,
 * kernel, partition and sim state, and the entry points the components share.
 * Each component has its own header (rp_cache.h, rp_dram.h, rp_rdma.h,
 * rp_net.h, rp_host.h, rp_cu.h, rp_fetch.h, rp_disp.h); drivers use the
 * opaque API of rp_sim.h. Private to replay/ and its tests.
 *
 * Component structs are "immutable spec + plain state + ports" (STYLE.md
 * #10); they are laid out in their headers so that tests can drive one component
 * between mock ports. Components talk only through rp_link/rp_port (rp_engine.h).
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
#ifndef RP_SIM_INTERNAL_H
#define RP_SIM_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rp_cache.h"
#include "rp_config.h"
#include "rp_ctx.h"
#include "rp_cu.h"
#include "rp_disp.h"
#include "rp_dram.h"
#include "rp_engine.h"
#include "rp_fetch.h"
#include "rp_fmem.h"
#include "rp_host.h"
#include "rp_net.h"
#include "rp_rdma.h"
#include "rp_sim.h"
#include "rp_stats.h"
#include "rp_tlb.h"
#include "rp_um.h"

#include "gcn/gcn_isa.h"
#include "traceformat/trc.h"

/* ---- GPU, kernel, sim ------------------------------------------------------------------ */

typedef struct rp_part rp_part;

typedef struct rp_gpu {
    rp_sim *sim;
    uint32_t id;
    rp_part *part;            /* partition of its memory side (L2, DRAM, RDMA, dispatcher; parallel.c) */
    rp_part *dram_part;       /* partition of its DRAM channels (sim.dram_partition; == part without) */
    rp_part **bank_part;      /* per L2 bank: its partition (sim.l2_partitions; == part without) */
    uint32_t n_slices;        /* sim.l2_partitions: partitions of its L2 banks (0: on the memory side) */
    rp_part **sa_part;        /* per shader array: partition of its CUs, L1V, L1S and L1I (== part without a cut) */
    /* The cut inside the GPU (sim.gpu_partitions = n_groups + 1 > 1; parallel.c):
     * each group of shader arrays sends to an L2 bank (and to the RDMA engine)
     * over its own NoC link that has the latency (the lookahead), into the
     * bank's arbiter port, which serialises onto l2_links (the bandwidth, no
     * latency): the same arrival times as one shared link. Index n_groups:
     * the memory side's own senders (RDMA requests from other GPUs). */
    uint32_t n_groups;
    rp_link *l2_stage;        /* [(n_groups + 1) * l2_banks]; index n_groups also carries page walks and, with
                               * sim.l2_partitions, the kernel-end flush */
    rp_port *l2_arb;          /* [l2_banks] */
    rp_link *rdma_stage;      /* [n_groups] into rdma_arb */
    rp_port rdma_arb;
    rp_link *done_grp;        /* [n_groups]: WG_DONE (and grid-barrier arrivals) of each group's CUs */
    struct rp_route_grp *rgrp; /* [n_groups + 1]: the route context of group j's L1s */
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
    /* address translation (tlb.c; tlb.enable): an L1 vector TLB per CU, an L1
     * scalar/instruction TLB per shader array (their requests to the L2 TLB
     * on tlb_req[i], CUs first), the L2 TLB with the walker */
    rp_tlb *cu_tlb, *sa_tlb, l2_tlb;
    rp_link *tlb_req;
} rp_gpu;

/* Route context of the L1s of one group of shader arrays (rp_route_l1). */
typedef struct rp_route_grp {
    struct rp_gpu *g;
    uint32_t grp;             /* its group; the GPU's n_groups: the memory side (or no cut) */
} rp_route_grp;

/* The group of shader array a under sim.gpu_partitions = n_groups + 1. */
static inline uint32_t rp_sa_group(uint32_t a, uint32_t n_groups, uint32_t shader_arrays)
{
    return n_groups ? (uint32_t)((uint64_t)a * n_groups / shader_arrays) : 0;
}

typedef struct rp_ksum {      /* per-kernel summary counters */
    uint64_t l1v_hits, l1v_accesses, l2_hits, l2_accesses, dram_bytes, link_bytes;
} rp_ksum;

/* Sampled replay of one kernel (sample.c, sample.enable). */
#define RP_SAMPLE_WINDOWS 64
#define RP_SAMPLE_PERIOD_MAX 1000000u /* longest stretch, rounds (sample.period's range) */
typedef struct rp_ksample {
    rp_time lat;              /* kernel start to its first workgroup done: about one workgroup's lifetime */
    uint32_t peak;            /* most workgroups in flight seen */
    rp_time win_t0;           /* the current window's start */
    uint64_t win_done;        /* workgroups done in it */
    rp_time cum_t0;           /* the first workgroup done: the detailed rate since then (the bound's drift term) */
    uint64_t cum_i0;
    uint64_t win_i0;          /* k->n_instr at its start */
    uint64_t w_instr[RP_SAMPLE_WINDOWS], w_ps[RP_SAMPLE_WINDOWS]; /* wavefront instructions and ps of the
                               * windows so far (the last ones) */
    uint32_t n_rate;          /* windows held in w_instr/w_ps */
    uint64_t n_seen;          /* windows since the measurement began (warm-up included) */
    uint32_t merge;           /* windows per group that agreed last (0: none yet) */
    double last_dev;          /* the spread of the groups that agreed last */
    double first_mean;        /* the rate that decided its first stretch, over groups of first_merge windows */
    uint32_t first_merge;
    bool by_group;            /* its first stretch was decided by agreeing with its launches alike's rate
                               * (sample.alike_groups), not by sample.stable groups of its own */
    bool off;                 /* not sampled (awaits, grid barrier, too few workgroups): replayed in full */
    bool whole;               /* the whole launch was fast-forwarded (kernel level) */
    size_t group;             /* 1 + its index in rp_sim.sgroups (kernel level), 0: none */
    bool switched;            /* the rest was fast-forwarded */
    bool held;                /* the predicted time is running */
    uint32_t detailed_wgs, skipped_wgs;
    uint64_t skipped_instr;   /* wavefront instructions of the skipped workgroups (the trace's) */
    double rate_mean, rate_dev; /* of the windows that decided; dev: largest relative deviation */
    double prev_mean;         /* the rate that predicted the last stretch (0: none yet) */
    uint32_t defer_first, defer_n; /* the last stretch, fast-forwarded when the workgroups in flight are
                               * done (rp_sample_hold), at rate defer_mean within defer_rel */
    double defer_mean, defer_rel;
    bool tail;                /* the deferred stretch has workgroups after it (sample.tail) */
    uint32_t defer_wait;      /* with a tail (sample.tail): workgroups before the deferred stretch still
                               * in flight; it is applied when the last of them is done */
    uint64_t period_rounds;   /* length of the next stretch, in rounds (sample.period, grown by sample.period_growth) */
    uint32_t stretches;       /* stretches fast-forwarded */
    rp_time t_switch, skip_ps, bound_ps, hold_until;
    /* wave level (rp_sample_wave) */
    bool wave_off;            /* a wave of it polls (awaits): no wave skips */
    uint64_t waves_started;   /* waves that began (skips wait for all of them) */
    /* the wave level with the GPU cut into partitions (rp_sim.smp_parts): what a wave may
     * read of its kernel, written only at the serial points between windows (parallel.c
     * rp_sample_publish), so that it is the same for every --threads */
    uint8_t off_req;          /* a wave that polls began (set atomically by its partition) */
    uint8_t pub_off;          /* no wave skips: wave_off, off_req, polls, compare-and-swaps or a grid barrier */
    uint8_t pub_all_out;      /* every workgroup was handed out (stands for waves_started) */
    uint8_t pub_cas;          /* k->cas_seen at the last serial point (the workgroup level with one
                               * partition per GPU, rp_sim.smp_defer: another GPU's L2 may set it) */
    /* sample.max_bound at the wave level: one decision per kernel, for all its
     * waves (rp_sample_wave), once every workgroup is out and at least half of
     * the waves then in flight have measured; atomics, as with the GPU cut its
     * waves run on any thread (read at the serial points only) */
    uint64_t wv_started, wv_ended; /* waves begun and ended */
    uint64_t wv_rel_n, wv_rel_max; /* waves that measured their rate, and the largest of their halves'
                               * differences (a wave's rel, in millionths) */
    uint8_t wave_decided;     /* the decision is made (with the cut: at a serial point) */
    uint8_t wave_wide;        /* ... and refused the wave level: its estimated bound was too wide */
    double wave_est;          /* the estimate it compared: largest rel x the share of the kernel that skips */
    uint64_t wave_skips;      /* skips made */
    uint64_t wave_instr;      /* recorded wavefront instructions skipped */
    double wave_sleep_ps, wave_err_ps; /* their predicted time, and that times each wave's spread, summed */
    double wave_life_ps;      /* the lifetimes of its waves, summed (the bound's concurrency) */
    double wave_max_err_ps;   /* the largest of one wave's skip errors summed (the bound's last wave) */
    rp_time wave_bound_ps;    /* at its end: the wave level's share of bound_ps */
    bool after_skips;         /* at its end: other kernels' work was skipped before it ended, so it ran
                               * in a machine the skips changed (caches, DRAM, timing): its time has an
                               * error that no bound covers */
    /* why it was replayed in full (rp_sample_why_full); no effect on the replay */
    uint32_t tests;           /* workgroup level: stability tests made */
    uint32_t best_f;          /* windows per group of the closest one (0: none) */
    double best_dev;          /* its groups' spread */
    uint32_t far_from_all;    /* tests whose groups agreed, but not with every window since the warm-up */
    uint64_t wave_measured;   /* wave level: measurements that gave a rate */
    uint64_t wave_crossed;    /* measurements that crossed a barrier or an LDS access (taken again) */
    uint64_t wave_short;      /* stretches not skipped: shorter than the measurement */
    uint64_t wave_ramp;       /* waves that did not skip: their CU was emptying (sample.c ramping_down) */
    uint64_t wide;            /* skips not taken: their bound exceeded sample.max_bound (a launch
                               * whole, a stretch, or the wave level for all the kernel's waves) */
    double rel_acc;           /* workgroup level: the stretches' bounds so far, as a share of the kernel */
    double wide_rel;          /* the narrowest of those bounds, relative (0: none) */
    double group_dev;         /* kernel level: the spread of the launches alike before it, when they
                               * were enough to decide but disagreed (else 0) */
    uint32_t alike_n;         /* kernel level, whole: the launches alike that decided */
    double start_rel;         /* kernel level, whole: the bound's share for the L2's state at its start (0: none) */
    bool by_vectors;          /* kernel level, whole: its group holds launches with other arguments, alike by
                               * their vectors (sample.alike_vectors) */
    bool loose_check;         /* kernel level: replayed in detail as a check of such a group */
} rp_ksample;

struct rp_kernel {
    rp_kernel *next;          /* dispatcher queue, then its list of started kernels */
    uint32_t stream;          /* the launch's stream (0: the null stream) */
    size_t ev_index;          /* its launch event's index in the trace */
    bool nonblocking;         /* its stream is hipStreamNonBlocking (trace 1.3): not ordered with the null stream */
    /* dispatch state (disp.c): workgroups handed out and done, the end flush */
    uint32_t next_wg, wgs_done, flush_acks_pending;
    uint8_t flushing;
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
    uint64_t spin_iterations; /* wait iterations polled (awaits, trace 1.2: the model's waiting) */
    uint64_t wg_instr_done, wg_spins_done; /* the same two summed over the workgroups whose WG_DONE the
                               * dispatcher handled (rp_sample_wg_end, in a partitioned sampled replay only):
                               * what its partition knows at that time */
    uint64_t wait_ps;         /* time its waves spent in awaits (polling), summed over waves */
    uint8_t cas_seen;         /* a compare-and-swap was performed (perform.c): its order is the recording's
                               * (cache.c), which a fast-forward cannot keep, so it is not sampled */
    /* the grid barrier of a cooperative launch (ds_gws_barrier, cu.c) */
    struct rp_wave **gws_wait;
    uint32_t gws_n, gws_cap;
    rp_ksum sum0, sum1;
    uint64_t *snap0;          /* counters at start; at end replaced by deltas */
    bool done;
    /* the data check's classes (classify.c): loads explained, its write map */
    uint64_t order_loads, adopted_loads;
    struct rp_wmap *wmap;
    bool wmap_failed;
    rp_ksample smp;
    uint64_t kernarg_hash;    /* FNV-1a of the kernarg segment (sample.c groups launches by it) */
};

/* Whether kernels a and b run in order: the same stream, or one on the null
 * stream and the other on a blocking stream (HIP's legacy default stream). */
static inline bool rp_kernels_ordered(const rp_kernel *a, const rp_kernel *b)
{
    return a->stream == b->stream || (!a->stream && !b->nonblocking) || (!b->stream && !a->nonblocking);
}

typedef struct rp_alloc {     /* a device allocation from an ALLOC event (D-MGPU placement) */
    uint64_t addr, size;
    uint32_t gpu;
    uint8_t kind;             /* trc_mem_kind (page size, IOMMU: rp_tlb.h) */
    uint8_t managed;          /* hipMallocManaged (trace 2.1): unified memory (rp_um.h) */
} rp_alloc;

/* Whether [addr, addr + n) lies inside one of the n_v allocations v (sorted
 * by address), overflow-safe: the addresses come from a trace, which may be
 * hostile. The last allocation starting at or below addr decides. */
static inline bool rp_alloc_holds(const rp_alloc *v, size_t n_v, uint64_t addr, uint64_t n)
{
    size_t lo = 0, hi = n_v;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo)
        return false;
    const rp_alloc *a = &v[lo - 1];
    return addr - a->addr <= a->size && n <= a->size - (addr - a->addr);
}

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
    /* The coordinator (parallel.c) reads some of what follows between
     * windows, for every partition: on host cache lines of their own, apart
     * from the lines the running thread writes all the time (above), and
     * grouped by who writes them, so that reading a partition that ran on
     * another core costs about one line. Read mostly: */
    _Alignas(64) FILE *out;   /* open_memstream over obuf; NULL when the sim is quiet */
    char *obuf;
    size_t olen;
    rp_knote *notes;          /* kernel starts/ends since the last synchronisation point */
    size_t n_notes, cap_notes;
    rp_res res;               /* pool, check, out: what its components use (rp_res_tls in a window) */
    rp_xq *xq;                /* [n_parts]: queues of messages towards each partition */
    uint32_t id;
    uint32_t fan_slot;        /* its input into fan-in links (rp_link_fan): 0 the memory side, 1 + i L2
                               * slice i (sim.l2_partitions); UINT32_MAX none */
    struct rp_ffpool *ffpool; /* sampled replay with rp_sim.smp_defer: its fast-forwards' state (sample.c) */
    /* Written by the thread that runs it, read (and written.n emptied) by
     * the coordinator after the window: */
    _Alignas(64) rp_xq_list written; /* of xq: those written in the current window (in first-write order) */
    rp_time next;             /* earliest pending event after its last window */
    uint64_t ev_win;          /* events it handled in its last window */
    uint64_t smp_skipped;     /* with rp_sim.smp_serial_groups: wavefront instructions it skipped since the
                               * last serial point (then added to rp_sim.smp_skipped) */
    bool lb_away;             /* lbufs.away was non-empty at the end of its last window */
    /* Written by the coordinator, read by the thread that runs it: */
    _Alignas(64) rp_xq_list incoming; /* queues towards it with messages to drain (in sending-partition order;
                                       * emptied by the coordinator after the window that drained them) */
    uint64_t load;            /* events per window, a moving average (x 64): its share when dealt to threads */
};

/* The partition the calling thread is running (NULL: the host / serial
 * parts, which use the sim's own engine, pool, line buffers and counters). */
extern _Thread_local rp_part *rp_part_tls;

/* What partition p holds, in words ("all", "GPU", "memory side", "shader
 * arrays 0-3", "DRAM channels", "interconnect hubs") into buf; returns its
 * GPU (0 when it holds every GPU, UINT32_MAX for the hubs'). parallel.c */
uint32_t rp_part_holds(const rp_sim *s, uint32_t p, char *buf, size_t n);
static inline rp_msg_pool *rp_pool(rp_sim *s);
static inline rp_check *rp_chk(rp_sim *s);
static inline rp_lbufs *rp_lb(rp_sim *s);
static inline FILE *rp_out(rp_sim *s);

struct rp_sim {
    rp_config cfg;
    /* cfg.l2_interleave and cfg.l2_banks as a shift and a mask where both
     * are powers of two (l2_bank_pow2): rp_l2_bank without divisions */
    bool l2_bank_pow2;
    uint8_t l2_bank_shift;
    uint32_t l2_bank_mask;
    rp_engine eng;            /* the host timeline's engine (and everything when not partitioned) */
    rp_msg_pool pool;
    rp_stats stats;
    struct sum_class *sumcls; /* sim.c summarize: what each of stats.v[] adds to (computed once) */
    size_t sumcls_n;
    rp_fmem *mem;
    rp_mem_ctx memx;          /* what the caches use of the sim (rp_cache.h): mem, line buffers, the data path */
    rp_ctx ctx;               /* what the CUs, fetch units, dispatchers and RDMA engines use of it (rp_ctx.h) */
    rp_res res;               /* the host's pool, check and out (rp_ctx.serial) */
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
    const gcn_target *target; /* the trace's ISA target (header isa_target) */
    gcn_program **progs;
    size_t n_progs;
    /* kernels */
    rp_kernel **kernels;
    struct rp_sgroup {        /* sampled replay, kernel level (sample.c): launches alike */
        const rp_kernel *first; /* name, grid and workgroup size of the group */
        uint32_t n_detailed, n_seen; /* ps_per_instr holds the last n_detailed of n_seen full launches */
        double ps_per_instr[8]; /* of its last launches replayed (in full or sampled at the workgroup level) */
        double rel_bound[8];  /* their own relative error bound (0 for a full replay) */
        bool off;             /* a launch of it polled: never skipped */
        double wg_rate;       /* the rate (wavefront instructions per ps) that decided the first stretch of its
                               * last launch sampled at the workgroup level (0: none), over groups of wg_merge
                               * windows: a later launch may switch on agreeing with it (sample.alike_groups) */
        uint32_t wg_merge;
        uint32_t need;        /* launches that decide it: sample.kernels, or 1 when its first launch streamed
                               * (sample.kernels_stream; group_end) */
        double start_rel;     /* need 1: the bound's share for the L2's state at a launch's start (group_end) */
        bool loose;           /* a launch of it has other arguments than its first (alike by their vectors,
                               * sample.alike_vectors): it decides on more launches, with a wider bound, and
                               * replays one in detail again every check_every launches */
        uint32_t ff_run;      /* loose: launches fast-forwarded whole since its last one in detail */
        uint32_t check_every; /* loose: the run of fast-forwarded launches after which one runs in detail */
    } *sgroups;
    size_t n_sgroups;
    struct rp_lvec **smp_lvec; /* sampled replay, kernel level: per kernel id, the vector of a launch
                                * (sample.alike_vectors; computed when first needed, sample.c) */
    size_t n_smp_lvec;
    uint64_t smp_skipped;     /* wavefront instructions skipped so far, every kernel (workgroup, kernel and wave level) */
    uint32_t smp_threads;     /* --threads of a sampled replay: the replay's thread and smp_threads - 1 helpers that
                               * decode fast-forwarded workgroups (sample.c) */
    bool smp_parts;           /* a sampled replay of one GPU cut into partitions (sim.gpu_partitions, its L2
                               * banks on the memory side): they run on --threads threads; the workgroup level
                               * decides from what the dispatcher's partition knows, the wave level from what
                               * the serial points publish (parallel.c rp_sim_partition, sample.c) */
    bool smp_defer;           /* with smp_parts: a sampled replay of a multi-GPU topology, one partition
                               * per GPU; a fast-forward applies what belongs to another partition's L2
                               * banks at the next serial point (sample.c "Partitions") */
    bool smp_serial_groups;   /* with smp_defer, a discrete topology (a dispatcher per GPU, each in its GPU's
                               * partition): the kernel level's groups change only at serial points
                               * (rp_sample_note), and each partition counts its skips in rp_part.smp_skipped
                               * until the next one */
    struct rp_ffpool *ffpool; /* those helpers, made at the first fast-forward (NULL: none) */
    size_t n_kernels, cap_kernels;
    /* unified memory (um.c): um_on when um.policy places governed memory
     * other than at home, um_moves when it moves pages (um is built then) */
    bool um_on, um_moves;
    bool lds_omitted; /* the trace holds no LDS values (header, trace 2.3: gcn3-emu --lds-values none) */
    int um_pol;               /* RP_UM_* of um.policy */
    rp_um um;
    /* D-MGPU placement */
    rp_alloc *allocs;
    size_t n_allocs, cap_allocs;
    /* the data check's classes (classify.c): memory the runtime writes while
     * kernels run (sorted), the lock under which write maps are built */
    rp_alloc *rt_ranges;
    size_t n_rt_ranges;
    pthread_mutex_t wmap_mu;
    rp_check check;           /* the host's; after rp_sim_run the total of every partition */
    rp_lbufs lbufs;           /* line buffers carried by fill responses (cache.c) */
    /* partitions (parallel.c) */
    rp_part *parts;
    uint32_t n_parts;
    rp_part *net_part;        /* the interconnect's hubs (PCIe bus arbiter and exit, root complex) when they
                               * have a partition of their own (parallel.c), else NULL (in GPU 0's) */
    uint32_t threads;         /* worker threads for rp_sim_run (>= 1) */
    rp_time lookahead_ps;     /* synchronisation window: smallest latency of a link between partitions */
    rp_time notify_ps;        /* kernel completion seen by the host this long after the end */
    rp_time dram_shift_ps;    /* sim.dram_partition: latency of the L2 <-> DRAM links each way (0: none) */
    uint64_t windows;         /* synchronisation windows run */
    uint64_t crit_events;     /* sum over windows of the most events one partition handled in it: the
                               * critical path, in events (parallel.c; the same for every --threads) */
    void (*progress_fn)(void *arg, const rp_progress *p); /* rp_sim_set_progress */
    void *progress_arg;
    double progress_every;
    int fail_lock_init;
    void *fail_lock;          /* pthread_mutex_t, for rp_sim_fail from several threads */
    rp_fan **fans;            /* fan-ins made for sim.l2_partitions (parallel.c), freed with the partitions */
    size_t n_fans;
    rp_hooks hooks;           /* observation points (rp_hooks.h); the engines point here */
    rp_timeline *timeline;    /* rp_sim_timeline (timeline.c), NULL: none */
    FILE *out;                /* human output (mismatch lines); NULL = quiet */
    bool quiet;
    int failed;               /* a fatal error happened (message in err) */
    char err[512];
};

static inline rp_msg_pool *rp_pool(rp_sim *s) { return rp_part_tls ? &rp_part_tls->pool : &s->pool; }
static inline rp_check *rp_chk(rp_sim *s) { return rp_part_tls ? &rp_part_tls->check : &s->check; }
static inline rp_lbufs *rp_lb(rp_sim *s) { return rp_part_tls ? &rp_part_tls->lbufs : &s->lbufs; }
static inline FILE *rp_out(rp_sim *s) { return rp_part_tls ? rp_part_tls->out : s->out; }

/* The data check's classes (classify.c): a difference is a timing-model bug
 * (mismatch), depends on the order of waves the model chose (order), or is in
 * memory the runtime writes while kernels run (adopted). rp_classify_load:
 * bytes [addr, addr + n) wave w loaded; rp_classify_d2h: one byte a
 * device-to-host copy read (host thread, all kernels before it done). */
typedef enum rp_diff_class { RP_DIFF_MISMATCH = 0, RP_DIFF_ORDER, RP_DIFF_ADOPTED } rp_diff_class;
int rp_classify_init(rp_sim *s);
void rp_classify_fini(rp_sim *s);
rp_diff_class rp_classify_load(rp_sim *s, const rp_wave *w, uint64_t addr, uint32_t n);
rp_diff_class rp_classify_d2h(rp_sim *s, uint64_t addr);
/* The grid barrier (cu.c): wave w of kernel k arrived; 1 when one per
 * workgroup has (the caller releases k->gws_wait[0..gws_n) and clears
 * gws_n), 0 when more must come, -1 after rp_sim_fail (out of memory). */
int rp_gws_add(const rp_ctx *x, rp_kernel *k, struct rp_wave *w);
/* [addr, addr + n) lies in memory the runtime writes while kernels run. */
bool rp_adopted(const rp_sim *s, uint64_t addr, uint64_t n);

/* Build the machine described by cfg for the trace rd (not owned) into s
 * (rp_sim_create allocates and calls this; tests may use their own storage).
 * Returns 0 or -1 with a message in s->err; rp_sim_fini either way. */
int rp_sim_init(rp_sim *s, const rp_config *cfg, trc_reader *rd, FILE *out);
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
void rp_sim_fini(rp_sim *s);
/* The caches' memory context of s (rp_cache.h): its functional memory, line
 * buffers and data path (rp_perform_line, rp_mem_read_line, rp_sim_fail). */
rp_mem_ctx rp_sim_mem_ctx(rp_sim *s);

/* A name from the trace (a kernel's), made safe to print and to put in JSON:
 * printable ASCII kept, '\\' and every other byte written as \xNN, at most
 * n - 1 bytes; returns dst. A hostile trace's escape sequences never reach
 * the terminal. (sim.c) */
char *rp_printable(char *dst, size_t n, const char *src);

void rp_timeline_free(rp_timeline *t); /* timeline.c; accepts NULL */

/* The data check (check.c), attached by rp_sim_init: rp_check_observe, the
 * observer of RP_HOOK_VALUE, counts and compares every value the model's
 * memory returned with the recording and fires RP_HOOK_MISMATCH for each
 * difference (classified); rp_check_reporter, its observer, prints the
 * "mismatch:" / "note:" lines. */
void rp_check_observe(void *arg, const rp_hook_ctx *c);
void rp_check_reporter(void *arg, const rp_hook_ctx *c);

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
/* Did lane k (active-lane ordinal) of compare-and-swap op (w-byte elements,
 * compare value cmp) fail in the recording: does the trace hold its return
 * and is that not cmp? Such a lane reads only in the replay (perform.c,
 * sample.c); one that succeeded waits for its compare value (cache.c
 * "Compare-and-swap in the recorded order"). false without a recorded return. */
static inline bool rp_cas_failed_in_recording(const trc_mem_op *op, uint32_t k, unsigned w, uint64_t cmp)
{
    uint64_t rec = 0;
    if (!op->load_data)
        return false;
    memcpy(&rec, op->load_data + (size_t)k * w, w);
    return rec != cmp;
}

/* May the atomic access a be performed on the line (data: its lb bytes at
 * `line`) now? false for a compare-and-swap (not an await's poll) with a
 * lane in lane_mask that succeeded in the recording (its recorded return is
 * its compare value) whose word, after the lanes before it, does not hold
 * its compare value yet: its turn in the recorded order has not come. The
 * L2 holds it (cache.c). true for every other access. */
bool rp_atomic_ready(rp_sim *s, rp_access *a, uint64_t lane_mask, uint64_t line, const uint8_t *data, uint32_t lb);
bool rp_perform_line(rp_sim *s, rp_access *a, uint64_t lane_mask, uint64_t line, uint8_t *data, uint32_t lb,
                     uint8_t *bm);
/* A hashed load (trace 2.2: rp_access.hashed) has completed: the hash of the
 * bytes the model returned (a->hbuf) against the recorded one, to the
 * observers of RP_HOOK_VALUE (RP_VALUE_LOAD_HASH / RP_VALUE_LDS_HASH).
 * owner: the sim. */
void rp_load_hash_check(void *owner, rp_access *a);
/* The L2 bank of GPU g that caches addr (as rp_route_l2_bank routes it). */
static inline rp_cache *rp_l2_bank(rp_sim *s, uint32_t g, uint64_t addr)
{
    if (s->l2_bank_pow2)
        return &s->gpus[g].l2[(addr >> s->l2_bank_shift) & s->l2_bank_mask];
    return &s->gpus[g].l2[(addr / s->cfg.l2_interleave) % s->cfg.l2_banks];
}
/* Line data as the memory hierarchy holds it at the point of coherence:
 * the owner GPU's L2 bank copy if present, else DRAM (rp_fmem). Used for
 * fills whose response carries no data (forwarders that drop rp_msg.data). */
void rp_mem_read_line(rp_sim *s, uint64_t line, uint8_t *dst, uint32_t lb);
/* Write back (functionally, zero simulated time) every dirty line of GPU
 * gpu's L2 banks into DRAM (rp_fmem); a no-op under debug.skip_l2_flush.
 * For host.c before a device-to-host copy (rp_host_apply also writes back
 * the lines a D2H/D2D source covers). Returns the lines written back. */
uint64_t rp_mem_flush_l2(rp_sim *s, uint32_t gpu);
/* Sampled replay (sample.c): a store of n bytes (atomic_op GCN_AT_NONE) or
 * an atomic (gcn_atomic_op, w = 4 or 8 bytes, operands src and cmp) of a
 * fast-forwarded workgroup on GPU g (src NULL and GCN_AT_NONE: a load,
 * which only allocates its line in the L2), applied to the modelled memory at once
 * as the L2 (the point of coherence) takes a write: the line is allocated
 * there and dirty (rp_cache_functional_write); L1s are write-through and
 * invalidated at the next kernel start. 0, or -1 out of memory. */
int rp_mem_functional(rp_sim *s, uint32_t g, uint64_t addr, const uint8_t *src, uint32_t n, int atomic_op,
                      uint64_t asrc, uint64_t acmp);
/* Sampled replay (sample.c), called by the dispatcher when a workgroup of k
 * is done: measures k's rate over windows of workgroups and, once it is
 * stable within sample.tolerance, fast-forwards k's workgroups not yet
 * handed out (their stores reach the memory, their time is predicted:
 * k->smp). 0, or -1 after rp_sim_fail. */
int rp_sample_wg_done(rp_sim *s, rp_kernel *k, rp_time now);
/* Sampled replay (rp_ctx.sample_hold), called by the dispatcher once k's
 * workgroups in flight are done after a switch, before its predicted time
 * runs: fast-forwards the last stretch, which rp_sample_wg_done left for
 * then (what the workgroups in flight leave in the L2 comes before what the
 * later workgroups it skips leave, as in grid order). 0, or -1 after
 * rp_sim_fail. */
int rp_sample_hold(rp_sim *s, rp_kernel *k);
/* Sampled replay, wave level (sample.c; rp_ctx.sample_wave): a wave runs
 * sample.wave_warmup percent of its recorded instructions, then measures
 * its time per instruction over the next sample.wave_measure percent (two
 * halves; again over the next stretch if it crossed a barrier or an LDS
 * access). Once every wave of its kernel has started (so no workgroup is
 * left to run in a changed machine), at a point where it waits for no
 * access of its own, it skips ahead, at most to its last sample.wave_tail
 * percent: the skipped instructions' global stores and atomics reach the
 * memory at once, their loads allocate their L2 lines (as a fast-forwarded
 * workgroup), and the wave sleeps for their predicted time (skipped x time
 * per instruction). A skip stays inside the instructions its measurement
 * ran and stops before a barrier, an LDS access, s_sleep or the grid
 * barrier (the wave runs on in detail, and may skip again); a stretch
 * shorter than the measurement is not skipped. Not skipped: kernels whose
 * workgroups may observe each other (gcn_program_sync_reasons), whose waves
 * poll (awaits), with fewer waves than SIMDs, a grid barrier or
 * compare-and-swaps. 0 go on, 1 sleep until *resume, -1 the walk failed
 * (reported) or rp_sim_fail. */
int rp_sample_wave(rp_sim *s, rp_wave *w, rp_engine *e, rp_time t, rp_time *resume);
/* Wave w of a sampled replay ended at t: its lifetime counts for its
 * kernel's bound (rp_sample_kernel_end). */
void rp_sample_wave_end(rp_sim *s, rp_wave *w, rp_time t);
/* In a partitioned sampled replay (rp_sim.smp_parts: the GPU cut into
 * partitions, or a partition per GPU; sample.c "Partitions"), at the dispatcher: workgroup wg of k ended (its waves' instructions, polls and
 * wave-level counters join k's), and a skipped wave's batch of stores,
 * atomics and load allocations arrived (RP_MSG_FF_APPLY): applied to the L2
 * banks and the functional memory, then freed (0, or -1 after rp_sim_fail).
 * At a serial point between windows: what the kernels' waves may read of
 * them (rp_ksample.pub_*) is brought up to date, after, with one partition
 * per GPU (rp_sim.smp_defer), what the partitions' fast-forwards deferred for
 * other partitions' L2 banks was applied (0, or -1 after rp_sim_fail). */
void rp_sample_wg_end(rp_sim *s, rp_kernel *k, const rp_wg *wg);
int rp_sample_apply(rp_sim *s, void *batch);
int rp_sample_publish(rp_sim *s);
/* With rp_sim.smp_serial_groups, at a serial point, for each kernel note in
 * partition order: a launch that started joins its group of launches alike
 * (made now if it is the first), one that ended adds its time to it (what
 * rp_sample_kernel_start and rp_sample_kernel_end do at once otherwise). 0, or
 * -1 after rp_sim_fail (out of memory). */
int rp_sample_note(rp_sim *s, rp_kernel *k, int end);
/* Sampled replay, kernel level (sample.c), when the dispatcher starts k:
 * once sample.kernels launches alike (same kernel, grid and workgroup size)
 * ran in full with times per instruction that agree within
 * sample.tolerance, k is fast-forwarded whole: every workgroup's stores
 * reach the memory and its time is predicted from theirs. At k's end
 * (rp_sample_kernel_end) a launch replayed in full joins its group. 0, or
 * -1 after rp_sim_fail. */
int rp_sample_kernel_start(rp_sim *s, rp_kernel *k);
void rp_sample_kernel_end(rp_sim *s, rp_kernel *k);
/* Why a sampled replay replayed k in full (no level skipped any of its
 * work): the reason's code (RP_WHY_*: its waves polled, a grid barrier,
 * compare-and-swaps, too few rounds for the workgroup level, a rate that
 * never held still within sample.tolerance, or skips refused because their
 * bound was wider than sample.max_bound), and, when buf is non-NULL and
 * n > 0, one phrase saying so in buf (the closest the rate came, what kept
 * the wave level off; cut to n bytes). -1 (buf untouched) when k was
 * sampled, ran no work, did not finish, or sampling is off. */
enum { RP_WHY_POLLS, RP_WHY_GWS, RP_WHY_CAS, RP_WHY_ROUNDS, RP_WHY_RATE, RP_WHY_WIDE, RP_WHY_N };
int rp_sample_why_full(const rp_sim *s, const rp_kernel *k, char *buf, size_t n);
/* FNV-1a of a launch's kernarg segment: sampled replay groups launches by it
 * (rp_kernel.kernarg_hash; sample.c looks at launches not yet enqueued). */
static inline uint64_t rp_kernarg_hash(const trc_launch *l)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; l->kernarg && i < l->kernarg_size; i++)
        h = (h ^ l->kernarg[i]) * 0x100000001b3ull;
    return h;
}
/* What a sampled replay sampled, over every kernel (rp_sample_summary). */
extern const char *const rp_why_full_label[RP_WHY_N]; /* "polls", ... */
typedef struct rp_sample_sum {
    uint32_t kernels, sampled;      /* kernels that ran; sampled at any level */
    uint32_t whole, wg_level, wave_level; /* fast-forwarded whole; workgroups skipped; waves skipped */
    uint64_t instr, skipped;        /* the trace's wavefront instructions of those kernels; skipped */
    rp_time kernel_ps, bound_ps;    /* their kernel times summed; the sampled ones' bounds summed */
    uint32_t in_full[RP_WHY_N];     /* replayed in full, by reason (rp_sample_why_full) */
    uint32_t after_skips;           /* replayed in detail after skipped work (no bound) */
} rp_sample_sum;
void rp_sample_summary(const rp_sim *s, rp_sample_sum *o);
/* Stop and free the fast-forward's helper threads (rp_sim_destroy). */
void rp_sample_fini(rp_sim *s);
uint32_t rp_gpu_of(rp_sim *s, uint64_t addr, uint32_t accessing_gpu);
rp_link *rp_route_l1(void *ctx, uint64_t line, rp_port **dst);
rp_link *rp_route_l2(void *ctx, uint64_t line, rp_port **dst);
/* Link (and port) into the L2 bank of GPU gpu that holds addr, for a sender
 * of group grp (UINT32_MAX or the GPU's n_groups: the memory side). */
rp_link *rp_route_l2_bank(rp_sim *s, uint32_t gpu, uint32_t grp, uint64_t addr, rp_port **dst);
void rp_rdma_init(rp_rdma *r, rp_sim *s, uint32_t gpu);
void rp_sim_fail(rp_sim *s, const char *fmt, ...);
/* Add to out the per-kernel summary counters of k's GPUs in partition part
 * (match) or in the other partitions (!match). */
void rp_ksum_take(rp_sim *s, const rp_kernel *k, rp_ksum *out, int32_t part, bool match);

#endif
