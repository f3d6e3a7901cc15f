// sample_steps.hip - a loop of launches whose arguments differ every time
// (the step number, as a simulation passes its time step), for the sampled
// replay's kernel level (mgpu-replay --sample, issue 16): launches alike by
// the vectors the trace gives of them (sample.alike_vectors), not by their
// arguments. x and y are 512 KiB each (r9nano's L2 holds both); each
// work-item reads 8 elements of x spread over the array, shifted by the
// step, and writes one element of y. Every 4th step the kernel also reads
// a second window of x (another path: other vectors, its own group).
// Prints "PASS sample_steps" when the results are right.
#include "samples_check.h"

#include <vector>

#define N (128 * 1024)
#define ITER 14

__global__ void step(const float *x, float *y, int s)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    for (int k = 0; k < 8; k++)
        v += x[(i + k * (N / 8) + 4096 * k + 64 * s) % N];
    if (s % 4 == 3)
        for (int k = 0; k < 8; k++)
            v += x[(i + k * (N / 8) + 1024 + 64 * s) % N];
    y[i] = v + (float)s;
}

static float want(const std::vector<float> &h, int i, int s)
{
    float v = 0.0f;
    for (int k = 0; k < 8; k++)
        v += h[(i + k * (N / 8) + 4096 * k + 64 * s) % N];
    if (s % 4 == 3)
        for (int k = 0; k < 8; k++)
            v += h[(i + k * (N / 8) + 1024 + 64 * s) % N];
    return v + (float)s;
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
    for (int s = 0; s < ITER; s++) {
        hipLaunchKernelGGL(step, dim3(N / 256), dim3(256), 0, 0, x, y, s);
        CHECK(hipGetLastError());
    }
    CHECK(hipMemcpy(r.data(), y, N * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        EXPECT(r[i] == want(h, i, ITER - 1), "y[%d] = %g, want %g", i, r[i], want(h, i, ITER - 1));
    CHECK(hipFree(x));
    CHECK(hipFree(y));
    printf("PASS sample_steps\n");
    return 0;
}
