/*
 * hip_runtime.c - runtime state, configuration, trace file, errors, devices.
 *
 * Configuration comes from environment variables set by the gcn3-emu
 * launcher (emu/gcn3-emu.c): GCN3EMU_GPUS (devices, default 1),
 * GCN3EMU_THREADS (emulator worker threads, default: online CPUs),
 * GCN3EMU_RECORD (trace path; no recording when unset), GCN3EMU_QUIET (no
 * per-kernel summary), GCN3EMU_CMDLINE (command line stored in the trace),
 * GCN3EMU_PROGRESS (1: a progress line for kernels that run longer than
 * half a second).
 *
 * Initialisation happens once, at the first HIP call (usually
 * __hipRegisterFatBinary from the program's constructors). The trace is
 * closed by an on_exit handler registered then: it runs after the program's
 * own exit handlers (the compiler's __hipUnregisterFatBinary and C++ static
 * destructors registered later) and sees the exit status, so a trace that
 * could not be completed turns a zero exit status into 1. HIP calls made after
 * that point are refused with hipErrorDeinitialized.
 *
 * Device properties model the AMD Radeon R9 Nano (Fiji, gfx803): 64 CUs,
 * 1000 MHz engine clock, 4 GiB HBM at 500 MHz on a 4096-bit bus, 2 MiB L2,
 * 64 KiB LDS per CU, 40 waves per CU (AMD R9 Nano product page; AMD GCN3 ISA
 * manual Sec. 1).
 */
#include "hip_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gcn3sim_version.h"

hip_rt hip_rt_state = {.mu = PTHREAD_MUTEX_INITIALIZER};
#define rt hip_rt_state

static _Thread_local int tls_device;
static _Thread_local hipError_t tls_last_error;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* ---- configuration ------------------------------------------------------- */

