// streams_overlap.hip - copies and kernels on two streams, in the style of the
// public HIP/ROCm stream samples (issue 22). Each of two jobs is a small
// kernel (4 workgroups of 256 work-items: both fit on the R9 Nano's 64 CUs
// together) and a 4 MiB host-to-device hipMemcpyAsync; job A launches then
// copies, job B copies then launches, then each reads its 4 KiB result back
// with hipMemcpyAsync.
//   streams_overlap two   job A on stream a, job B on stream b: on the
//                         hardware B's copy runs on a DMA engine while A's
//                         kernel computes, and the two kernels run side by side
//   streams_overlap one   the same calls, all on stream a (the baseline)
//   streams_overlap wait  job B's kernel reads A's result instead (follow) and
//                         runs first on stream b, after hipStreamWaitEvent
//                         for an event recorded after A's kernel
//   streams_overlap race  the same without the wait: a data race by design
//                         (B's result is not checked); the replay, which runs
//                         B beside A, reports B's loads as order-dependent
//   streams_overlap legacy    job A's kernel on stream a, job B's on the null
//                             stream: HIP's legacy default stream waits for a
//   streams_overlap nonblock  the same with stream a created
//                             hipStreamNonBlocking: the two kernels overlap
//   streams_overlap perthread job A and job B each on a host thread of its
//                             own, on hipStreamPerThread: each thread's
//                             implicit stream is a stream of its own, so
//                             the jobs overlap as in "two"
//   streams_overlap duplex    a 4 MiB host-to-device copy on stream a and a
//                             4 MiB device-to-host copy on stream b: with two
//                             copy engines they share the full-duplex link
//                             side by side, with one they run one after the other
//   streams_overlap share     two kernels of 2,048 workgroups each (more than
//                             the R9 Nano holds at once) on streams a and b:
//                             how they share the CUs is the dispatcher's policy
// Prints "PASS streams_overlap MODE" when the results are right.
#include "samples_check.h"

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#define N 1024                 /* work-items per kernel: 4 workgroups of 256 */
#define BIG (4u << 20)         /* bytes of each host-to-device copy */
#define ITERS 14000            /* dependent multiply-adds per work-item: a kernel about as long as a copy */

__global__ void work(float *x, float mul, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    for (int k = 0; k < iters; k++)
        v = v * mul + 1.0f;
    x[i] = v;
}

__global__ void follow(float *out, const float *in)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i] * 2.0f;
}

static float expect(float x0, float mul, int iters)
{
    float v = x0;
    for (int k = 0; k < iters; k++)
        v = v * mul + 1.0f;
    return v;
}

/* perthread: one job on the calling thread's hipStreamPerThread (kernel then
 * copy, or copy then kernel), its result read back on the same stream; the
 * threads wait for each other (issued) before they synchronise, so both
 * jobs are in flight together whatever order the host threads ran in. */
static std::atomic<int> issued{0};

