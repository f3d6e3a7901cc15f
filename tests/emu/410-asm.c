/*
 * 410-asm.c - kernels written in GCN3 assembly (tests/asm/kernels.s), one or
 * more per encoding family (SOP1/SOP2/SOPK/SOPC/SOPP + SMEM loads and stores;
 * VOP1/VOP2/VOPC/VOP3 + FLAT; DS with s_barrier over two waves; MUBUF offen /
 * idxen / out of range / atomic with return + MTBUF), assembled with
 * `llvm-mc -triple=amdgcn-amd-amdhsa -mcpu=gfx803 -filetype=obj` and
 * `ld.lld -shared` into a code object v4 (e_flags 0x2a, as hipcc's), loaded
 * and launched on the machine (gcn_module_load / gcn_launch, the layer under
 * the HIP runtime) and checked against outputs worked out here from the ISA
 * manual's definitions. The fault kernels (s_trap, a store outside every
 * allocation, an invalid word, a graphics instruction) must fail the launch
 * with the right status and a message naming kernel, workgroup, wave, pc and
 * instruction.
 *
 * Needs llvm-mc and ld.lld ($LLVM_MC, $LD_LLD override); TEST_SRCDIR (default
 * ".") locates tests/asm.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu/exec/gcn_exec.h"
#include "gcn/gcn_loader.h"

static gcn_machine *g_m;
static gcn_module *g_mod;

static int build(void **state)
{
    (void)state;
    const char *src = getenv("TEST_SRCDIR");
    const char *mc = getenv("LLVM_MC"), *ld = getenv("LD_LLD");
    char dir[] = "/tmp/gcn-asm-test-XXXXXX", cmd[2048], obj[300], co_path[300];
    if (!mkdtemp(dir)) return -1;
    snprintf(obj, sizeof obj, "%s/k.o", dir);
    snprintf(co_path, sizeof co_path, "%s/k.co", dir);
    snprintf(cmd, sizeof cmd,
             "%s -triple=amdgcn-amd-amdhsa -mcpu=gfx803 -filetype=obj %s/tests/asm/kernels.s -o %s && "
             "%s -shared %s -o %s",
             mc && *mc ? mc : "llvm-mc", src && *src ? src : ".", obj, ld && *ld ? ld : "ld.lld", obj, co_path);
    int rc = system(cmd);
    FILE *f = rc == 0 ? fopen(co_path, "rb") : NULL;
    gcn_code_object *co = NULL;
    if (f) {
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        unsigned char *buf = malloc((size_t)n);
        char err[512];
        if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n &&
            gcn_co_parse(buf, (size_t)n, &co, err, sizeof err) != GCN_LD_OK) {
            fprintf(stderr, "410-asm: %s\n", err);
            co = NULL;
        }
        free(buf);
        fclose(f);
    } else {
        fprintf(stderr, "410-asm: '%s' failed\n", cmd);
    }
    unlink(obj);
    unlink(co_path);
    rmdir(dir);
    if (!co) return -1;
    gcn_machine_config cfg = {.n_gpus = 1, .n_threads = 2};
    char err[512];
    g_m = gcn_machine_create(&cfg, err, sizeof err);
    if (!g_m) return -1;
    g_mod = gcn_module_load(g_m, co, err, sizeof err);
    if (!g_mod) { fprintf(stderr, "410-asm: %s\n", err); return -1; }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gcn_module_unload(g_m, g_mod);
    gcn_machine_destroy(g_m);
    return 0;
}

#define NOUT 1024
typedef struct run { uint32_t *in, *out; gcn_launch_result res; } run;

static gcn_launch_status launch(const char *name, uint32_t grid, uint32_t wg, uint32_t x, run *r)
{
    const gcn_kernel *k = gcn_co_find_kernel(gcn_module_co(g_mod), name);
    assert_non_null(k);
    r->in = gcn_mem_alloc(g_m, 0, NOUT * 4, TRC_MEM_DEVICE);
    r->out = gcn_mem_alloc(g_m, 0, NOUT * 4, TRC_MEM_DEVICE);
    assert_non_null(r->in);
    assert_non_null(r->out);
    for (unsigned i = 0; i < NOUT; i++) r->in[i] = i * 3 + 1;
    struct { uint64_t in, out; uint32_t x, pad; } ka = {(uint64_t)(uintptr_t)r->in, (uint64_t)(uintptr_t)r->out, x, 0};
    gcn_launch_params p = {.grid = {grid, 1, 1}, .wg_size = {wg, 1, 1}, .kernarg = &ka, .kernarg_size = sizeof ka};
    memset(&r->res, 0, sizeof r->res);
    gcn_launch_status st = gcn_launch(g_m, g_mod, k, &p, &r->res);
    if (st != GCN_LAUNCH_OK) print_message("%s: %s\n", name, r->res.message);
    return st;
}
static void done(run *r)
{
    gcn_mem_free(g_m, r->in);
    gcn_mem_free(g_m, r->out);
}

static uint32_t brev32(uint32_t v)
{
    uint32_t r = 0;
    for (int i = 0; i < 32; i++) r |= ((v >> i) & 1u) << (31 - i);
    return r;
}

static void test_scalar(void **state)
{
    (void)state;
    run r;
    uint32_t x = 0x12345678;
    assert_int_equal(launch("k_scalar", 1, 64, x, &r), GCN_LAUNCH_OK);
    uint32_t want[16] = {
        (uint32_t)__builtin_popcount(x), (uint32_t)__builtin_ctz(x), (uint32_t)__builtin_clz(x), (x >> 4) & 0xff,
        brev32(x), 45, 294, 1,
        4, 7, 1, 0x3c0,
        64, 0x23, 0xffffff80u, 5,
    };
    for (int i = 0; i < 16; i++) {
        if (r.out[i] != want[i]) print_message("out[%d] = 0x%x, want 0x%x\n", i, r.out[i], want[i]);
        assert_int_equal(r.out[i], want[i]);
    }
    done(&r);
}

static void test_vector(void **state)
{
    (void)state;
    run r;
    assert_int_equal(launch("k_vector", 4, 64, 0, &r), GCN_LAUNCH_OK);
    for (unsigned g = 0; g < 256; g++) {
        uint32_t a = g * 3 + 1;
        assert_int_equal(r.out[4 * g + 0], a * 5 + 7);
        assert_int_equal(r.out[4 * g + 1], a / 2);
        assert_int_equal(r.out[4 * g + 2], a < 100 ? 100 : a);
        assert_int_equal(r.out[4 * g + 3], (((a ^ 0xff) << 3) >> 4) & 0xff);
    }
    done(&r);
}

static void test_lds(void **state)
{
    (void)state;
    run r;
    assert_int_equal(launch("k_lds", 1, 128, 0, &r), GCN_LAUNCH_OK);
    for (unsigned t = 0; t < 128; t++) {
        unsigned wave = t & ~63u, lane = t & 63;
        assert_int_equal(r.out[4 * t + 0], 2 * (t ^ 1));
        assert_int_equal(r.out[4 * t + 1], 2 * (t & ~1u) + 2 * (t | 1u));
        assert_int_equal(r.out[4 * t + 2], wave + ((lane + 1) & 63));
        assert_int_equal(r.out[4 * t + 3], t ^ 1);
    }
    assert_int_equal(r.out[512], 128);
    done(&r);
}

static void test_buffer(void **state)
{
    (void)state;
    run r;
    assert_int_equal(launch("k_buffer", 1, 64, 0, &r), GCN_LAUNCH_OK);
    uint64_t seen = 0;
    for (unsigned t = 0; t < 64; t++) {
        assert_int_equal(r.out[t], 1000 + t);
        /* lane 63 read out[64], which nobody wrote: 0 */
        assert_int_equal(r.out[256 + t], t < 63 ? 1001 + t : 0);
        uint32_t old = r.out[576 + t];
        assert_true(old < 64);
        seen |= 1ull << old;
        assert_int_equal(r.out[640 + t], t | (t + 1) << 8 | (t + 2) << 16 | 0xffu << 24);
        assert_int_equal(r.out[704 + t], (t | (t + 1) << 8) + ((t + 2) | 0xff00u));
        assert_int_equal(r.out[768 + t], t < 4 ? 1000 + t : 0);
    }
    assert_int_equal(r.out[512], 64);
    assert_int_equal(seen, ~0ull); /* each lane got a distinct pre-op value */
    done(&r);
}

