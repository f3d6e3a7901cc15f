// tear64.hip - 64-bit accesses are single-copy atomic (issue 20): one wave
// of workgroup 0 stores 64-bit words whose two halves are equal while the
// waves of the other workgroups load the same word over and over; a load
// that sees the halves differ saw half of one store and half of another,
// which the GPU never shows (naturally aligned 64-bit accesses are single-
// copy atomic). Run with gcn3-emu --threads 2 or more so that the writer
// and the readers run at the same time. Usage: tear64 [ITERS] (default
// 200000). Prints "PASS tear64 N loads" when no load was torn.
#include "samples_check.h"

#include <cstdlib>

__global__ void tear(unsigned long long *word, unsigned *torn, unsigned *seen, int iters)
{
    volatile unsigned long long *p = word;
    if (blockIdx.x == 0) {
        if (threadIdx.x == 0)
            for (int i = 1; i <= 8 * iters; i++) /* outlasts the readers */
                *p = (unsigned long long)i * 0x100000001ull;
        return;
    }
    unsigned t = 0, nz = 0;
    for (int i = 0; i < iters; i++) {
        unsigned long long v = *p;
        t += (unsigned)v != (unsigned)(v >> 32);
        nz += v != 0 && v != (unsigned long long)(8 * iters) * 0x100000001ull;
    }
    atomicAdd(torn, t);
    atomicAdd(seen, nz);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 200000;
    unsigned long long *word;
    unsigned *cnt, h[2];
    CHECK(hipMalloc(&word, sizeof *word));
    CHECK(hipMalloc(&cnt, 2 * sizeof *cnt));
    CHECK(hipMemset(word, 0, sizeof *word));
    CHECK(hipMemset(cnt, 0, 2 * sizeof *cnt));
    hipLaunchKernelGGL(tear, dim3(4), dim3(64), 0, 0, word, cnt, cnt + 1, iters);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(h, cnt, sizeof h, hipMemcpyDeviceToHost));
    EXPECT(h[0] == 0, "%u of %llu 64-bit loads saw half of one store and half of another", h[0],
           3ull * 64 * iters);
    CHECK(hipFree(word));
    CHECK(hipFree(cnt));
    printf("PASS tear64 %llu loads (%u of them while the stores went on)\n", 3ull * 64 * iters, h[1]);
    return 0;
}
