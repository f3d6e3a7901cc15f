/*
 * 400-memory.c - device memory of the functional machine: the allocation
 * table (find, free, ranges straddling allocations, concurrent use), fault
 * messages of gcn_mem_global / gcn_mem_flat, aperture translation and the
 * scratch swizzle formula of gcn_wave.h.
 *
 * Needs only emu/exec (no interpreter, no trace: the machine has no writer).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emu/exec/exec_internal.h"

static gcn_machine *new_machine(uint32_t gpus, uint32_t threads)
{
    char err[256];
    gcn_machine_config cfg = {.n_gpus = gpus, .n_threads = threads, .trace = NULL};
    gcn_machine *m = gcn_machine_create(&cfg, err, sizeof(err));
    assert_non_null(m);
    return m;
}

static void test_config_errors(void **state)
{
    (void)state;
    char err[256] = "";
    gcn_machine_config cfg = {.n_gpus = 0, .n_threads = 1};
    assert_null(gcn_machine_create(&cfg, err, sizeof(err)));
    assert_non_null(strstr(err, "n_gpus"));
    gcn_machine_destroy(NULL);
}

static void test_alloc_find_free(void **state)
{
    (void)state;
    gcn_machine *m = new_machine(2, 1);
    uint8_t *a = gcn_mem_alloc(m, 0, 1000, TRC_MEM_DEVICE);
    uint8_t *b = gcn_mem_alloc(m, 1, 4096 * 3 + 5, TRC_MEM_HOST_PINNED);
    uint8_t *c = gcn_mem_alloc(m, 0, 0, TRC_MEM_DEVICE); /* size 0: distinct valid pointer */
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    assert_null(gcn_mem_alloc(m, 2, 16, TRC_MEM_DEVICE)); /* no device 2 */
    assert_int_equal((uintptr_t)a % 256, 0);
    assert_int_equal((uintptr_t)b % 256, 0);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(a[i], 0);
    memset(a, 0xab, 1000); /* a device pointer is a host pointer */

    gcn_alloc_info info;
    memset(&info, 0, sizeof(info));
    assert_int_equal(gcn_mem_find(m, (uintptr_t)a, 4, &info), 1);
    assert_int_equal(info.base, (uintptr_t)a);
    assert_int_equal(info.size, 1000);
    assert_int_equal(info.device, 0);
    assert_int_equal(info.kind, TRC_MEM_DEVICE);
    assert_int_equal(gcn_mem_find(m, (uintptr_t)a + 996, 4, &info), 1);
    assert_int_equal(gcn_mem_find(m, (uintptr_t)a + 999, 1, &info), 1);
    /* past the requested size, though still inside the mapped page */
    assert_int_equal(gcn_mem_find(m, (uintptr_t)a + 997, 4, &info), 0);
    assert_int_equal(gcn_mem_find(m, (uintptr_t)a + 1000, 1, &info), 0);
    assert_int_equal(gcn_mem_find(m, (uintptr_t)a - 1, 1, &info), 0);
    assert_int_equal(gcn_mem_find(m, (uintptr_t)b + 4096 * 2 + 100, 8, &info), 1);
    assert_int_equal(info.device, 1);
    assert_int_equal(info.kind, TRC_MEM_HOST_PINNED);
    assert_int_equal(gcn_mem_find(m, 0, 1, &info), 0);
    assert_int_equal(gcn_mem_find(m, UINT64_MAX, 1, &info), 0);

    /* free: only at the base, only once */
    assert_int_equal(gcn_mem_free(m, a + 8), -1);
    assert_int_equal(gcn_mem_free(m, a), 0);
    assert_int_equal(gcn_mem_free(m, a), -1);
    assert_int_equal(gcn_mem_find(m, (uintptr_t)b, 1, &info), 1);
    assert_int_equal(gcn_mem_free(m, NULL), -1);
    assert_int_equal(gcn_mem_free(m, c), 0);
    gcn_machine_destroy(m); /* releases b */
}

/* A range that starts in one allocation and ends in another is not inside
 * any allocation. Adjacent allocations are forced by carving one mapping. */
