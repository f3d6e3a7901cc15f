/*
 * hip_module.c - the module API (hipModuleLoad*, hipModuleGetFunction,
 * hipModuleGetGlobal, hipModuleLaunchKernel, hipModuleUnload, attribute and
 * occupancy queries of module functions) and device globals
 * (hipMemcpyToSymbol/FromSymbol, hipGetSymbolAddress/Size for the
 * __device__/__constant__ variables registered by __hipRegisterVar).
 *
 * A hipModule_t wraps a hip_module (hip_internal.h) that is loaded onto the
 * machine at once and linked into rt.modules like a fat binary's. A
 * hipFunction_t is registered in rt.fns with its own address as the "host
 * function", so the launch path of hip_launch.c (hipLaunchKernel: kernarg
 * layout from the metadata, hidden arguments, fault reporting) and its
 * attribute/occupancy queries serve module functions unchanged.
 *
 * hipModuleLaunchKernel's `extra` form passes one buffer holding the explicit
 * arguments at their kernarg offsets (HIP_LAUNCH_PARAM_BUFFER_POINTER, its
 * size in bytes behind HIP_LAUNCH_PARAM_BUFFER_SIZE, HIP_LAUNCH_PARAM_END);
 * it is turned into one pointer per argument into that buffer.
 *
 * Device globals live in the loaded image (device memory of kind CODE):
 * their address is the module base plus the symbol's ELF vaddr, so kernels
 * and copies (hipMemcpy, recorded in the trace as usual) see the same bytes.
 * A fat binary's image is loaded at the first symbol copy if no kernel has
 * run yet. The image lives on device 0 and is shared by all devices (one
 * address space), unlike real multi-GPU HIP where each device has a copy.
 *
 * Accepted code objects: .hsaco/.co ELF files and clang offload bundles
 * (`hipcc --genco`), code object v2-v5 for gfx801/802/803/810 (loader).
 * Refusals print one line naming the file (or image address) and the reason,
 * e.g. "gcn3-emu: hipModuleLoad(k.co): code object target is
 * amdgcn-amd-amdhsa--gfx906, only gfx803 ...".
 */
#include "hip_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define rt hip_rt_state

/* Occupancy query flags: hipOccupancyDefault (0) and CUDA's
 * cudaOccupancyDisableCachingOverride (1), a caching hint. */
#define OCC_FLAGS 0x01u

struct ihipModuleSymbol_t {
    struct ihipModule_t *owner;
    char *name;
    struct ihipModuleSymbol_t *next;
};

struct ihipModule_t {
    hip_module *mod;
    char what[300]; /* "file.co" or "image at 0x..." for messages */
    struct ihipModuleSymbol_t *fns;
    struct ihipModule_t *next;
};

/* Live hipModule_t handles (rt.mu): stale or foreign handles are refused. */
static struct ihipModule_t *live_modules;

static int live(hipModule_t m)
{
    for (struct ihipModule_t *p = live_modules; p; p = p->next)
        if (p == m)
            return 1;
    return 0;
}

static int live_fn(hipFunction_t f)
{
    for (struct ihipModule_t *p = live_modules; p; p = p->next)
        for (struct ihipModuleSymbol_t *s = p->fns; s; s = s->next)
            if (s == f)
                return 1;
    return 0;
}

/* Caller holds rt.mu. Loads a registered module onto the machine if it is
 * not yet (the same steps as the first launch in hip_launch.c). `what`
 * names the request in messages. */
