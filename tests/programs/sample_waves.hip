// sample_waves.hip - long waves in one round for sampled replay at the wave
// level (mgpu-replay --sample, sample.waves; issue 16): 256 workgroups of 256
// work-items (1,024 waves, all resident at once on an R9 Nano's 64 CUs, so
// the workgroup level has no later round to fast-forward), each work-item
// sums ROWS strided rows of x (a column of a row-major matrix: one load per
// row, about 1,000 wavefront instructions per wave) and writes its column's
// sum to y. The sampled replay measures each wave's time per instruction,
// then skips most of it; the skipped loads and the stores that follow still
// reach the memory, so the final device-to-host copy checks clean. Prints
// "PASS sample_waves" when the results are right.
#include "samples_check.h"

#include <vector>

#define WGS 256
#define N (WGS * 256)
#define ROWS 96

__global__ void colsum(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int r = 0; r < ROWS; r++)
        s += x[(size_t)r * n + i] * (float)(r + 1);
    y[i] = s;
}

int main()
{
    std::vector<float> h((size_t)N * ROWS), r(N);
    for (size_t i = 0; i < h.size(); i++)
        h[i] = (float)(i % 7) * 0.5f;
    float *x, *y;
    CHECK(hipMalloc(&x, h.size() * sizeof(float)));
    CHECK(hipMalloc(&y, N * sizeof(float)));
    CHECK(hipMemcpy(x, h.data(), h.size() * sizeof(float), hipMemcpyHostToDevice));
    hipLaunchKernelGGL(colsum, dim3(WGS), dim3(256), 0, 0, x, y, N);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(r.data(), y, N * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
        float s = 0.0f;
        for (int k = 0; k < ROWS; k++)
            s += h[(size_t)k * N + i] * (float)(k + 1);
        EXPECT(r[i] == s, "y[%d] = %g, want %g", i, r[i], s);
    }
    CHECK(hipFree(x));
    CHECK(hipFree(y));
    printf("PASS sample_waves\n");
    return 0;
}
