/*
 * rp_sim.h - the replay of one trace on one machine, as drivers see it
 * (mgpu-replay, sweeps, tests): an opaque rp_sim behind create / run /
 * report / destroy. What it is made of (components, partitions, links) is
 * private to replay/ (rp_sim_internal.h and the component headers).
 *
 * Use: s = rp_sim_create(cfg, reader, out); rp_sim_set_threads(s, T);
 * rp_sim_run(s); rp_sim_report / rp_sim_write_json / rp_sim_get_summary;
 * rp_sim_destroy(s). Results (statistics, data check, output) do not depend
 * on the thread count. One rp_sim is used by one thread at a time (it runs
 * its own worker threads inside rp_sim_run).
 */
#ifndef RP_SIM_H
#define RP_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rp_config.h"
#include "rp_engine.h"
#include "rp_hooks.h"

#include "traceformat/trc.h"

typedef struct rp_sim rp_sim;
typedef struct rp_timeline rp_timeline;

/* Counters of the data check (DESIGN.md Sec. 6): values the timing model's
 * memory returned compared with what the emulator recorded. */
typedef struct rp_check {
    uint64_t loads_checked, load_mismatches;
    uint64_t loads_unrecorded; /* load lanes whose values the trace does not hold (private memory recorded
                                * without gcn3-emu --scratch-data): not checked */
    uint64_t loads_hashed;    /* load lanes (VMEM and LDS) checked by their instruction's hash (trace 2.2,
                               * gcn3-emu --load-values hash); included in loads_checked / lds_checked */
    uint64_t atomics_checked, atomic_mismatches; /* atomic returns: order-dependent differences */
    uint64_t lds_checked, lds_mismatches, lds_unchecked;
    uint64_t d2h_checked, d2h_mismatches;       /* device-to-host copies, per 64-byte block */
    uint64_t walk_errors;     /* trace/program inconsistencies */
    uint64_t polls_checked, poll_changes; /* loads of awaits (trace 1.2) and those that saw memory change */
    uint64_t spin_iterations; /* wait iterations the replay polled (awaits: the model's waiting) */
    uint64_t wait_ps;         /* time waves spent in awaits (from arrival at the loop head to leaving it), summed */
    uint64_t await_give_ups;  /* awaits whose polls never read the recorded data (differences) */
    /* explained differences (classify.c), not counted in the mismatches above:
     * loads of locations another wave of the kernel writes (order), loads of
     * memory the runtime writes during kernels (adopted), D2H blocks whose
     * differing byte the last kernel wrote from several waves (order) */
    uint64_t load_order, load_adopted, d2h_order, d2h_adopted;
    uint64_t printed;
    uint64_t atomic_printed;
} rp_check;

/* What a driver prints after a run. */
typedef struct rp_sim_summary {
    const char *topo_name;
    uint32_t gpus, cus_per_gpu;
    uint64_t gpu_freq_hz;
    size_t kernels;
    uint64_t wavefront_instructions; /* replayed, all kernels */
    rp_time now_ps;           /* simulated time reached */
    uint64_t events;          /* events handled */
    uint32_t partitions, threads;
    uint64_t windows;         /* synchronisation windows run */
    rp_time lookahead_ps;     /* their length */
    uint64_t part_events;     /* events handled by the partitions (the host's own excluded) */
    uint64_t crit_events;     /* sum over windows of the most events one partition handled in it: the
                               * events of the critical path (part_events / crit_events bounds the
                               * speed-up of any --threads, as far as events cost alike) */
    rp_check check;           /* the data check, every partition's total */
} rp_sim_summary;

/* Build the machine described by cfg for the trace rd (not owned; it must
 * outlive the sim). out: where mismatch lines and walk errors go (NULL:
 * quiet). Returns the sim, or NULL with a one-line message in err. */
rp_sim *rp_sim_create(const rp_config *cfg, trc_reader *rd, FILE *out, char *err, size_t errlen);
/* Replay with `threads` worker threads (>= 1; default 1). Before rp_sim_run. */
void rp_sim_set_threads(rp_sim *s, uint32_t threads);

/* Progress of a run (rp_sim_set_progress). Counts, picoseconds, seconds. */
typedef struct rp_progress {
    uint64_t instr_done, instr_total;   /* wavefront instructions replayed / recorded in the trace
                                         * (awaits make the replayed count differ from the recorded) */
    uint32_t kernels_done, kernels_total;
    uint64_t sim_ps;                    /* simulated time */
    double wall_s;                      /* wall time since rp_sim_run started */
    int final;                          /* 1: the last call, when the run ends */
} rp_progress;

/* Call fn(arg, p) from the thread that runs rp_sim_run, between
 * synchronisation windows, at most every `every_s` seconds of wall time, and
 * once more when the run ends (p->final = 1). NULL fn: none (the default). */
void rp_sim_set_progress(rp_sim *s, void (*fn)(void *arg, const rp_progress *p), void *arg, double every_s);
/* Replay the whole host timeline. 0 on success (even with data mismatches;
 * see the summary's check), -1 on a fatal error (rp_sim_error). */
int rp_sim_run(rp_sim *s);
/* The message of the last fatal error ("" when none). */
const char *rp_sim_error(const rp_sim *s);
void rp_sim_get_summary(const rp_sim *s, rp_sim_summary *out);
/* Simulated time reached (ps) and events handled, over every partition. */
rp_time rp_sim_now(const rp_sim *s);
uint64_t rp_sim_events(const rp_sim *s);
/* Print the per-kernel summary table and the totals. */
void rp_sim_report(rp_sim *s, FILE *f);
/* Write the stats JSON (configuration, per-kernel and total counters, data
 * check). 0 or -1 (rp_sim_error). */
int rp_sim_write_json(rp_sim *s, const char *path, const char *trace_path);
/* The same with one more member, key: last (a sweep's point: sweep.c);
 * takes the reference to last (NULL: none). */
struct json_t;
int rp_sim_write_json_with(rp_sim *s, const char *path, const char *trace_path, const char *key, struct json_t *last);
/* Print every statistic the machine registered: name, unit, description. */
void rp_sim_list_stats(const rp_sim *s, FILE *f);
/* Attach an observer to an observation point (rp_hooks.h) before
 * rp_sim_run. 0, or -1 when the point has no room left. The data check's
 * reporter (the "mismatch:" lines) is attached to RP_HOOK_MISMATCH by
 * rp_sim_create. */
int rp_sim_observe(rp_sim *s, rp_hook_point p, rp_hook_fn fn, void *arg);
/* Timeline (timeline.c): Chrome trace-event JSON of the run, for Perfetto UI
 * and chrome://tracing: a process per GPU, a dispatcher track with a span
 * per kernel and a track per CU with a span per workgroup (kernel name and
 * workgroup id), in simulated microseconds. Attach before rp_sim_run (0, or
 * -1 out of memory); write after it (0, or -1 with rp_sim_error). At most
 * budget workgroup spans (0: RP_TIMELINE_BUDGET); beyond it the spans are
 * left out, each CU's busy time is written as a counter, and otherData says
 * how many were left out. The file is identical for any thread count. */
#define RP_TIMELINE_BUDGET 200000
int rp_sim_timeline(rp_sim *s, uint64_t budget);
int rp_sim_write_timeline(rp_sim *s, const char *path);
void rp_sim_destroy(rp_sim *s); /* accepts NULL */

#endif
