/*
 * 500-roundtrip: write a .gtrace with every record kind, committed from
 * several threads at once, read it back and compare every field.
 *
 * Synthetic content is a pure function of (kernel, workgroup, wave) seeds, so
 * the checker regenerates what each workgroup must contain regardless of the
 * (nondeterministic) commit order. Also measures compressed bytes per
 * wavefront-instruction on a random profile and on a streaming-kernel profile.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "traceformat/trc.h"
#include "traceformat/trc_himg.h"
#include "traceformat/trc_internal.h"
#include "traceformat/trc_writer_internal.h"
#include "tests/trace/data/gen.h"

/* ---- deterministic synthetic wavefronts ------------------------------------ */

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

enum { OP_BR, OP_IND, OP_EXEC, OP_MEM };

typedef struct xop {
    int kind;
    int taken;
    uint64_t v, at;
    uint32_t flags, bpl;
    uint64_t exec;
    uint64_t addr[64];
    uint8_t *ld, *sd;
    uint32_t ldn, sdn;
} xop;

typedef struct xwave {
    uint64_t n_instr;
    xop *ops;
    size_t n_ops;
} xwave;

/* profile 0: random everything (all flag kinds, irregular addresses);
 * profile 1: streaming kernel (full EXEC, unit-stride loads/stores, a loop
 * branch), to estimate realistic bytes per wavefront-instruction. */
static void gen_wave(xwave *w, uint64_t seed, int profile)
{
    uint64_t s = seed;
    size_t steps = profile ? 400 + mix(&s) % 200 : 40 + mix(&s) % 300;
    w->ops = calloc(steps + 1, sizeof *w->ops);
    w->n_ops = 0;
    uint64_t exec = ~0ull;
    uint64_t gbase = 0x7f0000000000ull + (mix(&s) % 4096) * 256;
    for (size_t t = 0; t < steps; t++) {
        unsigned r = (unsigned)(mix(&s) % 100);
        xop *o = &w->ops[w->n_ops];
        memset(o, 0, sizeof *o);
        if (profile == 1) {
            if (t % 20 == 19) { o->kind = OP_BR; o->taken = t + 20 < steps; w->n_ops++; }
            else if (t % 20 == 3 || t % 20 == 7 || t % 20 == 12) {
                o->kind = OP_MEM;
                o->flags = t % 20 == 12 ? TRC_MO_STORE : TRC_MO_LOAD;
                o->bpl = 4;
                o->exec = exec;
                uint64_t arr = gbase + (uint64_t)(t % 20) * 0x100000 + (t / 20) * 256 * 4;
                for (int l = 0; l < 64; l++) o->addr[l] = arr + 4u * (unsigned)l;
                w->n_ops++;
            }
            continue;
        }
        if (r < 10) {
            o->kind = OP_BR;
            o->taken = (int)(mix(&s) & 1);
        } else if (r < 12) {
            o->kind = OP_IND;
            o->v = 0x1000 + (mix(&s) % 1000) * 4;
        } else if (r < 16) {
            o->kind = OP_EXEC;
            unsigned c = (unsigned)(mix(&s) % 4);
            exec = c == 0 ? ~0ull : c == 1 ? 0xffffffffull : c == 2 ? 0 : mix(&s);
            o->v = exec;
            o->at = t;
        } else if (r < 45) {
            o->kind = OP_MEM;
            unsigned k = (unsigned)(mix(&s) % 10);
            static const uint32_t kinds[10] = {
                TRC_MO_LOAD, TRC_MO_STORE, TRC_MO_ATOMIC | TRC_MO_LOAD, TRC_MO_ATOMIC,
                TRC_MO_ATOMIC | TRC_MO_CMPSWAP | TRC_MO_LOAD, TRC_MO_LDS | TRC_MO_LOAD,
                TRC_MO_LDS | TRC_MO_STORE, TRC_MO_SMEM | TRC_MO_LOAD,
                TRC_MO_SCRATCH | TRC_MO_STORE, TRC_MO_SCRATCH | TRC_MO_LOAD};
            o->flags = kinds[k];
            static const uint32_t bpls[5] = {1, 2, 4, 8, 16};
            o->bpl = bpls[mix(&s) % 5];
            o->exec = exec;
            if (o->flags & TRC_MO_SMEM) {
                o->exec = 1;
                o->bpl = 4u << (mix(&s) % 5);
            }
            unsigned pat = (unsigned)(mix(&s) % 3);
            uint64_t b = (o->flags & TRC_MO_LDS) ? mix(&s) % 65536 : gbase + (mix(&s) % 65536) * 4;
            int64_t stride = pat == 0 ? (int64_t)o->bpl : pat == 1 ? -(int64_t)(mix(&s) % 64) : 0;
            for (int l = 0; l < 64; l++)
                o->addr[l] = pat == 2 ? gbase + mix(&s) % (1u << 24) : b + (uint64_t)(stride * l);
            uint32_t n = (uint32_t)__builtin_popcountll(o->exec);
            int give_ld = (o->flags & (TRC_MO_LOAD)) != 0;
            int give_sd = (o->flags & (TRC_MO_STORE | TRC_MO_ATOMIC)) != 0;
            if (give_ld) {
                o->ldn = (uint32_t)trc_mo_load_len(o->flags, n, o->bpl);
                o->ld = malloc(o->ldn + 1);
                for (uint32_t i = 0; i < o->ldn; i++) o->ld[i] = (uint8_t)mix(&s);
            }
            if (give_sd) {
                o->sdn = (uint32_t)trc_mo_store_len(o->flags, n, o->bpl);
                o->sd = malloc(o->sdn + 1);
                for (uint32_t i = 0; i < o->sdn; i++) o->sd[i] = (uint8_t)mix(&s);
            }
        } else {
            continue; /* ALU instruction: nothing recorded */
        }
        w->n_ops++;
    }
    w->n_instr = steps + 1; /* + s_endpgm */
}

static void free_wave(xwave *w)
{
    for (size_t i = 0; i < w->n_ops; i++) {
        free(w->ops[i].ld);
        free(w->ops[i].sd);
    }
    free(w->ops);
}

static uint64_t wave_seed(uint32_t kernel, uint32_t wg, uint32_t wave)
{
    return 0x5eed0000ull ^ ((uint64_t)kernel << 40) ^ ((uint64_t)wg << 16) ^ wave;
}

/* ---- the trace under test --------------------------------------------------- */

#define NK 2
static const uint32_t grid[NK][3] = {{5, 3, 1}, {4, 2, 2}};
static const uint32_t waves_per_wg[NK] = {4, 3};
static int profile_of_kernel[NK] = {0, 0};

typedef struct job {
    trc_writer *w;
    uint32_t kernel_id[NK];
    int next; /* shared counter over all (kernel, wg) pairs */
    pthread_mutex_t mu;
    int failed;
} job;

static uint32_t n_wg_of(int k) { return grid[k][0] * grid[k][1] * grid[k][2]; }

static void *worker(void *arg)
{
    job *j = arg;
    trc_wg_rec *g = trc_wg_rec_create();
    uint32_t total = n_wg_of(0) + n_wg_of(1);
    for (;;) {
        pthread_mutex_lock(&j->mu);
        int i = j->next++;
        pthread_mutex_unlock(&j->mu);
        if (i >= (int)total) break;
        /* alternate kernels so both are in flight at once */
        uint32_t n0 = n_wg_of(0), n1 = n_wg_of(1), mn = n0 < n1 ? n0 : n1;
        int k;
        uint32_t lin;
        if ((uint32_t)i < 2 * mn) {
            k = i % 2;
            lin = (uint32_t)i / 2;
        } else {
            k = n0 > n1 ? 0 : 1;
            lin = mn + ((uint32_t)i - 2 * mn);
        }
        uint32_t id[3] = {lin % grid[k][0], (lin / grid[k][0]) % grid[k][1],
                          lin / (grid[k][0] * grid[k][1])};
        uint32_t nw = waves_per_wg[k];
        xwave xw[8];
        for (uint32_t v = 0; v < nw; v++) gen_wave(&xw[v], wave_seed((uint32_t)k, lin, v), profile_of_kernel[k]);
        trc_wg_rec_begin(g, j->kernel_id[k], id, nw);
        /* interleave the waves' records as a barrier-switching emulator would */
        size_t pos[8] = {0};
        for (int more = 1; more;) {
            more = 0;
            for (uint32_t v = 0; v < nw; v++) {
                for (int burst = 0; burst < 3 && pos[v] < xw[v].n_ops; burst++) {
                    xop *o = &xw[v].ops[pos[v]++];
                    switch (o->kind) {
                    case OP_BR: trc_rec_branch(g, v, o->taken); break;
                    case OP_IND: trc_rec_indirect(g, v, o->v); break;
                    case OP_EXEC: trc_rec_exec(g, v, o->at, o->v); break;
                    case OP_MEM: trc_rec_mem(g, v, o->flags, o->bpl, o->exec, o->addr, o->ld, o->sd); break;
                    }
                }
                if (pos[v] < xw[v].n_ops) more = 1;
            }
        }
        for (uint32_t v = 0; v < nw; v++) {
            trc_rec_wave_end(g, v, xw[v].n_instr);
            free_wave(&xw[v]);
        }
        if (trc_wg_commit(j->w, g) != 0) {
            pthread_mutex_lock(&j->mu);
            j->failed = 1;
            pthread_mutex_unlock(&j->mu);
        }
    }
    trc_wg_rec_destroy(g);
    return NULL;
}

