// Faults reach the HIP program as real HIP reports them (issue 3): s_trap
// (__builtin_trap) -> hipErrorLaunchFailure, a store outside every allocation
// -> hipErrorIllegalAddress. Usage: hip-faults trap|oob; prints PASS when the
// launch / synchronisation returns the expected error.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstring>

__global__ void k_trap(int *p) { if (threadIdx.x == 5) __builtin_trap(); p[threadIdx.x] = 1; }
__global__ void k_oob(int *p) { int *bad = (int *)0x1000; bad[threadIdx.x] = p[threadIdx.x]; }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "trap";
    int *d = nullptr;
    if (hipMalloc(&d, 256 * sizeof(int)) != hipSuccess) { printf("hipMalloc failed\n"); return 2; }
    hipError_t want = strcmp(mode, "oob") == 0 ? hipErrorIllegalAddress : hipErrorLaunchFailure;
    if (strcmp(mode, "oob") == 0) hipLaunchKernelGGL(k_oob, dim3(2), dim3(64), 0, 0, d);
    else hipLaunchKernelGGL(k_trap, dim3(2), dim3(64), 0, 0, d);
    hipError_t l = hipGetLastError();
    hipError_t s = hipDeviceSynchronize();
    printf("launch: %s, synchronize: %s\n", hipGetErrorName(l), hipGetErrorName(s));
    if ((l == want || l == hipSuccess) && s == want) { printf("PASS\n"); return 0; }
    printf("FAIL: expected %s\n", hipGetErrorName(want));
    return 1;
}