static hipError_t ensure_loaded(hip_module *mod, const char *what)
{
    if (mod->loaded)
        return hipSuccess;
    if (!mod->co) {
        if (!mod->reported)
            fprintf(stderr, "gcn3-emu: %s: %s\n", what, mod->ld_error);
        mod->reported = 1;
        return hipErrorNoBinaryForGpu;
    }
    char err[512] = "";
    mod->loaded = gcn_module_load(rt.m, mod->co, err, sizeof err);
    if (!mod->loaded) {
        fprintf(stderr, "gcn3-emu: %s: cannot load the code object: %s\n", what, err);
        gcn_co_free(mod->co);
        mod->co = NULL;
        snprintf(mod->ld_error, sizeof mod->ld_error, "%s", err);
        mod->reported = 1;
        return hipErrorInvalidImage;
    }
    mod->co = NULL; /* owned by the loaded module */
    return hipSuccess;
}

static hipError_t ld_error(gcn_ld_status st)
{
    switch (st) {
    case GCN_LD_OK: return hipSuccess;
    case GCN_LD_ENOMEM: return hipErrorOutOfMemory;
    case GCN_LD_NO_TARGET:
    case GCN_LD_UNSUPPORTED: return hipErrorNoBinaryForGpu;
    default: return hipErrorInvalidImage;
    }
}

/* Parse `len` bytes (0: unknown, computed from the headers) of a bundle or
 * ELF and load it. */
static hipError_t load_image(hipModule_t *out, const void *image, size_t len, const char *what)
{
    if (!out || !image)
        return hipErrorInvalidValue;
    *out = NULL;
    hipError_t e = hip_init();
    if (e != hipSuccess)
        return e;
    char err[400] = "";
    gcn_ld_status st = GCN_LD_OK;
    const void *elf = image;
    size_t elf_len = len;
    if ((len == 0 || len >= 24) && memcmp(image, "__CLANG_OFFLOAD_BUNDLE__", 24) == 0) {
        gcn_bundle_entry ent;
        st = gcn_bundle_find_gfx803(image, len, &ent, err, sizeof err);
        if (st == GCN_LD_OK) {
            elf = ent.data;
            elf_len = ent.size;
        }
    } else if (len == 0) {
        st = gcn_elf_extent(image, &elf_len, err, sizeof err);
    }
    gcn_code_object *co = NULL;
    if (st == GCN_LD_OK)
        st = gcn_co_parse(elf, elf_len, &co, err, sizeof err);
    if (st != GCN_LD_OK) {
        fprintf(stderr, "gcn3-emu: %s: %s\n", what, err);
        return ld_error(st);
    }
    struct ihipModule_t *m = calloc(1, sizeof *m);
    hip_module *mod = calloc(1, sizeof *mod);
    if (!m || !mod) {
        free(m), free(mod), gcn_co_free(co);
        return hipErrorOutOfMemory;
    }
    snprintf(m->what, sizeof m->what, "%s", what);
    mod->co = co;
    m->mod = mod;
    if ((e = hip_enter()) != hipSuccess) {
        gcn_co_free(co), free(mod), free(m);
        return e;
    }
    e = ensure_loaded(mod, what);
    if (e == hipSuccess) {
        mod->next = rt.modules;
        rt.modules = mod;
        m->next = live_modules;
        live_modules = m;
        *out = m;
    }
    hip_leave();
    if (e != hipSuccess)
        free(mod), free(m);
    return e;
}

HIP_EXPORT hipError_t hipModuleLoadData(hipModule_t *module, const void *image)
{
    char what[64];
    snprintf(what, sizeof what, "hipModuleLoadData(image at %p)", image);
    return hip_ret(load_image(module, image, 0, what));
}

HIP_EXPORT hipError_t hipModuleLoadDataEx(hipModule_t *module, const void *image,
                                          unsigned int num_options, hipJitOption *options,
                                          void **option_values)
{
    /* JIT options concern PTX compilation: code objects are loaded as they are. */
    (void)options, (void)option_values;
    (void)num_options;
    return hipModuleLoadData(module, image);
}

