// sample_deep.hip - a deep kernel for sampled replay (mgpu-replay --sample,
// issue 16): 8,192 workgroups of 256 work-items (about 13 times what an R9
// Nano holds at once), each work-item reads x[i], runs a short dependent
// loop and writes y[i]; launched ITER times with the same arguments, as an
// iterative solver does. The sampled replay details the first launch until
// its rate is stable and fast-forwards the rest of its workgroups, replays
// the next launch in full, and fast-forwards the later ones whole; every
// store still reaches its memory, so the final device-to-host copy checks
// clean. Prints "PASS sample_deep" when the results are right.
#include "samples_check.h"

#include <vector>

#define WGS 8192
#define N (WGS * 256)
#define ITER 4

__global__ void step(const float *x, float *y, float a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    for (int k = 0; k < 12; k++)
        v = v * a + 1.0f;
    y[i] = v;
}

int main()
{
    std::vector<float> h(N), r(N);
    for (int i = 0; i < N; i++)
        h[i] = (float)(i % 13) * 0.25f;
    float *x, *y;
    CHECK(hipMalloc(&x, N * sizeof(float)));
    CHECK(hipMalloc(&y, N * sizeof(float)));
    CHECK(hipMemcpy(x, h.data(), N * sizeof(float), hipMemcpyHostToDevice));
    for (int it = 0; it < ITER; it++) {
        hipLaunchKernelGGL(step, dim3(WGS), dim3(256), 0, 0, x, y, 0.5f);
        CHECK(hipGetLastError());
    }
    CHECK(hipMemcpy(r.data(), y, N * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
        float v = h[i];
        for (int k = 0; k < 12; k++)
            v = v * 0.5f + 1.0f;
        EXPECT(r[i] == v, "y[%d] = %g, want %g", i, r[i], v);
    }
    CHECK(hipFree(x));
    CHECK(hipFree(y));
    printf("PASS sample_deep\n");
    return 0;
}
