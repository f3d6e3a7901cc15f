// warp_ops.hip - wavefront (warp) intrinsics on 64-lane wavefronts:
// __shfl, __shfl_xor, __shfl_up, __shfl_down, __ballot, __any, __all,
// __popcll, checked lane by lane against a host model.
#include "samples_check.h"
#include <cstdint>

__global__ void ops(int *out, unsigned long long *ball, int *votes)
{
    int l = threadIdx.x; // one 64-wide wavefront per block
    int w = blockIdx.x;
    int v = l * 10 + w;
    int *o = out + (w * 64 + l) * 4;
    o[0] = __shfl(v, (l + 5) % 64);
    o[1] = __shfl_xor(v, 3);
    o[2] = __shfl_up(v, 2);
    o[3] = __shfl_down(v, 7);
    unsigned long long b = __ballot(l % 3 == 0 || l == 63);
    if (l == 0) {
        ball[w] = b;
        votes[w * 4 + 0] = __popcll(b);
    }
    int any = __any(l == 40 + w);
    int all = __all(l < 64);
    int none = __all(l != 17);
    if (l == 1) {
        votes[w * 4 + 1] = any;
        votes[w * 4 + 2] = all;
        votes[w * 4 + 3] = none;
    }
}

int main()
{
    const int waves = 4;
    int *d_out, *d_votes;
    unsigned long long *d_ball;
    CHECK(hipMalloc((void **)&d_out, waves * 64 * 4 * sizeof(int)));
    CHECK(hipMalloc((void **)&d_ball, waves * sizeof(unsigned long long)));
    CHECK(hipMalloc((void **)&d_votes, waves * 4 * sizeof(int)));
    int wsize = 0;
    CHECK(hipDeviceGetAttribute(&wsize, hipDeviceAttributeWarpSize, 0));
    EXPECT(wsize == 64, "warp size %d", wsize);
    hipLaunchKernelGGL(ops, dim3(waves), dim3(64), 0, 0, d_out, d_ball, d_votes);
    CHECK(hipGetLastError());
    int out[waves * 64 * 4], votes[waves * 4];
    unsigned long long ball[waves];
    CHECK(hipMemcpy(out, d_out, sizeof out, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(ball, d_ball, sizeof ball, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(votes, d_votes, sizeof votes, hipMemcpyDeviceToHost));
    unsigned long long eb = 0;
    for (int l = 0; l < 64; l++)
        if (l % 3 == 0 || l == 63) eb |= 1ull << l;
    for (int w = 0; w < waves; w++) {
        for (int l = 0; l < 64; l++) {
            auto val = [&](int lane) { return lane * 10 + w; };
            const int *o = out + (w * 64 + l) * 4;
            EXPECT(o[0] == val((l + 5) % 64), "shfl w%d l%d: %d", w, l, o[0]);
            EXPECT(o[1] == val(l ^ 3), "shfl_xor w%d l%d: %d", w, l, o[1]);
            EXPECT(o[2] == val(l >= 2 ? l - 2 : l), "shfl_up w%d l%d: %d", w, l, o[2]);
            EXPECT(o[3] == val(l + 7 < 64 ? l + 7 : l), "shfl_down w%d l%d: %d", w, l, o[3]);
        }
        EXPECT(ball[w] == eb, "ballot w%d: %llx", w, ball[w]);
        EXPECT(votes[w * 4 + 0] == __builtin_popcountll(eb), "popcll w%d: %d", w, votes[w * 4]);
        EXPECT(votes[w * 4 + 1] == 1 && votes[w * 4 + 2] == 1 && votes[w * 4 + 3] == 0,
               "any/all w%d: %d %d %d", w, votes[w * 4 + 1], votes[w * 4 + 2], votes[w * 4 + 3]);
    }
    CHECK(hipFree(d_out));
    CHECK(hipFree(d_ball));
    CHECK(hipFree(d_votes));
    printf("warp_ops: PASS (%d wavefronts)\n", waves);
    return 0;
}
