/*
 * rp_um.h - unified memory across GPUs in the timing model (um.c): where each
 * page of managed memory lives, and what a GPU pays to use a page it does not
 * hold (um.policy).
 *
 * Governed memory: hipMallocManaged allocations (trace 2.1) in U-MGPU and
 * D-MGPU, and in U-MGPU every device allocation (its memory is one address
 * space over all GPUs). Everything else is placed as before (sim.c).
 *
 * Every governed page (um.page_size) starts at its home: U-MGPU, the GPU of
 * the address's mem.gpu_interleave slice; D-MGPU, the GPU of the allocating
 * device (where the host's copies put its data). Policies:
 * - home: pages stay at home (the placement before unified memory existed);
 * - interleave: pages are spread over the GPUs by mem.gpu_interleave
 *   (U-MGPU: as home), never move;
 * - first-touch: the first GPU whose kernel uses a page takes it: a GPU page
 *   fault, then the page moves from its home over the interconnect; later
 *   users on other GPUs access it remotely (Griffin, HPCA 2020, Sec. II: the
 *   baseline placement of multi-GPU unified memory);
 * - on-fault: a GPU that uses a page held by another GPU faults and takes it
 *   (migrate on every fault: pages ping-pong between sharers; CUDA unified
 *   memory's default on Pascal and later);
 * - access-counter: remote accesses are allowed and counted per page and
 *   GPU; after um.counter_threshold of them from one GPU the page moves to
 *   it (NVIDIA Volta's access counters; Griffin's delayed migration).
 *
 * Read-only replication (um.replicate = 1, with a moving policy): a GPU that
 * reads a page another GPU holds, where the policy would move it (on-fault,
 * first-touch after the first touch, access-counter once earned), gets a
 * read-only copy in its own memory instead (a fault, the first copy's
 * shootdown of every other GPU's writable mappings, the transfer); every
 * mapping of a page with copies is read-only (TLB entries carry the bit). A
 * write to such a page takes a protection fault in the writer's walker: the
 * copies are dropped (fault + shootdown of every other GPU), then the policy
 * acts as for any write (on-fault moves the page to the writer, without a
 * second fault latency). Host writes drop the copies too (cudaMemAdvise's
 * read-mostly pages behave so).
 *
 * A move happens in the walker of the GPU that takes the page (tlb.c, at the
 * end of its walk): the walk waits um.fault_latency (a fault; not for a
 * counter-triggered move), then um.shootdown_latency (the other GPUs' TLB
 * entries of the page are invalidated), then the page's transfer over the
 * interconnect from its holder (rp_um_ops.move: bandwidth shared with the
 * rest of the traffic). The page belongs to its new holder from the start
 * of the walk's end; its lines are written back from the old holder's L2 and
 * dropped there (data move with pages: the replay's functional memory is one
 * image, the L2s keep it coherent).
 *
 * The page table is shared by every GPU, so a run with a policy that moves
 * pages is one partition (parallel.c): results stay deterministic.
 */
#ifndef RP_UM_H
#define RP_UM_H

#include <stdbool.h>
#include <stdint.h>

#include "rp_engine.h"

enum { RP_UM_HOME, RP_UM_INTERLEAVE, RP_UM_FIRST_TOUCH, RP_UM_ON_FAULT, RP_UM_COUNTER };

/* um.policy name -> RP_UM_*; -1 unknown. */
int rp_um_policy_parse(const char *name);
/* Whether a policy moves pages (needs translation and one partition). */
static inline bool rp_um_moves(int policy) { return policy >= RP_UM_FIRST_TOUCH; }

typedef struct rp_um_spec {
    int policy;                /* RP_UM_* */
    uint32_t gpus;             /* GPUs (<= 64) */
    uint8_t page_shift;        /* log2 of um.page_size */
    rp_time fault_ps;          /* um.fault_latency */
    rp_time shootdown_ps;      /* um.shootdown_latency */
    uint32_t threshold;        /* um.counter_threshold: remote accesses of one GPU that move a page */
    bool replicate;            /* um.replicate: read-only copies instead of moves on reads */
} rp_um_spec;

