// module_kernels.hip - device code loaded at run time through the module API
// (tests/programs/module_launch.hip, codeobj_versions.hip), in the style of
// the HIP samples' module_api: built with `hipcc --genco` (an offload bundle)
// or, for code object v5, into a bare .hsaco (mk/prog-module.mk).
#include <hip/hip_runtime.h>

__device__ int module_counter;          // incremented by use_globals
__constant__ float coef[4];             // set by the host with hipModuleGetGlobal
__device__ int g[4];                    // read by vadd_g (code-object version checks)

extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

// Mixed argument sizes and alignments: the `extra` launch form packs them.
extern "C" __global__ void saxpy_mixed(float *y, const float *x, float a, char bias, double d,
                                       int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i] + (float)bias + (float)d;
}

extern "C" __global__ void use_globals(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = (int)(coef[i & 3] * 10.0f) + i;
        atomicAdd(&module_counter, 1);
    }
}

// Dynamic shared memory: the size comes from hipModuleLaunchKernel.
extern "C" __global__ void reverse_block(int *d)
{
    extern __shared__ int s[];
    int t = threadIdx.x, base = blockIdx.x * blockDim.x;
    s[t] = d[base + t];
    __syncthreads();
    d[base + t] = s[blockDim.x - 1 - t];
}

extern "C" __global__ void vadd_g(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = i * g[i & 3];
}

// A C++ (mangled) kernel name: _Z12scale_kernelPffi
__global__ void scale_kernel(float *x, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= s;
}