static uint8_t co_bytes[2][5000];
static uint8_t h2d[3000], d2h[777], init_bytes[64], kernarg[NK][40];

static void fill_header(trc_header_info *h)
{
    memset(h, 0, sizeof *h);
    strcpy(h->producer, "gcn3-emu");
    strcpy(h->producer_version, "0.1-test");
    strcpy(h->isa_target, "amdgcn-amd-amdhsa--gfx803");
    h->device_count = 2;
    strcpy(h->command_line, "gcn3-emu --record x.gtrace -- ./app --n 42");
}

static trc_event mk(trc_event_kind kind)
{
    trc_event e;
    memset(&e, 0, sizeof e);
    e.kind = kind;
    return e;
}

/* Events in program order; the launches are spliced in by position. */
static size_t make_events(trc_event *ev)
{
    size_t n = 0;
    trc_event e;
    for (int mk_ = 0; mk_ <= TRC_MEM_SCRATCH; mk_++) {
        e = mk(TRC_EV_ALLOC);
        e.device = (uint32_t)mk_ & 1;
        e.addr = 0x7f0000000000ull + (uint64_t)mk_ * 0x100000;
        e.size = 4096u * (unsigned)(mk_ + 1);
        e.mem_kind = (trc_mem_kind)mk_;
        ev[n++] = e;
    }
    /* format 2.1: a managed allocation (device memory) */
    e = mk(TRC_EV_ALLOC); e.addr = 0x7f0000800000ull; e.size = 65536; e.mem_kind = TRC_MEM_DEVICE; e.managed = 1; ev[n++] = e;
    e = mk(TRC_EV_COPY); e.addr = 0x7f0000000000ull; e.size = sizeof h2d; e.copy_kind = TRC_COPY_H2D; e.data = h2d; e.stream = 3; ev[n++] = e;
    e = mk(TRC_EV_COPY); e.addr = 0x7f0000100000ull; e.src = 0x7f0000000000ull; e.size = 1234; e.copy_kind = TRC_COPY_D2D; ev[n++] = e;
    e = mk(TRC_EV_COPY); e.addr = 0x7f0000200000ull; e.size = sizeof init_bytes; e.copy_kind = TRC_COPY_INIT; e.data = init_bytes; ev[n++] = e;
    e = mk(TRC_EV_MEMSET); e.addr = 0x7f0000000010ull; e.size = 100; e.value = 0xab; e.device = 1; ev[n++] = e;
    e = mk(TRC_EV_SYNC); e.device = 1; ev[n++] = e;
    e = mk(TRC_EV_COPY); e.src = 0x7f0000000000ull; e.addr = 0x5555000; e.size = sizeof d2h; e.copy_kind = TRC_COPY_D2H; e.data = d2h; ev[n++] = e;
    e = mk(TRC_EV_COPY); e.size = 0; e.copy_kind = TRC_COPY_H2D; e.data = NULL; ev[n++] = e; /* zero-length */
    e = mk(TRC_EV_FREE); e.addr = 0x7f0000100000ull; ev[n++] = e;
    return n;
}

static trc_launch mk_launch(int k)
{
    trc_launch l;
    memset(&l, 0, sizeof l);
    l.device = (uint32_t)k;
    l.stream = (uint32_t)k * 7;
    l.code_object_id = (uint32_t)k;
    snprintf(l.kernel_name, sizeof l.kernel_name, "_Z%dkernel%dPfS_i", 7 + k, k);
    l.entry_vaddr = 0x1100 + 0x100u * (unsigned)k;
    memcpy(l.grid, grid[k], sizeof l.grid);
    l.wg_size[0] = 64 * waves_per_wg[k];
    l.wg_size[1] = l.wg_size[2] = 1;
    l.waves_per_wg = waves_per_wg[k];
    l.group_segment_size = 1024u * (unsigned)k;
    l.private_segment_size = 16;
    l.vgpr_count = 24;
    l.sgpr_count = 48;
    l.kernarg_addr = 0x7f0000200000ull + 64u * (unsigned)k;
    l.kernarg_size = sizeof kernarg[k];
    l.kernarg = kernarg[k];
    return l;
}

static char path[256];

/* Background compressor threads of the writer (< 0: its default). */
static int bg_threads = -1;

/* Writes the trace with n_threads committers; returns bytes written. */
static void write_trace(const char *p, int n_threads)
{
    uint64_t s = 42;
    for (size_t i = 0; i < sizeof co_bytes; i++) ((uint8_t *)co_bytes)[i] = (uint8_t)(mix(&s) % 7);
    for (size_t i = 0; i < sizeof h2d; i++) h2d[i] = (uint8_t)mix(&s);
    for (size_t i = 0; i < sizeof d2h; i++) d2h[i] = (uint8_t)mix(&s);
    for (size_t i = 0; i < sizeof init_bytes; i++) init_bytes[i] = (uint8_t)mix(&s);
    for (size_t i = 0; i < sizeof kernarg; i++) ((uint8_t *)kernarg)[i] = (uint8_t)mix(&s);

    trc_header_info h;
    fill_header(&h);
    char err[512];
    trc_writer *w = trc_writer_open_ex(p, &h, bg_threads, err, sizeof err);
    assert_non_null(w);
    assert_int_equal(trc_writer_code_object(w, co_bytes[0], sizeof co_bytes[0], 0x7f0000100000ull), 0);
    assert_int_equal(trc_writer_code_object(w, co_bytes[1], sizeof co_bytes[1], 0), 1);
    trc_event ev[32];
    size_t ne = make_events(ev);
    for (size_t i = 0; i < ne; i++) assert_int_equal(trc_writer_event(w, &ev[i]), 0);

    job j;
    memset(&j, 0, sizeof j);
    j.w = w;
    pthread_mutex_init(&j.mu, NULL);
    for (int k = 0; k < NK; k++) {
        trc_launch l = mk_launch(k);
        assert_int_equal(trc_writer_begin_kernel(w, &l), 0);
        assert_int_equal(l.kernel_id, (uint32_t)k);
        j.kernel_id[k] = l.kernel_id;
    }
    pthread_t th[8];
    for (int t = 0; t < n_threads; t++) pthread_create(&th[t], NULL, worker, &j);
    for (int t = 0; t < n_threads; t++) pthread_join(th[t], NULL);
    assert_int_equal(j.failed, 0);
    for (int k = 0; k < NK; k++) assert_int_equal(trc_writer_end_kernel(w, j.kernel_id[k]), 0);
    trc_event e = mk(TRC_EV_SYNC);
    assert_int_equal(trc_writer_event(w, &e), 0);
    if (trc_writer_close(w) != 0) fail_msg("close: %s", trc_writer_error(w));
    trc_writer_destroy(w);
    pthread_mutex_destroy(&j.mu);
}

static void check_event(const trc_event *a, const trc_event *b)
{
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->device, b->device);
    assert_int_equal(a->stream, b->stream);
    assert_int_equal(a->addr, b->addr);
    assert_int_equal(a->src, b->src);
    assert_int_equal(a->size, b->size);
    assert_int_equal(a->mem_kind, b->mem_kind);
    assert_int_equal(a->copy_kind, b->copy_kind);
    assert_int_equal(a->value, b->value);
    assert_int_equal(a->managed, b->managed);
    assert_int_equal(a->data == NULL || a->size == 0, b->data == NULL || b->size == 0);
    if (a->data && a->size) assert_memory_equal(a->data, b->data, a->size);
}

