// spin_wait.hip - workgroups that wait for other workgroups (issue 15 scope 1,
// issue 20's deadlock row): what the hardware completes must complete under
// gcn3-emu with any --threads, and a wait that can never end must be reported
// as a deadlock (the launch returns an error), never hang.
//
//   spin_wait producer [wgs]  the LAST workgroup writes data, fences and sets a
//                             flag; every other workgroup's work-item 0 spins
//                             on the flag (no s_sleep), then all read the data
//   spin_wait sleepy [wgs]    the same with __builtin_amdgcn_s_sleep in the loop
//   spin_wait remote [wgs]    producer on device 0 with the flag in device 1's
//                             memory (peer access; gcn3-emu --gpus 2)
//   spin_wait lock [wgs]      a compare-and-swap spin lock protects a counter
//                             that work-item 0 of every workgroup increments
//   spin_wait lds             inside one workgroup wave 0 waits for an LDS flag
//                             that wave 3 sets (no barrier between them)
//   spin_wait deadlock        every workgroup waits for a flag nobody sets:
//                             expects hipErrorLaunchTimeOut
//   spin_wait toomany [wgs]   producer with more workgroups than fit on the GPU
//                             at once (the producer never becomes resident,
//                             as on hardware): expects hipErrorLaunchTimeOut
//   spin_wait endless         waits for a flag nobody sets while counting its
//                             iterations: its state never repeats, so only
//                             gcn3-emu --timeout ends it (never returns)
// Prints "PASS <mode>" and exits 0 when the result is what the hardware gives.
#include "samples_check.h"
#include <cstring>

#define WG 256

__global__ void producer(unsigned *flag, unsigned *data, unsigned *out, int sleepy)
{
    __shared__ unsigned seen;
    unsigned last = gridDim.x - 1;
    if (blockIdx.x == last) {
        data[threadIdx.x] = 1000u + threadIdx.x;
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0)
            atomicExch(flag, 1u);
    } else {
        if (threadIdx.x == 0) {
            while (atomicAdd(flag, 0u) == 0u) {
                if (sleepy)
                    __builtin_amdgcn_s_sleep(2);
            }
            seen = 1;
        }
        __syncthreads();
        __threadfence();
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = ((volatile unsigned *)data)[threadIdx.x];
}

__global__ void lock_counter(unsigned *lock, unsigned *counter)
{
    if (threadIdx.x == 0) {
        while (atomicCAS(lock, 0u, 1u) != 0u)
            ;
        __threadfence();
        volatile unsigned *c = counter;
        *c = *c + 1u;
        __threadfence();
        atomicExch(lock, 0u);
    }
}

__global__ void lds_flag(unsigned *out)
{
    __shared__ volatile unsigned f;
    __shared__ volatile unsigned v;
    if (threadIdx.x == 0)
        f = 0;
    __syncthreads();
    if (threadIdx.x == 0) {
        while (f == 0u)
            ;
        out[0] = v;
    } else if (threadIdx.x == 3 * 64) {
        v = 4242u;
        __threadfence_block();
        f = 1u;
    }
}

__global__ void never(unsigned *flag, unsigned *out)
{
    if (threadIdx.x == 0)
        while (atomicAdd(flag, 0u) == 0u)
            ;
    out[blockIdx.x] = 1;
}

__global__ void endless(unsigned *flag, unsigned long long *out)
{
    unsigned long long n = 0;
    while (atomicAdd(flag, 0u) == 0u)
        n++;
    out[blockIdx.x * blockDim.x + threadIdx.x] = n;
}

