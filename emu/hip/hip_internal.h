/*
 * hip_internal.h - private state of gcn3-emu's HIP runtime (libamdhip64.so.5).
 *
 * The HIP API is process-global by definition (one set of devices, modules
 * and allocations per process), so the runtime keeps one `hip_rt` instance.
 * Per-thread state (current device, last error, pushed launch
 * configurations) is thread-local, as in the real runtime.
 *
 * Locking: rt.mu serialises everything that touches the machine or the trace
 * writer (gcn_launch and the trc_writer_* event calls require one caller at a
 * time). API functions take it through hip_enter()/hip_leave().
 *
 * Every exported function is listed in hip_api.def (STYLE.md #8).
 */
#ifndef HIP_INTERNAL_H
#define HIP_INTERNAL_H

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "../exec/gcn_exec.h"
#include "gcn/gcn_loader.h"

#define HIP_EXPORT __attribute__((visibility("default")))
#define HIP_MAX_GPUS 16

/* One __hipRegisterFatBinary wrapper (FACTS.md: 24 bytes). */
typedef struct hip_fatbin_wrapper {
    uint32_t magic;   /* 0x48495046 "HIPF" */
    uint32_t version; /* 1 */
    const void *bundle;
    void *reserved;
} hip_fatbin_wrapper;
#define HIP_FATBIN_MAGIC 0x48495046u

/* A registered code object (one per wrapper, or per hipModuleLoad). */
typedef struct hip_module {
    const void *bundle;
    gcn_code_object *co;  /* parsed at registration; owned until loaded */
    gcn_module *loaded;   /* loaded onto the machine at first launch (owns co) */
    gcn_ld_status ld_status;
    char ld_error[512];   /* why co is NULL (names the file holding the fat binary) */
    int reported;         /* ld_error printed once */
    struct hip_module *next;
} hip_module;

/* __hipRegisterFunction: host stub -> device kernel name. */
typedef struct hip_function {
    const void *host_fn;
    hip_module *mod;
    char *name;
} hip_function;

/* __hipRegisterVar: host shadow -> device symbol name. */
typedef struct hip_var {
    void *host_var;
    hip_module *mod;
    char *name;
    size_t size;
} hip_var;

struct ihipStream_t {
    uint32_t id;     /* 1.. ; 0 is the null stream */
    int device;
    unsigned flags;  /* hipStreamDefault / hipStreamNonBlocking */
    int priority;    /* as given, clamped to hipDeviceGetStreamPriorityRange */
};

struct ihipEvent_t {
    double t;        /* seconds (CLOCK_MONOTONIC) at the last hipEventRecord */
    int recorded;
    unsigned flags;  /* hipEventCreateWithFlags */
    int device;      /* of the stream it was last recorded on */
    uint32_t stream; /* stream id it was last recorded on */
    uint64_t trace_pos; /* trace events written before that hipEventRecord (a SYNC's until_event) */
};

typedef struct hip_alloc {
    void *p;
    size_t size;
    int device;
    int host;        /* hipHostMalloc (1), hipHostRegister (2) */
    int managed;     /* hipMallocManaged */
    unsigned flags;  /* hipHostMalloc / hipHostRegister / hipMallocManaged flags */
    void *user;      /* hipHostRegister: the program's range; p is its device-visible mirror */
    uint8_t *shadow; /* host-writable memory: contents the trace last saw (NULL when not recording) */
} hip_alloc;

typedef struct hip_rt {
    pthread_mutex_t mu;
    int init_ok;            /* machine created */
    int shutdown;           /* trace closed at exit: later calls are refused */
    char init_error[512];
    uint32_t n_gpus, n_threads;
    int quiet;
    volatile sig_atomic_t interrupt_signal; /* SIGINT/SIGTERM that stopped a kernel (0: none) */
    char *trace_path;
    int trace_created;        /* the trace path did not exist before this run opened it */
    trc_writer *trace;
    int trace_failed;       /* a trace error was reported */
    gcn_machine *m;
    hip_module *modules;
    hip_function *fns;
    size_t n_fns, cap_fns;
    hip_var *vars;
    size_t n_vars, cap_vars;
    hip_alloc *allocs;      /* hipMalloc/hipHostMalloc, for hipMemGetInfo/hipDeviceReset */
    size_t n_allocs, cap_allocs;
    uint64_t used[HIP_MAX_GPUS]; /* bytes allocated per device */
    uint32_t peer[HIP_MAX_GPUS]; /* bit j: device i may access device j */
    uint32_t next_stream_id;
    hipError_t sticky;      /* a kernel failure: returned by every later call */
} hip_rt;

extern hip_rt hip_rt_state;

/* R9 Nano facts (AMD product page; DESIGN.md Sec. 6): 64 CUs, 1 GHz engine
 * clock, 4 GiB HBM at 500 MHz on a 4096-bit bus, 2 MiB L2. */
