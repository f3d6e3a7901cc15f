/*
 * 210-hip-runtime.c - our libamdhip64.so.5, called the way hipcc-built
 * programs call it, without hipcc at test time.
 *
 * The library is dlopen'ed from $TEST_BUILD/lib (default build/lib) after the
 * GCN3EMU_* variables are set, as the gcn3-emu launcher would. Kernel tests
 * register the committed vectoradd offload bundle (tests/emu/data, see
 * 200-loader.c) through a hipcc-style fat binary wrapper, exactly as the
 * compiler's constructor does, then launch through hipLaunchKernel with one
 * pointer per argument.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>

#include "21x_hip_dl.h"

typedef void **(*reg_fatbin_fn)(const void *);
typedef void (*reg_fn_fn)(void **, const void *, char *, const char *, unsigned, void *, void *,
                          dim3 *, dim3 *, int *);
typedef hipError_t (*push_fn)(dim3, dim3, size_t, hipStream_t);
typedef hipError_t (*pop_fn)(dim3 *, dim3 *, size_t *, hipStream_t *);

static uint8_t *load(const char *name, size_t *len)
{
    char path[512];
    const char *f = __FILE__;
    const char *slash = strrchr(f, '/');
    snprintf(path, sizeof path, "%.*s/data/%s", slash ? (int)(slash - f) : 1, slash ? f : ".",
             name);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        fail_msg("cannot open %s (run from the repository root)", path);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n);
    assert_int_equal(fread(b, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    *len = (size_t)n;
    return b;
}

static void test_device_props(void **state)
{
    int n = 0;
    assert_int_equal(FN(hipGetDeviceCount)(&n), hipSuccess);
    assert_int_equal(n, 2);
    hipDeviceProp_t p;
    _Static_assert(sizeof p == 792, "HIP 5.2 hipDeviceProp_t is 792 bytes");
    assert_int_equal(FN(hipGetDeviceProperties)(&p, 0), hipSuccess);
    assert_string_equal(p.gcnArchName, "gfx803");
    assert_int_equal(p.warpSize, 64);
    assert_int_equal(p.multiProcessorCount, 64);
    assert_int_equal(p.clockRate, 1000000);
    assert_int_equal(p.totalGlobalMem, (size_t)4 << 30);
    assert_int_equal(p.sharedMemPerBlock, 65536);
    assert_int_equal(p.maxThreadsPerBlock, 1024);
    assert_int_equal(p.major, 8);
    assert_int_equal(FN(hipGetDeviceProperties)(&p, 2), hipErrorInvalidDevice);
    int v = 0;
    assert_int_equal(FN(hipDeviceGetAttribute)(&v, hipDeviceAttributeWarpSize, 1), hipSuccess);
    assert_int_equal(v, 64);
    assert_int_equal(FN(hipSetDevice)(2), hipErrorInvalidDevice);
    assert_int_equal(FN(hipGetLastError)(), hipErrorInvalidDevice);
    assert_int_equal(FN(hipGetLastError)(), hipSuccess);
    assert_int_equal(FN(hipSetDevice)(1), hipSuccess);
    assert_int_equal(FN(hipGetDevice)(&v), hipSuccess);
    assert_int_equal(v, 1);
    assert_int_equal(FN(hipSetDevice)(0), hipSuccess);
    int rv = 0;
    assert_int_equal(FN(hipRuntimeGetVersion)(&rv), hipSuccess);
    assert_int_equal(rv, HIP_VERSION);
}

static void test_errors_and_stubs(void **state)
{
    assert_string_equal(FN(hipGetErrorName)(hipErrorIllegalAddress), "hipErrorIllegalAddress");
    assert_string_equal(FN(hipGetErrorString)(hipSuccess), "no error");
    /* A stub: loud, and never a fake success. */
    hipError_t (*m3)(hipPitchedPtr *, hipExtent) = sym("hipMalloc3D");
    hipPitchedPtr pp = {0};
    assert_int_equal(m3(&pp, make_hipExtent(64, 4, 2)), hipErrorNotSupported);
    assert_null(pp.ptr);
    assert_int_equal(FN(hipGetLastError)(), hipErrorNotSupported);
    /* Internal symbols are not exported. */
    assert_null(dlsym(lib, "hip_init"));
    assert_null(dlsym(lib, "gcn_co_parse"));
}