static void check_wave(const trc_wave *got, uint64_t seed, int profile, int with_data)
{
    xwave x;
    gen_wave(&x, seed, profile);
    assert_int_equal(got->n_instr, x.n_instr);
    uint32_t nb = 0, ni = 0, nx = 0, nm = 0;
    for (size_t i = 0; i < x.n_ops; i++) {
        xop *o = &x.ops[i];
        switch (o->kind) {
        case OP_BR:
            assert_true(nb < got->n_branch);
            assert_int_equal((got->branch_taken[nb >> 3] >> (nb & 7)) & 1, o->taken);
            nb++;
            break;
        case OP_IND:
            assert_true(ni < got->n_indirect);
            assert_int_equal(got->indirect_target[ni++], o->v);
            break;
        case OP_EXEC:
            assert_true(nx < got->n_exec);
            assert_int_equal(got->exec_at[nx], o->at);
            assert_int_equal(got->exec_val[nx++], o->v);
            break;
        case OP_MEM: {
            assert_true(nm < got->n_mem);
            const trc_mem_op *m = &got->mem[nm++];
            assert_int_equal(m->flags, o->flags);
            assert_int_equal(m->bytes_per_lane, o->bpl);
            assert_int_equal(m->exec, o->exec);
            uint32_t k = 0;
            for (int l = 0; l < 64; l++)
                if (o->exec >> l & 1) assert_int_equal(m->addr[k++], o->addr[l]);
            if (with_data) {
                assert_int_equal(m->load_data != NULL, o->ldn != 0);
                assert_int_equal(m->store_data != NULL, o->sdn != 0);
                if (o->ldn) assert_memory_equal(m->load_data, o->ld, o->ldn);
                if (o->sdn) assert_memory_equal(m->store_data, o->sd, o->sdn);
            } else {
                assert_null(m->load_data);
                assert_null(m->store_data);
            }
            break;
        }
        }
    }
    assert_int_equal(nb, got->n_branch);
    assert_int_equal(ni, got->n_indirect);
    assert_int_equal(nx, got->n_exec);
    assert_int_equal(nm, got->n_mem);
    free_wave(&x);
}

static void check_trace(const char *p)
{
    char err[512];
    trc_reader *r = trc_reader_open(p, err, sizeof err);
    if (!r) fail_msg("open: %s", err);
    trc_header_info h;
    fill_header(&h);
    const trc_header_info *g = trc_reader_header(r);
    assert_string_equal(g->producer, h.producer);
    assert_string_equal(g->producer_version, h.producer_version);
    assert_string_equal(g->isa_target, h.isa_target);
    assert_string_equal(g->command_line, h.command_line);
    assert_int_equal(g->device_count, h.device_count);
    assert_int_equal(g->format_major, TRC_FORMAT_MAJOR);
    assert_int_equal(g->format_minor, TRC_WRITE_FORMAT_MINOR);

    assert_int_equal(trc_reader_n_code_objects(r), 2);
    for (size_t i = 0; i < 2; i++) {
        size_t len = 0;
        const uint8_t *b = trc_reader_code_object(r, i, &len);
        assert_int_equal(len, sizeof co_bytes[i]);
        assert_memory_equal(b, co_bytes[i], len);
    }
    assert_null(trc_reader_code_object(r, 2, NULL));
    assert_int_equal(trc_reader_code_object_addr(r, 0), 0x7f0000100000ull);
    assert_int_equal(trc_reader_code_object_addr(r, 1), 0);
    assert_int_equal(trc_reader_code_object_addr(r, 2), 0);

    trc_event ev[32];
    size_t ne = make_events(ev);
    assert_int_equal(trc_reader_n_events(r), ne + NK + 1);
    for (size_t i = 0; i < ne; i++) check_event(&ev[i], trc_reader_event(r, i));
    for (int k = 0; k < NK; k++) {
        const trc_event *e = trc_reader_event(r, ne + (size_t)k);
        trc_launch l = mk_launch(k);
        assert_int_equal(e->kind, TRC_EV_LAUNCH);
        assert_int_equal(e->device, l.device);
        assert_int_equal(e->stream, l.stream);
        const trc_launch *a = &e->launch;
        assert_int_equal(a->kernel_id, (uint32_t)k);
        assert_int_equal(a->device, l.device);
        assert_int_equal(a->stream, l.stream);
        assert_int_equal(a->code_object_id, l.code_object_id);
        assert_string_equal(a->kernel_name, l.kernel_name);
        assert_int_equal(a->entry_vaddr, l.entry_vaddr);
        assert_memory_equal(a->grid, l.grid, sizeof l.grid);
        assert_memory_equal(a->wg_size, l.wg_size, sizeof l.wg_size);
        assert_int_equal(a->waves_per_wg, l.waves_per_wg);
        assert_int_equal(a->group_segment_size, l.group_segment_size);
        assert_int_equal(a->private_segment_size, l.private_segment_size);
        assert_int_equal(a->vgpr_count, l.vgpr_count);
        assert_int_equal(a->sgpr_count, l.sgpr_count);
        assert_int_equal(a->kernarg_addr, l.kernarg_addr);
        assert_int_equal(a->kernarg_size, l.kernarg_size);
        assert_memory_equal(a->kernarg, l.kernarg, l.kernarg_size);
        assert_int_equal(e->n_wg, n_wg_of(k));

        /* every workgroup exactly once, in some commit order */
        uint8_t seen[64] = {0};
        uint64_t sum_instr = 0, sum_mem = 0;
        for (uint32_t i = 0; i < e->n_wg; i++) {
            for (int with_data = 0; with_data <= 1; with_data++) {
                trc_wg *wg = with_data ? trc_reader_load_wg(r, (uint32_t)k, i, err, sizeof err)
                                       : trc_reader_load_wg_ex(r, (uint32_t)k, i, 0, err, sizeof err);
                if (!wg) fail_msg("load_wg: %s", err);
                assert_int_equal(wg->kernel_id, (uint32_t)k);
                uint32_t lin = wg->wg_id[0] + grid[k][0] * (wg->wg_id[1] + grid[k][1] * wg->wg_id[2]);
                assert_true(lin < n_wg_of(k));
                if (with_data) {
                    assert_int_equal(seen[lin], 0);
                    seen[lin] = 1;
                }
                assert_int_equal(wg->n_waves, waves_per_wg[k]);
                for (uint32_t v = 0; v < wg->n_waves; v++) {
                    assert_int_equal(wg->waves[v].wave_in_wg, v);
                    check_wave(&wg->waves[v], wave_seed((uint32_t)k, lin, v), profile_of_kernel[k], with_data);
                    if (with_data) {
                        sum_instr += wg->waves[v].n_instr;
                        sum_mem += wg->waves[v].n_mem;
                    }
                }
                trc_wg_free(wg);
            }
        }
        assert_int_equal(sum_instr, e->n_instr);
        trc_kernel_stats st;
        assert_int_equal(trc_reader_kernel_stats(r, (uint32_t)k, &st), 0);
        assert_int_equal(st.n_mem, sum_mem);
        assert_int_equal(st.n_instr, sum_instr);
        assert_int_equal(st.ended, 1);
        assert_null(trc_reader_load_wg(r, (uint32_t)k, e->n_wg, err, sizeof err));
        assert_non_null(strstr(err, "no workgroup"));
    }
    assert_int_equal(trc_reader_event(r, ne + NK)->kind, TRC_EV_SYNC);
    trc_reader_close(r);
}

/* The byte-plane shuffle of data streams (format 0.2): output byte b*w+i is
 * input byte 4i+b, tail verbatim; checked against that definition for every
 * length around the SIMD block size, and inverted exactly. */
static void test_shuf4(void **state)
{
    (void)state;
    uint8_t src[300], sh[300], back[300];
    for (size_t i = 0; i < sizeof src; i++) src[i] = (uint8_t)(i * 37u + (i >> 3));
    for (size_t n = 0; n <= sizeof src; n++) {
        memset(sh, 0xAA, sizeof sh);
        memset(back, 0x55, sizeof back);
        trc_shuf4(sh, src, n);
        size_t w = n / 4;
        for (size_t i = 0; i < w; i++)
            for (size_t b = 0; b < 4; b++)
                if (sh[b * w + i] != src[4 * i + b]) fail_msg("n=%zu word %zu byte %zu misplaced", n, i, b);
        for (size_t k = 4 * w; k < n; k++) assert_int_equal(sh[k], src[k]);
        trc_unshuf4(back, sh, n);
        if (n) assert_memory_equal(back, src, n);
        if (n < sizeof back) assert_int_equal(back[n], 0x55); /* nothing written past n */
    }
}

