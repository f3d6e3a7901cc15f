// ALU micro-benchmark (MGSim paper Sec. VI-B / VII-A, Fig. 6a): kernels of N
// v_add_f32 v3, v2, v1 instructions run by one wavefront (as in the paper). The instruction block is
// aligned to a 64-byte instruction-cache line so that its first line holds
// 16 of them; the replay's kernel time then shows the staircase (one L1I miss
// per 16 instructions) on a slope of one VALU issue per instruction.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>

template <int N> __global__ void alu()
{
    /* no memory accesses: the kernel time is fetch + issue only */
    asm volatile(".p2align 6\n"
                 ".rept %0\n"
                 "v_add_f32 v3, v2, v1\n"
                 ".endr\n"
                 :
                 : "i"(N)
                 : "v1", "v2", "v3");
}

#define CHECK(x)                                                                                \
    do {                                                                                        \
        hipError_t e_ = (x);                                                                    \
        if (e_ != hipSuccess) {                                                                 \
            fprintf(stderr, "%s: %s\n", #x, hipGetErrorString(e_));                             \
            return 1;                                                                           \
        }                                                                                       \
    } while (0)

template <int N> static int run()
{
    hipLaunchKernelGGL(alu<N>, dim3(1), dim3(64), 0, 0);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    return 0;
}

#include "alu_list.h" /* ALU_LIST(X): the instruction counts, in launch order */

int main()
{
    int bad = 0;
#define X(n) bad |= run<n>();
    ALU_LIST(X)
#undef X
    printf("alu: %s\n", bad ? "FAIL" : "ok");
    return bad;
}
