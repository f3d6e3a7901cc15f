// dyn_shared.hip - extern __shared__ memory sized at launch (two sizes) next
// to static __shared__ memory: a block-wide reversal through LDS.
#include "samples_check.h"

__global__ void reverse(const int *in, int *out, int n_per_block)
{
    extern __shared__ int buf[];
    __shared__ int tag;
    int t = threadIdx.x;
    if (t == 0) tag = 7;
    for (int i = t; i < n_per_block; i += blockDim.x) buf[i] = in[blockIdx.x * n_per_block + i];
    __syncthreads();
    for (int i = t; i < n_per_block; i += blockDim.x)
        out[blockIdx.x * n_per_block + i] = buf[n_per_block - 1 - i] + tag;
}

static void run(int n_per_block, int blocks)
{
    int n = n_per_block * blocks;
    int *h = new int[n], *r = new int[n];
    for (int i = 0; i < n; i++) h[i] = i * 3 + 1;
    int *din, *dout;
    CHECK(hipMalloc((void **)&din, n * sizeof(int)));
    CHECK(hipMalloc((void **)&dout, n * sizeof(int)));
    CHECK(hipMemcpy(din, h, n * sizeof(int), hipMemcpyHostToDevice));
    size_t shmem = n_per_block * sizeof(int);
    hipLaunchKernelGGL(reverse, dim3(blocks), dim3(128), shmem, 0, din, dout, n_per_block);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(r, dout, n * sizeof(int), hipMemcpyDeviceToHost));
    for (int b = 0; b < blocks; b++)
        for (int i = 0; i < n_per_block; i++)
            EXPECT(r[b * n_per_block + i] == h[b * n_per_block + n_per_block - 1 - i] + 7,
                   "size %zu: out[%d] = %d", shmem, b * n_per_block + i, r[b * n_per_block + i]);
    CHECK(hipFree(din));
    CHECK(hipFree(dout));
    delete[] h;
    delete[] r;
}

int main()
{
    run(256, 4);        // 1 KiB of dynamic LDS
    run(8192, 2);       // 32 KiB
    CHECK(hipFuncSetAttribute((const void *)reverse, hipFuncAttributeMaxDynamicSharedMemorySize, 48 * 1024));
    // more LDS than a CU has: refused at launch
    int *d;
    CHECK(hipMalloc((void **)&d, 4));
    hipLaunchKernelGGL(reverse, dim3(1), dim3(64), 65 * 1024, 0, d, d, 1);
    hipError_t e = hipGetLastError();
    EXPECT(e != hipSuccess, "a launch with 65 KiB of dynamic LDS succeeded");
    CHECK(hipFree(d));
    printf("dyn_shared: PASS (1 KiB and 32 KiB dynamic shared memory)\n");
    return 0;
}
