/*
 * hip_memory.c - device and pinned host allocations, copies, memsets,
 * synchronisation, streams and events.
 *
 * Execution model: every call runs to completion before it returns (the
 * emulator is synchronous), so the *Async variants, streams and events keep
 * their semantics trivially; stream ids still go into the trace.
 *
 * Trace events written here (the machine records ALLOC/FREE itself):
 * COPY H2D with the bytes written to the device, COPY D2H with the bytes the
 * host received, COPY D2D without data, MEMSET (byte value), SYNC for
 * hipDeviceSynchronize/hipStreamSynchronize/hipEventSynchronize. A 16/32-bit
 * memset whose pattern is not one repeated byte is recorded as an H2D copy
 * of the resulting bytes, since MEMSET events carry a byte value.
 *
 * Pointer classification: an address inside a hipMalloc allocation is device
 * memory; anything else (including hipHostMalloc memory) is host memory.
 * A range that starts inside an allocation but runs past its end is an error
 * (hipErrorInvalidValue), never a partial copy. Copies involving host-visible
 * memory (pinned, managed, registered) accept any direction, as HIP does.
 *
 * Host-visible memory: hipHostMalloc memory is a pinned allocation kernels
 * reach directly (zero-copy); hipMallocManaged memory is a device allocation
 * of the current device that the host reads and writes directly;
 * hipHostRegister allocates a pinned mirror of the program's range (the
 * device pointer hipHostGetDevicePointer returns) and keeps the two equal
 * around every launch. When recording, host writes to such memory become
 * COPY INIT events before the next launch (hip_host_memory_before_launch).
 *
 * Streams and events: all work is complete when a call returns, so queries
 * return hipSuccess, callbacks run at once, and hipStreamWaitEvent /
 * hipEventSynchronize record a SYNC on the event's stream (a replay then
 * orders the two streams' work as the program asked).
 */
#include "hip_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define rt hip_rt_state

/* ---- allocation bookkeeping (caller holds rt.mu) ------------------------- */

static hip_alloc *track(void *p, size_t size, int device, int host)
{
    if (rt.n_allocs == rt.cap_allocs) {
        size_t cap = rt.cap_allocs ? rt.cap_allocs * 2 : 64;
        hip_alloc *a = realloc(rt.allocs, cap * sizeof *a);
        if (!a)
            return NULL;
        rt.allocs = a;
        rt.cap_allocs = cap;
    }
    rt.allocs[rt.n_allocs] = (hip_alloc){.p = p, .size = size, .device = device, .host = host};
    if (!host)
        rt.used[device] += size;
    return &rt.allocs[rt.n_allocs++];
}

/* The tracked allocation containing p (any byte), or NULL. */
static hip_alloc *tracked_range(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    for (size_t i = rt.n_allocs; i-- > 0;)
        if (a >= (uintptr_t)rt.allocs[i].p && a - (uintptr_t)rt.allocs[i].p < rt.allocs[i].size)
            return &rt.allocs[i];
    return NULL;
}

/* The hipHostRegister'ed range containing p, or NULL. */
static hip_alloc *registered_range(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    for (size_t i = rt.n_allocs; i-- > 0;)
        if (rt.allocs[i].user && a >= (uintptr_t)rt.allocs[i].user &&
            a - (uintptr_t)rt.allocs[i].user < rt.allocs[i].size)
            return &rt.allocs[i];
    return NULL;
}

static int host_visible(const hip_alloc *a)
{
    return a && (a->host || a->managed);
}

static hip_alloc *tracked(const void *p)
{
    for (size_t i = rt.n_allocs; i-- > 0;)
        if (rt.allocs[i].p == p)
            return &rt.allocs[i];
    return NULL;
}

static void untrack(hip_alloc *a)
{
    if (!a->host)
        rt.used[a->device] -= a->size;
    free(a->shadow);
    *a = rt.allocs[--rt.n_allocs];
}

/* host: 1 pinned (hipHostMalloc); managed: hipMallocManaged. */
static hipError_t alloc_common(void **ptr, size_t size, int host, int managed, unsigned flags)
{
    if (!ptr)
        return hip_ret(hipErrorInvalidValue);
    *ptr = NULL;
    if (size == 0)
        return hipSuccess;
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    int dev = hip_current_device();
    void *p = NULL;
    if (host || rt.used[dev] + size <= HIP_DEV_MEM_BYTES)
        p = gcn_mem_alloc_ex(rt.m, (uint32_t)dev, size, host ? TRC_MEM_HOST_PINNED : TRC_MEM_DEVICE,
                             managed ? GCN_ALLOC_MANAGED : 0); /* managed: recorded as such (2.1) */
    if (p) {
        hip_alloc *a = track(p, size, dev, host);
        if (a) {
            a->managed = managed;
            a->flags = flags;
            /* gcn_mem_alloc memory starts zeroed, as the replay's does */
            if ((host || managed) && rt.trace && !(a->shadow = calloc(1, size)))
                untrack(a), a = NULL;
        }
        if (!a) {
            gcn_mem_free(rt.m, p);
            p = NULL;
        }
    }
    hip_leave();
    if (!p)
        return hip_ret(hipErrorOutOfMemory);
    *ptr = p;
    return hipSuccess;
}

