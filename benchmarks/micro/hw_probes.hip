// The R9 Nano hardware probes (../shared/hw-r9nano/README.md, from MGPUSim's
// microbench/, 2018) as their exact instruction sequences, for issue 21's
// validation against silicon. tests/e2e/hw-probes.sh and benchmarks/micro/
// hw-probes.sh record and replay this program and fit slopes by least squares.
//
//   hw_probes dram [full]  dram_read: one wavefront, N 5-instruction steps
//                          (flat_load_dword, 64-bit address += 64, s_mov_b64
//                          vcc 0, s_waitcnt vmcnt(0)) over untouched memory:
//                          N = 0..4096 step 128 (full) or step 1024
//   hw_probes l2 [full]    l2_read: 4096 such steps on v[1:2] (256 KiB, fills
//                          the L2), then N steps on v[4:5] from the buffer's
//                          start (L2 hits): N = 0..128 step 8 (full) or 16
//   hw_probes alu [full]   N x v_add_f32 v1, v2, v3 straight-line, then
//                          s_endpgm, N = 0..128 step 4 (full or not), each in
//                          eight launch shapes spread over the hardware's 1..8
//                          workgroups x 1..4 wavefronts
//
// Every launch runs its own code (each hardware run was a fresh process, so
// code and data were never in the L2).
// One launch per line "probe N wavefronts workgroups" on stdout, in launch
// order. The compiler's kernarg load (s_load_dwordx2 and its s_waitcnt) stands
// in for the README's s_load_dwordx2 s[6:7], s[0:1]: a constant per kernel.
// Every dram/l2 kernel gets its own untouched buffer, as each hardware run did.
#include <hip/hip_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define STEP(lo, hi)                                                                            \
    "flat_load_dword v0, v[" #lo ":" #hi "]\n"                                                   \
    "v_add_u32 v" #lo ", vcc, v" #lo ", v3\n"                                                   \
    "v_addc_u32 v" #hi ", vcc, v" #hi ", 0, vcc\n"                                              \
    "s_mov_b64 vcc, 0\n"                                                                        \
    "s_waitcnt vmcnt(0)\n"

#define SETUP                                                                                   \
    "v_mov_b32 v1, %0\n"                                                                        \
    "v_mov_b32 v2, %1\n"                                                                        \
    "v_mov_b32 v4, %0\n"                                                                        \
    "v_mov_b32 v5, %1\n"                                                                        \
    "v_mov_b32 v3, 64\n"

template <int N> __global__ void dram_read(const void *p)
{
    uint32_t lo = (uint32_t)(uintptr_t)p, hi = (uint32_t)((uintptr_t)p >> 32);
    asm volatile(SETUP ".rept %2\n" STEP(1, 2) ".endr\n"
                 :
                 : "s"(lo), "s"(hi), "i"(N)
                 : "v0", "v1", "v2", "v3", "v4", "v5", "vcc", "memory");
}

template <int N> __global__ void l2_read(const void *p)
{
    uint32_t lo = (uint32_t)(uintptr_t)p, hi = (uint32_t)((uintptr_t)p >> 32);
    asm volatile(SETUP ".rept 4096\n" STEP(1, 2) ".endr\n"
                       ".rept %2\n" STEP(4, 5) ".endr\n"
                 :
                 : "s"(lo), "s"(hi), "i"(N)
                 : "v0", "v1", "v2", "v3", "v4", "v5", "vcc", "memory");
}

/* S only makes each launch shape its own copy of the code: every hardware
 * run was a fresh process, so its code was never in the L2 */
template <int N, int S> __global__ void alu()
{
    asm volatile(".rept %0\nv_add_f32 v1, v2, v3\n.endr\n" : : "i"(N) : "v1", "v2", "v3");
}

#define CHECK(x)                                                                                \
    do {                                                                                        \
        hipError_t e_ = (x);                                                                    \
        if (e_ != hipSuccess) {                                                                 \
            fprintf(stderr, "hw_probes: %s: %s\n", #x, hipGetErrorString(e_));                  \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

static const size_t REGION = (4096 + 128) * 64 + 4096; /* one kernel's buffer, bytes */
static char *g_buf;
static int g_next;

static const void *fresh_region()
{
    return g_buf + (size_t)g_next++ * REGION;
}

template <int N> static void dram(bool full)
{
    if (full || N % 1024 == 0) {
        hipLaunchKernelGGL(dram_read<N>, dim3(1), dim3(64), 0, 0, fresh_region());
        CHECK(hipGetLastError());
        CHECK(hipDeviceSynchronize());
        printf("dram %d 1 1\n", N);
    }
}

template <int N> static void l2(bool full)
{
    if (full || N % 16 == 0) {
        hipLaunchKernelGGL(l2_read<N>, dim3(1), dim3(64), 0, 0, fresh_region());
        CHECK(hipGetLastError());
        CHECK(hipDeviceSynchronize());
        printf("l2 %d 1 1\n", N);
    }
}

template <int N, int S> static void alu_shape(int w, int g)
{
    hipLaunchKernelGGL((alu<N, S>), dim3(g), dim3(64 * w), 0, 0);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    printf("alu %d %d %d\n", N, w, g);
}

/* launch shapes (workgroups, wavefronts per workgroup): a spread over the
 * hardware's 1..8 x 1..4 */
template <int N> static void alu_shapes(bool)
{
    alu_shape<N, 0>(1, 1);
    alu_shape<N, 1>(2, 2);
    alu_shape<N, 2>(4, 1);
    alu_shape<N, 3>(1, 8);
    alu_shape<N, 4>(2, 4);
    alu_shape<N, 5>(3, 5);
    alu_shape<N, 6>(4, 8);
    alu_shape<N, 7>(1, 3);
}

#define R8(F, b) F<b>(full); F<b + 128>(full); F<b + 256>(full); F<b + 384>(full); \
    F<b + 512>(full); F<b + 640>(full); F<b + 768>(full); F<b + 896>(full);
#define A8(F, b) F<b>(full); F<b + 4>(full); F<b + 8>(full); F<b + 12>(full); \
    F<b + 16>(full); F<b + 20>(full); F<b + 24>(full); F<b + 28>(full);

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    bool full = argc > 2 && !strcmp(argv[2], "full");
    if (strcmp(what, "dram") && strcmp(what, "l2") && strcmp(what, "alu")) {
        fprintf(stderr, "usage: hw_probes dram|l2|alu [full]\n");
        return 2;
    }
    CHECK(hipMalloc((void **)&g_buf, 40 * REGION));
    if (!strcmp(what, "dram")) {
        R8(dram, 0) R8(dram, 1024) R8(dram, 2048) R8(dram, 3072) dram<4096>(full);
    } else if (!strcmp(what, "l2")) {
        l2<0>(full); l2<8>(full); l2<16>(full); l2<24>(full); l2<32>(full); l2<40>(full);
        l2<48>(full); l2<56>(full); l2<64>(full); l2<72>(full); l2<80>(full); l2<88>(full);
        l2<96>(full); l2<104>(full); l2<112>(full); l2<120>(full); l2<128>(full);
    } else {
        A8(alu_shapes, 0) A8(alu_shapes, 32) A8(alu_shapes, 64) A8(alu_shapes, 96) alu_shapes<128>(full);
    }
    CHECK(hipFree(g_buf));
    return 0;
}
