/*
 * rp_sweep.h - configuration sweeps: one trace replayed through many points
 * of a parameter space (mgpu-replay --sweep SWEEP.ini TRACE), on worker
 * threads and optionally over MPI ranks. User documentation: docs/sweeps.md.
 *
 * A sweep file (INI, parsed with libinih):
 *
 *   [sweep]
 *   base = r9nano            ; preset name or .ini path; a list sweeps presets ("topo")
 *   gpus = 1,2,4             ; optional: topo.gpus values
 *   mode = cross             ; cross (cross product, default) or list (zipped)
 *   [params]
 *   l2.size = 1MiB,2MiB,4MiB
 *   link.bandwidth = 16GB/s..128GB/s*2     ; geometric range: 16,32,64,128 GB/s
 *   l2.latency = 50cycles..100cycles+25cycles  ; arithmetic range
 *
 * Dimensions are ordered topo, gpus, then [params] keys in file order; in
 * cross mode the last dimension varies fastest (point index = mixed-radix
 * number). In list mode every dimension has the same number of values N (or
 * one value, repeated) and point i takes the i-th value of each.
 *
 * Every value of every key is checked with rp_config_apply while the file is
 * read (errors name file:line and key), and every point's configuration with
 * rp_config_validate, before anything runs.
 *
 * Ownership: rp_sweep_load returns an object freed by rp_sweep_free.
 * Thread-safety: a loaded rp_sweep is read-only and may be shared by threads.
 * Errors: 0 or -1 with a one-line message in err.
 */
#ifndef RP_SWEEP_H
#define RP_SWEEP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rp_config.h"
#include "traceformat/trc.h"

/* Most values one key may expand to, and most points of a sweep. */
#define RP_SWEEP_MAX_VALUES 4096
#define RP_SWEEP_MAX_POINTS 1000000

/* Expand one value list: comma-separated items, each a plain value or a
 * range "A..B" (step +1), "A..B+S" (arithmetic, S > 0) or "A..B*F"
 * (geometric, F > 1, A > 0). Range endpoints are a number with an optional
 * unit suffix (both the same: "16GB/s..128GB/s", "50cycles..100cycles"); S is
 * a number with that suffix or none. Values up to B inclusive are produced,
 * formatted as number + suffix ("32GB/s", "75cycles"). On success *vals
 * holds *n malloc'd strings (free with rp_sweep_free_values). */
int rp_sweep_expand(const char *spec, char ***vals, size_t *n, char *err, size_t errlen);
void rp_sweep_free_values(char **vals, size_t n);

/* Finds a preset by name (or accepts a path): writes the file path to out;
 * returns 0, or -1 if not found. */
typedef int (*rp_sweep_preset_fn)(const char *name, char *out, size_t n, void *ctx);

typedef struct rp_sweep_dim {
    char key[96];   /* "topo" (presets), "topo.gpus", or a parameter key */
    char col[96];   /* CSV column: "topo", "gpus", or the key */
    int line;       /* line in the sweep file (0: implicit) */
    size_t n;
    char **vals;    /* as written / expanded */
} rp_sweep_dim;

typedef struct rp_sweep {
    char path[1024];
    int cross;              /* 1: cross product; 0: zipped lists */
    rp_sweep_dim *dims;     /* dims[0] is "topo"; dims[1] is "topo.gpus" if gpus are swept */
    size_t n_dims;
    rp_config *bases;       /* the loaded preset of each dims[0] value */
    size_t n_points;
} rp_sweep;

/* Parse path, expand the dimensions, load the presets (via resolve) and
 * validate every point. NULL with a message in err. */
rp_sweep *rp_sweep_load(const char *path, rp_sweep_preset_fn resolve, void *ctx, char *err, size_t errlen);
void rp_sweep_free(rp_sweep *sw); /* accepts NULL */
/* Value index of dimension d in point i. */
size_t rp_sweep_value_index(const rp_sweep *sw, size_t i, size_t d);
static inline const char *rp_sweep_value(const rp_sweep *sw, size_t i, size_t d)
{
    return sw->dims[d].vals[rp_sweep_value_index(sw, i, d)];
}
/* The configuration of point i (preset, then gpus, then [params] in order). */
int rp_sweep_point_config(const rp_sweep *sw, size_t i, rp_config *out, char *err, size_t errlen);