static hipError_t run_producer(unsigned wgs, int sleepy, int remote = 0)
{
    unsigned *flag, *data, *out;
    if (remote) {
        /* the flag lives on device 1; the kernel runs on device 0 and reaches
         * it through peer access */
        int n = 0;
        CHECK(hipGetDeviceCount(&n));
        EXPECT(n >= 2, "needs 2 GPUs, have %d (run with gcn3-emu --gpus 2)", n);
        CHECK(hipSetDevice(1));
        CHECK(hipMalloc(&flag, 4));
        CHECK(hipSetDevice(0));
        CHECK(hipDeviceEnablePeerAccess(1, 0));
    } else {
        CHECK(hipMalloc(&flag, 4));
    }
    CHECK(hipMalloc(&data, WG * 4));
    CHECK(hipMalloc(&out, (size_t)wgs * WG * 4));
    CHECK(hipMemset(flag, 0, 4));
    CHECK(hipMemset(data, 0, WG * 4));
    hipLaunchKernelGGL(producer, dim3(wgs), dim3(WG), 0, 0, flag, data, out, sleepy);
    hipError_t e = hipGetLastError();
    if (e == hipSuccess)
        e = hipDeviceSynchronize();
    if (e != hipSuccess)
        return e;
    unsigned *h = new unsigned[(size_t)wgs * WG];
    CHECK(hipMemcpy(h, out, (size_t)wgs * WG * 4, hipMemcpyDeviceToHost));
    for (size_t i = 0; i < (size_t)wgs * WG; i++)
        EXPECT(h[i] == 1000u + (unsigned)(i % WG), "out[%zu] = %u, want %u", i, h[i], 1000u + (unsigned)(i % WG));
    delete[] h;
    return hipSuccess;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "producer";
    unsigned wgs = argc > 2 ? (unsigned)atoi(argv[2]) : 0;
    if (!strcmp(mode, "producer") || !strcmp(mode, "sleepy")) {
        CHECK(run_producer(wgs ? wgs : 256, !strcmp(mode, "sleepy")));
    } else if (!strcmp(mode, "remote")) {
        CHECK(run_producer(wgs ? wgs : 256, 0, 1));
    } else if (!strcmp(mode, "lock")) {
        if (!wgs)
            wgs = 512;
        unsigned *lock, *counter, h = 0;
        CHECK(hipMalloc(&lock, 4));
        CHECK(hipMalloc(&counter, 4));
        CHECK(hipMemset(lock, 0, 4));
        CHECK(hipMemset(counter, 0, 4));
        hipLaunchKernelGGL(lock_counter, dim3(wgs), dim3(64), 0, 0, lock, counter);
        CHECK(hipGetLastError());
        CHECK(hipDeviceSynchronize());
        CHECK(hipMemcpy(&h, counter, 4, hipMemcpyDeviceToHost));
        EXPECT(h == wgs, "counter %u, want %u", h, wgs);
    } else if (!strcmp(mode, "lds")) {
        unsigned *out, h = 0;
        CHECK(hipMalloc(&out, 4));
        hipLaunchKernelGGL(lds_flag, dim3(1), dim3(WG), 0, 0, out);
        CHECK(hipGetLastError());
        CHECK(hipDeviceSynchronize());
        CHECK(hipMemcpy(&h, out, 4, hipMemcpyDeviceToHost));
        EXPECT(h == 4242u, "LDS value %u, want 4242", h);
    } else if (!strcmp(mode, "deadlock")) {
        unsigned *flag, *out;
        CHECK(hipMalloc(&flag, 4));
        CHECK(hipMalloc(&out, 64 * 4));
        CHECK(hipMemset(flag, 0, 4));
        hipLaunchKernelGGL(never, dim3(64), dim3(WG), 0, 0, flag, out);
        hipError_t e = hipGetLastError();
        if (e == hipSuccess)
            e = hipDeviceSynchronize();
        EXPECT(e == hipErrorLaunchTimeOut, "launch returned %s, want hipErrorLaunchTimeOut", hipGetErrorName(e));
    } else if (!strcmp(mode, "toomany")) {
        hipError_t e = run_producer(wgs ? wgs : 20000, 0);
        EXPECT(e == hipErrorLaunchTimeOut, "launch returned %s, want hipErrorLaunchTimeOut", hipGetErrorName(e));
    } else if (!strcmp(mode, "endless")) {
        unsigned *flag;
        unsigned long long *out;
        CHECK(hipMalloc(&flag, 4));
        CHECK(hipMalloc(&out, 64 * 8));
        CHECK(hipMemset(flag, 0, 4));
        hipLaunchKernelGGL(endless, dim3(1), dim3(64), 0, 0, flag, out);
        CHECK(hipDeviceSynchronize());
        printf("FAIL endless: the kernel ended\n");
        return 1;
    } else {
        printf("usage: spin_wait producer|sleepy|remote|lock|lds|deadlock|toomany|endless [workgroups]\n");
        return 2;
    }
    printf("PASS %s\n", mode);
    return 0;
}
