/*
 * rp_wgload.h - workgroup records loaded ahead on a spare thread (wgload.c).
 *
 * For a replay that runs one partition with --threads 2 or more: a helper
 * thread loads (trc_reader_load_wg) the next RP_WGLOAD_DEPTH workgroups of
 * the kernel whose workgroup the replay took last, in grid order, while the
 * replay runs. Results do not depend on it: a record is the same whoever
 * loads it.
 */
#ifndef RP_WGLOAD_H
#define RP_WGLOAD_H

#include "traceformat/trc.h"

#include <stdint.h>

/* Records held ahead at most (an estimate: a record of km at the 4x size is
 * tens of KiB; 8 keep the helper ahead of a replay that takes one every few
 * hundred microseconds) */
#define RP_WGLOAD_DEPTH 8
/* After its first RP_WGLOAD_PROBE records the helper stops when they took it
 * less than RP_WGLOAD_MIN_NS each on average: handing over small records
 * (vectoradd's) cost more than loading them (vectoradd at the bench size,
 * --threads 2 on the 2-core VM: 1.12-1.13 s without the helper, 1.18-1.33 s
 * with it; km's records take about 250 us each). Estimates. */
#define RP_WGLOAD_PROBE 64
#define RP_WGLOAD_MIN_NS 12000

typedef struct rp_wgload rp_wgload;

/* Start the helper on rd (thread-safe reader). NULL when no thread could be
 * started or out of memory: the replay then loads every record itself. */
rp_wgload *rp_wgload_start(trc_reader *rd);
/* Workgroup i of kernel kernel_id, as trc_reader_load_wg(rd, ...) returns it
 * (the caller frees it; NULL with a message in err when it cannot be
 * loaded): the helper's copy when it holds it (waiting while it loads it),
 * else loaded here. Then the helper loads ahead from i + 1. l NULL: loads
 * it here. Only one thread may call it (the replay's). */
trc_wg *rp_wgload_take(rp_wgload *l, trc_reader *rd, uint32_t kernel_id, uint32_t i, char *err, size_t errlen);
/* Records taken from the helper, and loaded by the caller instead. */
void rp_wgload_stats(rp_wgload *l, uint64_t *hits, uint64_t *misses);
/* Stop the helper and free what it holds; NULL is a no-op. */
void rp_wgload_stop(rp_wgload *l);

#endif
