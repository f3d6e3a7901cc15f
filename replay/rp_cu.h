/*
 * rp_cu.h - a compute unit (cu.c): wavefront slots on 4 SIMDs, issue arbiters,
 * scalar/vector/LDS/branch units, s_waitcnt counters and barriers, driven by
 * the wave walker (gcn/gcn_walk.h); its L1V cache and the workgroups the
 * dispatcher assigns.
 */
#ifndef RP_CU_H
#define RP_CU_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rp_cache.h"
#include "rp_ctx.h"
#include "rp_engine.h"
#include "rp_fetch.h"

#include "gcn/gcn_isa.h"
#include "gcn/gcn_walk.h"
#include "traceformat/trc.h"

typedef struct rp_sim rp_sim;
typedef struct rp_cu rp_cu;
typedef struct rp_wave rp_wave;
typedef struct rp_wg rp_wg;
typedef struct rp_kernel rp_kernel;
typedef struct rp_part rp_part;

/* ---- compute unit --------------------------------------------------------------- */

enum rp_acc_kind { RP_ACC_VMEM = 0, RP_ACC_SMEM, RP_ACC_LDS };

/* One memory instruction of a wavefront in flight. */
typedef struct rp_access {
    struct rp_access *next;   /* free list / LDS or memory completion FIFO */
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
    rp_time done;             /* LDS completion time; memory: when its last line arrives back */
    uint64_t xmask;           /* perform.c: active-lane ordinals whose bytes cross a line boundary */
    uint8_t xmask_done;       /* xmask computed (accesses are zeroed when taken from the free list) */
    struct rp_access *all_next; /* the CU's list of every access it allocated (kept across reuse) */
    uint8_t poll;             /* a poll of an await (gcn_walk.h): 1 before/in the template (atomics read
                               * only), 2 in the iteration after it; other data than recorded is no
                               * mismatch but tells the walk that memory changed */
    uint8_t hashed;           /* trace 2.2 hashed load: the bytes the model returns are gathered in hbuf
                               * (active-lane order) and hashed when the access completes */
    uint32_t hcap;            /* hbuf's size; hbuf and hcap are kept when the access is reused */
    uint8_t *hbuf;
    /* The op's fields the caches read when they perform the access, copied at
     * issue (the op itself, decoded long before, is out of the host's caches
     * by then): lane k's address is base + k * stride when strided, else
     * op->addr[k] (rp_acc_addr). */
    uint32_t flags, bpl;      /* op->flags, op->bytes_per_lane */
    uint8_t strided;          /* op->addr_strided */
    uint8_t lanes;            /* active lanes, popcount(op->exec) (SMEM: 1) */
    uint64_t base, stride;    /* op->addr[0], op->addr_stride */
    const uint64_t *addr;     /* op->addr */
    const uint8_t *load_data, *store_data;
} rp_access;

/* Binds a to op (n active lanes; SMEM: 1): sets a->op and copies the op's
 * fields above. The op must not change afterwards. */
static inline void rp_access_bind(rp_access *a, const trc_mem_op *op, uint32_t n)
{
    a->op = op;
    a->flags = op->flags;
    a->bpl = op->bytes_per_lane;
    a->strided = op->addr_strided;
    a->base = n ? op->addr[0] : 0;
    a->stride = op->addr_stride;
    a->addr = op->addr;
    a->load_data = op->load_data;
    a->store_data = op->store_data;
    a->lanes = (uint8_t)(n > 64 ? 64 : n);
}

/* Active lane k's address (k < popcount(exec); SMEM: k = 0). */
static inline uint64_t rp_acc_addr(const rp_access *a, uint32_t k)
{
    return a->strided ? a->base + (uint64_t)k * a->stride : a->addr[k];
}

/* Bank-conflict cycles of LDS access a of op (replay/cu.c; GCN3 ISA manual
 * Sec. 11: `banks` banks of 4 bytes, a wavefront processed in halves of 32
 * lanes): per half with an active lane, the largest number of distinct
 * dwords in one bank (equal dwords broadcast), at least ceil(distinct /
 * banks); summed over the halves, at least 1. _exact counts the dwords one
 * by one; rp_lds_conflict_cycles gives the same in closed form for the usual
 * strided shapes and calls _exact for the rest. */
uint32_t rp_lds_conflict_cycles_exact(const trc_mem_op *op, const rp_access *a, uint32_t banks);
uint32_t rp_lds_conflict_cycles(const trc_mem_op *op, const rp_access *a, uint32_t banks);

enum rp_wave_state { RP_W_RUN = 0, RP_W_WAITCNT, RP_W_BARRIER, RP_W_ENDING, RP_W_DONE, RP_W_FETCH, RP_W_GWS };

