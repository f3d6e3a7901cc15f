// conv: simple 2-D convolution (MGMark SC, after the AMD APP SDK's
// SimpleConvolution): out[y][x] = sum over i, j of mask[i][j] * in[y+i-r][x+j-r]
// for an M x M mask (r = M / 2), zero outside the image. Workgroups of 16 x 16
// work-items stage a (16 + 2r)^2 input tile and the mask in LDS.
//
// Usage: conv [--small] [--size N] [--gpus N] [--mask M]
//   --size N   an N x N image          --mask M   odd mask width, 1..9 (default 3)
//   --small    256 x 256 per GPU       --gpus N   split the rows over N devices
//              (tests)                            (default 1; fewer visible is an error)
//   default: 1024 x 1024 (MGSim Table II, 1 GPU); with --gpus N the image holds N
//   times the pixels (2048 x 2048 for 4 GPUs, Table II's 4-GPU column), as does
//   --small (512 x 512 for 4 GPUs).
//
// With several devices (D-MGPU model, the paper's Adjacent Access pattern) device d
// holds a band of image rows and computes the same band of output rows; the r
// rows above and below its band are read straight from the neighbouring devices'
// input bands (peer access). Pixel values and mask weights are small integers,
// so every sum is exact in float and the host reference must match bit for bit.
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

#define BS 16            /* workgroup is BS x BS work-items, one output pixel each */
#define MAXR 4           /* largest mask radius: 9 x 9 */
#define MAXDEV 8
#define TW (BS + 2 * MAXR)

/* Where the image rows live: row y is row y - e * band of in[e], e = y / band. */
struct in_bands {
    const float *in[MAXDEV];
    int band;
};

/* Output rows r0 .. r0 + hd - 1 of a w x h image into out (hd rows of w). */
__global__ void conv(in_bands ib, const float *mask, int mw, float *out, int w, int h, int r0, int hd)
{
    __shared__ float tile[TW][TW + 1];
    __shared__ float m[(2 * MAXR + 1) * (2 * MAXR + 1)];
    int r = mw / 2, tw = BS + 2 * r;
    int tx = threadIdx.x, ty = threadIdx.y, t = ty * BS + tx;
    int bx = blockIdx.x * BS, by = r0 + blockIdx.y * BS;
    if (t < mw * mw)
        m[t] = mask[t];
    for (int i = t; i < tw * tw; i += BS * BS) {
        int ly = i / tw, lx = i % tw;
        int gy = by + ly - r, gx = bx + lx - r;
        float v = 0.0f;
        if (gy >= 0 && gy < h && gx >= 0 && gx < w) {
            int e = gy / ib.band;
            v = ib.in[e][(size_t)(gy - e * ib.band) * w + gx];
        }
        tile[ly][lx] = v;
    }
    __syncthreads();
    int x = bx + tx, y = by + ty;
    if (x >= w || y >= r0 + hd)
        return;
    float s = 0.0f;
    for (int i = 0; i < mw; i++)
        for (int j = 0; j < mw; j++)
            s += m[i * mw + j] * tile[ty + i][tx + j];
    out[(size_t)(y - r0) * w + x] = s;
}

static void usage()
{
    fprintf(stderr, "usage: conv [--small] [--size N] [--gpus N] [--mask M]\n");
}

