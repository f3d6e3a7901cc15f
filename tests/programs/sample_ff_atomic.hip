// sample_ff_atomic.hip - launches fast-forwarded whole from store frames
// (mgpu-replay --sample; trace format 2.5, issue 16): two kernels launched
// ITER times in turn, each work-item reading 16 floats and storing one (its
// stores a sixteenth of its values: its workgroups get store frames, with
// their ops), the first also counting with an atomicAdd every 64th
// work-item. After the first launches the sampled replay fast-forwards both
// kernels whole, without their loads (the next launch is fast-forwarded
// too), so it reads a workgroup's store frame alone, except where the
// workgroup has an atomic, which it reads from its records; the final
// device-to-host copies of the sums and of the counter check what both
// paths stored. Prints "PASS sample_ff_atomic" when the results are right.
#include "samples_check.h"

#include <vector>

#define N (1 << 16)
#define ITER 8

__global__ void sum_count(const float *a, float *b, int *cnt, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0;
    for (int j = 0; j < 16; j++)
        v += a[j * n + i] * (float)(j + 1);
    b[i] = v;
    if ((i & 63) == 0)
        atomicAdd(cnt, 1);
}

__global__ void sum(const float *a, float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0;
    for (int j = 0; j < 16; j++)
        v += a[j * n + i] * (float)(j + 3);
    b[i] = v;
}

int main()
{
    std::vector<float> h(16 * N), r(N), s(N);
    unsigned x = 12345;
    for (int i = 0; i < 16 * N; i++) {
        x = x * 1103515245u + 12345u;
        h[i] = (float)(x >> 8) / 65536.0f; /* values that do not compress much */
    }
    float *a, *b, *c;
    int *cnt;
    CHECK(hipMalloc(&a, 16 * N * sizeof(float)));
    CHECK(hipMalloc(&b, N * sizeof(float)));
    CHECK(hipMalloc(&c, N * sizeof(float)));
    CHECK(hipMalloc(&cnt, sizeof(int)));
    CHECK(hipMemcpy(a, h.data(), 16 * N * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipMemset(cnt, 0, sizeof(int)));
    for (int it = 0; it < ITER; it++) {
        hipLaunchKernelGGL(sum_count, dim3(N / 256), dim3(256), 0, 0, a, b, cnt, N);
        hipLaunchKernelGGL(sum, dim3(N / 256), dim3(256), 0, 0, a, c, N);
        CHECK(hipGetLastError());
    }
    int hc = 0;
    CHECK(hipMemcpy(&hc, cnt, sizeof(int), hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(r.data(), b, N * sizeof(float), hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(s.data(), c, N * sizeof(float), hipMemcpyDeviceToHost));
    EXPECT(hc == ITER * (N / 64), "count %d, want %d", hc, ITER * (N / 64));
    for (int i = 0; i < N; i++) {
        float v = 0, w = 0;
        for (int j = 0; j < 16; j++) {
            v += h[j * N + i] * (float)(j + 1);
            w += h[j * N + i] * (float)(j + 3);
        }
        EXPECT(r[i] == v && s[i] == w, "b[%d] = %g, c[%d] = %g, want %g and %g", i, r[i], i, s[i], v, w);
    }
    CHECK(hipFree(a));
    CHECK(hipFree(b));
    CHECK(hipFree(c));
    CHECK(hipFree(cnt));
    printf("PASS sample_ff_atomic\n");
    return 0;
}