static hipError_t free_common(void *p, int host)
{
    if (!p)
        return hipSuccess;
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e == hipErrorDeinitialized ? hipSuccess : e);
    hip_alloc *a = tracked(p);
    if (!a || a->host != host || a->user) {
        hip_leave();
        return hip_ret(hipErrorInvalidValue);
    }
    gcn_mem_free(rt.m, p);
    untrack(a);
    hip_leave();
    return hipSuccess;
}

HIP_EXPORT hipError_t hipMalloc(void **ptr, size_t size) { return alloc_common(ptr, size, 0, 0, 0); }
/* hipFree releases hipMalloc and hipMallocManaged memory (host == 0; registered
 * memory has host == 2 and is released by hipHostUnregister) */
HIP_EXPORT hipError_t hipFree(void *p) { return free_common(p, 0); }

#define HOST_MALLOC_FLAGS                                                                        \
    (hipHostMallocPortable | hipHostMallocMapped | hipHostMallocWriteCombined |                  \
     hipHostMallocNumaUser | hipHostMallocCoherent | hipHostMallocNonCoherent)

HIP_EXPORT hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags)
{
    /* Portable/mapped/write-combined/coherent: one address space, all the
     * same here; coherent and non-coherent together are contradictory. */
    if ((flags & ~(unsigned)HOST_MALLOC_FLAGS) ||
        ((flags & hipHostMallocCoherent) && (flags & hipHostMallocNonCoherent)))
        return hip_ret(hipErrorInvalidValue);
    return alloc_common(ptr, size, 1, 0, flags);
}
HIP_EXPORT hipError_t hipHostAlloc(void **ptr, size_t size, unsigned int flags)
{
    return hipHostMalloc(ptr, size, flags);
}
HIP_EXPORT hipError_t hipMallocHost(void **ptr, size_t size) { return alloc_common(ptr, size, 1, 0, 0); }
HIP_EXPORT hipError_t hipMemAllocHost(void **ptr, size_t size) { return alloc_common(ptr, size, 1, 0, 0); }

HIP_EXPORT hipError_t hipMallocManaged(void **ptr, size_t size, unsigned int flags)
{
    if (flags != hipMemAttachGlobal && flags != hipMemAttachHost)
        return hip_ret(hipErrorInvalidValue);
    if (ptr && size == 0) {
        *ptr = NULL;
        return hip_ret(hipErrorInvalidValue);
    }
    return alloc_common(ptr, size, 0, 1, flags);
}
HIP_EXPORT hipError_t hipHostFree(void *p) { return free_common(p, 1); }
HIP_EXPORT hipError_t hipFreeHost(void *p) { return free_common(p, 1); }

HIP_EXPORT hipError_t hipHostGetDevicePointer(void **dev_ptr, void *host_ptr, unsigned int flags)
{
    if (!dev_ptr || !host_ptr || flags)
        return hip_ret(hipErrorInvalidValue);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    hip_alloc *r = registered_range(host_ptr);
    hip_alloc *a = r ? r : tracked_range(host_ptr);
    int ok = a && a->host;
    if (r)
        *dev_ptr = (uint8_t *)r->p + ((uintptr_t)host_ptr - (uintptr_t)r->user);
    else if (ok)
        *dev_ptr = host_ptr; /* pinned memory: one address space */
    hip_leave();
    return ok ? hipSuccess : hip_ret(hipErrorInvalidValue);
}

HIP_EXPORT hipError_t hipHostGetFlags(unsigned int *flags, void *host_ptr)
{
    if (!flags || !host_ptr)
        return hip_ret(hipErrorInvalidValue);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    hip_alloc *a = registered_range(host_ptr);
    if (!a)
        a = tracked_range(host_ptr);
    int ok = a && a->host;
    if (ok)
        *flags = a->flags;
    hip_leave();
    return ok ? hipSuccess : hip_ret(hipErrorInvalidValue);
}

/* hipHostRegister: a pinned mirror of [ptr, ptr+size) that kernels use
 * through hipHostGetDevicePointer; kept equal to the program's range around
 * every launch (hip_host_memory_before/after_launch). Kernels handed the
 * program's own pointer fault with a report naming the address. */
