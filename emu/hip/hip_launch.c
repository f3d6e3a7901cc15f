/*
 * hip_launch.c - code-object registration and kernel launches.
 *
 * hipcc's generated host code (FACTS.md) registers each fat binary wrapper
 * with __hipRegisterFatBinary from a constructor, then every kernel stub with
 * __hipRegisterFunction (host stub address -> device kernel name), and every
 * __device__ variable with __hipRegisterVar. A launch pushes the
 * configuration (__hipPushCallConfiguration); the stub pops it and calls
 * hipLaunchKernel(stub, grid, block, args, shmem, stream) with one pointer per
 * kernel argument.
 *
 * Code objects are parsed at registration (a wrong target is found early but
 * reported at the first launch that needs it, once) and loaded onto the
 * machine at the first launch of one of their kernels, so programs that never
 * launch record no code object.
 *
 * Kernarg segment (AMDGPUUsage "Kernel Argument Metadata"): explicit
 * arguments are copied from args[i] at the metadata .offset/.size in order;
 * hidden arguments are zero except those computed here (code object v5
 * block counts, group sizes, remainders, grid dims, dynamic LDS size).
 * hidden_hostcall_buffer is the device's hostcall buffer (hip_hostcall.c:
 * device printf, assert, malloc).
 */
#include "hip_internal.h"
#include "gcn/gcn_isa.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define rt hip_rt_state

/* Launch configurations pushed by <<<>>> and popped by the kernel stub. */
typedef struct call_config {
    dim3 grid, block;
    size_t shmem;
    hipStream_t stream;
} call_config;
static _Thread_local call_config tls_cfg[8];
static _Thread_local unsigned tls_ncfg;

/* ---- registration -------------------------------------------------------- */

HIP_EXPORT void **__hipRegisterFatBinary(const void *data)
{
    hip_init(); /* reads the configuration early; failures are reported there */
    hip_module *mod = calloc(1, sizeof *mod);
    if (!mod) {
        fprintf(stderr, "gcn3-emu: __hipRegisterFatBinary: out of memory\n");
        return NULL;
    }
    const hip_fatbin_wrapper *w = data;
    if (!w || w->magic != HIP_FATBIN_MAGIC || !w->bundle) {
        mod->ld_status = GCN_LD_BAD_BUNDLE;
        snprintf(mod->ld_error, sizeof mod->ld_error,
                 "fat binary wrapper at %p has no \"HIPF\" magic (0x%08x)", data,
                 w ? w->magic : 0);
    } else {
        mod->bundle = w->bundle;
        gcn_bundle_entry ent;
        char err[256] = "";
        mod->ld_status = gcn_bundle_find_gfx803(w->bundle, 0, &ent, err, sizeof err);
        if (mod->ld_status == GCN_LD_OK)
            mod->ld_status = gcn_co_parse(ent.data, ent.size, &mod->co, err, sizeof err);
        Dl_info di; /* a refusal names the program or library holding the fat binary */
        if (mod->ld_status != GCN_LD_OK && dladdr(data, &di) && di.dli_fname && di.dli_fname[0])
            snprintf(mod->ld_error, sizeof mod->ld_error, "%s: %s", di.dli_fname, err);
        else if (mod->ld_status != GCN_LD_OK)
            snprintf(mod->ld_error, sizeof mod->ld_error, "%s", err);
    }
    pthread_mutex_lock(&rt.mu);
    mod->next = rt.modules;
    rt.modules = mod;
    pthread_mutex_unlock(&rt.mu);
    return (void **)mod;
}

