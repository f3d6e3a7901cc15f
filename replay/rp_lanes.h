/* Ordered jobs that every lane applies, each decoded once into a ring of
 * slots: the schedule of a sampled replay's fast-forward (replay/sample.c),
 * kept apart from what a job is so that it can be tested alone
 * (tests/replay/790-lanes.c drives it through random interleavings).
 *
 * Jobs 0 .. count-1 are decoded by any thread into slot job % q; lane l
 * (0 .. lanes-1) applies job 0, 1, 2, ... in turn; a slot is reused once
 * every lane has applied its job. The owner's lock guards an rp_lanes:
 * every function here is called under it; the work a step names (decode,
 * apply, warm) is done with the lock released, then reported back under
 * it. A job whose decode or apply fails stops every lane there (stop_at).
 *
 * Not thread-safe by itself; no allocation but rp_lanes_init's. */
#ifndef RP_LANES_H
#define RP_LANES_H

#include <stdbool.h>
#include <stdint.h>

typedef struct rp_lanes_slot {
    uint32_t job;        /* the job it holds */
    uint32_t lanes_done; /* lanes that applied it */
    bool ready;          /* decoded */
} rp_lanes_slot;

typedef struct rp_lanes {
    uint32_t lanes, q;   /* lanes; slots */
    uint32_t count;      /* jobs of the current run */
    uint32_t stop_at;    /* lanes apply no job from here on (a failure; else count) */
    uint32_t claimed;    /* jobs whose decoding started */
    uint32_t released;   /* slots of jobs [0, released) are free again */
    uint32_t busy;       /* steps handed out and not yet reported back */
    uint32_t *next;      /* per lane: the next job it applies */
    rp_lanes_slot *slot; /* q */
} rp_lanes;

typedef enum rp_lanes_kind {
    RP_LANES_NONE,   /* nothing to do now: wait for another thread's report */
    RP_LANES_APPLY,  /* apply job (slot job % q); then rp_lanes_applied */
    RP_LANES_DECODE, /* decode job into slot job % q; then rp_lanes_decoded */
    RP_LANES_WARM,   /* decoding job would wait for another thread: prepare
                      * later jobs' input instead; then rp_lanes_warmed */
} rp_lanes_kind;

typedef struct rp_lanes_step {
    rp_lanes_kind kind;
    uint32_t job;
} rp_lanes_step;

/* lanes >= 1 lanes over q >= 1 slots. 0, or -1 out of memory. */
int rp_lanes_init(rp_lanes *l, uint32_t lanes, uint32_t q);
void rp_lanes_fini(rp_lanes *l);

/* A new run of count jobs (the previous run done: rp_lanes_done). */
void rp_lanes_start(rp_lanes *l, uint32_t count);

/* lane's next step: its next job if decoded, else the next undecoded job
 * if its slot is free (RP_LANES_WARM instead when would_wait, non-NULL,
 * says decoding it would wait for another thread), else none. */
rp_lanes_step rp_lanes_pick(rp_lanes *l, uint32_t lane, bool (*would_wait)(void *ctx, uint32_t job), void *ctx);

/* lane applied job (failed: it could not; the lanes stop there). True when
 * this is the first failure at or before job (the caller keeps its message). */
bool rp_lanes_applied(rp_lanes *l, uint32_t lane, uint32_t job, bool failed);

/* job decoded into its slot (a failure to decode is reported by the lanes'
 * apply step: rp_lanes_applied failed). */
void rp_lanes_decoded(rp_lanes *l, uint32_t job);

/* The warm step for job done (did: it found something to prepare). The next
 * step: RP_LANES_DECODE of job when nothing was prepared and job is still the
 * next to decode with its slot free (claimed now: decoding it waits, but
 * nothing else can be done), else RP_LANES_NONE (pick again: others may have
 * moved on while the lock was let go). */
rp_lanes_step rp_lanes_warmed(rp_lanes *l, uint32_t job, bool did);

/* Every lane is past stop_at and no step is out: the run is over. */
bool rp_lanes_done(const rp_lanes *l);

#endif
