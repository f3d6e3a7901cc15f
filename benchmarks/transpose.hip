// transpose: out = in^T for a W x H float matrix (MGMark MT), through 32x32 LDS
// tiles (padded to 33 columns against bank conflicts), 2-D grid of 32x8 workgroups.
//
// Usage: transpose [W [H]] [--small] [--size N] [--gpus N]
//   W H        matrix width and height (H defaults to W)
//   --size N   an N x N matrix
//   --small    256 x 256 per GPU requested (tests)
//   --gpus N   use N devices (fails when fewer are visible); without it every
//              visible device is used (tests/e2e/run.sh and tools/demo.sh run
//              `gcn3-emu --gpus 4 -- transpose`), at the 1-GPU default size
//   default: 2048 x 2048 (MGSim Table II, 1 GPU); with --gpus N the matrix holds
//   N times the elements (4096 x 4096 for 4 GPUs, Table II's 4-GPU column), as
//   does --small (512 x 512 for --gpus 4).
//
// With several devices (the D-MGPU model, MGSim paper's Scatter pattern) device d
// holds a band of input rows and a band of output rows; its kernel reads its own
// input band and writes each transposed tile straight into the output band of
// the device that owns those output rows (peer access), so most of its stores go
// to other GPUs. The host collects the output bands and checks every element.
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

#define TILE 32
#define ROWS 8
#define MAXDEV 8

/* Where the output rows live: output row r (an input column) is row r - e * band
   of out[e], e = r / band. Passed by value in the kernel arguments. */
struct out_bands {
    float *out[MAXDEV];
    int band;
};

/* in: hd rows of w floats (input rows r0 .. r0 + hd - 1 of the h-row matrix);
   writes out[x][r0 + y] = in[y][x] into the owning device's output band. */
__global__ void transpose(const float *in, out_bands ob, int w, int hd, int r0, int h)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < w && y + j < hd)
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * w + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;   /* column of out: local input row */
    y = blockIdx.x * TILE + threadIdx.y;   /* row of out: input column */
    for (int j = 0; j < TILE; j += ROWS) {
        int r = y + j;
        if (x < hd && r < w) {
            int e = r / ob.band;
            ob.out[e][(size_t)(r - e * ob.band) * h + r0 + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}

static void usage()
{
    fprintf(stderr, "usage: transpose [W [H]] [--small] [--size N] [--gpus N]\n");
}

int main(int argc, char **argv)
{
    int w = -1, h = -1, ndev = 0, npos = 0, small = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--small")) small = 1;
        else if (!strcmp(a, "--size") && v) w = h = atoi(v), i++;
        else if (!strcmp(a, "--gpus") && v) ndev = atoi(v), i++;
        else if (a[0] != '-' && npos == 0) w = h = atoi(a), npos++;
        else if (a[0] != '-' && npos == 1) h = atoi(a), npos++;
        else { usage(); return 2; }
    }
    int visible = 0;
    CHECK(hipGetDeviceCount(&visible));
    int scale = ndev > 0 ? ndev : 1;
    if (ndev <= 0)
        ndev = visible;
    if (ndev > visible || ndev > MAXDEV) {
        fprintf(stderr, "transpose: --gpus %d but only %d device(s) visible (at most %d; run under gcn3-emu --gpus %d)\n",
                ndev, visible, MAXDEV, ndev);
        return 2;
    }
    if (w < 0)   /* Table II: 2048 wide for 1 GPU, N times the elements for --gpus N */
        w = h = (int)std::lround((small ? 256.0 : 2048.0) * std::sqrt((double)scale) / TILE) * TILE;
    if (w < 1 || h < 1 || (long)w * h > (1L << 28)) {
        fprintf(stderr, "transpose: bad size %d x %d\n", w, h);
        return 2;
    }
    std::vector<float> hin((size_t)w * h), hout((size_t)w * h);
    for (size_t i = 0; i < hin.size(); i++)
        hin[i] = (float)(i % 65521) + 0.125f;
    int per = (h + ndev - 1) / ndev;    /* input rows per device */
    out_bands ob;
    memset(&ob, 0, sizeof ob);
    ob.band = (w + ndev - 1) / ndev;    /* output rows per device */
    std::vector<float *> din(ndev);
    for (int d = 0; d < ndev; d++) {
        int r0 = std::min(h, d * per), hd = std::min(h, r0 + per) - r0;
        int o0 = std::min(w, d * ob.band), od = std::min(w, o0 + ob.band) - o0;
        CHECK(hipSetDevice(d));
        for (int e = 0; e < ndev; e++)
            if (e != d) {
                hipError_t pe = hipDeviceEnablePeerAccess(e, 0);
                if (pe != hipSuccess && pe != hipErrorPeerAccessAlreadyEnabled)
                    CHECK(pe);
            }
        (void)hipGetLastError();
        CHECK(hipMalloc(&din[d], (size_t)w * std::max(hd, 1) * sizeof(float)));
        CHECK(hipMalloc(&ob.out[d], (size_t)h * std::max(od, 1) * sizeof(float)));
        CHECK(hipMemcpy(din[d], hin.data() + (size_t)r0 * w, (size_t)w * hd * sizeof(float),
                        hipMemcpyHostToDevice));
    }
    for (int d = 0; d < ndev; d++) {
        int r0 = std::min(h, d * per), hd = std::min(h, r0 + per) - r0;
        if (hd == 0)
            continue;
        CHECK(hipSetDevice(d));
        dim3 block(TILE, ROWS);
        dim3 grid((w + TILE - 1) / TILE, (hd + TILE - 1) / TILE);
        hipLaunchKernelGGL(transpose, grid, block, 0, 0, din[d], ob, w, hd, r0, h);
        CHECK(hipGetLastError());
    }
    for (int d = 0; d < ndev; d++) {
        CHECK(hipSetDevice(d));
        CHECK(hipDeviceSynchronize());
    }
    for (int d = 0; d < ndev; d++) {
        int o0 = std::min(w, d * ob.band), od = std::min(w, o0 + ob.band) - o0;
        CHECK(hipSetDevice(d));
        CHECK(hipMemcpy(hout.data() + (size_t)o0 * h, ob.out[d], (size_t)od * h * sizeof(float),
                        hipMemcpyDeviceToHost));
    }
    for (int d = 0; d < ndev; d++) {
        CHECK(hipSetDevice(d));
        CHECK(hipFree(din[d]));
        CHECK(hipFree(ob.out[d]));
    }
    long bad = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if (hout[(size_t)x * h + y] != hin[(size_t)y * w + x]) {
                if (bad < 5)
                    fprintf(stderr, "mismatch at out[%d][%d]\n", x, y);
                bad++;
            }
    printf("transpose %dx%d devices=%d: %s\n", w, h, ndev, bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}
