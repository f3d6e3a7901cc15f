// km: k-means clustering (MGMark KM, after HeteroMark's KMeans): NPOINTS points
// of NFEAT float features, NCLUST clusters, a fixed number of iterations.
// Per iteration, on every device:
//   km_assign   one work-item per point: nearest centroid (squared distance)
//   km_partial  per chunk of 4096 points and per feature: per-cluster sums
//               and counts of the chunk's points (LDS tree reduction)
// then the global step on device 0: every other device's partial sums are
// copied to device 0 with hipMemcpyPeer, km_update averages them into the new
// centroids, which hipMemcpyPeer broadcasts back. The points never move: the
// Partitioned Data pattern of the MGSim paper (only the small partial sums and
// centroids cross between GPUs).
//
// Usage: km [--small] [--size NPOINTS] [--gpus N] [--features F] [--clusters K] [--iters I]
//   defaults: 32768 points per GPU requested x 32 features (MGSim Table II: 32K
//   points on 1 GPU, 128K on 4), 5 clusters, 5 iterations; --small: 4096 points
//   per GPU x 16 features, 3 iterations. NPOINTS is the total over all GPUs.
//   --gpus N (default 1) splits the points over N devices; fewer visible devices
//   is an error.
// Points are laid out feature-major per device (x[f * n + p]), so the lanes of a
// wavefront read consecutive addresses. The data are well separated clusters, so
// the host reference (double precision) must find exactly the same memberships.
#include <hip/hip_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, hipGetErrorString(e_)); \
    return 2; } } while (0)

#define KMAX 16          /* most clusters the LDS reduction holds */
#define WG 256           /* work-items per workgroup */
#define PER_THREAD 16    /* points per work-item in km_partial */
#define CHUNK (WG * PER_THREAD)

__global__ void km_assign(const float *x, int n, int nf, const float *cent, int k, int *member)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n)
        return;
    float best = 3.4e38f;
    int bi = 0;
    for (int c = 0; c < k; c++) {
        float d = 0.0f;
        for (int f = 0; f < nf; f++) {
            float t = x[(size_t)f * n + p] - cent[c * nf + f];
            d += t * t;
        }
        if (d < best) {
            best = d;
            bi = c;
        }
    }
    member[p] = bi;
}

/* grid (chunks, features): workgroup (c, f) sums feature f of the points of
   chunk c per cluster; psum[(c * k + j) * nf + f], pcnt[c * k + j] (f == 0). */
__global__ void km_partial(const float *x, const int *member, int n, int nf, int k,
                           float *psum, int *pcnt)
{
    __shared__ float acc[KMAX][WG];
    __shared__ int cnt[KMAX][WG];
    int t = threadIdx.x, c = blockIdx.x, f = blockIdx.y;
    for (int j = 0; j < k; j++) {
        acc[j][t] = 0.0f;
        cnt[j][t] = 0;
    }
    for (int i = 0; i < PER_THREAD; i++) {
        int p = c * CHUNK + i * WG + t;
        if (p < n) {
            int m = member[p];
            acc[m][t] += x[(size_t)f * n + p];
            cnt[m][t] += 1;
        }
    }
    __syncthreads();
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (t < s)
            for (int j = 0; j < k; j++) {
                acc[j][t] += acc[j][t + s];
                cnt[j][t] += cnt[j][t + s];
            }
        __syncthreads();
    }
    if (t < k) {
        psum[((size_t)c * k + t) * nf + f] = acc[t][0];
        if (f == 0)
            pcnt[c * k + t] = cnt[t][0];
    }
}

/* one work-item per (cluster, feature): new centroid = mean over all chunks of
   all devices; a cluster without points keeps its centroid. */
__global__ void km_update(const float *psum, const int *pcnt, int chunks, int nf, int k, float *cent)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k * nf)
        return;
    int j = i / nf, f = i % nf;
    float s = 0.0f;
    int m = 0;
    for (int c = 0; c < chunks; c++) {
        s += psum[((size_t)c * k + j) * nf + f];
        m += pcnt[c * k + j];
    }
    if (m > 0)
        cent[i] = s / (float)m;
}

static unsigned rng_state = 12345u;
static unsigned rnd() { rng_state = rng_state * 1664525u + 1013904223u; return rng_state >> 8; }
static float frand(float lo, float hi) { return lo + (hi - lo) * (float)(rnd() & 0xffff) / 65535.0f; }

static void usage()
{
    fprintf(stderr, "usage: km [--small] [--size NPOINTS] [--gpus N] [--features F] [--clusters K] [--iters I]\n");
}