static void test_straddling_ranges(void **state)
{
    (void)state;
    gcn_machine *m = new_machine(1, 1);
    enum { N = 64 };
    uint8_t *p[N];
    for (int i = 0; i < N; i++) {
        p[i] = gcn_mem_alloc(m, 0, 4096, TRC_MEM_DEVICE);
        assert_non_null(p[i]);
    }
    gcn_alloc_info info;
    /* Device addresses come from a per-device window in allocation order with
     * a guard gap after each allocation: an access running off the end of one
     * allocation never lands in the next. Where the window cannot be mapped
     * (under AddressSanitizer its shadow memory covers it) allocations fall
     * back to mmap's placement, without the guarantee: the gap is checked only
     * for windowed allocations. */
    int windowed = (uintptr_t)p[0] >= GCN_VA_BASE && (uintptr_t)p[0] < GCN_VA_BASE + GCN_VA_WINDOW;
    for (int i = 0; i < N; i++) {
        assert_int_equal(gcn_mem_find(m, (uintptr_t)p[i] + 4092, 8, &info), 0);
        assert_int_equal(gcn_mem_find(m, (uintptr_t)p[i] + 4092, 4, &info), 1);
        assert_int_equal(info.base, (uintptr_t)p[i]);
        if (windowed)
            assert_int_equal(gcn_mem_find(m, (uintptr_t)p[i] + 4096, 1, &info), 0);
        if (i > 0 && windowed)
            assert_true(p[i] > p[i - 1] + 4096);
    }
    for (int i = 0; i < N; i++)
        if (i % 2)
            assert_int_equal(gcn_mem_free(m, p[i]), 0);
    for (int i = 0; i < N; i++) {
        int found = gcn_mem_find(m, (uintptr_t)p[i] + 17, 1, &info);
        assert_int_equal(found, i % 2 ? 0 : 1);
    }
    gcn_machine_destroy(m);
}

/* The same sequence of allocations gets the same addresses in a new machine,
 * so traces of identical runs are identical. */
static void test_deterministic_addresses(void **state)
{
    (void)state;
    enum { N = 16 };
    uintptr_t first[N];
    for (int round = 0; round < 2; round++) {
        gcn_machine *m = new_machine(2, 1);
        for (int i = 0; i < N; i++) {
            uint8_t *q = gcn_mem_alloc(m, (uint32_t)(i % 2), 1000 + 5000 * (size_t)i, TRC_MEM_DEVICE);
            assert_non_null(q);
            if (round == 0)
                first[i] = (uintptr_t)q;
            else
                assert_int_equal((uintptr_t)q, first[i]);
            if (i % 3 == 0)
                assert_int_equal(gcn_mem_free(m, q), 0);
        }
        gcn_machine_destroy(m);
    }
    /* each device allocates from its own address window */
    assert_true(first[1] - first[0] >= 0x10000000000ull);
}

/* ---- many threads ---------------------------------------------------------- */

struct thr_arg {
    gcn_machine *m;
    int id;
    int errors;
};

static void *alloc_thread(void *argp)
{
    struct thr_arg *a = argp;
    enum { LIVE = 16, ROUNDS = 400 };
    uint8_t *live[LIVE] = {0};
    size_t sizes[LIVE] = {0};
    unsigned seed = (unsigned)a->id * 7919u + 1;
    for (int r = 0; r < ROUNDS; r++) {
        int slot = r % LIVE;
        if (live[slot]) {
            /* still ours, still intact */
            gcn_alloc_info info;
            if (!gcn_mem_find(a->m, (uintptr_t)live[slot] + sizes[slot] - 1, 1, &info) ||
                info.base != (uintptr_t)live[slot] || info.size != sizes[slot] ||
                info.device != (uint32_t)(a->id % 2) || live[slot][0] != (uint8_t)a->id)
                a->errors++;
            if (gcn_mem_free(a->m, live[slot]) != 0)
                a->errors++;
        }
        seed = seed * 1103515245u + 12345u;
        sizes[slot] = 1 + (seed >> 8) % 20000;
        live[slot] = gcn_mem_alloc(a->m, (uint32_t)(a->id % 2), sizes[slot], TRC_MEM_DEVICE);
        if (!live[slot]) {
            a->errors++;
            continue;
        }
        live[slot][0] = (uint8_t)a->id;
        /* the lock-free path used by waves agrees with the locked one */
        gcn_mem_entry e;
        int partial = 0;
        if (!gcn_mem_lookup(a->m, (uintptr_t)live[slot], sizes[slot], &e, &partial) ||
            e.base != (uintptr_t)live[slot])
            a->errors++;
        if (gcn_mem_lookup(a->m, (uintptr_t)live[slot], sizes[slot] + 1, &e, &partial) ||
            !partial)
            a->errors++;
    }
    for (int s = 0; s < LIVE; s++)
        if (live[s] && gcn_mem_free(a->m, live[s]) != 0)
            a->errors++;
    return NULL;
}

