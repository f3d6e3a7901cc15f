// sync_patterns.hip - inter-workgroup synchronisation as real GPU code writes
// it (issue 15's list), in the style of the public HIP samples. Each mode
// checks its result on the host and prints "PASS <mode>".
//
//   sync_patterns lookback [n]   single-pass inclusive prefix sum with decoupled
//                                look-back (Merrill & Garland 2016): each
//                                workgroup publishes its aggregate and then its
//                                inclusive prefix in a status word (flag in the
//                                top bits) and looks back over its predecessors'
//                                status words, spinning on those not yet ready;
//                                workgroups take tiles in the order they start
//                                (an atomic ticket), so the look-back never
//                                waits for a workgroup that is not running
//   sync_patterns lastblock [n]  a reduction where each workgroup writes its
//                                partial sum, fences (__threadfence) and takes a
//                                ticket; the workgroup that takes the last
//                                ticket sums the partials (CUDA's
//                                threadFenceReduction sample)
//   sync_patterns casfloat [n]   float atomicAdd done as a compare-and-swap loop
//                                on the bits (what HIP did before hardware
//                                float atomics): every work-item adds 0.5 to one
//                                of 8 counters
#include "samples_check.h"
#include <cstring>
#include <vector>

#define WG 256
#define FLAG_AGG 0x40000000u    /* aggregate published */
#define FLAG_PREFIX 0x80000000u /* inclusive prefix published */
#define VALUE_MASK 0x3fffffffu

__device__ unsigned block_sum(unsigned v, unsigned *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = WG / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    unsigned r = sh[0];
    __syncthreads();
    return r;
}

/* in[i] small (values < 4), so every prefix fits in 30 bits for n < 2^28 */
__global__ void lookback_scan(const unsigned *in, unsigned *out, unsigned *status, unsigned *ticket, unsigned n)
{
    __shared__ unsigned sh[WG];
    __shared__ unsigned tile_s, excl_s;
    if (threadIdx.x == 0)
        tile_s = atomicAdd(ticket, 1u);
    __syncthreads();
    unsigned tile = tile_s, i = tile * WG + threadIdx.x;
    unsigned v = i < n ? in[i] : 0u;
    /* inclusive scan of the tile in LDS (Hillis-Steele) */
    sh[threadIdx.x] = v;
    __syncthreads();
    for (unsigned d = 1; d < WG; d <<= 1) {
        unsigned t = threadIdx.x >= d ? sh[threadIdx.x - d] : 0u;
        __syncthreads();
        sh[threadIdx.x] += t;
        __syncthreads();
    }
    unsigned incl = sh[threadIdx.x], agg = sh[WG - 1];
    if (threadIdx.x == 0) {
        unsigned excl = 0;
        if (tile == 0) {
            atomicExch(&status[0], FLAG_PREFIX | agg);
        } else {
            atomicExch(&status[tile], FLAG_AGG | agg);
            for (int p = (int)tile - 1; p >= 0; p--) {
                unsigned s;
                do /* spin until the predecessor published something */
                    s = atomicAdd(&status[p], 0u);
                while (!(s & (FLAG_AGG | FLAG_PREFIX)));
                excl += s & VALUE_MASK;
                if (s & FLAG_PREFIX)
                    break;
            }
            __threadfence();
            atomicExch(&status[tile], FLAG_PREFIX | (excl + agg));
        }
        excl_s = excl;
    }
    __syncthreads();
    if (i < n)
        out[i] = excl_s + incl;
}

__global__ void lastblock_sum(const unsigned *in, unsigned *partial, unsigned *count, unsigned *result, unsigned n)
{
    __shared__ unsigned sh[WG];
    __shared__ bool last;
    unsigned i = blockIdx.x * WG + threadIdx.x;
    unsigned s = block_sum(i < n ? in[i] : 0u, sh);
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s;
        __threadfence();
        unsigned t = atomicInc(count, gridDim.x);
        last = t == gridDim.x - 1;
    }
    __syncthreads();
    if (last) {
        unsigned acc = 0;
        for (unsigned b = threadIdx.x; b < gridDim.x; b += WG)
            acc += ((volatile unsigned *)partial)[b];
        unsigned total = block_sum(acc, sh);
        if (threadIdx.x == 0) {
            *result = total;
            *count = 0;
        }
    }
}