static void test_memory(void **state)
{
    enum { N = 1000 };
    uint32_t h[N], r[N];
    for (int i = 0; i < N; i++)
        h[i] = (uint32_t)i * 2654435761u;
    size_t free0, total;
    assert_int_equal(FN(hipMemGetInfo)(&free0, &total), hipSuccess);
    assert_int_equal(total, (size_t)4 << 30);
    void *a = NULL, *b = NULL;
    assert_int_equal(FN(hipMalloc)(&a, sizeof h), hipSuccess);
    assert_int_equal(FN(hipMalloc)(&b, sizeof h), hipSuccess);
    assert_non_null(a);
    size_t free1;
    FN(hipMemGetInfo)(&free1, &total);
    assert_int_equal(free0 - free1, 2 * sizeof h);
    assert_int_equal(FN(hipMemcpy)(a, h, sizeof h, hipMemcpyHostToDevice), hipSuccess);
    assert_int_equal(FN(hipMemcpy)(b, a, sizeof h, hipMemcpyDefault), hipSuccess);
    memset(r, 0, sizeof r);
    assert_int_equal(FN(hipMemcpy)(r, b, sizeof r, hipMemcpyDeviceToHost), hipSuccess);
    assert_memory_equal(r, h, sizeof h);
    /* Direction contradicting the pointers, or a range past the allocation. */
    assert_int_equal(FN(hipMemcpy)(r, b, sizeof r, hipMemcpyHostToDevice), hipErrorInvalidValue);
    assert_int_equal(FN(hipMemcpy)((char *)a + 4, h, sizeof h, hipMemcpyHostToDevice),
                     hipErrorInvalidValue);
    assert_int_equal(FN(hipMemset)(a, 0xab, sizeof h), hipSuccess);
    assert_int_equal(FN(hipMemsetD32)((char *)a + 8, 0x12345678, 3), hipSuccess);
    FN(hipMemcpy)(r, a, sizeof r, hipMemcpyDeviceToHost);
    assert_int_equal(r[0], 0xabababab);
    assert_int_equal(r[2], 0x12345678);
    assert_int_equal(r[4], 0x12345678);
    assert_int_equal(r[5], 0xabababab);
    assert_int_equal(FN(hipMemset)(h, 0, 4), hipErrorInvalidValue); /* host pointer */
    assert_int_equal(FN(hipFree)(h), hipErrorInvalidValue);
    assert_int_equal(FN(hipFree)(a), hipSuccess);
    assert_int_equal(FN(hipFree)(a), hipErrorInvalidValue); /* double free */
    assert_int_equal(FN(hipFree)(b), hipSuccess);
    assert_int_equal(FN(hipFree)(NULL), hipSuccess);
    FN(hipGetLastError)();
}

static void test_call_config(void **state)
{
    dim3 g = {3, 2, 1}, bl = {64, 1, 1}, g2, b2;
    size_t sh = 0;
    hipStream_t s = (hipStream_t)0;
    push_fn push = (push_fn)sym("__hipPushCallConfiguration");
    pop_fn pop = (pop_fn)sym("__hipPopCallConfiguration");
    assert_int_equal(push(g, bl, 128, s), hipSuccess);
    assert_int_equal(pop(&g2, &b2, &sh, &s), hipSuccess);
    assert_int_equal(g2.x, 3);
    assert_int_equal(g2.y, 2);
    assert_int_equal(b2.x, 64);
    assert_int_equal(sh, 128);
    assert_int_equal(pop(&g2, &b2, &sh, &s), hipErrorMissingConfiguration);
    FN(hipGetLastError)();
}

static struct {
    uint32_t magic, version;
    const void *bundle;
    void *reserved;
} wrapper, wrapper906;

/* Stand-ins for the host stubs hipcc generates: only their addresses matter. */
static const char host_stub_vadd = 0, host_stub_906 = 0;