static void test_roundtrip_threads(void **state)
{
    (void)state;
    /* committers x background compressors: default, inline, 3 threads */
    const int bg[] = {-1, 0, 3};
    for (int b = 0; b < 3; b++) {
        bg_threads = bg[b];
        for (int nt = 1; nt <= 4; nt += 3) {
            write_trace(path, nt);
            check_trace(path);
        }
    }
    bg_threads = -1;
}

/* Concurrent decoding from several threads gives the same result. */
static trc_reader *shared_r;
static void *load_all(void *arg)
{
    (void)arg;
    char err[256];
    for (int rep = 0; rep < 3; rep++)
        for (uint32_t k = 0; k < NK; k++)
            for (uint32_t i = 0; i < n_wg_of((int)k); i++) {
                trc_wg *wg = trc_reader_load_wg(shared_r, k, i, err, sizeof err);
                if (!wg) return (void *)1;
                trc_wg_free(wg);
            }
    return NULL;
}

static void test_parallel_read(void **state)
{
    (void)state;
    write_trace(path, 2);
    char err[512];
    shared_r = trc_reader_open(path, err, sizeof err);
    assert_non_null(shared_r);
    pthread_t th[4];
    for (int t = 0; t < 4; t++) pthread_create(&th[t], NULL, load_all, NULL);
    for (int t = 0; t < 4; t++) {
        void *rv;
        pthread_join(th[t], &rv);
        assert_null(rv);
    }
    trc_reader_close(shared_r);
}

/* Bytes per wavefront-instruction (informational, printed; the assertion
 * only guards against gross regressions of the streaming profile). */
static void test_size(void **state)
{
    (void)state;
    for (int prof = 0; prof <= 1; prof++) {
        profile_of_kernel[0] = profile_of_kernel[1] = prof;
        write_trace(path, 2);
        check_trace(path);
        char err[512];
        trc_reader *r = trc_reader_open(path, err, sizeof err);
        assert_non_null(r);
        uint64_t instr = 0, wgb = 0, db = 0, mem = 0;
        for (uint32_t k = 0; k < NK; k++) {
            trc_kernel_stats st;
            trc_reader_kernel_stats(r, k, &st);
            instr += st.n_instr;
            wgb += st.wg_bytes;
            db += st.data_bytes;
            mem += st.n_mem;
        }
        printf("# profile %s: %llu wavefront-instr, %llu mem ops, records %.3f B/instr, data %.3f B/instr\n",
               prof ? "streaming" : "random", (unsigned long long)instr, (unsigned long long)mem,
               (double)wgb / (double)instr, (double)db / (double)instr);
        if (prof == 1) assert_true((double)wgb / (double)instr < 2.0);
        trc_reader_close(r);
    }
    profile_of_kernel[0] = profile_of_kernel[1] = 0;
}

/* Recording misuse is reported at commit, naming the workgroup. */
/* Format 1.3 stream waits: a SYNC's until_event / stream_wait / wait_stream
 * round-trip; a sync waiting for work after itself is rejected by the reader. */
static void test_stream_wait(void **state)
{
    (void)state;
    trc_header_info h;
    fill_header(&h);
    char err[512];
    for (int bad = 0; bad < 2; bad++) {
        trc_writer *w = trc_writer_open(path, &h, err, sizeof err);
        assert_non_null(w);
        trc_event e = mk(TRC_EV_SYNC);
        e.stream = 3;
        assert_int_equal(trc_writer_n_events(w), 0);
        assert_int_equal(trc_writer_event(w, &e), 0);
        assert_int_equal(trc_writer_n_events(w), 1);
        e.until_event = bad ? 5 : 1;
        e.stream_wait = 1;
        e.wait_stream = 7;
        assert_int_equal(trc_writer_event(w, &e), 0);
        if (trc_writer_close(w) != 0) fail_msg("close: %s", trc_writer_error(w));
        trc_writer_destroy(w);
        trc_reader *r = trc_reader_open(path, err, sizeof err);
        if (bad) {
            assert_null(r);
            assert_non_null(strstr(err, "which follows it"));
            continue;
        }
        if (!r) fail_msg("%s", err);
        assert_int_equal(trc_reader_n_events(r), 2);
        const trc_event *a = trc_reader_event(r, 0), *b = trc_reader_event(r, 1);
        assert_true(!a->until_event && !a->stream_wait && !a->wait_stream);
        assert_int_equal(b->until_event, 1);
        assert_int_equal(b->stream_wait, 1);
        assert_int_equal(b->wait_stream, 7);
        assert_int_equal(b->stream, 3);
        trc_reader_close(r);
    }
}

/* Format 2.1 managed allocations: `managed` round-trips on a device-memory
 * ALLOC; on any other event, or on an ALLOC of another memory kind, the
 * reader refuses the trace with one line naming the event. */
static void test_managed(void **state)
{
    (void)state;
    trc_header_info h;
    fill_header(&h);
    char err[512];
    static const struct { trc_event_kind kind; trc_mem_kind mk; } bad[] = {
        {TRC_EV_ALLOC, TRC_MEM_DEVICE}, /* good */
        {TRC_EV_ALLOC, TRC_MEM_HOST_PINNED}, {TRC_EV_ALLOC, TRC_MEM_SCRATCH}, {TRC_EV_FREE, TRC_MEM_DEVICE},
        {TRC_EV_MEMSET, TRC_MEM_DEVICE}, {TRC_EV_SYNC, TRC_MEM_DEVICE}};
    for (size_t c = 0; c < sizeof bad / sizeof *bad; c++) {
        trc_writer *w = trc_writer_open(path, &h, err, sizeof err);
        assert_non_null(w);
        trc_event e = mk(TRC_EV_ALLOC);
        e.addr = 0x10000;
        e.size = 4096;
        assert_int_equal(trc_writer_event(w, &e), 0); /* a plain device allocation */
        e = mk(bad[c].kind);
        e.addr = 0x20000;
        e.size = 8192;
        e.mem_kind = bad[c].mk;
        e.managed = 1;
        assert_int_equal(trc_writer_event(w, &e), 0);
        if (trc_writer_close(w) != 0) fail_msg("close: %s", trc_writer_error(w));
        trc_writer_destroy(w);
        trc_reader *r = trc_reader_open(path, err, sizeof err);
        if (c) {
            if (r) fail_msg("case %zu: a managed flag on kind %d / mem_kind %d was accepted", c, (int)bad[c].kind,
                            (int)bad[c].mk);
            assert_non_null(strstr(err, path));
            assert_non_null(strstr(err, "event 1 "));
            assert_non_null(strstr(err, "managed flag on an event that is not a device-memory ALLOC"));
            assert_null(strchr(err, '\n'));
            continue;
        }
        if (!r) fail_msg("%s", err);
        assert_int_equal(trc_reader_n_events(r), 2);
        const trc_event *a = trc_reader_event(r, 0), *b = trc_reader_event(r, 1);
        assert_int_equal(a->managed, 0);
        assert_int_equal(b->managed, 1);
        assert_int_equal(b->kind, TRC_EV_ALLOC);
        assert_int_equal(b->mem_kind, TRC_MEM_DEVICE);
        assert_int_equal(b->addr, 0x20000);
        assert_int_equal(b->size, 8192);
        trc_reader_close(r);
    }
}

/* Format 2.3, gcn3-emu --lds-values none: a recorder told to leave out LDS
 * values (trc_wg_rec_lds_data(g, 0)) keeps the LDS ops' addresses and the
 * other ops' values, hashes no LDS load (with --load-values hash on), and the
 * header says so; a default header says 0 and hashes the LDS load. */
/* Format 2.4 store frames (2.5: with their ops): a kernel whose data values are mostly loads and
 * LDS values (kernel 0) gets one beside each data frame; a kernel whose
 * values are half stores (kernel 1) gets none. TRC_WG_STORES_ONLY then
 * reads the store frame: every store and atomic outside the LDS has its
 * values, as the data frame gives them; LDS ops and loads have none. */