__device__ float cas_add(float *addr, float v)
{
    unsigned *p = (unsigned *)addr;
    unsigned old = *p, assumed;
    do {
        assumed = old;
        old = atomicCAS(p, assumed, __float_as_uint(__uint_as_float(assumed) + v));
    } while (old != assumed);
    return __uint_as_float(old);
}

__global__ void casfloat_add(float *counters, unsigned n)
{
    unsigned i = blockIdx.x * WG + threadIdx.x;
    if (i < n)
        cas_add(&counters[i % 8], 0.5f);
}

static unsigned *dev_copy(const std::vector<unsigned> &h)
{
    unsigned *d = nullptr;
    if (hipMalloc(&d, h.size() * 4) != hipSuccess || hipMemcpy(d, h.data(), h.size() * 4, hipMemcpyHostToDevice) != hipSuccess)
        return nullptr;
    return d;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "lookback";
    unsigned n = argc > 2 ? (unsigned)atoi(argv[2]) : 0;
    if (!strcmp(mode, "lookback")) {
        if (!n)
            n = 64 * WG + 77;
        unsigned tiles = (n + WG - 1) / WG;
        std::vector<unsigned> h(n);
        for (unsigned i = 0; i < n; i++)
            h[i] = (i * 7u + 3u) % 4u;
        unsigned *in = dev_copy(h), *out, *status, *ticket;
        EXPECT(in, "hipMalloc/hipMemcpy of the input failed");
        CHECK(hipMalloc(&out, (size_t)n * 4));
        CHECK(hipMalloc(&status, (size_t)tiles * 4));
        CHECK(hipMalloc(&ticket, 4));
        CHECK(hipMemset(status, 0, (size_t)tiles * 4));
        CHECK(hipMemset(ticket, 0, 4));
        hipLaunchKernelGGL(lookback_scan, dim3(tiles), dim3(WG), 0, 0, in, out, status, ticket, n);
        CHECK(hipGetLastError());
        CHECK(hipDeviceSynchronize());
        std::vector<unsigned> r(n);
        CHECK(hipMemcpy(r.data(), out, (size_t)n * 4, hipMemcpyDeviceToHost));
        unsigned acc = 0;
        for (unsigned i = 0; i < n; i++) {
            acc += h[i];
            EXPECT(r[i] == acc, "out[%u] = %u, want %u", i, r[i], acc);
        }
    } else if (!strcmp(mode, "lastblock")) {
        if (!n)
            n = 200 * WG + 13;
        unsigned blocks = (n + WG - 1) / WG;
        std::vector<unsigned> h(n);
        unsigned long long want = 0;
        for (unsigned i = 0; i < n; i++)
            want += h[i] = i % 1000u;
        unsigned *in = dev_copy(h), *partial, *count, *result, r = 0;
        EXPECT(in, "hipMalloc/hipMemcpy of the input failed");
        CHECK(hipMalloc(&partial, (size_t)blocks * 4));
        CHECK(hipMalloc(&count, 4));
        CHECK(hipMalloc(&result, 4));
        CHECK(hipMemset(count, 0, 4));
        hipLaunchKernelGGL(lastblock_sum, dim3(blocks), dim3(WG), 0, 0, in, partial, count, result, n);
        CHECK(hipGetLastError());
        CHECK(hipDeviceSynchronize());
        CHECK(hipMemcpy(&r, result, 4, hipMemcpyDeviceToHost));
        EXPECT(r == (unsigned)want, "sum %u, want %llu", r, want);
    } else if (!strcmp(mode, "casfloat")) {
        if (!n)
            n = 16 * WG;
        float *c, h[8];
        CHECK(hipMalloc(&c, sizeof h));
        CHECK(hipMemset(c, 0, sizeof h));
        hipLaunchKernelGGL(casfloat_add, dim3((n + WG - 1) / WG), dim3(WG), 0, 0, c, n);
        CHECK(hipGetLastError());
        CHECK(hipDeviceSynchronize());
        CHECK(hipMemcpy(h, c, sizeof h, hipMemcpyDeviceToHost));
        for (unsigned k = 0; k < 8; k++) {
            unsigned cnt = n / 8 + (k < n % 8);
            EXPECT(h[k] == 0.5f * (float)cnt, "counter %u = %g, want %g", k, (double)h[k], 0.5 * cnt);
        }
    } else {
        printf("usage: sync_patterns lookback|lastblock|casfloat [n]\n");
        return 2;
    }
    printf("PASS %s\n", mode);
    return 0;
}
