// peer_copy.hip - two GPUs: peer access queries and enables, hipMemcpyPeer,
// cross-device hipMemcpy (hipMemcpyDefault, direction from the pointers), and
// a kernel on GPU 1 reading GPU 0's buffer directly (peer access).
#include "samples_check.h"
#include <cstring>

__global__ void fill(int *a, int base, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = base + i;
}
__global__ void add_peer(int *dst, const int *local, const int *peer, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = local[i] + 2 * peer[i];
}

int main()
{
    int count = 0;
    CHECK(hipGetDeviceCount(&count));
    EXPECT(count >= 2, "needs 2 GPUs, have %d (run with gcn3-emu --gpus 2)", count);
    int can01 = 0, can10 = 0;
    CHECK(hipDeviceCanAccessPeer(&can01, 0, 1));
    CHECK(hipDeviceCanAccessPeer(&can10, 1, 0));
    EXPECT(can01 && can10, "peer access %d %d", can01, can10);
    int p2p = 0;
    CHECK(hipDeviceGetP2PAttribute(&p2p, hipDevP2PAttrAccessSupported, 0, 1));
    EXPECT(p2p == 1, "P2P access attribute %d", p2p);
    char bus0[32], bus1[32];
    CHECK(hipDeviceGetPCIBusId(bus0, sizeof bus0, 0));
    CHECK(hipDeviceGetPCIBusId(bus1, sizeof bus1, 1));
    EXPECT(strcmp(bus0, bus1) != 0, "both GPUs at %s", bus0);

    const int n = 8192;
    const size_t bytes = n * sizeof(int);
    int *d0, *d1, *d1b, *out;
    CHECK(hipSetDevice(0));
    CHECK(hipMalloc((void **)&d0, bytes));
    hipLaunchKernelGGL(fill, dim3(n / 256), dim3(256), 0, 0, d0, 1000, n);
    CHECK(hipGetLastError());
    CHECK(hipSetDevice(1));
    CHECK(hipDeviceEnablePeerAccess(0, 0));
    EXPECT(hipDeviceEnablePeerAccess(0, 0) == hipErrorPeerAccessAlreadyEnabled, "second enable");
    (void)hipGetLastError();
    CHECK(hipMalloc((void **)&d1, bytes));
    CHECK(hipMalloc((void **)&d1b, bytes));
    CHECK(hipMalloc((void **)&out, bytes));
    hipPointerAttribute_t at;
    CHECK(hipPointerGetAttributes(&at, d1));
    EXPECT(at.device == 1 && at.memoryType == hipMemoryTypeDevice, "d1 on device %d", at.device);
    CHECK(hipPointerGetAttributes(&at, d0));
    EXPECT(at.device == 0, "d0 on device %d", at.device);

    CHECK(hipMemcpyPeer(d1, 1, d0, 0, bytes));                 // 0 -> 1
    CHECK(hipMemcpy(d1b, d0, bytes, hipMemcpyDefault));        // 0 -> 1, inferred
    hipLaunchKernelGGL(add_peer, dim3(n / 256), dim3(256), 0, 0, out, d1, d0, n); // reads GPU 0
    CHECK(hipGetLastError());
    int *h = new int[n], *hb = new int[n];
    CHECK(hipMemcpy(h, out, bytes, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(hb, d1b, bytes, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        EXPECT(h[i] == 3 * (1000 + i), "out[%d] = %d", i, h[i]);
        EXPECT(hb[i] == 1000 + i, "copy[%d] = %d", i, hb[i]);
    }
    // and back: GPU 1 -> GPU 0 with an async peer copy
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    CHECK(hipMemcpyPeerAsync(d0, 0, out, 1, bytes, s));
    CHECK(hipStreamSynchronize(s));
    CHECK(hipSetDevice(0));
    CHECK(hipMemcpy(h, d0, bytes, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(h[i] == 3 * (1000 + i), "back[%d] = %d", i, h[i]);
    CHECK(hipSetDevice(1));
    CHECK(hipDeviceDisablePeerAccess(0));
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(d1));
    CHECK(hipFree(d1b));
    CHECK(hipFree(out));
    CHECK(hipFree(d0));
    delete[] h;
    delete[] hb;
    printf("peer_copy: PASS (%d ints across 2 GPUs)\n", n);
    return 0;
}