HIP_EXPORT hipError_t hipHostRegister(void *ptr, size_t size, unsigned int flags)
{
    if (!ptr || !size ||
        (flags & ~(unsigned)(hipHostRegisterPortable | hipHostRegisterMapped |
                             hipHostRegisterIoMemory | hipExtHostRegisterCoarseGrained)))
        return hip_ret(hipErrorInvalidValue);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    uintptr_t lo = (uintptr_t)ptr, hi = lo + size;
    for (size_t i = 0; i < rt.n_allocs; i++) {
        const hip_alloc *a = &rt.allocs[i];
        if (a->user && lo < (uintptr_t)a->user + a->size && (uintptr_t)a->user < hi) {
            hip_leave();
            return hip_ret(hipErrorHostMemoryAlreadyRegistered);
        }
    }
    int dev = hip_current_device();
    void *m = gcn_mem_alloc(rt.m, (uint32_t)dev, size, TRC_MEM_HOST_PINNED);
    hip_alloc *a = m ? track(m, size, dev, 2) : NULL;
    if (a) {
        a->user = ptr;
        a->flags = flags;
        memcpy(m, ptr, size);
        if (rt.trace && !(a->shadow = calloc(1, size)))
            untrack(a), a = NULL;
    }
    if (!a && m)
        gcn_mem_free(rt.m, m);
    hip_leave();
    return a ? hipSuccess : hip_ret(hipErrorOutOfMemory);
}

HIP_EXPORT hipError_t hipHostUnregister(void *ptr)
{
    if (!ptr)
        return hip_ret(hipErrorInvalidValue);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    hip_alloc *a = NULL;
    for (size_t i = 0; i < rt.n_allocs; i++)
        if (rt.allocs[i].user == ptr)
            a = &rt.allocs[i];
    if (a) {
        gcn_mem_free(rt.m, a->p);
        untrack(a);
    }
    hip_leave();
    return a ? hipSuccess : hip_ret(hipErrorHostMemoryNotRegistered);
}

void hip_host_memory_before_launch(void)
{
    for (size_t i = 0; i < rt.n_allocs; i++) {
        hip_alloc *a = &rt.allocs[i];
        if (a->user)
            memcpy(a->p, a->user, a->size);
        if (!a->shadow || !memcmp(a->shadow, a->p, a->size))
            continue;
        /* Record the changed span [lo, hi) as written by the host. */
        const uint8_t *cur = a->p;
        size_t lo = 0, hi = a->size;
        while (cur[lo] == a->shadow[lo])
            lo++;
        while (cur[hi - 1] == a->shadow[hi - 1])
            hi--;
        memcpy(a->shadow + lo, cur + lo, hi - lo);
        trc_event ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = TRC_EV_COPY;
        ev.device = (uint32_t)a->device;
        ev.addr = (uint64_t)(uintptr_t)(cur + lo);
        ev.src = ev.addr;
        ev.size = hi - lo;
        ev.copy_kind = TRC_COPY_INIT;
        ev.data = cur + lo;
        hip_trace_event(&ev);
    }
}

void hip_host_memory_after_launch(void)
{
    for (size_t i = 0; i < rt.n_allocs; i++) {
        hip_alloc *a = &rt.allocs[i];
        if (a->user)
            memcpy(a->user, a->p, a->size);
        if (a->shadow) /* the kernel's stores are in the trace */
            memcpy(a->shadow, a->p, a->size);
    }
}

HIP_EXPORT hipError_t hipPointerGetAttributes(hipPointerAttribute_t *attr, const void *ptr)
{
    if (!attr || !ptr)
        return hip_ret(hipErrorInvalidValue);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    hip_alloc *r = registered_range(ptr);
    hip_alloc *a = r ? r : tracked_range(ptr);
    if (a) {
        memset(attr, 0, sizeof *attr);
        attr->device = a->device;
        attr->allocationFlags = a->flags;
        attr->isManaged = a->managed;
        if (r) {
            size_t off = (uintptr_t)ptr - (uintptr_t)r->user;
            attr->memoryType = hipMemoryTypeHost;
            attr->hostPointer = (void *)(uintptr_t)ptr;
            attr->devicePointer = (uint8_t *)r->p + off;
        } else if (a->host) {
            attr->memoryType = hipMemoryTypeHost;
            attr->hostPointer = attr->devicePointer = (void *)(uintptr_t)ptr;
        } else {
            attr->memoryType = hipMemoryTypeDevice;
            attr->devicePointer = (void *)(uintptr_t)ptr;
            if (a->managed)
                attr->hostPointer = (void *)(uintptr_t)ptr;
        }
    }
    hip_leave();
    return a ? hipSuccess : hip_ret(hipErrorInvalidValue);
}