static int env_uint(const char *name, unsigned lo, unsigned hi, unsigned dflt, unsigned *out)
{
    const char *s = getenv(name);
    if (!s || !*s) {
        *out = dflt;
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < lo || v > hi) {
        snprintf(rt.init_error, sizeof rt.init_error,
                 "%s=\"%s\" is not a number in [%u, %u]", name, s, lo, hi);
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

static void read_cmdline(char *buf, size_t cap)
{
    const char *env = getenv("GCN3EMU_CMDLINE");
    if (env) {
        snprintf(buf, cap, "%s", env);
        return;
    }
    buf[0] = 0;
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (!f)
        return;
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = 0;
    for (size_t i = 0; i + 1 < n; i++)
        if (!buf[i])
            buf[i] = ' ';
}

/* The one line saying the recording failed (msg: the writer's error), then
 * what the program does (what_now). */
static void trace_failed_msg(const char *msg, const char *what_now)
{
    const char *path = rt.trace_path ? rt.trace_path : "?";
    if (!strncmp(msg, "trace: ", 7))
        msg += 7;
    if (strstr(msg, path)) /* the writer's messages name the file */
        fprintf(stderr, "gcn3-emu: recording failed: %s; recording stopped, %s\n", msg, what_now);
    else
        fprintf(stderr, "gcn3-emu: recording %s failed: %s; recording stopped, %s\n", path, msg, what_now);
}

static void at_exit(int status, void *arg)
{
    (void)arg;
    pthread_mutex_lock(&rt.mu);
    rt.shutdown = 1;
    int bad = 0;
    if (rt.trace) {
        if (trc_writer_close(rt.trace) != 0) {
            /* a write error while the compressors finished the last kernels
             * (trc_writer_end_kernel returns before they are in the file) */
            if (!rt.trace_failed)
                trace_failed_msg(trc_writer_error(rt.trace), "the program ran to its end");
            bad = 1;
        } else if (rt.trace_failed) {
            bad = 1;
        }
        /* The writer is not destroyed: emulator threads or late callers may
         * still hold it; the process is ending anyway. */
    }
    hip_tl_close(getenv("GCN3EMU_CMDLINE"));
    pthread_mutex_unlock(&rt.mu);
    /* The program ran as it would without recording: its exit status stands. */
    if (bad)
        fprintf(stderr,
                "gcn3-emu: trace %s is incomplete: `gcn3-trace salvage %s OUT.gtrace` recovers the kernels "
                "that ended before recording stopped\n",
                rt.trace_path, rt.trace_path);
    (void)status;
}

/* SIGINT / SIGTERM while a kernel runs: the emulator stops it and prints
 * where every resident wave is, the launch returns and the runtime exits with
 * 128 + the signal after closing the trace (hip_launch.c); between kernels
 * the signal acts as it would without us. Installed only over the default
 * disposition, so a program's own handlers stay in charge. */
static void on_signal(int sig)
{
    if (rt.m && gcn_machine_interrupt(rt.m, sig)) {
        rt.interrupt_signal = sig;
        return;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_signal_handlers(void)
{
    static const int sigs[] = {SIGINT, SIGTERM};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        sigaction(sigs[i], &sa, NULL);
    }
}

static void do_init(void)
{
    unsigned gpus, threads;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (env_uint("GCN3EMU_GPUS", 1, HIP_MAX_GPUS, 1, &gpus) ||
        env_uint("GCN3EMU_THREADS", 1, 1024, ncpu > 0 ? (unsigned)ncpu : 1, &threads))
        goto fail;
    rt.n_gpus = gpus;
    rt.n_threads = threads;
    const char *q = getenv("GCN3EMU_QUIET");
    rt.quiet = q && *q && strcmp(q, "0") != 0;
    hip_tl_open(getenv("GCN3EMU_TIMELINE"));
    const char *ldv = getenv("GCN3EMU_LDS_VALUES");
    if (ldv && *ldv && strcmp(ldv, "full") && strcmp(ldv, "none")) {
        snprintf(rt.init_error, sizeof rt.init_error, "GCN3EMU_LDS_VALUES=%s: expected full or none", ldv);
        goto fail;
    }
    int lds_none = ldv && !strcmp(ldv, "none");
    const char *rec = getenv("GCN3EMU_RECORD");
    if (rec && *rec) {
        rt.trace_path = strdup(rec);
        struct stat sb;
        rt.trace_created = stat(rec, &sb) != 0; /* a failed start removes only a file it created */
        trc_header_info h;
        memset(&h, 0, sizeof h);
        snprintf(h.producer, sizeof h.producer, "gcn3-emu");
        snprintf(h.producer_version, sizeof h.producer_version, "%s", GCN3SIM_VERSION);
        snprintf(h.isa_target, sizeof h.isa_target, "amdgcn-amd-amdhsa--gfx803");
        h.device_count = gpus;
        read_cmdline(h.command_line, sizeof h.command_line);
        h.lds_values_omitted = (uint32_t)lds_none;
        char err[512] = "";
        rt.trace = trc_writer_open(rec, &h, err, sizeof err);
        if (!rt.trace) {
            snprintf(rt.init_error, sizeof rt.init_error, "cannot record trace %s: %s", rec, err);
            goto fail;
        }
    }
    gcn_machine_config cfg = {.n_gpus = gpus, .n_threads = threads, .trace = rt.trace,
                              .on_wave_sleep = hip_hostcall_serve, .on_event = hip_tl_event};
    const char *pg = getenv("GCN3EMU_PROGRESS"); /* set by gcn3-emu: --progress, or stderr is a terminal */
    cfg.progress = pg && !strcmp(pg, "1");
    const char *na = getenv("GCN3EMU_NO_AWAITS");
    cfg.no_awaits = na && *na && strcmp(na, "0") != 0;
    const char *sd = getenv("GCN3EMU_SCRATCH_DATA");
    cfg.scratch_data = sd && *sd && strcmp(sd, "0") != 0;
    const char *lv = getenv("GCN3EMU_LOAD_VALUES");
    if (lv && *lv && strcmp(lv, "full") && strcmp(lv, "hash")) {
        snprintf(rt.init_error, sizeof rt.init_error, "GCN3EMU_LOAD_VALUES=%s: expected full or hash", lv);
        goto fail;
    }
    cfg.hash_loads = lv && !strcmp(lv, "hash");
    cfg.no_lds_values = lds_none;
    const char *hi = getenv("GCN3EMU_HOST_IMAGE");
    if (hi && *hi && strcmp(hi, "on") && strcmp(hi, "off")) {
        snprintf(rt.init_error, sizeof rt.init_error, "GCN3EMU_HOST_IMAGE=%s: expected on or off", hi);
        goto fail;
    }
    cfg.host_image = !(hi && !strcmp(hi, "off"));
    const char *pw = getenv("GCN3EMU_PARALLEL_WAITS");
    cfg.parallel_waits = pw && *pw && strcmp(pw, "0") != 0;
    cfg.progress_tty = isatty(STDERR_FILENO);
    char err[512] = "";
    rt.m = gcn_machine_create(&cfg, err, sizeof err);
    if (!rt.m) {
        snprintf(rt.init_error, sizeof rt.init_error, "cannot create the emulated GPU: %s", err);
        goto fail;
    }
    rt.init_ok = 1;
    on_exit(at_exit, NULL);
    install_signal_handlers();
    return;
fail:
    fprintf(stderr, "gcn3-emu: %s\n", rt.init_error);
    if (rt.trace) {
        /* No machine: nothing to record; leave no half-written trace. */
        trc_writer_destroy(rt.trace);
        rt.trace = NULL;
        struct stat sb;
        if (rt.trace_created && stat(rt.trace_path, &sb) == 0 && S_ISREG(sb.st_mode))
            unlink(rt.trace_path);
    }
}

hipError_t hip_init(void)
{
    pthread_once(&init_once, do_init);
    return rt.init_ok ? hipSuccess : hipErrorNotInitialized;
}

/* Host time between calls (trace format 1.4): when a call last left the
 * runtime (CLOCK_MONOTONIC ns; 0: none yet), under rt.mu. The time from
 * there to the next call's entry is the program's own host work (natively
 * run); it goes to the trace with the next event written. */
static uint64_t host_left_ns;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

hipError_t hip_enter(void)
{
    hipError_t e = hip_init();
    if (e != hipSuccess)
        return e;
    pthread_mutex_lock(&rt.mu);
    if (rt.shutdown) {
        pthread_mutex_unlock(&rt.mu);
        return hipErrorDeinitialized;
    }
    if (host_left_ns && rt.trace && !rt.trace_failed) {
        uint64_t t = mono_ns();
        if (t > host_left_ns)
            trc_writer_host_gap(rt.trace, t - host_left_ns);
        host_left_ns = 0;
    }
    return hipSuccess;
}

void hip_leave(void)
{
    host_left_ns = mono_ns();
    pthread_mutex_unlock(&rt.mu);
}

hipError_t hip_ret(hipError_t e)
{
    if (e != hipSuccess)
        tls_last_error = e;
    return e;
}

int hip_current_device(void)
{
    return tls_device;
}

void hip_trace_failed(const char *msg)
{
    if (!rt.trace_failed)
        trace_failed_msg(msg, "the program goes on");
    rt.trace_failed = 1;
}

void hip_trace_event(const trc_event *ev)
{
    hip_tl_event(ev);
    if (!rt.trace || rt.trace_failed)
        return;
    if (trc_writer_event(rt.trace, ev) != 0)
        hip_trace_failed(trc_writer_error(rt.trace));
}

uint64_t hip_trace_n_events(void) { return rt.trace && !rt.trace_failed ? trc_writer_n_events(rt.trace) : 0; }

/* hipStreamPerThread: each host thread's implicit stream, one per device,
 * made on first use. It is a blocking stream with an id of its own: it runs
 * beside the program's other streams and synchronises with the legacy null
 * stream (HIP API reference, "hipStreamPerThread"; CUDA programming guide,
 * "Per-thread default stream"). It lives as long as its thread. */
static __thread struct ihipStream_t tls_per_thread[HIP_MAX_GPUS];

hipStream_t hip_stream_get(hipStream_t s)
{
    if (s != hipStreamPerThread)
        return s;
    int d = hip_current_device();
    struct ihipStream_t *p = &tls_per_thread[d];
    if (!p->id) {
        p->id = __atomic_add_fetch(&rt.next_stream_id, 1, __ATOMIC_RELAXED);
        p->device = d;
        p->flags = hipStreamDefault;
        p->priority = 0;
    }
    return p;
}

uint32_t hip_stream_id(hipStream_t s)
{
    s = hip_stream_get(s);
    return s ? s->id : 0;
}

/* ---- live handles ---------------------------------------------------------------- */

static struct {
    pthread_mutex_t mu;
    const void **p[2];
    size_t n[2], cap[2];
} handles = {PTHREAD_MUTEX_INITIALIZER, {NULL, NULL}, {0, 0}, {0, 0}};

static size_t handle_find(int kind, const void *h)
{
    for (size_t i = handles.n[kind]; i-- > 0;) /* the newest first: usually the one asked for */
        if (handles.p[kind][i] == h)
            return i;
    return SIZE_MAX;
}

int hip_handle_add(int kind, const void *h)
{
    pthread_mutex_lock(&handles.mu);
    int rc = 0;
    if (handles.n[kind] == handles.cap[kind]) {
        size_t nc = handles.cap[kind] ? 2 * handles.cap[kind] : 16;
        const void **np = realloc(handles.p[kind], nc * sizeof *np);
        if (!np)
            rc = -1;
        else
            handles.p[kind] = np, handles.cap[kind] = nc;
    }
    if (rc == 0)
        handles.p[kind][handles.n[kind]++] = h;
    pthread_mutex_unlock(&handles.mu);
    return rc;
}

int hip_handle_del(int kind, const void *h)
{
    pthread_mutex_lock(&handles.mu);
    size_t i = handle_find(kind, h);
    if (i != SIZE_MAX)
        handles.p[kind][i] = handles.p[kind][--handles.n[kind]];
    pthread_mutex_unlock(&handles.mu);
    return i != SIZE_MAX;
}

int hip_handle_live(int kind, const void *h)
{
    pthread_mutex_lock(&handles.mu);
    int live = handle_find(kind, h) != SIZE_MAX;
    pthread_mutex_unlock(&handles.mu);
    return live;
}

hipError_t hip_stream_check(hipStream_t s)
{
    if (!s || s == hipStreamPerThread || hip_handle_live(HIP_H_STREAM, s))
        return hipSuccess;
    return hipErrorContextIsDestroyed;
}

int hip_not_implemented(const char *name)
{
    fprintf(stderr, "gcn3-emu: %s is not implemented\n", name);
    return (int)hip_ret(hipErrorNotSupported);
}

/* ---- errors ---------------------------------------------------------------- */

HIP_EXPORT hipError_t hipGetLastError(void)
{
    hipError_t e = tls_last_error;
    tls_last_error = hipSuccess;
    if (e == hipSuccess && rt.sticky != hipSuccess)
        e = rt.sticky;
    return e;
}

HIP_EXPORT hipError_t hipPeekAtLastError(void)
{
    hipError_t e = tls_last_error;
    if (e == hipSuccess && rt.sticky != hipSuccess)
        e = rt.sticky;
    return e;
}

/* Names and strings of HIP 5.2's hipError_t values (hip_runtime_api.h). */
#define HIP_ERRORS(X)                                                                      \
    X(hipSuccess, "no error")                                                              \
    X(hipErrorInvalidValue, "invalid argument")                                            \
    X(hipErrorOutOfMemory, "out of memory")                                                \
    X(hipErrorNotInitialized, "initialization error")                                      \
    X(hipErrorDeinitialized, "driver shutting down")                                       \
    X(hipErrorProfilerDisabled, "profiler disabled while using external profiling tool")   \
    X(hipErrorProfilerNotInitialized, "profiler is not initialized")                       \
    X(hipErrorProfilerAlreadyStarted, "profiler already started")                          \
    X(hipErrorProfilerAlreadyStopped, "profiler already stopped")                          \
    X(hipErrorInvalidConfiguration, "invalid configuration argument")                      \
    X(hipErrorInvalidPitchValue, "invalid pitch argument")                                 \
    X(hipErrorInvalidSymbol, "invalid device symbol")                                      \
    X(hipErrorInvalidDevicePointer, "invalid device pointer")                              \
    X(hipErrorInvalidMemcpyDirection, "invalid copy direction for memcpy")                 \
    X(hipErrorInsufficientDriver, "driver version is insufficient for runtime version")    \
    X(hipErrorMissingConfiguration, "__global__ function call is not configured")          \
    X(hipErrorPriorLaunchFailure, "unspecified launch failure in prior launch")            \
    X(hipErrorInvalidDeviceFunction, "invalid device function")                            \
    X(hipErrorNoDevice, "no ROCm-capable device is detected")                              \
    X(hipErrorInvalidDevice, "invalid device ordinal")                                     \
    X(hipErrorInvalidImage, "device kernel image is invalid")                              \
    X(hipErrorInvalidContext, "invalid device context")                                    \
    X(hipErrorContextAlreadyCurrent, "context already in use")                             \
    X(hipErrorMapFailed, "mapping of buffer object failed")                                \
    X(hipErrorUnmapFailed, "unmapping of buffer object failed")                            \
    X(hipErrorArrayIsMapped, "array is mapped")                                            \
    X(hipErrorAlreadyMapped, "resource already mapped")                                    \
    X(hipErrorNoBinaryForGpu, "no kernel image is available for execution on the device")  \
    X(hipErrorAlreadyAcquired, "resource already acquired")                                \
    X(hipErrorNotMapped, "resource not mapped")                                            \
    X(hipErrorNotMappedAsArray, "resource not mapped as array")                            \
    X(hipErrorNotMappedAsPointer, "resource not mapped as pointer")                        \
    X(hipErrorECCNotCorrectable, "uncorrectable ECC error encountered")                    \
    X(hipErrorUnsupportedLimit, "limit is not supported on this architecture")             \
    X(hipErrorContextAlreadyInUse, "exclusive-thread device already in use by a different thread") \
    X(hipErrorPeerAccessUnsupported, "peer access is not supported between these two devices") \
    X(hipErrorInvalidKernelFile, "invalid kernel file")                                    \
    X(hipErrorInvalidGraphicsContext, "invalid OpenGL or DirectX context")                 \
    X(hipErrorInvalidSource, "device kernel image is invalid")                             \
    X(hipErrorFileNotFound, "file not found")                                              \
    X(hipErrorSharedObjectSymbolNotFound, "shared object symbol not found")                \
    X(hipErrorSharedObjectInitFailed, "shared object initialization failed")               \
    X(hipErrorOperatingSystem, "OS call failed or operation not supported on this OS")     \
    X(hipErrorInvalidHandle, "invalid resource handle")                                    \
    X(hipErrorIllegalState, "the operation cannot be performed in the present state")      \
    X(hipErrorNotFound, "named symbol not found")                                          \
    X(hipErrorNotReady, "device not ready")                                                \
    X(hipErrorIllegalAddress, "an illegal memory access was encountered")                  \
    X(hipErrorLaunchOutOfResources, "too many resources requested for launch")             \
    X(hipErrorLaunchTimeOut, "the launch timed out and was terminated")                    \
    X(hipErrorPeerAccessAlreadyEnabled, "peer access is already enabled")                  \
    X(hipErrorPeerAccessNotEnabled, "peer access has not been enabled")                    \
    X(hipErrorSetOnActiveProcess, "cannot set while device is active in this process")     \
    X(hipErrorContextIsDestroyed, "context is destroyed")                                  \
    X(hipErrorAssert, "device-side assert triggered")                                      \
    X(hipErrorHostMemoryAlreadyRegistered, "part or all of the requested memory range is already mapped") \
    X(hipErrorHostMemoryNotRegistered, "pointer does not correspond to a registered memory region") \
    X(hipErrorLaunchFailure, "unspecified launch failure")                                 \
    X(hipErrorCooperativeLaunchTooLarge, "too many blocks in cooperative launch")          \
    X(hipErrorNotSupported, "operation not supported")                                     \
    X(hipErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing") \
    X(hipErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture") \
    X(hipErrorStreamCaptureMerge, "operation would result in a merge of separate capture sequences") \
    X(hipErrorStreamCaptureUnmatched, "capture was not ended in the same stream as it began") \
    X(hipErrorStreamCaptureUnjoined, "capturing stream has unjoined work")                 \
    X(hipErrorStreamCaptureIsolation, "dependency created on uncaptured work in another stream") \
    X(hipErrorStreamCaptureImplicit, "operation would make the legacy stream depend on a capturing blocking stream") \
    X(hipErrorCapturedEvent, "operation not permitted on an event last recorded in a capturing stream") \
    X(hipErrorStreamCaptureWrongThread, "attempt to terminate a thread-local capture sequence from another thread") \
    X(hipErrorGraphExecUpdateFailure, "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update") \
    X(hipErrorUnknown, "unknown error")                                                    \
    X(hipErrorRuntimeMemory, "runtime memory call returned error")                         \
    X(hipErrorRuntimeOther, "runtime call other than memory returned error")

HIP_EXPORT const char *hipGetErrorName(hipError_t e)
{
    switch (e) {
#define X(n, s) case n: return #n;
        HIP_ERRORS(X)
#undef X
    default: return "hipErrorUnknown";
    }
}

HIP_EXPORT const char *hipGetErrorString(hipError_t e)
{
    switch (e) {
#define X(n, s) case n: return s;
        HIP_ERRORS(X)
#undef X
    default: return "unknown error";
    }
}

/* ---- versions, devices ------------------------------------------------------- */

HIP_EXPORT hipError_t hipInit(unsigned int flags)
{
    if (flags)
        return hip_ret(hipErrorInvalidValue);
    return hip_ret(hip_init());
}

HIP_EXPORT hipError_t hipDriverGetVersion(int *v)
{
    if (!v)
        return hip_ret(hipErrorInvalidValue);
    *v = HIP_VERSION;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipRuntimeGetVersion(int *v)
{
    if (!v)
        return hip_ret(hipErrorInvalidValue);
    *v = HIP_VERSION;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipGetDeviceCount(int *count)
{
    if (!count)
        return hip_ret(hipErrorInvalidValue);
    hipError_t e = hip_init();
    if (e != hipSuccess) {
        *count = 0;
        return hip_ret(hipErrorNoDevice);
    }
    *count = (int)rt.n_gpus;
    return hipSuccess;
}

static int valid_device(int d)
{
    return hip_init() == hipSuccess && d >= 0 && (uint32_t)d < rt.n_gpus;
}

HIP_EXPORT hipError_t hipSetDevice(int d)
{
    if (!valid_device(d))
        return hip_ret(hipErrorInvalidDevice);
    tls_device = d;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipGetDevice(int *d)
{
    if (!d)
        return hip_ret(hipErrorInvalidValue);
    *d = tls_device;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipDeviceGet(hipDevice_t *dev, int ordinal)
{
    if (!dev)
        return hip_ret(hipErrorInvalidValue);
    if (!valid_device(ordinal))
        return hip_ret(hipErrorInvalidDevice);
    *dev = ordinal;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipSetDeviceFlags(unsigned flags)
{
    /* Scheduling and host-mapping hints: the emulator runs every call to
     * completion, so each accepted value behaves as hipDeviceScheduleAuto. */
    if (flags & ~(unsigned)(hipDeviceScheduleMask | hipDeviceMapHost | hipDeviceLmemResizeToMax))
        return hip_ret(hipErrorInvalidValue);
    return hip_ret(hip_init());
}

#define DEV_NAME "AMD Radeon R9 Nano"

HIP_EXPORT hipError_t hipDeviceGetName(char *name, int len, hipDevice_t dev)
{
    if (!name || len <= 0)
        return hip_ret(hipErrorInvalidValue);
    if (!valid_device(dev))
        return hip_ret(hipErrorInvalidDevice);
    snprintf(name, (size_t)len, "%s", DEV_NAME);
    return hipSuccess;
}

HIP_EXPORT hipError_t hipGetDeviceProperties(hipDeviceProp_t *p, int dev)
{
    if (!p)
        return hip_ret(hipErrorInvalidValue);
    if (!valid_device(dev))
        return hip_ret(hipErrorInvalidDevice);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", DEV_NAME);
    snprintf(p->gcnArchName, sizeof p->gcnArchName, "gfx803");
    p->gcnArch = 803;
    p->totalGlobalMem = HIP_DEV_MEM_BYTES;
    p->sharedMemPerBlock = 64 * 1024;
    p->regsPerBlock = 64 * 1024;
    p->warpSize = 64;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = p->maxThreadsDim[1] = p->maxThreadsDim[2] = 1024;
    p->maxGridSize[0] = p->maxGridSize[1] = p->maxGridSize[2] = 0x7fffffff;
    p->clockRate = 1000000;        /* kHz */
    p->memoryClockRate = 500000;   /* kHz */
    p->memoryBusWidth = 4096;      /* bits */
    p->totalConstMem = HIP_DEV_MEM_BYTES;
    p->major = 8;
    p->minor = 0;
    p->multiProcessorCount = 64;
    p->l2CacheSize = 2 * 1024 * 1024;
    p->maxThreadsPerMultiProcessor = 2560; /* 40 waves x 64 */
    p->computeMode = hipComputeModeDefault;
    p->clockInstructionRate = 1000000; /* kHz */
    p->arch.hasGlobalInt32Atomics = 1;
    p->arch.hasGlobalFloatAtomicExch = 1;
    p->arch.hasSharedInt32Atomics = 1;
    p->arch.hasSharedFloatAtomicExch = 1;
    p->arch.hasFloatAtomicAdd = 1;
    p->arch.hasGlobalInt64Atomics = 1;
    p->arch.hasSharedInt64Atomics = 1;
    p->arch.hasDoubles = 1;
    p->arch.hasWarpVote = 1;
    p->arch.hasWarpBallot = 1;
    p->arch.hasWarpShuffle = 1;
    p->arch.hasFunnelShift = 0;
    p->arch.hasThreadFenceSystem = 1;
    p->arch.hasSyncThreadsExt = 0;
    p->arch.has3dGrid = 1;
    p->arch.hasDynamicParallelism = 0;
    p->concurrentKernels = 1;
    p->pciBusID = dev + 1;
    p->maxSharedMemoryPerMultiProcessor = 64 * 1024;
    p->isMultiGpuBoard = rt.n_gpus > 1;
    p->canMapHostMemory = 1;
    p->maxTexture1DLinear = 1 << 27;
    p->maxTexture1D = 16384;
    p->maxTexture2D[0] = p->maxTexture2D[1] = 16384;
    p->maxTexture3D[0] = p->maxTexture3D[1] = p->maxTexture3D[2] = 2048;
    p->memPitch = 0x7fffffff;
    p->textureAlignment = 256;
    p->texturePitchAlignment = 256;
    p->isLargeBar = 0;
    p->asicRevision = 1;
    p->cooperativeLaunch = 1;       /* hipLaunchCooperativeKernel (grid sync) */
    p->cooperativeMultiDeviceLaunch = 0;
    p->managedMemory = 1;           /* hipMallocManaged */
    p->directManagedMemAccessFromHost = 1;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipDeviceGetAttribute(int *v, hipDeviceAttribute_t a, int dev)
{
    if (!v)
        return hip_ret(hipErrorInvalidValue);
    hipDeviceProp_t p;
    hipError_t e = hipGetDeviceProperties(&p, dev);
    if (e != hipSuccess)
        return e;
    switch (a) {
    case hipDeviceAttributeMaxThreadsPerBlock: *v = p.maxThreadsPerBlock; break;
    case hipDeviceAttributeMaxBlockDimX: *v = p.maxThreadsDim[0]; break;
    case hipDeviceAttributeMaxBlockDimY: *v = p.maxThreadsDim[1]; break;
    case hipDeviceAttributeMaxBlockDimZ: *v = p.maxThreadsDim[2]; break;
    case hipDeviceAttributeMaxGridDimX: *v = p.maxGridSize[0]; break;
    case hipDeviceAttributeMaxGridDimY: *v = p.maxGridSize[1]; break;
    case hipDeviceAttributeMaxGridDimZ: *v = p.maxGridSize[2]; break;
    case hipDeviceAttributeMaxSharedMemoryPerBlock: *v = (int)p.sharedMemPerBlock; break;
    case hipDeviceAttributeSharedMemPerBlockOptin: *v = (int)p.sharedMemPerBlock; break;
    case hipDeviceAttributeMaxSharedMemoryPerMultiprocessor:
        *v = (int)p.maxSharedMemoryPerMultiProcessor;
        break;
    case hipDeviceAttributeTotalConstantMemory: *v = 0x7fffffff; break;
    case hipDeviceAttributeWarpSize: *v = p.warpSize; break;
    case hipDeviceAttributeMaxRegistersPerBlock: *v = p.regsPerBlock; break;
    case hipDeviceAttributeClockRate: *v = p.clockRate; break;
    case hipDeviceAttributeMemoryClockRate: *v = p.memoryClockRate; break;
    case hipDeviceAttributeMemoryBusWidth: *v = p.memoryBusWidth; break;
    case hipDeviceAttributeMultiprocessorCount: *v = p.multiProcessorCount; break;
    case hipDeviceAttributeComputeMode: *v = p.computeMode; break;
    case hipDeviceAttributeL2CacheSize: *v = p.l2CacheSize; break;
    case hipDeviceAttributeMaxThreadsPerMultiProcessor: *v = p.maxThreadsPerMultiProcessor; break;
    case hipDeviceAttributeComputeCapabilityMajor: *v = p.major; break;
    case hipDeviceAttributeComputeCapabilityMinor: *v = p.minor; break;
    case hipDeviceAttributeConcurrentKernels: *v = p.concurrentKernels; break;
    case hipDeviceAttributePciBusId: *v = p.pciBusID; break;
    case hipDeviceAttributePciDeviceId: *v = p.pciDeviceID; break;
    case hipDeviceAttributeIntegrated: *v = p.integrated; break;
    case hipDeviceAttributeCanMapHostMemory: *v = p.canMapHostMemory; break;
    case hipDeviceAttributeIsMultiGpuBoard: *v = p.isMultiGpuBoard; break;
    case hipDeviceAttributeEccEnabled: *v = 0; break;
    case hipDeviceAttributeKernelExecTimeout: *v = 0; break;
    case hipDeviceAttributeCooperativeLaunch: *v = p.cooperativeLaunch; break;
    case hipDeviceAttributeCooperativeMultiDeviceLaunch: *v = p.cooperativeMultiDeviceLaunch; break;
    case hipDeviceAttributeManagedMemory: *v = p.managedMemory; break;
    case hipDeviceAttributeDirectManagedMemAccessFromHost: *v = 1; break;
    case hipDeviceAttributePciDomainID: *v = p.pciDomainID; break;
    case hipDeviceAttributeMaxRegistersPerMultiprocessor: *v = 4 * 64 * 256; break; /* 4 SIMDs x 64 lanes x 256 VGPRs */
    case hipDeviceAttributeHostNativeAtomicSupported: *v = 0; break;
    case hipDeviceAttributeConcurrentManagedAccess: *v = 0; break;
    case hipDeviceAttributePageableMemoryAccess: *v = 0; break;
    case hipDeviceAttributeUnifiedAddressing: *v = 1; break;
    case hipDeviceAttributeClockInstructionRate: *v = p.clockInstructionRate; break;
    case hipDeviceAttributeMaxPitch: *v = (int)p.memPitch; break;
    case hipDeviceAttributeTextureAlignment: *v = (int)p.textureAlignment; break;
    case hipDeviceAttributeTexturePitchAlignment: *v = (int)p.texturePitchAlignment; break;
    case hipDeviceAttributeAsicRevision: *v = p.asicRevision; break;
    case hipDeviceAttributeIsLargeBar: *v = p.isLargeBar; break;
    case hipDeviceAttributeMaxTexture1DWidth: *v = p.maxTexture1D; break;
    case hipDeviceAttributeMaxTexture2DWidth: *v = p.maxTexture2D[0]; break;
    case hipDeviceAttributeMaxTexture2DHeight: *v = p.maxTexture2D[1]; break;
    case hipDeviceAttributeMaxTexture3DWidth: *v = p.maxTexture3D[0]; break;
    case hipDeviceAttributeMaxTexture3DHeight: *v = p.maxTexture3D[1]; break;
    case hipDeviceAttributeMaxTexture3DDepth: *v = p.maxTexture3D[2]; break;
    default:
        fprintf(stderr, "gcn3-emu: hipDeviceGetAttribute: attribute %d is not implemented\n",
                (int)a);
        return hip_ret(hipErrorNotSupported);
    }
    return hipSuccess;
}

HIP_EXPORT hipError_t hipDeviceCanAccessPeer(int *can, int dev, int peer)
{
    if (!can)
        return hip_ret(hipErrorInvalidValue);
    if (!valid_device(dev) || !valid_device(peer))
        return hip_ret(hipErrorInvalidDevice);
    /* All emulated devices share one address space (DESIGN.md Sec. 4). */
    *can = dev != peer;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipDeviceEnablePeerAccess(int peer, unsigned int flags)
{
    int dev = tls_device;
    if (flags)
        return hip_ret(hipErrorInvalidValue);
    if (!valid_device(peer) || peer == dev)
        return hip_ret(hipErrorInvalidDevice);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    uint32_t bit = 1u << peer;
    if (rt.peer[dev] & bit)
        e = hipErrorPeerAccessAlreadyEnabled;
    rt.peer[dev] |= bit;
    hip_leave();
    return hip_ret(e);
}

HIP_EXPORT hipError_t hipDeviceDisablePeerAccess(int peer)
{
    int dev = tls_device;
    if (!valid_device(peer))
        return hip_ret(hipErrorInvalidDevice);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    uint32_t bit = 1u << peer;
    if (!(rt.peer[dev] & bit))
        e = hipErrorPeerAccessNotEnabled;
    rt.peer[dev] &= ~bit;
    hip_leave();
    return hip_ret(e);
}

HIP_EXPORT hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t dev)
{
    if (!bytes)
        return hip_ret(hipErrorInvalidValue);
    if (!valid_device(dev))
        return hip_ret(hipErrorInvalidDevice);
    *bytes = HIP_DEV_MEM_BYTES;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipDeviceComputeCapability(int *major, int *minor, hipDevice_t dev)
{
    if (!major || !minor)
        return hip_ret(hipErrorInvalidValue);
    if (!valid_device(dev))
        return hip_ret(hipErrorInvalidDevice);
    *major = 8;
    *minor = 0;
    return hipSuccess;
}

/* PCI address "domain:bus:device.function"; device d sits on bus d + 1
 * (hipDeviceProp_t.pciBusID). */
HIP_EXPORT hipError_t hipDeviceGetPCIBusId(char *id, int len, int dev)
{
    if (!id || len <= 0)
        return hip_ret(hipErrorInvalidValue);
    if (!valid_device(dev))
        return hip_ret(hipErrorInvalidDevice);
    char buf[32];
    snprintf(buf, sizeof buf, "0000:%02x:00.0", (unsigned)(dev + 1) & 0xffu);
    if ((size_t)len <= strlen(buf))
        return hip_ret(hipErrorInvalidValue);
    snprintf(id, (size_t)len, "%s", buf);
    return hipSuccess;
}

HIP_EXPORT hipError_t hipDeviceGetByPCIBusId(int *dev, const char *id)
{
    unsigned dom, bus, d, f;
    if (!dev || !id || sscanf(id, "%x:%x:%x.%x", &dom, &bus, &d, &f) != 4)
        return hip_ret(hipErrorInvalidValue);
    if (dom != 0 || d != 0 || f != 0 || bus < 1 || !valid_device((int)bus - 1))
        return hip_ret(hipErrorInvalidDevice);
    *dev = (int)bus - 1;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipDeviceGetP2PAttribute(int *v, hipDeviceP2PAttr attr, int src, int dst)
{
    if (!v)
        return hip_ret(hipErrorInvalidValue);
    if (!valid_device(src) || !valid_device(dst) || src == dst)
        return hip_ret(hipErrorInvalidDevice);
    switch (attr) {
    case hipDevP2PAttrPerformanceRank: *v = 0; break;
    case hipDevP2PAttrAccessSupported: *v = 1; break;
    case hipDevP2PAttrNativeAtomicSupported: *v = 1; break; /* one coherent address space */
    case hipDevP2PAttrHipArrayAccessSupported: *v = 0; break; /* no arrays */
    default: return hip_ret(hipErrorInvalidValue);
    }
    return hipSuccess;
}

/* All devices are identical R9 Nanos: any device matches as well as another;
 * the current one is chosen. */
HIP_EXPORT hipError_t hipChooseDevice(int *dev, const hipDeviceProp_t *prop)
{
    if (!dev || !prop)
        return hip_ret(hipErrorInvalidValue);
    if (hip_init() != hipSuccess)
        return hip_ret(hipErrorNoDevice);
    *dev = tls_device;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipGetDeviceFlags(unsigned int *flags)
{
    if (!flags)
        return hip_ret(hipErrorInvalidValue);
    *flags = hipDeviceScheduleAuto;
    return hipSuccess;
}
