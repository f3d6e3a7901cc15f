// fir: finite impulse response filter, the MGMark/HeteroMark FIR workload
// (MGSim paper, Sec. V-B: "Adjacent Access" pattern):
//   out[i] = sum over t < TAPS of coeff[t] * in[i - t],   in[i < 0] = 0.
// One work-item per output sample; single-precision samples.
//
// Usage: fir [--small] [--size N] [--gpus N]
//   N samples: default 64K per GPU requested (MGSim Table II: 64K on 1 GPU,
//   256K on 4), --small 4K per GPU.
//   With --gpus G device d holds input and output samples [d*N/G, (d+1)*N/G)
//   in its own memory; its first TAPS-1 outputs need the last input samples
//   of device d-1, which the kernel reads directly through peer access
//   (remote reads), as in the paper's partitioned FIR.
#include <hip/hip_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    fprintf(stderr, "fir: %s:%d: %s: %s\n", __FILE__, __LINE__, #x, hipGetErrorString(e_)); \
    exit(2); } } while (0)

#define BLOCK 256
#define TAPS 16

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
        fprintf(stderr, "fir: %d GPU(s) requested but %d HIP device(s) visible%s%s\n", *gpus,
                e == hipSuccess ? ndev : 0, e == hipSuccess ? "" : ": ",
                e == hipSuccess ? "" : hipGetErrorString(e));
        exit(2);
    }
    *size = sz != -1 ? sz : (use_small ? small : base) * *gpus;
}

/* ---- device code --------------------------------------------------------- */
/* in/out: this device's n samples; prev: the previous device's input (its
 * last TAPS-1 samples end at prev[prev_n - 1]), or NULL on the first device. */
__global__ void fir(const float *in, const float *prev, unsigned prev_n, float *out,
                    const float *coeff, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float acc = 0.0f;
#pragma unroll
    for (int t = 0; t < TAPS; t++) {
        int s = (int)i - t;
        float v;
        if (s >= 0)
            v = in[s];
        else if (prev)
            v = prev[(int)prev_n + s];          /* remote: the neighbour's memory */
        else
            v = 0.0f;
        acc = fmaf(coeff[t], v, acc);
    }
    out[i] = acc;
}

/* ---- host ---------------------------------------------------------------- */
int main(int argc, char **argv)
{
    long size;
    int ngpu;
    parse_args(argc, argv, 64 * 1024, 4 * 1024, &size, &ngpu);
    size_t n = (size_t)size, per = (n + ngpu - 1) / ngpu;
    if (n > 0x7fffffffu || (ngpu > 1 && per < TAPS - 1)) {
        fprintf(stderr, "fir: %zu samples on %d GPUs: need 1..2^31-1 samples and at least %d per GPU\n",
                n, ngpu, TAPS - 1);
        return 2;
    }
    std::vector<float> in(n), out(n), coeff(TAPS);
    uint32_t x = 0x12345678u;                       /* xorshift32 signal in [-1, 1) */
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        in[i] = (float)(int32_t)x * (1.0f / 2147483648.0f);
    }
    for (int t = 0; t < TAPS; t++)                  /* a windowed low-pass, sum 1 */
        coeff[t] = (float)(0.54 - 0.46 * cos(2 * M_PI * t / (TAPS - 1))) / (0.54 * (TAPS - 1) + 1.0f);

    std::vector<float *> din(ngpu), dout(ngpu), dcoeff(ngpu);
    std::vector<size_t> lo(ngpu), cnt(ngpu);
    for (int d = 0; d < ngpu; d++) {
        lo[d] = std::min(n, d * per), cnt[d] = std::min(n, lo[d] + per) - lo[d];
        CHECK(hipSetDevice(d));
        if (d > 0) {
            int can = 0;
            CHECK(hipDeviceCanAccessPeer(&can, d, d - 1));
            if (!can) {
                fprintf(stderr, "fir: device %d cannot access device %d\n", d, d - 1);
                return 2;
            }
            hipError_t e = hipDeviceEnablePeerAccess(d - 1, 0);
            if (e != hipSuccess && e != hipErrorPeerAccessAlreadyEnabled)
                CHECK(e);
        }
        CHECK(hipMalloc(&din[d], std::max<size_t>(cnt[d], 1) * sizeof(float)));
        CHECK(hipMalloc(&dout[d], std::max<size_t>(cnt[d], 1) * sizeof(float)));
        CHECK(hipMalloc(&dcoeff[d], TAPS * sizeof(float)));
        CHECK(hipMemcpy(din[d], in.data() + lo[d], cnt[d] * sizeof(float), hipMemcpyHostToDevice));
        CHECK(hipMemcpy(dcoeff[d], coeff.data(), TAPS * sizeof(float), hipMemcpyHostToDevice));
    }
    /* All inputs are in place before any kernel reads its neighbour's. */
    for (int d = 0; d < ngpu; d++) {
        if (cnt[d] == 0)
            continue;
        CHECK(hipSetDevice(d));
        const float *prev = d > 0 && cnt[d - 1] ? din[d - 1] : NULL;
        hipLaunchKernelGGL(fir, dim3((unsigned)((cnt[d] + BLOCK - 1) / BLOCK)), dim3(BLOCK), 0, 0,
                           din[d], prev, d > 0 ? (unsigned)cnt[d - 1] : 0u, dout[d], dcoeff[d],
                           (unsigned)cnt[d]);
        CHECK(hipGetLastError());
    }
    for (int d = 0; d < ngpu; d++) {
        CHECK(hipSetDevice(d));
        CHECK(hipDeviceSynchronize());
        CHECK(hipMemcpy(out.data() + lo[d], dout[d], cnt[d] * sizeof(float), hipMemcpyDeviceToHost));
    }
    for (int d = 0; d < ngpu; d++) {
        CHECK(hipSetDevice(d));
        CHECK(hipFree(din[d]));
        CHECK(hipFree(dout[d]));
        CHECK(hipFree(dcoeff[d]));
    }

    /* Host reference in double: |error| of the float sum of TAPS products
     * of magnitude <= 1 stays far below 1e-5. */
    size_t bad = 0;
    double maxerr = 0;
    for (size_t i = 0; i < n; i++) {
        double want = 0;
        for (int t = 0; t < TAPS && (size_t)t <= i; t++)
            want += (double)coeff[t] * in[i - t];
        double err = fabs(out[i] - want);
        maxerr = std::max(maxerr, err);
        if (!(err <= 1e-5) && bad++ < 5)
            fprintf(stderr, "fir: out[%zu] = %.8g, want %.8g\n", i, out[i], want);
    }
    printf("fir samples=%zu taps=%d gpus=%d max_err=%.2g: %s\n", n, TAPS, ngpu, maxerr,
           bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}
