/*
 * exec_internal.h - private structures of the functional machine (emu/exec).
 *
 * Not part of the public interface: only the emu/exec sources and the exec unit tests
 * (tests/emu/4xx-*) include it.
 *
 * Allocation table: a sorted array of non-overlapping [base, base+size)
 * ranges, republished copy-on-write under m->mem_lock whenever an allocation
 * is made or freed (rare). Waves read it lock-free through the atomic pointer
 * m->table (acquire) and keep their last hit in a per-wave gcn_mem_cache.
 * A replaced table is retired and freed only when no launch is in flight
 * (m->launches_active == 0, seq_cst on both sides), because waves of a running
 * launch may still hold the old pointer; host-side lookups (gcn_mem_find)
 * take the mutex instead.
 */
#ifndef GCN_EXEC_INTERNAL_H
#define GCN_EXEC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "gcn_exec.h"
#include "../isa/gcn_wave.h"

#define GCN_MEM_ALIGN 256u          /* allocation alignment, bytes (hipMalloc guarantees 256) */
#define GCN_MAX_WG_ITEMS 1024u      /* work-items per workgroup (gfx803 limit) */
#define GCN_MAX_WAVES_PER_WG (GCN_MAX_WG_ITEMS / GCN_WAVE_LANES)
#define GCN_MAX_LDS (64u * 1024u)   /* LDS bytes per workgroup (GCN3 ISA manual Sec. 1.2: 64 KiB per CU) */

typedef struct gcn_mem_entry {
    uint64_t base, size;   /* size: bytes requested (>= 1) */
    uint64_t map_size;     /* bytes actually mapped (page multiple) */
    uint32_t device;
    trc_mem_kind kind;
} gcn_mem_entry;

typedef struct gcn_mem_table {
    size_t n;
    struct gcn_mem_table *next_retired;
    gcn_mem_entry e[];     /* sorted by base */
} gcn_mem_table;

/* Allocation lookup cache of a worker (w->mem_cache of all its waves): the
 * last GCN_MEM_CACHE_WAYS allocations hit, replaced round robin; emptied at
 * the start of every launch (allocations cannot be freed while a launch is in
 * flight, so entries stay valid for the launch). All zero: empty. */
#define GCN_MEM_CACHE_WAYS 4
typedef struct gcn_mem_cache {
    uint64_t base[GCN_MEM_CACHE_WAYS], end[GCN_MEM_CACHE_WAYS]; /* [base, end); end == 0: empty */
    uint32_t next;         /* way replaced next */
} gcn_mem_cache;

struct gcn_launch_job;

typedef struct gcn_worker {
    struct gcn_machine *m;
    uint32_t index;
    pthread_t thread;
    int started;
    trc_wg_rec *rec;       /* NULL when not recording */
    /* reusable per-workgroup storage */
    gcn_wave waves[GCN_MAX_WAVES_PER_WG];
    gcn_mem_cache cache;   /* shared by the worker's waves, reset per launch */
    uint32_t (*vgprs)[GCN_WAVE_LANES]; /* GCN_MAX_WAVES_PER_WG * 256 registers */
    uint8_t *lds;          /* GCN_MAX_LDS bytes */
    uint64_t n_instr;      /* of the current launch */
    uint64_t n_waves;
    atomic_int quiet;      /* gcn_sched.c: quiet rounds in a row; -1: holds no workgroup */
} gcn_worker;

struct gcn_machine {
    gcn_machine_config cfg;

    /* memory */
    pthread_mutex_t mem_lock;
    _Atomic(gcn_mem_table *) table;
    gcn_mem_table *retired;           /* under mem_lock */
    atomic_int launches_active;
    /* Freed mappings kept reserved (pages dropped with MADV_DONTNEED) so that
     * an address is not handed out again for the next GCN_MEM_QUARANTINE
     * frees: the emulator runs launches one after another, but a replay runs
     * kernels of different GPUs concurrently, and must never see two live
     * buffers (e.g. two launches' kernarg segments) at one address. Ring under
     * mem_lock. */
#define GCN_MEM_QUARANTINE 256
    struct { void *p; uint64_t size; } quarantine[GCN_MEM_QUARANTINE];
    uint32_t quarantine_next;
    /* Deterministic device addresses: device d allocates upward from
     * GCN_VA_BASE + d * GCN_VA_WINDOW (under mem_lock), never reusing an
     * address, so that the same program gives the same addresses (and the
     * same trace) run after run and whatever the thread count. When the window
     * is full or the range is taken, mmap chooses (still correct). */
#if defined(__SANITIZE_ADDRESS__)
    /* AddressSanitizer's high shadow memory ends at 0x10007fff7fff on x86-64:
     * the windows start above it (else every allocation falls back to mmap's
     * placement and addresses are no longer deterministic) */
#define GCN_VA_BASE   0x100100000000ull /* 16 TiB + 4 GiB */
#else
#define GCN_VA_BASE   0x100000000000ull /* 16 TiB */
#endif
#define GCN_VA_WINDOW 0x010000000000ull /* 1 TiB per device */
    uint64_t va_next[64];

    /* trace writer event API is single-threaded */
    pthread_mutex_t trace_lock;

    /* worker pool */
    pthread_mutex_t pool_lock;
    pthread_cond_t pool_wake;         /* a job was posted or shutdown */
    pthread_cond_t pool_done;         /* a worker finished its part of the job */
    struct gcn_launch_job *job;       /* current job, under pool_lock */
    uint64_t job_seq;                 /* incremented per job */
    uint32_t workers_busy;
    int shutdown;
    uint32_t n_workers;
    gcn_worker *workers;

