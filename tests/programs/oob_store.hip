// oob_store.hip - a kernel storing far outside its buffer: the launch must
// fail with hipErrorIllegalAddress (the emulator prints a fault report on
// stderr naming kernel, workgroup, lane and address), later calls report the
// error, and the process ends normally.
#include "samples_check.h"

__global__ void store(int *a, long off)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    a[i + (i == 77 ? off : 0)] = i;
}

int main()
{
    int *d;
    CHECK(hipMalloc((void **)&d, 256 * sizeof(int)));
    hipLaunchKernelGGL(store, dim3(2), dim3(128), 0, 0, d, 1L << 28); // 1 GiB past the end
    hipError_t launch = hipGetLastError();
    hipError_t sync = hipDeviceSynchronize();
    hipError_t e = launch != hipSuccess ? launch : sync;
    EXPECT(e == hipErrorIllegalAddress, "got %s (%s)", hipGetErrorName(e), hipGetErrorString(e));
    int h[4];
    hipError_t after = hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost);
    EXPECT(after != hipSuccess, "a copy after the fault succeeded");
    printf("oob_store: PASS (%s: %s)\n", hipGetErrorName(e), hipGetErrorString(e));
    return 0;
}
