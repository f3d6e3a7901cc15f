// empty_kernel.hip - the R9 Nano empty-kernel probe (../shared/hw-r9nano/
// README.md, "Empty kernel: workgroup dispatch", from MGPUSim's
// microbench/emptykernel): an empty kernel (s_endpgm only) launched with
// workgroups of 64 x W work-items, W = 1..7, and G = 128..1024 workgroups
// (step 128), one launch per (W, G) in that order. The replay's per-kernel
// time against G gives the dispatcher's cost per workgroup (tests/e2e/
// hw-probes.sh compares the slopes with the hardware's).
#include "samples_check.h"

__global__ void empty_kernel() {}

int main()
{
    for (int w = 1; w <= 7; w++)
        for (int g = 128; g <= 1024; g += 128) {
            hipLaunchKernelGGL(empty_kernel, dim3(g), dim3(64 * w), 0, 0);
            CHECK(hipGetLastError());
        }
    CHECK(hipDeviceSynchronize());
    printf("PASS empty_kernel: 7 x 8 launches\n");
    return 0;
}
