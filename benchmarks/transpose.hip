// transpose: out = in^T for a W x H float matrix, through 32x32 LDS tiles
// (padded to 33 columns against bank conflicts), 2-D grid of 32x8 workgroups.
// Usage: transpose [W [H]]   (default 1024 x 768: 768 workgroups)
// With several visible devices each transposes a band of input rows (a band
// of output columns); the host reassembles the result.
#include <hip/hip_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, hipGetErrorString(e_)); \
    return 2; } } while (0)

#define TILE 32
#define ROWS 8

/* in: h rows of w floats; out: w rows of h floats. */
__global__ void transpose(const float *in, float *out, int w, int h)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < w && y + j < h)
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * w + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < h && y + j < w)
            out[(size_t)(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main(int argc, char **argv)
{
    int w = argc > 1 ? atoi(argv[1]) : 1024;
    int h = argc > 2 ? atoi(argv[2]) : (argc > 1 ? w : 768);
    int ndev = 1;
    CHECK(hipGetDeviceCount(&ndev));
    std::vector<float> hin((size_t)w * h), hout((size_t)w * h);
    for (size_t i = 0; i < hin.size(); i++)
        hin[i] = (float)(i % 65521) + 0.125f;
    int per = (h + ndev - 1) / ndev;   /* input rows per device */
    std::vector<float *> din(ndev), dout(ndev);
    for (int d = 0; d < ndev; d++) {
        int r0 = std::min(h, d * per), hd = std::min(h, r0 + per) - r0;
        size_t bytes = (size_t)w * std::max(hd, 1) * sizeof(float);
        CHECK(hipSetDevice(d));
        CHECK(hipMalloc(&din[d], bytes));
        CHECK(hipMalloc(&dout[d], bytes));
        CHECK(hipMemcpy(din[d], hin.data() + (size_t)r0 * w, (size_t)w * hd * sizeof(float),
                        hipMemcpyHostToDevice));
        if (hd == 0)
            continue;
        dim3 block(TILE, ROWS);
        dim3 grid((w + TILE - 1) / TILE, (hd + TILE - 1) / TILE);
        hipLaunchKernelGGL(transpose, grid, block, 0, 0, din[d], dout[d], w, hd);
        CHECK(hipGetLastError());
    }
    std::vector<float> band;
    for (int d = 0; d < ndev; d++) {
        int r0 = std::min(h, d * per), hd = std::min(h, r0 + per) - r0;
        CHECK(hipSetDevice(d));
        CHECK(hipDeviceSynchronize());
        band.resize((size_t)w * hd);
        CHECK(hipMemcpy(band.data(), dout[d], band.size() * sizeof(float), hipMemcpyDeviceToHost));
        for (int x = 0; x < w; x++)          /* band is w rows of hd: out[x][r0 + k] */
            for (int k = 0; k < hd; k++)
                hout[(size_t)x * h + r0 + k] = band[(size_t)x * hd + k];
        CHECK(hipFree(din[d]));
        CHECK(hipFree(dout[d]));
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