static void job(float *x, float mul, char *big, const char *hbig, float *r, bool kernel_first)
{
    hipStream_t s = hipStreamPerThread;
    if (!kernel_first)
        CHECK(hipMemcpyAsync(big, hbig, BIG, hipMemcpyHostToDevice, s));
    hipLaunchKernelGGL(work, dim3(N / 256), dim3(256), 0, s, x, mul, ITERS);
    CHECK(hipGetLastError());
    if (kernel_first)
        CHECK(hipMemcpyAsync(big, hbig, BIG, hipMemcpyHostToDevice, s));
    CHECK(hipMemcpyAsync(r, x, N * sizeof(float), hipMemcpyDeviceToHost, s));
    issued++;
    while (issued.load() < 2)
        std::this_thread::yield();
    CHECK(hipStreamSynchronize(s));
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "two";
    bool one = !strcmp(mode, "one"), wait = !strcmp(mode, "wait"), race = !strcmp(mode, "race");
    bool legacy = !strcmp(mode, "legacy"), nonblock = !strcmp(mode, "nonblock");
    bool perthread = !strcmp(mode, "perthread"), duplex = !strcmp(mode, "duplex"), share = !strcmp(mode, "share");
    if (!one && !wait && !race && !legacy && !nonblock && !perthread && !duplex && !share && strcmp(mode, "two")) {
        printf("usage: streams_overlap one|two|wait|race|legacy|nonblock|perthread|duplex|share\n");
        return 2;
    }
    hipStream_t a, b;
    if (nonblock)
        CHECK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
    else
        CHECK(hipStreamCreate(&a));
    CHECK(hipStreamCreate(&b));
    hipStream_t sb = one ? a : b;
    float *xa, *xb;
    char *biga, *bigb;
    CHECK(hipMalloc(&xa, N * sizeof(float)));
    CHECK(hipMalloc(&xb, N * sizeof(float)));
    CHECK(hipMalloc(&biga, BIG));
    CHECK(hipMalloc(&bigb, BIG));
    std::vector<float> h0(N), ra(N), rb(N);
    std::vector<char> hbig(BIG);
    for (int i = 0; i < N; i++)
        h0[i] = (float)(i % 7) * 0.125f;
    for (unsigned i = 0; i < BIG; i++)
        hbig[i] = (char)(i * 13);
    CHECK(hipMemcpy(xa, h0.data(), N * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(xb, h0.data(), N * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipDeviceSynchronize());

    if (share) {
        const int n = 2048 * 256, iters = 8;
        float *ya, *yb;
        std::vector<float> h(n), r(n);
        for (int i = 0; i < n; i++)
            h[i] = (float)(i % 5) * 0.5f;
        CHECK(hipMalloc(&ya, n * sizeof(float)));
        CHECK(hipMalloc(&yb, n * sizeof(float)));
        CHECK(hipMemcpy(ya, h.data(), n * sizeof(float), hipMemcpyHostToDevice));
        CHECK(hipMemcpy(yb, h.data(), n * sizeof(float), hipMemcpyHostToDevice));
        hipLaunchKernelGGL(work, dim3(n / 256), dim3(256), 0, a, ya, 0.5f, iters);
        CHECK(hipGetLastError());
        hipLaunchKernelGGL(work, dim3(n / 256), dim3(256), 0, b, yb, 0.25f, iters);
        CHECK(hipGetLastError());
        CHECK(hipDeviceSynchronize());
        CHECK(hipMemcpy(r.data(), ya, n * sizeof(float), hipMemcpyDeviceToHost));
        for (int i = 0; i < n; i++)
            EXPECT(r[i] == expect(h[i], 0.5f, iters), "A[%d] = %g", i, r[i]);
        CHECK(hipMemcpy(r.data(), yb, n * sizeof(float), hipMemcpyDeviceToHost));
        for (int i = 0; i < n; i++)
            EXPECT(r[i] == expect(h[i], 0.25f, iters), "B[%d] = %g", i, r[i]);
        printf("PASS streams_overlap %s\n", mode);
        return 0;
    }
    if (duplex) {
        std::vector<char> back(BIG);
        CHECK(hipMemcpy(bigb, hbig.data(), BIG, hipMemcpyHostToDevice));
        CHECK(hipMemcpyAsync(biga, hbig.data(), BIG, hipMemcpyHostToDevice, a));
        CHECK(hipMemcpyAsync(back.data(), bigb, BIG, hipMemcpyDeviceToHost, b));
        CHECK(hipDeviceSynchronize());
        EXPECT(!memcmp(back.data(), hbig.data(), BIG), "D2H copy differs");
        printf("PASS streams_overlap %s\n", mode);
        return 0;
    }
    if (perthread) {
        std::thread ta(job, xa, 0.5f, biga, hbig.data(), ra.data(), true);
        std::thread tb(job, xb, 0.25f, bigb, hbig.data(), rb.data(), false);
        ta.join();
        tb.join();
        for (int i = 0; i < N; i++) {
            EXPECT(ra[i] == expect(h0[i], 0.5f, ITERS), "A[%d] = %g", i, ra[i]);
            EXPECT(rb[i] == expect(h0[i], 0.25f, ITERS), "B[%d] = %g", i, rb[i]);
        }
        printf("PASS streams_overlap %s\n", mode);
        return 0;
    }
    if (legacy || nonblock) {
        /* job A's kernel on stream a, job B's on the null stream */
        hipLaunchKernelGGL(work, dim3(N / 256), dim3(256), 0, a, xa, 0.5f, ITERS);
        CHECK(hipGetLastError());
        hipLaunchKernelGGL(work, dim3(N / 256), dim3(256), 0, 0, xb, 0.25f, ITERS);
        CHECK(hipGetLastError());
        CHECK(hipDeviceSynchronize());
        CHECK(hipMemcpy(ra.data(), xa, N * sizeof(float), hipMemcpyDeviceToHost));
        CHECK(hipMemcpy(rb.data(), xb, N * sizeof(float), hipMemcpyDeviceToHost));
        for (int i = 0; i < N; i++) {
            EXPECT(ra[i] == expect(h0[i], 0.5f, ITERS), "A[%d] = %g", i, ra[i]);
            EXPECT(rb[i] == expect(h0[i], 0.25f, ITERS), "B[%d] = %g", i, rb[i]);
        }
        printf("PASS streams_overlap %s\n", mode);
        return 0;
    }
    hipEvent_t done_a;
    CHECK(hipEventCreate(&done_a));
    /* job A: kernel, then its copy */
    hipLaunchKernelGGL(work, dim3(N / 256), dim3(256), 0, a, xa, 0.5f, ITERS);
    CHECK(hipGetLastError());
    CHECK(hipEventRecord(done_a, a));
    CHECK(hipMemcpyAsync(biga, hbig.data(), BIG, hipMemcpyHostToDevice, a));
    if (wait || race) {
        /* job B: a kernel on A's result (after A's event, or racing it), then its copy */
        if (wait)
            CHECK(hipStreamWaitEvent(sb, done_a, 0));
        hipLaunchKernelGGL(follow, dim3(N / 256), dim3(256), 0, sb, xb, xa);
        CHECK(hipGetLastError());
        CHECK(hipMemcpyAsync(bigb, hbig.data(), BIG, hipMemcpyHostToDevice, sb));
    } else {
        /* job B: copy, then its kernel */
        CHECK(hipMemcpyAsync(bigb, hbig.data(), BIG, hipMemcpyHostToDevice, sb));
        hipLaunchKernelGGL(work, dim3(N / 256), dim3(256), 0, sb, xb, 0.25f, ITERS);
        CHECK(hipGetLastError());
    }
    CHECK(hipMemcpyAsync(ra.data(), xa, N * sizeof(float), hipMemcpyDeviceToHost, a));
    CHECK(hipMemcpyAsync(rb.data(), xb, N * sizeof(float), hipMemcpyDeviceToHost, sb));
    CHECK(hipStreamSynchronize(a));
    CHECK(hipStreamSynchronize(sb));

    for (int i = 0; i < N; i++) {
        EXPECT(ra[i] == expect(h0[i], 0.5f, ITERS), "A[%d] = %g", i, ra[i]);
        if (wait)
            EXPECT(rb[i] == 2.0f * ra[i], "B[%d] = %g", i, rb[i]);
        else if (!race)
            EXPECT(rb[i] == expect(h0[i], 0.25f, ITERS), "B[%d] = %g", i, rb[i]);
    }
    CHECK(hipEventDestroy(done_a));
    CHECK(hipFree(xa));
    CHECK(hipFree(xb));
    CHECK(hipFree(biga));
    CHECK(hipFree(bigb));
    CHECK(hipStreamDestroy(a));
    CHECK(hipStreamDestroy(b));
    printf("PASS streams_overlap %s\n", mode);
    return 0;
}