static void expect_fail(const char *name, gcn_launch_status want, const char *const *needles)
{
    run r;
    assert_int_equal(launch(name, 2, 64, 0, &r), want);
    assert_non_null(strstr(r.res.message, name));
    assert_non_null(strstr(r.res.message, "wg ("));
    assert_non_null(strstr(r.res.message, "wave "));
    assert_non_null(strstr(r.res.message, "pc 0x"));
    for (; *needles; needles++) {
        if (!strstr(r.res.message, *needles)) print_message("missing '%s' in: %s\n", *needles, r.res.message);
        assert_non_null(strstr(r.res.message, *needles));
    }
    done(&r);
}

static void test_faults(void **state)
{
    (void)state;
    expect_fail("k_trap", GCN_LAUNCH_TRAP, (const char *const[]){"s_trap 2", NULL});
    expect_fail("k_fault", GCN_LAUNCH_FAULT,
                (const char *const[]){"lane 0", "0x1000", "flat_store_dword v[1:2], v0", NULL});
    expect_fail("k_illegal", GCN_LAUNCH_ILLEGAL_INSN, (const char *const[]){"0xffffffff", "invalid encoding", NULL});
    expect_fail("k_graphics", GCN_LAUNCH_ILLEGAL_INSN,
                (const char *const[]){"graphics instruction exp not supported", NULL});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar), cmocka_unit_test(test_vector), cmocka_unit_test(test_lds),
        cmocka_unit_test(test_buffer), cmocka_unit_test(test_faults),
    };
    return cmocka_run_group_tests(tests, build, teardown);
}
