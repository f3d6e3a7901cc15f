// assert.hip - a failing device assert ends the launch with
// hipErrorLaunchFailure (gcn3-emu issue 4). The kernel asserts on one thread
// only; the program checks the error from hipDeviceSynchronize (and that a
// passing assert in an earlier launch does nothing) and prints PASS.
#include <hip/hip_runtime.h>
#include <assert.h>
#include <stdio.h>

__global__ void check_positive(const int *v, int *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) {
        assert(v[t] > 0 && "values must be positive");
        out[t] = v[t] * 2;
    }
}

int main()
{
    const int n = 128;
    int h[n];
    for (int i = 0; i < n; i++)
        h[i] = i + 1;
    int *d_v, *d_out;
    if (hipMalloc(&d_v, sizeof h) != hipSuccess || hipMalloc(&d_out, sizeof h) != hipSuccess) {
        printf("FAIL hipMalloc\n");
        return 1;
    }
    hipMemcpy(d_v, h, sizeof h, hipMemcpyHostToDevice);
    /* every assert holds: the launch succeeds */
    hipLaunchKernelGGL(check_positive, dim3(2), dim3(64), 0, 0, d_v, d_out, n);
    hipError_t e = hipDeviceSynchronize();
    if (e != hipSuccess) {
        printf("FAIL passing asserts: %s\n", hipGetErrorString(e));
        return 1;
    }
    int out[n];
    hipMemcpy(out, d_out, sizeof out, hipMemcpyDeviceToHost);
    for (int i = 0; i < n; i++)
        if (out[i] != 2 * (i + 1)) {
            printf("FAIL out[%d] = %d\n", i, out[i]);
            return 1;
        }
    /* one value is negative: its thread's assert fails */
    h[77] = -5;
    hipMemcpy(d_v, h, sizeof h, hipMemcpyHostToDevice);
    hipLaunchKernelGGL(check_positive, dim3(2), dim3(64), 0, 0, d_v, d_out, n);
    hipError_t le = hipGetLastError();
    e = hipDeviceSynchronize();
    if (le != hipErrorLaunchFailure && e != hipErrorLaunchFailure) {
        printf("FAIL failing assert: launch %s, synchronize %s (expected hipErrorLaunchFailure)\n",
               hipGetErrorName(le), hipGetErrorName(e));
        return 1;
    }
    printf("assert reported: %s\n", hipGetErrorName(hipErrorLaunchFailure));
    printf("PASS\n");
    return 0;
}
