/*
 * 211-hip-surface.c - the HIP runtime surface that HIP-sample-style programs
 * use, called the way hipcc-built programs call it (library dlopen'ed from
 * $TEST_BUILD/lib as in 210-hip-runtime.c, two emulated GPUs): device
 * queries, peer queries and copies, streams and events, pitched and managed
 * memory, registered host memory, pointer attributes, occupancy and the
 * cooperative-launch size check (with the committed vectoradd bundle).
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

static void test_device_queries(void **state)
{
    (void)state;
    int v = -1;
    assert_int_equal(FN(hipDeviceGetAttribute)(&v, hipDeviceAttributeCooperativeLaunch, 0), hipSuccess);
    assert_int_equal(v, 1);
    assert_int_equal(FN(hipDeviceGetAttribute)(&v, hipDeviceAttributeManagedMemory, 1), hipSuccess);
    assert_int_equal(v, 1);
    size_t mem = 0;
    assert_int_equal(FN(hipDeviceTotalMem)(&mem, 1), hipSuccess);
    assert_true(mem == (size_t)4 << 30);
    assert_int_equal(FN(hipDeviceTotalMem)(&mem, 2), hipErrorInvalidDevice);
    char id[32];
    assert_int_equal(FN(hipDeviceGetPCIBusId)(id, sizeof id, 1), hipSuccess);
    assert_string_equal(id, "0000:02:00.0");
    int d = -1;
    assert_int_equal(FN(hipDeviceGetByPCIBusId)(&d, id), hipSuccess);
    assert_int_equal(d, 1);
    assert_int_equal(FN(hipDeviceGetPCIBusId)(id, 4, 0), hipErrorInvalidValue);
    assert_int_equal(FN(hipDeviceGetP2PAttribute)(&v, hipDevP2PAttrAccessSupported, 0, 1), hipSuccess);
    assert_int_equal(v, 1);
    assert_int_equal(FN(hipDeviceGetP2PAttribute)(&v, hipDevP2PAttrAccessSupported, 0, 0),
                     hipErrorInvalidDevice);
    hipDeviceProp_t p;
    memset(&p, 0, sizeof p);
    assert_int_equal(FN(hipChooseDevice)(&d, &p), hipSuccess);
    assert_true(d == 0 || d == 1);
    int least = 5, greatest = 5;
    assert_int_equal(FN(hipDeviceGetStreamPriorityRange)(&least, &greatest), hipSuccess);
    assert_true(greatest <= least);
}

static void test_streams_events(void **state)
{
    (void)state;
    hipStream_t s;
    assert_int_equal(FN(hipStreamCreateWithPriority)(&s, hipStreamNonBlocking, -100), hipSuccess);
    unsigned fl = 0;
    int pr = 0, least, greatest;
    FN(hipDeviceGetStreamPriorityRange)(&least, &greatest);
    assert_int_equal(FN(hipStreamGetFlags)(s, &fl), hipSuccess);
    assert_int_equal(fl, hipStreamNonBlocking);
    assert_int_equal(FN(hipStreamGetPriority)(s, &pr), hipSuccess);
    assert_int_equal(pr, greatest); /* clamped */
    assert_int_equal(FN(hipStreamCreateWithFlags)(&s, 0x80), hipErrorInvalidValue);
    hipEvent_t a, b;
    assert_int_equal(FN(hipEventCreate)(&a), hipSuccess);
    assert_int_equal(FN(hipEventCreateWithFlags)(&b, hipEventDisableTiming), hipSuccess);
    float ms;
    assert_int_equal(FN(hipEventElapsedTime)(&ms, a, a), hipErrorNotReady);
    assert_int_equal(FN(hipEventRecord)(a, NULL), hipSuccess);
    assert_int_equal(FN(hipEventRecord)(b, NULL), hipSuccess);
    assert_int_equal(FN(hipEventElapsedTime)(&ms, a, b), hipErrorInvalidHandle);
    assert_int_equal(FN(hipStreamWaitEvent)(NULL, b, 0), hipSuccess);
    assert_int_equal(FN(hipStreamWaitEvent)(NULL, b, 1), hipErrorInvalidValue);
    FN(hipGetLastError)();
    FN(hipEventDestroy)(a);
    FN(hipEventDestroy)(b);
}