/* Row pitch of hipMallocPitch: rows start 256-byte aligned
 * (hipDeviceAttributeTexturePitchAlignment). */
#define PITCH_ALIGN 256u

static hipError_t malloc_pitch(void **ptr, size_t *pitch, size_t width, size_t height)
{
    if (!ptr || !pitch)
        return hip_ret(hipErrorInvalidValue);
    size_t pt = (width + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN;
    if (height && pt > SIZE_MAX / height)
        return hip_ret(hipErrorOutOfMemory);
    *pitch = pt;
    return alloc_common(ptr, pt * height, 0, 0, 0);
}

HIP_EXPORT hipError_t hipMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height)
{
    return malloc_pitch(ptr, pitch, width, height);
}

HIP_EXPORT hipError_t hipMemAllocPitch(hipDeviceptr_t *ptr, size_t *pitch, size_t width, size_t height,
                                       unsigned int element_size)
{
    if (element_size != 4 && element_size != 8 && element_size != 16)
        return hip_ret(hipErrorInvalidValue);
    return malloc_pitch(ptr, pitch, width, height);
}

HIP_EXPORT hipError_t hipMemGetInfo(size_t *free_bytes, size_t *total)
{
    if (!free_bytes || !total)
        return hip_ret(hipErrorInvalidValue);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    int dev = hip_current_device();
    *total = HIP_DEV_MEM_BYTES;
    *free_bytes = HIP_DEV_MEM_BYTES - rt.used[dev];
    hip_leave();
    return hipSuccess;
}

HIP_EXPORT hipError_t hipMemPtrGetInfo(void *ptr, size_t *size)
{
    if (!ptr || !size)
        return hip_ret(hipErrorInvalidValue);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    hip_alloc *a = tracked(ptr);
    if (a)
        *size = a->size;
    hip_leave();
    return a ? hipSuccess : hip_ret(hipErrorInvalidValue);
}

/* ---- copies ------------------------------------------------------------------ */

/* 1: [p, p+n) is inside a device allocation (device in *dev); 0: host memory;
 * -1: starts inside a device allocation but runs past its end. */
static int classify(const void *p, size_t n, uint32_t *dev)
{
    gcn_alloc_info ai;
    uint64_t a = (uint64_t)(uintptr_t)p;
    if (!gcn_mem_find(rt.m, a, 1, &ai) || ai.kind == TRC_MEM_HOST_PINNED)
        return 0;
    if (n > ai.size || a - ai.base > ai.size - n)
        return -1;
    *dev = ai.device;
    return 1;
}

/* Caller holds rt.mu. */
static hipError_t copy_locked(void *dst, const void *src, size_t n, hipMemcpyKind kind,
                              hipStream_t s)
{
    if (rt.sticky != hipSuccess)
        return rt.sticky;
    hipError_t sv = hip_stream_check(s);
    if (sv != hipSuccess)
        return sv;
    if (n == 0)
        return hipSuccess;
    if (!dst || !src)
        return hipErrorInvalidValue;
    uint32_t ddev = 0, sdev = 0;
    int dd = classify(dst, n, &ddev), sd = classify(src, n, &sdev);
    if (dd < 0 || sd < 0)
        return hipErrorInvalidValue;
    hipMemcpyKind actual = dd ? (sd ? hipMemcpyDeviceToDevice : hipMemcpyHostToDevice)
                              : (sd ? hipMemcpyDeviceToHost : hipMemcpyHostToHost);
    if (kind < hipMemcpyHostToHost || kind > hipMemcpyDefault)
        return hipErrorInvalidMemcpyDirection;
    if (kind != hipMemcpyDefault && kind != actual && !host_visible(tracked_range(dst)) &&
        !host_visible(tracked_range(src)) && !registered_range(dst) && !registered_range(src))
        return hipErrorInvalidValue;
    memmove(dst, src, n);
    trc_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = TRC_EV_COPY;
    ev.stream = hip_stream_id(s);
    ev.addr = (uint64_t)(uintptr_t)dst;
    ev.src = (uint64_t)(uintptr_t)src;
    ev.size = n;
    switch (actual) {
    case hipMemcpyHostToDevice:
        ev.device = ddev, ev.copy_kind = TRC_COPY_H2D, ev.data = dst;
        break;
    case hipMemcpyDeviceToHost:
        ev.device = sdev, ev.copy_kind = TRC_COPY_D2H, ev.data = dst;
        break;
    case hipMemcpyDeviceToDevice:
        /* runs on the stream's device (the current one for the null stream) */
        ev.device = hip_stream_get(s) ? (uint32_t)hip_stream_get(s)->device : (uint32_t)hip_current_device();
        ev.copy_kind = TRC_COPY_D2D, ev.data = NULL;
        (void)ddev;
        break;
    default:
        return hipSuccess; /* host to host: not device traffic */
    }
    hip_trace_event(&ev);
    return hipSuccess;
}

