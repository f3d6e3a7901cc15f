/*
 * 403-launch.c - end-to-end dispatch on the functional machine: real hipcc
 * kernels (-O2 and -O0) launched with gcn_launch, results checked on the host.
 * Covers kernarg layout from metadata, the AQL packet (blockDim/gridDim are
 * read from it), partial waves, LDS + s_barrier, global atomics, scratch
 * (private arrays, -O0 stacks), the LDS aperture from amd_queue_t, memory
 * faults, bad configurations, and identical results for 1 and 4 threads.
 *
 * Needs: gcn/ (loader, decoder), emu/isa (gcn_wave_run), hipcc.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "emu/exec/exec_internal.h"
#include "4xx_hipcc_internal.h"

static const char *src =
    "#include <hip/hip_runtime.h>\n"
    "__global__ void saxpy(float a, const float *x, float *y, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n"
    "__global__ void dims(unsigned *o)\n"
    "{ if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {\n"
    "    unsigned b = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;\n"
    "    o[b * 6 + 0] = blockDim.x; o[b * 6 + 1] = blockDim.y; o[b * 6 + 2] = blockDim.z;\n"
    "    o[b * 6 + 3] = gridDim.x; o[b * 6 + 4] = gridDim.y; o[b * 6 + 5] = gridDim.z; } }\n"
    "__global__ void reduce(const unsigned *in, unsigned *part, unsigned long long *tot, int n)\n"
    "{ __shared__ unsigned buf[256]; unsigned s = 0;\n"
    "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += in[i];\n"
    "  buf[threadIdx.x] = s; __syncthreads();\n"
    "  for (int k = blockDim.x / 2; k > 0; k >>= 1) { if ((int)threadIdx.x < k) buf[threadIdx.x] += buf[threadIdx.x + k];\n"
    "    __syncthreads(); }\n"
    "  if (threadIdx.x == 0) { part[blockIdx.x] = buf[0]; atomicAdd(tot, (unsigned long long)buf[0]); } }\n"
    "__global__ void priv(int *o, const int *sel)\n"
    "{ int t[24]; int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  for (int k = 0; k < 24; k++) t[k] = i * 100 + k;\n"
    "  o[i] = t[sel[i] % 24] + t[(sel[i] * 7) % 24]; }\n"
    "__global__ void ldsflat(int *o, int pick)\n"
    "{ __shared__ int s[128]; int x = threadIdx.x; s[x] = x * 3; __syncthreads();\n"
    "  int *p = (pick & 1) ? s : o; o[blockIdx.x * 128 + x] = p[127 - x]; }\n"
    "__global__ void oob(int *o, int off) { o[threadIdx.x + off] = 1; }\n";

static gcn_machine *machine(uint32_t threads)
{
    char err[256];
    gcn_machine_config cfg = {.n_gpus = 1, .n_threads = threads};
    gcn_machine *m = gcn_machine_create(&cfg, err, sizeof(err));
    assert_non_null(m);
    return m;
}

static gcn_module *load(gcn_machine *m, const char *opt)
{
    gcn_code_object *co = t4_build_co(src, opt);
    assert_non_null(co);
    char err[512];
    gcn_module *mod = gcn_module_load(m, co, err, sizeof(err));
    if (!mod)
        fail_msg("%s", err);
    return mod;
}

static const gcn_kernel *kernel(gcn_module *mod, const char *name)
{
    const gcn_kernel *k = gcn_co_find_kernel(gcn_module_co(mod), name);
    if (!k)
        fail_msg("kernel %s not found", name);
    return k;
}

/* Kernarg segment from the kernel's metadata: argument i gets `v`. */
struct kargs {
    uint8_t b[256];
    const gcn_kernel *k;
};
static void karg(struct kargs *a, uint32_t i, const void *v, uint32_t size)
{
    assert_true(i < a->k->n_args);
    assert_int_equal(a->k->args[i].size, size);
    memcpy(a->b + a->k->args[i].offset, v, size);
}
static void karg_ptr(struct kargs *a, uint32_t i, const void *p)
{
    uint64_t v = (uintptr_t)p;
    karg(a, i, &v, 8);
}

static gcn_launch_status launch(gcn_machine *m, gcn_module *mod, const gcn_kernel *k, struct kargs *a,
                                uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz,
                                gcn_launch_result *res)
{
    gcn_launch_params p = {.grid = {gx, gy, gz}, .wg_size = {bx, by, bz}, .kernarg = a->b,
                           .kernarg_size = k->kernarg_segment_size};
    assert_true(k->kernarg_segment_size <= sizeof(a->b));
    return gcn_launch(m, mod, k, &p, res);
}