int main(int argc, char **argv)
{
    int w = -1, mw = 3, ndev = 0, small = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--small")) small = 1;
        else if (!strcmp(a, "--size") && v) w = atoi(v), i++;
        else if (!strcmp(a, "--gpus") && v) ndev = atoi(v), i++;
        else if (!strcmp(a, "--mask") && v) mw = atoi(v), i++;
        else { usage(); return 2; }
    }
    int visible = 0;
    CHECK(hipGetDeviceCount(&visible));
    if (ndev <= 0)
        ndev = 1;
    if (ndev > visible || ndev > MAXDEV) {
        fprintf(stderr, "conv: --gpus %d but only %d device(s) visible (at most %d; run under gcn3-emu --gpus %d)\n",
                ndev, visible, MAXDEV, ndev);
        return 2;
    }
    if (w < 0)   /* Table II: 1024 wide for 1 GPU, N times the pixels for N GPUs */
        w = (int)std::lround((small ? 256.0 : 1024.0) * std::sqrt((double)ndev) / BS) * BS;
    int h = w;
    if (w < 1 || (long)w * h > (1L << 28) || mw < 1 || mw > 2 * MAXR + 1 || mw % 2 == 0) {
        fprintf(stderr, "conv: bad size %d x %d or mask width %d (odd, 1..%d)\n", w, h, mw, 2 * MAXR + 1);
        return 2;
    }
    std::vector<float> img((size_t)w * h), mask((size_t)mw * mw), res((size_t)w * h);
    for (size_t i = 0; i < img.size(); i++)
        img[i] = (float)((i * 2654435761u >> 7) & 255);
    for (int i = 0; i < mw * mw; i++)
        mask[i] = (float)((i * 7 + 3) % 5) - 2.0f;   /* -2 .. 2 */

    in_bands ib;
    memset(&ib, 0, sizeof ib);
    ib.band = (h + ndev - 1) / ndev;
    std::vector<float *> dout(ndev), dmask(ndev);
    for (int d = 0; d < ndev; d++) {
        int r0 = std::min(h, d * ib.band), hd = std::min(h, r0 + ib.band) - r0;
        CHECK(hipSetDevice(d));
        for (int e = 0; e < ndev; e++)
            if (e != d) {
                hipError_t pe = hipDeviceEnablePeerAccess(e, 0);
                if (pe != hipSuccess && pe != hipErrorPeerAccessAlreadyEnabled)
                    CHECK(pe);
            }
        (void)hipGetLastError();
        float *p;
        CHECK(hipMalloc(&p, (size_t)w * std::max(hd, 1) * sizeof(float)));
        ib.in[d] = p;
        CHECK(hipMalloc(&dout[d], (size_t)w * std::max(hd, 1) * sizeof(float)));
        CHECK(hipMalloc(&dmask[d], mask.size() * sizeof(float)));
        CHECK(hipMemcpy(p, img.data() + (size_t)r0 * w, (size_t)w * hd * sizeof(float), hipMemcpyHostToDevice));
        CHECK(hipMemcpy(dmask[d], mask.data(), mask.size() * sizeof(float), hipMemcpyHostToDevice));
    }
    for (int d = 0; d < ndev; d++) {
        int r0 = std::min(h, d * ib.band), hd = std::min(h, r0 + ib.band) - r0;
        if (hd == 0)
            continue;
        CHECK(hipSetDevice(d));
        dim3 grid((w + BS - 1) / BS, (hd + BS - 1) / BS);
        hipLaunchKernelGGL(conv, grid, dim3(BS, BS), 0, 0, ib, dmask[d], mw, dout[d], w, h, r0, hd);
        CHECK(hipGetLastError());
    }
    for (int d = 0; d < ndev; d++) {
        CHECK(hipSetDevice(d));
        CHECK(hipDeviceSynchronize());
    }
    for (int d = 0; d < ndev; d++) {
        int r0 = std::min(h, d * ib.band), hd = std::min(h, r0 + ib.band) - r0;
        CHECK(hipSetDevice(d));
        CHECK(hipMemcpy(res.data() + (size_t)r0 * w, dout[d], (size_t)w * hd * sizeof(float),
                        hipMemcpyDeviceToHost));
        CHECK(hipFree((void *)ib.in[d]));
        CHECK(hipFree(dout[d]));
        CHECK(hipFree(dmask[d]));
    }
    long bad = 0;
    int r = mw / 2;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float s = 0.0f;
            for (int i = 0; i < mw; i++)
                for (int j = 0; j < mw; j++) {
                    int gy = y + i - r, gx = x + j - r;
                    if (gy >= 0 && gy < h && gx >= 0 && gx < w)
                        s += mask[i * mw + j] * img[(size_t)gy * w + gx];
                }
            if (res[(size_t)y * w + x] != s) {
                if (bad < 5)
                    fprintf(stderr, "mismatch at out[%d][%d]: got %g want %g\n", y, x, res[(size_t)y * w + x], s);
                bad++;
            }
        }
    printf("conv %dx%d mask %dx%d devices=%d: %s\n", w, h, mw, mw, ndev, bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}