HIP_EXPORT hipError_t hipModuleLoad(hipModule_t *module, const char *fname)
{
    if (!module || !fname)
        return hip_ret(hipErrorInvalidValue);
    char what[300];
    snprintf(what, sizeof what, "hipModuleLoad(%s)", fname);
    FILE *f = fopen(fname, "rb");
    if (!f) {
        fprintf(stderr, "gcn3-emu: %s: %s\n", what, strerror(errno));
        return hip_ret(hipErrorFileNotFound);
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 1 << 16;
            uint8_t *nb = ncap > ((size_t)1 << 31) ? NULL : realloc(buf, ncap);
            if (!nb) {
                fclose(f);
                free(buf);
                fprintf(stderr, "gcn3-emu: %s: file too large or out of memory\n", what);
                return hip_ret(hipErrorOutOfMemory);
            }
            buf = nb, cap = ncap;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    int rerr = ferror(f);
    fclose(f);
    hipError_t e;
    if (rerr) {
        fprintf(stderr, "gcn3-emu: %s: read error\n", what);
        e = hipErrorFileNotFound;
    } else if (len == 0) {
        fprintf(stderr, "gcn3-emu: %s: empty file\n", what);
        e = hipErrorInvalidImage;
    } else {
        e = load_image(module, buf, len, what);
    }
    free(buf); /* the loader keeps its own copy of the ELF */
    return hip_ret(e);
}

HIP_EXPORT hipError_t hipModuleUnload(hipModule_t module)
{
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    if (!module || !live(module)) {
        hip_leave();
        return hip_ret(hipErrorInvalidResourceHandle);
    }
    hip_module *mod = module->mod;
    /* Its functions leave the launch table. */
    for (size_t i = rt.n_fns; i-- > 0;)
        if (rt.fns[i].mod == mod) {
            free(rt.fns[i].name);
            rt.fns[i] = rt.fns[--rt.n_fns];
        }
    for (hip_module **pp = &rt.modules; *pp; pp = &(*pp)->next)
        if (*pp == mod) {
            *pp = mod->next;
            break;
        }
    for (struct ihipModule_t **pp = &live_modules; *pp; pp = &(*pp)->next)
        if (*pp == module) {
            *pp = module->next;
            break;
        }
    gcn_module_unload(rt.m, mod->loaded);
    hip_leave();
    for (struct ihipModuleSymbol_t *s = module->fns, *n; s; s = n) {
        n = s->next;
        free(s->name);
        free(s);
    }
    free(mod);
    free(module);
    return hipSuccess;
}

HIP_EXPORT hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module,
                                           const char *kname)
{
    if (!function || !kname)
        return hip_ret(hipErrorInvalidValue);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    if (!module || !live(module)) {
        hip_leave();
        return hip_ret(hipErrorInvalidResourceHandle);
    }
    struct ihipModuleSymbol_t *s;
    for (s = module->fns; s; s = s->next)
        if (!strcmp(s->name, kname))
            break;
    if (!s) {
        if (!gcn_co_find_kernel(gcn_module_co(module->mod->loaded), kname)) {
            hip_leave();
            return hip_ret(hipErrorNotFound);
        }
        s = calloc(1, sizeof *s);
        char *nm = strdup(kname), *nm2 = strdup(kname);
        hip_function *fns = rt.fns;
        if (s && nm && nm2 && rt.n_fns == rt.cap_fns) {
            size_t cap = rt.cap_fns ? rt.cap_fns * 2 : 32;
            fns = realloc(rt.fns, cap * sizeof *fns);
            if (fns) {
                rt.fns = fns;
                rt.cap_fns = cap;
            }
        }
        if (!s || !nm || !nm2 || !fns) {
            free(s), free(nm), free(nm2);
            hip_leave();
            return hip_ret(hipErrorOutOfMemory);
        }
        s->owner = module;
        s->name = nm;
        s->next = module->fns;
        module->fns = s;
        rt.fns[rt.n_fns++] = (hip_function){.host_fn = s, .mod = module->mod, .name = nm2};
    }
    *function = s;
    hip_leave();
    return hipSuccess;
}

