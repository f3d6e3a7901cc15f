// long_waves.hip - waves that run for a long time (issue 20: recording
// memory bounded by threads x frame size, not by wave length). 8 workgroups
// of 256 work-items; each work-item runs ITERS iterations of a loop that
// loads two words of a 64 KiB table, stores one word, and accumulates, so
// each wave records two loads and a store per iteration (about 1.5 KiB of
// values). Usage: long_waves [ITERS] (default 2000). Prints "PASS
// long_waves ITERS" when the results are right.
#include "samples_check.h"

#include <cstdlib>
#include <vector>

#define WGS 8
#define N (WGS * 256)
#define TAB 16384

__global__ void walk(const unsigned *tab, unsigned *scratch, unsigned *out, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned acc = (unsigned)i;
    for (int k = 0; k < iters; k++) {
        unsigned a = tab[(i + 7 * k) & (TAB - 1)];
        unsigned b = tab[(acc ^ (unsigned)k) & (TAB - 1)];
        acc = acc * 1664525u + (a ^ b);
        scratch[i] = acc;
    }
    out[i] = acc;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    std::vector<unsigned> tab(TAB), out(N);
    for (int j = 0; j < TAB; j++)
        tab[j] = (unsigned)j * 2654435761u;
    unsigned *dtab, *dscr, *dout;
    CHECK(hipMalloc(&dtab, TAB * sizeof(unsigned)));
    CHECK(hipMalloc(&dscr, N * sizeof(unsigned)));
    CHECK(hipMalloc(&dout, N * sizeof(unsigned)));
    CHECK(hipMemcpy(dtab, tab.data(), TAB * sizeof(unsigned), hipMemcpyHostToDevice));
    hipLaunchKernelGGL(walk, dim3(WGS), dim3(256), 0, 0, dtab, dscr, dout, iters);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(out.data(), dout, N * sizeof(unsigned), hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
        unsigned acc = (unsigned)i;
        for (int k = 0; k < iters; k++) {
            unsigned a = tab[(i + 7 * k) & (TAB - 1)];
            unsigned b = tab[(acc ^ (unsigned)k) & (TAB - 1)];
            acc = acc * 1664525u + (a ^ b);
        }
        EXPECT(out[i] == acc, "out[%d] = %u, want %u", i, out[i], acc);
    }
    CHECK(hipFree(dtab));
    CHECK(hipFree(dscr));
    CHECK(hipFree(dout));
    printf("PASS long_waves %d\n", iters);
    return 0;
}
