// gd: mini-batch gradient descent for linear least squares, the MGMark GD
// workload (MGSim paper, Sec. V-B: data-parallel training, "Gather" pattern).
// Model: D single-precision parameters w; a mini-batch of BATCH samples x_s
// (D features each) with targets y_s; per step
//   r_s = x_s . w - y_s,   g = (1/BATCH) sum_s r_s x_s,   w -= lr * g.
// Kernels per step and device: forward (per-workgroup partial dot products,
// reduced in LDS), residual (sums the partials), backward (this device's
// share of the gradient, one work-item per parameter), update (gathers the
// gradient shares of all devices and updates the device's copy of w).
//
// Usage: gd [--small] [--size D] [--gpus N]
//   D parameters: default 256K per GPU requested (MGSim Table II: 256K on
//   1 GPU, 1M on 4), --small 8K per GPU.
//   With --gpus G (G <= BATCH) each device holds BATCH/G samples (data
//   parallelism) and a full copy of w. After every device has computed its
//   share of the gradient (the host synchronises them), each device's update
//   kernel reads the shares of all other devices directly through peer access
//   (remote reads: D floats from each peer per step) and sums them in device
//   order, so every device computes the same w.
#include <hip/hip_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    fprintf(stderr, "gd: %s:%d: %s: %s\n", __FILE__, __LINE__, #x, hipGetErrorString(e_)); \
    exit(2); } } while (0)

#define BLOCK 256
#define BATCH 8            /* samples per step, over all devices */
#define STEPS 2
#define MAXGPU BATCH

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
        fprintf(stderr, "gd: %d GPU(s) requested but %d HIP device(s) visible%s%s\n", *gpus,
                e == hipSuccess ? ndev : 0, e == hipSuccess ? "" : ": ",
                e == hipSuccess ? "" : hipGetErrorString(e));
        exit(2);
    }
    *size = sz != -1 ? sz : (use_small ? small : base) * *gpus;
}

/* ---- device code --------------------------------------------------------- */
/* Grid G: workgroup b sums x_s[j] * w[j] over its share of j (stride
 * G * BLOCK) for each of this device's ns samples (w is read once per j),
 * reduces in LDS and writes partial[s * G + b]. */
__global__ void forward(const float *x, const float *w, float *partial, unsigned d, unsigned ns)
{
    __shared__ float buf[BATCH][BLOCK];
    unsigned g = gridDim.x, t = threadIdx.x;
    float acc[BATCH];
#pragma unroll
    for (unsigned s = 0; s < BATCH; s++)
        acc[s] = 0.0f;
    for (unsigned j = blockIdx.x * BLOCK + t; j < d; j += g * BLOCK) {
        float wj = w[j];
#pragma unroll
        for (unsigned s = 0; s < BATCH; s++)
            if (s < ns)
                acc[s] = fmaf(x[(size_t)s * d + j], wj, acc[s]);
    }
#pragma unroll
    for (unsigned s = 0; s < BATCH; s++)
        if (s < ns)
            buf[s][t] = acc[s];
    __syncthreads();
    for (unsigned k = BLOCK / 2; k > 0; k >>= 1) {
        if (t < k) {
#pragma unroll
            for (unsigned s = 0; s < BATCH; s++)
                if (s < ns)
                    buf[s][t] += buf[s][t + k];
        }
        __syncthreads();
    }
    if (t < ns)
        partial[t * g + blockIdx.x] = buf[t][0];
}

/* One workgroup: r[s] = sum of the G partials of sample s - y[s]. */
__global__ void residual(const float *partial, const float *y, float *r, unsigned g, unsigned ns)
{
    unsigned s = threadIdx.x;
    if (s >= ns)
        return;
    float sum = 0.0f;
    for (unsigned b = 0; b < g; b++)
        sum += partial[s * g + b];
    r[s] = sum - y[s];
}

/* gshare[j] = scale * sum over this device's samples of r[s] * x_s[j]. */
__global__ void backward(const float *x, const float *r, float *gshare, unsigned d, unsigned ns,
                         float scale)
{
    for (unsigned j = blockIdx.x * blockDim.x + threadIdx.x; j < d; j += gridDim.x * blockDim.x) {
        float acc = 0.0f;
        for (unsigned s = 0; s < ns; s++)
            acc = fmaf(r[s], x[(size_t)s * d + j], acc);
        gshare[j] = acc * scale;
    }
}

struct shares { const float *p[MAXGPU]; };  /* every device's gradient share */

/* w[j] -= lr * (sum over devices of their gradient share): the shares of the
 * other devices are read from their memory (remote reads). */
