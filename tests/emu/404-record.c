/*
 * 404-record.c - recording a launch into a .gtrace: the machine's memory
 * events (code image, kernarg segment with the AQL packet and amd_queue_t,
 * frees), the launch record and one workgroup record per workgroup with the
 * initial EXEC of every wave, read back with the trace reader.
 *
 * Needs: gcn/ (loader, decoder), emu/isa (gcn_wave_run), traceformat writer and
 * reader, hipcc.
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
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n";

static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static void test_record_saxpy(void **state)
{
    (void)state;
    char path[] = "/tmp/gcn-exec-rec-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    trc_header_info h;
    memset(&h, 0, sizeof(h));
    strcpy(h.producer, "404-record");
    strcpy(h.isa_target, "amdgcn-amd-amdhsa--gfx803");
    h.device_count = 1;
    char err[512];
    trc_writer *tw = trc_writer_open(path, &h, err, sizeof(err));
    if (!tw)
        fail_msg("%s", err);

    gcn_machine_config cfg = {.n_gpus = 1, .n_threads = 3, .trace = tw};
    gcn_machine *m = gcn_machine_create(&cfg, err, sizeof(err));
    assert_non_null(m);
    gcn_code_object *co = t4_build_co(src, "-O2");
    assert_non_null(co);
    gcn_module *mod = gcn_module_load(m, co, err, sizeof(err));
    if (!mod)
        fail_msg("%s", err);
    const gcn_kernel *k = gcn_co_find_kernel(co, "_Z5saxpyfPKfPfi");
    assert_non_null(k);
    enum { N = 500, B = 100, G = 5 };
    float *x = gcn_mem_alloc(m, 0, N * 4, TRC_MEM_DEVICE);
    float *y = gcn_mem_alloc(m, 0, N * 4, TRC_MEM_DEVICE);
    uint8_t ka[64] = {0};
    float alpha = 2.0f;
    int n = N;
    uint64_t px = (uintptr_t)x, py = (uintptr_t)y;
    memcpy(ka + k->args[0].offset, &alpha, 4);
    memcpy(ka + k->args[1].offset, &px, 8);
    memcpy(ka + k->args[2].offset, &py, 8);
    memcpy(ka + k->args[3].offset, &n, 4);
    gcn_launch_params p = {.grid = {G, 1, 1}, .wg_size = {B, 1, 1}, .kernarg = ka,
                           .kernarg_size = k->kernarg_segment_size};
    gcn_launch_result res;
    if (gcn_launch(m, mod, k, &p, &res) != GCN_LAUNCH_OK)
        fail_msg("%s", res.message);
    uint64_t image = gcn_module_base(mod);
    /* k and co die with the module */
    const uint64_t kd_vaddr = k->kd_vaddr, entry_vaddr = k->entry_vaddr;
    const uint32_t ka_size = k->kernarg_segment_size;
    uint8_t kd_bytes[64];
    memcpy(kd_bytes, (const uint8_t *)(uintptr_t)image + kd_vaddr, 64);
    k = NULL;
    co = NULL;
    gcn_module_unload(m, mod);
    gcn_machine_destroy(m);
    if (trc_writer_close(tw) != 0)
        fail_msg("%s", trc_writer_error(tw));
    trc_writer_destroy(tw);

    trc_reader *r = trc_reader_open(path, err, sizeof(err));
    if (!r)
        fail_msg("%s", err);
    assert_int_equal(trc_reader_n_code_objects(r), 1);
    size_t ne = trc_reader_n_events(r);
    /* ALLOC code, COPY code, ALLOC x, ALLOC y, ALLOC kernarg, COPY kernarg,
     * LAUNCH, FREE kernarg, FREE code */
    int seen_code_copy = 0, seen_ka_copy = 0, seen_launch = 0, seen_ka_free = 0;
    uint64_t ka_addr = 0;
    for (size_t i = 0; i < ne; i++) {
        const trc_event *e = trc_reader_event(r, i);
        if (e->kind == TRC_EV_ALLOC && e->mem_kind == TRC_MEM_KERNARG)
            ka_addr = e->addr;
        if (e->kind == TRC_EV_COPY && e->addr == image) {
            assert_int_equal(e->copy_kind, TRC_COPY_INIT);
            assert_memory_equal(e->data + kd_vaddr, kd_bytes, 64);
            seen_code_copy = 1;
        }
        if (e->kind == TRC_EV_COPY && ka_addr && e->addr == ka_addr) {
            assert_int_equal(e->copy_kind, TRC_COPY_INIT);
            const uint8_t *q = e->data, *pk = e->data + 256;
            assert_int_equal(rd32(q + 0x40), GCN_GROUP_APERTURE_HI);
            assert_int_equal(rd32(q + 0x44), GCN_PRIVATE_APERTURE_HI);
            assert_int_equal(rd32(pk) & 0xff, 2);      /* KERNEL_DISPATCH */
            assert_int_equal(rd32(pk + 0x4) & 0xffff, B); /* workgroup_size_x */
            assert_int_equal(rd32(pk + 0xc), G * B);    /* grid_size_x in work-items */
            assert_int_equal(rd32(pk + 0x10), 1);
            assert_int_equal(rd64(pk + 0x20), image + kd_vaddr); /* kernel_object */
            assert_int_equal(rd64(pk + 0x28), ka_addr + 512);       /* kernarg_address */
            assert_memory_equal(e->data + 512, ka, ka_size);
            seen_ka_copy = 1;
        }
        if (e->kind == TRC_EV_LAUNCH) {
            assert_true(seen_ka_copy);
            const trc_launch *l = &e->launch;
            assert_string_equal(l->kernel_name, "_Z5saxpyfPKfPfi");
            assert_int_equal(l->grid[0], G);
            assert_int_equal(l->wg_size[0], B);
            assert_int_equal(l->waves_per_wg, 2);
            assert_int_equal(l->kernarg_addr, ka_addr + 512);
            assert_int_equal(l->entry_vaddr, entry_vaddr);
            assert_int_equal(e->n_wg, G);
            assert_int_equal(e->n_instr, res.wave_instructions);
            uint64_t total = 0;
            for (uint32_t w = 0; w < e->n_wg; w++) {
                trc_wg *wg = trc_reader_load_wg(r, l->kernel_id, w, err, sizeof(err));
                if (!wg)
                    fail_msg("%s", err);
                assert_int_equal(wg->n_waves, 2);
                for (uint32_t v = 0; v < 2; v++) {
                    const trc_wave *tv = &wg->waves[v];
                    assert_true(tv->n_exec >= 1);
                    assert_int_equal(tv->exec_at[0], 0);
                    assert_int_equal(tv->exec_val[0], tv->wave_in_wg == 0 ? UINT64_MAX : (1ull << 36) - 1);
                    total += tv->n_instr;
                }
                trc_wg_free(wg);
            }
            assert_int_equal(total, res.wave_instructions);
            seen_launch = 1;
        }
        if (e->kind == TRC_EV_FREE && e->addr == ka_addr && seen_launch)
            seen_ka_free = 1;
    }
    assert_true(seen_code_copy);
    assert_true(seen_ka_copy);
    assert_true(seen_launch);
    assert_true(seen_ka_free);
    trc_reader_close(r);
    unlink(path);
}