static hipError_t copy(void *dst, const void *src, size_t n, hipMemcpyKind kind, hipStream_t s)
{
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    e = copy_locked(dst, src, n, kind, s);
    hip_leave();
    return hip_ret(e);
}

HIP_EXPORT hipError_t hipMemcpy(void *dst, const void *src, size_t n, hipMemcpyKind kind)
{
    return copy(dst, src, n, kind, NULL);
}
HIP_EXPORT hipError_t hipMemcpyAsync(void *dst, const void *src, size_t n, hipMemcpyKind kind,
                                     hipStream_t s)
{
    return copy(dst, src, n, kind, s);
}
HIP_EXPORT hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void *src, size_t n)
{
    return copy(dst, src, n, hipMemcpyHostToDevice, NULL);
}
HIP_EXPORT hipError_t hipMemcpyDtoH(void *dst, hipDeviceptr_t src, size_t n)
{
    return copy(dst, src, n, hipMemcpyDeviceToHost, NULL);
}
HIP_EXPORT hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n)
{
    return copy(dst, src, n, hipMemcpyDeviceToDevice, NULL);
}
HIP_EXPORT hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void *src, size_t n, hipStream_t s)
{
    return copy(dst, src, n, hipMemcpyHostToDevice, s);
}
HIP_EXPORT hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t n, hipStream_t s)
{
    return copy(dst, src, n, hipMemcpyDeviceToHost, s);
}
HIP_EXPORT hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n,
                                         hipStream_t s)
{
    return copy(dst, src, n, hipMemcpyDeviceToDevice, s);
}
static hipError_t copy_peer(void *dst, int ddev, const void *src, int sdev, size_t n, hipStream_t s)
{
    int count = 0;
    if (hipGetDeviceCount(&count) != hipSuccess || ddev < 0 || sdev < 0 || ddev >= count ||
        sdev >= count)
        return hip_ret(hipErrorInvalidDevice);
    /* The pointers identify the devices; they must be device memory. */
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    uint32_t dd = 0, sd = 0;
    if (n && (!dst || !src || classify(dst, n, &dd) != 1 || classify(src, n, &sd) != 1))
        e = hipErrorInvalidValue;
    else
        e = copy_locked(dst, src, n, hipMemcpyDeviceToDevice, s);
    hip_leave();
    return hip_ret(e);
}

HIP_EXPORT hipError_t hipMemcpyPeer(void *dst, int ddev, const void *src, int sdev, size_t n)
{
    return copy_peer(dst, ddev, src, sdev, n, NULL);
}
HIP_EXPORT hipError_t hipMemcpyPeerAsync(void *dst, int ddev, const void *src, int sdev, size_t n,
                                         hipStream_t s)
{
    return copy_peer(dst, ddev, src, sdev, n, s);
}
HIP_EXPORT hipError_t hipMemcpyWithStream(void *dst, const void *src, size_t n, hipMemcpyKind kind,
                                          hipStream_t s)
{
    return copy(dst, src, n, kind, s);
}

/* 2-D copy: `height` rows of `width` bytes; one COPY event per row unless
 * both sides are contiguous. */
static hipError_t copy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                         size_t height, hipMemcpyKind kind, hipStream_t s)
{
    if (width > dpitch || width > spitch)
        return hip_ret(hipErrorInvalidPitchValue);
    if (!width || !height)
        return hipSuccess;
    if (!dst || !src)
        return hip_ret(hipErrorInvalidValue);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    if (dpitch == width && spitch == width) {
        e = copy_locked(dst, src, width * height, kind, s);
    } else {
        for (size_t r = 0; r < height && e == hipSuccess; r++)
            e = copy_locked((uint8_t *)dst + r * dpitch, (const uint8_t *)src + r * spitch, width,
                            kind, s);
    }
    hip_leave();
    return hip_ret(e);
}

HIP_EXPORT hipError_t hipMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                  size_t width, size_t height, hipMemcpyKind kind)
{
    return copy2d(dst, dpitch, src, spitch, width, height, kind, NULL);
}
HIP_EXPORT hipError_t hipMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                                       size_t width, size_t height, hipMemcpyKind kind,
                                       hipStream_t s)
{
    return copy2d(dst, dpitch, src, spitch, width, height, kind, s);
}

/* ---- memset ------------------------------------------------------------------ */