/* Outcome of one point. Counts are whole-run totals over all GPUs. */
enum rp_sweep_status { RP_SWEEP_PENDING = 0, RP_SWEEP_OK, RP_SWEEP_MISMATCH, RP_SWEEP_ERROR };
typedef struct rp_sweep_row {
    uint64_t index;
    int32_t status;          /* rp_sweep_status */
    int32_t reused;          /* 1: numbers taken from an existing run-<index>.json */
    uint32_t gpus, kernels;
    uint64_t period_ps;      /* GPU clock period */
    uint64_t time_ps;        /* simulated time of the whole host timeline */
    uint64_t kernel_ps;      /* sum over kernels of (end - start) */
    uint64_t kernel_cycles;  /* sum over kernels of their cycles */
    uint64_t instructions;   /* the kernels' wavefront instructions (with --sample: those skipped included) */
    uint64_t skipped;        /* of those, skipped by a sampled replay (sample.enable) */
    uint64_t bound_ps;       /* the sampled kernels' error bounds summed (0 without sampling) */
    uint32_t sampled_kernels; /* kernels sampled at any level */
    uint64_t l1v_hits, l1v_accesses, l2_hits, l2_accesses;
    uint64_t dram_bytes, link_bytes;
    uint64_t mismatches;     /* load + LDS + D2H mismatches + trace-walk errors */
    uint64_t atomic_diffs;   /* order-dependent atomic return differences (not errors) */
    double wall_s;           /* replay wall time (0 when reused); never in the CSV */
} rp_sweep_row;

typedef struct rp_sweep_opts {
    const char *trace_path;  /* recorded in the JSON files */
    const char *dir;         /* output directory (created) */
    unsigned jobs;           /* worker threads (>= 1) */
    unsigned rank, nranks;   /* run points with index % nranks == rank */
    FILE *log;               /* progress lines; NULL = silent */
} rp_sweep_opts;

typedef struct rp_sweep_summary {
    size_t mine, run, reused, errors, mismatches;
    double wall_s, cpu_s;    /* wall time of the whole run; sum of per-point replay times */
} rp_sweep_summary;

/* Replay this rank's points on o->jobs threads sharing the reader rd. Each
 * point's stats go to DIR/run-<index>.json (rp_sim_write_json plus a "sweep"
 * object, written to a temporary file and renamed); a point whose JSON exists,
 * is complete and matches the point's configuration and trace is not run
 * again, its numbers are reused. rows has sw->n_points entries; this rank's
 * are filled. Returns 0, or -1 (cannot create DIR / start threads) with err;
 * a failing point is a row with status RP_SWEEP_ERROR (message on o->log). */
int rp_sweep_run(const rp_sweep *sw, trc_reader *rd, const rp_sweep_opts *o, rp_sweep_row *rows,
                 rp_sweep_summary *sum, char *err, size_t errlen);

/* Write DIR/results.csv style output to path (temporary file + rename): a
 * header, then one row per point in index order. Columns: index, topo, gpus,
 * the other swept keys, status, kernels, cycles, time_ps, kernel_cycles,
 * kernel_time_ps, instructions, ipc, l1v_hit_rate, l2_hit_rate, dram_bytes,
 * link_bytes, mismatches. */
int rp_sweep_write_csv(const rp_sweep *sw, const rp_sweep_row *rows, const char *path, char *err,
                       size_t errlen);

/* ---- MPI (replay/sweep_mpi.c; works without MPI when not under mpirun) ---- */

/* 1 when the process was started by mpirun/mpiexec with more than zero
 * ranks (OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK in the environment). */
int rp_mpi_launched(void);
/* Initialise MPI (MPI_THREAD_FUNNELED: only the main thread calls MPI).
 * 0, or -1 with err (e.g. built without MPI). */
int rp_mpi_init(int *argc, char ***argv, unsigned *rank, unsigned *size, char *err, size_t errlen);
/* Ranks on this node (for the default job count); 1 without MPI. */
unsigned rp_mpi_local_size(void);
/* Logical OR of flag over all ranks. */
int rp_mpi_any(int flag);
/* Gather the rows with index % size == r from every rank r into rank 0's
 * rows (n entries). 0 or -1. */
int rp_mpi_gather_rows(rp_sweep_row *rows, size_t n, unsigned rank, unsigned size, char *err, size_t errlen);
void rp_mpi_finalize(void);

#endif
