// um_multi.hip - unified memory shared by two GPUs (issue 17): one
// hipMallocManaged array of N floats (N / 1024 pages of 4 KiB), written by
// the host. Phase 1: each GPU scales its own half, ROUNDS times (a placement
// that moves pages to their user makes later rounds local). Phase 2: each GPU
// adds the other half into its own (every page read by the GPU that does not
// own its half: remote accesses, or pages that move back and forth). The host
// checks every element. Usage: um_multi [N] [ROUNDS] (defaults 131072, 3; N a
// multiple of 2048). Needs 2 devices (gcn3-emu --gpus 2). Prints
// "PASS um_multi N ROUNDS".
#include "samples_check.h"

#include <cstdlib>

__global__ void scale(float *a, int off, int n, float f)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[off + i] = a[off + i] * f + 1.0f;
}

// b[off + i] = a[off + i] + a[other + i]: reads the other half
__global__ void mix(const float *a, float *b, int off, int other, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[off + i] = a[off + i] + a[other + i];
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 131072;
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    if (n < 2048 || n % 2048 || rounds < 1 || rounds > 16) {
        fprintf(stderr, "um_multi: N must be a multiple of 2048, ROUNDS 1..16\n");
        return 2;
    }
    int count = 0;
    CHECK(hipGetDeviceCount(&count));
    EXPECT(count >= 2, "needs 2 GPUs, have %d (run with gcn3-emu --gpus 2)", count);
    float *a, *b;
    CHECK(hipSetDevice(0));
    CHECK(hipMallocManaged((void **)&a, n * sizeof(float)));
    CHECK(hipMallocManaged((void **)&b, n * sizeof(float)));
    for (int i = 0; i < n; i++)
        a[i] = (float)(i % 1000), b[i] = 0.0f;
    const int h = n / 2, wg = 256;
    for (int r = 0; r < rounds; r++)
        for (int d = 0; d < 2; d++) {
            CHECK(hipSetDevice(d));
            hipLaunchKernelGGL(scale, dim3(h / wg), dim3(wg), 0, 0, a, d * h, h, 2.0f);
            CHECK(hipGetLastError());
        }
    for (int d = 0; d < 2; d++) {
        CHECK(hipSetDevice(d));
        CHECK(hipDeviceSynchronize());
    }
    for (int d = 0; d < 2; d++) {
        CHECK(hipSetDevice(d));
        hipLaunchKernelGGL(mix, dim3(h / wg), dim3(wg), 0, 0, a, b, d * h, (1 - d) * h, h);
        CHECK(hipGetLastError());
    }
    for (int d = 0; d < 2; d++) {
        CHECK(hipSetDevice(d));
        CHECK(hipDeviceSynchronize());
    }
    for (int i = 0; i < n; i++) {
        float x = (float)(i % 1000), y = (float)((i + h) % n % 1000);
        for (int r = 0; r < rounds; r++)
            x = x * 2.0f + 1.0f, y = y * 2.0f + 1.0f;
        EXPECT(a[i] == x, "a[%d] = %f, expected %f", i, a[i], x);
        EXPECT(b[i] == x + y, "b[%d] = %f, expected %f", i, b[i], x + y);
    }
    CHECK(hipFree(a));
    CHECK(hipFree(b));
    printf("PASS um_multi %d %d\n", n, rounds);
    return 0;
}