int main(int argc, char **argv)
{
    long n = -1;
    int nf = -1, k = 5, iters = -1, ndev = 0, small = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--small")) small = 1;
        else if (!strcmp(a, "--size") && v) n = atol(v), i++;
        else if (!strcmp(a, "--gpus") && v) ndev = atoi(v), i++;
        else if (!strcmp(a, "--features") && v) nf = atoi(v), i++;
        else if (!strcmp(a, "--clusters") && v) k = atoi(v), i++;
        else if (!strcmp(a, "--iters") && v) iters = atoi(v), i++;
        else { usage(); return 2; }
    }
    int visible = 0;
    CHECK(hipGetDeviceCount(&visible));
    if (ndev <= 0)
        ndev = 1;
    if (ndev > visible) {
        fprintf(stderr, "km: --gpus %d but only %d device(s) visible (run under gcn3-emu --gpus %d)\n",
                ndev, visible, ndev);
        return 2;
    }
    if (nf < 0) nf = small ? 16 : 32;
    if (iters < 0) iters = small ? 3 : 5;
    if (n < 0) n = (small ? 4096L : 32768L) * ndev;
    if (n < 1 || nf < 1 || k < 1 || k > KMAX || iters < 1 || n > (1L << 28)) {
        fprintf(stderr, "km: bad size: %ld points, %d features, %d clusters (1..%d), %d iterations\n",
                n, nf, k, KMAX, iters);
        return 2;
    }

    /* Well separated clusters: centres in [0, 100)^nf, points within +-1. */
    std::vector<float> centre((size_t)k * nf), x((size_t)n * nf); /* x point-major on the host */
    for (auto &c : centre) c = frand(0.0f, 100.0f);
    for (long p = 0; p < n; p++) {
        /* the first k points lie in k different clusters (they seed the
           centroids: no two centroids start in one cluster, which would leave
           points nearly equidistant from both and the float / double
           comparison with the host reference to chance); the rest at random */
        int j = p < k ? (int)p : (int)(rnd() % k);
        for (int f = 0; f < nf; f++)
            x[(size_t)p * nf + f] = centre[(size_t)j * nf + f] + frand(-1.0f, 1.0f);
    }
    /* Initial centroids: the first k points. */
    std::vector<float> cent0((size_t)k * nf);
    for (int j = 0; j < k; j++)
        for (int f = 0; f < nf; f++)
            cent0[(size_t)j * nf + f] = x[(size_t)(j % n) * nf + f];

    long per = (n + ndev - 1) / ndev;
    std::vector<long> lo(ndev), cnt(ndev);
    std::vector<int> chunks(ndev), coff(ndev);
    int ctot = 0;
    for (int d = 0; d < ndev; d++) {
        lo[d] = std::min(n, d * per);
        cnt[d] = std::min(n, lo[d] + per) - lo[d];
        chunks[d] = (int)((cnt[d] + CHUNK - 1) / CHUNK);
        coff[d] = ctot;
        ctot += chunks[d];
    }
    std::vector<float *> dx(ndev), dcent(ndev), dpsum(ndev);
    std::vector<int *> dmem(ndev), dpcnt(ndev);
    std::vector<float> xd;
    for (int d = 0; d < ndev; d++) {
        CHECK(hipSetDevice(d));
        size_t m = (size_t)std::max(cnt[d], 1L);
        CHECK(hipMalloc(&dx[d], m * nf * sizeof(float)));
        CHECK(hipMalloc(&dmem[d], m * sizeof(int)));
        CHECK(hipMalloc(&dcent[d], (size_t)k * nf * sizeof(float)));
        /* device 0 holds the partial sums of every device (the gather buffer) */
        int nc = d == 0 ? std::max(ctot, 1) : std::max(chunks[d], 1);
        CHECK(hipMalloc(&dpsum[d], (size_t)nc * k * nf * sizeof(float)));
        CHECK(hipMalloc(&dpcnt[d], (size_t)nc * k * sizeof(int)));
        xd.assign((size_t)cnt[d] * nf, 0.0f);
        for (long p = 0; p < cnt[d]; p++)
            for (int f = 0; f < nf; f++)
                xd[(size_t)f * cnt[d] + p] = x[(size_t)(lo[d] + p) * nf + f];
        CHECK(hipMemcpy(dx[d], xd.data(), xd.size() * sizeof(float), hipMemcpyHostToDevice));
        CHECK(hipMemcpy(dcent[d], cent0.data(), cent0.size() * sizeof(float), hipMemcpyHostToDevice));
    }

    for (int it = 0; it < iters; it++) {
        /* Each kernel on every device before the next one: the devices work
           side by side (the kernels of one device run in launch order). */
        for (int d = 0; d < ndev; d++) {
            if (cnt[d] == 0)
                continue;
            CHECK(hipSetDevice(d));
            hipLaunchKernelGGL(km_assign, dim3((unsigned)((cnt[d] + WG - 1) / WG)), dim3(WG), 0, 0,
                               dx[d], (int)cnt[d], nf, dcent[d], k, dmem[d]);
            CHECK(hipGetLastError());
        }
        for (int d = 0; d < ndev; d++) {
            if (cnt[d] == 0)
                continue;
            CHECK(hipSetDevice(d));
            hipLaunchKernelGGL(km_partial, dim3(chunks[d], nf), dim3(WG), 0, 0,
                               dx[d], dmem[d], (int)cnt[d], nf, k, dpsum[d], dpcnt[d]);
            CHECK(hipGetLastError());
        }
        for (int d = 0; d < ndev; d++) {
            CHECK(hipSetDevice(d));
            CHECK(hipDeviceSynchronize());
        }
        /* gather: every device's partial sums into device 0's buffer */
        for (int d = 1; d < ndev; d++) {
            if (chunks[d] == 0)
                continue;
            CHECK(hipMemcpyPeer(dpsum[0] + (size_t)coff[d] * k * nf, 0, dpsum[d], d,
                                (size_t)chunks[d] * k * nf * sizeof(float)));
            CHECK(hipMemcpyPeer(dpcnt[0] + (size_t)coff[d] * k, 0, dpcnt[d], d,
                                (size_t)chunks[d] * k * sizeof(int)));
        }
        CHECK(hipSetDevice(0));
        hipLaunchKernelGGL(km_update, dim3((k * nf + WG - 1) / WG), dim3(WG), 0, 0,
                           dpsum[0], dpcnt[0], ctot, nf, k, dcent[0]);
        CHECK(hipGetLastError());
        CHECK(hipDeviceSynchronize());
        /* broadcast the new centroids */
        for (int d = 1; d < ndev; d++)
            CHECK(hipMemcpyPeer(dcent[d], d, dcent[0], 0, (size_t)k * nf * sizeof(float)));
    }

    std::vector<int> member(n);
    std::vector<float> cent((size_t)k * nf);
    for (int d = 0; d < ndev; d++) {
        CHECK(hipSetDevice(d));
        CHECK(hipMemcpy(member.data() + lo[d], dmem[d], (size_t)cnt[d] * sizeof(int), hipMemcpyDeviceToHost));
    }
    CHECK(hipSetDevice(0));
    CHECK(hipMemcpy(cent.data(), dcent[0], cent.size() * sizeof(float), hipMemcpyDeviceToHost));
    for (int d = 0; d < ndev; d++) {
        CHECK(hipSetDevice(d));
        CHECK(hipFree(dx[d]));
        CHECK(hipFree(dmem[d]));
        CHECK(hipFree(dcent[d]));
        CHECK(hipFree(dpsum[d]));
        CHECK(hipFree(dpcnt[d]));
    }

    /* Host reference, double precision, same algorithm. */
    std::vector<double> rc(cent0.begin(), cent0.end());
    std::vector<int> rm(n);
    for (int it = 0; it < iters; it++) {
        for (long p = 0; p < n; p++) {
            double best = 1e300;
            int bi = 0;
            for (int j = 0; j < k; j++) {
                double s = 0;
                for (int f = 0; f < nf; f++) {
                    double t = x[(size_t)p * nf + f] - rc[(size_t)j * nf + f];
                    s += t * t;
                }
                if (s < best) best = s, bi = j;
            }
            rm[p] = bi;
        }
        std::vector<double> sum((size_t)k * nf, 0.0);
        std::vector<long> m(k, 0);
        for (long p = 0; p < n; p++) {
            m[rm[p]]++;
            for (int f = 0; f < nf; f++)
                sum[(size_t)rm[p] * nf + f] += x[(size_t)p * nf + f];
        }
        for (int j = 0; j < k; j++)
            if (m[j])
                for (int f = 0; f < nf; f++)
                    rc[(size_t)j * nf + f] = sum[(size_t)j * nf + f] / m[j];
    }
    long bad = 0;
    for (long p = 0; p < n; p++)
        if (member[p] != rm[p]) {
            if (bad < 5)
                fprintf(stderr, "membership mismatch at point %ld: got %d want %d\n", p, member[p], rm[p]);
            bad++;
        }
    for (size_t i = 0; i < cent.size(); i++)
        if (std::fabs(cent[i] - rc[i]) > 1e-3 * std::max(1.0, std::fabs(rc[i]))) {
            if (bad < 5)
                fprintf(stderr, "centroid mismatch at [%zu][%zu]: got %.6f want %.6f\n",
                        i / nf, i % nf, cent[i], rc[i]);
            bad++;
        }
    printf("km %ld points x %d features, %d clusters, %d iterations devices=%d: %s\n",
           n, nf, k, iters, ndev, bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}
