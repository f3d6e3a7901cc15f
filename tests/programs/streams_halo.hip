// streams_halo.hip - two GPUs exchange halos while they compute (issue 22), in
// the style of the public multi-GPU stream samples. Run with gcn3-emu --gpus 2.
// Each GPU owns half of a 1-D array with one ghost cell on the side of the
// other GPU. Per step, each GPU runs an interior kernel on its compute
// stream while its boundary cell goes to the other GPU's ghost cell with
// hipMemcpyPeerAsync on a second stream; then a small kernel updates the cell
// next to the ghost.
//   streams_halo two   the halo on its own stream (overlaps the interior kernel)
//   streams_halo one   the halo on the compute stream, after the interior kernel
// Prints "PASS streams_halo MODE" when every value is right.
#include "samples_check.h"

#include <cstring>
#include <vector>

#define HALF 1024              /* cells per GPU: 4 workgroups of 256 */
#define STEPS 3
#define ITERS 2000             /* work per interior cell */

/* cells [1, HALF) of x (x[0] is the boundary cell the other GPU needs) */
__global__ void interior(float *x, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0)
        return;
    float v = x[i];
    for (int k = 0; k < iters; k++)
        v = v * 0.5f + 1.0f;
    x[i] = v;
}

/* the boundary cell takes the ghost's value plus one */
__global__ void boundary(float *x, const float *ghost) { x[0] = ghost[0] + 1.0f; }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "two";
    bool one = !strcmp(mode, "one");
    if (!one && strcmp(mode, "two")) {
        printf("usage: streams_halo one|two\n");
        return 2;
    }
    int n = 0;
    CHECK(hipGetDeviceCount(&n));
    EXPECT(n >= 2, "needs 2 GPUs, have %d (run with gcn3-emu --gpus 2)", n);
    float *x[2], *ghost[2];
    hipStream_t comp[2], comm[2];
    std::vector<float> h(HALF);
    for (int d = 0; d < 2; d++) {
        CHECK(hipSetDevice(d));
        CHECK(hipDeviceEnablePeerAccess(1 - d, 0));
        CHECK(hipMalloc(&x[d], HALF * sizeof(float)));
        CHECK(hipMalloc(&ghost[d], sizeof(float)));
        CHECK(hipStreamCreate(&comp[d]));
        CHECK(hipStreamCreate(&comm[d]));
        for (int i = 0; i < HALF; i++)
            h[i] = (float)(d * 100 + i % 5);
        CHECK(hipMemcpy(x[d], h.data(), HALF * sizeof(float), hipMemcpyHostToDevice));
    }
    float b[2] = {0.0f, 100.0f}; /* the boundary cells, as the host expects them */
    for (int step = 0; step < STEPS; step++) {
        for (int d = 0; d < 2; d++) {
            CHECK(hipSetDevice(d));
            hipLaunchKernelGGL(interior, dim3(HALF / 256), dim3(256), 0, comp[d], x[d], ITERS);
            CHECK(hipGetLastError());
            /* my boundary cell to the other GPU's ghost */
            CHECK(hipMemcpyPeerAsync(ghost[1 - d], 1 - d, x[d], d, sizeof(float), one ? comp[d] : comm[d]));
        }
        for (int d = 0; d < 2; d++) {
            CHECK(hipSetDevice(d));
            CHECK(hipStreamSynchronize(comm[d]));
            CHECK(hipStreamSynchronize(comp[d]));
        }
        for (int d = 0; d < 2; d++) {
            CHECK(hipSetDevice(d));
            hipLaunchKernelGGL(boundary, dim3(1), dim3(1), 0, comp[d], x[d], ghost[d]);
            CHECK(hipGetLastError());
        }
        for (int d = 0; d < 2; d++) {
            CHECK(hipSetDevice(d));
            CHECK(hipStreamSynchronize(comp[d]));
        }
        float nb0 = b[1] + 1.0f, nb1 = b[0] + 1.0f;
        b[0] = nb0;
        b[1] = nb1;
    }
    for (int d = 0; d < 2; d++) {
        CHECK(hipSetDevice(d));
        CHECK(hipMemcpy(h.data(), x[d], HALF * sizeof(float), hipMemcpyDeviceToHost));
        EXPECT(h[0] == b[d], "GPU %d boundary %g, want %g", d, h[0], b[d]);
        for (int i = 1; i < HALF; i++) {
            float v = (float)(d * 100 + i % 5);
            for (int s = 0; s < STEPS; s++)
                for (int k = 0; k < ITERS; k++)
                    v = v * 0.5f + 1.0f;
            EXPECT(h[i] == v, "GPU %d cell %d = %g, want %g", d, i, h[i], v);
        }
        CHECK(hipFree(x[d]));
        CHECK(hipFree(ghost[d]));
        CHECK(hipStreamDestroy(comp[d]));
        CHECK(hipStreamDestroy(comm[d]));
    }
    printf("PASS streams_halo %s\n", mode);
    return 0;
}