static void test_store_frames(void **state)
{
    (void)state;
    char err[512];
    trc_header_info h;
    fill_header(&h);
    trc_writer *w = trc_writer_open(path, &h, err, sizeof err);
    assert_non_null(w);
    trc_wg_rec *g = trc_wg_rec_create();
    uint64_t addr[64];
    uint32_t vals[64 * 4], ret[64], big[2][64 * 4];
    uint64_t x = 0x243f6a8885a308d3ull; /* xorshift: values that do not compress */
    for (int k = 0; k < 2; k++) {
        trc_launch l = mk_launch(k);
        assert_int_equal(trc_writer_begin_kernel(w, &l), 0);
        for (uint32_t wg = 0; wg < (k ? 2u : 4u); wg++) {
            uint32_t id[3] = {wg, 0, 0};
            trc_wg_rec_begin(g, l.kernel_id, id, waves_per_wg[k]);
            for (uint32_t v = 0; v < waves_per_wg[k]; v++) {
                for (int i = 0; i < 64 * 4; i++) vals[i] = 0x9e3779b9u * (uint32_t)(i + 1000 * (int)wg + 100 * (int)v + 7 * k);
                for (int i = 0; i < 64; i++) ret[i] = vals[i] ^ 0x5a5a5a5au;
                for (int j = 0; j < 2; j++)
                    for (int i = 0; i < 64 * 4; i++) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        big[j][i] = (uint32_t)x;
                    }
                if (!k) {
                    /* LDS round trip (256 + 256 bytes), two 16-byte-per-lane loads (2 KiB), a store
                     * of 16 lanes (64 bytes) and an atomic add (256 operand, 256 returned): 10% stores */
                    for (int i = 0; i < 64; i++) addr[i] = 4u * (unsigned)i;
                    trc_rec_mem(g, v, TRC_MO_STORE | TRC_MO_LDS, 4, ~0ull, addr, NULL, vals);
                    trc_rec_mem(g, v, TRC_MO_LOAD | TRC_MO_LDS, 4, ~0ull, addr, vals + 64, NULL);
                    for (int i = 0; i < 64; i++) addr[i] = 0x7f0000000000ull + 0x10000ull * wg + 16u * (unsigned)i;
                    trc_rec_mem(g, v, TRC_MO_LOAD, 16, ~0ull, addr, big[0], NULL);
                    trc_rec_mem(g, v, TRC_MO_LOAD, 16, ~0ull, addr, big[1], NULL);
                    trc_rec_mem(g, v, TRC_MO_STORE, 4, 0xffffull << (4 * v), addr, NULL, vals + 128);
                    trc_rec_mem(g, v, TRC_MO_ATOMIC, 4, ~0ull, addr, ret, vals + 64);
                    /* 2.5: a store of 8 lanes at scattered addresses (lane deltas) */
                    for (int i = 0; i < 8; i++) addr[i] = 0x7f8000000000ull + 0x100ull * wg + 64u * (unsigned)(i * i);
                    trc_rec_mem(g, v, TRC_MO_STORE, 4, 0xffull, addr, NULL, vals + 200);
                } else {
                    /* a load and a store of 256 bytes: half stores */
                    for (int i = 0; i < 64; i++) addr[i] = 0x7e0000000000ull + 0x1000ull * wg + 4u * (unsigned)i;
                    trc_rec_mem(g, v, TRC_MO_LOAD, 4, ~0ull, addr, vals, NULL);
                    trc_rec_mem(g, v, TRC_MO_STORE, 4, ~0ull, addr, NULL, vals + 64);
                }
                trc_rec_wave_end(g, v, 20);
            }
            assert_int_equal(trc_wg_commit(w, g), 0);
        }
        assert_int_equal(trc_writer_end_kernel(w, l.kernel_id), 0);
    }
    trc_wg_rec_destroy(g);
    if (trc_writer_close(w) != 0) fail_msg("close: %s", trc_writer_error(w));
    trc_writer_destroy(w);

    trc_reader *r = trc_reader_open(path, err, sizeof err);
    if (!r) fail_msg("%s", err);
    assert_int_equal(trc_reader_header(r)->format_minor, TRC_FORMAT_MINOR);
    for (uint32_t k = 0; k < 2; k++) {
        trc_kernel_stats st;
        assert_int_equal(trc_reader_kernel_stats(r, k, &st), 0);
        if (k == 0) {
            assert_true(st.n_frames >= 1);
            assert_int_equal(st.n_store_frames, st.n_frames);
            /* the writer's rule (TRC_STORE_FRAME_SHARE): at most an eighth of
             * the data frames, compressed (raw, its values are; the 2.5 ops
             * come on top) */
            assert_true(st.store_bytes > 0 && st.raw_store_bytes > 0 && st.store_bytes * 8 <= st.data_bytes);
            print_message("# kernel 0: store frames %llu bytes (%llu raw), data frames %llu (%llu raw)\n",
                          (unsigned long long)st.store_bytes, (unsigned long long)st.raw_store_bytes,
                          (unsigned long long)st.data_bytes, (unsigned long long)st.raw_data_bytes);
        } else {
            assert_int_equal(st.n_store_frames, 0);
            assert_int_equal(st.store_bytes, 0);
        }
        for (uint32_t i = 0; i < st.n_wg; i++) {
            trc_wg *a = trc_reader_load_wg(r, k, i, err, sizeof err);
            if (!a) fail_msg("%s", err);
            trc_wg *b = trc_reader_load_wg_ex(r, k, i, TRC_WG_STORES_ONLY, err, sizeof err);
            if (!b) fail_msg("%s", err);
            assert_int_equal(a->n_waves, b->n_waves);
            for (uint32_t v = 0; v < a->n_waves; v++) {
                assert_int_equal(a->waves[v].n_mem, b->waves[v].n_mem);
                for (uint32_t m = 0; m < a->waves[v].n_mem; m++) {
                    const trc_mem_op *x = &a->waves[v].mem[m], *y = &b->waves[v].mem[m];
                    assert_int_equal(x->flags, y->flags);
                    assert_null(y->load_data);
                    assert_int_equal(y->load_hash, 0);
                    if (x->flags & TRC_MO_LDS) {
                        assert_non_null(x->store_data || x->load_data ? (void *)1 : NULL);
                        assert_null(y->store_data); /* not in the store frame */
                    } else if (x->store_data) {
                        assert_non_null(y->store_data);
                        assert_memory_equal(x->store_data, y->store_data,
                                            trc_mo_store_len(x->flags, trc_popcount64(x->exec), x->bytes_per_lane));
                    } else {
                        assert_null(y->store_data);
                    }
                }
            }
            /* 2.5: TRC_WG_STORE_OPS reads the store frame alone (kernel 0):
             * per wave its instruction count and exactly its ops with
             * values outside the LDS (the 16-lane store, the atomic, the
             * scattered store), as the record gives them; without a store
             * frame (kernel 1) the workgroup as TRC_WG_STORES_ONLY gives it */
            trc_wg *c = trc_reader_load_wg_ex(r, k, i, TRC_WG_STORES_ONLY | TRC_WG_STORE_OPS | TRC_WG_NO_LDS_ADDR,
                                              err, sizeof err);
            if (!c) fail_msg("%s", err);
            assert_int_equal(c->ops_only, k == 0);
            assert_int_equal(a->n_waves, c->n_waves);
            assert_memory_equal(a->wg_id, c->wg_id, sizeof a->wg_id);
            for (uint32_t v = 0; v < a->n_waves; v++) {
                const trc_wave *wa = &a->waves[v], *wc = &c->waves[v];
                assert_int_equal(wa->n_instr, wc->n_instr);
                uint32_t o = 0;
                for (uint32_t m = 0; m < wa->n_mem; m++) {
                    const trc_mem_op *x = &wa->mem[m];
                    if (k == 0 && (!x->store_data || (x->flags & TRC_MO_LDS)))
                        continue;
                    assert_true(o < wc->n_mem);
                    const trc_mem_op *y = &wc->mem[o++];
                    assert_int_equal(x->flags, y->flags);
                    assert_int_equal(x->exec, y->exec);
                    assert_int_equal(x->bytes_per_lane, y->bytes_per_lane);
                    uint32_t n = trc_popcount64(x->exec);
                    if (!(x->flags & TRC_MO_LDS))
                        for (uint32_t l = 0; l < n; l++) assert_int_equal(trc_mo_addr(x, l), trc_mo_addr(y, l));
                    assert_null(y->load_data);
                    if (x->store_data && !(x->flags & TRC_MO_LDS)) {
                        assert_non_null(y->store_data);
                        assert_memory_equal(x->store_data, y->store_data,
                                            trc_mo_store_len(x->flags, n, x->bytes_per_lane));
                    }
                }
                assert_int_equal(o, wc->n_mem);
                if (k == 0)
                    assert_int_equal(wc->n_mem, 3);
            }
            trc_wg_free(c);
            trc_wg_free(a);
            trc_wg_free(b);
        }
    }
    trc_reader_close(r);
}

