// sample_swing.hip - a deep kernel whose rate swings (mgpu-replay --sample,
// issue 16): 61,440 workgroups of 256 work-items (96 times what an R9 Nano
// holds at once), in phases of 1,280 workgroups (two rounds) that alternate
// between a short dependent loop after the load (the wave waits on memory)
// and a long one (the wave computes). Windows of one round never agree on a
// rate; groups of windows as long as the swing's period do, so the sampled
// replay measures over groups (its JSON's group_windows), fast-forwards a
// stretch, checks the rate after it and lengthens the next stretch. Every
// store still reaches its memory, so the device-to-host copy checks clean.
// Prints "PASS sample_swing" when the results are right.
#include "samples_check.h"

#include <vector>

#define WGS 61440
#define PHASE 1280
#define N (WGS * 256)

__global__ void swing(const float *x, float *y, float a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int n = (blockIdx.x / PHASE) & 1 ? 40 : 4;
    float v = x[i];
    for (int k = 0; k < n; k++)
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
    hipLaunchKernelGGL(swing, dim3(WGS), dim3(256), 0, 0, x, y, 0.5f);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(r.data(), y, N * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
        int n = (i / 256 / PHASE) & 1 ? 40 : 4;
        float v = h[i];
        for (int k = 0; k < n; k++)
            v = v * 0.5f + 1.0f;
        EXPECT(r[i] == v, "y[%d] = %g, want %g", i, r[i], v);
    }
    CHECK(hipFree(x));
    CHECK(hipFree(y));
    printf("PASS sample_swing\n");
    return 0;
}
