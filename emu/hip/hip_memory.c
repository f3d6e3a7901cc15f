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
 * (hipErrorInvalidValue), never a partial copy.
 */
#include "hip_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define rt hip_rt_state

/* ---- allocation bookkeeping (caller holds rt.mu) ------------------------- */

static int track(void *p, size_t size, int device, int host)
{
    if (rt.n_allocs == rt.cap_allocs) {
        size_t cap = rt.cap_allocs ? rt.cap_allocs * 2 : 64;
        hip_alloc *a = realloc(rt.allocs, cap * sizeof *a);
        if (!a)
            return -1;
        rt.allocs = a;
        rt.cap_allocs = cap;
    }
    rt.allocs[rt.n_allocs++] = (hip_alloc){.p = p, .size = size, .device = device, .host = host};
    rt.used[device] += size;
    return 0;
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
    rt.used[a->device] -= a->size;
    *a = rt.allocs[--rt.n_allocs];
}

static hipError_t alloc_common(void **ptr, size_t size, int host)
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
        p = gcn_mem_alloc(rt.m, (uint32_t)dev, size, host ? TRC_MEM_HOST_PINNED : TRC_MEM_DEVICE);
    if (p && track(p, size, dev, host) != 0) {
        gcn_mem_free(rt.m, p);
        p = NULL;
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
    if (!a || a->host != host) {
        hip_leave();
        return hip_ret(hipErrorInvalidValue);
    }
    gcn_mem_free(rt.m, p);
    untrack(a);
    hip_leave();
    return hipSuccess;
}

HIP_EXPORT hipError_t hipMalloc(void **ptr, size_t size) { return alloc_common(ptr, size, 0); }
HIP_EXPORT hipError_t hipFree(void *p) { return free_common(p, 0); }

HIP_EXPORT hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags)
{
    (void)flags; /* coherent/non-coherent/mapped/portable: all the same here */
    return alloc_common(ptr, size, 1);
}
HIP_EXPORT hipError_t hipHostAlloc(void **ptr, size_t size, unsigned int flags)
{
    return hipHostMalloc(ptr, size, flags);
}
HIP_EXPORT hipError_t hipMallocHost(void **ptr, size_t size) { return alloc_common(ptr, size, 1); }
HIP_EXPORT hipError_t hipHostFree(void *p) { return free_common(p, 1); }
HIP_EXPORT hipError_t hipFreeHost(void *p) { return free_common(p, 1); }

