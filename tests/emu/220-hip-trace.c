/*
 * 220-hip-trace.c - what our libamdhip64.so.5 records, read back with the
 * trace reader.
 *
 * A child process sets GCN3EMU_RECORD (as gcn3-emu --record does), dlopens
 * the library from $TEST_BUILD/lib (default build/lib), runs vectoradd from
 * the committed bundle (tests/emu/data) through the hipcc registration and
 * launch entry points, and exits; the runtime closes the trace in its exit
 * handler. The parent checks the exit status and the recorded host timeline:
 * header, H2D data, MEMSET, the launch, SYNC, D2H data equal to what the host
 * received. A second child records into a directory that does not exist and
 * must see every call fail instead of a silent success.
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
#include <sys/wait.h>
#include <unistd.h>

#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>

#include "traceformat/trc.h"

enum { N = 1000 };

static uint8_t *load(const char *name, size_t *len)
{
    char path[512];
    const char *f = __FILE__;
    const char *slash = strrchr(f, '/');
    snprintf(path, sizeof path, "%.*s/data/%s", slash ? (int)(slash - f) : 1, slash ? f : ".",
             name);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n);
    if (b && fread(b, 1, (size_t)n, fp) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(fp);
    *len = (size_t)n;
    return b;
}

static void lib_path(char *path, size_t cap)
{
    const char *b = getenv("TEST_BUILD");
    snprintf(path, cap, "%s/lib/libamdhip64.so.5", b && *b ? b : "build");
}

static float ha[N], hb[N], hc[N];
static const char host_stub = 0;

/* Child: exit status 0 if every call behaved, else the failing step. */
static int child_vectoradd(const char *trace)
{
    setenv("GCN3EMU_RECORD", trace, 1);
    setenv("GCN3EMU_QUIET", "1", 1);
    setenv("GCN3EMU_THREADS", "2", 1);
    setenv("GCN3EMU_CMDLINE", "vectoradd 1000", 1);
    char path[512];
    lib_path(path, sizeof path);
    void *lib = dlopen(path, RTLD_NOW);
    if (!lib)
        return 10;
#define F(name) ((__typeof__(&name))dlsym(lib, #name))
    void **(*reg)(const void *) = (void **(*)(const void *))dlsym(lib, "__hipRegisterFatBinary");
    void (*regf)(void **, const void *, char *, const char *, unsigned, void *, void *, dim3 *,
                 dim3 *, int *) = (__typeof__(regf))dlsym(lib, "__hipRegisterFunction");
    size_t blen;
    uint8_t *bundle = load("vectoradd.bundle", &blen);
    if (!reg || !regf || !bundle)
        return 11;
    static struct {
        uint32_t magic, version;
        const void *bundle;
        void *reserved;
    } w;
    w.magic = 0x48495046, w.version = 1, w.bundle = bundle;
    void **mod = reg(&w);
    const char *kn = "_Z9vectoraddPKfS0_Pfi";
    regf(mod, &host_stub, (char *)kn, kn, -1u, NULL, NULL, NULL, NULL, NULL);
    float *da, *db, *dc;
    if (F(hipMalloc)((void **)&da, sizeof ha) || F(hipMalloc)((void **)&db, sizeof hb) ||
        F(hipMalloc)((void **)&dc, sizeof hc))
        return 12;
    if (F(hipMemcpy)(da, ha, sizeof ha, hipMemcpyHostToDevice) ||
        F(hipMemcpy)(db, hb, sizeof hb, hipMemcpyHostToDevice) || F(hipMemset)(dc, 7, sizeof hc))
        return 13;
    int n = N;
    void *args[] = {&da, &db, &dc, &n};
    dim3 grid = {(N + 255) / 256, 1, 1}, block = {256, 1, 1};
    if (F(hipLaunchKernel)(&host_stub, grid, block, args, 0, NULL))
        return 14;
    if (F(hipDeviceSynchronize)())
        return 15;
    if (F(hipMemcpy)(hc, dc, sizeof hc, hipMemcpyDeviceToHost))
        return 16;
    for (int i = 0; i < N; i++)
        if (hc[i] != ha[i] + hb[i])
            return 17;
    return 0;
}