static void test_lds_values(void **state)
{
    (void)state;
    char err[512];
    for (int omit = 0; omit < 2; omit++) {
        trc_header_info h;
        fill_header(&h);
        h.lds_values_omitted = (uint32_t)omit;
        trc_writer *w = trc_writer_open(path, &h, err, sizeof err);
        assert_non_null(w);
        trc_launch l = mk_launch(0);
        assert_int_equal(trc_writer_begin_kernel(w, &l), 0);
        trc_wg_rec *g = trc_wg_rec_create();
        uint32_t id[3] = {0, 0, 0};
        trc_wg_rec_begin(g, l.kernel_id, id, 1);
        trc_wg_rec_lds_data(g, !omit);
        trc_wg_rec_hash_loads(g, 1); /* hashed loads too: an LDS load without values gets no hash */
        uint64_t addr[64];
        uint32_t vals[64];
        for (int i = 0; i < 64; i++) {
            addr[i] = 4u * (unsigned)i;
            vals[i] = 0x1000u + (unsigned)i;
        }
        trc_rec_mem(g, 0, TRC_MO_STORE | TRC_MO_LDS, 4, ~0ull, addr, NULL, vals);
        trc_rec_mem(g, 0, TRC_MO_LOAD | TRC_MO_LDS, 4, 0xffull, addr, vals, NULL);
        for (int i = 0; i < 64; i++) addr[i] = 0x7f0000000000ull + 4u * (unsigned)i;
        trc_rec_mem(g, 0, TRC_MO_STORE, 4, ~0ull, addr, NULL, vals);
        trc_rec_wave_end(g, 0, 10);
        assert_int_equal(trc_wg_commit(w, g), 0);
        trc_wg_rec_destroy(g);
        assert_int_equal(trc_writer_end_kernel(w, l.kernel_id), 0);
        if (trc_writer_close(w) != 0) fail_msg("close: %s", trc_writer_error(w));
        trc_writer_destroy(w);

        trc_reader *r = trc_reader_open(path, err, sizeof err);
        if (!r) fail_msg("%s", err);
        assert_int_equal(trc_reader_header(r)->lds_values_omitted, (uint32_t)omit);
        assert_int_equal(trc_reader_header(r)->format_minor, TRC_WRITE_FORMAT_MINOR);
        trc_wg *wg = trc_reader_load_wg(r, 0, 0, err, sizeof err);
        if (!wg) fail_msg("%s", err);
        assert_int_equal(wg->n_waves, 1);
        const trc_wave *v = &wg->waves[0];
        assert_int_equal(v->n_mem, 3);
        /* addresses always; LDS values only when kept; the global store's always */
        assert_int_equal(trc_mo_addr(&v->mem[0], 63), 252);
        assert_int_equal(trc_mo_addr(&v->mem[1], 7), 28);
        if (omit) {
            assert_null(v->mem[0].store_data);
            assert_null(v->mem[1].load_data);
            assert_int_equal(v->mem[1].load_hash, 0);
        } else {
            assert_non_null(v->mem[0].store_data);
            assert_memory_equal(v->mem[0].store_data, vals, sizeof vals);
            assert_null(v->mem[1].load_data); /* hashed: the hash of what it read */
            assert_true(v->mem[1].load_hash == trc_load_hash(vals, 8 * 4));
        }
        assert_non_null(v->mem[2].store_data);
        assert_memory_equal(v->mem[2].store_data, vals, sizeof vals);
        trc_wg_free(wg);
        trc_reader_close(r);
    }
}

/* The host image (trc_himg.h): reads as of an event, memsets over copies,
 * forgotten (D2D) bytes, a read across two pages, bytes never written. */
static void test_himg(void **state)
{
    (void)state;
    uint8_t a[100], b[32], out[64], want[64];
    for (int i = 0; i < 100; i++) a[i] = (uint8_t)(3 * i + 1);
    for (int i = 0; i < 32; i++) b[i] = (uint8_t)(200 + i);
    trc_himg *h = trc_himg_create();
    assert_non_null(h);
    assert_int_equal(trc_himg_write(h, 0, 0x1000, 100, a, 0, 0), 1);
    assert_int_equal(trc_himg_write(h, 1, 0x1020, 16, NULL, 0x7f, 0), 1);
    assert_int_equal(trc_himg_forget(h, 2, 0x1040, 8), 0);
    assert_int_equal(trc_himg_write(h, 3, 0x1ff0, 32, b, 0, 0), 2);
    assert_int_equal(trc_himg_read(h, 1, 0x1000, 64, out), 0); /* before the memset */
    assert_memory_equal(out, a, 64);
    assert_int_equal(trc_himg_read(h, 2, 0x1000, 64, out), 0); /* after it */
    memcpy(want, a, 64);
    memset(want + 0x20, 0x7f, 16);
    assert_memory_equal(out, want, 64);
    assert_int_equal(trc_himg_read(h, 3, 0x1038, 16, out), -1); /* the D2D's bytes */
    assert_int_equal(trc_himg_read(h, 2, 0x1038, 16, out), 0);
    assert_memory_equal(out, a + 0x38, 16);
    assert_int_equal(trc_himg_read(h, 4, 0x1ff8, 16, out), 0); /* across 0x2000 */
    assert_memory_equal(out, b + 8, 16);
    assert_int_equal(trc_himg_read(h, 3, 0x1ff8, 16, out), -1); /* not yet written */
    assert_int_equal(trc_himg_read(h, 9, 0x5000, 4, out), -1);
    assert_int_equal(trc_himg_read(h, 9, 0x1050, 8, out), 0); /* past the forgotten bytes */
    assert_memory_equal(out, a + 0x50, 8);
    assert_int_equal(trc_himg_read(h, 9, 0x1060, 8, out), -1); /* the copy ends at 0x1064 */
    assert_true(trc_himg_equal(h, 0x1000, 32, want));
    assert_false(trc_himg_equal(h, 0x1000, 64, a)); /* the memset differs */
    assert_false(trc_himg_equal(h, 0x1040, 4, a + 0x40)); /* forgotten */
    assert_true(trc_himg_equal(h, 0x1ff0, 32, b));
    /* a FREE of 16 TiB (a dispatch's scratch backing store) touches only the
     * pages the image holds (a page per 4 KiB would not finish), and a memset
     * over 1 GiB leaves its bytes unknown */
    assert_int_equal(trc_himg_forget(h, 10, 0x1ff8, (uint64_t)1 << 44), 0);
    assert_int_equal(trc_himg_read(h, 11, 0x1ff0, 8, out), 0);
    assert_memory_equal(out, b, 8);
    assert_int_equal(trc_himg_read(h, 11, 0x1ff8, 8, out), -1);
    assert_int_equal(trc_himg_read(h, 11, 0x2000, 8, out), -1); /* every page of the range, not the first only */
    assert_int_equal(trc_himg_read(h, 10, 0x1ff8, 8, out), 0); /* before the FREE */
    assert_int_equal(trc_himg_write(h, 12, (uint64_t)1 << 40, TRC_HIMG_MAX_FILL + 1, NULL, 0, 0), 0) /* no segment: unknown */;
    assert_int_equal(trc_himg_read(h, 13, (uint64_t)1 << 40, 8, out), -1);
    assert_int_equal(trc_himg_write(h, 14, (uint64_t)1 << 40, 1 << 20, NULL, 0, 0), 256);
    assert_int_equal(trc_himg_read(h, 15, (uint64_t)1 << 40, 8, out), 0);
    assert_int_equal(trc_himg_forget(h, 16, UINT64_MAX - 8, 100), 0); /* wraps: clamped */
    trc_himg_destroy(h);
}

/* Records kernel k (one wave) of the host-image test: a load of the 256
 * bytes at 0x10000 with values v, one at 0x50000 (bytes only `inject` put
 * into the writer's image) when inject, and a store. */
