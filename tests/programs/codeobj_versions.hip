// codeobj_versions.hip - every code-object version through the module API:
// loads each file named on the command line (offload bundles from
// `hipcc --genco -mcode-object-version=N`, bare .hsaco files, an OpenCL v2
// .hsaco), keeps all of them loaded at once, runs vadd and vadd_g (which reads
// the module global g set with hipModuleGetGlobal) from each, in load order
// and again in reverse order, then unloads them.
// An argument "refuse:FILE" must be refused with hipErrorNoBinaryForGpu.
//
// usage: codeobj_versions FILE... [refuse:FILE...]      prints PASS on success
#include <hip/hip_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x, what)                                                                   \
    do {                                                                                 \
        hipError_t e_ = (x);                                                             \
        if (e_ != hipSuccess) {                                                          \
            printf("FAIL %s: %s: %s\n", what, #x, hipGetErrorName(e_));                   \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

#define N 300
static float *da, *db, *dc;
static int *dout;

static void run(hipModule_t m, const char *file, int round)
{
    hipFunction_t vadd, vg;
    CHECK(hipModuleGetFunction(&vadd, m, "vadd"), file);
    CHECK(hipModuleGetFunction(&vg, m, "vadd_g"), file);
    hipDeviceptr_t g;
    size_t gsize;
    CHECK(hipModuleGetGlobal(&g, &gsize, m, "g"), file);
    if (gsize != 4 * sizeof(int)) {
        printf("FAIL %s: size of g is %zu\n", file, gsize);
        exit(1);
    }
    int hg[4] = {round, round + 1, round + 2, round + 3};
    CHECK(hipMemcpyHtoD(g, hg, sizeof hg), file);
    int n = N;
    void *p1[] = {&da, &db, &dc, &n};
    CHECK(hipModuleLaunchKernel(vadd, (N + 63) / 64, 1, 1, 64, 1, 1, 0, 0, p1, NULL), file);
    void *p2[] = {&dout, &n};
    CHECK(hipModuleLaunchKernel(vg, (N + 127) / 128, 1, 1, 128, 1, 1, 0, 0, p2, NULL), file);
    float c[N];
    int out[N];
    CHECK(hipMemcpyDtoH(c, dc, sizeof c), file);
    CHECK(hipMemcpyDtoH(out, dout, sizeof out), file);
    for (int i = 0; i < N; i++) {
        if (c[i] != (float)i + (float)(2 * i + round)) {
            printf("FAIL %s: vadd[%d] = %f\n", file, i, c[i]);
            exit(1);
        }
        if (out[i] != i * hg[i & 3]) {
            printf("FAIL %s: vadd_g[%d] = %d, want %d\n", file, i, out[i], i * hg[i & 3]);
            exit(1);
        }
    }
}

int main(int argc, char **argv)
{
    hipModule_t mods[32];
    const char *files[32];
    int nm = 0;
    CHECK(hipMalloc(&da, N * sizeof(float)), "hipMalloc");
    CHECK(hipMalloc(&db, N * sizeof(float)), "hipMalloc");
    CHECK(hipMalloc(&dc, N * sizeof(float)), "hipMalloc");
    CHECK(hipMalloc(&dout, N * sizeof(int)), "hipMalloc");
    float ha[N];
    for (int i = 0; i < N; i++)
        ha[i] = (float)i;
    CHECK(hipMemcpyHtoD(da, ha, sizeof ha), "copy");
    for (int a = 1; a < argc && nm < 32; a++) {
        if (!strncmp(argv[a], "refuse:", 7)) {
            hipModule_t m;
            hipError_t e = hipModuleLoad(&m, argv[a] + 7);
            if (e != hipErrorNoBinaryForGpu) {
                printf("FAIL %s: hipModuleLoad gave %s, want hipErrorNoBinaryForGpu\n",
                       argv[a] + 7, hipGetErrorName(e));
                return 1;
            }
            printf("refused: %s\n", argv[a] + 7);
            continue;
        }
        files[nm] = argv[a];
        CHECK(hipModuleLoad(&mods[nm], argv[a]), argv[a]);
        nm++;
    }
    for (int round = 0; round < 2; round++)
        for (int j = 0; j < nm; j++) {
            int i = round ? nm - 1 - j : j;
            float hb[N];
            for (int k = 0; k < N; k++)
                hb[k] = (float)(2 * k + round * 10 + i);
            CHECK(hipMemcpyHtoD(db, hb, sizeof hb), "copy");
            run(mods[i], files[i], round * 10 + i);
            if (round)
                printf("ok: %s\n", files[i]);
        }
    for (int i = 0; i < nm; i++)
        CHECK(hipModuleUnload(mods[i]), files[i]);
    printf("PASS codeobj_versions (%d code objects)\n", nm);
    return 0;
}