/* Fill `count` elements of `esize` bytes (1, 2 or 4) with `value`. Caller
 * holds rt.mu. */
static hipError_t fill_locked(void *dst, uint32_t value, size_t esize, size_t count, hipStream_t s)
{
    hipError_t e = hip_stream_check(s);
    if (e != hipSuccess)
        return e;
    size_t n = esize * count;
    uint32_t dev = 0;
    if (rt.sticky != hipSuccess)
        e = rt.sticky;
    else if (n && (!dst || classify(dst, n, &dev) != 1))
        e = hipErrorInvalidValue;
    if (e != hipSuccess || n == 0)
        return e;
    uint8_t b = (uint8_t)value;
    int bytewise = esize == 1 || (esize == 2 && (value & 0xffff) == b * 0x0101u) ||
                   (esize == 4 && value == b * 0x01010101u);
    if (bytewise) {
        memset(dst, b, n);
    } else if (esize == 2) {
        uint16_t v = (uint16_t)value, *p = dst;
        for (size_t i = 0; i < count; i++)
            p[i] = v;
    } else {
        uint32_t *p = dst;
        for (size_t i = 0; i < count; i++)
            p[i] = value;
    }
    trc_event ev;
    memset(&ev, 0, sizeof ev);
    ev.device = dev;
    ev.stream = hip_stream_id(s);
    ev.addr = (uint64_t)(uintptr_t)dst;
    ev.size = n;
    if (bytewise) {
        ev.kind = TRC_EV_MEMSET;
        ev.value = b;
    } else {
        ev.kind = TRC_EV_COPY;
        ev.copy_kind = TRC_COPY_H2D;
        ev.src = ev.addr;
        ev.data = dst;
    }
    hip_trace_event(&ev);
    return hipSuccess;
}

static hipError_t fill(void *dst, uint32_t value, size_t esize, size_t count, hipStream_t s)
{
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    e = fill_locked(dst, value, esize, count, s);
    hip_leave();
    return hip_ret(e);
}

static hipError_t fill2d(void *dst, size_t pitch, int value, size_t width, size_t height,
                         hipStream_t s)
{
    if (width > pitch)
        return hip_ret(hipErrorInvalidPitchValue);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    if (pitch == width)
        e = fill_locked(dst, (uint8_t)value, 1, width * height, s);
    else
        for (size_t r = 0; r < height && e == hipSuccess; r++)
            e = fill_locked((uint8_t *)dst + r * pitch, (uint8_t)value, 1, width, s);
    hip_leave();
    return hip_ret(e);
}

HIP_EXPORT hipError_t hipMemset2D(void *dst, size_t pitch, int value, size_t width, size_t height)
{
    return fill2d(dst, pitch, value, width, height, NULL);
}
HIP_EXPORT hipError_t hipMemset2DAsync(void *dst, size_t pitch, int value, size_t width,
                                       size_t height, hipStream_t s)
{
    return fill2d(dst, pitch, value, width, height, s);
}

HIP_EXPORT hipError_t hipMemset(void *dst, int value, size_t n)
{
    return fill(dst, (uint8_t)value, 1, n, NULL);
}
HIP_EXPORT hipError_t hipMemsetAsync(void *dst, int value, size_t n, hipStream_t s)
{
    return fill(dst, (uint8_t)value, 1, n, s);
}
HIP_EXPORT hipError_t hipMemsetD8(hipDeviceptr_t dst, unsigned char value, size_t count)
{
    return fill(dst, value, 1, count, NULL);
}
HIP_EXPORT hipError_t hipMemsetD16(hipDeviceptr_t dst, unsigned short value, size_t count)
{
    return fill(dst, value, 2, count, NULL);
}
HIP_EXPORT hipError_t hipMemsetD32(hipDeviceptr_t dst, int value, size_t count)
{
    return fill(dst, (uint32_t)value, 4, count, NULL);
}
HIP_EXPORT hipError_t hipMemsetD8Async(hipDeviceptr_t dst, unsigned char value, size_t count,
                                       hipStream_t s)
{
    return fill(dst, value, 1, count, s);
}
HIP_EXPORT hipError_t hipMemsetD16Async(hipDeviceptr_t dst, unsigned short value, size_t count,
                                        hipStream_t s)
{
    return fill(dst, value, 2, count, s);
}
HIP_EXPORT hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int value, size_t count,
                                        hipStream_t s)
{
    return fill(dst, (uint32_t)value, 4, count, s);
}

/* ---- synchronisation --------------------------------------------------------- */

/* A SYNC event: the host (or, with stream_wait, stream wait_stream) waits
 * for the work of `stream` issued before trace event until (0: all of it). */
