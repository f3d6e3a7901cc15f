/*
 * rp_hooks.h - named observation points of the timing model (STYLE.md #11).
 * Observers (the data check's reporter, counters, a timeline exporter, test
 * probes) attach a callback to a point; components fire the point where the
 * thing happens. With nothing attached a point costs one load and a branch
 * that is not taken: no #ifdef in component code.
 *
 * Threads: a point fires on the thread running the component's partition
 * (parallel replay: several at once); an observer attached to a point that
 * several partitions fire must be thread-safe, or attach before the run
 * with one partition. Observers must not change the simulation.
 */
#ifndef RP_HOOKS_H
#define RP_HOOKS_H

#include <stdint.h>

typedef uint64_t rp_time_ps;

typedef enum rp_hook_point {
    RP_HOOK_KERNEL_START = 0, /* item: rp_kernel; a dispatcher starts handing out its workgroups */
    RP_HOOK_KERNEL_END,       /* item: rp_kernel; its workgroups ended and the L2 flush was acknowledged */
    RP_HOOK_WG_START,         /* item: rp_wg; placed on its CU (gpu, cu set) */
    RP_HOOK_WG_END,           /* item: rp_wg; its last wave retired */
    RP_HOOK_WAVE_ISSUE,       /* item: rp_wave, detail: gcn_insn; one wavefront instruction issues */
    RP_HOOK_WAVE_RETIRE,      /* item: rp_wave; s_endpgm passed and its accesses are back */
    RP_HOOK_ACCESS_ISSUE,     /* item: rp_access; a memory instruction's access leaves the CU */
    RP_HOOK_ACCESS_DONE,      /* item: rp_access; its last line (or LDS operation) completed */
    RP_HOOK_LINK_SEND,        /* item: rp_link, detail: rp_msg (m->arrive set); a message enters a link */
    RP_HOOK_MISMATCH,         /* item: rp_access (NULL: a device-to-host copy), detail: rp_mismatch */
    RP_HOOK_CACHE_ACCESS,     /* item: rp_cache, detail: const int * (1 hit, 0 miss); a request from above was
                               * looked up (gpu: the cache's GPU; MSHR merges count as misses, as in its statistics) */
    RP_HOOK_HOST_COPY,        /* item: trc_event (a copy or memset of the program), detail: rp_copy_timing;
                               * the host starts it (gpu: the device it names) */
    RP_HOOK_VALUE,            /* item: rp_access (NULL: a device-to-host copy), detail: rp_value; the timing
                               * model's memory returned a value the trace recorded (a load's run of lanes, an
                               * LDS element, an atomic's return, a block of a D2H copy): the data check
                               * (check.c) is its observer */
    RP_HOOK_COUNT
} rp_hook_point;

/* What a point reports. now: simulated time (ps); gpu/cu: where (UINT32_MAX:
 * not meaningful); item/detail: see the point. */
typedef struct rp_hook_ctx {
    rp_hook_point point;
    rp_time_ps now;
    uint32_t gpu, cu;
    const void *item;
    const void *detail;
    void *sim;                /* the rp_sim (opaque here) */
} rp_hook_ctx;

/* When a copy or memset moves its data (RP_HOOK_HOST_COPY). */
typedef struct rp_copy_timing {
    rp_time_ps start, end;    /* its transfer: after host.copy_overhead and the wait for a copy engine */
    uint32_t engine_gpu;      /* the GPU whose copy engine (SDMA) ran it; UINT32_MAX: none (memset, copy
                               * within a GPU) */
    uint32_t engine;          /* that engine, 0 .. host.sdma_engines - 1 */
} rp_copy_timing;

/* A data-check difference (RP_HOOK_MISMATCH). */
typedef struct rp_mismatch {
    const char *what;         /* "load", "lds load", "atomic return (order-dependent)", "D2H copy" */
    uint64_t addr;            /* the first differing element's address (D2H: the byte's) */
    const uint8_t *expected;  /* what the emulator recorded; NULL: nothing (a load of private memory recorded
                               * without its values): `lanes` are not checkable */
    const uint8_t *got;       /* what the timing model's memory held */
    uint32_t len;             /* bytes of expected/got */
    uint8_t order_dependent;  /* 1: explained by the order of competing atomics, not a model bug */
    uint64_t copy_src, copy_size; /* D2H: the copy */
} rp_mismatch;

/* A value the model's memory returned, beside what the emulator recorded
 * (RP_HOOK_VALUE). */
typedef enum rp_value_kind {
    RP_VALUE_LOAD = 0,        /* VMEM/SMEM load: lanes in a row on one cache line (or a part of one lane) */
    RP_VALUE_LDS,             /* LDS load: lanes in a row (or one element of ds_read2); or, when they all
                               * equal the record, all the op's lanes (ds_read2: both elements of each, lanes
                               * = elements, stride = element bytes) in the record's layout: addr is then the
                               * first lane's, the others' are not addr + k x stride (perform.c) */
    RP_VALUE_ATOMIC,          /* an atomic's returned (pre-op) value, one lane */
    RP_VALUE_D2H,             /* a block of a device-to-host copy (item NULL, copy: the event) */
    RP_VALUE_LOAD_HASH,       /* trace 2.2 hashed VMEM load: got/expected are the 8-byte hashes of all
                               * its lanes' bytes (trc_load_hash), lanes = the active lanes */
    RP_VALUE_LDS_HASH,        /* the same for an LDS load */
} rp_value_kind;
typedef struct rp_value {
    rp_value_kind kind;
    uint64_t addr;            /* of got[0] / expected[0] */
    const uint8_t *got;       /* what the model's memory held */
    const uint8_t *expected;  /* what the emulator recorded */
    uint32_t len;             /* bytes */
    uint32_t stride;          /* bytes per lane when the run holds several lanes (len = lanes x stride); else len */
    uint32_t lanes;           /* lanes whose first byte this run holds (counted as checked; 0: a later part) */
    const void *copy;         /* RP_VALUE_D2H: the trc_event */
} rp_value;

typedef void (*rp_hook_fn)(void *arg, const rp_hook_ctx *c);

#define RP_HOOK_MAX_OBSERVERS 8

typedef struct rp_hooks {
    uint32_t n[RP_HOOK_COUNT];
    struct {
        rp_hook_fn fn;
        void *arg;
    } obs[RP_HOOK_COUNT][RP_HOOK_MAX_OBSERVERS];
} rp_hooks;

/* Attach fn(arg, ctx) to point p, after the observers already there. 0, or
 * -1 when p is out of range or it has RP_HOOK_MAX_OBSERVERS already. */
int rp_hooks_attach(rp_hooks *h, rp_hook_point p, rp_hook_fn fn, void *arg);
/* Call p's observers in attach order (cold: only when one is attached). */
void rp_hooks_call(const rp_hooks *h, const rp_hook_ctx *c);
/* Name of a point ("wave.retire"), "?" out of range. */
const char *rp_hook_name(unsigned p);

/* Fire point p (h may be NULL: a component built without a sim, in tests). */
#define RP_HOOK_FIRE(h, p, now_, gpu_, cu_, item_, detail_, sim_)                                      \
    do {                                                                                             \
        const rp_hooks *h_ = (h);                                                                    \
        if (__builtin_expect(h_ != 0 && h_->n[p] != 0, 0)) {                                         \
            rp_hook_ctx c_ = {(p), (now_), (gpu_), (cu_), (item_), (detail_), (sim_)};               \
            rp_hooks_call(h_, &c_);                                                                  \
        }                                                                                            \
    } while (0)

#endif
