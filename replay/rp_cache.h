/*
 * rp_cache.h - the generic set-associative cache of the timing model (cache.c): L1V,
 * L1S and L2 banks are instances with different specs (write-back or
 * write-through, where loads/stores/atomics are performed). It holds the
 * lines' data, so the data check sees what the hierarchy holds.
 */
#ifndef RP_CACHE_H
#define RP_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rp_engine.h"
#include "rp_stats.h"

typedef struct rp_cu rp_cu;
typedef struct rp_wave rp_wave;
typedef struct rp_wg rp_wg;
typedef struct rp_kernel rp_kernel;
typedef struct rp_part rp_part;

/* ---- caches ------------------------------------------------------------------ */

typedef struct rp_fmem rp_fmem;
struct rp_access;

/* What a cache uses of the machine around it, besides its links: the
 * functional memory (DRAM's contents), the line-buffer pool, and the data
 * path's entry points (the sim fills it, rp_sim_init; a cache without one,
 * in component tests, does the timing alone). */
typedef struct rp_mem_ctx {
    rp_fmem *mem;
    struct rp_lbufs *lbufs;
    void *arg;                /* first argument of the callbacks */
    /* perform the part of access a in the line at `line` (rp_perform_line) */
    bool (*perform_line)(void *arg, struct rp_access *a, uint64_t mask, uint64_t line, uint8_t *data, uint32_t lb,
                         uint8_t *bm);
    /* the line as the point of coherence holds it (rp_mem_read_line) */
    void (*read_line)(void *arg, uint64_t line, uint8_t *dst, uint32_t lb);
    /* stop the simulation with a one-line message (rp_sim_fail) */
    void (*fail)(void *arg, const char *msg);
    bool skip_flush;          /* debug.skip_l2_flush: FLUSH and write-backs write nothing (an injected bug) */
    /* Unified memory that moves (rp_um.h; NULL otherwise): is line in a page
     * that GPU gpu's memory does not serve now for a write (write) or a read
     * (a request that reached this write-back cache after its page moved
     * away, or a write that reached a read-only copy)? Then the authority:
     * the holder's L2 line (marked dirty when write), or NULL (DRAM). */
    bool (*alien)(void *arg, uint32_t gpu, uint64_t line, bool write);
    uint8_t *(*authority)(void *arg, uint64_t line, bool write);
    /* May atomic access a be performed on the line now (rp_atomic_ready)?
     * false: a compare-and-swap that succeeded in the recording whose
     * compare value the line does not hold yet (NULL: always). */
    bool (*atomic_ready)(void *arg, struct rp_access *a, uint64_t mask, uint64_t line, const uint8_t *data,
                         uint32_t lb);
} rp_mem_ctx;

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
    /* point of coherence: how long a compare-and-swap may be held for its
     * recorded turn before it is performed anyway (sim.cas_hold_max); 0: never held */
    rp_time cas_hold_max_ps;
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
 * A buffer holds `line` data bytes then line/8 bytes of byte mask. Each pool
 * belongs to one partition (one thread at a time). A buffer goes back to the
 * pool that made it: a pool that takes back another's (an L1 in one
 * partition releasing what an L2 in another took) keeps it on its `away`
 * list until rp_lbufs_return at the next serial point. Without that the
 * L2's pool made a new buffer for every response while the L1s' pools piled
 * up the old ones (km at 4x with the cut inside the GPU: 1.2 GB, 2.5 s of
 * page faults). */
typedef struct rp_lbufs rp_lbufs;
struct rp_lbufs {
    void *free;
    void *away;              /* other pools' buffers released here, to return (rp_lbufs_return) */
    void *away_tail;         /* the last buffer on away (the first released) */
    rp_lbufs *away_maker;    /* the pool that made every buffer on away; RP_LBUFS_MIXED: several */
    void *all;               /* every buffer block made (header link), for rp_lbufs_fini */
    uint32_t line;           /* data bytes per buffer (0 until first use) */
    uint64_t live;           /* handed out, not yet returned */
};
#define RP_LBUFS_MIXED ((rp_lbufs *)1)
uint8_t *rp_lbuf_get(rp_lbufs *p, uint32_t line); /* NULL only when out of memory */
void rp_lbuf_put(rp_lbufs *p, uint8_t *b);          /* accepts NULL */
/* Hand p's `away` buffers back to the pools that made them; only where no
 * other thread uses those pools (a serial point). */