static void himg_kernel(trc_writer *w, int k, const uint8_t *v, int inject)
{
    trc_launch l = mk_launch(0);
    assert_int_equal(trc_writer_begin_kernel(w, &l), 0);
    trc_wg_rec *g = trc_wg_rec_create();
    uint32_t id[3] = {0, 0, 0};
    trc_wg_rec_begin(g, l.kernel_id, id, 1);
    trc_wg_rec_host_image(g, w);
    uint64_t addr[64];
    for (int i = 0; i < 64; i++) addr[i] = 0x10000 + 4u * (unsigned)i;
    trc_rec_mem(g, 0, TRC_MO_LOAD, 4, ~0ull, addr, v, NULL);
    trc_rec_mem(g, 0, TRC_MO_LOAD, 4, ~0ull, addr, v + 1, NULL); /* other values: kept */
    trc_rec_mem(g, 0, TRC_MO_STORE, 4, ~0ull, addr, NULL, v);
    if (inject) {
        for (int i = 0; i < 64; i++) addr[i] = 0x50000 + 4u * (unsigned)i;
        trc_rec_mem(g, 0, TRC_MO_LOAD, 4, ~0ull, addr, v, NULL);
    }
    trc_rec_wave_end(g, 0, 10 + (uint64_t)k);
    assert_int_equal(trc_wg_commit(w, g), 0);
    trc_wg_rec_destroy(g);
    assert_int_equal(trc_writer_end_kernel(w, l.kernel_id), 0);
}

/* 2.6 host-image loads: a load of what an H2D copy wrote is flagged without
 * values and read back as the copy's bytes as of its kernel's launch (the
 * second kernel's after a second copy changed them); a load of other values
 * keeps them; after a FREE of the bytes a load keeps its values; and a flagged load
 * whose bytes the trace's events do not hold (put into the writer's image by
 * hand: a writer bug) is refused as corrupt. */
static void test_host_image(void **state)
{
    (void)state;
    char err[512];
    uint8_t v1[260], v2[260];
    for (int i = 0; i < 260; i++) {
        v1[i] = (uint8_t)(7 * i + 3);
        v2[i] = (uint8_t)(11 * i + 5);
    }
    for (int inject = 0; inject < 2; inject++) {
        trc_header_info h;
        fill_header(&h);
        trc_writer *w = trc_writer_open(path, &h, err, sizeof err);
        assert_non_null(w);
        trc_event e;
        memset(&e, 0, sizeof e);
        e.kind = TRC_EV_COPY;
        e.copy_kind = TRC_COPY_H2D;
        e.addr = 0x10000;
        e.src = 0x7f0000;
        e.size = 256;
        e.data = v1;
        assert_int_equal(trc_writer_event(w, &e), 0);
        if (inject) /* bytes no event of the trace holds */
            assert_int_equal(trc_himg_write((trc_himg *)trc_writer_himg(w), 1, 0x50000, 256, v1, 0, 0), 1);
        himg_kernel(w, 0, v1, inject);
        e.data = v2;
        assert_int_equal(trc_writer_event(w, &e), 0);
        himg_kernel(w, 1, v2, 0);
        /* freed: what was there is unknown, whatever a kernel reads later */
        memset(&e, 0, sizeof e);
        e.kind = TRC_EV_FREE;
        e.addr = 0x10000;
        e.size = 0x10000;
        e.mem_kind = TRC_MEM_DEVICE;
        assert_int_equal(trc_writer_event(w, &e), 0);
        himg_kernel(w, 2, v2, 0);
        if (trc_writer_close(w) != 0) fail_msg("close: %s", trc_writer_error(w));
        trc_writer_destroy(w);

        trc_reader *r = trc_reader_open(path, err, sizeof err);
        if (!r) fail_msg("%s", err);
        assert_int_equal(trc_reader_header(r)->format_minor, 6);
        for (uint32_t k = 0; k < 3; k++) {
            trc_wg *wg = trc_reader_load_wg(r, k, 0, err, sizeof err);
            if (inject && k == 0) {
                assert_null(wg);
                assert_non_null(strstr(err, "host-image load reads bytes the host image does not hold"));
                continue;
            }
            if (!wg) fail_msg("%s", err);
            const trc_wave *t = &wg->waves[0];
            assert_int_equal(t->n_mem, 3);
            assert_int_equal(t->mem[0].flags, k < 2 ? TRC_MO_LOAD | TRC_MO_HOST : TRC_MO_LOAD);
            assert_memory_equal(t->mem[0].load_data, k ? v2 : v1, 256);
            assert_int_equal(t->mem[1].flags, TRC_MO_LOAD); /* its values differ from the image's */
            assert_memory_equal(t->mem[1].load_data, (k ? v2 : v1) + 1, 256);
            trc_wg_free(wg);
            /* without data: no values, no flag */
            wg = trc_reader_load_wg_ex(r, k, 0, 0, err, sizeof err);
            if (!wg) fail_msg("%s", err);
            assert_int_equal(wg->waves[0].mem[0].flags, TRC_MO_LOAD);
            trc_wg_free(wg);
        }
        trc_reader_close(r);
    }
}

static void test_misuse(void **state)
{
    (void)state;
    trc_header_info h;
    fill_header(&h);
    char err[512];
    trc_writer *w = trc_writer_open(path, &h, err, sizeof err);
    assert_non_null(w);
    trc_launch l = mk_launch(0);
    assert_int_equal(trc_writer_begin_kernel(w, &l), 0);
    trc_wg_rec *g = trc_wg_rec_create();
    uint32_t id[3] = {1, 2, 0};
    trc_wg_rec_begin(g, l.kernel_id, id, 2);
    trc_rec_branch(g, 5, 1);
    trc_rec_wave_end(g, 0, 1);
    trc_rec_wave_end(g, 1, 1);
    assert_int_equal(trc_wg_commit(w, g), -1);
    assert_non_null(strstr(trc_writer_error(w), "wave index"));
    assert_non_null(strstr(trc_writer_error(w), "1,2,0"));
    /* fails fast afterwards, keeping the first message */
    trc_wg_rec_begin(g, l.kernel_id, id, 1);
    trc_rec_wave_end(g, 0, 1);
    assert_int_equal(trc_wg_commit(w, g), -1);
    assert_non_null(strstr(trc_writer_error(w), "wave index"));
    assert_int_equal(trc_writer_close(w), -1);
    trc_writer_destroy(w);
    trc_wg_rec_destroy(g);

    /* a workgroup outside the launch's grid (5x3x1) */
    g = trc_wg_rec_create();
    w = trc_writer_open(path, &h, err, sizeof err);
    assert_int_equal(trc_writer_begin_kernel(w, &l), 0);
    uint32_t outside[3] = {1, 2, 3};
    trc_wg_rec_begin(g, l.kernel_id, outside, 1);
    trc_rec_wave_end(g, 0, 1);
    assert_int_equal(trc_wg_commit(w, g), -1);
    assert_non_null(strstr(trc_writer_error(w), "outside its grid"));
    trc_writer_destroy(w);

    /* the same workgroup committed twice */
    w = trc_writer_open(path, &h, err, sizeof err);
    assert_int_equal(trc_writer_begin_kernel(w, &l), 0);
    for (int t = 0; t < 2; t++) {
        trc_wg_rec_begin(g, l.kernel_id, id, 1);
        trc_rec_wave_end(g, 0, 1);
        assert_int_equal(trc_wg_commit(w, g), t ? -1 : 0);
    }
    assert_non_null(strstr(trc_writer_error(w), "committed twice"));
    trc_writer_destroy(w);
    trc_wg_rec_destroy(g);

    /* a wave that never ended */
    w = trc_writer_open(path, &h, err, sizeof err);
    assert_int_equal(trc_writer_begin_kernel(w, &l), 0);
    g = trc_wg_rec_create();
    trc_wg_rec_begin(g, l.kernel_id, id, 2);
    trc_rec_wave_end(g, 0, 1);
    assert_int_equal(trc_wg_commit(w, g), -1);
    assert_non_null(strstr(trc_writer_error(w), "before all its waves ended"));
    trc_writer_destroy(w);

    /* a kernel never ended: the index is still written, close reports it */
    w = trc_writer_open(path, &h, err, sizeof err);
    assert_int_equal(trc_writer_begin_kernel(w, &l), 0);
    trc_wg_rec_begin(g, l.kernel_id, id, 1);
    trc_rec_wave_end(g, 0, 7);
    assert_int_equal(trc_wg_commit(w, g), 0);
    assert_int_equal(trc_writer_close(w), -1);
    assert_non_null(strstr(trc_writer_error(w), "never ended"));
    trc_writer_destroy(w);
    trc_reader *r = trc_reader_open(path, err, sizeof err);
    assert_non_null(r);
    assert_int_equal(trc_reader_event(r, 0)->n_instr, 7);
    trc_reader_close(r);
    trc_wg_rec_destroy(g);
}

