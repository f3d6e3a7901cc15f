// vectoradd: c[i] = a[i] + b[i] over N floats; checks on the host.
// Usage: vectoradd [N]   (default 1<<20: 4096 workgroups of 256 work-items)
// With several visible devices the vectors are split into one contiguous
// slice per device (the D-MGPU programming model: hipSetDevice, per-device
// allocations and launches).
#include <hip/hip_runtime.h>
#include <algorithm>
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
    int ndev = 1;
    CHECK(hipGetDeviceCount(&ndev));
    std::vector<float> ha(n), hb(n), hc(n);
    for (int i = 0; i < n; i++) {
        ha[i] = (float)(i % 1000) * 0.5f;
        hb[i] = (float)(i % 777) * 0.25f;
    }
    int per = (n + ndev - 1) / ndev;
    std::vector<float *> da(ndev), db(ndev), dc(ndev);
    for (int d = 0; d < ndev; d++) {
        int lo = std::min(n, d * per), cnt = std::min(n, lo + per) - lo;
        size_t bytes = (size_t)cnt * sizeof(float);
        CHECK(hipSetDevice(d));
        CHECK(hipMalloc(&da[d], bytes));
        CHECK(hipMalloc(&db[d], bytes));
        CHECK(hipMalloc(&dc[d], bytes));
        CHECK(hipMemcpy(da[d], ha.data() + lo, bytes, hipMemcpyHostToDevice));
        CHECK(hipMemcpy(db[d], hb.data() + lo, bytes, hipMemcpyHostToDevice));
        CHECK(hipMemset(dc[d], 0, bytes));
        int block = 256;
        int grid = (cnt + block - 1) / block;   /* a partial last workgroup when cnt % 256 != 0 */
        hipLaunchKernelGGL(vectoradd, dim3(grid), dim3(block), 0, 0, da[d], db[d], dc[d], cnt);
        CHECK(hipGetLastError());
    }
    for (int d = 0; d < ndev; d++) {
        int lo = std::min(n, d * per), cnt = std::min(n, lo + per) - lo;
        CHECK(hipSetDevice(d));
        CHECK(hipDeviceSynchronize());
        CHECK(hipMemcpy(hc.data() + lo, dc[d], (size_t)cnt * sizeof(float), hipMemcpyDeviceToHost));
        CHECK(hipFree(da[d]));
        CHECK(hipFree(db[d]));
        CHECK(hipFree(dc[d]));
    }
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (hc[i] != ha[i] + hb[i]) {
            if (bad < 5)
                fprintf(stderr, "mismatch at %d: got %g want %g\n", i, hc[i], ha[i] + hb[i]);
            bad++;
        }
    printf("vectoradd n=%d devices=%d: %s\n", n, ndev, bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}