static void test_many_threads(void **state)
{
    (void)state;
    gcn_machine *m = new_machine(2, 2);
    enum { T = 8 };
    pthread_t th[T];
    struct thr_arg args[T];
    /* the lock-free lookup is for waves, which exist only while a launch is
     * in flight: pretend one is, as gcn_launch does */
    atomic_fetch_add(&m->launches_active, 1);
    for (int i = 0; i < T; i++) {
        args[i] = (struct thr_arg){.m = m, .id = i + 1, .errors = 0};
        assert_int_equal(pthread_create(&th[i], NULL, alloc_thread, &args[i]), 0);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(args[i].errors, 0);
    }
    /* tables replaced during the "launch" were kept alive, then reclaimed */
    assert_non_null(m->retired);
    atomic_fetch_sub(&m->launches_active, 1);
    gcn_mem_reclaim(m);
    assert_null(m->retired);
    /* everything freed: the table is empty */
    const gcn_mem_table *t = atomic_load(&m->table);
    assert_non_null(t);
    assert_int_equal(t->n, 0);
    gcn_machine_destroy(m);
}

/* ---- translation and faults ------------------------------------------------- */

struct wave_fixture {
    gcn_machine *m;
    struct gcn_wg wg;
    gcn_mem_cache cache;
    gcn_wave w;
    uint8_t lds[1024];
};

static void fixture_init(struct wave_fixture *f)
{
    memset(f, 0, sizeof(*f));
    f->m = new_machine(1, 1);
    f->wg.m = f->m;
    f->w.wg = &f->wg;
    f->w.mem_cache = &f->cache;
    f->w.kernel_name = "_Z6kernelPf";
    f->w.wg_id[0] = 1;
    f->w.wg_id[1] = 2;
    f->w.wg_id[2] = 3;
    f->w.wave_in_wg = 2;
    f->w.lds = f->lds;
    f->w.lds_size = sizeof(f->lds);
    f->w.status = GCN_WAVE_RUNNING;
}