#define HIP_DEV_MEM_BYTES ((uint64_t)4 << 30)

/* Initialise once (env, trace, machine); returns hipSuccess or the init error. */
hipError_t hip_init(void);
/* Lock rt.mu after hip_init(); returns non-success (unlocked) when the
 * runtime cannot serve calls (init failed, shut down). */
hipError_t hip_enter(void);
void hip_leave(void);
/* Record `e` as the calling thread's last error and return it. */
hipError_t hip_ret(hipError_t e);
int hip_current_device(void);
/* Write an event to the trace if recording; reports a writer failure once. */
void hip_trace_event(const trc_event *ev);
/* Trace events written so far (0 when not recording): where a hipEventRecord stands. */
uint64_t hip_trace_n_events(void);
/* Report a trace writer failure once (name of file + message). */
void hip_trace_failed(const char *msg);

/* gcn3-emu --timeline (hip_timeline.c): Chrome trace-event JSON of the host
 * events and the kernels' emulation spans. hip_tl_open(path) at init (NULL or
 * "": off); hip_tl_event(ev) for every host event (instants on the host's
 * stream tracks); hip_tl_kernel(...) one span per kernel, times from
 * hip_tl_now() (us of wall clock since open; 0 when off); hip_tl_close at
 * exit writes the file (-1 on a write error, reported on stderr). */
void hip_tl_open(const char *path);
int hip_tl_on(void);
double hip_tl_now(void);
void hip_tl_event(const trc_event *ev);
void hip_tl_kernel(uint32_t device, uint32_t stream, const char *name, const uint32_t grid[3],
                   const uint32_t wg_size[3], double t0_us, double t1_us, uint64_t waves, uint64_t wave_instructions,
                   const char *status);
int hip_tl_close(const char *command_line);
/* The stream a hipStream_t names: NULL for the null stream, the calling
 * thread's own stream on the current device for hipStreamPerThread (made on
 * first use), else s. s must have passed hip_stream_check. */
hipStream_t hip_stream_get(hipStream_t s);
/* Stream id of a hipStream_t (0 = the null stream); s must have passed
 * hip_stream_check. */
uint32_t hip_stream_id(hipStream_t s);

/* Live handles: every stream and event the program created and has not
 * destroyed. A call that takes one checks it first, so a destroyed or
 * foreign handle is an error, never a use after free (real HIP validates
 * them the same way). kind: HIP_H_STREAM or HIP_H_EVENT. */
enum { HIP_H_STREAM = 0, HIP_H_EVENT = 1 };
int hip_handle_add(int kind, const void *h);  /* 0, or -1 out of memory */
int hip_handle_del(int kind, const void *h);  /* 1 when it was live (now removed), else 0 */
int hip_handle_live(int kind, const void *h);
/* hipSuccess for the null stream, hipStreamPerThread and live streams;
 * hipErrorContextIsDestroyed otherwise (as ROCm's hip::isValid). */
hipError_t hip_stream_check(hipStream_t s);

/* Host-visible memory (hipHostMalloc, hipMallocManaged, hipHostRegister):
 * the host writes it without HIP calls. Before a launch (caller holds rt.mu)
 * registered ranges are copied to their mirrors and every host-visible
 * allocation whose bytes changed since the trace last saw them is recorded
 * as a COPY INIT, so a replay sees what the kernel saw; after the launch the
 * mirrors are copied back and the shadows updated (hip_memory.c). */
void hip_host_memory_before_launch(void);
void hip_host_memory_after_launch(void);

/* Cooperative dispatch: every workgroup resident at once (emu/exec/gcn_launch.c).
 * Declared here until emu/exec/gcn_exec.h carries it. */
gcn_launch_status gcn_launch_cooperative(gcn_machine *m, const gcn_module *mod, const gcn_kernel *k,
                                         const gcn_launch_params *p, gcn_launch_result *res);

/* Used by the stubs (hip_stubs.c does not include the HIP header). */
int hip_not_implemented(const char *name);

/* hip_hostcall.c: device printf/assert/malloc through the hostcall buffer.
 * Device address of `device`'s hostcall buffer (the hidden_hostcall_buffer
 * kernel argument), allocated at first use; also marks the start of a launch
 * for hip_hostcall_report_trap. 0 (message on stderr) when it cannot be
 * allocated. Caller holds rt.mu. */
uint64_t hip_hostcall_buffer(uint32_t device);
/* gcn_machine_config.on_wave_sleep: answers every pending hostcall packet.
 * Thread-safe; never takes rt.mu. */
void hip_hostcall_serve(void *arg);
/* After a launch failed with a trap: names the kernel and repeats the last
 * device fprintf(stderr) line of the launch (a failed assert's message). */
void hip_hostcall_report_trap(uint32_t device, const char *kernel);

#endif
