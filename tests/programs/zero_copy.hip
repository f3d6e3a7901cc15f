// zero_copy.hip - mapped pinned host memory (hipHostMalloc + hipHostGetDevicePointer)
// read and written by a kernel without copies, and hipHostRegister'ed memory.
#include "samples_check.h"

__global__ void square(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * in[i];
}

int main()
{
    int map = 0;
    CHECK(hipDeviceGetAttribute(&map, hipDeviceAttributeCanMapHostMemory, 0));
    EXPECT(map == 1, "can map host memory: %d", map);
    const int n = 2048;
    float *hin, *hout;
    CHECK(hipHostMalloc((void **)&hin, n * sizeof(float), hipHostMallocMapped));
    CHECK(hipHostMalloc((void **)&hout, n * sizeof(float), hipHostMallocMapped));
    unsigned flags = 0;
    CHECK(hipHostGetFlags(&flags, hin));
    EXPECT(flags & hipHostMallocMapped, "flags 0x%x", flags);
    float *din, *dout;
    CHECK(hipHostGetDevicePointer((void **)&din, hin, 0));
    CHECK(hipHostGetDevicePointer((void **)&dout, hout, 0));
    for (int round = 1; round <= 2; round++) { // the host rewrites the input between launches
        for (int i = 0; i < n; i++) hin[i] = (float)(i % 100) * round;
        hipLaunchKernelGGL(square, dim3(n / 256), dim3(256), 0, 0, din, dout, n);
        CHECK(hipDeviceSynchronize());
        for (int i = 0; i < n; i++)
            EXPECT(hout[i] == hin[i] * hin[i], "round %d out[%d] = %f", round, i, hout[i]);
    }
    hipPointerAttribute_t at;
    CHECK(hipPointerGetAttributes(&at, hin));
    EXPECT(at.memoryType == hipMemoryTypeHost, "memory type %d", (int)at.memoryType);

    // registered memory: the kernel uses the device pointer of the range
    static float reg_in[1024], reg_out[1024];
    for (int i = 0; i < 1024; i++) reg_in[i] = (float)i / 4;
    CHECK(hipHostRegister(reg_in, sizeof reg_in, hipHostRegisterMapped));
    CHECK(hipHostRegister(reg_out, sizeof reg_out, hipHostRegisterMapped));
    EXPECT(hipHostRegister(reg_in, sizeof reg_in, 0) == hipErrorHostMemoryAlreadyRegistered,
           "second registration");
    (void)hipGetLastError();
    float *rin, *rout;
    CHECK(hipHostGetDevicePointer((void **)&rin, reg_in, 0));
    CHECK(hipHostGetDevicePointer((void **)&rout, reg_out, 0));
    hipLaunchKernelGGL(square, dim3(4), dim3(256), 0, 0, rin, rout, 1024);
    CHECK(hipDeviceSynchronize());
    for (int i = 0; i < 1024; i++)
        EXPECT(reg_out[i] == reg_in[i] * reg_in[i], "registered out[%d] = %f", i, reg_out[i]);
    CHECK(hipHostUnregister(reg_in));
    CHECK(hipHostUnregister(reg_out));
    EXPECT(hipHostUnregister(reg_out) == hipErrorHostMemoryNotRegistered, "second unregister");
    (void)hipGetLastError();
    CHECK(hipHostFree(hin));
    CHECK(hipHostFree(hout));
    printf("zero_copy: PASS (%d floats through mapped host memory)\n", n);
    return 0;
}
