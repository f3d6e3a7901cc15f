// managed.hip - managed (unified) memory: hipMallocManaged buffers written by
// the host, updated by kernels, read back by the host without copies.
#include "samples_check.h"

__global__ void axpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

int main()
{
    int managed = 0;
    CHECK(hipDeviceGetAttribute(&managed, hipDeviceAttributeManagedMemory, 0));
    EXPECT(managed == 1, "managed memory attribute %d", managed);
    const int n = 5000;
    float *x, *y;
    CHECK(hipMallocManaged((void **)&x, n * sizeof(float)));
    CHECK(hipMallocManaged((void **)&y, n * sizeof(float), hipMemAttachGlobal));
    for (int i = 0; i < n; i++) x[i] = (float)i, y[i] = 1.0f;
    hipLaunchKernelGGL(axpy, dim3((n + 255) / 256), dim3(256), 0, 0, 2.0f, x, y, n);
    CHECK(hipDeviceSynchronize());
    for (int i = 0; i < n; i++) EXPECT(y[i] == 2.0f * i + 1.0f, "y[%d] = %f", i, y[i]);
    for (int i = 0; i < n; i++) x[i] = 1.0f; // host writes again, kernel sees it
    hipLaunchKernelGGL(axpy, dim3((n + 255) / 256), dim3(256), 0, 0, 3.0f, x, y, n);
    CHECK(hipDeviceSynchronize());
    for (int i = 0; i < n; i++) EXPECT(y[i] == 2.0f * i + 4.0f, "y[%d] = %f", i, y[i]);
    hipPointerAttribute_t at;
    CHECK(hipPointerGetAttributes(&at, y));
    EXPECT(at.isManaged == 1, "isManaged %d", at.isManaged);
    size_t fr, tot;
    CHECK(hipMemGetInfo(&fr, &tot));
    EXPECT(fr + 2 * n * sizeof(float) <= tot, "free %zu of %zu", fr, tot);
    CHECK(hipFree(x));
    CHECK(hipFree(y));
    printf("managed: PASS (%d floats)\n", n);
    return 0;
}
