/*
 * rp_config.h - replay configuration: every parameter declared once (table in
 * config.c: name, type, default, bounds, unit, description), INI files via
 * libinih with dotted keys ("l2.latency = 70cycles"), units (1GHz, 16KiB,
 * 16GB/s, 64B/cycle, 100ns, 300cycles), --set key=value overrides, unknown
 * keys rejected with a "did you mean" suggestion (STYLE.md #12).
 *
 * Errors: functions return 0 or -1 with a one-line message in err naming the
 * file, line, key and what is wrong.
 */
#ifndef RP_CONFIG_H
#define RP_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "rp_engine.h"

/* A latency given either in cycles of the owning component's clock or in
 * absolute time. */
typedef struct rp_lat {
    uint64_t v;     /* cycles, or picoseconds */
    uint8_t cycles; /* 1: v is cycles */
} rp_lat;
static inline rp_time rp_lat_ps(rp_lat l, rp_clock c) { return l.cycles ? rp_cycles(c, l.v) : l.v; }

/* A bandwidth in bytes per second or bytes per cycle of the owner's clock. */
typedef struct rp_bw {
    uint64_t v;
    uint8_t per_cycle;
} rp_bw;
static inline uint64_t rp_bw_Bps(rp_bw b, rp_clock c)
{
    return b.per_cycle ? b.v * (1000000000000ull / c.period_ps) : b.v;
}

enum rp_topo_kind { RP_TOPO_SINGLE = 0, RP_TOPO_UNIFIED, RP_TOPO_DISCRETE };

typedef struct rp_config {
    char topo_name[64];
    uint32_t topo_kind;      /* rp_topo_kind */
    uint32_t gpus;
    uint64_t gpu_freq;       /* Hz */
    uint32_t shader_arrays, cus_per_sa;
    uint32_t simds, wave_slots, vgprs, sgprs;
    uint64_t lds_size;
    uint32_t salu_cycles, valu_cycles, valu_f64_cycles, valu_trans_cycles;
    uint32_t vmem_issue_cycles, smem_issue_cycles;
    rp_lat lds_latency;
    uint32_t lds_banks;
    rp_lat barrier_latency;
    rp_lat dispatch_latency;
    uint32_t dispatch_cycles; /* per workgroup, at least */
    uint32_t dispatch_hw_queues;
    uint32_t dispatch_wave_cycles; /* per wavefront of a workgroup (the larger of the two counts) */
    uint64_t l1v_size; uint32_t l1v_assoc, l1v_line, l1v_mshrs; rp_lat l1v_latency;
    uint64_t l1s_size; uint32_t l1s_assoc, l1s_mshrs; rp_lat l1s_latency;
    uint64_t l1i_size, l1i_launch_prefetch; uint32_t l1i_assoc, l1i_mshrs; rp_lat l1i_latency;
    uint32_t ibuffer_entries, fetch_bytes, fetch_ahead, decode_cycles, l1v_bypass;
    uint64_t l2_size; uint32_t l2_banks, l2_assoc, l2_mshrs; rp_lat l2_latency;
    uint64_t l2_interleave;
    rp_lat noc_latency; rp_bw noc_bandwidth; uint32_t header_bytes;
    /* address translation (tlb.c) */
    uint32_t tlb_enable; uint64_t tlb_page_size, tlb_host_page_size;
    uint32_t tlb_l1v_entries, tlb_l1v_ways, tlb_l1v_mshrs; rp_lat tlb_l1v_latency;
    uint32_t tlb_l1s_entries, tlb_l1s_ways, tlb_l1s_mshrs; rp_lat tlb_l1s_latency;
    uint32_t tlb_l2_entries, tlb_l2_ways, tlb_l2_mshrs; rp_lat tlb_l2_latency;
    uint32_t tlb_walkers, tlb_levels, tlb_pwc_entries; rp_lat tlb_walk_level_latency, tlb_iommu_latency;
    /* unified memory across GPUs (um.c) */
    char um_policy[64];       /* home | interleave | first-touch | on-fault | access-counter */
    uint64_t um_page_size; rp_lat um_fault_latency, um_shootdown_latency; uint32_t um_counter_threshold;
    uint32_t um_replicate;
    uint32_t dram_channels; rp_lat dram_latency; rp_bw dram_bandwidth;
    uint64_t dram_interleave;
    /* DRAM channel model (dram.c); timings in time or cycles of dram.freq */
    uint64_t dram_freq;       /* Hz (uint64: PT_FREQ fields are printed as 64-bit) */
    uint32_t dram_banks, dram_queue_depth, dram_row_size, dram_bank_interleave;
    char dram_page_policy[64]; /* open | closed */
    char dispatch_policy[64];  /* fifo | interleave */
    uint32_t sample_enable, sample_tolerance, sample_window, sample_warmup, sample_stable, sample_kernels,
        sample_period, sample_period_growth, sample_alike_groups, sample_kernels_stream, sample_tail,
        sample_alike_vectors, sample_max_bound; /* sample.c */
    uint32_t sample_waves, sample_wave_warmup, sample_wave_measure, sample_wave_tail, sample_wave_min; /* sample.c */
    rp_lat dram_tCL, dram_tCWL, dram_tRCD, dram_tRP, dram_tRAS, dram_tCCD, dram_tRRD, dram_tFAW;
    rp_lat dram_tWR, dram_tRTP, dram_tREFI, dram_tRFC;
    uint64_t gpu_interleave;
    rp_lat link_latency; rp_bw link_bandwidth;
    char net_kind[64];        /* interconnect.kind: pcie-bus, pcie-tree, p2p-ring, p2p-all (parsed by net.c) */
    uint32_t net_gpus_per_switch;
    rp_lat pcie_hop_latency; rp_bw pcie_bandwidth; /* pcie-tree: per link */
    rp_lat p2p_latency; rp_bw p2p_bandwidth;       /* p2p-ring / p2p-all: per link and direction */
    rp_lat host_link_latency; rp_bw host_link_bandwidth;
    rp_lat host_copy_overhead, host_launch_overhead;
    uint32_t host_sdma_engines;  /* copy engines per GPU */
    uint32_t host_gap_percent;   /* recorded host time between calls replayed, in percent */
    rp_lat watchdog;
    uint32_t gpu_partitions;      /* sim.gpu_partitions: partitions per GPU (1: the GPU is one) */
    uint32_t dram_partition;      /* sim.dram_partition: 1 = each GPU's DRAM channels are a partition of their own */
    uint32_t l2_partitions;       /* sim.l2_partitions: S >= 1 = each GPU's L2 banks in S partitions of their own */
    rp_lat cas_hold_max;          /* sim.cas_hold_max: how long an L2 holds a compare-and-swap for its recorded turn */
    uint32_t await_max_polls;     /* sim.await_max_polls: one await's iterations before a wave is stopped */
    uint32_t check_print;
    uint32_t debug_skip_l2_flush; /* test hook: 1 = the L2 write-back flush writes nothing back */
    uint32_t debug_skip_ds2_write; /* test hook: 1 = the LDS drops ds_write2's second element */
} rp_config;