HIP_EXPORT hipError_t hipModuleGetGlobal(hipDeviceptr_t *dptr, size_t *bytes, hipModule_t hmod,
                                         const char *name)
{
    if (!name || (!dptr && !bytes))
        return hip_ret(hipErrorInvalidValue);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    if (!hmod || !live(hmod)) {
        hip_leave();
        return hip_ret(hipErrorInvalidResourceHandle);
    }
    const gcn_symbol *sym = gcn_co_find_symbol(gcn_module_co(hmod->mod->loaded), name);
    if (sym) {
        if (dptr)
            *dptr = (hipDeviceptr_t)(uintptr_t)(gcn_module_base(hmod->mod->loaded) + sym->vaddr);
        if (bytes)
            *bytes = sym->size;
    }
    hip_leave();
    return hip_ret(sym ? hipSuccess : hipErrorNotFound);
}

/* ---- launches ---------------------------------------------------------------- */

/* The kernel of a live function handle (rt.mu held); NULL if stale. */
static const gcn_kernel *fn_kernel(hipFunction_t f)
{
    if (!f || !live_fn(f))
        return NULL;
    return gcn_co_find_kernel(gcn_module_co(f->owner->mod->loaded), f->name);
}

HIP_EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy,
                                            unsigned int gz, unsigned int bx, unsigned int by,
                                            unsigned int bz, unsigned int shmem, hipStream_t stream,
                                            void **kernel_params, void **extra)
{
    if (kernel_params && extra)
        return hip_ret(hipErrorInvalidValue); /* one argument form or the other */
    void *stackargs[64], **args = kernel_params;
    if (extra) {
        const uint8_t *buf = NULL;
        size_t size = 0;
        int have_size = 0;
        for (size_t i = 0; extra[i] != HIP_LAUNCH_PARAM_END; i += 2) {
            if (i > 64 || !extra[i + 1])
                return hip_ret(hipErrorInvalidValue);
            if (extra[i] == HIP_LAUNCH_PARAM_BUFFER_POINTER)
                buf = extra[i + 1];
            else if (extra[i] == HIP_LAUNCH_PARAM_BUFFER_SIZE)
                size = *(const size_t *)extra[i + 1], have_size = 1;
            else
                return hip_ret(hipErrorInvalidValue);
        }
        if (!buf || !have_size)
            return hip_ret(hipErrorInvalidValue);
        /* One pointer per explicit argument, at its offset in the buffer. */
        hipError_t e = hip_enter();
        if (e != hipSuccess)
            return hip_ret(e);
        const gcn_kernel *k = fn_kernel(f);
        size_t n = 0;
        void **heap = NULL;
        if (!k) {
            hip_leave();
            return hip_ret(hipErrorInvalidResourceHandle);
        }
        if (k->n_args > sizeof stackargs / sizeof stackargs[0] &&
            !(heap = calloc(k->n_args, sizeof *heap))) {
            hip_leave();
            return hip_ret(hipErrorOutOfMemory);
        }
        args = heap ? heap : stackargs;
        for (uint32_t i = 0; i < k->n_args && e == hipSuccess; i++) {
            const gcn_kernel_arg *a = &k->args[i];
            if (!strncmp(a->value_kind, "hidden_", 7))
                continue;
            if ((uint64_t)a->offset + a->size > size) {
                fprintf(stderr,
                        "gcn3-emu: hipModuleLaunchKernel(%s): argument %u [%u, +%u) lies past "
                        "HIP_LAUNCH_PARAM_BUFFER_SIZE %zu\n",
                        k->name, i, a->offset, a->size, size);
                e = hipErrorInvalidValue;
            }
            args[n++] = (void *)(buf + a->offset);
        }
        hip_leave();
        if (e == hipSuccess)
            e = hipLaunchKernel(f, (dim3){gx, gy, gz}, (dim3){bx, by, bz}, args, shmem, stream);
        free(heap);
        return hip_ret(e);
    }
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    int ok = fn_kernel(f) != NULL;
    hip_leave();
    if (!ok)
        return hip_ret(hipErrorInvalidResourceHandle);
    return hipLaunchKernel(f, (dim3){gx, gy, gz}, (dim3){bx, by, bz}, args, shmem, stream);
}

