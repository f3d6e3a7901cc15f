// sample_warm.hip - a loop of launches over data that fits in the L2 (for
// the sampled replay's kernel level, mgpu-replay --sample, issue 16): x and
// y are 512 KiB each, 1 MiB together against r9nano's 2 MiB L2, so the first
// launch reads x from DRAM and the later ones can find it in the L2. Each
// work-item reads 8 elements of x spread over the array and writes one
// element of y; launched ITER times with the same arguments. Whether a
// launch alike can stand for the later ones after one launch in detail
// (sample.kernels=1) or only after two (the default) is what the test
// looks at. Prints "PASS sample_warm" when the results are right.
#include "samples_check.h"

#include <vector>

#define N (128 * 1024)
#define ITER 6

__global__ void gather(const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    for (int k = 0; k < 8; k++)
        v += x[(i + k * (N / 8) + 4096 * k) % N];
    y[i] = v;
}

int main()
{
    std::vector<float> h(N), r(N);
    for (int i = 0; i < N; i++)
        h[i] = (float)(i % 7);
    float *x, *y;
    CHECK(hipMalloc(&x, N * sizeof(float)));
    CHECK(hipMalloc(&y, N * sizeof(float)));
    CHECK(hipMemcpy(x, h.data(), N * sizeof(float), hipMemcpyHostToDevice));
    for (int it = 0; it < ITER; it++) {
        hipLaunchKernelGGL(gather, dim3(N / 256), dim3(256), 0, 0, x, y);
        CHECK(hipGetLastError());
    }
    CHECK(hipMemcpy(r.data(), y, N * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
        float v = 0.0f;
        for (int k = 0; k < 8; k++)
            v += h[(i + k * (N / 8) + 4096 * k) % N];
        EXPECT(r[i] == v, "y[%d] = %g, want %g", i, r[i], v);
    }
    CHECK(hipFree(x));
    CHECK(hipFree(y));
    printf("PASS sample_warm\n");
    return 0;
}
