// streams_events.hip - two streams with async copies and kernels, events,
// elapsed time and a cross-stream dependency (hipStreamWaitEvent), in the
// style of the HIP samples (hipEvent / streams).
#include "samples_check.h"
#include <vector>

__global__ void scale(float *a, float f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] *= f;
}
__global__ void add(float *dst, const float *a, const float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = a[i] + b[i];
}

int main()
{
    const int n = 4096;
    const size_t bytes = n * sizeof(float);
    float *ha, *hb, *hc;
    CHECK(hipHostMalloc((void **)&ha, bytes, hipHostMallocDefault));
    CHECK(hipHostMalloc((void **)&hb, bytes, hipHostMallocDefault));
    CHECK(hipHostMalloc((void **)&hc, bytes, hipHostMallocDefault));
    for (int i = 0; i < n; i++) ha[i] = (float)i, hb[i] = (float)(2 * i);
    float *da, *db, *dc;
    CHECK(hipMalloc((void **)&da, bytes));
    CHECK(hipMalloc((void **)&db, bytes));
    CHECK(hipMalloc((void **)&dc, bytes));

    hipStream_t s1, s2;
    CHECK(hipStreamCreate(&s1));
    CHECK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    unsigned fl = 99;
    CHECK(hipStreamGetFlags(s2, &fl));
    EXPECT(fl == hipStreamNonBlocking, "flags %u", fl);
    int lo, hi, pr;
    CHECK(hipDeviceGetStreamPriorityRange(&lo, &hi));
    hipStream_t s3;
    CHECK(hipStreamCreateWithPriority(&s3, hipStreamDefault, hi));
    CHECK(hipStreamGetPriority(s3, &pr));
    EXPECT(pr == hi, "priority %d, range [%d, %d]", pr, lo, hi);

    hipEvent_t start, stop, a_ready;
    CHECK(hipEventCreate(&start));
    CHECK(hipEventCreate(&stop));
    CHECK(hipEventCreateWithFlags(&a_ready, hipEventDisableTiming));

    CHECK(hipEventRecord(start, s1));
    CHECK(hipMemcpyAsync(da, ha, bytes, hipMemcpyHostToDevice, s1));
    hipLaunchKernelGGL(scale, dim3(n / 256), dim3(256), 0, s1, da, 3.0f, n);
    CHECK(hipGetLastError());
    CHECK(hipEventRecord(a_ready, s1));
    CHECK(hipMemcpyAsync(db, hb, bytes, hipMemcpyHostToDevice, s2));
    CHECK(hipStreamWaitEvent(s2, a_ready, 0)); // s2's kernel reads da
    hipLaunchKernelGGL(add, dim3(n / 256), dim3(256), 0, s2, dc, da, db, n);
    CHECK(hipMemcpyAsync(hc, dc, bytes, hipMemcpyDeviceToHost, s2));
    CHECK(hipEventRecord(stop, s2));
    CHECK(hipEventSynchronize(stop));
    CHECK(hipStreamSynchronize(s1));
    CHECK(hipStreamQuery(s2));
    CHECK(hipEventQuery(stop));

    float ms = -1;
    CHECK(hipEventElapsedTime(&ms, start, stop));
    EXPECT(ms >= 0, "elapsed %f ms", ms);
    EXPECT(hipEventElapsedTime(&ms, start, a_ready) == hipErrorInvalidHandle,
           "timing a hipEventDisableTiming event must fail");
    (void)hipGetLastError();

    for (int i = 0; i < n; i++)
        EXPECT(hc[i] == 3.0f * i + 2.0f * i, "c[%d] = %f", i, hc[i]);

    static int called;
    CHECK(hipStreamAddCallback(
        s1, [](hipStream_t, hipError_t st, void *u) { *(int *)u = st == hipSuccess ? 1 : 2; },
        &called, 0));
    CHECK(hipStreamSynchronize(s1));
    EXPECT(called == 1, "callback state %d", called);

    CHECK(hipEventDestroy(start));
    CHECK(hipEventDestroy(stop));
    CHECK(hipEventDestroy(a_ready));
    CHECK(hipStreamDestroy(s1));
    CHECK(hipStreamDestroy(s2));
    CHECK(hipStreamDestroy(s3));
    CHECK(hipFree(da));
    CHECK(hipFree(db));
    CHECK(hipFree(dc));
    CHECK(hipHostFree(ha));
    CHECK(hipHostFree(hb));
    CHECK(hipHostFree(hc));
    printf("streams_events: PASS (%d elements, %.3f ms)\n", n, ms);
    return 0;
}
