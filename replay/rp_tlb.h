/*
 * rp_tlb.h - address translation in the timing model (tlb.c): TLBs and the
 * page-table walker.
 *
 * Levels (Power, Hill and Wood, "Supporting x86-64 Address Translation for
 * 100s of GPU Lanes", HPCA 2014; MGPUSim's R9 Nano builder, which has the same
 * levels with L1 TLBs of 1 set x 64 ways and a 64 x 64 L2 TLB):
 * - an L1 vector TLB per CU, in front of its L1V: every vector memory line
 *   request is translated before it enters the cache (physically addressed
 *   L1s, as in both sources);
 * - an L1 scalar/instruction TLB per shader array, in front of its L1S and of
 *   the L1I's misses;
 * - an L2 TLB per GPU on the memory side, reached over the NoC, with the
 *   GPU's page-table walker: a bounded number of concurrent walks, a
 *   page-walk cache (PWC) of upper-level entries, and walks that read their
 *   page-table entries through the GPU's L2 and DRAM (so they compete with
 *   data for both); a page of host memory (or, in D-MGPU, of a peer GPU) is
 *   also translated by the IOMMU (tlb.iommu_latency).
 *
 * Addresses stay what the trace recorded (virtual = physical): translation
 * costs time and traffic, it does not move data. The page tables live in a
 * synthetic physical region per GPU (rp_pte_addr), never written, so their
 * entries read as zero and the data check ignores them (no rp_access).
 *
 * Page size is chosen per allocation (rp_ctx.page_of): device memory
 * (hipMalloc, code objects, scratch) is mapped in fragments of up to
 * tlb.page_size, as large as the allocation's size and alignment allow (GFX8
 * GPUVM: a fragment field in every 4 KiB page-table entry lets one TLB entry
 * cover the whole fragment; Linux amdgpu's default fragment on GFX8 is 2 MiB,
 * gmc_v8_0.c amdgpu_vm_adjust_size(adev, 64, 9, 1, 40)); host memory
 * (hipHostMalloc) has tlb.host_page_size pages. A TLB entry holds its own
 * page size; a walk always reads down to the leaf (4 KiB) level. Kernarg and
 * scratch, which the emulator places at fresh addresses for every dispatch
 * while the runtime reuses a ring and a per-queue buffer, count as
 * translated (an L1 TLB hit).
 */
#ifndef RP_TLB_H
#define RP_TLB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rp_ctx.h"
#include "rp_engine.h"
#include "rp_stats.h"

/* The synthetic physical address of the 8-byte page-table entry of level d
 * (0: the leaf, which maps 4 KiB pages) that translates page address va on
 * GPU gpu: bit 63 set (no allocation of a trace lies there), the GPU in bits
 * 52..57 and the level in 48..51, then the entry's index in a table indexed
 * by va >> (12 + 9 d). Entries of neighbouring pages share a cache line, as
 * in a real page table. rp_gpu_of sends these addresses to gpu. */
#define RP_PT_BIT (1ull << 63)
static inline uint64_t rp_pte_addr(uint32_t gpu, uint32_t d, uint64_t va)
{
    return RP_PT_BIT | (uint64_t)(gpu & 63) << 52 | (uint64_t)(d & 15) << 48 |
           ((va >> (12 + 9 * d)) * 8 & ((1ull << 48) - 1));
}
static inline bool rp_is_pte_addr(uint64_t a) { return (a & RP_PT_BIT) != 0; }
static inline uint32_t rp_pte_gpu(uint64_t a) { return (uint32_t)(a >> 52) & 63; }

typedef struct rp_tlb_spec {
    uint32_t sets, ways;      /* entries = sets * ways */
    uint32_t mshrs;           /* pages whose translation may be outstanding at once */
    rp_time latency_ps;       /* lookup latency (a hit is usable this long after the request) */
    rp_clock clk;             /* one lookup per cycle */
    /* L2 TLB only (walkers > 0): its page-table walker */
    uint32_t walkers;         /* concurrent walks */
    uint32_t levels;          /* page-table levels (root .. leaf) */
    uint32_t pwc_entries;     /* page-walk cache: upper-level entries held (fully associative, LRU) */
    rp_time level_ps;         /* walker's work per level besides the entry's read */
    rp_time iommu_ps;         /* added to a walk of a host (or peer) page: the IOMMU's translation */
} rp_tlb_spec;