struct rp_wave {
    rp_event ev;
    rp_cu *cu;
    rp_wg *wg;
    uint8_t smp_state;        /* sampled replay (below); here, beside ev, because wave_run reads it at each turn */
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
    rp_time wait_since;       /* in an await (walk.aw_state != NONE) since, + 1; 0: not in one */
    uint64_t wait_ps;         /* time spent in awaits so far */
    gcn_walk walk;            /* position in the code and the wave's record (gcn/gcn_walk.h) */
    /* sampled replay, wave level (sample.c rp_sample_wave; 0: off): the
     * replay asks the sampler when walk.dyn reaches smp_next */
    uint64_t smp_next;
    uint64_t smp_i0, smp_imid; /* walk.dyn where the measurement and its second half began */
    rp_time smp_t0, smp_tmid;  /* and when */
    rp_time smp_until;         /* asleep (the skipped instructions' predicted time) until */
    double smp_cpi, smp_rel;   /* ps per instruction measured; relative difference of its halves */
    double smp_err;            /* its skips' errors (time x halves' difference), summed: ps */
    uint64_t smp_skipped;      /* recorded instructions skipped, not replayed */
    struct rp_wsample *smp_data; /* the walk where the measurement began, the instructions it ran (sample.c) */
};

struct rp_wg {
    rp_wg *next;
    rp_wg *live_prev, *live_next; /* the dispatcher's workgroups not yet done (freed at the end) */
    rp_kernel *k;
    rp_cu *cu;
    uint32_t index;           /* commit-order index in the trace */
    rp_time start;            /* placed on its CU at */
    trc_wg *tw;
    rp_wave *waves;
    uint32_t n_waves, n_live, n_bar;
    uint8_t simd_of[64];      /* SIMD of each wave (dispatcher's choice) */
    uint8_t *lds;             /* functional LDS image, group_segment_size bytes */
    uint32_t lds_size;
    /* its waves' replayed wavefront instructions and await polls, added as each
     * ends (on its CU's partition): what the dispatcher learns with WG_DONE */
    uint64_t instr_done, spins_done;
    /* its waves' wave-level counters with the GPU cut into partitions (sample.c),
     * added to the kernel's by the dispatcher at WG_DONE */
    struct rp_wg_smp {
        uint64_t skips, instr, measured, crossed, shorts, ramp;
        double sleep_ps, err_ps, life_ps;
        double max_err_ps;    /* the largest of its waves' summed skip errors */
    } smp;
};

struct rp_cu {
    rp_component comp;
    const rp_ctx *x;          /* the machine around it (rp_ctx.h) */
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
    struct rp_tlb *vtlb;      /* its L1 vector TLB (NULL: tlb.enable = 0) */
    struct rp_tlb *stlb;      /* its shader array's L1 scalar/instruction TLB */
    rp_fetch *fetch_free;
    rp_fetch *fetch_head;     /* fetches landing, in time order */
    rp_event fetch_ev;
    uint64_t st_fetches, st_fetch_stall_cycles;
    rp_access *acc_free;
    rp_access *acc_all;       /* every access allocated (acc_get), for rp_sim_fini */
    rp_access *lds_head, *lds_tail; /* LDS completions in time order */
    rp_event lds_ev;
    rp_access *vm_head, *vm_tail; /* vector and scalar memory accesses whose last line is on its way back,
                                   * by its arrival time (cu_resp_arrive) */
    rp_event vm_ev;
    uint32_t last_kernel;     /* kernel id of the last WG: L1V invalidated on change */
    uint32_t live_wgs;
    /* statistics */
    uint64_t st_instr, st_valu, st_salu, st_vmem, st_smem, st_lds, st_branch, st_wgs;
    uint64_t st_lds_conflict_cycles, st_vmem_lines;
};

void rp_cu_init(rp_cu *cu, rp_sim *s, uint32_t gpu, uint32_t id);
/* A trace inconsistency of wave w: what, or (NULL) the walker's message;
 * counted in the data check (walk_errors). */
void rp_walk_error(rp_wave *w, const char *what);
/* Stop w after a walk error (it ends once its accesses are back). */
void rp_wave_abort(rp_wave *w, rp_engine *e);

/* ---- the front end as the CU's issue loop sees it (fetch.c) ---- */

/* Is in wholly inside w's instruction buffer (fetch chunks of fb bytes)? */
static inline bool rp_insn_buffered(const rp_wave *w, const gcn_insn *in, uint64_t fb)
{
    return in->pc >= w->ib_base && in->pc + in->size <= w->ib_base + (uint64_t)w->ib_n * fb;
}
/* Before executing in at local time t: drop buffered chunks the wave has
 * moved past (prefetching the next one), and if in is not buffered start or
 * await its fetch. Returns true when in can issue now; false when the wave
 * was rescheduled (t > now) or parked in RP_W_FETCH. fetch.c. */
bool rp_front_end_slow(rp_wave *w, const gcn_insn *in, rp_time t, rp_engine *e);
/* w stopped to wait (s_waitcnt, s_barrier, the grid barrier): fetch ahead if its
 * buffer has room (fetch.c; the only prefetch with cu.fetch_ahead = 0). */
void rp_fetch_waiting(rp_wave *w, rp_time now);

/* The same, with the common case inline: in lies in the buffer's first chunk
 * (then nothing is dropped and nothing fetched). */
static inline bool rp_front_end(rp_wave *w, const gcn_insn *in, rp_time t, rp_engine *e, uint64_t fb)
{
    if ((in->pc & ~(fb - 1)) == w->ib_base && rp_insn_buffered(w, in, fb))
        return true;
    return rp_front_end_slow(w, in, t, e);
}

#endif
