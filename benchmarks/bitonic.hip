// bitonic: bitonic sort of 32-bit unsigned keys, the MGMark BS workload (AMD
// APP SDK BitonicSort; MGSim paper, Sec. V-B: "Irregular" pattern). One kernel
// launch per pass (stage k = 2, 4, ..., N; distance j = k/2, ..., 1): each
// work-item compare-exchanges the pair (i, i ^ j), ascending where i & k == 0,
// so every pass sweeps the whole array.
//
// Usage: bitonic [--small] [--size N] [--gpus N]
//   N keys, a power of two: default 32K per GPU requested (MGSim Table II:
//   32K on 1 GPU, 128K on 4), --small 2K per GPU.
//   With --gpus G (a power of two) device d holds keys [d*N/G, (d+1)*N/G) in
//   its own memory. Passes with j < N/G pair keys of one device and run there
//   in place. Passes with j >= N/G pair each key with the key at the same
//   offset on device d ^ (j*G/N): every device reads its partner's keys
//   directly through peer access (remote reads) and writes the min or the
//   max into its own second buffer; the host synchronises all devices before
//   each such pass.
#include <hip/hip_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    fprintf(stderr, "bitonic: %s:%d: %s: %s\n", __FILE__, __LINE__, #x, hipGetErrorString(e_)); \
    exit(2); } } while (0)

#define BLOCK 256

/* ---- command line (same options in every MGMark-style workload) ---------- */
static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s [--small] [--size N] [--gpus N]\n", prog);
    exit(2);
}

/* Parse --small / --size / --gpus; check that enough devices exist. The
 * default size is `base` (or `small`) per GPU requested. */
static void parse_args(int argc, char **argv, long base, long small, long *size, int *gpus)
{
    long sz = -1;
    int use_small = 0;
    *gpus = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--small"))
            use_small = 1;
        else if (!strcmp(argv[i], "--size") && i + 1 < argc)
            sz = strtol(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--gpus") && i + 1 < argc)
            *gpus = atoi(argv[++i]);
        else
            usage(argv[0]);
    }
    if (*gpus < 1 || (sz != -1 && sz < 1))
        usage(argv[0]);
    int ndev = 0;
    hipError_t e = hipGetDeviceCount(&ndev);
    if (e != hipSuccess || ndev < *gpus) {
        fprintf(stderr, "bitonic: %d GPU(s) requested but %d HIP device(s) visible%s%s\n", *gpus,
                e == hipSuccess ? ndev : 0, e == hipSuccess ? "" : ": ",
                e == hipSuccess ? "" : hipGetErrorString(e));
        exit(2);
    }
    *size = sz != -1 ? sz : (use_small ? small : base) * *gpus;
}

/* ---- device code --------------------------------------------------------- */
/* A pass within one device's keys: work-item t handles the pair (i, i ^ j)
 * with i < i ^ j; `base` is the global index of keys[0] (for the direction). */
__global__ void bitonic_pass(unsigned *keys, unsigned npairs, unsigned j, unsigned k, unsigned base)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= npairs)
        return;
    unsigned i = 2 * t - (t & (j - 1));         /* insert a 0 bit at position log2(j) */
    unsigned l = i + j;
    unsigned a = keys[i], b = keys[l];
    bool up = ((base + i) & k) == 0;
    if ((a > b) == up) {
        keys[i] = b;
        keys[l] = a;
    }
}

/* A pass across devices: every key of this device (own[], global index
 * base + i) meets the key at the same offset on the partner (peer[], global
 * index base ^ j + i, read remotely); the min or the max goes to out[]. */
__global__ void bitonic_pass_peer(const unsigned *own, const unsigned *peer, unsigned *out,
                                  unsigned n, unsigned j, unsigned k, unsigned base)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned a = own[i], b = peer[i];
    bool up = ((base + i) & k) == 0, lower = (base & j) == 0;
    out[i] = (up == lower) ? min(a, b) : max(a, b);
}