/* Set all parameters to their defaults. */
void rp_config_defaults(rp_config *c);
/* Load a preset by name (r9nano, m-sgpu, u-mgpu, d-mgpu: files in dir) or an
 * INI file path. dir may be NULL (then only paths work). */
int rp_config_load_file(rp_config *c, const char *path, char *err, size_t errlen);
/* The same; `[topo] base = NAME` not found next to the file is looked up in
 * preset_dir (the installed presets: mgpu-replay passes the directory where
 * it found r9nano.ini). Non-regular files and files over 1 MiB are refused. */
int rp_config_load_file_ex(rp_config *c, const char *path, const char *preset_dir, char *err, size_t errlen);
/* Apply one "key=value" (the --set syntax). */
int rp_config_set(rp_config *c, const char *kv, char *err, size_t errlen);
/* Apply key and value; origin names where it came from, for messages. */
int rp_config_apply(rp_config *c, const char *key, const char *value, const char *origin,
                    char *err, size_t errlen);
/* Check cross-parameter constraints (powers of two, divisibility). */
int rp_config_validate(const rp_config *c, char *err, size_t errlen);

/* Print the parameter table (--list-params), as plain text or Markdown. */
void rp_config_list(FILE *f, int markdown);
/* Write the effective value of every parameter as "key = value" lines or
 * call fn for each (used for the stats JSON). */
void rp_config_foreach(const rp_config *c, void (*fn)(void *arg, const char *key, const char *val),
                       void *arg);

/* Unit parsers (exposed for tests). Return 0 or -1. */
int rp_parse_size(const char *s, uint64_t *out);      /* 16KiB, 2MiB, 64B, 64 */
int rp_parse_freq(const char *s, uint64_t *out);      /* Hz */
int rp_parse_lat(const char *s, rp_lat *out);         /* 100ns, 300cycles, 1us, 500ps */
int rp_parse_bw(const char *s, rp_bw *out);           /* 16GB/s, 64B/cycle */

#endif
