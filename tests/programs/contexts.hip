// contexts.hip - the context API as programs written against the CUDA driver
// API use it (hip-tests' module_api samples): create a context on a device,
// query it, launch and synchronise through it, destroy it; the device's
// primary context retained, queried and released. Invalid contexts are
// refused, not dereferenced.
#include "samples_check.h"

// the context API is deprecated in HIP 5.2, and what the module_api samples use
#pragma clang diagnostic ignored "-Wdeprecated-declarations"

__global__ void twice(int *p) { p[threadIdx.x] *= 2; }

int main()
{
    hipCtx_t ctx = nullptr, cur = nullptr;
    CHECK(hipCtxCreate(&ctx, 0, 0));
    EXPECT(ctx != nullptr, "hipCtxCreate gave no context");
    CHECK(hipCtxGetCurrent(&cur));
    EXPECT(cur == ctx, "the created context is not current");
    hipDevice_t dev = -1;
    CHECK(hipCtxGetDevice(&dev));
    EXPECT(dev == 0, "context device %d, expected 0", dev);
    unsigned flags = 7;
    CHECK(hipCtxGetFlags(&flags));
    EXPECT(flags == 0, "context flags %u, expected 0", flags);

    int h[64], *d;
    for (int i = 0; i < 64; i++)
        h[i] = i;
    CHECK(hipMalloc(&d, sizeof h));
    CHECK(hipMemcpy(d, h, sizeof h, hipMemcpyHostToDevice));
    hipLaunchKernelGGL(twice, dim3(1), dim3(64), 0, 0, d);
    CHECK(hipGetLastError());
    CHECK(hipCtxSynchronize());
    CHECK(hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost));
    for (int i = 0; i < 64; i++)
        EXPECT(h[i] == 2 * i, "h[%d] = %d", i, h[i]);
    CHECK(hipFree(d));

    hipCtx_t popped = nullptr;
    CHECK(hipCtxPushCurrent(ctx));
    CHECK(hipCtxPopCurrent(&popped));
    EXPECT(popped == ctx, "popped another context");
    CHECK(hipCtxSetCurrent(ctx));
    CHECK(hipCtxDestroy(ctx));
    int bogus;
    EXPECT(hipCtxDestroy((hipCtx_t)&bogus) == hipErrorInvalidContext, "a foreign context was accepted");
    EXPECT(hipCtxSetCurrent((hipCtx_t)&bogus) == hipErrorInvalidContext, "a foreign context became current");

    hipCtx_t pctx = nullptr;
    unsigned pflags = 9;
    int active = -1;
    CHECK(hipDevicePrimaryCtxGetState(0, &pflags, &active));
    EXPECT(active == 0, "primary context active before any retain");
    CHECK(hipDevicePrimaryCtxRetain(&pctx, 0));
    EXPECT(pctx != nullptr, "no primary context");
    CHECK(hipDevicePrimaryCtxGetState(0, &pflags, &active));
    EXPECT(active == 1, "primary context not active after retain");
    CHECK(hipDevicePrimaryCtxRelease(0));
    CHECK(hipDevicePrimaryCtxGetState(0, &pflags, &active));
    EXPECT(active == 0, "primary context active after release");
    EXPECT(hipDevicePrimaryCtxRetain(&pctx, 5) == hipErrorInvalidDevice, "device 5 accepted");
    printf("PASS contexts: create, current, device, synchronise, push/pop, destroy; primary retain/state/release\n");
    return 0;
}