/* hipMallocManaged's path: gcn_mem_alloc_ex(..., GCN_ALLOC_MANAGED) records
 * its ALLOC with managed = 1 (trace format 2.1), gcn_mem_alloc does not; a
 * managed allocation of another kind, or an unknown flag, is refused. */
static void test_record_managed(void **state)
{
    (void)state;
    char path[] = "/tmp/gcn-exec-managed-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    trc_header_info h;
    memset(&h, 0, sizeof(h));
    strcpy(h.producer, "404-record");
    h.device_count = 1;
    char err[512];
    trc_writer *tw = trc_writer_open(path, &h, err, sizeof(err));
    if (!tw)
        fail_msg("%s", err);
    gcn_machine_config cfg = {.n_gpus = 1, .n_threads = 1, .trace = tw};
    gcn_machine *m = gcn_machine_create(&cfg, err, sizeof(err));
    assert_non_null(m);
    void *plain = gcn_mem_alloc(m, 0, 1000, TRC_MEM_DEVICE);
    void *managed = gcn_mem_alloc_ex(m, 0, 3000, TRC_MEM_DEVICE, GCN_ALLOC_MANAGED);
    void *pinned = gcn_mem_alloc_ex(m, 0, 2000, TRC_MEM_HOST_PINNED, 0);
    assert_non_null(plain);
    assert_non_null(managed);
    assert_non_null(pinned);
    assert_null(gcn_mem_alloc_ex(m, 0, 64, TRC_MEM_HOST_PINNED, GCN_ALLOC_MANAGED));
    assert_null(gcn_mem_alloc_ex(m, 0, 64, TRC_MEM_DEVICE, 1u << 7));
    gcn_alloc_info ai;
    assert_true(gcn_mem_find(m, (uintptr_t)managed, 3000, &ai));
    assert_int_equal(ai.kind, TRC_MEM_DEVICE);
    assert_int_equal(gcn_mem_free(m, managed), 0);
    gcn_machine_destroy(m);
    if (trc_writer_close(tw) != 0)
        fail_msg("%s", trc_writer_error(tw));
    trc_writer_destroy(tw);

    trc_reader *r = trc_reader_open(path, err, sizeof(err));
    if (!r)
        fail_msg("%s", err);
    int n_alloc = 0, n_managed = 0;
    for (size_t i = 0; i < trc_reader_n_events(r); i++) {
        const trc_event *e = trc_reader_event(r, i);
        if (e->kind == TRC_EV_ALLOC)
            n_alloc++;
        if (!e->managed)
            continue;
        n_managed++;
        assert_int_equal(e->kind, TRC_EV_ALLOC);
        assert_int_equal(e->mem_kind, TRC_MEM_DEVICE);
        assert_int_equal(e->addr, (uintptr_t)managed);
        assert_int_equal(e->size, 3000);
    }
    assert_int_equal(n_alloc, 3);
    assert_int_equal(n_managed, 1);
    trc_reader_close(r);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_saxpy),
        cmocka_unit_test(test_record_managed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
