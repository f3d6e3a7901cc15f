// device_globals.hip - __device__ and __constant__ variables as the HIP samples
// use them (hipMemcpyToSymbol sample): hipMemcpyToSymbol/FromSymbol (+Async,
// with offsets), hipGetSymbolAddress, hipGetSymbolSize, kernels that read the
// copied values and write globals the host reads back; a second translation
// unit (device_globals_b.hip) brings its own code object and globals.
//
// usage: device_globals          prints PASS on success
#include <hip/hip_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                                         \
    do {                                                                                 \
        hipError_t e_ = (x);                                                             \
        if (e_ != hipSuccess) {                                                          \
            printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x, hipGetErrorName(e_));   \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)
#define EXPECT(c, ...)                                                                   \
    do {                                                                                 \
        if (!(c)) {                                                                      \
            printf("FAIL line %d: ", __LINE__);                                          \
            printf(__VA_ARGS__);                                                         \
            printf("\n");                                                                \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

#define N 256
__device__ int dev_arr[N];
__constant__ float c_coef[16];
__device__ float dev_scalar = 0.5f; // initialised in the code object
__device__ unsigned int dev_hist[8];

int run_other(void); // device_globals_b.hip

__global__ void compute(float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        out[i] = dev_arr[i] * c_coef[i % 16] + dev_scalar;
        dev_arr[i] = i * 3;
        atomicAdd(&dev_hist[i & 7], 1u);
    }
}

int main()
{
    // initial value from the code object's data segment
    float s = 0;
    CHECK(hipMemcpyFromSymbol(&s, HIP_SYMBOL(dev_scalar), sizeof s));
    EXPECT(s == 0.5f, "dev_scalar initial value %f", s);

    int h[N];
    float coef[16];
    for (int i = 0; i < N; i++)
        h[i] = i + 1;
    for (int i = 0; i < 16; i++)
        coef[i] = 0.25f * i;
    CHECK(hipMemcpyToSymbol(HIP_SYMBOL(dev_arr), h, sizeof h));
    CHECK(hipMemcpyToSymbol(HIP_SYMBOL(c_coef), coef, 8 * sizeof(float)));
    // the second half with an offset, asynchronously on a stream
    hipStream_t st;
    CHECK(hipStreamCreate(&st));
    CHECK(hipMemcpyToSymbolAsync(HIP_SYMBOL(c_coef), coef + 8, 8 * sizeof(float),
                                 8 * sizeof(float), hipMemcpyHostToDevice, st));
    CHECK(hipStreamSynchronize(st));
    float two = 2.0f;
    CHECK(hipMemcpyToSymbol(HIP_SYMBOL(dev_scalar), &two, sizeof two, 0, hipMemcpyHostToDevice));

    float *dout;
    CHECK(hipMalloc(&dout, N * sizeof(float)));
    hipLaunchKernelGGL(compute, dim3(N / 64), dim3(64), 0, 0, dout);
    CHECK(hipDeviceSynchronize());
    float out[N];
    CHECK(hipMemcpy(out, dout, sizeof out, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        EXPECT(out[i] == (i + 1) * coef[i % 16] + 2.0f, "out[%d] = %f", i, out[i]);
    printf("kernel sees hipMemcpyToSymbol values: ok\n");

    // read back what the kernel wrote, three ways
    int back[N];
    CHECK(hipMemcpyFromSymbol(back, HIP_SYMBOL(dev_arr), sizeof back));
    for (int i = 0; i < N; i++)
        EXPECT(back[i] == i * 3, "dev_arr[%d] = %d", i, back[i]);
    int part[16];
    CHECK(hipMemcpyFromSymbolAsync(part, HIP_SYMBOL(dev_arr), sizeof part, 100 * sizeof(int),
                                   hipMemcpyDeviceToHost, st));
    CHECK(hipStreamSynchronize(st));
    for (int i = 0; i < 16; i++)
        EXPECT(part[i] == (100 + i) * 3, "dev_arr[%d] (offset read) = %d", 100 + i, part[i]);
    void *p = NULL;
    size_t sz = 0;
    CHECK(hipGetSymbolAddress(&p, HIP_SYMBOL(dev_hist)));
    CHECK(hipGetSymbolSize(&sz, HIP_SYMBOL(dev_hist)));
    EXPECT(sz == sizeof(unsigned int) * 8, "hipGetSymbolSize(dev_hist) = %zu", sz);
    unsigned int hist[8];
    CHECK(hipMemcpy(hist, p, sizeof hist, hipMemcpyDeviceToHost));
    for (int i = 0; i < 8; i++)
        EXPECT(hist[i] == N / 8, "dev_hist[%d] = %u", i, hist[i]);
    CHECK(hipGetSymbolSize(&sz, HIP_SYMBOL(c_coef)));
    EXPECT(sz == sizeof coef, "hipGetSymbolSize(c_coef) = %zu", sz);
    printf("host reads kernel-written globals (FromSymbol, offset, GetSymbolAddress): ok\n");

    // device-to-device into a symbol: a kernel output becomes the next input
    CHECK(hipMemcpyToSymbol(HIP_SYMBOL(c_coef), dout, sizeof coef, 0, hipMemcpyDeviceToDevice));
    float c2[16];
    CHECK(hipMemcpyFromSymbol(c2, HIP_SYMBOL(c_coef), sizeof c2));
    for (int i = 0; i < 16; i++)
        EXPECT(c2[i] == out[i], "c_coef[%d] after D2D = %f", i, c2[i]);
    printf("device-to-device symbol copy: ok\n");

    // the other translation unit: its own code object and globals
    EXPECT(run_other() == 0, "second translation unit failed");

    // errors
    int not_a_symbol = 0;
    EXPECT(hipMemcpyToSymbol(&not_a_symbol, h, 4) == hipErrorInvalidSymbol,
           "unregistered symbol accepted");
    EXPECT(hipMemcpyToSymbol(HIP_SYMBOL(c_coef), coef, sizeof coef, 4) == hipErrorInvalidValue,
           "copy past the end of a symbol accepted");
    printf("error cases: ok\n");

    CHECK(hipStreamDestroy(st));
    CHECK(hipFree(dout));
    printf("PASS device_globals\n");
    return 0;
}