typedef struct cache_job { trc_reader *r; int t, nt; uint64_t sum; int rc; } cache_job;
static void *cache_reader(void *arg)
{
    cache_job *j = arg;
    char err[512];
    for (uint32_t k = 0; k < trc_reader_n_kernels(j->r); k++) {
        const trc_event *e = NULL;
        for (size_t i = 0; i < trc_reader_n_events(j->r); i++)
            if (trc_reader_event(j->r, i)->kind == TRC_EV_LAUNCH && trc_reader_event(j->r, i)->launch.kernel_id == k)
                e = trc_reader_event(j->r, i);
        for (uint32_t i = (uint32_t)j->t; e && i < e->n_wg; i += (uint32_t)j->nt) {
            trc_wg *g = trc_reader_load_wg(j->r, k, i, err, sizeof err);
            if (!g) { j->rc = -1; return NULL; }
            const trc_mem_op *o = &g->waves[0].mem[0]; /* kernel 2's loads are hashed (gen.h) */
            j->sum += g->waves[0].n_instr + o->addr[0] + (o->load_data ? o->load_data[3] : o->load_hash);
            trc_wg_free(g);
        }
    }
    return NULL;
}

/* Frames decode on demand into a bounded cache, from many threads; a
 * prefetch decodes a kernel's frames in parallel. */
static void test_frame_cache(void **state)
{
    (void)state;
    char err[512];
    if (gen_trace(path, 2, 3, 512, 2048, 1, err, sizeof err) != 0) fail_msg("%s", err);
    uint64_t ref = 0;
    for (int limit = 0; limit < 3; limit++) {
        trc_reader *r = trc_reader_open(path, err, sizeof err);
        assert_non_null(r);
        size_t lim = limit == 0 ? 0 : limit == 1 ? 8192 : 64u << 20;
        trc_reader_set_cache_limit(r, lim);
        cache_job j[4];
        pthread_t th[4];
        for (int t = 0; t < 4; t++) {
            j[t] = (cache_job){r, t, 4, 0, 0};
            pthread_create(&th[t], NULL, cache_reader, &j[t]);
        }
        uint64_t sum = 0;
        for (int t = 0; t < 4; t++) {
            pthread_join(th[t], NULL);
            assert_int_equal(j[t].rc, 0);
            sum += j[t].sum;
        }
        if (limit == 0) ref = sum;
        assert_true(sum == ref);
        trc_reader_cache_stats cs;
        trc_reader_get_cache_stats(r, &cs);
        trc_kernel_stats ks;
        assert_int_equal(trc_reader_kernel_stats(r, 0, &ks), 0);
        assert_true(ks.n_frames > 2); /* small frames: several per kernel */
        print_message("# cache limit %zu: %llu hits, %llu misses, %llu evictions, peak %zu bytes, now %zu\n",
                      lim, (unsigned long long)cs.hits, (unsigned long long)cs.misses,
                      (unsigned long long)cs.evictions, cs.peak_bytes, cs.bytes);
        assert_true(cs.bytes <= lim);
        if (limit == 0) assert_true(cs.peak_bytes <= 8 * 3000); /* only frames in use */
        if (limit == 2) {
            /* everything cached: a second pass and a prefetch decode nothing */
            uint64_t m = cs.misses;
            assert_int_equal(trc_reader_prefetch(r, 2, 0, 100, 1, 4, err, sizeof err), 0);
            trc_wg *g = trc_reader_load_wg(r, 2, 1, err, sizeof err);
            assert_non_null(g);
            trc_wg_free(g);
            trc_reader_get_cache_stats(r, &cs);
            assert_int_equal(cs.misses, m);
        }
        trc_reader_close(r);
    }
    /* prefetch with threads into a fresh reader, then loads hit */
    trc_reader *r = trc_reader_open(path, err, sizeof err);
    assert_int_equal(trc_reader_prefetch(r, 2, 0, UINT32_MAX, 1, 4, err, sizeof err), 0);
    trc_reader_cache_stats cs;
    trc_reader_get_cache_stats(r, &cs);
    uint64_t m = cs.misses;
    trc_kernel_stats ks;
    trc_reader_kernel_stats(r, 2, &ks);
    assert_int_equal(m, 2 * ks.n_frames);
    for (uint32_t i = 0; i < ks.n_wg; i++) trc_wg_free(trc_reader_load_wg(r, 2, i, err, sizeof err));
    trc_reader_get_cache_stats(r, &cs);
    assert_int_equal(cs.misses, m);
    assert_int_equal(trc_reader_prefetch(r, 9, 0, 1, 1, 2, err, sizeof err), -1);
    trc_reader_close(r);

    /* warming ahead (the sampled fast-forward's threads): the frames after a
     * workgroup's own, `frames` of them at most, one frame (record and data)
     * per call; nothing is busy on one thread; loads then hit and return what
     * a cold reader returns */
    r = trc_reader_open(path, err, sizeof err);
    assert_non_null(r);
    trc_reader_kernel_stats(r, 0, &ks);
    assert_true(ks.n_frames >= 3);
    assert_int_equal(trc_reader_wg_busy(r, 0, 0, 1), 0);
    int warmed = 0;
    while (trc_reader_warm_after(r, 0, 0, 2, 1) == 1)
        warmed++;
    assert_int_equal(warmed, 2); /* frames 1 and 2 of kernel 0, not frame 0 nor 3 */
    trc_reader_get_cache_stats(r, &cs);
    assert_int_equal(cs.misses, 4);
    assert_int_equal(trc_reader_warm_after(r, 0, 0, 1, 1), 0); /* frame 1: there already */
    assert_int_equal(trc_reader_warm_after(r, 0, ks.n_wg - 1, 2, 1), 0); /* the last frame: none after it */
    assert_int_equal(trc_reader_warm_after(r, 9, 0, 2, 1), 0);            /* no such kernel */
    assert_int_equal(trc_reader_wg_busy(r, 9, 0, 1), 0);
    trc_reader *cold = trc_reader_open(path, err, sizeof err);
    assert_non_null(cold);
    for (uint32_t i = 0; i < ks.n_wg; i++) {
        trc_wg *a = trc_reader_load_wg(r, 0, i, err, sizeof err), *b = trc_reader_load_wg(cold, 0, i, err, sizeof err);
        assert_non_null(a);
        assert_non_null(b);
        assert_int_equal(a->waves[0].n_instr, b->waves[0].n_instr);
        assert_int_equal(a->waves[0].n_mem, b->waves[0].n_mem);
        assert_int_equal(a->waves[0].mem[0].addr[0], b->waves[0].mem[0].addr[0]);
        trc_wg_free(a);
        /* stores only (the fast-forward's load): the same stores, no load values */
        a = trc_reader_load_wg_ex(r, 0, i, TRC_WG_STORES_ONLY, err, sizeof err);
        assert_non_null(a);
        int loads = 0, stores = 0;
        for (uint32_t v = 0; v < b->n_waves; v++)
            for (uint32_t m = 0; m < b->waves[v].n_mem; m++) {
                const trc_mem_op *x = &a->waves[v].mem[m], *y = &b->waves[v].mem[m];
                assert_null(x->load_data);
                assert_int_equal(x->load_hash, 0);
                loads += y->load_data != NULL;
                assert_int_equal(x->store_data != NULL, y->store_data != NULL);
                if (y->store_data) {
                    stores++;
                    assert_memory_equal(x->store_data, y->store_data,
                                        (size_t)trc_popcount64(y->exec) * y->bytes_per_lane);
                }
            }
        assert_true(loads > 0 && stores > 0);
        trc_wg_free(a);
        trc_wg_free(b);
    }
    trc_reader_get_cache_stats(r, &cs);
    assert_int_equal(cs.misses, 2 * ks.n_frames); /* the warmed frames were not decoded again */
    trc_reader_close(cold);
    trc_reader_close(r);
    unlink(path);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/trc500-%d.gtrace", tmp ? tmp : "/tmp", (int)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shuf4),
        cmocka_unit_test(test_roundtrip_threads),
        cmocka_unit_test(test_parallel_read),
        cmocka_unit_test(test_size),
        cmocka_unit_test(test_misuse),
        cmocka_unit_test(test_stream_wait),
        cmocka_unit_test(test_managed),
        cmocka_unit_test(test_lds_values),
        cmocka_unit_test(test_himg),
        cmocka_unit_test(test_host_image),
        cmocka_unit_test(test_store_frames),
        cmocka_unit_test(test_frame_cache),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(path);
    return rc;
}
