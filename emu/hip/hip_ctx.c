/*
 * hip_ctx.c - the (deprecated) context API of HIP, as ROCm 5.2 implements it
 * on AMD GPUs (hip_context.cpp): a context is a device. Each device has one
 * primary context; hipCtxCreate returns it and pushes it on the calling
 * thread's context stack, making its device current; hipCtxGetCurrent is the
 * top of that stack, or the current device's primary context when the stack
 * is empty. Programs written against the CUDA driver API (hip-tests'
 * module_api samples) use these before hipModuleLoad.
 *
 * Every context handle passed in is validated: one that is not a device's
 * context is hipErrorInvalidContext, never dereferenced.
 */
#include "hip_internal.h"

#include <string.h>

struct ihipCtx_t {
    int device;
    unsigned flags;   /* hipDevicePrimaryCtxSetFlags / hipCtxCreate flags */
    int retained;     /* hipDevicePrimaryCtxRetain - Release */
};

static struct ihipCtx_t primary[HIP_MAX_GPUS];
static pthread_mutex_t ctx_mu = PTHREAD_MUTEX_INITIALIZER;

/* the calling thread's context stack */
#define CTX_STACK 16
static _Thread_local hipCtx_t stack[CTX_STACK];
static _Thread_local int depth;

static int valid_dev(int d)
{
    int n = 0;
    return hipGetDeviceCount(&n) == hipSuccess && d >= 0 && d < n;
}

static hipCtx_t ctx_of(int d)
{
    primary[d].device = d;
    return &primary[d];
}

/* ctx is one of the devices' contexts */
static int valid_ctx(hipCtx_t c)
{
    return c && c >= &primary[0] && c < &primary[HIP_MAX_GPUS] && valid_dev((int)(c - primary));
}

HIP_EXPORT hipError_t hipCtxCreate(hipCtx_t *ctx, unsigned int flags, hipDevice_t device)
{
    if (!ctx)
        return hip_ret(hipErrorInvalidValue);
    if (!valid_dev(device))
        return hip_ret(hipErrorInvalidDevice);
    if (depth == CTX_STACK)
        return hip_ret(hipErrorOutOfMemory);
    hipCtx_t c = ctx_of(device);
    pthread_mutex_lock(&ctx_mu);
    c->flags = flags;
    pthread_mutex_unlock(&ctx_mu);
    stack[depth++] = c;
    *ctx = c;
    return hip_ret(hipSetDevice(device));
}

HIP_EXPORT hipError_t hipCtxDestroy(hipCtx_t ctx)
{
    if (!valid_ctx(ctx))
        return hip_ret(hipErrorInvalidContext);
    /* no longer current on this thread (ROCm pops it when it is the top) */
    if (depth && stack[depth - 1] == ctx)
        depth--;
    return hipSuccess;
}

/* The top of this thread's stack, else the current device's primary context. */
static hipError_t current_ctx(hipCtx_t *ctx)
{
    int d = 0;
    hipError_t e = hipGetDevice(&d);
    if (e != hipSuccess)
        return hip_ret(e);
    *ctx = depth ? stack[depth - 1] : ctx_of(d);
    return hipSuccess;
}

HIP_EXPORT hipError_t hipCtxGetCurrent(hipCtx_t *ctx)
{
    if (!ctx)
        return hip_ret(hipErrorInvalidValue);
    return current_ctx(ctx);
}

HIP_EXPORT hipError_t hipCtxSetCurrent(hipCtx_t ctx)
{
    if (!ctx) { /* NULL: unbind the current context */
        if (depth)
            depth--;
        return hipSuccess;
    }
    if (!valid_ctx(ctx))
        return hip_ret(hipErrorInvalidContext);
    if (depth)
        stack[depth - 1] = ctx;
    else
        stack[depth++] = ctx;
    return hip_ret(hipSetDevice(ctx->device));
}

HIP_EXPORT hipError_t hipCtxPushCurrent(hipCtx_t ctx)
{
    if (!valid_ctx(ctx))
        return hip_ret(hipErrorInvalidContext);
    if (depth == CTX_STACK)
        return hip_ret(hipErrorOutOfMemory);
    stack[depth++] = ctx;
    return hip_ret(hipSetDevice(ctx->device));
}

HIP_EXPORT hipError_t hipCtxPopCurrent(hipCtx_t *ctx)
{
    if (!depth)
        return hip_ret(hipErrorInvalidContext);
    hipCtx_t c = stack[--depth];
    if (ctx)
        *ctx = c;
    if (depth)
        return hip_ret(hipSetDevice(stack[depth - 1]->device));
    return hipSuccess;
}

HIP_EXPORT hipError_t hipCtxGetDevice(hipDevice_t *device)
{
    if (!device)
        return hip_ret(hipErrorInvalidValue);
    hipCtx_t c;
    hipError_t e = current_ctx(&c);
    if (e != hipSuccess)
        return e;
    *device = c->device;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipCtxGetFlags(unsigned int *flags)
{
    if (!flags)
        return hip_ret(hipErrorInvalidValue);
    hipCtx_t c;
    hipError_t e = current_ctx(&c);
    if (e != hipSuccess)
        return e;
    pthread_mutex_lock(&ctx_mu);
    *flags = c->flags;
    pthread_mutex_unlock(&ctx_mu);
    return hipSuccess;
}

HIP_EXPORT hipError_t hipCtxSynchronize(void) { return hipDeviceSynchronize(); }

HIP_EXPORT hipError_t hipDevicePrimaryCtxRetain(hipCtx_t *pctx, hipDevice_t dev)
{
    if (!pctx)
        return hip_ret(hipErrorInvalidValue);
    if (!valid_dev(dev))
        return hip_ret(hipErrorInvalidDevice);
    hipCtx_t c = ctx_of(dev);
    pthread_mutex_lock(&ctx_mu);
    c->retained++;
    pthread_mutex_unlock(&ctx_mu);
    *pctx = c;
    return hipSuccess;
}

HIP_EXPORT hipError_t hipDevicePrimaryCtxRelease(hipDevice_t dev)
{
    if (!valid_dev(dev))
        return hip_ret(hipErrorInvalidDevice);
    hipCtx_t c = ctx_of(dev);
    pthread_mutex_lock(&ctx_mu);
    if (c->retained > 0)
        c->retained--;
    pthread_mutex_unlock(&ctx_mu);
    return hipSuccess;
}

HIP_EXPORT hipError_t hipDevicePrimaryCtxGetState(hipDevice_t dev, unsigned int *flags, int *active)
{
    if (!flags || !active)
        return hip_ret(hipErrorInvalidValue);
    if (!valid_dev(dev))
        return hip_ret(hipErrorInvalidDevice);
    hipCtx_t c = ctx_of(dev);
    pthread_mutex_lock(&ctx_mu);
    *flags = c->flags;
    *active = c->retained > 0;
    pthread_mutex_unlock(&ctx_mu);
    return hipSuccess;
}

HIP_EXPORT hipError_t hipDevicePrimaryCtxReset(hipDevice_t dev)
{
    if (!valid_dev(dev))
        return hip_ret(hipErrorInvalidDevice);
    int cur = 0;
    hipGetDevice(&cur);
    hipSetDevice(dev);
    hipError_t e = hipDeviceReset();
    hipSetDevice(cur);
    return e;
}
