// cas_own.hip - compare-and-swap where every work-item owns its word (issue 20,
// first row): global 32-bit and 64-bit atomicCAS (flat_atomic_cmpswap(_x2)) and
// LDS atomicCAS (ds_cmpst_rtn_b32), each once with a compare value that matches
// (the swap happens) and once with one that does not (memory keeps its value).
// No two lanes share a word, so the result is independent of any interleaving:
// the replay's data check must report 0 differences of every kind.
#include "samples_check.h"
#include <cstdint>

#define N 4096
#define WG 256

__global__ void cas32(unsigned *p, unsigned *old_ok, unsigned *old_bad)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    // matches: p[i] == 3*i, becomes 7*i+1
    old_ok[i] = atomicCAS(&p[i], 3u * i, 7u * i + 1u);
    // does not match (p[i] is 7*i+1 now): stays
    old_bad[i] = atomicCAS(&p[i], 5u * i + 2u, 0xdeadbeefu);
}

__global__ void cas64(unsigned long long *p, unsigned long long *old_ok, unsigned long long *old_bad)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long v = (unsigned long long)i << 33 | i;
    old_ok[i] = atomicCAS(&p[i], v, v ^ 0xf0f0f0f000000000ull);
    old_bad[i] = atomicCAS(&p[i], v, 0x1234ull);
}

__global__ void cas_lds(unsigned *out, unsigned *old_ok, unsigned *old_bad)
{
    __shared__ unsigned s[WG];
    unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = 11u * i;
    __syncthreads();
    old_ok[i] = atomicCAS(&s[t], 11u * i, 13u * i + 5u);
    old_bad[i] = atomicCAS(&s[t], 11u * i, 0xfeedu);
    __syncthreads();
    out[i] = s[t];
}

int main()
{
    unsigned *h32 = new unsigned[N], *ok32 = new unsigned[N], *bad32 = new unsigned[N];
    unsigned long long *h64 = new unsigned long long[N], *ok64 = new unsigned long long[N],
                       *bad64 = new unsigned long long[N];
    for (unsigned i = 0; i < N; i++) {
        h32[i] = 3u * i;
        h64[i] = (unsigned long long)i << 33 | i;
    }
    unsigned *d32, *dok32, *dbad32;
    unsigned long long *d64, *dok64, *dbad64;
    CHECK(hipMalloc(&d32, N * 4));
    CHECK(hipMalloc(&dok32, N * 4));
    CHECK(hipMalloc(&dbad32, N * 4));
    CHECK(hipMalloc(&d64, N * 8));
    CHECK(hipMalloc(&dok64, N * 8));
    CHECK(hipMalloc(&dbad64, N * 8));
    CHECK(hipMemcpy(d32, h32, N * 4, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(d64, h64, N * 8, hipMemcpyHostToDevice));

    hipLaunchKernelGGL(cas32, dim3(N / WG), dim3(WG), 0, 0, d32, dok32, dbad32);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(h32, d32, N * 4, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(ok32, dok32, N * 4, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(bad32, dbad32, N * 4, hipMemcpyDeviceToHost));
    for (unsigned i = 0; i < N; i++) {
        EXPECT(ok32[i] == 3u * i, "cas32 old_ok[%u] = %u, want %u", i, ok32[i], 3u * i);
        EXPECT(bad32[i] == 7u * i + 1u, "cas32 old_bad[%u] = %u, want %u", i, bad32[i], 7u * i + 1u);
        EXPECT(h32[i] == 7u * i + 1u, "cas32 p[%u] = %u, want %u", i, h32[i], 7u * i + 1u);
    }

    hipLaunchKernelGGL(cas64, dim3(N / WG), dim3(WG), 0, 0, d64, dok64, dbad64);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(h64, d64, N * 8, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(ok64, dok64, N * 8, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(bad64, dbad64, N * 8, hipMemcpyDeviceToHost));
    for (unsigned i = 0; i < N; i++) {
        unsigned long long v = (unsigned long long)i << 33 | i, nv = v ^ 0xf0f0f0f000000000ull;
        EXPECT(ok64[i] == v, "cas64 old_ok[%u] = %llx, want %llx", i, ok64[i], v);
        EXPECT(bad64[i] == nv, "cas64 old_bad[%u] = %llx, want %llx", i, bad64[i], nv);
        EXPECT(h64[i] == nv, "cas64 p[%u] = %llx, want %llx", i, h64[i], nv);
    }

    hipLaunchKernelGGL(cas_lds, dim3(N / WG), dim3(WG), 0, 0, d32, dok32, dbad32);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(h32, d32, N * 4, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(ok32, dok32, N * 4, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(bad32, dbad32, N * 4, hipMemcpyDeviceToHost));
    for (unsigned i = 0; i < N; i++) {
        EXPECT(ok32[i] == 11u * i, "cas_lds old_ok[%u] = %u, want %u", i, ok32[i], 11u * i);
        EXPECT(bad32[i] == 13u * i + 5u, "cas_lds old_bad[%u] = %u, want %u", i, bad32[i], 13u * i + 5u);
        EXPECT(h32[i] == 13u * i + 5u, "cas_lds out[%u] = %u, want %u", i, h32[i], 13u * i + 5u);
    }
    printf("PASS cas_own: %d work-items, global 32/64-bit and LDS compare-and-swap\n", N);
    return 0;
}
