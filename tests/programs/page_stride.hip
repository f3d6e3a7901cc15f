// page_stride.hip - address translation seen by a program (issue 17): two
// dependent chains of STEPS loads by one work-item, each load to a cache line
// no earlier access touched. The page-local chain stays inside one 2 MiB
// buffer (one page: a 2 MiB fragment); the page-striding chain moves to a new
// 2 MiB page at every step, so under translation each of its loads waits for
// a page-table walk. The chains are written by host copies (which do not
// warm the GPU's TLBs). Usage: page_stride [STEPS] (default 64, at most 256).
// Prints "PASS page_stride STEPS" when both chains end where they should.
#include "samples_check.h"

#include <cstdlib>

#define PAGE (2u << 20)
#define END 0xfffffff0u

__global__ void chase(const unsigned *buf, unsigned start, int steps, unsigned *out)
{
    if (threadIdx.x != 0)
        return;
    unsigned i = start;
    for (int s = 0; s < steps; s++)
        i = buf[i];
    out[blockIdx.x] = i;
}

// Write the chain's links: step s lives at word at(s) and holds at(s + 1).
static void link(unsigned *d, int steps, unsigned (*at)(int))
{
    for (int s = 0; s < steps; s++) {
        unsigned next = s + 1 < steps ? at(s + 1) : END;
        CHECK(hipMemcpy(d + at(s), &next, sizeof next, hipMemcpyHostToDevice));
    }
}

static unsigned local_at(int s) { return (unsigned)s * (4096u + 64u) / 4u; }          // inside one page
static unsigned stride_at(int s) { return (unsigned)s * (PAGE + 64u) / 4u; }          // a page per step

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 64;
    if (steps < 2 || steps > 256) {
        fprintf(stderr, "page_stride: STEPS must be 2..256\n");
        return 2;
    }
    unsigned *loc, *str, *out;
    size_t lsz = PAGE, ssz = (size_t)(steps + 1) * PAGE;
    CHECK(hipMalloc(&loc, lsz));
    CHECK(hipMalloc(&str, ssz));
    CHECK(hipMalloc(&out, 2 * sizeof(unsigned)));
    CHECK(hipMemset(loc, 0, lsz));
    CHECK(hipMemset(str, 0, ssz));
    link(loc, steps, local_at);
    link(str, steps, stride_at);
    hipLaunchKernelGGL(chase, dim3(1), dim3(64), 0, 0, loc, 0u, steps, out);
    hipLaunchKernelGGL(chase, dim3(1), dim3(64), 0, 0, str, 0u, steps, out + 1);
    CHECK(hipGetLastError());
    unsigned h[2];
    CHECK(hipMemcpy(h, out, sizeof h, hipMemcpyDeviceToHost));
    if (h[0] != END || h[1] != END) {
        printf("FAIL page_stride: chains ended at %#x and %#x, want %#x\n", h[0], h[1], END);
        return 1;
    }
    printf("PASS page_stride %d\n", steps);
    return 0;
}
