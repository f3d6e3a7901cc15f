// pitch2d.hip - pitched 2-D allocation (hipMallocPitch), hipMemcpy2D in both
// directions, hipMemset2D, and a kernel indexing rows by the pitch.
#include "samples_check.h"

__global__ void transpose_add(float *dst, size_t dpitch, const float *src, size_t spitch, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        const float *srow = (const float *)((const char *)src + y * spitch);
        float *drow = (float *)((char *)dst + y * dpitch);
        drow[x] += srow[x] * 2.0f;
    }
}

int main()
{
    const int w = 100, h = 37; // rows of 400 bytes: padded to the pitch
    float hsrc[h][w], hdst[h][w];
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) hsrc[y][x] = (float)(y * 1000 + x);
    float *dsrc, *ddst;
    size_t sp, dp;
    CHECK(hipMallocPitch((void **)&dsrc, &sp, w * sizeof(float), h));
    CHECK(hipMallocPitch((void **)&ddst, &dp, w * sizeof(float), h));
    EXPECT(sp >= w * sizeof(float) && sp % 256 == 0, "pitch %zu", sp);
    CHECK(hipMemcpy2D(dsrc, sp, hsrc, w * sizeof(float), w * sizeof(float), h, hipMemcpyHostToDevice));
    CHECK(hipMemset2D(ddst, dp, 0, w * sizeof(float), h));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    dim3 blk(16, 16), grd((w + 15) / 16, (h + 15) / 16);
    hipLaunchKernelGGL(transpose_add, grd, blk, 0, s, ddst, dp, dsrc, sp, w, h);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy2DAsync(hdst, w * sizeof(float), ddst, dp, w * sizeof(float), h, hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            EXPECT(hdst[y][x] == 2.0f * hsrc[y][x], "(%d,%d) = %f", x, y, hdst[y][x]);
    // width larger than the pitch: refused
    EXPECT(hipMemcpy2D(ddst, 16, hsrc, 16, 32, 2, hipMemcpyHostToDevice) == hipErrorInvalidPitchValue,
           "bad pitch accepted");
    (void)hipGetLastError();
    // 32-bit memset of a whole row block
    CHECK(hipMemsetD32(ddst, 0x3f800000, dp / 4 * h)); // 1.0f
    CHECK(hipMemcpy2D(hdst, w * sizeof(float), ddst, dp, w * sizeof(float), h, hipMemcpyDeviceToHost));
    EXPECT(hdst[h - 1][w - 1] == 1.0f && hdst[0][0] == 1.0f, "memsetD32 %f", hdst[0][0]);
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(dsrc));
    CHECK(hipFree(ddst));
    printf("pitch2d: PASS (%dx%d floats, pitch %zu bytes)\n", w, h, dp);
    return 0;
}