static int run_child(int (*fn)(const char *), const char *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        exit(fn(arg)); /* exit(), not _exit(): the runtime's exit handler closes the trace */
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_recorded_timeline(void **state)
{
    for (int i = 0; i < N; i++)
        ha[i] = (float)i, hb[i] = (float)(i % 13) * 0.5f;
    char trace[] = "/tmp/gcn3emu-220-XXXXXX";
    int fd = mkstemp(trace);
    assert_true(fd >= 0);
    close(fd);
    int rc = run_child(child_vectoradd, trace);
    if (rc)
        fail_msg("child failed at step %d", rc);
    for (int i = 0; i < N; i++)
        hc[i] = ha[i] + hb[i]; /* what the child's host received */

    char err[512] = "";
    trc_reader *r = trc_reader_open(trace, err, sizeof err);
    if (!r)
        fail_msg("%s", err);
    const trc_header_info *h = trc_reader_header(r);
    assert_string_equal(h->producer, "gcn3-emu");
    assert_string_equal(h->isa_target, "amdgcn-amd-amdhsa--gfx803");
    assert_int_equal(h->device_count, 1);
    assert_string_equal(h->command_line, "vectoradd 1000");
    assert_int_equal(trc_reader_n_code_objects(r), 1);

    int h2d = 0, memset_seen = 0, launch = 0, sync_after_launch = 0, d2h = 0;
    for (size_t i = 0; i < trc_reader_n_events(r); i++) {
        const trc_event *ev = trc_reader_event(r, i);
        if (ev->kind == TRC_EV_COPY && ev->copy_kind == TRC_COPY_H2D) {
            assert_int_equal(ev->size, sizeof ha);
            assert_memory_equal(ev->data, h2d == 0 ? (void *)ha : (void *)hb, sizeof ha);
            h2d++;
        } else if (ev->kind == TRC_EV_MEMSET) {
            assert_int_equal(ev->value, 7);
            assert_int_equal(ev->size, sizeof hc);
            memset_seen++;
        } else if (ev->kind == TRC_EV_LAUNCH) {
            assert_string_equal(ev->launch.kernel_name, "_Z9vectoraddPKfS0_Pfi");
            assert_int_equal(ev->launch.grid[0], 4);
            assert_int_equal(ev->launch.wg_size[0], 256);
            assert_int_equal(ev->launch.kernarg[24], N & 0xff); /* n at offset 24 */
            launch++;
        } else if (ev->kind == TRC_EV_SYNC) {
            sync_after_launch += launch > 0;
        } else if (ev->kind == TRC_EV_COPY && ev->copy_kind == TRC_COPY_D2H) {
            assert_true(sync_after_launch > 0);
            assert_int_equal(ev->size, sizeof hc);
            assert_memory_equal(ev->data, hc, sizeof hc);
            d2h++;
        }
    }
    assert_int_equal(h2d, 2);
    assert_int_equal(memset_seen, 1);
    assert_int_equal(launch, 1);
    assert_int_equal(sync_after_launch, 1);
    assert_int_equal(d2h, 1);
    trc_reader_close(r);
    unlink(trace);
}

static int child_bad_trace(const char *trace)
{
    setenv("GCN3EMU_RECORD", trace, 1);
    setenv("GCN3EMU_QUIET", "1", 1);
    char path[512];
    lib_path(path, sizeof path);
    void *lib = dlopen(path, RTLD_NOW);
    if (!lib)
        return 10;
    void *p = NULL;
    hipError_t e = F(hipMalloc)(&p, 64);
    return e == hipSuccess ? 20 : 0;
}

static void test_unwritable_trace(void **state)
{
    int rc = run_child(child_bad_trace, "/nonexistent-dir-gcn3emu/x.gtrace");
    assert_int_equal(rc, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recorded_timeline),
        cmocka_unit_test(test_unwritable_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
