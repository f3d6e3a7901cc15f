// Memory-latency micro-benchmarks (MGSim paper Sec. VI-B and VII-A, Fig. 6b-d):
// one work-item follows a chain of pointers, so every load waits for the one
// before it; the replay's kernel time grows by one access latency per load.
//   l1:   K loads of the same address (paper "L1 Access"): all but the first
//         would be L1V hits, unless the L1V is bypassed (the paper's finding)
//   l2:   64 KiB chain at a 64-byte stride scanned once (into the 2 MiB L2),
//         (paper: 1 MiB) then K loads from its start again: L2 hits (paper "L2 Access")
//   dram: K loads at a 64-byte stride into memory never touched before: L2
//         misses served by DRAM (paper "DRAM Access")
// run.sh takes the slope of kernel cycles over K for each kind.
#include <hip/hip_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

typedef unsigned long long u64;

template <int K> __global__ void chase(const u64 *start, u64 *sink)
{
    if (threadIdx.x != 0)
        return;
    const u64 *p = start;
#pragma unroll
    for (int i = 0; i < K; i++)
        p = (const u64 *)*(volatile const u64 *)p;
    sink[0] = (u64)p;
}

#define CHECK(x)                                                                                \
    do {                                                                                        \
        hipError_t e_ = (x);                                                                    \
        if (e_ != hipSuccess) {                                                                 \
            fprintf(stderr, "%s: %s\n", #x, hipGetErrorString(e_));                             \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

static const size_t L2_BYTES = 64u << 10;  /* paper: 1 MB; 64 KiB fits every L2 set mapping */
static const size_t DRAM_BYTES = 1u << 20; /* fresh lines for the DRAM kernels */
static const size_t STRIDE = 64;           /* one cache line (all levels: 64 B) */

template <int K> static void launch(const u64 *start, u64 *sink, const char *kind)
{
    hipLaunchKernelGGL(chase<K>, dim3(1), dim3(64), 0, 0, start, sink);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    printf("%s %d\n", kind, K);
}

#define KLIST(X, a, b, c) X(16, a, b, c) X(32, a, b, c) X(64, a, b, c) X(128, a, b, c)
#define L(k, start, sink, kind) launch<k>(start, sink, kind);

int main()
{
    size_t total = L2_BYTES + DRAM_BYTES + 4096;
    u64 *d;
    CHECK(hipMalloc(&d, total));
    uint8_t *base = (uint8_t *)d;
    std::vector<u64> h(total / 8, 0);
    /* l1: one self-pointing word at the end */
    size_t self = L2_BYTES + DRAM_BYTES;
    h[self / 8] = (u64)(base + self);
    /* l2 region: a 64-byte-stride ring over 1 MiB */
    for (size_t o = 0; o < L2_BYTES; o += STRIDE)
        h[o / 8] = (u64)(base + (o + STRIDE) % L2_BYTES);
    /* dram region: 64-byte-stride chain */
    for (size_t o = 0; o + STRIDE < DRAM_BYTES; o += STRIDE)
        h[(L2_BYTES + o) / 8] = (u64)(base + L2_BYTES + o + STRIDE);
    CHECK(hipMemcpy(d, h.data(), total, hipMemcpyHostToDevice));
    u64 *sink = (u64 *)(base + self + 64);

    const u64 *l1 = (const u64 *)(base + self);
    KLIST(L, l1, sink, "l1")
    /* warm: one full pass over the 1 MiB ring brings it into the L2 */
    launch<(int)(L2_BYTES / STRIDE)>((const u64 *)base, sink, "warm");
    KLIST(L, (const u64 *)base, sink, "l2")
    /* dram: each kernel starts where the last one stopped (untouched lines) */
    size_t off = L2_BYTES + STRIDE * 64; /* skip lines a prefetch could have touched */
#define D(k, a, b, c) launch<k>((const u64 *)(base + off), sink, "dram"); off += (size_t)(k) * STRIDE + 4096;
    KLIST(D, 0, 0, 0)
    u64 got;
    CHECK(hipMemcpy(&got, sink, 8, hipMemcpyDeviceToHost));
    printf("chase: ok\n");
    CHECK(hipFree(d));
    return 0;
}
