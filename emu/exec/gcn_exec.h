/*
 * gcn_exec.h - the functional GCN3 machine: devices, device memory, kernel
 * dispatch onto a pthread pool of workgroup workers, and trace recording.
 *
 * The HIP runtime (emu/hip) is the only client. Memory model (DESIGN.md
 * Sec. 4): device allocations live in host virtual memory, so a device pointer
 * is a host pointer; an allocation table maps an address to its allocation and
 * device. Kernel accesses outside every allocation (and outside the LDS and
 * private apertures) are GPU memory faults: the launch fails with a message
 * naming kernel, workgroup, wavefront, PC, lane and address.
 *
 * Thread-safety: gcn_launch() blocks until the kernel finished; the runtime
 * calls it from one host thread at a time. Allocation functions are
 * thread-safe.
 */
#ifndef GCN_EXEC_H
#define GCN_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "gcn/gcn_loader.h"
#include "../../traceformat/trc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gcn_machine gcn_machine;

typedef struct gcn_machine_config {
    uint32_t n_gpus;      /* devices exposed, >= 1 */
    uint32_t n_threads;   /* worker threads, >= 1 */
    trc_writer *trace;    /* NULL: no recording. Not owned. */
    /* Called from a worker thread (any of them, concurrently) each time a
     * wave yields at s_sleep, before the wave resumes: host services that
     * device code polls for (the hostcall buffer of printf/assert/malloc)
     * run here. NULL: nothing to service. */
    void (*on_wave_sleep)(void *arg);
    void *on_wave_sleep_arg;
    /* 1: a kernel that runs longer than half a second shows a progress line on
     * stderr (workgroups done, resident, seconds), rewritten in place when
     * progress_tty, else one line per report; cleared (tty) when it ends. */
    int progress, progress_tty;
    /* Called with every host event the machine itself makes (allocations
     * and frees), recorded or not, from the allocating thread: the runtime's
     * timeline. NULL: none. */
    void (*on_event)(const trc_event *ev);
    /* 1: record every loop iteration, no awaits (GCN3EMU_NO_AWAITS=1: to
     * measure what awaits save; the replay then follows the recording's
     * interleaving of waits) */
    int no_awaits;
    /* 1: record the values of private (scratch) loads and stores too
     * (GCN3EMU_SCRATCH_DATA=1, gcn3-emu --scratch-data); 0: their addresses
     * only, the trace then says "none recorded" for their data (format 1.0's
     * load_len/store_len 0), see trc_wg_rec_scratch_data */
    int scratch_data;
    /* 1: plain loads record a hash of their values instead of the values
     * (GCN3EMU_LOAD_VALUES=hash, gcn3-emu --load-values hash; trace format
     * 2.2), see trc_wg_rec_hash_loads */
    int hash_loads;
    /* 1: LDS loads and stores record their addresses only, no values
     * (GCN3EMU_LDS_VALUES=none, gcn3-emu --lds-values none; trace format 2.3,
     * whose header must then say so), see trc_wg_rec_lds_data; 0: values too */
    int no_lds_values;
    /* 1: a load whose values equal the host image (the H2D and INIT copies
     * and memsets recorded so far) records TRC_MO_HOST instead of them
     * (GCN3EMU_HOST_IMAGE=on, the default; gcn3-emu --host-image; trace
     * format 2.6), see trc_wg_rec_host_image; 0: values always */
    int host_image;
    /* 1: kernels that may wait on other workgroups (gcn_program_sync_reasons)
     * run on every worker too (GCN3EMU_PARALLEL_WAITS=1, gcn3-emu
     * --parallel-waits): faster, but their interleaving and so their traces
     * then depend on the number of workers; 0: on worker 0 alone */
    int parallel_waits;
} gcn_machine_config;

/* NULL on failure (message in err). */
gcn_machine *gcn_machine_create(const gcn_machine_config *cfg, char *err, size_t errlen);
void gcn_machine_destroy(gcn_machine *m); /* accepts NULL */

/* Stop the kernel in flight because of signal `signo` (SIGINT, SIGTERM):
 * its waves stop at their next loop back-edge, every worker prints where its
 * waves are on stderr ("gcn3-emu: interrupted: kernel K: wg (x,y,z) wave W
 * ... at pc 0x..."), and the launch returns GCN_LAUNCH_INTERRUPTED.
 * Async-signal-safe (one lock-free atomic load and store). Returns 1 when a
 * launch was in flight, 0 when none (the caller handles the signal itself). */
