// reduction: sum of N unsigned ints. Each workgroup reduces its slice in LDS
// (__shared__ + __syncthreads tree), then one work-item atomicAdds the partial
// sum into a global total; a second kernel also writes per-block sums.
// Usage: reduction [N]   (default 1<<20: 1024 workgroups of 256 work-items,
// each work-item summing 4 elements with a grid-stride loop)
#include <hip/hip_runtime.h>
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
    int grid = 1024;
    std::vector<unsigned> hin(n);
    unsigned long long want = 0;
    for (int i = 0; i < n; i++) {
        hin[i] = (unsigned)((i * 2654435761u) >> 20);
        want += hin[i];
    }
    unsigned *din, *dpart;
    unsigned long long *dtotal;
    CHECK(hipMalloc(&din, n * sizeof(unsigned)));
    CHECK(hipMalloc(&dpart, grid * sizeof(unsigned)));
    CHECK(hipMalloc(&dtotal, sizeof(unsigned long long)));
    CHECK(hipMemcpy(din, hin.data(), n * sizeof(unsigned), hipMemcpyHostToDevice));
    CHECK(hipMemset(dtotal, 0, sizeof(unsigned long long)));
    hipLaunchKernelGGL(block_reduce, dim3(grid), dim3(BLOCK), 0, 0, din, dpart, dtotal, n);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    unsigned long long got = 0;
    std::vector<unsigned> hpart(grid);
    CHECK(hipMemcpy(&got, dtotal, sizeof got, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(hpart.data(), dpart, grid * sizeof(unsigned), hipMemcpyDeviceToHost));
    unsigned long long psum = 0;
    for (int b = 0; b < grid; b++)
        psum += hpart[b];
    int ok = got == want && psum == want;
    if (!ok)
        fprintf(stderr, "total %llu, sum of partials %llu, want %llu\n", got, psum, want);
    CHECK(hipFree(din));
    CHECK(hipFree(dpart));
    CHECK(hipFree(dtotal));
    printf("reduction n=%d: %s\n", n, ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