static void test_global_translation_and_faults(void **state)
{
    (void)state;
    struct wave_fixture f;
    fixture_init(&f);
    gcn_wave *w = &f.w;
    uint8_t *buf = gcn_mem_alloc(f.m, 0, 256, TRC_MEM_DEVICE);
    assert_non_null(buf);
    uint64_t a = (uintptr_t)buf;

    assert_ptr_equal(gcn_mem_global(w, a + 16, 4, 0, 0, 0x1000), buf + 16);
    /* cached hit and a second lookup agree */
    assert_ptr_equal(gcn_mem_global(w, a + 252, 4, 1, 63, 0x1000), buf + 252);
    assert_int_equal(w->status, GCN_WAVE_RUNNING);

    /* one byte past the end: fault, even though the page is mapped */
    char want[384];
    assert_null(gcn_mem_global(w, a + 253, 4, 1, 5, 0x1a4));
    assert_int_equal(w->status, GCN_WAVE_FAULT);
    snprintf(want, sizeof(want),
             "memory fault in kernel _Z6kernelPf: wg (1,2,3) wave 2 lane 5 pc 0x1a4: write of 4 bytes "
             "at 0x%llx runs past the end of allocation [0x%llx, 0x%llx)",
             (unsigned long long)(a + 253), (unsigned long long)a, (unsigned long long)(a + 256));
    assert_string_equal(w->err, want);

    w->status = GCN_WAVE_RUNNING;
    memset(&f.cache, 0, sizeof(f.cache));
    assert_null(gcn_mem_global(w, 0x10, 8, 0, 7, 0x200));
    assert_int_equal(w->status, GCN_WAVE_FAULT);
    assert_string_equal(w->err, "memory fault in kernel _Z6kernelPf: wg (1,2,3) wave 2 lane 7 pc 0x200: "
                                "read of 8 bytes at 0x10 outside every allocation");

    /* an aperture address through a non-FLAT path names the mistake */
    w->status = GCN_WAVE_RUNNING;
    assert_null(gcn_mem_global(w, (uint64_t)GCN_GROUP_APERTURE_HI << 32 | 4, 4, 0, 0, 0x300));
    assert_non_null(strstr(w->err, "aperture"));

    /* freed memory faults */
    w->status = GCN_WAVE_RUNNING;
    memset(&f.cache, 0, sizeof(f.cache));
    assert_int_equal(gcn_mem_free(f.m, buf), 0);
    assert_null(gcn_mem_global(w, a + 16, 4, 0, 0, 0x1000));
    assert_non_null(strstr(w->err, "outside every allocation"));
    gcn_machine_destroy(f.m);
}

static void test_flat_lds_aperture(void **state)
{
    (void)state;
    struct wave_fixture f;
    fixture_init(&f);
    gcn_wave *w = &f.w;
    gcn_flat_kind kind = GCN_FLAT_GLOBAL;
    uint64_t ta = 0;
    uint64_t lds_base = (uint64_t)GCN_GROUP_APERTURE_HI << 32;
    assert_ptr_equal(gcn_mem_flat(w, lds_base + 0x40, 4, 1, 3, 0x10, &kind, &ta), f.lds + 0x40);
    assert_int_equal(kind, GCN_FLAT_LDS);
    assert_int_equal(ta, 0x40);
    assert_ptr_equal(gcn_mem_flat(w, lds_base + 1020, 4, 0, 3, 0x10, &kind, &ta), f.lds + 1020);
    assert_null(gcn_mem_flat(w, lds_base + 1021, 4, 0, 9, 0x14, &kind, &ta));
    assert_int_equal(w->status, GCN_WAVE_FAULT);
    assert_string_equal(w->err, "memory fault in kernel _Z6kernelPf: wg (1,2,3) wave 2 lane 9 pc 0x14: "
                                "read of 4 bytes at 0x10000000003fd (LDS offset 0x3fd) outside the "
                                "workgroup's 1024 bytes of LDS");
    gcn_machine_destroy(f.m);
}