static hipError_t sync_event_wait(int device, uint32_t stream, uint64_t until, int stream_wait, uint32_t wait_stream)
{
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    trc_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = TRC_EV_SYNC;
    ev.device = (uint32_t)device;
    ev.stream = stream;
    ev.until_event = until;
    ev.stream_wait = (uint8_t)(stream_wait != 0);
    ev.wait_stream = wait_stream;
    hip_trace_event(&ev);
    e = rt.sticky;
    hip_leave();
    return hip_ret(e);
}

static hipError_t sync_event_on(int device, uint32_t stream) { return sync_event_wait(device, stream, 0, 0, 0); }

static hipError_t sync_event(uint32_t stream) { return sync_event_on(hip_current_device(), stream); }

HIP_EXPORT hipError_t hipDeviceSynchronize(void) { return sync_event(0); }

HIP_EXPORT hipError_t hipStreamSynchronize(hipStream_t s)
{
    hipError_t v = hip_stream_check(s);
    if (v != hipSuccess)
        return hip_ret(v);
    s = hip_stream_get(s);
    return s ? sync_event_on(s->device, s->id) : sync_event(0);
}

HIP_EXPORT hipError_t hipDeviceReset(void)
{
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    int dev = hip_current_device();
    for (size_t i = rt.n_allocs; i-- > 0;)
        if (rt.allocs[i].device == dev && !rt.allocs[i].host) {
            gcn_mem_free(rt.m, rt.allocs[i].p);
            untrack(&rt.allocs[i]);
        }
    rt.sticky = hipSuccess;
    rt.peer[dev] = 0;
    hip_leave();
    return hipSuccess;
}

/* ---- streams ------------------------------------------------------------------ */

/* Stream priorities (HIP 5.2 on AMD): 0 normal/lowest, -1 highest. */
#define PRIO_LEAST 0
#define PRIO_GREATEST (-1)

static hipError_t stream_create(hipStream_t *s, unsigned int flags, int prio)
{
    if (!s || (flags & ~(unsigned)hipStreamNonBlocking))
        return hip_ret(hipErrorInvalidValue);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    struct ihipStream_t *st = calloc(1, sizeof *st);
    if (st) {
        st->id = __atomic_add_fetch(&rt.next_stream_id, 1, __ATOMIC_RELAXED); /* hipStreamPerThread too */
        st->device = hip_current_device();
        st->flags = flags;
        st->priority = prio > PRIO_LEAST ? PRIO_LEAST : prio < PRIO_GREATEST ? PRIO_GREATEST : prio;
    }
    if (st && (flags & hipStreamNonBlocking)) {
        /* the trace declares it before its work (format 1.3): the replay
         * does not synchronise it with the null stream */
        trc_event ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = TRC_EV_SYNC;
        ev.device = (uint32_t)st->device;
        ev.stream = st->id;
        ev.stream_nonblocking = 1;
        hip_trace_event(&ev);
    }
    hip_leave();
    if (!st || hip_handle_add(HIP_H_STREAM, st)) {
        free(st);
        return hip_ret(hipErrorOutOfMemory);
    }
    *s = st;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned int flags)
{
    return stream_create(s, flags, PRIO_LEAST);
}

HIP_EXPORT hipError_t hipStreamCreate(hipStream_t *s) { return stream_create(s, 0, PRIO_LEAST); }

HIP_EXPORT hipError_t hipStreamCreateWithPriority(hipStream_t *s, unsigned int flags, int prio)
{
    /* Stored and reported; the emulator runs each call to completion, so a
     * priority orders nothing here. */
    return stream_create(s, flags, prio);
}