int gcn_machine_interrupt(gcn_machine *m, int signo);

/* ---- Memory ---- */

typedef struct gcn_alloc_info {
    uint64_t base, size;  /* bytes */
    uint32_t device;
    trc_mem_kind kind;
} gcn_alloc_info;

/* Allocate `size` bytes (zeroed, 256-byte aligned) on `device`, recorded in the
 * trace as an ALLOC event. NULL when out of memory. */
void *gcn_mem_alloc(gcn_machine *m, uint32_t device, size_t size, trc_mem_kind kind);
/* gcn_mem_alloc with GCN_ALLOC_* flags (0: gcn_mem_alloc itself).
 * GCN_ALLOC_MANAGED: managed memory (hipMallocManaged), recorded as an ALLOC
 * with managed = 1 (trace format 2.1); only with kind TRC_MEM_DEVICE (else
 * NULL). Unknown flags: NULL. */
enum { GCN_ALLOC_MANAGED = 1u << 0 };
void *gcn_mem_alloc_ex(gcn_machine *m, uint32_t device, size_t size, trc_mem_kind kind, unsigned flags);
/* Free an allocation made by gcn_mem_alloc; -1 if p is not the base of one. */
int gcn_mem_free(gcn_machine *m, void *p);
/* Allocation containing [addr, addr+len); 0 when none (then *out untouched). */
int gcn_mem_find(gcn_machine *m, uint64_t addr, uint64_t len, gcn_alloc_info *out);

/* ---- Code objects and kernels ---- */

typedef struct gcn_module gcn_module; /* a code object loaded onto the machine */

/* Map the code object's segments into device memory, decode its .text once,
 * and store it in the trace. The module keeps `co` (takes ownership). */
gcn_module *gcn_module_load(gcn_machine *m, gcn_code_object *co, char *err, size_t errlen);
void gcn_module_unload(gcn_machine *m, gcn_module *mod); /* accepts NULL */
const gcn_code_object *gcn_module_co(const gcn_module *mod);
/* Device address of the loaded image's byte at ELF vaddr 0. */
uint64_t gcn_module_base(const gcn_module *mod);

typedef enum gcn_launch_status {
    GCN_LAUNCH_OK = 0,
    GCN_LAUNCH_FAULT,          /* memory fault: hipErrorIllegalAddress */
    GCN_LAUNCH_ILLEGAL_INSN,   /* invalid/unimplemented instruction: hipErrorLaunchFailure */
    GCN_LAUNCH_TRAP,           /* s_trap: hipErrorLaunchFailure */
    GCN_LAUNCH_BAD_CONFIG,     /* bad grid/workgroup/LDS: hipErrorInvalidConfiguration */
    GCN_LAUNCH_TRACE_ERROR,    /* the trace writer failed (disk full...) */
    GCN_LAUNCH_NOMEM,
    GCN_LAUNCH_DEADLOCK,       /* no wave can make progress (emu/exec gcn_sched.c): hipErrorLaunchTimeOut */
    GCN_LAUNCH_INTERRUPTED,    /* gcn_machine_interrupt (a signal) stopped the kernel */
} gcn_launch_status;

typedef struct gcn_launch_params {
    uint32_t device;
    uint32_t stream;
    uint32_t grid[3];      /* workgroups in x, y, z (HIP gridDim) */
    uint32_t wg_size[3];   /* work-items per workgroup (HIP blockDim) */
    uint32_t dynamic_lds;  /* bytes of dynamic shared memory */
    const void *kernarg;   /* kernarg segment contents, kernarg_size bytes, laid out per metadata */
    uint32_t kernarg_size;
} gcn_launch_params;

typedef struct gcn_launch_result {
    gcn_launch_status status;
    char message[512];        /* one line when status != OK */
    uint64_t wave_instructions; /* dynamic wavefront instructions executed */
    uint64_t waves;
    double seconds;           /* wall time of the emulation */
    /* GCN_SYNC_* (gcn_program_sync_reasons): the kernel may wait on other
     * workgroups, so one worker ran it (0: all workers); sync_pc: the ELF
     * vaddr of the first such instruction found */
    uint32_t sync_reasons;
    uint64_t sync_pc;
} gcn_launch_result;

/* Run one kernel to completion on the worker pool. */
gcn_launch_status gcn_launch(gcn_machine *m, const gcn_module *mod, const gcn_kernel *k,
                             const gcn_launch_params *p, gcn_launch_result *res);

#ifdef __cplusplus
}
#endif
#endif