/* ---- host ---------------------------------------------------------------- */
int main(int argc, char **argv)
{
    long size;
    int ngpu;
    parse_args(argc, argv, 32 * 1024, 2 * 1024, &size, &ngpu);
    if ((size & (size - 1)) || (ngpu & (ngpu - 1)) || size < 2L * ngpu || size > (1L << 30)) {
        fprintf(stderr, "bitonic: keys (%ld) and GPUs (%d) must be powers of two, "
                "with at least 2 keys per GPU and at most 2^30 keys\n", size, ngpu);
        return 2;
    }
    unsigned n = (unsigned)size, chunk = n / ngpu;
    std::vector<unsigned> keys(n), got(n);
    uint32_t x = 0x9e3779b9u;                       /* xorshift32 keys */
    for (unsigned i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        keys[i] = x;
    }

    std::vector<unsigned *> cur(ngpu), alt(ngpu);
    for (int d = 0; d < ngpu; d++) {
        CHECK(hipSetDevice(d));
        for (int p = 1; p < ngpu; p <<= 1) {        /* peers this device reads */
            int can = 0;
            CHECK(hipDeviceCanAccessPeer(&can, d, d ^ p));
            if (!can) {
                fprintf(stderr, "bitonic: device %d cannot access device %d\n", d, d ^ p);
                return 2;
            }
            hipError_t e = hipDeviceEnablePeerAccess(d ^ p, 0);
            if (e != hipSuccess && e != hipErrorPeerAccessAlreadyEnabled)
                CHECK(e);
        }
        CHECK(hipMalloc(&cur[d], chunk * sizeof(unsigned)));
        if (ngpu > 1)
            CHECK(hipMalloc(&alt[d], chunk * sizeof(unsigned)));
        CHECK(hipMemcpy(cur[d], keys.data() + (size_t)d * chunk, chunk * sizeof(unsigned),
                        hipMemcpyHostToDevice));
    }
    unsigned passes = 0;
    for (unsigned k = 2; k <= n; k <<= 1) {
        for (unsigned j = k >> 1; j > 0; j >>= 1, passes++) {
            if (j < chunk) {                        /* local pass on every device */
                unsigned npairs = chunk / 2;
                for (int d = 0; d < ngpu; d++) {
                    CHECK(hipSetDevice(d));
                    hipLaunchKernelGGL(bitonic_pass, dim3((npairs + BLOCK - 1) / BLOCK), dim3(BLOCK),
                                       0, 0, cur[d], npairs, j, k, d * chunk);
                    CHECK(hipGetLastError());
                }
                continue;
            }
            /* cross-device pass: the partner's keys must be final, and
             * nobody may still read the buffers we are about to write */
            for (int d = 0; d < ngpu; d++) {
                CHECK(hipSetDevice(d));
                CHECK(hipDeviceSynchronize());
            }
            int pd = (int)(j / chunk);
            for (int d = 0; d < ngpu; d++) {
                CHECK(hipSetDevice(d));
                hipLaunchKernelGGL(bitonic_pass_peer, dim3((chunk + BLOCK - 1) / BLOCK), dim3(BLOCK),
                                   0, 0, cur[d], cur[d ^ pd], alt[d], chunk, j, k, d * chunk);
                CHECK(hipGetLastError());
            }
            std::swap(cur, alt);
        }
    }
    for (int d = 0; d < ngpu; d++) {
        CHECK(hipSetDevice(d));
        CHECK(hipDeviceSynchronize());
        CHECK(hipMemcpy(got.data() + (size_t)d * chunk, cur[d], chunk * sizeof(unsigned),
                        hipMemcpyDeviceToHost));
    }
    for (int d = 0; d < ngpu; d++) {
        CHECK(hipSetDevice(d));
        CHECK(hipFree(cur[d]));
        if (ngpu > 1)
            CHECK(hipFree(alt[d]));
    }

    std::sort(keys.begin(), keys.end());            /* host reference */
    size_t bad = 0;
    for (unsigned i = 0; i < n; i++)
        if (got[i] != keys[i] && bad++ < 5)
            fprintf(stderr, "bitonic: key %u: got %u, want %u\n", i, got[i], keys[i]);
    printf("bitonic keys=%u gpus=%d passes=%u: %s\n", n, ngpu, passes, bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}