HIP_EXPORT void __hipRegisterFunction(void **modules, const void *host_fn, char *device_fn,
                                      const char *device_name, unsigned int thread_limit,
                                      void *tid, void *bid, dim3 *block_dim, dim3 *grid_dim,
                                      int *wsize)
{
    (void)device_fn, (void)thread_limit, (void)tid, (void)bid, (void)block_dim, (void)grid_dim,
        (void)wsize;
    if (!modules || !host_fn || !device_name)
        return;
    pthread_mutex_lock(&rt.mu);
    if (rt.n_fns == rt.cap_fns) {
        size_t cap = rt.cap_fns ? rt.cap_fns * 2 : 32;
        hip_function *f = realloc(rt.fns, cap * sizeof *f);
        if (!f) {
            pthread_mutex_unlock(&rt.mu);
            fprintf(stderr, "gcn3-emu: __hipRegisterFunction(%s): out of memory\n", device_name);
            return;
        }
        rt.fns = f;
        rt.cap_fns = cap;
    }
    rt.fns[rt.n_fns++] = (hip_function){
        .host_fn = host_fn, .mod = (hip_module *)modules, .name = strdup(device_name)};
    pthread_mutex_unlock(&rt.mu);
}

HIP_EXPORT void __hipRegisterVar(void **modules, void *var, char *host_var, char *device_var,
                                 int ext, size_t size, int constant, int global)
{
    (void)host_var, (void)ext, (void)constant, (void)global;
    if (!modules || !var || !device_var)
        return;
    pthread_mutex_lock(&rt.mu);
    if (rt.n_vars == rt.cap_vars) {
        size_t cap = rt.cap_vars ? rt.cap_vars * 2 : 16;
        hip_var *v = realloc(rt.vars, cap * sizeof *v);
        if (!v) {
            pthread_mutex_unlock(&rt.mu);
            return;
        }
        rt.vars = v;
        rt.cap_vars = cap;
    }
    rt.vars[rt.n_vars++] = (hip_var){
        .host_var = var, .mod = (hip_module *)modules, .name = strdup(device_var), .size = size};
    pthread_mutex_unlock(&rt.mu);
}

HIP_EXPORT void __hipRegisterManagedVar(void *hip_module_, void **pointer, void *init_value,
                                        const char *name, size_t size, unsigned align)
{
    (void)hip_module_, (void)pointer, (void)init_value, (void)size, (void)align;
    fprintf(stderr, "gcn3-emu: __hipRegisterManagedVar (%s): managed variables are not "
                    "implemented\n",
            name ? name : "?");
}

HIP_EXPORT void __hipUnregisterFatBinary(void **modules)
{
    /* Module memory stays mapped: kernels of other modules may still hold
     * pointers into it, and the process is ending (this runs from atexit). */
    (void)modules;
}

HIP_EXPORT hipError_t __hipPushCallConfiguration(dim3 grid, dim3 block, size_t shmem,
                                                 hipStream_t stream)
{
    if (tls_ncfg == sizeof tls_cfg / sizeof tls_cfg[0])
        return hip_ret(hipErrorInvalidConfiguration);
    tls_cfg[tls_ncfg++] = (call_config){grid, block, shmem, stream};
    return hipSuccess;
}

HIP_EXPORT hipError_t __hipPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shmem,
                                                hipStream_t *stream)
{
    if (!tls_ncfg)
        return hip_ret(hipErrorMissingConfiguration);
    call_config c = tls_cfg[--tls_ncfg];
    if (grid)
        *grid = c.grid;
    if (block)
        *block = c.block;
    if (shmem)
        *shmem = c.shmem;
    if (stream)
        *stream = c.stream;
    return hipSuccess;
}

/* ---- launch ----------------------------------------------------------------- */