static void test_launch(void **state)
{
    size_t blen;
    uint8_t *bundle = load("vectoradd.bundle", &blen);
    wrapper = (__typeof__(wrapper)){0x48495046, 1, bundle, NULL};
    void **mod = ((reg_fatbin_fn)sym("__hipRegisterFatBinary"))(&wrapper);
    assert_non_null(mod);
    const char *kname = "_Z9vectoraddPKfS0_Pfi";
    ((reg_fn_fn)sym("__hipRegisterFunction"))(mod, &host_stub_vadd, (char *)kname, kname, -1u,
                                              NULL, NULL, NULL, NULL, NULL);
    enum { N = 1000 }; /* 4 workgroups of 256, the last one partial */
    float ha[N], hb[N], hc[N];
    for (int i = 0; i < N; i++)
        ha[i] = (float)i * 0.5f, hb[i] = (float)(i % 7) * 0.25f;
    float *da, *db, *dc;
    FN(hipMalloc)((void **)&da, sizeof ha);
    FN(hipMalloc)((void **)&db, sizeof hb);
    FN(hipMalloc)((void **)&dc, sizeof hc);
    FN(hipMemcpy)(da, ha, sizeof ha, hipMemcpyHostToDevice);
    FN(hipMemcpy)(db, hb, sizeof hb, hipMemcpyHostToDevice);
    FN(hipMemset)(dc, 0xff, sizeof hc);
    int n = N;
    void *args[] = {&da, &db, &dc, &n};
    dim3 grid = {(N + 255) / 256, 1, 1}, block = {256, 1, 1};
    hipError_t e = FN(hipLaunchKernel)(&host_stub_vadd, grid, block, args, 0, NULL);
    assert_int_equal(e, hipSuccess);
    assert_int_equal(FN(hipDeviceSynchronize)(), hipSuccess);
    FN(hipMemcpy)(hc, dc, sizeof hc, hipMemcpyDeviceToHost);
    for (int i = 0; i < N; i++)
        if (hc[i] != ha[i] + hb[i])
            fail_msg("c[%d] = %g, want %g", i, hc[i], ha[i] + hb[i]);

    /* Unknown host function, bad configuration. */
    assert_int_equal(FN(hipLaunchKernel)(&n, grid, block, args, 0, NULL),
                     hipErrorInvalidDeviceFunction);
    dim3 big = {2048, 1, 1};
    assert_int_equal(FN(hipLaunchKernel)(&host_stub_vadd, grid, big, args, 0, NULL),
                     hipErrorInvalidConfiguration);

    /* Another target: the launch fails with hipErrorNoBinaryForGpu. */
    uint8_t *b906 = malloc(blen);
    memcpy(b906, bundle, blen);
    uint8_t *t = memmem(b906, 0x100, "gfx803", 6);
    assert_non_null(t);
    memcpy(t, "gfx906", 6);
    wrapper906 = (__typeof__(wrapper906)){0x48495046, 1, b906, NULL};
    void **mod906 = ((reg_fatbin_fn)sym("__hipRegisterFatBinary"))(&wrapper906);
    ((reg_fn_fn)sym("__hipRegisterFunction"))(mod906, &host_stub_906, (char *)kname, kname, -1u,
                                              NULL, NULL, NULL, NULL, NULL);
    assert_int_equal(FN(hipLaunchKernel)(&host_stub_906, grid, block, args, 0, NULL),
                     hipErrorNoBinaryForGpu);

    /* A memory fault becomes the sticky hipErrorIllegalAddress. */
    float *bad = (float *)(uintptr_t)0x1000;
    void *args_bad[] = {&da, &db, &bad, &n};
    assert_int_equal(FN(hipLaunchKernel)(&host_stub_vadd, grid, block, args_bad, 0, NULL),
                     hipErrorIllegalAddress);
    assert_int_equal(FN(hipDeviceSynchronize)(), hipErrorIllegalAddress);
    assert_int_equal(FN(hipMemcpy)(hc, dc, sizeof hc, hipMemcpyDeviceToHost),
                     hipErrorIllegalAddress);
    assert_int_equal(FN(hipDeviceReset)(), hipSuccess);
    assert_int_equal(FN(hipDeviceSynchronize)(), hipSuccess);
    FN(hipGetLastError)();
    /* b906 and bundle stay alive: the runtime keeps pointers into them. */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_props), cmocka_unit_test(test_errors_and_stubs),
        cmocka_unit_test(test_memory),       cmocka_unit_test(test_call_config),
        cmocka_unit_test(test_launch),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
