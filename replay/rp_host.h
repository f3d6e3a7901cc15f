/*
 * rp_host.h - the host timeline (host.c): the trace's host events (allocations, copies,
 * memsets, launches, synchronisations) replayed in program order, timed on the
 * host links, launching kernels on the dispatchers.
 */
#ifndef RP_HOST_H
#define RP_HOST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rp_engine.h"
#include "traceformat/trc.h"

typedef struct rp_sim rp_sim;
typedef struct rp_cu rp_cu;
typedef struct rp_wave rp_wave;
typedef struct rp_wg rp_wg;
typedef struct rp_kernel rp_kernel;
typedef struct rp_part rp_part;

/* Timing state of the host timeline (host.c). */
typedef struct rp_host_tl {
    rp_time wait_until;       /* the current event's operation (or launch call) ends at */
    uint8_t phase;            /* 0: current event not started; 1: started, waiting for wait_until */
    rp_time gpu_busy_until[64]; /* per GPU: end of its latest copy/memset (asynchronous ones included) */
    struct rp_stream_busy {   /* per GPU and stream: end of the stream's latest copy/memset */
        uint32_t gpu, stream;
        rp_time until;
    } *sbusy;
    size_t n_sbusy, cap_sbusy;
    struct rp_copy_span {     /* every copy and memset (not runtime INIT), for the per-stream statistics */
        uint32_t stream, gpu;
        rp_time start, end;
        uint64_t bytes;
        size_t ev;            /* its trace event index */
    } *cspan;
    size_t n_cspan, cap_cspan;
    uint32_t *nonblocking;    /* streams declared hipStreamNonBlocking (trace 1.3) */
    size_t n_nonblocking;
    struct rp_hstream {       /* per stream: its operations deferred in stream order (trace event indices) */
        uint32_t stream;
        size_t *ev, head, n, cap;
    } *hs;
    size_t n_hs;
    struct rp_sdma {          /* per GPU and copy engine (host.sdma_engines): g * engines + k */
        rp_time free_at;      /* its last transfer ends */
        uint64_t copies, bytes;
        rp_time busy_ps;
    } *sdma;                  /* NULL until the first copy on an engine */
    size_t gap_event;         /* host.gap_percent: 1 + the event whose recorded host gap is running (0: none) */
    rp_time gap_until;        /* ... until then */
    uint64_t st_copies, st_copy_bytes, st_copy_ps, st_launches, st_memsets;
    rp_time st_host_gap_ps;   /* recorded host time replayed between calls */
} rp_host_tl;

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

#endif