HIP_EXPORT hipError_t hipHostGetDevicePointer(void **dev_ptr, void *host_ptr, unsigned int flags)
{
    if (!dev_ptr || !host_ptr || flags)
        return hip_ret(hipErrorInvalidValue);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    gcn_alloc_info ai;
    int ok = gcn_mem_find(rt.m, (uint64_t)(uintptr_t)host_ptr, 1, &ai) &&
             ai.kind == TRC_MEM_HOST_PINNED;
    hip_leave();
    if (!ok)
        return hip_ret(hipErrorInvalidValue);
    *dev_ptr = host_ptr; /* one address space */
    return hipSuccess;
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
                              uint32_t stream)
{
    if (rt.sticky != hipSuccess)
        return rt.sticky;
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
    if (kind != hipMemcpyDefault && kind != actual) {
        if (kind < hipMemcpyHostToHost || kind > hipMemcpyDefault)
            return hipErrorInvalidMemcpyDirection;
        return hipErrorInvalidValue;
    }
    memmove(dst, src, n);
    trc_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = TRC_EV_COPY;
    ev.stream = stream;
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
        ev.device = ddev, ev.copy_kind = TRC_COPY_D2D, ev.data = NULL;
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
    e = copy_locked(dst, src, n, kind, hip_stream_id(s));
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
HIP_EXPORT hipError_t hipMemcpyPeer(void *dst, int ddev, const void *src, int sdev, size_t n)
{
    (void)ddev, (void)sdev; /* the pointers identify the devices */
    return copy(dst, src, n, hipMemcpyDeviceToDevice, NULL);
}

/* ---- memset ------------------------------------------------------------------ */

/* Fill `count` elements of `esize` bytes (1, 2 or 4) with `value`. */
static hipError_t fill(void *dst, uint32_t value, size_t esize, size_t count, hipStream_t s)
{
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    size_t n = esize * count;
    uint32_t dev = 0;
    if (rt.sticky != hipSuccess)
        e = rt.sticky;
    else if (n && (!dst || classify(dst, n, &dev) != 1))
        e = hipErrorInvalidValue;
    if (e != hipSuccess || n == 0) {
        hip_leave();
        return hip_ret(e);
    }
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
    hip_leave();
    return hipSuccess;
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

static hipError_t sync_event(uint32_t stream)
{
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    trc_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = TRC_EV_SYNC;
    ev.device = (uint32_t)hip_current_device();
    ev.stream = stream;
    hip_trace_event(&ev);
    e = rt.sticky;
    hip_leave();
    return hip_ret(e);
}

HIP_EXPORT hipError_t hipDeviceSynchronize(void) { return sync_event(0); }

HIP_EXPORT hipError_t hipStreamSynchronize(hipStream_t s) { return sync_event(hip_stream_id(s)); }

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

HIP_EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned int flags)
{
    if (!s || (flags & ~(unsigned)hipStreamNonBlocking))
        return hip_ret(hipErrorInvalidValue);
    hipError_t e = hip_enter();
    if (e != hipSuccess)
        return hip_ret(e);
    struct ihipStream_t *st = calloc(1, sizeof *st);
    if (st) {
        st->id = ++rt.next_stream_id;
        st->device = hip_current_device();
    }
    hip_leave();
    if (!st)
        return hip_ret(hipErrorOutOfMemory);
    *s = st;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipStreamCreate(hipStream_t *s) { return hipStreamCreateWithFlags(s, 0); }

HIP_EXPORT hipError_t hipStreamCreateWithPriority(hipStream_t *s, unsigned int flags, int prio)
{
    (void)prio; /* one queue: priorities do not change anything */
    return hipStreamCreateWithFlags(s, flags);
}

HIP_EXPORT hipError_t hipStreamDestroy(hipStream_t s)
{
    if (!s)
        return hip_ret(hipErrorInvalidHandle);
    free(s);
    return hipSuccess;
}

HIP_EXPORT hipError_t hipStreamQuery(hipStream_t s)
{
    (void)s; /* all work is complete when a call returns */
    return hip_ret(hip_rt_state.sticky);
}

HIP_EXPORT hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t ev, unsigned int flags)
{
    (void)s;
    if (!ev || flags)
        return hip_ret(hipErrorInvalidValue);
    return hipSuccess; /* the event's work is already complete */
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
    if (!e)
        return hip_ret(hipErrorOutOfMemory);
    *ev = e;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipEventCreate(hipEvent_t *ev) { return hipEventCreateWithFlags(ev, 0); }

HIP_EXPORT hipError_t hipEventRecord(hipEvent_t ev, hipStream_t s)
{
    (void)s;
    if (!ev)
        return hip_ret(hipErrorInvalidHandle);
    /* Host time: elapsed times measure emulation, not modelled GPU time. */
    ev->t = now_s();
    ev->recorded = 1;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipEventSynchronize(hipEvent_t ev)
{
    if (!ev)
        return hip_ret(hipErrorInvalidHandle);
    return sync_event(0);
}

HIP_EXPORT hipError_t hipEventQuery(hipEvent_t ev)
{
    if (!ev)
        return hip_ret(hipErrorInvalidHandle);
    return hipSuccess;
}

HIP_EXPORT hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b)
{
    if (!ms)
        return hip_ret(hipErrorInvalidValue);
    if (!a || !b)
        return hip_ret(hipErrorInvalidHandle);
    if (!a->recorded || !b->recorded)
        return hip_ret(hipErrorNotReady);
    *ms = (float)((b->t - a->t) * 1e3);
    return hipSuccess;
}

HIP_EXPORT hipError_t hipEventDestroy(hipEvent_t ev)
{
    if (!ev)
        return hip_ret(hipErrorInvalidHandle);
    free(ev);
    return hipSuccess;
}