HIP_EXPORT hipError_t hipDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    if (least)
        *least = PRIO_LEAST;
    if (greatest)
        *greatest = PRIO_GREATEST;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipStreamGetFlags(hipStream_t s, unsigned int *flags)
{
    if (!flags)
        return hip_ret(hipErrorInvalidValue);
    hipError_t v = hip_stream_check(s);
    if (v != hipSuccess)
        return hip_ret(v);
    s = hip_stream_get(s);
    *flags = s ? s->flags : hipStreamDefault;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipStreamGetPriority(hipStream_t s, int *prio)
{
    if (!prio)
        return hip_ret(hipErrorInvalidValue);
    hipError_t v = hip_stream_check(s);
    if (v != hipSuccess)
        return hip_ret(v);
    s = hip_stream_get(s);
    *prio = s ? s->priority : PRIO_LEAST;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipStreamAddCallback(hipStream_t s, hipStreamCallback_t cb, void *user,
                                           unsigned int flags)
{
    if (!cb || flags)
        return hip_ret(hipErrorInvalidValue);
    hipError_t v = hip_stream_check(s);
    if (v != hipSuccess)
        return hip_ret(v);
    /* The stream's work is complete: the callback runs now, on this thread,
     * outside the runtime lock (it may not call HIP, as on real HIP). */
    cb(s, hip_rt_state.sticky, user);
    return hipSuccess;
}

HIP_EXPORT hipError_t hipStreamDestroy(hipStream_t s)
{
    if (!s || s == hipStreamPerThread)
        return hip_ret(hipErrorInvalidHandle);
    /* a stream destroyed before (or never created) is not freed again */
    if (!hip_handle_del(HIP_H_STREAM, s))
        return hip_ret(hipErrorContextIsDestroyed);
    free(s);
    return hipSuccess;
}

HIP_EXPORT hipError_t hipStreamQuery(hipStream_t s)
{
    hipError_t v = hip_stream_check(s); /* all work is complete when a call returns */
    return hip_ret(v != hipSuccess ? v : hip_rt_state.sticky);
}

HIP_EXPORT hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t ev, unsigned int flags)
{
    if (!ev || flags)
        return hip_ret(hipErrorInvalidValue);
    hipError_t v = hip_stream_check(s);
    if (v != hipSuccess)
        return hip_ret(v);
    if (!hip_handle_live(HIP_H_EVENT, ev))
        return hip_ret(hipErrorInvalidHandle);
    /* The event's work is already complete. In the trace, s's later work
     * must follow the work the event's stream had when it was recorded: a
     * SYNC with stream_wait (format 1.3; a 1.2 reader makes the host wait). */
    if (!ev->recorded)
        return hipSuccess;
    return sync_event_wait(ev->device, ev->stream, ev->trace_pos, 1, hip_stream_id(s));
}

/* ---- events -------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

HIP_EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t *ev, unsigned flags)
{
    if (!ev || (flags & ~(unsigned)(hipEventBlockingSync | hipEventDisableTiming |
                                    hipEventInterprocess | hipEventReleaseToDevice |
                                    hipEventReleaseToSystem)))
        return hip_ret(hipErrorInvalidValue);
    struct ihipEvent_t *e = calloc(1, sizeof *e);
    if (!e || hip_handle_add(HIP_H_EVENT, e)) {
        free(e);
        return hip_ret(hipErrorOutOfMemory);
    }
    e->flags = flags;
    *ev = e;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipEventCreate(hipEvent_t *ev) { return hipEventCreateWithFlags(ev, 0); }

HIP_EXPORT hipError_t hipEventRecord(hipEvent_t ev, hipStream_t s)
{
    if (!ev || !hip_handle_live(HIP_H_EVENT, ev))
        return hip_ret(hipErrorInvalidHandle);
    hipError_t v = hip_stream_check(s);
    if (v != hipSuccess)
        return hip_ret(v);
    hipStream_t r = hip_stream_get(s);
    ev->device = r ? r->device : hip_current_device();
    ev->stream = hip_stream_id(s);
    ev->trace_pos = hip_trace_n_events();
    /* Host time: elapsed times measure emulation, not modelled GPU time. */
    ev->t = now_s();
    ev->recorded = 1;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipEventSynchronize(hipEvent_t ev)
{
    if (!ev || !hip_handle_live(HIP_H_EVENT, ev))
        return hip_ret(hipErrorInvalidHandle);
    if (!ev->recorded)
        return hipSuccess;
    return sync_event_wait(ev->device, ev->stream, ev->trace_pos, 0, 0);
}

HIP_EXPORT hipError_t hipEventQuery(hipEvent_t ev)
{
    if (!ev || !hip_handle_live(HIP_H_EVENT, ev))
        return hip_ret(hipErrorInvalidHandle);
    return hipSuccess;
}

HIP_EXPORT hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b)
{
    if (!ms)
        return hip_ret(hipErrorInvalidValue);
    if (!a || !b || !hip_handle_live(HIP_H_EVENT, a) || !hip_handle_live(HIP_H_EVENT, b) ||
        (a->flags & hipEventDisableTiming) || (b->flags & hipEventDisableTiming))
        return hip_ret(hipErrorInvalidHandle);
    if (!a->recorded || !b->recorded)
        return hip_ret(hipErrorNotReady);
    *ms = (float)((b->t - a->t) * 1e3);
    return hipSuccess;
}

HIP_EXPORT hipError_t hipEventDestroy(hipEvent_t ev)
{
    /* an event destroyed before (or never created) is not freed again */
    if (!ev || !hip_handle_del(HIP_H_EVENT, ev))
        return hip_ret(hipErrorInvalidHandle);
    free(ev);
    return hipSuccess;
}