void rp_lbufs_return(rp_lbufs *p);
void rp_lbufs_fini(rp_lbufs *p);

struct rp_cache {
    rp_component comp;
    rp_engine *eng;
    const rp_mem_ctx *mx;    /* functional memory and data path; NULL: timing only (component tests) */
    rp_msg_pool *pool;
    rp_cache_spec spec;
    uint32_t sets, line_shift;
    /* spec.strip_* as shifts, where every stride and count is a power of two
     * (the usual case): set_of without 64-bit divisions (the same result) */
    bool strip_shifts;
    uint8_t strip_hi[2], strip_lo[2]; /* log2(stride * n), log2(stride); hi = 0: unused */
    uint64_t *tag;           /* sets*assoc: line address + 1, 0 = invalid */
    uint64_t *age;           /* LRU stamps */
    uint8_t *dirty;
    uint64_t *dsum;          /* bit j of word w: line (64 w + j) * 64 .. + 63 may be dirty (set with
                              * each dirty bit; cleared by a flush that wrote the group back): the
                              * flush scans only these groups */
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
    uint32_t gpu;            /* the GPU it belongs to (RP_HOOK_CACHE_ACCESS); set by its builder */
    /* MSHR lookup without scanning (cache.c): busy MSHRs per hash of their
     * line and, where exactly one, its index; free MSHR indices as a stack */
    uint16_t mshr_hcnt[256], mshr_hidx[256];
    uint32_t *mshr_free, mshr_nfree;
    /* statistics */
    uint64_t st_read_hits, st_read_misses, st_mshr_merges, st_write_hits, st_write_misses;
    uint64_t st_atomics, st_writebacks, st_mshr_stalls;
    uint64_t st_mshr_allocs, st_mshr_busy_ps, st_mshr_peak, st_fill_peeks, st_invalidations;
    uint64_t st_alien;        /* requests for lines another GPU serves, served there (rp_mem_ctx.alien) */
    /* compare-and-swaps held for their recorded turn (cache.c): held, in
     * arrival order; retry, taken again one per cycle before new requests;
     * held_check: the next time the held ones are looked at without a kick */
    rp_msg *held, *held_tail, *retry, *retry_tail;
    rp_time held_check;
    uint64_t st_cas_holds, st_cas_hold_ps, st_cas_give_ups;
};

/* Build a cache (arrays allocated here); mx (may be NULL) must outlive it.
 * Returns 0 or -1 (out of memory). */
int rp_cache_init(rp_cache *c, rp_engine *e, rp_msg_pool *pool, const rp_mem_ctx *mx, const char *name,
                  const rp_cache_spec *spec, rp_route_fn route, void *route_ctx,
                  rp_time fill_latency_ps, uint64_t fill_bytes_per_s, uint32_t header_bytes);
void rp_cache_fini(rp_cache *c);
void rp_cache_register_stats(rp_cache *c, rp_stats *s);
/* Data of line (line-aligned address) if this cache holds it, else NULL. */
/* rp_cache_line_data for a write: the line's data (marked dirty), or NULL. */
uint8_t *rp_cache_line_data_w(rp_cache *c, uint64_t line);
uint8_t *rp_cache_line_data(rp_cache *c, uint64_t line);
/* Functional write-back (zero simulated time) of the dirty lines of c that
 * overlap [addr, addr + n) (n = UINT64_MAX: all) into its rp_fmem;
 * they become clean. Honours skip_flush. Returns the lines written back. */
/* Write back the dirty lines of [addr, addr + n) held by c and drop every
 * line of it (a unified-memory page leaves this GPU, rp_um.h). Fills in
 * flight still install their lines when they arrive. */
void rp_cache_drop(rp_cache *c, uint64_t addr, uint64_t n);
uint64_t rp_cache_writeback(rp_cache *c, uint64_t addr, uint64_t n);
/* Functional write (zero simulated time, no messages, no statistics) of n
 * bytes at addr, inside one line, into a write-back cache (the L2): the line
 * is allocated as a write miss would (LRU victim written back to its
 * rp_fmem if dirty, the rest of the line read from it) and marked dirty.
 * src = NULL: a read, which allocates the line clean (or makes it the most
 * recently used). For the sampled replay's fast-forward (sample.c). 0, or
 * -1 for an access that crosses a line or a cache that does not allocate. */
int rp_cache_functional_write(rp_cache *c, uint64_t addr, const uint8_t *src, uint32_t n);

#endif