typedef struct rp_tlb_mshr {
    uint64_t page;            /* page address (va with its offset bits cleared) */
    uint8_t shift;            /* log2 of its page size */
    bool busy;
    bool iommu;               /* the walk also needs the IOMMU */
    bool write;               /* a request for a writable translation is held (L2: the walk asks for one) */
    bool ro;                  /* L2: the walk's translation is read-only (rp_um.h copies) */
    bool um_retry;            /* L2: ev asks unified memory again (the page was being serviced) */
    rp_msg *waiters, *wtail;  /* L1: held line requests (each with its onward link in fwd); L2: requests */
    /* L2: the walk */
    bool walking;
    uint8_t level;            /* level whose entry is being read */
    rp_time start;            /* walk began */
    uint32_t next_q;          /* queue of MSHRs waiting for a walker (index + 1, 0: end) */
    rp_event ev;              /* the IOMMU's part of the walk is over */
    struct rp_tlb *owner;
} rp_tlb_mshr;

typedef struct rp_tlb {
    rp_component comp;
    const rp_ctx *x;          /* pool, page_of, route_l2, fail */
    rp_engine *eng;
    rp_tlb_spec spec;
    uint32_t gpu;
    uint64_t *tag;            /* sets * ways: (page >> shift) << 6 | shift, + 1; 0 = invalid */
    uint8_t *ro;              /* sets * ways: the entry is read-only (a unified-memory page with copies) */
    uint64_t *age, stamp;     /* LRU */
    uint64_t mru_page;        /* the last entry hit or installed: fast path (page + 1, 0: none) */
    uint8_t mru_shift, mru_ro;
    uint64_t n_valid;         /* entries whose tag is set (0: a lookup finds nothing) */
    rp_tlb_mshr *mshr;
    uint32_t mshr_used;
    rp_msg *stall_head, *stall_tail; /* misses waiting for a free MSHR (held in arrival order) */
    rp_time next_free;        /* lookup pipeline */
    /* below an L1 TLB: the L2 TLB, over a NoC link (req_link, into its `in`
     * port); translations come back on resp_link into resp */
    rp_link *req_link;
    rp_port resp;
    rp_link resp_link;
    /* an L2 TLB: requests from the L1 TLBs; its walker */
    rp_port in;
    uint32_t walks_busy, wq_head, wq_tail; /* walk queue of MSHRs (index + 1) */
    uint64_t *pwc_tag, *pwc_age;          /* level << 56 | va >> (12 + 9 level), + 1 */
    rp_port fill;             /* PTE reads' responses from the L2 */
    rp_link fill_link;
    /* statistics */
    uint64_t st_hits, st_misses, st_merges, st_mshr_stalls;
    uint64_t st_walks, st_walk_ps, st_pte_reads, st_pwc_hits, st_iommu, st_walk_queue_ps, st_walk_peak;
} rp_tlb;

/* Build a TLB on engine e. An L1 TLB (spec->walkers == 0) sends its misses on
 * req_link (into its L2 TLB's `in` port; the caller initialises it) and
 * receives their translations on its resp_link (latency resp_ps). An L2 TLB
 * (walkers > 0) answers requests arriving at its `in` port and walks the page
 * table of GPU gpu, reading entries through x->route_l2 (responses on its
 * fill_link, latency fill_ps). 0, or -1 out of memory or a bad spec. */
int rp_tlb_init(rp_tlb *t, rp_engine *e, const rp_ctx *x, const char *name, const rp_tlb_spec *spec,
                uint32_t gpu, rp_time resp_ps, rp_time fill_ps);
void rp_tlb_fini(rp_tlb *t);
/* Register its counters under its name (L1: hits, misses, merges,
 * mshr_stalls; L2: and the walker's). */
void rp_tlb_register_stats(rp_tlb *t, rp_stats *s);

/* An L1 TLB: translate the page of m->addr for a request ready at t (>= now)
 * and send m on link l (to its m->dst) once translated: at t + latency on a
 * hit, or when the translation of a miss comes back (at once then: the
 * response carries it). Requests of one page leave in the order they came. */
void rp_tlb_send(rp_tlb *t, rp_link *l, rp_msg *m, rp_time ready);

/* A shootdown: drop the entry that translates addr, if t holds one (a
 * pending miss of its page still completes: its walk happened before). */
void rp_tlb_invalidate(rp_tlb *t, uint64_t addr);

#endif