__global__ void update(float *w, shares g, unsigned ngpu, unsigned d, float lr)
{
    for (unsigned j = blockIdx.x * blockDim.x + threadIdx.x; j < d; j += gridDim.x * blockDim.x) {
        float sum = 0.0f;
        for (unsigned e = 0; e < ngpu; e++)
            sum += g.p[e][j];
        w[j] -= lr * sum;
    }
}

/* ---- host ---------------------------------------------------------------- */
static void sync_all(int ngpu)
{
    for (int d = 0; d < ngpu; d++) {
        CHECK(hipSetDevice(d));
        CHECK(hipDeviceSynchronize());
    }
}

int main(int argc, char **argv)
{
    long size;
    int ngpu;
    parse_args(argc, argv, 256 * 1024, 8 * 1024, &size, &ngpu);
    if (ngpu > MAXGPU || size > (1L << 28)) {
        fprintf(stderr, "gd: at most %d GPUs (one sample each) and 2^28 parameters\n", MAXGPU);
        return 2;
    }
    unsigned d = (unsigned)size;
    std::vector<float> x((size_t)BATCH * d), y(BATCH), wtrue(d);
    uint32_t rs = 0xdeadbeefu;                      /* xorshift32 values in [-1, 1) */
    auto rnd = [&rs]() { rs ^= rs << 13, rs ^= rs >> 17, rs ^= rs << 5;
                         return (float)(int32_t)rs * (1.0f / 2147483648.0f); };
    for (unsigned j = 0; j < d; j++)
        wtrue[j] = rnd();
    for (size_t i = 0; i < x.size(); i++)
        x[i] = rnd();
    for (int s = 0; s < BATCH; s++) {
        double dot = 0;
        for (unsigned j = 0; j < d; j++)
            dot += (double)x[(size_t)s * d + j] * wtrue[j];
        y[s] = (float)dot + 0.25f * rnd();
    }
    /* For BATCH << d the batch Hessian X^T X / BATCH has its nonzero
     * eigenvalues near d / (3 BATCH) (features uniform in [-1, 1)), so
     * lr = BATCH / d shrinks the residuals by about 1/3 per step. */
    float lr = (float)BATCH / (float)d, scale = 1.0f / BATCH;
    unsigned gfw = std::max(1u, std::min(256u, d / (BLOCK * 8)));     /* forward workgroups */
    unsigned gel = std::max(1u, std::min(1024u, (d + BLOCK - 1) / BLOCK)); /* backward / update grid */

    int per = (BATCH + ngpu - 1) / ngpu;
    std::vector<int> s0(ngpu), ns(ngpu);
    std::vector<float *> dx(ngpu), dy(ngpu), dw(ngpu), dg(ngpu), dpart(ngpu), dr(ngpu);
    shares sh;
    memset(&sh, 0, sizeof sh);
    for (int dev = 0; dev < ngpu; dev++) {
        s0[dev] = std::min(BATCH, dev * per), ns[dev] = std::min(BATCH, s0[dev] + per) - s0[dev];
        CHECK(hipSetDevice(dev));
        for (int p = 0; p < ngpu; p++) {
            if (p == dev)
                continue;
            int can = 0;
            CHECK(hipDeviceCanAccessPeer(&can, dev, p));
            if (!can) {
                fprintf(stderr, "gd: device %d cannot access device %d\n", dev, p);
                return 2;
            }
            hipError_t e = hipDeviceEnablePeerAccess(p, 0);
            if (e != hipSuccess && e != hipErrorPeerAccessAlreadyEnabled)
                CHECK(e);
        }
        size_t nsb = std::max(ns[dev], 1);
        CHECK(hipMalloc(&dx[dev], nsb * d * sizeof(float)));
        CHECK(hipMalloc(&dy[dev], nsb * sizeof(float)));
        CHECK(hipMalloc(&dr[dev], nsb * sizeof(float)));
        CHECK(hipMalloc(&dpart[dev], nsb * gfw * sizeof(float)));
        CHECK(hipMalloc(&dw[dev], (size_t)d * sizeof(float)));
        CHECK(hipMalloc(&dg[dev], (size_t)d * sizeof(float)));
        CHECK(hipMemcpy(dx[dev], x.data() + (size_t)s0[dev] * d, (size_t)ns[dev] * d * sizeof(float),
                        hipMemcpyHostToDevice));
        CHECK(hipMemcpy(dy[dev], y.data() + s0[dev], ns[dev] * sizeof(float), hipMemcpyHostToDevice));
        CHECK(hipMemset(dw[dev], 0, (size_t)d * sizeof(float)));
        CHECK(hipMemset(dg[dev], 0, (size_t)d * sizeof(float)));   /* a device without samples */
        sh.p[dev] = dg[dev];
    }

    std::vector<float> r(BATCH), wgot(d), wdev(d);
    std::vector<double> rref(BATCH), wref(d, 0.0), gref(d);
    size_t bad = 0;
    double loss0 = 0, loss = 0;
    for (int step = 0; step < STEPS; step++) {
        sync_all(ngpu);     /* nobody still reads the gradient shares we overwrite */
        for (int dev = 0; dev < ngpu; dev++) {
            if (ns[dev] == 0)
                continue;
            CHECK(hipSetDevice(dev));
            hipLaunchKernelGGL(forward, dim3(gfw), dim3(BLOCK), 0, 0, dx[dev], dw[dev], dpart[dev], d,
                               (unsigned)ns[dev]);
            hipLaunchKernelGGL(residual, dim3(1), dim3(64), 0, 0, dpart[dev], dy[dev], dr[dev], gfw,
                               (unsigned)ns[dev]);
            hipLaunchKernelGGL(backward, dim3(gel), dim3(BLOCK), 0, 0, dx[dev], dr[dev], dg[dev], d,
                               (unsigned)ns[dev], scale);
            CHECK(hipGetLastError());
        }
        sync_all(ngpu);     /* every gradient share is complete */
        for (int dev = 0; dev < ngpu; dev++) {
            CHECK(hipSetDevice(dev));
            hipLaunchKernelGGL(update, dim3(gel), dim3(BLOCK), 0, 0, dw[dev], sh, (unsigned)ngpu, d, lr);
            CHECK(hipGetLastError());
            CHECK(hipMemcpy(r.data() + s0[dev], dr[dev], ns[dev] * sizeof(float), hipMemcpyDeviceToHost));
        }
        /* host reference step in double */
        double l = 0;
        std::fill(gref.begin(), gref.end(), 0.0);
        for (int s = 0; s < BATCH; s++) {
            double dot = 0;
            const float *xs = x.data() + (size_t)s * d;
            for (unsigned j = 0; j < d; j++)
                dot += xs[j] * wref[j];
            rref[s] = dot - y[s];
            l += rref[s] * rref[s];
            for (unsigned j = 0; j < d; j++)
                gref[j] += rref[s] * xs[j];
        }
        for (unsigned j = 0; j < d; j++)
            wref[j] -= (double)lr * gref[j] * scale;
        loss = l / (2 * BATCH);
        if (step == 0)
            loss0 = loss;
        double rmax = 0;
        for (int s = 0; s < BATCH; s++)
            rmax = std::max(rmax, fabs(rref[s]));
        for (int s = 0; s < BATCH; s++)
            if (!(fabs(r[s] - rref[s]) <= 1e-3 * rmax) && bad++ < 5)
                fprintf(stderr, "gd: step %d: residual %d = %.7g, want %.7g\n", step, s, r[s], rref[s]);
    }
    sync_all(ngpu);
    double wmax = 0;
    for (unsigned j = 0; j < d; j++)
        wmax = std::max(wmax, fabs(wref[j]));
    for (int dev = 0; dev < ngpu; dev++) {
        CHECK(hipSetDevice(dev));
        CHECK(hipMemcpy(dev ? wdev.data() : wgot.data(), dw[dev], (size_t)d * sizeof(float),
                        hipMemcpyDeviceToHost));
        if (dev && memcmp(wdev.data(), wgot.data(), (size_t)d * sizeof(float)) && bad++ < 5)
            fprintf(stderr, "gd: device %d's parameters differ from device 0's\n", dev);
        CHECK(hipFree(dx[dev]));
        CHECK(hipFree(dy[dev]));
        CHECK(hipFree(dr[dev]));
        CHECK(hipFree(dpart[dev]));
        CHECK(hipFree(dw[dev]));
        CHECK(hipFree(dg[dev]));
    }
    for (unsigned j = 0; j < d; j++)
        if (!(fabs(wgot[j] - wref[j]) <= 1e-3 * wmax) && bad++ < 5)
            fprintf(stderr, "gd: w[%u] = %.7g, want %.7g\n", j, wgot[j], wref[j]);
    printf("gd params=%u batch=%d steps=%d gpus=%d loss %.4g -> %.4g: %s\n", d, BATCH, STEPS, ngpu,
           loss0, loss, bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}