/* Caller holds rt.mu. Loads the module if needed; NULL with *e set. */
static const gcn_kernel *resolve(const void *host_fn, hip_module **out_mod, const char **name,
                                 hipError_t *e)
{
    hip_function *f = NULL;
    for (size_t i = 0; i < rt.n_fns; i++)
        if (rt.fns[i].host_fn == host_fn) {
            f = &rt.fns[i];
            break;
        }
    if (!f) {
        *e = hipErrorInvalidDeviceFunction;
        return NULL;
    }
    hip_module *mod = f->mod;
    *name = f->name;
    if (!mod->loaded) {
        if (!mod->co) {
            if (!mod->reported)
                fprintf(stderr, "gcn3-emu: cannot launch %s: %s\n", f->name, mod->ld_error);
            mod->reported = 1;
            *e = hipErrorNoBinaryForGpu;
            return NULL;
        }
        char err[512] = "";
        mod->loaded = gcn_module_load(rt.m, mod->co, err, sizeof err);
        if (!mod->loaded) {
            /* gcn_module_load does not take ownership on failure. */
            fprintf(stderr, "gcn3-emu: cannot load the code object of %s: %s\n", f->name, err);
            gcn_co_free(mod->co);
            mod->co = NULL;
            snprintf(mod->ld_error, sizeof mod->ld_error, "%s", err);
            mod->reported = 1;
            *e = hipErrorInvalidImage;
            return NULL;
        }
        mod->co = NULL; /* owned by the module now */
    }
    const gcn_kernel *k = gcn_co_find_kernel(gcn_module_co(mod->loaded), f->name);
    if (!k) {
        fprintf(stderr, "gcn3-emu: kernel %s is registered but not in its code object\n",
                f->name);
        *e = hipErrorInvalidDeviceFunction;
        return NULL;
    }
    *out_mod = mod;
    return k;
}

/* Hidden argument values we know how to provide (AMDGPUUsage "Code Object V5
 * Metadata"); returns 0 when the kind is left zero. */
static int hidden_value(const char *kind, const gcn_launch_params *p, uint64_t *v)
{
    static const char *const cnt[3] = {"hidden_block_count_x", "hidden_block_count_y",
                                       "hidden_block_count_z"};
    static const char *const grp[3] = {"hidden_group_size_x", "hidden_group_size_y",
                                       "hidden_group_size_z"};
    static const char *const rem[3] = {"hidden_remainder_x", "hidden_remainder_y",
                                       "hidden_remainder_z"};
    for (int d = 0; d < 3; d++) {
        if (!strcmp(kind, cnt[d]))
            return *v = p->grid[d], 1;
        if (!strcmp(kind, grp[d]))
            return *v = p->wg_size[d], 1;
        if (!strcmp(kind, rem[d]))
            return *v = 0, 1; /* HIP grids are whole workgroups */
    }
    if (!strcmp(kind, "hidden_grid_dims"))
        return *v = p->grid[2] > 1 ? 3 : p->grid[1] > 1 ? 2 : 1, 1;
    if (!strcmp(kind, "hidden_dynamic_lds_size"))
        return *v = p->dynamic_lds, 1;
    if (!strcmp(kind, "hidden_hostcall_buffer")) /* printf/assert/malloc: hip_hostcall.c */
        return (*v = hip_hostcall_buffer(p->device)) != 0;
    return 0;
}

static const char *demangle(const char *name, char **to_free)
{
    typedef char *(*fn)(const char *, char *, size_t *, int *);
    static fn d;
    static int looked;
    if (!looked) {
        d = (fn)(uintptr_t)dlsym(RTLD_DEFAULT, "__cxa_demangle");
        looked = 1;
    }
    *to_free = NULL;
    int st = -1;
    char *r = d ? d(name, NULL, NULL, &st) : NULL;
    if (r && st == 0) {
        *to_free = r;
        return r;
    }
    free(r);
    return name;
}

static hipError_t launch_status(gcn_launch_status s)
{
    switch (s) {
    case GCN_LAUNCH_OK: return hipSuccess;
    case GCN_LAUNCH_FAULT: return hipErrorIllegalAddress;
    case GCN_LAUNCH_ILLEGAL_INSN: return hipErrorLaunchFailure;
    case GCN_LAUNCH_TRAP: return hipErrorLaunchFailure;
    case GCN_LAUNCH_BAD_CONFIG: return hipErrorInvalidConfiguration;
    case GCN_LAUNCH_TRACE_ERROR: return hipErrorUnknown;
    case GCN_LAUNCH_NOMEM: return hipErrorOutOfMemory;
    case GCN_LAUNCH_DEADLOCK: return hipErrorLaunchTimeOut;
    case GCN_LAUNCH_INTERRUPTED: return hipErrorLaunchFailure;
    }
    return hipErrorUnknown;
}