    uint64_t dispatch_id;             /* next AQL dispatch id */

    /* gcn_machine_interrupt: the stop flag of the launch in flight (NULL:
     * none) and the signal that stopped it (0: none) */
    _Atomic(atomic_int *) stop_flag;
    atomic_int interrupt;
};

struct gcn_module {
    gcn_code_object *co;
    gcn_program *prog;
    /* per co->kernels[i]: gcn_program_sync_reasons of its entry (0: none)
     * and the first such instruction's ELF vaddr, found once at load */
    struct gcn_kernel_sync { uint32_t reasons; uint64_t pc; } *kernel_sync;
    uint8_t *image;        /* device memory holding the image (kind TRC_MEM_CODE) */
    int trace_co_id;       /* -1 when not recording */
};

/* One dispatch in flight (gcn_launch.c). */
struct gcn_launch_job {
    gcn_machine *m;
    const gcn_module *mod;
    const gcn_kernel *k;
    const gcn_launch_params *p;
    uint32_t n_wg;
    uint32_t wg_items, waves_per_wg;
    uint32_t lds_size, n_vgpr, private_size, mode;
    uint64_t scratch_base, slice;
    uint64_t scratch_size;
    uint64_t dispatch_ptr, queue_ptr, kernarg_ptr, dispatch_id;
    uint32_t kernel_id;
    int recording;
    /* the kernel may wait on other workgroups (gcn_program_sync_reasons):
     * worker 0 alone runs it, so its interleaving does not depend on the
     * number of workers (gcn_worker_run_job) */
    int serial;
    _Atomic uint32_t next_wg;
    /* residency and forward progress (gcn_sched.c) */
    uint32_t max_resident;        /* workgroups the GPU holds at once */
    _Atomic uint32_t resident;
    _Atomic uint64_t epoch;       /* bumped by every round that made progress */
    atomic_int deadlock;          /* the dispatch failed as a deadlock: workers report their waves */
    _Atomic uint32_t report_lines;
    atomic_int stop;
    pthread_mutex_t err_lock;
    gcn_launch_status status;
    char message[512];
};

/* Initial state of wave wi of workgroup wg_lin (id wg_id) per AMDGPUUsage
 * "Initial Kernel Execution State": SGPRs, VGPR work-item ids, EXEC, MODE. */
void gcn_wave_init_state(gcn_worker *wk, const struct gcn_launch_job *job, gcn_wave *w, uint32_t wi,
                         uint32_t wg_lin, const uint32_t wg_id[3], struct gcn_wg *wg);

/* Lock-free allocation lookup for waves: entry containing [addr, addr+len)
 * copied into *out; returns 0 (and *partial set when the range starts inside
 * an allocation but runs past its end) when none. Only valid while the caller
 * is part of a launch in flight (m->launches_active > 0); host-side code uses
 * gcn_mem_find, which locks. */
int gcn_mem_lookup(gcn_machine *m, uint64_t addr, uint64_t len, gcn_mem_entry *out,
                   int *partial);

/* First error of a dispatch wins: status and one-line message; stops the
 * dispatch (job->stop). */
void gcn_job_error(struct gcn_launch_job *job, gcn_launch_status st, const char *msg);

/* Launch status of a wave that stopped with an error; 0 when st is no error. */
int gcn_wave_error_status(gcn_wave_status st, gcn_launch_status *out);

/* Instructions a wave runs before it yields to the other resident waves (an
 * estimate: about 0.1 s of emulation; gcn_wave.h "Forward progress"). */
#define GCN_SCHED_SLICE (1ull << 22)

/* A wave yielded (status SPIN, or SLEEP with stuck set): 1 when it is quiet,
 * i.e. stuck with the same state hash as at its previous yield (nothing it
 * reads changed); records the state for the next yield. */
int gcn_sched_quiet_yield(gcn_wave *w);

/* A worker's part of a (non-cooperative) dispatch: residency, yields and the
 * deadlock test (gcn_sched.c). */
void gcn_sched_run(gcn_worker *wk, struct gcn_launch_job *job);

/* Free retired tables if no launch is in flight. */
void gcn_mem_reclaim(gcn_machine *m);

/* Record one writer event under the trace lock; 0 or -1. No-op without trace. */
int gcn_trace_event(gcn_machine *m, const trc_event *ev);

/* Initial HW_REG_MODE from the kernel descriptor (ISA manual Sec. 3.5.2:
 * FP_ROUND [3:0], FP_DENORM [7:4], DX10_CLAMP [8], IEEE [9]). */
uint32_t gcn_initial_mode(const gcn_kernel_desc *kd);

/* Scratch V# word 3 for the private segment buffer, as ROCr sets it for GFX8:
 * DST_SEL XYZW, NUM_FORMAT UINT, DATA_FORMAT 32, ELEMENT_SIZE 4 bytes,
 * INDEX_STRIDE 64, ADD_TID_ENABLE. */
#define GCN_SCRATCH_RSRC_WORD3 0x00EA4FACu

/* The machine a wave belongs to (set by the launch in w->wg). */
gcn_machine *gcn_wave_machine(const gcn_wave *w);

/* Workgroup context pointed to by gcn_wave.wg. */
struct gcn_wg {
    gcn_machine *m;
};

#endif