static int cb_calls;
static void cb(hipStream_t s, hipError_t st, void *u)
{
    (void)s;
    if (st == hipSuccess && u == &cb_calls)
        cb_calls++;
}

static void test_callback(void **state)
{
    (void)state;
    assert_int_equal(FN(hipStreamAddCallback)(NULL, cb, &cb_calls, 0), hipSuccess);
    assert_int_equal(cb_calls, 1);
    assert_int_equal(FN(hipStreamAddCallback)(NULL, cb, &cb_calls, 1), hipErrorInvalidValue);
    assert_int_equal(cb_calls, 1);
    FN(hipGetLastError)();
}

static void test_pitch_2d(void **state)
{
    (void)state;
    enum { W = 100, H = 5 };
    uint8_t host[H][W], back[H][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            host[y][x] = (uint8_t)(y * 31 + x);
    void *d;
    size_t pitch = 0;
    assert_int_equal(FN(hipMallocPitch)(&d, &pitch, W, H), hipSuccess);
    assert_int_equal(pitch, 256);
    assert_int_equal(FN(hipMemset2D)(d, pitch, 0xab, pitch, H), hipSuccess);
    assert_int_equal(FN(hipMemcpy2D)(d, pitch, host, W, W, H, hipMemcpyHostToDevice), hipSuccess);
    /* padding untouched by the 2-D copy */
    assert_int_equal(((uint8_t *)d)[pitch + W], 0xab);
    memset(back, 0, sizeof back);
    assert_int_equal(FN(hipMemcpy2D)(back, W, d, pitch, W, H, hipMemcpyDeviceToHost), hipSuccess);
    assert_memory_equal(back, host, sizeof host);
    assert_int_equal(FN(hipMemcpy2D)(d, 8, host, W, W, H, hipMemcpyHostToDevice), hipErrorInvalidPitchValue);
    FN(hipGetLastError)();
    assert_int_equal(FN(hipFree)(d), hipSuccess);
}

static void test_managed_and_attributes(void **state)
{
    (void)state;
    int *m;
    size_t before, after, total;
    FN(hipMemGetInfo)(&before, &total);
    assert_int_equal(FN(hipMallocManaged)((void **)&m, 4096, hipMemAttachGlobal), hipSuccess);
    FN(hipMemGetInfo)(&after, &total);
    assert_true(before - after >= 4096);
    m[1023] = 7; /* host access */
    hipPointerAttribute_t at;
    assert_int_equal(FN(hipPointerGetAttributes)(&at, m + 5), hipSuccess);
    assert_int_equal(at.isManaged, 1);
    assert_int_equal(at.memoryType, hipMemoryTypeDevice);
    assert_int_equal(FN(hipMallocManaged)((void **)&m, 16, 0x77), hipErrorInvalidValue);
    int local;
    assert_int_equal(FN(hipPointerGetAttributes)(&at, &local), hipErrorInvalidValue);
    FN(hipGetLastError)();
    void *h;
    assert_int_equal(FN(hipHostMalloc)(&h, 64, hipHostMallocMapped), hipSuccess);
    unsigned fl = 0;
    assert_int_equal(FN(hipHostGetFlags)(&fl, h), hipSuccess);
    assert_int_equal(fl, hipHostMallocMapped);
    assert_int_equal(FN(hipPointerGetAttributes)(&at, h), hipSuccess);
    assert_int_equal(at.memoryType, hipMemoryTypeHost);
    assert_int_equal(FN(hipHostFree)(h), hipSuccess);
}

static void test_host_register(void **state)
{
    (void)state;
    static int buf[256];
    buf[3] = 42;
    assert_int_equal(FN(hipHostRegister)(buf, sizeof buf, hipHostRegisterMapped), hipSuccess);
    assert_int_equal(FN(hipHostRegister)(buf + 8, 16, 0), hipErrorHostMemoryAlreadyRegistered);
    void *dp = NULL;
    assert_int_equal(FN(hipHostGetDevicePointer)(&dp, buf + 3, 0), hipSuccess);
    assert_non_null(dp);
    assert_int_equal(*(int *)dp, 42); /* the mirror starts with the program's bytes */
    hipPointerAttribute_t at;
    assert_int_equal(FN(hipPointerGetAttributes)(&at, buf + 3), hipSuccess);
    assert_ptr_equal(at.devicePointer, dp);
    assert_ptr_equal(at.hostPointer, buf + 3);
    /* device-to-host copy from the mirror */
    int x = 0;
    assert_int_equal(FN(hipMemcpy)(&x, dp, sizeof x, hipMemcpyDefault), hipSuccess);
    assert_int_equal(x, 42);
    assert_int_equal(FN(hipHostUnregister)(buf), hipSuccess);
    assert_int_equal(FN(hipHostUnregister)(buf), hipErrorHostMemoryNotRegistered);
    FN(hipGetLastError)();
}

static void test_peer(void **state)
{
    (void)state;
    int *a, *b;
    assert_int_equal(FN(hipSetDevice)(0), hipSuccess);
    assert_int_equal(FN(hipMalloc)((void **)&a, 1024), hipSuccess);
    assert_int_equal(FN(hipMemsetD32)(a, 0x12345678, 256), hipSuccess);
    assert_int_equal(FN(hipSetDevice)(1), hipSuccess);
    assert_int_equal(FN(hipMalloc)((void **)&b, 1024), hipSuccess);
    hipPointerAttribute_t at;
    FN(hipPointerGetAttributes)(&at, b);
    assert_int_equal(at.device, 1);
    assert_int_equal(FN(hipMemcpyPeer)(b, 1, a, 0, 1024), hipSuccess);
    assert_int_equal(b[255], 0x12345678);
    assert_int_equal(FN(hipMemcpyPeer)(b, 1, a, 7, 1024), hipErrorInvalidDevice);
    int host[4];
    assert_int_equal(FN(hipMemcpyPeer)(host, 1, a, 0, sizeof host), hipErrorInvalidValue);
    hipStream_t s;
    FN(hipStreamCreate)(&s);
    assert_int_equal(FN(hipMemsetD16Async)(b, 0x0102, 512, s), hipSuccess);
    assert_int_equal(FN(hipMemcpyPeerAsync)(a, 0, b, 1, 1024, s), hipSuccess);
    assert_int_equal(a[17], 0x01020102);
    assert_int_equal(FN(hipMemcpyWithStream)(host, a, sizeof host, hipMemcpyDeviceToHost, s), hipSuccess);
    assert_int_equal(host[3], 0x01020102);
    FN(hipStreamDestroy)(s);
    FN(hipGetLastError)();
    FN(hipFree)(b);
    FN(hipSetDevice)(0);
    FN(hipFree)(a);
}

/* vectoradd from tests/emu/data (as in 210-hip-runtime.c) */
static uint8_t *load_bundle(size_t *len)
{
    char path[512];
    const char *f = __FILE__, *slash = strrchr(f, '/');
    snprintf(path, sizeof path, "%.*s/data/vectoradd.bundle", slash ? (int)(slash - f) : 1,
             slash ? f : ".");
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

static struct {
    uint32_t magic, version;
    const void *bundle;
    void *reserved;
} wrapper;
static const char stub_vadd = 0;

typedef void **(*reg_fatbin_fn)(const void *);
typedef void (*reg_fn_fn)(void **, const void *, char *, const char *, unsigned, void *, void *,
                          dim3 *, dim3 *, int *);

static void test_occupancy_and_coop(void **state)
{
    (void)state;
    size_t blen;
    wrapper.magic = 0x48495046;
    wrapper.version = 1;
    wrapper.bundle = load_bundle(&blen);
    void **mod = ((reg_fatbin_fn)sym("__hipRegisterFatBinary"))(&wrapper);
    const char *kname = "_Z9vectoraddPKfS0_Pfi";
    ((reg_fn_fn)sym("__hipRegisterFunction"))(mod, &stub_vadd, (char *)kname, kname, -1u, NULL, NULL,
                                              NULL, NULL, NULL);
    int n = 0;
    assert_int_equal(FN(hipOccupancyMaxActiveBlocksPerMultiprocessor)(&n, &stub_vadd, 256, 0), hipSuccess);
    assert_true(n >= 1 && n <= 16);
    int n_lds = 0;
    assert_int_equal(FN(hipOccupancyMaxActiveBlocksPerMultiprocessor)(&n_lds, &stub_vadd, 64, 40 * 1024),
                     hipSuccess);
    assert_int_equal(n_lds, 1); /* 40 KiB of 64 KiB: one workgroup per CU */
    int grid = 0, block = 0;
    assert_int_equal(FN(hipOccupancyMaxPotentialBlockSize)(&grid, &block, &stub_vadd, 0, 0), hipSuccess);
    assert_true(block >= 64 && block % 64 == 0 && block <= 1024);
    assert_true(grid >= 64);
    assert_int_equal(FN(hipFuncSetAttribute)(&stub_vadd, hipFuncAttributeMaxDynamicSharedMemorySize, 1 << 20),
                     hipErrorInvalidValue);
    FN(hipGetLastError)();

    enum { N = 512 };
    float *da, *db, *dc;
    FN(hipSetDevice)(0);
    FN(hipMalloc)((void **)&da, N * 4);
    FN(hipMalloc)((void **)&db, N * 4);
    FN(hipMalloc)((void **)&dc, N * 4);
    int nn = N;
    void *args[] = {&da, &db, &dc, &nn};
    dim3 bl = {256, 1, 1};
    int per_cu = 0;
    FN(hipOccupancyMaxActiveBlocksPerMultiprocessor)(&per_cu, &stub_vadd, 256, 0);
    dim3 too_big = {(unsigned)per_cu * 64 + 1, 1, 1};
    assert_int_equal(FN(hipLaunchCooperativeKernel)(&stub_vadd, too_big, bl, args, 0, NULL),
                     hipErrorCooperativeLaunchTooLarge);
    FN(hipGetLastError)();
    /* a cooperative launch without grid sync runs like a plain one */
    dim3 g2 = {N / 256, 1, 1};
    for (int i = 0; i < N; i++)
        da[i] = (float)i, db[i] = 1.0f;
    assert_int_equal(FN(hipLaunchCooperativeKernel)(&stub_vadd, g2, bl, args, 0, NULL), hipSuccess);
    assert_true(dc[N - 1] == (float)N);
    hipEvent_t e0, e1;
    FN(hipEventCreate)(&e0);
    FN(hipEventCreate)(&e1);
    memset(dc, 0, N * 4);
    assert_int_equal(FN(hipExtLaunchKernel)(&stub_vadd, g2, bl, args, 0, NULL, e0, e1, 0), hipSuccess);
    assert_true(dc[7] == 8.0f);
    float ms = -1;
    assert_int_equal(FN(hipEventElapsedTime)(&ms, e0, e1), hipSuccess);
    assert_true(ms >= 0);
    FN(hipFree)(da);
    FN(hipFree)(db);
    FN(hipFree)(dc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_queries),  cmocka_unit_test(test_streams_events),
        cmocka_unit_test(test_callback),        cmocka_unit_test(test_pitch_2d),
        cmocka_unit_test(test_managed_and_attributes), cmocka_unit_test(test_host_register),
        cmocka_unit_test(test_peer),            cmocka_unit_test(test_occupancy_and_coop),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