/* What a move needs from the machine (sim.c; mocks in tests). */
typedef struct rp_um_ops {
    void *owner;
    /* The page's bytes leave GPU `from`'s memory for GPU `to`'s, starting at
     * `ready`: write back and drop its lines in both L2s, time the transfer
     * on the links; returns when the last byte has arrived. */
    rp_time (*move)(void *owner, uint32_t from, uint32_t to, uint64_t page, uint64_t bytes, rp_time ready);
    /* Invalidate the TLB entries of page (log2 size shift) in GPU gpu. */
    void (*shootdown)(void *owner, uint32_t gpu, uint64_t page, uint8_t shift);
    /* Replication: a read-only copy of the page goes from GPU `from` (which
     * keeps it: its dirty lines are written back) to GPU `to` (its stale
     * lines dropped), starting at `ready`; returns when it has arrived. */
    rp_time (*copy)(void *owner, uint32_t from, uint32_t to, uint64_t page, uint64_t bytes, rp_time ready);
    /* Replication: GPU gpu's copy of the page is gone: drop its L2 lines. */
    void (*drop)(void *owner, uint32_t gpu, uint64_t page, uint64_t bytes);
} rp_um_ops;

typedef struct rp_um_gpu {     /* per-GPU statistics */
    uint64_t faults;           /* walks that faulted (the page was elsewhere, or untouched under first-touch) */
    uint64_t fault_ps;         /* sum of the time faulting walks waited for their page */
    uint64_t migrations_in, migrations_out;
    uint64_t bytes_in;         /* bytes of pages moved to this GPU */
    uint64_t shootdowns;       /* TLB shootdowns this GPU received */
    uint64_t remote_counted;   /* remote line accesses counted (access-counter) */
    uint64_t replicas_in;      /* read-only copies made in this GPU's memory (um.replicate) */
    uint64_t collapses;        /* this GPU's writes that dropped a page's copies (protection faults) */
} rp_um_gpu;

typedef struct rp_um_page {
    uint64_t key;              /* page number + 1; 0 = empty slot */
    uint8_t owner;             /* GPU that holds it */
    uint8_t touched;           /* a GPU's walk has seen it */
    uint8_t pending;           /* access-counter: GPU + 1 that has earned it, 0 = none */
    uint64_t replicas;         /* GPUs (bits) other than owner holding a read-only copy */
    rp_time busy_until;        /* a fault or move of it is being serviced until then */
} rp_um_page;

typedef struct rp_um {
    rp_um_spec spec;
    rp_um_ops ops;
    rp_um_page *tab;           /* open addressing, cap a power of two */
    uint32_t *counts;          /* cap * gpus: remote accesses per page and GPU (access-counter) */
    uint64_t cap, used;
    uint64_t n_replicated;     /* pages with copies now */
    rp_um_gpu *st;             /* gpus */
} rp_um;

/* 0, or -1 (out of memory, gpus 0 or > 64, threshold 0 for access-counter). */
int rp_um_init(rp_um *u, const rp_um_spec *spec, const rp_um_ops *ops);
void rp_um_fini(rp_um *u);

/* The GPU that holds addr's page now (home: where it starts). */
uint32_t rp_um_owner(const rp_um *u, uint64_t addr, uint32_t home);

/* The GPU whose memory serves GPU gpu's accesses to addr: its own when it
 * holds a read-only copy (um.replicate), else the page's holder. */
uint32_t rp_um_serving(const rp_um *u, uint64_t addr, uint32_t home, uint32_t gpu);

/* GPU gpu's walker has read the page table entry of addr's page at `now`,
 * for a request that writes (write) or only reads: apply the policy and
 * return when the translation may be used (now, or later after a fault
 * and/or a move or copy: fault_ps + shootdown_ps + transfer); *ro: the
 * translation is read-only (the page has copies). A page is serviced by one
 * walk at a time (the driver holds it): while an earlier fault or move of it
 * is in progress, *retry is set and the returned time is when to call again
 * (its end + 1 ps, after the earlier walk's translation is installed). */
rp_time rp_um_walk(rp_um *u, uint32_t gpu, uint64_t addr, uint32_t home, bool write, bool *ro, bool *retry,
                   rp_time now);

/* The host wrote [addr, addr + n) (or a write reached a read-only copy):
 * copies of its pages are dropped (no time: host writes happen between
 * kernels). */
void rp_um_host_write(rp_um *u, uint64_t addr, uint64_t n);

/* GPU gpu sent a line request to addr's page held by another GPU
 * (access-counter: counts it; at the threshold the page is earned by gpu and
 * gpu's TLB entries of it are shot down, so its next access walks and moves
 * it). Other policies: nothing. */
void rp_um_remote(rp_um *u, uint32_t gpu, uint64_t addr, uint32_t home);

#endif
