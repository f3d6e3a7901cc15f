// reduction: sum of N unsigned ints. Each workgroup reduces its slice in LDS
// (__shared__ + __syncthreads tree), writes its partial sum, and one work-item
// atomicAdds it into a global 64-bit total.
// Usage: reduction [N]   (default 1<<20: 1024 workgroups of 256 work-items
// in all, each work-item summing about 4 elements with a grid-stride loop)
// With several visible devices each reduces one contiguous slice; the host
// adds the per-device totals.
#include <hip/hip_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, hipGetErrorString(e_)); \
    return 2; } } while (0)

#define BLOCK 256

__global__ void block_reduce(const unsigned *in, unsigned *partial,
                             unsigned long long *total, int n)
{
    __shared__ unsigned buf[BLOCK];
    unsigned sum = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        sum += in[i];
    buf[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = buf[0];
        atomicAdd(total, (unsigned long long)buf[0]);
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : (1 << 20);
    int ndev = 1;
    CHECK(hipGetDeviceCount(&ndev));
    /* about 4 elements per work-item, at most 1024 workgroups in all */
    int grid = std::max(1, std::min(1024, (n + BLOCK * 4 - 1) / (BLOCK * 4)) / ndev);
    std::vector<unsigned> hin(n);
    unsigned long long want = 0;
    for (int i = 0; i < n; i++) {
        hin[i] = (unsigned)((i * 2654435761u) >> 20);
        want += hin[i];
    }
    int per = (n + ndev - 1) / ndev;
    std::vector<unsigned *> din(ndev), dpart(ndev);
    std::vector<unsigned long long *> dtotal(ndev);
    for (int d = 0; d < ndev; d++) {
        int lo = std::min(n, d * per), cnt = std::min(n, lo + per) - lo;
        CHECK(hipSetDevice(d));
        CHECK(hipMalloc(&din[d], std::max(cnt, 1) * sizeof(unsigned)));
        CHECK(hipMalloc(&dpart[d], grid * sizeof(unsigned)));
        CHECK(hipMalloc(&dtotal[d], sizeof(unsigned long long)));
        CHECK(hipMemcpy(din[d], hin.data() + lo, cnt * sizeof(unsigned), hipMemcpyHostToDevice));
        CHECK(hipMemset(dtotal[d], 0, sizeof(unsigned long long)));
        hipLaunchKernelGGL(block_reduce, dim3(grid), dim3(BLOCK), 0, 0, din[d], dpart[d], dtotal[d], cnt);
        CHECK(hipGetLastError());
    }
    unsigned long long got = 0, psum = 0;
    std::vector<unsigned> hpart(grid);
    for (int d = 0; d < ndev; d++) {
        unsigned long long t = 0;
        CHECK(hipSetDevice(d));
        CHECK(hipDeviceSynchronize());
        CHECK(hipMemcpy(&t, dtotal[d], sizeof t, hipMemcpyDeviceToHost));
        CHECK(hipMemcpy(hpart.data(), dpart[d], grid * sizeof(unsigned), hipMemcpyDeviceToHost));
        got += t;
        for (int b = 0; b < grid; b++)
            psum += hpart[b];
        CHECK(hipFree(din[d]));
        CHECK(hipFree(dpart[d]));
        CHECK(hipFree(dtotal[d]));
    }
    int ok = got == want && psum == want;
    if (!ok)
        fprintf(stderr, "total %llu, sum of partials %llu, want %llu\n", got, psum, want);
    printf("reduction n=%d devices=%d: %s\n", n, ndev, ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