static void test_flat_private_swizzle(void **state)
{
    (void)state;
    struct wave_fixture f;
    fixture_init(&f);
    gcn_wave *w = &f.w;
    /* 3 waves, 20 bytes per work-item (slice 20*64 = 1280 bytes per wave) */
    uint64_t slice = 20 * 64;
    uint8_t *scratch = gcn_mem_alloc(f.m, 0, 3 * slice, TRC_MEM_SCRATCH);
    assert_non_null(scratch);
    w->scratch_base = (uintptr_t)scratch;
    w->scratch_wave_offset = 2 * slice;
    w->private_size = 20;
    uint64_t pb = (uint64_t)GCN_PRIVATE_APERTURE_HI << 32;
    gcn_flat_kind kind = GCN_FLAT_GLOBAL;
    uint64_t ta = 0;
    for (uint32_t lane = 0; lane < 64; lane += 7) {
        for (uint32_t P = 0; P < 20; P++) {
            uint32_t len = 4 - (P & 3); /* stay inside one dword */
            uint8_t *h = gcn_mem_flat(w, pb + P, len, 1, lane, 0x20, &kind, &ta);
            uint64_t want = (uintptr_t)scratch + 2 * slice + (P / 4) * 256 + lane * 4 + P % 4;
            assert_int_equal(kind, GCN_FLAT_PRIVATE);
            assert_int_equal((uintptr_t)h, want);
            assert_int_equal(ta, want);
        }
    }
    /* the last byte of the last dword of lane 63 is the last byte of the slice */
    uint8_t *last = gcn_mem_flat(w, pb + 19, 1, 0, 63, 0x20, &kind, &ta);
    assert_ptr_equal(last, scratch + 3 * slice - 1);
    /* MUBUF and FLAT agree: the swizzled address is a plain global address too */
    assert_ptr_equal(gcn_mem_global(w, ta, 1, 0, 63, 0x20), last);

    assert_int_equal(w->status, GCN_WAVE_RUNNING);
    assert_null(gcn_mem_flat(w, pb + 20, 4, 0, 1, 0x24, &kind, &ta));
    assert_int_equal(w->status, GCN_WAVE_FAULT);
    assert_string_equal(w->err, "memory fault in kernel _Z6kernelPf: wg (1,2,3) wave 2 lane 1 pc 0x24: "
                                "read of 4 bytes at 0x2000000000014 (private offset 0x14) outside the "
                                "work-item's 20 bytes of private memory");
    /* an 8-byte access spans two swizzled dwords: refused with a clear message */
    w->status = GCN_WAVE_RUNNING;
    assert_null(gcn_mem_flat(w, pb + 8, 8, 0, 1, 0x28, &kind, &ta));
    assert_non_null(strstr(w->err, "split"));
    /* no scratch at all */
    w->status = GCN_WAVE_RUNNING;
    w->scratch_base = 0;
    assert_null(gcn_mem_flat(w, pb, 4, 1, 0, 0x2c, &kind, &ta));
    assert_non_null(strstr(w->err, "write of 4 bytes"));
    gcn_machine_destroy(f.m);
}

static void test_flat_global(void **state)
{
    (void)state;
    struct wave_fixture f;
    fixture_init(&f);
    gcn_wave *w = &f.w;
    uint8_t *buf = gcn_mem_alloc(f.m, 0, 64, TRC_MEM_DEVICE);
    gcn_flat_kind kind = GCN_FLAT_LDS;
    uint64_t ta = 0;
    assert_ptr_equal(gcn_mem_flat(w, (uintptr_t)buf + 8, 8, 0, 0, 0, &kind, &ta), buf + 8);
    assert_int_equal(kind, GCN_FLAT_GLOBAL);
    assert_int_equal(ta, (uintptr_t)buf + 8);
    assert_null(gcn_mem_flat(w, (uintptr_t)buf + 60, 8, 1, 4, 0x30, &kind, &ta));
    assert_int_equal(w->status, GCN_WAVE_FAULT);
    assert_non_null(strstr(w->err, "lane 4 pc 0x30: write of 8 bytes"));
    gcn_machine_destroy(f.m);
}

static void test_initial_mode(void **state)
{
    (void)state;
    /* FACTS.md: every kernel: round to nearest, FP32 denormals flushed, FP64/FP16
     * denormals kept (3), DX10_CLAMP and IEEE on -> MODE 0x3c0. */
    gcn_kernel_desc kd;
    memset(&kd, 0, sizeof(kd));
    kd.float_denorm_mode_16_64 = 3;
    kd.dx10_clamp = 1;
    kd.ieee_mode = 1;
    assert_int_equal(gcn_initial_mode(&kd), 0x3c0);
    kd.float_round_mode_32 = 1;
    kd.float_round_mode_16_64 = 2;
    kd.float_denorm_mode_32 = 3;
    assert_int_equal(gcn_initial_mode(&kd), 0x3f9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_alloc_find_free),
        cmocka_unit_test(test_straddling_ranges),
        cmocka_unit_test(test_deterministic_addresses),
        cmocka_unit_test(test_many_threads),
        cmocka_unit_test(test_global_translation_and_faults),
        cmocka_unit_test(test_flat_lds_aperture),
        cmocka_unit_test(test_flat_private_swizzle),
        cmocka_unit_test(test_flat_global),
        cmocka_unit_test(test_initial_mode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