/* ---- attributes and occupancy of module functions ---------------------------- */

HIP_EXPORT hipError_t hipFuncGetAttribute(int *value, hipFunction_attribute attrib,
                                          hipFunction_t hfunc)
{
    if (!value)
        return hip_ret(hipErrorInvalidValue);
    hipFuncAttributes a;
    hipError_t e = hipFuncGetAttributes(&a, hfunc);
    if (e != hipSuccess)
        return e;
    switch (attrib) {
    case HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = a.maxThreadsPerBlock; break;
    case HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = (int)a.sharedSizeBytes; break;
    case HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *value = (int)a.constSizeBytes; break;
    case HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *value = (int)a.localSizeBytes; break;
    case HIP_FUNC_ATTRIBUTE_NUM_REGS: *value = a.numRegs; break;
    case HIP_FUNC_ATTRIBUTE_PTX_VERSION: *value = a.ptxVersion; break;
    case HIP_FUNC_ATTRIBUTE_BINARY_VERSION: *value = a.binaryVersion; break;
    case HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA: *value = a.cacheModeCA; break;
    case HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        *value = a.maxDynamicSharedSizeBytes;
        break;
    case HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        *value = a.preferredShmemCarveout;
        break;
    default: return hip_ret(hipErrorInvalidValue);
    }
    return hipSuccess;
}

HIP_EXPORT hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int *n, hipFunction_t f,
                                                                         int block, size_t shmem)
{
    return hipOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, shmem);
}

HIP_EXPORT hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *n, hipFunction_t f, int block, size_t shmem, unsigned int flags)
{
    if (flags & ~OCC_FLAGS)
        return hip_ret(hipErrorInvalidValue);
    return hipOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, shmem);
}

HIP_EXPORT hipError_t hipModuleOccupancyMaxPotentialBlockSize(int *grid, int *block,
                                                              hipFunction_t f, size_t shmem,
                                                              int limit)
{
    return hipOccupancyMaxPotentialBlockSize(grid, block, f, shmem, limit);
}

HIP_EXPORT hipError_t hipModuleOccupancyMaxPotentialBlockSizeWithFlags(int *grid, int *block,
                                                                       hipFunction_t f,
                                                                       size_t shmem, int limit,
                                                                       unsigned int flags)
{
    if (flags & ~OCC_FLAGS)
        return hip_ret(hipErrorInvalidValue);
    return hipOccupancyMaxPotentialBlockSize(grid, block, f, shmem, limit);
}

/* ---- device globals ------------------------------------------------------------ */

/* Caller holds rt.mu. Device address and size of a registered __device__ /
 * __constant__ variable given its host shadow's address. */
static hipError_t symbol_locked(const void *symbol, uint8_t **addr, size_t *size)
{
    if (!symbol)
        return hipErrorInvalidSymbol;
    hip_var *v = NULL;
    for (size_t i = 0; i < rt.n_vars; i++)
        if (rt.vars[i].host_var == symbol) {
            v = &rt.vars[i];
            break;
        }
    if (!v)
        return hipErrorInvalidSymbol;
    char what[320];
    snprintf(what, sizeof what, "device variable %s", v->name);
    hipError_t e = ensure_loaded(v->mod, what);
    if (e != hipSuccess)
        return e;
    const gcn_symbol *s = gcn_co_find_symbol(gcn_module_co(v->mod->loaded), v->name);
    if (!s) {
        fprintf(stderr, "gcn3-emu: device variable %s is registered but not in its code object\n",
                v->name);
        return hipErrorInvalidSymbol;
    }
    *addr = (uint8_t *)(uintptr_t)(gcn_module_base(v->mod->loaded) + s->vaddr);
    *size = s->size ? s->size : v->size;
    return hipSuccess;
}

