// module_launch.hip - the HIP module API as the HIP samples use it (module_api):
// hipModuleLoad of a `hipcc --genco` code object, hipModuleGetFunction,
// hipModuleLaunchKernel with kernelParams and with the `extra` buffer
// (HIP_LAUNCH_PARAM_BUFFER_POINTER / _SIZE / _END), hipModuleGetGlobal,
// dynamic shared memory, a second copy through hipModuleLoadData, function
// attributes and occupancy, error cases, hipModuleUnload; plus one ordinary
// <<<>>> kernel of the program's own fat binary (several code objects).
//
// usage: module_launch path/to/module_kernels.co     prints PASS on success
#include <hip/hip_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

__global__ void fill(int *p, int v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = v + i;
}

static void *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    void *b = malloc(n);
    if (fread(b, 1, n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = n;
    return b;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "module_kernels.co";
    const int N = 1000;
    hipModule_t mod;
    CHECK(hipModuleLoad(&mod, path));

    float *ha = (float *)malloc(N * sizeof(float)), *hb = (float *)malloc(N * sizeof(float));
    float *hc = (float *)malloc(N * sizeof(float));
    for (int i = 0; i < N; i++)
        ha[i] = i * 0.5f, hb[i] = 1000.0f - i;
    float *da, *db, *dc;
    CHECK(hipMalloc(&da, N * sizeof(float)));
    CHECK(hipMalloc(&db, N * sizeof(float)));
    CHECK(hipMalloc(&dc, N * sizeof(float)));
    CHECK(hipMemcpyHtoD(da, ha, N * sizeof(float)));
    CHECK(hipMemcpyHtoD(db, hb, N * sizeof(float)));

    // 1. kernelParams
    hipFunction_t vadd;
    CHECK(hipModuleGetFunction(&vadd, mod, "vadd"));
    int n = N;
    void *params[] = {&da, &db, &dc, &n};
    CHECK(hipModuleLaunchKernel(vadd, (N + 255) / 256, 1, 1, 256, 1, 1, 0, 0, params, NULL));
    CHECK(hipMemcpyDtoH(hc, dc, N * sizeof(float)));
    for (int i = 0; i < N; i++)
        EXPECT(hc[i] == ha[i] + hb[i], "vadd[%d] = %f", i, hc[i]);
    printf("vadd (kernelParams): ok\n");

    // 2. extra: one packed buffer in the kernarg layout
    struct {
        float *y;
        const float *x;
        float a;
        char bias;
        double d;
        int n;
    } args;
    args.y = dc;
    args.x = da;
    args.a = 2.0f;
    args.bias = 3;
    args.d = 0.25;
    args.n = N;
    size_t size = sizeof(args);
    void *config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                      HIP_LAUNCH_PARAM_END};
    hipFunction_t saxpy;
    CHECK(hipModuleGetFunction(&saxpy, mod, "saxpy_mixed"));
    CHECK(hipModuleLaunchKernel(saxpy, (N + 127) / 128, 1, 1, 128, 1, 1, 0, 0, NULL, config));
    float *hy = (float *)malloc(N * sizeof(float));
    CHECK(hipMemcpyDtoH(hy, dc, N * sizeof(float)));
    for (int i = 0; i < N; i++) {
        float want = 2.0f * ha[i] + hc[i] + 3.0f + 0.25f;
        EXPECT(fabsf(hy[i] - want) <= 1e-3f * fabsf(want), "saxpy[%d] = %f, want %f", i, hy[i], want);
    }
    printf("saxpy_mixed (extra): ok\n");

    // 3. module globals
    hipDeviceptr_t dcoef, dcounter;
    size_t bcoef, bcounter;
    CHECK(hipModuleGetGlobal(&dcoef, &bcoef, mod, "coef"));
    CHECK(hipModuleGetGlobal(&dcounter, &bcounter, mod, "module_counter"));
    EXPECT(bcoef == 4 * sizeof(float) && bcounter == sizeof(int), "global sizes %zu %zu", bcoef,
           bcounter);
    float hcoef[4] = {1.5f, 2.5f, 3.5f, 4.5f};
    CHECK(hipMemcpyHtoD(dcoef, hcoef, sizeof hcoef));
    int zero = 7;
    CHECK(hipMemcpyHtoD(dcounter, &zero, sizeof zero));
    int *dout;
    CHECK(hipMalloc(&dout, N * sizeof(int)));
    hipFunction_t ug;
    CHECK(hipModuleGetFunction(&ug, mod, "use_globals"));
    void *p3[] = {&dout, &n};
    CHECK(hipModuleLaunchKernel(ug, (N + 63) / 64, 1, 1, 64, 1, 1, 0, 0, p3, NULL));
    int *hout = (int *)malloc(N * sizeof(int)), counter = 0;
    CHECK(hipMemcpyDtoH(hout, dout, N * sizeof(int)));
    CHECK(hipMemcpyDtoH(&counter, dcounter, sizeof counter));
    for (int i = 0; i < N; i++)
        EXPECT(hout[i] == (int)(hcoef[i & 3] * 10.0f) + i, "use_globals[%d] = %d", i, hout[i]);
    EXPECT(counter == 7 + N, "module_counter = %d, want %d", counter, 7 + N);
    printf("module globals (hipModuleGetGlobal): ok\n");

    // 4. dynamic shared memory
    hipFunction_t rev;
    CHECK(hipModuleGetFunction(&rev, mod, "reverse_block"));
    int *hr = (int *)malloc(512 * sizeof(int));
    for (int i = 0; i < 512; i++)
        hr[i] = i;
    CHECK(hipMemcpyHtoD(dout, hr, 512 * sizeof(int)));
    void *p4[] = {&dout};
    CHECK(hipModuleLaunchKernel(rev, 2, 1, 1, 256, 1, 1, 256 * sizeof(int), 0, p4, NULL));
    CHECK(hipMemcpyDtoH(hr, dout, 512 * sizeof(int)));
    for (int i = 0; i < 512; i++)
        EXPECT(hr[i] == (i / 256) * 256 + 255 - i % 256, "reverse[%d] = %d", i, hr[i]);
    printf("reverse_block (dynamic shared memory): ok\n");

    // 5. a mangled name, from a second copy loaded with hipModuleLoadData
    size_t len = 0;
    void *image = read_file(path, &len);
    EXPECT(image, "cannot read %s", path);
    hipModule_t mod2;
    CHECK(hipModuleLoadData(&mod2, image));
    hipFunction_t sk;
    CHECK(hipModuleGetFunction(&sk, mod2, "_Z12scale_kernelPffi"));
    float s = -2.0f;
    void *p5[] = {&da, &s, &n};
    CHECK(hipModuleLaunchKernel(sk, (N + 255) / 256, 1, 1, 256, 1, 1, 0, 0, p5, NULL));
    CHECK(hipMemcpyDtoH(hc, da, N * sizeof(float)));
    for (int i = 0; i < N; i++)
        EXPECT(hc[i] == -2.0f * ha[i], "scale[%d] = %f", i, hc[i]);
    // each module has its own globals
    hipDeviceptr_t dcounter2;
    CHECK(hipModuleGetGlobal(&dcounter2, NULL, mod2, "module_counter"));
    EXPECT(dcounter2 != dcounter, "two loads share one module_counter");
    printf("scale_kernel (hipModuleLoadData, mangled name): ok\n");

    // 6. the program's own kernel next to the modules
    hipLaunchKernelGGL(fill, dim3((N + 255) / 256), dim3(256), 0, 0, dout, 5, N);
    CHECK(hipGetLastError());
    CHECK(hipMemcpyDtoH(hout, dout, N * sizeof(int)));
    for (int i = 0; i < N; i++)
        EXPECT(hout[i] == 5 + i, "fill[%d] = %d", i, hout[i]);
    printf("fat-binary kernel beside the modules: ok\n");

    // 7. attributes and occupancy
    int maxt = 0, regs = -1;
    CHECK(hipFuncGetAttribute(&maxt, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, vadd));
    CHECK(hipFuncGetAttribute(&regs, HIP_FUNC_ATTRIBUTE_NUM_REGS, vadd));
    EXPECT(maxt >= 256 && maxt <= 1024 && regs > 0, "attributes %d %d", maxt, regs);
    int nb = 0, gs = 0, bs = 0;
    CHECK(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&nb, vadd, 256, 0));
    CHECK(hipModuleOccupancyMaxPotentialBlockSize(&gs, &bs, vadd, 0, 0));
    EXPECT(nb > 0 && gs > 0 && bs > 0 && bs <= 1024, "occupancy %d %d %d", nb, gs, bs);
    printf("attributes and occupancy: ok (max threads %d, %d blocks/CU at 256)\n", maxt, nb);

    // 8. errors
    hipFunction_t none;
    EXPECT(hipModuleGetFunction(&none, mod, "no_such_kernel") == hipErrorNotFound,
           "missing kernel not refused");
    EXPECT(hipModuleGetGlobal(&dcoef, &bcoef, mod, "no_such_global") == hipErrorNotFound,
           "missing global not refused");
    hipModule_t bad;
    EXPECT(hipModuleLoad(&bad, "/nonexistent/k.co") == hipErrorFileNotFound,
           "missing file not refused");
    EXPECT(hipModuleLaunchKernel(vadd, 1, 1, 1, 64, 1, 1, 0, 0, params, config) ==
               hipErrorInvalidValue,
           "kernelParams and extra together not refused");
    size_t small = 8;
    void *config_small[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                            &small, HIP_LAUNCH_PARAM_END};
    EXPECT(hipModuleLaunchKernel(saxpy, 1, 1, 1, 64, 1, 1, 0, 0, NULL, config_small) ==
               hipErrorInvalidValue,
           "short extra buffer not refused");
    printf("error cases: ok\n");

    CHECK(hipModuleUnload(mod2));
    CHECK(hipModuleUnload(mod));
    EXPECT(hipModuleLaunchKernel(vadd, 1, 1, 1, 64, 1, 1, 0, 0, params, NULL) != hipSuccess,
           "launch after unload not refused");
    free(image);
    CHECK(hipFree(da));
    CHECK(hipFree(db));
    CHECK(hipFree(dc));
    CHECK(hipFree(dout));
    printf("PASS module_launch\n");
    return 0;
}
