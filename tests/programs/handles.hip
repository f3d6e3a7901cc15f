// handles.hip - HIP handles are validated (issue 20): a stream or event
// destroyed twice, a destroyed stream synchronised or launched on, a pointer
// freed twice or never allocated: each call returns an error, as on real HIP,
// and nothing is freed twice or used after it was freed. The program goes on
// and ends normally.
#include "samples_check.h"

__global__ void inc(int *p) { p[threadIdx.x] += 1; }

#define EXPECT_ERR(call, want)                                                               \
    do {                                                                                     \
        hipError_t e_ = (call);                                                              \
        EXPECT(e_ == (want), "%s returned %s, expected %s", #call, hipGetErrorName(e_),      \
               hipGetErrorName(want));                                                       \
    } while (0)

int main()
{
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    CHECK(hipStreamSynchronize(s));
    CHECK(hipStreamDestroy(s));
    EXPECT_ERR(hipStreamDestroy(s), hipErrorContextIsDestroyed);
    EXPECT_ERR(hipStreamSynchronize(s), hipErrorContextIsDestroyed);
    EXPECT_ERR(hipStreamQuery(s), hipErrorContextIsDestroyed);

    hipEvent_t ev;
    CHECK(hipEventCreate(&ev));
    CHECK(hipEventRecord(ev, 0));
    CHECK(hipEventSynchronize(ev));
    CHECK(hipEventDestroy(ev));
    EXPECT_ERR(hipEventDestroy(ev), hipErrorInvalidHandle);
    EXPECT_ERR(hipEventSynchronize(ev), hipErrorInvalidHandle);
    EXPECT_ERR(hipEventRecord(ev, 0), hipErrorInvalidHandle);

    int *d;
    CHECK(hipMalloc(&d, 64 * sizeof(int)));
    CHECK(hipMemset(d, 0, 64 * sizeof(int)));
    hipLaunchKernelGGL(inc, dim3(1), dim3(64), 0, s, d); // a destroyed stream
    EXPECT_ERR(hipGetLastError(), hipErrorContextIsDestroyed);
    hipLaunchKernelGGL(inc, dim3(1), dim3(64), 0, hipStreamPerThread, d);
    CHECK(hipGetLastError());
    CHECK(hipStreamSynchronize(hipStreamPerThread));
    int h[64];
    CHECK(hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost));
    for (int i = 0; i < 64; i++)
        EXPECT(h[i] == 1, "h[%d] = %d after one launch", i, h[i]);
    CHECK(hipFree(d));
    EXPECT_ERR(hipFree(d), hipErrorInvalidValue);
    int local;
    EXPECT_ERR(hipFree(&local), hipErrorInvalidValue);
    printf("PASS handles: destroyed streams and events, double and foreign frees refused\n");
    return 0;
}