/* Caller holds rt.mu. `args`: one pointer per explicit argument, or NULL
 * with `argbuf`/`argsize` holding the packed explicit arguments
 * (hipModuleLaunchKernel's HIP_LAUNCH_PARAM_BUFFER_POINTER form). */
/* Occupancy of one CU of the R9 Nano (GCN3 ISA manual Sec. 1 and 3: 4 SIMDs
 * per CU, 10 wave slots per SIMD, 256 VGPRs per lane per SIMD allocated in
 * groups of 4, 800 SGPRs per SIMD allocated in groups of 16, 64 KiB LDS per
 * CU; 16 workgroups per CU): workgroups of `threads` work-items with
 * `lds` bytes of LDS each that one CU holds at once. The rule of HIP's
 * hipOccupancyMaxActiveBlocksPerMultiprocessor (ROCclr hip_platform.cpp:
 * the wave slots left by the register limits, divided by the waves of a
 * workgroup, and the LDS limit). */
#define CU_SIMDS 4u
#define CU_WAVES_PER_SIMD 10u
#define CU_MAX_WG 16u
#define DEV_CUS 64u
static uint32_t blocks_per_cu(const gcn_kernel *k, uint32_t threads, uint64_t lds)
{
    if (!threads)
        return 0;
    uint32_t vgpr = k->kd.vgpr_count > k->vgpr_count ? k->kd.vgpr_count : k->vgpr_count;
    uint32_t sgpr = k->kd.sgpr_count > k->sgpr_count ? k->kd.sgpr_count : k->sgpr_count;
    uint32_t per_simd = CU_WAVES_PER_SIMD;
    if (vgpr) {
        uint32_t w = 256u / ((vgpr + 3u) / 4u * 4u);
        per_simd = w < per_simd ? w : per_simd;
    }
    if (sgpr) {
        uint32_t w = 800u / ((sgpr + 15u) / 16u * 16u);
        per_simd = w < per_simd ? w : per_simd;
    }
    uint32_t waves_per_wg = (threads + 63u) / 64u;
    uint32_t n = CU_SIMDS * per_simd / waves_per_wg;
    uint64_t wg_lds = (uint64_t)k->group_segment_fixed_size + lds;
    if (wg_lds) {
        uint64_t l = (64u * 1024u) / wg_lds;
        n = l < n ? (uint32_t)l : n;
    }
    return n < CU_MAX_WG ? n : CU_MAX_WG;
}