static void run_saxpy(uint32_t threads, const char *opt, float *out, int n)
{
    gcn_machine *m = machine(threads);
    gcn_module *mod = load(m, opt);
    const gcn_kernel *k = kernel(mod, "_Z5saxpyfPKfPfi");
    float *x = gcn_mem_alloc(m, 0, n * sizeof(float), TRC_MEM_DEVICE);
    float *y = gcn_mem_alloc(m, 0, n * sizeof(float), TRC_MEM_DEVICE);
    for (int i = 0; i < n; i++) {
        x[i] = (float)i * 0.5f;
        y[i] = 1000.0f - (float)i;
    }
    struct kargs a = {.k = k};
    float alpha = 3.0f;
    karg(&a, 0, &alpha, 4);
    karg_ptr(&a, 1, x);
    karg_ptr(&a, 2, y);
    karg(&a, 3, &n, 4);
    gcn_launch_result res;
    uint32_t block = 100; /* waves of 64 and 36 lanes */
    gcn_launch_status st = launch(m, mod, k, &a, (n + block - 1) / block, 1, 1, block, 1, 1, &res);
    if (st != GCN_LAUNCH_OK)
        fail_msg("%s", res.message);
    assert_int_equal(res.waves, 2 * ((n + block - 1) / block));
    assert_true(res.wave_instructions > res.waves);
    memcpy(out, y, n * sizeof(float));
    gcn_module_unload(m, mod);
    gcn_machine_destroy(m);
}

static void test_saxpy(void **state)
{
    (void)state;
    enum { N = 1000 };
    static float y1[N], y4[N], y0[N];
    run_saxpy(1, "-O2", y1, N);
    for (int i = 0; i < N; i++)
        assert_true(y1[i] == 3.0f * ((float)i * 0.5f) + (1000.0f - (float)i));
    run_saxpy(4, "-O2", y4, N);
    assert_memory_equal(y1, y4, sizeof(y1));
    run_saxpy(3, "-O0", y0, N); /* scratch, calls to the HIP coordinate helpers */
    assert_memory_equal(y1, y0, sizeof(y1));
}

static void test_dims_from_packet(void **state)
{
    (void)state;
    gcn_machine *m = machine(2);
    gcn_module *mod = load(m, "-O2");
    const gcn_kernel *k = kernel(mod, "_Z4dimsPj");
    uint32_t gx = 3, gy = 2, gz = 2;
    unsigned *o = gcn_mem_alloc(m, 0, gx * gy * gz * 6 * 4, TRC_MEM_DEVICE);
    struct kargs a = {.k = k};
    karg_ptr(&a, 0, o);
    gcn_launch_result res;
    if (launch(m, mod, k, &a, gx, gy, gz, 8, 4, 2, &res) != GCN_LAUNCH_OK)
        fail_msg("%s", res.message);
    for (uint32_t b = 0; b < gx * gy * gz; b++) {
        unsigned want[6] = {8, 4, 2, gx, gy, gz};
        assert_memory_equal(o + b * 6, want, sizeof(want));
    }
    gcn_module_unload(m, mod);
    gcn_machine_destroy(m);
}

static void run_reduce(uint32_t threads, const char *opt, unsigned *part, unsigned long long *tot)
{
    enum { N = 100000, G = 37 };
    gcn_machine *m = machine(threads);
    gcn_module *mod = load(m, opt);
    const gcn_kernel *k = kernel(mod, "_Z6reducePKjPjPyi");
    unsigned *in = gcn_mem_alloc(m, 0, N * 4, TRC_MEM_DEVICE);
    unsigned *dp = gcn_mem_alloc(m, 0, G * 4, TRC_MEM_DEVICE);
    unsigned long long *dt = gcn_mem_alloc(m, 0, 8, TRC_MEM_DEVICE);
    for (int i = 0; i < N; i++)
        in[i] = (unsigned)((i * 2654435761u) >> 20);
    struct kargs a = {.k = k};
    int n = N;
    karg_ptr(&a, 0, in);
    karg_ptr(&a, 1, dp);
    karg_ptr(&a, 2, dt);
    karg(&a, 3, &n, 4);
    gcn_launch_result res;
    if (launch(m, mod, k, &a, G, 1, 1, 256, 1, 1, &res) != GCN_LAUNCH_OK)
        fail_msg("%s", res.message);
    unsigned long long want = 0;
    for (int i = 0; i < N; i++)
        want += in[i];
    assert_int_equal(*dt, want);
    memcpy(part, dp, G * 4);
    *tot = *dt;
    gcn_module_unload(m, mod);
    gcn_machine_destroy(m);
}

static void test_reduce_barrier_atomics(void **state)
{
    (void)state;
    unsigned p1[37], p4[37], p0[37];
    unsigned long long t1, t4, t0;
    run_reduce(1, "-O2", p1, &t1);
    run_reduce(4, "-O2", p4, &t4);
    assert_memory_equal(p1, p4, sizeof(p1));
    run_reduce(4, "-O0", p0, &t0);
    assert_memory_equal(p1, p0, sizeof(p1));
}

