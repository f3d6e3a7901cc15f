// device_globals_b.hip - second translation unit of device_globals: its own
// fat binary (code object) with a __device__ counter and a __constant__ table.
#include <hip/hip_runtime.h>
#include <stdio.h>

__device__ int other_counter;
__constant__ int other_table[4] = {10, 20, 30, 40};

__global__ void bump_other(int *out)
{
    int i = threadIdx.x;
    atomicAdd(&other_counter, other_table[i & 3]);
    out[i] = other_table[i & 3] + i;
}

int run_other(void)
{
    int start = 5, *dout, out[64], c = 0;
    if (hipMemcpyToSymbol(HIP_SYMBOL(other_counter), &start, sizeof start) != hipSuccess ||
        hipMalloc(&dout, sizeof out) != hipSuccess)
        return 1;
    hipLaunchKernelGGL(bump_other, dim3(1), dim3(64), 0, 0, dout);
    if (hipMemcpy(out, dout, sizeof out, hipMemcpyDeviceToHost) != hipSuccess ||
        hipMemcpyFromSymbol(&c, HIP_SYMBOL(other_counter), sizeof c) != hipSuccess)
        return 1;
    hipFree(dout);
    for (int i = 0; i < 64; i++)
        if (out[i] != (i & 3) * 10 + 10 + i) {
            printf("FAIL bump_other out[%d] = %d\n", i, out[i]);
            return 1;
        }
    if (c != 5 + 16 * (10 + 20 + 30 + 40)) {
        printf("FAIL other_counter = %d\n", c);
        return 1;
    }
    printf("second code object's globals: ok\n");
    return 0;
}