static hipError_t launch_locked_ex(const void *host_fn, dim3 grid, dim3 block, void **args,
                                   const void *argbuf, size_t argsize, size_t shmem, hipStream_t s,
                                   int coop)
{
    if (rt.sticky != hipSuccess)
        return rt.sticky;
    hipError_t sv = hip_stream_check(s);
    if (sv != hipSuccess)
        return sv;
    hip_module *mod = NULL;
    const char *name = NULL;
    hipError_t e = hipSuccess;
    const gcn_kernel *k = resolve(host_fn, &mod, &name, &e);
    if (!k)
        return e;
    uint64_t threads = (uint64_t)block.x * block.y * block.z;
    if (!grid.x || !grid.y || !grid.z || !threads || threads > 1024 ||
        threads > k->max_flat_workgroup_size || shmem > 64 * 1024)
        return hipErrorInvalidConfiguration;
    if (coop) {
        /* Every workgroup must be resident at once (grid sync), as HIP checks. */
        uint64_t n_wg = (uint64_t)grid.x * grid.y * grid.z;
        uint64_t cap = (uint64_t)blocks_per_cu(k, (uint32_t)threads, shmem) * DEV_CUS;
        if (n_wg > cap) {
            fprintf(stderr,
                    "gcn3-emu: cooperative launch of %s: %llu workgroups of %llu work-items cannot all "
                    "be resident (at most %llu: %llu per CU x %u CUs)\n",
                    name, (unsigned long long)n_wg, (unsigned long long)threads,
                    (unsigned long long)cap, (unsigned long long)(cap / DEV_CUS), DEV_CUS);
            return hipErrorCooperativeLaunchTooLarge;
        }
    }

    gcn_launch_params p;
    memset(&p, 0, sizeof p);
    hipStream_t rs = hip_stream_get(s); /* a launch runs on its stream's device */
    p.device = (uint32_t)(rs ? rs->device : hip_current_device());
    p.stream = hip_stream_id(s);
    p.grid[0] = grid.x, p.grid[1] = grid.y, p.grid[2] = grid.z;
    p.wg_size[0] = block.x, p.wg_size[1] = block.y, p.wg_size[2] = block.z;
    p.dynamic_lds = (uint32_t)shmem;

    uint32_t ksize = k->kernarg_segment_size;
    if (k->kd.kernarg_size > ksize)
        ksize = k->kd.kernarg_size;
    uint8_t stackbuf[512], *ka = ksize <= sizeof stackbuf ? stackbuf : calloc(1, ksize);
    if (!ka)
        return hipErrorOutOfMemory;
    memset(ka, 0, ksize);
    size_t explicit_i = 0;
    for (uint32_t i = 0; i < k->n_args; i++) {
        const gcn_kernel_arg *a = &k->args[i];
        if (!strncmp(a->value_kind, "hidden_", 7)) {
            uint64_t v;
            if (hidden_value(a->value_kind, &p, &v))
                memcpy(ka + a->offset, &v, a->size < 8 ? a->size : 8);
            continue;
        }
        if (args) {
            if (!args[explicit_i]) {
                e = hipErrorInvalidValue;
                break;
            }
            memcpy(ka + a->offset, args[explicit_i], a->size);
        } else if (argbuf) {
            /* The packed buffer follows the kernarg layout of the explicit
             * arguments (hip_module launch convention). */
            if ((uint64_t)a->offset + a->size > argsize) {
                e = hipErrorInvalidValue;
                break;
            }
            memcpy(ka + a->offset, (const uint8_t *)argbuf + a->offset, a->size);
        } else if (a->size) {
            e = hipErrorInvalidValue;
            break;
        }
        explicit_i++;
    }
    if (e != hipSuccess) {
        if (ka != stackbuf)
            free(ka);
        return e;
    }
    p.kernarg = ka;
    p.kernarg_size = ksize;

    gcn_launch_result res;
    memset(&res, 0, sizeof res);
    hip_host_memory_before_launch();
    double tl0 = hip_tl_now();
    gcn_launch_status st = coop ? gcn_launch_cooperative(rt.m, mod->loaded, k, &p, &res)
                                : gcn_launch(rt.m, mod->loaded, k, &p, &res);
    if (hip_tl_on()) {
        static const char *const stn[] = {"ok", "memory fault", "illegal instruction", "trap", "bad configuration",
                                          "trace error", "out of memory", "deadlock", "interrupted"};
        char *tf;
        const char *dn = demangle(k->name, &tf);
        hip_tl_kernel(p.device, p.stream, dn, p.grid, p.wg_size, tl0, hip_tl_now(), res.waves, res.wave_instructions,
                      (unsigned)st < sizeof stn / sizeof stn[0] ? stn[st] : "failed");
        free(tf);
    }
    hip_host_memory_after_launch();
    if (ka != stackbuf)
        free(ka);
    if (st == GCN_LAUNCH_TRACE_ERROR) {
        hip_trace_failed(res.message);
        return hipErrorUnknown;
    }
    if (rt.trace && trc_writer_failed(rt.trace))
        hip_trace_failed(trc_writer_error(rt.trace)); /* once: recording stopped, the kernel ran */
    if (st != GCN_LAUNCH_OK) {
        fprintf(stderr, "gcn3-emu: %s\n", res.message[0] ? res.message : "kernel failed");
        if (st == GCN_LAUNCH_INTERRUPTED) {
            /* the user (or gcn3-emu --timeout) stopped the program: end it as
             * the signal would, after the exit handlers closed the trace */
            int sig = rt.interrupt_signal ? rt.interrupt_signal : SIGTERM;
            pthread_mutex_unlock(&rt.mu);
            exit(128 + sig);
        }
        if (st == GCN_LAUNCH_TRAP)
            hip_hostcall_report_trap(p.device, k->name);
        e = launch_status(st);
        if (st == GCN_LAUNCH_FAULT || st == GCN_LAUNCH_ILLEGAL_INSN || st == GCN_LAUNCH_TRAP ||
            st == GCN_LAUNCH_DEADLOCK)
            rt.sticky = e;
        return e;
    }
    if (!rt.quiet) {
        char *tf;
        const char *dn = demangle(k->name, &tf);
        double ms = res.seconds * 1e3;
        fprintf(stderr,
                "gcn3-emu: kernel %s grid (%u,%u,%u) wg (%u,%u,%u): %llu wavefront "
                "instructions, %.3f ms, %.1f M instr/s\n",
                dn, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                (unsigned long long)res.wave_instructions, ms,
                res.seconds > 0 ? res.wave_instructions / res.seconds * 1e-6 : 0.0);
        if (res.sync_reasons)
            fprintf(stderr,
                    "gcn3-emu: kernel %s: its workgroups may wait on each other (%s at pc 0x%llx): run on one "
                    "emulator thread, so that its trace is the same for any --threads\n",
                    dn, gcn_sync_reason_name(res.sync_reasons), (unsigned long long)res.sync_pc);
        free(tf);
    }
    return hipSuccess;
}

