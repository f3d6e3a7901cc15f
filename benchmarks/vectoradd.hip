// vectoradd: c[i] = a[i] + b[i] over N floats; checks on the host.
// Usage: vectoradd [N]   (default 1<<20: 4096 workgroups of 256 work-items)
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, hipGetErrorString(e_)); \
    return 2; } } while (0)

__global__ void vectoradd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : (1 << 20);
    size_t bytes = (size_t)n * sizeof(float);
    std::vector<float> ha(n), hb(n), hc(n);
    for (int i = 0; i < n; i++) {
        ha[i] = (float)(i % 1000) * 0.5f;
        hb[i] = (float)(i % 777) * 0.25f;
    }
    float *da, *db, *dc;
    CHECK(hipMalloc(&da, bytes));
    CHECK(hipMalloc(&db, bytes));
    CHECK(hipMalloc(&dc, bytes));
    CHECK(hipMemcpy(da, ha.data(), bytes, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(db, hb.data(), bytes, hipMemcpyHostToDevice));
    CHECK(hipMemset(dc, 0, bytes));
    int block = 256;
    int grid = (n + block - 1) / block;   /* a partial last workgroup when n % 256 != 0 */
    hipLaunchKernelGGL(vectoradd, dim3(grid), dim3(block), 0, 0, da, db, dc, n);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(hc.data(), dc, bytes, hipMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (hc[i] != ha[i] + hb[i]) {
            if (bad < 5)
                fprintf(stderr, "mismatch at %d: got %g want %g\n", i, hc[i], ha[i] + hb[i]);
            bad++;
        }
    CHECK(hipFree(da));
    CHECK(hipFree(db));
    CHECK(hipFree(dc));
    printf("vectoradd n=%d: %s\n", n, bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}