static void test_private_array(void **state)
{
    (void)state;
    enum { N = 256 };
    for (int opt = 0; opt < 2; opt++) {
        gcn_machine *m = machine(2);
        gcn_module *mod = load(m, opt ? "-O0" : "-O2");
        const gcn_kernel *k = kernel(mod, "_Z4privPiPKi");
        int *o = gcn_mem_alloc(m, 0, N * 4, TRC_MEM_DEVICE);
        int *sel = gcn_mem_alloc(m, 0, N * 4, TRC_MEM_DEVICE);
        for (int i = 0; i < N; i++)
            sel[i] = (i * 13 + 5) % 97;
        struct kargs a = {.k = k};
        karg_ptr(&a, 0, o);
        karg_ptr(&a, 1, sel);
        gcn_launch_result res;
        if (launch(m, mod, k, &a, N / 64, 1, 1, 64, 1, 1, &res) != GCN_LAUNCH_OK)
            fail_msg("%s", res.message);
        for (int i = 0; i < N; i++)
            assert_int_equal(o[i], (i * 100 + sel[i] % 24) + (i * 100 + (sel[i] * 7) % 24));
        gcn_module_unload(m, mod);
        gcn_machine_destroy(m);
    }
}

static void test_lds_through_flat(void **state)
{
    (void)state;
    gcn_machine *m = machine(2);
    gcn_module *mod = load(m, "-O2");
    const gcn_kernel *k = kernel(mod, "_Z7ldsflatPii");
    int *o = gcn_mem_alloc(m, 0, 4 * 128 * 4, TRC_MEM_DEVICE);
    struct kargs a = {.k = k};
    int pick = 1;
    karg_ptr(&a, 0, o);
    karg(&a, 1, &pick, 4);
    gcn_launch_result res;
    if (launch(m, mod, k, &a, 4, 1, 1, 128, 1, 1, &res) != GCN_LAUNCH_OK)
        fail_msg("%s", res.message);
    for (int i = 0; i < 4 * 128; i++)
        assert_int_equal(o[i], (127 - i % 128) * 3);
    gcn_module_unload(m, mod);
    gcn_machine_destroy(m);
}

static void test_fault(void **state)
{
    (void)state;
    gcn_machine *m = machine(4);
    gcn_module *mod = load(m, "-O2");
    const gcn_kernel *k = kernel(mod, "_Z3oobPii");
    int *o = gcn_mem_alloc(m, 0, 64 * 4, TRC_MEM_DEVICE);
    struct kargs a = {.k = k};
    int off = 1 << 24; /* 64 MiB past the buffer */
    karg_ptr(&a, 0, o);
    karg(&a, 1, &off, 4);
    gcn_launch_result res;
    assert_int_equal(launch(m, mod, k, &a, 8, 1, 1, 64, 1, 1, &res), GCN_LAUNCH_FAULT);
    assert_int_equal(res.status, GCN_LAUNCH_FAULT);
    assert_non_null(strstr(res.message, "memory fault in kernel _Z3oobPii: wg ("));
    assert_non_null(strstr(res.message, "write of 4 bytes at 0x"));
    assert_non_null(strstr(res.message, "outside every allocation"));
    /* in bounds: the same kernel runs */
    off = 0;
    karg(&a, 1, &off, 4);
    if (launch(m, mod, k, &a, 1, 1, 1, 64, 1, 1, &res) != GCN_LAUNCH_OK)
        fail_msg("%s", res.message);
    assert_int_equal(o[63], 1);
    /* the machine is still usable after a fault and the table is intact */
    gcn_alloc_info info;
    assert_int_equal(gcn_mem_find(m, (uintptr_t)o, 256, &info), 1);
    gcn_module_unload(m, mod);
    gcn_machine_destroy(m);
}

static void test_bad_config(void **state)
{
    (void)state;
    gcn_machine *m = machine(1);
    gcn_module *mod = load(m, "-O2");
    const gcn_kernel *k = kernel(mod, "_Z3oobPii");
    struct kargs a = {.k = k};
    gcn_launch_result res;
    assert_int_equal(launch(m, mod, k, &a, 1, 1, 1, 1025, 1, 1, &res), GCN_LAUNCH_BAD_CONFIG);
    assert_non_null(strstr(res.message, "1025"));
    assert_int_equal(launch(m, mod, k, &a, 0, 1, 1, 64, 1, 1, &res), GCN_LAUNCH_BAD_CONFIG);
    gcn_launch_params p = {.grid = {1, 1, 1}, .wg_size = {64, 1, 1}, .dynamic_lds = 70000,
                           .kernarg = a.b, .kernarg_size = k->kernarg_segment_size};
    assert_int_equal(gcn_launch(m, mod, k, &p, &res), GCN_LAUNCH_BAD_CONFIG);
    assert_non_null(strstr(res.message, "LDS"));
    p.dynamic_lds = 0;
    p.device = 3;
    assert_int_equal(gcn_launch(m, mod, k, &p, &res), GCN_LAUNCH_BAD_CONFIG);
    gcn_module_unload(m, mod);
    gcn_machine_destroy(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_saxpy),
        cmocka_unit_test(test_dims_from_packet),
        cmocka_unit_test(test_reduce_barrier_atomics),
        cmocka_unit_test(test_private_array),
        cmocka_unit_test(test_lds_through_flat),
        cmocka_unit_test(test_fault),
        cmocka_unit_test(test_bad_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