static hipError_t launch_locked(const void *host_fn, dim3 grid, dim3 block, void **args,
                                const void *argbuf, size_t argsize, size_t shmem, hipStream_t s)
{
    return launch_locked_ex(host_fn, grid, block, args, argbuf, argsize, shmem, s, 0);
}

HIP_EXPORT hipError_t hipLaunchCooperativeKernel(const void *fn, dim3 grid, dim3 block, void **args,
                                                 unsigned int shmem, hipStream_t stream)
{
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    e = launch_locked_ex(fn, grid, block, args, NULL, 0, shmem, stream, 1);
    hip_leave();
    return hip_ret(e);
}

HIP_EXPORT hipError_t hipExtLaunchKernel(const void *fn, dim3 grid, dim3 block, void **args,
                                         size_t shmem, hipStream_t stream, hipEvent_t start,
                                         hipEvent_t stop, int flags)
{
    (void)flags; /* hipExtAnyOrderLaunch: the emulator runs launches in order anyway */
    if (start)
        hipEventRecord(start, stream);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    e = launch_locked_ex(fn, grid, block, args, NULL, 0, shmem, stream, 0);
    hip_leave();
    if (stop && e == hipSuccess)
        hipEventRecord(stop, stream);
    return hip_ret(e);
}

/* Resolve fn for the occupancy / attribute queries (takes rt.mu). */
static hipError_t query_kernel(const void *fn, const gcn_kernel **k)
{
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return e;
    hip_module *mod;
    const char *name;
    *k = resolve(fn, &mod, &name, &e);
    hip_leave();
    return *k ? hipSuccess : e;
}

static hipError_t occupancy(int *n, const void *fn, int block, size_t shmem)
{
    if (!n || block <= 0)
        return hip_ret(hipErrorInvalidValue);
    const gcn_kernel *k;
    hipError_t e = query_kernel(fn, &k);
    if (e != hipSuccess)
        return hip_ret(e);
    if ((uint32_t)block > k->max_flat_workgroup_size || block > 1024)
        return hip_ret(hipErrorInvalidValue);
    *n = (int)blocks_per_cu(k, (uint32_t)block, shmem);
    return hipSuccess;
}

HIP_EXPORT hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *fn, int block,
                                                                   size_t shmem)
{
    return occupancy(n, fn, block, shmem);
}

HIP_EXPORT hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *fn,
                                                                            int block, size_t shmem,
                                                                            unsigned int flags)
{
    if (flags != hipOccupancyDefault && flags != 1u /* cudaOccupancyDisableCachingOverride */)
        return hip_ret(hipErrorInvalidValue);
    return occupancy(n, fn, block, shmem);
}

