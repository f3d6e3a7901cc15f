// device_malloc.hip - malloc/free inside kernels (ROCm's __ockl_dm_alloc,
// served through the hostcall buffer's DEVMEM service; gcn3-emu issue 4).
// Small blocks (slab allocator in the code object's heap, slabs from the
// host) and large ones (> 3 KiB: straight from the host), written, read back
// across threads, freed; results checked on the host.
#include <hip/hip_runtime.h>
#include <stdio.h>

__global__ void small_blocks(int *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int *p = (int *)malloc(16 * sizeof(int));
    if (!p) {
        out[t] = -1;
        return;
    }
    for (int i = 0; i < 16; i++)
        p[i] = t * 100 + i;
    int s = 0;
    for (int i = 0; i < 16; i++)
        s += p[i];
    free(p);
    if (t < n)
        out[t] = s;
}

__global__ void large_block(long *out)
{
    /* one 64 KiB block per workgroup, shared through LDS */
    __shared__ long *buf;
    if (threadIdx.x == 0)
        buf = (long *)malloc(8192 * sizeof(long));
    __syncthreads();
    if (!buf) {
        if (threadIdx.x == 0)
            out[blockIdx.x] = -1;
        return;
    }
    for (int i = threadIdx.x; i < 8192; i += blockDim.x)
        buf[i] = (long)blockIdx.x * 8192 + i;
    __syncthreads();
    if (threadIdx.x == 0) {
        long s = 0;
        for (int i = 0; i < 8192; i++)
            s += buf[i];
        out[blockIdx.x] = s;
        free(buf);
    }
}

int main()
{
    const int n = 256, nb = 4;
    int *d_out;
    long *d_big;
    if (hipMalloc(&d_out, n * sizeof(int)) != hipSuccess || hipMalloc(&d_big, nb * sizeof(long)) != hipSuccess) {
        printf("FAIL hipMalloc\n");
        return 1;
    }
    hipLaunchKernelGGL(small_blocks, dim3(n / 64), dim3(64), 0, 0, d_out, n);
    hipError_t e = hipDeviceSynchronize();
    if (e != hipSuccess) {
        printf("FAIL small_blocks: %s\n", hipGetErrorString(e));
        return 1;
    }
    hipLaunchKernelGGL(large_block, dim3(nb), dim3(128), 0, 0, d_big);
    e = hipDeviceSynchronize();
    if (e != hipSuccess) {
        printf("FAIL large_block: %s\n", hipGetErrorString(e));
        return 1;
    }
    int out[n];
    long big[nb];
    hipMemcpy(out, d_out, sizeof out, hipMemcpyDeviceToHost);
    hipMemcpy(big, d_big, sizeof big, hipMemcpyDeviceToHost);
    int bad = 0;
    for (int t = 0; t < n; t++)
        if (out[t] != t * 1600 + 120) {
            printf("FAIL small_blocks out[%d] = %d, expected %d\n", t, out[t], t * 1600 + 120);
            bad = 1;
            break;
        }
    for (int b = 0; b < nb; b++) {
        long want = (long)b * 8192 * 8192 + 8191L * 8192 / 2;
        if (big[b] != want) {
            printf("FAIL large_block out[%d] = %ld, expected %ld\n", b, big[b], want);
            bad = 1;
        }
    }
    printf(bad ? "FAIL\n" : "PASS\n");
    return bad;
}