static hipError_t symbol_lookup(const void *symbol, uint8_t **addr, size_t *size)
{
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return e;
    e = symbol_locked(symbol, addr, size);
    hip_leave();
    return e;
}

HIP_EXPORT hipError_t hipGetSymbolAddress(void **dev_ptr, const void *symbol)
{
    if (!dev_ptr)
        return hip_ret(hipErrorInvalidValue);
    uint8_t *a;
    size_t n;
    hipError_t e = symbol_lookup(symbol, &a, &n);
    if (e == hipSuccess)
        *dev_ptr = a;
    return hip_ret(e);
}

HIP_EXPORT hipError_t hipGetSymbolSize(size_t *size, const void *symbol)
{
    if (!size)
        return hip_ret(hipErrorInvalidValue);
    uint8_t *a;
    size_t n;
    hipError_t e = symbol_lookup(symbol, &a, &n);
    if (e == hipSuccess)
        *size = n;
    return hip_ret(e);
}

/* dir 0: host -> symbol, 1: symbol -> host. The copy itself is an ordinary
 * hipMemcpyAsync (checks, trace event). */
static hipError_t symbol_copy(int dir, void *host, const void *symbol, size_t n, size_t offset,
                              hipMemcpyKind kind, hipStream_t s)
{
    if (!host && n)
        return hip_ret(hipErrorInvalidValue);
    hipMemcpyKind want = dir ? hipMemcpyDeviceToHost : hipMemcpyHostToDevice;
    if (kind != want && kind != hipMemcpyDeviceToDevice && kind != hipMemcpyDefault)
        return hip_ret(hipErrorInvalidMemcpyDirection);
    uint8_t *a;
    size_t size;
    hipError_t e = symbol_lookup(symbol, &a, &size);
    if (e != hipSuccess)
        return hip_ret(e);
    if (offset > size || n > size - offset)
        return hip_ret(hipErrorInvalidValue);
    if (n == 0)
        return hipSuccess;
    return dir ? hipMemcpyAsync(host, a + offset, n, kind, s)
               : hipMemcpyAsync(a + offset, host, n, kind, s);
}

HIP_EXPORT hipError_t hipMemcpyToSymbol(const void *symbol, const void *src, size_t n,
                                        size_t offset, hipMemcpyKind kind)
{
    return symbol_copy(0, (void *)src, symbol, n, offset, kind, NULL);
}

HIP_EXPORT hipError_t hipMemcpyToSymbolAsync(const void *symbol, const void *src, size_t n,
                                             size_t offset, hipMemcpyKind kind, hipStream_t s)
{
    return symbol_copy(0, (void *)src, symbol, n, offset, kind, s);
}

HIP_EXPORT hipError_t hipMemcpyToSymbol_spt(const void *symbol, const void *src, size_t n,
                                            size_t offset, hipMemcpyKind kind)
{
    return symbol_copy(0, (void *)src, symbol, n, offset, kind, NULL);
}

HIP_EXPORT hipError_t hipMemcpyFromSymbol(void *dst, const void *symbol, size_t n, size_t offset,
                                          hipMemcpyKind kind)
{
    return symbol_copy(1, dst, symbol, n, offset, kind, NULL);
}

HIP_EXPORT hipError_t hipMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t n,
                                               size_t offset, hipMemcpyKind kind, hipStream_t s)
{
    return symbol_copy(1, dst, symbol, n, offset, kind, s);
}

HIP_EXPORT hipError_t hipMemcpyFromSymbol_spt(void *dst, const void *symbol, size_t n,
                                              size_t offset, hipMemcpyKind kind)
{
    return symbol_copy(1, dst, symbol, n, offset, kind, NULL);
}