/* Block size (a multiple of the wave size, up to the limit) with the most
 * resident work-items per CU; the grid fills the device at that occupancy. */
HIP_EXPORT hipError_t hipOccupancyMaxPotentialBlockSize(int *grid, int *block, const void *fn,
                                                        size_t shmem, int limit)
{
    if (!grid || !block || limit < 0)
        return hip_ret(hipErrorInvalidValue);
    const gcn_kernel *k;
    hipError_t e = query_kernel(fn, &k);
    if (e != hipSuccess)
        return hip_ret(e);
    uint32_t max = k->max_flat_workgroup_size ? k->max_flat_workgroup_size : 1024;
    if (max > 1024)
        max = 1024;
    if (limit && (uint32_t)limit < max)
        max = (uint32_t)limit;
    uint32_t best = 0, best_blocks = 0;
    uint64_t best_items = 0;
    for (uint32_t b = 64; b <= max; b += 64) {
        uint32_t n = blocks_per_cu(k, b, shmem);
        if ((uint64_t)n * b > best_items) /* ties keep the smaller block */
            best_items = (uint64_t)n * b, best = b, best_blocks = n;
    }
    if (!best && max) { /* limit below one wave */
        best = max;
        best_blocks = blocks_per_cu(k, max, shmem);
    }
    *block = (int)best;
    *grid = (int)(best_blocks * DEV_CUS);
    return hipSuccess;
}

HIP_EXPORT hipError_t hipFuncSetAttribute(const void *fn, hipFuncAttribute attr, int value)
{
    const gcn_kernel *k;
    hipError_t e = query_kernel(fn, &k);
    if (e != hipSuccess)
        return hip_ret(e);
    switch (attr) {
    case hipFuncAttributeMaxDynamicSharedMemorySize:
        /* launches are checked against the 64 KiB of the CU anyway */
        if (value < 0 || (uint64_t)value + k->group_segment_fixed_size > 64 * 1024)
            return hip_ret(hipErrorInvalidValue);
        return hipSuccess;
    case hipFuncAttributePreferredSharedMemoryCarveout:
        /* GCN has no L1/LDS split: a hint */
        if (value < -1 || value > 100)
            return hip_ret(hipErrorInvalidValue);
        return hipSuccess;
    default:
        return hip_ret(hipErrorInvalidValue);
    }
}

HIP_EXPORT hipError_t hipLaunchKernel(const void *fn, dim3 grid, dim3 block, void **args,
                                      size_t shmem, hipStream_t stream)
{
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    e = launch_locked(fn, grid, block, args, NULL, 0, shmem, stream);
    hip_leave();
    return hip_ret(e);
}

HIP_EXPORT hipError_t hipFuncGetAttributes(hipFuncAttributes *attr, const void *fn)
{
    if (!attr)
        return hip_ret(hipErrorInvalidValue);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    hip_module *mod;
    const char *name;
    const gcn_kernel *k = resolve(fn, &mod, &name, &e);
    if (k) {
        memset(attr, 0, sizeof *attr);
        attr->binaryVersion = 80;
        attr->localSizeBytes = k->private_segment_fixed_size;
        attr->maxDynamicSharedSizeBytes = (int)(64 * 1024 - k->group_segment_fixed_size);
        attr->maxThreadsPerBlock = (int)k->max_flat_workgroup_size;
        attr->numRegs = (int)k->vgpr_count;
        attr->ptxVersion = 80;
        attr->sharedSizeBytes = k->group_segment_fixed_size;
    }
    hip_leave();
    return hip_ret(e);
}

HIP_EXPORT hipError_t hipFuncSetCacheConfig(const void *fn, hipFuncCache_t cfg)
{
    (void)fn, (void)cfg; /* GCN has no configurable L1/LDS split: a hint */
    return hipSuccess;
}

HIP_EXPORT hipError_t hipDeviceSetCacheConfig(hipFuncCache_t cfg)
{
    (void)cfg;
    return hipSuccess;
}
