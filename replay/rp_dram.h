/*
 * rp_dram.h - a DRAM channel (dram.c): banks, rows, FR-FCFS scheduling, refresh.
 */
#ifndef RP_DRAM_H
#define RP_DRAM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rp_config.h"
#include "rp_engine.h"
#include "rp_stats.h"

typedef struct rp_sim rp_sim;
typedef struct rp_cu rp_cu;
typedef struct rp_wave rp_wave;
typedef struct rp_wg rp_wg;
typedef struct rp_kernel rp_kernel;
typedef struct rp_part rp_part;

/* ---- DRAM controller ------------------------------------------------------------ */

/* One DRAM channel (dram.c): banks with open rows, a request queue scheduled
 * FR-FCFS, per-bank command timing, the channel's data bus and refresh.
 * Timing only: the functional data lives in rp_fmem. All times in ps. */
#define RP_DRAM_MAX_BANKS 64

typedef struct rp_dram_spec {
    rp_clock clk;             /* command clock (R9 Nano HBM1: 500 MHz) */
    uint32_t line;            /* bytes per request (one cache line) */
    uint64_t bytes_per_s;     /* data bus of the channel; 0 = infinite */
    rp_time latency_ps;       /* controller + PHY fixed latency added to every response */
    uint32_t banks;           /* 1..RP_DRAM_MAX_BANKS */
    uint32_t queue_depth;     /* requests visible to the scheduler; more wait in the port */
    uint64_t row_size;        /* bytes per row (page) */
    uint64_t bank_interleave; /* consecutive blocks of this many bytes go to consecutive banks */
    uint64_t chan_interleave; /* channel-bit stripping: local = addr/(il*stride)*il + addr%il */
    uint64_t chan_stride;     /* channels sharing the interleave (1 = address is already local) */
    bool closed_page;         /* auto-precharge after every access */
    rp_time tCL, tCWL, tRCD, tRP, tRAS, tCCD, tRRD, tFAW, tWR, tRTP;
    rp_time tREFI, tRFC;      /* tREFI 0 = no refresh */
    rp_time refresh_phase;    /* refresh k (k >= 1) starts at phase + k * tREFI */
} rp_dram_spec;

typedef struct rp_dram_bank {
    uint64_t open_row;        /* row + 1; 0 = precharged */
    rp_time act_ok, col_ok, pre_ok; /* earliest ACT, RD/WR and PRE */
} rp_dram_bank;

typedef struct rp_dram {
    rp_component comp;
    rp_engine *eng;
    rp_port top;
    rp_link in;             /* into top */
    rp_dram_spec spec;
    rp_time burst_ps;       /* data-bus time of one line */
    rp_dram_bank bank[RP_DRAM_MAX_BANKS];
    rp_msg *q_head, *q_tail; /* scheduler queue, arrival order */
    uint32_t qn;
    rp_msg *d_head, *d_tail; /* scheduled, in completion order (m->arrive = response time) */
    uint32_t dn;
    rp_event ev, done_ev;
    rp_time next_pick, row_next, col_next, act_next, data_free;
    rp_time faw[4];         /* last four ACTs' time + tFAW (0 = none): the next ACT waits for the oldest */
    uint32_t faw_i;
    uint64_t refreshes_seen;
    /* statistics */
    uint64_t st_reads, st_writes, st_read_bytes, st_write_bytes, st_bytes;
    uint64_t st_row_hits, st_row_misses, st_row_conflicts, st_refreshes;
    uint64_t st_busy_cycles, st_queue_ps, st_access_ps;
} rp_dram;

/* Build a channel from spec (spec->banks <= RP_DRAM_MAX_BANKS, queue_depth >= 1).
 * Returns 0, or -1 when the spec is out of range. No allocation: nothing to free. */
int rp_dram_init_spec(rp_dram *d, rp_engine *e, const char *name, const rp_dram_spec *spec);
/* Fixed-latency channel without bank timing (one bank, no refresh): each
 * request is serialised at bytes_per_s (0 = infinite) and answered latency_ps
 * after its transfer. For component tests of the levels above. */
void rp_dram_init(rp_dram *d, rp_engine *e, const char *name, rp_time latency_ps, uint64_t bytes_per_s,
                  uint32_t line);
void rp_dram_register_stats(rp_dram *d, rp_stats *s);
/* The spec of channel ch from the dram.* parameters; gpu_clk converts
 * dram.latency and dram.bandwidth given per GPU cycle; chan_stride = channels
 * sharing the dram.interleave striping (channels x GPUs in U-MGPU). Refresh
 * phases are staggered across channels: phase = ch * tREFI / dram.channels. */
void rp_dram_spec_from_config(rp_dram_spec *sp, const rp_config *c, rp_clock gpu_clk, uint32_t ch,
                              uint64_t chan_stride);
/* Bank and row of a (global) address under spec. */
void rp_dram_map(const rp_dram_spec *spec, uint64_t addr, uint32_t *bank, uint64_t *row);

#endif
